"""Small linear-algebra helpers shared by dynamics, tasks and control: input validation of vectors, mass
matrices and numeric settings, and :class:`MassSolver`, which applies M⁻¹ through a Cholesky factor (LAPACK for dense
M, CHOLMOD for sparse M) so that no inverse is ever formed."""

from __future__ import annotations

import math

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from ..errors import FlexbodyError, StateError
from .sparse_factor import NotPositiveDefiniteError, SparseFactor

__all__ = [
    "all_finite",
    "as_float",
    "as_vector",
    "as_mass",
    "check_setting",
    "zero_diagonal",
    "MassSolver",
    "potrf",
    "potrs",
]

potrf, potrs = sla.get_lapack_funcs(("potrf", "potrs"), dtype=np.float64)


def all_finite(x: np.ndarray) -> bool:
    """Whether every entry of the float vector x is finite: x·x is finite only then (a NaN or ±Inf makes it
    NaN or +Inf), and costs a third of ``np.isfinite(x).all()``; an overflow of x·x is settled exactly."""
    return math.isfinite(x.dot(x)) or bool(np.isfinite(x).all())


ZERO_DIAGONAL = 1e-14
"""A diagonal entry of a mass or stiffness matrix at most this times max(1, its largest) counts as zero."""


def zero_diagonal(A) -> np.ndarray:
    """Indices of the zero diagonal entries of a square matrix A (dense or sparse, :data:`ZERO_DIAGONAL`): the
    coordinates that carry no inertia (M) or no stiffness (K), which make A singular."""
    d = np.abs(np.asarray(A.diagonal()))
    return np.flatnonzero(d <= ZERO_DIAGONAL * max(1.0, float(d.max(initial=0.0))))


def as_float(x, name: str, error=StateError) -> np.ndarray:
    """``x`` as a float array, or ``error`` naming ``name`` if it is not numeric."""
    try:
        return np.asarray(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise error(f"{name} must be a numeric array, got {type(x).__name__}") from exc


def as_vector(x, name: str, n: int, error=StateError) -> np.ndarray:
    """``x`` as a finite float vector of shape (n,), or ``error`` naming ``name``."""
    x = as_float(x, name, error)
    if x.shape != (n,):
        raise error(f"{name} must have shape ({n},), got {x.shape}")
    if not np.isfinite(x).all():
        raise error(f"{name} contains NaN/Inf (first at index {int(np.flatnonzero(~np.isfinite(x))[0])})")
    return x


def as_mass(M, name: str = "M"):
    """Validate a square, finite M; return (M, n, is_sparse) with sparse M in CSC form.

    A :class:`~flexbody.linalg.block_mass.BlockMass` is passed through (sparse, validated when assembled)."""
    if hasattr(M, "solve") and hasattr(M, "flexible"):  # BlockMass
        return M, M.shape[0], True
    if sp.issparse(M):
        if M.ndim != 2 or M.shape[0] != M.shape[1]:
            raise StateError(f"{name} must be square (n, n), got shape {M.shape}")
        M = sp.csc_matrix(M, dtype=float)
        if not np.isfinite(M.data).all():
            raise StateError(f"{name} (sparse) contains NaN/Inf")
        return M, M.shape[0], True
    M = as_float(M, name, StateError)
    if M.ndim != 2 or M.shape[0] != M.shape[1]:
        raise StateError(f"{name} must be square (n, n), got shape {M.shape}")
    if not np.isfinite(M).all():
        i, j = np.argwhere(~np.isfinite(M))[0]
        raise StateError(f"{name} contains NaN/Inf (first at [{i}, {j}])")
    return M, M.shape[0], False


class MassSolver:
    """Applies M⁻¹ by a Cholesky factor: LAPACK for dense M, CHOLMOD (or SuperLU) for sparse M.

    ``solve(b)`` takes (n,) or (n, k) right-hand sides.
    """

    def __init__(self, M, sparse: bool | None = None):
        if sparse is None:
            M, _, sparse = as_mass(M)
        self.sparse = sparse
        if hasattr(M, "solve") and hasattr(M, "flexible"):  # BlockMass: block solves, M_f factored once
            self._factor = M.solve
        elif not sparse:
            c, info = potrf(M, lower=1, clean=0)
            if info != 0:
                raise StateError(f"M is not positive definite (Cholesky failed at pivot {info})")
            self._c = c
        else:
            try:
                self._factor = SparseFactor().factor(M, lu_fallback=False).solve
            except NotPositiveDefiniteError as exc:
                raise StateError(f"M is not positive definite (CHOLMOD: {exc})") from exc

    def solve(self, b: np.ndarray) -> np.ndarray:
        if self.sparse:
            return np.asarray(self._factor(b))
        return potrs(self._c, b, lower=1)[0]


def check_setting(
    owner: str, name: str, value, *, low: float = 0.0, strict: bool = True, integer: bool = False, high: float = np.inf
) -> None:
    """FlexbodyError naming ``owner.name`` unless ``value`` is a finite number (an integer with ``integer``) above
    ``low`` (or equal to it when not ``strict``) and at most ``high`` (NaN, ±Inf, text and booleans are refused)."""
    kinds = (int, np.integer) if integer else (int, float, np.integer, np.floating)
    ok = isinstance(value, kinds) and not isinstance(value, bool) and np.isfinite(value)
    ok = ok and (value > low if strict else value >= low) and value <= high
    if not ok:
        kind = "an integer" if integer else "a number"
        bounds = ([f"{'>' if strict else '≥'} {low:g}"] if np.isfinite(low) else []) + (
            [f"≤ {high:g}"] if np.isfinite(high) else []
        )
        raise FlexbodyError(
            f"{owner}: {name} must be {' '.join([kind, ' and '.join(bounds)])}".rstrip() + f", got {value!r}"
        )
