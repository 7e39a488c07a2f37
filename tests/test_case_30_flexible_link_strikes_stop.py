"""Case 30 (a flexible link on a spinning hub strikes a stop: rigid–flexible contact through the nonsmooth stepper)
at reduced size: the contact starts when the rigidly turning tip reaches the stop, the hub rebounds, the energy never
grows during contact and the angular momentum changes by the stop's angular impulse; its outputs."""

import json

from case_files import assert_files, load

import flexbody as fb


def test_case_30_the_link_strikes_and_rebounds(tmp_path):
    case = load("30_flexible_link_strikes_stop.py")
    s = case.main(tmp_path, divisions=(6, 1, 1), t_end=0.22)
    assert 0.0 <= s["first_contact_closed_form"] - s["first_contact"] < s["parameters"]["dt"]  # within the step
    assert 0.002 < s["contact_duration"] < 0.03 and s["rebound_ratio"] < -0.1  # it rebounds (−0.58 at full size)
    assert s["largest_energy_rise_in_contact"] <= 0.0 and s["energy_end"] < s["energy_start"]
    assert s["lowest_gap"] > -1e-12 and s["largest_violation"] < 1e-10
    assert s["momentum_balance_error"] < 1e-3  # first order in dt: 1.1e-4 at full size, 6.0e-5 at dt/2
    assert_files(tmp_path, ["summary.txt", "hub.png", "beam.pvd", "hub.pvd", "contacts.pvd", "results.npz"])
    assert json.loads((tmp_path / "summary.txt").read_text())["parameters"]["divisions"] == [6, 1, 1]
    assert fb.Results.load(tmp_path).histories["contact_normal_force"].shape[1] == 4
