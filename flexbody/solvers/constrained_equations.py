"""The residual of the constrained equations of a rigid–flexible system and its Jacobian blocks, shared
by static equilibrium (q̈ = 0, v = 0, load factor s) and implicit dynamics (s = 1):

    r = s·(M q̈ + b + g)_rigid ⊕ (M_f q̈_f + k(q, v) − s·f_ext(q)) − Q(t, q, v) − Φ(q)ᵀλ − s·τ,    φ(q, t)
                                                                              [DE-108, DE-112, DE-113]

Force elements enter as −Q(t, q, v) (:mod:`flexbody.constraints.force_elements`), unscaled by s (they are
part of the system, not of its loads). The joint rows come from the recursive Newton–Euler algorithm; their Jacobians
(M_q q̈ + ∂h/∂q, the constraint Hessian term −∂(Φᵀλ)/∂q and the force elements' −∂Q/∂q of the joint rows) are exact
where every term on the joint columns has its derivative — the trees' (:meth:`~flexbody.RigidTree.
inverse_dynamics_derivatives`), the reduced bodies' (:mod:`flexbody.reduced.force_derivatives`), the
constraints' with a ``joint_hessian`` (attachments, loop closures, rods, points on surfaces, couplings, knife
edges, rolling discs) and the force elements' with ``exact_jacobians`` (springs, joint springs, bushings,
compliant contacts of points and rolling balls on planes, spheres and cylinders, user forces with their Jacobians) —,
else taken by central differences (user Pfaffian rows, compliant contacts on boxes and meshes, user forces without
Jacobians). The flexible rows and their Jacobians are exact (element kernels); see
:meth:`flexbody.system.flexible_stack.FlexiblePart`.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from ..linalg.csr_products import add_within, product, transposed_product

__all__ = ["EquationResidual"]


class EquationResidual:
    """r and φ of an assembled system at (t, q, v, q̈, λ, τ) and load factor s; counts and times the
    flexible force and Jacobian evaluations (``force_calls``, ``force_time`` [s], ``jacobian_calls``,
    ``jacobian_time`` [s]).

    fd_step : relative step of the central differences of the joint rows.
    exact : form the joint rows' Jacobians exactly where the system allows it (module docstring; ``self.exact`` says
        whether it does).
    """

    def __init__(self, asm, fd_step: float = 1e-5, *, exact: bool = True):
        self.asm, self.fd_step = asm, float(fd_step)
        self.n_r = asm.n_rigid
        self.exact = bool(exact) and _exact_joint_rows(asm)
        self.force_calls = self.jacobian_calls = 0
        self.force_time = self.jacobian_time = 0.0

    def evaluate(self, ws, qdd, lam, tau, s: float = 1.0):
        """r (n,), φ (m,) and Φ (m, n) at the state of the workspace ``ws`` (a statics workspace is at rest:
        q̈ = None)."""
        asm = self.asm
        r = np.empty(asm.n_dofs)
        self._joint_rows(ws, qdd, s, r)
        if asm.sparse:
            fs = asm.flexible.slice
            h_f = self.internal_force(ws) - s * ws.external_force()
            r[fs] = h_f if qdd is None else product(asm.flexible.mass.matrix, qdd[fs]) + h_f
        if asm.forces:
            r -= ws.applied_force()
        phi, Phi, _, _ = ws.constraint_rows()
        if Phi.shape[0]:
            r -= transposed_product(Phi, lam)
        return r - s * tau, phi, Phi

    def internal_force(self, ws) -> np.ndarray:
        """k(q, v) of the flexible bodies at ``ws``, counted and timed when computed here (a Newton iteration that
        formed its matrix at ``ws`` has it from the Jacobians' pass)."""
        if ws.has("internal_force"):
            return ws.internal_force()
        t0 = time.perf_counter()
        k = ws.internal_force()
        self.force_time += time.perf_counter() - t0
        self.force_calls += 1
        return k

    def _joint_rows(self, ws, qdd, s, out):
        """s·(M q̈ + h) over the joint and modal coordinates (statics, q̈ None: s·(g + elastic))."""
        space, n_r = self.asm.joint_space, self.n_r
        if n_r:
            out[:n_r] = s * (
                space.inverse_dynamics(ws, velocity=False) if qdd is None else space.inverse_dynamics(ws, qdd[:n_r])
            )

    def rigid_rows(self, t, q, v, qdd, lam, s: float = 1.0) -> np.ndarray:
        """Rows 0..n_r of r + s·τ: s·(M q̈ + b + g) − Q_r − Φ_rᵀλ (n_r,), from the trees, the reduced bodies and
        the constraints and force elements on their columns alone (no flexible force, no flexible-only row)."""
        asm = self.asm
        ws = asm.workspace(t, q, v)
        out = np.empty(self.n_r)
        self._joint_rows(ws, qdd, s, out)
        if asm.joint_forces:
            out -= ws.joint_applied_force()
        if asm.joint_constraints:
            out -= ws.joint_constraint_jacobian().T @ lam
        return out

    def exact_rigid_tangent(self, ws, qdd, lam, s: float = 1.0, c_q: float = 1.0, c_v: float = 0.0) -> np.ndarray:
        """c_q ∂r_r/∂q_r + c_v ∂r_r/∂v_r (n_r, n_r) at the workspace ``ws`` (:meth:`exact_rigid_jacobians`)."""
        R_q, R_v = self.exact_rigid_jacobians(ws, qdd, lam, s)
        return c_q * R_q + c_v * R_v

    def exact_rigid_jacobians(self, ws, qdd, lam, s: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
        """(∂r_r/∂q_r, ∂r_r/∂v_r) (n_r, n_r) at the workspace ``ws`` in one pass: the trees' analytic derivatives,
        s·∂τ/∂q and s·∂τ/∂q̇ at (q, v, q̈) (v = q̈ = 0 in statics), the joint constraints' Hessians, −∂(Φ_rᵀλ)/∂q
        (``joint_hessian``), and the force elements' −∂Q/∂q, −∂Q/∂v."""
        asm = self.asm
        a = np.zeros(self.n_r) if qdd is None else qdd[: self.n_r]
        R_q, R_v = asm.joint_space.inverse_dynamics_derivatives(ws, a)
        R_q *= s
        R_v *= s
        for cols, H in self.constraint_hessians(ws, lam):
            joint = cols < self.n_r  # the nodal columns' part is in coupling_blocks
            R_q[np.ix_(cols[joint], cols[joint])] -= H[np.ix_(joint, joint)]
        if asm.joint_forces:  # −Q: −∂Q/∂q, −∂Q/∂v on the joint columns
            K, C = asm.joint_forces.jacobians(ws, slice(0, self.n_r))
            R_q -= K.toarray()
            R_v -= C.toarray()
        return R_q, R_v

    def jacobian_blocks(self, ws, qdd, lam):
        """(R_q, R_v, K_f, C_f): ∂r/∂q and ∂r/∂v at the workspace ``ws`` (load factor 1) by blocks — the joint rows'
        (dense n_r × n_r; exact, :meth:`exact_rigid_jacobians`, or by central differences, :meth:`rigid_tangent`) and
        the flexible rows' (CSR n_f × n_f: the element tangent and damping in one kernel pass and the force elements'
        Jacobians; None without flexible bodies), as the sensitivities use them."""
        n_r, at_rest = self.n_r, ws.at_rest
        if not n_r:
            R_q = R_v = np.zeros((0, 0))
        elif self.exact:
            R_q, R_v = self.exact_rigid_jacobians(ws, qdd, lam)
        else:
            v = None if at_rest else ws.v
            R_q = self.rigid_tangent(ws.t, ws.q, v, qdd, lam, 1.0, c_q=1.0, c_v=0.0)
            R_v = self.rigid_tangent(ws.t, ws.q, v, qdd, lam, 1.0, c_q=0.0, c_v=1.0)
        if not self.asm.sparse:
            return R_q, R_v, None, None
        _, K, C = self.flexible_jacobians(ws, damping=True)
        C = sp.csr_matrix(K.shape) if C is None else C
        forces = self.flexible_force_blocks(ws)
        K_f = (K if forces is None else K + forces[0]).tocsr()
        C_f = (C if forces is None else C + forces[1]).tocsr()
        return R_q, R_v, K_f, C_f

    def constraint_hessians(self, ws, lam) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
        """(columns, ∂(Φᵀλ)/∂q) of every constraint with a Hessian (``joint_hessian``) at the workspace ``ws`` for the
        multipliers λ (m,), computed once per (state, λ) and kept with the workspace: the joint rows' Jacobian takes
        their joint block, :meth:`coupling_blocks` the rest."""
        asm, lam = self.asm, np.asarray(lam, dtype=float)

        def compute() -> tuple[tuple[np.ndarray, np.ndarray], ...]:
            out = []
            for constraint, rows in zip(asm.constraints, asm.row_slices):
                part = constraint.joint_hessian(ws, lam[rows]) if hasattr(constraint, "joint_hessian") else None
                if part is not None:
                    out.append(part)
            return tuple(out)

        return ws.memo(("constraint hessians", lam.tobytes()), compute)

    def coupling_blocks(self, ws, lam) -> tuple[sp.csr_matrix | None, sp.csr_matrix | None]:
        """(X_q, X_v) CSR (n, n): what ∂r/∂q and ∂r/∂v hold besides :meth:`jacobian_blocks`' joint and flexible
        blocks — the constraints' −∂(Φᵀλ)/∂q on nodal columns (rods and curved surfaces on nodes) and between joint
        and nodal columns, and the force elements' −∂Q/∂q, −∂Q/∂v between joint and nodal columns; None where there is
        none. The Newton solvers leave them out (their matrix is block-diagonal); the derivatives take them."""
        asm, n, n_r = self.asm, self.asm.n_dofs, self.n_r
        entries: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        for cols, H in self.constraint_hessians(ws, lam):
            outside = ~np.logical_and.outer(cols < n_r, cols < n_r)
            i, j = np.nonzero(outside)
            entries.append((cols[i], cols[j], -H[i, j]))
        X_q = sp.csr_matrix((n, n))
        if entries:
            i, j, x = (np.concatenate(parts) for parts in zip(*entries))
            X_q = sp.csr_matrix((x, (i, j)), shape=(n, n))
        X_v = sp.csr_matrix((n, n))
        if asm.sparse and n_r and any(f.trees and f.bodies for f in asm.forces.elements):
            K, C = asm.forces.jacobians(ws)
            X_q, X_v = X_q - _between_parts(K, n_r), X_v - _between_parts(C, n_r)
        return (X_q.tocsr() if X_q.nnz else None), (X_v.tocsr() if X_v.nnz else None)

    def rigid_tangent(self, t, q, v, qdd, lam, s: float = 1.0, c_q: float = 1.0, c_v: float = 0.0) -> np.ndarray:
        """c_q ∂r_r/∂q_r + c_v ∂r_r/∂v_r (n_r, n_r) by central differences of :meth:`rigid_rows`."""
        n_r, h = self.n_r, self.fd_step
        A = np.zeros((n_r, n_r))
        for j in range(n_r):
            if c_q:
                A[:, j] += c_q * self._central(
                    lambda d, j=j: self.rigid_rows(t, _shifted(q, j, d), v, qdd, lam, s), h * max(1.0, abs(q[j]))
                )
            if c_v:
                A[:, j] += c_v * self._central(
                    lambda d, j=j: self.rigid_rows(t, q, _shifted(v, j, d), qdd, lam, s), h * max(1.0, abs(v[j]))
                )
        return A

    @staticmethod
    def _central(f, d):
        return (f(d) - f(-d)) / (2.0 * d)

    def flexible_jacobians(self, ws, *, damping: bool = True, s: float = 1.0):
        """(h_f, ∂h_f/∂q, ∂h_f/∂v or None) at the workspace ``ws`` and load factor s, timed and counted."""
        t0 = time.perf_counter()
        out = ws.flexible_jacobians(damping=damping, load_factor=s)
        self.jacobian_time += time.perf_counter() - t0
        self.jacobian_calls += 1
        return out

    def iteration_matrix(self, ws, qdd, lam, *, c_m: float, c_v: float, c_q: float, s: float = 1.0):
        """(A_r dense (n_r, n_r), A_f sparse (n_f, n_f)) of A = c_m M + c_v ∂r/∂v + c_q ∂r/∂q at the workspace ``ws``
        (λ the rows' multipliers, q̈ None in statics, s the load factor): the Newton matrix of every solver —
        generalized-α (c_m = 1, c_v = γ′h, c_q = β′h²), statics (0, 0, 1) and the linearisation. The joint rows by
        central differences (:meth:`rigid_tangent`), the flexible rows exact: the element tangent and, with c_v,
        the Kelvin–Voigt damping matrix in one pass (which also gives the internal force), the follower loads'
        stiffness scaled by s, the mass, the force elements' Jacobians."""
        asm, n_r = self.asm, self.n_r
        A_r = np.zeros((n_r, n_r))
        if n_r:
            if c_m:
                M = ws.mass_matrix()
                A_r += c_m * (M.rigid_block() if asm.sparse else M)
            if self.exact:
                A_r += self.exact_rigid_tangent(ws, qdd, lam, s, c_q=c_q, c_v=c_v)
            else:
                A_r += self.rigid_tangent(ws.t, ws.q, None if ws.at_rest else ws.v, qdd, lam, s, c_q=c_q, c_v=c_v)
        if not asm.sparse:
            return A_r, sp.csr_matrix((0, 0))
        _, K, C = self.flexible_jacobians(ws, damping=bool(c_v), s=s)
        A_f = c_q * K if not c_m else add_within(c_q * K, asm.flexible.mass.matrix, c_m)  # on K's pattern
        A_f = A_f if C is None else add_within(A_f, C, c_v)
        forces = self.flexible_force_jacobians(ws, c_q, c_v)
        return A_r, (A_f if forces is None else (A_f + forces).tocsr())

    def flexible_force_jacobians(self, ws, c_q: float, c_v: float):
        """c_q ∂(−Q)/∂q + c_v ∂(−Q)/∂v of the force elements on the flexible columns (CSR, n_f × n_f), or
        None without force elements on flexible bodies; the joint rows get theirs from :meth:`rigid_tangent`."""
        blocks = self.flexible_force_blocks(ws)
        return None if blocks is None else c_q * blocks[0] + c_v * blocks[1]

    def flexible_force_blocks(self, ws):
        """(∂(−Q)/∂q, ∂(−Q)/∂v) of the force elements on the flexible columns (CSR, n_f × n_f) in one evaluation of
        the elements, or None without force elements on flexible bodies."""
        asm = self.asm
        if not asm.sparse or not any(f.bodies for f in asm.forces.elements):
            return None
        K, C = asm.forces.jacobians(ws, asm.flexible.slice)
        return -K, -C


def _between_parts(A: sp.spmatrix, n_r: int) -> sp.csr_matrix:
    """The entries of A (n, n) between the first n_r columns and the others (both off-diagonal blocks)."""
    A = A.tocoo()
    keep = (A.row < n_r) != (A.col < n_r)
    return sp.csr_matrix((A.data[keep], (A.row[keep], A.col[keep])), shape=A.shape)


def _exact_joint_rows(asm) -> bool:
    """Whether every term on the joint columns has its exact Jacobian: force elements on joints whose Jacobians are
    exact (``exact_jacobians``), every joint constraint with a ``joint_hessian`` that applies (``has_joint_hessian``);
    trees and reduced bodies always have theirs."""
    if not all(force.exact_jacobians for force in asm.joint_forces.elements):
        return False
    return all(
        hasattr(constraint, "joint_hessian") and getattr(constraint, "has_joint_hessian", True)
        for constraint, _ in asm.joint_constraints
    )


def _shifted(x: np.ndarray, j: int, d: float) -> np.ndarray:
    y = x.copy()
    y[j] += d
    return y
