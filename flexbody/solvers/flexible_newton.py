"""Newton at a fixed load factor for flexible bodies held by Fix: the residual r(q, s) = k(q) − s f_ext(q) on the
free coordinates (the static form of [DE-105], d̈ = 0, prescribed coordinates X + s u eliminated), its Jacobian
(the body tangent minus the load stiffness of follower loads), the linear solves (CHOLMOD for symmetric positive
definite Jacobians, SuperLU otherwise), the line search, the check that every body is held and the static Results
a path records. Load stepping (:mod:`flexbody.solvers.flexible_statics`) and arc-length continuation
(:mod:`flexbody.solvers.arc_length`) build on it.
"""

from __future__ import annotations

import logging

import numpy as np
import scipy.sparse as sp

from ..errors import ConstraintError, ConvergenceError, FlexbodyError
from ..io.results import Results
from ..linalg.sparse_factor import NotPositiveDefiniteError, SparseFactor
from ..system.description import System

log = logging.getLogger(__name__)


class LinearSolver:
    """Solves K_ff Δ = b: CHOLMOD for SPD matrices (pattern analysed once), SuperLU otherwise."""

    def __init__(self, symmetric: bool):
        self.symmetric = symmetric
        self._factor = SparseFactor()

    @property
    def n_cholesky(self) -> int:
        return self._factor.n_cholesky

    @property
    def n_lu(self) -> int:
        return self._factor.n_lu

    def solve(self, K: sp.csr_matrix, b: np.ndarray) -> np.ndarray:
        if not self.symmetric:
            return self._factor.factor_lu(K).solve(b)
        A = sp.csc_matrix((K.data, K.indices, K.indptr), shape=K.shape)  # K symmetric: CSR(K) = CSC(K)
        try:
            return self._factor.factor(A, lu_fallback=False).solve(b)
        except NotPositiveDefiniteError:
            log.info("tangent not positive definite; using LU for this iteration")
            return self._factor.factor_lu(K).solve(b)


def static_results(system: System, q: np.ndarray) -> Results:
    """The static Results of a path that starts at q (load factor 0), with the histories of its steps:
    "newton_iterations" and "residual" (the last residual norm of each step [N])."""
    return Results(
        kind="static",
        times=np.zeros(1),
        q=q[None, :].copy(),
        slices={b.name: system.body_slice(b) for b in system.bodies},
        iterations=[0],
        residuals=[[]],
        reference=system.reference_coordinates(),
        system=system,
        histories={"newton_iterations": np.zeros(1), "residual": np.zeros(1)},
    )


def record_point(results: Results, s: float, q: np.ndarray, history: list, **histories) -> None:
    """Append the converged point (s, q) of a step, its residual ``history`` and further ``histories`` values."""
    results.times = np.append(results.times, s)
    results.q = np.vstack([results.q, q])
    results.iterations.append(len(history) - 1)
    results.residuals.append(history)
    values = {"newton_iterations": len(history) - 1, "residual": history[-1], **histories}
    for key, value in values.items():
        results.histories[key] = np.append(results.histories[key], value)


def _residual(system: System, q: np.ndarray, s: float, with_jacobian: bool):
    if with_jacobian:
        f_int, K = system.force_and_tangent(q)
    else:
        f_int, K = system.internal_force(q), None
    f_ext = s * system.external_force(q)
    scale = max(np.linalg.norm(f_ext), np.linalg.norm(f_int))
    return f_int - f_ext, K, scale


def flexible_newton(system, q, s, free, linear, settings):
    """Newton iterations at load factor s from q; returns (q, residual history, the tangent ∂r_f/∂q_f at q) or raises
    ConvergenceError."""
    q = q.copy()
    fixed, values = system.prescribed(s)
    q[fixed] = values
    history = []
    for _ in range(settings.max_iterations + 1):
        r, K, scale = _residual(system, q, s, with_jacobian=True)
        norm = np.linalg.norm(r[free])
        history.append(float(norm))
        if not np.isfinite(norm):
            raise ConvergenceError(f"non-finite residual at load factor {s:.6g}{non_finite_bodies(system, r)}", history)
        K_ff = K[free][:, free]
        if norm <= max(settings.tol * scale, roundoff_floor(K_ff, q[free])):
            inverted = system.inversion(q)
            if inverted:
                raise ConvergenceError(f"Newton reached a state at load factor {s:.6g} where {inverted}", history)
            return q, history, with_load_stiffness(system, K_ff, q, s, free)
        delta = linear.solve(with_load_stiffness(system, K_ff, q, s, free), -r[free])
        q = _line_search(system, q, s, free, delta, r[free], settings)
    raise ConvergenceError(
        f"Newton did not converge in {settings.max_iterations} iterations at load factor {s:.6g}", history
    )


def with_load_stiffness(system: System, K_ff: sp.csr_matrix, q: np.ndarray, s: float, free) -> sp.csr_matrix:
    """∂r_f/∂q_f: the free block K_ff of the tangent minus s times that of the follower loads' stiffness."""
    K_load = system.load_stiffness(q)
    return K_ff if K_load is None else (K_ff - s * K_load[free][:, free]).tocsr()


def roundoff_floor(K_ff: sp.csr_matrix, q_free: np.ndarray) -> float:
    """Residual norm reachable in floating point: 100 ε ‖ |K| |q| ‖ (the size of the cancelling terms)."""
    magnitude = sp.csr_matrix((np.abs(K_ff.data), K_ff.indices, K_ff.indptr), shape=K_ff.shape) @ np.abs(q_free)
    return 100.0 * np.finfo(float).eps * float(np.linalg.norm(magnitude))


def _line_search(system, q, s, free, delta, r0, settings):
    """Step length α along the Newton direction Δ.

    "safeguard": α = 1, halved (up to 8 times) while the residual is non-finite. "slope": in addition,
    |Δ·r(q + αΔ)| ≤ 0.8 |Δ·r(q)| is sought by secant steps on the slope when it changes sign
    (Crisfield), α clamped to [0.1 α, 1].
    """
    g0 = float(delta @ r0)
    lo, g_lo = 0.0, g0
    alpha = 1.0
    tries = 1 if settings.line_search == "none" else 9
    r = None
    for _ in range(tries):
        trial = q.copy()
        trial[free] += alpha * delta
        try:
            r, _, _ = _residual(system, trial, s, with_jacobian=False)
            g = float(delta @ r[free])
        except FlexbodyError:
            r, g = None, np.nan
        if not np.isfinite(g):
            alpha *= 0.5
            continue
        if settings.line_search != "slope" or abs(g) <= 0.8 * abs(g0) or (g * g0 > 0 and alpha == 1.0):
            return trial
        if g * g0 < 0:  # the slope changed sign between lo and alpha: secant (regula falsi)
            new = alpha - g * (alpha - lo) / (g - g_lo)
        else:
            lo, g_lo = alpha, g
            new = 2.0 * alpha
        alpha = float(np.clip(new, 0.1 * alpha, 1.0))
    if not np.isfinite(g):
        raise ConvergenceError(
            f"line search found no finite residual at load factor {s:.6g}{non_finite_bodies(system, r)}", []
        )
    return trial


def non_finite_bodies(system, r) -> str:
    """Where a residual ``r`` (n,) is not finite: the bodies and their materials, as text (empty without r)."""
    if r is None:
        return ""
    named = [
        f"body {body.name!r} ({body.material!r})"
        for body in system.bodies
        if not np.all(np.isfinite(r[system.body_slice(body)]))
    ]
    return f": the internal force of {', '.join(named)} is not finite there" if named else ""


def rigid_motions(body) -> np.ndarray:
    """The six rigid-body motions of ``body`` at its reference configuration (3N, 6): translations along x, y, z
    and rotations about axes along x, y, z through its centroid, scaled by its size (unit-order columns)."""
    X = np.asarray(body.mesh.points, dtype=float)
    d = X - X.mean(axis=0)
    size = max(float(np.ptp(X, axis=0).max()), 1e-300)
    R = np.zeros((len(X), 3, 6))
    for k in range(3):
        R[:, k, k] = 1.0
        R[:, :, 3 + k] = np.cross(np.eye(3)[k], d) / size
    return R.reshape(-1, 6)


def check_held(system, fixed: np.ndarray) -> None:
    """ConstraintError naming each body whose Fix constraints leave a rigid-body motion free (its stiffness is
    then singular and Newton cannot find an equilibrium: a free-floating body, or one held at one node)."""
    for body in system.bodies:
        s = system.body_slice(body)
        local = fixed[(fixed >= s.start) & (fixed < s.stop)] - s.start
        _, sigma, Vt = (
            np.linalg.svd(rigid_motions(body)[local], full_matrices=True)
            if local.size
            else (None, np.zeros(0), np.eye(6))
        )
        free = Vt[np.concatenate([sigma, np.zeros(6 - sigma.size)]) <= 1e-8 * max(1.0, sigma.max(initial=0.0))]
        if free.size:
            raise ConstraintError(
                f"solve_static: body {body.name!r} is not held: its Fix constraints leave "
                f"{len(free)} rigid-body motion(s) free ({'; '.join(map(_motion, free))}), so "
                f"its stiffness is singular; fix more nodes or components"
            )


def _motion(w: np.ndarray) -> str:
    """A rigid motion w = (translation, rotation) in words: its dominant part and direction."""
    t, r = w[:3], w[3:]
    part, axis = ("translation along", t) if np.linalg.norm(t) >= np.linalg.norm(r) else ("rotation about", r)
    axis = axis / np.linalg.norm(axis)
    axis = np.round(axis * np.sign(axis[np.argmax(np.abs(axis))]), 2) + 0.0  # largest component positive; no "-0.00"
    return f"{part} ({axis[0]:.2f}, {axis[1]:.2f}, {axis[2]:.2f})"
