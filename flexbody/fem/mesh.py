"""The ``fb.mesh`` namespace: hexahedral and tetrahedral meshes made here (:func:`box`), read from files
(:func:`read`, :func:`write`, :func:`from_meshio`) or meshed from geometry by gmsh (:func:`from_geometry`), and the
containers they give (:class:`HexMesh`, :class:`TetMesh`, both :class:`VolumeMesh`).

The containers live in :mod:`flexbody.fem.volume_mesh`, :mod:`flexbody.fem.hex_mesh` (with the box generator) and
:mod:`flexbody.fem.tet_mesh`, the file formats (meshio, Gmsh physical groups, Abaqus sets) in
:mod:`flexbody.fem.mesh_files`.
"""

from .geometry_mesh import from_geometry
from .hex_mesh import HexMesh, box, face_quads
from .mesh_files import from_meshio, read, read_parts, write
from .tet_mesh import TetMesh, split_hexahedra
from .volume_mesh import VolumeMesh, boundary_faces, boundary_triangles, face_cells, faces_nodes

__all__ = [
    "VolumeMesh",
    "HexMesh",
    "TetMesh",
    "box",
    "read",
    "read_parts",
    "write",
    "from_meshio",
    "from_geometry",
    "split_hexahedra",
    "face_quads",
    "face_cells",
    "faces_nodes",
    "boundary_faces",
    "boundary_triangles",
]
