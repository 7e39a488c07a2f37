"""Stability of a constrained static equilibrium: the negative eigenvalues of the tangent on the constraints.

An equilibrium r(q, λ) = h(q) − Sᵀτ − Φᵀλ = 0, φ(q) = 0 of a conservative system is stable when the second
variation of its potential is positive on the motions the constraints allow (Nocedal & Wright, Numerical
Optimization, 2006, Thm. 12.6: the reduced Hessian): Zᵀ A Z ≻ 0, A = ∂r/∂q (including −∂(Φᵀλ)/∂q) and Z a basis of
the null space of Φ. Z is built sparse, as the saddle-point solver eliminates:

- the node rows (a flexible coordinate held by one row with coefficient ±1: clamps, attachments, pins) are solved
  for their slave coordinates, x = T x_m + t₀ (:func:`flexbody.linalg.saddle_point.eliminate_node_rows`), so the
  columns of T span their null space;
- the other rows G = Φ_o T touch few columns c of x_m; on those Z is the SVD null space of G[:, c] (dense, |c|
  columns; redundant rows are rank decisions of LAPACK's SVD at 1e-12 of σ_max), elsewhere the identity.

Z = T · blockdiag(N_c, I) and H = Zᵀ sym(A) Z stay sparse but for the |c| × |c| block. Its negative eigenvalues are
the negative pivots of an LDLᵀ factorisation (:func:`flexbody.linalg.inertia.negative_eigenvalues`). The joint block
of A may come by central differences (where a term on the joints has no exact derivative), so an eigenvalue counts as
negative below −RELATIVE_ZERO · max|H_ii| (neutral
directions, e.g. an unloaded joint, are zero to that accuracy). Rows other than node rows touching more than
DENSE_COLUMNS columns leave the point not assessed (−1).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from ..linalg.inertia import negative_eigenvalues
from ..linalg.saddle_point import eliminate_node_rows
from .constrained_statics import StaticEquations

__all__ = ["constrained_negative_eigenvalues", "equilibrium_counts", "DENSE_COLUMNS"]

DENSE_COLUMNS = 2000
"""Most columns the rows other than node rows may touch (their null space is dense on those columns)."""

RELATIVE_ZERO = 1e-7
"""Eigenvalues of the reduced tangent above −RELATIVE_ZERO · max|H_ii| count as non-negative."""


def constrained_negative_eigenvalues(A_rigid: np.ndarray, A_flex: sp.spmatrix, Phi: sp.spmatrix) -> int:
    """Negative eigenvalues of Zᵀ sym(A) Z for A = diag(A_rigid (n_r, n_r), A_flex (n_f, n_f)) and rows Φ (m, n),
    Z a basis of Φ's null space (module docstring); −1 when not assessed."""
    n_rigid = A_rigid.shape[0] if A_rigid.size else 0
    blocks = ([sp.csr_matrix(np.atleast_2d(A_rigid))] if n_rigid else []) + (
        [sp.csr_matrix(A_flex)] if A_flex.shape[0] else []
    )
    if not blocks:
        return 0
    A = sp.block_diag(blocks, format="csr")
    Phi = sp.csr_matrix(Phi, shape=(Phi.shape[0], A.shape[0]))
    Phi.sum_duplicates()
    Z = _null_space_basis(Phi, n_rigid)
    if Z is None:
        return -1
    if not Z.shape[1]:
        return 0  # nothing moves: nothing to lose stability
    H = (Z.T @ (0.5 * (A + A.T)) @ Z).tocsc()
    return negative_eigenvalues(H, relative_shift=RELATIVE_ZERO)


def _null_space_basis(Phi: sp.csr_matrix, n_rigid: int) -> sp.csr_matrix | None:
    """Z (n, n − rank Φ), sparse: T · blockdiag(N_c, I) (module docstring); None when the other rows touch more
    than DENSE_COLUMNS columns."""
    elimination = eliminate_node_rows(Phi, n_rigid)
    T = elimination.T
    if not elimination.other.size:
        return T
    G = (Phi[elimination.other] @ T).tocsc()
    G.eliminate_zeros()
    touched = np.flatnonzero(np.diff(G.indptr))
    if touched.size > DENSE_COLUMNS:
        return None
    free = np.setdiff1d(np.arange(T.shape[1]), touched)
    N = sla.null_space(G[:, touched].toarray(), rcond=1e-12) if touched.size else np.zeros((0, 0))
    n_m, k = T.shape[1], N.shape[1]
    rows = np.concatenate([np.repeat(touched, k), free])
    cols = np.concatenate([np.tile(np.arange(k), touched.size), k + np.arange(free.size)])
    local = sp.csr_matrix((np.concatenate([N.ravel(), np.ones(free.size)]), (rows, cols)), shape=(n_m, k + free.size))
    return (T @ local).tocsr()


def equilibrium_counts(asm, t: float, points) -> list[int]:
    """Negative eigenvalues of the reduced tangent at each (s, q, λ) of ``points`` (−1 where not assessed)."""
    stat = StaticEquations(asm, t)
    counts = []
    for s, q, lam in points:
        ws = stat.workspace(q)
        A_rigid, A_flex = stat.tangent(q, lam, s, ws)
        counts.append(
            constrained_negative_eigenvalues(A_rigid, A_flex, stat.residual(q, lam, np.zeros(q.size), s, ws)[2])
        )
    return counts
