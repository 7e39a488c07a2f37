"""Solvers on an assembled system: statics through one entry, :func:`solve_static` (forward, with load
stepping, for flexible-only and constrained systems with inputs; inverse statics of tasks), explicit integration (RK4,
adaptive) with constraint
stabilisation, the implicit generalized-α integrator, restarting saved runs, and the natural modes of
a
system linearised about a static state and its state-space model, and the Craig–Bampton basis of a body. They compute;
results
go out through :class:`flexbody.io.results.Results` and the writers passed in.

May import: errors, deprecation, progress, threads, fem, rigid, constraints, linalg, reduced, system, dynamics, io.
"""

from ..reduced.basis import ReducedBasis, craig_bampton, free_modes
from .alpha_settings import GeneralizedAlpha
from .arc_length import ArcLength
from .constrained_statics import Equilibrium, holding_inputs, static_equilibrium
from .dynamics_derivatives import ForwardDerivatives, forward_derivatives
from .input_optimization import OptimalInputs, RunConstraint, knot_bounds, optimize_inputs
from .inverse_statics import InverseStatics, inverse_statics, quasi_static_sequence, task_sensitivity
from .linearization import LinearModel, linearize
from .minimum_time import MinimumTime, minimum_time
from .modal import Modes, modal_analysis
from .moreau_jean import MoreauJean
from .newton_settings import NewtonSettings
from .path_stability import POINT_KINDS, BranchSwitch
from .piecewise_inputs import PiecewiseInputs
from .resumption import resume
from .run_context import RunContext
from .run_costs import Effort, FinalPoint, FinalState, FinalValue, FlexibleEnergy, KnotValue, RunCost
from .run_gradient import RunGradient, gradient
from .simulation import RK4, Adaptive, Baumgarte, PositionCorrection, assemble_configuration, project_velocity, simulate
from .spline_inputs import SplineInputs
from .statics import solve_static

__all__ = [
    "Equilibrium",
    "InverseStatics",
    "holding_inputs",
    "inverse_statics",
    "quasi_static_sequence",
    "static_equilibrium",
    "task_sensitivity",
    "GeneralizedAlpha",
    "MoreauJean",
    "RK4",
    "Adaptive",
    "Baumgarte",
    "PositionCorrection",
    "RunContext",
    "assemble_configuration",
    "project_velocity",
    "resume",
    "simulate",
    "NewtonSettings",
    "ArcLength",
    "BranchSwitch",
    "POINT_KINDS",
    "solve_static",
    "Modes",
    "modal_analysis",
    "LinearModel",
    "linearize",
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
    "optimize_inputs",
    "OptimalInputs",
    "RunConstraint",
    "ReducedBasis",
    "craig_bampton",
    "free_modes",
]
