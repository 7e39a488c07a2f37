"""Results: histories of a run (load factors or times, coordinates, solver statistics); save and load.

A :class:`Results` holds what a solver computed; exporters (:mod:`flexbody.io`) turn it into files.
Arrays go to ``results.npz``; metadata and the event log to ``results.json``.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .errors import FlexbodyError


@dataclass
class Results:
    """Histories of a static or dynamic run.

    Attributes
    ----------
    kind : str
        "static" (``times`` are load factors) or "dynamic" (``times`` in s).
    times : ndarray (s,)
    q : ndarray (s, n_dofs)
        Generalized coordinates [m] at each recorded step.
    body_slices : dict[str, tuple[int, int]]
        Coordinate range of each body in q.
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
    events : list[dict]
        Events logged during the run (e.g. rank drops at singular configurations), JSON-serialisable.
    metadata : dict
        Solver settings and other JSON-serialisable facts about the run.
    """

    kind: str
    times: np.ndarray
    q: np.ndarray
    body_slices: dict
    iterations: list = field(default_factory=list)
    residuals: list = field(default_factory=list)
    reference: np.ndarray = None
    system: object = None
    v: np.ndarray = None
    histories: dict = field(default_factory=dict)
    events: list = field(default_factory=list)
    metadata: dict = field(default_factory=dict)

    @property
    def n_steps(self) -> int:
        return len(self.times)

    def _slice(self, body) -> slice:
        name = body if isinstance(body, str) else body.name
        if name not in self.body_slices:
            raise FlexbodyError(f"results have no body {name!r}; bodies: {sorted(self.body_slices)}")
        start, stop = self.body_slices[name]
        return slice(start, stop)

    def positions(self, body, step: int = -1) -> np.ndarray:
        """Nodal positions (n, 3) [m] of ``body`` (object or name) at ``step``."""
        return self.q[step, self._slice(body)].reshape(-1, 3)

    def displacements(self, body, step: int = -1) -> np.ndarray:
        """Nodal displacements (n, 3) [m] of ``body`` relative to the first recorded step's reference."""
        return self.positions(body, step) - self.reference[self._slice(body)].reshape(-1, 3)

    def save(self, directory) -> Path:
        """Write ``results.npz`` (arrays) and ``results.json`` (metadata) into ``directory``."""
        path = Path(directory)
        path.mkdir(parents=True, exist_ok=True)
        arrays = {"times": self.times, "q": self.q, "reference": self.reference,
                  "iterations": np.asarray(self.iterations, dtype=np.int64)}
        if self.v is not None:
            arrays["v"] = self.v
        arrays.update({_HISTORY + name: np.asarray(value) for name, value in self.histories.items()})
        np.savez_compressed(path / "results.npz", **arrays)
        meta = {"kind": self.kind, "body_slices": {k: [int(i) for i in v] for k, v in self.body_slices.items()},
                "residuals": [[float(r) for r in res] for res in self.residuals],
                "events": _jsonable(self.events), "metadata": _jsonable(self.metadata)}
        (path / "results.json").write_text(json.dumps(meta, indent=1))
        return path

    @classmethod
    def load(cls, directory) -> "Results":
        """Read results written by :meth:`save`."""
        path = Path(directory)
        try:
            arrays = np.load(path / "results.npz")
            meta = json.loads((path / "results.json").read_text())
        except (OSError, ValueError) as exc:
            raise FlexbodyError(f"cannot read results from {str(path)!r}: {exc}") from exc
        slices = {k: tuple(v) for k, v in meta["body_slices"].items()}
        histories = {key[len(_HISTORY):]: arrays[key] for key in arrays.files if key.startswith(_HISTORY)}
        return cls(kind=meta["kind"], times=arrays["times"], q=arrays["q"], body_slices=slices,
                   iterations=list(arrays["iterations"]), residuals=meta["residuals"],
                   reference=arrays["reference"], v=arrays["v"] if "v" in arrays.files else None,
                   histories=histories, events=meta.get("events", []), metadata=meta.get("metadata", {}))


_HISTORY = "history__"


def _jsonable(value):
    """Convert numpy scalars/arrays (also nested in dicts, lists, tuples) to plain JSON types."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    return value
