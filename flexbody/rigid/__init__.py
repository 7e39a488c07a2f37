"""Rigid kinematic trees in relative joint coordinates [DE-2]: joints, links, the compiled recursive
algorithms (kinematics, CRBA, RNEA), the whole-tree algorithms on an explicit workspace (:class:`TreeData`
with :func:`mass_matrix`, :func:`inverse_dynamics`, :func:`nonlinear_effects`, :func:`forward_dynamics`, as
Pinocchio's ``Data``), and the anchors on links and the ground that constraints and tasks attach to;
robots from URDF files (:func:`load_urdf`).

May import: errors.
"""

from .anchors import Anchor, FrameAnchor, Ground, LinkFrame, LinkPoint
from .joints import Fixed, FreeFlyer, Planar, Prismatic, Revolute, Spherical, Universal
from .link import Link
from .tree import Kinematics, RigidTree
from .tree_data import TreeData, forward_dynamics, inverse_dynamics, mass_matrix, nonlinear_effects
from .urdf import JointLimits, VisualMesh, load_urdf

__all__ = [
    "RigidTree",
    "Link",
    "Kinematics",
    "TreeData",
    "mass_matrix",
    "inverse_dynamics",
    "nonlinear_effects",
    "forward_dynamics",
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
