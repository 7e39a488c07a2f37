"""Benchmark: the UR5 reaching problem solved by flexbody's DDP (``fb.predictive.solve_ddp``) and by Crocoddyl's FDDP
on the same URDF, discretisation, costs and horizon (issue 37: the optimum equal to 1e-6 relative, in at most twice
Crocoddyl's solve time).

The problem: ``meshes/robots/ur5_robot.urdf`` from rest at Q0, N intervals of DT, the origin of ``tool0`` to TARGET;
running cost dt·(W_GOAL·½‖p − p*‖² + W_X·½‖x − x0‖² + W_U·½‖u‖²), terminal W_GOAL_END·½‖p − p*‖² + W_X·½‖x − x0‖²;
symplectic Euler. Crocoddyl runs in its own environment (``make crocoddyl-venv`` makes ``.venv-crocoddyl``: pin 4.0.0
and crocoddyl 3.2.1, which do not install beside the test set's pin 4.1) through ``tests/oracles/crocoddyl_reach.py``,
which reports its optimum and the median of ``--repeats`` solves. flexbody solves from the same start (the quasi-static
torques at Q0) to the same stopping criterion (Σ‖Q_u‖² ≤ TH_STOP). Reported: the relative differences of the cost, the
states and the inputs, the iterations, both solve times and their ratio. Exit code 0 whether or not a goal is met.

Usage::

    python tests/benchmarks/bench_reach_crocoddyl.py [--python .venv-crocoddyl/bin/python] [--repeats N]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' reach_problem
from reach_problem import DT, ROOT, TH_STOP, crocoddyl, flexbody_problem  # noqa: E402

from flexbody.predictive import solve_ddp  # noqa: E402

GOAL = 2.0  # flexbody's time over Crocoddyl's


def rel(x, ref) -> float:
    x, ref = np.asarray(x, dtype=float), np.asarray(ref, dtype=float)
    return float(np.max(np.abs(x - ref)) / np.max(np.abs(ref)))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--python", default=str(ROOT / ".venv-crocoddyl" / "bin" / "python"))
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    croco = crocoddyl(args.python, args.repeats)
    print(f"Crocoddyl {croco['versions']}: a running node's cost is {croco['running_scale']:.6g} × its differential")
    print(f"model's (dt = {DT}), the terminal node's {croco['terminal_scale']:.6g} ×")
    problem = flexbody_problem()
    solve_ddp(problem, tolerance=TH_STOP)  # loads the compiled kernels
    seconds, solution = [], None
    for _ in range(args.repeats):
        start = time.perf_counter()
        solution = solve_ddp(problem, tolerance=TH_STOP)
        seconds.append(time.perf_counter() - start)
    assert solution is not None
    print(f"start: the quasi-static torques against Crocoddyl's {rel(problem_start(problem), croco['us0'][0]):.1e}")
    gap = abs(solution.cost - croco["cost"]) / croco["cost"]
    print(f"cost: flexbody {solution.cost:.15g}, Crocoddyl {croco['cost']:.15g}, relative {gap:.1e}")
    states, inputs = rel(solution.xs, croco["xs"]), rel(solution.us, croco["us"])
    print(f"states {states:.1e}, inputs {inputs:.1e} (relative to their largest)")
    print(f"iterations: flexbody {solution.iterations}, Crocoddyl {croco['iterations']}")
    ours, theirs = float(np.median(seconds)), croco["seconds"]
    print(f"solve: flexbody {ours * 1e3:.1f} ms, Crocoddyl {theirs * 1e3:.1f} ms", end=": ")
    print(f"ratio {ours / theirs:.2f} (goal ≤ {GOAL})")
    return 0


def problem_start(problem) -> np.ndarray:
    from flexbody.predictive.ddp import _holding

    return _holding(problem, np.asarray(problem.assembled.S, dtype=float))[0]


if __name__ == "__main__":
    sys.exit(main())
