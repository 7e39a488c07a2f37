"""The block-diagonal mass matrix of a rigid–flexible system, M = diag(M_r1, …, M_ry, M_f1, …, M_fz) [DE-110].

Rigid blocks are small, dense and depend on the configuration; flexible blocks are sparse and constant
(integrated over the reference configuration [DE-104]). :class:`BlockMass` keeps the blocks apart so
that M⁻¹ is applied block by block: a LAPACK Cholesky factor per rigid block at each state, and one
CHOLMOD factor of the stacked flexible block made once per assembled system (:class:`FlexibleMassFactor`,
which counts its factorizations). No dense n×n matrix and no inverse is formed.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.sparse as sp

from ..errors import StateError
from .sparse_factor import NotPositiveDefiniteError, SparseFactor
from .validation import potrf, potrs

__all__ = ["BlockMass", "FlexibleMassFactor", "DENSE_MASS_LIMIT", "INVERSE_CHUNK"]

DENSE_MASS_LIMIT = 4000
"""Largest n for which :meth:`BlockMass.toarray` forms the dense matrix (used by small-model controllers)."""


INVERSE_CHUNK = 64
"""Unit right-hand sides solved together when columns of M_f⁻¹ are formed (bounds the memory)."""


class FlexibleMassFactor:
    """The constant flexible block M_f (n_f, n_f) and its Cholesky factor, made once.

    ``factorizations`` counts how often M_f was factored (1 after first use, for the whole run);
    ``inverse_solves`` counts the unit right-hand sides solved by :meth:`inverse_submatrix`.
    """

    def __init__(self, M_f: sp.spmatrix):
        self.matrix = sp.csc_matrix(M_f, dtype=float)
        self.factorizations = 0
        self.inverse_solves = 0
        self._solve: Callable[[np.ndarray], np.ndarray] | None = None
        self._inverse: tuple[bytes, np.ndarray] | None = None  # (columns, block) of the last inverse_submatrix

    def inverse_submatrix(self, cols: np.ndarray) -> np.ndarray:
        """(M_f⁻¹)[cols, cols] (c, c) [1/kg] for local indices ``cols``, from c solves with unit vectors.

        M_f is constant, so the block is kept for the last column set asked for: a controller that
        projects with the same constrained nodes at every step pays the c solves once per run.
        """
        cols = np.asarray(cols, dtype=np.int64)
        key = cols.tobytes()
        if self._inverse is not None and self._inverse[0] == key:
            return self._inverse[1]
        n_f, c = self.matrix.shape[0], len(cols)
        block = np.empty((c, c))
        for start in range(0, c, INVERSE_CHUNK):
            chunk = cols[start : start + INVERSE_CHUNK]
            unit = np.zeros((n_f, len(chunk)))
            unit[chunk, np.arange(len(chunk))] = 1.0
            block[:, start : start + len(chunk)] = self.solve(unit)[cols]
        self.inverse_solves += c
        block = 0.5 * (block + block.T)
        self._inverse = (key, block)
        return block

    def solve(self, b: np.ndarray) -> np.ndarray:
        solve = self._solve if self._solve is not None else self._factor()
        return np.asarray(solve(b))

    def _factor(self) -> Callable[[np.ndarray], np.ndarray]:
        if self.matrix.shape[0] == 0:
            self._solve = lambda b: b
        else:
            try:
                self._solve = SparseFactor().factor(self.matrix, lu_fallback=False).solve
            except NotPositiveDefiniteError as exc:
                raise StateError(f"flexible mass matrix is not positive definite (CHOLMOD: {exc})") from exc
        self.factorizations += 1
        return self._solve


class BlockMass:
    """M = diag(rigid dense blocks at a state, constant flexible sparse block) (n, n) [kg, kg·m²].

    Supports ``M @ x`` for (n,) or (n, k), ``solve(b)`` (M⁻¹b by blocks), ``shape``, ``diagonal()``,
    ``tocsc()`` (sparse, for the implicit integrator's iteration matrix) and ``toarray()`` (dense, only
    for n ≤ :data:`DENSE_MASS_LIMIT`).

    Parameters
    ----------
    rigid : list of (slice, ndarray (n_i, n_i))
        Dense SPD blocks of the rigid trees and the global coordinates they occupy.
    flexible : FlexibleMassFactor
        The stacked flexible block, occupying the coordinates ``flexible_slice``.
    """

    def __init__(self, rigid: list, flexible: FlexibleMassFactor, flexible_slice: slice, n: int):
        self.rigid, self.flexible, self.flexible_slice = rigid, flexible, flexible_slice
        self.shape = (n, n)
        self.ndim = 2
        self.dtype = np.dtype(float)
        self._rigid_factors = None

    def __matmul__(self, x):
        x = np.asarray(x, dtype=float)
        out = np.empty_like(x)
        for s, block in self.rigid:
            out[s] = block @ x[s]
        fs = self.flexible_slice
        out[fs] = self.flexible.matrix @ x[fs]
        return out

    __array_ufunc__ = None  # let numpy defer ``X @ M`` to __rmatmul__

    def __rmatmul__(self, x):
        """X @ M = (M Xᵀ)ᵀ (M is symmetric) for X (k, n) or (n,)."""
        x = np.asarray(x, dtype=float)
        return (self @ x.T).T

    def dot(self, x):
        return self @ x

    def _factors(self):
        if self._rigid_factors is None:
            factors = []
            for s, block in self.rigid:
                c, info = potrf(block, lower=1, clean=0)
                if info != 0:
                    raise StateError(
                        f"rigid mass block at coordinates {s.start}..{s.stop - 1} is not positive "
                        f"definite (Cholesky pivot {info})"
                    )
                factors.append((s, c))
            self._rigid_factors = factors
        return self._rigid_factors

    def solve(self, b) -> np.ndarray:
        """M⁻¹ b for b (n,) or (n, k), one block at a time."""
        b = np.asarray(b, dtype=float)
        if b.shape[0] != self.shape[0]:
            raise StateError(f"BlockMass.solve: right-hand side has {b.shape[0]} rows, expected {self.shape[0]}")
        out = np.empty_like(b)
        for s, c in self._factors():
            out[s] = potrs(c, b[s], lower=1)[0]
        fs = self.flexible_slice
        if fs.stop > fs.start:
            out[fs] = self.flexible.solve(b[fs])
        return out

    def inverse_submatrix(self, cols) -> np.ndarray:
        """(M⁻¹)[cols, cols] (c, c) for global coordinate indices ``cols`` (c,): rigid entries from the
        blocks' Cholesky factors at this state, flexible ones from :meth:`FlexibleMassFactor.inverse_submatrix`
        (formed once per column set). With A's entries inside ``cols``, A M⁻¹ Aᵀ = A_c (M⁻¹)_cc A_cᵀ."""
        cols = np.asarray(cols, dtype=np.int64)
        out = np.zeros((len(cols), len(cols)))
        for s, c in self._factors():
            sel = np.flatnonzero((cols >= s.start) & (cols < s.stop))
            if sel.size:
                inverse = potrs(c, np.eye(s.stop - s.start), lower=1)[0]
                local = cols[sel] - s.start
                out[np.ix_(sel, sel)] = inverse[np.ix_(local, local)]
        fs = self.flexible_slice
        sel = np.flatnonzero((cols >= fs.start) & (cols < fs.stop))
        if sel.size:
            out[np.ix_(sel, sel)] = self.flexible.inverse_submatrix(cols[sel] - fs.start)
        return out

    def diagonal(self) -> np.ndarray:
        d = np.empty(self.shape[0])
        for s, block in self.rigid:
            d[s] = np.diag(block)
        d[self.flexible_slice] = self.flexible.matrix.diagonal()
        return d

    def trace(self) -> float:
        return float(self.diagonal().sum())

    def rigid_block(self) -> np.ndarray:
        """The joint-space part of M as one dense (n_r, n_r) block diagonal matrix (the rigid trees' blocks)."""
        n_r = max((s.stop for s, _ in self.rigid), default=0)
        out = np.zeros((n_r, n_r))
        for s, block in self.rigid:
            out[s, s] = block
        return out

    def tocsc(self) -> sp.csc_matrix:
        """The whole M as a sparse matrix (rigid blocks stored densely inside it)."""
        blocks = [sp.csc_matrix(block) for _, block in self.rigid]
        if self.flexible.matrix.shape[0]:
            blocks.append(self.flexible.matrix)
        return sp.block_diag(blocks, format="csc")

    def toarray(self) -> np.ndarray:
        n = self.shape[0]
        if n > DENSE_MASS_LIMIT:
            raise StateError(
                f"BlockMass.toarray: refusing to form a dense {n}x{n} mass matrix "
                f"(n > {DENSE_MASS_LIMIT}); use solve() and @ instead"
            )
        return self.tocsc().toarray()

    def __repr__(self) -> str:
        return (
            f"BlockMass(n={self.shape[0]}, rigid blocks={[s.stop - s.start for s, _ in self.rigid]}, "
            f"flexible={self.flexible.matrix.shape[0]})"
        )
