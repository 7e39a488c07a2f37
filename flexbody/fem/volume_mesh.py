"""Meshes of volume cells: points (n, 3) in m, cells (m, nodes per cell) in VTK node order, named sets.

A :class:`VolumeMesh` is a plain validated data container for the reference configuration of a flexible body
discretised by one kind of cell: 8-node trilinear [DE-101] or 27-node triquadratic [DE-102] hexahedra
(:class:`~flexbody.fem.hex_mesh.HexMesh`), 4-node linear or 10-node quadratic tetrahedra
(:class:`~flexbody.fem.tet_mesh.TetMesh`). Cells follow the VTK node orders (:mod:`flexbody.fem.elements`,
:mod:`flexbody.fem.tetrahedra`), so meshes round-trip through meshio, pyvista and ParaView. Named sets:

- node sets: sorted unique node indices (n_k,), e.g. the nodes of a clamped end;
- face sets: rows (element index, local face), the local faces of the cell kind (a hexahedron's 0: ξ=-1,
  1: ξ=+1, 2: η=-1, 3: η=+1, 4: ζ=-1, 5: ζ=+1; a tetrahedron's 0..3 of
  :data:`~flexbody.fem.tetrahedra.TET_FACES`), e.g. the faces that carry a traction;
- element sets: sorted unique element indices, e.g. a material region.

The functions here work on any kind: the nodes of faces (:func:`faces_nodes`), the boundary faces
(:func:`boundary_faces`) and surface (:func:`boundary_triangles`), and faces as VTK cells (:func:`face_cells`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Self

import numpy as np
from numpy.typing import ArrayLike

from ..errors import MeshError
from .cells import reference_cell
from .elements import ReferenceCell

log = logging.getLogger(__name__)

_VTK_NAMES = {4: "VTK_TETRA", 8: "VTK_HEXAHEDRON", 10: "VTK_QUADRATIC_TETRA", 27: "VTK_TRIQUADRATIC_HEXAHEDRON"}


class VolumeMesh:
    """A mesh of one kind of volume cell: reference node positions, cells and named node/face/element sets.

    The kind of cell follows from the number of nodes per cell (:func:`~flexbody.fem.cells.reference_cell`); its
    subclasses :class:`~flexbody.fem.hex_mesh.HexMesh` (8 or 27 nodes) and :class:`~flexbody.fem.tet_mesh.TetMesh`
    (4 or 10 nodes) accept their family only and add its builders.

    Parameters
    ----------
    points : array_like (n_nodes, 3)
        Reference node positions in m; finite.
    cells : array_like of int (n_elements, nodes_per_cell)
        Node indices of each cell in VTK order (VTK_HEXAHEDRON, VTK_TRIQUADRATIC_HEXAHEDRON, VTK_TETRA,
        VTK_QUADRATIC_TETRA).
    node_sets : mapping str -> array_like of int, optional
        Named node index sets; stored sorted and unique.
    face_sets : mapping str -> array_like of int (k, 2), optional
        Named face sets, rows (element index, local face: 0..5 of a hexahedron, 0..3 of a tetrahedron); stored
        as sorted unique rows.
    element_sets : mapping str -> array_like of int, optional
        Named element index sets; stored sorted and unique.

    Raises
    ------
    MeshError
        On wrong shapes or cell type, non-finite points, out-of-range or repeated indices, bad sets;
        the message names the offending node, element or set. Inverted elements are not checked here.

    Notes
    -----
    Arrays are stored as read-only copies; use :meth:`with_points` for new coordinates.
    """

    #: The numbers of nodes per cell this class accepts.
    CELL_NODES: tuple[int, ...] = (4, 8, 10, 27)

    def __init__(
        self,
        points: ArrayLike,
        cells: ArrayLike,
        node_sets: Mapping | None = None,
        face_sets: Mapping | None = None,
        element_sets: Mapping | None = None,
    ):
        self._points = _checked_points(points)
        self._cells = _checked_cells(cells, len(self._points), self.CELL_NODES)
        n, m = self.n_nodes, self.n_elements
        n_faces = self.cell.n_faces
        self.node_sets = {str(k): _checked_index_set(v, n, "node", k) for k, v in (node_sets or {}).items()}
        self.face_sets = {str(k): _checked_face_set(v, m, k, n_faces) for k, v in (face_sets or {}).items()}
        self.element_sets = {str(k): _checked_index_set(v, m, "element", k) for k, v in (element_sets or {}).items()}
        _check_unmerged_nodes(self.points, self.cells)  # MeshError: coincident nodes that share no cell

    @property
    def points(self) -> np.ndarray:
        """Node coordinates (n_nodes, 3) [m], read-only: :meth:`with_points` makes a mesh with new ones."""
        return self._points

    @points.setter
    def points(self, value: ArrayLike) -> None:
        raise MeshError(
            f"{type(self).__name__}.points is read-only: mesh.with_points(points) makes a mesh with new coordinates"
        )

    @property
    def cells(self) -> np.ndarray:
        """Cells (n_elements, nodes_per_cell), node indices in VTK order, read-only."""
        return self._cells

    @cells.setter
    def cells(self, value: ArrayLike) -> None:
        name = type(self).__name__
        raise MeshError(f"{name}.cells is read-only: make a new {name}(points, cells, ...) instead")

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(n_nodes={self.n_nodes}, n_elements={self.n_elements}, order={self.order}, "
            f"node_sets={sorted(self.node_sets)}, face_sets={sorted(self.face_sets)}, "
            f"element_sets={sorted(self.element_sets)})"
        )

    @property
    def n_nodes(self) -> int:
        """Number of nodes n."""
        return len(self.points)

    @property
    def n_elements(self) -> int:
        """Number of cells m."""
        return len(self.cells)

    @property
    def nodes_per_cell(self) -> int:
        """4 or 10 (tetrahedra), 8 or 27 (hexahedra)."""
        return self.cells.shape[1]

    @property
    def cell(self) -> ReferenceCell:
        """The reference element of the cells (:func:`~flexbody.fem.cells.reference_cell`)."""
        return reference_cell(self.nodes_per_cell)

    @property
    def order(self) -> int:
        """Polynomial order of the cells: 1 (4 or 8 nodes) or 2 (10 or 27 nodes)."""
        return self.cell.order

    def node_set(self, name: str) -> np.ndarray:
        """Sorted unique node indices (k,) of the node set ``name``."""
        return _lookup(self.node_sets, name, "node set")

    def face_set(self, name: str) -> np.ndarray:
        """Rows (element index, local face) (k, 2) of the face set ``name``."""
        return _lookup(self.face_sets, name, "face set")

    def element_set(self, name: str) -> np.ndarray:
        """Sorted unique element indices (k,) of the element set ``name``."""
        return _lookup(self.element_sets, name, "element set")

    def face_set_nodes(self, name: str) -> np.ndarray:
        """Sorted unique indices (k,) of all nodes on the faces of the face set ``name``."""
        return faces_nodes(self, self.face_set(name))

    def nodes_where(self, predicate: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        """Indices (k,) of the nodes whose position satisfies a vectorised predicate.

        Parameters
        ----------
        predicate : callable
            Maps points (n_nodes, 3) in m to a boolean array (n_nodes,), e.g. ``lambda p: p[:, 0] < 1e-9``.
        """
        mask = np.asarray(predicate(self.points))
        if mask.shape != (self.n_nodes,) or mask.dtype != bool:
            raise MeshError(
                f"nodes_where: predicate must return a boolean array of shape ({self.n_nodes},), "
                f"got dtype {mask.dtype} shape {mask.shape}"
            )
        return np.flatnonzero(mask)

    def with_points(self, points: ArrayLike) -> Self:
        """The same topology and sets with new node positions (n_nodes, 3) in m."""
        points = np.asarray(points, dtype=float)
        if points.shape != self.points.shape:
            raise MeshError(f"with_points: expected points of shape {self.points.shape}, got {points.shape}")
        return type(self)(points, self.cells, self.node_sets, self.face_sets, self.element_sets)

    def mirrored_elements(self) -> np.ndarray:
        """Indices (k,) of the elements whose nodes come in the mirror image of VTK's order: their Jacobian
        determinant at the cell's centre is negative (a mesher or file with the opposite orientation convention)."""
        ref = self.cell
        centre = ref.corner_points.mean(axis=0, keepdims=True)
        J = np.einsum("ead,ak->edk", self.points[self.cells], ref.shape_gradients(centre)[0])
        return np.flatnonzero(np.linalg.det(J) < 0.0)

    def oriented(self) -> Self:
        """This mesh with the nodes of every mirrored element (:meth:`mirrored_elements`) reordered into VTK's
        orientation (:attr:`~flexbody.fem.elements.ReferenceCell.mirrored_nodes`), its face sets' local faces
        renumbered to match; points, node and element sets unchanged. A mesh without mirrored elements is returned
        as it is. The elements reordered are logged (INFO)."""
        flipped = self.mirrored_elements()
        if not flipped.size:
            return self
        ref = self.cell
        cells = np.array(self.cells)
        cells[flipped] = cells[flipped][:, ref.mirrored_nodes]
        faces = ref.mirrored_faces()
        face_sets = {}
        for name, given in self.face_sets.items():
            rows = np.array(given)
            hit = np.isin(rows[:, 0], flipped)
            rows[hit, 1] = faces[rows[hit, 1]]
            face_sets[name] = rows
        log.info("oriented: %d of %d elements reordered into VTK's orientation", flipped.size, self.n_elements)
        return type(self)(self.points, cells, self.node_sets, face_sets, self.element_sets)


def faces_nodes(mesh: VolumeMesh, faces: np.ndarray) -> np.ndarray:
    """Sorted unique node indices (k,) on the faces ``faces`` (rows (element, local face)) of ``mesh`` (the nodes of
    their :func:`face_cells`, every node of a face)."""
    return np.unique(face_cells(mesh, faces))


def face_keys(mesh: VolumeMesh) -> np.ndarray:
    """The sorted corner nodes of every local face of every element, (m, n_faces, corners per face): a face is known
    by its corners, shared by the two elements it joins."""
    ref = mesh.cell
    return np.sort(np.stack([mesh.cells[:, ref.face_corners(f)] for f in range(ref.n_faces)], axis=1), axis=2)


def boundary_faces(mesh: VolumeMesh) -> np.ndarray:
    """Rows (element, local face) (f, 2) of the faces of ``mesh`` that no other element shares: its boundary, ordered
    by local face, then element."""
    n_faces = mesh.cell.n_faces
    keys = face_keys(mesh).transpose(1, 0, 2).reshape(n_faces * mesh.n_elements, -1)
    rows = np.column_stack(
        [np.tile(np.arange(mesh.n_elements), n_faces), np.repeat(np.arange(n_faces), mesh.n_elements)]
    )
    _, index, counts = np.unique(keys, axis=0, return_index=True, return_counts=True)
    return rows[np.sort(index[counts == 1])]


def boundary_triangles(mesh: VolumeMesh) -> np.ndarray:
    """The boundary of ``mesh`` as triangles (t, 3) of node indices, outward oriented (counter-clockwise seen from
    outside): each boundary face cut into triangles of its nodes (:meth:`face_triangles` of the reference cell: a brick
    face's grid of nodes two triangles per cell, a tetrahedron face itself or, with 10 nodes, four). A face of a
    quadratic element is curved, so its triangles are the piecewise-linear surface through its nodes."""
    ref, faces = mesh.cell, boundary_faces(mesh)
    parts = [
        mesh.cells[faces[faces[:, 1] == f, 0]][:, ref.face_triangles(f)].reshape(-1, 3) for f in range(ref.n_faces)
    ]
    return np.concatenate(parts)


def face_cells(mesh: VolumeMesh, faces: np.ndarray) -> np.ndarray:
    """The faces ``faces`` (rows (element, local face)) as VTK cells of the cell kind's ``face_cell_type`` (quad,
    biquadratic quad, triangle, quadratic triangle), outward normal: (k, nodes per face)."""
    faces = np.asarray(faces, dtype=np.int64).reshape(-1, 2)
    ref = mesh.cell
    out = np.empty((len(faces), len(ref.face_cell(0))), dtype=np.int64)
    for f in range(ref.n_faces):
        rows = faces[:, 1] == f
        out[rows] = mesh.cells[faces[rows, 0]][:, ref.face_cell(f)]
    return out


# --------------------------------------------------------------------------------------- validation
def _checked_points(points) -> np.ndarray:
    try:
        if np.iscomplexobj(points):
            raise MeshError("points must be real coordinates, got complex numbers")
        arr = np.array(points, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise MeshError(f"points must be a numeric (n, 3) array: {err}") from err
    if arr.ndim != 2 or arr.shape[1] != 3:
        raise MeshError(f"points must have shape (n, 3), got {arr.shape}")
    if len(arr) == 0:
        raise MeshError("mesh has no nodes: points has shape (0, 3)")
    bad = np.flatnonzero(~np.isfinite(arr).all(axis=1))
    if bad.size:
        raise MeshError(
            f"node {bad[0]} has non-finite coordinates {arr[bad[0]].tolist()} ({bad.size} non-finite node(s) in total)"
        )
    arr.flags.writeable = False
    return arr


def _checked_cells(cells, n_nodes: int, allowed: tuple[int, ...]) -> np.ndarray:
    kinds = " or ".join(f"(m, {k}) {_VTK_NAMES[k]}" for k in allowed)
    try:
        arr = np.asarray(cells)
    except (TypeError, ValueError) as err:
        raise MeshError(f"wrong cell type: cells must be an integer array {kinds}: {err}") from err
    if arr.ndim != 2 or arr.shape[1] not in allowed:
        raise MeshError(f"wrong cell type: cells must be {kinds}, got an array of shape {arr.shape}")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise MeshError(f"cells must hold integer node indices, got dtype {arr.dtype}")
    if len(arr) == 0:
        raise MeshError("mesh has no cells")
    bad = np.flatnonzero(((arr < 0) | (arr >= n_nodes)).any(axis=1))  # in the given dtype (uint64 too)
    if bad.size:
        row = arr[bad[0]]
        raise MeshError(
            f"element {bad[0]} refers to node(s) {row[(row < 0) | (row >= n_nodes)].tolist()} outside 0..{n_nodes - 1}"
        )
    arr = arr.astype(np.int64)
    srt = np.sort(arr, axis=1)
    rep = np.flatnonzero((np.diff(srt, axis=1) == 0).any(axis=1))
    if rep.size:
        s = srt[rep[0]]
        raise MeshError(f"element {rep[0]} repeats node {s[1:][np.diff(s) == 0][0]}: {arr[rep[0]].tolist()}")
    arr.flags.writeable = False
    return arr


def _check_unmerged_nodes(points: np.ndarray, cells: np.ndarray) -> None:
    """Refuse two nodes of cells at the same position (to 1e-9 of the mesh's extent) that share no cell: duplicates
    left unmerged by a mesher or a hand-made mesh, which leave the elements on either side unconnected. Two such
    nodes of one cell make that cell degenerate, which :class:`~flexbody.FlexibleBody` reports with its Jacobian."""
    used = np.zeros(len(points), dtype=bool)
    used[cells.ravel()] = True
    idx = np.flatnonzero(used)
    extent = float(np.ptp(points[idx], axis=0).max())
    step = 1e-9 * extent if extent > 0.0 else 1.0
    keys = np.round((points[idx] - points[idx].min(axis=0)) / step).astype(np.int64)
    order = np.lexsort(keys.T[::-1])
    same = np.flatnonzero((keys[order[1:]] == keys[order[:-1]]).all(axis=1))
    if not same.size:
        return
    a, b = idx[order[same]], idx[order[same + 1]]
    elems, local = np.nonzero(np.isin(cells, np.union1d(a, b)))
    owners: dict[int, set] = {}
    for e, node in zip(elems.tolist(), cells[elems, local].tolist()):
        owners.setdefault(node, set()).add(e)
    apart = [(min(i, j), max(i, j)) for i, j in zip(a.tolist(), b.tolist()) if not owners[i] & owners[j]]
    if apart:
        i, j = min(apart)
        where = ", ".join(f"{c:.6g}" for c in points[i])
        raise MeshError(
            f"nodes {i} and {j} are both at ({where}) but share no element, so elements "
            f"{sorted(owners[i])[0]} and {sorted(owners[j])[0]} are not connected there "
            f"({len(apart)} such pair(s)): merge the duplicate nodes (unmerged mesh)"
        )


def _checked_index_set(values, size: int, kind: str, name) -> np.ndarray:
    arr = np.asarray(values)
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise MeshError(f"{kind} set '{name}' must hold integer {kind} indices, got dtype {arr.dtype}")
    arr = np.unique(arr.astype(np.int64).ravel())
    if arr.size and (arr[0] < 0 or arr[-1] >= size):
        raise MeshError(f"{kind} set '{name}' has {kind} indices outside 0..{size - 1} (min {arr[0]}, max {arr[-1]})")
    arr.flags.writeable = False
    return arr


def _checked_face_set(values, n_elements: int, name, n_faces: int) -> np.ndarray:
    arr = np.asarray(values)
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise MeshError(f"face set '{name}' must hold integer (element, local face) rows, got {arr.dtype}")
    if arr.size % 2 or (arr.ndim == 2 and arr.shape[1] != 2) or arr.ndim > 2:
        raise MeshError(f"face set '{name}' must have shape (k, 2) (element, local face), got {arr.shape}")
    arr = arr.astype(np.int64).reshape(-1, 2)
    bad = np.flatnonzero((arr[:, 0] < 0) | (arr[:, 0] >= n_elements))
    if bad.size:
        raise MeshError(
            f"face set '{name}' row {bad[0]} refers to element {arr[bad[0], 0]} outside 0..{n_elements - 1}"
        )
    bad = np.flatnonzero((arr[:, 1] < 0) | (arr[:, 1] >= n_faces))
    if bad.size:
        raise MeshError(f"face set '{name}' row {bad[0]} has local face {arr[bad[0], 1]}, not in 0..{n_faces - 1}")
    arr = np.unique(arr, axis=0)
    arr.flags.writeable = False
    return arr


def _lookup(sets: dict, name: str, kind: str) -> np.ndarray:
    try:
        return sets[name]
    except KeyError:
        raise MeshError(f"unknown {kind} '{name}'; available: {sorted(sets) or 'none'}") from None


def extended_set(nodes: np.ndarray, parents: Sequence[np.ndarray], offset: int) -> np.ndarray:
    """Node set plus the new nodes (numbered from ``offset``) whose parent corners all lie in it."""
    new, start = [nodes], offset
    for par in parents:
        new.append(start + np.flatnonzero(np.isin(par, nodes).all(axis=1)))
        start += len(par)
    return np.concatenate(new)
