"""Analytic derivatives of the recursive Newton–Euler inverse dynamics τ = M(q) q̈ + b(q, q̇) + g(q): ∂τ/∂q and
∂τ/∂q̇ (∂τ/∂q̈ = M), in the world-frame form of Carpentier & Mansard (RSS 2018, "Analytical derivatives of rigid body
dynamics algorithms"), on the flat arrays of :mod:`flexbody.rigid.algorithms` (world axes, at the origin, linear
first).

With v_i, a_i the spatial velocity and acceleration of link i (a_0 = −[g; 0] at the ground), I_i its world inertia,
h_i = I_i v_i, f_i = I_i a_i + v_i ×* h_i and F_i = Σ_{j ⪰ i} f_j the force its joint transmits (τ_i = S_iᵀ F_i):
a joint k moves its subtree rigidly with the twist S_k, so every quantity of a link j ⪰ k turns with it
(∂x/∂q_k = S_k × x) except for what comes from above k, v_λ(k) and a_λ(k). That leaves, with

    δv_k = −S_k × v_λ(k),      β_k = −S_k × a_λ(k) − δv_k × v_λ(k),
    B_j x = I_j (x × v_j) + x ×* h_j + v_j ×* (I_j x),      Ic_i = Σ_{j ⪰ i} I_j,  Bc_i = Σ_{j ⪰ i} B_j,

(the terms S_k ×* F_i and (S_k × S_i)ᵀ F_i cancel by the duality of × and ×*)

    ∂τ_i/∂q_k = S_iᵀ (Ic_i β_k + Bc_i δv_k)                    k ⪯ i (an ancestor of i, or i),
    ∂τ_i/∂q_k = S_iᵀ (S_k ×* F_k + Ic_k β_k + Bc_k δv_k)        i ≺ k,
    ∂τ_i/∂q̇_k = S_iᵀ (Bc_i S_k + 2 Ic_i δv_k)                  k ⪯ i,
    ∂τ_i/∂q̇_k = S_iᵀ (Bc_k S_k + 2 Ic_k δv_k)                  i ≺ k,

and zero for joints on different branches. A spherical joint (three parts on its exponential coordinates φ,
:mod:`flexbody.rigid.algorithms`) turns its subtree rigidly with S_m under φ_m too, but its columns also depend on φ
through J_r(φ), and its own acceleration term on φ and φ̇: those terms join δv, β and ε (the q̇ counterpart, 2 δv_k
for a revolute joint) of its columns (:func:`_spherical_terms`), and the joint's own 3 × 3 blocks take the
derivative of its columns (:func:`_spherical_block`).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from . import exponential_coordinates as expc
from .algorithms import SPHERICAL, _force_cross, _motion_cross
from .exponential_coordinates import cross3

__all__ = ["rnea_derivatives", "motion_terms"]


@nb.njit(cache=True, inline="always")
def _tuple(x, i):
    return x[i, 0], x[i, 1], x[i, 2], x[i, 3], x[i, 4], x[i, 5]


@nb.njit(cache=True, inline="always")
def _matvec(A, i, x, out, j):
    """out[j] = A[i] x for a full (6, 6) matrix A[i] and x (6,)."""
    for r in range(6):
        s = 0.0
        for c in range(6):
            s += A[i, r, c] * x[c]
        out[j, r] = s


@nb.njit(cache=True, inline="always")
def _dot(x, i, y, j):
    return (
        x[i, 0] * y[j, 0] + x[i, 1] * y[j, 1] + x[i, 2] * y[j, 2]
        + x[i, 3] * y[j, 3] + x[i, 4] * y[j, 4] + x[i, 5] * y[j, 5]
    )  # fmt: skip


@nb.njit(cache=True, inline="always")
def _coriolis_matrix(I, i, v, h, out):
    """out[i] = B_i (6, 6): B x = I (x × v) + x ×* h + v ×* (I x) with h = I v, by its columns (module docstring)."""
    v0, v1, v2, v3, v4, v5 = _tuple(v, i)
    h0, h1, h2, h3, h4, h5 = _tuple(h, i)
    for col in range(6):
        x0, x1, x2 = 1.0 if col == 0 else 0.0, 1.0 if col == 1 else 0.0, 1.0 if col == 2 else 0.0
        x3, x4, x5 = 1.0 if col == 3 else 0.0, 1.0 if col == 4 else 0.0, 1.0 if col == 5 else 0.0
        m = _motion_cross(x0, x1, x2, x3, x4, x5, v0, v1, v2, v3, v4, v5)  # x × v
        f = _force_cross(x0, x1, x2, x3, x4, x5, h0, h1, h2, h3, h4, h5)  # x ×* h
        g = _force_cross(v0, v1, v2, v3, v4, v5, I[i, 0, col], I[i, 1, col], I[i, 2, col], I[i, 3, col],
                         I[i, 4, col], I[i, 5, col])  # v ×* (I x)  # fmt: skip
        for r in range(6):
            s = I[i, r, 0] * m[0] + I[i, r, 1] * m[1] + I[i, r, 2] * m[2]
            s += I[i, r, 3] * m[3] + I[i, r, 4] * m[4] + I[i, r, 5] * m[5]
            out[i, r, col] = s + f[r] + g[r]


@nb.njit(cache=True, inline="always")
def _column(axis, i):
    """The column (0, 1, 2) of a spherical joint's part i (its axis is e_column)."""
    return 0 if axis[i, 0] > 0.5 else (1 if axis[i, 1] > 0.5 else 2)


@nb.njit(cache=True, inline="always")
def _at_centre(p, c, x, out):
    """out (6,) = [p_c × x; x]: the motion of a rotation x (3,) about the joint centre p[c]."""
    l0, l1, l2 = cross3(p[c, 0], p[c, 1], p[c, 2], x[0], x[1], x[2])
    out[0], out[1], out[2], out[3], out[4], out[5] = l0, l1, l2, x[0], x[1], x[2]


@nb.njit(cache=True, inline="always")
def _rotate_into(R, c, x, out):
    for r in range(3):
        out[r] = R[c, r, 0] * x[0] + R[c, r, 1] * x[1] + R[c, r, 2] * x[2]


@nb.njit(cache=True)
def _spherical_terms(k, column, lam, dof, R, p, S, vel, q, v, a, dv, beta, eps):
    """δv, β and ε of column m = ``column`` of the spherical joint whose part is link k (carrier c, the joint's last
    part; λ above it): besides the rigid turn S_m (the revolute terms already in dv, beta, eps, which take v_λ, a_λ),
    S_j = [p × R J_r e_j; R J_r e_j] depends on φ through J_r (X_mj = [p × R ∂_mJ_r e_j; ..]) and the joint's own
    acceleration term [p × α; α], α = R J̇_r φ̇, on φ and φ̇:

        δv_m = −S_m × v_λ + X_m φ̇,
        δa_c = −S_m × a_λ + (v_λ × S_m) × (v_c − v_λ) + v_λ × X_m φ̇ + X_m φ̈ + [p × R ∂_m(J̇_r φ̇); ..],
        β_m = δa_c − δv_m × v_c,   ε_m = −S_m × v_c + v_λ × S_m + [p × R ∂(J̇_r φ̇)/∂φ̇_m; ..]."""
    c = k - column + 2
    d0 = dof[k] - column
    phi, rate, second = q[d0 : d0 + 3], v[d0 : d0 + 3], a[d0 : d0 + 3]
    unit = np.zeros(3)
    unit[column] = 1.0
    x, y, z = np.empty(3), np.empty(3), np.empty(3)
    Xr, Xa, Y = np.empty(6), np.empty(6), np.empty(6)
    expc.right_jacobian_derivative(phi, unit, rate, x)
    _rotate_into(R, c, x, y)
    _at_centre(p, c, y, Xr)  # X_m φ̇
    expc.right_jacobian_derivative(phi, unit, second, x)
    _rotate_into(R, c, x, y)
    _at_centre(p, c, y, Xa)  # X_m φ̈
    expc.right_jacobian_rate_derivative(phi, rate, column, x)
    _rotate_into(R, c, x, y)
    _at_centre(p, c, y, Y)  # [p × R ∂_m(J̇_r φ̇); ..]
    if lam >= 0:
        vl0, vl1, vl2, vl3, vl4, vl5 = _tuple(vel, lam)
    else:
        vl0, vl1, vl2, vl3, vl4, vl5 = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    vc0, vc1, vc2, vc3, vc4, vc5 = _tuple(vel, c)
    s0, s1, s2, s3, s4, s5 = _tuple(S, k)
    ls = _motion_cross(vl0, vl1, vl2, vl3, vl4, vl5, s0, s1, s2, s3, s4, s5)  # v_λ × S_m
    turn = _motion_cross(
        ls[0], ls[1], ls[2], ls[3], ls[4], ls[5], vc0 - vl0, vc1 - vl1, vc2 - vl2, vc3 - vl3, vc4 - vl4, vc5 - vl5
    )  # (v_λ × S_m) × (v_c − v_λ)
    lx = _motion_cross(vl0, vl1, vl2, vl3, vl4, vl5, Xr[0], Xr[1], Xr[2], Xr[3], Xr[4], Xr[5])  # v_λ × X_m φ̇
    # the revolute β = −S × a_λ − δv × v_λ (δv = −S × v_λ): −S × a_λ recovered from it
    rigid = _motion_cross(dv[k, 0], dv[k, 1], dv[k, 2], dv[k, 3], dv[k, 4], dv[k, 5], vl0, vl1, vl2, vl3, vl4, vl5)
    for r in range(6):
        dv[k, r] += Xr[r]
    dvx = _motion_cross(dv[k, 0], dv[k, 1], dv[k, 2], dv[k, 3], dv[k, 4], dv[k, 5], vc0, vc1, vc2, vc3, vc4, vc5)
    for r in range(6):
        beta[k, r] = beta[k, r] + rigid[r] + turn[r] + lx[r] + Xa[r] + Y[r] - dvx[r]
    expc.right_jacobian_derivative(phi, unit, rate, x)  # D[e_m](φ̇)
    expc.right_jacobian_derivative(phi, rate, unit, z)  # D[φ̇](e_m)
    for r in range(3):
        x[r] += z[r]
    _rotate_into(R, c, x, y)
    _at_centre(p, c, y, Y)
    svc = _motion_cross(s0, s1, s2, s3, s4, s5, vc0, vc1, vc2, vc3, vc4, vc5)
    for r in range(6):
        eps[k, r] = -svc[r] + ls[r] + Y[r]


@nb.njit(cache=True)
def _spherical_block(i0, dof, R, p, S, force, q, u, w, beta, dv, eps, dtau_dq, dtau_dv):
    """The 3 × 3 blocks of ∂τ/∂q and ∂τ/∂q̇ among the columns of the spherical joint whose first part is link i0:
    ∂τ_i/∂φ_m = (S_m × S_i + X_mi)ᵀ F_c + S_iᵀ(S_m ×* F_c + Ic β_m + Bc δv_m) = X_miᵀ F_c + u_i·β_m + w_i·δv_m and
    ∂τ_i/∂φ̇_m = w_i·S_m + u_i·ε_m, for every pair (the columns' order in the tree does not enter)."""
    c = i0 + 2
    d0 = dof[i0]
    phi = q[d0 : d0 + 3]
    y, X = np.empty(3), np.empty(6)
    for m in range(3):
        for j in range(3):
            expc.column_derivative(phi, R[c], m, j, y)
            _at_centre(p, c, y, X)
            i, k = i0 + j, i0 + m
            value = 0.0
            for r in range(6):
                value += X[r] * force[c, r]
            dtau_dq[d0 + j, d0 + m] = value + _dot(u, i, beta, k) + _dot(w, i, dv, k)
            dtau_dv[d0 + j, d0 + m] = _dot(w, i, S, k) + _dot(u, i, eps, k)


@nb.njit(cache=True)
def motion_terms(parent, joint_type, dof, axis, R, p, S, vel, acc, q, v, a, gravity, link_acc, dv, beta, eps):
    """The links' spatial accelerations a_i (``link_acc``, a_0 = −[g; 0] at the ground) at q̈ = a, and each joint
    k's δv_k, β_k and ε_k (module docstring; a spherical joint's columns with the terms of its exponential
    coordinates, :func:`_spherical_terms`): under q_k a link j below k has ∂v_j/∂q_k = S_k × v_j + δv_k and
    ∂a_j/∂q_k = S_k × a_j + β_k + δv_k × v_j, under q̇_k ∂a_j/∂q̇_k = S_k × v_j + ε_k (and ∂v_j/∂q̇_k = S_k)."""
    n = parent.shape[0]
    for i in range(n):
        k = parent[i]
        ai = a[dof[i]] if dof[i] >= 0 else 0.0
        for c in range(6):
            base = link_acc[k, c] - acc[k, c] if k >= 0 else (-gravity[c] if c < 3 else 0.0)
            link_acc[i, c] = base + acc[i, c] + S[i, c] * ai
    for k in range(n):
        if dof[k] < 0:
            continue
        spherical = joint_type[k] == SPHERICAL
        column = _column(axis, k) if spherical else 0
        lam = parent[k - column]  # above the joint (a spherical joint's first part's parent)
        s0, s1, s2, s3, s4, s5 = _tuple(S, k)
        if lam >= 0:
            vl = _tuple(vel, lam)
            al = _tuple(link_acc, lam)
        else:
            vl = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
            al = (-gravity[0], -gravity[1], -gravity[2], 0.0, 0.0, 0.0)
        d = _motion_cross(s0, s1, s2, s3, s4, s5, vl[0], vl[1], vl[2], vl[3], vl[4], vl[5])
        e = _motion_cross(s0, s1, s2, s3, s4, s5, al[0], al[1], al[2], al[3], al[4], al[5])
        dd = _motion_cross(-d[0], -d[1], -d[2], -d[3], -d[4], -d[5], vl[0], vl[1], vl[2], vl[3], vl[4], vl[5])
        for c in range(6):
            dv[k, c] = -d[c]
            beta[k, c] = -e[c] - dd[c]
            eps[k, c] = -2.0 * d[c]
        if spherical:
            _spherical_terms(k, column, lam, dof, R, p, S, vel, q, v, a, dv, beta, eps)


@nb.njit(cache=True)
def rnea_derivatives(
    parent, joint_type, dof, axis, R, p, S, vel, acc, inertia_world, q, v, a, gravity, dtau_dq, dtau_dv, M
):
    """∂τ/∂q, ∂τ/∂q̇ and ∂τ/∂q̈ = M (n_dofs, n_dofs) of τ = M a + b + g into ``dtau_dq``, ``dtau_dv``, ``M`` (module
    docstring; M_ik = S_kᵀ Ic_i S_i for k ⪯ i, the composite-rigid-body algorithm), at the kinematics (S, vel, acc
    of :func:`~flexbody.rigid.algorithms.kinematics`, with the links' poses R, p) and world inertias of a state (q, v,
    a); a spherical joint's columns with the terms of its exponential coordinates (:func:`_spherical_terms`)."""
    n = parent.shape[0]
    link_acc = np.empty((n, 6))  # a_i
    dv = np.zeros((n, 6))  # δv_k
    beta = np.zeros((n, 6))  # β_k
    eps = np.zeros((n, 6))  # ε_k = ∂a/∂q̇_k − S_k × a (2 δv_k for a revolute or prismatic joint)
    motion_terms(parent, joint_type, dof, axis, R, p, S, vel, acc, q, v, a, gravity, link_acc, dv, beta, eps)
    force = np.empty((n, 6))  # f_i, then F_i
    composite = np.empty((n, 6, 6))  # Ic_i
    coriolis = np.empty((n, 6, 6))  # B_i, then Bc_i
    momentum = np.empty((n, 6))  # h_i = I_i v_i
    for i in range(n):
        v0, v1, v2, v3, v4, v5 = _tuple(vel, i)
        _matvec(inertia_world, i, vel[i], momentum, i)
        _matvec(inertia_world, i, link_acc[i], force, i)
        h0, h1, h2, h3, h4, h5 = _tuple(momentum, i)
        vxh = _force_cross(v0, v1, v2, v3, v4, v5, h0, h1, h2, h3, h4, h5)
        for c in range(6):
            force[i, c] += vxh[c]
        composite[i] = inertia_world[i]
        _coriolis_matrix(inertia_world, i, vel, momentum, coriolis)
    for i in range(n - 1, -1, -1):
        k = parent[i]
        if k >= 0:
            force[k] += force[i]
            composite[k] += composite[i]
            coriolis[k] += coriolis[i]
    u = np.zeros((n, 6))  # Ic_i S_i
    w = np.zeros((n, 6))  # Bc_iᵀ S_i
    G = np.zeros((n, 6))  # S_k ×* F_k + Ic_k β_k + Bc_k δv_k
    Gv = np.zeros((n, 6))  # Bc_k S_k + Ic_k ε_k
    tmp = np.zeros((1, 6))
    for k in range(n):
        if dof[k] < 0:
            continue
        s0, s1, s2, s3, s4, s5 = _tuple(S, k)
        _matvec(composite, k, S[k], u, k)
        for c in range(6):
            s = 0.0
            for r in range(6):
                s += coriolis[k, r, c] * S[k, r]
            w[k, c] = s
        F0, F1, F2, F3, F4, F5 = _tuple(force, k)
        f = _force_cross(s0, s1, s2, s3, s4, s5, F0, F1, F2, F3, F4, F5)
        _matvec(composite, k, beta[k], G, k)
        _matvec(coriolis, k, dv[k], tmp, 0)
        for c in range(6):
            G[k, c] += f[c] + tmp[0, c]
        _matvec(coriolis, k, S[k], Gv, k)
        _matvec(composite, k, eps[k], tmp, 0)
        for c in range(6):
            Gv[k, c] += tmp[0, c]
    dtau_dq[:, :] = 0.0
    dtau_dv[:, :] = 0.0
    M[:, :] = 0.0
    for i in range(n):
        di = dof[i]
        if di < 0:
            continue
        dtau_dq[di, di] = _dot(u, i, beta, i) + _dot(w, i, dv, i)
        dtau_dv[di, di] = _dot(w, i, S, i) + _dot(u, i, eps, i)
        M[di, di] = _dot(S, i, u, i)
        k = parent[i]
        while k >= 0:  # the ancestors k ≺ i
            dk = dof[k]
            if dk >= 0:
                dtau_dq[di, dk] = _dot(u, i, beta, k) + _dot(w, i, dv, k)
                dtau_dv[di, dk] = _dot(w, i, S, k) + _dot(u, i, eps, k)
                dtau_dq[dk, di] = _dot(S, k, G, i)
                dtau_dv[dk, di] = _dot(S, k, Gv, i)
                M[di, dk] = M[dk, di] = _dot(S, k, u, i)
            k = parent[k]
    for i in range(n):  # the blocks of a spherical joint's own columns
        if joint_type[i] == SPHERICAL and _column(axis, i) == 0:
            _spherical_block(i, dof, R, p, S, force, q, u, w, beta, dv, eps, dtau_dq, dtau_dv)
    return True
