"""Write docs/api.md, the API reference, from the docstrings of flexbody's public modules.

Usage: ``python docs/make_api.py`` (rewrites docs/api.md) or ``python docs/make_api.py --check`` (exit 1
when docs/api.md is out of date). A module's public names are its ``__all__``, or else the functions and
classes it defines whose names do not start with an underscore. Classes list their public methods and
properties.
"""
from __future__ import annotations

import argparse
import importlib
import inspect
import pkgutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "api.md"
ROOMS = ["fem", "rigid", "constraints", "system", "linalg", "dynamics", "solvers", "control", "io", "mechanisms", "cli",
         "errors", "progress"]
"""The package's rooms in the order of the data flow (docs/architecture.md); each package's modules follow it."""


def room_modules(room: str) -> list[str]:
    """``room`` and, for a package, its modules in alphabetical order (``__main__`` left out)."""
    module = importlib.import_module(f"flexbody.{room}")
    if not hasattr(module, "__path__"):
        return [room]
    names = sorted(info.name for info in pkgutil.iter_modules(module.__path__) if info.name != "__main__")
    return [room] + [f"{room}.{name}" for name in names]


def public_names(module) -> list[str]:
    names = getattr(module, "__all__", None)
    if names is not None:
        return [n for n in names if not inspect.ismodule(getattr(module, n, None))]
    return [n for n, obj in vars(module).items() if not n.startswith("_")
            and (inspect.isfunction(obj) or inspect.isclass(obj)) and obj.__module__ == module.__name__]


def signature(obj) -> str:
    try:
        return str(inspect.signature(obj))
    except (TypeError, ValueError):
        return "(...)"


def doc(obj) -> str:
    return inspect.cleandoc(obj.__doc__ or "").strip()


def describe_class(name: str, cls) -> list[str]:
    lines = [f"### class `{name}{signature(cls)}`", "", doc(cls) or "(no docstring)", ""]
    members = []
    for attr, value in vars(cls).items():
        if attr.startswith("_"):
            continue
        if isinstance(value, property):
            members.append(f"- `{attr}` (property): {_first_line(value.fget)}")
        elif inspect.isfunction(value) or isinstance(value, (staticmethod, classmethod)):
            func = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
            members.append(f"- `{attr}{signature(func)}`: {_first_line(func)}")
    if members:
        lines += ["Members:", ""] + members + [""]
    return lines


def _first_line(obj) -> str:
    text = doc(obj)
    return text.split("\n\n")[0].replace("\n", " ") if text else "(no docstring)"


def describe_module(path: str) -> list[str]:
    try:
        module = importlib.import_module(f"flexbody.{path}")
    except ImportError as exc:
        return [f"## `flexbody.{path}`", "", f"(not importable: {exc})", ""]
    lines = [f"## `flexbody.{path}`", "", doc(module), ""]
    for name in public_names(module):
        obj = getattr(module, name, None)
        if inspect.isclass(obj):
            lines += describe_class(name, obj)
        elif callable(obj):
            lines += [f"### `{name}{signature(obj)}`", "", doc(obj) or "(no docstring)", ""]
    return lines


def render() -> str:
    lines = ["# API reference", "",
             "Generated from the docstrings by `python docs/make_api.py`; do not edit by hand. Shapes, units and",
             "frames are given in each docstring; equation tags such as [DE-69] refer to the sources listed in",
             "docs/theory.md.", ""]
    for room in ROOMS:
        modules = room_modules(room)
        lines += [f"# `flexbody.{room}`", ""]
        if len(modules) > 1:
            lines += ["- " + ", ".join(f"`flexbody.{m}`" for m in modules[1:]), ""]
        for m in modules:
            lines += describe_module(m)
    return "\n".join(lines).rstrip() + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/api.md is out of date")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    text = render()
    if args.check:
        current = OUT.read_text() if OUT.exists() else ""
        if current != text:
            print("docs/api.md is out of date: run python docs/make_api.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text)
    print(f"wrote {OUT.relative_to(ROOT)} ({len(text.splitlines())} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
