"""The derivatives of constraint rows' accelerations, c = φ̈ = Φ(q) a + bias(q, v) at fixed a, with the coordinates
and the velocities: ∂c/∂q and ∂c/∂v, which the derivatives of the constrained dynamics need beside ∂(Φᵀλ)/∂q
(``joint_hessian``) [DE-4], #36 item 3.

An anchor point x moves with the columns its Jacobian J names: a link point has ∂ẋ/∂q, ∂ẍ/∂q and ∂ẍ/∂q̇ from the
tree (:meth:`flexbody.rigid.Kinematics.frame_motion_derivatives`), with ∂ẋ/∂q̇ = ∂ẍ/∂a = J; a node's x, ẋ, ẍ are its
own coordinates, velocities and accelerations (zero derivatives but J = I); the ground does not move. Rows declared
as point rows take their partials in (d, ḋ, d̈) from the one formula of :mod:`flexbody.constraints.row_kinds`
(:func:`~flexbody.constraints.row_kinds.point_row_rate_partials`); the orientation rows u·w of welds and hinges take
them from the closed form of their bias (:mod:`flexbody.constraints.closures`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from ..rigid.anchors import Ground, LinkPoint
from .nodes import Node
from .row_kinds import DeclaredPointRows, point_row_rate_partials

if TYPE_CHECKING:
    from ..rigid.anchors import Anchor, FrameAnchor
    from ..rigid.state_view import StateView

__all__ = [
    "AnchorMotion",
    "anchor_motion",
    "differentiable_anchor",
    "point_rows_derivatives",
    "orientation_rows_derivatives",
]


class AnchorMotion(NamedTuple):
    """How a point moves with the columns ``cols`` (k,): its position x, velocity ẋ and acceleration ẍ (3,) at the
    state and accelerations given, J = ∂x/∂q = ∂ẋ/∂v = ∂ẍ/∂a, ``velocity_q`` = ∂ẋ/∂q, ``acceleration_q`` = ∂ẍ/∂q,
    ``acceleration_v`` = ∂ẍ/∂v (3, k); for a frame, ``angular`` = (ω, α, J_ω, ∂ω/∂q, ∂α/∂q, ∂α/∂v) likewise."""

    cols: np.ndarray
    x: np.ndarray
    xd: np.ndarray
    xdd: np.ndarray
    J: np.ndarray
    velocity_q: np.ndarray
    acceleration_q: np.ndarray
    acceleration_v: np.ndarray
    angular: tuple | None = None


def anchor_motion(anchor: Anchor | None, ev: StateView, acc: np.ndarray) -> AnchorMotion | None:
    """The :class:`AnchorMotion` of a link point or frame, a node, or None for the ground (``acc`` (n,): the system's
    accelerations). ValueError for another kind of anchor (callers check :func:`differentiable_anchor` first)."""
    if anchor is None or isinstance(anchor, Ground):
        return None
    if isinstance(anchor, Node):
        cols, zero = anchor.columns(ev), np.zeros((3, 3))
        return AnchorMotion(cols, ev.q[cols], ev.v[cols], acc[cols], np.eye(3), zero, zero, zero)
    if hasattr(anchor, "motion"):  # a point of a reduced body
        return AnchorMotion(*anchor.motion(ev, acc))
    if not isinstance(anchor, LinkPoint):
        raise ValueError(f"no derivatives of the motion of {anchor!r}")
    tree, link = anchor.link.tree, anchor.link
    cols = ev.columns(tree)
    kin = ev.kinematics(tree)
    v_q, a_q, a_v = kin.frame_motion_derivatives(link, anchor.offset, acc[cols])
    J_frame, bias = kin.frame_terms(link, anchor.offset)
    a_tree = acc[cols]
    xdd = J_frame @ a_tree + bias
    angular = (J_frame[3:] @ ev.v[cols], xdd[3:], J_frame[3:], v_q[3:], a_q[3:], a_v[3:])
    return AnchorMotion(cols, anchor.position(ev), J_frame[:3] @ ev.v[cols], xdd[:3], J_frame[:3], v_q[:3], a_q[:3],
                        a_v[:3], angular)  # fmt: skip


def differentiable_anchor(anchor: Anchor | None) -> bool:
    """Whether :func:`anchor_motion` knows the anchor: the ground, a link point or frame, a node, a reduced body's
    point."""
    return anchor is None or isinstance(anchor, (Ground, LinkPoint, Node)) or hasattr(anchor, "motion")


def _union(*motions: AnchorMotion | None) -> tuple[np.ndarray, list[tuple[AnchorMotion, np.ndarray, float]]]:
    """The columns of both anchors of a row pair (a first, with sign +1; b with −1) and where each anchor's sit."""
    present = [(m, sign) for m, sign in zip(motions, (1.0, -1.0)) if m is not None]
    cols = np.unique(np.concatenate([m.cols for m, _ in present])) if present else np.zeros(0, np.int64)
    return cols, [(m, np.searchsorted(cols, m.cols), sign) for m, sign in present]


def point_rows_derivatives(
    rows: DeclaredPointRows, a: Anchor, b: Anchor | None, ev: StateView, acc: np.ndarray, motions: tuple | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(columns, ∂c/∂q, ∂c/∂v) (k,), (r, k), (r, k) of declared point rows between a and b (None: the ground): with
    d = x_a − x_b (+ the rows' offset), c = c(d, ḋ, d̈), so ∂c/∂q = c_d J_d + c_ḋ ∂ḋ/∂q + c_d̈ ∂d̈/∂q and
    ∂c/∂v = c_ḋ J_d + c_d̈ ∂d̈/∂v; ``motions`` the anchors' :func:`anchor_motion` when made already."""
    if motions is None:
        motions = anchor_motion(a, ev, acc), anchor_motion(b, ev, acc)
    cols, parts = _union(*motions)
    k = cols.size
    d = a.position(ev) + rows.offset - (0.0 if b is None else b.position(ev))
    dd, ddd = np.zeros(3), np.zeros(3)
    J, V_q, A_q, A_v = (np.zeros((3, k)) for _ in range(4))
    for m, where, sign in parts:
        dd += sign * m.xd
        ddd += sign * m.xdd
        J[:, where] += sign * m.J
        V_q[:, where] += sign * m.velocity_q
        A_q[:, where] += sign * m.acceleration_q
        A_v[:, where] += sign * m.acceleration_v
    n_rows = rows.kinds.size
    Cq, Cv = np.empty((n_rows, k)), np.empty((n_rows, k))
    for r in range(n_rows):
        c_d, c_dd, c_ddd = point_row_rate_partials(rows.kinds[r], rows.normals[r], rows.projectors[r], d, dd, ddd)
        Cq[r] = c_d @ J + c_dd @ V_q + c_ddd @ A_q
        Cv[r] = c_dd @ J + c_ddd @ A_v
    return cols, Cq, Cv


def orientation_rows_derivatives(
    a: FrameAnchor, b: FrameAnchor, pairs, ev: StateView, acc: np.ndarray, motions: tuple | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(columns, ∂c/∂q, ∂c/∂v) of the rows φ = u·w, u = R_a ū_i, w = R_b w̄_j for the axis ``pairs`` (i, j), whose
    acceleration is c = g·(α_a − α_b) + (ω_a×(ω_a×u))·w + 2(ω_a×u)·(ω_b×w) + u·(ω_b×(ω_b×w)), g = u × w
    (:mod:`flexbody.constraints.closures`), by the chain rule through u, w (∂u/∂q = J_ω,a × u), ω and α; ``motions``
    the frames' :func:`anchor_motion` when made already."""
    ma, mb = (anchor_motion(a, ev, acc), anchor_motion(b, ev, acc)) if motions is None else motions
    cols, _ = _union(ma, mb)
    k = cols.size
    turn = {}  # per side: ω, α (3,), J_ω, ∂ω/∂q, ∂α/∂q, ∂α/∂v (3, k) on the union columns
    for side, m in (("a", ma), ("b", mb)):
        zero = np.zeros((3, k))
        turn[side] = [np.zeros(3), np.zeros(3), zero, zero, zero, zero]
        if m is not None and m.angular is not None:  # a frame on a link (frames are on links or the ground)
            where = np.searchsorted(cols, m.cols)
            w, al, Jw, w_q, al_q, al_v = m.angular
            spread = []
            for block in (Jw, w_q, al_q, al_v):
                full = np.zeros((3, k))
                full[:, where] = block
                spread.append(full)
            turn[side] = [w, al, *spread]
    wa, aa, Jwa, wa_q, aa_q, aa_v = turn["a"]
    wb, ab, Jwb, wb_q, ab_q, ab_v = turn["b"]
    Ra, Rb = a.rotation(ev), b.rotation(ev)
    Cq, Cv = np.empty((len(pairs), k)), np.empty((len(pairs), k))
    for r, (i, j) in enumerate(pairs):
        u, w = Ra[:, i], Rb[:, j]
        da = aa - ab
        c_u = np.cross(w, da) + (wa @ w) * wa - (wa @ wa) * w + 2.0 * np.cross(np.cross(wb, w), wa)
        c_u += np.cross(wb, np.cross(wb, w))
        c_w = np.cross(da, u) + np.cross(wa, np.cross(wa, u)) + 2.0 * np.cross(np.cross(wa, u), wb)
        c_w += (wb @ u) * wb - (wb @ wb) * u
        c_wa = u * (wa @ w) + w * (wa @ u) - 2.0 * (u @ w) * wa + 2.0 * np.cross(u, np.cross(wb, w))
        c_wb = 2.0 * np.cross(w, np.cross(wa, u)) + u * (wb @ w) + w * (wb @ u) - 2.0 * (u @ w) * wb
        g = np.cross(u, w)
        u_q, w_q = -_skew(u) @ Jwa, -_skew(w) @ Jwb  # (J_ω dq) × u
        Cq[r] = c_u @ u_q + c_w @ w_q + c_wa @ wa_q + c_wb @ wb_q + g @ (aa_q - ab_q)
        Cv[r] = c_wa @ Jwa + c_wb @ Jwb + g @ (aa_v - ab_v)
    return cols, Cq, Cv


def _skew(x: np.ndarray) -> np.ndarray:
    return np.array([[0.0, -x[2], x[1]], [x[2], 0.0, -x[0]], [-x[1], x[0], 0.0]])
