"""Systems: :class:`System` (an editable description of trees, bodies, constraints, loads and
actuators) and what assembling it gives, :class:`AssembledSystem` (frozen coordinates [DE-110], fixed
sparsity patterns, the constant flexible mass factored once) with its :class:`State`; a :class:`Workspace`
holds every term of one state, computed once and read by every consumer of that state.

May import: errors, deprecation, fem, rigid, constraints, linalg, reduced.
"""

from .assembled import AssembledSystem
from .description import System, as_assembled
from .state import State, Terms
from .workspace import Workspace

__all__ = ["System", "AssembledSystem", "State", "Terms", "Workspace", "as_assembled"]
