"""Constrained forward and inverse dynamics in every form of the sources.

Sign convention (DESIGN, [DE-7]): τ = M a + h − Φᵀλ with h = b + g, i.e. the generalized constraint
force is Φᵀλ = M a + h − τ, and the acceleration-level constraint is Φ a + bias = 0 [DE-4] with
bias = Φ̇q̇ (plus rheonomic terms). Aghili [AG-19] writes M q̈ + h = f − 𝓕 with 𝓕 = Aᵀλ_AG, A = Φ; so his
input force f is our τ and his constraint force is 𝓕 = −Φᵀλ (λ_AG = −λ). The conversion is made once,
where [AG-32] is used, and nowhere else.

Forward dynamics, :func:`forward`, four methods that agree where their assumptions hold:

- ``"multiplier"``: saddle point [[M, Φᵀ], [Φ, 0]] [a; −λ] = [τ − h; −bias] [DE-7, MR, MH-12..15],
  solved by a Cholesky factor of M and of the Schur complement ΦM⁻¹Φᵀ = H⁻¹ [DE-34];
- ``"gauss"``: a = −Φ̄ bias + Θ a_u, Φ̄ = M⁻¹Φᵀ(ΦM⁻¹Φᵀ)⁻¹, Θ = I − Φ̄Φ [DE-22, DE-28..30];
- ``"nullspace"``: orthonormal C spanning ker Φ, a = a_p + C z, CᵀMC z = Cᵀ(τ − h − M a_p) [DE-10..15];
- ``"projection"``: P = I − A⁺A, (I − P)a = −A⁺ bias, M_c a = P(τ − h) + C_c q̇ [AG-15, 16, 22..29].

The first two need ΦM⁻¹Φᵀ to be invertible and raise :class:`~flexbody.errors.ConstraintError` when it
is numerically singular; the last two work with redundant rows and at singular configurations, where
λ is the minimum-norm multiplier and is flagged not unique [AG Remark 4].

Inverse dynamics, :func:`inverse`: minimum-norm τ = P(M a + h) [AG-21, LP], optionally weighted by
W [AG-47], or the τ that produces a chosen constraint force Φᵀλ [MH Prop. 2].

Ranks use the tolerances of :mod:`flexbody.linalg.rank` (``tol = max(rtol·σ_max, atol)``).

Dense problems (float64 ndarrays, m ≥ 1) are first solved by numba kernels: Cholesky factors only for
"multiplier"/"gauss", and for "nullspace"/"projection" a Householder QR of Φᵀ in place of the SVD when Φ
is certified to have full row rank and to be well conditioned. Every other case (sparse M, redundant or
nearly dependent rows, singular configurations, invalid input) takes the reference route, which makes
every rank decision and raises every error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ..errors import ConstraintError, StateError
from ..linalg.block_mass import BlockMass
from ..linalg.rank import (
    DENSE_LIMIT,
    ConstraintQR,
    ConstraintSVD,
    constraint_svd,
    resolve_tolerances,
    rows_on_columns,
    stored_columns,
)
from ..linalg.validation import MassSolver as _MassSolver
from ..linalg.validation import as_mass as _mass
from ..linalg.validation import as_vector as _vector
from ..linalg.validation import potrs as _potrs
from .compiled import forward_fast
from .projection import min_norm_lam, particular_acceleration, projection_dense, projection_sparse
from .results import NULLSPACE_SPARSE_LIMIT, ForwardResult, check_choices
from .schur import checked_constraints, cholesky_lower, phi_bar, schur_factor, unpack_terms

if TYPE_CHECKING:
    from ..system import AssembledSystem, State, System

__all__ = ["forward"]


# ----------------------------------------------------------------------------------------- forward
def forward(
    M: ArrayLike | sp.spmatrix | sp.sparray | BlockMass | System | AssembledSystem,
    h: ArrayLike | State,
    tau: ArrayLike,
    Phi: ArrayLike | sp.spmatrix | sp.sparray | None = None,
    bias: ArrayLike | None = None,
    method: str = "projection",
    *,
    rtol: float | None = None,
    atol: float | None = None,
    inertia: str = "Mc",
    gamma: float | None = None,
    rows: ConstraintQR | ConstraintSVD | None = None,
) -> ForwardResult:
    """Constrained forward dynamics: a and Φᵀλ from τ = M a + h − Φᵀλ, Φ a + bias = 0 [DE-4, DE-7].

    Also callable as ``forward(asm, state, tau, method=...)`` where ``asm.terms(t, q, v)`` returns an
    object with attributes ``M, h, Phi, bias`` and ``state`` has ``t, q, v`` (a :class:`flexbody.System`
    is assembled first; assemble once yourself for repeated calls).

    Parameters
    ----------
    M : ndarray, scipy.sparse or BlockMass (n, n)
        Symmetric positive-definite mass matrix [kg, kg·m²]; symmetry is assumed, not checked.
    h : ndarray (n,)
        Non-inertial generalized forces on the left side, h = b + g [N or N·m].
    tau : ndarray (n,)
        Generalized applied/actuator forces [N or N·m]; Aghili's f.
    Phi : ndarray or scipy.sparse (m, n)
        Constraint Jacobian (m may be 0; ``None`` means no constraints).
    bias : ndarray (m,)
        Acceleration bias Φ̇q̇ (plus rheonomic terms), so that Φ a + bias = 0.
    method : {"projection", "multiplier", "gauss", "nullspace"}
        See the module docstring. "multiplier" and "gauss" raise ConstraintError when ΦM⁻¹Φᵀ is
        numerically singular (a Cholesky pivot relative to its diagonal ≤ rtol, or a row of Φ with
        norm ≤ atol). "nullspace" with sparse M and n > 2000 uses a sparse coordinate-partitioning basis.
    rtol, atol : float, optional
        Rank tolerances, tol = max(rtol·σ_max, atol) (defaults 1e-9 and 1e-12, see
        :mod:`flexbody.linalg.rank`).
    inertia : {"Mc", "symmetric", "gamma"}
        Constraint inertia matrix of the dense projection method: M_c [AG-23, 24], M_c′ [AG-28] or
        M_c″(γ) [AG-29]. All give the same a. With sparse M the projection method never forms n×n
        matrices and ``inertia`` has no effect (see :func:`projection_sparse`).
    gamma : float, optional
        γ of M_c″ [kg or kg·m²]; default trace(M)/n, the mean eigenvalue of M, which like Aghili's
        suggestion γ = ‖M‖ is of the magnitude of M.
    rows : ConstraintQR or ConstraintSVD, optional
        The independent rows of this (dense) Φ with the same tolerances, made already (a workspace's
        ``independent_rows(rtol, atol)``): "projection" (and "nullspace", with a certified QR) use them instead
        of factoring Φ again.

    Returns
    -------
    ForwardResult

    Raises
    ------
    StateError
        M, h or tau has the wrong shape or NaN/Inf, or M is not positive definite.
    ConstraintError
        Phi or bias has the wrong shape or NaN/Inf; ΦM⁻¹Φᵀ is singular ("multiplier", "gauss").
    FlexbodyError
        Unknown ``method`` or ``inertia``.
    """
    M, h, tau, Phi, terms_bias, method = unpack_terms(M, h, tau, Phi, method)
    if terms_bias is not None:
        bias = terms_bias
    fast = forward_fast(M, h, tau, Phi, bias, method, rtol, atol, inertia, gamma, rows)
    if fast is not None:
        return fast
    check_choices(method, inertia)
    M, n, sparse = _mass(M)
    h = _vector(h, "h", n)
    tau = _vector(tau, "tau", n)
    if _large_block_system(M, Phi, n):
        return _forward_on_stored_columns(M, h, tau, Phi, bias, method, *resolve_tolerances(rtol, atol))
    Phi, bias = checked_constraints(Phi, bias, n)
    rtol, atol = resolve_tolerances(rtol, atol)
    if method == "multiplier":
        return _multiplier(M, sparse, tau - h, Phi, bias, rtol, atol)
    if method == "gauss":
        return _gauss(M, sparse, tau - h, Phi, bias, rtol, atol)
    if method == "nullspace":
        return _nullspace(M, sparse, h, tau, Phi, bias, rtol, atol)
    if sparse:
        return projection_sparse(M, tau - h, Phi, bias, rtol, atol)
    svd = rows if isinstance(rows, ConstraintSVD) and (rows.rtol, rows.atol) == (rtol, atol) else None
    return projection_dense(M, h, tau, Phi, bias, rtol, atol, inertia, gamma, svd)


def _unconstrained(solver: _MassSolver, f: np.ndarray, m: int, method: str) -> ForwardResult:
    a = solver.solve(f)
    return ForwardResult(a, np.zeros_like(a), np.zeros(m), True, 0, method)


def _multiplier(M, sparse, f, Phi, bias, rtol, atol) -> ForwardResult:
    """Saddle point [[M, Φᵀ], [Φ, 0]] [a; −λ] = [τ − h; −bias] [DE-7, MR, MH-12..15], solved by block
    elimination: a = a_u + M⁻¹Φᵀλ, (ΦM⁻¹Φᵀ) λ = −(Φ a_u + bias)."""
    solver = _MassSolver(M, sparse)
    m = Phi.shape[0]
    if m == 0:
        return _unconstrained(solver, f, 0, "multiplier")
    a_u = solver.solve(f)  # M⁻¹(τ − h)  [DE-22]
    Y = solver.solve(Phi.T)  # M⁻¹Φᵀ (n, m), m solves
    S = Phi @ Y  # ΦM⁻¹Φᵀ = H⁻¹  [DE-34]
    cS = schur_factor(S, Phi, rtol, atol, "multiplier")
    lam = _potrs(cS, -(Phi @ a_u + bias), lower=1)[0]
    a = a_u + Y @ lam
    return ForwardResult(a, Phi.T @ lam, lam, True, m, "multiplier")


def _gauss(M, sparse, f, Phi, bias, rtol, atol) -> ForwardResult:
    """Gauss' principle, explicit solution a = −Φ̄ bias + Θ a_u [DE-27..30], Θ x = x − Φ̄(Φx)."""
    solver = _MassSolver(M, sparse)
    m = Phi.shape[0]
    if m == 0:
        return _unconstrained(solver, f, 0, "gauss")
    a_u = solver.solve(f)  # [DE-22]
    Phi_bar, cS = phi_bar(solver, Phi, rtol, atol, "gauss")
    a = -Phi_bar @ bias + (a_u - Phi_bar @ (Phi @ a_u))  # [DE-30], Θ applied as an operator
    lam = -_potrs(cS, Phi @ a_u + bias, lower=1)[0]  # λ = −H(Φ a_u + Φ̇q̇)  [DE-27, DE-33]
    return ForwardResult(a, Phi.T @ lam, lam, True, m, "gauss")


def _nullspace(M, sparse, h, tau, Phi, bias, rtol, atol) -> ForwardResult:
    """Minimal form [DE-10..15]: a = a_p + C z with C orthonormal, ΦC = 0 [DE-11], a_p = −Φ⁺bias, and
    Cᵀ(M a + h − τ) = 0 [DE-13], i.e. M_p z = Cᵀ(τ − h − M a_p) with M_p = CᵀMC [DE-15]."""
    n = M.shape[0]
    if sparse:
        if n > NULLSPACE_SPARSE_LIMIT:
            return _nullspace_partitioned(M, h, tau, Phi, bias, rtol, atol)
        M = M.toarray()
    svd, C = constraint_svd(Phi, rtol, atol, full=True)
    a_p = particular_acceleration(svd, bias)  # particular solution −Φ⁺ bias
    Mp = C.T @ M @ C  # [DE-15]
    c, info = cholesky_lower(Mp)
    if info != 0:
        raise StateError(f"C^T M C is not positive definite (pivot {info}); M must be SPD")
    z = _potrs(c, C.T @ (tau - h - M @ a_p), lower=1)[0] if C.shape[1] else np.zeros(0)
    a = a_p + C @ z
    force = svd.Vt.T @ (svd.Vt @ (M @ a + h - tau))  # Φᵀλ ∈ im Φᵀ  [DE-6]
    return ForwardResult(a, force, min_norm_lam(svd, force), svd.rank == svd.n_constraints, svd.rank, "nullspace")


def _nullspace_partitioned(M, h, tau, Phi, bias, rtol, atol, cols=None) -> ForwardResult:
    """Minimal form [DE-10..15] for large sparse M with a sparse basis of ker Φ by coordinate
    partitioning: with A = Σ_r V_rᵀ (the r independent combinations of the rows, from the rank-revealing
    SVD, so redundant rows and singular configurations are handled as in the dense form), r pivot columns
    d of A (pivoted QR) are the dependent coordinates and C = [−A_d⁻¹A_i; I] (rows permuted) satisfies
    ΦC = 0 [DE-11] without being orthonormal; M_p = CᵀMC [DE-15] is sparse and factored by CHOLMOD.
    ``Phi`` may be given on its stored columns only (``cols``, the other columns being zero)."""
    n = M.shape[0]
    cols = np.arange(n) if cols is None else np.asarray(cols)
    svd, _ = constraint_svd(Phi, rtol, atol)  # on the columns ``cols``
    r = svd.rank
    if r == 0:
        a = _MassSolver(M, True).solve(tau - h)
        return ForwardResult(a, np.zeros(n), np.zeros(svd.n_constraints), True, 0, "nullspace")
    Vt = rows_on_columns(svd.Vt, cols, n)
    a_p = -(Vt.T @ ((svd.U.T @ bias) / svd.s))  # particular solution −Φ⁺ bias [AG-16]
    A_c = svd.s[:, None] * svd.Vt  # (r, n_c), same row space as Φ
    local_dep = np.sort(sla.qr(A_c, mode="r", pivoting=True)[1][:r])
    dep = cols[local_dep]  # dependent coordinates (pivot columns)
    ind = np.setdiff1d(np.arange(n), dep)
    local_ind = np.setdiff1d(np.arange(len(cols)), local_dep)
    A_i = np.where(np.abs(A_c[:, local_ind]) > 1e-14 * np.abs(A_c).max(), A_c[:, local_ind], 0.0)
    entering = np.flatnonzero(np.abs(A_i).sum(axis=0) > 0)  # independent coordinates that enter Φ
    coupled = np.searchsorted(ind, cols[local_ind[entering]])  # … as positions among ``ind``
    X = sla.lu_solve(sla.lu_factor(A_c[:, local_dep]), A_i[:, entering])
    rows = np.concatenate([ind, np.repeat(dep, coupled.size)])
    basis_cols = np.concatenate([np.arange(ind.size), np.tile(coupled, r)])
    C = sp.csc_matrix((np.concatenate([np.ones(ind.size), -X.ravel()]), (rows, basis_cols)), shape=(n, ind.size))
    M_sparse = M.tocsc() if hasattr(M, "flexible") else sp.csc_matrix(M)
    Mp = (C.T @ (M_sparse @ C)).tocsc()  # [DE-15]
    z = _MassSolver(Mp, True).solve(C.T @ (tau - h - M @ a_p))  # [DE-13]
    a = a_p + C @ z
    force = Vt.T @ (Vt @ (M @ a + h - tau))  # Φᵀλ ∈ im Φᵀ  [DE-6]
    lam = svd.U @ ((Vt @ force) / svd.s)  # minimum-norm λ [AG-18]
    return ForwardResult(a, force, lam, svd.rank == svd.n_constraints, svd.rank, "nullspace")


def _large_block_system(M, Phi, n: int) -> bool:
    """A rigid–flexible system (block mass) whose sparse Φ is too large to be made dense."""
    return (
        isinstance(M, BlockMass)
        and sp.issparse(Phi)
        and Phi.ndim == 2
        and Phi.shape[1] == n
        and Phi.shape[0] * n > DENSE_LIMIT
    )


def _forward_on_stored_columns(M, h, tau, Phi, bias, method, rtol, atol) -> ForwardResult:
    """The four forms on a large rigid–flexible system without (m, n) or (n, m) arrays.

    Only the n_c columns c of Φ holding entries (joint and constrained nodal coordinates) enter the small
    matrices: ΦM⁻¹Φᵀ = Φ_c (M⁻¹)_cc Φ_cᵀ with (M⁻¹)_cc from :meth:`BlockMass.inverse_submatrix` (its
    flexible part formed once per column set), the rank-revealing SVD is that of Φ_c, and M⁻¹ is applied
    to n-vectors only (a_u and the constraint force): two block solves per call.

    - "multiplier" [DE-7] and "gauss" [DE-27..30]: λ = −(ΦM⁻¹Φᵀ)⁻¹(Φ a_u + bias), a = a_u + M⁻¹Φᵀλ (the
      Gauss form a = a_u − Φ̄(Φ a_u + bias) is the same vector);
    - "projection" (any inertia kind, [AG-25] has a unique solution): as :func:`projection_sparse`;
    - "nullspace" [DE-10..15]: the coordinate-partitioning basis of :func:`_nullspace_partitioned`.
    """
    Phi = sp.csr_matrix(Phi, dtype=float)
    if not np.isfinite(Phi.data).all():
        raise ConstraintError("Phi contains NaN/Inf")
    m, n = Phi.shape
    bias = _vector(bias, "bias", m, ConstraintError)
    cols = stored_columns(Phi)
    Phi_c = np.ascontiguousarray(Phi[:, cols].toarray())
    a_u = M.solve(tau - h)
    if method in ("multiplier", "gauss"):
        cS = schur_factor(Phi_c @ M.inverse_submatrix(cols) @ Phi_c.T, Phi_c, rtol, atol, method)
        lam = _potrs(cS, -(Phi @ a_u + bias), lower=1)[0]
        force = Phi.T @ lam
        return ForwardResult(a_u + M.solve(force), force, lam, True, m, method)
    if method == "nullspace":
        return _nullspace_partitioned(M, h, tau, Phi_c, bias, rtol, atol, cols=cols)
    svd, _ = constraint_svd(Phi_c, rtol, atol)
    r = svd.rank
    if r == 0:
        return ForwardResult(a_u, np.zeros(n), np.zeros(m), m == 0, 0, "projection")
    Vc = svd.Vt  # (r, n_c): V_rᵀ on the stored columns
    c, info = cholesky_lower(Vc @ M.inverse_submatrix(cols) @ Vc.T)
    if info != 0:
        raise StateError(f"V_r^T M^-1 V_r is not positive definite (pivot {info}); M must be SPD")
    mu = _potrs(c, -(svd.U.T @ bias) / svd.s - Vc @ a_u[cols], lower=1)[0]
    force = np.zeros(n)
    force[cols] = Vc.T @ mu
    return ForwardResult(a_u + M.solve(force), force, svd.U @ (mu / svd.s), r == m, r, "projection")
