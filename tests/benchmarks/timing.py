"""What the benchmark scripts share: the relative difference used for their agreement checks and batches of
calls sized to last a minimum time (the scripts interleave such batches of flexbody and the peer)."""
from __future__ import annotations

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


def loops_for(call, min_time: float) -> int:
    """Calls per batch so that one batch of ``call`` lasts ≥ ``min_time`` [s]."""
    loops = 1
    while True:
        t = batch_seconds(call, loops)
        if t >= min_time:
            return loops
        loops = max(2 * loops, int(np.ceil(loops * min_time / max(t, 1e-9) * 1.1)))
