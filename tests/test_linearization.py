"""State-space models (fb.linearize) against a closed-form damped oscillator, the modal frequencies, and
short nonlinear simulations from perturbed states (the linear response exp(At)x₀ to second order in x₀)."""

import logging

import numpy as np
import pytest
import scipy.linalg as la

import flexbody as fb
from flexbody.errors import FlexbodyError


def test_cart_on_a_spring_damper_is_the_textbook_oscillator():
    m, k, c = 2.0, 50.0, 1.5
    tree = fb.RigidTree("cart", gravity=(0, 0, 0))
    cart = tree.add_link("cart", None, fb.Prismatic((1, 0, 0)), mass=m, inertia=(1e-3,) * 3)
    spring = fb.SpringDamper(fb.Ground((-0.3, 0, 0)), tree.point(cart), stiffness=k, damping=c, rest_length=0.3)
    lin = fb.linearize(fb.System([tree], forces=[spring]), outputs=[fb.JointTask([cart])])
    scale = lin.basis[0, 0]  # ±1: the basis of ker Φ = R¹
    assert np.abs(lin.A - [[0, 1], [-k / m, -c / m]]).max() < 1e-7 * k / m  # joint rows by differences
    assert np.abs(lin.B[:, 0] - [0, scale / m]).max() < 1e-12
    assert np.abs(lin.C - [[scale, 0]]).max() < 1e-15 and lin.input_labels == ["cart.cart"]
    assert abs(lin.mass[0, 0] - m) < 1e-12 and abs(lin.damping[0, 0] - c) < 1e-7 * c  # M_z, D_z of the model


def test_eigenvalues_are_the_modal_frequencies():
    L, B, H, E, rho = 1.0, 0.02, 0.02, 2.1e11, 7800.0
    tree = fb.RigidTree("tip", gravity=(0, 0, 0))
    tip = tree.add_link(
        "mass", None, fb.FreeFlyer(), origin=(L, B / 2, H / 2), mass=rho * B * H * L, inertia=(1e-9,) * 3
    )
    beam = fb.FlexibleBody(
        "beam", fb.mesh.box((L, B, H), (8, 1, 1), order=2), fb.StVenantKirchhoff(young=E, poisson=0.0, density=rho)
    )
    system = fb.System([tree, beam], [fb.Fix(beam, "x0"), fb.AttachNodes(beam, "x1", tip)], actuators=[])
    modes = fb.modal_analysis(system, n_modes=4)
    lin = fb.linearize(system, nodal_forces=[(beam, int(beam.nodes("x1")[0]), (0, 0, 1))])
    omega = np.sort(np.abs(la.eigvals(lin.A).imag))[::2][:4]  # ±iω pairs
    assert np.abs(omega / (2 * np.pi) / modes.frequencies - 1).max() < 1e-6
    assert np.abs(la.eigvals(lin.A).real).max() < 1e-6 * omega.max()  # nothing dissipates
    assert lin.B.shape == (lin.A.shape[0], 1) and lin.input_labels == [
        "beam.n" + str(int(beam.nodes("x1")[0])) + ".force"
    ]


def test_linear_response_matches_the_nonlinear_simulation():
    """A double pendulum held near its hanging equilibrium by constant torques plus a torque step: the
    simulated deviation from exp(At) x₀ + ∫ exp(A(t−s)) B δu ds shrinks as the square of the amplitude."""
    tree = fb.RigidTree("arm", gravity=(0, -9.81, 0))
    l1 = tree.add_link("l1", None, fb.Revolute(), mass=1.0, com=(0.5, 0, 0), inertia=(1e-4, 0.08, 0.08))
    l2 = tree.add_link("l2", l1, fb.Revolute(), origin=(1, 0, 0), mass=0.5, com=(0.3, 0, 0), inertia=(1e-4, 0.02, 0.02))
    system = fb.System([tree], q0=[-1.2, 0.4], forces=[fb.JointSpringDamper(l2, 0.0, 0.05)])
    u0 = np.array([2.0, 0.3])
    lin = fb.linearize(system, inputs=u0, outputs=[fb.PointTask(tree.point(l2, (0.6, 0, 0)), components=(0, 1))])
    errors = []
    for eps in (1e-3, 5e-4):
        x0 = eps * np.array([1.0, -0.5, 0.3, 0.8])
        du = eps * np.array([0.5, -0.2])
        q0, v0 = lin.coordinates(x0)
        res = fb.simulate(
            system,
            1.0,
            integrator=fb.RK4(dt=1e-3),
            q0=q0,
            v0=v0,
            tau=u0 + du,  # S = I
            consistent_initial=False,
        )
        Ad = np.block([[lin.A, lin.B @ du[:, None]], [np.zeros((1, lin.A.shape[0] + 1))]])
        x_lin = np.array([la.expm(Ad * t) @ np.append(x0, 1.0) for t in res.times])[:, :-1]
        x_sim = np.array([lin.state(q, v) for q, v in zip(res.q, res.v)])
        errors.append(np.abs(x_sim - x_lin).max() / eps)
    assert errors[0] < 1e-2 and 1.7 < errors[0] / errors[1] < 2.3  # relative error ∝ amplitude


def test_bad_linearization_input_is_named():
    tree = fb.RigidTree("p", gravity=(0, -9.81, 0))
    tree.add_link("l", None, fb.Revolute(), mass=1.0, com=(0.4, 0, 0), inertia=(1e-3, 0.02, 0.02))
    with pytest.raises(FlexbodyError, match="inputs must be 1"):
        fb.linearize(fb.System([tree], q0=[-1.5]), inputs=[1.0, 2.0])
    with pytest.raises(FlexbodyError, match="nodal force"):
        fb.linearize(fb.System([tree], q0=[-1.5]), nodal_forces=[("beam", 0)])


def test_a_state_that_is_not_an_equilibrium_is_reported(caplog):
    """A compound pendulum (m 1 kg, c 0.4 m) linearised at 0.3 rad from hanging, where gravity leaves
    m g c sin 0.3 = 1.1597 N·m: the model is made (metadata['static_residual']) and a WARNING names the joint."""
    tree = fb.RigidTree("p", gravity=(0, -9.81, 0))
    tree.add_link("l", None, fb.Revolute(), mass=1.0, com=(0.4, 0, 0), inertia=(1e-3, 0.02, 0.02))
    system = fb.System([tree], q0=[-np.pi / 2])
    with caplog.at_level(logging.WARNING, logger="flexbody"):
        model = fb.linearize(system, state=[-np.pi / 2 + 0.3])
    expected = 1.0 * 9.81 * 0.4 * np.sin(0.3)
    assert model.metadata["static_residual"] == pytest.approx(expected, rel=1e-6)
    (record,) = [r for r in caplog.records if "not a static equilibrium" in r.getMessage()]
    assert record.getMessage().startswith("linearize:") and "'p.l'" in record.getMessage()
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="flexbody"):
        fb.linearize(system, state=[-np.pi / 2])  # hanging: at rest, nothing said
    assert not [r for r in caplog.records if "not a static equilibrium" in r.getMessage()]
