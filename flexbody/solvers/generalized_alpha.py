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
with K = ∂r/∂q, C = ∂r/∂v: the flexible tangent and Kelvin–Voigt damping matrices (sparse, exact) and,
for the joint coordinates, central differences of the rigid rows (including M_q q̈ and the constraint
Hessian term −∂(Φᵀλ)/∂q). The saddle point is solved by :class:`flexbody.linalg.saddle_point.SaddlePointSolver`; its
factor is kept across iterations and steps while Newton contracts fast enough (``reuse_rate``), and
remade otherwise. A step that does not converge is retried with half the step (down to ``dt_min``);
the step grows back after ``grow_after`` easy steps.

A controller is called once per step at (t_n, q_n, v_n) and its actuator inputs are held over the step.

A run saved as it goes (``simulate(..., save_to=…)``) checkpoints the :class:`_Step` state, the step-size
control (dt, easy steps, patience, step count), the input of the previous step, the statistics and the
point (t, q, v, q̈, λ, dt) at which the kept iteration matrix was formed; a run resumed from the checkpoint
forms that matrix again there, so it takes exactly the Newton iterates of the uninterrupted run.
"""

from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..errors import ConvergenceError, StateError
from ..linalg.saddle_point import SaddlePointSolver
from .alpha_records import _checkpoint, _record, _record_rows, _response
from .alpha_settings import GeneralizedAlpha
from .alpha_start import initial_acceleration
from .compiled_alpha import (
    NEED_CORRECTION,
    NEED_FACTOR,
    NOT_CONVERGED,
    OK,
    CompiledSteps,
    KernelArguments,
    alpha_iterations,
    new_loop,
)
from .constrained_equations import EquationResidual

log = logging.getLogger(__name__)

__all__ = ["GeneralizedAlpha", "simulate_implicit"]


class _StepFailedError(Exception):
    """Newton did not converge within the iterations allowed (the step is retried smaller)."""


@dataclass
class _Step:
    """The integrator's state at one time: t, q, v, q̈, algorithmic a, λ."""

    t: float
    q: np.ndarray
    v: np.ndarray
    qdd: np.ndarray
    a: np.ndarray
    lam: np.ndarray


class _Stepper:
    """One generalized-α step with Newton and a kept iteration matrix."""

    def __init__(self, asm, settings: GeneralizedAlpha):
        self.asm, self.settings = asm, settings
        self.residual = EquationResidual(asm, settings.fd_step)
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
            [self.am, self.af, self.gamma, self.beta, self.bp, self.gp, s.tol, s.reuse_rate, s.fd_step]
        )
        self.increments = np.empty(s.max_iterations)  # the position increment of each iteration of a step
        self.python_arguments = KernelArguments.python(asm.n_dofs)
        self.compiled: CompiledSteps | None = None  # the terms in the kernel, and batches of steps, where allowed
        if CompiledSteps.available(asm):
            self.compiled = CompiledSteps(asm, self.coefficients, s.max_iterations)

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
            if self.compiled.factor(t, fq, fv, fqdd, flam, dt) == 0:
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

    def step(self, s: _Step, dt: float, tau: np.ndarray) -> tuple[_Step, int]:
        """The step of dt from ``s`` with inputs τ held, by the one Newton kernel
        (:func:`~flexbody.solvers.compiled_alpha.alpha_iterations`) for every model: it forms the predictor and
        updates the iterate; this driver factors the iteration matrix where it asks and, for a model without
        compiled terms, computes the Newton correction at the iterate's workspace. Raises _StepFailedError when
        Newton does not converge; a compiled model's step the kernel cannot take (terms not finite, a radial row
        of zero length, a singular matrix) is taken by the Python route, which then takes the following ones."""
        t1, compiled = s.t + dt, self.compiled
        state = (s.q, s.v, s.qdd, s.a, s.lam)
        out = tuple(np.empty_like(x) for x in state)
        correction = (np.empty(self.asm.n_dofs), np.empty(self.asm.n_constraints))
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
                self.settings.max_iterations,
                loop,
                arrays.work,
                arrays.factor,
                arrays.matrix,
                out,
                self.increments,
                correction,
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
                self._correction(ws, out, tau, dt, loop, correction)
            else:
                break
        k = int(loop[0])
        self.iterations += k
        self.sizes = [float(x) for x in self.increments[:k]]
        self.used_fresh = made > 0
        if status == OK:
            return _Step(t1, *out), k
        self.factor_dt = None
        if status == NOT_CONVERGED:
            raise self._not_converged(t1, out[0])
        log.info("t = %.6g s: the compiled step declined (status %d); the Python route continues", s.t, status)
        self.compiled = None
        return self.step(s, dt, tau)

    def _not_converged(self, t1: float, q: np.ndarray) -> _StepFailedError:
        """The failure of a step ending at t1 whose last iterate is at q, with the last position increment."""
        scale = max(1.0, float(np.max(np.abs(q)))) if q.size else 1.0
        size = self.sizes[-1] if self.sizes else float("nan")
        return _StepFailedError(
            f"Newton did not converge in {self.settings.max_iterations} iterations at "
            f"t = {t1:.9g} s (last position increment {size:.3e}, tol {self.settings.tol * scale:.1e})"
        )

    def _workspace(self, t: float, q: np.ndarray, v: np.ndarray):
        """The workspace of a Newton iterate; a state that is not finite fails the step (it is retried smaller)."""
        if not (np.all(np.isfinite(q)) and np.all(np.isfinite(v))):
            raise _StepFailedError(f"NaN/Inf in the iterate at t = {t:.9g} s")
        return self.asm.workspace(t, q, v)

    def _correction(self, ws, out: tuple, tau: np.ndarray, dt: float, loop: np.ndarray, correction: tuple) -> None:
        """The Newton correction of a model without compiled terms at the iterate ``out`` (workspace ``ws``):
        [[A, Φᵀ], [Φ, 0]] [Δq̈; −Δλ] = [−r; rhs] into ``correction``, the velocity residual into loop[5]."""
        _, _, qdd, _, lam = out
        r, phi, Phi = self.residual.evaluate(ws, qdd, lam, tau)
        if not (np.all(np.isfinite(r)) and np.all(np.isfinite(phi))):
            raise _StepFailedError(f"NaN/Inf in the residual at t = {ws.t:.9g} s")
        dqdd, y = self.solver.solve(-r, self._constraint_rhs(phi, Phi, ws, out[1], dt))
        correction[0][:], correction[1][:] = dqdd, y
        loop[5], loop[6] = self.velocity_residual, 1.0

    def _kept_factor(self, point: tuple, dt: float, *, compiled: bool) -> None:
        """Bookkeeping of a new factor formed at ``point`` = (t, q, v, q̈, λ) for steps of dt."""
        self.factor_dt, self.factor_point = dt, point
        if compiled:
            self.solver.factorizations += 1
            self.solver.method = "dense (compiled step)"

    def batch(
        self,
        s: _Step,
        t_end: float,
        dt: float,
        tau: np.ndarray,
        tau_prev: np.ndarray,
        k: int,
        easy: int,
        stats: dict,
        recorder,
        record_every: int,
    ):
        """Up to :data:`BATCH_STEPS` steps of dt from ``s`` (the last one shortened to end at ``t_end``) in one
        compiled call (:meth:`CompiledSteps.run`; inputs held, no controller, nothing saved as it goes), their
        rows recorded as :func:`simulate_implicit` records them. Returns (state, steps, easy steps, failure): the
        failure is the _StepFailedError of a step that did not converge, or None (also when the kernel declined a step,
        which the Python route then takes)."""
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
        record = (k + 1 + np.arange(len(times))) % record_every == 0
        record[-1] |= t >= end
        state = tuple(x.copy() for x in (s.q, s.v, s.qdd, s.a, s.lam))
        drives = compiled.drives(times)
        run = compiled.run(
            np.array(times),
            np.array(dts),
            drives,
            record,
            state,
            tau,
            (1.0 - self.gamma) * tau_prev + self.gamma * tau,
            self.factor_dt,
            easy,
            stats["applied_work"],
        )
        self.iterations += run.iterations
        accepted_factors = run.factorizations - run.failed_factorizations
        if accepted_factors:
            self.solver.factorizations += accepted_factors
            self.solver.method = "dense (compiled step)"
            self.factor_point = run.point
        self.factor_dt = run.factor_dt
        stats["newton_iterations"] += run.iterations
        stats["applied_work"] = run.work
        stats["steps"] = k = k + run.accepted
        _record_rows(recorder, run.rows, tau, stats["dissipated"], np.any(drives[:, :, 1] != 0.0, axis=1)[record])
        if run.accepted:
            s = _Step(float(times[run.accepted - 1]), *state)
        if run.status == 0:
            return s, k, run.easy, None
        return s, k, run.easy, self._failed_in_batch(run, times[run.accepted], dts[run.accepted])

    def _failed_in_batch(self, run, t1: float, dt: float) -> _StepFailedError | None:
        """The bookkeeping of the step of a batch that was not accepted: its _StepFailedError when Newton did not
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
            return self._not_converged(t1, run.iterate[0])
        log.info("t = %.6g s: the compiled step declined (status %d); the Python route continues", t1 - dt, run.status)
        self.compiled = None
        return None


BATCH_STEPS = 256
"""Steps of one compiled batch (:meth:`_Stepper.batch`)."""


def simulate_implicit(
    asm,
    t_end: float,
    settings: GeneralizedAlpha,
    tau_function,
    recorder,
    *,
    q,
    v,
    t0: float,
    record_every: int,
    controller=None,
    saver=None,
    start=None,
    report=None,
    workspace=None,
) -> dict:
    """Integrate from t0 to t_end with :class:`GeneralizedAlpha`; histories go to ``recorder`` (the
    recorder of :func:`flexbody.simulate`). Returns run statistics. Raises ConvergenceError when a step
    fails at ``dt_min`` (the recorder keeps every state recorded so far).

    ``saver`` (the writer of ``simulate(..., save_to=…)``): after a step, when ``saver.due(recorder)``,
    ``saver.write(recorder, state, arrays)`` stores the rows and the checkpoint: ``state`` the JSON
    scalars (t, dt, easy, patience, k, statistics so far, time and step of the kept iteration matrix),
    ``arrays`` q, v, qdd, a, lam, tau_prev and the q, v, q̈, λ at which that matrix was formed. ``start`` =
    (state, arrays) of such a checkpoint continues that run from it, exactly as it would have gone on
    (q, v given are the checkpoint's; t0 stays the run's start, for progress reports).
    """
    stepper = _Stepper(asm, settings)
    dt_min = settings.dt_min if settings.dt_min is not None else settings.dt / 64.0
    if int(asm.n_constraints) and stepper.am == stepper.af:  # γ = ½: no numerical damping at all
        log.warning(
            "generalized-α without numerical damping (rho_inf = 1, alpha_m = alpha_f) on %d constraint "
            "rows: their multipliers are not damped and may grow over a long run; use rho_inf < 1 (0.9 by "
            "default) for long runs",
            asm.n_constraints,
        )
    if start is None:
        ws = asm.workspace(t0, q, v) if workspace is None else workspace  # the consistent start's, when it made one
        tau = _checked_tau(tau_function, ws)
        qdd, lam = initial_acceleration(ws, tau, stepper.solver)
        state = _Step(float(t0), q.copy(), v.copy(), qdd, qdd.copy(), lam)
        tau_prev = tau
        stats: dict[str, Any] = {
            "steps": 0,
            "rejected": 0,
            "newton_iterations": 0,
            "wall_seconds": 0.0,
            "applied_work": 0.0,
            "dissipated": 0.0,
        }
        dt, easy, k, patience = settings.dt, 0, 0, settings.grow_after
        counted = {}
        _record(recorder, ws, state, tau, 0, dt, stats)
    else:
        scalars, arrays = start
        state = _Step(
            float(scalars["t"]), *(np.array(arrays[key], dtype=float) for key in ("q", "v", "qdd", "a", "lam"))
        )
        ws = asm.workspace(state.t, state.q, state.v)
        tau = _checked_tau(tau_function, ws)
        tau_prev = np.array(arrays["tau_prev"], dtype=float)
        stats = dict(scalars["stats"])
        dt, easy, k, patience = (
            float(scalars["dt"]),
            int(scalars["easy"]),
            int(scalars["k"]),
            int(scalars["patience"]),
        )
        counted = dict(scalars["counters"])  # work counters of the run before the checkpoint
        if scalars.get("factor_dt") is not None:
            point = (np.array(arrays["factor_" + key], dtype=float) for key in ("q", "v", "qdd", "lam"))
            stepper.restore_factor(float(scalars["factor_dt"]), float(scalars["factor_t"]), *point)
    wall_before = float(stats["wall_seconds"])
    clock = time.perf_counter()

    def counters() -> dict:
        now = {
            "factorizations": stepper.solver.factorizations,
            "force_calls": stepper.residual.force_calls,
            "jacobian_calls": stepper.residual.jacobian_calls,
            "force_seconds": stepper.residual.force_time,
            "jacobian_seconds": stepper.residual.jacobian_time,
        }
        return {key: value + counted.get(key, 0) for key, value in now.items()}

    def rejected(exc: _StepFailedError, dt_step: float) -> tuple[float, int]:
        """(dt, patience) after a step of dt_step from ``state`` failed; ConvergenceError below dt_min."""
        stats["rejected"] += 1
        if not stepper.used_fresh:  # only a kept factor was tried: retry with a new one
            stepper.factor_dt = None
            log.info("t = %.6g s: %s; retrying with a new iteration matrix", state.t, exc)
            return dt, patience
        stepper.factor_dt = None
        if dt_step / 2.0 < dt_min:
            raise ConvergenceError(
                f"generalized-α: step at t = {state.t:.9g} s failed with dt down to "
                f"{dt_step:.3e} s (dt_min = {dt_min:.3e} s): {exc}",
                list(stepper.sizes),
            ) from None
        log.info("t = %.6g s: %s; retrying with dt = %.3e s", state.t, exc, dt_step / 2.0)
        return dt_step / 2.0, min(2 * patience, 64)  # grow back more cautiously after each rejection

    # inputs held, nothing to call or write per step: steps in compiled batches while at the nominal step
    batches = (
        stepper.compiled is not None
        and getattr(tau_function, "held", None) is not None
        and controller is None
        and saver is None
        and not asm.rotation_vectors.size
    )
    power = None  # Kelvin–Voigt power at `state`, once known
    while state.t < t_end - 1e-12 * max(1.0, abs(t_end)):
        dt_step = min(dt, t_end - state.t)
        if batches and stepper.compiled is not None and dt == settings.dt:
            state, k, easy, failure = stepper.batch(
                state, t_end, dt, tau, tau_prev, k, easy, stats, recorder, record_every
            )
            tau_prev, power, ws = tau, None, None
            if report is not None:
                report(state.t, t0, t_end)
            if failure is not None:
                dt, patience = rejected(failure, min(dt, t_end - state.t))
            continue
        try:
            new, iterations = stepper.step(state, dt_step, tau)
        except _StepFailedError as exc:
            dt, patience = rejected(exc, dt_step)
            continue
        stats["newton_iterations"] += iterations
        # work of the inputs as the scheme applies them: the step's acceleration blend mixes the input of
        # the previous step (in q̈_n) and the held one (in q̈_{n+1}) with the weights of v's update
        tau_eff = (1.0 - stepper.gamma) * tau_prev + stepper.gamma * tau
        stats["applied_work"] += 0.5 * dt_step * float(tau_eff @ (state.v + new.v))
        tau_prev = tau
        if power is None:  # the power at the end of the step before, unless known
            power = (ws if ws is not None else asm.workspace(state.t, state.q, state.v)).viscous_power()
        start, ws = power, asm.workspace(new.t, new.q, new.v)  # the new state's workspace: its every consumer
        power = ws.viscous_power()
        stats["dissipated"] += 0.5 * dt_step * start + 0.5 * dt_step * power  # trapezoid
        state, k = new, k + 1
        switched = asm.switch_charts(state.q, state.v, state.qdd, state.a)
        if switched is not None:  # a rotation vector passed π: its other chart
            q_s, v_s, qdd_s, a_s = switched
            state = _Step(state.t, q_s, v_s, qdd_s, a_s, state.lam)
            stepper.factor_dt = None
            ws = asm.workspace(state.t, state.q, state.v)
        stats["steps"] = k
        if controller is not None and hasattr(controller, "update"):
            controller.update(state.t, ws, _response(ws, state))
        easy = easy + 1 if iterations <= settings.max_iterations // 2 else 0
        if easy >= patience and dt < settings.dt:
            dt, easy = min(2.0 * dt, settings.dt), 0
        last = state.t >= t_end - 1e-12 * max(1.0, abs(t_end))
        if not last:
            tau = _checked_tau(tau_function, ws)
        if k % record_every == 0 or last:
            _record(recorder, ws, state, tau, iterations, dt_step, stats)
        if report is not None:
            report(state.t, t0, t_end)
        if saver is not None:
            saver.journal(recorder)
        if saver is not None and not last and saver.due(recorder):
            _checkpoint(
                saver,
                recorder,
                stepper,
                state,
                tau_prev,
                stats,
                counters(),
                dt=dt,
                easy=easy,
                k=k,
                patience=patience,
                wall_seconds=wall_before + time.perf_counter() - clock,
            )
    stats["wall_seconds"] = wall_before + time.perf_counter() - clock
    stats.update(
        counters(),
        linear_solver=stepper.solver.method,
        mass_factorizations=asm.flexible.mass.factorizations,
        integrator_settings=asdict(settings),
        parameters=dict(zip(("alpha_m", "alpha_f", "gamma", "beta"), settings.parameters())),
    )
    return stats


def _checked_tau(tau_at, ws) -> np.ndarray:
    """τ (n,) of the run at the state of workspace ``ws``; StateError naming the time when it is not n finite
    numbers."""
    tau, n = np.asarray(tau_at(ws), dtype=float), ws.asm.n_dofs
    if tau.shape != (n,) or not np.all(np.isfinite(tau)):
        raise StateError(
            f"applied forces at t = {ws.t:.9g} s must be {n} finite numbers, got shape "
            f"{tau.shape}" + ("" if tau.shape != (n,) else " with NaN/Inf")
        )
    return tau
