"""Benchmark: the wall time of one update of case 33's MPC (the reduced arm tracking the flange circle, the plant the
full ANCF model) against issue 37's goal of 1 ms (median, one thread), against the operational-space law's evaluation
in the same run, and its bounded QP against clarabel, scipy and (when installed) proxsuite on the same problems.

Part 1, closed loop: case 33's plant and MPC (``--t-end`` s, default its T_END; BLAS and numba at one thread) and,
in the same process, case 16's law on the plant clipped to the same limits. Reported: the MPC report (first update,
median, mean, largest, relinearisations, updates over budget) and the median wall time of the law's evaluation per
plant step, with the ratio of the two medians.

Part 2, the QPs: every QP of the closed-loop run is recorded with its warm start; each is solved again, in
``--rounds`` interleaved rounds, by ``solve_box_qp`` warm-started (as the MPC does) and cold, by clarabel (interior
point, no warm start), by scipy's ``lsq_linear`` (BVLS, on the Cholesky form of the problem) and by proxsuite's dense
solver with box constraints (if importable). Reported: the median µs per QP of each, the ratio to ``solve_box_qp``
warm, and the largest difference of its solutions from ``solve_box_qp``'s. Exit code 0 whether or not a goal is met.

Usage::

    python tests/benchmarks/bench_mpc_update.py [--t-end S] [--rounds N] [--every K]
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
import scipy.linalg as la  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from scipy.optimize import lsq_linear  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' case_files
from case_files import load  # noqa: E402

import flexbody as fb  # noqa: E402
import flexbody.predictive.controller as mpc_module  # noqa: E402
from flexbody.linalg.box_qp import solve_box_qp  # noqa: E402

GOAL = 1e-3  # s, the median update


class Timed:
    """A controller whose every evaluation is timed."""

    def __init__(self, controller):
        self.controller, self.seconds = controller, []
        self.outputs, self.kind = controller.outputs, controller.kind

    def __getattr__(self, name):
        return getattr(self.controller, name)

    def __call__(self, t, state, system=None):
        start = time.perf_counter()
        out = self.controller(t, state, system)
        self.seconds.append(time.perf_counter() - start)
        return out


def closed_loop(case, t_end: float):
    """Both controllers on the plant; (the MPC's report, the law's median seconds, the recorded QPs)."""
    plant, model = case.build(False).assemble(), case.build(True).assemble()
    _, start = fb.holding_inputs(plant)
    goal = case.flange_task(plant).evaluate(plant.workspace(0.0, start.q)).x + np.asarray(case.OFFSET)
    reference = fb.control.CircleAfterStep(goal, case.T_SETTLE, case.RADIUS, case.FREQUENCY, case.T_RAMP)
    law, mpc = case.controllers(plant, model, reference)
    problems = []
    solve = mpc_module.solve_box_qp

    def recording(H, g, lower, upper, *, start=None, deadline=None):
        problems.append((H, g.copy(), lower, upper, None if start is None else start.copy()))
        return solve(H, g, lower, upper, start=start, deadline=deadline)

    mpc_module.solve_box_qp = recording
    try:
        case.track(plant, mpc, start, t_end)
    finally:
        mpc_module.solve_box_qp = solve
    timed = Timed(law)
    case.track(plant, timed, start, t_end)
    return mpc.report(), float(np.median(timed.seconds[1:])), problems


def solvers():
    """name → solve(H, g, lower, upper, start) -> x."""
    import clarabel

    def clarabel_solve(H, g, lower, upper, start):
        n = g.size
        settings = clarabel.DefaultSettings()
        settings.verbose = False
        settings.tol_gap_abs = settings.tol_gap_rel = settings.tol_feas = 1e-10
        A = sp.vstack([sp.eye(n), -sp.eye(n)]).tocsc()
        cones = [clarabel.NonnegativeConeT(2 * n)]
        return np.array(
            clarabel.DefaultSolver(sp.csc_matrix(np.triu(H)), g, A, np.r_[upper, -lower], cones, settings).solve().x
        )

    def bvls(H, g, lower, upper, start):
        L = la.cholesky(H, lower=True)  # ½xᵀHx + gᵀx = ½‖Lᵀx + L⁻¹g‖² + const
        return lsq_linear(L.T, -la.solve_triangular(L, g, lower=True), bounds=(lower, upper), method="bvls").x

    found = {
        "solve_box_qp warm": lambda H, g, lo, up, s: solve_box_qp(H, g, lo, up, start=s).x,
        "solve_box_qp cold": lambda H, g, lo, up, s: solve_box_qp(H, g, lo, up).x,
        "clarabel": clarabel_solve,
        "scipy lsq_linear (bvls)": bvls,
    }
    try:
        import proxsuite

        def prox(H, g, lower, upper, start):
            qp = proxsuite.proxqp.dense.QP(g.size, 0, 0, True)
            qp.settings.eps_abs = 1e-10
            qp.init(H, g, None, None, None, None, None, lower, upper)
            qp.solve()
            return qp.results.x.copy()

        found["proxsuite dense"] = prox
    except ImportError:
        print("proxsuite not installed: left out")
    return found


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--t-end", type=float, default=None)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--every", type=int, default=4, help="time every k-th recorded QP")
    args = parser.parse_args(argv)
    case = load("33_reduced_arm_mpc.py")
    report, law_seconds, problems = closed_loop(case, case.T_END if args.t_end is None else args.t_end)
    print(f"MPC updates: {report}")
    verdict = "met" if report.median <= GOAL else "NOT met"
    print(f"median update {report.median * 1e3:.3f} ms (goal ≤ {GOAL * 1e3:.0f} ms: {verdict})")
    print(
        f"the law's evaluation {law_seconds * 1e3:.3f} ms per plant step; "
        f"MPC update / law {report.median / law_seconds:.2f}"
    )
    chosen = problems[1 :: args.every]  # the first carries the one-time loading
    names = solvers()
    seconds = {name: [] for name in names}
    reference = [solve_box_qp(*p[:4], start=p[4]).x for p in chosen]
    differences = dict.fromkeys(names, 0.0)
    for _ in range(args.rounds):
        for name, solve in names.items():
            start = time.perf_counter()
            xs = [solve(*p) for p in chosen]
            seconds[name].append((time.perf_counter() - start) / len(chosen))
            worst = max(float(np.abs(x - r).max()) for x, r in zip(xs, reference))
            differences[name] = max(differences[name], worst)
    base = float(np.median(seconds["solve_box_qp warm"]))
    print(f"{len(chosen)} QPs of {problems[1][1].size} variables, median over {args.rounds} rounds:")
    for name in names:
        median = float(np.median(seconds[name]))
        print(
            f"  {name:26s} {median * 1e6:9.1f} µs  ×{median / base:6.2f}  max |x − x_ours| {differences[name]:.1e} N·m"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
