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
