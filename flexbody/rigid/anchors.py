"""Anchors: the points and frames constraints (and tasks) are written on.

An anchor evaluates, at one state of an assembled system, its world position x (3,), velocity, the
Jacobian ∂ẋ/∂v as a block on a few global columns, and the bias acceleration J̇v (the classical
acceleration when v̇ = 0); frames add the rotation R (3, 3) and the angular velocity, Jacobian and bias.
Constraints combine anchors, so a loop closure, weld or pin is written once for every pair of anchor
kinds: the ground, a point or frame on a rigid link, and (with flexible bodies) nodes.

The state ``ev`` passed to every method is a :class:`~flexbody.rigid.state_view.StateView` (a workspace); it
provides ``ev.kinematics(tree)`` (a
:class:`flexbody.rigid.Kinematics`), ``ev.offset(tree)`` (the tree's first column in the global q),
``ev.columns(tree)`` (all its columns) and ``ev.point(anchor)`` (position, velocity, (3, n_tree)
Jacobian and bias of a link point, evaluated in one batch per tree for the points an assembled system
knows of).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np
from numpy.typing import ArrayLike

from .link import Link, checked_rotation, checked_vector3

if TYPE_CHECKING:
    from .state_view import StateView

_NO_COLS = np.zeros(0, dtype=np.int64)


@runtime_checkable
class CurvedAnchor(Protocol):
    """An anchor whose position is not linear in the coordinates it moves with (a link's point, a reduced body's
    point), with the second derivatives that exact Jacobians need (#36)."""

    def position_hessian(self, ev: StateView, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(columns (k,), ∂(Jᵀw)/∂q (k, k)) for a constant world vector w (3,)."""
        ...

    def velocity_jacobian(self, ev: StateView) -> tuple[np.ndarray, np.ndarray]:
        """(columns (k,), ∂ẋ/∂q (3, k)) at fixed v."""
        ...


class Anchor:
    """Base class of points: position, velocity, Jacobian block and bias acceleration in the world."""

    trees: tuple = ()
    label = "anchor"

    def position(self, ev: StateView) -> np.ndarray:
        raise NotImplementedError

    def velocity(self, ev: StateView) -> np.ndarray:
        raise NotImplementedError

    def jacobian(self, ev: StateView) -> tuple[np.ndarray, np.ndarray]:
        """(cols (k,), block (3, k)) with ẋ = block @ v[cols]."""
        raise NotImplementedError

    def bias(self, ev: StateView) -> np.ndarray:
        """J̇v (3,) [m/s²]: the acceleration of the point when the global accelerations are zero."""
        raise NotImplementedError


class FrameAnchor(Anchor):
    """A point that also carries axes: adds rotation, angular velocity, angular Jacobian and bias."""

    def rotation(self, ev: StateView) -> np.ndarray:
        raise NotImplementedError

    def angular_velocity(self, ev: StateView) -> np.ndarray:
        raise NotImplementedError

    def angular_jacobian(self, ev: StateView) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def angular_bias(self, ev: StateView) -> np.ndarray:
        raise NotImplementedError


def _point_text(x: np.ndarray) -> str:
    """A point as it reads in labels: "(0.4, 0, 0)" (6 significant decimals, no numpy reprs)."""
    return "(" + ", ".join(f"{float(c):.6g}" for c in np.round(x, 6)) + ")"


class Ground(FrameAnchor):
    """A fixed point/frame of the world: ``origin`` (3,) [m] with axes ``rotation`` (3, 3)."""

    def __init__(self, origin: ArrayLike = (0.0, 0.0, 0.0), rotation: ArrayLike | None = None):
        self.origin = checked_vector3(origin, "Ground: origin")
        self.R = checked_rotation(rotation, "Ground: rotation")
        self.label = f"ground{_point_text(self.origin)}"

    def position(self, ev: StateView) -> np.ndarray:
        """The fixed ``origin`` (3,) [m] in world coordinates, at any state."""
        return self.origin

    def velocity(self, ev: StateView) -> np.ndarray:
        """Zero (3,) [m/s]: the ground does not move."""
        return np.zeros(3)

    def jacobian(self, ev: StateView) -> tuple[np.ndarray, np.ndarray]:
        return _NO_COLS, np.zeros((3, 0))

    def bias(self, ev: StateView) -> np.ndarray:
        return np.zeros(3)

    def rotation(self, ev: StateView) -> np.ndarray:
        """The fixed axes ``R`` (3, 3) in the world, at any state."""
        return self.R

    def angular_velocity(self, ev: StateView) -> np.ndarray:
        """Zero (3,) [rad/s]: the ground does not turn."""
        return np.zeros(3)

    def angular_jacobian(self, ev: StateView) -> tuple[np.ndarray, np.ndarray]:
        """(cols (0,), block (3, 0)): no coordinate moves the ground."""
        return _NO_COLS, np.zeros((3, 0))

    def angular_bias(self, ev: StateView) -> np.ndarray:
        """Zero (3,) [rad/s²] angular bias acceleration."""
        return np.zeros(3)


class LinkPoint(Anchor):
    """The point at ``offset`` (link frame) [m] on a rigid ``link``; made by :meth:`RigidTree.point`."""

    def __init__(self, link: Link, offset: np.ndarray):
        self.link, self.offset = link, offset
        self.trees = (link.tree,)
        self.label = f"{link.tree.name}.{link.name}{_point_text(offset)}"

    def position(self, ev: StateView) -> np.ndarray:
        return ev.point(self)[0]

    def velocity(self, ev: StateView) -> np.ndarray:
        return ev.point(self)[1]

    def jacobian(self, ev: StateView) -> tuple[np.ndarray, np.ndarray]:
        J = ev.point(self)[2]
        return ev.columns(self.link.tree), J

    def bias(self, ev: StateView) -> np.ndarray:
        return ev.point(self)[3]

    def position_hessian(self, ev: StateView, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(columns (k,), ∂(Jᵀw)/∂q (k, k)) for a constant world vector w (3,): the stiffness a world force w [N] at
        the point adds to the joint rows (:meth:`~flexbody.rigid.Kinematics.point_hessian`)."""
        return ev.columns(self.link.tree), ev.kinematics(self.link.tree).point_hessian(self.link, self.offset, w)

    def velocity_jacobian(self, ev: StateView) -> tuple[np.ndarray, np.ndarray]:
        """(columns (k,), ∂ẋ/∂q (3, k)) at fixed v: how the point's velocity changes with the coordinates
        (:meth:`~flexbody.rigid.Kinematics.point_velocity_jacobian`)."""
        return ev.columns(self.link.tree), ev.kinematics(self.link.tree).point_velocity_jacobian(self.link, self.offset)


class LinkFrame(LinkPoint, FrameAnchor):
    """A frame on a rigid link: origin ``offset`` and axes ``rotation`` relative to the link frame."""

    def __init__(self, link: Link, offset: np.ndarray, rotation: np.ndarray):
        super().__init__(link, offset)
        self.R_link = rotation

    def rotation(self, ev: StateView) -> np.ndarray:
        return ev.kinematics(self.link.tree).R[self.link.index] @ self.R_link

    def angular_velocity(self, ev: StateView) -> np.ndarray:
        return ev.kinematics(self.link.tree).angular_velocity(self.link)

    def angular_jacobian(self, ev: StateView) -> tuple[np.ndarray, np.ndarray]:
        cols, block = ev.kinematics(self.link.tree).angular_jacobian(self.link)
        return cols + ev.offset(self.link.tree), block

    def angular_hessian(self, ev: StateView, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(columns (k,), ∂(J_ωᵀg)/∂q (k, k)) for a constant world vector g (3,): the stiffness a world moment g [N·m]
        on the frame adds to the joint rows (:meth:`~flexbody.rigid.Kinematics.angular_hessian`)."""
        return ev.columns(self.link.tree), ev.kinematics(self.link.tree).angular_hessian(self.link, g)

    def angular_velocity_jacobian(self, ev: StateView) -> tuple[np.ndarray, np.ndarray]:
        """(columns (k,), ∂ω/∂q (3, k)) at fixed v (:meth:`~flexbody.rigid.Kinematics.frame_motion_derivatives`)."""
        kin, tree = ev.kinematics(self.link.tree), self.link.tree
        return ev.columns(tree), kin.frame_motion_derivatives(self.link, self.offset, np.zeros(tree.n_dofs))[0][3:]

    def angular_bias(self, ev: StateView) -> np.ndarray:

        return ev.kinematics(self.link.tree).angular_bias_acceleration(self.link)
