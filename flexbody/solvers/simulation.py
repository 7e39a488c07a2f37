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
``constraint_rate(t, q)`` and optionally ``energy(q, v)``, ``initial_state()``, ``slices`` (part name → slice of q).

With ``simulate(..., save_to=directory)`` the run is written while it runs (layout in
:mod:`flexbody.io.results`): every ``save_every`` recorded steps a part file with the new rows,
``results.json`` and ``checkpoint.npz``, the state from which :func:`resume` continues the run step for
step as if it had not been stopped.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ..deprecation import renamed_keyword
from ..errors import FlexbodyError, StateError
from ..fem import fields as field_data
from ..io.results import Results
from ..io.run_writer import RunWriter
from ..linalg.rank import touched_columns
from ..linalg.validation import zero_diagonal
from ..system.description import as_assembled
from ..threads import one_blas_thread
from . import restart
from .alpha_start import consistent_start
from .explicit import RK4, Adaptive, check_rk4_step
from .resumption import resume
from .run_context import NO_CONTEXT, RunContext
from .run_plan import RunPlan
from .runner import RunInputs, Start, execute
from .stabilization import (
    Baumgarte,
    PositionCorrection,
    assemble_configuration,
    assembled_configuration,
    finite,
    project_velocity,
    projected_velocity,
)
from .start_changes import report, report_violations, start_changes, start_violations

if TYPE_CHECKING:
    from pathlib import Path

    from ..control.base import Controller
    from ..system import AssembledSystem, System
    from .alpha_settings import GeneralizedAlpha
    from .moreau_jean import MoreauJean

__all__ = [
    "RK4",
    "Adaptive",
    "Baumgarte",
    "PositionCorrection",
    "simulate",
    "assemble_configuration",
    "project_velocity",
    "resume",
]


@one_blas_thread
@renamed_keyword("asm", "model")
def simulate(
    model: System | AssembledSystem,
    t_end: float,
    *,
    integrator: RK4 | Adaptive | GeneralizedAlpha | MoreauJean = RK4(dt=1e-3),
    tau: ArrayLike | Callable[..., ArrayLike] | None = None,
    formulation: str = "projection",
    stabilization: PositionCorrection
    | Baumgarte
    | tuple[PositionCorrection | Baumgarte, ...]
    | None = PositionCorrection(),
    q0: ArrayLike | None = None,
    v0: ArrayLike | None = None,
    t0: float = 0.0,
    record_every: int = 1,
    consistent_initial: bool | str = True,
    rtol: float | None = None,
    atol: float | None = None,
    singular_tol: float | None = None,
    controller: Controller | None = None,
    save_to: str | Path | None = None,
    save_every: int = 50,
    fields: bool = False,
    context: RunContext | None = None,
) -> Results:
    """Integrate the constrained equations of motion from ``t0`` to ``t_end`` [s].

    Parameters
    ----------
    model : System, AssembledSystem or a model with the evaluation interface (module docstring)
        A System is assembled here (``system.assemble()``); ``Results.system`` is that assembly.
    t_end : float
        End time [s].
    integrator : RK4, Adaptive, GeneralizedAlpha or MoreauJean
        The explicit (with a constraint stabilisation) or the implicit (index-3) integrator and its settings, or the
        nonsmooth stepper of unilateral contacts (:class:`~flexbody.solvers.moreau_jean.MoreauJean`, which the
        constraint stabilisation follows as RK4's runs do).
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
        Initial state (default ``model.initial_state()``).
    t0 : float
        Initial time [s].
    record_every : int
        Record every k-th step (RK4) or output time (Adaptive); the last one is always recorded.
    consistent_initial : True, False or "refuse"
        True: assemble q0 (:func:`assemble_configuration`) and project v0 (:func:`project_velocity`) first, with a
        WARNING and ``metadata["start_corrections"]`` when that changes them beyond round-off (the rows they
        violated, the size of the change); "refuse": a StateError naming the rows instead; False: run from
        (q0, v0) as given (:mod:`flexbody.solvers.start_changes`).
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
    asm = as_assembled(model, "simulate")
    context = NO_CONTEXT if context is None else context
    plan = RunPlan.of(
        integrator=integrator,
        t0=t0,
        t_end=t_end,
        formulation=formulation,
        stabilization=stabilization,
        rtol=rtol,
        atol=atol,
        singular_tol=singular_tol,
        record_every=record_every,
        fields=fields,
        consistent_initial=consistent_initial,
        save_every=save_every,
    )
    inputs = RunInputs.of(tau, controller, "simulate")
    if fields:
        _check_field_bodies(asm)
    if save_to is not None and context.restarts is not None:  # flexbody run --resume
        saved = restart.continue_saved(asm, save_to, plan, resume=resume, context=context, inputs=inputs)
        if saved is not None:
            return saved
    start = _start(asm, plan, q0, v0)
    writer = None if save_to is None else RunWriter.create(save_to, plan.save_every, plan.bytes_to_write(asm))
    return execute(plan, asm, inputs, start, writer=writer, context=context)


def _check_field_bodies(model) -> None:
    bodies = list(getattr(model, "bodies", None) or [])
    if not bodies:
        raise FlexbodyError("simulate: fields=True, but the model has no flexible body to record fields of")
    for body in bodies:
        field_data.check_body_name(body.name)


def _start(model, plan: RunPlan, q0, v0) -> Start:
    """The run's start: the initial state checked and, unless the plan says otherwise, made consistent — by
    least-change corrections through the sparse elimination for generalized-α, by the Newton projection and the
    velocity projection otherwise — with the workspace of its last correction (at the corrected velocities),
    which the first step reuses; an RK4 step above the flexible bodies' stable step refused first."""
    n, t0 = int(model.n_dofs), plan.t0
    if q0 is None or v0 is None:
        if not hasattr(model, "initial_state"):
            raise StateError("simulate: give q0 and v0 (the model has no initial_state())")
        state = model.initial_state()
        q0 = state.q if q0 is None else q0
        v0 = state.v if v0 is None else v0
    q, v = np.array(q0, dtype=float), np.array(v0, dtype=float)
    for name, x in (("q0", q), ("v0", v)):
        if x.shape != (n,):
            raise StateError(f"simulate: {name} must have shape ({n},), got {x.shape}")
        finite(name, x, t0)
    ws, changes, violations = None, {}, {}
    if plan.consistent_initial is not False and int(model.n_constraints) > 0:
        given = (q, v)
        if plan.implicit:
            q, v, ws = consistent_start(model, t0, q, v)
        else:
            rtol, atol = plan.tolerances
            q, ws = assembled_configuration(model, q, t0, rtol=rtol, atol=atol)
            v = projected_velocity(ws, v, *plan.tolerances)
            ws = ws.with_velocity(v)
        changes = start_changes(model, t0, *given, q, v)
        report(changes, plan.consistent_initial)
    if ws is None and hasattr(model, "workspace"):  # the state as given: its workspace, which the first step reuses
        ws = model.workspace(t0, q, v)
    if not plan.consistent_initial and int(model.n_constraints) > 0:
        violations = start_violations(model, t0, q, v, ws)
        report_violations(violations)
    if isinstance(plan.integrator, RK4):
        check_rk4_step(model, q, plan.integrator)
    if ws is not None:
        _check_inertia(model, t0, ws)
    return Start(t0, q, v, workspace=ws, changes=changes, violations=violations)


def _check_inertia(model, t: float, ws) -> None:
    """StateError naming the coordinates that carry no inertia at q (a zero diagonal entry of a dense block of M:
    a link with neither mass nor inertia, or whose subtree has none) and that no constraint row ties to others (a
    zero column of Φ), which their joints then move without resistance: every dynamics form is singular there.
    ``ws``: the workspace of the start (a model's own workspace without these terms is not checked)."""
    if not all(
        hasattr(x, name) for x, name in ((ws, "mass_matrix"), (ws, "constraint_rows"), (model, "coordinate_labels"))
    ):
        return
    M = ws.mass_matrix()
    tied = touched_columns(ws.constraint_rows()[1], model.n_dofs)
    blocks = [(s, block) for s, block in M.rigid] if hasattr(M, "rigid") else [(slice(0, M.shape[0]), M)]
    labels = list(model.coordinate_labels)
    bad = [
        labels[s.start + i] for s, block in blocks for i in zero_diagonal(np.asarray(block)) if not tied[s.start + i]
    ]
    if bad:
        raise StateError(
            f"simulate: coordinates {bad} carry no inertia at t = {t:.9g} s (zero diagonal of the mass matrix) and no "
            "constraint ties them to others: their links have neither mass nor inertia (nor any link beyond them), so "
            "their joints move them without resistance; give those links mass or inertia, or fix their joints"
        )
