"""Pictures and animations of a results directory with pyvista (off-screen by default).

A results directory (:func:`flexbody.io.write_results`) holds one ``.pvd`` series per flexible body
(deformed hexahedral mesh with point and cell fields) and per rigid tree (link lines, point data
``frame_x/y/z``), and the static scene ``scene.vtp`` (:func:`flexbody.io.write_scene`). The functions
here draw every series of the directory together, in world coordinates [m]: flexible meshes coloured by
a field (magnitude or one component) with a scalar bar titled by the quantity and its unit
(:func:`flexbody.fem.fields.describe`), optionally with their displacements magnified (``scale``); rigid
links as grey tubes with their frames as red (x), green (y) and blue (z) arrows; the scene in neutral
colours — ground markers and ground points dark grey, rails as thin grey tubes, surfaces light grey and
translucent. The camera looks obliquely at the xz-plane (y is the out-of-plane axis of most cases) with
z up; it frames the bodies and links, and the scene only as far as it reaches beyond them by less than
half their size. :func:`plotter` returns that scene as an unshown pyvista Plotter (for notebooks, the
documentation's gallery, or pictures of one's own), :func:`screenshot` writes it into an image file.

On Linux without an X display VTK is pointed at its off-screen window (EGL, else OSMesa) before the
first picture, so that it does not try X first and print "bad X server connection".
"""

from __future__ import annotations

import ctypes
import functools
import json
import logging
import math
import os
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import FlexbodyError
from ..fem.fields import describe
from .export import find_series, read_pvd
from .frames import SCENE_FILE

log = logging.getLogger(__name__)

_AXES = (("frame_x", "red"), ("frame_y", "green"), ("frame_z", "blue"))
_COLOUR = "_colour"
_OFFSCREEN_WINDOWS = (
    ("vtkEGLRenderWindow", ("libEGL.so.1", "libEGL.so")),
    ("vtkOSOpenGLRenderWindow", ("libOSMesa.so.8", "libOSMesa.so.6", "libOSMesa.so")),
)
_SCENE_STYLE: dict[str, dict[str, object]] = {
    "ground": dict(color="#4d4d4d"),
    "anchor": dict(color="#4d4d4d"),
    "surface": dict(color="lightgray", opacity=0.25, smooth_shading=True),
}


def _pyvista():
    """pyvista, imported on first use, after :func:`_choose_offscreen_window`."""
    _choose_offscreen_window()
    import pyvista

    return pyvista


@functools.cache
def _choose_offscreen_window() -> None:
    """On Linux without a display (DISPLAY unset or empty), set ``VTK_DEFAULT_OPENGL_WINDOW`` (read by
    VTK ≥ 9.4 whenever it makes a render window) to the first off-screen window whose library loads —
    EGL, then OSMesa — unless the variable is set already. Otherwise VTK tries X first and prints a
    warning before falling back to the same windows. Done once per process (cached)."""
    if not sys.platform.startswith("linux") or os.environ.get("DISPLAY") or "VTK_DEFAULT_OPENGL_WINDOW" in os.environ:
        return
    for window, libraries in _OFFSCREEN_WINDOWS:
        for library in libraries:
            try:
                ctypes.CDLL(library)
            except OSError:
                continue
            os.environ["VTK_DEFAULT_OPENGL_WINDOW"] = window
            log.debug("no DISPLAY: VTK renders with %s (%s)", window, library)
            return


@dataclass(frozen=True)
class _Series:
    """One ``.pvd`` series: name, times (s,) and the ``.vtu`` file of each step."""

    name: str
    times: np.ndarray
    files: tuple

    def read(self, t: float, scale: float = 1.0):
        """The grid of the step whose time is nearest to ``t``, as drawn (:func:`_drawn_grid`)."""
        grid = _pyvista().read(self.files[int(np.argmin(np.abs(self.times - t)))])
        return _drawn_grid(grid, scale)


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


def plotter(
    results_dir,
    *,
    field: str = "displacement",
    step: int = -1,
    component: int | None = None,
    scale: float = 1.0,
    window_size=(1200, 800),
    off_screen: bool | None = None,
):
    """The scene of ``results_dir`` at one step as a pyvista Plotter, drawn but not shown.

    Every series of the directory (flexible meshes coloured by ``field``, rigid links with their frames) and
    its static scene ``scene.vtp``, with the scalar bar, the time label and the camera of :func:`screenshot`
    (which renders this same plotter into a file). Add meshes or text to it, then call ``.show()`` (in a
    sphinx-gallery build, pyvista's scraper takes the picture) or ``.screenshot(path)``, and ``.close()``.

    Parameters
    ----------
    results_dir : path
        A results directory (:func:`flexbody.io.write_results`) holding at least one ``.pvd`` series.
    field : str
        Point (preferred) or cell array colouring the meshes that have it, e.g. "displacement" (n, 3) [m],
        "von_mises" (n,) [Pa], "cauchy_stress" (n, 9) [Pa]; its magnitude (Frobenius norm of a tensor), or
        ``component``. Ignored when the directory holds rigid-link series only.
    step : int
        Index into the steps of the longest series (negative counts from the end); the other series
        show their step nearest in time.
    component : int, optional
        0-based column of ``field`` to colour by (e.g. 2 for the z displacement [m]).
    scale : float
        Deformation scale (finite, > 0): meshes with a point array "displacement" u [m] are drawn at
        reference + ``scale`` u (reference = points − u); the label states the scale when it is not 1.
        Rigid links are drawn where they are, so for a body carried by moving links (whose u includes
        their motion) a scale other than 1 also magnifies that motion.
    window_size : (int, int)
        (width, height) in pixels.
    off_screen : bool, optional
        Passed to ``pyvista.Plotter``; None (default) follows ``pyvista.OFF_SCREEN``.

    Returns
    -------
    pyvista.Plotter
        The unshown plotter; its actors are named after the series (``"beam"``, ``"arm:links"``, …) and
        the scene's kinds (``"scene:ground"``, …).

    Raises
    ------
    FlexbodyError
        A directory without series, a step out of range, a bad ``scale``, an unknown ``field`` or
        ``component``.
    """
    return _scene_plotter(results_dir, "plotter", field, step, component, scale, window_size, off_screen)


def screenshot(
    results_dir,
    path,
    *,
    field: str = "displacement",
    step: int = -1,
    component: int | None = None,
    scale: float = 1.0,
    window_size=(1200, 800),
    off_screen: bool = True,
) -> Path:
    """Render every series of ``results_dir`` and its scene at one step into an image file (PNG, JPEG, …).

    The picture is that of :func:`plotter` (same parameters ``field``, ``step``, ``component``, ``scale``,
    ``window_size``), written to ``path``; returns ``path``.

    Parameters
    ----------
    path : str or Path
        The image file; its folder is created. The format follows the suffix (pyvista/VTK writers).
    off_screen : bool
        False opens a window; the image is taken when it is closed.
    """
    drawn = _scene_plotter(results_dir, "screenshot", field, step, component, scale, window_size, off_screen)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if off_screen:
        drawn.screenshot(str(path))
    else:
        drawn.show(screenshot=str(path))
    drawn.close()
    return path


def _scene_plotter(results_dir, who: str, field, step, component, scale, window_size, off_screen):
    """The drawn, unshown plotter of :func:`plotter` and :func:`screenshot` (``who`` names the caller in
    error messages)."""
    scale = _check_scale(scale, who)
    items = _load(results_dir)
    timeline = _timeline(items)
    if not (isinstance(step, (int, np.integer)) and -len(timeline) <= step < len(timeline)):
        raise FlexbodyError(f"{who}: step {step} out of range for {len(timeline)} steps")
    t = float(timeline[step])
    grids = [s.read(t, scale) for s in items]
    _warn_carried(items, grids, scale)
    clim = _colour_range([_field_range(grids, field, component)])
    drawn = _plotter(window_size, off_screen)
    try:
        bounds = _bounds(grids)
        scene = _add_scene(drawn, results_dir, bounds)
        label = _time_label(t, _run_kind(results_dir), scale)
        _draw(drawn, items, grids, label, field, component, clim, bounds, scene)
    except BaseException:
        drawn.close()
        raise
    return drawn


def animation(
    results_dir,
    path,
    *,
    field: str = "displacement",
    every: int = 1,
    fps: float = 10,
    component: int | None = None,
    scale: float = 1.0,
    window_size=(1200, 800),
    off_screen: bool = True,
) -> Path:
    """Write an animation of every series of ``results_dir`` and its scene: a ``.gif`` (imageio) or
    ``.mp4`` (needs imageio-ffmpeg). One frame per ``every``-th step of the longest series and the last;
    the colour range of ``field`` and the camera are fixed over the whole animation. Other parameters
    (``scale`` among them) as in :func:`screenshot`.
    """
    path = Path(path)
    _check_movie(path)
    scale = _check_scale(scale, "animation")
    if not (isinstance(every, (int, np.integer)) and every >= 1):
        raise FlexbodyError(f"animation: every must be a positive integer, got {every!r}")
    items = _load(results_dir)
    timeline = _timeline(items)
    times = timeline[np.unique(np.r_[np.arange(0, len(timeline), int(every)), len(timeline) - 1])]
    clim, bounds = _scan(items, times, field, component, scale)
    kind = _run_kind(results_dir)
    plotter = _plotter(window_size, off_screen)
    scene = _add_scene(plotter, results_dir, bounds)
    path.parent.mkdir(parents=True, exist_ok=True)
    _open(plotter, path, fps)
    for k, t in enumerate(times):
        grids = [s.read(t, scale) for s in items]
        if k == 0:
            _warn_carried(items, grids, scale)
        _draw(plotter, items, grids, _time_label(float(t), kind, scale), field, component, clim, bounds, scene)
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


def _check_scale(scale, who: str) -> float:
    if (
        isinstance(scale, bool)
        or not isinstance(scale, (int, float, np.integer, np.floating))
        or not math.isfinite(scale)
        or scale <= 0
    ):
        raise FlexbodyError(f"{who}: scale must be a finite number > 0, got {scale!r}")
    return float(scale)


def _drawn_grid(grid, scale: float):
    """``grid`` as drawn: a copy with points = reference + ``scale`` × displacement (reference = points −
    displacement) when it has the point array "displacement" and ``scale`` is not 1; else ``grid``."""
    if scale == 1.0 or "displacement" not in grid.point_data:
        return grid
    u = np.asarray(grid.point_data["displacement"], dtype=float)
    drawn = grid.copy()
    drawn.points = np.asarray(grid.points, dtype=float) + (scale - 1.0) * u
    return drawn


def _warn_carried(items, grids, scale: float) -> None:
    """A scale other than 1 on meshes drawn together with rigid links: say that it magnifies the motion
    the links give them too."""
    if scale == 1.0 or not any("frame_x" in g.point_data for g in grids):
        return
    scaled = [s.name for s, g in zip(items, grids) if "displacement" in g.point_data]
    if scaled:
        log.warning(
            "view: displacements × %g of %s include the motion of the rigid links that carry them, "
            "which is magnified too",
            scale,
            ", ".join(scaled),
        )


def _run_kind(results_dir) -> str | None:
    """ "static", "quasi_static", "dynamic" or "modal" from ``results.json``, or None (no readable file)."""
    try:
        return json.loads((Path(results_dir) / "results.json").read_text()).get("kind")
    except (OSError, ValueError, AttributeError):
        return None


def _time_label(t: float, kind: str | None, scale: float) -> str:
    """ "t = 1.2 s" (dynamic runs), "load factor 0.5" (static), "step 3" (quasi-static), "0.25 period" (a
    mode's animation, :meth:`flexbody.solvers.modal.Modes.animation`), else "t = 1.2";
    then ", displacements × 10" when ``scale`` is not 1."""
    label = {
        "dynamic": f"t = {t:.4g} s",
        "static": f"load factor {t:.4g}",
        "quasi_static": f"step {t:.4g}",
        "modal": f"{t:.4g} period",
    }.get(kind or "", f"t = {t:.4g}")
    return label if scale == 1.0 else f"{label}, displacements × {scale:g}"


# ----------------------------------------------------------------------------------- colours
def _values(grid, field: str, component: int | None):
    """(values, "point" | "cell", number of components) of ``field`` on ``grid``, reduced to scalars
    (magnitude or ``component``), or None if absent."""
    for where, data in (("point", grid.point_data), ("cell", grid.cell_data)):
        if field in data:
            a = np.asarray(data[field], dtype=float).reshape(len(data[field]), -1)
            if component is None:
                return (np.linalg.norm(a, axis=1) if a.shape[1] > 1 else a[:, 0]), where, a.shape[1]
            if not 0 <= component < a.shape[1]:
                raise FlexbodyError(f"component {component} out of range: {field!r} has {a.shape[1]} component(s)")
            return a[:, component], where, a.shape[1]
    return None


def _title(field: str, component: int | None, n_components: int) -> str:
    """The scalar bar title: quantity and unit (:func:`flexbody.fem.fields.describe`); longer than 26
    characters, it is broken before " component", " magnitude" or " Frobenius", else between words
    (VTK centres the title over the bar, near the window's right edge)."""
    text = describe(field, component, n_components)
    if len(text) <= 26:
        return text
    cut = min((i for i in (text.find(f" {w}") for w in ("component", "magnitude", "Frobenius")) if i > 0), default=-1)
    if cut > 0 and max(cut, len(text) - cut - 1) <= 26:
        return text[:cut] + "\n" + text[cut + 1 :]
    return "\n".join(textwrap.wrap(text, 26, break_long_words=False, break_on_hyphens=False))


def _field_range(grids, field: str, component: int | None) -> tuple[float, float] | None:
    """(min, max) of the scalars of ``field`` over ``grids`` (one step of every series). None when every
    series is a rigid-link series (nothing to colour); FlexbodyError if no series has the field."""
    found = [v for g in grids if (v := _values(g, field, component)) is not None]
    if not found:
        if all("frame_x" in g.point_data or "normal_force" in g.point_data for g in grids):  # links, contacts
            return None
        available = sorted({n for g in grids for n in (*g.point_data, *g.cell_data)})
        raise FlexbodyError(f"unknown field {field!r}; available fields: {available}")
    return min(float(v[0].min()) for v in found), max(float(v[0].max()) for v in found)


def _colour_range(ranges) -> tuple[float, float] | None:
    """The colour range covering the per-step ``ranges``, widened when the field is constant."""
    if ranges[0] is None:
        return None
    lo, hi = min(r[0] for r in ranges), max(r[1] for r in ranges)
    pad = 0.0 if hi > lo else (0.5 * abs(lo) or 1.0)
    return lo - pad, hi + pad


def _scan(items, times, field: str, component: int | None, scale: float = 1.0) -> tuple:
    """(colour range, bounds) over all ``times``, reading one step of the series at a time."""
    ranges, boxes = [], []
    for t in times:
        grids = [s.read(t, scale) for s in items]
        ranges.append(_field_range(grids, field, component))
        boxes.append(_bounds(grids))
    box = np.array(boxes)
    return _colour_range(ranges), np.r_[box.min(axis=0)[0::2], box.max(axis=0)[1::2]][[0, 3, 1, 4, 2, 5]]


def _bounds(grids) -> np.ndarray:
    """Bounds (xmin, xmax, ymin, ymax, zmin, zmax) [m] of the grids together."""
    b = np.array([g.bounds for g in grids if g.n_points], dtype=float)
    return np.r_[b.min(axis=0)[0::2], b.max(axis=0)[1::2]][[0, 3, 1, 4, 2, 5]]


# ----------------------------------------------------------------------------------- scene
def _add_scene(plotter, results_dir, bounds: np.ndarray) -> np.ndarray | None:
    """Draw ``scene.vtp`` of ``results_dir`` (if there is one) once, for every frame; returns its bounds."""
    path = Path(results_dir) / SCENE_FILE
    if not path.is_file():
        return None
    pv = _pyvista()
    scene = pv.read(str(path))
    if not scene.n_cells or "kind" not in scene.cell_data:
        return None
    size = float(np.linalg.norm(bounds[1::2] - bounds[0::2])) or 1.0
    kinds = np.asarray(scene.cell_data["kind"]).astype(str)
    lines, polys = _cell_lists(scene.lines), _cell_lists(scene.faces)
    points = np.asarray(scene.points)
    for kind in dict.fromkeys(kinds):
        chosen = np.flatnonzero(kinds == kind)
        kind_lines = [lines[i] for i in chosen if i < len(lines)]
        kind_polys = [polys[i - len(lines)] for i in chosen if i >= len(lines)]
        if kind_lines:
            tube = pv.PolyData(points, lines=_flat(kind_lines)).tube(radius=0.004 * size, n_sides=12)
            plotter.add_mesh(tube, name=f"scene:{kind}:lines", color="gray")
        if kind_polys:
            style = _SCENE_STYLE.get(kind, dict(color="gray"))
            plotter.add_mesh(pv.PolyData(points, faces=_flat(kind_polys)), name=f"scene:{kind}", **style)
    return np.asarray(scene.bounds, dtype=float)


def _cell_lists(flat) -> list[np.ndarray]:
    """VTK's flat cell array [n, i₁ … iₙ, m, …] as a list of index arrays."""
    flat, out, k = np.asarray(flat, dtype=np.int64), [], 0
    while k < len(flat):
        out.append(flat[k + 1 : k + 1 + flat[k]])
        k += 1 + flat[k]
    return out


def _flat(cells) -> np.ndarray:
    return np.concatenate([np.r_[len(c), c] for c in cells]).astype(np.int64)


def _framed(bounds: np.ndarray, scene: np.ndarray | None) -> np.ndarray:
    """The bounds the camera frames: ``bounds`` (bodies and links) grown to take in the scene, but by no
    more than half their diagonal on each side."""
    if scene is None:
        return bounds
    reach = 0.5 * (float(np.linalg.norm(bounds[1::2] - bounds[0::2])) or 1.0)
    out = bounds.copy()
    out[0::2] = np.minimum(bounds[0::2], np.maximum(scene[0::2], bounds[0::2] - reach))
    out[1::2] = np.maximum(bounds[1::2], np.minimum(scene[1::2], bounds[1::2] + reach))
    return out


# ----------------------------------------------------------------------------------- drawing
def _plotter(window_size, off_screen: bool):
    pv = _pyvista()
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
            raise FlexbodyError(
                "animation: writing .mp4 needs imageio-ffmpeg (pip install imageio-ffmpeg); or write a .gif"
            ) from exc


def _open(plotter, path: Path, fps: float) -> None:
    if path.suffix.lower() == ".gif":
        plotter.open_gif(str(path), fps=fps)
    else:
        plotter.open_movie(str(path), framerate=round(fps))


def _draw(plotter, items, grids, label: str, field: str, component, clim, bounds, scene=None) -> None:
    """Replace the series' actors by the given grids (one per series) with the text ``label`` (time and
    scale); the camera frames ``bounds`` and, in part, the ``scene`` bounds (:func:`_framed`)."""
    size = float(np.linalg.norm(bounds[1::2] - bounds[0::2])) or 1.0
    bar_shown, height = False, plotter.window_size[1]
    for s, grid in zip(items, grids):
        if "frame_x" in grid.point_data:
            _draw_links(plotter, s.name, grid, size)
            continue
        if (
            "normal_force" in grid.point_data
        ):  # contacts.pvd: the contact forces as arrows, the largest 15 % of the scene
            force = np.asarray(grid.point_data["force"], dtype=float)
            largest = float(np.linalg.norm(force, axis=1).max(initial=0.0)) or 1.0
            arrows = grid.glyph(orient="force", scale="force", factor=0.15 * size / largest, geom=_pyvista().Arrow())
            plotter.add_mesh(arrows, name=s.name, color="crimson")
            continue
        values = _values(grid, field, component)
        if values is None:
            plotter.add_mesh(grid, name=s.name, color="lightgray", show_edges=True)
            continue
        getattr(grid, f"{values[1]}_data")[_COLOUR] = values[0]
        title = _title(field, component, values[2])
        plotter.add_mesh(
            grid,
            name=s.name,
            scalars=_COLOUR,
            preference=values[1],
            clim=clim,
            cmap="viridis",
            show_edges=True,
            show_scalar_bar=not bar_shown,
            scalar_bar_args=dict(
                title=title,
                color="black",
                vertical=True,
                position_x=0.8,
                position_y=0.15,
                height=0.7,
                width=0.04,
                fmt="%.3g",
                title_font_size=int(0.02 * height) + 6,
                label_font_size=int(0.015 * height) + 5,
            ),
        )
        bar = plotter.scalar_bars[title]  # VTK leaves room for one title line only
        bar.SetVerticalTitleSeparation(int(0.02 * height + 6) * title.count("\n"))
        bar_shown = True
    plotter.add_text(label, name="time", color="black", font_size=12)
    _camera(plotter, bounds, shift=0.2 if bar_shown else 0.0, framed=_framed(bounds, scene))


def _draw_links(plotter, name: str, grid, size: float) -> None:
    """Links as tubes, joints as spheres and frames as arrows of length 10 % of the scene size [m]."""
    pv = _pyvista()
    segments = np.asarray(grid.cells_dict.get(pv.CellType.LINE, np.zeros((0, 2))), dtype=np.int64)
    if len(segments):
        lines = pv.PolyData(np.asarray(grid.points), lines=np.column_stack([np.full(len(segments), 2), segments]))
        plotter.add_mesh(lines.tube(radius=0.005 * size), name=f"{name}:links", color="dimgray")
    origins = np.linalg.norm(grid.point_data["frame_x"], axis=1) > 0
    joints = pv.PolyData(np.asarray(grid.points)[origins])
    for key, _colour in _AXES:
        joints[key] = np.asarray(grid.point_data[key])[origins]
    plotter.add_mesh(
        joints.glyph(geom=pv.Sphere(radius=0.012 * size), orient=False, scale=False),
        name=f"{name}:joints",
        color="black",
    )
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


def _camera(plotter, bounds: np.ndarray, shift: float = 0.0, framed: np.ndarray | None = None) -> None:
    """Oblique view (:func:`_view` of ``bounds``) fitted to ``framed`` (default ``bounds``) [m]; ``shift``
    moves the scene left by that fraction of the half window width (room for the scalar bar)."""
    framed = bounds if framed is None else framed
    centre = 0.5 * (framed[0::2] + framed[1::2])
    radius = 0.5 * float(np.linalg.norm(framed[1::2] - framed[0::2])) or 1.0
    direction, up = _view(bounds)
    plotter.camera_position = [tuple(centre + 4.0 * radius * direction), tuple(centre), tuple(up)]
    plotter.reset_camera(bounds=tuple(framed))
    plotter.camera.zoom(1.1)
    plotter.camera.SetWindowCenter(shift, 0.0)
