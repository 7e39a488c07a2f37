"""Boxes and capsules on links against a fixed triangle mesh (flexbody.constraints.mesh_shape_points): the least gap
over their contacts against coal's distance, the gap rate against finite differences, and a crate and a capsule on
a meshed table's edge against the same on an exact box (fb.Box, whose contact polygon tests/test_box_manifold.py
checks against coal and the closed forms of statics and of a body pivoting about an edge)."""

from __future__ import annotations

from functools import partial

import coal
import numpy as np
import pytest
import trimesh
from placed import centre_at_distance
from scipy.spatial.transform import Rotation
from table_shapes import assert_gap_rates_over_the_edge, capsule, crate

import flexbody as fb

TABLE = fb.Box((0.0, 0.0, 0.0), (1.0, 1.0, 0.1))  # its top face at z = 0.05, its edge at x = 0.5
BLOCK = trimesh.creation.box((1.0, 1.0, 0.1))  # the same table, meshed (12 triangles)
MESHED = fb.TriangleMesh(BLOCK.vertices, BLOCK.faces)


def _coal(shape, R, centre):
    transform = coal.Transform3s()
    transform.setRotation(np.asarray(R, dtype=float))
    transform.setTranslation(np.asarray(centre, dtype=float))
    return shape, transform


def _coal_distance(shape, R, centre) -> float:
    table = _coal(coal.Box(1.0, 1.0, 0.1), np.eye(3), np.zeros(3))
    result = coal.DistanceResult()
    coal.distance(*_coal(shape, R, centre), *table, coal.DistanceRequest(), result)
    return result.min_distance


def test_only_the_features_that_can_poke_out_are_taken():
    """The meshed table: its 8 corners and 12 edges (the 6 face diagonals are flat and left out), each edge's normal
    the sum of two faces' at a right angle (√2 long). Its faces split into 16 triangles each: the vertices and edges
    inside the faces are left out, those along the table's edges (each split in four) kept."""
    vertices, edges, normals = MESHED.touching_features
    assert len(vertices) == 8 and len(edges) == 12
    assert np.allclose(np.abs(vertices), [0.5, 0.5, 0.05])
    assert np.allclose(np.linalg.norm(normals, axis=1), np.sqrt(2.0))
    grid = trimesh.creation.box((1.0, 1.0, 0.1)).subdivide().subdivide()
    vertices, edges, _ = fb.TriangleMesh(grid.vertices, grid.faces).touching_features
    on_edges = np.count_nonzero(np.isclose(np.abs(vertices), [0.5, 0.5, 0.05]), axis=1) >= 2
    assert len(vertices) == 8 + 12 * 3 and np.all(on_edges) and len(edges) == 12 * 4


def test_a_box_and_a_capsule_on_a_mesh_give_their_corners_or_ends_and_the_meshs_slots():
    """Against the meshed table a box gives its 8 corners and 4 + 4 slots of the table's vertices and edges
    (``box0`` … ``box15``), a capsule its 2 end balls and 4 + 4 (``capsule0`` … ``capsule9``); against an icosahedron
    (12 vertices, 30 edges) the same."""
    tree = fb.RigidTree("body", gravity=(0.0, 0.0, 0.0))
    tree.add_link("body", None, fb.FreeFlyer(), mass=1.0, inertia=(1.0, 1.0, 1.0))
    icosahedron = trimesh.creation.icosphere(subdivisions=0)
    for mesh in (MESHED, fb.TriangleMesh(icosahedron.vertices, icosahedron.faces)):
        boxes = fb.box_contacts(tree, "body", (0.2, 0.2, 0.2), mesh)
        capsules = fb.capsule_contacts(tree, "body", 0.3, 0.05, mesh)
        assert [c.name for c in boxes] == [f"box{k}" for k in range(16)]
        assert [c.name for c in capsules] == [f"capsule{k}" for k in range(10)]


@pytest.mark.parametrize("shape", ["box", "capsule"])
def test_the_least_gap_is_coals_distance_at_random_poses(shape):
    """Boxes (random sizes) and capsules (random lengths and radii) in random orientations placed 0–1 mm from the
    meshed table in random directions: the least gap over all their contacts — corners or end balls on the mesh's
    signed distance, the mesh's vertices and edges against the shape — equals coal's distance between the shape and
    the table to 1e-9 m, whichever features touch first (face on face, edge across edge, corner on face, the
    table's corner on the shape's face)."""
    rng = np.random.default_rng(1)
    for _ in range(40):
        R = Rotation.random(random_state=rng).as_matrix()
        if shape == "box":
            half = rng.uniform(0.03, 0.2, 3)
            coal_shape = coal.Box(*(2.0 * half))
        else:
            length, radius = rng.uniform(0.05, 0.3), rng.uniform(0.01, 0.05)
            coal_shape = coal.Capsule(radius, length)
        direction = rng.normal(size=3)
        direction /= np.linalg.norm(direction)
        target = rng.uniform(0.0, 1e-3)
        centre = centre_at_distance(partial(_coal_distance, coal_shape, R), np.zeros(3), direction, target)
        tree = fb.RigidTree("body", gravity=(0.0, 0.0, 0.0))
        tree.add_link("body", None, fb.FreeFlyer(), mass=1.0, inertia=(1.0, 1.0, 1.0))
        if shape == "box":
            contacts = fb.box_contacts(tree, "body", 2.0 * half, MESHED)
        else:  # coal's capsule lies along its z axis
            contacts = fb.capsule_contacts(tree, "body", length, radius, MESHED)
        asm = fb.System([tree], constraints=contacts).assemble()
        q = np.concatenate([centre, Rotation.from_matrix(R).as_rotvec()])
        ws = asm.workspace(0.0, q, np.zeros(6))
        gaps = np.array([c.gap(ws) for c in asm.contacts])
        assert gaps.min() == pytest.approx(_coal_distance(coal_shape, R, centre), abs=1e-9)


@pytest.mark.parametrize("shape", ["box", "capsule"])
def test_the_gap_rate_is_the_normal_velocity_of_the_material_point(shape):
    """Lying 0–5 mm above the meshed table over its edge, turned about the vertical, moving in random directions:
    each contact's n·(J v) equals the central difference of its gap along the motion (relative 1e-6)."""
    system, _ = crate(MESHED, 0.5) if shape == "box" else capsule(MESHED, 0.5)
    assert_gap_rates_over_the_edge(system, 0.15 if shape == "box" else 0.1)


@pytest.mark.parametrize(("shape", "x"), [("box", 0.45), ("box", 0.52), ("capsule", 0.45), ("capsule", 0.7)])
def test_on_a_meshed_tables_edge_it_moves_as_on_the_exact_box(shape, x):
    """A crate with its centre 5 cm inside the edge (it rests on the table's edge and its inner corners) and 2 cm
    past it (it tips about the edge), a capsule 5 cm inside (it rests by the lever rule) and 20 cm past (it rolls
    off): on the meshed table, whose edge under the crate's face is a mesh edge across the crate's edges, the motion
    equals that on fb.Box (positions 1e-9 m, speeds 1e-9 m/s over 0.3 s; the normal forces sum to the same)."""
    build = crate if shape == "box" else capsule
    runs = [fb.simulate(build(table, x)[0], 0.3, integrator=fb.MoreauJean(dt=1e-3)) for table in (TABLE, MESHED)]
    exact, meshed = runs
    np.testing.assert_allclose(meshed.q, exact.q, atol=1e-9)
    np.testing.assert_allclose(meshed.v, exact.v, atol=1e-9)
    np.testing.assert_allclose(
        meshed.histories["contact_normal_force"].sum(axis=1),
        exact.histories["contact_normal_force"].sum(axis=1),
        atol=1e-8,
    )
