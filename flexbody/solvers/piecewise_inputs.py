"""Piecewise-constant actuator inputs (:class:`PiecewiseInputs`, an :class:`~flexbody.solvers.input_signals.
InputSignal`): u_k (n_u,) held on [t_k, t_{k+1}), τ = Sᵀu_k.

The integrators end a step on every switch t_k and take each step's input from the interval holding its start, at
every stage; generalized-α restarts its accelerations at a switch (:mod:`flexbody.solvers.input_breaks`), so a run
under these inputs converges at the integrator's order to the system with the inputs held exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from .input_signals import InputSignal

__all__ = ["PiecewiseInputs"]


@dataclass(frozen=True, init=False)
class PiecewiseInputs(InputSignal):
    """Inputs ``values`` (k, n_u) [N or N·m, per actuator] held on the intervals of ``times`` (k + 1,) [s], increasing.

    Examples
    --------
    >>> u = PiecewiseInputs(np.linspace(0.0, 1.0, 11), np.zeros((10, 2)))  # 10 intervals of 0.1 s, two actuators
    """

    jumps = True
    rows_are = "one row per interval of times"

    def __init__(self, times: ArrayLike, values: ArrayLike):
        self._checked(times, values)

    @staticmethod
    def rows(knots: int) -> int:
        return knots - 1

    def weights(self, t: float, t_start: float) -> tuple[np.ndarray, np.ndarray]:
        """The interval holding ``t_start``, weight 1 (the input is held over the step)."""
        self.interval(t)  # within the span
        return np.array([self.interval(t_start)]), np.ones(1)

    def gram(self, t0: float, t1: float) -> np.ndarray:
        """diag(Δt_k), each Δt_k [s] the part of interval k within [t0, t1]."""
        t = self.times
        return np.diag(np.clip(np.minimum(t[1:], t1) - np.maximum(t[:-1], t0), 0.0, None))

    def with_times(self, times: ArrayLike, values: ArrayLike | None = None) -> PiecewiseInputs:
        return PiecewiseInputs(times, self.values if values is None else values)
