"""The workspace of a state for any model a run visits: an assembled system's own
(:meth:`flexbody.system.AssembledSystem.workspace`), or, for a model with only the plain evaluation interface
(``terms(t, q, v)``, ``constraint_value(t, q)``, ``constraint_jacobian(t, q)``, ``constraint_rate(t, q)`` and
optionally ``energy(q, v)``; the hand-written models of the tests), a :class:`ModelWorkspace` that calls each of
those functions at most once per state. Integrators, statics and controllers read every term of a state from the
workspace they made for it, whichever kind it is.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..linalg.rank import dense_jacobian, independent_rows

__all__ = ["workspace_of", "ModelWorkspace"]


def workspace_of(model: Any, t: float, q: np.ndarray, v: np.ndarray | None = None) -> Any:
    """The workspace of the state (t, q, v) (v None: at rest) of ``model``."""
    make = getattr(model, "workspace", None)
    if make is not None:
        return make(t, q, v)
    q = np.array(q, dtype=float)
    return ModelWorkspace(model, t, q, np.zeros_like(q) if v is None else np.array(v, dtype=float))


class ModelWorkspace:
    """The terms of one state of a model with the plain evaluation interface (module docstring), each asked of the
    model once: :meth:`terms`, :meth:`constraint_rows` (φ, Φ, None, φ_t: the bias comes with :meth:`terms`),
    :meth:`energy`; :meth:`with_velocity` shares the rows of (t, q)."""

    def __init__(self, model: Any, t: float, q: np.ndarray, v: np.ndarray, rows: dict | None = None):
        self.asm, self.t, self.q, self.v = model, float(t), q, v
        self._rows: dict = {} if rows is None else rows
        self._terms: dict = {}

    def with_velocity(self, v: np.ndarray) -> ModelWorkspace:
        """The workspace of (t, q, ``v``), sharing this one's φ, Φ and φ_t."""
        return ModelWorkspace(self.asm, self.t, self.q, np.array(v, dtype=float), self._rows)

    def terms(self) -> Any:
        """The model's ``terms(t, q, v)`` (M, h, Phi, bias, phi, phi_t)."""
        if "terms" not in self._terms:
            self._terms["terms"] = self.asm.terms(self.t, self.q, self.v)
        return self._terms["terms"]

    def constraint_rows(self, *, jacobian: bool = True) -> tuple[np.ndarray, Any, None, np.ndarray]:
        """(φ (m,), Φ (m, n) or None without ``jacobian``, None, φ_t (m,))."""
        rows = self._rows
        if "phi" not in rows:
            rows["phi"] = np.asarray(self.asm.constraint_value(self.t, self.q), dtype=float)
            rows["phi_t"] = np.asarray(self.asm.constraint_rate(self.t, self.q), dtype=float)
        if jacobian and "Phi" not in rows:
            rows["Phi"] = self.asm.constraint_jacobian(self.t, self.q)
        return rows["phi"], rows.get("Phi") if jacobian else None, None, rows["phi_t"]

    def independent_rows(self, rtol: float, atol: float, *, position: bool = False, if_kept: bool = False):
        """The independent rows of the model's (dense) Φ (:func:`~flexbody.linalg.rank.independent_rows`), made
        once per configuration (a model without velocity-level rows: ``position`` changes nothing)."""
        key = ("independent_rows", rtol, atol)
        if if_kept or key in self._rows:
            return self._rows.get(key)
        Phi = dense_jacobian(self.constraint_rows()[1], int(self.asm.n_dofs))
        self._rows[key] = independent_rows(Phi, rtol, atol)
        return self._rows[key]

    def energy(self) -> tuple[float, float]:
        """The model's ``energy(q, v)``: (kinetic, potential) [J]."""
        if "energy" not in self._terms:
            self._terms["energy"] = self.asm.energy(self.q, self.v)
        return self._terms["energy"]
