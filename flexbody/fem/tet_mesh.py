"""Tetrahedral meshes: the :class:`TetMesh` of 4-node (VTK_TETRA) or 10-node (VTK_QUADRATIC_TETRA) cells, the
10-node mesh of a 4-node one (:meth:`TetMesh.to_quadratic`) and the tetrahedra of a brick mesh
(:func:`split_hexahedra`, which ``fb.mesh.box(..., cells="tetrahedra")`` uses).

Local faces are those of :data:`~flexbody.fem.tetrahedra.TET_FACES`: 0: (0, 1, 3), 1: (1, 2, 3), 2: (2, 0, 3),
3: (0, 2, 1), outward.
"""

from __future__ import annotations

import itertools

import numpy as np

from ..errors import MeshError
from .elements import HEX8_NODES
from .tetrahedra import TET10_EDGES
from .volume_mesh import VolumeMesh, boundary_faces, extended_set, face_keys

__all__ = ["TetMesh", "split_hexahedra"]


class TetMesh(VolumeMesh):
    """A tetrahedral mesh: a :class:`~flexbody.fem.volume_mesh.VolumeMesh` of 4-node (VTK_TETRA) or 10-node
    (VTK_QUADRATIC_TETRA: corners, then the midpoints of the edges 01, 12, 20, 03, 13, 23) cells."""

    CELL_NODES = (4, 10)

    def to_quadratic(self) -> TetMesh:
        """The 10-node mesh with the same corners (Tet4 → Tet10): one node at the middle of every edge, shared by
        the elements around it (known by its two corners, not by coordinates). Face and element sets are unchanged;
        each node set gains the midpoints of the edges both of whose corners are in it."""
        if self.order != 1:
            raise MeshError("to_quadratic: the mesh already has 10-node (order 2) cells")
        pairs = np.array(TET10_EDGES)
        keys = np.sort(self.cells[:, pairs], axis=2).reshape(-1, 2)  # (6 m, 2)
        edges, inverse = np.unique(keys, axis=0, return_inverse=True)
        cells = np.hstack([self.cells, self.n_nodes + inverse.reshape(self.n_elements, 6)])
        points = np.vstack([self.points, self.points[edges].mean(axis=1)])
        node_sets = {name: extended_set(nodes, [edges], self.n_nodes) for name, nodes in self.node_sets.items()}
        return TetMesh(points, cells, node_sets, self.face_sets, self.element_sets)


def _kuhn_tetrahedra() -> np.ndarray:
    """The six tetrahedra (6, 4) of the reference cube's corners (VTK_HEXAHEDRON local indices) around its diagonal
    from corner (−1, −1, −1) to (1, 1, 1) (Kuhn's subdivision), each positively oriented. Every brick of a structured
    grid split alike cuts each shared face along the same diagonal, so the tetrahedra are conforming."""
    index = {tuple(p): k for k, p in enumerate(HEX8_NODES.astype(int))}
    out = []
    for perm in itertools.permutations(range(3)):
        corner = np.array([-1, -1, -1])
        path = [index[tuple(corner)]]
        for axis in perm:
            corner = corner.copy()
            corner[axis] = 1
            path.append(index[tuple(corner)])
        X = HEX8_NODES[path]
        if np.linalg.det((X[1:] - X[0]).T) < 0:
            path[1], path[2] = path[2], path[1]
        out.append(path)
    return np.array(out)


def split_hexahedra(mesh: VolumeMesh) -> TetMesh:
    """The 4-node tetrahedral mesh of an 8-node brick mesh: each brick cut into six tetrahedra around the diagonal
    from its local corner 0 to 6 (Kuhn's subdivision; conforming on structured grids such as ``fb.mesh.box``, whose
    bricks share the orientation of their local axes). Element e gives tetrahedra 6e..6e+5; node sets are kept;
    element sets map to the children; a face set becomes the faces of the children that lie in its brick faces."""
    if mesh.nodes_per_cell != 8:
        raise MeshError(f"split_hexahedra: the mesh must have 8-node bricks, got {mesh.nodes_per_cell}-node cells")
    cells = mesh.cells[:, _kuhn_tetrahedra()].reshape(-1, 4)
    element_sets = {name: (6 * e[:, None] + np.arange(6)).ravel() for name, e in mesh.element_sets.items()}
    tets = TetMesh(mesh.points, cells, mesh.node_sets, {}, element_sets)
    if len(boundary_faces(tets)) != 2 * len(boundary_faces(mesh)):
        raise MeshError(
            "split_hexahedra: the tetrahedra of neighbouring bricks do not share their faces (the bricks' local "
            "axes are not aligned as in a structured grid)"
        )
    quads, triangles = face_keys(mesh), face_keys(tets)
    face_sets = {name: _child_faces(quads, triangles, rows) for name, rows in mesh.face_sets.items()}
    return TetMesh(mesh.points, cells, mesh.node_sets, face_sets, element_sets)


def _child_faces(quads: np.ndarray, triangles: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Rows (tetrahedron, local face) of the tetrahedron faces that lie in the brick faces ``rows``: those of the six
    children 6e..6e+5 of each brick e whose three corners are corners of its face (``quads`` and ``triangles``: the
    :func:`face_keys` of the bricks and of the tetrahedra)."""
    corners = quads[rows[:, 0], rows[:, 1]]  # (k, 4)
    children = (6 * rows[:, :1] + np.arange(6)).repeat(4, axis=1)  # (k, 24): child c's faces 0..3
    local = np.tile(np.arange(4), (len(rows), 6))
    inside = np.all(np.any(triangles[children, local][..., None] == corners[:, None, None, :], axis=-1), axis=-1)
    return np.column_stack([children[inside], local[inside]])
