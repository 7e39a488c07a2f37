"""Case 24 (the arm of case 16 with its beam reduced to modes on link 2, under flange task control) over 0.8 s
with 8 and 24 modes: the reduced beam converges to the full one as modes are added, has no constraint rows, and
its tip is actuated through its frame where the full beam's tip node is not. Bounds: the numbers measured at
these settings (in the comments) with a margin."""

import json

from case_files import load


def test_case_24_reduced_beam_converges_to_the_full_one(tmp_path):
    case = load("24_reduced_arm_beam_control.py")
    s = case.main(tmp_path, n_modes=(8, 24), t_end=0.8, vtk_every=100)
    few, many = s["reduced"][8], s["reduced"][24]
    assert (few["coordinates"], many["coordinates"], few["constraint_rows"]) == (10, 26, 0)
    assert s["full"]["coordinates"] == 353 and s["full"]["constraint_rows"] == 27
    # tip deflection relative to the flange frame, max |reduced − full| / max |full|: 0.126 (8), 0.0454 (24)
    assert many["tip_deflection_difference_over_max"] < 0.5 * few["tip_deflection_difference_over_max"]
    assert many["tip_deflection_difference_over_max"] < 0.06
    assert many["task_error_difference"] < 0.5 * few["task_error_difference"]  # 3.5e-4, 5.5e-5 m
    # foreshortening of the 30 mm sag, ∫w′²/2 ≈ 2δ²/3L = 1.0 mm for a parabola: measured 8.8e-4 m
    assert many["start_tip_difference"] < 1.2e-3
    assert s["tip_task_rank"]["full"]["rank"] < 2 and s["tip_task_rank"]["reduced"]["rank"] == 2
    assert (tmp_path / "reduced_24" / "beam.pvd").exists() and (tmp_path / "tip.png").exists()
    assert json.loads((tmp_path / "summary.txt").read_text())["parameters"]["n_modes"] == [8, 24]
