"""The inertia of a symmetric tangent: how many of its eigenvalues are negative, and the eigenpairs nearest zero.

By Sylvester's law of inertia a congruence P A Pᵀ = L D Lᵀ keeps the signs of the eigenvalues, so the number of
negative pivots of an LDLᵀ factorisation is the number of negative eigenvalues of A (Golub & Van Loan, Matrix
Computations, 4th ed., §8.1.2). CHOLMOD's simplicial LDLᵀ (scikit-sparse) factors symmetric indefinite
matrices with non-zero pivots; without it (or after a zero pivot) SuperLU factors A with diagonal pivots in a
symmetric ordering, whose U = D Lᵀ carries the same pivots on its diagonal.

An eigenvalue that is zero to round-off (a mechanism, a neutral direction) must not count as negative by chance:
the count is that of A + δI with δ = ``relative_shift`` · max|A_ii|, i.e. the eigenvalues below −δ.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

try:  # scikit-sparse (CHOLMOD)
    from sksparse.cholmod import CholmodError, cholesky
except ImportError:  # pragma: no cover - depends on the environment
    cholesky, CholmodError = None, Exception

__all__ = ["negative_eigenvalues", "eigenpairs_near_zero", "zero_tolerance", "RELATIVE_SHIFT"]

RELATIVE_SHIFT = 1e-12
"""Eigenvalues above −RELATIVE_SHIFT · max|A_ii| count as non-negative (zero to round-off: some thousand ε; a
slender structure's tangent spans ten and more decades, so its buckling eigenvalue is small against max|A_ii|)."""

DENSE_LIMIT = 400
"""Up to this size the eigenpairs are computed densely (LAPACK), above it by shift-invert Lanczos (ARPACK)."""


def negative_eigenvalues(A: sp.spmatrix, relative_shift: float = RELATIVE_SHIFT) -> int:
    """The number of eigenvalues of the symmetric ``A`` (n, n) below −relative_shift · max|A_ii|."""
    A = sp.csc_matrix(A)
    delta = zero_tolerance(A, relative_shift)
    shifted = (A + delta * sp.identity(A.shape[0], format="csc")).tocsc()
    if cholesky is not None:
        try:
            pivots = cholesky(shifted, mode="simplicial").D()
            if np.all(np.isfinite(pivots)) and np.all(pivots != 0.0):
                return int(np.count_nonzero(pivots < 0.0))
        except CholmodError:  # a zero pivot: SuperLU below
            pass
    return int(np.count_nonzero(_symmetric_lu_pivots(shifted) < 0.0))


def _symmetric_lu_pivots(A: sp.csc_matrix) -> np.ndarray:
    """The pivots D of P A Pᵀ = L D Lᵀ from SuperLU restricted to diagonal pivots (U = D Lᵀ)."""
    lu = spla.splu(A, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0, options={"SymmetricMode": True})
    return lu.U.diagonal()


def zero_tolerance(A: sp.spmatrix, relative_shift: float = RELATIVE_SHIFT) -> float:
    """δ = relative_shift · max|A_ii|: eigenvalues of A above −δ count as non-negative."""
    return relative_shift * max(float(np.abs(A.diagonal()).max(initial=0.0)), np.finfo(float).tiny)


def eigenpairs_near_zero(A: sp.spmatrix, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` eigenvalues (k,) of the symmetric ``A`` nearest zero, ascending, and their unit eigenvectors
    (n, k)."""
    values, vectors = _eigenvalues_near_zero(sp.csc_matrix(A), k)
    order = np.argsort(values)
    return values[order], vectors[:, order]


def _eigenvalues_near_zero(A: sp.csc_matrix, k: int) -> tuple[np.ndarray, np.ndarray]:
    n = A.shape[0]
    k = min(k, n)
    if n <= DENSE_LIMIT or k >= n - 1:
        values, vectors = np.linalg.eigh(A.toarray())
        nearest = np.argsort(np.abs(values))[:k]
        return values[nearest], vectors[:, nearest]
    start = np.random.default_rng(0).standard_normal(n)  # ARPACK's start vector: fixed, so runs repeat exactly
    values, vectors = spla.eigsh(A, k=k, sigma=0.0, which="LM", v0=start)
    return values, vectors
