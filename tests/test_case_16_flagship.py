"""Case 16, the flagship (README main job), at reduced size: an arm carrying a flexible beam under direct
task-space control of its flange [DE-65..71, DE-107..113].

Checked against closed forms: the task error after a step of the goal follows e(t) = e0(1 + ωt)e^{−ωt}
up to the torque hold of one step, an O(ω·dt) departure that halves with dt (first order, so Richardson
extrapolation removes it); the energy balance E − E0 = W − D; the flange map is full rank and the beam-tip
map orders of magnitude smaller (DE 6.3). The outputs the README promises are read back with meshio and
pyvista.
"""

import json
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from case_files import assert_files, kill_after_checkpoint, load

SMALL = {"divisions": (3, 1, 1), "t_settle": 0.6, "t_end": 1.8, "dt": 2e-3, "vtk_every": 50}


@pytest.fixture(scope="module")
def case():
    return load("16_arm_beam_task_control.py")


@pytest.fixture(scope="module")
def run(case, tmp_path_factory):
    out = tmp_path_factory.mktemp("case16")
    return out, case.main(str(out), **SMALL)


def test_phase_one_follows_the_closed_form_to_first_order_in_dt(case):
    """Departure from the closed form / |e0| (2 × 1 × 1 27-node beam): measured 0.0761, 0.0401, 0.0206 at dt = 4, 2,
    1 ms (ratios 1.90, 1.95); Richardson-extrapolated 4.0e-3 from 4 and 2 ms, 1.1e-3 from 2 and 1 ms."""
    asm = case.build(divisions=(2, 1, 1)).assemble()
    q0, v0 = case.start_state(asm)
    departures = []
    for dt in (2e-3, 1e-3):
        res, ref, x0 = case.run(
            asm, q0, v0, case.OFFSET, case.OMEGA, 0.5, case.RADIUS, case.FREQUENCY, case.T_RAMP, 0.5, dt, case.RHO_INF
        )
        departures.append(
            case.numbers(asm, res, ref, x0, case.OFFSET, case.OMEGA, 0.5, case.RADIUS)[
                "phase1_departure_from_closed_form"
            ]
        )
    ratio = departures[0] / departures[1]
    assert 1.8 <= ratio <= 2.1  # first order in dt
    assert departures[1] <= 2.0 * case.OMEGA * 1e-3  # O(ω dt)
    assert abs(2.0 * departures[1] - departures[0]) <= 0.1 * departures[1]  # extrapolates to ~0


def test_summary_numbers(run):
    out, s = run
    assert s["ranks"]["flange"]["ok"] and s["ranks"]["flange"]["rank"] == 2
    flange, tip = (min(s["ranks"][k]["singular_values"]) for k in ("flange", "tip"))
    assert tip < 1e-3 * flange  # elastic coupling only (DE 6.3)
    assert s["phase2_max_tracking_error_over_radius"] < 0.05
    assert s["max_violation"] < 1e-9
    assert abs(s["energy_balance_error"]) <= 1e-4 * abs(s["applied_work"])
    assert s["max_tip_deflection"] > 1e-3  # the beam does bend
    assert json.loads((out / "summary.txt").read_text())["n_coordinates"] == s["n_coordinates"]


def test_outputs_read_back_with_meshio_and_pyvista(run):
    import meshio
    import pyvista as pv

    out, s = run
    assert_files(
        out,
        [
            "results.npz",
            "results.json",
            "beam.pvd",
            "arm.pvd",
            "histories.csv",
            "histories.png",
            "task.png",
            "tip.png",
            "screenshot.png",
            "summary.txt",
        ],
    )
    steps = s["steps"]
    for series in ("beam", "arm"):
        files = [d.get("file") for d in ET.parse(out / f"{series}.pvd").getroot().iter("DataSet")]
        assert len(files) == len(range(0, steps + 1, SMALL["vtk_every"])) + (steps % SMALL["vtk_every"] != 0)
        reader = pv.get_reader(str(out / f"{series}.pvd"))
        assert len(reader.time_values) == len(files)
        reader.set_active_time_value(reader.time_values[-1])
        mesh = reader.read()[0]
        assert mesh.n_points > 0
        if series == "beam":
            assert {"displacement", "von_mises", "green_lagrange_strain"} <= set(mesh.point_data.keys())
            last = meshio.read(out / files[-1])
            assert last.points.shape == (mesh.n_points, 3)
            assert np.abs(last.point_data["displacement"]).max() > 1e-4
    header = (out / "histories.csv").read_text().splitlines()[0].split(",")
    assert header[0] == "t" and any(h.startswith("task_error") for h in header)


def test_killed_case_completes_with_run_resume(case, run, tmp_path):
    """`flexbody run` killed part-way (SIGKILL once its checkpoint passes t = 0.6 s of 1.8 s), then
    `flexbody run --resume` with no --set (the saved values are reused): the final results equal the
    uninterrupted run's exactly."""
    import sys
    from pathlib import Path

    import flexbody as fb
    from flexbody import cli

    path = str(Path(case.__file__))
    out = tmp_path / "killed"
    settings = [
        "--set",
        "divisions=(3,1,1)",
        "--set",
        "t_settle=0.6",
        "--set",
        "t_end=1.8",
        "--set",
        "dt=0.002",
        "--set",
        "vtk_every=50",
    ]
    kill_after_checkpoint(
        [sys.executable, "-m", "flexbody.cli", "run", path, "--out", str(out), "--no-progress", *settings], out, 0.6
    )
    partial = fb.Results.load(out)
    assert partial.metadata["complete"] is False and 0.5 < partial.times[-1] < 1.8

    assert cli.main(["run", path, "--out", str(out), "--no-progress", "--resume"]) == 0
    resumed, uninterrupted = fb.Results.load(out), fb.Results.load(run[0])
    assert resumed.metadata["complete"] and resumed.metadata["resumed_at"][0] >= 0.6
    np.testing.assert_array_equal(resumed.times, uninterrupted.times)
    assert np.max(np.abs(resumed.q - uninterrupted.q)) <= 1e-13
    assert np.max(np.abs(resumed.histories["task_error"] - uninterrupted.histories["task_error"])) <= 1e-13
    summary = json.loads((out / "summary.txt").read_text())
    for key in ("phase1_departure_from_closed_form", "phase2_max_tracking_error", "max_tip_deflection"):
        assert summary[key] == pytest.approx(run[1][key], rel=1e-12, abs=1e-15), key
    assert_files(out, ["beam.pvd", "arm.pvd", "histories.csv", "screenshot.png"])

    # a second --resume finds the run complete and reuses it; other --set values are refused
    assert cli.main(["run", path, "--out", str(out), "--no-progress", "--resume"]) == 0
    assert np.array_equal(fb.Results.load(out).q, resumed.q)
    assert cli.main(["run", path, "--out", str(out), "--no-progress", "--resume", "--set", "dt=0.001"]) == 2
