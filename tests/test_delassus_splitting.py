"""solvers.delassus_splitting: the contact problem solved on an earlier Delassus matrix corrected to the current one
has the impulses of the problem solved on the current matrix itself, and gives up where the correction cannot
contract."""

from __future__ import annotations

import numpy as np

from flexbody.solvers.coulomb_problem import solve_coulomb_polished
from flexbody.solvers.delassus_splitting import solve_coulomb_split


def _problem(seed: int, contacts: int = 12):
    """A Delassus matrix W (3c, 3c) of a random full-rank G and SPD A, free velocities w pressing some contacts in
    and separating others, friction coefficients."""
    rng = np.random.default_rng(seed)
    n = 3 * contacts + 10
    B = rng.normal(size=(n, n))
    A = B @ B.T + n * np.eye(n)
    G = rng.normal(size=(3 * contacts, n))
    W = G @ np.linalg.solve(A, G.T)
    w = rng.normal(size=3 * contacts)
    w[0::3] -= 0.5  # most contacts closing
    return W, w, rng.uniform(0.1, 0.8, contacts), rng


def test_the_split_solves_the_current_problem_from_an_earlier_matrix():
    """W_o = W + a symmetric change of 1e-3 of W's size: the split's impulses equal the direct solve's on W to
    1e-10 of their size, some contacts open, some sliding, in a few corrections."""
    W, w, mu, rng = _problem(3)
    E = rng.normal(size=W.shape)
    W_old = W + 1e-3 * np.linalg.norm(W, 2) * (E + E.T) / np.linalg.norm(E + E.T, 2)
    direct = np.zeros(w.size)
    solution = solve_coulomb_polished(W, w, mu, direct, 1e-13, 20000)
    assert solution.change <= 1e-13
    split = np.zeros(w.size)
    taken = solve_coulomb_split(W_old, w, mu, split, lambda p: W @ p, 1e-13, 20000)
    assert taken is not None and 2 <= taken[1] <= 8
    np.testing.assert_allclose(split, direct, atol=1e-10 * np.abs(direct).max())
    normal, tangent = direct[0::3], np.hypot(direct[1::3], direct[2::3])
    assert (normal == 0.0).any() and (normal > 0.0).any()  # some open, some pressed
    assert np.isclose(tangent, mu * normal, rtol=1e-9)[normal > 0.0].any()  # some sliding on the cone


def test_the_split_gives_up_where_the_earlier_matrix_is_far_from_the_current_one():
    """W_o = W / 4: the corrections grow (the spectral radius of W_o⁻¹(W − W_o) is 3), so it returns None."""
    W, w, mu, _ = _problem(5)
    p = np.zeros(w.size)
    assert solve_coulomb_split(W / 4.0, w, mu, p, lambda x: W @ x, 1e-12, 20000) is None


def test_the_split_counts_the_problems_it_solved_by_the_law(monkeypatch):
    """Where a correction's problem is solved by impulses that meet the law (the sweeps stalled), the split counts
    it and gives its residual, for the run's statistics (they were not counted on this route before): a problem
    whose polished solve is made to report so. On a recorded stalled problem (a box coming to rest on three corners
    at different heights, tests/data) the split gives up instead — each solve from the last moves the non-unique
    impulses by about 2e-8 of 3e-2 (measured), not contracting — and the step solves it directly, counted there."""
    from pathlib import Path

    from flexbody.solvers import delassus_splitting
    from flexbody.solvers.coulomb_problem import CoulombSolution

    data = np.load(Path(__file__).parent / "data" / "box_landing_stalled_inconsistent.npz")
    W, w, mu = data["W"], data["w"], data["mu"]
    assert solve_coulomb_split(W, w, mu, data["p"].copy(), lambda x: W @ x, 1e-12, 5000) is None

    W, w, mu, _ = _problem(3)
    real = delassus_splitting.solve_coulomb_polished

    def stalled_by_the_law(*args):
        solution = real(*args)
        return CoulombSolution(solution.sweeps, 1.0, 3e-10, True, True)

    monkeypatch.setattr(delassus_splitting, "solve_coulomb_polished", stalled_by_the_law)
    taken = solve_coulomb_split(W, w, mu, np.zeros(w.size), lambda x: W @ x, 1e-13, 20000)
    assert taken is not None and taken.by_the_law == taken.corrections and taken.largest_residual == 3e-10
