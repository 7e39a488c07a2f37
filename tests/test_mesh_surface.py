"""fb.TriangleMesh (flexbody.constraints.mesh_surface): a closed triangle mesh's signed distance against trimesh's, and
a contact on a mesh against the same contact on the box the mesh describes."""

from __future__ import annotations

import numpy as np
import pytest

import flexbody as fb
from flexbody.constraints.mesh_distance import nearest_feature
from flexbody.errors import ConstraintError

trimesh = pytest.importorskip("trimesh")


@pytest.mark.parametrize(
    "shape",
    [
        lambda: trimesh.creation.icosphere(subdivisions=2, radius=0.5),
        lambda: trimesh.creation.torus(0.5, 0.15),  # not convex: the pseudonormals decide the sign
        lambda: trimesh.creation.box((0.4, 0.2, 0.3)),
    ],
    ids=["icosphere", "torus", "box"],
)
def test_the_signed_distance_is_trimeshs(shape):
    """300 points around each mesh: the distance equals trimesh.proximity.signed_distance (whose sign is positive
    inside) to 1e-15 with no sign disagreeing (measured 1.1e-16); the gradient is the distance's (central
    differences, 1e-8)."""
    mesh = shape()
    surface = fb.TriangleMesh(mesh.vertices, mesh.faces)
    points = np.random.default_rng(3).uniform(-0.8, 0.8, size=(300, 3))
    ours = np.array([surface.value(x)[0] for x in points])
    np.testing.assert_allclose(ours, -trimesh.proximity.signed_distance(mesh, points), atol=1e-15)
    for x in points[:20]:
        step = 1e-6
        numeric = [(surface.value(x + step * e)[0] - surface.value(x - step * e)[0]) / (2 * step) for e in np.eye(3)]
        np.testing.assert_allclose(surface.gradient(x)[0], numeric, atol=1e-8)


@pytest.mark.parametrize("reach", [None, 0.08])
def test_the_grid_is_exact_within_each_cutoff_and_a_bound_of_the_right_sign_beyond(reach):
    """The batched query through the grid (a torus of 2 048 triangles, 4 000 points in [−1.5, 1.5]³ with random
    cutoffs 0–0.4 m) against the pass over all triangles (trimesh's distance, the test above): where |s| ≤
    its cutoff it is the same to round-off (measured: equal), with the gradient of the single-point query;
    everywhere else it is exact or a lower bound of |s| (at least the cutoff) with the right sign (the deep inside of
    the tube and the far outside included). (trimesh itself is off by up to 4e-8 at the far points, so it is not the
    oracle here.)"""
    mesh = trimesh.creation.torus(0.5, 0.15)
    surface = fb.TriangleMesh(mesh.vertices, mesh.faces, reach=reach)
    rng = np.random.default_rng(5)
    points = np.vstack([rng.uniform(-1.5, 1.5, size=(3000, 3)), rng.uniform(-0.6, 0.6, size=(1000, 3))])
    cutoff = rng.uniform(0.0, 0.4, size=len(points))
    s, gradient, nearest, feature = surface.signed_distances(points, cutoff)
    exact = np.array([nearest_feature(x, surface.corners, surface.triangles, surface.normals)[0] for x in points])
    near = np.abs(exact) <= cutoff
    assert np.all(feature[near] >= 0)
    np.testing.assert_allclose(s[feature >= 0], exact[feature >= 0], atol=1e-15)
    found = feature >= 0
    np.testing.assert_allclose(np.linalg.norm(points[found] - nearest[found], axis=1), np.abs(exact[found]), atol=1e-15)
    bound = ~found
    assert bound.sum() > 500 and np.all(np.sign(s[bound]) == np.sign(exact[bound]))
    assert np.all(np.abs(s[bound]) <= np.abs(exact[bound])) and np.all(np.abs(s[bound]) >= cutoff[bound])
    for i in np.flatnonzero(found)[:10]:
        np.testing.assert_allclose(gradient[i], surface.gradient(points[i])[0], atol=1e-15)


def test_a_point_slides_off_a_meshed_table_as_off_the_box():
    """A point sliding at 1 m/s on the top of a meshed box (12 triangles) moves as on fb.Box of the same size."""
    tree = fb.RigidTree("point", gravity=(0.0, 0.0, -9.81))
    tree.add_link("x", None, fb.Prismatic((1.0, 0.0, 0.0)))
    tree.add_link("z", "x", fb.Prismatic((0.0, 0.0, 1.0)), mass=1.0)
    block = trimesh.creation.box((0.4, 0.4, 0.2))
    block.apply_translation((0.0, 0.0, -0.1))
    runs = []
    for table in (fb.TriangleMesh(block.vertices, block.faces), fb.Box((0.0, 0.0, -0.1), (0.4, 0.4, 0.2))):
        system = fb.System([tree], constraints=[fb.Contact(tree.point("z"), table, name="table")])
        runs.append(fb.simulate(system, 0.3, integrator=fb.MoreauJean(dt=1e-4), v0=(1.0, 0.0)))
    np.testing.assert_allclose(runs[0].q, runs[1].q, atol=1e-12)
    np.testing.assert_allclose(runs[0].histories["contact_normal_force"], runs[1].histories["contact_normal_force"])


def _falling_block(table, **settings):
    """A soft block of 2 × 2 × 1 bricks dropped 5 mm onto ``table`` with friction, its boundary nodes the contacts."""
    mesh = fb.mesh.box((0.1, 0.1, 0.05), (2, 2, 1), origin=(-0.05, -0.05, 0.005))
    body = fb.FlexibleBody("block", mesh, fb.StVenantKirchhoff(young=1e5, poisson=0.3, density=500.0))
    contacts = fb.node_contacts(body, table, friction=0.4)
    system = fb.System([body], loads=[fb.Gravity(body)], constraints=contacts)
    v0 = np.tile([0.3, 0.0, 0.0], body.n_nodes)
    return fb.simulate(system, 0.08, integrator=fb.MoreauJean(dt=1e-3, **settings), v0=v0)


def test_a_flexible_block_lands_on_a_meshed_table_as_on_the_box():
    """The nodes of a flexible block against a meshed box (evaluated together through the grid) move as against
    fb.Box of the same size (each node on its own): positions to 1e-12, forces equal."""
    block = trimesh.creation.box((0.4, 0.4, 0.2))
    block.apply_translation((0.0, 0.0, -0.1))
    meshed = _falling_block(fb.TriangleMesh(block.vertices, block.faces))
    boxed = _falling_block(fb.Box((0.0, 0.0, -0.1), (0.4, 0.4, 0.2)))
    assert meshed.histories["contact_normal_force"].max() > 0.0
    np.testing.assert_allclose(meshed.q, boxed.q, atol=1e-12)
    np.testing.assert_allclose(
        meshed.histories["contact_normal_force"], boxed.histories["contact_normal_force"], atol=1e-9
    )


def test_a_node_deeper_in_a_mesh_than_its_cutoff_stops_the_run_naming_it():
    """A start 4 cm inside a meshed table of 2.1 cm reach (allowed as an initial penetration): the first step cannot
    tell how deep its nodes are within their cutoff, so the run stops with a StateError naming them."""
    block = trimesh.creation.box((0.4, 0.4, 0.2)).subdivide().subdivide().subdivide()
    block.apply_translation((0.0, 0.0, -0.055))
    assert fb.TriangleMesh(block.vertices, block.faces).reach < 0.022
    with pytest.raises(fb.StateError, match=r"deeper than their cutoff.*block.node"):
        _falling_block(fb.TriangleMesh(block.vertices, block.faces), initial_penetration=1.0)


def test_an_open_or_broken_mesh_is_refused():
    block = trimesh.creation.box((0.4, 0.4, 0.2))
    with pytest.raises(ConstraintError, match="not closed"):
        fb.TriangleMesh(block.vertices, block.faces[:-1])
    with pytest.raises(ConstraintError, match="triangles must be"):
        fb.TriangleMesh(block.vertices, block.faces + 100)
    with pytest.raises(ConstraintError, match="degenerate"):
        fb.TriangleMesh([[0, 0, 0], [1, 0, 0], [2, 0, 0], [0, 1, 0]], [[0, 1, 2], [0, 1, 3], [1, 2, 3], [2, 0, 3]])
