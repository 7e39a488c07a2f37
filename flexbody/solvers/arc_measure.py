"""The measure of an arc of a static path as a length: the weights W of ‖Δq‖²_W = Σ wᵢ Δqᵢ² on the free coordinates.

Flexible bodies' coordinates are nodal positions, three per node, so with wᵢ = 1/k on the coordinates of k nodes
‖Δq‖_W is the root-mean-square displacement of those nodes [m]:

- by default every node with a free coordinate counts (k of them): the arc is the RMS displacement of the
  structure's free nodes, a length independent of the mesh's fineness;
- with ``nodes=(body, which)`` (a node-set or face-set name, or node indices) only those nodes count: the arc
  is the displacement of a named node (or the RMS of a few), what a test rig controls.
"""

from __future__ import annotations

import numpy as np

from ..errors import FlexbodyError
from ..system.description import System

__all__ = ["arc_weights"]


def arc_weights(system: System, free: np.ndarray, nodes: tuple | None) -> np.ndarray:
    """W (n_free,) of the arc's measure: 1/k on the free coordinates of the k measured nodes, 0 elsewhere."""
    node_of = np.full(system.n_dofs, -1, dtype=np.int64)  # a global node number per coordinate
    chosen = np.zeros(system.n_dofs, dtype=bool)
    start = 0
    for body in system.bodies:
        span = system.body_slice(body)
        node_of[span] = start + np.arange(span.stop - span.start) // 3
        if nodes is None:
            chosen[span] = True
        elif _named(nodes[0], body):
            picked = body.nodes(nodes[1])
            chosen[span.start + (3 * picked[:, None] + np.arange(3)).ravel()] = True
        start += (span.stop - span.start) // 3
    if nodes is not None and not chosen.any():
        raise FlexbodyError(f"ArcLength: nodes names body {_name(nodes[0])!r}, which the system does not have")
    measured = np.zeros(system.n_dofs, dtype=bool)
    measured[free] = chosen[free]
    if not measured.any():
        raise FlexbodyError("ArcLength: every coordinate of the measured nodes is held; measure nodes that move")
    k = np.unique(node_of[measured]).size
    return np.where(measured[free], 1.0 / k, 0.0)


def _named(spec, body) -> bool:
    return spec is body or spec == body.name


def _name(spec) -> str:
    return spec if isinstance(spec, str) else getattr(spec, "name", repr(spec))
