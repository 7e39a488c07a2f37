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
topological order (parent index < link index); joint types: 0 fixed, 1 revolute, 2 prismatic.
"""
from __future__ import annotations

import numba as nb
import numpy as np

FIXED, REVOLUTE, PRISMATIC = 0, 1, 2


@nb.njit(cache=True, inline="always")
def _cross(a0, a1, a2, b0, b1, b2):
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


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
    """
    n_links = parent.shape[0]
    R_joint = np.empty((3, 3))
    R_local = np.empty((3, 3))
    p_local = np.empty(3)
    vSq = np.empty(6)
    for i in range(n_links):
        jt = joint_type[i]
        qi = q[dof[i]] if dof[i] >= 0 else 0.0
        qdi = v[dof[i]] if dof[i] >= 0 else 0.0
        if jt == REVOLUTE:
            _axis_rotation(axis[i], qi, R_joint)
            R_local[:, :] = R_placement[i] @ R_joint
            p_local[:] = p_placement[i]
        elif jt == PRISMATIC:
            R_local[:, :] = R_placement[i]
            p_local[:] = p_placement[i] + R_placement[i] @ (axis[i] * qi)
        else:
            R_local[:, :] = R_placement[i]
            p_local[:] = p_placement[i]
        k = parent[i]
        if k < 0:
            R[i] = R_local
            p[i] = p_local
            vel[i, :] = 0.0
            acc[i, :] = 0.0
        else:
            R[i] = R[k] @ R_local
            p[i] = p[k] + R[k] @ p_local
            vel[i] = vel[k]
            acc[i] = acc[k]
        S[i, :] = 0.0
        if jt != FIXED:
            z = R[i] @ axis[i]
            if jt == REVOLUTE:
                S[i, 0], S[i, 1], S[i, 2] = _cross(p[i, 0], p[i, 1], p[i, 2], z[0], z[1], z[2])
                S[i, 3:] = z
            else:
                S[i, :3] = z
            vel[i] += S[i] * qdi
            _motion_cross(vel[i], S[i] * qdi, vSq)
            acc[i] += vSq


@nb.njit(cache=True)
def world_inertias(R, p, mass, com, inertia, out):
    """Spatial inertias (6, 6) of every link in world coordinates at the world origin (linear first).

    I = [[m 1, m [c]×ᵀ], [m [c]×, I_c + m [c]× [c]×ᵀ]] with c the world centre of mass and
    I_c = R I_link Rᵀ the rotational inertia about it.
    """
    n_links = R.shape[0]
    for i in range(n_links):
        m = mass[i]
        c = p[i] + R[i] @ com[i]
        Ic = R[i] @ inertia[i] @ R[i].T
        cx = np.array([[0.0, -c[2], c[1]], [c[2], 0.0, -c[0]], [-c[1], c[0], 0.0]])
        out[i, :3, :3] = 0.0
        for a in range(3):
            out[i, a, a] = m
        out[i, :3, 3:] = m * cx.T
        out[i, 3:, :3] = m * cx
        out[i, 3:, 3:] = Ic + m * (cx @ cx.T)


@nb.njit(cache=True)
def mass_matrix(parent, dof, S, inertia_world, n_dofs, composite, M):
    """Composite-rigid-body algorithm: joint-space mass matrix M (n_dofs, n_dofs)."""
    n_links = parent.shape[0]
    composite[:, :, :] = inertia_world
    for i in range(n_links - 1, -1, -1):
        k = parent[i]
        if k >= 0:
            composite[k] += composite[i]
    M[:, :] = 0.0
    for i in range(n_links):
        di = dof[i]
        if di < 0:
            continue
        F = composite[i] @ S[i]
        M[di, di] = S[i] @ F
        j = parent[i]
        while j >= 0:
            dj = dof[j]
            if dj >= 0:
                mij = S[j] @ F
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
    vxIv = np.empty(6)
    for i in range(n_links):
        k = parent[i]
        if k >= 0:
            a_link[i] = a_link[k] + (acc[i] - acc[k])
        else:
            a_link[i] = acc[i]
            a_link[i, :3] -= gravity
        if dof[i] >= 0:
            a_link[i] += S[i] * a[dof[i]]
    for i in range(n_links):
        Iv[:] = inertia_world[i] @ vel[i]
        _force_cross(vel[i], Iv, vxIv)
        forces[i] = inertia_world[i] @ a_link[i] + vxIv
    for i in range(n_links - 1, -1, -1):
        k = parent[i]
        if dof[i] >= 0:
            tau[dof[i]] = S[i] @ forces[i]
        if k >= 0:
            forces[k] += forces[i]
