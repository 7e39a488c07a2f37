"""The LᵀL factorisation of a mass matrix with branch-induced sparsity (Featherstone, Rigid Body Dynamics
Algorithms, §6.5), found from the matrix itself.

The joint-space mass matrix of a kinematic tree has M[i, j] ≠ 0 only where one coordinate is an ancestor of
the other. With the coordinates numbered parents first, M = LᵀL (L lower triangular, factored from the last
row up) has no fill outside that pattern, so the factor and its solves cost O(Σ depthᵢ²) and O(Σ depthᵢ)
instead of O(n³) and O(n²). :func:`tree_parents` reads the pattern from the exact zeros of M's lower
triangle: λ(k) is the last non-zero column before k, and the factorisation is exact whenever every
non-zero of row k lies on the chain λ(k), λ(λ(k)), … (checked; eliminating row k then only updates entries
on that chain). Any symmetric positive-definite matrix that passes the check is factored exactly, whatever
made it; one that does not is left to a dense factorisation.
"""

from __future__ import annotations

import numba as nb
import numpy as np


@nb.njit(cache=True)
def tree_parents(M):
    """(ok, λ (n,), chain entries): λ(k) the last column j < k with M[k, j] ≠ 0 (−1 for none); ok when
    every non-zero of M's lower triangle lies on the chains of λ; chain entries = Σ_k |chain(k)|, the
    off-diagonal entries of the factor (n(n − 1)/2 for a dense matrix)."""
    n = M.shape[0]
    parent = np.full(n, -1, dtype=np.int64)
    on_chain = np.zeros(n, dtype=np.bool_)
    entries = 0
    for k in range(n):
        Mk = M[k]
        for j in range(k - 1, -1, -1):
            if Mk[j] != 0.0:
                parent[k] = j
                break
        j = parent[k]
        while j >= 0:
            on_chain[j] = True
            entries += 1
            j = parent[j]
        ok = True
        for j in range(k):
            if Mk[j] != 0.0 and not on_chain[j]:
                ok = False
        j = parent[k]
        while j >= 0:
            on_chain[j] = False
            j = parent[j]
        if not ok:
            return False, parent, entries
    return True, parent, entries


@nb.njit(cache=True)
def ltl_factor(M, parent):
    """(ok, L) with LᵀL = M, L lower triangular with non-zeros on the chains of ``parent`` only
    [Featherstone, RBDA Table 6.3]; ok False at a non-positive pivot (M not positive definite)."""
    n = M.shape[0]
    L = np.zeros((n, n))
    for k in range(n):
        i = k
        while i >= 0:
            L[k, i] = M[k, i]
            i = parent[i]
    for k in range(n - 1, -1, -1):
        if not L[k, k] > 0.0:
            return False, L
        a = np.sqrt(L[k, k])
        L[k, k] = a
        i = parent[k]
        while i >= 0:
            L[k, i] /= a
            i = parent[i]
        i = parent[k]
        while i >= 0:
            c = L[k, i]
            j = i
            while j >= 0:
                L[i, j] -= c * L[k, j]
                j = parent[j]
            i = parent[i]
    return True, L


@nb.njit(cache=True)
def ltl_transposed_solve_rows(L, parent, B):
    """B ← L⁻ᵀ B (n, k): Lᵀ upper triangular, solved from the last row up by row operations on B."""
    n = L.shape[0]
    for i in range(n - 1, -1, -1):
        Bi = B[i]
        r = 1.0 / L[i, i]
        for t in range(Bi.shape[0]):
            Bi[t] *= r
        j = parent[i]
        while j >= 0:
            c = L[i, j]
            Bj = B[j]
            for t in range(Bj.shape[0]):
                Bj[t] -= c * Bi[t]
            j = parent[j]


@nb.njit(cache=True)
def ltl_lower_solve(L, parent, b):
    """b ← L⁻¹ b (n,) by forward substitution along the chains."""
    n = L.shape[0]
    for i in range(n):
        s = b[i]
        j = parent[i]
        while j >= 0:
            s -= L[i, j] * b[j]
            j = parent[j]
        b[i] = s / L[i, i]
