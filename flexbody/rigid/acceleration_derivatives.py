"""Derivatives of a frame's velocity and acceleration on a tree with its coordinates and velocities: the rows that
constrained dynamics differentiates (#36 item 3), ∂(Φ a + Φ̇ v)/∂q and ∂(Φ a + Φ̇ v)/∂v for rows on link points and
frames, where Φ a + Φ̇ v is the point's classical acceleration.

A frame at the world point x on link j has the spatial velocity V_j = [v_o; ω] and acceleration A_j = [a_o; α] of its
link (world axes, at the origin, :mod:`flexbody.rigid.algorithms`; A_j at q̈ = a without gravity), so that

    ẋ = v_o + ω × x,      ẍ = a_o + α × x + ω × ẋ.

Under a coordinate q_k of a joint above the link, the subtree turns with S_k (Carpentier & Mansard 2018, the terms
δv_k, β_k, ε_k of :func:`~flexbody.rigid.rnea_derivatives.motion_terms`):

    ∂x/∂q_k = J_k = S_k,lin + S_k,ang × x,    ∂V_j/∂q_k = S_k × V_j + δv_k,    ∂A_j/∂q_k = S_k × A_j + β_k + δv_k × V_j,
    ∂V_j/∂q̇_k = S_k,                         ∂A_j/∂q̇_k = S_k × V_j + ε_k,

and the chain rule through the two formulas above gives ∂ẋ/∂q, ∂ẍ/∂q, ∂ẍ/∂q̇ (∂ẋ/∂q̇ = ∂ẍ/∂q̈ = J) and the angular
rows ∂ω/∂q, ∂α/∂q, ∂α/∂q̇. Joints not above the link contribute nothing.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from .exponential_coordinates import cross3
from .rnea_derivatives import motion_terms

__all__ = ["frame_motion_derivatives"]


@nb.njit(cache=True, inline="always")
def _spatial_cross(S, k, X):
    """S_k × X (6-tuple) of the motion vectors S[k] and X (6,), linear part first."""
    l0, l1, l2 = cross3(S[k, 3], S[k, 4], S[k, 5], X[0], X[1], X[2])
    m0, m1, m2 = cross3(S[k, 0], S[k, 1], S[k, 2], X[3], X[4], X[5])
    a0, a1, a2 = cross3(S[k, 3], S[k, 4], S[k, 5], X[3], X[4], X[5])
    return l0 + m0, l1 + m1, l2 + m2, a0, a1, a2


@nb.njit(cache=True)
def frame_motion_derivatives(parent, joint_type, dof, axis, R, p, S, vel, acc, q, v, a, link, x, dV_dq, dA_dq, dA_dv):
    """Into (6, n_dofs) arrays, rows [point; angular], at the kinematics (R, p, S, vel, acc) of (q, v) and q̈ = a: the
    derivatives of [ẋ; ω] with q at fixed q̇ (``dV_dq``), of [ẍ; α] with q at fixed q̇, q̈ (``dA_dq``) and with q̇ at
    fixed q, q̈ (``dA_dv``) of the frame at the world point x (3,) on ``link`` (module docstring)."""
    n = parent.shape[0]
    link_acc, dv, beta, eps = np.empty((n, 6)), np.zeros((n, 6)), np.zeros((n, 6)), np.zeros((n, 6))
    motion_terms(parent, joint_type, dof, axis, R, p, S, vel, acc, q, v, a, np.zeros(3), link_acc, dv, beta, eps)
    V, A = vel[link], link_acc[link]
    w0, w1, w2 = V[3], V[4], V[5]
    r = cross3(w0, w1, w2, x[0], x[1], x[2])
    xd = (V[0] + r[0], V[1] + r[1], V[2] + r[2])  # ẋ
    dV_dq[:, :] = 0.0
    dA_dq[:, :] = 0.0
    dA_dv[:, :] = 0.0
    k = link
    while k >= 0:
        col = dof[k]
        if col >= 0:
            sx = cross3(S[k, 3], S[k, 4], S[k, 5], x[0], x[1], x[2])
            J = (S[k, 0] + sx[0], S[k, 1] + sx[1], S[k, 2] + sx[2])  # ∂x/∂q_k
            sv, sa = _spatial_cross(S, k, V), _spatial_cross(S, k, A)
            dvv = _spatial_cross(dv, k, V)
            dVs = np.empty(6)
            dAs = np.empty(6)
            for c in range(6):
                dVs[c] = sv[c] + dv[k, c]
                dAs[c] = sa[c] + beta[k, c] + dvv[c]
            wx = cross3(dVs[3], dVs[4], dVs[5], x[0], x[1], x[2])
            wJ = cross3(w0, w1, w2, J[0], J[1], J[2])
            xd_q = (dVs[0] + wx[0] + wJ[0], dVs[1] + wx[1] + wJ[1], dVs[2] + wx[2] + wJ[2])  # ∂ẋ/∂q_k
            ax = cross3(dAs[3], dAs[4], dAs[5], x[0], x[1], x[2])
            aJ = cross3(A[3], A[4], A[5], J[0], J[1], J[2])
            turn = cross3(dVs[3], dVs[4], dVs[5], xd[0], xd[1], xd[2])
            carry = cross3(w0, w1, w2, xd_q[0], xd_q[1], xd_q[2])
            # ∂ẍ/∂q̇_k: ∂A/∂q̇_k = S_k × V + ε_k, ∂ω/∂q̇_k = S_k,ang, ∂ẋ/∂q̇_k = J_k
            ev = _spatial_cross(S, k, V)
            dAv = (ev[0] + eps[k, 0], ev[1] + eps[k, 1], ev[2] + eps[k, 2], ev[3] + eps[k, 3], ev[4] + eps[k, 4],
                   ev[5] + eps[k, 5])  # fmt: skip
            vx = cross3(dAv[3], dAv[4], dAv[5], x[0], x[1], x[2])
            sturn = cross3(S[k, 3], S[k, 4], S[k, 5], xd[0], xd[1], xd[2])
            for c in range(3):
                dV_dq[c, col] = xd_q[c]
                dV_dq[3 + c, col] = dVs[3 + c]
                dA_dq[c, col] = dAs[c] + ax[c] + aJ[c] + turn[c] + carry[c]
                dA_dq[3 + c, col] = dAs[3 + c]
                dA_dv[c, col] = dAv[c] + vx[c] + sturn[c] + wJ[c]
                dA_dv[3 + c, col] = dAv[3 + c]
        k = parent[k]
