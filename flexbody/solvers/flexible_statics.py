"""Static equilibrium of flexible bodies: Newton–Raphson with load stepping and line search.

Solves r(q, s) = k(q) − s f_ext(q) = 0 for the free coordinates at load factors 0 < s ≤ 1 (the static form
of [DE-105], d̈ = 0), with prescribed coordinates (Fix constraints) eliminated and set to X + s u. The
Jacobian is the body tangent ∂k/∂q minus the load stiffness of follower loads. Linear solves use CHOLMOD
when the Jacobian is symmetric positive definite (symbolic analysis done once) and SuperLU otherwise.
A step that fails is bisected; when bisection runs out, ConvergenceError carries the residual history and
the results of all converged steps.
"""

from __future__ import annotations

import logging

import numpy as np
from numpy.typing import ArrayLike

from ..errors import ConvergenceError, FlexbodyError
from ..io.results import Results
from ..system.description import System
from .arc_length import ArcLength, continue_path
from .equilibrium_path import EquilibriumPath
from .flexible_newton import check_held, flexible_newton
from .load_increments import LoadIncrements
from .newton_settings import NewtonSettings
from .path_stability import BranchSwitch
from .path_track import PathTrack

log = logging.getLogger(__name__)


def solve_flexible(
    system: System,
    *,
    load_steps: int = 1,
    settings: NewtonSettings | None = None,
    q_start: ArrayLike | None = None,
    branch: BranchSwitch | None = None,
) -> Results:
    """Static equilibrium under the system's loads, reached in ``load_steps`` equal increments.

    Parameters
    ----------
    system : System
        Bodies, Fix constraints (eliminated) and loads (dead or follower).
    load_steps : int
        Number of equal load increments; a failing increment is bisected automatically.
    settings : NewtonSettings, optional
    q_start : ndarray (n_dofs,), optional
        Starting coordinates (default: reference configuration).
    branch : BranchSwitch, optional
        At the first bifurcation, leave the path for the branch on this side and follow it by arc length
        (default arcs) to the load factor 1.

    Returns
    -------
    Results
        ``kind="static"``, ``times`` = load factors of the converged steps (the first entry 0 is the start); the
        stability of every point (:mod:`flexbody.solvers.path_track`).
    """
    settings = settings or NewtonSettings()
    q = system.reference_coordinates() if q_start is None else np.array(q_start, dtype=float)
    if q.shape != (system.n_dofs,) or not np.all(np.isfinite(q)):
        raise FlexbodyError(f"solve_static: q_start must be finite with shape ({system.n_dofs},)")
    path = EquilibriumPath(system, settings)
    check_held(system, path.fixed)
    track = PathTrack(system, path, settings, q, branch)
    try:
        return _load_steps(system, path, track, settings, load_steps)
    except ConvergenceError as exc:
        raise track.keeping_path(exc) from None


def _load_steps(system, path, track: PathTrack, settings: NewtonSettings, load_steps: int) -> Results:
    """The load steps of :func:`solve_flexible` from the start of ``track`` to the load factor 1."""
    results = track.results
    s_done, steps = 0.0, LoadIncrements(load_steps, settings.max_bisections)
    while s_done < 1.0 - 1e-14:
        s_next = steps.target(s_done)
        try:
            q_new, history, tangent = flexible_newton(
                system, _predictor(results, s_next), s_next, path.free, path.linear, settings
            )
        except ConvergenceError as exc:
            if not steps.failed(s_done):
                raise ConvergenceError(
                    f"solve_static: no equilibrium at load factor {s_next:.6g} after "
                    f"{settings.max_bisections} bisections (last converged {s_done:.6g}): {exc.reason}",
                    exc.residual_history,
                    last_good=results,
                ) from None
            continue
        steps.converged(len(history) - 1)
        switched = track.add(q_new, s_next, history, tangent)
        if switched is not None:  # on the new branch: arc length from here, as load steps cannot follow it
            q1, s1, previous = switched
            return continue_path(track, q1, s1, previous, 0.5 * path.length(previous[0]), ArcLength(), settings)
        s_done = s_next
    log.info(
        "static solve: %d steps, %d Cholesky and %d LU factorizations",
        len(results.times) - 1,
        path.linear.n_cholesky,
        path.linear.n_lu,
    )
    return track.finish()


def _predictor(results: Results, s_next: float) -> np.ndarray:
    """Secant extrapolation along the load path from the last two converged steps (the last step alone at first)."""
    q = results.q[-1]
    if len(results.times) < 2:
        return q.copy()
    ds_old = results.times[-1] - results.times[-2]
    if abs(ds_old) < 1e-3 * abs(s_next - results.times[-1]):  # e.g. a critical point just before: no slope
        return q.copy()
    return q + (s_next - results.times[-1]) / ds_old * (q - results.q[-2])
