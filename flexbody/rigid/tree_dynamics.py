"""Whole-tree dynamics in one compiled call each: the mass matrix M(q) by the composite-rigid-body
algorithm, τ = M a + b + g by recursive Newton–Euler, and the forward dynamics a = M⁻¹(τ − b − g) by a
Cholesky factor of M [DE-2] (Featherstone, Rigid Body Dynamics Algorithms, ch. 5–6).

Each entry runs the kinematics, the world spatial inertias and the algorithm of
:mod:`flexbody.rigid.algorithms` inside one numba function, so a call costs one dispatch and the
allocation of its outputs (the workspace lives inside the kernel). The model is the tuple of flat arrays
of :meth:`flexbody.RigidTree.kernel_model`. Each entry first checks that its inputs are finite and
returns False (outputs untouched) when they are not, so the caller can name the culprit.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from .algorithms import inverse_dynamics, kinematics, mass_matrix, world_inertias

__all__ = ["mass_matrix_at", "inverse_dynamics_at", "forward_dynamics_at"]


@nb.njit(cache=True)
def all_finite(x) -> bool:
    """Whether every entry of the vector x is finite (the kernels' input check)."""
    for value in x:  # noqa: SIM110 (numba compiles this loop; it has no generator expressions)
        if not np.isfinite(value):
            return False
    return True


@nb.njit(cache=True)
def _state(parent, joint_type, axis, R_placement, p_placement, dof, mass, com, inertia, q, v):
    """Motion subspaces S, spatial velocities, velocity-product accelerations and world inertias of every
    link at (q, v) (world axes, at the origin; :func:`flexbody.rigid.algorithms.kinematics`)."""
    n = parent.shape[0]
    R, p = np.empty((n, 3, 3)), np.empty((n, 3))
    S, vel, acc = np.empty((n, 6)), np.empty((n, 6)), np.empty((n, 6))
    kinematics(parent, joint_type, axis, R_placement, p_placement, dof, q, v, R, p, S, vel, acc)
    inertias = np.empty((n, 6, 6))
    world_inertias(R, p, mass, com, inertia, inertias)
    return S, vel, acc, inertias


@nb.njit(cache=True)
def mass_matrix_at(parent, joint_type, axis, R_placement, p_placement, dof, mass, com, inertia, q, M):
    """M(q) (n, n) into ``M`` by CRBA [DE-2]; False when q is not finite."""
    if not all_finite(q):
        return False
    S, _, _, inertias = _state(
        parent, joint_type, axis, R_placement, p_placement, dof, mass, com, inertia, q, np.zeros(q.shape[0])
    )
    mass_matrix(parent, dof, S, inertias, q.shape[0], np.empty_like(inertias), M)
    return True


@nb.njit(cache=True)
def inverse_dynamics_at(
    parent, joint_type, axis, R_placement, p_placement, dof, mass, com, inertia, q, v, a, gravity, tau
):
    """τ = M a + b + g (n,) into ``tau`` by RNEA [DE-2]: with v = 0 no b, with gravity = 0 no g, with
    a = 0 no M a. False when q, v or a is not finite."""
    if not (all_finite(q) and all_finite(v) and all_finite(a)):
        return False
    S, vel, acc, inertias = _state(parent, joint_type, axis, R_placement, p_placement, dof, mass, com, inertia, q, v)
    inverse_dynamics(parent, dof, S, vel, acc, inertias, a, gravity, np.empty((parent.shape[0], 6)), tau)
    return True


@nb.njit(cache=True)
def forward_dynamics_at(
    parent, joint_type, axis, R_placement, p_placement, dof, mass, com, inertia, q, v, tau, gravity, a
):
    """a = M⁻¹(τ − b − g) (n,) into ``a``: CRBA, RNEA with a = 0 and LAPACK's Cholesky of M (potrf), one
    kinematics pass for both [DE-2]. False when q, v or τ is not finite or M is not positive definite."""
    if not (all_finite(q) and all_finite(v) and all_finite(tau)):
        return False
    n_dofs, n_links = q.shape[0], parent.shape[0]
    S, vel, acc, inertias = _state(parent, joint_type, axis, R_placement, p_placement, dof, mass, com, inertia, q, v)
    M = np.empty((n_dofs, n_dofs))
    mass_matrix(parent, dof, S, inertias, n_dofs, np.empty_like(inertias), M)
    h = np.zeros(n_dofs)
    inverse_dynamics(parent, dof, S, vel, acc, inertias, np.zeros(n_dofs), gravity, np.empty((n_links, 6)), h)
    try:
        L = np.linalg.cholesky(M)
    except Exception:  # not positive definite (LinAlgError)
        return False
    y = tau - h
    for i in range(n_dofs):  # L y' = τ − h
        s = y[i]
        for k in range(i):
            s -= L[i, k] * y[k]
        y[i] = s / L[i, i]
    for i in range(n_dofs - 1, -1, -1):  # Lᵀ a = y'
        s = y[i]
        for k in range(i + 1, n_dofs):
            s -= L[k, i] * a[k]
        a[i] = s / L[i, i]
    return True
