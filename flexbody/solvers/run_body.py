"""What :func:`flexbody.solvers.simulation.simulate` and :func:`flexbody.solvers.resumption.resume` share: a run's
inputs (a controller becomes the applied forces), its metadata labels and units, the energy watch of runs without
inputs, the stepping loop as a function of no arguments (RK4 or adaptive of :mod:`flexbody.solvers.explicit`,
generalized-α of :mod:`flexbody.solvers.generalized_alpha`), and its execution, which attaches (and writes) what was
recorded when the run fails.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import numpy as np

from ..errors import FlexbodyError
from ..io.results import Results
from ..io.run_writer import RunWriter
from .explicit import RK4, Adaptive, Dynamics, Run, run_adaptive, run_rk4, tau_function
from .recorder import EnergyWatch, Recorder
from .run_context import RunContext

log = logging.getLogger(__name__)


def _execute(recorder: Recorder, saver: RunWriter | None, body: Callable[[], None]) -> Results:
    """Run ``body`` (the stepping loop); on failure attach (and write) what was recorded, else return
    (and write) the results."""
    try:
        body()
    except FlexbodyError as exc:
        _attach_partial(recorder, exc)
        if saver is not None:
            saver.fail(recorder)
        raise
    except KeyboardInterrupt:
        if saver is not None:
            saver.fail(recorder)
        raise
    results = recorder.results()
    if saver is not None:
        saver.finish(results)
    return results


def _attach_partial(recorder: Recorder, exc: FlexbodyError) -> None:
    """Log the failure as an event and attach the results recorded so far to ``exc.last_good`` (a state
    the error carried before moves to ``exc.last_state``)."""
    recorder.events.append({"t": recorder.t_last, "kind": "failure", "error": type(exc).__name__, "message": str(exc)})
    partial = recorder.results()
    if getattr(exc, "last_good", None) is not None and not isinstance(exc.last_good, Results):
        exc.last_state = exc.last_good
    exc.last_good = partial
    log.info("simulation stopped at t = %.6g s: %s (%d steps recorded)", recorder.t_last, exc, partial.n_steps)


def _control_inputs(tau, controller, caller: str):
    """(tau, controller): the controller (if any) becomes tau; a Controller given as tau is recognised;
    the controller is reset."""
    if controller is not None:
        if tau is not None:
            raise FlexbodyError(f"{caller}: give either tau or controller, not both")
        if getattr(controller, "outputs", None) != "actuators":
            raise FlexbodyError(f"{caller}: controller must be a flexbody.control.Controller, got {controller!r}")
        tau = controller
    controller = tau if getattr(tau, "outputs", None) == "actuators" else None
    if controller is not None and hasattr(controller, "reset"):
        controller.reset()
    return tau, controller


def _with_labels(metadata: dict, asm, controller) -> dict:
    """Run metadata plus the model's labels and units and the controller's name, labels and task units
    ("coordinate_units", "row_units" (of φ), "actuated_units", "task_units"; see docs/conventions.md)."""
    for key in (
        "coordinate_labels",
        "row_labels",
        "actuated_labels",
        "coordinate_units",
        "row_units",
        "actuated_units",
    ):
        if hasattr(asm, key):
            metadata[key] = list(getattr(asm, key))
    if controller is not None:
        metadata.update(controller=type(controller).__name__, **getattr(controller, "labels", {}))
        task = getattr(controller, "task", None)
        if task is not None and hasattr(task, "units_in"):
            metadata["task_units"] = list(task.units_in(asm) if hasattr(asm, "coordinate_units") else task.units)
    return metadata


def _energy_watch(asm, tau, controller, rows: dict | None = None) -> EnergyWatch | None:
    """The energy watch of a run without inputs (no controller, τ None or zero, no user force without a potential),
    continued after ``rows`` when resumed; None for other runs, whose inputs may add energy."""
    held_zero = tau is None or (not callable(tau) and not np.any(np.asarray(tau, dtype=float)))
    forces = getattr(getattr(asm, "forces", None), "elements", ())
    unknown_work = any(
        getattr(f, "kind", None) == "generalized_force" and getattr(f, "_potential", None) is None for f in forces
    )
    if controller is not None or not held_zero or unknown_work or not hasattr(asm, "energy"):
        return None
    watch = EnergyWatch()
    if rows is not None:
        watch.restore(rows)
    return watch


def _explicit_body(
    asm,
    integrator,
    tau,
    formulation,
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
    start: dict,
    context: RunContext,
) -> Callable[[], None]:
    """The RK4 or adaptive loop from (t0, q, v), or from a checkpoint's ``start`` (k, t, corrections,
    output_dt), as a function of no arguments."""
    dynamics = Dynamics(asm, tau, formulation, baumgarte, *tolerances)
    output_dt = None
    if isinstance(integrator, Adaptive):
        output_dt = start.get("output_dt") or integrator.output_dt or (t_end - t0) / 100.0
    run = Run(
        asm,
        dynamics,
        recorder,
        correction,
        tolerances,
        record_every,
        saver,
        output_dt,
        type(integrator).__name__,
        context.report,
    )
    loop = run_rk4 if isinstance(integrator, RK4) else run_adaptive
    kw = (
        {"k0": int(start["k"]), "t": float(start["t"]), "corrections": int(start["corrections"])}
        if "k" in start
        else {"ws": start.get("workspace")}
    )

    def body():
        loop(run, integrator, q, v, t0, t_end, **kw)
        log.info(
            "simulated to t = %.6g s: %d steps recorded, %d dynamics evaluations, %d events",
            t_end,
            len(recorder.rows["t"]),
            dynamics.n_evaluations,
            len(recorder.events),
        )

    return body


def _implicit_body(
    asm, t_end, settings, tau, controller, recorder, saver, q, v, t0, record_every, start, context, workspace=None
):
    """The generalized-α loop as a function of no arguments; its statistics go to the metadata."""
    from .generalized_alpha import simulate_implicit

    tau_at = tau_function(tau, asm)

    def body():
        recorder.metadata["statistics"] = simulate_implicit(
            asm,
            float(t_end),
            settings,
            tau_at,
            recorder,
            q=q,
            v=v,
            t0=float(t0),
            record_every=record_every,
            controller=controller,
            saver=saver,
            start=start,
            report=context.report,
            workspace=workspace,
        )

    return body
