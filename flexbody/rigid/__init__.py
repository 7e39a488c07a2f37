"""Rigid kinematic trees in relative joint coordinates [DE-2]: joints, links, the compiled recursive
algorithms (kinematics, CRBA, RNEA), and the anchors on links and the ground that constraints and tasks
attach to; robots from URDF files (:func:`load_urdf`).

May import: errors.
"""

from .anchors import Anchor, FrameAnchor, Ground, LinkFrame, LinkPoint
from .joints import Fixed, FreeFlyer, Planar, Prismatic, Revolute, Spherical, Universal
from .link import Link
from .tree import Kinematics, RigidTree
from .urdf import JointLimits, VisualMesh, load_urdf

__all__ = [
    "RigidTree",
    "Link",
    "Kinematics",
    "Revolute",
    "Prismatic",
    "Fixed",
    "Spherical",
    "FreeFlyer",
    "Universal",
    "Planar",
    "Anchor",
    "FrameAnchor",
    "Ground",
    "LinkPoint",
    "LinkFrame",
    "load_urdf",
    "JointLimits",
    "VisualMesh",
]
