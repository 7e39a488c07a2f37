"""What touches in a contact: an anchor point, or a ball of radius r centred on it, against a rigid surface whose
value s(x) is a signed distance (Plane, Sphere, Cylinder: outward unit normal n = ∇s). One declaration of the
geometry that the compliant contact (a force element) and the unilateral contact (complementarity rows) share.

The gap is g = s(x) − r. On a link frame the ball's contact point c = x − r n moves with v_c = ẋ + r n × ω, so
that the ball rolls; its Jacobian is J_c = J + r [n]× J_ω (J, J_ω the anchor's translational and angular
Jacobians). For a point (r = 0), or a ball on an anchor without a frame (a node), J_c = J.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numba as nb
import numpy as np

from ..errors import FlexbodyError
from ..rigid.anchors import Anchor, FrameAnchor
from .base import finite_number, merge_pieces
from .body_surface import BodySurface
from .mesh_surface import TriangleMesh
from .surfaces import Box, ImplicitSurface, Plane, Sphere, Surface

if TYPE_CHECKING:
    from ..rigid.state_view import StateView

__all__ = ["ContactPoint", "CONTACT_HISTORIES", "contact_histories"]

CONTACT_HISTORIES = ("contact_gap", "contact_normal_force", "contact_friction_force", "contact_slip_speed")
"""The recorded contact histories, one column per contact (compliant ones first, then the unilateral ones): the gap
(c,) [m], the normal force (c,) [N], the friction force (c, 3) [N, world] and the slip speed (c,) [m/s]."""


@nb.njit(cache=True)
def add_rolling(J, J_w, n, r) -> None:
    """J (3, k) += r [n]× J_ω (J_ω (3, k), n (3,)): a rolling ball's contact-point Jacobian J_c = J + r [n]× J_ω
    (module docstring), in place; compiled, so that the compiled contact rows take it too."""
    for j in range(J.shape[1]):
        w0, w1, w2 = J_w[0, j], J_w[1, j], J_w[2, j]
        J[0, j] += r * (n[1] * w2 - n[2] * w1)
        J[1, j] += r * (n[2] * w0 - n[0] * w2)
        J[2, j] += r * (n[0] * w1 - n[1] * w0)


def contact_histories(gap, normal, friction, slip) -> dict[str, np.ndarray]:
    """The :data:`CONTACT_HISTORIES` of a state (or a step) from its four arrays, in that order."""
    return dict(zip(CONTACT_HISTORIES, (np.asarray(gap), np.asarray(normal), np.asarray(friction), np.asarray(slip))))


class ContactPoint:
    """An anchor point (or a ball of ``radius`` [m] centred on it) and the rigid surface it may touch; ``who`` names
    the contact in error messages. FlexbodyError for an anchor that is not one, a surface that is not a distance,
    an anchor fixed to the ground, or a negative radius."""

    def __init__(self, anchor: Anchor, surface: Surface, radius: float, who: str, implicit: bool = False):
        if not isinstance(anchor, Anchor):
            raise FlexbodyError(f"{who}: the point must be an anchor (tree.point or a flexible node), got {anchor!r}")
        distances = (Plane, Sphere, Box, TriangleMesh)  # a Cylinder is a Sphere
        allowed = (*distances, ImplicitSurface, BodySurface) if implicit else distances
        if not isinstance(surface, allowed):
            raise FlexbodyError(
                f"{who}: the surface must be a Plane, Sphere, Cylinder, Box or TriangleMesh (a signed distance)"
                + (" or an ImplicitSurface or a BodySurface" if implicit else "")
                + f", got {type(surface).__name__}"
                + ("" if implicit else "; an ImplicitSurface's value is not a distance, a BodySurface moves")
            )
        if isinstance(surface, BodySurface):
            _check_on_body(anchor, surface, radius, who)
        if isinstance(surface, ImplicitSurface) and surface.n_rows != 1:
            raise FlexbodyError(f"{who}: the ImplicitSurface must be a surface (one row), got {surface.n_rows} rows")
        if not anchor.trees and not getattr(anchor, "bodies", ()):
            raise FlexbodyError(f"{who}: {anchor.label} is fixed to the ground, so it cannot touch the fixed surface")
        self.anchor, self.surface = anchor, surface
        self.chooses = hasattr(anchor, "gap_and_normal")  # its gap and normal are its own (gap_and_normal)
        self.r = finite_number(radius, "radius [m]", who)
        self.rolls = self.r > 0.0 and isinstance(anchor, FrameAnchor)

    def gap(self, ev: StateView) -> float:
        """g [m] (negative: it penetrates) at ``ev``: :meth:`gap_at` of the anchor's position, or the anchor's own
        where it chooses its point against the surface (:meth:`gap_and_normal`)."""
        if self.chooses:
            return self.anchor.gap_and_normal(ev)[0] - self.r  # type: ignore[attr-defined]
        return self.gap_at(self.anchor.position(ev), ev)

    def gap_and_normal(self, ev: StateView, x: np.ndarray) -> tuple[float, np.ndarray]:
        """(g [m], n (3,)) at the centre x (3,) [world] of the anchor at ``ev``: the surface's (:meth:`gap_at`,
        :meth:`normal`), or the anchor's where it chooses its point against the surface (a box's contact polygon
        against a Box, :class:`~flexbody.constraints.box_manifold.BoxManifoldPoint`)."""
        if self.chooses:
            gap, n = self.anchor.gap_and_normal(ev)  # type: ignore[attr-defined]
            return gap - self.r, n
        if isinstance(self.surface, ImplicitSurface) and self.r > 0.0:  # both from the ball's one search a state
            return ev.memo(("ball on implicit", self), lambda: self._ball_on_implicit(x))
        return self.gap_at(x, ev), self.normal(x)

    def gap_at(self, x: np.ndarray, ev: StateView | None = None) -> float:
        """g = s(x) − r [m] for a distance s; for an ImplicitSurface its first-order distance ŝ = s/‖∇s‖ (exact on the
        surface, where a gap closes) at the point, or for a ball the least ŝ over the ball's surface
        (:meth:`_ball_on_implicit`: ŝ at the centre less r would close off the surface, short of the distance by
        about r²/2ρ on a surface of radius of curvature ρ); for a BodySurface at the state ``ev``."""
        if isinstance(self.surface, BodySurface):
            return self.surface.nearest(x, ev).s - self.r  # type: ignore[arg-type]  # a moving surface: at ev
        if isinstance(self.surface, ImplicitSurface):
            if self.r > 0.0:
                return self._ball_on_implicit(x)[0]
            return float(self.surface.first_order(x)[0][0])
        return float(self.surface.value(x)[0]) - self.r

    def normal(self, x: np.ndarray) -> np.ndarray:
        """The surface's outward unit normal (3,) at the centre x (3,) [world]: ∇s; for an ImplicitSurface ∇s/‖∇s‖ at
        the point, or for a ball the direction from its touching point to its centre (:meth:`_ball_on_implicit`: the
        surface's normal there where they touch). FlexbodyError where an ImplicitSurface's gradient vanishes."""
        if isinstance(self.surface, ImplicitSurface):
            if self.r > 0.0:
                return self._ball_on_implicit(x)[1]
            D = self.surface.gradient(x)[0]
            norm = float(np.linalg.norm(D))
            if not norm > 0.0:
                raise FlexbodyError(f"contact on an ImplicitSurface: its gradient vanishes at {x}: no normal there")
            return D / norm
        return self.surface.gradient(x)[0]

    def _ball_on_implicit(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        """(ŝ(y) [m], (x − y)/r (3,)) at the point y of the ball of radius r centred at x (3,) where the
        ImplicitSurface's first-order distance ŝ is least: Newton's method on the sphere from x − r n(x)
        (:func:`~flexbody.constraints.implicit_shape_points.ball_minima`)."""
        from .implicit_shape_points import ball_minima

        y, s, _ = ball_minima(self.surface, np.asarray(x, dtype=float)[None], self.r)  # type: ignore[arg-type]
        return float(s[0]), (x - y[0]) / self.r

    def contact_point(self, ev: StateView) -> tuple[np.ndarray, np.ndarray]:
        """(c (3,) [m], n (3,)): the point that touches (x − r n, the anchor itself for r = 0) and the surface's
        outward unit normal there, in world coordinates."""
        x = self.anchor.position(ev)
        if isinstance(self.surface, BodySurface):
            n = self.surface.nearest(x, ev).normal
        else:
            n = self.gap_and_normal(ev, x)[1]
        return x - self.r * n, n

    def kinematics(self, ev: StateView, velocity: bool = True):
        """(x (3,), v_c (3,), cols (k,), J (3, k), J_c (3, k)): the centre, the contact point's velocity (zero
        without ``velocity``) and the Jacobians of ẋ and of v_c = ẋ + r n × ω on the global columns ``cols``."""
        x = self.anchor.position(ev)
        cols, J = self.anchor.jacobian(ev)
        if not self.rolls:
            return x, (self.anchor.velocity(ev) if velocity else np.zeros(3)), cols, J, J
        n = self.gap_and_normal(ev, x)[1]
        cols_w, J_w = self.anchor.angular_jacobian(ev)  # type: ignore[attr-defined]  # a FrameAnchor (rolls)
        cols, both = merge_pieces([(cols, np.vstack([J, 0.0 * J])), (cols_w, np.vstack([0.0 * J_w, J_w]))])
        J, J_c = both[:3], np.array(both[:3], dtype=float)
        add_rolling(J_c, np.ascontiguousarray(both[3:], dtype=float), np.asarray(n, dtype=float), self.r)
        v_c = (J_c @ ev.v[cols]) if velocity else np.zeros(3)
        return x, v_c, cols, J, J_c


def _check_on_body(anchor: Anchor, surface: BodySurface, radius: float, who: str) -> None:
    """FlexbodyError for a point of the surface's own body (self-contact) or a ball that would roll on it."""
    if surface.body in getattr(anchor, "bodies", ()):
        raise FlexbodyError(
            f"{who}: {anchor.label} is on body {surface.body.name!r} itself: a body's contact with its own surface "
            "(self-contact) is not taken"
        )
    if isinstance(anchor, FrameAnchor) and radius > 0.0:
        raise FlexbodyError(
            f"{who}: a ball on a link frame would roll on the flexible surface of {surface.body.name!r}, which is not "
            "taken; use a point (tree.point) with the radius, or a ball on a flexible node"
        )
