"""Boxes, capsules and cylinders on links against a fixed fb.ImplicitSurface (flexbody.constraints.
implicit_shape_points): the least gap over their contacts against coal's distance to a ball (through the ball's
first-order distance, a closed form), the gap rate against finite differences, and the closed forms of a box, a
capsule and a cylinder resting on a ball and across a rod, and a cylinder rolling down an implicit slope."""

from __future__ import annotations

import math
from functools import partial

import coal
import numpy as np
import pytest
from placed import centre_at_distance
from scipy.spatial.transform import Rotation
from slope_closed_forms import slope_errors

import flexbody as fb

G, R_BALL = 9.81, 0.5
CENTRE = np.array([0.0, 0.0, -R_BALL])  # the ball's top at the origin
BALL = fb.ImplicitSurface(
    lambda x: [(x - CENTRE) @ (x - CENTRE) - R_BALL**2], lambda x: [2.0 * (x - CENTRE)], lambda x: [2.0 * np.eye(3)]
)
R_ROD = 0.04  # a rod along y through the origin: s = x² + z² − R²
ROD = fb.ImplicitSurface(
    lambda x: [x[0] ** 2 + x[2] ** 2 - R_ROD**2],
    lambda x: [[2.0 * x[0], 0.0, 2.0 * x[2]]],
    lambda x: [np.diag([2.0, 0.0, 2.0])],
)


def _first_order(d: float) -> float:
    """The ball's first-order distance ŝ = (ρ² − R²)/(2ρ) at the distance d from it (ρ = R + d)."""
    rho = R_BALL + d
    return (rho * rho - R_BALL**2) / (2.0 * rho)


def _coal_distance(shape, R, centre) -> float:
    transform = coal.Transform3s()
    transform.setRotation(np.asarray(R, dtype=float))
    transform.setTranslation(np.asarray(centre, dtype=float))
    ball = coal.Transform3s()
    ball.setTranslation(CENTRE)
    request = coal.DistanceRequest()
    request.gjk_tolerance = 1e-14
    request.gjk_convergence_criterion = coal.GJKConvergenceCriterion.DualityGap
    request.gjk_convergence_criterion_type = coal.GJKConvergenceCriterionType.Absolute
    request.gjk_max_iterations = 1000
    result = coal.DistanceResult()
    coal.distance(shape, transform, coal.Sphere(R_BALL), ball, request, result)
    return result.min_distance


def _free(inertia=(0.01, 0.01, 0.01), mass: float = 1.0) -> fb.RigidTree:
    tree = fb.RigidTree("shape", gravity=(0.0, 0.0, -G))
    tree.add_link("body", None, fb.FreeFlyer(), mass=mass, inertia=inertia)
    return tree


def _contacts(tree, kind: str, size, surface, **options):
    if kind == "box":
        return fb.box_contacts(tree, "body", size, surface, **options)
    if kind == "capsule":
        return fb.capsule_contacts(tree, "body", size[0], size[1], surface, **options)
    return fb.cylinder_contacts(tree, "body", size[0], size[1], surface, **options)


def test_shapes_against_an_implicit_surface_give_their_corners_ends_or_rims_and_their_features_minima():
    """A box: 8 corners, 4 edge and 2 face minima (``box0`` … ``box13``); a capsule: a minimum on each end cap and 2
    on its side; a cylinder: per rim 2 minima and 5 more of its hexagon, 2 disc and 2 side minima (``cylinder0`` …
    ``cylinder17``)."""
    tree = _free()
    for kind, size, count in (("box", (0.2, 0.2, 0.2), 14), ("capsule", (0.3, 0.05), 4), ("cylinder", (0.2, 0.05), 18)):
        assert [c.name for c in _contacts(tree, kind, size, BALL)] == [f"{kind}{k}" for k in range(count)]


@pytest.mark.parametrize("kind", ["box", "capsule", "cylinder"])
def test_the_least_gap_is_the_first_order_distance_of_coals_nearest_point(kind):
    """Shapes of random sizes in random orientations placed 0–1 mm from the ball in random directions: the least gap
    over their contacts equals the ball's first-order distance at coal's distance d, (ρ² − R²)/(2ρ) with ρ = R + d
    (ŝ grows with the distance from the centre, so its least over a shape is at the shape's point nearest the centre),
    to 1e-12 m (measured 2.8e-16) — at a corner, inside an edge or a face, on a rim, a disc, a side or an end cap."""
    rng = np.random.default_rng(4)
    for _ in range(15):
        R = Rotation.random(random_state=rng).as_matrix()
        if kind == "box":
            size = rng.uniform(0.05, 0.3, 3)
            shape = coal.Box(*size)
        else:
            size = np.array([rng.uniform(0.1, 0.4), rng.uniform(0.02, 0.08)])
            shape = coal.Capsule(size[1], size[0]) if kind == "capsule" else coal.Cylinder(size[1], size[0])
        direction = rng.normal(size=3)
        direction /= np.linalg.norm(direction)
        target = rng.uniform(0.0, 1e-3)
        centre = centre_at_distance(partial(_coal_distance, shape, R), CENTRE + R_BALL * direction, direction, target)
        tree = fb.RigidTree("shape")
        tree.add_link("body", None, fb.FreeFlyer(), mass=1.0, inertia=(1.0, 1.0, 1.0))
        contacts = _contacts(tree, kind, size, BALL)  # along the link's z, as coal's
        asm = fb.System([tree], constraints=contacts).assemble()
        q = np.concatenate([centre, Rotation.from_matrix(R).as_rotvec()])
        ws = asm.workspace(0.0, q, np.zeros(6))
        gaps = np.array([c.gap(ws) for c in asm.contacts])
        assert gaps.min() == pytest.approx(_first_order(_coal_distance(shape, R, centre)), abs=1e-12)


@pytest.mark.parametrize("kind", ["box", "capsule", "cylinder"])
def test_where_a_contact_touches_its_gap_rate_is_the_normal_velocity_of_the_material_point(kind):
    """Tilted at random on the ball's top, lowered until it touches (its least gap 0 to 1e-11 m), moving in random
    directions: each touching contact's n·(J v) equals the central difference of its gap along the motion (relative
    1e-6). There ŝ = 0 and its gradient is the normal; off the surface the rate of the first-order distance differs
    from n·v by about ŝ/ρ of it (ρ the surface's radius of curvature), as for a point on the surface."""
    from gap_rates import gap_rate_and_difference

    size = {"box": (0.2, 0.2, 0.2), "capsule": (0.3, 0.05), "cylinder": (0.2, 0.05)}[kind]
    tree = _free()
    asm = fb.System([tree], constraints=_contacts(tree, kind, size, BALL)).assemble()
    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(4):
        q = np.concatenate([rng.uniform(-0.03, 0.03, 2), [0.2], rng.uniform(-0.3, 0.3, 3)])
        for _ in range(12):  # lowered until it touches
            q[2] -= min(c.gap(asm.workspace(0.0, q, np.zeros(6))) for c in asm.contacts)
        ws = asm.workspace(0.0, q, np.zeros(6))
        gaps = np.array([c.gap(ws) for c in asm.contacts])
        assert abs(gaps.min()) < 1e-11
        v = rng.normal(0.0, 1.0, 6)
        for contact in np.array(asm.contacts)[np.abs(gaps) < 1e-10]:
            rate, difference = gap_rate_and_difference(asm, contact, q, v, 1e-7)
            assert rate == pytest.approx(difference, rel=1e-6, abs=1e-8)
            checked += 1
    assert checked >= 4


@pytest.mark.parametrize(("kind", "slot"), [("box", 12), ("capsule", 2), ("cylinder", 14)])
def test_a_shape_on_top_of_a_ball_rests_on_its_face_side_or_disc(kind, slot):
    """A box on its face, a capsule on its side, a cylinder on its disc, on top of the ball (which their corners,
    end balls and rims do not touch): at rest over 0.2 s (speeds below 1e-12), the one contact inside the feature
    carrying m g (1e-12), at the ball's top."""
    size = {"box": (0.2, 0.2, 0.2), "capsule": (0.3, 0.05), "cylinder": (0.2, 0.05)}[kind]
    tree = _free()
    contacts = _contacts(
        tree, kind, size, BALL, friction=0.5, **({"axis": (1.0, 0.0, 0.0)} if kind == "capsule" else {})
    )
    height = 0.05 if kind == "capsule" else 0.1
    system = fb.System([tree], constraints=contacts, q0=(0.0, 0.0, height, 0.0, 0.0, 0.0))
    run = fb.simulate(system, 0.2, integrator=fb.MoreauJean(dt=1e-3))
    force = run.histories["contact_normal_force"][-1]
    assert force[slot] == pytest.approx(G, rel=1e-12) and np.count_nonzero(force) == 1
    assert np.abs(run.v).max() < 1e-12
    asm = system.assemble()
    point = asm.contacts[slot].contact_point(asm.workspace(run.times[-1], run.q[-1], run.v[-1]))[0]
    assert np.abs(point).max() < 1e-12


def test_a_box_across_a_rod_rests_on_the_two_edges_that_cross_it():
    """A box (0.3 × 0.2 × 0.1 m) lying across a rod along y, its bottom face's edges along x crossing the rod: at rest
    over 0.2 s (speeds below 1e-12 m/s; measured 8e-15), the two minima inside those edges carry m g/2 each (1e-10;
    measured 1.7e-12: the face's own touching line is a degenerate minimum, held by them)."""
    tree = _free(inertia=(0.01, 0.02, 0.03))
    contacts = fb.box_contacts(tree, "body", (0.3, 0.2, 0.1), ROD, friction=0.5)
    system = fb.System([tree], constraints=contacts, q0=(0.0, 0.0, R_ROD + 0.05, 0.0, 0.0, 0.0))
    run = fb.simulate(system, 0.2, integrator=fb.MoreauJean(dt=1e-3))
    force = run.histories["contact_normal_force"][-1]
    pressed = np.flatnonzero(force)
    assert len(pressed) == 2 and np.all((pressed >= 8) & (pressed < 12))
    np.testing.assert_allclose(force[pressed], G / 2, rtol=1e-10)
    assert np.abs(run.v).max() < 1e-12


@pytest.mark.parametrize("degrees", [20.0, 45.0])
def test_a_cylinder_on_an_implicit_slope_rolls_or_slips_as_the_closed_forms_say(degrees):
    """The slope s = n·x (a distance, exact) and μ = 0.3: a cylinder (1 kg, r = 5 cm, ℓ = 0.2 m) across it rolls at
    ⅔ g sin θ (20°) or slips at g(sin θ − μ cos θ) (45°), 0.3 s: the centre's velocity within 1e-11 of a t (measured
    2.9e-14 and 1.6e-13)."""
    theta, mu = math.radians(degrees), 0.3
    n = np.array([-math.sin(theta), 0.0, math.cos(theta)])
    slope = fb.ImplicitSurface(lambda x: [n @ x], lambda x: [n], lambda x: [np.zeros((3, 3))])
    axial, across = 0.5 * 0.05**2, (3 * 0.05**2 + 0.2**2) / 12
    tree = _free(inertia=(across, axial, across))
    contacts = fb.cylinder_contacts(tree, "body", 0.2, 0.05, slope, axis=(0.0, 1.0, 0.0), friction=mu)
    run = fb.simulate(
        fb.System([tree], constraints=contacts, q0=[*(0.05 * n), 0, 0, 0]), 0.3, integrator=fb.MoreauJean(dt=1e-3)
    )
    assert slope_errors(run, theta, mu)[0] < 1e-11


def test_a_balls_gap_on_an_implicit_surface_is_the_least_first_order_distance_over_it():
    """A ball (fb.sphere_contact, r = 5 cm) at random points 0–1 mm from the implicit ball: its gap is the ball's
    first-order distance at their true distance d = ‖c − C‖ − R − r, (ρ² − R²)/(2ρ) with ρ = R + d (1e-12 m) — not ŝ
    at its centre less r, short by about r²/2R (2.3 mm here, measured before); resting on top it carries m g with its
    centre r above the ball's top (1e-12 m)."""
    rng = np.random.default_rng(5)
    tree = _free()
    contact = fb.sphere_contact(tree, "body", 0.05, BALL, friction=0.5)
    asm = fb.System([tree], constraints=[contact]).assemble()
    for _ in range(10):
        direction = rng.normal(size=3)
        direction /= np.linalg.norm(direction)
        d = rng.uniform(0.0, 1e-3)
        q = np.concatenate([CENTRE + (R_BALL + 0.05 + d) * direction, rng.uniform(-1.0, 1.0, 3)])
        gap = asm.contacts[0].gap(asm.workspace(0.0, q, np.zeros(6)))
        assert gap == pytest.approx(_first_order(d), abs=1e-12)
    system = fb.System([tree], constraints=[contact], q0=(0.0, 0.0, 0.05, 0.0, 0.0, 0.0))
    run = fb.simulate(system, 0.2, integrator=fb.MoreauJean(dt=1e-3))
    assert run.histories["contact_normal_force"][-1, 0] == pytest.approx(G, rel=1e-12)
    assert run.q[-1, 2] == pytest.approx(0.05, abs=1e-12)
