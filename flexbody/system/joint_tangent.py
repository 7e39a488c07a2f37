"""The exact Jacobians of the joint rows r = M q̈ + h − Φᵀλ of a compiled program (:mod:`flexbody.system.
joint_program`) in one numba call, for the compiled generalized-α route (#36 items 2 and 4): the forest's analytic
derivatives of recursive Newton–Euler (:mod:`flexbody.rigid.rnea_derivatives`), ∂τ/∂q and ∂τ/∂q̇ at (q, v, q̈), and
the declared rows' Hessians ∂(Φᵀλ)/∂q — the point Hessians of their anchors (:mod:`flexbody.rigid.point_hessian`) for
the force w = λ e of each LINEAR or RADIAL row and, for a radial row, the turn of its direction, λ J_dᵀ(P − eeᵀ)J_d/r
(:func:`flexbody.constraints.closures.point_rows_hessian`, the general route's form); COUPLING rows are linear in q.
A reduced body adds the derivatives of its floating-frame share (:func:`~flexbody.reduced.force_derivatives.
reduced_derivatives`, the general route's kernel).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ..constraints.row_kinds import COUPLING, RADIAL, point_row, radial_curvature
from ..reduced.force_derivatives import reduced_derivatives
from ..rigid.algorithms import kinematics, point_terms, world_inertias
from ..rigid.point_hessian import point_hessian
from ..rigid.rnea_derivatives import rnea_derivatives
from .joint_program import DEGENERATE, OK, program_views

__all__ = ["joint_tangent"]


@nb.njit(cache=True)
def joint_tangent(ints, floats, support, bodies, body_floats, q, v, qdd, lam, c_q, c_v, A):
    """A += c_q ∂r/∂q + c_v ∂r/∂v (n, n) of r = M q̈ + h − Φᵀλ at (q, v, q̈) and the declared rows' multipliers
    ``lam`` (all the system's rows, by their row index), with the reduced ``bodies`` (b, 4) and their ``body_floats``
    as :func:`~flexbody.system.joint_program.joint_terms` takes them (module docstring). Returns a status of
    :func:`~flexbody.system.joint_program.joint_terms`."""
    n, n_links, k, m = q.shape[0], support.shape[0], ints[0], ints[1]
    views = program_views(ints, floats, support, n)
    parent, joint_type, dof, point_link, row_kind, row_a, row_b, row_index = views[:8]
    axis, R_placement, p_placement, mass, com, inertia, point_offset = views[8:15]
    row_n, row_P, row_offset, row_const, gravity = views[15], views[16], views[17], views[18], views[20]
    R, p = np.empty((n_links, 3, 3)), np.empty((n_links, 3))
    S, vel, acc = np.empty((n_links, 6)), np.empty((n_links, 6)), np.empty((n_links, 6))
    kinematics(parent, joint_type, axis, R_placement, p_placement, dof, q, v, R, p, S, vel, acc)
    inertias = np.empty((n_links, 6, 6))
    world_inertias(R, p, mass, com, inertia, inertias)
    dq, dv, M = np.empty((n, n)), np.empty((n, n)), np.empty((n, n))
    rnea_derivatives(parent, joint_type, dof, axis, R, p, S, vel, acc, inertias, q, v, qdd, gravity, dq, dv, M)
    X, Xd, B = np.empty((k, 3)), np.empty((k, 3)), np.empty((k, 3))
    J = np.empty((k, 3, n))
    point_terms(R, p, S, vel, acc, support, point_link, point_offset, X, Xd, J, B)
    H = np.zeros((n, n))  # ∂(Φᵀλ)/∂q
    d, zero, e, w = np.empty(3), np.zeros(3), np.empty(3), np.empty(3)
    for r in range(m):
        if row_kind[r] == COUPLING:
            continue
        a, b, multiplier = row_a[r], row_b[r], lam[row_index[r]]
        for c in range(3):
            d[c] = row_offset[r, c] + (X[a, c] if a >= 0 else 0.0) - (X[b, c] if b >= 0 else 0.0)
        ok, value, _ = point_row(row_kind[r], row_n[r], row_P[r], row_const[r], d, zero, zero, e)
        if not ok:
            return DEGENERATE
        for side, sign in ((a, 1.0), (b, -1.0)):
            if side >= 0:
                for c in range(3):
                    w[c] = sign * multiplier * e[c]
                point_hessian(parent, joint_type, dof, axis, R, p, S, q, point_link[side], X[side], w, H)
        if row_kind[r] == RADIAL:  # λ J_dᵀ (P − eeᵀ) J_d / r, r = φ + L
            _add_turn(J, a, b, row_P[r], e, value + row_const[r], multiplier, H)
    for b in range(bodies.shape[0]):
        link, col, r, start = bodies[b, 0], bodies[b, 1], bodies[b, 2], bodies[b, 3]
        args = (parent, joint_type, dof, axis, R, p, S, vel, acc, support, gravity, q, v, qdd, dq, dv)
        reduced_derivatives(link, col, r, body_floats[start:], *args)
    for i in range(n):
        for j in range(n):
            A[i, j] += c_q * (dq[i, j] - H[i, j]) + c_v * dv[i, j]
    return OK


@nb.njit(cache=True, inline="always")
def _add_turn(J, a, b, P, e, r, multiplier, H):
    """H += λ J_dᵀ (P − eeᵀ)/r J_d with J_d = J_a − J_b (slots −1: the ground), the radial row's curvature
    (:func:`~flexbody.constraints.row_kinds.radial_curvature`)."""
    n = H.shape[0]
    Jd = np.zeros((3, n))
    for c in range(3):
        for j in range(n):
            Jd[c, j] = (J[a, c, j] if a >= 0 else 0.0) - (J[b, c, j] if b >= 0 else 0.0)
    C = np.empty((3, 3))
    radial_curvature(P, e, r, C)
    CJ = multiplier * (C @ Jd)
    for i in range(n):
        for j in range(n):
            s = 0.0
            for c in range(3):
                s += Jd[c, i] * CJ[c, j]
            H[i, j] += s
