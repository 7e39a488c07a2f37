"""Command line of flexbody.

Synopsis::

    flexbody run    CASE [--set NAME=VALUE ...] [--out DIR] [--no-progress] [--resume]
    flexbody new    NAME
    flexbody info   CASE [--set NAME=VALUE ...] [--params]
    flexbody sweep  CASE --grid NAME=V1,V2,... [--grid ...] [--set NAME=VALUE ...] [--out DIR]
                         [--workers N] [--scheduler ADDRESS] [--compare-serial]
    flexbody view   RESULTS [--field F] [--step N] [--gif] [--scale S] [--out PATH]
    flexbody export RESULTS --format pvd|xdmf|csv [--out DIR]
    flexbody bench  [NAME ...] [--list] [-- EXTRA ARGS]

A case file is a Python module with UPPER_CASE parameters, ``build(**params)`` returning a
:class:`flexbody.System` and ``main(out_dir, **overrides)`` returning a JSON-able summary dict. Values
given with ``--set`` or ``--grid`` are Python literals (``0.5``, ``(12, 2, 2)``, ``True``); anything that is
not a literal is taken as a string.

``run`` records the case and its ``--set`` values in ``DIR/flexbody_run.json``. ``run --resume`` re-runs
the case with those values inside :func:`flexbody.restart.resuming`: every simulation the case saves as it
goes (``simulate(..., save_to=…)``) continues from its checkpoint, or is reused when it had finished,
so a killed long case completes with the same final state as an uninterrupted one.

Errors the user can fix (a missing case file, a case without ``main``/``build``, an unknown parameter, a
value the case rejects with :class:`~flexbody.errors.FlexbodyError`, a missing results directory, an
unknown export format, …) are reported as one line ``flexbody: error: …`` on stderr with exit code 2.
"""
from __future__ import annotations

import argparse
import ast
import contextlib
import csv
import importlib.util
import inspect
import io
import itertools
import json
import logging
import math
import numbers
import os
import re
import subprocess
import sys
import time
import tokenize
import uuid
from dataclasses import dataclass
from pathlib import Path

from .errors import FlexbodyError, shortened

__all__ = ["load_case", "case_parameters", "parameter_table", "format_parameters", "new_case", "parse_overrides", "parse_grid", "describe_case", "flatten_summary",
           "run_variant", "sweep", "benchmark_scripts", "main"]

EXPORT_FORMATS = ("pvd", "xdmf", "csv")
"""Formats of ``flexbody export`` (passed on to :func:`flexbody.io.export`)."""

EXIT_ERROR = 2
"""Exit code of a user error (as argparse's)."""

EXIT_FAILED = 1
"""Exit code when a sweep variant or a benchmark script failed."""


# ----------------------------------------------------------------------------------------------- cases
def load_case(path: str | os.PathLike, require: tuple[str, ...] = ("main",)):
    """Import a case file as a module (importing runs nothing heavy).

    Parameters
    ----------
    path : str or path
        The case file.
    require : tuple of str
        Functions the case must define (``"main"``, ``"build"``).

    Raises
    ------
    FlexbodyError
        The file is missing, cannot be imported, or lacks a required function.
    """
    file = Path(path)
    if not file.is_file():
        raise FlexbodyError(f"case file {str(path)!r} not found")
    spec = importlib.util.spec_from_file_location(f"flexbody_case_{file.stem}", file)
    if spec is None or spec.loader is None:
        raise FlexbodyError(f"case file {str(path)!r} is not a Python file")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:                           # a broken case file: name it, do not dump a traceback
        raise FlexbodyError(f"cannot import case file {str(path)!r}: {type(exc).__name__}: {exc}") from exc
    signatures = {"main": "main(out_dir, **overrides)", "build": "build(**params)"}
    for fname in require:
        if not callable(getattr(module, fname, None)):
            raise FlexbodyError(f"case file {str(path)!r} defines no {signatures.get(fname, fname + '()')}")
    return module


def _keywords(func) -> set[str]:
    """Names of the parameters of ``func`` that can be passed by keyword."""
    if not callable(func):
        return set()
    return {p.name for p in inspect.signature(func).parameters.values()
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}


def case_parameters(module) -> list[str]:
    """UPPER_CASE names of a case that ``--set`` may override: module constants whose lower-case name is a
    keyword of ``main`` (or of ``build`` when ``main`` forwards ``**overrides`` to it)."""
    keywords = _keywords(getattr(module, "main", None)) | _keywords(getattr(module, "build", None))
    return sorted(k for k in vars(module) if k.isupper() and k.lower() in keywords)


@dataclass(frozen=True)
class CaseParameter:
    """One parameter of a case file as its line states it: ``NAME = expression  # unit, description``.

    ``value`` is the module's value (after evaluation), ``expression`` the source text when it is not a plain
    literal (e.g. ``2 * np.pi / 3``), ``unit`` "-" for dimensionless numbers, counts, flags and choices ("" when
    the line has no comment), ``settable`` whether ``--set`` may override it."""

    name: str
    value: object
    unit: str
    doc: str
    expression: str
    settable: bool


def parameter_table(module) -> list[CaseParameter]:
    """The UPPER_CASE module-level parameters of a case file in the order of its source, with the unit and
    description of their line comments (``# unit, description``); those ``--set`` can override first."""
    path = Path(getattr(module, "__file__", "") or "")
    try:
        source = path.read_text()
        tree = ast.parse(source)
    except (OSError, SyntaxError, ValueError) as exc:
        raise FlexbodyError(f"cannot read the parameters of case {_case_name(module)!r}: {exc}") from exc
    comments = {tok.start[0]: tok.string for tok in tokenize.generate_tokens(io.StringIO(source).readline)
                if tok.type == tokenize.COMMENT}
    settable = set(case_parameters(module))
    rows = []
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        names = [n.id for t in targets for n in (t.elts if isinstance(t, ast.Tuple) else [t]) if isinstance(n, ast.Name)]
        for name in names:
            if not (name.isupper() and not name.startswith("_")) or not hasattr(module, name):
                continue
            unit, doc = _unit_and_doc(comments.get(node.end_lineno, ""))
            text = ast.get_source_segment(source, node.value) or ""
            expression = "" if _is_literal(text) else " ".join(text.split())
            rows.append(CaseParameter(name, getattr(module, name), unit, doc, expression, name in settable))
    return sorted(rows, key=lambda row: not row.settable)


def _unit_and_doc(comment: str) -> tuple[str, str]:
    """("unit", "description") of a parameter comment ``# unit, description``; a comment of one word is a
    unit, one without a comma a description."""
    text = comment.lstrip("#").strip()
    if ", " in text:
        unit, doc = text.split(", ", 1)
        if " " not in unit.strip():
            return unit.strip(), doc.strip()
    if text and " " not in text:
        return text, ""
    return "", text


def _is_literal(text: str) -> bool:
    try:
        ast.literal_eval(text)
        return True
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False


def format_parameters(rows: list[CaseParameter]) -> str:
    """The parameter table of ``flexbody info --params`` as plain text (name, value, unit, description)."""
    if not rows:
        return "Parameters         none (no UPPER_CASE parameters)"
    values = [_compact_value(row.value) for row in rows]
    w_name = max(len(r.name) for r in rows)
    w_value = min(max(len(v) for v in values), 28)
    w_unit = max(len(r.unit or "?") for r in rows)
    lines = [f"Parameters         {sum(r.settable for r in rows)} settable with --set NAME=VALUE "
             f"(lower-case names work too); the others are constants of the case"]
    for row, value in zip(rows, values):
        doc = row.doc + (f" (= {row.expression})" if row.expression else "")
        mark = " " if row.settable else "*"
        lines.append(f"  {mark}{row.name:<{w_name}}  {value:<{w_value}}  {row.unit or '?':<{w_unit}}  {doc}".rstrip())
    if any(not r.settable for r in rows):
        lines.append("  (* a constant: not a keyword of main() or build(), so --set cannot change it)")
    return "\n".join(lines)


def _compact_value(value) -> str:
    if isinstance(value, float):
        text = f"{value:.6g}"
        return text + ".0" if text.lstrip("-").isdigit() else text
    if isinstance(value, (tuple, list)) and all(isinstance(v, (int, float)) for v in value):
        return "(" + ", ".join(_compact_value(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    text = _compact(value)
    return text if len(text) <= 28 else text[:25] + "..."


def _case_name(module) -> str:
    return Path(getattr(module, "__file__", None) or module.__name__).stem


def _check_name(name: str, module, option: str) -> str:
    """The lower-case keyword of parameter ``name`` of the case; FlexbodyError naming the valid ones."""
    params = case_parameters(module)
    if name.upper() not in params:
        raise FlexbodyError(f"{option}: case {_case_name(module)!r} has no parameter {name!r}; "
                            f"valid parameters: {', '.join(params) or '(none)'}")
    return name.lower()


def _literal(text: str):
    """A Python literal, or the text itself when it is not one."""
    try:
        return ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return text.strip()


def parse_overrides(pairs: list[str], module) -> dict:
    """``name=value`` strings to a dict of Python values; names must be parameters of the case."""
    out = {}
    for pair in pairs:
        if "=" not in pair:
            raise FlexbodyError(f"--set expects name=value, got {pair!r}")
        name, text = pair.split("=", 1)
        out[_check_name(name.strip(), module, "--set")] = _literal(text)
    return out


def parse_grid(pair: str, module) -> tuple[str, list]:
    """``name=v1,v2,...`` to (lower-case name, list of values). Values are Python literals separated by
    commas (tuples in parentheses: ``q0=(0,1),(1,0)``); when the whole list is not a literal list, the
    comma-separated items are taken one by one (strings: ``closure=planar,spatial``)."""
    if "=" not in pair:
        raise FlexbodyError(f"--grid expects name=v1,v2,..., got {pair!r}")
    name, text = pair.split("=", 1)
    name = _check_name(name.strip(), module, "--grid")
    if not text.strip():
        raise FlexbodyError(f"--grid {name}: no values")
    try:
        values = list(ast.literal_eval(f"[{text}]"))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        values = [_literal(part) for part in text.split(",")]
    if not values:
        raise FlexbodyError(f"--grid {name}: no values")
    labels = [_compact(v) for v in values]
    if len(set(labels)) != len(labels):
        raise FlexbodyError(f"--grid {name}: values repeat ({text})")
    return name, values


# ------------------------------------------------------------------------------------------------ info
def _case_tasks(module, asm, overrides: dict) -> dict:
    """Tasks of the case's ``task(asm, ...)`` (a Task or a dict name -> Task) by name; empty without one.
    Overrides that are keywords of ``task`` are passed on."""
    func = getattr(module, "task", None)
    if not callable(func):
        return {}
    kwargs = {k: v for k, v in overrides.items() if k in _keywords(func) - {"asm"}}
    tasks = func(asm, **kwargs)
    if isinstance(tasks, dict):
        return dict(tasks)
    return {getattr(tasks, "name", "task"): tasks}


def describe_case(module, overrides: dict | None = None, *, params: bool = False) -> str:
    """Plain-text description of a case's assembled system at q0: coordinates (actuated, passive joints,
    passive nodal coordinates per flexible body), trees and bodies, every constraint with its rows, the rank
    of Φ(q0) with the tolerance that decided it and the redundant rows, actuators, and — when the case
    defines ``task(asm)`` — the actuation report of each task at (q0, v = 0). With ``params`` the case's
    parameters come first (:func:`parameter_table`: name, value, unit, description).

    Only the ``overrides`` that are parameters of ``build`` are used (the others are listed as ignored).
    """
    import numpy as np

    overrides = dict(overrides or {})
    build = getattr(module, "build", None)
    if not callable(build):
        raise FlexbodyError(f"case {_case_name(module)!r} defines no build(**params)")
    kwargs = {k: v for k, v in overrides.items() if k in _keywords(build)}
    ignored = sorted(set(overrides) - set(kwargs))
    system = build(**kwargs)
    if not callable(getattr(system, "assemble", None)):
        raise FlexbodyError(f"build() of case {_case_name(module)!r} returned {type(system).__name__}, "
                            "not a flexbody.System")
    asm = system.assemble()
    n, n_rigid, m = asm.n_dofs, asm.n_rigid, asm.n_constraints
    lines = [f"Case {_case_name(module)} ({getattr(module, '__file__', '?')})"]
    if params:
        lines.append(format_parameters(parameter_table(module)))
    if kwargs:
        lines.append(f"  build parameters set: {', '.join(f'{k}={v!r}' for k, v in kwargs.items())}")
    if ignored:
        lines.append(f"  ignored (not parameters of build): {', '.join(ignored)}")
    lines.append(f"Coordinates        n = {n}: joint {n_rigid}, flexible nodal {n - n_rigid}")
    lines.append(f"Rigid trees        {len(asm.trees)}" + "".join(
        f"\n  {tree.name}: {tree.n_links} links, {tree.n_dofs} joint coordinates" for tree in asm.trees))
    lines.append(f"Flexible bodies    {len(asm.bodies)}" + "".join(
        f"\n  {body.name}: {body.n_nodes} nodes, {body.n_elements} elements, {body.n_dofs} coordinates"
        for body in asm.bodies))
    lines += _constraint_lines(asm)
    actuated = np.abs(np.asarray(asm.S, dtype=float)).sum(axis=0) > 0
    passive_joints = [asm.coordinate_labels[i] for i in np.flatnonzero(~actuated[:n_rigid])]
    lines.append(f"Actuators          k = {len(asm.actuated_labels)}: {shortened(asm.actuated_labels)}")
    nodal = [f"{body.name} {body.n_dofs}" for body in asm.bodies]
    n_passive_nodal = int(np.count_nonzero(~actuated[n_rigid:]))
    lines.append(f"Passive coords     {len(passive_joints) + n_passive_nodal}: joints {shortened(passive_joints)}"
                 + (f"; flexible nodal {n_passive_nodal} ({', '.join(nodal)}: every nodal coordinate — nodes "
                    "carry no actuators [DE 6.3])" if asm.bodies else ""))
    tasks = _case_tasks(module, asm, overrides)
    if tasks:
        from .control.actuation import actuation_report

        v0 = np.zeros(n)
        for name, task in tasks.items():
            report = actuation_report(asm, asm.q0, v0, task=task)
            usable = [c for c in report.REQUIREMENTS if report.ok(c)]
            lines.append(f"Actuation report for task {name!r} ({task!r}) at (q0, v = 0)")
            lines += ["  " + line for line in str(report).splitlines()]
            lines.append(f"  controllers whose checks pass: {', '.join(usable) or 'none'}")
    else:
        lines.append("Task               none (the case defines no task(asm))")
    return "\n".join(lines)


def _constraint_lines(asm) -> list[str]:
    """Each constraint with its rows, then the rank of Φ(q0), the tolerance that decided it and how it scales."""
    m, n_c = asm.n_constraints, len(asm.constraints)
    lines = [f"Constraint rows    m = {m} ({n_c} constraint{'' if n_c == 1 else 's'})"]
    lines += [f"  {c.name}: {c.n_rows} row{'' if c.n_rows == 1 else 's'} ({type(c).__name__})"
              for c in asm.constraints[:12]]
    if n_c > 12:
        lines.append(f"  … and {n_c - 12} more")
    if not m:
        return lines + [f"  no constraints; dof = n = {asm.n_dofs}"]
    rank = asm.rank_report(0.0, asm.q0)
    s = rank.singular_values
    lines.append(f"  rank of Phi at q0 {rank.rank}" + (" (full row rank)" if rank.is_full_rank else
                                                      f" (rank-deficient by {m - rank.rank})")
                 + f"; dof n - rank = {rank.dof}")
    if s.size:
        lines.append(f"  smallest singular value {s[-1]:.6e} (largest {s[0]:.6e}); rank tolerance {rank.tol:.3e} = "
                     f"max({rank.rtol:.0e} × σ_max, {rank.atol:.0e}): a round-off test relative to the largest "
                     "singular value, with an absolute floor in the units of the rows (m or rad)")
    else:
        lines.append("  no singular values")
    lines.append(f"  redundant rows    {shortened(rank.redundant_labels or rank.redundant_rows)}")
    return lines


# ----------------------------------------------------------------------------------------------- sweep
def _compact(value) -> str:
    """Short text of a parameter value for variant names and tables."""
    if isinstance(value, str):
        return value
    return repr(value).replace(" ", "")


def variant_name(overrides: dict) -> str:
    """Directory name of a variant: ``name=value`` joined by ``_``, unsafe characters replaced by ``_``."""
    text = "_".join(f"{k}={_compact(v)}" for k, v in overrides.items())
    return re.sub(r"[^A-Za-z0-9.=+\-]", "_", text) or "default"


def _scalar(value):
    """``value`` as a plain bool/int/float/str, or None when it is not a scalar (lists, arrays, None)."""
    if isinstance(value, (bool, str)):
        return value
    if hasattr(value, "item") and getattr(value, "ndim", None) == 0:         # numpy scalar or 0-d array
        value = value.item()
    if isinstance(value, bool):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, str):
        return value
    return None


def flatten_summary(summary, prefix: str = "") -> dict:
    """Scalar (number, bool, str) entries of a (nested) summary dict with dotted keys; lists, arrays and
    None are dropped. A summary that is not a dict gives an empty dict."""
    out = {}
    if not isinstance(summary, dict):
        return out
    for key, value in summary.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(flatten_summary(value, name + "."))
            continue
        value = _scalar(value)
        if value is not None:
            out[name] = value
    return out


def run_variant(case_path: str, out_dir: str, overrides: dict) -> dict:
    """Run ``main(out_dir, **overrides)`` of the case file at ``case_path`` (imported here, by path) and
    return {"summary": flattened scalar summary, "error": None or "Type: message", "wall_time": s}.

    This is the task a sweep sends to its Dask workers; it never raises for an error of the case."""
    start = time.perf_counter()
    try:
        module = load_case(case_path)
        summary = flatten_summary(module.main(out_dir, **overrides))
        error = None
    except Exception as exc:                                 # the row reports it; the other variants go on
        summary, error = {}, f"{type(exc).__name__}: {exc}".strip().replace("\n", " ")
    return {"summary": summary, "error": error, "wall_time": time.perf_counter() - start}


def _warm_up(case_path: str) -> None:
    """Import the case (and so flexbody and its dependencies) in a worker before the timed sweep."""
    load_case(case_path)


def _rows(variants: list[dict], names: list[str], results: list[dict]) -> list[dict]:
    """Table rows: variant, grid parameters (UPPER_CASE, as the case spells them), status, wall time, error,
    then the flattened summary."""
    rows = []
    for overrides, result in zip(variants, results):
        row = {"variant": variant_name(overrides)}
        row.update({name.upper(): overrides[name] for name in names})
        row["status"] = "ok" if result["error"] is None else "error"
        row["wall_time_s"] = result["wall_time"]
        row["error"] = result["error"] or ""
        for key, value in result["summary"].items():
            row[key if key not in row else f"summary.{key}"] = value
        rows.append(row)
    return rows


def _columns(rows: list[dict]) -> list[str]:
    columns = []
    for row in rows:
        columns += [k for k in row if k not in columns]
    if rows and not any(row["error"] for row in rows):
        columns.remove("error")
    return columns


def sweep(case_path, grids: list[tuple[str, list]], fixed: dict | None = None, out_dir=None, *,
          workers: int | None = None, scheduler: str | None = None, compare_serial: bool = False) -> dict:
    """Run every combination of the ``grids`` values of a case as Dask tasks and collect a summary table.

    Parameters
    ----------
    case_path : path
        The case file; the workers import it by this (absolute) path, so with ``scheduler`` they must see
        the same file system and have flexbody installed.
    grids : list of (name, values)
        Lower-case parameter names and their values; the variants are the Cartesian product.
    fixed : dict, optional
        Overrides common to every variant (``--set``).
    out_dir : path, optional
        Each variant writes to ``out_dir/<variant name>``; the summary files ``sweep_summary.csv`` and
        ``sweep_summary.json`` go to ``out_dir`` (default ``out/<case>_sweep``).
    workers : int, optional
        Worker processes of the local cluster (default: the number of CPUs, at most one per variant).
    scheduler : str, optional
        Address of a running Dask scheduler to use instead of a local cluster.
    compare_serial : bool
        Also run the variants one by one in this process (outputs in ``out_dir/_serial``) and report both
        wall times, the speed-up and the largest difference between the two summaries.

    Returns
    -------
    dict
        The content of ``sweep_summary.json``: "rows" (one per variant, see :func:`flatten_summary`),
        "columns", "wall_time_s" (submission of the first variant to the last result), "startup_s"
        (cluster start and worker warm-up), "workers", "n_failed", and with ``compare_serial``
        "serial_wall_time_s", "speedup", "max_relative_difference".
    """
    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError as exc:
        raise FlexbodyError(f"sweep needs Dask's distributed scheduler (pip install 'dask[distributed]'): "
                            f"{exc}") from exc

    case_path = Path(case_path).resolve()
    fixed = dict(fixed or {})
    names = [name for name, _ in grids]
    if len(set(names)) != len(names):
        raise FlexbodyError(f"--grid: a parameter is given twice ({', '.join(names)})")
    both = sorted(set(names) & set(fixed))
    if both:
        raise FlexbodyError(f"parameters both in --grid and --set: {', '.join(both)}")
    out = Path(out_dir if out_dir is not None else Path("out") / f"{case_path.stem}_sweep").resolve()
    variants = [{**fixed, **dict(zip(names, values))} for values in itertools.product(*(v for _, v in grids))]
    grid_only = [dict(zip(names, values)) for values in itertools.product(*(v for _, v in grids))]
    dirs = [str(out / variant_name(g)) for g in grid_only]
    if workers is not None and workers < 1:
        raise FlexbodyError(f"--workers must be at least 1, got {workers}")
    n_workers = workers or max(1, min(os.cpu_count() or 1, len(variants)))
    out.mkdir(parents=True, exist_ok=True)

    start = time.perf_counter()
    cluster = None
    _quiet_dask()
    if scheduler:
        client = Client(scheduler)
    else:
        cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True, dashboard_address=None,
                               silence_logs=logging.getLogger("flexbody").getEffectiveLevel())
        client = Client(cluster)
    try:
        client.run(_warm_up, str(case_path))
        n_workers = len(client.nthreads()) if scheduler else n_workers
        startup = time.perf_counter() - start
        start = time.perf_counter()
        token = uuid.uuid4().hex[:8]                         # keys unique on a shared scheduler
        futures = [client.submit(run_variant, str(case_path), d, v, pure=False,
                                 key=f"flexbody-variant-{token}-{i}-{Path(d).name}")
                   for i, (d, v) in enumerate(zip(dirs, variants))]
        index = {f.key: i for i, f in enumerate(futures)}
        results = [None] * len(futures)
        for future in as_completed(futures):
            try:
                results[index[future.key]] = future.result()
            except Exception as exc:                         # the worker itself failed (killed, lost, …)
                results[index[future.key]] = {"summary": {}, "error": f"{type(exc).__name__}: {exc}",
                                              "wall_time": float("nan")}
        wall = time.perf_counter() - start
    finally:
        client.close()
        if cluster is not None:
            cluster.close()

    rows = _rows(grid_only, names, results)
    summary = {"case": str(case_path), "grid": {name: values for name, values in grids}, "fixed": fixed,
               "out_dir": str(out), "scheduler": scheduler or "local", "workers": n_workers,
               "n_variants": len(rows), "n_failed": sum(r["status"] != "ok" for r in rows),
               "startup_s": startup, "wall_time_s": wall}
    if compare_serial:
        start = time.perf_counter()
        serial = [run_variant(str(case_path), str(out / "_serial" / Path(d).name), v) for d, v in zip(dirs, variants)]
        summary["serial_wall_time_s"] = time.perf_counter() - start
        summary["speedup"] = summary["serial_wall_time_s"] / wall if wall > 0 else float("nan")
        summary["max_relative_difference"] = _max_difference(results, serial)
    summary["columns"] = _columns(rows)
    summary["rows"] = rows
    _write_summary(out, summary)
    return summary


def _quiet_dask() -> None:
    """Dask's loggers (distributed.*, tornado, bokeh) set their own levels (INFO: some thirty lines per
    sweep); give them flexbody's level, so they are quiet unless ``--verbose`` asked for INFO."""
    level = logging.getLogger("flexbody").getEffectiveLevel()
    for name in ("distributed", "tornado", "bokeh", *list(logging.root.manager.loggerDict)):
        if name.split(".")[0] in ("distributed", "tornado", "bokeh"):
            logging.getLogger(name).setLevel(level)


def _max_difference(a: list[dict], b: list[dict]) -> float:
    """Largest relative difference between the numeric summary entries of two runs of the same variants
    (inf when keys, non-numeric values or error states differ)."""
    worst = 0.0
    for ra, rb in zip(a, b):
        if (ra["error"] is None) != (rb["error"] is None) or ra["summary"].keys() != rb["summary"].keys():
            return math.inf
        for key, x in ra["summary"].items():
            y = rb["summary"][key]
            if isinstance(x, bool) or isinstance(x, str) or isinstance(y, (bool, str)):
                if x != y:
                    return math.inf
            elif not (x == y or (math.isnan(x) and math.isnan(y))):
                worst = max(worst, abs(x - y) / max(abs(x), abs(y)))
    return worst


def _json_value(value):
    """JSON-safe value: non-finite floats become null, tuples lists."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (list, tuple)):
        return [_json_value(v) for v in value]
    if isinstance(value, dict):
        return {k: _json_value(v) for k, v in value.items()}
    return value


def _csv_value(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)                                   # round-trips exactly
    return value if isinstance(value, str) else _compact(value)


def _write_summary(out: Path, summary: dict) -> None:
    columns = summary["columns"]
    with open(out / "sweep_summary.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(columns)
        for row in summary["rows"]:
            writer.writerow([_csv_value(row.get(c)) for c in columns])
    (out / "sweep_summary.json").write_text(json.dumps(_json_value(summary), indent=1) + "\n")


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        text = f"{value:.6g}"
        return text + ".0" if math.isfinite(value) and not set(text) & set(".e") else text
    text = value if isinstance(value, str) else _compact(value)
    text = text.replace("|", "\\|")
    return text if len(text) <= 60 else text[:57] + "..."


def markdown_table(columns: list[str], rows: list[dict]) -> str:
    """Rows as a markdown table (floats to 6 significant digits, long text cut to 60 characters)."""
    lines = ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    lines += ["| " + " | ".join(_cell(row.get(c)) for c in columns) + " |" for row in rows]
    return "\n".join(lines)


# ----------------------------------------------------------------------------------------------- bench
def benchmark_scripts(root=None) -> list[Path]:
    """The benchmark scripts ``tests/benchmarks/bench_*.py`` of the repository holding the package
    (``root``: the repository, default the parent directory of the package), sorted by name."""
    root = Path(root) if root is not None else Path(__file__).resolve().parents[1]
    folder = root / "tests" / "benchmarks"
    scripts = sorted(folder.glob("bench_*.py"))
    if not scripts:
        raise FlexbodyError(f"no benchmark scripts (tests/benchmarks/bench_*.py) next to the package in {root}: "
                            "flexbody seems installed without its repository; run from a source checkout")
    return scripts


def _script_title(path: Path) -> str:
    try:
        doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    except (OSError, SyntaxError, ValueError):
        doc = ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


def _select_scripts(names: list[str]) -> list[Path]:
    scripts = benchmark_scripts()
    if not names:
        return scripts
    by_name = {}
    for s in scripts:
        for alias in (s.name, s.stem, s.stem.removeprefix("bench_")):
            by_name[alias] = s
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise FlexbodyError(f"no benchmark named {', '.join(map(repr, unknown))}; available: "
                            f"{', '.join(s.stem.removeprefix('bench_') for s in scripts)}")
    return list(dict.fromkeys(by_name[n] for n in names))


# -------------------------------------------------------------------------------------------- commands
def _cmd_run(args) -> int:
    from . import progress, restart

    module = load_case(args.case)
    out = Path(args.out or Path("out") / Path(args.case).stem)
    settings = _resumed_settings(out, args) if args.resume else list(args.set)
    overrides = parse_overrides(settings, module)
    _write_run_record(out, args.case, settings)
    start = time.perf_counter()
    with (restart.resuming() if args.resume else contextlib.nullcontext()) as restarts:
        if args.no_progress:
            module.main(str(out), **overrides)
        else:
            bar = progress.ProgressBar()
            try:
                with progress.reporting(bar), _lines_after(bar):
                    module.main(str(out), **overrides)
            finally:
                bar.close()
    if args.resume:
        print(_restart_summary(restarts))
    print(f"flexbody: results written to {out} ({time.perf_counter() - start:.1f} s)")
    return 0


@contextlib.contextmanager
def _lines_after(bar):
    """Log records printed while ``bar`` runs start on a line of their own (the bar's line is ended first)."""
    def end_bar_line(record) -> bool:
        bar.break_line()
        return True

    handlers = list(logging.getLogger().handlers)
    for handler in handlers:
        handler.addFilter(end_bar_line)
    try:
        yield
    finally:
        for handler in handlers:
            handler.removeFilter(end_bar_line)


RUN_RECORD = "flexbody_run.json"
"""File in a ``run`` output directory naming the case and its ``--set`` values (read by ``--resume``)."""


def _write_run_record(out: Path, case: str, settings: list[str]) -> None:
    from .results import write_text

    out.mkdir(parents=True, exist_ok=True)
    write_text(out / RUN_RECORD, json.dumps({"case": Path(case).name, "set": list(settings)}, indent=1))


def _resumed_settings(out: Path, args) -> list[str]:
    """The ``--set`` values of the run saved in ``out`` (those given now must be the same, or none)."""
    record = out / RUN_RECORD
    if not record.is_file():
        return list(args.set)
    try:
        saved = json.loads(record.read_text())
        case, settings = saved["case"], list(saved["set"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise FlexbodyError(f"--resume: cannot read {str(record)!r}: {exc}") from exc
    if case != Path(args.case).name:
        raise FlexbodyError(f"--resume: {str(out)!r} holds a run of {case}, not of {Path(args.case).name}")
    if args.set and sorted(args.set) != sorted(settings):
        raise FlexbodyError(f"--resume: the run in {str(out)!r} was made with --set {' '.join(settings) or '(none)'}; "
                            f"give the same values or none")
    return settings


def _restart_summary(restarts) -> str:
    lines = [f"flexbody: resumed {d} from its checkpoint at t = {t:.6g} s" for d, t in restarts.resumed]
    lines += [f"flexbody: {d} held a complete run; its results were reused" for d in restarts.reused]
    lines += [f"flexbody: nothing saved in {d}; that run started from the beginning" for d in restarts.started]
    return "\n".join(lines) or ("flexbody: this case does not save its runs as they go (simulate(save_to=...)), "
                                "so it ran from the beginning")


def new_case(path) -> Path:
    """Write the commented case template (``flexbody/templates/case.py``: a cantilever's static deflection
    and free vibration against Euler–Bernoulli, runnable as it is) to ``path`` (``.py`` added), named after
    its stem. FlexbodyError if the file exists or the stem is not a valid Python name."""
    from importlib.resources import files

    path = Path(path)
    path = path if path.suffix == ".py" else path.with_name(path.name + ".py")
    if not path.stem.isidentifier() and not (path.stem[:1].isdigit() and path.stem.replace("_", "a").isalnum()):
        raise FlexbodyError(f"new: {path.stem!r} is not a usable case name (letters, digits and _, e.g. 17_my_arm)")
    if path.exists():
        raise FlexbodyError(f"new: {str(path)!r} exists; choose another name or remove it")
    text = (files("flexbody") / "templates" / "case.py").read_text(encoding="utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text.replace("{name}", path.stem).replace("{path}", str(path)), encoding="utf-8")
    return path


def _cmd_new(args) -> int:
    path = new_case(args.name)
    print(f"flexbody: wrote {path}; run it with: flexbody run {path}  (its parameters: flexbody info {path} --params)")
    return 0


def _cmd_info(args) -> int:
    module = load_case(args.case, require=("build",))
    print(describe_case(module, parse_overrides(args.set, module), params=args.params))
    return 0


def _cmd_sweep(args) -> int:
    module = load_case(args.case)
    grids = [parse_grid(g, module) for g in args.grid]
    fixed = parse_overrides(args.set, module)
    result = sweep(args.case, grids, fixed, args.out, workers=args.workers, scheduler=args.scheduler,
                   compare_serial=args.compare_serial)
    print(markdown_table(result["columns"], result["rows"]))
    print()
    print(f"{result['n_variants']} variants on {result['workers']} worker(s) ({result['scheduler']}): "
          f"wall time {result['wall_time_s']:.2f} s (+ {result['startup_s']:.2f} s cluster start-up and warm-up)")
    if args.compare_serial:
        print(f"serial in this process: {result['serial_wall_time_s']:.2f} s; speed-up "
              f"{result['speedup']:.2f}; largest relative difference between the two runs' summaries "
              f"{result['max_relative_difference']:.3g}")
    print(f"summary: {Path(result['out_dir']) / 'sweep_summary.csv'} and sweep_summary.json")
    failed = [r for r in result["rows"] if r["status"] != "ok"]
    if failed:
        print(f"flexbody: error: {len(failed)} of {len(result['rows'])} variants failed; first: "
              f"{failed[0]['variant']}: {failed[0]['error']}", file=sys.stderr)
        return EXIT_FAILED
    return 0


def _results_dir(path: str) -> Path:
    results = Path(path)
    if not results.is_dir():
        raise FlexbodyError(f"results directory {path!r} not found" if not results.exists()
                            else f"results path {path!r} is not a directory")
    if not os.access(results, os.R_OK | os.X_OK):
        raise FlexbodyError(f"results directory {path!r} is not readable")
    return results


def _cmd_view(args) -> int:
    results = _results_dir(args.results)
    if args.gif and args.step is not None:
        raise FlexbodyError("--step does not apply to --gif (the animation shows every step)")
    try:
        from . import view
        if args.gif:
            path = view.animation(results, args.out or results / "animation.gif", field=args.field, scale=args.scale)
        else:
            path = view.screenshot(results, args.out or results / "screenshot.png", field=args.field,
                                   step=-1 if args.step is None else args.step, scale=args.scale)
    except ImportError as exc:                               # pyvista (or its rendering back end) missing
        raise FlexbodyError(f"view needs pyvista: {exc}") from exc
    print(f"flexbody: wrote {path}")
    return 0


def _cmd_export(args) -> int:
    if args.format not in EXPORT_FORMATS:
        raise FlexbodyError(f"unknown export format {args.format!r}; formats: {', '.join(EXPORT_FORMATS)}")
    results = _results_dir(args.results)
    try:
        from .io import export
        paths = export(results, args.format, args.out)
    except ImportError as exc:                               # meshio / h5py missing
        raise FlexbodyError(f"export to {args.format} needs a package that is missing: {exc}") from exc
    print(f"flexbody: wrote {len(paths)} file(s):")
    for path in paths:
        print(f"  {path}")
    return 0


def _cmd_bench(args, extra: list[str]) -> int:
    if args.list:
        scripts = benchmark_scripts()
        width = max(len(s.stem.removeprefix("bench_")) for s in scripts)
        for s in scripts:
            print(f"{s.stem.removeprefix('bench_'):<{width}}  {s}  {_script_title(s)}")
        return 0
    scripts = _select_scripts(args.names)
    failed, times = [], []
    for script in scripts:
        print(f"== {script.name} {' '.join(extra)}".rstrip(), flush=True)
        start = time.perf_counter()
        code = subprocess.run([sys.executable, str(script), *extra], cwd=script.parents[2]).returncode
        times.append((script.name, code, time.perf_counter() - start))
        if code != 0:
            failed.append(script.name)
    for name, code, wall in times:
        print(f"{name}: exit {code} in {wall:.1f} s")
    if failed:
        print(f"flexbody: error: benchmark(s) failed: {', '.join(failed)}", file=sys.stderr)
        return EXIT_FAILED
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="flexbody", description="flexible/rigid multibody simulation")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-v", "--verbose", action="store_true",
                        help="also print informational log lines (flexbody's solver notes, Dask's cluster messages)")
    sub = parser.add_subparsers(dest="command", required=True)

    def command(name: str, **kwargs) -> argparse.ArgumentParser:
        return sub.add_parser(name, parents=[common], **kwargs)

    set_help = "override a case parameter (Python literal; repeatable)"

    run = command("run", help="run a case file")
    run.add_argument("case")
    run.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help=set_help)
    run.add_argument("--out", default=None, help="output directory (default out/<case name>)")
    run.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    run.add_argument("--resume", action="store_true",
                     help="continue the runs a stopped case saved in --out (same --set values, or none to reuse "
                          "the saved ones) instead of starting them again")

    new = command("new", help="write a commented case template that runs as it is")
    new.add_argument("name", help="case file to write, e.g. cases/17_my_case (.py is added)")

    info = command("info", help="describe a case's system: coordinates, constraints, rank, actuation")
    info.add_argument("case")
    info.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help=set_help)
    info.add_argument("--params", action="store_true",
                      help="also list the case's parameters: name, value, unit, description")

    sweep_ = command("sweep", help="run a case over a parameter grid as Dask tasks")
    sweep_.add_argument("case")
    sweep_.add_argument("--grid", action="append", required=True, metavar="NAME=V1,V2,...",
                        help="values of one parameter (repeatable; the variants are the Cartesian product)")
    sweep_.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help=set_help)
    sweep_.add_argument("--out", default=None, help="output directory (default out/<case name>_sweep)")
    sweep_.add_argument("--workers", type=int, default=None, help="local worker processes (default: CPUs)")
    sweep_.add_argument("--scheduler", default=None, metavar="ADDRESS", help="use a running Dask scheduler")
    sweep_.add_argument("--compare-serial", action="store_true",
                        help="also run the variants one by one here and report the speed-up")

    view = command("view", help="render saved results (screenshot or animated GIF)")
    view.add_argument("results")
    view.add_argument("--field", default="displacement")
    view.add_argument("--step", type=int, default=None, help="recorded step (default: the last)")
    view.add_argument("--gif", action="store_true", help="write an animation instead of a screenshot")
    view.add_argument("--scale", type=float, default=1.0,
                      help="draw flexible bodies at reference + SCALE × displacement (default 1: as computed)")
    view.add_argument("--out", default=None, help="output file (default RESULTS/screenshot.png or animation.gif)")

    export = command("export", help="export saved results for other tools")
    export.add_argument("results")
    export.add_argument("--format", required=True, metavar="|".join(EXPORT_FORMATS))
    export.add_argument("--out", default=None, help="output directory")

    bench = command("bench", help="run the repository's benchmark scripts (tests/benchmarks/bench_*.py)",
                           epilog="arguments after -- are passed to every script")
    bench.add_argument("names", nargs="*", metavar="NAME", help="benchmarks to run (default: all)")
    bench.add_argument("--list", action="store_true", help="list the benchmarks")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``flexbody`` command; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    extra = []
    if argv and argv[0] == "bench" and "--" in argv:
        cut = argv.index("--")
        argv, extra = argv[:cut], argv[cut + 1:]
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("flexbody").setLevel(logging.INFO if args.verbose else logging.WARNING)
    logging.getLogger("matplotlib").setLevel(logging.WARNING)          # font substitution notes
    commands = {"run": _cmd_run, "new": _cmd_new, "info": _cmd_info, "sweep": _cmd_sweep, "view": _cmd_view, "export": _cmd_export}
    try:
        if args.command == "bench":
            return _cmd_bench(args, extra)
        return commands[args.command](args)
    except (FlexbodyError, OSError) as exc:
        message = " ".join(str(exc).split())
        print(f"flexbody: error: {message}", file=sys.stderr)
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
