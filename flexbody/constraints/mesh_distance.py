"""Signed distances of many points to a closed triangle mesh, through a uniform grid that keeps the near triangles.

The distance of x to a triangle is that of its nearest point c (Ericson, *Real-Time Collision Detection*, 5.1.5: the
Voronoi regions of the vertices, edges and face); the mesh's distance is the least over the triangles, signed by
(x − c)·n with n the angle-weighted pseudonormal of the nearest feature (Bærentzen & Aanæs 2005), which is right for
every point of a closed, consistently oriented mesh.

The grid (the broad phase) covers the mesh's bounding box widened by the reach R and a cell; a cell of centre o and
half-diagonal r lists every triangle within r + R of o. Hence (each bound by the triangle inequality):

* a point x of a cell whose nearest listed triangle is within R has found its nearest triangle (any triangle within
  R of x lies within r + R of o): the distance and its sign are exact;
* otherwise |s(x)| > R ≥ r, so the segment from x to o crosses no surface and s(x) has the sign of o. Signs of the
  centres: those of listed cells from their nearest listed triangle (exact, within r + R); each connected region of
  empty cells holds no surface, so one sign per region, from one exact search;
* an empty cell at D cells from the nearest listed cell has no surface nearer than max(R, D h − 2r) (h the cell's
  edge): a lower bound of |s| that lets a point that needs its distance only up to a cutoff skip every triangle;
* a point that needs it further (a cutoff beyond that bound) searches the listed triangles of every cell the box
  x ± cutoff meets, which hold every triangle within the cutoff.

So :func:`signed_distances` gives each point its exact signed distance where |s| ≤ its cutoff, and a bound of the
right sign where it may lie further. A point near the surface costs the few triangles of its cell (O(1)), a far
point one look-up, instead of a pass over all triangles.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numba as nb
import numpy as np
import scipy.ndimage as ndimage

__all__ = [
    "MeshGrid",
    "build_grid",
    "corners",
    "edge_pairs",
    "nearest_feature",
    "pseudonormals",
    "signed_distances",
    "spatial_order",
]

_MAX_CELLS = 2_000_000  # a finer grid costs memory and build time for little gain


@nb.njit(cache=True, inline="always")
def _dot(soup, t, o, x, u):
    """(x − p)·u for the corner p = soup[t, o:o + 3] and a vector u (3,)."""
    return (x[0] - soup[t, o]) * u[0] + (x[1] - soup[t, o + 1]) * u[1] + (x[2] - soup[t, o + 2]) * u[2]


@nb.njit(cache=True, inline="always")
def _nearest_on_triangle(x, soup, t):
    """(feature, c₀, c₁, c₂): the point c of triangle t nearest x (3,) and its feature: 0–2 the vertex a, b, c; 3, 4,
    5 the edge ab, bc, ca; 6 the face. ``soup`` (t, 9): each triangle's corners a, b, c. Scalar arithmetic."""
    ab = (soup[t, 3] - soup[t, 0], soup[t, 4] - soup[t, 1], soup[t, 5] - soup[t, 2])
    ac = (soup[t, 6] - soup[t, 0], soup[t, 7] - soup[t, 1], soup[t, 8] - soup[t, 2])
    d1, d2 = _dot(soup, t, 0, x, ab), _dot(soup, t, 0, x, ac)
    if d1 <= 0.0 and d2 <= 0.0:
        return 0, soup[t, 0], soup[t, 1], soup[t, 2]
    d3, d4 = _dot(soup, t, 3, x, ab), _dot(soup, t, 3, x, ac)
    if d3 >= 0.0 and d4 <= d3:
        return 1, soup[t, 3], soup[t, 4], soup[t, 5]
    vc = d1 * d4 - d3 * d2
    if vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0:
        w = d1 / (d1 - d3)
        return 3, soup[t, 0] + w * ab[0], soup[t, 1] + w * ab[1], soup[t, 2] + w * ab[2]
    d5, d6 = _dot(soup, t, 6, x, ab), _dot(soup, t, 6, x, ac)
    if d6 >= 0.0 and d5 <= d6:
        return 2, soup[t, 6], soup[t, 7], soup[t, 8]
    vb = d5 * d2 - d1 * d6
    if vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0:
        w = d2 / (d2 - d6)
        return 5, soup[t, 0] + w * ac[0], soup[t, 1] + w * ac[1], soup[t, 2] + w * ac[2]
    va = d3 * d6 - d5 * d4
    if va <= 0.0 and (d4 - d3) >= 0.0 and (d5 - d6) >= 0.0:
        w = (d4 - d3) / ((d4 - d3) + (d5 - d6))
        return (
            4,
            soup[t, 3] + w * (soup[t, 6] - soup[t, 3]),
            soup[t, 4] + w * (soup[t, 7] - soup[t, 4]),
            soup[t, 5] + w * (soup[t, 8] - soup[t, 5]),
        )
    denominator = 1.0 / (va + vb + vc)
    v, w = vb * denominator, vc * denominator
    return (
        6,
        soup[t, 0] + ab[0] * v + ac[0] * w,
        soup[t, 1] + ab[1] * v + ac[1] * w,
        soup[t, 2] + ab[2] * v + ac[2] * w,
    )


@nb.njit(cache=True, inline="always")
def _pseudonormal(t, feature, triangles, normals):
    """(n₀, n₁, n₂, kind 0 vertex / 1 edge / 2 face): the pseudonormal of ``feature`` of triangle t; ``normals`` =
    (face (t, 3), edge (t, 3, 3), vertex (p, 3) normals)."""
    face, edge, vertex = normals
    if feature < 3:
        v = triangles[t, feature]
        return vertex[v, 0], vertex[v, 1], vertex[v, 2], 0
    if feature < 6:
        return edge[t, feature - 3, 0], edge[t, feature - 3, 1], edge[t, feature - 3, 2], 1
    return face[t, 0], face[t, 1], face[t, 2], 2


@nb.njit(cache=True, inline="always")
def _candidate(x, t, soup):
    """(squared distance, feature, c₀, c₁, c₂) of x (3,) to triangle t (scalars only, kept fast in the loops)."""
    feature, c0, c1, c2 = _nearest_on_triangle(x, soup, t)
    d0, d1, d2 = x[0] - c0, x[1] - c1, x[2] - c2
    return d0 * d0 + d1 * d1 + d2 * d2, feature, c0, c1, c2


@nb.njit(cache=True)
def nearest_feature(x, soup, triangles, normals):
    """(s, nearest point (3,), pseudonormal (3,), feature kind 0 vertex / 1 edge / 2 face, triangle) of the point x
    (3,), by a pass over all triangles (exact at any distance); ``soup`` (t, 9) their corners, ``triangles`` (t, 3)
    their vertex indices, ``normals`` the (face, edge, vertex) normals."""
    best, t, feature, nearest = math.inf, 0, 6, np.zeros(3)
    for m in range(triangles.shape[0]):
        squared, f, c0, c1, c2 = _candidate(x, m, soup)
        if squared < best:
            best, t, feature, nearest[0], nearest[1], nearest[2] = squared, m, f, c0, c1, c2
    n0, n1, n2, kind = _pseudonormal(t, feature, triangles, normals)
    normal, distance = np.array([n0, n1, n2]), math.sqrt(best)
    return (distance if (x - nearest) @ normal >= 0.0 else -distance), nearest, normal, kind, t


def corners(points: np.ndarray, triangles: np.ndarray) -> np.ndarray:
    """(t, 9): each triangle's corners a, b, c, contiguous (the kernels read a triangle from one place)."""
    return np.ascontiguousarray(points[triangles].reshape(-1, 9))


def edge_pairs(triangles: np.ndarray) -> np.ndarray | None:
    """For the 3t edges ab, bc, ca of the triangles (t, 3), the index (3t,) of each among the mesh's edges; None
    unless every edge is shared by exactly two triangles (a closed mesh)."""
    edges = np.stack([triangles[:, [0, 1]], triangles[:, [1, 2]], triangles[:, [2, 0]]], axis=1)
    _, index, counts = np.unique(np.sort(edges.reshape(-1, 2), axis=1), axis=0, return_inverse=True, return_counts=True)
    return index.ravel() if np.all(counts == 2) else None


def pseudonormals(points: np.ndarray, triangles: np.ndarray, edges: np.ndarray) -> tuple[np.ndarray, ...]:
    """(face (t, 3), edge (t, 3, 3), vertex (p, 3)) normals of a closed mesh (``edges`` from :func:`edge_pairs`): the
    unit face normals, for each triangle's edges ab, bc, ca the sum of the normals of the two faces sharing it, and
    at each vertex the angle-weighted sum of its faces' normals (Bærentzen & Aanæs 2005)."""
    P, T = points, triangles
    cross = np.cross(P[T[:, 1]] - P[T[:, 0]], P[T[:, 2]] - P[T[:, 0]])
    face = cross / np.linalg.norm(cross, axis=1)[:, None]
    sums = np.zeros((edges.max() + 1, 3))
    np.add.at(sums, edges, np.repeat(face, 3, axis=0))
    vertex = np.zeros_like(P)
    for corner in range(3):
        a, b, c = T[:, corner], T[:, (corner + 1) % 3], T[:, (corner + 2) % 3]
        u, w = P[b] - P[a], P[c] - P[a]
        cosine = np.einsum("ij,ij->i", u, w) / (np.linalg.norm(u, axis=1) * np.linalg.norm(w, axis=1))
        np.add.at(vertex, a, np.arccos(np.clip(cosine, -1.0, 1.0))[:, None] * face)
    return face, sums[edges].reshape(-1, 3, 3), vertex


def spatial_order(X: np.ndarray) -> np.ndarray:
    """The order of the points X (k, 3) along a Morton (Z-order) curve: neighbours in space become neighbours in
    memory (triangles by their centroids, so that a grid cell's triangles are read together; query points, so that
    consecutive points read the same cells)."""
    span = max(float(np.ptp(X, axis=0).max()), 1e-300)
    cells = ((X - X.min(axis=0)) / span * 1023.0).astype(np.int64)
    code = np.zeros(len(X), dtype=np.int64)
    for bit in range(10):
        for a in range(3):
            code |= ((cells[:, a] >> bit) & 1) << (3 * bit + a)
    return np.argsort(code, kind="stable")


class MeshGrid(NamedTuple):
    """The broad phase of module docstring: cells of edge ``h`` [m] from ``lower`` (3,) [m], ``shape`` (3,) cells;
    cell k lists the triangles ``entries[starts[k]:starts[k + 1]]``, nearest to its centre first, at the distances
    ``spacing`` [m] from it (so a point at δ from the centre stops at the first whose spacing − δ exceeds its best
    distance so far: no later one is nearer); ``sign`` (cells,) ±1 of each centre;
    ``bound`` (cells,) [m] the lower bound of |s| in each cell (0 in a listed one); the ``reach`` R [m]; the mesh's
    bounding box ``box`` (2, 3) [m]."""

    lower: np.ndarray
    h: float
    shape: np.ndarray
    starts: np.ndarray
    entries: np.ndarray
    spacing: np.ndarray
    sign: np.ndarray
    bound: np.ndarray
    reach: float
    box: np.ndarray


@nb.njit(cache=True)
def _list_cells(soup, lower, h, shape, radius, starts, entries, spacing, best, best_t, best_feature):
    """For every triangle, the cells whose centre lies within ``radius`` of it. Counting pass (``entries`` empty):
    counts into starts[k + 1] and the nearest triangle of each centre (squared distance, triangle, feature); filling
    pass: the triangle indices into ``entries`` and their distances to the centre into ``spacing`` from ``starts``
    (advanced)."""
    counting = entries.shape[0] == 0
    centre = np.empty(3)
    low, high = np.empty(3, dtype=np.int64), np.empty(3, dtype=np.int64)
    for t in range(soup.shape[0]):
        for a in range(3):
            smallest = min(soup[t, a], soup[t, 3 + a], soup[t, 6 + a])
            largest = max(soup[t, a], soup[t, 3 + a], soup[t, 6 + a])
            low[a] = max(0, math.floor((smallest - radius - lower[a]) / h - 0.5))
            high[a] = min(shape[a] - 1, math.ceil((largest + radius - lower[a]) / h - 0.5))
        for i in range(low[0], high[0] + 1):
            for j in range(low[1], high[1] + 1):
                for k in range(low[2], high[2] + 1):
                    centre[0] = lower[0] + (i + 0.5) * h
                    centre[1] = lower[1] + (j + 0.5) * h
                    centre[2] = lower[2] + (k + 0.5) * h
                    cell = (k * shape[1] + j) * shape[0] + i
                    squared, feature, _, _, _ = _candidate(centre, t, soup)
                    if squared > radius * radius:
                        continue
                    if counting:
                        starts[cell + 1] += 1
                        if squared < best[cell]:
                            best[cell], best_t[cell], best_feature[cell] = squared, t, feature
                    else:
                        entries[starts[cell]] = t
                        spacing[starts[cell]] = math.sqrt(squared) * (1.0 - 1e-6)  # float32, still a lower bound
                        starts[cell] += 1


@nb.njit(cache=True)
def _sort_cells(starts, entries, spacing) -> None:
    """Each cell's entries by their distance to its centre (insertion sort: a cell lists a few dozen at most)."""
    for cell in range(starts.shape[0] - 1):
        for e in range(starts[cell] + 1, starts[cell + 1]):
            t, d = entries[e], spacing[e]
            f = e - 1
            while f >= starts[cell] and spacing[f] > d:
                entries[f + 1], spacing[f + 1] = entries[f], spacing[f]
                f -= 1
            entries[f + 1], spacing[f + 1] = t, d


@nb.njit(cache=True)
def _centre_signs(lower, h, shape, best_t, best_feature, soup, triangles, normals, sign):
    """±1 of each listed cell's centre from its nearest listed triangle (best_t ≥ 0)."""
    centre = np.empty(3)
    for i in range(shape[0]):
        for j in range(shape[1]):
            for k in range(shape[2]):
                cell = (k * shape[1] + j) * shape[0] + i
                t = best_t[cell]
                if t < 0:
                    continue
                centre[0] = lower[0] + (i + 0.5) * h
                centre[1] = lower[1] + (j + 0.5) * h
                centre[2] = lower[2] + (k + 0.5) * h
                _, _, c0, c1, c2 = _candidate(centre, t, soup)
                n0, n1, n2, _ = _pseudonormal(t, best_feature[cell], triangles, normals)
                side = (centre[0] - c0) * n0 + (centre[1] - c1) * n1 + (centre[2] - c2) * n2
                sign[cell] = 1.0 if side >= 0.0 else -1.0


def build_grid(points: np.ndarray, triangles: np.ndarray, soup: np.ndarray, normals: tuple, reach: float | None):
    """The :class:`MeshGrid` of a closed mesh (its :func:`corners` ``soup``, its (face, edge, vertex) ``normals``):
    cells of half the mean edge length (coarser if more than two million cells would be needed), ``reach`` R [m] at
    least the cells' half-diagonal (its default)."""
    edges = points[triangles] - points[np.roll(triangles, 1, axis=1)]
    h = 0.5 * float(np.linalg.norm(edges, axis=2).mean())
    box = np.array([points.min(axis=0), points.max(axis=0)])
    while True:
        half_diagonal = 0.5 * math.sqrt(3.0) * h
        R = half_diagonal if reach is None else max(float(reach), half_diagonal)
        lower = box[0] - (R + h)
        shape = np.ceil((box[1] + (R + h) - lower) / h).astype(np.int64)
        if int(np.prod(shape)) <= _MAX_CELLS:
            break
        h *= (np.prod(shape) / _MAX_CELLS) ** (1.0 / 3.0) * 1.01
    cells = int(np.prod(shape))
    starts = np.zeros(cells + 1, dtype=np.int64)
    best, best_t, best_feature = np.full(cells, np.inf), np.full(cells, -1, dtype=np.int64), np.zeros(cells, np.int64)
    radius = half_diagonal + R
    nothing = np.zeros(0, np.int32)
    _list_cells(soup, lower, h, shape, radius, starts, nothing, np.zeros(0, np.float32), best, best_t, best_feature)
    np.cumsum(starts, out=starts)
    entries, spacing = np.empty(int(starts[-1]), dtype=np.int32), np.empty(int(starts[-1]), dtype=np.float32)
    _list_cells(soup, lower, h, shape, radius, starts[:-1].copy(), entries, spacing, best, best_t, best_feature)
    _sort_cells(starts, entries, spacing)
    sign = np.zeros(cells)
    _centre_signs(lower, h, shape, best_t, best_feature, soup, triangles, normals, sign)
    stored = tuple(int(m) for m in shape[::-1])  # the cells as stored: x fastest (as meshes number their nodes)
    empty = (best_t < 0).reshape(stored)
    regions, count = ndimage.label(empty)
    for region in range(1, count + 1):  # one exact search per connected region of empty cells
        first = int(np.flatnonzero(regions.ravel() == region)[0])
        centre = lower + (np.array(np.unravel_index(first, stored))[::-1] + 0.5) * h
        sign[regions.ravel() == region] = 1.0 if nearest_feature(centre, soup, triangles, normals)[0] >= 0.0 else -1.0
    cells_away = ndimage.distance_transform_edt(empty) if empty.any() else np.zeros(stored)
    bound = np.where(empty, np.maximum(R, cells_away * h - 2.0 * half_diagonal), 0.0).ravel()
    return MeshGrid(lower, h, shape, starts, entries, spacing, sign, bound, R, box)


@nb.njit(cache=True)
def _box_distance(x, box):
    """Distance [m] of x to the axis-aligned box (2, 3) (0 inside)."""
    total = 0.0
    for a in range(3):
        d = max(box[0, a] - x[a], 0.0, x[a] - box[1, a])
        total += d * d
    return math.sqrt(total)


@nb.njit(cache=True)
def _search_box(x, cutoff, grid, soup, stamp, mark, nearest):
    """(squared distance, triangle, feature) of the nearest triangle listed in the cells the box x ± cutoff meets, its
    nearest point into ``nearest`` (3,) (``stamp`` (t,) marks triangles tested for this point with ``mark``)."""
    lower, h, shape, starts, entries = grid[0], grid[1], grid[2], grid[3], grid[4]
    low, high = np.empty(3, dtype=np.int64), np.empty(3, dtype=np.int64)
    for a in range(3):
        low[a] = max(0, math.floor((x[a] - cutoff - lower[a]) / h))
        high[a] = min(shape[a] - 1, math.floor((x[a] + cutoff - lower[a]) / h))
    best, best_t, best_feature = math.inf, -1, 6
    for i in range(low[0], high[0] + 1):
        for j in range(low[1], high[1] + 1):
            for k in range(low[2], high[2] + 1):
                cell = (k * shape[1] + j) * shape[0] + i
                for e in range(starts[cell], starts[cell + 1]):
                    t = entries[e]
                    if stamp[t] != mark:
                        stamp[t] = mark
                        squared, f, c0, c1, c2 = _candidate(x, t, soup)
                        if squared < best:
                            best, best_t, best_feature = squared, t, f
                            nearest[0], nearest[1], nearest[2] = c0, c1, c2
    return best, best_t, best_feature


@nb.njit(cache=True)
def signed_distances(X, cutoff, soup, triangles, normals, grid, round_off, s, gradient, nearest, feature):
    """For points X (m, 3) [m] and cutoffs (m,) [m], into s (m,): the signed distance where |s| ≤ the cutoff, else
    that or a lower bound of |s| with its sign (module docstring); gradient (m, 3): ∂s/∂x (the face's normal off a
    face or within ``round_off`` of the surface, (x − c)/s off an edge or a vertex; zero where s is a bound); nearest
    (m, 3) the nearest point c and feature (m,) its kind (0 vertex, 1 edge, 2 face; −1 where s is a bound).

    A point of a listed cell at δ from its centre, whose signed distance s_c is exact (its nearest listed triangle, at
    d = |s_c|), has s within δ of s_c (s is 1-Lipschitz): where d − δ exceeds its cutoff (≥ 0) s has the sign of s_c
    and |s| ≥ d − δ, returned as the bound without a test."""
    lower, h, shape, starts, entries, spacing, sign, bound, reach, box = grid
    stamp = np.zeros(0, dtype=np.int64)  # made at the first search beyond a cell
    c = np.zeros(3)  # the nearest point so far
    index = np.empty(3, dtype=np.int64)
    x = np.empty(3)
    for m in range(X.shape[0]):
        x[0], x[1], x[2] = X[m, 0], X[m, 1], X[m, 2]
        best, t, kind = math.inf, -1, 6
        cell = -1
        for a in range(3):
            index[a] = math.floor((x[a] - lower[a]) / h)
        if 0 <= index[0] < shape[0] and 0 <= index[1] < shape[1] and 0 <= index[2] < shape[2]:
            cell = (index[2] * shape[1] + index[1]) * shape[0] + index[0]
            offset = 0.0  # δ = |x − centre|
            for a in range(3):
                offset += (x[a] - lower[a] - (index[a] + 0.5) * h) ** 2
            offset = math.sqrt(offset)
            if starts[cell] < starts[cell + 1]:
                first = spacing[starts[cell]] - offset
                if first > cutoff[m]:  # beyond its cutoff, on the centre's side (docstring): no test
                    s[m], feature[m] = sign[cell] * first, -1
                    for a in range(3):
                        gradient[m, a], nearest[m, a] = 0.0, np.nan
                    continue
            for e in range(starts[cell], starts[cell + 1]):
                gap = spacing[e] - offset  # a lower bound of the distance to this and every later entry
                if gap > 0.0 and gap * gap >= best:
                    break
                squared, f, c0, c1, c2 = _candidate(x, entries[e], soup)
                if squared < best:
                    best, t, kind, c[0], c[1], c[2] = squared, entries[e], f, c0, c1, c2
            known, side = (reach if bound[cell] == 0.0 else bound[cell]), sign[cell]
        else:
            known, side = max(reach, _box_distance(x, box)), 1.0
        if best > reach * reach and cutoff[m] > known:
            if stamp.size == 0:
                stamp = np.full(triangles.shape[0], -1, dtype=np.int64)
            best, t, kind = _search_box(x, cutoff[m], grid, soup, stamp, m, c)
            known = max(known, cutoff[m])
        else:
            known = max(known, reach)
        if t < 0 or best > known * known:
            s[m], feature[m] = side * known, -1
            for a in range(3):
                gradient[m, a], nearest[m, a] = 0.0, np.nan
            continue
        n0, n1, n2, feature[m] = _pseudonormal(t, kind, triangles, normals)
        distance = math.sqrt(best)
        d0, d1, d2 = x[0] - c[0], x[1] - c[1], x[2] - c[2]
        s[m] = distance if d0 * n0 + d1 * n1 + d2 * n2 >= 0.0 else -distance
        nearest[m, 0], nearest[m, 1], nearest[m, 2] = c[0], c[1], c[2]
        if feature[m] == 2 or distance <= round_off:
            size = math.sqrt(n0 * n0 + n1 * n1 + n2 * n2)
            gradient[m, 0], gradient[m, 1], gradient[m, 2] = n0 / size, n1 / size, n2 / size
        else:
            gradient[m, 0], gradient[m, 1], gradient[m, 2] = d0 / s[m], d1 / s[m], d2 / s[m]
