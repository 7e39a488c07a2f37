"""A closed triangle mesh as a rigid surface: its signed distance (outside positive, inside solid), for contacts.

The unsigned distance is the nearest point c over the triangles (Ericson, *Real-Time Collision Detection*, 5.1.5:
the point of a triangle nearest x, by the Voronoi regions of its vertices, edges and face). Its sign is that of
(x − c)·n with n the angle-weighted pseudonormal of the nearest feature — the face's normal, the sum of an edge's two
face normals, the angle-weighted sum of a vertex's face normals — which gives the right side for every point of a
closed, consistently oriented mesh (Bærentzen & Aanæs 2005). The gradient is ±(x − c)/‖x − c‖ (the face's normal on
the surface); the Hessian (I − n nᵀ)/s off an edge or a vertex, zero off a face. The nearest triangle is found by a
compiled pass over all triangles (no spatial index yet: O(triangles) per point).
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np
from numpy.typing import ArrayLike

from ..errors import ConstraintError
from .surfaces import Surface

__all__ = ["TriangleMesh"]


@nb.njit(cache=True)
def _nearest_on_triangle(x, a, b, c):
    """(nearest point (3,), feature): 0–2 the vertex a, b, c; 3, 4, 5 the edge ab, bc, ca; 6 the face."""
    ab, ac, ax = b - a, c - a, x - a
    d1, d2 = ab @ ax, ac @ ax
    if d1 <= 0.0 and d2 <= 0.0:
        return a.copy(), 0
    bx = x - b
    d3, d4 = ab @ bx, ac @ bx
    if d3 >= 0.0 and d4 <= d3:
        return b.copy(), 1
    vc = d1 * d4 - d3 * d2
    if vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0:
        return a + (d1 / (d1 - d3)) * ab, 3
    cx = x - c
    d5, d6 = ab @ cx, ac @ cx
    if d6 >= 0.0 and d5 <= d6:
        return c.copy(), 2
    vb = d5 * d2 - d1 * d6
    if vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0:
        return a + (d2 / (d2 - d6)) * ac, 5
    va = d3 * d6 - d5 * d4
    if va <= 0.0 and (d4 - d3) >= 0.0 and (d5 - d6) >= 0.0:
        return b + ((d4 - d3) / ((d4 - d3) + (d5 - d6))) * (c - b), 4
    denominator = 1.0 / (va + vb + vc)
    return a + ab * (vb * denominator) + ac * (vc * denominator), 6


@nb.njit(cache=True)
def nearest_feature(x, points, triangles, face_normals, edge_normals, vertex_normals):
    """(s, nearest point (3,), pseudonormal (3,), feature kind 0 vertex / 1 edge / 2 face) of the point x (3,)."""
    best, nearest, normal, kind = math.inf, np.zeros(3), np.zeros(3), 2
    for t in range(triangles.shape[0]):
        i, j, k = triangles[t, 0], triangles[t, 1], triangles[t, 2]
        c, feature = _nearest_on_triangle(x, points[i], points[j], points[k])
        d = x - c
        squared = d @ d
        if squared < best:
            best, nearest = squared, c
            if feature < 3:
                normal, kind = vertex_normals[i if feature == 0 else (j if feature == 1 else k)], 0
            elif feature < 6:
                normal, kind = edge_normals[t, feature - 3], 1
            else:
                normal, kind = face_normals[t], 2
    distance = math.sqrt(best)
    return (distance if (x - nearest) @ normal >= 0.0 else -distance), nearest, normal, kind


class TriangleMesh(Surface):
    """A closed triangle mesh (outward-oriented faces, the inside solid) as a signed distance s (module docstring).

    Parameters
    ----------
    points : array (p, 3) [m, world]
    triangles : int array (t, 3)
        Vertex indices, counter-clockwise seen from outside (outward normals); every edge shared by two triangles.
    """

    def __init__(self, points: ArrayLike, triangles: ArrayLike):
        P = np.asarray(points, dtype=float)
        T = np.asarray(triangles)
        if P.ndim != 2 or P.shape[1] != 3 or not np.all(np.isfinite(P)):
            raise ConstraintError(f"TriangleMesh: points must be finite (p, 3) [m], got shape {P.shape}")
        if T.ndim != 2 or T.shape[1] != 3 or T.size == 0 or T.min() < 0 or T.max() >= len(P):
            raise ConstraintError(f"TriangleMesh: triangles must be (t, 3) indices of the {len(P)} points")
        T = T.astype(np.int64)
        cross = np.cross(P[T[:, 1]] - P[T[:, 0]], P[T[:, 2]] - P[T[:, 0]])
        area = np.linalg.norm(cross, axis=1)
        if np.any(area == 0.0):
            raise ConstraintError(f"TriangleMesh: triangles {np.flatnonzero(area == 0.0)[:5].tolist()} are degenerate")
        self.points, self.triangles, self.face_normals = P, T, cross / area[:, None]
        self.edge_normals = self._edge_normals()
        self.vertex_normals = self._vertex_normals()
        self._round_off = 1e-12 * float(np.abs(P).max() + np.ptp(P, axis=0).max())  # [m]: distances below are noise

    def _edge_normals(self) -> np.ndarray:
        """(t, 3, 3): for each triangle's edges ab, bc, ca the sum of the normals of the two faces sharing it."""
        T, N = self.triangles, self.face_normals
        edges = np.stack([T[:, [0, 1]], T[:, [1, 2]], T[:, [2, 0]]], axis=1)  # (t, 3, 2)
        keys = np.sort(edges.reshape(-1, 2), axis=1)
        _, index, counts = np.unique(keys, axis=0, return_inverse=True, return_counts=True)
        index = index.ravel()
        if np.any(counts != 2):
            raise ConstraintError("TriangleMesh: the mesh is not closed (an edge is not shared by exactly two faces)")
        sums = np.zeros((counts.size, 3))
        np.add.at(sums, index, np.repeat(N, 3, axis=0))
        return sums[index].reshape(-1, 3, 3)

    def _vertex_normals(self) -> np.ndarray:
        """(p, 3): the angle-weighted sums of the face normals at each vertex."""
        P, T, N = self.points, self.triangles, self.face_normals
        normals = np.zeros_like(P)
        for corner in range(3):
            a, b, c = T[:, corner], T[:, (corner + 1) % 3], T[:, (corner + 2) % 3]
            u, w = P[b] - P[a], P[c] - P[a]
            cosine = np.einsum("ij,ij->i", u, w) / (np.linalg.norm(u, axis=1) * np.linalg.norm(w, axis=1))
            np.add.at(normals, a, np.arccos(np.clip(cosine, -1.0, 1.0))[:, None] * N)
        return normals

    def _feature(self, x):
        x = np.asarray(x, dtype=float).reshape(3)
        args = (self.points, self.triangles, self.face_normals, self.edge_normals, self.vertex_normals)
        return (x, *nearest_feature(x, *args))

    def value(self, x: np.ndarray) -> np.ndarray:
        """s (1,) [m] at the point x (3,) [m, world]."""
        return np.array([self._feature(x)[1]])

    def gradient(self, x: np.ndarray) -> np.ndarray:
        """D (1, 3): the face's normal off a face; ±(x − c)/‖x − c‖ off an edge or a vertex, its pseudonormal's
        direction within round-off of it (where x − c is noise)."""
        x, s, c, normal, kind = self._feature(x)
        if kind == 2 or abs(s) <= self._round_off:
            return (normal / np.linalg.norm(normal))[None, :]
        return ((x - c) / s)[None, :]

    def hessian(self, x: np.ndarray) -> np.ndarray:
        """∂²s/∂x² (1, 3, 3) [1/m]: (I − n nᵀ)/s off an edge or a vertex, zero off a face."""
        x, s, c, _, kind = self._feature(x)
        if kind == 2 or abs(s) <= self._round_off:
            return np.zeros((1, 3, 3))
        n = (x - c) / s
        return ((np.eye(3) - np.outer(n, n)) / s)[None]
