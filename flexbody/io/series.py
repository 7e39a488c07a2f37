"""Export of results for ParaView, pyvista and spreadsheets: VTU per step with PVD time series (flexible
bodies and rigid links), histories as CSV, and conversion of a results directory to XDMF.

Flexible bodies (:func:`write_pvd`): the deformed mesh with point data ``displacement`` [m] (from the
mesh points), ``velocity`` [m/s] (dynamic runs) and node-averaged ``green_lagrange_strain``,
``cauchy_stress`` [Pa] (3×3 as 9 components) and ``von_mises`` [Pa]; the same tensors as cell data
(element averages over the Gauss points). The fields are defined in :mod:`flexbody.fem.fields`.

Rigid trees (:func:`write_link_pvd`): line cells along the links and a vertex at each link origin, with
the link frame axes (world components) as point data ``frame_x``, ``frame_y``, ``frame_z`` and the link
index as cell data ``link``.

The static scene (:func:`write_scene`, written by the series writers): one ``scene.vtp`` (VTK XML PolyData,
not a series) with what holds the model in the world — ground markers at the joints on the ground and at
clamped node sets, the rails of prismatic joints on the ground, the surfaces of ``OnSurface``
constraints and the ground points of closures — each cell labelled by its ``kind`` and ``source``.

The contacts (:func:`~flexbody.io.contacts.write_contact_pvd`, written by the series writers when the system has
any): ``contacts.pvd``, a vertex per contact with its force, normal, gap and slip speed.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from ..errors import FlexbodyError
from ..fem import fields
from ..fem.flexible_body import FlexibleBody
from .contacts import write_contact_pvd
from .frames import recorded_steps, results_system, write_collection
from .links import write_link_series
from .scene import write_scene

log = logging.getLogger(__name__)


# ----------------------------------------------------------------------------------- flexible bodies
def body_fields(body: FlexibleBody, q: np.ndarray, v: np.ndarray | None = None) -> tuple[dict, dict]:
    """Point data and cell data dictionaries of ``body`` at its coordinates q (3n,) [m] and, if given,
    velocities v (3n,) [m/s] (names and shapes: :mod:`flexbody.fem.fields`)."""
    return fields.vtk_data(fields.body_fields(body, q, v))


def write_vtu(path, body: FlexibleBody, q: np.ndarray, v: np.ndarray | None = None, values: dict | None = None) -> Path:
    """Write the deformed mesh of ``body`` at q (3n,) with its fields to a ``.vtu`` file: ``values``
    ({name: array} as :func:`flexbody.fem.fields.body_fields` returns, e.g. recorded ones) or, by default,
    the fields computed at (q, v)."""
    import meshio

    path = Path(path)
    point_data, cell_data = fields.vtk_data(values) if values is not None else body_fields(body, q, v)
    mesh = meshio.Mesh(
        np.asarray(q, dtype=float).reshape(-1, 3),
        [(body.mesh.cell.meshio_type, body.mesh.cells)],
        point_data=point_data,
        cell_data={k: [v] for k, v in cell_data.items()},
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    meshio.write(path, mesh, file_format="vtu", binary=True)
    return path


def write_pvd(directory, results, body=None, name: str | None = None, every: int = 1) -> Path:
    """Write one ``.vtu`` per recorded step of ``results`` (every ``every``-th step and the last) and a
    ``.pvd`` collection indexing them, per flexible body.

    The fields are those recorded in ``results.fields`` (``simulate(..., fields=True)`` or
    :meth:`Results.store_fields`) or else computed from q and, for dynamic results, v.

    Parameters
    ----------
    directory : path
        Output folder (created).
    results : Results
        Static (times = load factors) or dynamic results whose ``system`` holds the body.
    body : FlexibleBody or str, optional
        Which body (default: every flexible body of the system, one series each).
    name : str, optional
        File stem of the series (default: the body's name; only with one body).

    Returns
    -------
    Path
        The ``.pvd`` file of the first body written (:func:`write_pvds` returns all of them). The static
        scene (:func:`write_scene`) is written next to it.
    """
    return write_pvds(directory, results, body, name, every)[0]


def write_pvds(directory, results, body=None, name: str | None = None, every: int = 1) -> list[Path]:
    """As :func:`write_pvd`, returning the ``.pvd`` file of every body written."""
    paths = write_body_series(directory, results, body, name, every)
    write_scene(directory, results)
    write_contact_pvd(directory, results, every)
    return paths


def write_body_series(directory, results, body, name, every) -> list[Path]:
    directory = Path(directory)
    system = results_system(results, "write_pvd")
    bodies = [
        b
        for b in list(system.bodies) + list(getattr(system, "reduced", []))
        if body is None or b is body or b.name == body
    ]
    if not bodies:
        raise FlexbodyError(f"write_pvd: no body {body!r} in the system")
    if name is not None and len(bodies) > 1:
        raise FlexbodyError(f"write_pvd: name {name!r} given for {len(bodies)} bodies; give body= as well")
    steps = recorded_steps(results, every, "write_pvd")
    paths = []
    for b in bodies:
        stem = name or b.name
        recorded = results.fields.get(b.name)
        entries = []
        has_v = results.v is not None and len(results.v) == results.n_steps
        for step in steps:
            rel = f"{stem}_{step:04d}.vtu"
            flexible, x, velocity = results.body_state(b.name, step, velocity=has_v and not recorded)
            values = {k: v[step] for k, v in recorded.items()} if recorded else None
            write_vtu(directory / rel, flexible, x, velocity, values)
            entries.append((float(results.times[step]), rel))
        paths.append(write_collection(directory / f"{stem}.pvd", entries))
    return paths


def write_link_pvd(directory, results, tree=None, every: int = 1) -> list[Path]:
    """Write the rigid links of every tree of ``results.system`` (or only ``tree``, object or name) as a
    time series: ``<tree>_NNNN.vtu`` for every ``every``-th recorded step and the last, and ``<tree>.pvd``
    (times as in :func:`write_pvd`). Geometry and data: :func:`link_mesh`; a leaf link is drawn to the
    farthest point of it that a constraint uses (a link point, or the centroid of nodes attached to it),
    else to its centre of mass.

    The static scene (:func:`write_scene`: ground markers, rails, surfaces) is written next to the series
    (also when the system has no tree).

    Returns
    -------
    list of Path
        The ``.pvd`` files, one per tree (empty when the system has no rigid tree and ``tree`` is None).
    """
    paths = write_link_series(directory, results, tree, every)
    write_scene(directory, results)
    write_contact_pvd(directory, results, every)
    return paths
