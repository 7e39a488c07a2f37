"""Reading and writing volume meshes (hexahedra or tetrahedra) with their named sets through meshio.

Gmsh physical groups (surfaces → face and node sets, volumes → element sets), Abaqus NSET/ELSET and element
surfaces, and VTU point/cell data arrays are mapped to the node, face and element sets of a
:class:`~flexbody.fem.hex_mesh.HexMesh` or :class:`~flexbody.fem.tet_mesh.TetMesh`. Every read failure becomes a
:class:`~flexbody.errors.MeshError` naming the file.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..errors import MeshError
from .cells import VOLUME_CELL_NODES, reference_cell
from .hex_mesh import HexMesh
from .tet_mesh import TetMesh
from .volume_mesh import VolumeMesh, face_cells, face_keys

if TYPE_CHECKING:
    import meshio

logger = logging.getLogger(__name__)

#: Abaqus element-face labels S1..S6 of C3D8 as local faces (S1 ζ-, S2 ζ+, S3 η-, S4 ξ+, S5 η+, S6 ξ-), and S1..S4
#: of C3D4 / C3D10 (S1 corners 1-2-3, S2 1-4-2, S3 2-4-3, S4 3-4-1) as local tetrahedron faces, by corners per cell.
_ABAQUS_FACES = {8: {1: 4, 2: 5, 3: 2, 4: 1, 5: 3, 6: 0}, 4: {1: 3, 2: 0, 3: 1, 4: 2}}
#: The mesh class of each number of nodes per cell (the classes' ``CELL_NODES``).
_MESH_CLASS: dict[int, type[VolumeMesh]] = {n: kind for kind in (HexMesh, TetMesh) for n in kind.CELL_NODES}
#: The face cells (meshio types) that carry the face sets of each number of nodes per cell: the faces of its order
#: and of the lower one (a 27-node mesh's face sets may come as quadrilaterals of their corners).
_FACE_TYPES = {n: reference_cell(n).face_cell_types[: reference_cell(n).order] for n in VOLUME_CELL_NODES.values()}
_ABAQUS_SURFACE_ELSET = re.compile(r"^_(.+)_S([1-6])$")


def read(path: str | Path) -> VolumeMesh:
    """Read a hexahedral or tetrahedral mesh with its named sets from any meshio format (.msh, .inp, .vtu, .exo, ...).

    Cells of one volume type, "hexahedron", "hexahedron27" (a :class:`HexMesh`), "tetra" or "tetra10" (a
    :class:`TetMesh`), become the cells; meshio converts Gmsh's and Exodus' node orders to VTK's. Unused nodes are
    dropped and the rest renumbered. Lower-dimensional cells only serve as sources of named sets:

    - meshio point sets (Abaqus NSET, Exodus node sets) and Gmsh physical groups of dimension 0 or 1 → node sets;
    - Gmsh physical groups of dimension 2 on the cells' faces (quadrilaterals of bricks, triangles of
      tetrahedra) → face sets (each matched to the (element, local face) with the same corners) and node sets of
      the same name;
    - meshio cell sets of volume cells (Abaqus ELSET) and physical volumes → element sets; Abaqus
      element-based surfaces stored as ELSETs "_NAME_S1".."_NAME_S6" → face set NAME;
    - point data "node_set:NAME" and cell data "face_set:NAME" (bit f = local face f) or
      "element_set:NAME" (as written by :func:`write`) → the named sets.

    Raises
    ------
    MeshError
        If the file is missing or unreadable (meshio's error is chained), has no volume cells, has two kinds
        of them (e.g. 8- and 27-node hexahedra, or hexahedra and tetrahedra), or has a set face that is no face
        of its cells.
    """
    path, raw = _read_raw(path, "read")
    return from_meshio(raw, source=str(path))


def read_parts(path: str | Path) -> dict[str, VolumeMesh]:
    """Read a mesh of several kinds of volume cell (a mesher's hexahedra and tetrahedra) as one mesh per kind.

    Returns {meshio cell type: mesh} ("hexahedron", "hexahedron27", "tetra", "tetra10"), each read as :func:`read`
    reads a mesh of that kind alone: its own nodes (numbered from 0, unused ones dropped), its element sets, the
    face sets of its faces (quadrilaterals for bricks, triangles for tetrahedra: a physical surface across two kinds
    gives each its part) and the node sets restricted to its nodes. The parts share the nodes of their common faces
    (coincident, one copy in each part): make one body per part and join them with ``fb.TieNodes``. A file of one
    kind gives one part.
    """
    path, raw = _read_raw(path, "read_parts")
    kinds = sorted({b.type for b in raw.cells if b.type in VOLUME_CELL_NODES})
    if not kinds:
        _volume_block_ids(list(raw.cells), str(path))  # names what the file has
    return {kind: from_meshio(_part(raw, kind), source=f"{path} ({kind} part)") for kind in kinds}


def _read_raw(path, caller: str):
    """(the path, its ``meshio.Mesh``), or MeshError naming what is wrong with ``path`` (``caller`` names the function
    it was given to)."""
    if not isinstance(path, (str, Path)) and not hasattr(path, "__fspath__"):
        raise MeshError(f"{caller}: the mesh file must be a path (str or pathlib.Path), got {type(path).__name__}")
    path = Path(path)
    if not path.is_file():
        raise MeshError(f"mesh file '{path}' does not exist or is not a file")
    if path.suffix.lower() == ".inp":
        _check_complete_lines(path)
    return path, _meshio_read(path)


def _part(raw, kind: str):
    """The meshio.Mesh of the volume cells of ``kind`` and the lower-dimensional cells that may name their sets (all
    but the faces of the other kinds), with the cell data and cell sets of those blocks."""
    import meshio

    faces = _FACE_TYPES[VOLUME_CELL_NODES[kind]]
    others = {t for n in VOLUME_CELL_NODES.values() for t in _FACE_TYPES[n]} - set(faces)
    keep = [
        b for b, block in enumerate(raw.cells) if block.type == kind or (block.dim < 3 and block.type not in others)
    ]

    def per_block(values, missing=None):
        return [values[b] if b < len(values) else missing for b in keep]

    return meshio.Mesh(
        raw.points,
        [raw.cells[b] for b in keep],
        point_data=raw.point_data,
        cell_data={name: per_block(list(data)) for name, data in raw.cell_data.items()},
        field_data=raw.field_data,
        point_sets=raw.point_sets,
        cell_sets={name: per_block(list(sets), np.zeros(0, np.int64)) for name, sets in raw.cell_sets.items()},
    )


def _check_complete_lines(path: Path) -> None:
    """Refuse a text mesh file whose last line has no line break: it was cut short (an interrupted copy or download).
    Abaqus files have no counts and no end marker, so a file cut inside a node set or surface would otherwise be
    read with that set silently smaller."""
    with open(path, "rb") as fh:
        fh.seek(0, 2)
        size = fh.tell()
        fh.seek(max(0, size - 256))
        tail = fh.read().rstrip(b" \t\x00")
    if tail and not tail.endswith(b"\n"):
        last = tail.splitlines()[-1].decode("utf-8", "replace")[-40:]
        raise MeshError(
            f"mesh file '{path}' ends in the middle of a line ({last!r}): the file looks cut short; "
            f"an Abaqus file has no end marker, so a cut set would be read silently smaller"
        )


def _meshio_read(path: Path):
    """``meshio.Mesh`` of ``path``, trying each format registered for its suffix (Gmsh first for .msh).

    meshio's own ``read`` prints a failed format's error and calls ``sys.exit`` when no format works,
    so its per-format readers are called directly and every failure is reported in a MeshError.
    """
    import meshio
    from meshio._helpers import reader_map  # the per-format readers behind meshio.read (meshio 5.x)

    formats = sorted(meshio.extension_to_filetypes.get(path.suffix.lower(), []), key=lambda f: f != "gmsh")
    if not formats:
        raise MeshError(
            f"cannot read mesh file '{path}': unknown suffix '{path.suffix}' "
            f"(meshio reads {', '.join(sorted(meshio.extension_to_filetypes))})"
        )
    errors = []
    for fmt in formats:
        try:
            return reader_map[fmt](str(path))
        except Exception as err:  # meshio raises many types; all are reported below, none swallowed
            errors.append(f"as {fmt}: {type(err).__name__}" + (f": {err}" if str(err) else " (no detail)"))
            last = err
    raise MeshError(f"cannot read mesh file '{path}': " + "; ".join(errors)) from last


def from_meshio(raw: meshio.Mesh, source: str = "<meshio.Mesh>") -> VolumeMesh:
    """Convert a ``meshio.Mesh`` to a :class:`HexMesh` or :class:`TetMesh` (see :func:`read`); ``source`` names it in
    errors."""
    blocks = list(raw.cells)
    volume_ids = _volume_block_ids(blocks, source)
    kind = blocks[volume_ids[0]].type
    mesh_class = _MESH_CLASS[VOLUME_CELL_NODES[kind]]
    cells = np.vstack([blocks[b].data for b in volume_ids]).astype(np.int64)
    n_points = len(raw.points)
    bad = np.flatnonzero(((cells < 0) | (cells >= n_points)).any(axis=1))
    if bad.size:
        row = cells[bad[0]]
        outside = row[(row < 0) | (row >= n_points)].tolist()
        raise MeshError(
            f"'{source}': {kind} cell {bad[0]} refers to point(s) {outside} outside 0..{n_points - 1} "
            f"(the file has {n_points} points)"
        )
    block_start = dict(zip(volume_ids, np.cumsum([0] + [len(blocks[b].data) for b in volume_ids])))
    cells, cell_map = _deduplicated(cells, source)
    used = np.unique(cells)
    renumber = np.full(n_points, -1, dtype=np.int64)
    renumber[used] = np.arange(len(used))
    points = np.asarray(raw.points, dtype=float)[used]
    if points.ndim != 2 or points.shape[1] != 3:
        raise MeshError(
            f"'{source}': points must be 3-D, got {points.shape[1] if points.ndim == 2 else points.shape} coordinates"
        )
    try:
        mesh = mesh_class(points, renumber[cells])
    except MeshError as exc:  # node and element numbers are the file's after dropping unused points
        raise type(exc)(f"'{source}': {exc} (numbered after dropping the points no {kind} cell uses)") from exc
    node_sets: dict[str, np.ndarray] = {}
    face_sets: dict[str, np.ndarray] = {}
    element_sets: dict[str, np.ndarray] = {}
    for name, idx in _named_points(raw).items():
        _merge(node_sets, name, renumber[idx][renumber[idx] >= 0])
    for name, per_block in _named_cells(raw).items():
        for b, local in per_block.items():
            block = blocks[b]
            if b in block_start:
                _merge(element_sets, name, cell_map[block_start[b] + local])
            elif block.type in _FACE_TYPES[mesh.nodes_per_cell]:
                nodes = renumber[block.data[local]]
                _merge(face_sets, name, match_faces(mesh, nodes[:, : len(mesh.cell.face_corners(0))], name, source))
                _merge(node_sets, name, nodes[nodes >= 0])
            else:
                nodes = renumber[block.data[local]].ravel()
                _merge(node_sets, name, nodes[nodes >= 0])
    _merge_cell_data(raw, volume_ids, block_start, cell_map, face_sets, element_sets, mesh.cell.n_faces)
    _abaqus_surfaces(element_sets, face_sets, _ABAQUS_FACES[mesh.cell.n_corners])
    try:
        return mesh_class(mesh.points, mesh.cells, node_sets, face_sets, element_sets)
    except MeshError as exc:
        raise type(exc)(f"'{source}': {exc}") from exc


def _volume_block_ids(blocks, source: str) -> list[int]:
    """The blocks of the mesh's one kind of volume cell, or MeshError naming what the file has."""
    found: dict[str, int] = {}
    for b in blocks:
        found[b.type] = found.get(b.type, 0) + len(b.data)
    listing = ", ".join(f"{t} ({n})" for t, n in found.items()) or "no cells"
    ids = [i for i, b in enumerate(blocks) if b.type in VOLUME_CELL_NODES]
    if not ids:
        faces = any(t.startswith(("quad", "triangle")) for t in found)
        hint = "; Gmsh saves only elements of physical groups: add a Physical Volume" * faces
        raise MeshError(
            f"'{source}' has no volume cells flexbody takes (hexahedron, hexahedron27, tetra, tetra10); "
            f"found: {listing}{hint}"
        )
    other = sorted({b.type for b in blocks if b.dim == 3 and b.type not in VOLUME_CELL_NODES})
    if other:
        raise MeshError(
            f"'{source}': unsupported volume cell type(s) {', '.join(other)}; flexbody takes 8- or 27-node "
            f"hexahedra or 4- or 10-node tetrahedra (found: {listing})"
        )
    types = sorted({blocks[i].type for i in ids})
    if len(types) > 1:
        raise MeshError(
            f"'{source}' mixes the volume cells {', '.join(types)} ({listing}); a body takes one kind of cell: "
            "fb.mesh.read_parts reads one mesh per kind, for one body each joined by fb.TieNodes"
        )
    return ids


def _deduplicated(cells: np.ndarray, source: str) -> tuple[np.ndarray, np.ndarray]:
    """Drop repeated identical cells (MSH 2 repeats an element per physical group); old → new map."""
    _, first, inverse = np.unique(cells, axis=0, return_index=True, return_inverse=True)
    if len(first) == len(cells):
        return cells, np.arange(len(cells))
    logger.info("%s: dropped %d repeated cells", source, len(cells) - len(first))
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first)] = np.arange(len(first))
    return cells[np.sort(first)], rank[inverse.ravel()]


def _merge(sets: dict, name: str, values: np.ndarray) -> None:
    values = np.asarray(values, dtype=np.int64)
    sets[name] = np.concatenate([sets[name], values]) if name in sets else values


def _named_points(raw) -> dict[str, np.ndarray]:
    """Node index sets (in the file's numbering) from point sets and point data "node_set:NAME"."""
    out = {str(k): np.asarray(v, dtype=np.int64).ravel() for k, v in raw.point_sets.items()}
    for key, data in raw.point_data.items():
        if key.startswith("node_set:"):
            _merge(out, key[len("node_set:") :], np.flatnonzero(np.asarray(data).ravel()))
    return out


def _named_cells(raw) -> dict[str, dict[int, np.ndarray]]:
    """Named cell groups {name: {block: local cell indices}} from cell sets and Gmsh physical groups."""
    out: dict[str, dict[int, np.ndarray]] = {}

    def add(name, b, local):
        local = np.asarray(local, dtype=np.int64).ravel()
        if local.size:
            prev = out.setdefault(str(name), {}).get(b)
            out[str(name)][b] = local if prev is None else np.union1d(prev, local)

    for name, per_block in raw.cell_sets.items():
        if not name.startswith("gmsh:"):
            for b, local in enumerate(per_block[: len(raw.cells)]):
                if local is not None:
                    add(name, b, local)
    physical = raw.cell_data.get("gmsh:physical")
    if physical is not None:
        for name, value in raw.field_data.items():
            tag, dim = np.asarray(value).ravel()[:2]
            for b, block in enumerate(raw.cells):
                if block.dim == dim:
                    add(name, b, np.flatnonzero(np.asarray(physical[b]) == tag))
    return out


def match_faces(mesh: VolumeMesh, corners: np.ndarray, name: str, source: str) -> np.ndarray:
    """Rows (element, local face) (k, 2) whose corner nodes equal each row of ``corners`` (k, corners per face)."""
    n_faces = mesh.cell.n_faces
    all_faces = face_keys(mesh).reshape(mesh.n_elements * n_faces, -1)
    keys = np.vstack([all_faces, np.sort(corners, axis=1)])
    _, inverse = np.unique(keys, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    n_rows = len(all_faces)
    owner = np.full(inverse.max() + 1, n_rows, dtype=np.int64)
    np.minimum.at(owner, inverse[:n_rows], np.arange(n_rows))
    hit = owner[inverse[n_rows:]]
    bad = np.flatnonzero((hit == n_rows) | (corners < 0).any(axis=1))
    if bad.size:
        raise MeshError(
            f"'{source}': set '{name}' has a face cell (file nodes renumbered to "
            f"{corners[bad[0]].tolist()}) that is not a face of any {mesh.cell.meshio_type} cell"
        )
    return np.column_stack([hit // n_faces, hit % n_faces])


def _merge_cell_data(raw, volume_ids, block_start, cell_map, face_sets, element_sets, n_faces: int) -> None:
    """Sets from volume cell data "face_set:NAME" (bit mask of local faces) and "element_set:NAME"."""
    for key, per_block in raw.cell_data.items():
        kind, _, name = key.partition(":")
        if kind not in ("face_set", "element_set"):
            continue
        for b in volume_ids:
            data = np.asarray(per_block[b]).astype(np.int64).ravel()
            elems = cell_map[block_start[b] + np.arange(len(data))]
            if kind == "element_set":
                _merge(element_sets, name, elems[data != 0])
            for f in range(n_faces) if kind == "face_set" else ():
                hit = (data >> f) & 1 == 1
                _merge(face_sets, name, np.column_stack([elems[hit], np.full(hit.sum(), f)]))


def _abaqus_surfaces(element_sets: dict, face_sets: dict, faces: dict[int, int]) -> None:
    """Turn element sets "_NAME_Sk" (Abaqus element-based surface NAME, face label Sk) into face sets; ``faces`` maps
    the labels to local faces."""
    for key in list(element_sets):
        match = _ABAQUS_SURFACE_ELSET.match(key)
        if match:
            elems = element_sets.pop(key)
            label = int(match.group(2))
            if label not in faces:
                raise MeshError(
                    f"Abaqus surface '{match.group(1)}': face label S{label} of a cell with {len(faces)} faces"
                )
            face = faces[label]
            _merge(face_sets, match.group(1), np.column_stack([elems, np.full(len(elems), face)]))


# --------------------------------------------------------------------------------------- writing
def write(mesh: VolumeMesh, path: str | Path) -> None:
    """Write ``mesh`` with its named sets through meshio; the format follows the suffix.

    - ``.msh``: Gmsh MSH 2.2 ASCII; face sets as physical surfaces of quadrilaterals (bricks) or triangles
      (tetrahedra), node sets as
      physical points (a node set equal to the nodes of the face set of the same name is implied by
      it), disjoint element sets as physical volumes.
    - ``.inp``: Abaqus C3D8, C3D4 or C3D10 (meshio has no C3D27); NSET, ELSET, and face sets as
      element-based ``*SURFACE`` with ELSETs "_NAME_Sk".
    - ``.exo``, ``.e``: Exodus II, node sets as Exodus node sets; face and element sets are not written (meshio
      writes no side sets or named blocks), which a warning names.
    - others (``.vtu``, ``.vtk``, ``.xdmf``, ...): point data "node_set:NAME" (0/1), cell data
      "face_set:NAME" (bit f set for local face f) and "element_set:NAME" (0/1).

    Empty sets are kept only by the last group of formats.
    """
    import meshio

    path = Path(path)
    suffix = path.suffix.lower()
    try:
        if suffix == ".msh":
            meshio.write(path, _to_gmsh(mesh), file_format="gmsh22", binary=False)
        elif suffix == ".inp":
            _write_abaqus(mesh, path)
        elif suffix in (".exo", ".e"):
            _write_exodus(mesh, path)
        else:
            meshio.write(path, _to_meshio_with_data(mesh))
    except MeshError:
        raise
    except Exception as err:  # meshio raises many types; re-raised with the file named
        raise MeshError(f"cannot write mesh file '{path}': {type(err).__name__}: {err}") from err


def _to_meshio_with_data(mesh: VolumeMesh):
    import meshio

    point_data = {}
    for name, nodes in mesh.node_sets.items():
        point_data[f"node_set:{name}"] = np.zeros(mesh.n_nodes, dtype=np.uint8)
        point_data[f"node_set:{name}"][nodes] = 1
    cell_data = {}
    for name, rows in mesh.face_sets.items():
        bits = np.zeros(mesh.n_elements, dtype=np.uint8)
        np.bitwise_or.at(bits, rows[:, 0], (1 << rows[:, 1]).astype(np.uint8))
        cell_data[f"face_set:{name}"] = [bits]
    for name, elems in mesh.element_sets.items():
        mask = np.zeros(mesh.n_elements, dtype=np.uint8)
        mask[elems] = 1
        cell_data[f"element_set:{name}"] = [mask]
    return meshio.Mesh(
        np.asarray(mesh.points),
        [(mesh.cell.meshio_type, np.asarray(mesh.cells))],
        point_data=point_data,
        cell_data=cell_data,
    )


def _to_gmsh(mesh: VolumeMesh):
    """meshio.Mesh with Gmsh physical groups: element sets (if disjoint), face sets, other node sets."""
    import meshio

    field_data: dict[str, np.ndarray] = {}

    def tag(name: str, dim: int) -> int:
        label = name if name not in field_data else f"{name}_{('nodes', '', 'faces', 'elements')[dim]}"
        if label != name:
            logger.warning("write: set '%s' shares its name with another set; written as '%s'", name, label)
        field_data[label] = np.array([len(field_data) + 1, dim])
        return len(field_data)

    volume_tag = np.zeros(mesh.n_elements, dtype=np.int64)
    element_sets = list(mesh.element_sets.values())
    if element_sets and sum(map(len, element_sets)) > len(np.unique(np.concatenate(element_sets))):
        logger.warning("write: overlapping element sets %s are not written to .msh", sorted(mesh.element_sets))
    else:
        for name, elems in mesh.element_sets.items():
            volume_tag[elems] = tag(name, 3)
    cells, physical = [(mesh.cell.meshio_type, np.asarray(mesh.cells))], [volume_tag]
    for name, rows in mesh.face_sets.items():
        if len(rows):
            cells.append((mesh.cell.face_cell_type, face_cells(mesh, rows)))
            physical.append(np.full(len(rows), tag(name, 2)))
    for name, nodes in mesh.node_sets.items():
        implied = name in mesh.face_sets and np.array_equal(nodes, mesh.face_set_nodes(name))
        if len(nodes) and not implied:
            cells.append(("vertex", nodes[:, None]))
            physical.append(np.full(len(nodes), tag(name, 0)))
    geometrical = [np.maximum(p, 1) for p in physical]
    return meshio.Mesh(
        np.asarray(mesh.points),
        cells,
        field_data=field_data,
        cell_data={"gmsh:physical": physical, "gmsh:geometrical": geometrical},
    )


def _write_abaqus(mesh: VolumeMesh, path: Path) -> None:
    import meshio

    if mesh.nodes_per_cell == 27:
        raise MeshError(
            f"cannot write '{path}': Abaqus .inp output supports 8-node hexahedra (C3D8) and tetrahedra (C3D4, C3D10); "
            f"meshio has no 27-node (C3D27) mapping"
        )
    cell_sets = {name: [np.asarray(e)] for name, e in mesh.element_sets.items()}
    surfaces = []
    for name, rows in mesh.face_sets.items():
        for label, f in _ABAQUS_FACES[mesh.cell.n_corners].items():
            elems = rows[rows[:, 1] == f, 0]
            if elems.size:
                cell_sets[f"_{name}_S{label}"] = [elems]
                surfaces.append((name, f"_{name}_S{label}, S{label}"))
    raw = meshio.Mesh(
        np.asarray(mesh.points),
        [(mesh.cell.meshio_type, np.asarray(mesh.cells))],
        point_sets={k: np.asarray(v) for k, v in mesh.node_sets.items()},
        cell_sets=cell_sets,
    )
    meshio.write(path, raw, file_format="abaqus")
    with open(path, "a", encoding="utf-8") as fh:
        for name in dict.fromkeys(n for n, _ in surfaces):
            fh.write(f"*SURFACE, TYPE=ELEMENT, NAME={name}\n")
            fh.writelines(line + "\n" for name2, line in surfaces if name2 == name)


def _write_exodus(mesh: VolumeMesh, path: Path) -> None:
    import meshio

    dropped = [f"face set '{n}'" for n in mesh.face_sets] + [f"element set '{n}'" for n in mesh.element_sets]
    if dropped:
        logger.warning(
            "write: %s not written to '%s' (meshio writes Exodus node sets only; its side sets and element blocks "
            "are not supported); write .msh, .inp or .vtu to keep them",
            ", ".join(dropped),
            path,
        )
    points = {k: np.asarray(v, dtype=np.int64) for k, v in mesh.node_sets.items()}
    meshio.write(
        path,
        meshio.Mesh(np.asarray(mesh.points), [(mesh.cell.meshio_type, np.asarray(mesh.cells))], point_sets=points),
        file_format="exodus",
    )
