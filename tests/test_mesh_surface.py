"""fb.TriangleMesh (flexbody.constraints.mesh_surface): a closed triangle mesh's signed distance against trimesh's, and
a contact on a mesh against the same contact on the box the mesh describes."""

from __future__ import annotations

import numpy as np
import pytest

import flexbody as fb
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


def test_an_open_or_broken_mesh_is_refused():
    block = trimesh.creation.box((0.4, 0.4, 0.2))
    with pytest.raises(ConstraintError, match="not closed"):
        fb.TriangleMesh(block.vertices, block.faces[:-1])
    with pytest.raises(ConstraintError, match="triangles must be"):
        fb.TriangleMesh(block.vertices, block.faces + 100)
    with pytest.raises(ConstraintError, match="degenerate"):
        fb.TriangleMesh([[0, 0, 0], [1, 0, 0], [2, 0, 0], [0, 1, 0]], [[0, 1, 2], [0, 1, 3], [1, 2, 3], [2, 0, 3]])
