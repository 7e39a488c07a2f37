"""Small dense linear algebra of the element-local systems (the 9 × 9 enhanced-mode solves of
:mod:`flexbody.fem.kernels`): Gaussian elimination with partial pivoting and a plain matrix product, written out
in numba because its np.linalg.solve and matrix product pull in LAPACK/BLAS wrappers whose compilation costs more
than the small solves ever do.
"""

from __future__ import annotations

import numba as nb
import numpy as np


@nb.njit(cache=True)
def small_solve(A, B):
    """A⁻¹ B (k, m) for the element-local systems of the enhanced modes (k = 9): Gaussian elimination with
    partial pivoting on copies of A (k, k) and B (k, m). Written out because numba's np.linalg.solve and
    matrix product pull in LAPACK/BLAS wrappers whose compilation costs more than the 9 × 9 solve ever does."""
    A, X = A.copy(), B.copy()
    k, m = X.shape
    for c in range(k):
        piv = c
        for r in range(c + 1, k):
            if abs(A[r, c]) > abs(A[piv, c]):
                piv = r
        if piv != c:
            for j in range(k):
                A[c, j], A[piv, j] = A[piv, j], A[c, j]
            for j in range(m):
                X[c, j], X[piv, j] = X[piv, j], X[c, j]
        for r in range(c + 1, k):
            factor = A[r, c] / A[c, c]
            for j in range(c + 1, k):
                A[r, j] -= factor * A[c, j]
            for j in range(m):
                X[r, j] -= factor * X[c, j]
    for c in range(k - 1, -1, -1):
        for j in range(m):
            s = X[c, j]
            for r in range(c + 1, k):
                s -= A[c, r] * X[r, j]
            X[c, j] = s / A[c, c]
    return X


@nb.njit(cache=True)
def small_product(A, B):
    """A B for small dense A (k, l), B (l, m)."""
    out = np.zeros((A.shape[0], B.shape[1]))
    for i in range(A.shape[0]):
        for r in range(A.shape[1]):
            a = A[i, r]
            for j in range(B.shape[1]):
                out[i, j] += a * B[r, j]
    return out
