"""Tests of flexbody.solvers.chart_sensitivities: the linearizations of a generalized-α step's chart (T to it, F back)
and of the switch of a rotation vector past π (S) equal central differences of the compiled maps the runs use
(measured 5e-11 to 2e-10 relative at a step of 1e-6), and their transposes are the adjoints (⟨ȳ, Lx⟩ = ⟨Lᵀȳ, x⟩ to
round-off); a run's replayed charts rebuild the algorithmic acceleration a the run kept."""

from __future__ import annotations

import numpy as np
import pytest

import flexbody as fb
from flexbody.linalg.saddle_point import SaddlePointSolver
from flexbody.rigid.exponential_coordinates import switched_charts
from flexbody.solvers.alpha_start import initial_acceleration
from flexbody.solvers.chart_sensitivities import from_chart_map, replayed_charts, switch_map, to_chart_map
from flexbody.solvers.generalized_alpha import AlphaState, AlphaStepper
from flexbody.solvers.step_charts import from_step_chart, to_step_chart

N = 8
STARTS = np.array([1, 5])  # two rotation vectors among eight coordinates


def _to_chart(ys):
    out = tuple(np.empty(N) for _ in range(4))
    to_step_chart(STARTS, tuple(ys), out)
    return out


def _from_chart(xs):
    out = tuple(np.empty(N) for _ in range(4))
    from_step_chart(STARTS, xs[0], tuple(xs[1:]), out)
    return out


def _switched(ys):
    out = switched_charts(STARTS, *ys)
    assert out is not None
    return out


def _states(seed: int):
    rng = np.random.default_rng(seed)
    y = [rng.standard_normal(N) for _ in range(4)]
    y[0][1:4] = (2.9, 1.5, -1.0)  # past π: switched
    y[0][5:8] = (1.2, -2.0, 1.0)  # 2.5 rad: kept
    return rng, y


def _check(function, xs, linear, rng) -> None:
    """The linearization equals central differences along a random direction; its transpose is its adjoint."""
    dx = [rng.standard_normal(N) for _ in xs]
    step = 1e-6
    plus = function([x + step * d for x, d in zip(xs, dx)])
    minus = function([x - step * d for x, d in zip(xs, dx)])
    exact = linear(dx)
    for p, m, e in zip(plus, minus, exact):
        central = (p - m) / (2 * step)
        assert np.max(np.abs(central - e)) < 1e-8 * max(1.0, np.max(np.abs(central)))
    ys = [rng.standard_normal(N) for _ in exact]
    back = linear.transposed(ys)
    assert abs(sum(y @ e for y, e in zip(ys, exact)) - sum(b @ d for b, d in zip(back, dx))) < 1e-12


@pytest.mark.parametrize("seed", [0, 1])
def test_the_step_charts_are_linearized(seed):
    rng, y = _states(seed)
    _check(_to_chart, y, to_chart_map(STARTS, y), rng)
    q_start, local = rng.standard_normal(N), [0.1 * rng.standard_normal(N) for _ in range(4)]
    _check(_from_chart, [q_start, *local], from_chart_map(STARTS, q_start, local, _from_chart([q_start, *local])), rng)


@pytest.mark.parametrize("seed", [0, 1])
def test_the_chart_switch_is_linearized(seed):
    rng, y = _states(seed)
    _check(_switched, y, switch_map(STARTS, y), rng)
    _check(_switched, y[:2], switch_map(STARTS, y[:2]), rng)  # RK4's (q, v)
    y[0][1:4] = (1.0, 0.5, -1.0)
    assert switch_map(STARTS, y) is None


def test_the_replay_rebuilds_the_algorithmic_acceleration():
    """A spherical top spun past π: each replayed step ends where the run's did, and the algorithmic a it rebuilds
    equals the one generalized-α keeps (its checkpoint's)."""
    tree = fb.RigidTree("top", gravity=(0.0, 0.0, -9.81))
    link = tree.add_link("body", None, fb.Spherical(), mass=1.0, com=(0.0, 0.0, 0.1), inertia=(0.01, 0.012, 0.005))
    asm = fb.System([tree], [], actuators=[link], q0=np.array([0.3, 0.1, 0.0])).assemble()
    settings = fb.GeneralizedAlpha(dt=2e-3, tol=1e-12, max_iterations=40)
    stepper = AlphaStepper(asm, settings)
    q, v = asm.q0.copy(), np.array([0.5, -0.3, 60.0])
    qdd, _ = initial_acceleration(asm.workspace(0.0, q, v), np.zeros(3), SaddlePointSolver(asm.n_rigid))
    state = AlphaState(0.0, q, v, qdd=qdd, a=qdd.copy(), lam=np.zeros(0))
    kept = [state]
    for _ in range(50):  # the run's steps, and its chart switch after each
        state, _ = stepper.step(state, settings.dt, np.zeros(3))
        switched = asm.switch_charts(state.q, state.v, state.qdd, state.a)
        if switched is not None:
            state, stepper.factor_dt = AlphaState(state.t, *switched, lam=state.lam), None
        kept.append(state)
    run = [np.array([getattr(s, name) for s in kept]) for name in ("t", "q", "v", "qdd")]
    am, af, gamma, beta = settings.parameters()
    coefficients = ((1 - af) / (1 - am), af / (1 - am), -am / (1 - am), gamma, beta)
    charts = replayed_charts(asm, coefficients, run)
    assert sum(step.switch is not None for step in charts) >= 1
    for step, state in zip(charts, kept[1:]):
        after = step.end if step.switch is None else asm.switch_charts(*step.end)
        assert np.allclose(after[3], state.a, rtol=0.0, atol=1e-9 * max(1.0, np.max(np.abs(state.a))))
