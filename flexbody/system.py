"""System: flexible bodies, constraints and loads gathered into one set of generalized coordinates.

The global coordinates stack each body's absolute nodal coordinates, q = [d₁; d₂; …] [DE-110]. The mass
matrix is block diagonal with constant flexible blocks [DE-110], the internal force and tangent are the
stacked body terms, and the external force sums the loads. (Rigid trees and general holonomic constraints
join this assembly in later modules.)
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from .constraints import Fix
from .errors import ConstraintError, FlexbodyError, LoadError
from .flexible import FlexibleBody
from .loads import Load


class System:
    """Flexible bodies with their constraints and loads.

    Parameters
    ----------
    bodies : sequence of FlexibleBody
        Unique names; coordinates are stacked in this order.
    constraints : sequence of Fix
    loads : sequence of Load
    """

    def __init__(self, bodies: Sequence[FlexibleBody], constraints: Sequence = (), loads: Sequence[Load] = ()):
        self.bodies = list(bodies)
        if not self.bodies:
            raise FlexbodyError("System needs at least one body")
        names = set()
        for body in self.bodies:
            if not isinstance(body, FlexibleBody):
                raise FlexbodyError(f"System: {body!r} is not a FlexibleBody")
            if body.name in names:
                raise FlexbodyError(f"System: two bodies are named {body.name!r}")
            names.add(body.name)
        self.constraints = list(constraints)
        self.loads = list(loads)
        for c in self.constraints:
            if not isinstance(c, Fix):
                raise ConstraintError(f"System: unsupported constraint {type(c).__name__}")
            if c.body not in self.bodies:
                raise ConstraintError(f"System: constraint {c.label!r} refers to body {c.body.name!r}, "
                                      f"which is not in the system")
        for load in self.loads:
            if not isinstance(load, Load):
                raise LoadError(f"System: {load!r} is not a flexbody Load")
            if load.body not in self.bodies:
                raise LoadError(f"System: a {type(load).__name__} refers to body {load.body.name!r}, "
                                f"which is not in the system")
        sizes = [b.n_dofs for b in self.bodies]
        self._offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(int)

    # ------------------------------------------------------------------ coordinates
    @property
    def n_dofs(self) -> int:
        return int(self._offsets[-1])

    def body_slice(self, body: FlexibleBody) -> slice:
        """Slice of the global coordinates that belongs to ``body``."""
        i = self._index(body)
        return slice(int(self._offsets[i]), int(self._offsets[i + 1]))

    def _index(self, body: FlexibleBody) -> int:
        for i, b in enumerate(self.bodies):
            if b is body:
                return i
        raise FlexbodyError(f"body {getattr(body, 'name', body)!r} is not part of this system")

    def reference_coordinates(self) -> np.ndarray:
        """Stacked reference coordinates q₀ (n_dofs,) [m]."""
        return np.concatenate([b.reference_coordinates() for b in self.bodies])

    def prescribed(self, factor: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
        """Global indices and values of all prescribed coordinates at load factor ``factor``."""
        dofs, vals = [], []
        for c in self.constraints:
            offset = self.body_slice(c.body).start
            dofs.append(offset + c.dofs())
            vals.append(c.values(factor))
        if not dofs:
            return np.zeros(0, int), np.zeros(0)
        dofs, vals = np.concatenate(dofs), np.concatenate(vals)
        unique, first = np.unique(dofs, return_index=True)
        return unique, vals[first]

    # ------------------------------------------------------------------ terms
    def mass_matrix(self) -> sp.csr_matrix:
        """Block-diagonal constant mass matrix (n_dofs, n_dofs) [kg]."""
        return sp.block_diag([b.mass_matrix() for b in self.bodies], format="csr")

    def internal_force(self, q: np.ndarray, v: np.ndarray | None = None) -> np.ndarray:
        """Stacked internal forces k(q, v) (n_dofs,) [N]."""
        return np.concatenate([b.internal_force(q[self.body_slice(b)], None if v is None else v[self.body_slice(b)])
                               for b in self.bodies])

    def force_and_tangent(self, q: np.ndarray) -> tuple[np.ndarray, sp.csr_matrix]:
        """Internal force (n_dofs,) and its Jacobian ∂k/∂q (sparse, block diagonal)."""
        parts = [b.force_and_tangent(q[self.body_slice(b)]) for b in self.bodies]
        f = np.concatenate([p[0] for p in parts])
        K = parts[0][1] if len(parts) == 1 else sp.block_diag([p[1] for p in parts], format="csr")
        return f, K

    def external_force(self, q: np.ndarray) -> np.ndarray:
        """Sum of the loads' generalized forces (n_dofs,) [N] at q."""
        f = np.zeros(self.n_dofs)
        for load in self.loads:
            s = self.body_slice(load.body)
            f[s] += load.force(q[s])
        return f

    @property
    def has_follower_loads(self) -> bool:
        return any(load.follower for load in self.loads)

    def load_stiffness(self, q: np.ndarray) -> sp.csr_matrix | None:
        """∂(external force)/∂q (n_dofs, n_dofs) of follower loads, or None when all loads are dead."""
        K = None
        for load in self.loads:
            if not load.follower:
                continue
            s = self.body_slice(load.body)
            Kl = load.stiffness(q[s]).tocoo()
            block = sp.csr_matrix((Kl.data, (Kl.row + s.start, Kl.col + s.start)), shape=(self.n_dofs,) * 2)
            K = block if K is None else K + block
        return K
