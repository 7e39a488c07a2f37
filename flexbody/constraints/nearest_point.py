"""The point of a box or a capsule on a link nearest a sphere: the support point of a convex shape toward a
:class:`~flexbody.constraints.surfaces.Sphere` (a solid ball), as an anchor for
:class:`~flexbody.constraints.unilateral_contact.Contact` (:func:`~flexbody.constraints.contact_shapes.box_contacts`,
:func:`~flexbody.constraints.contact_shapes.capsule_contacts` against a Sphere).

A convex shape and a ball touch at one point, the shape's point y nearest the ball's centre c, and their distance is
‖y − c‖ − R (the gap of a point at y against the Sphere, whose normal there, (y − c)/‖y − c‖, is the shape's normal at
y). In the shape's axes (origin at its centre x₀, axes Q in the world), with p = Qᵀ(c − x₀):

- a box of half-edges h: y = clip(p, −h, h) when c is outside it; inside, p moved to the nearest face;
- a capsule, the segment s e₃ (|s| ≤ ℓ/2) with radius r: s* = clip(p₃, −ℓ/2, ℓ/2) and
  y = s* e₃ + r (p − s* e₃)/‖p − s* e₃‖.

y slides over the shape as it moves, but only across the normal (a nearest point moves in the face, along the edge or
on the capsule's surface where it lies), so the gap's rate is n·v(y), the velocity of the link's material point at y:
J = J_o − [y − x₀]× J_ω (J_o, J_ω the Jacobians of the shape's frame;
:class:`~flexbody.constraints.material_point.MovingMaterialPoint`). A shape against a Cylinder may touch along a
line (a box lying along a pipe), which one point does not hold: that pairing is refused.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..rigid.anchors import LinkFrame
from .material_point import MovingMaterialPoint
from .surfaces import Sphere

if TYPE_CHECKING:
    from ..rigid.state_view import StateView

__all__ = ["NearestPoint", "box_point_nearest", "capsule_point_nearest"]


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


class NearestPoint(MovingMaterialPoint):
    """The point of a ``shape`` ("box": ``size`` its half-edges (3,) [m]; "capsule": ``size`` (half-length, radius)
    [m], along the third axis) with centre and axes the ``frame``'s, nearest the centre of ``sphere``
    (module docstring): a material point of the link that moves over the shape."""

    def __init__(self, frame: LinkFrame, shape: str, size: np.ndarray, sphere: Sphere):
        label = f"{frame.label} {shape} point nearest the sphere at {np.round(sphere.center, 6).tolist()}"
        super().__init__(frame, label)
        self.shape, self.size, self.sphere = shape, np.asarray(size, dtype=float), sphere

    def arm(self, ev: StateView) -> np.ndarray:
        """y − x₀ (3,) [m, world]: y of module docstring from the shape's centre x₀."""
        Q, x0 = self.frame.rotation(ev), self.frame.position(ev)
        p = Q.T @ (self.sphere.center - x0)
        if self.shape == "box":
            return Q @ box_point_nearest(self.size, p)
        return Q @ capsule_point_nearest(float(self.size[0]), float(self.size[1]), p)
