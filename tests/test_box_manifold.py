"""A box on a link against a fixed Box (flexbody.constraints.box_manifold): the vertices of the contact polygon
against coal's contact patch and coal's distance, the gap rate against finite differences, and a box on a table's
edge against the closed forms of statics and of a body pivoting about an edge."""

from __future__ import annotations

from functools import partial

import coal
import numpy as np
import pytest
from placed import centre_at_distance
from scipy.spatial.transform import Rotation
from table_shapes import assert_gap_rates_over_the_edge, capsule, crate, rest_over_the_edge

import flexbody as fb
from flexbody.constraints.box_manifold import CAPSULE_SLOTS, SLOTS, box_box_points

G = 9.81
TABLE = fb.Box((0.0, 0.0, 0.0), (1.0, 1.0, 0.1))  # its top face at z = 0.05, its edge at x = 0.5


def _points(cp, Rp, hp):
    """(points (8, 3), gaps (8,), axis (3,), count) of the box (centre cp, axes Rp, half-edges hp) on the table."""
    points, gaps, axis = np.empty((SLOTS, 3)), np.empty(SLOTS), np.empty(3)
    count = box_box_points(cp, Rp, hp, TABLE.center, TABLE.rotation, TABLE.half, points, gaps, axis)
    return points, gaps, axis, count


def _coal_box(half, R, centre):
    transform = coal.Transform3s()
    transform.setRotation(np.asarray(R, dtype=float))
    transform.setTranslation(np.asarray(centre, dtype=float))
    return coal.Box(*(2.0 * np.asarray(half))), transform


def _coal_distance(hp, Rp, cp) -> float:
    shape, transform = _coal_box(hp, Rp, cp)
    table, at = _coal_box(TABLE.half, TABLE.rotation, TABLE.center)
    result = coal.DistanceResult()
    coal.distance(shape, transform, table, at, coal.DistanceRequest(), result)
    return result.min_distance


@pytest.mark.parametrize(("x", "turn"), [(0.0, 0.0), (0.45, 0.0), (0.45, 0.5), (0.48, 0.3), (0.2, 0.7)])
def test_the_polygon_of_a_box_lying_on_the_table_is_coals_contact_patch(x, turn):
    """A box lying flat 2 mm above the table, on it or over its edge or corner, turned about the vertical: the
    polygon's vertices are coal's contact patch's (its points on the box) to 1e-9 m, as sets."""
    hp, Rp = np.full(3, 0.1), Rotation.from_rotvec((0.0, 0.0, turn)).as_matrix()
    cp = np.array([x, 0.02, 0.05 + 0.1 + 0.002])
    points, _, _, count = _points(cp, Rp, hp)
    shape, transform = _coal_box(hp, Rp, cp)
    table, at = _coal_box(TABLE.half, TABLE.rotation, TABLE.center)
    request = coal.CollisionRequest()
    request.security_margin, request.enable_contact = 0.01, True
    collision = coal.CollisionResult()
    coal.collide(shape, transform, table, at, request, collision)
    patches = coal.ContactPatchResult()
    coal.computeContactPatch(shape, transform, table, at, collision, coal.ContactPatchRequest(), patches)
    patch = patches.getContactPatch(0)
    theirs = np.array([patch.getPointShape1(k) for k in range(patch.size())])
    assert count == len(theirs) >= 4
    distances = np.linalg.norm(points[:count, None] - theirs[None], axis=2)
    assert distances.min(axis=1).max() < 1e-9 and distances.min(axis=0).max() < 1e-9


def test_the_nearest_slot_is_coals_distance_at_random_poses():
    """Boxes of random sizes and orientations 0–1 mm from the table in random directions: every slot lies on the
    box, the least of the table's signed distance over the slots equals coal's distance between the boxes to 1e-9 m
    (the polygon holds the points that touch first, whichever features they are), and a polygon vertex's gap along
    the axis is no more than the table's distance at it."""
    rng = np.random.default_rng(1)
    for _ in range(60):
        Rp, hp = Rotation.random(random_state=rng).as_matrix(), rng.uniform(0.03, 0.2, 3)
        direction = rng.normal(size=3)
        direction /= np.linalg.norm(direction)
        target = rng.uniform(0.0, 1e-3)
        cp = centre_at_distance(partial(_coal_distance, hp, Rp), np.zeros(3), direction, target)
        points, gaps, _, count = _points(cp, Rp, hp)
        local = np.abs((points - cp) @ Rp)
        assert np.all(local <= hp + 1e-12) and np.all(np.isclose(local, hp, atol=1e-12).any(axis=1))
        distances = np.array([TABLE.value(p)[0] for p in points])
        assert distances.min() == pytest.approx(_coal_distance(hp, Rp, cp), abs=1e-9)
        assert np.all(gaps[:count] <= distances[:count] + 1e-12) and np.isnan(gaps[count:]).all()


def _crate(x: float, tilt: float = 0.0, mass: float = 2.0, friction: float = 1.0):
    """A 0.2 m cube of ``mass`` lying on the table with its centre at ``x`` (tilted by ``tilt`` about y)."""
    system, inertia = crate(TABLE, x, tilt=tilt, mass=mass, friction=friction)
    assert [c.name for c in system.contacts] == [f"box{k}" for k in range(SLOTS)]
    return system, inertia


@pytest.mark.parametrize("shape", ["box", "capsule"])
def test_the_gap_rate_is_the_normal_velocity_of_the_material_point(shape):
    """Lying flat 0–5 mm above the table, over its edge, turned about the vertical, moving in random directions and
    turning about the vertical: each slot's n·(J v) equals the central difference of its gap along the motion
    (relative 1e-6) — a vertex sliding along the shape's edge as it moves slides in the contact's plane. (Tilting
    from flat, the axis passes from the table's face to the box's, which order the polygon's vertices differently;
    the box tipping about the edge is the test below.)"""
    system, _ = _crate(0.5) if shape == "box" else _capsule(0.5)
    assert_gap_rates_over_the_edge(system, 0.15 if shape == "box" else 0.1)


def test_a_crate_over_the_tables_edge_rests_while_its_centre_is_over_the_table():
    """Its centre 5 cm inside the edge (half its face past it, where no corner has support): it stays (speeds below
    1e-12 m/s over 0.5 s), the normal forces carry m g (1e-12) with no moment about its centre (1e-12 N·m), the
    table's edge 2/3 of it and the inner corners 1/3 (the lever rule: 10 cm and 5 cm from the centre)."""
    system, _ = _crate(0.45)
    run = fb.simulate(system, 0.5, integrator=fb.MoreauJean(dt=1e-3))
    assert np.abs(run.v).max() < 1e-12
    forces = run.histories["contact_normal_force"][-1]
    assert forces.sum() == pytest.approx(2.0 * G, rel=1e-12)
    asm = system.assemble()
    ws = asm.workspace(run.times[-1], run.q[-1], run.v[-1])
    points = np.array([c.contact_point(ws)[0] for c in asm.contacts])
    assert abs(forces @ (points[:, 0] - run.q[-1, 0])) < 1e-12
    assert forces[points[:, 0] > 0.499].sum() == pytest.approx(2.0 / 3.0 * 2.0 * G, rel=1e-12)


@pytest.mark.parametrize("past", [0.02, 0.05])
def test_a_crate_past_the_tables_edge_tips_about_it(past):
    """Its centre ``past`` beyond the edge, from rest: the first step turns it about the edge at α h,
    α = m g δ/(I + m (δ² + c²)) (a body pivoting about an edge; δ the centre's overhang, c its height above the
    table), to 1e-10 relative, and the edge does not slide: its speed stays below 1e-11 m/s, the round-off of the
    gaps (1e-15 m at these coordinates) over a step (measured 1.4e-13 m/s, 1.2e-9 of the centre's speed)."""
    mass, h = 2.0, 1e-4
    system, inertia = _crate(0.5 + past, mass=mass)
    run = fb.simulate(system, 2 * h, integrator=fb.MoreauJean(dt=h))
    alpha = mass * G * past / (inertia + mass * (past**2 + 0.1**2))
    assert run.v[1, 4] == pytest.approx(alpha * h, rel=1e-10)  # about +y: the overhang drops
    pivot = np.array([-past, 0.0, -0.1])  # the edge from the centre
    edge_velocity = run.v[1, :3] + np.cross(run.v[1, 3:], pivot)
    assert np.abs(edge_velocity).max() < 1e-11


def test_a_crate_sliding_on_the_table_decelerates_at_mu_g():
    """Pushed along the table at 1 m/s (μ = 0.5): v = v₀ − μ g t while it slides (1e-9 relative at 0.1 s), as on a
    plane, and it has not turned."""
    system, _ = _crate(0.0, friction=0.5)
    v0 = np.array([1.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    run = fb.simulate(system, 0.1, integrator=fb.MoreauJean(dt=1e-3), v0=v0)
    assert run.v[-1, 0] == pytest.approx(1.0 - 0.5 * G * run.times[-1], rel=1e-9)
    assert np.abs(run.v[:, 3:]).max() < 1e-12 and np.abs(run.v[:, 1:3]).max() < 1e-12


def _capsule(x: float, length: float = 0.3, radius: float = 0.05, mass: float = 1.0, friction: float = 1.0):
    """A capsule along x (``length`` of segment, ``radius``) lying on the table with its centre at ``x``."""
    system, inertia = capsule(TABLE, x, length=length, radius=radius, mass=mass, friction=friction)
    assert [c.name for c in system.contacts] == [f"capsule{k}" for k in range(CAPSULE_SLOTS)]
    return system, inertia


def test_the_nearest_capsule_slot_is_coals_distance_at_random_poses():
    """Capsules in random orientations placed 0–1 mm from the table in random directions: the least gap over the
    four slots equals coal's capsule–box distance to 1e-9 m, its slot lies on the capsule's surface and every other
    in the capsule (an end's ball point toward the table may lie inside it where that end is not the nearest)."""
    rng = np.random.default_rng(4)
    length, radius = 0.3, 0.05
    system, _ = _capsule(0.0, length, radius)
    asm = system.assemble()
    table, at = _coal_box(TABLE.half, TABLE.rotation, TABLE.center)
    for _ in range(40):
        rotation = Rotation.random(random_state=rng)
        direction = rng.normal(size=3)
        direction /= np.linalg.norm(direction)
        target = rng.uniform(0.0, 1e-3)

        def distance(centre, rotation=rotation):  # the capsule's axis is the link's x: coal's lies along its z
            transform = coal.Transform3s()
            transform.setRotation(rotation.as_matrix() @ Rotation.from_rotvec((0.0, np.pi / 2, 0.0)).as_matrix())
            transform.setTranslation(centre)
            result = coal.DistanceResult()
            coal.distance(coal.Capsule(radius, length), transform, table, at, coal.DistanceRequest(), result)
            return result.min_distance

        centre = centre_at_distance(distance, np.zeros(3), direction, target)
        q = np.concatenate([centre, rotation.as_rotvec()])
        ws = asm.workspace(0.0, q, np.zeros(6))
        gaps = [c.gap(ws) for c in asm.contacts]
        assert min(gaps) == pytest.approx(distance(centre), abs=1e-9)
        axis = rotation.apply((1.0, 0.0, 0.0))
        away = []
        for contact in asm.contacts:
            point = contact.anchor.position(ws) - centre
            along = np.clip(point @ axis, -length / 2, length / 2)
            away.append(np.linalg.norm(point - along * axis))
        assert max(away) <= radius + 1e-12 and away[int(np.argmin(gaps))] == pytest.approx(radius, abs=1e-12)


def test_a_capsule_over_the_tables_edge_rests_by_the_lever_rule_and_past_it_rolls_off():
    """A capsule (segment 0.3 m, radius 5 cm) along x with its centre 5 cm inside the edge: it stays (speeds below
    1e-12 m/s over 0.3 s), the edge carrying m g (x_c − x_end)/(x_edge − x_end) = 3/4 of m g (1e-12); with its centre
    3 cm past the edge, from rest, the first step turns it about the edge at α h, α = m g δ/(I + m (δ² + r²)), to
    1e-10 relative."""
    speed, total, on_the_edge = rest_over_the_edge(_capsule(0.45)[0])
    assert speed < 1e-12 and total == pytest.approx(G, rel=1e-12)
    assert on_the_edge == pytest.approx(0.75 * G, rel=1e-12)
    h, past = 1e-4, 0.03
    system, inertia = _capsule(0.5 + past)
    run = fb.simulate(system, 2 * h, integrator=fb.MoreauJean(dt=h))
    alpha = G * past / (inertia + past**2 + 0.05**2)
    assert run.v[1, 4] == pytest.approx(alpha * h, rel=1e-10)


def test_a_capsule_sliding_on_the_table_decelerates_at_mu_g():
    """Pushed along its axis at 1 m/s (μ = 0.5): v = v₀ − μ g t (1e-9 relative at 0.1 s), without turning."""
    system, _ = _capsule(0.0, friction=0.5)
    run = fb.simulate(system, 0.1, integrator=fb.MoreauJean(dt=1e-3), v0=(1.0, 0.0, 0.0, 0.0, 0.0, 0.0))
    assert run.v[-1, 0] == pytest.approx(1.0 - 0.5 * G * run.times[-1], rel=1e-9)
    assert np.abs(run.v[:, 3:]).max() < 1e-12
