"""Tests of flexbody.fem.mesh: box builder, H8 → H27, refinement, named sets, meshio I/O, bad input."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import meshio
import numpy as np
import pytest

import flexbody.fem.mesh as fm
from flexbody.errors import MeshError
from flexbody.fem.elements import FACE_AXIS_SIDE, HEX27_NODES, reference_hex

MESHES = Path(__file__).resolve().parents[1] / "meshes"
PLANES = {"x0": (0, 0), "x1": (0, 1), "y0": (1, 0), "y1": (1, 1), "z0": (2, 0), "z1": (2, 1)}
SIZE, DIVISIONS, ORIGIN = (2.0, 0.6, 0.3), (3, 2, 1), (0.5, -1.0, 2.0)


def plane_value(name: str) -> tuple[int, float]:
    axis, side = PLANES[name]
    return axis, ORIGIN[axis] + side * SIZE[axis]


def assert_vtk_h27(mesh: fm.HexMesh) -> None:
    """Every 27-node cell's nodes equal the trilinear map of the VTK reference nodes through its corners."""
    n8 = reference_hex(8).shape_functions(HEX27_NODES)  # (27, 8)
    x = mesh.points[mesh.cells]  # (m, 27, 3)
    expected = np.einsum("ka,mai->mki", n8, x[:, :8])
    np.testing.assert_allclose(x, expected, atol=1e-12)


def node_map(a: fm.HexMesh, b: fm.HexMesh) -> np.ndarray:
    """perm with a.points[i] == b.points[perm[i]] (up to 1e-9 m); asserts it is a bijection."""
    d = np.linalg.norm(a.points[:, None, :] - b.points[None, :, :], axis=2)
    perm = d.argmin(axis=1)
    assert np.all(d[np.arange(len(perm)), perm] < 1e-9)
    assert len(np.unique(perm)) == b.n_nodes == a.n_nodes
    return perm


def assert_same_mesh(a: fm.HexMesh, b: fm.HexMesh) -> None:
    """Same points, cells (up to node and cell renumbering) and named sets."""
    perm = node_map(a, b)
    cells_a = {tuple(row): e for e, row in enumerate(perm[a.cells])}
    cell_perm = np.array([cells_a[tuple(row)] for row in b.cells])  # b element -> a element
    assert sorted(cells_a) == sorted(map(tuple, b.cells))
    assert a.node_sets.keys() == b.node_sets.keys()
    for name, nodes in a.node_sets.items():
        np.testing.assert_array_equal(np.sort(perm[nodes]), b.node_sets[name], err_msg=name)
    assert a.face_sets.keys() == b.face_sets.keys()
    inv = np.argsort(cell_perm)
    for name, rows in a.face_sets.items():
        mapped = np.column_stack([inv[rows[:, 0]], rows[:, 1]])
        np.testing.assert_array_equal(np.unique(mapped, axis=0), b.face_sets[name], err_msg=name)
    assert a.element_sets.keys() == b.element_sets.keys()
    for name, elems in a.element_sets.items():
        np.testing.assert_array_equal(np.sort(inv[elems]), b.element_sets[name], err_msg=name)


def with_extra_sets(mesh: fm.HexMesh) -> fm.HexMesh:
    """A box mesh plus a node set unrelated to faces, a partial face set and element sets."""
    line = mesh.nodes_where(lambda p: (p[:, 1] < -0.99) & (p[:, 2] < 2.01))
    node_sets = dict(mesh.node_sets, corner=[0], line=line)
    face_sets = dict(mesh.face_sets, patch=mesh.face_set("z1")[:2])
    element_sets = {"left": [0, 3], "right": [2, 5], "all": np.arange(mesh.n_elements)}
    return fm.HexMesh(mesh.points, mesh.cells, node_sets, face_sets, element_sets)


# ----------------------------------------------------------------------------------------- box
@pytest.mark.parametrize("order", [1, 2])
def test_box_counts(order):
    mesh = fm.box(SIZE, DIVISIONS, order=order, origin=ORIGIN)
    nx, ny, nz = DIVISIONS
    assert mesh.n_elements == nx * ny * nz
    assert mesh.n_nodes == (order * nx + 1) * (order * ny + 1) * (order * nz + 1)
    assert mesh.nodes_per_cell == (8 if order == 1 else 27) and mesh.order == order
    assert mesh.points.dtype == np.float64 and mesh.cells.dtype == np.int64
    np.testing.assert_allclose(mesh.points.min(axis=0), ORIGIN)
    np.testing.assert_allclose(mesh.points.max(axis=0), np.add(ORIGIN, SIZE))


@pytest.mark.parametrize("order", [1, 2])
def test_box_elements_x_fastest_and_positive_volume(order):
    mesh = fm.box(SIZE, DIVISIONS, order=order, origin=ORIGIN)
    centroids = mesh.points[mesh.cells[:, :8]].mean(axis=1)
    assert np.all(np.diff(centroids[: DIVISIONS[0], 0]) > 0)
    ref = reference_hex(mesh.nodes_per_cell)
    jac = np.einsum("mai,ak->mik", mesh.points[mesh.cells], ref.shape_gradients(np.zeros((1, 3)))[0])
    volume = np.prod(SIZE) / np.prod(DIVISIONS)
    np.testing.assert_allclose(8 * np.linalg.det(jac), volume)


@pytest.mark.parametrize("order", [1, 2])
def test_box_node_sets_are_the_boundary_planes(order):
    mesh = fm.box(SIZE, DIVISIONS, order=order, origin=ORIGIN)
    assert sorted(mesh.node_sets) == sorted(PLANES)
    for name in PLANES:
        axis, value = plane_value(name)
        nodes = mesh.node_set(name)
        np.testing.assert_allclose(mesh.points[nodes, axis], value)
        on_plane = mesh.nodes_where(lambda p, axis=axis, value=value: np.abs(p[:, axis] - value) < 1e-12)
        np.testing.assert_array_equal(nodes, on_plane)
        np.testing.assert_array_equal(mesh.face_set_nodes(name), nodes)


@pytest.mark.parametrize("order", [1, 2])
def test_box_face_sets_lie_on_their_planes(order):
    mesh = fm.box(SIZE, DIVISIONS, order=order, origin=ORIGIN)
    ref = reference_hex(mesh.nodes_per_cell)
    for name in PLANES:
        axis, value = plane_value(name)
        rows = mesh.face_set(name)
        assert len(rows) == np.prod(DIVISIONS) // DIVISIONS[axis]
        for elem, face in rows:
            assert FACE_AXIS_SIDE[face][0] == axis
            np.testing.assert_allclose(mesh.points[mesh.cells[elem, ref.face_nodes(face)], axis], value)


def test_box_order2_equals_to_quadratic_up_to_renumbering():
    direct = fm.box(SIZE, DIVISIONS, order=2, origin=ORIGIN)
    converted = fm.box(SIZE, DIVISIONS, order=1, origin=ORIGIN).to_quadratic()
    perm = node_map(converted, direct)
    np.testing.assert_array_equal(perm[converted.cells], direct.cells)
    assert_same_mesh(converted, direct)


def test_h27_cells_follow_vtk_order():
    assert_vtk_h27(fm.box(SIZE, DIVISIONS, order=2, origin=ORIGIN))
    rng = np.random.default_rng(0)
    mesh = fm.box(SIZE, DIVISIONS, origin=ORIGIN)
    distorted = mesh.with_points(mesh.points + 0.05 * rng.standard_normal(mesh.points.shape))
    assert_vtk_h27(distorted.to_quadratic())


@pytest.mark.parametrize("divisions", [(1, 1, 1), (3, 2, 1), (2, 3, 4)])
def test_to_quadratic_node_count(divisions):
    nx, ny, nz = divisions
    mesh = fm.box(divisions=divisions)
    quad = mesh.to_quadratic()
    edges = nx * (ny + 1) * (nz + 1) + (nx + 1) * ny * (nz + 1) + (nx + 1) * (ny + 1) * nz
    faces = (nx + 1) * ny * nz + nx * (ny + 1) * nz + nx * ny * (nz + 1)
    assert quad.n_nodes == mesh.n_nodes + edges + faces + nx * ny * nz
    assert quad.n_nodes == (2 * nx + 1) * (2 * ny + 1) * (2 * nz + 1)
    np.testing.assert_array_equal(quad.cells[:, :8], mesh.cells)
    np.testing.assert_array_equal(quad.points[: mesh.n_nodes], mesh.points)
    for name, rows in mesh.face_sets.items():
        np.testing.assert_array_equal(quad.face_set(name), rows)


def test_to_quadratic_extends_node_sets_with_all_parents_rule():
    mesh = fm.box(divisions=(2, 1, 1))
    mesh = fm.HexMesh(mesh.points, mesh.cells, {"edge": [0, 1], "single": [0]})
    quad = mesh.to_quadratic()
    np.testing.assert_array_equal(quad.node_set("single"), [0])
    edge = quad.node_set("edge")
    assert len(edge) == 3
    np.testing.assert_allclose(quad.points[edge[2]], mesh.points[[0, 1]].mean(axis=0))


def test_refined_splits_each_hexahedron_in_eight():
    mesh = fm.HexMesh(*_sets_only(fm.box(SIZE, DIVISIONS, origin=ORIGIN)), element_sets={"first": [0]})
    fine = mesh.refined()
    assert fine.n_elements == 8 * mesh.n_elements
    np.testing.assert_array_equal(fine.element_set("first"), np.arange(8))
    child_centroids = fine.points[fine.cells[:8]].mean(axis=1) - ORIGIN
    assert np.all(child_centroids < np.array(SIZE) / DIVISIONS)
    ref = reference_hex(8)
    jac = np.einsum("mai,ak->mik", fine.points[fine.cells], ref.shape_gradients(np.zeros((1, 3)))[0])
    assert np.all(np.linalg.det(jac) > 0)
    regular = fm.box(SIZE, 2 * np.array(DIVISIONS), origin=ORIGIN)
    assert_same_mesh(fm.HexMesh(*_sets_only(fine)), regular)


def _sets_only(mesh):
    return mesh.points, mesh.cells, mesh.node_sets, mesh.face_sets


def test_refined_rejects_order_2():
    with pytest.raises(MeshError, match="order-1"):
        fm.box(order=2).refined()


def test_to_quadratic_rejects_order_2():
    with pytest.raises(MeshError, match="already"):
        fm.box(order=2).to_quadratic()


def test_with_points_keeps_topology_and_sets():
    mesh = fm.box(SIZE, DIVISIONS)
    moved = mesh.with_points(mesh.points + 1.0)
    np.testing.assert_array_equal(moved.cells, mesh.cells)
    np.testing.assert_array_equal(moved.node_set("x1"), mesh.node_set("x1"))
    with pytest.raises(MeshError, match="shape"):
        mesh.with_points(mesh.points[:-1])


def test_arrays_are_read_only_copies():
    points = fm.box().points.copy()
    mesh = fm.HexMesh(points, fm.box().cells)
    points[0] = 99.0
    assert mesh.points[0, 0] == 0.0
    with pytest.raises(ValueError):
        mesh.points[0, 0] = 1.0


def test_vtk_interpolation_matches_reference_nodes():
    """VTK's own shape functions (pcoords in [0, 1]^3) equal ours, so HEX8/HEX27_NODES are VTK's order."""
    vtk_cells = pytest.importorskip("vtkmodules.vtkCommonDataModel")
    xi = np.random.default_rng(1).uniform(-1.0, 1.0, (6, 3))
    for cell, n in ((vtk_cells.vtkHexahedron(), 8), (vtk_cells.vtkTriQuadraticHexahedron(), 27)):
        weights = []
        for point in xi:
            w = [0.0] * n
            cell.InterpolateFunctions(list((point + 1) / 2), w)
            weights.append(w)
        np.testing.assert_allclose(reference_hex(n).shape_functions(xi), weights, atol=1e-14)


# ----------------------------------------------------------------------------------------- I/O
@pytest.mark.parametrize("suffix,order", [(".vtu", 1), (".vtu", 2), (".inp", 1), (".msh", 1), (".msh", 2), (".vtk", 2)])
def test_write_read_round_trip(tmp_path, suffix, order):
    mesh = with_extra_sets(fm.box(SIZE, DIVISIONS, order=order, origin=ORIGIN))
    expected = mesh
    if suffix == ".msh":  # overlapping element sets are not representable as Gmsh physical volumes,
        mesh = fm.HexMesh(*_sets_only(mesh), element_sets={"left": [0, 3], "right": [2, 5]})
        node_sets = dict(mesh.node_sets, patch=mesh.face_set_nodes("patch"))  # a physical surface is
        expected = fm.HexMesh(mesh.points, mesh.cells, node_sets, mesh.face_sets, mesh.element_sets)  # both
    path = tmp_path / f"mesh{suffix}"
    fm.write(mesh, path)
    back = fm.read(path)
    assert back.order == order
    assert_same_mesh(expected, back)


def test_write_inp_rejects_order_2(tmp_path):
    with pytest.raises(MeshError, match="C3D8"):
        fm.write(fm.box(order=2), tmp_path / "m.inp")


def test_read_drops_unused_nodes_and_maps_sets():
    box = fm.box(divisions=(2, 1, 1))
    points = np.vstack([[[9.0, 9.0, 9.0]], box.points])  # node 0 unused
    raw = meshio.Mesh(
        points,
        [("vertex", np.array([[0], [1]])), ("hexahedron", box.cells + 1)],
        point_sets={"origin": np.array([0, 1])},
    )
    mesh = fm.from_meshio(raw)
    assert mesh.n_nodes == box.n_nodes
    np.testing.assert_array_equal(mesh.points, box.points)
    np.testing.assert_array_equal(mesh.cells, box.cells)
    np.testing.assert_array_equal(mesh.node_set("origin"), [0])


def test_read_gmsh_physical_groups_and_repeated_hexahedra():
    box = fm.box(divisions=(2, 1, 1))
    quads = fm.face_quads(box, box.face_set("x1"))
    raw = meshio.Mesh(
        box.points,
        [("quad", quads), ("hexahedron", box.cells), ("hexahedron", box.cells[:1])],
        cell_data={"gmsh:physical": [np.array([7]), np.array([1, 2]), np.array([3])]},
        field_data={"tip": np.array([7, 2]), "a": np.array([1, 3]), "b": np.array([2, 3]), "c": np.array([3, 3])},
    )
    mesh = fm.from_meshio(raw)
    assert mesh.n_elements == 2
    np.testing.assert_array_equal(mesh.face_set("tip"), [[1, 1]])
    np.testing.assert_array_equal(mesh.node_set("tip"), box.node_set("x1"))
    np.testing.assert_array_equal(mesh.element_set("c"), [0])
    np.testing.assert_array_equal(mesh.element_set("b"), [1])


# ----------------------------------------------------------------------------------------- shipped meshes
def readme_counts() -> dict[str, tuple[int, int, int]]:
    """{file: (n_nodes, n_elements, nodes per cell)} from the table in meshes/README.md."""
    pattern = r"^\|\s*`([^`]+)`\s*\|\s*(\d+)\s*\|\s*(\d+)\s*\|\s*(\d+)\s*\|"
    rows = re.findall(pattern, (MESHES / "README.md").read_text(), flags=re.MULTILINE)
    return {name: (int(n), int(m), int(k)) for name, n, m, k in rows}


def test_readme_lists_every_shipped_mesh():
    shipped = {p.name for p in MESHES.iterdir() if p.suffix in (".msh", ".inp", ".vtu")}
    assert shipped and shipped == set(readme_counts())


@pytest.mark.parametrize("name", ["beam_h8.msh", "beam_h27.msh", "block.inp", "block.vtu", "gmsh_box_h27.msh"])
def test_shipped_mesh_counts_match_readme(name):
    mesh = fm.read(MESHES / name)
    assert (mesh.n_nodes, mesh.n_elements, mesh.nodes_per_cell) == readme_counts()[name]
    if mesh.order == 2:
        assert_vtk_h27(mesh)


@pytest.mark.parametrize("name", ["beam_h8.msh", "beam_h27.msh"])
def test_shipped_beam_sets(name):
    mesh = fm.read(MESHES / name)
    np.testing.assert_array_equal(mesh.element_set("beam"), np.arange(mesh.n_elements))
    for set_name, x in (("root", 0.0), ("tip", 2.0)):
        rows = mesh.face_set(set_name)
        assert len(rows) == 1
        np.testing.assert_allclose(mesh.points[mesh.face_set_nodes(set_name), 0], x)
        on_plane = mesh.nodes_where(lambda p, x=x: np.isclose(p[:, 0], x))
        np.testing.assert_array_equal(mesh.node_set(set_name), on_plane)


def test_gmsh_written_h27_file_reads_in_vtk_order():
    """meshes/gmsh_box_h27.msh was written by Gmsh itself: meshio must convert its node order to VTK's."""
    mesh = fm.read(MESHES / "gmsh_box_h27.msh")
    assert_vtk_h27(mesh)
    for name, x in (("xmin", 0.0), ("xmax", 2.0)):
        np.testing.assert_allclose(mesh.points[mesh.face_set_nodes(name), 0], x)
        assert len(mesh.node_set(name)) == 9
    np.testing.assert_array_equal(mesh.element_set("body"), [0, 1])


@pytest.mark.parametrize("name", ["block.inp", "block.vtu"])
def test_shipped_block_sets(name):
    mesh = fm.read(MESHES / name)
    assert sorted(mesh.element_sets) == ["block", "bottom"]
    assert len(mesh.element_set("bottom")) == 4
    for plane in PLANES:
        axis, side = PLANES[plane]
        np.testing.assert_allclose(mesh.points[mesh.node_set(plane), axis], side)
        np.testing.assert_allclose(mesh.points[mesh.face_set_nodes(plane), axis], side)


def test_make_meshes_reproduces_shipped_files(tmp_path):
    spec = importlib.util.spec_from_file_location("make_meshes", MESHES / "make_meshes.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(tmp_path)
    for name in ("beam_h8.msh", "beam_h27.msh", "block.inp", "block.vtu"):
        assert_same_mesh(fm.read(MESHES / name), fm.read(tmp_path / name))
    for name in ("beam_h8.msh", "beam_h27.msh"):
        assert (tmp_path / name).read_text() == (MESHES / name).read_text()


# ----------------------------------------------------------------------------------------- bad input
GOOD = fm.box(divisions=(2, 1, 1))


@pytest.mark.parametrize(
    "points,match",
    [
        (np.zeros((12, 2)), r"shape \(n, 3\), got \(12, 2\)"),
        (np.zeros(36), r"shape \(n, 3\)"),
        (np.where(np.arange(36).reshape(12, 3) == 16, np.nan, 0.0), "node 5 has non-finite"),
        (np.where(np.arange(36).reshape(12, 3) == 30, np.inf, 0.0), "node 10 has non-finite"),
        ([["a", "b", "c"]] * 12, "numeric"),
    ],
)
def test_bad_points(points, match):
    with pytest.raises(MeshError, match=match):
        fm.HexMesh(points, GOOD.cells)


@pytest.mark.parametrize(
    "cells,match",
    [
        (np.zeros((2, 4), dtype=int), r"wrong cell type.*\(2, 4\)"),
        (np.zeros((2, 20), dtype=int), r"wrong cell type.*\(2, 20\)"),
        (np.arange(8), r"wrong cell type.*\(8,\)"),
        (np.zeros((0, 8), dtype=int), "no cells"),
        (GOOD.cells.astype(float), "integer"),
        (np.where(GOOD.cells == 11, 12, GOOD.cells), r"element 1 refers to node\(s\) \[12\] outside 0..11"),
        (np.where(GOOD.cells == 0, -1, GOOD.cells), r"element 0 refers to node\(s\) \[-1\]"),
        (np.vstack([GOOD.cells[0], np.r_[GOOD.cells[1, :7], GOOD.cells[1, 0]]]), "element 1 repeats node"),
    ],
)
def test_bad_cells(cells, match):
    with pytest.raises(MeshError, match=match):
        fm.HexMesh(GOOD.points, cells)


def test_bad_sets():
    with pytest.raises(MeshError, match="node set 'clamp' has node indices outside"):
        fm.HexMesh(GOOD.points, GOOD.cells, node_sets={"clamp": [0, 12]})
    with pytest.raises(MeshError, match="node set 'neg'"):
        fm.HexMesh(GOOD.points, GOOD.cells, node_sets={"neg": [-1]})
    with pytest.raises(MeshError, match="face set 'load' row 1 refers to element 2"):
        fm.HexMesh(GOOD.points, GOOD.cells, face_sets={"load": [[0, 1], [2, 0]]})
    with pytest.raises(MeshError, match="face set 'load' row 0 has local face 6"):
        fm.HexMesh(GOOD.points, GOOD.cells, face_sets={"load": [[0, 6]]})
    with pytest.raises(MeshError, match="face set 'load' must have shape"):
        fm.HexMesh(GOOD.points, GOOD.cells, face_sets={"load": [[0, 1, 2]]})
    with pytest.raises(MeshError, match="element set 'region'"):
        fm.HexMesh(GOOD.points, GOOD.cells, element_sets={"region": [5]})


def test_unknown_set_names_list_available():
    with pytest.raises(MeshError, match=r"unknown node set 'tip'; available: \['x0'"):
        GOOD.node_set("tip")
    with pytest.raises(MeshError, match=r"unknown face set 'tip'; available: \['x0'"):
        GOOD.face_set("tip")
    with pytest.raises(MeshError, match="unknown face set 'tip'"):
        GOOD.face_set_nodes("tip")
    with pytest.raises(MeshError, match="unknown element set 'steel'; available: none"):
        GOOD.element_set("steel")


def test_nodes_where_needs_a_boolean_mask():
    with pytest.raises(MeshError, match="boolean array"):
        GOOD.nodes_where(lambda p: p[:, 0])


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"size": (1.0, 0.0, 1.0)}, "size"),
        ({"size": (1.0, np.nan, 1.0)}, "size"),
        ({"size": (1.0, 1.0)}, "size"),
        ({"divisions": (1, 0, 1)}, "divisions"),
        ({"divisions": (1, 2.5, 1)}, "divisions"),
        ({"divisions": (1, np.inf, 1)}, "divisions"),
        ({"order": 3}, "order"),
        ({"origin": (0.0, np.inf, 0.0)}, "origin"),
    ],
)
def test_bad_box(kwargs, match):
    with pytest.raises(MeshError, match=match):
        fm.box(**kwargs)


def test_read_missing_and_unreadable_files(tmp_path):
    with pytest.raises(MeshError, match=r"nope.msh' does not exist"):
        fm.read(tmp_path / "nope.msh")
    bad = tmp_path / "bad.msh"
    bad.write_text("this is not a mesh\n")
    with pytest.raises(MeshError, match=r"cannot read mesh file '.*bad.msh'.*as gmsh"):
        fm.read(bad)
    odd = tmp_path / "mesh.unknownsuffix"
    odd.write_text("x")
    with pytest.raises(MeshError, match="unknown suffix"):
        fm.read(odd)


def test_read_rejects_meshes_without_volume_cells(tmp_path):
    path = tmp_path / "surface.vtu"
    meshio.write(path, meshio.Mesh(np.eye(4, 3), [("triangle", np.array([[0, 1, 2], [0, 2, 3]]))]))
    with pytest.raises(MeshError, match=r"no volume cells flexbody takes.*found: triangle \(2\)"):
        fm.read(path)


def test_read_rejects_other_volume_cells_and_mixed_orders(tmp_path):
    quad = fm.box(order=2)
    tet = np.array([[0, 1, 2, 4]])
    path = tmp_path / "hex_tet.vtu"
    meshio.write(path, meshio.Mesh(GOOD.points, [("hexahedron", GOOD.cells), ("tetra", tet)]))
    with pytest.raises(MeshError, match=r"mixes the volume cells hexahedron, tetra"):
        fm.read(path)
    path = tmp_path / "mixed.vtu"
    blocks = [("hexahedron", quad.cells[:, :8]), ("hexahedron27", quad.cells)]
    meshio.write(path, meshio.Mesh(quad.points, blocks))
    with pytest.raises(MeshError, match="mixes the volume cells hexahedron, hexahedron27"):
        fm.read(path)


def test_read_rejects_set_quads_that_are_not_faces():
    raw = meshio.Mesh(
        GOOD.points,
        [("hexahedron", GOOD.cells), ("quad", np.array([[0, 4, 10, 6]]))],
        cell_sets={"diag": [np.array([], dtype=int), np.array([0])]},
    )
    with pytest.raises(MeshError, match=r"set 'diag' has a face cell .* not a face of any hexahedron cell"):
        fm.from_meshio(raw, source="diag.msh")
