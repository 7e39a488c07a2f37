"""The four constrained forms on large rigid–flexible systems (sparse Φ beyond the dense limit) work on the
stored columns of Φ only; they must give the same a, Φᵀλ and λ as the dense-Φ route on the same model.
The size switch is lowered here so a 353-coordinate model takes the large-system route."""

import numpy as np
import pytest

from flexbody.dynamics import METHODS
from flexbody.dynamics import forward_dynamics as dynamics
from flexbody.mechanisms.flexible import arm_with_beam
from flexbody.system.assembled import State


@pytest.fixture(scope="module")
def arm():
    asm = arm_with_beam(divisions=(12, 2, 2), q0=(0.3, -0.5), young=7e7).assemble()
    q, v = asm.q0.copy(), np.zeros(asm.n_dofs)
    v[:2] = (0.3, -0.2)
    tau = np.zeros(asm.n_dofs)
    tau[:2] = (3.0, -1.0)
    return asm, State(0.0, q, v), tau


@pytest.mark.parametrize("method", METHODS)
def test_forms_on_stored_columns_equal_the_dense_route(arm, method, monkeypatch):
    asm, state, tau = arm
    reference = dynamics.forward(asm, state, tau, method="multiplier")
    monkeypatch.setattr(dynamics, "DENSE_LIMIT", 100)
    calls = []
    route = dynamics._forward_on_stored_columns
    monkeypatch.setattr(dynamics, "_forward_on_stored_columns", lambda *a: calls.append(1) or route(*a))
    result = dynamics.forward(asm, state, tau, method=method)
    assert calls == [1]
    if method != "nullspace":  # the (M⁻¹)_cc block is formed once, then reused
        assert asm.flexible.mass.inverse_solves <= len(np.unique(asm.terms(0.0, state.q, state.v).Phi.indices))
    scale = np.abs(reference.a).max()
    np.testing.assert_allclose(result.a, reference.a, atol=1e-12 * scale)
    np.testing.assert_allclose(
        result.constraint_force, reference.constraint_force, atol=1e-11 * np.abs(reference.constraint_force).max()
    )
    np.testing.assert_allclose(result.lam, reference.lam, atol=1e-11 * np.abs(reference.lam).max())
    t = asm.terms(0.0, state.q, state.v)
    assert np.abs(t.Phi @ result.a + t.bias).max() <= 1e-11
    assert asm.flexible.mass.factorizations == 1
