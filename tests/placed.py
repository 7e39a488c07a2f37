"""Placing a shape at a chosen distance from a surface, which the tests of the shapes' contacts against coal share."""

from collections.abc import Callable

import numpy as np


def centre_at_distance(
    distance: Callable[[np.ndarray], float], origin: np.ndarray, direction: np.ndarray, target: float
) -> np.ndarray:
    """The centre (3,) [m] origin + s direction, s ∈ [0, 2] m bisected 60 times, at which ``distance(centre)`` (growing
    with s) reaches ``target`` [m]: the least s found with distance ≥ target."""
    low, high = 0.0, 2.0
    for _ in range(60):
        middle = 0.5 * (low + high)
        low, high = (middle, high) if distance(origin + middle * direction) < target else (low, middle)
    return origin + high * direction
