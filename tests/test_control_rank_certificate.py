"""The controllers' constraint factorisation: a Householder QR stands in for the SVD only where it certifies the
rank the SVD would find (flexbody.linalg.rank.independent_rows), and a controller's workspace keeps what depends
only on the pattern of Φ and on the constant flexible mass (flexbody.control.workspace) without changing what
is computed beyond round-off.

Checked: the certified rank equals the SVD rank on a sweep of σ_min across the tolerance (the QR declines near
it); the QR basis spans the SVD's row space with the same β and multipliers; the direct map of the flagship's
arm from a controller's workspace (columns of M⁻¹ kept) equals the one from solves and the one of the large-model
path; the workspace rebuilds its structures when the pattern of Φ changes and two states of one workspace used
in turn give their own results.
"""

import numpy as np
import pytest
import scipy.sparse as sp

from flexbody import control as ctl
from flexbody.control.context import ControlContext
from flexbody.control.maps import direct_mapping
from flexbody.control.workspace import ControlWorkspace
from flexbody.linalg.rank import (
    ConstraintQR,
    ConstraintSVD,
    StoredColumns,
    certified_qr,
    constraint_svd,
    independent_rows,
)
from flexbody.mechanisms.flexible import arm_with_beam
from flexbody.system.assembled import State


def _with_singular_values(s, n, seed=0):
    """A (len(s), n) matrix with singular values s (random orthogonal factors)."""
    rng = np.random.default_rng(seed)
    m = len(s)
    U = np.linalg.qr(rng.standard_normal((m, m)))[0]
    V = np.linalg.qr(rng.standard_normal((n, m)))[0]
    return (U * np.asarray(s, dtype=float)) @ V.T


@pytest.mark.parametrize("ratio", [1e-11, 1e-10, 5e-10, 9e-10, 1.1e-9, 2e-9, 2.5e-9, 1e-8, 1e-7, 1e-3, 0.5])
@pytest.mark.parametrize("scale", [1e-3, 1.0, 1e4])
def test_certified_rank_is_the_svd_rank_across_the_tolerance(ratio, scale):
    """σ_min/σ_max swept through rtol = 1e-9: the rank of independent_rows is always the SVD's; the QR is used
    only well clear of the tolerance (σ_min above 2·rtol·‖Φ‖_F, condition ≤ 1e6)."""
    s = scale * np.array([1.0, 0.7, 0.3, ratio])
    Phi = _with_singular_values(s, 9)
    rows, reference = independent_rows(Phi), constraint_svd(Phi)[0]
    assert rows.rank == reference.rank
    if isinstance(rows, ConstraintQR):
        assert rows.rank == 4 and ratio >= 1e-6
        assert rows.sigma_min_bound <= s.min() * (1 + 1e-12) and rows.sigma_max_bound >= s.max()
    if ratio <= 1e-7:
        assert isinstance(rows, ConstraintSVD)  # in doubt (or near it): the SVD decides


@pytest.mark.parametrize(
    "Phi",
    [
        np.vstack([np.eye(3, 5), np.eye(3, 5)[:1]]),  # a duplicated row
        np.vstack([np.eye(3), np.ones((1, 3))]),  # more rows than columns
        np.zeros((0, 4)),  # no rows
        np.zeros((2, 4)),  # zero rows
        1e-13 * np.eye(2, 4),  # below the absolute floor atol
    ],
)
def test_the_qr_declines_where_the_rank_is_not_full(Phi):
    assert certified_qr(Phi, 1e-9, 1e-12) is None
    assert independent_rows(Phi).rank == constraint_svd(Phi)[0].rank


def test_qr_basis_spans_the_svd_row_space_with_the_same_bias_and_multipliers():
    Phi = _with_singular_values([3.0, 1.0, 0.2], 7, seed=3)
    qr, svd = certified_qr(Phi, 1e-9, 1e-12), constraint_svd(Phi)[0]
    assert isinstance(qr, ConstraintQR) and qr.rank == svd.rank == 3
    np.testing.assert_allclose(qr.Vt @ qr.Vt.T, np.eye(3), atol=1e-14)
    np.testing.assert_allclose(qr.Vt.T @ qr.Vt, svd.Vt.T @ svd.Vt, atol=1e-14)  # same projector
    bias = np.array([0.3, -1.0, 2.0])
    np.testing.assert_allclose(qr.Vt.T @ qr.coordinates(bias), svd.Vt.T @ svd.coordinates(bias), atol=1e-13)
    lam_hat = np.array([1.0, 2.0, -0.5])  # Φᵀλ = Φ̂ᵀλ̂ for the multipliers returned
    np.testing.assert_allclose(Phi.T @ qr.multipliers(lam_hat), qr.Vt.T @ lam_hat, atol=1e-13)
    np.testing.assert_allclose(Phi.T @ svd.multipliers(svd.Vt @ qr.Vt.T @ lam_hat), qr.Vt.T @ lam_hat, atol=1e-13)


def test_stored_columns_scatter_the_values_and_follow_the_pattern():
    Phi = sp.csr_matrix(np.array([[0.0, 2.0, 0.0, -1.0], [0.0, 0.0, 0.0, 3.0]]))
    stored = StoredColumns(Phi)
    np.testing.assert_array_equal(stored.columns, [1, 3])
    np.testing.assert_array_equal(stored.block(Phi), [[2.0, -1.0], [0.0, 3.0]])
    assert stored.fits(sp.csr_matrix(2.0 * Phi.toarray()))
    assert not stored.fits(sp.csr_matrix(np.array([[1.0, 2.0, 0.0, -1.0], [0.0, 0.0, 0.0, 3.0]])))


@pytest.fixture(scope="module")
def arm():
    asm = arm_with_beam(divisions=(6, 1, 1), q0=(0.3, -0.5), young=7e7).assemble()
    task = ctl.PointTask(asm.trees[0].point("l2", (0.4, 0.0, 0.0)), components=(0, 2))
    rng = np.random.default_rng(1)
    q = asm.q0 + 1e-4 * rng.standard_normal(asm.n_dofs)
    v = 0.01 * rng.standard_normal(asm.n_dofs)
    return asm, task, q, v


def test_direct_map_from_kept_mass_columns_equals_the_one_from_solves(arm, monkeypatch):
    asm, task, q, v = arm
    kept = ControlContext(asm, 0.0, q, v, workspace=ControlWorkspace(mass_columns=True))
    solved = ControlContext(asm, 0.0, q, v)
    assert kept.mass_columns is not None and solved.mass_columns is None
    assert isinstance(kept.basis, ConstraintQR) and kept.rank == kept.svd.rank == asm.n_constraints
    a, b = direct_mapping(kept, kept.task(task)), direct_mapping(solved, solved.task(task))
    np.testing.assert_allclose(a.B, b.B, rtol=1e-12, atol=1e-14 * np.abs(b.B).max())
    np.testing.assert_allclose(a.gamma, b.gamma, rtol=1e-10, atol=1e-12 * np.abs(b.gamma).max())
    np.testing.assert_allclose(a.full_actuation(), b.full_actuation(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(kept.H, solved.H, rtol=1e-12)
    monkeypatch.setattr("flexbody.control.context.DENSE_MASS_LIMIT", 10)  # the large-model path
    large = ControlContext(asm, 0.0, q, v, workspace=ControlWorkspace(mass_columns=True))
    assert large.large and large.mass_columns is None
    c = direct_mapping(large, large.task(task))
    np.testing.assert_allclose(c.B, b.B, rtol=1e-12, atol=1e-14 * np.abs(b.B).max())
    np.testing.assert_allclose(c.gamma, b.gamma, rtol=1e-10, atol=1e-12 * np.abs(b.gamma).max())


def test_two_states_of_one_workspace_used_in_turn_give_their_own_results(arm):
    asm, _task, q, v = arm
    workspace = ControlWorkspace(mass_columns=True)
    q2 = q.copy()
    q2[:2] += (0.2, -0.3)  # the joints move: the rigid block changes
    first = ControlContext(asm, 0.0, q, v, workspace=workspace)
    second = ControlContext(asm, 0.0, q2, v, workspace=workspace)
    _ = first.mass_columns, second.mass_columns  # the second fills the shared layout last
    x = np.zeros(asm.n_dofs)
    x[:2] = (1.0, -2.0)
    for ctx, qs in ((first, q), (second, q2), (first, q)):
        fresh = ControlContext(asm, 0.0, qs, v)
        np.testing.assert_allclose(ctx.solve_M(x), fresh.solve_M(x), rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(ctx.constraint_inertia, fresh.constraint_inertia, rtol=1e-12)


def test_workspace_rebuilds_when_the_pattern_of_phi_changes(arm):
    asm, _task, q, v = arm
    workspace = ControlWorkspace(mass_columns=True)
    ctx = ControlContext(asm, 0.0, q, v, workspace=workspace)
    stored = ctx._stored
    assert ControlContext(asm, 0.0, q + 1e-6, v, workspace=workspace)._stored is stored  # same pattern: kept
    Phi = ctx.Phi.tolil()
    Phi[0, asm.n_dofs - 1] = 1.0  # a new stored column
    assert workspace.stored_columns(Phi.tocsr()) is not stored


def test_controller_keeps_one_workspace_and_gives_the_commanded_acceleration(arm):
    from flexbody.dynamics import forward

    asm, task, q, v = arm
    controller = ctl.DirectMappingControl(task, ctl.Setpoint(np.array([0.7, -0.1])), kp=100.0, kv=20.0)
    for dq in (0.0, 1e-3):
        tau_k = controller(0.0, State(0.0, q + dq, v), asm)
        a = forward(asm, State(0.0, q + dq, v), asm.S.T @ tau_k).a
        terms = task.evaluate(asm.workspace(0.0, q + dq, v))
        f_star = controller.diagnostics["task_command"]
        assert np.abs(terms.J @ a + terms.bias - f_star).max() < 1e-10 * max(1.0, np.abs(f_star).max())
    assert controller.workspace.keeps_mass_columns and controller.workspace._columns is not None
