"""Static equilibrium of constrained rigid–flexible systems, inverse statics and quasi-static task
sequences — the static-equilibrium alternative of [DE 6.3] for task coordinates on flexible nodes.

With a = 0 and v = 0 the constrained equations [DE-112, DE-113] become

    r(q, λ) = h(q, 0) − Sᵀτ_k − Φ(q)ᵀλ = 0,    φ(q) = 0,

h(q, 0) = g for the rigid trees and k(q) − f_ext(q) for the flexible bodies.

(a) :func:`static_equilibrium` — Newton on (q, λ) with load steps (gravity, loads and τ_k scaled by s)
    and step bisection; the saddle points are solved by :class:`flexbody.kkt.SaddlePointSolver` with
    A = ∂r/∂q (flexible tangent exact; joint rows by finite differences, including the constraint
    Hessian term of the joint rows).
(b) :func:`inverse_statics` — actuator inputs τ_k with the system in equilibrium and the task at x_d.
    At an equilibrium the sensitivity of the task to the inputs is G = J dq/dτ_k with
    [[K, Φᵀ], [Φ, 0]] [dq; −dλ] = [Sᵀ; 0]. Newton runs on (q, λ, τ_k) together; each input change is the
    minimum-norm least-squares solution of the linearised task condition: the least-norm change of τ_k
    from its start when the task leaves inputs free (k > m_T), the least-squares τ_k with the residual
    reported when x_d cannot be reached.
(c) :func:`quasi_static_sequence` — (b) along a path of targets, each solve started from the last.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from .errors import ConvergenceError, FlexbodyError, ModelError, StateError
from .kkt import SaddlePointSolver
from .results import Results

__all__ = ["Equilibrium", "InverseStatics", "static_equilibrium", "holding_inputs", "inverse_statics",
           "task_sensitivity", "quasi_static_sequence"]


@dataclass
class Equilibrium:
    """A static equilibrium: q (n,), λ (m,), applied τ (n,) = Sᵀτ_k, the final residual max|r| [N or N·m]
    and max|φ|, Newton iterations, residual history and the load factors that converged."""

    q: np.ndarray
    lam: np.ndarray
    tau: np.ndarray
    residual: float
    violation: float
    iterations: int
    history: list = field(default_factory=list)
    load_factors: list = field(default_factory=list)


@dataclass
class InverseStatics:
    """Result of :func:`inverse_statics`: actuator inputs tau_k (k,), the equilibrium (q, λ), task
    coordinates x (m_T,) and target, task residual ‖x − x_d‖ [m], ``reachable`` (residual ≤ tol), the
    sensitivity G = dx/dτ_k (m_T, k) at the solution with its singular values and rank, iterations,
    and the history of ‖x − x_d‖."""

    tau_k: np.ndarray
    equilibrium: Equilibrium
    x: np.ndarray
    target: np.ndarray
    residual: float
    reachable: bool
    G: np.ndarray
    singular_values: np.ndarray
    rank: int
    iterations: int
    history: list = field(default_factory=list)

    @property
    def q(self) -> np.ndarray:
        return self.equilibrium.q

    @property
    def lam(self) -> np.ndarray:
        return self.equilibrium.lam


class _Statics:
    """Residual and Jacobian of the static equations of an assembled system at load factor s."""

    def __init__(self, asm, t: float, fd_step: float = 1e-7, hold=None):
        self.asm, self.t, self.fd_step = asm, float(t), fd_step
        self.n_r = asm.n_rigid
        self.hold = hold                                    # (S (k, n), S q_held (k,)) or None

    def _split(self, lam):
        m = self.asm.n_constraints
        return lam[:m], lam[m:]

    def _rigid(self, q, lam, s):
        asm = self.asm
        ev = asm.evaluate(self.t, q)
        out = np.empty(self.n_r)
        for tree in asm.trees:
            out[asm.slices[tree]] = s * ev.kinematics(tree).inverse_dynamics(velocity=False)
        if asm.n_constraints and self.n_r:
            Phi = asm.constraint_rows(ev)[1]
            out -= (Phi[:, :self.n_r]).T @ self._split(lam)[0]
        return out

    def residual(self, q, lam, tau, s):
        """r (n,), φ (m,), Φ (m, n) at (q, λ) and load factor s."""
        asm = self.asm
        ev = asm.evaluate(self.t, q)
        r = np.empty(asm.n_dofs)
        for tree in asm.trees:
            r[asm.slices[tree]] = s * ev.kinematics(tree).inverse_dynamics(velocity=False)
        if asm.sparse:
            fs = asm.flexible.slice
            r[fs] = asm.flexible.internal_force(q[fs], None) - s * asm.flexible.external_force(q[fs])
        phi, Phi, _, _ = asm.constraint_rows(ev)
        lam_c, lam_h = self._split(lam)
        if Phi.shape[0]:
            r -= Phi.T @ lam_c
        if self.hold is not None:                          # held joints: rows S q − S q_held, τ_k = λ_h
            S, target = self.hold
            r -= S.T @ lam_h
            phi = np.concatenate([phi, S @ q - target])
            Phi = sp.vstack([sp.csr_matrix(Phi), sp.csr_matrix(S)], format="csr")
        return r - s * tau, phi, Phi

    def tangent(self, q, lam, s):
        """(A_r (n_r, n_r) by finite differences, A_f sparse) of ∂r/∂q."""
        n_r = self.n_r
        A_r = np.zeros((n_r, n_r))
        if n_r:
            base = self._rigid(q, lam, s)
            for j in range(n_r):
                dq = self.fd_step * max(1.0, abs(q[j]))
                qp = q.copy()
                qp[j] += dq
                A_r[:, j] = (self._rigid(qp, lam, s) - base) / dq
        asm = self.asm
        if not asm.sparse:
            return A_r, sp.csr_matrix((0, 0))
        fs = asm.flexible.slice
        K = asm.flexible.internal_tangent(q[fs])
        K_load = asm.flexible.load_stiffness(q[fs])
        return A_r, (K if K_load is None else K - s * K_load)


def _applied(asm, tau, tau_k) -> np.ndarray:
    if tau is not None and tau_k is not None:
        raise FlexbodyError("static equilibrium: give tau (n,) or tau_k (k,), not both")
    if tau_k is not None:
        tau_k = np.asarray(tau_k, dtype=float)
        if tau_k.shape != (asm.S.shape[0],) or not np.all(np.isfinite(tau_k)):
            raise StateError(f"tau_k must be {asm.S.shape[0]} finite numbers (actuators {asm.actuated_labels}), "
                             f"got shape {tau_k.shape}")
        return asm.S.T @ tau_k
    if tau is None:
        return np.zeros(asm.n_dofs)
    tau = np.asarray(tau, dtype=float)
    if tau.shape != (asm.n_dofs,) or not np.all(np.isfinite(tau)):
        raise StateError(f"tau must be {asm.n_dofs} finite numbers, got shape {tau.shape}")
    return tau


def _newton(stat: _Statics, solver: SaddlePointSolver, q, lam, tau, s, tol, max_iterations, history):
    """Damped Newton at load factor s; returns (q, λ, iterations, max|r|, max|φ|) or raises.

    Step length by the natural monotonicity test (Deuflhard): a trial step t·Δ is accepted when the
    simplified Newton increment at the trial point, with the same factor, satisfies
    ‖Δ̄‖ ≤ (1 − t/4)‖Δ‖; otherwise t is halved (affine invariant: no scaling of r against φ needed)."""
    q, lam = q.copy(), lam.copy()
    r, phi, Phi = stat.residual(q, lam, tau, s)
    res = viol = np.inf
    for k in range(1, max_iterations + 1):
        A_r, A_f = stat.tangent(q, lam, s)
        solver.factor(A_r, A_f, sp.csr_matrix(Phi))
        dq, y = solver.solve(-r, -phi)
        norm = float(np.linalg.norm(dq))
        step = 1.0
        for _ in range(10):
            q_try, lam_try = q + step * dq, lam - step * y
            r_try, phi_try, Phi_try = stat.residual(q_try, lam_try, tau, s)
            if np.all(np.isfinite(r_try)) and np.all(np.isfinite(phi_try)):
                simplified = float(np.linalg.norm(solver.solve(-r_try, -phi_try)[0]))
                if simplified <= (1.0 - step / 4.0) * norm or norm <= tol:
                    break
            step *= 0.5
        q, lam, r, phi, Phi = q_try, lam_try, r_try, phi_try, Phi_try
        res = float(np.max(np.abs(r))) if r.size else 0.0
        viol = float(np.max(np.abs(phi))) if phi.size else 0.0
        history.append(res)
        size = step * float(np.max(np.abs(dq))) if dq.size else 0.0
        ref = max(1.0, float(np.max(np.abs(q))))
        if size <= tol * ref and viol <= tol * ref:
            return q, lam, k, res, viol
    raise ConvergenceError(f"static equilibrium at load factor {s:.4g}: no convergence in {max_iterations} "
                           f"iterations (max|r| = {res:.3e}, max|φ| = {viol:.3e})", list(history))


def static_equilibrium(asm, tau=None, *, tau_k=None, q0=None, lam0=None, t: float = 0.0, load_steps: int = 1,
                       tol: float = 1e-11, max_iterations: int = 30, max_bisections: int = 6) -> Equilibrium:
    """Static equilibrium of an assembled system under its loads, gravity and given actuator inputs.

    Parameters
    ----------
    asm : AssembledSystem
    tau : (n,) generalized forces, or ``tau_k`` (k,) actuator inputs (τ = Sᵀτ_k) [N or N·m]; default 0.
    q0 : (n,) start (default ``asm.q0``); lam0 : (m,) start multipliers (default 0).
    load_steps : int, number of equal load factors s from 1/N to 1 (gravity, loads and τ scaled by s);
        a step that fails is bisected up to ``max_bisections`` times.
    tol : Newton tolerance on the increment and on φ, relative to max(1, ‖q‖∞) [m or rad].

    Raises
    ------
    ConvergenceError with the residual history and ``last_good`` (the :class:`Equilibrium` at the last
    converged load factor, or None).
    """
    if not isinstance(load_steps, (int, np.integer)) or load_steps < 1:
        raise FlexbodyError(f"static_equilibrium: load_steps must be a positive integer, got {load_steps!r}")
    tau = _applied(asm, tau, tau_k)
    q = np.array(asm.q0 if q0 is None else q0, dtype=float)
    if q.shape != (asm.n_dofs,) or not np.all(np.isfinite(q)):
        raise StateError(f"static_equilibrium: q0 must be {asm.n_dofs} finite numbers, got shape {q.shape}")
    lam = np.zeros(asm.n_constraints) if lam0 is None else np.array(lam0, dtype=float)
    stat, solver = _Statics(asm, t), SaddlePointSolver(asm.n_rigid)
    history, factors, iterations = [], [], 0
    s_done, ds, depth = 0.0, 1.0 / load_steps, 0
    last = None
    while s_done < 1.0 - 1e-12:
        s = min(1.0, s_done + ds)
        try:
            q_new, lam_new, k, res, viol = _newton(stat, solver, q, lam, tau, s, tol, max_iterations, history)
        except ConvergenceError as exc:
            if depth >= max_bisections:
                exc.last_good = last
                raise
            ds, depth = ds / 2.0, depth + 1
            continue
        q, lam, s_done, iterations = q_new, lam_new, s, iterations + k
        factors.append(s)
        last = Equilibrium(q.copy(), lam.copy(), tau.copy(), res, viol, iterations, list(history), list(factors))
    return last


def holding_inputs(asm, q=None, *, t: float = 0.0, load_steps: int = 1, tol: float = 1e-11,
                   max_iterations: int = 30) -> tuple[np.ndarray, Equilibrium]:
    """Actuator inputs τ_k (k,) that hold the actuated coordinates at their values in ``q`` (default
    ``asm.q0``) in static equilibrium (the flexible bodies deflect under their loads), and that
    equilibrium. The actuated coordinates are held by extra rows S q = S q_held whose multipliers are τ_k."""
    q = np.array(asm.q0 if q is None else q, dtype=float)
    S = np.asarray(asm.S, dtype=float)
    stat = _Statics(asm, t, hold=(S, S @ q))
    solver = SaddlePointSolver(asm.n_rigid)
    lam = np.zeros(asm.n_constraints + S.shape[0])
    history, iterations = [], 0
    for s in np.arange(1, load_steps + 1) / load_steps:
        q, lam, k, res, viol = _newton(stat, solver, q, lam, np.zeros(asm.n_dofs), float(s), tol, max_iterations,
                                       history)
        iterations += k
    m = asm.n_constraints
    return lam[m:].copy(), Equilibrium(q, lam[:m].copy(), S.T @ lam[m:], res, viol, iterations, history, [1.0])


# ------------------------------------------------------------------------------------- inverse statics
def _task_terms(asm, task, q, t):
    terms = task.evaluate(asm.evaluate(t, q))
    return np.asarray(terms.x, dtype=float), np.asarray(terms.J, dtype=float)


def _input_response(stat: _Statics, solver: SaddlePointSolver, q, lam, Phi):
    """Factor the static saddle point at (q, λ) and return D = dq/dτ_k (n, k) and the multiplier
    response Y (m, k): [[K, Φᵀ], [Φ, 0]] [D; Y] = [Sᵀ; 0]."""
    A_r, A_f = stat.tangent(q, lam, 1.0)
    solver.factor(A_r, A_f, sp.csr_matrix(Phi))
    S, zero = np.asarray(stat.asm.S, dtype=float), np.zeros(stat.asm.n_constraints)
    cols = [solver.solve(S[i], zero) for i in range(S.shape[0])]
    return np.column_stack([c[0] for c in cols]), np.column_stack([c[1] for c in cols])


def task_sensitivity(asm, task, eq: Equilibrium, t: float = 0.0) -> np.ndarray:
    """G = dx/dτ_k (m_T, k) at an equilibrium: J dq with [[K, Φᵀ], [Φ, 0]] [dq; −dλ] = [Sᵀ; 0]."""
    stat = _Statics(asm, t)
    _, _, Phi = stat.residual(eq.q, eq.lam, eq.tau, 1.0)
    D, _ = _input_response(stat, SaddlePointSolver(asm.n_rigid), eq.q, eq.lam, Phi)
    return _task_terms(asm, task, eq.q, t)[1] @ D


def inverse_statics(asm, task, target, *, tau_k0=None, q0=None, t: float = 0.0, tol: float = 1e-10,
                    max_iterations: int = 200, load_steps: int = 1, rcond: float = 1e-10,
                    max_step: float = 0.1) -> InverseStatics:
    """Actuator inputs τ_k (k,) that hold the system in static equilibrium with ``task`` at ``target``.

    Newton on (q, λ, τ_k) together, bordered: with one factor of the static saddle point per iteration,
    dq = dq_r + D dτ_k where [[K, Φᵀ], [Φ, 0]] [dq_r; ·] = [−r; −φ] and D = dq/dτ_k (k solves with
    right-hand sides Sᵀ); the input change then solves the linearised task condition in the minimum-norm
    least-squares sense, G dτ_k = e − J dq_r with G = J D and e = x_d − x. When the task leaves inputs
    free (k > m_T) every step is the least-norm change, so τ_k is the least-norm change from the start
    τ_k0 (along the path the iteration takes); when x_d cannot be reached the task residual ‖x − x_d‖ is
    minimised in the least-squares sense and reported (``reachable`` False). Step lengths by the natural
    monotonicity test within a trust region ``max_step``.

    Parameters
    ----------
    task : Task (e.g. ``PointTask(Node(beam, i), components=(0, 2))``); target : (m_T,) x_d [m].
    tau_k0 : (k,) start; default the inputs that hold the actuated coordinates of ``q0`` (:func:`holding_inputs`).
    q0 : (n,) start configuration (default ``asm.q0``).
    tol : task residual [m] below which the target counts as reached; the equilibrium is solved to the
        Newton tolerance of :func:`static_equilibrium`.
    rcond : singular values of G below rcond·σ_max are treated as zero (rank of G).
    max_step : largest change of any coordinate per iteration [m or rad] (a trust region: the least-norm
        inputs may lie far from the start, e.g. an arm that lets its beam hang, and the linearisation
        only holds nearby).
    """
    target = np.asarray(target, dtype=float).ravel()
    if target.shape != (task.n_rows,) or not np.all(np.isfinite(target)):
        raise ModelError(f"inverse_statics: target must be {task.n_rows} finite numbers for task {task.name!r} "
                         f"(rows {task.row_labels}), got shape {target.shape}")
    if tau_k0 is None:                                   # start: the inputs that hold the initial posture
        tau_k, eq = holding_inputs(asm, q0, t=t, load_steps=load_steps)
    else:
        tau_k = np.asarray(tau_k0, dtype=float).copy()
        eq = static_equilibrium(asm, tau_k=tau_k, q0=q0, t=t, load_steps=load_steps)
    newton = _BorderedNewton(asm, task, target, t, rcond)
    q, lam = eq.q.copy(), eq.lam.copy()
    history = []
    for it in range(1, max_iterations + 1):
        dq, y, dtau, e = newton.direction(q, lam, tau_k)
        history.append(float(np.linalg.norm(e)))
        norm = float(np.linalg.norm(dq))
        step = min(1.0, max_step / max(float(np.max(np.abs(dq))), 1e-300))
        for _ in range(10):
            trial = (q + step * dq, lam - step * y, tau_k + step * dtau)
            simplified = newton.simplified(*trial)
            if simplified is not None and (simplified <= (1.0 - min(step, 0.5) / 4.0) * norm or norm <= 1e-14):
                break
            step *= 0.5
        q, lam, tau_k = trial
        if len(history) > 6 and history[-1] > tol and abs(history[-1] - history[-7]) <= 1e-6 * history[-1]:
            break                                        # least-squares stationary: x_d not reachable
        ref = max(1.0, float(np.max(np.abs(q))))
        if step * float(np.max(np.abs(dq))) <= 1e-11 * ref and step * float(np.max(np.abs(dtau))) <= \
                1e-10 * max(1.0, float(np.max(np.abs(tau_k)))):
            break
    else:
        raise ConvergenceError(f"inverse_statics: no convergence in {max_iterations} iterations "
                               f"(task residual {history[-1]:.3e} m)", history)
    r, phi, _ = newton.stat.residual(q, lam, asm.S.T @ tau_k, 1.0)
    eq = Equilibrium(q, lam, asm.S.T @ tau_k, float(np.max(np.abs(r))) if r.size else 0.0,
                     float(np.max(np.abs(phi))) if phi.size else 0.0, it, history, [1.0])
    x = _task_terms(asm, task, q, t)[0]
    G = newton.G
    sv = np.linalg.svd(G, compute_uv=False) if G.size else np.zeros(0)
    rank = int(np.sum(sv > rcond * sv.max())) if sv.size and sv.max() > 0 else 0
    residual = float(np.linalg.norm(x - target))
    history.append(residual)
    return InverseStatics(tau_k, eq, x, target, residual, residual <= tol, G, sv, rank, it, history)


class _BorderedNewton:
    """Newton directions for (q, λ, τ_k) of inverse statics, one saddle-point factor per direction."""

    def __init__(self, asm, task, target, t, rcond):
        self.asm, self.task, self.target, self.t, self.rcond = asm, task, target, t, rcond
        self.stat, self.solver = _Statics(asm, t), SaddlePointSolver(asm.n_rigid)
        self.S = np.asarray(asm.S, dtype=float)

    def _combine(self, q, lam, tau_k, factor: bool):
        r, phi, Phi = self.stat.residual(q, lam, self.S.T @ tau_k, 1.0)
        if not (np.all(np.isfinite(r)) and np.all(np.isfinite(phi))):
            return None
        x, J = _task_terms(self.asm, self.task, q, self.t)
        if factor:
            self.D, self.Y = _input_response(self.stat, self.solver, q, lam, Phi)   # dq/dτ_k (n, k)
            self.J = J
            self.G = J @ self.D                                           # dx/dτ_k (m_T, k)
        dq_r, y_r = self.solver.solve(-r, -phi)
        e = self.target - x
        dtau = _min_norm_lstsq(self.G, e - self.J @ dq_r, self.rcond)   # least change of τ_k
        return dq_r + self.D @ dtau, y_r + self.Y @ dtau, dtau, e

    def direction(self, q, lam, tau_k):
        out = self._combine(q, lam, tau_k, factor=True)
        if out is None:
            raise ConvergenceError("inverse_statics: NaN/Inf in the static residual", [])
        return out

    def simplified(self, q, lam, tau_k):
        """‖dq‖ of the simplified Newton direction at a trial point (same factor), or None if not finite."""
        out = self._combine(q, lam, tau_k, factor=False)
        return None if out is None else float(np.linalg.norm(out[0]))


def _min_norm_lstsq(G: np.ndarray, b: np.ndarray, rcond: float) -> np.ndarray:
    """Minimum-norm least-squares solution of G τ = b (SVD, singular values ≤ rcond·σ_max dropped)."""
    return np.linalg.lstsq(G, b, rcond=rcond)[0]


def quasi_static_sequence(asm, task, targets, *, tau_k0=None, q0=None, tol: float = 1e-10, **kw) -> Results:
    """Inverse statics along a path of targets (N, m_T): successive equilibria, each started from the last.

    Returns Results (kind "quasi_static", ``times`` = path index 0..N−1) with ``q`` and histories
    "tau_k" (N, k), "task_x", "task_target", "task_residual" (N,), "reachable" (N,), "G_rank" (N,),
    "lam" (N, m). Stops with ConvergenceError (``last_good`` = the equilibria so far) if an
    equilibrium fails.
    """
    targets = np.atleast_2d(np.asarray(targets, dtype=float))
    rows = {"q": [], "tau_k": [], "task_x": [], "task_target": [], "task_residual": [], "reachable": [],
            "G_rank": [], "lam": []}
    tau_k, q = tau_k0, q0

    def results():
        n_done = len(rows["q"])
        q_hist = np.array(rows["q"]) if n_done else np.zeros((0, asm.n_dofs))
        hist = {key: np.array(v) for key, v in rows.items() if key != "q"}
        return Results(kind="quasi_static", times=np.arange(n_done, dtype=float), q=q_hist,
                       body_slices=dict(asm.body_slices), iterations=[], reference=asm.q0.copy(), system=asm,
                       v=np.zeros_like(q_hist), histories=hist, events=[],
                       metadata={"task": task.name, "task_labels": list(task.row_labels),
                                 "actuated_labels": list(asm.actuated_labels)})
    for target in targets:
        try:
            sol = inverse_statics(asm, task, target, tau_k0=tau_k, q0=q, tol=tol, **kw)
        except ConvergenceError as exc:
            exc.last_good = results()
            raise
        tau_k, q = sol.tau_k, sol.q
        for key, value in (("q", sol.q), ("tau_k", sol.tau_k), ("task_x", sol.x), ("task_target", target),
                           ("task_residual", sol.residual), ("reachable", float(sol.reachable)),
                           ("G_rank", sol.rank), ("lam", sol.lam)):
            rows[key].append(np.array(value, dtype=float, copy=True))
    return results()
