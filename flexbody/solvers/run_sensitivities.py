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
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ..errors import FlexbodyError
from ..linalg.saddle_point import SaddlePointSolver
from ..system import State
from .constrained_equations import EquationResidual
from .dynamics_derivatives import (
    derivative_blockers,
    forward_derivatives,
    parameters_residual,
    require_derivatives,
    row_velocity_jacobian,
)

__all__ = ["StepJacobians", "StepFactor", "adjoint_sweep", "tangent_sweep", "run_blockers"]


def run_blockers(asm, joint_rows: str = "exact", charts: bool = True) -> list[str]:
    """What keeps a run's sensitivities from being exact (empty when they are): :func:`derivative_blockers`, rotation
    vectors (generalized-α steps run in charts centred on their starts; with ``charts`` False, for RK4 runs, whose
    steps run in the rotation vectors themselves, they are allowed), velocity-level (Pfaffian) rows without
    ``velocity_derivatives`` (a step holds them as A v = b, whose change with q the sweeps need)."""
    out = derivative_blockers(asm, joint_rows)
    if charts and np.asarray(asm.rotation_vectors).size:
        out.append("spherical joints or floating bases (rotation vectors) in generalized-α runs")
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
        """R_q x or R_v x (``which`` "q" or "v"), or their transposes, for x (n,) or (n, k): the joint and flexible
        blocks and what couples them (:meth:`EquationResidual.coupling_blocks`)."""
        asm, n_r = self.asm, self.asm.n_rigid
        rigid = self.rq if which == "q" else self.rv
        out = np.zeros_like(x)
        out[:n_r] = (rigid.T if transpose else rigid) @ x[:n_r]
        if asm.sparse:
            flexible = self.kf if which == "q" else self.cf
            fs = asm.flexible.slice
            out[fs] = (flexible.T if transpose else flexible) @ x[fs]
        coupling = self.xq if which == "q" else self.xv
        if coupling is not None:
            out += (coupling.T if transpose else coupling) @ x
        return out

    def factor(self, c_v: float, c_q: float, transpose: bool) -> StepFactor:
        """The factor of [[A, Φᵀ], [Φ, 0]] (or with Aᵀ), A = M + c_v R_v + c_q R_q."""
        A_r = self.mr + c_v * self.rv + c_q * self.rq
        A_f = (self.mf + c_v * self.cf + c_q * self.kf).tocsr() if self.asm.sparse else sp.csr_matrix((0, 0))
        parts = [c * X for c, X in ((c_v, self.xv), (c_q, self.xq)) if X is not None]
        coupling = sum(parts[1:], parts[0]) if parts else None
        G = (self.rows_q + (c_v / c_q) * self.rows_v).tocsr()  # the rows' change per Δq̈, over β′h²
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
                    "coupled (a rod, spring or curved surface between links and nodes) or velocity-level rows; remove "
                    "the redundant rows"
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
    asm, settings, run, dtau: np.ndarray, dq0: np.ndarray, dv0: np.ndarray, parameters=(), joint_rows: str = "exact"
):
    """(δq, δv) (N + 1, n, k) of the recorded run ``run`` (times, q, v, q̈, λ, τ) for k directions: ``dtau``
    (N, n, k) the inputs' perturbation of each step, ``dq0``, ``dv0`` (n, k) of the start, and for the constants the
    last p of the k directions (``parameters``: (body, name) pairs, unit perturbations); ``joint_rows`` as
    :func:`~flexbody.solvers.dynamics_derivatives.forward_derivatives` takes it."""
    residual = _checked(asm, joint_rows)
    c1, c2, c3, gamma, beta = _coefficients(settings)
    times, q, v, qdd, lam, tau = run
    N, n, k, p = len(times) - 1, asm.n_dofs, dq0.shape[1], len(parameters)
    dp = np.zeros((p, k))
    dp[:, k - p :] = np.eye(p)
    start = forward_derivatives(
        asm, State(float(times[0]), q[0], v[0]), tau[0], "multiplier", parameters=parameters, joint_rows=joint_rows
    )
    d_qdd = start.da_dq @ dq0 + start.da_dv @ dv0 + start.da_dtau @ dtau[0]
    if start.da_dp is not None:
        d_qdd += start.da_dp @ dp
    d_a = d_qdd.copy()
    out_q, out_v = np.empty((N + 1, n, k)), np.empty((N + 1, n, k))
    out_q[0], out_v[0] = dq0, dv0
    for i in range(N):
        h = times[i + 1] - times[i]
        blend = c2 * d_qdd + c3 * d_a
        q_hat = out_q[i] + h * out_v[i] + h * h * (0.5 - beta) * d_a + h * h * beta * blend
        v_hat = out_v[i] + h * (1.0 - gamma) * d_a + h * gamma * blend
        jac = StepJacobians(asm, residual, times[i + 1], q[i + 1], v[i + 1], qdd[i + 1], lam[i + 1])
        bq, gv = beta * c1 * h * h, gamma * c1 * h
        factor = jac.factor(gv, bq, transpose=False)
        rhs = dtau[i] - jac.apply("q", q_hat) - jac.apply("v", v_hat)
        if p:
            rhs -= parameters_residual(asm, jac.ws, qdd[i + 1], parameters) @ dp
        new_qdd, _ = factor.solve(rhs, jac.rows_rhs(q_hat, v_hat, bq))
        d_a = c1 * new_qdd + c2 * d_qdd + c3 * d_a
        d_qdd = new_qdd
        out_q[i + 1], out_v[i + 1] = q_hat + bq * new_qdd, v_hat + gv * new_qdd
    return out_q, out_v


def adjoint_sweep(asm, settings, run, g_q: np.ndarray, g_v: np.ndarray, parameters=(), joint_rows: str = "exact"):
    """(τ̄ (N, n), q̄₀ (n,), v̄₀ (n,), p̄ (p,)): the gradient of a cost with partials ``g_q``, ``g_v`` (N + 1, n) in the
    recorded states, carried back through the run ``run`` (times, q, v, q̈, λ, τ) (module docstring)."""
    residual = _checked(asm, joint_rows)
    c1, c2, c3, gamma, beta = _coefficients(settings)
    times, q, v, qdd, lam, tau = run
    N, n = len(times) - 1, asm.n_dofs
    tau_bar, p_bar = np.zeros((N, n)), np.zeros(len(parameters))
    q_bar, v_bar, qdd_bar, a_bar = g_q[N].copy(), g_v[N].copy(), np.zeros(n), np.zeros(n)
    for i in range(N - 1, -1, -1):
        h = times[i + 1] - times[i]
        bq, gv = beta * c1 * h * h, gamma * c1 * h
        jac = StepJacobians(asm, residual, times[i + 1], q[i + 1], v[i + 1], qdd[i + 1], lam[i + 1])
        s = qdd_bar + bq * q_bar + gv * v_bar + c1 * a_bar
        mu, nu = jac.factor(gv, bq, transpose=True).solve(s, np.zeros(jac.Phi.shape[0]))
        tau_bar[i] = mu
        if parameters:
            p_bar -= parameters_residual(asm, jac.ws, qdd[i + 1], parameters).T @ mu
        q_hat_bar = q_bar - jac.apply("q", mu, transpose=True) - (jac.rows_q.T @ nu) / bq
        v_hat_bar = v_bar - jac.apply("v", mu, transpose=True) - (jac.rows_v.T @ nu) / bq
        blend_bar = h * h * beta * q_hat_bar + h * gamma * v_hat_bar  # of c₂ q̈_n + c₃ a_n
        q_bar, v_bar = g_q[i] + q_hat_bar, g_v[i] + h * q_hat_bar + v_hat_bar
        qdd_bar = c2 * blend_bar + c2 * a_bar
        a_bar = h * h * (0.5 - beta) * q_hat_bar + h * (1.0 - gamma) * v_hat_bar + c3 * blend_bar + c3 * a_bar
    start = forward_derivatives(
        asm, State(float(times[0]), q[0], v[0]), tau[0], "multiplier", parameters=parameters, joint_rows=joint_rows
    )
    w = qdd_bar + a_bar  # q̈₀ = a₀ = a(q₀, v₀, τ₀, p)
    tau_bar[0] += start.da_dtau.T @ w
    if start.da_dp is not None:
        p_bar += start.da_dp.T @ w
    return tau_bar, q_bar + start.da_dq.T @ w, v_bar + start.da_dv.T @ w, p_bar


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
