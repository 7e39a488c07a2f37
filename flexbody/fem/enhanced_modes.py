"""The incompatible modes of the 8-node brick (Simo & Armero 1992): a local Newton solve of r_α(x, α) = 0 per
element and the static condensation of its matrices.

The enhanced element carries k = 3 extra "nodes" α whose gradients are the incompatible modes 1 − ξ_k² (mapped with
the centre Jacobian). With the nodal positions x held, Newton on α uses the modes' own block: K_αα Δα = −r_α
(:func:`~flexbody.fem.element_terms.force_and_mode_block`, a 9 × 9 system), from α = 0, until a correction is at
most 1e-13 of the element's size; the force is then evaluated at the corrected α, where r_α vanishes to round-off
(so the condensed force is the gradient of the energy to round-off: a body at rest stays at rest). Only a tangent
or damping request forms the full element matrices (once, at the converged α) for the condensation
K = K_xx − K_xα K_αα⁻¹ K_αx, C likewise.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from .element_terms import element_matrices, force_and_mode_block
from .small_dense import small_product, small_solve

MODE_ITERATIONS = 30
"""Newton iterations allowed to the local solve of an element's modes."""


@nb.njit(cache=True)
def condense(nn, fe, Ke, Ce, want_damping, Kc, Cc):
    """Static condensation of the enhanced modes: Kc = K_xx − K_xα K_αα⁻¹ K_αx (and the same for C)."""
    n = Ke.shape[0]
    ne = 3 * (n - nn)
    Kaa = np.empty((ne, ne))
    Kax = np.empty((ne, 3 * nn))
    Kxa = np.empty((3 * nn, ne))
    for a in range(n - nn):
        for i in range(3):
            for b in range(n - nn):
                for j in range(3):
                    Kaa[3 * a + i, 3 * b + j] = Ke[nn + a, nn + b, i, j]
            for b in range(nn):
                for j in range(3):
                    Kax[3 * a + i, 3 * b + j] = Ke[nn + a, b, i, j]
                    Kxa[3 * b + j, 3 * a + i] = Ke[b, nn + a, j, i]
    corr = small_product(Kxa, small_solve(Kaa, Kax))  # K_xα K_αα⁻¹ K_αx
    for a in range(nn):
        for b in range(nn):
            for i in range(3):
                for j in range(3):
                    Kc[a, b, i, j] = Ke[a, b, i, j] - corr[3 * a + i, 3 * b + j]
    if want_damping:
        Cax = np.empty((ne, 3 * nn))
        for a in range(n - nn):
            for i in range(3):
                for b in range(nn):
                    for j in range(3):
                        Cax[3 * a + i, 3 * b + j] = Ce[nn + a, b, i, j]
        corr_c = small_product(Kxa, small_solve(Kaa, Cax))
        for a in range(nn):
            for b in range(nn):
                for i in range(3):
                    for j in range(3):
                        Cc[a, b, i, j] = Ce[a, b, i, j] - corr_c[3 * a + i, 3 * b + j]


@nb.njit(cache=True)
def solve_enhanced_modes(xe, ve, Ge, we, kind, p, beta, lam0, mu0, matrices, want_damping, h_e, fe, Ke, Ce, law=None):
    """Newton on r_α(x, α) = 0 for the modes stored in xe[nn:] (updated), with the force fe at the converged α and,
    when ``matrices`` is set, the element's Ke and Ce (:func:`~flexbody.fem.element_terms.element_matrices`) there
    too. Returns the iterations, or -1 when the solve did not converge; a state whose modes' correction is not
    finite (a collapsed element) returns non-finite terms, which the solvers' line search halves."""
    n, nn = Ge.shape[1], ve.shape[0]
    k = n - nn
    Kaa = np.empty((3 * k, 3 * k))
    minus_r = np.empty((3 * k, 1))
    for it in range(MODE_ITERATIONS):
        force_and_mode_block(xe, ve, Ge, we, kind, p, beta, lam0, mu0, fe, Kaa, law)
        for a in range(k):
            for i in range(3):
                minus_r[3 * a + i, 0] = -fe[nn + a, i]
        delta = small_solve(Kaa, minus_r)[:, 0]
        if not np.all(np.isfinite(delta)):  # a collapsed state: non-finite terms, for the caller's line search
            fe[:] = np.nan
            if matrices:
                Ke[:] = np.nan
            return it + 1
        for a in range(k):
            for i in range(3):
                xe[nn + a, i] += delta[3 * a + i]
        if np.max(np.abs(delta)) <= 1e-13 * h_e:  # converged: the terms at the updated α (r_α to round-off)
            if matrices:
                element_matrices(xe, ve, Ge, we, kind, p, beta, lam0, mu0, want_damping, fe, Ke, Ce, law)
            else:
                force_and_mode_block(xe, ve, Ge, we, kind, p, beta, lam0, mu0, fe, Kaa, law)
            return it + 1
    return -1
