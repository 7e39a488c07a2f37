"""Results files that are truncated, tampered with, mixed or missing: ``Results.load`` raises a FlexbodyError
naming the directory and what is wrong, never loads them silently wrong, and ``flexbody export`` on them is a
one-line error (issue 21, item 3)."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

import flexbody as fb
from flexbody import cli
from flexbody.errors import FlexbodyError, StateError


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A complete slider-crank run (``Results.save``) and one stopped by a failure (its part files)."""
    root = tmp_path_factory.mktemp("results")
    asm = fb.mechanisms.slider_crank().assemble()
    fb.simulate(asm, 0.05, integrator=fb.RK4(dt=1e-3)).save(root / "complete")

    def tau(t, q, v):
        return np.full(asm.n_dofs, np.nan) if t > 0.03 else np.zeros(asm.n_dofs)

    with pytest.raises(StateError):
        fb.simulate(asm, 0.05, integrator=fb.RK4(dt=1e-3), tau=tau, save_to=root / "stopped", save_every=10)
    return root


def _rewrite_npz(path, change):
    with np.load(path) as data:
        arrays = {key: data[key] for key in data.files}
    change(arrays)
    np.savez(path, **arrays)


def _rewrite_json(path, change):
    meta = json.loads(path.read_text())
    path.write_text(json.dumps(change(meta)))


def _truncate(path):
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _set(arrays, key, value):
    arrays[key] = value


def _nan_row(arrays):
    arrays["q"] = arrays["q"].copy()
    arrays["q"][3, 1] = np.nan


TAMPERINGS = {
    # name: (run, file, tampering, text the error must contain)
    "npz truncated": ("complete", "results.npz", _truncate, "BadZipFile"),
    "npz removed": ("complete", "results.npz", lambda p: p.unlink(), "results.npz"),
    "json not JSON": ("complete", "results.json", lambda p: p.write_text("{"), "JSONDecodeError"),
    "json a list": ("complete", "results.json", lambda p: p.write_text("[]"), "does not hold an object"),
    "json without kind": (
        "complete",
        "results.json",
        lambda p: _rewrite_json(p, lambda m: {k: v for k, v in m.items() if k != "kind"}),
        "'kind'",
    ),
    "q row dropped": (
        "complete",
        "results.npz",
        lambda p: _rewrite_npz(p, lambda a: _set(a, "q", a["q"][:-1])),
        "51 times but q of shape (50, 2)",
    ),
    "NaN in q": ("complete", "results.npz", lambda p: _rewrite_npz(p, _nan_row), "q is not finite at row 3"),
    "times reversed": (
        "complete",
        "results.npz",
        lambda p: _rewrite_npz(p, lambda a: _set(a, "times", a["times"][::-1].copy())),
        "times do not increase after row 0",
    ),
    "history shortened": (
        "complete",
        "results.npz",
        lambda p: _rewrite_npz(p, lambda a: _set(a, "history__lam", a["history__lam"][:10])),
        "history 'lam' has 10 rows for 51 times",
    ),
    "body slices shifted": (
        "complete",
        "results.json",
        lambda p: _rewrite_json(p, lambda m: {**m, "body_slices": {"crank": [1, 3]}}),
        "do not tile the 2 coordinates",
    ),
    "pickled array": (
        "complete",
        "results.npz",
        lambda p: np.savez(p, times=np.zeros(2), q=np.array([None, 1.0], dtype=object)),
        "allow_pickle=False",
    ),
    "part removed": ("stopped", "parts/part_00001.npz", lambda p: p.unlink(), "part_00001.npz"),
    "part truncated": ("stopped", "parts/part_00002.npz", _truncate, "BadZipFile"),
    "part of another run": (
        "stopped",
        "parts/part_00002.npz",
        lambda p: _rewrite_npz(p, lambda a: _set(a, "q", np.zeros((len(a["times"]), 3)))),
        "all the input array dimensions",
    ),
}


@pytest.mark.parametrize("name", list(TAMPERINGS))
def test_tampered_results_are_named_errors(name, saved, tmp_path, capsys):
    run, file, tamper, needle = TAMPERINGS[name]
    directory = tmp_path / run
    shutil.copytree(saved / run, directory)
    fb.Results.load(directory)  # loads before it is tampered with
    tamper(directory / file)
    with pytest.raises(FlexbodyError, match=str(directory)) as info:
        fb.Results.load(directory)
    assert needle in str(info.value), str(info.value)
    assert cli.main(["export", str(directory), "--format", "csv", "--out", str(tmp_path / "csv")]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("flexbody: error: ") and needle in lines[0], lines


KILLED_RUN = """
import os, signal, sys
import numpy as np
import flexbody as fb
asm = fb.mechanisms.slider_crank().assemble()
integrator = fb.RK4(dt=1e-3) if sys.argv[2] == "rk4" else fb.GeneralizedAlpha(dt=1e-3)

def tau(t, q, v):
    if t > 0.0375:                                       # during the step after t = 0.037 s
        os.kill(os.getpid(), signal.SIGKILL)
    return np.zeros(asm.n_dofs)

fb.simulate(asm, 0.1, integrator=integrator, tau=tau, save_to=sys.argv[1], save_every=10)
"""


@pytest.mark.parametrize("kind", ["rk4", "gen_alpha"])
def test_a_run_killed_between_writes_keeps_every_completed_step(kind, tmp_path):
    """SIGKILL 8 rows after the third part (every 10 rows): the journal holds the rows after the last part the
    writing thread finished (which one that is depends on its progress), so the loaded run has every completed
    step, equal to the uninterrupted run's; the journal rows' other histories are NaN."""
    import signal
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-c", KILLED_RUN, str(tmp_path), kind], capture_output=True, timeout=300, check=False
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()[-2000:]
    partial = fb.Results.load(tmp_path)
    journaled = partial.metadata["journal_rows"]
    assert partial.metadata["complete"] is False and journaled in (8, 18, 28)
    integrator = fb.RK4(dt=1e-3) if kind == "rk4" else fb.GeneralizedAlpha(dt=1e-3)
    plain = fb.simulate(fb.mechanisms.slider_crank().assemble(), 0.1, integrator=integrator)
    assert partial.n_steps == 38 and partial.times[-1] == pytest.approx(0.037, abs=1e-12)
    np.testing.assert_array_equal(partial.times, plain.times[:38])
    np.testing.assert_array_equal(partial.q, plain.q[:38])
    np.testing.assert_array_equal(partial.v, plain.v[:38])
    lam = partial.histories["lam"]
    assert np.isnan(lam[38 - journaled :]).all() and not np.isnan(lam[: 38 - journaled]).any()
