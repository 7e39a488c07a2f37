"""The stepping loop of a generalized-α run (:class:`AlphaRun`): steps by the one Newton kernel
(:class:`~flexbody.solvers.generalized_alpha.AlphaStepper`), in compiled batches where nothing is called or written
per step, the step-size control (a failed step is retried with a new iteration matrix, then with half the step down
to ``dt_min``; the step grows back after ``grow_after`` easy steps), the inputs' work and the dissipated work, the
controller's updates, the recorded rows and the checkpoints of a run saved as it goes.

A run saved as it goes checkpoints the integrator's state, the step-size control (dt, easy steps, patience, step
count), the input of the previous step, the statistics and the point (t, q, v, q̈, λ) at which the kept iteration
matrix was formed; a run resumed from the checkpoint forms that matrix again there, so it takes exactly the Newton
iterates of the uninterrupted run.
"""

from __future__ import annotations

import logging
import time
from dataclasses import asdict
from typing import Any

import numpy as np

from ..errors import ConvergenceError, StateError
from ..linalg.saddle_point import SaddlePointSolver
from .alpha_records import record_rows, record_state, response, write_checkpoint
from .alpha_start import initial_acceleration
from .explicit import StepInputs
from .generalized_alpha import AlphaState, AlphaStepper, StepFailedError
from .input_breaks import breakpoints_of, jump_points_of, jumps_at, next_breakpoint

log = logging.getLogger(__name__)

__all__ = ["AlphaRun"]

COUNTED = ("factorizations", "force_calls", "jacobian_calls", "force_seconds", "jacobian_seconds")
"""The work counters a run reports in its statistics (continued across a resume)."""


class AlphaRun:
    """One generalized-α run of a :class:`~flexbody.solvers.run_plan.RunPlan` on an assembled system from ``start``
    (a :class:`~flexbody.solvers.runner.Start`: a state, or a checkpoint), run by :meth:`run`: τ from ``tau_at(ws)``
    (the controller's, when given, which is updated once per accepted step), rows into ``recorder``, what is due to
    ``writer`` (None: nothing saved), progress to ``context``."""

    def __init__(self, asm, plan, tau_at, recorder, *, start, controller, writer, context):
        self.asm, self.plan, self.settings = asm, plan, plan.integrator
        self.tau_at, self.recorder, self.controller, self.writer, self.context = (
            tau_at,
            recorder,
            controller,
            writer,
            context,
        )
        self.stepper = AlphaStepper(asm, self.settings)
        self.breaks, self.jumps = breakpoints_of(tau_at), jump_points_of(tau_at)  # where steps end and restart
        self.restart_solver = SaddlePointSolver(asm.n_rigid)  # a restart's q̈⁺, leaving the kept iteration matrix
        self.dt_min = self.settings.dt_min if self.settings.dt_min is not None else self.settings.dt / 64.0
        if int(asm.n_constraints) and self.stepper.am == self.stepper.af:  # γ = ½: no numerical damping at all
            log.warning(
                "generalized-α without numerical damping (rho_inf = 1, alpha_m = alpha_f) on %d constraint "
                "rows: their multipliers are not damped and may grow over a long run; use rho_inf < 1 (0.9 by "
                "default) for long runs",
                asm.n_constraints,
            )
        self.ws: Any = None  # the workspace of ``state`` (None after a batch, until needed)
        self.tau = self.tau_prev = np.zeros(asm.n_dofs)
        self.power: float | None = None  # the Kelvin–Voigt power at ``state``, once known
        self.stats: dict[str, Any] = {}
        self.counted: dict = {}  # work counters of the run before a checkpoint
        self.dt, self.easy, self.k, self.patience = self.settings.dt, 0, 0, self.settings.grow_after
        self.state = self._fresh(start) if start.checkpoint is None else self._from_checkpoint(start.checkpoint)

    # ------------------------------------------------------------------ start
    def _fresh(self, start) -> AlphaState:
        """The first state (consistent accelerations and multipliers), recorded."""
        ws = self.asm.workspace(start.t, start.q, start.v) if start.workspace is None else start.workspace
        self.ws, self.tau = ws, self._inputs(ws)
        qdd, lam = initial_acceleration(ws, self.tau, self.stepper.solver)
        state = AlphaState(float(start.t), start.q.copy(), start.v.copy(), qdd=qdd, a=qdd.copy(), lam=lam)
        self.tau_prev = self.tau
        self.stats = {"steps": 0, "rejected": 0, "newton_iterations": 0}
        self.stats.update(wall_seconds=0.0, applied_work=0.0, dissipated=0.0)
        record_state(self.recorder, ws, state, self.tau, iterations=0, dt=self.dt, stats=self.stats)
        return state

    def _from_checkpoint(self, checkpoint: tuple[dict, dict]) -> AlphaState:
        """The checkpoint's state, with its step-size control, statistics and kept iteration matrix."""
        scalars, arrays = checkpoint
        q, v, qdd, a, lam = (np.array(arrays[key], dtype=float) for key in ("q", "v", "qdd", "a", "lam"))
        state = AlphaState(float(scalars["t"]), q, v, qdd=qdd, a=a, lam=lam)
        self.ws = self.asm.workspace(state.t, q, v)
        self.tau, self.tau_prev = self._inputs(self.ws), np.array(arrays["tau_prev"], dtype=float)
        self.stats = dict(scalars["stats"])
        self.dt, self.easy = float(scalars["dt"]), int(scalars["easy"])
        self.k, self.patience = int(scalars["k"]), int(scalars["patience"])
        self.counted = dict(scalars["counters"])
        if scalars.get("factor_dt") is not None:
            point = (np.array(arrays["factor_" + key], dtype=float) for key in ("q", "v", "qdd", "lam"))
            self.stepper.restore_factor(float(scalars["factor_dt"]), float(scalars["factor_t"]), *point)
        return state

    # ------------------------------------------------------------------ the loop
    def run(self) -> dict:
        """Integrate from the start to the plan's end; the run's statistics. ConvergenceError when a step fails at
        ``dt_min`` (the recorder keeps every state recorded)."""
        wall_before, clock = float(self.stats["wall_seconds"]), time.perf_counter()
        batches = (  # inputs held, nothing called or written per step: compiled batches at the nominal step
            self.stepper.compiled is not None
            and getattr(self.tau_at, "held", None) is not None
            and self.controller is None
            and self.writer is None
            and not self.asm.rotation_vectors.size
        )
        t_end = self.plan.t_end
        while self.state.t < t_end - 1e-12 * max(1.0, abs(t_end)):
            if batches and self.stepper.compiled is not None and self.dt == self.settings.dt:
                self._batch()
            else:
                self._step(wall_before, clock)
        self.stats["wall_seconds"] = wall_before + time.perf_counter() - clock
        return self._statistics()

    def _step(self, wall_before: float, clock: float) -> None:
        """One step from ``state``, ending on the inputs' next breakpoint if it comes first: accepted (recorded, the
        accelerations restarted where the input jumps, checkpointed when due) or rejected (dt reduced)."""
        dt_step = min(self.dt, self.plan.t_end - self.state.t)
        at = next_breakpoint(self.breaks, self.state.t, self.settings.dt)
        if at is not None:
            dt_step = min(dt_step, at - self.state.t)
        tau = self._step_inputs(dt_step)
        try:
            new, iterations = self.stepper.step(self.state, dt_step, tau)
        except StepFailedError as exc:
            self._rejected(exc, dt_step)
            return
        self._accept(new, iterations, dt_step, tau)
        last = self.state.t >= self.plan.t_end - 1e-12 * max(1.0, abs(self.plan.t_end))
        if not last:
            self.tau = self._inputs(self.ws)
        if self.k % self.plan.record_every == 0 or last:
            record_state(
                self.recorder, self.ws, self.state, self.tau, iterations=iterations, dt=dt_step, stats=self.stats
            )
        if not last and jumps_at(self.jumps, self.state.t, self.settings.dt):
            self._restart()
        self.context.report(self.state.t, self.plan.t0, self.plan.t_end)
        if self.writer is not None:
            self.writer.journal(self.recorder)
            if not last and self.writer.due(self.recorder):
                self._checkpoint(wall_before + time.perf_counter() - clock)

    def _step_inputs(self, dt_step: float) -> np.ndarray:
        """τ of the equations at the end of the step of dt_step from ``state``: an input signal's value there, within
        the step (:mod:`flexbody.solvers.input_breaks`), else the input at the step's start, held over it."""
        if not isinstance(self.tau_at, StepInputs):
            return self.tau
        return self.tau_at.within(self.state.t, self.state.t + dt_step)

    def _accept(self, new: AlphaState, iterations: int, dt_step: float, tau: np.ndarray) -> None:
        """Take the converged step to ``new``: the inputs' work as the scheme applies them (the step's
        acceleration blend mixes the input of the previous step, in q̈_n, and this step's ``tau``, in q̈_{n+1}, with the
        weights of v's update), the dissipated work by the trapezoid rule, a chart switch of rotation vectors
        longer than π, the controller's update and the step-size control."""
        asm, stepper, state = self.asm, self.stepper, self.state
        self.stats["newton_iterations"] += iterations
        tau_eff = (1.0 - stepper.gamma) * self.tau_prev + stepper.gamma * tau
        self.stats["applied_work"] += 0.5 * dt_step * float(tau_eff @ (state.v + new.v))
        self.tau_prev = tau
        if self.power is None:  # the power at the end of the step before, unless known
            self.power = (self.ws if self.ws is not None else asm.workspace(state.t, state.q, state.v)).viscous_power()
        start, self.ws = self.power, asm.workspace(new.t, new.q, new.v)  # the new state's workspace, for all
        self.power = self.ws.viscous_power()
        self.stats["dissipated"] += 0.5 * dt_step * start + 0.5 * dt_step * self.power  # trapezoid
        self.state, self.k = new, self.k + 1
        switched = asm.switch_charts(new.q, new.v, new.qdd, new.a)
        if switched is not None:  # a rotation vector passed π: its other chart
            q, v, qdd, a = switched
            self.state = AlphaState(new.t, q, v, qdd=qdd, a=a, lam=new.lam)
            stepper.factor_dt = None
            self.ws = asm.workspace(self.state.t, self.state.q, self.state.v)
        self.stats["steps"] = self.k
        if self.controller is not None and hasattr(self.controller, "update"):
            self.controller.update(self.state.t, self.ws, response(self.ws, self.state))
        self.easy = self.easy + 1 if iterations <= self.settings.max_iterations // 2 else 0
        if self.easy >= self.patience and self.dt < self.settings.dt:
            self.dt, self.easy = min(2.0 * self.dt, self.settings.dt), 0

    def _restart(self) -> None:
        """Start afresh at an input's jump (:mod:`flexbody.solvers.input_breaks`): q̈⁺ and λ⁺ consistent with the
        new input [DE-7] and the algorithmic a = q̈⁺, as at the start of a run; the recorded row keeps the step's
        end."""
        s = self.state
        qdd, lam = initial_acceleration(self.ws, self.tau, self.restart_solver)
        self.state, self.tau_prev = AlphaState(s.t, s.q, s.v, qdd=qdd, a=qdd.copy(), lam=lam), self.tau

    def _batch(self) -> None:
        """Steps in one compiled call, their rows recorded as single steps record theirs."""
        stats = self.stats
        run = {"k": self.k, "easy": self.easy, "work": stats["applied_work"], "record_every": self.plan.record_every}
        outcome = self.stepper.batch(
            self.state, self.plan.t_end, self.dt, tau=self.tau, tau_prev=self.tau_prev, run=run
        )
        batch = outcome.batch
        stats["newton_iterations"] += batch.iterations
        stats["applied_work"] = batch.work
        stats["steps"] = self.k = self.k + batch.accepted
        self.easy = batch.easy
        record_rows(self.recorder, batch.rows, self.tau, stats["dissipated"], outcome.moving)
        self.state, self.tau_prev, self.power, self.ws = outcome.state, self.tau, None, None
        self.context.report(self.state.t, self.plan.t0, self.plan.t_end)
        if outcome.failure is not None:
            self._rejected(outcome.failure, min(self.dt, self.plan.t_end - self.state.t))

    def _rejected(self, exc: Exception, dt_step: float) -> None:
        """After a step of dt_step from ``state`` failed: retry with a new iteration matrix, else with half the step
        (growing back more cautiously after each rejection); ConvergenceError below dt_min."""
        self.stats["rejected"] += 1
        stepper, t = self.stepper, self.state.t
        stepper.factor_dt = None
        if not stepper.used_fresh:  # only a kept factor was tried: retry with a new one
            log.info("t = %.6g s: %s; retrying with a new iteration matrix", t, exc)
            return
        if dt_step / 2.0 < self.dt_min:
            raise ConvergenceError(
                f"generalized-α: step at t = {t:.9g} s failed with dt down to "
                f"{dt_step:.3e} s (dt_min = {self.dt_min:.3e} s): {exc}",
                list(stepper.sizes),
            ) from None
        log.info("t = %.6g s: %s; retrying with dt = %.3e s", t, exc, dt_step / 2.0)
        self.dt, self.patience = dt_step / 2.0, min(2 * self.patience, 64)

    # ------------------------------------------------------------------ inputs, statistics, checkpoints
    def _inputs(self, ws) -> np.ndarray:
        """τ (n,) at the state of workspace ``ws``; StateError naming the time when it is not n finite numbers."""
        tau, n = np.asarray(self.tau_at(ws), dtype=float), self.asm.n_dofs
        if tau.shape != (n,) or not np.all(np.isfinite(tau)):
            raise StateError(
                f"applied forces at t = {ws.t:.9g} s must be {n} finite numbers, got shape "
                f"{tau.shape}" + ("" if tau.shape != (n,) else " with NaN/Inf")
            )
        return tau

    def _counters(self) -> dict:
        stepper = self.stepper
        now = dict(
            zip(
                COUNTED,
                (
                    stepper.solver.factorizations,
                    stepper.residual.force_calls,
                    stepper.residual.jacobian_calls,
                    stepper.residual.force_time,
                    stepper.residual.jacobian_time,
                ),
            )
        )
        return {key: value + self.counted.get(key, 0) for key, value in now.items()}

    def _statistics(self) -> dict:
        stats, settings = self.stats, self.settings
        stats.update(
            self._counters(),
            linear_solver=self.stepper.solver.method,
            mass_factorizations=self.asm.flexible.mass.factorizations,
            integrator_settings=asdict(settings),
            parameters=dict(zip(("alpha_m", "alpha_f", "gamma", "beta"), settings.parameters())),
        )
        return stats

    def _checkpoint(self, wall_seconds: float) -> None:
        control = {"dt": self.dt, "easy": self.easy, "k": self.k, "patience": self.patience}
        write_checkpoint(
            self.writer,
            self.recorder,
            self.stepper,
            self.state,
            tau_prev=self.tau_prev,
            stats=dict(self.stats, wall_seconds=wall_seconds),
            counters=self._counters(),
            control=control,
        )
