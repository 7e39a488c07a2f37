"""Least-norm actuator inputs of inverse statics [DE 6.3]: when the task leaves inputs free, ‖τ_k‖ is
minimised over the solution set. Checked against the closed-form statics of a rigid two-link arm
minimised by scipy, and on the arm carrying a flexible beam against a scan of the solution curve made
with a different parameterisation (the first joint angle prescribed as an extra task row)."""

import numpy as np
import pytest
from scipy.optimize import brentq, minimize_scalar

import flexbody as fb
from flexbody.mechanisms.flexible import arm_with_beam
from flexbody.solvers.inverse_statics import _BorderedNewton, inverse_statics

G0, L1, L2, M1, M2 = 9.81, 0.5, 0.4, 2.0, 1.0


def _rigid_arm():
    joint = fb.Revolute(axis=(0.0, 1.0, 0.0))
    tree = fb.RigidTree("arm", gravity=(0.0, 0.0, -G0))
    l1 = tree.add_link("l1", None, joint, mass=M1, com=(L1 / 2, 0, 0), inertia=[1e-4, 0.04, 0.04])
    l2 = tree.add_link("l2", "l1", joint, origin=(L1, 0, 0), mass=M2, com=(L2 / 2, 0, 0), inertia=[1e-4, 0.01, 0.01])
    asm = fb.System([tree], [], actuators=[l1, l2], q0=np.array([0.3, -0.5])).assemble()
    return asm, fb.PointTask(tree.point("l2", (L2, 0, 0)), components=(2,))


def _closed_form_torques(q1, q12):
    """τ = ∂V/∂q for rods rotating about +y (z = −l sin q), V = g Σ m z_com."""
    t2 = -G0 * M2 * L2 / 2 * np.cos(q12)
    return np.array([-G0 * (M1 * L1 / 2 + M2 * L1) * np.cos(q1) + t2, t2])


def _closed_form_local_minima(z_d):
    """Local minima of ‖τ‖² on the closed solution curve l1 sin q1 + l2 sin q12 = −z_d (both elbow
    branches): roots of d(½‖τ‖²)/dq1 = τ·dτ/dq1 going from − to + on a 1440-point scan of q1, refined by
    brentq, with dq12/dq1 = −l1 cos q1 / (l2 cos q12) along the curve: [(‖τ‖, τ, q1, q12), ...]."""
    c_1, c_2 = G0 * (M1 * L1 / 2 + M2 * L1), G0 * M2 * L2 / 2

    def q12_of(q1, branch):
        a = np.arcsin((-z_d - L1 * np.sin(q1)) / L2)
        return a if branch == 0 else np.pi - a

    def slope(q1, branch):
        q12 = q12_of(q1, branch)
        dq12 = -L1 * np.cos(q1) / (L2 * np.cos(q12))
        dt2 = c_2 * np.sin(q12) * dq12
        return _closed_form_torques(q1, q12) @ np.array([c_1 * np.sin(q1) + dt2, dt2])

    grid = np.linspace(-np.pi, np.pi, 1441)
    feasible = grid[np.abs(-z_d - L1 * np.sin(grid)) < 0.999 * L2]
    minima = []
    for branch in (0, 1):
        h = np.array([slope(q, branch) for q in feasible])
        for i in np.flatnonzero((h[:-1] < 0) & (h[1:] > 0) & (np.diff(feasible) < 0.01)):
            q1 = brentq(slope, feasible[i], feasible[i + 1], args=(branch,), xtol=1e-15)
            tau = _closed_form_torques(q1, q12_of(q1, branch))
            minima.append((float(np.linalg.norm(tau)), tau, q1, q12_of(q1, branch)))
    return minima


def test_rigid_arm_least_norm_torques_match_the_closed_form_minimum():
    """The tip height leaves one input free; measured: τ_k equal to a closed-form local minimum of ‖τ‖ to
    7.7e-10 N·m and q1 to 8e-11 rad, first-order optimality ‖Zᵀτ_k‖/‖τ_k‖ ≤ 1e-9."""
    asm, task = _rigid_arm()
    z_d = -0.2
    change = inverse_statics(asm, task, [z_d], inputs="least_change")
    sol = inverse_statics(asm, task, [z_d])
    assert sol.reachable and sol.rank == 1 and sol.optimality <= 1e-9 and sol.descents > 0
    assert np.linalg.norm(sol.tau_k) < np.linalg.norm(change.tau_k)
    best = min(_closed_form_local_minima(z_d), key=lambda m: np.linalg.norm(m[1] - sol.tau_k))
    assert np.abs(best[1] - sol.tau_k).max() <= 1e-9
    assert abs(np.angle(np.exp(1j * (best[2] - sol.q[0])))) <= 1e-8
    assert abs(np.angle(np.exp(1j * (best[3] - sol.q[0] - sol.q[1])))) <= 1e-8


def test_least_norm_inputs_are_a_local_minimum_along_the_solution_curve():
    """Arm with a flexible beam, tip-node height task: the least-norm τ_k is the minimum of ‖τ_k(q1)‖ on
    the solution curve traced with q1 prescribed (stacked task, square inverse statics), bracketed by a
    scan from the least-change solution and refined by Brent."""
    asm = arm_with_beam(order=1, divisions=(8, 1, 1), q0=(0.3, -0.5), young=7e7).assemble()
    beam = asm.bodies[0]
    P = beam.mesh.points
    tip = int(np.argmax(np.linalg.norm(P - P[beam.nodes("x0")].mean(0), axis=1)))
    z_d = P[tip][2] + 0.15
    height = fb.PointTask(fb.Node(beam, tip), components=(2,))
    change = inverse_statics(asm, height, [z_d], inputs="least_change")
    sol = inverse_statics(asm, height, [z_d])
    assert sol.reachable and sol.optimality <= 1e-9
    assert np.linalg.norm(sol.tau_k) < 0.5 * np.linalg.norm(change.tau_k)  # far from the start
    # the reported G = dx/dτ_k is the one at the returned point (a fresh bordered Newton there)
    fresh = _BorderedNewton(asm, height, np.array([z_d]), 0.0, 1e-10)
    fresh.direction(sol.q, sol.equilibrium.lam, sol.tau_k)
    assert np.abs(sol.G - fresh.G).max() <= 1e-12 * np.abs(fresh.G).max()
    pinned = fb.StackedTask([height, fb.JointTask("arm.l1")])
    start = {"tau_k0": change.tau_k, "q0": change.q}

    def norm_at(q1):
        s = inverse_statics(asm, pinned, [z_d, q1], **start)
        assert s.reachable and s.rank == 2
        start.update(tau_k0=s.tau_k, q0=s.q)
        return float(np.linalg.norm(s.tau_k))

    q1, values = change.q[0], [norm_at(change.q[0])]
    direction = -1.0 if norm_at(q1 - 0.01) < values[0] else 1.0
    start.update(tau_k0=change.tau_k, q0=change.q)
    while len(values) < 3 or values[-1] < values[-2]:  # walk down the curve to a bracket
        q1 += direction * 0.2
        values.append(norm_at(q1))
        assert len(values) < 40
    r = minimize_scalar(norm_at, bracket=(q1 - 2 * direction * 0.2, q1 - direction * 0.2, q1), tol=1e-10)
    assert abs(np.linalg.norm(sol.tau_k) - r.fun) <= 1e-7 * r.fun
    assert abs(sol.q[0] - r.x) <= 1e-4


def test_inputs_option_is_checked():
    asm, task = _rigid_arm()
    with pytest.raises(fb.FlexbodyError, match="inputs must be"):
        inverse_statics(asm, task, [-0.2], inputs="smallest")
