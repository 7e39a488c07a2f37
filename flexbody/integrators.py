"""Explicit time integration of constrained rigid multibody systems with constraint stabilisation.

The state (q, v) is integrated with accelerations from the constrained forward dynamics
τ = M a + h − Φᵀλ, Φ a + bias = 0 (:func:`flexbody.dynamics.forward`, any formulation) [AG-25]:
q̇ = v, v̇ = a [AG-36]. Integration drift of φ(q) is removed by

* Newton–Raphson position correction after every accepted step, q ← q − Φ⁺φ(q) iterated until
  ‖φ‖ ≤ tol [AG-37], followed by the velocity projection v ← v − Φ⁺(Φ v + φ_t), the minimum-norm change
  that restores the velocity constraint Φ v + φ_t = 0 (Φ⁺ is the SVD pseudoinverse with singular values
  below max(rtol·σ_max, atol) dropped, the rank convention of :mod:`flexbody.analysis`, so both work at
  singular configurations and with redundant rows);
* and/or Baumgarte stabilisation [AG Sec. VI, ref. 19], which replaces the acceleration constraint by
  φ̈ + 2α φ̇ + β² φ = 0, i.e. bias ← bias + 2α (Φ v + φ_t) + β² φ.

Without stabilisation the drift is not hidden: ‖φ‖ and ‖Φ v + φ_t‖ are recorded at every output step.
The model is any object with the evaluation interface ``n_dofs``, ``n_constraints``, ``row_labels``,
``terms(t, q, v)`` (→ .M, .h, .Phi, .bias, .phi, .phi_t), ``constraint_value(t, q)``, ``constraint_jacobian(t, q)``,
``constraint_rate(t, q)`` and optionally ``energy(q, v)``, ``initial_state()``, ``body_slices``.

With ``simulate(..., save_to=directory)`` the run is written while it runs (layout in
:mod:`flexbody.results`): every ``save_every`` recorded steps a part file with the new rows,
``results.json`` and ``checkpoint.npz``, the state from which :func:`resume` continues the run step for
step as if it had not been stopped.
"""
from __future__ import annotations

import inspect
import json
import logging
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import scipy.sparse as sp

from . import fields as field_data
from . import progress, restart
from .assembled import State, as_assembled
from .analysis import DENSE_LIMIT, GRAM_RTOL_FLOOR, constraint_rank, constraint_svd, dense_jacobian
from .analysis import resolve_tolerances as _tolerances
from .dynamics import forward
from .errors import ConvergenceError, FlexbodyError, StateError
from .results import (_INTEGER_HISTORIES, CHECKPOINT, PARTS, RESULTS_JSON, RESULTS_NPZ, Results, _jsonable, header,
                      part_name, read_parts, save_npz, save_part, write_text)

log = logging.getLogger(__name__)

__all__ = ["RK4", "Adaptive", "Baumgarte", "PositionCorrection", "simulate", "assemble_configuration",
           "project_velocity", "resume"]


# --------------------------------------------------------------------------------------------- settings
@dataclass(frozen=True, kw_only=True)
class RK4:
    """Classical fixed-step 4th-order Runge–Kutta with step ``dt`` [s] (the last step is shortened to end
    exactly at ``t_end``)."""

    dt: float

    def __post_init__(self):
        if not (np.isfinite(self.dt) and self.dt > 0):
            raise FlexbodyError(f"RK4: dt must be positive and finite, got {self.dt!r}")


@dataclass(frozen=True, kw_only=True)
class Adaptive:
    """Adaptive Runge–Kutta via :func:`scipy.integrate.solve_ivp` (``method`` "DOP853", "RK45", "RK23").

    The run is split into output intervals of ``output_dt`` [s] (default: (t_end − t0)/100); the state is
    recorded and, if requested, stabilised (position correction) at each output time, where the adaptive
    solver is restarted from the corrected state.
    """

    rtol: float = 1e-8
    atol: float = 1e-10
    max_step: float = math.inf
    method: str = "DOP853"
    output_dt: float | None = None

    def __post_init__(self):
        if self.method not in ("DOP853", "RK45", "RK23"):
            raise FlexbodyError(f"Adaptive: method must be an explicit scipy method 'DOP853', 'RK45' or "
                                f"'RK23', got {self.method!r}")
        if self.output_dt is not None and not (np.isfinite(self.output_dt) and self.output_dt > 0):
            raise FlexbodyError(f"Adaptive: output_dt must be positive, got {self.output_dt!r}")


@dataclass(frozen=True, kw_only=True)
class Baumgarte:
    """Baumgarte stabilisation: the acceleration constraint becomes φ̈ + 2α φ̇ + β² φ = 0, i.e.
    bias ← bias + 2α (Φ v + φ_t) + β² φ (α [1/s], β [1/s])."""

    alpha: float
    beta: float

    def __post_init__(self):
        if not (self.alpha >= 0 and self.beta >= 0):
            raise FlexbodyError(f"Baumgarte: alpha and beta must be non-negative, got {self.alpha}, {self.beta}")


@dataclass(frozen=True, kw_only=True)
class PositionCorrection:
    """Newton–Raphson projection onto φ = 0 after every accepted step [AG-37], then velocity projection.

    ``tol`` is on ‖φ‖ (units of the constraint rows). At least ``min_iterations`` Newton steps are taken
    even when ‖φ‖ ≤ tol already: the distance to the constraint manifold is ‖Φ⁺φ‖, which near a singular
    configuration (small σ_min) is much larger than ‖φ‖, and the step costs one SVD of Φ, which the
    velocity projection needs anyway. If ‖φ‖ > tol after ``max_iterations``,
    ``on_failure="raise"`` raises ConvergenceError (results so far kept in ``last_good``); ``"warn"``
    logs, records a "correction_not_converged" event and continues (as in [AG] Sec. VI, step 3).
    """

    tol: float = 1e-10
    max_iterations: int = 10
    min_iterations: int = 1
    on_failure: str = "raise"

    def __post_init__(self):
        if self.on_failure not in ("raise", "warn"):
            raise FlexbodyError(f"PositionCorrection: on_failure must be 'raise' or 'warn', got {self.on_failure!r}")
        if not (self.tol > 0 and self.max_iterations >= 1 and 0 <= self.min_iterations <= self.max_iterations):
            raise FlexbodyError("PositionCorrection: need tol > 0 and 0 <= min_iterations <= max_iterations, "
                                "max_iterations >= 1")


# ------------------------------------------------------------------------------------- linear algebra
def _min_norm_step(Phi, r: np.ndarray, rtol: float, atol: float) -> tuple[np.ndarray, int]:
    """Minimum-norm least-squares x = Φ⁺ r and the numerical rank of Φ (σ ≤ max(rtol·σ_max, atol) dropped)."""
    m, n = Phi.shape
    if m == 0:
        return np.zeros(n), 0
    if sp.issparse(Phi) and m * n > DENSE_LIMIT:
        # Φ⁺ r = Φᵀ (Φ Φᵀ)⁺ r; the eigenvalues of Φ Φᵀ are σ², so the cut is tol²
        w, V = np.linalg.eigh((Phi @ Phi.T).toarray())
        tol = max(max(rtol, GRAM_RTOL_FLOOR) * np.sqrt(max(w.max(), 0.0)), atol)
        keep = w > tol**2
        return Phi.T @ (V[:, keep] @ ((V[:, keep].T @ r) / w[keep])), int(keep.sum())
    svd, _ = constraint_svd(dense_jacobian(Phi), rtol, atol)
    return svd.Vt.T @ ((svd.U.T @ r) / svd.s), svd.rank


def _finite(name: str, value, t: float) -> np.ndarray:
    arr = np.asarray(value, dtype=float)
    if not np.isfinite(arr).all():
        bad = np.flatnonzero(~np.isfinite(arr.ravel()))
        raise StateError(f"non-finite {name} at t = {t:.9g} s (entries {bad[:8].tolist()})")
    return arr


def _worst_rows(asm, phi: np.ndarray, count: int = 3) -> str:
    labels = list(getattr(asm, "row_labels", None) or [f"row {i}" for i in range(phi.size)])
    order = np.argsort(-np.abs(phi))[:count]
    return ", ".join(f"{labels[i]!r} ({phi[i]:.3e})" for i in order)


# -------------------------------------------------------------------------- consistent configurations
def assemble_configuration(asm, q_guess, t: float = 0.0, fixed=None, tol: float = 1e-12,
                           max_iterations: int = 50, *, rtol: float | None = None,
                           atol: float | None = None) -> np.ndarray:
    """Coordinates q near ``q_guess`` with φ(q, t) = 0, by Newton iteration q ← q − Φ⁺φ(q) [AG-37].

    Parameters
    ----------
    asm : System, AssembledSystem, or a model with ``n_dofs``, ``constraint_value(t, q)`` and
        ``constraint_jacobian(t, q)`` (a System is assembled first)
    q_guess : array (n_dofs,)
        Starting guess [model units].
    t : float
        Time [s] (rheonomic constraints).
    fixed : sequence of int, optional
        Coordinates kept at their guessed value (e.g. a crank angle); only the others are solved for,
        with the minimum-norm correction in those coordinates.
    tol : float
        Convergence tolerance on ‖φ‖ (units of the constraint rows).
    max_iterations : int
        Newton iterations allowed.
    rtol, atol : float, optional
        Singular values of Φ below max(rtol·σ_max, atol) are dropped in Φ⁺ (:mod:`flexbody.analysis`).

    Returns
    -------
    q : ndarray (n_dofs,)

    Raises
    ------
    StateError
        ``q_guess`` has the wrong shape or is not finite.
    ConvergenceError
        ‖φ‖ > tol after ``max_iterations`` or the Newton step vanished (no assembled configuration near
        the guess); the message names the constraint rows with the largest residual, ``residual_history``
        holds ‖φ‖ per iteration and ``last_good`` the coordinates with the smallest residual.
    """
    asm = as_assembled(asm, "assemble_configuration")
    n = int(asm.n_dofs)
    q = _finite("q_guess", np.array(q_guess, dtype=float), t)
    if q.shape != (n,):
        raise StateError(f"assemble_configuration: q_guess must have shape ({n},), got {q.shape}")
    rtol, atol = _tolerances(rtol, atol)
    free = np.setdiff1d(np.arange(n), np.asarray([] if fixed is None else fixed, dtype=int))
    phi = np.asarray(asm.constraint_value(t, q), dtype=float)
    history = [float(np.linalg.norm(phi))]
    q_best, best = q.copy(), history[0]
    for _ in range(max_iterations):
        if history[-1] <= tol:
            return q
        Phi = asm.constraint_jacobian(t, q)
        dq, _ = _min_norm_step(Phi[:, free] if len(free) < n else Phi, phi, rtol, atol)   # [AG-37]
        if not np.all(np.isfinite(dq)) or np.linalg.norm(dq) <= 1e-15 * (1.0 + np.linalg.norm(q)):
            break                                        # Gauss–Newton stationary point with φ ≠ 0
        q = q.copy()
        q[free] -= dq
        phi = np.asarray(asm.constraint_value(t, q), dtype=float)
        history.append(float(np.linalg.norm(phi)))
        if history[-1] < best:
            q_best, best = q.copy(), history[-1]
    if history[-1] <= tol:
        return q
    phi_best = np.asarray(asm.constraint_value(t, q_best), dtype=float)
    raise ConvergenceError(f"assemble_configuration: constraints not satisfied to ‖φ‖ ≤ {tol:.1e} (best ‖φ‖ = "
                           f"{best:.3e} after {len(history) - 1} iterations); largest residuals in rows "
                           f"{_worst_rows(asm, phi_best)}", history, last_good=q_best)


def project_velocity(asm, q, v, t: float = 0.0, *, rtol: float | None = None,
                     atol: float | None = None) -> np.ndarray:
    """Velocities (n_dofs,) satisfying Φ v + φ_t = 0 with the minimum-norm change v ← v − Φ⁺(Φ v + φ_t)."""
    asm = as_assembled(asm, "project_velocity")
    rtol, atol = _tolerances(rtol, atol)
    Phi = asm.constraint_jacobian(t, q)
    r = Phi @ v + np.asarray(asm.constraint_rate(t, q), dtype=float)
    dv, _ = _min_norm_step(Phi, r, rtol, atol)
    return np.asarray(v, dtype=float) - dv


# ------------------------------------------------------------------------------------- the right side
def _tau_function(tau, asm) -> Callable:
    """τ(t, q, v) from None, an array or a callable ``tau(t, q, v)`` / controller ``(t, state, asm)``."""
    n = int(asm.n_dofs)
    if tau is None:
        zero = np.zeros(n)
        return lambda t, q, v: zero
    if not callable(tau):
        value = np.asarray(tau, dtype=float)
        if value.shape != (n,):
            raise StateError(f"simulate: tau must have shape ({n},), got {value.shape}")
        return lambda t, q, v: value
    if getattr(tau, "outputs", None) == "actuators":                  # a Controller: τ = Sᵀ τ_k
        S = np.asarray(asm.S, dtype=float)

        def applied(t, q, v):
            tau_k = np.asarray(tau(t, State(t, q, v), asm), dtype=float)
            if tau_k.shape != (S.shape[0],):
                raise StateError(f"controller {type(tau).__name__} returned {tau_k.shape} actuator inputs at "
                                 f"t = {t:.9g} s; the plant has {S.shape[0]} actuators {asm.actuated_labels}")
            return S.T @ tau_k
        return applied
    try:
        names = list(inspect.signature(tau).parameters)
    except (TypeError, ValueError):
        names = []
    if len(names) >= 2 and (names[1] == "state" or (len(names) >= 3 and names[2] in ("asm", "system"))):
        return lambda t, q, v: tau(t, State(t, q, v), asm)
    return tau


class _Dynamics:
    """Forward dynamics at a state [AG-25], with Baumgarte terms and checks of every input and output."""

    def __init__(self, asm, tau, formulation, baumgarte, rtol, atol):
        self.asm, self.tau = asm, _tau_function(tau, asm)
        self.formulation, self.baumgarte, self.rtol, self.atol = formulation, baumgarte, rtol, atol
        self.n_evaluations = 0

    def __call__(self, t, q, v):
        self.n_evaluations += 1
        tau = _finite("tau", self.tau(t, q, v), t)
        if tau.shape != (self.asm.n_dofs,):
            raise StateError(f"tau at t = {t:.9g} s has shape {tau.shape}, expected ({self.asm.n_dofs},)")
        terms = self.asm.terms(t, q, v)
        bias = _finite("constraint bias", terms.bias, t)
        if self.baumgarte is not None and bias.size:
            rate = terms.Phi @ v + terms.phi_t
            bias = bias + 2.0 * self.baumgarte.alpha * rate + self.baumgarte.beta**2 * terms.phi
        _finite("h", terms.h, t)
        res = forward(terms.M, terms.h, tau, terms.Phi, bias, method=self.formulation, rtol=self.rtol,
                      atol=self.atol)
        _finite("acceleration", res.a, t)
        _finite("constraint force", res.constraint_force, t)
        return res, tau, terms


def _correct(asm, t, q, v, settings: PositionCorrection, rtol, atol):
    """[AG-37] Newton projection of q onto φ = 0, then velocity projection.

    Returns q, v, iterations, ‖φ‖ after the correction."""
    phi = np.asarray(asm.constraint_value(t, q), dtype=float)
    norm, iterations = float(np.linalg.norm(phi)), 0
    while (iterations < settings.min_iterations or norm > settings.tol) and iterations < settings.max_iterations:
        dq, _ = _min_norm_step(asm.constraint_jacobian(t, q), phi, rtol, atol)      # [AG-37]
        if not np.any(dq):
            break                                   # Φ⁺ = 0 (rank 0): nothing to correct with
        q = q - dq
        phi = np.asarray(asm.constraint_value(t, q), dtype=float)
        norm, iterations = float(np.linalg.norm(phi)), iterations + 1
    v = project_velocity(asm, q, v, t, rtol=rtol, atol=atol)
    return q, v, iterations, norm


IMPLICIT_FORMULATION = "index-3 generalized-alpha"          # the "formulation" recorded by generalized-α runs


# ------------------------------------------------------------------------------------------- recording
class _Recorder:
    """Collects the histories and the event log of a run; builds (partial) Results at any time."""

    def __init__(self, asm, tolerances, singular_tol, metadata: dict, controller=None):
        self.asm, self.metadata, self.controller = asm, metadata, controller
        self.dropped: set = set()
        self.rtol, self.atol = tolerances
        self.singular_tol = singular_tol
        self.rows: dict[str, list] = {"t": [], "q": [], "v": []}
        self.events: list[dict] = []
        self.rank0 = self.rank_prev = None
        self.t_last = float("nan")
        self.field_bodies = list(getattr(asm, "bodies", None) or []) if metadata.get("fields") else []

    def _report(self, Phi, atol):
        return constraint_rank(Phi, rtol=self.rtol, row_labels=getattr(self.asm, "row_labels", None), atol=atol)

    def track_rank(self, t, rank, Phi):
        """Log an event whenever the rank of Φ changes (singular configurations): "rank_drop" when it
        falls, "rank_restored" when it rises back to its value at the start, "rank_rise" otherwise.

        The rank is the one forward() used, or, with ``singular_tol``, the rank with the absolute floor
        raised to ``singular_tol`` (so that a fixed-step run that passes near, not exactly through, a
        singular configuration is logged)."""
        report = None
        if self.singular_tol is not None:
            report = self._report(Phi, max(self.atol, self.singular_tol))
            rank = report.rank
        if self.rank0 is None:
            self.rank0 = self.rank_prev = rank
            return
        if rank == self.rank_prev:
            return
        if report is None:
            report = self._report(Phi, self.atol)
        s = np.asarray(report.singular_values, dtype=float)
        kind = "rank_drop" if rank < self.rank_prev else ("rank_restored" if rank == self.rank0 else "rank_rise")
        event = {"t": float(t), "kind": kind, "rank": int(rank), "previous_rank": int(self.rank_prev),
                 "initial_rank": int(self.rank0), "redundant_rows": [int(i) for i in report.redundant_rows],
                 "redundant_labels": list(report.redundant_labels or []),
                 "smallest_singular_value": float(s.min()) if s.size else 0.0, "tol": float(report.tol)}
        self.events.append(event)
        log.info("t = %.6g s: %s, rank of the constraint Jacobian %d -> %d (smallest singular value %.3e, "
                 "redundant rows %s)", t, kind, self.rank_prev, rank, event["smallest_singular_value"],
                 event["redundant_labels"] or event["redundant_rows"])
        self.rank_prev = rank

    def record(self, t, q, v, res, tau, terms, corrections):
        asm = self.asm
        rate = terms.Phi @ v + terms.phi_t
        values = {"t": t, "q": q, "v": v, "a": res.a, "tau": tau, "lam": res.lam,
                  "constraint_force": res.constraint_force, "rank": res.rank,
                  "violation": np.linalg.norm(terms.phi),
                  "velocity_violation": np.linalg.norm(rate), "corrections": corrections}
        if hasattr(asm, "energy"):
            kinetic, potential = asm.energy(q, v)
            values.update(kinetic=kinetic, potential=potential, energy=kinetic + potential)
        if self.field_bodies:
            values.update(field_data.record_rows(self.field_bodies, self.body_slices(), q, v))
        for key, value in values.items():
            self.rows.setdefault(key, []).append(np.array(value, dtype=float, copy=True))
        if self.controller is not None:
            self._record_controller(len(self.rows["t"]))

    def _record_controller(self, count: int) -> None:
        """Controller diagnostics (task coordinates, desired values, errors, f*, τ_k, …) at the recorded
        state; a quantity missing at some step or changing shape is dropped with a log message."""
        for key, value in self.controller.diagnostics.items():
            value = np.array(value, dtype=float, copy=True)
            rows = self.rows.setdefault(key, [])
            if key in self.dropped:
                continue
            if len(rows) != count - 1 or (rows and rows[0].shape != value.shape):
                self.dropped.add(key)
                log.info("controller history %r dropped: not recorded at every step with one shape", key)
                continue
            rows.append(value)

    def body_slices(self) -> dict:
        return {k: ((s.start, s.stop) if isinstance(s, slice) else tuple(int(i) for i in s))
                for k, s in dict(getattr(self.asm, "body_slices", None) or {}).items()}

    def restore(self, arrays: dict, histories: dict, state: dict) -> None:
        """Continue after the rows of a saved run (``arrays`` "times", "q", "v" and ``histories``, as read
        by :func:`flexbody.results.read_parts`) with the event log and rank tracking of its checkpoint."""
        self.rows = {"t": [np.array(t, dtype=float) for t in arrays["times"]], "q": list(arrays["q"]),
                     "v": list(arrays["v"])}
        for key, value in histories.items():
            self.rows[key] = [np.array(x, dtype=float) for x in value]
        self.events = list(state["events"])
        self.dropped = set(state["dropped"])
        self.rank0, self.rank_prev, self.t_last = state["rank0"], state["rank_prev"], float(state["t_last"])

    def results(self) -> Results:
        n = int(self.asm.n_dofs)
        count = len(self.rows["t"])
        rows = {k: np.asarray(v) for k, v in self.rows.items() if k not in self.dropped and len(v) == count}
        q = rows["q"] if len(rows["q"]) else np.zeros((0, n))
        slices = self.body_slices()
        histories, recorded_fields = field_data.split({k: v for k, v in rows.items() if k not in ("t", "q", "v")})
        for key in _INTEGER_HISTORIES:
            if key in histories:
                histories[key] = histories[key].astype(np.int64)
        return Results(kind="dynamic", times=rows["t"].astype(float), q=q, body_slices=slices,
                       iterations=[int(c) for c in histories.get("corrections", [])],
                       reference=q[0].copy() if len(q) else np.zeros(n), system=self.asm,
                       v=rows["v"] if len(rows["v"]) else np.zeros((0, n)),
                       histories=histories, fields=recorded_fields, events=list(self.events),
                       metadata=dict(self.metadata))


# ------------------------------------------------------------------------------------ saving as it runs
class _Saver:
    """Writes a run into a directory while it runs (layout in :mod:`flexbody.results`).

    :meth:`write` stores the rows recorded since the last write as a new part file, then
    ``results.json`` (listing the parts), then, given the integrator's state, ``checkpoint.npz``, each
    atomically and in this order; the checkpoint names how many parts (and rows) it continues, so
    whatever a kill leaves behind is consistent: :meth:`Results.load` reads the parts listed in the json,
    :func:`resume` the ones named by the checkpoint (later ones are written again). At the end of a
    successful run :meth:`finish` writes the complete ``results.npz`` and removes the parts and the
    checkpoint.
    """

    def __init__(self, directory, save_every: int, n_parts: int = 0, written: int = 0):
        self.path, self.save_every = Path(directory), int(save_every)
        self.n_parts, self.written = int(n_parts), int(written)            # parts and rows on disk

    @classmethod
    def create(cls, directory, save_every: int) -> "_Saver":
        """A writer into ``directory`` (created; the files of an earlier run there are removed)."""
        saver = cls(directory, save_every)
        try:
            saver.path.mkdir(parents=True, exist_ok=True)
            for name in (RESULTS_NPZ, RESULTS_JSON, CHECKPOINT):
                (saver.path / name).unlink(missing_ok=True)
            saver.prune()
        except OSError as exc:
            raise FlexbodyError(f"simulate: cannot prepare {str(saver.path)!r} for saving: {exc}") from exc
        return saver

    def prune(self) -> None:
        """Remove part files beyond the first ``n_parts`` and temporary files left by a killed writer."""
        parts = self.path / PARTS
        for file in list(self.path.glob(".*.tmp")) + list(parts.glob(".*.tmp")):
            file.unlink(missing_ok=True)
        for file in parts.glob("part_*.npz"):
            if file.stem[5:].isdigit() and int(file.stem[5:]) > self.n_parts:
                file.unlink(missing_ok=True)

    def forget_after_checkpoint(self, recorder: _Recorder) -> None:
        """On resuming: list only the checkpoint's parts in ``results.json``, then remove later parts."""
        self.write(recorder)
        self.prune()

    def due(self, recorder: _Recorder) -> bool:
        return len(recorder.rows["t"]) - self.written >= self.save_every

    def write(self, recorder: _Recorder, state: dict | None = None, arrays: dict | None = None) -> None:
        """Write the new rows and ``results.json``; with the integrator's ``state`` (JSON scalars) and
        ``arrays`` also the checkpoint, which must continue the run right after the last recorded row."""
        n = int(recorder.asm.n_dofs)
        count = len(recorder.rows["t"])
        try:
            if count > self.written or self.n_parts == 0:
                rows = {k: v[self.written:count] for k, v in recorder.rows.items()
                        if k not in recorder.dropped and len(v) == count}
                stack = lambda key: np.asarray(rows[key]) if rows[key] else np.zeros((0, n))    # noqa: E731
                save_part(self.path, self.n_parts + 1, np.asarray(rows["t"], dtype=float), stack("q"),
                          stack("v"), {k: np.asarray(v) for k, v in rows.items() if k not in ("t", "q", "v")})
                self.n_parts, self.written = self.n_parts + 1, count
            meta = header("dynamic", recorder.body_slices(), recorder.events, recorder.metadata,
                          parts=[part_name(i) for i in range(1, self.n_parts + 1)], n_dofs=n)
            write_text(self.path / RESULTS_JSON, json.dumps(meta, indent=1))
            if state is not None:
                state = {**state, "n_parts": self.n_parts, "rows": self.written, "rank0": recorder.rank0,
                         "rank_prev": recorder.rank_prev, "dropped": sorted(recorder.dropped),
                         "events": recorder.events, "t_last": recorder.t_last}
                save_npz(self.path / CHECKPOINT, {"state": np.array(json.dumps(_jsonable(state))), **arrays})
        except OSError as exc:
            raise FlexbodyError(f"cannot write the run to {str(self.path)!r}: {exc}") from exc

    def fail(self, recorder: _Recorder) -> None:
        """After a failure: write the rows not yet written (the checkpoint stays at the last save)."""
        try:
            self.write(recorder)
        except FlexbodyError as exc:
            log.error("%s", exc)

    def finish(self, results: Results) -> None:
        """Write the complete results and remove the parts and the checkpoint."""
        try:
            results.save(self.path)
            (self.path / CHECKPOINT).unlink(missing_ok=True)
            self.n_parts = 0
            self.prune()
            if (self.path / PARTS).is_dir() and not any((self.path / PARTS).iterdir()):
                (self.path / PARTS).rmdir()
        except OSError as exc:
            raise FlexbodyError(f"cannot write the results to {str(self.path)!r}: {exc}") from exc


def _execute(recorder: _Recorder, saver: _Saver | None, body: Callable[[], None]) -> Results:
    """Run ``body`` (the stepping loop); on failure attach (and write) what was recorded, else return
    (and write) the results."""
    try:
        body()
    except FlexbodyError as exc:
        _attach_partial(recorder, exc)
        if saver is not None:
            saver.fail(recorder)
        raise
    except KeyboardInterrupt:
        if saver is not None:
            saver.fail(recorder)
        raise
    results = recorder.results()
    if saver is not None:
        saver.finish(results)
    return results


# ----------------------------------------------------------------------------------------- simulation
def simulate(asm, t_end: float, *, integrator=RK4(dt=1e-3), tau=None, formulation: str = "projection",
             stabilization=PositionCorrection(), q0=None, v0=None, t0: float = 0.0, record_every: int = 1,
             consistent_initial: bool = True, rtol: float | None = None, atol: float | None = None,
             singular_tol: float | None = None, controller=None, save_to=None, save_every: int = 50,
             fields: bool = False) -> Results:
    """Integrate the constrained equations of motion from ``t0`` to ``t_end`` [s].

    Parameters
    ----------
    asm : System, AssembledSystem or a model with the evaluation interface (module docstring)
        A System is assembled here (``system.assemble()``); ``Results.system`` is that assembly.
    t_end : float
        End time [s].
    integrator : RK4 or Adaptive
    tau : None (zero), array (n_dofs,) or callable
        Generalized applied forces [N or N·m]: ``tau(t, q, v)`` or a controller ``tau(t, state, asm)``
        (recognised by its parameter names ``state`` or ``asm``/``system``).
    controller : flexbody.control.Controller, optional
        A controller returning actuator inputs τ_k (k,); the plant receives Sᵀτ_k (zero at passive
        joints). Once per step it gets ``update(t, state, response)`` with the plant's response (for
        integral terms), and its ``diagnostics`` (task coordinates "task_x", desired values
        "task_desired", errors "task_error", commanded task accelerations "task_command", actuator
        inputs "tau_k", …) are recorded as histories. ``controller`` and ``tau`` are exclusive.
    formulation : str
        Method of :func:`flexbody.dynamics.forward`: "projection" [AG-25], "multiplier", "gauss", "nullspace".
    stabilization : PositionCorrection, Baumgarte, a tuple of both, or None
        None integrates without stabilisation; the drift is then recorded in ``histories["violation"]``.
    q0, v0 : array (n_dofs,), optional
        Initial state (default ``asm.initial_state()``).
    t0 : float
        Initial time [s].
    record_every : int
        Record every k-th step (RK4) or output time (Adaptive); the last one is always recorded.
    consistent_initial : bool
        Assemble q0 (:func:`assemble_configuration`) and project v0 (:func:`project_velocity`) first.
    rtol, atol : float, optional
        Rank tolerances of Φ for forward() and the pseudoinverses, tol = max(rtol·σ_max, atol)
        (defaults of :mod:`flexbody.analysis`). A large ``atol`` is Aghili's ε [AG-68]: the constraint is
        dropped where its singular value falls below it.
    singular_tol : float, optional
        Absolute singular-value floor for the singular-configuration log only (the dynamics keep
        ``atol``). Default: log changes of the rank used by forward().
    save_to : str or Path, optional
        Directory to write the run into while it runs (files of an earlier run there are replaced): every
        ``save_every`` recorded steps the new rows as ``parts/part_NNNNN.npz``, ``results.json``
        (metadata with the run's settings: integrator and its settings, t0, t_end, record_every,
        formulation, stabilisation) and ``checkpoint.npz`` (the integrator's state, for :func:`resume`);
        on a failure the rows recorded up to it; at the end the complete results (:meth:`Results.save`),
        after which the parts and the checkpoint are removed. :meth:`Results.load` reads the directory at
        any time (``metadata["complete"]`` False before the end). Saving does not change the results.
    save_every : int
        Recorded steps per part file (with ``save_to``). Inside ``with flexbody.restart.resuming():``
        (``flexbody run --resume``) a run saved in ``save_to`` with the same settings is continued from its
        checkpoint, or returned as it is when complete, instead of being started again.
    fields : bool
        Record the fields of the flexible bodies (displacement, velocity, strain, stress; names, shapes
        and units in :mod:`flexbody.fields`) at every recorded step into ``Results.fields`` (also written
        with ``save_to`` and used by the ParaView export). Memory grows with steps × nodes: thin with
        ``record_every``.

    Returns
    -------
    Results
        ``kind="dynamic"``; ``times`` [s], ``q``, ``v``; ``histories``: "a", "tau", "lam", "constraint_force"
        (Φᵀλ), "rank" (rank of Φ used by forward()), "violation" (‖φ‖), "velocity_violation"
        (‖Φ v + φ_t‖), "corrections" (Newton iterations of the position correction that produced the
        state) and, if the model has ``energy``, "kinetic", "potential", "energy" [J]. ``events``: rank
        changes of Φ ({"t", "kind": "rank_drop" | "rank_restored" | "rank_rise" (above the initial rank), "rank",
        "redundant_rows", "smallest_singular_value", …}) and failures.

    Raises
    ------
    StateError
        Bad or non-finite initial state, or NaN/Inf in state, forces or accelerations during the run
        (the message names the time and the quantity).
    FlexbodyError
        Any failure during the run (ConvergenceError of the position correction, ConstraintError of the
        multiplier form at a singular configuration, …) is re-raised with the results recorded up to
        the failure attached as ``exc.last_good``; with ``save_to`` they are written there too.
    """
    from .implicit import GeneralizedAlpha
    asm = as_assembled(asm, "simulate")
    if not isinstance(integrator, (RK4, Adaptive, GeneralizedAlpha)):
        raise FlexbodyError(f"simulate: integrator must be RK4, Adaptive or GeneralizedAlpha, got {integrator!r}")
    if not (np.isfinite(t_end) and t_end > t0):
        raise FlexbodyError(f"simulate: t_end must be finite and > t0 = {t0}, got {t_end!r}")
    if not isinstance(record_every, (int, np.integer)) or record_every < 1:
        raise FlexbodyError(f"simulate: record_every must be a positive integer, got {record_every!r}")
    if save_to is not None and (not isinstance(save_every, (int, np.integer)) or save_every < 1):
        raise FlexbodyError(f"simulate: save_every must be a positive integer, got {save_every!r}")
    tau, controller = _control_inputs(tau, controller, "simulate")
    implicit = isinstance(integrator, GeneralizedAlpha)
    facts = {"integrator": type(integrator).__name__, "integrator_settings": asdict(integrator),
             "formulation": IMPLICIT_FORMULATION if implicit else formulation,
             "t0": float(t0), "t_end": float(t_end), "record_every": int(record_every)}
    if fields:
        _check_field_bodies(asm)
        facts["fields"] = True
    if save_to is not None and restart.active():                    # flexbody run --resume
        saved = restart.continue_saved(asm, save_to, float(t_end), facts,
                                       tau=None if controller is not None else tau, controller=controller)
        if saved is not None:
            return saved
    if save_to is not None:
        facts["save_every"] = int(save_every)
    saver = _Saver.create(save_to, save_every) if save_to is not None else None
    if implicit:
        return _simulate_implicit(asm, t_end, integrator, tau, controller, q0, v0, t0, record_every,
                                  consistent_initial, facts, saver)
    correction, baumgarte = _split_stabilization(stabilization)
    tolerances = _tolerances(rtol, atol)
    q, v = _initial_state(asm, q0, v0, t0, consistent_initial, tolerances)
    metadata = {**facts, "position_correction": asdict(correction) if correction else None,
                "baumgarte": asdict(baumgarte) if baumgarte else None, "rtol": tolerances[0],
                "atol": tolerances[1], "singular_tol": singular_tol}
    recorder = _Recorder(asm, tolerances, singular_tol, _with_labels(metadata, asm, controller), controller)
    recorder.t_last = float(t0)
    body = _explicit_body(asm, integrator, tau, formulation, correction, baumgarte, tolerances, recorder,
                          record_every, saver, q, v, float(t0), float(t_end), {})
    return _execute(recorder, saver, body)


def _check_field_bodies(asm) -> None:
    bodies = list(getattr(asm, "bodies", None) or [])
    if not bodies:
        raise FlexbodyError("simulate: fields=True, but the model has no flexible body to record fields of")
    for body in bodies:
        field_data.check_body_name(body.name)


def _control_inputs(tau, controller, caller: str):
    """(tau, controller): the controller (if any) becomes tau; a Controller given as tau is recognised;
    the controller is reset."""
    if controller is not None:
        if tau is not None:
            raise FlexbodyError(f"{caller}: give either tau or controller, not both")
        if getattr(controller, "outputs", None) != "actuators":
            raise FlexbodyError(f"{caller}: controller must be a flexbody.control.Controller, got {controller!r}")
        tau = controller
    controller = tau if getattr(tau, "outputs", None) == "actuators" else None
    if controller is not None and hasattr(controller, "reset"):
        controller.reset()
    return tau, controller


def _explicit_body(asm, integrator, tau, formulation, correction, baumgarte, tolerances, recorder,
                   record_every, saver, q, v, t0, t_end, start: dict) -> Callable[[], None]:
    """The RK4 or adaptive loop from (t0, q, v), or from a checkpoint's ``start`` (k, t, corrections,
    output_dt), as a function of no arguments."""
    dynamics = _Dynamics(asm, tau, formulation, baumgarte, *tolerances)
    output_dt = None
    if isinstance(integrator, Adaptive):
        output_dt = start.get("output_dt") or integrator.output_dt or (t_end - t0) / 100.0
    run = _Run(asm, dynamics, recorder, correction, tolerances, record_every, saver, output_dt,
               type(integrator).__name__)
    loop = _run_rk4 if isinstance(integrator, RK4) else _run_adaptive
    kw = {"k0": int(start["k"]), "t": float(start["t"]), "corrections": int(start["corrections"])} if start else {}

    def body():
        loop(run, integrator, q, v, t0, t_end, **kw)
        log.info("simulated to t = %.6g s: %d steps recorded, %d dynamics evaluations, %d events", t_end,
                 len(recorder.rows["t"]), dynamics.n_evaluations, len(recorder.events))
    return body


def resume(asm, directory, t_end: float | None = None, *, tau=None, controller=None) -> Results:
    """Continue a run written with ``simulate(..., save_to=directory)`` that was stopped (killed,
    interrupted) or failed, from its last checkpoint to ``t_end``, and return the complete results.

    The integrator, its settings, the formulation, the stabilisation, tolerances, ``record_every`` and
    ``save_every`` are those of the saved run; the run keeps writing into ``directory`` as it goes, and at
    the end writes the complete results there. The returned :class:`Results` holds the saved rows up to
    the checkpoint plus the new ones (times strictly increasing, no step twice); rows written after the
    checkpoint (e.g. up to a failure) are computed again. The continuation repeats the uninterrupted run
    exactly (same inputs, same machine): for RK4 and Adaptive (restarted at every output time anyway) the
    checkpoint holds the step index, t, q, v and the correction count; for generalized-α the integrator
    state (t, q, v, q̈, a, λ), the step-size control, the previous step's input, the statistics and the
    point where the kept Newton iteration matrix was formed, which the resumed run forms again (its
    ``statistics["factorizations"]`` counts that one extra factorization).

    Parameters
    ----------
    asm : System, AssembledSystem or model
        The model of the saved run (functions and models are not saved; its ``n_dofs`` is checked).
    directory : str or Path
        The ``save_to`` directory of the run.
    t_end : float, optional
        End time [s] (default: the saved run's), after the checkpoint's time.
    tau, controller :
        The applied forces or controller of the saved run, given again (as for :func:`simulate`): they
        are functions and are not saved. A controller is reset first, so internal state such as an
        integral term restarts from its reset value at the checkpoint (the continuation then differs
        from the uninterrupted run).

    Returns
    -------
    Results
        As :func:`simulate`; ``metadata["resumed_at"]`` lists the checkpoint times resumed from.

    Raises
    ------
    FlexbodyError
        No checkpoint in ``directory``; the run there is already complete; the model's ``n_dofs`` differs
        from the saved run's; the saved integrator cannot resume; ``t_end`` not after the checkpoint.
        Failures of the continued run as in :func:`simulate` (with ``last_good``).
    """
    from .implicit import GeneralizedAlpha
    asm = as_assembled(asm, "resume")
    path = Path(directory)
    if (path / RESULTS_NPZ).exists():
        raise FlexbodyError(f"resume: the run in {str(path)!r} is already complete ({RESULTS_NPZ} exists); "
                            f"read it with Results.load")
    if not (path / CHECKPOINT).is_file():
        raise FlexbodyError(f"resume: no checkpoint ({CHECKPOINT}) in {str(path)!r}: not a directory written "
                            f"by simulate(..., save_to=...), or stopped before its first save")
    try:
        with np.load(path / CHECKPOINT) as data:
            arrays = {key: data[key] for key in data.files}
        state = json.loads(str(arrays.pop("state")))
        metadata = json.loads((path / RESULTS_JSON).read_text())["metadata"]
    except (OSError, ValueError, KeyError) as exc:
        raise FlexbodyError(f"resume: cannot read the checkpoint in {str(path)!r}: {exc}") from exc
    kinds = {"RK4": RK4, "Adaptive": Adaptive, "GeneralizedAlpha": GeneralizedAlpha}
    name = metadata.get("integrator")
    if name not in kinds or state.get("integrator") != name:
        raise FlexbodyError(f"resume: the run in {str(path)!r} used integrator {name!r} (checkpoint of "
                            f"{state.get('integrator')!r}), which cannot resume; resumable: {sorted(kinds)}")
    integrator = kinds[name](**metadata["integrator_settings"])
    n = int(asm.n_dofs)
    if arrays["q"].shape != (n,):
        raise FlexbodyError(f"resume: the model has n_dofs = {n} but the run in {str(path)!r} has "
                            f"{arrays['q'].size} coordinates; give the model of the saved run")
    t_start = float(state["t"])
    t_end = float(metadata["t_end"] if t_end is None else t_end)
    if not (np.isfinite(t_end) and t_end > t_start):
        raise FlexbodyError(f"resume: t_end must be finite and after the checkpoint's t = {t_start!r} s, "
                            f"got {t_end!r}")
    tau, controller = _control_inputs(tau, controller, "resume")
    try:
        rows, histories = read_parts(path, [part_name(i) for i in range(1, state["n_parts"] + 1)], n)
    except (OSError, ValueError, KeyError) as exc:
        raise FlexbodyError(f"resume: cannot read the parts in {str(path)!r}: {exc}") from exc
    if len(rows["times"]) != state["rows"]:
        raise FlexbodyError(f"resume: {str(path)!r} is inconsistent: the checkpoint continues {state['rows']} "
                            f"rows, its parts hold {len(rows['times'])}")
    saver = _Saver(path, metadata.get("save_every", 50), state["n_parts"], state["rows"])
    metadata.pop("statistics", None)
    metadata.update(t_end=t_end, resumed_at=list(metadata.get("resumed_at", [])) + [t_start])
    t0, record_every = float(metadata["t0"]), int(metadata["record_every"])
    q, v = arrays["q"], arrays["v"]
    log.info("resuming the %s run in %s at t = %.6g s (%d rows saved) to t = %.6g s", name, path, t_start,
             state["rows"], t_end)
    if isinstance(integrator, GeneralizedAlpha):
        tolerances = _tolerances(None, None)
        recorder = _Recorder(asm, tolerances, None, _with_labels(metadata, asm, controller), controller)
        recorder.restore(rows, histories, state)
        saver.forget_after_checkpoint(recorder)
        body = _implicit_body(asm, t_end, integrator, tau, controller, recorder, saver, q, v, t0, record_every,
                              (state, arrays))
    else:
        tolerances = _tolerances(metadata["rtol"], metadata["atol"])
        pc, bg = metadata.get("position_correction"), metadata.get("baumgarte")
        correction = PositionCorrection(**pc) if pc else None
        baumgarte = Baumgarte(**bg) if bg else None
        recorder = _Recorder(asm, tolerances, metadata.get("singular_tol"), _with_labels(metadata, asm, controller),
                             controller)
        recorder.restore(rows, histories, state)
        saver.forget_after_checkpoint(recorder)
        body = _explicit_body(asm, integrator, tau, metadata["formulation"], correction, baumgarte, tolerances,
                              recorder, record_every, saver, q, v, t0, t_end, state)
    return _execute(recorder, saver, body)


def _with_labels(metadata: dict, asm, controller) -> dict:
    """Run metadata plus the model's labels and units and the controller's name, labels and task units
    ("coordinate_units", "row_units" (of φ), "actuated_units", "task_units"; see docs/conventions.md)."""
    for key in ("coordinate_labels", "row_labels", "actuated_labels",
                "coordinate_units", "row_units", "actuated_units"):
        if hasattr(asm, key):
            metadata[key] = list(getattr(asm, key))
    if controller is not None:
        metadata.update(controller=type(controller).__name__, **getattr(controller, "labels", {}))
        task = getattr(controller, "task", None)
        if hasattr(task, "units_in"):
            metadata["task_units"] = list(task.units_in(asm) if hasattr(asm, "coordinate_units") else task.units)
    return metadata


def _attach_partial(recorder: _Recorder, exc: FlexbodyError) -> None:
    """Log the failure as an event and attach the results recorded so far to ``exc.last_good`` (a state
    the error carried before moves to ``exc.last_state``)."""
    recorder.events.append({"t": recorder.t_last, "kind": "failure", "error": type(exc).__name__,
                            "message": str(exc)})
    partial = recorder.results()
    if getattr(exc, "last_good", None) is not None and not isinstance(exc.last_good, Results):
        exc.last_state = exc.last_good
    exc.last_good = partial
    log.info("simulation stopped at t = %.6g s: %s (%d steps recorded)", recorder.t_last, exc, partial.n_steps)


def _simulate_implicit(asm, t_end, settings, tau, controller, q0, v0, t0, record_every, consistent, facts,
                       saver):
    """The generalized-α branch of :func:`simulate` (:mod:`flexbody.implicit`); same Results layout."""
    from .implicit import consistent_start
    tolerances = _tolerances(None, None)
    q, v = _initial_state(asm, q0, v0, t0, False, tolerances)         # validated; made consistent below
    if consistent and int(asm.n_constraints) > 0:
        q, v = consistent_start(asm, t0, q, v)
    metadata = dict(facts)                                            # integrator, settings, t0, t_end, …
    recorder = _Recorder(asm, tolerances, None, _with_labels(metadata, asm, controller), controller)
    recorder.t_last = float(t0)
    body = _implicit_body(asm, t_end, settings, tau, controller, recorder, saver, q, v, float(t0), record_every,
                          None)
    return _execute(recorder, saver, body)


def _implicit_body(asm, t_end, settings, tau, controller, recorder, saver, q, v, t0, record_every, start):
    """The generalized-α loop as a function of no arguments; its statistics go to the metadata."""
    from .implicit import simulate_implicit
    tau_function = _tau_function(tau, asm)

    def body():
        recorder.metadata["statistics"] = simulate_implicit(
            asm, float(t_end), settings, tau_function, recorder, q=q, v=v, t0=float(t0),
            record_every=record_every, controller=controller, saver=saver, start=start)
    return body


def _split_stabilization(stabilization):
    items = stabilization if isinstance(stabilization, (tuple, list)) else (stabilization,)
    correction = baumgarte = None
    for item in items:
        if isinstance(item, PositionCorrection):
            correction = item
        elif isinstance(item, Baumgarte):
            baumgarte = item
        elif item is not None:
            raise FlexbodyError(f"simulate: stabilization must be PositionCorrection, Baumgarte, a tuple of "
                                f"them or None, got {item!r}")
    return correction, baumgarte


def _initial_state(asm, q0, v0, t0, consistent, tolerances):
    n = int(asm.n_dofs)
    if q0 is None or v0 is None:
        if not hasattr(asm, "initial_state"):
            raise StateError("simulate: give q0 and v0 (the model has no initial_state())")
        state = asm.initial_state()
        q0 = state.q if q0 is None else q0
        v0 = state.v if v0 is None else v0
    q, v = np.array(q0, dtype=float), np.array(v0, dtype=float)
    for name, x in (("q0", q), ("v0", v)):
        if x.shape != (n,):
            raise StateError(f"simulate: {name} must have shape ({n},), got {x.shape}")
        _finite(name, x, t0)
    if consistent and int(asm.n_constraints) > 0:
        rtol, atol = tolerances
        q = assemble_configuration(asm, q, t0, rtol=rtol, atol=atol)
        v = project_velocity(asm, q, v, t0, rtol=rtol, atol=atol)
    return q, v


@dataclass
class _Run:
    """What the stepping loops share."""

    asm: object
    dynamics: _Dynamics
    recorder: _Recorder
    correction: PositionCorrection | None
    tolerances: tuple
    record_every: int
    saver: _Saver | None = None
    output_dt: float | None = None                    # adaptive: the resolved output interval [s]
    integrator: str = "RK4"

    def start_step(self, k, t, q, v, corrections, last: bool):
        """Evaluate the dynamics at the (corrected) state, track the rank and record."""
        res, tau, terms = self.dynamics(t, q, v)
        self.recorder.t_last = float(t)
        controller = self.recorder.controller
        if controller is not None and hasattr(controller, "update"):
            controller.update(t, State(t, q, v), res)
        self.recorder.track_rank(t, res.rank, terms.Phi)
        if k % self.record_every == 0 or last:
            self.recorder.record(t, q, v, res, tau, terms, corrections)
        return res

    def end_step(self, t, q, v):
        """Check the new state and apply the position correction; returns q, v, iterations."""
        _finite("q", q, t)
        _finite("v", v, t)
        if self.correction is None or int(self.asm.n_constraints) == 0:
            return q, v, 0
        q, v, iterations, norm = _correct(self.asm, t, q, v, self.correction, *self.tolerances)
        if norm > self.correction.tol:
            message = (f"position correction at t = {t:.9g} s: ‖φ‖ = {norm:.3e} > tol = "
                       f"{self.correction.tol:.1e} after {iterations} iterations; largest residuals in rows "
                       f"{_worst_rows(self.asm, np.asarray(self.asm.constraint_value(t, q)))}")
            if self.correction.on_failure == "raise":
                raise ConvergenceError(message, [norm])
            log.warning(message)
            self.recorder.events.append({"t": float(t), "kind": "correction_not_converged", "violation": norm,
                                         "iterations": iterations})
        return q, v, iterations

    def completed(self, k, t, q, v, corrections, t0, t_end, last: bool) -> None:
        """After a step that reached state k: report progress and, when enough rows wait, write them with
        the checkpoint (k, t, q, v, corrections) from which the loop continues at ``start_step(k, …)``."""
        progress.report(t, t0, t_end)
        if self.saver is not None and not last and self.saver.due(self.recorder):
            state = {"integrator": self.integrator, "k": int(k), "t": float(t), "corrections": int(corrections),
                     "output_dt": self.output_dt}
            self.saver.write(self.recorder, state, {"q": q, "v": v})


def _run_rk4(run: _Run, settings: RK4, q, v, t0, t_end, k0: int = 0, t: float | None = None,
             corrections: int = 0):
    """RK4 steps from (t0, q, v), or from step ``k0`` at (t, q, v) of a run started at t0."""
    n_steps = max(1, int(math.ceil((t_end - t0) / settings.dt - 1e-9)))
    t = t0 if t is None else t
    for k in range(k0, n_steps + 1):
        res = run.start_step(k, t, q, v, corrections, k == n_steps)     # also stage 1 of the step
        if k == n_steps:
            return
        t_next = t0 + (k + 1) * settings.dt if k + 1 < n_steps else t_end
        dt = t_next - t
        a1 = res.a
        v2 = v + 0.5 * dt * a1
        a2 = run.dynamics(t + 0.5 * dt, q + 0.5 * dt * v, v2)[0].a
        v3 = v + 0.5 * dt * a2
        a3 = run.dynamics(t + 0.5 * dt, q + 0.5 * dt * v2, v3)[0].a
        v4 = v + dt * a3
        a4 = run.dynamics(t_next, q + dt * v3, v4)[0].a
        q = q + dt / 6.0 * (v + 2.0 * v2 + 2.0 * v3 + v4)                    # [AG-36]
        v = v + dt / 6.0 * (a1 + 2.0 * a2 + 2.0 * a3 + a4)
        t = t_next
        q, v, corrections = run.end_step(t, q, v)
        run.completed(k + 1, t, q, v, corrections, t0, t_end, k + 1 == n_steps)


def _run_adaptive(run: _Run, settings: Adaptive, q, v, t0, t_end, k0: int = 0, t: float | None = None,
                  corrections: int = 0):
    """Adaptive integration between output times t0 + k·output_dt, from k = 0 or from output ``k0``."""
    from scipy.integrate import solve_ivp

    n = int(run.asm.n_dofs)
    output_dt = run.output_dt or settings.output_dt or (t_end - t0) / 100.0
    n_out = max(1, int(math.ceil((t_end - t0) / output_dt - 1e-9)))
    times = np.append(t0 + output_dt * np.arange(n_out), t_end)

    def rhs(t, y):
        return np.concatenate([y[n:], run.dynamics(t, y[:n], y[n:])[0].a])

    for k in range(k0, n_out + 1):
        t = times[k]
        run.start_step(k, t, q, v, corrections, k == n_out)
        if k == n_out:
            return
        sol = solve_ivp(rhs, (t, times[k + 1]), np.concatenate([q, v]), method=settings.method,
                        rtol=settings.rtol, atol=settings.atol, max_step=settings.max_step)
        if not sol.success:
            raise StateError(f"adaptive integration failed between t = {t:.9g} and {times[k + 1]:.9g} s: "
                             f"{sol.message}")
        q, v, corrections = run.end_step(times[k + 1], sol.y[:n, -1], sol.y[n:, -1])
        run.completed(k + 1, times[k + 1], q, v, corrections, t0, t_end, k + 1 == n_out)
