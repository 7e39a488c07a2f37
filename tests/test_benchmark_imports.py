"""The benchmark scripts (tests/benchmarks/, run by hand or by ``make bench``, not by the tests) import only names
that exist: a renamed or removed name fails here rather than when a benchmark is next run."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

BENCHMARKS = sorted((Path(__file__).parent / "benchmarks").glob("*.py"))


def flexbody_imports(path: Path) -> list[tuple[str, str]]:
    """(module, name) of every ``from flexbody... import name`` in the script."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        (node.module, alias.name)
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "flexbody"
        for alias in node.names
    ]


def resolves(module: str, name: str) -> bool:
    if hasattr(importlib.import_module(module), name):
        return True
    try:
        importlib.import_module(f"{module}.{name}")
    except ImportError:
        return False
    return True


def test_there_are_benchmarks_that_import_flexbody():
    assert sum(bool(flexbody_imports(p)) for p in BENCHMARKS) >= 5


@pytest.mark.parametrize("path", BENCHMARKS, ids=lambda p: p.name)
def test_benchmark_imports_resolve(path):
    missing = [f"{module}.{name}" for module, name in flexbody_imports(path) if not resolves(module, name)]
    assert not missing, f"{path.name} imports names that do not exist: {missing}"
