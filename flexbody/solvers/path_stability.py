"""Stability along the static path of flexible bodies: the inertia of the tangent at every converged point, the
critical points between points whose inertia differs, and the switch to the branch that leaves a bifurcation.

An equilibrium of a conservative system is stable when its tangent K_ff = ∂r_f/∂q_f is positive definite; the
number of its negative eigenvalues (:func:`flexbody.linalg.inertia.negative_eigenvalues`, Sylvester's law of
inertia on an LDLᵀ factor) is counted at every converged point. Where the count changes between two points, an
eigenvalue crossed zero: a critical point lies between them (Wriggers, Nonlinear Finite Element Methods, 2008,
§7.4). It is located on the path by a safeguarded secant (Illinois) on the crossing eigenvalue, each trial a
point of the path at a fraction θ of the chord's length from the first point (the arc-length step of
:mod:`flexbody.solvers.equilibrium_path`), bracketed by the counts. At the critical point K_ff φ = 0; the point is

- a **limit point** when the load direction is not orthogonal to the critical modes, φᵀf ≠ 0 (the load factor
  has an extremum there: snap-through);
- a **bifurcation** when φᵀf = 0, ‖Vᵀf‖ ≤ BIFURCATION_SHARE ‖f‖ for the orthonormal critical modes V: another
  branch crosses the path (buckling). The modes are taken at the bracket's end nearer the crossing; at the
  symmetric bifurcations measured (columns, bars) the share is below 1e-7, at limit points (roofs, bars) above
  0.05.

Its load factor and coordinates are interpolated between the bracket's ends to the crossing eigenvalue's root
(a Newton solve at a nearly singular tangent would leave the mode's amplitude to round-off).

Branch switching (:class:`BranchSwitch`) leaves a bifurcation along the critical mode on the side the user asks:
the first point of the new branch solves r(q, s) = 0 with the mode's amplitude held, φ̂ᵀ(q − q_c) = η, by Newton
on the bordered system [[K_ff, −f], [φ̂ᵀ, 0]] (well posed at the bifurcation, where K_ff alone is singular);
arc-length steps go on from there. Follower loads make the tangent unsymmetric: static stability then says nothing
(a non-conservative system loses stability by flutter, Ziegler 1968), and the points are marked not assessed.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ..errors import ConvergenceError, FlexbodyError
from ..linalg.inertia import eigenpairs_near_zero, negative_eigenvalues, zero_tolerance
from ..linalg.sparse_factor import SparseFactor
from ..linalg.validation import check_setting
from .equilibrium_path import EquilibriumPath, arc_step
from .newton_settings import NewtonSettings

log = logging.getLogger(__name__)

__all__ = ["BranchSwitch", "CriticalPoint", "PathStability", "POINT_KINDS", "point_kind", "system_size"]

POINT_KINDS = {"not assessed": -1, "stable": 0, "unstable": 1, "limit point": 2, "bifurcation": 3}
"""The codes of the history "point_kind" of a static path."""

SWITCH_AMPLITUDE = 1e-3
"""Default amplitude of the first point on a new branch: this share of the system's size [-]."""


def point_kind(count: int) -> int:
    """The code of a solved point of a path from its tangent's count of negative eigenvalues (−1: not assessed)."""
    return POINT_KINDS["not assessed"] if count < 0 else POINT_KINDS["stable" if count == 0 else "unstable"]


BIFURCATION_SHARE = 1e-3
"""A critical point is a bifurcation when the load's share in its critical modes, ‖Vᵀf‖/‖f‖, is at most this."""

MAX_CRITICAL_POINTS = 16
"""Most critical points located between two points of a path."""

LOCATE_WIDTH = 1e-3
"""A critical point is located when its bracket is this share of the chord between its neighbours."""


@dataclass(frozen=True, kw_only=True)
class BranchSwitch:
    """Leave the path at its first bifurcation for the branch on the side of ``toward``
    (:func:`flexbody.solve_static` with ``branch=BranchSwitch(...)``).

    Parameters
    ----------
    toward : array_like (3,) or (n_dofs,)
        The side of the new branch: a direction in space (3,) toward which the nodes should move on average (e.g.
        (0, 1, 0): the column buckles toward +y), or a displacement pattern of all coordinates (n_dofs,). Among the
        critical modes (several when the bifurcation is multiple, e.g. a square column's two) the combination that
        projects most on it is taken, signed to move toward it.
    amplitude : float, optional
        The largest nodal displacement along the mode at the first point of the new branch [m]; default
        SWITCH_AMPLITUDE × the system's size.
    """

    toward: ArrayLike
    amplitude: float | None = None

    def __post_init__(self):
        toward = np.asarray(self.toward, dtype=float)
        if toward.ndim != 1 or not np.all(np.isfinite(toward)) or not np.any(toward):
            raise FlexbodyError(
                f"BranchSwitch: toward must be a finite, non-zero direction (3,) or displacement pattern (n_dofs,), "
                f"got {self.toward!r}"
            )
        if self.amplitude is not None:
            check_setting("BranchSwitch", "amplitude", self.amplitude)


@dataclass(frozen=True)
class CriticalPoint:
    """A critical point of a static path: its kind ("limit point" or "bifurcation"), load factor, coordinates q
    (n_dofs,) [m], critical modes (n_dofs, k) (zero on held coordinates, largest component 1), the negative
    eigenvalues of the tangent on the path before and after it, and the residual norm there [N]."""

    kind: str
    load_factor: float
    q: np.ndarray
    modes: np.ndarray
    negative_before: int
    negative_after: int
    residual: float

    def summary(self) -> dict:
        """The point as JSON-able metadata (its q left out: it is a point of the path)."""
        return {
            "kind": self.kind,
            "load_factor": self.load_factor,
            "multiplicity": int(self.modes.shape[1]),
            "negative_before": self.negative_before,
            "negative_after": self.negative_after,
            "modes": self.modes,
        }


class PathStability:
    """The stability of the points of one path: :meth:`count` at a converged point, :meth:`locate` between two
    points whose counts differ, :meth:`switch` to the new branch at a bifurcation."""

    def __init__(self, path: EquilibriumPath, newton: NewtonSettings):
        self.path, self.newton = path, newton
        self.assessed = path.linear.symmetric  # follower loads: static stability says nothing

    def count(self, q: np.ndarray, s: float, tangent: sp.spmatrix | None = None) -> int:
        """Negative eigenvalues of the tangent at the converged (q, s) (``tangent``, K_ff there, when the solve that
        converged has it); −1 when not assessed."""
        if not self.assessed:
            return -1
        return negative_eigenvalues(self.path.terms(q, s)[1] if tangent is None else tangent)

    def locate(self, a: tuple, b: tuple) -> list[CriticalPoint]:
        """The critical points between the converged points a = (q, s, count) and b (counts differ), in order
        along the path: the first crossing after a is located, then the next after it, until the counts agree.
        Every trial is a point of the path at a share θ of the chord's length from a (a regular point: a step
        from a point next to a critical one could slip onto the other branch), or back from b."""
        (q_a, s_a, n_a), (q_b, s_b, n_b) = a, b
        chord = ((q_b - q_a)[self.path.free], s_b - s_a)
        length = self.path.length(chord[0])
        direction = n_b > n_a  # the count's overall sense, for a bracket end without a crossing eigenvalue

        def crossing(q, s, count_before):
            """(count, the crossing eigenvalue: the one nearest zero on the side the count says)."""
            K = self.path.terms(q, s)[1]
            count = negative_eigenvalues(K)
            values = eigenpairs_near_zero(K, abs(n_b - n_a) + 2)[0] + zero_tolerance(K)  # as counted
            falling = (count > count_before) if count != count_before else direction
            past = count != count_before
            side = values[values <= 0.0] if falling == past else values[values > 0.0]
            if not side.size:
                return count, None
            return count, (side.max() if falling == past else side.min())

        found: list[CriticalPoint] = []
        start = [0.0, None, n_a, q_a, s_a]  # [θ, crossing eigenvalue, count, q, s]
        while start[2] != n_b and len(found) < MAX_CRITICAL_POINTS:
            before = start[2]
            lo = [start[0], crossing(start[3], start[4], before)[1], before, start[3], start[4]]
            hi = [1.0, *reversed(crossing(q_b, s_b, before)), q_b, s_b]
            kept = 0
            for _ in range(60):
                if hi[0] - lo[0] <= LOCATE_WIDTH:
                    break
                theta = _secant(lo[:2], hi[:2])
                trial = self._on_path(q_a, s_a, q_b, s_b, theta, length, chord)
                if trial is None:
                    log.info("critical point between load factors %.6g and %.6g: a trial failed", lo[4], hi[4])
                    break
                count, near = crossing(trial[0], trial[1], before)
                side, other = (hi, lo) if count != before else (lo, hi)
                side[:] = [theta, near, count, *trial]
                kept = kept + 1 if side is hi else kept - 1  # Illinois: halve the end kept twice running
                if abs(kept) >= 2 and other[1] is not None:
                    other[1] *= 0.5
                    kept = 0
            found.append(self._critical((lo[1], lo[3], lo[4]), (hi[1], hi[3], hi[4]), before, hi[2]))
            start = hi
        return found

    def _on_path(self, q_a, s_a, q_b, s_b, theta, length, chord):
        """The path's point at θ of the chord from a (or back from b), or None when neither step converges."""
        backward = (-chord[0], -chord[1])
        for q, s, arc, previous in ((q_a, s_a, theta * length, chord), (q_b, s_b, (1.0 - theta) * length, backward)):
            try:
                return arc_step(self.path, q, s, arc, previous, 0.0, self.newton)[:2]
            except ConvergenceError:
                continue
        return None

    def _critical(self, lo: tuple, hi: tuple, n_a: int, n_b: int) -> CriticalPoint:
        """The critical point in the bracket lo, hi = (crossing eigenvalue, q, s): q and s interpolated to the root of
        the crossing eigenvalue (Newton at a nearly singular tangent leaves the mode's amplitude to round-off, so
        the point is not solved for), the modes of the bracket's end nearer the root, and its kind from the load's
        share in them."""
        (g0, q0, s0), (g1, q1, s1) = lo, hi
        w = 0.5 if g0 is None or g1 is None or g0 == g1 else float(np.clip(g0 / (g0 - g1), 0.0, 1.0))
        q, s = (1.0 - w) * q0 + w * q1, (1.0 - w) * s0 + w * s1
        near_q, near_s = (q0, s0) if w <= 0.5 else (q1, s1)
        _, K, f, _ = self.path.terms(near_q, near_s)
        k = abs(n_b - n_a)
        modes = eigenpairs_near_zero(K, k)[1]
        share = float(np.linalg.norm(modes.T @ f)) / max(float(np.linalg.norm(f)), np.finfo(float).tiny)
        full = np.zeros((self.path.system.n_dofs, k))
        full[self.path.free] = modes / np.abs(modes).max(axis=0)
        kind = "bifurcation" if share <= BIFURCATION_SHARE else "limit point"
        log.info("%s at load factor %.6g (load share of the critical modes %.2e)", kind, s, share)
        try:  # an interpolated state: its residual is a measure of the interpolation, nan where it has none
            residual = float(np.linalg.norm(self.path.terms(q, s)[0]))
        except ConvergenceError:
            residual = float("nan")
        return CriticalPoint(kind, float(s), q, full, n_a, n_b, residual)

    def switch(self, critical: CriticalPoint, branch: BranchSwitch) -> tuple[np.ndarray, float, list, np.ndarray]:
        """The first point (q, s, residual history) of the branch that leaves the bifurcation ``critical`` on the
        side of ``branch.toward``, r = 0 with the amplitude along the chosen mode held, and that unit mode (free
        coordinates)."""
        path, free = self.path, self.path.free
        mode = self._mode_toward(critical, branch)
        amplitude = branch.amplitude or SWITCH_AMPLITUDE * system_size(path.system)
        target = amplitude * float(mode @ mode) / np.abs(mode).max()
        q, s = critical.q.copy(), critical.load_factor
        q[free] += amplitude * mode / np.abs(mode).max()
        factor, history = SparseFactor(), []
        for _ in range(self.newton.max_iterations + 1):
            r, K, f, tolerance = path.terms(q, s)
            gap = float(mode @ (q - critical.q)[free]) - target
            history.append(float(np.linalg.norm(r)))
            if history[-1] <= tolerance and abs(gap) <= 1e-12 * target:
                return q, s, history, mode
            bordered = sp.bmat([[K, -f[:, None]], [mode[None, :], None]], format="csc")
            step = factor.factor_lu(bordered).solve(np.concatenate([-r, [-gap]]))
            q[free] += step[:-1]
            s += float(step[-1])
        raise ConvergenceError(
            f"no equilibrium on the branch leaving the bifurcation at load factor {critical.load_factor:.6g} "
            f"(amplitude {amplitude:.3g} m along its mode)",
            history,
        )

    def _mode_toward(self, critical: CriticalPoint, branch: BranchSwitch) -> np.ndarray:
        """The unit combination of the critical modes (free coordinates) that projects most on ``toward``."""
        n = self.path.system.n_dofs
        toward = np.asarray(branch.toward, dtype=float)
        if toward.shape == (3,):
            toward = np.tile(toward, n // 3) if n % 3 == 0 else toward
        if toward.shape != (n,):
            raise FlexbodyError(f"BranchSwitch: toward must have 3 or n_dofs = {n} entries, got {toward.size}")
        basis, _ = np.linalg.qr(critical.modes[self.path.free])
        weights = basis.T @ toward[self.path.free]
        if np.linalg.norm(weights) <= 1e-6 * np.linalg.norm(toward[self.path.free]):
            raise FlexbodyError(
                f"BranchSwitch: toward is orthogonal to the {basis.shape[1]} critical mode(s) of the bifurcation at "
                f"load factor {critical.load_factor:.6g}; give a direction in which the mode moves the nodes"
            )
        mode = basis @ weights
        return mode / np.linalg.norm(mode)


def _secant(lo: list, hi: list) -> float:
    """The next θ in the bracket [lo, hi] ((θ, eigenvalue) each): the secant root, or the midpoint when the secant
    falls within 1 % of the bracket's ends or outside it, or an eigenvalue is missing."""
    (t0, g0), (t1, g1) = lo, hi
    width = t1 - t0
    if g0 is not None and g1 is not None and g0 != g1:
        theta = t0 - g0 * width / (g1 - g0)
        if t0 + 0.01 * width <= theta <= t1 - 0.01 * width:
            return float(theta)
    return 0.5 * (t0 + t1)


def system_size(system) -> float:
    """The largest extent of the system's bodies [m]."""
    return max(float(np.ptp(np.asarray(b.mesh.points), axis=0).max()) for b in system.bodies)
