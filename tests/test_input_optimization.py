"""Tests of flexbody.optimize_inputs (#37 item 1): direct single shooting on the runs' exact gradients.

* A mass on a spring (one undamped mode, ω = 3π rad/s) moved rest to rest by 0.1 m in 1 s with the least effort,
  under ten piecewise-constant forces (SLSQP with the final position and velocity as equality constraints): the
  optimum equals the minimum-norm solution of the run's own linear map u ↦ x(T), built by superposing plain runs
  (numpy's least squares), to 6e-15 measured (asserted 1e-9), in two iterations.
* It converges at the integrator's order to the minimum-energy input of the exactly discretised (zero-order hold,
  scipy's expm) system, the closed form u = Gᵀ(GGᵀ)⁻¹x_T, as the runs end their steps on the switches and
  generalized-α restarts its accelerations there (:mod:`flexbody.solvers.input_breaks`): generalized-α at second
  order (measured 6.0e-3, 1.5e-3, 3.7e-4 at steps of 10, 5, 2.5 ms), RK4 at fourth (5.2e-6, 3.3e-7, 2.0e-8).
* Bounds (L-BFGS-B): the final position as close as |u| ≤ 4 N allows to a target out of reach has the cost and final
  state of scipy's bounded least squares (lsq_linear) on the same linear map, to 1e-15; all 10 inputs on a
  bound.
* Bad arguments are refused by name.
"""

from __future__ import annotations

import numpy as np
import pytest
from input_models import oscillator
from scipy.linalg import expm
from scipy.optimize import lsq_linear

import flexbody as fb
from flexbody.errors import FlexbodyError

MASS, OMEGA, T, DISTANCE, K = 2.0, 3.0 * np.pi, 1.0, 0.1, 10


def _final_state_map(asm, integrator) -> np.ndarray:
    """G (2, K): the final (x, ẋ) of unit inputs on each interval, by plain runs (the system is linear)."""
    columns = []
    for k in range(K):
        values = np.zeros((K, 1))
        values[k] = 1.0
        held = fb.PiecewiseInputs(np.linspace(0.0, T, K + 1), values)
        results = fb.simulate(asm, T, integrator=integrator, tau=held.forces(asm))
        columns.append([results.q[-1, 0], results.v[-1, 0]])
    return np.array(columns).T


def _zero_order_hold_map() -> np.ndarray:
    """G (2, K) of the exactly discretised system ẍ = −ω²x + u/m with u held on each interval (Van Loan's expm)."""
    A, B, h = np.array([[0.0, 1.0], [-(OMEGA**2), 0.0]]), np.array([[0.0], [1.0 / MASS]]), T / K
    E = expm(np.block([[A, B], [np.zeros((1, 3))]]) * h)
    Phi, Gamma = E[:2, :2], E[:2, 2:]
    return np.hstack([np.linalg.matrix_power(Phi, K - 1 - k) @ Gamma for k in range(K)])


def _least_effort(asm, integrator):
    inputs = fb.PiecewiseInputs(np.linspace(0.0, T, K + 1), np.zeros((K, 1)))
    constraints = [
        fb.RunConstraint.equal(fb.FinalValue(0), DISTANCE),
        fb.RunConstraint.equal(fb.FinalValue(0, rate=True), 0.0),
    ]
    return fb.optimize_inputs(asm, T, fb.Effort(), inputs, constraints=constraints, integrator=integrator)


def test_the_least_effort_rest_to_rest_move_is_the_minimum_norm_input():
    asm = oscillator(MASS, OMEGA)
    integrator = fb.GeneralizedAlpha(dt=1e-2, tol=1e-12)
    found = _least_effort(asm, integrator)
    assert found.success and found.iterations <= 5
    assert abs(found.constraints[0] - DISTANCE) < 1e-12 and abs(found.constraints[1]) < 1e-12
    G = _final_state_map(asm, integrator)
    reference = np.linalg.lstsq(G, np.array([DISTANCE, 0.0]), rcond=None)[0]  # the minimum-norm solution
    u = found.inputs.values[:, 0]
    assert np.max(np.abs(u - reference)) < 1e-9 * np.max(np.abs(reference))
    assert abs(found.value - 0.5 * (T / K) * reference @ reference) < 1e-9 * found.value


@pytest.mark.parametrize(
    ("integrator", "order", "finest"),
    [(lambda dt: fb.GeneralizedAlpha(dt=dt, tol=1e-12), 2, 2e-3), (lambda dt: fb.RK4(dt=dt), 4, 1e-6)],
    ids=["generalized-alpha", "rk4"],
)
def test_the_least_effort_move_converges_to_the_closed_form_of_the_held_inputs(integrator, order, finest):
    asm = oscillator(MASS, OMEGA)
    G = _zero_order_hold_map()
    closed_form = G.T @ np.linalg.solve(G @ G.T, np.array([DISTANCE, 0.0]))
    errors = []
    for dt in (1e-2, 5e-3):
        found = _least_effort(asm, integrator(dt))
        errors.append(np.max(np.abs(found.inputs.values[:, 0] - closed_form)) / np.max(np.abs(closed_form)))
    assert errors[1] < finest and 0.8 * 2**order < errors[0] / errors[1] < 1.2 * 2**order, errors  # the order


def test_bounded_inputs_equal_bounded_least_squares():
    asm = oscillator(MASS, OMEGA)
    integrator = fb.GeneralizedAlpha(dt=1e-2, tol=1e-12)
    inputs = fb.PiecewiseInputs(np.linspace(0.0, T, K + 1), np.zeros((K, 1)))
    target = 0.3  # out of reach with |u| ≤ 4 N: the bounds are active
    cost = fb.FinalState(wq=[1.0], wv=[0.1], q_target=[target])
    found = fb.optimize_inputs(asm, T, cost, inputs, lower=-4.0, upper=4.0, integrator=integrator, tol=1e-14)
    weights = np.sqrt([1.0, 0.1])
    G = _final_state_map(asm, integrator)
    reference = lsq_linear(weights[:, None] * G, weights * np.array([target, 0.0]), bounds=(-4.0, 4.0), tol=1e-14)
    u = found.inputs.values[:, 0]
    assert found.success and np.all(np.abs(u) <= 4.0) and np.sum(np.abs(np.abs(u) - 4.0) < 1e-12) >= 2
    assert abs(found.value - reference.cost) < 1e-9 * reference.cost  # lsq_linear's cost is ½‖W(Gu − b)‖²
    assert np.max(np.abs(G @ u - G @ reference.x)) < 1e-9


def test_bad_arguments_are_refused():
    asm = oscillator(MASS, OMEGA)
    inputs = fb.PiecewiseInputs([0.0, T], np.zeros((1, 1)))
    with pytest.raises(FlexbodyError, match="cost must be a RunCost"):
        fb.optimize_inputs(asm, T, "effort", inputs)
    with pytest.raises(FlexbodyError, match=r"inputs must be fb\.PiecewiseInputs"):
        fb.optimize_inputs(asm, T, fb.Effort(), np.zeros((1, 1)))
    with pytest.raises(FlexbodyError, match="lower exceeds upper"):
        fb.optimize_inputs(asm, T, fb.Effort(), inputs, lower=1.0, upper=-1.0)
    with pytest.raises(FlexbodyError, match=r"upper must be a scalar, \(n_u,\) or \(k, n_u\)"):
        fb.optimize_inputs(asm, T, fb.Effort(), inputs, upper=np.ones(3))
    with pytest.raises(FlexbodyError, match=r"constraints must be fb\.RunConstraint"):
        fb.optimize_inputs(asm, T, fb.Effort(), inputs, constraints=[fb.FinalValue(0)])
    with pytest.raises(FlexbodyError, match="lower ≤ upper, at least one finite"):
        fb.RunConstraint(fb.FinalValue(0))
    with pytest.raises(FlexbodyError, match="lower and upper must be numbers"):
        fb.RunConstraint(fb.FinalValue(0), lower="low")
    with pytest.raises(FlexbodyError, match="tol must be positive"):
        fb.optimize_inputs(asm, T, fb.Effort(), inputs, tol=0.0)
    with pytest.raises(FlexbodyError, match="max_iterations must be a positive integer"):
        fb.optimize_inputs(asm, T, fb.Effort(), inputs, max_iterations=2.5)
    with pytest.raises(FlexbodyError, match="the integrator must be"):
        fb.optimize_inputs(asm, T, fb.Effort(), inputs, integrator=fb.MoreauJean(dt=1e-3))
