"""The one sparse factorisation of flexbody: CHOLMOD's supernodal Cholesky for symmetric positive-definite
matrices, with the symbolic analysis (fill-reducing ordering, elimination tree) kept while the sparsity
pattern repeats, and SuperLU's LU for the rest (indefinite or unsymmetric matrices, or no CHOLMOD).

Every sparse solve goes through :class:`SparseFactor`: the constant flexible mass matrix (factored once per
assembled system), the mass solves of dynamics and control, the tangents of the static Newton solver and
the reduced saddle-point matrices of the constrained statics and the implicit integrator.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

try:  # scikit-sparse (CHOLMOD); without it every factorisation is an LU
    from sksparse.cholmod import CholmodError, analyze
except ImportError:  # pragma: no cover - depends on the environment
    analyze, CholmodError = None, Exception

__all__ = ["SparseFactor", "NotPositiveDefinite", "HAVE_CHOLMOD"]

HAVE_CHOLMOD = analyze is not None
"""Whether CHOLMOD (scikit-sparse) is installed; without it SPD matrices are factored by SuperLU too."""


class NotPositiveDefinite(Exception):
    """CHOLMOD met a non-positive pivot: the matrix is not (numerically) positive definite."""


class SparseFactor:
    """Factor a sparse matrix, then :meth:`solve` any number of right-hand sides (n,) or (n, k).

    One object serves a sequence of matrices with the same pattern (Newton iterations, load steps): the
    symbolic analysis is made for the first and redone only when the pattern changes.

    Attributes
    ----------
    method : str or None
        "cholmod" or "superlu": how the last matrix was factored.
    n_cholesky, n_lu : int
        Numerical Cholesky and LU factorisations made so far.
    n_analyses : int
        Symbolic analyses made so far (CHOLMOD only).
    """

    def __init__(self):
        self.method: str | None = None
        self.n_cholesky = self.n_lu = self.n_analyses = 0
        self._symbolic = None
        self._pattern = None
        self._solve: Callable[[np.ndarray], np.ndarray] | None = None

    def factor(self, A, *, spd: bool = True, lu_fallback: bool = True) -> "SparseFactor":
        """Factor ``A`` (n, n), scipy.sparse. With ``spd`` CHOLMOD is tried first (``A`` is taken as
        symmetric: CHOLMOD reads one triangle); if it meets a non-positive pivot, SuperLU factors ``A``
        when ``lu_fallback``, else :class:`NotPositiveDefinite` is raised. Without ``spd``: SuperLU.

        CHOLMOD chooses its method from the pattern: the supernodal LLᵀ of wide patterns (3-D meshes)
        stops at a non-positive pivot, the simplicial LDLᵀ of thin ones factors symmetric indefinite
        matrices with non-zero pivots as well, so an indefinite matrix is not always sent to SuperLU."""
        if spd and HAVE_CHOLMOD:
            try:
                self._cholesky(A)
                return self
            except CholmodError as exc:
                self._symbolic = None                 # the next matrix is analysed afresh
                if not lu_fallback:
                    raise NotPositiveDefinite(str(exc)) from exc
        return self.factor_lu(A)

    def factor_lu(self, A) -> "SparseFactor":
        """Factor ``A`` by SuperLU (any non-singular square matrix)."""
        lu = spla.splu(sp.csc_matrix(A))
        self._solve, self.method = lu.solve, "superlu"
        self.n_lu += 1
        return self

    def solve(self, b: np.ndarray) -> np.ndarray:
        """A⁻¹ b for (n,) or (n, k) ``b`` with the last factored A."""
        if self._solve is None:
            raise RuntimeError("SparseFactor.solve called before factor")
        return np.asarray(self._solve(b))

    __call__ = solve

    def _cholesky(self, A) -> None:
        A = A if sp.isspmatrix_csc(A) else sp.csc_matrix(A)
        pattern = (A.shape, A.indptr.tobytes(), A.indices.tobytes())
        if self._symbolic is None or pattern != self._pattern:
            self._symbolic, self._pattern = analyze(A), pattern
            self.n_analyses += 1
        self._symbolic.cholesky_inplace(A)
        self._solve, self.method = self._symbolic.solve_A, "cholmod"
        self.n_cholesky += 1
