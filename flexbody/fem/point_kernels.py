"""Gauss-point kernels of the element routines of :mod:`flexbody.fem.kernels` [DE-104]: the deformation gradient,
the St. Venant–Kirchhoff and Kelvin–Voigt stresses and the moduli contracted with F.

At a Gauss point with absolute nodal positions x_a and reference gradients G_a = ∂N_a/∂X,

    F = Σ_a x_a ⊗ G_a,    Ḟ = Σ_a v_a ⊗ G_a,
    S_SVK = λ tr(E) I + 2μ E,  E = (FᵀF − I)/2,    S += β D⁰ : Ė,  Ė = sym(Fᵀ Ḟ)   (Kelvin–Voigt),
    A_LNij += Σ_KM F_iK D_KLMN F_jM                                  (D isotropic: λ, μ written out),

the terms of the element Jacobian K_ab,ij = Σ_g w_g Σ_LN G_aL A_LNij G_bN. All are inlined into their callers.
"""

from __future__ import annotations

import numba as nb


@nb.njit(cache=True, inline="always")
def deformation_gradient(xe, Gg, n, F):
    """F_iK = Σ_a x_ai G_aK over the first n nodes."""
    for i in range(3):
        for k in range(3):
            s = 0.0
            for a in range(n):
                s += xe[a, i] * Gg[a, k]
            F[i, k] = s


@nb.njit(cache=True, inline="always")
def add_viscous_stress(F, Fd, beta, lam0, mu0, S):
    """S += β D⁰ : Ė with Ė = sym(Fᵀ Ḟ) (Kelvin–Voigt)."""
    tr = 0.0
    for k in range(3):
        tr += F[0, k] * Fd[0, k] + F[1, k] * Fd[1, k] + F[2, k] * Fd[2, k]
    for i in range(3):
        for j in range(3):
            ed = 0.5 * (
                F[0, i] * Fd[0, j]
                + F[1, i] * Fd[1, j]
                + F[2, i] * Fd[2, j]
                + Fd[0, i] * F[0, j]
                + Fd[1, i] * F[1, j]
                + Fd[2, i] * F[2, j]
            )
            S[i, j] += beta * 2.0 * mu0 * ed
        S[i, i] += beta * lam0 * tr


@nb.njit(cache=True, inline="always")
def add_isotropic_A(F1, F2, lam, mu, scale, A):
    """A_LNij += scale [λ F1_iL F2_jN + μ (δ_LN (F1 F2ᵀ)_ij + F1_iN F2_jL)] (isotropic D contracted)."""
    for L in range(3):
        for N in range(3):
            for i in range(3):
                for j in range(3):
                    v = lam * F1[i, L] * F2[j, N] + mu * F1[i, N] * F2[j, L]
                    if L == N:
                        v += mu * (F1[i, 0] * F2[j, 0] + F1[i, 1] * F2[j, 1] + F1[i, 2] * F2[j, 2])
                    A[L, N, i, j] += scale * v


@nb.njit(cache=True, inline="always")
def add_general_A(F, D, scale, A, T):
    """A_LNij += scale Σ_KM F_iK D_KLMN F_jM; T (3, 3, 3, 3) is scratch."""
    for L in range(3):
        for M in range(3):
            for N in range(3):
                for i in range(3):
                    s = 0.0
                    for K in range(3):
                        s += F[i, K] * D[K, L, M, N]
                    T[L, M, N, i] = s
    for L in range(3):
        for N in range(3):
            for i in range(3):
                for j in range(3):
                    s = 0.0
                    for M in range(3):
                        s += T[L, M, N, i] * F[j, M]
                    A[L, N, i, j] += scale * s


@nb.njit(cache=True, inline="always")
def svk_stress(lam, mu, F, S):
    """St. Venant–Kirchhoff S = λ tr(E) I + 2μE, E = (FᵀF − I)/2, written out for the force kernel."""
    c00 = F[0, 0] * F[0, 0] + F[1, 0] * F[1, 0] + F[2, 0] * F[2, 0]
    c11 = F[0, 1] * F[0, 1] + F[1, 1] * F[1, 1] + F[2, 1] * F[2, 1]
    c22 = F[0, 2] * F[0, 2] + F[1, 2] * F[1, 2] + F[2, 2] * F[2, 2]
    c01 = F[0, 0] * F[0, 1] + F[1, 0] * F[1, 1] + F[2, 0] * F[2, 1]
    c02 = F[0, 0] * F[0, 2] + F[1, 0] * F[1, 2] + F[2, 0] * F[2, 2]
    c12 = F[0, 1] * F[0, 2] + F[1, 1] * F[1, 2] + F[2, 1] * F[2, 2]
    tr = 0.5 * lam * (c00 + c11 + c22 - 3.0)
    S[0, 0] = mu * (c00 - 1.0) + tr
    S[1, 1] = mu * (c11 - 1.0) + tr
    S[2, 2] = mu * (c22 - 1.0) + tr
    S[0, 1] = S[1, 0] = mu * c01
    S[0, 2] = S[2, 0] = mu * c02
    S[1, 2] = S[2, 1] = mu * c12
