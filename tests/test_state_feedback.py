"""LQR state feedback on a linear model (fb.control.lqr_gain, fb.control.StateFeedback): an inverted pendulum
(unstable: modal_analysis gives a negative frequency) is stabilised, and near the state the closed loop
follows exp((A − BK)t)x₀ up to terms of higher order in x₀."""

import numpy as np
import pytest
import scipy.linalg as la

import flexbody as fb
from flexbody.errors import ModelError


def _pendulum():
    tree = fb.RigidTree("p", gravity=(0, -9.81, 0))
    tree.add_link("l", None, fb.Revolute(), mass=1.0, com=(0.5, 0, 0), inertia=(1e-4, 0.02, 0.02))
    return fb.System([tree], q0=[np.pi / 2])  # upright: an unstable equilibrium


def test_upright_pendulum_is_unstable_and_the_lqr_holds_it():
    system = _pendulum()
    modes = fb.modal_analysis(system, state=[np.pi / 2], n_modes=1)
    growth = np.sqrt(1.0 * 9.81 * 0.5 / (0.02 + 0.25))  # ω² = −m g l / I_O
    assert abs(modes.frequencies[0] + growth / (2 * np.pi)) < 1e-7
    lin = fb.linearize(system, state=[np.pi / 2])
    K = fb.control.lqr_gain(lin, Q=[100.0, 1.0], R=[1.0])
    closed = la.eigvals(lin.A - lin.B @ K)
    assert np.all(closed.real < 0)
    errors = []
    for eps in (0.02, 0.01):
        q0, v0 = lin.coordinates(np.array([eps, 0.0]))
        res = fb.simulate(
            system, 3.0, integrator=fb.RK4(dt=1e-3), q0=q0, v0=v0, controller=fb.control.StateFeedback(lin, K)
        )
        x_sim = np.array([lin.state(q, v) for q, v in zip(res.q, res.v)])
        x_lin = np.array([la.expm((lin.A - lin.B @ K) * t) @ np.array([eps, 0.0]) for t in res.times])
        errors.append(np.abs(x_sim - x_lin).max() / eps)
        assert np.abs(x_sim[-1]).max() < 1e-3 * eps  # settled upright
    # the pendulum's gravity term is odd (sin q), so the linear model misses only cubic terms: the relative
    # error falls as ε² (5.5e-5 at 0.02 rad, 1.4e-5 at 0.01 rad)
    assert errors[0] < 2e-4 and 3.5 < errors[0] / errors[1] < 4.5


def test_bad_gain_is_named():
    lin = fb.linearize(_pendulum(), state=[np.pi / 2])
    with pytest.raises(ModelError, match="gain must be \\(1, 2\\)"):
        fb.control.StateFeedback(lin, np.zeros((2, 2)))
    with pytest.raises(ModelError, match="Q must be"):
        fb.control.lqr_gain(lin, Q=np.eye(3), R=1.0)
