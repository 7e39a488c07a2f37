"""Benchmark: the analytic derivatives of the inverse dynamics, flexbody against Pinocchio, in one run — issue 36's
goal: ∂τ/∂q, ∂τ/∂q̇ (and M) on the 30-dof chain in no more than 2× Pinocchio's ``computeRNEADerivatives``.

Model and state: the random revolute chain of ``bench_rigid_dynamics.py`` (``--dofs``, ``--seed``). flexbody:
``tree.inverse_dynamics_derivatives(q, v, a)`` (three new (n, n) arrays: ∂τ/∂q, ∂τ/∂q̇, M); Pinocchio:
``pin.computeRNEADerivatives(model, data, q, v, a)`` (fills data.dtau_dq, data.dtau_dv and the upper triangle of
data.M). Before timing, the results are compared (relative max difference). Timing: one thread, the garbage collector
off; batches of each call sized to last ≥ ``--min-time``, ``--rounds`` rounds of one batch each, interleaved;
reported: the median µs per call of each and the median of the per-round ratios. Exit code 0 whether or not the goal
is met (a measurement).

Usage::

    python tests/benchmarks/bench_rigid_derivatives.py [--dofs N] [--seed K] [--rounds N] [--min-time S]
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # tests/ (pinocchio_oracle)
sys.path.insert(1, str(HERE))

from bench_rigid_dynamics import random_chain  # noqa: E402
from timing import batch_seconds, loops_for  # noqa: E402

GOAL = 2.0


def main(argv=None) -> int:
    import pinocchio as pin
    from pinocchio_oracle import PinocchioOracle

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dofs", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--min-time", type=float, default=0.1)
    args = parser.parse_args(argv)
    tree, q, v, a, _ = random_chain(args.dofs, args.seed)
    oracle = PinocchioOracle(tree)
    qp, vp, ap = oracle.to_pin(q), oracle.to_pin(v), oracle.to_pin(a)
    dq, dv, _ = tree.inverse_dynamics_derivatives(q, v, a)
    pin.computeRNEADerivatives(oracle.model, oracle.data, qp, vp, ap)
    order = np.ix_(oracle.perm, oracle.perm)
    difference = max(
        np.abs(dq[order] - oracle.data.dtau_dq).max() / np.abs(dq).max(),
        np.abs(dv[order] - oracle.data.dtau_dv).max() / np.abs(dv).max(),
    )
    calls = {
        "flexbody": lambda: tree.inverse_dynamics_derivatives(q, v, a),
        "pinocchio": lambda: pin.computeRNEADerivatives(oracle.model, oracle.data, qp, vp, ap),
    }
    gc.disable()
    loops = {name: loops_for(call, args.min_time) for name, call in calls.items()}
    samples: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(args.rounds):
        for name, call in calls.items():
            samples[name].append(1e6 * batch_seconds(call, loops[name]) / loops[name])
    gc.enable()
    ratio = float(np.median(np.array(samples["flexbody"]) / np.array(samples["pinocchio"])))
    print(f"{args.dofs}-dof revolute chain (seed {args.seed}); agreement {difference:.1e} (relative)")
    for name in calls:
        print(f"{name:10s} {np.median(samples[name]):8.2f} µs a call (median of {args.rounds})")
    verdict = "met" if ratio <= GOAL else "NOT met"
    print(f"ratio flexbody / pinocchio {ratio:.2f} (median of the rounds); goal ≤ {GOAL}: {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
