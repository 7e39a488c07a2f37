"""Desired task trajectories for the controllers: x_d(t), ẋ_d(t), ẍ_d(t).

A reference is a callable ``reference(t) -> (desired, velocity, acceleration)``: ``desired`` is what
the task's ``error`` takes (an (m,) array; a 3×3 rotation matrix for an OrientationTask; a sequence of
these for a StackedTask), ``velocity`` and ``acceleration`` are (m,) arrays or None (zero).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeAlias, cast

import numpy as np
from numpy.typing import ArrayLike

from ..errors import ModelError
from ..rigid.exponential_coordinates import rotation_matrix
from .tasks import Desired, OrientationTask, StackedTask, Task, rotation_vector

__all__ = ["Setpoint", "Trajectory", "Sinusoid", "CircleAfterStep", "flat_desired", "shifted_desired"]

Reference: TypeAlias = "Callable[[float], tuple[Desired, ArrayLike | None, ArrayLike | None]]"
"""A reference t -> (desired, velocity, acceleration) (module docstring)."""


class Setpoint:
    """A constant goal (a "goal position command" [DE 5.4]): ẋ_d = ẍ_d = 0."""

    def __init__(self, desired: Desired) -> None:
        self.desired = desired

    def __call__(self, t: float) -> tuple[Desired, None, None]:
        return self.desired, None, None

    def __repr__(self) -> str:
        return f"Setpoint({self.desired!r})"


class Trajectory:
    """x_d(t) given by callables; ``velocity`` and ``acceleration`` may be None (then zero)."""

    def __init__(
        self,
        position: Callable[[float], Desired],
        velocity: Callable[[float], ArrayLike] | None = None,
        acceleration: Callable[[float], ArrayLike] | None = None,
    ) -> None:
        for name, f in (("position", position), ("velocity", velocity), ("acceleration", acceleration)):
            if f is not None and not callable(f):
                raise ModelError(f"Trajectory: {name} must be callable t -> value, got {f!r}")
        self.position, self.velocity, self.acceleration = position, velocity, acceleration

    def __call__(self, t: float) -> tuple[Desired, np.ndarray | None, np.ndarray | None]:
        vel = None if self.velocity is None else np.atleast_1d(np.asarray(self.velocity(t), dtype=float))
        acc = None if self.acceleration is None else np.atleast_1d(np.asarray(self.acceleration(t), dtype=float))
        return self.position(t), vel, acc


class Sinusoid:
    """x_d(t) = offset + amplitude·sin(ω t + phase) per component, with exact derivatives (e.g. AG IX:
    x_d = −0.075 + 0.225 sin(πt + π/9))."""

    def __init__(self, offset: ArrayLike, amplitude: ArrayLike, omega: ArrayLike, phase: ArrayLike = 0.0) -> None:
        self.offset, self.amplitude, self.omega, self.phase = (
            np.atleast_1d(np.asarray(x, dtype=float)) for x in (offset, amplitude, omega, phase)
        )
        shapes = {x.shape for x in (self.offset, self.amplitude, self.omega, self.phase)} - {(1,)}
        if len(shapes) > 1 or not all(
            np.all(np.isfinite(x)) for x in (self.offset, self.amplitude, self.omega, self.phase)
        ):
            raise ModelError("Sinusoid: offset, amplitude, omega and phase must be finite and of one length")

    def __call__(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        arg = self.omega * t + self.phase
        s, c = np.sin(arg), np.cos(arg)
        return (self.offset + self.amplitude * s, self.amplitude * self.omega * c, -self.amplitude * self.omega**2 * s)


class CircleAfterStep:
    """A planar (2-component) goal held, then a circle: x_d = ``goal`` for t < ``t_settle``; afterwards a circle
    of ``radius`` [m] through ``goal`` (centre below it in the second component, starting at its top) run at the
    angle θ(τ), τ = t − t_settle, whose rate rises as Ω·smoothstep(τ/``t_ramp``) to Ω = 2π·``frequency``; exact
    ẋ_d and ẍ_d (cases 16 and 24)."""

    def __init__(self, goal: ArrayLike, t_settle: float, radius: float, frequency: float, t_ramp: float) -> None:
        self.goal, self.t_settle = np.asarray(goal, dtype=float), float(t_settle)
        if self.goal.shape != (2,) or not np.all(np.isfinite(self.goal)):
            raise ModelError(f"CircleAfterStep: goal must be 2 finite numbers, got {goal!r}")
        self.radius, self.rate, self.t_ramp = float(radius), 2.0 * np.pi * float(frequency), float(t_ramp)
        if not (self.t_ramp > 0 and np.isfinite(self.radius) and np.isfinite(self.rate)):
            raise ModelError("CircleAfterStep: radius and frequency must be finite and t_ramp positive")
        self.centre = self.goal - np.array([0.0, self.radius])

    def angle(self, tau: float) -> tuple[float, float, float]:
        """θ, θ̇, θ̈ at τ ≥ 0 [rad, rad/s, rad/s²]."""
        u = min(tau / self.t_ramp, 1.0)
        if u < 1.0:
            theta = self.rate * self.t_ramp * (u**3 - 0.5 * u**4)
            return theta, self.rate * (3 * u**2 - 2 * u**3), self.rate * 6 * u * (1 - u) / self.t_ramp
        return self.rate * (0.5 * self.t_ramp + tau - self.t_ramp), self.rate, 0.0

    def __call__(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if t < self.t_settle:
            return self.goal.copy(), np.zeros(2), np.zeros(2)
        theta, rate, accel = self.angle(t - self.t_settle)
        radial = np.array([np.sin(theta), np.cos(theta)])  # starts at the top of the circle
        tangent = np.array([np.cos(theta), -np.sin(theta)])
        return (
            self.centre + self.radius * radial,
            self.radius * rate * tangent,
            self.radius * (accel * tangent - rate**2 * radial),
        )


def flat_desired(desired: Desired, task: Task) -> np.ndarray:
    """The desired value as a flat (m,) array for recording: rotation matrices become rotation
    vectors, stacked desired values are concatenated."""
    if isinstance(task, StackedTask):
        stacked = cast(Sequence[Desired], desired)  # a stacked task's desired values: one per task
        return np.concatenate([flat_desired(d, t) for d, t in zip(stacked, task.tasks)])
    if isinstance(task, OrientationTask):
        return rotation_vector(np.asarray(desired, dtype=float))
    return np.atleast_1d(np.asarray(desired, dtype=float)).reshape(-1)


def shifted_desired(desired: Desired, task: Task, shift: np.ndarray) -> Desired:
    """``desired`` moved by ``shift`` (m,) in the task's coordinates: added to its values, and for an
    :class:`OrientationTask` a rotation vector [rad] in world axes that turns R_d to exp([shift]×) R_d, the rotation
    whose :meth:`~OrientationTask.error` against R_d is the shift."""
    if isinstance(task, StackedTask):
        parts = np.split(shift, np.cumsum([t.n_rows for t in task.tasks])[:-1])
        return cast(Desired, [shifted_desired(d, t, s) for d, t, s in zip(task.split(desired), task.tasks, parts)])
    if isinstance(task, OrientationTask):
        return rotation_matrix(shift) @ np.asarray(desired, dtype=float)
    return np.atleast_1d(np.asarray(desired, dtype=float)).reshape(-1) + shift
