"""AssembledSystem: a frozen system — coordinates, fixed sparsity patterns, the constant flexible mass factored
once, the compiled program of its terms — and the workspaces of its states.

    τ = M(q) a + h(q, v) − Φᵀλ,    Φ a + bias = 0,    Φ v + φ_t = 0,    φ(q, t) = 0        [DE-2..7, DE-112, 113]

Global coordinates stack the joint coordinates of each rigid tree in the order given, the modal coordinates of the
reduced bodies, then the absolute nodal coordinates of each flexible body [DE-110]. The system is constant: the terms
of a state live in its :class:`~flexbody.system.workspace.Workspace` (:meth:`AssembledSystem.workspace`), which the
code that visits the state creates and passes on; nothing is cached here (see ``docs/architecture.md``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, cast

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ..deprecation import deprecated
from ..errors import StateError
from ..linalg.block_mass import BlockMass
from ..linalg.validation import all_finite
from ..rigid.exponential_coordinates import switched_charts
from ..rigid.kinematics import Kinematics
from .applied_forces import AppliedForces
from .coordinate_slices import CoordinateSlices
from .flexible_stack import FlexiblePart
from .joint_program import compile_joint_terms
from .joint_space import JointSpace
from .row_pattern import RowPattern
from .state import State, Terms
from .workspace import Workspace

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
    """Frozen rigid trees, flexible bodies, holonomic constraints and loads of a :class:`flexbody.System`. The
    terms of a state are read from its :meth:`workspace`.

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
    contacts : list of Contact
        The unilateral contacts (:mod:`flexbody.constraints.unilateral_contact`), for the nonsmooth stepper.
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
    joint_constraints : list of (Constraint, slice)
        The constraints that act on joint or modal columns, with their rows.
    joint_forces : AppliedForces
        The force elements that act on joint or modal columns.
    program : JointProgram or None
        The compiled program of the terms of a system without flexible nodes whose constraints all have a compiled
        form (:mod:`flexbody.system.joint_program`), else None.
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
        contacts: Iterable = (),
    ):
        self.trees, self.reduced = list(trees), list(reduced)
        self.offsets: dict[RigidTree | ReducedBody | FlexibleBody, int] = {}
        slices: dict[RigidTree | ReducedBody | FlexibleBody, slice] = {}
        start = 0
        for item in self.trees + self.reduced:
            self.offsets[item] = start
            slices[item] = slice(start, start + item.n_dofs)
            start += item.n_dofs
        self.n_joints = sum(tree.n_dofs for tree in self.trees)
        self.n_rigid = start
        self.joint_space = JointSpace(self.trees, self.reduced, slices, start)
        self.flexible = FlexiblePart(bodies, loads, start)
        self.bodies = self.flexible.bodies
        for body in self.bodies:
            self.offsets[body] = self.flexible.offsets[body]
            slices[body] = slice(self.offsets[body], self.offsets[body] + body.n_dofs)
        self.slices = CoordinateSlices(slices)  # part or its name → its columns of q
        self.n_dofs = start + self.flexible.n_dofs
        self.sparse = bool(self.bodies)
        self.q0 = self._initial_coordinates(q0)
        self._prepare_reduced()
        self.constraints = list(constraints)
        self.forces = AppliedForces(forces, self.n_dofs)
        self.contacts = list(contacts)  # unilateral (flexbody.constraints.unilateral_contact.Contact)
        self._pattern: RowPattern | None = None  # CSR structure of Φ (RowPattern), reused while it fits
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
        self.joint_constraints = [(c, rs) for c, rs in zip(self.constraints, self.row_slices) if self._on_joints(c)]
        self.joint_forces = AppliedForces([f for f in self.forces.elements if self._on_joints(f)], self.n_dofs)
        self.program = (
            None
            if self.sparse
            else compile_joint_terms(self.trees, self.reduced, self.constraints, self.offsets, self.n_rigid)
        )
        self.coordinate_labels = [lab for item in self.trees + self.reduced for lab in item.coordinate_labels]
        self.coordinate_labels += self.flexible.labels()
        self.row_labels = [lab for c in self.constraints for lab in c.row_labels]
        self.coordinate_units = [link.joint.unit for tree in self.trees for link in tree.coordinate_links]
        self.coordinate_units += ["-"] * (self.n_rigid - self.n_joints)
        self.coordinate_units += ["m"] * self.flexible.n_dofs
        self.row_units = [unit for c in self.constraints for unit in getattr(c, "units", ("-",) * c.n_rows)]
        self.rotation_vectors = np.concatenate(
            [self.offsets[t] + t.rotation_vectors for t in self.trees] or [np.zeros(0, np.int64)]
        ).astype(np.int64)
        if actuated_links is None:  # every joint; flexible nodes are passive [DE 6.3]
            cols = np.arange(self.n_joints)
        else:
            cols = np.array(  # every coordinate of each link's joint (a spherical joint's three, a free flyer's six)
                [self.offsets[l.tree] + c for l in actuated_links for c in l.coordinates], dtype=np.int64
            )
        self.S = np.zeros((len(cols), self.n_dofs))
        self.S[np.arange(len(cols)), cols] = 1.0
        self.actuated_labels = [self.coordinate_labels[c] for c in cols]
        self.actuated_units = [self.coordinate_units[c] for c in cols]
        if self.forces:
            self.forces.prepare(self.workspace(0.0, self.q0))

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

    def _on_joints(self, item) -> bool:
        """Whether a constraint or force element acts on joint or modal columns: it is written on a tree (or a
        reduced body on one), or on given columns among the first n_rigid."""
        columns = getattr(item, "cols", None)
        if columns is not None:
            return bool(np.any(np.asarray(columns) < self.n_rigid))
        return bool(item.trees)

    def _register_points(self) -> dict:
        """Link-point anchors of the constraints, force elements and contacts, per tree: ({anchor: slot}, link
        indices, offsets)."""
        from ..rigid.anchors import LinkPoint

        slots: dict = {}
        for c in self.constraints + self.forces.elements + self.contacts:
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

    # ------------------------------------------------------------------ states and their workspaces
    def checked_vector(self, name: str, x: ArrayLike) -> np.ndarray:
        """``x`` as a new float vector of n entries; StateError naming the coordinates where it is not finite."""
        x = np.array(x, dtype=float)
        if x.shape != (self.n_dofs,):
            raise StateError(f"{name} must have shape ({self.n_dofs},), got {x.shape}")
        if not all_finite(x):
            bad = [self.coordinate_labels[i] for i in np.flatnonzero(~np.isfinite(x))]
            raise StateError(f"{name} contains NaN or Inf at {bad}")
        return x

    def workspace(self, t: float, q: ArrayLike, v: ArrayLike | None = None) -> Workspace:
        """A new :class:`~flexbody.system.workspace.Workspace` of the state (t [s], q (n,), v (n,); v None: at
        rest), in which every term of the state is computed once, on first use. The code that visits a state
        makes its workspace once and passes it to every consumer of that state."""
        q = self.checked_vector("q", q)
        if v is None:
            return Workspace(self, t, q, np.zeros(self.n_dofs), at_rest=True)
        return Workspace(self, t, q, self.checked_vector("v", v))

    def row_pattern(self, pieces: list) -> RowPattern:
        """The CSR structure of Φ for the constraints' ``pieces`` (row, columns, block): the kept one while the pieces
        keep their positions, a new one otherwise (:mod:`flexbody.system.row_pattern`)."""
        if self._pattern is None or not self._pattern.fits(pieces):
            self._pattern = RowPattern(pieces, (self.n_constraints, self.n_dofs))
        return self._pattern

    # ------------------------------------------------------------------ terms of one state, each call a new state
    def terms(self, t: float, q: ArrayLike, v: ArrayLike | None = None) -> Terms:
        """All terms of the constrained equations at (t, q, v) (a new workspace each call: make one with
        :meth:`workspace` to read several terms of a state)."""
        return self.workspace(t, q, v).terms()

    def constraint_value(self, t: float, q: ArrayLike) -> np.ndarray:
        """Constraint value φ(q, t) (m,) at time ``t`` [s] and coordinates ``q`` (n,), in each row's unit
        (:attr:`row_units`); zero on the velocity-level rows."""
        return self.workspace(t, q).constraint_rows(jacobian=False)[0]

    def constraint_jacobian(self, t: float, q: ArrayLike) -> np.ndarray | sp.csr_matrix:
        """Constraint Jacobian Φ = ∂φ/∂q (m, n) at ``t`` [s] and ``q`` (n,): dense for rigid-only systems,
        sparse CSR with flexible bodies."""
        return self.workspace(t, q).constraint_rows()[1]

    def constraint_rate(self, t: float, q: ArrayLike) -> np.ndarray:
        """Rheonomic rate φ_t = ∂φ/∂t (m,) at ``t`` [s] and ``q`` (n,), so that Φ v + φ_t = 0 (zero for
        scleronomic rows)."""
        return self.workspace(t, q).constraint_rows(jacobian=False)[3]

    def energy(self, q: ArrayLike, v: ArrayLike) -> tuple[float, float]:
        """Kinetic and potential energy [J] at (q, v) (:meth:`Workspace.energy`)."""
        return self.workspace(0.0, q, v).energy()

    # ------------------------------------------------------------------ deprecated (0.3.0): read the workspace
    @property
    def body_slices(self) -> dict[str, tuple[int, int]]:
        """Deprecated (0.3.0): part name → (start, stop); use ``asm.slices[name]`` (a slice)."""
        deprecated("asm.body_slices", "asm.slices[name] (a slice; asm.slices.by_name() for the dict)")
        return self.slices.spans()

    def evaluate(self, t: float, q: ArrayLike, v: ArrayLike | None = None) -> Workspace:
        """Deprecated alias of :meth:`workspace` (0.3.0; removed in 0.4.0)."""
        deprecated("asm.evaluate(t, q, v)", "asm.workspace(t, q, v)")
        return self.workspace(t, q, v)

    def mass_matrix(self, ev: Workspace) -> np.ndarray | BlockMass:
        """Deprecated (0.3.0; removed in 0.4.0): ``ws.mass_matrix()``."""
        deprecated("asm.mass_matrix(ws)", "ws.mass_matrix()")
        return ev.mass_matrix()

    def mass_and_forces(self, ev: Workspace) -> tuple[np.ndarray | BlockMass, np.ndarray]:
        """Deprecated (0.3.0; removed in 0.4.0): ``ws.mass_and_forces()``."""
        deprecated("asm.mass_and_forces(ws)", "ws.mass_and_forces()")
        return ev.mass_and_forces()

    def mass_bias_gravity(self, ev: Workspace) -> tuple[np.ndarray | BlockMass, np.ndarray, np.ndarray]:
        """Deprecated (0.3.0; removed in 0.4.0): ``ws.mass_bias_gravity()``."""
        deprecated("asm.mass_bias_gravity(ws)", "ws.mass_bias_gravity()")
        return ev.mass_bias_gravity()

    def gravity_force(self, ev: Workspace) -> np.ndarray:
        """Deprecated (0.3.0; removed in 0.4.0): ``ws.gravity_force()``."""
        deprecated("asm.gravity_force(ws)", "ws.gravity_force()")
        return ev.gravity_force()

    def applied_force(self, ev: Workspace, *, velocity: bool = True) -> np.ndarray:
        """Deprecated (0.3.0; removed in 0.4.0): ``ws.applied_force()``."""
        deprecated("asm.applied_force(ws)", "ws.applied_force()")
        return ev.applied_force(velocity=velocity)

    def dissipated_power(self, ev: Workspace) -> float:
        """Deprecated (0.3.0; removed in 0.4.0): ``ws.dissipated_power()``."""
        deprecated("asm.dissipated_power(ws)", "ws.dissipated_power()")
        return ev.dissipated_power()

    def constraint_rows(self, ev: Workspace, jacobian: bool = True) -> tuple:
        """Deprecated (0.3.0; removed in 0.4.0): ``ws.constraint_rows()``."""
        deprecated("asm.constraint_rows(ws)", "ws.constraint_rows()")
        return ev.constraint_rows(jacobian=jacobian)

    def flexible_jacobians(self, ev: Workspace, *, damping: bool = True) -> tuple:
        """Deprecated (0.3.0; removed in 0.4.0): ``ws.flexible_jacobians()``."""
        deprecated("asm.flexible_jacobians(ws)", "ws.flexible_jacobians()")
        return ev.flexible_jacobians(damping=damping)

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
        if not isinstance(item, str) and item in self.slices:
            return cast("RigidTree | FlexibleBody | ReducedBody", item)
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

    def rank_report(self, t: float, q: ArrayLike, rtol: float | None = None) -> RankReport:
        """Rank of Φ(q) with singular values, tolerance and redundant rows (:func:`analysis.constraint_rank`)."""
        from ..linalg.rank import constraint_rank

        return constraint_rank(self.constraint_jacobian(t, q), rtol=rtol, row_labels=self.row_labels)
