"""``flexbody bench``: the benchmark scripts under ``tests/benchmarks/`` (each measures flexbody and a peer in
the same run and prints the ratio), listed or run with extra arguments.
"""

from __future__ import annotations

import ast
from pathlib import Path

from ..errors import FlexbodyError


# ----------------------------------------------------------------------------------------------- bench
def benchmark_scripts(root=None) -> list[Path]:
    """The benchmark scripts ``tests/benchmarks/bench_*.py`` of the repository holding the package
    (``root``: the repository, default the parent directory of the package), sorted by name."""
    root = Path(root) if root is not None else Path(__file__).resolve().parents[2]
    folder = root / "tests" / "benchmarks"
    scripts = sorted(folder.glob("bench_*.py"))
    if not scripts:
        raise FlexbodyError(
            f"no benchmark scripts (tests/benchmarks/bench_*.py) next to the package in {root}: "
            "flexbody seems installed without its repository; run from a source checkout"
        )
    return scripts


def script_title(path: Path) -> str:
    try:
        doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    except (OSError, SyntaxError, ValueError):
        doc = ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


def select_scripts(names: list[str]) -> list[Path]:
    scripts = benchmark_scripts()
    if not names:
        return scripts
    by_name = {}
    for s in scripts:
        for alias in (s.name, s.stem, s.stem.removeprefix("bench_")):
            by_name[alias] = s
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise FlexbodyError(
            f"no benchmark named {', '.join(map(repr, unknown))}; available: "
            f"{', '.join(s.stem.removeprefix('bench_') for s in scripts)}"
        )
    return list(dict.fromkeys(by_name[n] for n in names))
