"""Products of CSR matrices with vectors in compiled loops, and sums that keep a matrix's pattern, for the many small
products of a Newton
iteration: A x and Aᵀy with no new matrix object (scipy's ``A.T @ y`` builds the CSC transpose first, and
each scipy product costs some 10 µs of Python around a few hundred multiplications).

Both sum in the order scipy's own kernels do (csr_matvec row by row; Aᵀy as csc_matvec of the transpose,
row of A after row of A), so the results are bitwise those of ``A @ x`` and ``A.T @ y``. Dense arrays and
other sparse formats are handed to numpy/scipy.
"""

from __future__ import annotations

import numba as nb
import numpy as np
import scipy.sparse as sp

__all__ = ["product", "transposed_product", "add_within", "symmetric_part"]


@nb.njit(cache=True)
def _csr_product(data, indices, indptr, x, out):
    for i in range(indptr.shape[0] - 1):
        s = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            s += data[k] * x[indices[k]]
        out[i] = s


@nb.njit(cache=True)
def _csr_transposed_product(data, indices, indptr, y, out):
    out[:] = 0.0
    for i in range(indptr.shape[0] - 1):
        yi = y[i]
        for k in range(indptr[i], indptr[i + 1]):
            out[indices[k]] += data[k] * yi


_FLOAT64 = np.dtype(np.float64)
_ROW_CLASSES = (sp.csr_matrix, sp.csr_array)
_COLUMN_CLASSES = (sp.csc_matrix, sp.csc_array)


def _is_csr(A) -> bool:
    return isinstance(A, _ROW_CLASSES) and A.data.dtype == _FLOAT64


def _is_csc(A) -> bool:
    return isinstance(A, _COLUMN_CLASSES) and A.data.dtype == _FLOAT64


def product(A, x: np.ndarray) -> np.ndarray:
    """A x (m,) for A (m, n) dense or sparse and x (n,) float."""
    out = _compressed_product(A, x, transposed=False)
    return A @ x if out is None else out


def transposed_product(A, y: np.ndarray) -> np.ndarray:
    """Aᵀy (n,) for A (m, n) dense or sparse and y (m,) float."""
    out = _compressed_product(A, y, transposed=True)
    return A.T @ y if out is None else out


def _compressed_product(A, x: np.ndarray, *, transposed: bool) -> np.ndarray | None:
    """A x, or Aᵀx, in the compiled loops for a float CSR or CSC A and a float vector x (None for anything else): the
    arrays of a CSC matrix are the CSR arrays of its transpose, so each orientation runs the other's loop, in scipy's
    order of summation."""
    if x.dtype != _FLOAT64 or x.ndim != 1:
        return None
    if _is_csr(A):
        by_rows = not transposed
    elif _is_csc(A):
        by_rows = transposed
    else:
        return None
    out = np.empty(A.shape[1] if transposed else A.shape[0])
    (_csr_product if by_rows else _csr_transposed_product)(A.data, A.indices, A.indptr, x, out)
    return out


def with_values(pattern, data: np.ndarray):
    """A new sparse matrix with the class, shape and index arrays (shared, not copied) of the compressed matrix
    ``pattern`` and the values ``data`` (nnz,): scipy's constructor checks the index arrays on every call (about
    20 µs for a constraint Jacobian), which a pattern made once and checked then does not need."""
    matrix = pattern.__class__.__new__(pattern.__class__)
    matrix.__dict__.update(pattern.__dict__)
    matrix.data = data
    return matrix


@nb.njit(cache=True)
def positions_within(indptr, indices, pattern_indptr, pattern_indices, positions) -> bool:
    """Positions in a pattern (sorted compressed arrays) of every entry of a sorted compressed matrix of the
    same orientation; False when one lies outside the pattern (shared with :mod:`.sparse_factor`)."""
    for j in range(indptr.shape[0] - 1):
        p, end = pattern_indptr[j], pattern_indptr[j + 1]
        for k in range(indptr[j], indptr[j + 1]):
            index = indices[k]
            while p < end and pattern_indices[p] < index:
                p += 1
            if p == end or pattern_indices[p] != index:
                return False
            positions[k] = p
            p += 1
    return True


def add_within(A, B, scale: float = 1.0):
    """A + scale·B on A's pattern when B's entries lie within it (then no entry of the sum is dropped for being
    zero, so a sequence of such sums keeps one pattern); otherwise the plain sum. A: CSR with sorted indices;
    B: sparse (converted to CSR)."""
    if sp.issparse(B) and not _is_csr(B):
        B = sp.csr_matrix(B)
    if _is_csr(A) and _is_csr(B) and A.shape == B.shape and A.has_sorted_indices and B.has_sorted_indices:
        positions = np.empty(B.nnz, dtype=np.int64)
        if positions_within(B.indptr, B.indices, A.indptr, A.indices, positions):
            data = A.data.copy()
            data[positions] += scale * B.data  # distinct positions: B's sorted entries each found once
            return with_values(A, data)
    return A + scale * B


def symmetric_part(K):
    """(K + Kᵀ)/2 as CSC; on K's own pattern when that pattern is symmetric (no entry dropped for being zero)."""
    K = sp.csc_matrix(K)
    K.sort_indices()
    Kt = K.T.tocsc()  # CSC of Kᵀ: the rows of K as columns
    Kt.sort_indices()
    if np.array_equal(Kt.indptr, K.indptr) and np.array_equal(Kt.indices, K.indices):
        return sp.csc_matrix((0.5 * (K.data + Kt.data), K.indices, K.indptr), shape=K.shape)
    out = ((K + Kt) * 0.5).tocsc()
    out.sort_indices()
    return out
