"""Boxes and capsules against a Sphere (flexbody.constraints.nearest_point): the one point of the shape nearest the
ball's centre, against trimesh's closest point and a scalar minimisation, its gap rate against finite differences,
and a box resting on a ball and a capsule bouncing on one against the closed forms of statics and Newton's impact."""

from __future__ import annotations

import numpy as np
import pytest
import trimesh
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


@pytest.mark.parametrize("shape", ["box", "capsule"])
def test_the_gap_rate_is_the_normal_velocity_of_the_material_point(shape):
    """At random poses and velocities of a free body near a ball, n·(J v) equals the central difference of the gap
    along the motion (relative 1e-6)."""
    rng = np.random.default_rng(11)
    tree = _free_body(shape)
    ball = fb.Sphere((0.1, -0.2, -0.6), 0.5)
    if shape == "box":
        (contact,) = fb.box_contacts(tree, "body", (0.4, 0.2, 0.1), ball, rotation=None)
    else:
        (contact,) = fb.capsule_contacts(tree, "body", 0.3, 0.05, ball, axis=(1.0, 1.0, 0.0))
    asm = fb.System([tree], constraints=[contact]).assemble()
    for _ in range(5):
        q, v = rng.normal(0.0, 0.4, 6), rng.normal(0.0, 1.0, 6)
        frame = contact.frame(asm.workspace(0.0, q, v))
        rate = (frame.G @ v[frame.cols])[0]
        eps = 1e-6
        ahead, behind = (contact.gap(asm.workspace(0.0, q + s * eps * v, v)) for s in (1.0, -1.0))
        assert rate == pytest.approx((ahead - behind) / (2 * eps), rel=1e-6, abs=1e-9)


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


def test_boxes_and_capsules_against_other_curved_surfaces_are_refused():
    tree = _free_body("shape")
    pipe = fb.Cylinder((0.0, 0.0, -1.0), 0.5, axis=(1.0, 0.0, 0.0))
    with pytest.raises(FlexbodyError, match=r"box_contacts 'box'.*Plane or a Sphere or a Box only.*Cylinder"):
        fb.box_contacts(tree, "body", (0.4, 0.2, 0.1), pipe)
    with pytest.raises(FlexbodyError, match=r"capsule_contacts 'capsule'.*Plane or a Sphere or a Box only.*Cylinder"):
        fb.capsule_contacts(tree, "body", 0.3, 0.05, pipe)
