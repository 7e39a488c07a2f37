"""Bushing: a six-degree-of-freedom spring-damper between two frames.

Frames a and b (rigid link frames or the ground) with rotations R_a, R_b and origins x_a, x_b; d = x_b − x_a.
In the initial state the bushing records the relative position p₀ = R_aᵀ d and rotation R₀ = R_aᵀ R_b.
In the axes of frame a:

    Δp = R_aᵀ d − p₀,   Δṗ = R_aᵀ (ḋ − ω_a × d),   θ = log(R_aᵀ R_b R₀ᵀ),   ω_rel = R_aᵀ (ω_b − ω_a)
    U = ½ Δpᵀ K_t Δp + ½ θᵀ K_r θ
    f = K_t Δp + C_t Δṗ                       (force in a's axes)
    μ = J_l(θ)⁻ᵀ K_r θ + C_r ω_rel             (moment in a's axes; J_l the left Jacobian of SO(3))

The force F = R_a f acts on a at x_a and −F on b at x_b; the moment R_a μ acts on a and −R_a μ on b; a also
carries d × F (the lever of the pair). Q = J_aᵀ F − J_bᵀ F + J_ω,aᵀ (d × F + R_a μ) − J_ω,bᵀ R_a μ
(virtual work). With C = 0 this is Q = −∂U/∂q: the element is conservative (δθ = J_l⁻¹ R_aᵀ(δφ_b − δφ_a)
for world rotation increments δφ). K_t, C_t, K_r, C_r are diagonal here (stiffness and damping per axis of a).

Its Jacobians are exact (#36 item 1). With D = J_b − J_a, D_ω = J_ω,b − J_ω,a, a's axes turning by
∂(R_aᵀx)/∂q = R_aᵀ(∂x/∂q + [x]× J_ω,a) and ∂θ/∂q = J_l⁻¹R_aᵀD_ω:

    ∂Δp/∂q = R_aᵀ(D + [d]×J_ω,a),   ∂Δṗ/∂q = R_aᵀ(N_b − N_a − [ω_a]×D + [d]×∂ω_a/∂q + [Δṗ_w]×J_ω,a),
    ∂(J_l⁻ᵀy)/∂θ = −½[y]× + c((θ·y)I + θyᵀ − 2yθᵀ) + c′(‖θ‖) (θ × (θ × y)) θᵀ/‖θ‖   (y = K_r θ fixed),
    ∂F/∂q = −[F]×J_ω,a + R_a ∂f/∂q,   ∂(d × F)/∂q = −[F]×D + [d]×∂F/∂q,

(N = ∂ẋ/∂q of an origin, Δṗ_w = ḋ − ω_a × d, c of :func:`~flexbody.rigid.exponential_coordinates.
jacobian_inverse_coefficient`), and the turn of the Jacobians at fixed loads: the point Hessians H_a(F) − H_b(F) and
the angular ones H_ω,a(d × F + M) − H_ω,b(M) (:mod:`flexbody.rigid.point_hessian`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ..errors import FlexbodyError
from ..rigid.anchors import FrameAnchor, LinkFrame
from ..rigid.exponential_coordinates import (
    jacobian_inverse_coefficient,
    jacobian_inverse_coefficient_rate,
    left_jacobian_inverse,
    rotation_log,
    skew,
)
from .base import add_square, merge_pieces, widened
from .force_elements import ForceElement, ForcePiece

if TYPE_CHECKING:
    from ..rigid.state_view import StateView

__all__ = ["Bushing"]


def _six(value, what: str, who: str) -> np.ndarray:
    x = np.asarray(value, dtype=float)
    if x.shape == ():
        x = np.full(6, float(x))
    if x.shape != (6,) or not np.all(np.isfinite(x)) or np.any(x < 0):
        raise FlexbodyError(
            f"{who}: {what} must be 6 non-negative finite numbers (x, y, z, rx, ry, rz in the "
            f"axes of frame a), got {value!r}"
        )
    return x


class Bushing(ForceElement):
    """Six-dof spring-damper between frame ``a`` and frame ``b`` about their initial relative pose.

    Parameters
    ----------
    a, b : FrameAnchor
        ``tree.frame(link, offset, rotation)`` or ``fb.Ground(origin, rotation)``.
    stiffness : array_like (6,) or float
        Diagonal (k_x, k_y, k_z [N/m], k_rx, k_ry, k_rz [N·m/rad]) in the axes of frame a.
    damping : array_like (6,) or float
        Diagonal (c_x, c_y, c_z [N·s/m], c_rx, c_ry, c_rz [N·m·s/rad]).
    name : str, optional
    """

    kind = "bushing"

    def __init__(
        self, a: FrameAnchor, b: FrameAnchor, stiffness: ArrayLike, damping: ArrayLike = 0.0, *, name: str | None = None
    ):
        super().__init__(name)
        who = f"bushing {self.name!r}"
        for label, anchor in (("a", a), ("b", b)):
            if not isinstance(anchor, FrameAnchor):
                raise FlexbodyError(f"{who}: end {label} must be a frame (tree.frame or Ground), got {anchor!r}")
        if a is b:
            raise FlexbodyError(f"{who}: both ends are the same frame {a.label!r}")
        self.a, self.b = a, b
        self.anchors = (a, b)
        self.trees = tuple({t: None for x in (a, b) for t in x.trees})
        self.K = _six(stiffness, "stiffness", who)
        self.C = _six(damping, "damping", who)
        if not np.any(self.K) and not np.any(self.C):
            raise FlexbodyError(f"{who}: stiffness and damping are all zero")
        self.p0 = self.R0 = None

    def prepare(self, ev: StateView) -> None:
        R_a = self.a.rotation(ev)
        self.p0 = R_a.T @ (self.b.position(ev) - self.a.position(ev))
        self.R0 = R_a.T @ self.b.rotation(ev)

    def _deflection(self, ev):
        R_a = self.a.rotation(ev)
        d = self.b.position(ev) - self.a.position(ev)
        theta = rotation_log(R_a.T @ self.b.rotation(ev) @ self.R0.T)
        return R_a, d, R_a.T @ d - self.p0, theta

    def evaluate(self, ev: StateView, *, velocity: bool = True, jacobians: bool = False) -> ForcePiece:
        R_a, d, dp, theta = self._deflection(ev)
        f = self.K[:3] * dp
        J_inv = left_jacobian_inverse(theta)
        mu = J_inv.T @ (self.K[3:] * theta)
        if velocity:
            w_a = self.a.angular_velocity(ev)
            d_dot = self.b.velocity(ev) - self.a.velocity(ev)
            f = f + self.C[:3] * (R_a.T @ (d_dot - np.cross(w_a, d)))
            mu = mu + self.C[3:] * (R_a.T @ (self.b.angular_velocity(ev) - w_a))
        F, M = R_a @ f, R_a @ mu
        parts = [
            (self.a.jacobian(ev), F),
            (self.b.jacobian(ev), -F),
            (self.a.angular_jacobian(ev), np.cross(d, F) + M),
            (self.b.angular_jacobian(ev), -M),
        ]
        cols, Q = merge_pieces([(c, (load @ J)[None, :]) for (c, J), load in parts])
        if not jacobians:
            return ForcePiece(cols, Q[0])
        return ForcePiece(cols, Q[0], *self._jacobians(ev, cols, R_a, d, theta, J_inv, F, M, velocity))

    @property
    def exact_jacobians(self) -> bool:
        """True: ∂Q/∂q and ∂Q/∂v are exact (module docstring; the frames are on links or the ground)."""
        return True

    def _jacobians(self, ev, cols, R_a, d, theta, J_inv, F, M, velocity: bool) -> tuple[np.ndarray, np.ndarray]:
        """(∂Q/∂q, ∂Q/∂v) (k, k) on ``cols`` (module docstring)."""
        a, b, k = self.a, self.b, cols.size

        def rate(anchor, method: str) -> np.ndarray:  # ∂ẋ/∂q or ∂ω/∂q of an end (zero on the ground)
            return widened(cols, getattr(anchor, method)(ev)) if hasattr(anchor, method) else np.zeros((3, k))

        D = widened(cols, b.jacobian(ev)) - widened(cols, a.jacobian(ev))
        Jw_a, Jw_b = widened(cols, a.angular_jacobian(ev)), widened(cols, b.angular_jacobian(ev))
        Rt, K_t, C_t, C_r = R_a.T, self.K[:3, None], self.C[:3, None], self.C[3:, None]
        theta_q = J_inv @ Rt @ (Jw_b - Jw_a)
        f_q = K_t * (Rt @ (D + skew(d) @ Jw_a))
        mu_q = (J_inv.T * self.K[3:] + _transposed_inverse_rate(theta, self.K[3:] * theta)) @ theta_q
        f_v, mu_v = np.zeros((3, k)), np.zeros((3, k))
        if velocity:
            w_a, w_b = a.angular_velocity(ev), b.angular_velocity(ev)
            w_a_q = rate(a, "angular_velocity_jacobian")
            slide = b.velocity(ev) - a.velocity(ev) - np.cross(w_a, d)
            slide_q = rate(b, "velocity_jacobian") - rate(a, "velocity_jacobian") - skew(w_a) @ D + skew(d) @ w_a_q
            f_q += C_t * (Rt @ (slide_q + skew(slide) @ Jw_a))
            f_v = C_t * (Rt @ (D + skew(d) @ Jw_a))
            spin_q = rate(b, "angular_velocity_jacobian") - w_a_q + skew(w_b - w_a) @ Jw_a
            mu_q += C_r * (Rt @ spin_q)
            mu_v = C_r * (Rt @ (Jw_b - Jw_a))
        F_q, M_q = -skew(F) @ Jw_a + R_a @ f_q, -skew(M) @ Jw_a + R_a @ mu_q
        F_v, M_v = R_a @ f_v, R_a @ mu_v
        K = -D.T @ F_q + Jw_a.T @ (-skew(F) @ D + skew(d) @ F_q + M_q) - Jw_b.T @ M_q
        C = -D.T @ F_v + Jw_a.T @ (skew(d) @ F_v + M_v) - Jw_b.T @ M_v
        for end, force, moment in ((a, F, np.cross(d, F) + M), (b, -F, -M)):  # the turn of the Jacobians
            if isinstance(end, LinkFrame):
                add_square(K, cols, end.position_hessian(ev, force))
                add_square(K, cols, end.angular_hessian(ev, moment))
        return K, C

    def potential(self, ev: StateView) -> float:
        _, _, dp, theta = self._deflection(ev)
        return 0.5 * float(dp @ (self.K[:3] * dp) + theta @ (self.K[3:] * theta))


def _transposed_inverse_rate(theta: np.ndarray, y: np.ndarray) -> np.ndarray:
    """∂(J_l(θ)⁻ᵀy)/∂θ (3, 3) at fixed y (module docstring)."""
    t = float(np.linalg.norm(theta))
    c = jacobian_inverse_coefficient(t)
    out = -0.5 * skew(y) + c * ((theta @ y) * np.eye(3) + np.outer(theta, y) - 2.0 * np.outer(y, theta))
    if t > 0.0:
        out += np.outer(np.cross(theta, np.cross(theta, y)), theta) * (jacobian_inverse_coefficient_rate(t) / t)
    return out
