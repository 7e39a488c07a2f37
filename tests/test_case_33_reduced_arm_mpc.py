"""Case 33 (MPC of case 16's arm on its reduced model, tracking the flange circle within torque limits, the plant the
full ANCF model, against case 16's operational-space law clipped to the same limits).

* Fast, on a 3 × 1 × 1 beam to 2 s: the MPC tracks the circle with a smaller error than the clipped law; its torques
  stay within the limits; it re-plans every period and linearises every RELINEARIZE updates.
* The whole case (``make test-slow``, about 30 s): the same at full size to 3 s (the Done-when of #37; the time of an
  update is measured by ``tests/benchmarks/bench_mpc_update.py``)."""

import numpy as np
import pytest
from case_files import load


def check(summary, case, t_end):
    law, mpc = summary["operational space"], summary["MPC"]
    assert mpc["max_circle_error"] < law["max_circle_error"]
    assert np.all(np.asarray(mpc["largest_torques"]) <= np.asarray(case.LIMITS))
    updates = round(t_end / case.PERIOD)
    assert mpc["updates"]["updates"] == updates and mpc["updates"]["relinearizations"] == updates // case.RELINEARIZE


def test_mpc_tracks_the_circle_better_than_the_clipped_law(tmp_path):
    case = load("33_reduced_arm_mpc.py")
    summary = case.main(
        tmp_path, t_end=2.0, divisions=(3, 1, 1), budget=1.0
    )  # no deadline: the same plan on any machine
    check(summary, case, 2.0)
    assert (tmp_path / "tracking.png").exists() and (tmp_path / "summary.txt").exists()


@pytest.mark.slow  # the full case: two runs of the 6 × 1 × 1 plant to 3 s
def test_full_case(tmp_path):
    case = load("33_reduced_arm_mpc.py")
    check(case.main(tmp_path), case, case.T_END)
