"""Boxes and capsules against a Sphere (flexbody.constraints.nearest_point): the one point of the shape nearest the
ball's centre, against trimesh's closest point and a scalar minimisation, its gap rate against finite differences,
and a box resting on a ball and a capsule bouncing on one against the closed forms of statics and Newton's impact."""

from __future__ import annotations

import numpy as np
import pytest
import trimesh
from gap_rates import gap_rate_and_difference
from scipy.optimize import minimize_scalar

import flexbody as fb
from flexbody.constraints.nearest_point import box_point_nearest, capsule_point_nearest
from flexbody.errors import FlexbodyError

G = 9.81


def _free_body(name: str, mass: float = 2.0, inertia=(0.01, 0.02, 0.03)):
    tree = fb.RigidTree(name, gravity=(0.0, 0.0, -G))
    tree.add_link("body", None, fb.FreeFlyer(), mass=mass, inertia=inertia)
    return tree


def test_the_nearest_points_are_trimeshs_and_a_scalar_minimisations():
    """Random points outside (and inside) a box and around a capsule: the box's nearest point equals trimesh's closest
    point on the box's mesh (1e-12 m); the capsule's gap equals the distance to its segment, minimised by scipy, less
    its radius (1e-12 m)."""
    rng = np.random.default_rng(3)
    half = np.array([0.2, 0.1, 0.05])
    box = trimesh.creation.box(extents=2 * half)
    points = rng.uniform(-0.6, 0.6, (200, 3))
    points[:20] *= 0.04  # some inside
    near = np.array([box_point_nearest(half, p) for p in points])
    theirs, distance, _ = trimesh.proximity.closest_point(box, points)
    np.testing.assert_allclose(near, theirs, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(near - points, axis=1), distance, atol=1e-12)
    half_length, radius = 0.15, 0.05
    for p in rng.uniform(-0.5, 0.5, (50, 3)):
        y = capsule_point_nearest(half_length, radius, p)

        def squared(s, p=p):
            return float(np.sum((p - (0.0, 0.0, s)) ** 2))

        inside = minimize_scalar(
            squared, bounds=(-half_length, half_length), method="bounded", options={"xatol": 1e-12}
        )
        best = min(inside.fun, squared(-half_length), squared(half_length))  # Brent's stays off the ends
        assert np.linalg.norm(p - y) == pytest.approx(np.sqrt(best) - radius, abs=1e-12)


@pytest.mark.parametrize("shape", ["box", "capsule", "cylinder", "capsule on a pipe", "box on a pipe"])
def test_the_gap_rate_is_the_normal_velocity_of_the_material_point(shape):
    """At random poses and velocities of a free body near a ball, n·(J v) equals the central difference of the gap
    along the motion (relative 1e-6)."""
    rng = np.random.default_rng(11)
    tree = _free_body(shape)
    ball = fb.Sphere((0.1, -0.2, -0.6), 0.5)
    if shape == "box":
        (contact,) = fb.box_contacts(tree, "body", (0.4, 0.2, 0.1), ball, rotation=None)
    elif shape == "capsule":
        (contact,) = fb.capsule_contacts(tree, "body", 0.3, 0.05, ball, axis=(1.0, 1.0, 0.0))
    elif shape == "cylinder":
        (contact,) = fb.cylinder_contacts(tree, "body", 0.3, 0.08, ball, axis=(1.0, 1.0, 0.0))
    elif shape == "capsule on a pipe":
        pipe = fb.Cylinder((0.1, -0.2, -0.6), 0.5, axis=(1.0, 0.3, 0.0))
        contact = fb.capsule_contacts(tree, "body", 0.3, 0.05, pipe, axis=(0.2, 1.0, 0.0))[2]
    else:  # one edge's point nearest the pipe's axis
        pipe = fb.Cylinder((0.1, -0.2, -0.6), 0.5, axis=(1.0, 0.3, 0.0))
        contact = fb.box_contacts(tree, "body", (0.4, 0.2, 0.1), pipe)[9]
    asm = fb.System([tree], constraints=[contact]).assemble()
    for _ in range(5):
        q, v = rng.normal(0.0, 0.4, 6), rng.normal(0.0, 1.0, 6)
        rate, difference = gap_rate_and_difference(asm, contact, q, v, 1e-6)
        assert rate == pytest.approx(difference, rel=1e-6, abs=1e-9)


def test_a_box_rests_on_top_of_a_ball():
    """A 2 kg box placed centred on a ball of radius 1 m (friction 0.5): it stays, the ball carrying m g (Σ f_n to
    1e-12, speeds below 1e-12 m/s over 1 s)."""
    tree = _free_body("box")
    ball = fb.Sphere((0.0, 0.0, -1.0), 1.0)
    contacts = fb.box_contacts(tree, "body", (0.4, 0.2, 0.1), ball, friction=0.5)
    assert [c.name for c in contacts] == ["box"]
    system = fb.System([tree], constraints=contacts, q0=(0.0, 0.0, 0.05, 0.0, 0.0, 0.0))
    run = fb.simulate(system, 1.0, integrator=fb.MoreauJean(dt=1e-3))
    np.testing.assert_allclose(run.histories["contact_normal_force"][1:, 0], 2.0 * G, rtol=1e-12)
    assert np.abs(run.v).max() < 1e-12 and np.abs(run.histories["contact_gap"]).max() < 1e-12


def test_a_capsule_dropped_on_a_ball_rebounds_at_e_times_its_impact_speed():
    """A horizontal capsule dropped centred onto a ball with restitution e = 0.5: the step of the impact sends it up
    at e times the speed it came down with (Newton's law, to 1e-12 relative), without turning it."""
    tree = _free_body("capsule", mass=1.0, inertia=(0.001, 0.01, 0.01))
    ball = fb.Sphere((0.0, 0.0, -1.0), 1.0)
    contacts = fb.capsule_contacts(tree, "body", 0.3, 0.05, ball, axis=(1.0, 0.0, 0.0), restitution=0.5)
    system = fb.System([tree], constraints=contacts, q0=(0.0, 0.0, 0.2, 0.0, 0.0, 0.0))
    run = fb.simulate(system, 0.25, integrator=fb.MoreauJean(dt=1e-4))
    impact = int(np.flatnonzero(run.histories["contact_normal_force"][:, 0] > 0.0)[0])
    down, up = run.v[impact, 2], run.v[impact + 1, 2]
    assert down < -1.0 and up == pytest.approx(-0.5 * down, rel=1e-12)
    assert np.abs(run.v[:, 3:]).max() < 1e-12  # centred: no turn


def test_shapes_against_a_moving_flexible_surface_are_refused():
    """Shapes touch fixed surfaces only: against a flexible body's boundary (fb.BodySurface, which moves) each is
    refused by name (its nodes' or points' contacts take that surface)."""
    tree = _free_body("shape")
    brick = fb.FlexibleBody(
        "brick", fb.mesh.box((0.2, 0.2, 0.2), (1, 1, 1)), fb.StVenantKirchhoff(young=1e6, poisson=0.3, density=1e3)
    )
    surface = fb.BodySurface(brick)
    with pytest.raises(FlexbodyError, match=r"cylinder_contacts 'cylinder'.*got BodySurface"):
        fb.cylinder_contacts(tree, "body", 0.3, 0.05, surface)
    with pytest.raises(FlexbodyError, match=r"box_contacts 'box'.*got BodySurface"):
        fb.box_contacts(tree, "body", (0.4, 0.2, 0.1), surface)
    with pytest.raises(FlexbodyError, match=r"capsule_contacts 'capsule'.*got BodySurface"):
        fb.capsule_contacts(tree, "body", 0.3, 0.05, surface)


def test_the_cylinders_nearest_points_and_the_capsules_point_nearest_a_line_against_scipy():
    """Random points around a solid cylinder: the distance to its nearest point equals SLSQP's constrained
    minimisation (outside, 1e-8 m) and the least depth to its side or ends (inside, exact); random lines: the
    capsule segment's point nearest each equals a bounded scalar minimisation of the distance to the line (1e-8)."""
    from scipy.optimize import minimize

    from flexbody.constraints.nearest_point import cylinder_point_nearest, segment_point_nearest_line

    rng = np.random.default_rng(5)
    half_length, radius = 0.2, 0.1
    for p in rng.uniform(-0.5, 0.5, (40, 3)):
        y = cylinder_point_nearest(half_length, radius, p)
        rho = np.hypot(p[0], p[1])
        if rho <= radius and abs(p[2]) <= half_length:
            assert np.linalg.norm(y - p) == pytest.approx(min(radius - rho, half_length - abs(p[2])), abs=1e-15)
            continue
        inside = [
            {"type": "ineq", "fun": lambda x: radius**2 - x[0] ** 2 - x[1] ** 2},
            {"type": "ineq", "fun": lambda x: half_length - abs(x[2])},
        ]
        best = minimize(
            lambda x, p=p: np.sum((x - p) ** 2),
            np.zeros(3),
            constraints=inside,
            method="SLSQP",
            options={"ftol": 1e-16, "maxiter": 500},
        )
        assert np.linalg.norm(y - p) == pytest.approx(np.sqrt(best.fun), abs=1e-8)
    for _ in range(40):
        p, a = rng.uniform(-0.3, 0.3, 3), rng.normal(size=3)
        a /= np.linalg.norm(a)
        s = segment_point_nearest_line(half_length, p, a)

        def to_line(t, p=p, a=a):
            d = np.array([0.0, 0.0, t]) - p
            return float(np.linalg.norm(d - (d @ a) * a))

        found = minimize_scalar(to_line, bounds=(-half_length, half_length), method="bounded", options={"xatol": 1e-12})
        if s is None:  # the nearest point is an end
            assert min(to_line(-half_length), to_line(half_length)) <= found.fun + 1e-9
        else:
            assert to_line(s) == pytest.approx(found.fun, abs=1e-8)


def test_a_capsule_dropped_across_a_pipe_rebounds_and_one_along_it_rests():
    """A capsule dropped centred and crosswise onto a horizontal pipe (a Cylinder, R = 0.2 m), e = 0.5: the impact's
    step sends it up at e times its speed (1e-12 relative) without a turn — its point nearest the pipe's axis; one
    lying along the top of the pipe rests on its end balls, which carry m g (1e-12) with speeds below 1e-12 m/s."""
    pipe = fb.Cylinder((0.0, 0.0, -0.2), 0.2, axis=(1.0, 0.0, 0.0))
    tree = _free_body("capsule", mass=1.0, inertia=(0.01, 0.001, 0.01))
    contacts = fb.capsule_contacts(tree, "body", 0.3, 0.05, pipe, axis=(0.0, 1.0, 0.0), restitution=0.5)
    assert [c.name for c in contacts] == ["capsule0", "capsule1", "capsule2"]
    run = fb.simulate(
        fb.System([tree], constraints=contacts, q0=(0.0, 0.0, 0.2, 0.0, 0.0, 0.0)),
        0.25,
        integrator=fb.MoreauJean(dt=1e-4),
    )
    impact = int(np.flatnonzero(run.histories["contact_normal_force"][:, 2] > 0.0)[0])
    down, up = run.v[impact, 2], run.v[impact + 1, 2]
    assert down < -1.0 and up == pytest.approx(-0.5 * down, rel=1e-12)
    assert np.abs(run.v[:, 3:]).max() < 1e-12
    lying = _free_body("lying", mass=1.0)
    along = fb.capsule_contacts(lying, "body", 0.3, 0.05, pipe, axis=(1.0, 0.0, 0.0))
    system = fb.System([lying], constraints=along, q0=(0.0, 0.0, 0.05, 0.0, 0.0, 0.0))
    rest = fb.simulate(system, 0.2, integrator=fb.MoreauJean(dt=1e-3))
    assert rest.histories["contact_normal_force"][-1].sum() == pytest.approx(G, rel=1e-12)
    assert np.abs(rest.v).max() < 1e-12


def test_a_cylinder_stands_on_top_of_a_ball():
    """A 2 kg cylinder standing centred on a ball of radius 1 m: it stays, the ball carrying m g (1e-12), speeds
    below 1e-12 m/s over 0.5 s — its point nearest the ball's centre, the middle of its lower end disc."""
    tree = _free_body("cylinder")
    ball = fb.Sphere((0.0, 0.0, -1.0), 1.0)
    (contact,) = fb.cylinder_contacts(tree, "body", 0.2, 0.05, ball, friction=0.5)
    system = fb.System([tree], constraints=[contact], q0=(0.0, 0.0, 0.1, 0.0, 0.0, 0.0))
    run = fb.simulate(system, 0.5, integrator=fb.MoreauJean(dt=1e-3))
    np.testing.assert_allclose(run.histories["contact_normal_force"][1:, 0], 2.0 * G, rtol=1e-12)
    assert np.abs(run.v).max() < 1e-12


def test_a_boxs_nearest_contact_to_a_rod_is_the_minimised_distance_and_a_box_on_a_rod_balances_or_tips():
    """A 0.4 × 0.2 × 0.1 m box at random poses near a horizontal rod (R = 0.1 m): the least gap over its 20
    contacts (corners, edges' points nearest the axis) equals the distance minimised by L-BFGS-B over the box less R
    (1e-9 m); lying on the rod with its face across it, centred, it stays (speeds below 1e-12 m/s over 0.3 s) with
    m g carried (1e-12) by the two points where the rod's top crosses its face's edges; 2 cm off centre it rocks
    about the line of contact from rest at α = m g δ/(I + m (δ² + c²)) with friction that grips (μ = 1), and at
    α = m g δ/(I + m δ²) without friction (its centre then moves only vertically), both to 1e-10 relative."""
    from scipy.optimize import minimize
    from scipy.spatial.transform import Rotation

    rod = fb.Cylinder((0.0, 0.0, -0.1), 0.1, axis=(0.0, 1.0, 0.0))
    half = np.array([0.2, 0.1, 0.05])
    tree = _free_body("box", mass=2.0, inertia=(2.0 / 3 * (0.01 + 0.0025), 2.0 / 3 * (0.04 + 0.0025), 2.0 / 3 * 0.05))
    contacts = fb.box_contacts(tree, "body", 2 * half, rod)
    assert [c.name for c in contacts] == [f"box{k}" for k in range(20)]
    asm = fb.System([tree], constraints=contacts).assemble()
    rng = np.random.default_rng(8)
    tested = 0
    while tested < 15:
        rotation = Rotation.random(random_state=rng)
        R = rotation.as_matrix()
        centre = np.array([rng.uniform(-0.1, 0.1), rng.uniform(-0.3, 0.3), rng.uniform(0.1, 0.35)])

        def away(x, R=R, centre=centre):
            d = centre + R @ x - rod.center
            return float(np.sum((d - (d @ rod.axis) * rod.axis) ** 2))

        starts = [np.zeros(3)] + [rng.uniform(-half, half) for _ in range(4)]
        found = min(
            (
                minimize(away, x0, bounds=list(zip(-half, half)), method="L-BFGS-B", options={"ftol": 1e-15})
                for x0 in starts
            ),
            key=lambda r: r.fun,
        )
        distance = np.sqrt(found.fun) - 0.1
        if distance < 0.0:  # the rod's axis would pass through it
            continue
        ws = asm.workspace(0.0, np.concatenate([centre, rotation.as_rotvec()]), np.zeros(6))
        assert min(c.gap(ws) for c in asm.contacts) == pytest.approx(distance, abs=1e-9)
        tested += 1
    run = fb.simulate(
        fb.System([tree], constraints=contacts, q0=(0.0, 0.0, 0.05, 0.0, 0.0, 0.0)),
        0.3,
        integrator=fb.MoreauJean(dt=1e-3),
    )
    assert np.abs(run.v).max() < 1e-12
    forces = run.histories["contact_normal_force"][-1]
    assert forces.sum() == pytest.approx(2.0 * G, rel=1e-12) and np.count_nonzero(forces) == 2
    h, off = 1e-4, 0.02
    inertia = 2.0 / 3 * (0.04 + 0.0025)
    for friction, lever in ((0.0, 0.0), (1.0, 0.05)):  # frictionless it slides over the rod's top as it turns
        gripping = fb.box_contacts(tree, "body", 2 * half, rod, friction=friction)
        tip = fb.simulate(
            fb.System([tree], constraints=gripping, q0=(off, 0.0, 0.05, 0.0, 0.0, 0.0)),
            2 * h,
            integrator=fb.MoreauJean(dt=h),
        )
        alpha = 2.0 * G * off / (inertia + 2.0 * (off**2 + lever**2))
        assert tip.v[1, 4] == pytest.approx(alpha * h, rel=1e-10)
