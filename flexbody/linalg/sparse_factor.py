"""The one sparse factorisation of flexbody: CHOLMOD's supernodal Cholesky for symmetric positive-definite
matrices, with the symbolic analysis (fill-reducing ordering, elimination tree) kept while the sparsity
pattern repeats, and SuperLU's LU for the rest (indefinite or unsymmetric matrices, or no CHOLMOD).

Sums of sparse matrices drop the entries that happen to be exactly zero, so the pattern of an iteration
matrix can lose a few entries from one state to the next (e.g. a tangent term zero at ν = 0). A matrix whose
pattern lies within the analysed one is factored with the kept analysis, its missing entries stored as
zeros (the same factor: CHOLMOD's elimination only adds products with them); only a pattern reaching
outside is analysed afresh — at 1e5 coordinates an analysis costs as much as the numerical factorisation.

Every sparse solve goes through :class:`SparseFactor`: the constant flexible mass matrix (factored once per
assembled system), the mass solves of dynamics and control, the tangents of the static Newton solver and
the reduced saddle-point matrices of the constrained statics and the implicit integrator.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from .csr_products import positions_within

try:  # scikit-sparse (CHOLMOD); without it every factorisation is an LU
    from sksparse.cholmod import CholmodError, analyze
except ImportError:  # pragma: no cover - depends on the environment
    analyze, CholmodError = None, Exception

__all__ = ["SparseFactor", "NotPositiveDefiniteError", "HAVE_CHOLMOD", "CholmodError"]

HAVE_CHOLMOD = analyze is not None
"""Whether CHOLMOD (scikit-sparse) is installed; without it SPD matrices are factored by SuperLU too."""


class NotPositiveDefiniteError(Exception):
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
        self._analysed = None  # (shape, indptr, indices) of the analysed pattern
        self._solve: Callable[[np.ndarray], np.ndarray] | None = None

    def factor(self, A, *, spd: bool = True, lu_fallback: bool = True) -> SparseFactor:
        """Factor ``A`` (n, n), scipy.sparse. With ``spd`` CHOLMOD is tried first (``A`` is taken as
        symmetric: CHOLMOD reads one triangle); if it meets a non-positive pivot, SuperLU factors ``A``
        when ``lu_fallback``, else :class:`NotPositiveDefiniteError` is raised. Without ``spd``: SuperLU.

        CHOLMOD chooses its method from the pattern: the supernodal LLᵀ of wide patterns (3-D meshes)
        stops at a non-positive pivot, the simplicial LDLᵀ of thin ones factors symmetric indefinite
        matrices with non-zero pivots as well, so an indefinite matrix is not always sent to SuperLU."""
        if spd and HAVE_CHOLMOD:
            try:
                self._cholesky(A)
                return self
            except CholmodError as exc:
                self._symbolic = None  # the next matrix is analysed afresh
                if not lu_fallback:
                    raise NotPositiveDefiniteError(str(exc)) from exc
        return self.factor_lu(A)

    def factor_lu(self, A) -> SparseFactor:
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
        if not A.has_sorted_indices:
            A = A.sorted_indices()
        pattern = (A.shape, A.indptr.tobytes(), A.indices.tobytes())
        if self._symbolic is None or pattern != self._pattern:
            within = self._on_analysed(A) if self._symbolic is not None else None
            if within is None:  # analyse the union with the pattern analysed before
                A = self._union_with_analysed(A)
                self._symbolic = analyze(A)
                self._analysed = (A.shape, A.indptr, A.indices)
                self.n_analyses += 1
            else:
                A = within
            self._pattern = (A.shape, A.indptr.tobytes(), A.indices.tobytes())
        self._symbolic.cholesky_inplace(A)
        self._solve, self.method = self._symbolic.solve_A, "cholmod"
        self.n_cholesky += 1

    def _on_analysed(self, A):
        """``A`` on the analysed pattern (its absent entries stored as zeros), or None when ``A`` has an entry
        outside it."""
        shape, indptr, indices = self._analysed
        positions = np.empty(A.nnz, dtype=np.int64)
        if A.shape != shape or not positions_within(A.indptr, A.indices, indptr, indices, positions):
            return None
        data = np.zeros(len(indices))
        data[positions] = A.data
        return sp.csc_matrix((data, indices, indptr), shape=shape)

    def _union_with_analysed(self, A):
        """``A`` on the union of its pattern and the analysed one (of the same shape), so that the patterns
        of a sequence of matrices settle after a few analyses."""
        if self._analysed is None or self._analysed[0] != A.shape:
            return A
        shape, indptr, indices = self._analysed
        union = sp.csc_matrix((np.ones(len(indices)), indices, indptr), shape=shape) + sp.csc_matrix(
            (np.ones(A.nnz), A.indices, A.indptr), shape=shape
        )  # positive: nothing cancels
        union.sort_indices()
        positions = np.empty(A.nnz, dtype=np.int64)
        positions_within(A.indptr, A.indices, union.indptr, union.indices, positions)
        data = np.zeros(union.nnz)
        data[positions] = A.data
        return sp.csc_matrix((data, union.indices, union.indptr), shape=shape)
