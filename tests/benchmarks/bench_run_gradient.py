"""Benchmark: the adjoint gradient of a flagship run with respect to 1000 inputs against the run alone — issue 36's
goal: an adjoint gradient with respect to ≥ 1000 inputs costs no more than 5× one forward run.

The system is case 16's arm with its 27-node beam (``build()``), open loop: ``--intervals`` piecewise-constant torque
pairs (1000 inputs by default) over ``--t-end`` seconds of ``fb.GeneralizedAlpha(dt=1e-3, rho_inf=0.99)``. The
forward run is ``fb.simulate`` under those inputs; the gradient is ``fb.gradient`` (that run and one backward sweep)
of the beam's residual vibration energy and the effort. Both are repeated ``--repeats`` times, interleaved, one
thread; reported: the median seconds of each and the median ratio of the pairs. A measurement: the exit code is 0
whether or not the goal is met.

Usage::

    python tests/benchmarks/bench_run_gradient.py [--t-end T] [--intervals K] [--repeats R]
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

CASE = "16_arm_beam_task_control.py"


def main(argv=None) -> int:
    import flexbody as fb

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--t-end", type=float, default=1.0)
    parser.add_argument("--intervals", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    case = load(CASE)
    asm = case.build().assemble()
    beam = asm.flexible.bodies[0]
    rng = np.random.default_rng(0)
    inputs = fb.PiecewiseInputs(np.linspace(0.0, args.t_end, args.intervals + 1), rng.normal(size=(args.intervals, 2)))
    cost = fb.FlexibleEnergy(beam) + 1e-3 * fb.Effort()
    integrator = fb.GeneralizedAlpha(dt=1e-3, rho_inf=0.99)
    fb.gradient(asm, 0.02, cost, inputs, integrator=integrator)  # compiles what both use
    runs, gradients, ratios = [], [], []
    for _ in range(args.repeats):
        start = time.perf_counter()
        fb.simulate(asm, args.t_end, integrator=integrator, tau=inputs.forces(asm))
        run = time.perf_counter() - start
        start = time.perf_counter()
        result = fb.gradient(asm, args.t_end, cost, inputs, integrator=integrator)
        both = time.perf_counter() - start
        runs.append(run)
        gradients.append(both)
        ratios.append(both / run)
    steps = result.results.metadata["statistics"]["steps"]
    print(f"flagship: {asm.n_dofs} coordinates, {steps} steps, {inputs.values.size} inputs, |∇J| = "
          f"{np.linalg.norm(result.inputs):.3e}")  # fmt: skip
    print(f"forward run         {np.median(runs):7.2f} s (median of {args.repeats})")
    print(
        f"run + adjoint sweep {np.median(gradients):7.2f} s (the sweep alone {result.seconds['sensitivities']:.2f} s)"
    )
    ratio = float(np.median(ratios))
    print(f"ratio (median of the pairs) {ratio:.2f}  goal ≤ 5: {'met' if ratio <= 5.0 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
