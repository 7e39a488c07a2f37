"""Exact derivatives of a reduced body's share of M a + h with its tree's and its own coordinates and velocities:
the joint rows' Jacobians that implicit integration, statics, linearisation and the derivatives of the dynamics use
(#36 items 1 and 4), in one compiled kernel for the general route and the compiled programs.

In the frame the share is F(A, ω, g, η, η̇, η̈) (6 + r,) (:mod:`flexbody.reduced.frame_forces`), with the frame's
classical acceleration A = diag(Rᵀ, Rᵀ) A_w, A_w = J a + J̇v, its angular velocity ω = Rᵀω_w and gravity g = Rᵀg_w
in frame axes; on the tree it acts through T = diag(Rᵀ, Rᵀ) J, so the rows are

    f_tree = Tᵀ F[:6] = J_pᵀ W_p + J_ωᵀ W_θ,   W = diag(R, R) F[:6] (the world wrench at the frame origin),
    f_modal = F[6:].

A tree coordinate q_j turns the frame about e_j = J_ω[:, j], ∂R/∂q_j = [e_j]× R, so a frame-axes vector of a world
one x_w changes by ∂(Rᵀx_w)/∂q_j = Rᵀ(∂x_w/∂q_j + x_w × e_j); ∂A_w/∂q, ∂A_w/∂v and ∂ω_w/∂q come from the tree
(:func:`~flexbody.rigid.acceleration_derivatives.frame_motion_derivatives`), and the turn of J itself from the point
and angular Hessians (∂(J_pᵀW_p)/∂q, ∂(J_ωᵀW_θ)/∂q at fixed W; :mod:`flexbody.rigid.point_hessian`):

    ∂f_tree/∂q_j = H_p(W_p)[:, j] + H_ω(W_θ)[:, j] + J_pᵀ(e_j × W_p) + J_ωᵀ(e_j × W_θ) + Tᵀ ∂F[:6]/∂q_j,
    ∂f_tree/∂v_j = Tᵀ ∂F[:6]/∂v_j,   ∂f/∂η = [Tᵀ; I] ∂F/∂η,   ∂f/∂η̇ = [Tᵀ; I] ∂F/∂η̇.

The partials of F in its own arguments are exact symmetric differences: F is a polynomial of degree at most two in
each argument (M_b and Q_v quadratic in η, Q_v and the centrifugal stiffening quadratic in ω, the rest linear), and
for such a polynomial (F(x + h) − F(x − h))/2h is the derivative for every h, round-off aside; h is the argument's
own scale (1 m/s², 1 rad/s, 1 m/s², and the modal step of :func:`~flexbody.reduced.frame_forces.pack`, which moves
the body's nodes by a tenth of its size).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numba as nb
import numpy as np

from ..rigid.acceleration_derivatives import frame_motion_derivatives
from ..rigid.algorithms import frame_terms
from ..rigid.exponential_coordinates import cross3
from ..rigid.point_hessian import angular_hessian, point_hessian
from .frame_forces import frame_forces_into, unpack
from .invariants import frame_state

if TYPE_CHECKING:
    from ..rigid.state_view import StateView
    from .body import ReducedBody

__all__ = ["reduced_force_derivatives", "reduced_derivatives", "frame_force_partials"]


@nb.njit(cache=True)
def _forces_at(fl, r, x, eta_ddot, F):
    """F of :func:`~flexbody.reduced.frame_forces.frame_forces_into` at x = [A (6), ω (3), g (3), η (r), η̇ (r)]."""
    Mb, Q, s, K = np.empty((6 + r, 6 + r)), np.empty(6 + r), np.empty(3), np.empty((r, r))
    args = x[:6].copy(), x[6:9].copy(), x[9:12].copy(), x[12 : 12 + r].copy(), x[12 + r :].copy()
    frame_forces_into(fl, r, *args, eta_ddot, True, True, True, Mb, Q, s, K, F)


@nb.njit(cache=True)
def frame_force_partials(fl, r, x, eta_ddot, P):
    """P (6 + r, 12 + 2r) = ∂F/∂x at x = [A, ω, g, η, η̇] (frame axes) by the exact symmetric differences of the
    module docstring."""
    steps = unpack(fl, r)[10]
    plus, minus = np.empty(6 + r), np.empty(6 + r)
    y = x.copy()
    for j in range(x.shape[0]):
        h = 1.0 if j < 12 else steps[(j - 12) % r]
        y[j] = x[j] + h
        _forces_at(fl, r, y, eta_ddot, plus)
        y[j] = x[j] - h
        _forces_at(fl, r, y, eta_ddot, minus)
        y[j] = x[j]
        for a in range(6 + r):
            P[a, j] = (plus[a] - minus[a]) / (2.0 * h)


@nb.njit(cache=True)
def _world_to_frame_rates(Ri, J, dV, dA, dAv, A_w, omega_w, gravity, T, j, X_q, X_v):
    """Column j of ∂[A; ω; g]/∂q and ∂[A; ω; g]/∂v (12,) in frame axes (module docstring), into X_q, X_v."""
    e0, e1, e2 = J[3, j], J[4, j], J[5, j]
    turns = (
        cross3(A_w[0], A_w[1], A_w[2], e0, e1, e2),
        cross3(A_w[3], A_w[4], A_w[5], e0, e1, e2),
        cross3(omega_w[0], omega_w[1], omega_w[2], e0, e1, e2),
        cross3(gravity[0], gravity[1], gravity[2], e0, e1, e2),
    )
    for block in range(4):
        t = turns[block]
        for c in range(3):
            xq = xv = 0.0
            for k in range(3):
                if block < 2:
                    xq += Ri[k, c] * (dA[3 * block + k, j] + t[k])
                    xv += Ri[k, c] * dAv[3 * block + k, j]
                elif block == 2:
                    xq += Ri[k, c] * (dV[3 + k, j] + t[k])
                else:
                    xq += Ri[k, c] * t[k]
            X_q[3 * block + c, j] = xq
            X_v[3 * block + c, j] = T[3 + c, j] if block == 2 else xv


@nb.njit(cache=True)
def reduced_derivatives(i, col, r, fl, parent, joint_type, dof, axis, R, p, S, vel, acc, support, gravity, q, v, a,
                        D_q, D_v):  # fmt: skip
    """D_q += ∂f/∂q, D_v += ∂f/∂v (n, n) of the share f of M a + h of the reduced body ``fl`` (packed) on link i of a
    tree (kinematics R, p, S, vel, acc of (q, v); its joints' arrays parent, joint_type, dof, axis, support) whose
    modal coordinates start at column ``col``, at accelerations a (n,) (module docstring)."""
    n = q.shape[0]
    J, bias = np.empty((6, n)), np.empty(6)
    frame_terms(R, p, S, vel, acc, support, i, np.zeros(3), J, bias)
    T, c, w, g = np.empty((6, n)), np.empty(6), np.empty(6), np.empty(3)
    frame_state(R[i], J, bias, v, gravity, T, c, w, g)
    Ri = R[i]
    A_w, x = bias.copy(), np.empty(12 + 2 * r)
    for row in range(6):
        tw = tf = 0.0
        for j in range(n):
            tw += J[row, j] * a[j]
            tf += T[row, j] * a[j]
        A_w[row] += tw
        x[row] = tf + c[row]
    x[6:9], x[9:12] = w[3:], g
    x[12 : 12 + r], x[12 + r :] = q[col : col + r], v[col : col + r]
    eta_ddot = a[col : col + r].copy()
    F, P = np.empty(6 + r), np.empty((6 + r, 12 + 2 * r))
    _forces_at(fl, r, x, eta_ddot, F)
    frame_force_partials(fl, r, x, eta_ddot, P)
    dV, dA, dAv = np.empty((6, n)), np.empty((6, n)), np.empty((6, n))
    frame_motion_derivatives(parent, joint_type, dof, axis, R, p, S, vel, acc, q, v, a, i, p[i].copy(), dV, dA, dAv)
    omega_w = Ri @ w[3:].copy()
    X_q, X_v = np.zeros((12, n)), np.zeros((12, n))
    tree = np.array([j for j in range(n) if support[i, j] >= 0], dtype=np.int64)
    for j in tree:
        _world_to_frame_rates(Ri, J, dV, dA, dAv, A_w, omega_w, gravity, T, j, X_q, X_v)
    P_frame = np.ascontiguousarray(P[:, :12])
    dF_q, dF_v = P_frame @ X_q, P_frame @ X_v  # (6 + r, n)
    W_p, W_w = Ri @ F[:3].copy(), Ri @ F[3:6].copy()
    H = np.zeros((n, n))
    point_hessian(parent, joint_type, dof, axis, R, p, S, q, i, p[i].copy(), W_p, H)
    angular_hessian(parent, joint_type, dof, axis, R, S, q, i, W_w, H)
    Tt = np.ascontiguousarray(T.T)
    TF_q, TF_v = Tt @ np.ascontiguousarray(dF_q[:6]), Tt @ np.ascontiguousarray(dF_v[:6])  # (n, n)
    TP = Tt @ np.ascontiguousarray(P[:6, 12:])  # (n, 2r): Tᵀ ∂F[:6]/∂η, Tᵀ ∂F[:6]/∂η̇
    for j in tree:
        cp = cross3(J[3, j], J[4, j], J[5, j], W_p[0], W_p[1], W_p[2])
        cw = cross3(J[3, j], J[4, j], J[5, j], W_w[0], W_w[1], W_w[2])
        for j2 in tree:
            turn = 0.0
            for k in range(3):
                turn += J[k, j2] * cp[k] + J[3 + k, j2] * cw[k]
            D_q[j2, j] += H[j2, j] + turn + TF_q[j2, j]
            D_v[j2, j] += TF_v[j2, j]
        for k in range(r):
            D_q[col + k, j] += dF_q[6 + k, j]
            D_v[col + k, j] += dF_v[6 + k, j]
            D_q[j, col + k] += TP[j, k]
            D_v[j, col + k] += TP[j, r + k]
    for k in range(r):
        for m in range(r):
            D_q[col + k, col + m] += P[6 + k, 12 + m]
            D_v[col + k, col + m] += P[6 + k, 12 + r + m]


def reduced_force_derivatives(
    body: ReducedBody, ev: StateView, a_tree: np.ndarray, eta_ddot: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(columns (n_t + r,): the tree's then the body's, ∂f/∂q, ∂f/∂v (n_t + r, n_t + r)) of the body's share f of
    M a + h (velocity products, gravity and elastic forces included) at the state ``ev`` and accelerations a_tree
    (n_t,), η̈ (r,) (module docstring; :func:`reduced_derivatives` on the tree's columns then the body's)."""
    assert body.packed is not None  # made by prepare() at assembly
    tree, kin, r = body.tree, ev.kinematics(body.tree), body.n_dofs
    arrays, tree_cols, cols = tree.arrays(), ev.slice_of(tree), ev.slice_of(body)
    n_t = tree.n_dofs
    support = np.hstack([arrays["support_matrix"], np.full((len(tree.links), r), -1, dtype=np.int64)])
    q, v = np.r_[ev.q[tree_cols], ev.q[cols]], np.r_[ev.v[tree_cols], ev.v[cols]]
    a = np.r_[np.asarray(a_tree, dtype=float), np.asarray(eta_ddot, dtype=float)]
    D_q, D_v = np.zeros((n_t + r, n_t + r)), np.zeros((n_t + r, n_t + r))
    args = (arrays["parent"], arrays["joint_type"], arrays["dof"], arrays["axis"], kin.R, kin.p, kin.S, kin.vel)
    reduced_derivatives(body.link.index, n_t, r, body.packed, *args, kin.acc, support, tree.gravity, q, v, a, D_q, D_v)
    columns = np.r_[np.arange(tree_cols.start, tree_cols.stop), np.arange(cols.start, cols.stop)]
    return columns, D_q, D_v
