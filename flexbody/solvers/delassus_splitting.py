"""The contact problem of a step solved with the Delassus matrix of an earlier step, corrected to the current one: a
splitting of W (Cottle, Pang & Stone, *The Linear Complementarity Problem*, 1992, §5.2, there for the LCP; the
Coulomb problem of :mod:`flexbody.solvers.coulomb_problem` in its place).

With W = W_o + E (W_o the Delassus matrix of the step where it was last formed, E its change since), the impulses

    p_{k+1} = Coulomb(W_o, w + E p_k),        E p_k = W p_k − W_o p_k,   W p_k = G A⁻¹ Gᵀ p_k,

reach a fixed point p at which u = W_o p + w + E p = W p + w: the current step's problem, exactly, not an
approximation of it. Each correction costs one solve with the step's factor of A (any ordering: the contacts'
columns need not be eliminated last, which makes that factorisation cost about twice CHOLMOD's own ordering for a
face in contact) and a product with W_o; the iterations contract by about the spectral radius of W_o⁻¹ E, 1e-3 for
a block that has slid 40 steps since W_o was formed (measured, docs/performance.md), so that a handful reach the
solver's tolerance. Where they do not contract — the body's stiffness or its contacts' frames have changed too
much — the caller forms the current W instead (:class:`~flexbody.solvers.contact_step.ContactStepper`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from .coulomb_problem import solve_coulomb_polished

__all__ = ["solve_coulomb_split", "SplitSolution", "MAX_CORRECTIONS", "SLOWEST_CONTRACTION"]

MAX_CORRECTIONS = 12
"""Corrections after which the splitting is given up (the caller forms the current W)."""

SLOWEST_CONTRACTION = 0.5
"""The largest ratio of a correction's impulse change to the one before it that the splitting keeps going with."""


class SplitSolution(NamedTuple):
    """What :func:`solve_coulomb_split` made of a contact problem: its Gauss–Seidel ``sweeps``, its ``corrections``,
    how many of the corrections' problems were solved ``by_the_law`` (impulses that meet it where the sweeps stalled:
    :func:`~flexbody.solvers.coulomb_problem.solve_coulomb_polished`) and the ``largest_residual`` of those."""

    sweeps: int
    corrections: int
    by_the_law: int
    largest_residual: float


def solve_coulomb_split(
    W_old: np.ndarray,
    w: np.ndarray,
    mu: np.ndarray,
    p: np.ndarray,
    times_W: Callable[[np.ndarray], np.ndarray],
    tol: float,
    max_sweeps: int,
) -> SplitSolution | None:
    """The impulses p (3c,) of the contact problem with the current Delassus matrix W (3c, 3c), of which only the
    product ``times_W(p)`` = W p is at hand, from the earlier one ``W_old`` (3c, 3c) (module docstring); w (3c,) the
    free local velocities with the normal bounds, mu (c,). p is the warm start and is overwritten by the impulses.
    Returns a :class:`SplitSolution` when the impulses change by no more than ``tol`` × max ‖p‖∞ in a correction, or
    None where a Gauss–Seidel solve does not converge, the corrections stop contracting (by
    :data:`SLOWEST_CONTRACTION`) or :data:`MAX_CORRECTIONS` do not reach it."""
    sweeps, last_change, by_the_law, largest = 0, np.inf, 0, 0.0
    for correction in range(1, MAX_CORRECTIONS + 1):
        shifted = w + times_W(p) - W_old @ p
        previous = p.copy()
        solution = solve_coulomb_polished(W_old, shifted, mu, p, tol, max_sweeps)
        sweeps += solution.sweeps
        if not solution.solved:
            return None
        if solution.by_the_law:
            by_the_law, largest = by_the_law + 1, max(largest, solution.residual)
        size = np.abs(p).max(initial=0.0)
        moved = np.abs(p - previous).max(initial=0.0)
        if moved <= tol * size or moved == 0.0:
            return SplitSolution(sweeps, correction, by_the_law, largest)
        if moved > SLOWEST_CONTRACTION * last_change:
            return None
        last_change = moved
    return None
