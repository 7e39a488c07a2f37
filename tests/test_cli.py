"""The ``flexbody`` command line: run, info, sweep, view, export, bench and its one-line errors.

Cases are run at reduced size: 04 (particle on a circle) for 3 s at dt = 0.01 s, 05 (slider-crank) for
a fraction of a second. The sweep test runs a 2×2 grid on a 2-worker local Dask cluster and compares its
summary with the same four variants run by calling the case's ``main`` directly.
"""

import csv
import json
import logging
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from case_files import CASES, load

import flexbody as fb
from flexbody import cli, progress
from flexbody.cli.sweep import sweep as sweep_grid
from flexbody.control.actuation import actuation_report

REPO = Path(__file__).resolve().parents[1]
CASE_04 = str(CASES / "04_particle_on_circle.py")
CASE_05 = str(CASES / "05_slider_crank.py")
SHORT_04 = ["--set", "t_end=0.1", "--set", "dt=0.01"]


def one_line_error(capsys) -> str:
    """The stderr of a failed command: exactly one line ``flexbody: error: …``, no traceback."""
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("flexbody: error: ") and "Traceback" not in err
    return lines[0]


# ---------------------------------------------------------------------------------------------- errors
@pytest.fixture
def broken_cases(tmp_path):
    no_main = tmp_path / "no_main.py"
    no_main.write_text("LENGTH = 1.0\n\ndef build(length=LENGTH):\n    return None\n")
    no_build = tmp_path / "no_build.py"
    no_build.write_text("T_END = 1.0\n\ndef main(out_dir, t_end=T_END):\n    return {}\n")
    syntax = tmp_path / "broken_syntax.py"
    syntax.write_text("def main(out_dir:\n")
    return {"no_main": str(no_main), "no_build": str(no_build), "syntax": str(syntax)}


ERRORS = {
    # name: (argv, substrings the one-line message must contain)
    "missing case (run)": (["run", "cases/nope_case.py"], ["nope_case.py", "not found"]),
    "missing case (info)": (["info", "cases/nope_case.py"], ["nope_case.py", "not found"]),
    "missing case (sweep)": (["sweep", "cases/nope_case.py", "--grid", "dt=0.1,0.2"], ["nope_case.py", "not found"]),
    "case without main": (["run", "{no_main}"], ["no_main.py", "defines no main"]),
    "case without build": (["info", "{no_build}"], ["no_build.py", "defines no build"]),
    "case that does not import": (["run", "{syntax}"], ["broken_syntax.py", "SyntaxError"]),
    "bad parameter (run)": (
        ["run", CASE_04, "--set", "colour=red"],
        ["'colour'", "valid parameters: DT, GRAVITY, MASS, RADIUS, THETA0, T_END"],
    ),
    "bad parameter (info)": (["info", CASE_04, "--set", "colour=red"], ["'colour'", "THETA0"]),
    "bad grid parameter": (["sweep", CASE_04, "--grid", "colour=1,2"], ["--grid", "'colour'", "THETA0"]),
    "grid and set overlap": (["sweep", CASE_04, "--grid", "dt=0.1,0.2", "--set", "dt=0.1"], ["dt"]),
    "value the case rejects (run)": (
        ["run", CASE_04, "--set", "dt=-0.01", "--set", "t_end=0.1", "--no-progress"],
        ["dt must be a number > 0", "-0.01"],
    ),
    "value the case rejects (info)": (["info", CASE_04, "--set", "mass=-1"], ["mass must be", "-1"]),
    "missing results (view)": (["view", "{tmp}/no_results"], ["no_results", "not found"]),
    "missing results (export)": (["export", "{tmp}/no_results", "--format", "csv"], ["no_results", "not found"]),
    "results not a directory": (["view", "{no_build}"], ["no_build.py", "not a directory"]),
    "unknown export format": (["export", "{tmp}", "--format", "vtk"], ["'vtk'", "pvd, xdmf, csv"]),
    "unknown benchmark": (["bench", "no_such_bench"], ["'no_such_bench'", "assembly"]),
    "text for a number (run)": (
        ["run", CASE_04, "--set", "t_end=abc"],
        ["t_end='abc'", "takes a number for T_END, e.g. t_end="],
    ),
    "text for a number (grid)": (["sweep", CASE_04, "--grid", "dt=0.1,fast"], ["--grid", "dt='fast'", "DT"]),
    "text for numbers (info)": (
        ["info", CASE_05.replace("05_slider_crank", "16_arm_beam_task_control"), "--set", "divisions=fine"],
        ["divisions='fine'", "numbers for DIVISIONS", "divisions=(6,1,1)"],
    ),
    "output folder is a file": (
        ["run", CASE_04, "--set", "t_end=0.01", "--no-progress", "--out", "{no_build}/out"],
        ["no_build.py"],
    ),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_are_one_line_naming_the_culprit(name, broken_cases, tmp_path, capsys):
    argv, needles = ERRORS[name]
    argv = [a.format(tmp=tmp_path, **broken_cases) for a in argv]
    if argv[0] == "run" and "--out" not in argv:
        argv += ["--out", str(tmp_path / "out")]
    assert cli.main(argv) != 0
    line = one_line_error(capsys)
    for needle in needles:
        assert needle in line, line


def test_entry_point_error_in_a_subprocess(tmp_path):
    """The installed ``flexbody`` script (or the same main through -c) exits non-zero with one line."""
    script = Path(sys.executable).with_name("flexbody")
    cmd = (
        [str(script)]
        if script.is_file()
        else [sys.executable, "-c", "import sys; from flexbody.cli import main; sys.exit(main())"]
    )
    proc = subprocess.run(
        [*cmd, "info", str(tmp_path / "nothing.py")], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [f"flexbody: error: case file '{tmp_path / 'nothing.py'}' not found"]


# ------------------------------------------------------------------------------------------------ info
def field(text: str, pattern: str) -> str:
    match = re.search(pattern, text, re.MULTILINE)
    assert match, (pattern, text)
    return match.group(1)


@pytest.mark.parametrize(
    "case_file, overrides", [("05_slider_crank.py", {}), ("06_redundant_four_bar.py", {"angle": 0.7})]
)
def test_info_counts_match_the_assembled_system(case_file, overrides, capsys):
    argv = ["info", str(CASES / case_file)] + [a for k, v in overrides.items() for a in ("--set", f"{k}={v}")]
    assert cli.main(argv) == 0
    text = capsys.readouterr().out
    asm = load(case_file).build(**overrides).assemble()
    rank = asm.rank_report(0.0, asm.q0)
    assert int(field(text, r"^Coordinates\s+n = (\d+)")) == asm.n_dofs
    assert int(field(text, r"joint (\d+), flexible")) == asm.n_rigid
    assert int(field(text, r"flexible nodal (\d+)")) == asm.n_dofs - asm.n_rigid == 0
    assert int(field(text, r"^Rigid trees\s+(\d+)")) == len(asm.trees)
    assert int(field(text, r"^Flexible bodies\s+(\d+)")) == 0
    assert int(field(text, r"^Constraint rows\s+m = (\d+)")) == asm.n_constraints
    assert int(field(text, r"rank of Phi at q0 (\d+)")) == rank.rank
    assert float(field(text, r"smallest singular value (\S+)")) == pytest.approx(
        rank.singular_values[-1], rel=1e-6, abs=1e-300
    )
    assert f"rank tolerance {rank.tol:.3e} = max(1e-09 × σ_max, 1e-12)" in text  # the tolerance and its rule
    redundant = field(text, r"redundant rows\s+(.*)$")
    assert redundant == (", ".join(rank.redundant_labels) if rank.redundant_labels else "none")
    assert int(field(text, r"^Actuators\s+k = (\d+)")) == len(asm.actuated_labels)
    assert field(text, r"^Actuators\s+k = \d+: (.*)$") == ", ".join(asm.actuated_labels)
    passive = asm.n_dofs - int(np.count_nonzero(np.abs(asm.S).sum(axis=0)))
    assert int(field(text, r"^Passive coords\s+(\d+)")) == passive
    assert "defines no task" in text
    if case_file.startswith("06"):  # the redundant spatial closure: one row dropped
        assert rank.rank == 2 and asm.n_constraints == 3 and redundant == "loop.z"
        assert "rank-deficient by 1" in text
    else:
        assert passive == 1 and rank.is_full_rank


def test_info_prints_the_actuation_report_of_the_case_task(capsys):
    assert cli.main(["info", str(CASES / "09_underactuated_chain_control.py")]) == 0
    text = capsys.readouterr().out
    case = load("09_underactuated_chain_control.py")
    asm = case.build().assemble()
    report = actuation_report(asm, 0.0, asm.q0, np.zeros(asm.n_dofs), task=case.task(asm))
    assert "Actuation report for task 'end_point'" in text
    for line in str(report).splitlines():  # the report itself, indented
        assert "  " + line in text
    assert report.n_actuators == 2 and report.dof == 3 and not report.motion_actuated and report.task_actuated
    assert "controllers whose checks pass: direct, minimal, partitioned\n" in text + "\n"


def test_info_reports_every_task_of_a_case_with_several(capsys):
    assert cli.main(["info", str(CASES / "08_parallel_platform_control.py")]) == 0
    text = capsys.readouterr().out
    assert "task 'elbows'" in text and "task 'platform'" in text
    assert text.count("n = 9, m_C = 6 (rank 6), p = 3, k = 3, m_T = 3") == 2


def test_info_counts_nodal_coordinates_per_body_instead_of_listing_them(capsys):
    """A flexible body's nodal coordinates are passive (no actuators on nodes, [DE 6.3]): info counts them
    per body and lists only passive joints by name."""
    argv = ["info", str(CASES / "16_arm_beam_task_control.py"), "--set", "divisions=(3,1,1)"]
    assert cli.main(argv) == 0
    text = capsys.readouterr().out
    asm = load("16_arm_beam_task_control.py").build(divisions=(3, 1, 1)).assemble()
    n_nodal = asm.n_dofs - asm.n_rigid
    assert field(text, r"^Passive coords\s+(.*)$").startswith(f"{n_nodal}: joints none; flexible nodal {n_nodal} (beam")
    assert "passive coordinates: no joint; nodal coordinates: " + f"{n_nodal} of beam" in text
    assert "beam.n0" not in text  # no list of nodal labels
    assert f"flange: {asm.n_constraints} rows (AttachNodes)" in text  # every constraint with its rows


def test_info_params_lists_name_value_unit_and_description(capsys):
    assert cli.main(["info", CASE_05, "--params"]) == 0
    text = capsys.readouterr().out
    rows = {row.name: row for row in cli.parameter_table(load("05_slider_crank.py"))}
    assert rows["TORQUE"].value == 1.0 and rows["TORQUE"].unit == "N·m" and rows["TORQUE"].settable
    assert rows["CRANK0"].unit == "rad" and rows["CRANK0"].expression == "2 * np.pi / 3"
    assert re.search(r"^   TORQUE\s+1\.0\s+N·m\s+\S", text, re.MULTILINE), text
    assert re.search(r"^   CRANK0\s+2\.0944\s+rad\s+.*\(= 2 \* np\.pi / 3\)$", text, re.MULTILINE), text
    assert text.index("Parameters") < text.index("Coordinates")


def test_new_writes_a_case_template_that_runs_as_it_is(tmp_path, capsys):
    """The template of ``flexbody new`` runs unchanged and meets its own stated expectations: the end
    deflection and first bending frequency of a cantilever against Euler–Bernoulli, within 2 %."""
    path = tmp_path / "17_my_beam"
    assert cli.main(["new", str(path)]) == 0
    case_file = path.with_suffix(".py")
    assert f"wrote {case_file}" in capsys.readouterr().out
    text = case_file.read_text()
    assert "{name}" not in text and "Case 17_my_beam:" in text and '"out/17_my_beam"' in text
    assert cli.main(["run", str(case_file), "--out", str(tmp_path / "out"), "--no-progress"]) == 0
    summary = json.loads((tmp_path / "out" / "summary.txt").read_text())
    assert abs(summary["tip_ratio"] - 1.0) < 0.02 and abs(summary["frequency_ratio"] - 1.0) < 0.02
    for name in ("static/beam.pvd", "vibration/beam.pvd", "tip.png"):
        assert (tmp_path / "out" / name).is_file(), name
    capsys.readouterr()
    assert cli.main(["info", str(case_file), "--params"]) == 0
    rows = cli.parameter_table(cli.load_case(case_file))
    assert all(row.unit and row.doc for row in rows), [row for row in rows if not (row.unit and row.doc)]
    assert cli.main(["new", str(path)]) == 2  # an existing file is never overwritten
    assert "exists" in one_line_error(capsys)
    assert cli.main(["new", str(tmp_path / "my-case")]) == 2
    assert "not a usable case name" in one_line_error(capsys)


# ------------------------------------------------------------------------------------------ run, progress
def test_run_with_set_writes_the_results(tmp_path, capsys):
    out = tmp_path / "run05"
    assert (
        cli.main(["run", CASE_05, "--set", "t_end=0.3", "--set", "torque=2.0", "--out", str(out), "--no-progress"]) == 0
    )
    assert f"results written to {out}" in capsys.readouterr().out
    for name in ("results.npz", "results.json", "summary.txt", "histories.csv"):
        assert (out / name).is_file()
    res = fb.Results.load(out)
    assert res.times[-1] == pytest.approx(0.3) and res.n_steps == 31
    tau = res.histories["tau"]
    np.testing.assert_allclose(tau[:, 0], 2.0)
    np.testing.assert_allclose(tau[:, 1], 0.0)


def test_progress_callback_receives_increasing_times():
    asm = load("04_particle_on_circle.py").build().assemble()
    calls = []
    context = fb.RunContext(progress=lambda t, t0, t_end: calls.append((t, t0, t_end)))
    fb.simulate(asm, 0.05, integrator=fb.RK4(dt=0.01), context=context)
    assert calls, "flexbody.simulate never reported its progress"
    times = np.array([c[0] for c in calls])
    assert np.all(np.diff(times) > 0) and times[-1] == pytest.approx(0.05) and times[0] > 0
    assert all(c[1:] == (0.0, 0.05) for c in calls)


def test_run_shows_a_progress_bar_unless_disabled(tmp_path, capsys):
    assert cli.main(["run", CASE_05, "--set", "t_end=0.2", "--out", str(tmp_path / "a")]) == 0
    err = capsys.readouterr().err
    assert "sim s / wall s" in err and "t = 0.2 / 0.2 s" in err and "100.0 %" in err
    assert err.endswith("\n") and "100.0 %" in err.splitlines()[-1]  # the bar ends its line
    assert cli.main(["run", CASE_05, "--set", "t_end=0.2", "--out", str(tmp_path / "b"), "--no-progress"]) == 0
    assert "sim s / wall s" not in capsys.readouterr().err


def test_progress_bar_ends_each_run_on_its_own_line_and_makes_room_for_log_lines():
    """Two runs give two bar lines, each ended by its run; a log record printed while a bar runs starts on
    a line of its own (the command line's handler filter ends the bar's line first)."""
    import io
    import logging

    stream = io.StringIO()
    bar = progress.ProgressBar(stream=stream, interval=0.0)
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    logger = logging.getLogger("flexbody.test_progress")
    logging.getLogger().addHandler(handler)
    try:
        with cli.app._lines_after(bar):
            bar(0.5, 0.0, 1.0)
            logger.warning("a note from the solver")
            bar(1.0, 0.0, 1.0)
            bar(0.1, 0.0, 0.2)
            bar(0.2, 0.0, 0.2)
        bar.close()
    finally:
        logging.getLogger().removeHandler(handler)
    lines = stream.getvalue().split("\n")
    assert lines[-1] == "" and len(lines) == 5, lines  # every line ended, none left open
    assert "50.0 %" in lines[0] and lines[1] == "WARNING a note from the solver"
    assert "t = 1 / 1 s" in lines[2] and "100.0 %" in lines[2] and "t = 0.2 / 0.2 s" in lines[3]
    assert lines[3].split("\r")[0] == "" and "100.0 %" in lines[3]  # the second run starts a new bar


# ----------------------------------------------------------------------------------------------- sweep
def test_flatten_summary_keeps_scalars_with_dotted_keys():
    summary = {
        "a": 1,
        "b": np.float64(2.5),
        "c": [1, 2],
        "d": {"e": True, "f": {"g": "x"}, "h": np.arange(3)},
        "i": None,
        "j": np.int64(7),
        "k": np.bool_(False),
    }
    flat = cli.flatten_summary(summary)
    assert flat == {"a": 1, "b": 2.5, "d.e": True, "d.f.g": "x", "j": 7, "k": False}
    assert type(flat["b"]) is float and type(flat["j"]) is int and type(flat["k"]) is bool


def test_parse_grid_values():
    case = load("04_particle_on_circle.py")
    assert cli.parse_grid("theta0=1.0,2", case) == ("theta0", [1.0, 2])
    flagship, urdf = load("16_arm_beam_task_control.py"), load("17_urdf_arm_payload.py")
    assert cli.parse_grid("DIVISIONS=(4,1,1),(8,1,1)", flagship) == ("divisions", [(4, 1, 1), (8, 1, 1)])
    assert cli.parse_grid("flange=tool0,wrist_3_link", urdf) == ("flange", ["tool0", "wrist_3_link"])
    with pytest.raises(fb.FlexbodyError, match="mass='light': case '04_particle_on_circle' takes a number for MASS"):
        cli.parse_grid("mass=light,heavy", case)
    with pytest.raises(fb.FlexbodyError, match="values repeat"):
        cli.parse_grid("dt=0.1,0.1", case)


def same(x, y) -> bool:
    if isinstance(x, float) or isinstance(y, float):
        return (math.isnan(x) and math.isnan(y)) or x == pytest.approx(y, rel=1e-12, abs=1e-300)
    return x == y


@pytest.mark.slow  # 15 s for a Dask cluster of two processes; the sweep itself runs fast in the test below
def test_sweep_on_two_workers_equals_the_variants_run_one_by_one(tmp_path, capsys):
    out = tmp_path / "sweep"
    grid = {"theta0": [1.0, 2.0], "radius": [0.5, 1.0]}
    fixed = {"t_end": 3.0, "dt": 0.01}
    argv = [
        "sweep",
        CASE_04,
        "--grid",
        "theta0=1.0,2.0",
        "--grid",
        "radius=0.5,1.0",
        "--set",
        "t_end=3.0",
        "--set",
        "dt=0.01",
        "--workers",
        "2",
        "--out",
        str(out),
    ]
    assert cli.main(argv) == 0
    stdout = capsys.readouterr().out
    data = json.loads((out / "sweep_summary.json").read_text())
    assert data["workers"] == 2 and data["n_variants"] == 4 and data["n_failed"] == 0
    assert data["wall_time_s"] > 0 and f"wall time {data['wall_time_s']:.2f} s" in stdout
    with open(out / "sweep_summary.csv", newline="") as f:
        table = list(csv.DictReader(f))
    assert (
        [r["variant"] for r in table]
        == [r["variant"] for r in data["rows"]]
        == ["theta0=1.0_radius=0.5", "theta0=1.0_radius=1.0", "theta0=2.0_radius=0.5", "theta0=2.0_radius=1.0"]
    )
    assert stdout.count("| theta0=") == 4 and "| variant | THETA0 | RADIUS | status |" in stdout

    case = load("04_particle_on_circle.py")
    for row, csv_row in zip(data["rows"], table):
        params = {"theta0": row["THETA0"], "radius": row["RADIUS"]}
        assert params in [{"theta0": a, "radius": b} for a in grid["theta0"] for b in grid["radius"]]
        assert row["status"] == csv_row["status"] == "ok"
        assert (out / row["variant"] / "summary.txt").is_file()
        direct = case.main(tmp_path / "direct" / row["variant"], **params, **fixed)
        scalars = {k: v for k, v in direct.items() if isinstance(v, (bool, int, float, str))}
        dropped = {k for k, v in direct.items() if isinstance(v, (list, tuple))}
        assert len(scalars) > 10 and dropped and not dropped & set(row)
        for key, value in scalars.items():
            assert same(row[key], value), (row["variant"], key, row[key], value)
            assert same(type(value)(csv_row[key]) if not isinstance(value, bool) else csv_row[key] == "True", value), (
                key,
                csv_row[key],
                value,
            )
        assert np.isfinite(row["period_measured"]) and row["period_relative_error"] < 1e-6


def test_sweep_variant_that_raises_is_a_row_with_its_error(tmp_path, capsys, caplog):
    out = tmp_path / "sweep_err"
    caplog.set_level(logging.DEBUG)
    code = cli.main(
        ["sweep", CASE_04, "--grid", "dt=0.01,-0.01", "--set", "t_end=0.1", "--workers", "1", "--out", str(out)]
    )
    assert code != 0
    chatter = [
        r
        for r in caplog.records
        if r.name.split(".")[0] in ("distributed", "tornado", "bokeh") and r.levelno < logging.WARNING
    ]
    assert not chatter, [r.getMessage() for r in chatter[:5]]  # Dask is quiet unless --verbose
    captured = capsys.readouterr()
    assert "1 of 2 variants failed" in captured.err and "dt=-0.01" in captured.err
    rows = json.loads((out / "sweep_summary.json").read_text())["rows"]
    assert [r["status"] for r in rows] == ["ok", "error"]
    assert rows[0]["n_steps"] == 11 and rows[0]["error"] == ""
    assert "dt must be a number > 0" in rows[1]["error"] and "FlexbodyError" in rows[1]["error"]


# ------------------------------------------------------------------------------------------------ bench
def test_bench_list_lists_the_benchmark_scripts(capsys):
    assert cli.main(["bench", "--list"]) == 0
    out = capsys.readouterr().out
    scripts = sorted((REPO / "tests" / "benchmarks").glob("bench_*.py"))
    assert scripts and len(out.strip().splitlines()) == len(scripts)
    for script, line in zip(scripts, out.strip().splitlines()):
        assert line.split()[0] == script.stem.removeprefix("bench_") and str(script) in line
    assert "exudyn_cantilever" not in out  # helpers that are not bench_*.py


def test_bench_runs_the_named_scripts_with_the_extra_arguments(tmp_path, monkeypatch, capfd):
    folder = tmp_path / "tests" / "benchmarks"
    folder.mkdir(parents=True)
    (folder / "bench_fake.py").write_text('"""A fake benchmark."""\nimport sys\nprint("fake ran with", sys.argv[1:])\n')
    (folder / "bench_failing.py").write_text("import sys\nsys.exit(3)\n")
    monkeypatch.setattr(cli.bench, "benchmark_scripts", lambda root=None: sorted(folder.glob("bench_*.py")))
    assert cli.main(["bench", "fake", "--", "--quick", "--repeat", "1"]) == 0
    out = capfd.readouterr().out
    assert "fake ran with ['--quick', '--repeat', '1']" in out and "bench_fake.py: exit 0" in out
    assert cli.main(["bench", "bench_failing.py", "fake"]) != 0
    captured = capfd.readouterr()
    assert "bench_failing.py: exit 3" in captured.out and "fake ran with []" in captured.out
    assert captured.err.strip() == "flexbody: error: benchmark(s) failed: bench_failing.py"


def test_bench_without_the_repository_is_a_clear_error(tmp_path):
    with pytest.raises(fb.FlexbodyError, match="installed without its repository"):
        cli.benchmark_scripts(tmp_path)


# ---------------------------------------------------------------------------------------- view, export
@pytest.fixture(scope="module")
def flexible_results(tmp_path_factory):
    """Saved results of case 12 (a flexible pendulum) at reduced size: its undamped run, with a .pvd series."""
    out = tmp_path_factory.mktemp("results12")
    assert (
        cli.main(
            ["run", str(CASES / "12_flexible_pendulum.py"), "--set", "t_end=0.02", "--out", str(out), "--no-progress"]
        )
        == 0
    )
    assert (out / "rho1" / "bar.pvd").is_file() and (out / "rho1" / "results.npz").is_file()
    return out / "rho1"


@pytest.mark.parametrize("fmt", ["pvd", "xdmf", "csv"])
def test_export_writes_the_files_it_lists(fmt, flexible_results, tmp_path, capsys):
    out = tmp_path / fmt
    assert cli.main(["export", str(flexible_results), "--format", fmt, "--out", str(out)]) == 0
    text = capsys.readouterr().out
    n = int(field(text, r"wrote (\d+) file"))
    listed = {Path(line.strip()) for line in text.splitlines()[1:] if line.strip()}
    files = {p for p in out.rglob("*") if p.is_file()}
    assert n >= 1 and len(listed) == n and listed == files  # every file written is listed (.h5 too)
    assert all(p.stat().st_size > 0 for p in files)
    if fmt == "xdmf":
        assert {".xdmf", ".h5"} <= {p.suffix for p in listed}


def test_view_writes_a_screenshot_and_an_animation(flexible_results, tmp_path, capsys):
    png = tmp_path / "shot.png"
    assert cli.main(["view", str(flexible_results), "--step", "0", "--out", str(png)]) == 0
    assert png.is_file() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert cli.main(["view", str(flexible_results), "--gif"]) == 0
    gif = flexible_results / "animation.gif"
    assert gif.is_file() and gif.read_bytes()[:4] == b"GIF8"
    assert f"wrote {gif}" in capsys.readouterr().out


def test_view_scale_draws_magnified_displacements(flexible_results, tmp_path, capsys):
    """--scale reaches the renderer: the picture changes with it, the time text states it, a bad value is a
    one-line error naming it."""
    shots = {}
    for scale in (1.0, 50.0):
        shots[scale] = tmp_path / f"scale{scale:g}.png"
        assert cli.main(["view", str(flexible_results), "--scale", str(scale), "--out", str(shots[scale])]) == 0
    assert shots[1.0].read_bytes() != shots[50.0].read_bytes()
    capsys.readouterr()
    assert cli.main(["view", str(flexible_results), "--scale", "0", "--out", str(tmp_path / "x.png")]) == 2
    assert "scale must be a finite number > 0, got 0" in one_line_error(capsys)


def test_view_bad_field_is_a_one_line_error(flexible_results, capsys):
    assert (
        cli.main(["view", str(flexible_results), "--field", "no_such_field", "--out", str(flexible_results / "x.png")])
        != 0
    )
    assert "no_such_field" in one_line_error(capsys)


def test_sweep_records_a_variant_rerun_after_its_worker_died(tmp_path, caplog):
    """A case that kills its worker process the first time it runs (os._exit): Dask restarts the worker and runs
    the variant again; the summary counts the re-run and names the lost process, and a WARNING says so. (One
    variant: with more, those whose results were still on the lost worker are re-run too, and counted.)"""
    case = tmp_path / "dies_once.py"
    case.write_text(
        "import os\nfrom pathlib import Path\n\n"
        "def main(out_dir, x=1.0):\n"
        "    flag = Path(out_dir).parent / 'started'\n"
        "    if not flag.exists():\n"
        "        flag.write_text(str(os.getpid()))\n"
        "        os._exit(3)\n"
        "    return {'y': 2.0 * x}\n"
    )
    out = tmp_path / "sweep"
    with caplog.at_level(logging.WARNING, logger="flexbody"):
        summary = sweep_grid(case, [("x", [2.0])], out_dir=out, workers=1)
    died = int((out / "started").read_text())
    assert [(r["status"], r["y"], r["attempts"]) for r in summary["rows"]] == [("ok", 4.0, 2)]
    assert summary["n_rerun"] == 1 and summary["lost_workers"] == [died]
    assert (
        f"variant x=2.0 was re-run (attempt 2): the worker process(es) {died} that started it were lost" in caplog.text
    )
    assert json.loads((out / "sweep_summary.json").read_text())["lost_workers"] == [died]
