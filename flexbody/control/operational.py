"""Constrained operational-space controllers of [DE 5]: direct mapping [DE-65..71], its
minimal-coordinate variant [DE-72..79] and task/constraint partitioning [DE-80..93], with null-space
posture terms such as the gravity effort of [DE-95].

All three make the task acceleration equal the commanded f* of [DE-71] when the model is exact:
the direct and minimal mappings by solving B τ_k = Λf* + μ + p (+ γ) for the actuator inputs (minimum
norm; B = J̄ᵀΘᵀSᵀ or J̄_pᵀCᵀSᵀ), the partitioning by τ = Jᵀf + Φᵀf_C + Ňᵀτ₀ with f = Λ̌₁₁f* + μ̌₁ + p̌₁.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from ..errors import ActuationError, ModelError
from .actuation import check_independent, check_passive_map
from .base import TaskController
from .map_check import check_task_map, enforce
from .maps import DirectMapping, MinimalMapping, direct_mapping, minimal_mapping, partition, passive_map

if TYPE_CHECKING:
    from ..system import AssembledSystem, System
    from .context import ControlContext
    from .operational_space import OperationalSpace
    from .references import Reference
    from .tasks import Desired, Task, TaskTerms

__all__ = ["DirectMappingControl", "MinimalMappingControl", "PartitionedControl", "pinv_solve"]


def pinv_solve(A: np.ndarray, y: np.ndarray, tol: float, svd: tuple | None = None) -> np.ndarray:
    """Minimum-norm least-squares solution of A x = y, singular values ≤ tol dropped; ``svd`` is the thin
    (U, s, Vt) of A when already computed."""
    if A.size == 0:
        return np.zeros(A.shape[1:] + y.shape[1:])
    U, s, Vt = np.linalg.svd(A, full_matrices=False) if svd is None else svd
    if s.size and s[-1] > tol:  # every direction kept
        return Vt.T @ ((U.T @ y) / s.reshape((-1,) + (1,) * (y.ndim - 1)))
    keep = s > tol
    return Vt[keep].T @ ((U[:, keep].T @ y) / s[keep].reshape((-1,) + (1,) * (y.ndim - 1)))


class _MappedControl(TaskController):
    """Direct or minimal mapping: solve B τ_k = rhs(f*) with minimum norm, plus a projected posture."""

    map_name = ""
    source = ""

    def __init__(
        self,
        task: Task,
        reference: Reference | Desired,
        kp: ArrayLike,
        kv: ArrayLike,
        model: System | AssembledSystem | None = None,
        *,
        null_space: Callable[[ControlContext], ArrayLike] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(task, reference, kp, kv, model, **kwargs)
        if null_space is not None and not callable(null_space):
            raise ModelError(f"{type(self).__name__}: null_space must be callable ctx -> τ₀ (n,), got {null_space!r}")
        self.null_space = null_space

    def mapping(self, ctx: ControlContext, terms: TaskTerms) -> DirectMapping | MinimalMapping:
        raise NotImplementedError

    def compute(self, ctx: ControlContext) -> np.ndarray:
        terms, f_star = self.command(ctx)
        mapping = self.mapping(ctx, terms)
        check = check_task_map(self.map_name, self.source, mapping, terms.J.shape[0])
        enforce(
            check,
            self.on_deficient,
            f"{type(self).__name__} at t = {ctx.t:.9g} s",
            f"; actuators {list(ctx.model.actuated_labels)}",
        )
        tau_k = pinv_solve(mapping.B, mapping.rhs(f_star), check.tol, mapping.B_svd)  # [DE-70] / [DE-79]
        if self.null_space is not None:
            tau_k0 = ctx.S @ np.asarray(self.null_space(ctx), dtype=float)
            tau_k = tau_k + tau_k0 - pinv_solve(mapping.B, mapping.B @ tau_k0, check.tol, mapping.B_svd)
        self.diagnostics["map_singular_values"] = check.singular_values
        return ctx.S.T @ tau_k


class DirectMappingControl(_MappedControl):
    """Direct task-space mapping of the generalized constrained equation [DE-65..71]:
    J̄ᵀΘᵀSᵀτ_k = Λf* + μ + p + γ, solved for the k actuator inputs (minimum norm if k > m_T).

    ``null_space`` (callable ctx -> τ₀ (n,), e.g. :class:`GravityEffort`) adds (I − B⁺B)Sτ₀, which
    does not change the task acceleration."""

    kind = "direct"
    map_name = "J̄ᵀΘᵀSᵀ"
    source = "DE-69, DE 5.3"

    def mapping(self, ctx: ControlContext, terms: TaskTerms) -> DirectMapping:
        """The :class:`~flexbody.control.maps.DirectMapping` (B = J̄ᵀΘᵀSᵀ (m_T, k), γ, ...) of the task
        ``terms`` at ``ctx`` [DE-65..69]."""
        return direct_mapping(ctx, terms)


class MinimalMappingControl(_MappedControl):
    """Minimal-coordinate variant [DE-72..79]: J̄_pᵀCᵀSᵀτ_k = Λ_p f* + μ_p + p_p, C an orthonormal basis
    of ker Φ. Forms the (n, p) basis C densely: for systems of moderate size."""

    kind = "minimal"
    map_name = "J̄_pᵀCᵀSᵀ"
    source = "DE-78, DE 5.3"

    def mapping(self, ctx: ControlContext, terms: TaskTerms) -> MinimalMapping:
        """The :class:`~flexbody.control.maps.MinimalMapping` (B = J̄_pᵀCᵀSᵀ (m_T, k), C (n, p), ...) of the
        task ``terms`` at ``ctx`` [DE-72..78]."""
        return minimal_mapping(ctx, terms)


class PartitionedControl(TaskController):
    """Task/constraint partitioning [DE-80..93]:

        τ = Jᵀf + Φᵀf_C + Ňᵀτ₀,   f = Λ̌₁₁ f* + μ̌₁ + p̌₁                      [DE-84, DE-92]

    with the choice of f_C:

    - ``constraint_force=None``: f_C = 0 (DE 5.4.1);
    - ``constraint_force=lam_d`` (m,) or callable t -> lam_d: f_C = Λ̌₂₁f* + μ̌₂ + p̌₂ − λ_d, so that the
      constraint multipliers become λ_d [DE-90, DE-93];

    and, when the model has passive coordinates (S̃ ≠ ∅), the condition S̃(Jᵀf + Φᵀf_C + Ňᵀτ₀) = 0 [DE-91]
    imposed by the smallest change of (f_C, τ₀) from the values above (f_C = −(S̃Φᵀ)⁻¹S̃Jᵀf when S̃Φᵀ is
    square [DE-99]; through τ₀ when there are no constraints, DE 5.4.3). ``null_space`` gives the desired
    posture torque τ₀ (e.g. :class:`GravityEffort`, [DE-95]). Neither f_C nor Ňᵀτ₀ changes ẍ.
    """

    kind = "partitioned"

    def __init__(
        self,
        task: Task,
        reference: Reference | Desired,
        kp: ArrayLike,
        kv: ArrayLike,
        model: System | AssembledSystem | None = None,
        *,
        null_space: Callable[[ControlContext], ArrayLike] | None = None,
        constraint_force: ArrayLike | Callable[[float], ArrayLike] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(task, reference, kp, kv, model, **kwargs)
        if null_space is not None and not callable(null_space):
            raise ModelError(f"PartitionedControl: null_space must be callable ctx -> τ₀ (n,), got {null_space!r}")
        self.null_space, self.constraint_force = null_space, constraint_force

    def compute(self, ctx: ControlContext) -> np.ndarray:
        """τ = Jᵀf + Φ̂ᵀf_C + Ňᵀτ₀ (n,) at ``ctx`` [DE-84], f_C and τ₀ corrected for the passive coordinates;
        ActuationError when the task and constraint rows are not independent."""
        terms, f_star = self.command(ctx)
        m_T, r, n = terms.J.shape[0], ctx.rank, ctx.n
        osp = partition(ctx, terms)
        if osp.rank < m_T + r:
            check = check_independent(ctx, terms, "DE-83, DE-87")
            raise ActuationError(f"PartitionedControl at t = {ctx.t:.9g} s: {check}", check)
        Lam, acc = osp.Lambda, f_star
        full = Lam[:, :m_T] @ acc + osp.mu + osp.p  # Λ̌[ẍ; 0] + μ̌ + p̌ [DE-86]
        f = full[:m_T]  # [DE-92]
        f_C = np.zeros(r) if self.constraint_force is None else full[m_T:] - ctx.lam_hat(self._lam_d(ctx.t))  # [DE-93]
        tau0 = np.zeros(n) if self.null_space is None else np.asarray(self.null_space(ctx), dtype=float)
        J, Ph = terms.J, ctx.Phi_hat
        if len(ctx.passive):
            f_C, tau0 = self._passive(ctx, osp, J, f, f_C, tau0)  # [DE-91]
        tau = J.T @ f + Ph.T @ f_C + osp.apply_null(tau0)  # [DE-84]
        lam_hat = full[m_T:] - f_C  # [DE-90] with ẍ = f*
        self.diagnostics.update(
            task_force=f,
            constraint_force_command=f_C,
            lam_predicted=ctx.basis.multipliers(lam_hat) if r else np.zeros(ctx.Phi.shape[0]),
        )
        return tau

    def _lam_d(self, t: float) -> np.ndarray:
        lam = self.constraint_force(t) if callable(self.constraint_force) else self.constraint_force
        return np.asarray(lam, dtype=float)

    def _passive(
        self,
        ctx: ControlContext,
        osp: OperationalSpace,
        J: np.ndarray,
        f: np.ndarray,
        f_C: np.ndarray,
        tau0: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Smallest change of z = [f_C; τ₀] with S̃[Φ̂ᵀ, Ňᵀ] z = −S̃Jᵀf [DE-91]."""
        St, r = ctx.S_tilde, len(f_C)
        B = passive_map(ctx, osp)  # S̃[Φ̂ᵀ, Ňᵀ]
        check = check_passive_map(ctx, osp)
        self.diagnostics["passive_map_sigma_min"] = (
            check.singular_values[len(ctx.passive) - 1] if len(check.singular_values) >= len(ctx.passive) else 0.0
        )
        enforce(
            check,
            self.on_deficient,
            f"PartitionedControl at t = {ctx.t:.9g} s",
            f"; passive coordinates {[ctx.model.coordinate_labels[i] for i in ctx.passive]}",
        )
        z = np.concatenate([f_C, tau0])
        z = z + pinv_solve(B, -St @ (J.T @ f) - B @ z, check.tol)
        return z[:r], z[r:]
