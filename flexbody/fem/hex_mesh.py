"""Hexahedral meshes: points (n, 3) in m, cells (m, 8) or (m, 27) in VTK node order, named sets.

A :class:`HexMesh` is a plain validated data container for the reference configuration of a flexible
body discretised by 8-node trilinear [DE-101] or 27-node triquadratic [DE-102] hexahedra. Cells follow
VTK_HEXAHEDRON / VTK_TRIQUADRATIC_HEXAHEDRON (see :mod:`flexbody.fem.elements`), so meshes round-trip
through meshio, pyvista and ParaView. Named sets:

- node sets: sorted unique node indices (n_k,), e.g. the nodes of a clamped end;
- face sets: rows (element index, local face 0..5), local faces 0: ξ=-1, 1: ξ=+1, 2: η=-1, 3: η=+1,
  4: ζ=-1, 5: ζ=+1, e.g. the faces that carry a traction;
- element sets: sorted unique element indices, e.g. a material region.

Builders: :func:`box` (structured), :func:`read` (any meshio format: Gmsh .msh, Abaqus .inp, .vtu, ...),
:meth:`HexMesh.to_quadratic` (H8 → H27), :meth:`HexMesh.refined` (H8 split in 8). :func:`write` stores
a mesh with its sets through meshio.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
from numpy.typing import ArrayLike

from ..errors import MeshError
from .elements import FACE_AXIS_SIDE, FACE_TANGENT_AXES, HEX8_NODES, HEX27_NODES, reference_hex

HEX_TYPES = {"hexahedron": 8, "hexahedron27": 27}
CELL_TYPE = {8: "hexahedron", 27: "hexahedron27"}
#: For each of the 27 VTK triquadratic nodes, the local corners (0..7) it is the centroid of.
_PARENTS = [np.flatnonzero(np.all((p == HEX8_NODES) | (p == 0), axis=1)) for p in HEX27_NODES]


class HexMesh:
    """A hexahedral mesh: reference node positions, cells and named node/face/element sets.

    Parameters
    ----------
    points : array_like (n_nodes, 3)
        Reference node positions in m; finite.
    cells : array_like of int (n_elements, 8) or (n_elements, 27)
        Node indices of each cell in VTK_HEXAHEDRON or VTK_TRIQUADRATIC_HEXAHEDRON order.
    node_sets : mapping str -> array_like of int, optional
        Named node index sets; stored sorted and unique.
    face_sets : mapping str -> array_like of int (k, 2), optional
        Named face sets, rows (element index, local face 0..5); stored as sorted unique rows.
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

    def __init__(
        self,
        points: ArrayLike,
        cells: ArrayLike,
        node_sets: Mapping | None = None,
        face_sets: Mapping | None = None,
        element_sets: Mapping | None = None,
    ):
        self._points = _checked_points(points)
        self._cells = _checked_cells(cells, len(self._points))
        n, m = self.n_nodes, self.n_elements
        self.node_sets = {str(k): _checked_index_set(v, n, "node", k) for k, v in (node_sets or {}).items()}
        self.face_sets = {str(k): _checked_face_set(v, m, k) for k, v in (face_sets or {}).items()}
        self.element_sets = {str(k): _checked_index_set(v, m, "element", k) for k, v in (element_sets or {}).items()}
        _check_unmerged_nodes(self.points, self.cells)  # MeshError: coincident nodes that share no cell

    @property
    def points(self) -> np.ndarray:
        """Node coordinates (n_nodes, 3) [m], read-only: :meth:`with_points` makes a mesh with new ones."""
        return self._points

    @points.setter
    def points(self, value: ArrayLike) -> None:
        raise MeshError("HexMesh.points is read-only: mesh.with_points(points) makes a mesh with new coordinates")

    @property
    def cells(self) -> np.ndarray:
        """Cells (n_elements, 8) or (n_elements, 27), node indices in VTK order, read-only."""
        return self._cells

    @cells.setter
    def cells(self, value: ArrayLike) -> None:
        raise MeshError("HexMesh.cells is read-only: make a new HexMesh(points, cells, ...) instead")

    def __repr__(self) -> str:
        return (
            f"HexMesh(n_nodes={self.n_nodes}, n_elements={self.n_elements}, order={self.order}, "
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
        """8 (trilinear) or 27 (triquadratic)."""
        return self.cells.shape[1]

    @property
    def order(self) -> int:
        """Polynomial order of the cells: 1 (8 nodes) or 2 (27 nodes)."""
        return 1 if self.nodes_per_cell == 8 else 2

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

    def with_points(self, points: ArrayLike) -> HexMesh:
        """The same topology and sets with new node positions (n_nodes, 3) in m."""
        points = np.asarray(points, dtype=float)
        if points.shape != self.points.shape:
            raise MeshError(f"with_points: expected points of shape {self.points.shape}, got {points.shape}")
        return HexMesh(points, self.cells, self.node_sets, self.face_sets, self.element_sets)

    def to_quadratic(self) -> HexMesh:
        """The 27-node mesh with the same corners (H8 → H27).

        Edge-midpoint, face-centre and body-centre nodes are shared between neighbouring elements
        (identified by their sorted parent corners, not by coordinates) and placed at the average of
        their parent corners. Face and element sets are unchanged; each node set gains the new nodes
        all of whose parent corners are in it.
        """
        if self.order != 1:
            raise MeshError("to_quadratic: the mesh already has 27-node (order 2) cells")
        cells = np.empty((self.n_elements, 27), dtype=np.int64)
        cells[:, :8] = self.cells
        points, parents = [self.points], []
        next_id = self.n_nodes
        for local_range in (range(8, 20), range(20, 26), range(26, 27)):
            local = list(local_range)
            corner_idx = np.array([_PARENTS[k] for k in local])  # (k, p)
            keys = np.sort(self.cells[:, corner_idx], axis=2).reshape(-1, corner_idx.shape[1])
            unique, inverse = np.unique(keys, axis=0, return_inverse=True)
            cells[:, local] = next_id + inverse.reshape(self.n_elements, len(local))
            points.append(self.points[unique].mean(axis=1))
            parents.append(unique)
            next_id += len(unique)
        node_sets = {name: _extended_set(nodes, parents, self.n_nodes) for name, nodes in self.node_sets.items()}
        return HexMesh(np.vstack(points), cells, node_sets, self.face_sets, self.element_sets)

    def refined(self) -> HexMesh:
        """The order-1 mesh with each hexahedron split into 8 (element e → 8e..8e+7).

        Node sets gain the new nodes all of whose parent corners are in the set; face and element
        sets are mapped to the children.
        """
        if self.order != 1:
            raise MeshError("refined: only order-1 meshes can be refined; refine, then call to_quadratic()")
        quad = self.to_quadratic()
        children = _child_local_nodes()  # (8, 8) local H27 nodes
        cells = quad.cells[:, children].reshape(-1, 8)
        face_sets = {name: _child_faces(rows) for name, rows in self.face_sets.items()}
        element_sets = {name: (8 * e[:, None] + np.arange(8)).ravel() for name, e in self.element_sets.items()}
        return HexMesh(quad.points, cells, quad.node_sets, face_sets, element_sets)


def faces_nodes(mesh: HexMesh, faces: np.ndarray) -> np.ndarray:
    """Sorted unique node indices (k,) on the faces ``faces`` (rows (element, local face)) of ``mesh``."""
    faces = np.asarray(faces, dtype=np.int64).reshape(-1, 2)
    ref = reference_hex(mesh.nodes_per_cell)
    parts = [mesh.cells[faces[faces[:, 1] == f, 0]][:, ref.face_nodes(f)].ravel() for f in range(6)]
    return np.unique(np.concatenate(parts))


def boundary_faces(mesh: HexMesh) -> np.ndarray:
    """Rows (element, local face) (f, 2) of the faces of ``mesh`` that no other element shares: its boundary (a face
    is known by its four corner nodes)."""
    corners = reference_hex(8)
    keys, rows = [], []
    for f in range(6):
        local = corners.face_nodes(f)  # the face's four corners among the element's first eight nodes
        keys.append(np.sort(mesh.cells[:, local], axis=1))
        rows.append(np.column_stack([np.arange(mesh.n_elements), np.full(mesh.n_elements, f)]))
    keys_, rows_ = np.concatenate(keys), np.concatenate(rows)
    _, index, counts = np.unique(keys_, axis=0, return_index=True, return_counts=True)
    return rows_[np.sort(index[counts == 1])]


def boundary_triangles(mesh: HexMesh) -> np.ndarray:
    """The boundary of ``mesh`` as triangles (t, 3) of node indices, outward oriented (counter-clockwise seen from
    outside): each boundary face's grid of nodes (2 × 2 for 8-node bricks, 3 × 3 for 27-node ones) cut into two
    triangles per cell. A face of a 27-node brick is curved, so its eight triangles are the piecewise-linear surface
    through its nodes."""
    ref, faces, parts = reference_hex(mesh.nodes_per_cell), boundary_faces(mesh), []
    for f in range(6):
        elements = faces[faces[:, 1] == f, 0]
        axis, side = FACE_AXIS_SIDE[f]
        i, j = FACE_TANGENT_AXES[axis]  # e_i × e_j = e_axis
        local = ref.face_nodes(f)
        values = np.unique(ref.nodes[local, i])
        grid = np.empty((values.size, values.size), dtype=np.int64)
        for node in local:
            grid[np.searchsorted(values, ref.nodes[node, i]), np.searchsorted(values, ref.nodes[node, j])] = node
        cells = [
            tri
            for a in range(values.size - 1)
            for b in range(values.size - 1)
            for tri in (
                (grid[a, b], grid[a + 1, b], grid[a + 1, b + 1]),
                (grid[a, b], grid[a + 1, b + 1], grid[a, b + 1]),
            )
        ]
        triangles = np.array(cells, dtype=np.int64)
        if side < 0:  # counter-clockwise in (ξ_i, ξ_j) points along +e_axis: turn it outward
            triangles = triangles[:, [0, 2, 1]]
        parts.append(mesh.cells[elements][:, triangles].reshape(-1, 3))
    return np.concatenate(parts)


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


def _checked_cells(cells, n_nodes: int) -> np.ndarray:
    try:
        arr = np.asarray(cells)
    except (TypeError, ValueError) as err:
        raise MeshError(f"wrong cell type: cells must be an (m, 8) or (m, 27) integer array: {err}") from err
    if arr.ndim != 2 or arr.shape[1] not in (8, 27):
        raise MeshError(
            f"wrong cell type: cells must be (m, 8) VTK_HEXAHEDRON or (m, 27) "
            f"VTK_TRIQUADRATIC_HEXAHEDRON, got an array of shape {arr.shape}"
        )
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


def _checked_face_set(values, n_elements: int, name) -> np.ndarray:
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
    bad = np.flatnonzero((arr[:, 1] < 0) | (arr[:, 1] > 5))
    if bad.size:
        raise MeshError(f"face set '{name}' row {bad[0]} has local face {arr[bad[0], 1]}, not in 0..5")
    arr = np.unique(arr, axis=0)
    arr.flags.writeable = False
    return arr


def _lookup(sets: dict, name: str, kind: str) -> np.ndarray:
    try:
        return sets[name]
    except KeyError:
        raise MeshError(f"unknown {kind} '{name}'; available: {sorted(sets) or 'none'}") from None


def _extended_set(nodes: np.ndarray, parents: Sequence[np.ndarray], offset: int) -> np.ndarray:
    """Node set plus the new nodes (numbered from ``offset``) whose parent corners all lie in it."""
    new, start = [nodes], offset
    for par in parents:
        new.append(start + np.flatnonzero(np.isin(par, nodes).all(axis=1)))
        start += len(par)
    return np.concatenate(new)


def _child_local_nodes() -> np.ndarray:
    """Local H27 node indices (8, 8) of the 8 child hexahedra; child c = bx + 2 by + 4 bz (x fastest)."""
    lookup = {tuple(p): k for k, p in enumerate(HEX27_NODES.astype(int))}
    lows = [np.array([c & 1, (c >> 1) & 1, (c >> 2) & 1]) - 1 for c in range(8)]
    return np.array([[lookup[tuple(lo + (n + 1) // 2)] for n in HEX8_NODES.astype(int)] for lo in lows])


def _child_faces(rows: np.ndarray) -> np.ndarray:
    """Face rows of the children lying on parent faces ``rows`` (k, 2); child c of e is 8e + c."""
    out = []
    for f in range(6):
        axis, side = FACE_AXIS_SIDE[f]
        kids = [c for c in range(8) if ((c >> axis) & 1) == (side > 0)]
        elems = rows[rows[:, 1] == f, 0]
        out.append(np.column_stack([(8 * elems[:, None] + kids).ravel(), np.full(4 * len(elems), f)]))
    return np.vstack(out)


# --------------------------------------------------------------------------------------- box
def box(
    size: Sequence[float] = (1.0, 1.0, 1.0),
    divisions: Sequence[int] = (1, 1, 1),
    order: int = 1,
    origin: Sequence[float] = (0.0, 0.0, 0.0),
) -> HexMesh:
    """A structured box mesh [origin, origin + size] with elements numbered x-fastest.

    Parameters
    ----------
    size : (3,) floats
        Edge lengths (lx, ly, lz) in m; positive and finite.
    divisions : (3,) ints
        Elements (nx, ny, nz) along each axis; at least 1.
    order : int
        1 (8-node cells, (nx+1)(ny+1)(nz+1) nodes) or 2 (27-node cells on the (2nx+1)(2ny+1)(2nz+1)
        node lattice).
    origin : (3,) floats
        Corner with the smallest coordinates, in m.

    Returns
    -------
    HexMesh
        With node sets and face sets "x0", "x1", "y0", "y1", "z0", "z1" for the six boundary planes
        (every node on the plane, and the boundary faces (element, local face)).
    """
    lengths, div, corner, order = _checked_box_args(size, divisions, order, origin)
    counts = order * div + 1
    axes = [corner[a] + np.linspace(0.0, lengths[a], counts[a]) for a in range(3)]
    lattice = np.indices(counts[::-1].tolist()).reshape(3, -1)[::-1].T  # (n, 3) lattice ijk, x fastest
    points = np.column_stack([axes[a][lattice[:, a]] for a in range(3)])
    elements = np.indices(div[::-1].tolist()).reshape(3, -1)[::-1].T  # (m, 3) element ijk, x fastest
    ref = HEX8_NODES if order == 1 else HEX27_NODES
    offsets = ((ref + 1) * order // 2).astype(np.int64)  # (npc, 3) lattice offsets
    ijk = order * elements[:, None, :] + offsets[None, :, :]
    cells = ijk[..., 0] + counts[0] * (ijk[..., 1] + counts[1] * ijk[..., 2])
    node_sets: dict[str, np.ndarray] = {}
    face_sets: dict[str, np.ndarray] = {}
    for face, (axis, side) in enumerate(FACE_AXIS_SIDE):
        name = f"{'xyz'[axis]}{0 if side < 0 else 1}"
        node_sets[name] = np.flatnonzero(lattice[:, axis] == (0 if side < 0 else counts[axis] - 1))
        elems = np.flatnonzero(elements[:, axis] == (0 if side < 0 else div[axis] - 1))
        face_sets[name] = np.column_stack([elems, np.full(len(elems), face)])
    return HexMesh(points, cells, node_sets, face_sets)


def _real_triple(value, what: str) -> np.ndarray:
    """``value`` as three real floats, or MeshError naming ``what`` (the float array when its shape is wrong)."""
    try:
        if np.iscomplexobj(value):
            raise TypeError("complex numbers")
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as err:
        raise MeshError(f"box: {what}, got {value!r}") from err
    if arr.shape != (3,) or not np.all(np.isfinite(arr)):
        raise MeshError(f"box: {what}, got {arr.tolist() if arr.ndim else value!r}")
    return arr


def _checked_box_args(size, divisions, order, origin) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    size = _real_triple(size, "size must be three positive finite lengths")
    origin = _real_triple(origin, "origin must be three finite coordinates")
    if np.any(size <= 0):
        raise MeshError(f"box: size must be three positive finite lengths, got {size.tolist()}")
    div = np.asarray(divisions)
    if (
        div.shape != (3,)
        or div.dtype == bool
        or not np.issubdtype(div.dtype, np.number)
        or np.iscomplexobj(div)
        or not np.all(np.isfinite(div))
        or np.any(div != np.round(div))
        or np.any(div < 1)
    ):
        raise MeshError(f"box: divisions must be three integers >= 1, got {div.tolist()}")
    if (
        isinstance(order, (bool, np.bool_))
        or not isinstance(order, (int, np.integer, float, np.floating))
        or order not in (1, 2)
    ):
        raise MeshError(f"box: order must be 1 or 2, got {order!r}")
    order = int(order)
    counts = [order * int(d) + 1 for d in div]
    n_nodes, n_cells = counts[0] * counts[1] * counts[2], int(np.prod([int(d) for d in div], dtype=object))
    need = 8 * (4 * n_nodes + 3 * n_cells * (8 if order == 1 else 27))  # points, lattice, cell indices [B]
    if need > _memory_bytes():
        raise MeshError(
            f"box: divisions {div.tolist()} (order {order}) give {n_nodes:.3g} nodes and {n_cells:.3g} "
            f"elements, about {need / 2**30:.3g} GiB: more than this machine's memory"
        )
    return size, div.astype(np.int64), origin, order


def _memory_bytes() -> int:
    """Physical memory of this machine [B] (2⁶³ when unknown)."""
    try:
        import os

        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return 2**63


# --------------------------------------------------------------------------------------- faces
def face_quads(mesh: HexMesh, faces: np.ndarray) -> np.ndarray:
    """Quadrilaterals (k, 4) or (k, 9) (VTK quad / biquadratic quad order, outward normal) of ``faces``."""
    faces = np.asarray(faces, dtype=np.int64).reshape(-1, 2)
    ref = reference_hex(mesh.nodes_per_cell)
    st = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1], [0, -1], [1, 0], [0, 1], [-1, 0], [0, 0]], float)
    st = st[:4] if mesh.order == 1 else st
    out = np.empty((len(faces), len(st)), dtype=np.int64)
    for f in range(6):
        _axis, side = FACE_AXIS_SIDE[f]
        xi = ref.face_points(f, st if side > 0 else st[:, ::-1])
        local = [int(np.flatnonzero(np.all(ref.nodes == x, axis=1))[0]) for x in xi]
        rows = faces[:, 1] == f
        out[rows] = mesh.cells[faces[rows, 0]][:, local]
    return out
