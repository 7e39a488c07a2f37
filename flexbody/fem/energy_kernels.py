"""Strain energy kernels of position-based (ANCF) hexahedral solids: W(F) at a Gauss point and ∫_e W(F) dV per
element [DE-104].

With absolute nodal positions x_a and reference gradients G_a = ∂N_a/∂X at a Gauss point, F = Σ_a x_a ⊗ G_a (plus
Σ_k α_k ⊗ G̃_k of the incompatible modes) as in :mod:`flexbody.fem.kernels`, and

    U_e = Σ_g w_g det J_g W(F_g)

with W the strain energy density of the material (:func:`strain_energy_density`; the NumPy reference is
:func:`flexbody.fem.flexible_body.strain_energy_density`). 8-node SVK bricks with 2 × 2 × 2 Gauss points run in
:func:`flexbody.fem.svk_hex8.svk_hex8_energies`, bitwise the same. Elements are summed in n_threads parallel
chunks, or serially on the calling thread (n_threads <= 1, the parallel kernel then never compiled). A compiled
user law is passed as the last argument ``law``, as in :mod:`flexbody.fem.kernels`.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from .kernels import chunk_bounds, numba_threads
from .materials import MOONEY_RIVLIN, NEO_HOOKEAN, SVK, right_cauchy_green, user_energy_density
from .point_kernels import deformation_gradient
from .svk_hex8 import svk_hex8_energies


@nb.njit(cache=True, inline="always")
def _det3(F):
    """det F of a 3×3 matrix (cofactor expansion along the first row)."""
    return (
        F[0, 0] * (F[1, 1] * F[2, 2] - F[1, 2] * F[2, 1])
        - F[0, 1] * (F[1, 0] * F[2, 2] - F[1, 2] * F[2, 0])
        + F[0, 2] * (F[1, 0] * F[2, 1] - F[1, 1] * F[2, 0])
    )


@nb.njit(cache=True)
def strain_energy_density(kind, p, F, C, law=None):
    """Strain energy density W(F) [J/m³] of one deformation gradient F (3, 3); C (3, 3) is scratch.

    The laws of :mod:`flexbody.fem.materials`, term by term as in ``flexible.strain_energy_density``:

    * SVK, p = (λ, μ):            W = λ/2 (tr E)² + μ E : E,  E = (C − I)/2;
    * Neo-Hookean, p = (μ, λ):    W = μ/2 (I₁ − 3) − μ ln J + λ/2 (ln J)²;
    * Mooney–Rivlin, p = (c₁₀, c₀₁, κ): W = c₁₀ (J^(-2/3) I₁ − 3) + c₀₁ (J^(-4/3) I₂ − 3) + κ/2 (J − 1)²,

    with C = Fᵀ F, I₁ = tr C, I₂ = (I₁² − C : C)/2, J = det F (NaN for J < 0, like NumPy). Unknown kinds: NaN.
    A user ``law`` gives its W (NaN for J <= 0).
    """
    if law is not None:
        return user_energy_density(law, p, F, C)
    right_cauchy_green(F, C)
    if kind == SVK:
        tr = 0.0
        EE = 0.0
        for i in range(3):
            tr += 0.5 * (C[i, i] - 1.0)
            for j in range(3):
                Eij = 0.5 * (C[i, j] - (1.0 if i == j else 0.0))
                EE += Eij * Eij
        return 0.5 * p[0] * tr * tr + p[1] * EE
    I1 = C[0, 0] + C[1, 1] + C[2, 2]
    J = _det3(F)
    if kind == NEO_HOOKEAN:
        ln_j = math.log(J) if J > 0.0 else (-math.inf if J == 0.0 else math.nan)
        return 0.5 * p[0] * (I1 - 3.0) - p[0] * ln_j + 0.5 * p[1] * ln_j * ln_j
    if kind == MOONEY_RIVLIN:
        CC = 0.0
        for i in range(3):
            for j in range(3):
                CC += C[i, j] * C[i, j]
        I2 = 0.5 * (I1 * I1 - CC)
        return (
            p[0] * (J ** (-2.0 / 3.0) * I1 - 3.0)
            + p[1] * (J ** (-4.0 / 3.0) * I2 - 3.0)
            + 0.5 * p[2] * (J - 1.0) * (J - 1.0)
        )
    return math.nan


@nb.njit(cache=True, error_model="numpy")
def _energies_of_range(lo, hi, cells, G, wdv, x, alpha, kind, p, energy, law=None):
    """energy[e] = Σ_g w_g det J_g W(F_g) [J] for elements lo ≤ e < hi (enhanced modes from ``alpha``)."""
    nn = cells.shape[1]
    n_all = G.shape[2]
    nq = G.shape[1]
    if kind == SVK and nn == 8 and n_all == 8 and nq == 8:  # specialised, bitwise the same
        return svk_hex8_energies(lo, hi, cells, G, wdv, x, p[0], p[1], energy)
    xe = np.empty((n_all, 3))
    F = np.empty((3, 3))
    C = np.empty((3, 3))
    for e in range(lo, hi):
        for a in range(nn):
            for i in range(3):
                xe[a, i] = x[cells[e, a], i]
        for a in range(n_all - nn):
            for i in range(3):
                xe[nn + a, i] = alpha[e, a, i]
        s = 0.0
        for g in range(nq):
            deformation_gradient(xe, G[e, g], n_all, F)
            s += wdv[e, g] * strain_energy_density(kind, p, F, C, law)
        energy[e] = s


def element_strain_energies(cells, G, wdv, x, alpha, kind, p, n_threads, energy, law=None):
    """Strain energy ∫_e W(F) dV [J] of every element into energy (m,), elements in n_threads parallel chunks.

    F = Σ_a x_a ⊗ G_a over the nodes plus, when G.shape[2] > nn, Σ_k α_k ⊗ G̃_k of the enhanced modes
    ``alpha`` (m, n_enh, 3) (which must be the converged modes at x for a meaningful energy).
    n_threads <= 1: serial, on the calling thread (the parallel kernel is then never compiled). ``law``: the
    compiled user law, None for the built-in laws (passed either way, as in :mod:`flexbody.fem.kernels`).
    """
    if n_threads <= 1:
        _energies_of_range(0, cells.shape[0], cells, G, wdv, x, alpha, kind, p, energy, law)
        return
    with numba_threads(n_threads):
        _element_strain_energies_parallel(cells, G, wdv, x, alpha, kind, p, n_threads, energy, law)


@nb.njit(parallel=True, cache=True, error_model="numpy")
def _element_strain_energies_parallel(cells, G, wdv, x, alpha, kind, p, n_threads, energy, law=None):
    m = cells.shape[0]
    n_chunks = min(n_threads, m)
    for ch in nb.prange(n_chunks):
        lo, hi = chunk_bounds(0, m, n_chunks, ch)
        _energies_of_range(lo, hi, cells, G, wdv, x, alpha, kind, p, energy, law)
