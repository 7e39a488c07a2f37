"""``flexbody sweep``: a case run over a grid of parameter values on a Dask cluster (local or given), one
output folder per variant and a summary table (CSV, Markdown, JSON).
"""

from __future__ import annotations

import csv
import itertools
import json
import logging
import math
import numbers
import os
import re
import time
import uuid
from pathlib import Path

from ..errors import FlexbodyError
from .cases import case_line, compact, load_case

log = logging.getLogger(__name__)


# ----------------------------------------------------------------------------------------------- sweep
def variant_name(overrides: dict) -> str:
    """Directory name of a variant: ``name=value`` joined by ``_``, unsafe characters replaced by ``_``."""
    text = "_".join(f"{k}={compact(v)}" for k, v in overrides.items())
    return re.sub(r"[^A-Za-z0-9.=+\-]", "_", text) or "default"


def _scalar(value):
    """``value`` as a plain bool/int/float/str, or None when it is not a scalar (lists, arrays, None)."""
    if isinstance(value, (bool, str)):
        return value
    if hasattr(value, "item") and getattr(value, "ndim", None) == 0:  # numpy scalar or 0-d array
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
    out: dict[str, bool | int | float | str] = {}
    if not isinstance(summary, dict):
        return out
    for key, value in summary.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(flatten_summary(value, name + "."))
            continue
        scalar = _scalar(value)
        if scalar is not None:
            out[name] = scalar
    return out


#: File in a variant's output folder listing the processes that started it, one pid per line: a variant started
#: more than once was re-run after its worker was lost (killed, out of memory, …) and Dask gave it to another.
ATTEMPTS_FILE = ".sweep_attempts"


def _record_attempt(out_dir: str) -> list[int]:
    """Append this process to the variant's attempts file; returns the pids of the attempts before this one."""
    path = Path(out_dir) / ATTEMPTS_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    before = [int(p) for p in path.read_text().split()] if path.is_file() else []
    with open(path, "a") as f:
        f.write(f"{os.getpid()}\n")
    return before


def run_variant(case_path: str, out_dir: str, overrides: dict) -> dict:
    """Run ``main(out_dir, **overrides)`` of the case file at ``case_path`` (imported here, by path) and
    return {"summary": flattened scalar summary, "error": None or "Type: message", "wall_time": s,
    "lost_workers": pids of the processes that started this variant before and were lost}.

    This is the task a sweep sends to its Dask workers; it never raises for an error of the case."""
    start = time.perf_counter()
    lost = _record_attempt(out_dir)
    try:
        module = load_case(case_path)
        summary = flatten_summary(module.main(out_dir, **overrides))
        error = None
    except Exception as exc:  # the row reports it; the other variants go on
        where = case_line(exc, case_path)
        at = "" if where is None else f" (line {where[0]} of {Path(case_path).name}, in {where[1]})"
        summary, error = {}, f"{type(exc).__name__}: {exc}{at}".strip().replace("\n", " ")
    return {"summary": summary, "error": error, "wall_time": time.perf_counter() - start, "lost_workers": lost}


def _warm_up(case_path: str) -> None:
    """Import the case (and so flexbody and its dependencies) in a worker before the timed sweep."""
    load_case(case_path)


def _rows(variants: list[dict], names: list[str], results: list[dict]) -> list[dict]:
    """Table rows: variant, grid parameters (UPPER_CASE, as the case spells them), status, wall time, attempts
    (more than 1: re-run after its worker was lost), error, then the flattened summary."""
    rows = []
    for overrides, result in zip(variants, results):
        row: dict = {"variant": variant_name(overrides)}
        row.update({name.upper(): overrides[name] for name in names})
        row["status"] = "ok" if result["error"] is None else "error"
        row["wall_time_s"] = result["wall_time"]
        row["attempts"] = 1 + len(result["lost_workers"])
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


def sweep(
    case_path,
    grids: list[tuple[str, list]],
    fixed: dict | None = None,
    out_dir=None,
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    compare_serial: bool = False,
) -> dict:
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
    for d in dirs:  # attempts of an earlier sweep into the same folders are not re-runs of this one
        Path(d, ATTEMPTS_FILE).unlink(missing_ok=True)
    results, n_workers, startup, wall = _run_on_dask(case_path, dirs, variants, n_workers, scheduler)
    rows = _rows(grid_only, names, results)
    for row, result in zip(rows, results):
        if result["lost_workers"]:
            log.warning(
                "sweep: variant %s was re-run (attempt %d): the worker process(es) %s that started it were lost",
                row["variant"],
                row["attempts"],
                ", ".join(str(p) for p in result["lost_workers"]),
            )
    summary = {
        "case": str(case_path),
        "grid": dict(grids),
        "fixed": fixed,
        "out_dir": str(out),
        "scheduler": scheduler or "local",
        "workers": n_workers,
        "n_variants": len(rows),
        "n_failed": sum(r["status"] != "ok" for r in rows),
        "n_rerun": sum(r["attempts"] > 1 for r in rows),
        "lost_workers": sorted({pid for r in results for pid in r["lost_workers"]}),
        "startup_s": startup,
        "wall_time_s": wall,
    }
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


def _run_on_dask(case_path: Path, dirs: list[str], variants: list[dict], n_workers: int, scheduler: str | None):
    """(results in the variants' order, workers, start-up time [s], wall time [s]) of running each variant as a
    Dask task on a local cluster of ``n_workers`` processes, or on the scheduler at ``scheduler``; a variant whose
    worker failed (killed, lost, …) has an "error"."""
    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError as exc:
        raise FlexbodyError(
            f"sweep needs Dask's distributed scheduler (pip install 'dask[distributed]'): {exc}"
        ) from exc
    start = time.perf_counter()
    cluster = None
    _quiet_dask()
    if scheduler:
        client = Client(scheduler)
    else:
        cluster = LocalCluster(
            n_workers=n_workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=logging.getLogger("flexbody").getEffectiveLevel(),
        )
        client = Client(cluster)
    try:
        client.run(_warm_up, str(case_path))
        n_workers = len(client.nthreads()) if scheduler else n_workers
        startup = time.perf_counter() - start
        start = time.perf_counter()
        token = uuid.uuid4().hex[:8]  # keys unique on a shared scheduler
        futures = [
            client.submit(
                run_variant, str(case_path), d, v, pure=False, key=f"flexbody-variant-{token}-{i}-{Path(d).name}"
            )
            for i, (d, v) in enumerate(zip(dirs, variants))
        ]
        index = {f.key: i for i, f in enumerate(futures)}
        by_index: dict[int, dict] = {}
        for future in as_completed(futures):  # yields every future once
            try:
                by_index[index[future.key]] = future.result()
            except Exception as exc:  # the worker itself failed (killed, lost, …)
                by_index[index[future.key]] = {
                    "summary": {},
                    "error": f"{type(exc).__name__}: {exc}",
                    "wall_time": float("nan"),
                    "lost_workers": [],
                }
        return [by_index[i] for i in range(len(futures))], n_workers, startup, time.perf_counter() - start
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


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
            if isinstance(x, (bool, str)) or isinstance(y, (bool, str)):
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
        return repr(value)  # round-trips exactly
    return value if isinstance(value, str) else compact(value)


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
    text = value if isinstance(value, str) else compact(value)
    text = text.replace("|", "\\|")
    return text if len(text) <= 60 else text[:57] + "..."


def markdown_table(columns: list[str], rows: list[dict]) -> str:
    """Rows as a markdown table (floats to 6 significant digits, long text cut to 60 characters)."""
    lines = ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    lines += ["| " + " | ".join(_cell(row.get(c)) for c in columns) + " |" for row in rows]
    return "\n".join(lines)
