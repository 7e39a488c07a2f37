"""Anchors on flexible bodies: a node of an absolute-nodal-coordinate mesh.

A node's position is three of the global coordinates, x = q[c:c+3] [DE-101, DE-110], so its Jacobian
is the identity on those columns and its bias acceleration is zero. Constraints and tasks written on
:class:`~flexbody.rigid.anchors.Anchor` (point-to-point pins, distances, surfaces, point tasks) therefore
work on flexible nodes unchanged; :mod:`flexbody.constraints.attachments` adds the multi-node attachments.

The state (:class:`~flexbody.rigid.state_view.StateView`) provides ``ev.body_offset(body)`` (first global column
of the body) and the arrays ``ev.q``, ``ev.v``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ..errors import MeshError
from ..fem.flexible_body import FlexibleBody
from ..rigid.anchors import Anchor

if TYPE_CHECKING:
    from ..rigid.state_view import StateView

__all__ = ["Node", "node", "nearest_node"]

_EYE3 = np.eye(3)


class Node(Anchor):
    """Node ``index`` of the flexible ``body``: world position, velocity, Jacobian (identity) and bias (0)."""

    def __init__(self, body: FlexibleBody, index: int):
        if not isinstance(body, FlexibleBody):
            raise MeshError(f"Node: expected a FlexibleBody, got {body!r}")
        if isinstance(index, np.ndarray) and index.ndim == 0:
            index = index[()]
        if isinstance(index, (bool, np.bool_)) or not isinstance(index, (int, np.integer)):
            raise MeshError(
                f"Node: body {body.name!r}: the node index must be an integer 0..{body.n_nodes - 1}, got {index!r}"
            )
        index = int(index)
        if not 0 <= index < body.n_nodes:
            raise MeshError(f"Node: body {body.name!r} has nodes 0..{body.n_nodes - 1}, not {index}")
        self.body, self.index = body, index
        self.bodies = (body,)
        self.label = f"{body.name}.node{index}"

    def columns(self, ev: StateView) -> np.ndarray:
        """The node's three global coordinate indices (3,) (x, y, z) at the state ``ev``."""
        start = ev.body_offset(self.body) + 3 * self.index
        return np.arange(start, start + 3)

    def position(self, ev: StateView) -> np.ndarray:
        """Position (3,) [m] of the node in world coordinates at ``ev.q``."""
        return ev.q[self.columns(ev)]

    def velocity(self, ev: StateView) -> np.ndarray:
        """Velocity (3,) [m/s] of the node in world coordinates at ``ev.v``."""
        return ev.v[self.columns(ev)]

    def jacobian(self, ev: StateView) -> tuple[np.ndarray, np.ndarray]:
        return self.columns(ev), _EYE3

    def bias(self, ev: StateView) -> np.ndarray:
        return np.zeros(3)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Node) and other.body is self.body and other.index == self.index

    def __hash__(self) -> int:
        return hash((id(self.body), self.index))

    def __repr__(self) -> str:
        return f"Node({self.body.name!r}, {self.index})"


def node(body: FlexibleBody, which: int | str) -> Node:
    """The node anchor of ``body`` given by an index or a one-node set name."""
    if isinstance(which, str):
        idx = body.nodes(which)
        if idx.size != 1:
            raise MeshError(f"body {body.name!r}: set {which!r} has {idx.size} nodes; a Node needs exactly one")
        return Node(body, int(idx[0]))
    return Node(body, which)


def nearest_node(body: FlexibleBody, point: ArrayLike) -> Node:
    """The node of ``body`` nearest to ``point`` (3,) [m] in the reference configuration."""
    p = np.asarray(point, dtype=float).reshape(3)
    return Node(body, int(np.argmin(np.linalg.norm(body.mesh.points - p, axis=1))))
