"""Hexahedral meshes: points (n, 3) in m, cells (m, 8) or (m, 27) in VTK node order, named sets.

A :class:`HexMesh` is the :class:`~flexbody.fem.volume_mesh.VolumeMesh` of a flexible body discretised by
8-node trilinear [DE-101] or 27-node triquadratic [DE-102] hexahedra. Cells follow VTK_HEXAHEDRON /
VTK_TRIQUADRATIC_HEXAHEDRON (see :mod:`flexbody.fem.elements`); local faces 0: ξ=-1, 1: ξ=+1, 2: η=-1,
3: η=+1, 4: ζ=-1, 5: ζ=+1.

Builders: :func:`box` (structured), :func:`read` (any meshio format: Gmsh .msh, Abaqus .inp, .vtu, ...),
:meth:`HexMesh.to_quadratic` (H8 → H27), :meth:`HexMesh.refined` (H8 split in 8). :func:`write` stores
a mesh with its sets through meshio.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal, overload

import numpy as np

from ..errors import MeshError
from .elements import FACE_AXIS_SIDE, HEX8_NODES, HEX27_NODES
from .volume_mesh import VolumeMesh, boundary_faces, boundary_triangles, extended_set, face_cells, faces_nodes

if TYPE_CHECKING:
    from .tet_mesh import TetMesh

__all__ = ["HexMesh", "box", "face_quads", "faces_nodes", "boundary_faces", "boundary_triangles", "HEX_TYPES"]

HEX_TYPES = {"hexahedron": 8, "hexahedron27": 27}
#: For each of the 27 VTK triquadratic nodes, the local corners (0..7) it is the centroid of.
_PARENTS = [np.flatnonzero(np.all((p == HEX8_NODES) | (p == 0), axis=1)) for p in HEX27_NODES]


class HexMesh(VolumeMesh):
    """A hexahedral mesh: a :class:`~flexbody.fem.volume_mesh.VolumeMesh` of 8-node (VTK_HEXAHEDRON) or 27-node
    (VTK_TRIQUADRATIC_HEXAHEDRON) cells, with the builders of bricks (:meth:`to_quadratic`, :meth:`refined`)."""

    CELL_NODES = (8, 27)

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
        node_sets = {name: extended_set(nodes, parents, self.n_nodes) for name, nodes in self.node_sets.items()}
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
@overload
def box(
    size: Sequence[float] = ...,
    divisions: Sequence[int] = ...,
    order: int = ...,
    origin: Sequence[float] = ...,
    cells: Literal["hexahedra"] = ...,
) -> HexMesh: ...


@overload
def box(
    size: Sequence[float] = ...,
    divisions: Sequence[int] = ...,
    order: int = ...,
    origin: Sequence[float] = ...,
    *,
    cells: Literal["tetrahedra"],
) -> TetMesh: ...


def box(
    size: Sequence[float] = (1.0, 1.0, 1.0),
    divisions: Sequence[int] = (1, 1, 1),
    order: int = 1,
    origin: Sequence[float] = (0.0, 0.0, 0.0),
    cells: str = "hexahedra",
) -> VolumeMesh:
    """A structured box mesh [origin, origin + size] with bricks numbered x-fastest, or their tetrahedra.

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
    cells : {"hexahedra", "tetrahedra"}
        "tetrahedra": each brick cut into six tetrahedra (:func:`~flexbody.fem.tet_mesh.split_hexahedra`, element
        e → 6e..6e+5) with 4 nodes (order 1) or 10 (order 2, the same nodes as the 27-node bricks' lattice
        without their face and body centres).

    Returns
    -------
    HexMesh or TetMesh
        With node sets and face sets "x0", "x1", "y0", "y1", "z0", "z1" for the six boundary planes
        (every node on the plane, and the boundary faces (element, local face)).
    """
    if cells not in ("hexahedra", "tetrahedra"):
        raise MeshError(f"box: cells must be 'hexahedra' or 'tetrahedra', got {cells!r}")
    if cells == "tetrahedra":
        from .tet_mesh import split_hexahedra  # the tetrahedral meshes build on this module's bricks

        tets = split_hexahedra(box(size, divisions, 1, origin))
        return tets if order == 1 else tets.to_quadratic()
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
    return face_cells(mesh, faces)
