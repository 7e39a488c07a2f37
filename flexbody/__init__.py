"""flexbody: flexible/rigid multibody systems with ANCF hexahedral solids.

Public API (see docs/): meshes (:mod:`flexbody.mesh`), materials, flexible bodies, loads, rigid trees,
anchors and holonomic constraints, systems, constrained dynamics (:mod:`flexbody.dynamics`), rank
diagnostics (:mod:`flexbody.analysis`), simulation, task-level control (:mod:`flexbody.control`), plots
(:mod:`flexbody.plots`), static equilibrium and export.
"""
from . import analysis, control, dynamics, io, mechanisms, mesh, plots, progress, tasks, view
from .anchors import Ground
from .assembled import AssembledSystem, State
from .closures import Distance, Hinge, OnSurface, PointToPoint, Weld
from .constraints import Fix
from .couplings import FunctionCoupling, Gear, JointDriver, LinearCoupling, PolynomialCoupling
from .errors import (ActuationError, ConstraintError, ConvergenceError, ElementError, FlexbodyError, LoadError, MaterialError,
                     MeshError, ModelError, StateError)
from .rigid import Fixed, Prismatic, Revolute, RigidTree
from .surfaces import Cylinder, ImplicitSurface, Plane, Sphere
from .tasks import (JointTask, OrientationTask, PlanarOrientationTask, PointTask, StackedTask, operational_space,
                    operational_space_at)
from .flexible import FlexibleBody
from .attachments import AttachNodes, FixNodes, TieNodes, pin
from .implicit import GeneralizedAlpha
from .nodes import Node, nearest_node
from .integrators import RK4, Adaptive, Baumgarte, PositionCorrection, assemble_configuration, project_velocity, resume, simulate
from .loads import BodyForce, Gravity, NodalForce, Pressure, SurfaceMoment, SurfaceTraction
from .materials import MooneyRivlin, NeoHookean, StVenantKirchhoff
from .mesh import HexMesh
from .results import Results
from .statics import NewtonSettings, solve_static
from .system import System

__version__ = "0.1.0"

__all__ = [
    "mesh", "HexMesh", "StVenantKirchhoff", "NeoHookean", "MooneyRivlin", "FlexibleBody", "Fix",
    "BodyForce", "Gravity", "NodalForce", "SurfaceTraction", "SurfaceMoment", "Pressure", "System",
    "solve_static", "NewtonSettings", "Results", "FlexbodyError", "MeshError", "ElementError", "MaterialError",
    "LoadError", "ConstraintError", "ConvergenceError", "StateError", "ModelError",
    "RigidTree", "Revolute", "Prismatic", "Fixed", "Ground", "AssembledSystem", "State",
    "PointToPoint", "Distance", "Weld", "Hinge", "OnSurface", "Plane", "Sphere", "Cylinder", "ImplicitSurface",
    "LinearCoupling", "Gear", "FunctionCoupling", "PolynomialCoupling", "JointDriver",
    "dynamics", "analysis", "mechanisms", "simulate", "RK4", "Adaptive", "Baumgarte", "PositionCorrection",
    "assemble_configuration", "project_velocity", "tasks", "PointTask", "PlanarOrientationTask",
    "OrientationTask", "JointTask", "StackedTask", "operational_space", "operational_space_at",
    "control", "plots", "ActuationError", "AttachNodes", "FixNodes", "TieNodes", "pin", "Node", "nearest_node",
    "GeneralizedAlpha", "progress", "view", "resume",
]
