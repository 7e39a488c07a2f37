"""Continuing a run written with ``simulate(..., save_to=directory)`` that was stopped or failed (:func:`resume`).

The directory (layout in :mod:`flexbody.io.results`) holds the parts of the rows recorded so far, ``results.json``
and ``checkpoint.npz``, the integrator's state at the last save; :func:`resume` reads them, checks them against the
model, and continues the run step for step as if it had not been stopped, writing into the same directory.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ..deprecation import renamed_keyword
from ..errors import FlexbodyError
from ..io.results import CHECKPOINT, RESULTS_JSON, RESULTS_NPZ, Results, part_name, read_parts
from ..io.run_writer import RunWriter
from ..system.description import as_assembled
from ..threads import one_blas_thread
from .run_context import NO_CONTEXT, RunContext
from .run_plan import INTEGRATORS, RunPlan
from .runner import RunInputs, Start, execute

if TYPE_CHECKING:
    from ..control.base import Controller
    from ..system import AssembledSystem, System

log = logging.getLogger(__name__)

__all__ = ["resume"]


@one_blas_thread
@renamed_keyword("asm", "model")
def resume(
    model: System | AssembledSystem,
    directory: str | Path,
    t_end: float | None = None,
    *,
    tau: ArrayLike | Callable[..., ArrayLike] | None = None,
    controller: Controller | None = None,
    context: RunContext | None = None,
) -> Results:
    """Continue a run written with ``simulate(..., save_to=directory)`` that was stopped (killed,
    interrupted) or failed, from its last checkpoint to ``t_end``, and return the complete results.

    The integrator, its settings, the formulation, the stabilisation, tolerances, ``record_every`` and
    ``save_every`` are those of the saved run; the run keeps writing into ``directory`` as it goes, and at
    the end writes the complete results there. The returned :class:`Results` holds the saved rows up to
    the checkpoint plus the new ones (times strictly increasing, no step twice); rows written after the
    checkpoint (e.g. up to a failure) are computed again. The continuation repeats the uninterrupted run
    exactly (same inputs, same machine): for RK4 and Adaptive (restarted at every output time anyway) the
    checkpoint holds the step index, t, q, v and the correction count; for generalized-α the integrator
    state (t, q, v, q̈, a, λ), the step-size control, the previous step's input, the statistics and the
    point where the kept Newton iteration matrix was formed, which the resumed run forms again (its
    ``statistics["factorizations"]`` counts that one extra factorization).

    Parameters
    ----------
    model : System, AssembledSystem or model
        The model of the saved run (functions and models are not saved; its ``n_dofs`` is checked).
    directory : str or Path
        The ``save_to`` directory of the run.
    t_end : float, optional
        End time [s] (default: the saved run's), after the checkpoint's time.
    tau, controller :
        The applied forces or controller of the saved run, given again (as for :func:`simulate`): they
        are functions and are not saved. A controller is reset first, so internal state such as an
        integral term restarts from its reset value at the checkpoint (the continuation then differs
        from the uninterrupted run).
    context : RunContext, optional
        Its progress callback is called once per step of the continued run.

    Returns
    -------
    Results
        As :func:`simulate`; ``metadata["resumed_at"]`` lists the checkpoint times resumed from.

    Raises
    ------
    FlexbodyError
        No checkpoint in ``directory``; the run there is already complete; the model's ``n_dofs`` differs
        from the saved run's; the saved integrator cannot resume; ``t_end`` not after the checkpoint.
        Failures of the continued run as in :func:`simulate` (with ``last_good``).
    """
    asm = as_assembled(model, "resume")
    path = Path(directory)
    saved = SavedRun.read(path, int(asm.n_dofs))
    plan = RunPlan.from_metadata(saved.metadata).until(t_end)
    if not (np.isfinite(plan.t_end) and plan.t_end > saved.t):
        raise FlexbodyError(f"resume: t_end must be finite and after the checkpoint's t = {saved.t!r} s, got {t_end!r}")
    inputs = RunInputs.of(tau, controller, "resume")
    writer = RunWriter(path, plan.save_every, saved.state["n_parts"], saved.state["rows"])
    metadata = {key: value for key, value in saved.metadata.items() if key != "statistics"}
    metadata.update(t_end=plan.t_end, resumed_at=[*list(metadata.get("resumed_at", [])), saved.t])
    log.info(
        "resuming the %s run in %s at t = %.6g s (%d rows saved) to t = %.6g s",
        metadata["integrator"],
        path,
        saved.t,
        saved.state["rows"],
        plan.t_end,
    )
    start = Start(
        saved.t,
        saved.arrays["q"],
        saved.arrays["v"],
        checkpoint=(saved.state, saved.arrays),
        rows=saved.rows,
        histories=saved.histories,
    )
    context = NO_CONTEXT if context is None else context
    return execute(plan, asm, inputs, start, writer=writer, context=context, metadata=metadata)


@dataclass(frozen=True)
class SavedRun:
    """A run saved as it went, read back: its checkpoint (``state`` scalars and ``arrays``), its ``metadata``
    (``results.json``), and the ``rows`` and ``histories`` its parts hold up to the checkpoint (time ``t``)."""

    state: dict
    arrays: dict
    metadata: dict
    rows: dict
    histories: dict

    @property
    def t(self) -> float:
        """The checkpoint's time [s]."""
        return float(self.state["t"])

    @classmethod
    def read(cls, path: Path, n_dofs: int) -> SavedRun:
        """The run saved in ``path``; FlexbodyError when it is complete, has no checkpoint, cannot be read, is
        inconsistent, was made by an integrator that cannot resume or has another number of coordinates."""
        if (path / RESULTS_NPZ).exists():
            raise FlexbodyError(
                f"resume: the run in {str(path)!r} is already complete ({RESULTS_NPZ} exists); "
                "read it with Results.load"
            )
        if not (path / CHECKPOINT).is_file():
            raise FlexbodyError(
                f"resume: no checkpoint ({CHECKPOINT}) in {str(path)!r}: not a directory written "
                f"by simulate(..., save_to=...), or stopped before its first save"
            )
        try:
            with np.load(path / CHECKPOINT) as data:
                arrays = {key: data[key] for key in data.files}
            state = json.loads(str(arrays.pop("state")))
            metadata = json.loads((path / RESULTS_JSON).read_text())["metadata"]
        except (OSError, ValueError, KeyError) as exc:
            raise FlexbodyError(f"resume: cannot read the checkpoint in {str(path)!r}: {exc}") from exc
        name = metadata.get("integrator")
        if name not in INTEGRATORS or state.get("integrator") != name:
            raise FlexbodyError(
                f"resume: the run in {str(path)!r} used integrator {name!r} (checkpoint of "
                f"{state.get('integrator')!r}), which cannot resume; resumable: {sorted(INTEGRATORS)}"
            )
        if arrays["q"].shape != (n_dofs,):
            raise FlexbodyError(
                f"resume: the model has n_dofs = {n_dofs} but the run in {str(path)!r} has "
                f"{arrays['q'].size} coordinates; give the model of the saved run"
            )
        try:
            rows, histories = read_parts(path, [part_name(i) for i in range(1, state["n_parts"] + 1)], n_dofs)
        except (OSError, ValueError, KeyError) as exc:
            raise FlexbodyError(f"resume: cannot read the parts in {str(path)!r}: {exc}") from exc
        if len(rows["times"]) != state["rows"]:
            raise FlexbodyError(
                f"resume: {str(path)!r} is inconsistent: the checkpoint continues {state['rows']} "
                f"rows, its parts hold {len(rows['times'])}"
            )
        return cls(state, arrays, metadata, rows, histories)
