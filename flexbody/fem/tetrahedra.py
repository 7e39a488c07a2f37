"""Reference tetrahedra: the linear 4-node and the quadratic 10-node Lagrange elements, and symmetric quadrature rules
on the tetrahedron and on its triangular faces.

The reference tetrahedron has the vertices (0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1) (volume 1/6) and the barycentric
coordinates L = (1 − ξ − η − ζ, ξ, η, ζ). The shape functions (Zienkiewicz, Taylor & Zhu, The Finite Element Method:
Its Basis and Fundamentals, 7th ed., §6.5): 4 nodes N_i = L_i; 10 nodes N_i = L_i(2L_i − 1) at the corners and
N = 4 L_i L_j at the midpoint of the edge (i, j). Nodes follow the VTK orders VTK_TETRA and VTK_QUADRATIC_TETRA
(corners, then the edges 01, 12, 20, 03, 13, 23), so meshes round-trip through meshio, pyvista and ParaView.

Local faces are VTK's: 0: (0, 1, 3), 1: (1, 2, 3), 2: (2, 0, 3), 3: (0, 2, 1), each ordered so that
(x_b − x_a) × (x_c − x_a) points out of the element.

The quadrature rules are fully symmetric: their points are orbits of barycentric points under the permutations of the
vertices (S4: the centroid; S31(a): (a, a, a, 1 − 3a); S22(b): (b, b, ½ − b, ½ − b); on a triangle S21(a):
(a, a, 1 − 2a)), all weights positive and all points inside. The orbit parameters and weights solve the moment
equations ∫ ∏ L_i^{α_i} = α! · d! · |T| / (|α| + d)! (d = 3, or 2 on a triangle) of every monomial up to the rule's
degree (:func:`_solve_orbits`, Newton from the parameters of Keast 1986 and Walkington 2000 to the last digit).
Degree 1: the centroid; degree 2: S31((5 − √5)/20) (4 points); degree 5: two S31 and one S22 orbit (14 points); on a
triangle degree 2: S21(1/6) (3 points) and degree 4: two S21 orbits (6 points) (Strang & Fix; Dunavant 1985).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import cache
from math import factorial
from typing import ClassVar

import numpy as np

from ..errors import MeshError
from .elements import FaceRule, ReferenceCell

__all__ = [
    "TET4_NODES",
    "TET10_NODES",
    "TET10_EDGES",
    "TET_FACES",
    "ReferenceTet",
    "reference_tet",
    "tet_quadrature",
    "triangle_quadrature",
    "TET_RULE_DEGREES",
]

#: Reference coordinates of the VTK_TETRA nodes, (4, 3).
TET4_NODES = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])

#: The corners (i, j) of the edges whose midpoints are the VTK_QUADRATIC_TETRA nodes 4..9.
TET10_EDGES = ((0, 1), (1, 2), (2, 0), (0, 3), (1, 3), (2, 3))

#: Reference coordinates of the VTK_QUADRATIC_TETRA nodes, (10, 3): the corners, then the edge midpoints.
TET10_NODES = np.vstack([TET4_NODES, [0.5 * (TET4_NODES[i] + TET4_NODES[j]) for i, j in TET10_EDGES]])

#: The corners (a, b, c) of local faces 0..3, ordered so that (x_b − x_a) × (x_c − x_a) points outwards.
TET_FACES = ((0, 1, 3), (1, 2, 3), (2, 0, 3), (0, 2, 1))


@dataclass(frozen=True)
class ReferenceTet(ReferenceCell):
    """A Lagrange reference tetrahedron: ``order`` 1 (4 nodes, linear) or 2 (10 nodes, quadratic)."""

    @property
    def name(self) -> str:
        return "Tet4" if self.order == 1 else "Tet10"

    @property
    def mass_degree(self) -> int:
        """The polynomial degree of N_a N_b on an affine element (2 for Tet4, 4 for Tet10): the least degree of a
        rule integrating its mass matrix exactly."""
        return 2 * self.order

    def shape_functions(self, xi: np.ndarray) -> np.ndarray:
        """Shape function values N_a(ξ), (n_points, n_nodes), at reference points ξ (n_points, 3)."""
        L = _barycentric(np.atleast_2d(xi))
        if self.order == 1:
            return L
        corners = L * (2.0 * L - 1.0)
        edges = np.stack([4.0 * L[:, i] * L[:, j] for i, j in TET10_EDGES], axis=1)
        return np.hstack([corners, edges])

    def shape_gradients(self, xi: np.ndarray) -> np.ndarray:
        """Reference gradients ∂N_a/∂ξ_k, (n_points, n_nodes, 3), at reference points ξ (n_points, 3)."""
        xi = np.atleast_2d(xi)
        dL = np.vstack([-np.ones(3), np.eye(3)])  # ∂L_i/∂ξ_k (4, 3)
        if self.order == 1:
            return np.broadcast_to(dL, (len(xi), 4, 3)).copy()
        L = _barycentric(xi)
        corners = (4.0 * L - 1.0)[:, :, None] * dL[None]
        edges = np.stack([4.0 * (L[:, i, None] * dL[j] + L[:, j, None] * dL[i]) for i, j in TET10_EDGES], axis=1)
        return np.concatenate([corners, edges], axis=1)

    def face_nodes(self, face: int) -> np.ndarray:
        """Local indices of the nodes on local face ``face`` (0..3): its corners (in :data:`TET_FACES`' order), then,
        for 10 nodes, the midpoints of its edges ab, bc, ca (a VTK_TRIANGLE or VTK_QUADRATIC_TRIANGLE)."""
        a, b, c = TET_FACES[face]
        corners = [a, b, c]
        if self.order == 1:
            return np.array(corners)
        edges = [4 + _edge_index(a, b), 4 + _edge_index(b, c), 4 + _edge_index(c, a)]
        return np.array(corners + edges)

    def face_points(self, face: int, st: np.ndarray) -> np.ndarray:
        """Reference points (n, 3) x_a + s (x_b − x_a) + t (x_c − x_a) on local face ``face`` for in-face parameters
        st (n, 2) on the triangle s, t ≥ 0, s + t ≤ 1."""
        a, b, c = (TET4_NODES[i] for i in TET_FACES[face])
        st = np.atleast_2d(st)
        return a + st[:, :1] * (b - a) + st[:, 1:] * (c - a)

    n_corners: ClassVar[int] = 4
    n_faces: ClassVar[int] = 4
    meshio_types: ClassVar[tuple[str, str]] = ("tetra", "tetra10")
    face_cell_types: ClassVar[tuple[str, str]] = ("triangle", "triangle6")
    mirror: ClassVar[np.ndarray] = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])  # ξ ↔ η

    @property
    def default_degree(self) -> int:
        """The degree of the default stiffness rule: 1 (the centroid) for 4 nodes, whose gradients are constant, so
        one point integrates any material exactly on a straight-sided element; 2 (4 points) for 10 nodes, exact for
        the linear elastic stiffness of straight-sided elements, as Abaqus' C3D10 and Chrono's 10-node tetrahedron."""
        return self.order

    def face_corners(self, face: int) -> np.ndarray:
        """Local indices of the three corners of local face ``face``, in :data:`TET_FACES`' order."""
        return np.array(TET_FACES[face])

    def face_cell(self, face: int) -> np.ndarray:
        """Local nodes of local face ``face`` as a VTK triangle / quadratic triangle, outward normal."""
        return self.face_nodes(face)

    def face_triangles(self, face: int) -> np.ndarray:
        """The face as outward triangles of its nodes, (t, 3) local nodes: itself (4 nodes), or its four corner and
        centre sub-triangles through the edge midpoints (10 nodes)."""
        nodes = self.face_nodes(face)
        if self.order == 1:
            return nodes[None, :]
        a, b, c, ab, bc, ca = nodes
        return np.array([[a, ab, ca], [ab, b, bc], [ca, bc, c], [ab, bc, ca]])

    def face_rule(self, face: int, rule: int | None = None) -> FaceRule:
        """The symmetric triangle rule of degree ``rule`` (default 2 × order, exact for N_a N_b and for a pressure's
        N_a n da on a straight-sided face) on local face ``face``, parameters (s, t) of :meth:`face_points`."""
        st, w = triangle_quadrature(2 * self.order if rule is None else rule)
        a, b, c = (TET4_NODES[i] for i in TET_FACES[face])
        return FaceRule(self.face_points(face, st), w, b - a, c - a, 1.0)


@cache
def reference_tet(nodes_per_cell: int) -> ReferenceTet:
    """The reference element for tetrahedral cells with 4 or 10 nodes."""
    if nodes_per_cell == 4:
        return ReferenceTet(1, TET4_NODES)
    if nodes_per_cell == 10:
        return ReferenceTet(2, TET10_NODES)
    raise MeshError(f"tetrahedral cells must have 4 or 10 nodes, got {nodes_per_cell}")


#: The degrees of the tetrahedron rules of :func:`tet_quadrature` (1, 4 and 14 points).
TET_RULE_DEGREES = (1, 2, 5)


def tet_quadrature(degree: int) -> tuple[np.ndarray, np.ndarray]:
    """(points (n, 3), weights (n,)) on the reference tetrahedron of the least symmetric rule of this module exact for
    polynomials of total degree ≤ ``degree`` (1, 2 or ≤ 5: 1, 4 or 14 points; weights sum to 1/6)."""
    found = next((d for d in sorted(_TET_ORBITS) if d >= degree), None)
    if found is None or degree < 0:
        raise MeshError(f"tet_quadrature: degrees 0 to {max(_TET_ORBITS)} are available, got {degree}")
    points, weights = _tet_rule(found)
    return points.copy(), weights.copy()


def triangle_quadrature(degree: int) -> tuple[np.ndarray, np.ndarray]:
    """(points (n, 2) in (s, t), weights (n,)) on the reference triangle s, t ≥ 0, s + t ≤ 1 of the least symmetric
    rule of this module exact for polynomials of total degree ≤ ``degree`` (≤ 2: 3 points, ≤ 4: 6; weights sum to
    1/2)."""
    found = next((d for d in sorted(_TRIANGLE_ORBITS) if d >= degree), None)
    if found is None or degree < 0:
        raise MeshError(f"triangle_quadrature: degrees 0 to {max(_TRIANGLE_ORBITS)} are available, got {degree}")
    points, weights = _triangle_rule(found)
    return points.copy(), weights.copy()


def _barycentric(xi: np.ndarray) -> np.ndarray:
    """L (n, 4) of reference points ξ (n, 3)."""
    return np.column_stack([1.0 - xi.sum(axis=1), xi])


def _edge_index(i: int, j: int) -> int:
    return next(k for k, edge in enumerate(TET10_EDGES) if set(edge) == {i, j})


def _orbit(point: tuple[float, ...]) -> np.ndarray:
    """The distinct permutations of a barycentric point, (k, len(point))."""
    return np.array(sorted(set(itertools.permutations(point))))


def _orbits(kinds: tuple[str, ...], parameters: np.ndarray) -> list[np.ndarray]:
    """The barycentric points of each orbit (S4, S31, S22 on a tetrahedron; S3, S21 on a triangle)."""
    points, p = [], iter(parameters)
    for kind in kinds:
        if kind == "S4":
            points.append(_orbit((0.25,) * 4))
        elif kind == "S31":
            a = next(p)
            points.append(_orbit((a, a, a, 1.0 - 3.0 * a)))
        elif kind == "S22":
            b = next(p)
            points.append(_orbit((b, b, 0.5 - b, 0.5 - b)))
        elif kind == "S3":
            points.append(_orbit((1.0 / 3.0,) * 3))
        else:  # S21
            a = next(p)
            points.append(_orbit((a, a, 1.0 - 2.0 * a)))
    return points


def _exact_moments(exponents: np.ndarray) -> np.ndarray:
    """∫ ∏ L_i^{α_i} over the reference simplex of dimension d (volume 1/d!) for each row α of ``exponents``
    (k, d + 1)."""
    d = exponents.shape[1] - 1
    return np.array([np.prod([factorial(a) for a in alpha]) / factorial(sum(alpha) + d) for alpha in exponents])


def _residuals(kinds, unknowns, n_parameters, exponents, exact) -> np.ndarray:
    """The rule's moments minus the exact ones, for every row of ``exponents``."""
    orbits = _orbits(kinds, unknowns[:n_parameters])
    moments = sum(
        w * np.prod(points[None] ** exponents[:, None, :], axis=2).sum(axis=1)
        for w, points in zip(unknowns[n_parameters:], orbits)
    )
    return moments - exact


def _solve_orbits(kinds: tuple[str, ...], start: np.ndarray, n_parameters: int, dimension: int, degree: int):
    """Orbit parameters and weights solving the moment equations of every monomial of degree ≤ ``degree`` (Newton with
    least-squares steps from ``start``), the points (n, dimension + 1) barycentric and weights (n,)."""
    exponents = np.array([a for a in itertools.product(range(degree + 1), repeat=dimension + 1) if sum(a) <= degree])
    exact = _exact_moments(exponents)
    x = np.array(start, dtype=float)
    for _ in range(20):
        r = _residuals(kinds, x, n_parameters, exponents, exact)
        J = np.empty((len(r), len(x)))
        for j in range(len(x)):
            h = 1e-7 * max(1.0, abs(x[j]))
            up, down = x.copy(), x.copy()
            up[j] += h
            down[j] -= h
            J[:, j] = _residuals(kinds, up, n_parameters, exponents, exact)
            J[:, j] -= _residuals(kinds, down, n_parameters, exponents, exact)
            J[:, j] /= 2 * h
        step = np.linalg.lstsq(J, r, rcond=None)[0]
        x -= step
        if np.abs(step).max() <= 1e-16 * np.abs(x).max():
            break
    orbits = _orbits(kinds, x[:n_parameters])
    weights = np.concatenate([np.full(len(points), w) for w, points in zip(x[n_parameters:], orbits)])
    return np.vstack(orbits), weights


Orbits = tuple[tuple[str, ...], tuple[float, ...], int]
"""(the orbits' kinds, the start of their parameters then their weights, how many parameters) of a rule."""

_TET_ORBITS: dict[int, Orbits] = {
    1: (("S4",), (1.0 / 6.0,), 0),
    2: (("S31",), ((5.0 - np.sqrt(5.0)) / 20.0, 1.0 / 24.0), 1),
    5: (  # Walkington 2000's 14 points
        ("S31", "S31", "S22"),
        (
            0.0927352503108912,
            0.3108859192633006,
            0.0455037041256496,
            0.0122488405193937,
            0.0187813209530026,
            0.0070910034628469,
        ),
        3,
    ),
}
_TRIANGLE_ORBITS: dict[int, Orbits] = {
    2: (("S21",), (1.0 / 6.0, 1.0 / 6.0), 1),
    4: (("S21", "S21"), (0.445948490915965, 0.091576213509771, 0.111690794839005, 0.054975871827661), 2),  # Dunavant
}


@cache
def _tet_rule(degree: int) -> tuple[np.ndarray, np.ndarray]:
    kinds, start, n_parameters = _TET_ORBITS[degree]
    L, w = _solve_orbits(kinds, np.array(start), n_parameters, 3, degree)
    return L[:, 1:].copy(), w


@cache
def _triangle_rule(degree: int) -> tuple[np.ndarray, np.ndarray]:
    kinds, start, n_parameters = _TRIANGLE_ORBITS[degree]
    L, w = _solve_orbits(kinds, np.array(start), n_parameters, 2, degree)
    return L[:, 1:].copy(), w
