"""``fb.optimize_inputs``: the inputs that minimise a cost of a run, within bounds on the inputs and subject to
constraints on functions of the run (a final state, a bounded residual vibration) (#37 item 1).

Direct single shooting: the decision variables are the values U (m, n_u) of an
:class:`~flexbody.solvers.input_signals.InputSignal` (piecewise-constant or spline inputs); each evaluation runs the
system once and carries the cost and every constrained function back in one adjoint sweep
(:func:`~flexbody.solvers.run_gradient.run_gradients`: one factor per step for all of them), so the gradients are
those of the discrete run, exact up to the Newton tolerance of its steps. scipy's SLSQP takes the constraints
(equalities and two-sided bounds on functions of the run) and the bounds on U; without constraints L-BFGS-B takes the
bounds alone.

The optimiser works in the L² metric of the input signal: its variables are x = R U with RᵀR = G the signal's Gram
matrix over the run (:meth:`~flexbody.solvers.input_signals.InputSignal.gram`), so ‖x‖² = ∫‖u‖² dt and an effort
cost has the identity Hessian the quasi-Newton methods start from — their iterations do not grow with the number of
knots. Where R is diagonal (piecewise-constant inputs) bounds on U stay bounds on x; otherwise SLSQP takes them as
linear constraints.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike
from scipy.linalg import cholesky, solve_triangular
from scipy.optimize import minimize

from ..constraints.base import finite_number
from ..errors import FlexbodyError
from .alpha_settings import GeneralizedAlpha
from .dynamics_derivatives import require_derivatives
from .explicit import RK4
from .input_signals import InputSignal
from .run_costs import KnotValue, RunCost
from .run_gradient import recorded_run, run_gradients
from .run_sensitivities import run_blockers
from .stabilization import PositionCorrection

if TYPE_CHECKING:
    from ..system import AssembledSystem, System

__all__ = ["OptimalInputs", "RunConstraint", "knot_bounds", "optimize_inputs"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunConstraint:
    """``lower`` ≤ f ≤ ``upper`` for a function f of the run (a :class:`~flexbody.solvers.run_costs.RunCost`: a
    :class:`~flexbody.solvers.run_costs.FinalValue`, a :class:`~flexbody.solvers.run_costs.FlexibleEnergy`, …), in
    its unit; :meth:`equal` for f = value."""

    function: RunCost
    lower: float = -np.inf
    upper: float = np.inf

    @classmethod
    def equal(cls, function: RunCost, value: float) -> RunConstraint:
        """f = ``value``."""
        return cls(function, float(value), float(value))

    def __post_init__(self) -> None:
        if not isinstance(self.function, RunCost):
            raise FlexbodyError(
                f"RunConstraint: function must be a RunCost (fb.FinalValue, ...), got {self.function!r}"
            )
        try:
            lo, hi = float(self.lower), float(self.upper)
        except (TypeError, ValueError):
            raise FlexbodyError(
                f"RunConstraint: lower and upper must be numbers, got {self.lower!r}, {self.upper!r}"
            ) from None
        if np.isnan(lo) or np.isnan(hi) or lo > hi or (np.isinf(lo) and np.isinf(hi)):
            raise FlexbodyError(
                f"RunConstraint: needs lower ≤ upper, at least one finite, got {self.lower!r}, {self.upper!r}"
            )


def knot_bounds(
    coordinate: int, knots: ArrayLike, *, lower: float = -np.inf, upper: float = np.inf, rate: bool = False
) -> list[RunConstraint]:
    """``lower`` ≤ q[i] ≤ ``upper`` (with ``rate``: on v[i]) at each of the inputs' ``knots`` (indices): bounds on a
    coordinate or its rate along the move, one :class:`RunConstraint` of a :class:`~flexbody.solvers.run_costs.
    KnotValue` per knot (for piecewise-constant inputs a rate is linear between knots, so bounds on it at every knot
    bound it everywhere)."""
    return [RunConstraint(KnotValue(coordinate, int(k), rate), lower, upper) for k in np.asarray(knots).reshape(-1)]


@dataclass(frozen=True)
class OptimalInputs:
    """What :func:`optimize_inputs` found: the ``inputs`` (the optimum's values), the cost's ``value`` and
    ``gradient`` ∂J/∂U (m, n_u) there, the constrained functions' ``constraints`` values (r,), the run ``results`` of
    those inputs, scipy's ``iterations``, the ``evaluations`` (runs with their sweeps), ``success`` and ``message``,
    and the ``seconds`` it took."""

    inputs: InputSignal
    value: float
    gradient: np.ndarray
    constraints: np.ndarray
    results: Any
    iterations: int
    evaluations: int
    success: bool
    message: str
    seconds: float


class _Shooting:
    """One run and one sweep per point u: the cost, the constrained functions and their gradients, kept for the last
    point (scipy asks for the value, the gradient and the constraints at the same point separately)."""

    def __init__(self, asm, t_end, inputs, functions, integrator, stabilization, formulation, joint_rows, start):
        self.asm, self.t_end, self.inputs, self.functions = asm, t_end, inputs, functions
        self.settings = (integrator, stabilization)
        self.sweep = {"formulation": formulation, "joint_rows": joint_rows}
        self.start = start
        self.point: np.ndarray | None = None
        self.last: tuple = ()
        self.evaluations = 0

    def at(self, x: np.ndarray) -> tuple:
        """(values (r,), gradients (r, k n_u), results) at u = x (flattened)."""
        if self.point is None or not np.array_equal(x, self.point):
            held = self.inputs.with_values(x.reshape(self.inputs.values.shape))
            integrator, stabilization = self.settings
            results = recorded_run(self.asm, self.t_end, held, integrator, stabilization, self.sweep["formulation"],
                                   **self.start)  # fmt: skip
            values, u_bar, *_ = run_gradients(self.asm, results, held, self.functions, integrator, stabilization,
                                              **self.sweep)  # fmt: skip
            self.point, self.evaluations = x.copy(), self.evaluations + 1
            self.last = (values, np.ascontiguousarray(u_bar.reshape(-1, len(self.functions)).T), results)
        return self.last


def optimize_inputs(
    model: System | AssembledSystem,
    t_end: float,
    cost: RunCost,
    inputs: InputSignal,
    *,
    lower: ArrayLike | None = None,
    upper: ArrayLike | None = None,
    constraints: Sequence[RunConstraint] = (),
    integrator: GeneralizedAlpha | RK4 | None = None,
    formulation: str = "projection",
    stabilization: PositionCorrection | None = PositionCorrection(),
    tol: float = 1e-10,
    max_iterations: int = 200,
    joint_rows: str = "exact",
    q0: ArrayLike | None = None,
    v0: ArrayLike | None = None,
    t0: float = 0.0,
) -> OptimalInputs:
    """The values of the ``inputs`` (fb.PiecewiseInputs or fb.SplineInputs: their times kept; the given values the
    first guess) that minimise ``cost`` of the run of ``model`` from ``t0`` to ``t_end`` [s], with ``lower`` ≤ U ≤
    ``upper`` (scalars, (n_u,) per actuator or (m, n_u); None: unbounded; on a cubic spline's knot values, which do
    not bound u between the knots) and the ``constraints`` (:class:`RunConstraint`) on functions of the run
    (module docstring). The run is :func:`~flexbody.solvers.run_gradient.gradient`'s (``integrator``, default
    ``GeneralizedAlpha(dt=1e-3)``; ``formulation``, ``stabilization`` and ``joint_rows`` as it takes them; start
    ``q0``, ``v0``). ``tol`` is scipy's (SLSQP's ``ftol``, L-BFGS-B's ``ftol`` and ``gtol``), ``max_iterations`` its
    iteration limit. An optimum scipy does not reach comes back with ``success`` False and scipy's message."""
    integrator = GeneralizedAlpha(dt=1e-3) if integrator is None else integrator
    if not isinstance(integrator, (GeneralizedAlpha, RK4)):
        raise FlexbodyError(f"optimize_inputs: the integrator must be a GeneralizedAlpha or an RK4, got {integrator!r}")
    if not isinstance(cost, RunCost):
        raise FlexbodyError(
            f"optimize_inputs: cost must be a RunCost (fb.Effort, fb.FlexibleEnergy, ...), got {cost!r}"
        )
    if not isinstance(inputs, InputSignal):
        raise FlexbodyError(
            f"optimize_inputs: inputs must be fb.PiecewiseInputs or fb.SplineInputs (the first guess), got {inputs!r}"
        )
    for c in constraints:
        if not isinstance(c, RunConstraint):
            raise FlexbodyError(f"optimize_inputs: constraints must be fb.RunConstraint, got {c!r}")
    tol = finite_number(tol, "tol", "optimize_inputs", positive=True)
    if isinstance(max_iterations, bool) or not isinstance(max_iterations, (int, np.integer)) or max_iterations < 1:
        raise FlexbodyError(f"optimize_inputs: max_iterations must be a positive integer, got {max_iterations!r}")
    asm = model.assemble() if hasattr(model, "assemble") else model
    require_derivatives("optimize_inputs", asm, joint_rows, run_blockers)
    bounds = _bounds(lower, upper, inputs.values.shape)
    start = {"q0": q0, "v0": v0, "t0": t0}
    functions = [cost, *(c.function for c in constraints)]
    shooting = _Shooting(asm, t_end, inputs, functions, integrator, stabilization, formulation, joint_rows, start)
    clock = time.perf_counter()
    u0 = inputs.values.ravel()
    if bounds is not None and np.any((u0 < bounds[0]) | (u0 > bounds[1])):
        log.warning(
            "optimize_inputs: the first guess lies outside the bounds; it starts from its values clipped to them"
        )
        u0 = np.clip(u0, *bounds)
    metric = _Metric(inputs.gram(float(t0), float(t_end)), inputs.values.shape)

    def objective(x):
        values, gradients, _ = shooting.at(metric.values(x))
        return float(values[0]), metric.gradient(gradients[0])

    scipy_bounds, linear = metric.bounds(bounds)
    options = {"ftol": tol, "maxiter": max_iterations}
    if constraints or linear:
        found = minimize(objective, metric.variables(u0), jac=True, method="SLSQP", bounds=scipy_bounds,
                         constraints=_scipy_constraints(constraints, shooting, metric) + linear,
                         options=options)  # fmt: skip
    else:
        found = minimize(objective, metric.variables(u0), jac=True, method="L-BFGS-B", bounds=scipy_bounds,
                         options={**options, "gtol": tol})  # fmt: skip
    u = metric.values(found.x)
    values, gradients, results = shooting.at(u)
    return OptimalInputs(
        inputs.with_values(u.reshape(inputs.values.shape)),
        float(values[0]),
        gradients[0].reshape(inputs.values.shape),
        values[1:],
        results,
        int(found.nit),
        shooting.evaluations,
        bool(found.success),
        str(found.message),
        time.perf_counter() - clock,
    )


def _bounds(lower, upper, shape: tuple) -> tuple[np.ndarray, np.ndarray] | None:
    """(lower, upper) flattened to the k n_u values of the inputs, or None when neither is given."""
    if lower is None and upper is None:
        return None
    out = []
    for name, given, default in (("lower", lower, -np.inf), ("upper", upper, np.inf)):
        try:
            value = np.broadcast_to(np.asarray(default if given is None else given, dtype=float), shape)
        except ValueError:
            raise FlexbodyError(
                f"optimize_inputs: {name} must be a scalar, (n_u,) or (k, n_u) = {shape}, got shape {np.shape(given)}"
            ) from None
        if np.isnan(value).any():
            raise FlexbodyError(f"optimize_inputs: {name} has NaN")
        out.append(value.ravel().copy())
    if np.any(out[0] > out[1]):
        raise FlexbodyError("optimize_inputs: lower exceeds upper for some input values")
    return out[0], out[1]


def _finite(bound: float) -> float | None:
    """A bound as scipy takes it: None where infinite."""
    return None if np.isinf(bound) else float(bound)


class _Metric:
    """The optimiser's variables x = R U (flattened) of the inputs' values U (m, n_u), RᵀR = G the Gram matrix (m, m)
    (module docstring); R = I where G is singular (a run shorter than some pieces' support)."""

    def __init__(self, G: np.ndarray, shape: tuple):
        self.shape = shape
        try:
            self.R = cholesky(G, lower=False)
        except np.linalg.LinAlgError:
            self.R = np.eye(shape[0])
        self.diagonal = not np.any(self.R - np.diag(np.diag(self.R)))

    def variables(self, u: np.ndarray) -> np.ndarray:
        return (self.R @ u.reshape(self.shape)).ravel()

    def values(self, x: np.ndarray) -> np.ndarray:
        return solve_triangular(self.R, x.reshape(self.shape), lower=False).ravel()

    def gradient(self, g: np.ndarray) -> np.ndarray:
        """∂/∂x = R⁻ᵀ ∂/∂U of a gradient (m n_u,) in the values, contiguous (SLSQP wanders with views)."""
        return np.ascontiguousarray(solve_triangular(self.R, g.reshape(self.shape), trans="T", lower=False).ravel())

    def bounds(self, bounds) -> tuple[list | None, list[dict]]:
        """(scipy's bounds on x, SLSQP's linear constraints) of bounds (lower, upper) on U (flattened) or None: boxes
        on x where R is diagonal, else linear inequalities lower ≤ R⁻¹x ≤ upper where finite."""
        if bounds is None:
            return None, []
        if self.diagonal:
            scale = np.repeat(np.diag(self.R), self.shape[1])
            return [(_finite(lo * s), _finite(hi * s)) for lo, hi, s in zip(*bounds, scale)], []
        inverse = solve_triangular(self.R, np.eye(self.shape[0]), lower=False)
        J = np.kron(inverse, np.eye(self.shape[1]))  # ∂U/∂x (m n_u, m n_u)
        out = []
        for sign, bound in ((1.0, bounds[0]), (-1.0, bounds[1])):
            finite = np.isfinite(bound)
            if finite.any():
                rows, limit = sign * J[finite], sign * bound[finite]
                out.append({"type": "ineq", "fun": lambda x, A=rows, b=limit: A @ x - b, "jac": lambda x, A=rows: A})
        return None, out


def _scipy_constraints(constraints: Sequence[RunConstraint], shooting: _Shooting, metric: _Metric) -> list[dict]:
    """SLSQP's constraint dictionaries in the variables x: f − value = 0, or f − lower ≥ 0 and upper − f ≥ 0 where
    finite."""
    out = []
    for i, c in enumerate(constraints, start=1):
        if c.lower == c.upper:
            out.append({"type": "eq", "fun": _side(shooting, metric, i, 1.0, c.lower),
                        "jac": _slope(shooting, metric, i, 1.0)})  # fmt: skip
            continue
        for sign, bound in ((1.0, c.lower), (-1.0, c.upper)):
            if np.isfinite(bound):
                out.append({"type": "ineq", "fun": _side(shooting, metric, i, sign, bound),
                            "jac": _slope(shooting, metric, i, sign)})  # fmt: skip
    return out


def _side(shooting: _Shooting, metric: _Metric, i: int, sign: float, bound: float):
    return lambda x: sign * (float(shooting.at(metric.values(x))[0][i]) - bound)


def _slope(shooting: _Shooting, metric: _Metric, i: int, sign: float):
    return lambda x: sign * metric.gradient(shooting.at(metric.values(x))[1][i])
