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
from .piecewise_inputs import PiecewiseInputs
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
    """A cost J of a run and its gradient: ``value`` J; ``inputs`` ∂J/∂u (k, n_u) of the piecewise inputs' values;
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
    inputs: PiecewiseInputs,
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


def recorded_run(asm, t_end: float, inputs: PiecewiseInputs, integrator, stabilization, formulation: str, **start):
    """The run of :func:`gradient` (every step recorded) under the piecewise ``inputs``; ``start``: q0, v0, t0."""
    tau = inputs.forces(asm)
    if isinstance(integrator, RK4):
        return simulate(asm, t_end, integrator=integrator, tau=tau, record_every=1, stabilization=stabilization,
                        formulation=formulation, **start)  # fmt: skip
    return simulate(asm, t_end, integrator=integrator, tau=tau, record_every=1, **start)


def run_gradients(
    asm, results, inputs: PiecewiseInputs, functions: Sequence[RunCost], integrator, stabilization, *,
    formulation: str = "projection", parameters=(), mode: str = "adjoint", joint_rows: str = "exact",
) -> tuple[np.ndarray, ...]:  # fmt: skip
    """The values (r,) of r ``functions`` of the recorded run ``results`` (:func:`recorded_run`) and their exact
    gradients, all in one sweep: ∂/∂u (k, n_u, r), ∂/∂q₀ (n, r), ∂/∂v₀ (n, r), ∂/∂p (p, r) (``parameters``, each
    function's own dependence on them included); the other arguments as :func:`gradient` takes them."""
    view = RunView.of(results, inputs)
    each = [f.evaluate(view) for f in functions]
    partials = CostPartials(
        np.array([x.value for x in each]), *(np.stack([getattr(x, a) for x in each], -1) for a in ("q", "v", "inputs"))
    )
    S = np.asarray(asm.S, dtype=float)  # (n_u, n)
    times, q, v = view.times, view.q, view.v
    if isinstance(integrator, RK4):
        corrected = stabilization if asm.n_constraints else None
        explicit = (asm, (times, q, v), partials, S, inputs, formulation, parameters, joint_rows, mode, corrected)
        u_bar, q_bar, v_bar, p_bar = _rk4(*explicit)
    else:
        h = results.histories
        run = (times, q, v, np.asarray(h["a"]), np.asarray(h["lam"]), np.asarray(h["tau"]))
        restarts = restart_steps(times, jump_points_of(inputs.forces(asm)), integrator.dt)
        if mode == "adjoint":
            tau_bar, q_bar, v_bar, p_bar = adjoint_sweep(asm, integrator, run, partials.q, partials.v, parameters,
                                                         joint_rows, restarts)  # fmt: skip
            u_bar = partials.inputs.copy()
            np.add.at(u_bar, view.interval, np.einsum("inr,un->iur", tau_bar, S))
        else:
            sweep = (asm, integrator, run, partials, view.interval, S, inputs, parameters, joint_rows, restarts)
            u_bar, q_bar, v_bar, p_bar = _forward(*sweep)
    own = [[f.parameter_partial(view, body, name) for f in functions] for body, name in parameters]
    return partials.value, u_bar, q_bar, v_bar, p_bar + np.array(own).reshape(len(parameters), len(functions))


def _rk4(asm, run, partials, S, inputs, formulation, parameters, joint_rows, mode, correction):
    """(ū, q̄₀, v̄₀, p̄) of an RK4 run (:mod:`flexbody.solvers.rk4_sensitivities`), each stage taking the input of the
    interval holding its time."""

    forces = inputs.forces(asm)

    def tau_at(t, t_start):  # as the run evaluates each stage (the input of the step that starts at t_start)
        return forces.in_step(t_start, t), inputs.interval(t_start)

    n, p = asm.n_dofs, len(parameters)
    if mode == "adjoint":
        tau_bar, q_bar, v_bar, p_bar = rk4_adjoint_sweep(
            asm, run, partials.q, partials.v, tau_at, formulation, parameters, joint_rows, correction
        )
        u_bar = partials.inputs.copy()
        for which, value in tau_bar.items():
            u_bar[which] += S @ value
        return u_bar, q_bar, v_bar, p_bar
    dq0, dv0, dtau_of = _directions(n, inputs, S, p)
    dq, dv = rk4_tangent_sweep(asm, run, dq0, dv0, dtau_of, tau_at, formulation, parameters, joint_rows, correction)
    return _split(asm, partials, dq, dv, inputs, p)


def _directions(n: int, inputs, S, p: int):
    """The tangent directions of the forward mode, in the order q₀ (n), v₀ (n), the inputs' values (k n_u), the
    constants (p): (δq₀, δv₀) (n, count) and ``dtau_of(interval)`` (n, count), the inputs' δτ = Sᵀδu of an interval."""
    k, n_u = inputs.values.shape
    count = 2 * n + k * n_u + p
    dq0, dv0 = np.zeros((n, count)), np.zeros((n, count))
    dq0[:, :n], dv0[:, n : 2 * n] = np.eye(n), np.eye(n)

    def dtau_of(which: int) -> np.ndarray:
        out = np.zeros((n, count))
        out[:, 2 * n + which * n_u : 2 * n + (which + 1) * n_u] = S.T
        return out

    return dq0, dv0, dtau_of


def _split(asm, partials, dq, dv, inputs, p):
    """(ū, q̄₀, v̄₀, p̄) of r stacked functions (their ``partials`` (…, r)) from the tangent directions (q₀, v₀,
    inputs, constants) of the recorded states."""
    n, (k, n_u) = asm.n_dofs, inputs.values.shape
    total = np.einsum("tir,tik->kr", partials.q, dq) + np.einsum("tir,tik->kr", partials.v, dv)  # (count, r)
    u_bar = total[2 * n : 2 * n + k * n_u].reshape(k, n_u, -1) + partials.inputs
    return u_bar, total[:n], total[n : 2 * n], total[2 * n + k * n_u :]


def _forward(asm, integrator, run, partials, interval, S, inputs, parameters, joint_rows, restarts):
    """The gradient by tangent directions: one per start coordinate (q₀, v₀), per input value and per constant."""
    p = len(parameters)
    dq0, dv0, dtau_of = _directions(asm.n_dofs, inputs, S, p)
    dtau = np.stack([dtau_of(which) for which in interval])
    dq, dv = tangent_sweep(asm, integrator, run, dtau, dq0, dv0, parameters, joint_rows, restarts)
    return _split(asm, partials, dq, dv, inputs, p)
