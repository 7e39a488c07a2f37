"""Model quantities at one state, evaluated once per controller call.

A :class:`ControlContext` holds, for the controller's model at (t, q, v): M, b, g (h = b + g) with a
Cholesky factor of M, the constraint rows φ, Φ, bias (Φ a + bias = 0), a rank-revealing factorisation of Φ
and the *independent* rows Φ̂ (r, n) with orthonormal rows and bias β, so that Φ̂ a + β = 0 is the same
acceleration constraint with redundant rows removed [AG-4]. Every constrained formula of the controllers
is written with Φ̂; since Φ̂ has orthonormal rows spanning the row space of Φ, Θ, P, Nᵀ and the
generalized constraint force Φᵀλ = Φ̂ᵀλ̂ do not depend on that choice, and a desired λ (m,) maps to
λ̂ = Φ̂ Φᵀ λ. Task terms are cached per task object.

The factorisation (:attr:`ControlContext.basis`, :func:`flexbody.linalg.rank.independent_rows`) is a
Householder QR Φᵀ = QR, Φ̂ = Qᵀ, where the QR certifies that the SVD would keep every row, else the SVD
(Φ̂ = V_rᵀ): the rank is always the SVD's, the SVD is paid for only where the rank is in doubt.

Sparse Φ (rigid–flexible models): Φ is factorised on the columns that hold entries (the joint and the
constrained nodal coordinates) and Φ̂ is kept on them, so Φ̂x and Φ̂ᵀy cost O(r·n_c), and Φ̂M⁻¹Φ̂ᵀ comes
from the inverse mass on those columns, whose flexible part is laid out once per run (the controller's
:class:`~flexbody.control.workspace.ControlWorkspace`). No (n, n), (n, r) or (n − k, n) array is made for
n > :data:`~flexbody.linalg.block_mass.DENSE_MASS_LIMIT`. The maps that need a dense basis of ker Φ or the
passive selection S̃ as a matrix (minimal-coordinate, partitioned, PIDC) refuse such models with a
:class:`~flexbody.errors.FlexbodyError`.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ..errors import ConstraintError, FlexbodyError, StateError
from ..linalg.block_mass import DENSE_MASS_LIMIT, BlockMass
from ..linalg.rank import (
    DENSE_LIMIT,
    compressed_constraint_svd,
    constraint_svd,
    dense_jacobian,
    independent_rows,
    resolve_tolerances,
    rows_on_columns,
)
from ..linalg.validation import MassSolver, potrf, potrs
from .workspace import ControlWorkspace, rigid_factor

if TYPE_CHECKING:
    from ..system import AssembledSystem, Workspace
    from .tasks import Task, TaskTerms


class ControlContext:
    """Lazily evaluated terms of a model at (t, q, v) (n coordinates, m constraint rows, rank r).

    Attributes (computed on first use)
    ----------------------------------
    M (n, n), b (n,), g (n,), h (n,) : mass matrix, velocity and gravity forces, τ = M a + b + g − Φᵀλ.
    phi (m,), Phi (m, n), bias (m,), phi_t (m,) : constraint rows.
    basis : independent rows of Φ on its stored columns (certified QR or SVD), rank r; Phi_hat (r, n)
    orthonormal independent rows; beta (r,) their bias; svd : ConstraintSVD of Φ (when asked for).
    S (k, n) actuation matrix; passive (n − k,) indices of unactuated coordinates; S_tilde (n − k, n).

    ``workspace`` (a :class:`ControlWorkspace`) keeps pattern-dependent structures between the calls of
    one controller; a fresh one is made if not given. ``state``: the :class:`~flexbody.system.Workspace` of the
    state (t, q, v) when the caller has one for ``model`` (its terms are then read from it, not computed again).
    """

    def __init__(
        self,
        model: AssembledSystem,
        t: float,
        q: ArrayLike,
        v: ArrayLike | None,
        rtol: float | None = None,
        atol: float | None = None,
        workspace: ControlWorkspace | None = None,
        *,
        state: Workspace | None = None,
    ) -> None:
        self.model = model
        self.t = float(t)
        self.ev = state if state is not None and state.asm is model else model.workspace(t, q, v)
        self.q, self.v = self.ev.q, self.ev.v
        self.rtol, self.atol = resolve_tolerances(rtol, atol)
        self.workspace = workspace if workspace is not None else ControlWorkspace()
        self._tasks: dict[Task, TaskTerms] = {}

    @property
    def n(self) -> int:
        """Number of coordinates n of the model."""
        return int(self.model.n_dofs)

    # ------------------------------------------------------------------ dynamics
    @cached_property
    def _mbg(self):
        return self.ev.mass_bias_gravity()

    @property
    def M(self) -> np.ndarray | BlockMass:
        """Mass matrix M (n, n) at q: dense for rigid-only models, a
        :class:`~flexbody.linalg.block_mass.BlockMass` with flexible bodies."""
        return self._mbg[0]

    @property
    def b(self) -> np.ndarray:
        """Velocity and internal forces b (n,) at (q, v): the trees' velocity terms, the elastic and damping
        forces of the flexible and reduced bodies and the velocity-dependent part of the force elements."""
        return self._mbg[1]

    @property
    def g(self) -> np.ndarray:
        """g (n,) at q: the forces that hold the model still against gravity, the loads and the elastic part of
        the force elements."""
        return self._mbg[2]

    @cached_property
    def h(self) -> np.ndarray:
        """h = b + g (n,), so that τ = M a + h − Φᵀλ."""
        return self.b + self.g

    @cached_property
    def solver(self) -> MassSolver:
        """:class:`~flexbody.linalg.validation.MassSolver` of M (its Cholesky factor), for solves M x = y."""
        return MassSolver(self.M)

    def solve_M(self, x: np.ndarray) -> np.ndarray:
        """M⁻¹ x for x (n,) or (n, k), by Cholesky factors: of each block of a block mass matrix (the rigid
        ones at this state, the flexible one of the run), else of M."""
        x = np.asarray(x, dtype=float)
        if x.ndim == 2 and x.shape[1] == 0:
            return np.zeros_like(x)
        if not isinstance(self.M, BlockMass):
            return np.asarray(self.solver.solve(np.ascontiguousarray(x))).reshape(x.shape)
        columns = self.mass_columns
        out = None if columns is None or x.shape[0] != self.n else columns.solve(x)
        return self._block_solve(x) if out is None else out

    @cached_property
    def mass_columns(self):
        """:class:`~flexbody.control.workspace.MassColumns` C = M⁻¹[:, K] at K = the stored columns of Φ and
        the actuated coordinates, when the workspace keeps them (a controller's) for a block mass matrix of a
        model that is not large; else None (M⁻¹ is applied by solves)."""
        cols = self.constraint_columns
        if cols is None or not self.workspace.keeps_mass_columns or self.large or not isinstance(self.M, BlockMass):
            return None
        return self.workspace.mass_columns(self.M, cols, self.S, self.rigid_factors)

    @cached_property
    def rigid_factors(self) -> list:
        """[(slice, lower Cholesky factor)] of the dense rigid blocks of a block mass matrix at this state."""
        M = self.M
        assert isinstance(M, BlockMass)  # asked for with a block mass matrix only
        return [(s, rigid_factor(block, s)) for s, block in M.rigid]

    def _block_solve(self, x: np.ndarray) -> np.ndarray:
        if x.shape[0] != self.n:
            raise StateError(f"solve with M: right-hand side has {x.shape[0]} rows, expected {self.n}")
        M = self.M
        assert isinstance(M, BlockMass)  # called with a block mass matrix only
        out = np.empty(x.shape)
        for s, c in self.rigid_factors:
            out[s] = potrs(c, x[s], lower=1)[0]
        fs = M.flexible_slice
        if fs.stop > fs.start:
            out[fs] = M.flexible.solve(np.ascontiguousarray(x[fs])).reshape(out[fs].shape)
        return out

    # ------------------------------------------------------------------ constraints
    @cached_property
    def _rows(self):
        return self.ev.constraint_rows()

    @property
    def phi(self) -> np.ndarray:
        """Constraint value φ (m,) at (t, q), in each row's unit."""
        return self._rows[0]

    @property
    def Phi(self) -> np.ndarray | sp.csr_matrix:
        """Constraint Jacobian Φ (m, n): dense for rigid-only models, sparse CSR with flexible bodies."""
        return self._rows[1]

    @property
    def bias(self) -> np.ndarray:
        """Acceleration bias (m,), so that Φ a + bias = 0."""
        return self._rows[2]

    @property
    def phi_t(self) -> np.ndarray:
        """Rheonomic rate φ_t = ∂φ/∂t (m,), so that Φ v + φ_t = 0."""
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
            raise FlexbodyError(
                f"{what} forms dense arrays with n = {self.n} rows or columns; this model has "
                f"n > {DENSE_MASS_LIMIT} coordinates. DirectMappingControl and the actuation "
                "report's direct map work at this size"
            )

    @cached_property
    def _stored(self):
        """StoredColumns of a sparse Φ (kept by the workspace while its pattern holds); None if Φ is dense."""
        if not sp.issparse(self.Phi):
            return None
        Phi = self.Phi if self.Phi.format == "csr" else sp.csr_matrix(self.Phi, dtype=float)
        return self.workspace.stored_columns(Phi)

    @property
    def constraint_columns(self) -> np.ndarray | None:
        """The sorted columns c (n_c,) of a sparse Φ that hold entries, on which Φ̂ lives; None if Φ is dense."""
        return None if self._stored is None else self._stored.columns

    @cached_property
    def Phi_c(self) -> np.ndarray:
        """Φ on its stored columns (m, n_c) as a dense array; Φ itself (m, n) if Φ is dense."""
        if self._stored is None:
            return self._Phi_dense
        m, n_c = self.Phi.shape[0], len(self._stored.columns)
        if m * n_c > DENSE_LIMIT:
            raise ConstraintError(
                f"constraint Jacobian with {m} rows touching {n_c} coordinates is too large "
                f"for a dense factorisation (m·n_c > {DENSE_LIMIT})"
            )
        Phi = self.Phi
        assert not isinstance(Phi, np.ndarray)  # stored columns: Φ is sparse
        Phi = Phi if Phi.format == "csr" else sp.csr_matrix(Phi, dtype=float)
        block = self._stored.block(Phi)
        if not np.isfinite(block).all():
            raise ConstraintError("Phi contains NaN/Inf")
        return block

    @cached_property
    def basis(self):
        """Independent rows of Φ on :attr:`constraint_columns` [AG-4]: ``Vt`` (r, n_c) orthonormal, ``rank``,
        ``coordinates(bias)`` → β and ``multipliers(λ̂)`` → λ; a certified QR, else the SVD
        (:func:`~flexbody.linalg.rank.independent_rows`: the rank is the SVD's). A dense Φ's are the state's
        workspace's (one decomposition per configuration, shared with the dynamics of the state)."""
        if self._stored is None:
            return self.ev.independent_rows(self.rtol, self.atol)
        return independent_rows(self.Phi_c, self.rtol, self.atol)

    @property
    def rank(self) -> int:
        """r, the numerical rank of Φ (that of its SVD with tol = max(rtol·σ_max, atol))."""
        return self.basis.rank

    @cached_property
    def svd(self):
        """Thin rank-revealing SVD of Φ; a sparse Φ is decomposed on its stored columns only (exact).
        The controllers use :attr:`basis`; this is for callers that want Φ's singular values."""
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
        Φ̂_c (M⁻¹)_cc Φ̂_cᵀ on the stored columns c of Φ, without solving for the (n, r) array M⁻¹Φ̂ᵀ."""
        r = self.rank
        if r == 0:
            return np.zeros((0, 0))
        V, cols = self.basis.Vt, self.constraint_columns
        if self.mass_columns is not None:
            W = V @ self.mass_columns.inverse_cc() @ V.T
        elif cols is not None and isinstance(self.M, BlockMass):
            W = V @ self.workspace.inverse_on_columns(self.M, cols, self.rigid_factors) @ V.T
        else:
            W = self.Phi_hat_dot(self.solve_M(self.Phi_hat_T_dot(np.eye(r))))
        return 0.5 * (W + W.T)

    @cached_property
    def _inertia_factor(self) -> np.ndarray:
        """Lower Cholesky factor of Φ̂M⁻¹Φ̂ᵀ (r, r)."""
        c, info = potrf(self.constraint_inertia, lower=1, clean=0)
        if info != 0:  # Φ̂ has orthonormal rows: M is at fault
            raise FlexbodyError("Φ M⁻¹ Φᵀ of the independent constraint rows is not positive definite")
        return c

    def H_dot(self, y: np.ndarray) -> np.ndarray:
        """H y (r,) or (r, k) for y (r,) or (r, k), H = (Φ̂M⁻¹Φ̂ᵀ)⁻¹ [DE-34] applied by its Cholesky factor."""
        if self.rank == 0:
            return np.zeros((0, *np.shape(y)[1:]))
        return potrs(self._inertia_factor, y, lower=1)[0]

    @cached_property
    def H(self) -> np.ndarray:
        """H = (Φ̂M⁻¹Φ̂ᵀ)⁻¹ (r, r) [kg] [DE-34], by Cholesky."""
        return self.H_dot(np.eye(self.rank))

    def Phi_bar_T(self, x: np.ndarray) -> np.ndarray:
        """Φ̄ᵀx = HΦ̂M⁻¹x (r,) or (r, k) for x (n,) or (n, k) [DE-22]."""
        return self.H_dot(self.Phi_hat_solve(x))

    def Phi_hat_solve(self, x: np.ndarray) -> np.ndarray:
        """Φ̂M⁻¹x (r,) or (r, k) for x (n,) or (n, k): Φ̂_c (M⁻¹[:, c])ᵀx from the kept mass columns (M is
        symmetric), else by one mass solve per column of x."""
        if self.rank == 0:
            return np.zeros((0, *np.shape(x)[1:]))
        columns = self.mass_columns
        if columns is None:
            return self.Phi_hat_dot(self.solve_M(x))
        return self.basis.Vt @ (columns.C_c.T @ x)

    def solve_M_Phi_hat_T(self, y: np.ndarray) -> np.ndarray:
        """M⁻¹Φ̂ᵀy (n,) or (n, k) for y (r,) or (r, k): M⁻¹[:, c] Φ̂_cᵀ y from the kept mass columns, else a solve."""
        columns = self.mass_columns
        if columns is None or self.rank == 0:
            return self.solve_M(self.Phi_hat_T_dot(y))
        return columns.C_c @ (self.basis.Vt.T @ y)

    @cached_property
    def Phi_hat(self):
        """Φ̂ (r, n): dense, or CSR with entries on the stored columns only for large models."""
        V, cols = self.basis.Vt, self.constraint_columns
        if cols is None:
            return V
        if self.large:
            return rows_on_columns(V, cols, self.n)
        out = np.zeros((V.shape[0], self.n))
        out[:, cols] = V
        return out

    def Phi_hat_dot(self, x: np.ndarray) -> np.ndarray:
        """Φ̂x (r,) or (r, k) for a dense x (n,) or (n, k), from the stored columns of x only."""
        cols = self.constraint_columns
        return self.basis.Vt @ (x if cols is None else x[cols])

    def Phi_hat_T_dot(self, y: np.ndarray) -> np.ndarray:
        """Φ̂ᵀy (n,) or (n, k) for y (r,) or (r, k), zero outside the stored columns."""
        z = self.basis.Vt.T @ y
        cols = self.constraint_columns
        if cols is None:
            return z
        out = np.zeros((self.n, *z.shape[1:]))
        out[cols] = z
        return out

    @cached_property
    def beta(self) -> np.ndarray:
        """β (r,) with Φ̂a + β = 0 ⇔ Φa + bias = 0."""
        return self.basis.coordinates(self.bias) if self.rank else np.zeros(0)

    def P_apply(self, x: np.ndarray) -> np.ndarray:
        """P x = x − Φ̂ᵀ(Φ̂ x), P = I − A⁺A the projector onto ker Φ [AG-15]."""
        return x - self.Phi_hat_T_dot(self.Phi_hat_dot(x))

    def lam_hat(self, lam: ArrayLike) -> np.ndarray:
        """Multipliers λ (m,) of the original rows as λ̂ (r,) of Φ̂: Φ̂ᵀλ̂ = (the row-space part of) Φᵀλ."""
        lam = np.asarray(lam, dtype=float)
        if lam.shape != (self.Phi.shape[0],) or not np.all(np.isfinite(lam)):
            raise StateError(
                f"desired multipliers must be {self.Phi.shape[0]} finite numbers (one per constraint "
                f"row {list(self.model.row_labels)}), got shape {lam.shape}"
            )
        return self.basis.Vt @ (self.Phi_c.T @ lam)

    # ------------------------------------------------------------------ actuation
    @cached_property
    def S(self) -> np.ndarray:
        """Actuation (selection) matrix S (k, n) of the model, τ_k = S τ."""
        return np.asarray(self.model.S, dtype=float)

    @cached_property
    def passive(self) -> np.ndarray:
        """Indices (n − k,) of the passive coordinates, the zero columns of S (no actuator moves them)."""
        return self.workspace.passive(self.S)

    @cached_property
    def S_tilde(self) -> np.ndarray:
        """Selection of the unactuated coordinates (n − k, n) [DE-91]."""
        self.refuse_if_large("the passive-coordinate selection S̃")
        out = np.zeros((len(self.passive), self.n))
        out[np.arange(len(self.passive)), self.passive] = 1.0
        return out

    # ------------------------------------------------------------------ tasks
    def task(self, task: Task) -> TaskTerms:
        """TaskTerms of ``task`` at this state (evaluated once)."""
        terms = self._tasks.get(task)
        if terms is None:
            terms = self._tasks[task] = task.evaluate(self.ev)
        return terms
