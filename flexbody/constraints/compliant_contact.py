"""Compliant (penalty) contact of a point with a rigid surface: Hunt–Crossley normal force and regularised Coulomb
friction, as a force element every integrator and static solver takes.

For an anchor point x (a link point, a flexible node) and a surface whose value s(x) is a signed distance (Plane,
Sphere, Cylinder: outward unit normal n = ∇s), the penetration is δ = max(0, −s(x)) and its rate δ̇ = −n·ẋ; for a
ball of radius r centred at the anchor, δ = max(0, r − s(x)), and on a link frame (``tree.frame``) the ball's
contact point c = x − r n moves with v_c = ẋ + r n × ω, so that it rolls. The normal force (Hunt & Crossley 1975,
in the dissipation form Drake's compliant point contact uses) is

    f_n = k δ^p (1 + d δ̇),   clamped at 0 (the surface only pushes),

with stiffness k [N/m^p], exponent p (3/2: Hertz contact of a sphere, 1: a linear spring) and dissipation d [s/m].
For m ẍ = −f_n (while f_n > 0) the impact speed v_i and the rebound speed v_f = e v_i obey, for any k and p,

    d v_i (1 + e) = ln((1 + d v_i) / (1 − d e v_i))                                      (restitution)

(integrate v dv/(1 + d v) = −(k/m) δ^p dδ over approach and restitution), so e = 1 at d = 0 and e ≈ 1 − ⅔ d v_i
for small d v_i. Friction is Coulomb's, regularised by a slip velocity v_s so that it is smooth:

    f_t = −μ f_n v_t / √(‖v_t‖² + v_s²),   v_t = (I − n nᵀ) ẋ,

which sticks only approximately (a creep of order v_s under a tangential load), v_t taken at the contact point.
The force F = f_n n + f_t acts at the contact point: Q = J_cᵀ F (virtual work), J_c = J + r [n]× J_ω the Jacobian of
v_c, with ∂Q/∂q = J_cᵀ (∂F/∂x) J and ∂Q/∂v = J_cᵀ (∂F/∂v_c) J_c (J held fixed: exact for nodes and the ground; the
solvers difference the joint rows). The elastic energy k δ^{p+1}/(p + 1) is the
element's potential, so energy balances count it.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ..errors import FlexbodyError
from ..rigid.anchors import Anchor, CurvedAnchor
from ..rigid.exponential_coordinates import skew
from .base import add_square, finite_number, widened
from .contact_points import ContactPoint
from .force_elements import ForceElement, ForcePiece
from .nodes import Node
from .surfaces import Cylinder, Plane, Sphere, Surface

if TYPE_CHECKING:
    from ..rigid.state_view import StateView

__all__ = ["CompliantContact", "restitution_of"]


class CompliantContact(ForceElement):
    """A point pressed on a rigid surface by a Hunt–Crossley spring, with regularised Coulomb friction.

    Parameters
    ----------
    anchor : Anchor
        The point that touches: ``tree.point(link, offset)`` or a flexible node (``fb.nearest_node``).
    surface : Plane, Sphere, Cylinder or Box
        The rigid surface, its outside (s > 0) free; a Sphere's, Cylinder's or Box's inside is solid.
    stiffness : float
        k [N/m^p] (> 0).
    exponent : float
        p (≥ 1): 1.5 for Hertz contact of a sphere on a plane, 1 for a linear spring.
    dissipation : float
        d [s/m] (≥ 0) of f_n = k δ^p (1 + d δ̇); :func:`restitution_of` gives the coefficient of restitution.
    friction : float
        Coulomb coefficient μ (≥ 0).
    slip_velocity : float
        v_s [m/s] (> 0) of the regularisation; smaller sticks better and needs smaller steps.
    radius : float
        r [m] (≥ 0) of a ball centred at the anchor (0: the point itself). On a link frame the ball rolls.
    name : str, optional
    """

    kind = "compliant_contact"

    def __init__(
        self,
        anchor: Anchor,
        surface: Surface,
        *,
        stiffness: float,
        exponent: float = 1.5,
        dissipation: float = 0.0,
        friction: float = 0.0,
        slip_velocity: float = 1e-4,
        radius: float = 0.0,
        name: str | None = None,
    ):
        super().__init__(name)
        who = f"contact {self.name!r}"
        self.point = ContactPoint(anchor, surface, radius, who)
        self.anchor, self.surface, self.r = anchor, surface, self.point.r
        self.anchors = (anchor,)
        self.trees = tuple(anchor.trees)
        self.k = finite_number(stiffness, "stiffness [N/m^p]", who, positive=True)
        self.p = finite_number(exponent, "exponent", who)
        if self.p < 1.0:
            raise FlexbodyError(
                f"{who}: exponent must be at least 1 (1: a linear spring, 1.5: Hertz), got {exponent!r}"
            )
        self.d = finite_number(dissipation, "dissipation [s/m]", who)
        self.mu = finite_number(friction, "friction coefficient", who)
        self.v_s = finite_number(slip_velocity, "slip_velocity [m/s]", who, positive=True)

    # ------------------------------------------------------------------ law
    def _contact(self, x: np.ndarray, xdot: np.ndarray, gap: float, n: np.ndarray, jacobians: bool):
        """(F (3,), ∂F/∂x (3, 3), ∂F/∂ẋ (3, 3)) at the point x with velocity ẋ [world], its gap [m] and the surface's
        unit normal n (3,) there; zeros when apart."""
        zero = np.zeros((3, 3))
        delta = -gap
        if delta <= 0.0:
            return np.zeros(3), zero, zero
        rate = -float(n @ xdot)
        spring = self.k * delta**self.p
        f_n = spring * (1.0 + self.d * rate)
        if f_n <= 0.0:  # separating faster than 1/d: the surface does not pull
            return np.zeros(3), zero, zero
        v_t = xdot - (n @ xdot) * n
        root = math.sqrt(float(v_t @ v_t) + self.v_s**2)
        u = v_t / root
        F = f_n * n - self.mu * f_n * u
        if not jacobians:
            return F, zero, zero
        H = self.surface.hessian(x)[0]  # ∂n/∂x
        df_dx = -self.k * self.p * delta ** (self.p - 1.0) * (1.0 + self.d * rate) * n - spring * self.d * (H @ xdot)
        df_dv = -spring * self.d * n
        du_dvt = (np.eye(3) - np.outer(u, u)) / root
        dvt_dx = -(n @ xdot) * H - np.outer(n, H @ xdot)
        dvt_dv = np.eye(3) - np.outer(n, n)
        dF_dx = np.outer(n, df_dx) + f_n * H - self.mu * (np.outer(u, df_dx) + f_n * du_dvt @ dvt_dx)
        dF_dv = np.outer(n, df_dv) - self.mu * (np.outer(u, df_dv) + f_n * du_dvt @ dvt_dv)
        return F, dF_dx, dF_dv

    # ------------------------------------------------------------------ force element
    def evaluate(self, ev: StateView, *, velocity: bool = True, jacobians: bool = False) -> ForcePiece:
        x, v_c, cols, J, J_c = self.point.kinematics(ev, velocity)
        F, dF_dx, dF_dv = self._contact(x, v_c, *self.point.gap_and_normal(ev, x), jacobians)
        Q = J_c.T @ F
        if not jacobians:
            return ForcePiece(cols, Q)
        K = J_c.T @ dF_dx @ J
        anchor = self.anchor
        if self.exact_jacobians and isinstance(anchor, CurvedAnchor) and F.any():  # Q = J_cᵀF(x, v_c) on a link
            add_square(K, cols, anchor.position_hessian(ev, F))  # the turn of J with q
            if velocity:
                K += J_c.T @ dF_dv @ widened(cols, anchor.velocity_jacobian(ev))  # of ẋ = Jv
            if self.point.rolls:
                K += self._rolling_terms(ev, cols, x, J, J_c, F, dF_dv, velocity)
        return ForcePiece(cols, Q, K, J_c.T @ dF_dv @ J_c)

    def _rolling_terms(self, ev, cols, x, J, J_c, F, dF_dv, velocity: bool) -> np.ndarray:
        """What a rolling ball adds to ∂Q/∂q: Q = JᵀF + r J_ωᵀ(F × n), v_c = ẋ + r n × ω with n = n(x), ∂n/∂q = H_s J
        (H_s the surface's Hessian): the angular Hessian H_ω(r F × n), r J_ωᵀ[F]×H_s J, and J_cᵀ∂F/∂v_c (−r[ω]×H_s J
        + r[n]×∂ω/∂q)."""
        anchor, r = self.anchor, self.r
        n = self.point.gap_and_normal(ev, x)[1]
        J_w = widened(cols, anchor.angular_jacobian(ev))  # type: ignore[attr-defined]  # a frame (rolls)
        n_q = self.surface.hessian(x)[0] @ J  # ∂n/∂q
        out = np.zeros((cols.size, cols.size))
        add_square(out, cols, anchor.angular_hessian(ev, r * np.cross(F, n)))  # type: ignore[attr-defined]
        out += r * J_w.T @ skew(F) @ n_q
        if velocity:
            omega_q = widened(cols, anchor.angular_velocity_jacobian(ev))  # type: ignore[attr-defined]
            omega = anchor.angular_velocity(ev)  # type: ignore[attr-defined]
            out += J_c.T @ dF_dv @ (r * skew(n) @ omega_q - r * skew(omega) @ n_q)
        return out

    @property
    def exact_jacobians(self) -> bool:
        """Whether ∂Q/∂q and ∂Q/∂v are exact: a point or ball on a link, a reduced body or a node (a ball on a link
        frame rolls) against a plane, sphere or cylinder (whose normal's derivative is exact); :meth:`evaluate` then
        adds the point's Hessian, the change of its velocity with q and, for a rolling ball, :meth:`_rolling_terms`."""
        smooth = isinstance(self.surface, (Plane, Sphere, Cylinder))
        on_point = isinstance(self.anchor, (Node, CurvedAnchor))
        return smooth and not self.point.chooses and on_point

    def potential(self, ev: StateView) -> float:
        """k δ^{p+1}/(p + 1) [J], the elastic energy of the penetration."""
        delta = max(0.0, -self.point.gap(ev))
        return self.k * delta ** (self.p + 1.0) / (self.p + 1.0)

    def gap(self, ev: StateView) -> float:
        """s(x) − r [m]: the signed distance of the point (or ball) from the surface (negative: it penetrates)."""
        return self.point.gap(ev)

    def contact_point(self, ev: StateView) -> tuple[np.ndarray, np.ndarray]:
        """(c (3,) [m], n (3,)) of :meth:`ContactPoint.contact_point`."""
        return self.point.contact_point(ev)

    def report(self, ev: StateView) -> tuple[float, float, np.ndarray, float]:
        """(gap s − r [m], normal force f_n [N], friction force f_t (3,) [N, world], slip speed ‖v_t‖ [m/s] of the
        contact point) at ``ev`` (zero forces and slip when apart)."""
        x, xdot = self.point.kinematics(ev)[:2]
        gap, n = self.point.gap_and_normal(ev, x)
        F = self._contact(x, xdot, gap, n, False)[0]
        if not F.any():
            return gap, 0.0, np.zeros(3), 0.0
        f_n = float(n @ F)
        v_t = xdot - (n @ xdot) * n
        return gap, f_n, F - f_n * n, float(np.linalg.norm(v_t))


def restitution_of(dissipation: float, impact_speed: float) -> float:
    """e (0..1] with d v (1 + e) = ln((1 + d v)/(1 − d e v)) (module docstring): the coefficient of restitution of a
    Hunt–Crossley contact of dissipation d [s/m] struck at speed v [m/s], for any stiffness and exponent (for
    d v ≳ 35, e = 1/(d v) to round-off: the body is stopped, and leaves slower the harder it struck)."""
    from scipy.optimize import brentq

    dv = float(dissipation) * float(impact_speed)
    if dv == 0.0:
        return 1.0

    def mismatch(e):
        return dv * (1.0 + e) - math.log((1.0 + dv) / (1.0 - e * dv))

    upper = min(1.0, (1.0 - 1e-15) / dv)
    if mismatch(upper) > 0.0:  # d v ≳ 35: 1 − d e v = (1 + d v) e^{−d v (1 + e)} is below round-off, e = 1/(d v)
        return (1.0 - (1.0 + dv) * math.exp(-dv - 1.0)) / dv
    return float(brentq(mismatch, 1e-300, upper, xtol=1e-15, rtol=1e-15))
