"""Results and what is written from them: :class:`Results` (histories, fields, events; save and load),
VTU/PVD series of flexible bodies and rigid links, the scene file, CSV and XDMF export, pyvista views
and matplotlib plots. Heavy libraries (pyvista, matplotlib, h5py) are imported when used.

May import: errors, deprecation, fem, rigid, constraints, system.
"""

from .contacts import write_contact_pvd
from .export import (
    FORMATS,
    export,
    find_series,
    pvd_to_xdmf,
    read_pvd,
    write_columns_csv,
    write_histories_csv,
    write_results,
)
from .frames import SCENE_FILE, frame_stride
from .links import link_mesh, write_link_vtu
from .results import Results
from .run_writer import RunWriter
from .scene import SCENE_KINDS, write_scene
from .series import body_fields, write_link_pvd, write_pvd, write_pvds, write_vtu

__all__ = [
    "Results",
    "RunWriter",
    "FORMATS",
    "SCENE_FILE",
    "SCENE_KINDS",
    "body_fields",
    "export",
    "find_series",
    "frame_stride",
    "link_mesh",
    "pvd_to_xdmf",
    "read_pvd",
    "write_columns_csv",
    "write_histories_csv",
    "write_link_pvd",
    "write_contact_pvd",
    "write_link_vtu",
    "write_pvd",
    "write_pvds",
    "write_results",
    "write_scene",
    "write_vtu",
]
