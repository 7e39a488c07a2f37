"""The state of an assembled system and the terms of the constrained equations at one state:

    τ = M(q) a + h(q, v) − Φᵀλ,    Φ a + bias = 0,    Φ v + φ_t = 0,    φ(q, t) = 0        [DE-2..7, DE-112, 113]

:class:`State` (t, q, v) is what a run visits; :class:`Terms` is what a
:class:`~flexbody.system.workspace.Workspace` gives of one state at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

import numpy as np
import scipy.sparse as sp

if TYPE_CHECKING:
    from ..linalg.block_mass import BlockMass

T = TypeVar("T")

__all__ = ["State", "Terms", "read_only"]


@dataclass(frozen=True)
class State:
    """Time t [s], coordinates q (n,) and velocities v (n,) of an assembled system."""

    t: float
    q: np.ndarray
    v: np.ndarray


@dataclass(frozen=True)
class Terms:
    """The terms of the constrained equations at one state (shapes: n coordinates, m constraint rows).

    M (n, n), h (n,) = b + g, Phi (m, n), bias (m,) with Φa + bias = 0, phi (m,) = φ(q, t),
    phi_t (m,) with Φv + φ_t = 0.
    """

    M: np.ndarray | BlockMass
    h: np.ndarray
    Phi: np.ndarray | sp.csr_matrix
    bias: np.ndarray
    phi: np.ndarray
    phi_t: np.ndarray


def read_only(value: T) -> T:
    """``value`` (an array, a sparse matrix, or a tuple of them) with its arrays made read-only, so a kept term
    cannot be changed by one of its consumers; other objects are left as they are."""
    if type(value) is np.ndarray:  # the common case first
        value.setflags(write=False)  # type: ignore[attr-defined]  # an ndarray, tested just above
        return value
    items: tuple = value if type(value) is tuple else (value,)  # type: ignore[assignment]  # a plain tuple
    for item in items:
        if type(item) is np.ndarray:
            item.flags.writeable = False
        elif sp.issparse(item):
            item.data.flags.writeable = False
    return value
