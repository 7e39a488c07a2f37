"""Progress of long runs: a text bar for the command line. A run reports its progress to the callback of
the :class:`flexbody.RunContext` it is given (``simulate(..., context=RunContext(progress=bar))``); nothing
is installed globally.
"""

from __future__ import annotations

import sys
import time

__all__ = ["ProgressBar"]


class ProgressBar:
    """A one-line text bar per run: simulated time, fraction done, speed (simulated s per wall s, shown once
    wall time has passed since the run's first report) and wall time, redrawn at most every ``interval`` wall
    seconds on ``stream`` (default stderr).

    A run that reaches its end time ends its line, so what is printed next (the next run's bar, a summary)
    starts on a line of its own; :meth:`break_line` ends a bar that is still running (call it before
    printing something else on the same stream — the command line does it for every log record)."""

    def __init__(self, stream=None, width: int = 30, interval: float = 0.5):
        self.stream = stream or sys.stderr
        self.width, self.interval = width, interval
        self.start: float | None = None
        self.last_draw = -float("inf")
        self.shown = False

    def __call__(self, t: float, t0: float, t_end: float) -> None:
        now = time.perf_counter()
        if self.start is None:  # the first report of a run
            self.start, self.last_draw = now, -float("inf")
        done = t >= t_end - 1e-12 * max(1.0, abs(t_end))
        if now - self.last_draw < self.interval and not done:
            return
        self.last_draw = now
        span = max(t_end - t0, 1e-300)
        fraction = min(max((t - t0) / span, 0.0), 1.0)
        wall = now - self.start
        # the speed once wall time has passed (the first report of a run has none: no 0/0 on the screen)
        speed = f"{(t - t0) / wall:.3g} sim s / wall s, " if wall > 0 else ""
        filled = round(fraction * self.width)
        self.stream.write(
            f"\r[{'#' * filled}{'.' * (self.width - filled)}] t = {t:.4g} / {t_end:.4g} s "
            f"({100 * fraction:5.1f} %), {speed}{wall:.1f} s"
        )
        self.shown = True
        if done:
            self.break_line()
            self.start = None  # a next run starts its own bar and clock
        self.stream.flush()

    def break_line(self) -> None:
        """End the bar's line if one is on the screen."""
        if self.shown:
            self.stream.write("\n")
            self.stream.flush()
            self.shown = False

    def close(self) -> None:
        """End the bar's line (the run may have stopped before its end time)."""
        self.break_line()
