"""The DE 5.4 control cases 07–09 run at reduced size and show what DE reports.

07: coupled chain [DE 5.4.1] — end point to the goal, couplings held, gravity effort U = ‖g‖² far lower than
without the null-space term, W = T + V + K_N U non-increasing after convergence; 08: parallel platform
[DE 5.4.2] — zero torque at the six passive joints, τ equal to Jᵀf + Φᵀf_C with f_C from [DE-99], platform
centre fixed while it rotates; 09: underactuated chain [DE 5.4.3] — zero torque at the passive joint, task
converged, undamped null-space oscillation. Every case: plant task acceleration J a + J̇q̇ = f* to 1e-8.
"""

import inspect
import json
from pathlib import Path

import numpy as np
import pytest
from case_files import CASES, assert_files, load

import flexbody as fb
from flexbody import cli
from flexbody import control as ctl

ACC_TOL = 1e-8  # |J a + J̇q̇ − f*| / max(1, |f*|)
PHI_TOL = 1e-8  # ‖φ‖


def read_csv(path: Path):
    header = path.read_text().splitlines()[0].split(",")
    data = np.loadtxt(path, delimiter=",", skiprows=1)
    assert header[0] == "t" and data.shape[1] == len(header)
    return header, data


def chain_end_point_acceleration(lengths, q, v, a):
    """Planar serial chain, joints about z: end point (x, y), and its acceleration from a by hand."""
    s, sd, sdd = np.cumsum(q, axis=1), np.cumsum(v, axis=1), np.cumsum(a, axis=1)
    L = np.asarray(lengths)
    x = np.column_stack([(L * np.cos(s)).sum(1), (L * np.sin(s)).sum(1)])
    xdd = np.column_stack(
        [-(L * (np.cos(s) * sd**2 + np.sin(s) * sdd)).sum(1), (L * (-np.sin(s) * sd**2 + np.cos(s) * sdd)).sum(1)]
    )
    return x, xdd


def relative_acceleration_error(xdd, f_star):
    return float(np.max(np.abs(xdd - f_star).max(axis=1) / np.maximum(1.0, np.abs(f_star).max(axis=1))))


def test_case_07_coupled_chain(tmp_path):
    case = load("07_coupled_chain_control.py")
    out = tmp_path / "07"
    s = case.main(out, t_end=2.0, dt=4e-3)  # full size: 4 s at dt = 2 ms
    assert_files(
        out,
        (
            "results.npz",
            "results.json",
            "histories.csv",
            "summary.txt",
            "coupled_chain.png",
            "histories.png",
            "no_gravity_effort/results.npz",
        ),
    )
    assert json.loads((out / "summary.txt").read_text())["U_end"] == pytest.approx(s["U_end"], rel=1e-12)
    assert (s["n"], s["m_C"], s["p"], s["k"], s["m_T"], s["null_space_dim"]) == (6, 2, 4, 6, 2, 2)
    assert s["partitioned_ok"]
    # task: to the goal; plant task acceleration = f* (summary and an independent by-hand end-point acceleration)
    assert s["task_error_reduction"] > 1e4 and s["task_error_end"] < 1e-4
    np.testing.assert_allclose(s["x_end"], case.GOAL, atol=1e-4)
    assert s["max_task_acceleration_error"] < ACC_TOL and s["max_task_acceleration_error_no_gravity_effort"] < ACC_TOL
    back = fb.Results.load(out)
    L = [case.LENGTH] * 6
    x, xdd = chain_end_point_acceleration(L, back.q, back.v, back.histories["a"])
    np.testing.assert_allclose(x, back.histories["task_x"], atol=1e-12)
    assert relative_acceleration_error(xdd, back.histories["task_command"]) < ACC_TOL
    # couplings q2 = q1/3, q3 = 2q1/3 [DE-94]
    assert s["max_violation"] < PHI_TOL and s["max_coupling_error"] < PHI_TOL
    np.testing.assert_allclose(back.q[:, 1], back.q[:, 0] / 3, atol=PHI_TOL)
    np.testing.assert_allclose(back.q[:, 2], 2 * back.q[:, 0] / 3, atol=PHI_TOL)
    # gravity effort: falls by an order of magnitude; without the term (K_N = 0) it ends far higher
    asm = case.build().assemble()
    assert ctl.GravityEffort.effort(asm, back.q[0]) == pytest.approx(s["U_start"], rel=1e-12)
    assert ctl.GravityEffort.effort(asm, back.q[-1]) == pytest.approx(s["U_end"], rel=1e-12)
    assert s["U_end"] < 0.2 * s["U_start"]
    assert s["U_end"] < 0.2 * s["U_end_no_gravity_effort"]
    # nearly monotone after convergence; W = T + V + K_N U strictly may not rise
    assert s["t_converged"] is not None and s["t_converged"] < 1.5
    assert s["U_rebound_relative_to_fall"] < 0.01
    assert s["W_rise_after_convergence"] <= 1e-6 * s["W_fall_after_convergence"]
    assert s["W_fall_after_convergence"] > 0
    header, data = read_csv(out / "histories.csv")
    assert {"U", "W", "U_no_gravity_effort", "task_acceleration_error", "tau1", "coupling_q2"} <= set(header)
    np.testing.assert_allclose(data[:, 0], back.times, rtol=1e-11)


def de99_check(asm, task, res) -> dict:
    """Recompute f [DE-92] and f_C = −(S̃Φᵀ)⁻¹S̃Jᵀf [DE-99] with the raw Φ at every recorded state and compare
    τ_DE = Jᵀf + Φᵀf_C with the applied τ and f with the controller's."""
    n = asm.n_dofs
    passive = np.flatnonzero(np.abs(asm.S).sum(axis=0) == 0)
    St = np.eye(n)[passive]
    tau_err, f_err, fC_max, sigma_min, tau_DE = [], [], [], [], []
    for i, (t, q, v) in enumerate(zip(res.times, res.q, res.v)):
        ws = asm.workspace(t, q, v)
        M, b, g = ws.mass_bias_gravity()
        _, Phi, Phi_bias, _ = ws.constraint_rows()
        terms = task.evaluate(ws)
        J, m_T = terms.J, terms.J.shape[0]
        Jc = np.vstack([J, Phi])
        MiJt = np.linalg.solve(M, Jc.T)
        Lam = np.linalg.inv(Jc @ MiJt)  # [DE-87]
        mu = Lam @ (MiJt.T @ b - np.concatenate([terms.bias, Phi_bias]))
        p = Lam @ (MiJt.T @ g)
        f = Lam[:m_T, :m_T] @ res.histories["task_command"][i] + mu[:m_T] + p[:m_T]  # [DE-92]
        StPt = St @ Phi.T
        f_C = -np.linalg.solve(StPt, St @ J.T @ f)  # [DE-99]
        tau = J.T @ f + Phi.T @ f_C
        tau_DE.append(tau)
        tau_err.append(np.abs(tau - res.histories["tau"][i]).max() / max(1.0, np.abs(tau).max()))
        f_err.append(np.abs(f - res.histories["task_force"][i]).max() / max(1.0, np.abs(f).max()))
        fC_max.append(np.abs(f_C).max())
        sigma_min.append(np.linalg.svd(StPt, compute_uv=False).min())
    return {
        "tau_error": np.array(tau_err),
        "f_error": np.array(f_err),
        "fC_max": np.array(fC_max),
        "sigma_min": np.array(sigma_min),
        "tau_DE": np.array(tau_DE),
    }


def test_case_08_parallel_platform(tmp_path):
    case = load("08_parallel_platform_control.py")
    out = tmp_path / "08"
    s = case.main(out, t_end=1.0, dt=2e-3)  # full size: 2 s per run at dt = 1 ms
    assert_files(
        out,
        (
            "histories.csv",
            "summary.txt",
            "parallel_platform.png",
            "elbows.png",
            "platform.png",
            "elbows/results.npz",
            "elbows/results.json",
            "platform/results.npz",
        ),
    )
    assert s["passive_labels"] == [f"platform_mechanism.{c}" for c in ("hip1", "hip2", "hip3", "x", "y", "platform")]
    passive = [0, 2, 4, 6, 7, 8]
    asm, fC_de99 = case.build().assemble(), {}
    for key in ("elbows", "platform"):
        r = s[key]
        # actuation report [DE 5.3]: S̃Φᵀ 6 × 6 of full rank, motion and task actuated
        assert (r["n"], r["m_C"], r["p"], r["k"], r["m_T"]) == (9, 6, 3, 3, 3)
        assert r["motion_actuated"] and r["task_actuated"] and r["partitioned_ok"]
        assert r["StPhiT_shape"] == [6, 6] and r["StPhiT_rank"] == 6 and r["StPhiT_ok"]
        assert r["StPhiT_sigma_min"] > 0.1
        # zero torque at the passive joints: exactly in the applied τ, to round-off in the controller's τ
        assert r["max_abs_torque_passive"] == 0.0
        assert r["max_passive_residual_relative"] <= 1e-8
        back = fb.Results.load(out / key)
        assert np.all(back.histories["tau"][:, passive] == 0.0)
        assert np.all(
            back.histories["passive_residual"]
            <= 1e-8 * np.maximum(np.linalg.norm(back.histories["tau"], axis=1), 1e-300)
        )
        assert np.abs(back.histories["tau"][:, [1, 3, 5]]).max() > 1.0  # the elbows do work
        # τ is Jᵀf + Φᵀf_C with f_C = −(S̃Φᵀ)⁻¹S̃Jᵀf [DE-99], recomputed with the raw Φ
        check = de99_check(asm, case.task(asm)[key], back)
        assert check["tau_error"].max() < 1e-9 and check["f_error"].max() < 1e-9
        assert check["sigma_min"].min() > 0.1  # S̃Φᵀ stays invertible along the run
        fC_de99[key] = check["fC_max"].max()
        # task converges, task acceleration = f*, constraints hold
        assert r["task_error_reduction"] > 1e3
        assert r["max_task_acceleration_error"] < ACC_TOL
        assert r["max_violation"] < PHI_TOL and back.histories["violation"].max() < PHI_TOL
    # (a) elbows: S̃Jᵀ = 0, so f_C = 0 [DE-99]; the platform moves
    assert fC_de99["elbows"] == 0.0
    assert s["elbows"]["max_abs_platform_x"] > 0.05
    np.testing.assert_allclose(s["elbows"]["goal"], np.array(s["elbows"]["x_start"]) + case.ELBOW_STEP, atol=1e-12)
    # (b) platform: rotates towards 0.3 rad, the centre stays fixed; here S̃Jᵀf ≠ 0, so f_C ≠ 0
    b = s["platform"]
    assert b["max_abs_platform_x"] < 1e-10 and b["max_abs_platform_y"] < 1e-10
    back = fb.Results.load(out / "platform")
    assert np.abs(back.q[:, 6:8]).max() < 1e-10
    assert abs(b["x_end"][2] - case.ROTATION) < 1e-3 * case.ROTATION
    assert fC_de99["platform"] > 1.0
    header, _ = read_csv(out / "histories.csv")
    assert {"a_tau2", "b_tau9", "a_passive_residual", "b_violation"} <= set(header)


def test_case_09_underactuated_chain(tmp_path):
    case = load("09_underactuated_chain_control.py")
    out = tmp_path / "09"
    s = case.main(out, t_end=6.0, dt=2e-3)  # full size: 10 s at dt = 1 ms
    assert_files(
        out, ("results.npz", "results.json", "histories.csv", "summary.txt", "underactuated_chain.png", "histories.png")
    )
    # actuation [DE 5.3]: not motion actuated (k = 2 < p = 3), task actuated; DE's literal S̃Φᵀ (1 × 0) fails,
    # S̃[Φᵀ, Ňᵀ] (1 × 3) has rank 1, which is what the partitioned controller needs
    assert (s["n"], s["m_C"], s["p"], s["k"], s["m_T"]) == (3, 0, 3, 2, 2)
    assert s["motion_actuated"] is False and s["task_actuated"] is True
    assert s["StPhiT_shape"] == [1, 0] and s["StPhiT_ok"] is False
    assert s["StPhiT_NT_shape"] == [1, 3] and s["StPhiT_NT_rank"] == 1 and s["StPhiT_NT_ok"]
    assert s["partitioned_ok"] and s["passive_labels"] == ["chain3.l1"]
    assert any("not motion actuated" in f for f in s["failures_all"])
    assert s["passive_margin_min"] > 0.5  # far from the singular zero dynamics
    # zero torque at the passive joint; task converged; ẍ = f* (summary and by hand)
    back = fb.Results.load(out)
    assert s["max_abs_torque_passive"] == 0.0 and np.all(back.histories["tau"][:, 0] == 0.0)
    assert s["max_passive_residual_relative"] <= 1e-8
    assert s["task_error_reduction"] > 1e6 and s["max_task_error_in_windows"] < 1e-6
    np.testing.assert_allclose(s["x_end"], case.GOAL, atol=1e-6)
    assert s["max_task_acceleration_error"] < ACC_TOL
    x, xdd = chain_end_point_acceleration([case.LENGTH] * 3, back.q, back.v, back.histories["a"])
    np.testing.assert_allclose(x, back.histories["task_x"], atol=1e-12)
    assert relative_acceleration_error(xdd, back.histories["task_command"]) < ACC_TOL
    # undamped null-space oscillation: non-trivial and not decaying while the end point stays put
    windows = s["q1_windows"]
    assert len(windows) >= 2 and windows[0][0] >= s["t_converged"]
    assert s["q1_ptp_last"] > 0.1
    assert 0.98 < s["q1_ptp_ratio_last_to_previous"] < 1.02
    assert 0.98 < s["q1_ptp_ratio_last_to_first"] < 1.02
    late = back.times >= windows[-1][0]
    assert np.ptp(back.q[late, 0]) == pytest.approx(s["q1_ptp_last"], rel=1e-12)
    assert np.ptp(back.q[late, 1]) > 0.1 and np.ptp(back.q[late, 2]) > 0.1
    assert s["q1_period"] is not None and 0.5 < s["q1_period"] < 3.0
    header, _ = read_csv(out / "histories.csv")
    assert {"q1", "tau1", "passive_residual", "task_acceleration_error"} <= set(header)


def test_case_09_runs_from_the_cli(tmp_path):
    out = tmp_path / "cli09"
    code = cli.main(
        [
            "run",
            str(CASES / "09_underactuated_chain_control.py"),
            "--set",
            "T_END=3.0",
            "--set",
            "DT=0.004",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    s = json.loads((out / "summary.txt").read_text())
    assert s["t_end"] == 3.0 and s["dt"] == 0.004 and s["n_steps"] == 751
    assert s["max_task_acceleration_error"] < ACC_TOL and s["max_abs_torque_passive"] == 0.0
    assert s["q1_ptp_last"] > 0.1
    assert fb.Results.load(out).times[-1] == pytest.approx(3.0)


@pytest.mark.parametrize(
    "name", ["07_coupled_chain_control.py", "08_parallel_platform_control.py", "09_underactuated_chain_control.py"]
)
def test_case_parameters_are_main_keywords(name):
    """Every UPPER_CASE parameter can be overridden from the CLI (``--set name=value`` → main(name=value))."""
    case = load(name)
    params = {k.lower() for k in vars(case) if k.isupper() and not k.startswith("_")}
    assert params <= set(inspect.signature(case.main).parameters) and callable(case.build)
    assert set(cli.case_parameters(case)) >= {p.upper() for p in params}
