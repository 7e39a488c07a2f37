"""AssembledSystem: a frozen system that evaluates the terms of the constrained equations at a state.

    τ = M(q) a + h(q, v) − Φᵀλ,    Φ a + bias = 0,    Φ v + φ_t = 0,    φ(q, t) = 0        [DE-2..7, DE-112, 113]

Global coordinates stack the joint coordinates of each rigid tree in the order given, then the absolute
nodal coordinates of each flexible body [DE-110]; M is block diagonal with one dense block per tree and
the constant sparse flexible block [DE-110], h = b + g per tree and k + g_f for the flexible bodies
(:mod:`flexbody.system.flexible_stack`), and Φ stacks the rows of every constraint in order. Rigid-only systems
return dense M and Φ; systems with flexible bodies return a :class:`~flexbody.linalg.block_mass.BlockMass`
and a sparse CSR Φ, so no n×n dense matrix is formed. Solvers and controllers see only these pure
functions of (t, q, v) (see ``docs/architecture.md``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, Literal, cast, overload

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ..errors import StateError
from ..linalg.block_mass import BlockMass
from ..rigid.exponential_coordinates import switched_charts
from ..rigid.tree import Kinematics
from .applied_forces import AppliedForces
from .evaluation import _MISSING, Evaluation, State, Terms, _read_only
from .flexible_stack import FlexiblePart
from .joint_program import compile_joint_terms
from .joint_space import JointSpace
from .row_pattern import RowPattern

if TYPE_CHECKING:
    from ..constraints.attachments import AttachNodes
    from ..constraints.base import Constraint
    from ..constraints.force_elements import ForceElement
    from ..fem.flexible_body import FlexibleBody
    from ..fem.loads import Load
    from ..linalg.rank import RankReport
    from ..reduced.body import ReducedBody
    from ..rigid.link import Link
    from ..rigid.tree import RigidTree


class AssembledSystem:
    """Frozen rigid trees, flexible bodies, holonomic constraints and loads of a :class:`flexbody.System`.

    Attributes
    ----------
    trees, bodies, reduced : list
        The rigid trees (RigidTree), flexible bodies (FlexibleBody) and reduced bodies (ReducedBody).
    offsets, slices : dict
        Tree or body -> its first column, its slice of the coordinates.
    n_joints : int
        Number of joint coordinates (they come first).
    n_rigid : int
        Joint and then modal coordinates of the reduced bodies (the dense part, ``joint_space``, a
        :class:`~flexbody.system.joint_space.JointSpace`).
    flexible : FlexiblePart
        The flexible bodies' stacked part.
    constraints : list of Constraint
        The holonomic and velocity-level constraints.
    n_dofs, n_constraints : int
        Number of coordinates n and of constraint rows m.
    coordinate_labels, row_labels : list of str
        (n) labels of the coordinates, (m) labels of the constraint rows.
    coordinate_units : list of str
        (n) "rad" (revolute joint), "m" (prismatic joint, nodal coordinate) or "-" (modal coordinate).
    row_units : list of str
        (m) unit of each constraint row's value φ (:attr:`Constraint.units`).
    velocity_rows : ndarray of bool
        (m) the velocity-level (Pfaffian) rows; ``holonomic_rows``: their complement's indices.
    S : ndarray
        (k, n) actuation (selection) matrix of the actuated joint coordinates, labelled by ``actuated_labels``
        (k) with ``actuated_units`` (k).
    """

    def __init__(
        self,
        trees: Iterable[RigidTree],
        constraints: Iterable[Constraint],
        actuated_links: Iterable[Link] | None = None,
        q0: ArrayLike | None = None,
        bodies: Iterable[FlexibleBody] = (),
        loads: Iterable[Load] = (),
        forces: Iterable[ForceElement] = (),
        reduced: Iterable[ReducedBody] = (),
    ):
        self.trees, self.reduced = list(trees), list(reduced)
        self.offsets: dict[RigidTree | ReducedBody | FlexibleBody, int] = {}
        self.slices: dict[RigidTree | ReducedBody | FlexibleBody, slice] = {}
        start = 0
        for item in self.trees + self.reduced:
            self.offsets[item] = start
            self.slices[item] = slice(start, start + item.n_dofs)
            start += item.n_dofs
        self.n_joints = sum(tree.n_dofs for tree in self.trees)
        self.n_rigid = start
        self.joint_space = JointSpace(self.trees, self.reduced, self.slices, start)
        self.flexible = FlexiblePart(bodies, loads, start)
        self.bodies = self.flexible.bodies
        for body in self.bodies:
            self.offsets[body] = self.flexible.offsets[body]
            self.slices[body] = slice(self.offsets[body], self.offsets[body] + body.n_dofs)
        self.n_dofs = start + self.flexible.n_dofs
        self.sparse = bool(self.bodies)
        self.q0 = self._initial_coordinates(q0)
        self._prepare_reduced()
        self.constraints = list(constraints)
        self.forces = AppliedForces(forces, self.n_dofs)
        self._pattern: RowPattern | None = None  # CSR structure of Φ (RowPattern), reused while it fits
        self._evaluations: list[Evaluation] = []  # the last states evaluated, newest first
        self._prepare_attachments()
        self.row_slices, row = [], 0
        for c in self.constraints:
            self.row_slices.append(slice(row, row + c.n_rows))
            row += c.n_rows
        self.n_constraints = row
        velocity = [flag for c in self.constraints for flag in c.velocity_rows]
        self.velocity_rows = np.array(velocity, dtype=bool)  # Pfaffian rows A v = b: no position value
        self.holonomic_rows = np.flatnonzero(~self.velocity_rows)  # the rows position corrections use
        self.columns = {tree: np.arange(s.start, s.stop) for tree, s in self.slices.items()}
        self.point_slots = self._register_points()
        self._program = (
            None
            if self.sparse
            else compile_joint_terms(self.trees, self.reduced, self.constraints, self.offsets, self.n_rigid)
        )
        if self.forces:
            self.forces.prepare(Evaluation(self, 0.0, self.q0, np.zeros(self.n_dofs)))
        self.coordinate_labels = [lab for item in self.trees + self.reduced for lab in item.coordinate_labels]
        self.coordinate_labels += self.flexible.labels()
        self.row_labels = [lab for c in self.constraints for lab in c.row_labels]
        self.coordinate_units = [link.joint.unit for tree in self.trees for link in tree.coordinate_links]
        self.coordinate_units += ["-"] * (self.n_rigid - self.n_joints)
        self.coordinate_units += ["m"] * self.flexible.n_dofs
        self.row_units = [unit for c in self.constraints for unit in getattr(c, "units", ("-",) * c.n_rows)]
        self.body_slices = {item.name: (s.start, s.stop) for item, s in self.slices.items()}
        self.rotation_vectors = np.concatenate(
            [self.offsets[t] + t.rotation_vectors for t in self.trees] or [np.zeros(0, np.int64)]
        ).astype(np.int64)
        if actuated_links is None:  # every joint; flexible nodes are passive [DE 6.3]
            cols = np.arange(self.n_joints)
        else:
            cols = np.array([self.offsets[l.tree] + l.coordinate for l in actuated_links], dtype=np.int64)
        self.S = np.zeros((len(cols), self.n_dofs))
        self.S[np.arange(len(cols)), cols] = 1.0
        self.actuated_labels = [self.coordinate_labels[c] for c in cols]
        self.actuated_units = [self.coordinate_units[c] for c in cols]

    def _initial_coordinates(self, q0) -> np.ndarray:
        """q0 (n,) from joint coordinates (n_joints,), joint and modal coordinates (n_rigid,) or all coordinates
        (n,); modal coordinates zero and nodes at their reference positions by default."""
        q = np.concatenate([np.zeros(self.n_rigid), self.flexible.reference_coordinates()])
        if q0 is not None:
            q0 = np.asarray(q0, dtype=float)
            if q0.shape == (self.n_joints,):
                q[: self.n_joints] = q0
            elif q0.shape == (self.n_rigid,):
                q[: self.n_rigid] = q0
            elif q0.shape == (self.n_dofs,):
                q = q0.copy()
            else:
                raise StateError(
                    f"q0 must have shape ({self.n_joints},) (joints), ({self.n_rigid},) (joints and modal "
                    f"coordinates) or ({self.n_dofs},), got {q0.shape}"
                )
        return q

    def _prepare_reduced(self) -> None:
        """Let each reduced body record itself in its link frame at q0."""
        for body in self.reduced:
            s = self.slices[body.tree]
            kin = Kinematics(body.tree, self.q0[s], np.zeros(body.tree.n_dofs))
            body.prepare(kin.R[body.link.index], kin.p[body.link.index])

    def _prepare_attachments(self) -> None:
        """Let attachments record their node offsets in the carrier frame at q0."""
        for c in self.constraints:
            if hasattr(c, "prepare"):
                attachment = cast("AttachNodes", c)  # the one constraint with prepare(q_tree, x_nodes)
                tree = attachment.trees[0] if attachment.trees else None
                q_tree = self.q0[self.slices[tree]] if tree is not None else None
                cols = self.offsets[attachment.body] + 3 * attachment.nodes[:, None] + np.arange(3)
                attachment.prepare(q_tree, self.q0[cols])

    def _register_points(self) -> dict:
        """Link-point anchors of the constraints, per tree: ({anchor: slot}, link indices, offsets)."""
        from ..rigid.anchors import LinkPoint

        slots: dict = {}
        for c in self.constraints + self.forces.elements:
            for a in c.anchors:
                if isinstance(a, LinkPoint):
                    table = slots.setdefault(a.link.tree, {})
                    table.setdefault(a, len(table))
        return {
            tree: (
                table,
                np.array([a.link.index for a in table], dtype=np.int64),
                np.array([a.offset for a in table], dtype=float).reshape(-1, 3),
            )
            for tree, table in slots.items()
        }

    # ------------------------------------------------------------------ validation
    def _state(self, q, v=None) -> tuple[np.ndarray, np.ndarray]:
        """q and v as float vectors of n entries; StateError naming the coordinates where one is not finite."""
        q = np.asarray(q, dtype=float)
        v = np.zeros(self.n_dofs) if v is None else np.asarray(v, dtype=float)
        if q.shape != (self.n_dofs,) or v.shape != (self.n_dofs,) or not (_all_finite(q) and _all_finite(v)):
            for name, x in (("q", q), ("v", v)):
                if x.shape != (self.n_dofs,):
                    raise StateError(f"{name} must have shape ({self.n_dofs},), got {x.shape}")
                if not np.all(np.isfinite(x)):
                    bad = [self.coordinate_labels[i] for i in np.flatnonzero(~np.isfinite(x))]
                    raise StateError(f"{name} contains NaN or Inf at {bad}")
        return q, v

    def evaluate(self, t: float, q: ArrayLike, v: ArrayLike | None = None) -> Evaluation:
        """The :class:`Evaluation` of the state (t, q, v) (v None: at rest). The last few are kept, so
        every consumer of one state gets the same one and each term is computed once per state."""
        q, v = self._state(q, v)
        return self._kept(t, q, v) or self._keep(Evaluation(self, t, q.copy(), v.copy()))

    def _kept(self, t, q, v) -> Evaluation | None:
        for ev in self._evaluations:
            if ev.is_at(t, q, v):
                return ev
        return None

    def _keep(self, ev: Evaluation) -> Evaluation:
        self._evaluations = [ev, *self._evaluations[: KEPT_EVALUATIONS - 1]]
        return ev

    # ------------------------------------------------------------------ terms
    def _compiled(self, ev: Evaluation):
        """(M, h, φ, Φ, bias, φ_t, energy) of a system without flexible nodes in one compiled call
        (:mod:`.joint_program`), or None where there is no program or it leaves the state to the general route.
        The call also keeps M and h, the rows and the energies as the terms of ``ev``."""
        if self._program is None:
            return None
        value = ev._terms.get("compiled", _MISSING)
        if value is _MISSING:
            value = ev._terms["compiled"] = self._program.evaluate(ev.t, ev.q, ev.v)
            if value is not None:
                self.keep_compiled(ev, value)
        return value

    def keep_compiled(self, ev: Evaluation, value: tuple) -> None:
        """Keep ``value`` = (M, h, φ, Φ, bias, φ_t, energy), computed by the program at ``ev``'s state (here or by a
        compiled integrator step), as the terms of ``ev`` (made read-only)."""
        _read_only(value)
        ev._terms["compiled"] = value
        if not self.forces:  # with force elements: h − Q, and their potential, when asked for
            ev._terms["mass_and_forces"] = value[:2]
            ev._terms["energy"] = (float(value[6][0]), float(value[6][1]))
        ev._terms["rows"] = value[2:6]

    def mass_matrix(self, ev: Evaluation) -> np.ndarray | BlockMass:
        """M (n, n): dense for rigid-only systems, a :class:`BlockMass` with flexible bodies [DE-110]."""
        compiled = self._compiled(ev)
        if compiled is not None:
            return compiled[0]
        return ev.memo("mass_matrix", lambda: self._mass_matrix(ev))

    def _mass_matrix(self, ev: Evaluation):
        if not self.sparse:
            return self.joint_space.mass_matrix(ev)
        return BlockMass(self.joint_space.blocks(ev), self.flexible.mass, self.flexible.slice, self.n_dofs)

    def _flexible_state(self, ev: Evaluation):
        fs = self.flexible.slice
        return ev.q[fs], ev.v[fs]

    def mass_and_forces(self, ev: Evaluation) -> tuple[np.ndarray | BlockMass, np.ndarray]:
        """Block-diagonal M (n, n) and h = b + g (n,) [DE-109, DE-110]."""
        compiled = self._compiled(ev)
        if compiled is not None:
            return ev.memo("mass_and_forces", lambda: (compiled[0], self._with_applied_forces(ev, compiled[1])))
        return ev.memo("mass_and_forces", lambda: self._mass_and_forces(ev))

    def _mass_and_forces(self, ev: Evaluation):
        h = np.empty(self.n_dofs)
        h[: self.n_rigid] = self.joint_space.inverse_dynamics(ev)
        if self.sparse:
            h[self.flexible.slice] = self.flexible.forces(*self._flexible_state(ev))
        return self._mass_matrix(ev), self._with_applied_forces(ev, h)

    def _with_applied_forces(self, ev: Evaluation, h: np.ndarray) -> np.ndarray:
        """h − Q of the force elements [DE-7] (h itself when there are none)."""
        return h - self.applied_force(ev) if self.forces else h

    def applied_force(self, ev: Evaluation, *, velocity: bool = True) -> np.ndarray:
        """Q (n,) of the force elements at ``ev`` (``velocity=False``: the elastic part Q(t, q, 0))."""
        return ev.memo(("applied_force", velocity), lambda: self.forces.force(ev, velocity=velocity))

    def dissipated_power(self, ev: Evaluation) -> float:
        """Power the force elements' velocity-dependent part takes out at ``ev``, −vᵀ(Q(t, q, v) − Q(t, q, 0))
        [W] (≥ 0 for dampers; 0 without force elements)."""
        if not self.forces:
            return 0.0
        return -float(ev.v @ (self.applied_force(ev) - self.applied_force(ev, velocity=False)))

    def mass_bias_gravity(self, ev: Evaluation) -> tuple[np.ndarray | BlockMass, np.ndarray, np.ndarray]:
        """M (n, n), b (n,) and g (n,) separately [DE-2, DE-110]: flexible b = k(q, v), g = −f_ext; a reduced
        body's elastic and damping forces are in b, like a flexible body's."""
        return ev.memo("mass_bias_gravity", lambda: self._mass_bias_gravity(ev))

    def _mass_bias_gravity(self, ev: Evaluation):
        b, g = np.empty(self.n_dofs), np.empty(self.n_dofs)
        b[: self.n_rigid] = self.joint_space.inverse_dynamics(ev, gravity=False)
        g[: self.n_rigid] = self.joint_space.inverse_dynamics(ev, velocity=False, elastic=False)
        if self.sparse:
            q_f, v_f = self._flexible_state(ev)
            b[self.flexible.slice] = self.flexible.internal_force(q_f, v_f)
            g[self.flexible.slice] = -self.flexible.external_force(q_f)
        if self.forces:
            elastic = self.applied_force(ev, velocity=False)
            g -= elastic
            b -= self.applied_force(ev) - elastic
        return self.mass_matrix(ev), b, g

    def gravity_force(self, ev: Evaluation) -> np.ndarray:
        """g (n,), the forces that hold the system still against gravity and loads [DE-2, DE-110]."""
        return ev.memo("gravity_force", lambda: self._gravity_force(ev))

    def _gravity_force(self, ev: Evaluation) -> np.ndarray:
        g = np.empty(self.n_dofs)
        g[: self.n_rigid] = self.joint_space.inverse_dynamics(ev, velocity=False, elastic=False)
        if self.sparse:
            g[self.flexible.slice] = -self.flexible.external_force(ev.q[self.flexible.slice])
        if self.forces:
            g -= self.applied_force(ev, velocity=False)
        return g

    @overload
    def constraint_rows(
        self, ev: Evaluation, jacobian: Literal[True] = ...
    ) -> tuple[np.ndarray, np.ndarray | sp.csr_matrix, np.ndarray, np.ndarray]: ...

    @overload
    def constraint_rows(
        self, ev: Evaluation, jacobian: bool
    ) -> tuple[np.ndarray, np.ndarray | sp.csr_matrix | None, np.ndarray, np.ndarray]: ...

    def constraint_rows(
        self, ev: Evaluation, jacobian: bool = True
    ) -> tuple[np.ndarray, np.ndarray | sp.csr_matrix | None, np.ndarray, np.ndarray]:
        """φ (m,), Φ (m, n) (or None), bias (m,), φ_t (m,); Φ is dense for rigid-only systems and
        sparse CSR with flexible bodies."""
        if not jacobian and "rows" in ev._terms:
            return ev._terms["rows"]
        compiled = self._compiled(ev)
        if compiled is not None:
            return ev._terms["rows"]
        return ev.memo("rows" if jacobian else "rows_without_jacobian", lambda: self._constraint_rows(ev, jacobian))

    def _constraint_rows(self, ev: Evaluation, jacobian: bool):
        m = self.n_constraints
        phi, bias, phi_t = np.empty(m), np.empty(m), np.zeros(m)
        dense = jacobian and not self.sparse
        Phi = np.zeros((m, self.n_dofs)) if dense else None
        pieces: list | None = [] if jacobian and self.sparse else None
        for c, rs in zip(self.constraints, self.row_slices):
            rows = c.evaluate(ev)
            phi[rs] = rows.phi
            bias[rs] = rows.bias
            if rows.phi_t is not None:
                phi_t[rs] = rows.phi_t
            for cols, block in rows.pieces if jacobian else ():
                if not len(cols):
                    continue
                if Phi is not None:  # dense
                    Phi[rs, cols] += block.toarray() if sp.issparse(block) else block
                elif pieces is not None:
                    pieces.append((rs.start, cols, block))
        if pieces is not None:
            if self._pattern is None or not self._pattern.fits(pieces):
                self._pattern = RowPattern(pieces, (m, self.n_dofs))
            Phi = self._pattern.matrix(pieces)
        return phi, Phi, bias, phi_t

    def terms(self, t: float, q: ArrayLike, v: ArrayLike | None = None) -> Terms:
        """All terms of the constrained equations at (t, q, v)."""
        ev = self.evaluate(t, q, v)
        kept = ev._terms.get("terms")
        if kept is None:  # made of kept (read-only) terms: stored as it is
            compiled = self._compiled(ev)
            if compiled is not None:
                M, h, phi, Phi, bias, phi_t, _ = compiled
                kept = Terms(M, self._with_applied_forces(ev, h) if self.forces else h, Phi, bias, phi, phi_t)
            else:
                kept = Terms(*self.mass_and_forces(ev), *_reordered(self.constraint_rows(ev)))
            ev._terms["terms"] = kept
        return kept

    def constraint_value(self, t: float, q: ArrayLike) -> np.ndarray:
        """Constraint value φ(q, t) (m,) at time ``t`` [s] and coordinates ``q`` (n,), in each row's unit
        (:attr:`row_units`); zero on the velocity-level rows."""
        return self.constraint_rows(self.evaluate(t, q), jacobian=False)[0]

    def constraint_jacobian(self, t: float, q: ArrayLike) -> np.ndarray | sp.csr_matrix:
        """Constraint Jacobian Φ = ∂φ/∂q (m, n) at ``t`` [s] and ``q`` (n,): dense for rigid-only systems,
        sparse CSR with flexible bodies."""
        return self.constraint_rows(self.evaluate(t, q))[1]

    def constraint_rate(self, t: float, q: ArrayLike) -> np.ndarray:
        """Rheonomic rate φ_t = ∂φ/∂t (m,) at ``t`` [s] and ``q`` (n,), so that Φ v + φ_t = 0 (zero for
        scleronomic rows)."""
        return self.constraint_rows(self.evaluate(t, q), jacobian=False)[3]

    def energy(self, q: ArrayLike, v: ArrayLike) -> tuple[float, float]:
        """Kinetic and potential energy [J]: gravity of the trees and reduced bodies, strain energy of the
        flexible and reduced bodies and the potential −f·q of the flexible bodies' dead loads (follower loads are not
        conservative and have none)."""
        q, v = self._state(q, v)
        ev = self._kept(None, q, v) or self._keep(Evaluation(self, 0.0, q.copy(), v.copy()))  # energies: any t
        if not self.forces and "energy" not in ev._terms:  # the program keeps them (without force elements)
            self._compiled(ev)
        return ev.memo("energy", lambda: self._energy(ev))

    def _energy(self, ev: Evaluation) -> tuple[float, float]:
        kinetic, potential = self.joint_space.kinetic_energy(ev), self.joint_space.potential_energy(ev)
        if self.sparse:
            q_f, v_f = self._flexible_state(ev)
            kinetic += self.flexible.kinetic_energy(v_f)
            potential += self.flexible.strain_energy(q_f) + self.flexible.load_potential(q_f)
        return kinetic, potential + self.forces.potential(ev)

    def coordinates(
        self, item: RigidTree | FlexibleBody | ReducedBody | str, q: ArrayLike, nodes: str | ArrayLike | None = None
    ) -> np.ndarray:
        """The coordinates of one rigid tree or flexible body in q (n,) or in the rows of q (s, n), without
        index arithmetic (coordinate order [DE-110]).

        Parameters
        ----------
        item : RigidTree, FlexibleBody, ReducedBody or the name of one
        q : ndarray (n,) or (s, n)
            Global coordinates, e.g. ``state.q`` or ``results.q``.
        nodes : str or array of int, optional
            For a body: a node-set or face-set name of its mesh, or node indices (default every node).

        Returns
        -------
        ndarray
            A tree's joint coordinates (…, n_tree) [rad or m]; a flexible or reduced body's nodal positions
            (…, k, 3) [m, world] (a reduced body's from its frame and modal coordinates).
        """
        item = self._item(item)
        q = np.asarray(q, dtype=float)
        if q.shape[-1] != self.n_dofs:
            raise StateError(f"coordinates: q must have {self.n_dofs} columns, got shape {q.shape}")
        if item in self.reduced:
            positions = self._reduced_positions(item, q)
            return positions if nodes is None else positions[..., item.body.nodes(nodes), :]
        block = q[..., self.slices[item]]
        if item in self.trees:
            if nodes is not None:
                raise StateError(f"coordinates: tree {item.name!r} has no nodes")
            return block
        positions = block.reshape((*q.shape[:-1], -1, 3))
        body = cast("FlexibleBody", item)  # neither a reduced body nor a tree
        return positions if nodes is None else positions[..., body.nodes(nodes), :]

    def nodal_state(
        self, body: FlexibleBody | ReducedBody | str, q: ArrayLike, v: ArrayLike | None = None
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """World positions (N, 3) [m] and, with v, velocities (N, 3) [m/s] of every node of a flexible or
        reduced ``body`` (object or name) at the state (q, v) (n,); a reduced body's from its frame and modes."""
        body = cast("FlexibleBody | ReducedBody", self._item(body))  # a body: a tree's coordinates are no nodes
        q = np.asarray(q, dtype=float)
        if body not in self.reduced:
            s = self.slices[body]
            return q[s].reshape(-1, 3), None if v is None else np.asarray(v, dtype=float)[s].reshape(-1, 3)
        t, e, i = self.slices[body.tree], self.slices[body], body.link.index
        v_t = np.zeros(body.tree.n_dofs) if v is None else np.asarray(v, dtype=float)[t]
        kin = Kinematics(body.tree, q[t], v_t)
        x = body.nodal_positions(kin.R[i], kin.p[i], q[e])
        if v is None:
            return x, None
        twist = kin.frame_terms(body.link)[0] @ v_t  # [v_o; ω] world axes
        y = x - kin.p[i]
        xdot = twist[:3] + np.cross(twist[3:], y) + (body.frame_shapes @ np.asarray(v, dtype=float)[e]) @ kin.R[i].T
        return x, xdot

    def _reduced_positions(self, body, q: np.ndarray) -> np.ndarray:
        """World nodal positions (…, N, 3) of reduced ``body`` in the rows of q (…, n)."""
        out = np.array([self.nodal_state(body, row)[0] for row in q.reshape(-1, self.n_dofs)])
        return out.reshape(q.shape[:-1] + out.shape[1:])

    def _item(self, item: object) -> RigidTree | FlexibleBody | ReducedBody:
        """The tree or body ``item`` (or named ``item``) of this system; StateError naming the choices."""
        if item in self.slices:
            return item
        for known in self.slices:
            if known.name == item:
                return known
        raise StateError(
            f"{item!r} is not a tree or body of this system; it has {sorted(known.name for known in self.slices)}"
        )

    def switch_charts(self, q: np.ndarray, v: np.ndarray, *accelerations: np.ndarray) -> tuple[np.ndarray, ...] | None:
        """The state in the other chart of every rotation vector longer than π (spherical and free-flyer
        joints, :mod:`flexbody.rigid.exponential_coordinates`): new ``(q, v, *accelerations)``, or None when
        none is. Integrators call it after each step, so no joint reaches the singular ‖φ‖ = 2π."""
        if not self.rotation_vectors.size:
            return None
        return switched_charts(self.rotation_vectors, q, v, *accelerations)

    def initial_state(self) -> State:
        """The :class:`State` at t = 0 s with the initial coordinates ``q0`` (n,) and zero velocities."""
        return State(0.0, self.q0.copy(), np.zeros(self.n_dofs))

    def flexible_jacobians(
        self, ev: Evaluation, *, damping: bool = True
    ) -> tuple[np.ndarray, sp.csr_matrix, sp.csr_matrix | None]:
        """Flexible rows of h and their Jacobians ∂h_f/∂q, ∂h_f/∂v (sparse, flexible columns only)."""
        return ev.memo(
            ("flexible_jacobians", damping), lambda: self.flexible.jacobians(*self._flexible_state(ev), damping=damping)
        )

    def rank_report(self, t: float, q: ArrayLike, rtol: float | None = None) -> RankReport:
        """Rank of Φ(q) with singular values, tolerance and redundant rows (:func:`analysis.constraint_rank`)."""
        from ..linalg.rank import constraint_rank

        return constraint_rank(self.constraint_jacobian(t, q), rtol=rtol, row_labels=self.row_labels)


KEPT_EVALUATIONS = 3
"""Evaluations an assembled system keeps (newest first): enough for the state of a step, its correction and
its start, which the dynamics, controller and recorder all read."""


def _all_finite(x: np.ndarray) -> bool:
    """Whether every entry of the float vector x is finite: x·x is finite only then (a NaN or ±Inf makes it
    NaN or +Inf), and costs a third of ``np.isfinite(x).all()``; an overflow of x·x is settled exactly."""
    return math.isfinite(x.dot(x)) or bool(np.isfinite(x).all())


def _reordered(rows):
    """(Φ, bias, φ, φ_t) in the order of :class:`Terms` from (φ, Φ, bias, φ_t)."""
    phi, Phi, bias, phi_t = rows
    return Phi, bias, phi, phi_t
