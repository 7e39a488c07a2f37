"""System: rigid trees, flexible bodies, constraints, loads and actuators (the editable description).

:meth:`System.assemble` freezes rigid trees, flexible bodies, holonomic constraints (loop closures,
couplings, attachments of nodes, pins, ties; a :class:`~flexbody.constraints.base.Fix` becomes a
:class:`~flexbody.constraints.attachments.FixNodes`) and loads into an
:class:`~flexbody.system.assembled.AssembledSystem`
whose global coordinates stack the trees' joint coordinates and then each body's absolute nodal
coordinates, q = [q₁; …; q_y; d₁; …; d_z] [DE-110], for dynamics, implicit integration, statics and
control. The flexible-only static solver (:func:`flexbody.solve_static`) uses this description directly:
stacked nodal coordinates, block-diagonal constant mass, stacked internal forces and tangents, summed loads.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ..constraints.base import Constraint, Fix
from ..constraints.force_elements import ForceElement
from ..constraints.unilateral_contact import Contact
from ..errors import ConstraintError, FlexbodyError, LoadError, ModelError
from ..fem.flexible_body import FlexibleBody
from ..fem.loads import Load
from ..reduced.body import ReducedBody
from ..rigid.tree import Link, RigidTree
from .assembled import AssembledSystem


class System:
    """Rigid trees and flexible bodies with their constraints, loads and actuators.

    Parameters
    ----------
    bodies : sequence of RigidTree, ReducedBody or FlexibleBody
        Unique names; coordinates are stacked as the trees' joint coordinates, the reduced bodies' modal
        coordinates, then the flexible bodies' nodal coordinates (each kind in the order given). A reduced body's
        link must belong to a tree of the system.
    constraints : sequence of Constraint (holonomic: between trees, nodes and the ground), Fix or Contact
        A :class:`~flexbody.constraints.unilateral_contact.Contact` (unilateral, with friction) is kept apart in
        ``contacts``: the nonsmooth stepper :class:`flexbody.MoreauJean` solves it.
    loads : sequence of Load (flexible bodies)
    forces : sequence of ForceElement
        Springs, dampers, bushings and user generalized forces (:mod:`flexbody.constraints.force_elements`).
    actuators : sequence of Link, optional
        Links whose joint coordinates are actuated (rows of the selection matrix S: every coordinate of the link's
        joint, e.g. a spherical joint's three, a free flyer's six); default: every joint coordinate (flexible nodes
        are passive [DE 6.3]).
    q0 : array_like (n_joints,), (n_rigid,) or (n,), optional
        Initial joint coordinates of the rigid trees (default zero), those and the reduced bodies' modal
        coordinates (default zero), or all coordinates (nodes default to their reference positions).
    """

    def __init__(
        self,
        bodies: Sequence,
        constraints: Sequence = (),
        loads: Sequence[Load] = (),
        actuators: Sequence[Link] | None = None,
        q0: ArrayLike | None = None,
        forces: Sequence = (),
    ):
        if isinstance(bodies, (FlexibleBody, RigidTree, ReducedBody)):
            raise FlexbodyError(
                f"System: bodies must be a list, e.g. System([{bodies.name!r} body, ...]); "
                f"got the single {type(bodies).__name__} {bodies.name!r}"
            )
        items = _listed(bodies, "bodies", FlexbodyError)
        constraints = _listed(constraints, "constraints", ConstraintError)
        loads = _listed(loads, "loads", LoadError)
        forces = _listed(forces, "forces", FlexbodyError)
        if not items:
            raise FlexbodyError("System needs at least one body")
        names = set()
        for body in items:
            if not isinstance(body, (FlexibleBody, RigidTree, ReducedBody)):
                raise FlexbodyError(f"System: {body!r} is not a FlexibleBody, RigidTree or ReducedBody")
            if body.name in names:
                raise FlexbodyError(f"System: two bodies are named {body.name!r}")
            names.add(body.name)
        self.trees = [b for b in items if isinstance(b, RigidTree)]
        self.bodies = [b for b in items if isinstance(b, FlexibleBody)]
        self.reduced = [b for b in items if isinstance(b, ReducedBody)]
        for body in self.reduced:
            if body.tree not in self.trees:
                raise ModelError(
                    f"System: reduced body {body.name!r} rides on link {body.link.name!r} of tree "
                    f"{body.tree.name!r}, which is not in the system"
                )
        self.contacts = [c for c in constraints if isinstance(c, Contact)]
        self.constraints = [c for c in constraints if not isinstance(c, Contact)]
        _check_contacts(self.contacts, self.trees, self.bodies)
        self.loads = list(loads)
        for c in self.constraints:
            if isinstance(c, Fix):
                if c.body not in self.bodies:
                    raise ConstraintError(
                        f"System: constraint {c.name!r} (Fix {c.label!r}) refers to body "
                        f"{c.body.name!r}, which is not in the system"
                    )
            elif isinstance(c, Constraint):
                for tree in c.trees:
                    if tree not in self.trees:
                        raise ConstraintError(
                            f"System: constraint {c.name!r} refers to tree {tree.name!r}, which is not in the system"
                        )
                for body in c.bodies:
                    if body not in self.bodies:
                        raise ConstraintError(
                            f"System: constraint {c.name!r} refers to flexible body "
                            f"{body.name!r}, which is not in the system"
                        )
            else:
                raise ConstraintError(f"System: unsupported constraint {type(c).__name__}")
        _check_fix_overlaps([c for c in self.constraints if isinstance(c, Fix)])
        _check_reduced_anchors([*self.constraints, *self.contacts], self.reduced)
        labels = [lab for c in self.constraints if isinstance(c, Constraint) for lab in c.row_labels]
        if len(set(labels)) != len(labels):
            dup = sorted({lab for lab in labels if labels.count(lab) > 1})
            raise ConstraintError(f"System: constraint names must be unique; repeated rows {dup}")
        for load in self.loads:
            if not isinstance(load, Load):
                raise LoadError(f"System: {load!r} is not a flexbody Load")
            if load.body not in self.bodies:
                raise LoadError(
                    f"System: a {type(load).__name__} refers to body {load.body.name!r}, which is not in the system"
                )
        self.forces = list(forces)
        _check_forces(self.forces, self.trees, self.bodies)
        _check_reduced_anchors(self.forces, self.reduced)
        self.actuators = None if actuators is None else _listed(actuators, "actuators", ModelError)
        for link in self.actuators or ():
            if not isinstance(link, Link) or link.tree not in self.trees:
                raise ModelError(f"System: actuator {link!r} is not a link of a tree in the system")
            if link.coordinate is None:
                raise ModelError(f"System: actuator link {link.name!r} has a fixed joint (nothing to actuate)")
        self.q0 = q0
        sizes = [b.n_dofs for b in self.bodies]
        self._offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(int)

    def assemble(self) -> AssembledSystem:
        """Freeze bodies, constraints, loads and actuators into an :class:`AssembledSystem` [DE-107..113]."""
        from ..constraints.attachments import FixNodes

        n_joints = sum(t.n_dofs for t in self.trees)
        n_rigid = n_joints + sum(b.n_dofs for b in self.reduced)
        n = n_rigid + self.n_dofs
        q0 = None
        if self.q0 is not None:
            q0 = np.asarray(self.q0, dtype=float)
            if q0.shape not in ((n_joints,), (n_rigid,), (n,)) or not np.all(np.isfinite(q0)):
                raise ModelError(
                    f"System: q0 must be {n_joints} (joints), {n_rigid} (joints and modal coordinates) or "
                    f"{n} finite numbers, got shape {q0.shape}"
                )
        rows = [FixNodes.from_fix(c) if isinstance(c, Fix) else c for c in self.constraints]
        _check_overlaps(rows)
        return AssembledSystem(
            self.trees,
            rows,
            self.actuators,
            q0,
            bodies=self.bodies,
            loads=self.loads,
            forces=self.forces,
            reduced=self.reduced,
            contacts=self.contacts,
        )

    # ------------------------------------------------------------------ coordinates
    @property
    def n_dofs(self) -> int:
        """Number of stacked nodal coordinates of the flexible bodies (3 per node), the coordinates of the
        flexible-only static solver; joint and modal coordinates are not counted (see
        :attr:`AssembledSystem.n_dofs`)."""
        return int(self._offsets[-1])

    def body_slice(self, body: FlexibleBody) -> slice:
        """Slice of the global coordinates that belongs to ``body``."""
        i = self._index(body)
        return slice(int(self._offsets[i]), int(self._offsets[i + 1]))

    def _index(self, body: FlexibleBody) -> int:
        for i, b in enumerate(self.bodies):
            if b is body:
                return i
        raise FlexbodyError(f"body {getattr(body, 'name', body)!r} is not part of this system")

    def reference_coordinates(self) -> np.ndarray:
        """Stacked reference coordinates q₀ (n_dofs,) [m]."""
        return np.concatenate([b.reference_coordinates() for b in self.bodies])

    def prescribed(self, factor: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
        """Global indices and values of all prescribed coordinates at load factor ``factor``."""
        dof_parts: list[np.ndarray] = []
        value_parts: list[np.ndarray] = []
        for c in self.constraints:
            offset = self.body_slice(c.body).start
            dof_parts.append(offset + c.dofs())
            value_parts.append(c.values(factor))
        if not dof_parts:
            return np.zeros(0, int), np.zeros(0)
        dofs, vals = np.concatenate(dof_parts), np.concatenate(value_parts)
        unique, first = np.unique(dofs, return_index=True)
        return unique, vals[first]

    # ------------------------------------------------------------------ terms
    def mass_matrix(self) -> sp.csr_matrix:
        """Block-diagonal constant mass matrix (n_dofs, n_dofs) [kg]."""
        return sp.block_diag([b.mass_matrix() for b in self.bodies], format="csr")

    def internal_force(self, q: np.ndarray, v: np.ndarray | None = None) -> np.ndarray:
        """Stacked internal forces k(q, v) (n_dofs,) [N]."""
        return np.concatenate(
            [b.internal_force(q[self.body_slice(b)], None if v is None else v[self.body_slice(b)]) for b in self.bodies]
        )

    def force_and_tangent(self, q: np.ndarray) -> tuple[np.ndarray, sp.csr_matrix]:
        """Internal force (n_dofs,) and its Jacobian ∂k/∂q (sparse, block diagonal)."""
        parts = [b.force_and_tangent(q[self.body_slice(b)]) for b in self.bodies]
        f = np.concatenate([p[0] for p in parts])
        K = parts[0][1] if len(parts) == 1 else sp.block_diag([p[1] for p in parts], format="csr")
        return f, K

    def external_force(self, q: np.ndarray) -> np.ndarray:
        """Sum of the loads' generalized forces (n_dofs,) [N] at q."""
        f = np.zeros(self.n_dofs)
        for load in self.loads:
            s = self.body_slice(load.body)
            f[s] += load.force(q[s])
        return f

    @property
    def has_follower_loads(self) -> bool:
        """True if a load depends on the deformed configuration (a follower load, e.g. :class:`~flexbody.Pressure`)."""
        return any(load.follower for load in self.loads)

    def inversion(self, q: np.ndarray) -> str | None:
        """Where a body is inverted at q (n_dofs,), det F ≤ 0 at a Gauss point (:meth:`FlexibleBody.inversion`), or
        None: such a state is never an equilibrium."""
        for body in self.bodies:
            where = body.inversion(q[self.body_slice(body)])
            if where:
                return where
        return None

    def load_stiffness(self, q: np.ndarray) -> sp.csr_matrix | None:
        """∂(external force)/∂q (n_dofs, n_dofs) of follower loads, or None when all loads are dead."""
        K = None
        for load in self.loads:
            if not load.follower:
                continue
            s = self.body_slice(load.body)
            Kl = load.stiffness(q[s]).tocoo()
            block = sp.csr_matrix((Kl.data, (Kl.row + s.start, Kl.col + s.start)), shape=(self.n_dofs,) * 2)
            K = block if K is None else K + block
        return K


def _listed(items, what: str, error: type) -> list:
    """``items`` (a list, tuple or other iterable; None for none) as a list; ``error`` naming ``what`` for a single
    object or a text where a sequence belongs (``System([bar], fb.Fix(bar, "x0"))``)."""
    if items is None:
        return []
    if isinstance(items, (str, bytes)) or not hasattr(items, "__iter__"):
        name, body = getattr(items, "name", None), getattr(getattr(items, "body", None), "name", None)
        label = (
            f" {name!r}"
            if isinstance(name, str)
            else f" on body {body!r}"
            if isinstance(body, str)
            else f" {items!r}"
            if isinstance(items, (str, bytes, int, float))
            else ""
        )
        raise error(f"System: {what} must be a list (e.g. {what}=[...]), got the single {type(items).__name__}{label}")
    return list(items)


def _check_fix_overlaps(fixes) -> None:
    """Refuse two Fix that prescribe different displacements to the same nodal coordinate: the flexible-only static
    solver, which eliminates the prescribed coordinates, would keep one of the two values and drop the other
    without a word. The same displacement twice (a clamped edge on a symmetry plane) is consistent."""
    owner: dict = {}
    for c in fixes:
        displacement = c.values(1.0) - c.values(0.0)
        for dof, u in zip(c.dofs(), displacement):
            key = (id(c.body), int(dof))
            if key in owner and owner[key][1] != u:
                node, comp = divmod(int(dof), 3)
                raise ConstraintError(
                    f"System: node {node} of body {c.body.name!r} ({'xyz'[comp]}) is prescribed "
                    f"{owner[key][1]:.6g} m by {owner[key][0]!r} and {u:.6g} m by {c.name!r}; "
                    f"remove one of them"
                )
            owner.setdefault(key, (c.name, u))


def _held_node_coordinates(c) -> list:
    """(body, node, component) triples that constraint ``c`` holds in the world: those of a FixNodes or AttachNodes,
    and of a pin (PointToPoint) between a node and the ground; none for ties and other constraints."""
    from ..constraints.attachments import NodeRows, TieNodes
    from ..constraints.closures import PointToPoint
    from ..constraints.nodes import Node
    from ..rigid.anchors import Ground

    if isinstance(c, NodeRows) and not isinstance(c, TieNodes):
        return [(c.body, int(a), int(comp)) for a in c.nodes for comp in c.components]
    if isinstance(c, PointToPoint):
        for node, other in ((c.a, c.b), (c.b, c.a)):
            if isinstance(node, Node) and isinstance(other, Ground):
                return [(node.body, node.index, int(comp)) for comp in c.components]
    return []


def _check_overlaps(constraints) -> None:
    """Refuse two node constraints that hold the same nodal coordinate (redundant and incompatible in
    general, e.g. a node fixed to the ground and attached to a moving link, or pinned to two ground points)."""
    owner: dict = {}
    for c in constraints:
        for body, a, comp in _held_node_coordinates(c):
            key = (id(body), a, comp)
            if key in owner:
                raise ConstraintError(
                    f"System: node {a} of body {body.name!r} ({'xyz'[comp]}) is held by both "
                    f"{owner[key]!r} and {c.name!r}; remove one of them"
                )
            owner[key] = c.name


def as_assembled(model, who: str):
    """The model a solver evaluates: a :class:`flexbody.System` is assembled here (``system.assemble()``);
    an :class:`AssembledSystem`, or any object with the evaluation interface (``n_dofs``, ...), is
    returned as it is. Anything else raises ModelError naming ``who`` and what to pass.

    Assembling takes time (attachments, patterns): for repeated calls assemble once and pass the result.
    """
    if isinstance(model, System):
        return model.assemble()
    if isinstance(model, AssembledSystem) or hasattr(model, "n_dofs"):
        return model
    raise ModelError(
        f"{who}: expected a flexbody.System or the AssembledSystem of system.assemble(), got {type(model).__name__}"
    )


def refuse_contacts(model, who: str) -> None:
    """FlexbodyError when ``model`` (a System or an assembled one) has unilateral contacts, which ``who`` (a solver of
    smooth equations: statics, linearisation, modes) cannot take: it would solve the system as if they were not
    there."""
    contacts = getattr(model, "contacts", None) or []
    if contacts:
        names = [c.name for c in contacts[:3]] + ([f"… ({len(contacts)} in all)"] if len(contacts) > 3 else [])
        raise FlexbodyError(
            f"{who}: the system has unilateral contacts {names}, which {who} does not take (it would solve as if "
            "they were not there); simulate them with fb.MoreauJean, or model a lasting contact as a bilateral row "
            "(fb.OnSurface) or a force (fb.CompliantContact)"
        )


def _check_forces(forces, trees, bodies) -> None:
    """Every force element is one and acts on trees and bodies of the system, under a unique name."""
    names = set()
    for f in forces:
        if not isinstance(f, ForceElement):
            raise FlexbodyError(
                f"System: {f!r} in forces is not a force element (SpringDamper, JointSpringDamper, "
                f"Bushing, GeneralizedForce)"
            )
        if f.name in names:
            raise FlexbodyError(f"System: two force elements are named {f.name!r}")
        names.add(f.name)
        for tree in f.trees:
            if tree not in trees:
                raise FlexbodyError(
                    f"System: force element {f.name!r} acts on tree {tree.name!r}, which is not in the system"
                )
        for body in f.bodies:
            if body not in bodies:
                raise FlexbodyError(
                    f"System: force element {f.name!r} acts on flexible body {body.name!r}, which is not in the system"
                )


def _check_contacts(contacts, trees, bodies) -> None:
    """Every contact touches with a tree or body of the system, under a unique name."""
    names = set()
    for c in contacts:
        if c.name in names:
            raise ConstraintError(f"System: two contacts are named {c.name!r}")
        names.add(c.name)
        for part in [*c.trees, *c.bodies]:
            if part not in trees and part not in bodies:
                raise ConstraintError(
                    f"System: contact {c.name!r} touches with {part.name!r}, which is not in the system"
                )


def _check_reduced_anchors(items, reduced) -> None:
    """Every reduced-body point that a constraint or force element uses is on a reduced body of the system."""
    for item in items:
        for anchor in getattr(item, "anchors", ()):
            for body in getattr(anchor, "reduced", ()):
                if body not in reduced:
                    raise ConstraintError(
                        f"System: {getattr(item, 'name', item)!r} uses a point of reduced body "
                        f"{body.name!r}, which is not in the system"
                    )
