"""The recorder of a run: the histories of every recorded step (t, q, v, a, τ, λ, constraint force, rank,
violations, energies, fields, controller diagnostics) and the event log of rank changes, from which
(partial) :class:`~flexbody.io.results.Results` are built at any time.
"""
from __future__ import annotations

import logging


import numpy as np

from ..fem import fields as field_data
from ..linalg.rank import constraint_rank
from ..io.results import (_INTEGER_HISTORIES, Results)

log = logging.getLogger(__name__)


# ------------------------------------------------------------------------------------------- recording
class Recorder:
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
        by :func:`flexbody.io.results.read_parts`) with the event log and rank tracking of its checkpoint."""
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
