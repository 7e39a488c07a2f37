"""An independent model of a disc rolling without slipping on a horizontal plane, for the Pfaffian rows.

Lagrange's equations in the Euler angles of R = R_z(ψ) R_x(θ) R_y(φ) (yaw, lean, spin about the disc's
axis y) and the centre (x, y, z), derived here with sympy: T = ½ m ‖ċ‖² + ½ ω_bᵀ I_b ω_b with [ω_b]× = RᵀṘ,
V = −m g·c; the contact point's material velocity ċ + ω × r d = 0 (d = −(e_z − (e_z·w)w)/‖…‖, w = R e_y)
gives A(q) q̇ = 0 and Ȧq̇ by differentiation; M q̈ + h = Aᵀλ, A q̈ + Ȧq̇ = 0 are solved at each instant and
integrated with scipy's DOP853. Nothing here comes from flexbody.
"""

from functools import cache

import numpy as np
import sympy as sp
from scipy.integrate import solve_ivp


@cache
def _model(m: float, r: float, g: float):
    q = sp.symbols("x y z psi theta phi", real=True)
    qd = sp.symbols("xd yd zd psid thetad phid", real=True)
    _x, _y, z, psi, theta, phi = q

    def rot(axis, angle):
        c, s = sp.cos(angle), sp.sin(angle)
        if axis == "x":
            return sp.Matrix([[1, 0, 0], [0, c, -s], [0, s, c]])
        if axis == "y":
            return sp.Matrix([[c, 0, s], [0, 1, 0], [-s, 0, c]])
        return sp.Matrix([[c, -s, 0], [s, c, 0], [0, 0, 1]])

    R = rot("z", psi) * rot("x", theta) * rot("y", phi)
    R_dot = sum((R.diff(qi) * qdi for qi, qdi in zip(q, qd)), sp.zeros(3, 3))
    W = R.T * R_dot  # [ω_b]×
    omega_b = sp.Matrix([W[2, 1], W[0, 2], W[1, 0]])
    omega = R * omega_b
    c_dot = sp.Matrix(qd[:3])
    I_b = sp.diag(m * r**2 / 4, m * r**2 / 2, m * r**2 / 4)
    T = sp.Rational(1, 2) * m * (c_dot.T * c_dot)[0] + sp.Rational(1, 2) * (omega_b.T * I_b * omega_b)[0]
    V = m * g * z
    w = R * sp.Matrix([0, 1, 0])
    e_z = sp.Matrix([0, 0, 1])
    mm = e_z - (e_z.T * w)[0] * w
    d = -mm / sp.sqrt((mm.T * mm)[0])
    v_contact = c_dot + omega.cross(r * d)
    qdv = sp.Matrix(qd)
    A = v_contact.jacobian(qdv)
    A_dot_qd = (A * qdv).jacobian(sp.Matrix(q)) * qdv
    p = sp.Matrix([T]).jacobian(qdv).T
    M = p.jacobian(qdv)
    h = (
        p.jacobian(sp.Matrix(q)) * qdv
        - sp.Matrix([T]).jacobian(sp.Matrix(q)).T
        + sp.Matrix([V]).jacobian(sp.Matrix(q)).T
    )
    args = list(q) + list(qd)
    return (
        sp.lambdify(args, M, "numpy", cse=True),
        sp.lambdify(args, h, "numpy", cse=True),
        sp.lambdify(args, A, "numpy", cse=True),
        sp.lambdify(args, A_dot_qd, "numpy", cse=True),
    )


def rolling_disc_motion(q0, v0, times, m: float, r: float, g: float = 9.81) -> np.ndarray:
    """(len(times), 6) coordinates (x, y, z, ψ, θ, φ) of the rolling disc from (q0, v0), DOP853 at rtol 1e-12."""
    M_f, h_f, A_f, b_f = _model(float(m), float(r), float(g))

    def rhs(t, s):
        args = list(s)
        M, h = np.array(M_f(*args), dtype=float), np.array(h_f(*args), dtype=float).ravel()
        A, b = np.array(A_f(*args), dtype=float), np.array(b_f(*args), dtype=float).ravel()
        K = np.block([[M, -A.T], [A, np.zeros((3, 3))]])
        sol = np.linalg.solve(K, np.concatenate([-h, -b]))
        return np.concatenate([s[6:], sol[:6]])

    out = solve_ivp(
        rhs, (times[0], times[-1]), np.concatenate([q0, v0]), method="DOP853", rtol=1e-12, atol=1e-12, t_eval=times
    )
    return out.y[:6].T
