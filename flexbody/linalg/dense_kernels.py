"""Dense linear algebra in compiled kernels, shared by every compiled route: dot products and updates, Cholesky
(LAPACK potrf through numba), triangular solves, LU with partial pivoting, and the Householder QR of Φᵀ with the
certificate that the rank-revealing SVD would keep every row of Φ [AG Remark 4].

The certificate (:func:`certified_full_row_rank`): σ_min(Φ) ≥ 1/‖R⁻¹‖_F and σ_max(Φ) ≤ ‖R‖_F = ‖Φ‖_F, so the SVD's
rank test σ_min > max(rtol·σ_max, atol) of :mod:`flexbody.linalg.rank` surely gives rank m when
½/‖R⁻¹‖_F − 2·slack > max(rtol·(‖R‖_F + 2·slack), atol), with slack = RANK_SLACK·(m + n)·‖R‖_F for the round-off of
this QR and of LAPACK's SVD, and the QR is used only for ‖R‖_F‖R⁻¹‖_F ≤ CERTIFIED_CONDITION (beyond it the SVD
decides and factorises, so that the two never differ by more than well-conditioned round-off). These are the
rules of :mod:`flexbody.linalg.rank`; its :func:`~flexbody.linalg.rank.certified_qr` and the dense fast path of
:func:`flexbody.dynamics.forward` both factor Φ here, so one Φ is factored one way.

Inner loops run over zero-based ranges of 1-D row views: numba then needs no negative-index wraparound and LLVM
vectorises them (2-D indexing from a non-zero start is scalar code).
"""

from __future__ import annotations

import numba as nb
import numpy as np

FM = {"reassoc", "contract"}  # reassociation and FMA only (no nnan/ninf): vectorised reductions

RANK_SLACK = 8.0 * float(np.finfo(float).eps)
"""Perturbation of singular values, relative to ‖Φ‖_F and per unit of m + n, allowed for the round-off of the QR
and of LAPACK's SVD when full row rank is certified without an SVD."""

CERTIFIED_CONDITION = 1e6
"""Largest ‖Φ‖_F‖R⁻¹‖_F (a bound on the condition number of Φ) a QR certificate accepts."""

CERTIFICATE_MARGIN = 2.0
"""A QR certifies full row rank only if its bound σ_min ≥ 1/‖R⁻¹‖_F exceeds the largest tolerance the SVD could
use, max(rtol·‖Φ‖_F, atol), by this factor, after round-off."""

__all__ = [
    "RANK_SLACK",
    "CERTIFIED_CONDITION",
    "CERTIFICATE_MARGIN",
    "dot",
    "axpy",
    "cholesky",
    "cholesky_in_place",
    "lsolve",
    "ltsolve",
    "lsolve_rows",
    "cho_solve",
    "utsolve",
    "usolve",
    "householder_qr",
    "q_transpose",
    "certified_full_row_rank",
    "certified_row_factor",
    "lu_solve",
]


@nb.njit(cache=True, fastmath=FM)
def dot(x, y):
    s = 0.0
    for t in range(x.shape[0]):
        s += x[t] * y[t]
    return s


@nb.njit(cache=True, fastmath=FM)
def axpy(c, x, y):
    """y ← y − c·x."""
    for t in range(y.shape[0]):
        y[t] -= c * x[t]


@nb.njit(cache=True)
def cholesky(A):
    """(True, L) with LLᵀ = A, L lower triangular, by LAPACK potrf on the lower triangle of A (numba's
    np.linalg.cholesky); (False, ·) at the first non-positive pivot."""
    ok = True
    L = np.zeros((0, 0))
    try:
        L = np.linalg.cholesky(A)
    except Exception:  # LinAlgError: not positive definite
        ok = False
    return ok, L


@nb.njit(cache=True)
def cholesky_in_place(A):
    """A ← its lower Cholesky factor L (LLᵀ = A; the strict upper triangle zeroed) by loops, for small matrices whose
    LAPACK call and copy cost more than their arithmetic; False at the first pivot not positive and finite."""
    n = A.shape[0]
    for j in range(n):
        s = A[j, j]
        for k in range(j):
            s -= A[j, k] * A[j, k]
        if not (s > 0.0 and np.isfinite(s)):
            return False
        d = np.sqrt(s)
        A[j, j] = d
        for i in range(j + 1, n):
            t = A[i, j]
            for k in range(j):
                t -= A[i, k] * A[j, k]
            A[i, j] = t / d
            A[j, i] = 0.0
    return True


@nb.njit(cache=True, fastmath=FM)
def lsolve(L, b):
    """b ← L⁻¹ b (forward substitution, row-oriented)."""
    for i in range(L.shape[0]):
        b[i] = (b[i] - dot(L[i, :i], b[:i])) / L[i, i]


@nb.njit(cache=True, fastmath=FM)
def ltsolve(L, b):
    """b ← L⁻ᵀ b (back substitution with U = Lᵀ, column-oriented)."""
    for i in range(L.shape[0] - 1, -1, -1):
        xi = b[i] / L[i, i]
        b[i] = xi
        axpy(xi, L[i, :i], b[:i])


@nb.njit(cache=True, fastmath=FM)
def lsolve_rows(L, B):
    """B ← L⁻¹ B for a matrix B (forward substitution by row operations on B's rows; the inner loop is
    written out: through axpy it takes twice as long)."""
    for i in range(L.shape[0]):
        Bi = B[i]
        for j in range(i):
            Bj = B[j]
            c = L[i, j]
            for t in range(Bi.shape[0]):
                Bi[t] -= c * Bj[t]
        r = 1.0 / L[i, i]
        for t in range(Bi.shape[0]):
            Bi[t] *= r


@nb.njit(cache=True, fastmath=FM)
def cho_solve(L, b):
    """b ← (LLᵀ)⁻¹ b."""
    lsolve(L, b)
    ltsolve(L, b)


@nb.njit(cache=True, fastmath=FM)
def utsolve(U, b):
    """b ← U⁻ᵀ b (forward substitution with L = Uᵀ, column-oriented)."""
    n = U.shape[0]
    for i in range(n):
        xi = b[i] / U[i, i]
        b[i] = xi
        axpy(xi, U[i, i + 1 :], b[i + 1 :])


@nb.njit(cache=True, fastmath=FM)
def usolve(U, b):
    """b ← U⁻¹ b (back substitution, row-oriented)."""
    n = U.shape[0]
    for i in range(n - 1, -1, -1):
        b[i] = (b[i] - dot(U[i, i + 1 :], b[i + 1 :])) / U[i, i]


@nb.njit(cache=True, fastmath=FM)
def householder_qr(Phi, V, beta, R):
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
        s = dot(x, x)
        x0 = x[0]
        alpha = -np.sqrt(s) if x0 >= 0.0 else np.sqrt(s)
        x[0] = x0 - alpha
        vv = s - x0 * x0 + x[0] * x[0]  # ‖v‖² = ‖x‖² − x₀² + v₀²
        bk = 2.0 / vv if vv > 0.0 else 0.0
        beta[k] = bk
        R[k, k] = alpha
        for j in range(k + 1, m):  # apply H_k to the later rows
            y = V[j, k:]
            axpy(bk * dot(x, y), x, y)
            R[k, j] = y[0]
            R[j, k] = 0.0
        for i in range(k):
            V[k, i] = 0.0


@nb.njit(cache=True, fastmath=FM)
def q_transpose(V, beta, full):
    """Rows of Qᵀ for the QR of :func:`householder_qr`, from the compact WY form Q = I − Y T Yᵀ, Y = Vᵀ
    (LAPACK dlarft, forward, columnwise): Q₁ᵀ (m, n), or with ``full`` all of Qᵀ (n, n), whose rows
    m..n−1 are Cᵀ with C an orthonormal basis of ker Φ."""
    m, _n = V.shape
    T = np.zeros((m, m))
    w = np.empty(m)
    for i in range(m):
        for j in range(i):
            w[j] = -beta[i] * dot(V[j, i:], V[i, i:])
        for j in range(i):
            T[j, i] = dot(T[j, j:i], w[j:i])
        T[i, i] = beta[i]
    TV = np.dot(T.T, V)
    QT = -np.dot(V.T, TV) if full else -np.dot(V[:, :m].T.copy(), TV)  # else Yᵀ's first m columns
    for i in range(QT.shape[0]):
        QT[i, i] += 1.0
    return QT


@nb.njit(cache=True, fastmath=FM)
def certified_full_row_rank(R, rtol, atol, n, X):
    """True when the SVD rank test σ_min > max(rtol·σ_max, atol) of :func:`flexbody.linalg.rank.constraint_svd`
    certainly gives rank m (module docstring), R (m, m) being the triangle of the QR of Φᵀ (n, m); R⁻¹ (upper) goes
    to X (m, m). Otherwise the caller falls back to the SVD."""
    m = R.shape[0]
    fro = 0.0
    for i in range(m):
        fro += dot(R[i, i:], R[i, i:])
        if R[i, i] == 0.0:
            return False
    fro = np.sqrt(fro)
    X[:, :] = 0.0  # R⁻¹ (upper), column by column
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
    slack = RANK_SLACK * (m + n) * fro
    lower = 1.0 / np.sqrt(inv2)
    return (
        lower / CERTIFICATE_MARGIN - 2.0 * slack > max(rtol * (fro + 2.0 * slack), atol)
        and fro <= CERTIFIED_CONDITION * lower
    )


@nb.njit(cache=True)
def certified_row_factor(Phi, rtol, atol, V, beta, R, R_inv):
    """The Householder QR Φᵀ = Q [R; 0] of Φ (m, n), m ≤ n (Householder vectors into V (m, n), β (m,), the
    triangle into R, R⁻¹ into R_inv) and whether it certifies that the SVD keeps every row of Φ."""
    householder_qr(Phi, V, beta, R)
    return certified_full_row_rank(R, rtol, atol, Phi.shape[1], R_inv)


@nb.njit(cache=True, fastmath=FM)
def lu_solve(A, b):
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
        uk = A[k, k + 1 :]
        for i in range(k + 1, n):
            axpy(A[i, k], uk, A[i, k + 1 :])
    usolve(A, b)
    return True
