"""Figures the case files share: named curves in stacked panels (:func:`plot_curves`) and the mode shapes of a
modal analysis drawn in the plane each mode moves in (:func:`plot_mode_shapes`). Re-exported by
:mod:`flexbody.io.plots` (``fb.plots``).

Every axis is labelled "quantity [unit]": :func:`plot_curves` refuses a label without its unit. matplotlib is
imported only when a figure is drawn (Agg canvas, no pyplot state).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import FlexbodyError
from .links import link_markers, link_mesh

_AXES = "xyz"


def _figure(n_rows: int, n_columns: int, width: float, height: float):
    """A matplotlib Figure on an Agg canvas (no pyplot state) and its axes (n_rows, n_columns)."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as exc:  # matplotlib is an optional dependency
        raise FlexbodyError("plotting needs matplotlib (pip install matplotlib)") from exc
    fig = Figure(figsize=(width * n_columns, height * n_rows), layout="constrained")
    FigureCanvasAgg(fig)
    return fig, fig.subplots(n_rows, n_columns, squeeze=False)


def _write(fig, path, dpi: int) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi, format="png")
    return path


def _check_label(label: object, where: str) -> str:
    text = str(label)
    if not (text.endswith("]") and " [" in text):
        raise FlexbodyError(f"{where}: axis label {text!r} must read 'quantity [unit]'")
    return text


def plot_curves(
    path,
    panels: Sequence[Mapping[str, Any]],
    *,
    xlabel: str = "t [s]",
    title: str | None = None,
    columns: int = 1,
    size: tuple[float, float] = (6.5, 2.6),
    dpi: int = 120,
) -> Path:
    """Plot named curves in panels (one axis each), with reference curves dotted in black; write a PNG.

    For the figures of a case: a quantity of several runs or components against time (or against another
    quantity), next to its closed form or reference.

    Parameters
    ----------
    path : str or Path
        PNG file to write; its parent directory is created.
    panels : sequence of mappings
        One mapping per panel, filled row by row, with the keys

        - ``"ylabel"`` (str, required): "quantity [unit]";
        - ``"curves"`` (mapping str → (x, y), required): the legend label and the data, x and y (s,);
        - ``"references"`` (mapping str → (x, y), optional): drawn as black dotted lines with their label;
        - ``"log"`` (bool, optional): |y| on a logarithmic axis (zeros left out); ``"logx"`` (bool, optional):
          a logarithmic x axis;
        - ``"markers"`` (bool, optional): points (circles) instead of lines, e.g. eigenvalues;
        - ``"xlabel"`` (str, optional): this panel's x label instead of ``xlabel``;
        - ``"title"`` (str, optional); ``"equal"`` (bool, optional): equal scales on both axes (paths).
    xlabel : str
        x label of every panel, "quantity [unit]".
    title : str, optional
        Figure title.
    columns : int
        Panels per row.
    size : (float, float)
        Width and height of one panel [inch].
    dpi : int
        Resolution of the PNG.

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    FlexbodyError
        If there is no panel, a panel has no curves, or an axis label lacks its unit (nothing is written).
    """
    if not panels:
        raise FlexbodyError("plot_curves needs at least one panel")
    for k, panel in enumerate(panels):
        if not panel.get("curves"):
            raise FlexbodyError(f"plot_curves: panel {k} has no curves")
        _check_label(panel.get("ylabel", ""), f"plot_curves, panel {k}")
        _check_label(panel.get("xlabel", xlabel), f"plot_curves, panel {k}")
    n_columns = max(1, min(int(columns), len(panels)))
    n_rows = -(-len(panels) // n_columns)
    fig, axes = _figure(n_rows, n_columns, *size)
    for ax, panel in zip(axes.ravel(), panels):
        dots = {"ls": "none", "marker": "o", "mfc": "none"} if panel.get("markers") else {}
        for style, group in ((dots, "curves"), ({"color": "k", "ls": ":", "lw": 1.2, **dots}, "references")):
            for label, (x, y) in (panel.get(group) or {}).items():
                values = np.asarray(y, dtype=float)
                if panel.get("log"):
                    values = np.where(np.abs(values) > 0.0, np.abs(values), np.nan)
                ax.plot(np.asarray(x, dtype=float), values, label=str(label), **style)
        if panel.get("log"):
            ax.set_yscale("log")
        if panel.get("logx"):
            ax.set_xscale("log")
        if panel.get("equal"):
            ax.set_aspect("equal", adjustable="datalim")
        ax.set_xlabel(panel.get("xlabel", xlabel))
        ax.set_ylabel(panel["ylabel"])
        if panel.get("title"):
            ax.set_title(panel["title"], fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    for ax in axes.ravel()[len(panels) :]:
        ax.set_visible(False)
    if title:
        fig.suptitle(title, fontsize=10)
    return _write(fig, path, dpi)


def _points(asm, q: np.ndarray, markers: dict) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Nodes (N, 3) of every flexible or reduced body and the links of every tree as line segments (k, 2, 3)
    (:func:`flexbody.io.links.link_mesh`: joint to joint, leaf links to their constrained points) at q [m]."""
    bodies = [asm.coordinates(body, q) for body in (*asm.bodies, *getattr(asm, "reduced", ()))]
    segments = []
    for tree in asm.trees:
        mesh = link_mesh(tree, asm.coordinates(tree, q), markers)
        segments.append(mesh.points[mesh.cells_dict.get("line", np.zeros((0, 2), dtype=int))])
    return bodies, segments


def plot_mode_shapes(modes: Any, path, *, amplitude: float | None = None, columns: int = 4, dpi: int = 110) -> Path:
    """Draw each mode of a modal analysis over the state it was computed about; write a PNG.

    Each panel shows the nodes of every flexible body (dots) and the links of every rigid tree (lines from
    joint to joint, as in the ParaView series) at the linearisation state q* (grey) and at q* + s x_k (blue),
    x_k the mode, projected on the plane of two world axes: the axis along which the mode moves most, and the
    axis of the largest extent of the structure (or, where it has none, of the mode's next largest motion).

    Parameters
    ----------
    modes : Modes
        The result of :func:`flexbody.modal_analysis` (frequencies, shapes, q, system).
    path : str or Path
        PNG file to write; its parent directory is created.
    amplitude : float, optional
        Largest displacement drawn [m] (default 10 % of the structure's largest extent).
    columns : int
        Panels per row.
    dpi : int
        Resolution of the PNG.

    Returns
    -------
    Path
        ``path``.
    """
    asm, q_eq = modes.system, np.asarray(modes.q, dtype=float)
    n = len(modes.frequencies)
    if n == 0:
        raise FlexbodyError("plot_mode_shapes: the modal analysis holds no modes")
    markers = link_markers(asm)

    def points(q):  # every drawn point (k, 3) and what is drawn at q
        bodies, segments = _points(asm, q, markers)
        return np.vstack([np.zeros((0, 3)), *bodies, *(s.reshape(-1, 3) for s in segments)]), bodies, segments

    rest = points(q_eq)[0]
    extent = np.ptp(rest, axis=0) if len(rest) else np.ones(3)
    reach = 0.1 * float(extent.max()) if amplitude is None else float(amplitude)
    n_columns = max(1, min(int(columns), n))
    fig, axes = _figure(-(-n // n_columns), n_columns, 3.4, 3.0)
    for k, ax in enumerate(axes.ravel()[:n]):
        x = np.asarray(modes.shapes[k], dtype=float)
        moved = points(q_eq + x)[0] - rest
        scale = reach / max(float(np.abs(moved).max()), 1e-300)
        motion = np.abs(moved).max(axis=0)
        first = int(np.argmax(motion))
        second = int(np.argmax(np.where(np.arange(3) == first, -1.0, extent)))
        if extent[second] <= 0.0:
            second = int(np.argsort(motion)[-2])
        plane = sorted((first, second))
        for q, colour in ((q_eq, "0.7"), (q_eq + scale * x, "C0")):
            _, bodies, segments = points(q)
            for nodes in bodies:
                ax.plot(nodes[:, plane[0]], nodes[:, plane[1]], ".", ms=2, color=colour)
            for lines in segments:
                for a, b in lines:
                    ax.plot([a[plane[0]], b[plane[0]]], [a[plane[1]], b[plane[1]]], "o-", lw=2, ms=3, color=colour)
        ax.set_aspect("equal", adjustable="datalim")
        ax.set_title(f"mode {k}: {modes.frequencies[k]:.4g} Hz", fontsize=9)
        ax.set_xlabel(f"{_AXES[plane[0]]} [m]", fontsize=8)
        ax.set_ylabel(f"{_AXES[plane[1]]} [m]", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
    for ax in axes.ravel()[n:]:
        ax.set_visible(False)
    fig.suptitle(f"modes about the linearisation state (grey); largest displacement drawn {reach:.3g} m", fontsize=10)
    return _write(fig, path, dpi)
