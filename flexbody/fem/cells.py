"""The reference cell of a mesh's cells, known by its number of nodes: 8- and 27-node hexahedra
(:mod:`flexbody.fem.elements`), 4- and 10-node tetrahedra (:mod:`flexbody.fem.tetrahedra`)."""

from __future__ import annotations

from ..errors import MeshError
from .elements import ReferenceCell, reference_hex
from .tetrahedra import reference_tet


def reference_cell(nodes_per_cell: int) -> ReferenceCell:
    """The reference element of cells with ``nodes_per_cell`` nodes: 4 (Tet4), 10 (Tet10), 8 (H8) or 27 (H27)."""
    if nodes_per_cell in (8, 27):
        return reference_hex(nodes_per_cell)
    if nodes_per_cell in (4, 10):
        return reference_tet(nodes_per_cell)
    raise MeshError(f"cells must have 4 or 10 (tetrahedra) or 8 or 27 (hexahedra) nodes, got {nodes_per_cell}")


#: The volume cells flexbody builds bodies of, by meshio / VTK type (the reference cells' ``meshio_type``): their number
#: of nodes.
VOLUME_CELL_NODES = {reference_cell(n).meshio_type: n for n in (8, 27, 4, 10)}
