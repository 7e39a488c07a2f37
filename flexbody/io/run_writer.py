"""Writing a run while it runs: the observer that stores each batch of recorded rows as a part file, then
``results.json``, then the checkpoint from which a stopped run continues (layout in
:mod:`flexbody.io.results`), and at the end the complete results.

The files of a batch are written by one background thread while the run goes on (file-system calls
release the GIL), at most one batch at a time and always in the order part → ``results.json`` →
checkpoint; the stepping loop only hands over views of the recorded rows and the JSON text.
"""

from __future__ import annotations

import json
import logging
import shutil
from concurrent.futures import Future, ThreadPoolExecutor
from io import FileIO
from pathlib import Path

import numpy as np

from ..errors import FlexbodyError
from .results import (
    CHECKPOINT,
    PARTS,
    RESULTS_JSON,
    RESULTS_NPZ,
    Results,
    header,
    journal_name,
    jsonable,
    part_name,
    save_npz,
    save_part,
    writable_folder,
    write_text,
)

log = logging.getLogger(__name__)


def _size(n_bytes: float) -> str:
    """A byte count in words: '3.2 GB'."""
    for unit in ("B", "kB", "MB", "GB"):
        if n_bytes < 1000.0:
            return f"{n_bytes:.3g} {unit}"
        n_bytes /= 1000.0
    return f"{n_bytes:.3g} TB"


# ------------------------------------------------------------------------------------ saving as it runs
class RunWriter:
    """Writes a run into a directory while it runs (layout in :mod:`flexbody.io.results`).

    It reads the run's recorder (:class:`flexbody.solvers.recorder.Recorder`: ``rows``, ``dropped``, ``events``,
    ``metadata``, ``part_slices()``, ``asm.n_dofs``) and never changes it; each history in ``rows`` has a
    length and gives its rows ``[a:b]`` as an array whose rows never change once recorded (a
    :class:`~flexbody.solvers.recorder.Column`).

    :meth:`write` stores the rows recorded since the last write as a new part file, then
    ``results.json`` (listing the parts), then, given the integrator's state, ``checkpoint.npz``, each
    atomically and in this order; the checkpoint names how many parts (and rows) it continues, so
    whatever a kill leaves behind is consistent: :meth:`Results.load` reads the parts listed in the json,
    :func:`resume` the ones named by the checkpoint (later ones are written again). At the end of a
    successful run :meth:`finish` writes the complete ``results.npz`` and removes the parts and the
    checkpoint. Between two writes :meth:`journal` appends each recorded row's t, q, v to the journal of the
    rows after the last part (unbuffered: a SIGKILL loses no completed step); a part made obsolete by the next
    one is removed with its journal.

    The files of a write are written by a background thread while the run continues; :meth:`write` first
    waits for the previous write (so at most one is under way), and :meth:`flush`, :meth:`fail` and
    :meth:`finish` wait for it too. A write that failed raises its FlexbodyError from the next of these
    calls, and its rows are written again by the next write.
    """

    def __init__(self, directory, save_every: int, n_parts: int = 0, written: int = 0):
        self.path, self.save_every = Path(directory), int(save_every)
        self.n_parts, self.written = int(n_parts), int(written)  # parts and rows written
        self._thread: ThreadPoolExecutor | None = None
        self._pending: tuple[Future, int, int] | None = None  # write under way, (n_parts, written) before
        self.journaled = int(written)  # rows in parts or in the journal
        self._journal: FileIO | None = None  # open journal file
        self._journal_index = -1  # and its index

    @classmethod
    def create(cls, directory, save_every: int, expected_bytes: int = 0) -> RunWriter:
        """A writer into ``directory`` (created; the files of an earlier run there are removed); FlexbodyError
        before anything is computed when the folder cannot be written or its disk has less free space than the
        ``expected_bytes`` the run will write."""
        saver = cls(directory, save_every)
        writable_folder(saver.path, "simulate: save_to")
        free = shutil.disk_usage(saver.path).free
        if expected_bytes > free:
            raise FlexbodyError(
                f"simulate: save_to: the run will write about {_size(expected_bytes)} into "
                f"{str(saver.path)!r}, whose disk has {_size(free)} free; free space, save to "
                f"another disk or record fewer steps (record_every)"
            )
        try:
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
        self._close_journal()
        for file in parts.glob("journal_*.bin"):  # their rows are in parts, or are computed again
            file.unlink(missing_ok=True)
        self.journaled = self.written

    def journal(self, recorder) -> None:
        """Append the rows recorded since the last call (t, q, v) to the journal of the rows after the last part."""
        count = len(recorder.rows["t"])
        if count <= self.journaled:
            return
        if self._journal_index != self.n_parts or self._journal is None:
            self._close_journal()
            file = self.path / journal_name(self.n_parts)
            try:
                file.parent.mkdir(parents=True, exist_ok=True)
                self._journal = open(file, "ab", buffering=0)  # noqa: SIM115 (held open across steps, closed by _close_journal)
            except OSError as exc:
                raise FlexbodyError(f"cannot write the run to {str(self.path)!r}: {exc}") from exc
            self._journal_index = self.n_parts
        rows, a = recorder.rows, self.journaled
        block = np.column_stack([rows["t"][a:count], rows["q"][a:count], rows["v"][a:count]])
        try:
            self._journal.write(block.astype("<f8").tobytes())
        except OSError as exc:
            raise FlexbodyError(f"cannot write the run to {str(self.path)!r}: {exc}") from exc
        self.journaled = count

    def _close_journal(self) -> None:
        if self._journal is not None:
            self._journal.close()
        self._journal, self._journal_index = None, -1

    def forget_after_checkpoint(self, recorder) -> None:
        """On resuming: list only the checkpoint's parts in ``results.json``, then remove later parts."""
        self.write(recorder)
        self.flush()
        self.prune()

    def due(self, recorder) -> bool:
        return len(recorder.rows["t"]) - self.written >= self.save_every

    def write(self, recorder, state: dict | None = None, arrays: dict | None = None) -> None:
        """Write the new rows and ``results.json``; with the integrator's ``state`` (JSON scalars) and
        ``arrays`` also the checkpoint, which must continue the run right after the last recorded row.
        The files are written in the background (see the class); this waits for the previous write."""
        self.flush()
        n = int(recorder.asm.n_dofs)
        count = len(recorder.rows["t"])
        before = (self.n_parts, self.written)
        part = None
        if count > self.written or self.n_parts == 0:
            part = {
                k: v[self.written : count]
                for k, v in recorder.rows.items()
                if k not in recorder.dropped and len(v) == count
            }
            self.n_parts, self.written = self.n_parts + 1, count
            self.journaled = max(self.journaled, count)  # rows in a part need no journal
        meta = header(
            "dynamic",
            recorder.part_slices(),
            recorder.events,
            recorder.metadata,
            parts=[part_name(i) for i in range(1, self.n_parts + 1)],
            n_dofs=n,
        )
        text = json.dumps(meta, indent=1)
        checkpoint = None
        if state is not None:
            assert arrays is not None  # a checkpoint's arrays come with its state
            state = {
                **state,
                "n_parts": self.n_parts,
                "rows": self.written,
                "rank0": recorder.rank0,
                "rank_prev": recorder.rank_prev,
                "dropped": sorted(recorder.dropped),
                "events": recorder.events,
                "t_last": recorder.t_last,
            }
            checkpoint = {
                "state": np.array(json.dumps(jsonable(state))),
                **{k: np.array(v, copy=True) for k, v in arrays.items()},
            }
        if self._thread is None:
            self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="flexbody-run-writer")
        self._pending = (self._thread.submit(self._store, self.n_parts, part, text, checkpoint), *before)

    def _store(self, index: int, part: dict | None, text: str, checkpoint: dict | None) -> None:
        """The files of one write, in order (run by the writing thread)."""
        if part is not None:
            save_part(
                self.path,
                index,
                part["t"],
                part["q"],
                part["v"],
                {k: v for k, v in part.items() if k not in ("t", "q", "v")},
            )
        write_text(self.path / RESULTS_JSON, text)
        if part is not None:  # its rows were journaled after part index − 1
            (self.path / journal_name(index - 1)).unlink(missing_ok=True)
        if checkpoint is not None:
            save_npz(self.path / CHECKPOINT, checkpoint)

    def flush(self) -> None:
        """Wait for the write under way. If it failed, its rows count as not written and the error is
        raised (a FlexbodyError for a file-system error)."""
        if self._pending is None:
            return
        future, n_parts, written = self._pending
        error = future.exception()  # waits; an interrupt here leaves the write pending
        self._pending = None
        if error is not None:
            self.n_parts, self.written = n_parts, written
            if isinstance(error, OSError):
                raise FlexbodyError(f"cannot write the run to {str(self.path)!r}: {error}") from error
            raise error

    def close(self) -> None:
        """Wait for the write under way and stop the writing thread (a later write starts it again)."""
        try:
            self.flush()
        finally:
            self._close_journal()
            if self._thread is not None:
                self._thread.shutdown(wait=True)
                self._thread = None

    def fail(self, recorder) -> None:
        """After a failure: write the rows not yet written (the checkpoint stays at the last save)."""
        for attempt in (self.flush, lambda: self.write(recorder), self.close):
            try:
                attempt()
            except FlexbodyError as exc:
                log.error("%s", exc)

    def finish(self, results: Results) -> None:
        """Write the complete results and remove the parts and the checkpoint."""
        self.close()
        try:
            results.save(self.path)
            (self.path / CHECKPOINT).unlink(missing_ok=True)
            self.n_parts = 0
            self.prune()
            if (self.path / PARTS).is_dir() and not any((self.path / PARTS).iterdir()):
                (self.path / PARTS).rmdir()
        except OSError as exc:
            raise FlexbodyError(f"cannot write the results to {str(self.path)!r}: {exc}") from exc
