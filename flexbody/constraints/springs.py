"""Springs and dampers: point to point between any two anchors, and on a joint coordinate.

Point to point (anchors a, b: rigid link points, flexible nodes, the ground), with d = x_b − x_a,
length ℓ = ‖d‖, unit vector e = d/ℓ, extension s = ℓ − ℓ₀ and its rate ṡ = e·(ẋ_b − ẋ_a):

    tension  T(s, ṡ) = k s + c ṡ   (or a user law),    F_b = −T e,  F_a = T e,
    Q = J_aᵀ F_a + J_bᵀ F_b = −T Dᵀe,   D = J_b − J_a                              (virtual work)
    ∂Q/∂q = −Dᵀ [T_s e eᵀ + (T/ℓ)(I − e eᵀ) + T_ṡ e ((I − e eᵀ)(ẋ_b − ẋ_a)/ℓ)ᵀ] D,   ∂Q/∂v = −T_ṡ Dᵀ e eᵀ D

with D held fixed, plus, for ends on links, the turn of their Jacobians: H_a(F_a) + H_b(F_b) (the point Hessians
∂(Jᵀw)/∂q, :mod:`flexbody.rigid.point_hessian`) and −T_ṡ Dᵀe eᵀ(N_b − N_a), N = ∂(J v)/∂q the rate of an end's
velocity with q — so ∂Q/∂q is exact for every end (nodes and the ground have constant Jacobians).
Stored energy: ½ k s², or ∫₀ˢ T(σ, 0) dσ for a user law
(8-point Gauss–Legendre).

Joint spring-damper on coordinate q_j of a link's joint: Q_j = −k (q_j − q_rest) − c v_j, energy ½ k (q_j − q_rest)².
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from ..errors import FlexbodyError, StateError
from ..rigid.anchors import Anchor, CurvedAnchor, Ground
from ..rigid.tree import Link
from .base import add_square, finite_number, merge_pieces, widened
from .force_elements import ForceElement, ForcePiece
from .nodes import Node

if TYPE_CHECKING:
    from ..rigid.state_view import StateView

__all__ = ["SpringDamper", "JointSpringDamper"]

_GAUSS_X, _GAUSS_W = np.polynomial.legendre.leggauss(8)


class SpringDamper(ForceElement):
    """A translational spring-damper between two points (a tension–compression spring along their line).

    Parameters
    ----------
    a, b : Anchor
        End points: ``tree.point(link, offset)``, ``tree.frame(...)``, ``fb.Ground(origin)`` or a flexible
        node (``fb.constraints.Node(body, index)``).
    stiffness : float
        k [N/m] (≥ 0) of the linear law T = k s + c ṡ.
    damping : float
        c [N·s/m] (≥ 0).
    rest_length : float, optional
        ℓ₀ [m] (≥ 0); default the distance of the points in the initial state.
    tension : callable (s, s_dot) -> float, optional
        A nonlinear law replacing k s + c ṡ: the tension T [N] (positive pulls the points together) from
        the extension s = ℓ − ℓ₀ [m] and its rate ṡ [m/s].
    tension_derivatives : callable (s, s_dot) -> (dT/ds, dT/ds_dot), optional
        Derivatives of ``tension`` for implicit solvers; default central differences of ``tension`` (step
        1e-7 relative to max(1, abs(s)) m and max(1, abs(ṡ)) m/s).
    name : str, optional

    The points must not coincide (the line of action would be undefined): a spring whose points coincide
    in the initial state is refused when the system is assembled, and one whose length reaches 0 during a
    run stops it with a :class:`~flexbody.errors.StateError`.
    """

    kind = "spring"

    def __init__(
        self,
        a: Anchor,
        b: Anchor,
        stiffness: float = 0.0,
        damping: float = 0.0,
        rest_length: float | None = None,
        *,
        tension: Callable | None = None,
        tension_derivatives: Callable | None = None,
        name: str | None = None,
    ):
        super().__init__(name)
        who = f"spring {self.name!r}"
        for label, anchor in (("a", a), ("b", b)):
            if not isinstance(anchor, Anchor):
                raise FlexbodyError(
                    f"{who}: end {label} must be an anchor (tree.point, tree.frame, Ground or "
                    f"a flexible Node), got {anchor!r}"
                )
        if a is b:
            raise FlexbodyError(f"{who}: both ends are the same anchor {a.label!r}")
        self.a, self.b = a, b
        self.anchors = (a, b)
        self.trees = tuple({t: None for x in (a, b) for t in x.trees})
        self.k = finite_number(stiffness, "stiffness [N/m]", who)
        self.c = finite_number(damping, "damping [N·s/m]", who)
        self.rest_length = None if rest_length is None else finite_number(rest_length, "rest_length [m]", who)
        if tension is not None and not callable(tension):
            raise FlexbodyError(f"{who}: tension must be callable (s, s_dot) -> T, got {tension!r}")
        if tension_derivatives is not None and tension is None:
            raise FlexbodyError(f"{who}: tension_derivatives needs a tension law")
        if tension is None and self.k == 0.0 and self.c == 0.0:
            raise FlexbodyError(f"{who}: give a stiffness, a damping or a tension law (all are zero)")
        self._tension, self._derivatives = tension, tension_derivatives

    # ------------------------------------------------------------------ law
    def tension(self, s: float, s_dot: float) -> float:
        """T(s, ṡ) [N]: positive pulls the end points together."""
        if self._tension is None:
            return self.k * s + self.c * s_dot
        T = self._tension(s, s_dot)
        try:
            T = float(T)
        except (TypeError, ValueError):
            raise FlexbodyError(f"spring {self.name!r}: tension law returned {T!r}, not a number") from None
        if not math.isfinite(T):
            raise StateError(f"spring {self.name!r}: tension law gave {T} at extension {s:.6g} m, rate {s_dot:.6g} m/s")
        return T

    def tension_derivatives(self, s: float, s_dot: float) -> tuple[float, float]:
        """(∂T/∂s [N/m], ∂T/∂ṡ [N·s/m])."""
        if self._tension is None:
            return self.k, self.c
        if self._derivatives is not None:
            d_s, d_rate = self._derivatives(s, s_dot)
            return float(d_s), float(d_rate)
        hs, hr = 1e-7 * max(1.0, abs(s)), 1e-7 * max(1.0, abs(s_dot))
        return (
            (self.tension(s + hs, s_dot) - self.tension(s - hs, s_dot)) / (2 * hs),
            (self.tension(s, s_dot + hr) - self.tension(s, s_dot - hr)) / (2 * hr),
        )

    # ------------------------------------------------------------------ state
    def prepare(self, ev: StateView) -> None:
        length = float(np.linalg.norm(self.b.position(ev) - self.a.position(ev)))
        if length == 0.0:
            raise FlexbodyError(
                f"spring {self.name!r}: its ends {self.a.label} and {self.b.label} coincide in the "
                f"initial state (length 0), so its line of action is undefined; move an end point"
            )
        if self.rest_length is None:
            self.rest_length = length

    def _geometry(self, ev: StateView):
        d = self.b.position(ev) - self.a.position(ev)
        length = float(np.linalg.norm(d))
        if not length > 1e-12 * max(1.0, self.rest_length or 0.0):
            raise StateError(
                f"spring {self.name!r}: its ends {self.a.label} and {self.b.label} coincide at "
                f"t = {ev.t:.6g} s (length {length:.3g} m); its line of action is undefined"
            )
        return d, length, d / length

    def _relative_jacobian(self, ev: StateView):
        """(cols (k,), D (3, k)) with D = J_b − J_a on the union of the ends' columns."""
        cols_a, Ja = self.a.jacobian(ev)
        cols_b, Jb = self.b.jacobian(ev)
        return merge_pieces([(cols_b, Jb), (cols_a, -Ja)])

    def evaluate(self, ev: StateView, *, velocity: bool = True, jacobians: bool = False) -> ForcePiece:
        _d, length, e = self._geometry(ev)
        cols, D = self._relative_jacobian(ev)
        s = length - self.rest_length
        rel_v = (self.b.velocity(ev) - self.a.velocity(ev)) if velocity else np.zeros(3)
        s_dot = float(e @ rel_v)
        T = self.tension(s, s_dot)
        De = D.T @ e
        Q = -T * De
        if not jacobians:
            return ForcePiece(cols, Q)
        T_s, T_rate = self.tension_derivatives(s, s_dot)
        transverse = np.eye(3) - np.outer(e, e)
        K_point = T_s * np.outer(e, e) + (T / length) * transverse + T_rate * np.outer(e, transverse @ rel_v / length)
        K = -D.T @ K_point @ D
        for end, sign in ((self.a, 1.0), (self.b, -1.0)):  # F_a = T e, F_b = −T e; ṡ gains −eᵀN_a, +eᵀN_b
            if isinstance(end, CurvedAnchor):  # a link's or a reduced body's point
                add_square(K, cols, end.position_hessian(ev, sign * T * e))
                if velocity:
                    K -= T_rate * np.outer(De, -sign * e @ widened(cols, end.velocity_jacobian(ev)))
        return ForcePiece(cols, Q, K, -T_rate * np.outer(De, De))

    @property
    def exact_jacobians(self) -> bool:
        """Whether ∂Q/∂q and ∂Q/∂v are exact: ends on links, reduced bodies, nodes or the ground (module
        docstring)."""
        return all(isinstance(end, (Ground, Node, CurvedAnchor)) for end in (self.a, self.b))

    def potential(self, ev: StateView) -> float:
        rest = self.rest_length
        assert rest is not None  # set by prepare() at assembly
        s = float(np.linalg.norm(self.b.position(ev) - self.a.position(ev))) - rest
        if self._tension is None:
            return 0.5 * self.k * s * s
        sigma = 0.5 * s * (_GAUSS_X + 1.0)  # ∫₀ˢ T(σ, 0) dσ
        return 0.5 * s * float(sum(w * self.tension(x, 0.0) for x, w in zip(sigma, _GAUSS_W)))


class JointSpringDamper(ForceElement):
    """A spring-damper on one joint coordinate: Q_j = −k (q_j − q_rest) − c v_j.

    Parameters
    ----------
    link : Link
        The link whose (revolute or prismatic) joint carries the spring.
    stiffness : float
        k [N·m/rad or N/m] (≥ 0).
    damping : float
        c [N·m·s/rad or N·s/m] (≥ 0).
    rest : float
        q_rest [rad or m].
    name : str, optional
    """

    kind = "joint_spring"

    def __init__(
        self, link: Link, stiffness: float = 0.0, damping: float = 0.0, rest: float = 0.0, *, name: str | None = None
    ):
        super().__init__(name)
        who = f"joint spring {self.name!r}"
        if not isinstance(link, Link):
            raise FlexbodyError(f"{who}: expected a Link, got {link!r}")
        if link.coordinate is None:
            raise FlexbodyError(f"{who}: link {link.name!r} has a fixed joint (no coordinate to spring)")
        self.link = link
        self.trees = (link.tree,)
        self.k = finite_number(stiffness, "stiffness", who)
        self.c = finite_number(damping, "damping", who)
        self.rest = float(rest)
        if not math.isfinite(self.rest):
            raise FlexbodyError(f"{who}: rest must be finite, got {rest!r}")
        if self.k == 0.0 and self.c == 0.0:
            raise FlexbodyError(f"{who}: give a stiffness or a damping (both are zero)")

    def _column(self, ev: StateView) -> np.ndarray:
        return np.array([ev.offset(self.link.tree) + self.link.coordinate], dtype=np.int64)

    def evaluate(self, ev: StateView, *, velocity: bool = True, jacobians: bool = False) -> ForcePiece:
        col = self._column(ev)
        q_j, v_j = float(ev.q[col[0]]), float(ev.v[col[0]]) if velocity else 0.0
        Q = np.array([-self.k * (q_j - self.rest) - self.c * v_j])
        if not jacobians:
            return ForcePiece(col, Q)
        return ForcePiece(col, Q, np.array([[-self.k]]), np.array([[-self.c]]))

    exact_jacobians = True
    """∂Q/∂q = −k and ∂Q/∂v = −c are exact."""

    def potential(self, ev: StateView) -> float:
        x = float(ev.q[self._column(ev)[0]]) - self.rest
        return 0.5 * self.k * x * x
