"""Spline actuator inputs (:class:`SplineInputs`, an :class:`~flexbody.solvers.input_signals.InputSignal`): u(t) the
interpolating spline of degree 1 (first-order hold) or 3 (cubic, not-a-knot ends) through the values U_j (n_u,) at
the knots t_j, so u(t) = Σ_j φ_j(t) U_j with φ_j the spline through the j-th unit vector (scipy's
``make_interp_spline``).

u is continuous (and C² for the cubic), so the integrators end their steps on the knots, where the pieces join, but
restart nothing; the effort ∫‖u‖² dt = Σ_c U_cᵀ G U_c with the Gram matrix G = ∫ φ φᵀ dt by Gauss–Legendre rules
exact for its polynomial pieces.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy.interpolate import make_interp_spline

from ..errors import StateError
from .input_signals import InputSignal

__all__ = ["SplineInputs"]

DEGREES = (1, 3)


@dataclass(frozen=True, init=False)
class SplineInputs(InputSignal):
    """Inputs through the ``values`` (k + 1, n_u) [N or N·m, per actuator] at the knots ``times`` (k + 1,) [s],
    increasing, interpolated by a spline of ``degree`` 1 (piecewise linear) or 3 (cubic, not-a-knot ends; at least
    four knots).

    Examples
    --------
    >>> u = SplineInputs(np.linspace(0.0, 1.0, 21), np.zeros((21, 2)))  # cubic through 21 knots, two actuators
    """

    degree: int = 3
    _basis: Any = field(init=False, repr=False, compare=False)  # scipy's BSpline of the φ_j
    rows_are = "one row per knot"

    def __init__(self, times: ArrayLike, values: ArrayLike, degree: int = 3):
        if degree not in DEGREES:
            raise StateError(f"SplineInputs: degree must be one of {DEGREES}, got {degree!r}")
        object.__setattr__(self, "degree", int(degree))
        self._checked(times, values, minimum=degree + 1)
        basis = make_interp_spline(self.times, np.eye(self.times.size), k=self.degree)
        object.__setattr__(self, "_basis", basis)

    @staticmethod
    def rows(knots: int) -> int:
        return knots

    def weights(self, t: float, t_start: float) -> tuple[np.ndarray, np.ndarray]:
        """φ(t) (k + 1,) at every knot's row (u is continuous: the step's start does not matter)."""
        self.interval(t)  # within the span
        at = min(max(float(t), self.times[0]), self.times[-1])
        return np.arange(self.times.size), np.asarray(self._basis(at), dtype=float)

    def gram(self, t0: float, t1: float) -> np.ndarray:
        """∫_{t0}^{t1} φ φᵀ dt (k + 1, k + 1) [s], by degree + 1 Gauss–Legendre points on each knot interval within
        [t0, t1] (exact: φ_i φ_j is a polynomial of degree 2·degree there)."""
        x, w = np.polynomial.legendre.leggauss(self.degree + 1)
        t = self.times
        a, b = np.maximum(t[:-1], t0), np.minimum(t[1:], t1)
        keep = b > a
        a, b = a[keep], b[keep]
        points = (0.5 * (b - a)[:, None] * x + 0.5 * (a + b)[:, None]).ravel()
        weights = (0.5 * (b - a)[:, None] * w).ravel()
        phi = np.asarray(self._basis(points), dtype=float)
        return phi.T @ (weights[:, None] * phi)

    def with_times(self, times: ArrayLike, values: ArrayLike | None = None) -> SplineInputs:
        return SplineInputs(times, self.values if values is None else values, self.degree)
