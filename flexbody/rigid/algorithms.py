"""Recursive rigid-tree algorithms on flat arrays: kinematics, CRBA mass matrix, RNEA forces.

All spatial quantities are expressed in the **world frame, at the world origin**, linear part first:
a motion vector is [v_O; ω] (v_O: velocity of the body point passing through the world origin) and a
force vector is [f; n_O] (n_O: moment about the world origin). In this frame no coordinate transforms
are needed between links, the tree recursions reduce to sums (Featherstone, *Rigid Body Dynamics
Algorithms*, ch. 2 and 5–6, written in absolute coordinates), and [DE-2] τ = M(q)q̈ + b(q, q̇) + g(q)
follows from

    v_i = v_λ(i) + S_i q̇_i,       a_i = a_λ(i) + S_i q̈_i + v_i × S_i q̇_i           (forward pass)
    f_i = I_i (a_i − a_g) + v_i ×* I_i v_i,   f_λ(i) += f_i,   τ_i = S_iᵀ f_i         (RNEA backward)
    Ic_i = I_i + Σ_children Ic_c,   M_ij = S_iᵀ Ic_j S_j  (j ancestor of i)            (CRBA)

with a_g = [g; 0] the gravity acceleration (the ground accelerates by −g). Links are stored in
topological order (parent index < link index); joint types: 0 fixed, 1 revolute, 2 prismatic, 3 one column
of a spherical joint (three consecutive massless-then-carrier links with axes e_0, e_1, e_2 and coordinates
φ (3,): the first part turns by exp([φ]×), the others add no motion of their own; each part's S is column
k of the joint's motion subspace [p × w_k; w_k], w_k = R J_r(φ) e_k, and the last part adds the joint's
velocity-product acceleration v_λ × (S φ̇) + [p × α; α], α = R J̇_r(φ) φ̇ — the parts' own v × S q̇ terms do
not apply, since S depends on φ; :mod:`flexbody.rigid.exponential_coordinates`).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from . import exponential_coordinates as expc
from .exponential_coordinates import cross3 as _cross

FIXED, REVOLUTE, PRISMATIC, SPHERICAL = 0, 1, 2, 3


@nb.njit(cache=True)
def _motion_cross(v, m, out):
    """out = v × m for motion vectors (linear first): [ω×u + v×w; ω×w]."""
    c0, c1, c2 = _cross(v[3], v[4], v[5], m[0], m[1], m[2])
    d0, d1, d2 = _cross(v[0], v[1], v[2], m[3], m[4], m[5])
    out[0], out[1], out[2] = c0 + d0, c1 + d1, c2 + d2
    out[3], out[4], out[5] = _cross(v[3], v[4], v[5], m[3], m[4], m[5])


@nb.njit(cache=True)
def _force_cross(v, f, out):
    """out = v ×* f for a force vector f = [f; n]: [ω×f; ω×n + v×f]."""
    out[0], out[1], out[2] = _cross(v[3], v[4], v[5], f[0], f[1], f[2])
    c0, c1, c2 = _cross(v[3], v[4], v[5], f[3], f[4], f[5])
    d0, d1, d2 = _cross(v[0], v[1], v[2], f[0], f[1], f[2])
    out[3], out[4], out[5] = c0 + d0, c1 + d1, c2 + d2


@nb.njit(cache=True)
def _axis_rotation(axis, angle, out):
    """Rodrigues: rotation by ``angle`` about the unit ``axis``."""
    c, s = np.cos(angle), np.sin(angle)
    t = 1.0 - c
    x, y, z = axis[0], axis[1], axis[2]
    out[0, 0], out[0, 1], out[0, 2] = t * x * x + c, t * x * y - s * z, t * x * z + s * y
    out[1, 0], out[1, 1], out[1, 2] = t * x * y + s * z, t * y * y + c, t * y * z - s * x
    out[2, 0], out[2, 1], out[2, 2] = t * x * z - s * y, t * y * z + s * x, t * z * z + c


@nb.njit(cache=True)
def kinematics(parent, joint_type, axis, R_placement, p_placement, dof, q, v, R, p, S, vel, acc):
    """Forward kinematics with velocities and velocity-product accelerations (q̈ = 0, no gravity).

    Fills, per link i: rotation R[i] (3, 3) and origin p[i] (3,) of the link frame in the world; motion
    subspace S[i] (6,) of its joint in world coordinates (zero for fixed joints); spatial velocity vel[i]
    and bias acceleration acc[i] = Σ_ancestors v × S q̇ (the J̇q̇ of the link's spatial acceleration).
    Written with scalar loops (no temporaries): the kernel is called at every evaluation.
    """
    n_links = parent.shape[0]
    R_joint = np.empty((3, 3))
    R_local = np.empty((3, 3))
    p_local = np.empty(3)
    Sq = np.empty(6)
    vSq = np.empty(6)
    w = np.empty(3)
    for i in range(n_links):
        jt = joint_type[i]
        qi = q[dof[i]] if dof[i] >= 0 else 0.0
        qdi = v[dof[i]] if dof[i] >= 0 else 0.0
        column = -1
        if jt == SPHERICAL:
            column = 0 if axis[i, 0] > 0.5 else (1 if axis[i, 1] > 0.5 else 2)
        if jt == REVOLUTE:
            _axis_rotation(axis[i], qi, R_joint)
            _matmul3(R_placement[i], R_joint, R_local)
        elif column == 0:
            d0 = dof[i]
            expc.rotation(q[d0], q[d0 + 1], q[d0 + 2], R_joint)
            _matmul3(R_placement[i], R_joint, R_local)
        else:
            R_local[:, :] = R_placement[i]
        for a in range(3):
            p_local[a] = p_placement[i, a]
        if jt == PRISMATIC:
            for a in range(3):
                for b in range(3):
                    p_local[a] += R_placement[i, a, b] * axis[i, b] * qi
        k = parent[i]
        if k < 0:
            R[i] = R_local
            p[i] = p_local
            vel[i, :] = 0.0
            acc[i, :] = 0.0
        else:
            _matmul3(R[k], R_local, R[i])
            for a in range(3):
                p[i, a] = p[k, a] + R[k, a, 0] * p_local[0] + R[k, a, 1] * p_local[1] + R[k, a, 2] * p_local[2]
            vel[i] = vel[k]
            acc[i] = acc[k]
        S[i, :] = 0.0
        if column >= 0:
            _spherical_part(i, column, parent, dof, q, v, R, p, S, vel, acc, w)
        elif jt != FIXED:
            z0 = R[i, 0, 0] * axis[i, 0] + R[i, 0, 1] * axis[i, 1] + R[i, 0, 2] * axis[i, 2]
            z1 = R[i, 1, 0] * axis[i, 0] + R[i, 1, 1] * axis[i, 1] + R[i, 1, 2] * axis[i, 2]
            z2 = R[i, 2, 0] * axis[i, 0] + R[i, 2, 1] * axis[i, 1] + R[i, 2, 2] * axis[i, 2]
            if jt == REVOLUTE:
                S[i, 0], S[i, 1], S[i, 2] = _cross(p[i, 0], p[i, 1], p[i, 2], z0, z1, z2)
                S[i, 3], S[i, 4], S[i, 5] = z0, z1, z2
            else:
                S[i, 0], S[i, 1], S[i, 2] = z0, z1, z2
            for a in range(6):
                Sq[a] = S[i, a] * qdi
                vel[i, a] += Sq[a]
            _motion_cross(vel[i], Sq, vSq)
            for a in range(6):
                acc[i, a] += vSq[a]


@nb.njit(cache=True)
def _spherical_part(i, column, parent, dof, q, v, R, p, S, vel, acc, w):
    """Column ``column`` of a spherical joint at link i (module docstring): S[i], vel[i] += S φ̇_k and, at the
    last part, acc[i] += v_λ × (S φ̇) + [p × α; α]."""
    d0 = dof[i] - column
    p0, p1, p2 = q[d0], q[d0 + 1], q[d0 + 2]
    expc.right_jacobian_column(p0, p1, p2, column, w)
    z0 = R[i, 0, 0] * w[0] + R[i, 0, 1] * w[1] + R[i, 0, 2] * w[2]
    z1 = R[i, 1, 0] * w[0] + R[i, 1, 1] * w[1] + R[i, 1, 2] * w[2]
    z2 = R[i, 2, 0] * w[0] + R[i, 2, 1] * w[1] + R[i, 2, 2] * w[2]
    S[i, 0], S[i, 1], S[i, 2] = _cross(p[i, 0], p[i, 1], p[i, 2], z0, z1, z2)
    S[i, 3], S[i, 4], S[i, 5] = z0, z1, z2
    rate = v[dof[i]]
    for a in range(6):
        vel[i, a] += S[i, a] * rate
    if column < 2:
        return
    first = i - 2
    lam = parent[first]
    joint_vel = np.empty(6)  # S φ̇ of the whole joint
    v_lam = np.zeros(6)
    for a in range(6):
        if lam >= 0:
            v_lam[a] = vel[lam, a]
        joint_vel[a] = vel[i, a] - v_lam[a]
    cross = np.empty(6)
    _motion_cross(v_lam, joint_vel, cross)
    expc.right_jacobian_rate(p0, p1, p2, v[d0], v[d0 + 1], v[d0 + 2], w)
    a0 = R[i, 0, 0] * w[0] + R[i, 0, 1] * w[1] + R[i, 0, 2] * w[2]
    a1 = R[i, 1, 0] * w[0] + R[i, 1, 1] * w[1] + R[i, 1, 2] * w[2]
    a2 = R[i, 2, 0] * w[0] + R[i, 2, 1] * w[1] + R[i, 2, 2] * w[2]
    l0, l1, l2 = _cross(p[i, 0], p[i, 1], p[i, 2], a0, a1, a2)
    acc[i, 0] += cross[0] + l0
    acc[i, 1] += cross[1] + l1
    acc[i, 2] += cross[2] + l2
    acc[i, 3] += cross[3] + a0
    acc[i, 4] += cross[4] + a1
    acc[i, 5] += cross[5] + a2


@nb.njit(cache=True, inline="always")
def _matmul3(A, B, out):
    for a in range(3):
        for b in range(3):
            out[a, b] = A[a, 0] * B[0, b] + A[a, 1] * B[1, b] + A[a, 2] * B[2, b]


@nb.njit(cache=True, inline="always")
def _matvec6(A, x, out):
    for a in range(6):
        s = 0.0
        for b in range(6):
            s += A[a, b] * x[b]
        out[a] = s


@nb.njit(cache=True, inline="always")
def _dot6(x, y):
    s = 0.0
    for a in range(6):
        s += x[a] * y[a]
    return s


@nb.njit(cache=True)
def world_inertias(R, p, mass, com, inertia, out):
    """Spatial inertias (6, 6) of every link in world coordinates at the world origin (linear first).

    I = [[m 1, m [c]×ᵀ], [m [c]×, I_c + m [c]× [c]×ᵀ]] with c the world centre of mass and
    I_c = R I_link Rᵀ the rotational inertia about it.
    """
    n_links = R.shape[0]
    for i in range(n_links):
        m = mass[i]
        c0 = p[i, 0] + R[i, 0, 0] * com[i, 0] + R[i, 0, 1] * com[i, 1] + R[i, 0, 2] * com[i, 2]
        c1 = p[i, 1] + R[i, 1, 0] * com[i, 0] + R[i, 1, 1] * com[i, 1] + R[i, 1, 2] * com[i, 2]
        c2 = p[i, 2] + R[i, 2, 0] * com[i, 0] + R[i, 2, 1] * com[i, 1] + R[i, 2, 2] * com[i, 2]
        # m [c]× and m [c]×[c]×ᵀ = m (|c|² 1 − c cᵀ)
        out[i, :, :] = 0.0
        for a in range(3):
            out[i, a, a] = m
        out[i, 3, 1], out[i, 3, 2] = -m * c2, m * c1
        out[i, 4, 0], out[i, 4, 2] = m * c2, -m * c0
        out[i, 5, 0], out[i, 5, 1] = -m * c1, m * c0
        for a in range(3):
            for b in range(3):
                out[i, b, 3 + a] = out[i, 3 + a, b]
        cc = c0 * c0 + c1 * c1 + c2 * c2
        c = (c0, c1, c2)
        for a in range(3):
            for b in range(3):
                s = 0.0
                for k in range(3):
                    for l in range(3):
                        s += R[i, a, k] * inertia[i, k, l] * R[i, b, l]
                out[i, 3 + a, 3 + b] = s - m * c[a] * c[b] + (m * cc if a == b else 0.0)


@nb.njit(cache=True)
def point_terms(R, p, S, vel, acc, support, link_index, offsets, X, Xd, J, B):
    """Positions X (k, 3), velocities Xd (k, 3), Jacobians J (k, 3, n_dofs) and bias accelerations
    B (k, 3) = J̇q̇ of k points (``offsets`` in the frames of links ``link_index``), world axes.

    ``support`` (n_links, n_dofs) holds, for each link, the link index moving each coordinate on its
    path to the ground, or −1. Point velocity Jacobian column: S_lin + S_ang × x; bias acceleration:
    a_O + α × x + ω × ẋ with (a_O, α) the link's velocity-product spatial acceleration.
    """
    n_dofs = support.shape[1]
    for k in range(link_index.shape[0]):
        i = link_index[k]
        o = offsets[k]
        x0 = p[i, 0] + R[i, 0, 0] * o[0] + R[i, 0, 1] * o[1] + R[i, 0, 2] * o[2]
        x1 = p[i, 1] + R[i, 1, 0] * o[0] + R[i, 1, 1] * o[1] + R[i, 1, 2] * o[2]
        x2 = p[i, 2] + R[i, 2, 0] * o[0] + R[i, 2, 1] * o[1] + R[i, 2, 2] * o[2]
        X[k, 0], X[k, 1], X[k, 2] = x0, x1, x2
        w0, w1, w2 = vel[i, 3], vel[i, 4], vel[i, 5]
        c0, c1, c2 = _cross(w0, w1, w2, x0, x1, x2)
        v0, v1, v2 = vel[i, 0] + c0, vel[i, 1] + c1, vel[i, 2] + c2
        Xd[k, 0], Xd[k, 1], Xd[k, 2] = v0, v1, v2
        a0, a1, a2 = _cross(acc[i, 3], acc[i, 4], acc[i, 5], x0, x1, x2)
        b0, b1, b2 = _cross(w0, w1, w2, v0, v1, v2)
        B[k, 0], B[k, 1], B[k, 2] = acc[i, 0] + a0 + b0, acc[i, 1] + a1 + b1, acc[i, 2] + a2 + b2
        for j in range(n_dofs):
            l = support[i, j]
            if l < 0:
                J[k, 0, j] = 0.0
                J[k, 1, j] = 0.0
                J[k, 2, j] = 0.0
            else:
                d0, d1, d2 = _cross(S[l, 3], S[l, 4], S[l, 5], x0, x1, x2)
                J[k, 0, j] = S[l, 0] + d0
                J[k, 1, j] = S[l, 1] + d1
                J[k, 2, j] = S[l, 2] + d2


@nb.njit(cache=True)
def mass_matrix(parent, dof, S, inertia_world, n_dofs, composite, M):
    """Composite-rigid-body algorithm: joint-space mass matrix M (n_dofs, n_dofs)."""
    n_links = parent.shape[0]
    composite[:, :, :] = inertia_world
    for i in range(n_links - 1, -1, -1):
        k = parent[i]
        if k >= 0:
            for a in range(6):
                for b in range(6):
                    composite[k, a, b] += composite[i, a, b]
    M[:, :] = 0.0
    F = np.empty(6)
    for i in range(n_links):
        di = dof[i]
        if di < 0:
            continue
        _matvec6(composite[i], S[i], F)
        M[di, di] = _dot6(S[i], F)
        j = parent[i]
        while j >= 0:
            dj = dof[j]
            if dj >= 0:
                mij = _dot6(S[j], F)
                M[di, dj] = mij
                M[dj, di] = mij
            j = parent[j]


@nb.njit(cache=True)
def inverse_dynamics(parent, dof, S, vel, acc, inertia_world, a, gravity, forces, tau):
    """Recursive Newton–Euler: τ = M a + b + g for the given joint accelerations ``a``.

    ``acc`` holds the velocity-product accelerations of :func:`kinematics`; pass a = 0 for τ = b + g,
    vel = 0 and acc = 0 for g alone, gravity = 0 for b alone. ``forces`` (n_links, 6) is workspace and
    returns the spatial force transmitted by each joint (world coordinates, at the origin).
    """
    n_links = parent.shape[0]
    a_link = np.empty((n_links, 6))
    Iv = np.empty(6)
    Ia = np.empty(6)
    vxIv = np.empty(6)
    for i in range(n_links):
        k = parent[i]
        ai = a[dof[i]] if dof[i] >= 0 else 0.0
        for c in range(6):
            if k >= 0:
                a_link[i, c] = a_link[k, c] + (acc[i, c] - acc[k, c]) + S[i, c] * ai
            else:
                a_link[i, c] = acc[i, c] + S[i, c] * ai
        if k < 0:
            for c in range(3):
                a_link[i, c] -= gravity[c]
    for i in range(n_links):
        _matvec6(inertia_world[i], vel[i], Iv)
        _force_cross(vel[i], Iv, vxIv)
        _matvec6(inertia_world[i], a_link[i], Ia)
        for c in range(6):
            forces[i, c] = Ia[c] + vxIv[c]
    for i in range(n_links - 1, -1, -1):
        k = parent[i]
        if dof[i] >= 0:
            tau[dof[i]] = _dot6(S[i], forces[i])
        if k >= 0:
            for c in range(6):
                forces[k, c] += forces[i, c]
