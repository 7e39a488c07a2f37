"""The histories of a run's :class:`~flexbody.io.results.Results` as arrays, with their labels and units, for plots
and tables.

"q" names the coordinates (``results.q``), every other key a history. Units come from the run's metadata
("coordinate_units", "row_units", "actuated_units", "task_units", recorded by
:func:`~flexbody.solvers.simulation.simulate` from the model, see ``docs/conventions.md``): generalized forces and
multipliers take the unit conjugate to their coordinate or row ([N] for [m], [N·m] for [rad]); a run saved without
units says so ("m or rad", "N or N·m").
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..constraints.base import force_unit
from ..errors import FlexbodyError
from .results import Results


def has_history(results: Results, name: str) -> bool:
    """Whether ``results`` holds history ``name`` ("q" means the coordinates)."""
    if name == "q":
        return results.q is not None and np.size(results.q) > 0
    return name in results.histories


def available_histories(results: Results) -> list[str]:
    """Names of the histories present in ``results`` (including "q")."""
    return sorted(results.histories) + (["q"] if has_history(results, "q") else [])


def history_series(results: Results, key: str) -> np.ndarray:
    """History ``key`` as a float array (s, k); 1-D histories become one column."""
    data = np.asarray(results.q if key == "q" else results.histories[key], dtype=float)
    return data.reshape(len(data), -1)


def history_labels(results: Results, meta_key: str, count: int, prefix: str) -> list[str]:
    """Labels ``results.metadata[meta_key]`` if present with ``count`` entries, else ``prefix0, prefix1, ...``."""
    labels = (results.metadata or {}).get(meta_key)
    if labels is not None and len(labels) == count:
        return [str(lab) for lab in labels]
    return [f"{prefix}{i}" for i in range(count)]


_UNIT_SOURCES = {  # history -> (metadata key of the units, take the conjugate force unit?)
    "q": ("coordinate_units", False),
    "task_x": ("task_units", False),
    "task_desired": ("task_units", False),
    "task_error": ("task_units", False),
    "tau": ("coordinate_units", True),
    "tau_k": ("actuated_units", True),
    "lam": ("row_units", True),
    "constraint_force": ("coordinate_units", True),
}


_FORCES = ("tau", "tau_k", "lam", "constraint_force")


def unknown_unit_label(key: str) -> str:
    """What a label says for history ``key`` of a run saved without units."""
    if key in _FORCES:
        return "N or N·m"
    return "m or rad" if key in _UNIT_SOURCES or key == "violation" else "unit unknown"


def column_units(results: Results, key: str, count: int) -> list[str] | None:
    """Unit of each of the ``count`` columns of history ``key`` from the run's metadata, None if unknown."""
    if key == "energy":
        return ["J"] * count
    meta_key, conjugate = _UNIT_SOURCES.get(key, (None, False))
    units = (results.metadata or {}).get(meta_key) if meta_key else None
    if units is None or len(units) != count:
        return None
    return [force_unit(str(u)) if conjugate else str(u) for u in units]


def history_units(results: Results, key: str) -> list[str] | None:
    """Unit of each column of history ``key`` ("q": the coordinates) of a run, from its metadata.

    Parameters
    ----------
    results : Results
        A run of :func:`~flexbody.solvers.simulation.simulate` (its metadata holds "coordinate_units",
        "row_units", "actuated_units" and, with a task controller, "task_units").
    key : str
        "q", "task_x", "task_desired", "task_error" (units of the coordinates or task rows), "tau",
        "tau_k", "constraint_force" (force conjugate to the coordinate: [N] on [m], [N·m] on [rad]),
        "lam" (conjugate to the row's value φ) or "energy" ([J]).

    Returns
    -------
    list of str or None
        One unit per column, or None when the run did not record them (saved before units were recorded,
        or by a model without them) or the history has no known unit.

    Raises
    ------
    FlexbodyError
        If the history is missing.
    """
    if not has_history(results, key):
        raise FlexbodyError(f"results have no history {key!r}; available histories: {available_histories(results)}")
    return column_units(results, key, history_series(results, key).shape[1])


def axis_label(quantity: str, units: Sequence[str] | None, unknown: str = "unit unknown") -> str:
    """``"quantity [u1, u2]"`` with the distinct ``units`` in order, or ``"quantity [unknown]"`` when there
    are none (e.g. ``axis_label("task coordinates", ["m", "m", "rad"])`` is "task coordinates [m, rad]")."""
    return f"{quantity} [{', '.join(dict.fromkeys(units)) if units else unknown}]"
