"""The negative eigenvalues of a tangent on the null space of the constraints (flexbody.solvers.constrained_stability),
counted on a sparse basis (node rows eliminated, the other rows' null space dense on the columns they touch) against
LAPACK's: the eigenvalues of Zᵀ sym(A) Z with Z = scipy.linalg.null_space(Φ), formed densely."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla
import scipy.sparse as sp

from flexbody.solvers.constrained_stability import constrained_negative_eigenvalues


def _dense_count(A: np.ndarray, Phi: np.ndarray) -> int:
    Z = sla.null_space(Phi) if Phi.shape[0] else np.eye(A.shape[0])
    values = np.linalg.eigvalsh(Z.T @ (0.5 * (A + A.T)) @ Z)
    return int(np.count_nonzero(values < -1e-7 * np.abs(values).max()))


def _model(seed: int, n_rigid: int = 4, n_flex: int = 60, negative: int = 5):
    """A = diag(A_r, A_f) with A_f a banded symmetric matrix shifted to have some negative eigenvalues, and Φ with
    node rows (a flexible coordinate ±1, others on rigid coordinates), closure rows on rigid and flexible
    coordinates, and one of them repeated (redundant)."""
    rng = np.random.default_rng(seed)
    A_r = rng.standard_normal((n_rigid, n_rigid))
    A_r = A_r + A_r.T + 0.5 * rng.standard_normal((n_rigid, n_rigid))  # unsymmetric, as differences leave it
    band = sp.diags([rng.standard_normal(n_flex - k) for k in range(3)], [0, 1, 2], shape=(n_flex, n_flex))
    A_f = (band + band.T).toarray()
    A_f -= np.sort(np.linalg.eigvalsh(A_f))[negative] * np.eye(n_flex) - 1e-3 * np.eye(n_flex)
    n = n_rigid + n_flex
    rows = []
    for node in rng.choice(np.arange(n_rigid, n), size=12, replace=False):  # node rows
        row = np.zeros(n)
        row[node] = rng.choice([-1.0, 1.0])
        row[:n_rigid] = rng.standard_normal(n_rigid)
        rows.append(row)
    taken = {int(np.flatnonzero(r[n_rigid:])[0]) + n_rigid for r in rows}
    free = [c for c in range(n_rigid, n) if c not in taken]
    for _ in range(3):  # closures on rigid and free flexible coordinates
        row = np.zeros(n)
        row[:n_rigid] = rng.standard_normal(n_rigid)
        row[rng.choice(free, size=4, replace=False)] = rng.standard_normal(4)
        rows.append(row)
    rows.append(rows[-1].copy())  # a redundant row
    return A_r, sp.csr_matrix(A_f), np.array(rows)


@pytest.mark.parametrize("seed", range(6))
def test_sparse_count_equals_lapack_on_the_null_space(seed):
    A_r, A_f, Phi = _model(seed)
    A = sla.block_diag(A_r, A_f.toarray())
    assert constrained_negative_eigenvalues(A_r, A_f, sp.csr_matrix(Phi)) == _dense_count(A, Phi)


def test_without_rows_the_count_is_that_of_the_tangent():
    A_r, A_f, _ = _model(1)
    A = sla.block_diag(A_r, A_f.toarray())
    assert constrained_negative_eigenvalues(A_r, A_f, sp.csr_matrix((0, A.shape[0]))) == _dense_count(
        A, np.zeros((0, A.shape[0]))
    )


def test_a_fully_held_system_has_nothing_to_lose():
    A_r = -np.eye(2)
    Phi = sp.csr_matrix(np.eye(2))
    assert constrained_negative_eigenvalues(A_r, sp.csr_matrix((0, 0)), Phi) == 0
