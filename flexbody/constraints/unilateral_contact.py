"""Unilateral contact of a point (or a ball) with a rigid surface: a gap that may open but not close below zero,
a normal impulse that only pushes, and Coulomb friction — the rows the nonsmooth stepper
(:mod:`flexbody.solvers.moreau_jean`) solves as complementarity conditions at every step.

For the contact point c of :class:`~flexbody.constraints.contact_points.ContactPoint` (gap g = s(x) − r, outward
normal n) the contact frame is B = [n, t₁, t₂] (t₁, t₂ an orthonormal tangent basis fixed by n alone), and the
local velocity u = Bᵀ v_c = G v with G = Bᵀ J_c (3, k): u_n = n·v_c separates, (u_t₁, u_t₂) slides. The law, with
the impulse p = (p_n, p_t) that acts as Gᵀp on the generalized momenta (Moreau 1988; Jean 1999):

    0 ≤ p_n ⊥ u_n⁺ − b ≥ 0                    (Signorini at velocity level, b the bound of the step)
    ‖p_t‖ ≤ μ p_n,   p_t = −μ p_n u_t⁺/‖u_t⁺‖ when u_t⁺ ≠ 0      (Coulomb: stick inside the cone, slip on it)

with Newton's impact law b = −e u_n⁻ for an impact in the step (e the coefficient of restitution, u_n⁻ the
approach speed) and b = −g/h before it (the gap may close within the step, no further).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, NamedTuple

import numba as nb
import numpy as np

from ..errors import FlexbodyError
from .base import Named, finite_number, merge_pieces
from .body_surface import BodySurface
from .contact_points import ContactPoint
from .surfaces import ImplicitSurface, Plane

if TYPE_CHECKING:
    from ..rigid.anchors import Anchor
    from ..rigid.state_view import StateView
    from .surfaces import Surface

__all__ = ["Contact", "ContactFrame", "tangent_basis", "tangent_bases", "plane_rows"]


class ContactFrame(NamedTuple):
    """A contact at one state: ``gap`` g [m], the global columns ``cols`` (k,), G (3, k) mapping generalized
    velocities to the local velocity (u_n, u_t₁, u_t₂) [m/s], the frame ``basis`` (3, 3) with columns n, t₁, t₂
    [world] and the ``point`` (3,) [m] that touches."""

    gap: float
    cols: np.ndarray
    G: np.ndarray
    basis: np.ndarray
    point: np.ndarray


@nb.njit(cache=True)
def tangent_bases(normals, bases) -> None:
    """B (k, 3, 3) = [n, t₁, t₂] of unit normals n (k, 3) into ``bases``: right-handed and orthonormal, with t₁ = n ×
    e_j/‖n × e_j‖ for e_j the axis of n's smallest component (a choice fixed by n, so a contact's frame does not jump
    while n stays put)."""
    for m in range(normals.shape[0]):
        x, y, z = normals[m, 0], normals[m, 1], normals[m, 2]
        if abs(x) <= abs(y) and abs(x) <= abs(z):
            a, b, c = 0.0, z, -y
        elif abs(y) <= abs(z):
            a, b, c = -z, 0.0, x
        else:
            a, b, c = y, -x, 0.0
        norm = math.sqrt(a * a + b * b + c * c)
        a, b, c = a / norm, b / norm, c / norm
        bases[m, 0, 0], bases[m, 0, 1], bases[m, 0, 2] = x, a, y * c - z * b
        bases[m, 1, 0], bases[m, 1, 1], bases[m, 1, 2] = y, b, z * a - x * c
        bases[m, 2, 0], bases[m, 2, 1], bases[m, 2, 2] = z, c, x * b - y * a


def tangent_basis(n: np.ndarray) -> np.ndarray:
    """B (3, 3) = [n, t₁, t₂] of one unit normal n (3,) (:func:`tangent_bases`)."""
    basis = np.empty((1, 3, 3))
    tangent_bases(np.asarray(n, dtype=float).reshape(1, 3), basis)
    return basis[0]


@nb.njit(cache=True)
def plane_rows(normals, origins, radii, bases, X, J_c, gap, G) -> None:
    """g (k,) and G (k, 3, m) of k contacts with planes: g = n·(x − x₀) − r and G = Bᵀ J_c, for normals n (k, 3),
    points x₀ (k, 3) on the planes, radii r (k,), frames B (k, 3, 3), centres x (k, 3) and Jacobians J_c (k, 3, m) of
    the contact points' velocities; written into ``gap`` and ``G``."""
    for k in range(normals.shape[0]):
        gap[k] = (
            normals[k, 0] * (X[k, 0] - origins[k, 0])
            + normals[k, 1] * (X[k, 1] - origins[k, 1])
            + normals[k, 2] * (X[k, 2] - origins[k, 2])
            - radii[k]
        )
        for a in range(3):
            for j in range(J_c.shape[2]):
                G[k, a, j] = (
                    bases[k, 0, a] * J_c[k, 0, j] + bases[k, 1, a] * J_c[k, 1, j] + bases[k, 2, a] * J_c[k, 2, j]
                )


class Contact(Named):
    """A point (or a ball) that may touch a rigid surface, lift off and slide on it with Coulomb friction.

    Simulated by the nonsmooth stepper :class:`flexbody.MoreauJean` (velocity-level complementarity with exact
    sticking and impacts); the smooth integrators take :class:`flexbody.CompliantContact` instead.

    Parameters
    ----------
    anchor : Anchor
        The point that touches: ``tree.point(link, offset)``, ``tree.frame(link)`` (a ball on it rolls) or a
        flexible node (``fb.nearest_node``).
    surface : Plane, Sphere, Cylinder, Box, TriangleMesh, ImplicitSurface or BodySurface
        The surface, its outside (s > 0) free; a Sphere's, Cylinder's, Box's or mesh's inside is solid. For an
        ImplicitSurface the gap is s/‖∇s‖ (its first-order distance, exact where the contact closes) and the normal
        ∇s/‖∇s‖; a ball's radius is then subtracted from that estimate. A BodySurface is another flexible body's
        boundary, deforming with it (:mod:`flexbody.constraints.body_surface`).
    friction : float
        Coulomb coefficient μ (≥ 0), static and kinetic alike.
    restitution : float
        Newton's coefficient e ∈ [0, 1]: an impact at approach speed v leaves at e v (0: it stays, 1: elastic).
    radius : float
        r [m] (≥ 0) of a ball centred at the anchor (0: the point itself).
    name : str, optional
    """

    kind = "contact"

    def __init__(
        self,
        anchor: Anchor,
        surface: Surface,
        *,
        friction: float = 0.0,
        restitution: float = 0.0,
        radius: float = 0.0,
        name: str | None = None,
    ):
        self.name = name
        who = f"contact {name!r}" if name is not None else "Contact"
        self.point = ContactPoint(anchor, surface, radius, who, implicit=True)
        self.anchor, self.surface, self.r = anchor, surface, self.point.r
        self.anchors = (anchor,)
        self.trees = tuple(anchor.trees)
        self.bodies = tuple(getattr(anchor, "bodies", ())) + (
            (surface.body,) if isinstance(surface, BodySurface) else ()
        )
        self.plane_basis = tangent_basis(surface.normal) if type(surface) is Plane else None
        self.mu = finite_number(friction, "friction coefficient", who)
        self.e = finite_number(restitution, "restitution", who)
        if self.e > 1.0:
            raise FlexbodyError(
                f"{who}: restitution must be in [0, 1] (0: the impact stops the approach, 1: elastic), "
                f"got {restitution!r}"
            )

    def frame(self, ev: StateView) -> ContactFrame:
        """The contact at ``ev`` (:class:`ContactFrame`)."""
        x, _, cols, _, J_c = self.point.kinematics(ev, velocity=False)
        surface = self.surface
        if isinstance(surface, BodySurface):  # its nearest point moves: G = Bᵀ [J_c, −w_k I] (body_surface module)
            near = surface.nearest(x, ev)
            basis = tangent_basis(near.normal)
            moving = (near.columns, -np.kron(near.weights, np.eye(3)))
            cols, J = merge_pieces([(np.asarray(cols), np.asarray(J_c, dtype=float)), moving])
            return ContactFrame(near.s - self.r, cols, basis.T @ J, basis, x - self.r * near.normal)
        if self.plane_basis is not None and isinstance(surface, Plane):  # a plane: its normal and frame are constant
            basis = self.plane_basis
            n = basis[:, 0]
            gaps, G = np.empty(1), np.empty((1, 3, J_c.shape[1]))
            J = np.ascontiguousarray(J_c, dtype=float)[None]
            plane_rows(n[None], surface.point[None], np.array([self.r]), basis[None], x[None], J, gaps, G)
            return ContactFrame(float(gaps[0]), np.asarray(cols), G[0], basis, x - self.r * n)
        gap, n = self.point.gap_and_normal(ev, x)
        basis = tangent_basis(n)
        return ContactFrame(gap, np.asarray(cols), basis.T @ J_c, basis, x - self.r * n)

    def acceleration_bias(self, ev: StateView) -> tuple[ContactFrame, np.ndarray]:
        """(the :class:`ContactFrame` at ``ev``, γ (3,)): the contact's local acceleration G a + γ for generalized
        accelerations a (n,), what a controller holds to keep a contact closed (normal row) and sticking (tangent
        rows). With x the centre, J̇v its :meth:`~flexbody.rigid.anchors.Anchor.bias`, n = ∇s(x) and H = ∇²s(x):

            γ_n = nᵀ J̇v + ẋᵀ H ẋ            (g̈ = nᵀ ẍ + ẋᵀ H ẋ: the gap's second derivative)
            γ_t = t_iᵀ (J̇v + r (H ẋ) × ω + r n × J̇_ω v)   (v̇_c of v_c = ẋ + r n × ω, a rolling ball's contact
                                                           point; γ_t = t_iᵀ J̇v for a point or a ball that
                                                           does not roll)

        on the fixed frame [n, t₁, t₂] (for a distance s; an ImplicitSurface's first-order distance ŝ, exact where
        the gap closes, for a point on it). FlexbodyError for the contacts whose point is chosen anew at each
        state (a shape's slots against a box, a mesh or an implicit surface), a ball on an ImplicitSurface and a
        flexible body's surface, which move the point they touch."""
        who = f"contact {self.name!r}" if self.name is not None else "Contact"
        if self.point.chooses or isinstance(self.surface, BodySurface):
            raise FlexbodyError(
                f"{who}: its touching point is chosen anew at each state (a shape's slot or a flexible body's "
                "surface), so it has no acceleration row; hold point or ball contacts (tree.point, a flexible node)"
            )
        if isinstance(self.surface, ImplicitSurface) and self.r > 0.0:
            raise FlexbodyError(f"{who}: a ball on an ImplicitSurface has no acceleration row; use a point (radius 0)")
        frame = self.frame(ev)
        x, xdot = self.anchor.position(ev), self.anchor.velocity(ev)
        if isinstance(self.surface, ImplicitSurface):
            H = self.surface.first_order(x[None])[2][0]
        else:
            H = self.surface.hessian(x)[0]
        n = frame.basis[:, 0]
        bias = np.asarray(self.anchor.bias(ev), dtype=float)
        gamma = frame.basis.T @ bias
        gamma[0] += float(xdot @ H @ xdot)
        if self.point.rolls:  # a ball on a link frame: v_c = ẋ + r n × ω
            omega = self.anchor.angular_velocity(ev)  # type: ignore[attr-defined]  # a FrameAnchor (rolls)
            turning = np.cross(H @ xdot, omega) + np.cross(n, self.anchor.angular_bias(ev))  # type: ignore[attr-defined]
            gamma[1:] += self.r * (frame.basis[:, 1:].T @ turning)
        return frame, gamma

    def gap(self, ev: StateView) -> float:
        """g = s(x) − r [m] (negative: it penetrates)."""
        return self.point.gap(ev)

    def contact_point(self, ev: StateView) -> tuple[np.ndarray, np.ndarray]:
        """(c (3,) [m], n (3,)) of :meth:`ContactPoint.contact_point`."""
        return self.point.contact_point(ev)
