"""Shared helpers of the case tests: import a case file without running it, check written outputs."""

import importlib.util
from pathlib import Path

CASES = Path(__file__).resolve().parents[1] / "cases"


def load(name: str):
    """Import a case file as a module (importing runs nothing heavy)."""
    path = CASES / name
    spec = importlib.util.spec_from_file_location(f"case_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def assert_files(out: Path, names) -> None:
    """Every file in ``names`` exists in ``out`` and is not empty."""
    for name in names:
        assert (out / name).is_file() and (out / name).stat().st_size > 0, name


def checkpoint_time(directory: Path) -> float:
    """Time [s] of the checkpoint a run saving into ``directory`` wrote last (−1 when there is none)."""
    import json

    import numpy as np

    try:
        with np.load(Path(directory) / "checkpoint.npz") as data:
            return float(json.loads(str(data["state"]))["t"])
    except (OSError, ValueError, KeyError):
        return -1.0


def kill_after_checkpoint(command: list, directory: Path, t_target: float, timeout: float = 300.0) -> float:
    """Run ``command`` in a subprocess that saves into ``directory``, SIGKILL it as soon as its checkpoint
    time reaches ``t_target`` [s], and return the time of the last checkpoint it wrote (read while the process is
    stopped, so a checkpoint written between the poll and the kill is not missed)."""
    import os
    import signal
    import subprocess
    import time

    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + timeout
    try:
        while (t := checkpoint_time(directory)) < t_target:
            assert proc.poll() is None, f"the run ended before it was killed: {proc.communicate()}"
            assert time.monotonic() < deadline, f"the run did not reach t = {t_target} s"
            time.sleep(0.002)
        assert proc.poll() is None, "the run ended before it was killed"
        os.kill(proc.pid, signal.SIGSTOP)
        t = checkpoint_time(directory)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL
    return t
