"""What anchors, constraints, force elements and tasks read of one state: the :class:`StateView` protocol.

The rooms below the assembled system (rigid, reduced, constraints) are written against this protocol, not
against the workspace that implements it (:class:`flexbody.system.workspace.Workspace`), so no module of theirs
imports the system room, not even for type checking. A workspace holds every term of one state (t, q, v) of an
assembled system, each computed on first use: the anchors read the kinematics of a tree, the batched terms of
a link point and the columns of a tree or body from it, and keep terms of their own with :meth:`StateView.memo`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, Protocol, TypeVar

import numpy as np

T = TypeVar("T")

__all__ = ["StateView"]


class StateView(Protocol):
    """One state of an assembled system, as the anchors and the rows written on them read it.

    Attributes
    ----------
    t : float
        Time [s].
    q, v : ndarray (n,)
        Global coordinates and velocities (read-only).
    """

    t: float
    q: np.ndarray
    v: np.ndarray

    def kinematics(self, tree: Hashable) -> Any:
        """The :class:`~flexbody.rigid.tree.Kinematics` of ``tree`` at this state (one pass per tree)."""
        ...

    def point(self, anchor: Hashable) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(x (3,), ẋ (3,), J (3, n_tree), J̇v (3,)) of a link point anchor, world axes."""
        ...

    def offset(self, tree: Hashable) -> int:
        """First global column of ``tree``."""
        ...

    def columns(self, tree: Hashable) -> np.ndarray:
        """Global columns (n_tree,) of ``tree``."""
        ...

    def body_offset(self, body: Hashable) -> int:
        """First global column of a flexible body (its nodal coordinates follow, node-major)."""
        ...

    def slice_of(self, item: Hashable) -> slice:
        """Global columns of a tree, a flexible body or a reduced body."""
        ...

    def memo(self, key: Hashable, compute: Callable[[], T]) -> T:
        """The term ``key`` of this state: ``compute()`` on first use (arrays made read-only), then kept."""
        ...
