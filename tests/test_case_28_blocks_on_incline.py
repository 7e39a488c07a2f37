"""Case 28 (blocks on an incline through unilateral contact and the nonsmooth stepper) at reduced length: the boxes
below their friction angle stick without creeping, the others slide at g (sin θ − μ cos θ); its outputs."""

import json

from case_files import assert_files, load

import flexbody as fb


def test_case_28_blocks_stick_or_slide_as_coulomb_says(tmp_path):
    case = load("28_blocks_on_incline.py")
    s = case.main(tmp_path, frictions=(0.3, 0.7), t_end=0.2)
    slides, sticks = s["blocks"]
    assert (slides["regime"], sticks["regime"]) == ("slides", "sticks")
    assert abs(slides["error"]) < 1e-12  # measured 2.4e-15 at full length
    assert abs(sticks["travelled"]) < 1e-15 and abs(sticks["acceleration"]) < 1e-12  # round-off: 6e-18 m here
    assert max(slides["tilt"], sticks["tilt"]) < 1e-12
    assert max(slides["normal_force_error"], sticks["normal_force_error"]) < 1e-10
    assert_files(tmp_path, ["summary.txt", "travelled.png", "block0.pvd", "contacts.pvd", "results.npz"])
    assert json.loads((tmp_path / "summary.txt").read_text())["parameters"]["frictions"] == [0.3, 0.7]
    back = fb.Results.load(tmp_path)
    assert back.histories["contact_normal_force"].shape == (back.n_steps, 8)
