"""Benchmark: one controlled step of the wiping case (case 31: the UR5 pressing a flexible blade on a table) against an
uncontrolled step of the same system — issue 35's goal: controller + contact solve + dynamics ≤ 1.5× the step alone.

Controlled: case 31's force-controlled law (``fb.control.AdmittanceControl`` around the direct mapping of the
flange pose on the whole constrained system; its force and tip loops) from the case's start for ``--steps`` steps of
``fb.MoreauJean(dt=1e-3)``: the blade is pressed onto the table within them. Uncontrolled: the same system from the
controlled run's last state (pressed, the same contacts pushing) with the inputs the controller gave there held
constant, for as many steps. Both runs are repeated ``--repeats`` times, interleaved; reported: the median wall
time per step of each and the median ratio of the pairs (one thread). A measurement: the exit code is 0 whether or
not the goal is met.

Usage::

    python tests/benchmarks/bench_controlled_contact.py [--steps N] [--repeats R] [--divisions NX NY NZ]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' case_files
from case_files import load  # noqa: E402

CASE = "31_ur5_wipes_with_flexible_blade.py"


def controlled(case, asm, steps: int):
    """(seconds, Results) of the force-controlled run of ``steps`` steps from the case's start."""
    import flexbody as fb

    law = case.controller(asm, False)
    start = time.perf_counter()
    res = fb.simulate(asm, steps * 1e-3, integrator=fb.MoreauJean(dt=1e-3), controller=law)
    return time.perf_counter() - start, res


def uncontrolled(asm, res, steps: int) -> float:
    """Seconds of ``steps`` steps from the last state of ``res`` with its last inputs held."""
    import flexbody as fb

    tau = np.asarray(asm.S, dtype=float).T @ res.histories["tau_k"][-2]
    start = time.perf_counter()
    fb.simulate(asm, steps * 1e-3, integrator=fb.MoreauJean(dt=1e-3), tau=tau, q0=res.q[-1], v0=res.v[-1])
    return time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--divisions", type=int, nargs=3, default=None)
    args = parser.parse_args(argv)
    case = load(CASE)
    asm = case.build(**({} if args.divisions is None else {"divisions": tuple(args.divisions)})).assemble()
    controlled(case, asm, 20)  # compiles what the runs use
    with_law, without, ratios = [], [], []
    for _ in range(args.repeats):
        seconds, res = controlled(case, asm, args.steps)
        alone = uncontrolled(asm, res, args.steps)
        pushing = int((res.histories["contact_normal_force"][-2] > 0).sum())
        with_law.append(seconds / args.steps)
        without.append(alone / args.steps)
        ratios.append(seconds / alone)
    print(f"wiping case: {asm.n_dofs} coordinates, {len(asm.contacts)} contacts ({pushing} pushing at the end)")
    print(f"controlled step   {1e3 * np.median(with_law):7.2f} ms (median of {args.repeats})")
    print(f"uncontrolled step {1e3 * np.median(without):7.2f} ms")
    ratio = float(np.median(ratios))
    print(f"ratio (median of the pairs) {ratio:.2f}  goal ≤ 1.5: {'met' if ratio <= 1.5 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
