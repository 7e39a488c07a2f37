"""Export of flexible-body results for ParaView and pyvista (VTU per step, PVD time series) via meshio.

Fields written on the deformed mesh: point data ``displacement`` [m] and element-averaged, node-averaged
``green_lagrange_strain``, ``cauchy_stress`` [Pa] (3×3 as 9 components) and ``von_mises`` [Pa]; the same
quantities as cell data (element averages over the Gauss points).
"""
from __future__ import annotations

from pathlib import Path
from xml.sax.saxutils import quoteattr

import numpy as np

from .errors import FlexbodyError
from .flexible import FlexibleBody
from .mesh import _CELL_TYPE
_EXPORTED = ("green_lagrange_strain", "cauchy_stress", "von_mises")


def body_fields(body: FlexibleBody, q: np.ndarray) -> tuple[dict, dict]:
    """Point data and cell data dictionaries of ``body`` at its coordinates q (3n,)."""
    q = np.asarray(q, dtype=float)
    X = body.mesh.points
    cells = body.cell_fields(q)
    point_data = {"displacement": q.reshape(-1, 3) - X}
    cell_data = {}
    for key in _EXPORTED:
        val = cells[key].reshape(body.n_elements, -1)            # 3×3 tensors as 9 components
        cell_data[key] = val if val.shape[1] > 1 else val[:, 0]
        point_data[key] = body.nodal_average(cell_data[key])
    return point_data, cell_data


def write_vtu(path, body: FlexibleBody, q: np.ndarray) -> Path:
    """Write the deformed mesh of ``body`` at q (3n,) with its fields to a ``.vtu`` file."""
    import meshio

    path = Path(path)
    point_data, cell_data = body_fields(body, q)
    mesh = meshio.Mesh(np.asarray(q, dtype=float).reshape(-1, 3), [(_CELL_TYPE[body.mesh.nodes_per_cell],
                                                                  body.mesh.cells)],
                       point_data=point_data, cell_data={k: [v] for k, v in cell_data.items()})
    path.parent.mkdir(parents=True, exist_ok=True)
    meshio.write(path, mesh, file_format="vtu", binary=True)
    return path


def write_pvd(directory, results, body=None, name: str | None = None, every: int = 1) -> Path:
    """Write one ``.vtu`` per recorded step of ``results`` (every ``every``-th step and the last) and a
    ``.pvd`` collection indexing them.

    Parameters
    ----------
    directory : path
        Output folder (created).
    results : Results
        Static (times = load factors) or dynamic results whose ``system`` holds the body.
    body : FlexibleBody or str, optional
        Which body (default: every flexible body of the system, one series each).
    """
    directory = Path(directory)
    system = results.system
    if system is None:
        raise FlexbodyError("write_pvd: results carry no system (loaded results need the system re-attached)")
    bodies = [b for b in system.bodies if body is None or b is body or b.name == body]
    if not bodies:
        raise FlexbodyError(f"write_pvd: no body {body!r} in the system")
    paths = []
    for b in bodies:
        stem = name or b.name
        entries = []
        if not (isinstance(every, (int, np.integer)) and every >= 1):
            raise FlexbodyError(f"write_pvd: every must be a positive integer, got {every!r}")
        for step in np.unique(np.r_[np.arange(0, results.n_steps, int(every)), results.n_steps - 1]):
            step = int(step)
            rel = f"{stem}_{step:04d}.vtu"
            write_vtu(directory / rel, b, results.positions(b, step).ravel())
            entries.append((float(results.times[step]), rel))
        paths.append(_write_collection(directory / f"{stem}.pvd", entries))
    return paths[0]


def write_results(directory, results) -> Path:
    """A results directory: ``results.npz``/``results.json`` and a ``.pvd`` series per flexible body."""
    directory = Path(directory)
    results.save(directory)
    write_pvd(directory, results)
    return directory


def _write_collection(path: Path, entries) -> Path:
    lines = ['<?xml version="1.0"?>',
             '<VTKFile type="Collection" version="0.1" byte_order="LittleEndian">', "  <Collection>"]
    lines += [f'    <DataSet timestep="{t:.10g}" group="" part="0" file={quoteattr(f)}/>' for t, f in entries]
    lines += ["  </Collection>", "</VTKFile>", ""]
    path.write_text("\n".join(lines))
    return path
