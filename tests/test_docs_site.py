"""The documentation site: every gallery example is a sphinx-gallery script on the public API (fast, read
without running), and the whole site builds with warnings as errors, its gallery executed, and passes the
browser check of ``make docs-check`` (slow: the docs extra, Debian's chromium; about two minutes)."""

import ast
import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "docs" / "examples").glob("plot_*.py"))
ALLOWED_IMPORTS = {"flexbody", "numpy", "matplotlib", "pyvista", "scipy", "tempfile", "pathlib", "math", "time"}


def test_the_gallery_has_ten_or_more_examples():
    assert len(EXAMPLES) >= 10


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_is_a_gallery_script_on_the_public_api(path):
    tree = ast.parse(path.read_text())
    doc = ast.get_docstring(tree)
    lines = doc.splitlines()
    assert lines[0].strip() and set(lines[1].strip()) == {"="} and len(lines[1].strip()) >= len(lines[0].strip())
    assert "Expected" in doc or "expected" in doc  # what the result is compared with
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""]
        else:
            continue
        for name in names:
            assert name.split(".")[0] in ALLOWED_IMPORTS, f"{path.name} imports {name}"
            assert not name.startswith("flexbody.") or name == "flexbody", f"{path.name} imports {name}"
    assert "# %%" in path.read_text()


@pytest.mark.slow
def test_site_builds_without_warnings_and_passes_the_browser_check(tmp_path):
    pytest.importorskip("sphinx_gallery")
    pytest.importorskip("selenium")
    if not (shutil.which("chromium") and shutil.which("chromedriver")):
        pytest.skip("Debian's chromium and chromium-driver are not installed")
    out = tmp_path / "html"
    build = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", str(ROOT / "docs"), str(out)],
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    assert build.returncode == 0, build.stderr[-5000:]
    assert len(list((out / "gallery").glob("plot_*.html"))) == len(EXAMPLES)
    pictured = {
        re.sub(r"_\d{3}\.png$", "", p.name) for p in (out / "_images").glob("sphx_glr_plot_*_[0-9][0-9][0-9].png")
    }
    assert pictured == {f"sphx_glr_{p.stem}" for p in EXAMPLES}  # every example has a picture
    spec = importlib.util.spec_from_file_location("check_site", ROOT / "docs" / "check_site.py")
    check_site = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(check_site)
    assert check_site.main([str(out), "--screenshots", str(tmp_path / "shots")]) == 0
