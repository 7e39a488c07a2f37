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

``run`` hands a case whose ``main`` takes a ``context`` keyword a :class:`flexbody.RunContext` (the progress
bar; with ``--resume`` a restart log), which the case passes to its runs (``fb.simulate(..., context=context)``).
``run`` records the case and its ``--set`` values in ``DIR/flexbody_run.json``. ``run --resume`` re-runs
the case with those values and a resuming context: every simulation the case saves as it goes
(``simulate(..., save_to=…)``) continues from its checkpoint, or is reused when it had finished, so a
killed long case completes with the same final state as an uninterrupted one.

Errors the user can fix (a missing case file, a case without ``main``/``build``, an unknown parameter, a
value the case rejects with :class:`~flexbody.errors.FlexbodyError`, a missing results directory, an
unknown export format, …) are reported as one line ``flexbody: error: …`` on stderr with exit code 2.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

from .._version import __version__
from ..errors import FlexbodyError
from ..threads import limit_threads
from .bench import benchmark_scripts, script_title, select_scripts
from .cases import case_failure, case_line, keyword_parameters, load_case, parse_grid, parse_overrides
from .info import describe_case
from .sweep import markdown_table, sweep

__all__ = ["main", "new_case"]

EXPORT_FORMATS = ("pvd", "xdmf", "csv")
"""Formats of ``flexbody export`` (passed on to :func:`flexbody.io.export`)."""

EXIT_ERROR = 2
"""Exit code of a user error (as argparse's)."""

EXIT_FAILED = 1
"""Exit code when a sweep variant or a benchmark script failed."""


# -------------------------------------------------------------------------------------------- commands
def _cmd_run(args) -> int:
    from .. import progress
    from ..solvers.run_context import RunContext

    module = load_case(args.case)
    out = Path(args.out or Path("out") / Path(args.case).stem)
    settings = _resumed_settings(out, args) if args.resume else list(args.set)
    overrides = parse_overrides(settings, module)
    _write_run_record(out, args.case, settings)
    start = time.perf_counter()
    bar = None if args.no_progress else progress.ProgressBar()
    context = RunContext.resuming(bar) if args.resume else RunContext(progress=bar)
    if "context" in keyword_parameters(module.main):  # the case hands the context to its runs
        overrides = {**overrides, "context": context}
    try:
        with _lines_after(bar) if bar is not None else contextlib.nullcontext():
            module.main(str(out), **overrides)
    finally:
        if bar is not None:
            bar.close()
    if args.resume:
        print(_restart_summary(context.restarts))
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
    from ..io.results import write_text

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
        raise FlexbodyError(
            f"--resume: the run in {str(out)!r} was made with --set {' '.join(settings) or '(none)'}; "
            f"give the same values or none"
        )
    return settings


def _restart_summary(restarts) -> str:
    lines = [f"flexbody: resumed {d} from its checkpoint at t = {t:.6g} s" for d, t in restarts.resumed]
    lines += [f"flexbody: {d} held a complete run; its results were reused" for d in restarts.reused]
    lines += [f"flexbody: nothing saved in {d}; that run started from the beginning" for d in restarts.started]
    return "\n".join(lines) or (
        "flexbody: this case does not save its runs as they go (simulate(save_to=...)), so it ran from the beginning"
    )


def new_case(path) -> Path:
    """Write the commented case template (``flexbody/cli/templates/case.py``: a cantilever's static deflection
    and free vibration against Euler–Bernoulli, runnable as it is) to ``path`` (``.py`` added), named after
    its stem. FlexbodyError if the file exists or the stem is not a valid Python name."""
    from importlib.resources import files

    path = Path(path)
    path = path if path.suffix == ".py" else path.with_name(path.name + ".py")
    if not path.stem.isidentifier() and not (path.stem[:1].isdigit() and path.stem.replace("_", "a").isalnum()):
        raise FlexbodyError(f"new: {path.stem!r} is not a usable case name (letters, digits and _, e.g. 17_my_arm)")
    if path.exists():
        raise FlexbodyError(f"new: {str(path)!r} exists; choose another name or remove it")
    text = (files("flexbody.cli") / "templates" / "case.py").read_text(encoding="utf-8")
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
    result = sweep(
        args.case,
        grids,
        fixed,
        args.out,
        workers=args.workers,
        scheduler=args.scheduler,
        compare_serial=args.compare_serial,
    )
    print(markdown_table(result["columns"], result["rows"]))
    print()
    print(
        f"{result['n_variants']} variants on {result['workers']} worker(s) ({result['scheduler']}): "
        f"wall time {result['wall_time_s']:.2f} s (+ {result['startup_s']:.2f} s cluster start-up and warm-up)"
    )
    if args.compare_serial:
        print(
            f"serial in this process: {result['serial_wall_time_s']:.2f} s; speed-up "
            f"{result['speedup']:.2f}; largest relative difference between the two runs' summaries "
            f"{result['max_relative_difference']:.3g}"
        )
    print(f"summary: {Path(result['out_dir']) / 'sweep_summary.csv'} and sweep_summary.json")
    failed = [r for r in result["rows"] if r["status"] != "ok"]
    if failed:
        print(
            f"flexbody: error: {len(failed)} of {len(result['rows'])} variants failed; first: "
            f"{failed[0]['variant']}: {failed[0]['error']}",
            file=sys.stderr,
        )
        return EXIT_FAILED
    return 0


def _results_dir(path: str) -> Path:
    results = Path(path)
    if not results.is_dir():
        raise FlexbodyError(
            f"results directory {path!r} not found"
            if not results.exists()
            else f"results path {path!r} is not a directory"
        )
    if not os.access(results, os.R_OK | os.X_OK):
        raise FlexbodyError(f"results directory {path!r} is not readable")
    return results


def _cmd_view(args) -> int:
    results = _results_dir(args.results)
    if args.gif and args.step is not None:
        raise FlexbodyError("--step does not apply to --gif (the animation shows every step)")
    try:
        from ..io import view

        if args.gif:
            path = view.animation(results, args.out or results / "animation.gif", field=args.field, scale=args.scale)
        else:
            path = view.screenshot(
                results,
                args.out or results / "screenshot.png",
                field=args.field,
                step=-1 if args.step is None else args.step,
                scale=args.scale,
            )
    except ImportError as exc:  # pyvista (or its rendering back end) missing
        raise FlexbodyError(f"view needs pyvista: {exc}") from exc
    print(f"flexbody: wrote {path}")
    return 0


def _cmd_export(args) -> int:
    if args.format not in EXPORT_FORMATS:
        raise FlexbodyError(f"unknown export format {args.format!r}; formats: {', '.join(EXPORT_FORMATS)}")
    results = _results_dir(args.results)
    try:
        from ..io import export

        paths = export(results, args.format, args.out)
    except ImportError as exc:  # meshio / h5py missing
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
            print(f"{s.stem.removeprefix('bench_'):<{width}}  {s}  {script_title(s)}")
        return 0
    scripts = select_scripts(args.names)
    failed, times = [], []
    for script in scripts:
        print(f"== {script.name} {' '.join(extra)}".rstrip(), flush=True)
        start = time.perf_counter()
        code = subprocess.run([sys.executable, str(script), *extra], cwd=script.parents[2], check=False).returncode
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
    """The command line: ``flexbody [--version] COMMAND …`` with a subparser per command."""
    parser = argparse.ArgumentParser(prog="flexbody", description="flexible/rigid multibody simulation")
    parser.add_argument("--version", action="version", version=f"flexbody {__version__}")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="also print informational log lines (flexbody's solver notes, Dask's cluster messages)",
    )
    common.add_argument(
        "--traceback", action="store_true", help="on an error, show Python's traceback instead of the one-line message"
    )
    sub = parser.add_subparsers(dest="command", required=True)

    def command(name: str, **kwargs) -> argparse.ArgumentParser:
        return sub.add_parser(name, parents=[common], **kwargs)

    _case_commands(command)
    _result_commands(command)
    return parser


_SET_HELP = "override a case parameter (Python literal; repeatable)"


def _case_commands(command) -> None:
    """The commands on a case file: run, new, info, sweep."""
    run = command("run", help="run a case file")
    run.add_argument("case")
    run.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help=_SET_HELP)
    run.add_argument("--out", default=None, help="output directory (default out/<case name>)")
    run.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    run.add_argument(
        "--resume",
        action="store_true",
        help="continue the runs a stopped case saved in --out (same --set values, or none to reuse "
        "the saved ones) instead of starting them again",
    )
    new = command("new", help="write a commented case template that runs as it is")
    new.add_argument("name", help="case file to write, e.g. cases/22_my_case (.py is added)")
    info = command("info", help="describe a case's system: coordinates, constraints, rank, actuation")
    info.add_argument("case")
    info.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help=_SET_HELP)
    info.add_argument(
        "--params", action="store_true", help="also list the case's parameters: name, value, unit, description"
    )
    sweep_ = command("sweep", help="run a case over a parameter grid as Dask tasks")
    sweep_.add_argument("case")
    sweep_.add_argument(
        "--grid",
        action="append",
        required=True,
        metavar="NAME=V1,V2,...",
        help="values of one parameter (repeatable; the variants are the Cartesian product)",
    )
    sweep_.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help=_SET_HELP)
    sweep_.add_argument("--out", default=None, help="output directory (default out/<case name>_sweep)")
    sweep_.add_argument("--workers", type=int, default=None, help="local worker processes (default: CPUs)")
    sweep_.add_argument("--scheduler", default=None, metavar="ADDRESS", help="use a running Dask scheduler")
    sweep_.add_argument(
        "--compare-serial", action="store_true", help="also run the variants one by one here and report the speed-up"
    )


def _result_commands(command) -> None:
    """The commands on saved results and the repository: view, export, bench."""
    view = command("view", help="render saved results (screenshot or animated GIF)")
    view.add_argument("results")
    view.add_argument("--field", default="displacement")
    view.add_argument("--step", type=int, default=None, help="recorded step (default: the last)")
    view.add_argument("--gif", action="store_true", help="write an animation instead of a screenshot")
    view.add_argument(
        "--scale",
        type=float,
        default=1.0,
        help="draw flexible bodies at reference + SCALE × displacement (default 1: as computed)",
    )
    view.add_argument("--out", default=None, help="output file (default RESULTS/screenshot.png or animation.gif)")
    export = command("export", help="export saved results for other tools")
    export.add_argument("results")
    export.add_argument("--format", required=True, metavar="|".join(EXPORT_FORMATS))
    export.add_argument("--out", default=None, help="output directory")
    bench = command(
        "bench",
        help="run the repository's benchmark scripts (tests/benchmarks/bench_*.py)",
        epilog="arguments after -- are passed to every script",
    )
    bench.add_argument("names", nargs="*", metavar="NAME", help="benchmarks to run (default: all)")
    bench.add_argument("--list", action="store_true", help="list the benchmarks")


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``flexbody`` command; returns the exit code. Started from the command line (``argv``
    None), the process is the command's own, so it opts in to :func:`flexbody.limit_threads` (one BLAS thread,
    sleeping idle OpenMP threads) before anything runs."""
    if argv is None:
        limit_threads()
    argv = list(sys.argv[1:] if argv is None else argv)
    extra = []
    if argv and argv[0] == "bench" and "--" in argv:
        cut = argv.index("--")
        argv, extra = argv[:cut], argv[cut + 1 :]
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("flexbody").setLevel(logging.INFO if args.verbose else logging.WARNING)
    logging.getLogger("matplotlib").setLevel(logging.WARNING)  # font substitution notes
    commands = {
        "run": _cmd_run,
        "new": _cmd_new,
        "info": _cmd_info,
        "sweep": _cmd_sweep,
        "view": _cmd_view,
        "export": _cmd_export,
    }
    case = getattr(args, "case", None)
    try:
        if args.command == "bench":
            return _cmd_bench(args, extra)
        return commands[args.command](args)
    except (FlexbodyError, OSError) as exc:
        if args.traceback:
            raise
        print(f"flexbody: error: {_one_line(exc, case)}", file=sys.stderr)
        return EXIT_ERROR
    except Exception as exc:  # raised by a case's own code (or by flexbody under it): one line
        if case is None or args.traceback:
            raise
        print(f"flexbody: error: {case_failure(exc, case)} (--traceback shows the traceback)", file=sys.stderr)
        return EXIT_ERROR


def _one_line(exc: BaseException, case: str | None) -> str:
    """The message of a FlexbodyError or OSError on one line, after the case file and line when a case raised it."""
    if case is not None and case_line(exc, case) is not None:
        return case_failure(exc, case)
    return " ".join(str(exc).split())
