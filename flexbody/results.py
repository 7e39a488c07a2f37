"""Results: histories of a run (load factors or times, coordinates, solver statistics); save and load.

A :class:`Results` holds what a solver computed; exporters (:mod:`flexbody.io`) turn it into files.
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
    """

    kind: str
    times: np.ndarray
    q: np.ndarray
    body_slices: dict
    iterations: list = field(default_factory=list)
    residuals: list = field(default_factory=list)
    reference: np.ndarray = None
    system: object = None

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
        np.savez_compressed(path / "results.npz", times=self.times, q=self.q, reference=self.reference,
                            iterations=np.asarray(self.iterations, dtype=np.int64))
        meta = {"kind": self.kind, "body_slices": self.body_slices,
                "residuals": [[float(r) for r in res] for res in self.residuals]}
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
        return cls(kind=meta["kind"], times=arrays["times"], q=arrays["q"], body_slices=slices,
                   iterations=list(arrays["iterations"]), residuals=meta["residuals"],
                   reference=arrays["reference"])
