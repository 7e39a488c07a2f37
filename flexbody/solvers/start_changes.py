"""What making a run's start consistent changed: an initial state is never changed without a word.

``simulate`` puts q₀ on φ(q, t₀) = 0 and v₀ on Φv + φ_t = 0 by least-change corrections [AG-37] (``consistent_initial``
True, the default). A correction larger than round-off — ‖Δq‖∞ or ‖Δv‖∞ above :data:`ROUND_OFF` · max(1, ‖x₀‖∞) — is
reported: a WARNING naming the rows the given state violated, their residuals and the size of the change, and the
Results' ``metadata["start_corrections"]``. With ``consistent_initial="refuse"`` such a start is refused instead (a
StateError with the same facts); ``False`` runs from the state as given, and says so when it violates the
constraints (its first step then enforces them: ``metadata["start_violations"]``). A user with an angular velocity
rather than the rates of a rotation vector converts it first (``fb.Spherical.velocities``,
``fb.FreeFlyer.velocities``).
"""

from __future__ import annotations

import logging

import numpy as np

from ..errors import FlexbodyError, StateError
from .stabilization import worst_rows

log = logging.getLogger(__name__)

ROUND_OFF = 1e-9
"""Relative size of a correction of q₀ or v₀ below which it is round-off and is made without a word."""

MODES = (True, False, "refuse")
"""The values of ``simulate``'s ``consistent_initial``: correct and report, run as given, refuse."""

__all__ = ["ROUND_OFF", "MODES", "check_mode", "start_changes", "start_violations", "report", "report_violations"]


def check_mode(mode) -> None:
    """FlexbodyError unless ``mode`` is one of :data:`MODES`."""
    if not (mode is True or mode is False or (isinstance(mode, str) and mode == "refuse")):
        raise FlexbodyError(f"simulate: consistent_initial must be True, False or 'refuse', got {mode!r}")


def start_changes(model, t: float, q0: np.ndarray, v0: np.ndarray, q: np.ndarray, v: np.ndarray) -> dict:
    """The corrections from the given (q₀, v₀) to the consistent (q, v) that are larger than round-off, with the
    rows the given state violated: {"q": ‖Δq‖∞, "q_rows": text, "v": ‖Δv‖∞, "v_rows": text} (the keys of each
    corrected part only; empty when nothing but round-off changed)."""
    out: dict = {}
    dq, dv = float(np.max(np.abs(q - q0))), float(np.max(np.abs(v - v0)))
    if dq > ROUND_OFF * max(1.0, float(np.max(np.abs(q0)))):
        out.update(q=dq, q_rows=worst_rows(model, np.asarray(model.constraint_value(t, q0), dtype=float)))
    if dv > ROUND_OFF * max(1.0, float(np.max(np.abs(v0)))):
        residual = model.constraint_jacobian(t, q) @ v0 + np.asarray(model.constraint_rate(t, q), dtype=float)
        out.update(v=dv, v_rows=worst_rows(model, np.asarray(residual, dtype=float)))
    return out


def start_violations(model, t: float, q0: np.ndarray, v0: np.ndarray, ws=None) -> dict:
    """The residuals of a start run as given (``consistent_initial=False``) that are larger than round-off:
    {"q": ‖φ(q₀)‖∞, "q_rows": text, "v": ‖Φv₀ + φ_t‖∞, "v_rows": text} (the keys of each violated part only); from
    the start's workspace ``ws`` when there is one (else the model's evaluation interface)."""
    out: dict = {}
    if ws is not None and hasattr(ws, "constraint_rows"):
        phi, Phi, _, phi_t = ws.constraint_rows()
    else:
        phi, Phi, phi_t = model.constraint_value(t, q0), model.constraint_jacobian(t, q0), model.constraint_rate(t, q0)
    phi = np.asarray(phi, dtype=float)
    if phi.size and float(np.max(np.abs(phi))) > ROUND_OFF * max(1.0, float(np.max(np.abs(q0)))):
        out.update(q=float(np.max(np.abs(phi))), q_rows=worst_rows(model, phi))
    residual = np.asarray(Phi @ v0 + np.asarray(phi_t, dtype=float), dtype=float)
    if residual.size and float(np.max(np.abs(residual))) > ROUND_OFF * max(1.0, float(np.max(np.abs(v0)))):
        out.update(v=float(np.max(np.abs(residual))), v_rows=worst_rows(model, residual))
    return out


def report_violations(violations: dict) -> None:
    """Say that a start run as given violates the constraints, which its first step (its stabilisation, or the
    implicit step's constraint rows) then enforces."""
    if violations:
        facts = "; ".join(
            f"{'q0' if part == 'q' else 'v0'} violates rows {violations[part + '_rows']}"
            for part in ("q", "v")
            if part in violations
        )
        log.warning(
            "simulate: the run starts from (q0, v0) as given (consistent_initial=False), which violate the "
            "constraints: %s; the first step enforces them (Results.metadata['start_violations'])",
            facts,
        )


def report(changes: dict, mode) -> None:
    """Say what the start's corrections changed (a WARNING), or refuse the start (``mode`` "refuse": StateError)."""
    if not changes:
        return
    parts = []
    if "q" in changes:
        parts.append(
            f"q0 violated the position rows (largest residuals {changes['q_rows']}); ‖Δq‖∞ = {changes['q']:.3e}"
        )
    if "v" in changes:
        parts.append(
            f"v0 violated the velocity rows Φv + φ_t = 0 (largest residuals {changes['v_rows']}); "
            f"‖Δv‖∞ = {changes['v']:.3e}"
        )
    facts = "; ".join(parts)
    if mode == "refuse":
        raise StateError(
            f"simulate: the initial state is not consistent: {facts}. Start from a consistent state "
            "(fb.assemble_configuration, fb.project_velocity) or let simulate correct it (consistent_initial=True)"
        )
    log.warning(
        "simulate: the initial state was made consistent by least-change corrections: %s (Results.metadata"
        "['start_corrections']; consistent_initial='refuse' refuses such a start, False runs it as given)",
        facts,
    )
