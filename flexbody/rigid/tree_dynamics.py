"""Whole-tree dynamics in one compiled call each: the mass matrix M(q) by the composite-rigid-body
algorithm, τ = M a + b + g by recursive Newton–Euler, and the forward dynamics a = M⁻¹(τ − b − g) by a
Cholesky factor of M [DE-2] (Featherstone, Rigid Body Dynamics Algorithms, ch. 5–6).

Each kernel runs the kinematics, the world spatial inertias and the algorithm of
:mod:`flexbody.rigid.algorithms` inside one numba function on few arguments: the tree packed into two flat
arrays (:func:`packed_model`), one flat work array (:func:`work_size`; the arrays of every link live in it
as contiguous blocks, see :func:`work_views`), the inputs and the output. Nothing is allocated inside, so a
call costs one dispatch of about eight arrays and the arithmetic. Each kernel first checks that its inputs
have the tree's size and are finite and returns False (output untouched) when they are not, so the caller
can name the culprit.

The kernels are compiled for float64 C-contiguous arrays only (:func:`compile_kernels`): any other argument
(a list, integers, a read-only or strided array) raises numba's TypeError without compiling a variant for
it, and the callers convert and retry.
"""

from __future__ import annotations

import numba as nb
import numpy as np
from numpy.lib.stride_tricks import as_strided

from .algorithms import inverse_dynamics, kinematics, mass_matrix, world_inertias
from .rnea_derivatives import rnea_derivatives

__all__ = [
    "all_finite",
    "packed_model",
    "work_size",
    "work_views",
    "compile_kernels",
    "mass_matrix_kernel",
    "inverse_dynamics_kernel",
    "forward_dynamics_kernel",
    "rnea_derivatives_kernel",
    "forward_derivatives_kernel",
    "link_kinematics",
]

BODY_COLUMNS = 28
"""Reals per link in the packed model: axis 3, placement rotation 9, placement origin 3, mass 1, centre of
mass 3, rotational inertia 9."""

LINK_WORK = 9 + 3 + 6 + 6 + 6 + 36 + 6 + 36
"""Work entries per link: R, p, S, vel, acc, world inertia, joint force, composite inertia."""


@nb.njit(cache=True)
def all_finite(x) -> bool:
    """Whether every entry of the vector x is finite (the kernels' input check)."""
    for value in x:  # noqa: SIM110 (numba compiles this loop; it has no generator expressions)
        if not np.isfinite(value):
            return False
    return True


def packed_model(model: tuple) -> tuple[np.ndarray, np.ndarray]:
    """(indices (3 n_links,) int64, reals (28 n_links,) float64): the flat arrays of
    :meth:`flexbody.RigidTree.kernel_model` as two contiguous arrays, block after block — indices: parent,
    joint type, coordinate index; reals: axis (n, 3), placement rotation (n, 3, 3) and origin (n, 3) [m],
    mass (n,) [kg], centre of mass (n, 3) [m], rotational inertia about it (n, 3, 3) [kg m²], link frames."""
    parent, joint_type, axis, R_placement, p_placement, dof, mass, com, inertia = model
    indices = np.concatenate([parent, joint_type, dof]).astype(np.int64)
    reals = np.concatenate([np.ravel(x) for x in (axis, R_placement, p_placement, mass, com, inertia)]).astype(float)
    return np.ascontiguousarray(indices), np.ascontiguousarray(reals)


@nb.njit(cache=True, inline="always")
def _rows(x, start, n, k):
    """x[start : start + n k] as an (n, k) C-contiguous view. Built by as_strided with the C strides: numba's
    reshape costs about 30 ns per view (a shape normalisation and a C helper), a third of a link's kinematics."""
    s = x.itemsize
    return as_strided(x[start:], shape=(n, k), strides=(k * s, s))


@nb.njit(cache=True, inline="always")
def _matrices(x, start, n, k):
    """x[start : start + n k²] as an (n, k, k) C-contiguous view (as :func:`_rows`)."""
    s = x.itemsize
    return as_strided(x[start:], shape=(n, k, k), strides=(k * k * s, k * s, s))


@nb.njit(cache=True, inline="always")
def _model(indices, reals):
    """Views (parent, joint_type, dof, axis, R_placement, p_placement, mass, com, inertia) of a packed model."""
    n = indices.shape[0] // 3
    parent, joint_type, dof = indices[:n], indices[n : 2 * n], indices[2 * n :]
    axis = _rows(reals, 0, n, 3)
    R_placement = _matrices(reals, 3 * n, n, 3)
    p_placement = _rows(reals, 12 * n, n, 3)
    mass = reals[15 * n : 16 * n]
    com = _rows(reals, 16 * n, n, 3)
    inertia = _matrices(reals, 19 * n, n, 3)
    return parent, joint_type, dof, axis, R_placement, p_placement, mass, com, inertia


@nb.njit(cache=True)
def work_size(n_links: int, n_dofs: int) -> int:
    """Length of the work array of a tree of ``n_links`` links and ``n_dofs`` coordinates."""
    return LINK_WORK * n_links + n_dofs * (n_dofs + 2)


@nb.njit(cache=True, inline="always")
def work_views(work, n_links, n_dofs):
    """Views of the work array: R (n_links, 3, 3), p (n_links, 3), S, vel, acc (n_links, 6), world inertias
    (n_links, 6, 6), joint forces (n_links, 6), composite inertias (n_links, 6, 6) (world axes, at the
    origin, :mod:`flexbody.rigid.algorithms`), a vector of zeros (n_dofs,), h (n_dofs,) and the Cholesky
    factor (n_dofs, n_dofs) of the forward dynamics."""
    n = n_links
    R = _matrices(work, 0, n, 3)
    p = _rows(work, 9 * n, n, 3)
    S = _rows(work, 12 * n, n, 6)
    vel = _rows(work, 18 * n, n, 6)
    acc = _rows(work, 24 * n, n, 6)
    inertias = _matrices(work, 30 * n, n, 6)
    forces = _rows(work, 66 * n, n, 6)
    composite = _matrices(work, 72 * n, n, 6)
    start = LINK_WORK * n
    zeros = work[start : start + n_dofs]
    h = work[start + n_dofs : start + 2 * n_dofs]
    L = _rows(work, start + 2 * n_dofs, n_dofs, n_dofs)
    return R, p, S, vel, acc, inertias, forces, composite, zeros, h, L


@nb.njit(cache=True, inline="always")
def _state(indices, reals, work, n_dofs, q, v):
    """Kinematics at (q, v) and world inertias into the work array (:func:`work_views`)."""
    parent, joint_type, dof, axis, R_placement, p_placement, mass, com, inertia = _model(indices, reals)
    R, p, S, vel, acc, inertias, _, _, _, _, _ = work_views(work, parent.shape[0], n_dofs)
    kinematics(parent, joint_type, axis, R_placement, p_placement, dof, q, v, R, p, S, vel, acc)
    world_inertias(R, p, mass, com, inertia, inertias)


@nb.njit(cache=True, inline="always")
def link_kinematics(indices, reals, work, n_dofs, q, v):
    """Views (R (n_links, 3, 3), p (n_links, 3), S, vel, acc (n_links, 6)) of the work array holding the links'
    kinematics at (q, v) (n_dofs,) (:func:`~flexbody.rigid.algorithms.kinematics`; the world inertias with them)."""
    _state(indices, reals, work, n_dofs, q, v)
    R, p, S, vel, acc, _, _, _, _, _, _ = work_views(work, indices.shape[0] // 3, n_dofs)
    return R, p, S, vel, acc


@nb.njit(cache=True)
def mass_matrix_kernel(indices, reals, work, q, M):
    """M(q) (n, n) into ``M`` by CRBA [DE-2]; False when q is not finite or not of length n = M.shape[0]."""
    n_dofs, n = M.shape[0], indices.shape[0] // 3
    if q.shape[0] != n_dofs or not all_finite(q):
        return False
    _, _, S, _, _, inertias, _, composite, zeros, _, _ = work_views(work, n, n_dofs)
    zeros[:] = 0.0
    _state(indices, reals, work, n_dofs, q, zeros)
    mass_matrix(indices[:n], indices[2 * n :], S, inertias, n_dofs, composite, M)
    return True


@nb.njit(cache=True, inline="always")
def valid_inputs(n_dofs, gravity, q, v, x) -> bool:
    """Whether q, v and x have length ``n_dofs``, gravity 3, and q, v, x are finite (the kernels' input check)."""
    if q.shape[0] != n_dofs or v.shape[0] != n_dofs or x.shape[0] != n_dofs or gravity.shape[0] != 3:
        return False
    return all_finite(q) and all_finite(v) and all_finite(x)


@nb.njit(cache=True)
def inverse_dynamics_kernel(indices, reals, work, gravity, q, v, a, tau):
    """τ = M a + b + g (n,) into ``tau`` by RNEA [DE-2]: with v = 0 no b, with gravity = 0 no g, with
    a = 0 no M a. False when q, v or a is not finite or not of length n = tau.shape[0]."""
    n_dofs, n = tau.shape[0], indices.shape[0] // 3
    if not valid_inputs(n_dofs, gravity, q, v, a):
        return False
    _state(indices, reals, work, n_dofs, q, v)
    _, _, S, vel, acc, inertias, forces, _, _, _, _ = work_views(work, n, n_dofs)
    inverse_dynamics(indices[:n], indices[2 * n :], S, vel, acc, inertias, a, gravity, forces, tau)
    return True


@nb.njit(cache=True)
def _cholesky(L, n):
    """L ← its lower Cholesky factor in place (rows i ≥ j; the strict upper triangle is left as it was);
    False when a pivot is not positive (L not positive definite) or not finite."""
    for i in range(n):
        for j in range(i + 1):
            s = L[i, j]
            for k in range(j):
                s -= L[i, k] * L[j, k]
            if i == j:
                if not s > 0.0 or not np.isfinite(s):
                    return False
                L[i, i] = np.sqrt(s)
            else:
                L[i, j] = s / L[j, j]
    return True


@nb.njit(cache=True)
def forward_dynamics_kernel(indices, reals, work, gravity, q, v, tau, a):
    """a = M⁻¹(τ − b − g) (n,) into ``a``: CRBA, RNEA with a = 0 and a Cholesky factor of M, one kinematics
    pass for both [DE-2]. False when q, v or τ is not finite or not of length n = a.shape[0], or M is not
    positive definite."""
    n_dofs = a.shape[0]
    if not valid_inputs(n_dofs, gravity, q, v, tau):
        return False
    n = indices.shape[0] // 3
    parent, dof = indices[:n], indices[2 * n :]
    _state(indices, reals, work, n_dofs, q, v)
    _, _, S, vel, acc, inertias, forces, composite, zeros, h, L = work_views(work, n, n_dofs)
    zeros[:] = 0.0
    mass_matrix(parent, dof, S, inertias, n_dofs, composite, L)
    inverse_dynamics(parent, dof, S, vel, acc, inertias, zeros, gravity, forces, h)
    if not _cholesky(L, n_dofs):
        return False
    for i in range(n_dofs):
        a[i] = tau[i] - h[i]
    _cho_solve(L, a)
    return True


@nb.njit(cache=True, inline="always")
def _cho_solve(L, b):
    """b ← (L Lᵀ)⁻¹ b for the lower factor L of :func:`_cholesky` (forward, then back substitution; b may be a
    strided view, such as a matrix column)."""
    n = L.shape[0]
    for i in range(n):  # L y = b
        s = b[i]
        for k in range(i):
            s -= L[i, k] * b[k]
        b[i] = s / L[i, i]
    for i in range(n - 1, -1, -1):  # Lᵀ x = y
        s = b[i]
        for k in range(i + 1, n):
            s -= L[k, i] * b[k]
        b[i] = s / L[i, i]


@nb.njit(cache=True)
def rnea_derivatives_kernel(indices, reals, work, gravity, q, v, a, dtau_dq, dtau_dv, M):
    """∂τ/∂q, ∂τ/∂q̇ and M (n, n) of τ = M a + b + g at (q, v, a) into ``dtau_dq``, ``dtau_dv``, ``M``
    (:func:`~flexbody.rigid.rnea_derivatives.rnea_derivatives`). False when q, v or a is not finite or not of length
    n = M.shape[0]."""
    n_dofs, n = M.shape[0], indices.shape[0] // 3
    if not valid_inputs(n_dofs, gravity, q, v, a):
        return False
    _state(indices, reals, work, n_dofs, q, v)
    R, p, S, vel, acc, inertias, _, _, _, _, _ = work_views(work, n, n_dofs)
    parent, joint_type, dof, axis = indices[:n], indices[n : 2 * n], indices[2 * n :], _model(indices, reals)[3]
    return rnea_derivatives(
        parent, joint_type, dof, axis, R, p, S, vel, acc, inertias, q, v, a, gravity, dtau_dq, dtau_dv, M
    )


@nb.njit(cache=True)
def forward_derivatives_kernel(indices, reals, work, gravity, q, v, tau, a, da_dq, da_dv, da_dtau):
    """a = M⁻¹(τ − b − g) (n,) and its derivatives ∂a/∂q, ∂a/∂q̇, ∂a/∂τ = M⁻¹ (n, n) at (q, v, τ) into ``a``,
    ``da_dq``, ``da_dv``, ``da_dtau``: from τ(q, v, a) = τ at a = a(q, v, τ), ∂a/∂x = −M⁻¹ ∂τ/∂x (x = q, q̇), with
    ∂τ/∂x of :func:`rnea_derivatives_kernel` at that a and one Cholesky factor of M (as Pinocchio's
    computeABADerivatives). False when q, v or τ is not finite or not of length n = a.shape[0], or M is not positive
    definite."""
    n_dofs, n = a.shape[0], indices.shape[0] // 3
    if not forward_dynamics_kernel(indices, reals, work, gravity, q, v, tau, a):
        return False
    # the kinematics at (q, v) and the Cholesky factor L of M(q) that the forward dynamics left in the work array
    R, p, S, vel, acc, inertias, _, _, _, _, L = work_views(work, n, n_dofs)
    parent, joint_type, dof, axis = indices[:n], indices[n : 2 * n], indices[2 * n :], _model(indices, reals)[3]
    if not rnea_derivatives(
        parent, joint_type, dof, axis, R, p, S, vel, acc, inertias, q, v, a, gravity, da_dq, da_dv, da_dtau
    ):
        return False
    da_dtau[:, :] = 0.0  # M, written by the derivatives, replaced by I, then M⁻¹
    for i in range(n_dofs):
        da_dtau[i, i] = 1.0
    for column in range(n_dofs):
        _cho_solve(L, da_dq[:, column])
        _cho_solve(L, da_dv[:, column])
        _cho_solve(L, da_dtau[:, column])
    for i in range(n_dofs):
        for j in range(n_dofs):
            da_dq[i, j] = -da_dq[i, j]
            da_dv[i, j] = -da_dv[i, j]
    return True


_INDICES = nb.types.Array(nb.types.int64, 1, "C")
_VECTOR = nb.types.Array(nb.types.float64, 1, "C")
_MATRIX = nb.types.Array(nb.types.float64, 2, "C")
SIGNATURES = {
    mass_matrix_kernel: (_INDICES, _VECTOR, _VECTOR, _VECTOR, _MATRIX),
    inverse_dynamics_kernel: (_INDICES, _VECTOR, _VECTOR, _VECTOR, _VECTOR, _VECTOR, _VECTOR, _VECTOR),
    forward_dynamics_kernel: (_INDICES, _VECTOR, _VECTOR, _VECTOR, _VECTOR, _VECTOR, _VECTOR, _VECTOR),
    rnea_derivatives_kernel: (_INDICES, *(_VECTOR,) * 6, _MATRIX, _MATRIX, _MATRIX),
    forward_derivatives_kernel: (_INDICES, *(_VECTOR,) * 7, _MATRIX, _MATRIX, _MATRIX),
}
"""The one signature each kernel is compiled for (float64 and int64 C-contiguous, writable arrays)."""


def compile_kernels() -> None:
    """Compile the kernels for :data:`SIGNATURES` (or load them from numba's on-disk cache) and refuse any
    other argument types from then on: numba raises a TypeError instead of compiling a variant, and the
    callers convert their inputs and retry. Idempotent; the first whole-tree call runs it."""
    for kernel, signature in SIGNATURES.items():
        if signature not in kernel.signatures:
            kernel.compile(signature)
        kernel.disable_compile()
