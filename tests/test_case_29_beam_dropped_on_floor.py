"""Case 29 (a flexible beam dropped on the floor through unilateral node contacts and the nonsmooth stepper) at
reduced size: it comes to rest on its nodes, without friction exactly in the uniaxial compression of its own weight;
its outputs."""

import json

from case_files import assert_files, load

import flexbody as fb


def test_case_29_beam_comes_to_rest_in_its_closed_form_compression(tmp_path):
    case = load("29_beam_dropped_on_floor.py")
    s = case.main(tmp_path, frictions=(0.0, 0.5), divisions=(4, 1, 1), t_end=0.6)
    slides, holds = s["runs"]
    # measured at full size: 2.9e-11 of the closed form, at rest to 4.4e-14 m/s, sum f_n = m g to 1e-14
    assert slides["top_error"] < 1e-9 and slides["largest_speed_end"] < 1e-6  # landed at 1 m/s; 4.9e-9 here
    for run in (slides, holds):
        assert abs(run["normal_force_over_weight"] - 1.0) < 1e-9
        assert run["lowest_gap"] > -1e-12 and run["largest_energy_rise"] < 1e-12 and run["outside_cone"] <= 1e-12
    assert holds["largest_speed_end"] < 1e-6
    assert abs(s["resting_top_closed_form"] / s["resting_top_first_order"] - 1.0) < 1e-3
    assert_files(tmp_path, ["summary.txt", "energy.png", "beam.pvd", "contacts.pvd", "results.npz"])
    assert json.loads((tmp_path / "summary.txt").read_text())["parameters"]["divisions"] == [4, 1, 1]
    assert fb.Results.load(tmp_path).histories["contact_normal_force"].shape[1] == 27
