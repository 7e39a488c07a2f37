"""An independent statement of the contact actuation problem (flexbody.control.contact_wrench), for the tests.

The robot's terms come from Pinocchio (:class:`pinocchio_oracle.PinocchioOracle`: M, the nonlinear effects, the
contact points' Jacobians and classical bias accelerations), the contact forces are world vectors F_i (not forces in
contact frames), the accelerations stay unknowns (not eliminated), and the largest least margin
is found by scipy's SLSQP over the equations' solutions (x₀ + Z w, scipy's null space) with the friction cones as
smooth inequalities μ F_n − s − (√(‖F_t‖² + ε²) − ε) ≥ 0 over x = (a, τ_k, F₁ … F_c, s):

    M a + nle = Sᵀ τ_k + Σ J_iᵀ F_i,        n_iᵀ (J_i a + J̇_i v) = 0,
    sticking: T_iᵀ (J_i a + J̇_i v) = 0,     sliding: T_iᵀ F_i + μ_i (n_iᵀ F_i) û_i = 0,
    task: J_ω a + J̇_ω v = ω̇_d,              desired: n_iᵀ F_i = f_d,i;      maximise s.

Contacts are points on one link against planes (the only kind these tests build)."""

from __future__ import annotations

import numpy as np
from pinocchio_oracle import PinocchioOracle
from scipy.linalg import null_space
from scipy.optimize import minimize

SMOOTHING = 1e-12
"""‖f_t‖ is taken as √(‖f_t‖² + ε²) − ε [N], smooth where the friction vanishes (an error below ε)."""

STICKING = 1e-8
"""Slip speed [m/s] at and below which a contact sticks (as flexbody's)."""


def largest_margin(tree, S, contacts, link: str, q, v, desired, orientation_of: str | None = None, omega_dot=None):
    """(s*, x, equality residual (of every equation, so an inconsistent set shows), least inequality) of the problem
    above for the ``contacts`` (fb.Contact of points on
    ``link`` against planes) at (q, v) with the actuation S (k, n), the desired normal forces (c,) and, if
    ``orientation_of`` names a link, its angular acceleration ω̇_d (3,)."""
    oracle = PinocchioOracle(tree)
    n_dofs = len(q)
    M, nle = oracle.mass_matrix(q), oracle.nonlinear_effects(q, v)
    k, c = S.shape[0], len(contacts)
    width = n_dofs + k + 3 * c + 1
    rows: list[np.ndarray] = []
    values: list[float] = []

    def add(row: np.ndarray, value: float) -> None:
        rows.append(row)
        values.append(value)

    forces = [slice(n_dofs + k + 3 * i, n_dofs + k + 3 * i + 3) for i in range(c)]
    jacobians = [oracle.point_jacobian(q, link, contact.anchor.offset) for contact in contacts]
    for j in range(n_dofs):  # M a + nle − Sᵀ τ − Σ Jᵀ F = 0
        row = np.zeros(width)
        row[:n_dofs], row[n_dofs : n_dofs + k] = M[j], -S[:, j]
        for at, J in zip(forces, jacobians):
            row[at] = -J[:, j]
        add(row, -nle[j])
    cones = []
    for contact, at, J, f_d in zip(contacts, forces, jacobians, desired):
        bias = oracle.point_bias_acceleration(q, v, link, contact.anchor.offset)
        n = np.asarray(contact.surface.normal, dtype=float)
        T = np.linalg.qr(np.column_stack([n, np.eye(3)]))[0][:, 1:3]  # any tangent basis
        slip = T.T @ (J @ v)
        slides = float(np.linalg.norm(slip)) > STICKING
        row = np.zeros(width)
        row[:n_dofs] = n @ J
        add(row, -float(n @ bias))
        for m in range(2):
            row = np.zeros(width)
            if slides:
                row[at] = T[:, m] + contact.mu * (slip[m] / np.linalg.norm(slip)) * n
                add(row, 0.0)
            else:
                row[:n_dofs] = T[:, m] @ J
                add(row, -float(T[:, m] @ bias))
        if np.isfinite(f_d):
            row = np.zeros(width)
            row[at] = n
            add(row, float(f_d))
        cones.append((n, T, contact.mu, slides, at))
    if orientation_of is not None:
        Jw = oracle.angular_jacobian(q, orientation_of)
        bias_w = oracle.angular_bias_acceleration(q, v, orientation_of)
        for m in range(3):
            row = np.zeros(width)
            row[:n_dofs] = Jw[m]
            add(row, float(omega_dot[m] - bias_w[m]))
    A, b = np.array(rows), np.array(values)
    x0 = np.linalg.lstsq(A, b, rcond=None)[0]  # the equations' solutions x0 + Z w (s is not in them)
    Z = null_space(A, rcond=1e-12)

    def margins(x: np.ndarray) -> np.ndarray:
        out = []
        for n, T, mu, slides, at in cones:
            f_n = float(n @ x[at])
            out.append(f_n - x[-1])
            if not slides:
                out.append(mu * f_n - x[-1] - float(np.sqrt(np.sum((T.T @ x[at]) ** 2) + SMOOTHING**2)) + SMOOTHING)
        return np.array(out)

    w0 = np.zeros(Z.shape[1])
    s_column = np.flatnonzero(np.abs(Z[-1]) > 0.5)  # the margin s is free: one null direction is (0, …, 0, 1)
    assert s_column.size == 1
    w0[s_column] = (min(float(n @ x0[at]) for n, _, _, _, at in cones) - x0[-1]) / Z[-1, s_column[0]]
    found = minimize(
        lambda w: -(x0 + Z @ w)[-1],
        w0,
        jac=lambda w: -Z[-1],
        method="SLSQP",
        constraints=[{"type": "ineq", "fun": lambda w: margins(x0 + Z @ w)}],
        options={"ftol": 1e-15, "maxiter": 1000},
    )
    x = x0 + Z @ found.x
    return float(x[-1]), x, float(np.abs(A @ x - b).max()), float(margins(x).min())
