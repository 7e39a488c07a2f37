"""Constrained forward and inverse dynamics in every form of the sources: multiplier (KKT),
range space (Gauss), null space, projection with its constraint inertias, and the minimum-norm inverse
[DE 3-42, AG 15-32]; pure functions of (M, h, τ, Φ, bias) or of (assembled system, state, τ), and
:func:`constraint_dynamics` on a :class:`SystemData` made once (Pinocchio's model/data form) for loops over states.

May import: errors, deprecation, linalg, system.
"""

from .forward_dynamics import forward
from .inverse_dynamics import inverse
from .projection import (
    constraint_inertia,
    generalized_constrained_terms,
    mass_weighted_inverse,
    nullspace_basis,
    projector,
)
from .results import INERTIA_KINDS, METHODS, ForwardResult, GeneralizedConstrainedTerms, InverseResult, Projection
from .system_data import SystemData, constraint_dynamics

__all__ = [
    "METHODS",
    "INERTIA_KINDS",
    "ForwardResult",
    "InverseResult",
    "Projection",
    "GeneralizedConstrainedTerms",
    "forward",
    "inverse",
    "SystemData",
    "constraint_dynamics",
    "projector",
    "nullspace_basis",
    "mass_weighted_inverse",
    "generalized_constrained_terms",
    "constraint_inertia",
]
