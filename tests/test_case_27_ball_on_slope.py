"""Case 27 (a ball on a slope through compliant contact with friction) at reduced size: one slope where it rolls and
one where it slips, against the rigid-body closed forms 5/7 g sin θ and g (sin θ − μ cos θ); its outputs."""

import json

from case_files import assert_files, load

import flexbody as fb


def test_case_27_rolls_and_slips_as_coulomb_says(tmp_path):
    case = load("27_ball_on_slope.py")
    s = case.main(tmp_path, angles=(30.0, 50.0), t_end=0.3)
    rolls, slips = s["slopes"]
    assert (rolls["regime"], slips["regime"]) == ("rolls", "slips")
    # measured 3.3e-13 (rolling) and 4.0e-8 (slipping) at the full length; the fit window is shorter here
    assert abs(rolls["relative_error"]) < 1e-6 and abs(slips["relative_error"]) < 1e-5
    assert rolls["slip_speed_end"] < 1e-3 < 0.1 < slips["slip_speed_end"]
    assert abs(s["transition_deg"] - 46.397) < 1e-3
    assert_files(tmp_path, ["summary.txt", "acceleration.png", "ball.pvd", "contacts.pvd", "results.npz"])
    assert json.loads((tmp_path / "summary.txt").read_text())["parameters"]["angles"] == [30.0, 50.0]
    back = fb.Results.load(tmp_path)
    assert back.histories["contact_normal_force"].shape == (back.n_steps, 1)
