"""Explicit integration of q̇ = v, v̇ = a(t, q, v) [AG-36] with accelerations from the constrained forward
dynamics [AG-25]: the settings :class:`RK4` (fixed step) and :class:`Adaptive` (embedded Runge–Kutta with
error control), and their stepping loops with stabilisation, recording and checkpoints.
"""

from __future__ import annotations

import inspect
import itertools
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..dynamics import forward
from ..errors import ConvergenceError, FlexbodyError, StateError
from ..io.run_writer import RunWriter
from ..linalg.validation import check_setting
from .input_breaks import breakpoints_of, step_times
from .recorder import Recorder
from .stabilization import PositionCorrection, correct, finite, worst_rows
from .workspaces import workspace_of

log = logging.getLogger(__name__)


# --------------------------------------------------------------------------------------------- settings
@dataclass(frozen=True, kw_only=True)
class RK4:
    """Classical fixed-step 4th-order Runge–Kutta with step ``dt`` [s] (the last step is shortened to end
    exactly at ``t_end``)."""

    dt: float

    def __post_init__(self):
        check_setting("RK4", "dt", self.dt)


@dataclass(frozen=True, kw_only=True)
class Adaptive:
    """Adaptive Runge–Kutta via :func:`scipy.integrate.solve_ivp` (``method`` "DOP853", "RK45", "RK23").

    The run is split into output intervals of ``output_dt`` [s] (default: (t_end − t0)/100); the state is
    recorded and, if requested, stabilised (position correction) at each output time, where the adaptive
    solver is restarted from the corrected state.
    """

    rtol: float = 1e-8
    atol: float = 1e-10
    max_step: float = math.inf
    method: str = "DOP853"
    output_dt: float | None = None

    def __post_init__(self):
        if self.method not in ("DOP853", "RK45", "RK23"):
            raise FlexbodyError(
                f"Adaptive: method must be an explicit scipy method 'DOP853', 'RK45' or 'RK23', got {self.method!r}"
            )
        if self.output_dt is not None:
            check_setting("Adaptive", "output_dt", self.output_dt)
        check_setting("Adaptive", "rtol", self.rtol)
        check_setting("Adaptive", "atol", self.atol)
        if self.max_step != math.inf:
            check_setting("Adaptive", "max_step", self.max_step)


RK4_STABILITY = 2.0 * math.sqrt(2.0)
"""RK4's stability limit h·ω on the imaginary axis (undamped oscillation of angular frequency ω)."""

POWER_ITERATIONS = 30
"""Power iterations of M⁻¹K for the highest frequency (:func:`stable_rk4_step`)."""


def stable_rk4_step(asm, q: np.ndarray) -> float | None:
    """The largest step [s] with which RK4 keeps the flexible bodies' highest mode bounded, 2√2/ω_max, at the
    coordinates q (n,); None without flexible bodies.

    ω_max² is the Rayleigh quotient of M_f⁻¹K after :data:`POWER_ITERATIONS` power iterations from a fixed
    start (K the internal tangent at q, M_f the constant mass; constraints, which only lower the frequencies, are
    left out). The quotient never exceeds the true ω_max², so a step above this bound is unstable for sure."""
    if not getattr(asm, "sparse", False):
        return None
    fs = asm.flexible.slice
    K, M = asm.flexible.internal_tangent(q[fs]), asm.flexible.mass
    x = np.cos(1.7 * np.arange(K.shape[0]))  # a fixed start rich in every mode
    quotient = 0.0
    for _ in range(POWER_ITERATIONS):
        y = M.solve(K @ x)
        quotient = float(x @ (K @ x)) / float(x @ (M.matrix @ x))
        x = y / np.abs(y).max()
    return RK4_STABILITY / math.sqrt(quotient) if quotient > 0.0 else None


def check_rk4_step(asm, q: np.ndarray, settings: RK4) -> None:
    """FlexbodyError before the run when ``settings.dt`` is above :func:`stable_rk4_step` at q: the run would
    diverge within a few steps (energy growing by orders of magnitude per step) and end in NaN."""
    limit = stable_rk4_step(asm, q)
    if limit is not None and settings.dt > limit:
        raise FlexbodyError(
            f"simulate: RK4 dt = {settings.dt:.3g} s is above the stable step {limit:.3g} s of the "
            f"flexible bodies (their highest mode, {RK4_STABILITY / limit / (2 * math.pi):.3g} Hz, "
            f"grows without bound): use RK4(dt={0.9 * limit:.2g}) or less, Adaptive, or "
            f"GeneralizedAlpha (implicit: any dt)"
        )


# ------------------------------------------------------------------------------------- the right side
def tau_function(tau, asm) -> Callable:
    """τ at a state, ``tau_at(ws)`` of its workspace, from None, an array or a callable ``tau(t, q, v)`` /
    controller ``(t, state, asm)`` (which gets the workspace as the state)."""
    n = int(asm.n_dofs)
    if tau is None:
        return Held(np.zeros(n))
    if not callable(tau):
        value = np.asarray(tau, dtype=float)
        if value.shape != (n,):
            raise StateError(f"simulate: tau must have shape ({n},), got {value.shape}")
        return Held(value)
    if getattr(tau, "outputs", None) == "actuators":  # a Controller: τ = Sᵀ τ_k
        S = np.asarray(asm.S, dtype=float)

        def applied(ws):
            tau_k = np.asarray(tau(ws.t, ws, asm), dtype=float)
            if tau_k.shape != (S.shape[0],):
                raise StateError(
                    f"controller {type(tau).__name__} returned {tau_k.shape} actuator inputs at "
                    f"t = {ws.t:.9g} s; the plant has {S.shape[0]} actuators {asm.actuated_labels}"
                )
            return S.T @ tau_k

        return applied
    try:
        names = list(inspect.signature(tau).parameters)
    except (TypeError, ValueError):
        names = []
    if len(names) >= 2 and (names[1] == "state" or (len(names) >= 3 and names[2] in ("asm", "system"))):
        return lambda ws: tau(ws.t, ws, asm)
    if hasattr(tau, "in_step"):
        return StepInputs(tau)
    return lambda ws: tau(ws.t, ws.q, ws.v)


class StepInputs:
    """τ of an input ``tau(t, q, v)`` with breakpoints and ``in_step(t_start, t)``
    (:mod:`flexbody.solvers.input_breaks`): at a state, or ``within`` the step that starts at t_start."""

    def __init__(self, tau):
        self.tau, self.breakpoints, self.jumps = tau, tau.breakpoints, getattr(tau, "jumps", False)

    def __call__(self, ws) -> np.ndarray:
        return self.tau(ws.t, ws.q, ws.v)

    def within(self, t_start: float, t: float) -> np.ndarray:
        """τ at t [s] inside the step that starts at ``t_start`` [s]."""
        return np.asarray(self.tau.in_step(t_start, t), dtype=float)


class Held:
    """τ = ``value`` at every state; its ``held`` is ``value`` (integrators may hold it)."""

    def __init__(self, value: np.ndarray):
        self.held = value

    def __call__(self, ws) -> np.ndarray:
        return self.held


class Dynamics:
    """Forward dynamics at a state [AG-25], with Baumgarte terms and checks of every input and output."""

    def __init__(self, asm, tau, *, formulation, baumgarte, rtol, atol):
        self.asm, self.tau = asm, tau_function(tau, asm)
        self.formulation, self.baumgarte, self.rtol, self.atol = formulation, baumgarte, rtol, atol
        self.n_evaluations = 0

    def __call__(self, t, q, v, ws=None, step_start: float | None = None):
        """(response, τ, terms, workspace) at (t, q, v), in the workspace ``ws`` of that state when given; τ of the
        step that starts at ``step_start`` [s] when given (an input with breakpoints, :class:`StepInputs`)."""
        self.n_evaluations += 1
        ws = workspace_of(self.asm, t, q, v) if ws is None else ws
        within = step_start is not None and isinstance(self.tau, StepInputs)
        tau = finite("tau", self.tau.within(step_start, ws.t) if within else self.tau(ws), t)
        if tau.shape != (self.asm.n_dofs,):
            raise StateError(f"tau at t = {t:.9g} s has shape {tau.shape}, expected ({self.asm.n_dofs},)")
        terms = ws.terms()
        bias = finite("constraint bias", terms.bias, t)
        if self.baumgarte is not None and bias.size:
            rate = terms.Phi @ v + terms.phi_t
            bias = bias + 2.0 * self.baumgarte.alpha * rate + self.baumgarte.beta**2 * terms.phi
        finite("h", terms.h, t)
        rows = None  # Φ's decomposition, when the state's correction, projection or controller made it
        if self.formulation in ("projection", "nullspace") and hasattr(ws, "independent_rows"):
            rows = ws.independent_rows(self.rtol, self.atol, if_kept=True)
        res = forward(
            terms.M, terms.h, tau, terms.Phi, bias, method=self.formulation, rtol=self.rtol, atol=self.atol, rows=rows
        )
        finite("acceleration", res.a, t)
        finite("constraint force", res.constraint_force, t)
        return res, tau, terms, ws


@dataclass
class Run:
    """What the stepping loops share."""

    asm: Any  # the model: any object with the evaluation interface (see flexbody.solvers.simulation)
    dynamics: Dynamics
    recorder: Recorder
    correction: PositionCorrection | None
    tolerances: tuple
    record_every: int
    saver: RunWriter | None = None
    output_dt: float | None = None  # adaptive: the resolved output interval [s]
    integrator: str = "RK4"
    report: Callable[[float, float, float], None] | None = None  # progress of the run (t, t0, t_end)

    def start_step(self, k, t, q, v, *, corrections, last: bool, ws=None):
        """Evaluate the dynamics at the (corrected) state, in its workspace ``ws`` when the correction made it,
        track the rank and record."""
        res, tau, terms, ws = self.dynamics(t, q, v, ws)
        self.recorder.track_rank(t, res.rank, terms.Phi)
        self.observe(k, t, q, v, res, tau=tau, terms=terms, corrections=corrections, last=last, ws=ws)
        return res

    def observe(self, k, t, q, v, res, *, tau, terms, corrections, last: bool, ws, contacts=None) -> None:
        """Hand the plant's response ``res`` at state k to the controller and, when due, record the state (with the
        unilateral ``contacts``' rows, :meth:`Recorder.record`) and write it before the next step starts."""
        self.recorder.t_last = float(t)
        controller = self.recorder.controller
        if controller is not None and hasattr(controller, "update"):
            controller.update(t, ws, res)
        if k % self.record_every == 0 or last:
            self.recorder.record(t, q, v, res, tau=tau, terms=terms, corrections=corrections, ws=ws, contacts=contacts)
            if self.saver is not None:
                self.saver.journal(self.recorder)  # on disk before the next step starts

    def end_step(self, t, q, v):
        """Check the new state, move rotation vectors longer than π to their other chart and apply the
        position correction; returns q, v, iterations and the workspace of the corrected state (None when
        nothing was corrected)."""
        finite("q", q, t)
        finite("v", v, t)
        switch = getattr(self.asm, "switch_charts", None)
        switched = None if switch is None else switch(q, v)
        if switched is not None:  # a rotation vector passed π: its other chart
            q, v = switched
        if self.correction is None or int(self.asm.n_constraints) == 0:
            return q, v, 0, None
        q, v, iterations, norm, ws = correct(self.asm, t, q, v, self.correction, *self.tolerances)
        if norm > self.correction.tol:
            message = (
                f"position correction at t = {t:.9g} s: ‖φ‖ = {norm:.3e} > tol = "
                f"{self.correction.tol:.1e} after {iterations} iterations; largest residuals in rows "
                f"{worst_rows(self.asm, np.asarray(ws.constraint_rows(jacobian=False)[0]))}"
            )
            if self.correction.on_failure == "raise":
                raise ConvergenceError(message, [norm])
            log.warning(message)
            self.recorder.events.append(
                {"t": float(t), "kind": "correction_not_converged", "violation": norm, "iterations": iterations}
            )
        return q, v, iterations, ws

    def completed(self, k, t, q, v, *, corrections, span: tuple[float, float], last: bool, arrays=None) -> None:
        """After a step that reached state k: report progress and, when enough rows wait, write them with
        the checkpoint (k, t, q, v, corrections and the integrator's ``arrays``) from which the loop continues at
        ``start_step(k, …)``."""
        if self.report is not None:
            self.report(t, *span)
        if self.saver is not None and not last and self.saver.due(self.recorder):
            state = {
                "integrator": self.integrator,
                "k": int(k),
                "t": float(t),
                "corrections": int(corrections),
                "output_dt": self.output_dt,
            }
            self.saver.write(self.recorder, state, {"q": q, "v": v, **(arrays or {})})


def run_rk4(
    run: Run, settings: RK4, q, v, *, t0, t_end, k0: int = 0, t: float | None = None, corrections: int = 0, ws=None
):
    """RK4 steps from (t0, q, v) (in its workspace ``ws`` when the start made one), or from step ``k0`` at
    (t, q, v) of a run started at t0; the steps end on the inputs' breakpoints, each stage taking its step's input
    (:mod:`flexbody.solvers.input_breaks`)."""
    grid = step_times(t0, t_end, settings.dt, breakpoints_of(run.dynamics.tau))
    n_steps = grid.size - 1
    t = t0 if t is None else t
    for k in range(k0, n_steps + 1):
        res = run.start_step(k, t, q, v, corrections=corrections, last=k == n_steps, ws=ws)  # stage 1 of the step
        if k == n_steps:
            return
        t_next = float(grid[k + 1])
        dt = t_next - t
        a1 = res.a
        v2 = v + 0.5 * dt * a1
        a2 = run.dynamics(t + 0.5 * dt, q + 0.5 * dt * v, v2, step_start=t)[0].a
        v3 = v + 0.5 * dt * a2
        a3 = run.dynamics(t + 0.5 * dt, q + 0.5 * dt * v2, v3, step_start=t)[0].a
        v4 = v + dt * a3
        a4 = run.dynamics(t_next, q + dt * v3, v4, step_start=t)[0].a
        q = q + dt / 6.0 * (v + 2.0 * v2 + 2.0 * v3 + v4)  # [AG-36]
        v = v + dt / 6.0 * (a1 + 2.0 * a2 + 2.0 * a3 + a4)
        t = t_next
        q, v, corrections, ws = run.end_step(t, q, v)
        run.completed(k + 1, t, q, v, corrections=corrections, span=(t0, t_end), last=k + 1 == n_steps)


def run_adaptive(
    run: Run, settings: Adaptive, q, v, *, t0, t_end, k0: int = 0, t: float | None = None, corrections: int = 0, ws=None
):
    """Adaptive integration between output times t0 + k·output_dt, from k = 0 (in the start's workspace ``ws``
    when it made one) or from output ``k0``; restarted on every breakpoint of the inputs, each piece taking its own
    input (:mod:`flexbody.solvers.input_breaks`)."""
    n = int(run.asm.n_dofs)
    output_dt = run.output_dt or settings.output_dt or (t_end - t0) / 100.0
    n_out = max(1, math.ceil((t_end - t0) / output_dt - 1e-9))
    times = np.append(t0 + output_dt * np.arange(n_out), t_end)
    breaks = breakpoints_of(run.dynamics.tau)
    for k in range(k0, n_out + 1):
        t = times[k]
        run.start_step(k, t, q, v, corrections=corrections, last=k == n_out, ws=ws)
        if k == n_out:
            return
        y = np.concatenate([q, v])
        pieces = step_times(t, times[k + 1], times[k + 1] - t, breaks)
        for start, end in itertools.pairwise(pieces):
            y = _adaptive_piece(run, settings, y, float(start), float(end))
        q, v, corrections, ws = run.end_step(times[k + 1], y[:n], y[n:])
        run.completed(k + 1, times[k + 1], q, v, corrections=corrections, span=(t0, t_end), last=k + 1 == n_out)


def _adaptive_piece(run: Run, settings: Adaptive, y: np.ndarray, start: float, end: float) -> np.ndarray:
    """The state y = (q, v) at ``end`` by :func:`scipy.integrate.solve_ivp` from y at ``start`` [s], the inputs those
    of the piece that starts there."""
    from scipy.integrate import solve_ivp

    n = int(run.asm.n_dofs)

    def rhs(t, y):
        return np.concatenate([y[n:], run.dynamics(t, y[:n], y[n:], step_start=start)[0].a])

    sol = solve_ivp(
        rhs, (start, end), y, method=settings.method, rtol=settings.rtol, atol=settings.atol, max_step=settings.max_step
    )
    if not sol.success:
        raise StateError(f"adaptive integration failed between t = {start:.9g} and {end:.9g} s: {sol.message}")
    return sol.y[:, -1]
