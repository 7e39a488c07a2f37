"""A point of a disc's rim that a plane meets first: the support point of a cylinder's end (or a wheel) toward a
plane, as an anchor for :class:`~flexbody.constraints.unilateral_contact.Contact` (:func:`~flexbody.constraints.
contact_shapes.cylinder_contacts`).

The disc of centre c, unit axis a (world) and radius r meets the plane of outward normal n first at x = c − r u with
u = (n − (n·a) a)/‖n − (n·a) a‖, the direction in the disc's plane toward the plane: the lowest rim point, whose gap
is n·(x − x₀) = n·(c − x₀) − r ‖n − (n·a) a‖ (exact: the distance of the disc to the plane). A rim point at the angle
φ from it about a is x_φ = c − r u_φ with u_φ = cos φ u + sin φ (a × u). The anchor is the material point of the
link there (:class:`~flexbody.constraints.material_point.MovingMaterialPoint`), so its velocity is v_c + ω × (x − c)
and its Jacobian J_c + r [u_φ]× J_ω (as a ball's contact point, with u_φ for n:
:mod:`flexbody.constraints.contact_points`). Where the axis is along n (the disc flat on the plane)
u is any direction in the disc: the first axis of :func:`~flexbody.constraints.unilateral_contact.tangent_basis` of a.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..rigid.anchors import LinkFrame
from .material_point import MovingMaterialPoint
from .unilateral_contact import tangent_basis

if TYPE_CHECKING:
    from ..rigid.state_view import StateView

__all__ = ["RimPoint"]


class RimPoint(MovingMaterialPoint):
    """The point of the rim of a disc on a link frame at the angle ``angle`` [rad] from the rim's point nearest a plane
    of unit ``normal`` (3,) [world] (module docstring). The disc: centre the ``frame``'s origin, ``axis`` (3,) in the
    frame's axes (unit), ``radius`` [m]."""

    def __init__(self, frame: LinkFrame, axis: np.ndarray, radius: float, normal: np.ndarray, angle: float = 0.0):
        super().__init__(frame, f"{frame.label} rim at {np.degrees(angle):.0f}°")
        self.axis, self.radius, self.normal, self.angle = axis, float(radius), normal, float(angle)

    def _direction(self, ev: StateView) -> np.ndarray:
        """u_φ (3,) [world] of module docstring."""
        a = self.frame.rotation(ev) @ self.axis
        across = self.normal - (self.normal @ a) * a
        size = float(np.linalg.norm(across))
        u = across / size if size > 1e-12 else tangent_basis(a)[:, 1]
        return np.cos(self.angle) * u + np.sin(self.angle) * np.cross(a, u)

    def arm(self, ev: StateView) -> np.ndarray:
        """−r u_φ (3,) [m, world]: x = c − r u_φ, whose Jacobian is J_c + r [u_φ]× J_ω."""
        return -self.radius * self._direction(ev)
