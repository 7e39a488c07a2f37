"""The recorder of a run: the histories of every recorded step (t, q, v, a, τ, λ, constraint force, rank,
violations, energies, fields, controller diagnostics) and the event log of rank changes, from which
(partial) :class:`~flexbody.io.results.Results` are built at any time.

Each history is a :class:`Column`: its rows are copied into a preallocated array (grown by doubling), so
recording a step copies each value once, and the writer (:class:`flexbody.io.run_writer.RunWriter`) and
:meth:`Recorder.results` read contiguous views of the rows instead of stacking lists of arrays.
"""

from __future__ import annotations

import logging

import numpy as np

from ..deprecation import deprecated
from ..errors import FlexbodyError, StateError
from ..fem import fields as field_data
from ..io.results import INTEGER_HISTORIES, Results
from ..linalg.csr_products import product
from ..linalg.rank import constraint_rank

log = logging.getLogger(__name__)


# ------------------------------------------------------------------------------------------- histories
class Column:
    """The rows of one recorded quantity (all of one shape, float) in a preallocated array, grown by doubling.

    ``len(column)`` is the number of rows; ``column[i]`` and ``column[a:b]`` index the rows (views of the
    buffer: rows once written never change); :meth:`array` is the view of every row, shape (rows, *shape).
    The shape is ``shape``, or that of the first row appended.
    """

    __slots__ = ("_capacity", "_count", "_data", "shape")

    def __init__(self, shape: tuple | None = None, capacity: int = 64):
        self.shape: tuple[int, ...] | None = None if shape is None else tuple(int(i) for i in shape)
        self._capacity = max(int(capacity), 1) if self.shape is not None else 0
        self._data = np.empty((self._capacity, *self.shape)) if self.shape is not None else np.empty(0)  # no rows yet
        self._count = 0

    @classmethod
    def of(cls, rows) -> Column:
        """A column holding the rows of ``rows`` (array-like (s, *shape), copied)."""
        rows = np.asarray(rows, dtype=float)
        column = cls(rows.shape[1:], capacity=max(64, len(rows)))
        column._data[: len(rows)] = rows
        column._count = len(rows)
        return column

    def append(self, value) -> None:
        """Copy ``value`` (its shape must be the column's) into the next row."""
        n = self._count
        if type(value) is not float:  # a float row of shape () needs no conversion
            value = np.asarray(value, dtype=float)
            if value.shape != self.shape:
                self._make_room(value.shape)
        elif self.shape != ():
            self._make_room(())
        if n == self._capacity:  # the shape is known by now (set above for a column's first row)
            self._reserve(2 * self._capacity)
        self._data[n] = value
        self._count = n + 1

    def extend(self, rows) -> None:
        """Copy ``rows`` (s, *shape) into the next s rows."""
        rows = np.asarray(rows, dtype=float)
        n, count = self._count, len(rows)
        if self.shape != rows.shape[1:]:
            self._make_room(rows.shape[1:])
        if n + count > self._capacity:
            self._reserve(max(2 * self._capacity, n + count))
        self._data[n : n + count] = rows
        self._count = n + count

    def _make_room(self, shape: tuple) -> None:
        if self.shape is None:
            self.shape, self._capacity = shape, 64
            self._data = np.empty((64, *shape))
        elif shape != self.shape:
            raise FlexbodyError(f"recorder: a row of shape {shape} in a history of rows of shape {self.shape}")
        if self._count == self._capacity:
            self._reserve(2 * self._capacity)

    def _reserve(self, capacity: int) -> None:
        """Grow the buffer to ``capacity`` rows, keeping the rows written."""
        assert self.shape is not None  # a buffer grows once its rows' shape is known
        grown = np.empty((capacity, *self.shape))
        grown[: self._count] = self._data[: self._count]
        self._data, self._capacity = grown, capacity

    def array(self) -> np.ndarray:
        """Every row, (rows, *shape) (a view; (0,) before the first row of a column of unknown shape)."""
        return np.zeros(0) if self.shape is None else self._data[: self._count]

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, index):
        return self.array()[index]


class Columns(dict):
    """The histories of a run by name: a dict of :class:`Column`. ``setdefault(key)`` returns the column
    ``key``, made empty if missing (a default given is ignored: ``rows.setdefault(key, []).append(value)``
    records a value as with lists)."""

    def setdefault(self, key, default=None) -> Column:
        column = self.get(key)
        if column is None:
            column = self[key] = Column()
        return column


def _norm(x) -> float:
    """‖x‖₂ as :func:`numpy.linalg.norm` computes it (√(x·x), the same bits) without its dispatch."""
    x = np.asarray(x, dtype=float).ravel()
    return np.sqrt(x @ x)


def state_columns(t, q, v, *, a, tau, lam, force, rank, violation, velocity_violation, corrections) -> dict:
    """The histories every recorded state starts with, in the order :meth:`Recorder.record` gives them, of one state or
    of several (each value then with a leading axis of states, as :meth:`Recorder.extend` takes them)."""
    return {
        "t": t,
        "q": q,
        "v": v,
        "a": a,
        "tau": tau,
        "lam": lam,
        "constraint_force": force,
        "rank": rank,
        "violation": violation,
        "velocity_violation": velocity_violation,
        "corrections": corrections,
    }


# ------------------------------------------------------------------------------------------- energy watch
ENERGY_GROWTH = 10.0
"""Energy gain, in units of the first state's energy content, that stops a run without inputs (:class:`EnergyWatch`)."""

ENERGY_FLOOR = 1e-15
"""Gain [J] below which the watch sees round-off, not an explosion: a start with no energy at all (a body at rest at
the origin of the potential) has a content of 0, which its first round-off would otherwise exceed."""


class EnergyWatch:
    """Stops a run whose energy explodes, at the first recorded state that shows it, before that state is recorded.

    A run without inputs — no controller, τ held at zero, no user force without a potential — whose rheonomic rows
    do not move (φ_t = 0) cannot gain energy: its E = K + V stays at E₀ up to the integration error, or falls
    (Kelvin–Voigt, dampers, numerical damping). A state that gained more than :data:`ENERGY_GROWTH` times the first
    state's energy content S₀ = max(|E₀|, K₀, |V₀|) (and more than :data:`ENERGY_FLOOR`), and more than half its
    own (max(K, |V − V₀|): an accurate run's error is a small part of the energy it moves, an explosion's gain is all
    of it), comes from an unstable integration (an explicit step beyond the stable one, a diverging implicit run):
    :meth:`check` raises a StateError naming the time and the energies. The watch stops for good at the first state
    whose φ_t is not zero (a driver does work)."""

    def __init__(self):
        self.active, self.first = True, None

    def restore(self, rows: dict) -> None:
        """Continue after the recorded ``rows`` (the histories of a resumed run): E₀ and S₀ from the first."""
        kinetic, potential = rows.get("kinetic"), rows.get("potential")
        if kinetic is not None and potential is not None and len(kinetic):
            self._start(float(kinetic[0]), float(potential[0]))

    def _start(self, kinetic: float, potential: float) -> None:
        energy = kinetic + potential
        self.first = ((energy, potential), max(abs(energy), kinetic, abs(potential)))

    def check(self, t: float, kinetic: float, potential: float, moving: bool) -> None:
        if not self.active:
            return
        if moving:
            self.active = False
            return
        if self.first is None:
            self._start(kinetic, potential)
            return
        (e0, v0), content = self.first
        energy = kinetic + potential
        gain = energy - e0
        if not np.isfinite(energy) or (
            gain > max(ENERGY_GROWTH * content, ENERGY_FLOOR) and gain > 0.5 * max(kinetic, abs(potential - v0))
        ):
            raise StateError(
                f"simulate: at t = {t:.9g} s the energy grew to {energy:.6g} J from {e0:.6g} J, more than "
                f"{ENERGY_GROWTH:g} times the first state's energy content ({content:.3g} J), in a run "
                f"without inputs: the integration is unstable; use a smaller step (RK4) or "
                f"GeneralizedAlpha. The results hold the states before t"
            )


# ------------------------------------------------------------------------------------------- recording
class Recorder:
    """Collects the histories and the event log of a run; builds (partial) Results at any time.

    ``rows`` holds the histories (:class:`Columns`; "t", "q", "v", then the others in the order first
    recorded); :meth:`results` returns views of them, not copies.
    """

    def __init__(self, asm, tolerances, singular_tol, metadata: dict, controller=None):
        self.asm, self.metadata, self.controller = asm, metadata, controller
        self.dropped: set = set()
        self.rtol, self.atol = tolerances
        self.singular_tol = singular_tol
        n = int(asm.n_dofs)
        self.rows = Columns(t=Column(()), q=Column((n,)), v=Column((n,)))
        self.events: list[dict] = []
        self.rank0 = self.rank_prev = None
        self.t_last = float("nan")
        self.field_bodies = list(getattr(asm, "bodies", None) or []) if metadata.get("fields") else []
        self.energy_watch: EnergyWatch | None = None  # set by simulate for runs without inputs

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
        event = {
            "t": float(t),
            "kind": kind,
            "rank": int(rank),
            "previous_rank": int(self.rank_prev),
            "initial_rank": int(self.rank0),
            "redundant_rows": [int(i) for i in report.redundant_rows],
            "redundant_labels": list(report.redundant_labels or []),
            "smallest_singular_value": float(s.min()) if s.size else 0.0,
            "tol": float(report.tol),
        }
        self.events.append(event)
        log.info(
            "t = %.6g s: %s, rank of the constraint Jacobian %d -> %d (smallest singular value %.3e, "
            "redundant rows %s)",
            t,
            kind,
            self.rank_prev,
            rank,
            event["smallest_singular_value"],
            event["redundant_labels"] or event["redundant_rows"],
        )
        self.rank_prev = rank

    def record(self, t, q, v, res, *, tau, terms, corrections, ws=None, contacts=None):
        """Append the row of the state (t, q, v): its response ``res`` (a, λ, Φᵀλ, rank), the input τ,
        the constraint ``terms`` (φ, Φ, φ_t), the correction count, the energies (from the state's workspace
        ``ws``), the fields (when recorded), the contacts' gaps, forces and slip speeds (when the system has
        contacts; ``contacts``: those of the unilateral contacts, after the compliant ones) and the controller's
        diagnostics (each value is copied)."""
        asm = self.asm
        rate = product(terms.Phi, v) + terms.phi_t
        values = state_columns(
            t,
            q,
            v,
            a=res.a,
            tau=tau,
            lam=res.lam,
            force=res.constraint_force,
            rank=res.rank,
            violation=_norm(terms.phi),
            velocity_violation=_norm(rate),
            corrections=corrections,
        )
        if hasattr(asm, "energy"):
            kinetic, potential = asm.energy(q, v) if ws is None else ws.energy()
            if self.energy_watch is not None:
                self.energy_watch.check(t, kinetic, potential, bool(np.any(terms.phi_t)))
            values.update(kinetic=kinetic, potential=potential, energy=kinetic + potential)
        if self.field_bodies:
            values.update(field_data.record_rows(self.field_bodies, self.part_slices(), q, v))
        if getattr(asm, "forces", None) and asm.forces.contacts:  # their gaps, forces and slip, from the workspace
            values.update(asm.forces.contact_rows(ws if ws is not None else asm.workspace(t, q, v)))
        for key, value in (contacts or {}).items():  # the unilateral contacts' rows after the compliant ones
            values[key] = np.concatenate([values[key], value]) if key in values else value
        rows = self.rows
        for key, value in values.items():
            column = rows.get(key)
            (rows.setdefault(key) if column is None else column).append(value)
        if self.controller is not None:
            self._record_controller(len(rows["t"]))

    def extend(self, columns: dict, moving=None) -> None:
        """Append the rows of several steps at once: ``columns`` maps each history, in the order :meth:`record` and
        :meth:`append` give them for one step, to its rows (s, *shape); ``moving`` (s,) whether a rheonomic row
        moves at each (for the energy watch). A row the energy watch refuses is not appended, nor those after it."""
        failure, count = None, len(columns["t"])
        if self.energy_watch is not None and "kinetic" in columns:
            for i, (t, kinetic, potential) in enumerate(zip(columns["t"], columns["kinetic"], columns["potential"])):
                try:
                    self.energy_watch.check(
                        float(t), float(kinetic), float(potential), bool(moving is not None and moving[i])
                    )
                except StateError as exc:
                    failure, count = exc, i
                    break
        rows = self.rows
        for key, value in columns.items():
            column = rows.get(key)
            (rows.setdefault(key) if column is None else column).extend(value[:count])
        if failure is not None:
            raise failure

    def append(self, key: str, value) -> None:
        """Append ``value`` to the history ``key`` at the row recorded last (integrator statistics such as
        "dt" or "newton_iterations")."""
        self.rows.setdefault(key).append(value)

    def _record_controller(self, count: int) -> None:
        """Controller diagnostics (task coordinates, desired values, errors, f*, τ_k, …) at the recorded
        state; a quantity missing at some step or changing shape is dropped with a log message."""
        for key, given in self.controller.diagnostics.items():
            if key in self.dropped:
                continue
            value = np.asarray(given, dtype=float)
            rows = self.rows.get(key)
            rows = self.rows.setdefault(key) if rows is None else rows
            if len(rows) != count - 1 or (len(rows) and rows.shape != value.shape):
                self.dropped.add(key)
                log.info("controller history %r dropped: not recorded at every step with one shape", key)
                continue
            rows.append(value)

    def part_slices(self) -> dict[str, slice]:
        """Part name → its slice of q, from the model's ``slices`` (a model without them has none; the 0.2
        ``body_slices`` of (start, stop) pairs is read with a warning)."""
        slices = getattr(self.asm, "slices", None)
        if slices is None and getattr(self.asm, "body_slices", None) is not None:
            deprecated("a model's body_slices (name → (start, stop))", "slices (name → slice)")
            slices = {name: slice(*span) for name, span in self.asm.body_slices.items()}
        return {getattr(part, "name", part): s for part, s in (slices or {}).items()}

    def restore(self, arrays: dict, histories: dict, state: dict) -> None:
        """Continue after the rows of a saved run (``arrays`` "times", "q", "v" and ``histories``, as read
        by :func:`flexbody.io.results.read_parts`) with the event log and rank tracking of its checkpoint."""
        self.rows = Columns(t=Column.of(arrays["times"]), q=Column.of(arrays["q"]), v=Column.of(arrays["v"]))
        for key, value in histories.items():
            self.rows[key] = Column.of(value)
        self.events = list(state["events"])
        self.dropped = set(state["dropped"])
        self.rank0, self.rank_prev, self.t_last = state["rank0"], state["rank_prev"], float(state["t_last"])

    def results(self) -> Results:
        """The Results of the rows recorded so far (t, q, v and the histories are views of the rows)."""
        n = int(self.asm.n_dofs)
        count = len(self.rows["t"])
        rows = {k: v.array() for k, v in self.rows.items() if k not in self.dropped and len(v) == count}
        q = rows["q"]
        slices = self.part_slices()
        histories, recorded_fields = field_data.split({k: v for k, v in rows.items() if k not in ("t", "q", "v")})
        for key in INTEGER_HISTORIES:
            if key in histories:
                histories[key] = histories[key].astype(np.int64)
        return Results(
            kind="dynamic",
            times=rows["t"].astype(float),
            q=q,
            slices=slices,
            iterations=[int(c) for c in histories.get("corrections", [])],
            reference=q[0].copy() if len(q) else np.zeros(n),
            system=self.asm,
            v=rows["v"],
            histories=histories,
            fields=recorded_fields,
            events=list(self.events),
            metadata=dict(self.metadata),
        )
