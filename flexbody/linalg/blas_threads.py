"""How many threads the BLAS libraries (OpenBLAS of numpy and scipy) use: one, unless the user chose.

flexbody's dense linear algebra is small (rigid trees, constraint rows, task maps of a few hundred rows) and
its large factorisations are sparse. On small problems a second BLAS thread gains little when the machine
is idle and, when another process keeps a core busy, loses badly: OpenBLAS's threads wait for each other
by spinning, so on 2 cores with one other busy process a Cholesky factorisation of a 353 × 353 matrix took
420–560 ms with OpenBLAS's 2 threads against 0.55 ms with one, and an SVD of it 1.0–1.3 s against 22 ms
(measured here). So importing flexbody limits the BLAS libraries already loaded to one thread (through
threadpoolctl, which works whether or not numpy was imported first), unless one of
:data:`THREAD_VARIABLES` is set in the environment: then the user's choice holds. To use more BLAS threads
anyway, set ``OPENBLAS_NUM_THREADS`` before starting Python, or call
``threadpoolctl.threadpool_limits(k, user_api="blas")`` after importing flexbody.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS")
"""Environment variables by which a user chooses the BLAS thread count."""

__all__ = ["THREAD_VARIABLES", "limit_blas_threads"]


def limit_blas_threads(environ: Mapping[str, str] | None = None) -> bool:
    """Limit the loaded BLAS libraries to one thread unless ``environ`` (default ``os.environ``) sets one of
    :data:`THREAD_VARIABLES`; whether it did."""
    environ = os.environ if environ is None else environ
    if any(name in environ for name in THREAD_VARIABLES):
        return False
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")
    return True
