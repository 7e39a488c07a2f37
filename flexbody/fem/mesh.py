"""The ``fb.mesh`` namespace: hexahedral meshes made here (:func:`box`) or read from files (:func:`read`,
:func:`write`, :func:`from_meshio`), and the :class:`HexMesh` container they give.

The container and the generator live in :mod:`flexbody.fem.hex_mesh`, the file formats (meshio, Gmsh
physical groups, Abaqus sets) in :mod:`flexbody.fem.mesh_files`.
"""

from .hex_mesh import HexMesh, box, face_quads, faces_nodes
from .mesh_files import from_meshio, read, write

__all__ = ["HexMesh", "box", "read", "write", "from_meshio", "face_quads", "faces_nodes"]
