"""What the constrained dynamics return: :class:`ForwardResult` (a, Φᵀλ, λ), :class:`InverseResult`
(τ, Φᵀλ), :class:`Projection` (P = I − A⁺A and A⁺ [AG-15]) and :class:`GeneralizedConstrainedTerms`
[DE-39], with the names of the methods and constraint inertias.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import FlexbodyError
from ..linalg.rank import ConstraintSVD

METHODS = ("multiplier", "gauss", "nullspace", "projection")
INERTIA_KINDS = ("Mc", "symmetric", "gamma")
NULLSPACE_SPARSE_LIMIT = 2000
"""Largest n for which ``method="nullspace"`` with sparse M forms the dense orthonormal basis; above it
the basis is a sparse coordinate partition (:func:`_nullspace_partitioned`)."""


def check_choices(method: str | None = None, inertia: str | None = None) -> None:
    """FlexbodyError naming an unknown forward-dynamics ``method`` (:data:`METHODS`) or constraint ``inertia`` kind
    (:data:`INERTIA_KINDS`) and the valid ones (None: not checked)."""
    if method is not None and method not in METHODS:
        raise FlexbodyError(f"unknown method {method!r}; valid methods are {', '.join(METHODS)}")
    if inertia is not None and inertia not in INERTIA_KINDS:
        raise FlexbodyError(f"unknown inertia kind {inertia!r}; valid kinds are {', '.join(INERTIA_KINDS)}")


CONSISTENCY_RTOL = 1e-8
"""Relative tolerance of the check ‖Φa + bias‖ ≤ CONSISTENCY_RTOL·(‖Φ‖_F‖a‖ + ‖bias‖) in :func:`inverse`."""


@dataclass(frozen=True)
class ForwardResult:
    """Result of :func:`forward`.

    Attributes
    ----------
    a : ndarray (n,)
        Generalized accelerations.
    constraint_force : ndarray (n,)
        Generalized constraint force Φᵀλ = M a + h − τ [N or N·m].
    lam : ndarray (m,)
        Multipliers; the minimum-norm ones when Φ is rank-deficient [AG Remark 4].
    lam_unique : bool
        False when Φ is rank-deficient (then λ + y with y ∈ ker Φᵀ gives the same force).
    rank : int
        Numerical rank of Φ used by the method.
    method : str
        The method that produced the result.
    contact_forces : ndarray (c, 3) or None
        The unilateral contacts' mean forces over a nonsmooth step, (f_n, f_t₁, f_t₂) [N] in each contact's frame,
        in the system's order of contacts (None for smooth dynamics).
    """

    a: np.ndarray
    constraint_force: np.ndarray
    lam: np.ndarray
    lam_unique: bool
    rank: int
    method: str
    contact_forces: np.ndarray | None = None


@dataclass(frozen=True)
class InverseResult:
    """Result of :func:`inverse`: actuation ``tau`` (n,), ``constraint_force`` Φᵀλ (n,), ``lam`` (m,),
    ``lam_unique`` and the numerical ``rank`` of Φ."""

    tau: np.ndarray
    constraint_force: np.ndarray
    lam: np.ndarray
    lam_unique: bool
    rank: int


@dataclass(frozen=True)
class Projection:
    """Orthogonal projector P = I − A⁺A onto ker Φ [AG-15] (= V₂V₂ᵀ [AG-4]) applied without forming it.

    With Φ = U_r Σ_r V_rᵀ (rank r): (I − P)x = V_r V_rᵀ x, A⁺y = V_r Σ_r⁻¹ U_rᵀ y.
    """

    svd: ConstraintSVD

    @property
    def rank(self) -> int:
        """Numerical rank r of Φ."""
        return self.svd.rank

    @property
    def singular_values(self) -> np.ndarray:
        """All singular values of Φ (min(m, n),), descending."""
        return self.svd.singular_values

    @property
    def tol(self) -> float:
        """Absolute tolerance max(rtol·σ_max, atol): singular values ≤ tol count as zero."""
        return self.svd.tol

    @property
    def n(self) -> int:
        """Number of coordinates n (columns of Φ)."""
        return self.svd.n_dofs

    def apply_perp(self, x: np.ndarray) -> np.ndarray:
        """(I − P) x = x⊥ [AG-5], x of shape (n,) or (n, k)."""
        Vt = self.svd.Vt
        return Vt.T @ (Vt @ x)

    def apply(self, x: np.ndarray) -> np.ndarray:
        """P x = x∥ [AG-5], x of shape (n,) or (n, k)."""
        return x - self.apply_perp(x)

    def pinv_apply(self, y: np.ndarray) -> np.ndarray:
        """A⁺ y (n,) for y (m,) [AG-15, AG-16]."""
        s = self.svd
        return s.Vt.T @ ((s.U.T @ y) / s.s)

    def pinv_t_apply(self, x: np.ndarray) -> np.ndarray:
        """A⁺ᵀ x (m,) for x (n,): the minimum-norm λ with Φᵀλ = x when x ∈ im Φᵀ [AG-18]."""
        s = self.svd
        return s.U @ ((s.Vt @ x) / s.s)

    def matrix(self) -> np.ndarray:
        """Dense P (n, n); for small n only."""
        Vt = self.svd.Vt
        return np.eye(self.n) - Vt.T @ Vt


@dataclass(frozen=True)
class GeneralizedConstrainedTerms:
    """Terms of the generalized constrained equation Θᵀτ = M a + b + g − Φᵀ(α + ρ) [DE-39].

    Attributes
    ----------
    theta_T : ndarray (n, n) or scipy.sparse.linalg.LinearOperator
        Θᵀ = I − ΦᵀΦ̄ᵀ [DE-38]; an operator when M is sparse (never formed densely).
    alpha : ndarray (m,)
        α = HΦM⁻¹b − HΦ̇q̇ [DE-36].
    rho : ndarray (m,)
        ρ = HΦM⁻¹g [DE-37].
    Phi_bar : ndarray (n, m)
        Mass-weighted inverse Φ̄ [DE-28].
    H : ndarray (m, m)
        Constraint-space mass matrix (ΦM⁻¹Φᵀ)⁻¹ [DE-34].
    """

    theta_T: object
    alpha: np.ndarray
    rho: np.ndarray
    Phi_bar: np.ndarray
    H: np.ndarray
