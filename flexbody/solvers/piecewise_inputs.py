"""Piecewise-constant actuator inputs over a time grid: the inputs a run's sensitivities are taken with respect to
(:func:`flexbody.gradient`), and the open-loop input of a run (``simulate(..., tau=inputs.forces(model))``).

The input u_k (n_u,) holds on [t_k, t_{k+1}); a step of an integrator starting at t_n takes the input of the interval
holding t_n and holds it over the step (as generalized-α holds every input over its step), so that τ_n = Sᵀu_k with
S (n_u, n) the system's actuation matrix.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..errors import StateError

__all__ = ["PiecewiseInputs"]


@dataclass(frozen=True, init=False)
class PiecewiseInputs:
    """Inputs ``values`` (k, n_u) [N or N·m, per actuator] held on the intervals of ``times`` (k + 1,) [s], increasing.

    Examples
    --------
    >>> u = PiecewiseInputs(np.linspace(0.0, 1.0, 11), np.zeros((10, 2)))  # 10 intervals of 0.1 s, two actuators
    """

    times: np.ndarray
    values: np.ndarray

    def __init__(self, times: ArrayLike, values: ArrayLike):
        t = np.array(times, dtype=float).reshape(-1)
        u = np.array(values, dtype=float)
        if u.ndim == 1:
            u = u[:, None]
        if t.size < 2 or not np.all(np.isfinite(t)) or np.any(np.diff(t) <= 0):
            raise StateError(f"PiecewiseInputs: times must be at least two increasing finite instants, got {t!r}")
        if u.ndim != 2 or u.shape[0] != t.size - 1 or not np.all(np.isfinite(u)):
            raise StateError(
                f"PiecewiseInputs: values must be ({t.size - 1}, n_u) finite numbers (one row per interval of times), "
                f"got shape {u.shape}"
            )
        t.flags.writeable = u.flags.writeable = False
        object.__setattr__(self, "times", t)
        object.__setattr__(self, "values", u)

    @property
    def n_inputs(self) -> int:
        """n_u, the inputs of one interval."""
        return self.values.shape[1]

    def interval(self, t: float) -> int:
        """The interval k (0 … k − 1) holding the instant t [s]; StateError outside [t_0, t_k]."""
        tol = 1e-12 * max(1.0, abs(self.times[-1]))
        if t < self.times[0] - tol or t > self.times[-1] + tol:
            raise StateError(
                f"PiecewiseInputs: t = {t:.9g} s is outside the inputs' span [{self.times[0]}, {self.times[-1]}] s"
            )
        k = int(np.searchsorted(self.times, t + tol, side="right")) - 1
        return min(max(k, 0), self.values.shape[0] - 1)

    def at(self, t: float) -> np.ndarray:
        """u (n_u,) held at the instant t [s]."""
        return self.values[self.interval(t)]

    def with_values(self, values: ArrayLike) -> PiecewiseInputs:
        """The same grid with other ``values`` (k, n_u)."""
        return PiecewiseInputs(self.times, values)

    def forces(self, model: Any) -> Callable[[float, np.ndarray, np.ndarray], np.ndarray]:
        """τ(t, q, v) = Sᵀu(t) (n,) of ``model`` (a System, assembled here, or an AssembledSystem; its actuation matrix
        S (n_u, n)), for ``simulate(..., tau=...)``; StateError when n_u is not the model's number of actuators."""
        asm = model.assemble() if hasattr(model, "assemble") else model
        S = np.asarray(asm.S, dtype=float)
        if S.shape[0] != self.n_inputs:
            raise StateError(
                f"PiecewiseInputs: {self.n_inputs} inputs per interval, the model has {S.shape[0]} actuators"
            )

        def tau(t: float, q: np.ndarray, v: np.ndarray) -> np.ndarray:
            return self.at(t) @ S

        return tau
