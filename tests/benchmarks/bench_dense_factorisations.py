"""Benchmark: the dense factorisations of forward dynamics' fast route, hand-written against LAPACK.

``flexbody.dynamics.forward`` solves small dense float64 problems with the numba kernels of
``flexbody/dynamics/compiled.py`` (``nb_kkt`` for "multiplier"/"gauss", ``nb_ortho`` for
"nullspace"/"projection"). Variants of those two kernels are timed here, per call of
``forward(M, h, tau, Phi, bias, method=...)`` (the public call, validation and result object included):

* (a) ``hand-written``: the kernels of compiled.py as they were before the switch to LAPACK's Cholesky
  (commit 62f034e, the same code here): hand-written Cholesky, Householder QR of Φᵀ with its compact-WY
  Q, and LU with partial pivoting;
* (b′) ``LAPACK Cholesky``: compiled.py's ``nb_kkt``/``nb_ortho`` as they are: the Cholesky factors by
  LAPACK (numba's ``np.linalg.cholesky``), the hand-written QR and LU;
* (b) ``numba LAPACK``: (b′) with the QR and the LU by LAPACK too (numba's ``np.linalg.qr`` and
  ``np.linalg.solve``; numba's ``qr`` has no complete mode, so the full Q of "nullspace" is the Q of the
  square [Φᵀ | 0]); the triangular substitutions are loops in every numba variant;
* (c) ``scipy LAPACK``: the same algebra in Python with ``scipy.linalg.lapack`` (``dpotrf``, ``dpotrs``,
  ``dtrtrs``, ``dtrtri``, ``dgeqrf``, ``dorgqr``, ``dgesv``), the thinnest scipy route to LAPACK.

All make the same certification decisions (_FAST_MIN_PIVOT on the Schur pivots, the ‖R‖_F‖R⁻¹‖_F ≤
_FAST_MAX_COND and _RANK_SLACK rank test on the QR) and return the same status codes; ``forward`` selects
the variant by swapping the module's ``nb_kkt``/``nb_ortho`` for the duration of its timing.

Problems: random SPD M = AAᵀ + nI and random (full row rank) Φ with (n, m) = (3, 2), (12, 5), (34, 12), as
in ``tests/test_dynamics.py``, and the slider-crank (``mechanisms.slider_crank()``, n = 2, m = 1) at its
assembled initial state (``asm.terms(t, q, v)``: M, h, Φ, bias; τ random).

Before timing, every variant must give the accelerations and multipliers of (a) to ``--agree-tol``
(relative, ∞-norm) for every method and every inertia kind of "projection"; a variant that declines
(falls back to the reference route) or disagrees stops the benchmark.

Timing: one thread (``numba.set_num_threads(1)``, and OPENBLAS/OMP/MKL_NUM_THREADS=1 unless set). Each
round times the variants one after the other for every (problem, method), in an order that rotates from
round to round, each for ``loops`` calls chosen so one batch lasts ≥ ``--min-time``. Reported: the median
over ``--rounds`` rounds of µs per call, and the median over rounds of the per-round ratio to (a) (the
variants of one round ran within a fraction of a second of each other, so load changes largely cancel);
a summary counts the rows where a variant is within 1.1× of (a). The numba kernels of this file are
compiled at start (not cached); the time of every variant's first calls is printed.

Usage::

    python tests/benchmarks/bench_dense_factorisations.py [--rounds N] [--min-time S] [--quick]
                                                          [--methods ...] [--seed K]
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import sys
import time
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # one BLAS thread, before numpy/scipy load BLAS

import numba as nb  # noqa: E402 (after the thread variables above)
import numpy as np  # noqa: E402 (after the thread variables above)
from scipy.linalg import lapack  # noqa: E402 (after the thread variables above)

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))  # repository root, if flexbody is not installed

from timing import batch_seconds, loops_for, rel  # noqa: E402

from flexbody import mechanisms  # noqa: E402
from flexbody.dynamics import INERTIA_KINDS, METHODS, compiled, forward  # noqa: E402
from flexbody.dynamics.compiled import (  # noqa: E402
    _FAST_BAD_INPUT,
    _FAST_FAILED,
    _FAST_MIN_PIVOT,
    FAST_OK,
    _nb_constraint_inertia,
    _nb_finite,
)
from flexbody.linalg.dense_kernels import CERTIFIED_CONDITION as _FAST_MAX_COND  # noqa: E402
from flexbody.linalg.dense_kernels import FM as _FM  # noqa: E402
from flexbody.linalg.dense_kernels import RANK_SLACK as _RANK_SLACK  # noqa: E402
from flexbody.linalg.dense_kernels import axpy as _nb_axpy  # noqa: E402
from flexbody.linalg.dense_kernels import certified_full_row_rank  # noqa: E402
from flexbody.linalg.dense_kernels import cho_solve as _nb_cho_solve  # noqa: E402
from flexbody.linalg.dense_kernels import cholesky as _nb_cholesky  # noqa: E402
from flexbody.linalg.dense_kernels import dot as _nb_dot  # noqa: E402
from flexbody.linalg.dense_kernels import householder_qr as _nb_house_qr  # noqa: E402
from flexbody.linalg.dense_kernels import lu_solve as _nb_lu_solve  # noqa: E402
from flexbody.linalg.dense_kernels import q_transpose as _nb_q_transpose  # noqa: E402
from flexbody.linalg.dense_kernels import usolve as _nb_usolve  # noqa: E402
from flexbody.linalg.dense_kernels import utsolve as _nb_utsolve  # noqa: E402


@nb.njit
def _nb_full_row_rank(R, rtol, atol, n):
    """The package's certificate of full row rank (linalg/dense_kernels.py), R⁻¹ into scratch."""
    return certified_full_row_rank(R, rtol, atol, n, np.empty_like(R))


RANDOM_SIZES = ((3, 2), (12, 5), (34, 12))


# ---------------------------------------------------------------------------- (a) hand-written
# The kernels of compiled.py before the switch to LAPACK's Cholesky (commit 62f034e), the same code.
@nb.njit(fastmath=_FM)
def _hand_factor_rows(W, n):
    """Right-looking Cholesky of the upper-stored W[:n, :n] in place (W[:n, :n] ← U with UᵀU = A),
    applying the same row operations to the extra columns W[:, n:] (which become U⁻ᵀ·them).
    Returns 0, or the 1-based index of the first non-positive pivot."""
    for k in range(n):
        piv = W[k, k]
        if not piv > 0.0:
            return k + 1
        d = np.sqrt(piv)
        W[k, k] = d
        wk = W[k, k + 1 :]
        r = 1.0 / d
        for t in range(wk.shape[0]):
            wk[t] *= r
        for i in range(k + 1, n):
            _nb_axpy(W[k, i], W[k, i:], W[i, i:])
    return 0


@nb.njit(fastmath=_FM)
def _hand_chol(A, U):
    """Cholesky factor U (upper, UᵀU = A) of the lower triangle of A; U must be zeroed."""
    n = A.shape[0]
    for i in range(n):
        for j in range(i, n):
            U[i, j] = A[j, i]
    return _hand_factor_rows(U, n)


@nb.njit(fastmath=_FM)
def _hand_kkt(M, h, tau, Phi, bias, rtol, atol):
    """compiled.nb_kkt with the hand-written Cholesky factors [DE-7, DE-33, DE-34]."""
    n, m = M.shape[0], Phi.shape[0]
    a = np.zeros(n)
    force = np.zeros(n)
    lam = np.zeros(m)
    if not _nb_finite(M, h, tau, Phi, bias):
        return _FAST_BAD_INPUT, a, force, lam
    for k in range(m):
        if not _nb_dot(Phi[k], Phi[k]) > 2.0 * atol * atol:
            return _FAST_FAILED, a, force, lam
    W = np.zeros((n, n + m + 1))  # [M | Φᵀ | τ − h], upper part
    for i in range(n):
        Wi = W[i]
        for j in range(i, n):
            Wi[j] = M[j, i]
        for k in range(m):
            Wi[n + k] = Phi[k, i]
        Wi[n + m] = tau[i] - h[i]
    if _hand_factor_rows(W, n):  # M = UᵀU; [Ytᵀ | w] = U⁻ᵀ[Φᵀ | τ − h]
        return _FAST_FAILED, a, force, lam
    B = W[:, n:].copy()
    G = np.dot(B.T, B)
    S = G[:m, :m].copy()  # S = ΦM⁻¹Φᵀ  [DE-34]
    Us = np.zeros((m, m))
    if _hand_chol(S, Us) != 0:
        return _FAST_FAILED, a, force, lam
    floor = max(2.0 * rtol, _FAST_MIN_PIVOT)
    for k in range(m):
        if not Us[k, k] * Us[k, k] > floor * S[k, k]:
            return _FAST_FAILED, a, force, lam
    for k in range(m):  # λ = −S⁻¹(Φ a_u + bias)  [DE-33]
        lam[k] = -(G[k, m] + bias[k])
    _nb_utsolve(Us, lam)
    _nb_usolve(Us, lam)
    for i in range(n):  # a = U⁻¹(w + Ytᵀλ)
        a[i] = B[i, m] + _nb_dot(B[i, :m], lam)
    U = W[:, :n]
    for i in range(n - 1, -1, -1):
        a[i] = (a[i] - _nb_dot(U[i, i + 1 :], a[i + 1 :])) / U[i, i]
    for k in range(m):
        _nb_axpy(-lam[k], Phi[k], force)
    return FAST_OK, a, force, lam


@nb.njit(fastmath=_FM)
def _hand_ortho(M, h, tau, Phi, bias, rtol, atol, mode, gamma):
    """compiled.nb_ortho with the hand-written Cholesky, QR and LU [DE-10..15, AG-15..32]."""
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
    Qt = QT[:m]
    y = bias.copy()
    _nb_utsolve(R, y)  # R⁻ᵀ bias
    a_perp = -np.dot(Qt.T, y)  # [AG-16]
    f = tau - h
    if mode == 0:  # nullspace [DE-10..15]
        p = n - m
        Ct = QT[m:]
        Mp = np.dot(np.dot(Ct, M), Ct.T)
        Up = np.zeros((p, p))
        if _hand_chol(Mp, Up) != 0:
            return _FAST_FAILED, a, force, lam
        z = np.dot(Ct, f - np.dot(M, a_perp))
        _nb_utsolve(Up, z)
        _nb_usolve(Up, z)
        a[:] = a_perp + np.dot(Ct.T, z)
    else:  # projection [AG-22..29]
        Mc, rhs = _nb_constraint_inertia(M, Qt, f, a_perp, mode, gamma)  # shared: not a factorisation
        a[:] = rhs
        solved = False
        if mode == 2:
            Uc = np.zeros((n, n))
            if _hand_chol(Mc, Uc) == 0:
                _nb_utsolve(Uc, a)
                _nb_usolve(Uc, a)
                solved = True
        if not solved and not _nb_lu_solve(Mc, a):
            return _FAST_FAILED, a, force, lam
    u = np.dot(Qt, np.dot(M, a) - f)
    force[:] = np.dot(Qt.T, u)  # [AG-32]
    lam[:] = u
    _nb_usolve(R, lam)
    return FAST_OK, a, force, lam


# ---------------------------------------------------------------------------- (b) numba's np.linalg
@nb.njit(fastmath=_FM)
def _lapack_qr_of_phi_t(Phi, full):
    """(Qᵀ, R) of Φᵀ = Q₁R from numba's np.linalg.qr (LAPACK geqrf/orgqr): Qᵀ is Q₁ᵀ (m, n), or with
    ``full`` all of Qᵀ (n, n), the Q of the square [Φᵀ | 0] (its zero columns add identity reflectors)."""
    m, n = Phi.shape
    A = np.zeros((n, n if full else m))
    for i in range(n):
        for k in range(m):
            A[i, k] = Phi[k, i]
    Q, R = np.linalg.qr(A)
    return Q.T.copy(), R[:m, :m].copy()


@nb.njit(fastmath=_FM)
def _lapack_solve(A, b):
    """b ← A⁻¹b by LAPACK gesv (numba's np.linalg.solve); False at an exactly zero pivot."""
    ok = True
    try:
        b[:] = np.linalg.solve(A, b)
    except Exception:
        ok = False
    return ok


@nb.njit(fastmath=_FM)
def _lapack_ortho(M, h, tau, Phi, bias, rtol, atol, mode, gamma):
    """compiled.nb_ortho (LAPACK Cholesky) with Φᵀ = Q₁R and the LU of M_c from LAPACK too
    [DE-10..15, AG-15..32]."""
    n, m = M.shape[0], Phi.shape[0]
    a = np.zeros(n)
    force = np.zeros(n)
    lam = np.zeros(m)
    if not _nb_finite(M, h, tau, Phi, bias):
        return _FAST_BAD_INPUT, a, force, lam
    if m > n:
        return _FAST_FAILED, a, force, lam
    QT, R = _lapack_qr_of_phi_t(Phi, mode == 0)
    if not _nb_full_row_rank(R, rtol, atol, n):
        return _FAST_FAILED, a, force, lam
    Qt = QT[:m]
    y = bias.copy()
    _nb_utsolve(R, y)  # R⁻ᵀ bias
    a_perp = -np.dot(Qt.T, y)  # [AG-16]
    f = tau - h
    if mode == 0:  # nullspace [DE-10..15]
        Ct = QT[m:]
        ok, Lp = _nb_cholesky(np.dot(np.dot(Ct, M), Ct.T))
        if not ok:
            return _FAST_FAILED, a, force, lam
        z = np.dot(Ct, f - np.dot(M, a_perp))
        _nb_cho_solve(Lp, z)
        a[:] = a_perp + np.dot(Ct.T, z)
    else:  # projection [AG-22..29]
        Mc, rhs = _nb_constraint_inertia(M, Qt, f, a_perp, mode, gamma)  # shared: not a factorisation
        a[:] = rhs
        solved = False
        if mode == 2:
            ok, Lc = _nb_cholesky(Mc)
            if ok:
                _nb_cho_solve(Lc, a)
                solved = True
        if not solved and not _lapack_solve(Mc, a):
            return _FAST_FAILED, a, force, lam
    u = np.dot(Qt, np.dot(M, a) - f)
    force[:] = np.dot(Qt.T, u)  # [AG-32]
    lam[:] = u
    _nb_usolve(R, lam)
    return FAST_OK, a, force, lam


# ---------------------------------------------------------------------------- (c) scipy.linalg.lapack
def _scipy_full_row_rank(R, rtol, atol, n):
    """compiled._nb_full_row_rank with R⁻¹ from LAPACK trtri."""
    m = R.shape[0]
    if not np.all(np.diag(R) != 0.0):
        return False
    fro = np.sqrt(np.sum(R * R))
    X, info = lapack.dtrtri(R, lower=0)
    inv2 = np.sum(X * X)
    if info != 0 or not inv2 < np.inf:
        return False
    slack = _RANK_SLACK * (m + n) * fro
    lower = 1.0 / np.sqrt(inv2)
    return bool(0.5 * lower - 2.0 * slack > max(rtol * (fro + 2.0 * slack), atol) and fro <= _FAST_MAX_COND * lower)


def _finite(*arrays):
    return all(np.isfinite(x).all() for x in arrays)


def _scipy_kkt(M, h, tau, Phi, bias, rtol, atol):
    """compiled.nb_kkt by potrf/trtrs/potrs [DE-7, DE-33, DE-34]."""
    n, m = M.shape[0], Phi.shape[0]
    zeros = (np.zeros(n), np.zeros(n), np.zeros(m))
    if not _finite(M, h, tau, Phi, bias):
        return (_FAST_BAD_INPUT, *zeros)
    if not np.all(np.einsum("ij,ij->i", Phi, Phi) > 2.0 * atol * atol):
        return (_FAST_FAILED, *zeros)
    L, info = lapack.dpotrf(M, lower=1, clean=1)  # M = LLᵀ from M's lower triangle
    if info != 0:
        return (_FAST_FAILED, *zeros)
    B = np.empty((n, m + 1))
    B[:, :m] = Phi.T
    B[:, m] = tau - h
    B, _ = lapack.dtrtrs(L, B, lower=1)  # [Ytᵀ | w] = L⁻¹[Φᵀ | τ − h]
    G = B.T @ B
    S = G[:m, :m]
    Ls, info = lapack.dpotrf(S, lower=1, clean=1)
    if info != 0 or not np.all(np.diag(Ls) ** 2 > max(2.0 * rtol, _FAST_MIN_PIVOT) * np.diag(S)):
        return (_FAST_FAILED, *zeros)
    lam, _ = lapack.dpotrs(Ls, -(G[:m, m] + bias), lower=1)  # [DE-33]
    a, _ = lapack.dtrtrs(L, B[:, m] + B[:, :m] @ lam, lower=1, trans=1)
    return FAST_OK, a, Phi.T @ lam, lam


def _scipy_qr_of_phi_t(Phi, full):
    """(Q, R) of Φᵀ = Q₁R by geqrf/orgqr; Q (n, m), or with ``full`` (n, n)."""
    m, n = Phi.shape
    qr, tau_qr, _, _ = lapack.dgeqrf(Phi.T)
    R = np.triu(qr[:m])
    if full:
        square = np.zeros((n, n), order="F")
        square[:, :m] = qr
        qr = square
    Q, _, _ = lapack.dorgqr(qr, tau_qr)
    return Q, R


def _scipy_projected_inertia(M, Qt, f, a_perp, mode, gamma):
    """(M_c, right-hand side) of [AG-22..29] for mode 1 (M_c), 2 (M_c′), 3 (M_c″)."""
    n = M.shape[0]
    P = np.eye(n) - Qt.T @ Qt
    if mode == 1:
        PM = P @ M
        return M + PM - PM.T, P @ f + M @ a_perp
    if mode == 2:
        Q = np.eye(n) - P
        return P @ M @ P + Q @ M @ Q, P @ f + (Q - P) @ (M @ a_perp)
    return P @ M + gamma * (np.eye(n) - P), P @ f + gamma * a_perp


def _scipy_ortho(M, h, tau, Phi, bias, rtol, atol, mode, gamma):
    """compiled.nb_ortho by geqrf/orgqr, potrf/potrs and gesv [DE-10..15, AG-15..32]."""
    n, m = M.shape[0], Phi.shape[0]
    zeros = (np.zeros(n), np.zeros(n), np.zeros(m))
    if not _finite(M, h, tau, Phi, bias):
        return (_FAST_BAD_INPUT, *zeros)
    if m > n:
        return (_FAST_FAILED, *zeros)
    Q, R = _scipy_qr_of_phi_t(Phi, mode == 0)
    if not _scipy_full_row_rank(R, rtol, atol, n):
        return (_FAST_FAILED, *zeros)
    Q1 = Q[:, :m]
    y, _ = lapack.dtrtrs(R, bias, lower=0, trans=1)  # R⁻ᵀ bias
    a_perp = -(Q1 @ y)  # [AG-16]
    f = tau - h
    if mode == 0:  # [DE-10..15]
        C = Q[:, m:]
        Lp, info = lapack.dpotrf(C.T @ M @ C, lower=1, clean=1)
        if info != 0:
            return (_FAST_FAILED, *zeros)
        z, _ = lapack.dpotrs(Lp, C.T @ (f - M @ a_perp), lower=1)
        a = a_perp + C @ z
    else:
        Mc, rhs = _scipy_projected_inertia(M, Q1.T, f, a_perp, mode, gamma)
        info = 1
        if mode == 2:  # M_c′ is SPD [AG Prop. 1]
            Lc, info = lapack.dpotrf(Mc, lower=1, clean=1)
            if info == 0:
                a, _ = lapack.dpotrs(Lc, rhs, lower=1)
        if info != 0:
            _, _, a, info = lapack.dgesv(Mc, rhs)
            if info != 0:
                return (_FAST_FAILED, *zeros)
    u = Q1.T @ (M @ a - f)
    lam, _ = lapack.dtrtrs(R, u, lower=0)
    return FAST_OK, a, Q1 @ u, lam  # [AG-32]


# ---------------------------------------------------------------------------- the kernels' calling convention
# compiled.py's kernels write (a, Φᵀλ, λ) end to end into a last argument ``out`` (2n + m,) and return a status;
# the variants above return (status, a, Φᵀλ, λ) and are called through these adapters (compiled for the numba
# variants, so that they pay no Python call the module's kernels do not).
@nb.njit
def _into(out, result):
    status, a, force, lam = result
    n = a.shape[0]
    out[:n], out[n : 2 * n], out[2 * n :] = a, force, lam
    return status


@nb.njit
def _hand_kkt_into(M, h, tau, Phi, bias, rtol, atol, out):
    return _into(out, _hand_kkt(M, h, tau, Phi, bias, rtol, atol))


@nb.njit
def _hand_ortho_into(M, h, tau, Phi, bias, rtol, atol, mode, gamma, out):
    return _into(out, _hand_ortho(M, h, tau, Phi, bias, rtol, atol, mode, gamma))


@nb.njit
def _lapack_ortho_into(M, h, tau, Phi, bias, rtol, atol, mode, gamma, out):
    return _into(out, _lapack_ortho(M, h, tau, Phi, bias, rtol, atol, mode, gamma))


def _scipy_into(kernel):
    def into(*args):
        status, a, force, lam = kernel(*args[:-1])
        out, n = args[-1], a.shape[0]
        out[:n], out[n : 2 * n], out[2 * n :] = a, force, lam
        return status

    return into


# ---------------------------------------------------------------------------- variants and problems
VARIANTS = {
    "hand-written": (_hand_kkt_into, _hand_ortho_into),
    "LAPACK Cholesky": (compiled.nb_kkt, compiled.nb_ortho),
    "numba LAPACK": (compiled.nb_kkt, _lapack_ortho_into),
    "scipy LAPACK": (_scipy_into(_scipy_kkt), _scipy_into(_scipy_ortho)),
}


@contextlib.contextmanager
def kernels(variant):
    """forward()'s fast route uses the two kernels of ``variant`` inside the block."""
    saved = compiled.nb_kkt, compiled.nb_ortho
    compiled.nb_kkt, compiled.nb_ortho = VARIANTS[variant]
    try:
        yield
    finally:
        compiled.nb_kkt, compiled.nb_ortho = saved


def random_problem(n, m, seed):
    """(M, h, τ, Φ, bias) as tests/test_dynamics.py builds them: M = AAᵀ + nI, Φ Gaussian."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n))
    M = A @ A.T + n * np.eye(n)
    return M, rng.standard_normal(n), rng.standard_normal(n), rng.standard_normal((m, n)), rng.standard_normal(m)


def slider_crank_problem(seed):
    """(M, h, τ, Φ, bias) of the slider-crank at its assembled initial state, τ random."""
    asm = mechanisms.slider_crank().assemble()
    state = asm.initial_state()
    T = asm.terms(state.t, state.q, state.v)
    tau = np.random.default_rng(seed).standard_normal(asm.n_dofs)
    return T.M, T.h, tau, T.Phi, T.bias


def problems(seed):
    out = {f"random {n}x{m}": random_problem(n, m, seed + n) for n, m in RANDOM_SIZES}
    out["slider-crank"] = slider_crank_problem(seed)
    return out


# ---------------------------------------------------------------------------- checks and timing


def check_agreement(probs, methods, tol):
    """Largest relative difference of a and λ of (b) and (c) to (a), every problem, method and inertia
    kind; raises when a variant leaves the fast route or differs by more than ``tol``."""
    worst = 0.0
    for name, (M, h, tau, Phi, bias) in probs.items():
        for method in methods:
            for kind in INERTIA_KINDS if method == "projection" else ("Mc",):
                results = {}
                for variant in VARIANTS:
                    with kernels(variant):
                        r = compiled.forward_fast(M, h, tau, Phi, bias, method, None, None, kind, None)
                    if r is None:
                        raise SystemExit(f"{variant} declined {name} {method}/{kind}")
                    results[variant] = r
                ref = results["hand-written"]
                for variant, r in results.items():
                    err = max(rel(r.a, ref.a), rel(r.lam, ref.lam))
                    if err > tol:
                        raise SystemExit(f"{variant} differs from hand-written on {name} {method}/{kind}: {err:.1e}")
                    worst = max(worst, err)
    return worst


def time_row(problem, method, rounds, min_time):
    """{variant: [µs per call per round]} for forward(*problem, method=method), variants interleaved."""
    M, h, tau, Phi, bias = problem
    call = lambda: forward(M, h, tau, Phi, bias, method=method)  # noqa: E731
    names = list(VARIANTS)
    with kernels("hand-written"):
        loops = loops_for(call, min_time)
    samples = {v: [] for v in names}
    for r in range(rounds):
        for variant in names[r % len(names) :] + names[: r % len(names)]:
            with kernels(variant):
                call()
                samples[variant].append(1e6 * batch_seconds(call, loops) / loops)
    return samples


def first_call_seconds(probs, methods):
    """{variant: wall time of its first calls}: compilation for the kernels of this file (not cached on
    disk), loading from numba's cache for compiled.py's."""
    M, h, tau, Phi, bias = probs["random 3x2"]
    out = {}
    for variant in VARIANTS:
        start = time.perf_counter()
        with kernels(variant):
            for method in methods:
                for kind in INERTIA_KINDS if method == "projection" else ("Mc",):
                    compiled.forward_fast(M, h, tau, Phi, bias, method, None, None, kind, None)
        out[variant] = time.perf_counter() - start
    return out


# ---------------------------------------------------------------------------- main
def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=21, help="interleaved rounds; medians are reported")
    p.add_argument("--min-time", type=float, default=0.02, help="minimum duration of one batch (s)")
    p.add_argument("--quick", action="store_true", help="5 rounds of >= 5 ms batches (a smoke run)")
    p.add_argument("--seed", type=int, default=40, help="seed of the random problems")
    p.add_argument("--agree-tol", type=float, default=1e-10, help="largest relative difference of a and λ")
    p.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    args = p.parse_args(argv)
    if args.quick:
        args.rounds, args.min_time = 5, 0.005

    nb.set_num_threads(1)
    import scipy

    print(
        f"numpy {np.__version__}   scipy {scipy.__version__}   numba {nb.__version__}   "
        f"Python {sys.version.split()[0]}   CPUs: {os.cpu_count()}   numba threads: {nb.get_num_threads()}   "
        f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}"
    )
    probs = problems(args.seed)
    first = first_call_seconds(probs, args.methods)
    print(
        "first calls (compilation, or numba's cache for compiled.py): "
        + ", ".join(f"{v} {t:.1f} s" for v, t in first.items())
    )
    worst = check_agreement(probs, args.methods, args.agree_tol)
    print(f"agreement with hand-written (a, λ; every method and inertia kind): max rel. diff {worst:.1e}")
    print(
        f"µs per forward() call, median of {args.rounds} interleaved rounds of >= {args.min_time} s batches; "
        f"ratio = median over rounds of variant / hand-written\n"
    )

    header = (
        "problem",
        "n",
        "m",
        "method",
        "(a) hand [µs]",
        "(b′) chol [µs]",
        "(b) numba [µs]",
        "(c) scipy [µs]",
        "b′/a",
        "b/a",
        "c/a",
    )
    widths = (14, 3, 3, 10, 13, 14, 14, 14, 5, 5, 5)
    line = lambda cells: "  ".join(f"{c!s:>{w}}" for c, w in zip(cells, widths))  # noqa: E731
    print(line(header))
    print(line(["-" * w for w in widths]))
    gc_was_enabled = gc.isenabled()
    gc.disable()
    ratios = {v: [] for v in VARIANTS}
    try:
        for name, problem in probs.items():
            n, m = problem[0].shape[0], problem[3].shape[0]
            for method in args.methods:
                s = {v: np.array(t) for v, t in time_row(problem, method, args.rounds, args.min_time).items()}
                ref = s["hand-written"]
                r = {v: float(np.median(t / ref)) for v, t in s.items()}
                for v in VARIANTS:
                    ratios[v].append(r[v])
                print(
                    line(
                        [name, n, m, method]
                        + [f"{np.median(t):.2f}" for t in s.values()]
                        + [f"{r[v]:.2f}" for v in list(VARIANTS)[1:]]
                    ),
                    flush=True,
                )
    finally:
        if gc_was_enabled:
            gc.enable()
    print()
    for v in list(VARIANTS)[1:]:
        x = ratios[v]
        print(
            f"{v:>15} / hand-written over all rows: min {min(x):.2f}, median {np.median(x):.2f}, "
            f"max {max(x):.2f}; rows within 1.1x: {sum(1 for y in x if y <= 1.1)} of {len(x)}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
