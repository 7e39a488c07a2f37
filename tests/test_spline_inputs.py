"""Tests of fb.SplineInputs (#37 item 1): inputs through values at knots, first-order hold or cubic.

* The signal is scipy's interpolating spline (cubics reproduced exactly by the not-a-knot cubic, lines by the
  first-order hold) and its Gram matrix equals adaptive quadrature (scipy's ``quad``) of φ_i φ_j to 1e-12.
* Run gradients in the knot values equal central differences of whole runs of a pendulum, by generalized-α and RK4,
  adjoint and forward, cubic and first-order hold.
* Least effort rest to rest on a mass on a spring (ω = 3π rad/s): the optimum over the spline's values converges to the
  exact optimum in the same spline space (transition integrals by scipy's ``expm`` and Gauss quadrature, the effort's
  Gram matrix by ``quad``) at the integrator's order, and — in ``make test-slow`` — with 101 cubic knots equals the
  continuous closed form u*(t) = Bᵀe^{Aᵀ(T−t)}W(T)⁻¹x_T to 1e-6 (the Done-when of #37).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from input_models import input_gradient_error, oscillator, pendulum
from scipy.integrate import quad
from scipy.interpolate import make_interp_spline
from scipy.linalg import expm

import flexbody as fb
from flexbody.errors import StateError

MASS, OMEGA, T, DISTANCE = 2.0, 3.0 * np.pi, 1.0, 0.1
A_SYSTEM, B_SYSTEM = np.array([[0.0, 1.0], [-(OMEGA**2), 0.0]]), np.array([0.0, 1.0 / MASS])


def test_the_signal_is_the_interpolating_spline_and_its_gram_matrix_is_exact():
    knots = np.array([0.0, 0.1, 0.35, 0.5, 0.8, 1.0])
    cubic = fb.SplineInputs(knots, np.stack([knots**3, 1.0 - 2.0 * knots], axis=1))
    line = fb.SplineInputs(knots, (1.0 - 2.0 * knots)[:, None], degree=1)
    for t in (0.0, 0.07, 0.42, 0.999, 1.0):
        assert np.allclose(cubic.at(t), [t**3, 1.0 - 2.0 * t], rtol=0, atol=1e-14)
        assert abs(line.at(t)[0] - (1.0 - 2.0 * t)) < 1e-14
    for inputs in (cubic, line):
        basis = make_interp_spline(knots, np.eye(knots.size), k=inputs.degree)
        G = inputs.gram(0.05, 0.9)  # a run shorter than the knots' span
        for i, j in [(0, 0), (1, 3), (2, 2), (5, 4), (0, 5)]:
            assert abs(G[i, j] - _product_integral(basis, i, j, 0.05, 0.9, knots)) < 1e-12
    with pytest.raises(StateError, match="degree must be one of"):
        fb.SplineInputs(knots, np.zeros(6), degree=2)
    with pytest.raises(StateError, match="at least 4 increasing"):
        fb.SplineInputs([0.0, 0.5, 1.0], np.zeros(3))
    with pytest.raises(StateError, match="one row per knot"):
        fb.SplineInputs(knots, np.zeros(5))
    with pytest.raises(StateError, match="outside the inputs' span"):
        cubic.at(1.5)


def _product_integral(basis, i: int, j: int, a: float, b: float, knots: np.ndarray) -> float:
    """∫_a^b φ_i φ_j dt by scipy's adaptive quad, breaking at the interior knots."""
    return quad(lambda t: basis(t)[i] * basis(t)[j], a, b, points=knots[1:-1], epsabs=1e-15)[0]


@pytest.mark.parametrize("mode", ["adjoint", "forward"])
@pytest.mark.parametrize("degree", [1, 3])
@pytest.mark.parametrize(
    "integrator", [fb.GeneralizedAlpha(dt=1e-2, tol=1e-13), fb.RK4(dt=1e-2)], ids=["generalized-alpha", "rk4"]
)
def test_gradients_in_the_knot_values_equal_central_differences(integrator, degree, mode):
    asm, t_end = pendulum(), 0.5
    inputs = fb.SplineInputs([0.0, 0.123, 0.25, 0.38, t_end], [[2.0], [-3.0], [1.0], [0.5], [-1.0]], degree=degree)
    cost = fb.FinalState(wq=[1.0], wv=[0.3], q_target=[1.0]) + 0.2 * fb.Effort()
    error = input_gradient_error(asm, t_end, cost, inputs, integrator, mode)
    assert error < 1e-8, error


def _least_effort(asm, knots: int, degree: int, integrator):
    inputs = fb.SplineInputs(np.linspace(0.0, T, knots), np.zeros((knots, 1)), degree=degree)
    move = [
        fb.RunConstraint.equal(fb.FinalValue(0), DISTANCE),
        fb.RunConstraint.equal(fb.FinalValue(0, rate=True), 0.0),
    ]
    return fb.optimize_inputs(asm, T, fb.Effort(), inputs, constraints=move, integrator=integrator)


def _spline_space_optimum(knots: int, degree: int) -> np.ndarray:
    """The exact least-effort values in the spline space: min ½UᵀGU subject to LU = x_T, L_j = ∫ e^{A(T−s)}B φ_j ds
    (scipy's expm at Gauss points, exact to rounding for these smooth integrands) and G by scipy's quad."""
    t = np.linspace(0.0, T, knots)
    basis = make_interp_spline(t, np.eye(knots), k=degree)
    x, w = np.polynomial.legendre.leggauss(12)
    L = np.zeros((2, knots))
    for a, b in itertools.pairwise(t):
        for s, ws in zip(0.5 * (b - a) * x + 0.5 * (a + b), 0.5 * (b - a) * w):
            L += ws * np.outer(expm(A_SYSTEM * (T - s)) @ B_SYSTEM, basis(s))
    G = np.array([[_product_integral(basis, i, j, 0.0, T, t) for j in range(knots)] for i in range(knots)])
    kkt = np.block([[G, L.T], [L, np.zeros((2, 2))]])
    return np.linalg.solve(kkt, np.concatenate([np.zeros(knots), [DISTANCE, 0.0]]))[:knots]


@pytest.mark.parametrize(
    ("degree", "integrator", "order"),
    [
        (3, lambda dt: fb.RK4(dt=dt), 4),
        (1, lambda dt: fb.RK4(dt=dt), 4),
        (3, lambda dt: fb.GeneralizedAlpha(dt=dt, tol=1e-12), 2),
    ],
    ids=["cubic-rk4", "first-order-hold-rk4", "cubic-generalized-alpha"],
)
def test_the_least_effort_spline_converges_to_the_exact_spline_optimum(degree, integrator, order):
    asm, knots = oscillator(MASS, OMEGA), 11
    exact = _spline_space_optimum(knots, degree)
    errors = []
    for dt in (1e-2, 5e-3):
        found = _least_effort(asm, knots, degree, integrator(dt))
        assert found.success and found.iterations <= 4
        errors.append(np.max(np.abs(found.inputs.values[:, 0] - exact)) / np.max(np.abs(exact)))
    assert 0.8 * 2**order < errors[0] / errors[1] < 1.2 * 2**order, errors


def _closed_form(t: np.ndarray) -> np.ndarray:
    """u*(t) = Bᵀe^{Aᵀ(T−t)}W(T)⁻¹(x_T − e^{AT}x₀), x₀ = 0, W(T) the controllability Gramian (Van Loan's expm)."""
    n = 2
    Z = np.block([[-A_SYSTEM, np.outer(B_SYSTEM, B_SYSTEM)], [np.zeros((n, n)), A_SYSTEM.T]])
    E = expm(Z * T)
    W = E[n:, n:].T @ E[:n, n:]
    lam = np.linalg.solve(W, np.array([DISTANCE, 0.0]))
    return np.array([B_SYSTEM @ expm(A_SYSTEM.T * (T - s)) @ lam for s in t])


@pytest.mark.slow  # 101 knots over 1000 RK4 steps: about 15 s
def test_the_least_effort_input_equals_the_continuous_closed_form():
    found = _least_effort(oscillator(MASS, OMEGA), 101, 3, fb.RK4(dt=1e-3))
    t = np.linspace(0.0, T, 2001)
    exact = _closed_form(t)
    u = np.array([found.inputs.at(s)[0] for s in t])
    assert found.success and np.max(np.abs(u - exact)) < 1e-6 * np.max(np.abs(exact))
