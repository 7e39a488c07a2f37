"""Case 22 (modes of the servo-held arm with its flexible beam) at full size with one step size per mode and
a shorter stiffness sweep: the modes against a free-vibration simulation, the Timoshenko cantilever and the
first-order servo-compliance formula; the other ways of holding the arm; the written mode directories."""

import numpy as np
from case_files import assert_files, load

import flexbody as fb

SERVO_HZ = [1.79368, 2.90397, 5.75674, 16.5061, 18.1115, 27.9341, 41.6048, 50.2274]  # measured, docstring


def test_case_22_modes_against_simulation_and_closed_forms(tmp_path):
    case = load("22_arm_beam_modes.py")
    s = case.main(tmp_path, steps_per_period=(100,), stiffness_sweep=(1.0, 1e3, 1e5, 1e6, 1e7))
    f = np.array(s["frequencies"])
    assert np.abs(f / SERVO_HZ - 1).max() < 1e-5  # 6 significant digits as printed
    assert s["kinds"] == [
        "in-plane",
        "out-of-plane bending",
        "in-plane",
        "in-plane",
        "out-of-plane bending",
        "in-plane",
        "torsion",
        "out-of-plane bending",
    ]
    assert s["equilibrium_residual"] < 1e-8 and s["n_rigid_body"] == 0  # 1.9e-9 N measured
    holds = s["holds"]
    assert holds["constant_torque"][0] < 0 < holds["constant_torque"][1]  # −0.2764 Hz: unstable without servo
    assert abs(holds["free_joints_hanging"][0] - 0.4836) < 1e-4 and abs(s["hanging_posture"][0] - np.pi / 2) < 1e-9
    # out-of-plane modes do not move the joints: the servo's are the locked cantilever's
    assert abs(f[1] / holds["locked"][0] - 1) < 1e-9 and abs(f[4] / holds["locked"][3] - 1) < 1e-9
    assert -6e-3 < s["preload_effect"][0] < -5e-3  # −0.54 %: gravity's preload

    # (1) free vibration: the measured frequency is the trapezoidal rule's for the modal one, and stays in mode
    runs = s["free_vibration"]
    assert [r["mode"] for r in runs] == [0, 3] and all(r["rejected"] == 0 for r in runs)
    for r in runs:
        assert abs(r["trapezoidal_period_error"] + 3.288e-4) < 1e-6  # −(ωΔt)²/12 at 100 steps
        assert abs(r["error_vs_trapezoidal"]) < 1e-5  # −7.1e-9, −1.9e-6
        assert abs(r["modal_coordinate_vs_trapezoidal"]) < 5e-6  # 8.5e-11, 1.2e-6
        assert r["leakage"] < 1e-3  # 3.5e-5, 4.0e-4
    assert abs(runs[0]["error_vs_trapezoidal"]) < 1e-7
    nonlinear = s["nonlinear_run"]
    assert 9.0 < nonlinear["leakage"] / runs[1]["leakage"] < 11.0  # ∝ amplitude (×10)

    # (2) locked, g = 0, ν = 0: Timoshenko clamped–free beam
    limit = s["cantilever_limit"]
    assert limit["vs_timoshenko"][0] < 2e-4 and limit["vs_timoshenko"][1] < 1e-3  # 3.9e-5, 2.9e-4
    assert abs(limit["timoshenko_vs_euler_bernoulli"][0] + 2.911e-3) < 1e-6
    # (3) servo compliance: 1/k approach to the locked frequency, first-order formula to O(1/k²)
    rows = {r["stiffness"]: r for r in s["stiffness_sweep"]["rows"]}
    assert s["max_first_order_error"] < 1e-4  # 4.2e-5 at k = 1e5
    gaps = [rows[k]["locked_minus_first_in_plane"] * k for k in (1e5, 1e6, 1e7)]
    assert np.ptp(gaps) < 0.01 * gaps[-1]  # 1819, 1825, 1826 Hz·N·m/rad
    assert rows[1.0]["frequencies"][0] < 0 < rows[1e3]["frequencies"][0]

    assert_files(
        tmp_path,
        [
            "summary.txt",
            "summary.json",
            "frequencies.png",
            "mode_shapes.png",
            "modes/modes.csv",
            "modes/mode_00/beam.pvd",
            "modes/mode_00/arm.pvd",
            "modes/mode_07/results.json",
            "free_mode_03/results.npz",
            "free_mode_03/beam.pvd",
            "free_mode_03/arm.pvd",
        ],
    )
    assert sorted(fb.io.find_series(tmp_path / "modes" / "mode_03")) == ["arm", "beam"]
    back = fb.Results.load(tmp_path / "modes" / "mode_03")
    assert abs(back.metadata["frequency_hz"] - f[3]) < 1e-12 and back.kind == "modal" and back.times[-1] < 1.0
