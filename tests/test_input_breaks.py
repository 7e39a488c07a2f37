"""Tests of exact input switches (flexbody.solvers.input_breaks): runs under piecewise inputs end their steps on the
switches, take each step's own input at every stage and restart generalized-α's accelerations at a switch.

* A mass on a spring (ω = 3π rad/s) under three forces held on intervals that are no multiple of the step
  (0.31 s, 0.37 s, 0.32 s): every run records each switch instant, and its final state converges to the exact one
  (scipy's expm on each interval) at the integrator's order: generalized-α second (measured ratio 4.0 per halving),
  RK4 fourth (16); the adaptive solver, restarted on each switch, to 1e-9 (measured 3.1e-12).
* The exact gradients of a pendulum's cost under the same off-grid switches (restarts on the sweeps' side too) equal
  central differences of whole runs, by generalized-α and RK4, adjoint and forward (measured 2.6e-11 and 2.1e-11 at a
  step of 1e-4; asserted 1e-8).
"""

from __future__ import annotations

import numpy as np
import pytest
from input_models import input_gradient_error, oscillator, pendulum
from scipy.linalg import expm

import flexbody as fb
from flexbody.solvers.input_breaks import restart_steps, step_times

MASS, OMEGA, T = 2.0, 3.0 * np.pi, 1.0
SWITCHES = np.array([0.0, 0.31, 0.68, T])
FORCES = np.array([[3.0], [-5.0], [2.0]])


def _exact_final_state() -> np.ndarray:
    """(x, ẋ) at T of ẍ = −ω²x + u/m from rest, u held on each interval: the exact flow of each (Van Loan's expm)."""
    A, B = np.array([[0.0, 1.0], [-(OMEGA**2), 0.0]]), np.array([[0.0], [1.0 / MASS]])
    x = np.zeros(2)
    for h, u in zip(np.diff(SWITCHES), FORCES[:, 0]):
        E = expm(np.block([[A, B], [np.zeros((1, 3))]]) * h)
        x = E[:2, :2] @ x + E[:2, 2] * u
    return x


def _final_state(asm, integrator) -> tuple[np.ndarray, np.ndarray]:
    inputs = fb.PiecewiseInputs(SWITCHES, FORCES)
    results = fb.simulate(asm, T, integrator=integrator, tau=inputs.forces(asm), record_every=1)
    return np.array([results.q[-1, 0], results.v[-1, 0]]), np.asarray(results.times)


def test_step_times_take_every_switch():
    grid = step_times(0.0, 1.0, 0.1, np.array([0.25, 0.3 + 1e-9, 0.77]))
    assert np.allclose(grid, [0.0, 0.1, 0.2, 0.25, 0.3 + 1e-9, 0.4, 0.5, 0.6, 0.7, 0.77, 0.8, 0.9, 1.0], atol=1e-15)
    assert grid[4] == 0.3 + 1e-9  # a grid instant that near a switch gives way to it
    assert np.array_equal(step_times(0.0, 1.0, 0.1, np.zeros(0)), np.append(0.1 * np.arange(10), 1.0))
    assert restart_steps(grid, np.array([0.25, 0.77]), 0.1) == [3, 9]


@pytest.mark.parametrize(
    ("integrator", "order"),
    [(lambda dt: fb.GeneralizedAlpha(dt=dt, tol=1e-12), 2), (lambda dt: fb.RK4(dt=dt), 4)],
    ids=["generalized-alpha", "rk4"],
)
def test_off_grid_switches_keep_the_integrators_order(integrator, order):
    asm, exact = oscillator(MASS, OMEGA), _exact_final_state()
    errors = []
    for dt in (1e-2, 5e-3):
        x, times = _final_state(asm, integrator(dt))
        assert all(np.min(np.abs(times - s)) < 1e-12 for s in SWITCHES)  # each switch is a step end
        errors.append(np.max(np.abs(x - exact)) / np.max(np.abs(exact)))
    assert 0.8 * 2**order < errors[0] / errors[1] < 1.2 * 2**order, errors


def test_the_adaptive_solver_restarts_on_each_switch():
    asm = oscillator(MASS, OMEGA)
    x, _ = _final_state(asm, fb.Adaptive(rtol=1e-12, atol=1e-14, output_dt=0.25))
    exact = _exact_final_state()
    assert np.max(np.abs(x - exact)) < 1e-9 * np.max(np.abs(exact))


@pytest.mark.parametrize("mode", ["adjoint", "forward"])
@pytest.mark.parametrize(
    "integrator", [fb.GeneralizedAlpha(dt=1e-2, tol=1e-13), fb.RK4(dt=1e-2)], ids=["generalized-alpha", "rk4"]
)
def test_gradients_through_off_grid_switches_equal_central_differences(integrator, mode):
    asm, t_end = pendulum(), 0.5
    inputs = fb.PiecewiseInputs([0.0, 0.123, 0.301, t_end], [[2.0], [-3.0], [1.0]])
    cost = fb.FinalState(wq=[1.0], wv=[0.3], q_target=[1.0]) + 0.2 * fb.Effort()
    results = fb.simulate(asm, t_end, integrator=integrator, tau=inputs.forces(asm))
    assert np.isclose(results.times, 0.123).any() and np.isclose(results.times, 0.301).any()
    error = input_gradient_error(asm, t_end, cost, inputs, integrator, mode)
    assert error < 1e-8, error
