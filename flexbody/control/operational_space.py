"""Operational-space terms of a task [DE 43-64, MR]: Λ = (J M⁻¹ Jᵀ)⁻¹, μ, p, the dynamically consistent
inverse J̄ and the null-space projector Nᵀ, computed by solves with M (never M⁻¹), for redundant and
non-redundant tasks; at a state of an assembled system or from given terms.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from math import isfinite, sqrt
from numbers import Real
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ..deprecation import deprecated, renamed_keyword
from ..errors import FlexbodyError, ModelError, StateError
from ..linalg.rank import symmetric_eigen
from ..linalg.validation import MassSolver as _MassSolver
from ..linalg.validation import as_mass as _mass
from ..linalg.validation import as_vector as _vector
from ..system.description import as_assembled
from .tasks import DEFAULT_ATOL, DEFAULT_RTOL, Task, TaskTerms

if TYPE_CHECKING:
    from ..linalg.block_mass import BlockMass
    from ..system import AssembledSystem, System

logger = logging.getLogger(__name__)


# ----------------------------------------------------------------------------------- operational space
@dataclass(frozen=True, eq=False)
class OperationalSpace:
    """Operational-space quantities of a task at one state [DE-49..53] (m task rows, n coordinates).

    Attributes
    ----------
    Lambda : (m, m) Λ = (J M⁻¹ Jᵀ)⁻¹ [DE-53]; the pseudo-inverse when ``rank < m`` (allow_singular).
    mu : (m,) μ = J̄ᵀ b − Λ J̇v [DE-53]; p : (m,) p = J̄ᵀ g [DE-53].
    J_bar : (n, m) J̄ = M⁻¹ Jᵀ Λ, the dynamically consistent inverse [DE-50, DE-61].
    J : (m, n); inverse_Lambda : (m, m) J M⁻¹ Jᵀ.
    singular_values : (m,) of J M⁻¹ Jᵀ, descending; rank, tol (= rtol·σ_max), row_labels (m).
    xdot : (m,) J v, or None if v was not given; terms : TaskTerms or None (from :func:`operational_space_at`).
    """

    Lambda: np.ndarray
    mu: np.ndarray
    p: np.ndarray
    J_bar: np.ndarray
    J: np.ndarray
    inverse_Lambda: np.ndarray
    singular_values: np.ndarray
    rank: int
    tol: float
    row_labels: tuple
    xdot: np.ndarray | None = None
    terms: TaskTerms | None = None

    @property
    def n_rows(self) -> int:
        """Number of task rows m (rows of J)."""
        return self.J.shape[0]

    @property
    def n_dofs(self) -> int:
        """Number of coordinates n (columns of J)."""
        return self.J.shape[1]

    @property
    def full_rank(self) -> bool:
        """True if J M⁻¹ Jᵀ has full rank m (Λ is its inverse, not a pseudo-inverse)."""
        return self.rank == self.n_rows

    @cached_property
    def N_T(self) -> np.ndarray:
        """Dense Nᵀ = I − Jᵀ J̄ᵀ (n, n) [DE-49, DE-57]; for small n (else use :meth:`apply_null`)."""
        return np.eye(self.n_dofs) - self.J.T @ self.J_bar.T

    def apply_null(self, x: np.ndarray) -> np.ndarray:
        """Nᵀ x = x − Jᵀ(J̄ᵀ x) for generalized forces x (n,) or (n, k), without forming Nᵀ [DE-57]."""
        return x - self.J.T @ (self.J_bar.T @ x)

    def apply_null_motion(self, z: np.ndarray) -> np.ndarray:
        """N z = z − J̄(J z) (n,) or (n, k): the self-motion part of a velocity or acceleration [DE-46]."""
        return z - self.J_bar @ (self.J @ z)

    def force(self, xdd: ArrayLike) -> np.ndarray:
        """Task force f = Λ ẍ + μ + p (m,) that produces the task acceleration ẍ (m,) [DE-52]."""
        return self.Lambda @ _vector(xdd, "xdd", self.n_rows) + self.mu + self.p

    def torque(self, f: ArrayLike, tau0: ArrayLike | None = None) -> np.ndarray:
        """Generalized force τ = Jᵀ f + Nᵀ τ₀ (n,) [DE-47]; τ₀ (n,) defaults to zero."""
        tau = self.J.T @ _vector(f, "f", self.n_rows)
        return tau if tau0 is None else tau + self.apply_null(_vector(tau0, "tau0", self.n_dofs))

    def acceleration(self, f: ArrayLike) -> np.ndarray:
        """Task acceleration ẍ = Λ⁻¹(f − μ − p) (m,) produced by τ = Jᵀf + Nᵀτ₀ for any τ₀ [DE-51]."""
        return self.inverse_Lambda @ (_vector(f, "f", self.n_rows) - self.mu - self.p)


def _task_jacobian(J, n: int) -> np.ndarray:
    if sp.issparse(J):
        J = J.toarray()
    try:
        J = np.asarray(J, dtype=float)
    except (TypeError, ValueError) as exc:
        raise StateError(f"J must be a numeric (m, {n}) array, got {type(J).__name__}") from exc
    if J.ndim != 2 or J.shape[0] == 0 or J.shape[1] != n:
        raise StateError(f"J must have shape (m, {n}) with m ≥ 1 (n from M), got {J.shape}")
    if not np.isfinite(J).all():
        i, j = np.argwhere(~np.isfinite(J))[0]
        raise StateError(f"J contains NaN/Inf (first at [{i}, {j}])")
    return J


def _null_combinations(w: np.ndarray, V: np.ndarray, tol: float, labels) -> list[str]:
    """Task-row combinations Σ c_i·row_i with (Σ c_i J_i) M⁻¹ (Σ c_i J_i)ᵀ ≤ tol (error path only)."""
    out = []
    for k in np.flatnonzero(np.abs(w) <= tol):
        c = V[:, k] / np.abs(V[:, k]).max()
        terms = [f"{c[i]:+.3g}·{labels[i]}" for i in np.flatnonzero(np.abs(c) >= 1e-3)]
        out.append(" ".join(terms))
    return out


def operational_space(
    M: ArrayLike | sp.spmatrix | sp.sparray | BlockMass,
    J: ArrayLike | sp.spmatrix | sp.sparray,
    b: ArrayLike | None,
    g: ArrayLike | None,
    Jdot_v: ArrayLike | None,
    v: ArrayLike | None = None,
    *,
    rtol: float | None = None,
    atol: float | None = None,
    allow_singular: bool = False,
    row_labels: Sequence[str] | None = None,
    solver: _MassSolver | None = None,
) -> OperationalSpace:
    """Λ, μ, p, J̄ and Nᵀ of a task [DE-49..53], for redundant (m < n) and non-redundant (m = n) tasks.

    Parameters
    ----------
    M : ndarray or scipy.sparse (n, n)
        Symmetric positive-definite mass matrix (applied by its Cholesky factor; never inverted).
    J : ndarray (m, n)
        Task Jacobian, ẋ = J v [DE-43].
    b, g : ndarray (n,) or None (zero)
        Centrifugal/Coriolis and gravity generalized forces, τ = M a + b + g [DE-47].
    Jdot_v : ndarray (m,) or None (zero)
        Task bias acceleration J̇v, so ẍ = J a + J̇v.
    v : ndarray (n,), optional
        Velocities; only used to report ``xdot = J v``.
    rtol, atol : float, optional
        Rank of J M⁻¹ Jᵀ: singular values ≤ rtol·σ_max count as zero (:data:`DEFAULT_RTOL`); rank 0 if
        every row of J has norm ≤ atol (:data:`DEFAULT_ATOL`).
    allow_singular : bool
        If J M⁻¹ Jᵀ is singular, return Λ as its pseudo-inverse with ``rank < m`` instead of raising.
        Then J J̄ is the projector onto the attainable task directions, not I.
    row_labels : sequence of str (m), optional
        Names of the task rows used in messages (default ``"row i"``).
    solver : MassSolver, optional
        A Cholesky factor of this M already computed (e.g. by a controller's context); else M is factored.

    Raises
    ------
    StateError
        Wrong shapes or NaN/Inf in M, J, b, g, Jdot_v, v; M not positive definite.
    FlexbodyError
        J M⁻¹ Jᵀ is singular (rank < m, including m > n) and ``allow_singular`` is False; the message
        gives the singular values and the dependent combinations of task rows (``err.singular_values``).
    """
    M, n, sparse = _mass(M)
    J = _task_jacobian(J, n)
    m = J.shape[0]
    b = np.zeros(n) if b is None else _vector(b, "b", n)
    g = np.zeros(n) if g is None else _vector(g, "g", n)
    Jdot_v = np.zeros(m) if Jdot_v is None else _vector(Jdot_v, "Jdot_v", m)
    xdot = None if v is None else J @ _vector(v, "v", n)
    rtol = DEFAULT_RTOL if rtol is None else float(rtol)
    atol = DEFAULT_ATOL if atol is None else float(atol)
    if not (isfinite(rtol) and 0.0 <= rtol < 1.0) or not (isfinite(atol) and atol >= 0.0):
        raise ModelError(f"rtol must be in [0, 1) and atol ≥ 0, got rtol={rtol!r}, atol={atol!r}")
    labels = tuple(f"row {i}" for i in range(m)) if row_labels is None else tuple(str(r) for r in row_labels)
    if len(labels) != m:
        raise ModelError(f"row_labels has {len(labels)} entries for a task of {m} rows")

    X = (solver or _MassSolver(M, sparse)).solve(np.ascontiguousarray(J.T))  # M⁻¹Jᵀ (n, m)
    X = np.asarray(X).reshape(n, m)
    return operational_space_of(
        J, X, b, g, Jdot_v, rtol=rtol, atol=atol, allow_singular=allow_singular, row_labels=labels, xdot=xdot
    )


def operational_space_of(
    J: np.ndarray,
    X: np.ndarray,
    b: np.ndarray,
    g: np.ndarray,
    Jdot_v: np.ndarray,
    *,
    rtol: float = DEFAULT_RTOL,
    atol: float = DEFAULT_ATOL,
    allow_singular: bool = False,
    row_labels: Sequence[str] | None = None,
    xdot: np.ndarray | None = None,
) -> OperationalSpace:
    """Λ, μ, p and J̄ [DE-49..53] from J (m, n) and X = M⁻¹Jᵀ (n, m) already solved, for callers that hold
    the solve (a controller's one solve with M for several right-hand sides). The inputs are taken as
    valid — finite, of matching shapes, tolerances in range (:func:`operational_space` checks them);
    the rank test, its error and the pseudo-inverse are those of :func:`operational_space`."""
    m = J.shape[0]
    labels = tuple(f"row {i}" for i in range(m)) if row_labels is None else tuple(row_labels)
    A = J @ X
    A = 0.5 * (A + A.T)  # J M⁻¹ Jᵀ = Λ⁻¹ [DE-53]
    w, V = symmetric_eigen(A)  # ascending
    s = w[::-1].copy() if w[0] >= 0.0 else np.sort(np.abs(w))[::-1]
    tol = rtol * s[0]
    rank = 0 if sqrt(float(np.einsum("ij,ij->i", J, J).max())) <= atol else int(np.count_nonzero(s > tol))
    if rank < m and not allow_singular:
        combos = _null_combinations(w, V, max(tol, 0.0) if rank else np.inf, labels)
        err = FlexbodyError(
            f"operational space: J M^-1 J^T ({m}x{m}) is singular, rank {rank} of {m} task rows "
            f"(singular values {np.array2string(s, precision=3)}, tol = rtol·σ_max = {tol:.2e}, rtol {rtol:.1e}); "
            f"dependent task rows (combinations whose mass-weighted Jacobian vanishes): {combos}. "
            f"{'More task rows than coordinates. ' if m > J.shape[1] else ''}"
            "The task rows are redundant or the configuration is singular (e.g. an arm stretched straight); "
            "pass allow_singular=True for a pseudo-inverse Λ."
        )
        err.singular_values, err.rank, err.row_labels = s, rank, labels  # type: ignore[attr-defined]  # set on a plain FlexbodyError
        raise err
    if rank < m or w[0] <= 0.0:  # keep the directions with w > tol
        keep = (np.abs(w) > tol) & (w > 0) if rank else np.zeros(m, dtype=bool)
        V, w = V[:, keep], w[keep]
    Lam = (V / w) @ V.T  # Λ = (J M⁻¹ Jᵀ)⁻¹ or its pseudo-inverse
    Lam = 0.5 * (Lam + Lam.T)
    J_bar = X @ Lam  # J̄ = M⁻¹ Jᵀ Λ [DE-50]
    mu = J_bar.T @ b - Lam @ Jdot_v  # [DE-53]
    p = J_bar.T @ g  # [DE-53]
    if rank < m:
        logger.debug("operational space with rank %d of %d rows (pseudo-inverse Λ)", rank, m)
    return OperationalSpace(Lam, mu, p, J_bar, J, A, s, rank, float(tol), labels, xdot)


@renamed_keyword("asm", "model")
def operational_space_at(
    model: System | AssembledSystem,
    t: float | Task,
    q: ArrayLike,
    v: ArrayLike | None = None,
    *old: Any,
    task: Task | None = None,
    rtol: float | None = None,
    atol: float | None = None,
    allow_singular: bool = False,
    ignore_constraints: bool = False,
) -> OperationalSpace:
    """:func:`operational_space` of ``task`` for the assembled system ``model`` at (t [s], q (n,), v (n,); v None:
    at rest): ``operational_space_at(model, t, q, v, task=task)``.

    The order (model, task, t, q, v) of 0.2 is deprecated (one order everywhere: the model, then t, q, v, then the
    rest); it is recognised by the task in the second place and works, with a warning, until 0.4.0.

    These are the unconstrained quantities [DE-43..64]. A system with constraints raises ModelError
    unless ``ignore_constraints=True`` (constrained task-level control, [DE-65..93], uses them with
    the constraint projection). The task terms are returned in ``.terms``.
    """
    if task is None and not isinstance(t, Real):  # the 0.2 order (model, task, t, q, v)
        deprecated("operational_space_at(model, task, t, q, v)", "operational_space_at(model, t, q, v, task=task)")
        given: tuple[Any, ...] = (t, q, v, *old, None)
        task, t, q, v = given[0], given[1], given[2], given[3]
    elif old:
        raise ModelError("operational_space_at(model, t, q, v, *, task=...): the task is a keyword argument")
    asm = as_assembled(model, "operational_space_at")
    if not isinstance(task, Task):
        raise ModelError(f"operational_space_at: expected a Task, got {task!r}")
    if asm.n_constraints and not ignore_constraints:
        raise ModelError(
            f"operational_space_at: the system has {asm.n_constraints} constraint rows "
            f"{asm.row_labels[:6]}{'…' if asm.n_constraints > 6 else ''}; these quantities "
            "are for unconstrained systems [DE-43..64] (pass ignore_constraints=True to use them anyway)"
        )
    ev = asm.workspace(t, q, v)
    terms = task.evaluate(ev)
    M, b, g = ev.mass_bias_gravity()
    osp = operational_space(
        M,
        terms.J,
        b,
        g,
        terms.bias,
        ev.v,
        rtol=rtol,
        atol=atol,
        allow_singular=allow_singular,
        row_labels=terms.row_labels,
    )
    return replace(osp, terms=terms)
