"""Arc-length continuation of the static equilibrium path of flexible bodies, through limit points.

The equilibrium r(q, s) = k(q) − s f_ext(q) = 0 of :mod:`flexbody.solvers.flexible_statics` (prescribed
coordinates X + s u eliminated) is followed with the load factor s as an unknown, each step constrained to an
arc of length Δl (Riks 1979; Crisfield 1981, "A fast incremental/iterative solution procedure that handles
snap-through"):

    ‖Δq‖²_W + ψ² Δs² ‖f‖² = Δl²,    f = −∂r/∂s = f_ext − K_fp u   (on the free coordinates)

with ψ = 0 (cylindrical, the default) or ψ = 1 (spherical), and ‖Δq‖_W a length: the root-mean-square
displacement of the free nodes, or of named nodes (:mod:`flexbody.solvers.arc_measure`). The step itself
(predictor along the tangent, Crisfield's corrector on the arc) is :func:`flexbody.solvers.equilibrium_path.arc_step`.
A step that does not converge, meets no intersection with the arc, an inverted element, or turns back against
the step before (the arc cut the path behind a sharp turn) is retried on half the arc, down to the first arc /
2^max_bisections; after a step Δl ← Δl √(target / iterations), between ½ and 2 times, at most ``max_arc``
(default MAX_ARC_SHARE × the system's size, so a path of large displacements takes tens of arcs whatever its
first, stiff response).

Where the path crosses a load factor of ``at`` (either way), Newton at that load factor from the secant of the
crossing step lands on it and the point is recorded; the path ends at the load factor 1, landed on alike. It also
ends, with a warning and the path so far, when its load factor falls below ``min_load`` or it returns to its
start (a path that never comes back to the target load). Every point carries its stability
(:mod:`flexbody.solvers.path_track`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ..errors import ConvergenceError, FlexbodyError
from ..io.results import Results
from ..linalg.validation import check_setting
from ..system.description import System
from .equilibrium_path import EquilibriumPath, arc_step
from .flexible_newton import check_held, flexible_newton
from .newton_settings import NewtonSettings
from .path_stability import BranchSwitch, system_size
from .path_track import PathTrack

log = logging.getLogger(__name__)

__all__ = ["ArcLength", "follow_path", "continue_path"]

MAX_ARC_SHARE = 0.02
"""Default largest arc: this share of the system's size (its bodies' largest extent) [-]."""


@dataclass(frozen=True, kw_only=True)
class ArcLength:
    """Settings of arc-length continuation (:func:`flexbody.solve_static` with ``path=ArcLength(...)``).

    Parameters
    ----------
    initial : float, optional
        First arc length Δl [m]; None: the length of the linear response to the first load increment
        1/load_steps (at most ``max_arc``).
    psi : float
        Weight of the load factor in the arc, ψ in ‖Δq‖²_W + ψ²Δs²‖f‖² = Δl² (0: cylindrical, 1: spherical).
    target_iterations : int
        Newton iterations a step should take; Δl grows or shrinks by √(target / iterations), at most by 2 and
        at least by ½ per step.
    max_arc : float, optional
        Largest Δl [m], the first arc's included (None: MAX_ARC_SHARE × the system's size).
    max_steps : int
        Most steps before the load factor 1 is reached (ConvergenceError beyond, with the path so far).
    nodes : (body, which), optional
        The nodes whose displacement measures an arc: a body (or its name) and a node-set or face-set name or
        node indices; an arc is then the root-mean-square displacement of those nodes (of one node: its
        displacement). None: of every node with a free coordinate.
    at : sequence of float
        Load factors at which the path records a point, each time it crosses one (either way).
    max_load_step : float, optional
        Largest change of the load factor in one arc: a step that changes it more is retried on an arc shortened
        in proportion (a path resolved in load as well as in displacement).
    min_load : float, optional
        The path ends (warning, the path so far returned) when its load factor falls below this (e.g. −1: it went
        back through zero load as far as the target lies above it). None: no bound; a path also ends when it
        returns to its start.
    """

    initial: float | None = None
    psi: float = 0.0
    target_iterations: int = 5
    max_arc: float | None = None
    max_steps: int = 1000
    nodes: tuple | None = None
    at: Sequence[float] = ()
    max_load_step: float | None = None
    min_load: float | None = None

    def __post_init__(self):
        if self.initial is not None:
            check_setting("ArcLength", "initial", self.initial)
        if self.max_arc is not None:
            check_setting("ArcLength", "max_arc", self.max_arc)
        if self.initial is not None and self.max_arc is not None and self.initial > self.max_arc:
            raise FlexbodyError(
                f"ArcLength: the first arc (initial = {self.initial!r}) is longer than max_arc = {self.max_arc!r}"
            )
        check_setting("ArcLength", "psi", self.psi, strict=False)
        check_setting("ArcLength", "target_iterations", self.target_iterations, low=1, strict=False, integer=True)
        check_setting("ArcLength", "max_steps", self.max_steps, low=1, strict=False, integer=True)
        if self.nodes is not None and (not isinstance(self.nodes, tuple) or len(self.nodes) != 2):
            raise FlexbodyError(f"ArcLength: nodes must be (body, node set or indices), got {self.nodes!r}")
        levels = np.asarray(self.at, dtype=float)
        if levels.ndim != 1 or not np.all(np.isfinite(levels)):
            raise FlexbodyError(f"ArcLength: at must be a sequence of finite load factors, got {self.at!r}")
        if self.max_load_step is not None:
            check_setting("ArcLength", "max_load_step", self.max_load_step)
        if self.min_load is not None and (not np.isfinite(self.min_load) or self.min_load >= 0.0):
            raise FlexbodyError(f"ArcLength: min_load must be a negative load factor, got {self.min_load!r}")


def follow_path(
    system: System,
    settings: ArcLength,
    *,
    load_steps: int = 1,
    newton: NewtonSettings | None = None,
    q_start: ArrayLike | None = None,
    branch: BranchSwitch | None = None,
) -> Results:
    """The equilibrium path of ``system`` (flexible bodies held by Fix, loads scaled by s) from s = 0 to s = 1 by
    arc-length continuation, through limit points of load and displacement (snap-through, snap-back), and at its
    first bifurcation onto the branch ``branch`` asks for.

    Returns
    -------
    Results
        ``kind="static"``; ``times`` the load factors of the converged points (s = 0 first; they may fall and
        rise along the path), ``q`` per point, ``iterations`` and ``residuals`` (Newton residual norms) per
        step; ``histories``: "arc_length" Δl of each step [m], "newton_iterations", "residual" (the last
        residual norm of each step [N]), "negative_eigenvalues" and "point_kind" (stability); ``metadata``:
        "critical_points", "stable", "at_points" (the points landed on the load factors of ``settings.at``),
        "ended" (why the path ended: "target", "min_load" or "start").

    Raises
    ------
    ConvergenceError
        ``max_steps`` reached before s = 1, or a step that fails on every arc down to the first one halved
        ``newton.max_bisections`` times; ``last_good`` holds the path so far.
    """
    newton = newton or NewtonSettings()
    q = system.reference_coordinates() if q_start is None else np.array(q_start, dtype=float)
    if q.shape != (system.n_dofs,) or not np.all(np.isfinite(q)):
        raise FlexbodyError(f"solve_static: q_start must be finite with shape ({system.n_dofs},)")
    path = EquilibriumPath(system, newton, settings.nodes)
    check_held(system, path.fixed)
    q = path.place(q, 0.0)
    track = PathTrack(system, path, newton, q, branch, extra=("arc_length",))
    return continue_path(track, q, 0.0, None, _first_arc(path, q, settings, load_steps), settings, newton)


def continue_path(
    track: PathTrack, q: np.ndarray, s: float, previous, arc: float, settings: ArcLength, newton: NewtonSettings
) -> Results:
    """Follow the path of ``track`` from its converged point (q, s) on arcs from ``arc`` to the load factor 1;
    ``previous`` is the step that led there, (Δq_free, Δs), or None. Returns ``track``'s finished Results; a
    ConvergenceError carries the path so far in ``last_good``."""
    try:
        return _follow(track, q, s, previous, arc, settings, newton)
    except ConvergenceError as exc:
        raise track.keeping_path(exc) from None


def _follow(track: PathTrack, q, s, previous, arc: float, settings: ArcLength, newton: NewtonSettings) -> Results:
    path, results = track.path, track.results
    max_arc = settings.max_arc or MAX_ARC_SHARE * system_size(path.system)
    arc = min(arc, max_arc)
    min_arc, farthest = arc / 2.0**newton.max_bisections, 0.0
    levels = sorted(set(np.asarray(settings.at, dtype=float).tolist()) | {1.0})
    results.metadata.update(at_points=[], ended=None)
    steps = 0  # arc-length steps taken (points landed on levels and critical points are not steps)
    while results.metadata["ended"] is None:
        if steps >= settings.max_steps:
            raise ConvergenceError(
                f"solve_static: arc-length path reached max_steps = {settings.max_steps} at load "
                f"factor {s:.6g} before 1",
                [],
                last_good=results,
            )
        try:
            q_new, s_new, history, step, tangent = arc_step(path, q, s, arc, previous, settings.psi, newton)
            if track.falls_back(q, q_new):
                raise ConvergenceError("the step fell back towards the branch the path left", history)
        except ConvergenceError as exc:
            if 0.5 * arc < min_arc:
                raise ConvergenceError(
                    f"solve_static: arc-length step from load factor {s:.6g} failed on arcs "
                    f"down to {arc:.3e} m ({newton.max_bisections} halvings below the first): "
                    f"{exc.reason}",
                    exc.residual_history,
                    last_good=results,
                ) from None
            arc *= 0.5
            log.info("arc-length step from s = %.6g failed (%s); arc halved to %.3e", s, exc.reason, arc)
            continue
        if settings.max_load_step is not None and abs(s_new - s) > settings.max_load_step:
            arc *= 0.9 * settings.max_load_step / abs(s_new - s)  # the load changed too much: a shorter arc
            continue
        steps += 1
        switched = _land_on_levels(track, q, s, q_new, s_new, levels, newton)
        if track.results.metadata["ended"] is not None:
            break
        if switched is None:
            switched = track.add(q_new, s_new, history, tangent, arc_length=arc)
        if switched is not None:  # the first arc on the new branch: half its distance from the branch left
            q, s, previous = switched
            arc = min(max_arc, max(0.5 * path.length(previous[0]), min_arc))
            continue
        iterations = max(len(history) - 1, 1)
        arc = min(max_arc, arc * float(np.clip(np.sqrt(settings.target_iterations / iterations), 0.5, 2.0)))
        q, s, previous = q_new, s_new, step
        farthest = max(farthest, path.length((q - results.q[0])[path.free]))
        _check_end(track, q, s, farthest, arc, settings)
    results.metadata.update(solver=f"arc length (Crisfield, ψ = {settings.psi:g})", steps=steps)
    return track.finish()


def _land_on_levels(track: PathTrack, q, s, q_new, s_new, levels, newton) -> tuple | None:
    """Record the points at the levels the step (q, s) → (q_new, s_new) crossed, in order along it; the path ends
    (``metadata["ended"] = "target"``) at the level 1. Returns the start of a new branch when the path switched
    branch before one of them (:meth:`PathTrack.add`), else None."""
    crossed = [x for x in levels if min(s, s_new) < x <= max(s, s_new) and x != s]
    for level in sorted(crossed, reverse=bool(s_new < s)):
        secant = q + (level - s) / (s_new - s) * (q_new - q)
        try:
            q_level, history, tangent = flexible_newton(
                track.path.system, secant, level, track.path.free, track.path.linear, newton
            )
        except ConvergenceError as exc:
            if level == 1.0:
                raise
            log.warning("solve_static: no point landed on the load factor %.6g (%s)", level, exc.reason)
            continue
        switched = track.add(q_level, level, history, tangent)
        if switched is not None:
            return switched
        track.results.metadata["at_points"].append(len(track.results.times) - 1)
        if level == 1.0:
            track.results.metadata["ended"] = "target"
            return None
    return None


def _check_end(track: PathTrack, q, s, farthest, arc, settings: ArcLength) -> None:
    """End the path (with a warning) below ``min_load``, or back at its start (within an arc of it, after it went
    farther than four arcs away)."""
    meta = track.results.metadata
    if settings.min_load is not None and s < settings.min_load:
        meta["ended"] = "min_load"
        log.warning(
            "solve_static: the arc-length path fell to load factor %.6g, below min_load = %g, without reaching 1; "
            "it ends there",
            s,
            settings.min_load,
        )
    elif farthest > 4.0 * arc and track.path.length((q - track.results.q[0])[track.path.free]) < arc:
        meta["ended"] = "start"
        log.warning("solve_static: the arc-length path returned to its start without reaching the load factor 1")


def _first_arc(path: EquilibriumPath, q: np.ndarray, settings: ArcLength, load_steps: int) -> float:
    if settings.initial is not None:
        return float(settings.initial)
    _, K, f, _ = path.terms(q, 0.0)
    q_t = path.linear.solve(K, f)
    length = float(np.sqrt(path.dot(q_t, q_t) + settings.psi**2 * (f @ f))) / load_steps
    if not np.isfinite(length) or length <= 0.0:
        raise FlexbodyError(
            "solve_static: the arc-length path needs a load or a prescribed motion (the linear "
            "response to the first load increment is zero)"
        )
    return length
