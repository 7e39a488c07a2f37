"""Exceptions raised by flexbody.

Every public entry point validates its input once and raises a subclass of
:class:`FlexbodyError` whose message names the offending object.
"""

from __future__ import annotations

from collections.abc import Sequence


class FlexbodyError(Exception):
    """Base class of every error raised by flexbody on bad input or failure."""

    # set on errors that end a run (not class defaults: an error without them has no such attribute)
    last_good: object  # the results recorded (or the state converged) before the failure
    last_state: object  # a state the error carried before the run's results replaced it as last_good


class MeshError(FlexbodyError):
    """A mesh is malformed: wrong cell type or shape, non-finite points, bad indices, unknown set."""


class ElementError(MeshError):
    """An element is inverted or degenerate (non-positive Jacobian determinant)."""


class MaterialError(FlexbodyError):
    """Material constants are non-physical (e.g. non-positive modulus, Poisson ratio outside (-1, 0.5))."""


class LoadError(FlexbodyError):
    """A load is ill-defined: unknown node/face set, wrong shape, non-finite values."""


class ModelError(FlexbodyError):
    """A model description is inconsistent: unknown link or parent, bad joint axis, inertia or placement."""


class ConstraintError(FlexbodyError):
    """A constraint refers to unknown nodes or bodies, or is inconsistent."""


class StateError(FlexbodyError):
    """A state vector (coordinates, velocities) has the wrong shape or contains NaN/Inf."""


class ConvergenceError(FlexbodyError):
    """A nonlinear solve did not converge.

    Attributes
    ----------
    residual_history : list of float
        Residual norms of the failed solve, one per iteration.
    reason : str
        The message without the residual history.
    last_good : object or None
        The last converged state or partial results, kept so nothing computed is lost.
    """

    def __init__(self, message: str, residual_history: Sequence[float] = (), last_good: object = None):
        history = [float(r) for r in residual_history]
        self.reason = message
        if history:
            tail = ", ".join(f"{r:.3e}" for r in history[-8:])
            message = f"{message}; residual history (last {min(8, len(history))}): [{tail}]"
        super().__init__(message)
        self.residual_history = history
        self.last_good = last_good


class ActuationError(FlexbodyError):
    """A controller cannot produce the commanded motion or force with the available actuators: the map
    from actuator inputs to the task (or the passive-joint condition) is rank-deficient here.

    Attributes
    ----------
    report : object or None
        The :class:`flexbody.control.ActuationReport` (or the failed map check) with singular values,
        tolerance and the reason.
    """

    def __init__(self, message: str, report: object = None):
        super().__init__(message)
        self.report = report


def shortened(labels, head: int = 4) -> str:
    """Labels for a message: comma-separated, the middle elided when there are more than 2·head,
    "none" when there are none."""
    labels = [str(x) for x in labels]
    if not labels:
        return "none"
    if len(labels) <= 2 * head:
        return ", ".join(labels)
    return f"{', '.join(labels[:head])}, …, {', '.join(labels[-head:])} ({len(labels)} in all)"
