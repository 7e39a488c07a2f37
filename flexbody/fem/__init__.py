"""Finite elements of flexible bodies: hexahedral and tetrahedral meshes and their named sets, reference H8/H27
and Tet4/Tet10 elements and quadrature, materials (pointwise stress and moduli; user strain energies derived by
sympy and compiled into the same kernels), the compiled element kernels, loads on bodies, :class:`FlexibleBody`
(constant sparse M, internal force, tangent, damping) and its per-step fields [DE 101-106].

May import: errors.
"""

from . import mesh
from .flexible_body import FlexibleBody
from .hex_mesh import HexMesh
from .hyperelastic import Hyperelastic
from .loads import BodyForce, Gravity, Load, NodalForce, Pressure, SurfaceMoment, SurfaceTraction
from .materials import Material, MooneyRivlin, NeoHookean, StVenantKirchhoff
from .tet_mesh import TetMesh

__all__ = [
    "mesh",
    "HexMesh",
    "TetMesh",
    "FlexibleBody",
    "Material",
    "StVenantKirchhoff",
    "NeoHookean",
    "MooneyRivlin",
    "Hyperelastic",
    "Load",
    "BodyForce",
    "Gravity",
    "NodalForce",
    "SurfaceTraction",
    "SurfaceMoment",
    "Pressure",
]
