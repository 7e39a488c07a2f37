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
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from .analysis import (DEFAULT_ATOL, DEFAULT_RTOL, ConstraintSVD, constraint_rank, constraint_svd,
                       dense_jacobian, resolve_tolerances)
from .errors import ConstraintError, FlexbodyError, StateError

try:  # CHOLMOD for sparse mass matrices; scipy's SuperLU otherwise
    from sksparse.cholmod import CholmodError as _CholmodError
    from sksparse.cholmod import cholesky as _cholmod_cholesky
except ImportError:  # pragma: no cover - depends on the environment
    _cholmod_cholesky = None
    _CholmodError = Exception

__all__ = ["METHODS", "INERTIA_KINDS", "DEFAULT_RTOL", "DEFAULT_ATOL", "ForwardResult", "InverseResult",
           "Projection", "GeneralizedConstrainedTerms", "forward", "inverse", "projector",
           "constraint_inertia", "nullspace_basis", "mass_weighted_inverse", "generalized_constrained_terms"]

METHODS = ("multiplier", "gauss", "nullspace", "projection")
INERTIA_KINDS = ("Mc", "symmetric", "gamma")
NULLSPACE_SPARSE_LIMIT = 2000
"""Largest n for which ``method="nullspace"`` accepts a sparse M (it forms a dense n×(n−r) basis)."""
CONSISTENCY_RTOL = 1e-8
"""Relative tolerance of the check ‖Φa + bias‖ ≤ CONSISTENCY_RTOL·(‖Φ‖_F‖a‖ + ‖bias‖) in :func:`inverse`."""

_potrf, _potrs = sla.get_lapack_funcs(("potrf", "potrs"), dtype=np.float64)


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
def _as_float(x, name: str, error):
    try:
        return np.asarray(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise error(f"{name} must be a numeric array, got {type(x).__name__}") from exc


def _vector(x, name: str, n: int, error=StateError) -> np.ndarray:
    x = _as_float(x, name, error)
    if x.shape != (n,):
        raise error(f"{name} must have shape ({n},), got {x.shape}")
    if not np.isfinite(x).all():
        raise error(f"{name} contains NaN/Inf (first at index {int(np.flatnonzero(~np.isfinite(x))[0])})")
    return x


def _mass(M, name: str = "M"):
    """Validate M; return (M, n, is_sparse) with sparse M in CSC form."""
    if sp.issparse(M):
        if M.ndim != 2 or M.shape[0] != M.shape[1]:
            raise StateError(f"{name} must be square (n, n), got shape {M.shape}")
        M = sp.csc_matrix(M, dtype=float)
        if not np.isfinite(M.data).all():
            raise StateError(f"{name} (sparse) contains NaN/Inf")
        return M, M.shape[0], True
    M = _as_float(M, name, StateError)
    if M.ndim != 2 or M.shape[0] != M.shape[1]:
        raise StateError(f"{name} must be square (n, n), got shape {M.shape}")
    if not np.isfinite(M).all():
        i, j = np.argwhere(~np.isfinite(M))[0]
        raise StateError(f"{name} contains NaN/Inf (first at [{i}, {j}])")
    return M, M.shape[0], False


def _unpack(M, h, third, Phi, method):
    """Support the ``(asm, state, x)`` calling form (duck typing on ``asm.terms``)."""
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
class _MassSolver:
    """Applies M⁻¹ by a Cholesky factor: LAPACK for dense M, CHOLMOD (or SuperLU) for sparse M."""

    def __init__(self, M, sparse: bool):
        self.sparse = sparse
        if not sparse:
            c, info = _potrf(M, lower=1, clean=0)
            if info != 0:
                raise StateError(f"M is not positive definite (Cholesky failed at pivot {info})")
            self._c = c
        elif _cholmod_cholesky is not None:
            try:
                self._factor = _cholmod_cholesky(M)
            except _CholmodError as exc:
                raise StateError(f"M is not positive definite (CHOLMOD: {exc})") from exc
        else:  # pragma: no cover - only without scikit-sparse
            self._factor = spla.splu(M).solve

    def solve(self, b: np.ndarray) -> np.ndarray:
        if self.sparse:
            return np.asarray(self._factor(b))
        return _potrs(self._c, b, lower=1)[0]


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


# ----------------------------------------------------------------------------------------- forward
def forward(M, h, tau, Phi=None, bias=None, method: str = "projection", *, rtol: float | None = None,
            atol: float | None = None, inertia: str = "Mc", gamma: float | None = None) -> ForwardResult:
    """Constrained forward dynamics: a and Φᵀλ from τ = M a + h − Φᵀλ, Φ a + bias = 0 [DE-4, DE-7].

    Also callable as ``forward(asm, state, tau, method=...)`` where ``asm.terms(t, q, v)`` returns an
    object with attributes ``M, h, Phi, bias`` and ``state`` has ``t, q, v``.

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
        norm ≤ atol). "nullspace" needs dense M, or sparse M with n ≤ 2000.
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
        Phi or bias has the wrong shape or NaN/Inf; ΦM⁻¹Φᵀ is singular ("multiplier", "gauss");
        sparse M with n > 2000 for "nullspace".
    FlexbodyError
        Unknown ``method`` or ``inertia``.
    """
    M, h, tau, Phi, terms_bias, method = _unpack(M, h, tau, Phi, method)
    if terms_bias is not None:
        bias = terms_bias
    if method not in METHODS:
        raise FlexbodyError(f"unknown method {method!r}; valid methods are {', '.join(METHODS)}")
    if inertia not in INERTIA_KINDS:
        raise FlexbodyError(f"unknown inertia kind {inertia!r}; valid kinds are {', '.join(INERTIA_KINDS)}")
    M, n, sparse = _mass(M)
    h = _vector(h, "h", n)
    tau = _vector(tau, "tau", n)
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
            raise ConstraintError(
                f"method='nullspace' would form a dense {n}x(n - rank) null-space basis for sparse M with "
                f"n = {n} > {NULLSPACE_SPARSE_LIMIT}; use method='projection' (or 'multiplier').")
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

    Also callable as ``inverse(asm, state, a, ...)`` (Φ and bias from ``asm.terms``).

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
