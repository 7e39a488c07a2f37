"""Case 20 (knife-edge sleigh) at reduced length: the coasting Chaplygin sleigh against its closed form with RK4
and generalized-α, PIDC steering of the point ahead of the edge against the closed-form error of
ë + K_V ė + K_P e = 0 (and that the difference is RK4's truncation error), [LP]'s P τ = P(M q̈ + h) along the
run, the refused edge-point task, and the written outputs."""

import numpy as np
import pytest
from case_files import assert_files, load

import flexbody as fb

case = load("20_knife_edge_sleigh.py")


def test_case_20_matches_the_closed_forms(tmp_path):
    s = case.main(tmp_path, coast_t_end=3.0, steer_periods=0.25)  # 3 s coasting, π s steering
    rk4, alpha = s["coasting"]["rk4"], s["coasting"]["alpha"]
    # measured at these settings: 4.0e-11 m/s, 1.45e-10 rad/s, 1.57e-10 rad, 9.1e-17 m/s, 6.2e-11 J
    assert rk4["u"] < 1e-10 and rk4["omega"] < 5e-10 and rk4["psi"] < 5e-10
    assert rk4["velocity_violation"] < 1e-15 and rk4["energy_drift"] < 5e-10
    # generalized-α at 2 ms (second order): 2.9e-7 m/s, 2.5e-6 rad/s, 2.1e-6 rad; the row to Newton's 2.0e-10
    assert alpha["u"] < 1e-6 and alpha["omega"] < 5e-6 and alpha["psi"] < 5e-6
    assert alpha["velocity_violation"] < 1e-9
    assert s["coasting"]["terminal_speed"] == pytest.approx(np.sqrt(0.4**2 + (0.045 + 0.18) / 2.0 * 4.0), rel=1e-15)

    st = s["steering"]
    assert np.allclose(st["e0"], [-0.1, 0.3], atol=1e-15) and np.allclose(st["edot0"], [0.5, 0.5], atol=1e-15)
    assert st["max_deviation_from_closed_form"] < 1e-9  # 2.4e-10 m measured
    assert abs(st["final_error"] - st["final_error_closed_form"]) < 1e-9  # 6.67e-4 m at t = π s
    assert 6e-4 < st["final_error_closed_form"] < 7e-4
    assert st["max_velocity_violation"] < 1e-15  # 1.3e-16 m/s
    assert st["peak_lateral_force"] < 1e-13 * st["peak_thrust"]  # 4.1e-15 N vs 4.63 N: A τ = 0
    assert st["max_lp_residual"] < 1e-13 and st["max_aghili_residual"] < 1e-13  # 2.7e-15, 2.2e-15
    assert st["max_same_motion_residual"] < 1e-12  # 1.2e-14 (λ = ‖τ‖ + 1 N added)
    assert st["actuated"] == ["sleigh.x", "sleigh.y", "sleigh.body"]

    # J̌ = [J_P; A] at heading 0: [[1, 0, 0], [0, 1, d], [0, 1, 0]], σ² ∈ {1, ((2 + d²) ± √((2 + d²)² − 4d²))/2}
    d = case.LOOKAHEAD
    sigma2 = np.array(
        [
            (2 + d * d + np.sqrt((2 + d * d) ** 2 - 4 * d * d)) / 2,
            1.0,
            (2 + d * d - np.sqrt((2 + d * d) ** 2 - 4 * d * d)) / 2,
        ]
    )
    checks = st["task_checks"]
    assert checks["P"]["rank"] == 3 and np.allclose(checks["P"]["singular_values"], np.sqrt(sigma2), atol=1e-12)
    assert checks["edge"]["rank"] == 2 and np.allclose(
        checks["edge"]["singular_values"], [np.sqrt(2), 1, 0], atol=1e-12
    )
    assert checks["edge_refused"]

    assert_files(
        tmp_path,
        [
            "summary.txt",
            "knife_edge_sleigh.png",
            "coasting_rk4/results.npz",
            "coasting_rk4/histories.csv",
            "coasting_alpha/results.npz",
            "steering/results.npz",
            "steering/results.json",
            "steering/histories.csv",
            "steering/sleigh.pvd",
        ],
    )
    back = fb.Results.load(tmp_path / "steering")
    assert back.n_steps == st["n_steps"] and abs(back.times[-1] - np.pi) < 1e-12


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
