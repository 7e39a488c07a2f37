"""Thread settings (flexbody.threads): importing flexbody changes nothing in the process; runs limit the BLAS
libraries to one thread for their own duration unless the user chose; fb.limit_threads is the explicit opt-in."""

import os
import subprocess
import sys

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

import flexbody as fb
from flexbody.threads import THREAD_VARIABLES, blas_limited


def _blas_threads() -> set[int]:
    """Thread counts of the loaded BLAS libraries that can run threads (a serial build reports layer "disabled")."""
    return {
        pool["num_threads"]
        for pool in threadpool_info()
        if pool["user_api"] == "blas" and pool.get("threading_layer") != "disabled"
    }


def _without_choice() -> dict:
    return {k: v for k, v in os.environ.items() if k not in (*THREAD_VARIABLES, "OMP_WAIT_POLICY")}


def test_importing_flexbody_changes_nothing_in_the_process():
    """The issue's check: the thread pools (libraries and their thread counts) and OMP_WAIT_POLICY are the same
    before and after ``import flexbody`` (threads=2 so that a limit to one would show)."""
    code = (
        "import os, threadpoolctl, numpy\n"
        "threadpoolctl.threadpool_limits(2, user_api='blas')\n"
        "a = threadpoolctl.threadpool_info()\n"
        "import flexbody\n"
        "assert a == threadpoolctl.threadpool_info(), 'thread pools changed'\n"
        "assert 'OMP_WAIT_POLICY' not in os.environ, 'OMP_WAIT_POLICY set'\n"
        "flexbody.System, flexbody.simulate  # names load their rooms on use\n"
        "assert 'OMP_WAIT_POLICY' not in os.environ, 'OMP_WAIT_POLICY set by using flexbody'\n"
    )
    subprocess.run([sys.executable, "-c", code], env=_without_choice(), check=True)


def test_a_run_limits_blas_to_one_thread_and_restores_the_users_setting(monkeypatch):
    for name in THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    asm = fb.mechanisms.slider_crank().assemble()
    during = []

    def tau(t, q, v):
        during.append(_blas_threads())
        return np.zeros(asm.n_dofs)

    with threadpool_limits(limits=2, user_api="blas"):
        before = threadpool_info()
        fb.simulate(asm, 2e-3, integrator=fb.RK4(dt=1e-3), tau=tau)
        assert during and all(threads <= {1} for threads in during)
        after = {p["filepath"]: p["num_threads"] for p in threadpool_info()}
        assert {p["filepath"]: after[p["filepath"]] for p in before} == {
            p["filepath"]: p["num_threads"] for p in before
        }


def test_a_users_choice_holds():
    for name in THREAD_VARIABLES:
        with threadpool_limits(limits=2, user_api="blas"):
            threads = _blas_threads()
            with blas_limited({name: "2"}):
                assert _blas_threads() == threads


def test_without_a_choice_blas_gets_one_thread_within_a_run():
    with threadpool_limits(limits=2, user_api="blas"), blas_limited({}):
        assert _blas_threads() <= {1}


def test_limit_threads_is_the_process_wide_opt_in():
    code = (
        "import os, threadpoolctl, numpy, scipy.linalg, flexbody\n"
        "done = flexbody.limit_threads()\n"
        "print(done['blas'], os.environ['OMP_WAIT_POLICY'], sorted({p['num_threads'] for p in "
        "threadpoolctl.threadpool_info() if p['user_api'] == 'blas' and p.get('threading_layer') != 'disabled'}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=_without_choice(), capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["1", "PASSIVE", "[1]"]
    chosen = subprocess.run(
        [sys.executable, "-c", code],
        env={**_without_choice(), "OPENBLAS_NUM_THREADS": "2", "OMP_WAIT_POLICY": "ACTIVE"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert chosen.stdout.split()[:2] == ["None", "ACTIVE"]


def test_limit_threads_comes_before_the_openmp_runtime():
    """``fb.limit_threads`` resolves without loading the compiled kernels (whose parallel ones start the OpenMP
    runtime, which reads OMP_WAIT_POLICY once, when it loads), so the policy it sets takes effect: with spinning
    idle threads the loaded 2-thread element force ran at 0.44–0.81 of one thread instead of ≥ 0.93."""
    code = (
        "import sys\n"
        "import flexbody as fb\n"
        "fb.limit_threads\n"
        "assert 'flexbody.fem' not in sys.modules, 'resolving fb.limit_threads imported the element kernels'\n"
        "assert 'gomp' not in open('/proc/self/maps').read(), 'the OpenMP runtime was loaded'\n"
        "fb.limit_threads()\n"
        "import os\n"
        "assert os.environ['OMP_WAIT_POLICY'] == 'PASSIVE'\n"
    )
    subprocess.run([sys.executable, "-c", code], env=_without_choice(), check=True)
