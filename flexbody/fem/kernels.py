"""Batched element kernels for position-based (ANCF) hexahedral solids [DE-103, DE-104]: the assembly of the
internal force, tangent and damping matrices of all elements of a body.

The terms of one element (force k_a = Σ_g w_g (F S) G_a and its Jacobians) are those of
:mod:`flexbody.fem.element_terms`; the incompatible modes of the 8-node element are solved and condensed per element
by :mod:`flexbody.fem.enhanced_modes`. Elements are processed in blocks of consecutive elements, colour by colour (no
two blocks of a colour share a node, :func:`flexbody.fem.patterns.color_groups`), so the parallel scatter into the
global vector / CSR data array is race-free. The strain energy kernels of :mod:`flexbody.fem.energy_kernels` sum
∫ W(F) dV per element with the same F. The SVK force (undamped or Kelvin–Voigt) and energy of 8-node bricks with
2 × 2 × 2 Gauss points run in the kernels of :mod:`flexbody.fem.svk_hex8`, bitwise the same. Every assembly has a
serial path (n_threads <= 1), bitwise equal to the parallel one for any number of threads.

Every kernel taking (kind, p) also takes the compiled user law as its last argument ``law``, a numba first-class
function (``FunctionType``) of :mod:`flexbody.fem.energy_codegen`: each kernel is compiled once for all user laws
and stays in numba's on-disk cache. The built-in laws pass None; numba prunes the ``law is not None`` branches for
a None argument (as for an omitted one), so their machine code is that of the kernels without a user law. Every
call passes it, from Python and from the parallel kernels alike, so that a per-range routine has one compiled
variant for the built-in laws (an omitted ``law`` and a None one are two signatures to numba).
"""

from __future__ import annotations

import contextlib

import numba as nb
import numpy as np

from .element_terms import element_force, element_matrices
from .enhanced_modes import condense, solve_enhanced_modes
from .materials import SVK
from .svk_hex8 import svk_hex8_damped_forces, svk_hex8_forces


# --------------------------------------------------------------------------- global assembly
# The assemblies run the blocks of a colour in parallel, one contiguous run of blocks per thread (prange over
# n_threads chunks), when n_threads > 1, and all blocks in colour order on the calling thread when n_threads <= 1
# (no thread wake-up/join, which dominates small meshes on a busy machine). Both paths add the contributions
# of every node in colour order, and within a colour from one block only (blocks of a colour share no node),
# so their results are bitwise identical for any number of threads. Few colours (2 on box meshes) means few
# joins per call, where a thread descheduled by a concurrent load would stall the others. The serial path
# calls the per-range routine directly from Python, so a small model never compiles the parallel kernels
# (their parfor lowering is the costliest part of compiling the package). The per-range routines are
# compiled once, for int64 bounds (Python ints are int64 to numba, in both paths).
@nb.njit(cache=True, inline="always")
def chunk_bounds(start, stop, n_chunks, c):
    size = stop - start
    return start + (c * size) // n_chunks, start + ((c + 1) * size) // n_chunks


@contextlib.contextmanager
def numba_threads(n_threads: int):
    """Run the enclosed parallel kernel on min(n_threads, numba's thread pool) threads; restores the setting."""
    previous = nb.get_num_threads()
    nb.set_num_threads(max(1, min(n_threads, nb.config.NUMBA_NUM_THREADS)))
    try:
        yield
    finally:
        nb.set_num_threads(previous)


@nb.njit(cache=True, error_model="numpy")
def _force_of_range(lo, hi, color_elems, cells, G, wdv, x, v, kind, p, beta, lam0, mu0, f, law=None):
    """f (n_nodes, 3) += internal forces [N] of the plain elements color_elems[lo:hi], in that order."""
    nn = cells.shape[1]
    if kind == SVK and nn == 8 and G.shape[1] == 8 and G.shape[2] == 8:  # specialised, bitwise the same
        if beta > 0.0:
            svk_hex8_damped_forces(lo, hi, color_elems, cells, G, wdv, x, v, p[0], p[1], beta, lam0, mu0, f)
        else:
            svk_hex8_forces(lo, hi, color_elems, cells, G, wdv, x, p[0], p[1], f)
        return
    xe = np.empty((nn, 3))
    ve = np.zeros((nn, 3))
    fe = np.empty((nn, 3))
    F = np.empty((3, 3))
    Fd = np.empty((3, 3))
    S = np.empty((3, 3))
    work = np.empty((2, 3, 3))
    for t in range(lo, hi):
        e = color_elems[t]
        for a in range(nn):
            for i in range(3):
                xe[a, i] = x[cells[e, a], i]
        if beta > 0.0:
            for a in range(nn):
                for i in range(3):
                    ve[a, i] = v[cells[e, a], i]
        element_force(xe, ve, G[e], wdv[e], kind, p, beta, lam0, mu0, fe, F, Fd, S, work, law)
        for a in range(nn):
            for i in range(3):
                f[cells[e, a], i] += fe[a, i]


def assemble_force(
    color_ptr, block_ptr, color_elems, cells, G, wdv, x, v, kind, p, beta, lam0, mu0, n_threads, f, law=None
):
    """f (n_nodes, 3) += internal forces of all plain elements; colours in turn, blocks of a colour in parallel.

    Blocks and colours are those of :func:`flexbody.fem.patterns.color_groups`. n_threads <= 1: serial, on the
    calling thread (the parallel kernel is then never compiled). ``law``: the compiled user law, None for the
    built-in laws (see the module docstring).
    """
    if n_threads <= 1:
        _force_of_range(0, len(color_elems), color_elems, cells, G, wdv, x, v, kind, p, beta, lam0, mu0, f, law)
        return
    with numba_threads(n_threads):
        _assemble_force_parallel(
            color_ptr, block_ptr, color_elems, cells, G, wdv, x, v, kind, p, beta, lam0, mu0, n_threads, f, law
        )


@nb.njit(parallel=True, cache=True, error_model="numpy")
def _assemble_force_parallel(
    color_ptr, block_ptr, color_elems, cells, G, wdv, x, v, kind, p, beta, lam0, mu0, n_threads, f, law=None
):
    for c in range(len(color_ptr) - 1):
        first, stop = color_ptr[c], color_ptr[c + 1]
        n_chunks = min(n_threads, stop - first)
        for ch in nb.prange(n_chunks):
            b0, b1 = chunk_bounds(first, stop, n_chunks, ch)
            _force_of_range(
                block_ptr[b0], block_ptr[b1], color_elems, cells, G, wdv, x, v, kind, p, beta, lam0, mu0, f, law
            )


@nb.njit(cache=True, error_model="numpy")
def _matrices_of_range(
    lo,
    hi,
    color_elems,
    cells,
    G,
    wdv,
    x,
    v,
    kind,
    p,
    beta,
    lam0,
    mu0,
    alpha,
    h_elem,
    want_force,
    want_tangent,
    want_damping,
    data_offset,
    row_length,
    f,
    K_data,
    C_data,
    status,
    law=None,
):
    """Force, tangent and damping of the elements color_elems[lo:hi] (see :func:`assemble_matrices`)."""
    nn = cells.shape[1]
    n_all = G.shape[2]
    enhanced = n_all > nn
    xe = np.empty((n_all, 3))
    ve = np.zeros((nn, 3))
    fe = np.empty((n_all, 3))
    Ke = np.empty((n_all, n_all, 3, 3))
    Ce = np.empty((n_all, nn, 3, 3))
    Kc = np.empty((nn, nn, 3, 3))
    Cc = np.empty((nn, nn, 3, 3))
    for t in range(lo, hi):
        e = color_elems[t]
        for a in range(nn):
            for i in range(3):
                xe[a, i] = x[cells[e, a], i]
                if beta > 0.0:
                    ve[a, i] = v[cells[e, a], i]
        if enhanced:
            for a in range(n_all - nn):
                for i in range(3):
                    xe[nn + a, i] = alpha[e, a, i]
            matrices = want_tangent or want_damping
            status[e] = solve_enhanced_modes(
                xe, ve, G[e], wdv[e], kind, p, beta, lam0, mu0, matrices, want_damping, h_elem[e], fe, Ke, Ce, law
            )
            for a in range(n_all - nn):
                for i in range(3):
                    alpha[e, a, i] = xe[nn + a, i]
            if matrices:
                condense(nn, fe, Ke, Ce, want_damping, Kc, Cc)
        else:
            element_matrices(xe, ve, G[e], wdv[e], kind, p, beta, lam0, mu0, want_damping, fe, Ke, Ce, law)
        if want_force:
            for a in range(nn):
                for i in range(3):
                    f[cells[e, a], i] += fe[a, i]
        if want_tangent:
            if enhanced:
                _scatter_blocks(cells[e], data_offset[e], row_length, Kc, nn, K_data)
            else:
                _scatter_blocks(cells[e], data_offset[e], row_length, Ke, nn, K_data)
        if want_damping:
            if enhanced:
                _scatter_blocks(cells[e], data_offset[e], row_length, Cc, nn, C_data)
            else:
                _scatter_blocks(cells[e], data_offset[e], row_length, Ce, nn, C_data)


def assemble_matrices(
    color_ptr,
    block_ptr,
    color_elems,
    cells,
    G,
    wdv,
    x,
    v,
    kind,
    p,
    beta,
    lam0,
    mu0,
    alpha,
    h_elem,
    want_force,
    want_tangent,
    want_damping,
    data_offset,
    row_length,
    n_threads,
    f,
    K_data,
    C_data,
    status,
    law=None,
):
    """Assemble force f (n,3), tangent K_data and damping C_data (CSR data arrays) over all elements.

    With enhanced modes (G.shape[2] > nn) the modes ``alpha`` (m, n_enh, 3) are solved per element,
    updated in place and condensed; ``status[e]`` holds the local Newton iterations (-1: not converged).
    Colours in turn, the blocks of a colour in parallel; n_threads <= 1: serial, on the calling thread
    (the parallel kernel is then never compiled). ``law``: the compiled user law, None for the built-in laws.
    """
    args = (
        color_elems,
        cells,
        G,
        wdv,
        x,
        v,
        kind,
        p,
        beta,
        lam0,
        mu0,
        alpha,
        h_elem,
        want_force,
        want_tangent,
        want_damping,
        data_offset,
        row_length,
        f,
        K_data,
        C_data,
        status,
        law,
    )
    if n_threads <= 1:
        _matrices_of_range(0, len(color_elems), *args)
        return
    with numba_threads(n_threads):
        _assemble_matrices_parallel(color_ptr, block_ptr, n_threads, *args)


@nb.njit(parallel=True, cache=True, error_model="numpy")
def _assemble_matrices_parallel(
    color_ptr,
    block_ptr,
    n_threads,
    color_elems,
    cells,
    G,
    wdv,
    x,
    v,
    kind,
    p,
    beta,
    lam0,
    mu0,
    alpha,
    h_elem,
    want_force,
    want_tangent,
    want_damping,
    data_offset,
    row_length,
    f,
    K_data,
    C_data,
    status,
    law=None,
):
    for c in range(len(color_ptr) - 1):
        first, stop = color_ptr[c], color_ptr[c + 1]
        n_chunks = min(n_threads, stop - first)
        for ch in nb.prange(n_chunks):
            b0, b1 = chunk_bounds(first, stop, n_chunks, ch)
            _matrices_of_range(
                block_ptr[b0],
                block_ptr[b1],
                color_elems,
                cells,
                G,
                wdv,
                x,
                v,
                kind,
                p,
                beta,
                lam0,
                mu0,
                alpha,
                h_elem,
                want_force,
                want_tangent,
                want_damping,
                data_offset,
                row_length,
                f,
                K_data,
                C_data,
                status,
                law,
            )


@nb.njit(cache=True, inline="always")
def _scatter_blocks(cell, offsets, row_length, Ke, nn, data):
    """Add the element blocks Ke[a, b] (first nn × nn) into CSR data at the precomputed offsets."""
    for a in range(nn):
        stride = row_length[cell[a]]
        for b in range(nn):
            off = offsets[a, b]
            for i in range(3):
                for j in range(3):
                    data[off + i * stride + j] += Ke[a, b, i, j]
