"""The one static-solve entry, :func:`solve_static`: forward statics (the equilibrium under given loads and
inputs) and inverse statics (the inputs that hold a task at a target), for a :class:`flexbody.System` or
its :class:`flexbody.AssembledSystem`.

Which solver runs follows from the model, not from the caller's choice of function:

- flexible bodies whose only constraints are :class:`flexbody.Fix` (no rigid tree, no input): the prescribed
  coordinates are eliminated and r(q, s) = k(q) − s f_ext(q) is solved by Newton–Raphson with load
  stepping and line search (:mod:`flexbody.solvers.flexible_statics`, the static form of [DE-105]);
- anything else (rigid trees, closures, attachments, actuator inputs): the bordered Newton iteration on
  (q, λ) of Mq̈ = 0 in [DE-7], τ = h(q) − Φᵀλ, φ(q) = 0
  (:func:`flexbody.solvers.constrained_statics.static_equilibrium`);
- with ``task`` and ``target``: inverse statics [DE 6.3] (:func:`flexbody.solvers.inverse_statics.inverse_statics`);
- flexible bodies held by Fix (or by nothing) with unilateral contacts: Newton with the contact problem solved at
  every iteration (:mod:`flexbody.solvers.contact_statics`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, TypeGuard

import numpy as np
from numpy.typing import ArrayLike

from ..constraints.base import Fix
from ..deprecation import deprecated
from ..errors import FlexbodyError
from ..io.results import Results
from ..system.description import System, as_assembled
from ..threads import one_blas_thread
from .arc_length import ArcLength, follow_path
from .constrained_stability import equilibrium_counts
from .constrained_statics import Equilibrium, static_equilibrium
from .contact_statics import solve_contact_static
from .flexible_statics import solve_flexible
from .inverse_statics import inverse_statics
from .newton_settings import NewtonSettings
from .path_stability import POINT_KINDS, BranchSwitch, point_kind

if TYPE_CHECKING:
    from ..control.tasks import Task
    from ..system import AssembledSystem

log = logging.getLogger(__name__)

__all__ = ["solve_static", "NewtonSettings", "ArcLength", "BranchSwitch"]


@one_blas_thread
def solve_static(
    model: System | AssembledSystem,
    *,
    load_steps: int = 1,
    settings: NewtonSettings | None = None,
    q_start: ArrayLike | None = None,
    tau: ArrayLike | None = None,
    tau_k: ArrayLike | None = None,
    task: Task | None = None,
    target: ArrayLike | None = None,
    t: float = 0.0,
    path: ArcLength | None = None,
    branch: BranchSwitch | None = None,
) -> Results:
    """Static equilibrium of ``model`` under its loads and gravity, reached in ``load_steps`` equal load
    increments (a failing increment is bisected). Inverse statics (the actuator inputs that hold a task at a
    target) is :func:`flexbody.inverse_statics`; ``task`` and ``target`` here are its deprecated form (0.3.0,
    removed in 0.4.0), which returns its :class:`~flexbody.solvers.inverse_statics.InverseStatics`.

    Parameters
    ----------
    model : System or AssembledSystem
        A System of flexible bodies with only :class:`~flexbody.Fix` constraints is solved with the fixed
        coordinates eliminated; any other model (rigid trees, closures, attachments) is assembled and
        solved on (q, λ) with its constraints as rows.
    load_steps : int
        Number of equal load increments (loads, gravity and inputs scaled by the load factor s).
    settings : NewtonSettings, optional
        Tolerance, iterations per step and bisections. For flexible-only systems ``tol`` bounds the
        residual relative to max(‖s f_ext‖, ‖k(q)‖) and ``line_search`` applies; for constrained systems
        it bounds the Newton increment and φ relative to max(1, ‖q‖∞) (default 1e-11 there).
    q_start : ndarray (n_dofs,), optional
        Starting coordinates (default: the reference configuration, ``asm.q0``) [m, rad].
    tau, tau_k : ndarray, optional
        Generalized forces (n,) or actuator inputs (k,) held constant (τ = Sᵀτ_k) [N, N·m]; default 0.
        For inverse statics ``tau_k`` is the starting guess.
    task, target : optional
        Deprecated: use :func:`flexbody.inverse_statics`.
    t : float
        Time at which rheonomic constraints and loads are evaluated [s].
    path : ArcLength, optional
        Follow the equilibrium path by arc-length continuation (:mod:`flexbody.solvers.arc_length`) instead of
        load increments: through limit points (snap-through, snap-back) to the load factor 1. Flexible bodies
        held by Fix only; the first arc is the linear response to the increment 1/load_steps.
    branch : BranchSwitch, optional
        At the path's first bifurcation, leave it for the branch on the side of ``branch.toward`` (flexible
        bodies held by Fix only; load steps go on by arc length from there).

    Returns
    -------
    Results
        ``kind="static"``, ``times`` = load factors of the converged steps (the first entry 0 is
        the start), ``q`` per step, ``iterations`` and ``residuals`` per step; for constrained models also
        ``histories["lam"]`` (multipliers) and ``histories["tau"]`` (applied forces) per step and
        ``metadata`` with the final residual [N, N·m] and violation max|φ|. Every forward path has the
        histories "newton_iterations" and "residual" (the last residual norm of each step); an arc-length
        path also "arc_length" (``times`` then may fall and rise).

    Raises
    ------
    FlexbodyError
        Bad ``load_steps``, ``q_start`` or settings; only one of ``task`` and ``target``.
    ConvergenceError
        No equilibrium after the allowed bisections; ``last_good`` holds what converged.
    """
    if not isinstance(load_steps, (int, np.integer)) or load_steps < 1:
        raise FlexbodyError(f"solve_static: load_steps must be a positive integer, got {load_steps!r}")
    if settings is not None and not isinstance(settings, NewtonSettings):
        raise FlexbodyError(f"solve_static: settings must be a NewtonSettings, got {type(settings).__name__}")
    if (task is None) != (target is None):
        raise FlexbodyError("solve_static: inverse statics needs both task and target")
    if getattr(model, "contacts", None):
        return _with_contacts(model, load_steps, settings, q_start, tau, tau_k, task, path, branch)
    if task is not None:
        assert target is not None  # both or neither (checked above)
        deprecated("solve_static(model, task=..., target=...)", "fb.inverse_statics(model, task, target)")
        asm = as_assembled(model, "solve_static")
        return inverse_statics(  # type: ignore[return-value]  # the deprecated form keeps its return
            asm,
            task,
            target,
            tau_k0=tau_k,
            q0=q_start,
            t=t,
            load_steps=load_steps,
            **_constrained_settings(settings, inverse=True),
        )
    if path is not None:
        if not isinstance(path, ArcLength):
            raise FlexbodyError(f"solve_static: path must be an ArcLength, got {type(path).__name__}")
        if task is not None or tau is not None or tau_k is not None or not _flexible_only(model):
            raise FlexbodyError(
                "solve_static: arc-length paths are followed for flexible bodies held by Fix "
                "only, under their loads (no rigid trees, other constraints, inputs or tasks)"
            )
        return follow_path(model, path, load_steps=load_steps, newton=settings, q_start=q_start, branch=branch)
    if branch is not None and not isinstance(branch, BranchSwitch):
        raise FlexbodyError(f"solve_static: branch must be a BranchSwitch, got {type(branch).__name__}")
    if _flexible_only(model) and tau is None and tau_k is None:
        return solve_flexible(model, load_steps=load_steps, settings=settings, q_start=q_start, branch=branch)
    if branch is not None:
        raise FlexbodyError("solve_static: branch switching is for flexible bodies held by Fix only, under their loads")
    asm = as_assembled(model, "solve_static")
    equilibrium = static_equilibrium(
        asm, tau, tau_k=tau_k, q0=q_start, t=t, load_steps=load_steps, **_constrained_settings(settings)
    )
    return _as_results(asm, equilibrium, q_start, t)


def _with_contacts(model, load_steps, settings, q_start, tau, tau_k, task, path, branch) -> Results:
    """The equilibrium of flexible bodies held by Fix (or by nothing) with unilateral contacts
    (:mod:`flexbody.solvers.contact_statics`); FlexbodyError for any other model with contacts."""
    if not _flexible_only(model) or any(x is not None for x in (tau, tau_k, task, path, branch)):
        names = [c.name for c in model.contacts[:3]] + (["…"] if len(model.contacts) > 3 else [])
        raise FlexbodyError(
            f"solve_static: the system has unilateral contacts {names}, which the static solve takes for flexible "
            "bodies held by Fix (or by nothing) only, without rigid trees, other constraints, inputs, tasks or "
            "arc-length paths (it would solve as if they were not there); bring such a system to rest with "
            "fb.MoreauJean, or model a lasting contact as a bilateral row (fb.OnSurface) or a force "
            "(fb.CompliantContact)"
        )
    assert isinstance(model, System)  # _flexible_only
    return solve_contact_static(model, load_steps=load_steps, settings=settings, q_start=q_start)


def _flexible_only(model: object) -> TypeGuard[System]:
    """A System of flexible bodies held by Fix only: the eliminating solver's domain."""
    return (
        isinstance(model, System)
        and not model.trees
        and bool(model.bodies)
        and not model.forces
        and all(isinstance(c, Fix) for c in model.constraints)
    )


def _constrained_settings(settings: NewtonSettings | None, inverse: bool = False) -> dict:
    """The keywords of the constrained solvers that ``settings`` gives (their own defaults otherwise)."""
    if settings is None:
        return {}
    out = {"tol": settings.tol, "max_iterations": settings.max_iterations}
    if not inverse:
        out["max_bisections"] = settings.max_bisections
    return out


def _as_results(asm, eq: Equilibrium, q_start, t: float) -> Results:
    """The equilibrium path (start, then each converged load factor) as static Results, with the stability of each
    point (:mod:`flexbody.solvers.constrained_stability`)."""
    q0 = np.array(asm.q0 if q_start is None else q_start, dtype=float)
    factors = [0.0] + [step[0] for step in eq.path]
    q = np.vstack([q0] + [step[1] for step in eq.path])
    lam = np.vstack([np.zeros(asm.n_constraints)] + [step[2] for step in eq.path])
    tau = np.vstack([np.zeros(asm.n_dofs)] + [step[0] * eq.tau for step in eq.path])
    iterations = [0] + [step[3] for step in eq.path]
    residuals = [[]] + [list(step[4]) for step in eq.path]
    counts = np.array(equilibrium_counts(asm, t, list(zip(factors, q, lam))), dtype=float)
    stable = None if counts[-1] < 0 else bool(counts[-1] == 0)
    if stable is False:
        log.warning(
            "solve_static: the equilibrium at load factor 1 is unstable: its tangent on the constraints has %d "
            "negative eigenvalue(s)",
            int(counts[-1]),
        )
    results = Results(
        kind="static",
        times=np.array(factors),
        q=q,
        slices=asm.slices.by_name(),
        iterations=iterations,
        residuals=residuals,
        reference=np.array(asm.q0, dtype=float),
        system=asm,
        histories={
            "lam": lam,
            "tau": tau,
            "newton_iterations": np.array(iterations, dtype=float),
            "residual": np.array([h[-1] if h else 0.0 for h in residuals]),
            "negative_eigenvalues": counts,
            "point_kind": np.array([point_kind(int(count)) for count in counts], dtype=float),
        },
        metadata={
            "solver": "bordered Newton on (q, λ)",
            "residual": float(eq.residual),
            "violation": float(eq.violation),
            "iterations": int(eq.iterations),
            "stable": stable,
            "point_kinds": dict(POINT_KINDS),
        },
    )
    return results
