"""flexbody: flexible/rigid multibody systems with ANCF hexahedral solids.

Public API (see docs/): meshes (:mod:`flexbody.mesh`), materials, flexible bodies, loads, constraints,
systems, static equilibrium and export.
"""
from . import io, mesh
from .constraints import Fix
from .errors import (ConstraintError, ConvergenceError, ElementError, FlexbodyError, LoadError, MaterialError,
                     MeshError, StateError)
from .flexible import FlexibleBody
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
    "LoadError", "ConstraintError", "ConvergenceError", "StateError",
]
