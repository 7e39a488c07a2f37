"""Results: histories of a run (load factors or times, coordinates, solver statistics); save and load.

A :class:`Results` holds what a solver computed; exporters (:mod:`flexbody.io.series`) turn it into files.
Arrays go to ``results.npz``; metadata and the event log to ``results.json``. ``results.npz`` is a plain
NumPy archive (no pickles) whose members are deflated or stored: an array is compressed (zlib level 1)
only when samples of it compress to less than half (histories that are mostly zeros, counts, ranks);
the others (coordinates, velocities, accelerations: zlib shrinks them by only 14–29 % in the flagship
case 16, for 20 times the writing time) are stored as they are. :func:`numpy.load` reads both kinds, so
archives written before (every member deflated by :func:`numpy.savez_compressed`) load the same way.

A run written incrementally (``simulate(..., save_to=directory)``) has, while it is running or after it
was stopped, no ``results.npz`` but part files ``parts/part_00001.npz``, … (the rows recorded between two
writes: "times", "q", "v" and ``history__<name>``), the ``results.json`` that lists them under "parts"
with ``"complete": false``, and ``checkpoint.npz`` (the integrator's state, read by
:func:`flexbody.solvers.simulation.resume`). :meth:`Results.load` reads both layouts. Every file is written to a
temporary name in its directory and then renamed over the old one (:func:`os.replace`), so a reader, or
what a killed writer leaves, never has a half-written file (files are not fsync'ed: a crash of the
operating system itself may lose the last writes).

The rows recorded after part k are also appended, as each step is recorded, to the journal
``parts/journal_<k>.bin`` (t, q, v of each row as 1 + 2n float64, nothing else), so a run killed between two
writes loses no completed step: :meth:`Results.load` adds the journal's rows after the last part (their other
histories NaN, integer ones −1; ``metadata["journal_rows"]`` counts them). A record cut by the kill is ignored.
"""

from __future__ import annotations

import io
import json
import os
import tempfile
import zipfile
import zlib
from collections.abc import Iterable
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from ..deprecation import deprecated, renamed_keyword
from ..errors import FlexbodyError
from ..fem import fields as fields_module

if TYPE_CHECKING:
    from ..fem.flexible_body import FlexibleBody
    from ..reduced.body import ReducedBody


@dataclass
class Results:
    """Histories of a static or dynamic run.

    Attributes
    ----------
    kind : str
        "static" (``times`` are load factors), "dynamic" (``times`` in s) or "modal" (a mode's animation,
        ``times`` in periods).
    times : ndarray (s,)
    q : ndarray (s, n_dofs)
        Generalized coordinates [m] at each recorded step.
    slices : dict[str, slice]
        The columns of each part (rigid tree, reduced or flexible body) in q, by name (as ``asm.slices``;
        (start, stop) pairs are accepted and made slices).
    iterations : list[int]
        Newton iterations per step.
    residuals : list[list[float]]
        Residual norms of each step's iterations [N].
    reference : ndarray (n_dofs,)
        Reference coordinates q₀ [m], from which displacements are measured.
    system : object
        The system that produced the results (not saved).
    v : ndarray (s, n_dofs) or None
        Generalized velocities at each recorded step (dynamic runs).
    histories : dict[str, ndarray]
        Further time histories keyed by name, first axis = recorded step (e.g. "a", "tau", "lam",
        "constraint_force", "violation", "velocity_violation", "rank", "kinetic", "potential", "energy",
        "corrections"); see the producing solver for units.
    fields : dict[str, dict[str, ndarray]]
        Per-step fields of the flexible bodies, ``fields[body][name]`` with first axis = recorded step
        (names, shapes and units in :mod:`flexbody.fem.fields`: "displacement", "velocity", strain and
        stress at the nodes and per element); empty unless the run recorded them
        (``simulate(..., fields=True)``) or :meth:`store_fields` computed them.
    events : list[dict]
        Events logged during the run (e.g. rank drops at singular configurations), JSON-serialisable.
    metadata : dict
        Solver settings and other JSON-serialisable facts about the run.
    """

    kind: str
    times: np.ndarray
    q: np.ndarray
    slices: dict
    iterations: list = field(default_factory=list)
    residuals: list = field(default_factory=list)
    reference: np.ndarray | None = None
    system: Any = None  # the system or model of the run: any object with the evaluation interface
    v: np.ndarray | None = None
    histories: dict = field(default_factory=dict)
    fields: dict = field(default_factory=dict)
    events: list = field(default_factory=list)
    metadata: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.slices = {name: as_slice(name, span) for name, span in dict(self.slices).items()}

    @property
    def body_slices(self) -> dict[str, tuple[int, int]]:
        """Deprecated (0.3.0): part name → (start, stop); use ``results.slices[name]`` (a slice)."""
        deprecated("results.body_slices", "results.slices[name] (a slice)")
        return {name: (s.start, s.stop) for name, s in self.slices.items()}

    @property
    def n_steps(self) -> int:
        """Number of recorded steps s (the length of ``times``)."""
        return len(self.times)

    def _slice(self, body) -> slice:
        name = body if isinstance(body, str) else body.name
        if name not in self.slices:
            raise FlexbodyError(f"results have no body {name!r}; bodies: {sorted(self.slices)}")
        return self.slices[name]

    def positions(self, body: FlexibleBody | ReducedBody | str, step: int = -1) -> np.ndarray:
        """Nodal positions (n, 3) [m] of ``body`` (object or name) at ``step`` (a reduced body's from its frame
        and modal coordinates, through ``system``)."""
        reduced = self._reduced(body)
        if reduced is not None:
            return self.system.nodal_state(reduced, self.q[step])[0]
        return self.q[step, self._slice(body)].reshape(-1, 3)

    def _reference(self) -> np.ndarray:
        if self.reference is None:
            raise FlexbodyError("the results hold no reference coordinates to measure displacements from")
        return self.reference

    def _reduced(self, body):
        """The reduced body named like ``body`` in ``system``, or None."""
        name = body if isinstance(body, str) else body.name
        return next((b for b in getattr(self.system, "reduced", None) or [] if b.name == name), None)

    def body_state(
        self, body: FlexibleBody | ReducedBody | str, step: int = -1, velocity: bool = True
    ) -> tuple[FlexibleBody, np.ndarray, np.ndarray | None]:
        """(FlexibleBody, nodal positions (3N,), nodal velocities (3N,) or None) of a flexible or reduced ``body``
        at ``step``: what its fields are computed from (a reduced body's underlying FlexibleBody)."""
        v = self.v if velocity and self.v is not None and len(self.v) == self.n_steps else None
        reduced = self._reduced(body)
        if reduced is not None:
            x, xdot = self.system.nodal_state(reduced, self.q[step], None if v is None else v[step])
            return reduced.body, x.ravel(), None if xdot is None else xdot.ravel()
        part = self._slice(body)
        name = body if isinstance(body, str) else body.name
        return self._body(name), self.q[step, part], None if v is None else v[step, part]

    def displacements(self, body: FlexibleBody | ReducedBody | str, step: int = -1) -> np.ndarray:
        """Nodal displacements (n, 3) [m] of ``body`` at ``step`` relative to :attr:`reference` (static
        runs: the system's initial coordinates; dynamic runs: the first recorded q). The "displacement"
        field (:meth:`field`, the ParaView export) measures from the mesh points instead."""
        return self.positions(body, step) - self._reference()[self._slice(body)].reshape(-1, 3)

    def node_displacements(self, body: FlexibleBody, nodes: str | ArrayLike) -> np.ndarray:
        """Displacements (s, k, 3) [m] of the ``nodes`` (a node- or face-set name or indices, as
        :meth:`FlexibleBody.nodes` takes them) of the flexible ``body`` at every recorded step, relative to
        :attr:`reference`: with ``times`` the load factors of a static path, its load–displacement curves."""
        if isinstance(body, str) or not hasattr(body, "nodes"):
            raise FlexbodyError("node_displacements: give the FlexibleBody itself (its node sets name the nodes)")
        part = self._slice(body)
        index = body.nodes(nodes)
        steps = (self.q[:, part] - self._reference()[part]).reshape(self.n_steps, -1, 3)
        return steps[:, index]

    def field(self, body: FlexibleBody | ReducedBody | str, name: str, step: int = -1) -> np.ndarray:
        """The field ``name`` of ``body`` (object or name) at recorded ``step``: the recorded value, or,
        when the fields were not recorded, computed from q (and v) through ``system`` (names, shapes and
        units: :mod:`flexbody.fem.fields`)."""
        body_name = body if isinstance(body, str) else body.name
        self._slice(body_name)  # raises for an unknown body
        if name not in fields_module.FIELD_NAMES:
            raise FlexbodyError(f"unknown field {name!r}; fields: {', '.join(fields_module.FIELD_NAMES)}")
        recorded = self.fields.get(body_name, {})
        if name in recorded:
            return recorded[name][step]
        if name == "velocity" and (self.v is None or not len(self.v)):
            raise FlexbodyError(f"no velocity field: the {self.kind} results hold no velocities")
        flexible, x, xdot = self.body_state(body_name, step, velocity=name == "velocity")
        return fields_module.body_fields(flexible, x, xdot)[name]

    def store_fields(self, bodies: Iterable[FlexibleBody | str] | None = None) -> Results:
        """Compute the fields of every flexible body (or of ``bodies``, objects or names) at every recorded
        step into :attr:`fields` (saved with the results); returns self."""
        if self.system is None:
            raise FlexbodyError("store_fields: the results carry no system (set results.system to the model)")
        names = None if bodies is None else {b if isinstance(b, str) else b.name for b in bodies}
        chosen = [b for b in getattr(self.system, "bodies", None) or [] if names is None or b.name in names]
        slices = {b.name: self._slice(b.name) for b in chosen}
        v = self.v if self.v is not None and len(self.v) == self.n_steps else None
        rows = [
            fields_module.record_rows(chosen, slices, self.q[k], None if v is None else v[k])
            for k in range(self.n_steps)
        ]
        if chosen and rows:
            self.fields.update(fields_module.split({key: np.stack([r[key] for r in rows]) for key in rows[0]})[1])
        return self

    def _body(self, name: str):
        bodies = {b.name: b for b in getattr(self.system, "bodies", None) or []}
        if name not in bodies:
            raise FlexbodyError(
                f"fields of {name!r} cannot be computed: "
                + (
                    "the results carry no system (loaded results need results.system set to the model)"
                    if self.system is None
                    else "it is not a flexible body of the system"
                )
            )
        return bodies[name]

    def save(self, directory: str | Path) -> Path:
        """Write ``results.npz`` (arrays; only the histories that compress well are compressed, see the
        module) and ``results.json`` (metadata, ``"complete": true``) into ``directory``, each atomically."""
        path = writable_folder(directory, "Results.save")
        arrays = {
            "times": self.times,
            "q": self.q,
            "reference": self.reference,
            "iterations": np.asarray(self.iterations, dtype=np.int64),
        }
        if self.v is not None:
            arrays["v"] = self.v
        histories = {**self.histories, **fields_module.joined(self.fields)}
        arrays.update({_HISTORY + name: np.asarray(value) for name, value in histories.items()})
        meta = header(self.kind, self.slices, self.events, self.metadata, residuals=self.residuals)
        meta["complete"] = True
        try:
            save_npz(path / RESULTS_NPZ, arrays, compression="selective")
            write_text(path / RESULTS_JSON, json.dumps(meta, indent=1))
        except OSError as exc:  # e.g. the disk full: named, nothing half-written
            raise FlexbodyError(f"Results.save: cannot write into {str(path)!r}: {exc.strerror or exc}") from exc
        return path

    @classmethod
    def load(cls, directory: str | Path) -> Results:
        """Read results written by :meth:`save`, or the rows written so far by an incremental run
        (``simulate(..., save_to=directory)``) that is still running, was stopped or failed.

        ``metadata["complete"]`` says which: True when ``results.npz`` exists (also for directories written
        before incremental saving existed), False when the parts listed in ``results.json`` were
        concatenated (times strictly increasing; ``reference`` is the first recorded q).
        """
        path = Path(directory)
        try:
            meta = json.loads((path / RESULTS_JSON).read_text())
            if not isinstance(meta, dict):
                raise ValueError(f"{RESULTS_JSON} does not hold an object")
            complete = (path / RESULTS_NPZ).exists() or "parts" not in meta
            if complete:
                arrays = _read_npz(path / RESULTS_NPZ)
                histories = {key[len(_HISTORY) :]: arrays[key] for key in arrays if key.startswith(_HISTORY)}
            else:
                arrays, histories = read_parts(path, meta["parts"], int(meta.get("n_dofs") or 0))
                journaled = _add_journal(path, len(meta["parts"]), arrays, histories)
            slices = {k: slice(int(start), int(stop)) for k, (start, stop) in meta["body_slices"].items()}
            histories, fields = fields_module.split(histories)
            if complete:
                iterations, reference = list(arrays["iterations"]), arrays["reference"]
            else:
                iterations = [int(c) for c in histories.get("corrections", [])]
                reference = arrays["q"][0].copy() if len(arrays["q"]) else np.zeros(arrays["q"].shape[1])
            metadata = dict(meta.get("metadata", {}))
            metadata["complete"] = bool(complete)
            if not complete and journaled:
                metadata["journal_rows"] = journaled
            results = cls(
                kind=meta["kind"],
                times=arrays["times"],
                q=arrays["q"],
                slices=slices,
                iterations=iterations,
                residuals=meta["residuals"],
                reference=reference,
                v=arrays.get("v"),
                histories=histories,
                fields=fields,
                events=meta.get("events", []),
                metadata=metadata,
            )
        except (
            OSError,
            ValueError,
            KeyError,
            TypeError,
            AttributeError,
            IndexError,
            EOFError,
            zipfile.BadZipFile,
            zlib.error,
        ) as exc:  # a file missing, cut, damaged or not flexbody's
            raise FlexbodyError(f"cannot read results from {str(path)!r}: {type(exc).__name__}: {exc}") from exc
        problem = _inconsistency(results)
        if problem:
            raise FlexbodyError(f"results in {str(path)!r} are inconsistent (tampered or mixed files?): {problem}")
        return results


Results.__init__ = renamed_keyword("body_slices", "slices")(Results.__init__)  # type: ignore[method-assign]


def as_slice(name: str, span: Any) -> slice:
    """The columns ``span`` of the part ``name``: a slice, or a (start, stop) pair made one."""
    if isinstance(span, slice):
        return span
    try:
        start, stop = (int(i) for i in span)
    except (TypeError, ValueError):
        raise FlexbodyError(
            f"Results: the columns of {name!r} must be a slice or (start, stop), got {span!r}"
        ) from None
    return slice(start, stop)


def _inconsistency(r: Results) -> str:
    """What does not fit in loaded results (the rows of q, v and the histories against the times, non-finite
    rows, body slices that do not tile the coordinates), or "" when they fit."""
    times, q = np.asarray(r.times), np.asarray(r.q)
    if times.ndim != 1 or q.ndim != 2 or q.shape[0] != times.size:
        return f"{times.size} times but q of shape {q.shape}"
    n = q.shape[1]
    if r.v is not None and np.shape(r.v) != q.shape:
        return f"v of shape {np.shape(r.v)}, q of shape {q.shape}"
    reference_shape = () if r.reference is None else np.shape(r.reference)
    if reference_shape != (n,):
        return f"reference of shape {reference_shape} for {n} coordinates"
    for name, x in (("times", times), ("q", q), ("v", r.v)):
        if x is not None and x.dtype.kind == "f" and not np.all(np.isfinite(x)):
            bad = np.flatnonzero(~np.isfinite(x.reshape(len(times), -1)).all(axis=1))
            return f"{name} is not finite at row {int(bad[0])} of {len(times)}"
    if r.kind == "dynamic" and np.any(np.diff(times) <= 0):
        return f"times do not increase after row {int(np.flatnonzero(np.diff(times) <= 0)[0])}"
    for name, x in list(r.histories.items()) + [(f"{b}.{k}", x) for b, f in r.fields.items() for k, x in f.items()]:
        if np.ndim(x) == 0 or np.shape(x)[0] != times.size:
            return f"history {name!r} has {np.shape(x)[0] if np.ndim(x) else 0} rows for {times.size} times"
    pairs = [(s.start, s.stop) for s in r.slices.values()]
    if pairs and all(len(p) == 2 for p in pairs):
        covered = sorted(pairs)
        ends = [covered[0][0]] + [b for _, b in covered]
        if (
            covered[0][0] != 0
            or ends[-1] != n
            or any(a != e for (a, _), e in zip(covered, ends))
            or any(b < a for a, b in covered)
        ):
            return f"body slices {dict(zip(r.slices, pairs))} do not tile the {n} coordinates"
    elif any(not 0 <= i < n for p in pairs for i in p):
        return f"body slices {dict(zip(r.slices, pairs))} point outside the {n} coordinates"
    return ""


_HISTORY = "history__"
RESULTS_NPZ, RESULTS_JSON, PARTS, CHECKPOINT = "results.npz", "results.json", "parts", "checkpoint.npz"
INTEGER_HISTORIES = ("rank", "corrections")


def header(
    kind: str, slices: dict, events: list, metadata: dict, *, residuals=(), parts=None, n_dofs: int | None = None
) -> dict:
    """The content of ``results.json``: kind, body slices, residuals, events, metadata and, for an
    incremental run, the part files written so far (``"complete": false``) and the number of coordinates."""
    meta = {
        "kind": kind,
        "body_slices": {k: [int(s.start), int(s.stop)] for k, s in slices.items()},
        "residuals": [[float(r) for r in res] for res in residuals],
        "events": jsonable(events),
        "metadata": jsonable(metadata),
    }
    if parts is not None:
        meta.update(complete=False, parts=list(parts), n_dofs=n_dofs)
    return meta


def journal_name(index: int) -> str:
    """Path of the journal of the rows recorded after part ``index`` (0: before the first part)."""
    return f"{PARTS}/journal_{index:05d}.bin"


def read_journal(directory, first: int, n_dofs: int) -> np.ndarray:
    """Rows (r, 1 + 2n) [t, q, v] of the journals from index ``first`` on, in order; a record cut short is
    dropped."""
    width, blocks = 1 + 2 * n_dofs, []
    index = first
    while (file := Path(directory) / journal_name(index)).exists():
        raw = np.fromfile(file, dtype="<f8")
        blocks.append(raw[: raw.size - raw.size % width].reshape(-1, width))
        index += 1
    return np.concatenate(blocks) if blocks else np.zeros((0, width))


def _add_journal(path: Path, n_parts: int, arrays: dict, histories: dict) -> int:
    """Append to ``arrays`` ("times", "q", "v") the journal rows after the last part's time (pad the histories:
    NaN, integer ones −1); returns how many."""
    n = arrays["q"].shape[1] if arrays["q"].ndim == 2 else 0
    rows = read_journal(path, n_parts, n)
    last = arrays["times"][-1] if len(arrays["times"]) else -np.inf
    keep = np.flatnonzero(rows[:, 0] > last)
    if keep.size and np.any(np.diff(rows[keep, 0]) <= 0):
        keep = keep[: int(np.flatnonzero(np.diff(rows[keep, 0]) <= 0)[0]) + 1]
    rows, k = rows[keep], keep.size
    if not k:
        return 0
    arrays["times"] = np.concatenate([arrays["times"], rows[:, 0]])
    arrays["q"] = np.concatenate([arrays["q"], rows[:, 1 : 1 + n]])
    if "v" in arrays:
        arrays["v"] = np.concatenate([arrays["v"], rows[:, 1 + n :]])
    for key, value in histories.items():
        fill = -1 if value.dtype.kind in "iu" else np.nan
        histories[key] = np.concatenate([value, np.full((k, *value.shape[1:]), fill, dtype=value.dtype)])
    return k


def part_name(index: int) -> str:
    """Path of the ``index``-th part file (from 1) relative to the run's directory."""
    return f"{PARTS}/part_{index:05d}.npz"


def save_part(directory, index: int, times, q, v, histories: dict) -> str:
    """Write rows of an incremental run as part ``index``; returns its relative name."""
    arrays = {"times": np.asarray(times, dtype=float), "q": np.asarray(q), "v": np.asarray(v)}
    arrays.update({_HISTORY + name: np.asarray(value) for name, value in histories.items()})
    name = part_name(index)
    save_npz(Path(directory) / name, arrays)
    return name


def save_npz(path, arrays: dict, compression: str = "stored") -> None:
    """Write ``arrays`` as a NumPy ``.npz`` archive (no pickles; read by :func:`numpy.load`) to a temporary
    file in the target's directory, then :func:`os.replace` onto ``path``.

    ``compression``: "stored" (none, as :func:`numpy.savez`), "deflate" (every array, as
    :func:`numpy.savez_compressed`) or "selective" (an array is deflated at zlib level 1 only when samples
    of it compress to less than half, otherwise stored). Archives up to 32 MB are built in memory and
    written with one call.
    """
    if compression not in ("stored", "deflate", "selective"):
        raise FlexbodyError(f"save_npz: compression must be 'stored', 'deflate' or 'selective', got {compression!r}")
    arrays = {key: np.asanyarray(value) for key, value in arrays.items()}
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with _replacing(path, "wb") as stream:
        if sum(value.nbytes for value in arrays.values()) <= _IN_MEMORY:
            buffer = io.BytesIO()
            _write_npz(buffer, arrays, compression)
            stream.write(buffer.getbuffer())
        else:
            _write_npz(stream, arrays, compression)


_IN_MEMORY = 32 << 20  # bytes: archives up to this size are built in memory, then written at once
_SAMPLE = 32 << 10  # bytes per sample of the compressibility test (three: start, middle, end)


def _write_npz(stream, arrays: dict, compression: str) -> None:
    """The archive of ``np.savez`` (member ``key.npy`` per array, zip64) with the compression of each member
    chosen by ``compression`` (see :func:`save_npz`)."""
    method = zipfile.ZIP_STORED if compression == "stored" else zipfile.ZIP_DEFLATED
    level = 1 if compression == "selective" else None
    with zipfile.ZipFile(stream, "w", compression=method, compresslevel=level, allowZip64=True) as archive:
        for key, value in arrays.items():
            member = key + ".npy"
            if compression == "selective" and not _compresses(value):
                member = zipfile.ZipInfo(member)
                member.compress_type = zipfile.ZIP_STORED
            with archive.open(member, "w", force_zip64=True) as file:
                np.lib.format.write_array(file, value, allow_pickle=False)


def _compresses(value: np.ndarray) -> bool:
    """Whether zlib (level 1) shrinks samples of ``value``'s bytes (start, middle, end) to less than half."""
    if value.dtype.hasobject or value.nbytes == 0:
        return False
    raw = np.frombuffer(np.ascontiguousarray(value).data, dtype=np.uint8)
    if raw.size > 3 * _SAMPLE:
        middle = (raw.size - _SAMPLE) // 2
        raw = np.concatenate([raw[:_SAMPLE], raw[middle : middle + _SAMPLE], raw[-_SAMPLE:]])
    return len(zlib.compress(raw.tobytes(), 1)) < 0.5 * raw.size


def writable_folder(directory, who: str) -> Path:
    """``directory`` created if missing and checked writable by writing and removing a temporary file in it, so a
    read-only or impossible output folder is named before anything is computed; FlexbodyError otherwise."""
    path = Path(directory)
    try:
        path.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".flexbody-probe.", suffix=".tmp", dir=path)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise FlexbodyError(f"{who}: cannot write into {str(path)!r}: {exc.strerror or exc}") from exc
    return path


def write_text(path, text: str) -> None:
    """Write ``text`` to a temporary file next to ``path``, then :func:`os.replace` onto it."""
    with _replacing(Path(path), "w") as stream:
        stream.write(text)


@contextmanager
def _replacing(path: Path, mode: str):
    """A stream to a temporary file next to ``path`` that replaces ``path`` when the block succeeds
    (and is removed when it fails)."""
    fd, tmp = tempfile.mkstemp(prefix="." + path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, mode, encoding=None if "b" in mode else "utf-8") as stream:
            yield stream
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _inside(directory: Path, name) -> Path:
    """``directory / name`` for a part file ``name`` listed in a results.json; ValueError when the name is not a
    string or leads out of the directory (a results.json is data: it may not make the reader open other files)."""
    if not isinstance(name, str):
        raise ValueError(f"part file name {name!r} is not a string")
    path = directory / name
    if not path.resolve().is_relative_to(directory.resolve()):
        raise ValueError(f"part file {name!r} lies outside the results directory; refused")
    return path


def _read_npz(path) -> dict:
    """The arrays of an npz file; a file that is not a zip archive (numpy would speak of pickled data), and zipfile's
    rarer refusals of a damaged one (a member flagged as encrypted: a RuntimeError; one flagged with an unsupported
    feature: NotImplementedError) become a BadZipFile naming the file."""
    if Path(path).is_file() and not zipfile.is_zipfile(path):
        raise zipfile.BadZipFile(f"{Path(path).name} is not an npz archive (a zip file): damaged or not flexbody's")
    try:
        with np.load(path) as data:
            return {key: data[key] for key in data.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error):
        raise
    except Exception as exc:
        raise zipfile.BadZipFile(f"{Path(path).name}: {type(exc).__name__}: {exc}") from exc


def read_parts(directory, names, n_dofs: int) -> tuple[dict, dict]:
    """Rows of the part files ``names`` (relative to ``directory``) concatenated in order: ({"times", "q",
    "v"}, histories); a history is kept only if every part has it ("rank", "corrections" as integers)."""
    loaded = [_read_npz(_inside(Path(directory), name)) for name in names]
    if not loaded:
        return {"times": np.zeros(0), "q": np.zeros((0, n_dofs)), "v": np.zeros((0, n_dofs))}, {}
    keys = [key for key in loaded[0] if all(key in part for part in loaded[1:])]
    arrays = {key: np.concatenate([part[key] for part in loaded]) for key in keys}
    histories = {key[len(_HISTORY) :]: arrays.pop(key) for key in keys if key.startswith(_HISTORY)}
    for name in INTEGER_HISTORIES:
        if name in histories:
            histories[name] = histories[name].astype(np.int64)
    return arrays, histories


def jsonable(value):
    """Convert numpy scalars/arrays (also nested in dicts, lists, tuples) to plain JSON types."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    return value
