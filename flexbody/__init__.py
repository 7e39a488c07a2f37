"""flexbody: flexible/rigid multibody systems with ANCF hexahedral solids.

The package is a set of rooms, each a subpackage that owns one concept and imports only the rooms
listed in its docstring (docs/architecture.md draws the arrows):

- :mod:`flexbody.fem` meshes (``fb.mesh``), elements, materials, kernels, loads, :class:`FlexibleBody`;
- :mod:`flexbody.rigid` joints, rigid trees, their recursive algorithms, anchors on links and the ground;
- :mod:`flexbody.reduced` reduced-order flexible bodies on a floating frame (:class:`ReducedBody`), their bases;
- :mod:`flexbody.constraints` closures, couplings, surfaces, node anchors and attachments;
- :mod:`flexbody.system` :class:`System` → :class:`AssembledSystem` + :class:`State`, one workspace per state;
- :mod:`flexbody.linalg` mass solves, the block mass matrix, the saddle-point solver, rank tools;
- :mod:`flexbody.dynamics` constrained forward and inverse dynamics in every form;
- :mod:`flexbody.solvers` statics, explicit and implicit integrators, restart;
- :mod:`flexbody.control` tasks, operational space, constrained controllers, actuation reports;
- :mod:`flexbody.predictive` model-predictive control on a prediction model (full, reduced or linearised);
- :mod:`flexbody.io` :class:`Results`, VTU/PVD/XDMF/CSV writers, views (``fb.view``) and plots (``fb.plots``);
- :mod:`flexbody.mechanisms` ready-made systems of the sources; :mod:`flexbody.cli` the ``flexbody`` command;
- :mod:`flexbody.errors` and :mod:`flexbody.progress`.

Everything a case needs is re-exported here: ``import flexbody as fb``. ``__all__`` groups the names by
concept, one comment line per group, in the order data flows through them (description → assembled system and
state → solvers → results). Importing flexbody loads none of its rooms and changes nothing in the process (no
thread limits, no environment variables): a name is imported from its room when it is first used (PEP 562).
"""

from __future__ import annotations

import contextlib
import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__

__all__ = [
    "__version__",
    # Meshes, materials and flexible bodies: brick and tetrahedral meshes, materials, ANCF solids, reduced bodies.
    "mesh",
    "HexMesh",
    "TetMesh",
    "StVenantKirchhoff",
    "NeoHookean",
    "MooneyRivlin",
    "Hyperelastic",
    "FlexibleBody",
    "ReducedBody",
    # Loads on flexible bodies, dead or follower.
    "BodyForce",
    "Gravity",
    "NodalForce",
    "SurfaceTraction",
    "SurfaceMoment",
    "Pressure",
    # Rigid trees: kinematic trees in joint coordinates, their joints, and robots from URDF files.
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
    # Constraints on anchors (link frames and points, flexible nodes, the ground), couplings, drivers, Pfaffian rows.
    "Fix",
    "PointToPoint",
    "Distance",
    "Weld",
    "Hinge",
    "OnSurface",
    "Plane",
    "Sphere",
    "Box",
    "TriangleMesh",
    "BodySurface",
    "Cylinder",
    "ImplicitSurface",
    "LinearCoupling",
    "Gear",
    "FunctionCoupling",
    "PolynomialCoupling",
    "JointDriver",
    "AttachNodes",
    "TieNodes",
    "pin",
    "Node",
    "nearest_node",
    "KnifeEdge",
    "RollingDisc",
    "PfaffianRows",
    # Force elements on the same anchors: springs, dampers, bushings and user forces.
    "SpringDamper",
    "JointSpringDamper",
    "Bushing",
    "GeneralizedForce",
    "CompliantContact",
    "Contact",
    "sphere_contact",
    "box_contacts",
    "capsule_contacts",
    "cylinder_contacts",
    "node_contacts",
    # Systems and states: the description, the assembled system it freezes into, a state, the constraints' rank.
    "System",
    "AssembledSystem",
    "State",
    "constraint_rank",
    # Statics: static equilibrium with load steps or arc length, constrained statics and inverse statics.
    "solve_static",
    "inverse_statics",
    "NewtonSettings",
    "ArcLength",
    "BranchSwitch",
    "quasi_static_sequence",
    "task_sensitivity",
    # Dynamics and integration: explicit and implicit integrators, constraint stabilisation, restart.
    "simulate",
    "RK4",
    "Adaptive",
    "GeneralizedAlpha",
    "MoreauJean",
    "Baumgarte",
    "PositionCorrection",
    "assemble_configuration",
    "project_velocity",
    "resume",
    "RunContext",
    "holding_inputs",
    # Modes and linear models about a static state.
    "modal_analysis",
    "linearize",
    # Exact derivatives of the constrained dynamics, and gradients of whole runs.
    "forward_derivatives",
    "ForwardDerivatives",
    "gradient",
    "RunGradient",
    "PiecewiseInputs",
    "MinimumTime",
    "minimum_time",
    "KnotValue",
    "knot_bounds",
    "SplineInputs",
    "RunCost",
    "FinalPoint",
    "FinalState",
    "FlexibleEnergy",
    "Effort",
    "FinalValue",
    # Optimal inputs of a run.
    "optimize_inputs",
    "OptimalInputs",
    "RunConstraint",
    # Tasks, operational space and the constrained task-level controllers (``fb.control``).
    "PointTask",
    "PlanarOrientationTask",
    "OrientationTask",
    "JointTask",
    "StackedTask",
    "operational_space",
    "operational_space_at",
    "task_history",
    # Model-predictive control (``fb.predictive``): receding-horizon tracking within input bounds, timed.
    "ModelPredictiveControl",
    "PredictiveReport",
    # Results: recorded runs and static paths, their files, plots and views.
    "Results",
    # Errors: every error flexbody raises is a FlexbodyError.
    "FlexbodyError",
    "MeshError",
    "ElementError",
    "MaterialError",
    "LoadError",
    "ConstraintError",
    "ConvergenceError",
    "StateError",
    "ModelError",
    "ActuationError",
    # Threads: runs limit BLAS to one thread per call; process-wide limits are this explicit opt-in.
    "limit_threads",
    # Namespaces reached as attributes of ``fb``; their pages list their own names.
    "dynamics",
    "control",
    "predictive",
    "mechanisms",
    "progress",
    "plots",
    "view",
    # The rooms, documented by their own pages.
    "fem",
    "reduced",
    "rigid",
    "constraints",
    "system",
    "linalg",
    "solvers",
    "io",
]

ROOMS = (
    "threads",
    "errors",
    "fem",
    "reduced",
    "rigid",
    "constraints",
    "system",
    "linalg",
    "solvers",
    "control",
    "predictive",
    "io",
)
"""The rooms a public name is looked up in on first use: the thread settings first (``fb.limit_threads`` must come
before the OpenMP runtime, which the compiled kernels of the other rooms start when they load), then in the order
data flows through them."""


def __getattr__(name: str) -> Any:
    """The public name ``name``, imported from its room on first use (a room or namespace by its own name)."""
    if name in __all__:
        for room in ROOMS:
            found = getattr(importlib.import_module(f"flexbody.{room}"), name, None)
            if found is not None:
                return found
        for module in (f"flexbody.{name}", f"flexbody.io.{name}"):
            with contextlib.suppress(ModuleNotFoundError):
                return importlib.import_module(module)
    raise AttributeError(f"module 'flexbody' has no attribute {name!r}")


def __dir__() -> list[str]:
    return list(__all__)


if TYPE_CHECKING:  # what the names are, for type checkers and editors
    from . import (
        constraints,
        control,
        dynamics,
        fem,
        io,
        linalg,
        mechanisms,
        predictive,
        progress,
        reduced,
        rigid,
        solvers,
        system,
    )
    from .constraints import (
        AttachNodes,
        BodySurface,
        Box,
        Bushing,
        CompliantContact,
        Contact,
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
        TriangleMesh,
        Weld,
        box_contacts,
        capsule_contacts,
        cylinder_contacts,
        nearest_node,
        node_contacts,
        pin,
        sphere_contact,
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
        TetMesh,
        mesh,
    )
    from .io import Results, plots, view
    from .linalg import constraint_rank
    from .predictive import ModelPredictiveControl, PredictiveReport
    from .reduced import ReducedBody
    from .rigid import Fixed, FreeFlyer, Ground, Planar, Prismatic, Revolute, RigidTree, Spherical, Universal, load_urdf
    from .solvers import (
        RK4,
        Adaptive,
        ArcLength,
        Baumgarte,
        BranchSwitch,
        Effort,
        FinalPoint,
        FinalState,
        FinalValue,
        FlexibleEnergy,
        ForwardDerivatives,
        GeneralizedAlpha,
        KnotValue,
        MinimumTime,
        MoreauJean,
        NewtonSettings,
        OptimalInputs,
        PiecewiseInputs,
        PositionCorrection,
        RunConstraint,
        RunContext,
        RunCost,
        RunGradient,
        SplineInputs,
        assemble_configuration,
        forward_derivatives,
        gradient,
        holding_inputs,
        inverse_statics,
        knot_bounds,
        linearize,
        minimum_time,
        modal_analysis,
        optimize_inputs,
        project_velocity,
        quasi_static_sequence,
        resume,
        simulate,
        solve_static,
        task_sensitivity,
    )
    from .system import AssembledSystem, State, System
    from .threads import limit_threads
