"""Constrained task-level control of rigid–flexible systems (#5 with the controllers of #4).

A two-link arm carries a flexible beam; the task is the flange point (the tip of link l2), both joints are
actuated and every nodal coordinate is passive. The direct mapping [DE-65..70] must make the plant's task
acceleration equal the command, checked with the constrained forward dynamics (independent code); its map
J̄ᵀΘᵀSᵀ is checked against a brute-force dense evaluation of the [DE] formulas; and on a model above the dense
limit the controller and the actuation report run without forming (n, n), (n, r) or (n − k, n) arrays.
"""

import numpy as np
import pytest

import flexbody as fb
from flexbody import control as ctl
from flexbody.control.context import ControlContext
from flexbody.control.maps import direct_mapping
from flexbody.dynamics import forward
from flexbody.errors import FlexbodyError
from flexbody.linalg.block_mass import DENSE_MASS_LIMIT
from flexbody.mechanisms.flexible import arm_with_beam
from flexbody.system.assembled import State


def _arm(divisions):
    return arm_with_beam(divisions=divisions, q0=(0.3, -0.5), young=7e7).assemble()


def _flange_task(asm):
    return fb.PointTask(asm.trees[0].point("l2", (0.4, 0.0, 0.0)), components=(0, 2))


def _state(asm):
    q, v = asm.q0.copy(), np.zeros(asm.n_dofs)
    v[:2] = (0.3, -0.2)
    v[asm.n_rigid :] = 0.01 * np.sin(np.arange(asm.n_dofs - asm.n_rigid))  # a vibrating beam…
    return q, _consistent(asm, q, v)


def _consistent(asm, q, v):
    """…projected onto the velocity constraints Φ v = 0 (least change of v)."""
    Phi = asm.terms(0.0, q, v).Phi
    Phi = Phi.toarray() if hasattr(Phi, "toarray") else Phi
    return v - np.linalg.pinv(Phi) @ (Phi @ v)


def _task_acceleration_error(asm, task, controller, q, v):
    tau_k = controller(0.0, State(0.0, q, v), asm)
    a = forward(asm, State(0.0, q, v), asm.S.T @ tau_k).a
    terms = task.evaluate(asm.workspace(0.0, q, v))
    f_star = controller.diagnostics["task_command"]
    return np.abs(terms.J @ a + terms.bias - f_star).max() / max(1.0, np.abs(f_star).max())


@pytest.fixture(scope="module")
def small():
    asm = _arm((12, 2, 2))  # 353 coordinates, 27 constraint rows
    return asm, _flange_task(asm), *_state(asm)


@pytest.fixture(scope="module")
def large():
    asm = _arm((40, 5, 5))  # 4430 coordinates > DENSE_MASS_LIMIT
    assert asm.n_dofs > DENSE_MASS_LIMIT
    return asm, _flange_task(asm), *_state(asm)


def test_direct_map_equals_a_brute_force_dense_evaluation(small):
    """B = J̄ᵀΘᵀSᵀ and γ from dense M, Φ, explicit inverses [DE-22, DE-34, DE-38, DE-50, DE-68, DE-69]."""
    asm, task, q, v = small
    ctx = ControlContext(asm, 0.0, q, v)
    mapping = direct_mapping(ctx, ctx.task(task))
    ev = asm.workspace(0.0, q, v)
    M, b, g = ev.mass_bias_gravity()
    M = M.toarray()
    t = asm.terms(0.0, q, v)
    Phi, S, J = t.Phi.toarray(), np.asarray(asm.S, float), task.evaluate(ev).J
    Minv = np.linalg.inv(M)
    H = np.linalg.inv(Phi @ Minv @ Phi.T)  # Φ has independent rows here
    Phi_bar = Minv @ Phi.T @ H
    Theta_T = np.eye(asm.n_dofs) - Phi.T @ Phi_bar.T
    Lam = np.linalg.inv(J @ Minv @ J.T)
    J_bar = Minv @ J.T @ Lam
    B = J_bar.T @ Theta_T @ S.T
    gamma = -J_bar.T @ Phi.T @ (Phi_bar.T @ (b + g) - H @ t.bias)
    np.testing.assert_allclose(mapping.B, B, rtol=1e-9, atol=1e-12 * np.abs(B).max())
    np.testing.assert_allclose(mapping.gamma, gamma, rtol=1e-8, atol=1e-10 * np.abs(gamma).max())


@pytest.mark.parametrize("which", ["small", "large"])
def test_direct_mapping_control_produces_the_commanded_task_acceleration(which, request):
    asm, task, q, v = request.getfixturevalue(which)
    c = ctl.DirectMappingControl(task, ctl.Setpoint(np.array([0.7, -0.1])), kp=100.0, kv=20.0)
    assert _task_acceleration_error(asm, task, c, q, v) < 1e-11
    assert np.all(c.diagnostics["tau_model"][asm.n_rigid :] == 0.0)  # no force on the beam's nodes
    assert asm.flexible.mass.factorizations == 1


def test_large_model_keeps_the_row_space_sparse_and_forms_the_inverse_mass_block_once(large):
    asm, _task, q, v = large
    ctx = ControlContext(asm, 0.0, q, v)
    assert ctx.large and hasattr(ctx.Phi_hat, "toarray")
    m = asm.n_constraints
    assert ctx.Phi_hat.nnz <= ctx.svd.rank * (asm.n_rigid + m)  # joint + constrained nodal columns only
    solves = asm.flexible.mass.inverse_solves
    for _ in range(2):  # another state, same constrained nodes
        ctx = ControlContext(asm, 0.0, q + 1e-3, v)
        _ = ctx.constraint_inertia  # formed here
    assert asm.flexible.mass.inverse_solves - solves <= m  # formed at most once more, then reused
    # the row space agrees with a dense SVD of Φ
    Phi = asm.terms(0.0, q + 1e-3, v).Phi.toarray()
    Vt = np.linalg.svd(Phi, full_matrices=False)[2]
    P_dense = Vt.T @ Vt
    x = np.random.default_rng(0).standard_normal(asm.n_dofs)
    np.testing.assert_allclose(ctx.P_apply(x), x - P_dense @ x, atol=1e-12 * np.abs(x).max())


def test_report_on_a_large_model_checks_the_direct_map_and_names_what_it_skips(large):
    asm, task, q, v = large
    report = ctl.actuation_report(asm, 0.0, q, v, task=task)
    assert report.maps["direct"].ok and report.maps["independent"].ok
    assert not report.maps["passive_constraints"].ok  # nodes cannot be held by constraint forces
    assert report.maps["passive_constraints"].shape == (asm.n_dofs - 2, asm.n_constraints)
    assert set(report.skipped) == {"aghili", "minimal", "passive_nullspace"}
    assert report.ok("direct") and not report.ok("partitioned") and not report.ok("minimal")
    assert "not formed" in str(report) and f"nodal coordinates: {asm.n_dofs - 2} of beam" in str(report)


def test_small_and_large_paths_agree_on_the_direct_map(small, monkeypatch):
    """The sparse row space (large path) and the dense one give the same map on the same model."""
    asm, task, q, v = small
    dense = direct_mapping(ControlContext(asm, 0.0, q, v), task.evaluate(asm.workspace(0.0, q, v)))
    monkeypatch.setattr("flexbody.control.context.DENSE_MASS_LIMIT", 10)
    ctx = ControlContext(asm, 0.0, q, v)
    assert ctx.large
    sparse = direct_mapping(ctx, ctx.task(task))
    np.testing.assert_allclose(sparse.B, dense.B, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(sparse.gamma, dense.gamma, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    "make",
    [
        lambda task: ctl.MinimalMappingControl(task, ctl.Setpoint(np.zeros(2)), 1.0, 1.0),
        lambda task: ctl.PartitionedControl(task, ctl.Setpoint(np.zeros(2)), 1.0, 1.0),
        lambda task: ctl.ProjectedInverseDynamicsControl(task, ctl.Setpoint(np.zeros(2)), 1.0, 1.0),
    ],
)
def test_dense_controllers_refuse_a_large_model_by_name(large, make):
    asm, task, q, v = large
    with pytest.raises(FlexbodyError, match="DirectMappingControl"):
        make(task)(0.0, State(0.0, q, v), asm)
