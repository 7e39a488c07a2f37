"""Where a run's inputs jump: the instants at which the integrators end a step and start the next afresh, so that an
input switch costs no accuracy.

An input that declares ``breakpoints`` (the interior switch times of
:class:`~flexbody.solvers.piecewise_inputs.PiecewiseInputs`' forces) is smooth between them. The integrators then

- end a step on every breakpoint (RK4 and the adaptive solver add them to their grid, generalized-α shortens the step
  that would cross one);
- take the input of the step's own piece at each of its stages, the stage at the step's end included
  (``in_step(t_start, t)``: the piece holding the step's start, evaluated at t);
- restart generalized-α's accelerations at a breakpoint where the input jumps (its ``jumps`` is true):
  q̈_n⁺ = a(q_n, v_n, τ⁺) and the algorithmic a_n = q̈_n⁺, as at the start of a run [DE-7], so the step after a
  switch blends no acceleration of the input before it.

The nonsmooth stepper (:class:`~flexbody.solvers.moreau_jean.MoreauJean`) keeps its fixed steps and holds each
step's input from its start. The run's sensitivities mirror the same steps and restarts (:func:`restart_steps` on the
recorded times). A step end within :data:`LANDED` · dt of a breakpoint counts as on it.
"""

from __future__ import annotations

import numpy as np

__all__ = ["LANDED", "breakpoints_of", "jump_points_of", "next_breakpoint", "jumps_at", "step_times", "restart_steps"]

LANDED = 1e-6
"""A step end within this fraction of the nominal step of a breakpoint counts as on it."""


def breakpoints_of(tau) -> np.ndarray:
    """The increasing breakpoints [s] an input ``tau`` declares (its ``breakpoints``), empty for any other input."""
    return np.asarray(getattr(tau, "breakpoints", ()), dtype=float).reshape(-1)


def jump_points_of(tau) -> np.ndarray:
    """The breakpoints [s] at which ``tau`` jumps (its ``breakpoints`` when its ``jumps`` is true), else empty."""
    return breakpoints_of(tau) if getattr(tau, "jumps", False) else np.zeros(0)


def next_breakpoint(breaks: np.ndarray, t: float, dt: float) -> float | None:
    """The first breakpoint after t [s] by more than LANDED · dt, or None."""
    k = int(np.searchsorted(breaks, t + LANDED * dt, side="right"))
    return float(breaks[k]) if k < breaks.size else None


def jumps_at(breaks: np.ndarray, t: float, dt: float) -> bool:
    """Whether t [s] is on a breakpoint (within LANDED · dt)."""
    if not breaks.size:
        return False
    k = int(np.searchsorted(breaks, t))
    near = [breaks[j] for j in (k - 1, k) if 0 <= j < breaks.size]
    return any(abs(b - t) <= LANDED * dt for b in near)


def step_times(t0: float, t_end: float, dt: float, breaks: np.ndarray) -> np.ndarray:
    """The step ends of a fixed-step run from t0 to t_end [s]: t0 + k·dt, the last step shortened to end at t_end, and
    every breakpoint inside (t0, t_end), a grid instant within LANDED · dt of a breakpoint giving way to it."""
    n_steps = max(1, int(np.ceil((t_end - t0) / dt - 1e-9)))
    grid = np.append(t0 + dt * np.arange(n_steps), t_end)
    inside = breaks[(breaks > t0 + LANDED * dt) & (breaks < t_end - LANDED * dt)]
    if not inside.size:
        return grid
    k = np.searchsorted(inside, grid)
    below, above = inside[np.clip(k - 1, 0, inside.size - 1)], inside[np.clip(k, 0, inside.size - 1)]
    near = np.minimum(np.abs(grid - below), np.abs(grid - above)) <= LANDED * dt
    near[[0, -1]] = False
    return np.union1d(grid[~near], inside)


def restart_steps(times: np.ndarray, jumps: np.ndarray, dt: float) -> list[int]:
    """The recorded states n (0 < n < N) of a run at ``times`` (N + 1,) on one of the input's ``jumps``
    (:func:`jump_points_of`): where generalized-α restarted its accelerations."""
    return [n for n in range(1, len(times) - 1) if jumps_at(jumps, float(times[n]), dt)]
