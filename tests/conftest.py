"""Test-session settings.

Under pytest-xdist (``make test`` runs ``-n auto``) every worker already keeps a core busy, so each runs
the numba kernels on one thread: two threads per worker would oversubscribe the cores, and a thread that
waits for a busy core stalls a whole parallel assembly. Tests that need several threads set them.
"""
import os

import numba

if os.environ.get("PYTEST_XDIST_WORKER"):
    numba.set_num_threads(1)
