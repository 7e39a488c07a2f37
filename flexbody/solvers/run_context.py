"""What the caller of a run hands to it explicitly: a progress callback and whether runs saved before are
continued. ``flexbody run`` makes one and passes it to the case's ``main(out_dir, context=...)``, which
passes it on to every :func:`flexbody.simulate` it calls; nothing is installed globally.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .restart import RestartLog

__all__ = ["RunContext"]


@dataclass(frozen=True)
class RunContext:
    """The context of the runs of one case (or one script).

    Attributes
    ----------
    progress : callable ``(t, t0, t_end) -> None`` or None
        Called once per step of every run with its simulated time [s] and interval (e.g. a
        :class:`flexbody.progress.ProgressBar`).
    restarts : RestartLog or None
        When given, ``simulate(..., save_to=d)`` continues the stopped run saved in ``d`` from its
        checkpoint, reuses a complete one, or starts afresh, and records which in this log
        (``flexbody run --resume``; :mod:`flexbody.solvers.restart`).
    """

    progress: Callable[[float, float, float], None] | None = None
    restarts: RestartLog | None = None

    def report(self, t: float, t0: float, t_end: float) -> None:
        """Tell the progress callback (if any) that a run reached time t [s] of [t0, t_end]."""
        if self.progress is not None:
            self.progress(float(t), float(t0), float(t_end))

    @classmethod
    def resuming(cls, progress: Callable[[float, float, float], None] | None = None) -> RunContext:
        """A context whose runs continue or reuse what their ``save_to`` directories hold."""
        return cls(progress=progress, restarts=RestartLog())


NO_CONTEXT = RunContext()
"""The context of a run nobody watches: no progress, nothing resumed."""
