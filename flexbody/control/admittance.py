"""Force regulation through a compliant tool by admittance: outer loops that move the reference of a motion law until
the measured contact force (and a point of the tool) reach their set-points — damping or "indirect" force control
[Whitney 1977; Lynch & Park, Modern Robotics 11.6; Siciliano & Villani 1999, ch. 3].

Why a second law beside :class:`~flexbody.control.contact_control.ContactForceControl`: a flexible tool's contact
nodes are reached by the joints only through the tool's elasticity (DE 6.3; the direct map's authority on a nodal task
is ~1e-6 of full actuation, case 16), so no torque sets a node's acceleration, and neither the force law [AG-49..52]
nor the contact actuation problem can hold them. What the joints do control is the motion task (the flange); the
tool's contact force follows from where the flange puts the tool. The loops close around that. The motion law tracks
the compliant reference

    x_c = x_d ⊕ s,   ẋ_c = ẋ_d + ṡ,   ẍ_c = ẍ_d,        ṡ = Σ_l D_l (k_l e_l + k_I,l ∫ e_l dt)

(⊕ adds s to the task's coordinates; on an :class:`~flexbody.control.tasks.OrientationTask`'s rows s is a rotation
vector in world axes, R_c = exp([s]×) R_d), with the loops

- :class:`ContactForceLoop`: e = f_d − Σ f_n, the set-point minus the plant's normal forces of the named contacts
  over the last step summed [N]; D (m,) the direction in task coordinates that presses the tool into the surface;
  k [m/(N·s)] the admittance (1/k a damping [N·s/m]);
- :class:`TaskLoop`: e = x_d − x of a second task, e.g. the tool tip's coordinate along the surface [its units];
  D (m, m_l).

With k_I = 0 and a rigid contact that the motion law (exact model) holds still, the pressed force is the normal's
effective mass m_n = 1/(G_n M̄⁻¹ G_nᵀ) times the commanded acceleration into the surface, F = m_n (k_p s + k_v ṡ),
so Ḟ (1 + m_n k_v k) = m_n k_p k (f_d − F): F reaches f_d as a first order with the time constant
(1 + m_n k_v k)/(m_n k_p k) (tests/test_admittance.py). Against a compliant tool F follows the tool's stiffness, and
at every steady state ṡ = 0 holds e = 0: the force is f_d whatever the tool's stiffness and the model's errors.
A k_I > 0 also removes the error a surface that recedes at constant speed leaves (ṡ constant).

The shift moves once per step, from the plant's measurement after it (:meth:`AdmittanceControl.update`, explicit
Euler over the step); within a step it is extrapolated linearly, so the law is a function of the time it is called
at (stage calls of RK4 see one reference). Where no contact is measured the force loop drives the tool toward the
surface at k f_d (at most ``max_rate``); where the loops need what the plant did not measure, they raise
:class:`~flexbody.errors.ModelError` naming it.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from ..errors import ModelError
from .base import Controller, TaskController
from .contact_rows import measured_normal_forces
from .references import Setpoint, shifted_desired
from .tasks import Task

if TYPE_CHECKING:
    from ..dynamics.results import ForwardResult
    from ..system import AssembledSystem, State
    from .context import ControlContext
    from .references import Reference
    from .tasks import Desired

__all__ = ["AdmittanceControl", "ContactForceLoop", "TaskLoop"]


class _Loop:
    """An outer loop: its error e (m_l,), direction D (m, m_l) into the motion task's coordinates and the rate
    D (k e + k_I ∫e) it gives the shift (module docstring)."""

    def __init__(self, direction: ArrayLike, gain: float, integral_gain: float, max_rate: float | None) -> None:
        self.direction = np.asarray(direction, dtype=float)
        self.gain, self.integral_gain = float(gain), float(integral_gain)
        self.max_rate = None if max_rate is None else float(max_rate)
        who = type(self).__name__
        for label, value in (("gain", self.gain), ("integral_gain", self.integral_gain)):
            if not (np.isfinite(value) and value >= 0.0):
                raise ModelError(f"{who}: {label} must be finite and ≥ 0, got {value!r}")
        if self.max_rate is not None and not (np.isfinite(self.max_rate) and self.max_rate > 0.0):
            raise ModelError(f"{who}: max_rate must be > 0 (task units per second), got {max_rate!r}")
        self.reset()

    def reset(self) -> None:
        self.integral = np.zeros(self.size)  # ∫ e dt
        self.last: np.ndarray | None = None  # e of the last measurement

    @property
    def size(self) -> int:
        """m_l, the number of the loop's errors."""
        return 1

    def bind(self, m: int) -> np.ndarray:
        """D (m, m_l) for a motion task of m rows; ModelError when the direction does not fit or is not finite."""
        D = self.direction.reshape(-1, 1) if self.direction.ndim == 1 and self.size == 1 else self.direction
        if D.shape != (m, self.size) or not np.all(np.isfinite(D)):
            raise ModelError(
                f"{type(self).__name__}: direction must be finite of shape ({m}, {self.size}) for a motion task of {m} "
                f"rows and {self.size} loop errors"
                + (f" (or ({m},))" if self.size == 1 else "")
                + f", got shape {self.direction.shape}"
            )
        return D

    def error(self, t: float, ws: Any, measurement: ForwardResult, model: AssembledSystem) -> np.ndarray:
        raise NotImplementedError

    def rate(self, D: np.ndarray, error: np.ndarray, elapsed: float) -> np.ndarray:
        """ṡ (m,) = D (k e + k_I ∫e) after adding the last error over ``elapsed`` [s] to the integral, at most
        ``max_rate`` long."""
        if self.last is not None:
            self.integral = self.integral + elapsed * self.last
        self.last = error
        rate = D @ (self.gain * error + self.integral_gain * self.integral)
        length = float(np.linalg.norm(rate))
        if self.max_rate is not None and length > self.max_rate:
            rate = rate * (self.max_rate / length)
        return rate


class ContactForceLoop(_Loop):
    """e = f_d − Σ f_n [N]: the set-point minus the normal forces the plant measured over its last step at the named
    contacts (``measurement.contact_forces``, :class:`~flexbody.solvers.moreau_jean.MoreauJean`), summed.

    Parameters
    ----------
    normal_force : float or callable t -> float — f_d [N] (≥ 0; a pull is refused by name).
    direction : (m,) — the direction in the motion task's coordinates that presses the tool into the surface (e.g.
        (0, 0, −1, 0, 0, 0) for a flange pose task above a floor).
    gain : float — the admittance k [task units/(N·s)].
    contacts : sequence of str, optional — the plant's contacts summed (default: all).
    integral_gain : float — k_I [task units/(N·s²)].
    max_rate : float, optional — the largest ‖ṡ‖ [task units/s], the speed toward a surface not touched.
    """

    def __init__(
        self,
        normal_force: float | Callable[[float], float],
        direction: ArrayLike,
        gain: float,
        *,
        contacts: Sequence[str] | None = None,
        integral_gain: float = 0.0,
        max_rate: float | None = None,
    ) -> None:
        self.normal_force = normal_force
        self.contacts = None if contacts is None else tuple(contacts)
        super().__init__(direction, gain, integral_gain, max_rate)

    def desired(self, t: float) -> float:
        """f_d [N] at t."""
        value = float(self.normal_force(t) if callable(self.normal_force) else self.normal_force)
        if not (np.isfinite(value) and value >= 0.0):
            raise ModelError(
                f"ContactForceLoop: the desired normal force must be finite and ≥ 0 N, got {value!r} at t = {t:.9g} s"
            )
        return value

    def measured(self, measurement: ForwardResult, model: AssembledSystem) -> float:
        """Σ f_n [N] of the loop's contacts over the plant's last step."""
        forces = measured_normal_forces(measurement, model)
        if forces is None:
            raise ModelError(
                "ContactForceLoop: the plant measured no contact forces; simulate with fb.MoreauJean (the nonsmooth "
                "stepper of unilateral contacts)"
            )
        if self.contacts is None:
            return float(sum(forces.values()))
        unknown = sorted(set(self.contacts) - set(forces))
        if unknown:
            raise ModelError(f"ContactForceLoop: contacts {unknown} are not the plant's (it has {list(forces)})")
        return float(sum(forces[name] for name in self.contacts))

    def error(self, t: float, ws: Any, measurement: ForwardResult, model: AssembledSystem) -> np.ndarray:
        return np.array([self.desired(t) - self.measured(measurement, model)])


class TaskLoop(_Loop):
    """e = x_d − x of a second ``task`` (its ``error`` against ``reference(t)``'s desired value): e.g. a flexible
    tool's tip node along the surface, which the joints reach only through the tool (DE 6.3).

    Parameters
    ----------
    task : Task — what the loop measures (at the plant's state after each step).
    reference : callable t -> (desired, ...) or a constant desired value.
    direction : (m, m_l) — how its errors move the motion task's reference (m_l = task.n_rows).
    gain, integral_gain : float — k [1/s], k_I [1/s²].
    max_rate : float, optional — the largest ‖ṡ‖ [task units/s].
    """

    def __init__(
        self,
        task: Task,
        reference: Reference | Desired,
        direction: ArrayLike,
        gain: float,
        *,
        integral_gain: float = 0.0,
        max_rate: float | None = None,
    ) -> None:
        if not isinstance(task, Task):
            raise ModelError(f"TaskLoop: task must be a flexbody Task, got {task!r}")
        self.task = task
        self.reference: Reference = reference if callable(reference) else Setpoint(reference)
        super().__init__(direction, gain, integral_gain, max_rate)

    @property
    def size(self) -> int:
        return int(self.task.n_rows)

    def error(self, t: float, ws: Any, measurement: ForwardResult, model: AssembledSystem) -> np.ndarray:
        return np.asarray(self.task.error(self.reference(t)[0], ws), dtype=float)


class AdmittanceControl(Controller):
    """A motion law tracking the reference its outer loops move (module docstring).

    Parameters
    ----------
    motion : TaskController — the motion law (direct mapping, PIDC, …) and its task, reference, gains and model; it
        is copied, and the copy tracks the compliant reference (``motion`` itself is left as given).
    loops : sequence of ContactForceLoop and TaskLoop — the outer loops, in the order their histories are recorded.

    Histories: the motion law's, and ``admittance_shift`` (m,) s and ``admittance_error`` (Σ m_l,) the loops' errors.
    """

    kind = "admittance"

    def __init__(self, motion: TaskController, loops: Sequence[ContactForceLoop | TaskLoop]) -> None:
        if not isinstance(motion, TaskController):
            raise ModelError(f"AdmittanceControl: motion must be a TaskController, got {motion!r}")
        loops = list(loops)
        if not loops or not all(isinstance(loop, _Loop) for loop in loops):
            raise ModelError(
                f"AdmittanceControl: loops must be a non-empty sequence of ContactForceLoop and TaskLoop, got {loops!r}"
            )
        super().__init__(motion.model, rtol=motion.rtol, atol=motion.atol, on_deficient=motion.on_deficient)
        self.law = copy.copy(motion)
        self.law.diagnostics, self.law.labels = {}, dict(motion.labels)
        self.desired_reference = motion.reference
        self.law.reference = self.compliant_reference
        self.loops = loops
        self.directions = [loop.bind(motion.task.n_rows) for loop in loops]
        self.workspace = self.law.workspace
        self.labels.update(self.law.labels)
        self.reset()

    def reset(self) -> None:
        self.shift = np.zeros(self.law.task.n_rows)  # s at the time of the last measurement [task units]
        self.shift_rate = np.zeros(self.law.task.n_rows)  # ṡ over the step after it
        self.measured_at: float | None = None
        self.errors = np.zeros(sum(loop.size for loop in self.loops))
        for loop in self.loops:
            loop.reset()
        self.law.reset()

    def _elapsed(self, t: float) -> float:
        """[s] from the last measurement to t (0 before the first)."""
        return 0.0 if self.measured_at is None else max(float(t) - self.measured_at, 0.0)

    def shift_at(self, t: float) -> np.ndarray:
        """s (m,) at t: the last measurement's, moved at its rate."""
        return self.shift + self._elapsed(t) * self.shift_rate

    def compliant_reference(self, t: float) -> tuple[Desired, np.ndarray, ArrayLike | None]:
        """(x_c, ẋ_c, ẍ_c) at t: the desired reference moved by the shift (module docstring)."""
        desired, velocity, acceleration = self.desired_reference(t)
        task = self.law.task
        moved = shifted_desired(desired, task, self.shift_at(t))
        rate = self.shift_rate + (0.0 if velocity is None else np.asarray(velocity, dtype=float))
        return moved, rate, acceleration

    def compute(self, ctx: ControlContext) -> np.ndarray:
        """τ (n,) of the motion law on the compliant reference at ``ctx``; records the shift and the loops' errors."""
        self.law.diagnostics = {}
        tau = self.law.compute(ctx)
        self.diagnostics.update(self.law.diagnostics)
        self.diagnostics.update(admittance_shift=self.shift_at(ctx.t), admittance_error=self.errors.copy())
        return tau

    def update(self, t: float, state: State, measurement: ForwardResult) -> None:
        """Move the shift to t at its rate and set the rate from the loops' errors measured after the step from t."""
        self.law.update(t, state, measurement)
        model: Any = self.model if self.model is not None else getattr(state, "asm", None)
        elapsed = self._elapsed(t)
        self.shift = self.shift + elapsed * self.shift_rate
        errors = [loop.error(t, state, measurement, model) for loop in self.loops]
        rates = [loop.rate(D, e, elapsed) for loop, D, e in zip(self.loops, self.directions, errors)]
        self.shift_rate = np.sum(rates, axis=0)
        self.errors = np.concatenate(errors)
        self.measured_at = float(t)
