"""The one runner of a :class:`~flexbody.solvers.run_plan.RunPlan`: :func:`execute` runs any plan — fresh or from a
checkpoint, for :func:`flexbody.simulate` and :func:`flexbody.resume` alike — on a model with its inputs
(:class:`RunInputs`: the applied forces or a controller), recording into a
:class:`~flexbody.solvers.recorder.Recorder` and handing what is due to the writer it is given (an observer: the
runner writes no file itself). On a failure the rows recorded so far are attached to the error (and written).

The stepping loops are those of the integrators: RK4 and adaptive Runge–Kutta (:mod:`flexbody.solvers.explicit`) and
generalized-α (:mod:`flexbody.solvers.alpha_run`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import FlexbodyError
from ..io.results import Results
from ..io.run_writer import RunWriter
from .alpha_run import AlphaRun
from .explicit import RK4, Dynamics, Run, run_adaptive, run_rk4, tau_function
from .moreau_jean import MoreauJean, run_moreau_jean
from .recorder import EnergyWatch, Recorder
from .run_context import NO_CONTEXT, RunContext
from .run_plan import RunPlan

log = logging.getLogger(__name__)

__all__ = ["RunInputs", "Start", "execute"]


@dataclass(frozen=True)
class RunInputs:
    """The inputs of a run: applied forces ``tau`` (None, an array (n,) or a callable) or a ``controller``
    (a :class:`flexbody.control.Controller`, whose actuator inputs enter as Sᵀτ_k)."""

    tau: Any = None
    controller: Any = None

    @classmethod
    def of(cls, tau: Any, controller: Any, caller: str) -> RunInputs:
        """The inputs of ``caller``'s arguments (a Controller given as ``tau`` is recognised); the controller is
        reset. FlexbodyError for both, or for a controller that is not one."""
        if controller is not None:
            if tau is not None:
                raise FlexbodyError(f"{caller}: give either tau or controller, not both")
            if getattr(controller, "outputs", None) != "actuators":
                raise FlexbodyError(f"{caller}: controller must be a flexbody.control.Controller, got {controller!r}")
            tau = controller
        controller = tau if getattr(tau, "outputs", None) == "actuators" else None
        if controller is not None and hasattr(controller, "reset"):
            controller.reset()
        return cls(tau, controller)

    def held_zero(self) -> bool:
        """Whether the applied forces are none or zero (no controller)."""
        return self.controller is None and (
            self.tau is None or (not callable(self.tau) and not np.any(np.asarray(self.tau, dtype=float)))
        )

    def energy_watch(self, model: Any, rows: dict | None = None) -> EnergyWatch | None:
        """The energy watch of a run without inputs (τ None or zero, no controller, no user force without a
        potential), continued after ``rows`` when resumed; None for other runs, whose inputs may add energy."""
        forces = getattr(getattr(model, "forces", None), "elements", ())
        unknown_work = any(
            getattr(f, "kind", None) == "generalized_force" and getattr(f, "_potential", None) is None for f in forces
        )
        if not self.held_zero() or unknown_work or not hasattr(model, "energy"):
            return None
        watch = EnergyWatch()
        if rows is not None:
            watch.restore(rows)
        return watch

    def labelled(self, metadata: dict, model: Any) -> dict:
        """``metadata`` with the model's labels and units and the controller's name, labels and task units
        ("coordinate_units", "row_units" (of φ), "actuated_units", "task_units"; see docs/conventions.md)."""
        for key in ("coordinate_labels", "row_labels", "actuated_labels", "coordinate_units", "row_units"):
            if hasattr(model, key):
                metadata[key] = list(getattr(model, key))
        if hasattr(model, "actuated_units"):
            metadata["actuated_units"] = list(model.actuated_units)
        controller = self.controller
        if controller is not None:
            metadata.update(controller=type(controller).__name__, **getattr(controller, "labels", {}))
            task = getattr(controller, "task", None)
            if task is not None and hasattr(task, "units_in"):
                units = task.units_in(model) if hasattr(model, "coordinate_units") else task.units
                metadata["task_units"] = list(units)
        return metadata


@dataclass(frozen=True)
class Start:
    """Where a run starts: the state (t, q, v) with its workspace when the start made one (``workspace``), or a
    checkpoint of a run saved as it went (``checkpoint`` = (scalars, arrays) of the integrator, ``rows`` and
    ``histories`` recorded up to it); ``changes``: what making the start consistent changed, ``violations``: how a
    start run as given violates the rows (the Results' ``metadata["start_corrections"]``, ``["start_violations"]``)."""

    t: float
    q: np.ndarray
    v: np.ndarray
    workspace: Any = None
    checkpoint: tuple[dict, dict] | None = None
    rows: dict | None = None
    histories: dict | None = None
    changes: dict = field(default_factory=dict)  # what making the start consistent changed (start_changes)
    violations: dict = field(default_factory=dict)  # how a start run as given violates the rows (start_changes)


def execute(
    plan: RunPlan,
    model: Any,
    inputs: RunInputs,
    start: Start,
    *,
    writer: RunWriter | None = None,
    context: RunContext = NO_CONTEXT,
    metadata: dict | None = None,
) -> Results:
    """Run ``plan`` on ``model`` with ``inputs`` from ``start``, handing the rows to ``writer`` (None: nothing
    written); the Results of the run, whose metadata are the plan's, the labels and ``metadata`` (a resumed run's
    saved ones). On a failure the rows recorded so far are written and attached to the error as ``last_good``."""
    recorded = {**plan.metadata(saving=writer is not None), **(metadata or {})}
    if start.changes:
        recorded["start_corrections"] = dict(start.changes)
    if start.violations:
        recorded["start_violations"] = dict(start.violations)
    recorder = Recorder(model, plan.tolerances, plan.singular_tol, inputs.labelled(recorded, model), inputs.controller)
    recorder.t_last = start.t
    if start.rows is not None:
        recorder.restore(start.rows, start.histories or {}, start.checkpoint[0] if start.checkpoint else {})
        if writer is not None:
            writer.forget_after_checkpoint(recorder)
    recorder.energy_watch = inputs.energy_watch(model, recorder.rows if start.rows is not None else None)
    return _recorded(
        recorder, writer, lambda: _steps(plan, model, inputs, start, recorder, writer=writer, context=context)
    )


def _steps(plan, model, inputs, start, recorder, *, writer, context) -> None:
    """The stepping loop of the plan's integrator, from ``start``."""
    _check_contacts(plan, model)
    if plan.implicit:
        tau_at = tau_function(inputs.tau, model)
        alpha = AlphaRun(
            model, plan, tau_at, recorder, start=start, controller=inputs.controller, writer=writer, context=context
        )
        recorder.metadata["statistics"] = alpha.run()
        return
    rtol, atol = plan.tolerances
    dynamics = Dynamics(model, inputs.tau, formulation=plan.formulation, baumgarte=plan.baumgarte, rtol=rtol, atol=atol)
    output_dt = None
    if not isinstance(plan.integrator, (RK4, MoreauJean)):
        saved = start.checkpoint[0].get("output_dt") if start.checkpoint else None
        output_dt = saved or plan.integrator.output_dt or (plan.t_end - plan.t0) / 100.0
    run = Run(
        asm=model,
        dynamics=dynamics,
        recorder=recorder,
        correction=plan.correction,
        tolerances=plan.tolerances,
        record_every=plan.record_every,
        saver=writer,
        output_dt=output_dt,
        integrator=type(plan.integrator).__name__,
        report=context.report,
    )
    loops: dict[type, Callable] = {RK4: run_rk4, MoreauJean: run_moreau_jean}
    loop = loops.get(type(plan.integrator), run_adaptive)
    if start.checkpoint is not None:
        state = start.checkpoint[0]
        at = {"k0": int(state["k"]), "t": float(state["t"]), "corrections": int(state["corrections"])}
        if isinstance(plan.integrator, MoreauJean):
            at["warm"] = start.checkpoint[1].get("contact_impulses")
    else:
        at = {"ws": start.workspace}
    loop(run, plan.integrator, start.q, start.v, t0=plan.t0, t_end=plan.t_end, **at)
    log.info(
        "simulated to t = %.6g s: %d steps recorded, %d dynamics evaluations, %d events",
        plan.t_end,
        len(recorder.rows["t"]),
        dynamics.n_evaluations,
        len(recorder.events),
    )


def _check_contacts(plan, model) -> None:
    """FlexbodyError for a model with unilateral contacts run by a smooth integrator, which cannot take them."""
    contacts = [c.name for c in getattr(model, "contacts", ())]
    if contacts and not isinstance(plan.integrator, MoreauJean):
        named = contacts[:3] + ([f"… ({len(contacts)} in all)"] if len(contacts) > 3 else [])
        raise FlexbodyError(
            f"simulate: the unilateral contacts {named} need the nonsmooth stepper "
            f"fb.MoreauJean(dt=...); {type(plan.integrator).__name__} integrates smooth equations, for which "
            f"fb.CompliantContact gives contact as a force"
        )


def _recorded(recorder: Recorder, writer: RunWriter | None, steps: Callable[[], None]) -> Results:
    """Run ``steps``; on failure attach (and write) what was recorded, else return (and write) the results."""
    try:
        steps()
    except Exception as exc:  # flexbody's errors and those of user code (forces, controllers, inputs) alike
        _attach_partial(recorder, exc)
        if writer is not None:
            writer.fail(recorder)
        raise
    except KeyboardInterrupt:
        if writer is not None:
            writer.fail(recorder)
        raise
    results = recorder.results()
    if writer is not None:
        writer.finish(results)
    return results


def _attach_partial(recorder: Recorder, exc: Exception) -> None:
    """Log the failure as an event and attach the results recorded so far to ``exc.last_good`` (a state
    the error carried before moves to ``exc.last_state``); an exception raised by user code keeps its type and
    gains the attribute too."""
    recorder.events.append({"t": recorder.t_last, "kind": "failure", "error": type(exc).__name__, "message": str(exc)})
    partial = recorder.results()
    previous = getattr(exc, "last_good", None)
    try:
        if previous is not None and not isinstance(previous, Results):
            exc.last_state = previous  # type: ignore[attr-defined]  # any exception's attribute
        exc.last_good = partial  # type: ignore[attr-defined]
    except AttributeError:  # an exception type without attributes (rare): the writer still keeps the rows
        log.warning("simulation stopped: %s (%d steps recorded; the exception cannot carry them)", exc, partial.n_steps)
    log.info("simulation stopped at t = %.6g s: %s (%d steps recorded)", recorder.t_last, exc, partial.n_steps)
