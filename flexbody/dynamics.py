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

Ranks use the tolerances of :mod:`flexbody.analysis` (``tol = max(rtol·σ_max, atol)``).

Dense problems (float64 ndarrays, m ≥ 1) are first solved by numba kernels: Cholesky factors only for
"multiplier"/"gauss", and for "nullspace"/"projection" a Householder QR of Φᵀ in place of the SVD when Φ
is certified to have full row rank and to be well conditioned. Every other case (sparse M, redundant or
nearly dependent rows, singular configurations, invalid input) takes the reference route, which makes
every rank decision and raises every error.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import isfinite

import numba as nb
import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from .analysis import (DEFAULT_ATOL, DEFAULT_RTOL, ConstraintSVD, constraint_rank, constraint_svd,
                       DENSE_LIMIT, dense_jacobian, resolve_tolerances, rows_on_columns, stored_columns)
from .blockmass import BlockMass
from .errors import ConstraintError, FlexbodyError, StateError
from .linalg import MassSolver as _MassSolver
from .linalg import as_mass as _mass
from .linalg import as_vector as _vector
from .linalg import potrf as _potrf
from .linalg import potrs as _potrs


__all__ = ["METHODS", "INERTIA_KINDS", "DEFAULT_RTOL", "DEFAULT_ATOL", "ForwardResult", "InverseResult",
           "Projection", "GeneralizedConstrainedTerms", "forward", "inverse", "projector",
           "constraint_inertia", "nullspace_basis", "mass_weighted_inverse", "generalized_constrained_terms"]

METHODS = ("multiplier", "gauss", "nullspace", "projection")
INERTIA_KINDS = ("Mc", "symmetric", "gamma")
NULLSPACE_SPARSE_LIMIT = 2000
"""Largest n for which ``method="nullspace"`` with sparse M forms the dense orthonormal basis; above it
the basis is a sparse coordinate partition (:func:`_nullspace_partitioned`)."""
CONSISTENCY_RTOL = 1e-8
"""Relative tolerance of the check ‖Φa + bias‖ ≤ CONSISTENCY_RTOL·(‖Φ‖_F‖a‖ + ‖bias‖) in :func:`inverse`."""



@dataclass(frozen=True)
class ForwardResult:
    """Result of :func:`forward`.

    Attributes
    ----------
    a : ndarray (n,)
        Generalized accelerations.
    constraint_force : ndarray (n,)
        Generalized constraint force Φᵀλ = M a + h − τ [N or N·m].
    lam : ndarray (m,)
        Multipliers; the minimum-norm ones when Φ is rank-deficient [AG Remark 4].
    lam_unique : bool
        False when Φ is rank-deficient (then λ + y with y ∈ ker Φᵀ gives the same force).
    rank : int
        Numerical rank of Φ used by the method.
    method : str
        The method that produced the result.
    """

    a: np.ndarray
    constraint_force: np.ndarray
    lam: np.ndarray
    lam_unique: bool
    rank: int
    method: str


@dataclass(frozen=True)
class InverseResult:
    """Result of :func:`inverse`: actuation ``tau`` (n,), ``constraint_force`` Φᵀλ (n,), ``lam`` (m,),
    ``lam_unique`` and the numerical ``rank`` of Φ."""

    tau: np.ndarray
    constraint_force: np.ndarray
    lam: np.ndarray
    lam_unique: bool
    rank: int


@dataclass(frozen=True)
class Projection:
    """Orthogonal projector P = I − A⁺A onto ker Φ [AG-15] (= V₂V₂ᵀ [AG-4]) applied without forming it.

    With Φ = U_r Σ_r V_rᵀ (rank r): (I − P)x = V_r V_rᵀ x, A⁺y = V_r Σ_r⁻¹ U_rᵀ y.
    """

    svd: ConstraintSVD

    @property
    def rank(self) -> int:
        return self.svd.rank

    @property
    def singular_values(self) -> np.ndarray:
        return self.svd.singular_values

    @property
    def tol(self) -> float:
        return self.svd.tol

    @property
    def n(self) -> int:
        return self.svd.n_dofs

    def apply_perp(self, x: np.ndarray) -> np.ndarray:
        """(I − P) x = x⊥ [AG-5], x of shape (n,) or (n, k)."""
        Vt = self.svd.Vt
        return Vt.T @ (Vt @ x)

    def apply(self, x: np.ndarray) -> np.ndarray:
        """P x = x∥ [AG-5], x of shape (n,) or (n, k)."""
        return x - self.apply_perp(x)

    def pinv_apply(self, y: np.ndarray) -> np.ndarray:
        """A⁺ y (n,) for y (m,) [AG-15, AG-16]."""
        s = self.svd
        return s.Vt.T @ ((s.U.T @ y) / s.s)

    def pinv_t_apply(self, x: np.ndarray) -> np.ndarray:
        """A⁺ᵀ x (m,) for x (n,): the minimum-norm λ with Φᵀλ = x when x ∈ im Φᵀ [AG-18]."""
        s = self.svd
        return s.U @ ((s.Vt @ x) / s.s)

    def matrix(self) -> np.ndarray:
        """Dense P (n, n); for small n only."""
        Vt = self.svd.Vt
        return np.eye(self.n) - Vt.T @ Vt


@dataclass(frozen=True)
class GeneralizedConstrainedTerms:
    """Terms of the generalized constrained equation Θᵀτ = M a + b + g − Φᵀ(α + ρ) [DE-39].

    Attributes
    ----------
    theta_T : ndarray (n, n) or scipy.sparse.linalg.LinearOperator
        Θᵀ = I − ΦᵀΦ̄ᵀ [DE-38]; an operator when M is sparse (never formed densely).
    alpha : ndarray (m,)
        α = HΦM⁻¹b − HΦ̇q̇ [DE-36].
    rho : ndarray (m,)
        ρ = HΦM⁻¹g [DE-37].
    Phi_bar : ndarray (n, m)
        Mass-weighted inverse Φ̄ [DE-28].
    H : ndarray (m, m)
        Constraint-space mass matrix (ΦM⁻¹Φᵀ)⁻¹ [DE-34].
    """

    theta_T: object
    alpha: np.ndarray
    rho: np.ndarray
    Phi_bar: np.ndarray
    H: np.ndarray


# ----------------------------------------------------------------------------------------- validation
def _unpack(M, h, third, Phi, method):
    """Support the ``(asm, state, x)`` calling form (duck typing on ``asm.terms``; a System is assembled)."""
    if callable(getattr(M, "assemble", None)):
        from .assembled import as_assembled
        M = as_assembled(M, "dynamics")
    if not hasattr(M, "terms"):
        return M, h, third, Phi, None, method
    asm, state = M, h
    if isinstance(Phi, str):
        method = Phi
    for attr in ("t", "q", "v"):
        if not hasattr(state, attr):
            raise StateError(f"state must have attributes t, q, v; missing {attr!r}")
    terms = asm.terms(state.t, state.q, state.v)
    return terms.M, terms.h, third, terms.Phi, terms.bias, method


def _constraints(Phi, bias, n: int, bias_required: bool = True):
    Phi = dense_jacobian(Phi, n)
    m = Phi.shape[0]
    if bias is None:
        if m > 0 and bias_required:
            raise ConstraintError(f"bias (Φ̇q̇, shape ({m},)) is required when Phi has {m} rows")
        return Phi, None if m > 0 else np.zeros(0)
    return Phi, _vector(bias, "bias", m, ConstraintError)


# -------------------------------------------------------------------------------------- linear algebra
def _chol(S: np.ndarray):
    """Lower Cholesky factor and LAPACK info (0 on success)."""
    return _potrf(S, lower=1, clean=0)


def _schur_factor(S: np.ndarray, Phi: np.ndarray, rtol: float, atol: float, method: str) -> np.ndarray:
    """Cholesky factor of S = ΦM⁻¹Φᵀ (m, m), or ConstraintError if it is numerically singular.

    A pivot d_i of the factor relative to its diagonal entry, d_i / S_ii, is sin² of the M⁻¹-metric angle
    between row i of Φ and the span of rows 0..i−1 (invariant to row scaling); a ratio ≤ rtol, or a row
    of Φ with norm ≤ atol, means a dependent row. The check costs O(m n) after the factorization.
    """
    c, info = _potrf(S, lower=1, clean=0)
    if (info == 0 and (np.diagonal(c) ** 2 > rtol * np.diagonal(S)).all()
            and np.einsum("ij,ij->i", Phi, Phi).min() > atol * atol):
        return c
    _raise_singular(S, Phi, rtol, atol, method)


def _dependent_rows(S: np.ndarray, Phi: np.ndarray, rtol: float, atol: float) -> list[int]:
    """Rows of Φ dependent on earlier kept rows (sequential pivots of S; error path only)."""
    norms = np.linalg.norm(Phi, axis=1)
    kept: list[int] = []
    dependent: list[int] = []
    for i in range(S.shape[0]):
        pivot = S[i, i]
        if kept and pivot > 0:
            s_ki = S[kept, i]
            pivot -= s_ki @ np.linalg.solve(S[np.ix_(kept, kept)], s_ki)
        if norms[i] <= atol or pivot <= rtol * S[i, i]:
            dependent.append(i)
        else:
            kept.append(i)
    return dependent


def _raise_singular(S, Phi, rtol, atol, method):
    report = constraint_rank(Phi, rtol, atol=atol)
    m = Phi.shape[0]
    raise ConstraintError(
        f"method={method!r}: the constraint-space matrix Phi M^-1 Phi^T ({m}x{m}) is numerically singular "
        f"(rows dependent on earlier rows, pivot/diagonal <= rtol {rtol:.1e} or row norm <= atol "
        f"{atol:.1e}: {_dependent_rows(S, Phi, rtol, atol)}); Phi has numerical rank {report.rank} of {m} "
        f"rows at tol {report.tol:.2e}. Redundant constraints or a singular configuration: "
        "use method='projection' or 'nullspace'.")


def _min_norm_lam(svd: ConstraintSVD, force: np.ndarray) -> np.ndarray:
    """λ = A⁺ᵀ·force, the minimum-norm multipliers of a force in im Φᵀ [AG-18, Remark 4]."""
    if svd.rank == 0:
        return np.zeros(svd.n_constraints)
    return svd.U @ ((svd.Vt @ force) / svd.s)


def _a_perp(svd: ConstraintSVD, bias: np.ndarray) -> np.ndarray:
    """(I − P) a = C q̇ = −A⁺ Ȧq̇ = −A⁺ bias [AG-13, AG-16]."""
    if svd.rank == 0:
        return np.zeros(svd.n_dofs)
    return -(svd.Vt.T @ ((svd.U.T @ bias) / svd.s))


# ------------------------------------------------------------------------- dense fast path (numba)
# Small dense problems are dominated by per-call overhead (validation, scipy wrappers, and LAPACK SVD
# drivers that take ~20 µs even for a 12×34 Φ), so forward() first tries one numba kernel per method
# family. A kernel checks finiteness and returns a status; on any status but _FAST_OK the reference
# route below runs from scratch, so every error (with its message naming the culprit or the dependent
# rows) and every borderline rank decision comes from the reference code.
# Inner loops run over zero-based ranges of 1-D row views: numba then needs no negative-index
# wraparound and LLVM vectorises them (2-D indexing from a non-zero start is scalar code).
_FAST_OK, _FAST_BAD_INPUT, _FAST_FAILED = 0, 1, 2
_FAST_MODES = {"nullspace": 0, "Mc": 1, "symmetric": 2, "gamma": 3}
_FLOAT64 = np.dtype(np.float64)
_FM = {"reassoc", "contract"}         # reassociation and FMA only (no nnan/ninf): vectorised reductions
_RANK_SLACK = 8.0 * np.finfo(float).eps
"""Perturbation of singular values, relative to ‖Φ‖_F and per unit of m + n, allowed for the round-off
of the fast path's QR and of LAPACK's SVD when full row rank is certified without an SVD."""
_FAST_MIN_PIVOT = 1e-6
"""Smallest relative Schur pivot (sin² of a row's M⁻¹-angle to the earlier rows) the multiplier/Gauss
kernel accepts; also ≥ 2·rtol. Below it (nearly dependent rows) the reference route decides and solves,
so that round-off alone (∝ the conditioning of ΦM⁻¹Φᵀ) never makes the two routes differ noticeably."""
_FAST_MAX_COND = 1e6
"""Largest ‖Φ‖_F‖R⁻¹‖_F (a bound on the condition number of Φ) the QR kernel accepts, for the same
reason: beyond it the SVD route of the reference code decides and solves."""


@nb.njit(cache=True)
def _nb_finite(M, h, tau, Phi, bias):
    """True when every entry is finite (x·0 is NaN exactly for NaN/Inf; branch-free, vectorisable)."""
    s = 0.0
    for i in range(M.shape[0]):
        Mi = M[i]
        for j in range(Mi.shape[0]):
            s += Mi[j] * 0.0
    for i in range(Phi.shape[0]):
        Pi = Phi[i]
        for j in range(Pi.shape[0]):
            s += Pi[j] * 0.0
    for i in range(h.shape[0]):
        s += h[i] * 0.0 + tau[i] * 0.0
    for i in range(bias.shape[0]):
        s += bias[i] * 0.0
    return s == 0.0


@nb.njit(cache=True, fastmath=_FM)
def _nb_dot(x, y):
    s = 0.0
    for t in range(x.shape[0]):
        s += x[t] * y[t]
    return s


@nb.njit(cache=True, fastmath=_FM)
def _nb_axpy(c, x, y):
    """y ← y − c·x."""
    for t in range(y.shape[0]):
        y[t] -= c * x[t]


@nb.njit(cache=True, fastmath=_FM)
def _nb_factor_rows(W, n):
    """Right-looking Cholesky of the upper-stored W[:n, :n] in place (W[:n, :n] ← U with UᵀU = A),
    applying the same row operations to the extra columns W[:, n:] (which become U⁻ᵀ·them).
    Returns 0, or the 1-based index of the first non-positive pivot."""
    for k in range(n):
        piv = W[k, k]
        if not piv > 0.0:
            return k + 1
        d = np.sqrt(piv)
        W[k, k] = d
        wk = W[k, k + 1:]
        r = 1.0 / d
        for t in range(wk.shape[0]):
            wk[t] *= r
        for i in range(k + 1, n):
            _nb_axpy(W[k, i], W[k, i:], W[i, i:])
    return 0


@nb.njit(cache=True, fastmath=_FM)
def _nb_chol(A, U):
    """Cholesky factor U (upper, UᵀU = A) of the lower triangle of A (as LAPACK potrf 'L' reads it);
    U must be zeroed. Returns 0, or the 1-based index of the first non-positive pivot."""
    n = A.shape[0]
    for i in range(n):
        for j in range(i, n):
            U[i, j] = A[j, i]
    return _nb_factor_rows(U, n)


@nb.njit(cache=True, fastmath=_FM)
def _nb_utsolve(U, b):
    """b ← U⁻ᵀ b (forward substitution with L = Uᵀ, column-oriented)."""
    n = U.shape[0]
    for i in range(n):
        xi = b[i] / U[i, i]
        b[i] = xi
        _nb_axpy(xi, U[i, i + 1:], b[i + 1:])


@nb.njit(cache=True, fastmath=_FM)
def _nb_usolve(U, b):
    """b ← U⁻¹ b (back substitution, row-oriented)."""
    n = U.shape[0]
    for i in range(n - 1, -1, -1):
        b[i] = (b[i] - _nb_dot(U[i, i + 1:], b[i + 1:])) / U[i, i]


@nb.njit(cache=True, fastmath=_FM)
def _nb_kkt(M, h, tau, Phi, bias, rtol, atol):
    """Dense "multiplier" and "gauss" forward dynamics for m ≥ 1 (Cholesky factors only).

    M = UᵀU, Yt = (U⁻ᵀΦᵀ)ᵀ (m, n), S = ΦM⁻¹Φᵀ = Yt Ytᵀ = H⁻¹ [DE-34], S = UsᵀUs with the checks of
    :func:`_schur_factor` made stricter (pivot² > max(2·rtol, _FAST_MIN_PIVOT)·S_ii, ‖Φ_i‖² > 2·atol²),
    so that the reference route decides every borderline case. With w = U⁻ᵀ(τ − h), a_u = U⁻¹w [DE-22]
    and Φ a_u = Yt w: λ = −S⁻¹(Φ a_u + bias) [DE-33, MH-12..15] and a = a_u + M⁻¹Φᵀλ = U⁻¹(w + Ytᵀλ).
    The Gauss form a = a_u − Φ̄(Φ a_u + bias) [DE-30] with Φ̄ = M⁻¹ΦᵀS⁻¹ [DE-28] applied as an operator
    is the same sequence of solves, so both methods share this kernel.
    Returns (status, a, Φᵀλ, λ); _FAST_FAILED when M is not SPD or a check fails.
    """
    n, m = M.shape[0], Phi.shape[0]
    a = np.zeros(n)
    force = np.zeros(n)
    lam = np.zeros(m)
    if not _nb_finite(M, h, tau, Phi, bias):
        return _FAST_BAD_INPUT, a, force, lam
    for k in range(m):
        if not _nb_dot(Phi[k], Phi[k]) > 2.0 * atol * atol:   # a (numerically) zero row of Φ
            return _FAST_FAILED, a, force, lam
    W = np.zeros((n, n + m + 1))                               # [M | Φᵀ | τ − h], upper part
    for i in range(n):
        Wi = W[i]
        for j in range(i, n):
            Wi[j] = M[j, i]                                    # the lower triangle of M, as potrf 'L'
        for k in range(m):
            Wi[n + k] = Phi[k, i]
        Wi[n + m] = tau[i] - h[i]
    if _nb_factor_rows(W, n):                                  # M = UᵀU, and the last m + 1 columns
        return _FAST_FAILED, a, force, lam                     # become U⁻ᵀ[Φᵀ | τ − h] = [Ytᵀ | w]
    B = W[:, n:].copy()                                        # [Ytᵀ | w] (n, m + 1)
    G = np.dot(B.T, B)                                         # [[S, Φ a_u], [., .]], S = Yt Ytᵀ
    S = G[:m, :m].copy()
    Us = np.zeros((m, m))
    if _nb_chol(S, Us) != 0:
        return _FAST_FAILED, a, force, lam
    floor = max(2.0 * rtol, _FAST_MIN_PIVOT)                  # margins over _schur_factor's test
    for k in range(m):
        if not Us[k, k] * Us[k, k] > floor * S[k, k]:
            return _FAST_FAILED, a, force, lam
    for k in range(m):                                         # λ = −S⁻¹(Φ a_u + bias)
        lam[k] = -(G[k, m] + bias[k])
    _nb_utsolve(Us, lam)
    _nb_usolve(Us, lam)
    for i in range(n):                                         # a = U⁻¹(w + Ytᵀλ)
        a[i] = B[i, m] + _nb_dot(B[i, :m], lam)
    U = W[:, :n]
    for i in range(n - 1, -1, -1):
        a[i] = (a[i] - _nb_dot(U[i, i + 1:], a[i + 1:])) / U[i, i]
    for k in range(m):                                         # Φᵀλ
        _nb_axpy(-lam[k], Phi[k], force)
    return _FAST_OK, a, force, lam


@nb.njit(cache=True, fastmath=_FM)
def _nb_house_qr(Phi, V, beta, R):
    """Householder QR of Φᵀ (n, m), m ≤ n, worked on the rows of Φ: Φᵀ = Q [R; 0], Q = H₀⋯H_{m−1},
    H_k = I − β_k v_k v_kᵀ with v_k = V[k] (zero before k). R (m, m) upper triangular."""
    m, n = Phi.shape
    for k in range(m):
        Vk = V[k]
        Pk = Phi[k]
        for i in range(n):
            Vk[i] = Pk[i]
    for k in range(m):
        x = V[k, k:]
        s = _nb_dot(x, x)
        x0 = x[0]
        alpha = -np.sqrt(s) if x0 >= 0.0 else np.sqrt(s)
        x[0] = x0 - alpha
        vv = s - x0 * x0 + x[0] * x[0]                         # ‖v‖² = ‖x‖² − x₀² + v₀²
        bk = 2.0 / vv if vv > 0.0 else 0.0
        beta[k] = bk
        R[k, k] = alpha
        for j in range(k + 1, m):                              # apply H_k to the later rows
            y = V[j, k:]
            _nb_axpy(bk * _nb_dot(x, y), x, y)
            R[k, j] = y[0]
            R[j, k] = 0.0
        for i in range(k):
            V[k, i] = 0.0


@nb.njit(cache=True, fastmath=_FM)
def _nb_q_transpose(V, beta, full):
    """Rows of Qᵀ for the QR of :func:`_nb_house_qr`, from the compact WY form Q = I − Y T Yᵀ, Y = Vᵀ
    (LAPACK dlarft, forward, columnwise): Q₁ᵀ (m, n), or with ``full`` all of Qᵀ (n, n), whose rows
    m..n−1 are Cᵀ with C an orthonormal basis of ker Φ."""
    m, n = V.shape
    T = np.zeros((m, m))
    w = np.empty(m)
    for i in range(m):
        for j in range(i):
            w[j] = -beta[i] * _nb_dot(V[j, i:], V[i, i:])
        for j in range(i):
            T[j, i] = _nb_dot(T[j, j:i], w[j:i])
        T[i, i] = beta[i]
    TV = np.dot(T.T, V)
    if full:
        QT = -np.dot(V.T, TV)
    else:
        QT = -np.dot(V[:, :m].T.copy(), TV)                   # Yᵀ's first m columns
    for i in range(QT.shape[0]):
        QT[i, i] += 1.0
    return QT


@nb.njit(cache=True, fastmath=_FM)
def _nb_full_row_rank(R, rtol, atol, n):
    """True when the SVD rank test σ_min > max(rtol·σ_max, atol) of analysis.constraint_svd certainly
    gives rank m: σ_min ≥ 1/‖R⁻¹‖_F and σ_max ≤ ‖R‖_F, with a factor 2 on the bound and an absolute slack
    for the round-off of both this QR and LAPACK's SVD; and ‖R‖_F‖R⁻¹‖_F ≤ _FAST_MAX_COND. Otherwise the
    caller falls back to the SVD."""
    m = R.shape[0]
    fro = 0.0
    for i in range(m):
        fro += _nb_dot(R[i, i:], R[i, i:])
        if R[i, i] == 0.0:
            return False
    fro = np.sqrt(fro)
    X = np.zeros((m, m))                                       # R⁻¹ (upper), column by column
    inv2 = 0.0
    for j in range(m):
        X[j, j] = 1.0 / R[j, j]
        for i in range(j - 1, -1, -1):
            s = 0.0
            for k in range(i + 1, j + 1):
                s -= R[i, k] * X[k, j]
            X[i, j] = s / R[i, i]
        for i in range(j + 1):
            inv2 += X[i, j] * X[i, j]
    if not inv2 < np.inf:
        return False
    slack = _RANK_SLACK * (m + n) * fro
    lower = 1.0 / np.sqrt(inv2)
    return (0.5 * lower - 2.0 * slack > max(rtol * (fro + 2.0 * slack), atol)
            and fro <= _FAST_MAX_COND * lower)


@nb.njit(cache=True, fastmath=_FM)
def _nb_lu_solve(A, b):
    """Solve A x = b by LU with partial (row) pivoting, as LAPACK getrf/getrs; A and b are overwritten
    (x in b). Returns False at an exactly zero pivot."""
    n = A.shape[0]
    for k in range(n):
        p = k
        big = abs(A[k, k])
        for i in range(k + 1, n):
            v = abs(A[i, k])
            if v > big:
                big = v
                p = i
        if big == 0.0:
            return False
        if p != k:
            Ak = A[k]
            Ap = A[p]
            for j in range(n):
                t = Ak[j]
                Ak[j] = Ap[j]
                Ap[j] = t
            t = b[k]
            b[k] = b[p]
            b[p] = t
        d = 1.0 / A[k, k]
        bk = b[k]
        for i in range(k + 1, n):
            l = A[i, k] * d
            A[i, k] = l
            b[i] -= l * bk
        uk = A[k, k + 1:]
        for i in range(k + 1, n):
            _nb_axpy(A[i, k], uk, A[i, k + 1:])
    _nb_usolve(A, b)
    return True


@nb.njit(cache=True, fastmath=_FM)
def _nb_ortho(M, h, tau, Phi, bias, rtol, atol, mode, gamma):
    """Dense "nullspace" (mode 0) and "projection" (mode 1 M_c, 2 M_c′, 3 M_c″) forward dynamics for
    1 ≤ m ≤ n and Φ of certified full row rank, from the Householder QR Φᵀ = Q₁R instead of an SVD.

    With full rank, V_r spans the columns of Q₁ (n, m): P = I − Q₁Q₁ᵀ [AG-15], A⁺ = Q₁R⁻ᵀ, the
    minimum-norm (here unique) λ = A⁺ᵀ·force = R⁻¹Q₁ᵀ·force [AG-18], and the trailing n − m columns of
    Q are an orthonormal basis C of ker Φ [DE-11]. The formulas are then those of :func:`_nullspace` and
    :func:`_projection_dense`. Returns (status, a, force, λ); _FAST_FAILED when the rank is not certified
    or a factorization fails (the SVD route then decides).
    """
    n, m = M.shape[0], Phi.shape[0]
    a = np.zeros(n)
    force = np.zeros(n)
    lam = np.zeros(m)
    if not _nb_finite(M, h, tau, Phi, bias):
        return _FAST_BAD_INPUT, a, force, lam
    if m > n:
        return _FAST_FAILED, a, force, lam
    V = np.empty((m, n))
    beta = np.empty(m)
    R = np.empty((m, m))
    _nb_house_qr(Phi, V, beta, R)
    if not _nb_full_row_rank(R, rtol, atol, n):
        return _FAST_FAILED, a, force, lam
    QT = _nb_q_transpose(V, beta, mode == 0)
    Qt = QT[:m]                                                # Q₁ᵀ (m, n): Φᵀ = Q₁R
    y = bias.copy()                                            # R⁻ᵀ bias
    _nb_utsolve(R, y)
    a_perp = -np.dot(Qt.T, y)                                  # −A⁺ bias = C q̇  [AG-16]
    f = tau - h
    if mode == 0:                                              # ---- nullspace [DE-10..15]
        p = n - m
        Ct = QT[m:]                                            # Cᵀ (n − m, n): ΦC = 0, CᵀC = I
        Mp = np.dot(np.dot(Ct, M), Ct.T)                       # CᵀMC  [DE-15]
        Up = np.zeros((p, p))
        if _nb_chol(Mp, Up) != 0:
            return _FAST_FAILED, a, force, lam
        z = np.dot(Ct, f - np.dot(M, a_perp))                  # Cᵀ(τ − h − M a_p)
        _nb_utsolve(Up, z)
        _nb_usolve(Up, z)
        a[:] = a_perp + np.dot(Ct.T, z)
    else:                                                      # ---- projection [AG-22..29]
        if mode == 1:                                          # M_c = M + PM − (PM)ᵀ  [AG-23, 24]
            PM = M - np.dot(Qt.T, np.dot(Qt, M))               # P = I − Q₁Q₁ᵀ = I − A⁺A  [AG-15]
            Mc = np.empty((n, n))
            for i in range(n):
                for j in range(n):
                    Mc[i, j] = M[i, j] + PM[i, j] - PM[j, i]
            a[:] = f - np.dot(Qt.T, np.dot(Qt, f)) + np.dot(M, a_perp)  # P(τ − h) + M C q̇  [AG-22, 25]
        else:
            P = -np.dot(Qt.T, Qt)
            for i in range(n):
                P[i, i] += 1.0
            if mode == 2:                                      # M_c′ = PMP + (I−P)M(I−P)  [AG-28]
                Q = -P
                for i in range(n):
                    Q[i, i] += 1.0
                Mc = np.dot(np.dot(P, M), P) + np.dot(np.dot(Q, M), Q)
                cc = np.dot(Q - P, np.dot(M, a_perp))
            else:                                              # M_c″ = PM + γ(I − P)  [AG-29]
                Mc = np.dot(P, M) - gamma * P
                for i in range(n):
                    Mc[i, i] += gamma
                cc = gamma * a_perp
            a[:] = np.dot(P, f) + cc                           # [AG-25]
        solved = False
        if mode == 2:                                          # M_c′ is SPD [AG Prop. 1]
            Uc = np.zeros((n, n))
            if _nb_chol(Mc, Uc) == 0:
                _nb_utsolve(Uc, a)
                _nb_usolve(Uc, a)
                solved = True
        if not solved and not _nb_lu_solve(Mc, a):
            return _FAST_FAILED, a, force, lam
    u = np.dot(Qt, np.dot(M, a) - f)                           # Q₁ᵀ(M a + h − τ)
    force[:] = np.dot(Qt.T, u)                                 # Φᵀλ = (I − P)(M a + h − τ)  [AG-32]
    lam[:] = u                                                 # λ = R⁻¹Q₁ᵀ force = R⁻¹u
    _nb_usolve(R, lam)
    return _FAST_OK, a, force, lam


def _forward_fast(M, h, tau, Phi, bias, method, rtol, atol, inertia, gamma):
    """:class:`ForwardResult` of a dense problem with m ≥ 1 from a numba kernel, or None when the input
    is anything else (sparse, lists, other dtypes, wrong shapes, unknown names, NaN/Inf, bad tolerances)
    or the kernel declines (M not SPD, ΦM⁻¹Φᵀ singular or nearly so, Φ not certified well-conditioned
    and of full row rank): the reference route then runs and raises or decides exactly as before.
    Only plain comparisons are made here; finiteness is checked inside the kernel."""
    if not (type(M) is np.ndarray and type(Phi) is np.ndarray and type(h) is np.ndarray
            and type(tau) is np.ndarray and type(bias) is np.ndarray):
        return None
    if (M.dtype is not _FLOAT64 or Phi.dtype is not _FLOAT64 or h.dtype is not _FLOAT64
            or tau.dtype is not _FLOAT64 or bias.dtype is not _FLOAT64 or M.ndim != 2 or Phi.ndim != 2):
        return None
    n, n2 = M.shape
    m, n3 = Phi.shape
    if m == 0 or n2 != n or n3 != n or h.shape != (n,) or tau.shape != (n,) or bias.shape != (m,):
        return None
    if method not in METHODS or inertia not in INERTIA_KINDS:
        return None
    if rtol is None and atol is None:
        rtol, atol = DEFAULT_RTOL, DEFAULT_ATOL
    else:
        try:
            rtol, atol = resolve_tolerances(rtol, atol)
        except ConstraintError:
            return None
    if not M.flags.c_contiguous:
        M = np.ascontiguousarray(M)
    if not Phi.flags.c_contiguous:
        Phi = np.ascontiguousarray(Phi)
    if method == "multiplier" or method == "gauss":
        name = "multiplier" if method == "multiplier" else "gauss"
        status, a, force, lam = _nb_kkt(M, h, tau, Phi, bias, rtol, atol)
    else:
        name = "nullspace" if method == "nullspace" else "projection"
        mode = 0 if name == "nullspace" else _FAST_MODES[inertia]
        g = 0.0
        if mode == 3:
            try:
                g = float(np.trace(M)) / n if gamma is None else float(gamma)
            except (TypeError, ValueError):
                return None
            if g == 0.0 or not isfinite(g):                    # M_c″ singular or undefined
                return None
        status, a, force, lam = _nb_ortho(M, h, tau, Phi, bias, rtol, atol, mode, g)
    if status != _FAST_OK:
        return None
    return ForwardResult(a, force, lam, True, m, name)


# ----------------------------------------------------------------------------------------- forward
def forward(M, h, tau, Phi=None, bias=None, method: str = "projection", *, rtol: float | None = None,
            atol: float | None = None, inertia: str = "Mc", gamma: float | None = None) -> ForwardResult:
    """Constrained forward dynamics: a and Φᵀλ from τ = M a + h − Φᵀλ, Φ a + bias = 0 [DE-4, DE-7].

    Also callable as ``forward(asm, state, tau, method=...)`` where ``asm.terms(t, q, v)`` returns an
    object with attributes ``M, h, Phi, bias`` and ``state`` has ``t, q, v`` (a :class:`flexbody.System`
    is assembled first; assemble once yourself for repeated calls).

    Parameters
    ----------
    M : ndarray or scipy.sparse (n, n)
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
        :mod:`flexbody.analysis`).
    inertia : {"Mc", "symmetric", "gamma"}
        Constraint inertia matrix of the dense projection method: M_c [AG-23, 24], M_c′ [AG-28] or
        M_c″(γ) [AG-29]. All give the same a. With sparse M the projection method never forms n×n
        matrices and ``inertia`` has no effect (see :func:`_projection_sparse`).
    gamma : float, optional
        γ of M_c″ [kg or kg·m²]; default trace(M)/n, the mean eigenvalue of M, which like Aghili's
        suggestion γ = ‖M‖ is of the magnitude of M.

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
    M, h, tau, Phi, terms_bias, method = _unpack(M, h, tau, Phi, method)
    if terms_bias is not None:
        bias = terms_bias
    fast = _forward_fast(M, h, tau, Phi, bias, method, rtol, atol, inertia, gamma)
    if fast is not None:
        return fast
    if method not in METHODS:
        raise FlexbodyError(f"unknown method {method!r}; valid methods are {', '.join(METHODS)}")
    if inertia not in INERTIA_KINDS:
        raise FlexbodyError(f"unknown inertia kind {inertia!r}; valid kinds are {', '.join(INERTIA_KINDS)}")
    M, n, sparse = _mass(M)
    h = _vector(h, "h", n)
    tau = _vector(tau, "tau", n)
    if _large_block_system(M, Phi, n):
        return _forward_on_stored_columns(M, h, tau, Phi, bias, method, *resolve_tolerances(rtol, atol))
    Phi, bias = _constraints(Phi, bias, n)
    rtol, atol = resolve_tolerances(rtol, atol)
    if method == "multiplier":
        return _multiplier(M, sparse, tau - h, Phi, bias, rtol, atol)
    if method == "gauss":
        return _gauss(M, sparse, tau - h, Phi, bias, rtol, atol)
    if method == "nullspace":
        return _nullspace(M, sparse, h, tau, Phi, bias, rtol, atol)
    if sparse:
        return _projection_sparse(M, tau - h, Phi, bias, rtol, atol)
    return _projection_dense(M, h, tau, Phi, bias, rtol, atol, inertia, gamma)


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
    a_u = solver.solve(f)                                       # M⁻¹(τ − h)  [DE-22]
    Y = solver.solve(Phi.T)                                     # M⁻¹Φᵀ (n, m), m solves
    S = Phi @ Y                                                 # ΦM⁻¹Φᵀ = H⁻¹  [DE-34]
    cS = _schur_factor(S, Phi, rtol, atol, "multiplier")
    lam = _potrs(cS, -(Phi @ a_u + bias), lower=1)[0]
    a = a_u + Y @ lam
    return ForwardResult(a, Phi.T @ lam, lam, True, m, "multiplier")


def _phi_bar(solver: _MassSolver, Phi, rtol, atol, method):
    """Φ̄ = M⁻¹Φᵀ(ΦM⁻¹Φᵀ)⁻¹ (n, m) [DE-28] and the Cholesky factor of ΦM⁻¹Φᵀ."""
    Y = solver.solve(Phi.T)
    cS = _schur_factor(Phi @ Y, Phi, rtol, atol, method)
    return _potrs(cS, Y.T, lower=1)[0].T, cS


def _gauss(M, sparse, f, Phi, bias, rtol, atol) -> ForwardResult:
    """Gauss' principle, explicit solution a = −Φ̄ bias + Θ a_u [DE-27..30], Θ x = x − Φ̄(Φx)."""
    solver = _MassSolver(M, sparse)
    m = Phi.shape[0]
    if m == 0:
        return _unconstrained(solver, f, 0, "gauss")
    a_u = solver.solve(f)                                       # [DE-22]
    Phi_bar, cS = _phi_bar(solver, Phi, rtol, atol, "gauss")
    a = -Phi_bar @ bias + (a_u - Phi_bar @ (Phi @ a_u))         # [DE-30], Θ applied as an operator
    lam = -_potrs(cS, Phi @ a_u + bias, lower=1)[0]             # λ = −H(Φ a_u + Φ̇q̇)  [DE-27, DE-33]
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
    a_p = _a_perp(svd, bias)                                    # particular solution −Φ⁺ bias
    Mp = C.T @ M @ C                                            # [DE-15]
    c, info = _chol(Mp)
    if info != 0:
        raise StateError(f"C^T M C is not positive definite (pivot {info}); M must be SPD")
    z = _potrs(c, C.T @ (tau - h - M @ a_p), lower=1)[0] if C.shape[1] else np.zeros(0)
    a = a_p + C @ z
    force = svd.Vt.T @ (svd.Vt @ (M @ a + h - tau))             # Φᵀλ ∈ im Φᵀ  [DE-6]
    return ForwardResult(a, force, _min_norm_lam(svd, force), svd.rank == svd.n_constraints, svd.rank,
                         "nullspace")


def _nullspace_partitioned(M, h, tau, Phi, bias, rtol, atol, cols=None) -> ForwardResult:
    """Minimal form [DE-10..15] for large sparse M with a sparse basis of ker Φ by coordinate
    partitioning: with A = Σ_r V_rᵀ (the r independent combinations of the rows, from the rank-revealing
    SVD, so redundant rows and singular configurations are handled as in the dense form), r pivot columns
    d of A (pivoted QR) are the dependent coordinates and C = [−A_d⁻¹A_i; I] (rows permuted) satisfies
    ΦC = 0 [DE-11] without being orthonormal; M_p = CᵀMC [DE-15] is sparse and factored by CHOLMOD.
    ``Phi`` may be given on its stored columns only (``cols``, the other columns being zero)."""
    n = M.shape[0]
    cols = np.arange(n) if cols is None else np.asarray(cols)
    svd, _ = constraint_svd(Phi, rtol, atol)                    # on the columns ``cols``
    r = svd.rank
    if r == 0:
        a = _MassSolver(M, True).solve(tau - h)
        return ForwardResult(a, np.zeros(n), np.zeros(svd.n_constraints), True, 0, "nullspace")
    Vt = rows_on_columns(svd.Vt, cols, n)
    a_p = -(Vt.T @ ((svd.U.T @ bias) / svd.s))                 # particular solution −Φ⁺ bias [AG-16]
    A_c = svd.s[:, None] * svd.Vt                               # (r, n_c), same row space as Φ
    local_dep = np.sort(sla.qr(A_c, mode="r", pivoting=True)[1][:r])
    dep = cols[local_dep]                                       # dependent coordinates (pivot columns)
    ind = np.setdiff1d(np.arange(n), dep)
    local_ind = np.setdiff1d(np.arange(len(cols)), local_dep)
    A_i = np.where(np.abs(A_c[:, local_ind]) > 1e-14 * np.abs(A_c).max(), A_c[:, local_ind], 0.0)
    entering = np.flatnonzero(np.abs(A_i).sum(axis=0) > 0)      # independent coordinates that enter Φ
    coupled = np.searchsorted(ind, cols[local_ind[entering]])  # … as positions among ``ind``
    X = sla.lu_solve(sla.lu_factor(A_c[:, local_dep]), A_i[:, entering])
    rows = np.concatenate([ind, np.repeat(dep, coupled.size)])
    basis_cols = np.concatenate([np.arange(ind.size), np.tile(coupled, r)])
    C = sp.csc_matrix((np.concatenate([np.ones(ind.size), -X.ravel()]), (rows, basis_cols)), shape=(n, ind.size))
    M_sparse = M.tocsc() if hasattr(M, "flexible") else sp.csc_matrix(M)
    Mp = (C.T @ (M_sparse @ C)).tocsc()                         # [DE-15]
    z = _MassSolver(Mp, True).solve(C.T @ (tau - h - M @ a_p))  # [DE-13]
    a = a_p + C @ z
    force = Vt.T @ (Vt @ (M @ a + h - tau))                     # Φᵀλ ∈ im Φᵀ  [DE-6]
    lam = svd.U @ ((Vt @ force) / svd.s)                        # minimum-norm λ [AG-18]
    return ForwardResult(a, force, lam, svd.rank == svd.n_constraints, svd.rank, "nullspace")


def _large_block_system(M, Phi, n: int) -> bool:
    """A rigid–flexible system (block mass) whose sparse Φ is too large to be made dense."""
    return (isinstance(M, BlockMass) and sp.issparse(Phi) and Phi.ndim == 2 and Phi.shape[1] == n
            and Phi.shape[0] * n > DENSE_LIMIT)


def _forward_on_stored_columns(M, h, tau, Phi, bias, method, rtol, atol) -> ForwardResult:
    """The four forms on a large rigid–flexible system without (m, n) or (n, m) arrays.

    Only the n_c columns c of Φ holding entries (joint and constrained nodal coordinates) enter the small
    matrices: ΦM⁻¹Φᵀ = Φ_c (M⁻¹)_cc Φ_cᵀ with (M⁻¹)_cc from :meth:`BlockMass.inverse_submatrix` (its
    flexible part formed once per column set), the rank-revealing SVD is that of Φ_c, and M⁻¹ is applied
    to n-vectors only (a_u and the constraint force): two block solves per call.

    - "multiplier" [DE-7] and "gauss" [DE-27..30]: λ = −(ΦM⁻¹Φᵀ)⁻¹(Φ a_u + bias), a = a_u + M⁻¹Φᵀλ (the
      Gauss form a = a_u − Φ̄(Φ a_u + bias) is the same vector);
    - "projection" (any inertia kind, [AG-25] has a unique solution): as :func:`_projection_sparse`;
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
        cS = _schur_factor(Phi_c @ M.inverse_submatrix(cols) @ Phi_c.T, Phi_c, rtol, atol, method)
        lam = _potrs(cS, -(Phi @ a_u + bias), lower=1)[0]
        force = Phi.T @ lam
        return ForwardResult(a_u + M.solve(force), force, lam, True, m, method)
    if method == "nullspace":
        return _nullspace_partitioned(M, h, tau, Phi_c, bias, rtol, atol, cols=cols)
    svd, _ = constraint_svd(Phi_c, rtol, atol)
    r = svd.rank
    if r == 0:
        return ForwardResult(a_u, np.zeros(n), np.zeros(m), m == 0, 0, "projection")
    Vc = svd.Vt                                                 # (r, n_c): V_rᵀ on the stored columns
    c, info = _chol(Vc @ M.inverse_submatrix(cols) @ Vc.T)
    if info != 0:
        raise StateError(f"V_r^T M^-1 V_r is not positive definite (pivot {info}); M must be SPD")
    mu = _potrs(c, -(svd.U.T @ bias) / svd.s - Vc @ a_u[cols], lower=1)[0]
    force = np.zeros(n)
    force[cols] = Vc.T @ mu
    return ForwardResult(a_u + M.solve(force), force, svd.U @ (mu / svd.s), r == m, r, "projection")


def _inertia_terms(M, P, a_perp, kind, gamma):
    """Constraint inertia matrix and the C_c q̇ term of [AG-22], [AG-27] or [AG-29] (dense)."""
    n = M.shape[0]
    if kind == "Mc":                                            # M_c = M + PM − (PM)ᵀ  [AG-23, AG-24]
        PM = P @ M
        return M + PM - PM.T, M @ a_perp                        # C_c q̇ = M C q̇  [AG-22]
    Q = np.eye(n) - P
    if kind == "symmetric":                                     # M_c′ = PMP + (I−P)M(I−P)  [AG-28]
        return P @ M @ P + Q @ M @ Q, (Q - P) @ (M @ a_perp)    # C_c′ = (I − 2P) C_c  [AG-28]
    if gamma is None:
        gamma = float(np.trace(M)) / n
    return P @ M + gamma * Q, gamma * a_perp                    # M_c″, C_c″ = γ C  [AG-29]


def _projection_dense(M, h, tau, Phi, bias, rtol, atol, inertia, gamma) -> ForwardResult:
    """Aghili's direct dynamics M_c a = P(τ − h) + C_c q̇ [AG-22, AG-25, AG-27, AG-29]."""
    n = M.shape[0]
    svd, _ = constraint_svd(Phi, rtol, atol)
    Vt = svd.Vt
    P = np.eye(n) - Vt.T @ Vt                                   # P = I − A⁺A  [AG-15]
    a_perp = _a_perp(svd, bias)                                 # C q̇ = −A⁺ Ȧq̇  [AG-16]
    Mc, cc = _inertia_terms(M, P, a_perp, inertia, gamma)
    rhs = P @ (tau - h) + cc                                    # f∥ − h∥ + C_c q̇  [AG-25]
    if inertia == "symmetric":
        c, info = _chol(Mc)                                     # M_c′ is SPD [AG Prop. 1]
        a = _potrs(c, rhs, lower=1)[0] if info == 0 else np.linalg.solve(Mc, rhs)
    else:
        a = np.linalg.solve(Mc, rhs)                            # invertible [AG Thm. 2, Prop. 2]
    # [AG-32]: 𝓕 = f⊥ − h⊥ − μ(f∥ − h∥ + C_c q̇), μ = (I − P)M M_c⁻¹; by (25) M_c⁻¹(…) = a, so
    # 𝓕 = (I − P)(f − h − M a), and in our sign Φᵀλ = −𝓕 = (I − P)(M a + h − τ).
    force = Vt.T @ (Vt @ (M @ a + h - tau))
    return ForwardResult(a, force, _min_norm_lam(svd, force), svd.rank == svd.n_constraints, svd.rank,
                         "projection")


def _projection_sparse(M, f, Phi, bias, rtol, atol) -> ForwardResult:
    """Projection method for sparse M without n×n matrices.

    With the thin SVD Φ = U_r Σ_r V_rᵀ, P = I − V_r V_rᵀ, the two conditions of [AG-25],
    (I − P)a = −A⁺ bias [AG-16] and P(M a − τ + h) = 0 [AG-21], are exactly
        V_rᵀ a = −Σ_r⁻¹ U_rᵀ bias   and   M a + h − τ = V_r μ  for some μ ∈ R^r,
    a full-rank saddle point with orthonormal constraint rows. It is solved with one factorization of M
    and r solves: a = a_u + Y μ, Y = M⁻¹V_r, (V_rᵀ Y) μ = −Σ_r⁻¹U_rᵀ bias − V_rᵀ a_u. Since M_c is
    invertible [AG Thm. 2] the solution is unique, so it is the a of [AG-25] for any inertia kind.
    Then Φᵀλ = V_r μ and the minimum-norm λ = A⁺ᵀ V_r μ = U_r Σ_r⁻¹ μ.
    """
    solver = _MassSolver(M, True)
    svd, _ = constraint_svd(Phi, rtol, atol)
    m, r = svd.n_constraints, svd.rank
    a_u = solver.solve(f)
    if r == 0:
        return ForwardResult(a_u, np.zeros_like(a_u), np.zeros(m), m == 0, 0, "projection")
    Vr = svd.Vt.T                                               # (n, r), orthonormal columns
    Y = solver.solve(Vr)
    c, info = _chol(Vr.T @ Y)
    if info != 0:
        raise StateError(f"V_r^T M^-1 V_r is not positive definite (pivot {info}); M must be SPD")
    mu = _potrs(c, -(svd.U.T @ bias) / svd.s - Vr.T @ a_u, lower=1)[0]
    a = a_u + Y @ mu
    return ForwardResult(a, Vr @ mu, svd.U @ (mu / svd.s), r == m, r, "projection")


# ------------------------------------------------------------------------------------------- helpers
def projector(Phi, rtol: float | None = None, atol: float | None = None) -> Projection:
    """P = I − A⁺A from a rank-revealing SVD of Φ (m, n) [AG-4, AG-15], as an operator.

    Singular values ≤ tol = max(rtol·σ_max, atol) are dropped, so P is the projector onto the numerical
    null space; at a singular configuration where Φ vanishes, P = I.
    """
    return Projection(constraint_svd(dense_jacobian(Phi), rtol, atol)[0])


def constraint_inertia(M, P, kind: str = "Mc", gamma: float | None = None) -> np.ndarray:
    """Dense constraint inertia matrix: M_c = M + PM − MP [AG-23, 24], M_c′ = PMP + (I−P)M(I−P)
    [AG-28] or M_c″ = PM + γ(I − P) [AG-29] (γ default trace(M)/n).

    ``P`` is a :class:`Projection` or a dense (n, n) projector.
    """
    if kind not in INERTIA_KINDS:
        raise FlexbodyError(f"unknown inertia kind {kind!r}; valid kinds are {', '.join(INERTIA_KINDS)}")
    M, n, sparse = _mass(M)
    M = M.toarray() if sparse else M
    P = P.matrix() if isinstance(P, Projection) else np.asarray(P, dtype=float)
    if P.shape != (n, n):
        raise ConstraintError(f"P must have shape ({n}, {n}), got {P.shape}")
    return _inertia_terms(M, P, np.zeros(n), kind, gamma)[0]


def nullspace_basis(Phi, rtol: float | None = None, atol: float | None = None) -> np.ndarray:
    """Orthonormal basis C (n, n − r) of ker Φ from a rank-revealing SVD [DE-11, AG-4 V₂]."""
    return constraint_svd(dense_jacobian(Phi), rtol, atol, full=True)[1]


def mass_weighted_inverse(M, Phi, rtol: float | None = None) -> np.ndarray:
    """Φ̄ = M⁻¹Φᵀ(ΦM⁻¹Φᵀ)⁻¹ (n, m) [DE-28], with ΦΦ̄ = I. Raises ConstraintError if ΦM⁻¹Φᵀ is singular."""
    M, n, sparse = _mass(M)
    Phi = dense_jacobian(Phi, n)
    rtol, atol = resolve_tolerances(rtol, None)
    if Phi.shape[0] == 0:
        return np.zeros((n, 0))
    return _phi_bar(_MassSolver(M, sparse), Phi, rtol, atol, "gauss")[0]


def generalized_constrained_terms(M, b, g, Phi, bias, rtol: float | None = None) -> GeneralizedConstrainedTerms:
    """Θᵀ, α, ρ of the generalized constrained equation Θᵀτ = M a + b + g − Φᵀ(α + ρ) [DE-36..39].

    Θᵀ = I − ΦᵀΦ̄ᵀ [DE-38] is returned dense for dense M and as a LinearOperator for sparse M.
    """
    M, n, sparse = _mass(M)
    b, g = _vector(b, "b", n), _vector(g, "g", n)
    Phi, bias = _constraints(Phi, bias, n)
    rtol, atol = resolve_tolerances(rtol, None)
    m = Phi.shape[0]
    if m == 0:
        eye = spla.aslinearoperator(sp.identity(n)) if sparse else np.eye(n)
        return GeneralizedConstrainedTerms(eye, np.zeros(0), np.zeros(0), np.zeros((n, 0)), np.zeros((0, 0)))
    Phi_bar, cS = _phi_bar(_MassSolver(M, sparse), Phi, rtol, atol, "gauss")
    H = _potrs(cS, np.eye(m), lower=1)[0]                       # (ΦM⁻¹Φᵀ)⁻¹  [DE-34]
    alpha = Phi_bar.T @ b - H @ bias                            # Φ̄ᵀ = HΦM⁻¹  [DE-36]
    rho = Phi_bar.T @ g                                         # [DE-37]
    if sparse:
        def matvec(x):
            x = np.asarray(x).reshape(-1)
            return x - Phi.T @ (Phi_bar.T @ x)
        theta_T = spla.LinearOperator((n, n), matvec=matvec, dtype=float)
    else:
        theta_T = np.eye(n) - Phi.T @ Phi_bar.T                 # [DE-38]
    return GeneralizedConstrainedTerms(theta_T, alpha, rho, Phi_bar, H)


# ----------------------------------------------------------------------------------------- inverse
def inverse(M, h, a, Phi=None, *, lam=None, W=None, bias=None, rtol: float | None = None,
            atol: float | None = None) -> InverseResult:
    """Constrained inverse dynamics: τ giving the motion a with τ = M a + h − Φᵀλ.

    Also callable as ``inverse(asm, state, a, ...)`` (Φ and bias from ``asm.terms``; a System is assembled).

    - ``lam=None, W=None``: minimum-norm actuation τ = P(M a + h) [AG-21, AG-46, LP]; the constraint force
      is Φᵀλ = (I − P)(M a + h), λ its minimum-norm multipliers.
    - ``W`` (n, n) SPD: minimise τᵀW⁻¹τ [AG-47]. With the Cholesky factor W = L Lᵀ, τ = L τ_L makes the cost
      ‖τ_L‖², and the admissible set τ ∈ M a + h − im Φᵀ becomes τ_L ∈ L⁻¹(M a + h) + im(L⁻¹Φᵀ), so
      τ = L P_W L⁻¹ (M a + h) with P_W = I − A_W⁺A_W, A_W = Φ L⁻ᵀ. (Aghili uses A_W = A W^{-1/2}; any
      factor of W gives the same minimiser.)
    - ``lam`` (m,): the actuation producing exactly that constraint force, τ = M a + h − Φᵀλ [MH Prop. 2].

    If ``bias`` (m,) is given, the motion is checked: ‖Φa + bias‖ ≤ 1e-8·(‖Φ‖_F‖a‖ + ‖bias‖), else
    ConstraintError (an inconsistent a cannot be produced by any τ).

    Parameters
    ----------
    M : ndarray or scipy.sparse (n, n)
    h : ndarray (n,)
    a : ndarray (n,)
        Desired accelerations.
    Phi : ndarray or scipy.sparse (m, n)

    Returns
    -------
    InverseResult
    """
    M, h, a, Phi, terms_bias, _ = _unpack(M, h, a, Phi, None)
    if bias is None:
        bias = terms_bias
    M, n, _sparse = _mass(M)
    h, a = _vector(h, "h", n), _vector(a, "a", n)
    Phi, bias = _constraints(Phi, bias, n, bias_required=False)
    m = Phi.shape[0]
    svd, _ = constraint_svd(Phi, rtol, atol)
    if bias is not None and m:
        resid = np.linalg.norm(Phi @ a + bias)
        scale = np.linalg.norm(Phi) * np.linalg.norm(a) + np.linalg.norm(bias)
        if resid > CONSISTENCY_RTOL * scale + np.finfo(float).tiny:
            raise ConstraintError(f"the motion violates the constraints: |Phi a + bias| = {resid:.3e} > "
                                  f"{CONSISTENCY_RTOL:.0e} * {scale:.3e}; no actuation can produce it")
    tau0 = M @ a + h
    unique = svd.rank == m
    if lam is not None:
        if W is not None:
            raise FlexbodyError("give either lam (a chosen constraint force) or W (weighted minimum norm)")
        lam = _vector(lam, "lam", m, ConstraintError)
        force = Phi.T @ lam
        return InverseResult(tau0 - force, force, lam, unique, svd.rank)      # [MH Prop. 2]
    if W is None:
        force = svd.Vt.T @ (svd.Vt @ tau0)                      # (I − P)(M a + h)
        tau = tau0 - force                                      # τ = P(M a + h)  [AG-21]
    else:
        W, nw, w_sparse = _mass(W, "W")
        if nw != n:
            raise StateError(f"W must have shape ({n}, {n}), got {W.shape}")
        W = W.toarray() if w_sparse else W
        try:
            L = np.linalg.cholesky(W)                           # W = L Lᵀ
        except np.linalg.LinAlgError as exc:
            raise StateError("W is not symmetric positive definite") from exc
        A_W = sla.solve_triangular(L, Phi.T, lower=True).T      # A_W = Φ L⁻ᵀ  [AG-47]
        svd_w, _ = constraint_svd(A_W, rtol, atol)
        x = sla.solve_triangular(L, tau0, lower=True)           # L⁻¹(M a + h)
        tau = L @ (x - svd_w.Vt.T @ (svd_w.Vt @ x))             # τ = L P_W L⁻¹(M a + h)
        force = tau0 - tau
    return InverseResult(tau, force, _min_norm_lam(svd, force), unique, svd.rank)
