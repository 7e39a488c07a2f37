"""Tests of flexbody.gradient: sensitivities of whole generalized-α runs (#36 item 5).

* The adjoint (one backward sweep) equals the forward (tangent-linear) sensitivities on the arm with a beam, for every
  input value, start coordinate and constant (measured 6e-14 to 3e-11 relative).
* Both equal central differences of whole runs (best of a step-size sweep, Newton tolerance 1e-12) to 1e-6 relative:
  the inputs, E, ρ and the damping, and directional derivatives in the start, on the arm with a beam (a soft one here,
  the flagship at full stiffness in ``make test-slow``) and on a closed four-bar; and with rotation vectors (a floating
  base, a spherical joint, a top whose rotation vector passes π), by generalized-α and RK4.
* What the sensitivities cannot take yet is named; bad inputs are refused.
"""

from __future__ import annotations

import numpy as np
import pytest
from input_models import central_differences
from scipy.linalg import null_space

import flexbody as fb
from flexbody.errors import FlexbodyError, ModelError, StateError
from flexbody.solvers.run_gradient import recorded_run, run_gradients

INTEGRATOR = fb.GeneralizedAlpha(dt=2e-3, tol=1e-12, max_iterations=40)


def cost_of_run(asm, cost, inputs, t_end=None, integrator=None, **start) -> float:
    """The cost of a run alone (no sensitivities): the oracle's function."""
    t_end, integrator = T if t_end is None else t_end, INTEGRATOR if integrator is None else integrator
    results = fb.simulate(asm, t_end, integrator=integrator, tau=inputs.forces(asm), record_every=1, **start)
    return cost.of_run(results, inputs)


def rel(x, y) -> float:
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    return float(np.max(np.abs(x - y)) / max(np.max(np.abs(y)), 1e-300))


def _arm(**constants):
    """The arm with a beam (case 16's system, 3 bricks), soft and damped unless told, and a cost on it: the beam's
    residual vibration energy, its tip's final error and the effort."""
    values = {"young": 1e7, "density": 2700.0, "damping": 0.005, **constants}
    asm = fb.mechanisms.arm_with_beam(divisions=(3, 1, 1), q0=(0.3, -0.5), locking=None, **values).assemble()
    beam = asm.flexible.bodies[0]
    tip = fb.constraints.nodes.node(beam, beam.n_nodes - 1)
    cost = fb.FlexibleEnergy(beam) + 0.1 * fb.Effort() + 10.0 * fb.FinalPoint(tip, (1.0, 0.0, 0.3))
    return asm, beam, cost


T, INTERVALS = 0.05, 5
INPUTS = fb.PiecewiseInputs(np.linspace(0.0, T, INTERVALS + 1), np.random.default_rng(0).standard_normal((5, 2)))


@pytest.fixture(scope="module")
def arm_gradients():
    asm, beam, cost = _arm()
    parameters = [(beam, "young"), (beam, "density"), (beam, "damping")]
    adjoint = fb.gradient(asm, T, cost, INPUTS, integrator=INTEGRATOR, parameters=parameters)
    forward = fb.gradient(asm, T, cost, INPUTS, integrator=INTEGRATOR, parameters=parameters, mode="forward")
    return asm, cost, adjoint, forward


def test_the_adjoint_equals_the_forward_sensitivities(arm_gradients):
    _, _, adjoint, forward = arm_gradients
    assert adjoint.mode == "adjoint" and forward.mode == "forward"
    assert adjoint.value == forward.value
    for name in ("inputs", "q0", "v0"):
        assert rel(getattr(adjoint, name), getattr(forward, name)) < 1e-9, name
    for label, value in forward.parameters.items():
        assert abs(adjoint.parameters[label] - value) < 1e-9 * abs(value), label
    assert adjoint.results.metadata["statistics"]["rejected"] == 0


def _best(exact, values_at, steps):
    """The smallest relative difference between ``exact`` and central differences (values_at(+h) − values_at(−h))/2h
    over ``steps``."""
    return min(rel(exact, (values_at(h) - values_at(-h)) / (2.0 * h)) for h in steps)


def test_input_gradients_equal_central_differences_of_whole_runs(arm_gradients):
    """All 10 input values (measured 3.3e-9 at a step of 1e-2)."""
    asm, cost, adjoint, _ = arm_gradients
    assert min(rel(adjoint.inputs, central) for central in _input_differences(asm, cost, INPUTS)) < 1e-6


@pytest.mark.parametrize("name, value", [("young", 1e7), ("density", 2700.0), ("damping", 0.005)])
def test_constant_gradients_equal_central_differences_of_rebuilt_runs(arm_gradients, name, value):
    """E (the strain energy in the cost scales with it too), ρ and the Kelvin–Voigt damping (measured 4e-8, 8e-9)."""
    adjoint = arm_gradients[2]

    def cost_at(h):
        asm, _, cost = _arm(**{name: value * (1.0 + h)})
        return np.array(cost_of_run(asm, cost, INPUTS))

    exact = adjoint.parameters[f"beam.{name}"] * value  # per relative change
    assert _best(np.array(exact), cost_at, (1e-3, 1e-4)) < 1e-6


def test_start_gradients_equal_directional_differences(arm_gradients):
    """Directions of q₀ and v₀ tangent to the constraints (so that the run's consistent start keeps them to first
    order): measured 1e-6 and 6e-8 at steps 1e-5 and 1e-4."""
    asm, cost, adjoint, _ = arm_gradients
    q0, v0 = adjoint.results.q[0], adjoint.results.v[0]
    Phi = asm.terms(0.0, q0).Phi
    tangent = null_space(Phi.toarray() if hasattr(Phi, "toarray") else Phi)
    d = tangent @ np.random.default_rng(9).standard_normal(tangent.shape[1])
    d /= np.abs(d).max()

    def along_q(h):
        return np.array(cost_of_run(asm, cost, INPUTS, q0=q0 + h * d))

    def along_v(h):
        return np.array(cost_of_run(asm, cost, INPUTS, v0=v0 + h * d))

    assert _best(np.array(adjoint.q0 @ d), along_q, (1e-5, 1e-6)) < 1e-5
    assert _best(np.array(adjoint.v0 @ d), along_v, (1e-4, 1e-5)) < 1e-6


def test_a_closed_loop_equals_central_differences():
    """A four-bar (two closure rows, one actuated crank), 25 steps, a cost on its final state."""
    asm = fb.mechanisms.four_bar().assemble()
    rng = np.random.default_rng(1)
    n, n_u = asm.n_dofs, asm.S.shape[0]
    cost = fb.FinalState(wq=rng.random(n), wv=rng.random(n), q_target=rng.standard_normal(n)) + fb.Effort(0.5)
    inputs = fb.PiecewiseInputs(np.linspace(0.0, T, 6), rng.standard_normal((5, n_u)))
    exact = fb.gradient(asm, T, cost, inputs, integrator=INTEGRATOR)
    assert min(rel(exact.inputs, central) for central in _input_differences(asm, cost, inputs)) < 1e-6


def _input_differences(asm, cost, inputs, steps=(1e-2, 1e-3), t_end=None, integrator=None, start=None):
    """Central differences of the run's cost in each input value, for each of ``steps`` (``start``: q0, v0 of the
    runs)."""
    start = {} if start is None else start

    def run_cost(values):
        return cost_of_run(asm, cost, inputs.with_values(values), t_end, integrator, **start)

    return [_differences_in_inputs(run_cost, inputs, h) for h in steps]


def _directional_gaps(asm, cost, gradient, inputs, step, count=2, seed=0, start=None) -> float:
    """The largest |∇J·d − (J(U + h d) − J(U − h d))/2h| / (‖∇J‖‖d‖) over ``count`` random unit directions d of the
    input values (central differences of whole runs along d: two runs per direction instead of two per value)."""
    start = {} if start is None else start
    rng = np.random.default_rng(seed)
    worst = 0.0
    for _ in range(count):
        d = rng.standard_normal(inputs.values.shape)
        d /= np.linalg.norm(d)
        ends = [cost_of_run(asm, cost, inputs.with_values(inputs.values + h * d), **start) for h in (step, -step)]
        worst = max(
            worst, abs(float(np.sum(gradient * d)) - (ends[0] - ends[1]) / (2 * step)) / np.linalg.norm(gradient)
        )
    return worst


def _differences_in_inputs(run_cost, inputs, step: float) -> np.ndarray:
    """Central differences of ``run_cost(values)`` in each input value."""
    return central_differences(run_cost, inputs.values, step)


def test_a_reduced_arm_equals_central_differences():
    """Case 24's reduced arm (a Craig–Bampton beam on link 2), its joint and modal rows' Jacobians exact: the gradient
    equals central differences of whole runs, the forward sensitivities and the gradient with differenced joint
    rows."""
    from case_files import load

    asm = load("24_reduced_arm_beam_control.py").build(reduced=True).assemble()
    rng = np.random.default_rng(1)
    n = asm.n_dofs
    cost = fb.FinalState(wq=rng.random(n), wv=rng.random(n), q_target=0.1 * rng.standard_normal(n)) + fb.Effort(0.1)
    inputs = fb.PiecewiseInputs(np.linspace(0.0, T, 6), rng.standard_normal((5, asm.S.shape[0])))
    adjoint = fb.gradient(asm, T, cost, inputs, integrator=INTEGRATOR)
    forward = fb.gradient(asm, T, cost, inputs, integrator=INTEGRATOR, mode="forward")
    differenced = fb.gradient(asm, T, cost, inputs, integrator=INTEGRATOR, joint_rows="differences")
    assert rel(adjoint.inputs, forward.inputs) < 1e-9
    assert rel(adjoint.inputs, differenced.inputs) < 1e-6
    assert min(rel(adjoint.inputs, central) for central in _input_differences(asm, cost, inputs)) < 1e-6


def test_rows_and_forces_between_links_and_nodes_equal_central_differences():
    """The arm with a rod from a link to the beam's tip node, a spring-damper from the link to a node mid-beam and a
    node held on a sphere: the step matrices couple joint and nodal columns (the rod's and sphere's curvature, the
    spring's cross blocks), and the gradient equals central differences of whole runs along two random directions
    (measured 3.2e-10 of ‖∇J‖ at a step of 1e-2; in every input value at 1e-2: 2.1e-9) and the forward sensitivities
    (3.5e-14)."""
    from test_dynamics_derivatives import tethered

    asm = tethered().assemble()
    rng = np.random.default_rng(4)
    beam = asm.flexible.bodies[0]
    cost = fb.FlexibleEnergy(beam) + 0.1 * fb.Effort() + fb.FinalState(rng.random(asm.n_dofs), rng.random(asm.n_dofs))
    inputs = fb.PiecewiseInputs(np.linspace(0.0, T, 6), rng.standard_normal((5, 2)))
    adjoint = fb.gradient(asm, T, cost, inputs, integrator=INTEGRATOR)
    forward = fb.gradient(asm, T, cost, inputs, integrator=INTEGRATOR, mode="forward")
    assert rel(adjoint.inputs, forward.inputs) < 1e-9
    assert _directional_gaps(asm, cost, adjoint.inputs, inputs, 1e-2) < 1e-6


@pytest.mark.parametrize("name", ["knife_edge", "rolling_disc"])
def test_velocity_level_rows_equal_central_differences(name):
    """A knife edge on the spatial arm and a rolling disc (two rolling rows held as A v = b and the contact row): the
    steps' rows change with q by their ``velocity_derivatives`` and with v by A, and the gradient equals central
    differences of whole runs along two random directions (measured 2.3e-11 and 9.3e-11 of ‖∇J‖ at a step of 1e-3; in
    every input value 6.7e-9 and 4.7e-9) and the forward sensitivities (1e-15)."""
    from test_exact_iteration_matrix import SYSTEMS

    asm = SYSTEMS[name]().assemble()
    rng = np.random.default_rng(5)
    n = asm.n_dofs
    cost = fb.FinalState(wq=rng.random(n), wv=rng.random(n), q_target=0.1 * rng.standard_normal(n)) + fb.Effort(0.1)
    inputs = fb.PiecewiseInputs(np.linspace(0.0, T, 6), rng.standard_normal((5, asm.S.shape[0])))
    start = {}
    if name == "rolling_disc":  # rolling and turning
        start["v0"] = fb.project_velocity(asm, 0.0, asm.q0, np.array([0.0, 0.0, 0.0, 2.0, 0.3, -18.0]))
    adjoint = fb.gradient(asm, T, cost, inputs, integrator=INTEGRATOR, **start)
    forward = fb.gradient(asm, T, cost, inputs, integrator=INTEGRATOR, mode="forward", **start)
    assert rel(adjoint.inputs, forward.inputs) < 1e-9
    assert _directional_gaps(asm, cost, adjoint.inputs, inputs, 1e-3, start=start) < 1e-6


@pytest.mark.slow
def test_the_flagship_equals_central_differences_of_whole_runs():
    """Case 16's arm with its 27-node beam (E 7e7 Pa, damping 2 ms, 1 ms steps, ρ∞ 0.99), open loop: 50 steps under
    10 piecewise torques; the gradient of the beam's residual vibration energy, the effort and the beam tip's final
    error in the inputs and the beam's E and damping against central differences of whole runs (and rebuilt systems
    for the constants), to 1e-6 relative."""
    from case_files import load

    case = load("16_arm_beam_task_control.py")
    integrator = fb.GeneralizedAlpha(dt=1e-3, rho_inf=0.99, tol=1e-12, max_iterations=40)

    def model(**constants):
        asm = case.build(**constants).assemble()
        beam = asm.flexible.bodies[0]
        tip = fb.nearest_node(beam, beam.mesh.points[beam.nodes("x1")].mean(axis=0))
        target = tip.position(asm.workspace(0.0, asm.q0)) + (0.01, 0.0, 0.01)
        return asm, beam, fb.FlexibleEnergy(beam) + 1e-3 * fb.Effort() + 10.0 * fb.FinalPoint(tip, target)

    asm, beam, cost = model()
    inputs = fb.PiecewiseInputs(np.linspace(0.0, T, 6), 2.0 * np.random.default_rng(0).standard_normal((5, 2)))
    constants = {"young": case.YOUNG, "damping": case.DAMPING}  # the case's (the density is the mechanism's)
    exact = fb.gradient(asm, T, cost, inputs, integrator=integrator, parameters=[(beam, k) for k in constants])
    differences = _input_differences(asm, cost, inputs, integrator=integrator)
    assert min(rel(exact.inputs, central) for central in differences) < 1e-6
    for name, value in constants.items():
        ends = []
        for sign in (1.0, -1.0):
            changed, _, changed_cost = model(**{**constants, name: value * (1.0 + sign * 1e-4)})
            ends.append(cost_of_run(changed, changed_cost, inputs, integrator=integrator))
        central = (ends[0] - ends[1]) / (2e-4 * value)
        assert abs(exact.parameters[f"beam.{name}"] - central) < 1e-6 * abs(central), name


def test_a_run_through_compliant_contact_equals_central_differences():
    """The spatial arm, actuated, its tip pressed into a plane (Hunt–Crossley, dissipation, friction) for 25 steps: the
    gradient of its final state in the torques equals central differences of whole runs (measured 2.6e-8; the tip
    stays 4 to 10 mm deep)."""
    from test_exact_iteration_matrix import _arm_in_contact

    pressed = _arm_in_contact("plane")
    tree = pressed.trees[0]
    asm = fb.System([tree], [], forces=pressed.forces, actuators=list(tree.links), q0=pressed.q0).assemble()
    rng = np.random.default_rng(6)
    cost = fb.FinalState(wq=rng.random(3), wv=rng.random(3), q_target=np.asarray(pressed.q0) + 0.1)
    inputs = fb.PiecewiseInputs(np.linspace(0.0, T, 6), 0.5 * rng.standard_normal((5, 3)))
    exact = fb.gradient(asm, T, cost, inputs, integrator=INTEGRATOR)
    assert exact.results.metadata["statistics"]["rejected"] == 0
    assert min(rel(exact.inputs, central) for central in _input_differences(asm, cost, inputs)) < 1e-6


# ============================================================================ RK4 runs
RK4_CASES = {
    "four_bar": lambda: fb.mechanisms.four_bar().assemble(),
    "arm_with_beam": lambda: _arm(damping=0.0)[0],  # undamped: RK4's stable step with the damping is far smaller
}


@pytest.mark.parametrize("name", sorted(RK4_CASES))
def test_rk4_runs_equal_forward_sensitivities_and_central_differences(name):
    """RK4 without stabilisation, each stage taking the input of the interval holding its time: the adjoint equals the
    forward sweep, and central differences of whole runs, in every input value (measured: four-bar 9.6e-11, arm with
    a beam 2.5e-9) and, on the arm, in its E (the cost reads it too)."""
    asm, t_end = RK4_CASES[name](), 0.012 if name == "arm_with_beam" else 0.03
    rng = np.random.default_rng(4)
    n, n_u = asm.n_dofs, asm.S.shape[0]
    if asm.sparse:
        beam = asm.flexible.bodies[0]
        cost, parameters, integrator = fb.FlexibleEnergy(beam) + 0.1 * fb.Effort(), [(beam, "young")], fb.RK4(dt=3e-4)
    else:
        cost, parameters, integrator = fb.FinalState(wq=rng.random(n), wv=rng.random(n)), [], fb.RK4(dt=2e-3)
    inputs = fb.PiecewiseInputs(np.linspace(0.0, t_end, 4), rng.standard_normal((3, n_u)))
    unstabilised = {"integrator": integrator, "parameters": parameters, "stabilization": None}
    adjoint = fb.gradient(asm, t_end, cost, inputs, **unstabilised)
    forward = fb.gradient(asm, t_end, cost, inputs, mode="forward", **unstabilised)
    assert rel(adjoint.inputs, forward.inputs) < 1e-9 and rel(adjoint.q0, forward.q0) < 1e-9

    def run_cost(values, changed=None):
        model, run_cost_of = (asm, cost) if changed is None else changed
        held = inputs.with_values(values)
        results = fb.simulate(model, t_end, integrator=integrator, tau=held.forces(model), stabilization=None)
        return run_cost_of.of_run(results, held)

    assert min(rel(adjoint.inputs, _differences_in_inputs(run_cost, inputs, h)) for h in (1e-2, 1e-3)) < 1e-6
    if parameters:

        def with_young(h):
            changed, _, changed_cost = _arm(young=1e7 * (1.0 + h), damping=0.0)
            changed_cost = fb.FlexibleEnergy(changed.flexible.bodies[0]) + 0.1 * fb.Effort()
            return np.array(run_cost(inputs.values, (changed, changed_cost)))

        assert _best(np.array(adjoint.parameters["beam.young"] * 1e7), with_young, (1e-3, 1e-4)) < 1e-6


@pytest.mark.parametrize("dt", [1e-2, 2e-2])
def test_rk4_runs_with_position_correction_equal_central_differences(dt):
    """RK4 as simulate runs it by default, each step's end corrected (Newton on φ = 0, then the velocity projection):
    the sweeps replay the correction and take its exact derivatives. On the four-bar at large steps (so that the
    correction moves the state): the adjoint equals the forward sweep and central differences of whole runs (measured
    1.2e-9 and 6.9e-9 at a step of 1e-4; leaving the correction's derivatives out gives 2.9e-5 and 6.6e-4)."""
    asm, t_end = fb.mechanisms.four_bar().assemble(), 0.3 if dt == 1e-2 else 0.4
    rng = np.random.default_rng(4)
    cost = fb.FinalState(wq=rng.random(asm.n_dofs), wv=rng.random(asm.n_dofs))
    inputs = fb.PiecewiseInputs(np.linspace(0.0, t_end, 4), 3.0 * rng.standard_normal((3, asm.S.shape[0])))
    integrator = fb.RK4(dt=dt)
    adjoint = fb.gradient(asm, t_end, cost, inputs, integrator=integrator)  # PositionCorrection(), as simulate's
    forward = fb.gradient(asm, t_end, cost, inputs, integrator=integrator, mode="forward")
    assert rel(adjoint.inputs, forward.inputs) < 1e-9 and rel(adjoint.q0, forward.q0) < 1e-9
    central = _input_differences(asm, cost, inputs, steps=(1e-4,), t_end=t_end, integrator=integrator)
    assert rel(adjoint.inputs, central[0]) < 1e-7
    with pytest.raises(FlexbodyError, match="stabilization must be a PositionCorrection or None"):
        fb.gradient(asm, t_end, cost, inputs, integrator=integrator, stabilization=fb.Baumgarte(alpha=5.0, beta=5.0))


def _carrier():
    """A free-flying base with a spherical shoulder and a revolute elbow (both actuated), the base held by a rod to a
    ground point above it, its rotation vectors of 0.4 to 0.6 rad."""
    tree = fb.RigidTree("carrier", gravity=(0.0, 0.0, -9.81))
    base = tree.add_link("base", None, fb.FreeFlyer(), mass=3.0, inertia=(0.1, 0.12, 0.14))
    upper = tree.add_link(
        "upper",
        base,
        fb.Spherical(),
        origin=(0.1, 0.0, 0.0),
        mass=1.0,
        com=(0.15, 0.0, 0.0),
        inertia=(0.01, 0.02, 0.02),
    )
    fore = tree.add_link(
        "fore", upper, fb.Revolute((0.0, 1.0, 0.0)), origin=(0.3, 0.0, 0.0), mass=0.5, com=(0.1, 0.0, 0.0),
        inertia=(0.002, 0.01, 0.01),
    )  # fmt: skip
    rod = fb.Distance(tree.point(base, (0.0, 0.0, 0.1)), fb.Ground((0.0, 0.0, 1.0)), 0.9)
    guess = np.zeros(tree.n_dofs)
    guess[3:9] = (0.3, -0.2, 0.5, 0.4, 0.1, -0.3)
    q0 = fb.assemble_configuration(fb.System([tree], [rod], actuators=[upper, fore], q0=guess).assemble(), 0.0, guess)
    return fb.System([tree], [rod], actuators=[upper, fore], q0=q0).assemble()


ROTATING_RUNS = {
    "alpha": (INTEGRATOR, None),
    "rk4": (fb.RK4(dt=2e-3), None),
    "rk4_corrected": (fb.RK4(dt=2e-3), fb.PositionCorrection()),
}


@pytest.mark.parametrize("name", sorted(ROTATING_RUNS))
def test_rotation_vectors_equal_central_differences(name):
    """A floating base and a spherical joint: generalized-α steps each run in the chart centred on their start, whose
    maps the sweeps linearize; RK4 steps run in the rotation vectors themselves. The adjoint equals the forward sweep
    and central differences of whole runs (measured 4.3e-10 for generalized-α at a step of 1e-3, 8.9e-11 and 1.4e-10
    for RK4 at 1e-4, with and without the position correction)."""
    asm = _carrier()
    rng = np.random.default_rng(2)
    n = asm.n_dofs
    cost = fb.FinalState(wq=rng.random(n), wv=rng.random(n)) + fb.Effort(0.1)
    inputs = fb.PiecewiseInputs(np.linspace(0.0, T, 4), rng.standard_normal((3, asm.S.shape[0])))
    start = {"v0": fb.project_velocity(asm, 0.0, asm.q0, rng.standard_normal(n))}
    integrator, stabilization = ROTATING_RUNS[name]
    settings = {"integrator": integrator, "stabilization": stabilization, **start}
    adjoint = fb.gradient(asm, T, cost, inputs, **settings)
    forward = fb.gradient(asm, T, cost, inputs, mode="forward", **settings)
    assert rel(adjoint.inputs, forward.inputs) < 1e-9 and rel(adjoint.q0, forward.q0) < 1e-9

    def run_cost(values):
        held = inputs.with_values(values)
        results = fb.simulate(asm, T, tau=held.forces(asm), record_every=1, **settings)
        return cost.of_run(results, held)

    step = 1e-3 if name == "alpha" else 1e-4
    assert rel(adjoint.inputs, _differences_in_inputs(run_cost, inputs, step)) < 1e-7


@pytest.mark.parametrize("integrator", [INTEGRATOR, fb.RK4(dt=1e-3)], ids=["alpha", "rk4"])
def test_runs_through_chart_switches_equal_central_differences(integrator):
    """A heavy top spun at 60 rad/s turns 6 rad in 0.1 s, so its rotation vector passes π and moves to its other chart
    again and again; the sweeps take each switch's linearization. The adjoint equals the forward sweep, and central
    differences of whole runs in the inputs, and along a direction of the start (measured: generalized-α 1.3e-10,
    2.5e-9 and 3.1e-9, RK4 2.8e-11, 2.5e-10 and 7.0e-10, best of steps 1e-4 and 1e-5)."""
    tree = fb.RigidTree("top", gravity=(0.0, 0.0, -9.81))
    link = tree.add_link("body", None, fb.Spherical(), mass=1.0, com=(0.0, 0.0, 0.1), inertia=(0.01, 0.012, 0.005))
    asm = fb.System([tree], [], actuators=[link], q0=np.array([0.3, 0.1, 0.0])).assemble()
    t_end, rng, v0 = 0.1, np.random.default_rng(3), np.array([0.5, -0.3, 60.0])
    cost = fb.FinalState(wq=rng.random(3), wv=rng.random(3)) + fb.Effort(0.1)
    inputs = fb.PiecewiseInputs(np.linspace(0.0, t_end, 4), 0.1 * rng.standard_normal((3, 3)))
    adjoint = fb.gradient(asm, t_end, cost, inputs, integrator=integrator, v0=v0)
    forward = fb.gradient(asm, t_end, cost, inputs, integrator=integrator, v0=v0, mode="forward")
    assert np.linalg.norm(np.diff(adjoint.results.q, axis=0), axis=1).max() > 5.0  # the chart switched
    assert rel(adjoint.inputs, forward.inputs) < 1e-9 and rel(adjoint.v0, forward.v0) < 1e-9

    def run_cost(values, q0=asm.q0, v=v0):
        held = inputs.with_values(values)
        results = fb.simulate(asm, t_end, integrator=integrator, tau=held.forces(asm), record_every=1, q0=q0, v0=v)
        return cost.of_run(results, held)

    direction = rng.standard_normal(3)
    errors = {"inputs": [], "q0": [], "v0": []}
    for step in (1e-4, 1e-5):
        errors["inputs"].append(rel(adjoint.inputs, _differences_in_inputs(run_cost, inputs, step)))
        along = {
            "q0": run_cost(inputs.values, q0=asm.q0 + step * direction)
            - run_cost(inputs.values, q0=asm.q0 - step * direction),
            "v0": run_cost(inputs.values, v=v0 + step * direction) - run_cost(inputs.values, v=v0 - step * direction),
        }
        for key, difference in along.items():
            errors[key].append(rel(getattr(adjoint, key) @ direction, difference / (2 * step)))
    assert all(min(values) < 1e-7 for values in errors.values()), errors


# ============================================================================ refusals
def test_what_cannot_be_differentiated_yet_is_named():
    asm, _, cost = _arm()
    with pytest.raises(FlexbodyError, match="must be a GeneralizedAlpha or an RK4"):
        fb.gradient(asm, T, cost, INPUTS, integrator=fb.MoreauJean(dt=1e-3))
    with pytest.raises(FlexbodyError, match="mode must be one of"):
        fb.gradient(asm, T, cost, INPUTS, mode="reverse")
    with pytest.raises(FlexbodyError, match="cost must be a RunCost"):
        fb.gradient(asm, T, lambda run: 0.0, INPUTS)
    from test_exact_iteration_matrix import SYSTEMS

    skate = SYSTEMS["knife_edge"]()
    user_rows = fb.PfaffianRows([0, 1], 1, lambda t, q: [[np.cos(q[2]), np.sin(q[2])]], name="user")
    user = fb.System(skate.trees, [user_rows], q0=skate.q0)
    with pytest.raises(ModelError, match="velocity-level rows of 'user'"):
        fb.gradient(user, T, fb.Effort(), fb.PiecewiseInputs([0.0, T], np.zeros((1, 3))))


def test_piecewise_inputs_are_checked_and_held():
    u = fb.PiecewiseInputs([0.0, 0.1, 0.3], [[1.0], [2.0]])
    assert u.n_inputs == 1 and u.interval(0.0) == 0 and u.interval(0.1) == 1 and u.interval(0.3) == 1
    assert u.at(0.05)[0] == 1.0 and u.at(0.2)[0] == 2.0
    with pytest.raises(StateError, match="outside the inputs' span"):
        u.at(0.5)
    with pytest.raises(StateError, match="increasing"):
        fb.PiecewiseInputs([0.0, 0.0], [[1.0]])
    with pytest.raises(StateError, match="one row per interval"):
        fb.PiecewiseInputs([0.0, 0.1, 0.2], [[1.0]])
    asm = _arm()[0]
    with pytest.raises(StateError, match="the model has 2 actuators"):
        u.forces(asm)
    arm = fb.mechanisms.arm_with_beam(divisions=(3, 1, 1))  # a System is assembled for its actuators
    assert np.array_equal(fb.PiecewiseInputs([0.0, 1.0], [[1.0, 2.0]]).forces(arm)(0.5, None, None)[:2], [1.0, 2.0])


@pytest.mark.parametrize("mode", ["adjoint", "forward"])
@pytest.mark.parametrize("name", ["alpha", "rk4_corrected"])
def test_several_functions_in_one_sweep_equal_their_own_gradients(name, mode):
    """`run_gradients` carries r functions of one run back together (the adjoint sweeps with r right-hand sides): each
    gradient equals the one `fb.gradient` gives that function alone."""
    asm = _carrier()
    rng = np.random.default_rng(4)
    n = asm.n_dofs
    functions = [fb.FinalState(wq=rng.random(n), wv=rng.random(n)), fb.Effort(0.1), fb.FinalValue(3, rate=True)]
    inputs = fb.PiecewiseInputs(np.linspace(0.0, T, 4), rng.standard_normal((3, asm.S.shape[0])))
    integrator, stabilization = ROTATING_RUNS[name]
    results = recorded_run(asm, T, inputs, integrator, stabilization, "projection")
    values, u_bar, q_bar, v_bar, _ = run_gradients(
        asm, results, inputs, functions, integrator, stabilization, mode=mode
    )
    for j, f in enumerate(functions):
        alone = fb.gradient(asm, T, f, inputs, integrator=integrator, stabilization=stabilization, mode=mode)
        assert abs(values[j] - alone.value) <= 1e-13 * max(1.0, abs(alone.value))
        assert rel(u_bar[..., j], alone.inputs) < 1e-12 and rel(q_bar[:, j], alone.q0) < 1e-12
        assert rel(v_bar[:, j], alone.v0) < 1e-12
