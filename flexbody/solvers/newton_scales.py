"""The units of Newton increments and the tests that use them: every Newton solver stops on increments measured
per coordinate in their own unit and on constraint residuals in theirs, never relative to max(1, ‖q‖∞), which
loosens a test as joint angles wind up or a structure sits far from the origin.

- :func:`increment_scales`: 1 rad for a joint angle or rotation vector, 1 m for a length (prismatic joints, nodal
  positions), and for a reduced body's modal coordinate the amplitude that moves its farthest node by 1 m;
- :func:`increments_converged`: |Δq_i| ≤ tol · scale_i, with a floor of 16 ε |q_i| (the round-off of q_i);
- :func:`rows_converged`: |φ_j| ≤ tol [m or rad], with a floor of 16 ε max|q|.
"""

from __future__ import annotations

import numpy as np

__all__ = ["increment_scales", "increments_converged", "rows_converged"]

ROUND_OFF = 16.0 * np.finfo(float).eps
"""Relative round-off of a coordinate: an increment or a residual below it times the coordinate is converged."""


def increment_scales(model) -> np.ndarray:
    """(n,): the unit each coordinate's Newton increment is measured in (``GeneralizedAlpha.tol``): 1 rad for a
    joint angle or rotation vector, 1 m for a length (prismatic joints, nodal positions), and for a reduced body's
    modal coordinate η_k the amplitude that moves its farthest node by 1 m, 1 / max_a ‖φ_ak‖ (its shapes are
    mass-normalised, φᵀMφ = 1, so one unit of η is a body-dependent length)."""
    scales = np.ones(model.n_dofs)
    for body in model.reduced:
        reach = np.linalg.norm(body.shapes, axis=1).max(axis=0)  # (r,) the farthest node's motion per unit η [m]
        start = model.offsets[body]
        scales[start : start + body.n_dofs] = 1.0 / np.where(reach > 0.0, reach, 1.0)
    return scales


def increments_converged(increment: np.ndarray, q: np.ndarray, tol: float, scales: np.ndarray) -> bool:
    """Whether every |Δq_i| ≤ tol · scales_i + ROUND_OFF · |q_i| (increment, q, scales (n,))."""
    return bool(np.all(np.abs(increment) <= tol * scales + ROUND_OFF * np.abs(q)))


def rows_converged(phi: np.ndarray, q: np.ndarray, tol: float) -> bool:
    """Whether every constraint residual |φ_j| ≤ tol + ROUND_OFF · max|q| (φ in metres or radians)."""
    return not phi.size or bool(float(np.max(np.abs(phi))) <= tol + ROUND_OFF * float(np.max(np.abs(q), initial=0.0)))
