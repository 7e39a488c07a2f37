"""Joints with several coordinates: spherical and free-flyer (local exponential coordinates with chart
changes), universal and planar — against Pinocchio's free-flyer and spherical joints (random trees and
floating-base robots of example-robot-data), a tumbling body's conserved energy and world angular momentum
through intermediate-axis flips, and finite differences of the exponential-coordinate maps."""

from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import flexbody as fb
from flexbody.errors import ModelError
from flexbody.rigid import exponential_coordinates as expc

pin = pytest.importorskip("pinocchio")


# ------------------------------------------------------------------ independent SO(3) maps (numpy, closed forms)
def skew(w):
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


def right_jacobian(phi):
    """J_r(φ) = I − (1 − cos θ)/θ² [φ]× + (θ − sin θ)/θ³ [φ]×² (θ > 0.1 in these tests)."""
    t = np.linalg.norm(phi)
    W = skew(phi)
    return np.eye(3) - (1 - np.cos(t)) / t**2 * W + (t - np.sin(t)) / t**3 * W @ W


def right_jacobian_rate(phi, rate, h=1e-4):
    """J̇_r φ̇ by Richardson-extrapolated central differences (error O(h⁴))."""

    def d(step):
        return (right_jacobian(phi + step * rate) - right_jacobian(phi - step * rate)) @ rate / (2 * step)

    return (4 * d(h / 2) - d(h)) / 3


def _physical_inertia(rng):
    a, b, c = rng.uniform(0.05, 0.5, 3)
    R = Rotation.from_rotvec(rng.standard_normal(3)).as_matrix()
    return R @ np.diag([a + b, b + c, a + c]) @ R.T


# ------------------------------------------------------------------ against Pinocchio
def _velocity_map(q, v, blocks, n):
    """G with v_pin = G v and Ġv, for free-flyer blocks ("ff", s) and spherical blocks ("ball", s), the other
    coordinates (revolute) passed through: Pinocchio's free-flyer velocity is (Rᵀṗ, ω_body), its spherical
    velocity ω_body = J_r(φ) φ̇."""
    G, Gdv = np.eye(n), np.zeros(n)
    for kind, s in blocks:
        r = slice(s + 3, s + 6) if kind == "ff" else slice(s, s + 3)
        phi, rate = q[r], v[r]
        G[r, r] = right_jacobian(phi)
        Gdv[r] = right_jacobian_rate(phi, rate)
        if kind == "ff":
            R = Rotation.from_rotvec(phi).as_matrix()
            G[s : s + 3, s : s + 3] = R.T
            Gdv[s : s + 3] = -skew(right_jacobian(phi) @ rate) @ R.T @ v[s : s + 3]
    return G, Gdv


def _pin_configuration(q, blocks, idx_q_of):
    """Pinocchio's q: position and quaternion (x, y, z, w) for free flyers, quaternions for spherical joints."""
    out = []
    for entry in idx_q_of:
        kind, s = entry
        if kind == "ff":
            out += list(q[s : s + 3]) + list(Rotation.from_rotvec(q[s + 3 : s + 6]).as_quat())
        elif kind == "ball":
            out += list(Rotation.from_rotvec(q[s : s + 3]).as_quat())
        else:
            out.append(q[s])
    return np.array(out)


def _compare(tree, model, layout, rng, n_states=10, scale=1.5):
    """Largest relative differences of M = GᵀM_pin G and τ = Gᵀτ_pin(q_pin, Gv, Ga + Ġv) over random states."""
    data = model.createData()
    blocks = [e for e in layout if e[0] in ("ff", "ball")]
    worst_M = worst_tau = 0.0
    for _ in range(n_states):
        q = rng.uniform(-scale, scale, tree.n_dofs)
        for kind, s in blocks:  # rotation vectors of length 0.2 … 3.0 rad
            r = slice(s + 3, s + 6) if kind == "ff" else slice(s, s + 3)
            q[r] *= rng.uniform(0.2, 3.0) / np.linalg.norm(q[r])
        v, a = rng.standard_normal(tree.n_dofs), rng.standard_normal(tree.n_dofs)
        G, Gdv = _velocity_map(q, v, blocks, tree.n_dofs)
        q_pin = _pin_configuration(q, blocks, layout)
        M_pin = pin.crba(model, data, q_pin)
        M_pin = np.triu(M_pin) + np.triu(M_pin, 1).T
        tau_pin = pin.rnea(model, data, q_pin, G @ v, G @ a + Gdv)
        M, tau = tree.mass_matrix(q), tree.inverse_dynamics(q, v, a)
        worst_M = max(worst_M, np.abs(M - G.T @ M_pin @ G).max() / np.abs(M).max())
        worst_tau = max(worst_tau, np.abs(tau - G.T @ tau_pin).max() / np.abs(tau).max())
    return worst_M, worst_tau


def test_free_flyer_and_spherical_joints_match_pinocchio():
    rng = np.random.default_rng(0)
    g = np.array([0.0, 0.0, -9.81])
    tree, model = fb.RigidTree("robot", gravity=g), pin.Model()
    model.gravity.linear = g
    bodies = [
        (fb.FreeFlyer(), pin.JointModelFreeFlyer()),
        (fb.Revolute((0, 1, 0)), pin.JointModelRY()),
        (fb.Spherical(), pin.JointModelSpherical()),
        (fb.Revolute((1, 0, 0)), pin.JointModelRX()),
        (fb.Spherical(), pin.JointModelSpherical()),
    ]
    parent, jid = None, 0
    for k, (joint, pin_joint) in enumerate(bodies):
        R = Rotation.from_rotvec(rng.standard_normal(3)).as_matrix() if k else np.eye(3)
        o = 0.3 * rng.standard_normal(3) if k else np.zeros(3)
        m, c, I = rng.uniform(0.5, 3.0), 0.1 * rng.standard_normal(3), _physical_inertia(rng)
        parent = tree.add_link(f"b{k}", parent, joint, origin=o, rotation=R, mass=m, com=c, inertia=I)
        jid = model.addJoint(jid, pin_joint, pin.SE3(R, o), f"b{k}")
        model.appendBodyToJoint(jid, pin.Inertia(m, c, I), pin.SE3.Identity())
    layout = [("ff", 0), ("rev", 6), ("ball", 7), ("rev", 10), ("ball", 11)]
    assert tree.n_dofs == model.nv == 14
    assert tree.coordinate_labels[:6] == [f"robot.b0.{s}" for s in ("tx", "ty", "tz", "rx", "ry", "rz")]
    worst_M, worst_tau = _compare(tree, model, layout, rng)
    assert worst_M < 1e-12 and worst_tau < 1e-9  # τ limited by the test's Ġv differences


FLOATING = {"solo12": "solo_description/robots/solo12.urdf", "anymal": "anymal_b_simple_description/robots/anymal.urdf"}


@pytest.mark.parametrize("robot", sorted(FLOATING))
def test_floating_base_robots_match_pinocchio(robot):
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        root = Path(distribution("example-robot-data").locate_file("cmeel.prefix/share/example-robot-data/robots"))
    except PackageNotFoundError:
        pytest.skip("example-robot-data is not installed")
    path = root / FLOATING[robot]
    tree = fb.load_urdf(path, floating_base=True, visuals=False)
    model = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    assert tree.n_dofs == model.nv and model.nq == model.nv + 1
    by_joint = {limits.joint: tree.link(link).coordinate for link, limits in tree.limits.items()}
    perm = np.arange(tree.n_dofs)  # Pinocchio's v index -> our coordinate
    for j in range(2, model.njoints):
        perm[model.joints[j].idx_v] = by_joint[model.names[j]]
    rng = np.random.default_rng(5)
    data = model.createData()
    worst_M = worst_tau = 0.0
    for _ in range(5):
        q = rng.uniform(-1.5, 1.5, tree.n_dofs)
        q[3:6] *= rng.uniform(0.2, 3.0) / np.linalg.norm(q[3:6])
        v, a = rng.standard_normal(tree.n_dofs), rng.standard_normal(tree.n_dofs)
        G, Gdv = _velocity_map(q, v, [("ff", 0)], tree.n_dofs)
        q_pin = np.concatenate([q[:3], Rotation.from_rotvec(q[3:6]).as_quat(), q[perm[6:]]])
        Gp, Gdvp = G[np.ix_(perm, perm)], Gdv[perm]
        M_pin = pin.crba(model, data, q_pin)
        M_pin = np.triu(M_pin) + np.triu(M_pin, 1).T
        tau_pin = pin.rnea(model, data, q_pin, Gp @ v[perm], Gp @ a[perm] + Gdvp)
        M, tau = tree.mass_matrix(q)[np.ix_(perm, perm)], tree.inverse_dynamics(q, v, a)[perm]
        worst_M = max(worst_M, np.abs(M - Gp.T @ M_pin @ Gp).max() / np.abs(M).max())
        worst_tau = max(worst_tau, np.abs(tau - Gp.T @ tau_pin).max() / np.abs(tau).max())
    assert worst_M < 1e-12 and worst_tau < 1e-9


# ------------------------------------------------------------------ a tumbling body
def _tumbling(inertia=(1.0, 2.0, 3.0)):
    tree = fb.RigidTree("body", gravity=(0, 0, 0))
    body = tree.add_link("body", None, fb.FreeFlyer(), mass=2.0, inertia=inertia)
    return fb.System([tree]).assemble(), tree, body


def _momentum(tree, body, q, v, inertia):
    R = tree.kinematics(q, v).R[body.index]
    w_body = right_jacobian(q[3:6]) @ v[3:6] if np.linalg.norm(q[3:6]) > 1e-3 else v[3:6]
    return R @ (np.asarray(inertia) * w_body), w_body


def test_tumbling_body_flips_about_its_intermediate_axis_conserving_energy_and_momentum():
    inertia = (1.0, 2.0, 3.0)
    asm, tree, body = _tumbling(inertia)
    v0 = np.array([0.1, 0.0, 0.0, 0.05, 3.0, 0.05])  # spin about the intermediate axis, disturbed
    res = fb.simulate(asm, 6.0, integrator=fb.RK4(dt=1e-3), v0=v0, record_every=5)
    L = np.array([_momentum(tree, body, q, v, inertia)[0] for q, v in zip(res.q, res.v)])
    w_y = np.array([_momentum(tree, body, q, v, inertia)[1][1] for q, v in zip(res.q, res.v)])
    energy = res.histories["energy"]
    assert np.abs(energy - energy[0]).max() < 1e-10 * energy[0]
    assert np.abs(L - L[0]).max() < 1e-10 * np.linalg.norm(L[0])
    assert w_y.min() < -2.9 and w_y.max() > 2.9  # the flip: ω_y changes sign
    norms = np.linalg.norm(res.q[:, 3:6], axis=1)
    assert norms.max() <= np.pi + 1e-9 and np.any(np.abs(np.diff(res.q[:, 3:6], axis=0)).max(axis=1) > 1.0)
    assert np.abs(res.q[-1, :3] - [0.6, 0, 0]).max() < 1e-12  # the centre of mass drifts uniformly


def test_tumbling_body_implicitly():
    inertia = (1.0, 2.0, 3.0)
    asm, tree, body = _tumbling(inertia)
    v0 = np.array([0.0, 0.0, 0.0, 0.05, 3.0, 0.05])
    drifts = []
    for dt in (2e-3, 1e-3):
        # Newton to 1e-13: its default stop on the position increment (1e-10) leaves velocity errors up to
        # γ′/(β′h)·1e-10 per step, which at these steps drift the momentum more than the scheme does (1.8e-4)
        settings = fb.GeneralizedAlpha(dt=dt, rho_inf=1.0, tol=1e-13)
        res = fb.simulate(asm, 4.0, integrator=settings, v0=v0, record_every=10)
        L = np.array([_momentum(tree, body, q, v, inertia)[0] for q, v in zip(res.q, res.v)])
        drifts.append(np.abs(L - L[0]).max() / np.linalg.norm(L[0]))
        assert np.linalg.norm(res.q[:, 3:6], axis=1).max() <= np.pi + 0.05
    assert drifts[1] < 2e-6 and 3.0 < drifts[0] / drifts[1] < 5.0  # 4.5e-6, 1.1e-6: second order


# ------------------------------------------------------------------ the maps themselves
def test_exponential_coordinate_maps_match_scipy_and_finite_differences():
    rng = np.random.default_rng(2)
    out, col = np.empty((3, 3)), np.empty(3)
    for length in (1e-7, 0.01, 0.049999, 0.050001, 0.7, 3.0, 5.0):
        phi = rng.standard_normal(3)
        phi *= length / np.linalg.norm(phi)
        rate = rng.standard_normal(3)
        expc.rotation(*phi, out)
        assert np.abs(out - Rotation.from_rotvec(phi).as_matrix()).max() < 1e-15
        if length > 0.1:
            for k in range(3):
                expc.right_jacobian_column(*phi, k, col)
                assert np.abs(col - right_jacobian(phi)[:, k]).max() < 1e-14
            expc.right_jacobian_rate(*phi, *rate, col)
            assert np.abs(col - right_jacobian_rate(phi, rate)).max() < 1e-9
        # the body angular velocity exp(φ)ᵀ d/dt exp(φ) is J_r(φ) φ̇ (checked through the rotation itself)
        h = 1e-6
        R = Rotation.from_rotvec(phi).as_matrix()
        R_dot = (
            Rotation.from_rotvec(phi + h * rate).as_matrix() - Rotation.from_rotvec(phi - h * rate).as_matrix()
        ) / (2 * h)
        W = R.T @ R_dot
        for k in range(3):
            expc.right_jacobian_column(*phi, k, col)
            out[:, k] = col
        assert np.abs(np.array([W[2, 1], W[0, 2], W[1, 0]]) - out @ rate).max() < 1e-8


def test_chart_change_keeps_the_rotation_and_its_derivatives():
    rng = np.random.default_rng(9)
    phi = rng.standard_normal(3)
    phi *= 3.6 / np.linalg.norm(phi)
    rate, acc = rng.standard_normal(3), rng.standard_normal(3)
    other = expc.other_chart(phi)
    assert abs(np.linalg.norm(other) - (2 * np.pi - 3.6)) < 1e-14
    assert np.abs(Rotation.from_rotvec(other).as_matrix() - Rotation.from_rotvec(phi).as_matrix()).max() < 1e-15
    h = 1e-4

    def path(t):
        return expc.other_chart(phi + t * rate + 0.5 * t * t * acc)

    fd_rate = (path(h) - path(-h)) / (2 * h)
    fd_acc = (path(h) - 2 * path(0.0) + path(-h)) / h**2
    assert np.abs(expc.chart_velocity(phi, rate) - fd_rate).max() < 1e-7
    assert np.abs(expc.chart_acceleration(phi, rate, acc) - fd_acc).max() < 1e-5


def test_universal_and_planar_joints_move_their_frames_as_stated():
    tree = fb.RigidTree("t", gravity=(0, 0, 0))
    cross = tree.add_link(
        "cross", None, fb.Universal((1, 0, 0), (0, 1, 0)), origin=(0.1, 0.2, 0.3), mass=1.0, inertia=(0.1, 0.1, 0.1)
    )
    puck = tree.add_link("puck", cross, fb.Planar((0, 0, 1)), origin=(0.5, 0, 0), mass=0.5, inertia=(0.01, 0.01, 0.02))
    assert tree.n_dofs == 5 and cross.coordinates == (0, 1) and puck.coordinates == (2, 3, 4)
    assert tree.coordinate_labels == ["t.cross.u1", "t.cross.u2", "t.puck.t1", "t.puck.t2", "t.puck.r"]
    q = np.array([0.3, -0.4, 0.2, -0.1, 0.7])
    kin = tree.kinematics(q)
    R_cross = Rotation.from_rotvec([0.3, 0, 0]).as_matrix() @ Rotation.from_rotvec([0, -0.4, 0]).as_matrix()
    assert np.abs(kin.R[cross.index] - R_cross).max() < 1e-15 and np.allclose(kin.p[cross.index], (0.1, 0.2, 0.3))
    t1, t2 = fb.Planar((0, 0, 1)).in_plane_axes()
    p_puck = kin.p[cross.index] + R_cross @ ((0.5, 0, 0) + 0.2 * t1 - 0.1 * t2)
    assert np.abs(kin.p[puck.index] - p_puck).max() < 1e-15
    assert np.abs(kin.R[puck.index] - R_cross @ Rotation.from_rotvec([0, 0, 0.7]).as_matrix()).max() < 1e-15


def test_bad_joint_input_is_named():
    with pytest.raises(ModelError, match="not a finite unit quaternion"):
        fb.FreeFlyer.coordinates((0, 0, 1), quaternion=(0, 0, 0, 2.0))
    with pytest.raises(ModelError, match="parallel"):
        fb.Universal((1, 0, 0), (2, 0, 0))
    with pytest.raises(ModelError, match="not a rotation matrix"):
        fb.Spherical.coordinates(rotation=np.diag([1.0, 1.0, -1.0]))
    tree = fb.RigidTree("t")
    tree.add_link("base.tx", None, fb.Revolute())
    with pytest.raises(ModelError, match=r"'base.tx'"):
        tree.add_link("base", None, fb.FreeFlyer(), mass=1.0, inertia=(0.1, 0.1, 0.1))
    q = fb.FreeFlyer.coordinates((1, 2, 3), quaternion=Rotation.from_rotvec([0.1, 0.2, 0.3]).as_quat())
    assert np.allclose(q, [1, 2, 3, 0.1, 0.2, 0.3], atol=1e-15)
