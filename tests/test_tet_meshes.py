"""Tetrahedral meshes from files and from geometry: round trips through Gmsh, VTU, Abaqus (C3D4, C3D10) and Exodus with
the named sets, gmsh meshing of a .geo script and of a STEP file (``fb.mesh.from_geometry``), and a meshed part
exported as a ParaView series.

Independent references: the volume of the bracket of ``meshes/bracket.geo`` in closed form (plates minus the bolt
hole, 2.42814e-5 m³): 10-node tetrahedra with curved edges on the hole give it to 5e-6 relative at 4 mm elements,
4-node ones (a polygonal hole) to 0.2 %; the clamp face's area 240 mm² exactly (a plane rectangle).
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

import flexbody as fb
from flexbody.errors import MeshError

BRACKET = Path(__file__).resolve().parents[1] / "meshes" / "bracket.geo"
BRACKET_VOLUME = 0.060 * 0.040 * 0.006 + 0.006 * 0.040 * 0.044 - np.pi * 0.006**2 * 0.006  # m³
STEEL = dict(young=200e9, poisson=0.3, density=7800.0)


def tet_box(order):
    mesh = fb.mesh.box((1.0, 0.5, 0.3), (2, 2, 1), order=order, cells="tetrahedra")
    return fb.mesh.TetMesh(mesh.points, mesh.cells, mesh.node_sets, mesh.face_sets, {"left": np.arange(12)})


@pytest.mark.parametrize("order", [1, 2], ids=["Tet4", "Tet10"])
@pytest.mark.parametrize("suffix", [".msh", ".vtu", ".inp"])
def test_tetrahedral_meshes_round_trip_with_their_sets(order, suffix, tmp_path):
    mesh = tet_box(order)
    fb.mesh.write(mesh, tmp_path / f"m{suffix}")
    back = fb.mesh.read(tmp_path / f"m{suffix}")
    assert isinstance(back, fb.TetMesh) and back.order == order
    np.testing.assert_allclose(back.points, mesh.points, rtol=1e-15, atol=1e-15)
    np.testing.assert_array_equal(back.cells, mesh.cells)
    for sets in ("node_sets", "face_sets", "element_sets"):
        assert sorted(getattr(back, sets)) == sorted(getattr(mesh, sets))
        for name, rows in getattr(mesh, sets).items():
            np.testing.assert_array_equal(getattr(back, sets)[name], rows)


@pytest.mark.parametrize("order", [1, 2], ids=["Tet4", "Tet10"])
def test_exodus_keeps_node_sets_and_names_what_it_drops(order, tmp_path, caplog):
    pytest.importorskip("netCDF4")
    mesh = tet_box(order)
    with caplog.at_level(logging.WARNING, logger="flexbody"):
        fb.mesh.write(mesh, tmp_path / "m.exo")
    assert "face set 'x0'" in caplog.text and "element set 'left'" in caplog.text
    back = fb.mesh.read(tmp_path / "m.exo")
    np.testing.assert_array_equal(back.cells, mesh.cells)
    for name, nodes in mesh.node_sets.items():
        np.testing.assert_array_equal(back.node_sets[name], nodes)


def test_abaqus_tetrahedron_surfaces_map_to_local_faces(tmp_path):
    """Abaqus C3D4 face labels: S1 = corners 1-2-3, S2 = 1-4-2, S3 = 2-4-3, S4 = 3-4-1 (1-based)."""
    path = tmp_path / "one.inp"
    points = [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]
    text = "*NODE\n" + "".join(f"{i + 1}, {x}, {y}, {z}\n" for i, (x, y, z) in enumerate(points))
    text += "*ELEMENT, TYPE=C3D4, ELSET=ALL\n1, 1, 2, 3, 4\n"
    for label in range(1, 5):
        text += f"*ELSET, ELSET=_S{label}_S{label}\n1\n"
        text += f"*SURFACE, TYPE=ELEMENT, NAME=S{label}\n_S{label}_S{label}, S{label}\n"
    path.write_text(text)
    mesh = fb.mesh.read(path)
    corners = {
        f"S{k}": set(mesh.cells[0, mesh.cell.face_corners(int(mesh.face_set(f"S{k}")[0, 1]))]) for k in range(1, 5)
    }
    assert corners == {"S1": {0, 1, 2}, "S2": {0, 1, 3}, "S3": {1, 2, 3}, "S4": {0, 2, 3}}


@pytest.mark.parametrize("order", [1, 2], ids=["Tet4", "Tet10"])
def test_from_geometry_meshes_a_geo_script_with_its_physical_groups(order):
    mesh = fb.mesh.from_geometry(BRACKET, size=0.004, order=order)
    assert isinstance(mesh, fb.TetMesh) and mesh.order == order
    assert sorted(mesh.face_sets) == ["bolt", "clamp", "load"] and sorted(mesh.element_sets) == ["bracket"]
    assert len(mesh.element_set("bracket")) == mesh.n_elements
    body = fb.FlexibleBody("bracket", mesh, fb.NeoHookean(**STEEL))
    assert body.volume() == pytest.approx(BRACKET_VOLUME, rel=1e-5 if order == 2 else 2e-3)
    assert fb.SurfaceTraction(body, "clamp", total=(1.0, 0, 0)).area == pytest.approx(0.040 * 0.006, rel=1e-12)
    assert np.all(np.isclose(mesh.points[mesh.node_set("clamp"), 0], 0.0, atol=1e-12))


def test_from_geometry_reads_a_step_file_and_names_its_surfaces(tmp_path):
    """A STEP file written by gmsh (a 100 × 20 × 30 mm block in mm, as CAD tools write them), read with scale=1e-3."""
    gmsh = pytest.importorskip("gmsh")
    step = tmp_path / "block.step"
    gmsh.initialize(readConfigFiles=False, interruptible=False)
    try:
        gmsh.option.setNumber("General.Terminal", 0)
        gmsh.model.add("mine")
        gmsh.model.occ.addBox(0, 0, 0, 100.0, 20.0, 30.0)  # mm
        gmsh.model.occ.synchronize()
        gmsh.write(str(step))
        mesh = fb.mesh.from_geometry(step, size=0.01, scale=1e-3)  # in the caller's session: left running
        assert gmsh.isInitialized() and gmsh.model.getCurrent() == "mine"
    finally:
        gmsh.finalize()
    assert sorted(mesh.face_sets) == [f"surface_{k}" for k in range(1, 7)] and list(mesh.element_sets) == ["volume_1"]
    body = fb.FlexibleBody("block", mesh, fb.NeoHookean(**STEEL))
    assert body.volume() == pytest.approx(0.1 * 0.02 * 0.03, rel=1e-12)
    areas = sorted(fb.SurfaceTraction(body, f"surface_{k}", total=(1.0, 0, 0)).area for k in range(1, 7))
    np.testing.assert_allclose(areas, sorted([0.02 * 0.03] * 2 + [0.1 * 0.03] * 2 + [0.1 * 0.02] * 2), rtol=1e-12)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda tmp: fb.mesh.from_geometry(tmp / "none.step", 0.01), r"geometry file '.*none\.step' does not exist"),
        (
            lambda tmp: fb.mesh.from_geometry(BRACKET.with_suffix(".md").parent / "README.md", 0.01),
            "neither a CAD file",
        ),
        (lambda tmp: fb.mesh.from_geometry(BRACKET, 0.0), "size must be a positive finite number, got 0.0"),
        (lambda tmp: fb.mesh.from_geometry(BRACKET, "1"), "size must be a positive number, got '1'"),
        (lambda tmp: fb.mesh.from_geometry(BRACKET, 0.01, order=3), "order must be 1 or 2, got 3"),
    ],
    ids=["missing", "suffix", "zero size", "text size", "order"],
)
def test_from_geometry_refuses_bad_input(call, match, tmp_path):
    with pytest.raises(MeshError, match=match):
        call(tmp_path)


def test_a_geometry_without_volumes_is_named(tmp_path):
    path = tmp_path / "flat.geo"
    path.write_text('SetFactory("OpenCASCADE");\nRectangle(1) = {0, 0, 0, 1, 1};\n')
    with pytest.raises(MeshError, match="made no tetrahedra"):
        fb.mesh.from_geometry(path, 0.2)


def test_geometry_to_exported_body_in_two_calls(tmp_path):
    """The part goes from its geometry to a solved, exported body: ``from_geometry``, then ``write_results`` of the
    static solve (the model between them is the user's: a body, a clamp and a load)."""
    body = fb.FlexibleBody("bracket", fb.mesh.from_geometry(BRACKET, size=0.006), fb.NeoHookean(**STEEL))
    system = fb.System(
        [body], constraints=[fb.Fix(body, "clamp")], loads=[fb.SurfaceTraction(body, "load", total=(0, 0, -500.0))]
    )
    out = fb.io.write_results(tmp_path / "bracket", fb.solve_static(system, load_steps=1))
    import meshio

    series = sorted(out.glob("**/*.vtu"))
    assert series, "no ParaView files written"
    last = meshio.read(series[-1])
    assert "tetra10" in last.cells_dict and len(last.cells_dict["tetra10"]) == body.n_elements
    assert np.abs(last.points - body.mesh.points).max() > 0  # the deformed shape


def mixed_beam_file(path):
    """A 0.6 m beam written as one Gmsh file: 27-node bricks on x ≤ 0.3, 10-node tetrahedra (those bricks cut in six)
    beyond, sharing the nodes of their common face; physical surfaces "clamp" (x = 0, quadrilaterals), "tip" (x = 0.6,
    triangles) and "bottom" (z = 0, both kinds), physical volumes "bricks" and "tets"."""
    import meshio

    parts = [
        fb.mesh.box((0.3, 0.05, 0.05), (6, 2, 2), order=2, cells=cells, origin=(0.3 * k, 0, 0))
        for k, cells in enumerate(("hexahedra", "tetrahedra"))
    ]
    stacked = np.vstack([m.points for m in parts])
    keys, inverse = np.unique(np.round(stacked / 1e-9).astype(np.int64), axis=0, return_inverse=True)
    points = np.zeros((len(keys), 3))
    points[inverse.ravel()] = stacked
    offsets = [0, len(parts[0].points)]
    number = [inverse.ravel()[o : o + len(m.points)] for o, m in zip(offsets, parts)]
    cells, physical = [], []
    field_data = {"bricks": np.array([1, 3]), "tets": np.array([2, 3]), "clamp": np.array([3, 2])}
    field_data |= {"tip": np.array([4, 2]), "bottom": np.array([5, 2])}
    for k, m in enumerate(parts):
        cells.append((m.cell.meshio_type, number[k][m.cells]))
        physical.append(np.full(m.n_elements, k + 1))
    for k, name, tag in ((0, "clamp", 3), (1, "tip", 4), (0, "bottom", 5), (1, "bottom", 5)):
        m = parts[k]
        side = "x0" if name == "clamp" else "x1" if name == "tip" else "z0"
        faces = fb.mesh.face_cells(m, m.face_set(side))
        cells.append((m.cell.face_cell_type, number[k][faces]))
        physical.append(np.full(len(faces), tag))
    raw = meshio.Mesh(
        points, cells, field_data=field_data, cell_data={"gmsh:physical": physical, "gmsh:geometrical": physical}
    )
    meshio.write(path, raw, file_format="gmsh22", binary=False)


def test_a_mesh_of_bricks_and_tetrahedra_is_read_as_parts_joined_by_ties(tmp_path):
    """``fb.mesh.read_parts`` splits the mixed file by kind; the two bodies tied at their common face carry the load
    as the same beam built from ``fb.mesh.box`` does (``tests/test_tet_solvers.py``: 1.97059e-4 m), to round-off."""
    path = tmp_path / "mixed.msh"
    mixed_beam_file(path)
    with pytest.raises(MeshError, match=r"mixes the volume cells hexahedron27, tetra10.*fb.mesh.read_parts"):
        fb.mesh.read(path)
    parts = fb.mesh.read_parts(path)
    assert sorted(parts) == ["hexahedron27", "tetra10"]
    bricks, tets = parts["hexahedron27"], parts["tetra10"]
    assert sorted(bricks.face_sets) == ["bottom", "clamp"] and sorted(tets.face_sets) == ["bottom", "tip"]
    assert list(bricks.element_sets) == ["bricks"] and list(tets.element_sets) == ["tets"]
    assert len(bricks.face_set("bottom")) == 12 and len(tets.face_set("bottom")) == 24
    material = fb.NeoHookean(7.0e10, 0.33, 2700.0)
    a, b = fb.FlexibleBody("bricks", bricks, material), fb.FlexibleBody("tets", tets, material)
    interface = tets.nodes_where(lambda p: np.isclose(p[:, 0], 0.3))
    load = fb.SurfaceTraction(b, "tip", total=(0.0, 0.0, -100.0))
    system = fb.System([a, b], constraints=[fb.Fix(a, "clamp"), fb.TieNodes(b, interface, a)], loads=[load])
    results = fb.solve_static(system, load_steps=1)
    deflection = -results.displacements(b)[b.nodes("tip"), 2].mean()
    assert deflection == pytest.approx(1.970589252112e-4, rel=1e-9)


@pytest.mark.parametrize("order", [1, 2], ids=["Tet4", "Tet10"])
def test_a_msh_file_written_by_gmsh_itself_reads_as_the_mesh_from_geometry(order, tmp_path):
    """The bracket meshed and saved by gmsh (MSH 4.1, gmsh's own 10-node order) reads with ``fb.mesh.read`` into the
    same volume, sets and surface areas as ``from_geometry`` gives (the mesh a new user brings from gmsh: it was
    refused, "has no hexahedral cells")."""
    gmsh = pytest.importorskip("gmsh")
    path = tmp_path / "bracket.msh"
    gmsh.initialize(readConfigFiles=False, interruptible=False)
    try:
        gmsh.option.setNumber("General.Terminal", 0)
        gmsh.merge(str(BRACKET))
        gmsh.option.setNumber("Mesh.MeshSizeMax", 0.006)
        gmsh.option.setNumber("Mesh.ElementOrder", order)
        gmsh.model.mesh.generate(3)
        gmsh.write(str(path))
    finally:
        gmsh.finalize()
    read = fb.mesh.read(path)
    made = fb.mesh.from_geometry(BRACKET, size=0.006, order=order)
    assert isinstance(read, fb.TetMesh) and read.order == order
    assert read.n_elements == made.n_elements and read.n_nodes == made.n_nodes
    assert sorted(read.face_sets) == sorted(made.face_sets) and sorted(read.element_sets) == ["bracket"]
    bodies = [fb.FlexibleBody("b", m, fb.NeoHookean(**STEEL)) for m in (read, made)]
    assert bodies[0].volume() == pytest.approx(bodies[1].volume(), rel=1e-13)
    for name in ("clamp", "load", "bolt"):
        areas = [fb.SurfaceTraction(b, name, total=(1.0, 0, 0)).area for b in bodies]
        assert areas[0] == pytest.approx(areas[1], rel=1e-13)


@pytest.mark.parametrize(
    "cells, order",
    [("tetrahedra", 1), ("tetrahedra", 2), ("hexahedra", 1), ("hexahedra", 2)],
    ids=["4", "10", "8", "27"],
)
def test_a_mesh_in_the_mirror_order_is_named_and_oriented_back(cells, order, caplog):
    """Every other element's nodes in the mirror image of VTK's order (as a mesher of the opposite convention writes
    them): the body is refused naming ``mesh.oriented()``, which restores the elements and their face sets' local
    faces exactly (and leaves an oriented mesh as it is)."""
    mesh = fb.mesh.box((1.0, 0.5, 0.3), (2, 2, 1), order=order, cells=cells)
    ref = mesh.cell
    flip = np.arange(0, mesh.n_elements, 2)
    mirrored_cells = np.array(mesh.cells)
    mirrored_cells[flip] = mirrored_cells[flip][:, ref.mirrored_nodes]
    faces = {}
    inverse = np.argsort(ref.mirrored_faces())
    for name, given in mesh.face_sets.items():
        rows = np.array(given)
        hit = np.isin(rows[:, 0], flip)
        rows[hit, 1] = inverse[rows[hit, 1]]
        faces[name] = rows
    mirrored = type(mesh)(mesh.points, mirrored_cells, mesh.node_sets, faces)
    np.testing.assert_array_equal(mirrored.mirrored_elements(), flip)
    material = fb.NeoHookean(**STEEL)
    with pytest.raises(fb.ElementError, match=rf"{flip.size} of them have their nodes in the mirror image.*oriented"):
        fb.FlexibleBody("b", mirrored, material, locking=None)
    with caplog.at_level(logging.INFO, logger="flexbody"):
        restored = mirrored.oriented()
    assert f"{flip.size} of {mesh.n_elements} elements reordered" in caplog.text
    np.testing.assert_array_equal(restored.cells, mesh.cells)
    for name in mesh.face_sets:
        np.testing.assert_array_equal(restored.face_set(name), mesh.face_set(name))
    assert restored.oriented() is restored
