"""Systems: :class:`System` (an editable description of trees, bodies, constraints, loads and
actuators) and what assembling it gives, :class:`AssembledSystem` (frozen coordinates [DE-110], fixed
sparsity patterns, the constant flexible mass factored once) with its :class:`State`; an
:class:`Evaluation` holds every term of one state, computed once and shared by its consumers.

May import: errors, fem, rigid, constraints, linalg, reduced.
"""

from .assembled import AssembledSystem
from .description import System, as_assembled
from .evaluation import Evaluation, State, Terms

__all__ = ["System", "AssembledSystem", "State", "Terms", "Evaluation", "as_assembled"]
