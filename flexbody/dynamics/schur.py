"""What every constrained form shares: checked inputs (M, h, τ or the (asm, state, τ) call; Φ and bias)
and the Schur complement ΦM⁻¹Φᵀ = H⁻¹ [DE-34] — its Cholesky factor, the dependent rows named when it
is singular, and Φ̄ = M⁻¹Φᵀ(ΦM⁻¹Φᵀ)⁻¹ [DE-28].
"""

from __future__ import annotations

from typing import Any, NoReturn

import numpy as np
from numpy.typing import ArrayLike

from ..deprecation import deprecated
from ..errors import ConstraintError, StateError
from ..linalg.rank import constraint_rank, dense_jacobian
from ..linalg.validation import MassSolver as _MassSolver
from ..linalg.validation import as_vector as _vector
from ..linalg.validation import potrf as _potrf
from ..linalg.validation import potrs as _potrs


# ----------------------------------------------------------------------------------------- validation
def unpack_terms(M, h, third, Phi, method):
    """Support the ``(asm, state, x)`` calling form (duck typing on ``asm.terms``; a System is assembled)."""
    if type(M) is np.ndarray:  # the matrix form (no attribute look-ups)
        return M, h, third, Phi, None, method
    if callable(getattr(M, "assemble", None)):
        from ..system.description import as_assembled

        M = as_assembled(M, "dynamics")
    if not hasattr(M, "terms"):
        return M, h, third, Phi, None, method
    asm, state = M, h
    if isinstance(Phi, str):  # forward(asm, state, tau, "method"): the 0.2 form
        deprecated("forward(model, state, tau, method) with the method in Phi's place", "method=...")
        method = Phi
    for attr in ("t", "q", "v"):
        if not hasattr(state, attr):
            raise StateError(f"state must have attributes t, q, v; missing {attr!r}")
    own = getattr(state, "asm", None) is asm and callable(getattr(state, "terms", None))  # the state's workspace
    terms = state.terms() if own else asm.terms(state.t, state.q, state.v)
    return terms.M, terms.h, third, terms.Phi, terms.bias, method


def checked_constraints(
    Phi: Any, bias: ArrayLike | None, n: int, bias_required: bool = True
) -> tuple[np.ndarray, np.ndarray | None]:
    Phi = dense_jacobian(Phi, n)
    m = Phi.shape[0]
    if bias is None:
        if m > 0 and bias_required:
            raise ConstraintError(f"bias (Φ̇q̇, shape ({m},)) is required when Phi has {m} rows")
        return Phi, None if m > 0 else np.zeros(0)
    return Phi, _vector(bias, "bias", m, ConstraintError)


# -------------------------------------------------------------------------------------- linear algebra
def cholesky_lower(S: np.ndarray):
    """Lower Cholesky factor and LAPACK info (0 on success)."""
    return _potrf(S, lower=1, clean=0)


def schur_factor(S: np.ndarray, Phi: np.ndarray, rtol: float, atol: float, method: str) -> np.ndarray:
    """Cholesky factor of S = ΦM⁻¹Φᵀ (m, m), or ConstraintError if it is numerically singular.

    A pivot d_i of the factor relative to its diagonal entry, d_i / S_ii, is sin² of the M⁻¹-metric angle
    between row i of Φ and the span of rows 0..i−1 (invariant to row scaling); a ratio ≤ rtol, or a row
    of Φ with norm ≤ atol, means a dependent row. The check costs O(m n) after the factorization.
    """
    c, info = _potrf(S, lower=1, clean=0)
    if (
        info == 0
        and (np.diagonal(c) ** 2 > rtol * np.diagonal(S)).all()
        and np.einsum("ij,ij->i", Phi, Phi).min() > atol * atol
    ):
        return c
    _raise_singular(S, Phi, rtol, atol, method)


def _dependent_rows(S: np.ndarray, Phi: np.ndarray, rtol: float, atol: float) -> list[int]:
    """Rows of Φ dependent on earlier kept rows (sequential pivots of S; error path only)."""
    norms = np.linalg.norm(Phi, axis=1)
    kept: list[int] = []
    dependent: list[int] = []
    for i in range(S.shape[0]):
        pivot = S[i, i]
        if kept and pivot > 0:
            s_ki = S[kept, i]
            pivot -= s_ki @ np.linalg.solve(S[np.ix_(kept, kept)], s_ki)
        if norms[i] <= atol or pivot <= rtol * S[i, i]:
            dependent.append(i)
        else:
            kept.append(i)
    return dependent


def _raise_singular(S, Phi, rtol, atol, method) -> NoReturn:
    report = constraint_rank(Phi, rtol, atol=atol)
    m = Phi.shape[0]
    raise ConstraintError(
        f"method={method!r}: the constraint-space matrix Phi M^-1 Phi^T ({m}x{m}) is numerically singular "
        f"(rows dependent on earlier rows, pivot/diagonal <= rtol {rtol:.1e} or row norm <= atol "
        f"{atol:.1e}: {_dependent_rows(S, Phi, rtol, atol)}); Phi has numerical rank {report.rank} of {m} "
        f"rows at tol {report.tol:.2e}. Redundant constraints or a singular configuration: "
        "use method='projection' or 'nullspace'."
    )


def phi_bar(solver: _MassSolver, Phi, rtol, atol, method):
    """Φ̄ = M⁻¹Φᵀ(ΦM⁻¹Φᵀ)⁻¹ (n, m) [DE-28] and the Cholesky factor of ΦM⁻¹Φᵀ."""
    Y = solver.solve(Phi.T)
    cS = schur_factor(Phi @ Y, Phi, rtol, atol, method)
    return _potrs(cS, Y.T, lower=1)[0].T, cS
