"""Tests of flexbody.linalg.rank: constraint rank, redundant rows, tolerances [AG Remark 4, DE 5.3]."""

import numpy as np
import pytest
import scipy.sparse as sp

from flexbody.errors import ConstraintError
from flexbody.linalg import rank as analysis
from flexbody.linalg.rank import DEFAULT_ATOL, DEFAULT_RTOL, constraint_rank


def rows(m, n, seed=0):
    return np.random.default_rng(seed).standard_normal((m, n))


def test_full_rank():
    Phi = rows(5, 12)
    rep = constraint_rank(Phi)
    assert rep.rank == 5 and rep.is_full_rank and rep.redundant_rows == ()
    assert rep.n_dofs == 12 and rep.n_constraints == 5 and rep.dof == 7
    s = rep.singular_values
    assert np.all(np.diff(s) <= 0)
    np.testing.assert_allclose(s, np.linalg.svd(Phi, compute_uv=False), rtol=1e-13)
    assert rep.tol == pytest.approx(max(DEFAULT_RTOL * s[0], DEFAULT_ATOL))
    assert rep.rtol == DEFAULT_RTOL and rep.atol == DEFAULT_ATOL


def test_duplicate_row_is_named():
    Phi = rows(4, 10, seed=1)
    Phi = np.vstack([Phi, Phi[2]])
    labels = ["loop_x", "loop_y", "pin", "slider", "pin_again"]
    rep = constraint_rank(Phi, row_labels=labels)
    assert rep.rank == 4 and not rep.is_full_rank and rep.dof == 6
    assert len(rep.redundant_rows) == 1 and rep.redundant_rows[0] in (2, 4)
    assert rep.redundant_labels == (labels[rep.redundant_rows[0]],)
    text = str(rep)
    assert "rank" in text and rep.redundant_labels[0] in text and "redundant rows" in text


def test_linear_combination_row():
    Phi = rows(4, 10, seed=2)
    Phi = np.vstack([Phi, 0.5 * Phi[0] - 2.0 * Phi[3]])
    rep = constraint_rank(Phi)
    assert rep.rank == 4 and len(rep.redundant_rows) == 1
    assert rep.redundant_rows[0] in (0, 3, 4)
    kept = np.delete(Phi, rep.redundant_rows, axis=0)
    assert np.linalg.matrix_rank(kept) == 4  # the remaining rows are independent


def test_several_redundant_rows_leave_independent_set():
    base = rows(6, 15, seed=3)
    Phi = np.vstack([base, base[1], base[0] + base[5], 2 * base[3]])
    rep = constraint_rank(Phi)
    assert rep.rank == 6 and len(rep.redundant_rows) == 3
    assert np.linalg.matrix_rank(np.delete(Phi, rep.redundant_rows, axis=0)) == 6


def test_singular_slider_crank_is_rank_zero():
    q1, q2 = np.pi / 2, np.pi  # A = l[c1 + c12, c12] [AG-67] vanishes; computed ~1e-16
    A = np.array([[np.cos(q1) + np.cos(q1 + q2), np.cos(q1 + q2)]])
    rep = constraint_rank(A, row_labels=["y_C"])
    assert rep.rank == 0 and rep.dof == 2 and rep.redundant_rows == (0,) and rep.redundant_labels == ("y_C",)
    assert rep.tol == DEFAULT_ATOL  # the absolute floor decides here
    assert constraint_rank(A, atol=0.0).rank == 1  # a purely relative test cannot drop the only row


def test_rtol_decides_near_dependence():
    Phi = rows(3, 8, seed=4)
    Phi = np.vstack([Phi, Phi[0] + 1e-6 * rows(1, 8, seed=40)[0]])  # σ_min/σ_max ~ 1e-7
    assert constraint_rank(Phi).rank == 4
    rep = constraint_rank(Phi, rtol=1e-4)
    assert rep.rank == 3 and rep.rtol == 1e-4


def test_sparse_input_and_gram_route(monkeypatch):
    base = rows(5, 30, seed=5)
    Phi = np.vstack([base, base[4], base[0] - base[1]])
    dense = constraint_rank(Phi)
    sparse = constraint_rank(sp.csr_matrix(Phi))
    assert sparse.rank == dense.rank == 5 and sparse.redundant_rows == dense.redundant_rows
    assert sparse.source == "svd"
    monkeypatch.setattr(analysis, "DENSE_LIMIT", 10)
    gram = constraint_rank(sp.csr_matrix(Phi))
    assert gram.source == "gram" and gram.rank == 5 and gram.rtol == analysis.GRAM_RTOL_FLOOR
    assert len(gram.redundant_rows) == 2  # ties (the duplicate pair) may be broken differently
    assert np.linalg.matrix_rank(np.delete(Phi, gram.redundant_rows, axis=0)) == 5
    np.testing.assert_allclose(gram.singular_values[:5], dense.singular_values[:5], rtol=1e-10)


def test_more_rows_than_columns():
    Phi = np.vstack([np.eye(3), np.ones((2, 3))])
    rep = constraint_rank(Phi)
    assert rep.rank == 3 and rep.dof == 0 and len(rep.redundant_rows) == 2


def test_bad_input():
    Phi = rows(2, 4)
    Phi[1, 2] = np.inf
    with pytest.raises(ConstraintError, match="NaN/Inf"):
        constraint_rank(Phi)
    with pytest.raises(ConstraintError, match="row_labels has 1 entries"):
        constraint_rank(rows(2, 4), row_labels=["a"])
    with pytest.raises(ConstraintError, match="rtol"):
        constraint_rank(rows(2, 4), rtol=-1e-3)
    with pytest.raises(ConstraintError, match="shape"):
        constraint_rank(np.ones(4))
