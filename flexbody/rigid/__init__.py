"""Rigid kinematic trees in relative joint coordinates: joints, links, recursive dynamics [DE-2]."""
from .joints import Fixed, Prismatic, Revolute
from .tree import Kinematics, Link, RigidTree

__all__ = ["RigidTree", "Link", "Kinematics", "Revolute", "Prismatic", "Fixed"]
