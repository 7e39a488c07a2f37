"""Test-session settings.

Under pytest-xdist (``make test`` runs ``-n auto``) every worker already keeps a core busy, so each runs
the numba kernels on one thread: two threads per worker would oversubscribe the cores, and a thread that
waits for a busy core stalls a whole parallel assembly. Tests that need several threads set them.

Some test modules draw their data from a module-level generator ``RNG``. Which draws a test got used to
depend on which tests ran before it in the same process — under xdist, on how the tests were spread over
the workers. The generator is reseeded before every test from the test's id, so each test sees the same
data in any order, on any worker.

Every nonsmooth run of a test (``fb.simulate`` with ``fb.MoreauJean``, in the test's process) is checked for contact
impulses that give energy (``contact_energy.assert_contacts_give_no_energy``): #34 asks that energy never grow at
contact on every test.
"""

import os
import zlib

import numba
import numpy as np
import pytest
from contact_energy import assert_contacts_give_no_energy

from flexbody.solvers import runner

if os.environ.get("PYTEST_XDIST_WORKER"):
    numba.set_num_threads(1)


@pytest.fixture(autouse=True)
def _module_rng_per_test(request):
    rng = getattr(request.module, "RNG", None)
    if isinstance(rng, np.random.Generator):  # reseeded in place: defaults bound to it follow
        rng.bit_generator.state = np.random.default_rng(zlib.crc32(request.node.nodeid.encode())).bit_generator.state
    yield


@pytest.fixture(autouse=True)
def _contacts_never_give_energy(monkeypatch):
    steps = runner.run_moreau_jean

    def checked(run, *args, **kwargs):
        steps(run, *args, **kwargs)
        rows = run.recorder.rows
        assert_contacts_give_no_energy(
            rows["t"], {key: rows[key] for key in ("contact_work", "contact_gap", "energy") if key in rows}
        )

    monkeypatch.setattr(runner, "run_moreau_jean", checked)
    yield
