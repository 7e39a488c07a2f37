"""Aghili's projected inverse-dynamics control [AG VII]: PIDC with minimum (optionally W-weighted)
actuation [AG-43..48], passive joints f = (I + H)f∥ [AG-53..60] and the hybrid motion/force law
[AG-49..52].

Sign convention: Aghili writes M q̈ + h = f − 𝓕 with 𝓕 = Aᵀλ_AG; here τ = f and the constraint force is
Φᵀλ = −𝓕 (docs/conventions.md). Desired multipliers λ_d are given in flexbody's convention.

PIDC. The auxiliary input u_p of [AG-44] is the acceleration that satisfies the constraints and gives
the task acceleration f* = ẍ_d + G_D ė + G_P e: with θ the task coordinates (a full set of independent
coordinates in [AG-38], any task independent of the constraints here),

    [J; Φ] u_p = [f* − J̇v; −Φ̇v],   u_p = J̌̄ [f* − J̇v; −Φ̇v]  (the least acceleration energy solution,
                                                                 unique when m_T = p)           [AG-39, 44]
    f∥ = h∥ + P M u_p = P(M u_p + h)                                                            [AG-43]

so the plant's acceleration is u_p and ẍ = f* (Theorem 4). With W, f∥ minimises fᵀW⁻¹f [AG-47].

Passive joints [AG-53..60]: f = f∥ + (I − P)η with (I − B)f = 0 and the least ‖η‖. Since
R(I − P) = R(Φᵀ), η = Φ̂ᵀw with S̃Φ̂ᵀw = −S̃f∥, w the minimum-norm solution — the same f as
H = −(I − P)Q⁺(I − B), Q = I − B − P + BP [AG-59], computed without n×n pseudo-inverses. A solution exists
for every f∥ iff Aghili's condition [AG-56, AG-62] holds.

Hybrid law [AG-49..52]: f = f∥ + f⊥ with f⊥ = (I − P)(M u_p + h − f∥) + (I − P)u_F, which gives the
constraint force 𝓕 = (I − P)u_F [AG-32], and u_F = 𝓕_d + G_F e_f + G_I ∫e_f [AG-50], e_f = 𝓕_d − 𝓕.
The algebraic loop through 𝓕 is solved with the model: 𝓕 = (I − P)u_F + δ, δ the prediction error
𝓕_measured − 𝓕_predicted of the last sample, giving (I − P)u_F = (I − P)[𝓕_d + (G_I z − G_F δ)/(1 + G_F)],
z = ∫e_f dt of the measured force error (updated once per step). With an exact model δ = 0 and the
force error obeys (G_F + 1)ė_f + G_I e_f = 0 as in [AG-51].
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from ..dynamics import inverse
from ..errors import ActuationError, ModelError
from .actuation import aghili_condition, check_independent
from .base import TaskController
from .map_check import enforce
from .maps import partition
from .operational import pinv_solve

if TYPE_CHECKING:
    from ..dynamics.results import ForwardResult
    from ..system import AssembledSystem, State, System
    from .context import ControlContext
    from .references import Reference
    from .tasks import Desired, Task

__all__ = ["ProjectedInverseDynamicsControl", "HybridMotionForceControl"]


class ProjectedInverseDynamicsControl(TaskController):
    """PIDC [AG-43..48] with passive joints [AG-53..60].

    Parameters
    ----------
    task, reference, kp, kv : as :class:`TaskController` (G_P = kp, G_D = kv).
    W : (n, n) SPD, optional
        Weight of the actuation norm fᵀW⁻¹f [AG-47, AG-48] (e.g. diag(κ⁻², …, 1, …) for mixed units).
    model : assembled system, optional — the controller's (estimated) model; its S selects the
        actuated joints, B = SᵀS [AG-53].
    """

    kind = "pidc"

    def __init__(
        self,
        task: Task,
        reference: Reference | Desired,
        kp: ArrayLike,
        kv: ArrayLike,
        model: System | AssembledSystem | None = None,
        *,
        W: ArrayLike | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(task, reference, kp, kv, model, **kwargs)
        self.W = None if W is None else np.asarray(W, dtype=float)
        if self.W is not None and (self.W.ndim != 2 or self.W.shape[0] != self.W.shape[1]):
            raise ModelError(f"W must be a square (n, n) matrix, got shape {self.W.shape}")

    def motion(self, ctx: ControlContext) -> tuple[np.ndarray, np.ndarray]:
        """u_p (n,) and f∥ (n,) at the context's state [AG-43, AG-44]."""
        terms, f_star = self.command(ctx)
        m_T, r = terms.J.shape[0], ctx.rank
        osp = partition(ctx, terms)
        if osp.rank < m_T + r:
            check = check_independent(ctx, terms, "AG-38, AG-44")
            raise ActuationError(f"{type(self).__name__} at t = {ctx.t:.9g} s: {check}", check)
        u_p = osp.J_bar @ np.concatenate([f_star - terms.bias, -ctx.beta])  # [AG-44]
        if self.W is None:
            f_par = ctx.P_apply(ctx.M @ u_p + ctx.h)  # [AG-43]
        else:
            f_par = inverse(ctx.M, ctx.h, u_p, ctx.Phi_hat, W=self.W, rtol=ctx.rtol, atol=ctx.atol).tau  # [AG-47]
        return u_p, f_par

    def compute(self, ctx: ControlContext) -> np.ndarray:
        """f = f∥ (n,) at ``ctx`` [AG-46], or with passive coordinates f = (I + H)f∥ = f∥ + Φ̂ᵀw, zero at the
        passive coordinates [AG-55..60]."""
        _, f_par = self.motion(ctx)
        if not len(ctx.passive):
            return f_par  # [AG-46]
        check = aghili_condition(ctx)  # [AG-56, AG-62]
        enforce(
            check,
            self.on_deficient,
            f"{type(self).__name__} at t = {ctx.t:.9g} s",
            f"; passive coordinates {[ctx.model.coordinate_labels[i] for i in ctx.passive]}",
        )
        St_PhiT = ctx.S_tilde @ ctx.Phi_hat.T  # dimensionless (Φ̂ orthonormal)
        w = pinv_solve(St_PhiT, -ctx.S_tilde @ f_par, check.tol)  # [AG-55..57]
        self.diagnostics["tau_parallel"] = f_par
        return f_par + ctx.Phi_hat.T @ w  # f = (I + H) f∥ [AG-60]


class HybridMotionForceControl(ProjectedInverseDynamicsControl):
    """Hybrid motion/force control [AG-49..52]: PIDC motion plus regulation of the constraint force to
    Φᵀλ_d (λ_d (m,) or callable t -> λ_d, flexbody's sign) with gains G_F = ``gf``, G_I = ``gi``."""

    kind = "hybrid"

    def __init__(
        self,
        task: Task,
        reference: Reference | Desired,
        kp: ArrayLike,
        kv: ArrayLike,
        lam_desired: ArrayLike | Callable[[float], ArrayLike],
        gf: float,
        gi: float,
        model: System | AssembledSystem | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(task, reference, kp, kv, model, **kwargs)
        self.lam_desired, self.gf, self.gi = lam_desired, float(gf), float(gi)
        if not (self.gf >= 0 and self.gi >= 0 and np.isfinite(self.gf + self.gi)):
            raise ModelError(f"gains G_F and G_I must be finite and ≥ 0, got {gf!r}, {gi!r}")
        self.reset()

    def reset(self) -> None:
        self._z: np.ndarray | None = None  # ∫ e_f dt
        self._delta: np.ndarray | None = None  # δ = 𝓕 − 𝓕_predicted
        self._F_pred: np.ndarray | None = None
        self._F_d: np.ndarray | None = None
        self._t_last: float | None = None

    def _F_desired(self, ctx: ControlContext) -> np.ndarray:
        lam = self.lam_desired(ctx.t) if callable(self.lam_desired) else self.lam_desired
        lam = np.asarray(lam, dtype=float)
        if lam.shape != (ctx.Phi.shape[0],) or not np.all(np.isfinite(lam)):
            raise ModelError(f"lam_desired must be {ctx.Phi.shape[0]} finite numbers (rows {ctx.model.row_labels})")
        self.diagnostics["lam_desired"] = lam
        return -ctx.Phi.T @ lam  # 𝓕_d = Aᵀλ_d,AG = −Φᵀλ_d

    def compute(self, ctx: ControlContext) -> np.ndarray:
        """f = f∥ + f⊥ = M u_p + h + (I − P)u_F (n,) at ``ctx`` [AG-52]: PIDC motion plus the commanded
        constraint force; records the predicted multipliers."""
        u_p, _ = self.motion(ctx)
        n = ctx.n
        z = np.zeros(n) if self._z is None else self._z
        delta = np.zeros(n) if self._delta is None else self._delta
        self._F_d = self._F_desired(ctx)
        u_F = self._F_d + (self.gi * z - self.gf * delta) / (1.0 + self.gf)  # [AG-50], loop solved
        F_pred = u_F - ctx.P_apply(u_F)  # (I − P)u_F = 𝓕 [AG-32]
        self._F_pred = F_pred
        lam_pred = -ctx.basis.multipliers(ctx.Phi_hat_dot(F_pred)) if ctx.rank else np.zeros(ctx.Phi.shape[0])
        self.diagnostics["lam_predicted"] = lam_pred
        return ctx.M @ u_p + ctx.h + F_pred  # f∥ + f⊥ [AG-52]

    def update(self, t: float, state: State, measurement: ForwardResult) -> None:
        """Integrate e_f = 𝓕_d − 𝓕 with the plant's measured 𝓕 = −Φᵀλ (the response to the torque computed
        at this same state) and keep the prediction error δ = 𝓕 − 𝓕_predicted."""
        if self._F_pred is None or self._F_d is None:  # both made by compute()
            return
        F_meas = -np.asarray(measurement.constraint_force, dtype=float)
        dt = 0.0 if self._t_last is None else float(t) - self._t_last
        self._z = (np.zeros_like(F_meas) if self._z is None else self._z) + dt * (self._F_d - F_meas)
        self._delta = F_meas - self._F_pred
        self._t_last = float(t)
