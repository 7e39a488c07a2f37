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
Its Jacobians are left to the solvers' differences of the joint rows (the frames are on rigid links).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ..errors import FlexbodyError
from ..rigid.anchors import FrameAnchor
from ..rigid.exponential_coordinates import left_jacobian_inverse, rotation_log
from .base import merge_pieces
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
        mu = left_jacobian_inverse(theta).T @ (self.K[3:] * theta)
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
        return ForcePiece(cols, Q[0])

    def potential(self, ev: StateView) -> float:
        _, _, dp, theta = self._deflection(ev)
        return 0.5 * float(dp @ (self.K[:3] * dp) + theta @ (self.K[3:] * theta))
