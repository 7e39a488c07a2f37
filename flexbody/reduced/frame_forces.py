"""The generalized forces of a reduced body in its floating frame, declared once and compiled, for the general
route (:class:`~flexbody.reduced.body.ReducedState`), the compiled programs (:mod:`flexbody.system.joint_program`)
and their derivatives (:mod:`flexbody.reduced.force_derivatives`).

For the frame's classical acceleration A = [a_o; α] (6,), its angular velocity ω (3,) and gravity g (3,) (frame
axes) and the modal coordinates η, η̇, η̈ (r,), with M_b, Q_v and s of :mod:`flexbody.reduced.invariants`:

    F = M_b [A; η̈] + Q_v − [m g; s × g; S₁ᵀ g] + [0; K(g, ω) η + D_r η̇]   (6 + r,),
    K(g, ω) = K_r + Σ_i c_i(g, ω) K_G,i,   c = (g₁, g₂, g₃, ω₁², ω₂², ω₃², ω₁ω₂, ω₁ω₃, ω₂ω₃)

(:mod:`flexbody.reduced.stiffening`), the force [N] and moment [N·m] at the frame origin and the modal forces. F is a
polynomial of degree at most two in each of its arguments.

A body's constants travel as one flat array (:func:`pack`, read back by :func:`unpack`): m, s₀ (3), S₁ (3, r),
G(X̄, X̄) (3, 3), G_k (r, 3, 3), G_kl (r, r, 3, 3), M_ηη, K_r, D_r (r, r each), K_G,i (9, r, r) and the modal steps
(r,) of the derivatives.
"""

from __future__ import annotations

from typing import Any

import numba as nb
import numpy as np

from ..rigid.exponential_coordinates import cross3
from .invariants import frame_terms_into

__all__ = ["pack", "unpack", "frame_forces_into", "load_coefficients"]


def pack(body: Any) -> np.ndarray:
    """A prepared :class:`~flexbody.reduced.body.ReducedBody`'s constants end to end (module docstring); the modal
    steps move its nodes by at most a tenth of its size (:mod:`flexbody.reduced.force_derivatives`)."""
    inv, r = body.invariants, body.n_dofs
    assert inv is not None and body.X is not None  # made by prepare() at assembly
    stiffening = body.stiffening if body.stiffening is not None else np.zeros((9, r, r))
    size = float(np.ptp(body.X, axis=0).max())
    steps = 0.1 * size / np.maximum(np.abs(body.frame_shapes).max(axis=(0, 1)), 1e-300)
    parts = [[inv.mass], inv.first, inv.first_modal, inv.second, inv.mixed, inv.modal, inv.modal_mass]
    parts += [body.stiffness, body.damping, stiffening, steps]
    return np.concatenate([np.asarray(x, dtype=float).ravel() for x in parts])


@nb.njit(cache=True)
def unpack(fl, r):
    """(m, s₀, S₁, G(X̄, X̄), G_k, G_kl, M_ηη, K_r, D_r, K_G, steps): views of a :func:`pack`ed body of r shapes."""
    o = 4 + 3 * r
    first_modal = fl[4:o].reshape((3, r))
    second = fl[o : o + 9].reshape((3, 3))
    o += 9
    mixed = fl[o : o + 9 * r].reshape((r, 3, 3))
    o += 9 * r
    modal = fl[o : o + 9 * r * r].reshape((r, r, 3, 3))
    o += 9 * r * r
    modal_mass = fl[o : o + r * r].reshape((r, r))
    stiffness = fl[o + r * r : o + 2 * r * r].reshape((r, r))
    damping = fl[o + 2 * r * r : o + 3 * r * r].reshape((r, r))
    stiffening = fl[o + 3 * r * r : o + 12 * r * r].reshape((9, r, r))
    steps = fl[o + 12 * r * r : o + 12 * r * r + r]
    return fl[0], fl[1:4], first_modal, second, mixed, modal, modal_mass, stiffness, damping, stiffening, steps


@nb.njit(cache=True)
def load_coefficients(g, omega):
    """c (9,) of the module docstring from gravity and angular velocity in frame axes."""
    w0, w1, w2 = omega[0], omega[1], omega[2]
    return np.array([g[0], g[1], g[2], w0 * w0, w1 * w1, w2 * w2, w0 * w1, w0 * w2, w1 * w2])


@nb.njit(cache=True)
def stiffness_into(stiffness, stiffening, g, omega, K):
    """K(g, ω) = K_r + Σ c_i K_G,i (r, r) into K."""
    c = load_coefficients(g, omega)
    K[:, :] = stiffness
    for f in range(9):
        K += c[f] * stiffening[f]


@nb.njit(cache=True)
def frame_forces_into(
    fl, r, acceleration, omega, g, eta, eta_dot, eta_ddot, velocity, gravity, elastic, Mb, Q, s, K, F
):
    """F (6 + r,) of the module docstring into F, with M_b, Q_v, s and K(g, ω) into Mb, Q, s, K; the flags drop the
    velocity products and damping (``velocity``), gravity (``gravity``) and the elastic forces (``elastic``)."""
    mass, first, first_modal, second, mixed, modal, modal_mass, stiffness, _, stiffening, _ = unpack(fl, r)
    frame_terms_into(mass, first.copy(), first_modal, second, mixed, modal, modal_mass, eta, eta_dot, omega, Mb, Q, s)
    stiffness_into(stiffness, stiffening, g, omega, K)
    composed_frame_forces(fl, r, Mb, Q, s, K, acceleration, g, eta, eta_dot, eta_ddot, velocity, gravity, elastic, F)


@nb.njit(cache=True)
def composed_frame_forces(fl, r, Mb, Q, s, K, acceleration, g, eta, eta_dot, eta_ddot, velocity, gravity, elastic, F):
    """F (6 + r,) of the module docstring into F from the state's M_b, Q_v, s and K(g, ω) made already (the flags as
    :func:`frame_forces_into`)."""
    mass, _, first_modal, _, _, _, _, _, damping, _, _ = unpack(fl, r)
    for a in range(6 + r):
        x = Q[a] if velocity else 0.0
        for b in range(6):
            x += Mb[a, b] * acceleration[b]
        for k in range(r):
            x += Mb[a, 6 + k] * eta_ddot[k]
        F[a] = x
    if gravity:
        sg = cross3(s[0], s[1], s[2], g[0], g[1], g[2])
        for a in range(3):
            F[a] -= mass * g[a]
            F[3 + a] -= sg[a]
        for k in range(r):
            F[6 + k] -= first_modal[0, k] * g[0] + first_modal[1, k] * g[1] + first_modal[2, k] * g[2]
    if elastic:
        for k in range(r):
            for l in range(r):
                F[6 + k] += K[k, l] * eta[l]
                if velocity:
                    F[6 + k] += damping[k, l] * eta_dot[l]
