"""How many threads the BLAS libraries (OpenBLAS of numpy and scipy) and the OpenMP team of the parallel element
kernels use while flexbody runs — without changing the user's process.

flexbody's dense linear algebra is small (rigid trees, constraint rows, task maps of a few hundred rows) and
its large factorisations are sparse. On small problems a second BLAS thread gains little when the machine
is idle and, when another process keeps a core busy, loses badly: OpenBLAS's threads wait for each other
by spinning, so on 2 cores with one other busy process a Cholesky factorisation of a 353 × 353 matrix took
420–560 ms with OpenBLAS's 2 threads against 0.55 ms with one, and an SVD of it 1.0–1.3 s against 22 ms
(measured here). So the entry points that run a model (``simulate``, ``resume``, ``solve_static``,
``modal_analysis``, ``linearize``, …) limit the loaded BLAS libraries to one thread for the duration of the call
(:func:`one_blas_thread`, threadpoolctl's context manager, which restores the limits on return), unless one of
:data:`THREAD_VARIABLES` is set in the environment: then the user's choice holds. Importing flexbody changes
nothing.

:func:`limit_threads` is the explicit, process-wide opt-in (the ``flexbody`` command calls it for its own
process): BLAS limited to one thread for the rest of the process, and idle OpenMP threads made to sleep instead of
spinning (``OMP_WAIT_POLICY=PASSIVE``; measured: the 8000-element force 5 times slower on 2 threads than on 1 with
two busy processes on two cores when idle threads spin), which only takes effect when set before the OpenMP
runtime starts.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS")
"""Environment variables by which a user chooses the BLAS thread count."""

__all__ = ["THREAD_VARIABLES", "blas_limited", "one_blas_thread", "limit_threads"]

F = TypeVar("F", bound=Callable[..., Any])


def user_chose_threads(environ: Mapping[str, str] | None = None) -> bool:
    """Whether ``environ`` (default ``os.environ``) sets one of :data:`THREAD_VARIABLES`."""
    environ = os.environ if environ is None else environ
    return any(name in environ for name in THREAD_VARIABLES)


def blas_limited(environ: Mapping[str, str] | None = None) -> contextlib.AbstractContextManager:
    """A context within which the loaded BLAS libraries use one thread (restored on exit), or one that changes
    nothing when ``environ`` (default ``os.environ``) sets one of :data:`THREAD_VARIABLES`."""
    if user_chose_threads(environ):
        return contextlib.nullcontext()
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")


def one_blas_thread(function: F) -> F:
    """``function`` run within :func:`blas_limited` (a decorator of the entry points that run a model)."""

    @functools.wraps(function)
    def limited(*args, **kwargs):
        with blas_limited():
            return function(*args, **kwargs)

    return limited  # type: ignore[return-value]


def limit_threads(*, blas: int | None = 1, omp_wait_policy: str | None = "PASSIVE") -> dict[str, Any]:
    """Process-wide thread settings, an explicit opt-in (flexbody never calls it on import).

    Parameters
    ----------
    blas : int or None
        Threads of every loaded BLAS library from now on (threadpoolctl), unless the environment sets one of
        :data:`THREAD_VARIABLES` (the user's choice holds); None leaves them.
    omp_wait_policy : str or None
        ``OMP_WAIT_POLICY`` for the OpenMP runtime of the parallel element kernels ("PASSIVE": idle threads
        sleep), set unless the environment already sets it; it takes effect only if the runtime has not started
        yet, so call this before the first run. None leaves it.

    Returns
    -------
    dict
        What was set: {"blas": threads or None, "omp_wait_policy": value or None}.
    """
    done: dict[str, Any] = {"blas": None, "omp_wait_policy": None}
    if omp_wait_policy is not None and "OMP_WAIT_POLICY" not in os.environ:  # first: threadpoolctl loads libgomp,
        os.environ["OMP_WAIT_POLICY"] = omp_wait_policy  # which reads the policy when it is loaded
        done["omp_wait_policy"] = omp_wait_policy
    if blas is not None and not user_chose_threads():
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=int(blas), user_api="blas")
        done["blas"] = int(blas)
    return done
