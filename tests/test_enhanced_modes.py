"""The incompatible modes of the 8-node brick (flexbody.fem.enhanced_modes, flexbody.fem.element_terms): the modes'
block of the local solve, summed pair by pair for St. Venant–Kirchhoff, against the same block of the full element
matrices (formed through the moduli A) and against central differences of r_α; the converged modes' residual."""

from __future__ import annotations

import numpy as np
import pytest

import flexbody as fb
from flexbody.fem.element_terms import element_matrices, force_and_mode_block
from flexbody.fem.enhanced_modes import solve_enhanced_modes

MATERIALS = {
    "svk": fb.StVenantKirchhoff(young=2e8, poisson=0.3, density=7800.0),
    "svk_damped": fb.StVenantKirchhoff(young=2e8, poisson=0.3, density=7800.0, damping=0.01),
    "neo_hookean": fb.NeoHookean(young=2e8, poisson=0.3, density=7800.0),
}


def _element(material, seed=3):
    """(xe (11, 3) with random modes, ve (8, 3), gradients, weights, material arguments, element size) of one
    element of a bent and twisted 4 × 4 × 2 plate."""
    mesh = fb.mesh.box((0.3, 0.3, 0.01), (4, 4, 2), order=1)
    body = fb.FlexibleBody("plate", mesh, material, locking="incompatible_modes")
    x = mesh.points.copy()
    x[:, 2] += 0.3 * x[:, 0] ** 2 + 0.2 * x[:, 0] * x[:, 1]
    rng = np.random.default_rng(seed)
    e = 5
    xe = np.concatenate([x[body._cells[e]], 1e-3 * rng.standard_normal((3, 3))])
    ve = 0.05 * rng.standard_normal((8, 3))
    return xe, ve, body._G[e], body._wdv[e], body._material_args(), body._h_elem[e]


@pytest.mark.parametrize("name", list(MATERIALS))
def test_mode_block_is_that_of_the_element_matrices(name):
    xe, ve, Ge, we, args, _ = _element(MATERIALS[name])
    fe, Kaa = np.empty((11, 3)), np.empty((9, 9))
    force_and_mode_block(xe, ve, Ge, we, *args, fe, Kaa, None)
    full_f, Ke, Ce = np.empty((11, 3)), np.empty((11, 11, 3, 3)), np.empty((11, 8, 3, 3))
    element_matrices(xe, ve, Ge, we, *args, False, full_f, Ke, Ce, None)
    block = Ke[8:, 8:].transpose(0, 2, 1, 3).reshape(9, 9)
    np.testing.assert_allclose(Kaa, block, rtol=0, atol=1e-12 * np.abs(block).max())
    np.testing.assert_allclose(fe, full_f, rtol=0, atol=1e-12 * np.abs(full_f).max())


@pytest.mark.parametrize("name", ["svk", "svk_damped"])
def test_mode_block_is_the_derivative_of_the_modes_residual(name):
    """Kaa = ∂r_α/∂α by central differences of r_α (rows 8.. of the force), step 1e-7 of the element's size."""
    xe, ve, Ge, we, args, h = _element(MATERIALS[name])
    fe, Kaa = np.empty((11, 3)), np.empty((9, 9))
    force_and_mode_block(xe, ve, Ge, we, *args, fe, Kaa, None)
    differences = np.empty((9, 9))
    step = 1e-7 * h
    for c in range(9):
        rows = []
        for sign in (1.0, -1.0):
            moved = xe.copy()
            moved[8 + c // 3, c % 3] += sign * step
            force_and_mode_block(moved, ve, Ge, we, *args, fe, np.empty((9, 9)), None)
            rows.append(fe[8:].ravel().copy())
        differences[:, c] = (rows[0] - rows[1]) / (2 * step)
    np.testing.assert_allclose(Kaa, differences, rtol=0, atol=1e-6 * np.abs(Kaa).max())


@pytest.mark.parametrize("matrices", [False, True], ids=["force", "matrices"])
def test_converged_modes_have_no_residual(matrices):
    """From α = 0 the solve converges in a few iterations to r_α ≈ 0 (1e-9 of the nodal forces), and the force it
    returns is that of the α it returns, whether the full matrices are formed there or not."""
    xe, ve, Ge, we, args, h = _element(MATERIALS["svk_damped"])
    xe[8:] = 0.0
    fe, Ke, Ce = np.empty((11, 3)), np.empty((11, 11, 3, 3)), np.empty((11, 8, 3, 3))
    iterations = solve_enhanced_modes(xe, ve, Ge, we, *args, matrices, matrices, h, fe, Ke, Ce, None)
    assert 1 <= iterations <= 6
    assert np.abs(fe[8:]).max() <= 1e-9 * np.abs(fe[:8]).max()
    again = np.empty((11, 3))
    force_and_mode_block(xe, ve, Ge, we, *args, again, np.empty((9, 9)), None)
    np.testing.assert_allclose(fe, again, rtol=0, atol=1e-12 * np.abs(again).max())
