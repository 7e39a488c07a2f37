"""Importing flexbody limits the BLAS libraries to one thread unless the user chose (flexbody.linalg.blas_threads)."""

import os
import subprocess
import sys

from threadpoolctl import threadpool_info, threadpool_limits

from flexbody.linalg.blas_threads import THREAD_VARIABLES, limit_blas_threads


def _blas_threads() -> set[int]:
    """Thread counts of the loaded BLAS libraries that can run threads (a serial build reports layer "disabled")."""
    return {
        pool["num_threads"]
        for pool in threadpool_info()
        if pool["user_api"] == "blas" and pool.get("threading_layer") != "disabled"
    }


def test_a_users_choice_holds():
    for name in THREAD_VARIABLES:
        assert limit_blas_threads({name: "2"}) is False


def test_without_a_choice_blas_gets_one_thread():
    with threadpool_limits(limits=2, user_api="blas"):
        assert limit_blas_threads({}) is True
        assert _blas_threads() <= {1}


def test_importing_flexbody_after_numpy_limits_blas_and_respects_the_environment():
    code = (
        "import numpy, threadpoolctl, flexbody; "
        "print(sorted({p['num_threads'] for p in threadpoolctl.threadpool_info() if p['user_api'] == 'blas' "
        "and p.get('threading_layer') != 'disabled'}))"
    )
    env = {k: v for k, v in os.environ.items() if k not in THREAD_VARIABLES}
    limited = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert limited.stdout.strip() == "[1]"
    chosen = subprocess.run(
        [sys.executable, "-c", code],
        env={**env, "OPENBLAS_NUM_THREADS": "2"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert chosen.stdout.strip() == ("[2]" if (os.cpu_count() or 1) >= 2 else "[1]")  # OpenBLAS caps at the CPUs
