"""Rank diagnostics of the constraint Jacobian [AG Remark 4, DE 5.3].

A constraint Jacobian Φ (m, n) of numerical rank r leaves p = n − r degrees of freedom. When r < m the
constraints are redundant (or the configuration is singular): the constraint force Φᵀλ is still unique
but the multipliers λ are not [AG Remark 4], and the multiplier/Gauss forms [DE-7, DE-27] break down
because ΦM⁻¹Φᵀ is singular. The rank is decided from the singular values of Φ with the tolerance

    tol = max(rtol · σ_max, atol),

where ``rtol`` (default :data:`DEFAULT_RTOL`) is relative and ``atol`` (default :data:`DEFAULT_ATOL`,
in the units of Φ's rows) is an absolute floor. The floor is needed because a relative test alone can
never drop the only row of a single constraint: at a singular configuration such as Aghili's slider crank
at q₁ = π/2, q₂ = π [AG-67] the computed Jacobian is O(1e-16), not 0, and it is its own σ_max.

Every tolerance used by :mod:`flexbody.dynamics` comes from here, so both modules count the same rank.

The SVD is needed only where the rank can be in doubt. A Householder QR Φᵀ = QR (a fraction of the cost)
bounds the singular values from both sides, σ_min(Φ) ≥ 1/‖R⁻¹‖_F and σ_max(Φ) ≤ ‖Φ‖_F; when the lower
bound clears the largest tolerance the SVD could use by :data:`CERTIFICATE_MARGIN` (plus round-off), the SVD
would keep every row, and :func:`independent_rows` takes Φ̂ = Qᵀ (:class:`ConstraintQR`) instead of V_rᵀ —
another orthonormal basis of the same row space. Otherwise (redundant rows, a configuration near a
singularity, m > n) it takes the SVD, so the rank decision is always the SVD's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import isfinite
from typing import Literal, TypeGuard, overload

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ..errors import ConstraintError
from .dense_kernels import certified_row_factor, q_transpose

_gesdd = sla.get_lapack_funcs("gesdd", dtype=np.float64)

DEFAULT_RTOL = 1e-9
"""Default relative tolerance on singular values of Φ (σ_i ≤ rtol·σ_max counts as zero).

Exactly redundant rows produce singular values at round-off level, ~1e-16·σ_max times a modest
factor, well below 1e-9; a kept direction with σ_i/σ_max ≥ 1e-9 amplifies round-off in A⁺ by at most
1e9, so about 7 significant digits survive. Set it larger (e.g. 1e-6) to pass smoothly near
singular configurations, as Aghili's ε does [AG-68]."""

DEFAULT_ATOL = 1e-12
"""Default absolute floor on singular values of Φ (units of Φ's rows; see the module docstring)."""

DENSE_LIMIT = 20_000_000
"""Largest m·n for which a sparse Φ is converted to a dense array (160 MB of float64)."""

GRAM_RTOL_FLOOR = 1e-7
"""Smallest rtol resolvable when singular values come from the Gram matrix ΦΦᵀ (large sparse Φ)."""

_syevd = sla.get_lapack_funcs("syevd", dtype=np.float64)
_nrm2 = sla.get_blas_funcs("nrm2", dtype=np.float64)


@dataclass(frozen=True)
class ConstraintSVD:
    """Thin, rank-truncated SVD Φ = U_r Σ_r V_rᵀ of a constraint Jacobian.

    Attributes
    ----------
    U : ndarray (m, r)
        Left singular vectors of the kept directions.
    s : ndarray (r,)
        Kept singular values, descending.
    Vt : ndarray (r, n)
        Orthonormal rows spanning the row space of Φ (= N(Φ)^⊥).
    singular_values : ndarray (min(m, n),)
        All singular values, descending.
    rank, tol, rtol, atol
        Numerical rank and the absolute tolerance ``tol = max(rtol·σ_max, atol)`` used to find it.
    n_dofs, n_constraints : int
        n and m.
    columns : ndarray of int or None
        For :func:`compressed_constraint_svd`: the columns of Φ that hold entries; ``Vt`` is then a CSR
        matrix whose entries lie in these columns only.
    """

    U: np.ndarray
    s: np.ndarray
    Vt: np.ndarray
    singular_values: np.ndarray
    rank: int
    tol: float
    rtol: float
    atol: float
    n_dofs: int
    n_constraints: int
    columns: np.ndarray | None = None

    def coordinates(self, bias: np.ndarray) -> np.ndarray:
        """β = Σ_r⁻¹U_rᵀ bias (r,): Φ a + bias = 0 is Φ̂ a + β = 0 on the kept rows Φ̂ = V_rᵀ [AG-4]."""
        return (self.U.T @ bias) / self.s if self.rank else np.zeros(0)

    def multipliers(self, lam_hat: np.ndarray) -> np.ndarray:
        """λ = U_r Σ_r⁻¹ λ̂ (m,), the minimum-norm multipliers of Φ's rows with Φᵀλ = Φ̂ᵀλ̂."""
        return self.U @ (lam_hat / self.s) if self.rank else np.zeros(self.n_constraints)


@dataclass(frozen=True)
class ConstraintQR:
    """Φ = RᵀQᵀ of a constraint Jacobian Φ (m, n) whose full row rank m is certified: Φᵀ = QR by Householder
    QR, Q (n, m) with orthonormal columns, R (m, m) upper triangular (module docstring).

    Attributes
    ----------
    Vt : ndarray (m, n)
        Qᵀ, orthonormal rows spanning the row space of Φ (the SVD's V_rᵀ up to an orthogonal m×m factor).
    R_inv : ndarray (m, m)
        R⁻¹ (upper triangular).
    rank : int
        m, the rank the SVD would find (certified).
    sigma_min_bound, sigma_max_bound : float
        1/‖R⁻¹‖_F ≤ σ_min(Φ) and ‖Φ‖_F ≥ σ_max(Φ).
    rtol, atol : float; n_dofs, n_constraints : int
        The tolerances certified against, n and m.
    R : ndarray (m, m); householder : (V (m, n), β (m,))
        The triangle and the Householder vectors of the QR (the compiled forward dynamics reuse them).
    """

    Vt: np.ndarray
    R_inv: np.ndarray
    rank: int
    sigma_min_bound: float
    sigma_max_bound: float
    rtol: float
    atol: float
    n_dofs: int
    n_constraints: int
    R: np.ndarray | None = None
    householder: tuple[np.ndarray, np.ndarray] | None = None

    def coordinates(self, bias: np.ndarray) -> np.ndarray:
        """β = R⁻ᵀ bias (m,): Φ a + bias = RᵀΦ̂ a + bias = 0 is Φ̂ a + β = 0."""
        return self.R_inv.T @ bias

    def multipliers(self, lam_hat: np.ndarray) -> np.ndarray:
        """λ = R⁻¹λ̂ (m,), the (unique) multipliers of Φ's rows with Φᵀλ = Φ̂ᵀλ̂."""
        return self.R_inv @ lam_hat


def resolve_tolerances(rtol, atol) -> tuple[float, float]:
    """Return (rtol, atol) with defaults filled in, validated."""
    rtol = DEFAULT_RTOL if rtol is None else float(rtol)
    atol = DEFAULT_ATOL if atol is None else float(atol)
    if not (isfinite(rtol) and 0.0 <= rtol < 1.0):  # math.isfinite: plain floats here
        raise ConstraintError(f"rtol must be a finite number in [0, 1), got {rtol!r}")
    if not (isfinite(atol) and atol >= 0.0):
        raise ConstraintError(f"atol must be a finite non-negative number, got {atol!r}")
    return rtol, atol


def _is_sparse(x: object) -> TypeGuard[sp.spmatrix | sp.sparray]:
    """Whether ``x`` is a scipy sparse matrix or array (:func:`scipy.sparse.issparse`), narrowing its type."""
    return sp.issparse(x)


def dense_jacobian(Phi, n: int | None = None, name: str = "Phi") -> np.ndarray:
    """Return Φ as a finite float (m, n) ndarray, validating shape and values.

    A sparse Φ is converted only when m·n ≤ :data:`DENSE_LIMIT`; otherwise a
    :class:`~flexbody.errors.ConstraintError` is raised. ``None`` means no constraints (needs ``n``).
    """
    if Phi is None:
        if n is None:
            raise ConstraintError(f"{name} is None and the number of coordinates n is unknown")
        return np.zeros((0, n))
    if sp.issparse(Phi):
        if Phi.ndim != 2:
            raise ConstraintError(f"{name} must be 2-D (m, n), got shape {Phi.shape}")
        m_, n_ = Phi.shape
        if m_ * n_ > DENSE_LIMIT:
            raise ConstraintError(
                f"{name} is sparse with shape {Phi.shape}; m·n = {m_ * n_} exceeds the dense limit "
                f"{DENSE_LIMIT} for its SVD. Reduce the constraints (e.g. eliminate fixed coordinates) "
                "or use method='multiplier'."
            )
        Phi = Phi.toarray()
    try:
        Phi = np.asarray(Phi, dtype=float)
    except (TypeError, ValueError) as exc:
        hint = (
            " (for the rank of a system's constraints at (t, q) call system.assemble().rank_report(t, q))"
            if callable(getattr(Phi, "assemble", None)) or hasattr(Phi, "rank_report")
            else ""
        )
        raise ConstraintError(f"{name} must be a numeric (m, n) array, got {type(Phi).__name__}{hint}") from exc
    if Phi.ndim != 2 or (n is not None and Phi.shape[1] != n):
        expected = "(m, n)" if n is None else f"(m, {n})"
        raise ConstraintError(f"{name} must have shape {expected}, got {Phi.shape}")
    if not np.isfinite(Phi).all():
        bad = np.argwhere(~np.isfinite(Phi))[0]
        raise ConstraintError(f"{name} contains NaN/Inf (first at row {bad[0]}, column {bad[1]})")
    return Phi


@overload
def constraint_svd(
    Phi: np.ndarray, rtol: float | None = ..., atol: float | None = ..., *, full: Literal[True]
) -> tuple[ConstraintSVD, np.ndarray]: ...
@overload
def constraint_svd(
    Phi: np.ndarray, rtol: float | None = ..., atol: float | None = ..., *, full: Literal[False] = ...
) -> tuple[ConstraintSVD, None]: ...
def constraint_svd(
    Phi: np.ndarray, rtol: float | None = None, atol: float | None = None, *, full: bool = False
) -> tuple[ConstraintSVD, np.ndarray | None]:
    """Rank-revealing SVD of a dense, validated Φ (m, n).

    Returns the truncated SVD and, if ``full``, an orthonormal basis (n, n − r) of ker Φ
    (the columns V₂ of [AG-4] / C of [DE-11]); otherwise ``None``.
    """
    rtol, atol = resolve_tolerances(rtol, atol)
    m, n = Phi.shape
    if m == 0 or n == 0:
        empty = np.zeros(0)
        svd = ConstraintSVD(np.zeros((m, 0)), empty, np.zeros((0, n)), empty, 0, atol, rtol, atol, n, m)
        return svd, (np.eye(n) if full else None)
    # SVD of the tall Φᵀ = V Σ Uᵀ (Fortran-ordered view of a C-ordered Φ: no copy, faster for m ≪ n)
    Vf, s, Ut = thin_svd(Phi.T, full=full)
    U, Vt = Ut.T, Vf.T
    tol = max(rtol * s[0], atol)
    r = int(np.count_nonzero(s > tol))
    svd = ConstraintSVD(U[:, :r], s[:r], Vt[:r], s, r, float(tol), rtol, atol, n, m)
    return svd, (Vt[r:].T.copy() if full else None)


def certified_qr(Phi: np.ndarray, rtol: float, atol: float) -> ConstraintQR | None:
    """Householder QR of a dense, finite Φ (m, n) if it certifies that the SVD keeps all m rows, else None.

    The SVD keeps σ_i > max(rtol·σ_max, atol) [AG Remark 4]; σ_min ≥ 1/‖R⁻¹‖_F and σ_max ≤ ‖Φ‖_F, so
    full rank is certain when 1/‖R⁻¹‖_F exceeds CERTIFICATE_MARGIN·max(rtol·‖Φ‖_F, atol) with a slack of
    RANK_SLACK·(m + n)·‖Φ‖_F for the round-off of both factorisations on either side, and the QR is used
    only for ‖Φ‖_F‖R⁻¹‖_F ≤ CERTIFIED_CONDITION (:func:`flexbody.linalg.dense_kernels.certified_row_factor`, the
    factorisation the dense forward dynamics make too)."""
    m, n = Phi.shape
    if m == 0 or m > n:
        return None
    Phi = np.array(Phi, dtype=float, order="C")  # a writeable copy: one compiled signature (kept Φ are read-only)
    V, beta, R, R_inv = np.empty((m, n)), np.empty(m), np.empty((m, m)), np.empty((m, m))
    if not certified_row_factor(Phi, float(rtol), float(atol), V, beta, R, R_inv):
        return None
    lower, upper = 1.0 / _frobenius(R_inv), _frobenius(R)
    return ConstraintQR(q_transpose(V, beta, False), R_inv, m, lower, upper, rtol, atol, n, m, R, (V, beta))


def _frobenius(A: np.ndarray) -> float:
    """‖A‖_F by BLAS nrm2 (scaled: no overflow)."""
    return float(_nrm2(A.reshape(-1)))


def independent_rows(
    Phi: np.ndarray, rtol: float | None = None, atol: float | None = None
) -> ConstraintQR | ConstraintSVD:
    """Orthonormal independent rows Φ̂ (``.Vt``) of a dense, validated Φ (m, n) with ``rank``,
    ``coordinates`` (β of a bias) and ``multipliers`` (λ of λ̂): a :class:`ConstraintQR` where it certifies
    full row rank, else the SVD of :func:`constraint_svd` — the rank is the SVD's in either case."""
    rtol, atol = resolve_tolerances(rtol, atol)
    return certified_qr(Phi, rtol, atol) or constraint_svd(Phi, rtol, atol)[0]


class StoredColumns:
    """The stored columns c of a CSR Φ (m, n) and the slot of each stored entry in the dense block Φ[:, c]
    (m, n_c), worked out once per sparsity pattern; :meth:`block` then scatters Φ's values in O(nnz).

    Attributes: ``columns`` (n_c,) sorted; ``shape`` (m, n) of Φ."""

    def __init__(self, Phi_csr):
        self.shape = Phi_csr.shape
        self.indptr, self.indices = Phi_csr.indptr.copy(), Phi_csr.indices.copy()
        self._indptr, self._indices = self.indptr.tobytes(), self.indices.tobytes()
        self.columns = np.unique(self.indices)
        rows = np.repeat(np.arange(self.shape[0]), np.diff(self.indptr))
        self.slots = rows * len(self.columns) + np.searchsorted(self.columns, self.indices)

    def fits(self, Phi_csr) -> bool:
        """Whether the CSR ``Phi_csr`` has this pattern (same shape, ``indptr`` and ``indices``)."""
        indptr, indices = Phi_csr.indptr, Phi_csr.indices
        return (
            Phi_csr.shape == self.shape
            and indptr.dtype == self.indptr.dtype
            and indices.dtype == self.indices.dtype
            and indptr.tobytes() == self._indptr
            and indices.tobytes() == self._indices
        )

    def block(self, Phi_csr) -> np.ndarray:
        """Φ[:, c] (m, n_c) dense (duplicate entries summed)."""
        m, n_c = self.shape[0], len(self.columns)
        return np.bincount(self.slots, weights=Phi_csr.data, minlength=m * n_c).reshape(m, n_c)


def thin_svd(A: np.ndarray, *, full: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(U, s, Vt) of a finite A by LAPACK's divide-and-conquer driver (QR iteration if it fails), thin
    unless ``full``; without numpy's per-call overhead, which dominates for small maps."""
    U, s, Vt, info = _gesdd(A, compute_uv=1, full_matrices=int(full))
    if info != 0:  # divide-and-conquer did not converge: use the QR-iteration driver
        U, s, Vt = sla.svd(A, full_matrices=full, check_finite=False, lapack_driver="gesvd")
    return U, s, Vt


def symmetric_eigen(A: np.ndarray, *, vectors: bool = True):
    """Eigenvalues (ascending) and, if ``vectors``, eigenvectors (columns) of a finite symmetric A from its
    lower triangle, by LAPACK's syevd (as ``np.linalg.eigh``/``eigvalsh``, without their per-call overhead)."""
    w, V, info = _syevd(A, compute_v=int(vectors), lower=1)
    if info != 0:
        raise np.linalg.LinAlgError(f"symmetric eigenvalue problem did not converge (syevd info {info})")
    return (w, V) if vectors else w


def touched_columns(Phi, n: int) -> np.ndarray:
    """(n,) bool: the columns of Φ (m, n), dense or sparse, with a non-zero entry — the coordinates some constraint
    row ties to others (all False without rows)."""
    if not Phi.shape[0]:
        return np.zeros(n, dtype=bool)
    return np.asarray(abs(Phi).sum(axis=0)).ravel() > 0.0


def stored_columns(Phi_sparse) -> np.ndarray:
    """Sorted indices of the columns of a sparse Φ that hold stored entries (the others are zero)."""
    return np.unique(sp.csr_matrix(Phi_sparse).indices)


def on_columns(Phi_csr, cols: np.ndarray) -> np.ndarray:
    """The dense (m, n_c) block Φ[:, cols] of a CSR Φ whose stored entries all lie in the sorted columns
    ``cols`` (e.g. :func:`stored_columns`), scattered in O(nnz) without slicing the sparse matrix."""
    m = Phi_csr.shape[0]
    out = np.zeros((m, len(cols)))
    rows = np.repeat(np.arange(m), np.diff(Phi_csr.indptr))
    np.add.at(out, (rows, np.searchsorted(cols, Phi_csr.indices)), Phi_csr.data)
    return out


def rows_on_columns(V_c: np.ndarray, cols: np.ndarray, n: int) -> sp.csr_matrix:
    """The rows V_c (r, n_c) given on the columns ``cols`` (n_c,) of an (r, n) matrix, as CSR (r, n)."""
    r = V_c.shape[0]
    return sp.csr_matrix(
        (np.ascontiguousarray(V_c).ravel(), np.tile(cols, r), np.arange(r + 1) * len(cols)), shape=(r, n)
    )


def compressed_constraint_svd(
    Phi_sparse, rtol: float | None = None, atol: float | None = None, *, dense: bool = False
) -> ConstraintSVD:
    """Rank-revealing SVD of a sparse Φ (m, n) computed on its stored columns only.

    Columns of zeros add nothing to the row space and leave the singular values unchanged, so the SVD
    of Φ[:, c] (m, n_c) with c = :func:`stored_columns` is that of Φ with V_rᵀ scattered back into the
    columns c. For a rigid–flexible system n_c is the joint coordinates plus the constrained nodal
    coordinates, so the cost is that of an (m, n_c) SVD however many coordinates the system has.
    ``Vt`` is dense (r, n) if ``dense``, else CSR with r·n_c stored entries; ``singular_values`` has
    min(m, n) entries as for the dense Φ (the extra ones zero).
    """
    Phi = sp.csr_matrix(Phi_sparse, dtype=float)
    if not np.isfinite(Phi.data).all():
        raise ConstraintError("Phi contains NaN/Inf")
    m, n = Phi.shape
    cols = stored_columns(Phi)
    if m * len(cols) > DENSE_LIMIT:
        raise ConstraintError(
            f"constraint Jacobian with {m} rows touching {len(cols)} coordinates is too large "
            f"for a dense SVD (m·n_c > {DENSE_LIMIT})"
        )
    small, _ = constraint_svd(on_columns(Phi, cols), rtol, atol)
    s = np.zeros(min(m, n))
    s[: len(small.singular_values)] = small.singular_values
    r = small.rank
    if dense:
        Vt = np.zeros((r, n))
        Vt[:, cols] = small.Vt
    else:
        Vt = rows_on_columns(small.Vt, cols, n)
    return ConstraintSVD(small.U, small.s, Vt, s, r, small.tol, small.rtol, small.atol, n, m, cols)


@dataclass(frozen=True)
class RankReport:
    """Rank of a constraint Jacobian and which rows are redundant.

    Attributes
    ----------
    rank : int
        Numerical rank r of Φ.
    singular_values : ndarray
        Singular values of Φ, descending.
    tol : float
        Absolute tolerance, ``max(rtol·σ_max, atol)``; σ_i ≤ tol counts as zero.
    rtol, atol : float
        The relative and absolute tolerances used.
    n_dofs, n_constraints : int
        n (columns of Φ) and m (rows).
    dof : int
        p = n − r, degrees of freedom left by the constraints [DE 2.2].
    redundant_rows : tuple of int
        m − r row indices whose removal leaves r independent rows, chosen by QR with column
        pivoting on Φᵀ (the largest remaining row is kept first, so in a group of dependent rows the
        one named is decided by the pivoting).
    redundant_labels : tuple of str or None
        Labels of the redundant rows when ``row_labels`` was given.
    is_full_rank : bool
        r == m (λ unique, [AG Remark 4]).
    source : str
        "svd" (dense SVD of Φ) or "gram" (eigenvalues of ΦΦᵀ, for a large sparse Φ).
    """

    rank: int
    singular_values: np.ndarray
    tol: float
    rtol: float
    atol: float
    n_dofs: int
    n_constraints: int
    dof: int
    redundant_rows: tuple
    redundant_labels: tuple | None
    is_full_rank: bool
    source: str = "svd"

    def __str__(self) -> str:
        s = self.singular_values
        cond = f"{s[0] / s[self.rank - 1]:.3e}" if self.rank > 0 else "-"
        lines = [
            "Constraint rank report",
            f"  {'n_dofs':<16}{self.n_dofs}",
            f"  {'n_constraints':<16}{self.n_constraints}",
            f"  {'rank':<16}{self.rank}  (tol {self.tol:.3e} = max(rtol {self.rtol:.1e} * sigma_max, "
            f"atol {self.atol:.1e}); source {self.source})",
            f"  {'dof (n - rank)':<16}{self.dof}",
            f"  {'full rank':<16}{self.is_full_rank}",
            f"  {'cond (kept)':<16}{cond}",
        ]
        if self.redundant_rows:
            names = self.redundant_labels or tuple(str(i) for i in self.redundant_rows)
            rows = ", ".join(
                f"{i} ({nm})" if self.redundant_labels else f"{i}" for i, nm in zip(self.redundant_rows, names)
            )
            lines.append(f"  {'redundant rows':<16}{rows}")
        lines.append("  i   singular value   kept")
        for i, si in enumerate(s):
            lines.append(f"  {i:<3} {si:<16.6e} {'yes' if si > self.tol else 'no'}")
        return "\n".join(lines)


def _gram_singular_values(Phi_sparse) -> tuple[np.ndarray, np.ndarray]:
    """Singular values (descending) and G^{1/2} from the Gram matrix G = ΦΦᵀ (m, m)."""
    G = (Phi_sparse @ Phi_sparse.T).toarray()
    w, U = np.linalg.eigh(G)
    w, U = np.clip(w[::-1], 0.0, None), U[:, ::-1]
    s = np.sqrt(w)
    return s, (U * s) @ U.T


def constraint_rank(
    Phi: ArrayLike | sp.spmatrix | sp.sparray,
    rtol: float | None = None,
    row_labels: Sequence[str] | None = None,
    *,
    atol: float | None = None,
) -> RankReport:
    """Numerical rank and redundant rows of a constraint Jacobian [AG Remark 4, DE 5.3].

    Parameters
    ----------
    Phi : ndarray or scipy.sparse (m, n)
        Constraint Jacobian. A sparse Φ is densified when m·n ≤ :data:`DENSE_LIMIT`; a larger one is
        analysed exactly on its stored columns (zero columns change neither the singular values nor
        the redundant rows) when m·n_c ≤ :data:`DENSE_LIMIT`, else through the Gram matrix ΦΦᵀ (m, m),
        which resolves singular values only down to ~1e-8·σ_max, so ``rtol`` is then raised to at least
        :data:`GRAM_RTOL_FLOOR` (reported).
    rtol : float, optional
        Relative tolerance on singular values, default :data:`DEFAULT_RTOL`.
    row_labels : sequence of str, optional
        One label per row (e.g. constraint names), used in ``redundant_labels`` and the summary.
    atol : float, optional
        Absolute floor on singular values, default :data:`DEFAULT_ATOL`.

    Returns
    -------
    RankReport
    """
    rtol, atol = resolve_tolerances(rtol, atol)
    source = "svd"
    if _is_sparse(Phi) and Phi.shape[0] * Phi.shape[1] > DENSE_LIMIT:
        Phi = Phi.tocsr().astype(float)
        if not np.isfinite(Phi.data).all():
            raise ConstraintError("Phi contains NaN/Inf")
        m, n = Phi.shape
        cols = stored_columns(Phi)
        if m * len(cols) <= DENSE_LIMIT:  # zero columns change neither σ nor the pivots
            Phi_c = on_columns(Phi, cols)
            svd, _ = constraint_svd(Phi_c, rtol, atol)
            s = np.zeros(min(m, n))
            s[: len(svd.singular_values)] = svd.singular_values
            return _rank_report(Phi_c.T, s, svd.tol, svd.rank, rtol, atol, m, n, row_labels, "svd")
        s, X = _gram_singular_values(Phi)
        rtol, source = max(rtol, GRAM_RTOL_FLOOR), "gram"
        s = s[: min(m, n)]
        tol = max(rtol * s[0], atol) if s.size else atol
        rank = int(np.count_nonzero(s > tol))
        pivot_source = X  # XᵀX = ΦΦᵀ: same column norms/angles as Φᵀ, so same pivots
    else:
        Phi = dense_jacobian(Phi)
        m, n = Phi.shape
        svd, _ = constraint_svd(Phi, rtol, atol)
        s, tol, rank = svd.singular_values, svd.tol, svd.rank
        pivot_source = Phi.T
    return _rank_report(pivot_source, s, tol, rank, rtol, atol, m, n, row_labels, source)


def _rank_report(pivot_source, s, tol, rank, rtol, atol, m, n, row_labels, source) -> RankReport:
    """RankReport with the redundant rows chosen by QR with column pivoting of ``pivot_source`` (·, m)."""
    if row_labels is not None:
        row_labels = tuple(str(x) for x in row_labels)
        if len(row_labels) != m:
            raise ConstraintError(f"row_labels has {len(row_labels)} entries, expected one per row of Phi ({m})")
    if 0 < rank < m:
        _, piv = sla.qr(pivot_source, mode="r", pivoting=True, check_finite=False)
        redundant = tuple(sorted(int(i) for i in piv[rank:]))
    else:
        redundant = tuple(range(m)) if rank == 0 else ()
    labels = tuple(row_labels[i] for i in redundant) if row_labels is not None else None
    return RankReport(
        rank=rank,
        singular_values=s,
        tol=float(tol),
        rtol=rtol,
        atol=atol,
        n_dofs=n,
        n_constraints=m,
        dof=n - rank,
        redundant_rows=redundant,
        redundant_labels=labels,
        is_full_rank=(rank == m),
        source=source,
    )
