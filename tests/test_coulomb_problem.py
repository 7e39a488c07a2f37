"""The contact problem of a nonsmooth step (flexbody.solvers.coulomb_problem) where Gauss–Seidel stalls: two problems
recorded from a 0.2 m box tumbling onto the floor (μ = 0.5, e = 0.3; tests/data), the law's residual on problems
whose solutions are known, and the cone programs (flexbody.solvers.coulomb_cone_program) against the law.

The oracle is the Signorini–Coulomb law itself (its conditions checked contact by contact), and for the velocities,
which are unique where the impulses are not (a rigid body on redundant corners), Clarabel's solution of the cone
programs of Acary, Cadoux, Lemaréchal & Malick (2011) — an interior-point library we did not write.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from flexbody.solvers.coulomb_cone_program import solve_coulomb_cones
from flexbody.solvers.coulomb_problem import (
    APART,
    LAW_TOL,
    STICK,
    law_residual,
    meets_the_law,
    polished,
    solve_coulomb,
    solve_coulomb_polished,
)

DATA = Path(__file__).parent / "data"


def _recorded(name: str):
    data = np.load(DATA / f"{name}.npz")
    return data["W"], data["w"], data["mu"], data["p"]


def _velocities(W, w, p) -> np.ndarray:
    return W @ p + w


def test_where_sweeps_stall_on_four_sliding_corners_the_candidates_give_exact_impulses():
    """Four corners sliding as the box lands (W of rank 6 for 12 rows): 5 000 sweeps change the impulses by 4.6e-5 a
    sweep; the cone program's states, its sliding directions solved by Newton's method, give impulses that meet the law
    to round-off (2.2e-16; asserted 1e-12) and that one more sweep confirms, with the velocities of Clarabel's cone
    programs (3.2e-8 of the free velocities, its interior-point accuracy; asserted 1e-7)."""
    W, w, mu, warm = _recorded("box_landing_stalled_exact")
    stalled = warm.copy()
    assert solve_coulomb(W, w, mu, stalled, 1e-12, 5000)[1] > 1e-6
    p = warm.copy()
    solution = solve_coulomb_polished(W, w, mu, p, 1e-12, 5000)
    assert solution.solved and solution.change <= 1e-12 and solution.residual == 0.0
    assert law_residual(W, w, mu, p) <= 1e-12
    cones = solve_coulomb_cones(W, w, mu)
    assert cones is not None
    size = np.abs(w).max()
    assert np.abs(_velocities(W, w, p) - _velocities(W, w, cones)).max() <= 1e-7 * size


def test_where_no_velocity_meets_the_bounds_the_impulses_nearest_the_law_are_taken_and_reported():
    """The box coming to rest on three corners at different heights, the fourth leaving: their bounds (the gaps'
    rates) are not those of one rigid velocity, so that sticking at all three misses the law (by 1.1e-10 of the
    velocities) and sweeps stall (2.5e-6 a sweep). The impulses taken meet the law to LAW_TOL (1.1e-10 measured),
    the residual is reported with them, and the velocities are Clarabel's (1.1e-10; asserted 1e-9)."""
    W, w, mu, warm = _recorded("box_landing_stalled_inconsistent")
    p = warm.copy()
    solution = solve_coulomb_polished(W, w, mu, p, 1e-12, 5000)
    assert solution.change > 1e-12 and 0.0 < solution.residual <= LAW_TOL and solution.solved
    assert law_residual(W, w, mu, p) == solution.residual
    states = np.where(p[0::3] > 0.0, STICK, APART)
    assert np.count_nonzero(states == STICK) == 3
    assert law_residual(W, w, mu, polished(W, w, mu, p, states)) > 5e-11  # sticking cannot meet it
    cones = solve_coulomb_cones(W, w, mu)
    assert cones is not None
    assert np.abs(_velocities(W, w, p) - _velocities(W, w, cones)).max() <= 1e-9 * np.abs(w).max()


def test_a_box_striking_flat_on_four_corners_with_friction_and_restitution_is_solved_exactly():
    """A box striking the floor flat on four corners (μ = 0.8, e = 0.6; recorded, tests/data, from one of 24 probed
    drops, which stopped with a ConvergenceError): sticking at two corners and sliding at two over-determines a rigid
    body's velocity, and those states miss the law by 1.12e-9 of the velocities (a slip of 2.5e-10 m/s at a sticking
    corner). Its exact impulses let one of those corners slide at 5.6e-10 m/s, the friction redistributed; Newton's
    method on the sliding directions stops short of them (the slow slip leaves its residual a slope of that size) and
    Levenberg–Marquardt (scipy) finds them. The impulses meet the law to round-off (0 measured, asserted 1e-12), the
    sweeps confirm them, and the velocities are Clarabel's cone programs' to their accuracy (asserted 1e-8 of the free
    velocities)."""
    W, w, mu, warm = _recorded("box_landing_stalled_degenerate")
    p = warm.copy()
    solution = solve_coulomb_polished(W, w, mu, p, 1e-12, 5000)
    assert solution.solved and solution.change <= 1e-12 and law_residual(W, w, mu, p) <= 1e-12
    U = _velocities(W, w, p).reshape(-1, 3)
    slips = np.sort(np.hypot(U[:, 1], U[:, 2]))
    assert slips[1] < 1e-9 < 1e-7 < slips[2]  # one corner sticks, one slides that slowly, two slide
    cones = solve_coulomb_cones(W, w, mu)
    assert cones is not None
    assert np.abs(_velocities(W, w, p) - _velocities(W, w, cones)).max() <= 1e-8 * np.abs(w).max()


@pytest.mark.parametrize(
    ("w", "p", "expected"),
    [
        ((-1.0, 0.1, 0.0), (1.0, -0.1, 0.0), 0.0),  # sticking: u = 0, the friction inside the cone
        ((-1.0, 2.0, 0.0), (1.0, -0.5, 0.0), 0.0),  # sliding at 1.5 m/s, the friction μ p_n against the slip
        ((-1.0, 2.0, 0.0), (1.0, 0.5, 0.0), 1.25),  # the friction along the slip of 2.5 (of max |w| = 2)
        ((-1.0, 2.0, 0.0), (0.0, 0.0, 0.0), 0.5),  # apart, penetrating at 1 m/s (of 2)
        ((-1.0, 0.6, 0.0), (1.0, -0.6, 0.0), 0.1),  # sticking, the friction 0.6 beyond the cone's 0.5 (of max |p| = 1)
    ],
)
def test_the_law_residual_measures_what_the_law_misses(w, p, expected):
    """One contact with W = I, μ = 0.5 (u = p + w): exact impulses have no residual; the others miss the law by
    what the module docstring says, in units of max |p| and max |w|."""
    W, mu = np.eye(3), np.array([0.5])
    residual = law_residual(W, np.array(w), mu, np.array(p))
    if expected == 0.0:
        assert residual <= 1e-16 and meets_the_law(W, np.array(w), mu, np.array(p))
    else:
        assert residual == pytest.approx(expected, rel=1e-12)


def test_the_cone_programs_give_the_velocities_of_converged_sweeps_on_random_problems():
    """Eight random positive definite Delassus matrices of 6 contacts, μ ∈ [0.1, 1], where Gauss–Seidel converges
    (1e-13): where the cone programs' shift settles (6 of 8 measured; the fixed point need not converge with fast
    slips, and then None is returned, asserted in at least 4), their velocities are the sweeps' to their
    interior-point accuracy (at most 1.1e-7 of the free velocities measured; asserted 1e-6)."""
    rng = np.random.default_rng(3)
    settled = 0
    for _ in range(8):
        B = rng.normal(size=(18, 18))
        W = B @ B.T / 18 + 1e-3 * np.eye(18)
        w = rng.normal(size=18)
        w[0::3] -= 0.5
        mu = rng.uniform(0.1, 1.0, size=6)
        swept = np.zeros(18)
        assert solve_coulomb(W, w, mu, swept, 1e-13, 20000)[1] <= 1e-13
        cones = solve_coulomb_cones(W, w, mu)
        if cones is not None:
            settled += 1
            assert np.abs(_velocities(W, w, cones) - _velocities(W, w, swept)).max() <= 1e-6 * np.abs(w).max()
    assert settled >= 4
