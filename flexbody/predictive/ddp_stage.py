"""One stage of differential dynamic programming, compiled once and used by both routes of
:func:`~flexbody.predictive.solve_ddp` (a lone rigid tree's sweeps in :mod:`flexbody.predictive.tree_sweeps`, and the
stage-by-stage sweeps of any other model in :mod:`flexbody.predictive.ddp`): the symplectic Euler step and its
derivatives, the feedback law of the forward pass, the residuals' terms, their Gauss–Newton sums and the Riccati step
of the backward pass (the formulas of :mod:`flexbody.predictive.ddp`'s docstring).

Every function writes into arrays it is given (float64, C-contiguous); x = (q, v) (2n,), u (k,), τ = Sᵀu.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ..linalg.dense_kernels import FM, cho_solve, cholesky_in_place, dot, lsolve_rows

__all__ = [
    "euler_step",
    "euler_derivatives",
    "feedback_input",
    "difference_terms",
    "gauss_newton_add",
    "residual_cost",
    "riccati_scratch",
    "riccati_step",
]


@nb.njit(cache=True)
def euler_step(x, a, dt, out):
    """out (2n,) ← the symplectic Euler step of x = (q, v) with accelerations a (n,): v⁺ = v + dt a, q⁺ = q + dt v⁺."""
    n = a.shape[0]
    for i in range(n):
        v = x[n + i] + dt * a[i]
        out[n + i] = v
        out[i] = x[i] + dt * v


@nb.njit(cache=True)
def euler_derivatives(A_q, A_v, B, dt, Fx, Fu):
    """Fx (2n, 2n) and Fu (2n, k) of :func:`euler_step` from ∂a/∂q, ∂a/∂v (n, n) and B = ∂a/∂u = ∂a/∂τ Sᵀ (n, k):
    Fx = [[I + dt²A_q, dt I + dt²A_v], [dt A_q, I + dt A_v]], Fu = [dt² B; dt B]."""
    n = A_q.shape[0]
    for i in range(n):
        for j in range(n):
            eye = 1.0 if i == j else 0.0
            Fx[n + i, j] = dt * A_q[i, j]
            Fx[n + i, n + j] = eye + dt * A_v[i, j]
            Fx[i, j] = eye + dt * Fx[n + i, j]
            Fx[i, n + j] = dt * Fx[n + i, n + j]
        for j in range(B.shape[1]):
            Fu[n + i, j] = dt * B[i, j]
            Fu[i, j] = dt * Fu[n + i, j]


@nb.njit(cache=True)
def feedback_input(u_bar, k, K, x, x_bar, alpha, out):
    """out (k,) ← ū + α k + K (x − x̄): the forward pass's input at a stage."""
    for i in range(u_bar.shape[0]):
        s = u_bar[i] + alpha * k[i]
        for j in range(x.shape[0]):
            s += K[i, j] * (x[j] - x_bar[j])
        out[i] = s


@nb.njit(cache=True)
def difference_terms(y, reference, r, r_y):
    """r = y − reference (m,) and its Jacobian r_y = I (m, m) (the state and input residuals)."""
    for i in range(y.shape[0]):
        r[i] = y[i] - reference[i]
        for j in range(y.shape[0]):
            r_y[i, j] = 1.0 if i == j else 0.0


@nb.njit(cache=True)
def residual_cost(weight, r):
    """w ½‖r‖²."""
    s = 0.0
    for i in range(r.shape[0]):
        s += r[i] * r[i]
    return 0.5 * weight * s


@nb.njit(cache=True)
def gauss_newton_add(w, r, r_x, r_u, lx, lu, lxx, luu, lux, inputs):
    """Add a residual's w ½‖r‖² to the stage's derivatives: lx += w r_xᵀr, lxx += w r_xᵀr_x and, with ``inputs``,
    lu += w r_uᵀr, luu += w r_uᵀr_u, lux += w r_uᵀr_x (the Gauss–Newton Hessians)."""
    _gemv(w, r_x, r, lx, True)
    _gemm(w, r_x, r_x, 1.0, lxx, True)
    if inputs:
        _gemv(w, r_u, r, lu, True)
        _gemm(w, r_u, r_u, 1.0, luu, True)
        _gemm(w, r_u, r_x, 1.0, lux, True)


def riccati_scratch(n_states: int, n_inputs: int) -> tuple:
    """The work arrays of :func:`riccati_step` for 2n = ``n_states`` and k = ``n_inputs``, made once per sweep."""
    nx, m = n_states, n_inputs
    shapes = [nx, m, m, (nx, nx), (nx, m), (nx, nx), (m, nx), (m, m), (m, m), (m, nx)]  # Qx, Qu, Q_uu k, VF, VF_u, …
    return tuple(np.zeros(shape) for shape in shapes)


@nb.njit(cache=True)
def riccati_step(Fx, Fu, lx, lu, lxx, luu, lux, Vx, Vxx, mu, k, K, scratch):
    """One backward step: from the next stage's value derivatives Vx (2n,), Vxx (2n, 2n) (overwritten by this
    stage's) and this stage's Fx, Fu and cost terms, the gains k (k,), K (k, 2n) with Q_uu + μI (``scratch`` of
    :func:`riccati_scratch`). Returns (ok, ‖Q_u‖², k·Q_u, ½ kᵀQ_uu k); ok False (Vx, Vxx not written) when Q_uu + μI is
    not positive definite."""
    Qx, Qu, Quu_k, VF, VFu, Qxx, Qux, Quu, L, G = scratch
    m = lu.shape[0]
    _gemm(1.0, Vxx, Fx, 0.0, VF, False)
    _gemm(1.0, Vxx, Fu, 0.0, VFu, False)
    Qx[:], Qu[:], Qxx[:, :], Qux[:, :], Quu[:, :] = lx, lu, lxx, lux, luu
    _gemv(1.0, Fx, Vx, Qx, True)
    _gemv(1.0, Fu, Vx, Qu, True)
    _gemm(1.0, Fx, VF, 1.0, Qxx, True)
    _gemm(1.0, Fu, VF, 1.0, Qux, True)
    _gemm(1.0, Fu, VFu, 1.0, Quu, True)
    L[:, :] = Quu
    for i in range(m):
        L[i, i] += mu
    if not cholesky_in_place(L):
        return False, 0.0, 0.0, 0.0
    for i in range(m):
        k[i] = -Qu[i]
    cho_solve(L, k)
    for i in range(m):
        for j in range(K.shape[1]):
            K[i, j] = -Qux[i, j]
    _cho_solve_rows(L, K)
    Quu_k[:] = 0.0
    _gemv(1.0, Quu, k, Quu_k, False)
    G[:, :] = Qux  # Q_uu K + Q_ux: V_xx = Q_xx + KᵀG + Q_uxᵀK, V_x = Q_x + Kᵀ(Q_uu k + Q_u) + Q_uxᵀk
    _gemm(1.0, Quu, K, 1.0, G, False)
    Vx[:] = Qx
    _gemv(1.0, K, Quu_k, Vx, True)
    _gemv(1.0, K, Qu, Vx, True)
    _gemv(1.0, Qux, k, Vx, True)
    Vxx[:, :] = Qxx
    _gemm(1.0, K, G, 1.0, Vxx, True)
    _gemm(1.0, Qux, K, 1.0, Vxx, True)
    for i in range(Vxx.shape[0]):
        for j in range(i):
            mean = 0.5 * (Vxx[i, j] + Vxx[j, i])
            Vxx[i, j] = Vxx[j, i] = mean
    return True, dot(Qu, Qu), dot(k, Qu), 0.5 * dot(k, Quu_k)


SMALL = 100_000
"""Multiply–adds below which a product runs in the loops here (BLAS's call and numba's temporary cost more than the
arithmetic of a small one); larger products go to BLAS."""


@nb.njit(cache=True, fastmath=FM)
def _gemm(alpha, A, B, beta, C, transpose_a):
    """C ← β C + α op(A) B, op(A) = Aᵀ with ``transpose_a``, else A (2-D arrays; a zero entry of A skipped, as the
    residuals' identity and zero blocks have many). Indexed in two dimensions throughout: numba's row views cost more
    than a small product's arithmetic."""
    rows, inner, columns = C.shape[0], B.shape[0], C.shape[1]
    if rows * inner * columns > SMALL:
        product = alpha * (np.dot(A.T, B) if transpose_a else np.dot(A, B))
        C[:, :] = product if beta == 0.0 else beta * C + product
        return
    if beta != 1.0:
        for i in range(rows):
            for j in range(columns):
                C[i, j] = 0.0 if beta == 0.0 else beta * C[i, j]  # β = 0 overwrites (C may hold NaN)
    if transpose_a:
        for l in range(inner):
            for i in range(rows):
                a = alpha * A[l, i]
                if a != 0.0:
                    for j in range(columns):
                        C[i, j] += a * B[l, j]
    else:
        for i in range(rows):
            for l in range(inner):
                a = alpha * A[i, l]
                if a != 0.0:
                    for j in range(columns):
                        C[i, j] += a * B[l, j]


@nb.njit(cache=True, fastmath=FM)
def _gemv(alpha, A, x, y, transpose_a):
    """y ← y + α op(A) x (op as :func:`_gemm`)."""
    if transpose_a:
        for l in range(A.shape[0]):
            a = alpha * x[l]
            if a != 0.0:
                for j in range(y.shape[0]):
                    y[j] += a * A[l, j]
    else:
        for i in range(A.shape[0]):
            s = 0.0
            for j in range(x.shape[0]):
                s += A[i, j] * x[j]
            y[i] += alpha * s


@nb.njit(cache=True, fastmath=FM)
def _cho_solve_rows(L, B):
    """B (m, c) ← (L Lᵀ)⁻¹ B by row operations (L lower, m × m)."""
    lsolve_rows(L, B)
    for i in range(L.shape[0] - 1, -1, -1):
        Bi = B[i]
        for l in range(i + 1, L.shape[0]):
            c = L[l, i]
            Bl = B[l]
            for j in range(Bi.shape[0]):
                Bi[j] -= c * Bl[j]
        r = 1.0 / L[i, i]
        for j in range(Bi.shape[0]):
            Bi[j] *= r
