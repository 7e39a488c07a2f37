"""Explicit time integration of constrained rigid multibody systems with constraint stabilisation.

The state (q, v) is integrated with accelerations from the constrained forward dynamics
τ = M a + h − Φᵀλ, Φ a + bias = 0 (:func:`flexbody.dynamics.forward`, any formulation) [AG-25]:
q̇ = v, v̇ = a [AG-36]. Integration drift of φ(q) is removed by

* Newton–Raphson position correction after every accepted step, q ← q − Φ⁺φ(q) iterated until
  ‖φ‖ ≤ tol [AG-37], followed by the velocity projection v ← v − Φ⁺(Φ v + φ_t), the minimum-norm change
  that restores the velocity constraint Φ v + φ_t = 0 (Φ⁺ is the SVD pseudoinverse with singular values
  below max(rtol·σ_max, atol) dropped, the rank convention of :mod:`flexbody.linalg.rank`, so both work at
  singular configurations and with redundant rows);
* and/or Baumgarte stabilisation [AG Sec. VI, ref. 19], which replaces the acceleration constraint by
  φ̈ + 2α φ̇ + β² φ = 0, i.e. bias ← bias + 2α (Φ v + φ_t) + β² φ.

Without stabilisation the drift is not hidden: ‖φ‖ and ‖Φ v + φ_t‖ are recorded at every output step.
The model is any object with the evaluation interface ``n_dofs``, ``n_constraints``, ``row_labels``,
``terms(t, q, v)`` (→ .M, .h, .Phi, .bias, .phi, .phi_t), ``constraint_value(t, q)``, ``constraint_jacobian(t, q)``,
``constraint_rate(t, q)`` and optionally ``energy(q, v)``, ``initial_state()``, ``body_slices``.

With ``simulate(..., save_to=directory)`` the run is written while it runs (layout in
:mod:`flexbody.io.results`): every ``save_every`` recorded steps a part file with the new rows,
``results.json`` and ``checkpoint.npz``, the state from which :func:`resume` continues the run step for
step as if it had not been stopped.
"""
from __future__ import annotations

import json
import logging
from dataclasses import asdict
from pathlib import Path
from typing import Callable

import numpy as np

from ..fem import fields as field_data
from . import restart
from .run_context import NO_CONTEXT, RunContext
from ..system.description import as_assembled
from ..linalg.rank import resolve_tolerances as _tolerances
from ..errors import FlexbodyError, StateError
from ..io.results import (CHECKPOINT, RESULTS_JSON, RESULTS_NPZ, Results, part_name, read_parts)
from .stabilization import Baumgarte, PositionCorrection, _finite, assemble_configuration, project_velocity
from .recorder import EnergyWatch, Recorder
from ..io.run_writer import RunWriter
from .explicit import Adaptive, RK4, _Dynamics, _Run, _run_adaptive, _run_rk4, _tau_function, check_rk4_step

log = logging.getLogger(__name__)

__all__ = ["RK4", "Adaptive", "Baumgarte", "PositionCorrection", "simulate", "assemble_configuration",
           "project_velocity", "resume"]


IMPLICIT_FORMULATION = "index-3 generalized-alpha"          # the "formulation" recorded by generalized-α runs


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


# ----------------------------------------------------------------------------------------- simulation
def simulate(asm, t_end: float, *, integrator=RK4(dt=1e-3), tau=None, formulation: str = "projection",
             stabilization=PositionCorrection(), q0=None, v0=None, t0: float = 0.0, record_every: int = 1,
             consistent_initial: bool = True, rtol: float | None = None, atol: float | None = None,
             singular_tol: float | None = None, controller=None, save_to=None, save_every: int = 50,
             fields: bool = False, context: RunContext | None = None) -> Results:
    """Integrate the constrained equations of motion from ``t0`` to ``t_end`` [s].

    Parameters
    ----------
    asm : System, AssembledSystem or a model with the evaluation interface (module docstring)
        A System is assembled here (``system.assemble()``); ``Results.system`` is that assembly.
    t_end : float
        End time [s].
    integrator : RK4 or Adaptive
    tau : None (zero), array (n_dofs,) or callable
        Generalized applied forces [N or N·m]: ``tau(t, q, v)`` or a controller ``tau(t, state, asm)``
        (recognised by its parameter names ``state`` or ``asm``/``system``).
    controller : flexbody.control.Controller, optional
        A controller returning actuator inputs τ_k (k,); the plant receives Sᵀτ_k (zero at passive
        joints). Once per step it gets ``update(t, state, response)`` with the plant's response (for
        integral terms), and its ``diagnostics`` (task coordinates "task_x", desired values
        "task_desired", errors "task_error", commanded task accelerations "task_command", actuator
        inputs "tau_k", …) are recorded as histories. ``controller`` and ``tau`` are exclusive.
    formulation : str
        Method of :func:`flexbody.dynamics.forward`: "projection" [AG-25], "multiplier", "gauss", "nullspace".
    stabilization : PositionCorrection, Baumgarte, a tuple of both, or None
        None integrates without stabilisation; the drift is then recorded in ``histories["violation"]``.
    q0, v0 : array (n_dofs,), optional
        Initial state (default ``asm.initial_state()``).
    t0 : float
        Initial time [s].
    record_every : int
        Record every k-th step (RK4) or output time (Adaptive); the last one is always recorded.
    consistent_initial : bool
        Assemble q0 (:func:`assemble_configuration`) and project v0 (:func:`project_velocity`) first.
    rtol, atol : float, optional
        Rank tolerances of Φ for forward() and the pseudoinverses, tol = max(rtol·σ_max, atol)
        (defaults of :mod:`flexbody.linalg.rank`). A large ``atol`` is Aghili's ε [AG-68]: the constraint is
        dropped where its singular value falls below it.
    singular_tol : float, optional
        Absolute singular-value floor for the singular-configuration log only (the dynamics keep
        ``atol``). Default: log changes of the rank used by forward().
    save_to : str or Path, optional
        Directory to write the run into while it runs (files of an earlier run there are replaced): every
        ``save_every`` recorded steps the new rows as ``parts/part_NNNNN.npz``, ``results.json``
        (metadata with the run's settings: integrator and its settings, t0, t_end, record_every,
        formulation, stabilisation) and ``checkpoint.npz`` (the integrator's state, for :func:`resume`);
        on a failure the rows recorded up to it; at the end the complete results (:meth:`Results.save`),
        after which the parts and the checkpoint are removed. :meth:`Results.load` reads the directory at
        any time (``metadata["complete"]`` False before the end). Saving does not change the results.
    save_every : int
        Recorded steps per part file (with ``save_to``).
    fields : bool
        Record the fields of the flexible bodies (displacement, velocity, strain, stress; names, shapes
        and units in :mod:`flexbody.fem.fields`) at every recorded step into ``Results.fields`` (also written
        with ``save_to`` and used by the ParaView export). Memory grows with steps × nodes: thin with
        ``record_every``.
    context : RunContext, optional
        Given by the caller of the run (``flexbody run`` passes one to the case's ``main``): its progress
        callback is called once per step; with ``context.restarts`` (``flexbody run --resume``) a run
        saved in ``save_to`` with the same settings is continued from its checkpoint, or returned as it is
        when complete, instead of being started again.

    Returns
    -------
    Results
        ``kind="dynamic"``; ``times`` [s], ``q``, ``v``; ``histories``: "a", "tau", "lam", "constraint_force"
        (Φᵀλ), "rank" (rank of Φ used by forward()), "violation" (‖φ‖), "velocity_violation"
        (‖Φ v + φ_t‖), "corrections" (Newton iterations of the position correction that produced the
        state) and, if the model has ``energy``, "kinetic", "potential", "energy" [J]. ``events``: rank
        changes of Φ ({"t", "kind": "rank_drop" | "rank_restored" | "rank_rise" (above the initial rank), "rank",
        "redundant_rows", "smallest_singular_value", …}) and failures.

    Raises
    ------
    StateError
        Bad or non-finite initial state, or NaN/Inf in state, forces or accelerations during the run
        (the message names the time and the quantity).
    FlexbodyError
        Any failure during the run (ConvergenceError of the position correction, ConstraintError of the
        multiplier form at a singular configuration, …) is re-raised with the results recorded up to
        the failure attached as ``exc.last_good``; with ``save_to`` they are written there too.
    """
    from .generalized_alpha import GeneralizedAlpha
    asm = as_assembled(asm, "simulate")
    context = NO_CONTEXT if context is None else context
    if not isinstance(integrator, (RK4, Adaptive, GeneralizedAlpha)):
        raise FlexbodyError(f"simulate: integrator must be RK4, Adaptive or GeneralizedAlpha, got {integrator!r}")
    for name, value in (("t0", t0), ("t_end", t_end)):
        if not isinstance(value, (int, float, np.integer, np.floating)) or isinstance(value, bool):
            raise FlexbodyError(f"simulate: {name} must be a number [s], got {value!r}")
    if not (np.isfinite(t0) and np.isfinite(t_end) and t_end > t0):
        raise FlexbodyError(f"simulate: t_end must be finite and > t0 = {t0}, got {t_end!r}")
    if not isinstance(record_every, (int, np.integer)) or record_every < 1:
        raise FlexbodyError(f"simulate: record_every must be a positive integer, got {record_every!r}")
    if save_to is not None and (not isinstance(save_every, (int, np.integer)) or save_every < 1):
        raise FlexbodyError(f"simulate: save_every must be a positive integer, got {save_every!r}")
    tau, controller = _control_inputs(tau, controller, "simulate")
    implicit = isinstance(integrator, GeneralizedAlpha)
    facts = {"integrator": type(integrator).__name__, "integrator_settings": asdict(integrator),
             "formulation": IMPLICIT_FORMULATION if implicit else formulation,
             "t0": float(t0), "t_end": float(t_end), "record_every": int(record_every)}
    if fields:
        _check_field_bodies(asm)
        facts["fields"] = True
    if save_to is not None and context.restarts is not None:        # flexbody run --resume
        saved = restart.continue_saved(asm, save_to, float(t_end), facts, resume, context,
                                       tau=None if controller is not None else tau, controller=controller)
        if saved is not None:
            return saved
    if save_to is not None:
        facts["save_every"] = int(save_every)
    saver = None if save_to is None else RunWriter.create(
        save_to, save_every, _bytes_to_write(asm, integrator, float(t0), float(t_end), record_every, fields))
    if implicit:
        return _simulate_implicit(asm, t_end, integrator, tau, controller, q0, v0, t0, record_every,
                                  consistent_initial, facts, saver, context)
    correction, baumgarte = _split_stabilization(stabilization)
    tolerances = _tolerances(rtol, atol)
    q, v = _initial_state(asm, q0, v0, t0, consistent_initial, tolerances)
    if isinstance(integrator, RK4):
        check_rk4_step(asm, q, integrator)
    metadata = {**facts, "position_correction": asdict(correction) if correction else None,
                "baumgarte": asdict(baumgarte) if baumgarte else None, "rtol": tolerances[0],
                "atol": tolerances[1], "singular_tol": singular_tol}
    recorder = Recorder(asm, tolerances, singular_tol, _with_labels(metadata, asm, controller), controller)
    recorder.t_last = float(t0)
    recorder.energy_watch = _energy_watch(asm, tau, controller)
    body = _explicit_body(asm, integrator, tau, formulation, correction, baumgarte, tolerances, recorder,
                          record_every, saver, q, v, float(t0), float(t_end), {}, context)
    return _execute(recorder, saver, body)


def _bytes_to_write(asm, integrator, t0: float, t_end: float, record_every: int, fields: bool) -> int:
    """What a run saved as it goes writes at most [B]: its recorded rows (q, v, a, τ, Φᵀλ, λ, the scalars and,
    with ``fields``, about 30 numbers per flexible node) twice, as parts and as the complete results written
    before the parts are removed."""
    step = getattr(integrator, "dt", None) or getattr(integrator, "output_dt", None) or (t_end - t0) / 100.0
    rows = int(np.ceil((t_end - t0) / step)) // record_every + 2
    n, m = int(asm.n_dofs), int(asm.n_constraints)
    nodes = sum(b.n_nodes for b in getattr(asm, "bodies", None) or []) if fields else 0
    return 2 * 8 * rows * (5 * n + 2 * m + 20 + 30 * nodes)


def _check_field_bodies(asm) -> None:
    bodies = list(getattr(asm, "bodies", None) or [])
    if not bodies:
        raise FlexbodyError("simulate: fields=True, but the model has no flexible body to record fields of")
    for body in bodies:
        field_data.check_body_name(body.name)


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


def _explicit_body(asm, integrator, tau, formulation, correction, baumgarte, tolerances, recorder,
                   record_every, saver, q, v, t0, t_end, start: dict, context: RunContext) -> Callable[[], None]:
    """The RK4 or adaptive loop from (t0, q, v), or from a checkpoint's ``start`` (k, t, corrections,
    output_dt), as a function of no arguments."""
    dynamics = _Dynamics(asm, tau, formulation, baumgarte, *tolerances)
    output_dt = None
    if isinstance(integrator, Adaptive):
        output_dt = start.get("output_dt") or integrator.output_dt or (t_end - t0) / 100.0
    run = _Run(asm, dynamics, recorder, correction, tolerances, record_every, saver, output_dt,
               type(integrator).__name__, context.report)
    loop = _run_rk4 if isinstance(integrator, RK4) else _run_adaptive
    kw = {"k0": int(start["k"]), "t": float(start["t"]), "corrections": int(start["corrections"])} if start else {}

    def body():
        loop(run, integrator, q, v, t0, t_end, **kw)
        log.info("simulated to t = %.6g s: %d steps recorded, %d dynamics evaluations, %d events", t_end,
                 len(recorder.rows["t"]), dynamics.n_evaluations, len(recorder.events))
    return body


def resume(asm, directory, t_end: float | None = None, *, tau=None, controller=None,
           context: RunContext | None = None) -> Results:
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
    from .generalized_alpha import GeneralizedAlpha
    asm = as_assembled(asm, "resume")
    context = NO_CONTEXT if context is None else context
    path = Path(directory)
    if (path / RESULTS_NPZ).exists():
        raise FlexbodyError(f"resume: the run in {str(path)!r} is already complete ({RESULTS_NPZ} exists); "
                            f"read it with Results.load")
    if not (path / CHECKPOINT).is_file():
        raise FlexbodyError(f"resume: no checkpoint ({CHECKPOINT}) in {str(path)!r}: not a directory written "
                            f"by simulate(..., save_to=...), or stopped before its first save")
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
        raise FlexbodyError(f"resume: the run in {str(path)!r} used integrator {name!r} (checkpoint of "
                            f"{state.get('integrator')!r}), which cannot resume; resumable: {sorted(kinds)}")
    integrator = kinds[name](**metadata["integrator_settings"])
    n = int(asm.n_dofs)
    if arrays["q"].shape != (n,):
        raise FlexbodyError(f"resume: the model has n_dofs = {n} but the run in {str(path)!r} has "
                            f"{arrays['q'].size} coordinates; give the model of the saved run")
    t_start = float(state["t"])
    t_end = float(metadata["t_end"] if t_end is None else t_end)
    if not (np.isfinite(t_end) and t_end > t_start):
        raise FlexbodyError(f"resume: t_end must be finite and after the checkpoint's t = {t_start!r} s, "
                            f"got {t_end!r}")
    tau, controller = _control_inputs(tau, controller, "resume")
    try:
        rows, histories = read_parts(path, [part_name(i) for i in range(1, state["n_parts"] + 1)], n)
    except (OSError, ValueError, KeyError) as exc:
        raise FlexbodyError(f"resume: cannot read the parts in {str(path)!r}: {exc}") from exc
    if len(rows["times"]) != state["rows"]:
        raise FlexbodyError(f"resume: {str(path)!r} is inconsistent: the checkpoint continues {state['rows']} "
                            f"rows, its parts hold {len(rows['times'])}")
    saver = RunWriter(path, metadata.get("save_every", 50), state["n_parts"], state["rows"])
    metadata.pop("statistics", None)
    metadata.update(t_end=t_end, resumed_at=list(metadata.get("resumed_at", [])) + [t_start])
    t0, record_every = float(metadata["t0"]), int(metadata["record_every"])
    q, v = arrays["q"], arrays["v"]
    log.info("resuming the %s run in %s at t = %.6g s (%d rows saved) to t = %.6g s", name, path, t_start,
             state["rows"], t_end)
    if isinstance(integrator, GeneralizedAlpha):
        tolerances = _tolerances(None, None)
        recorder = Recorder(asm, tolerances, None, _with_labels(metadata, asm, controller), controller)
        recorder.restore(rows, histories, state)
        saver.forget_after_checkpoint(recorder)
        recorder.energy_watch = _energy_watch(asm, tau, controller, recorder.rows)
        body = _implicit_body(asm, t_end, integrator, tau, controller, recorder, saver, q, v, t0, record_every,
                              (state, arrays), context)
    else:
        tolerances = _tolerances(metadata["rtol"], metadata["atol"])
        pc, bg = metadata.get("position_correction"), metadata.get("baumgarte")
        correction = PositionCorrection(**pc) if pc else None
        baumgarte = Baumgarte(**bg) if bg else None
        recorder = Recorder(asm, tolerances, metadata.get("singular_tol"), _with_labels(metadata, asm, controller),
                             controller)
        recorder.restore(rows, histories, state)
        saver.forget_after_checkpoint(recorder)
        recorder.energy_watch = _energy_watch(asm, tau, controller, recorder.rows)
        body = _explicit_body(asm, integrator, tau, metadata["formulation"], correction, baumgarte, tolerances,
                              recorder, record_every, saver, q, v, t0, t_end, state, context)
    return _execute(recorder, saver, body)


def _with_labels(metadata: dict, asm, controller) -> dict:
    """Run metadata plus the model's labels and units and the controller's name, labels and task units
    ("coordinate_units", "row_units" (of φ), "actuated_units", "task_units"; see docs/conventions.md)."""
    for key in ("coordinate_labels", "row_labels", "actuated_labels",
                "coordinate_units", "row_units", "actuated_units"):
        if hasattr(asm, key):
            metadata[key] = list(getattr(asm, key))
    if controller is not None:
        metadata.update(controller=type(controller).__name__, **getattr(controller, "labels", {}))
        task = getattr(controller, "task", None)
        if hasattr(task, "units_in"):
            metadata["task_units"] = list(task.units_in(asm) if hasattr(asm, "coordinate_units") else task.units)
    return metadata


def _attach_partial(recorder: Recorder, exc: FlexbodyError) -> None:
    """Log the failure as an event and attach the results recorded so far to ``exc.last_good`` (a state
    the error carried before moves to ``exc.last_state``)."""
    recorder.events.append({"t": recorder.t_last, "kind": "failure", "error": type(exc).__name__,
                            "message": str(exc)})
    partial = recorder.results()
    if getattr(exc, "last_good", None) is not None and not isinstance(exc.last_good, Results):
        exc.last_state = exc.last_good
    exc.last_good = partial
    log.info("simulation stopped at t = %.6g s: %s (%d steps recorded)", recorder.t_last, exc, partial.n_steps)


def _simulate_implicit(asm, t_end, settings, tau, controller, q0, v0, t0, record_every, consistent, facts,
                       saver, context):
    """The generalized-α branch of :func:`simulate` (:mod:`flexbody.solvers.generalized_alpha`); same Results layout."""
    from .generalized_alpha import consistent_start
    tolerances = _tolerances(None, None)
    q, v = _initial_state(asm, q0, v0, t0, False, tolerances)         # validated; made consistent below
    if consistent and int(asm.n_constraints) > 0:
        q, v = consistent_start(asm, t0, q, v)
    metadata = dict(facts)                                            # integrator, settings, t0, t_end, …
    recorder = Recorder(asm, tolerances, None, _with_labels(metadata, asm, controller), controller)
    recorder.t_last = float(t0)
    recorder.energy_watch = _energy_watch(asm, tau, controller)
    body = _implicit_body(asm, t_end, settings, tau, controller, recorder, saver, q, v, float(t0), record_every,
                          None, context)
    return _execute(recorder, saver, body)


def _implicit_body(asm, t_end, settings, tau, controller, recorder, saver, q, v, t0, record_every, start, context):
    """The generalized-α loop as a function of no arguments; its statistics go to the metadata."""
    from .generalized_alpha import simulate_implicit
    tau_function = _tau_function(tau, asm)

    def body():
        recorder.metadata["statistics"] = simulate_implicit(
            asm, float(t_end), settings, tau_function, recorder, q=q, v=v, t0=float(t0),
            record_every=record_every, controller=controller, saver=saver, start=start, report=context.report)
    return body


def _energy_watch(asm, tau, controller, rows: dict | None = None) -> EnergyWatch | None:
    """The energy watch of a run without inputs (no controller, τ None or zero, no user force without a potential),
    continued after ``rows`` when resumed; None for other runs, whose inputs may add energy."""
    held_zero = tau is None or (not callable(tau) and not np.any(np.asarray(tau, dtype=float)))
    forces = getattr(getattr(asm, "forces", None), "elements", ())
    unknown_work = any(getattr(f, "kind", None) == "generalized_force" and getattr(f, "_potential", None) is None
                       for f in forces)
    if controller is not None or not held_zero or unknown_work or not hasattr(asm, "energy"):
        return None
    watch = EnergyWatch()
    if rows is not None:
        watch.restore(rows)
    return watch


def _split_stabilization(stabilization):
    items = stabilization if isinstance(stabilization, (tuple, list)) else (stabilization,)
    correction = baumgarte = None
    for item in items:
        if isinstance(item, PositionCorrection):
            correction = item
        elif isinstance(item, Baumgarte):
            baumgarte = item
        elif item is not None:
            raise FlexbodyError(f"simulate: stabilization must be PositionCorrection, Baumgarte, a tuple of "
                                f"them or None, got {item!r}")
    return correction, baumgarte


def _initial_state(asm, q0, v0, t0, consistent, tolerances):
    n = int(asm.n_dofs)
    if q0 is None or v0 is None:
        if not hasattr(asm, "initial_state"):
            raise StateError("simulate: give q0 and v0 (the model has no initial_state())")
        state = asm.initial_state()
        q0 = state.q if q0 is None else q0
        v0 = state.v if v0 is None else v0
    q, v = np.array(q0, dtype=float), np.array(v0, dtype=float)
    for name, x in (("q0", q), ("v0", v)):
        if x.shape != (n,):
            raise StateError(f"simulate: {name} must have shape ({n},), got {x.shape}")
        _finite(name, x, t0)
    if consistent and int(asm.n_constraints) > 0:
        rtol, atol = tolerances
        q = assemble_configuration(asm, q, t0, rtol=rtol, atol=atol)
        v = project_velocity(asm, q, v, t0, rtol=rtol, atol=atol)
    return q, v
