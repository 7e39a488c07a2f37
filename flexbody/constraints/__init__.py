"""Holonomic constraints written once on anchors [DE-3, DE-112]: the constraint base and its rows,
point/frame closures, joint couplings and drivers, surfaces and contact on them, node anchors and node
attachments (fix, attach to a link, tie), and ``Fix`` of prescribed nodal positions; and the force
elements written on the same anchors: springs and dampers, bushings, user generalized forces; and
velocity-level (Pfaffian) rows: knife edges, rolling discs, user rows.

May import: errors, fem, rigid.
"""

from .attachments import AttachNodes, FixNodes, TieNodes, pin
from .base import Constraint, ConstraintRows, Fix
from .body_surface import BodySurface
from .bushing import Bushing
from .closures import Distance, Hinge, OnSurface, PointToPoint, Weld
from .compliant_contact import CompliantContact
from .contact_shapes import box_contacts, capsule_contacts, cylinder_contacts, node_contacts, sphere_contact
from .couplings import FunctionCoupling, Gear, JointDriver, LinearCoupling, PolynomialCoupling
from .force_elements import ForceElement, ForcePiece, GeneralizedForce
from .mesh_surface import TriangleMesh
from .nodes import Node, nearest_node
from .pfaffian import KnifeEdge, PfaffianRows, RollingDisc
from .springs import JointSpringDamper, SpringDamper
from .surfaces import Box, Cylinder, ImplicitSurface, Plane, Sphere, Surface
from .unilateral_contact import Contact

__all__ = [
    "Constraint",
    "ConstraintRows",
    "Fix",
    "AttachNodes",
    "FixNodes",
    "TieNodes",
    "pin",
    "Distance",
    "Hinge",
    "OnSurface",
    "PointToPoint",
    "Weld",
    "FunctionCoupling",
    "Gear",
    "JointDriver",
    "LinearCoupling",
    "PolynomialCoupling",
    "Node",
    "nearest_node",
    "Box",
    "TriangleMesh",
    "BodySurface",
    "Cylinder",
    "ImplicitSurface",
    "Plane",
    "Sphere",
    "Surface",
    "ForceElement",
    "ForcePiece",
    "GeneralizedForce",
    "SpringDamper",
    "CompliantContact",
    "Contact",
    "sphere_contact",
    "box_contacts",
    "capsule_contacts",
    "cylinder_contacts",
    "node_contacts",
    "JointSpringDamper",
    "Bushing",
    "KnifeEdge",
    "RollingDisc",
    "PfaffianRows",
]
