"""Each generalized-α step in the chart of its rotation vectors centred on the step's start
(flexbody.solvers.step_charts): the maps against scipy's rotations and finite differences, and the heavy top's
steps as accurate at ‖φ‖ ≈ π, where the chart changes, as anywhere else."""

from __future__ import annotations

import numpy as np
import pytest
from heavy_top import heavy_top
from scipy.spatial.transform import Rotation

import flexbody as fb
from flexbody.rigid.exponential_coordinates import composed, jacobian_inverse_coefficient, left_jacobian_inverse
from flexbody.solvers.step_charts import correction_in_step_chart, from_step_chart, to_step_chart

STARTS = np.array([3], dtype=np.int64)  # a rotation vector at q[3:6], between plain coordinates


def _state(rng, theta):
    """(q, v, q̈, a, λ) of 7 coordinates whose q[3:6] is a rotation vector of length θ."""
    q, v, qdd, a = (rng.standard_normal(7) for _ in range(4))
    axis = rng.standard_normal(3)
    q[3:6] = theta * axis / np.linalg.norm(axis)
    return q, v, qdd, a, np.zeros(2)


def _psi(t, c):
    """A smooth local rotation ψ(t) = c₀ t + c₁ t² + c₂ t³ (3,) and its first two derivatives."""
    return c[0] * t + c[1] * t**2 + c[2] * t**3, c[0] + 2 * c[1] * t + 3 * c[2] * t**2, 2 * c[1] + 6 * c[2] * t


@pytest.mark.parametrize("theta", [1e-3, 1.0, 3.0, 3.14159, 3.3])
def test_step_chart_round_trip_at_its_centre(theta):
    rng = np.random.default_rng(7)
    state = _state(rng, theta)
    local, out = tuple(np.empty(7) for _ in range(4)), tuple(np.empty(7) for _ in range(4))
    to_step_chart(STARTS, state, local)
    assert np.all(local[0][3:6] == 0.0)
    np.testing.assert_array_equal(np.delete(local[0], [3, 4, 5]), np.delete(state[0], [3, 4, 5]))
    from_step_chart(STARTS, state[0], local, out)
    for k in range(4):
        np.testing.assert_allclose(out[k], state[k], rtol=0, atol=1e-13 * max(1.0, np.abs(state[k]).max()))


@pytest.mark.parametrize("theta", [0.02, 1.2, 3.1])
def test_step_chart_against_scipy_and_finite_differences(theta):
    """φ(t) = log(exp(φ_n) exp(ψ(t))) from scipy's rotations (kept in φ_n's chart), φ̇ and φ̈ by central differences
    of it: the chart's φ, φ̇, φ̈ at t = 0.3 agree; so does a Newton correction mapped back (J_r(φ) dφ = J_r(ψ) dψ)."""
    rng = np.random.default_rng(11)
    state = _state(rng, theta)
    c = 0.4 * rng.standard_normal((3, 3))
    t, h = 0.3, 1e-4

    def phi_at(time):
        R = Rotation.from_rotvec(state[0][3:6]) * Rotation.from_rotvec(_psi(time, c)[0])
        phi = R.as_rotvec()
        if phi @ state[0][3:6] < 0:  # scipy's principal value: back to φ_n's chart
            phi = phi - 2 * np.pi * phi / np.linalg.norm(phi)
        return phi

    local = tuple(np.array(x, dtype=float) for x in state[:4])
    local[0][3:6], local[1][3:6], local[2][3:6] = _psi(t, c)
    out = tuple(np.empty(7) for _ in range(4))
    from_step_chart(STARTS, state[0], local, out)
    samples = [phi_at(t + k * h) for k in (-2, -1, 0, 1, 2)]
    rate = (samples[0] - 8 * samples[1] + 8 * samples[3] - samples[4]) / (12 * h)
    second = (-samples[0] + 16 * samples[1] - 30 * samples[2] + 16 * samples[3] - samples[4]) / (12 * h * h)
    np.testing.assert_allclose(out[0][3:6], samples[2], rtol=0, atol=1e-12)
    np.testing.assert_allclose(out[1][3:6], rate, rtol=0, atol=1e-8)
    np.testing.assert_allclose(out[2][3:6], second, rtol=0, atol=1e-5)
    dpsi = 1e-7 * rng.standard_normal(3)
    moved = np.empty(3)
    composed(state[0][3:6], local[0][3:6] + dpsi, moved)
    dqdd = np.zeros(7)
    dqdd[3:6] = moved - out[0][3:6]  # the change of φ that a change dψ makes
    correction_in_step_chart(STARTS, out[0], local[0], dqdd)
    np.testing.assert_allclose(dqdd[3:6], dpsi, rtol=0, atol=1e-12)


def test_jacobian_inverse_is_the_inverse():
    """J_l(θ)⁻¹ J_l(θ) = I with J_l from central differences of scipy's rotations (error ~1e-10), across the series'
    switch point (θ = 0.05) and near π; the series of c(θ) equals 1/θ² − 1/(2θ tan(θ/2)) in 30-digit arithmetic."""
    for theta in (1e-6, 0.0499, 0.0501, 1.0, np.pi - 1e-3):
        phi = theta * np.array([0.6, -0.48, 0.64])
        J_l = Rotation.from_rotvec(phi).as_matrix() @ _right_jacobian(phi)
        np.testing.assert_allclose(left_jacobian_inverse(phi) @ J_l, np.eye(3), rtol=0, atol=1e-9)
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 30
    for theta in (1e-3, 0.02, 0.0499999):
        t = mpmath.mpf(theta)
        exact = float(1 / t**2 - 1 / (2 * t * mpmath.tan(t / 2)))
        assert abs(jacobian_inverse_coefficient(theta) - exact) <= 1e-16


def _right_jacobian(phi):
    """J_r(φ) by central differences of scipy's rotations: R(φ + dφ) ≈ R(φ) exp(J_r dφ)."""
    columns = []
    for k in range(3):
        d = np.zeros(3)
        d[k] = 1e-6
        plus = Rotation.from_rotvec(phi).inv() * Rotation.from_rotvec(phi + d)
        minus = Rotation.from_rotvec(phi).inv() * Rotation.from_rotvec(phi - d)
        columns.append((plus.as_rotvec() - minus.as_rotvec()) / 2e-6)
    return np.array(columns).T


def test_heavy_top_steps_near_pi_cost_no_more_than_elsewhere():
    """A heavy top's energy change per step against ‖φ‖ at the step's start: with the linear formulas on φ a step
    at ‖φ‖ ∈ (2.75, π] changed the energy 60 times as much as one below 1.2 rad (and the steps ending in a change
    of chart 9.9 times the median step); in the step's own chart the two medians are within a factor of 3."""
    asm, v0 = heavy_top()
    run = fb.simulate(asm, 1.6, integrator=fb.GeneralizedAlpha(dt=5e-4, rho_inf=0.9, tol=1e-12), v0=v0)
    steps = np.abs(np.diff(run.histories["energy"]))
    theta = np.linalg.norm(run.q[:-1, :3], axis=1)
    switched = np.einsum("ij,ij->i", run.q[1:], run.q[:-1]) < 0
    assert switched.sum() >= 10  # the top's rotation vector passes π many times
    near, far = np.median(steps[theta > 2.75]), np.median(steps[theta < 1.2])
    assert near <= 3.0 * far
    assert np.median(steps[switched]) <= 3.0 * np.median(steps)
