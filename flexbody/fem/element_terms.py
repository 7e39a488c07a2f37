"""The terms of one hexahedral element [DE-103, DE-104]: its internal force, its Jacobians, and the block of its
enhanced modes that their local solve needs.

With nodal positions x_a and reference gradients G_a = ∂N_a/∂X at a Gauss point, F = Σ_a x_a ⊗ G_a and

    k_a = Σ_g w_g (F S) G_a,      K_ab,ij = Σ_g w_g Σ_LN G_aL A_LNij G_bN,
    A_LNij = Σ_KM F_iK D_KLMN F_jM + S_LN δ_ij + β Σ_KM F_iK D⁰_KLMN Ḟ_jM

(S the second Piola–Kirchhoff stress, elastic plus Kelvin–Voigt β D₀ : Ė; material, geometric and viscous-in-q
terms); the damping matrix ∂k/∂v uses A = β Σ F_iK D⁰_KLMN F_jM. The rows a ≥ nn of an incompatible-mode element
are its enhanced modes (:mod:`flexbody.fem.enhanced_modes`); :func:`force_and_mode_block` gives the force and only
their block K_αα (for St. Venant–Kirchhoff pair by pair, K_ab = w[λ(FG_a)(FG_b)ᵀ + μ(G_a·G_b)FFᵀ + μ(FG_b)(FG_a)ᵀ
+ (G_a·S·G_b)I] and the viscous terms alike, without the moduli A).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from .materials import SVK, pk2_stress, pk2_stress_and_moduli
from .point_kernels import add_general_A, add_isotropic_A, add_viscous_stress, deformation_gradient, svk_stress


@nb.njit(cache=True, inline="always")
def add_stress_force(F, S, w, Gg, n, fe):
    """fe_a += w (F S) G_a for the first n rows of the gradients Gg (n, 3) [DE-104] (P = F S, the first
    Piola–Kirchhoff stress)."""
    for i in range(3):
        P0 = (F[i, 0] * S[0, 0] + F[i, 1] * S[1, 0] + F[i, 2] * S[2, 0]) * w
        P1 = (F[i, 0] * S[0, 1] + F[i, 1] * S[1, 1] + F[i, 2] * S[2, 1]) * w
        P2 = (F[i, 0] * S[0, 2] + F[i, 1] * S[1, 2] + F[i, 2] * S[2, 2]) * w
        for a in range(n):
            fe[a, i] += P0 * Gg[a, 0] + P1 * Gg[a, 1] + P2 * Gg[a, 2]


@nb.njit(cache=True)
def element_force(xe, ve, Ge, we, kind, p, beta, lam0, mu0, fe, F, Fd, S, work, law=None):
    """Internal force fe (n,3) of one element: Σ_g w_g F S G_a [DE-104]; n = Ge.shape[1] (incl. enhanced)."""
    nq, n = Ge.shape[0], Ge.shape[1]
    nn = ve.shape[0]
    fe[:] = 0.0
    for g in range(nq):
        Gg = Ge[g]
        deformation_gradient(xe, Gg, n, F)
        if kind == SVK and beta == 0.0:
            svk_stress(p[0], p[1], F, S)
        else:
            pk2_stress(kind, p, F, S, work, law)
        if beta > 0.0:
            deformation_gradient(ve, Gg, nn, Fd)
            add_viscous_stress(F, Fd, beta, lam0, mu0, S)
        w = we[g]
        add_stress_force(F, S, w, Gg, n, fe)


@nb.njit(cache=True, inline="always")
def _point_terms(xe, ve, Gg, w, kind, p, beta, lam0, mu0, scratch, fe, law):
    """At one Gauss point (gradients Gg (n, 3), weight w): F, S and A = w (material + viscous-in-q + geometric)
    into ``scratch`` = (F, Fd, S, D, A, T, work), and the force w F S G_a added to fe (n, 3)."""
    F, Fd, S, D, A, T, work = scratch
    n, nn = Gg.shape[0], ve.shape[0]
    deformation_gradient(xe, Gg, n, F)
    A[:] = 0.0
    if kind == SVK:
        svk_stress(p[0], p[1], F, S)
        add_isotropic_A(F, F, p[0], p[1], w, A)
    else:
        pk2_stress_and_moduli(kind, p, F, S, D, work, law)
        add_general_A(F, D, w, A, T)
    if beta > 0.0:
        deformation_gradient(ve, Gg, nn, Fd)
        add_viscous_stress(F, Fd, beta, lam0, mu0, S)
        add_isotropic_A(F, Fd, lam0, mu0, w * beta, A)
    for L in range(3):
        for N in range(3):
            for i in range(3):
                A[L, N, i, i] += w * S[L, N]
    add_stress_force(F, S, w, Gg, n, fe)


@nb.njit(cache=True, inline="always")
def _point_scratch():
    """The work arrays of :func:`_point_terms`."""
    return (
        np.empty((3, 3)),
        np.zeros((3, 3)),
        np.empty((3, 3)),
        np.empty((3, 3, 3, 3)),
        np.empty((3, 3, 3, 3)),
        np.empty((3, 3, 3, 3)),
        np.empty((2, 3, 3)),
    )


@nb.njit(cache=True)
def element_matrices(xe, ve, Ge, we, kind, p, beta, lam0, mu0, want_damping, fe, Ke, Ce, law=None):
    """Force fe (n,3), Jacobian Ke (n,n,3,3) = ∂fe/∂x and damping Ce (n,nn,3,3) = ∂fe/∂v of one element.

    n = Ge.shape[1] counts nodes plus enhanced modes; velocities live on the first nn = ve.shape[0] nodes.
    """
    nq, n = Ge.shape[0], Ge.shape[1]
    nn = ve.shape[0]
    scratch = _point_scratch()
    F, A = scratch[0], scratch[4]
    Ac = np.empty((3, 3, 3, 3))
    t = np.empty((n, 3, 3, 3))
    symmetric = beta == 0.0
    fe[:] = 0.0
    Ke[:] = 0.0
    if want_damping:
        Ce[:] = 0.0
    for g in range(nq):
        Gg = Ge[g]
        _point_terms(xe, ve, Gg, we[g], kind, p, beta, lam0, mu0, scratch, fe, law)
        _accumulate_pairs(Gg, A, t, n, n, symmetric, Ke)
        if want_damping:
            Ac[:] = 0.0
            add_isotropic_A(F, F, lam0, mu0, we[g] * beta, Ac)
            _accumulate_pairs(Gg, Ac, t, n, nn, False, Ce)
    if symmetric:
        _mirror(Ke)


@nb.njit(cache=True)
def force_and_mode_block(xe, ve, Ge, we, kind, p, beta, lam0, mu0, fe, Kaa, law=None):
    """Force fe (n,3) of an incompatible-mode element and the block Kaa (3k, 3k) = ∂r_α/∂α of its k = n − nn
    enhanced modes (rows nn.. of fe are r_α). For St. Venant–Kirchhoff the block is summed pair by pair
    (:func:`_add_isotropic_pairs`) instead of through the moduli A; other laws take :func:`element_matrices`' route."""
    nq, n = Ge.shape[0], Ge.shape[1]
    nn = ve.shape[0]
    k = n - nn
    scratch = _point_scratch()
    F, Fd, S = scratch[0], scratch[1], scratch[2]
    t = np.empty((k, 3, 3, 3))
    pairs = np.empty((2 * k + 3, 3))
    K = np.zeros((k, k, 3, 3))
    symmetric = beta == 0.0
    fe[:] = 0.0
    for g in range(nq):
        Gg, w = Ge[g], we[g]
        if kind == SVK:
            deformation_gradient(xe, Gg, n, F)
            svk_stress(p[0], p[1], F, S)
            _add_isotropic_pairs(F, F, p[0], p[1], w, Gg[nn:], symmetric, pairs, K)
            if beta > 0.0:
                deformation_gradient(ve, Gg, nn, Fd)
                add_viscous_stress(F, Fd, beta, lam0, mu0, S)
                _add_isotropic_pairs(F, Fd, lam0, mu0, w * beta, Gg[nn:], False, pairs, K)
            _add_stress_terms(F, S, w, Gg, nn, symmetric, fe, K)
        else:
            _point_terms(xe, ve, Gg, w, kind, p, beta, lam0, mu0, scratch, fe, law)
            _accumulate_pairs(Gg[nn:], scratch[4], t, k, k, symmetric, K)
    if symmetric:
        _mirror(K)
    for a in range(k):
        for i in range(3):
            for b in range(k):
                for j in range(3):
                    Kaa[3 * a + i, 3 * b + j] = K[a, b, i, j]


@nb.njit(cache=True, inline="always")
def _add_isotropic_pairs(F1, F2, lam, mu, scale, Gk, upper_only, pairs, K):
    """K_ab += scale [λ (F1 G_a)(F2 G_b)ᵀ + μ (G_a·G_b) F1 F2ᵀ + μ (F1 G_b)(F2 G_a)ᵀ] for the rows G_a of Gk (k, 3):
    Σ_LN G_aL A_LNij G_bN of :func:`~flexbody.fem.point_kernels.add_isotropic_A`'s A, without forming A (``pairs``
    (2k + 3, 3) scratch)."""
    k = Gk.shape[0]
    f1, f2, P = pairs[:k], pairs[k : 2 * k], pairs[2 * k :]
    for a in range(k):
        for i in range(3):
            f1[a, i] = F1[i, 0] * Gk[a, 0] + F1[i, 1] * Gk[a, 1] + F1[i, 2] * Gk[a, 2]
            f2[a, i] = F2[i, 0] * Gk[a, 0] + F2[i, 1] * Gk[a, 1] + F2[i, 2] * Gk[a, 2]
    for i in range(3):
        for j in range(3):
            P[i, j] = F1[i, 0] * F2[j, 0] + F1[i, 1] * F2[j, 1] + F1[i, 2] * F2[j, 2]
    for a in range(k):
        for b in range(a if upper_only else 0, k):
            gg = mu * (Gk[a, 0] * Gk[b, 0] + Gk[a, 1] * Gk[b, 1] + Gk[a, 2] * Gk[b, 2])
            for i in range(3):
                for j in range(3):
                    K[a, b, i, j] += scale * (lam * f1[a, i] * f2[b, j] + gg * P[i, j] + mu * f1[b, i] * f2[a, j])


@nb.njit(cache=True, inline="always")
def _add_stress_terms(F, S, w, Gg, nn, upper_only, fe, K):
    """fe_a += w F S G_a for every row of Gg (n, 3), and the geometric K_ab += w (G_a·S·G_b) I of the modes' rows."""
    n = Gg.shape[0]
    add_stress_force(F, S, w, Gg, n, fe)
    for a in range(nn, n):
        for b in range(a if upper_only else nn, n):
            s = 0.0
            for L in range(3):
                s += Gg[a, L] * (S[L, 0] * Gg[b, 0] + S[L, 1] * Gg[b, 1] + S[L, 2] * Gg[b, 2])
            for i in range(3):
                K[a - nn, b - nn, i, i] += w * s


@nb.njit(cache=True, inline="always")
def _mirror(K):
    """K[a, b, i, j] = K[b, a, j, i] below the block diagonal (the upper blocks were formed)."""
    for a in range(K.shape[0]):
        for b in range(a):
            for i in range(3):
                for j in range(3):
                    K[a, b, i, j] = K[b, a, j, i]


@nb.njit(cache=True, inline="always")
def _accumulate_pairs(Gg, A, t, n_rows, n_cols, upper_only, K):
    """K[a,b,i,j] += Σ_LN G_aL A_LNij G_bN for a < n_rows, b < n_cols (b >= a only if upper_only)."""
    for b in range(n_cols):
        for L in range(3):
            for i in range(3):
                for j in range(3):
                    t[b, L, i, j] = A[L, 0, i, j] * Gg[b, 0] + A[L, 1, i, j] * Gg[b, 1] + A[L, 2, i, j] * Gg[b, 2]
    for a in range(n_rows):
        g0, g1, g2 = Gg[a, 0], Gg[a, 1], Gg[a, 2]
        b0 = a if upper_only else 0
        for b in range(b0, n_cols):
            for i in range(3):
                for j in range(3):
                    K[a, b, i, j] += g0 * t[b, 0, i, j] + g1 * t[b, 1, i, j] + g2 * t[b, 2, i, j]
