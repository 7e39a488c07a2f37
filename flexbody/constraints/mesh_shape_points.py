"""The points of a box or a capsule on a link that can touch a fixed closed
:class:`~flexbody.constraints.mesh_surface.TriangleMesh` where its corners or end balls do not: as anchors for
:class:`~flexbody.constraints.unilateral_contact.Contact` (:func:`~flexbody.constraints.contact_shapes.box_contacts`
and :func:`~flexbody.constraints.contact_shapes.capsule_contacts` against a mesh: a crate on a meshed table, over its
edge, on a ridge).

Two polyhedra (a capsule: a segment swept by a ball, a rounded polyhedron) touch first at a vertex of one on a face of
the other, or at an edge of each (Ericson, *Real-Time Collision Detection*, 2005, §5.1 and §9.5 on convex pieces): so
the contacts that hold the shape P against the mesh Q are

- P's vertices against Q's signed distance (a box's corners, a capsule's end balls: point contacts on the mesh);
- Q's vertices against P's signed distance (:class:`MeshFeaturePoint`): the material point of P nearest a vertex of Q,
  with the gap s_P(v) − r and the normal −∇s_P(v) (the direction that takes P away from v);
- Q's edges against P's edges (:class:`MeshFeaturePoint`): the point of P's edge nearest Q's edge, with the gap along
  their common normal n (oriented away from Q) where the nearest points lie inside both edges (where one lies at an
  end, the corner's or the vertex's contact holds it), their distance where P's point lies beyond Q's edge outside Q.

A vertex of Q nearest a corner of P is left to that corner's contact (the same two points, which two contacts would
make a pair of rows that differ by round-off).

Only Q's features that can touch P before their faces do are taken: vertices with a neighbour below their tangent
plane, and convex edges (the far vertex of one face below the other's plane); a flat floor's triangulation adds none.
Of these, each state's :data:`VERTEX_SLOTS` nearest vertices and :data:`EDGE_SLOTS` nearest edge pairs fill the
slots, the nearest first: the points are chosen anew at every state, and within a step each is the link's material
point there (:class:`~flexbody.constraints.material_point.MovingMaterialPoint`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import numba as nb
import numpy as np

from ..rigid.anchors import LinkFrame
from .box_manifold import segments_nearest
from .material_point import MovingMaterialPoint
from .mesh_surface import TriangleMesh
from .nearest_point import cylinder_distance
from .surfaces import box_distance

if TYPE_CHECKING:
    from ..rigid.state_view import StateView

__all__ = ["MeshFeaturePoint", "MeshSlots", "mesh_feature_points", "chosen_slots", "VERTEX_SLOTS", "EDGE_SLOTS"]

VERTEX_SLOTS = 4
"""The mesh's vertices nearest the shape that are contacts at a state."""

EDGE_SLOTS = 4
"""The pairs of a mesh edge and a shape edge nearest each other that are contacts at a state."""

DUPLICATE = 1e-6
"""Pairs of points (the shape's, the mesh's) nearer each other than this [m per m of the shape's size] are one
contact (:func:`chosen_slots`)."""

EDGE_MARGIN = 1e-4
"""Points of a pair of edges that cross (the shape's beyond the mesh's edge line) nearer each other than this [m per
m of the shape's size] are a penetration of that edge whatever the mesh's signed distance there (at the edge itself
it is nil, the point on the plane of one face and below the other's)."""

EDGE_DEPTH = 0.5
"""A point of the shape inside the mesh, its depth δ (the mesh's signed distance) and its distance d to a mesh
edge: the edge is the one it penetrates only where δ ≥ EDGE_DEPTH d (δ = d sin(α/2) on the bisector of an edge of
dihedral angle α; ½ holds α down to 60°). A point inside the mesh across a far edge's line is no pair of it."""


@nb.njit(cache=True)
def vertex_pairs(centre, R, half, radius, vertices, cylinder=False):
    """For every vertex of ``vertices`` (a, 3) and the shape — the box of half-edges ``half`` (3,) [m] centred at
    ``centre`` with axes the columns of R (3, 3), swept by a ball of ``radius`` —: (gaps s − r (a,), the shape's
    surface points nearest them (a, 3), normals −∇s (a, 3)); a vertex nearest a corner of the box (an end of a
    capsule) has an infinite gap (module docstring). With ``cylinder`` the shape is the solid cylinder of radius
    half[0] and half-length half[2] about its third axis instead, and a vertex nearest its rims has an infinite gap
    (the rims' own minima hold it: :mod:`~flexbody.constraints.cylinder_slots`)."""
    a = vertices.shape[0]
    gaps = np.full(a, np.inf)
    points = np.zeros((a, 3))
    normals = np.zeros((a, 3))
    for m in range(a):
        p = R.T @ (vertices[m] - centre)
        if cylinder:
            rho = np.sqrt(p[0] * p[0] + p[1] * p[1])
            if rho >= half[0] and abs(p[2]) >= half[2]:  # nearest a rim
                continue
            s, gradient, _ = cylinder_distance(p, half[2], half[0])
        else:
            if np.all(np.abs(p) >= half):  # nearest a corner (a capsule's end): the corner's own contact holds it
                continue
            s, gradient, _ = box_distance(p, half)
        n = -(R @ gradient)
        gaps[m] = s - radius
        normals[m] = n
        points[m] = vertices[m] + gaps[m] * n  # v − g ∇s: the shape's surface point nearest v
    return gaps, points, normals


@nb.njit(cache=True)
def edge_pairs_nearest(centre, R, radius, middles, directions, halves, edges, edge_normals):
    """For every pair of a mesh edge (``edges`` (b, 2, 3), outward ``edge_normals`` (b, 3)) and an edge of the shape
    (``middles`` (e, 3), unit ``directions`` (e, 3) and half-lengths ``halves`` (e,) in the shape's axes, R (3, 3)
    their columns, ``centre`` its centre): (gaps (b e,), the shape's surface points (b e, 3), normals (b e, 3), the
    points of the shape's edges (b e, 3) and of the mesh's (b e, 3) nearest each other
    (:func:`~flexbody.constraints.box_manifold.segments_nearest`), crossing (b e,) bool): where the nearest points
    lie inside both edges, which are not parallel, the gap along their common normal oriented away from the mesh,
    ``crossing`` where it is negative (the shape's point may be inside the mesh, or only beyond the edge's line:
    :func:`edge_pairs` asks the mesh); other pairs (at an end of either: a corner's or a vertex's own contact holds
    them) have an infinite gap."""
    n_shape, b = halves.size, edges.shape[0]
    gaps = np.full(b * n_shape, np.inf)
    points = np.zeros((b * n_shape, 3))
    normals = np.zeros((b * n_shape, 3))
    crossing = np.zeros(b * n_shape, dtype=np.bool_)
    on_shape, on_mesh = np.zeros((b * n_shape, 3)), np.zeros((b * n_shape, 3))
    for m in range(b):
        q, g = 0.5 * (edges[m, 0] + edges[m, 1]), 0.5 * (edges[m, 1] - edges[m, 0])
        for k in range(n_shape):
            p, h = centre + R @ middles[k], halves[k] * (R @ directions[k])
            s, t = segments_nearest(p, h, q, g)
            xp, xq = p + s * h, q + t * g
            cross = np.cross(h, g)
            size = np.sqrt(cross @ cross)
            d = xp - xq
            index = m * n_shape + k
            on_shape[index], on_mesh[index] = xp, xq
            if not (abs(s) < 1.0 and abs(t) < 1.0 and size > 1e-9 * np.sqrt((h @ h) * (g @ g))):
                continue  # at an end of either (a corner's or a vertex's own contact), or parallel: not a pair
            n = cross / size
            if n @ edge_normals[m] < 0.0:
                n = -n
            crossing[index] = n @ d < 0.0
            gaps[index] = n @ d - radius
            points[index] = xp - radius * n
            normals[index] = n
    return gaps, points, normals, on_shape, on_mesh, crossing


def edge_pairs(centre, R, radius, shape_edges, features, mesh: TriangleMesh, size: float) -> tuple[np.ndarray, ...]:
    """(gaps, the shape's surface points, normals) of every pair of a mesh edge and a shape edge
    (:func:`edge_pairs_nearest`, module docstring; ``shape_edges`` its middles, directions and half-lengths, ``size``
    [m] the shape's). Where the gap along the common normal is
    negative, it holds (a penetration) where the points are within :data:`EDGE_MARGIN` of the shape's size of each
    other or the shape's point lies inside the mesh at least :data:`EDGE_DEPTH` of their distance deep; otherwise,
    outside the mesh the point lies beyond the edge's line only, and the pair's gap is its distance, and inside (or
    on the surface) across a far edge's line, the pair is none."""
    _, edges, edge_normals = features
    all_gaps, all_points, all_normals, on_shape, on_mesh, crossing = edge_pairs_nearest(
        centre, R, radius, *shape_edges, edges, edge_normals
    )
    check = np.flatnonzero(crossing)
    if check.size:  # beyond the edge's line: a penetration where the point is inside the mesh near the edge
        tiny = mesh.round_off
        depth = -mesh.signed_distances(on_shape[check], 0.0)[0]
        d = on_shape[check] - on_mesh[check]
        distance = np.linalg.norm(d, axis=1)
        near = (distance <= EDGE_MARGIN * size) | (depth >= EDGE_DEPTH * distance - tiny)
        apart = ~near & (depth < -tiny)  # outside: beyond the edge's line only
        outside, d, distance = check[apart], d[apart], distance[apart]
        all_normals[outside] = d / distance[:, None]
        all_gaps[outside] = distance - radius
        all_points[outside] = on_shape[outside] - radius * all_normals[outside]
        all_gaps[check[~near & ~apart]] = np.inf  # inside, but across a far edge's line: no pair of it
    return all_gaps, all_points, all_normals


def _same(x: np.ndarray, y: np.ndarray, within: float) -> bool:
    return float(np.abs(x - y).max()) <= within


def chosen_slots(centre, R, shape: MeshSlots) -> tuple[np.ndarray, ...]:
    """(points (k, 3) [m], gaps (k,) [m], normals (k, 3)) of the ``shape``'s slots (a :class:`MeshSlots`) at its
    centre (3,) and axes the columns of R (3, 3): its vertex slots' mesh vertices and then its edge slots' edge pairs
    nearest the shape (k their number; module docstring), each the nearest that is not a pair taken already nor at a
    corner (an end) of the shape (:func:`take_nearest`); infinite gaps for slots left over."""
    half, radius, size, features = shape.half, shape.radius, shape.size, shape.features
    cores = [centre + R @ ((2.0 * np.array(k) - 1.0) * half) for k in np.ndindex(2, 2, 2)]  # corners (ends)
    taken: list = [(x, None) for x in cores]  # (the shape's point, the mesh's): a corner's has its own mesh point
    candidates = (
        vertex_pairs(centre, R, half, radius, features[0]),
        edge_pairs(centre, R, radius, shape.edges, features, shape.mesh, size),
    )
    parts = [
        take_nearest(pairs, radius, slots, taken, DUPLICATE * size) for pairs, slots in zip(candidates, shape.slots)
    ]
    return tuple(np.concatenate(arrays) for arrays in zip(*parts))


def take_nearest(pairs: tuple, radius: float, slots: int, taken: list, within: float) -> tuple[np.ndarray, ...]:
    """(points (slots, 3) [m], gaps (slots,) [m], normals (slots, 3)): of the candidate ``pairs`` (gaps (m,), the
    shape's surface points (m, 3), normals (m, 3), the shape swept by ``radius`` [m]) the ``slots`` nearest, the nearest
    first, each one that is not a pair in ``taken`` already — its point of the shape's core and its point of the mesh
    (None: any) both within ``within`` [m] of theirs (a vertex of the mesh on the shape's edge, and the edge pair
    ending at it): the same contact twice, whose rows would differ by round-off and make W all but singular. Appends
    what it takes to ``taken``; infinite gaps for slots left over."""
    all_gaps, all_points, all_normals = pairs
    points = np.zeros((slots, 3))
    gaps = np.full(slots, np.inf)
    normals = np.tile(np.array([0.0, 0.0, 1.0]), (slots, 1))
    filled = 0
    for index in np.argsort(all_gaps):
        if filled == slots or not np.isfinite(all_gaps[index]):
            break
        core = all_points[index] + radius * all_normals[index]
        on_mesh = core - (all_gaps[index] + radius) * all_normals[index]
        if any(_same(core, x, within) and (y is None or _same(on_mesh, y, within)) for x, y in taken):
            continue
        taken.append((core, on_mesh))
        points[filled], gaps[filled], normals[filled] = all_points[index], all_gaps[index], all_normals[index]
        filled += 1
    return points, gaps, normals


def mesh_feature_points(frame: LinkFrame, half: np.ndarray, radius: float, mesh: TriangleMesh, edges: list) -> list:
    """The slots of a shape (the box of half-edges ``half`` (3,) [m], a capsule's (0, 0, ℓ/2), swept by ``radius``
    [m], centre and axes the ``frame``'s; its ``edges`` (middle (3,), unit direction (3,), half-length) in its axes)
    against the ``mesh``'s vertices and edges (module docstring): up to :data:`VERTEX_SLOTS` and :data:`EDGE_SLOTS`
    :class:`MeshFeaturePoint`, fewer where the mesh has fewer features that can touch."""
    shape = MeshSlots(frame, np.asarray(half, dtype=float), float(radius), mesh, edges)
    return [MeshFeaturePoint(shape, k) for k in range(sum(shape.slots))]


class MeshSlots:
    """What a shape's slots against a mesh share (:func:`mesh_feature_points`): its ``frame``, ``half``-edges (3,)
    [m], ``radius`` [m], ``edges`` (middles (e, 3), directions (e, 3), half-lengths (e,)) and ``size`` [m], the
    ``mesh`` and its ``features`` (its :attr:`~flexbody.constraints.mesh_surface.TriangleMesh.touching_features`),
    the counts ``slots`` of vertex and edge slots, and the mesh's bounding box's ``middle`` (3,) and ``extent`` [m]
    (where a slot left over stands). Its :meth:`chosen` slots are a term of each state's workspace, found once for all
    of them."""

    def __init__(self, frame: LinkFrame, half: np.ndarray, radius: float, mesh: TriangleMesh, edges: list):
        self.frame, self.half, self.radius, self.mesh = frame, half, radius, mesh
        self.edges = tuple(np.array([edge[k] for edge in edges], dtype=float) for k in range(3))
        self.size = float(half.max()) + radius
        self.features = mesh.touching_features
        self.slots: tuple[int, ...] = (
            min(VERTEX_SLOTS, len(self.features[0])),
            min(EDGE_SLOTS, len(self.features[1]) * len(edges)),
        )
        self.middle = 0.5 * (mesh.points.min(axis=0) + mesh.points.max(axis=0))
        self.extent = float(np.ptp(mesh.points, axis=0).max())

    def slot_name(self, slot: int) -> str:
        """What slot ``slot`` is held against, for messages."""
        return "against the mesh's " + ("vertices" if slot < self.slots[0] else "edges")

    def chosen(self, ev: StateView) -> tuple[np.ndarray, ...]:
        """(points, gaps, normals, centre) of the state's slots (:func:`chosen_slots`) and the shape's centre (3,)."""

        def compute():
            R, centre = np.ascontiguousarray(self.frame.rotation(ev)), self.frame.position(ev)
            return (*chosen_slots(centre, R, self), centre)

        return ev.memo(("mesh shape slots", self), compute)


class ShapeSlots(Protocol):
    """What a shape's slots chosen at each state give their points (:class:`MeshSlots`,
    :class:`~flexbody.constraints.cylinder_slots.CylinderSlots`)."""

    frame: LinkFrame
    slots: tuple[int, ...]
    middle: np.ndarray
    extent: float

    def slot_name(self, slot: int) -> str: ...

    def chosen(self, ev: StateView) -> tuple[np.ndarray, ...]: ...


class MeshFeaturePoint(MovingMaterialPoint):
    """Slot ``slot`` of a shape's points chosen at each state: against a mesh's vertices and edges (module docstring;
    the first ``shape.slots[0]`` against vertices, the next against edges), ``shape`` a :class:`MeshSlots`, or a
    cylinder's (:class:`~flexbody.constraints.cylinder_slots.CylinderSlots`): what gives its ``frame``, ``slots``,
    ``middle``, ``extent``, :meth:`~MeshSlots.slot_name` and :meth:`~MeshSlots.chosen`."""

    def __init__(self, shape: ShapeSlots, slot: int):
        super().__init__(shape.frame, f"{shape.frame.label} shape point {slot} {shape.slot_name(slot)}")
        self.shape, self.slot = shape, int(slot)

    def _slot(self, ev: StateView) -> tuple[np.ndarray, float, np.ndarray, np.ndarray]:
        """(the slot's point on the shape (3,) [m, world], its gap [m], the normal (3,), the shape's centre (3,))."""
        points, gaps, normals, centre = self.shape.chosen(ev)
        return points[self.slot], float(gaps[self.slot]), normals[self.slot], centre

    def arm(self, ev: StateView) -> np.ndarray:
        """The slot's point less the shape's centre (3,) [m, world]; none for a slot left over (its centre)."""
        point, gap, _, centre = self._slot(ev)
        return point - centre if np.isfinite(gap) else np.zeros(3)

    def gap_and_normal(self, ev: StateView) -> tuple[float, np.ndarray]:
        """(g [m], n (3,)): the slot's gap and normal (module docstring). A slot left over (no feature near enough)
        is the shape's centre c against the mesh's bounding sphere grown by its diameter: g = ‖c − m‖ + D, n along
        c − m (m the sphere's centre, D the mesh's extent), a far gap whose rate is its row's."""
        _, gap, normal, centre = self._slot(ev)
        if not np.isfinite(gap):
            away = centre - self.shape.middle
            distance = float(np.linalg.norm(away))
            normal = away / distance if distance > 0.0 else np.eye(3)[2]
            gap = distance + self.shape.extent
        return gap, normal
