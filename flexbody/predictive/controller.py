"""Model-predictive control: every control period, the actuator inputs that best track a task's reference over a
receding horizon on a prediction model, within the inputs' bounds; the first period's inputs are applied and held.

At an update at time t the plant's measured state is mapped to the model's (q, v) (``state_map``: the identity, or
e.g. a full model's beam projected on a reduced body's modes, :meth:`flexbody.ReducedBody.modal_state`), and the
inputs U = (u_0 … u_{N−1}) held over the N periods minimise

    Σ_j ‖W_y (y_j − r(t + jP))‖² + Σ_j ‖W_v v_j‖² + ρ_u Σ_j ‖u_j − ū‖² + ρ_Δ Σ_j ‖u_j − u_{j−1}‖²,
    lower ≤ u_j ≤ upper,

with y_j the task coordinates and v_j the velocities (those with a weight) predicted by the model linearised at a
recent state (:mod:`~flexbody.predictive.prediction`: exact over a period, condensed over the horizon), ū the inputs
there and u_{−1} the inputs applied now: a dense quadratic program with bounds, solved by
:func:`flexbody.linalg.box_qp.solve_box_qp` warm-started from the previous plan shifted by one period. The model is
linearised again every ``relinearize_every`` updates (the matrices of the program are kept in between; only its
linear term changes with the state and the reference).

A model that differs from the plant (reduced, linearised, with other parameters) predicts a biased motion, and the
tracking keeps an offset. With ``disturbance_gain`` κ > 0 an input disturbance d̂ (k,) is estimated, acting on the
model as the inputs do, ξ⁺ = Φξ + Γ(w + d̂) + γ: at each update the measured state is compared with the one predicted
at the last update, and d̂ ← d̂ + κ Γ⁺(x − x_predicted) (the least-squares share of the miss the inputs could have
made); the predictions then carry d̂ over the horizon. A constant disturbance of that kind is removed from the
steady tracking (offset-free MPC: Pannocchia & Rawlings, AIChE J. 49 (2003) 426; Maeder, Borrelli & Morari,
Automatica 45 (2009) 2214).

Each update has a wall-time budget (by default the period): the program's solve stops at the budget with its last
feasible iterate. :meth:`ModelPredictiveControl.report` gives the time the updates used (median, mean, largest),
how many overran the budget and how many solves the budget cut short; the histories of a run record per plant step
"mpc_seconds" (0 between updates), "mpc_updated" and "qp_iterations".
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ..control.base import Controller
from ..control.references import Setpoint
from ..control.tasks import Task
from ..errors import ModelError, StateError
from ..linalg.box_qp import solve_box_qp
from .prediction import Horizon, horizon_of, linearized_step

if TYPE_CHECKING:
    from ..control.references import Reference
    from ..system import AssembledSystem, State, System

__all__ = ["ModelPredictiveControl", "PredictiveReport"]

StateMap = Callable[[float, "State", "AssembledSystem | None"], tuple[np.ndarray, np.ndarray]]
"""(t, plant state, plant) -> (q, v) of the prediction model."""


@dataclass(frozen=True)
class PredictiveReport:
    """The wall time of a run's updates [s]: ``updates`` and ``relinearizations`` counted, the ``median``, ``mean``
    and ``largest`` update after the ``first`` (which loads the compiled kernels of the model's derivatives once per
    process), the ``budget``, how many updates took longer (``over_budget``, the first included) and how many solves
    the budget stopped before their optimum (``cut_short``)."""

    updates: int
    relinearizations: int
    first: float
    median: float
    mean: float
    largest: float
    budget: float
    over_budget: int
    cut_short: int


class ModelPredictiveControl(Controller):
    """Receding-horizon tracking of ``task`` on a prediction ``model`` (module docstring).

    Parameters
    ----------
    model : System or AssembledSystem
        The prediction model (the plant, a reduced model of it, …); its actuators are the plant's, in order.
    task : Task on the model's trees (its coordinates compared as vectors: positions, not rotations)
    reference : callable t -> (desired, ẋ_d, ẍ_d) or a constant desired value; only ``desired`` is used.
    period : float
        Control period P [s]: an update at t = t₀, t₀ + P, …, its inputs held in between.
    horizon : int
        N periods predicted.
    lower, upper : float or (k,)
        Bounds on the actuator inputs [N or N·m].
    output_weight : float or (r,)
        W_y [1/m, 1/rad]; ``effort_weight`` ρ_u and ``rate_weight`` ρ_Δ [per (N or N·m)²].
    velocity_weight : float or (n,)
        Weights on the model's velocities [s/m, s/rad or per modal rate], added to the outputs with target zero: e.g.
        on a reduced body's modal rates, to damp its vibration (default none).
    state_map : callable (t, plant state, plant) -> (q, v) of the model, optional
        Default: the plant's own (q, v), which needs a model with the plant's coordinates.
    relinearize_every : int
        Updates between linearisations of the model (1: at every update).
    budget : float, optional
        Wall time [s] of one update (default: the period).
    initial_inputs : (k,), optional
        The inputs the first linearisation is made at (default zero).
    disturbance_gain : float in [0, 1]
        Gain of the input-disturbance estimate that makes the tracking offset-free on a model that differs from the
        plant (module docstring); 0 (the default) predicts with the model alone.
    """

    def __init__(
        self,
        model: System | AssembledSystem,
        task: Task,
        reference: Reference | ArrayLike,
        *,
        period: float,
        horizon: int,
        lower: ArrayLike,
        upper: ArrayLike,
        output_weight: ArrayLike = 1.0,
        effort_weight: float = 0.0,
        rate_weight: float = 0.0,
        state_map: StateMap | None = None,
        relinearize_every: int = 1,
        budget: float | None = None,
        initial_inputs: ArrayLike | None = None,
        disturbance_gain: float = 0.0,
        velocity_weight: ArrayLike = 0.0,
    ) -> None:
        if model is None:
            raise ModelError("ModelPredictiveControl: give the prediction model (the plant, a reduced model, …)")
        super().__init__(model)  # assembled there
        if not isinstance(task, Task):
            raise ModelError(f"ModelPredictiveControl: task must be a flexbody Task, got {task!r}")
        if not (np.isfinite(period) and period > 0):
            raise ModelError(f"ModelPredictiveControl: period must be a positive time [s], got {period!r}")
        if not (isinstance(horizon, (int, np.integer)) and horizon >= 1):
            raise ModelError(f"ModelPredictiveControl: horizon must be a positive number of periods, got {horizon!r}")
        if not (isinstance(relinearize_every, (int, np.integer)) and relinearize_every >= 1):
            raise ModelError(
                f"ModelPredictiveControl: relinearize_every must be a positive integer, got {relinearize_every!r}"
            )
        if min(effort_weight, rate_weight) < 0 or not np.isfinite(effort_weight + rate_weight):
            raise ModelError("ModelPredictiveControl: effort_weight and rate_weight must be finite and ≥ 0")
        assert self.model is not None
        k, r = int(np.asarray(self.model.S).shape[0]), task.n_rows
        self.task, self.period, self.horizon = task, float(period), int(horizon)
        self.reference: Reference = reference if callable(reference) else Setpoint(reference)
        self.lower, self.upper = (
            _per_input(lower, k, "lower", infinite=True),
            _per_input(upper, k, "upper", infinite=True),
        )
        if np.any(self.lower > self.upper):
            raise ModelError(f"ModelPredictiveControl: lower {self.lower} above upper {self.upper}")
        n = int(self.model.n_dofs)
        rates = _per_input(velocity_weight, n, "velocity_weight")
        self.velocities = np.flatnonzero(rates)
        task_weight = _per_input(output_weight, r, "output_weight")
        self.output_weight = np.concatenate([task_weight, rates[self.velocities]])
        self.effort_weight, self.rate_weight = float(effort_weight), float(rate_weight)
        self.state_map, self.relinearize_every = state_map, int(relinearize_every)
        self.budget = self.period if budget is None else float(budget)
        if not 0.0 <= disturbance_gain <= 1.0:
            raise ModelError(f"ModelPredictiveControl: disturbance_gain must lie in [0, 1], got {disturbance_gain!r}")
        self.disturbance_gain = float(disturbance_gain)
        self.initial_inputs = np.zeros(k) if initial_inputs is None else _per_input(initial_inputs, k, "initial_inputs")
        self.labels.update(task_labels=list(task.row_labels), actuated_labels=list(self.model.actuated_labels))
        self.reset()

    def reset(self) -> None:
        """Forget the plan, the linearisation and the timings before a new run."""
        self.inputs = np.clip(self.initial_inputs, self.lower, self.upper)
        self.plan: np.ndarray | None = None  # (N, k) the inputs planned at the last update
        self.next_update: float | None = None
        self.program: _Program | None = None
        self.since_linearized = 0
        self.seconds: list[float] = []
        self.cut_short = self.relinearizations = 0
        self.disturbance = np.zeros_like(self.initial_inputs)  # d̂ (k,), an input-like disturbance [N or N·m]
        self.predicted: np.ndarray | None = None  # the model's state predicted for the next update
        self.cached_targets: tuple[float, np.ndarray] | None = None  # (t, (N, r) reference after t)

    # ------------------------------------------------------------------ protocol
    def __call__(self, t: float, state: State, system: AssembledSystem | None = None) -> np.ndarray:
        updated, seconds, iterations = 0.0, 0.0, 0.0
        if self.next_update is None or t >= self.next_update - 1e-9 * self.period:
            start = time.perf_counter()
            iterations = float(self._update(t, state, system, start))
            seconds, updated = time.perf_counter() - start, 1.0
            self.seconds.append(seconds)
            self.next_update = t + self.period
        self.diagnostics = {
            "tau_k": self.inputs.copy(),
            "mpc_updated": updated,
            "mpc_seconds": seconds,
            "qp_iterations": iterations,
        }
        return self.inputs.copy()

    def report(self) -> PredictiveReport:
        """The time the updates of the last run used (:class:`PredictiveReport`)."""
        s = np.asarray(self.seconds)
        rest = s[1:] if s.size > 1 else s
        stat = (float(np.median(rest)), float(rest.mean()), float(rest.max())) if s.size else (0.0, 0.0, 0.0)
        over = int(np.count_nonzero(s > self.budget))
        first = float(s[0]) if s.size else 0.0
        return PredictiveReport(s.size, self.relinearizations, first, *stat, self.budget, over, self.cut_short)

    # ------------------------------------------------------------------ one update
    def _update(self, t: float, state: State, plant: AssembledSystem | None, start: float) -> int:
        """Plan from the measured ``state`` and set the inputs held until the next update; the QP's iterations."""
        k = self.inputs.size
        if self.plan is None and plant is not None and np.asarray(plant.S).shape[0] != k:
            raise ModelError(
                f"ModelPredictiveControl: the model has {k} actuators, the plant {np.asarray(plant.S).shape[0]}"
            )
        q, v = self._model_state(t, state, plant)
        x = np.concatenate([q, v])
        self._estimate_disturbance(x)
        if self.program is None or self.since_linearized >= self.relinearize_every:
            assert self.model is not None
            step = linearized_step(self.model, t, q, v, self.inputs, self.task, self.period, self.velocities)
            self.program = _Program.of(horizon_of(step, self.horizon), self)
            self.since_linearized, self.relinearizations = 0, self.relinearizations + 1
        self.since_linearized += 1
        program, N = self.program, self.horizon
        g = program.linear_term(x, self._targets(t), self.inputs, self.disturbance)
        warm = None if self.plan is None else (np.vstack([self.plan[1:], self.plan[-1:]]) - program.u).ravel()
        result = solve_box_qp(program.H, g, program.lower, program.upper, start=warm, deadline=start + self.budget)
        self.cut_short += int(not result.optimal)
        self.plan = np.clip(program.u + result.x.reshape(N, -1), self.lower, self.upper)  # ū + (upper − ū) may round up
        self.inputs = self.plan[0].copy()
        self.predicted = program.next_state(x, self.inputs, self.disturbance)
        return result.iterations

    def _estimate_disturbance(self, x: np.ndarray) -> None:
        """d̂ ← d̂ + gain Γ⁺(x − x_predicted): the inputs' share of what the last prediction missed [module docstring]."""
        program = self.program
        if self.predicted is not None and program is not None and program.Gamma_pinv is not None:
            self.disturbance += self.disturbance_gain * (program.Gamma_pinv @ (x - self.predicted))

    def _targets(self, t: float) -> np.ndarray:
        """The reference at t + jP, j = 1 … N, stacked (N r,); one new evaluation when the last update was at t − P."""
        N, P = self.horizon, self.period
        cached = self.cached_targets
        rest = np.zeros(self.velocities.size)  # the chosen velocities' target
        if cached is not None and abs(t - P - cached[0]) <= 1e-9 * P:
            values = np.vstack([cached[1][1:], np.concatenate([_desired(self.reference, t + N * P, self.task), rest])])
        else:
            values = np.array(
                [np.concatenate([_desired(self.reference, t + j * P, self.task), rest]) for j in range(1, N + 1)]
            )
        self.cached_targets = (t, values)
        return values.ravel()

    def _model_state(self, t: float, state: State, plant: AssembledSystem | None) -> tuple[np.ndarray, np.ndarray]:
        assert self.model is not None
        n = int(self.model.n_dofs)
        if self.state_map is None:
            q, v = np.asarray(state.q, dtype=float), np.asarray(state.v, dtype=float)
        else:
            q, v = (np.asarray(a, dtype=float) for a in self.state_map(t, state, plant))
        if q.shape != (n,) or v.shape != (n,):
            how = "state_map returned" if self.state_map is not None else "the plant has (give state_map=)"
            raise ModelError(f"ModelPredictiveControl: the model has {n} coordinates; {how} q {q.shape}, v {v.shape}")
        if not (np.isfinite(q).all() and np.isfinite(v).all()):
            raise StateError(f"ModelPredictiveControl: the model's state at t = {t:.9g} s has NaN/Inf")
        return q, v


@dataclass(frozen=True)
class _Program:
    """The quadratic program of one linearisation: H (N k, N k), the map of the outputs' offset to g, the bounds on
    W = U − ū and ū (k,)."""

    horizon: Horizon
    H: np.ndarray
    Gamma_pinv: np.ndarray | None  # Γ⁺ (k, 2n), for the disturbance estimate only
    weighted_forced: np.ndarray  # O_uᵀ W_y² (N k, N r)
    lower: np.ndarray
    upper: np.ndarray
    u: np.ndarray
    rate_weight: float

    @classmethod
    def of(cls, horizon: Horizon, mpc: ModelPredictiveControl) -> _Program:
        N, u = mpc.horizon, horizon.step.u
        k = u.size
        weights = np.tile(mpc.output_weight**2, N)
        weighted = horizon.forced.T * weights
        D = np.eye(N * k) - np.eye(N * k, k=-k)  # (D W)_j = w_j − w_{j−1}, w_{−1} = 0
        H = weighted @ horizon.forced + mpc.effort_weight * np.eye(N * k) + mpc.rate_weight * (D.T @ D)
        lower, upper = np.tile(mpc.lower - u, N), np.tile(mpc.upper - u, N)
        Gamma_pinv = np.linalg.pinv(horizon.step.Gamma) if mpc.disturbance_gain else None
        return cls(horizon, 0.5 * (H + H.T), Gamma_pinv, weighted, lower, upper, u, mpc.rate_weight)

    def linear_term(
        self, x: np.ndarray, targets: np.ndarray, applied: np.ndarray, disturbance: np.ndarray
    ) -> np.ndarray:
        """g of the program at the model's state x (2n,), the stacked targets (N r,), the inputs applied now and the
        disturbance d̂ (k,), which acts on the model as the inputs do."""
        hz = self.horizon
        outputs = hz.free @ (x - hz.step.x) + hz.offset - targets
        if disturbance.any():
            outputs += hz.forced @ np.tile(disturbance, hz.forced.shape[1] // disturbance.size)
        g = self.weighted_forced @ outputs
        g[: self.u.size] += self.rate_weight * (self.u - applied)
        return g

    def next_state(self, x: np.ndarray, inputs: np.ndarray, disturbance: np.ndarray) -> np.ndarray:
        """The model's state one period after x (2n,) under ``inputs`` + d̂ (k,) [module docstring of prediction]."""
        step = self.horizon.step
        return step.x + step.Phi @ (x - step.x) + step.Gamma @ (inputs + disturbance - step.u) + step.gamma


def _per_input(value: ArrayLike, k: int, name: str, *, infinite: bool = False) -> np.ndarray:
    """``value`` (a scalar or (k,): per actuator, coordinate or output) as (k,); ModelError naming ``name`` for another
    shape, NaN, or ±inf unless ``infinite`` (a bound)."""
    given = np.asarray(value, dtype=float)
    ok = given.shape in ((), (k,)) and not np.isnan(given).any() and (infinite or np.isfinite(given).all())
    if not ok:
        kind = "a number or ±inf" if infinite else "finite"
        raise ModelError(f"ModelPredictiveControl: {name} must be {kind}, a scalar or ({k},), got {value!r}")
    return np.broadcast_to(given, (k,)).copy()


def _desired(reference: Reference, t: float, task: Task) -> np.ndarray:
    desired = np.asarray(reference(t)[0], dtype=float)
    if desired.shape != (task.n_rows,):
        raise ModelError(
            f"ModelPredictiveControl: the reference gives {desired.shape} at t = {t:.9g} s, the task {task.n_rows}"
        )
    return desired
