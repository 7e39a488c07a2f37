"""Cylinders on links against a fixed Box, its mesh and rods (flexbody.constraints.cylinder_slots): the least gap over
their contacts against coal's distance at random poses, the gap rate against finite differences, and the closed forms
of a cylinder rolling or slipping down a tilted box, lying over a table's edge (the lever rule; tipping about the
edge), standing on a table, and resting in a cradle of two rods."""

from __future__ import annotations

import math
from functools import partial

import coal
import numpy as np
import pytest
import trimesh
from placed import centre_at_distance
from scipy.spatial.transform import Rotation
from slope_closed_forms import slope_errors
from table_shapes import G, rest_over_the_edge

import flexbody as fb
from flexbody.constraints.cylinder_slots import box_mesh

TABLE = fb.Box((0.0, 0.0, 0.0), (1.0, 1.0, 0.1))  # its top face at z = 0.05, its edge at x = 0.5
BLOCK = trimesh.creation.box((1.0, 1.0, 0.1))
MESHED = fb.TriangleMesh(BLOCK.vertices, BLOCK.faces)  # the same table, meshed (12 triangles)
ROD = fb.Cylinder((0.0, 0.0, 0.0), 0.04, (0.0, 1.0, 0.0))  # a rod along y through the origin
LENGTH, RADIUS = 0.2, 0.05


def _transform(R, centre):
    transform = coal.Transform3s()
    transform.setRotation(np.asarray(R, dtype=float))
    transform.setTranslation(np.asarray(centre, dtype=float))
    return transform


def _coal_distance(length, radius, R, centre, surface) -> float:
    """coal's distance between the cylinder (axis R e₃, centre) and the table, or the rod (a 20 m cylinder, centred
    at the foot of the cylinder's centre on its axis)."""
    if surface is ROD:
        foot = (centre @ ROD.axis) * ROD.axis
        other = (
            coal.Cylinder(ROD.radius, 20.0),
            _transform(Rotation.from_rotvec([-np.pi / 2, 0, 0]).as_matrix(), foot),
        )
    else:
        other = (coal.Box(1.0, 1.0, 0.1), _transform(np.eye(3), np.zeros(3)))
    result = coal.DistanceResult()
    request = coal.DistanceRequest()
    request.gjk_tolerance = 1e-14  # a certified bound: the duality gap, absolute (a curved shape converges slowly)
    request.gjk_convergence_criterion = coal.GJKConvergenceCriterion.DualityGap
    request.gjk_convergence_criterion_type = coal.GJKConvergenceCriterionType.Absolute
    request.gjk_max_iterations = 1000
    coal.distance(coal.Cylinder(radius, length), _transform(R, centre), *other, request, result)
    return result.min_distance


def _free(mass: float, inertia) -> fb.RigidTree:
    tree = fb.RigidTree("cylinder", gravity=(0.0, 0.0, -G))
    tree.add_link("body", None, fb.FreeFlyer(), mass=mass, inertia=inertia)
    return tree


def _inertia(axis: int, mass: float = 1.0) -> tuple[float, ...]:
    """A solid cylinder's principal inertia [kg m²] with its axis along world axis ``axis``."""
    axial, across = 0.5 * mass * RADIUS**2, mass * (3 * RADIUS**2 + LENGTH**2) / 12
    return tuple(axial if k == axis else across for k in range(3))


def test_a_cylinder_against_a_box_a_mesh_and_a_rod_gives_its_rims_and_the_surfaces_slots():
    """Per rim 2 minima and the 5 further points of its hexagon (14), then against a Box or a mesh 4 + 4 slots of its
    vertices and edges (``cylinder0`` … ``cylinder21``), against a rod 1 across its side (… ``cylinder14``)."""
    for surface, count in ((TABLE, 22), (MESHED, 22), (ROD, 15)):
        contacts = fb.cylinder_contacts(_free(1.0, (1.0, 1.0, 1.0)), "body", LENGTH, RADIUS, surface)
        assert [c.name for c in contacts] == [f"cylinder{k}" for k in range(count)]


@pytest.mark.parametrize("surface", ["box", "mesh", "rod"])
def test_the_least_gap_is_coals_distance_at_random_poses(surface):
    """Cylinders of random lengths and radii in random orientations placed 0–1 mm from the table (a Box or its mesh)
    or the rod in random directions: the least gap over all their contacts equals coal's distance to 1e-8 m, whichever
    features come nearest (a rim over a face or an edge, a disc over a corner, the side across an edge or the rod).
    coal's is only that good for a cylinder: its nearest points lie up to 1.5e-9 m inside the rim (measured), so that
    its distance exceeds that from the rim's exact point by about as much (measured at most 1.2e-9 m against the
    table, 2.0e-9 m against the rod)."""
    target_surface = {"box": TABLE, "mesh": MESHED, "rod": ROD}[surface]
    rng = np.random.default_rng(2)
    for _ in range(30):
        R = Rotation.random(random_state=rng).as_matrix()
        length, radius = rng.uniform(0.05, 0.3), rng.uniform(0.02, 0.1)
        direction = rng.normal(size=3)
        direction /= np.linalg.norm(direction)
        target = rng.uniform(0.0, 1e-3)
        distance = partial(_coal_distance, length, radius, R, surface=target_surface)
        centre = centre_at_distance(distance, np.zeros(3), direction, target)
        tree = _free(1.0, (1.0, 1.0, 1.0))
        contacts = fb.cylinder_contacts(tree, "body", length, radius, target_surface)  # along its z, as coal's
        asm = fb.System([tree], constraints=contacts).assemble()
        q = np.concatenate([centre, Rotation.from_matrix(R).as_rotvec()])
        ws = asm.workspace(0.0, q, np.zeros(6))
        gaps = np.array([c.gap(ws) for c in asm.contacts])
        assert gaps.min() == pytest.approx(_coal_distance(length, radius, R, centre, target_surface), abs=1e-8)


@pytest.mark.parametrize("surface", ["box", "mesh", "rod"])
def test_the_gap_rate_is_the_normal_velocity_of_the_material_point(surface):
    """Lying along x 0–5 mm above the table over its edge (or across the rod), turned about the vertical, moving in
    random directions: each contact's n·(J v) equals the central difference of its gap along the motion (relative
    1e-6) — of the rims' minima and the surface's slots; the further points of a rim's hexagon follow its least point
    around the rim, so their rate is their material point's normal velocity, not their gap's (they touch only where
    the disc lies flat and all its rim's points are minima)."""
    from gap_rates import gap_rate_and_difference

    target_surface = {"box": TABLE, "mesh": MESHED, "rod": ROD}[surface]
    tree = _free(1.0, _inertia(0))
    contacts = fb.cylinder_contacts(tree, "body", LENGTH, RADIUS, target_surface, axis=(1.0, 0.0, 0.0))
    asm = fb.System([tree], constraints=contacts).assemble()
    rng = np.random.default_rng(0)
    x, height = (0.0, 0.04 + RADIUS) if surface == "rod" else (0.5, 0.05 + RADIUS)
    for _ in range(3):
        q = np.array([x + rng.uniform(-0.1, 0.05), rng.uniform(-0.1, 0.1), height + rng.uniform(0, 0.005), 0, 0, 0])
        q[3:] = rng.uniform(-0.4, 0.4, 3)
        v = rng.normal(0.0, 1.0, 6)
        for k, contact in enumerate(asm.contacts):
            if k < 14 and k % 7 >= 2:  # a further point of a rim's hexagon
                continue
            rate, difference = gap_rate_and_difference(asm, contact, q, v, 1e-7)
            assert rate == pytest.approx(difference, rel=1e-6, abs=1e-8)


@pytest.mark.parametrize("degrees", [20.0, 45.0])
@pytest.mark.parametrize("meshed", [False, True])
def test_a_cylinder_on_a_tilted_box_rolls_or_slips_as_the_closed_forms_say(degrees, meshed):
    """Axis across the slope of a box tilted by θ (its top face; or the box's mesh), μ = 0.3 (3μ = 0.9: rolls at 20°
    at ⅔ g sin θ, slips at 45° at g(sin θ − μ cos θ)), 0.3 s: the centre's velocity down the slope within 1e-11 of the
    closed form's a t (measured 5.0e-16 and 3.3e-13), no motion off the face (< 1e-11 m/s), gaps ≥ −1e-14 m."""
    theta, mu = math.radians(degrees), 0.3
    tilt = Rotation.from_rotvec([0.0, -theta, 0.0]).as_matrix()
    n = tilt[:, 2]
    box = fb.Box(-0.5 * n, (4.0, 1.0, 1.0), tilt)
    tree = _free(1.0, _inertia(1))
    contacts = fb.cylinder_contacts(
        tree, "body", LENGTH, RADIUS, box_mesh(box) if meshed else box, axis=(0.0, 1.0, 0.0), friction=mu
    )
    run = fb.simulate(
        fb.System([tree], constraints=contacts, q0=[*(RADIUS * n), 0, 0, 0]), 0.3, integrator=fb.MoreauJean(dt=1e-3)
    )
    error, across = slope_errors(run, theta, mu)
    assert error < 1e-11 and across < 1e-11
    assert run.histories["contact_gap"].min() > -1e-14


@pytest.mark.parametrize("table", [TABLE, MESHED], ids=["box", "mesh"])
def test_a_cylinder_over_the_tables_edge_rests_by_the_lever_rule_and_past_it_tips(table):
    """Lying along x with its centre 5 cm inside the edge: it stays (speeds below 1e-12 m/s over 0.3 s), the edge
    (its side across it) carrying m g (x_c − x_end)/(x_edge − x_end) = 2/3 of m g (1e-12), its inner rim the rest;
    with its centre 3 cm past the edge, from rest, the first step turns it about the edge at α h,
    α = m g δ/(I + m (δ² + r²)), to 1e-10 relative."""
    tree = _free(1.0, _inertia(0))
    contacts = fb.cylinder_contacts(tree, "body", LENGTH, RADIUS, table, axis=(1.0, 0.0, 0.0), friction=1.0)
    system = fb.System([tree], constraints=contacts, q0=(0.45, 0.0, 0.05 + RADIUS, 0.0, 0.0, 0.0))
    speed, total, on_the_edge = rest_over_the_edge(system)
    assert speed < 1e-12 and total == pytest.approx(G, rel=1e-12)
    assert on_the_edge == pytest.approx(2 * G / 3, rel=1e-12)
    h, past = 1e-4, 0.03
    system = fb.System([tree], constraints=contacts, q0=(0.5 + past, 0.0, 0.05 + RADIUS, 0.0, 0.0, 0.0))
    run = fb.simulate(system, 2 * h, integrator=fb.MoreauJean(dt=h))
    alpha = G * past / (_inertia(0)[1] + past**2 + RADIUS**2)
    assert run.v[1, 4] == pytest.approx(alpha * h, rel=1e-10)


def test_a_cylinder_standing_on_a_table_rests_on_its_rims_hexagon():
    """Standing on an end on the table (a Box) for 0.2 s: it does not creep (its pose within 1e-14 of the start), the
    lower rim's contacts carry m g and the upper rim's none. The impulses on six points of a rigid disc are not
    unique, and the solver takes those that meet the law to its tolerance (``LAW_TOL``): so m g to 1e-9 (measured
    1.3e-11 relative; on a Plane the same, 3e-11 N) and speeds that jitter below 1e-11 (measured 2.6e-12 rad/s)."""
    tree = _free(1.0, _inertia(2))
    contacts = fb.cylinder_contacts(tree, "body", LENGTH, RADIUS, TABLE, friction=0.5)
    system = fb.System([tree], constraints=contacts, q0=(0.1, 0.2, 0.05 + LENGTH / 2, 0.0, 0.0, 0.0))
    run = fb.simulate(system, 0.2, integrator=fb.MoreauJean(dt=1e-3))
    force = run.histories["contact_normal_force"][-1]
    assert force[:7].sum() == pytest.approx(G, rel=1e-9) and np.all(force[7:] == 0.0)
    assert np.abs(run.v).max() < 1e-11
    assert np.abs(run.q - run.q[0]).max() < 1e-14


def test_a_cylinder_in_a_cradle_of_two_rods_carries_the_closed_forms_reactions():
    """A cylinder (axis along y) dropped into two parallel frictionless rods along y, 2d = 8 cm apart: at rest (speeds
    below 1e-12 m/s after 0.3 s) on the line of each rod, each carrying m g/(2 cos α), sin α = d/(r + R) (1e-12;
    measured 3.6e-13)."""
    d = 0.04
    rods = [fb.Cylinder((x, 0.0, 0.0), ROD.radius, (0.0, 1.0, 0.0)) for x in (-d, d)]
    tree = _free(1.0, _inertia(1))
    contacts = [
        contact
        for k, rod in enumerate(rods)
        for contact in fb.cylinder_contacts(tree, "body", LENGTH, RADIUS, rod, axis=(0.0, 1.0, 0.0), name=f"rod{k}.")
    ]
    height = math.sqrt((RADIUS + ROD.radius) ** 2 - d**2)
    system = fb.System([tree], constraints=contacts, q0=(0.0, 0.0, height + 0.002, 0.0, 0.0, 0.0))
    run = fb.simulate(system, 0.3, integrator=fb.MoreauJean(dt=1e-3))
    assert np.abs(run.v[-1]).max() < 1e-12
    force = run.histories["contact_normal_force"][-1]
    alpha = math.asin(d / (RADIUS + ROD.radius))
    for k in range(2):
        on_rod = [i for i, c in enumerate(contacts) if c.name.startswith(f"rod{k}.")]
        assert force[on_rod].sum() == pytest.approx(G / (2 * math.cos(alpha)), rel=1e-12)


def _v_groove() -> fb.TriangleMesh:
    """A block 0.6 m wide (x), 1 m long (y), with a V-groove along y on top: its faces through the apex at the
    origin rise at β = atan(2/3) to the block's top at z = 0.2 m, x = ±0.3 m; its bottom at z = −0.2 m."""
    section = np.array([(-0.3, -0.2), (0.3, -0.2), (0.3, 0.2), (0.0, 0.0), (-0.3, 0.2)])  # anticlockwise in x–z
    points = np.array([(x, y, z) for y in (-0.5, 0.5) for x, z in section])
    caps = [(0, 1, 3), (1, 2, 3), (0, 3, 4)]
    triangles = [(a, c, b) for a, b, c in caps] + [(a + 5, b + 5, c + 5) for a, b, c in caps]
    for i in range(5):
        j = (i + 1) % 5
        triangles += [(i, j, j + 5), (i, j + 5, i + 5)]
    block = trimesh.Trimesh(points, triangles, process=False)
    block.fix_normals()
    return fb.TriangleMesh(block.vertices, block.faces)


def test_a_cylinder_in_a_meshed_v_groove_rests_on_both_faces_with_the_closed_forms_reactions():
    """A cylinder (axis along y) in a frictionless V-groove whose faces rise at β: each rim's two least distances lie
    on the two faces, and at rest after 0.3 s each face carries m g/(2 cos β) with the centre r/cos β above the apex
    (1e-12 m; measured 7e-18 m). Four points hold a rigid body with three directions to hold: its impulses meet the
    law to its tolerance, so the forces to 1e-9 (measured 1.6e-11) and speeds that jitter below 1e-11 (measured
    1.5e-12 rad/s)."""
    groove = _v_groove()
    tree = _free(1.0, _inertia(1))
    contacts = fb.cylinder_contacts(tree, "body", LENGTH, RADIUS, groove, axis=(0.0, 1.0, 0.0))
    beta = math.atan2(0.2, 0.3)
    height = RADIUS / math.cos(beta)
    system = fb.System([tree], constraints=contacts, q0=(0.0, 0.0, height + 0.002, 0.0, 0.0, 0.0))
    run = fb.simulate(system, 0.3, integrator=fb.MoreauJean(dt=1e-3))
    assert np.abs(run.v[-1]).max() < 1e-11
    assert run.q[-1, 2] == pytest.approx(height, abs=1e-12)
    asm = system.assemble()
    ws = asm.workspace(run.times[-1], run.q[-1], run.v[-1])
    force = run.histories["contact_normal_force"][-1]
    side = np.array([np.sign(c.contact_point(ws)[0][0]) for c in asm.contacts])
    for sign in (-1.0, 1.0):
        assert force[side == sign].sum() == pytest.approx(G / (2 * math.cos(beta)), rel=1e-9)
