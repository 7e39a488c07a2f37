"""Force regulation by admittance (flexbody/control/admittance.py, #35 item 3): a planar 2R arm (rotations about y)
presses its tip on a floor through the direct mapping of its tip task, the task's reference moved down by the force
loop, against the closed form of the pressed force computed independently (Pinocchio's mass matrix and point
Jacobian)."""

import numpy as np
import pytest

import flexbody as fb
from flexbody.errors import ModelError

pin = pytest.importorskip("pinocchio")
from pinocchio_oracle import PinocchioOracle  # noqa: E402  (needs pinocchio)

G = 9.81
LENGTHS = (0.4, 0.4)  # [m]
X0, FLOOR = 0.5, -0.4  # [m], the tip on the floor
FORCE, KP, KV, GAIN, MU = 20.0, 100.0, 20.0, 5e-3, 1.0


def _arm():
    tree = fb.RigidTree("arm", gravity=(0.0, 0.0, -G))
    y = (0.0, 1.0, 0.0)
    tree.add_link("l1", None, fb.Revolute(y), mass=2.0, com=(0.2, 0, 0), inertia=(0.01, 0.03, 0.03))
    tree.add_link("l2", "l1", fb.Revolute(y), origin=(0.4, 0, 0), mass=1.5, com=(0.2, 0, 0), inertia=(0.01, 0.02, 0.02))
    return tree, tree.point("l2", (LENGTHS[1], 0.0, 0.0))


def _inverse_kinematics(x: float, z: float) -> np.ndarray:
    """q (2,) with the tip at (x, z), elbow up (a link at angle θ about y points along (cos θ, 0, −sin θ))."""
    l1, l2 = LENGTHS
    q2 = np.arccos((x * x + z * z - l1 * l1 - l2 * l2) / (2 * l1 * l2))
    return np.array([np.arctan2(-z, x) - np.arctan2(l2 * np.sin(q2), l1 + l2 * np.cos(q2)), q2])


def _pressing(dt: float, t_end: float = 1.0, loop=None):
    """The run of the arm pressing the floor (μ = 1) under the admittance law, and the contact's effective masses
    (G M⁻¹ Gᵀ)⁻¹ (2, 2) of its tangent x and normal z rows from Pinocchio at the start."""
    tree, tip = _arm()
    q0 = _inverse_kinematics(X0, FLOOR)
    floor = fb.Contact(tip, fb.Plane((0.0, 0.0, 1.0), point=(0.0, 0.0, FLOOR)), friction=MU, name="tip")
    system = fb.System([tree], constraints=[floor], q0=q0)
    motion = fb.control.DirectMappingControl(
        fb.control.PointTask(tip, components=(0, 2)), np.array([X0, FLOOR]), KP, KV
    )
    loop = loop or fb.control.ContactForceLoop(FORCE, (0.0, -1.0), GAIN)
    run = fb.simulate(
        system, t_end, integrator=fb.MoreauJean(dt=dt), controller=fb.control.AdmittanceControl(motion, [loop])
    )
    oracle = PinocchioOracle(tree)
    J = oracle.point_jacobian(q0, "l2", tip.offset)[[0, 2]]
    return run, np.linalg.inv(J @ np.linalg.solve(oracle.mass_matrix(q0), J.T))


def test_the_pressed_force_follows_the_closed_form_first_order_law_to_first_order_in_the_step():
    """With the tip held (sticking) and the task's rows those of the contact, the law's commanded acceleration into
    the floor is what the floor stops: F = m_n (k_p s + k_v ṡ) with m_n = [(G M⁻¹ Gᵀ)⁻¹]_zz, and ṡ = k (f_d − F)
    gives F(t) = f_d − (f_d − F₀) e^{−t/τ}, τ = (1 + m_n k_v k)/(m_n k_p k), F₀ = m_n k_v k f_d/(1 + m_n k_v k).
    The run, its torques held over each step and the force measured after it, departs from it by O(h) (measured
    5.37e-3, 2.69e-3 N of 20 N at h = 1, 0.5 ms, from 10 ms on); the friction the tip needs to stick is
    [(G M⁻¹ Gᵀ)⁻¹]_xz/[..]_zz of the normal force (−0.167, inside μ = 1) at every step."""
    errors = []
    for dt in (1e-3, 5e-4):
        run, m = _pressing(dt)
        m_n, t = m[1, 1], run.times[:-1]
        tau = (1.0 + m_n * KV * GAIN) / (m_n * KP * GAIN)
        first = m_n * KV * GAIN * FORCE / (1.0 + m_n * KV * GAIN)
        expected = FORCE - (FORCE - first) * np.exp(-t / tau)
        normal = run.histories["contact_normal_force"][:-1, 0]
        errors.append(np.abs(normal - expected)[t >= 0.01].max())
        friction = run.histories["contact_friction_force"][:-1, 0]
        pressed = normal > 1e-9  # (the first step's round-off at the touching start)
        assert pressed[1:].all() and np.abs(run.histories["contact_slip_speed"]).max() < 1e-12
        assert np.allclose(friction[pressed, 0] / normal[pressed], m[0, 1] / m_n, rtol=1e-8, atol=0)
        assert np.allclose(run.histories["admittance_error"][1:-1, 0], FORCE - normal[:-1], rtol=0, atol=1e-12)
    assert errors[0] < 6e-3 and 1.9 < errors[0] / errors[1] < 2.1  # O(h)


def _pi_closed_form(t, m_n, integral_gain):
    """F(t) of the pressed tip under ṡ = k e + k_I z, ż = e = f_d − F, F = m_n (k_p s + k_v ṡ), from s = z = 0: the
    linear system in (s, z) solved by its matrix exponential (scipy)."""
    from scipy.linalg import expm

    c = 1.0 + m_n * KV * GAIN  # ṡ c = k f_d − k m_n k_p s + k_I z
    A = np.array([[-GAIN * m_n * KP / c, integral_gain / c], [-m_n * KP, 0.0]])
    A[1] -= m_n * KV * A[0]  # ż = f_d − m_n k_p s − m_n k_v ṡ
    b = np.array([GAIN * FORCE / c, FORCE - m_n * KV * GAIN * FORCE / c])
    augmented = np.zeros((3, 3))
    augmented[:2, :2], augmented[:2, 2] = A, b
    x = np.array([expm(augmented * ti)[:2, 2] for ti in t])  # from x(0) = 0
    rate = x @ A.T + b
    return m_n * (KP * x[:, 0] + KV * rate[:, 0])


def test_the_integral_gain_follows_its_closed_form_and_a_rate_bound_caps_the_approach():
    """With k_I the pressed force obeys a second-order linear law (:func:`_pi_closed_form`, solved independently by
    scipy's matrix exponential); the run departs from it by O(h) (measured 1.9e-2, 9.4e-3 N of 20 N at h = 1,
    0.5 ms, from 10 ms on). With max_rate the shift moves no faster than it (here for the whole 0.2 s: k f_d = 0.1 m/s
    is ten times the bound)."""
    errors, integral_gain = [], 0.02
    for dt in (1e-3, 5e-4):
        run, m = _pressing(dt, 1.0, fb.control.ContactForceLoop(FORCE, (0.0, -1.0), GAIN, integral_gain=integral_gain))
        t, normal = run.times[:-1], run.histories["contact_normal_force"][:-1, 0]
        errors.append(np.abs(normal - _pi_closed_form(t, m[1, 1], integral_gain))[t >= 0.01].max())
    assert errors[0] < 2.5e-2 and 1.9 < errors[0] / errors[1] < 2.1
    capped = _pressing(1e-3, 0.2, fb.control.ContactForceLoop(FORCE, (0.0, -1.0), GAIN, max_rate=0.01))[0]
    shift = capped.histories["admittance_shift"][:, 1]
    assert np.abs(np.diff(shift)).max() <= 0.01 * 1e-3 * (1 + 1e-12) and shift[-1] < -0.9 * 0.01 * 0.199


def test_the_motion_law_given_is_left_as_it_was_and_bad_loops_are_refused_by_name():
    tree, tip = _arm()
    q0 = _inverse_kinematics(X0, FLOOR)
    task = fb.control.PointTask(tip, components=(0, 2))
    reference = fb.control.Setpoint(np.array([X0, FLOOR]))
    motion = fb.control.DirectMappingControl(task, reference, KP, KV)
    law = fb.control.AdmittanceControl(motion, [fb.control.ContactForceLoop(FORCE, (0.0, -1.0), GAIN)])
    assert motion.reference is reference and law.law.reference != reference
    with pytest.raises(ModelError, match=r"direction must be finite of shape \(2, 1\)"):
        fb.control.AdmittanceControl(motion, [fb.control.ContactForceLoop(FORCE, (0.0, 0.0, -1.0), GAIN)])
    with pytest.raises(ModelError, match="gain must be finite and ≥ 0"):
        fb.control.ContactForceLoop(FORCE, (0.0, -1.0), -1.0)
    with pytest.raises(ModelError, match="max_rate must be > 0"):
        fb.control.ContactForceLoop(FORCE, (0.0, -1.0), GAIN, max_rate=0.0)
    with pytest.raises(ModelError, match="motion must be a TaskController"):
        fb.control.AdmittanceControl(lambda t, s, a: 0.0, [fb.control.ContactForceLoop(FORCE, (0.0, -1.0), GAIN)])
    with pytest.raises(ModelError, match="loops must be a non-empty sequence"):
        fb.control.AdmittanceControl(motion, [])
    floor = fb.Contact(tip, fb.Plane((0.0, 0.0, 1.0), point=(0.0, 0.0, FLOOR)), friction=MU, name="tip")
    system = fb.System([tree], constraints=[floor], q0=q0)
    for loop, message, integrator in (
        (fb.control.ContactForceLoop(-1.0, (0.0, -1.0), GAIN), "desired normal force must be finite and ≥ 0 N", None),
        (
            fb.control.ContactForceLoop(FORCE, (0.0, -1.0), GAIN, contacts=["heel"]),
            r"contacts \['heel'\] are not",
            None,
        ),
    ):
        law = fb.control.AdmittanceControl(motion, [loop])
        with pytest.raises(ModelError, match=message):
            fb.simulate(system, 0.01, integrator=integrator or fb.MoreauJean(dt=1e-3), controller=law)
    free = fb.System([tree], q0=q0)
    law = fb.control.AdmittanceControl(motion, [fb.control.ContactForceLoop(FORCE, (0.0, -1.0), GAIN)])
    with pytest.raises(ModelError, match=r"measured no contact forces; simulate with fb\.MoreauJean"):
        fb.simulate(free, 0.01, integrator=fb.RK4(dt=1e-3), controller=law)
