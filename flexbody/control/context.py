"""Model quantities at one state, evaluated once per controller call.

A :class:`ControlContext` holds, for the controller's model at (t, q, v): M, b, g (h = b + g) with a
Cholesky factor of M, the constraint rows φ, Φ, bias (Φ a + bias = 0), their rank-revealing SVD and the
*independent* rows Φ̂ = V_rᵀ (r, n) with bias β = Σ_r⁻¹U_rᵀ bias, so that Φ̂ a + β = 0 is the same
acceleration constraint with redundant rows removed [AG-4]. Every constrained formula of the
controllers is written with Φ̂; since Φ̂ has orthonormal rows spanning the row space of Φ, Θ, P, Nᵀ and
the generalized constraint force Φᵀλ = Φ̂ᵀλ̂ do not depend on that choice, and a desired λ (m,) maps to
λ̂ = Φ̂ Φᵀ λ. Task terms are cached per task object.
"""
from __future__ import annotations

from functools import cached_property

import numpy as np

from ..analysis import constraint_svd, dense_jacobian, resolve_tolerances
from ..errors import StateError
from ..linalg import MassSolver


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

    @cached_property
    def svd(self):
        """Thin rank-revealing SVD of Φ (a sparse Φ of a flexible system is made dense: m × n)."""
        return constraint_svd(self._Phi_dense, self.rtol, self.atol)[0]

    @cached_property
    def nullspace(self) -> np.ndarray:
        """Orthonormal basis C (n, n − r) of ker Φ [DE-11, AG-4 V₂] (dense: small systems only)."""
        return constraint_svd(self._Phi_dense, self.rtol, self.atol, full=True)[1]

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
        actuated = np.flatnonzero(np.abs(self.S).sum(axis=0) > 0)
        return np.setdiff1d(np.arange(self.n), actuated)

    @cached_property
    def S_tilde(self) -> np.ndarray:
        """Selection of the unactuated coordinates (n − k, n) [DE-91]."""
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
