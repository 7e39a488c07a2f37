"""Reduced-order flexible bodies: a body's bases (Craig–Bampton, free–free modes), its inertia invariants in a
floating frame of reference, the :class:`ReducedBody` that rides on a rigid link, and anchors on its nodes.

May import: errors, fem, rigid, linalg.
"""

from .anchors import ReducedPoint
from .basis import ReducedBasis, craig_bampton, free_modes
from .body import ReducedBody, ReducedState
from .invariants import FrameTerms, InertiaInvariants, frame_terms

__all__ = [
    "ReducedBasis",
    "craig_bampton",
    "free_modes",
    "ReducedBody",
    "ReducedState",
    "ReducedPoint",
    "InertiaInvariants",
    "FrameTerms",
    "frame_terms",
]
