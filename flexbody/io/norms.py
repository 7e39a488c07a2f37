"""Norms of a history of a run, for comparing controllers in tables: the RMS norm

    ‖u‖_RMS = (1/T ∫ ‖u(t)‖² dt)^{1/2}    (trapezoidal rule over the recorded times, T their span)

and the peak (L∞) norm max_t max_i |u_i(t)| (as in Aghili 2005, Fig. 8). :func:`flexbody.io.plots.plot_torque_norms`
draws ‖u(t)‖ of several runs.
"""

from __future__ import annotations

import numpy as np

from ..errors import FlexbodyError
from .histories import available_histories, has_history, history_series
from .results import Results


def _norm_data(results: Results, key: str) -> tuple[np.ndarray, np.ndarray]:
    """Times (s,) and history ``key`` (s, k), validated for the norms."""
    if not has_history(results, key):
        raise FlexbodyError(f"results have no history {key!r}; available histories: {available_histories(results)}")
    t = np.asarray(results.times, dtype=float)
    u = history_series(results, key)
    if len(u) < 2 or len(t) != len(u):
        raise FlexbodyError(
            f"history {key!r} needs at least 2 samples matching the {len(t)} recorded times, has {len(u)}"
        )
    if not (np.all(np.isfinite(u)) and np.all(np.isfinite(t))):
        raise FlexbodyError(f"history {key!r} or the times contain NaN/Inf")
    return t, u


def rms_norm(results: Results, key: str = "tau") -> float:
    """RMS norm (1/T ∫ ‖u‖² dt)^{1/2} of history ``key`` by the trapezoidal rule over the recorded times.

    Parameters
    ----------
    results : Results
        A run with history ``key`` of at least 2 samples.
    key : str
        History u (s, k) or (s,).

    Returns
    -------
    float
        The RMS norm, T = last − first recorded time.

    Raises
    ------
    FlexbodyError
        If the history is missing, has fewer than 2 samples or non-finite values, or T <= 0.
    """
    t, u = _norm_data(results, key)
    span = t[-1] - t[0]
    if not span > 0.0:
        raise FlexbodyError(f"rms_norm needs increasing times, got span {span:g} s")
    sq = np.sum(u * u, axis=1)
    integral = float(np.sum(0.5 * (sq[1:] + sq[:-1]) * np.diff(t)))
    return float(np.sqrt(integral / span))


def peak_norm(results: Results, key: str = "tau") -> float:
    """Peak (L∞) norm max_t max_i abs(u_i(t)) of history ``key``.

    Parameters
    ----------
    results : Results
        A run with history ``key`` of at least 2 samples.
    key : str
        History u (s, k) or (s,).

    Returns
    -------
    float
        The largest absolute entry over all recorded times.

    Raises
    ------
    FlexbodyError
        If the history is missing, has fewer than 2 samples or non-finite values.
    """
    _, u = _norm_data(results, key)
    return float(np.max(np.abs(u))) if u.size else 0.0
