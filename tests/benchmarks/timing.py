"""What the benchmark scripts share: the relative difference used for their agreement checks and batches of
calls sized to last a minimum time (the scripts interleave such batches of flexbody and the peer)."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time

import numpy as np


def rel(x, ref) -> float:
    """max |x − ref| / max |ref| (1e-300 floor); 0 for empty arrays."""
    x, ref = np.asarray(x, dtype=float), np.asarray(ref, dtype=float)
    return float(np.max(np.abs(x - ref), initial=0.0) / max(np.max(np.abs(ref), initial=0.0), 1e-300))


def batch_seconds(call, loops: int) -> float:
    """Wall time [s] of ``loops`` calls of ``call``."""
    start = time.perf_counter()
    for _ in range(loops):
        call()
    return time.perf_counter() - start


def median_seconds(call, repeats: int, warm: bool = True) -> float:
    """The median wall time [s] of ``repeats`` calls of ``call`` (after one call not timed, with ``warm``)."""
    if warm:
        call()
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        seconds.append(time.perf_counter() - start)
    return float(np.median(seconds))


def loops_for(call, min_time: float) -> int:
    """Calls per batch so that one batch of ``call`` lasts ≥ ``min_time`` [s]."""
    loops = 1
    while True:
        t = batch_seconds(call, loops)
        if t >= min_time:
            return loops
        loops = max(2 * loops, int(np.ceil(loops * min_time / max(t, 1e-9) * 1.1)))


def fmt(value) -> str:
    """A table cell: yes/no, integers and strings as they are, floats to 4 significant digits (n/a if missing)."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (str, int, np.integer)):
        return str(value)
    if value is None or not np.isfinite(value):
        return "n/a"
    a = abs(value)
    return f"{value:.3e}" if a and (a < 1e-2 or a >= 1e5) else f"{value:.4g}"


def markdown_table(title: str, rows, columns, failure=lambda row: None) -> None:
    """Print ``rows`` (dicts) as a Markdown table of ``columns`` under ``title``; a row for which ``failure(row)``
    gives a text is printed as its case name and that text."""
    print(f"\n### {title}\n")
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    for r in rows:
        message = failure(r)
        if message:
            print(f"| {r['case']} | {message} |")
        else:
            print("| " + " | ".join(fmt(r.get(c, float("nan"))) for c in columns) + " |")
    sys.stdout.flush()


THREAD_VARIABLES = ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def print_worker_result(out: dict, load: float) -> None:
    """Print a worker process's result, with its peak RSS and the load average when it started, on the line
    :func:`run_worker` reads."""
    out["RSS MB"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    out["load"] = load
    print("RESULT " + json.dumps(out, default=float), flush=True)


def run_worker(
    script,
    job: dict,
    threads: int = 0,
    *,
    timeout: float | None = None,
    quiet: bool = False,
    failure_key: str = "error",
) -> dict:
    """Run ``script --worker JOB`` in a fresh interpreter (``threads`` > 0: that many numba/BLAS threads) and
    return the dict it printed with :func:`print_worker_result`, or {failure_key: why} (a non-zero exit or
    the timeout). ``quiet``: drop the worker's stderr."""
    env = dict(os.environ)
    if threads:
        for key in THREAD_VARIABLES:
            env[key] = str(threads)
    try:
        proc = subprocess.run(
            [sys.executable, str(script), "--worker", json.dumps(job)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL if quiet else None,
            text=True,
            env=env,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return {failure_key: f"killed after {timeout:.0f} s"}
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    return json.loads(lines[-1][7:]) if lines and not proc.returncode else {failure_key: f"exit {proc.returncode}"}
