"""Velocity-level (Pfaffian) constraints A(q, t) v = b(q, t) [MR, LP]: knife edges, rolling discs, user rows.

A Pfaffian row constrains velocities, not positions: its rows of an assembled system carry Φ = A, the
velocity term φ_t = −b (so that Φ v + φ_t = 0 as for holonomic rows) and the acceleration bias
Ȧv − ḃ (so that Φ a + bias = 0 [DE-4]); their position value φ is 0 and position corrections leave them
out (``velocity_rows``). Every constrained-dynamics form, controller and rank check reads (Φ, bias) and so
takes them as they are; the projected inverse dynamics of [LP] P τ = P (M q̈ + h), P = I − Aᵀ(AM⁻¹Aᵀ)⁻¹AM⁻¹,
is the multiplier form with these rows.

- :class:`KnifeEdge`: the point of a frame may not move along the frame's ``axis``: n·ẋ = 0, n = R ā;
  A = nᵀJ, bias = n·(J̇v) + (ω × n)·ẋ.
- :class:`RollingDisc`: a disc (centre c and axis w = R ā of a link frame, radius r) rolls without slipping on
  the plane n·(x − p₀) = 0. With m = n − (n·w)w and d = −m/‖m‖ (centre to contact, in the disc's plane), the
  material contact point moves with v_c = ċ + ω × r d = (J − r[d]× J_ω) v. Rows: the two tangential
  components t₁·v_c, t₂·v_c (velocity level, non-holonomic) and the normal one, which is the holonomic
  φ = n·(c − p₀) − r‖m‖ (the lowest point on the plane; ∇φ·v = n·v_c). Bias of each row e:
  e·(c̈_b + α_b × r d + ω × r ḋ), with c̈_b, α_b the frame's bias accelerations, ẇ = ω × w,
  ṁ = −(n·ẇ)w − (n·w)ẇ and ḋ = −(ṁ − (m̂·ṁ)m̂)/‖m‖, m̂ = m/‖m‖.
- :class:`PfaffianRows`: user rows A(t, q) on chosen columns with b(t, q); the bias by central differences of
  A and b along (v, 1) unless given.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ..errors import ConstraintError
from ..rigid.anchors import FrameAnchor
from ..rigid.exponential_coordinates import skew
from .base import Constraint, ConstraintRows, global_columns, merge_pieces, widened
from .row_derivatives import anchor_motion

if TYPE_CHECKING:
    from ..rigid.state_view import StateView

log = logging.getLogger(__name__)

__all__ = ["KnifeEdge", "RollingDisc", "PfaffianRows"]


def _unit(vector, what: str, who: str) -> np.ndarray:
    x = np.asarray(vector, dtype=float).reshape(-1)
    if x.shape != (3,) or not np.all(np.isfinite(x)) or np.linalg.norm(x) == 0.0:
        raise ConstraintError(f"{who}: {what} must be a non-zero finite 3-vector, got {vector!r}")
    return x / np.linalg.norm(x)


def _frame(anchor, who: str) -> FrameAnchor:
    if not isinstance(anchor, FrameAnchor) or not anchor.trees:
        raise ConstraintError(
            f"{who}: expected a frame on a rigid link (tree.frame(link, offset, rotation)), got {anchor!r}"
        )
    return anchor


class KnifeEdge(Constraint):
    """The origin of ``frame`` may not move along the frame's ``axis`` (a skate, a knife edge, a wheel's
    lateral no-slip): one velocity-level row n·ẋ = 0 [m/s].

    Parameters
    ----------
    frame : FrameAnchor
        ``tree.frame(link, offset, rotation)``: its origin is the contact point.
    axis : array_like (3,)
        The blocked direction in the frame's axes (default its y axis).
    name : str, optional
    """

    kind = "knife_edge"
    n_rows = 1
    row_names = ("lateral",)

    def __init__(self, frame: FrameAnchor, axis: ArrayLike = (0.0, 1.0, 0.0), name: str | None = None):
        super().__init__(name)
        who = f"knife edge {self.name!r}"
        self.frame = _frame(frame, who)
        self.axis = _unit(axis, "axis", who)
        self.trees, self.anchors = frame.trees, (frame,)

    @property
    def units(self) -> tuple[str, ...]:
        """("m",): the row's unit as a position (it constrains the lateral velocity [m/s]; its φ is 0)."""
        return ("m",)

    @property
    def velocity_rows(self) -> tuple[bool, ...]:
        """(True,): the one row is velocity-level (no lateral slip)."""
        return (True,)

    def evaluate(self, ev: StateView) -> ConstraintRows:
        f = self.frame
        n = f.rotation(ev) @ self.axis
        cols, J = f.jacobian(ev)
        bias = n @ f.bias(ev) + np.cross(f.angular_velocity(ev), n) @ f.velocity(ev)
        return ConstraintRows(np.zeros(1), [(cols, n[None, :] @ J)], np.array([bias]), np.zeros(1))

    def joint_hessian(self, ev: StateView, lam: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(columns, ∂(Φᵀλ)/∂q) of Φᵀλ = λ Jᵀn: the point Hessian for the force λn and the turn of n = Rā,
        ∂n/∂q = −[n]× J_ω, so λ Jᵀ(−[n]× J_ω) besides."""
        f = self.frame
        n, multiplier = f.rotation(ev) @ self.axis, float(np.asarray(lam).reshape(-1)[0])
        cols, J = f.jacobian(ev)
        kin = ev.kinematics(f.link.tree)  # type: ignore[attr-defined]  # a frame on a link (_frame)
        H = kin.point_hessian(f.link, f.offset, multiplier * n)  # type: ignore[attr-defined]
        turn = -skew(n) @ widened(cols, f.angular_jacobian(ev))
        return cols, H + multiplier * J.T @ turn

    def velocity_derivatives(self, ev: StateView) -> tuple[np.ndarray, np.ndarray]:
        """(columns, ∂(Φv + φ_t)/∂q (1, k)) at fixed v of the row n·ẋ: ẋᵀ∂n/∂q + nᵀ∂ẋ/∂q, ∂n/∂q = −[n]×J_ω (what a step
        holding A v = b changes with the coordinates)."""
        m = anchor_motion(self.frame, ev, np.zeros(ev.q.size))
        if m is None or m.angular is None:  # not reached: a knife edge's frame is on a link (_frame)
            raise ConstraintError(f"knife edge {self.name!r}: its frame is not on a link")
        n = self.frame.rotation(ev) @ self.axis
        return m.cols, (m.xd @ (-skew(n) @ m.angular[2]) + n @ m.velocity_q)[None, :]

    def acceleration_derivatives(self, ev: StateView, acc: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(columns, ∂c/∂q, ∂c/∂v) of c = n·ẍ + ω·(n × ẋ) at the system's accelerations ``acc``, through ẍ, ẋ, ω
        (:func:`~flexbody.constraints.row_derivatives.anchor_motion`) and n (∂n/∂q = −[n]× J_ω)."""
        m = anchor_motion(self.frame, ev, acc)
        if m is None or m.angular is None:  # not reached: a knife edge's frame is on a link (_frame)
            raise ConstraintError(f"knife edge {self.name!r}: its frame is not on a link")
        omega, _, J_w, w_q, _, _ = m.angular
        n = self.frame.rotation(ev) @ self.axis
        n_q = -skew(n) @ J_w
        Cq = m.xdd @ n_q + n @ m.acceleration_q + np.cross(n, m.xd) @ w_q + np.cross(m.xd, omega) @ n_q
        Cq += np.cross(omega, n) @ m.velocity_q
        Cv = n @ m.acceleration_v + np.cross(n, m.xd) @ J_w + np.cross(omega, n) @ m.J
        return m.cols, Cq[None, :], Cv[None, :]


class RollingDisc(Constraint):
    """A disc rolls without slipping on a plane: two tangential velocity-level rows and the holonomic
    contact row [m].

    Parameters
    ----------
    frame : FrameAnchor
        ``tree.frame(link, centre, rotation)``: its origin is the disc's centre.
    radius : float
        r [m].
    axis : array_like (3,)
        The disc's axis in the frame's axes (default z).
    normal, point : array_like (3,)
        The plane n·(x − p₀) = 0 (default z = 0); the disc lies on the side n points to.
    name : str, optional
    """

    kind = "rolling_disc"
    n_rows = 3
    row_names = ("t1", "t2", "normal")

    def __init__(
        self,
        frame: FrameAnchor,
        radius: float,
        axis: ArrayLike = (0.0, 0.0, 1.0),
        normal: ArrayLike = (0.0, 0.0, 1.0),
        point: ArrayLike = (0.0, 0.0, 0.0),
        name: str | None = None,
    ):
        super().__init__(name)
        who = f"rolling disc {self.name!r}"
        self.frame = _frame(frame, who)
        self.radius = float(radius)
        if not np.isfinite(self.radius) or self.radius <= 0.0:
            raise ConstraintError(f"{who}: radius must be positive, got {radius!r}")
        self.axis, self.normal = _unit(axis, "axis", who), _unit(normal, "normal", who)
        self.point = np.asarray(point, dtype=float).reshape(3)
        helper = np.eye(3)[int(np.argmin(np.abs(self.normal)))]
        t1 = np.cross(self.normal, helper)
        t1 /= np.linalg.norm(t1)
        self.basis = np.array([t1, np.cross(self.normal, t1), self.normal])  # rows t₁, t₂, n
        self.trees, self.anchors = frame.trees, (frame,)

    @property
    def units(self) -> tuple[str, ...]:
        """("m", "m", "m"): the two rolling rows as positions (they constrain velocities [m/s]) and the contact
        height [m]."""
        return ("m",) * 3

    @property
    def velocity_rows(self) -> tuple[bool, ...]:
        """(True, True, False): rolling without slip in two directions (velocity-level), contact held
        (holonomic)."""
        return (True, True, False)

    def evaluate(self, ev: StateView) -> ConstraintRows:
        f, n, r = self.frame, self.normal, self.radius
        w = f.rotation(ev) @ self.axis
        m = n - (n @ w) * w
        size = float(np.linalg.norm(m))
        if size < 1e-9:
            raise ConstraintError(
                f"rolling disc {self.name!r}: the disc lies flat on the plane at t = {ev.t:.6g} s "
                f"(its axis is along the normal), so its contact point is undefined"
            )
        d = -m / size
        omega = f.angular_velocity(ev)
        w_dot = np.cross(omega, w)
        m_dot = -(n @ w_dot) * w - (n @ w) * w_dot
        d_dot = -(m_dot - (m_dot @ (m / size)) * (m / size)) / size
        cols_p, Jp = f.jacobian(ev)
        cols_w, Jw = f.angular_jacobian(ev)
        cols, J = merge_pieces([(cols_p, Jp), (cols_w, -r * skew(d) @ Jw)])
        acc = f.bias(ev) + np.cross(f.angular_bias(ev), r * d) + np.cross(omega, r * d_dot)
        phi = np.array([0.0, 0.0, n @ (f.position(ev) - self.point) - r * size])
        return ConstraintRows(phi, [(cols, self.basis @ J)], self.basis @ acc, np.zeros(3))

    def _contact_direction(self, w: np.ndarray, w_dot: np.ndarray):
        """(d, ḋ, ∂d/∂w, ∂ḋ/∂w at fixed ẇ, ∂ḋ/∂ẇ) (3,), (3,), (3, 3) ×3 of the direction d = −m/‖m‖ from the centre
        to the contact, m = n − (n·w)w: with P = I − m̂m̂ᵀ, s = ‖m‖, ṁ = −(n·ẇ)w − (n·w)ẇ, ḋ = −Pṁ/s,
        ∂ḋ/∂m = ((m̂·ṁ)P + m̂ṁᵀP + Pṁm̂ᵀ)/s², ∂ḋ/∂ṁ = −P/s, ∂m/∂w = −(n·w)I − wnᵀ, ∂ṁ/∂w = −(n·ẇ)I − ẇnᵀ,
        ∂ṁ/∂ẇ = −wnᵀ − (n·w)I."""
        n, eye = self.normal, np.eye(3)
        m = n - (n @ w) * w
        s = float(np.linalg.norm(m))
        if s < 1e-9:
            raise ConstraintError(f"rolling disc {self.name!r}: the disc lies flat on the plane")
        u = m / s
        P = eye - np.outer(u, u)
        m_dot = -(n @ w_dot) * w - (n @ w) * w_dot
        m_w = -(n @ w) * eye - np.outer(w, n)
        dd_m = ((u @ m_dot) * P + np.outer(u, m_dot @ P) + np.outer(P @ m_dot, u)) / s**2
        dd_md = -P / s
        d_w = (-P / s) @ m_w
        dd_w = dd_m @ m_w + dd_md @ (-(n @ w_dot) * eye - np.outer(w_dot, n))
        dd_wd = dd_md @ (-np.outer(w, n) - (n @ w) * eye)
        return -u, -(P @ m_dot) / s, d_w, dd_w, dd_wd

    def joint_hessian(self, ev: StateView, lam: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(columns, ∂(Φᵀλ)/∂q) of Φᵀλ = J_pᵀμ + J_ωᵀ(r d × μ), μ = Eᵀλ the contact force (world): the centre's point
        Hessian for μ, the angular Hessian for r d × μ and its turn, −r J_ωᵀ[μ]× ∂d/∂q, ∂d/∂q = ∂d/∂w (−[w]× J_ω)."""
        f, r = self.frame, self.radius
        mu = self.basis.T @ np.asarray(lam, dtype=float).reshape(3)
        w = f.rotation(ev) @ self.axis
        d, _, d_w, _, _ = self._contact_direction(w, np.zeros(3))
        kin = ev.kinematics(f.link.tree)  # type: ignore[attr-defined]  # a frame on a link (_frame)
        cols = ev.columns(f.link.tree)  # type: ignore[attr-defined]
        H = kin.point_hessian(f.link, f.offset, mu) + kin.angular_hessian(f.link, r * np.cross(d, mu))  # type: ignore[attr-defined]
        J_w = widened(cols, f.angular_jacobian(ev))
        return cols, H - r * J_w.T @ skew(mu) @ d_w @ (-skew(w) @ J_w)

    def velocity_derivatives(self, ev: StateView) -> tuple[np.ndarray, np.ndarray]:
        """(columns, ∂(Φv)/∂q (3, k)) at fixed v of the rows E v_c, v_c = ẋ + r ω × d: E(∂ẋ/∂q − r[d]×∂ω/∂q +
        r[ω]×∂d/∂q) (what a step holding the rolling rows A v = b changes with the coordinates)."""
        f, r = self.frame, self.radius
        m = anchor_motion(f, ev, np.zeros(ev.q.size))
        if m is None or m.angular is None:  # not reached: a rolling disc's frame is on a link (_frame)
            raise ConstraintError(f"rolling disc {self.name!r}: its frame is not on a link")
        omega, _, J_w, w_q, _, _ = m.angular
        w = f.rotation(ev) @ self.axis
        d, _, d_w, _, _ = self._contact_direction(w, np.cross(omega, w))
        N = m.velocity_q - r * skew(d) @ w_q + r * skew(omega) @ d_w @ (-skew(w) @ J_w)
        return m.cols, self.basis @ N

    def acceleration_derivatives(self, ev: StateView, acc: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(columns, ∂c/∂q, ∂c/∂v) of c = E(ẍ + r α × d + r ω × ḋ) at the system's accelerations ``acc``, through ẍ,
        ω, α (:func:`~flexbody.constraints.row_derivatives.anchor_motion`), w (∂w/∂q = −[w]× J_ω) and d, ḋ
        (:meth:`_contact_direction`; ẇ = ω × w)."""
        f, r = self.frame, self.radius
        motion = anchor_motion(f, ev, acc)
        if motion is None or motion.angular is None:  # not reached: a rolling disc's frame is on a link (_frame)
            raise ConstraintError(f"rolling disc {self.name!r}: its frame is not on a link")
        omega, alpha, J_w, w_q, a_q, a_v = motion.angular
        w = f.rotation(ev) @ self.axis
        w_dot = np.cross(omega, w)
        d, d_dot, d_w, dd_w, dd_wd = self._contact_direction(w, w_dot)
        turn_q = -skew(w) @ J_w  # ∂w/∂q
        wdot_q = -skew(w) @ w_q + skew(omega) @ turn_q  # ∂ẇ/∂q
        d_q, dd_q = d_w @ turn_q, dd_w @ turn_q + dd_wd @ wdot_q
        dd_v = dd_wd @ (-skew(w) @ J_w)
        Cq = motion.acceleration_q - r * skew(d) @ a_q + r * skew(alpha) @ d_q - r * skew(d_dot) @ w_q
        Cq += r * skew(omega) @ dd_q
        Cv = motion.acceleration_v - r * skew(d) @ a_v - r * skew(d_dot) @ J_w + r * skew(omega) @ dd_v
        return motion.cols, self.basis @ Cq, self.basis @ Cv


class PfaffianRows(Constraint):
    """User velocity-level rows A(t, q) v[columns] = b(t, q).

    Parameters
    ----------
    columns : array of int (k,)
        Global columns the rows act on.
    n_rows : int
        r, the number of rows.
    matrix : callable (t, q) -> (r, k)
        A on those columns, from the time [s] and the global coordinates q (n,).
    rhs : callable (t, q) -> (r,), optional
        b (default 0).
    bias : callable (t, q, v) -> (r,), optional
        Ȧv − ḃ; default central differences of A and b along q̇ = v and t (step 1e-6 relative).
    units : str
        Unit of the rows' velocities' conjugate position ("m" or "rad"), for the multipliers' unit.
    name : str, optional
    """

    kind = "pfaffian"

    def __init__(
        self,
        columns: ArrayLike,
        n_rows: int,
        matrix: Callable,
        rhs: Callable | None = None,
        bias: Callable | None = None,
        units: str = "m",
        name: str | None = None,
    ):
        super().__init__(name)
        who = f"Pfaffian rows {self.name!r}"
        for label, f in (("matrix", matrix), ("rhs", rhs), ("bias", bias)):
            if f is not None and not callable(f):
                raise ConstraintError(f"{who}: {label} must be callable, got {f!r}")
        self.cols, self.matrix, self.rhs, self._bias = global_columns(columns, who), matrix, rhs, bias
        self._units = str(units)
        if not isinstance(n_rows, (int, np.integer)) or n_rows < 1:
            raise ConstraintError(f"{who}: n_rows must be a positive integer, got {n_rows!r}")
        self.n_rows, self.row_names = int(n_rows), tuple(f"r{i}" for i in range(int(n_rows)))
        self._said_zero = False

    @property
    def units(self) -> tuple[str, ...]:
        """(n_rows,) the unit given at construction for every row."""
        return (self._units,) * self.n_rows

    @property
    def velocity_rows(self) -> tuple[bool, ...]:
        """(n_rows,) all True: every row is velocity-level, A(t, q) v = b(t, q)."""
        return (True,) * self.n_rows

    def _A(self, t, q) -> np.ndarray:
        A = np.atleast_2d(np.asarray(self.matrix(t, q), dtype=float))
        if A.shape != (self.n_rows, self.cols.size) or not np.all(np.isfinite(A)):
            raise ConstraintError(
                f"Pfaffian rows {self.name!r}: matrix must return ({self.n_rows}, "
                f"{self.cols.size}) finite numbers, got shape {A.shape}"
            )
        zero = np.flatnonzero(~A.any(axis=1))
        if zero.size and not self._said_zero:
            self._said_zero = True  # once per constraint: the rank tools then treat the row as redundant
            log.warning(
                "Pfaffian rows %r: rows %s of the matrix are zero at t = %.6g s: they constrain nothing there "
                "(said once per constraint)",
                self.name,
                [self.row_names[i] for i in zero],
                t,
            )
        return A

    def _b(self, t, q) -> np.ndarray:
        if self.rhs is None:
            return np.zeros(self.n_rows)
        b = np.asarray(self.rhs(t, q), dtype=float).reshape(-1)
        if b.shape != (self.n_rows,) or not np.all(np.isfinite(b)):
            raise ConstraintError(
                f"Pfaffian rows {self.name!r}: rhs must return ({self.n_rows},) finite numbers, got shape {b.shape}"
            )
        return b

    def evaluate(self, ev: StateView) -> ConstraintRows:
        t, q, v = ev.t, ev.q, ev.v
        A, b = self._A(t, q), self._b(t, q)
        if self._bias is not None:
            bias = np.asarray(self._bias(t, q, v), dtype=float).reshape(-1)
        else:  # d/dt (A v − b) at v̇ = 0
            h = 1e-6 * max(1.0, float(np.max(np.abs(q))))
            step = h / max(1.0, float(np.max(np.abs(v)))) if v.size else h
            up, down = q + step * v, q - step * v
            vc = v[self.cols]
            bias = (
                (self._A(t + step, up) - self._A(t - step, down)) @ vc
                - (self._b(t + step, up) - self._b(t - step, down))
            ) / (2.0 * step)
        return ConstraintRows(np.zeros(self.n_rows), [(self.cols, A)], bias, -b)
