"""Attachments of flexible bodies: node sets fixed to the ground or to a rigid link frame, spherical pins,
and node-to-node ties — holonomic constraints with sparse rows [DE-112, DE-113].

- :class:`FixNodes`  φ = x_a − (X_a + u_a) for the selected components of each node (a clamp or a
  prescribed position); Φ is the identity on those coordinates, bias 0.
- :class:`AttachNodes`  a node set (e.g. a face) rigidly attached to a link: each node keeps the
  position r_a it had in the link frame in the initial configuration, φ_a = x_a − (p + R r_a), with
  Φ_a = [I on the node; −(J_v − [R r_a]× J_ω) on the tree] and bias_a = −(a_p + α × R r_a + ω × (ω × R r_a)),
  the link frame's classical acceleration terms at v̇ = 0. Attached to :class:`~flexbody.rigid.anchors.Ground`
  it is a clamp. The nodes' offsets are taken when the system is assembled (``prepare``).
- :func:`pin`  a spherical joint between a node and any anchor (ground, link point, another node):
  :class:`~flexbody.constraints.closures.PointToPoint` on a :class:`~flexbody.constraints.nodes.Node`.
- :class:`TieNodes`  nodes of one body tied to the coincident nodes of another, x_a = x_b.

Each node's coordinates appear with coefficient 1 in exactly its own three rows, which is what lets the
implicit integrator eliminate them (:mod:`flexbody.linalg.saddle_point`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numba as nb
import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ..errors import ConstraintError
from ..fem.flexible_body import FlexibleBody
from ..rigid.anchors import Anchor, Ground
from ..rigid.link import Link
from .base import Constraint, ConstraintRows, Fix, node_selection
from .closures import PointToPoint
from .nodes import Node

if TYPE_CHECKING:
    from ..rigid.state_view import StateView

__all__ = ["FixNodes", "AttachNodes", "TieNodes", "pin"]

_XYZ = "xyz"


def _body_nodes(body, nodes, who: str) -> np.ndarray:
    if not isinstance(body, FlexibleBody):
        raise ConstraintError(f"{who}: expected a FlexibleBody, got {body!r}")
    idx = node_selection(body, nodes, who)
    if idx.size == 0:
        raise ConstraintError(f"{who}: empty node selection on body {body.name!r}")
    return idx


def _node_columns(ev: StateView, body, nodes: np.ndarray, components=None) -> np.ndarray:
    comps = np.arange(3) if components is None else components
    return (ev.body_offset(body) + 3 * nodes[:, None] + comps[None, :]).ravel()


@functools.lru_cache(maxsize=64)
def _identity(r: int, sign: float = 1.0) -> sp.coo_matrix:
    """sign · identity (r, r) as COO, made once per size and sign: the node block of every evaluation (never
    modified), so that the system's Φ pattern recognises it by identity."""
    return sign * sp.identity(r, format="coo")


@nb.njit(cache=True)
def attachment_rows(offsets, R, p, J, acc, omega, x, phi, block, bias):
    """Rows of nodes carried by a link frame (R, p) [DE-112]: with w_a = R r_a,
    φ_a = x_a − p − w_a, the link columns of ∂φ_a/∂q = −(J_v − [w_a]× J_ω) (``block`` (3k, n_tree)) and
    the bias −(a_O + α × w_a + ω × (ω × w_a)) of Φ q̈ + bias = 0, (a_O, α) = ``acc`` the frame's J̇v."""
    n = J.shape[1]
    for a in range(offsets.shape[0]):
        r0, r1, r2 = offsets[a, 0], offsets[a, 1], offsets[a, 2]
        w0 = R[0, 0] * r0 + R[0, 1] * r1 + R[0, 2] * r2
        w1 = R[1, 0] * r0 + R[1, 1] * r1 + R[1, 2] * r2
        w2 = R[2, 0] * r0 + R[2, 1] * r1 + R[2, 2] * r2
        row = 3 * a
        phi[row], phi[row + 1], phi[row + 2] = x[a, 0] - p[0] - w0, x[a, 1] - p[1] - w1, x[a, 2] - p[2] - w2
        for j in range(n):  # −(J_v − w × J_ω)
            block[row, j] = -(J[0, j] - (w1 * J[5, j] - w2 * J[4, j]))
            block[row + 1, j] = -(J[1, j] - (w2 * J[3, j] - w0 * J[5, j]))
            block[row + 2, j] = -(J[2, j] - (w0 * J[4, j] - w1 * J[3, j]))
        c0, c1, c2 = omega[1] * w2 - omega[2] * w1, omega[2] * w0 - omega[0] * w2, omega[0] * w1 - omega[1] * w0
        bias[row] = -(acc[0] + (acc[4] * w2 - acc[5] * w1) + (omega[1] * c2 - omega[2] * c1))
        bias[row + 1] = -(acc[1] + (acc[5] * w0 - acc[3] * w2) + (omega[2] * c0 - omega[0] * c2))
        bias[row + 2] = -(acc[2] + (acc[3] * w1 - acc[4] * w0) + (omega[0] * c1 - omega[1] * c0))


class NodeRows(Constraint):
    """Rows on a set of nodes of one body (row names n<node>.<axis>)."""

    def _set_rows(self, body, nodes, components=(0, 1, 2)):
        self._columns_of = {}  # (body, its first column) -> the rows' node columns
        self.body, self.nodes = body, nodes
        self.components = np.asarray(components, dtype=np.int64)
        self._bodies = (body,)
        self.n_rows = len(nodes) * len(self.components)
        self.row_names = tuple(f"n{a}.{_XYZ[c]}" for a in nodes for c in self.components)

    @property
    def units(self) -> tuple[str, ...]:
        """Every row is a nodal position [m]."""
        return ("m",) * self.n_rows

    @property
    def bodies(self) -> tuple:
        """The flexible bodies whose nodes the rows hold (one, or two for nodes tied across bodies)."""
        return self._bodies

    def acceleration_derivatives(
        self, ev: StateView, acc: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """None: rows linear in the nodes' coordinates with a constant Jacobian have accelerations c = Φa that do not
        change with q or v (a carrier link's rows override this)."""
        return None

    def _columns(self, ev: StateView, body, nodes, components=None) -> np.ndarray:
        """The global columns of ``nodes`` of ``body`` (these rows' own node set on that body), made once per
        placement of the body: the same array at every state."""
        key = (id(body), ev.body_offset(body))
        cols = self._columns_of.get(key)
        if cols is None:
            cols = self._columns_of[key] = _node_columns(ev, body, nodes, components)
            cols.flags.writeable = False
        return cols


class FixNodes(NodeRows):
    """Nodes of ``body`` held at X + u in the world (clamped when u = 0).

    Parameters
    ----------
    body : FlexibleBody
    nodes : str or array of int
        Node-set or face-set name, or node indices.
    displacement : array_like (3,) or (k, 3), optional
        Prescribed displacement u [m] from the reference position; default 0.
    components : sequence of int
        Which world components (0, 1, 2) are held; default all three.
    """

    kind = "fix"

    def __init__(
        self,
        body: FlexibleBody,
        nodes: str | ArrayLike,
        displacement: ArrayLike | Callable[[np.ndarray], ArrayLike] | None = None,
        *,
        components: Sequence[int] = (0, 1, 2),
        name: str | None = None,
    ):
        spec = Fix(body, nodes, displacement, components=components, name=name)  # validation shared with statics
        super().__init__(spec.name)
        self._set_rows(body, spec.nodes, spec.components)
        self.target = spec.values(1.0)

    @classmethod
    def from_fix(cls, fix: Fix, name: str | None = None) -> FixNodes:
        out = cls.__new__(cls)
        Constraint.__init__(out, name if name is not None else fix.name)
        out._set_rows(fix.body, fix.nodes, fix.components)
        out.target = fix.values(1.0)
        return out

    def evaluate(self, ev: StateView) -> ConstraintRows:
        cols = self._columns(ev, self.body, self.nodes, self.components)
        return ConstraintRows(ev.q[cols] - self.target, [(cols, _identity(self.n_rows))], np.zeros(self.n_rows))


class AttachNodes(NodeRows):
    """A node set of ``body`` rigidly attached to the frame of ``link`` (or held by the ground).

    The offsets r_a of the nodes in the link frame are those of the initial configuration of the
    assembled system (link pose at q0, nodes at their initial positions).

    Parameters
    ----------
    body : FlexibleBody
    nodes : str or array of int
        Node-set or face-set name (e.g. the beam's flange face), or node indices.
    link : Link or Ground
        The rigid link that carries the nodes (its joint frame), or a Ground (then a clamp).
    """

    kind = "attach"

    def __init__(self, body: FlexibleBody, nodes: str | ArrayLike, link: Link | Ground, name: str | None = None):
        who = f"attachment {name!r}" if name else "attachment"
        idx = _body_nodes(body, nodes, who)
        if not isinstance(link, (Link, Ground)):
            raise ConstraintError(f"{who}: the carrier must be a Link of a RigidTree or a Ground, got {link!r}")
        label = nodes if isinstance(nodes, str) else f"{idx.size}nodes"
        carrier = "ground" if isinstance(link, Ground) else f"{link.tree.name}.{link.name}"
        super().__init__(name if name is not None else f"attach_{body.name}_{label}_to_{carrier}")
        self._set_rows(body, idx)
        self.link = link
        self.trees = () if isinstance(link, Ground) else (link.tree,)
        self.offsets = None

    def prepare(self, q_tree: np.ndarray | None, x_nodes: np.ndarray) -> None:
        """Record the node offsets r_a (k, 3) in the carrier frame from the initial configuration."""
        if isinstance(self.link, Ground):
            R, p = self.link.R, self.link.origin
        else:
            kin = self.link.tree.kinematics(q_tree)
            R, p = kin.R[self.link.index], kin.p[self.link.index]
        self.offsets = (x_nodes - p) @ R  # r_a = Rᵀ(x_a − p)

    def evaluate(self, ev: StateView) -> ConstraintRows:
        if self.offsets is None:
            raise ConstraintError(f"attachment {self.name!r}: not prepared (assemble the system first)")
        cols = self._columns(ev, self.body, self.nodes)
        k = len(self.nodes)
        x = ev.q[cols].reshape(k, 3)
        pieces = [(cols, _identity(3 * k))]
        if isinstance(self.link, Ground):
            target = self.link.origin + self.offsets @ self.link.R.T
            return ConstraintRows((x - target).ravel(), pieces, np.zeros(3 * k))
        kin = ev.kinematics(self.link.tree)
        i = self.link.index
        J, frame_bias = kin.frame_terms(self.link)  # (6, n_tree) [J_v; J_ω], J̇v (6,)
        phi, block, bias = np.empty(3 * k), np.empty((3 * k, J.shape[1])), np.empty(3 * k)
        attachment_rows(
            self.offsets, kin.R[i], kin.p[i], J, frame_bias, kin.angular_velocity(self.link), x, phi, block, bias
        )
        pieces.append((ev.columns(self.link.tree), block))
        return ConstraintRows(phi, pieces, bias)

    def joint_hessian(self, ev: StateView, lam: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """(columns, H) of ∂(Φᵀλ)/∂q on the carrier tree's joint columns for the rows' multipliers λ (3k,): the rows
        x_a − X_a(q) put −J_{X_a}ᵀλ_a on the joints, whose derivative is −Σ_a ∂²(λ_aᵀX_a)/∂q² (the point Hessians of
        the carried points, :mod:`flexbody.rigid.point_hessian`); None on a ground clamp (constant rows)."""
        if isinstance(self.link, Ground):
            return None
        if self.offsets is None:
            raise ConstraintError(f"attachment {self.name!r}: not prepared (assemble the system first)")
        kin = ev.kinematics(self.link.tree)
        n = self.link.tree.n_dofs
        H = np.zeros((n, n))
        for offset, force in zip(self.offsets, np.asarray(lam, dtype=float).reshape(-1, 3)):
            H -= kin.point_hessian(self.link, offset, force)
        return ev.columns(self.link.tree), H

    def acceleration_derivatives(
        self, ev: StateView, acc: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """(columns, ∂c/∂q, ∂c/∂v) on the carrier's joint columns of the rows' accelerations c = ẍ_a − Ẍ_a(q, v, a)
        at the system's accelerations ``acc``: minus the carried points' (:meth:`~flexbody.rigid.Kinematics.
        frame_motion_derivatives`); None on a ground clamp (c = ẍ_a)."""
        if isinstance(self.link, Ground):
            return None
        if self.offsets is None:
            raise ConstraintError(f"attachment {self.name!r}: not prepared (assemble the system first)")
        cols = ev.columns(self.link.tree)
        kin = ev.kinematics(self.link.tree)
        Cq, Cv = np.empty((self.n_rows, cols.size)), np.empty((self.n_rows, cols.size))
        for a, offset in enumerate(self.offsets):
            _, a_q, a_v = kin.frame_motion_derivatives(self.link, offset, acc[cols])
            Cq[3 * a : 3 * a + 3], Cv[3 * a : 3 * a + 3] = -a_q[:3], -a_v[:3]
        return cols, Cq, Cv


class TieNodes(NodeRows):
    """Nodes of ``body_a`` tied to the coincident nodes of ``body_b``: x_a = x_b.

    Nodes are matched by their reference positions (within ``tol`` [m]); ``nodes_b`` defaults to all
    nodes of ``body_b``. Raises ConstraintError naming the first node without a partner.
    """

    kind = "tie"

    def __init__(
        self,
        body_a: FlexibleBody,
        nodes_a: str | ArrayLike,
        body_b: FlexibleBody,
        nodes_b: str | ArrayLike | None = None,
        *,
        tol: float = 1e-8,
        name: str | None = None,
    ):
        who = f"tie {name!r}" if name else "tie"
        if (
            isinstance(tol, (bool, np.bool_))
            or not isinstance(tol, (int, float, np.integer, np.floating))
            or not np.isfinite(tol)
            or tol < 0
        ):
            raise ConstraintError(f"{who}: tol must be a finite distance >= 0 [m], got {tol!r}")
        ia = _body_nodes(body_a, nodes_a, who)
        ib = np.arange(body_b.n_nodes) if nodes_b is None else _body_nodes(body_b, nodes_b, who)
        if body_a is body_b:
            raise ConstraintError(f"{who}: both sides are body {body_a.name!r}; tie two different bodies")
        Xa, Xb = body_a.mesh.points[ia], body_b.mesh.points[ib]
        d = np.linalg.norm(Xa[:, None, :] - Xb[None, :, :], axis=2) if len(ia) * len(ib) <= 4_000_000 else None
        if d is None:
            raise ConstraintError(f"{who}: {len(ia)} x {len(ib)} candidate pairs; select smaller node sets")
        j = np.argmin(d, axis=1)
        bad = np.flatnonzero(d[np.arange(len(ia)), j] > tol)
        if bad.size:
            raise ConstraintError(
                f"{who}: node {ia[bad[0]]} of {body_a.name!r} at {Xa[bad[0]]} has no node of "
                f"{body_b.name!r} within {tol} m"
            )
        super().__init__(name if name is not None else f"tie_{body_a.name}_{body_b.name}")
        self._set_rows(body_a, ia)
        self.body_b, self.nodes_b = body_b, ib[j]
        self._bodies = (body_a, body_b)

    def evaluate(self, ev: StateView) -> ConstraintRows:
        ca = self._columns(ev, self.body, self.nodes)
        cb = self._columns(ev, self.body_b, self.nodes_b)
        r = len(ca)
        return ConstraintRows(ev.q[ca] - ev.q[cb], [(ca, _identity(r)), (cb, _identity(r, -1.0))], np.zeros(r))


def pin(
    body: FlexibleBody,
    node: int | str | Node,
    anchor: Anchor,
    components: Sequence[int] = (0, 1, 2),
    name: str | None = None,
) -> PointToPoint:
    """A spherical joint: node ``node`` (index or one-node set) of ``body`` coincides with ``anchor``
    (Ground, a link point, or another body's Node)."""
    from .nodes import node as make_node

    a = make_node(body, node) if not isinstance(node, Node) else node
    return PointToPoint(
        a, anchor, components=components, name=name if name is not None else f"pin_{a.label}".replace(".", "_")
    )
