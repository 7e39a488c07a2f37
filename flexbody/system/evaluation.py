"""The state of an assembled system and its terms: :class:`State` (t, q, v), :class:`Terms` (the terms of the
constrained equations at one state) and :class:`Evaluation`, which computes each term of one state on first use
and keeps it,

    τ = M(q) a + h(q, v) − Φᵀλ,    Φ a + bias = 0,    Φ v + φ_t = 0,    φ(q, t) = 0        [DE-2..7, DE-112, 113]

so that every consumer of a state (the dynamics, the controller, the recorder, the integrator's checks) shares
one set of terms (:meth:`flexbody.system.assembled.AssembledSystem.evaluate`). Kept arrays are read-only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from ..rigid.tree import Kinematics

if TYPE_CHECKING:
    from ..linalg.block_mass import BlockMass
    from .assembled import AssembledSystem


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


_MISSING = object()
"""Marks a term an Evaluation has not computed yet."""


class Evaluation:
    """Every term of one state (t, q, v), each computed on first use and then kept: the kinematics of
    every tree, the anchor points, M and h, b and g, the constraint rows (φ, Φ, bias, φ_t), the energies
    and the flexible Jacobians. :meth:`AssembledSystem.evaluate` hands out the same Evaluation for the
    same state, so the dynamics, the controller, the recorder and the integrator's own checks of one state
    share one set of terms. Its arrays are read-only: a consumer that needs to change one copies it.
    """

    def __init__(self, asm: AssembledSystem, t: float, q: np.ndarray, v: np.ndarray):
        self.asm, self.t, self.q, self.v = asm, float(t), q, v
        self._kin: dict = {}
        self._batches: dict = {}
        self._single: dict = {}
        self._terms: dict = {}

    def is_at(self, t: float | None, q: np.ndarray, v: np.ndarray) -> bool:
        """Whether this is the state (t, q, v) (``t`` None: any time, for time-independent terms)."""
        return (t is None or t == self.t) and _same_values(q, self.q) and _same_values(v, self.v)

    def memo(self, key, compute):
        """The term ``key`` of this state: ``compute()`` the first time (its arrays made read-only), the
        kept value afterwards."""
        value = self._terms.get(key, _MISSING)
        if value is _MISSING:
            value = self._terms[key] = compute()
            _read_only(value)
        return value

    def offset(self, tree) -> int:
        return self.asm.offsets[tree]

    def body_offset(self, body) -> int:
        """First global column of a flexible body (its nodal coordinates follow, node-major)."""
        return self.asm.offsets[body]

    def columns(self, tree) -> np.ndarray:
        return self.asm.columns[tree]

    def point(self, anchor):
        """(x (3,), ẋ (3,), J (3, n_tree), J̇v (3,)) of a link point anchor; one numba pass per tree."""
        tree = anchor.link.tree
        slot = self.asm.point_slots[tree][0].get(anchor) if tree in self.asm.point_slots else None
        if slot is None:
            out = self._single.get(anchor)
            if out is None:
                X, Xd, J, B = self.kinematics(tree)._point(anchor.link, anchor.offset)
                out = self._single[anchor] = (X[0], Xd[0], J[0], B[0])
            return out
        batch = self._batches.get(tree)
        if batch is None:
            _, index, offsets = self.asm.point_slots[tree]
            batch = self._batches[tree] = self.kinematics(tree).points(index, offsets)
        return batch[0][slot], batch[1][slot], batch[2][slot], batch[3][slot]

    def kinematics(self, tree):
        kin = self._kin.get(tree)
        if kin is None:
            s = self.asm.slices[tree]
            kin = self._kin[tree] = Kinematics(tree, self.q[s], self.v[s])  # q, v validated once
        return kin


def _same_values(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether the float vectors a and b hold the same values: their bytes for short vectors (a tenth of
    :func:`numpy.array_equal`'s cost there; −0.0 and 0.0 then differ, which only costs a new evaluation),
    :func:`numpy.array_equal` for long ones."""
    if a.shape != b.shape:
        return False
    return a.tobytes() == b.tobytes() if a.size <= 512 else bool(np.array_equal(a, b))


def _read_only(value):
    """``value`` (an array, a sparse matrix, or a tuple of them) with its arrays made read-only, so a kept
    term cannot be changed by one of its consumers; other objects are left as they are."""
    for item in value if type(value) is tuple else (value,):
        if type(item) is np.ndarray:
            item.setflags(write=False)
        elif isinstance(item, sp.spmatrix | sp.sparray):
            item.data.setflags(write=False)
