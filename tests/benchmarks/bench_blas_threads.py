"""Benchmark: BLAS on 1 and on 2 threads, idle and under a concurrent CPU load — why flexbody's runs limit the
BLAS libraries to one thread for their duration (``flexbody.threads``, issue 18: nothing may get slower with more
threads under load).

Per call, median over interleaved rounds: LAPACK's Cholesky (``scipy.linalg.lapack.dpotrf``) and an SVD
(``numpy.linalg.svd``) of a dense SPD 353 × 353 matrix (the size of the flagship's dense rank checks), and a
CHOLMOD factorisation (``flexbody.linalg.sparse_factor.SparseFactor``) of the stiffness-plus-mass matrix of the
120 × 4 × 4 cantilever (9 075 coordinates). "1 thread" / "2 threads" are ``threadpoolctl.threadpool_limits(k,
user_api="blas")``. Conditions: idle, and loaded with one busy-loop process per CPU (as
``bench_kernel_threads.py``). The ratio printed is time on 2 threads / time on 1 (above 1: the second thread
costs). The load average is printed with each condition.

Usage::

    python tests/benchmarks/bench_blas_threads.py [--rounds N] [--no-load]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(HERE.parent.parent))
import numpy as np  # noqa: E402
import scipy.linalg.lapack as lapack  # noqa: E402
from bench_kernel_threads import cpu_load, load_line  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

import flexbody as fb  # noqa: E402
from flexbody.linalg.sparse_factor import SparseFactor  # noqa: E402


def problems() -> dict:
    """name -> call, on the dense 353 × 353 SPD matrix and the 9 075-coordinate cantilever matrix."""
    rng = np.random.default_rng(0)
    A = rng.normal(size=(353, 353))
    S = A @ A.T + 353.0 * np.eye(353)
    body = fb.mechanisms.flexible.cantilever(divisions=(120, 4, 4)).bodies[0]
    q = body.reference_coordinates()
    K = (body.tangent(q, np.zeros_like(q)) + 1e3 * body.mass_matrix()).tocsc()
    K = ((K + K.T) * 0.5).tocsc()
    K.sort_indices()
    return {
        "dense Cholesky 353": lambda: lapack.dpotrf(S, lower=1),
        "dense SVD 353": lambda: np.linalg.svd(S),
        "CHOLMOD 9075": lambda: SparseFactor().factor(K, lu_fallback=False),
    }


def per_call(call, seconds: float = 0.2) -> float:
    call()
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds or n < 2:
        call()
        n += 1
    return (time.perf_counter() - t0) / n


def measure(calls: dict, rounds: int) -> dict:
    times = {(name, k): [] for name in calls for k in (1, 2)}
    for _ in range(rounds):
        for name, call in calls.items():
            for k in (1, 2):
                with threadpool_limits(limits=k, user_api="blas"):
                    times[(name, k)].append(per_call(call))
    return {key: float(np.median(t)) for key, t in times.items()}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--no-load", action="store_true")
    args = p.parse_args(argv)
    calls = problems()
    conditions = [("idle", None)] + ([] if args.no_load else [("loaded", os.cpu_count() or 2)])
    print(f"CPUs: {os.cpu_count()}; ms per call, median of {args.rounds} interleaved rounds")
    print(f"{'condition':<9} {'problem':<20} {'1 thread':>10} {'2 threads':>10} {'2t / 1t':>8}")
    for condition, busy in conditions:
        if busy:
            with cpu_load(busy):
                print(f"# {condition}: {busy} busy loops, {load_line()}")
                result = measure(calls, args.rounds)
        else:
            print(f"# {condition}: {load_line()}")
            result = measure(calls, args.rounds)
        for name in calls:
            one, two = result[(name, 1)], result[(name, 2)]
            print(f"{condition:<9} {name:<20} {1e3 * one:10.3f} {1e3 * two:10.3f} {two / one:8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
