"""Continuing a run written with ``simulate(..., save_to=directory)`` that was stopped or failed (:func:`resume`).

The directory (layout in :mod:`flexbody.io.results`) holds the parts of the rows recorded so far, ``results.json``
and ``checkpoint.npz``, the integrator's state at the last save; :func:`resume` reads them, checks them against the
model, and continues the run step for step as if it had not been stopped, writing into the same directory.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ..errors import FlexbodyError
from ..io.results import CHECKPOINT, RESULTS_JSON, RESULTS_NPZ, Results, part_name, read_parts
from ..io.run_writer import RunWriter
from ..linalg.rank import resolve_tolerances as _tolerances
from ..system.description import as_assembled
from ..threads import one_blas_thread
from .explicit import RK4, Adaptive
from .recorder import Recorder
from .run_body import _control_inputs, _energy_watch, _execute, _explicit_body, _implicit_body, _with_labels
from .run_context import NO_CONTEXT, RunContext
from .stabilization import Baumgarte, PositionCorrection

if TYPE_CHECKING:
    from ..control.base import Controller
    from ..system import AssembledSystem, System

log = logging.getLogger(__name__)

__all__ = ["resume"]


@one_blas_thread
def resume(
    asm: System | AssembledSystem,
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
    asm : System, AssembledSystem or model
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
    from .alpha_settings import GeneralizedAlpha

    asm = as_assembled(asm, "resume")
    context = NO_CONTEXT if context is None else context
    path = Path(directory)
    if (path / RESULTS_NPZ).exists():
        raise FlexbodyError(
            f"resume: the run in {str(path)!r} is already complete ({RESULTS_NPZ} exists); read it with Results.load"
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
    kinds = {"RK4": RK4, "Adaptive": Adaptive, "GeneralizedAlpha": GeneralizedAlpha}
    name = metadata.get("integrator")
    if name not in kinds or state.get("integrator") != name:
        raise FlexbodyError(
            f"resume: the run in {str(path)!r} used integrator {name!r} (checkpoint of "
            f"{state.get('integrator')!r}), which cannot resume; resumable: {sorted(kinds)}"
        )
    integrator = kinds[name](**metadata["integrator_settings"])
    n = int(asm.n_dofs)
    if arrays["q"].shape != (n,):
        raise FlexbodyError(
            f"resume: the model has n_dofs = {n} but the run in {str(path)!r} has "
            f"{arrays['q'].size} coordinates; give the model of the saved run"
        )
    t_start = float(state["t"])
    t_end = float(metadata["t_end"] if t_end is None else t_end)
    if not (np.isfinite(t_end) and t_end > t_start):
        raise FlexbodyError(f"resume: t_end must be finite and after the checkpoint's t = {t_start!r} s, got {t_end!r}")
    tau, controller = _control_inputs(tau, controller, "resume")
    try:
        rows, histories = read_parts(path, [part_name(i) for i in range(1, state["n_parts"] + 1)], n)
    except (OSError, ValueError, KeyError) as exc:
        raise FlexbodyError(f"resume: cannot read the parts in {str(path)!r}: {exc}") from exc
    if len(rows["times"]) != state["rows"]:
        raise FlexbodyError(
            f"resume: {str(path)!r} is inconsistent: the checkpoint continues {state['rows']} "
            f"rows, its parts hold {len(rows['times'])}"
        )
    saver = RunWriter(path, metadata.get("save_every", 50), state["n_parts"], state["rows"])
    metadata.pop("statistics", None)
    metadata.update(t_end=t_end, resumed_at=[*list(metadata.get("resumed_at", [])), t_start])
    t0, record_every = float(metadata["t0"]), int(metadata["record_every"])
    q, v = arrays["q"], arrays["v"]
    log.info(
        "resuming the %s run in %s at t = %.6g s (%d rows saved) to t = %.6g s",
        name,
        path,
        t_start,
        state["rows"],
        t_end,
    )
    if isinstance(integrator, GeneralizedAlpha):
        tolerances = _tolerances(None, None)
        recorder = Recorder(asm, tolerances, None, _with_labels(metadata, asm, controller), controller)
        recorder.restore(rows, histories, state)
        saver.forget_after_checkpoint(recorder)
        recorder.energy_watch = _energy_watch(asm, tau, controller, recorder.rows)
        body = _implicit_body(
            asm, t_end, integrator, tau, controller, recorder, saver, q, v, t0, record_every, (state, arrays), context
        )
    else:
        tolerances = _tolerances(metadata["rtol"], metadata["atol"])
        pc, bg = metadata.get("position_correction"), metadata.get("baumgarte")
        correction = PositionCorrection(**pc) if pc else None
        baumgarte = Baumgarte(**bg) if bg else None
        recorder = Recorder(
            asm, tolerances, metadata.get("singular_tol"), _with_labels(metadata, asm, controller), controller
        )
        recorder.restore(rows, histories, state)
        saver.forget_after_checkpoint(recorder)
        recorder.energy_watch = _energy_watch(asm, tau, controller, recorder.rows)
        body = _explicit_body(
            asm,
            integrator,
            tau,
            metadata["formulation"],
            correction,
            baumgarte,
            tolerances,
            recorder,
            record_every,
            saver,
            q,
            v,
            t0,
            t_end,
            state,
            context,
        )
    return _execute(recorder, saver, body)
