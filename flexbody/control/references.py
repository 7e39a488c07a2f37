"""Desired task trajectories for the controllers: x_d(t), ẋ_d(t), ẍ_d(t).

A reference is a callable ``reference(t) -> (desired, velocity, acceleration)``: ``desired`` is what
the task's ``error`` takes (an (m,) array; a 3×3 rotation matrix for an OrientationTask; a sequence of
these for a StackedTask), ``velocity`` and ``acceleration`` are (m,) arrays or None (zero).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..errors import ModelError
from .tasks import OrientationTask, StackedTask, rotation_vector

__all__ = ["Setpoint", "Trajectory", "Sinusoid", "flat_desired"]


class Setpoint:
    """A constant goal (a "goal position command" [DE 5.4]): ẋ_d = ẍ_d = 0."""

    def __init__(self, desired):
        self.desired = desired

    def __call__(self, t: float):
        return self.desired, None, None

    def __repr__(self) -> str:
        return f"Setpoint({self.desired!r})"


class Trajectory:
    """x_d(t) given by callables; ``velocity`` and ``acceleration`` may be None (then zero)."""

    def __init__(self, position: Callable, velocity: Callable | None = None,
                 acceleration: Callable | None = None):
        for name, f in (("position", position), ("velocity", velocity), ("acceleration", acceleration)):
            if f is not None and not callable(f):
                raise ModelError(f"Trajectory: {name} must be callable t -> value, got {f!r}")
        self.position, self.velocity, self.acceleration = position, velocity, acceleration

    def __call__(self, t: float):
        vel = None if self.velocity is None else np.atleast_1d(np.asarray(self.velocity(t), dtype=float))
        acc = None if self.acceleration is None else np.atleast_1d(np.asarray(self.acceleration(t), dtype=float))
        return self.position(t), vel, acc


class Sinusoid:
    """x_d(t) = offset + amplitude·sin(ω t + phase) per component, with exact derivatives (e.g. AG IX:
    x_d = −0.075 + 0.225 sin(πt + π/9))."""

    def __init__(self, offset, amplitude, omega, phase=0.0):
        self.offset, self.amplitude, self.omega, self.phase = (np.atleast_1d(np.asarray(x, dtype=float))
                                                                for x in (offset, amplitude, omega, phase))
        shapes = {x.shape for x in (self.offset, self.amplitude, self.omega, self.phase)} - {(1,)}
        if len(shapes) > 1 or not all(np.all(np.isfinite(x)) for x in (self.offset, self.amplitude,
                                                                          self.omega, self.phase)):
            raise ModelError("Sinusoid: offset, amplitude, omega and phase must be finite and of one length")

    def __call__(self, t: float):
        arg = self.omega * t + self.phase
        s, c = np.sin(arg), np.cos(arg)
        return (self.offset + self.amplitude * s, self.amplitude * self.omega * c,
                -self.amplitude * self.omega**2 * s)


def flat_desired(desired, task) -> np.ndarray:
    """The desired value as a flat (m,) array for recording: rotation matrices become rotation
    vectors, stacked desired values are concatenated."""
    if isinstance(task, StackedTask):
        return np.concatenate([flat_desired(d, t) for d, t in zip(desired, task.tasks)])
    if isinstance(task, OrientationTask):
        return rotation_vector(np.asarray(desired, dtype=float))
    return np.atleast_1d(np.asarray(desired, dtype=float)).reshape(-1)
