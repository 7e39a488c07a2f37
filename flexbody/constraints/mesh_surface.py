"""A closed triangle mesh as a rigid surface: its signed distance (outside positive, inside solid), for contacts.

The unsigned distance is the nearest point c over the triangles (Ericson, *Real-Time Collision Detection*, 5.1.5:
the point of a triangle nearest x, by the Voronoi regions of its vertices, edges and face). Its sign is that of
(x − c)·n with n the angle-weighted pseudonormal of the nearest feature — the face's normal, the sum of an edge's two
face normals, the angle-weighted sum of a vertex's face normals — which gives the right side for every point of a
closed, consistently oriented mesh (Bærentzen & Aanæs 2005). The gradient is ±(x − c)/‖x − c‖ (the face's normal on
the surface); the Hessian (I − n nᵀ)/s off an edge or a vertex, zero off a face. The near triangles are found
through a uniform grid (:mod:`flexbody.constraints.mesh_distance`): a point costs the few triangles of its cell, and
:meth:`TriangleMesh.signed_distances` evaluates many points in one compiled call.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np
from numpy.typing import ArrayLike

from ..errors import ConstraintError
from .mesh_distance import (
    build_grid,
    corners,
    edge_pairs,
    nearest_feature,
    pseudonormals,
    signed_distances,
    spatial_order,
)
from .surfaces import Surface

__all__ = ["TriangleMesh"]


FLAT = 1e-9
"""How far [m per m of the mesh's size] a neighbour must lie below a vertex's tangent plane, or a face's far vertex
below the other face's plane, for the vertex or edge to poke out."""


class TriangleMesh(Surface):
    """A closed triangle mesh (outward-oriented faces, the inside solid) as a signed distance s (module docstring).

    Parameters
    ----------
    points : array (p, 3) [m, world]
    triangles : int array (t, 3)
        Vertex indices, counter-clockwise seen from outside (outward normals); every edge shared by two triangles.
        Kept (as ``triangles``) in a spatial order.
    reach : float, optional
        R [m]: a grid cell lists the triangles within R of its points (default and least: the cells' half-diagonal,
        about half the mean edge length); a point within R of the surface finds its nearest triangle in its own cell.
    """

    def __init__(self, points: ArrayLike, triangles: ArrayLike, *, reach: float | None = None):
        P = np.asarray(points, dtype=float)
        T = np.asarray(triangles)
        if P.ndim != 2 or P.shape[1] != 3 or not np.all(np.isfinite(P)):
            raise ConstraintError(f"TriangleMesh: points must be finite (p, 3) [m], got shape {P.shape}")
        if T.ndim != 2 or T.shape[1] != 3 or T.size == 0 or T.min() < 0 or T.max() >= len(P):
            raise ConstraintError(f"TriangleMesh: triangles must be (t, 3) indices of the {len(P)} points")
        T = T.astype(np.int64)
        area = np.linalg.norm(np.cross(P[T[:, 1]] - P[T[:, 0]], P[T[:, 2]] - P[T[:, 0]]), axis=1)
        if np.any(area == 0.0):
            raise ConstraintError(f"TriangleMesh: triangles {np.flatnonzero(area == 0.0)[:5].tolist()} are degenerate")
        T = T[spatial_order(P[T].mean(axis=1))]  # kept in a spatial order (the grid reads neighbours together)
        edges = edge_pairs(T)
        if edges is None:
            raise ConstraintError("TriangleMesh: the mesh is not closed (an edge is not shared by exactly two faces)")
        self.points, self.triangles, self.corners = P, T, corners(P, T)
        self.face_normals, self.edge_normals, self.vertex_normals = pseudonormals(P, T, edges)
        self._round_off = 1e-12 * float(np.abs(P).max() + np.ptp(P, axis=0).max())  # [m]: distances below are noise
        if reach is not None and not (np.isfinite(reach) and reach >= 0.0):
            raise ConstraintError(f"TriangleMesh: reach must be a distance ≥ 0 [m], got {reach!r}")
        self.normals = (self.face_normals, self.edge_normals, self.vertex_normals)
        self.grid = build_grid(P, T, self.corners, self.normals, reach)
        self.reach = self.grid.reach

    @property
    def round_off(self) -> float:
        """The distance [m] below which the mesh's distances are round-off (1e-12 of its coordinates' size)."""
        return self._round_off

    @property
    def kernel_arrays(self) -> tuple:
        """(corners (t, 9), triangles (t, 3), normals, grid, round-off [m]): what the compiled queries read
        (:func:`~flexbody.constraints.mesh_distance.signed_distances`)."""
        return (self.corners, self.triangles, self.normals, self.grid, self._round_off)

    def signed_distances(self, X: np.ndarray, cutoff: np.ndarray | float) -> tuple[np.ndarray, ...]:
        """(s (m,) [m], ∂s/∂x (m, 3), nearest points (m, 3) [m], features (m,)) of the points X (m, 3) [m, world]:
        exact where |s| ≤ cutoff (m,) [m]; elsewhere exact or a lower bound of |s| with its sign, zero gradient,
        NaN nearest point and feature −1 (:func:`~flexbody.constraints.mesh_distance.signed_distances`). Features:
        0 vertex, 1 edge, 2 face."""
        X = np.ascontiguousarray(X, dtype=float).reshape(-1, 3)
        m = X.shape[0]
        s, gradient, nearest, feature = np.empty(m), np.empty((m, 3)), np.empty((m, 3)), np.empty(m, dtype=np.int64)
        cut = np.ascontiguousarray(np.broadcast_to(cutoff, (m,)), dtype=float)
        signed_distances(X, cut, *self.kernel_arrays, s, gradient, nearest, feature)
        return s, gradient, nearest, feature

    def _feature(self, x) -> tuple[float, np.ndarray, int]:
        """(s, ∂s/∂x (3,), feature kind) exactly at any distance: the grid within its reach, otherwise a pass over
        all triangles."""
        x = np.asarray(x, dtype=float).reshape(3)
        s, gradient, _, feature = self.signed_distances(x[None], self.reach)
        if feature[0] >= 0:
            return float(s[0]), gradient[0], int(feature[0])
        s0, c, normal, kind, _ = nearest_feature(x, self.corners, self.triangles, self.normals)
        return s0, (x - c) / s0 if kind != 2 and abs(s0) > self._round_off else normal / np.linalg.norm(normal), kind

    @cached_property
    def touching_features(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(vertices (a, 3), edges (b, 2, 3), edge normals (b, 3)) [m, world] of the mesh that can touch a shape before
        their faces do — vertices with a neighbour below their tangent plane, convex edges (the far vertex of one face
        below the other's plane), by :data:`FLAT` of its size; a flat floor's triangulation gives none
        (:mod:`~flexbody.constraints.mesh_shape_points`) —, found once for the mesh; an edge's normal is the sum of its
        two faces' unit normals (outward)."""
        P, T = self.points, self.triangles
        size = float(np.ptp(P, axis=0).max())
        below = np.zeros(len(P))  # the deepest a neighbour lies below each vertex's tangent plane
        for corner in range(3):
            a, b = T[:, corner], T[:, (corner + 1) % 3]
            for v, u in ((a, b), (b, a)):
                depth = np.einsum("ij,ij->i", self.vertex_normals[v], P[v] - P[u])
                np.maximum.at(below, v, depth / np.linalg.norm(self.vertex_normals[v], axis=1))
        vertices = P[below > FLAT * size]
        pairs: dict[tuple[int, int], list[int]] = {}
        for t, triangle in enumerate(T):
            for k in range(3):
                i, j = int(triangle[k]), int(triangle[(k + 1) % 3])
                pairs.setdefault((min(i, j), max(i, j)), []).append(t)
        edges, normals = [], []
        for (i, j), (s, t) in pairs.items():
            far = next(int(x) for x in T[t] if x not in (i, j))  # t's vertex off the edge, against s's plane
            if self.face_normals[s] @ (P[far] - P[i]) < -FLAT * size:
                edges.append((P[i], P[j]))
                normals.append(self.face_normals[s] + self.face_normals[t])
        return (
            np.ascontiguousarray(vertices, dtype=float).reshape(-1, 3),
            np.ascontiguousarray(edges, dtype=float).reshape(-1, 2, 3),
            np.ascontiguousarray(normals, dtype=float).reshape(-1, 3),
        )

    def value(self, x: np.ndarray) -> np.ndarray:
        """s (1,) [m] at the point x (3,) [m, world]."""
        return np.array([self._feature(x)[0]])

    def gradient(self, x: np.ndarray) -> np.ndarray:
        """D (1, 3): the face's normal off a face; (x − c)/s off an edge or a vertex (c the nearest point), its
        pseudonormal's direction within round-off of the surface (where x − c is noise)."""
        return self._feature(x)[1][None, :]

    def hessian(self, x: np.ndarray) -> np.ndarray:
        """∂²s/∂x² (1, 3, 3) [1/m]: (I − n nᵀ)/s off an edge or a vertex, zero off a face."""
        s, n, kind = self._feature(x)
        if kind == 2 or abs(s) <= self._round_off:
            return np.zeros((1, 3, 3))
        return ((np.eye(3) - np.outer(n, n)) / s)[None]
