"""The Hessian of a link point's position contracted with a world vector: H = ∂²(wᵀx(q))/∂q² = ∂(J(q)ᵀw)/∂q, the
stiffness that a constant world force w at the point adds to the joint rows (the constraint-force term ∂(Φᵀλ)/∂q of a
row on the point, #36 item 2).

With S_i = [v_i; ω_i] the world motion column of joint i (at the origin, :mod:`flexbody.rigid.algorithms`) and
J_i = v_i + ω_i × x the point's velocity per unit q̇_i: a joint k turns its subtree rigidly about ω_k, so the free
vector J_i of a joint i below it turns with it, and for k ⪯ i ⪯ link (k an ancestor of i, or i)

    ∂J_i/∂q_k = ω_k × J_i,        ∂J_k/∂q_i = ω_k × J_i (the point moves with joint i),

H_ik = H_ki = wᵀ(ω_k × J_i) — symmetric, zero for joints not above the link, and for prismatic joints k (ω_k = 0).
The columns of one spherical joint also depend on its coordinates φ through J_r(φ) (w_i = R J_r(φ) e_i, about its
centre c): there ∂J_i/∂φ_k = ω_k × J_i + y_ki × (x − c), y_ki = R ∂J_r/∂φ_k e_i.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from . import exponential_coordinates as expc
from .algorithms import SPHERICAL
from .exponential_coordinates import cross3

__all__ = ["point_hessian", "point_velocity_jacobian", "angular_hessian"]


@nb.njit(cache=True, inline="always")
def _swap(S, a, b, x):
    """ω_b × J_a − ω_a × J_b (3-tuple) for joints a, b (J = v + ω × x at the point x): what a spherical joint's part
    a above part b needs instead of what the rigid formulas gave."""
    la = cross3(S[a, 3], S[a, 4], S[a, 5], x[0], x[1], x[2])
    lb = cross3(S[b, 3], S[b, 4], S[b, 5], x[0], x[1], x[2])
    ra = cross3(S[b, 3], S[b, 4], S[b, 5], S[a, 0] + la[0], S[a, 1] + la[1], S[a, 2] + la[2])
    rb = cross3(S[a, 3], S[a, 4], S[a, 5], S[b, 0] + lb[0], S[b, 1] + lb[1], S[b, 2] + lb[2])
    return ra[0] - rb[0], ra[1] - rb[1], ra[2] - rb[2]


@nb.njit(cache=True)
def _chain(parent, dof, S, link, x):
    """(joints above the link deepest first (count,), J (count, 3)): the columns J_i = v_i + ω_i × x of the point."""
    chain = np.empty(parent.shape[0], dtype=np.int64)
    count = 0
    i = link
    while i >= 0:
        if dof[i] >= 0:
            chain[count] = i
            count += 1
        i = parent[i]
    J = np.empty((count, 3))
    for c in range(count):
        i = chain[c]
        l0, l1, l2 = cross3(S[i, 3], S[i, 4], S[i, 5], x[0], x[1], x[2])
        J[c, 0], J[c, 1], J[c, 2] = S[i, 0] + l0, S[i, 1] + l1, S[i, 2] + l2
    return chain[:count], J


@nb.njit(cache=True)
def _spherical_in(chain, joint_type, axis):
    """The last parts (links) of the spherical joints among the ``chain``'s joints (their three parts are consecutive
    links, the last one carrying the column e_z)."""
    out = np.empty(chain.shape[0], dtype=np.int64)
    count = 0
    for i in chain:
        if joint_type[i] == SPHERICAL and axis[i, 2] > 0.5:
            out[count] = i
            count += 1
    return out[:count]


@nb.njit(cache=True, inline="always")
def _own_column_rate(S, phi, R, p, i, m, j, x, y):
    """∂J_j/∂φ_m (3-tuple) of the point x for parts j, m of the spherical joint whose last part is link i: the turn of
    its columns through J_r(φ) (:func:`_turn`) and, for part j above part m (j < m), ω_m × J_j − ω_j × J_m where the
    loop over the chain took ω_j × J_m (:func:`_swap`); ``y`` (3,) is work."""
    t = _turn(phi, R, p, i, m, j, x, y)
    if j < m:
        sw = _swap(S, i - 2 + j, i - 2 + m, x)
        return t[0] + sw[0], t[1] + sw[1], t[2] + sw[2]
    return t


@nb.njit(cache=True, inline="always")
def _turn(phi, R, p, i, m, j, x, y):
    """y_mj × (x − c) (3-tuple), y_mj = R ∂J_r/∂φ_m e_j, of the spherical joint whose last part is link i (centre
    c = p[i]); ``y`` (3,) is work."""
    expc.column_derivative(phi, R[i], m, j, y)
    return cross3(y[0], y[1], y[2], x[0] - p[i, 0], x[1] - p[i, 1], x[2] - p[i, 2])


@nb.njit(cache=True)
def point_hessian(parent, joint_type, dof, axis, R, p, S, q, link, x, w, H):
    """H (n_dofs, n_dofs) += ∂²(wᵀx)/∂q² of the world point x (3,) on ``link`` at the kinematics (R, p, S) of q
    (module docstring)."""
    chain, J = _chain(parent, dof, S, link, x)
    count = chain.shape[0]
    for ci in range(count):  # k = chain[ck] ⪯ i = chain[ci] for ck ≥ ci
        i = chain[ci]
        for ck in range(ci, count):
            k = chain[ck]
            r0, r1, r2 = cross3(S[k, 3], S[k, 4], S[k, 5], J[ci, 0], J[ci, 1], J[ci, 2])
            value = w[0] * r0 + w[1] * r1 + w[2] * r2
            H[dof[i], dof[k]] += value
            if k != i:
                H[dof[k], dof[i]] += value
    y = np.empty(3)
    for i in _spherical_in(chain, joint_type, axis):  # a spherical joint's own columns
        d0 = dof[i] - 2
        phi = q[d0 : d0 + 3]
        for m in range(3):
            for j in range(3):
                t = _own_column_rate(S, phi, R, p, i, m, j, x, y)
                H[d0 + j, d0 + m] += w[0] * t[0] + w[1] * t[1] + w[2] * t[2]


@nb.njit(cache=True)
def point_velocity_jacobian(parent, joint_type, dof, axis, R, p, S, q, v, link, x, N):
    """N (3, n_dofs) += ∂(J(q) v)/∂q at fixed v of the world point x (3,) on ``link``: the rate of its velocity with
    the coordinates, Σ_i v_i ∂J_i/∂q_k = ω_k × Σ_{i ⪰ k} v_i J_i + (Σ_{i ≺ k} v_i ω_i) × J_k (module docstring), with
    a spherical joint's own columns by their exact derivatives."""
    chain, J = _chain(parent, dof, S, link, x)
    count = chain.shape[0]
    below = np.zeros(3)  # Σ_{i ⪰ k} v_i J_i
    for ck in range(count):
        k = chain[ck]
        vk = v[dof[k]]
        below[0] += vk * J[ck, 0]
        below[1] += vk * J[ck, 1]
        below[2] += vk * J[ck, 2]
        above0 = above1 = above2 = 0.0  # Σ_{i ≺ k} v_i ω_i
        for ci in range(ck + 1, count):
            i = chain[ci]
            above0 += v[dof[i]] * S[i, 3]
            above1 += v[dof[i]] * S[i, 4]
            above2 += v[dof[i]] * S[i, 5]
        a = cross3(S[k, 3], S[k, 4], S[k, 5], below[0], below[1], below[2])
        b = cross3(above0, above1, above2, J[ck, 0], J[ck, 1], J[ck, 2])
        for r in range(3):
            N[r, dof[k]] += a[r] + b[r]
    y = np.empty(3)
    for i in _spherical_in(chain, joint_type, axis):  # a spherical joint's own columns
        d0 = dof[i] - 2
        phi = q[d0 : d0 + 3]
        for m in range(3):  # the derivative in φ_m of v_j J_j
            for j in range(3):
                t = _own_column_rate(S, phi, R, p, i, m, j, x, y)
                for r in range(3):
                    N[r, d0 + m] += v[d0 + j] * t[r]


@nb.njit(cache=True)
def angular_hessian(parent, joint_type, dof, axis, R, S, q, link, g, H):
    """H (n_dofs, n_dofs) += ∂(J_ω(q)ᵀg)/∂q of ``link``'s angular-velocity Jacobian for a constant world vector g (3,):
    the columns ω_i of the joints above the link turn with the joints above them, ∂ω_i/∂q_k = ω_k × ω_i for k ⪯ i and
    0 for k below i, so H_ik = gᵀ(ω_k × ω_i) (not symmetric); a spherical joint's columns all turn with each of its
    coordinates, ∂ω_j/∂φ_m = ω_m × ω_j + R ∂J_r/∂φ_m e_j."""
    chain = _chain(parent, dof, S, link, np.zeros(3))[0]
    count = chain.shape[0]
    for ci in range(count):
        i = chain[ci]
        for ck in range(ci, count):  # k ⪯ i
            k = chain[ck]
            r = cross3(S[k, 3], S[k, 4], S[k, 5], S[i, 3], S[i, 4], S[i, 5])
            H[dof[i], dof[k]] += g[0] * r[0] + g[1] * r[1] + g[2] * r[2]
    y = np.empty(3)
    for i in _spherical_in(chain, joint_type, axis):  # a spherical joint's own columns
        d0 = dof[i] - 2
        phi = q[d0 : d0 + 3]
        for m in range(3):
            for j in range(3):
                expc.column_derivative(phi, R[i], m, j, y)
                value = g[0] * y[0] + g[1] * y[1] + g[2] * y[2]
                if m > j:  # part m lies below part j: the rigid loop gave nothing, the columns turn with ω_m too
                    a, b = i - 2 + m, i - 2 + j
                    r = cross3(S[a, 3], S[a, 4], S[a, 5], S[b, 3], S[b, 4], S[b, 5])
                    value += g[0] * r[0] + g[1] * r[1] + g[2] * r[2]
                H[d0 + j, d0 + m] += value
