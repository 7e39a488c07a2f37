"""Tetrahedral meshes from geometry: a CAD file (STEP, IGES, BREP) or a gmsh script (.geo) meshed by gmsh's Python
API into a :class:`~flexbody.fem.tet_mesh.TetMesh` with its named sets.

gmsh (Geuzaine & Remacle 2009) meshes the volumes with tetrahedra of the requested size (``Mesh.MeshSizeMax``),
of order 1 or 2 (``Mesh.ElementOrder``: 10-node elements whose edge nodes follow curved boundaries). The sets come
from the geometry's physical groups: physical volumes → element sets, physical surfaces → face sets (each boundary
triangle matched to the face of its tetrahedron) and node sets of the same name, physical curves and points → node
sets. A geometry without physical groups (a STEP file) names every surface "surface_<tag>" and every volume
"volume_<tag>" by gmsh's entity tags. gmsh's 10-node order (edges 01, 12, 20, 03, 23, 13) is turned into VTK's
(01, 12, 20, 03, 13, 23).

gmsh runs inside this process: when it is not yet initialised here it is started without reading the user's
configuration files and without a Ctrl-C handler, and finalised afterwards; a session the caller started is left
running, with its current model unchanged (the geometry is meshed in a model of its own, removed afterwards).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import MeshError
from .mesh_files import match_faces
from .tet_mesh import TetMesh

__all__ = ["from_geometry"]

#: gmsh element types: 4-node and 10-node tetrahedra, 3-node and 6-node triangles.
_TETRA = {1: 4, 2: 11}
_TRIANGLE = {1: 2, 2: 9}
#: gmsh's 10-node tetrahedron nodes in VTK_QUADRATIC_TETRA order.
_GMSH_TET10_TO_VTK = np.array([0, 1, 2, 3, 4, 5, 6, 7, 9, 8])
_CAD_SUFFIXES = (".step", ".stp", ".iges", ".igs", ".brep", ".brp")


def from_geometry(
    source: str | Path, size: float, *, order: int = 2, size_min: float = 0.0, scale: float = 1.0
) -> TetMesh:
    """Mesh a geometry with tetrahedra through gmsh.

    Parameters
    ----------
    source : path
        A CAD file (.step/.stp, .iges/.igs, .brep) or a gmsh script (.geo) describing one or more volumes.
    size : float
        Largest element edge length (gmsh ``Mesh.MeshSizeMax``) [m, after ``scale``]; positive.
    order : {1, 2}
        4-node (1) or 10-node (2, the default: the element that does not lock) tetrahedra.
    size_min : float
        Smallest element edge length (gmsh ``Mesh.MeshSizeMin``) [m, after ``scale``], 0 for gmsh's choice.
    scale : float
        Metres per unit of the geometry's coordinates: 1 for a geometry in m, 1e-3 for a CAD file in mm (most STEP
        files); the mesh's points are the geometry's times ``scale``.

    Returns
    -------
    TetMesh
        With the element, face and node sets of the physical groups (see the module docstring).

    Raises
    ------
    MeshError
        For a missing file or an unknown suffix, a size that is not a positive number, an order other than 1 or
        2, and when gmsh fails (its message chained) or makes no tetrahedra (a geometry without volumes).
    """
    path = _checked_source(source)
    scale = _checked_size(scale, "scale")
    size, size_min = _checked_size(size, "size"), (0.0 if size_min == 0 else _checked_size(size_min, "size_min"))
    if isinstance(order, bool) or order not in (1, 2):
        raise MeshError(f"from_geometry: order must be 1 or 2, got {order!r}")
    import gmsh

    started = not gmsh.isInitialized()
    if started:
        gmsh.initialize(readConfigFiles=False, interruptible=False)
    previous = gmsh.model.getCurrent() if not started else None
    name = f"flexbody_from_geometry_{id(path)}"
    try:
        gmsh.option.setNumber("General.Terminal", 0)
        gmsh.model.add(name)
        _load(gmsh, path)
        gmsh.option.setNumber("Mesh.MeshSizeMax", size / scale)  # in the geometry's units
        gmsh.option.setNumber("Mesh.MeshSizeMin", size_min / scale)
        gmsh.option.setNumber("Mesh.ElementOrder", order)
        gmsh.model.mesh.generate(3)
        mesh = _tet_mesh(gmsh, order, str(path))
        return mesh if scale == 1.0 else mesh.with_points(scale * mesh.points)
    except MeshError:
        raise
    except Exception as err:  # gmsh raises plain Exceptions carrying its last error
        raise MeshError(f"from_geometry: gmsh could not mesh '{path}': {err}") from err
    finally:
        if started:
            gmsh.finalize()
        else:
            gmsh.model.remove()
            if previous:
                gmsh.model.setCurrent(previous)


def _checked_source(source) -> Path:
    if not isinstance(source, (str, Path)) and not hasattr(source, "__fspath__"):
        raise MeshError(f"from_geometry: source must be a path, got {type(source).__name__}")
    path = Path(source)
    if not path.is_file():
        raise MeshError(f"from_geometry: geometry file '{path}' does not exist or is not a file")
    if path.suffix.lower() not in (*_CAD_SUFFIXES, ".geo"):
        raise MeshError(
            f"from_geometry: '{path}' is neither a CAD file ({', '.join(_CAD_SUFFIXES)}) nor a gmsh script (.geo); "
            "read a mesh file with fb.mesh.read"
        )
    return path


def _checked_size(value, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise MeshError(f"from_geometry: {what} must be a positive number, got {value!r}")
    if not (np.isfinite(value) and value > 0):
        raise MeshError(f"from_geometry: {what} must be a positive finite number, got {value!r}")
    return float(value)


def _load(gmsh, path: Path) -> None:
    """The geometry of ``path`` into the current gmsh model."""
    if path.suffix.lower() == ".geo":
        gmsh.merge(str(path))
    else:
        gmsh.model.occ.importShapes(str(path))
        gmsh.model.occ.synchronize()


def _tet_mesh(gmsh, order: int, source: str) -> TetMesh:
    """The TetMesh of the meshed current model, with the sets of its physical groups (or of its entities)."""
    tags, coords, _ = gmsh.model.mesh.getNodes()
    index = np.full(int(tags.max()) + 1, -1, dtype=np.int64)
    index[tags.astype(np.int64)] = np.arange(len(tags))
    points = np.asarray(coords, dtype=float).reshape(-1, 3)
    volumes: dict[int, np.ndarray] = {}
    for _, tag in gmsh.model.getEntities(3):
        types, element_tags, nodes = gmsh.model.mesh.getElements(3, tag)
        for kind, elements, connectivity in zip(types, element_tags, nodes):
            if kind != _TETRA[order]:
                raise MeshError(f"'{source}': gmsh made elements of type {kind} in volume {tag}, not tetrahedra")
            cells = index[np.asarray(connectivity, dtype=np.int64).reshape(len(elements), -1)]
            volumes[tag] = cells[:, _GMSH_TET10_TO_VTK] if order == 2 else cells
    if not volumes:
        raise MeshError(f"'{source}': gmsh made no tetrahedra (the geometry has no volume)")
    entity_of = np.concatenate([np.full(len(c), tag) for tag, c in volumes.items()])
    cells = np.vstack(list(volumes.values()))
    used = np.unique(cells)
    renumber = np.full(len(points), -1, dtype=np.int64)
    renumber[used] = np.arange(len(used))
    rank, element_order = _local_numbering(renumber[cells], len(used))
    renumber[used] = rank[renumber[used]]  # gmsh's node → the mesh's
    points_used = np.empty((len(used), 3))
    points_used[renumber[used]] = points[used]
    cells, entity_of = renumber[cells[element_order]], entity_of[element_order]
    mesh = TetMesh(points_used, cells)
    node_sets, face_sets, element_sets = {}, {}, {}
    for dim, name, entities in _groups(gmsh):
        if dim == 3:
            element_sets[name] = np.flatnonzero(np.isin(entity_of, entities))
        elif dim == 2:
            triangles = [_triangles(gmsh, order, index, e) for e in entities]
            corners = renumber[np.vstack(triangles)[:, :3]]
            face_sets[name] = match_faces(mesh, corners, name, source)
        if dim <= 2:
            nodes = np.concatenate([gmsh.model.mesh.getNodes(dim, e, includeBoundary=True)[0] for e in entities])
            found = renumber[index[nodes.astype(np.int64)]]
            node_sets[name] = found[found >= 0]
    return TetMesh(mesh.points, mesh.cells, node_sets, face_sets, element_sets)


def _local_numbering(cells: np.ndarray, n_nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """(rank (n,), order (m,)): the nodes renumbered by reverse Cuthill–McKee (scipy) on the graph of the elements'
    node stars, and the elements ordered by their first-ranked node, so that neighbours are numbered close together:
    the element kernels run in blocks of consecutive elements that touch few others (gmsh numbers the boundary's nodes
    before the interior's, which leaves its elements no such locality)."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import reverse_cuthill_mckee

    m, nn = cells.shape
    star = csr_matrix((np.ones(m * nn), (np.repeat(cells[:, :1], nn, axis=1).ravel(), cells.ravel())), (n_nodes,) * 2)
    rank = np.empty(n_nodes, dtype=np.int64)
    rank[reverse_cuthill_mckee((star + star.T).tocsr(), symmetric_mode=True)] = np.arange(n_nodes)
    return rank, np.argsort(rank[cells].min(axis=1), kind="stable")


def _groups(gmsh) -> list[tuple[int, str, list[int]]]:
    """(dim, name, entity tags) of every physical group, or, without any, one per surface and volume."""
    groups = gmsh.model.getPhysicalGroups()
    if not groups:
        return [
            (dim, f"{'surface' if dim == 2 else 'volume'}_{tag}", [tag])
            for dim in (2, 3)
            for _, tag in gmsh.model.getEntities(dim)
        ]
    out = []
    for dim, tag in groups:
        name = gmsh.model.getPhysicalName(dim, tag) or f"physical_{dim}d_{tag}"
        out.append((dim, name, list(gmsh.model.getEntitiesForPhysicalGroup(dim, tag))))
    return out


def _triangles(gmsh, order: int, index: np.ndarray, surface: int) -> np.ndarray:
    """The boundary triangles (k, 3 or 6) of a surface entity, as indices of gmsh's nodes."""
    types, element_tags, nodes = gmsh.model.mesh.getElements(2, surface)
    parts = [
        index[np.asarray(c, dtype=np.int64).reshape(len(e), -1)]
        for kind, e, c in zip(types, element_tags, nodes)
        if kind == _TRIANGLE[order]
    ]
    return np.vstack(parts) if parts else np.zeros((0, 3 * order), dtype=np.int64)
