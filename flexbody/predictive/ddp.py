"""Optimal control over a horizon by differential dynamic programming on the step derivatives (Gauss–Newton DDP, as
Crocoddyl's solvers), for the same problems as Crocoddyl's: actuator inputs held over N intervals of dt, the state
x = (q, v) stepped by symplectic Euler, and sums of weighted squared residuals as costs.

The step (Crocoddyl's ``IntegratedActionModelEuler``): a = a(q, v, Sᵀu) the model's forward dynamics,
v⁺ = v + dt a, q⁺ = q + dt v⁺; its derivatives from ∂a/∂q, ∂a/∂v, ∂a/∂τ
(:func:`~flexbody.solvers.dynamics_derivatives.forward_derivatives`): F_x = [[I + dt²A_q, dt I + dt²A_v],
[dt A_q, I + dt A_v]], F_u = [dt²; dt] A_τ Sᵀ. The costs: the running one dt·Σ w ½‖r(x, u)‖² at every interval's
start, the terminal one Σ w ½‖r(x_N)‖²; residuals :class:`PointResidual` (a point's position against a target),
:class:`StateResidual` and :class:`InputResidual`, with the Gauss–Newton Hessians l_xx = Σ w r_xᵀr_x, ….

The solver (Mayne 1966; Tassa, Erez & Todorov, IROS 2012; the Gauss–Newton form of Mastalli et al., ICRA 2020):
the backward pass takes Q_x = l_x + F_xᵀV′_x, Q_u = l_u + F_uᵀV′_x, Q_xx = l_xx + F_xᵀV′_xxF_x,
Q_uu = l_uu + F_uᵀV′_xxF_u + μI, Q_ux = l_ux + F_uᵀV′_xxF_x, the gains k = −Q_uu⁻¹Q_u, K = −Q_uu⁻¹Q_ux, and
V_x = Q_x + KᵀQ_uu k + KᵀQ_u + Q_uxᵀk, V_xx = Q_xx + KᵀQ_uuK + KᵀQ_ux + Q_uxᵀK; the forward pass rolls out
u = ū + αk + K(x − x̄) with α = 1, ½, … until the cost falls by a tenth of the model's prediction (or, once the
prediction is below the cost's rounding, does not rise above it); μ falls tenfold after a full step and rises tenfold
after a failed pass (no step accepted, or Q_uu + μI not positive definite). It stops when Σ‖Q_u‖² ≤ ``tolerance``
(Crocoddyl's stopping criterion).

Two routes share every formula (:mod:`flexbody.predictive.ddp_stage`): a lone rigid tree whose residuals are its links'
points, states and inputs sweeps in one compiled call per rollout and per backward pass
(:mod:`flexbody.predictive.tree_sweeps`, on the tree's own compiled dynamics and derivatives); any other model sweeps
stage by stage, on its forward dynamics, :func:`~flexbody.solvers.dynamics_derivatives.forward_derivatives` and the
residuals' own ``evaluate``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from ..dynamics import forward
from ..errors import ConvergenceError, ModelError, StateError
from ..rigid.anchors import LinkPoint
from ..rigid.tree_dynamics import work_size
from ..solvers.dynamics_derivatives import forward_derivatives
from ..system.description import as_assembled
from ..system.state import State
from .ddp_stage import (
    difference_terms,
    euler_derivatives,
    euler_step,
    feedback_input,
    gauss_newton_add,
    residual_cost,
    riccati_scratch,
    riccati_step,
)
from .tree_sweeps import pack_costs, sweep_scratch, tree_backward, tree_rollout

if TYPE_CHECKING:
    from ..system import AssembledSystem

ResidualTerms = tuple[np.ndarray, np.ndarray, "np.ndarray | None"]
"""(r (m,), r_x (m, 2n), r_u (m, k), None in a terminal cost) of a residual at (x, u)."""

__all__ = ["PointResidual", "StateResidual", "InputResidual", "ReachingProblem", "DDPSolution", "solve_ddp"]


@dataclass(frozen=True, eq=False)
class PointResidual:
    """r = p(q) − target (3,) [m] of ``anchor`` (a link point), weighted by ``weight`` [1/m²]."""

    anchor: Any
    target: ArrayLike
    weight: float
    needs_inputs = False

    def value(self, model: AssembledSystem, x: np.ndarray, u: np.ndarray | None) -> np.ndarray:
        """r at the state x (and inputs u)."""
        n = model.n_dofs
        return self.anchor.position(model.workspace(0.0, x[:n], x[n:])) - np.asarray(self.target, dtype=float)

    def evaluate(self, model: AssembledSystem, x: np.ndarray, u: np.ndarray | None) -> ResidualTerms:
        """(r, r_x (3, 2n), r_u (3, k) or None) at (x, u)."""
        n = model.n_dofs
        ws = model.workspace(0.0, x[:n], x[n:])
        cols, J = self.anchor.jacobian(ws)
        r_x = np.zeros((3, 2 * n))
        r_x[:, cols] = J
        r_u = None if u is None else np.zeros((3, u.size))
        return self.anchor.position(ws) - np.asarray(self.target, dtype=float), r_x, r_u


@dataclass(frozen=True, eq=False)
class StateResidual:
    """r = x − reference (2n,) [m or rad, m/s or rad/s], weighted by ``weight``."""

    reference: ArrayLike
    weight: float
    needs_inputs = False

    def value(self, model: AssembledSystem, x: np.ndarray, u: np.ndarray | None) -> np.ndarray:
        return x - np.asarray(self.reference, dtype=float)

    def evaluate(self, model: AssembledSystem, x: np.ndarray, u: np.ndarray | None) -> ResidualTerms:
        r, r_x = _difference(x, self.reference)
        return r, r_x, None if u is None else np.zeros((x.size, u.size))


@dataclass(frozen=True, eq=False)
class InputResidual:
    """r = u − reference (k,) [N or N·m] (reference zero by default), weighted by ``weight``; running costs only."""

    weight: float
    reference: ArrayLike = 0.0
    needs_inputs = True

    def value(self, model: AssembledSystem, x: np.ndarray, u: np.ndarray) -> np.ndarray:
        return u - np.asarray(self.reference, dtype=float)

    def evaluate(self, model: AssembledSystem, x: np.ndarray, u: np.ndarray) -> ResidualTerms:
        r, r_u = _difference(u, self.reference)
        return r, np.zeros((u.size, x.size)), r_u


def _difference(y: np.ndarray, reference: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """(r, r_y) of r = y − reference (:func:`~flexbody.predictive.ddp_stage.difference_terms`)."""
    r, r_y = np.empty(y.size), np.empty((y.size, y.size))
    difference_terms(np.ascontiguousarray(y, dtype=float), np.full(y.size, reference, dtype=float), r, r_y)
    return r, r_y


@dataclass(frozen=True, eq=False)
class ReachingProblem:
    """N intervals of ``dt`` [s] from ``x0`` (2n,) of ``model`` (unconstrained, q̇ = v), with ``running`` and
    ``terminal`` residuals (module docstring)."""

    model: Any
    x0: np.ndarray
    dt: float
    N: int
    running: Sequence[Any]
    terminal: Sequence[Any]
    assembled: Any = field(init=False, repr=False)

    def __post_init__(self) -> None:
        asm = as_assembled(self.model, "ReachingProblem(model=...)")
        object.__setattr__(self, "assembled", asm)
        if asm.n_constraints:
            raise ModelError("ReachingProblem: the model has constraint rows; DDP here steps unconstrained models")
        if np.shape(self.x0) != (2 * asm.n_dofs,):
            raise ModelError(f"ReachingProblem: x0 must be (q, v), ({2 * asm.n_dofs},), got {np.shape(self.x0)}")
        if not (self.dt > 0 and self.N >= 1):
            raise ModelError(f"ReachingProblem: dt must be positive and N ≥ 1, got {self.dt!r} and {self.N!r}")
        for where, residuals in (("running", self.running), ("terminal", self.terminal)):
            for res in residuals:
                if not (callable(getattr(res, "evaluate", None)) and callable(getattr(res, "value", None))):
                    raise ModelError(
                        f"ReachingProblem: {where} residual {res!r} is not a PointResidual, StateResidual, …"
                    )
        for res in self.terminal:
            if res.needs_inputs:
                raise ModelError(f"ReachingProblem: the terminal cost has no inputs, so it cannot take {res!r}")


@dataclass(frozen=True)
class DDPSolution:
    """xs (N + 1, 2n) and us (N, k) of the optimum, its ``cost``, ``iterations``, the last Σ‖Q_u‖² (``stop``) and the
    wall ``seconds`` of the solve."""

    xs: np.ndarray
    us: np.ndarray
    cost: float
    iterations: int
    stop: float
    seconds: float


def solve_ddp(
    problem: ReachingProblem, inputs: ArrayLike | None = None, *, tolerance: float = 1e-12, max_iterations: int = 200
) -> DDPSolution:
    """The optimal inputs of ``problem`` from ``inputs`` (N, k) (default: the torques holding x0 at rest) by
    Gauss–Newton DDP (module docstring). ConvergenceError when ``max_iterations`` pass without meeting ``tolerance``;
    StateError when the rollout of the first inputs leaves the model's states (not finite, or its dynamics fail)."""
    start = time.perf_counter()
    sweeps = _sweeps(problem)
    us = sweeps.holding() if inputs is None else np.array(inputs, dtype=float)
    first = sweeps.rollout(us)
    if first is None:
        raise StateError("solve_ddp: the rollout of the first inputs fails (states not finite or dynamics singular)")
    xs, us, cost = first
    mu, stop = 1e-9, np.inf
    for iteration in range(1, max_iterations + 1):
        found = sweeps.backward(xs, us, mu)
        if found is None:  # Q_uu + μI not positive definite somewhere
            mu *= 10.0
            continue
        k, K, stop, expected = found
        if stop <= tolerance:
            return DDPSolution(xs, us, cost, iteration - 1, stop, time.perf_counter() - start)
        step = _line_search(sweeps, xs, us, k, K, cost, expected)
        if step is None:
            mu *= 10.0
            continue
        xs, us, cost, alpha = step
        mu = max(mu / 10.0, 1e-12) if alpha == 1.0 else mu
    raise ConvergenceError(
        f"solve_ddp: Σ‖Q_u‖² = {stop:.3e} > {tolerance:.1e} after {max_iterations} iterations (cost {cost:.9g})"
    )


Rollout = tuple[np.ndarray, np.ndarray, float]
"""(xs (N + 1, 2n), us (N, k) applied, cost) of a rollout."""
Backward = tuple[np.ndarray, np.ndarray, float, tuple[float, float]]
"""(k (N, k), K (N, k, 2n), Σ‖Q_u‖², the expected decrease of a full step's first and second order)."""


def _sweeps(problem: ReachingProblem) -> _TreeSweeps | _ModelSweeps:
    """A lone rigid tree's compiled sweeps when its costs pack (:mod:`flexbody.predictive.tree_sweeps`), else the
    stage-by-stage sweeps of any model."""
    tree = _lone_tree(problem.assembled)
    costs = None if tree is None else _packed_costs(problem, tree)
    return _ModelSweeps(problem) if costs is None else _TreeSweeps(problem, tree, costs)


def _lone_tree(asm: AssembledSystem):
    """The system's one rigid tree when it is nothing else (no bodies, rows or force elements), else None."""
    only = len(asm.trees) == 1 and not asm.n_constraints and asm.n_dofs == asm.trees[0].n_dofs
    return asm.trees[0] if only and not asm.forces.elements else None


def _packed_costs(problem: ReachingProblem, tree) -> tuple | None:
    """(running, terminal) packed (:func:`~flexbody.predictive.tree_sweeps.pack_costs`), None when a residual is not a
    point of ``tree``'s links, a state or an input residual."""
    n_states, n_inputs = problem.x0.size, np.shape(problem.assembled.S)[0]
    packed = []
    for residuals in (problem.running, problem.terminal):
        points: list[tuple] = []
        states: list[tuple] = []
        inputs: list[tuple] = []
        for res in residuals:
            if isinstance(res, PointResidual) and isinstance(res.anchor, LinkPoint) and res.anchor.link.tree is tree:
                points.append((res.anchor.link.index, res.anchor.offset, res.target, res.weight))
            elif type(res) in (StateResidual, InputResidual):
                (states if isinstance(res, StateResidual) else inputs).append((res.reference, res.weight))
            else:
                return None
        packed.append(pack_costs(points, states, inputs, n_states, n_inputs))
    return tuple(packed)


class _TreeSweeps:
    """The sweeps of a lone rigid tree, each one compiled call (:mod:`flexbody.predictive.tree_sweeps`)."""

    def __init__(self, problem: ReachingProblem, tree, costs: tuple):
        self.problem, self.costs = problem, costs
        indices, reals = tree.packed_model()
        work = np.empty(work_size(tree.n_links, tree.n_dofs))
        self.tree = (indices, reals, work, tree.arrays()["support_matrix"], np.array(tree.gravity, dtype=float))
        self.S = np.ascontiguousarray(problem.assembled.S, dtype=float)
        self.x0 = np.ascontiguousarray(problem.x0, dtype=float)
        self.scratch = sweep_scratch(tree.n_dofs, self.S.shape[0], costs)

    def holding(self) -> np.ndarray:
        return _holding(self.problem, self.S)

    def rollout(self, us: np.ndarray, feedback=None) -> Rollout | None:
        N, nx = us.shape[0], self.x0.size
        xs, applied = np.empty((N + 1, nx)), np.empty_like(us)
        x_bar, k, K, alpha = feedback if feedback is not None else (xs, us, np.empty((N, us.shape[1], nx)), 0.0)
        head = (self.tree, self.S, self.problem.dt, self.x0, us, x_bar, k, K, alpha, feedback is not None)
        ok, cost = tree_rollout(*head, self.costs, self.scratch, xs, applied)
        return (xs, applied, cost) if ok else None

    def backward(self, xs: np.ndarray, us: np.ndarray, mu: float) -> Backward | None:
        N, m = us.shape
        ks, Ks = np.empty((N, m)), np.empty((N, m, xs.shape[1]))
        ok, stop, d1, d2 = tree_backward(
            self.tree, self.S, self.problem.dt, xs, us, mu, self.costs, self.scratch, ks, Ks
        )
        return (ks, Ks, stop, (d1, d2)) if ok else None


class _ModelSweeps:
    """The sweeps of any unconstrained model, stage by stage: its forward dynamics and
    :func:`~flexbody.solvers.dynamics_derivatives.forward_derivatives` at each stage, the residuals' own terms, and
    the compiled stage pieces of :mod:`flexbody.predictive.ddp_stage`."""

    def __init__(self, problem: ReachingProblem):
        self.problem, self.asm = problem, problem.assembled
        self.S = np.ascontiguousarray(self.asm.S, dtype=float)

    def holding(self) -> np.ndarray:
        return _holding(self.problem, self.S)

    def rollout(self, us: np.ndarray, feedback=None) -> Rollout | None:
        """Symplectic Euler from x0 under ``us``, or under u_i = us_i + αk_i + K_i(x_i − x̄_i) with ``feedback`` =
        (x̄s, k, K, α); None when a state is not finite or the dynamics refuse one (StateError), as the compiled
        sweeps."""
        problem = self.problem
        xs, applied = np.empty((us.shape[0] + 1, problem.x0.size)), np.array(us, dtype=float)
        xs[0] = problem.x0
        for i in range(us.shape[0]):
            if feedback is not None:
                x_bar, k, K, alpha = feedback
                feedback_input(us[i], k[i], K[i], xs[i], x_bar[i], alpha, applied[i])
            try:
                with np.errstate(over="ignore", invalid="ignore"):  # a diverging rollout: refused just below
                    a = _acceleration(self.asm, xs[i], self.S.T @ applied[i])
            except StateError:
                return None
            euler_step(xs[i], a, problem.dt, xs[i + 1])
            if not np.all(np.isfinite(xs[i + 1])):
                return None
        return xs, applied, _cost(self.asm, problem, xs, applied)

    def backward(self, xs: np.ndarray, us: np.ndarray, mu: float) -> Backward | None:
        problem, n, dt = self.problem, self.asm.n_dofs, self.problem.dt
        N, m = us.shape
        ks, Ks = np.empty((N, m)), np.empty((N, m, 2 * n))
        Vx, _, Vxx, _, _ = _stage(self.asm, problem.terminal, xs[-1], np.zeros(m), 1.0, inputs=False)
        Fx, Fu, scratch = np.empty((2 * n, 2 * n)), np.empty((2 * n, m)), riccati_scratch(2 * n, m)
        stop, d1, d2 = 0.0, 0.0, 0.0
        for i in range(N - 1, -1, -1):
            x, u = xs[i], us[i]
            A_q, A_v, A_tau = _derivatives(self.asm, x, self.S.T @ u)
            euler_derivatives(A_q, A_v, np.ascontiguousarray(A_tau @ self.S.T), dt, Fx, Fu)
            lx, lu, lxx, luu, lux = _stage(self.asm, problem.running, x, u, dt, inputs=True)
            ok, qu2, k1, k2 = riccati_step(Fx, Fu, lx, lu, lxx, luu, lux, Vx, Vxx, mu, ks[i], Ks[i], scratch)
            if not ok:
                return None
            stop, d1, d2 = stop + qu2, d1 + k1, d2 + k2
        return ks, Ks, stop, (d1, d2)


def _holding(problem: ReachingProblem, S: np.ndarray) -> np.ndarray:
    """The inputs holding x0's configuration at rest at every interval (Crocoddyl's quasi-static start)."""
    asm = problem.assembled
    n = asm.n_dofs
    ws = asm.workspace(0.0, problem.x0[:n], np.zeros(n))
    h = ws.terms().h
    return np.tile(np.linalg.lstsq(S.T, h, rcond=None)[0], (problem.N, 1))


def _acceleration(asm: AssembledSystem, x: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """a (n,) at (x, τ) by the system's forward dynamics."""
    n = asm.n_dofs
    return forward(asm, State(0.0, x[:n], x[n:]), tau).a


def _derivatives(asm: AssembledSystem, x: np.ndarray, tau: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """∂a/∂q, ∂a/∂v, ∂a/∂τ (n, n) at (x, τ) (:func:`~flexbody.solvers.dynamics_derivatives.forward_derivatives`)."""
    n = asm.n_dofs
    d = forward_derivatives(asm, State(0.0, x[:n], x[n:]), tau)
    return d.da_dq, d.da_dv, d.da_dtau


def _stage(asm, residuals, x: np.ndarray, u: np.ndarray, scale: float, *, inputs: bool):
    """(l_x, l_u, l_xx, l_uu, l_ux) of scale·Σ w ½‖r‖² at (x, u) with the Gauss–Newton Hessians (the input terms
    zero without ``inputs``)."""
    lx, lxx = np.zeros(x.size), np.zeros((x.size, x.size))
    lu, luu, lux = np.zeros(u.size), np.zeros((u.size, u.size)), np.zeros((u.size, x.size))
    for res in residuals:
        r, r_x, r_u = res.evaluate(asm, x, u if inputs else None)
        r_u = np.zeros((r.size, u.size)) if r_u is None else r_u
        gauss_newton_add(scale * res.weight, r, r_x, r_u, lx, lu, lxx, luu, lux, inputs)
    return lx, lu, lxx, luu, lux


def _stage_cost(asm, residuals, x: np.ndarray, u: np.ndarray | None, scale: float) -> float:
    """scale·Σ w ½‖r‖² at (x, u), the residuals' values alone."""
    return scale * sum(residual_cost(res.weight, res.value(asm, x, u)) for res in residuals)


def _cost(asm, problem: ReachingProblem, xs: np.ndarray, us: np.ndarray) -> float:
    total = sum(_stage_cost(asm, problem.running, x, u, problem.dt) for x, u in zip(xs[:-1], us))
    return float(total + _stage_cost(asm, problem.terminal, xs[-1], None, 1.0))


def _line_search(sweeps, xs, us, k, K, cost, expected):
    """(xs, us, cost, α) of the first α = 1, ½, … whose rollout lowers the cost by a tenth of the prediction."""
    d1, d2 = expected
    alpha = 1.0
    while alpha >= 1e-4:
        rolled = sweeps.rollout(us, (xs, k, K, alpha))
        if rolled is not None:
            new_xs, new_us, new_cost = rolled
            predicted = -(alpha * d1 + alpha * alpha * d2)
            noise = 1e-13 * abs(cost)  # a decrease the cost's rounding hides: the step refines the inputs, accepted
            if cost - new_cost >= 0.1 * predicted or (predicted <= noise and new_cost <= cost + noise):
                return new_xs, new_us, new_cost, alpha
        alpha *= 0.5
    return None
