"""Piecewise-constant actuator inputs over a time grid: the inputs a run's sensitivities are taken with respect to
(:func:`flexbody.gradient`), and the open-loop input of a run (``simulate(..., tau=inputs.forces(model))``).

The input u_k (n_u,) holds on [t_k, t_{k+1}), τ = Sᵀu_k with S (n_u, n) the system's actuation matrix. The
integrators end a step on every switch t_k and take each step's input from the interval holding its start, at every
stage; generalized-α restarts its accelerations at a switch (:mod:`flexbody.solvers.input_breaks`), so a run under
these inputs converges at the integrator's order to the system with the inputs held exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..errors import StateError

__all__ = ["InputForces", "PiecewiseInputs"]


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

    def forces(self, model: Any) -> InputForces:
        """τ(t, q, v) = Sᵀu(t) (n,) of ``model`` (a System, assembled here, or an AssembledSystem; its actuation matrix
        S (n_u, n)), for ``simulate(..., tau=...)``, with the switch times the integrators step onto
        (:mod:`flexbody.solvers.input_breaks`); StateError when n_u is not the model's number of actuators."""
        asm = model.assemble() if hasattr(model, "assemble") else model
        S = np.asarray(asm.S, dtype=float)
        if S.shape[0] != self.n_inputs:
            raise StateError(
                f"PiecewiseInputs: {self.n_inputs} inputs per interval, the model has {S.shape[0]} actuators"
            )
        return InputForces(self, S)


class InputForces:
    """τ(t, q, v) = Sᵀu(t) (n,) [N, N·m] of piecewise ``inputs`` through the actuation matrix ``S`` (n_u, n): u_k on
    [t_k, t_{k+1}) (right-continuous), jumping at the interior ``breakpoints`` t_1 … t_{k−1} [s], on which the
    integrators end their steps and restart (:mod:`flexbody.solvers.input_breaks`)."""

    jumps = True

    def __init__(self, inputs: PiecewiseInputs, S: np.ndarray):
        self.inputs, self.S = inputs, S
        self.breakpoints = inputs.times[1:-1]

    def __call__(self, t: float, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        return self.inputs.at(t) @ self.S

    def in_step(self, t_start: float, t: float) -> np.ndarray:
        """τ (n,) at t [s] within the step that starts at ``t_start``: the input of the interval holding the step's
        start, also at the step's end (the left limit where the end is a switch)."""
        return self.inputs.at(t_start) @ self.S
