"""Constraint stabilisation of explicit runs [AG-37, AG Sec. VI]: Newton–Raphson position correction
q ← q − Φ⁺φ(q) and the velocity projection v ← v − Φ⁺(Φ v + φ_t) (Φ⁺ the SVD pseudoinverse with the rank
convention of :mod:`flexbody.linalg.rank`, so both work at singular configurations and with redundant
rows), Baumgarte's φ̈ + 2α φ̇ + β² φ = 0, and the assembly of a configuration that satisfies φ(q, t) = 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ..deprecation import deprecated, renamed_keyword
from ..errors import ConvergenceError, FlexbodyError, StateError
from ..linalg.rank import DENSE_LIMIT, GRAM_RTOL_FLOOR, constraint_svd, dense_jacobian
from ..linalg.rank import resolve_tolerances as _tolerances
from ..system.description import as_assembled
from .workspaces import workspace_of

if TYPE_CHECKING:
    from ..system import AssembledSystem, System


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
            raise FlexbodyError(
                "PositionCorrection: need tol > 0 and 0 <= min_iterations <= max_iterations, max_iterations >= 1"
            )


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


def finite(name: str, value, t: float) -> np.ndarray:
    arr = np.asarray(value, dtype=float)
    if not np.isfinite(arr).all():
        bad = np.flatnonzero(~np.isfinite(arr.ravel()))
        raise StateError(f"non-finite {name} at t = {t:.9g} s (entries {bad[:8].tolist()})")
    return arr


def worst_rows(asm, phi: np.ndarray, count: int = 3) -> str:
    """The ``count`` rows of largest |φ| as text: their labels and values (the rows a failed solve could not hold)."""
    labels = list(getattr(asm, "row_labels", None) or [f"row {i}" for i in range(phi.size)])
    order = np.argsort(-np.abs(phi))[:count]
    return ", ".join(f"{labels[i]!r} ({phi[i]:.3e})" for i in order)


# -------------------------------------------------------------------------- consistent configurations
def _position_rows(model):
    """Indices of the rows with a position value (all but the Pfaffian ones), or None for all rows."""
    velocity = getattr(model, "velocity_rows", None)
    return None if velocity is None or not np.any(velocity) else model.holonomic_rows


def position_value(ws) -> np.ndarray:
    """φ(q, t) of the position rows at the workspace ``ws``."""
    phi = np.asarray(ws.constraint_rows(jacobian=False)[0], dtype=float)
    rows = _position_rows(ws.asm)
    return phi if rows is None else phi[rows]


def _position_jacobian(ws):
    """Φ of the position rows at ``ws`` (velocity-level rows say nothing about positions)."""
    Phi = ws.constraint_rows()[1]
    rows = _position_rows(ws.asm)
    return Phi if rows is None else Phi[rows]


@renamed_keyword("asm", "model")
def assemble_configuration(
    model: System | AssembledSystem,
    t: float | ArrayLike,
    q_guess: ArrayLike | None = None,
    *args: Any,
    fixed: Sequence[int] | None = None,
    tol: float = 1e-12,
    max_iterations: int = 50,
    rtol: float | None = None,
    atol: float | None = None,
) -> np.ndarray:
    """Coordinates q near ``q_guess`` with φ(q, t) = 0, by Newton iteration q ← q − Φ⁺φ(q) [AG-37] (on the
    position rows: velocity-level Pfaffian rows constrain velocities only).

    Parameters
    ----------
    model : System, AssembledSystem, or a model with ``n_dofs``, ``constraint_value(t, q)`` and
        ``constraint_jacobian(t, q)`` (a System is assembled first)
    t : float
        Time [s] (rheonomic constraints).
    q_guess : array (n_dofs,)
        Starting guess [model units].
    fixed : sequence of int, optional
        Coordinates kept at their guessed value (e.g. a crank angle); only the others are solved for,
        with the minimum-norm correction in those coordinates.
    tol : float
        Convergence tolerance on ‖φ‖ (units of the constraint rows).
    max_iterations : int
        Newton iterations allowed.
    rtol, atol : float, optional
        Singular values of Φ below max(rtol·σ_max, atol) are dropped in Φ⁺ (:mod:`flexbody.linalg.rank`).

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

    The order (model, q_guess, t, fixed, tol, max_iterations) of 0.2 is deprecated (one order everywhere: the model,
    then t, q, v); it is recognised by q_guess in the second place and works, with a warning, until 0.4.0.
    """
    if np.ndim(t) > 0:  # the 0.2 order (model, q_guess, t=0, fixed, tol, max_iterations)
        deprecated("assemble_configuration(model, q_guess, t)", "assemble_configuration(model, t, q_guess)")
        given = [q_guess, *args]  # the 0.2 positional t, fixed, tol, max_iterations
        q_guess, t = t, (given[0] if given and given[0] is not None else 0.0)
        later = dict(zip(("fixed", "tol", "max_iterations"), given[1:]))
        fixed = later.get("fixed", fixed)
        tol, max_iterations = later.get("tol", tol), later.get("max_iterations", max_iterations)
    elif args or q_guess is None:
        raise FlexbodyError("assemble_configuration(model, t, q_guess, *, fixed=..., tol=..., max_iterations=...)")
    asm = as_assembled(model, "assemble_configuration")
    rtol, atol = _tolerances(rtol, atol)
    return assembled_configuration(
        asm, q_guess, t, fixed=fixed, tol=tol, max_iterations=max_iterations, rtol=rtol, atol=atol
    )[0]


def assembled_configuration(model, q_guess, t, *, rtol, atol, fixed=None, tol=1e-12, max_iterations=50):
    """(q, workspace of q at rest) of :func:`assemble_configuration` (its arguments checked, the tolerances
    resolved)."""
    n = int(model.n_dofs)
    q = finite("q_guess", np.array(q_guess, dtype=float), t)
    if q.shape != (n,):
        raise StateError(f"assemble_configuration: q_guess must have shape ({n},), got {q.shape}")
    free = np.setdiff1d(np.arange(n), np.asarray([] if fixed is None else fixed, dtype=int))
    ws = workspace_of(model, t, q)
    phi = position_value(ws)
    history = [float(np.linalg.norm(phi))]
    q_best, best, ws_best = q.copy(), history[0], ws
    for _ in range(max_iterations):
        if history[-1] <= tol:
            return q, ws
        Phi = _position_jacobian(ws)
        dq, _ = _min_norm_step(Phi[:, free] if len(free) < n else Phi, phi, rtol, atol)  # [AG-37]
        if not np.all(np.isfinite(dq)) or np.linalg.norm(dq) <= 1e-15 * (1.0 + np.linalg.norm(q)):
            break  # Gauss–Newton stationary point with φ ≠ 0
        q = q.copy()
        q[free] -= dq
        ws = workspace_of(model, t, q)
        phi = position_value(ws)
        history.append(float(np.linalg.norm(phi)))
        if history[-1] < best:
            q_best, best, ws_best = q.copy(), history[-1], ws
    if history[-1] <= tol:
        return q, ws
    phi_best = np.asarray(ws_best.constraint_rows(jacobian=False)[0], dtype=float)  # all rows: labels line up
    raise ConvergenceError(
        f"assemble_configuration: constraints not satisfied to ‖φ‖ ≤ {tol:.1e} (best ‖φ‖ = "
        f"{best:.3e} after {len(history) - 1} iterations); largest residuals in rows "
        f"{worst_rows(model, phi_best)}",
        history,
        last_good=q_best,
    )


@renamed_keyword("asm", "model")
def project_velocity(
    model: System | AssembledSystem,
    t: float | ArrayLike,
    q: ArrayLike,
    v: ArrayLike | float | None = None,
    *,
    rtol: float | None = None,
    atol: float | None = None,
) -> np.ndarray:
    """Velocities (n_dofs,) satisfying Φ v + φ_t = 0 at time t [s] and coordinates q (n,), with the minimum-norm
    change v ← v − Φ⁺(Φ v + φ_t) of v (n,).

    The order (model, q, v, t) of 0.2 is deprecated (one order everywhere: the model, then t, q, v); it is
    recognised by q in the second place and works, with a warning, until 0.4.0."""
    if np.ndim(t) > 0:  # the 0.2 order (model, q, v, t=0)
        deprecated("project_velocity(model, q, v, t)", "project_velocity(model, t, q, v)")
        given: tuple[Any, ...] = (t, q, 0.0 if v is None else v)
        q, v, t = given
    if v is None:
        raise FlexbodyError("project_velocity(model, t, q, v): give the velocities v")
    asm = as_assembled(model, "project_velocity")
    rtol, atol = _tolerances(rtol, atol)
    return projected_velocity(workspace_of(asm, float(np.asarray(t)), np.asarray(q, dtype=float)), v, rtol, atol)


def projected_velocity(ws, v: ArrayLike, rtol: float, atol: float) -> np.ndarray:
    """v (n,) with the minimum-norm change v − Φ⁺(Φ v + φ_t) that satisfies Φ v + φ_t = 0, from the rows of the
    workspace ``ws`` (its q; its v is not used)."""
    _, Phi, _, phi_t = ws.constraint_rows()
    r = Phi @ v + np.asarray(phi_t, dtype=float)
    return np.asarray(v, dtype=float) - min_norm_step(ws, Phi, r, rtol, atol)


def min_norm_step(ws, Phi, r: np.ndarray, rtol: float, atol: float, *, position: bool = False) -> np.ndarray:
    """Φ⁺ r (n,), the minimum-norm least-squares solution of Φ x = r for the Φ of workspace ``ws`` (its position
    rows with ``position``): by the workspace's independent rows of a dense Φ (one decomposition per configuration,
    shared by the projection, the correction, the controller and the dynamics), Φ⁺r = Φ̂ᵀβ(r) for a certified QR
    (Φ̂ = Qᵀ, β = R⁻ᵀr) and for the SVD (Φ̂ = V_rᵀ, β = Σ_r⁻¹U_rᵀr); a sparse Φ by :func:`_min_norm_step`."""
    if isinstance(Phi, np.ndarray) and callable(getattr(ws, "independent_rows", None)) and Phi.shape[0]:
        rows = ws.independent_rows(rtol, atol, position=position)
        return rows.Vt.T @ rows.coordinates(r) if rows.rank else np.zeros(Phi.shape[1])
    return _min_norm_step(Phi, r, rtol, atol)[0]


def correct(model, t, q, v, settings: PositionCorrection, rtol, atol, iterates: list | None = None):
    """[AG-37] Newton projection of q onto φ = 0, then velocity projection.

    Returns q, v, iterations, ‖φ‖ after the correction and the workspace of the corrected state (its terms of
    (t, q) — Φ among them — are those the corrections computed); ``iterates`` (a list) receives the workspace of each
    Newton step taken, at the q it starts from (what :mod:`flexbody.solvers.correction_sensitivities`
    differentiates)."""
    ws = workspace_of(model, t, q)
    phi = position_value(ws)
    norm, iterations = float(np.linalg.norm(phi)), 0
    while (iterations < settings.min_iterations or norm > settings.tol) and iterations < settings.max_iterations:
        dq = min_norm_step(ws, _position_jacobian(ws), phi, rtol, atol, position=True)  # [AG-37]
        if not np.any(dq):
            break  # Φ⁺ = 0 (rank 0): nothing to correct with
        if iterates is not None:
            iterates.append(ws)
        corrected = q - dq
        if np.array_equal(corrected, q):  # a step below the round-off of q: taken, nothing changes
            iterations += 1
            break
        q = corrected
        ws = workspace_of(model, t, q)
        phi = position_value(ws)
        norm, iterations = float(np.linalg.norm(phi)), iterations + 1
    v = projected_velocity(ws, v, rtol, atol)
    return q, v, iterations, norm, ws.with_velocity(v)
