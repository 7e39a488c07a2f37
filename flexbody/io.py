"""Export of results for ParaView, pyvista and spreadsheets: VTU per step with PVD time series (flexible
bodies and rigid links), histories as CSV, and conversion of a results directory to XDMF.

Flexible bodies (:func:`write_pvd`): the deformed mesh with point data ``displacement`` [m] (from the
mesh points), ``velocity`` [m/s] (dynamic runs) and node-averaged ``green_lagrange_strain``,
``cauchy_stress`` [Pa] (3×3 as 9 components) and ``von_mises`` [Pa]; the same tensors as cell data
(element averages over the Gauss points). The fields are defined in :mod:`flexbody.fields`.

Rigid trees (:func:`write_link_pvd`): line cells along the links and a vertex at each link origin, with
the link frame axes (world components) as point data ``frame_x``, ``frame_y``, ``frame_z`` and the link
index as cell data ``link``.
"""
from __future__ import annotations

import logging
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path
from xml.sax.saxutils import quoteattr

import numpy as np

from . import fields
from .errors import FlexbodyError, shortened
from .flexible import FlexibleBody
from .mesh import _CELL_TYPE

log = logging.getLogger(__name__)

FORMATS = ("pvd", "xdmf", "csv")
MAX_CSV_WIDTH = 200


# ----------------------------------------------------------------------------------- flexible bodies
def body_fields(body: FlexibleBody, q: np.ndarray, v: np.ndarray | None = None) -> tuple[dict, dict]:
    """Point data and cell data dictionaries of ``body`` at its coordinates q (3n,) [m] and, if given,
    velocities v (3n,) [m/s] (names and shapes: :mod:`flexbody.fields`)."""
    return fields.vtk_data(fields.body_fields(body, q, v))


def write_vtu(path, body: FlexibleBody, q: np.ndarray, v: np.ndarray | None = None,
              values: dict | None = None) -> Path:
    """Write the deformed mesh of ``body`` at q (3n,) with its fields to a ``.vtu`` file: ``values``
    ({name: array} as :func:`flexbody.fields.body_fields` returns, e.g. recorded ones) or, by default,
    the fields computed at (q, v)."""
    import meshio

    path = Path(path)
    point_data, cell_data = fields.vtk_data(values) if values is not None else body_fields(body, q, v)
    mesh = meshio.Mesh(np.asarray(q, dtype=float).reshape(-1, 3), [(_CELL_TYPE[body.mesh.nodes_per_cell],
                                                                  body.mesh.cells)],
                       point_data=point_data, cell_data={k: [v] for k, v in cell_data.items()})
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
        The ``.pvd`` file of the first body written (:func:`write_pvds` returns all of them).
    """
    return write_pvds(directory, results, body, name, every)[0]


def write_pvds(directory, results, body=None, name: str | None = None, every: int = 1) -> list[Path]:
    """As :func:`write_pvd`, returning the ``.pvd`` file of every body written."""
    directory = Path(directory)
    system = _system(results, "write_pvd")
    bodies = [b for b in system.bodies if body is None or b is body or b.name == body]
    if not bodies:
        raise FlexbodyError(f"write_pvd: no body {body!r} in the system")
    if name is not None and len(bodies) > 1:
        raise FlexbodyError(f"write_pvd: name {name!r} given for {len(bodies)} bodies; give body= as well")
    steps = _steps(results, every, "write_pvd")
    paths = []
    for b in bodies:
        stem = name or b.name
        recorded = results.fields.get(b.name)
        entries = []
        has_v = results.v is not None and len(results.v) == results.n_steps
        for step in steps:
            rel = f"{stem}_{step:04d}.vtu"
            if recorded:
                values, velocity = {k: v[step] for k, v in recorded.items()}, None
            else:
                values, velocity = None, results.v[step, results._slice(b)] if has_v else None
            write_vtu(directory / rel, b, results.positions(b, step).ravel(), velocity, values)
            entries.append((float(results.times[step]), rel))
        paths.append(_write_collection(directory / f"{stem}.pvd", entries))
    return paths


# ----------------------------------------------------------------------------------- rigid links
def link_mesh(tree, q: np.ndarray, markers: dict | None = None):
    """The links of ``tree`` at joint coordinates q (n_dofs,) as a :class:`meshio.Mesh` (world frame, m).

    Points: the link origins (joint frames after the joint motion) in link order, then one end point per
    leaf link (a link without children). Line cells join each link origin to its children's origins and
    each leaf origin to its end point: the farthest of the leaf's ``markers`` (link-frame offsets (k, 3),
    e.g. constrained link points or the centre of attached nodes), else its centre of mass, else a point
    0.1 m along its x axis. One vertex cell per link origin. Point data ``frame_x``, ``frame_y``,
    ``frame_z`` (n_points, 3): the link's axes (columns of R) at its origin, zero at end points; cell data
    ``link``: index of the link a cell belongs to.
    """
    import meshio

    kin = tree.kinematics(q)
    n = tree.n_links
    children = {i: [l.index for l in tree.links if l.parent is not None and l.parent.index == i] for i in range(n)}
    leaves = [i for i in range(n) if not children[i]]
    tips = np.array([kin.p[i] + kin.R[i] @ _leaf_offset(tree.links[i], (markers or {}).get(tree.links[i]))
                     for i in leaves]).reshape(-1, 3)
    points = np.vstack([kin.p, tips])
    lines = [(i, c) for i in range(n) for c in children[i]] + [(i, n + k) for k, i in enumerate(leaves)]
    line_link = np.array([i for i, _ in lines], dtype=np.int64)
    frames = np.zeros((3, len(points), 3))
    frames[:, :n] = kin.R.transpose(2, 0, 1)                                   # frames[a, i] = R_i[:, a]
    return meshio.Mesh(points, [("line", np.array(lines, dtype=np.int64).reshape(-1, 2)),
                                ("vertex", np.arange(n, dtype=np.int64)[:, None])],
                       point_data={"frame_x": frames[0], "frame_y": frames[1], "frame_z": frames[2]},
                       cell_data={"link": [line_link, np.arange(n, dtype=np.int64)]})


def write_link_vtu(path, tree, q: np.ndarray, markers: dict | None = None) -> Path:
    """Write the links of ``tree`` at joint coordinates q (n_dofs,) to a ``.vtu`` file (see :func:`link_mesh`)."""
    import meshio

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    meshio.write(path, link_mesh(tree, q, markers), file_format="vtu", binary=True)
    return path


def write_link_pvd(directory, results, tree=None, every: int = 1) -> list[Path]:
    """Write the rigid links of every tree of ``results.system`` (or only ``tree``, object or name) as a
    time series: ``<tree>_NNNN.vtu`` for every ``every``-th recorded step and the last, and ``<tree>.pvd``
    (times as in :func:`write_pvd`). Geometry and data: :func:`link_mesh`; a leaf link is drawn to the
    farthest point of it that a constraint uses (a link point, or the centroid of nodes attached to it),
    else to its centre of mass.

    Returns
    -------
    list of Path
        The ``.pvd`` files, one per tree (empty when the system has no rigid tree and ``tree`` is None).
    """
    directory = Path(directory)
    system = _system(results, "write_link_pvd")
    trees = list(getattr(system, "trees", ()))
    if tree is not None:
        trees = [t for t in trees if t is tree or t.name == tree]
        if not trees:
            raise FlexbodyError(f"write_link_pvd: no rigid tree {getattr(tree, 'name', tree)!r} in the system; "
                                f"trees: {[t.name for t in system.trees]}")
    steps = _steps(results, every, "write_link_pvd")
    markers = _link_markers(system)
    paths = []
    for t in trees:
        columns = _tree_slice(results, system, t)
        entries = []
        for step in steps:
            rel = f"{t.name}_{step:04d}.vtu"
            write_link_vtu(directory / rel, t, results.q[step, columns], markers)
            entries.append((float(results.times[step]), rel))
        paths.append(_write_collection(directory / f"{t.name}.pvd", entries))
    return paths


def _leaf_offset(link, markers) -> np.ndarray:
    """End point (3,) of a leaf link in its frame [m]: farthest marker, else com, else 0.1 m along x."""
    pts = np.asarray(markers if markers else np.zeros((0, 3)), dtype=float).reshape(-1, 3)
    if np.linalg.norm(pts, axis=1).max(initial=0.0) > 0:
        return pts[np.argmax(np.linalg.norm(pts, axis=1))]
    if np.linalg.norm(link.com) > 0:
        return np.asarray(link.com, dtype=float)
    return np.array([0.1, 0.0, 0.0])


def _link_markers(system) -> dict:
    """Link-frame offsets used by the constraints, per link: link points of anchors and the centroid of
    node sets attached to a link (their offsets are known once the system is assembled)."""
    markers: dict = {}
    for c in getattr(system, "constraints", ()):
        for a in getattr(c, "anchors", ()):
            if hasattr(a, "link") and hasattr(a, "offset"):
                markers.setdefault(a.link, []).append(np.asarray(a.offset, dtype=float))
        offsets = getattr(c, "offsets", None)
        if hasattr(getattr(c, "link", None), "tree") and isinstance(offsets, np.ndarray) and offsets.size:
            markers.setdefault(c.link, []).append(offsets.reshape(-1, 3).mean(axis=0))
    return markers


def _tree_slice(results, system, tree) -> slice:
    if tree.name in results.body_slices:
        start, stop = results.body_slices[tree.name]
        return slice(start, stop)
    return system.slices[tree]


# ----------------------------------------------------------------------------------- histories
def write_histories_csv(path, results, *, max_width: int = MAX_CSV_WIDTH) -> Path:
    """Write the time histories of ``results`` as a plain CSV table (one row per recorded step).

    Columns: ``t`` (the results' ``times``: s, or load factors for static runs); ``q[i]`` and ``v[i]``
    (generalized coordinates and velocities) only when n_dofs ≤ ``max_width`` (200); then every history
    of ``results.histories`` whose first axis is the step count and that has at most ``max_width`` values
    per step, flattened per step (C order): ``name`` for a scalar, ``name[i]`` for a vector,
    ``name[i][j]`` for a matrix (no comma inside a name, so that ``numpy.genfromtxt(names=True)``
    reads the header; it shortens ``a[0]`` to ``a0``). Numbers are written with 17 significant digits
    (exact round trip). Units: those of the producing solver.
    """
    path = Path(path)
    n = results.n_steps
    names, blocks = ["t"], [np.asarray(results.times, dtype=float).reshape(n, 1)]
    series = [("q", results.q), ("v", results.v)] if results.q.shape[-1] <= max_width else []
    for key, value in series + list(results.histories.items()):
        value = np.asarray(value) if value is not None else None
        if value is None or value.ndim == 0 or value.shape[0] != n or value.dtype.kind not in "biuf":
            continue
        flat = value.reshape(n, -1).astype(float)
        if flat.shape[1] > max_width:
            log.info("histories.csv: %r left out (%d values per step > %d)", key, flat.shape[1], max_width)
            continue
        names += [key] if value.ndim == 1 else [key + "".join(f"[{i}]" for i in idx)
                                                for idx in np.ndindex(*value.shape[1:])]
        blocks.append(flat)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savetxt(path, np.hstack(blocks), delimiter=",", header=",".join(names), comments="", fmt="%.17g")
    return path


def write_columns_csv(path, times, columns: dict, fmt: str = "%.12e") -> Path:
    """Write a CSV table with the column ``t`` (``times``, (s,)) and then one column per entry of
    ``columns`` ({name: array (s,)}, in order); for the hand-picked histories of the case files."""
    path = Path(path)
    data = np.column_stack([np.asarray(times, dtype=float)] + [np.asarray(c, dtype=float) for c in columns.values()])
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savetxt(path, data, delimiter=",", header=",".join(["t"] + list(columns)), comments="", fmt=fmt)
    return path


def write_results(directory, results) -> Path:
    """A results directory: ``results.npz``/``results.json``, a ``.pvd`` series per flexible body and per
    rigid tree, and ``histories.csv``."""
    directory = Path(directory)
    system = _system(results, "write_results")
    results.save(directory)
    if system.bodies:
        write_pvd(directory, results)
    write_link_pvd(directory, results)
    write_histories_csv(directory / "histories.csv", results)
    return directory


# ----------------------------------------------------------------------------------- conversion
def export(results_dir, fmt: str, out_dir=None) -> list[Path]:
    """Export a results directory written by :func:`write_results` (no system needed).

    Parameters
    ----------
    results_dir : path
        Directory with ``results.npz``/``results.json`` and ``.pvd`` series.
    fmt : {"pvd", "xdmf", "csv"}
        "csv": ``histories.csv`` (:func:`write_histories_csv`) from the saved results; "xdmf": each
        ``<name>.pvd`` series as ``<name>.xdmf`` + ``<name>.h5`` (:func:`pvd_to_xdmf`); "pvd": the series
        themselves, copied with their ``.vtu`` files when ``out_dir`` differs.
    out_dir : path, optional
        Output folder (default ``results_dir``; created).

    Returns
    -------
    list of Path
        The files written (``.csv``, ``.xdmf`` or ``.pvd``).
    """
    if fmt not in FORMATS:
        raise FlexbodyError(f"export: unknown format {fmt!r}; valid formats: {', '.join(FORMATS)}")
    source = Path(results_dir)
    if not source.is_dir():
        raise FlexbodyError(f"export: results directory {str(source)!r} does not exist or is not a directory")
    out = source if out_dir is None else Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if fmt == "csv":
        from .results import Results
        return [write_histories_csv(out / "histories.csv", Results.load(source))]
    pvds = find_series(source)
    if fmt == "xdmf":
        return [pvd_to_xdmf(pvd, out / f"{name}.xdmf") for name, pvd in pvds.items()]
    return [_copy_series(pvd, out) for pvd in pvds.values()]


def find_series(directory) -> dict[str, Path]:
    """The ``.pvd`` series of ``directory`` by name (file stem), sorted; FlexbodyError if there is none."""
    directory = Path(directory)
    if not directory.is_dir():
        raise FlexbodyError(f"results directory {str(directory)!r} does not exist or is not a directory")
    found = {p.stem: p for p in sorted(directory.glob("*.pvd"))}
    if not found:
        nested = sorted({p.parent.relative_to(directory).as_posix() for p in directory.glob("*/**/*.pvd")})
        hint = (f"; its sub-directories {shortened(nested)} hold series: give one of them" if nested
                else " (write them with flexbody.io.write_results)")
        raise FlexbodyError(f"no .pvd series in {str(directory)!r}{hint}")
    return found


def read_pvd(path) -> list[tuple[float, Path]]:
    """The (time, ``.vtu`` path) entries of a ``.pvd`` collection, in file order; paths resolved
    relative to the ``.pvd``."""
    path = Path(path)
    try:
        root = ET.parse(path).getroot()
        entries = [(float(d.get("timestep", "0")), path.parent / d.get("file")) for d in root.iter("DataSet")]
    except (OSError, ET.ParseError, TypeError, ValueError) as exc:
        raise FlexbodyError(f"cannot read the series {str(path)!r}: {exc}") from exc
    if not entries:
        raise FlexbodyError(f"the series {str(path)!r} lists no data sets")
    missing = [str(f) for _, f in entries if not f.is_file()]
    if missing:
        raise FlexbodyError(f"the series {str(path)!r} refers to missing files: {missing[:3]}")
    return entries


def pvd_to_xdmf(pvd, xdmf) -> Path:
    """Convert a ``.pvd`` series of ``.vtu`` files with one topology to an XDMF time series
    (``xdmf`` + the ``.h5`` next to it) with meshio's TimeSeriesWriter.

    The XDMF mesh is written once: its points are those of the first step minus its ``displacement``
    where that point field exists (the undeformed mesh: ParaView's Warp By Vector on ``displacement``
    shows the deformed body), else the first step's points. Every step keeps all point data and cell
    data of its ``.vtu`` plus point data ``position`` (n_points, 3) [m], the step's own point
    coordinates (ParaView: Calculator ``position`` with "Coordinate Results").
    """
    import meshio

    pvd, xdmf = Path(pvd), Path(xdmf)
    entries = read_pvd(pvd)
    first = meshio.read(entries[0][1])
    points = first.points - first.point_data["displacement"] if "displacement" in first.point_data else first.points
    xdmf.parent.mkdir(parents=True, exist_ok=True)
    with _xdmf_writer(xdmf) as writer:
        writer.write_points_cells(points, [(c.type, c.data.copy()) for c in first.cells])
        for t, vtu in entries:
            mesh = first if vtu == entries[0][1] else meshio.read(vtu)
            _check_same_topology(first, mesh, vtu)
            writer.write_data(t, point_data={**mesh.point_data, "position": mesh.points},
                              cell_data={k: list(v) for k, v in mesh.cell_data.items()})
    return xdmf


def _check_same_topology(first, mesh, vtu: Path) -> None:
    same = len(first.points) == len(mesh.points) and len(first.cells) == len(mesh.cells) and all(
        a.type == b.type and np.array_equal(a.data, b.data) for a, b in zip(first.cells, mesh.cells))
    if not same:
        raise FlexbodyError(f"pvd_to_xdmf: {str(vtu)!r} has other cells than the first step of its series "
                            "(an XDMF time series keeps one topology)")


def _xdmf_writer_class():
    from meshio.xdmf import TimeSeriesWriter
    from meshio.xdmf.common import meshio_to_xdmf_type, meshio_type_to_xdmf_index, numpy_to_xdmf_dtype

    class Writer(TimeSeriesWriter):
        """meshio 5.3's TimeSeriesWriter with two fixes: the ``.h5`` file goes next to the ``.xdmf`` (not
        into the working directory), and a mixed topology with 2-node lines is written (meshio fails to
        prepend their node count)."""

        def __enter__(self):
            import h5py
            self.h5_filename = self.filename.with_suffix(".h5")
            self.h5_file = h5py.File(self.h5_filename, "w")
            return self

        def cells(self, cells, grid) -> None:
            if len(cells) == 1 or self.data_format != "HDF":
                return super().cells(cells, grid)
            for cell_type, _ in cells:
                if cell_type not in meshio_to_xdmf_type:
                    raise FlexbodyError(f"pvd_to_xdmf: cell type {cell_type!r} has no XDMF equivalent")
            rows = [np.column_stack([np.full(len(data), meshio_type_to_xdmf_index[kind])]
                                    + ([np.full(len(data), 2)] if kind == "line" else []) + [data]).ravel()
                    for kind, data in cells]
            flat = np.concatenate(rows).astype(np.int64)
            topo = ET.SubElement(grid, "Topology", TopologyType="Mixed",
                                 NumberOfElements=str(sum(len(d) for _, d in cells)))
            dt, prec = numpy_to_xdmf_dtype[flat.dtype.name]
            item = ET.SubElement(topo, "DataItem", DataType=dt, Dimensions=str(len(flat)),
                                 Format=self.data_format, Precision=prec)
            item.text = self.numpy_to_xml_string(flat)

    return Writer


def _xdmf_writer(path: Path):
    try:
        import h5py  # noqa: F401
    except ImportError as exc:
        raise FlexbodyError("export to XDMF needs h5py: pip install h5py") from exc
    return _xdmf_writer_class()(path)


def _copy_series(pvd: Path, out: Path) -> Path:
    """Copy a ``.pvd`` and the files it lists (same relative paths) to ``out``; nothing if it is there."""
    target = out / pvd.name
    if target.resolve() == pvd.resolve():
        return pvd
    for _, vtu in read_pvd(pvd):
        dest = out / vtu.relative_to(pvd.parent)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(vtu, dest)
    shutil.copy2(pvd, target)
    return target


# ----------------------------------------------------------------------------------- helpers
def _system(results, who: str):
    if results.system is None:
        raise FlexbodyError(f"{who}: results carry no system (loaded results need the system re-attached)")
    return results.system


def _steps(results, every, who: str) -> list[int]:
    """Every ``every``-th recorded step and the last."""
    if not (isinstance(every, (int, np.integer)) and every >= 1):
        raise FlexbodyError(f"{who}: every must be a positive integer, got {every!r}")
    if results.n_steps == 0:
        raise FlexbodyError(f"{who}: the results hold no recorded step")
    return [int(s) for s in np.unique(np.r_[np.arange(0, results.n_steps, int(every)), results.n_steps - 1])]


def _write_collection(path: Path, entries) -> Path:
    lines = ['<?xml version="1.0"?>',
             '<VTKFile type="Collection" version="0.1" byte_order="LittleEndian">', "  <Collection>"]
    lines += [f'    <DataSet timestep="{t:.10g}" group="" part="0" file={quoteattr(f)}/>' for t, f in entries]
    lines += ["  </Collection>", "</VTKFile>", ""]
    path.write_text("\n".join(lines))
    return path
