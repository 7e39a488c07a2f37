"""Implicit generalized-α integration of the index-3 constrained equations of rigid–flexible systems.

    r = M(q) q̈ + h(q, v, t) − τ − Φ(q)ᵀλ = 0,    φ(q, t) = 0                              [DE-112, DE-113]

Generalized-α after Chung & Hulbert, in the form of Arnold & Brüls for constrained systems, with the
algorithmic acceleration a:
    (1 − α_m) a_{n+1} + α_m a_n = (1 − α_f) q̈_{n+1} + α_f q̈_n
    q_{n+1} = q_n + h v_n + h²(½ − β) a_n + h² β a_{n+1},    v_{n+1} = v_n + h(1 − γ) a_n + h γ a_{n+1}
and the equations above enforced at t_{n+1} (velocity-level Pfaffian rows A(q) v = b as A v_{n+1} = b: their
Newton right-hand side is −(Φv + φ_t)/(γ′h) instead of −φ/(β′h²)). From the spectral radius at infinity ρ∞ ∈ [0, 1]:
α_m = (2ρ∞ − 1)/(ρ∞ + 1), α_f = ρ∞/(ρ∞ + 1), γ = ½ + α_f − α_m, β = ¼(γ + ½)². ρ∞ = 1 is the
trapezoidal rule (no numerical damping); :meth:`GeneralizedAlpha.hht` gives the HHT-α member
(α_m = 0, α_f = α ∈ [0, ⅓]).

Newton on (q̈_{n+1}, λ_{n+1}) with Δq = h²β′Δq̈, Δv = hγ′Δq̈ (β′ = β(1 − α_f)/(1 − α_m), γ′ likewise):
    [[M + γ′h C + β′h² K, Φᵀ], [Φ, 0]] [Δq̈; −Δλ] = [−r; −φ/(β′h²)]
with K = ∂r/∂q, C = ∂r/∂v: the flexible tangent and Kelvin–Voigt damping matrices (sparse, exact) and, for the joint
coordinates, the rigid rows' exact Jacobians (the trees' analytic derivatives, the constraints' Hessians −∂(Φᵀλ)/∂q, the
force elements' Jacobians) where every term has one, else their central differences (``rigid_jacobian``;
:mod:`flexbody.solvers.constrained_equations`). The saddle point is solved by
:class:`flexbody.linalg.saddle_point.SaddlePointSolver`; its factor is kept across iterations and steps while Newton
contracts fast enough (``reuse_rate``), and remade otherwise. A step that does not converge is retried with half the
step (down to ``dt_min``); the step grows back after ``grow_after`` easy steps.

A controller is called once per step at (t_n, q_n, v_n) and its actuator inputs are held over the step.

A run saved as it goes (``simulate(..., save_to=…)``) checkpoints the :class:`AlphaState` state, the step-size
control (dt, easy steps, patience, step count), the input of the previous step, the statistics and the
point (t, q, v, q̈, λ, dt) at which the kept iteration matrix was formed; a run resumed from the checkpoint
forms that matrix again there, so it takes exactly the Newton iterates of the uninterrupted run.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp

from ..linalg.saddle_point import SaddlePointSolver
from ..linalg.validation import all_finite
from .alpha_settings import GeneralizedAlpha, step_tolerance
from .compiled_alpha import NEED_CORRECTION, NEED_FACTOR, NOT_CONVERGED, OK, alpha_iterations, new_loop
from .compiled_steps import CompiledSteps, KernelArguments
from .constrained_equations import EquationResidual
from .newton_scales import increment_scales
from .step_charts import step_chart_arrays

log = logging.getLogger(__name__)

__all__ = ["GeneralizedAlpha", "AlphaState", "AlphaStepper", "StepFailedError"]


class BatchOutcome(NamedTuple):
    """What :meth:`AlphaStepper.batch` did: the ``state`` after its last accepted step, the compiled ``batch``
    (:class:`~flexbody.solvers.compiled_steps.Batch`: rows, counts), ``moving`` (rows,) whether a driver moved at
    each recorded row, and the ``failure`` of the step not accepted (or None)."""

    state: Any
    batch: Any
    moving: np.ndarray
    failure: Exception | None


class StepFailedError(Exception):
    """Newton did not converge within the iterations allowed (the step is retried smaller)."""


@dataclass
class AlphaState:
    """The integrator's state at one time: t, q, v, q̈, algorithmic a, λ."""

    t: float
    q: np.ndarray
    v: np.ndarray
    qdd: np.ndarray
    a: np.ndarray
    lam: np.ndarray


class AlphaStepper:
    """One generalized-α step with Newton and a kept iteration matrix."""

    def __init__(self, asm, settings: GeneralizedAlpha):
        self.asm, self.settings = asm, settings
        self.residual = EquationResidual(asm, settings.fd_step, exact=settings.rigid_jacobian == "exact")
        self.solver = SaddlePointSolver(asm.n_rigid)
        self.am, self.af, self.gamma, self.beta = settings.parameters()
        self.bp = self.beta * (1 - self.af) / (1 - self.am)  # β′, γ′
        self.gp = self.gamma * (1 - self.af) / (1 - self.am)
        self.factor_dt: float | None = None  # step of the kept factor (None: none kept)
        self.factor_point: tuple | None = None  # (t, q, v, q̈, λ) where it was formed
        self.iterations = 0
        self.sizes: list[float] = []  # position increments of the last attempt
        self.used_fresh = False  # the last attempt factored at least once
        self.velocity_residual = 0.0  # max |Φv + φ_t| of the Pfaffian rows at the last iterate
        s = settings
        self.coefficients = np.array(
            [
                self.am,
                self.af,
                self.gamma,
                self.beta,
                self.bp,
                self.gp,
                s.tol,
                s.reuse_rate,
                s.fd_step,
                float(s.rigid_jacobian == "exact"),
            ]
        )
        self.scales = increment_scales(asm)  # the unit of each coordinate's increment
        self.rotations = np.asarray(asm.rotation_vectors, dtype=np.int64)  # each step in a chart centred on these
        self.increments = np.empty(s.max_iterations)  # the scaled position increment of each iteration of a step
        self.python_arguments = KernelArguments.python(asm.n_dofs)
        self.compiled: CompiledSteps | None = None  # the terms in the kernel, and batches of steps, where allowed
        if CompiledSteps.available(asm):
            self.compiled = CompiledSteps(asm, self.coefficients, self.scales, s.max_iterations)

    def _factor(self, ws, qdd, lam, dt: float) -> None:
        """Form and factor the iteration matrix of step dt at the iterate of workspace ``ws`` (its flexible
        Jacobians' pass also gives the iterate's internal force, which the residual then reads)."""
        A_r, A_f = self.residual.iteration_matrix(ws, qdd, lam, c_m=1.0, c_v=self.gp * dt, c_q=self.bp * dt * dt)
        self.solver.factor(A_r, A_f, sp.csr_matrix(ws.constraint_rows()[1]))
        self._kept_factor((ws.t, ws.q.copy(), ws.v.copy(), qdd.copy(), lam.copy()), dt, compiled=False)

    def restore_factor(self, dt: float, t: float, q, v, qdd, lam) -> None:
        """Form the kept iteration matrix again at the point (and step dt) where a checkpointed run
        formed it: the same inputs give the same factor, so Newton continues as it would have."""
        if self.compiled is not None:
            fq, fv, fqdd, flam = (np.array(x, dtype=float) for x in (q, v, qdd, lam))
            if self.compiled.factor(t, (fq, fv, fqdd, flam), dt) == 0:
                self.factor_dt, self.factor_point = dt, (float(t), fq, fv, fqdd, flam)
                self.solver.method = "dense (compiled step)"
                self.solver.factorizations += 1
                return
            self.compiled = None  # the Python route forms it (and names what fails)
        self._factor(self.asm.workspace(t, q, v), np.array(qdd, dtype=float), np.array(lam, dtype=float), dt)

    def _constraint_rhs(self, phi, Phi, ws, v, dt: float) -> np.ndarray:
        """−φ/(β′h²) of the position rows (Φ Δq = −φ with Δq = β′h² Δq̈); −(Φv + φ_t)/(γ′h) of the
        velocity-level (Pfaffian) rows (Φ Δv = −(Φv + φ_t) with Δv = γ′h Δq̈, the index-2 form)."""
        rhs = -phi / (self.bp * dt * dt)
        rows = self.asm.velocity_rows
        self.velocity_residual = 0.0
        if rows.any():
            phi_t = ws.constraint_rows()[3]
            residual = (Phi @ v)[rows] + phi_t[rows]
            self.velocity_residual = float(np.max(np.abs(residual)))
            rhs[rows] = -residual / (self.gp * dt)
        return rhs

    def step(self, s: AlphaState, dt: float, tau: np.ndarray) -> tuple[AlphaState, int]:
        """The step of dt from ``s`` with inputs τ held, by the one Newton kernel
        (:func:`~flexbody.solvers.compiled_alpha.alpha_iterations`) for every model: it forms the predictor and
        updates the iterate; this driver factors the iteration matrix where it asks and, for a model without
        compiled terms, computes the Newton correction at the iterate's workspace. Raises StepFailedError when
        Newton does not converge; a compiled model's step the kernel cannot take (terms not finite, a radial row
        of zero length, a singular matrix) is taken by the Python route, which then takes the following ones."""
        t1, compiled = s.t + dt, self.compiled
        state = (s.q, s.v, s.qdd, s.a, s.lam)
        out = tuple(np.empty_like(x) for x in state)
        correction = (np.empty(self.asm.n_dofs), np.empty(self.asm.n_constraints))
        local = step_chart_arrays(self.asm.n_dofs)  # the iterate in the step's chart of its rotation vectors
        loop, tau = new_loop(self.factor_dt != dt), np.array(tau, dtype=float)
        arrays = compiled.arguments if compiled is not None else self.python_arguments
        drive = compiled.drive(t1) if compiled is not None else arrays.drive
        pending, made, self.used_fresh = None, 0, False  # pending: the workspace of the iterate just factored
        while True:
            status = alpha_iterations(
                arrays.program,
                compiled is not None,
                drive,
                state,
                tau,
                dt,
                self.coefficients,
                self.scales,
                self.settings.max_iterations,
                loop,
                arrays.work,
                arrays.factor,
                arrays.matrix,
                out,
                self.increments,
                correction,
                self.rotations,
                local,
            )
            if status == NEED_FACTOR:
                if compiled is not None:
                    status = compiled.factor_matrix()
                    if status != OK:
                        break
                    self._kept_factor((t1, *(x.copy() for x in (out[0], out[1], out[2], out[4]))), dt, compiled=True)
                else:
                    pending = self._workspace(t1, out[0], out[1])
                    self._factor(pending, out[2], out[4], dt)
                made, loop[2], loop[3] = made + 1, 0.0, 1.0
            elif status == NEED_CORRECTION:
                ws = pending if pending is not None else self._workspace(t1, out[0], out[1])
                pending = None
                self._correction(ws, out, tau, dt=dt, loop=loop, correction=correction)
            else:
                break
        k = int(loop[0])
        self.iterations += k
        self.sizes = [float(x) for x in self.increments[:k]]
        self.used_fresh = made > 0
        if status == OK:
            return AlphaState(t1, *out), k
        self.factor_dt = None
        if status == NOT_CONVERGED:
            raise self._not_converged(t1, dt)
        log.info("t = %.6g s: the compiled step declined (status %d); the Python route continues", s.t, status)
        self.compiled = None
        return self.step(s, dt, tau)

    def _not_converged(self, t1: float, dt: float) -> StepFailedError:
        """The failure of a step dt ending at t1, with the last position increment and the step's tolerance."""
        size = self.sizes[-1] if self.sizes else float("nan")
        return StepFailedError(
            f"Newton did not converge in {self.settings.max_iterations} iterations at "
            f"t = {t1:.9g} s (last position increment {size:.3e} in units of its coordinates, tol "
            f"{step_tolerance(self.settings.tol, dt):.1e})"
        )

    def _workspace(self, t: float, q: np.ndarray, v: np.ndarray):
        """The workspace of a Newton iterate; a state that is not finite fails the step (it is retried smaller)."""
        if not (all_finite(q) and all_finite(v)):
            raise StepFailedError(f"NaN/Inf in the iterate at t = {t:.9g} s")
        return self.asm.workspace(t, q, v)

    def _correction(self, ws, out: tuple, tau: np.ndarray, *, dt: float, loop: np.ndarray, correction: tuple) -> None:
        """The Newton correction of a model without compiled terms at the iterate ``out`` (workspace ``ws``):
        [[A, Φᵀ], [Φ, 0]] [Δq̈; −Δλ] = [−r; rhs] into ``correction``, the velocity residual into loop[5]."""
        _, _, qdd, _, lam = out
        r, phi, Phi = self.residual.evaluate(ws, qdd, lam, tau)
        if not (all_finite(r) and all_finite(phi)):
            raise StepFailedError(f"NaN/Inf in the residual at t = {ws.t:.9g} s")
        dqdd, y = self.solver.solve(-r, self._constraint_rhs(phi, Phi, ws, out[1], dt))
        correction[0][:], correction[1][:] = dqdd, y
        loop[5], loop[6] = self.velocity_residual, 1.0

    def _kept_factor(self, point: tuple, dt: float, *, compiled: bool) -> None:
        """Bookkeeping of a new factor formed at ``point`` = (t, q, v, q̈, λ) for steps of dt."""
        self.factor_dt, self.factor_point = dt, point
        if compiled:
            self.solver.factorizations += 1
            self.solver.method = "dense (compiled step)"

    def batch(self, s: AlphaState, t_end: float, dt: float, *, tau: np.ndarray, tau_prev: np.ndarray, run: dict):
        """Up to :data:`BATCH_STEPS` steps of dt from ``s`` (the last one shortened to end at ``t_end``) in one
        compiled call (:meth:`CompiledSteps.run`; inputs held, no controller, nothing saved as it goes). ``run`` =
        {"k": steps so far, "easy": easy-step count, "work": the inputs' work [J], "record_every"}. Returns a
        :class:`BatchOutcome`; its ``failure`` is the StepFailedError of a step that did not converge, or None
        (also when the kernel declined a step, which the Python route then takes)."""
        end = t_end - 1e-12 * max(1.0, abs(t_end))
        compiled = self.compiled
        assert compiled is not None  # called while the compiled route takes the steps
        times: list[float] = []
        dts: list[float] = []
        t = s.t
        while len(times) < BATCH_STEPS and t < end:
            dts.append(min(dt, t_end - t))
            t = t + dts[-1]
            times.append(t)
        record = (run["k"] + 1 + np.arange(len(times))) % run["record_every"] == 0
        record[-1] |= t >= end
        state = tuple(x.copy() for x in (s.q, s.v, s.qdd, s.a, s.lam))
        drives = compiled.drives(times)
        tau_eff = (1.0 - self.gamma) * tau_prev + self.gamma * tau
        batch = compiled.run(
            np.array(times),
            np.array(dts),
            drives,
            record,
            state,
            tau=tau,
            tau_eff=tau_eff,
            factor_dt=self.factor_dt,
            easy=run["easy"],
            work=run["work"],
        )
        self.iterations += batch.iterations
        accepted_factors = batch.factorizations - batch.failed_factorizations
        if accepted_factors:
            self.solver.factorizations += accepted_factors
            self.solver.method = "dense (compiled step)"
            self.factor_point = batch.point
        self.factor_dt = batch.factor_dt
        if batch.accepted:
            s = AlphaState(float(times[batch.accepted - 1]), *state)
        failure = None
        if batch.status != 0:
            failure = self._failed_in_batch(batch, times[batch.accepted], dts[batch.accepted])
        moving = np.any(drives[:, :, 1] != 0.0, axis=1)[record]
        return BatchOutcome(s, batch, moving, failure)

    def _failed_in_batch(self, run, t1: float, dt: float) -> StepFailedError | None:
        """The bookkeeping of the step of a batch that was not accepted: its StepFailedError when Newton did not
        converge; None when the kernel declined it (the Python route then takes it and the following steps)."""
        compiled = self.compiled
        assert compiled is not None  # a batch ran
        k = run.failed_iterations
        self.iterations += k
        self.sizes = [float(x) for x in compiled.sizes[:k]]
        self.used_fresh = run.failed_factorizations > 0
        if run.failed_factorizations:
            self._kept_factor(run.point, dt, compiled=True)
            self.solver.factorizations += run.failed_factorizations - 1
        self.factor_dt = None
        if run.status == NOT_CONVERGED:
            return self._not_converged(t1, dt)
        log.info("t = %.6g s: the compiled step declined (status %d); the Python route continues", t1 - dt, run.status)
        self.compiled = None
        return None


BATCH_STEPS = 256
"""Steps of one compiled batch (:meth:`AlphaStepper.batch`)."""
