"""Time-history plots of dynamic runs and norms of actuator inputs for comparing controllers.

:func:`plot_histories` draws selected histories of one :class:`~flexbody.io.results.Results` as stacked panels
on a shared time axis; :func:`plot_torque_norms` compares the Euclidean norm of the torque vector of
several runs (as in Fig. 8(D) of Aghili 2005); :func:`rms_norm` and :func:`peak_norm` give the RMS and
L∞ ("peak") norms of a history for tables; :func:`plot_curves` (named curves against their references, panel by
panel) and :func:`plot_mode_shapes` (the modes of a modal analysis) draw the figures the case files share
(:mod:`flexbody.io.figures`).

Every axis is labelled "quantity [unit]". The units come from the run's metadata ("coordinate_units",
"row_units", "actuated_units", "task_units", recorded by :func:`~flexbody.solvers.simulation.simulate` from the
model, see ``docs/conventions.md``): generalized forces and multipliers take the unit conjugate to their
coordinate or row ([N] for [m], [N·m] for [rad]). A panel whose series have different units lists them all
("[m, rad]") and each legend entry carries its own; a run saved without units is labelled "[m or rad]"
(coordinates) or "[N or N·m]" (forces).

matplotlib is imported only when a plot is drawn (Agg backend, no pyplot state), so it stays optional.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from ..errors import FlexbodyError
from .figures import plot_curves as plot_curves
from .figures import plot_mode_shapes as plot_mode_shapes
from .histories import (
    available_histories,
    axis_label,
    column_units,
    has_history,
    history_labels,
    history_series,
    unknown_unit_label,
)
from .histories import history_units as history_units
from .norms import peak_norm as peak_norm
from .norms import rms_norm as rms_norm
from .results import Results

MAX_LEGEND = 12
"""Most legend entries per panel; further series are drawn but only counted ("+N more")."""

PANELS = ("task", "task_error", "torque", "constraint_force", "joints", "violation", "energy", "contacts")
"""Panel names understood by :func:`plot_histories`."""

_NEEDS = {  # panel -> histories of which at least one must be present ("q": results.q)
    "task": ("task_x",),
    "task_error": ("task_error",),
    "torque": ("tau_k", "tau"),
    "constraint_force": ("lam",),
    "joints": ("q",),
    "violation": ("violation",),
    "energy": ("energy",),
    "contacts": ("contact_normal_force",),
}

_STYLE = {
    "font.size": 9,
    "axes.labelsize": 9,
    "axes.titlesize": 9,
    "axes.linewidth": 0.6,
    "lines.linewidth": 0.9,
    "axes.grid": True,
    "grid.linewidth": 0.4,
    "grid.alpha": 0.6,
    "legend.fontsize": 8,
    "legend.title_fontsize": 8,
    "legend.framealpha": 0.8,
    "xtick.direction": "in",
    "ytick.direction": "in",
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
}


# ----------------------------------------------------------------------------------------- data access


def _with_units(labels: Sequence[str], units: Sequence[str] | None) -> list[str]:
    """Legend labels, each followed by its unit ("x [m]") when the units of the panel differ."""
    if not units or len(set(units)) <= 1:
        return list(labels)
    return [f"{label} [{unit}]" for label, unit in zip(labels, units)]


def _torque_series(results: Results) -> tuple[list[str], np.ndarray, list[str]]:
    """Series of the "torque" panel.

    Parameters
    ----------
    results : Results
        A run with history "tau_k" (actuator inputs) or "tau" (generalized applied forces).

    Returns
    -------
    labels : list of str
        Label of each plotted column.
    data : ndarray (s, k)
        The plotted columns: "tau_k" if present, else the columns of "tau" that are not identically zero.
    zero_labels : list of str
        Coordinate labels of the omitted (identically zero, passive) columns of "tau"; empty for "tau_k".
    """
    if has_history(results, "tau_k"):
        data = history_series(results, "tau_k")
        return history_labels(results, "actuated_labels", data.shape[1], "u"), data, []
    data = history_series(results, "tau")
    labels = history_labels(results, "coordinate_labels", data.shape[1], "q")
    zero = np.all(data == 0.0, axis=0)
    kept = [lab for lab, z in zip(labels, zero) if not z]
    return kept, data[:, ~zero], [lab for lab, z in zip(labels, zero) if z]


# ------------------------------------------------------------------------------------------ validation


def _check_panels(results: Results, panels: Sequence[str]) -> None:
    """Raise :class:`FlexbodyError` listing every unknown panel and every panel whose history is missing."""
    if not panels:
        raise FlexbodyError(f"no panels to plot; known panels: {list(PANELS)}")
    problems = []
    for panel in panels:
        if panel not in _NEEDS:
            problems.append(f"unknown panel {panel!r} (known panels: {list(PANELS)})")
        elif not any(has_history(results, key) for key in _NEEDS[panel]):
            needs = " or ".join(repr(k) for k in _NEEDS[panel])
            problems.append(f"panel {panel!r} needs history {needs}, which is missing")
    if problems:
        raise FlexbodyError("; ".join(problems) + f"; available histories: {available_histories(results)}")
    n = len(results.times)
    for key in {k for p in panels for k in _NEEDS[p] if has_history(results, k)}:
        if len(history_series(results, key)) != n:
            raise FlexbodyError(
                f"history {key!r} has {len(history_series(results, key))} samples but there are {n} recorded times"
            )


def _time_mask(times: np.ndarray, time_range) -> np.ndarray:
    """Boolean mask of the recorded times inside ``time_range`` (None: all)."""
    if time_range is None:
        return np.ones(len(times), dtype=bool)
    try:
        t0, t1 = (float(x) for x in time_range)
    except (TypeError, ValueError) as exc:
        raise FlexbodyError(f"time_range must be a pair (t0, t1), got {time_range!r}") from exc
    if not t0 < t1:
        raise FlexbodyError(f"time_range must have t0 < t1, got {time_range!r}")
    mask = (times >= t0) & (times <= t1)
    if not mask.any():
        raise FlexbodyError(
            f"no recorded times in time_range {time_range!r} (recorded: {times[0]:g} .. {times[-1]:g} s)"
        )
    return mask


# ---------------------------------------------------------------------------------------------- panels


def _plot_columns(ax, t: np.ndarray, data: np.ndarray, labels: Sequence[str], **style) -> list:
    """Plot each column of ``data`` against ``t``; label only the first :data:`MAX_LEGEND` columns."""
    lines = []
    for i in range(data.shape[1]):
        label = labels[i] if i < MAX_LEGEND else "_nolegend_"
        lines.extend(ax.plot(t, data[:, i], label=label, **style))
    return lines


def _legend(ax, n_series: int, notes: Sequence[str] = ()) -> None:
    """Small legend; the title carries ``notes`` and "+N more" when series were left unlabelled."""
    if n_series == 0:  # nothing labelled: notes as plain text
        ax.text(
            0.99, 0.95, "\n".join([*notes, "(no series)"]), transform=ax.transAxes, ha="right", va="top", fontsize=8
        )
        return
    notes = list(notes) + ([f"+{n_series - MAX_LEGEND} more"] if n_series > MAX_LEGEND else [])
    ncol = 1 if min(n_series, MAX_LEGEND) <= 4 else 2
    ax.legend(
        loc="upper right",
        fontsize=8,
        ncol=ncol,
        title="\n".join(notes) or None,
        handlelength=1.8,
        borderaxespad=0.3,
        labelspacing=0.25,
    )


def _short_list(names: Sequence[str], limit: int = 6) -> str:
    """``a, b, c, ...`` with at most ``limit`` names."""
    shown = ", ".join(names[:limit])
    return shown + (f", … ({len(names) - limit} more)" if len(names) > limit else "")


def _panel_task(ax, results: Results, t: np.ndarray, mask: np.ndarray) -> None:
    x = history_series(results, "task_x")[mask]
    units = column_units(results, "task_x", x.shape[1])
    labels = _with_units(history_labels(results, "task_labels", x.shape[1], "x"), units)
    lines = _plot_columns(ax, t, x, labels)
    notes = []
    if has_history(results, "task_desired"):
        desired = history_series(results, "task_desired")[mask]
        for line, column in zip(lines, desired.T):
            ax.plot(t, column, "--", color=line.get_color(), label="_nolegend_")
        notes.append("dashed: desired")
    ax.set_ylabel(axis_label("task coordinates", units, unknown_unit_label("task_x")))
    _legend(ax, x.shape[1], notes)


def _panel_task_error(ax, results: Results, t: np.ndarray, mask: np.ndarray) -> None:
    e = history_series(results, "task_error")[mask]
    units = column_units(results, "task_error", e.shape[1])
    _plot_columns(ax, t, e, _with_units(history_labels(results, "task_labels", e.shape[1], "x"), units))
    ax.set_ylabel(axis_label("task error", units, unknown_unit_label("task_error")))
    _legend(ax, e.shape[1])


def _panel_torque(ax, results: Results, t: np.ndarray, mask: np.ndarray) -> None:
    labels, data, zero = _torque_series(results)
    key = "tau_k" if has_history(results, "tau_k") else "tau"
    units = column_units(results, key, history_series(results, key).shape[1])
    if units is not None and key == "tau":  # the plotted (non-zero) columns only
        units = [u for u, z in zip(units, np.all(history_series(results, "tau") == 0.0, axis=0)) if not z]
    _plot_columns(ax, t, data[mask], _with_units(labels, units))
    quantity = "actuator inputs u" if key == "tau_k" else "generalized forces τ"
    ax.set_ylabel(axis_label(quantity, units, unknown_unit_label(key)))
    _legend(ax, data.shape[1], [f"zero: {_short_list(zero)}"] if zero else [])


def _panel_constraint_force(ax, results: Results, t: np.ndarray, mask: np.ndarray) -> None:
    lam = history_series(results, "lam")[mask]
    units = column_units(results, "lam", lam.shape[1])
    _plot_columns(ax, t, lam, _with_units(history_labels(results, "row_labels", lam.shape[1], "λ"), units))
    ax.set_ylabel(axis_label("multipliers λ", units, unknown_unit_label("lam")))
    _legend(ax, lam.shape[1])


def _panel_joints(ax, results: Results, t: np.ndarray, mask: np.ndarray) -> None:
    q = history_series(results, "q")[mask]
    units = column_units(results, "q", q.shape[1])
    _plot_columns(ax, t, q, _with_units(history_labels(results, "coordinate_labels", q.shape[1], "q"), units))
    ax.set_ylabel(axis_label("coordinates q", units, unknown_unit_label("q")))
    _legend(ax, q.shape[1])


def _panel_violation(ax, results: Results, t: np.ndarray, mask: np.ndarray) -> None:
    phi = history_series(results, "violation")[mask, 0]
    positive = phi > 0.0
    ax.plot(t, np.where(positive, phi, np.nan), color="C3")
    if positive.any():
        ax.set_yscale("log")
    else:
        ax.text(0.99, 0.95, "no positive values", transform=ax.transAxes, ha="right", va="top", fontsize=8)
    rows = (results.metadata or {}).get("row_units")  # ‖φ‖ over all rows: every unit among them
    ax.set_ylabel(axis_label("constraint violation ‖φ‖", rows, unknown_unit_label("violation")))


def _panel_energy(ax, results: Results, t: np.ndarray, mask: np.ndarray) -> None:
    ax.plot(t, history_series(results, "energy")[mask, 0], color="k")
    ax.set_ylabel("energy [J]")


def _panel_contacts(ax, results: Results, t: np.ndarray, mask: np.ndarray) -> None:
    """Each contact's normal force, and their sum (the contacts in the order the run records them)."""
    normal = history_series(results, "contact_normal_force")[mask]
    _plot_columns(ax, t, normal, [f"contact {i}" for i in range(normal.shape[1])])
    ax.plot(t, normal.sum(axis=1), color="k", lw=1.2, label="Σ f_n")
    ax.set_ylabel("contact normal force f_n [N]")
    _legend(ax, normal.shape[1] + 1)


_DRAW = {
    "task": _panel_task,
    "task_error": _panel_task_error,
    "torque": _panel_torque,
    "constraint_force": _panel_constraint_force,
    "joints": _panel_joints,
    "violation": _panel_violation,
    "energy": _panel_energy,
    "contacts": _panel_contacts,
}


# ------------------------------------------------------------------------------------------- figures


def _agg_figure(**figure_options):
    """A matplotlib Figure on an Agg canvas (no pyplot state)."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as exc:  # matplotlib is an optional dependency
        raise FlexbodyError("plotting needs matplotlib (pip install matplotlib)") from exc
    fig = Figure(**figure_options)
    FigureCanvasAgg(fig)
    return fig


def _new_figure(n_rows: int, height: float):
    """A matplotlib Figure on an Agg canvas with ``n_rows`` stacked axes sharing x, and the axes list."""
    fig = _agg_figure(figsize=(6.5, 0.6 + height * n_rows), layout="constrained")
    axes = fig.subplots(n_rows, 1, sharex=True, squeeze=False)[:, 0]
    return fig, list(axes)


def subplots(*grid, **kwargs):
    """``(fig, axes)`` as ``matplotlib.pyplot.subplots(*grid, **kwargs)`` but on an Agg canvas without
    pyplot state (nothing to close, no display needed); ``figsize`` goes to the figure. For case plots."""
    fig = _agg_figure(figsize=kwargs.pop("figsize", None))
    return fig, fig.subplots(*grid, **kwargs)


def save(fig, path, dpi: int = 120, tight: bool = True) -> Path:
    """Lay out (``tight``) and write a figure of :func:`subplots` to ``path`` (PNG by its suffix)."""
    if tight:
        fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    return Path(path)


def _style():
    """Context manager applying the journal-like rc style."""
    import matplotlib

    return matplotlib.rc_context(_STYLE)


def _build_histories_figure(results: Results, panels: Sequence[str], title: str | None, time_range):
    """Validated figure of :func:`plot_histories` (not saved); raises before drawing anything."""
    panels = (panels,) if isinstance(panels, str) else tuple(panels)
    _check_panels(results, panels)
    times = np.asarray(results.times, dtype=float)
    mask = _time_mask(times, time_range)
    t = times[mask]
    with _style():
        fig, axes = _new_figure(len(panels), 1.7)
        for ax, panel in zip(axes, panels):
            _DRAW[panel](ax, results, t, mask)
        axes[-1].set_xlabel("t [s]")
        if t[-1] > t[0]:
            axes[-1].set_xlim(t[0], t[-1])
        if title:
            fig.suptitle(title)
    return fig


def _save(fig, path, dpi: int) -> Path:
    """Write ``fig`` as PNG to ``path`` (creating its directory) and return the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with _style():
        fig.savefig(path, dpi=dpi, format="png")
    return path


def plot_histories(
    results: Results,
    path,
    panels: Sequence[str] = ("task", "torque", "constraint_force"),
    *,
    title: str | None = None,
    time_range: tuple[float, float] | None = None,
    dpi: int = 120,
) -> Path:
    """Plot time histories of a dynamic run as stacked panels sharing the time axis; write a PNG.

    Parameters
    ----------
    results : Results
        A dynamic run (``times`` in s) with the histories the panels need.
    path : str or Path
        PNG file to write; its parent directory is created.
    panels : sequence of str
        Panels from top to bottom, from :data:`PANELS`:

        - "task": task coordinates "task_x" (solid) and "task_desired" (dashed, same colour) if recorded;
        - "task_error": "task_error";
        - "torque": actuator inputs "tau_k", else the non-zero columns of "tau" (passive joints listed
          as "zero: ..." in the legend title);
        - "constraint_force": Lagrange multipliers "lam";
        - "joints": coordinates q;
        - "violation": constraint violation ‖φ‖ on a log axis (non-positive values skipped);
        - "energy": total energy;
        - "contacts": each contact's normal force "contact_normal_force" and their sum [N].

        Each panel's y label is "quantity [unit]" (:func:`history_units`); a panel mixing units lists
        them ("[m, rad]") and its legend entries carry their own ("x [m]").
    title : str, optional
        Figure title.
    time_range : (float, float), optional
        Plot only the recorded times t0 <= t <= t1 [s].
    dpi : int
        Resolution of the PNG.

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    FlexbodyError
        If a panel is unknown or its history is missing (all panels are checked, nothing is written),
        or ``time_range`` is invalid.
    """
    fig = _build_histories_figure(results, panels, title, time_range)
    return _save(fig, path, dpi)


_SYMBOLS = {"tau": "τ", "tau_k": "u", "lam": "λ", "q": "q", "task_x": "x", "task_error": "e"}


def _norm_units(runs, key: str) -> list[str] | None:
    """Units of the columns of history ``key`` that are not identically zero, over all ``runs`` (None if a
    run did not record them)."""
    units = []
    for res in runs:
        data = history_series(res, key)
        of_run = column_units(res, key, data.shape[1])
        if of_run is None:
            return None
        units += [u for u, z in zip(of_run, np.all(data == 0.0, axis=0)) if not z]
    return units


def plot_torque_norms(results_by_name: Mapping[str, Results], path, *, key: str = "tau", dpi: int = 120) -> Path:
    """Plot the Euclidean norm ‖u(t)‖ of history ``key`` of several runs on one axis; write a PNG.

    The y label names the units of the columns that are not identically zero ("‖τ‖ [N·m]"; "[N·m, N]"
    when revolute and prismatic joints are mixed).

    Parameters
    ----------
    results_by_name : mapping of str to Results
        Runs to compare (e.g. one per controller); the names are the legend entries.
    path : str or Path
        PNG file to write; its parent directory is created.
    key : str
        History to take the norm of ("tau", "tau_k", ...).
    dpi : int
        Resolution of the PNG.

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    FlexbodyError
        If there are no runs or a run lacks history ``key`` (checked before anything is written).
    """
    if not results_by_name:
        raise FlexbodyError("plot_torque_norms needs at least one run")
    missing = [name for name, res in results_by_name.items() if not has_history(res, key)]
    if missing:
        raise FlexbodyError(
            f"runs {missing} have no history {key!r}; available histories of the first: "
            f"{available_histories(results_by_name[missing[0]])}"
        )
    with _style():
        fig, (ax,) = _new_figure(1, 2.6)
        for name, res in results_by_name.items():
            ax.plot(
                np.asarray(res.times, dtype=float), np.linalg.norm(history_series(res, key), axis=1), label=str(name)
            )
        ax.set_xlabel("t [s]")
        ax.set_ylabel(
            axis_label(
                f"‖{_SYMBOLS.get(key, key)}‖", _norm_units(results_by_name.values(), key), unknown_unit_label(key)
            )
        )
        ax.legend(fontsize=8, loc="upper right")
    return _save(fig, path, dpi)
