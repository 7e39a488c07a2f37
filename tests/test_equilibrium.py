"""Static equilibrium, holding inputs, inverse statics and quasi-static sequences of rigid–flexible systems
[DE 6.3], checked against the flexible-only static solver of #2 and against geometry."""

import numpy as np
import pytest

import flexbody as fb
from flexbody.mechanisms.flexible import arm_with_beam
from flexbody.solvers.constrained_statics import holding_inputs, static_equilibrium
from flexbody.solvers.inverse_statics import inverse_statics, quasi_static_sequence


def _tip(beam):
    P = beam.mesh.points
    return int(np.argmax(np.linalg.norm(P - P[beam.nodes("x0")].mean(0), axis=1)))


@pytest.fixture(scope="module")
def arm():
    asm = arm_with_beam(order=1, divisions=(12, 2, 2), q0=(0.3, -0.5), young=7e7).assemble()
    beam = asm.bodies[0]
    return asm, beam, _tip(beam)


@pytest.mark.parametrize("order, divisions", [(1, (12, 2, 2)), (2, (6, 1, 1))])
def test_locked_arm_gives_the_clamped_beam_deflection(order, divisions):
    """Joints locked: the beam deflects exactly as the beam alone clamped at the flange (old static
    solver, eliminated clamp); measured 8e-14 (8-node) and 1.8e-10 (27-node) relative at the tip."""
    asm = arm_with_beam(order=order, divisions=divisions, q0=(0.3, -0.5), locked=True, young=7e7).assemble()
    eq = static_equilibrium(asm)
    beam = asm.bodies[0]
    alone = fb.FlexibleBody("alone", beam.mesh, beam.material, locking=beam.locking)
    ref = fb.solve_static(fb.System([alone], [fb.Fix(alone, "x0")], loads=[fb.Gravity(alone)])).q[-1]
    tip = _tip(beam)
    d_arm = eq.q[asm.flexible.slice][3 * tip : 3 * tip + 3] - beam.mesh.points[tip]
    d_ref = ref[3 * tip : 3 * tip + 3] - beam.mesh.points[tip]
    assert np.linalg.norm(d_ref) > 1e-2  # a real deflection
    assert np.linalg.norm(d_arm - d_ref) <= 1e-8 * np.linalg.norm(d_ref)
    assert eq.residual <= 1e-8 and eq.violation <= 1e-12


def test_holding_inputs_equal_the_locked_joint_multipliers():
    """Inputs that hold the posture = torques the locks carry (two independent formulations)."""
    locked = arm_with_beam(order=1, divisions=(8, 1, 1), q0=(0.3, -0.5), locked=True, young=7e7).assemble()
    free = arm_with_beam(order=1, divisions=(8, 1, 1), q0=(0.3, -0.5), young=7e7).assemble()
    eq = static_equilibrium(locked)
    tau_k, held = holding_inputs(free)
    assert np.allclose(held.q, eq.q, atol=1e-12)
    assert np.allclose(np.abs(tau_k), np.abs(eq.lam[-2:]), rtol=1e-8)


def test_inverse_statics_places_the_tip_node(arm):
    asm, beam, tip = arm
    task = fb.PointTask(fb.Node(beam, tip), components=(0, 2))
    target = beam.mesh.points[tip][[0, 2]] + np.array([-0.1, 0.15])
    sol = inverse_statics(asm, task, target)
    assert sol.reachable and sol.residual <= 1e-8 and sol.rank == 2
    assert sol.equilibrium.residual <= 1e-7
    again = static_equilibrium(asm, tau_k=sol.tau_k, q0=sol.q)  # an independent re-solve
    x = again.q[asm.offsets[beam] + 3 * tip :][:3][[0, 2]]
    assert np.abs(x - target).max() <= 1e-8


def test_inverse_statics_under_determined_and_unreachable(arm):
    asm, beam, tip = arm
    one = fb.PointTask(fb.Node(beam, tip), components=(2,))
    sol = inverse_statics(asm, one, beam.mesh.points[tip][[2]] + 0.15)
    assert sol.reachable and sol.rank == 1
    far = fb.PointTask(fb.Node(beam, tip), components=(0, 2))
    out = inverse_statics(asm, far, np.array([3.0, 0.0]))
    # the arm (0.9 m) and beam (0.6 m) stretch towards the target: residual = 3 − reach (beam sag < 1 cm)
    assert not out.reachable and abs(out.residual - 1.5) <= 0.01


def test_quasi_static_sequence_follows_a_path(arm):
    asm, beam, tip = arm
    task = fb.PointTask(fb.Node(beam, tip), components=(0, 2))
    start = beam.mesh.points[tip][[0, 2]]
    path = start + np.linspace(0.0, 1.0, 4)[:, None] * np.array([-0.05, 0.1])
    res = quasi_static_sequence(asm, task, path)
    assert res.n_steps == 4 and np.all(res.histories["reachable"] == 1.0)
    assert np.abs(res.histories["task_x"] - path).max() <= 1e-8


def test_bad_input(arm):
    asm, beam, tip = arm
    task = fb.PointTask(fb.Node(beam, tip), components=(0, 2))
    with pytest.raises(fb.ModelError, match="target must be 2"):
        inverse_statics(asm, task, np.zeros(3))
    with pytest.raises(fb.StateError, match="tau_k must be 2"):
        static_equilibrium(asm, tau_k=np.zeros(5))
    with pytest.raises(fb.FlexbodyError, match="load_steps"):
        static_equilibrium(asm, load_steps=0)
    with pytest.raises(fb.ConvergenceError) as info:  # no torques: the raised arm falls
        static_equilibrium(asm, max_iterations=5, max_bisections=1)
    assert info.value.residual_history


def test_rank_of_the_direct_map_for_a_nodal_task_collapses_with_the_mesh():
    """[DE 6.3]: J̄ᵀΘᵀSᵀ for a beam-tip task with the joints actuated; the coupling through the consistent
    mass falls by ≈ 0.27 per element, so the map is numerically rank 0 once the beam has ~24 elements."""
    from flexbody.control.actuation import actuation_report

    sigma = {}
    for nx in (6, 24):
        asm = arm_with_beam(order=1, divisions=(nx, 1, 1), q0=(0.3, -0.5)).assemble()
        beam = asm.bodies[0]
        task = fb.PointTask(fb.Node(beam, _tip(beam)), components=(0, 2))
        state = asm.initial_state()
        report = actuation_report(asm, 0.0, state.q, state.v, task=task)
        sigma[nx] = report.maps["direct"]
    assert sigma[6].ok and sigma[6].rank == 2
    assert not sigma[24].ok and sigma[24].rank == 0
    assert max(sigma[24].singular_values) <= 1e-12
