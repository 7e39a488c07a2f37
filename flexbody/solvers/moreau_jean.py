"""The nonsmooth time stepper: :class:`MoreauJean` settings and the stepping loop of a run with unilateral contacts
(:class:`~flexbody.constraints.unilateral_contact.Contact`), each step by
:class:`~flexbody.solvers.contact_step.ContactStepper` (velocity-level complementarity with Coulomb friction,
impacts inside the step).

What a state records: its step's response (a = Δv/h, the rows' mean multipliers Λ/h), and for every contact in the
system's order (after its compliant contacts) "contact_gap" (c,) [m], "contact_normal_force" (c,) p_n/h [N],
"contact_friction_force" (c, 3) the mean friction force of the step [N, world] and "contact_slip_speed" (c,) ‖u_t‖
of the state [m/s] where it touches (zero apart), with "contact_sweeps" of the contact solver and "contact_work" [J]
the energy the contacts' impulses gave in the step (:class:`~flexbody.solvers.contact_step.ContactStep`'s ``work``:
never above zero where e ≤ 1, but where a penetration is pushed out); the last state's
step is computed for its record, not taken. ``metadata["statistics"]``: the steps run, those the compiled kernel
took (``compiled_steps``: rigid systems whose contacts are points on links against planes, without bilateral rows,
:mod:`flexbody.solvers.compiled_contact`), its ``batches`` (up to 256 steps a call, where the inputs are held and
nothing is called or written per step), for flexible bodies in contact the steps that formed the contacts' block of
A⁻¹ (``contact_matrix_refreshes``) and the corrections of the others' earlier block
(``contact_corrections``, :mod:`flexbody.solvers.delassus_splitting`), the contact problems whose Gauss–Seidel
sweeps stalled and that were solved by impulses meeting the law instead (``contact_problems_by_the_law``,
:func:`~flexbody.solvers.coulomb_problem.solve_coulomb_polished`) with the largest ``largest_law_residual`` of
theirs (relative, :func:`~flexbody.solvers.coulomb_problem.law_residual`), and the wall time [s] of the steps and of
their contact parts (:class:`~flexbody.solvers.contact_step.ContactStepper`'s ``seconds``; a batch's steps are
timed whole).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from ..constraints.contact_points import contact_histories
from ..dynamics.results import ForwardResult
from ..errors import StateError
from ..linalg.csr_products import transposed_product
from ..linalg.validation import check_setting
from .compiled_contact import BATCH_STEPS, CompiledContactSteps
from .contact_step import ContactStep, ContactStepper
from .recorder import state_columns
from .stabilization import finite

__all__ = ["MoreauJean", "run_moreau_jean", "contact_rows"]


@dataclass(frozen=True, kw_only=True)
class MoreauJean:
    """The nonsmooth (Moreau–Jean, velocity-level) time stepper for unilateral contacts with friction and impacts.

    Attributes
    ----------
    dt : float
        Step [s] (fixed; the last step is shortened to end at ``t_end``).
    theta : float
        θ ∈ [½, 1] of the flexible bodies' linearly implicit stiffness (½: least numerical damping; the step damps
        them as a Kelvin–Voigt material of retardation time θ dt would).
    tol : float
        Relative change of the contact impulses at which the contact solver stops (> 0).
    max_sweeps : int
        Gauss–Seidel sweeps before the step fails, naming its contacts.
    penetration_recovery : float
        β ∈ (0, 1]: the part of a penetration (a gap below zero) removed per step.
    numerical_damping : float
        κ ∈ [0, 1]: the part of the stiffness-proportional damping θ dt K the step adds to the flexible bodies (1:
        their energy never grows; 0: none, elastic impacts rebound closer to the limit but the recorded energy
        fluctuates by O(dt); :mod:`flexbody.solvers.contact_step`).
    initial_penetration : float
        The deepest penetration [m] (≥ 0) a run may start with (then removed at ``penetration_recovery`` a step);
        a deeper one is refused, naming the contacts: the start would be changed by more than round-off.
    bounce_speed : float
        Impacts that approach slower than this [m/s] (≥ 0) are inelastic whatever their restitution (Chrono's
        minimum bounce speed, Bullet's restitution threshold; both default to about 0.15–0.2 m/s). 0, the default:
        every impact obeys Newton's law.
    """

    dt: float
    theta: float = 0.5
    tol: float = 1e-12
    max_sweeps: int = 5000
    penetration_recovery: float = 0.2
    numerical_damping: float = 1.0
    initial_penetration: float = 1e-9
    bounce_speed: float = 0.0

    def __post_init__(self):
        check_setting("MoreauJean", "dt", self.dt)
        check_setting("MoreauJean", "theta", self.theta, low=0.5, strict=False, high=1.0)
        check_setting("MoreauJean", "tol", self.tol)
        check_setting("MoreauJean", "max_sweeps", self.max_sweeps, low=1, strict=False, integer=True)
        check_setting("MoreauJean", "penetration_recovery", self.penetration_recovery, high=1.0)
        check_setting("MoreauJean", "bounce_speed", self.bounce_speed, low=0.0, strict=False)
        check_setting("MoreauJean", "initial_penetration", self.initial_penetration, strict=False)
        check_setting("MoreauJean", "numerical_damping", self.numerical_damping, strict=False, high=1.0)


def contact_rows(step: ContactStep, h) -> dict:
    """The contact histories of a state from its step of size h [s] (module docstring), with the solver's sweeps; of
    several states at once where the step's arrays have a leading axis of states (h then one per state)."""
    impulses, local = step.impulses, step.local
    h = np.asarray(h, dtype=float)[..., None]  # per state, over the contacts
    touching = impulses[..., 0] > 0.0
    friction = np.einsum("cij,...cj->...ci", step.basis[:, :, 1:], impulses[..., 1:])
    return {
        "contact_sweeps": step.sweeps,
        "contact_work": step.work,
        **contact_histories(
            step.gap,
            impulses[..., 0] / h,
            friction / h[..., None],
            np.where(touching, np.hypot(local[..., 1], local[..., 2]), 0.0),
        ),
    }


def _response(step: ContactStep, Phi, h: float) -> ForwardResult:
    """The step's response as a controller measures it: a, the bilateral rows' force and the contacts' mean forces
    (impulses over h)."""
    m = step.lam.size
    force = transposed_product(Phi, step.lam) if m else np.zeros(step.a.size)
    return ForwardResult(
        step.a, force, step.lam, lam_unique=True, rank=m, method="moreau-jean", contact_forces=step.impulses / h
    )


def _check_start(asm, t: float, q, v, ws, allowed: float) -> None:
    """StateError naming the contacts that penetrate deeper than ``allowed`` [m] at the start."""
    ws = asm.workspace(t, q, v) if ws is None else ws
    deep = [(c.name, gap) for c in asm.contacts if (gap := c.gap(ws)) < -allowed]
    if deep:
        listed = ", ".join(f"{name!r} by {-gap:.3g} m" for name, gap in deep[:5])
        raise StateError(
            f"simulate: the start penetrates {len(deep)} contact(s) deeper than initial_penetration = {allowed:g} m: "
            f"{listed}{' …' if len(deep) > 5 else ''}; place the bodies on or above their surfaces, or allow it with "
            f"MoreauJean(initial_penetration=...) (it is then pushed out at penetration_recovery a step)"
        )


def run_moreau_jean(
    run,
    settings: MoreauJean,
    q,
    v,
    *,
    t0,
    t_end,
    k0: int = 0,
    t: float | None = None,
    corrections: int = 0,
    ws=None,
    warm: np.ndarray | None = None,
):
    """Nonsmooth steps from (t0, q, v) (in its workspace ``ws`` when the start made one), or from step ``k0`` at
    (t, q, v) of a run started at t0 with the contact impulses ``warm`` (c, 3) of its checkpoint's last step (the
    contact solver's warm start, so that the continuation repeats the uninterrupted run); ``run`` the explicit
    integrators' :class:`~flexbody.solvers.explicit.Run` (recorder, stabilisation, checkpoints)."""
    asm, recorder = run.asm, run.recorder
    stepper = ContactStepper(asm, settings)
    if warm is not None:
        stepper.warm = np.array(warm, dtype=float).reshape(stepper.warm.shape)
    if k0 == 0:
        _check_start(asm, t0 if t is None else t, q, v, ws, settings.initial_penetration)
    n_steps = max(1, math.ceil((t_end - t0) / settings.dt - 1e-9))
    t = t0 if t is None else t
    compiled, batches = _compiled_steps(run, stepper), 0
    k, declined = k0, -1
    while True:
        if compiled is not None and k < n_steps and k != declined:
            taken, t, q, v = _batch(compiled, run, stepper, settings, k, t, t0, t_end, n_steps, q, v)
            batches += 1
            if k + taken < min(k + BATCH_STEPS, n_steps):  # the step after them declined: the Python route takes it
                declined = k + taken
            k, ws = k + taken, None
            continue
        last = k == n_steps
        ws = asm.workspace(t, q, v) if ws is None else ws
        tau = finite("tau", run.dynamics.tau(ws), t)
        t_next = t0 + (k + 1) * settings.dt if k + 1 < n_steps else t_end
        h = t_next - t if not last else settings.dt
        step = stepper.step(ws, tau, h, compiled=k != declined)  # a step the batch declined: the general route
        response = _response(step, ws.constraint_rows()[1], h)
        rows = contact_rows(step, h)
        run.observe(
            k, t, q, v, response, tau=tau, terms=ws.terms(), corrections=corrections, last=last, ws=ws, contacts=rows
        )
        if last:
            recorder.metadata["statistics"] = {
                "seconds": dict(stepper.seconds),
                "steps": n_steps - k0,
                "compiled_steps": stepper.compiled_steps,
                "batches": batches,
                "contact_matrix_refreshes": stepper.refreshes,
                "contact_corrections": stepper.corrections,
                "contact_problems_by_the_law": stepper.by_the_law,
                "largest_law_residual": stepper.largest_residual,
            }
            return
        t = t_next
        q, v, corrections, ws = run.end_step(t, step.q, step.v)
        k += 1
        run.completed(
            k,
            t,
            q,
            v,
            corrections=corrections,
            span=(t0, t_end),
            last=k == n_steps,
            arrays={"contact_impulses": stepper.warm},
        )


def _compiled_steps(run, stepper: ContactStepper) -> CompiledContactSteps | None:
    """The stepper's compiled kernel (:mod:`flexbody.solvers.compiled_contact`) for batches of steps where the run calls
    and writes nothing per step (inputs held, no controller, nothing saved as it goes); None otherwise (each step
    then calls it alone, where the model allows)."""
    held = getattr(run.dynamics.tau, "held", None) is not None
    quiet = run.recorder.controller is None and run.saver is None and not run.recorder.field_bodies
    return stepper.compiled if held and quiet else None


def _batch(compiled, run, stepper, settings, k: int, t: float, t0: float, t_end: float, n_steps: int, q, v):
    """Up to :data:`BATCH_STEPS` steps from step k at (t, q, v) in one compiled call, their states recorded as single
    steps record theirs. Returns (steps taken, the time, q and v at their end)."""
    start = time.perf_counter()
    q, v = np.array(q, dtype=float), np.array(v, dtype=float)  # the kernel steps them in place
    index = np.arange(k, min(k + BATCH_STEPS, n_steps))
    ends = np.where(index + 1 < n_steps, t0 + (index + 1) * settings.dt, t_end)
    times = np.concatenate([[t], ends[:-1]])
    record = index % run.record_every == 0
    tau = np.asarray(run.dynamics.tau.held, dtype=float)
    batch = compiled.run(times, ends - times, record, q, v, stepper.warm, tau)
    stepper.seconds["step"] += time.perf_counter() - start
    stepper.compiled_steps += batch.accepted
    _record_batch(run.recorder, batch.rows, tau, compiled.basis, (ends - times)[record])
    if not batch.accepted:
        return 0, t, q, v
    t = float(ends[batch.accepted - 1])
    run.completed(k + batch.accepted, t, q, v, corrections=0, span=(t0, t_end), last=False)
    return batch.accepted, t, q, v


def _record_batch(recorder, rows: tuple, tau: np.ndarray, basis: np.ndarray, h: np.ndarray) -> None:
    """Record the rows of compiled steps (:class:`~flexbody.solvers.compiled_contact.ContactBatch`) with the columns
    and in the order a single step records its state; ``basis`` (c, 3, 3) the contacts' frames, h the steps' sizes."""
    t, q, v, a, kinetic, potential, gap, impulses, local, sweeps, work = rows
    count = len(t)
    if not count:
        return
    steps = ContactStep(v, q, a, np.zeros((count, 0)), impulses, gap, basis, local, sweeps, work)
    zeros = np.zeros(count)  # no bilateral rows: rank, violations and corrections
    recorder.extend(
        {
            **state_columns(
                t,
                q,
                v,
                a=a,
                tau=np.broadcast_to(tau, q.shape),
                lam=steps.lam,
                force=np.zeros(q.shape),
                rank=zeros,
                violation=zeros,
                velocity_violation=zeros,
                corrections=zeros,
            ),
            "kinetic": kinetic,
            "potential": potential,
            "energy": kinetic + potential,
            **contact_rows(steps, h[:count]),
        }
    )
    recorder.t_last = float(t[-1])
