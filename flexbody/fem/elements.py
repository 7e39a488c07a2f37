"""Reference hexahedra: trilinear 8-node and triquadratic 27-node Lagrange elements [DE-101, DE-102].

The 8-node shape functions are N_a(ξ) = 1/8 (1 + ξ_a ξ)(1 + η_a η)(1 + ζ_a ζ) [DE-101]; the 27-node ones
are tensor products of the 1-D quadratic Lagrange polynomials on {-1, 0, 1} [DE-102]. Nodes follow the VTK
orders VTK_HEXAHEDRON and VTK_TRIQUADRATIC_HEXAHEDRON, so meshes round-trip through meshio, pyvista and
ParaView. Reference coordinates ξ ∈ [-1, 1]³.

Local faces are numbered 0: ξ=-1, 1: ξ=+1, 2: η=-1, 3: η=+1, 4: ζ=-1, 5: ζ=+1 (the order of the 27-node
face-centre nodes 20..25).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from functools import cache
from typing import ClassVar, NamedTuple

import numpy as np

from ..errors import MeshError

#: Reference coordinates of the VTK_HEXAHEDRON nodes, (8, 3).
HEX8_NODES = np.array(
    [[-1, -1, -1], [1, -1, -1], [1, 1, -1], [-1, 1, -1], [-1, -1, 1], [1, -1, 1], [1, 1, 1], [-1, 1, 1]], dtype=float
)

#: Reference coordinates of the VTK_TRIQUADRATIC_HEXAHEDRON nodes, (27, 3): corners, the 12 edge
#: midpoints (edges 01, 12, 23, 30, 45, 56, 67, 74, 04, 15, 26, 37), the face centres ξ-, ξ+, η-, η+,
#: ζ-, ζ+, and the body centre.
HEX27_NODES = np.array(
    [
        [-1, -1, -1],
        [1, -1, -1],
        [1, 1, -1],
        [-1, 1, -1],
        [-1, -1, 1],
        [1, -1, 1],
        [1, 1, 1],
        [-1, 1, 1],
        [0, -1, -1],
        [1, 0, -1],
        [0, 1, -1],
        [-1, 0, -1],
        [0, -1, 1],
        [1, 0, 1],
        [0, 1, 1],
        [-1, 0, 1],
        [-1, -1, 0],
        [1, -1, 0],
        [1, 1, 0],
        [-1, 1, 0],
        [-1, 0, 0],
        [1, 0, 0],
        [0, -1, 0],
        [0, 1, 0],
        [0, 0, -1],
        [0, 0, 1],
        [0, 0, 0],
    ],
    dtype=float,
)

#: (axis, side) of local faces 0..5.
FACE_AXIS_SIDE = ((0, -1.0), (0, 1.0), (1, -1.0), (1, 1.0), (2, -1.0), (2, 1.0))
#: In-face parameter axes (i, j) of a face normal to axis k, with e_i × e_j = e_k.
FACE_TANGENT_AXES = {0: (1, 2), 1: (2, 0), 2: (0, 1)}


def gauss_legendre(n_points: int) -> tuple[np.ndarray, np.ndarray]:
    """1-D Gauss–Legendre points and weights on [-1, 1]; exact for polynomials of degree 2n-1."""
    if n_points < 1:
        raise MeshError(f"quadrature needs at least one point per direction, got {n_points}")
    return np.polynomial.legendre.leggauss(n_points)


def gauss_hex(n_points) -> tuple[np.ndarray, np.ndarray]:
    """Tensor-product Gauss rule on the reference cube: points (n_ξ n_η n_ζ, 3) and weights, for ``n_points`` per
    direction, or (n_ξ, n_η, n_ζ) along ξ, η, ζ."""
    counts = (n_points,) * 3 if np.ndim(n_points) == 0 else tuple(n_points)
    (a, wa), (b, wb), (c, wc) = (gauss_legendre(int(n)) for n in counts)
    grid = np.stack(np.meshgrid(a, b, c, indexing="ij"), axis=-1).reshape(-1, 3)
    weights = np.einsum("i,j,k->ijk", wa, wb, wc).ravel()
    return grid, weights


@cache
def spurious_modes(nodes_per_cell: int, rule: tuple[int, int, int]) -> int:
    """Zero-energy modes of one brick beyond its six rigid-body motions under the Gauss rule ``rule`` (points
    along ξ, η, ζ) (:func:`zero_energy_modes`). Rules with too few points leave hourglass modes (27-node elements
    with 2 × 2 × 2 points, 8-node ones with 1 point)."""
    return zero_energy_modes(reference_hex(nodes_per_cell), *gauss_hex(rule))


def zero_energy_modes(element: ReferenceCell, points: np.ndarray, weights: np.ndarray) -> int:
    """Zero-energy modes of one reference ``element`` beyond its six rigid-body motions under the rule (``points``
    (g, 3), ``weights`` (g,)): the null space of the reference cell's linear elastic stiffness (λ = μ = 1)."""
    G = element.shape_gradients(points)  # (nq, nn, 3), on the reference cell itself: J = I
    w = weights
    K = (
        np.einsum("g,gak,gbl->akbl", w, G, G)  # λ G_a ⊗ G_b
        + np.einsum("g,gal,gbk->akbl", w, G, G)  # μ G_b ⊗ G_a
        + np.einsum("g,gam,gbm,kl->akbl", w, G, G, np.eye(3))
    )  # μ (G_a · G_b) I
    n = 3 * element.n_nodes
    values = np.linalg.eigvalsh(K.reshape(n, n))
    return int(np.sum(values < 1e-10 * values.max())) - 6


def gauss_quad(n_points: int) -> tuple[np.ndarray, np.ndarray]:
    """Tensor-product Gauss rule on the reference square: points (n², 2) and weights (n²,)."""
    x, w = gauss_legendre(n_points)
    grid = np.stack(np.meshgrid(x, x, indexing="ij"), axis=-1).reshape(-1, 2)
    return grid, np.outer(w, w).ravel()


def _lagrange_1d(order: int, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """1-D Lagrange basis on nodes {-1, 1} (order 1) or {-1, 0, 1} (order 2), indexed by node coordinate.

    Returns values and derivatives, each (len(x), 3) with columns for node coordinates -1, 0, +1
    (column 1 is zero for order 1).
    """
    x = np.asarray(x, dtype=float)
    val = np.zeros((x.size, 3))
    der = np.zeros((x.size, 3))
    if order == 1:
        val[:, 0], val[:, 2] = 0.5 * (1 - x), 0.5 * (1 + x)
        der[:, 0], der[:, 2] = -0.5, 0.5
    else:
        val[:, 0], val[:, 1], val[:, 2] = 0.5 * x * (x - 1), 1 - x * x, 0.5 * x * (x + 1)
        der[:, 0], der[:, 1], der[:, 2] = x - 0.5, -2 * x, x + 0.5
    return val, der


class FaceRule(NamedTuple):
    """A quadrature rule on one local face of a reference cell, as the face loads integrate with it: the reference
    ``points`` (g, 3) of the face, their ``weights`` (g,) in the face's parameters (s, t), the constant reference
    directions ``ds`` = ∂ξ/∂s and ``dt`` = ∂ξ/∂t (3,), and the ``sign`` (±1) that makes sign · (∂x/∂s × ∂x/∂t) point
    out of the element."""

    points: np.ndarray
    weights: np.ndarray
    ds: np.ndarray
    dt: np.ndarray
    sign: float


@dataclass(frozen=True)
class ReferenceCell(ABC):
    """What every reference element has: its polynomial ``order`` and its ``nodes`` (n_nodes, 3), the reference
    coordinates of the nodes in VTK order (:class:`ReferenceHex`, :class:`~flexbody.fem.tetrahedra.ReferenceTet`).

    Each kind also gives (the protocol the bodies, loads, meshes and files use): ``name``, ``meshio_type`` (the
    meshio / VTK cell name), ``n_corners`` (its first nodes are the corners), ``n_faces``, ``shape_functions``,
    ``shape_gradients``, ``face_nodes(f)`` (local nodes of face f), ``face_corners(f)``, ``face_cell(f)`` (the face
    as a VTK cell of type ``face_cell_type``, outward), ``face_triangles(f)`` (the face cut into outward
    triangles of its nodes) and ``face_rule(f)`` (:class:`FaceRule`).
    """

    order: int
    nodes: np.ndarray
    n_corners: ClassVar[int]
    n_faces: ClassVar[int]
    meshio_types: ClassVar[tuple[str, str]]  # of order 1 and 2
    face_cell_types: ClassVar[tuple[str, str]]
    mirror: ClassVar[np.ndarray]  # (3, 3): a reflection of the reference coordinates that maps the cell onto itself

    @property
    def n_nodes(self) -> int:
        return len(self.nodes)

    @property
    def mirrored_nodes(self) -> np.ndarray:
        """The permutation (n_nodes,) of the local nodes that turns an element inside out and back: node a of the
        mirrored element is node ``mirrored_nodes[a]`` of the original, the reference nodes reflected by ``mirror``
        (a cell whose nodes come in the mirror image of VTK's order has negative Jacobians; this order mends it)."""
        return self.node_indices(self.nodes @ self.mirror.T)

    def node_indices(self, points: np.ndarray) -> np.ndarray:
        """The local nodes (k,) at the reference points (k, 3) (each a node's coordinates, to rounding)."""
        return np.array([int(np.flatnonzero(np.all(np.isclose(self.nodes, x), axis=1))[0]) for x in points])

    def mirrored_faces(self) -> np.ndarray:
        """(n_faces,): local face f of an element is local face ``mirrored_faces()[f]`` of its mirrored element."""
        where = np.argsort(self.mirrored_nodes)  # original local node → its place in the mirrored element
        keys = [frozenset(self.face_corners(f).tolist()) for f in range(self.n_faces)]
        return np.array([keys.index(frozenset(where[self.face_corners(f)].tolist())) for f in range(self.n_faces)])

    @property
    def corner_points(self) -> np.ndarray:
        """Reference coordinates (n_corners, 3) of the corners (where Jacobian checks look besides Gauss points)."""
        return self.nodes[: self.n_corners]

    @property
    @abstractmethod
    def name(self) -> str: ...

    @property
    def meshio_type(self) -> str:
        """The meshio / VTK cell type of the cells (``meshio_types`` by order)."""
        return self.meshio_types[self.order - 1]

    @property
    def face_cell_type(self) -> str:
        """The meshio / VTK type of the faces as cells (``face_cell_types`` by order)."""
        return self.face_cell_types[self.order - 1]

    @abstractmethod
    def shape_functions(self, xi: np.ndarray) -> np.ndarray: ...

    @abstractmethod
    def shape_gradients(self, xi: np.ndarray) -> np.ndarray: ...

    @abstractmethod
    def face_nodes(self, face: int) -> np.ndarray: ...

    @abstractmethod
    def face_corners(self, face: int) -> np.ndarray: ...

    @abstractmethod
    def face_cell(self, face: int) -> np.ndarray: ...

    @abstractmethod
    def face_triangles(self, face: int) -> np.ndarray: ...

    @abstractmethod
    def face_rule(self, face: int, rule: int | None = None) -> FaceRule: ...


@dataclass(frozen=True)
class ReferenceHex(ReferenceCell):
    """A Lagrange reference hexahedron: ``order`` 1 (8-node trilinear, [DE-101]) or 2 (27-node triquadratic,
    [DE-102])."""

    @property
    def name(self) -> str:
        return "ANCFHex8" if self.order == 1 else "ANCFHex27"

    @property
    def default_quadrature(self) -> int:
        """Gauss points per direction that integrate the mass matrix exactly (2 for H8, 3 for H27)."""
        return self.order + 1

    def shape_functions(self, xi: np.ndarray) -> np.ndarray:
        """Shape function values N_a(ξ), (n_points, n_nodes), for reference points ξ (n_points, 3)."""
        xi = np.atleast_2d(xi)
        v = [_lagrange_1d(self.order, xi[:, k])[0] for k in range(3)]
        idx = (self.nodes + 1).astype(int)
        return v[0][:, idx[:, 0]] * v[1][:, idx[:, 1]] * v[2][:, idx[:, 2]]

    def shape_gradients(self, xi: np.ndarray) -> np.ndarray:
        """Reference gradients ∂N_a/∂ξ_k, (n_points, n_nodes, 3), at reference points ξ (n_points, 3)."""
        xi = np.atleast_2d(xi)
        vd = [_lagrange_1d(self.order, xi[:, k]) for k in range(3)]
        idx = (self.nodes + 1).astype(int)
        vals = [vd[k][0][:, idx[:, k]] for k in range(3)]
        ders = [vd[k][1][:, idx[:, k]] for k in range(3)]
        return np.stack(
            [ders[0] * vals[1] * vals[2], vals[0] * ders[1] * vals[2], vals[0] * vals[1] * ders[2]], axis=-1
        )

    def centre_jacobians(self, X: np.ndarray) -> np.ndarray:
        """∂X_d/∂ξ_k (m, 3, 3) [d, k] at the centre ξ = 0 of elements with nodal coordinates X (m, nn, 3)."""
        return np.einsum("ead,ak->edk", X, self.shape_gradients(np.zeros((1, 3)))[0])

    def face_nodes(self, face: int) -> np.ndarray:
        """Local indices of the nodes on local face ``face`` (0..5)."""
        axis, side = FACE_AXIS_SIDE[face]
        return np.flatnonzero(self.nodes[:, axis] == side)

    def face_points(self, face: int, st: np.ndarray) -> np.ndarray:
        """Reference points (n, 3) on local face ``face`` for in-face parameters st (n, 2)."""
        axis, side = FACE_AXIS_SIDE[face]
        i, j = FACE_TANGENT_AXES[axis]
        xi = np.empty((len(st), 3))
        xi[:, axis], xi[:, i], xi[:, j] = side, st[:, 0], st[:, 1]
        return xi

    n_corners: ClassVar[int] = 8
    n_faces: ClassVar[int] = 6
    meshio_types: ClassVar[tuple[str, str]] = ("hexahedron", "hexahedron27")
    face_cell_types: ClassVar[tuple[str, str]] = ("quad", "quad9")
    mirror: ClassVar[np.ndarray] = np.diag([1.0, 1.0, -1.0])  # ζ → −ζ

    def face_corners(self, face: int) -> np.ndarray:
        """Local indices of the four corners of local face ``face``."""
        return np.intersect1d(self.face_nodes(face), np.arange(8))

    def face_cell(self, face: int) -> np.ndarray:
        """Local nodes (4,) or (9,) of local face ``face`` in VTK quad / biquadratic quad order, outward normal."""
        st = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1], [0, -1], [1, 0], [0, 1], [-1, 0], [0, 0]], float)
        st = st[:4] if self.order == 1 else st
        return self.node_indices(self.face_points(face, st if FACE_AXIS_SIDE[face][1] > 0 else st[:, ::-1]))

    def face_triangles(self, face: int) -> np.ndarray:
        """The face's grid of nodes (2 × 2 or 3 × 3) cut into two outward triangles per cell, (t, 3) local nodes."""
        axis, side = FACE_AXIS_SIDE[face]
        i, j = FACE_TANGENT_AXES[axis]  # e_i × e_j = e_axis
        local = self.face_nodes(face)
        values = np.unique(self.nodes[local, i])
        grid = np.empty((values.size, values.size), dtype=np.int64)
        for node in local:
            grid[np.searchsorted(values, self.nodes[node, i]), np.searchsorted(values, self.nodes[node, j])] = node
        triangles = np.array(
            [
                tri
                for a in range(values.size - 1)
                for b in range(values.size - 1)
                for tri in (
                    (grid[a, b], grid[a + 1, b], grid[a + 1, b + 1]),
                    (grid[a, b], grid[a + 1, b + 1], grid[a, b + 1]),
                )
            ],
            dtype=np.int64,
        )
        return triangles if side > 0 else triangles[:, [0, 2, 1]]  # counter-clockwise in (ξ_i, ξ_j) is along +e_axis

    def face_rule(self, face: int, rule: int | None = None) -> FaceRule:
        """The Gauss rule with ``rule`` points per direction (default: ``default_quadrature``) on local face ``face``,
        parameters (s, t) ∈ [-1, 1]² along (ξ_i, ξ_j) with e_i × e_j along the face's axis."""
        st, w = gauss_quad(rule or self.default_quadrature)
        axis, side = FACE_AXIS_SIDE[face]
        i, j = FACE_TANGENT_AXES[axis]
        return FaceRule(self.face_points(face, st), w, np.eye(3)[i], np.eye(3)[j], side)


@cache
def reference_hex(nodes_per_cell: int) -> ReferenceHex:
    """The reference element for cells with 8 or 27 nodes."""
    if nodes_per_cell == 8:
        return ReferenceHex(1, HEX8_NODES)
    if nodes_per_cell == 27:
        return ReferenceHex(2, HEX27_NODES)
    raise MeshError(f"hexahedral cells must have 8 or 27 nodes, got {nodes_per_cell}")
