"""The force elements of an assembled system, summed over global columns: Q(t, q, v) (n,), its elastic part
Q(t, q, 0), the Jacobians ∂Q/∂q and ∂Q/∂v (sparse n × n) and the stored energy.

They enter h = b + g as h ← h − Q (:mod:`flexbody.constraints.force_elements`): g ← g − Q(t, q, 0) and
b ← b − (Q(t, q, v) − Q(t, q, 0)).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..constraints.contact_points import contact_histories

__all__ = ["AppliedForces"]


class AppliedForces:
    """Force elements acting on a system of ``n_dofs`` coordinates.

    Attributes
    ----------
    elements : list of ForceElement
    contacts : list of the elements that are contacts (``CompliantContact``)
    """

    def __init__(self, elements, n_dofs: int):
        self.elements, self.n_dofs = list(elements), int(n_dofs)
        self.contacts = [e for e in self.elements if hasattr(e, "contact_point")]  # contacts, in the elements' order

    def __bool__(self) -> bool:
        return bool(self.elements)

    def prepare(self, ev) -> None:
        """Let each element record rest lengths and poses at the initial state ``ev``."""
        for element in self.elements:
            element.prepare(ev)

    def force(self, ev, *, velocity: bool = True) -> np.ndarray:
        """Q (n,) [N, N·m] at ``ev``; ``velocity=False`` gives the elastic part Q(t, q, 0)."""
        Q = np.zeros(self.n_dofs)
        for element in self.elements:
            piece = element.evaluate(ev, velocity=velocity)
            np.add.at(Q, piece.cols, piece.force)
        return Q

    def jacobians(self, ev, columns: slice | None = None) -> tuple[sp.csr_matrix, sp.csr_matrix]:
        """(∂Q/∂q, ∂Q/∂v) as CSR matrices (n, n), or their block on ``columns`` × ``columns``; elements
        without Jacobians contribute nothing."""
        rows: list[np.ndarray] = []
        cols: list[np.ndarray] = []
        k_vals: list[np.ndarray] = []
        c_vals: list[np.ndarray] = []
        for element in self.elements:
            piece = element.evaluate(ev, jacobians=True)
            for values, block in ((k_vals, piece.stiffness), (c_vals, piece.damping)):
                values.append(np.zeros(piece.cols.size**2) if block is None else np.asarray(block).ravel())
            rows.append(np.repeat(piece.cols, piece.cols.size))
            cols.append(np.tile(piece.cols, piece.cols.size))
        n = self.n_dofs
        r = np.concatenate(rows) if rows else np.zeros(0, np.int64)
        c = np.concatenate(cols) if cols else np.zeros(0, np.int64)
        K = sp.csr_matrix((np.concatenate(k_vals) if k_vals else np.zeros(0), (r, c)), shape=(n, n))
        C = sp.csr_matrix((np.concatenate(c_vals) if c_vals else np.zeros(0), (r, c)), shape=(n, n))
        if columns is not None:
            K, C = K[columns, columns], C[columns, columns]
        return K, C

    def contact_rows(self, ev) -> dict[str, np.ndarray]:
        """The recorded state of the ``contacts`` among the elements (in their order): their
        :data:`~flexbody.constraints.contact_points.CONTACT_HISTORIES`; empty without contacts."""
        if not self.contacts:
            return {}
        return contact_histories(*zip(*(contact.report(ev) for contact in self.contacts)))

    def potential(self, ev) -> float:
        """Energy stored in the elements [J]."""
        return float(sum(element.potential(ev) for element in self.elements))
