"""Kinematics: the kinematic quantities of every link of a tree at one state (q, v), computed once and reused —
poses, motion subspaces, spatial velocities and bias accelerations (:func:`flexbody.rigid.algorithms.kinematics`),
and what is built on them: points' and frames' positions, Jacobians and bias accelerations, the point and angular
Hessians (:mod:`flexbody.rigid.point_hessian`) and the derivatives of frames' accelerations
(:mod:`flexbody.rigid.acceleration_derivatives`). World axes, at the origin, linear part first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from . import algorithms as alg
from .acceleration_derivatives import frame_motion_derivatives
from .point_hessian import angular_hessian, point_hessian, point_velocity_jacobian

if TYPE_CHECKING:
    from .link import Link

__all__ = ["Kinematics"]

_ORIGIN_TUPLE = (0.0, 0.0, 0.0)
_ORIGIN = np.zeros(3)
"""The link frame's own origin: the default offset of :meth:`Kinematics.frame_terms`, as a tuple and as the array the
kernel takes (made once, never written; writeable as the offsets callers give, so that the kernel has one
compiled variant)."""


class Kinematics:
    """Kinematic quantities of every link of a tree at one state (q, v); computed once, reused.

    Attributes
    ----------
    R : (n_links, 3, 3) link rotations; p : (n_links, 3) link origins [m];
    S : (n_links, 6) joint motion subspaces; vel : (n_links, 6) spatial velocities;
    acc : (n_links, 6) velocity-product (bias) spatial accelerations — all world axes, at the origin,
    linear part first (see :mod:`flexbody.rigid.algorithms`).
    """

    def __init__(self, tree: Any, q: np.ndarray, v: np.ndarray):
        """The kinematics of the :class:`~flexbody.RigidTree` ``tree`` at (q, v) (n,), made by ``tree.kinematics``."""
        self.tree, self.q, self.v = tree, q, v
        self._a = a = tree.arrays()
        n = len(a["parent"])
        self.R, self.p = np.empty((n, 3, 3)), np.empty((n, 3))
        self.S, self.vel, self.acc = np.empty((n, 6)), np.empty((n, 6)), np.empty((n, 6))
        alg.kinematics(
            a["parent"],
            a["joint_type"],
            a["axis"],
            a["R_placement"],
            a["p_placement"],
            a["dof"],
            q,
            v,
            self.R,
            self.p,
            self.S,
            self.vel,
            self.acc,
        )
        self._inertias: np.ndarray | None = None

    def _world_inertias(self) -> np.ndarray:
        if self._inertias is None:
            self._inertias = np.empty((len(self.p), 6, 6))
            alg.world_inertias(self.R, self.p, self._a["mass"], self._a["com"], self._a["inertia"], self._inertias)
        return self._inertias

    def mass_matrix(self) -> np.ndarray:
        """M(q) (n, n) by the composite-rigid-body algorithm."""
        n = self.tree.n_dofs
        M = np.empty((n, n))
        inertias = self._world_inertias()
        alg.mass_matrix(self._a["parent"], self._a["dof"], self.S, inertias, n, np.empty_like(inertias), M)
        return M

    def inverse_dynamics(self, a=None, *, gravity: bool = True, velocity: bool = True) -> np.ndarray:
        """RNEA: M a + b (if ``velocity``) + g (if ``gravity``); a defaults to zero."""
        n = self.tree.n_dofs
        a = np.zeros(n) if a is None else a
        vel = self.vel if velocity else np.zeros_like(self.vel)
        acc = self.acc if velocity else np.zeros_like(self.acc)
        g = self.tree.gravity if gravity else np.zeros(3)
        tau = np.zeros(n)
        alg.inverse_dynamics(
            self._a["parent"],
            self._a["dof"],
            self.S,
            vel,
            acc,
            self._world_inertias(),
            a,
            g,
            np.empty((len(self.p), 6)),
            tau,
        )
        return tau

    # ------------------------------------------------------------------ points and frames
    def points(self, link_index: np.ndarray, offsets: np.ndarray):
        """Batch evaluation of k points: positions (k, 3), velocities (k, 3), Jacobians (k, 3, n) and
        bias accelerations J̇q̇ (k, 3) — world axes, all coordinates of the tree as columns."""
        k = len(link_index)
        X, Xd, B = np.empty((k, 3)), np.empty((k, 3)), np.empty((k, 3))
        J = np.empty((k, 3, self.tree.n_dofs))
        alg.point_terms(
            self.R, self.p, self.S, self.vel, self.acc, self._a["support_matrix"], link_index, offsets, X, Xd, J, B
        )
        return X, Xd, J, B

    def _point(self, link: Link, offset):
        return self.points(np.array([link.index]), np.asarray(offset, dtype=float).reshape(1, 3))

    def point_position(self, link: Link, offset) -> np.ndarray:
        """World position (3,) [m] of the point at ``offset`` (link frame) on ``link``."""
        i = link.index
        return self.p[i] + self.R[i] @ offset

    def point_velocity(self, link: Link, offset) -> np.ndarray:
        """World velocity (3,) [m/s] of the point."""
        return self._point(link, offset)[1][0]

    def point_jacobian(self, link: Link, offset) -> tuple[np.ndarray, np.ndarray]:
        """Columns (n,) of q and the (3, n) world velocity Jacobian of the point on them."""
        return self._a["all_dofs"], self._point(link, offset)[2][0]

    def point_bias_acceleration(self, link: Link, offset) -> np.ndarray:
        """J̇q̇ (3,) [m/s²]: classical acceleration of the point when q̈ = 0 (no gravity)."""
        return self._point(link, offset)[3][0]

    def point_hessian(self, link: Link, offset, w) -> np.ndarray:
        """∂²(wᵀx)/∂q² = ∂(Jᵀw)/∂q (n, n) of the point at ``offset`` (link frame) on ``link`` for a constant world
        vector w (3,) [N: the stiffness a world force w at the point adds to the joint rows] (:mod:`point_hessian`)."""
        a, n = self._a, self.tree.n_dofs
        H = np.zeros((n, n))
        x = self.point_position(link, np.asarray(offset, dtype=float))
        w = np.asarray(w, dtype=float).reshape(3)
        point_hessian(
            a["parent"], a["joint_type"], a["dof"], a["axis"], self.R, self.p, self.S, self.q, link.index, x, w, H
        )
        return H

    def point_velocity_jacobian(self, link: Link, offset) -> np.ndarray:
        """∂(J(q)v)/∂q (3, n) at fixed v of the point at ``offset`` on ``link`` (:mod:`point_hessian`)."""
        a, N = self._a, np.zeros((3, self.tree.n_dofs))
        x = self.point_position(link, np.asarray(offset, dtype=float))
        args = (a["parent"], a["joint_type"], a["dof"], a["axis"], self.R, self.p, self.S, self.q, self.v)
        point_velocity_jacobian(*args, link.index, x, N)
        return N

    def angular_hessian(self, link: Link, g) -> np.ndarray:
        """∂(J_ωᵀg)/∂q (n, n) of ``link``'s angular-velocity Jacobian for a constant world vector g (3,)."""
        a, H = self._a, np.zeros((self.tree.n_dofs, self.tree.n_dofs))
        g = np.asarray(g, dtype=float).reshape(3)
        angular_hessian(a["parent"], a["joint_type"], a["dof"], a["axis"], self.R, self.S, self.q, link.index, g, H)
        return H

    def frame_motion_derivatives(self, link: Link, offset, a) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(∂[ẋ; ω]/∂q, ∂[ẍ; α]/∂q, ∂[ẍ; α]/∂q̇), each (6, n), of the frame at ``offset`` (link frame) on ``link`` at
        this state and joint accelerations a (n,): ẋ, ẍ the velocity [m/s] and classical acceleration [m/s²] of its
        origin, ω, α the link's angular velocity [rad/s] and acceleration [rad/s²], world axes; ∂[ẋ; ω]/∂q̇ and
        ∂[ẍ; α]/∂q̈ are the frame Jacobian (:mod:`flexbody.rigid.acceleration_derivatives`)."""
        arrays, n = self._a, self.tree.n_dofs
        x = self.point_position(link, np.asarray(offset, dtype=float))
        out = np.empty((6, n)), np.empty((6, n)), np.empty((6, n))
        args = (arrays["parent"], arrays["joint_type"], arrays["dof"], arrays["axis"], self.R, self.p, self.S)
        accelerations = np.ascontiguousarray(a, dtype=float).reshape(n)
        frame_motion_derivatives(*args, self.vel, self.acc, self.q, self.v, accelerations, link.index, x, *out)
        return out

    def angular_velocity(self, link: Link) -> np.ndarray:
        return self.vel[link.index, 3:]

    def angular_jacobian(self, link: Link) -> tuple[np.ndarray, np.ndarray]:
        """Columns (k,) and block (3, k) of the link's angular-velocity Jacobian (world axes)."""
        i = link.index
        return self._a["support_dofs"][i], self.S[self._a["support_links"][i], 3:].T

    def angular_bias_acceleration(self, link: Link) -> np.ndarray:
        """J̇_ω q̇ (3,) [rad/s²]."""
        return self.acc[link.index, 3:]

    def frame_pose(self, link: Link, offset=(0.0, 0.0, 0.0), rotation=None) -> tuple[np.ndarray, np.ndarray]:
        """World rotation (3, 3) and origin (3,) [m] of the frame (``offset``, ``rotation``) on ``link``."""
        i = link.index
        R = self.R[i] if rotation is None else self.R[i] @ rotation
        return R, self.point_position(link, np.asarray(offset, dtype=float))

    def frame_jacobian(self, link: Link, offset=(0.0, 0.0, 0.0)) -> np.ndarray:
        """Dense (6, n) Jacobian of a frame on ``link``: [velocity of its origin; angular velocity], world
        axes (Pinocchio's LOCAL_WORLD_ALIGNED)."""
        return self.frame_terms(link, offset)[0]

    def frame_bias_acceleration(self, link: Link, offset=(0.0, 0.0, 0.0)) -> np.ndarray:
        """J̇v (6,) of a frame: classical acceleration of its origin and angular acceleration at v̇ = 0."""
        return self.frame_terms(link, offset)[1]

    def frame_terms(self, link: Link, offset=_ORIGIN_TUPLE) -> tuple[np.ndarray, np.ndarray]:
        """(J (6, n), J̇v (6,)) of a frame on ``link`` (:meth:`frame_jacobian`, :meth:`frame_bias_acceleration`)
        from one evaluation of its origin."""
        J, bias = np.empty((6, self.tree.n_dofs)), np.empty(6)
        offset = _ORIGIN if offset is _ORIGIN_TUPLE else np.asarray(offset, dtype=float)
        alg.frame_terms(
            self.R, self.p, self.S, self.vel, self.acc, self._a["support_matrix"], link.index, offset, J, bias
        )
        return J, bias

    def dense(self, cols: np.ndarray, block: np.ndarray) -> np.ndarray:
        """Scatter a (r, k) Jacobian block on ``cols`` into a dense (r, n) matrix."""
        out = np.zeros((block.shape[0], self.tree.n_dofs))
        out[:, cols] = block
        return out

    # ------------------------------------------------------------------ energies
    def kinetic_energy(self) -> float:
        """½ vᵀ M v [J] (from the spatial momenta, no M needed)."""
        I = self._world_inertias()
        return 0.5 * float(np.einsum("ia,iab,ib->", self.vel, I, self.vel))

    def potential_energy(self) -> float:
        """Gravitational potential −Σ m g·c [J] (zero at the world origin)."""
        c = self.p + np.einsum("iab,ib->ia", self.R, self._a["com"])
        return -float(self._a["mass"] @ (c @ self.tree.gravity))
