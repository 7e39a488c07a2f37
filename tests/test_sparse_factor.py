"""The one sparse factorisation (flexbody.linalg.sparse_factor): CHOLMOD for SPD matrices with the symbolic
analysis kept while the pattern repeats, SuperLU for the rest; every sparse solver goes through it."""

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from flexbody.linalg.sparse_factor import NotPositiveDefiniteError, SparseFactor

RNG = np.random.default_rng(11)


def laplacian(n: int, shift: float) -> sp.csc_matrix:
    """Tridiagonal [-1, 2 + shift, -1]: SPD for shift > -2 + 2 cos(π/(n+1)), indefinite for shift < -1."""
    return sp.diags([-np.ones(n - 1), (2.0 + shift) * np.ones(n), -np.ones(n - 1)], [-1, 0, 1], format="csc")


def test_spd_matrix_is_factored_by_cholmod_and_solves_like_superlu():
    A, b = laplacian(50, 0.1), RNG.standard_normal((50, 3))
    factor = SparseFactor().factor(A)
    assert factor.method == "cholmod"
    assert np.allclose(factor.solve(b), spla.spsolve(A, b), rtol=1e-12, atol=1e-12)


def test_symbolic_analysis_is_kept_while_the_pattern_repeats():
    factor = SparseFactor()
    for shift in (0.1, 0.2, 0.3):
        factor.factor(laplacian(30, shift))
    assert (factor.n_analyses, factor.n_cholesky) == (1, 3)
    factor.factor(laplacian(31, 0.1))  # another pattern: analysed again
    assert factor.n_analyses == 2


def test_indefinite_matrix_falls_back_to_lu_or_raises():
    # a 3-D grid (8³ unknowns) takes CHOLMOD's supernodal LLᵀ, which stops at the first non-positive pivot
    # (its simplicial LDLᵀ, chosen for thin patterns, factors some indefinite matrices without complaint)
    line = laplacian(8, -1.5)
    A, b = sp.kronsum(sp.kronsum(line, line), line).tocsc(), RNG.standard_normal(512)
    factor = SparseFactor().factor(A)
    assert factor.method == "superlu" and factor.n_lu == 1
    assert np.allclose(A @ factor.solve(b), b, atol=1e-10)
    with pytest.raises(NotPositiveDefiniteError):
        SparseFactor().factor(A, lu_fallback=False)


def test_unsymmetric_matrix_goes_to_lu():
    A = (laplacian(20, 0.5) + sp.diags([0.3 * np.ones(19)], [1])).tocsc()
    b = RNG.standard_normal(20)
    factor = SparseFactor().factor(A, spd=False)
    assert factor.method == "superlu"
    assert np.allclose(A @ factor.solve(b), b, atol=1e-12)


def test_a_pattern_within_the_analysed_one_reuses_the_analysis():
    import numpy as np
    import scipy.sparse as sp

    from flexbody.linalg.sparse_factor import HAVE_CHOLMOD, SparseFactor

    if not HAVE_CHOLMOD:
        return
    n = 30
    rng = np.random.default_rng(4)
    B = sp.random(n, n, density=0.15, random_state=5, format="csc")
    full = (B @ B.T + 5.0 * sp.identity(n)).tocsc()
    full.sort_indices()
    factor = SparseFactor().factor(full)
    fewer = full.copy()
    fewer.data[np.flatnonzero(np.abs(fewer.data) < 0.05 * np.abs(fewer.data).max())] = 0.0
    fewer = 0.5 * (fewer + fewer.T).tocsc()  # exact zeros dropped: a pattern within the first
    fewer.eliminate_zeros()
    fewer = (fewer + 5.0 * sp.identity(n)).tocsc()
    assert fewer.nnz < full.nnz
    b = rng.normal(size=n)
    x = factor.factor(fewer).solve(b)
    assert factor.n_analyses == 1 and factor.n_cholesky == 2
    assert np.allclose(fewer @ x, b, rtol=0, atol=1e-12)
    outside = (fewer + sp.csc_matrix(([0.1, 0.1], ([0, n - 1], [n - 1, 0])), shape=(n, n))).tocsc()
    if outside.nnz > full.nnz or not np.all(np.isin(outside.indices, full.indices)):
        x = factor.factor(outside).solve(b)
        assert np.allclose(outside @ x, b, rtol=0, atol=1e-12)
    analyses = factor.n_analyses
    factor.factor(full)  # the union was analysed: no new analysis
    assert factor.n_analyses == analyses
