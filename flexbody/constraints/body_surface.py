"""The boundary of a flexible body as a surface that moves and deforms with it, for unilateral contacts of other
bodies' points on it (:class:`~flexbody.constraints.unilateral_contact.Contact`): flexible–flexible contact.

The surface is the body's boundary faces cut into triangles through their nodes
(:func:`~flexbody.fem.hex_mesh.boundary_triangles`; exact for the flat faces of 8-node bricks in their reference
state, the piecewise-linear surface through the nodes of curved ones). At a state its points are the body's nodal
positions, and the signed distance of a point x to it is that of a closed triangle mesh
(:func:`~flexbody.constraints.mesh_distance.nearest_feature`: the nearest triangle, signed by angle-weighted
pseudonormals made once a state for all the contacts on the surface), found by a pass over its triangles.

The nearest point c = Σ w_k x_k (barycentric weights w of its triangle's nodes) moves with the body, so a contact's
local velocity is u = Bᵀ (v_c(x) − Σ w_k v_k) and its rows G = Bᵀ [J_c, −w₁ I, −w₂ I, −w₃ I] on the point's columns
and the three nodes' (the normal's change along the surface is left out, as for a rigid curved surface: the step is
first order). The reaction −Σ w_k Gᵀp acts on the surface's nodes: action and reaction, so momentum is kept. The
contact normal n is the corner normals of c's triangle interpolated at c, Σ w_k n_k/‖Σ w_k n_k‖ (the smoothed normal
of node-to-surface contact), a corner's normal being the angle-weighted normal of the triangles around its vertex that
lie within 30° of the triangle's plane (so a box's faces keep their own normals up to its edges): it is the face's
normal on a flat face, and it turns continuously as a point crosses from one triangle to the next on a smooth part
of the surface, where the distance's gradient jumps between a face's normal and x − c (a static Newton iteration
then stalls on the jump).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, NamedTuple

import numba as nb
import numpy as np

from ..errors import FlexbodyError
from ..fem.flexible_body import FlexibleBody
from ..fem.hex_mesh import boundary_triangles
from .mesh_distance import corners, edge_pairs, nearest_feature, pseudonormals
from .surfaces import Surface

if TYPE_CHECKING:
    from ..rigid.state_view import StateView

__all__ = ["BodySurface", "SurfacePoint"]


class SurfacePoint(NamedTuple):
    """The point of a :class:`BodySurface` nearest x at a state: signed distance ``s`` [m] (positive outside the
    body), the unit contact ``normal`` (3,) there (module docstring), the global ``columns`` (9,) of its triangle's
    three nodes and their barycentric ``weights`` (3,) at the point ``nearest`` (3,) [m]."""

    s: float
    normal: np.ndarray
    columns: np.ndarray
    weights: np.ndarray
    nearest: np.ndarray


class _Geometry(NamedTuple):
    """A :class:`BodySurface` at a state: points (p, 3) [m], corners (t, 9), (face, edge, vertex) normals."""

    points: np.ndarray
    corners: np.ndarray
    normals: tuple


class BodySurface(Surface):
    """The boundary of the flexible ``body``, deforming with it: other bodies' points and nodes touch it through
    ``fb.Contact(point, fb.BodySurface(body), ...)`` (module docstring). Evaluated at a state (its value, gradient and
    Hessian without one are refused)."""

    def __init__(self, body: FlexibleBody):
        if not isinstance(body, FlexibleBody):
            raise FlexbodyError(f"BodySurface: body must be a FlexibleBody, got {type(body).__name__}")
        self.body = body
        self.triangles = boundary_triangles(body.mesh)
        edges = edge_pairs(self.triangles)
        if edges is None:  # a mesh whose boundary is not closed (nodes shared without a shared face)
            raise FlexbodyError(f"BodySurface: the boundary of body {body.name!r} is not a closed surface")
        self.edges = edges
        self._incident = _incident_triangles(self.triangles, body.n_nodes)
        size = float(np.ptp(body.mesh.points, axis=0).max())
        self.round_off = 1e-12 * (float(np.abs(body.mesh.points).max()) + size)  # [m]: distances below are noise

    def nearest(self, x: np.ndarray, ev: StateView) -> SurfacePoint:
        """The surface's point nearest x (3,) [m, world] at the state ``ev`` (:class:`SurfacePoint`)."""
        body_columns = ev.slice_of(self.body)
        P = np.asarray(ev.q[body_columns], dtype=float).reshape(-1, 3)
        normals = pseudonormals(P, self.triangles, self.edges)
        s, c, _, _, t = nearest_feature(np.asarray(x, dtype=float), corners(P, self.triangles), self.triangles, normals)
        nodes = self.triangles[t]
        a, b, d = P[nodes]
        weights = _barycentric(c, a, b, d)
        smooth = weights @ self._corner_normals(P, normals[0], t)  # continuous over the smooth parts of the surface
        gradient = smooth / np.linalg.norm(smooth)
        columns = (body_columns.start + 3 * nodes[:, None] + np.arange(3)).ravel()
        return SurfacePoint(float(s), gradient, columns, weights, c)

    def _corner_normals(self, P: np.ndarray, faces: np.ndarray, t: int) -> np.ndarray:
        """(3, 3): at each corner of triangle t, the angle-weighted normal of the triangles around its vertex that
        meet t's plane within the crease angle (module docstring)."""
        out = np.empty((3, 3))
        corner_normals(P, self.triangles, faces, self._incident, t, CREASE_COSINE, out)
        return out

    def _stateless(self) -> FlexbodyError:
        return FlexbodyError(
            f"BodySurface of body {self.body.name!r}: it moves with its body, so it has a value only at a state "
            "(nearest(x, state)); it serves fb.Contact, not bilateral rows or compliant contacts"
        )

    def value(self, x: np.ndarray) -> np.ndarray:
        """Refused: the surface has a value only at a state (:meth:`nearest`)."""
        raise self._stateless()

    def gradient(self, x: np.ndarray) -> np.ndarray:
        """Refused: the surface has a gradient only at a state (:meth:`nearest`)."""
        raise self._stateless()

    def hessian(self, x: np.ndarray) -> np.ndarray:
        """Refused: the surface has a curvature only at a state (:meth:`nearest`)."""
        raise self._stateless()


CREASE_COSINE = math.cos(math.radians(30.0))
"""Triangles around a vertex whose normals differ by more than 30° from a triangle's are across a crease (an edge of
a box): their normals are not mixed into that triangle's corner normals."""


def _incident_triangles(triangles: np.ndarray, n_nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """(start (p + 1,), triangles): the triangles around each vertex, CSR."""
    vertex = triangles.ravel()
    order = np.argsort(vertex, kind="stable")
    start = np.zeros(n_nodes + 1, dtype=np.int64)
    np.add.at(start, vertex + 1, 1)
    return np.cumsum(start), (order // 3).astype(np.int64)


@nb.njit(cache=True)
def corner_normals(P, triangles, faces, incident, t, crease, out) -> None:
    """Into ``out`` (3, 3): at each corner k of triangle t, the sum of the normals ``faces`` of the triangles s around
    its vertex with faces[s]·faces[t] ≥ ``crease``, each weighted by its angle at the vertex (``incident`` = the CSR
    of :func:`_incident_triangles`)."""
    start, around = incident
    for k in range(3):
        v = triangles[t, k]
        for a in range(3):
            out[k, a] = 0.0
        for e in range(start[v], start[v + 1]):
            s = around[e]
            if faces[s, 0] * faces[t, 0] + faces[s, 1] * faces[t, 1] + faces[s, 2] * faces[t, 2] < crease:
                continue
            j = 0 if triangles[s, 0] == v else (1 if triangles[s, 1] == v else 2)
            u = P[triangles[s, (j + 1) % 3]] - P[v]
            w = P[triangles[s, (j + 2) % 3]] - P[v]
            cosine = (u @ w) / math.sqrt((u @ u) * (w @ w))
            angle = math.acos(min(1.0, max(-1.0, cosine)))
            for a in range(3):
                out[k, a] += angle * faces[s, a]


def _barycentric(c: np.ndarray, a: np.ndarray, b: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Weights (3,) of the point c of triangle (a, b, d): c = w₀ a + w₁ b + w₂ d, Σ w = 1."""
    e1, e2, r = b - a, d - a, c - a
    g11, g12, g22 = e1 @ e1, e1 @ e2, e2 @ e2
    det = g11 * g22 - g12 * g12
    w1 = (g22 * (r @ e1) - g12 * (r @ e2)) / det
    w2 = (g11 * (r @ e2) - g12 * (r @ e1)) / det
    return np.array([1.0 - w1 - w2, w1, w2])
