"""Sensitivities of whole generalized-α runs: the gradient of a cost of the recorded run (:mod:`flexbody.solvers.
run_costs`) with respect to piecewise inputs, the start (q₀, v₀) and flexible bodies' constants, by the discrete
adjoint (one backward sweep, whatever the number of inputs) or the tangent-linear (forward) sensitivities — of the
discrete run, exact up to the Newton tolerance of its steps (#36 item 5).

A step of h from t_n carries y_n = (q_n, v_n, q̈_n, a_n) to y_{n+1} through the unknowns (q̈_{n+1}, λ_{n+1}) of
:mod:`flexbody.solvers.generalized_alpha`, with c₁ = (1 − α_f)/(1 − α_m), c₂ = α_f/(1 − α_m), c₃ = −α_m/(1 − α_m):

    a_{n+1} = c₁ q̈_{n+1} + c₂ q̈_n + c₃ a_n,
    q_{n+1} = q_n + h v_n + h²(½ − β) a_n + h²β a_{n+1},   v_{n+1} = v_n + h(1 − γ) a_n + hγ a_{n+1},
    r(t_{n+1}, q_{n+1}, v_{n+1}, q̈_{n+1}, λ_{n+1}) = τ_n,   φ(q_{n+1}, t_{n+1}) = 0.

Differentiated, with q̂, v̂ the parts of δq_{n+1}, δv_{n+1} from y_n (δq_{n+1} = q̂ + β′h² δq̈_{n+1}, δv_{n+1} =
v̂ + γ′h δq̈_{n+1}), the step's sensitivity solves the Newton matrix of the step at its converged point,

    [[A, Φᵀ], [Φ, 0]] [δq̈_{n+1}; −δλ_{n+1}] = [δτ_n − R_q q̂ − R_v v̂ − R_p δp; −Φ q̂/(β′h²)],
    A = M + γ′h R_v + β′h² R_q,

R_q, R_v, R_p the exact Jacobians of r (:class:`~flexbody.solvers.constrained_equations.EquationResidual`,
:func:`~flexbody.solvers.dynamics_derivatives.forward_derivatives`' constants), and the start q̈₀ = a₀ = a(q₀, v₀, τ₀)
by :func:`~flexbody.solvers.dynamics_derivatives.forward_derivatives`. The adjoint sweeps back with the transposed
matrix: for s = ∂J/∂q̈_{n+1} + β′h² q̄_{n+1} + γ′h v̄_{n+1} + c₁ ā_{n+1} (the adjoints of y_{n+1}),
[[Aᵀ, Φᵀ], [Φ, 0]] [μ; ν] = [s; 0], then q̂̄ = q̄_{n+1} − R_qᵀμ − Φᵀν/(β′h²), v̂̄ = v̄_{n+1} − R_vᵀμ, τ̄_n = μ,
p̄ −= R_pᵀμ, and y_n's adjoints by the transposed update.

Two kinds of terms join that matrix where a system has them: what couples joint and nodal columns (the Hessians of
rows curved in nodal coordinates, force elements between links and nodes: :meth:`~flexbody.solvers.
constrained_equations.EquationResidual.coupling_blocks`), and velocity-level rows, which a step holds as
g = Φv + φ_t = 0: their rows of the matrix are G = N + (γ′h/β′h²)Φ, N = ∂g/∂q, with right-hand side
−(N q̂ + Φ v̂)/(β′h²), and the adjoint solves with [[Aᵀ, Gᵀ], [Φ, 0]].

Rotation vectors (spherical joints, floating bases) step in the chart centred on each step's start
(:mod:`flexbody.solvers.step_charts`): the Newmark formulas above hold in that chart, for (ψ, ψ̇, ψ̈, â), and the
equations at the end read φ = log(exp([φ_n]×) exp([ψ]×)) and its rates. The sweeps take the linearizations T (to the
chart), F (back) and S (the switch past π) of :mod:`flexbody.solvers.chart_sensitivities`, so the unknown is δψ̈ and
the matrix A = R_q P_q + R_v P_v + M P_q̈ with P = ∂(q, v, q̈)/∂ψ̈ of F (β′h² I, γ′h I and I on the other
coordinates); the start's change also enters q̈ (the −M q̈̂ of the right-hand side). Without rotation vectors every
map is the identity and the formulas are those above.

Where a run restarted its accelerations at an input's jump (:mod:`flexbody.solvers.input_breaks`), the sweeps restart
as at the start: q̈_n = a_n = a(q_n, v_n, τ_n⁺) there, so δq̈_n = δa_n = ∂a/∂q δq_n + ∂a/∂v δv_n + ∂a/∂τ δτ_n⁺, and
the adjoint hands w = q̈̄_n + ā_n back to q̄_n, v̄_n and τ̄_n⁺ (what came before the restart feeds nothing after).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ..errors import FlexbodyError
from ..linalg.saddle_point import SaddlePointSolver
from ..system import State
from .chart_sensitivities import replayed_charts
from .constrained_equations import EquationResidual
from .dynamics_derivatives import (
    derivative_blockers,
    forward_derivatives,
    parameters_residual,
    require_derivatives,
    row_velocity_jacobian,
)

__all__ = ["StepJacobians", "StepFactor", "adjoint_sweep", "tangent_sweep", "run_blockers"]


def run_blockers(asm, joint_rows: str = "exact") -> list[str]:
    """What keeps a run's sensitivities from being exact (empty when they are): :func:`derivative_blockers` and
    velocity-level (Pfaffian) rows without ``velocity_derivatives`` (a step holds them as A v = b, whose change with q
    the sweeps need)."""
    out = derivative_blockers(asm, joint_rows)
    for c in asm.constraints:
        if any(getattr(c, "velocity_rows", ())) and not hasattr(c, "velocity_derivatives"):
            out.append(f"velocity-level rows of {c.name!r}")
    return out


class StepJacobians:
    """The exact Jacobians of the residual at the converged end of one step (t, q, v, q̈, λ), by blocks: joint
    (dense n_r × n_r) and flexible (sparse n_f × n_f); applies R_q, R_v and their transposes and factors the step
    matrix A = M + c_v R_v + c_q R_q, or its transpose, with the rows Φ."""

    def __init__(self, asm, residual: EquationResidual, t: float, q, v, qdd, lam):
        self.asm = asm
        self.ws = ws = asm.workspace(t, q, v)
        n_r = asm.n_rigid
        self.rq, self.rv, self.kf, self.cf = residual.jacobian_blocks(ws, qdd, lam)
        M = ws.mass_matrix()
        self.mr = (M.rigid_block() if asm.sparse else M) if n_r else np.zeros((0, 0))
        if asm.sparse:
            self.mf = asm.flexible.mass.matrix
        self.Phi = sp.csr_matrix(ws.constraint_rows()[1])
        self.xq, self.xv = residual.coupling_blocks(ws, lam)
        self.rows_q, self.rows_v = _row_partials(asm, ws, self.Phi)

    def apply(self, which: str, x: np.ndarray, transpose: bool = False) -> np.ndarray:
        """R_q x, R_v x or M x (``which`` "q", "v" or "m"), or their transposes, for x (n,) or (n, k): the joint and
        flexible blocks and what couples them (:meth:`EquationResidual.coupling_blocks`)."""
        asm, n_r = self.asm, self.asm.n_rigid
        rigid = {"q": self.rq, "v": self.rv, "m": self.mr}[which]
        out = np.zeros_like(x)
        out[:n_r] = (rigid.T if transpose else rigid) @ x[:n_r]
        if asm.sparse:
            flexible = {"q": self.kf, "v": self.cf, "m": self.mf}[which]
            fs = asm.flexible.slice
            out[fs] = (flexible.T if transpose else flexible) @ x[fs]
        coupling = {"q": self.xq, "v": self.xv, "m": None}[which]
        if coupling is not None:
            out += (coupling.T if transpose else coupling) @ x
        return out

    def factor(self, P, c_q: float, transpose: bool) -> StepFactor:
        """The factor of [[A, Φᵀ], [G, 0]] (or its transpose), A = R_q P_q + R_v P_v + M P_q̈ the residual's change
        per Δψ̈ of the step, G = (∂g/∂q P_q + ∂g/∂v P_v)/c_q the rows' (c_q = β′h²), for ``P`` = (P_q, P_v, P_q̈, …)
        :class:`~flexbody.solvers.chart_sensitivities.BlockMap` (the end's change per Δψ̈: β′h², γ′h and 1 without
        rotation vectors)."""
        P_q, P_v, P_d = P[:3]
        A_r = P_d.right_of(self.mr) + P_v.right_of(self.rv) + P_q.right_of(self.rq)
        A_f = sp.csr_matrix((0, 0))
        if self.asm.sparse:  # no rotation vectors among the nodal coordinates
            A_f = (P_d.right_of(self.mf) + P_v.right_of(self.cf) + P_q.right_of(self.kf)).tocsr()
        parts = [m.right_of(X) for X, m in ((self.xv, P_v), (self.xq, P_q)) if X is not None]
        coupling = sum(parts[1:], parts[0]) if parts else None
        G = (P_q.divided(c_q).right_of(self.rows_q) + P_v.divided(c_q).right_of(self.rows_v)).tocsr()
        if transpose:
            A_r, A_f = A_r.T, A_f.T.tocsr()
            coupling = None if coupling is None else coupling.T
            return StepFactor(self.asm.n_rigid, A_r, A_f, G, coupling, self.Phi)
        return StepFactor(self.asm.n_rigid, A_r, A_f, self.Phi, coupling, G)

    def rows_rhs(self, q_hat: np.ndarray, v_hat: np.ndarray, bq: float) -> np.ndarray:
        """The rows' right-hand side −(∂g/∂q q̂ + ∂g/∂v v̂)/(β′h²) of a tangent step (g = φ or Φv + φ_t)."""
        return -(self.rows_q @ q_hat + self.rows_v @ v_hat) / bq


class StepFactor:
    """An exact factor of a step's saddle-point matrix K = [[A, Φᵀ], [G, 0]], A = diag(A_r, A_f) + ``coupling`` (CSR
    (n, n) or None), G = ``rows`` (Φ unless given: the velocity-level rows' change differs): SuperLU of K itself
    (partial pivoting takes the indefinite K), or, where K is singular (redundant rows) and nothing couples the blocks,
    :class:`~flexbody.linalg.saddle_point.SaddlePointSolver` with ``exact=True`` (minimum-norm multipliers)."""

    def __init__(self, n_rigid: int, A_r: np.ndarray, A_f: sp.csr_matrix, Phi: sp.csr_matrix, coupling=None, rows=None):
        self.n, self.m = n_rigid + A_f.shape[0], Phi.shape[0]
        blocks = ([sp.csr_matrix(A_r)] if n_rigid else []) + ([A_f] if A_f.shape[0] else [])
        A = sp.block_diag(blocks, format="csr")
        if coupling is not None:
            A = (A + coupling).tocsr()
        G = Phi if rows is None else rows
        K = sp.bmat([[A, Phi.T], [G, None]], format="csc") if self.m else A.tocsc()
        try:
            self._lu, self._saddle = spla.splu(K), None
        except RuntimeError:  # exactly singular: dependent rows
            if coupling is not None or (Phi != G).nnz:
                raise FlexbodyError(
                    "run sensitivities: a step's matrix is singular (dependent rows) with joint and nodal columns "
                    "coupled (a rod, spring or curved surface between links and nodes), velocity-level rows or "
                    "rotation vectors (whose step chart turns the rows); remove the redundant rows"
                ) from None
            self._lu, self._saddle = None, SaddlePointSolver(n_rigid, exact=True)
            self._saddle.factor(A_r, A_f, Phi)

    def solve(self, r1: np.ndarray, r2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """x (n, …), y (m, …) with A x + Φᵀy = r₁, Φ x = r₂."""
        if self._saddle is not None:
            return self._saddle.solve(r1, r2)
        z = self._lu.solve(np.concatenate([r1, r2]))
        return z[: self.n], z[self.n :]


def _checked(asm, joint_rows: str) -> EquationResidual:
    require_derivatives("run sensitivities", asm, joint_rows, run_blockers)
    return EquationResidual(asm, exact=joint_rows == "exact")


def _coefficients(settings) -> tuple:
    am, af, gamma, beta = settings.parameters()
    return (1 - af) / (1 - am), af / (1 - am), -am / (1 - am), gamma, beta


def tangent_sweep(
    asm, settings, run, dtau: Callable[[int, bool], np.ndarray], dq0: np.ndarray, dv0: np.ndarray, parameters=(),
    joint_rows: str = "exact", restarts: Sequence[int] = (),
):  # fmt: skip
    """(δq, δv) (N + 1, n, k) of the recorded run ``run`` (times, q, v, q̈, λ, τ) for k directions: ``dtau(i, start)``
    (n, k) the inputs' perturbation of step i's equations at its end (``start`` False) or of the accelerations at its
    start or restart (True), ``dq0``, ``dv0`` (n, k) of the start, and for the constants the
    last p of the k directions (``parameters``: (body, name) pairs, unit perturbations); ``joint_rows`` as
    :func:`~flexbody.solvers.dynamics_derivatives.forward_derivatives` takes it; ``restarts``: the states at which
    the run restarted its accelerations (:func:`~flexbody.solvers.input_breaks.restart_steps`)."""
    residual = _checked(asm, joint_rows)
    c1, c2, c3, gamma, beta = _coefficients(settings)
    times, lam = run[0], run[4]
    N, n, k, p = len(times) - 1, asm.n_dofs, dq0.shape[1], len(parameters)
    starts = _starts(asm, run, restarts, parameters, joint_rows)
    charts = replayed_charts(asm, (c1, c2, c3, gamma, beta), run, {i: d.a for i, d in starts.items()})
    dp = np.zeros((p, k))
    dp[:, k - p :] = np.eye(p)
    state = [dq0, dv0, None, None]
    out_q, out_v = np.empty((N + 1, n, k)), np.empty((N + 1, n, k))
    out_q[0], out_v[0] = dq0, dv0
    for i in range(N):
        if i in starts:  # q̈ = a = a(q, v, τ, p) at the start and at each restart
            d = starts[i]
            d_qdd = d.da_dq @ state[0] + d.da_dv @ state[1] + d.da_dtau @ dtau(i, True)
            if d.da_dp is not None:
                d_qdd += d.da_dp @ dp
            state = [state[0], state[1], d_qdd, d_qdd.copy()]
        h, step = times[i + 1] - times[i], charts[i]
        bq, gv = beta * c1 * h * h, gamma * c1 * h
        Q0, V0, D0, A0 = step.to_chart(state)
        blend = c2 * D0 + c3 * A0  # the step's â at fixed ψ̈
        psi = Q0 + h * V0 + h * h * (0.5 - beta) * A0 + h * h * beta * blend
        psi_rate = V0 + h * (1.0 - gamma) * A0 + h * gamma * blend
        hat = step.from_chart([state[0], psi, psi_rate, None, blend])
        P = step.from_chart.along((0.0, bq, gv, 1.0, c1))  # (δq, δv, δq̈, δa) of the end per δψ̈
        jac = StepJacobians(asm, residual, times[i + 1], step.end[0], step.end[1], step.end[2], lam[i + 1])
        rhs = dtau(i, False) - jac.apply("q", hat[0]) - jac.apply("v", hat[1])
        if hat[2] is not None:  # ψ̇ and the start turn q̈ (rotation vectors)
            rhs -= jac.apply("m", hat[2])
        if p:
            rhs -= parameters_residual(asm, jac.ws, step.end[2], parameters) @ dp
        new, _ = jac.factor(P, bq, transpose=False).solve(rhs, jac.rows_rhs(hat[0], hat[1], bq))
        state = [m(new) if x is None else x + m(new) for x, m in zip(hat, P)]
        if step.switch is not None:
            state = step.switch(state)
        out_q[i + 1], out_v[i + 1] = state[0], state[1]
    return out_q, out_v


def adjoint_sweep(
    asm, settings, run, g_q: np.ndarray, g_v: np.ndarray, parameters=(), joint_rows: str = "exact",
    restarts: Sequence[int] = (),
):  # fmt: skip
    """(τ̄ (N, n, …), τ̄ of the starts {i: (n, …)}, q̄₀ (n, …), v̄₀ (n, …), p̄ (p, …)): the gradient of a cost with
    partials ``g_q``, ``g_v`` (N + 1, n) in the recorded states, carried back through the run ``run`` (times, q, v,
    q̈, λ, τ) (module docstring); partials (N + 1, n, r) of r functions of the run give their r gradients in one
    sweep (one factor per step); ``restarts``: the states at which the run restarted its accelerations
    (:func:`~flexbody.solvers.input_breaks.restart_steps`)."""
    residual = _checked(asm, joint_rows)
    c1, c2, c3, gamma, beta = _coefficients(settings)
    times, lam = run[0], run[4]
    N, n = len(times) - 1, asm.n_dofs
    starts = _starts(asm, run, restarts, parameters, joint_rows)
    charts = replayed_charts(asm, (c1, c2, c3, gamma, beta), run, {i: d.a for i, d in starts.items()})
    turning = bool(np.asarray(asm.rotation_vectors).size)
    sides = g_q.shape[2:]  # r functions at once, or one
    tau_bar, p_bar = np.zeros((N, n, *sides)), np.zeros((len(parameters), *sides))
    start_bars: dict[int, np.ndarray] = {}  # of the input at the start and at each restart
    bar = [g_q[N].copy(), g_v[N].copy(), np.zeros((n, *sides)), np.zeros((n, *sides))]  # of (q, v, q̈, a) at the end
    for i in range(N - 1, -1, -1):
        h, step = times[i + 1] - times[i], charts[i]
        bq, gv = beta * c1 * h * h, gamma * c1 * h
        if step.switch is not None:
            bar = step.switch.transposed(bar)
        P = step.from_chart.along((0.0, bq, gv, 1.0, c1))
        jac = StepJacobians(asm, residual, times[i + 1], step.end[0], step.end[1], step.end[2], lam[i + 1])
        s = np.sum([m(x, transpose=True) for m, x in zip(P, bar)], axis=0)
        mu, nu = jac.factor(P, bq, transpose=True).solve(s, np.zeros((jac.Phi.shape[0], *sides)))
        tau_bar[i] = mu
        if parameters:
            p_bar -= parameters_residual(asm, jac.ws, step.end[2], parameters).T @ mu
        hat_bar = [
            bar[0] - jac.apply("q", mu, transpose=True) - (jac.rows_q.T @ nu) / bq,
            bar[1] - jac.apply("v", mu, transpose=True) - (jac.rows_v.T @ nu) / bq,
            bar[2] - jac.apply("m", mu, transpose=True) if turning else bar[2],  # q̈̂ is zero without rotations
            bar[3],
        ]
        q_start, psi, psi_rate, _, blend = step.from_chart.transposed(hat_bar)
        blend = blend + h * h * beta * psi + h * gamma * psi_rate
        local = [psi, h * psi + psi_rate, c2 * blend, h * h * (0.5 - beta) * psi + h * (1.0 - gamma) * psi_rate]
        local[3] = local[3] + c3 * blend
        bar = step.to_chart.transposed(local)
        bar[0] = bar[0] + q_start + g_q[i]
        bar[1] = bar[1] + g_v[i]
        if i in starts:  # q̈ = a = a(q, v, τ, p) at the start and at each restart
            d, w = starts[i], bar[2] + bar[3]
            start_bars[i] = d.da_dtau.T @ w
            if d.da_dp is not None:
                p_bar += d.da_dp.T @ w
            bar = [bar[0] + d.da_dq.T @ w, bar[1] + d.da_dv.T @ w, np.zeros_like(w), np.zeros_like(w)]
    return tau_bar, start_bars, bar[0], bar[1], p_bar


def _starts(asm, run, restarts: Sequence[int], parameters, joint_rows: str) -> dict:
    """{n: the forward derivatives at the recorded state n} for the start (n = 0) and each of the ``restarts``, whose
    q̈ = a = a(q_n, v_n, τ_n) (τ_n the recorded input of step n)."""
    times, q, v, tau = run[0], run[1], run[2], run[5]
    return {
        i: forward_derivatives(
            asm, State(float(times[i]), q[i], v[i]), tau[i], "multiplier", parameters=parameters, joint_rows=joint_rows
        )
        for i in (0, *restarts)
    }


def _row_partials(asm, ws, Phi: sp.csr_matrix) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """(∂g/∂q, ∂g/∂v) (m, n) of what a step holds at its end: g = φ for position rows (Φ, 0), g = Φv + φ_t for
    velocity-level rows (their ``velocity_derivatives``, Φ)."""
    rows = asm.velocity_rows
    if not rows.any():
        return Phi, sp.csr_matrix(Phi.shape)
    G_q, G_v = Phi.toarray(), np.zeros(Phi.shape)
    G_q[rows] = row_velocity_jacobian(asm, ws)[rows]
    G_v[rows] = Phi[rows].toarray()
    return sp.csr_matrix(G_q), sp.csr_matrix(G_v)
