"""Every public entry point that evaluates a model accepts the System description (assembling it) or says
exactly what to call instead: a newcomer's `fb.simulate(system, ...)` must not answer "give q0 and v0"."""

import numpy as np
import pytest

import flexbody as fb
from flexbody import control as ctl
from flexbody.errors import ConstraintError, FlexbodyError, ModelError


@pytest.fixture(scope="module")
def crank():
    """Aghili's slider-crank as a System and as the AssembledSystem of the same description."""
    system = fb.mechanisms.slider_crank()
    return system, system.assemble()


def _task(asm):
    return fb.JointTask([asm.trees[0].link("l1")])


def test_simulate_and_resume_accept_a_system(crank, tmp_path):
    system, asm = crank
    from_system = fb.simulate(system, 0.05, integrator=fb.RK4(dt=0.01), tau=[1.0, 0.0])
    from_asm = fb.simulate(asm, 0.05, integrator=fb.RK4(dt=0.01), tau=[1.0, 0.0])
    assert np.array_equal(from_system.q, from_asm.q) and np.array_equal(from_system.v, from_asm.v)
    assert from_system.system.n_dofs == asm.n_dofs
    with pytest.raises(FlexbodyError, match="no checkpoint"):  # got past the model: the directory is checked
        fb.resume(system, tmp_path)


def test_dynamics_forms_accept_a_system(crank):
    system, asm = crank
    state = asm.initial_state()
    tau = np.array([1.0, 0.0])
    for method in ("projection", "multiplier", "gauss", "nullspace"):
        a_system = fb.dynamics.forward(system, state, tau, method=method).a
        assert np.array_equal(a_system, fb.dynamics.forward(asm, state, tau, method=method).a), method
    a = fb.dynamics.forward(asm, state, tau).a
    assert np.array_equal(fb.dynamics.inverse(system, state, a).tau, fb.dynamics.inverse(asm, state, a).tau)


def test_configuration_statics_and_control_accept_a_system(crank):
    system, asm = crank
    q = asm.q0 + np.array([0.0, 0.01])
    assert np.array_equal(
        fb.assemble_configuration(system, 0.0, q, fixed=[0]), fb.assemble_configuration(asm, 0.0, q, fixed=[0])
    )
    v = np.array([0.3, 0.1])
    assert np.array_equal(fb.project_velocity(system, 0.0, asm.q0, v), fb.project_velocity(asm, 0.0, asm.q0, v))
    assert np.array_equal(fb.solve_static(system, tau_k=[0.5, 0.0]).q, fb.solve_static(asm, tau_k=[0.5, 0.0]).q)
    assert np.array_equal(fb.holding_inputs(system)[0], fb.holding_inputs(asm)[0])
    task = _task(asm)
    assert str(ctl.actuation_report(system, 0.0, asm.q0, task=task)) == str(
        ctl.actuation_report(asm, 0.0, asm.q0, task=task)
    )
    controller = ctl.DirectMappingControl(task, [1.0], kp=1.0, kv=1.0, model=system)
    assert controller.model.n_dofs == asm.n_dofs  # assembled once, at construction
    run = fb.simulate(system, 0.02, integrator=fb.RK4(dt=0.01), controller=controller)
    assert run.n_steps == 3


def test_operational_space_and_task_history_accept_a_system():
    system = fb.mechanisms.coupled_chain()  # no closure rows: unconstrained form
    system.constraints = []
    asm = system.assemble()
    task = fb.PointTask(asm.trees[0].point(asm.trees[0].links[-1], (0.4, 0.0, 0.0)), components=(0, 1))
    assert np.array_equal(
        fb.operational_space_at(system, 0.0, asm.q0, task=task).Lambda,
        fb.operational_space_at(asm, 0.0, asm.q0, task=task).Lambda,
    )
    run = fb.simulate(asm, 0.02, integrator=fb.RK4(dt=0.01))
    from flexbody.control.tasks import task_history

    assert np.array_equal(task_history(system, task, run)[0], task_history(asm, task, run)[0])


def test_wrong_model_objects_name_what_to_pass(crank):
    system, asm = crank
    with pytest.raises(ModelError, match=r"simulate: expected a flexbody.System or the AssembledSystem"):
        fb.simulate("crank", 1.0)
    with pytest.raises(ModelError, match=r"solve_static: expected a flexbody.System or the AssembledSystem"):
        fb.solve_static("crank")
    with pytest.raises(FlexbodyError, match=r"solve_static: inverse statics needs both task and target"):
        fb.solve_static(system, task=_task(asm))
    with pytest.raises(ConstraintError, match=r"rank_report\(t, q\)"):
        fb.constraint_rank(system)
    mesh = fb.mesh.box(size=(1.0, 0.1, 0.1), divisions=(2, 1, 1))
    beam = fb.FlexibleBody("beam", mesh, fb.StVenantKirchhoff(young=1e7, poisson=0.3, density=1e3))
    with pytest.raises(FlexbodyError, match=r"bodies must be a list"):
        fb.System(beam)
    with pytest.raises(ModelError, match=r"fb.Node\(body, index\)"):
        fb.PointTask(beam)
    with pytest.raises(FlexbodyError, match=r"write_pvd: expected the Results of a run"):
        fb.io.write_pvd("unused", None)


def test_coordinate_views_name_trees_bodies_and_node_sets():
    """asm.coordinates(item, q[, nodes]): a tree's joint coordinates, a body's nodal positions (node-set
    names or indices), for one q or for the rows of results.q, without index arithmetic."""
    asm = fb.mechanisms.arm_with_beam(divisions=(4, 1, 1), q0=(0.3, -0.5)).assemble()
    tree, beam = asm.trees[0], asm.bodies[0]
    q = asm.q0 + np.linspace(0.0, 1e-3, asm.n_dofs)
    assert np.array_equal(asm.coordinates(tree, q), q[:2]) and np.array_equal(asm.coordinates(tree.name, q), q[:2])
    positions = asm.coordinates(beam, q)
    assert positions.shape == (beam.n_nodes, 3)
    assert np.array_equal(positions.ravel(), q[asm.slices[beam]])
    clamp = beam.nodes("x0")
    assert np.array_equal(asm.coordinates(beam, q, nodes="x0"), positions[clamp])
    rows = np.vstack([q, asm.q0])
    assert asm.coordinates(beam, rows, nodes="x0").shape == (2, len(clamp), 3)
    with pytest.raises(fb.StateError, match=r"'wing' is not a tree or body of this system"):
        asm.coordinates("wing", q)
