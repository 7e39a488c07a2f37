"""flexbody: flexible/rigid multibody systems with ANCF hexahedral solids.

The package is a set of rooms, each a subpackage that owns one concept and imports only the rooms
listed in its docstring (docs/architecture.md draws the arrows):

- :mod:`flexbody.fem` meshes (``fb.mesh``), elements, materials, kernels, loads, :class:`FlexibleBody`;
- :mod:`flexbody.rigid` joints, rigid trees, their recursive algorithms, anchors on links and the ground;
- :mod:`flexbody.reduced` reduced-order flexible bodies on a floating frame (:class:`ReducedBody`), their bases;
- :mod:`flexbody.constraints` closures, couplings, surfaces, node anchors and attachments;
- :mod:`flexbody.system` :class:`System` → :class:`AssembledSystem` + :class:`State`, one evaluation per state;
- :mod:`flexbody.linalg` mass solves, the block mass matrix, the saddle-point solver, rank tools;
- :mod:`flexbody.dynamics` constrained forward and inverse dynamics in every form;
- :mod:`flexbody.solvers` statics, explicit and implicit integrators, restart;
- :mod:`flexbody.control` tasks, operational space, constrained controllers, actuation reports;
- :mod:`flexbody.io` :class:`Results`, VTU/PVD/XDMF/CSV writers, views (``fb.view``) and plots (``fb.plots``);
- :mod:`flexbody.mechanisms` ready-made systems of the sources; :mod:`flexbody.cli` the ``flexbody`` command;
- :mod:`flexbody.errors` and :mod:`flexbody.progress`.

Everything a case needs is re-exported here: ``import flexbody as fb``.
"""

import os as _os

# Idle OpenMP threads sleep instead of spinning, unless the user chose a policy: the parallel element kernels run
# in numba's OpenMP team, and when other processes keep the cores busy a spinning idle thread costs every
# parallel region a scheduler time slice (measured: the 8000-element force 5 times slower on 2 threads than on
# 1 with two busy processes on two cores; with passive waits, faster). Set before an OpenMP runtime is loaded,
# which importing sksparse already does.
_os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from . import constraints, control, dynamics, fem, io, linalg, mechanisms, progress, reduced, rigid, solvers, system
from ._version import __version__
from .constraints import (
    AttachNodes,
    Bushing,
    Cylinder,
    Distance,
    Fix,
    FunctionCoupling,
    Gear,
    GeneralizedForce,
    Hinge,
    ImplicitSurface,
    JointDriver,
    JointSpringDamper,
    KnifeEdge,
    LinearCoupling,
    Node,
    OnSurface,
    PfaffianRows,
    Plane,
    PointToPoint,
    PolynomialCoupling,
    RollingDisc,
    Sphere,
    SpringDamper,
    TieNodes,
    Weld,
    nearest_node,
    pin,
)
from .control import (
    JointTask,
    OrientationTask,
    PlanarOrientationTask,
    PointTask,
    StackedTask,
    operational_space,
    operational_space_at,
    task_history,
)
from .errors import (
    ActuationError,
    ConstraintError,
    ConvergenceError,
    ElementError,
    FlexbodyError,
    LoadError,
    MaterialError,
    MeshError,
    ModelError,
    StateError,
)
from .fem import (
    BodyForce,
    FlexibleBody,
    Gravity,
    HexMesh,
    Hyperelastic,
    MooneyRivlin,
    NeoHookean,
    NodalForce,
    Pressure,
    StVenantKirchhoff,
    SurfaceMoment,
    SurfaceTraction,
    mesh,
)
from .io import Results, plots, view
from .linalg import constraint_rank
from .linalg.blas_threads import limit_blas_threads
from .reduced import ReducedBody
from .rigid import Fixed, FreeFlyer, Ground, Planar, Prismatic, Revolute, RigidTree, Spherical, Universal, load_urdf
from .solvers import (
    RK4,
    Adaptive,
    ArcLength,
    Baumgarte,
    GeneralizedAlpha,
    NewtonSettings,
    PositionCorrection,
    RunContext,
    assemble_configuration,
    holding_inputs,
    linearize,
    modal_analysis,
    project_velocity,
    quasi_static_sequence,
    resume,
    simulate,
    solve_static,
    task_sensitivity,
)
from .system import AssembledSystem, State, System

limit_blas_threads()  # one BLAS thread unless the user chose (flexbody.linalg.blas_threads says why)


__all__ = [
    "__version__",
    "mesh",
    "HexMesh",
    "StVenantKirchhoff",
    "NeoHookean",
    "MooneyRivlin",
    "Hyperelastic",
    "FlexibleBody",
    "Fix",
    "BodyForce",
    "Gravity",
    "NodalForce",
    "SurfaceTraction",
    "SurfaceMoment",
    "Pressure",
    "System",
    "solve_static",
    "NewtonSettings",
    "ArcLength",
    "Results",
    "FlexbodyError",
    "MeshError",
    "ElementError",
    "MaterialError",
    "LoadError",
    "ConstraintError",
    "ConvergenceError",
    "StateError",
    "ModelError",
    "RigidTree",
    "Revolute",
    "Prismatic",
    "Fixed",
    "Spherical",
    "FreeFlyer",
    "Universal",
    "Planar",
    "Ground",
    "load_urdf",
    "AssembledSystem",
    "State",
    "PointToPoint",
    "Distance",
    "Weld",
    "Hinge",
    "OnSurface",
    "Plane",
    "Sphere",
    "Cylinder",
    "ImplicitSurface",
    "LinearCoupling",
    "Gear",
    "FunctionCoupling",
    "PolynomialCoupling",
    "JointDriver",
    "dynamics",
    "constraint_rank",
    "mechanisms",
    "simulate",
    "RK4",
    "Adaptive",
    "Baumgarte",
    "PositionCorrection",
    "assemble_configuration",
    "project_velocity",
    "task_history",
    "PointTask",
    "PlanarOrientationTask",
    "OrientationTask",
    "JointTask",
    "StackedTask",
    "operational_space",
    "operational_space_at",
    "control",
    "plots",
    "ActuationError",
    "AttachNodes",
    "TieNodes",
    "pin",
    "Node",
    "nearest_node",
    "GeneralizedAlpha",
    "progress",
    "view",
    "resume",
    "RunContext",
    "holding_inputs",
    "task_sensitivity",
    "quasi_static_sequence",
    "SpringDamper",
    "JointSpringDamper",
    "Bushing",
    "GeneralizedForce",
    "KnifeEdge",
    "RollingDisc",
    "PfaffianRows",
    "modal_analysis",
    "linearize",
    "ReducedBody",
    "fem",
    "reduced",
    "rigid",
    "constraints",
    "system",
    "linalg",
    "solvers",
    "io",
]
