"""Pictures and animations of a results directory with pyvista (off-screen by default).

A results directory (:func:`flexbody.io.write_results`) holds one ``.pvd`` series per flexible body
(deformed hexahedral mesh with point and cell fields) and per rigid tree (link lines, point data
``frame_x/y/z``). The functions here draw every series of the directory together, in world coordinates
[m]: flexible meshes coloured by a field (magnitude or one component) with a scalar bar, rigid links as
grey tubes with their frames as red (x), green (y) and blue (z) arrows. The camera looks obliquely at
the xz-plane (y is the out-of-plane axis of most cases) with z up.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import FlexbodyError
from .io import find_series, read_pvd

_AXES = (("frame_x", "red"), ("frame_y", "green"), ("frame_z", "blue"))
_COLOUR = "_colour"


@dataclass(frozen=True)
class _Series:
    """One ``.pvd`` series: name, times (s,) and the ``.vtu`` file of each step."""

    name: str
    times: np.ndarray
    files: tuple

    def read(self, t: float):
        """The grid of the step whose time is nearest to ``t``."""
        import pyvista as pv
        return pv.read(self.files[int(np.argmin(np.abs(self.times - t)))])


def series(results_dir) -> dict[str, Path]:
    """The ``.pvd`` series of ``results_dir`` by name (e.g. {"arm": …/arm.pvd, "beam": …/beam.pvd});
    FlexbodyError if the directory is missing or holds none."""
    return find_series(results_dir)


def fields(results_dir) -> dict[str, list[str]]:
    """Names of the point and cell arrays of each series (read from its first step), point arrays first."""
    out = {}
    for s in _load(results_dir):
        grid = s.read(s.times[0])
        names = list(grid.point_data.keys()) + list(grid.cell_data.keys())
        out[s.name] = list(dict.fromkeys(names))
    return out


def screenshot(results_dir, path, *, field: str = "displacement", step: int = -1, component: int | None = None,
               window_size=(1200, 800), off_screen: bool = True) -> Path:
    """Render every series of ``results_dir`` at one step into an image file (PNG, JPEG, …).

    Parameters
    ----------
    field : str
        Point (preferred) or cell array colouring the meshes that have it, e.g. "displacement" [m],
        "von_mises" [Pa]; its magnitude, or ``component`` (0-based column, e.g. 2 for z). Ignored when
        the directory holds rigid-link series only.
    step : int
        Index into the steps of the longest series (negative counts from the end); the other series
        show their step nearest in time.
    window_size : (width, height) in pixels.
    off_screen : bool
        False opens a window; the image is taken when it is closed.
    """
    items = _load(results_dir)
    timeline = _timeline(items)
    if not -len(timeline) <= step < len(timeline):
        raise FlexbodyError(f"screenshot: step {step} out of range for {len(timeline)} steps")
    t = float(timeline[step])
    grids = [s.read(t) for s in items]
    clim = _colour_range([_field_range(grids, field, component)])
    plotter = _plotter(window_size, off_screen)
    _draw(plotter, items, grids, t, field, component, clim, _bounds(grids))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if off_screen:
        plotter.screenshot(str(path))
    else:
        plotter.show(screenshot=str(path))
    plotter.close()
    return path


def animation(results_dir, path, *, field: str = "displacement", every: int = 1, fps: float = 10,
              component: int | None = None, window_size=(1200, 800), off_screen: bool = True) -> Path:
    """Write an animation of every series of ``results_dir``: a ``.gif`` (imageio) or ``.mp4`` (needs
    imageio-ffmpeg). One frame per ``every``-th step of the longest series and the last; the colour
    range of ``field`` and the camera are fixed over the whole animation. Other parameters as in
    :func:`screenshot`.
    """
    path = Path(path)
    _check_movie(path)
    if not (isinstance(every, (int, np.integer)) and every >= 1):
        raise FlexbodyError(f"animation: every must be a positive integer, got {every!r}")
    items = _load(results_dir)
    timeline = _timeline(items)
    times = timeline[np.unique(np.r_[np.arange(0, len(timeline), int(every)), len(timeline) - 1])]
    clim, bounds = _scan(items, times, field, component)
    plotter = _plotter(window_size, off_screen)
    path.parent.mkdir(parents=True, exist_ok=True)
    _open(plotter, path, fps)
    for t in times:
        _draw(plotter, items, [s.read(t) for s in items], float(t), field, component, clim, bounds)
        plotter.write_frame()
    plotter.close()
    return path


# ----------------------------------------------------------------------------------- loading
def _load(results_dir) -> list[_Series]:
    out = []
    for name, pvd in find_series(results_dir).items():
        entries = read_pvd(pvd)
        out.append(_Series(name, np.array([t for t, _ in entries]), tuple(str(f) for _, f in entries)))
    return out


def _timeline(items: list[_Series]) -> np.ndarray:
    """Times of the longest series (the steps that ``step`` and ``every`` count)."""
    return max(items, key=lambda s: len(s.times)).times


# ----------------------------------------------------------------------------------- colours
def _values(grid, field: str, component: int | None):
    """(values, "point" | "cell") of ``field`` on ``grid`` reduced to scalars, or None if absent."""
    for where, data in (("point", grid.point_data), ("cell", grid.cell_data)):
        if field in data:
            a = np.asarray(data[field], dtype=float).reshape(len(data[field]), -1)
            if component is None:
                return (np.linalg.norm(a, axis=1) if a.shape[1] > 1 else a[:, 0]), where
            if not 0 <= component < a.shape[1]:
                raise FlexbodyError(f"component {component} out of range: {field!r} has {a.shape[1]} component(s)")
            return a[:, component], where
    return None


def _field_range(grids, field: str, component: int | None) -> tuple[float, float] | None:
    """(min, max) of the scalars of ``field`` over ``grids`` (one step of every series). None when every
    series is a rigid-link series (nothing to colour); FlexbodyError if no series has the field."""
    found = [v for g in grids if (v := _values(g, field, component)) is not None]
    if not found:
        if all("frame_x" in g.point_data for g in grids):
            return None
        available = sorted({n for g in grids for n in (*g.point_data, *g.cell_data)})
        raise FlexbodyError(f"unknown field {field!r}; available fields: {available}")
    return min(float(v.min()) for v, _ in found), max(float(v.max()) for v, _ in found)


def _colour_range(ranges) -> tuple[float, float] | None:
    """The colour range covering the per-step ``ranges``, widened when the field is constant."""
    if ranges[0] is None:
        return None
    lo, hi = min(r[0] for r in ranges), max(r[1] for r in ranges)
    pad = 0.0 if hi > lo else (0.5 * abs(lo) or 1.0)
    return lo - pad, hi + pad


def _scan(items, times, field: str, component: int | None) -> tuple:
    """(colour range, bounds) over all ``times``, reading one step of the series at a time."""
    ranges, boxes = [], []
    for t in times:
        grids = [s.read(t) for s in items]
        ranges.append(_field_range(grids, field, component))
        boxes.append(_bounds(grids))
    boxes = np.array(boxes)
    return _colour_range(ranges), np.r_[boxes.min(axis=0)[0::2], boxes.max(axis=0)[1::2]][[0, 3, 1, 4, 2, 5]]


def _bounds(grids) -> np.ndarray:
    """Bounds (xmin, xmax, ymin, ymax, zmin, zmax) [m] of the grids together."""
    b = np.array([g.bounds for g in grids if g.n_points], dtype=float)
    return np.r_[b.min(axis=0)[0::2], b.max(axis=0)[1::2]][[0, 3, 1, 4, 2, 5]]


# ----------------------------------------------------------------------------------- drawing
def _plotter(window_size, off_screen: bool):
    import pyvista as pv
    plotter = pv.Plotter(off_screen=off_screen, window_size=tuple(int(w) for w in window_size))
    plotter.set_background("white")
    return plotter


def _check_movie(path: Path) -> None:
    """A .gif, or a .mp4 with imageio-ffmpeg installed."""
    if path.suffix.lower() not in (".gif", ".mp4"):
        raise FlexbodyError(f"animation: {path.name!r} must end in .gif or .mp4")
    if path.suffix.lower() == ".mp4":
        try:
            import imageio_ffmpeg  # noqa: F401
        except ImportError as exc:
            raise FlexbodyError("animation: writing .mp4 needs imageio-ffmpeg (pip install imageio-ffmpeg); "
                                "or write a .gif") from exc


def _open(plotter, path: Path, fps: float) -> None:
    if path.suffix.lower() == ".gif":
        plotter.open_gif(str(path), fps=fps)
    else:
        plotter.open_movie(str(path), framerate=int(round(fps)))


def _draw(plotter, items, grids, t: float, field: str, component, clim, bounds) -> None:
    """Replace the scene by the given grids (one per series) at time ``t`` [s]."""
    size = float(np.linalg.norm(bounds[1::2] - bounds[0::2])) or 1.0
    bar_shown, height = False, plotter.window_size[1]
    for s, grid in zip(items, grids):
        if "frame_x" in grid.point_data:
            _draw_links(plotter, s.name, grid, size)
            continue
        values = _values(grid, field, component)
        if values is None:
            plotter.add_mesh(grid, name=s.name, color="lightgray", show_edges=True)
            continue
        data = getattr(grid, f"{values[1]}_data")
        title = f"{field} component {component}" if component is not None else (
            f"{field} (magnitude)" if np.ndim(data[field]) > 1 else field)
        data[_COLOUR] = values[0]
        plotter.add_mesh(grid, name=s.name, scalars=_COLOUR, preference=values[1], clim=clim, cmap="viridis",
                         show_edges=True, show_scalar_bar=not bar_shown,
                         scalar_bar_args=dict(title=title, color="black", vertical=True, position_x=0.8,
                                              position_y=0.15, height=0.7, width=0.04, fmt="%.3g",
                                              title_font_size=int(0.02 * height) + 6,
                                              label_font_size=int(0.015 * height) + 5))
        bar_shown = True
    plotter.add_text(f"t = {t:.4g}", name="time", color="black", font_size=12)
    _camera(plotter, bounds, shift=0.2 if bar_shown else 0.0)


def _draw_links(plotter, name: str, grid, size: float) -> None:
    """Links as tubes, joints as spheres and frames as arrows of length 10 % of the scene size [m]."""
    import pyvista as pv
    segments = np.asarray(grid.cells_dict.get(pv.CellType.LINE, np.zeros((0, 2))), dtype=np.int64)
    if len(segments):
        lines = pv.PolyData(np.asarray(grid.points), lines=np.column_stack([np.full(len(segments), 2), segments]))
        plotter.add_mesh(lines.tube(radius=0.005 * size), name=f"{name}:links", color="dimgray")
    origins = np.linalg.norm(grid.point_data["frame_x"], axis=1) > 0
    joints = pv.PolyData(np.asarray(grid.points)[origins])
    for key, colour in _AXES:
        joints[key] = np.asarray(grid.point_data[key])[origins]
    plotter.add_mesh(joints.glyph(geom=pv.Sphere(radius=0.012 * size), orient=False, scale=False),
                     name=f"{name}:joints", color="black")
    for key, colour in _AXES:
        arrows = joints.glyph(orient=key, scale=False, factor=0.1 * size, geom=pv.Arrow())
        plotter.add_mesh(arrows, name=f"{name}:{key}", color=colour)


def _view(bounds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(unit direction from the scene towards the camera, up vector) for ``bounds``.

    The scene's normal is y (the xz-plane of most cases) unless the scene is flat across x or z (extent
    below a quarter of the largest); the camera looks along the normal, tilted towards the side and up
    axes: from −y with z up (x to the right), from +z with y up, or from +x with z up.
    """
    extent = bounds[1::2] - bounds[0::2]
    normal = int(np.argmin(extent)) if extent.min() < 0.25 * extent.max() else 1
    side, up, sign = {0: (1, 2, 1.0), 1: (0, 2, -1.0), 2: (0, 1, 1.0)}[normal]
    direction = np.zeros(3)
    direction[[normal, side, up]] = sign, 0.45, 0.35
    return direction / np.linalg.norm(direction), np.eye(3)[up]


def _camera(plotter, bounds: np.ndarray, shift: float = 0.0) -> None:
    """Oblique view (:func:`_view`) fitted to ``bounds`` [m]; ``shift`` moves the scene left by that
    fraction of the half window width (room for the scalar bar)."""
    centre = 0.5 * (bounds[0::2] + bounds[1::2])
    radius = 0.5 * float(np.linalg.norm(bounds[1::2] - bounds[0::2])) or 1.0
    direction, up = _view(bounds)
    plotter.camera_position = [tuple(centre + 4.0 * radius * direction), tuple(centre), tuple(up)]
    plotter.reset_camera(bounds=tuple(bounds))
    plotter.camera.zoom(1.1)
    plotter.camera.SetWindowCenter(shift, 0.0)
