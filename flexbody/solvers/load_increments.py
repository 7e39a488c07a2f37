"""The load-factor increments of a static solve that follows its load path from s = 0 to 1.

Both static solvers (flexible-only: :mod:`flexbody.solvers.flexible_statics`; constrained:
:mod:`flexbody.solvers.constrained_statics`) step the load factor s with :class:`LoadIncrements`: the first
increment is 1/load_steps; a step whose Newton iterations fail is retried with half the increment, at most
``max_bisections`` halvings below the first increment; after ``grow_after`` consecutive easy steps (converged
within ``easy_iterations`` iterations) a halved increment is doubled back, never above the first one. So a
hard stretch of the path (a limit point ahead, a stiffening) costs small steps only while it lasts.
"""

from __future__ import annotations

import logging

log = logging.getLogger(__name__)

GROW_AFTER = 2
"""Consecutive easy steps after which a halved increment is doubled back."""

EASY_ITERATIONS = 6
"""Newton iterations within which a converged step counts as easy."""


class LoadIncrements:
    """Increments of the load factor: :meth:`target` the next factor from the converged one, :meth:`failed` after
    a failed step (False when no halving is left), :meth:`converged` after a converged one.

    Attributes: ``size`` the current increment, ``halvings`` below the first one, ``bisections`` in all."""

    def __init__(
        self,
        load_steps: int,
        max_bisections: int,
        *,
        grow_after: int = GROW_AFTER,
        easy_iterations: int = EASY_ITERATIONS,
    ):
        self.first = self.size = 1.0 / int(load_steps)
        self.max_bisections, self.grow_after, self.easy_iterations = int(max_bisections), grow_after, easy_iterations
        self.halvings = self.bisections = self.easy = 0

    def target(self, s_done: float) -> float:
        return min(1.0, s_done + self.size)

    def failed(self, s_done: float) -> bool:
        """Halve the increment after a step from ``s_done`` failed; False when it was halved ``max_bisections``
        times already."""
        if self.halvings >= self.max_bisections:
            return False
        self.size, self.halvings, self.bisections, self.easy = (
            0.5 * self.size,
            self.halvings + 1,
            self.bisections + 1,
            0,
        )
        log.info("load increment halved to %.3g at load factor %.6g", self.size, s_done)
        return True

    def converged(self, iterations: int) -> None:
        """Count an easy step; double a halved increment back after ``grow_after`` of them."""
        self.easy = self.easy + 1 if iterations <= self.easy_iterations else 0
        if self.easy >= self.grow_after and self.halvings:
            self.size, self.halvings, self.easy = 2.0 * self.size, self.halvings - 1, 0
