"""Static equilibrium of constrained rigid–flexible systems [DE 6.3], and the inputs that hold a configuration.

With a = 0 and v = 0 the constrained equations [DE-112, DE-113] become

    r(q, λ) = h(q, 0) − Sᵀτ_k − Φ(q)ᵀλ = 0,    φ(q) = 0,

h(q, 0) = g for the rigid trees and k(q) − f_ext(q) for the flexible bodies. :func:`static_equilibrium` runs
Newton on (q, λ) with load steps (gravity, loads and τ_k scaled by s) and step bisection; the saddle points
are solved by :class:`flexbody.linalg.saddle_point.SaddlePointSolver` with A = ∂r/∂q (flexible tangent
exact; joint rows exact where every term on them has its derivative, else by central differences, including the
constraint Hessian term of the joint rows, :mod:`flexbody.solvers.constrained_equations`).
:func:`holding_inputs` finds the actuator inputs that hold the actuated coordinates where they are.
Inverse statics of tasks builds on this (:mod:`flexbody.solvers.inverse_statics`); the entry for all of
them is :func:`flexbody.solve_static`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ..deprecation import renamed_keyword
from ..errors import ConstraintError, ConvergenceError, FlexbodyError, StateError
from ..linalg.rank import touched_columns
from ..linalg.saddle_point import SaddlePointSolver
from ..system.description import as_assembled, refuse_contacts
from ..threads import one_blas_thread
from .constrained_equations import EquationResidual
from .load_increments import LoadIncrements
from .newton_scales import increment_scales, increments_converged, rows_converged
from .stabilization import worst_rows

if TYPE_CHECKING:
    from ..system import AssembledSystem, System

__all__ = ["Equilibrium", "static_equilibrium", "holding_inputs"]


@dataclass
class Equilibrium:
    """A static equilibrium: q (n,), λ (m,), applied τ (n,) = Sᵀτ_k, the final residual max|r| [N or N·m]
    and max|φ|, Newton iterations, residual history and the load factors that converged; ``path`` holds
    each converged load step as (s, q, λ, iterations, residual history of the step)."""

    q: np.ndarray
    lam: np.ndarray
    tau: np.ndarray
    residual: float
    violation: float
    iterations: int
    history: list = field(default_factory=list)
    load_factors: list = field(default_factory=list)
    path: list = field(default_factory=list)


class StaticEquations:
    """Residual and Jacobian of the static equations of an assembled system at load factor s
    (:class:`flexbody.solvers.constrained_equations.EquationResidual` with q̈ = 0, v = 0), optionally with held actuated
    coordinates."""

    def __init__(self, asm, t: float, hold=None):
        if np.any(getattr(asm, "velocity_rows", ())):
            labels = [lab for lab, v in zip(asm.row_labels, asm.velocity_rows) if v]
            raise ConstraintError(
                f"statics: the velocity-level (Pfaffian) rows {labels} constrain motion, not "
                f"positions, so they do not define an equilibrium; solve the statics without them "
                f"(or hold those coordinates with holonomic rows)"
            )
        self.asm, self.t = asm, float(t)
        self.equations = EquationResidual(asm)
        self.hold = hold  # (S (k, n), S q_held (k,)) or None
        self.scales = increment_scales(asm)  # the unit of each coordinate's Newton increment

    def inversion(self, q) -> str | None:
        """Where a flexible body is inverted at q (det F ≤ 0 at a Gauss point), or None."""
        asm = self.asm
        for body in getattr(asm, "bodies", ()):
            inverted = body.inversion(q[asm.slices[body]])
            if inverted:
                return inverted
        return None

    def _split(self, lam):
        m = self.asm.n_constraints
        return lam[:m], lam[m:]

    def workspace(self, q):
        """The workspace of the static state q (at rest, at the statics' time)."""
        return self.asm.workspace(self.t, q)

    def residual(self, q, lam, tau, s, ws=None):
        """r (n,), φ (m,), Φ (m, n) at (q, λ) and load factor s (in the workspace ``ws`` of q when given)."""
        lam_c, lam_h = self._split(lam)
        ws = self.workspace(q) if ws is None else ws
        r, phi, Phi = self.equations.evaluate(ws, None, lam_c, tau, s)
        if self.hold is not None:  # held joints: rows S q − S q_held, τ_k = λ_h
            S, target = self.hold
            r -= S.T @ lam_h
            phi = np.concatenate([phi, S @ q - target])
            Phi = sp.vstack([sp.csr_matrix(Phi), sp.csr_matrix(S)], format="csr")
        return r, phi, Phi

    def tangent(self, q, lam, s, ws=None):
        """(A_r (n_r, n_r) exact or by central differences, A_f sparse) of ∂r/∂q at load factor s (in the workspace
        ``ws`` of q when given): the Newton matrix of :meth:`EquationResidual.iteration_matrix` with c_q = 1 alone."""
        ws = self.workspace(q) if ws is None else ws
        return self.equations.iteration_matrix(ws, None, self._split(lam)[0], c_m=0.0, c_v=0.0, c_q=1.0, s=s)


def _applied(asm, tau, tau_k) -> np.ndarray:
    if tau is not None and tau_k is not None:
        raise FlexbodyError("static equilibrium: give tau (n,) or tau_k (k,), not both")
    if tau_k is not None:
        tau_k = np.asarray(tau_k, dtype=float)
        if tau_k.shape != (asm.S.shape[0],) or not np.all(np.isfinite(tau_k)):
            raise StateError(
                f"tau_k must be {asm.S.shape[0]} finite numbers (actuators {asm.actuated_labels}), "
                f"got shape {tau_k.shape}"
            )
        return asm.S.T @ tau_k
    if tau is None:
        return np.zeros(asm.n_dofs)
    tau = np.asarray(tau, dtype=float)
    if tau.shape != (asm.n_dofs,) or not np.all(np.isfinite(tau)):
        raise StateError(f"tau must be {asm.n_dofs} finite numbers, got shape {tau.shape}")
    return tau


DIVERGING = 3
"""Consecutive growing Newton corrections after which a load step's iterations are damped."""


def _newton(
    stat: StaticEquations, solver: SaddlePointSolver, q, lam, tau, s, tol, max_iterations, history
) -> tuple[np.ndarray, np.ndarray, int, float, float]:
    """Newton at load factor s; returns (q, λ, iterations, max|r|, max|φ|) or raises.

    Full Newton steps (halved only while the residual at the trial point is not finite), so the iterations keep
    their quadratic convergence; after :data:`DIVERGING` consecutive corrections that grow, the step is damped by
    the natural monotonicity test (Deuflhard): a trial step t·Δ is accepted when the simplified Newton increment
    at the trial point, with the same factor, satisfies ‖Δ̄‖ ≤ (1 − t/4)‖Δ‖, otherwise t is halved (affine
    invariant: no scaling of r against φ needed). A load step that still fails is bisected by the caller."""
    q, lam = q.copy(), lam.copy()
    ws = stat.workspace(q)
    r, phi, Phi = stat.residual(q, lam, tau, s, ws)
    res = viol = np.inf
    damped, growing, previous = False, 0, np.inf
    for k in range(1, max_iterations + 1):
        A_r, A_f = stat.tangent(q, lam, s, ws)
        solver.factor(A_r, A_f, sp.csr_matrix(Phi))
        dq, y = solver.solve(-r, -phi)
        norm = float(np.linalg.norm(dq))
        growing = growing + 1 if norm > previous else 0
        damped, previous = damped or growing >= DIVERGING, norm
        step = 1.0
        for _ in range(10):
            q_try, lam_try = q + step * dq, lam - step * y
            ws = stat.workspace(q_try)
            r_try, phi_try, Phi_try = stat.residual(q_try, lam_try, tau, s, ws)
            if np.all(np.isfinite(r_try)) and np.all(np.isfinite(phi_try)):
                if not damped or norm <= tol:
                    break
                simplified = float(np.linalg.norm(solver.solve(-r_try, -phi_try)[0]))
                if simplified <= (1.0 - step / 4.0) * norm:
                    break
            step *= 0.5
        q, lam, r, phi, Phi = q_try, lam_try, r_try, phi_try, Phi_try
        res = float(np.max(np.abs(r))) if r.size else 0.0
        viol = float(np.max(np.abs(phi))) if phi.size else 0.0
        history.append(res)
        if increments_converged(step * dq, q, tol, stat.scales) and rows_converged(phi, q, tol):
            inverted = stat.inversion(q)
            if inverted:  # an inverted state is never an equilibrium
                raise ConvergenceError(
                    f"static equilibrium at load factor {s:.4g}: Newton reached a state where {inverted}", list(history)
                )
            return q, lam, k, res, viol
    rows = (
        f"; largest constraint residuals in rows {worst_rows(stat.asm, phi[: stat.asm.n_constraints])}"
        if not rows_converged(phi, q, tol) and stat.asm.n_constraints
        else ""
    )
    raise ConvergenceError(
        f"static equilibrium at load factor {s:.4g}: no convergence in {max_iterations} "
        f"iterations (max|r| = {res:.3e}, max|φ| = {viol:.3e}){rows}",
        list(history),
    )


@renamed_keyword("asm", "model")
def static_equilibrium(
    model: System | AssembledSystem,
    tau=None,
    *,
    tau_k=None,
    q0=None,
    lam0=None,
    t: float = 0.0,
    load_steps: int = 1,
    tol: float = 1e-11,
    max_iterations: int = 30,
    max_bisections: int = 6,
) -> Equilibrium:
    """Static equilibrium of an assembled system under its loads, gravity and given actuator inputs.

    Parameters
    ----------
    model : AssembledSystem, or a System (assembled here)
    tau : (n,) generalized forces, or ``tau_k`` (k,) actuator inputs (τ = Sᵀτ_k) [N or N·m]; default 0.
    q0 : (n,) start (default ``asm.q0``); lam0 : (m,) start multipliers (default 0).
    load_steps : int, number of equal load factors s from 1/N to 1 (gravity, loads and τ scaled by s);
        a step that fails is bisected up to ``max_bisections`` times below 1/N, and doubled back after easy steps
        (:class:`~flexbody.solvers.load_increments.LoadIncrements`).
    tol : Newton tolerance on each coordinate's increment in its unit (1 rad, 1 m, a reduced body's modal
        amplitude that moves it by 1 m) and on φ [m or rad] (:mod:`flexbody.solvers.newton_scales`).

    Raises
    ------
    ConvergenceError with the residual history and ``last_good`` (the :class:`Equilibrium` at the last
    converged load factor, or None).
    """
    asm = as_assembled(model, "static_equilibrium")
    refuse_contacts(asm, "static_equilibrium")
    if not isinstance(load_steps, (int, np.integer)) or load_steps < 1:
        raise FlexbodyError(f"static_equilibrium: load_steps must be a positive integer, got {load_steps!r}")
    tau = _applied(asm, tau, tau_k)
    q = np.array(asm.q0 if q0 is None else q0, dtype=float)
    if q.shape != (asm.n_dofs,) or not np.all(np.isfinite(q)):
        raise StateError(f"static_equilibrium: q0 must be {asm.n_dofs} finite numbers, got shape {q.shape}")
    lam = np.zeros(asm.n_constraints) if lam0 is None else np.array(lam0, dtype=float)
    _check_held(asm, t, q)
    stat, solver = StaticEquations(asm, t), SaddlePointSolver(asm.n_rigid)
    history: list[float] = []  # residual norms of every iteration
    factors, iterations, path = [], 0, []
    s_done, steps = 0.0, LoadIncrements(load_steps, max_bisections)
    last = None
    while s_done < 1.0 - 1e-12:
        s = steps.target(s_done)
        first = len(history)
        try:
            q_new, lam_new, k, res, viol = _newton(stat, solver, q, lam, tau, s, tol, max_iterations, history)
        except ConvergenceError as exc:
            loose = getattr(exc, "coordinates", None)
            if loose:  # a coordinate with no stiffness that nothing holds: no load step helps
                raise ConvergenceError(
                    f"static equilibrium: coordinates {[asm.coordinate_labels[i] for i in loose]} have no stiffness "
                    "and nothing holds them (no spring, no gravity moment, no constraint): hold or load them",
                    exc.residual_history,
                    last_good=last,
                ) from exc
            if not steps.failed(s_done):
                exc.last_good = last
                raise
            continue
        steps.converged(k)
        q, lam, s_done, iterations = q_new, lam_new, s, iterations + k
        factors.append(s)
        path.append((s, q.copy(), lam.copy(), k, history[first:]))
        last = Equilibrium(
            q.copy(), lam.copy(), tau.copy(), res, viol, iterations, list(history), list(factors), list(path)
        )
    assert last is not None  # the loop ends after a converged step
    return last


def _check_held(asm, t: float, q: np.ndarray) -> None:
    """ConstraintError naming each loaded flexible body that no constraint row touches: it floats free, its
    stiffness is singular on its rigid-body motions, and no static equilibrium holds it against its loads (Newton
    would diverge). An unloaded free body is in equilibrium where it is (its free–free modes are asked for); systems
    with force elements are not checked (a spring may hold a body)."""
    if not asm.sparse or asm.forces:
        return
    ws = asm.workspace(t, q)
    touched, load = touched_columns(ws.constraint_rows()[1], asm.n_dofs), ws.external_force()
    fs = asm.flexible.slice
    free = [
        body.name
        for body in asm.bodies
        if not touched[asm.slices[body]].any()
        and np.any(load[asm.slices[body].start - fs.start : asm.slices[body].stop - fs.start])
    ]
    if free:
        raise ConstraintError(
            f"static equilibrium: bodies {free} are loaded but not held: no constraint touches them, so they float "
            "free and have no static equilibrium; fix, attach or tie them (fb.Fix, fb.AttachNodes, fb.TieNodes)"
        )


@one_blas_thread
@renamed_keyword("asm", "model")
def holding_inputs(
    model: System | AssembledSystem,
    q: ArrayLike | None = None,
    *,
    t: float = 0.0,
    load_steps: int = 1,
    tol: float = 1e-11,
    max_iterations: int = 30,
) -> tuple[np.ndarray, Equilibrium]:
    """Actuator inputs τ_k (k,) that hold the actuated coordinates at their values in ``q`` (default
    ``asm.q0``) in static equilibrium (the flexible bodies deflect under their loads), and that
    equilibrium. The actuated coordinates are held by extra rows S q = S q_held whose multipliers are τ_k.
    ``model`` is an AssembledSystem or a System (assembled here)."""
    asm = as_assembled(model, "holding_inputs")
    refuse_contacts(asm, "holding_inputs")
    q = np.array(asm.q0 if q is None else q, dtype=float)
    S = np.asarray(asm.S, dtype=float)
    stat = StaticEquations(asm, t, hold=(S, S @ q))
    solver = SaddlePointSolver(asm.n_rigid)
    lam = np.zeros(asm.n_constraints + S.shape[0])
    history: list[float] = []
    iterations = 0
    for s in np.arange(1, load_steps + 1) / load_steps:
        q, lam, k, res, viol = _newton(
            stat, solver, q, lam, np.zeros(asm.n_dofs), float(s), tol, max_iterations, history
        )
        iterations += k
    m = asm.n_constraints
    return lam[m:].copy(), Equilibrium(q, lam[:m].copy(), S.T @ lam[m:], res, viol, iterations, history, [1.0])
