"""Stability of a constrained static equilibrium: the negative eigenvalues of the tangent on the constraints.

An equilibrium r(q, λ) = h(q) − Sᵀτ − Φᵀλ = 0, φ(q) = 0 of a conservative system is stable when the second
variation of its potential is positive on the motions the constraints allow (Nocedal & Wright, Numerical
Optimization, 2006, Thm. 12.6: the reduced Hessian): Zᵀ A Z ≻ 0, A = ∂r/∂q (including −∂(Φᵀλ)/∂q) and Z a basis of
the null space of Φ. Z is the SVD's (redundant rows are rank decisions of :mod:`flexbody.linalg.rank`), the
eigenvalues of the symmetric part of Zᵀ A Z are LAPACK's; the joint block of A comes by central differences, so an
eigenvalue counts as negative below −1e-7 · max|eigenvalue| (neutral directions, e.g. an unloaded joint, are
zero to that accuracy). Dense, so systems of up to DENSE_LIMIT coordinates are assessed; larger ones are not.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from .constrained_statics import StaticEquations

__all__ = ["constrained_negative_eigenvalues", "equilibrium_counts", "DENSE_LIMIT"]

DENSE_LIMIT = 1000
"""Most coordinates whose constrained equilibria are assessed (dense null space and eigenvalues)."""

RELATIVE_ZERO = 1e-7
"""Eigenvalues of the reduced tangent above −RELATIVE_ZERO · max|eigenvalue| count as non-negative."""


def constrained_negative_eigenvalues(A_rigid: np.ndarray, A_flex: sp.spmatrix, Phi: sp.spmatrix) -> int:
    """Negative eigenvalues of Zᵀ A Z for A = diag(A_rigid (n_r, n_r), A_flex (n_f, n_f)) and rows Φ (m, n);
    −1 when n > DENSE_LIMIT (not assessed)."""
    n = (A_rigid.shape[0] if A_rigid.size else 0) + A_flex.shape[0]
    if n > DENSE_LIMIT:  # decided before anything dense is formed
        return -1
    blocks = [np.atleast_2d(A_rigid)] if A_rigid.size else []
    if A_flex.shape[0]:
        blocks.append(sp.csr_matrix(A_flex).toarray())
    A = sla.block_diag(*blocks) if blocks else np.zeros((0, 0))
    Phi = sp.csr_matrix(Phi).toarray() if Phi.shape[0] else np.zeros((0, n))
    Z = sla.null_space(Phi) if Phi.shape[0] else np.eye(n)
    if not Z.shape[1]:
        return 0  # nothing moves: nothing to lose stability
    H = Z.T @ (0.5 * (A + A.T)) @ Z
    values = np.linalg.eigvalsh(H)
    return int(np.count_nonzero(values < -RELATIVE_ZERO * max(float(np.abs(values).max()), np.finfo(float).tiny)))


def equilibrium_counts(asm, t: float, points) -> list[int]:
    """Negative eigenvalues of the reduced tangent at each (s, q, λ) of ``points`` (−1 where not assessed)."""
    if asm.n_dofs > DENSE_LIMIT:
        return [-1] * len(points)
    stat = StaticEquations(asm, t)
    counts = []
    for s, q, lam in points:
        ws = stat.workspace(q)
        A_rigid, A_flex = stat.tangent(q, lam, s, ws)
        counts.append(
            constrained_negative_eigenvalues(A_rigid, A_flex, stat.residual(q, lam, np.zeros(q.size), s, ws)[2])
        )
    return counts
