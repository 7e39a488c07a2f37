"""Command line: ``flexbody run CASE [--set name=value ...] [--out DIR]``.

A case file is a Python module with UPPER_CASE parameters and ``main(out_dir, **overrides)``.
"""
from __future__ import annotations

import argparse
import ast
import inspect
import importlib.util
import logging
import sys
from pathlib import Path

from .errors import FlexbodyError


def load_case(path: str):
    """Import a case file as a module (importing runs nothing heavy)."""
    file = Path(path)
    if not file.is_file():
        raise FlexbodyError(f"case file {path!r} not found")
    spec = importlib.util.spec_from_file_location(f"flexbody_case_{file.stem}", file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if not hasattr(module, "main"):
        raise FlexbodyError(f"case file {path!r} defines no main(out_dir, **overrides)")
    return module


def case_parameters(module) -> list[str]:
    """UPPER_CASE names of a case that ``--set`` may override: module constants whose lower-case name is a
    keyword of ``main`` (or of ``build`` when ``main`` forwards ``**overrides`` to it)."""
    keywords = set()
    for fname in ("main", "build"):
        func = getattr(module, fname, None)
        if callable(func):
            keywords |= {p.name for p in inspect.signature(func).parameters.values()
                         if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return sorted(k for k in vars(module) if k.isupper() and k.lower() in keywords)


def parse_overrides(pairs: list[str], module) -> dict:
    """``name=value`` strings to a dict of Python values; names must be parameters of the case."""
    out = {}
    params = case_parameters(module)
    for pair in pairs:
        if "=" not in pair:
            raise FlexbodyError(f"--set expects name=value, got {pair!r}")
        name, text = pair.split("=", 1)
        if name.upper() not in params:
            raise FlexbodyError(f"case has no parameter {name!r}; parameters: {params}")
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            value = text
        out[name.lower()] = value
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="flexbody", description="flexible/rigid multibody simulation")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run a case file")
    run.add_argument("case")
    run.add_argument("--out", default=None, help="output directory (default out/<case name>)")
    run.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="override a parameter")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        module = load_case(args.case)
        overrides = parse_overrides(args.set, module)
        out = args.out or str(Path("out") / Path(args.case).stem)
        module.main(out, **overrides)
    except FlexbodyError as exc:
        print(f"flexbody: error: {exc}", file=sys.stderr)
        return 2
    print(f"flexbody: results written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
