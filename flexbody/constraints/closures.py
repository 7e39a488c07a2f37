"""Constraints between anchors: loop closures, distances, welds, hinges and points on surfaces.

With anchor positions x, velocities ẋ = J v and bias accelerations J̇v (:mod:`flexbody.rigid.anchors`):

- :class:`PointToPoint` φ = (x_a − x_b)[components]; Φ = J_a − J_b; bias = J̇_a v − J̇_b v. Planar loop
  closure: components (0, 1).
- :class:`Distance` φ = ‖x_a − x_b‖ − L (a massless rod); bias = e·(J̇_a v − J̇_b v) + (‖ḋ‖² − (e·ḋ)²)/‖d‖.
- Orientation rows use φ = u·w with unit vectors u = R_a ū, w = R_b w̄ fixed in the frames:
  φ̇ = (u×w)·(ω_a − ω_b) and bias = (u×w)·(α̂_a − α̂_b) + (ω_a×(ω_a×u))·w + 2(ω_a×u)·(ω_b×w)
  + u·(ω_b×(ω_b×w)), with α̂ the angular bias accelerations. :class:`Weld` = 3 position rows +
  x_a·y_b, y_a·z_b, z_a·x_b (zero when the frames are aligned); :class:`Hinge` = 3 position rows +
  z_a·x_b, z_a·y_b (common z axis).
- :class:`OnSurface` φ = s(x) for a point on a smooth surface [MH-1, MH-11]: Φ = D J, bias =
  D J̇v + ẋᵀHẋ, contact force f = Dᵀλ [MH-13].
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..errors import ConstraintError
from ..rigid.anchors import Anchor, CurvedAnchor, FrameAnchor, Ground, LinkPoint
from .base import Constraint, ConstraintRows, add_square, checked_components, widened
from .nodes import Node
from .row_derivatives import anchor_motion, differentiable_anchor, orientation_rows_derivatives, point_rows_derivatives
from .row_kinds import LINEAR, RADIAL, DeclaredPointRows, PointRow, radial_curvature
from .surfaces import Cylinder, Plane, Sphere, Surface

if TYPE_CHECKING:
    from ..rigid.state_view import StateView

_AXES = np.eye(3)


def _anchor(a, who: str, frame: bool = False):
    cls = FrameAnchor if frame else Anchor
    if not isinstance(a, cls):
        what = (
            "a frame anchor (RigidTree.frame or Ground)" if frame else "an anchor (RigidTree.point, .frame or Ground)"
        )
        raise ConstraintError(f"{who}: expected {what}, got {a!r}")
    return a


def _trees(*anchors) -> tuple:
    return tuple({t: None for a in anchors for t in a.trees})


class PointToPoint(Constraint):
    """Coincident points x_a = x_b (selected world components): spatial or planar loop closure."""

    kind = "loop"

    def __init__(self, a: Anchor, b: Anchor, components: Sequence[int] = (0, 1, 2), name: str | None = None):
        super().__init__(name)
        who = f"point-to-point {self.name!r}"
        self.a, self.b = _anchor(a, who), _anchor(b, who)
        comps = checked_components(components, who)
        self.components = comps
        self.n_rows, self.row_names = comps.size, tuple("xyz"[c] for c in comps)
        self.trees, self.anchors = _trees(a, b), (a, b)
        self._rows = DeclaredPointRows(self.declare_rows())

    @property
    def units(self) -> tuple[str, ...]:
        """Every row is a position [m] (multipliers [N])."""
        return ("m",) * self.n_rows

    def declare_rows(self) -> tuple[PointRow, ...]:
        """One LINEAR row per component: φ = e_cᵀ(x_a − x_b) (:mod:`flexbody.constraints.row_kinds`)."""
        return tuple(PointRow(LINEAR, self.a, self.b, normal=_AXES[c]) for c in self.components)

    def evaluate(self, ev: StateView) -> ConstraintRows:
        return _point_rows(self._rows, self.a, self.b, ev, self.name)

    @property
    def has_joint_hessian(self) -> bool:
        """Whether :meth:`joint_hessian` applies (its points are link points, nodes or the ground)."""
        return _joint_hessian_anchors(self.a, self.b)

    def joint_hessian(self, ev: StateView, lam: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """(columns, ∂(Φᵀλ)/∂q) on the joint columns (:func:`point_rows_hessian`)."""
        return _declared_hessian(self._rows, self.a, self.b, ev, lam, self.name)

    @property
    def has_acceleration_derivatives(self) -> bool:
        """Whether :meth:`acceleration_derivatives` applies (link points, nodes or the ground; the rows are linear in
        the nodes' coordinates, so their Hessian is whole on the joint columns)."""
        return all(differentiable_anchor(anchor) for anchor in (self.a, self.b))

    def acceleration_derivatives(self, ev: StateView, acc: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(columns, ∂c/∂q, ∂c/∂v) of the rows' accelerations c = Φa + bias at the system's accelerations ``acc``
        (:func:`~flexbody.constraints.row_derivatives.point_rows_derivatives`)."""
        return point_rows_derivatives(self._rows, self.a, self.b, ev, acc)


class Distance(Constraint):
    """‖x_a − x_b‖ = length [m] (a massless rigid rod between two anchors)."""

    kind = "distance"

    def __init__(self, a: Anchor, b: Anchor, length: float, name: str | None = None):
        super().__init__(name)
        who = f"distance {self.name!r}"
        self.a, self.b = _anchor(a, who), _anchor(b, who)
        if isinstance(length, (bool, np.bool_)) or not isinstance(length, (int, float, np.integer, np.floating)):
            raise ConstraintError(f"{who}: length must be a positive number [m], got {length!r}")
        self.length = float(length)
        if not np.isfinite(self.length) or self.length <= 0:
            raise ConstraintError(f"{who}: length must be positive, got {length}")
        self.n_rows, self.row_names = 1, ("d",)
        self.trees, self.anchors = _trees(a, b), (a, b)
        self._rows = DeclaredPointRows(self.declare_rows())

    @property
    def units(self) -> tuple[str, ...]:
        """The distance error [m] (multiplier: the rod force [N])."""
        return ("m",)

    def declare_rows(self) -> tuple[PointRow, ...]:
        """One RADIAL row, φ = ‖x_a − x_b‖ − L (:mod:`flexbody.constraints.row_kinds`)."""
        return (PointRow(RADIAL, self.a, self.b, length=self.length),)

    def evaluate(self, ev: StateView) -> ConstraintRows:
        return _point_rows(self._rows, self.a, self.b, ev, f"distance {self.name!r}: the two points coincide")

    @property
    def has_joint_hessian(self) -> bool:
        """Whether :meth:`joint_hessian` applies (its points are link points, nodes or the ground)."""
        return _joint_hessian_anchors(self.a, self.b)

    def joint_hessian(self, ev: StateView, lam: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """(columns, ∂(Φᵀλ)/∂q) on the joint columns: the rod force along e plus its turn, λ(I − eeᵀ)/r."""
        return _declared_hessian(self._rows, self.a, self.b, ev, lam, f"distance {self.name!r}: the points coincide")

    @property
    def has_acceleration_derivatives(self) -> bool:
        """Whether :meth:`acceleration_derivatives` applies: link points, reduced bodies' points, nodes or the
        ground."""
        return all(differentiable_anchor(anchor) for anchor in (self.a, self.b))

    def acceleration_derivatives(self, ev: StateView, acc: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(columns, ∂c/∂q, ∂c/∂v) of the row's acceleration c = Φa + bias at the system's accelerations ``acc``."""
        return point_rows_derivatives(self._rows, self.a, self.b, ev, acc)


def _point_rows(rows: DeclaredPointRows, a: Anchor, b: Anchor | None, ev: StateView, undefined: str) -> ConstraintRows:
    """The rows of a constraint declared as :class:`~flexbody.constraints.row_kinds.PointRow` between the points a and
    b (None: the origin), by their one formula (:func:`~flexbody.constraints.row_kinds.point_rows`): φ, bias and the
    Jacobian pieces E J_a, −E J_b; ConstraintError ``undefined`` (direction undefined) at a radial row of zero
    length."""
    d, dd, bd = a.position(ev), a.velocity(ev), a.bias(ev)
    if b is not None:
        d, dd, bd = d - b.position(ev), dd - b.velocity(ev), bd - b.bias(ev)
    out = rows.evaluate(d, dd, bd)
    if isinstance(out, int):
        raise ConstraintError(f"{undefined}; direction undefined")
    phi, bias, E = out
    ca, Ja = a.jacobian(ev)
    pieces = [(ca, E @ Ja)]
    if b is not None:
        cb, Jb = b.jacobian(ev)
        pieces.append((cb, -(E @ Jb)))
    return ConstraintRows(phi, pieces, bias)


def _joint_hessian_anchors(*anchors) -> bool:
    """Whether the anchors' second derivatives are known: link points (and frames' origins), reduced bodies' points
    (a ``position_hessian``), the ground, nodes."""
    return all(a is None or isinstance(a, (Ground, Node, CurvedAnchor)) for a in anchors)


def point_rows_hessian(
    a: Anchor, b: Anchor | None, ev: StateView, D: np.ndarray, lam: np.ndarray, curvature: np.ndarray
) -> tuple[np.ndarray, np.ndarray] | None:
    """(columns, H) of ∂(Φᵀλ)/∂q of rows φ(d), d = x_a − x_b, with ∂φ/∂d = D (k, 3) and Σ_r λ_r ∂²φ_r/∂d² =
    ``curvature`` (3, 3): Φᵀλ = J_dᵀ w with w = Dᵀλ, so ∂(Φᵀλ)/∂q = H_a(w) − H_b(w) + J_dᵀ curvature J_d (the point
    Hessians of the link points and reduced bodies' points, ``position_hessian``; nodes and the ground add no curvature
    of their own). The columns are every column the points move with — joint, modal and nodal (a rod or a curved
    surface on a node turns with the node's coordinates); None when nothing is curved."""
    w = np.asarray(D, dtype=float).T @ np.asarray(lam, dtype=float)
    curved_rows = bool(np.any(curvature))
    ends: list[tuple[Anchor, float]] = []  # the points that turn (curved) or, on curved rows, move (nodes)
    for anchor, sign in ((a, 1.0), (b, -1.0)):
        if isinstance(anchor, CurvedAnchor) or (curved_rows and isinstance(anchor, Node)):
            ends.append((anchor, sign))
    if not ends:
        return None
    jacobians = [(anchor, sign, *anchor.jacobian(ev)) for anchor, sign in ends]
    cols = np.unique(np.concatenate([own for _, _, own, _ in jacobians]))
    H, J = np.zeros((cols.size, cols.size)), np.zeros((3, cols.size))
    for anchor, sign, own, block in jacobians:
        J += sign * widened(cols, (own, block))
        if isinstance(anchor, CurvedAnchor):
            add_square(H, cols, anchor.position_hessian(ev, sign * w))
    return cols, H + J.T @ curvature @ J


def _declared_hessian(rows: DeclaredPointRows, a: Anchor, b: Anchor | None, ev: StateView, lam, undefined: str):
    """:func:`point_rows_hessian` of declared LINEAR and RADIAL rows: D the rows' directions, the curvature
    Σ λ_r (P_r − e_r e_rᵀ)/r_r of the radial ones (zero for linear rows)."""
    d = a.position(ev) if b is None else a.position(ev) - b.position(ev)
    zero = np.zeros(3)
    out = rows.evaluate(d, zero, zero)
    if isinstance(out, int):
        raise ConstraintError(f"{undefined}; direction undefined")
    phi, _, E = out
    lam = np.asarray(lam, dtype=float)
    curvature, turn = np.zeros((3, 3)), np.empty((3, 3))
    for r in np.flatnonzero(rows.kinds == RADIAL):
        radial_curvature(rows.projectors[r], E[r], phi[r] + rows.lengths[r], turn)
        curvature += lam[r] * turn
    return point_rows_hessian(a, b, ev, E, lam, curvature)


def _dot_rows(a: FrameAnchor, b: FrameAnchor, pairs, ev):
    """Rows φ = u·w for (axis of a, axis of b) index pairs: value, pieces, bias."""
    Ra, Rb = a.rotation(ev), b.rotation(ev)
    wa, wb = a.angular_velocity(ev), b.angular_velocity(ev)
    ba, bb = a.angular_bias(ev), b.angular_bias(ev)
    ca, Ja = a.angular_jacobian(ev)
    cb, Jb = b.angular_jacobian(ev)
    n = len(pairs)
    phi, bias, G = np.empty(n), np.empty(n), np.empty((n, 3))
    for k, (i, j) in enumerate(pairs):
        u, w = Ra[:, i], Rb[:, j]
        g = np.cross(u, w)
        wu, ww = np.cross(wa, u), np.cross(wb, w)
        phi[k] = u @ w
        G[k] = g
        bias[k] = g @ (ba - bb) + np.cross(wa, wu) @ w + 2.0 * (wu @ ww) + u @ np.cross(wb, ww)
    return phi, [(ca, G @ Ja), (cb, -(G @ Jb))], bias


class _FrameConstraint(Constraint):
    pairs: tuple = ()
    angle_names: tuple = ()

    def __init__(self, a: FrameAnchor, b: FrameAnchor, name: str | None = None):
        super().__init__(name)
        who = f"{self.kind} {self.name!r}"
        self.a, self.b = _anchor(a, who, frame=True), _anchor(b, who, frame=True)
        self.n_rows = 3 + len(self.pairs)
        self.row_names = ("x", "y", "z", *self.angle_names)
        self.trees, self.anchors = _trees(a, b), (a, b)
        self._origins = DeclaredPointRows(tuple(PointRow(LINEAR, self.a, self.b, normal=axis) for axis in _AXES))

    @property
    def units(self) -> tuple[str, ...]:
        """Position rows [m]; axis rows u·w [rad] (the small angle between the axes and their 90°)."""
        return ("m",) * 3 + ("rad",) * len(self.pairs)

    def evaluate(self, ev: StateView) -> ConstraintRows:
        ca, Ja = self.a.jacobian(ev)
        cb, Jb = self.b.jacobian(ev)
        phi_r, pieces_r, bias_r = _dot_rows(self.a, self.b, self.pairs, ev)
        phi = np.concatenate([self.a.position(ev) - self.b.position(ev), phi_r])
        bias = np.concatenate([self.a.bias(ev) - self.b.bias(ev), bias_r])
        pieces = [
            (ca, np.vstack([Ja, np.zeros((len(self.pairs), Ja.shape[1]))])),
            (cb, np.vstack([-Jb, np.zeros((len(self.pairs), Jb.shape[1]))])),
        ]
        for cols, block in pieces_r:
            pieces.append((cols, np.vstack([np.zeros((3, block.shape[1])), block])))
        return ConstraintRows(phi, pieces, bias)

    @property
    def has_joint_hessian(self) -> bool:
        """Whether :meth:`joint_hessian` applies (frames on links or the ground)."""
        return all(isinstance(frame, (LinkPoint, Ground)) for frame in (self.a, self.b))

    def joint_hessian(self, ev: StateView, lam: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """(columns, ∂(Φᵀλ)/∂q) on the joint columns: the origins' rows as point rows (:func:`point_rows_hessian`),
        and each axis row u·w (Jacobian row gᵀ(J_ωa − J_ωb), g = u × w) the turn of the angular Jacobians,
        λ(H_ω,a(g) − H_ω,b(g)), and of g: dg = (u wᵀ − (u·w)I) J_ωa dq + ((u·w)I − w uᵀ) J_ωb dq."""
        lam = np.asarray(lam, dtype=float)
        position = point_rows_hessian(self.a, self.b, ev, np.eye(3), lam[:3], np.zeros((3, 3)))
        if position is None:
            return None
        cols, H = position
        Ra, Rb = self.a.rotation(ev), self.b.rotation(ev)
        J = {}
        for frame in (self.a, self.b):
            J[frame] = np.zeros((3, cols.size))
            if isinstance(frame, LinkPoint):  # a frame on a link (a FrameAnchor)
                J[frame] = widened(cols, frame.angular_jacobian(ev))  # type: ignore[attr-defined]
        relative = J[self.a] - J[self.b]
        for k, (i, j) in enumerate(self.pairs):
            u, w, multiplier = Ra[:, i], Rb[:, j], lam[3 + k]
            g, uw = np.cross(u, w), float(u @ w)
            for frame, sign in ((self.a, 1.0), (self.b, -1.0)):
                if isinstance(frame, LinkPoint):  # a frame on a link (a LinkFrame)
                    add_square(H, cols, frame.angular_hessian(ev, sign * multiplier * g))  # type: ignore[attr-defined]
            turn = (np.outer(u, w) - uw * np.eye(3)) @ J[self.a] + (uw * np.eye(3) - np.outer(w, u)) @ J[self.b]
            H += multiplier * relative.T @ turn
        return cols, H

    @property
    def has_acceleration_derivatives(self) -> bool:
        """Whether :meth:`acceleration_derivatives` applies (frames on links or the ground)."""
        return self.has_joint_hessian

    def acceleration_derivatives(self, ev: StateView, acc: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(columns, ∂c/∂q, ∂c/∂v) of the rows' accelerations c = Φa + bias at the system's accelerations ``acc``: the
        origins' rows as point rows, the axis rows by :func:`~flexbody.constraints.row_derivatives.
        orientation_rows_derivatives`."""
        motions = anchor_motion(self.a, ev, acc), anchor_motion(self.b, ev, acc)  # once, for both kinds of rows
        cols, Cq, Cv = point_rows_derivatives(self._origins, self.a, self.b, ev, acc, motions)
        _, Cq_r, Cv_r = orientation_rows_derivatives(self.a, self.b, self.pairs, ev, acc, motions)  # the same columns
        return cols, np.vstack([Cq, Cq_r]), np.vstack([Cv, Cv_r])


class Weld(_FrameConstraint):
    """Frames a and b coincide (origins and axes): 6 rows."""

    kind = "weld"
    pairs = ((0, 1), (1, 2), (2, 0))
    angle_names = ("xa.yb", "ya.zb", "za.xb")


class Hinge(_FrameConstraint):
    """Origins coincide and the z axes are aligned (rotation about the common z allowed): 5 rows."""

    kind = "hinge"
    pairs = ((2, 0), (2, 1))
    angle_names = ("za.xb", "za.yb")


class OnSurface(Constraint):
    """A point held on a smooth surface s(x) = 0 [MH-1]; rows = surface.n_rows."""

    kind = "surface"

    def __init__(self, point: Anchor, surface: Surface, name: str | None = None):
        super().__init__(name)
        who = f"surface constraint {self.name!r}"
        self.point = _anchor(point, who)
        if not isinstance(surface, Surface):
            raise ConstraintError(f"{who}: expected a Surface (Plane, Sphere, Cylinder, ImplicitSurface)")
        self.surface = surface
        self.n_rows = surface.n_rows
        self.row_names = tuple(f"s{i}" for i in range(self.n_rows))
        self.trees, self.anchors = _trees(point), (point,)
        declared = self.declare_rows()
        self._rows = None if declared is None else DeclaredPointRows(declared)

    @property
    def units(self) -> tuple[str, ...]:
        """[m] for the signed distances of Plane, Sphere and Cylinder; "-" for an ImplicitSurface."""
        metric = isinstance(self.surface, (Plane, Sphere, Cylinder))
        return ("m" if metric else "-",) * self.n_rows

    def declare_rows(self) -> tuple[PointRow, ...] | None:
        """The surface's row (:meth:`Surface.declare_row`: planes, spheres, cylinders), or None (a user surface)."""
        row = self.surface.declare_row(self.point)
        return None if row is None else (row,)

    def evaluate(self, ev: StateView) -> ConstraintRows:
        if self._rows is not None:
            return _point_rows(
                self._rows,
                self.point,
                None,
                ev,
                f"surface constraint {self.name!r}: the point is where the normal is undefined",
            )
        x = self.point.position(ev)
        xd = self.point.velocity(ev)
        D = self.surface.gradient(x)
        H = self.surface.hessian(x)
        cols, J = self.point.jacobian(ev)
        bias = D @ self.point.bias(ev) + (H @ xd) @ xd
        return ConstraintRows(self.surface.value(x), [(cols, D @ J)], bias)

    @property
    def has_joint_hessian(self) -> bool:
        """Whether :meth:`joint_hessian` applies: a link point, node or the ground on a surface of one row."""
        return _joint_hessian_anchors(self.point) and self.n_rows == 1

    def joint_hessian(self, ev: StateView, lam: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """(columns, ∂(Φᵀλ)/∂q) on the joint columns: the point Hessian for the force Dᵀλ and λ Jᵀ(∂²s/∂x²)J."""
        if self._rows is not None:
            return _declared_hessian(self._rows, self.point, None, ev, lam, f"surface constraint {self.name!r}")
        x = self.point.position(ev)
        lam = np.asarray(lam, dtype=float)
        curvature = np.tensordot(lam, np.asarray(self.surface.hessian(x), dtype=float).reshape(-1, 3, 3), axes=1)
        return point_rows_hessian(self.point, None, ev, self.surface.gradient(x), lam, curvature)

    @property
    def has_acceleration_derivatives(self) -> bool:
        """Whether :meth:`acceleration_derivatives` applies: a declared row (plane, sphere, cylinder), or a user surface
        with its ``third_derivative``, on a link's or reduced body's point, a node or the ground."""
        if self._rows is None and not getattr(self.surface, "has_third_derivative", False):
            return False
        return differentiable_anchor(self.point)

    def acceleration_derivatives(self, ev: StateView, acc: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(columns, ∂c/∂q, ∂c/∂v) of the rows' accelerations c = Φa + bias at the system's accelerations ``acc``: the
        declared rows' (:func:`~flexbody.constraints.row_derivatives.point_rows_derivatives`), or a user surface's
        c_r = D_r(x)·ẍ + ẋᵀH_r(x)ẋ by the chain rule, ∂c_r/∂q = (H_rẍ + T_r[ẋ, ẋ])ᵀJ + D_r ∂ẍ/∂q + 2(H_rẋ)ᵀ∂ẋ/∂q,
        ∂c_r/∂v = D_r ∂ẍ/∂v + 2(H_rẋ)ᵀJ (T the surface's third derivative)."""
        if self._rows is not None:
            return point_rows_derivatives(self._rows, self.point, None, ev, acc)
        if not self.has_acceleration_derivatives:
            raise ConstraintError(
                f"surface constraint {self.name!r}: a user surface needs its third_derivative for the acceleration "
                "derivatives"
            )
        m = anchor_motion(self.point, ev, acc)
        if m is None:  # a point on the ground: its rows do not move
            return np.zeros(0, np.int64), np.zeros((self.n_rows, 0)), np.zeros((self.n_rows, 0))
        D, H = self.surface.gradient(m.x), self.surface.hessian(m.x)
        T = self.surface.third_derivative(m.x)  # type: ignore[attr-defined]  # has_third_derivative
        Hxd = H @ m.xd  # (k, 3)
        slope = H @ m.xdd + np.einsum("rijl,i,j->rl", T, m.xd, m.xd)
        Cq = slope @ m.J + D @ m.acceleration_q + 2.0 * Hxd @ m.velocity_q
        Cv = D @ m.acceleration_v + 2.0 * Hxd @ m.J
        return m.cols, Cq, Cv

    def contact_force(self, ev: StateView, lam: np.ndarray) -> np.ndarray:
        """World contact force f = Dᵀλ (3,) [N] on the point for this constraint's multipliers [MH-13].

        With the convention τ = M a + h − Φᵀλ, f is the force the surface exerts on the point.
        """
        D = self.surface.gradient(self.point.position(ev))
        return D.T @ np.asarray(lam, dtype=float).reshape(self.n_rows)
