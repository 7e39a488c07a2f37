"""Products of CSR matrices with vectors in compiled loops, for the many small products of a Newton
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

__all__ = ["product", "transposed_product"]


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


def _is_csr(A) -> bool:
    return isinstance(A, sp.csr_matrix | sp.csr_array) and A.data.dtype == np.float64


def product(A, x: np.ndarray) -> np.ndarray:
    """A x (m,) for A (m, n) dense or sparse and x (n,) float."""
    if _is_csr(A) and x.dtype == np.float64 and x.ndim == 1:
        out = np.empty(A.shape[0])
        _csr_product(A.data, A.indices, A.indptr, x, out)
        return out
    return A @ x


def transposed_product(A, y: np.ndarray) -> np.ndarray:
    """Aᵀy (n,) for A (m, n) dense or sparse and y (m,) float."""
    if _is_csr(A) and y.dtype == np.float64 and y.ndim == 1:
        out = np.empty(A.shape[1])
        _csr_transposed_product(A.data, A.indices, A.indptr, y, out)
        return out
    return A.T @ y
