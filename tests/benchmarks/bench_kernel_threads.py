"""Benchmark: the H8 internal-force kernel on 1 and on 2 threads, idle and under a concurrent CPU load (issue 18).

Throughput in elements per second of ``FlexibleBody.internal_force(q)`` — St. Venant–Kirchhoff 8-node
hexahedra, 2 × 2 × 2 Gauss points, no damping — on box meshes of 20 × 20 × 20 = 8000 and 40 × 50 × 50 =
100 000 elements, at a smooth deformation of a few percent strain. "1 thread" and "2 threads" are
``numba.set_num_threads(1)`` and ``(2)``; the body then runs its kernels on ``kernel_threads(m)`` threads
(the smaller of that setting, the process's CPU affinity and the element-count cap), which the table prints.

Conditions: (a) idle; (b) loaded, with one busy-loop process (``python -c "while True: pass"``) per CPU started
before and killed right after the loaded measurement. In each condition the script times ``--rounds`` rounds,
each round one batch of every (mesh, threads) configuration in turn (batches sized once to last
≥ ``--min-time``), and reports the median over rounds of the time per call. The table gives elements/s with 1
and with 2 threads, their ratio (2-thread / 1-thread throughput: the requirement of issue 18 is ≥ 1 in every
row, idle and loaded) and the 1-thread rate against the goal of 3e6 elements/s. The load average (1, 5, 15
min) and the number of runnable threads of the machine are printed before and after each condition.

Correctness check (independent of scikit-fem): on each mesh the 2-thread force equals the 1-thread force to
1e-12 relative in the infinity norm (they are bitwise equal by construction: blocks of a colour share no node);
a failed check sets the exit code to 1. Missed goals do not change the exit code: this is a measurement.

The script opts in to ``fb.limit_threads()`` before any numba threading call, so the OpenMP wait policy that
call sets (``OMP_WAIT_POLICY`` PASSIVE unless set; the ``flexbody`` command sets the same) is the one measured;
OMP/OPENBLAS/MKL_NUM_THREADS=1 unless set (BLAS plays no part here).

Usage::

    python tests/benchmarks/bench_kernel_threads.py [--rounds N] [--min-time S] [--no-load] [--quick]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import time
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # one BLAS thread, before numpy loads BLAS

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # timing
sys.path.insert(1, str(HERE.parent.parent))  # the repository's flexbody
import numba as nb  # noqa: E402
import numpy as np  # noqa: E402
from timing import batch_seconds, loops_for, rel  # noqa: E402

import flexbody as fb  # noqa: E402

fb.limit_threads()  # the OpenMP wait policy must precede the OpenMP runtime (loaded by the next import)
from flexbody.fem.flexible_body import kernel_threads  # noqa: E402

MESHES = {8_000: (20, 20, 20), 100_000: (40, 50, 50)}
THREADS = (1, 2)
GOAL = 3e6  # elements/s on one thread
AGREE_TOL = 1e-12
YOUNG, POISSON, DENSITY = 2.0e5, 0.3, 1000.0


def body_and_state(divisions) -> tuple[fb.FlexibleBody, np.ndarray]:
    """A unit-cube SVK body of 8-node elements and a smooth deformation q (3n,) of a few percent strain."""
    mesh = fb.mesh.box((1.0, 1.0, 1.0), divisions, order=1)
    body = fb.FlexibleBody(
        "cube", mesh, fb.StVenantKirchhoff(young=YOUNG, poisson=POISSON, density=DENSITY), locking=None
    )
    X = mesh.points
    u = 0.03 * np.stack([X[:, 0] * X[:, 1], np.sin(X[:, 0]) * X[:, 2], X[:, 2] ** 2 - X[:, 1]], axis=1)
    return body, (X + u).ravel()


def load_line() -> str:
    """Load average (1, 5, 15 min) and the machine's runnable / all threads now (Linux /proc/loadavg)."""
    try:
        fields = Path("/proc/loadavg").read_text().split()
        return f"load average {fields[0]} {fields[1]} {fields[2]}, runnable/threads now {fields[3]}"
    except OSError:
        return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


@contextlib.contextmanager
def cpu_load(n_processes: int):
    """One busy-loop Python process per CPU while the block runs; killed (and reaped) after it."""
    processes = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n_processes)]
    try:
        time.sleep(0.5)  # let them start and spread over the CPUs
        yield
    finally:
        for process in processes:
            process.kill()
        for process in processes:
            process.wait()


def set_threads(n: int) -> None:
    nb.set_num_threads(min(n, nb.config.NUMBA_NUM_THREADS))


def measure(calls: dict, loops: dict, rounds: int) -> dict:
    """Median over ``rounds`` interleaved rounds of the time per call [s] of every (m, threads) configuration."""
    times = {key: [] for key in calls}
    for _ in range(rounds):
        for key, call in calls.items():
            set_threads(key[1])
            times[key].append(batch_seconds(call, loops[key]) / loops[key])
    return {key: float(np.median(t)) for key, t in times.items()}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rounds", type=int, default=7, help="interleaved rounds per condition (default 7)")
    p.add_argument("--min-time", type=float, default=0.15, help="seconds per timed batch (default 0.15)")
    p.add_argument("--no-load", action="store_true", help="measure the idle condition only")
    p.add_argument("--quick", action="store_true", help="3 rounds of 0.05 s batches")
    args = p.parse_args(argv)
    if args.quick:
        args.rounds, args.min_time = 3, 0.05
    if args.rounds < 1 or args.min_time <= 0:
        p.error("--rounds must be >= 1, --min-time > 0")

    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(
        f"numpy {np.__version__}   numba {nb.__version__}   Python {sys.version.split()[0]}   "
        f"CPUs: {os.cpu_count()} (affinity {cpus})   numba thread pool: {nb.config.NUMBA_NUM_THREADS}   "
        f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY')}"
    )

    bodies = {m: body_and_state(div) for m, div in MESHES.items()}
    calls, used, ok = {}, {}, True
    for m, (body, q) in bodies.items():
        forces = {}
        for n in THREADS:
            set_threads(n)
            used[m, n] = kernel_threads(body.n_elements)
            calls[m, n] = lambda body=body, q=q: body.internal_force(q)
            forces[n] = calls[m, n]()  # compiles (or loads) the kernels
        diff = rel(forces[2], forces[1])
        ok &= diff <= AGREE_TOL
        print(
            f"check, {m} elements: |f(2 threads) - f(1 thread)|_inf / |f|_inf = {diff:.1e} "
            f"({'ok' if diff <= AGREE_TOL else 'FAILED'}, tolerance {AGREE_TOL:g}; bitwise equal: "
            f"{np.array_equal(forces[1], forces[2])})"
        )
    print(f"threading layer: {nb.threading_layer()}")
    loops = {}
    for key, call in calls.items():
        set_threads(key[1])
        loops[key] = loops_for(call, args.min_time)

    conditions = ["idle"] if args.no_load else ["idle", "loaded"]
    results = {}
    for condition in conditions:
        print(f"{condition}: before, {load_line()}")
        if condition == "idle":
            results[condition] = measure(calls, loops, args.rounds)
        else:
            with cpu_load(os.cpu_count() or 1):
                print(f"loaded: {os.cpu_count()} busy loops started, {load_line()}")
                results[condition] = measure(calls, loops, args.rounds)
        print(f"{condition}: after, {load_line()}")
    set_threads(nb.config.NUMBA_NUM_THREADS)

    print(
        f"\nH8 SVK internal force, elements/s (median of {args.rounds} interleaved rounds, batches of "
        f">= {args.min_time:g} s)"
    )
    print(f"{'condition':<10}{'elements':>10}{'threads used':>14}{'1 thread':>12}{'2 threads':>12}{'2t / 1t':>9}")
    for condition, times in results.items():
        for m in MESHES:
            r1, r2 = m / times[m, 1], m / times[m, 2]
            print(f"{condition:<10}{m:>10}{f'{used[m, 1]} / {used[m, 2]}':>14}{r1:>12.3e}{r2:>12.3e}{r2 / r1:>9.2f}")
    print(f"\n1-thread elements/s against the goal of {GOAL:.0e}:")
    for condition, times in results.items():
        text = ", ".join(f"{m} elements {m / times[m, 1]:.3e} ({m / times[m, 1] / GOAL:.2f} x goal)" for m in MESHES)
        print(f"  {condition}: {text}")
    never_slower = all(times[m, 2] <= times[m, 1] for times in results.values() for m in MESHES)
    print(f"2 threads at least as fast as 1 in every row: {'yes' if never_slower else 'NO'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
