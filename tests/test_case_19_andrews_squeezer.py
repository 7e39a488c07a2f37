"""Case 19 (Andrews' squeezer, IFToMM A03) at full length: the benchmark's angles at 30 ms, the energy
balance with the motor's work, and the written outputs."""

import numpy as np
from case_files import assert_files, load

import flexbody as fb


def test_case_19_matches_the_benchmark(tmp_path):
    case = load("19_andrews_squeezer.py")
    s = case.main(tmp_path, implicit_dt=2e-5, record_every=30)
    assert s["max_angle_error"] < 1e-8  # RK4 at 1e-5 s: 8.9e-10 rad measured
    assert s["implicit_max_angle_error"] < 2e-3  # generalized-α is second order
    assert s["max_energy_balance_error"] < 1e-8 * s["motor_work"]
    assert s["max_violation"] < 1e-12
    assert_files(
        tmp_path,
        ["results.npz", "results.json", "histories.csv", "summary.txt", "squeezer.png", "crank.pvd", "arm67.pvd"],
    )
    back = fb.Results.load(tmp_path)
    assert np.array_equal(back.q[-1], np.asarray(s["angles_at_end"])[[0, 1, 2, 4, 3, 6, 5]])
