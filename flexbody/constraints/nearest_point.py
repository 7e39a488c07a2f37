"""The point of a box, a capsule or a cylinder on a link nearest a sphere, and of a capsule nearest a cylinder's axis:
the support point of a convex shape toward a :class:`~flexbody.constraints.surfaces.Sphere` (a solid ball) or a
:class:`~flexbody.constraints.surfaces.Cylinder` (a solid rod), as an anchor for
:class:`~flexbody.constraints.unilateral_contact.Contact` (the shapes' contacts of
:mod:`flexbody.constraints.contact_shapes`).

A convex shape and a ball touch at one point, the shape's point y nearest the ball's centre c, and their distance is
‖y − c‖ − R (the gap of a point at y against the Sphere, whose normal there, (y − c)/‖y − c‖, is the shape's normal at
y). In the shape's axes (origin at its centre x₀, axes Q in the world), with p = Qᵀ(c − x₀):

- a box of half-edges h: y = clip(p, −h, h) when c is outside it; inside, p moved to the nearest face;
- a capsule, the segment s e₃ (|s| ≤ ℓ/2) with radius r: s* = clip(p₃, −ℓ/2, ℓ/2) and
  y = s* e₃ + r (p − s* e₃)/‖p − s* e₃‖;
- a cylinder of radius ρ and length ℓ (solid): the axial coordinate clipped to ±ℓ/2 and the radial part to ρ when
  c is outside it; inside, c moved to the nearer of the side and the end discs.

A capsule and a rod (a Cylinder of radius R about the line c + t a) touch where the segment comes nearest the
line: at s* of the segment's closest point to the line (Ericson §5.1.8), y = s* e₃ + r u with u the unit vector from
there to the line, the gap ‖s* e₃ − l*‖ − r − R; where the segment is parallel to the line (a capsule lying along
the pipe) or s* is an end, the capsule's end balls (its other contacts) hold it, and the point is taken at the
segment's middle.

y slides over the shape as it moves, but only across the normal (a nearest point moves in the face, along the edge or
on the capsule's surface where it lies), so the gap's rate is n·v(y), the velocity of the link's material point at y:
J = J_o − [y − x₀]× J_ω (J_o, J_ω the Jacobians of the shape's frame;
:class:`~flexbody.constraints.material_point.MovingMaterialPoint`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numba as nb
import numpy as np

from ..rigid.anchors import LinkFrame
from .material_point import MovingMaterialPoint
from .surfaces import Cylinder, Sphere

if TYPE_CHECKING:
    from ..rigid.state_view import StateView

__all__ = [
    "NearestPoint",
    "box_point_nearest",
    "capsule_point_nearest",
    "cylinder_point_nearest",
    "cylinder_distance",
    "segment_point_nearest_line",
    "box_edges",
]


def box_point_nearest(half: np.ndarray, p: np.ndarray) -> np.ndarray:
    """The point (3,) of the box |yᵢ| ≤ hᵢ nearest p (3,) (box axes): p clipped; for p inside, p moved to the nearest
    face."""
    y = np.clip(p, -half, half)
    if np.any(y != p):
        return y
    depth = half - np.abs(p)  # inside: how far each face is
    i = int(np.argmin(depth))
    y = p.copy()
    y[i] = half[i] if p[i] >= 0.0 else -half[i]
    return y


def capsule_point_nearest(half_length: float, radius: float, p: np.ndarray) -> np.ndarray:
    """The point (3,) of the capsule around the segment s e₃ (|s| ≤ ``half_length``) of ``radius`` nearest p (3,)
    (capsule axes, p off the segment)."""
    s = float(np.clip(p[2], -half_length, half_length))
    away = p - np.array([0.0, 0.0, s])
    size = float(np.linalg.norm(away))
    direction = away / size if size > 0.0 else np.array([1.0, 0.0, 0.0])  # p on the segment: any side
    return np.array([0.0, 0.0, s]) + radius * direction


@nb.njit(cache=True)
def cylinder_distance(p, half_length, radius):
    """(s, ∇s (3,), nearest surface point (3,)) of the point p (3,) against the solid cylinder about e₃ (|z| ≤
    ``half_length``, ‖(x, y)‖ ≤ ``radius``; its axes): the signed distance, outside positive — to the side, an end
    disc or a rim outside, to the nearer of the side and the discs inside."""
    rho = np.sqrt(p[0] * p[0] + p[1] * p[1])
    side, end = rho - radius, abs(p[2]) - half_length
    r0, r1 = (p[0] / rho, p[1] / rho) if rho > 0.0 else (1.0, 0.0)
    axial = 1.0 if p[2] >= 0.0 else -1.0
    gradient, nearest = np.zeros(3), p.copy()
    if side > 0.0 or end > 0.0:  # outside: the side, a disc or a rim
        ds, de = max(side, 0.0), max(end, 0.0)
        s = np.sqrt(ds * ds + de * de)
        gradient[0], gradient[1], gradient[2] = ds * r0 / s, ds * r1 / s, de * axial / s
        if side > 0.0:
            nearest[0], nearest[1] = radius * r0, radius * r1
        nearest[2] = min(max(p[2], -half_length), half_length)
    elif side > end:  # inside, nearer the side
        s = side
        gradient[0], gradient[1] = r0, r1
        nearest[0], nearest[1] = radius * r0, radius * r1
    else:
        s = end
        gradient[2] = axial
        nearest[2] = axial * half_length
    return s, gradient, nearest


def cylinder_point_nearest(half_length: float, radius: float, p: np.ndarray) -> np.ndarray:
    """The point (3,) of the solid cylinder about e₃ (|z| ≤ ``half_length``, ‖(x, y)‖ ≤ ``radius``) nearest p (3,)
    (cylinder axes): :func:`cylinder_distance`'s."""
    return cylinder_distance(np.asarray(p, dtype=float), float(half_length), float(radius))[2]


def segment_point_nearest_line(half_length: float, p: np.ndarray, a: np.ndarray) -> float | None:
    """s* (|s*| < ``half_length``) of the point s e₃ of the segment nearest the line p + t a (segment axes, a a unit
    vector); None where the segment is parallel to the line or the nearest point is an end (Ericson §5.1.8)."""
    b = float(a[2])
    den = 1.0 - b * b
    if den < 1e-12:
        return None
    s = (p[2] - b * (p @ a)) / den  # the closest points of the two lines
    return s if abs(s) < half_length else None


class NearestPoint(MovingMaterialPoint):
    """The point of a ``shape`` ("box": ``size`` its half-edges (3,) [m]; "capsule": ``size`` (half-length, radius)
    [m], along the third axis; "cylinder": ``size`` (half-length, radius) [m], along the third axis) with centre and
    axes the ``frame``'s, nearest the centre of ``sphere`` — or, for a capsule and a Cylinder, nearest its axis
    (module docstring): a material point of the link that moves over the shape."""

    def __init__(self, frame: LinkFrame, shape: str, size: np.ndarray, sphere: Sphere):
        target = "axis of the cylinder" if isinstance(sphere, Cylinder) else "sphere"
        label = f"{frame.label} {shape} point nearest the {target} at {np.round(sphere.center, 6).tolist()}"
        super().__init__(frame, label)
        self.shape, self.size, self.sphere = shape, np.asarray(size, dtype=float), sphere

    def arm(self, ev: StateView) -> np.ndarray:
        """y − x₀ (3,) [m, world]: y of module docstring from the shape's centre x₀."""
        Q, x0 = self.frame.rotation(ev), self.frame.position(ev)
        p = Q.T @ (self.sphere.center - x0)
        if isinstance(self.sphere, Cylinder):  # a capsule against a rod
            a = Q.T @ self.sphere.axis
            s = segment_point_nearest_line(float(self.size[0]), p, a)
            s = 0.0 if s is None else s  # parallel, or an end: the end balls hold it
            toward = p + ((np.array([0.0, 0.0, s]) - p) @ a) * a - np.array([0.0, 0.0, s])  # to the line's point
            size = float(np.linalg.norm(toward))
            u = toward / size if size > 0.0 else np.array([1.0, 0.0, 0.0])
            return Q @ (np.array([0.0, 0.0, s]) + float(self.size[1]) * u)
        if self.shape == "box":
            return Q @ box_point_nearest(self.size, p)
        if self.shape == "cylinder":
            return Q @ cylinder_point_nearest(float(self.size[0]), float(self.size[1]), p)
        return Q @ capsule_point_nearest(float(self.size[0]), float(self.size[1]), p)


def box_edges(half: np.ndarray) -> list[tuple[np.ndarray, np.ndarray, float]]:
    """The 12 edges of the box |x_k| ≤ half_k (box axes): (middle (3,), unit direction (3,), half-length)."""
    edges = []
    for k in range(3):
        i, j = (k + 1) % 3, (k + 2) % 3
        for si in (-1.0, 1.0):
            for sj in (-1.0, 1.0):
                middle = np.zeros(3)
                middle[i], middle[j] = si * half[i], sj * half[j]
                edges.append((middle, np.eye(3)[k], float(half[k])))
    return edges
