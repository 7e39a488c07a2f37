"""Model quantities at one state, evaluated once per controller call.

A :class:`ControlContext` holds, for the controller's model at (t, q, v): M, b, g (h = b + g) with a
Cholesky factor of M, the constraint rows φ, Φ, bias (Φ a + bias = 0), their rank-revealing SVD and the
*independent* rows Φ̂ = V_rᵀ (r, n) with bias β = Σ_r⁻¹U_rᵀ bias, so that Φ̂ a + β = 0 is the same
acceleration constraint with redundant rows removed [AG-4]. Every constrained formula of the
controllers is written with Φ̂; since Φ̂ has orthonormal rows spanning the row space of Φ, Θ, P, Nᵀ and
the generalized constraint force Φᵀλ = Φ̂ᵀλ̂ do not depend on that choice, and a desired λ (m,) maps to
λ̂ = Φ̂ Φᵀ λ. Task terms are cached per task object.

Large rigid–flexible models (sparse Φ, n > :data:`~flexbody.linalg.block_mass.DENSE_MASS_LIMIT`): the SVD is taken
on the columns of Φ that hold entries (the joint and the constrained nodal coordinates), Φ̂ is kept sparse,
and Φ̂M⁻¹Φ̂ᵀ comes from the inverse mass on those columns, whose flexible part is formed once per run
(:meth:`flexbody.linalg.block_mass.BlockMass.inverse_submatrix`). No (n, n), (n, r) or (n − k, n) array is made.
The maps that need a dense basis of ker Φ or the passive selection S̃ as a matrix (minimal-coordinate,
partitioned, PIDC) refuse such models with a :class:`~flexbody.errors.FlexbodyError`.
"""
from __future__ import annotations

from functools import cached_property

import numpy as np
import scipy.sparse as sp

from ..linalg.rank import compressed_constraint_svd, constraint_svd, dense_jacobian, resolve_tolerances
from ..linalg.block_mass import DENSE_MASS_LIMIT, BlockMass
from ..errors import FlexbodyError, StateError
from ..linalg.validation import MassSolver, potrf, potrs


class ControlContext:
    """Lazily evaluated terms of a model at (t, q, v) (n coordinates, m constraint rows, rank r).

    Attributes (computed on first use)
    ----------------------------------
    M (n, n), b (n,), g (n,), h (n,) : mass matrix, velocity and gravity forces, τ = M a + b + g − Φᵀλ.
    phi (m,), Phi (m, n), bias (m,), phi_t (m,) : constraint rows.
    svd : ConstraintSVD of Φ; Phi_hat (r, n) orthonormal independent rows; beta (r,) their bias.
    S (k, n) actuation matrix; passive (n − k,) indices of unactuated coordinates; S_tilde (n − k, n).
    """

    def __init__(self, model, t: float, q, v, rtol: float | None = None, atol: float | None = None):
        self.model = model
        self.t = float(t)
        self.ev = model.evaluate(t, q, v)
        self.q, self.v = self.ev.q, self.ev.v
        self.rtol, self.atol = resolve_tolerances(rtol, atol)
        self._tasks = {}

    @property
    def n(self) -> int:
        return int(self.model.n_dofs)

    # ------------------------------------------------------------------ dynamics
    @cached_property
    def _mbg(self):
        return self.model.mass_bias_gravity(self.ev)

    @property
    def M(self) -> np.ndarray:
        return self._mbg[0]

    @property
    def b(self) -> np.ndarray:
        return self._mbg[1]

    @property
    def g(self) -> np.ndarray:
        return self._mbg[2]

    @cached_property
    def h(self) -> np.ndarray:
        return self.b + self.g

    @cached_property
    def solver(self) -> MassSolver:
        return MassSolver(self.M)

    def solve_M(self, x: np.ndarray) -> np.ndarray:
        """M⁻¹ x for x (n,) or (n, k), by the Cholesky factor."""
        x = np.asarray(x, dtype=float)
        if x.ndim == 2 and x.shape[1] == 0:
            return np.zeros_like(x)
        return np.asarray(self.solver.solve(np.ascontiguousarray(x))).reshape(x.shape)

    # ------------------------------------------------------------------ constraints
    @cached_property
    def _rows(self):
        return self.model.constraint_rows(self.ev)

    @property
    def phi(self) -> np.ndarray:
        return self._rows[0]

    @property
    def Phi(self) -> np.ndarray:
        return self._rows[1]

    @property
    def bias(self) -> np.ndarray:
        return self._rows[2]

    @property
    def phi_t(self) -> np.ndarray:
        return self._rows[3]

    @cached_property
    def _Phi_dense(self) -> np.ndarray:
        return dense_jacobian(self.Phi, self.n)

    @property
    def large(self) -> bool:
        """True for a sparse Φ with n > DENSE_MASS_LIMIT: Φ̂ stays sparse and dense maps are refused."""
        return sp.issparse(self.Phi) and self.n > DENSE_MASS_LIMIT

    def refuse_if_large(self, what: str) -> None:
        """Raise FlexbodyError if this model is too large for the dense ``what``."""
        if self.large:
            raise FlexbodyError(f"{what} forms dense arrays with n = {self.n} rows or columns; this model has "
                                f"n > {DENSE_MASS_LIMIT} coordinates. DirectMappingControl and the actuation "
                                "report's direct map work at this size")

    @cached_property
    def svd(self):
        """Thin rank-revealing SVD of Φ; a sparse Φ is decomposed on its stored columns only (exact)."""
        if sp.issparse(self.Phi):
            return compressed_constraint_svd(self.Phi, self.rtol, self.atol, dense=not self.large)
        return constraint_svd(self._Phi_dense, self.rtol, self.atol)[0]

    @cached_property
    def nullspace(self) -> np.ndarray:
        """Orthonormal basis C (n, n − r) of ker Φ [DE-11, AG-4 V₂] (dense: small systems only)."""
        self.refuse_if_large("the orthonormal basis of ker Φ")
        return constraint_svd(self._Phi_dense, self.rtol, self.atol, full=True)[1]

    @cached_property
    def constraint_inertia(self) -> np.ndarray:
        """Φ̂M⁻¹Φ̂ᵀ (r, r) [1/kg], the inverse of H of [DE-34]; for a sparse Φ with a block mass matrix it is
        V_c (M⁻¹)_cc V_cᵀ on the stored columns c of Φ, without solving for the (n, r) array M⁻¹Φ̂ᵀ."""
        svd = self.svd
        if svd.rank == 0:
            return np.zeros((0, 0))
        if svd.columns is not None and isinstance(self.M, BlockMass):
            Vc = self.Phi_hat[:, svd.columns]
            Vc = Vc.toarray() if sp.issparse(Vc) else Vc
            W = Vc @ self.M.inverse_submatrix(svd.columns) @ Vc.T
        else:
            W = self.Phi_hat @ self.solve_M(self.Phi_hat.T)
        return 0.5 * (W + W.T)

    @cached_property
    def H(self) -> np.ndarray:
        """H = (Φ̂M⁻¹Φ̂ᵀ)⁻¹ (r, r) [kg] [DE-34], by Cholesky."""
        r = self.svd.rank
        if r == 0:
            return np.zeros((0, 0))
        c, info = potrf(self.constraint_inertia, lower=1, clean=0)
        if info != 0:                                                     # Φ̂ has orthonormal rows: M is at fault
            raise FlexbodyError("Φ M⁻¹ Φᵀ of the independent constraint rows is not positive definite")
        return potrs(c, np.eye(r), lower=1)[0]

    def Phi_bar_T(self, x: np.ndarray) -> np.ndarray:
        """Φ̄ᵀx = HΦ̂M⁻¹x (r,) or (r, k) for x (n,) or (n, k) [DE-22]: one mass solve per column of x."""
        if self.svd.rank == 0:
            return np.zeros((0,) + np.shape(x)[1:])
        return self.H @ (self.Phi_hat @ self.solve_M(x))

    @property
    def Phi_hat(self) -> np.ndarray:
        return self.svd.Vt

    @cached_property
    def beta(self) -> np.ndarray:
        svd = self.svd
        return (svd.U.T @ self.bias) / svd.s if svd.rank else np.zeros(0)

    def P_apply(self, x: np.ndarray) -> np.ndarray:
        """P x = x − Φ̂ᵀ(Φ̂ x), P = I − A⁺A the projector onto ker Φ [AG-15]."""
        return x - self.Phi_hat.T @ (self.Phi_hat @ x)

    def lam_hat(self, lam) -> np.ndarray:
        """Multipliers λ (m,) of the original rows as λ̂ (r,) of Φ̂: Φ̂ᵀλ̂ = (the row-space part of) Φᵀλ."""
        lam = np.asarray(lam, dtype=float)
        if lam.shape != (self.Phi.shape[0],) or not np.all(np.isfinite(lam)):
            raise StateError(f"desired multipliers must be {self.Phi.shape[0]} finite numbers (one per constraint "
                             f"row {list(self.model.row_labels)}), got shape {lam.shape}")
        return self.Phi_hat @ (self.Phi.T @ lam)

    # ------------------------------------------------------------------ actuation
    @cached_property
    def S(self) -> np.ndarray:
        return np.asarray(self.model.S, dtype=float)

    @cached_property
    def passive(self) -> np.ndarray:
        return np.flatnonzero(~np.any(self.S, axis=0))

    @cached_property
    def S_tilde(self) -> np.ndarray:
        """Selection of the unactuated coordinates (n − k, n) [DE-91]."""
        self.refuse_if_large("the passive-coordinate selection S̃")
        out = np.zeros((len(self.passive), self.n))
        out[np.arange(len(self.passive)), self.passive] = 1.0
        return out

    # ------------------------------------------------------------------ tasks
    def task(self, task):
        """TaskTerms of ``task`` at this state (evaluated once)."""
        terms = self._tasks.get(task)
        if terms is None:
            terms = self._tasks[task] = task.evaluate(self.ev)
        return terms
