"""Dense constrained forward dynamics by compiled kernels: the fast route of :func:`flexbody.dynamics.forward`
for float64 ndarrays with m ≥ 1 — Cholesky factors of M and of ΦM⁻¹Φᵀ for "multiplier"/"gauss" [DE-7, DE-34],
and for "nullspace"/"projection" a Householder QR of Φᵀ in place of the SVD when Φ is certified to have full
row rank and to be well conditioned [DE-10..15, AG-22..29]. Any other case, and any kernel that declines,
goes to the reference route, which makes every rank decision and raises every error.

Dense factorisations, hand-written against LAPACK (``tests/benchmarks/bench_dense_factorisations.py``: µs
per ``forward`` call, one thread, median of 21 interleaved rounds, 2-core machine that may have been loaded;
LAPACK/hand-written). Rule: LAPACK unless the hand-written factorisation is faster by more than 10 %.
A mass matrix with the branch-induced sparsity of a tree (under half of a dense factor) is factored
along its branches by the hand-written LᵀL of :mod:`flexbody.linalg.tree_factor` for "multiplier"/"gauss"
(34-dof, 4-branch tree with 12 rows: 10.5 → 6.7 µs per kernel call). Otherwise the Cholesky factors are
LAPACK's potrf (numba's ``np.linalg.cholesky``): 4.68/4.48 µs (1.04) at
(n, m) = (3, 2), 4.73/4.49 (1.05) on the slider-crank (2, 1), 5.66/5.77 (0.98) at (12, 5) and 13.01/14.77
(0.88) at (34, 12) for "multiplier" ("gauss" alike), 14.95/16.60 (0.90) for "nullspace" at (34, 12). The
Householder QR of Φᵀ and the LU of M_c stay hand-written: with numba's ``np.linalg.qr``/``solve`` in their
place "nullspace"/"projection" take 1.04–1.12× at n ≤ 3, 1.23–1.26× at (12, 5) and 1.13–1.57× at (34, 12)
(numba's qr has no complete mode, so the basis of ker Φ costs the QR of an n × n matrix). The same algebra
through ``scipy.linalg.lapack`` from Python takes 3.0–8.0× (32–69 µs). The certification rules
(_FAST_MIN_PIVOT and those of :mod:`flexbody.linalg.dense_kernels`) are unchanged; potrf declines at a
non-positive pivot, as the hand-written factorisation did. The dense algebra (Cholesky, triangular solves, LU, the
certified Householder QR of Φᵀ) is that of :mod:`flexbody.linalg.dense_kernels`, shared with the rank tools.
"""

from __future__ import annotations

from math import isfinite

import numba as nb
import numpy as np

from ..errors import ConstraintError
from ..linalg.dense_kernels import (
    FM,
    axpy,
    certified_row_factor,
    cho_solve,
    cholesky,
    dot,
    lsolve_rows,
    ltsolve,
    lu_solve,
    q_transpose,
    usolve,
    utsolve,
)
from ..linalg.rank import DEFAULT_ATOL, DEFAULT_RTOL, resolve_tolerances
from ..linalg.tree_factor import ltl_factor, ltl_lower_solve, ltl_transposed_solve_rows, tree_parents
from .results import INERTIA_KINDS, METHODS, ForwardResult

# ------------------------------------------------------------------------- dense fast path (numba)
# Small dense problems are dominated by per-call overhead (validation, scipy wrappers, and LAPACK SVD
# drivers that take ~20 µs even for a 12×34 Φ), so forward() first tries one numba kernel per method
# family (its Cholesky factors by LAPACK through numba's np.linalg, no Python in between). A kernel checks
# finiteness and returns a status; on any status but FAST_OK the reference route below runs from scratch,
# so every error (with its message naming the culprit or the dependent rows) and every borderline rank
# decision comes from the reference code.
# Inner loops run over zero-based ranges of 1-D row views: numba then needs no negative-index
# wraparound and LLVM vectorises them (2-D indexing from a non-zero start is scalar code).
FAST_OK, _FAST_BAD_INPUT, _FAST_FAILED = 0, 1, 2
FAST_MODES = {"nullspace": 0, "Mc": 1, "symmetric": 2, "gamma": 3}
_FLOAT64 = np.dtype(np.float64)
_FAST_MIN_PIVOT = 1e-6
"""Smallest relative Schur pivot (sin² of a row's M⁻¹-angle to the earlier rows) the multiplier/Gauss
kernel accepts; also ≥ 2·rtol. Below it (nearly dependent rows) the reference route decides and solves,
so that round-off alone (∝ the conditioning of ΦM⁻¹Φᵀ) never makes the two routes differ noticeably."""


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


@nb.njit(cache=True, inline="always")
def _outputs(out, n, m):
    """(a (n,), Φᵀλ (n,), λ (m,)): zeroed views of the flat output ``out`` (2n + m,) of a kernel below. One array
    the caller makes and slices costs less than three arrays a kernel returns (each is boxed on return)."""
    out[:] = 0.0
    return out[:n], out[n : 2 * n], out[2 * n :]


@nb.njit(cache=True, fastmath=FM)
def nb_kkt(M, h, tau, Phi, bias, rtol, atol, out):
    """Dense "multiplier" and "gauss" forward dynamics for m ≥ 1 (Cholesky factors only).

    M = LLᵀ, Yt = (L⁻¹Φᵀ)ᵀ (m, n), S = ΦM⁻¹Φᵀ = Yt Ytᵀ = H⁻¹ [DE-34], S = LsLsᵀ with the checks of
    :func:`~flexbody.dynamics.schur.schur_factor` made stricter (pivot² > max(2·rtol, _FAST_MIN_PIVOT)·S_ii,
    ‖Φ_i‖² > 2·atol²),
    so that the reference route decides every borderline case. With w = L⁻¹(τ − h), a_u = L⁻ᵀw [DE-22]
    and Φ a_u = Yt w: λ = −S⁻¹(Φ a_u + bias) [DE-33, MH-12..15] and a = a_u + M⁻¹Φᵀλ = L⁻ᵀ(w + Ytᵀλ).
    The Gauss form a = a_u − Φ̄(Φ a_u + bias) [DE-30] with Φ̄ = M⁻¹ΦᵀS⁻¹ [DE-28] applied as an operator
    is the same sequence of solves, so both methods share this kernel.
    When M has the branch-induced sparsity of a tree (:mod:`flexbody.linalg.tree_factor`) covering under
    half of a dense factor, M = LᵀL is factored along the branches instead and every L⁻¹ above reads L⁻ᵀ
    (and L⁻ᵀ reads L⁻¹): the same algebra in O(Σ depth²) (Featherstone's LTL, RBDA §6.5).
    Writes (a, Φᵀλ, λ) end to end into ``out`` (2n + m,) (:func:`_outputs`) and returns the status;
    _FAST_FAILED when M is not SPD or a check fails.
    """
    n, m = M.shape[0], Phi.shape[0]
    a, force, lam = _outputs(out, n, m)
    if not _nb_finite(M, h, tau, Phi, bias):
        return _FAST_BAD_INPUT
    for k in range(m):
        if not dot(Phi[k], Phi[k]) > 2.0 * atol * atol:  # a (numerically) zero row of Φ
            return _FAST_FAILED
    tree, parent, entries = tree_parents(M)  # branch-induced sparsity of a tree's M
    sparse = tree and 4 * entries < n * (n - 1)  # under half the entries of a dense factor
    if sparse:
        ok, L = ltl_factor(M, parent)  # M = LᵀL: the same algebra with L⁻ᵀ for L⁻¹
    else:
        ok, L = cholesky(M)  # M = LLᵀ (M's lower triangle)
    if not ok:
        return _FAST_FAILED
    B = np.empty((n, m + 1))  # [Φᵀ | τ − h] → L⁻¹[Φᵀ | τ − h] = [Ytᵀ | w]
    for i in range(n):
        Bi = B[i]
        for k in range(m):
            Bi[k] = Phi[k, i]
        Bi[m] = tau[i] - h[i]
    if sparse:
        ltl_transposed_solve_rows(L, parent, B)
    else:
        lsolve_rows(L, B)
    G = np.dot(B.T, B)  # [[S, Φ a_u], [., .]], S = Yt Ytᵀ
    S = G[:m, :m].copy()
    ok, Ls = cholesky(S)
    if not ok:
        return _FAST_FAILED
    floor = max(2.0 * rtol, _FAST_MIN_PIVOT)  # margins over schur_factor's test
    for k in range(m):
        if not Ls[k, k] * Ls[k, k] > floor * S[k, k]:
            return _FAST_FAILED
    for k in range(m):  # λ = −S⁻¹(Φ a_u + bias)
        lam[k] = -(G[k, m] + bias[k])
    cho_solve(Ls, lam)
    for i in range(n):  # a = L⁻ᵀ(w + Ytᵀλ)
        a[i] = B[i, m] + dot(B[i, :m], lam)
    if sparse:
        ltl_lower_solve(L, parent, a)
    else:
        ltsolve(L, a)
    for k in range(m):  # Φᵀλ
        axpy(-lam[k], Phi[k], force)
    return FAST_OK


@nb.njit(cache=True, fastmath=FM)
def _nb_constraint_inertia(M, Qt, f, a_perp, mode, gamma):
    """The constraint inertia M_c (mode 1), M_c′ (2) or M_c″(γ) (3) with P = I − Q₁Q₁ᵀ = I − A⁺A [AG-15]
    and the right side of M_c a = P(τ − h) + C_c q̇ [AG-25] (f = τ − h, a_perp = −A⁺ bias)."""
    n = M.shape[0]
    if mode == 1:  # M_c = M + PM − (PM)ᵀ  [AG-23, 24]
        PM = M - np.dot(Qt.T, np.dot(Qt, M))
        Mc = np.empty((n, n))
        for i in range(n):
            for j in range(n):
                Mc[i, j] = M[i, j] + PM[i, j] - PM[j, i]
        return Mc, f - np.dot(Qt.T, np.dot(Qt, f)) + np.dot(M, a_perp)  # P(τ − h) + M C q̇  [AG-22, 25]
    P = -np.dot(Qt.T, Qt)
    for i in range(n):
        P[i, i] += 1.0
    if mode == 2:  # M_c′ = PMP + (I−P)M(I−P)  [AG-28]
        Q = -P
        for i in range(n):
            Q[i, i] += 1.0
        Mc = np.dot(np.dot(P, M), P) + np.dot(np.dot(Q, M), Q)
        cc = np.dot(Q - P, np.dot(M, a_perp))
    else:  # M_c″ = PM + γ(I − P)  [AG-29]
        Mc = np.dot(P, M) - gamma * P
        for i in range(n):
            Mc[i, i] += gamma
        cc = gamma * a_perp
    return Mc, np.dot(P, f) + cc  # [AG-25]


@nb.njit(cache=True, fastmath=FM)
def nb_ortho(M, h, tau, Phi, bias, rtol, atol, mode, gamma, out):
    """Dense "nullspace" (mode 0) and "projection" (mode 1 M_c, 2 M_c′, 3 M_c″) forward dynamics for
    1 ≤ m ≤ n and Φ of certified full row rank, from the Householder QR Φᵀ = Q₁R instead of an SVD
    (:func:`flexbody.linalg.dense_kernels.certified_row_factor`, then :func:`_nb_ortho_factored`), into ``out``
    (:func:`_outputs`). Returns the status; _FAST_FAILED when the rank is not certified or a factorization fails
    (the SVD route then decides)."""
    n, m = M.shape[0], Phi.shape[0]
    if not _nb_finite(M, h, tau, Phi, bias):
        return _FAST_BAD_INPUT
    if m > n:
        return _FAST_FAILED
    V, beta, R = np.empty((m, n)), np.empty(m), np.empty((m, m))
    if not certified_row_factor(Phi, rtol, atol, V, beta, R, np.empty((m, m))):
        return _FAST_FAILED
    return _nb_ortho_factored(M, h, tau, bias, V, beta, R, mode, gamma, out)


@nb.njit(cache=True, fastmath=FM)
def _nb_ortho_given(M, h, tau, Phi, bias, V, beta, R, mode, gamma, out):
    """:func:`nb_ortho` with the certified QR of Φᵀ given (V, β, R), after the same check of the inputs."""
    if not _nb_finite(M, h, tau, Phi, bias):
        return _FAST_BAD_INPUT
    return _nb_ortho_factored(M, h, tau, bias, V, beta, R, mode, gamma, out)


@nb.njit(cache=True, fastmath=FM)
def _nb_ortho_factored(M, h, tau, bias, V, beta, R, mode, gamma, out):
    """The "nullspace"/"projection" forward dynamics of :func:`nb_ortho` from a certified QR of Φᵀ given by its
    Householder vectors V (m, n), β (m,) and triangle R (m, m) (a workspace's, shared with the velocity
    projection and the controller), into ``out`` (:func:`_outputs`); returns the status.

    With full rank, V_r spans the columns of Q₁ (n, m): P = I − Q₁Q₁ᵀ [AG-15], A⁺ = Q₁R⁻ᵀ, the
    minimum-norm (here unique) λ = A⁺ᵀ·force = R⁻¹Q₁ᵀ·force [AG-18], and the trailing n − m columns of
    Q are an orthonormal basis C of ker Φ [DE-11]. The formulas are then those of :func:`_nullspace` and
    :func:`~flexbody.dynamics.projection.projection_dense`."""
    n, m = M.shape[0], bias.shape[0]
    a, force, lam = _outputs(out, n, m)
    QT = q_transpose(V, beta, mode == 0)
    Qt = QT[:m]  # Q₁ᵀ (m, n): Φᵀ = Q₁R
    y = bias.copy()  # R⁻ᵀ bias
    utsolve(R, y)
    a_perp = -np.dot(Qt.T, y)  # −A⁺ bias = C q̇  [AG-16]
    f = tau - h
    if mode == 0:  # ---- nullspace [DE-10..15]
        Ct = QT[m:]  # Cᵀ (n − m, n): ΦC = 0, CᵀC = I
        ok, Lp = cholesky(np.dot(np.dot(Ct, M), Ct.T))  # CᵀMC  [DE-15]
        if not ok:
            return _FAST_FAILED
        z = np.dot(Ct, f - np.dot(M, a_perp))  # Cᵀ(τ − h − M a_p)
        cho_solve(Lp, z)
        a[:] = a_perp + np.dot(Ct.T, z)
    else:  # ---- projection [AG-22..29]
        Mc, rhs = _nb_constraint_inertia(M, Qt, f, a_perp, mode, gamma)
        a[:] = rhs
        solved = False
        if mode == 2:  # M_c′ is SPD [AG Prop. 1]
            ok, Lc = cholesky(Mc)
            if ok:
                cho_solve(Lc, a)
                solved = True
        if not solved and not lu_solve(Mc, a):
            return _FAST_FAILED
    u = np.dot(Qt, np.dot(M, a) - f)  # Q₁ᵀ(M a + h − τ)
    force[:] = np.dot(Qt.T, u)  # Φᵀλ = (I − P)(M a + h − τ)  [AG-32]
    lam[:] = u  # λ = R⁻¹Q₁ᵀ force = R⁻¹u
    usolve(R, lam)
    return FAST_OK


def forward_into(M, h, tau, Phi, bias, method, rtol, atol, inertia, gamma, rows, out) -> int:
    """The kernel of ``method`` on dense terms with the argument types the kernels are compiled for (a workspace's
    read-only M, h, Φ, bias; a writeable τ and ``out``), writing a, Φᵀλ, λ into ``out`` (2n + m,); its status
    (:data:`FAST_OK` or not). ``rows``: a certified QR of this Φ with the same tolerances, or None; M_c″ without a
    usable γ (zero or not finite) is _FAST_FAILED, which leaves it to the reference route."""
    if method == "multiplier" or method == "gauss":
        return nb_kkt(M, h, tau, Phi, bias, rtol, atol, out)
    mode = 0 if method == "nullspace" else FAST_MODES[inertia]
    g = 0.0
    if mode == 3:
        try:
            g = float(np.trace(M)) / M.shape[0] if gamma is None else float(gamma)
        except (TypeError, ValueError):
            return _FAST_FAILED
        if g == 0.0 or not isfinite(g):  # M_c″ singular or undefined
            return _FAST_FAILED
    factored = getattr(rows, "householder", None)
    if factored is not None and rows.rtol == rtol and rows.atol == atol:  # the certified QR of this Φ, made once
        return _nb_ortho_given(M, h, tau, Phi, bias, *factored, rows.R, mode, g, out)
    return nb_ortho(M, h, tau, Phi, bias, rtol, atol, mode, g, out)


def _read_only(x: np.ndarray) -> np.ndarray:
    """``x`` when it is read-only, else a read-only view of it. The kernels are compiled for the arguments of the
    common call, a workspace's kept terms (read-only) with the caller's τ (writeable); numba specialises a kernel for
    every mix of writeable and read-only arguments, so other calls are brought to that mix (a fresh clone's tests
    compiled 7 variants, about 47 s of CPU)."""
    if not x.flags.writeable:
        return x
    view = x.view()
    view.flags.writeable = False
    return view


def forward_fast(M, h, tau, Phi, bias, method, rtol, atol, inertia, gamma, rows=None):
    """:class:`ForwardResult` of a dense problem with m ≥ 1 from a numba kernel, or None when the input
    is anything else (sparse, lists, other dtypes, wrong shapes, unknown names, NaN/Inf, bad tolerances)
    or the kernel declines (M not SPD, ΦM⁻¹Φᵀ singular or nearly so, Φ not certified well-conditioned
    and of full row rank): the reference route then runs and raises or decides exactly as before.
    Only plain comparisons are made here; finiteness is checked inside the kernel. ``rows``: a certified QR of this
    Φ made already (a workspace's :class:`~flexbody.linalg.rank.ConstraintQR`, with the same tolerances), which
    "nullspace" and "projection" use instead of factoring Φ again."""
    if not (
        type(M) is np.ndarray
        and type(Phi) is np.ndarray
        and type(h) is np.ndarray
        and type(tau) is np.ndarray
        and type(bias) is np.ndarray
    ):
        return None
    if (
        M.dtype is not _FLOAT64
        or Phi.dtype is not _FLOAT64
        or h.dtype is not _FLOAT64
        or tau.dtype is not _FLOAT64
        or bias.dtype is not _FLOAT64
        or M.ndim != 2
        or Phi.ndim != 2
    ):
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
    if (
        M.flags.writeable or h.flags.writeable or Phi.flags.writeable or bias.flags.writeable or not tau.flags.writeable
    ):  # not a workspace's kept terms with the caller's τ: the same flags as those
        M, h, Phi, bias, tau = _read_only(M), _read_only(h), _read_only(Phi), _read_only(bias), np.array(tau)
    out = np.empty(2 * n + m)  # a, Φᵀλ, λ end to end
    if forward_into(M, h, tau, Phi, bias, method, rtol, atol, inertia, gamma, rows, out) != FAST_OK:
        return None
    return ForwardResult(out[:n], out[n : 2 * n], out[2 * n :], True, m, method)  # method is one of METHODS
