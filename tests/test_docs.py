"""The documentation site's API reference lists the whole public API and every name in it has a docstring
(what ``make docs`` fails on, checked here without Sphinx), the index page's example runs, the README's images
exist, the user guide's case on an imported mesh prints what the guide shows, and case parameters carry unit
and description."""

import ast
import importlib.util
import inspect
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from public_api import ROOMS, callables_of

import flexbody as fb

ROOT = Path(__file__).resolve().parents[1]


def _api_index_names() -> list[str]:
    """The names the autosummary tables of docs/api/index.rst list."""
    text = (ROOT / "docs" / "api" / "index.rst").read_text()
    names = []
    for block in re.findall(r"\.\. autosummary::\n((?:   .*\n|\n)+)", text):
        names += [line.strip() for line in block.splitlines() if line.strip() and not line.strip().startswith(":")]
    return names


def test_api_reference_lists_the_public_api_once():
    names = _api_index_names()
    assert len(names) == len(set(names))
    assert set(names) == set(fb.__all__) - ROOMS


def test_every_public_name_has_a_docstring():
    missing = []
    for name in _api_index_names():
        obj = getattr(fb, name)
        if not inspect.getdoc(obj):
            missing.append(name)
        if inspect.isclass(obj):
            for member, func in callables_of(obj):
                if member != "__init__" and not (inspect.getdoc(func) or "").strip():
                    missing.append(f"{name}.{member}")
    assert not missing, f"{len(missing)} public names without a docstring: {missing}"


def test_index_page_example_runs():
    code = re.search(r"```python\n(.*?)```", (ROOT / "docs" / "index.md").read_text(), flags=re.S).group(1)
    scope: dict = {}
    exec(compile(code, "docs/index.md", "exec"), scope)
    results = scope["results"]
    assert results.q.shape[0] >= 2 and results.node_displacements(scope["beam"], [0])[-1].shape[-1] == 3


def test_readme_images_exist():
    text = (ROOT / "README.md").read_text()
    images = [part.split(")")[0] for part in text.split("](")[1:] if part.split(")")[0].endswith(".png")]
    assert images
    for image in images:
        assert (ROOT / image).is_file() and (ROOT / image).stat().st_size > 10_000, image


def _guide_blocks(heading: str) -> dict:
    """{language: [code block, ...]} of the section ``heading`` of docs/user_guide.md (up to the next heading)."""
    text = (ROOT / "docs" / "user_guide.md").read_text()
    assert heading in text, heading
    section = re.split(r"\n#{2,3} ", text.split(heading, 1)[1], maxsplit=1)[0]
    blocks = {}
    for language, body in re.findall(r"```(\w+)\n(.*?)```", section, flags=re.S):
        blocks.setdefault(language, []).append(body)
    return blocks


def test_user_guide_case_on_an_imported_mesh_prints_what_the_guide_shows(tmp_path):
    """The guide's case on meshes/beam_h27.msh, run as written from a copy of the repository's meshes/,
    prints the line the guide shows, writes the ParaView series, and every parameter it names can be --set."""
    from flexbody.cli import case_parameters

    blocks = _guide_blocks("### A case on an imported mesh\n")
    code, printed = blocks["python"][0], blocks["text"][0]
    shutil.copytree(ROOT / "meshes", tmp_path / "meshes")
    (tmp_path / "my_case.py").write_text(code)
    proc = subprocess.run(
        [sys.executable, "my_case.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == printed.strip()
    out = tmp_path / "out" / "my_case"
    assert (out / "beam.pvd").is_file() and len(list(out.glob("beam_*.vtu"))) == 3  # load factors 0, 0.5, 1
    spec = importlib.util.spec_from_file_location("guide_case", tmp_path / "my_case.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert case_parameters(module) == ["LOAD_STEPS", "MESH_FILE", "POISSON", "TIP_FORCE", "YOUNG"]


# units of case parameters: SI expressions, "-" for dimensionless numbers, counts, flags, names and choices
UNITS = {
    "-",
    "m",
    "kg",
    "s",
    "rad",
    "N",
    "N·m",
    "Pa",
    "kg/m³",
    "kg/m",
    "m/s",
    "m/s²",
    "1/s",
    "1/s²",
    "N·m/rad",
    "N·m·s/rad",
    "1/(N·m)",
    "Hz",
    "rad/s",
    "J",
    "kg·m²",
    "deg",
    "s/m",
    "N/m^1.5",
    "m/(N·s)",
    "m/(N·s²)",
    "1/m",
    "1/(N·m)²",
    "s/(√kg·m)",
}


@pytest.mark.parametrize("path", sorted((ROOT / "cases").glob("[0-9][0-9]_*.py")), ids=lambda p: p.stem)
def test_case_parameters_carry_unit_and_description(path):
    """Every public UPPER_CASE module constant of a case is one name on one line with a trailing comment
    ``# <unit>, <description>`` (what ``flexbody info CASE --params`` reads)."""
    lines = path.read_text().splitlines()
    bad = []
    for node in ast.parse(path.read_text()).body:
        if not isinstance(node, (ast.Assign, ast.AnnAssign)):
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        names = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
        if not any(n.isupper() and not n.startswith("_") for n in names):
            continue
        line = lines[node.lineno - 1]
        match = re.fullmatch(r"([A-Z][A-Z0-9_]*) = \S.*?\s{2,}# ([^,]+), (\S.*)", line)
        if len(names) != 1 or node.end_lineno != node.lineno or not match or match.group(2) not in UNITS:
            bad.append(f"line {node.lineno}: {line}")
    assert not bad, "\n".join(bad)
