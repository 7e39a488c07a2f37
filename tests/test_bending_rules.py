"""The default Gauss rule, chosen against thin-bending locking (flexbody.fem.bending_rules), and the warning a rule
or formulation that locks in the mesh at hand gets: a 27-node brick mesh integrated with three points along every
slender axis, plain 8-node bricks on slender elements."""

import logging

import numpy as np
import pytest
import scipy.sparse.linalg as sla
from scipy.optimize import brentq
from scipy.special import ellipe, ellipk

import flexbody as fb

STEEL = fb.StVenantKirchhoff(young=2.1e11, poisson=0.3, density=7850.0)
#: λ_k = ω_k a² √(ρh/D) of the thin (Kirchhoff) square cantilever plate, ν = 0.3: scikit-fem 12.0.2's Argyris
#: and Morley triangles refined to h = a/128 and a/256, Richardson-extrapolated, agreeing to 1.5e-5
#: (docs/verification.md, "Thin bending"). Leissa's (1969) 3.494, 8.547, 21.44, 27.46, 31.17 are 0.5–0.9 % high.
KIRCHHOFF_PLATE = np.array([3.4710, 8.5062, 21.284, 27.199, 30.954])


def _body(size, divisions, order=2, **options):
    return fb.FlexibleBody("b", fb.mesh.box(size, divisions, order=order), STEEL, **options)


def _recommended(body):
    from flexbody.fem import bending_rules

    shape = bending_rules.mesh_shape(body.element, body.mesh.points[body.mesh.cells])
    return bending_rules.recommended_rule(body.element, shape)


@pytest.mark.parametrize(
    "size, divisions, rule",
    [
        ((1.0, 0.01, 0.01), (10, 1, 1), (2, 3, 3)),  # a bar along x
        ((0.01, 1.0, 0.01), (1, 10, 1), (3, 2, 3)),  # along y
        ((0.01, 0.01, 1.0), (1, 1, 10), (3, 3, 2)),  # along z
        ((1.0, 1.0, 1.0), (3, 3, 3), (3, 3, 3)),  # compact elements
        ((1.0, 0.1, 0.01), (10, 1, 1), (2, 3, 3)),  # a strip of square plate elements: reduced along the strip
        ((0.1, 1.0, 0.01), (1, 10, 1), (3, 2, 3)),
        ((1.0, 1.0, 0.01), (8, 8, 1), (2, 3, 3)),  # a square plate: ξ on the tie
    ],
)
def test_recommended_rule_reduces_the_axis_the_body_bends_along(size, divisions, rule):
    body = _body(size, divisions)
    assert _recommended(body) == body.quadrature == rule  # the default


def test_rules_that_lock_are_warned_against_and_name_the_remedy(caplog):
    with caplog.at_level(logging.WARNING, logger="flexbody"):
        _body((1.0, 0.01, 0.01), (10, 1, 1), quadrature=3)  # 3 × 3 × 3 on 10:1 elements
    assert "integrates the slender axis ξ of its elements (up to 10:1)" in caplog.text
    assert "use quadrature=(2, 3, 3) for this mesh" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="flexbody"):
        assert _body((1.0, 0.01, 0.01), (10, 1, 1)).quadrature == (2, 3, 3)  # the default
        _body((1.0, 1.0, 0.01), (8, 8, 1), quadrature=(3, 2, 3))  # a plate reduced along either in-plane axis
        _body((1.0, 1.0, 1.0), (3, 3, 3))  # compact: the full rule is right
        assert _body((1.0, 0.01, 0.01), (40, 1, 1), order=1).locking == "incompatible_modes"  # the 8-node default
        assert _body((1.0, 0.01, 0.01), (10, 1, 1)).locking is None  # 27-node: no locking remedy needed
    assert caplog.text == ""
    with caplog.at_level(logging.WARNING, logger="flexbody"):
        _body((1.0, 0.01, 0.01), (40, 1, 1), order=1, locking=None)
    assert "plain 8-node bricks (locking=None) on elements up to 2.5:1" in caplog.text
    assert "use locking='incompatible_modes'" in caplog.text


def _cantilever_plate_parameters(quadrature):
    """λ_1..5 of a square steel plate a = 1 m, h = 10 mm, clamped along x = 0, on 8 × 8 × 1 27-node bricks."""
    a, h = 1.0, 0.01
    body = _body((a, a, h), (8, 8, 1), quadrature=quadrature)
    free = np.setdiff1d(np.arange(body.n_dofs), body.dofs("x0"))
    K = body.tangent(body.reference_coordinates())[free][:, free]
    M = body.mass_matrix()[free][:, free]
    omega2 = np.sort(sla.eigsh(K, k=5, M=M, sigma=-1.0, which="LM")[0])
    D = STEEL.young * h**3 / (12.0 * (1.0 - STEEL.poisson**2))
    return np.sqrt(omega2) * a**2 * np.sqrt(STEEL.density * h / D)


def test_cantilever_plate_frequencies_with_the_default_rule():
    """The default, (2, 3, 3) here, puts the first five within 0.6 % of the Kirchhoff values (measured +0.05,
    +0.006, +0.06, +0.53, −0.01 %); 3 × 3 × 3 locks them 0.8–2.4 % high."""
    reduced = _cantilever_plate_parameters(None) / KIRCHHOFF_PLATE - 1.0
    full = _cantilever_plate_parameters(3) / KIRCHHOFF_PLATE - 1.0
    assert np.abs(reduced).max() < 6e-3
    assert full.min() > 7e-3 and full.max() > 0.02


def _strip_roll_up(quadrature) -> tuple[float, float, tuple]:
    """(rotation / 2π, tip distance from the root / L, the rule) of a steel strip 0.1 × 1 × 0.01 m along y, 10
    square plate elements, clamped at y = 0 and rolled by the end moment 2π EI/L about x (case 26 turned by
    90°)."""
    length, width, h = 1.0, 0.1, 0.01
    mesh = fb.mesh.box((width, length, h), (1, 10, 1), order=2, origin=(-width / 2, 0.0, -h / 2))
    strip = fb.FlexibleBody(
        "strip", mesh, fb.StVenantKirchhoff(young=210e9, poisson=0.0, density=7850.0), quadrature=quadrature
    )
    tree = fb.RigidTree("end", gravity=(0.0, 0.0, 0.0))
    plate = tree.add_link("plate", joint=fb.Planar((1.0, 0.0, 0.0)), origin=(0.0, length, 0.0))
    system = fb.System([tree, strip], [fb.Fix(strip, "y0"), fb.AttachNodes(strip, "y1", plate)])
    tau = np.zeros(system.assemble().n_dofs)
    tau[plate.coordinates[-1]] = 2.0 * np.pi * 210e9 * width * h**3 / 12.0 / length
    results = fb.solve_static(system, tau=tau)
    rotation = abs(results.q[-1, plate.coordinates[-1]])
    tip = results.node_displacements(strip, "y1")[-1].mean(axis=0) + np.array([0.0, length, 0.0])
    return rotation / (2.0 * np.pi), float(np.linalg.norm(tip) / length), strip.quadrature


def test_a_plate_strip_rolls_up_along_y_with_the_default_rule():
    """Reduced along the strip (η), the circle closes as case 26's bar does along x (rotation 1.00058 × 2π, tip
    5.8e-4 L); reduced along the other in-plane axis, it locks as the full rule does (0.6514 × 2π)."""
    rotation, gap, rule = _strip_roll_up(None)
    assert rule == (3, 2, 3) and abs(rotation - 1.00058) < 1e-4 and gap < 1e-3
    rotation, gap, _ = _strip_roll_up((2, 3, 3))
    assert abs(rotation - 0.6514) < 1e-3 and gap > 0.4


def _column_tip(elements: int, load_ratio: float, quadrature=None) -> tuple[float, float]:
    """(lateral deflection, height) / L of the free top of a column L = 1 m, 10 × 10 mm (L/h = 100), clamped at
    x = 0, under the dead axial load P = load_ratio · π²EI/(4L²): pushed off the straight branch by a lateral load
    P/100 in 20 load steps, which is then removed."""
    length, side, young = 1.0, 0.01, 2.1e11
    mesh = fb.mesh.box((length, side, side), (elements, 1, 1), order=2, origin=(0.0, -side / 2, -side / 2))
    column = fb.FlexibleBody(
        "column", mesh, fb.StVenantKirchhoff(young=young, poisson=0.0, density=7850.0), quadrature=quadrature
    )
    load = load_ratio * np.pi**2 * young * side**4 / 12.0 / (4.0 * length**2)
    push = fb.SurfaceTraction(column, "x1", total=(-load, 0.0, 0.0))
    side_load = fb.SurfaceTraction(column, "x1", total=(0.0, 0.0, 1e-2 * load))
    held = [fb.Fix(column, "x0")]
    pushed = fb.solve_static(fb.System([column], held, loads=[push, side_load]), load_steps=20)
    buckled = fb.solve_static(fb.System([column], held, loads=[push]), q_start=pushed.q[-1])
    u = buckled.displacements(column)[column.nodes("x1")].mean(axis=0)
    return float(u[2] / length), float(1.0 + u[0] / length)


def _elastica_column(load_ratio: float) -> tuple[float, float]:
    """(lateral deflection, height) / L of the buckled cantilever column's free end (Timoshenko & Gere, §2.7):
    K(p²) = (π/2) √(P/P_cr), δ/L = 2p/K, height/L = 2E(p²)/K − 1."""
    m = brentq(lambda m: ellipk(m) - 0.5 * np.pi * np.sqrt(load_ratio), 1e-12, 1.0 - 1e-15)
    return 2.0 * np.sqrt(m) / ellipk(m), 2.0 * ellipe(m) / ellipk(m) - 1.0


@pytest.mark.parametrize("load_ratio", [1.152, 1.518, 2.541])  # tip rotations 60°, 100°, 140°
@pytest.mark.parametrize("elements", [10, 20])
def test_post_buckled_column_on_the_default_rule_matches_the_elastica(load_ratio, elements):
    """Within 0.5 % of the elastica's lateral deflection and 1 % of its shortening (measured at 10 elements:
    +0.02 %, +0.07 % at 1.152 P_cr; 3 × 3 × 3 there: −14.8 %, −31 %)."""
    lateral, height = _column_tip(elements, load_ratio)
    lateral_ref, height_ref = _elastica_column(load_ratio)
    assert abs(lateral / lateral_ref - 1.0) < 5e-3
    assert abs((1.0 - height) / (1.0 - height_ref) - 1.0) < 1e-2


def test_post_buckled_column_locks_with_the_full_rule():
    lateral, height = _column_tip(10, 1.152, quadrature=3)
    lateral_ref, height_ref = _elastica_column(1.152)
    assert lateral / lateral_ref - 1.0 < -0.1 and (1.0 - height) / (1.0 - height_ref) - 1.0 < -0.25


def test_a_shell_is_reduced_along_its_curved_direction():
    """A cylindrical panel running further along its straight axis x than around: the curved direction η is
    reduced (where curved quadratic elements lock), not the longer one."""
    box = fb.mesh.box((0.4, 0.1, 0.0127), (4, 4, 1), order=2, origin=(0.0, 0.0, -0.00635))
    x, theta, depth = box.points.T
    radius = 2.54 + depth
    panel = box.with_points(np.column_stack([x, radius * np.sin(theta), radius * np.cos(theta)]))
    body = fb.FlexibleBody("panel", panel, STEEL)
    assert body.quadrature == (3, 2, 3) == _recommended(body)
    assert _body((0.4, 0.254, 0.0127), (4, 4, 1)).quadrature == (2, 3, 3)  # the same panel flat
