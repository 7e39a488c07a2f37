"""Sparse saddle-point solves for Newton iterations on constrained rigid–flexible systems.

Solves  [[A, Φᵀ], [Φ, 0]] [x; y] = [r₁; r₂]  for a block-diagonal A = diag(A_r dense, A_f sparse)
(the implicit integrator's iteration matrix M + γ′hC + β′h²K, or the static tangent K) without forming
dense n×n matrices:

1. **Elimination of node rows.** A row of Φ that has a flexible coordinate c with coefficient ±1, where
   c appears in no other row, is solved for that coordinate ("slave"): node clamps, node sets attached to
   a link frame, pins of a node, ties (:mod:`flexbody.constraints.attachments`) are all of this kind. With the
   sparse map x = T x_m + t₀ (T: identity on the other coordinates, −Φ_s′/coef on the slaves) the reduced
   matrix is K = TᵀAT, and the slave multipliers follow from the slave columns: y_s = (r₁ − A x)_s / coef.
2. **Schur complement of the remaining rows** (loop closures between rigid bodies, couplings, …; few):
   G = Φ_o T, S = G K⁻¹ Gᵀ (small, dense), solved by a pseudo-inverse so redundant rows are allowed. When K
   itself is singular (a coordinate that only these rows hold, e.g. a driven joint without static stiffness),
   K is replaced by the augmented K + ρGᵀG and the first right-hand side by b + ρGᵀr₂: the same solution,
   since G u = r₂ (an augmented Lagrangian, exact for any ρ > 0).
3. K is factored by CHOLMOD on its symmetric part (symbolic analysis kept while the pattern is the same);
   if that is not positive definite, by SuperLU on K itself. Newton iterations with a factor kept from an
   earlier iteration converge linearly instead of quadratically; the residuals are always exact.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from ..errors import ConvergenceError
from .csr_products import product, symmetric_part, transposed_product
from .sparse_factor import NotPositiveDefiniteError, SparseFactor
from .validation import zero_diagonal

__all__ = ["SaddlePointSolver", "NodeRowElimination", "eliminate_node_rows"]


class SingularMatrixError(Exception):
    """The reduced matrix K could not be factored: it is singular."""


def _augmentation(K: sp.spmatrix, G: sp.csr_matrix) -> float:
    """ρ of the augmented matrix K + ρGᵀG, scaled so that ρGᵀG is of the size of K's entries (1 when K is zero)."""
    k = float(abs(K).max()) if K.nnz else 0.0
    g = float(abs(G).max()) if G.nnz else 1.0
    return (k if k > 0.0 else 1.0) / (g * g)


def _slave_rows(Phi: sp.csr_matrix, first_flexible: int):
    """(rows, slave columns, coefficients) of the rows that can be solved for one flexible coordinate."""
    m, n = Phi.shape
    counts = np.bincount(Phi.indices[Phi.data != 0.0], minlength=n)  # stored zeros do not count
    rows, cols, coefs = [], [], []
    taken = np.zeros(n, dtype=bool)
    for i in range(m):
        lo, hi = Phi.indptr[i], Phi.indptr[i + 1]
        idx, val = Phi.indices[lo:hi], Phi.data[lo:hi]
        ok = (idx >= first_flexible) & (counts[idx] == 1) & (np.abs(np.abs(val) - 1.0) < 1e-14) & ~taken[idx]
        if ok.any():
            k = int(np.flatnonzero(ok)[0])
            rows.append(i)
            cols.append(int(idx[k]))
            coefs.append(float(val[k]))
            taken[idx[k]] = True
    return np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64), np.array(coefs)


class NodeRowElimination(NamedTuple):
    """The node rows of Φ solved for their slave coordinates (step 1 of the module docstring): ``rows``, their
    slave columns ``cols`` and coefficients ``coefs``, the ``other`` rows, the ``master`` coordinates and the map
    T (n, n_m) with x = T x_m + t₀, whose columns span the null space of the node rows."""

    rows: np.ndarray
    cols: np.ndarray
    coefs: np.ndarray
    other: np.ndarray
    master: np.ndarray
    T: sp.csr_matrix


def eliminate_node_rows(Phi: sp.csr_matrix, n_rigid: int) -> NodeRowElimination:
    """The :class:`NodeRowElimination` of Φ (m, n) whose first ``n_rigid`` coordinates are rigid (never slaves)."""
    m, n = Phi.shape
    rows, cols, coefs = _slave_rows(Phi, n_rigid) if m else (np.zeros(0, int),) * 2 + (np.zeros(0),)
    master = np.setdiff1d(np.arange(n), cols)
    T = _elimination_map(Phi, rows, cols, coefs, master, n)
    return NodeRowElimination(rows, cols, coefs, np.setdiff1d(np.arange(m), rows), master, T)


def _elimination_map(Phi, rows, cols, coefs, master, n) -> sp.csr_matrix:
    """T (n, n_m): x = T x_m + t₀ satisfies the slave rows for any x_m."""
    position = -np.ones(n, dtype=np.int64)
    position[master] = np.arange(master.size)
    eye = sp.csr_matrix((np.ones(master.size), (master, np.arange(master.size))), shape=(n, master.size))
    if not rows.size:
        return eye
    sub = Phi[rows].tocoo()
    keep = (sub.col != cols[sub.row]) & (sub.data != 0.0)
    r, c, v = sub.row[keep], sub.col[keep], sub.data[keep]
    if np.any(position[c] < 0):
        raise ConvergenceError("saddle-point elimination: a node row refers to another eliminated coordinate")
    D = sp.csr_matrix((-v / coefs[r], (cols[r], position[c])), shape=(n, master.size))
    return (eye + D).tocsr()


class SaddlePointSolver:
    """Factor once with :meth:`factor`, then :meth:`solve` any number of right-hand sides.

    ``exact``: solve with A itself (an LU factor of the reduced matrix), as sensitivities need; by default the reduced
    matrix's symmetric part is factored by Cholesky where it is positive definite (an approximation of an unsymmetric
    A that Newton iterations tolerate), else A by LU.

    Attributes
    ----------
    factorizations : int, how many times a reduced matrix was factored numerically.
    method : str, "cholmod" or "superlu" for the last factorization.
    """

    def __init__(self, n_rigid: int, *, exact: bool = False):
        self.n_rigid, self.exact = int(n_rigid), bool(exact)
        self.factorizations = 0
        self.method: str | None = None
        self._factor = SparseFactor()

    # ------------------------------------------------------------------ factorization
    def factor(self, A_rigid: np.ndarray, A_flex: sp.spmatrix, Phi: sp.csr_matrix) -> None:
        """Prepare solves with A = diag(A_rigid (n_r, n_r), A_flex (n_f, n_f)) and Φ (m, n)."""
        n_r = self.n_rigid
        blocks = ([sp.csr_matrix(A_rigid)] if n_r else []) + ([sp.csr_matrix(A_flex)] if A_flex.shape[0] else [])
        A = sp.block_diag(blocks, format="csr")
        n = A.shape[0]
        Phi = sp.csr_matrix(Phi)
        Phi.sum_duplicates()
        rows, cols, coefs, other, master, T = eliminate_node_rows(Phi, n_r)
        # where T only selects the masters (clamps, prescribed nodes), TᵀAT is a slice
        K = A[master][:, master].tocsc() if T.nnz == master.size else (T.T @ (A @ T)).tocsc()
        self.Phi, self.T, self.n = Phi, T, n
        self.rows, self.cols, self.coefs, self.other, self.master = rows, cols, coefs, other, master
        self._A_slave_cols = A[:, cols].tocsr()  # A t₀ (t₀ lives on the slave coordinates)
        self._A_slave_rows = A[cols]  # (A x)_s for the slave multipliers
        G = (Phi[other] @ T).tocsr()
        self.rho = 0.0
        try:
            self._factor_reduced(K)
        except SingularMatrixError:
            if not other.size:
                loose = master[zero_diagonal(K)]
                error = ConvergenceError(
                    f"saddle-point solve: the matrix ({K.shape[0]} coordinates after eliminating "
                    f"node rows) is singular and no other constraint row holds its null space: "
                    f"a coordinate with no stiffness and nothing holding it"
                    + (f" (coordinates {loose.tolist()} have a zero diagonal)" if loose.size else "")
                )
                error.coordinates = loose.tolist()  # type: ignore[attr-defined]  # the callers name them
                raise error from None
            self.rho = _augmentation(K, G)
            try:
                self._factor_reduced((K + self.rho * (G.T @ G)).tocsc())
            except SingularMatrixError:
                raise ConvergenceError(
                    f"saddle-point solve: the matrix is singular on the null space of the "
                    f"constraints too ({K.shape[0]} coordinates, {other.size} rows): a motion "
                    f"that no stiffness and no constraint holds"
                ) from None
        self.G = G.toarray() if other.size else np.zeros((0, master.size))
        if other.size:
            W = self._solve_reduced(self.G.T)
            S = self.G @ W
            self._S_pinv = np.linalg.pinv(S, rcond=1e-12, hermitian=False)
        self.factorizations += 1

    def _factor_reduced(self, K: sp.csc_matrix) -> None:
        try:
            if self.exact:
                raise NotPositiveDefiniteError("exact solves: LU of the matrix itself")
            self._factor.factor(symmetric_part(K), lu_fallback=False)
        except NotPositiveDefiniteError:
            try:
                self._factor.factor_lu(K)  # not SPD: LU of the matrix itself
            except RuntimeError as exc:  # SuperLU: "Factor is exactly singular"
                raise SingularMatrixError(str(exc)) from exc
        self._solve_reduced, self.method = self._factor.solve, self._factor.method

    # ------------------------------------------------------------------ solves
    def solve(self, r1: np.ndarray, r2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """x (n,), y (m,) with A x + Φᵀy = r₁ and Φ x = r₂ (with the factored A and Φ); for k right sides at once,
        r₁ (n, k) and r₂ (m, k) give x (n, k) and y (m, k)."""
        m, sides = self.Phi.shape[0], r1.shape[1:]
        coefs = self.coefs.reshape(-1, *(1,) * len(sides))
        t0_s = r2[self.rows] / coefs
        t0 = np.zeros((self.n, *sides))
        t0[self.cols] = t0_s
        b = transposed_product(self.T, r1 - product(self._A_slave_cols, t0_s))
        if self.rho:  # the augmented first row: + ρGᵀ(G u − r₂,o) = 0
            b = b + self.rho * (self.G.T @ r2[self.other])
        u = self._solve_reduced(b)
        y = np.zeros((m, *sides))
        if self.other.size:
            y_o = self._S_pinv @ (self.G @ u - r2[self.other])
            u = u - self._solve_reduced(self.G.T @ y_o)
            y[self.other] = y_o
        x = product(self.T, u) + t0
        if self.rows.size:  # slave columns appear in no other row, so Φ_oᵀy_o vanishes there
            y[self.rows] = (r1[self.cols] - product(self._A_slave_rows, x)) / coefs
        return x, y
