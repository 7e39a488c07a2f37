"""Optimal control over a horizon: differential dynamic programming on the step derivatives (:func:`solve_ddp`), and
model-predictive control: a controller usable in :func:`flexbody.simulate` that re-plans the actuator inputs over a
receding horizon on a prediction model (the plant, a reduced or a linearised model of it), within the inputs' bounds,
warm-started, with a wall-time budget per update and a report of the time it used.

May import: errors, linalg, rigid, system, dynamics, control, solvers.
"""

from .controller import ModelPredictiveControl, PredictiveReport
from .ddp import DDPSolution, InputResidual, PointResidual, ReachingProblem, StateResidual, solve_ddp
from .prediction import AffineStep, Horizon, horizon_of, linearized_step

__all__ = [
    "ModelPredictiveControl",
    "PredictiveReport",
    "AffineStep",
    "Horizon",
    "linearized_step",
    "horizon_of",
    "ReachingProblem",
    "PointResidual",
    "StateResidual",
    "InputResidual",
    "DDPSolution",
    "solve_ddp",
]
