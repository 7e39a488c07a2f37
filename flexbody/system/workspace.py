"""The workspace of one state: every term of the constrained equations at (t, q, v), each computed on first use
and kept, in the manner of Pinocchio's ``Data`` and RigidBodyDynamics.jl's ``MechanismState``,

    τ = M(q) a + h(q, v) − Φᵀλ,    Φ a + bias = 0,    Φ v + φ_t = 0,    φ(q, t) = 0        [DE-2..7, DE-112, 113]

An :class:`~flexbody.system.assembled.AssembledSystem` is constant; :meth:`AssembledSystem.workspace` makes a
:class:`Workspace` for a state, and the solvers, integrators and controllers that visit that state create it once,
pass it on and read every term from it (the dynamics of an RK4 stage, its controller and its recorded row share one
workspace). Nothing is cached anywhere else. Terms that depend on q only (M, φ, Φ, φ_t, the decompositions of Φ, the
loads) sit in a part that :meth:`Workspace.with_velocity` shares with the workspace of the same (t, q) at another v,
so a velocity projection and the step after it assemble and decompose Φ once. Kept arrays are read-only.

Global coordinates stack the joint coordinates of each rigid tree, the modal coordinates of the reduced bodies and
the absolute nodal coordinates of each flexible body [DE-110]; M is block diagonal with one dense block per tree
(or one for the dense part with reduced bodies) and the constant sparse flexible block, h = b + g per tree and
k(q, v) − f_ext(q) for the flexible bodies (:mod:`flexbody.system.flexible_stack`), minus the force elements' Q
[DE-7], and Φ stacks the rows of every constraint in order. Rigid-only systems give dense M and Φ; systems with
flexible bodies a :class:`~flexbody.linalg.block_mass.BlockMass` and a sparse CSR Φ, so no n × n dense matrix is
formed. Systems without flexible nodes whose constraints all have a compiled form take M, h, the rows and the
energies from one call of their :class:`~flexbody.system.joint_program.JointProgram`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, TypeVar

import numpy as np
import scipy.sparse as sp

from ..linalg.block_mass import BlockMass
from ..linalg.rank import ConstraintQR, ConstraintSVD, dense_jacobian, independent_rows
from ..rigid.kinematics import Kinematics
from .state import Terms, read_only

T = TypeVar("T")

__all__ = ["Workspace"]

_MISSING = object()
"""Marks a term a workspace has not computed yet."""


class Workspace:
    """Every term of one state (t, q, v) of an assembled system, each computed on first use and then kept.

    Made by :meth:`AssembledSystem.workspace` (which checks the state) and passed by the code that visits the
    state; it implements :class:`flexbody.rigid.state_view.StateView`, the view of a state the anchors and
    constraints are written on. Its arrays are read-only: a consumer that needs to change one copies it.

    Attributes
    ----------
    asm : AssembledSystem
        The system (constant).
    t : float
        Time [s].
    q, v : ndarray (n,)
        Coordinates and velocities (the workspace's own copies; not to be changed: the kept terms are of them;
        they stay writeable so that the compiled kernels see the array types they were compiled for).
    at_rest : bool
        Made without velocities (v = 0): the flexible bodies' forces are then the elastic ones alone.
    """

    __slots__ = ("_batches", "_kin", "_position", "_single", "_terms", "asm", "at_rest", "q", "t", "v")

    def __init__(
        self,
        asm: Any,  # the AssembledSystem that makes the workspace (which imports this module)
        t: float,
        q: np.ndarray,
        v: np.ndarray,
        position: dict | None = None,
        *,
        at_rest: bool = False,
    ):
        self.asm, self.t, self.q, self.v, self.at_rest = asm, float(t), q, v, at_rest
        self._position: dict = {} if position is None else position  # terms of (t, q) only, shared
        self._terms: dict = {}
        self._kin: dict = {}
        self._batches: dict = {}
        self._single: dict = {}

    def __repr__(self) -> str:
        return f"Workspace(t={self.t:.9g}, {self.q.size} coordinates, {len(self._terms) + len(self._position)} terms)"

    # ------------------------------------------------------------------ the state
    def with_velocity(self, v: np.ndarray) -> Workspace:
        """The workspace of (t, q, ``v``) (n,), sharing this one's terms of (t, q): M, φ, Φ, φ_t and the
        decompositions of Φ (this workspace itself when ``v`` is its own velocity)."""
        v = self.asm.checked_vector("v", v)
        if np.array_equal(v, self.v):
            return self
        return Workspace(self.asm, self.t, self.q, v, self._position)

    def has(self, key: Hashable) -> bool:
        """Whether the term ``key`` has been computed (or shared) already."""
        return key in self._terms or key in self._position

    def memo(self, key: Hashable, compute: Callable[[], T]) -> T:
        """The term ``key`` of this state: ``compute()`` the first time (its arrays made read-only), the kept value
        afterwards."""
        value = self._terms.get(key, _MISSING)
        if value is _MISSING:
            value = self._terms[key] = read_only(compute())
        return value

    def position_memo(self, key: Hashable, compute: Callable[[], T]) -> T:
        """Like :meth:`memo` for a term of (t, q) alone, shared with :meth:`with_velocity`'s workspaces."""
        value = self._position.get(key, _MISSING)
        if value is _MISSING:
            value = self._position[key] = read_only(compute())
        return value

    # ------------------------------------------------------------------ what anchors read (StateView)
    def offset(self, tree: Hashable) -> int:
        """First global column of ``tree``."""
        return self.asm.offsets[tree]

    def body_offset(self, body: Hashable) -> int:
        """First global column of a flexible body (its nodal coordinates follow, node-major)."""
        return self.asm.offsets[body]

    def columns(self, tree: Hashable) -> np.ndarray:
        """Global columns (n_tree,) of ``tree``."""
        return self.asm.columns[tree]

    def slice_of(self, item: Hashable) -> slice:
        """Global columns of a tree, a flexible body or a reduced body."""
        return self.asm.slices[item]

    def point(self, anchor: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(x (3,), ẋ (3,), J (3, n_tree), J̇v (3,)) of a link point anchor; one numba pass per tree for the
        points the system registered, world axes."""
        tree = anchor.link.tree
        table = self.asm.point_slots.get(tree)
        slot = None if table is None else table[0].get(anchor)
        if slot is None:
            out = self._single.get(anchor)
            if out is None:
                X, Xd, J, B = self.kinematics(tree)._point(anchor.link, anchor.offset)
                out = self._single[anchor] = (X[0], Xd[0], J[0], B[0])
            return out
        batch = self._batches.get(tree)
        if batch is None:
            assert table is not None  # the anchor has a slot
            _, index, offsets = table
            batch = self._batches[tree] = self.kinematics(tree).points(index, offsets)
        return batch[0][slot], batch[1][slot], batch[2][slot], batch[3][slot]

    def kinematics(self, tree: Any) -> Kinematics:
        """The :class:`~flexbody.rigid.tree.Kinematics` of ``tree`` at this state (one pass, kept)."""
        kin = self._kin.get(tree)
        if kin is None:
            s = self.asm.slices[tree]
            kin = self._kin[tree] = Kinematics(tree, self.q[s], self.v[s])  # q, v checked once, by the system
        return kin

    # ------------------------------------------------------------------ compiled terms
    def compiled(self) -> tuple | None:
        """(M, h, φ, Φ, bias, φ_t, energy) from one call of the system's
        :class:`~flexbody.system.joint_program.JointProgram`, or None without a program or where it leaves the
        state to the general route (q or v not finite, a radial row of zero length)."""
        program = self.asm.program
        if program is None:
            return None
        value = self._terms.get("compiled", _MISSING)
        if value is _MISSING:
            value = program.evaluate(self.t, self.q, self.v, self)
            if value is not None:
                self.keep_compiled(value)
            else:
                self._terms["compiled"] = None
        return value

    def keep_compiled(self, value: tuple) -> None:
        """Keep ``value`` = (M, h, φ, Φ, bias, φ_t, energy), computed by the program at this state (read-only
        arrays), as the terms of this workspace."""
        M = self._position.setdefault("mass_matrix", value[0])  # the terms of q: shared with other velocities
        Phi = self._position.setdefault("Phi", value[3])
        value = (M, value[1], value[2], Phi, *value[4:])
        self._terms["compiled"] = value
        if not self.asm.forces:  # with force elements: h − Q, and their potential, when asked for
            self._terms["mass_and_forces"] = value[:2]
            self._terms["energy"] = (float(value[6][0]), float(value[6][1]))
        self._terms["rows"] = value[2:6]

    # ------------------------------------------------------------------ mass and forces
    def mass_matrix(self) -> np.ndarray | BlockMass:
        """M (n, n): dense for rigid-only systems, a :class:`BlockMass` with flexible bodies [DE-110]."""
        compiled = self.compiled()
        if compiled is not None:
            return compiled[0]
        asm = self.asm
        if not asm.sparse:
            return self.position_memo("mass_matrix", lambda: asm.joint_space.mass_matrix(self))
        return self.position_memo(
            "mass_matrix",
            lambda: BlockMass(asm.joint_space.blocks(self), asm.flexible.mass, asm.flexible.slice, asm.n_dofs),
        )

    def internal_force(self) -> np.ndarray:
        """k(q, v) (n_f,) [N] of the flexible bodies, elastic plus Kelvin–Voigt (elastic alone :attr:`at_rest`)."""
        fs = self.asm.flexible.slice
        v_f = None if self.at_rest else self.v[fs]
        return self.memo("internal_force", lambda: self.asm.flexible.internal_force(self.q[fs], v_f))

    def external_force(self) -> np.ndarray:
        """f_ext(q) (n_f,) [N]: the flexible bodies' loads at q."""
        fs = self.asm.flexible.slice
        return self.position_memo("external_force", lambda: self.asm.flexible.external_force(self.q[fs]))

    def mass_and_forces(self) -> tuple[np.ndarray | BlockMass, np.ndarray]:
        """Block-diagonal M (n, n) and h = b + g − Q (n,) [DE-109, DE-110, DE-7]."""
        compiled = self.compiled()
        if compiled is not None:
            return self.memo("mass_and_forces", lambda: (compiled[0], self._with_applied_forces(compiled[1])))
        return self.memo("mass_and_forces", self._mass_and_forces)

    def _mass_and_forces(self):
        asm = self.asm
        h = np.empty(asm.n_dofs)
        h[: asm.n_rigid] = asm.joint_space.inverse_dynamics(self)
        if asm.sparse:
            h[asm.flexible.slice] = self.internal_force() - self.external_force()
        return self.mass_matrix(), self._with_applied_forces(h)

    def _with_applied_forces(self, h: np.ndarray) -> np.ndarray:
        """h − Q of the force elements [DE-7] (h itself when there are none)."""
        return h - self.applied_force() if self.asm.forces else h

    def applied_force(self, *, velocity: bool = True) -> np.ndarray:
        """Q (n,) of the force elements (``velocity=False``: the elastic part Q(t, q, 0))."""
        return self.memo(("applied_force", velocity), lambda: self.asm.forces.force(self, velocity=velocity))

    def dissipated_power(self) -> float:
        """Power the force elements' velocity-dependent part takes out, −vᵀ(Q(t, q, v) − Q(t, q, 0)) [W] (≥ 0 for
        dampers; 0 without force elements)."""
        if not self.asm.forces:
            return 0.0
        return -float(self.v @ (self.applied_force() - self.applied_force(velocity=False)))

    def viscous_power(self) -> float:
        """Power taken out by the Kelvin–Voigt forces of the flexible bodies, vᵀ(k(q, v) − k(q, 0)) [W], and by
        the dampers among the force elements (:meth:`dissipated_power`)."""
        asm = self.asm
        applied = self.dissipated_power()
        if not asm.sparse or not any(b.material.damping > 0 for b in asm.bodies):
            return applied
        fs = asm.flexible.slice
        elastic = self.memo("elastic_force", lambda: asm.flexible.internal_force(self.q[fs], None))
        return applied + float(self.v[fs] @ (self.internal_force() - elastic))

    def mass_bias_gravity(self) -> tuple[np.ndarray | BlockMass, np.ndarray, np.ndarray]:
        """M (n, n), b (n,) and g (n,) separately [DE-2, DE-110]: flexible b = k(q, v), g = −f_ext; a reduced
        body's elastic and damping forces are in b, like a flexible body's."""
        return self.memo("mass_bias_gravity", self._mass_bias_gravity)

    def _mass_bias_gravity(self):
        asm = self.asm
        b, g = np.empty(asm.n_dofs), np.empty(asm.n_dofs)
        b[: asm.n_rigid] = asm.joint_space.inverse_dynamics(self, gravity=False)
        g[: asm.n_rigid] = asm.joint_space.inverse_dynamics(self, velocity=False, elastic=False)
        if asm.sparse:
            b[asm.flexible.slice] = self.internal_force()
            g[asm.flexible.slice] = -self.external_force()
        if asm.forces:
            elastic = self.applied_force(velocity=False)
            g -= elastic
            b -= self.applied_force() - elastic
        return self.mass_matrix(), b, g

    def gravity_force(self) -> np.ndarray:
        """g (n,), the forces that hold the system still against gravity and loads [DE-2, DE-110]."""
        return self.memo("gravity_force", self._gravity_force)

    def _gravity_force(self) -> np.ndarray:
        asm = self.asm
        g = np.empty(asm.n_dofs)
        g[: asm.n_rigid] = asm.joint_space.inverse_dynamics(self, velocity=False, elastic=False)
        if asm.sparse:
            g[asm.flexible.slice] = -self.external_force()
        if asm.forces:
            g -= self.applied_force(velocity=False)
        return g

    def flexible_jacobians(
        self, *, damping: bool = True, load_factor: float = 1.0
    ) -> tuple[np.ndarray, sp.csr_matrix, sp.csr_matrix | None]:
        """Flexible rows of h, k(q, v) − s·f_ext(q) (n_f,) with s the ``load_factor``, and their Jacobians ∂h_f/∂q,
        ∂h_f/∂v (sparse CSR, flexible columns only; ∂h_f/∂v None without damping), in one kernel pass per body.
        The pass also gives :meth:`internal_force` (with ``damping``, or at rest), which is kept: a Newton iteration
        that forms its matrix computes the force once."""
        key = ("flexible_jacobians", damping, load_factor)
        return self.memo(key, lambda: self._flexible_jacobians(damping, load_factor))

    def _flexible_jacobians(self, damping: bool, load_factor: float):
        fs = self.asm.flexible.slice
        v_f = None if self.at_rest else self.v[fs]
        k, K, C = self.asm.flexible.jacobians(self.q[fs], v_f, damping=damping, load_factor=load_factor)
        if damping or self.at_rest:  # the pass's force is k(q, v)
            self._terms.setdefault("internal_force", read_only(k))
            k = self.internal_force()
        return k - load_factor * self.external_force(), K, C

    # ------------------------------------------------------------------ constraints
    def constraint_rows(self, *, jacobian: bool = True) -> tuple[np.ndarray, Any, np.ndarray, np.ndarray]:
        """φ (m,), Φ (m, n) (or None without ``jacobian``), bias (m,) with Φ a + bias = 0, φ_t (m,) with
        Φ v + φ_t = 0; Φ is dense for rigid-only systems and sparse CSR with flexible bodies."""
        rows = self._terms.get("rows")
        if rows is not None:
            return rows
        if self.compiled() is not None:
            return self._terms["rows"]
        if not jacobian:
            return self.memo("rows_without_jacobian", lambda: self._constraint_rows(False))
        return self.memo("rows", lambda: self._constraint_rows(True))

    def _constraint_rows(self, jacobian: bool):
        asm = self.asm
        m = asm.n_constraints
        phi, bias, phi_t = np.empty(m), np.empty(m), np.zeros(m)
        kept = self._position.get("Phi") if jacobian else None
        assemble = jacobian and kept is None
        dense = assemble and not asm.sparse
        Phi: Any = np.zeros((m, asm.n_dofs)) if dense else kept
        pieces: list | None = [] if assemble and asm.sparse else None
        for c, rs in zip(asm.constraints, asm.row_slices):
            rows = c.evaluate(self)
            phi[rs] = rows.phi
            bias[rs] = rows.bias
            if rows.phi_t is not None:
                phi_t[rs] = rows.phi_t
            for cols, block in rows.pieces if assemble else ():
                if not len(cols):
                    continue
                if dense:
                    Phi[rs, cols] += block.toarray() if sp.issparse(block) else block
                elif pieces is not None:
                    pieces.append((rs.start, cols, block))
        if pieces is not None:
            Phi = asm.row_pattern(pieces).matrix(pieces)
        if assemble:
            self._position["Phi"] = read_only(Phi)
        return phi, Phi, bias, phi_t

    def joint_constraint_jacobian(self) -> np.ndarray:
        """Φ on the joint and modal columns, Φ[:, :n_r] (m, n_r), from the constraints that act on those columns
        alone (the others' rows are zero there and are not evaluated) — what the joint rows of the equations,
        s·(M q̈ + h)_r − Q_r − Φ_rᵀλ, need."""
        return self.position_memo("joint_jacobian", self._joint_constraint_jacobian)

    def _joint_constraint_jacobian(self) -> np.ndarray:
        asm = self.asm
        kept = self._position.get("Phi")
        if kept is not None:  # the whole Φ is there already
            return np.asarray(kept[:, : asm.n_rigid].toarray() if sp.issparse(kept) else kept[:, : asm.n_rigid])
        out = np.zeros((asm.n_constraints, asm.n_rigid))
        for c, rs in asm.joint_constraints:
            for cols, block in c.evaluate(self).pieces:
                on_joints = np.flatnonzero(np.asarray(cols) < asm.n_rigid)
                if on_joints.size:
                    part = block[:, on_joints]
                    out[rs, np.asarray(cols)[on_joints]] += part.toarray() if sp.issparse(part) else part
        return out

    def joint_applied_force(self) -> np.ndarray:
        """Q (n_r,) of the force elements on the joint and modal columns (those on flexible columns alone are not
        evaluated)."""
        asm = self.asm
        return self.memo("joint_applied_force", lambda: asm.joint_forces.force(self)[: asm.n_rigid])

    def independent_rows(
        self, rtol: float, atol: float, *, position: bool = False, if_kept: bool = False
    ) -> ConstraintQR | ConstraintSVD | None:
        """The independent rows of a dense Φ with the rank tolerances (rtol, atol): a certified QR, else the SVD
        (:func:`~flexbody.linalg.rank.independent_rows`), made once per configuration and shared with
        :meth:`with_velocity` — the velocity projection, the position correction, the controller and the
        forward dynamics of a state decompose Φ once. ``position``: of the position rows alone (without the
        velocity-level rows). ``if_kept``: only if made already (else None)."""
        key = ("independent_rows", rtol, atol, position and bool(self.asm.velocity_rows.any()))
        if if_kept:
            return self._position.get(key)
        return self.position_memo(key, lambda: self._independent_rows(rtol, atol, position))

    def _independent_rows(self, rtol: float, atol: float, position: bool):
        Phi = dense_jacobian(self.constraint_rows()[1], self.asm.n_dofs)
        if position and self.asm.velocity_rows.any():
            Phi = np.ascontiguousarray(Phi[self.asm.holonomic_rows])
        return independent_rows(Phi, rtol, atol)

    def terms(self) -> Terms:
        """All terms of the constrained equations at this state (:class:`Terms`)."""
        return self.memo("terms", self._terms_now)

    def _terms_now(self) -> Terms:
        compiled = self.compiled()
        if compiled is not None:
            M, h, phi, Phi, bias, phi_t, _ = compiled
            return Terms(M, self.mass_and_forces()[1] if self.asm.forces else h, Phi, bias, phi, phi_t)
        M, h = self.mass_and_forces()
        phi, Phi, bias, phi_t = self.constraint_rows()
        return Terms(M, h, Phi, bias, phi, phi_t)

    # ------------------------------------------------------------------ energies
    def energy(self) -> tuple[float, float]:
        """Kinetic and potential energy [J]: gravity of the trees and reduced bodies, strain energy of the flexible
        and reduced bodies, the potential −f·q of the flexible bodies' dead loads (follower loads are not
        conservative and have none) and the energy stored in the force elements."""
        if not self.asm.forces and "energy" not in self._terms:  # the program keeps them (without force elements)
            self.compiled()
        return self.memo("energy", self._energy)

    def _energy(self) -> tuple[float, float]:
        asm = self.asm
        kinetic, potential = asm.joint_space.kinetic_energy(self), asm.joint_space.potential_energy(self)
        if asm.sparse:
            fs = asm.flexible.slice
            q_f, v_f = self.q[fs], self.v[fs]
            kinetic += asm.flexible.kinetic_energy(v_f)
            potential += asm.flexible.strain_energy(q_f) + asm.flexible.load_potential(q_f)
        return kinetic, potential + asm.forces.potential(self)
