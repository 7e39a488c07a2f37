"""Linear algebra shared by every solver: input checks of vectors and mass matrices, the mass solve,
the block mass matrix of an assembled system with its one flexible factor, the one sparse factorisation
(CHOLMOD, SuperLU fallback) every sparse solve goes through, the sparse saddle-point (KKT) solver,
the rank tools of constraint Jacobians (SVD, tolerances, rank reports), and the dense quadratic program with bounds
of model-predictive control (:mod:`~flexbody.linalg.box_qp`).

May import: errors.
"""

from .block_mass import BlockMass, FlexibleMassFactor
from .rank import ConstraintSVD, RankReport, constraint_rank, constraint_svd
from .saddle_point import SaddlePointSolver
from .sparse_factor import SparseFactor
from .validation import MassSolver

__all__ = [
    "BlockMass",
    "FlexibleMassFactor",
    "ConstraintSVD",
    "RankReport",
    "constraint_rank",
    "constraint_svd",
    "SaddlePointSolver",
    "MassSolver",
    "SparseFactor",
]
