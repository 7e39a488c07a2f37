"""Gauss rules of FlexibleBody per element axis (``quadrature=(n_ξ, n_η, n_ζ)``): rules that leave hourglass
modes are refused, the reduced axial rule (2, 3, 3) of 27-node bricks passes the patch test on distorted
elements, and the mass matrix keeps its exact rule."""

import re

import numpy as np
import pytest

import flexbody as fb
from flexbody.errors import ElementError, FlexbodyError
from flexbody.fem.elements import spurious_modes

MATERIAL = fb.StVenantKirchhoff(young=1e6, poisson=0.3, density=1e3)


def _sheared(order: int) -> fb.HexMesh:
    """A box mapped by a shear and stretch: parallelepiped elements, none of them rectangular."""
    box = fb.mesh.box((1.0, 0.5, 0.4), (3, 2, 2), order=order)
    return box.with_points(box.points @ np.array([[1.0, 0.3, -0.2], [0.1, 0.9, 0.25], [0.0, -0.15, 1.1]]).T)


@pytest.mark.parametrize(
    "cells, rule, modes", [(27, (2, 2, 2), 27), (27, (2, 2, 3), 12), (8, (1, 1, 1), 12), (8, (1, 2, 2), 1)]
)
def test_rules_with_hourglass_modes_are_refused(cells, rule, modes):
    assert spurious_modes(cells, rule) == modes
    mesh = fb.mesh.box((1, 1, 1), (1, 1, 1), order=1 if cells == 8 else 2)
    with pytest.raises(ElementError, match=re.escape(f"quadrature {rule} leaves {modes} zero-energy")):
        fb.FlexibleBody("b", mesh, MATERIAL, quadrature=rule)
    for bad in ((2, 3), (2, 3, 0), (2.0, 3, 3), "3", True):
        with pytest.raises(FlexbodyError, match="quadrature must be a positive integer or three"):
            fb.FlexibleBody("b", mesh, MATERIAL, quadrature=bad)


@pytest.mark.parametrize("rule", [(2, 3, 3), (3, 2, 3), (3, 3, 2)])
def test_reduced_axial_rule_passes_the_patch_test(rule):
    """A homogeneous deformation x = A X of parallelepiped 27-node elements: every interior node's force
    vanishes and the boundary forces are the full rule's (the uniform stress), whatever the axis reduced."""
    mesh = _sheared(2)
    reduced, full = fb.FlexibleBody("r", mesh, MATERIAL, quadrature=rule), fb.FlexibleBody("f", mesh, MATERIAL)
    A = np.array([[1.02, 0.01, -0.02], [0.0, 0.99, 0.015], [0.01, -0.01, 1.01]])
    q = (mesh.points @ A.T).ravel()
    f = reduced.internal_force(q).reshape(-1, 3)
    box = fb.mesh.box((1.0, 0.5, 0.4), (3, 2, 2), order=2).points  # the points before the map
    interior = np.all((box > 1e-9) & (box < box.max(axis=0) - 1e-9), axis=1)
    scale = np.abs(f).max()
    assert np.abs(f[interior]).max() <= 1e-10 * scale
    assert np.abs(f - full.internal_force(q).reshape(-1, 3)).max() <= 1e-10 * scale
    assert reduced.quadrature == rule


def test_mass_matrix_keeps_its_exact_rule():
    box = fb.mesh.box((1.0, 0.5, 0.4), (3, 2, 2), order=2)
    X = box.points.copy()
    X[:, 1] += 0.05 * np.sin(3 * X[:, 0]) * X[:, 2]  # curved elements
    mesh = box.with_points(X)
    reduced, full = fb.FlexibleBody("r", mesh, MATERIAL, quadrature=(2, 3, 3)), fb.FlexibleBody("f", mesh, MATERIAL)
    assert abs(reduced.mass_matrix() - full.mass_matrix()).max() <= 1e-12 * full.mass_matrix().max()
    assert reduced.volume() == pytest.approx(full.volume(), rel=1e-14)
