"""The built wheel (``python -m build --wheel``) installs into a fresh virtual environment, where
``flexbody --version`` reports the package's version and a shipped case runs from the installed command and
writes its results (slow: the environment installs every dependency)."""

import json
import subprocess
import sys
import venv
from pathlib import Path

import pytest

import flexbody as fb

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


def _run(args, cwd, timeout=1800):
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)
    assert proc.returncode == 0, f"{args}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def test_wheel_installs_and_runs_a_case_in_a_fresh_environment(tmp_path):
    pytest.importorskip("build")
    dist = tmp_path / "dist"
    _run([sys.executable, "-m", "build", "--wheel", "--outdir", str(dist), str(ROOT)], cwd=tmp_path)
    wheels = list(dist.glob("flexbody-*.whl"))
    assert len(wheels) == 1 and f"-{fb.__version__}-" in wheels[0].name
    env_dir = tmp_path / "env"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    _run([str(python), "-m", "pip", "install", "-q", str(wheels[0])], cwd=tmp_path)
    version = _run([str(env_dir / "bin" / "flexbody"), "--version"], cwd=tmp_path).stdout.strip()
    assert version == f"flexbody {fb.__version__}"
    installed = _run([str(python), "-c", "import flexbody; print(flexbody.__file__)"], cwd=tmp_path).stdout
    assert str(env_dir) in installed  # the wheel's package, not the repository's
    out = tmp_path / "out"
    case = ROOT / "cases" / "01_cantilever.py"
    _run([str(env_dir / "bin" / "flexbody"), "run", str(case), "--out", str(out)], cwd=tmp_path)
    summary = json.loads((out / "results.json").read_text())
    assert summary and (out / "histories.csv").is_file()
