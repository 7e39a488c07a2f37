"""Independent oracle for flexbody.rigid: the same kinematic tree rebuilt as a ``pinocchio.Model``.

Only the *description* of the flexbody tree is read (link names, parents, joint types and axes,
placements, masses, centres of mass, inertias, gravity); every kinematic and dynamic quantity is then
computed by Pinocchio's own algorithms (CRBA, RNEA, frame Jacobians, frame accelerations).

Mapping
-------
* A flexbody link with a Revolute / Prismatic joint becomes a Pinocchio ``JointModelRevoluteUnaligned`` /
  ``JointModelPrismaticUnaligned`` with the same (unit) axis. Its joint placement relative to the parent
  Pinocchio joint is ``M_parent_link · SE3(rotation, origin)``, where ``M_parent_link`` is the pose of the
  parent *link* frame in the parent's Pinocchio joint frame (identity for a moving link; the accumulated
  fixed placements for a link attached by a Fixed joint). The link frame coincides with the joint frame.
* A flexbody link with a Fixed joint adds no Pinocchio joint: it rides on its parent's Pinocchio joint
  (joint 0 = universe for a fixed link on the ground) with link pose ``M_parent_link · SE3(rotation, origin)``
  in that joint frame, and its inertia is appended to that joint at that pose.
* Each link body is appended with ``model.appendBodyToJoint(joint, Inertia(m, com, I_com), M_link)`` —
  Pinocchio itself moves the inertia into the joint frame.
* ``model.gravity.linear = tree.gravity``.

Ordering. Pinocchio requires joints to be added in *depth-first* order: its CRBA writes M blocks
``M[idx_v, idx_v : idx_v + nvSubtree]`` and so assumes every subtree occupies a contiguous range of v
(pinocchio issue #1897; with another topological order ``crba`` silently disagrees with ``rnea``, while
``model.check(data)`` reports False). flexbody only requires a topological order (parent before child),
e.g. links attached to the base again after a branch. So the oracle visits flexbody's links depth-first
(children in flexbody order) and creates the Pinocchio joints in that order; ``perm[k]`` is the flexbody
coordinate of Pinocchio's k-th coordinate. :func:`to_pinocchio` asserts
``idx_q == idx_v == position of link.coordinate in perm`` and ``model.check(data)``; when flexbody's order
is already depth-first, ``perm`` is the identity. :class:`PinocchioOracle` takes and returns everything in
flexbody's coordinate order.

Conventions of the returned quantities (matching flexbody's documented ones): world axes
(``pin.LOCAL_WORLD_ALIGNED``), τ = M a + b + g, b without gravity, classical (not spatial) point
acceleration for J̇q̇.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin


@dataclass
class LinkMap:
    """Where a flexbody link lives in the Pinocchio model."""

    joint_id: int  # Pinocchio joint the link rides on (0 = universe)
    placement: pin.SE3  # pose of the link frame in that joint's frame
    frame_id: int  # an OP_FRAME added at the link frame


def depth_first(tree) -> list:
    """flexbody links in depth-first pre-order (roots and children in flexbody's link order)."""
    children: dict = {link.name: [] for link in tree.links}
    roots = []
    for link in tree.links:
        (roots if link.parent is None else children[link.parent.name]).append(link)
    order, stack = [], list(reversed(roots))
    while stack:
        link = stack.pop()
        order.append(link)
        stack.extend(reversed(children[link.name]))
    assert len(order) == len(tree.links)
    return order


def to_pinocchio(tree) -> tuple[pin.Model, dict[str, LinkMap], np.ndarray]:
    """Build a ``pinocchio.Model`` equivalent to the flexbody ``tree``.

    Returns ``(model, frames, perm)`` with ``frames[link_name] -> LinkMap`` and ``perm`` (n,) the flexbody
    coordinate of each Pinocchio coordinate (``q_pin = q_flexbody[perm]``).
    """
    model = pin.Model()
    model.name = tree.name
    model.gravity.linear = np.array(tree.gravity, dtype=float)
    frames: dict[str, LinkMap] = {}
    perm = []
    for link in depth_first(tree):
        kind = type(link.joint).__name__
        if link.parent is None:
            parent_joint, parent_pose = 0, pin.SE3.Identity()
        else:
            pm = frames[link.parent.name]
            parent_joint, parent_pose = pm.joint_id, pm.placement
        placement = pin.SE3(
            np.array(link.placement_rotation, dtype=float), np.array(link.placement_origin, dtype=float)
        )
        joint_pose = parent_pose * placement  # joint frame in the parent joint frame
        if kind == "Fixed":
            assert link.coordinate is None
            joint_id, link_pose = parent_joint, joint_pose
        else:
            axis = np.array(link.joint.axis, dtype=float)
            if kind == "Revolute":
                jmodel = pin.JointModelRevoluteUnaligned(axis)
            elif kind == "Prismatic":
                jmodel = pin.JointModelPrismaticUnaligned(axis)
            else:  # pragma: no cover - the oracle knows only these three joints
                raise TypeError(f"unknown joint type {kind}")
            joint_id = model.addJoint(parent_joint, jmodel, joint_pose, f"joint_{link.name}")
            link_pose = pin.SE3.Identity()
            assert model.idx_qs[joint_id] == model.idx_vs[joint_id] == len(perm), (link.name, model.idx_qs[joint_id])
            assert model.nqs[joint_id] == 1 and model.nvs[joint_id] == 1
            perm.append(link.coordinate)
        inertia = pin.Inertia(float(link.mass), np.array(link.com, dtype=float), np.array(link.inertia, dtype=float))
        model.appendBodyToJoint(joint_id, inertia, link_pose)
        frame_id = model.addFrame(pin.Frame(f"link_{link.name}", joint_id, link_pose, pin.FrameType.OP_FRAME), False)
        frames[link.name] = LinkMap(joint_id, link_pose, frame_id)
    perm = np.array(perm, dtype=np.int64)
    assert model.nq == model.nv == tree.n_dofs, (model.nq, tree.n_dofs)
    assert sorted(perm.tolist()) == list(range(tree.n_dofs))
    assert model.check(model.createData()), "pinocchio model inconsistent (joints not depth-first?)"
    return model, frames, perm


class PinocchioOracle:
    """Evaluate Pinocchio's quantities for a flexbody tree; inputs and outputs in flexbody's coordinate order."""

    def __init__(self, tree):
        self.tree = tree
        self.model, self.frames, self.perm = to_pinocchio(tree)
        self.data = self.model.createData()
        self.model0 = self.model.copy()  # same model without gravity, for b
        self.model0.gravity.linear = np.zeros(3)
        self.data0 = self.model0.createData()

    # ---------------------------------------------------------------- ordering
    def to_pin(self, x) -> np.ndarray:
        """flexbody-ordered (n,) vector → Pinocchio order."""
        x = np.asarray(x, dtype=float)
        assert x.shape == (self.model.nv,)
        return x[self.perm].copy()

    def from_pin(self, x) -> np.ndarray:
        """Pinocchio-ordered vector (n,) or matrix (..., n) columns → flexbody order."""
        x = np.asarray(x, dtype=float)
        out = np.empty_like(x)
        out[..., self.perm] = x
        return out

    # ---------------------------------------------------------------- joint space
    def mass_matrix(self, q) -> np.ndarray:
        M = pin.crba(self.model, self.data, self.to_pin(q)).copy()
        M = np.triu(M) + np.triu(M, 1).T  # crba fills the upper triangle only
        out = np.empty_like(M)
        out[np.ix_(self.perm, self.perm)] = M
        return out

    def gravity_force(self, q) -> np.ndarray:
        return self.from_pin(pin.computeGeneralizedGravity(self.model, self.data, self.to_pin(q)))

    def nonlinear_effects(self, q, v) -> np.ndarray:
        return self.from_pin(pin.nonLinearEffects(self.model, self.data, self.to_pin(q), self.to_pin(v)))

    def bias_force(self, q, v) -> np.ndarray:
        """Coriolis + centrifugal only: RNEA with a = 0 on the copy of the model with zero gravity."""
        return self.from_pin(pin.rnea(self.model0, self.data0, self.to_pin(q), self.to_pin(v), np.zeros(self.model.nv)))

    def inverse_dynamics(self, q, v, a) -> np.ndarray:
        return self.from_pin(pin.rnea(self.model, self.data, self.to_pin(q), self.to_pin(v), self.to_pin(a)))

    def forward_dynamics(self, q, v, tau) -> np.ndarray:
        return self.from_pin(pin.aba(self.model, self.data, self.to_pin(q), self.to_pin(v), self.to_pin(tau)))

    def kinetic_energy(self, q, v) -> float:
        return float(pin.computeKineticEnergy(self.model, self.data, self.to_pin(q), self.to_pin(v)))

    def potential_energy(self, q) -> float:
        """−Σ m g·c over all bodies. Pinocchio's computePotentialEnergy skips the universe (joint 0), so
        bodies fixed to the ground are added here from their (constant) world placement."""
        V = float(pin.computePotentialEnergy(self.model, self.data, self.to_pin(q)))
        I0 = self.model.inertias[0]
        return V - I0.mass * float(np.dot(self.model.gravity.linear, I0.lever))

    # ---------------------------------------------------------------- points and frames
    def _point_se3(self, link_name: str, offset) -> tuple[int, pin.SE3]:
        lm = self.frames[link_name]
        return lm.joint_id, lm.placement * pin.SE3(np.eye(3), np.asarray(offset, float))

    def link_pose(self, q, link_name: str) -> tuple[np.ndarray, np.ndarray]:
        """(R, p) of the link frame in the world."""
        pin.forwardKinematics(self.model, self.data, self.to_pin(q))
        pin.updateFramePlacements(self.model, self.data)
        oMf = self.data.oMf[self.frames[link_name].frame_id]
        return oMf.rotation.copy(), oMf.translation.copy()

    def frame_jacobian(self, q, link_name: str, offset=(0.0, 0.0, 0.0)) -> np.ndarray:
        """(6, n) Jacobian [linear velocity of the point; angular velocity], world axes (LOCAL_WORLD_ALIGNED)."""
        pin.computeJointJacobians(self.model, self.data, self.to_pin(q))
        joint_id, M = self._point_se3(link_name, offset)
        return self.from_pin(pin.getFrameJacobian(self.model, self.data, joint_id, M, pin.LOCAL_WORLD_ALIGNED))

    def point_jacobian(self, q, link_name: str, offset) -> np.ndarray:
        return self.frame_jacobian(q, link_name, offset)[:3]

    def angular_jacobian(self, q, link_name: str) -> np.ndarray:
        return self.frame_jacobian(q, link_name)[3:]

    def point_velocity(self, q, v, link_name: str, offset) -> np.ndarray:
        pin.forwardKinematics(self.model, self.data, self.to_pin(q), self.to_pin(v))
        joint_id, M = self._point_se3(link_name, offset)
        return pin.getFrameVelocity(self.model, self.data, joint_id, M, pin.LOCAL_WORLD_ALIGNED).linear.copy()

    def angular_velocity(self, q, v, link_name: str) -> np.ndarray:
        pin.forwardKinematics(self.model, self.data, self.to_pin(q), self.to_pin(v))
        joint_id, M = self._point_se3(link_name, (0.0, 0.0, 0.0))
        return pin.getFrameVelocity(self.model, self.data, joint_id, M, pin.LOCAL_WORLD_ALIGNED).angular.copy()

    def point_bias_acceleration(self, q, v, link_name: str, offset) -> np.ndarray:
        """Classical acceleration of the point at a = 0, no gravity: J̇q̇ (3,). Pinocchio's classical
        acceleration is the spatial one plus ω × v_point (checked against finite differences in the tests)."""
        pin.forwardKinematics(self.model, self.data, self.to_pin(q), self.to_pin(v), np.zeros(self.model.nv))
        joint_id, M = self._point_se3(link_name, offset)
        return pin.getFrameClassicalAcceleration(
            self.model, self.data, joint_id, M, pin.LOCAL_WORLD_ALIGNED
        ).linear.copy()

    def angular_bias_acceleration(self, q, v, link_name: str) -> np.ndarray:
        """J̇_ω q̇ (3,): angular acceleration at a = 0 (spatial and classical agree), world axes."""
        pin.forwardKinematics(self.model, self.data, self.to_pin(q), self.to_pin(v), np.zeros(self.model.nv))
        joint_id, M = self._point_se3(link_name, (0.0, 0.0, 0.0))
        return pin.getFrameAcceleration(self.model, self.data, joint_id, M, pin.LOCAL_WORLD_ALIGNED).angular.copy()
