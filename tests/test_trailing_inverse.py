"""linalg.trailing_inverse: the block of A⁻¹ on chosen coordinates from one factorisation with them last, against
dense inverses; and the nonsmooth step that uses it against the step that solves for every contact column."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import flexbody as fb
from flexbody.linalg.sparse_factor import HAVE_CHOLMOD
from flexbody.linalg.trailing_inverse import TrailingInverse
from flexbody.solvers import contact_step, delassus_splitting

pytestmark = pytest.mark.skipif(not HAVE_CHOLMOD, reason="needs CHOLMOD (scikit-sparse)")


def test_the_trailing_block_is_that_of_the_inverse_and_solves_are_exact():
    """A random sparse SPD matrix (300 × 300): the block on 40 scattered coordinates equals numpy's inverse's to
    1e-12 relative, and solves for one and for many right sides equal numpy's."""
    rng = np.random.default_rng(7)
    B = sp.random(300, 300, density=0.02, random_state=rng)
    A = (B @ B.T + 300 * sp.identity(300)).tocsc()
    last = np.sort(rng.choice(300, 40, replace=False))
    trailing = TrailingInverse(last).factor(A)
    inverse = np.linalg.inv(A.toarray())
    np.testing.assert_allclose(trailing.block(), inverse[np.ix_(last, last)], rtol=1e-12, atol=1e-15)
    b = rng.normal(size=(300, 3))
    np.testing.assert_allclose(trailing.solve(b), inverse @ b, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(trailing.solve(b[:, 0]), inverse @ b[:, 0], rtol=1e-10, atol=1e-14)
    A2 = (A + sp.identity(300)).tocsc()  # a second matrix on the same pattern: the analysis is kept
    np.testing.assert_allclose(
        trailing.factor(A2).block(), np.linalg.inv(A2.toarray())[np.ix_(last, last)], rtol=1e-12, atol=1e-15
    )


def _sliding_block():
    """A soft block (4 × 2 × 2 bricks) sliding at 0.5 m/s on its 15 bottom-node contacts with friction."""
    mesh = fb.mesh.box((0.2, 0.1, 0.1), (4, 2, 2))
    body = fb.FlexibleBody("block", mesh, fb.StVenantKirchhoff(young=1e5, poisson=0.3, density=1000.0))
    contacts = fb.node_contacts(body, fb.Plane((0.0, 0.0, 1.0)), "z0", friction=0.3)
    system = fb.System([body], loads=[fb.Gravity(body)], constraints=contacts)
    v0 = np.tile([0.5, 0.0, 0.0], body.n_nodes)
    return fb.simulate(system, 0.05, integrator=fb.MoreauJean(dt=1e-3), v0=v0)


def test_the_step_with_the_trailing_block_is_the_step_that_solves_every_contact_column(monkeypatch):
    """The same sliding block stepped three ways — the trailing block of A⁻¹ formed once and corrected to each
    step's A (delassus_splitting), formed at every step, and A solved for every contact column: positions to 1e-12 m
    and contact forces to 1e-9 N alike."""
    lagged = _sliding_block()
    statistics = lagged.metadata["statistics"]
    assert statistics["contact_matrix_refreshes"] < lagged.n_steps // 4 < statistics["contact_corrections"]
    monkeypatch.setattr(delassus_splitting, "MAX_CORRECTIONS", 0)  # the splitting gives up at once
    every_step = _sliding_block()
    assert every_step.metadata["statistics"]["contact_matrix_refreshes"] >= every_step.n_steps
    monkeypatch.setattr(contact_step, "_trailing", lambda asm, contacts: None)
    solved = _sliding_block()
    assert lagged.histories["contact_normal_force"].max() > 0.0
    for run in (lagged, every_step):
        np.testing.assert_allclose(run.q, solved.q, atol=1e-12)
        np.testing.assert_allclose(
            run.histories["contact_normal_force"], solved.histories["contact_normal_force"], atol=1e-9
        )
