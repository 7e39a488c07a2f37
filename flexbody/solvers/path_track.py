"""The points of one static path of flexible bodies as they converge, with their stability.

:class:`PathTrack` is what load stepping (:mod:`flexbody.solvers.flexible_statics`) and arc-length continuation
(:mod:`flexbody.solvers.arc_length`) record into: every converged point with the number of negative eigenvalues of
its tangent and its kind (histories "negative_eigenvalues" and "point_kind", codes in
:data:`flexbody.solvers.path_stability.POINT_KINDS`); where the count changes, the critical point between the two
points is located and recorded as a point of the path (``metadata["critical_points"]``); at the first
bifurcation, when a :class:`~flexbody.solvers.path_stability.BranchSwitch` asks for it, the path leaves the
branch it was on. :meth:`PathTrack.finish` says how the path ends: stable, or unstable with a warning.
"""

from __future__ import annotations

import logging

import numpy as np

from ..errors import ConvergenceError
from ..io.results import Results
from ..system.description import System
from .equilibrium_path import EquilibriumPath
from .flexible_newton import record_point, static_results
from .newton_settings import NewtonSettings
from .path_stability import POINT_KINDS, BranchSwitch, CriticalPoint, PathStability, point_kind

log = logging.getLogger(__name__)

__all__ = ["PathTrack"]


class PathTrack:
    """The recorded points of one path (``results``), the last of them (q, s, negative eigenvalues) and the
    branch switch asked for. ``extra`` names further per-point histories (e.g. "arc_length"), 0 at the start."""

    def __init__(
        self,
        system: System,
        path: EquilibriumPath,
        newton: NewtonSettings,
        q0: np.ndarray,
        branch: BranchSwitch | None = None,
        extra: tuple[str, ...] = (),
    ):
        self.path, self.branch, self.switched = path, branch, False
        self.branch_mode: tuple | None = None  # (q_c, unit mode on the free coordinates) once switched
        self.stability = PathStability(path, newton)
        self.results: Results = static_results(system, q0)
        count = self.stability.count(q0, 0.0)
        self.results.histories.update(
            negative_eigenvalues=np.array([float(count)]),
            point_kind=np.array([float(point_kind(count))]),
            **{name: np.zeros(1) for name in extra},
        )
        self.results.metadata["critical_points"] = []
        self.results.metadata["point_kinds"] = dict(POINT_KINDS)
        self.results.metadata["stable"] = None if count < 0 else count == 0
        self.extra = extra
        self.last = (q0, 0.0, count)

    def add(self, q: np.ndarray, s: float, history: list, tangent=None, **extra) -> tuple | None:
        """Record the converged point (q, s) with its residual ``history`` (``tangent``: K_ff at it, when the solve
        has it, else it is assembled); a critical point found before it is
        recorded first. Returns the start (q, s, (Δq_free, Δs)) of the new branch when the path switched
        branch there (the point (q, s) is then not recorded: it lies on the branch left), else None."""
        count = self.stability.count(q, s, tangent)
        before = self.last[2]
        if count >= 0 and before >= 0 and count != before:
            for critical in self._located(q, s, count):
                self._record(
                    critical.q,
                    critical.load_factor,
                    [critical.residual],
                    critical.negative_before,
                    POINT_KINDS[critical.kind],
                )
                self.results.metadata["critical_points"].append(
                    {**critical.summary(), "point": len(self.results.times) - 1}
                )
                if critical.kind == "bifurcation" and self.branch is not None and not self.switched:
                    return self._switch(critical)
        self._record(q, s, history, count, point_kind(count), **extra)
        self.last = (q, s, count)
        return None

    def _located(self, q, s, count) -> list:
        """The critical points between the last point and (q, s); none (logged) when locating them failed."""
        try:
            return self.stability.locate(self.last, (q, s, count))
        except ConvergenceError as exc:
            log.warning(
                "the critical point(s) between load factors %.6g and %.6g were not located: %s",
                self.last[1],
                s,
                exc.reason,
            )
            return []

    def keeping_path(self, exc: ConvergenceError) -> ConvergenceError:
        """``exc`` carrying the path so far (``last_good``) when it carries nothing."""
        if exc.last_good is None:
            exc.last_good = self.results
        return exc

    def _switch(self, critical: CriticalPoint) -> tuple:
        assert self.branch is not None  # add() switches only when a branch is asked for
        q, s, history, mode = self.stability.switch(critical, self.branch)
        count = self.stability.count(q, s)
        self._record(q, s, history, count, point_kind(count))
        self.switched, self.last, self.branch_mode = True, (q, s, count), (critical.q, mode)
        log.info("switched branch at the bifurcation at load factor %.6g", critical.load_factor)
        free = self.path.free
        return q, s, ((q - critical.q)[free], s - critical.load_factor)

    def falls_back(self, q: np.ndarray, q_new: np.ndarray) -> bool:
        """Whether a step q → q_new on a branch switched to loses half its amplitude along the mode it left the
        bifurcation by (a step that fell back towards the branch it left)."""
        if self.branch_mode is None:
            return False
        q_c, mode = self.branch_mode
        free = self.path.free
        return float(mode @ (q_new - q_c)[free]) < 0.5 * float(mode @ (q - q_c)[free])

    def _record(self, q, s, history, count, kind, **extra) -> None:
        """Append a point; ``metadata["stable"]`` follows the last point (also for a path that fails later)."""
        values = {name: extra.get(name, 0.0) for name in self.extra}
        record_point(self.results, s, q, history, negative_eigenvalues=float(count), point_kind=float(kind), **values)
        if kind in (POINT_KINDS["stable"], POINT_KINDS["unstable"], POINT_KINDS["not assessed"]):
            self.results.metadata["stable"] = None if count < 0 else count == 0

    def finish(self, who: str = "solve_static") -> Results:
        """Say how the path ends (``metadata["stable"]``, None when not assessed, follows the last point): a WARNING
        when the last point is unstable or a branch switch asked for found no bifurcation."""
        count = self.last[2]
        meta = self.results.metadata
        if self.branch is not None and not self.switched:
            log.warning("%s: the path met no bifurcation, so the branch switch asked for was not made", who)
        if count > 0:
            found = "; ".join(f"{c['kind']} at load factor {c['load_factor']:.6g}" for c in meta["critical_points"])
            log.warning(
                "%s: the equilibrium at load factor %.6g is unstable: its tangent has %d negative eigenvalue(s)%s%s",
                who,
                self.last[1],
                count,
                f" (the path passed: {found})" if found else "",
                "; ask for the buckled branch with branch=fb.BranchSwitch(toward=...)"
                if any(c["kind"] == "bifurcation" for c in meta["critical_points"]) and not self.switched
                else "",
            )
        return self.results
