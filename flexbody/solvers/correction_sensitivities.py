"""Exact derivatives of the position correction and velocity projection of explicit runs [AG-37]
(:func:`~flexbody.solvers.stabilization.correct`), for the sensitivities of corrected RK4 runs (#36 item 5).

The correction takes Newton steps q_{k+1} = q_k − Φ⁺φ(q_k) on the position rows, then v = v′ − Φ⁺(Φv′ + φ_t) on all
rows at the corrected q. With the pseudo-inverse's derivative at constant rank, DΦ⁺ = −Φ⁺DΦΦ⁺ + Φ⁺Φ⁺ᵀDΦᵀ(I − ΦΦ⁺) +
(I − Φ⁺Φ)DΦᵀΦ⁺ᵀΦ⁺, and the rows' second derivatives N(w) = ∂(Φw)/∂q, H(y) = ∂(Φᵀy)/∂q at fixed w, y
(:func:`~flexbody.solvers.dynamics_derivatives.row_velocity_jacobian`, the constraints' ``joint_hessian``), each step
and the projection change as

    δq_{k+1} = [P + Φ⁺N(w) − Φ⁺Φ⁺ᵀH(r) − P H(z)] δq_k,      w = Φ⁺φ, r = φ − Φw, z = Φ⁺ᵀw, P = I − Φ⁺Φ,
    δv = P δv′ − [Φ⁺N(v) + Φ⁺Φ⁺ᵀH(r_v) + P H(z_v)] δq,      r_v = (I − ΦΦ⁺)(Φv′ + φ_t), z_v = Φ⁺ᵀΦ⁺(Φv′ + φ_t),

exactly (no term of the drift the correction removes is left out). The steps are replayed from the uncorrected end of
each RK4 step, which the sweeps recompute.
"""

from __future__ import annotations

import numpy as np

from ..errors import FlexbodyError
from ..linalg.rank import constraint_svd, dense_jacobian
from .dynamics_derivatives import constraint_hessian, row_velocity_jacobian
from .stabilization import PositionCorrection, correct

__all__ = ["correction_jacobians", "checked_replay"]


def correction_jacobians(asm, t: float, q, v, settings: PositionCorrection, rtol: float, atol: float):
    """(q*, v*, J_q, J_vq, J_v): the correction of (t, q, v) (n,) by ``settings`` and, (n, n) each, its derivatives
    δq* = J_q δq, δv* = J_v δv + J_vq δq (module docstring); ``rtol``, ``atol`` the rank tolerances the run used."""
    iterates: list = []
    q_star, v_star, _, _, ws = correct(asm, t, q, v, settings, rtol, atol, iterates)
    position = ~np.asarray(asm.velocity_rows, dtype=bool)
    J_q = np.eye(asm.n_dofs)
    for ws_k in iterates:  # the workspaces the Newton steps started from
        phi = ws_k.constraint_rows()[0][position]
        P, turn = _pseudo_inverse_derivative(asm, ws_k, phi, position, rtol, atol)
        J_q = (P + turn) @ J_q  # δq_{k+1} = [P − D(Φ⁺)φ-terms] δq_k
    _, Phi, _, phi_t = ws.constraint_rows()
    residual = dense_jacobian(Phi) @ v + np.asarray(phi_t, dtype=float)
    everything = np.ones(asm.n_constraints, dtype=bool)
    P, turn = _pseudo_inverse_derivative(asm, ws, residual, everything, rtol, atol, v_star)
    return q_star, v_star, J_q, turn @ J_q, P


def _pseudo_inverse_derivative(asm, ws, r, rows, rtol, atol, v=None) -> tuple[np.ndarray, np.ndarray]:
    """(P, T) (n, n) at the workspace ``ws``'s q for the rows ``rows`` (bool, m) and their right-hand side r:
    P = I − Φ⁺Φ and T, the change of −Φ⁺r with q at fixed r less its Φ⁺Φ part: Φ⁺N(w) − Φ⁺Φ⁺ᵀH(r⊥) − P H(z)
    (w = Φ⁺r, or ``v`` in N's place for the projection, where r depends on q through Φv′)."""
    n = asm.n_dofs
    Phi = dense_jacobian(ws.constraint_rows()[1])[rows]
    if not Phi.shape[0]:
        return np.eye(n), np.zeros((n, n))
    svd, _ = constraint_svd(Phi, rtol, atol)
    V, U, s = svd.Vt.T, svd.U, svd.s
    pinv = V @ (U.T / s[:, None])  # Φ⁺ (n, m)
    P = np.eye(n) - V @ V.T
    w = pinv @ r
    r_perp, z = r - Phi @ w, pinv.T @ w

    def spread(y):  # a right-hand side of the chosen rows onto all rows
        out = np.zeros(asm.n_constraints)
        out[rows] = y
        return out

    N = row_velocity_jacobian(asm, ws.with_velocity(w if v is None else v))[rows]
    H_r, H_z = (constraint_hessian(asm, ws, spread(y)) for y in (r_perp, z))
    if v is None:
        return P, pinv @ N - pinv @ pinv.T @ H_r - P @ H_z
    return P, -(pinv @ N + pinv @ pinv.T @ H_r + P @ H_z)


def checked_replay(q_star: np.ndarray, recorded: np.ndarray, t: float) -> None:
    """FlexbodyError when a step's end, replayed (and corrected, if the run was), is not the recorded state: the run
    was made with other settings (stabilization, step) than the sweeps replay."""
    if not np.allclose(q_star, recorded, rtol=0.0, atol=1e-12 * max(1.0, float(np.max(np.abs(recorded))))):
        raise FlexbodyError(
            f"run sensitivities: the step ending at t = {t:.9g} s, replayed, does not give the recorded state (max "
            f"difference {np.max(np.abs(q_star - recorded)):.3e}): the run's settings (stabilization, step) differ "
            "from the replay's"
        )
