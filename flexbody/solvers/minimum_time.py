"""``fb.minimum_time``: the least duration in which a goal on a run can be met within bounds on the inputs and
subject to constraints on functions of the run — the time-optimal move (#37 item 1).

The reach R(T) of a duration T is the best value of the goal's function f over the inputs of that duration (their
knots moved onto [t₀, t₀ + T]): max f for a goal f ≥ g, min f for f ≤ g, by :func:`~flexbody.solvers.
input_optimization.optimize_inputs` with the same bounds and constraints. A longer move reaches further, so the least
duration solves R(T) = g; it is found in a bracket [T_lo, T_hi] (the goal out of reach at T_lo, met at T_hi) by the
Illinois variant of regula falsi, each solve starting from the values of the trial before. At the least duration the
inputs that reach the goal are, for bounded inputs of a linear system, bang–bang (Pontryagin's principle).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from ..constraints.base import finite_number
from ..errors import FlexbodyError
from .input_optimization import OptimalInputs, RunConstraint, optimize_inputs
from .input_signals import InputSignal

if TYPE_CHECKING:
    from ..system import AssembledSystem, System

__all__ = ["MinimumTime", "minimum_time"]


@dataclass(frozen=True)
class MinimumTime:
    """What :func:`minimum_time` found: the least duration ``t_end`` [s] (of the run from its start), the ``optimal``
    inputs there (their run meets the goal: ``optimal.value`` is the reach, ± as minimised), every ``trials`` (duration
    [s], reach in the goal's unit) and the ``seconds`` it took."""

    t_end: float
    optimal: OptimalInputs
    trials: tuple[tuple[float, float], ...]
    seconds: float


def minimum_time(
    model: System | AssembledSystem,
    inputs: InputSignal,
    goal: RunConstraint,
    durations: tuple[float, float],
    *,
    constraints: Sequence[RunConstraint] = (),
    lower: ArrayLike | None = None,
    upper: ArrayLike | None = None,
    tol: float = 1e-9,
    max_trials: int = 40,
    t0: float = 0.0,
    **run: Any,
) -> MinimumTime:
    """The least duration T in ``durations`` = (T_lo, T_hi) [s] for which inputs within ``lower`` ≤ U ≤ ``upper`` meet
    the ``goal`` (a :class:`RunConstraint` with one bound: f ≥ g or f ≤ g) and the ``constraints`` on the run from
    ``t0`` to ``t0 + T`` (module docstring). ``inputs`` gives the kind of signal, its knots as fractions of the
    duration and the first guess; ``run``: the other arguments of :func:`~flexbody.solvers.input_optimization.
    optimize_inputs` (``integrator``, ``formulation``, ``q0``, ``v0``, …). Stops when the reach is within ``tol`` ·
    max(1, |g|) of g or the bracket within ``tol`` · T. FlexbodyError when the goal is met at T_lo already or not at
    T_hi, or when no trial meets it within ``max_trials``."""
    clock = time.perf_counter()
    sign, target = _goal(goal)
    lo, hi = _durations(durations)
    tol = finite_number(tol, "tol", "minimum_time", positive=True)
    asm = model.assemble() if hasattr(model, "assemble") else model
    cost = (-1.0 if sign > 0 else 1.0) * goal.function
    trials: list[tuple[float, float]] = []
    values = inputs.values

    def excess(duration: float) -> tuple[float, OptimalInputs]:
        """sign·(R(T) − g): ≥ 0 where the goal is met; and the inputs reaching R(T)."""
        nonlocal values
        signal = inputs.rescaled(t0, t0 + duration).with_values(values)
        found = optimize_inputs(asm, t0 + duration, cost, signal, lower=lower, upper=upper, constraints=constraints,
                                tol=1e-12, t0=t0, **run)  # fmt: skip
        reach = -sign * found.value
        trials.append((duration, reach))
        values = found.inputs.values
        return sign * (reach - target), found

    f_lo, _ = excess(lo)
    if f_lo >= 0.0:
        raise FlexbodyError(f"minimum_time: the goal is met already in {lo:.6g} s (reach {trials[-1][1]:.6g}); give "
                            f"a shorter lower duration")  # fmt: skip
    f_hi, best = excess(hi)
    if f_hi < 0.0:
        raise FlexbodyError(f"minimum_time: the goal is out of reach in {hi:.6g} s (reach {trials[-1][1]:.6g}, goal "
                            f"{target:.6g}); give a longer upper duration")  # fmt: skip
    best_t, side, close = hi, 0, tol * max(1.0, abs(target))
    for _ in range(max_trials):
        duration = (lo * f_hi - hi * f_lo) / (f_hi - f_lo)  # regula falsi, Illinois: the kept end's value halved
        f, found = excess(duration)
        if f >= -close and duration < best_t:
            best_t, best = duration, found
        if abs(f) <= close or hi - lo <= tol * hi:
            break
        if f >= 0.0:
            hi, f_hi = duration, f
            f_lo = f_lo / 2.0 if side > 0 else f_lo
            side = 1
        else:
            lo, f_lo = duration, f
            f_hi = f_hi / 2.0 if side < 0 else f_hi
            side = -1
    else:
        raise FlexbodyError(f"minimum_time: the least duration is not found within {max_trials} trials; it lies in "
                            f"[{lo:.9g}, {hi:.9g}] s")  # fmt: skip
    return MinimumTime(best_t, best, tuple(trials), time.perf_counter() - clock)


def _goal(goal: RunConstraint) -> tuple[float, float]:
    """(+1, g) for f ≥ g, (−1, g) for f ≤ g; FlexbodyError for anything else."""
    if not isinstance(goal, RunConstraint):
        raise FlexbodyError(f"minimum_time: goal must be a fb.RunConstraint, got {goal!r}")
    finite = np.isfinite([goal.lower, goal.upper])
    if finite.all() or not finite.any():
        raise FlexbodyError(
            f"minimum_time: the goal must have one bound (f ≥ g: lower=g, or f ≤ g: upper=g), got lower={goal.lower},"
            f" upper={goal.upper}"
        )
    return (1.0, float(goal.lower)) if finite[0] else (-1.0, float(goal.upper))


def _durations(durations) -> tuple[float, float]:
    try:
        lo, hi = (float(x) for x in durations)
    except (TypeError, ValueError):
        raise FlexbodyError(f"minimum_time: durations must be (shortest, longest) in s, got {durations!r}") from None
    if not (np.isfinite(lo) and np.isfinite(hi) and 0.0 < lo < hi):
        raise FlexbodyError(f"minimum_time: durations must be 0 < shortest < longest, finite, got {durations!r}")
    return lo, hi
