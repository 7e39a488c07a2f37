"""Exporting results: histories as CSV, one results directory in one call (npz, series, scene, CSV), and a
results directory converted to PVD, XDMF (+ HDF5) or CSV, listing every file written.
"""

from __future__ import annotations

import logging
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from ..errors import FlexbodyError, shortened
from .frames import SCENE_FILE, results_system
from .links import write_link_series
from .scene import write_scene
from .series import write_body_series

log = logging.getLogger(__name__)


FORMATS = ("pvd", "xdmf", "csv")
MAX_CSV_WIDTH = 200


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
    for key, stored in series + list(results.histories.items()):
        value = np.asarray(stored) if stored is not None else None
        if value is None or value.ndim == 0 or value.shape[0] != n or value.dtype.kind not in "biuf":
            continue
        flat = value.reshape(n, -1).astype(float)
        if flat.shape[1] > max_width:
            log.info("histories.csv: %r left out (%d values per step > %d)", key, flat.shape[1], max_width)
            continue
        names += (
            [key] if value.ndim == 1 else [key + "".join(f"[{i}]" for i in idx) for idx in np.ndindex(*value.shape[1:])]
        )
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
    np.savetxt(path, data, delimiter=",", header=",".join(["t", *list(columns)]), comments="", fmt=fmt)
    return path


def write_results(directory, results) -> Path:
    """A results directory: ``results.npz``/``results.json``, a ``.pvd`` series per flexible body and per
    rigid tree, the static scene ``scene.vtp`` (:func:`write_scene`) and ``histories.csv``."""
    directory = Path(directory)
    system = results_system(results, "write_results")
    results.save(directory)
    if system.bodies or getattr(system, "reduced", None):
        write_body_series(directory, results, None, None, 1)
    write_link_series(directory, results, None, 1)
    write_scene(directory, results)
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
        themselves, copied with their ``.vtu`` files when ``out_dir`` differs. With "xdmf" and "pvd" the
        static scene ``scene.vtp`` (:func:`write_scene`), when the directory has one, is copied along.
    out_dir : path, optional
        Output folder (default ``results_dir``; created).

    Returns
    -------
    list of Path
        Every file of the export, in ``out_dir``: "csv": ``[histories.csv]``; "xdmf": per series
        ``<name>.xdmf`` then ``<name>.h5``; "pvd": per series ``<name>.pvd`` then its ``.vtu`` files
        (those already there when ``out_dir`` is ``results_dir``: nothing is copied then); then
        ``scene.vtp`` if there is one.
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
    written = []
    for name, pvd in pvds.items():
        if fmt == "xdmf":
            xdmf = pvd_to_xdmf(pvd, out / f"{name}.xdmf")
            written += [xdmf, xdmf.with_suffix(".h5")]
        else:
            written += _copy_series(pvd, out)
    if (source / SCENE_FILE).is_file():
        written.append(_copy_file(source / SCENE_FILE, out / SCENE_FILE))
    return written


def find_series(directory) -> dict[str, Path]:
    """The ``.pvd`` series of ``directory`` by name (file stem), sorted; FlexbodyError if there is none."""
    directory = Path(directory)
    if not directory.is_dir():
        raise FlexbodyError(f"results directory {str(directory)!r} does not exist or is not a directory")
    found = {p.stem: p for p in sorted(directory.glob("*.pvd"))}
    if not found:
        nested = sorted({p.parent.relative_to(directory).as_posix() for p in directory.glob("*/**/*.pvd")})
        hint = (
            f"; its sub-directories {shortened(nested)} hold series: give one of them"
            if nested
            else " (write them with flexbody.io.write_results)"
        )
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
            writer.write_data(
                t,
                point_data={**mesh.point_data, "position": mesh.points},
                cell_data={k: list(v) for k, v in mesh.cell_data.items()},
            )
    return xdmf


def _check_same_topology(first, mesh, vtu: Path) -> None:
    same = (
        len(first.points) == len(mesh.points)
        and len(first.cells) == len(mesh.cells)
        and all(a.type == b.type and np.array_equal(a.data, b.data) for a, b in zip(first.cells, mesh.cells))
    )
    if not same:
        raise FlexbodyError(
            f"pvd_to_xdmf: {str(vtu)!r} has other cells than the first step of its series "
            "(an XDMF time series keeps one topology)"
        )


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
            rows = [
                np.column_stack(
                    [np.full(len(data), meshio_type_to_xdmf_index[kind])]
                    + ([np.full(len(data), 2)] if kind == "line" else [])
                    + [data]
                ).ravel()
                for kind, data in cells
            ]
            flat = np.concatenate(rows).astype(np.int64)
            topo = ET.SubElement(
                grid, "Topology", TopologyType="Mixed", NumberOfElements=str(sum(len(d) for _, d in cells))
            )
            dt, prec = numpy_to_xdmf_dtype[flat.dtype.name]
            item = ET.SubElement(
                topo, "DataItem", DataType=dt, Dimensions=str(len(flat)), Format=self.data_format, Precision=prec
            )
            item.text = self.numpy_to_xml_string(flat)

    return Writer


def _xdmf_writer(path: Path):
    try:
        import h5py  # noqa: F401
    except ImportError as exc:
        raise FlexbodyError("export to XDMF needs h5py: pip install h5py") from exc
    return _xdmf_writer_class()(path)


def _copy_series(pvd: Path, out: Path) -> list[Path]:
    """Copy a ``.pvd`` and the files it lists (same relative paths) to ``out``; nothing if it is there.
    Returns the ``.pvd`` and its files in ``out``."""
    files = [_copy_file(vtu, out / vtu.relative_to(pvd.parent)) for _, vtu in read_pvd(pvd)]
    return [_copy_file(pvd, out / pvd.name), *files]


def _copy_file(source: Path, target: Path) -> Path:
    """Copy ``source`` to ``target`` (nothing when they are the same file); returns ``target``."""
    if not (target.exists() and target.resolve() == source.resolve()):
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
    return target
