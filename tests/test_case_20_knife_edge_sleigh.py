"""Case 20 (knife-edge sleigh) at reduced length: the coasting Chaplygin sleigh against its closed form with RK4
and generalized-α, PIDC steering of the point ahead of the edge against the closed-form error of
ë + K_V ė + K_P e = 0 (and that the difference is RK4's truncation error), [LP]'s P τ = P(M q̈ + h) along the
run, the rank of J̌ = [J; A] and the refused edge-point task, and the written outputs."""

import numpy as np
import pytest
from case_files import assert_files, load

import flexbody as fb

case = load("20_knife_edge_sleigh.py")
U0, W0 = case.YAW_RATE0 * case.TURN_RADIUS0, case.YAW_RATE0  # 0.4 m/s, 2 rad/s


def sleigh_closed_form(t, u0=U0, w0=W0, psi0=case.HEADING0, m=case.MASS, rho=case.GYRATION_RADIUS, a=case.COM_AHEAD):
    """(u, ω, ψ) (s,) each of the coasting Chaplygin sleigh (the case's docstring) at the times t (s,)."""
    Ic = m * rho**2 + m * a * a
    V = np.sqrt((m * u0**2 + Ic * w0**2) / m)
    k, c0, s = m * a * V / Ic, np.arctanh(u0 / V), np.sign(w0)

    def gd(z):  # Gudermannian
        return 2.0 * np.arctan(np.tanh(z / 2.0))

    z = k * np.asarray(t, dtype=float) + c0
    return V * np.tanh(z), s * V * np.sqrt(m / Ic) / np.cosh(z), psi0 + s * V * np.sqrt(m / Ic) / k * (gd(z) - gd(c0))


def coasting_errors(res) -> dict:
    """Largest differences of the run's u, ω, ψ from the closed form."""
    u_cf, w_cf, psi_cf = sleigh_closed_form(res.times)
    u = case.forward_speed(res.q, res.v)[0]
    return {
        "u": np.abs(u - u_cf).max(),
        "omega": np.abs(res.v[:, 2] - w_cf).max(),
        "psi": np.abs(res.q[:, 2] - psi_cf).max(),
    }


def projection_residuals(asm, res) -> dict:
    """Per recorded step: [LP]'s ‖P τ − P(M q̈ + h)‖∞ with P = I − Aᵀ(AM⁻¹Aᵀ)⁻¹AM⁻¹, Aghili's
    ‖τ − P_AG(M q̈ + h)‖∞ with P_AG = I − A⁺A [AG-21, AG-43], and ‖q̈(τ + Aᵀλ) − q̈‖∞ with an added lateral force
    at the edge, λ = ‖τ‖ + 1 N along Aᵀ — all from the recorded q, q̇, q̈, τ with numpy."""
    lp, ag, same = (np.empty(res.n_steps) for _ in range(3))
    for i, (t, q, v) in enumerate(zip(res.times, res.q, res.v)):
        terms = asm.terms(t, q, v)
        M, h, A = np.asarray(terms.M, dtype=float), np.asarray(terms.h, dtype=float), np.asarray(terms.Phi, float)
        a, tau = res.histories["a"][i], res.histories["tau"][i]
        Minv = np.linalg.inv(M)
        P_lp = np.eye(len(q)) - A.T @ np.linalg.solve(A @ Minv @ A.T, A @ Minv)  # [LP]
        P_ag = np.eye(len(q)) - np.linalg.pinv(A) @ A  # [AG-15]
        lp[i] = np.abs(P_lp @ tau - P_lp @ (M @ a + h)).max()
        ag[i] = np.abs(tau - P_ag @ (M @ a + h)).max()
        pushed = tau + A.T @ np.full(A.shape[0], np.linalg.norm(tau) + 1.0)
        same[i] = np.abs(fb.dynamics.forward(M, h, pushed, A, terms.bias, method="multiplier").a - a).max()
    return {"lp": lp.max(), "aghili": ag.max(), "same_motion": same.max()}


def test_case_20_matches_the_closed_forms(tmp_path):
    s = case.main(tmp_path, coast_t_end=3.0, steer_periods=0.25)  # 3 s coasting, π s steering
    rk4 = s["coasting"]["rk4"]
    errors = coasting_errors(fb.Results.load(tmp_path / "coasting_rk4"))
    # measured at these settings: 4.0e-11 m/s, 1.45e-10 rad/s, 1.57e-10 rad, 9.1e-17 m/s, 6.2e-11 J
    assert errors["u"] < 1e-10 and errors["omega"] < 5e-10 and errors["psi"] < 5e-10
    assert rk4["velocity_violation"] < 1e-15 and rk4["energy_drift"] < 5e-10
    assert s["coasting"]["terminal_speed"] == pytest.approx(np.sqrt(0.4**2 + (0.045 + 0.18) / 2.0 * 4.0), rel=1e-15)
    assert s["coasting"]["terminal_speed"] == pytest.approx(sleigh_closed_form(50.0)[0], rel=1e-12)

    st = s["steering"]
    assert np.allclose(st["e0"], [-0.1, 0.3], atol=1e-15) and np.allclose(st["edot0"], [0.5, 0.5], atol=1e-15)
    assert st["max_deviation_from_closed_form"] < 1e-9  # 2.4e-10 m measured
    assert abs(st["final_error"] - st["final_error_closed_form"]) < 1e-9  # 6.67e-4 m at t = π s
    assert 6e-4 < st["final_error_closed_form"] < 7e-4
    assert st["max_velocity_violation"] < 1e-15  # 1.3e-16 m/s
    assert st["peak_lateral_force"] < 1e-13 * st["peak_thrust"]  # 4.1e-15 N vs 4.63 N: A τ = 0
    assert st["actuated"] == ["sleigh.x", "sleigh.y", "sleigh.body"]
    steering = fb.Results.load(tmp_path / "steering")
    asm = case.build(q0=(case.START_X, case.START_Y, case.START_HEADING)).assemble()
    residuals = projection_residuals(asm, steering)
    assert residuals["lp"] < 1e-13 and residuals["aghili"] < 1e-13  # 2.7e-15, 2.2e-15
    assert residuals["same_motion"] < 1e-12  # 1.2e-14 (λ = ‖τ‖ + 1 N added)
    assert_files(
        tmp_path,
        [
            "summary.txt",
            "knife_edge_sleigh.png",
            "coasting_rk4/results.npz",
            "coasting_rk4/histories.csv",
            "steering/results.npz",
            "steering/results.json",
            "steering/histories.csv",
            "steering/sleigh.pvd",
        ],
    )
    assert steering.n_steps == st["n_steps"] and abs(steering.times[-1] - np.pi) < 1e-12


def test_case_20_generalized_alpha_coasts_to_second_order():
    """Generalized-α (ρ∞ = 1) at 2 ms over 3 s: 2.9e-7 m/s, 2.5e-6 rad/s, 2.1e-6 rad from the closed form; the
    row held to Newton's tolerance (2.0e-10 m/s)."""
    asm = case.build().assemble()
    res, numbers, _ = case.coast(asm, 3.0, fb.GeneralizedAlpha(dt=2e-3, rho_inf=1.0), U0, W0, case.HEADING0)
    errors = coasting_errors(res)
    assert errors["u"] < 1e-6 and errors["omega"] < 5e-6 and errors["psi"] < 5e-6
    assert numbers["velocity_violation"] < 1e-9


def test_case_20_task_rank_and_the_refused_edge_point():
    """J̌ = [J_P; A] at heading 0: [[1, 0, 0], [0, 1, d], [0, 1, 0]], σ² ∈ {1, ((2 + d²) ± √((2 + d²)² − 4d²))/2}
    (full rank); for the edge point itself (d = 0) σ = √2, 1, 0: rank 2 < 3, and PIDC refuses that task."""
    asm = case.build(q0=(case.START_X, case.START_Y, case.START_HEADING)).assemble()
    d = case.LOOKAHEAD
    root = np.sqrt((2 + d * d) ** 2 - 4 * d * d)
    sigma = np.sqrt([(2 + d * d + root) / 2, 1.0, (2 + d * d - root) / 2])
    tasks = case.task(asm)
    for name, expected, rank in (("P", sigma, 3), ("edge", [np.sqrt(2), 1, 0], 2)):
        check = fb.control.actuation_report(asm, 0.0, asm.q0, np.zeros(3), task=tasks[name]).maps["independent"]
        assert check.rank == rank and np.allclose(check.singular_values, expected, atol=1e-12)
    control = fb.control.ProjectedInverseDynamicsControl(tasks["edge"], [1.0, 0.0], case.KP, case.KV)
    with pytest.raises(fb.ActuationError):
        control(0.0, asm.initial_state(), asm)


def test_case_20_steering_difference_is_rk4_truncation_error():
    """The measured error's difference from the closed form falls 16-fold when the step is halved (RK4 with
    the controller evaluated at every stage): it is the integrator's, not the model's or the controller's."""
    asm = case.build(q0=(case.START_X, case.START_Y, case.START_HEADING)).assemble()
    deviations = []
    for dt in (8e-3, 4e-3):
        res, _, _, e_cf = case.steer(asm, 1.2, dt, case.LOOKAHEAD, case.KP, case.KV, case.figure_eight())
        deviations.append(np.linalg.norm(res.histories["task_error"] - e_cf, axis=1).max())
    assert deviations[1] < 1e-9 and 14.0 < deviations[0] / deviations[1] < 18.0  # 3.85e-9 / 2.41e-10 = 16.0


@pytest.mark.parametrize("kp, kv", [(16.0, 4.0), (16.0, 8.0), (16.0, 12.0)], ids=["under", "critical", "over"])
def test_error_closed_form_solves_the_closed_loop_equation(kp, kv):
    e0, edot0 = np.array([-0.1, 0.3]), np.array([0.5, 0.5])
    h = 1e-4
    t = np.arange(0.0, 3.0, h)
    e = case.error_closed_form(t, e0, edot0, kp, kv)
    de, dde = np.gradient(e, h, axis=0), np.diff(e, 2, axis=0) / h**2
    assert np.abs(dde + kv * de[1:-1] + kp * e[1:-1]).max() < 1e-5  # 1.7e-7 .. 1.4e-6 (differencing)
    assert np.allclose(e[0], e0, atol=1e-15)
    assert np.allclose((e[1] - e[0]) / h, edot0, atol=1e-3)  # h ë(0)/2: 3.4e-4 .. 5.4e-4


def test_sleigh_closed_form_solves_the_reduced_equations():
    """The oracle itself: u̇ = a ω², ω̇ = −m a u ω / I_c by central differences, u(0) = u₀, ω(0) = ω₀."""
    m, a = case.MASS, case.COM_AHEAD
    Ic = m * case.GYRATION_RADIUS**2 + m * a * a
    h, t = 1e-5, np.linspace(0.0, 5.0, 501)
    (u, w, psi), (up, wp, psip), (um, wm, psim) = (sleigh_closed_form(t + d) for d in (0.0, h, -h))
    assert abs(u[0] - U0) < 1e-15 and abs(w[0] - W0) < 1e-14 and abs(psi[0] - case.HEADING0) < 1e-15
    assert np.abs((up - um) / (2 * h) - a * w**2).max() < 1e-8
    assert np.abs((wp - wm) / (2 * h) + m * a * u * w / Ic).max() < 1e-8
    assert np.abs((psip - psim) / (2 * h) - w).max() < 1e-8
