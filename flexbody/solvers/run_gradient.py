"""``fb.gradient``: a run, a cost of it and the cost's exact gradient with respect to the run's piecewise inputs, its
start and flexible bodies' constants, by the discrete adjoint or the forward sensitivities of the generalized-α
steps (:mod:`flexbody.solvers.run_sensitivities`; #36 item 5).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from ..errors import FlexbodyError
from .alpha_settings import GeneralizedAlpha
from .dynamics_derivatives import require_derivatives
from .explicit import RK4
from .input_breaks import jump_points_of, restart_steps
from .input_signals import InputSignal
from .rk4_sensitivities import rk4_adjoint_sweep, rk4_tangent_sweep
from .run_costs import CostPartials, RunCost, RunView
from .run_sensitivities import adjoint_sweep, run_blockers, tangent_sweep
from .simulation import simulate
from .stabilization import PositionCorrection

if TYPE_CHECKING:
    from ..fem.flexible_body import FlexibleBody
    from ..system import AssembledSystem, System

__all__ = ["RunGradient", "gradient", "recorded_run", "run_gradients"]

MODES = ("adjoint", "forward")


@dataclass(frozen=True)
class RunGradient:
    """A cost J of a run and its gradient: ``value`` J; ``inputs`` ∂J/∂U (m, n_u) of the inputs' values;
    ``q0``, ``v0`` ∂J/∂q₀, ∂J/∂v₀ (n,) of the state the run started from (after its consistent start);
    ``parameters`` {"body.name": ∂J/∂p}; the run's ``results``; the ``mode`` used and the ``seconds`` [s] of the run
    and of the sensitivities."""

    value: float
    inputs: np.ndarray
    q0: np.ndarray
    v0: np.ndarray
    parameters: dict[str, float]
    results: Any
    mode: str
    seconds: dict[str, float]


def gradient(
    model: System | AssembledSystem,
    t_end: float,
    cost: RunCost,
    inputs: InputSignal,
    *,
    integrator: GeneralizedAlpha | RK4 | None = None,
    formulation: str = "projection",
    parameters: Sequence[tuple[FlexibleBody, str]] = (),
    mode: str = "adjoint",
    joint_rows: str = "exact",
    q0: ArrayLike | None = None,
    v0: ArrayLike | None = None,
    t0: float = 0.0,
    stabilization: PositionCorrection | None = PositionCorrection(),
) -> RunGradient:
    """Run ``model`` from ``t0`` to ``t_end`` [s] under the piecewise ``inputs`` (τ = Sᵀu; the steps end on their
    switches, :mod:`~flexbody.solvers.input_breaks`), evaluate ``cost`` on the recorded run, and give its exact
    gradient (module docstring): ``mode`` "adjoint" (one backward sweep, at the cost of about one run whatever the
    number of inputs) or "forward" (one tangent direction per input, start coordinate and constant: for few of them);
    with
    ``integrator=RK4(dt)`` the run's stages take their accelerations in ``formulation`` and its steps are corrected
    by ``stabilization`` as :func:`~flexbody.solvers.simulation.simulate` corrects them: a
    :class:`~flexbody.solvers.stabilization.PositionCorrection` (the default, as simulate's) or None (Baumgarte has no
    derivatives yet) (:mod:`flexbody.solvers.rk4_sensitivities`; generalized-α runs need none). ``parameters``:
    (body, "young" | "density" | "damping") pairs of flexible bodies' constants
    (:func:`~flexbody.solvers.dynamics_derivatives.forward_derivatives`). ``integrator`` defaults to
    ``GeneralizedAlpha(dt=1e-3)``; the run records every step.

    The gradient is that of the discrete run (its steps and their sizes), exact up to the Newton tolerance of the
    steps (``integrator.tol``). ``joint_rows`` "differences" takes systems whose joint rows have no exact Jacobian yet
    (force elements on joints without one) with central differences of those rows
    (:data:`~flexbody.solvers.dynamics_derivatives.JOINT_ROWS`). Raises ModelError naming what has no derivative yet
    (:func:`~flexbody.solvers.run_sensitivities.run_blockers`).
    """
    integrator = GeneralizedAlpha(dt=1e-3) if integrator is None else integrator
    if not isinstance(integrator, (GeneralizedAlpha, RK4)):
        raise FlexbodyError(f"gradient: the integrator must be a GeneralizedAlpha or an RK4, got {integrator!r}")
    if not isinstance(cost, RunCost):
        raise FlexbodyError(f"gradient: cost must be a RunCost (fb.FinalPoint, fb.FlexibleEnergy, ...), got {cost!r}")
    if mode not in MODES:
        raise FlexbodyError(f"gradient: mode must be one of {MODES}, got {mode!r}")
    if stabilization is not None and not isinstance(stabilization, PositionCorrection):
        raise FlexbodyError(
            f"gradient: stabilization must be a PositionCorrection or None (Baumgarte has no derivatives yet), got "
            f"{stabilization!r}"
        )
    asm = model.assemble() if hasattr(model, "assemble") else model
    require_derivatives("gradient", asm, joint_rows, run_blockers)
    clock = time.perf_counter()
    results = recorded_run(asm, t_end, inputs, integrator, stabilization, formulation, q0=q0, v0=v0, t0=t0)
    seconds = {"run": time.perf_counter() - clock}
    clock = time.perf_counter()
    values, u_bar, q_bar, v_bar, p_bar = run_gradients(
        asm, results, inputs, [cost], integrator, stabilization, formulation=formulation, parameters=parameters,
        mode=mode, joint_rows=joint_rows,
    )  # fmt: skip
    seconds["sensitivities"] = time.perf_counter() - clock
    labels = [f"{body.name}.{name}" for body, name in parameters]
    parameter_bars = dict(zip(labels, map(float, p_bar[:, 0])))
    return RunGradient(
        float(values[0]), u_bar[..., 0], q_bar[:, 0], v_bar[:, 0], parameter_bars, results, mode, seconds
    )


def recorded_run(asm, t_end: float, inputs: InputSignal, integrator, stabilization, formulation: str, **start):
    """The run of :func:`gradient` (every step recorded) under the piecewise ``inputs``; ``start``: q0, v0, t0."""
    tau = inputs.forces(asm)
    if isinstance(integrator, RK4):
        return simulate(asm, t_end, integrator=integrator, tau=tau, record_every=1, stabilization=stabilization,
                        formulation=formulation, **start)  # fmt: skip
    return simulate(asm, t_end, integrator=integrator, tau=tau, record_every=1, **start)


def run_gradients(
    asm, results, inputs: InputSignal, functions: Sequence[RunCost], integrator, stabilization, *,
    formulation: str = "projection", parameters=(), mode: str = "adjoint", joint_rows: str = "exact",
) -> tuple[np.ndarray, ...]:  # fmt: skip
    """The values (r,) of r ``functions`` of the recorded run ``results`` (:func:`recorded_run`) and their exact
    gradients, all in one sweep: ∂/∂U (m, n_u, r) of the inputs' values, ∂/∂q₀ (n, r), ∂/∂v₀ (n, r), ∂/∂p (p, r)
    (``parameters``, each function's own dependence on them included); the other arguments as :func:`gradient` takes
    them."""
    view = RunView.of(results, inputs)
    each = [f.evaluate(view) for f in functions]
    partials = CostPartials(
        np.array([x.value for x in each]), *(np.stack([getattr(x, a) for x in each], -1) for a in ("q", "v", "inputs"))
    )
    chain = _InputChain(inputs, np.asarray(asm.S, dtype=float), asm.n_dofs, len(parameters), partials.inputs)
    times, q, v = view.times, view.q, view.v
    if isinstance(integrator, RK4):
        corrected = stabilization if asm.n_constraints else None
        forces = inputs.forces(asm)

        def tau_at(t, t_start):  # as the run evaluates each stage (the input of the step that starts at t_start)
            return forces.in_step(t_start, t), inputs.weights(t, t_start)

        explicit = (asm, (times, q, v), partials, tau_at, formulation, parameters, joint_rows, corrected)
        q_bar, v_bar, p_bar = _rk4(*explicit, mode, chain)
    else:
        h = results.histories
        run = (times, q, v, np.asarray(h["a"]), np.asarray(h["lam"]), np.asarray(h["tau"]))
        restarts = restart_steps(times, jump_points_of(inputs.forces(asm)), integrator.dt)
        keys = _AlphaInputs(inputs, times)
        if mode == "adjoint":
            tau_bar, start_bars, q_bar, v_bar, p_bar = adjoint_sweep(
                asm, integrator, run, partials.q, partials.v, parameters, joint_rows, restarts
            )
            for i, bar in enumerate(tau_bar):
                chain.add(keys(i, False), bar)
            for i, bar in start_bars.items():
                chain.add(keys(i, True), bar)
        else:
            dtau = lambda i, start: chain.direction(keys(i, start))  # noqa: E731
            dq, dv = tangent_sweep(asm, integrator, run, dtau, chain.dq0, chain.dv0, parameters, joint_rows, restarts)
            q_bar, v_bar, p_bar = chain.split(partials, dq, dv)
    own = [[f.parameter_partial(view, body, name) for f in functions] for body, name in parameters]
    p_total = p_bar + np.array(own).reshape(len(parameters), len(functions))
    return partials.value, chain.u_bar, q_bar, v_bar, p_total


def _rk4(asm, run, partials, tau_at, formulation, parameters, joint_rows, correction, mode, chain):
    """(q̄₀, v̄₀, p̄) of an RK4 run (:mod:`flexbody.solvers.rk4_sensitivities`), the inputs' ū into ``chain``."""
    if mode == "adjoint":
        return rk4_adjoint_sweep(
            asm, run, partials.q, partials.v, tau_at, chain.add, formulation, parameters, joint_rows, correction
        )
    dq, dv = rk4_tangent_sweep(
        asm, run, chain.dq0, chain.dv0, chain.direction, tau_at, formulation, parameters, joint_rows, correction
    )
    return chain.split(partials, dq, dv)


class _AlphaInputs:
    """The weights of the inputs generalized-α takes: step i's equations at its end t_{i+1} (the piece holding t_i),
    and the accelerations at its start or restart t_i."""

    def __init__(self, inputs: InputSignal, times: np.ndarray):
        self.inputs, self.times = inputs, times

    def __call__(self, i: int, start: bool) -> tuple[np.ndarray, np.ndarray]:
        t = self.times
        return self.inputs.weights(float(t[i] if start else t[i + 1]), float(t[i]))


class _InputChain:
    """The chain rule from the inputs τ = Sᵀ Σ_j w_j U_j to their values U (m, n_u): ``add`` a τ̄ (n, r) of an input
    with weights (rows j, w_j) to ``u_bar`` (m, n_u, r), started from the costs' own partials ``own``; the forward
    mode's tangent directions in the order q₀ (n), v₀ (n), the values (m n_u), the constants (p)."""

    def __init__(self, inputs: InputSignal, S: np.ndarray, n: int, p: int, own: np.ndarray):
        self.S, self.n = S, n
        self.m, self.n_u = inputs.values.shape
        self.u_bar = own.copy()
        count = 2 * n + self.m * self.n_u + p
        self.dq0, self.dv0 = np.zeros((n, count)), np.zeros((n, count))
        self.dq0[:, :n], self.dv0[:, n : 2 * n] = np.eye(n), np.eye(n)

    def add(self, key: tuple[np.ndarray, np.ndarray], tau_bar: np.ndarray) -> None:
        rows, w = key
        projected = self.S @ tau_bar  # (n_u, r)
        self.u_bar[rows] += w.reshape(-1, *([1] * projected.ndim)) * projected

    def direction(self, key: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        """δτ (n, count) = Sᵀ Σ_j w_j δU_j of an input with weights ``key``."""
        rows, w = key
        out = np.zeros((self.n, self.dq0.shape[1]))
        for j, wj in zip(rows, w):
            start = 2 * self.n + j * self.n_u
            out[:, start : start + self.n_u] = wj * self.S.T
        return out

    def split(self, partials: CostPartials, dq: np.ndarray, dv: np.ndarray) -> tuple[np.ndarray, ...]:
        """(q̄₀, v̄₀, p̄) of r stacked functions from the tangent directions of the recorded states; ū into
        ``u_bar``."""
        n, values = self.n, self.m * self.n_u
        total = np.einsum("tir,tik->kr", partials.q, dq) + np.einsum("tir,tik->kr", partials.v, dv)  # (count, r)
        self.u_bar += total[2 * n : 2 * n + values].reshape(self.m, self.n_u, -1)
        return total[:n], total[n : 2 * n], total[2 * n + values :]
