"""The points of a box on a link that can touch a fixed :class:`~flexbody.constraints.surfaces.Box` first: the
vertices of their contact polygon, as anchors for :class:`~flexbody.constraints.unilateral_contact.Contact`
(:func:`~flexbody.constraints.contact_shapes.box_contacts` against a Box: a crate on a table, over its edge, on a
step).

Two boxes meet first at a face, an edge or a corner of each; the set where they touch is a polygon (face on face),
a segment or a point. Its vertices are found by the separating-axis test and clipping (Gottschalk, Lin & Manocha
1996 for the axes; Ericson, *Real-Time Collision Detection*, 2005, §4.4 and §5.1.9): of the 15 axes (the boxes'
face normals and the cross products of their edge directions), the one along which the box P on the link lies
farthest out of the fixed box Q (or least deep in it), oriented from Q to P, with faces preferred on ties,

- a face of Q: P's face most opposed to it (its incident face) clipped to the reference face's sides — the polygon's
  vertices lie on P;
- a face of P: Q's incident face clipped to P's face's sides, its vertices projected on P's face;
- an edge of each: the point of P's edge nearest Q's edge.

The polygon has at most eight vertices; the anchors are eight material points of P (:class:`BoxManifoldPoint`),
the polygon's vertices and, for the slots it leaves, P's other corners, the nearest Q first (no point twice). Each is
an exact unilateral constraint whatever it is: a point of P that must stay outside Q, its gap and normal Q's signed
distance at it. So the contacts hold P wherever the polygon holds it — on a table, over
its edge and tipping about it — which P's corners alone do not (a table's edge under a crate's face is no corner).
The points are chosen anew at every state; within a step each is the link's material point there
(:class:`~flexbody.constraints.material_point.MovingMaterialPoint`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numba as nb
import numpy as np

from ..rigid.anchors import LinkFrame
from .material_point import MovingMaterialPoint
from .surfaces import Box

if TYPE_CHECKING:
    from ..rigid.state_view import StateView

__all__ = ["BoxManifold", "BoxManifoldPoint", "box_box_points", "segments_nearest", "SLOTS", "CAPSULE_SLOTS"]

SLOTS = 8
"""The most vertices of the contact polygon of two boxes (a quadrilateral clipped to a rectangle)."""

CAPSULE_SLOTS = 4
"""A capsule's slots: the two ends of the segment along which it touches a box, and its own two ends."""

FACE_PREFERENCE = 1e-9
"""How much farther out [m per m of the boxes' half-edges] an axis must put P than a face axis before it is taken
(ties between parallel faces, and edges on faces, go to the faces)."""


@nb.njit(cache=True)
def _separation(a, d, Rp, hp, Rq, hq):
    """|a·d| − (Q's and P's half-extents along a): how far out of Q P lies along the axis a (negative: deep); the
    boxes' axes the rows of Rp, Rq."""
    reach = 0.0
    for k in range(3):
        reach += hq[k] * abs(a @ Rq[k]) + hp[k] * abs(a @ Rp[k])
    return abs(a @ d) - reach


@nb.njit(cache=True)
def _face(centre, R, half, k, sign):
    """The 4 corners (4, 3), in order around it, of the face of a box (centre, axes the rows of R, half-edges) whose
    outward normal is sign·R[k]."""
    k1, k2 = (k + 1) % 3, (k + 2) % 3
    middle = centre + sign * half[k] * R[k]
    u, v = half[k1] * R[k1], half[k2] * R[k2]
    corners = np.empty((4, 3))
    corners[0], corners[1], corners[2], corners[3] = middle + u + v, middle - u + v, middle - u - v, middle + u - v
    return corners


@nb.njit(cache=True)
def _clip(polygon, count, normal, offset, tolerance):
    """The polygon's first ``count`` vertices (rows) clipped to normal·x ≤ offset + ``tolerance`` [m]
    (Sutherland–Hodgman; the tolerance keeps what lies on a face of no width, a capsule's): (vertices, count)."""
    out = np.empty((polygon.shape[0], 3))
    kept = 0
    for i in range(count):
        a, b = polygon[i], polygon[(i + 1) % count]
        da, db = normal @ a - offset, normal @ b - offset
        if da <= tolerance:
            out[kept] = a
            kept += 1
        if (da < -tolerance and db > tolerance) or (db < -tolerance and da > tolerance):
            out[kept] = a + (da / (da - db)) * (b - a)
            kept += 1
    return out, kept


@nb.njit(cache=True)
def _clipped_to_face(polygon, centre, R, half, k):
    """``polygon`` (4, 3) clipped to the four side planes of the face of the box (centre, axes the rows of R, half)
    normal to R[k]:
    (vertices (16, 3), count)."""
    vertices = np.empty((16, 3))
    vertices[:4] = polygon
    count = 4
    for j in ((k + 1) % 3, (k + 2) % 3):
        axis = R[j]
        for sign in (1.0, -1.0):
            offset = sign * (axis @ centre) + half[j]
            vertices, count = _clip(vertices, count, sign * axis, offset, 1e-12 * (abs(offset) + 1.0))
            if count == 0:
                return vertices, 0
    return vertices, count


@nb.njit(cache=True)
def segments_nearest(p1, d1, p2, d2):
    """(s, t): the points p1 + s d1 and p2 + t d2 (|s|, |t| ≤ 1) of two segments, centred at p1 and p2 with
    half-vectors d1 and d2, nearest each other (Ericson §5.1.9)."""
    r = p1 - p2
    a, e, b = d1 @ d1, d2 @ d2, d1 @ d2
    c, f = d1 @ r, d2 @ r
    den = a * e - b * b
    s = min(max((b * f - c * e) / den, -1.0), 1.0) if den > 1e-300 else 0.0
    t = min(max((b * s + f) / e, -1.0), 1.0) if e > 0.0 else 0.0
    s = min(max((b * t - c) / a, -1.0), 1.0) if a > 0.0 else 0.0  # P's edge of no length (a capsule's): its point
    return s, t


@nb.njit(cache=True)
def _nearest_on_segment(p, d, x):
    """The point of the segment p + s d (|s| ≤ 1) nearest x."""
    length = d @ d
    return p + min(max(((x - p) @ d) / length, -1.0), 1.0) * d if length > 0.0 else p.copy()


@nb.njit(cache=True)
def _separating_axis(cp, Rp, hp, cq, Rq, hq):
    """(kind, index, axis (3,)) of the 15 axes (module docstring; the boxes' axes the rows of Rp, Rq) the one along
    which P lies farthest out of Q, oriented from Q to P: kind 0 Q's face ``index``, 1 P's face ``index``, 2 the
    edges Q ``index`` // 3 and P ``index`` % 3; faces win ties (by :data:`FACE_PREFERENCE`), Q's before P's."""
    d = cp - cq
    tolerance = FACE_PREFERENCE * (hp.sum() + hq.sum())
    best, kind, index, axis = -np.inf, -1, -1, np.zeros(3)
    for i in range(3):  # Q's faces first: ties between parallel faces go to them
        s = _separation(Rq[i], d, Rp, hp, Rq, hq)
        if s > best:
            best, kind, index, axis = s, 0, i, Rq[i].copy()
    for j in range(3):
        s = _separation(Rp[j], d, Rp, hp, Rq, hq)
        if s > best + tolerance:
            best, kind, index, axis = s, 1, j, Rp[j].copy()
    for i in range(3):
        for j in range(3):
            c = np.cross(Rq[i], Rp[j])
            size = np.sqrt(c @ c)
            if size < 1e-6:  # parallel edges: the faces' axes hold them
                continue
            s = _separation(c / size, d, Rp, hp, Rq, hq)
            if s > best + tolerance:
                best, kind, index, axis = s, 2, 3 * i + j, c / size
    return kind, index, (-axis if axis @ d < 0.0 else axis)


@nb.njit(cache=True)
def _most_aligned(R, axis):
    """The row of R (3, 3) most nearly parallel (or opposed) to ``axis``: the box's face most facing it."""
    best = 0
    for k in range(1, 3):
        if abs(R[k] @ axis) > abs(R[best] @ axis):
            best = k
    return best


@nb.njit(cache=True)
def box_box_points(cp, Rp, hp, cq, Rq, hq, points, gaps, normal):
    """The contact polygon's vertices on the box P (centre cp (3,), axes the columns of Rp (3, 3), half-edges hp
    (3,); some may be zero: a capsule's segment) against the box Q (cq, Rq, hq) (module docstring), written to
    ``points`` (slots, 3) [world] without repeats, the slots left filled with P's other corners, the nearest Q
    first (:func:`_fill`); the polygon's vertices' gaps [m] along the axis to ``gaps`` (slots,) (the others NaN) and
    the axis (from Q to P) to ``normal`` (3,); returns how many are the polygon's."""
    Rp, Rq = np.ascontiguousarray(Rp.T), np.ascontiguousarray(Rq.T)  # the axes as rows from here on
    kind, index, axis = _separating_axis(cp, Rp, hp, cq, Rq, hq)
    found = np.empty((16, 3))
    found_gaps = np.empty(16)
    count = 0
    if kind == 0:  # Q's face: P's incident face clipped to it
        j = _most_aligned(Rp, axis)
        incident = _face(cp, Rp, hp, j, -1.0 if Rp[j] @ axis > 0.0 else 1.0)
        vertices, count = _clipped_to_face(incident, cq, Rq, hq, index)
        face = axis @ cq + hq[index]  # the reference face's plane: axis·x = face
        for m in range(count):
            found[m] = vertices[m]
            found_gaps[m] = axis @ vertices[m] - face
    elif kind == 1:  # P's face: Q's incident face clipped to it and projected on it
        i = _most_aligned(Rq, axis)
        incident = _face(cq, Rq, hq, i, 1.0 if Rq[i] @ axis > 0.0 else -1.0)
        vertices, count = _clipped_to_face(incident, cp, Rp, hp, index)
        face_point = cp - hp[index] * abs(Rp[index] @ axis) * axis  # on P's face towards Q
        for m in range(count):
            found_gaps[m] = (face_point - vertices[m]) @ axis
            found[m] = vertices[m] + found_gaps[m] * axis
    else:  # an edge of each: the point of P's edge nearest Q's edge
        i, j = index // 3, index % 3
        edge_q, edge_p = cq.copy(), cp.copy()
        for k in range(3):
            if k != i:
                edge_q += (1.0 if Rq[k] @ axis > 0.0 else -1.0) * hq[k] * Rq[k]
            if k != j:
                edge_p -= (1.0 if Rp[k] @ axis > 0.0 else -1.0) * hp[k] * Rp[k]
        along = hp[j] * Rp[j]
        found[0] = edge_p + segments_nearest(edge_p, along, edge_q, hq[i] * Rq[i])[0] * along
        found_gaps[0] = (found[0] - _nearest_on_segment(edge_q, hq[i] * Rq[i], found[0])) @ axis
        count = 1
    same = 1e-12 * (hp.sum() + hq.sum() + np.abs(cp).max() + 1.0)  # [m]: points nearer are one
    kept = 0
    for m in range(count):  # a face of no width (a capsule's) repeats its vertices
        if kept < points.shape[0] and not _among(found[m], points, kept, same):
            points[kept] = found[m]
            gaps[kept] = found_gaps[m]
            kept += 1
    gaps[kept:] = np.nan
    normal[:] = axis
    _fill(cp, Rp, hp, axis, points, kept, same)
    return kept


@nb.njit(cache=True)
def _among(x, points, count, same):
    """Whether x (3,) is within ``same`` of one of the first ``count`` points."""
    near = False
    for m in range(count):
        near = near or np.abs(points[m] - x).max() <= same
    return near


@nb.njit(cache=True)
def _fill(cp, Rp, hp, axis, points, count, same):
    """points[count:] set to P's corners that are not among them yet, the nearest Q (least far out along ``axis``)
    first, then (a capsule's segment has two) points along P's longest edge through its centre."""
    corners = np.empty((8, 3))
    heights = np.empty(8)
    for k in range(8):
        corner = cp.copy()
        for m in range(3):
            corner += (1.0 if (k >> m) & 1 else -1.0) * hp[m] * Rp[m]
        corners[k] = corner
        heights[k] = corner @ axis
    filled = count
    for k in np.argsort(heights):
        if filled < points.shape[0] and not _among(corners[k], points, filled, same):
            points[filled] = corners[k]
            filled += 1
    longest = np.argmax(hp)
    if hp[longest] == 0.0:  # a point (a capsule of no length): it alone
        points[filled:] = cp
        return
    fraction, step = 0.0, 1.0
    while filled < points.shape[0]:  # 0, ±1/2, ±1/4, ±3/4, … of the half-edge
        for sign in (1.0, -1.0):
            x = cp + sign * fraction * hp[longest] * Rp[longest]
            if filled < points.shape[0] and not _among(x, points, filled, same):
                points[filled] = x
                filled += 1
        fraction += step
        if fraction >= 1.0:
            step *= 0.5
            fraction = step


class BoxManifold:
    """What the ``slots`` points of a box (half-edges ``half`` (3,) [m], centre and axes the ``frame``'s) — or of a
    capsule, the box of half-edges (0, 0, ℓ/2) (its segment) swept by a ball of ``radius`` [m] — against the fixed
    Box ``box`` share: the state's contact polygon and other points (:meth:`polygon`, a term of the state's
    workspace, found once for all of them)."""

    def __init__(self, frame: LinkFrame, half: np.ndarray, box: Box, radius: float = 0.0, slots: int = SLOTS):
        self.frame, self.half, self.box = frame, np.asarray(half, dtype=float), box
        self.radius, self.slots = float(radius), int(slots)

    def polygon(self, ev: StateView) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(points (slots, 3), gaps (slots,), axis (3,), centre (3,)): the state's contact polygon and other points
        (:func:`box_box_points`)."""

        def compute():
            R, centre = self.frame.rotation(ev), self.frame.position(ev)
            points, gaps, axis = np.empty((self.slots, 3)), np.empty(self.slots), np.empty(3)
            box = self.box
            box_box_points(
                centre, np.ascontiguousarray(R), self.half, box.center, box.rotation, box.half, points, gaps, axis
            )
            return points, gaps, axis, centre

        return ev.memo(("box manifold", self), compute)


class BoxManifoldPoint(MovingMaterialPoint):
    """Slot ``slot`` of a shape's points against a fixed Box (its ``manifold``, a :class:`BoxManifold`; module
    docstring): a material point on the shape's surface, chosen anew at every state. A box's polygon vertex has the
    separation along the axis for its gap and the axis for its normal (a point on an edge of the table has no normal
    of its own); a corner filling a slot, and every point of a capsule (the centre of a ball of its radius, that far
    from the box where it touches), the Box's signed distance (less the radius) and its gradient there."""

    def __init__(self, manifold: BoxManifold, slot: int):
        box = manifold.box
        label = f"{manifold.frame.label} shape point {slot} against the box at {np.round(box.center, 6).tolist()}"
        super().__init__(manifold.frame, label)
        self.manifold, self.slot = manifold, int(slot)

    def _manifold(self, ev: StateView) -> tuple[np.ndarray, float, np.ndarray, np.ndarray]:
        """(the slot's point on the surface (3,) [m, world], its gap [m], the normal (3,), the shape's centre (3,))."""
        points, gaps, axis, centre = self.manifold.polygon(ev)
        core, gap = points[self.slot], float(gaps[self.slot])
        box, radius = self.manifold.box, self.manifold.radius
        if np.isnan(gap) or radius > 0.0:  # a corner, or a ball's centre (r from the box where it touches)
            gap, axis = float(box.value(core)[0]), box.gradient(core)[0]
        return core - radius * axis, gap - radius, axis, centre

    def arm(self, ev: StateView) -> np.ndarray:
        """The slot's point less the shape's centre (3,) [m, world]."""
        point, _, _, centre = self._manifold(ev)
        return point - centre

    def gap_and_normal(self, ev: StateView) -> tuple[float, np.ndarray]:
        """(g [m], n (3,)): the slot's gap and the surface's outward unit normal there (class docstring)."""
        _, gap, axis, _ = self._manifold(ev)
        return gap, axis
