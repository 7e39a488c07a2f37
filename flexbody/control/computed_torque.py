"""Joint-space computed-torque control (inverse-dynamics control, IDC): the baseline Aghili compares
PIDC against [AG IX].

    τ = M (q̈_d + K_D (q̇_d − q̇) + K_P (q_d − q)) + h

It ignores the constraints: it needs every coordinate actuated, and it servoes all of them — including
the constraint directions — so a joint reference that is slightly inconsistent with the plant's
constraints (e.g. from a model with a wrong constraint position) is fought with large constraint forces.
:class:`JointReferenceFromTask` turns a task reference into the joint reference q_d(t) by inverse
kinematics of the model's task and constraints.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from ..errors import ActuationError, ConvergenceError, ModelError
from .base import Controller, gain_matrix
from .references import Setpoint
from .tasks import Task

if TYPE_CHECKING:
    from ..system import AssembledSystem, System, Workspace
    from .context import ControlContext
    from .references import Reference
    from .tasks import Desired, TaskTerms

__all__ = ["ComputedTorqueControl", "JointReferenceFromTask"]


class JointReferenceFromTask:
    """q_d(t), q̇_d(t), q̈_d(t) with x(q_d) = x_d(t) and φ(q_d, t) = 0 on ``model`` (inverse kinematics).

    Newton on [x_d − x(q); −φ(q)] with J̌ = [J; Φ] (minimum-norm steps), warm-started from the last
    solution (``q_guess`` at first). Then J̌ q̇_d = [ẋ_d; −φ_t] and J̌ q̈_d = [ẍ_d − J̇q̇_d; −Φ̇q̇_d]. J̌ should be
    square and regular (the task completes a set of independent coordinates, as in [AG-38]).
    """

    def __init__(
        self,
        model: AssembledSystem,
        task: Task,
        reference: Reference | Desired,
        q_guess: ArrayLike,
        *,
        tol: float = 1e-12,
        max_iterations: int = 50,
    ) -> None:
        self.model, self.task = model, task
        self.reference: Reference = reference if callable(reference) else Setpoint(reference)
        self.q_guess = np.asarray(q_guess, dtype=float).copy()
        self.tol, self.max_iterations = float(tol), int(max_iterations)
        self.reset()

    def reset(self) -> None:
        """Warm-start the next inverse kinematics from ``q_guess`` again (forget the last solution)."""
        self._q = self.q_guess.copy()

    def _stack(
        self, t: float, q: np.ndarray, v: np.ndarray | None = None
    ) -> tuple[Workspace, TaskTerms, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        ev = self.model.workspace(t, q, v)
        terms = self.task.evaluate(ev)
        phi, Phi, bias, phi_t = ev.constraint_rows()
        return ev, terms, np.vstack([terms.J, Phi]), phi, bias, phi_t

    def __call__(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        desired, xd, xdd = self.reference(t)
        q, history = self._q.copy(), []
        for _ in range(self.max_iterations):
            ev, terms, J_check, phi, _, _ = self._stack(t, q)
            r = np.concatenate([self.task.error(desired, ev), -phi])
            history.append(float(np.linalg.norm(r)))
            if history[-1] <= self.tol:
                break
            q = q + np.linalg.lstsq(J_check, r, rcond=None)[0]
        else:
            raise ConvergenceError(
                f"inverse kinematics of task {self.task.name!r} at t = {t:.9g} s did not converge", history, self._q
            )
        self._q = q
        m = terms.J.shape[0]
        _, _, J_check, _, _, phi_t = self._stack(t, q)
        v = np.linalg.lstsq(J_check, np.concatenate([np.zeros(m) if xd is None else xd, -phi_t]), rcond=None)[0]
        _, terms_v, _, _, bias, _ = self._stack(t, q, v)
        rhs = np.concatenate([(np.zeros(m) if xdd is None else xdd) - terms_v.bias, -bias])
        return q, v, np.linalg.lstsq(J_check, rhs, rcond=None)[0]


class ComputedTorqueControl(Controller):
    """IDC: τ = M(q̈_d + K_D(q̇_d − q̇) + K_P(q_d − q)) + h on the model (all coordinates actuated).

    Parameters
    ----------
    joint_reference : callable t -> (q_d, q̇_d, q̈_d) (n,) each, e.g. :class:`JointReferenceFromTask`.
    kp, kd : scalar, (n,) or (n, n) gains [1/s², 1/s].
    task : Task, optional — only recorded (task coordinates in the histories, for comparison plots).
    """

    kind = "idc"

    def __init__(
        self,
        joint_reference: Callable[[float], tuple[ArrayLike, ArrayLike, ArrayLike]],
        kp: ArrayLike,
        kd: ArrayLike,
        model: System | AssembledSystem | None = None,
        *,
        task: Task | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(model, **kwargs)
        if not callable(joint_reference):
            raise ModelError(f"joint_reference must be callable t -> (q_d, v_d, a_d), got {joint_reference!r}")
        self.joint_reference, self.task = joint_reference, task
        self._kp, self._kd = kp, kd
        if task is not None:
            self.labels["task_labels"] = list(task.row_labels)

    def reset(self) -> None:
        if hasattr(self.joint_reference, "reset"):
            self.joint_reference.reset()

    def compute(self, ctx: ControlContext) -> np.ndarray:
        """τ = M(q̈_d + K_D(q̇_d − q̇) + K_P(q_d − q)) + h (n,) at ``ctx``; ActuationError unless every coordinate
        is actuated."""
        n = ctx.n
        if ctx.S.shape[0] < n:
            raise ActuationError(
                f"ComputedTorqueControl needs every coordinate actuated: k = {ctx.S.shape[0]} < "
                f"n = {n} (passive: {[ctx.model.coordinate_labels[i] for i in ctx.passive]})"
            )
        q_d, v_d, a_d = (np.asarray(x, dtype=float) for x in self.joint_reference(ctx.t))
        kp, kd = gain_matrix(self._kp, n, "kp"), gain_matrix(self._kd, n, "kd")
        a_star = a_d + kd @ (v_d - ctx.v) + kp @ (q_d - ctx.q)
        self.diagnostics.update(joint_desired=q_d, joint_error=q_d - ctx.q)
        if self.task is not None:
            self.diagnostics["task_x"] = ctx.task(self.task).x
        return ctx.M @ a_star + ctx.h
