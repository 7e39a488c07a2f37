"""The command line's progress bar (flexbody/progress.py): what a line shows from a run's first report on."""

import io

from flexbody import progress


def _bar_with_clock(monkeypatch, times):
    """A bar drawing every report on a string stream, reading wall time from ``times`` in turn."""
    clock = iter(times)
    monkeypatch.setattr(progress.time, "perf_counter", lambda: next(clock))
    stream = io.StringIO()
    return progress.ProgressBar(stream=stream, interval=0.0), stream


def test_first_report_shows_no_speed_and_no_nan(monkeypatch):
    """The first report of a run has no wall time behind it: no speed (it printed "nan sim s / wall s")."""
    bar, stream = _bar_with_clock(monkeypatch, [10.0])
    bar(0.01, 0.0, 1.0)
    line = stream.getvalue()
    assert "t = 0.01 / 1 s" in line and "1.0 %" in line
    assert "nan" not in line.lower() and "sim s / wall s" not in line


def test_speed_appears_once_wall_time_has_passed(monkeypatch):
    bar, stream = _bar_with_clock(monkeypatch, [10.0, 10.0, 12.0])
    bar(0.0, 0.0, 1.0)
    bar(0.0, 0.0, 1.0)  # still no wall time: still no speed
    bar(1.0, 0.0, 1.0)  # 1 simulated s in 2 wall s, the run's end
    lines = stream.getvalue().split("\r")
    assert "sim s / wall s" not in lines[1] + lines[2] and "nan" not in stream.getvalue().lower()
    assert "0.5 sim s / wall s, 2.0 s" in lines[3] and lines[3].endswith("\n")


def test_a_first_report_at_the_end_time_ends_the_line_without_nan(monkeypatch):
    bar, stream = _bar_with_clock(monkeypatch, [5.0])
    bar(2.0, 0.0, 2.0)
    assert stream.getvalue().endswith("\n") and "100.0 %" in stream.getvalue()
    assert "nan" not in stream.getvalue().lower()
