"""A point of a link that moves over the link as the link moves: a shape's support point toward a surface (a disc's
rim point nearest a plane, a box's or capsule's point nearest a ball), as an anchor for
:class:`~flexbody.constraints.unilateral_contact.Contact`.

At each state the anchor is the link's material point x = x₀ + d, d its arm from the origin x₀ of a frame on the link.
Where it slides over the shape it slides across the contact normal (in a face, along an edge, around a rim), so the
contact's gap rate is n·v(x), the velocity of that material point: v = v₀ + ω × d, Jacobian J = J₀ − [d]× J_ω (J₀,
J_ω the frame's translational and angular Jacobians). The velocity-level contacts that use it need no bias.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..rigid.anchors import Anchor, LinkFrame
from ..rigid.exponential_coordinates import skew
from .base import merge_pieces

if TYPE_CHECKING:
    from ..rigid.state_view import StateView

__all__ = ["MovingMaterialPoint"]


class MovingMaterialPoint(Anchor):
    """The material point at the arm :meth:`arm` (3,) [m, world] from the origin of ``frame`` (a LinkFrame), which a
    subclass gives at each state (module docstring); ``label`` names it in messages."""

    def __init__(self, frame: LinkFrame, label: str):
        self.frame, self.trees, self.label = frame, frame.trees, label

    def arm(self, ev: StateView) -> np.ndarray:
        """d (3,) [m, world]: the point's offset from the frame's origin at the state ``ev``."""
        raise NotImplementedError

    def position(self, ev: StateView) -> np.ndarray:
        """x = x₀ + d (3,) [m, world]."""
        return self.frame.position(ev) + self.arm(ev)

    def velocity(self, ev: StateView) -> np.ndarray:
        """The velocity (3,) [m/s] of the link's material point at x."""
        cols, J = self.jacobian(ev)
        return J @ ev.v[cols]

    def jacobian(self, ev: StateView) -> tuple[np.ndarray, np.ndarray]:
        """(cols, J₀ − [d]× J_ω): the material point's Jacobian at x."""
        arm = self.arm(ev)
        cols, J = self.frame.jacobian(ev)
        cols_w, J_w = self.frame.angular_jacobian(ev)
        return merge_pieces([(np.asarray(cols), J), (np.asarray(cols_w), -skew(arm) @ J_w)])

    def bias(self, ev: StateView) -> np.ndarray:
        """Not needed by the velocity-level contacts that use the anchor."""
        raise NotImplementedError(
            f"{type(self).__name__} serves unilateral contacts (velocity level), which need no bias"
        )
