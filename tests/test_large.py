"""Large meshes (slow): assembly and static solve at 1e5 coordinates; run with `make test-slow`."""

import numpy as np
import pytest

import flexbody as fb

pytestmark = pytest.mark.slow


def test_gravity_on_a_large_block_balances_the_weight():
    """40 000 8-node elements (≈ 130 000 coordinates): the reactions at the clamp equal the weight, and the
    tip deflection of the stubby beam is within 1 % of Euler–Bernoulli plus Timoshenko shear."""
    L, a = 2.0, 0.2
    mesh = fb.mesh.box((L, a, a), (100, 20, 20))
    mat = fb.StVenantKirchhoff(young=1.0e9, poisson=0.0, density=1000.0)
    body = fb.FlexibleBody("block", mesh, mat, locking="incompatible_modes")
    system = fb.System([body], [fb.Fix(body, "x0")], [fb.Gravity(body, (0.0, 0.0, -9.81))])
    res = fb.solve_static(system)
    q = res.q[-1]
    support = (body.internal_force(q) - system.external_force(q)).reshape(-1, 3)  # k − f_ext = reaction
    reaction = support[body.nodes("x0")].sum(axis=0)
    weight = 1000.0 * L * a * a * 9.81
    assert reaction == pytest.approx([0.0, 0.0, weight], abs=1e-6 * weight)
    assert np.abs(support[np.setdiff1d(np.arange(body.n_nodes), body.nodes("x0"))]).max() < 1e-6 * weight
    w = 1000.0 * 9.81 * a * a
    EI, GA = 1.0e9 * a**4 / 12, 0.5e9 * a * a * 5 / 6
    expected = w * L**4 / (8 * EI) + w * L**2 / (2 * GA)
    tip = -res.displacements(body)[body.nodes("x1"), 2].mean()
    assert tip == pytest.approx(expected, rel=0.01)
