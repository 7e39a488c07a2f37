"""Joints of a rigid kinematic tree: revolute, prismatic and fixed, each with one or no coordinate.

A joint connects a link to its parent. Its frame is placed in the parent link frame by a constant
transform (``placement``); the joint then rotates (revolute, q in rad) or translates (prismatic, q in m)
the child link frame about/along ``axis``, a unit vector expressed in the joint frame. At q = 0 the child
link frame coincides with the joint frame.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import ModelError
from .algorithms import FIXED, PRISMATIC, REVOLUTE


def _unit_axis(axis, kind: str) -> np.ndarray:
    a = np.asarray(axis, dtype=float).reshape(-1)
    if a.shape != (3,) or not np.all(np.isfinite(a)):
        raise ModelError(f"{kind} joint: axis must be 3 finite numbers, got {axis!r}")
    norm = np.linalg.norm(a)
    if norm < 1e-12:
        raise ModelError(f"{kind} joint: axis {axis!r} has zero length")
    return a / norm


@dataclass(frozen=True)
class Revolute:
    """Rotation about ``axis`` (joint frame) by q [rad]; its generalized force is a torque [N·m]."""

    axis: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, 1.0]))
    code = REVOLUTE
    n_dofs = 1
    unit = "rad"                                  # of q (and of a coupling or driver row on it)
    force_unit = "N·m"                            # of the generalized force τ on q

    def __post_init__(self):
        object.__setattr__(self, "axis", _unit_axis(self.axis, "Revolute"))


@dataclass(frozen=True)
class Prismatic:
    """Translation along ``axis`` (joint frame) by q [m]; its generalized force is a force [N]."""

    axis: np.ndarray = field(default_factory=lambda: np.array([1.0, 0.0, 0.0]))
    code = PRISMATIC
    n_dofs = 1
    unit = "m"
    force_unit = "N"

    def __post_init__(self):
        object.__setattr__(self, "axis", _unit_axis(self.axis, "Prismatic"))


@dataclass(frozen=True)
class Fixed:
    """Rigid connection (no coordinate)."""

    code = FIXED
    n_dofs = 0

    @property
    def axis(self) -> np.ndarray:
        return np.zeros(3)
