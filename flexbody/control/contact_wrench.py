"""Whether the actuators can hold a motion and a contact wrench inside the friction cones: the contact part of
:func:`~flexbody.control.actuation.actuation_report`.

At a state (t, q, v) with contacts touching (gap within ``touching`` of zero), a task acceleration ẍ_d and the
desired normal forces f_n,d of some contacts, the unknowns are the actuator inputs τ_k (k,), the independent
multipliers λ̂ (r,) of the bilateral rows and the contact forces f_i = (f_n, f_t₁, f_t₂) (3,) in each contact's
frame [n, t₁, t₂] (:class:`~flexbody.constraints.unilateral_contact.ContactFrame`, acting as G_iᵀ f_i as the
impulses do). With the equations of motion

    M a + h = Sᵀ τ_k + Φ̂ᵀ λ̂ + Σ G_iᵀ f_i,      a = M⁻¹ (Sᵀ τ_k + Φ̂ᵀ λ̂ + Gᵀ f − h)

the motion asked is linear in z = (τ_k, λ̂, f):

    Φ̂ a + β = 0                  the bilateral rows (context: independent rows)
    G_n,i a + γ_n,i = 0           every touching contact stays closed (its gap's second derivative is zero)
    G_t,i a + γ_t,i = 0           a sticking contact does not start to slip (tangential acceleration zero)
    f_t,i = −μ_i f_n,i û_i         a sliding contact (slip speed ‖u_t‖ > ``sticking``): Coulomb's force on the cone
    J a + J̇v = ẍ_d               the task
    f_n,i = f_n,d,i                the desired normal forces

(G a + γ: :meth:`~flexbody.constraints.unilateral_contact.Contact.acceleration_bias`.) These equalities E z = e have a
solution or not (the actuators and contacts cannot produce the motion at all: the least-squares residual says by how
much); where they do, z = z₀ + N w over their null space, and what is left is whether some w keeps every contact
force inside its cone. The margin of a choice is

    s = min_i min(f_n,i, μ_i f_n,i − ‖f_t,i‖)    [N]    (sliding or frictionless contacts: f_n,i alone)

and the report gives its largest value s* over w — a second-order cone program (maximise s subject to
f_n,i − s ≥ 0 and (μ_i f_n,i − s, f_t,i) ∈ SOC₃), solved by Clarabel. s* ≥ the ``margin`` asked (default 0): the
wrench can be held, and the report gives the least-effort inputs (the least ‖τ_k‖ with every contact inside its
cone by the margin: a cone program with a quadratic objective). s* < 0: it cannot; the contacts whose normal force
would have to pull at the best choice open, those whose friction would have to leave the cone slip. s* = ∞ where
the contacts can squeeze without limit (internal forces that no equation fixes).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ..errors import ActuationError, FlexbodyError
from .contact_rows import TOUCHING, TouchingContacts, touching_contacts

if TYPE_CHECKING:
    from .context import ControlContext
    from .tasks import Task

__all__ = ["ContactActuation", "contact_actuation", "solve_contact_wrench", "TOUCHING", "SOLVABLE_RTOL"]

SOLVABLE_RTOL = 1e-9
"""The equalities have a solution where their least-squares residual is at most this relative to their size."""

NULL_ROUND_OFF = 1e-13
"""Entries of the orthonormal null-space basis N at most this are round-off of a zero (a fixed quantity's row),
set to zero: left in, they make the cone programs' scaling fail (Clarabel: InsufficientProgress)."""

CONE_TOL = 1e-12
"""Clarabel's gap and feasibility tolerances for the cone programs."""


@dataclass(frozen=True, eq=False)
class ContactActuation:
    """Whether the actuators hold a motion and contact wrench inside the friction cones (module docstring).

    Attributes
    ----------
    contacts : tuple of str — the touching contacts, in the model's order; ``sliding`` (c,) bool.
    solvable : bool — the equalities (motion, contacts closed, desired normal forces) have a solution;
        ``residual`` their least-squares residual relative to their size.
    margin : float — s* [N], the largest least margin over the inputs (−∞ where not solvable, ∞ unbounded).
    required : float — the margin asked [N]; ``feasible``: solvable and s* ≥ required.
    tau : (k,) or None — least-effort actuator inputs with every contact inside its cone by ``required``
        (None where not feasible).
    forces : (c, 3) — contact forces (f_n, f_t₁, f_t₂) [N, contact frame] of ``tau``, or of the best choice
        (largest margin) where not feasible; ``acceleration`` (n,) the generalized accelerations with them.
    opening, slipping : tuple of str — where not feasible, the contacts whose normal force would pull (f_n < 0) and
        those whose friction would leave the cone, at the best choice.
    reason : str — why not feasible ("" if feasible).
    """

    contacts: tuple
    sliding: np.ndarray
    solvable: bool
    residual: float
    margin: float
    required: float
    feasible: bool
    tau: np.ndarray | None
    forces: np.ndarray
    acceleration: np.ndarray
    opening: tuple = ()
    slipping: tuple = ()
    reason: str = ""
    margins: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def require(self, who: str = "the contact wrench") -> np.ndarray:
        """The inputs ``tau`` (k,); ActuationError saying which contacts open or slip where not feasible (a torque
        that pulls on a surface is never returned)."""
        if not self.feasible or self.tau is None:
            raise ActuationError(f"{who}: {self.reason}", self)
        return self.tau

    def __str__(self) -> str:
        state = "feasible" if self.feasible else f"not feasible: {self.reason}"
        return f"contacts {list(self.contacts)}: margin {self.margin:.6g} N (asked {self.required:g} N), {state}"


@dataclass(frozen=True)
class _Problem:
    """The equalities E z = e over z = (τ_k, λ̂, f), the task's T z = t after them, and how z maps to the contacts
    (module docstring)."""

    E: np.ndarray
    e: np.ndarray
    T: np.ndarray
    t: np.ndarray
    k: int
    r: int
    mu: np.ndarray
    sliding: np.ndarray
    a0: np.ndarray
    Y: np.ndarray


def contact_actuation(
    ctx: ControlContext,
    *,
    task: Task | None = None,
    task_acceleration: ArrayLike | None = None,
    normal_forces: ArrayLike | dict | None = None,
    margin: float = 0.0,
    touching: float = TOUCHING,
) -> ContactActuation:
    """:class:`ContactActuation` of the context's model at its state (module docstring): the touching contacts
    held closed, ``task`` (a :class:`~flexbody.control.tasks.Task`) at ``task_acceleration`` ẍ_d (m_T,) (default
    zero), the desired ``normal_forces`` [N] (one per touching contact, or a dict name → N; None: any), and the
    ``margin`` [N] asked of every contact. FlexbodyError where no contact touches."""
    if not (np.isfinite(margin) and np.isfinite(touching) and touching >= 0.0):
        raise FlexbodyError(
            f"contact actuation: margin [N] must be finite and touching [m] ≥ 0, got {margin!r}, {touching!r}"
        )
    held = touching_contacts(ctx, touching=touching)
    if not held.contacts:
        raise FlexbodyError(
            f"contact actuation at t = {ctx.t:.9g} s: no contact touches (gaps within {touching:g} m of zero)"
        )
    xdd = None
    if task is not None:
        m_T = task.n_rows
        xdd = np.zeros(m_T) if task_acceleration is None else np.asarray(task_acceleration, dtype=float)
        if xdd.shape != (m_T,):
            raise FlexbodyError(f"task_acceleration: {m_T} values for the task's rows, got shape {xdd.shape}")
    return solve_contact_wrench(
        ctx, held, _desired(held.names, normal_forces), margin, task=task, task_acceleration=xdd
    )


def solve_contact_wrench(
    ctx: ControlContext,
    held: TouchingContacts,
    desired: np.ndarray,
    margin: float,
    *,
    task: Task | None = None,
    task_acceleration: np.ndarray | None = None,
    rows: tuple[np.ndarray, np.ndarray] | None = None,
    cones: bool = True,
    weight: np.ndarray | None = None,
    task_priority: bool = False,
    largest: bool = True,
) -> ContactActuation:
    """:func:`contact_actuation` for the ``held`` contacts (any number, none included) with the desired normal
    forces (c,) [N] (NaN: free), further acceleration ``rows`` (R (p, n), target (p,)) held as R a = target (a
    controller's approach law), and the effort measured as τ_kᵀ W_k⁻¹ τ_k with W_k = S W Sᵀ for a ``weight`` W (n, n)
    [AG-47]. Without ``cones`` (a motion-only law) the contact forces are what the least effort gives, whatever
    their sign: it is feasible where it is solvable, and its margins say where the forces would pull or slip. The task
    is met in least squares over the inputs that meet the rest; with ``task_priority`` (a controller's) the contacts
    come first and a task they conflict with is met as nearly as they allow (a sticking contact under a task on its
    own point), otherwise a task they do not allow makes the problem unsolvable. Without ``largest`` (a
    controller's, which needs inputs, not the largest margin) the least effort is taken without the cones where it
    keeps the margin asked (it is then the least effort with them), its least margin reported as ``margin``; the cone
    programs run only where it does not."""
    problem = _equalities(ctx, held, task, task_acceleration, desired, rows)
    names = held.names
    z0, N, residual = _solutions(problem.E, problem.e)
    if residual <= SOLVABLE_RTOL and problem.T.shape[0]:  # the task after the contacts, in least squares
        z0, N, task_residual = _task_after(problem, z0, N)
        if not task_priority:
            residual = max(residual, task_residual)
    if residual > SOLVABLE_RTOL:
        reason = (
            f"no input produces the motion and contact forces asked (least-squares residual {residual:.2e} of the "
            "equations' size): the actuators cannot reach it"
        )
        return _outcome(problem, names, z0, residual, -np.inf, margin, None, solvable=False, reason=reason)
    effort = _effort_metric(ctx, weight)
    if not cones or not names or not largest:
        chosen = _least_effort(problem, z0, N, None, effort)
        least = _margin_of(problem, chosen)
        if not cones or not names or least >= margin:  # the least effort already keeps the margin: no cone program
            return _outcome(problem, names, chosen, residual, least, margin, chosen[: problem.k].copy())
    best = _largest_margin(problem, z0, N)
    s_star = _margin_of(problem, best) if best is not None else np.inf
    if s_star >= margin:
        chosen = _least_effort(problem, z0, N, margin, effort)
        return _outcome(problem, names, chosen, residual, s_star, margin, chosen[: problem.k].copy())
    assert best is not None  # a bounded margin below the one asked
    forces = _forces(problem, best)
    margins = _margins(forces, problem.mu, problem.sliding)
    opening = tuple(name for name, f in zip(names, forces) if f[0] < min(margin, 0.0))
    slipping = tuple(
        name
        for name, f, m, slides in zip(names, forces, margins, problem.sliding)
        if not slides and f[0] >= 0.0 and m < min(margin, 0.0)
    )
    short = [name for name, m in zip(names, margins) if m < margin]
    reason = (
        f"the largest margin any input leaves is {s_star:.6g} N, below the {margin:g} N asked"
        + (f"; the normal force would pull at {list(opening)}" if opening else "")
        + (f"; friction would leave the cone at {list(slipping)}" if slipping else "")
        + (f"; short of the margin at {short}" if margin > 0.0 else "")
    )
    return _outcome(problem, names, best, residual, s_star, margin, None, opening, slipping, reason)


def _outcome(
    problem: _Problem,
    names: tuple,
    z: np.ndarray,
    residual: float,
    margin: float,
    required: float,
    tau: np.ndarray | None,
    opening: tuple = (),
    slipping: tuple = (),
    reason: str = "",
    solvable: bool = True,
) -> ContactActuation:
    """The :class:`ContactActuation` of the choice z (its forces, margins and accelerations), feasible where it
    gives inputs ``tau``."""
    forces = _forces(problem, z)
    return ContactActuation(
        names, problem.sliding, solvable, residual, margin, required, tau is not None, tau, forces,
        _acceleration(problem, z), opening, slipping, reason, _margins(forces, problem.mu, problem.sliding),
    )  # fmt: skip


def _effort_metric(ctx: ControlContext, weight: np.ndarray | None) -> np.ndarray | None:
    """W_k⁻¹ (k, k) of the effort τ_kᵀ W_k⁻¹ τ_k, W_k = S W Sᵀ [AG-47]; None for the plain ‖τ_k‖²."""
    if weight is None:
        return None
    W = np.asarray(weight, dtype=float)
    if W.shape != (ctx.n, ctx.n) or not np.all(np.isfinite(W)):
        raise FlexbodyError(f"weight W must be a finite ({ctx.n}, {ctx.n}) matrix, got shape {W.shape}")
    W_k = ctx.S @ W @ ctx.S.T
    try:
        inverse_root = np.linalg.inv(np.linalg.cholesky(W_k))  # W_k = L Lᵀ, W_k⁻¹ = L⁻ᵀ L⁻¹
    except np.linalg.LinAlgError:
        raise FlexbodyError("weight W: S W Sᵀ is not positive definite on the actuated coordinates") from None
    return inverse_root.T @ inverse_root


def _desired(names: tuple, normal_forces) -> np.ndarray:
    """f_n,d (c,) [N] of the contacts ``names``, NaN where not asked."""
    c = len(names)
    if normal_forces is None:
        return np.full(c, np.nan)
    if isinstance(normal_forces, dict):
        unknown = sorted(set(normal_forces) - set(names))
        if unknown:
            raise FlexbodyError(f"normal_forces: {unknown} are not touching contacts (those are {list(names)})")
        given = {name: float(value) for name, value in normal_forces.items()}
        bad = [name for name, value in given.items() if not np.isfinite(value)]
        if bad:
            raise FlexbodyError(f"normal_forces: the forces asked of {bad} are not finite numbers")
        return np.array([given.get(name, np.nan) for name in names])  # NaN: not asked
    values = np.asarray(normal_forces, dtype=float).reshape(-1)
    if values.shape != (c,):
        raise FlexbodyError(f"normal_forces: one per touching contact ({c}), got {values.size}")
    if not np.all(np.isfinite(values)):
        bad = [name for name, value in zip(names, values) if not np.isfinite(value)]
        raise FlexbodyError(
            f"normal_forces: the forces asked of {bad} are not finite numbers (leave one out of a dict)"
        )
    return values


def _equalities(ctx: ControlContext, held: TouchingContacts, task, task_acceleration, desired, extra) -> _Problem:
    """E z = e of the module docstring."""
    ctx.refuse_if_large("the contact actuation problem")
    n, S = ctx.n, ctx.S
    k, r, c = S.shape[0], ctx.rank, len(held.contacts)
    G, gamma, mu = held.G, held.gamma, held.mu
    Phi_hat_T = ctx.Phi_hat_T_dot(np.eye(r)).reshape(n, r)  # Φ̂ᵀ (n, r)
    columns = np.hstack([S.T, Phi_hat_T, G.T])  # generalized forces of z (n, k + r + 3c)
    Y = ctx.solve_M(columns)
    a0 = -ctx.solve_M(ctx.h)
    rows, values = [], []

    def accelerations(R: np.ndarray, target: np.ndarray) -> None:  # R a = target
        rows.append(R @ Y)
        values.append(target - R @ a0)

    accelerations(Phi_hat_T.T, -ctx.beta)
    held_rows = held.held_rows
    accelerations(G[held_rows], -gamma[held_rows])
    if extra is not None:
        accelerations(np.asarray(extra[0], dtype=float).reshape(-1, n), np.asarray(extra[1], dtype=float).reshape(-1))
    width = k + r + 3 * c
    for i in range(c):  # rows on the forces themselves
        at = k + r + 3 * i
        if held.sliding[i] or mu[i] == 0.0:  # Coulomb's force on the cone against the slip, or none
            direction = held.slip_direction(i)
            for j in (0, 1):
                row = np.zeros(width)
                row[at + 1 + j], row[at] = 1.0, mu[i] * direction[j]
                rows.append(row[None])
                values.append(np.zeros(1))
        if np.isfinite(desired[i]):
            row = np.zeros(width)
            row[at] = 1.0
            rows.append(row[None])
            values.append(np.array([desired[i]]))
    T, t = np.zeros((0, width)), np.zeros(0)
    if task is not None:
        terms = ctx.task(task)
        J = np.asarray(terms.J, dtype=float)
        T, t = J @ Y, task_acceleration - terms.bias - J @ a0
    return _Problem(np.vstack(rows), np.concatenate(values), T, t, k, r, mu, held.sliding, a0, Y)


def _solutions(E: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """(z₀, N, residual): the least-norm solution of E z = e (in the sense of least squares), a basis N of ker E and
    the residual ‖E z₀ − e‖ relative to max(‖e‖, ‖E‖·‖z₀‖, tiny), by the SVD."""
    U, sigma, Vt = np.linalg.svd(E, full_matrices=True)
    tol = max(E.shape) * np.finfo(float).eps * (sigma[0] if sigma.size else 0.0) * 1e3
    rank = int(np.count_nonzero(sigma > tol))
    z0 = Vt[:rank].T @ ((U[:, :rank].T @ e) / sigma[:rank])
    size = max(float(np.linalg.norm(e)), float(sigma[0] if sigma.size else 0.0) * float(np.linalg.norm(z0)), 1e-300)
    N = Vt[rank:].T.copy()
    N[np.abs(N) <= NULL_ROUND_OFF] = 0.0  # a quantity the equalities fix (a desired f_n) stays fixed in the cones
    return z0, N, float(np.linalg.norm(E @ z0 - e)) / size


def _task_after(problem: _Problem, z0: np.ndarray, N: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """(z₀, N, residual) of the task T z = t met in least squares over z₀ + N w, the residual relative to
    max(‖t‖, ‖T‖·‖z‖)."""
    T, t = problem.T, problem.t
    w0, N_task, _ = _solutions(T @ N, t - T @ z0)
    z, N = z0 + N @ w0, N @ N_task
    N[np.abs(N) <= NULL_ROUND_OFF] = 0.0
    size = max(float(np.linalg.norm(t)), float(np.linalg.norm(T, 2)) * float(np.linalg.norm(z)), 1e-300)
    return z, N, float(np.linalg.norm(T @ z - t)) / size


def _forces(problem: _Problem, z: np.ndarray) -> np.ndarray:
    at = problem.k + problem.r
    return z[at:].reshape(-1, 3).copy()


def _acceleration(problem: _Problem, z: np.ndarray) -> np.ndarray:
    return problem.a0 + problem.Y @ z


def _margins(forces: np.ndarray, mu: np.ndarray, sliding: np.ndarray) -> np.ndarray:
    """Each contact's margin (c,) [N]: min(f_n, μ f_n − ‖f_t‖), f_n alone where it slides or has no friction."""
    friction = mu * forces[:, 0] - np.hypot(forces[:, 1], forces[:, 2])
    held = ~sliding & (mu > 0.0)
    return np.where(held, np.minimum(forces[:, 0], friction), forces[:, 0])


def _margin_of(problem: _Problem, z: np.ndarray) -> float:
    """The least margin [N] of the choice z (∞ without contacts)."""
    return float(_margins(_forces(problem, z), problem.mu, problem.sliding).min(initial=np.inf))


def _cones(problem: _Problem, z0: np.ndarray, N: np.ndarray, with_s: bool):
    """(A, b, cones) of Clarabel's A x + slack = b, slack in the cones, over x = (w, s) (or w): every contact's
    f_n − s ≥ 0 and, where it sticks with friction, (μ f_n − s, f_t) ∈ SOC₃ (s = 0 without ``with_s``)."""
    import clarabel

    at = problem.k + problem.r
    c = problem.mu.size
    F0, FN = z0[at:].reshape(c, 3), N[at:].reshape(c, 3, -1)
    columns = N.shape[1] + (1 if with_s else 0)
    blocks, rhs, cones = [], [], []
    s_col = np.zeros(columns)
    if with_s:
        s_col[-1] = 1.0
    for i in range(c):
        normal = np.concatenate([FN[i, 0], [0.0] if with_s else []])
        blocks.append(-(normal - s_col)[None])  # f_n − s ≥ 0
        rhs.append([F0[i, 0]])
        cones.append(clarabel.NonnegativeConeT(1))
        if not problem.sliding[i] and problem.mu[i] > 0.0:
            mu = problem.mu[i]
            cone = np.zeros((3, columns))
            cone[0, : N.shape[1]], cone[1:, : N.shape[1]] = mu * FN[i, 0], FN[i, 1:]
            cone[0] -= s_col
            blocks.append(-cone)
            rhs.append([mu * F0[i, 0], F0[i, 1], F0[i, 2]])
            cones.append(clarabel.SecondOrderConeT(3))
    return sp.csc_matrix(np.vstack(blocks)), np.concatenate(rhs), cones


def _settings():
    import clarabel

    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.tol_gap_abs = settings.tol_gap_rel = settings.tol_feas = CONE_TOL
    settings.tol_ktratio = 1e-10
    settings.max_iter = 200
    return settings


def _largest_margin(problem: _Problem, z0: np.ndarray, N: np.ndarray) -> np.ndarray | None:
    """z of the largest least margin s* (module docstring), or None where s is unbounded."""
    import clarabel

    if not N.shape[1]:
        return z0
    A, b, cones = _cones(problem, z0, N, with_s=True)
    columns = A.shape[1]
    objective = np.zeros(columns)
    objective[-1] = -1.0  # maximise s
    solver = clarabel.DefaultSolver(sp.csc_matrix((columns, columns)), objective, A, b, cones, _settings())
    solution = solver.solve()
    status = str(solution.status)
    if status in ("DualInfeasible", "AlmostDualInfeasible"):
        return None
    if status not in ("Solved", "AlmostSolved"):
        raise FlexbodyError(f"contact actuation: the cone program of the largest margin ended {status}")
    return z0 + N @ np.asarray(solution.x)[:-1]


def _least_effort(
    problem: _Problem, z0: np.ndarray, N: np.ndarray, margin: float | None, effort: np.ndarray | None
) -> np.ndarray:
    """z of the least effort τ_kᵀ Q τ_k (Q = ``effort``, default I) with every contact's margin at least ``margin``
    (module docstring; None: no cone constraints, the least-squares solution of least ‖w‖)."""
    import clarabel

    if not N.shape[1]:
        return z0
    k = problem.k
    T, t0 = N[:k], z0[:k]
    root = np.eye(k) if effort is None else np.linalg.cholesky(effort).T  # Q = rootᵀ root
    if margin is None:
        return z0 + N @ np.linalg.lstsq(root @ T, -(root @ t0), rcond=None)[0]
    A, b, cones = _cones(problem, z0, N, with_s=False)
    b = b.copy()
    at = 0
    for i in range(problem.mu.size):  # the margin asked: f_n ≥ margin, (μ f_n − margin, f_t) ∈ SOC₃
        b[at] -= margin
        at += 1
        if not problem.sliding[i] and problem.mu[i] > 0.0:
            b[at] -= margin
            at += 3
    RT = root @ T
    P = RT.T @ RT
    P = P + 1e-12 * max(float(np.abs(P).max(initial=0.0)), 1.0) * np.eye(P.shape[0])  # w along ker T: the least
    solver = clarabel.DefaultSolver(sp.csc_matrix(np.triu(P)), RT.T @ (root @ t0), A, b, cones, _settings())
    solution = solver.solve()
    status = str(solution.status)
    if status not in ("Solved", "AlmostSolved"):
        raise FlexbodyError(f"contact actuation: the cone program of the least effort ended {status}")
    return z0 + N @ np.asarray(solution.x)
