"""The rigid-body cases 04–06 run at reduced size and reproduce their reference values.

04: particle on a circle [AG Fig. 2, eq. 33–35] — pendulum period 4K(sin²(θ₀/2))√(ρ/g), energy, the AG
decomposition; 05: Aghili's slider-crank [AG VIII-A, Fig. 4] — crossings of the singular configurations,
rank events, ‖φ‖, λ jumps; 06: four-bar with a redundant spatial closure — rank report, multiplier form
refused, same motion as the planar closure, energy drift with and without position correction.
"""

import json
from pathlib import Path

import numpy as np
import pytest
from case_files import CASES, load
from scipy.integrate import solve_ivp
from scipy.special import ellipk

import flexbody as fb
from flexbody import cli


def assert_outputs(out: Path, png: str):
    for name in ("results.npz", "results.json", "histories.csv", "summary.txt", png):
        assert (out / name).is_file() and (out / name).stat().st_size > 0, name
    header = (out / "histories.csv").read_text().splitlines()[0].split(",")
    data = np.loadtxt(out / "histories.csv", delimiter=",", skiprows=1)
    assert header[0] == "t" and data.shape[1] == len(header)
    back = fb.Results.load(out)
    assert back.kind == "dynamic" and np.allclose(back.times, data[:, 0], rtol=1e-11, atol=0)
    return header, data, back


def test_case_04_particle_on_circle(tmp_path):
    case = load("04_particle_on_circle.py")
    m, rho, g, theta0 = case.MASS, case.RADIUS, case.GRAVITY, case.THETA0
    out = tmp_path / "04"
    s = case.main(out, dt=0.01, t_end=6.0)  # full size: dt = 1e-3, 10 s
    _, _data, back = assert_outputs(out, "particle_on_circle.png")
    period = 4.0 * ellipk(np.sin(theta0 / 2) ** 2) * np.sqrt(rho / g)
    assert s["period_expected"] == pytest.approx(period, rel=1e-14)
    assert s["n_lowest_point_passages"] >= 4
    assert abs(s["period_measured"] - period) < 1e-6 * period
    assert s["period_measured"] > 1.3 * s["small_angle_period"]  # θ₀ = 2π/3: far from small angles
    # independent reference: θ̈ = −(g/ρ) sin θ from (θ₀, 0) by DOP853, x = ρ sin θ, y = −ρ cos θ
    sol = solve_ivp(
        lambda t, y: [y[1], -g / rho * np.sin(y[0])],
        (0.0, back.times[-1]),
        [theta0, 0.0],
        method="DOP853",
        rtol=1e-12,
        atol=1e-13,
        t_eval=back.times,
    )
    reference = np.column_stack([rho * np.sin(sol.y[0]), -rho * np.cos(sol.y[0])])
    assert np.abs(back.q - reference).max() < 1e-5
    assert s["energy_drift_relative"] < 1e-6
    E = back.histories["energy"]
    assert np.abs(E - E[0]).max() / back.histories["kinetic"].max() == pytest.approx(s["energy_drift_relative"])
    assert s["max_violation"] < 1e-12 and s["max_velocity_violation"] < 1e-12
    # [AG-35] at t = 0 (at rest): 𝓕 = f⊥ with f = (0, −m g); ours Φᵀλ = −𝓕 = m g sin ϑ ε⊥ (ϑ polar angle)
    vartheta = theta0 - np.pi / 2
    e_perp = np.array([np.cos(vartheta), np.sin(vartheta)])
    f_perp = (np.array([0.0, -m * g]) @ e_perp) * e_perp
    np.testing.assert_allclose(s["t0_f_perp"], f_perp, atol=1e-12)
    np.testing.assert_allclose(s["t0_F_aghili"], f_perp, atol=1e-12)
    np.testing.assert_allclose(s["t0_constraint_force"], -f_perp, atol=1e-12)
    np.testing.assert_allclose(s["t0_f_par"], np.array([0.0, -m * g]) - f_perp, atol=1e-12)
    assert s["t0_max_error"] < 1e-12
    # at the lowest passage the force on the particle is the tension m g cos θ + m v²/ρ towards the centre
    q, speed = np.array(s["fastest_q"]), s["fastest_speed"]
    theta = np.arctan2(q[0], -q[1])
    tension = m * g * np.cos(theta) + m * speed**2 / rho
    np.testing.assert_allclose(s["fastest_constraint_force"], -tension * q / rho, rtol=1e-9, atol=1e-9)
    assert s["fastest_max_error"] < 1e-10
    assert speed == pytest.approx(np.sqrt(2 * g * rho * (1 - np.cos(theta0))), rel=1e-3)


def reduced_reference(times, length, mass, gravity, crank0, torque):
    """θ(t) (s,) on the branch q₂ = 2π − 2q₁ from the 1-dof equation m l² (3 − 2 cos 2θ) θ̈ + 2 m l² sin 2θ θ̇²
    + m g l cos θ = f₁ (case 05's docstring) and the times [s] at which cos θ = 0, by DOP853 at rtol 1e-12."""

    ml2 = mass * length**2

    def rhs(t, y):
        th, om = y
        return [
            om,
            (torque - 2 * ml2 * np.sin(2 * th) * om**2 - mass * gravity * length * np.cos(th))
            / (ml2 * (3 - 2 * np.cos(2 * th))),
        ]

    def singular(t, y):
        return np.cos(y[0])

    sol = solve_ivp(
        rhs,
        (times[0], times[-1]),
        [crank0, 0.0],
        method="DOP853",
        rtol=1e-12,
        atol=1e-12,
        t_eval=times,
        events=singular,
    )
    return sol.y[0], sol.t_events[0]


def test_case_05_slider_crank(tmp_path):
    case = load("05_slider_crank.py")
    out = tmp_path / "05"
    s = case.main(out, t_end=3.0)  # full size: 6 s; same dt = 0.01 as [AG]
    header, _data, back = assert_outputs(out, "slider_crank.png")
    # two singular configurations crossed, q1 = 3π/2 and 5π/2 (≡ π/2), at the times of the 1-dof reference
    assert len(s["crossing_times"]) == 2
    np.testing.assert_allclose(s["crossing_times"], [1.352463, 2.542317], atol=5e-6)
    args = (case.LENGTH, case.MASS, case.GRAVITY, case.CRANK0, case.TORQUE)
    theta_ref, crossings_ref = reduced_reference(back.times, *args)
    assert len(crossings_ref) == 2 and np.abs(np.subtract(s["crossing_times"], crossings_ref)).max() < 1e-5
    np.testing.assert_allclose(s["crossing_angles_over_pi"], [1.5, 2.5], atol=1e-5)
    assert np.abs(back.q[:, 0] - theta_ref).max() < 1e-4
    # each crossing logged by a rank drop (row slider.s0) and a restoration, within a few steps
    assert s["all_crossings_logged"] and s["rank_drop_labels"] == ["slider.s0"]
    assert len(s["rank_drop_times"]) == len(s["rank_restored_times"]) == 2
    for c in s["per_crossing"]:
        assert c["rank_drop_t"] <= c["t"] < c["rank_restored_t"] <= c["rank_drop_t"] + 0.1
        assert c["drop_sigma_min"] < case.SINGULAR_TOL
    kinds = [e["kind"] for e in back.events]
    assert kinds == ["rank_drop", "rank_restored"] * 2
    for e in back.events:  # σ(A) = √5 l |cos q1| below the log floor exactly from drop to restore
        k = int(np.argmin(np.abs(back.times - e["t"])))
        sigma = np.sqrt(5) * case.LENGTH * np.abs(np.cos(back.q[k - 1 : k + 1, 0]))
        assert (
            (sigma[1] < case.SINGULAR_TOL <= sigma[0])
            if e["kind"] == "rank_drop"
            else (sigma[0] < case.SINGULAR_TOL <= sigma[1])
        )
    # constraint held, the branch kept
    assert s["max_violation"] < 1e-8 and s["max_velocity_violation"] < 1e-8
    assert s["max_branch_deviation"] < 1e-8
    # λ jumps at the crossings, the constraint force Φᵀλ does not
    assert s["max_lam_jump_near"] > 10.0 * s["max_lam_jump_away"]
    assert s["max_force_jump_near"] < s["max_force_jump_away"]
    assert {
        "q1",
        "q2",
        "q1dot",
        "q2dot",
        "constraint_force_1",
        "constraint_force_2",
        "lam",
        "rank",
        "violation",
    } <= set(header)


def test_case_05_runs_from_the_cli(tmp_path):
    out = tmp_path / "cli05"
    code = cli.main(["run", str(CASES / "05_slider_crank.py"), "--out", str(out), "--set", "t_end=1.5"])
    assert code == 0 and (out / "summary.txt").is_file()
    events = json.loads((out / "results.json").read_text())["events"]
    assert [e["kind"] for e in events] == ["rank_drop", "rank_restored"]  # q1 = 3π/2 at 1.35 s
    assert events[0]["redundant_labels"] == ["slider.s0"]


def test_case_06_redundant_four_bar(tmp_path):
    case = load("06_redundant_four_bar.py")
    out = tmp_path / "06"
    s = case.main(out, t_end=3.0, dt=0.004)  # full size: 10 s at dt = 0.003
    header, _, back = assert_outputs(out, "four_bar.png")
    assert (s["rank"], s["n_constraints"], s["dof"]) == (2, 3, 1)
    assert s["redundant_labels"] == ["loop.z"]
    assert s["multiplier_refused"] and "numerically singular" in s["multiplier_error"]
    assert "loop.z" in (out / "summary.txt").read_text()
    # the redundant row changes nothing: same motion as the planar closure with the multiplier form
    assert s["max_dq_vs_planar"] < 1e-10
    assert s["max_constraint_force_diff_vs_planar"] < 1e-8
    assert s["max_abs_lam_z"] < 1e-12 and s["ranks_during_run"] == [2]
    assert s["crank_angle_range"] > 5.0  # a large swing, not a small oscillation
    # energy: conserved to < 1e-6 with the correction; drift without stabilisation is larger
    assert s["energy_drift"] < 1e-6 and s["energy_drift_vs_max_kinetic"] < 1e-6 and s["drift_below_limit"]
    assert s["energy_drift_no_stabilisation"] > 2.0 * s["energy_drift"]
    assert s["max_violation"] < 1e-12 and s["max_violation_no_stabilisation"] > 1e-8
    E = back.histories["energy"]
    assert np.abs(E - E[0]).max() / abs(E[0]) == pytest.approx(s["energy_drift"])
    assert {"lam_loop.x", "lam_loop.y", "lam_loop.z", "energy_no_stabilisation"} <= set(header)


@pytest.mark.parametrize("name", ["04_particle_on_circle.py", "05_slider_crank.py", "06_redundant_four_bar.py"])
def test_case_parameters_are_main_keywords(name):
    """Every UPPER_CASE parameter can be overridden from the CLI (``--set name=value`` → main(name=value))."""
    import inspect

    case = load(name)
    params = {k.lower() for k in vars(case) if k.isupper() and not k.startswith("_")}
    signature = inspect.signature(case.main).parameters
    assert params <= set(signature) and callable(case.build)
