"""Controllers: callables ``(t, state, system) -> τ_k`` (actuator inputs) usable in :func:`flexbody.simulate`.

A controller evaluates its own *model* — an assembled system with the same coordinates as the plant, by
default the plant itself, or an estimated copy with perturbed masses or lengths — at the measured state,
computes a generalized force τ (n,) and returns the actuator inputs τ_k = S τ (k,). τ must vanish at the
passive coordinates: every controller checks ‖S̃τ‖ and raises :class:`~flexbody.errors.ActuationError`
(or warns, ``on_deficient="warn"``) instead of silently dropping torque the task needs.

The simulator maps τ_k to the plant as Sᵀτ_k, calls :meth:`Controller.update` once per step with the
plant's measured response (for integral terms) and records :attr:`Controller.diagnostics` (task
coordinates, desired values, errors, the commanded task acceleration f*, …) as histories.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from ..deprecation import renamed_keyword
from ..errors import ActuationError, ModelError, StateError
from ..system.description import as_assembled
from ..system.workspace import Workspace
from .context import ControlContext
from .map_check import ActuationWarning
from .references import Setpoint, flat_desired
from .tasks import Task, task_history
from .workspace import ControlWorkspace

if TYPE_CHECKING:
    from ..dynamics.results import ForwardResult
    from ..io.results import Results
    from ..system import AssembledSystem, State, System
    from .references import Reference
    from .tasks import Desired, TaskTerms

__all__ = [
    "Controller",
    "TaskController",
    "GravityEffort",
    "NullSpaceDamping",
    "PASSIVE_RTOL",
    "task_acceleration_error",
]

PASSIVE_RTOL = 1e-8
"""Largest ‖S̃τ‖ / ‖τ‖ accepted as zero torque at the passive joints."""


def gain_matrix(value: ArrayLike, m: int, name: str) -> np.ndarray:
    """A gain as an (m, m) matrix from a scalar, a diagonal (m,) or a matrix (m, m)."""
    K = np.asarray(value, dtype=float)
    if K.ndim == 0:
        K = float(K) * np.eye(m)
    elif K.shape == (m,):
        K = np.diag(K)
    if K.shape != (m, m) or not np.all(np.isfinite(K)):
        raise ModelError(f"{name} must be a finite scalar, ({m},) or ({m}, {m}), got shape {np.shape(value)}")
    return K


class Controller:
    """Base class. Subclasses implement :meth:`compute` ``(ctx) -> τ (n,)``.

    Parameters
    ----------
    model : AssembledSystem or System, optional
        The controller's model (default: the plant passed at each call; a System is assembled once here).
        Same coordinates as the plant.
    rtol, atol : float, optional
        Rank tolerances of the constraint Jacobian (defaults of :mod:`flexbody.linalg.rank`).
    on_deficient : "raise" or "warn"
        What to do when the actuation map needed here is rank-deficient.
    """

    outputs = "actuators"  # the simulator maps the returned τ_k by Sᵀ
    kind = "controller"

    def __init__(
        self,
        model: System | AssembledSystem | None = None,
        *,
        rtol: float | None = None,
        atol: float | None = None,
        on_deficient: str = "raise",
    ) -> None:
        if on_deficient not in ("raise", "warn"):
            raise ModelError(f"on_deficient must be 'raise' or 'warn', got {on_deficient!r}")
        self.model: AssembledSystem | None = (
            None if model is None else as_assembled(model, f"{type(self).__name__}(model=...)")
        )
        self.rtol, self.atol, self.on_deficient = rtol, atol, on_deficient
        self.workspace = ControlWorkspace(mass_columns=True)  # pattern-dependent structures kept between calls
        self.diagnostics: dict[str, Any] = {}
        self.labels: dict[str, Any] = {}

    # ------------------------------------------------------------------ protocol
    def __call__(self, t: float, state: State, system: AssembledSystem | None = None) -> np.ndarray:
        model = self.model if self.model is not None else system
        if model is None:
            raise ModelError(f"{type(self).__name__}: no model (give model= or call with the system)")
        if system is not None and int(system.n_dofs) != int(model.n_dofs):
            raise ModelError(
                f"{type(self).__name__}: the model has {model.n_dofs} coordinates, the plant {system.n_dofs}"
            )
        ctx = ControlContext(
            model, t, state.q, state.v, self.rtol, self.atol, getattr(self, "workspace", None), state=_workspace(state)
        )
        self.diagnostics = {}
        tau = np.asarray(self.compute(ctx), dtype=float)
        if tau.shape != (ctx.n,) or not np.isfinite(tau).all():
            raise StateError(
                f"{type(self).__name__} produced a torque of shape {tau.shape} with NaN/Inf at t = {t:.9g} s"
            )
        self._check_passive(ctx, tau)
        tau_k = ctx.S @ tau
        self.diagnostics.update(tau_k=tau_k, tau_model=tau)
        self.labels.setdefault("actuated_labels", list(model.actuated_labels))
        return tau_k

    def compute(self, ctx: ControlContext) -> np.ndarray:
        """Generalized force τ (n,) at the state of the :class:`~flexbody.control.context.ControlContext`
        ``ctx``, zero at the passive coordinates; subclasses implement it."""
        raise NotImplementedError

    def update(self, t: float, state: State, measurement: ForwardResult) -> None:
        """Called once per accepted step with the plant's response (``measurement.constraint_force``,
        ``.lam``, ``.a``) to the torque just returned; default: nothing."""

    def reset(self) -> None:
        """Forget internal state (integrals) before a new run."""

    # ------------------------------------------------------------------ helpers
    def _check_passive(self, ctx: ControlContext, tau: np.ndarray) -> None:
        if not len(ctx.passive):
            return
        passive = tau[ctx.passive]
        residual = float(np.sqrt(passive @ passive))
        self.diagnostics["passive_residual"] = residual
        if residual > PASSIVE_RTOL * max(float(np.sqrt(tau @ tau)), 1e-12):
            worst = ctx.passive[np.argsort(-np.abs(tau[ctx.passive]), kind="stable")[:8]]
            worst = np.sort(worst) if len(ctx.passive) > 8 else ctx.passive
            labels = [ctx.model.coordinate_labels[i] for i in worst]
            more = f" (the largest {len(worst)} of {len(ctx.passive)})" if len(worst) < len(ctx.passive) else ""
            message = (
                f"{type(self).__name__} at t = {ctx.t:.9g} s needs torque {np.round(tau[worst], 6)} at "
                f"the passive coordinates {labels}{more} (‖S̃τ‖ = {residual:.3e}, "
                f"‖τ‖ = {np.linalg.norm(tau):.3e}); the actuators cannot produce the commanded motion here"
            )
            if self.on_deficient == "warn":
                warnings.warn(message, ActuationWarning, stacklevel=3)
            else:
                raise ActuationError(message)


class TaskController(Controller):
    """A controller tracking a task with the decoupled linear law [DE-71]

        f* = K_p (x_d − x) + K_v (ẋ_d − ẋ) + ẍ_d

    (errors from ``task.error``: angles wrapped, rotations as rotation vectors).

    Parameters
    ----------
    task : Task (defined on the model's trees)
    reference : callable t -> (desired, ẋ_d, ẍ_d) (:mod:`flexbody.control.references`) or a constant
        desired value (a :class:`Setpoint`).
    kp, kv : scalar, (m_T,) or (m_T, m_T)
        Position and velocity gains [1/s², 1/s].
    """

    def __init__(
        self,
        task: Task,
        reference: Reference | Desired,
        kp: ArrayLike,
        kv: ArrayLike,
        model: System | AssembledSystem | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(model, **kwargs)
        if not isinstance(task, Task):
            raise ModelError(f"{type(self).__name__}: task must be a flexbody Task, got {task!r}")
        self.task = task
        self.reference: Reference = reference if callable(reference) else Setpoint(reference)
        m = task.n_rows
        self.kp, self.kv = gain_matrix(kp, m, "kp"), gain_matrix(kv, m, "kv")
        self.labels["task_labels"] = list(task.row_labels)

    def command(self, ctx: ControlContext) -> tuple[TaskTerms, np.ndarray]:
        """(task terms, f*) at the context's state [DE-71]; records x, x_d, e and f*."""
        terms = ctx.task(self.task)
        desired, xd_d, xdd_d = self.reference(ctx.t)
        m = terms.J.shape[0]
        error = np.asarray(self.task.error(desired, ctx.ev, terms=terms), dtype=float)
        rate_error = (np.zeros(m) if xd_d is None else np.asarray(xd_d, dtype=float)) - terms.xdot
        f_star = self.kp @ error + self.kv @ rate_error + (np.zeros(m) if xdd_d is None else np.asarray(xdd_d, float))
        self.diagnostics.update(
            task_x=terms.x, task_desired=flat_desired(desired, self.task), task_error=error, task_command=f_star
        )
        return terms, f_star


class GravityEffort:
    """Null-space posture torque of [DE-95]: τ₀ = −K_N ∂U/∂q − D_N v with the gravity effort U = ‖g(q)‖².

    ∂U/∂q = 2 (∂g/∂q)ᵀ g, with ∂g/∂q by central differences of the model's gravity force (2n evaluations,
    step ``step``·max(1, abs(q_i))). D_N is the small null-space damping of DE 5.4.1 (0 for none). The
    controller applies τ₀ through the task's null-space projector, so it does not disturb the task.
    """

    def __init__(self, gain: float, damping: float = 0.0, step: float = 1e-6) -> None:
        self.gain, self.damping, self.step = float(gain), float(damping), float(step)
        if not (np.isfinite(self.gain) and np.isfinite(self.damping) and self.step > 0):
            raise ModelError("GravityEffort: gain and damping must be finite and step > 0")

    @staticmethod
    def effort(model: AssembledSystem, q: ArrayLike) -> float:
        """U = ‖g(q)‖² [N²·m²]."""
        return float(np.sum(model.workspace(0.0, q).gravity_force() ** 2))

    def gradient(self, ctx: ControlContext) -> np.ndarray:
        """∂U/∂q (n,) = 2 (∂g/∂q)ᵀ g at the context's q."""
        q, g = ctx.q, ctx.g
        dg = np.empty((ctx.n, ctx.n))
        for i in range(ctx.n):
            hstep = self.step * max(1.0, abs(q[i]))
            qp, qm = q.copy(), q.copy()
            qp[i] += hstep
            qm[i] -= hstep
            gp = ctx.model.workspace(ctx.t, qp).gravity_force()
            gm = ctx.model.workspace(ctx.t, qm).gravity_force()
            dg[:, i] = (gp - gm) / (2.0 * hstep)
        return 2.0 * dg.T @ g

    def __call__(self, ctx: ControlContext) -> np.ndarray:
        return -self.gain * self.gradient(ctx) - self.damping * ctx.v


class NullSpaceDamping:
    """Null-space posture torque τ₀ = −D v (damps self-motion only, once projected)."""

    def __init__(self, damping: float) -> None:
        self.damping = float(damping)

    def __call__(self, ctx: ControlContext) -> np.ndarray:
        return -self.damping * ctx.v


@renamed_keyword("asm", "model")
def task_acceleration_error(model: System | AssembledSystem, task: Task, results: Results) -> np.ndarray:
    """Per recorded step (s,): ‖ẍ − f*‖_∞ / max(1, ‖f*‖_∞) with ẍ = J a + J̇v the plant's task acceleration
    and f* the controller's command (history "task_command") — zero to round-off for an exact model."""
    if "task_command" not in results.histories:
        raise StateError("task_acceleration_error: the run has no history 'task_command' (not a task controller)")
    f_star = results.histories["task_command"]
    xdd = task_history(model, task, results)[2]
    return np.abs(xdd - f_star).max(axis=1) / np.maximum(1.0, np.abs(f_star).max(axis=1))


def _workspace(state: object) -> Workspace | None:
    """``state`` when it is the :class:`~flexbody.system.Workspace` of the state (a run passes its own), else None."""
    return state if isinstance(state, Workspace) else None
