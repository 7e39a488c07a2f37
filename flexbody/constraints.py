"""Constraints on generalized coordinates.

This module starts with the simplest holonomic constraint, prescribed nodal positions
φ(q) = x_a − (X_a + u_a) = 0 on selected nodes and components, which the static solver eliminates.
"""
from __future__ import annotations

import numpy as np

from .errors import ConstraintError, MeshError
from .flexible import FlexibleBody


class Fix:
    """Prescribe the positions of nodes of a flexible body: x_a = X_a + u_a.

    Parameters
    ----------
    body : FlexibleBody
    nodes : str or array of int
        A node-set or face-set name of the body's mesh, or node indices.
    displacement : array_like, optional
        Prescribed displacement u [m]: (3,) for all nodes, (k, 3) per node, or a callable u(X) -> (k, 3) of
        reference positions X (k, 3). Default zero (clamped). Scaled by the load factor in load stepping.
    components : sequence of int, optional
        Which of x, y, z (0, 1, 2) are prescribed; default all three.
    """

    def __init__(self, body: FlexibleBody, nodes, displacement=None, *, components=(0, 1, 2)):
        if not isinstance(body, FlexibleBody):
            raise ConstraintError(f"Fix: body must be a FlexibleBody, got {type(body).__name__}")
        self.body = body
        try:
            self.nodes = body.nodes(nodes)
        except MeshError as exc:
            raise ConstraintError(f"Fix on body {body.name!r}: {exc}") from exc
        label = nodes if isinstance(nodes, str) else f"{len(self.nodes)} nodes"
        if len(self.nodes) == 0:
            raise ConstraintError(f"Fix {label!r} on body {body.name!r}: empty node selection")
        comps = np.unique(np.asarray(components, dtype=np.int64).ravel())
        if comps.size == 0 or comps.min() < 0 or comps.max() > 2:
            raise ConstraintError(f"Fix {label!r} on body {body.name!r}: components must be within (0, 1, 2)")
        self.components = comps
        X = body.mesh.points[self.nodes]
        if displacement is None:
            u = np.zeros_like(X)
        else:
            u = displacement(X) if callable(displacement) else displacement
            try:
                u = np.broadcast_to(np.asarray(u, dtype=float), X.shape).copy()
            except ValueError as exc:
                raise ConstraintError(f"Fix {label!r} on body {body.name!r}: displacement must be (3,) or "
                                      f"({len(X)}, 3), got {np.shape(u)}") from exc
            if not np.all(np.isfinite(u)):
                raise ConstraintError(f"Fix {label!r} on body {body.name!r}: displacement contains NaN/Inf")
        self.label = label
        self.displacement = u

    def dofs(self) -> np.ndarray:
        """Local coordinate indices (k·c,) of the prescribed components."""
        return (3 * self.nodes[:, None] + self.components[None, :]).ravel()

    def values(self, factor: float = 1.0) -> np.ndarray:
        """Prescribed coordinate values X + factor·u (k·c,) [m], matching :meth:`dofs`."""
        X = self.body.mesh.points[self.nodes]
        return (X + factor * self.displacement)[:, self.components].ravel()
