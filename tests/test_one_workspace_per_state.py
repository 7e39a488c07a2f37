"""One workspace per state: every consumer of a state (the dynamics of an RK4 stage, the controller, the recorder
and its energies, the position correction and velocity projection, each Newton iteration of generalized-α) reads
the terms of one :class:`flexbody.system.Workspace`, made once for that state by the code that visits it; the
terms a state needs are computed once in it (issue 32: a generalized-α Newton iteration computes the flexible
internal force once, RK4 assembles Φ once per stage state, the finite-difference rigid tangent touches only the
joint rows)."""

import numpy as np
import pytest

import flexbody as fb
from flexbody.system import workspace
from flexbody.system.flexible_stack import FlexiblePart
from flexbody.system.row_pattern import RowPattern

STEPS = 10


@pytest.fixture
def made(monkeypatch):
    """The states (t, q, v) for which a workspace was made, in order."""
    states = []
    make = workspace.Workspace.__init__

    def counting(self, asm, t, q, v, position=None, **kw):
        states.append((float(t), q.tobytes(), v.tobytes()))
        make(self, asm, t, q, v, position, **kw)

    monkeypatch.setattr(workspace.Workspace, "__init__", counting)
    return states


@pytest.fixture
def assembled(monkeypatch):
    """The states (t, q, v) at which the general route assembled a Φ, in order."""
    found = []
    rows = workspace.Workspace._constraint_rows

    def counting(self, jacobian):
        if jacobian and "Phi" not in self._position:
            found.append((self.t, self.q.tobytes(), self.v.tobytes()))
        return rows(self, jacobian)

    monkeypatch.setattr(workspace.Workspace, "_constraint_rows", counting)
    return found


def pidc(asm):
    task = fb.JointTask([asm.trees[0].link("l1")], name="theta")
    return fb.control.ProjectedInverseDynamicsControl(task, fb.control.Setpoint(np.array([1.0])), kp=25.0, kv=10.0)


def test_rk4_with_a_controller_makes_four_workspaces_per_step(made):
    """Four stages, four states per step; the controller, the dynamics and the recorder (with the energies)
    of a stage share its workspace. The one before the steps is the consistent start at rest."""
    asm = fb.mechanisms.slider_crank(actuated=(0, 1)).assemble()
    res = fb.simulate(asm, STEPS * 1e-3, integrator=fb.RK4(dt=1e-3), controller=pidc(asm), stabilization=None)
    assert res.n_steps == STEPS + 1 and "energy" in res.histories and "task_command" in res.histories
    assert len(made) == 4 * STEPS + 1
    assert len(set(made)) == len(made)


def test_position_correction_makes_one_workspace_per_iterate_and_shares_it_with_the_next_step(made):
    """The correction reads φ and Φ of each iterate from one workspace; the velocity projection reads the last
    one's, and the next step starts in that workspace at the projected velocities (sharing its terms of q)."""
    asm = fb.mechanisms.slider_crank().assemble()
    res = fb.simulate(asm, STEPS * 1e-3, integrator=fb.RK4(dt=1e-3))
    assert sum(res.histories["corrections"]) > 0
    # start (consistent configuration and velocity: its own iterates) + 3 stages per step + the corrected
    # iterates and the projected state of each step
    assert len(made) == len(set(made))
    positions = {(t, q) for t, q, _ in made}
    assert len(made) - len(positions) == STEPS  # the projected state of each step shares its q


def test_rk4_assembles_the_constraint_jacobian_once_per_stage_state(made, assembled):
    """General route (the program switched off): Φ is assembled once per state an RK4 step visits — its stages
    and its correction iterates; the velocity projection and the next step's first stage (at the projected
    velocities) share the corrected configuration's Φ."""
    asm = fb.mechanisms.slider_crank().assemble()
    asm.program = None
    res = fb.simulate(asm, STEPS * 1e-3, integrator=fb.RK4(dt=1e-3), consistent_initial=False)
    assert sum(res.histories["corrections"]) > 0
    assert len(assembled) == len(set(assembled)) and set(assembled) <= set(made)  # no state assembled twice
    assert len(made) == len(set(made)) == len(assembled) + STEPS  # the first stage of steps 1..STEPS shares


def test_rk4_decomposes_the_constraint_jacobian_once_per_stage_state(monkeypatch):
    """Projection formulation with position correction: each Φ an RK4 run meets is decomposed once — the
    correction and the velocity projection by the workspace's independent rows, which the next step's first stage
    reuses in the forward dynamics (and its controller would); the other stages by the forward dynamics' kernel."""
    from flexbody.dynamics import compiled

    decomposed = []
    rows, kernel = workspace.independent_rows, compiled.nb_ortho

    def counted_rows(Phi, rtol, atol):
        decomposed.append(np.asarray(Phi).tobytes())
        return rows(Phi, rtol, atol)

    def counted_kernel(M, h, tau, Phi, *args):
        decomposed.append(Phi.tobytes())
        return kernel(M, h, tau, Phi, *args)

    monkeypatch.setattr(workspace, "independent_rows", counted_rows)
    monkeypatch.setattr(compiled, "nb_ortho", counted_kernel)
    asm = fb.mechanisms.slider_crank().assemble()
    moving = np.ones(asm.n_dofs)  # so that no two stages share a configuration (at rest, stage 2 would not move)
    res = fb.simulate(asm, STEPS * 1e-3, integrator=fb.RK4(dt=1e-3), formulation="projection", v0=moving)
    assert sum(res.histories["corrections"]) > 0
    assert len(decomposed) == len(set(decomposed))  # no Φ decomposed twice
    # per step: 3 stages in the kernel, the correction's configurations and the projected one in the workspace;
    # the first stage of each step (the projected configuration) reuses the workspace's decomposition
    assert len(decomposed) >= 4 * STEPS + 1


def test_generalized_alpha_makes_one_workspace_per_newton_iteration(made):
    """One workspace per Newton iteration, one per accepted step for its record, its power and its controller
    (the converged state), and one for the consistent start (which the initial acceleration and the first record
    share)."""
    asm = fb.mechanisms.flexible_pendulum().assemble()
    res = fb.simulate(asm, 5 * 2e-3, integrator=fb.GeneralizedAlpha(dt=2e-3))
    stats = res.metadata["statistics"]
    assert stats["rejected"] == 0 and stats["steps"] == 5
    consistent = len(made) - 1 - stats["newton_iterations"] - stats["steps"]
    assert consistent >= 0 and len(set(made[consistent:])) == len(made) - consistent


def test_a_generalized_alpha_newton_iteration_computes_the_flexible_force_once(monkeypatch):
    """An iteration that forms its matrix takes k(q, v) from the Jacobians' pass over the elements; the others
    compute it once; the recorded state computes it once for its power and the record."""
    calls = {"force": 0, "jacobians": 0}
    force, jacobians = FlexiblePart.internal_force, FlexiblePart.jacobians

    def counted_force(self, q_f, v_f):
        calls["force"] += 1
        return force(self, q_f, v_f)

    def counted_jacobians(self, q_f, v_f, **kw):
        calls["jacobians"] += 1
        return jacobians(self, q_f, v_f, **kw)

    monkeypatch.setattr(FlexiblePart, "internal_force", counted_force)
    monkeypatch.setattr(FlexiblePart, "jacobians", counted_jacobians)
    asm = fb.mechanisms.flexible_pendulum(damping=1e-3).assemble()
    calls.update(force=0, jacobians=0)
    res = fb.simulate(asm, 5 * 2e-3, integrator=fb.GeneralizedAlpha(dt=2e-3), consistent_initial=False)
    stats = res.metadata["statistics"]
    iterations, steps = stats["newton_iterations"], stats["steps"]
    assert stats["jacobian_calls"] == calls["jacobians"] >= 1
    assert stats["force_calls"] == iterations - calls["jacobians"]
    # per accepted step, the new state: k(q, v) and the elastic k(q, 0) for the dissipated power; the start: the
    # initial acceleration, its power and the elastic force
    assert calls["force"] == stats["force_calls"] + 2 * steps + 2


def test_the_finite_difference_rigid_tangent_touches_only_the_joint_rows(monkeypatch):
    """The joint rows s·(M q̈ + h)_r − Q_r − Φ_rᵀλ at a perturbed state evaluate the trees and the constraints on
    joint columns only: no flexible force, no flexible-only constraint row, no sparse Φ; the tangent equals the
    central differences of the full residual's joint rows."""
    from flexbody.solvers.constrained_equations import EquationResidual

    system = fb.mechanisms.arm_with_beam(divisions=(4, 1, 1), q0=(0.3, -0.4))
    beam = system.bodies[0] if hasattr(system, "bodies") else None
    asm0 = system.assemble()
    beam = asm0.bodies[0]
    tip = fb.nearest_node(beam, beam.mesh.points.max(axis=0))
    system.constraints.append(fb.Distance(tip, fb.Node(beam, 0), 0.61, name="flexible_only"))
    asm = system.assemble()
    joint = {c.name for c, _ in asm.joint_constraints}
    assert joint == {"flange"}
    evaluated, matrices = [], []
    for c in asm.constraints:
        original = c.evaluate

        def counted(ev, c=c, original=original):
            evaluated.append(c.name)
            return original(ev)

        monkeypatch.setattr(c, "evaluate", counted)
    monkeypatch.setattr(FlexiblePart, "internal_force", lambda *a, **k: pytest.fail("flexible force"))
    monkeypatch.setattr(FlexiblePart, "jacobians", lambda *a, **k: pytest.fail("flexible Jacobians"))
    monkeypatch.setattr(RowPattern, "matrix", lambda self, pieces: matrices.append(1))
    rng = np.random.default_rng(3)
    q = asm.q0 + 1e-3 * rng.normal(size=asm.n_dofs)
    v, qdd, lam = (rng.normal(size=n) for n in (asm.n_dofs, asm.n_dofs, asm.n_constraints))
    equations = EquationResidual(asm)
    A = equations.rigid_tangent(0.0, q, v, qdd, lam, c_q=1.0, c_v=0.5)
    assert set(evaluated) == {"flange"} and not matrices
    monkeypatch.undo()

    def joint_rows(x, y):
        ws = asm.workspace(0.0, x, y)
        r, _, _ = EquationResidual(asm).evaluate(ws, qdd, lam, np.zeros(asm.n_dofs))
        return r[: asm.n_rigid]

    h = 1e-5
    for j in range(asm.n_rigid):
        dq = np.zeros(asm.n_dofs)
        dq[j] = h * max(1.0, abs(q[j]))
        column = (joint_rows(q + dq, v) - joint_rows(q - dq, v)) / (2 * dq[j])
        dv = np.zeros(asm.n_dofs)
        dv[j] = h * max(1.0, abs(v[j]))
        column += 0.5 * (joint_rows(q, v + dv) - joint_rows(q, v - dv)) / (2 * dv[j])
        assert np.allclose(A[:, j], column, rtol=1e-9, atol=1e-9 * np.abs(A).max())


def test_the_terms_of_a_workspace_are_computed_once_and_cannot_be_changed():
    asm = fb.mechanisms.slider_crank().assemble()
    state = asm.initial_state()
    ws = asm.workspace(0.0, state.q, state.v)
    first = ws.terms()
    assert ws.terms() is first and ws.mass_and_forces()[0] is first.M
    with pytest.raises(ValueError):
        first.h[0] = 1.0
    assert asm.workspace(0.0, state.q, state.v).terms() is not first  # a new workspace: no hidden cache
    shared = ws.with_velocity(state.v + 1.0)
    assert shared.constraint_rows()[1] is ws.constraint_rows()[1] and shared.mass_matrix() is ws.mass_matrix()
    assert shared.terms().h is not first.h


def test_asm_evaluate_is_a_deprecated_alias_of_workspace():
    asm = fb.mechanisms.slider_crank().assemble()
    with pytest.deprecated_call(match="asm.workspace"):
        ws = asm.evaluate(0.0, asm.q0)
    assert isinstance(ws, fb.system.Workspace)
    with pytest.deprecated_call(match="ws.constraint_rows"):
        assert asm.constraint_rows(ws)[1].shape == (asm.n_constraints, asm.n_dofs)
