"""Joints of a rigid kinematic tree: revolute, prismatic and fixed, each with one or no coordinate, and the
joints with several coordinates: spherical, free-flyer, universal and planar.

A joint connects a link to its parent. Its frame is placed in the parent link frame by a constant
transform (``placement``); the joint then rotates (revolute, q in rad) or translates (prismatic, q in m)
the child link frame about/along ``axis``, a unit vector expressed in the joint frame. At q = 0 the child
link frame coincides with the joint frame.

A joint with several coordinates is added as a chain of one-coordinate parts on massless links at the same
place (Featherstone's composite of single-degree-of-freedom joints), the last of which is the link itself:

- :class:`Universal` (two revolutes, the second axis turning with the first) and :class:`Planar` (two
  translations in the plane, then a rotation about its normal) are regular everywhere;
- :class:`Spherical` uses local exponential coordinates φ (3,), R_joint = exp([φ]×): its motion subspace
  is the body-axes columns of the right Jacobian J_r(φ), ω = R J_r(φ) φ̇ (three parts of code SPHERICAL,
  :func:`flexbody.rigid.algorithms.kinematics`). J_r is singular only at ‖φ‖ = 2π, and the integrators move
  φ to the other chart of the same rotation, φ − 2π φ/‖φ‖, whenever ‖φ‖ passes π
  (:mod:`flexbody.rigid.exponential_coordinates`), so no configuration is singular;
- :class:`FreeFlyer` is three translations along the joint frame's axes followed by a spherical joint:
  q = (position of the link frame in the joint frame [m], φ [rad]).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from ..errors import ModelError
from .algorithms import FIXED, PRISMATIC, REVOLUTE, SPHERICAL
from .exponential_coordinates import rotation_matrix, rotation_rates
from .link import checked_vector3


def _unit_axis(axis, kind: str) -> np.ndarray:
    a = np.asarray(axis, dtype=float).reshape(-1)
    if a.shape != (3,) or not np.all(np.isfinite(a)):
        raise ModelError(f"{kind} joint: axis must be 3 finite numbers, got {axis!r}")
    norm = np.linalg.norm(a)
    if norm < 1e-12:
        raise ModelError(f"{kind} joint: axis {axis!r} has zero length")
    return a / norm


@dataclass(frozen=True, init=False)
class Revolute:
    """Rotation about ``axis`` (joint frame) by q [rad]; its generalized force is a torque [N·m]."""

    axis: np.ndarray
    code = REVOLUTE
    n_dofs = 1
    unit = "rad"  # of q (and of a coupling or driver row on it)
    force_unit = "N·m"  # of the generalized force τ on q

    def __init__(self, axis: npt.ArrayLike = (0.0, 0.0, 1.0)):  # any (3,) array-like, kept as the unit ndarray
        object.__setattr__(self, "axis", _unit_axis(axis, "Revolute"))


@dataclass(frozen=True, init=False)
class Prismatic:
    """Translation along ``axis`` (joint frame) by q [m]; its generalized force is a force [N]."""

    axis: np.ndarray
    code = PRISMATIC
    n_dofs = 1
    unit = "m"
    force_unit = "N"

    def __init__(self, axis: npt.ArrayLike = (1.0, 0.0, 0.0)):  # any (3,) array-like, kept as the unit ndarray
        object.__setattr__(self, "axis", _unit_axis(axis, "Prismatic"))


@dataclass(frozen=True)
class Fixed:
    """Rigid connection (no coordinate)."""

    code = FIXED
    n_dofs = 0

    @property
    def axis(self) -> np.ndarray:
        """Zero (3,): a fixed joint has no motion axis."""
        return np.zeros(3)


@dataclass(frozen=True)
class SphericalColumn:
    """One of the three parts of a spherical joint: the rotation-vector coordinate φ_k (``column`` k) [rad]."""

    column: int
    code = SPHERICAL
    n_dofs = 1
    unit = "rad"
    force_unit = "N·m"

    @property
    def axis(self) -> np.ndarray:
        return np.eye(3)[self.column]


def rotation_vector(quaternion: npt.ArrayLike | None = None, rotation: npt.ArrayLike | None = None) -> np.ndarray:
    """The rotation vector φ (3,) [rad], ‖φ‖ ≤ π, of a unit quaternion (x, y, z, w) — Pinocchio's and scipy's
    order — or of a rotation matrix (3, 3); the identity when neither is given.

    Raises
    ------
    ModelError
        A quaternion that is not of unit length (to 1e-9) or not finite; a matrix that is not a rotation.
    """
    from scipy.spatial.transform import Rotation

    if quaternion is not None and rotation is not None:
        raise ModelError("rotation_vector: give a quaternion or a rotation matrix, not both")
    if quaternion is not None:
        quat = np.asarray(quaternion, dtype=float).reshape(-1)
        if quat.shape != (4,) or not np.all(np.isfinite(quat)) or abs(np.linalg.norm(quat) - 1.0) > 1e-9:
            raise ModelError(
                f"rotation_vector: the quaternion (x, y, z, w) {quaternion!r} is not a finite unit "
                f"quaternion (its norm is {np.linalg.norm(quat) if quat.shape == (4,) else 'undefined'})"
            )
        return Rotation.from_quat(quat).as_rotvec()
    if rotation is not None:
        R = np.asarray(rotation, dtype=float)
        if (
            R.shape != (3, 3)
            or not np.all(np.isfinite(R))
            or np.abs(R @ R.T - np.eye(3)).max() > 1e-9
            or np.linalg.det(R) < 0
        ):
            raise ModelError(f"rotation_vector: {rotation!r} is not a rotation matrix (orthonormal, det +1)")
        return Rotation.from_matrix(R).as_rotvec()
    return np.zeros(3)


def _frame(frame: str, who: str) -> str:
    """``frame`` when it is "parent" or "body", else a ModelError naming the choices."""
    if frame not in ("parent", "body"):
        raise ModelError(
            f"{who}: frame must be 'parent' (the joint frame's axes) or 'body' (the link's), got {frame!r}"
        )
    return frame


@dataclass(frozen=True)
class Spherical:
    """A ball joint: three local exponential coordinates φ [rad] with R = exp([φ]×) (module docstring)."""

    n_dofs = 3
    suffixes = ("rx", "ry", "rz")

    def parts(self) -> tuple:
        """The three one-coordinate parts (:class:`SphericalColumn` 0, 1, 2: φ_x, φ_y, φ_z [rad]) the joint is
        added as."""
        return tuple(SphericalColumn(k) for k in range(3))

    @staticmethod
    def coordinates(quaternion: npt.ArrayLike | None = None, rotation: npt.ArrayLike | None = None) -> np.ndarray:
        """φ (3,) [rad] of an orientation given as a unit quaternion (x, y, z, w) or a rotation matrix."""
        return rotation_vector(quaternion, rotation)

    @staticmethod
    def velocities(phi: npt.ArrayLike, angular_velocity: npt.ArrayLike, frame: str = "parent") -> np.ndarray:
        """φ̇ (3,) [rad/s], the joint's velocities, at φ (3,) [rad] for the link's angular velocity ω (3,) [rad/s]
        relative to the joint frame, given in the joint frame's axes (``frame="parent"``) or in the link's own
        axes (``"body"``): φ̇ = J_l(φ)⁻¹ω or J_r(φ)⁻¹ω (:mod:`flexbody.rigid.exponential_coordinates`). The rates
        of a rotation vector are not an angular velocity (they agree only at φ = 0)."""
        return rotation_rates(
            checked_vector3(phi, "Spherical.velocities: phi"),
            checked_vector3(angular_velocity, "Spherical.velocities: angular_velocity"),
            _frame(frame, "Spherical.velocities"),
        )


@dataclass(frozen=True)
class FreeFlyer:
    """A floating base: the link frame's origin in the joint frame (x, y, z [m]) and its rotation vector
    φ [rad] (R = exp([φ]×)); six coordinates."""

    n_dofs = 6
    suffixes = ("tx", "ty", "tz", "rx", "ry", "rz")

    def parts(self) -> tuple:
        """The six one-coordinate parts the joint is added as: :class:`Prismatic` along the joint frame's x, y,
        z [m], then the three parts of a :class:`Spherical` joint [rad]."""
        return tuple(Prismatic(np.eye(3)[k]) for k in range(3)) + Spherical().parts()

    @staticmethod
    def coordinates(
        position: npt.ArrayLike = (0.0, 0.0, 0.0),
        quaternion: npt.ArrayLike | None = None,
        rotation: npt.ArrayLike | None = None,
    ) -> np.ndarray:
        """q (6,) of a pose: ``position`` (3,) [m] and orientation (unit quaternion (x, y, z, w) or rotation
        matrix) of the link frame in the joint frame; ModelError for a non-unit quaternion."""
        p = np.asarray(position, dtype=float).reshape(-1)
        if p.shape != (3,) or not np.all(np.isfinite(p)):
            raise ModelError(f"FreeFlyer.coordinates: position must be 3 finite numbers, got {position!r}")
        return np.concatenate([p, rotation_vector(quaternion, rotation)])

    @staticmethod
    def velocities(
        q: npt.ArrayLike,
        linear_velocity: npt.ArrayLike = (0.0, 0.0, 0.0),
        angular_velocity: npt.ArrayLike = (0.0, 0.0, 0.0),
        frame: str = "parent",
    ) -> np.ndarray:
        """v (6,), the joint's velocities (ṗ [m/s], φ̇ [rad/s]), at q (6,) = (p, φ) for the velocity of the link
        frame's origin and the link's angular velocity [rad/s] relative to the joint frame, both given in the
        joint frame's axes (``frame="parent"``, the world's for a floating base on the ground) or in the link's
        own axes (``"body"``, Pinocchio's free-flyer velocity (Rᵀṗ, ω_body)): ṗ = v or R v, φ̇ as
        :meth:`Spherical.velocities`."""
        who = "FreeFlyer.velocities"
        q = np.asarray(q, dtype=float).reshape(-1)
        if q.shape != (6,) or not np.all(np.isfinite(q)):
            raise ModelError(f"{who}: q must be 6 finite numbers (position, rotation vector), got {q!r}")
        frame = _frame(frame, who)
        linear = checked_vector3(linear_velocity, f"{who}: linear_velocity")
        if frame == "body":
            linear = rotation_matrix(q[3:]) @ linear
        return np.concatenate(
            [linear, rotation_rates(q[3:], checked_vector3(angular_velocity, f"{who}: angular_velocity"), frame)]
        )


@dataclass(frozen=True)
class Universal:
    """A Cardan joint: rotation q₁ about ``axis1`` (joint frame), then q₂ about ``axis2`` of the frame the
    first rotation turned [rad]; the axes must not be parallel."""

    axis1: np.ndarray = field(default_factory=lambda: np.array([1.0, 0.0, 0.0]))
    axis2: np.ndarray = field(default_factory=lambda: np.array([0.0, 1.0, 0.0]))
    n_dofs = 2
    suffixes = ("u1", "u2")

    def __post_init__(self):
        a1, a2 = _unit_axis(self.axis1, "Universal"), _unit_axis(self.axis2, "Universal")
        if np.linalg.norm(np.cross(a1, a2)) < 1e-6:
            raise ModelError(f"Universal joint: axes {self.axis1!r} and {self.axis2!r} are parallel")
        object.__setattr__(self, "axis1", a1)
        object.__setattr__(self, "axis2", a2)

    def parts(self) -> tuple:
        """The two one-coordinate parts the joint is added as: :class:`Revolute` about ``axis1``, then about
        ``axis2`` [rad]."""
        return Revolute(self.axis1), Revolute(self.axis2)


@dataclass(frozen=True)
class Planar:
    """Motion in the plane normal to ``normal`` (joint frame): translations along two in-plane axes t₁, t₂
    [m] (t₁ = normal × e, e the basis vector least aligned with the normal; t₂ = normal × t₁), then a
    rotation about the normal [rad]."""

    normal: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, 1.0]))
    n_dofs = 3
    suffixes = ("t1", "t2", "r")

    def __post_init__(self):
        object.__setattr__(self, "normal", _unit_axis(self.normal, "Planar"))

    def in_plane_axes(self) -> tuple[np.ndarray, np.ndarray]:
        """The unit in-plane axes (t₁, t₂), each (3,) in the joint frame: t₁ = normal × e (normalised), e the
        basis vector least aligned with the normal, and t₂ = normal × t₁."""
        n = self.normal
        t1 = np.cross(n, np.eye(3)[int(np.argmin(np.abs(n)))])
        t1 /= np.linalg.norm(t1)
        return t1, np.cross(n, t1)

    def parts(self) -> tuple:
        """The three one-coordinate parts the joint is added as: :class:`Prismatic` along t₁ and t₂ [m]
        (:meth:`in_plane_axes`), then :class:`Revolute` about the normal [rad]."""
        t1, t2 = self.in_plane_axes()
        return Prismatic(t1), Prismatic(t2), Revolute(self.normal)


COMPOUND_JOINTS = (Spherical, FreeFlyer, Universal, Planar)
"""Joints with several coordinates, added as chains of one-coordinate parts."""
