"""What a generalized-α run (:mod:`flexbody.solvers.generalized_alpha`) records and saves: the rows of a step or
of a compiled batch of steps for :class:`flexbody.solvers.recorder.Recorder`, the plant's response at a step
(q̈, Φᵀλ, λ), the dissipated power and the checkpoint of a run saved as it goes.

The dissipated work of a step is the trapezoid rule over the power at its two ends,

    P = vᵀ(k(q, v) − k(q, 0)) − vᵀ(Q(q, v) − Q(q, 0)),

the Kelvin–Voigt forces of the flexible bodies and the dampers among the force elements
(:meth:`flexbody.system.Workspace.viscous_power`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..dynamics import ForwardResult
from ..linalg.csr_products import transposed_product
from .compiled_alpha import RECORDED
from .recorder import state_columns

if TYPE_CHECKING:
    from .generalized_alpha import AlphaState, AlphaStepper


def record_rows(recorder, rows: tuple, tau: np.ndarray, dissipated: float, moving: np.ndarray) -> None:
    """Record the rows (t, q, v, q̈, λ, Φᵀλ, scalar columns of :data:`~flexbody.solvers.compiled_alpha.RECORDED`) of
    compiled steps, with the columns and in the order :func:`_record` gives a step; ``moving`` (rows,) whether a
    driver moves at each (φ_t ≠ 0, for the energy watch)."""
    t, q, v, a, lam, force, scalars = rows
    if not len(t):
        return
    count, m = len(t), lam.shape[1]
    column = dict(zip(RECORDED, scalars.T))
    recorder.extend(
        {
            **state_columns(
                t,
                q,
                v,
                a=a,
                tau=np.broadcast_to(tau, q.shape),
                lam=lam,
                force=force,
                rank=np.full(count, float(m)),
                violation=column["violation"],
                velocity_violation=column["velocity_violation"],
                corrections=column["corrections"],
            ),
            "kinetic": column["kinetic"],
            "potential": column["potential"],
            "energy": column["energy"],
            "dt": column["dt"],
            "newton_iterations": column["corrections"],
            "applied_work": column["applied_work"],
            "dissipated": np.full(count, dissipated),
        },
        moving,
    )
    recorder.t_last = float(t[-1])


class _Snapshot:
    """What :class:`flexbody.solvers.simulation.Recorder` reads from the constraint terms at a recorded state."""

    def __init__(self, phi, Phi, phi_t):
        self.phi, self.Phi, self.phi_t = phi, Phi, phi_t


def record_state(recorder, ws, s: AlphaState, tau, *, iterations: int, dt: float, stats: dict) -> None:
    """Record the state ``s``, whose terms are read from its workspace ``ws``."""
    phi, Phi, _, phi_t = ws.constraint_rows()
    recorder.t_last = s.t
    snapshot = _Snapshot(phi, Phi, phi_t)
    recorder.record(s.t, s.q, s.v, response(ws, s), tau=tau, terms=snapshot, corrections=iterations, ws=ws)
    for key, value in (
        ("dt", dt),
        ("newton_iterations", iterations),
        ("applied_work", stats["applied_work"]),
        ("dissipated", stats["dissipated"]),
    ):
        recorder.append(key, value)


def response(ws, s: AlphaState) -> ForwardResult:
    """The plant's response at a step (q̈, Φᵀλ, λ), with Φ from the step's workspace ``ws``."""
    Phi = ws.constraint_rows()[1]
    force = transposed_product(Phi, s.lam) if Phi.shape[0] else np.zeros(ws.asm.n_dofs)
    return ForwardResult(s.qdd, force, s.lam, lam_unique=True, rank=Phi.shape[0], method="generalized-alpha")


def write_checkpoint(writer, recorder, stepper: AlphaStepper, state: AlphaState, *, tau_prev, stats, counters, control):
    """Write the rows and what continues the run after ``state`` exactly (:mod:`flexbody.solvers.alpha_run`):
    ``control`` = {"dt", "easy", "k", "patience"} of the step-size control, ``stats`` the statistics so far,
    ``counters`` the work counters, ``tau_prev`` the input of the step before."""
    scalars = {
        "integrator": "GeneralizedAlpha",
        "t": state.t,
        **control,
        "counters": counters,
        "stats": stats,
        "factor_dt": stepper.factor_dt,
        "factor_t": None,
    }
    arrays = {"q": state.q, "v": state.v, "qdd": state.qdd, "a": state.a, "lam": state.lam, "tau_prev": tau_prev}
    if stepper.factor_dt is not None and stepper.factor_point is not None:  # set together
        scalars["factor_t"] = stepper.factor_point[0]
        arrays.update(zip(("factor_q", "factor_v", "factor_qdd", "factor_lam"), stepper.factor_point[1:]))
    writer.write(recorder, scalars, arrays)
