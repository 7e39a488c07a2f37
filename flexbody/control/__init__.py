"""Constrained task-level control [DE 5, AG VII]: controllers usable in :func:`flexbody.simulate`, actuator limits,
references, null-space posture terms, linear state feedback (LQR) on a linear model, and the actuation and rank report
[DE 5.3, AG-62] with its contact part (the motion and contact forces held inside the friction cones); task
coordinates and the operational-space terms they give [DE 43-64].

May import: errors, deprecation, rigid, constraints, linalg, system, dynamics.
"""

from .actuation import ActuationReport, actuation_report
from .admittance import AdmittanceControl, ContactForceLoop, TaskLoop
from .base import Controller, GravityEffort, NullSpaceDamping, TaskController, task_acceleration_error
from .computed_torque import ComputedTorqueControl, JointReferenceFromTask
from .contact_control import ContactForceControl
from .contact_wrench import ContactActuation, contact_actuation
from .context import ControlContext
from .map_check import ActuationWarning, MapCheck, check_map
from .operational import DirectMappingControl, MinimalMappingControl, PartitionedControl
from .operational_space import OperationalSpace, operational_space, operational_space_at
from .projected import HybridMotionForceControl, ProjectedInverseDynamicsControl
from .references import CircleAfterStep, Setpoint, Sinusoid, Trajectory
from .saturation import Saturated
from .state_feedback import StateFeedback, lqr_gain
from .tasks import JointTask, OrientationTask, PlanarOrientationTask, PointTask, StackedTask, Task, task_history

__all__ = [
    "AdmittanceControl",
    "ContactForceLoop",
    "TaskLoop",
    "ActuationReport",
    "ActuationWarning",
    "MapCheck",
    "actuation_report",
    "check_map",
    "ContactActuation",
    "ContactForceControl",
    "contact_actuation",
    "Controller",
    "TaskController",
    "task_acceleration_error",
    "GravityEffort",
    "NullSpaceDamping",
    "ComputedTorqueControl",
    "JointReferenceFromTask",
    "ControlContext",
    "DirectMappingControl",
    "MinimalMappingControl",
    "PartitionedControl",
    "HybridMotionForceControl",
    "ProjectedInverseDynamicsControl",
    "Setpoint",
    "Sinusoid",
    "Trajectory",
    "CircleAfterStep",
    "Saturated",
    "StateFeedback",
    "lqr_gain",
    "Task",
    "PointTask",
    "PlanarOrientationTask",
    "OrientationTask",
    "JointTask",
    "StackedTask",
    "OperationalSpace",
    "operational_space",
    "operational_space_at",
    "task_history",
]
