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


@nb.njit(cache=True, inline="always")
def _motion_cross(v0, v1, v2, v3, v4, v5, m0, m1, m2, m3, m4, m5):
    """v × m for motion vectors (linear first): [ω×u + v×w; ω×w], as a 6-tuple."""
    c0, c1, c2 = _cross(v3, v4, v5, m0, m1, m2)
    d0, d1, d2 = _cross(v0, v1, v2, m3, m4, m5)
    e0, e1, e2 = _cross(v3, v4, v5, m3, m4, m5)
    return c0 + d0, c1 + d1, c2 + d2, e0, e1, e2


@nb.njit(cache=True, inline="always")
def _force_cross(v0, v1, v2, v3, v4, v5, f0, f1, f2, f3, f4, f5):
    """v ×* f for a force vector f = [f; n]: [ω×f; ω×n + v×f], as a 6-tuple."""
    c0, c1, c2 = _cross(v3, v4, v5, f0, f1, f2)
    d0, d1, d2 = _cross(v3, v4, v5, f3, f4, f5)
    e0, e1, e2 = _cross(v0, v1, v2, f0, f1, f2)
    return c0, c1, c2, d0 + e0, d1 + e1, d2 + e2


@nb.njit(cache=True, inline="always")
def _axis_rotation(x, y, z, angle):
    """Rodrigues: the entries, row by row, of the rotation by ``angle`` about the unit axis (x, y, z)."""
    c, s = np.cos(angle), np.sin(angle)
    t = 1.0 - c
    return (
        t * x * x + c,
        t * x * y - s * z,
        t * x * z + s * y,
        t * x * y + s * z,
        t * y * y + c,
        t * y * z - s * x,
        t * x * z - s * y,
        t * y * z + s * x,
        t * z * z + c,
    )


@nb.njit(cache=True, inline="always")
def _place(i, k, R_placement, p_placement, R, p):
    """R[i] = R[k] R_placement[i], p[i] = p[k] + R[k] p_placement[i] (the placement alone for a root, k < 0)."""
    if k < 0:
        for a in range(3):
            p[i, a] = p_placement[i, a]
            for b in range(3):
                R[i, a, b] = R_placement[i, a, b]
        return
    for a in range(3):
        r0, r1, r2 = R[k, a, 0], R[k, a, 1], R[k, a, 2]
        p[i, a] = p[k, a] + r0 * p_placement[i, 0] + r1 * p_placement[i, 1] + r2 * p_placement[i, 2]
        for b in range(3):
            R[i, a, b] = r0 * R_placement[i, 0, b] + r1 * R_placement[i, 1, b] + r2 * R_placement[i, 2, b]


@nb.njit(cache=True, inline="always")
def _rotate(R, i, r):
    """R[i] ← R[i] r for the rotation r given by its entries row by row (a 9-tuple)."""
    for a in range(3):
        b0, b1, b2 = R[i, a, 0], R[i, a, 1], R[i, a, 2]
        R[i, a, 0] = b0 * r[0] + b1 * r[3] + b2 * r[6]
        R[i, a, 1] = b0 * r[1] + b1 * r[4] + b2 * r[7]
        R[i, a, 2] = b0 * r[2] + b1 * r[5] + b2 * r[8]


@nb.njit(cache=True)
def kinematics(parent, joint_type, axis, R_placement, p_placement, dof, q, v, R, p, S, vel, acc):
    """Forward kinematics with velocities and velocity-product accelerations (q̈ = 0, no gravity).

    Fills, per link i: rotation R[i] (3, 3) and origin p[i] (3,) of the link frame in the world; motion
    subspace S[i] (6,) of its joint in world coordinates (zero for fixed joints); spatial velocity vel[i]
    and bias acceleration acc[i] = Σ_ancestors v × S q̇ (the J̇q̇ of the link's spatial acceleration).
    Written with scalar loops and no temporaries (nothing is allocated for revolute, prismatic and fixed
    joints): the kernel is called at every evaluation.
    """
    n_links = parent.shape[0]
    for i in range(n_links):
        jt = joint_type[i]
        d = dof[i]
        qi = q[d] if d >= 0 else 0.0
        qdi = v[d] if d >= 0 else 0.0
        k = parent[i]
        # pose: R[i] = R[k] R_placement R_joint(q_i), p[i] = p[k] + R[k] (p_placement + R_placement e q_i)
        _place(i, k, R_placement, p_placement, R, p)
        if jt == REVOLUTE:
            _rotate(R, i, _axis_rotation(axis[i, 0], axis[i, 1], axis[i, 2], qi))
        elif jt == SPHERICAL and axis[i, 0] > 0.5:  # the first part turns by exp([φ]×)
            _rotate(R, i, expc.rotation_entries(q[d], q[d + 1], q[d + 2]))
        # the joint axis in world axes (R[i] e = R[k] R_placement e for a prismatic joint)
        z0 = R[i, 0, 0] * axis[i, 0] + R[i, 0, 1] * axis[i, 1] + R[i, 0, 2] * axis[i, 2]
        z1 = R[i, 1, 0] * axis[i, 0] + R[i, 1, 1] * axis[i, 1] + R[i, 1, 2] * axis[i, 2]
        z2 = R[i, 2, 0] * axis[i, 0] + R[i, 2, 1] * axis[i, 1] + R[i, 2, 2] * axis[i, 2]
        if jt == PRISMATIC:
            p[i, 0] += z0 * qi
            p[i, 1] += z1 * qi
            p[i, 2] += z2 * qi
        for a in range(6):
            vel[i, a] = vel[k, a] if k >= 0 else 0.0
            acc[i, a] = acc[k, a] if k >= 0 else 0.0
        if jt == SPHERICAL:
            column = 0 if axis[i, 0] > 0.5 else (1 if axis[i, 1] > 0.5 else 2)
            _spherical_part(i, column, parent, dof, q, v, R, p, S, vel, acc)
            continue
        if jt == FIXED:
            for a in range(6):
                S[i, a] = 0.0
            continue
        if jt == REVOLUTE:  # S = [p × z; z]
            s0, s1, s2 = _cross(p[i, 0], p[i, 1], p[i, 2], z0, z1, z2)
            s3, s4, s5 = z0, z1, z2
        else:  # S = [z; 0]
            s0, s1, s2, s3, s4, s5 = z0, z1, z2, 0.0, 0.0, 0.0
        S[i, 0], S[i, 1], S[i, 2], S[i, 3], S[i, 4], S[i, 5] = s0, s1, s2, s3, s4, s5
        # v_i = v_λ + S q̇,  a_i += v_i × S q̇
        m0, m1, m2, m3, m4, m5 = s0 * qdi, s1 * qdi, s2 * qdi, s3 * qdi, s4 * qdi, s5 * qdi
        vel[i, 0] += m0
        vel[i, 1] += m1
        vel[i, 2] += m2
        vel[i, 3] += m3
        vel[i, 4] += m4
        vel[i, 5] += m5
        c = _motion_cross(vel[i, 0], vel[i, 1], vel[i, 2], vel[i, 3], vel[i, 4], vel[i, 5], m0, m1, m2, m3, m4, m5)
        for a in range(6):
            acc[i, a] += c[a]


@nb.njit(cache=True)
def _spherical_part(i, column, parent, dof, q, v, R, p, S, vel, acc):
    """Column ``column`` of a spherical joint at link i (module docstring): S[i], vel[i] += S φ̇_k and, at the
    last part, acc[i] += v_λ × (S φ̇) + [p × α; α]."""
    d0 = dof[i] - column
    p0, p1, p2 = q[d0], q[d0 + 1], q[d0 + 2]
    w = np.empty(3)
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
    lam = parent[i - 2]  # the parent of the joint's first part
    v_lam = np.zeros(6)
    joint_vel = np.empty(6)  # S φ̇ of the whole joint
    for a in range(6):
        if lam >= 0:
            v_lam[a] = vel[lam, a]
        joint_vel[a] = vel[i, a] - v_lam[a]
    cross = _motion_cross(
        v_lam[0], v_lam[1], v_lam[2], v_lam[3], v_lam[4], v_lam[5],
        joint_vel[0], joint_vel[1], joint_vel[2], joint_vel[3], joint_vel[4], joint_vel[5],
    )  # fmt: skip
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
def _apply6(A, i, x0, x1, x2, x3, x4, x5):
    """A[i] x (a 6-tuple) for the symmetric (6, 6) matrix A[i], read from its upper triangle, and x given by its
    entries."""
    return (
        A[i, 0, 0] * x0 + A[i, 0, 1] * x1 + A[i, 0, 2] * x2 + A[i, 0, 3] * x3 + A[i, 0, 4] * x4 + A[i, 0, 5] * x5,
        A[i, 0, 1] * x0 + A[i, 1, 1] * x1 + A[i, 1, 2] * x2 + A[i, 1, 3] * x3 + A[i, 1, 4] * x4 + A[i, 1, 5] * x5,
        A[i, 0, 2] * x0 + A[i, 1, 2] * x1 + A[i, 2, 2] * x2 + A[i, 2, 3] * x3 + A[i, 2, 4] * x4 + A[i, 2, 5] * x5,
        A[i, 0, 3] * x0 + A[i, 1, 3] * x1 + A[i, 2, 3] * x2 + A[i, 3, 3] * x3 + A[i, 3, 4] * x4 + A[i, 3, 5] * x5,
        A[i, 0, 4] * x0 + A[i, 1, 4] * x1 + A[i, 2, 4] * x2 + A[i, 3, 4] * x3 + A[i, 4, 4] * x4 + A[i, 4, 5] * x5,
        A[i, 0, 5] * x0 + A[i, 1, 5] * x1 + A[i, 2, 5] * x2 + A[i, 3, 5] * x3 + A[i, 4, 5] * x4 + A[i, 5, 5] * x5,
    )


@nb.njit(cache=True)
def world_inertias(R, p, mass, com, inertia, out):
    """Spatial inertias (6, 6) of every link in world coordinates at the world origin (linear first).

    I = [[m 1, m [c]×ᵀ], [m [c]×, I_c + m [c]× [c]×ᵀ]] with c the world centre of mass and
    I_c = R I_link Rᵀ the rotational inertia about it, formed as two 3 × 3 products (A = R I_link, then the
    upper triangle of A Rᵀ, mirrored: exactly symmetric).
    """
    n_links = R.shape[0]
    for i in range(n_links):
        m = mass[i]
        c0 = p[i, 0] + R[i, 0, 0] * com[i, 0] + R[i, 0, 1] * com[i, 1] + R[i, 0, 2] * com[i, 2]
        c1 = p[i, 1] + R[i, 1, 0] * com[i, 0] + R[i, 1, 1] * com[i, 1] + R[i, 1, 2] * com[i, 2]
        c2 = p[i, 2] + R[i, 2, 0] * com[i, 0] + R[i, 2, 1] * com[i, 1] + R[i, 2, 2] * com[i, 2]
        # m 1 and m [c]× (lower left), m [c]×ᵀ (upper right)
        for a in range(3):
            for b in range(3):
                out[i, a, b] = m if a == b else 0.0
        out[i, 3, 0], out[i, 3, 1], out[i, 3, 2] = 0.0, -m * c2, m * c1
        out[i, 4, 0], out[i, 4, 1], out[i, 4, 2] = m * c2, 0.0, -m * c0
        out[i, 5, 0], out[i, 5, 1], out[i, 5, 2] = -m * c1, m * c0, 0.0
        for a in range(3):
            for b in range(3):
                out[i, b, 3 + a] = out[i, 3 + a, b]
        # I_c + m [c]×[c]×ᵀ = R I_link Rᵀ + m (|c|² 1 − c cᵀ)
        cc = c0 * c0 + c1 * c1 + c2 * c2
        c = (c0, c1, c2)
        for a in range(3):
            r0, r1, r2 = R[i, a, 0], R[i, a, 1], R[i, a, 2]
            A0 = r0 * inertia[i, 0, 0] + r1 * inertia[i, 1, 0] + r2 * inertia[i, 2, 0]
            A1 = r0 * inertia[i, 0, 1] + r1 * inertia[i, 1, 1] + r2 * inertia[i, 2, 1]
            A2 = r0 * inertia[i, 0, 2] + r1 * inertia[i, 1, 2] + r2 * inertia[i, 2, 2]
            for b in range(a, 3):
                value = A0 * R[i, b, 0] + A1 * R[i, b, 1] + A2 * R[i, b, 2] - m * c[a] * c[b]
                if a == b:
                    value += m * cc
                out[i, 3 + a, 3 + b] = value
                out[i, 3 + b, 3 + a] = value


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
def frame_terms(R, p, S, vel, acc, support, i, offset, J, bias):
    """Jacobian J (6, n_dofs) = [velocity of the frame origin; angular velocity] and bias J̇v (6,) = [classical
    acceleration of the origin; angular acceleration] at v̇ = 0 of the frame at ``offset`` (3,) (link axes) on link
    i, world axes (Pinocchio's LOCAL_WORLD_ALIGNED): the point formulas of :func:`point_terms` at the origin x, with
    the angular rows S_ang of the supporting joints and the link's α."""
    x0 = p[i, 0] + R[i, 0, 0] * offset[0] + R[i, 0, 1] * offset[1] + R[i, 0, 2] * offset[2]
    x1 = p[i, 1] + R[i, 1, 0] * offset[0] + R[i, 1, 1] * offset[1] + R[i, 1, 2] * offset[2]
    x2 = p[i, 2] + R[i, 2, 0] * offset[0] + R[i, 2, 1] * offset[1] + R[i, 2, 2] * offset[2]
    w0, w1, w2 = vel[i, 3], vel[i, 4], vel[i, 5]
    c0, c1, c2 = _cross(w0, w1, w2, x0, x1, x2)
    a0, a1, a2 = _cross(acc[i, 3], acc[i, 4], acc[i, 5], x0, x1, x2)
    b0, b1, b2 = _cross(w0, w1, w2, vel[i, 0] + c0, vel[i, 1] + c1, vel[i, 2] + c2)
    bias[0], bias[1], bias[2] = acc[i, 0] + a0 + b0, acc[i, 1] + a1 + b1, acc[i, 2] + a2 + b2
    bias[3], bias[4], bias[5] = acc[i, 3], acc[i, 4], acc[i, 5]
    for j in range(support.shape[1]):
        l = support[i, j]
        if l < 0:
            for r in range(6):
                J[r, j] = 0.0
        else:
            d0, d1, d2 = _cross(S[l, 3], S[l, 4], S[l, 5], x0, x1, x2)
            J[0, j], J[1, j], J[2, j] = S[l, 0] + d0, S[l, 1] + d1, S[l, 2] + d2
            J[3, j], J[4, j], J[5, j] = S[l, 3], S[l, 4], S[l, 5]


@nb.njit(cache=True)
def mass_matrix(parent, dof, S, inertia_world, n_dofs, composite, M):
    """Composite-rigid-body algorithm: joint-space mass matrix M (n_dofs, n_dofs).

    Ic_i = I_i + Σ_children Ic_c, then F = Ic_i S_i and M_ij = S_jᵀ F for i and every ancestor j (module
    docstring); ``composite`` (n_links, 6, 6) is workspace whose upper triangles return the composite inertias
    Ic (the inertias are symmetric: 21 of the 36 entries are summed, and scalar loops copy and clear, which
    measured 2.6 against 4.6 µs with slice assignments and full sums on the 38-link benchmark tree).
    """
    n_links = parent.shape[0]
    for i in range(n_links):
        for a in range(6):
            for b in range(a, 6):
                composite[i, a, b] = inertia_world[i, a, b]
    for i in range(n_links - 1, -1, -1):
        k = parent[i]
        if k >= 0:
            for a in range(6):
                for b in range(a, 6):
                    composite[k, a, b] += composite[i, a, b]
    for i in range(n_dofs):
        for j in range(n_dofs):
            M[i, j] = 0.0
    for i in range(n_links):
        di = dof[i]
        if di < 0:
            continue
        F0, F1, F2, F3, F4, F5 = _apply6(composite, i, S[i, 0], S[i, 1], S[i, 2], S[i, 3], S[i, 4], S[i, 5])
        j = i
        while j >= 0:
            dj = dof[j]
            if dj >= 0:
                mij = S[j, 0] * F0 + S[j, 1] * F1 + S[j, 2] * F2 + S[j, 3] * F3 + S[j, 4] * F4 + S[j, 5] * F5
                M[di, dj] = mij
                M[dj, di] = mij
            j = parent[j]


@nb.njit(cache=True)
def inverse_dynamics(parent, dof, S, vel, acc, inertia_world, a, gravity, forces, tau):
    """Recursive Newton–Euler: τ = M a + b + g for the given joint accelerations ``a``.

    ``acc`` holds the velocity-product accelerations of :func:`kinematics`; pass a = 0 for τ = b + g,
    vel = 0 and acc = 0 for g alone, gravity = 0 for b alone. ``forces`` (n_links, 6) is workspace and
    returns the spatial force transmitted by each joint (world coordinates, at the origin). Nothing is
    allocated: the link accelerations are held in ``forces`` until each is turned into its force.
    """
    n_links = parent.shape[0]
    # a_i = a_λ(i) + (acc_i − acc_λ(i)) + S_i q̈_i, the ground accelerating by −g (module docstring)
    for i in range(n_links):
        k = parent[i]
        ai = a[dof[i]] if dof[i] >= 0 else 0.0
        if k >= 0:
            for c in range(6):
                forces[i, c] = forces[k, c] + (acc[i, c] - acc[k, c]) + S[i, c] * ai
        else:
            for c in range(6):
                forces[i, c] = acc[i, c] + S[i, c] * ai
            for c in range(3):
                forces[i, c] -= gravity[c]
    # f_i = I_i a_i + v_i ×* I_i v_i
    for i in range(n_links):
        v0, v1, v2, v3, v4, v5 = vel[i, 0], vel[i, 1], vel[i, 2], vel[i, 3], vel[i, 4], vel[i, 5]
        h0, h1, h2, h3, h4, h5 = _apply6(inertia_world, i, v0, v1, v2, v3, v4, v5)
        vxIv = _force_cross(v0, v1, v2, v3, v4, v5, h0, h1, h2, h3, h4, h5)
        Ia = _apply6(
            inertia_world, i, forces[i, 0], forces[i, 1], forces[i, 2], forces[i, 3], forces[i, 4], forces[i, 5]
        )
        for c in range(6):
            forces[i, c] = Ia[c] + vxIv[c]
    # τ_i = S_iᵀ f_i, f_λ(i) += f_i
    for i in range(n_links - 1, -1, -1):
        k = parent[i]
        if dof[i] >= 0:
            tau[dof[i]] = (
                S[i, 0] * forces[i, 0] + S[i, 1] * forces[i, 1] + S[i, 2] * forces[i, 2]
                + S[i, 3] * forces[i, 3] + S[i, 4] * forces[i, 4] + S[i, 5] * forces[i, 5]
            )  # fmt: skip
        if k >= 0:
            for c in range(6):
                forces[k, c] += forces[i, c]
