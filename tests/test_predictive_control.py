"""Model-predictive control (``fb.ModelPredictiveControl``) against references nobody here wrote: on a mass on
a spring its first move equals the infinite-horizon discrete LQR (scipy's Riccati solver on the closed-form
discretisation) when nothing bounds it, and the bounded finite-horizon optimum (scipy's bounded least squares) when
the bounds act; its bounded QP equals scipy's on random problems; in a run its inputs are held over each period."""

import numpy as np
import pytest
import scipy.linalg as la
from input_models import oscillator
from scipy.optimize import lsq_linear

import flexbody as fb
from flexbody.linalg.box_qp import solve_box_qp

MASS, OMEGA = 2.0, 3.0  # kg, rad/s
PERIOD = 0.05  # s


def exact_step():
    """Φ, Γ of the oscillator held over a period, from its closed-form A, B (scipy's expm)."""
    A = np.array([[0.0, 1.0], [-(OMEGA**2), 0.0]])
    B = np.array([[0.0], [1.0 / MASS]])
    Z = la.expm(np.block([[A, B], [np.zeros((1, 3))]]) * PERIOD)
    return Z[:2, :2], Z[:2, 2:]


def controller(asm, horizon, weight, effort, bound=np.inf):
    task = fb.PointTask(asm.trees[0].point("mass", (0.0, 0.0, 0.0)), components=(0,), name="x")
    return fb.ModelPredictiveControl(
        asm,
        task,
        np.zeros(1),
        period=PERIOD,
        horizon=horizon,
        lower=-bound,
        upper=bound,
        output_weight=weight,
        effort_weight=effort,
        budget=10.0,
    )


def test_unbounded_first_move_is_the_discrete_lqr():
    asm = oscillator(MASS, OMEGA)
    weight, effort = 10.0, 0.01
    Phi, Gamma = exact_step()
    P = la.solve_discrete_are(Phi, Gamma, np.diag([weight**2, 0.0]), np.array([[effort]]))
    K = np.linalg.solve(effort + Gamma.T @ P @ Gamma, Gamma.T @ P @ Phi)
    x0 = np.array([0.3, -0.2])
    u = controller(asm, 300, weight, effort)(0.0, fb.State(0.0, x0[:1], x0[1:]), asm)
    assert abs(u[0] - (-K @ x0)[0]) < 1e-11 * abs((K @ x0)[0])


def test_bounded_plan_is_the_bounded_least_squares_optimum():
    asm = oscillator(MASS, OMEGA)
    weight, effort, N, bound = 10.0, 0.01, 40, 2.0
    Phi, Gamma = exact_step()
    x0 = np.array([0.3, -0.2])
    rows, free = np.zeros((N, N)), np.zeros(N)
    for j in range(1, N + 1):  # y_j = e₁ᵀ(Φʲ x₀ + Σ_{i<j} Φ^{j−1−i} Γ u_i)
        free[j - 1] = (np.linalg.matrix_power(Phi, j) @ x0)[0]
        for i in range(j):
            rows[j - 1, i] = (np.linalg.matrix_power(Phi, j - 1 - i) @ Gamma)[0, 0]
    A = np.vstack([weight * rows, np.sqrt(effort) * np.eye(N)])
    b = np.concatenate([-weight * free, np.zeros(N)])
    reference = lsq_linear(A, b, bounds=(-bound, bound), method="bvls", tol=1e-14).x
    mpc = controller(asm, N, weight, effort, bound)
    mpc(0.0, fb.State(0.0, x0[:1], x0[1:]), asm)
    assert np.sum(np.abs(reference) >= bound - 1e-12) >= 3  # the bounds act
    assert np.abs(mpc.plan[:, 0] - reference).max() < 1e-9 * bound


def test_box_qp_equals_bounded_least_squares():
    rng = np.random.default_rng(7)
    worst = 0.0
    for _ in range(40):
        n = int(rng.integers(1, 30))
        A = rng.standard_normal((n + 5, n))
        b = rng.standard_normal(n + 5) * 10
        lower, upper = -rng.uniform(0.1, 2, n), rng.uniform(0.1, 2, n)
        found = solve_box_qp(A.T @ A, -A.T @ b, lower, upper)
        reference = lsq_linear(A, b, bounds=(lower, upper), method="bvls", tol=1e-14).x
        assert found.optimal
        worst = max(worst, np.abs(found.x - reference).max())
    assert worst < 1e-10
    warm = solve_box_qp(A.T @ A, -A.T @ b, lower, upper, start=found.x)
    assert warm.iterations == 0 and np.abs(warm.x - found.x).max() < 1e-12  # started at the optimum


def test_box_qp_refuses_crossed_bounds():
    with pytest.raises(fb.FlexbodyError, match="lower bound"):
        solve_box_qp(np.eye(2), np.zeros(2), np.array([0.0, 1.0]), np.array([1.0, 0.0]))


def test_inputs_held_over_each_period_in_a_run():
    asm = oscillator(MASS, OMEGA)
    mpc = controller(asm, 20, 10.0, 0.01, bound=1.5)
    res = fb.simulate(
        asm, 1.5, integrator=fb.GeneralizedAlpha(dt=0.01), controller=mpc, q0=np.array([0.3]), v0=np.zeros(1)
    )
    tau, updated = res.histories["tau_k"][:, 0], res.histories["mpc_updated"]
    assert np.flatnonzero(updated[:-1]).tolist() == list(range(0, 150, 5))
    for start in range(0, 150, 5):
        assert np.all(tau[start : start + 5] == tau[start])
    energy = 0.5 * MASS * (OMEGA**2 * res.q[:, 0] ** 2 + res.v[:, 0] ** 2)
    assert np.abs(tau).max() <= 1.5 and energy[-1] < 0.1 * energy[0]  # the bounded force takes the energy out
    report = mpc.report()
    assert report.updates == 30 and report.relinearizations == 30 and report.cut_short == 0


def test_bad_arguments_are_named():
    asm = oscillator(MASS, OMEGA)
    task = controller(asm, 2, 1.0, 0.0).task
    for bad, match in (
        (dict(period=0.0), "period"),
        (dict(horizon=0), "horizon"),
        (dict(lower=1.0, upper=-1.0), "lower"),
        (dict(output_weight=[1.0, 2.0]), "output_weight"),
    ):
        given = dict(period=0.1, horizon=2, lower=-1.0, upper=1.0) | bad
        with pytest.raises(fb.ModelError, match=match):
            fb.ModelPredictiveControl(asm, task, 0.0, **given)
    with pytest.raises(fb.ModelError, match="prediction model"):
        fb.ModelPredictiveControl(None, task, 0.0, period=0.1, horizon=2, lower=-1.0, upper=1.0)
    two = fb.mechanisms.slider_crank(actuated=(0, 1)).assemble()
    with pytest.raises(fb.ModelError, match="1 actuators, the plant 2"):
        controller(asm, 2, 1.0, 0.0)(0.0, fb.State(0.0, two.q0, np.zeros(2)), two)


def test_disturbance_estimate_removes_the_offset_of_a_wrong_model():
    """The model's spring is 30 % soft: predicting with it alone leaves the mass off its setpoint; with the
    input-disturbance estimate the steady state is the setpoint (offset-free MPC)."""
    plant, model = oscillator(MASS, OMEGA), oscillator(MASS, 0.85 * OMEGA)
    task = fb.PointTask(model.trees[0].point("mass", (0.0, 0.0, 0.0)), components=(0,), name="x")
    finals = []
    for gain in (0.0, 0.5):
        mpc = fb.ModelPredictiveControl(
            model,
            task,
            np.array([0.1]),
            period=PERIOD,
            horizon=20,
            lower=-50,
            upper=50,
            output_weight=10.0,
            rate_weight=1e-3,
            disturbance_gain=gain,
        )
        res = fb.simulate(plant, 6.0, integrator=fb.GeneralizedAlpha(dt=0.01), controller=mpc, q0=np.zeros(1))
        finals.append(abs(res.q[-1, 0] - 0.1))
    assert finals[0] > 1e-3 and finals[1] < 1e-6


def test_modal_state_inverts_nodal_positions():
    """Nodes placed by a reduced body's frame and modes (and moved with their rates) give those modes back."""
    full = fb.mechanisms.arm_with_beam(divisions=(3, 1, 1), order=2, q0=(0.3, -0.4))
    tree, beam = full.trees[0], full.bodies[0]
    body = fb.ReducedBody("beam", fb.solvers.craig_bampton(beam, "x0", 4), tree.link("l2"))
    fb.System([tree, body], q0=(0.3, -0.4)).assemble()
    rng = np.random.default_rng(3)
    R = la.expm(np.cross(np.eye(3), rng.standard_normal(3)))  # a rotation
    p, velocity = rng.standard_normal(3), rng.standard_normal(6)
    eta, eta_dot = 1e-2 * rng.standard_normal(4), rng.standard_normal(4)
    positions = body.nodal_positions(R, p, eta)
    velocities = velocity[:3] + np.cross(velocity[3:], positions) + (body.frame_shapes @ eta_dot) @ R.T
    found, found_rate = body.modal_state(R, p, velocity, positions, velocities)
    assert np.abs(found - eta).max() < 1e-12 * np.abs(eta).max()
    assert np.abs(found_rate - eta_dot).max() < 1e-12 * np.abs(eta_dot).max()


def test_saturated_clips_and_records():
    asm = oscillator(MASS, OMEGA)
    law = fb.control.Saturated(controller(asm, 20, 10.0, 0.01), -0.5, 0.5)
    res = fb.simulate(asm, 0.2, integrator=fb.GeneralizedAlpha(dt=0.01), controller=law, q0=np.array([0.3]))
    tau, commanded = res.histories["tau_k"][:, 0], res.histories["tau_commanded"][:, 0]
    assert np.all(tau == np.clip(commanded, -0.5, 0.5)) and np.abs(commanded).max() > 0.5
    assert np.all(res.histories["saturated"] == (np.abs(commanded) > 0.5))
    with pytest.raises(fb.ModelError, match="lower ≤ upper"):
        fb.control.Saturated(law, 1.0, -1.0)


def test_a_constrained_model_with_a_passive_joint():
    """The slider-crank (one loop row, the crank actuated, the elbow passive) predicted on itself: the slider is taken
    0.1 m along its line and held there within the torque bound."""
    asm = fb.mechanisms.slider_crank(actuated=(0,)).assemble()
    task = fb.PointTask(asm.trees[0].point("l2", (1.0, 0.0, 0.0)), components=(0,), name="slider")
    start = task.evaluate(asm.workspace(0.0, asm.q0)).x
    mpc = fb.ModelPredictiveControl(
        asm, task, start + 0.1, period=0.02, horizon=25, lower=-30.0, upper=30.0, output_weight=100.0, rate_weight=1e-4
    )
    res = fb.simulate(asm, 3.0, integrator=fb.GeneralizedAlpha(dt=0.01), controller=mpc, q0=asm.q0)
    final = task.evaluate(asm.workspace(res.times[-1], res.q[-1])).x
    assert abs(final[0] - start[0] - 0.1) < 1e-8 and np.abs(res.histories["tau_k"]).max() <= 30.0
