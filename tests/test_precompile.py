"""``python -m flexbody.precompile`` (run by ``make setup``) compiles every kernel that a run needs, so the
first run of the flagship case loads its kernels from numba's on-disk cache instead of compiling them."""

import json
import subprocess
import sys
from pathlib import Path

from flexbody import precompile

REPO = Path(__file__).resolve().parents[1]

PROBE = """
import json, sys
from flexbody import precompile
from case_files import load
for process in precompile.STAGES["run"]:                 # what make run compiles
    for name in process:
        precompile.run_group(name)
warm = precompile.compiled_signatures()
case = load("16_arm_beam_task_control.py")
case.main(sys.argv[1], divisions=(3, 1, 1), t_settle=0.02, t_end=0.04, dt=0.01, vtk_every=2)
load("05_slider_crank.py").main(sys.argv[1] + "/05", t_end=0.05)
after = precompile.compiled_signatures()
print(json.dumps({"warm": sorted(map(list, warm)), "new": sorted(map(list, after - warm))}))
"""


def test_warm_up_covers_every_kernel_the_flagship_and_a_rigid_case_use(tmp_path):
    """In a fresh process: after the warm-up of ``make run`` (stage "run"), running the flagship (reduced) and
    case 05 adds no compiled kernel signature — they only load what the set-up compiled."""
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**__import__("os").environ, "PYTHONPATH": str(REPO / "tests")},
        timeout=900,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    assert data["new"] == [], data["new"]
    assert len(data["warm"]) >= 12  # the kernels called from Python


def test_groups_run_one_by_one_or_in_processes():
    """Each stage runs its processes at once, each process its groups in turn; "full" runs every group once, "all"
    every group but the parallel kernels of user laws (no test calls them)."""
    groups = {"flexible", "rigid", "parallel", "trees", "hyperelastic", "steps", "hyperelastic_parallel", "predictive"}
    assert set(precompile.GROUPS) == groups
    for stage in precompile.STAGES.values():
        in_stage = [g for process in stage for g in process]
        assert len(in_stage) == len(set(in_stage))
    assert {g for process in precompile.STAGES["full"] for g in process} == groups
    assert {g for process in precompile.STAGES["all"] for g in process} == groups - {"hyperelastic_parallel"}
    assert precompile.main(["--group", "rigid", "--group", "trees"]) == 0  # cached by now: loads, compiles nothing


USER_LAW_PROBE = """
import json
import numpy as np
import sympy as sp
import flexbody as fb
from flexbody import precompile
for process in precompile.STAGES["all"]:
    for name in process:
        precompile.run_group(name)
warm = precompile.compiled_signatures()
def psi(C, c10, c01, kappa):                    # Mooney–Rivlin as W(C): a structure the warm-up never saw
    J = sp.sqrt(C.det())
    I1, I2 = C.trace(), ((C.trace())**2 - (C * C).trace()) / 2
    return c10 * (J**sp.Rational(-2, 3) * I1 - 3) + c01 * (J**sp.Rational(-4, 3) * I2 - 3) + kappa / 2 * (J - 1)**2
law = fb.Hyperelastic.from_cauchy_green(psi, density=1e3, parameters={"c10": 1e5, "c01": 2e4, "kappa": 1e6},
                                        damping=1e-3)
for order, locking in ((1, None), (1, "incompatible_modes"), (2, None)):
    body = fb.FlexibleBody("b", fb.mesh.box((1.0, 0.2, 0.2), (3, 1, 1), order=order), law, locking=locking)
    q = body.reference_coordinates() * 1.01
    v = np.full_like(q, 1e-2)
    body.internal_force(q, v), body.internal_force(q), body.tangent(q, v), body.damping_matrix(q, v)
    body.strain_energy(q), body.gauss_point_fields(q)
print(json.dumps(sorted(map(list, precompile.compiled_signatures() - warm))))
"""


def test_a_user_law_of_any_structure_runs_in_the_kernels_compiled_by_the_warm_up():
    """The element kernels take a user law as a first-class function: after the warm-up of ``make setup`` (one user
    law), a law of another structure (another compiled ``cfunc``) in a fresh process compiles no kernel signature."""
    proc = subprocess.run(
        [sys.executable, "-c", USER_LAW_PROBE], capture_output=True, text=True, cwd=REPO, timeout=900, check=False
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == []
