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
prediction is below the cost's rounding, does not rise above it); μ falls tenfold
after a full step and rises tenfold after a failed pass. It stops when Σ‖Q_u‖² ≤ ``tolerance`` (Crocoddyl's
stopping criterion).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from ..dynamics import forward
from ..errors import ConvergenceError, ModelError
from ..solvers.dynamics_derivatives import forward_derivatives
from ..system.description import as_assembled
from ..system.state import State

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
        r_u = None if u is None else np.zeros((x.size, u.size))
        return self.value(model, x, u), np.eye(x.size), r_u


@dataclass(frozen=True, eq=False)
class InputResidual:
    """r = u − reference (k,) [N or N·m] (reference zero by default), weighted by ``weight``; running costs only."""

    weight: float
    reference: ArrayLike = 0.0
    needs_inputs = True

    def value(self, model: AssembledSystem, x: np.ndarray, u: np.ndarray) -> np.ndarray:
        return u - np.asarray(self.reference, dtype=float)

    def evaluate(self, model: AssembledSystem, x: np.ndarray, u: np.ndarray) -> ResidualTerms:
        return self.value(model, x, u), np.zeros((u.size, x.size)), np.eye(u.size)


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
    Gauss–Newton DDP (module docstring). ConvergenceError when ``max_iterations`` pass without meeting ``tolerance``."""
    start = time.perf_counter()
    asm = problem.assembled
    S = np.asarray(asm.S, dtype=float)
    us = _holding(asm, problem, S) if inputs is None else np.array(inputs, dtype=float)
    xs, us = _rollout(asm, problem, S, us)
    cost, mu, stop = _cost(asm, problem, xs, us), 1e-9, np.inf
    for iteration in range(1, max_iterations + 1):
        k, K, stop, expected = _backward(asm, problem, S, xs, us, mu)
        if stop <= tolerance:
            return DDPSolution(xs, us, cost, iteration - 1, stop, time.perf_counter() - start)
        found = _line_search(asm, problem, S, xs, us, k, K, cost, expected)
        if found is None:
            mu *= 10.0
            continue
        xs, us, cost, alpha = found
        mu = max(mu / 10.0, 1e-12) if alpha == 1.0 else mu
    raise ConvergenceError(
        f"solve_ddp: Σ‖Q_u‖² = {stop:.3e} > {tolerance:.1e} after {max_iterations} iterations (cost {cost:.9g})"
    )


def _holding(asm: AssembledSystem, problem: ReachingProblem, S: np.ndarray) -> np.ndarray:
    """The inputs holding x0's configuration at rest at every interval (Crocoddyl's quasi-static start)."""
    n = asm.n_dofs
    q = problem.x0[:n]
    ws = asm.workspace(0.0, q, np.zeros(n))
    h = ws.terms().h
    return np.tile(np.linalg.lstsq(S.T, h, rcond=None)[0], (problem.N, 1))


def _acceleration(asm: AssembledSystem, x: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """a (n,) at (x, τ): a lone rigid tree's own compiled forward dynamics, else the system's."""
    n = asm.n_dofs
    tree = _lone_tree(asm)
    if tree is not None:
        return tree.forward_dynamics(x[:n], x[n:], tau)
    return forward(asm, State(0.0, x[:n], x[n:]), tau).a


def _derivatives(asm: AssembledSystem, x: np.ndarray, tau: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """∂a/∂q, ∂a/∂v, ∂a/∂τ (n, n) at (x, τ): a lone rigid tree's own (the same formulas, compiled), else
    :func:`~flexbody.solvers.dynamics_derivatives.forward_derivatives`."""
    n = asm.n_dofs
    tree = _lone_tree(asm)
    if tree is not None:
        return tree.forward_dynamics_derivatives(x[:n], x[n:], tau)
    d = forward_derivatives(asm, State(0.0, x[:n], x[n:]), tau)
    return d.da_dq, d.da_dv, d.da_dtau


def _lone_tree(asm: AssembledSystem):
    """The system's one rigid tree when it is nothing else (no bodies, rows or force elements), else None."""
    only = len(asm.trees) == 1 and not asm.n_constraints and asm.n_dofs == asm.trees[0].n_dofs
    return asm.trees[0] if only and not asm.forces.elements else None


def _rollout(asm, problem: ReachingProblem, S: np.ndarray, us: np.ndarray, feedback=None):
    """(xs (N + 1, 2n), us (N, k)) from x0 under ``us``, or under u_i = us_i + αk_i + K_i(x_i − x̄_i) with
    ``feedback`` = (x̄s, k, K, α); symplectic Euler: v⁺ = v + dt a, q⁺ = q + dt v⁺."""
    n, dt = asm.n_dofs, problem.dt
    xs, applied = np.empty((us.shape[0] + 1, problem.x0.size)), np.array(us, dtype=float)
    xs[0] = problem.x0
    for i in range(us.shape[0]):
        if feedback is not None:
            reference, k, K, alpha = feedback
            applied[i] = us[i] + alpha * k[i] + K[i] @ (xs[i] - reference[i])
        v = xs[i, n:] + dt * _acceleration(asm, xs[i], S.T @ applied[i])
        xs[i + 1, :n], xs[i + 1, n:] = xs[i, :n] + dt * v, v
    return xs, applied


def _stage(asm, residuals, x: np.ndarray, u: np.ndarray | None, scale: float):
    """(l_x, l_u, l_xx, l_uu, l_ux) of scale·Σ w ½‖r‖² at (x, u) with the Gauss–Newton Hessians (l_u … None without
    inputs)."""
    lx, lxx = np.zeros(x.size), np.zeros((x.size, x.size))
    lu = luu = lux = None
    if u is not None:
        lu, luu, lux = np.zeros(u.size), np.zeros((u.size, u.size)), np.zeros((u.size, x.size))
    for res in residuals:
        w = scale * res.weight
        r, r_x, r_u = res.evaluate(asm, x, u)
        lx += w * (r_x.T @ r)
        lxx += w * (r_x.T @ r_x)
        if u is not None:
            lu += w * (r_u.T @ r)
            luu += w * (r_u.T @ r_u)
            lux += w * (r_u.T @ r_x)
    return lx, lu, lxx, luu, lux


def _stage_cost(asm, residuals, x: np.ndarray, u: np.ndarray | None, scale: float) -> float:
    """scale·Σ w ½‖r‖² at (x, u), the residuals' values alone."""
    total = 0.0
    for res in residuals:
        r = res.value(asm, x, u)
        total += 0.5 * res.weight * float(r @ r)
    return scale * total


def _cost(asm, problem: ReachingProblem, xs: np.ndarray, us: np.ndarray) -> float:
    total = sum(_stage_cost(asm, problem.running, x, u, problem.dt) for x, u in zip(xs[:-1], us))
    return float(total + _stage_cost(asm, problem.terminal, xs[-1], None, 1.0))


def _backward(asm, problem: ReachingProblem, S: np.ndarray, xs: np.ndarray, us: np.ndarray, mu: float):
    """(k (N, k), K (N, k, 2n), Σ‖Q_u‖², the expected decrease of a full step's first and second order)."""
    n, dt = asm.n_dofs, problem.dt
    Vx, _, Vxx, _, _ = _stage(asm, problem.terminal, xs[-1], None, 1.0)
    N, m = us.shape
    ks, Ks = np.empty((N, m)), np.empty((N, m, 2 * n))
    stop, d1, d2 = 0.0, 0.0, 0.0
    for i in range(N - 1, -1, -1):
        x, u = xs[i], us[i]
        A_q, A_v, A_tau = _derivatives(asm, x, S.T @ u)
        B = A_tau @ S.T
        Fx = np.block([[np.eye(n) + dt * dt * A_q, dt * np.eye(n) + dt * dt * A_v], [dt * A_q, np.eye(n) + dt * A_v]])
        Fu = np.vstack([dt * dt * B, dt * B])
        lx, lu, lxx, luu, lux = _stage(asm, problem.running, x, u, dt)
        Qx, Qu = lx + Fx.T @ Vx, lu + Fu.T @ Vx
        VF = Vxx @ Fx
        Qxx, Qux = lxx + Fx.T @ VF, lux + Fu.T @ VF
        Quu = luu + Fu.T @ Vxx @ Fu
        stop += float(Qu @ Qu)
        factor = np.linalg.cholesky(Quu + mu * np.eye(m))
        gains = -_cho_solve(factor, np.column_stack([Qu, Qux]))
        k, K = gains[:, 0], gains[:, 1:]
        ks[i], Ks[i] = k, K
        d1 += float(k @ Qu)
        d2 += 0.5 * float(k @ Quu @ k)
        Vx = Qx + K.T @ Quu @ k + K.T @ Qu + Qux.T @ k
        Vxx = Qxx + K.T @ Quu @ K + K.T @ Qux + Qux.T @ K
        Vxx = 0.5 * (Vxx + Vxx.T)
    return ks, Ks, stop, (d1, d2)


def _cho_solve(L: np.ndarray, b: np.ndarray) -> np.ndarray:
    import scipy.linalg as la

    return la.solve_triangular(L.T, la.solve_triangular(L, b, lower=True), lower=False)


def _line_search(asm, problem, S, xs, us, k, K, cost, expected):
    """(xs, us, cost, α) of the first α = 1, ½, … whose rollout lowers the cost by a tenth of the prediction."""
    d1, d2 = expected
    alpha = 1.0
    while alpha >= 1e-4:
        new_xs, new_us = _rollout(asm, problem, S, us, (xs, k, K, alpha))
        new_cost = _cost(asm, problem, new_xs, new_us)
        predicted = -(alpha * d1 + alpha * alpha * d2)
        noise = 1e-13 * abs(cost)  # a decrease the cost's rounding hides: the step refines the inputs, accepted
        if cost - new_cost >= 0.1 * predicted or (predicted <= noise and new_cost <= cost + noise):
            return new_xs, new_us, new_cost, alpha
        alpha *= 0.5
    return None
