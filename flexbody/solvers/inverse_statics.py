"""Inverse statics [DE 6.3]: the actuator inputs τ_k that hold a constrained rigid–flexible system in static
equilibrium with a task at its target x_d, and quasi-static sequences of such equilibria along a path.

At an equilibrium (:mod:`flexbody.solvers.constrained_statics`) the sensitivity of the task to the inputs
is G = J dq/dτ_k with [[K, Φᵀ], [Φ, 0]] [dq; −dλ] = [Sᵀ; 0]. Newton runs on (q, λ, τ_k) together; each input
change is the minimum-norm least-squares solution of the linearised task condition: the least-norm change
of τ_k from its start when the task leaves inputs free (k > m_T), the least-squares τ_k with the residual
reported when x_d cannot be reached. Along a path of targets each solve starts from the last.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ..deprecation import deprecated, renamed_keyword
from ..errors import ConvergenceError, FlexbodyError, ModelError
from ..io.results import Results
from ..linalg.saddle_point import SaddlePointSolver
from ..system.description import as_assembled, refuse_contacts
from ..threads import one_blas_thread
from .constrained_statics import Equilibrium, StaticEquations, holding_inputs, static_equilibrium
from .newton_scales import increments_converged

if TYPE_CHECKING:
    from ..control.tasks import Task
    from ..system import AssembledSystem, System

__all__ = ["InverseStatics", "inverse_statics", "task_sensitivity", "quasi_static_sequence"]


@dataclass
class InverseStatics:
    """Result of :func:`inverse_statics`: actuator inputs tau_k (k,), the equilibrium (q, λ), task
    coordinates x (m_T,) and target, task residual ‖x − x_d‖ [m], ``reachable`` (residual ≤ tol), the
    sensitivity G = dx/dτ_k (m_T, k) at the solution with its singular values and rank, iterations,
    the history of ‖x − x_d‖, the accepted least-norm descent steps and the first-order optimality
    ‖Zᵀτ_k‖/‖τ_k‖ (Z the null space of G; NaN when the least-norm descent did not run)."""

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
    descents: int = 0
    optimality: float = float("nan")

    @property
    def q(self) -> np.ndarray:
        return self.equilibrium.q

    @property
    def lam(self) -> np.ndarray:
        return self.equilibrium.lam


# ------------------------------------------------------------------------------------- inverse statics
def _task_terms(asm, task, q, t):
    terms = task.evaluate(asm.workspace(t, q))
    return np.asarray(terms.x, dtype=float), np.asarray(terms.J, dtype=float)


def _input_response(stat: StaticEquations, solver: SaddlePointSolver, q, lam, Phi):
    """Factor the static saddle point at (q, λ) and return D = dq/dτ_k (n, k) and the multiplier
    response Y (m, k): [[K, Φᵀ], [Φ, 0]] [D; Y] = [Sᵀ; 0]."""
    A_r, A_f = stat.tangent(q, lam, 1.0)
    solver.factor(A_r, A_f, sp.csr_matrix(Phi))
    S, zero = np.asarray(stat.asm.S, dtype=float), np.zeros(stat.asm.n_constraints)
    cols = [solver.solve(S[i], zero) for i in range(S.shape[0])]
    return np.column_stack([c[0] for c in cols]), np.column_stack([c[1] for c in cols])


@one_blas_thread
@renamed_keyword("asm", "model")
def task_sensitivity(
    model: System | AssembledSystem, task: Task, eq: Equilibrium, *old: float, t: float = 0.0
) -> np.ndarray:
    """G = dx/dτ_k (m_T, k) of the actuator inputs at an equilibrium ``eq`` of ``model`` at time ``t`` [s]:
    J dq with [[K, Φᵀ], [Φ, 0]] [dq; −dλ] = [Sᵀ; 0]. ``t`` by keyword (one order everywhere: the model, then t, q, v,
    then the rest); a positional t, as in 0.2, works with a warning until 0.4.0."""
    if old:
        deprecated("task_sensitivity(model, task, eq, t)", "task_sensitivity(model, task, eq, t=t)")
        t = old[0]
    asm = as_assembled(model, "task_sensitivity")
    refuse_contacts(asm, "task_sensitivity")
    stat = StaticEquations(asm, t)
    _, _, Phi = stat.residual(eq.q, eq.lam, eq.tau, 1.0)
    D, _ = _input_response(stat, SaddlePointSolver(asm.n_rigid), eq.q, eq.lam, Phi)
    return _task_terms(asm, task, eq.q, t)[1] @ D


@one_blas_thread
@renamed_keyword("asm", "model")
def inverse_statics(
    model: System | AssembledSystem,
    task: Task,
    target: ArrayLike,
    *,
    tau_k0: ArrayLike | None = None,
    q0: ArrayLike | None = None,
    t: float = 0.0,
    tol: float = 1e-10,
    max_iterations: int = 200,
    load_steps: int = 1,
    rcond: float = 1e-10,
    max_step: float = 0.1,
    inputs: str = "least_norm",
    optimality_tol: float = 1e-11,
    max_descents: int = 100,
) -> InverseStatics:
    """Actuator inputs τ_k (k,) that hold the system in static equilibrium with ``task`` at ``target``.

    Newton on (q, λ, τ_k) together, bordered: with one factor of the static saddle point per iteration,
    dq = dq_r + D dτ_k where [[K, Φᵀ], [Φ, 0]] [dq_r; ·] = [−r; −φ] and D = dq/dτ_k (k solves with
    right-hand sides Sᵀ); the input change then solves the linearised task condition in the minimum-norm
    least-squares sense, G dτ_k = e − J dq_r with G = J D and e = x_d − x. This reaches the solution set
    with the least change of τ_k from the start; when x_d cannot be reached the task residual ‖x − x_d‖
    is minimised in the least-squares sense and reported (``reachable`` False). Step lengths by the
    natural monotonicity test within a trust region ``max_step``.

    When the task leaves inputs free (rank G < k) and ``inputs="least_norm"``, ‖τ_k‖ is then minimised
    over the solution set (:func:`_least_norm_inputs`): a tangent predictor along the null space Z of G
    followed by the bordered corrector above, with a quasi-Newton (BFGS) reduced Hessian of ½‖τ_k‖² in
    the coordinates of Z. It stops at a first-order point, ‖Zᵀτ_k‖ ≤ ``optimality_tol``·‖τ_k‖
    (``optimality``): a local minimum reached from the start; the solution set need not be convex (for an
    arm it is a closed curve with several minima), so other starts ``q0`` may give smaller ‖τ_k‖.
    ``inputs="least_change"`` skips this and keeps the least change from τ_k0.

    Parameters
    ----------
    model : AssembledSystem, or a System (assembled here).
    task : Task (e.g. ``PointTask(Node(beam, i), components=(0, 2))``); target : (m_T,) x_d [m].
    tau_k0 : (k,) start; default the inputs that hold the actuated coordinates of ``q0`` (:func:`holding_inputs`).
    q0 : (n,) start configuration (default ``model.q0``).
    tol : task residual [m] below which the target counts as reached; the equilibrium is solved to the
        Newton tolerance of :func:`static_equilibrium`.
    rcond : singular values of G below rcond·σ_max are treated as zero (rank of G).
    max_step : largest change of any coordinate per iteration [m or rad] (a trust region: the
        linearisation only holds nearby).
    inputs : "least_norm" (default) or "least_change", see above.
    optimality_tol, max_descents : stopping test and budget of the least-norm descent.
    """
    asm = as_assembled(model, "inverse_statics")
    refuse_contacts(asm, "inverse_statics")
    if inputs not in ("least_norm", "least_change"):
        raise FlexbodyError(f"inverse_statics: inputs must be 'least_norm' or 'least_change', got {inputs!r}")
    target = np.asarray(target, dtype=float).ravel()
    if target.shape != (task.n_rows,) or not np.all(np.isfinite(target)):
        raise ModelError(
            f"inverse_statics: target must be {task.n_rows} finite numbers for task {task.name!r} "
            f"(rows {task.row_labels}), got shape {target.shape}"
        )
    if tau_k0 is None:  # start: the inputs that hold the initial posture
        tau_k, eq = holding_inputs(asm, q0, t=t, load_steps=load_steps)
    else:
        tau_k = np.asarray(tau_k0, dtype=float).copy()
        eq = static_equilibrium(asm, tau_k=tau_k, q0=q0, t=t, load_steps=load_steps)
    newton = _BorderedNewton(asm, task, target, t, rcond)
    history: list[float] = []
    (q, lam, tau_k), it = _restore(newton, (eq.q, eq.lam, tau_k), tol, max_iterations, max_step, history)
    reachable = _on_target(newton, (q, lam, tau_k), tol)
    descents, optimality = 0, np.nan
    if inputs == "least_norm" and reachable:
        (q, lam, tau_k), descents, optimality = _least_norm_inputs(
            newton, (q, lam, tau_k), tol, max_iterations, max_step, optimality_tol, max_descents
        )
    r, phi, _ = newton.stat.residual(q, lam, asm.S.T @ tau_k, 1.0)
    eq = Equilibrium(
        q,
        lam,
        asm.S.T @ tau_k,
        float(np.max(np.abs(r))) if r.size else 0.0,
        float(np.max(np.abs(phi))) if phi.size else 0.0,
        it,
        history,
        [1.0],
    )
    x = _task_terms(asm, task, q, t)[0]
    G = newton.G
    sv = np.linalg.svd(G, compute_uv=False) if G.size else np.zeros(0)
    rank = int(np.sum(sv > rcond * sv.max())) if sv.size and sv.max() > 0 else 0
    residual = float(np.linalg.norm(x - target))
    history.append(residual)
    return InverseStatics(
        tau_k, eq, x, target, residual, residual <= tol, G, sv, rank, it, history, descents, optimality
    )


def _restore(newton, point, tol, max_iterations, max_step, history):
    """Bordered Newton with least-change input steps from ``point`` = (q, λ, τ_k) to the solution set
    (or to the least-squares task residual); returns the point and the iterations, or raises."""
    q, lam, tau_k = (np.array(a, dtype=float) for a in point)
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
            return (q, lam, tau_k), it  # least-squares stationary: x_d not reachable
        if increments_converged(step * dq, q, 1e-11, newton.stat.scales) and step * float(
            np.max(np.abs(dtau))
        ) <= 1e-10 * max(1.0, float(np.max(np.abs(tau_k)))):
            return (q, lam, tau_k), it
    raise ConvergenceError(
        f"inverse_statics: no convergence in {max_iterations} iterations (task residual {history[-1]:.3e} m)", history
    )


def _least_norm_inputs(newton, point, tol, max_iterations, max_step, optimality_tol, max_descents):
    """Minimise ½‖τ_k‖² over the solution set from a point on it (tangent predictor, bordered corrector).

    At a solution the tangent directions are dτ_k = Z p (Z (k, d) orthonormal null space of G), with
    dq = D dτ_k and dλ = −Y dτ_k; the reduced gradient of ½‖τ_k‖² is g = Zᵀτ_k, zero at a first-order
    point. The step p = −B⁻¹g (B the BFGS reduced Hessian, starting at I: the Gauss–Newton value, which
    ignores the curvature of the solution set) is limited to ``max_step`` per coordinate, predicted
    along the tangent, corrected back by :func:`_restore`, and halved until ‖τ_k‖² decreases (Armijo).
    Z is carried from point to point by the orthogonal Procrustes alignment, so g and B keep their
    coordinates. Returns the point, the number of accepted steps and ‖g‖/‖τ_k‖, with ``newton.G`` at
    the returned point."""
    q, lam, tau_k = point
    Z, g = _reduced_gradient(newton, q, lam, tau_k, None)
    B = np.eye(Z.shape[1])
    for descent in range(max_descents + 1):
        scale = max(float(np.linalg.norm(tau_k)), 1e-300)
        if Z.shape[1] == 0 or np.linalg.norm(g) <= optimality_tol * scale or descent == max_descents:
            return (q, lam, tau_k), descent, float(np.linalg.norm(g)) / scale
        p = -np.linalg.solve(B, g)
        if g @ p >= 0.0:  # B lost positive definiteness: restart at I
            B, p = np.eye(len(g)), -g
        dtau = Z @ p
        alpha = min(1.0, max_step / max(float(np.max(np.abs(newton.D @ dtau))), 1e-300))
        accepted = None
        for _ in range(30):
            predicted = (q + alpha * (newton.D @ dtau), lam - alpha * (newton.Y @ dtau), tau_k + alpha * dtau)
            try:
                candidate, _ = _restore(newton, predicted, tol, max_iterations, max_step, [])
            except ConvergenceError:
                candidate = None
            if candidate is not None and _on_target(newton, candidate, tol):
                f, f_new = tau_k @ tau_k, candidate[2] @ candidate[2]
                if f_new <= f + 1e-4 * alpha * (g @ p) or -alpha * (g @ p) <= 1e-12 * f:
                    accepted = candidate  # Armijo, or a decrease below the rounding of ‖τ_k‖²
                    break
            alpha *= 0.5
        if accepted is None:  # no decrease along the tangent: stationary
            newton.direction(q, lam, tau_k)  # G back at the point (the trials factored elsewhere)
            return (q, lam, tau_k), descent, float(np.linalg.norm(g)) / scale
        Z_new, g_new = _reduced_gradient(newton, *accepted, Z)
        s, y = Z.T @ (accepted[2] - tau_k), g_new - g
        if s @ y > 1e-12 * np.linalg.norm(s) * np.linalg.norm(y):  # BFGS update of B
            Bs = B @ s
            B = B - np.outer(Bs, Bs) / (s @ Bs) + np.outer(y, y) / (s @ y)
        (q, lam, tau_k), Z, g = accepted, Z_new, g_new


def _reduced_gradient(newton, q, lam, tau_k, Z_previous):
    """Orthonormal null space Z (k, d) of G at (q, λ, τ_k) (factoring there) and g = Zᵀτ_k (d,); with
    ``Z_previous`` the basis is rotated onto it (orthogonal Procrustes) so coordinates carry over."""
    newton.direction(q, lam, tau_k)
    G = newton.G
    _, sv, Vt = np.linalg.svd(G, full_matrices=True)
    rank = int(np.sum(sv > newton.rcond * sv.max())) if sv.size and sv.max() > 0 else 0
    Z = Vt[rank:].T
    if Z_previous is not None and Z_previous.shape == Z.shape and Z.shape[1]:
        U, _, Wt = np.linalg.svd(Z.T @ Z_previous)
        Z = Z @ (U @ Wt)
    return Z, Z.T @ tau_k


def _on_target(newton, point, tol) -> bool:
    x = _task_terms(newton.asm, newton.task, point[0], newton.t)[0]
    return float(np.linalg.norm(x - newton.target)) <= tol


class _BorderedNewton:
    """Newton directions for (q, λ, τ_k) of inverse statics, one saddle-point factor per direction."""

    def __init__(self, asm, task, target, t, rcond):
        self.asm, self.task, self.target, self.t, self.rcond = asm, task, target, t, rcond
        self.stat, self.solver = StaticEquations(asm, t), SaddlePointSolver(asm.n_rigid)
        self.S = np.asarray(asm.S, dtype=float)

    def _combine(self, q, lam, tau_k, factor: bool):
        r, phi, Phi = self.stat.residual(q, lam, self.S.T @ tau_k, 1.0)
        if not (np.all(np.isfinite(r)) and np.all(np.isfinite(phi))):
            return None
        x, J = _task_terms(self.asm, self.task, q, self.t)
        if factor:
            self.D, self.Y = _input_response(self.stat, self.solver, q, lam, Phi)  # dq/dτ_k (n, k)
            self.J = J
            self.G = J @ self.D  # dx/dτ_k (m_T, k)
        dq_r, y_r = self.solver.solve(-r, -phi)
        e = self.target - x
        dtau = _min_norm_lstsq(self.G, e - self.J @ dq_r, self.rcond)  # least change of τ_k
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


@one_blas_thread
@renamed_keyword("asm", "model")
def quasi_static_sequence(
    model: System | AssembledSystem,
    task: Task,
    targets: ArrayLike,
    *,
    tau_k0: ArrayLike | None = None,
    q0: ArrayLike | None = None,
    tol: float = 1e-10,
    **kw: Any,
) -> Results:
    """Inverse statics along a path of targets (N, m_T): successive equilibria, each started from the last.

    Returns Results (kind "quasi_static", ``times`` = path index 0..N−1) with ``q`` and histories
    "tau_k" (N, k), "task_x", "task_target", "task_residual" (N,), "reachable" (N,), "G_rank" (N,),
    "lam" (N, m). Stops with ConvergenceError (``last_good`` = the equilibria so far) if an
    equilibrium fails.
    """
    asm = as_assembled(model, "quasi_static_sequence")
    refuse_contacts(asm, "quasi_static_sequence")
    targets = np.atleast_2d(np.asarray(targets, dtype=float))
    rows: dict[str, list] = {
        "q": [],
        "tau_k": [],
        "task_x": [],
        "task_target": [],
        "task_residual": [],
        "reachable": [],
        "G_rank": [],
        "lam": [],
    }
    tau_k, q = tau_k0, q0

    def results():
        n_done = len(rows["q"])
        q_hist = np.array(rows["q"]) if n_done else np.zeros((0, asm.n_dofs))
        hist = {key: np.array(v) for key, v in rows.items() if key != "q"}
        return Results(
            kind="quasi_static",
            times=np.arange(n_done, dtype=float),
            q=q_hist,
            slices=asm.slices.by_name(),
            iterations=[],
            reference=asm.q0.copy(),
            system=asm,
            v=np.zeros_like(q_hist),
            histories=hist,
            events=[],
            metadata={
                "task": task.name,
                "task_labels": list(task.row_labels),
                "actuated_labels": list(asm.actuated_labels),
            },
        )

    for target in targets:
        try:
            sol = inverse_statics(asm, task, target, tau_k0=tau_k, q0=q, tol=tol, **kw)
        except ConvergenceError as exc:
            exc.last_good = results()
            raise
        tau_k, q = sol.tau_k, sol.q
        for key, value in (
            ("q", sol.q),
            ("tau_k", sol.tau_k),
            ("task_x", sol.x),
            ("task_target", target),
            ("task_residual", sol.residual),
            ("reachable", float(sol.reachable)),
            ("G_rank", sol.rank),
            ("lam", sol.lam),
        ):
            rows[key].append(np.array(value, dtype=float, copy=True))
    return results()
