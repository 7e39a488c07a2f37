"""Arc-length continuation of the static equilibrium path of flexible bodies, through limit points.

The equilibrium r(q, s) = k(q) − s f_ext(q) = 0 of :mod:`flexbody.solvers.flexible_statics` (prescribed
coordinates X + s u eliminated) is followed with the load factor s as an unknown, each step constrained to an
arc of length Δl (Riks 1979; Crisfield 1981, "A fast incremental/iterative solution procedure that handles
snap-through"):

    ‖Δq‖² + ψ² Δs² ‖f‖² = Δl²,    f = −∂r/∂s = f_ext − K_fp u   (on the free coordinates)

with ψ = 0 (cylindrical, the default) or ψ = 1 (spherical). Predictor: the tangent q_t = K⁻¹f, Δs = ±Δl /
√(q_tᵀq_t + ψ²fᵀf), the sign that keeps the path going forward (Δq_prevᵀq_t + ψ²Δs_prev fᵀf > 0: past a limit
point K is indefinite and q_t turns). Corrector: each iteration solves K [δq_r, δq_t] = [−r, f] with one factor
and takes δs from the quadratic ‖Δq + δq_r + δs δq_t‖² + ψ²(Δs + δs)²‖f‖² = Δl², the root whose increment makes
the smaller angle with the one before (Crisfield). A step that does not converge, meets no intersection with the
arc, an inverted element, or turns back against the step before (Δq_prevᵀΔq + ψ²Δs_prevΔs fᵀf < 0: the arc cut
the path behind a sharp turn) is retried on half the arc, down to the first arc / 2^max_bisections; after a step
Δl ← Δl √(target / iterations), between ½ and 2 times. The path stops at the load factor 1, landed on by Newton
at s = 1 from the secant of the step that crossed it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ..errors import ConvergenceError, FlexbodyError
from ..io.results import Results
from ..linalg.validation import check_setting
from ..system.description import System
from .flexible_statics import (
    LinearSolver,
    check_held,
    flexible_newton,
    non_finite_bodies,
    record_point,
    roundoff_floor,
    static_results,
    with_load_stiffness,
)
from .newton_settings import NewtonSettings

log = logging.getLogger(__name__)

__all__ = ["ArcLength", "follow_path"]


@dataclass(frozen=True, kw_only=True)
class ArcLength:
    """Settings of arc-length continuation (:func:`flexbody.solve_static` with ``path=ArcLength(...)``).

    Parameters
    ----------
    initial : float, optional
        First arc length Δl [m, over the free coordinates]; None: the length of the linear response to the
        first load increment 1/load_steps.
    psi : float
        Weight of the load factor in the arc, ψ in ‖Δq‖² + ψ²Δs²‖f‖² = Δl² (0: cylindrical, 1: spherical).
    target_iterations : int
        Newton iterations a step should take; Δl grows or shrinks by √(target / iterations), at most by 2 and
        at least by ½ per step.
    max_arc : float, optional
        Largest Δl [m], the first arc's included (None: 20 × the first).
    max_steps : int
        Most steps before the load factor 1 is reached (ConvergenceError beyond, with the path so far).
    """

    initial: float | None = None
    psi: float = 0.0
    target_iterations: int = 5
    max_arc: float | None = None
    max_steps: int = 1000

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


class _Path:
    """The equations of one system along the path: residual, tangent and load direction at (q, s)."""

    def __init__(self, system: System, settings: NewtonSettings):
        self.system, self.settings = system, settings
        self.fixed, values0 = system.prescribed(0.0)
        self.u = system.prescribed(1.0)[1] - values0  # prescribed motion per unit load factor
        self.values0 = values0
        self.free = np.setdiff1d(np.arange(system.n_dofs), self.fixed)
        self.linear = LinearSolver(symmetric=not system.has_follower_loads)
        self.load_scale = 0.0  # largest ‖s f_ext‖ met on the path

    def place(self, q: np.ndarray, s: float) -> np.ndarray:
        """q with the prescribed coordinates at load factor s."""
        q = q.copy()
        q[self.fixed] = self.values0 + s * self.u
        return q

    def terms(self, q: np.ndarray, s: float):
        """(r_f, K_ff, f, tolerance): residual, its tangent, the load direction −∂r_f/∂s on the free
        coordinates, and the residual norm that counts as converged."""
        system, free = self.system, self.free
        f_int, K = system.force_and_tangent(q)
        f_ext = system.external_force(q)
        r = f_int - s * f_ext
        K_ff = with_load_stiffness(system, K[free][:, free], q, s, free)
        f = f_ext[free] - (K[free][:, self.fixed] @ self.u if self.fixed.size else 0.0)
        self.load_scale = max(self.load_scale, abs(s) * float(np.linalg.norm(f_ext)))
        scale = max(self.load_scale, float(np.linalg.norm(f_int)), abs(s) * float(np.linalg.norm(f_ext)))
        tolerance = max(self.settings.tol * scale, roundoff_floor(K_ff, q[free]))
        return r[free], K_ff, f, tolerance


def follow_path(
    system: System,
    settings: ArcLength,
    *,
    load_steps: int = 1,
    newton: NewtonSettings | None = None,
    q_start: ArrayLike | None = None,
) -> Results:
    """The equilibrium path of ``system`` (flexible bodies held by Fix, loads scaled by s) from s = 0 to s = 1 by
    arc-length continuation, through limit points of load and displacement (snap-through, snap-back).

    Returns
    -------
    Results
        ``kind="static"``; ``times`` the load factors of the converged points (s = 0 first; they may fall and
        rise along the path), ``q`` per point, ``iterations`` and ``residuals`` (Newton residual norms) per
        step; ``histories``: "arc_length" Δl of each step [m], "newton_iterations", "residual" (the last
        residual norm of each step [N]).

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
    path = _Path(system, newton)
    check_held(system, path.fixed)
    results = static_results(system, q)
    results.histories["arc_length"] = np.zeros(1)
    q, s = path.place(q, 0.0), 0.0
    arc = _first_arc(path, q, settings, load_steps)
    max_arc = settings.max_arc or 20.0 * arc
    arc = min(arc, max_arc)  # the first arc is bounded too
    min_arc = arc / 2.0**newton.max_bisections
    previous = None
    while True:
        if len(results.times) - 1 >= settings.max_steps:
            raise ConvergenceError(
                f"solve_static: arc-length path reached max_steps = {settings.max_steps} at load "
                f"factor {s:.6g} before 1",
                [],
                last_good=results,
            )
        try:
            q_new, s_new, history, step = _arc_step(path, q, s, arc, previous, settings, newton)
            if s < 1.0 < s_new:  # crossed the target: land on s = 1
                secant = q + (1.0 - s) / (s_new - s) * (q_new - q)
                q_new, history = flexible_newton(system, secant, 1.0, path.free, path.linear, newton)
                s_new = 1.0
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
        record_point(results, s_new, q_new, history, arc_length=arc)
        if s_new >= 1.0:
            break
        iterations = max(len(history) - 1, 1)
        arc = min(max_arc, arc * float(np.clip(np.sqrt(settings.target_iterations / iterations), 0.5, 2.0)))
        q, s, previous = q_new, s_new, step
    results.metadata.update(solver=f"arc length (Crisfield, ψ = {settings.psi:g})", steps=len(results.times) - 1)
    return results


def _first_arc(path: _Path, q: np.ndarray, settings: ArcLength, load_steps: int) -> float:
    if settings.initial is not None:
        return float(settings.initial)
    _, K, f, _ = path.terms(q, 0.0)
    q_t = path.linear.solve(K, f)
    length = float(np.sqrt(q_t @ q_t + settings.psi**2 * (f @ f))) / load_steps
    if not np.isfinite(length) or length <= 0.0:
        raise FlexbodyError(
            "solve_static: the arc-length path needs a load or a prescribed motion (the linear "
            "response to the first load increment is zero)"
        )
    return length


def _arc_step(path: _Path, q, s, arc, previous, settings: ArcLength, newton: NewtonSettings):
    """One step on the arc of length ``arc`` from the converged (q, s): (q, s, residual history, (Δq, Δs)).
    ``previous`` is the step before, (Δq, Δs), or None; ConvergenceError when the step fails."""
    free, psi2 = path.free, settings.psi**2
    _, K, f, _ = path.terms(q, s)
    q_t = path.linear.solve(K, f)
    ff = float(f @ f)
    sign = 1.0
    if previous is not None:
        sign = 1.0 if float(previous[0] @ q_t) + psi2 * previous[1] * ff >= 0.0 else -1.0
    ds = sign * arc / np.sqrt(q_t @ q_t + psi2 * ff)
    dq = ds * q_t
    history = []
    for _ in range(newton.max_iterations + 1):
        trial = path.place(q, s + ds)
        trial[free] += dq
        r, K, f, tolerance = path.terms(trial, s + ds)
        norm = float(np.linalg.norm(r))
        history.append(norm)
        if not np.isfinite(norm):
            full = np.zeros(path.system.n_dofs)
            full[free] = r
            raise ConvergenceError(
                f"non-finite residual at load factor {s + ds:.6g}{non_finite_bodies(path.system, full)}", history
            )
        if norm <= tolerance:
            inverted = path.system.inversion(trial)
            if inverted:
                raise ConvergenceError(f"the step reached a state where {inverted}", history)
            if previous is not None and float(previous[0] @ dq) + psi2 * previous[1] * ds * ff < 0.0:
                raise ConvergenceError(
                    "the step turned back along the path (the arc is longer than the path's turn)", history
                )
            return trial, s + ds, history, (dq, ds)
        solved = path.linear.solve(K, np.column_stack([-r, f]))
        dq, ds = _on_arc(dq, ds, solved[:, 0], solved[:, 1], arc, psi2 * float(f @ f))
    raise ConvergenceError(
        f"no convergence in {newton.max_iterations} iterations on the arc from load factor {s:.6g}", history
    )


def _on_arc(dq, ds, dq_r, dq_t, arc, psi2_ff):
    """(Δq, Δs) after the correction δq = δq_r + δs δq_t with δs on the arc: the root of
    a δs² + b δs + c = 0 whose new increment turns least from ``dq`` (Crisfield 1981)."""
    w = dq + dq_r
    a = float(dq_t @ dq_t) + psi2_ff
    b = 2.0 * (float(w @ dq_t) + psi2_ff * ds)
    c = float(w @ w) + psi2_ff * ds * ds - arc * arc
    disc = b * b - 4.0 * a * c
    if disc < 0.0 or a <= 0.0:
        raise ConvergenceError("the corrector does not meet the arc (complex roots)", [])
    root = np.sqrt(disc)
    candidates = [(-b + root) / (2.0 * a), (-b - root) / (2.0 * a)]
    turns = [float((w + x * dq_t) @ dq) + psi2_ff * (ds + x) * ds for x in candidates]
    x = candidates[int(np.argmax(turns))]
    return w + x * dq_t, ds + x
