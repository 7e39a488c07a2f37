"""One system's static equilibrium path r(q, s) = k(q) − s f_ext(q) = 0 with the load factor s as an unknown:
its equations at a point (:class:`EquilibriumPath`), and one step of given length along it (:func:`arc_step`),
the Riks–Crisfield arc-length step of :mod:`flexbody.solvers.arc_length` that path following, the location
of critical points and branch switching (:mod:`flexbody.solvers.path_stability`) share.

The arc of a step is ‖Δq‖²_W + ψ² Δs² ‖f‖² = Δl², ‖Δq‖²_W = Σ wᵢ Δqᵢ² over the free coordinates with the weights of
the arc's measure (:mod:`flexbody.solvers.arc_measure`: so that Δl is a length), f = −∂r/∂s = f_ext − K_fp u on the
free coordinates (Crisfield 1981). Predictor: the tangent q_t = K⁻¹f, Δs = ±Δl / √(q_tᵀq_t + ψ²fᵀf), the sign that
keeps the path going forward; corrector: K [δq_r, δq_t] = [−r, f] with one factor and δs from the arc's quadratic,
the root whose increment turns least from the one before.
"""

from __future__ import annotations

import numpy as np

from ..errors import ConvergenceError
from ..system.description import System
from .arc_measure import arc_weights
from .flexible_newton import LinearSolver, non_finite_bodies, roundoff_floor, with_load_stiffness
from .newton_settings import NewtonSettings

__all__ = ["EquilibriumPath", "arc_step"]


class EquilibriumPath:
    """The equations of one system along the path: residual, tangent and load direction at (q, s)."""

    def __init__(self, system: System, settings: NewtonSettings, nodes: tuple | None = None):
        self.system, self.settings = system, settings
        self.fixed, values0 = system.prescribed(0.0)
        self.u = system.prescribed(1.0)[1] - values0  # prescribed motion per unit load factor
        self.values0 = values0
        self.free = np.setdiff1d(np.arange(system.n_dofs), self.fixed)
        self.linear = LinearSolver(symmetric=not system.has_follower_loads)
        self.load_scale = 0.0  # largest ‖s f_ext‖ met on the path
        self.weights = arc_weights(system, self.free, nodes)  # the arc's measure: all free nodes, or ``nodes``

    def dot(self, a: np.ndarray, b: np.ndarray) -> float:
        """aᵀ W b of two increments of the free coordinates in the arc's measure."""
        return float(a @ (self.weights * b))

    def length(self, dq: np.ndarray) -> float:
        """‖Δq‖_W of an increment of the free coordinates [m]."""
        return float(np.sqrt(self.dot(dq, dq)))

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


def arc_step(path: EquilibriumPath, q, s, arc, previous, psi: float, newton: NewtonSettings):
    """One step on the arc of length ``arc`` from the converged (q, s): (q, s, residual history, (Δq, Δs), the
    tangent K_ff at the new point).
    ``previous`` is the step before, (Δq, Δs), or None; ConvergenceError when the step fails."""
    free, psi2 = path.free, psi**2
    _, K, f, _ = path.terms(q, s)
    q_t = path.linear.solve(K, f)
    ff = float(f @ f)
    sign = 1.0
    if previous is not None:
        sign = 1.0 if path.dot(previous[0], q_t) + psi2 * previous[1] * ff >= 0.0 else -1.0
    ds = sign * arc / np.sqrt(path.dot(q_t, q_t) + psi2 * ff)
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
            if previous is not None and path.dot(previous[0], dq) + psi2 * previous[1] * ds * ff < 0.0:
                raise ConvergenceError(
                    "the step turned back along the path (the arc is longer than the path's turn)", history
                )
            return trial, s + ds, history, (dq, ds), K
        solved = path.linear.solve(K, np.column_stack([-r, f]))
        dq, ds = _on_arc(path, dq, ds, solved[:, 0], solved[:, 1], arc, psi2 * float(f @ f))
    raise ConvergenceError(
        f"no convergence in {newton.max_iterations} iterations on the arc from load factor {s:.6g}", history
    )


def _on_arc(path: EquilibriumPath, dq, ds, dq_r, dq_t, arc, psi2_ff):
    """(Δq, Δs) after the correction δq = δq_r + δs δq_t with δs on the arc: the root of
    a δs² + b δs + c = 0 whose new increment turns least from ``dq`` (Crisfield 1981)."""
    w = dq + dq_r
    a = path.dot(dq_t, dq_t) + psi2_ff
    b = 2.0 * (path.dot(w, dq_t) + psi2_ff * ds)
    c = path.dot(w, w) + psi2_ff * ds * ds - arc * arc
    disc = b * b - 4.0 * a * c
    if disc < 0.0 or a <= 0.0:
        raise ConvergenceError("the corrector does not meet the arc (complex roots)", [])
    root = np.sqrt(disc)
    candidates = [(-b + root) / (2.0 * a), (-b - root) / (2.0 * a)]
    turns = [path.dot(w + x * dq_t, dq) + psi2_ff * (ds + x) * ds for x in candidates]
    x = candidates[int(np.argmax(turns))]
    return w + x * dq_t, ds + x
