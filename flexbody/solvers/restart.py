"""Restarting saved runs on request: ``simulate(..., save_to=directory, context=RunContext.resuming())``
continues the run saved in ``directory`` instead of starting it again (:class:`flexbody.RunContext`).

For each such call, what ``directory`` holds decides:

- a stopped run (``checkpoint.npz``, no ``results.npz``): :func:`flexbody.solvers.simulation.resume` continues
  it from its checkpoint to the call's ``t_end``;
- a complete run (``results.npz``): it is loaded and returned as it is, with ``system`` set to the model;
- nothing saved (or no checkpoint yet): the run starts from the beginning.

The saved run must have been made with the same settings as the call (integrator and its settings, t0,
record_every, recorded fields, formulation, number of coordinates); otherwise a FlexbodyError names the
first difference, and nothing on disk is touched. Models, loads and controllers are not saved: the caller
must build the same ones (``flexbody run --resume`` re-runs the case with the parameters it saved).

This is how ``flexbody run CASE --resume`` continues a killed case: the case passes the context it is given
to its runs.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import FlexbodyError
from ..io.results import CHECKPOINT, RESULTS_JSON, RESULTS_NPZ, Results

log = logging.getLogger(__name__)


@dataclass
class RestartLog:
    """What the runs of a resuming :class:`~flexbody.RunContext` did, one entry per ``simulate(save_to=…)`` call:
    ``resumed`` [(directory, checkpoint time [s])], ``reused`` [directory], ``started`` [directory]."""

    resumed: list = field(default_factory=list)
    reused: list = field(default_factory=list)
    started: list = field(default_factory=list)


_COMPARED = ("integrator", "integrator_settings", "t0", "record_every", "formulation")


def continue_saved(asm, directory, plan, *, resume, context, inputs) -> Results | None:
    """The results of the run saved in ``directory`` (continued or reused), or None to start afresh.

    ``plan`` is the requested run's :class:`~flexbody.solvers.run_plan.RunPlan` (its metadata are compared with
    the saved run's: "integrator", "integrator_settings", "t0", "record_every", "formulation", "fields");
    ``resume`` is :func:`flexbody.resume`, which continues a stopped run with the ``inputs`` (a
    :class:`~flexbody.solvers.runner.RunInputs`); ``context`` (a :class:`flexbody.RunContext`) holds the log of
    what was done and the progress callback of the continued run."""
    record, t_end, metadata = context.restarts, plan.t_end, plan.metadata()

    path = Path(directory)
    complete, stopped = (path / RESULTS_NPZ).is_file(), (path / CHECKPOINT).is_file()
    if not (complete or stopped):
        log.info("nothing to resume in %s: the run starts from the beginning", path)
        record.started.append(str(path))
        return None
    if complete:
        results = Results.load(path)
        _check_same_run(path, results.metadata, metadata, int(asm.n_dofs), results.q.shape[1])
        if not np.isclose(results.times[-1], t_end, rtol=0.0, atol=1e-12 * max(1.0, abs(t_end))):
            raise FlexbodyError(
                f"resume: the complete run in {str(path)!r} ends at t = {results.times[-1]:.9g} s, "
                f"not at the requested t_end = {t_end:.9g} s; run without --resume to redo it"
            )
        results.system = asm
        log.info("the run in %s is already complete: its results are reused", path)
        record.reused.append(str(path))
        return results
    _check_same_run(path, _saved_metadata(path), metadata, int(asm.n_dofs), _checkpoint_n_dofs(path))
    tau = None if inputs.controller is not None else inputs.tau
    results = resume(asm, path, t_end, tau=tau, controller=inputs.controller, context=context)
    record.resumed.append((str(path), float(results.metadata["resumed_at"][-1])))
    return results


def _saved_metadata(path: Path) -> dict:
    try:
        return json.loads((path / RESULTS_JSON).read_text())["metadata"]
    except (OSError, ValueError, KeyError) as exc:
        raise FlexbodyError(f"resume: cannot read the saved run's settings in {str(path)!r}: {exc}") from exc


def _checkpoint_n_dofs(path: Path) -> int:
    try:
        with np.load(path / CHECKPOINT) as data:
            return int(data["q"].shape[0])
    except (OSError, ValueError, KeyError, IndexError) as exc:
        raise FlexbodyError(f"resume: cannot read the saved run in {str(path)!r}: {exc}") from exc


def _check_same_run(path: Path, saved: dict, requested: dict, n_dofs: int, saved_n_dofs: int) -> None:
    """FlexbodyError naming the first setting in which the saved run differs from the requested one."""
    if saved_n_dofs != n_dofs:
        raise FlexbodyError(
            f"resume: the run in {str(path)!r} has {saved_n_dofs} coordinates, the model "
            f"{n_dofs}: build the model of the saved run (same parameters) or run without --resume"
        )
    for key in (*_COMPARED, "fields"):
        was, now = saved.get(key), requested.get(key)
        if key == "fields":
            was, now = bool(was), bool(now)
        if json.dumps(was, sort_keys=True) != json.dumps(now, sort_keys=True):
            raise FlexbodyError(
                f"resume: the run in {str(path)!r} was made with {key} = {was!r}, this one "
                f"asks for {now!r}: give the saved run's parameters or run without --resume"
            )
