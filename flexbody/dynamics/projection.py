"""The projection form [AG 15-32]: P = I − A⁺A by a rank-revealing SVD with a stated tolerance, the
constraint inertias M_c, M_c′, M_c″(γ) [AG-23, 24, 28, 29], forward dynamics by projection (dense, and
sparse without n×n matrices), and the range- and null-space helpers: an orthonormal basis of ker Φ
[DE-10], the mass-weighted inverse Φ̄ = M⁻¹Φᵀ(ΦM⁻¹Φᵀ)⁻¹ [DE-22] and the generalized constrained terms
[DE-39].
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from numpy.typing import ArrayLike

from ..errors import ConstraintError, StateError
from ..linalg.rank import ConstraintSVD, constraint_svd, dense_jacobian, resolve_tolerances
from ..linalg.validation import MassSolver as _MassSolver
from ..linalg.validation import as_mass as _mass
from ..linalg.validation import as_vector as _vector
from ..linalg.validation import potrs as _potrs
from ..linalg.validation import zero_diagonal
from .results import ForwardResult, GeneralizedConstrainedTerms, Projection, check_choices
from .schur import checked_constraints, cholesky_lower, phi_bar

if TYPE_CHECKING:
    from ..linalg.block_mass import BlockMass


def min_norm_lam(svd: ConstraintSVD, force: np.ndarray) -> np.ndarray:
    """λ = A⁺ᵀ·force, the minimum-norm multipliers of a force in im Φᵀ [AG-18, Remark 4]."""
    if svd.rank == 0:
        return np.zeros(svd.n_constraints)
    return svd.U @ ((svd.Vt @ force) / svd.s)


def particular_acceleration(svd: ConstraintSVD, bias: np.ndarray) -> np.ndarray:
    """(I − P) a = C q̇ = −A⁺ Ȧq̇ = −A⁺ bias [AG-13, AG-16]."""
    if svd.rank == 0:
        return np.zeros(svd.n_dofs)
    return -(svd.Vt.T @ ((svd.U.T @ bias) / svd.s))


def _inertia_terms(M, P, a_perp, kind, gamma):
    """Constraint inertia matrix and the C_c q̇ term of [AG-22], [AG-27] or [AG-29] (dense)."""
    n = M.shape[0]
    if kind == "Mc":  # M_c = M + PM − (PM)ᵀ  [AG-23, AG-24]
        PM = P @ M
        return M + PM - PM.T, M @ a_perp  # C_c q̇ = M C q̇  [AG-22]
    Q = np.eye(n) - P
    if kind == "symmetric":  # M_c′ = PMP + (I−P)M(I−P)  [AG-28]
        return P @ M @ P + Q @ M @ Q, (Q - P) @ (M @ a_perp)  # C_c′ = (I − 2P) C_c  [AG-28]
    if gamma is None:
        gamma = float(np.trace(M)) / n
    return P @ M + gamma * Q, gamma * a_perp  # M_c″, C_c″ = γ C  [AG-29]


def projection_dense(M, h, tau, Phi, bias, rtol, atol, inertia, gamma, svd=None) -> ForwardResult:
    """Aghili's direct dynamics M_c a = P(τ − h) + C_c q̇ [AG-22, AG-25, AG-27, AG-29] (``svd``: the SVD of Φ with
    these tolerances, when made already)."""
    n = M.shape[0]
    if svd is None:
        svd, _ = constraint_svd(Phi, rtol, atol)
    Vt = svd.Vt
    P = np.eye(n) - Vt.T @ Vt  # P = I − A⁺A  [AG-15]
    a_perp = particular_acceleration(svd, bias)  # C q̇ = −A⁺ Ȧq̇  [AG-16]
    Mc, cc = _inertia_terms(M, P, a_perp, inertia, gamma)
    rhs = P @ (tau - h) + cc  # f∥ − h∥ + C_c q̇  [AG-25]
    try:
        if inertia == "symmetric":
            c, info = cholesky_lower(Mc)  # M_c′ is SPD [AG Prop. 1]
            a = _potrs(c, rhs, lower=1)[0] if info == 0 else np.linalg.solve(Mc, rhs)
        else:
            a = np.linalg.solve(Mc, rhs)  # invertible [AG Thm. 2, Prop. 2]
    except np.linalg.LinAlgError as exc:  # M_c is invertible when M is SPD: M is not
        zero = zero_diagonal(M)
        raise StateError(
            "projection: M_c is singular, so M is not positive definite"
            + (f" (coordinates {zero.tolist()} have a zero diagonal: no inertia)" if zero.size else "")
        ) from exc
    # [AG-32]: 𝓕 = f⊥ − h⊥ − μ(f∥ − h∥ + C_c q̇), μ = (I − P)M M_c⁻¹; by (25) M_c⁻¹(…) = a, so
    # 𝓕 = (I − P)(f − h − M a), and in our sign Φᵀλ = −𝓕 = (I − P)(M a + h − τ).
    force = Vt.T @ (Vt @ (M @ a + h - tau))
    return ForwardResult(a, force, min_norm_lam(svd, force), svd.rank == svd.n_constraints, svd.rank, "projection")


def projection_sparse(M, f, Phi, bias, rtol, atol) -> ForwardResult:
    """Projection method for sparse M without n×n matrices.

    With the thin SVD Φ = U_r Σ_r V_rᵀ, P = I − V_r V_rᵀ, the two conditions of [AG-25],
    (I − P)a = −A⁺ bias [AG-16] and P(M a − τ + h) = 0 [AG-21], are exactly
        V_rᵀ a = −Σ_r⁻¹ U_rᵀ bias   and   M a + h − τ = V_r μ  for some μ ∈ R^r,
    a full-rank saddle point with orthonormal constraint rows. It is solved with one factorization of M
    and r solves: a = a_u + Y μ, Y = M⁻¹V_r, (V_rᵀ Y) μ = −Σ_r⁻¹U_rᵀ bias − V_rᵀ a_u. Since M_c is
    invertible [AG Thm. 2] the solution is unique, so it is the a of [AG-25] for any inertia kind.
    Then Φᵀλ = V_r μ and the minimum-norm λ = A⁺ᵀ V_r μ = U_r Σ_r⁻¹ μ.
    """
    solver = _MassSolver(M, True)
    svd, _ = constraint_svd(Phi, rtol, atol)
    m, r = svd.n_constraints, svd.rank
    a_u = solver.solve(f)
    if r == 0:
        return ForwardResult(a_u, np.zeros_like(a_u), np.zeros(m), m == 0, 0, "projection")
    Vr = svd.Vt.T  # (n, r), orthonormal columns
    Y = solver.solve(Vr)
    c, info = cholesky_lower(Vr.T @ Y)
    if info != 0:
        raise StateError(f"V_r^T M^-1 V_r is not positive definite (pivot {info}); M must be SPD")
    mu = _potrs(c, -(svd.U.T @ bias) / svd.s - Vr.T @ a_u, lower=1)[0]
    a = a_u + Y @ mu
    return ForwardResult(a, Vr @ mu, svd.U @ (mu / svd.s), r == m, r, "projection")


# ------------------------------------------------------------------------------------------- helpers
def projector(
    Phi: ArrayLike | sp.spmatrix | sp.sparray, rtol: float | None = None, atol: float | None = None
) -> Projection:
    """P = I − A⁺A from a rank-revealing SVD of Φ (m, n) [AG-4, AG-15], as an operator.

    Singular values ≤ tol = max(rtol·σ_max, atol) are dropped, so P is the projector onto the numerical
    null space; at a singular configuration where Φ vanishes, P = I.
    """
    return Projection(constraint_svd(dense_jacobian(Phi), rtol, atol)[0])


def constraint_inertia(
    M: ArrayLike | sp.spmatrix | sp.sparray | BlockMass,
    P: Projection | ArrayLike,
    kind: str = "Mc",
    gamma: float | None = None,
) -> np.ndarray:
    """Dense constraint inertia matrix: M_c = M + PM − MP [AG-23, 24], M_c′ = PMP + (I−P)M(I−P)
    [AG-28] or M_c″ = PM + γ(I − P) [AG-29] (γ default trace(M)/n).

    ``P`` is a :class:`Projection` or a dense (n, n) projector.
    """
    check_choices(inertia=kind)
    M, n, sparse = _mass(M)
    M = M.toarray() if sparse else M
    P = P.matrix() if isinstance(P, Projection) else np.asarray(P, dtype=float)
    if P.shape != (n, n):
        raise ConstraintError(f"P must have shape ({n}, {n}), got {P.shape}")
    return _inertia_terms(M, P, np.zeros(n), kind, gamma)[0]


def nullspace_basis(
    Phi: ArrayLike | sp.spmatrix | sp.sparray, rtol: float | None = None, atol: float | None = None
) -> np.ndarray:
    """Orthonormal basis C (n, n − r) of ker Φ from a rank-revealing SVD [DE-11, AG-4 V₂]."""
    return constraint_svd(dense_jacobian(Phi), rtol, atol, full=True)[1]


def mass_weighted_inverse(
    M: ArrayLike | sp.spmatrix | sp.sparray | BlockMass,
    Phi: ArrayLike | sp.spmatrix | sp.sparray | None,
    rtol: float | None = None,
) -> np.ndarray:
    """Φ̄ = M⁻¹Φᵀ(ΦM⁻¹Φᵀ)⁻¹ (n, m) [DE-28], with ΦΦ̄ = I. Raises ConstraintError if ΦM⁻¹Φᵀ is singular."""
    M, n, sparse = _mass(M)
    Phi = dense_jacobian(Phi, n)
    rtol, atol = resolve_tolerances(rtol, None)
    if Phi.shape[0] == 0:
        return np.zeros((n, 0))
    return phi_bar(_MassSolver(M, sparse), Phi, rtol, atol, "gauss")[0]


def generalized_constrained_terms(
    M: ArrayLike | sp.spmatrix | sp.sparray | BlockMass,
    b: ArrayLike,
    g: ArrayLike,
    Phi: ArrayLike | sp.spmatrix | sp.sparray | None,
    bias: ArrayLike | None,
    rtol: float | None = None,
) -> GeneralizedConstrainedTerms:
    """Θᵀ, α, ρ of the generalized constrained equation Θᵀτ = M a + b + g − Φᵀ(α + ρ) [DE-36..39].

    Θᵀ = I − ΦᵀΦ̄ᵀ [DE-38] is returned dense for dense M and as a LinearOperator for sparse M.
    """
    M, n, sparse = _mass(M)
    b, g = _vector(b, "b", n), _vector(g, "g", n)
    Phi, bias = checked_constraints(Phi, bias, n)
    rtol, atol = resolve_tolerances(rtol, None)
    m = Phi.shape[0]
    if m == 0:
        eye = spla.aslinearoperator(sp.identity(n)) if sparse else np.eye(n)
        return GeneralizedConstrainedTerms(eye, np.zeros(0), np.zeros(0), np.zeros((n, 0)), np.zeros((0, 0)))
    Phi_bar, cS = phi_bar(_MassSolver(M, sparse), Phi, rtol, atol, "gauss")
    H = _potrs(cS, np.eye(m), lower=1)[0]  # (ΦM⁻¹Φᵀ)⁻¹  [DE-34]
    alpha = Phi_bar.T @ b - H @ bias  # Φ̄ᵀ = HΦM⁻¹  [DE-36]
    rho = Phi_bar.T @ g  # [DE-37]
    if sparse:

        def matvec(x):
            x = np.asarray(x).reshape(-1)
            return x - Phi.T @ (Phi_bar.T @ x)

        theta_T = spla.LinearOperator((n, n), matvec=matvec, dtype=float)
    else:
        theta_T = np.eye(n) - Phi.T @ Phi_bar.T  # [DE-38]
    return GeneralizedConstrainedTerms(theta_T, alpha, rho, Phi_bar, H)
