"""The operational-space maps of constrained task-level control, from a :class:`ControlContext`.

Each function returns the quantities of one formulation, written with the independent constraint rows
Φ̂ (r, n) and bias β of the context (see :mod:`flexbody.control.context`):

- :func:`direct_mapping` — the generalized constrained equation Θᵀτ = M a + b + g − Φᵀ(α + ρ) [DE-65]
  mapped by the dynamically consistent inverse J̄ of the task [DE-66..69]:
  J̄ᵀΘᵀSᵀτ_k = Λ ẍ + μ + p + γ, with Λ, μ, p of the unconstrained task [DE-68] and γ = −J̄ᵀΦᵀ(α + ρ);
- :func:`minimal_mapping` — the equations in a basis C of ker Φ, τ_p = M_p a_p + b_p + g_p [DE-72]
  mapped by J̄_p of J_p = J C [DE-73..78]: J̄_pᵀCᵀSᵀτ_k = Λ_p ẍ + μ_p + p_p;
- :func:`partition` — Λ̌, μ̌, p̌ of the stacked Jacobian J̌ = [J; Φ] [DE-83..88].

All solves with M go through the context (Cholesky factors, or the controller's kept columns M⁻¹[:, K]);
no (n, n) matrix is formed: B = J̄ᵀΘᵀSᵀ is built as J̄ᵀSᵀ − (J̄ᵀΦ̂ᵀ)(Φ̄ᵀSᵀ), H is applied by the
Cholesky factor of Φ̂M⁻¹Φ̂ᵀ, and Φ̂ on the stored columns of Φ (``ctx.Phi_hat_dot``, ``ctx.Phi_hat_T_dot``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from ..errors import FlexbodyError, StateError
from ..linalg.rank import thin_svd
from .operational_space import OperationalSpace, operational_space, operational_space_of
from .tasks import DEFAULT_ATOL

if TYPE_CHECKING:
    from .context import ControlContext

__all__ = [
    "ConstraintProjection",
    "DirectMapping",
    "MinimalMapping",
    "constraint_projection",
    "direct_mapping",
    "minimal_mapping",
    "partition",
    "stacked_jacobian",
    "passive_map",
]


@dataclass(frozen=True, eq=False)
class ConstraintProjection:
    """α + ρ = Φ̄ᵀ(b + g) − Hβ (r,) [DE-36, DE-37] and, from the context, H = (Φ̂M⁻¹Φ̂ᵀ)⁻¹ (r, r) [DE-34]
    with Φ̄ = M⁻¹Φ̂ᵀH (n, r) applied through the context's mass factor (:meth:`ControlContext.Phi_bar_T`),
    never stored."""

    alpha_rho: np.ndarray
    ctx: ControlContext

    @property
    def H(self) -> np.ndarray:
        return self.ctx.H

    def Phi_bar_T(self, x: np.ndarray) -> np.ndarray:
        """Φ̄ᵀ x (r,) or (r, k) [DE-22]."""
        return self.ctx.Phi_bar_T(x)

    def theta_T(self, x: np.ndarray) -> np.ndarray:
        """Θᵀ x = x − Φ̂ᵀ(Φ̄ᵀ x) for x (n,) or (n, k) [DE-38]."""
        return x - self.ctx.Phi_hat_T_dot(self.Phi_bar_T(x))


def constraint_projection(ctx) -> ConstraintProjection:
    """Gauss-form terms of the context's independent constraint rows [DE-22, DE-34..38]."""
    if not ctx.rank:
        return ConstraintProjection(np.zeros(0), ctx)
    return ConstraintProjection(ctx.H_dot(ctx.Phi_hat_solve(ctx.h) - ctx.beta), ctx)  # α + ρ [DE-36, DE-37]


class _Mapped:
    """The thin SVD of a map's ``B``, shared by its rank check and the solve for τ_k."""

    B: np.ndarray  # (m_T, k), a field of each map

    @cached_property
    def B_svd(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(U, s, Vt) of B (m_T, k), thin."""
        return thin_svd(self.B)


@dataclass(frozen=True, eq=False)
class DirectMapping(_Mapped):
    """Terms of J̄ᵀΘᵀSᵀτ_k = Λẍ + μ + p + γ [DE-67..69]: ``B`` (m_T, k) = J̄ᵀΘᵀSᵀ, ``gamma`` (m_T,),
    ``osp`` the unconstrained operational space (Λ, μ, p, J̄) and ``projection`` the Gauss terms."""

    osp: OperationalSpace
    gamma: np.ndarray
    B: np.ndarray
    projection: ConstraintProjection
    H_Phi_hat_J_bar: np.ndarray | None = None  # HΦ̂J̄ (r, m_T) when the mapping has it

    full_name = "J̄ᵀΘᵀ (every coordinate actuated)"

    def rhs(self, f_star: np.ndarray) -> np.ndarray:
        """Λ f* + μ + p + γ [DE-70]."""
        return self.osp.Lambda @ f_star + self.osp.mu + self.osp.p + self.gamma

    def full_actuation(self) -> np.ndarray:
        """J̄ᵀΘᵀ (m_T, n), the map with every coordinate actuated (S = I), whose σ_max scales the actuation
        check: ΘJ̄ = J̄ − M⁻¹Φ̂ᵀ(HΦ̂J̄) [DE-38], m_T solves with M (or products with the kept M⁻¹[:, c])."""
        ctx, J_bar = self.projection.ctx, self.osp.J_bar
        if not ctx.rank:
            return np.asarray(J_bar.T)
        HZ = self.H_Phi_hat_J_bar if self.H_Phi_hat_J_bar is not None else ctx.H_dot(ctx.Phi_hat_dot(J_bar))
        return (J_bar - ctx.solve_M_Phi_hat_T(HZ)).T


def direct_mapping(ctx, terms) -> DirectMapping:
    """[DE-65..69] for task terms (x, J, J̇v) at the context's state.

    One solve X = M⁻¹[Jᵀ, Sᵀ] (n, m_T + k), its rows Y = Φ̂X on the stored columns of Φ and y_h = Φ̂M⁻¹h − β
    give every term: Λ, μ, p, J̄ = X_JΛ [DE-50, DE-53], α + ρ = Hy_h [DE-36, DE-37], J̄ᵀΦ̂ᵀ = ΛY_Jᵀ,
    γ = −J̄ᵀΦ̂ᵀ(α + ρ) [DE-68] and B = J̄ᵀSᵀ − J̄ᵀΦ̂ᵀ(HY_S) = J̄ᵀΘᵀSᵀ [DE-69]."""
    m_T = terms.J.shape[0]
    X = ctx.solve_M(np.concatenate((terms.J, ctx.S)).T)  # M⁻¹[Jᵀ, Sᵀ] (n, m_T + k)
    if not np.isfinite(X).all():
        _raise_not_finite(ctx, terms)
    Y = np.column_stack((ctx.Phi_hat_dot(X), ctx.Phi_hat_solve(ctx.h) - ctx.beta))
    HY = ctx.H_dot(Y)  # H[Φ̂M⁻¹Jᵀ, Φ̂M⁻¹Sᵀ, Φ̂M⁻¹h − β]
    if not (np.isfinite(HY).all() and np.isfinite(terms.bias).all()):
        _raise_not_finite(ctx, terms)
    osp = operational_space_of(
        terms.J, X[:, :m_T], ctx.b, ctx.g, terms.bias, rtol=ctx.rtol, atol=DEFAULT_ATOL, row_labels=terms.row_labels
    )  # Λ, μ, p, J̄ [DE-68]
    proj = ConstraintProjection(HY[:, -1], ctx)  # α + ρ [DE-36, DE-37]
    JbT_PhiT = osp.Lambda @ Y[:, :m_T].T  # J̄ᵀΦ̂ᵀ (m_T, r)
    gamma = -JbT_PhiT @ proj.alpha_rho  # γ [DE-68]
    B = (ctx.S @ osp.J_bar).T - JbT_PhiT @ HY[:, m_T:-1]  # J̄ᵀΘᵀSᵀ [DE-69]
    return DirectMapping(osp, gamma, B, proj, HY[:, :m_T] @ osp.Lambda)


def _raise_not_finite(ctx, terms):
    """Raise the StateError naming the input with NaN/Inf (M⁻¹[Jᵀ, Sᵀ], HΦ̂M⁻¹[Jᵀ, Sᵀ, h] or J̇v was not finite)."""
    operational_space(ctx.M, terms.J, ctx.b, ctx.g, terms.bias, solver=ctx.solver)  # names J, b, g or J̇v
    raise StateError(f"direct mapping at t = {ctx.t:.9g} s: M⁻¹[Jᵀ, Sᵀ] or HΦ̂M⁻¹[Jᵀ, Sᵀ, h] contains NaN/Inf")


@dataclass(frozen=True, eq=False)
class MinimalMapping(_Mapped):
    """Terms of J̄_pᵀCᵀSᵀτ_k = Λ_p ẍ + μ_p + p_p [DE-75..78]: ``B`` (m_T, k), ``osp`` of (M_p, J_p),
    ``C`` (n, p) orthonormal basis of ker Φ, ``a_perp`` (n,) = −Φ⁺ bias."""

    osp: OperationalSpace
    B: np.ndarray
    C: np.ndarray
    a_perp: np.ndarray

    full_name = "J̄_pᵀCᵀ (every coordinate actuated)"

    def rhs(self, f_star: np.ndarray) -> np.ndarray:
        return self.osp.Lambda @ f_star + self.osp.mu + self.osp.p  # [DE-79]

    def full_actuation(self) -> np.ndarray:
        """J̄_pᵀCᵀ (m_T, n), the map with every coordinate actuated (S = I)."""
        return self.osp.J_bar.T @ self.C.T


def minimal_mapping(ctx, terms) -> MinimalMapping:
    """[DE-72..78] with C an orthonormal basis of ker Φ (any basis gives the same J̄_pᵀCᵀ).

    With a = C a_p + a⊥, a⊥ = −Φ̂ᵀβ the minimum-norm solution of Φ a + bias = 0, the projected equations
    Cᵀ(M a + h) = Cᵀτ give M_p = CᵀMC, b_p = Cᵀ(M a⊥ + b), g_p = Cᵀg [DE-14, DE-72], and the task
    acceleration ẍ = J_p a_p + (J a⊥ + J̇v), J_p = J C [DE-73, DE-74]; rheonomic and velocity terms of the
    constraints enter through a⊥."""
    C = ctx.nullspace
    if C.shape[1] == 0:
        raise FlexbodyError("minimal-coordinate mapping: the constraints leave no degree of freedom (p = 0)")
    a_perp = -ctx.Phi_hat_T_dot(ctx.beta)
    M_p = C.T @ ctx.M @ C
    J_p = terms.J @ C
    osp = operational_space(
        0.5 * (M_p + M_p.T),
        J_p,
        C.T @ (ctx.M @ a_perp + ctx.b),
        C.T @ ctx.g,
        terms.J @ a_perp + terms.bias,
        rtol=ctx.rtol,
        row_labels=terms.row_labels,
    )
    B = osp.J_bar.T @ (C.T @ ctx.S.T)  # J̄_pᵀCᵀSᵀ [DE-78]
    return MinimalMapping(osp, B, C, a_perp)


def partition(ctx, terms) -> OperationalSpace:
    """Λ̌, μ̌, p̌ and J̌̄ of J̌ = [J; Φ̂] with bias [J̇v; β] [DE-83, DE-87]; ``rank`` < m_T + r if the task
    is not independent of the constraints (then Λ̌ is a pseudo-inverse; callers raise)."""
    ctx.refuse_if_large("the partition [J; Φ] with its (n, n) null-space projector")
    r = ctx.rank
    labels = tuple(terms.row_labels) + tuple(f"constraint direction {i}" for i in range(r))
    return operational_space(
        ctx.M,
        stacked_jacobian(ctx, terms),
        ctx.b,
        ctx.g,
        np.concatenate([terms.bias, ctx.beta]),
        rtol=ctx.rtol,
        allow_singular=True,
        row_labels=labels,
        solver=ctx.solver,
    )


def stacked_jacobian(ctx, terms) -> np.ndarray:
    """J̌ = [J; Φ̂] (m_T + r, n) [DE-83]."""
    return np.vstack([terms.J, ctx.Phi_hat])


def passive_map(ctx, osp: OperationalSpace) -> np.ndarray:
    """S̃[Φ̂ᵀ, Ňᵀ] (n − k, r + n) of the partition ``osp``: how constraint forces and null-space torques
    reach the passive coordinates [DE-91]; dimensionless (Φ̂ has orthonormal rows)."""
    St = ctx.S_tilde
    return np.hstack([St @ ctx.Phi_hat.T, St - (St @ osp.J.T) @ osp.J_bar.T])
