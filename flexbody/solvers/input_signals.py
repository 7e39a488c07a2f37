"""Input signals: actuator inputs u(t) (n_u,) over a time grid, linear in their ``values`` — what a run's sensitivities
are taken with respect to (:func:`flexbody.gradient`), what :func:`flexbody.optimize_inputs` optimises, and the
open-loop input of a run (``simulate(..., tau=inputs.forces(model))``).

An :class:`InputSignal` is u(t) = Σ_j w_j(t) U_j of its values U (m, n_u): piecewise-constant
(:class:`~flexbody.solvers.piecewise_inputs.PiecewiseInputs`, w one-hot) or a spline through values at the knots
(:class:`~flexbody.solvers.spline_inputs.SplineInputs`). Each gives the weights w (``weights``), the Gram matrix
∫ w wᵀ dt of its effort and L² metric (``gram``), and whether it jumps at its knots (``jumps``); τ = Sᵀu with S
(n_u, n) the system's actuation matrix (:class:`InputForces`). The integrators end a step on every interior knot and
take each step's input from the piece holding its start, at every stage (:mod:`flexbody.solvers.input_breaks`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..errors import StateError

__all__ = ["InputForces", "InputSignal"]


@dataclass(frozen=True, init=False)
class InputSignal:
    """Inputs u(t) = Σ_j w_j(t) U_j [N or N·m, per actuator] of ``values`` U (m, n_u) over the increasing ``times``
    (k + 1,) [s]; a subclass fixes m (``rows``), the weights and the Gram matrix."""

    times: np.ndarray
    values: np.ndarray
    jumps = False  # whether u jumps at the interior knots (the integrators restart there)

    def _checked(self, times: ArrayLike, values: ArrayLike, minimum: int = 2) -> None:
        name = type(self).__name__
        t = np.array(times, dtype=float).reshape(-1)
        u = np.array(values, dtype=float)
        if u.ndim == 1:
            u = u[:, None]
        if t.size < minimum or not np.all(np.isfinite(t)) or np.any(np.diff(t) <= 0):
            raise StateError(f"{name}: times must be at least {minimum} increasing finite instants, got {t!r}")
        rows = self.rows(t.size)
        if u.ndim != 2 or u.shape[0] != rows or not np.all(np.isfinite(u)):
            raise StateError(
                f"{name}: values must be ({rows}, n_u) finite numbers ({self.rows_are}), got shape {u.shape}"
            )
        t.flags.writeable = u.flags.writeable = False
        object.__setattr__(self, "times", t)
        object.__setattr__(self, "values", u)

    rows_are = ""  # what a row of values is, for messages

    @staticmethod
    def rows(knots: int) -> int:
        """m, the rows of values over ``knots`` instants."""
        raise NotImplementedError

    @property
    def n_inputs(self) -> int:
        """n_u, the inputs of one row."""
        return self.values.shape[1]

    def interval(self, t: float) -> int:
        """The knot interval k (0 … k − 1) holding the instant t [s] (the later one at a knot); StateError outside
        [t_0, t_k]."""
        tol = 1e-12 * max(1.0, abs(self.times[-1]))
        if t < self.times[0] - tol or t > self.times[-1] + tol:
            raise StateError(
                f"{type(self).__name__}: t = {t:.9g} s is outside the inputs' span "
                f"[{self.times[0]}, {self.times[-1]}] s"
            )
        k = int(np.searchsorted(self.times, t + tol, side="right")) - 1
        return min(max(k, 0), self.times.size - 2)

    def weights(self, t: float, t_start: float) -> tuple[np.ndarray, np.ndarray]:
        """(rows j, weights w_j) of u(t) = Σ w_j U_j at t [s] within a step that starts at ``t_start`` (the piece
        holding t_start, extended to its end)."""
        raise NotImplementedError

    def gram(self, t0: float, t1: float) -> np.ndarray:
        """G (m, m) = ∫_{t0}^{t1} w(t) w(t)ᵀ dt [s]: ∫‖u‖² dt = Σ_c U_cᵀ G U_c over the inputs' columns."""
        raise NotImplementedError

    def value(self, t: float, t_start: float) -> np.ndarray:
        """u (n_u,) at t [s] within a step that starts at ``t_start`` (:meth:`weights`)."""
        rows, w = self.weights(t, t_start)
        return w @ self.values[rows]

    def at(self, t: float) -> np.ndarray:
        """u (n_u,) at the instant t [s] (right-continuous at a jump)."""
        return self.value(t, t)

    def with_values(self, values: ArrayLike) -> InputSignal:
        """The same signal with other ``values`` (m, n_u)."""
        return self.with_times(self.times, values)

    def with_times(self, times: ArrayLike, values: ArrayLike | None = None) -> InputSignal:
        """The signal of the same kind over other knot ``times`` (k + 1,) [s], with its ``values`` (m, n_u) or
        other ones."""
        raise NotImplementedError

    def rescaled(self, t0: float, t1: float) -> InputSignal:
        """The same values over knots moved linearly onto [t0, t1] [s] (each knot at the same fraction of the span)."""
        fraction = (self.times - self.times[0]) / (self.times[-1] - self.times[0])
        return self.with_times(t0 + fraction * (t1 - t0))

    def forces(self, model: Any) -> InputForces:
        """τ(t, q, v) = Sᵀu(t) (n,) of ``model`` (a System, assembled here, or an AssembledSystem; its actuation matrix
        S (n_u, n)), for ``simulate(..., tau=...)``, with the knots the integrators step onto
        (:mod:`flexbody.solvers.input_breaks`); StateError when n_u is not the model's number of actuators."""
        asm = model.assemble() if hasattr(model, "assemble") else model
        S = np.asarray(asm.S, dtype=float)
        if S.shape[0] != self.n_inputs:
            raise StateError(
                f"{type(self).__name__}: {self.n_inputs} inputs per row, the model has {S.shape[0]} actuators"
            )
        return InputForces(self, S)


class InputForces:
    """τ(t, q, v) = Sᵀu(t) (n,) [N, N·m] of an :class:`InputSignal` ``inputs`` through the actuation matrix ``S``
    (n_u, n), with the interior knots as ``breakpoints`` [s] (on which the integrators end their steps, and restart
    where the signal ``jumps``: :mod:`flexbody.solvers.input_breaks`)."""

    def __init__(self, inputs: InputSignal, S: np.ndarray):
        self.inputs, self.S = inputs, S
        self.breakpoints, self.jumps = inputs.times[1:-1], inputs.jumps

    def __call__(self, t: float, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        return self.inputs.at(t) @ self.S

    def in_step(self, t_start: float, t: float) -> np.ndarray:
        """τ (n,) at t [s] within the step that starts at ``t_start``: the piece holding the step's start, also at
        the step's end (the left limit where the end is a jump)."""
        return self.inputs.value(t, t_start) @ self.S
