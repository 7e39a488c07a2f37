"""Constrained inverse dynamics: the minimum-norm τ = P(M a + h) [AG-21, LP], optionally weighted by W
[AG-47], or the τ that produces a chosen constraint force Φᵀλ [MH Prop. 2].
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ..errors import ConstraintError, FlexbodyError, StateError
from ..linalg.rank import constraint_svd
from ..linalg.validation import as_mass as _mass
from ..linalg.validation import as_vector as _vector
from .projection import min_norm_lam
from .results import CONSISTENCY_RTOL, InverseResult
from .schur import checked_constraints, unpack_terms

if TYPE_CHECKING:
    from ..linalg.block_mass import BlockMass
    from ..system import AssembledSystem, State, System


# ----------------------------------------------------------------------------------------- inverse
def inverse(
    M: ArrayLike | sp.spmatrix | sp.sparray | BlockMass | System | AssembledSystem,
    h: ArrayLike | State,
    a: ArrayLike,
    Phi: ArrayLike | sp.spmatrix | sp.sparray | None = None,
    *,
    lam: ArrayLike | None = None,
    W: ArrayLike | sp.spmatrix | sp.sparray | None = None,
    bias: ArrayLike | None = None,
    rtol: float | None = None,
    atol: float | None = None,
) -> InverseResult:
    """Constrained inverse dynamics: τ giving the motion a with τ = M a + h − Φᵀλ.

    Also callable as ``inverse(asm, state, a, ...)`` (Φ and bias from ``asm.terms``; a System is assembled).

    - ``lam=None, W=None``: minimum-norm actuation τ = P(M a + h) [AG-21, AG-46, LP]; the constraint force
      is Φᵀλ = (I − P)(M a + h), λ its minimum-norm multipliers.
    - ``W`` (n, n) SPD: minimise τᵀW⁻¹τ [AG-47]. With the Cholesky factor W = L Lᵀ, τ = L τ_L makes the cost
      ‖τ_L‖², and the admissible set τ ∈ M a + h − im Φᵀ becomes τ_L ∈ L⁻¹(M a + h) + im(L⁻¹Φᵀ), so
      τ = L P_W L⁻¹ (M a + h) with P_W = I − A_W⁺A_W, A_W = Φ L⁻ᵀ. (Aghili uses A_W = A W^{-1/2}; any
      factor of W gives the same minimiser.)
    - ``lam`` (m,): the actuation producing exactly that constraint force, τ = M a + h − Φᵀλ [MH Prop. 2].

    If ``bias`` (m,) is given, the motion is checked: ‖Φa + bias‖ ≤ 1e-8·(‖Φ‖_F‖a‖ + ‖bias‖), else
    ConstraintError (an inconsistent a cannot be produced by any τ).

    Parameters
    ----------
    M : ndarray, scipy.sparse or BlockMass (n, n)
    h : ndarray (n,)
    a : ndarray (n,)
        Desired accelerations.
    Phi : ndarray or scipy.sparse (m, n)

    Returns
    -------
    InverseResult
    """
    M, h, a, Phi, terms_bias, _ = unpack_terms(M, h, a, Phi, None)
    if bias is None:
        bias = terms_bias
    M, n, _sparse = _mass(M)
    h, a = _vector(h, "h", n), _vector(a, "a", n)
    Phi, bias = checked_constraints(Phi, bias, n, bias_required=False)
    m = Phi.shape[0]
    svd, _ = constraint_svd(Phi, rtol, atol)
    if bias is not None and m:
        resid = np.linalg.norm(Phi @ a + bias)
        scale = np.linalg.norm(Phi) * np.linalg.norm(a) + np.linalg.norm(bias)
        if resid > CONSISTENCY_RTOL * scale + np.finfo(float).tiny:
            raise ConstraintError(
                f"the motion violates the constraints: |Phi a + bias| = {resid:.3e} > "
                f"{CONSISTENCY_RTOL:.0e} * {scale:.3e}; no actuation can produce it"
            )
    tau0 = M @ a + h
    unique = svd.rank == m
    if lam is not None:
        if W is not None:
            raise FlexbodyError("give either lam (a chosen constraint force) or W (weighted minimum norm)")
        lam = _vector(lam, "lam", m, ConstraintError)
        force = Phi.T @ lam
        return InverseResult(tau0 - force, force, lam, unique, svd.rank)  # [MH Prop. 2]
    if W is None:
        force = svd.Vt.T @ (svd.Vt @ tau0)  # (I − P)(M a + h)
        tau = tau0 - force  # τ = P(M a + h)  [AG-21]
    else:
        W_checked, nw, w_sparse = _mass(W, "W")
        if nw != n:
            raise StateError(f"W must have shape ({n}, {n}), got {W_checked.shape}")
        W_dense = W_checked.toarray() if w_sparse else W_checked
        try:
            L = np.linalg.cholesky(W_dense)  # W = L Lᵀ
        except np.linalg.LinAlgError as exc:
            raise StateError("W is not symmetric positive definite") from exc
        A_W = sla.solve_triangular(L, Phi.T, lower=True).T  # A_W = Φ L⁻ᵀ  [AG-47]
        svd_w, _ = constraint_svd(A_W, rtol, atol)
        x = sla.solve_triangular(L, tau0, lower=True)  # L⁻¹(M a + h)
        tau = L @ (x - svd_w.Vt.T @ (svd_w.Vt @ x))  # τ = L P_W L⁻¹(M a + h)
        force = tau0 - tau
    return InverseResult(tau, force, min_norm_lam(svd, force), unique, svd.rank)
