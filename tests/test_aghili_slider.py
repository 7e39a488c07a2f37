"""Aghili's slider experiment [AG IX, Fig. 7–8, Table II] with the slider as a unilateral contact (#35 item 4).

A planar 3R arm whose endpoint rides on a rail at y = −0.27 m (a hinge: the wrist's rotation is free), the task the
endpoint's x and the last link's angle θ: x_d(t) = −0.075 + 0.225 sin(πt + π/9) m, θ_d = 0, G_P = 480, G_D = 45,
G_F = 3, G_I = 0.1 (the paper's). The paper does not give the arm's lengths and masses; these are assumed
(0.4, 0.35, 0.1 m; 3, 2, 0.5 kg), so its numbers are reported beside ours, not matched. Joints about z: gravity is
borne by the bearings, as on the paper's table."""

import numpy as np
import pytest

import flexbody as fb

ctl = fb.control
LENGTHS = (0.4, 0.35, 0.1)
Y0 = -0.27


def _arm():
    tree = fb.RigidTree("csa", gravity=(0.0, 0.0, -9.81))
    z = (0.0, 0.0, 1.0)
    tree.add_link("l1", None, fb.Revolute(z), mass=3.0, com=(0.2, 0, 0), inertia=(0.01, 0.05, 0.05))
    tree.add_link(
        "l2", "l1", fb.Revolute(z), origin=(0.4, 0, 0), mass=2.0, com=(0.175, 0, 0), inertia=(0.01, 0.03, 0.03)
    )
    tree.add_link(
        "l3", "l2", fb.Revolute(z), origin=(0.35, 0, 0), mass=0.5, com=(0.05, 0, 0), inertia=(1e-3, 1e-3, 1e-3)
    )
    return tree, tree.point("l3", (LENGTHS[2], 0.0, 0.0))


def _inverse_kinematics(x: float, y: float, theta: float) -> np.ndarray:
    """q (3,) with the endpoint at (x, y) and the last link at θ = q₁ + q₂ + q₃, elbow down (closed form)."""
    l1, l2, l3 = LENGTHS
    wx, wy = x - l3 * np.cos(theta), y - l3 * np.sin(theta)
    q2 = -np.arccos((wx * wx + wy * wy - l1 * l1 - l2 * l2) / (2 * l1 * l2))
    q1 = np.arctan2(wy, wx) - np.arctan2(l2 * np.sin(q2), l1 + l2 * np.cos(q2))
    return np.array([q1, q2, theta - q1 - q2])


def _x_desired(t):
    phase = np.pi * t + np.pi / 9
    return -0.075 + 0.225 * np.sin(phase), 0.225 * np.pi * np.cos(phase), -0.225 * np.pi**2 * np.sin(phase)


def _reference(t):
    x, xd, xdd = _x_desired(t)
    return [np.array([x]), np.array([0.0])], np.array([xd, 0.0]), np.array([xdd, 0.0])


def _path(t, h=1e-4):
    """(q, q̇, q̈) of the desired motion at t: the closed-form inverse kinematics and its five-point derivatives."""
    qs = [_inverse_kinematics(_x_desired(t + k * h)[0], Y0, 0.0) for k in (-2, -1, 0, 1, 2)]
    return (
        qs[2],
        (qs[0] - 8 * qs[1] + 8 * qs[3] - qs[4]) / (12 * h),
        (-qs[0] + 16 * qs[1] - 30 * qs[2] + 16 * qs[3] - qs[4]) / (12 * h * h),
    )


def _task(tree, tip):
    return ctl.StackedTask([ctl.PointTask(tip, components=(0,)), ctl.PlanarOrientationTask(tree.frame("l3"))])


def _systems(q0):
    """The experiment's slider (a bilateral row), and the rail as a unilateral, frictionless contact the endpoint
    presses up against (normal −y: PIDC's constraint force is mostly a push there)."""
    tree, tip = _arm()
    rail = fb.Plane((0.0, -1.0, 0.0), point=(0.0, Y0, 0.0))
    slider = fb.System([tree], constraints=[fb.OnSurface(tip, rail)], q0=q0)
    contact = fb.System([tree], constraints=[fb.Contact(tip, rail, name="rail")], q0=q0)
    return tree, tip, slider, contact


def test_pidc_asks_the_least_torque_and_the_force_law_holds_the_rail_at_states_of_the_stroke():
    """At 20 states of the desired motion (closed-form inverse kinematics), with the controllers fresh: PIDC's torque
    has the least norm of the three (Aghili: "the PIDC requires minimum joint torque at every instance"; the
    hybrid law adds (I − P)u_F, orthogonal to it: ‖τ_h‖² = ‖τ_PIDC‖² + ‖(I − P)(…)‖², to 1e-9), and the contact
    force law's torque asks the rail for the 5 N set-point, the same torque as the hybrid law with λ_d = 5 N on the
    bilateral slider (1e-9): on a frictionless contact both are Aghili's [AG-49..52]."""
    tree, tip, slider, contact = _systems(_path(0.0)[0])
    slider_asm, contact_asm = slider.assemble(), contact.assemble()
    for t in np.linspace(0.0, 1.9, 20):
        q, qd, _ = _path(t)
        state = slider_asm.workspace(t, q, qd)
        pidc = ctl.ProjectedInverseDynamicsControl(_task(tree, tip), _reference, 480.0, 45.0)
        hybrid = ctl.HybridMotionForceControl(_task(tree, tip), _reference, 480.0, 45.0, [5.0], gf=3.0, gi=0.1)
        force = ctl.ContactForceControl(_task(tree, tip), _reference, 480.0, 45.0, 5.0, gf=3.0, gi=0.1)
        tau_p, tau_h = pidc(t, state, slider_asm), hybrid(t, state, slider_asm)
        tau_f = force(t, contact_asm.workspace(t, q, qd), contact_asm)
        assert np.linalg.norm(tau_p) <= np.linalg.norm(tau_h) and np.linalg.norm(tau_p) <= np.linalg.norm(tau_f)
        assert np.linalg.norm(tau_h) ** 2 == pytest.approx(
            np.linalg.norm(tau_p) ** 2 + np.linalg.norm(tau_h - tau_p) ** 2, rel=1e-9
        )
        assert force.diagnostics["contact_force_predicted"][0] == pytest.approx(5.0, rel=1e-12)
        np.testing.assert_allclose(tau_f, tau_h, rtol=0, atol=1e-9 * np.abs(tau_h).max())


def _norms(run) -> tuple[float, float]:
    """(RMS of ‖τ‖, peak max_i |τ_i|) of a run's requested torques [N·m] (Table II's norms)."""
    tau = np.asarray(run.histories["tau_k"])
    return float(np.sqrt(np.mean(np.sum(tau**2, axis=1)))), float(np.abs(tau).max())


@pytest.mark.slow
def test_the_slider_experiment_force_law_against_pidc():
    """One period (2 s, dt = 1 ms) of the experiment, each controller on its plant:

    - on the bilateral slider (RK4), PIDC and the hybrid law with λ_d = 0 (the paper's): the hybrid law holds λ at 0
      and asks more torque — the paper measured +75 % (RMS) and +21 % (peak) on its robot; here +15.4 % and +24.3 %
      (RMS 1.92 → 2.22 N·m, peak 2.54 → 3.16 N·m; the arm's masses are assumed, and the model is exact, so PIDC's
      constraint force is its own, −0.46 to 5.26 N (a push, but for a pull between 0.76 and 0.88 s), not joint
      friction's);
    - on the unilateral rail (fb.MoreauJean), the contact force law at 5 N keeps the contact at every step (4.64 to
      5.31 N; RMS 2.08, peak 2.48 N·m), and Aghili's motion law loses it where the force it needs turns to a pull: at
      the first crossing of the least-effort force along the desired motion, λ_n = Dᵀ(M q̈ + h)/DᵀD (D = Jᵀn,
      Pinocchio), t* = 0.756460 s, within one step (opened at the step from 0.757 s)."""
    from scipy.optimize import brentq

    pytest.importorskip("pinocchio")
    from pinocchio_oracle import PinocchioOracle

    q0, qd0, _ = _path(0.0)
    tree, tip, slider, contact = _systems(q0)
    pidc = ctl.ProjectedInverseDynamicsControl(_task(tree, tip), _reference, 480.0, 45.0)
    hybrid = ctl.HybridMotionForceControl(_task(tree, tip), _reference, 480.0, 45.0, [0.0], gf=3.0, gi=0.1)
    run_p = fb.simulate(slider, 2.0, integrator=fb.RK4(dt=1e-3), controller=pidc, v0=qd0)
    run_h = fb.simulate(slider, 2.0, integrator=fb.RK4(dt=1e-3), controller=hybrid, v0=qd0)
    (rms_p, peak_p), (rms_h, peak_h) = _norms(run_p), _norms(run_h)
    print(f"PIDC {rms_p:.4f} {peak_p:.4f}; hybrid {rms_h:.4f} {peak_h:.4f}: +{100 * (rms_h / rms_p - 1):.1f} % RMS, "
          f"+{100 * (peak_h / peak_p - 1):.1f} % peak; PIDC's λ {run_p.histories['lam'].min():.3f} .. "
          f"{run_p.histories['lam'].max():.3f} N")  # fmt: skip
    assert np.abs(run_h.histories["lam"]).max() < 1e-9 and rms_h > rms_p and peak_h > peak_p
    force = ctl.ContactForceControl(_task(tree, tip), _reference, 480.0, 45.0, 5.0, gf=3.0, gi=0.1)
    held = fb.simulate(contact, 2.0, integrator=fb.MoreauJean(dt=1e-3), controller=force, v0=qd0)
    pressed = held.histories["contact_normal_force"][:-1, 0]
    print(f"force law: {pressed.min():.3f} .. {pressed.max():.3f} N, norms {_norms(held)}")
    assert pressed.min() > 4.0 and pressed.max() < 6.0
    oracle = PinocchioOracle(tree)

    def normal_force(t):
        q, qd, qdd = _path(t)
        D = oracle.point_jacobian(q, "l3", tip.offset).T @ np.array([0.0, -1.0, 0.0])
        return float(D @ oracle.inverse_dynamics(q, qd, qdd)) / float(D @ D)

    grid = np.linspace(0.1, 2.0, 191)
    values = np.array([normal_force(t) for t in grid])
    first = int(np.flatnonzero((values[:-1] > 0.0) & (values[1:] <= 0.0))[0])
    t_star = brentq(normal_force, grid[first], grid[first + 1], xtol=1e-12)
    motion = ctl.ContactForceControl(_task(tree, tip), _reference, 480.0, 45.0, 0.0, motion_only=True)
    lost = fb.simulate(contact, 1e-3 * round((t_star + 0.02) / 1e-3), integrator=fb.MoreauJean(dt=1e-3),
                       controller=motion, v0=qd0)  # fmt: skip
    pushing = lost.histories["contact_normal_force"][:-1, 0] > 0.0
    after = lost.times[:-1] > 0.1
    opened = lost.times[:-1][after & ~pushing][0]
    print(f"motion law: t* = {t_star:.6f} s, opened at {opened:.6f} s")
    assert abs(opened - t_star) <= 1e-3
