"""Tests of flexbody.rigid (RigidTree): against Pinocchio, against closed-form dynamics, and physics checks.

* Random seeded trees (serial chain 8 dofs, branching tree 14 dofs, branching tree 34 dofs): revolute
  and prismatic joints with random unit axes, random placements, masses, coms and physical inertias,
  Fixed joints in between (also on the ground and chained), non-axis-aligned gravity. M, b, g, h,
  inverse dynamics, forward dynamics, point/angular Jacobians, J̇q̇ of points and frames, link poses,
  energies are compared with Pinocchio (tests/pinocchio_oracle.py).
  Tolerance: ‖flexbody − pinocchio‖_max ≤ RTOL · max(‖pinocchio‖_max, floor) with RTOL = 1e-10 and the
  max-norm over all entries of the compared array (floor: a physical scale of the quantity, so that
  an identically-zero reference, e.g. the angular bias of a root link, is compared absolutely).
* Aghili (2005) eq. (66): two-link arm with point masses at the distal ends, closed-form M and h.
* Physics checks without Pinocchio: Jacobians vs. finite differences of positions, J̇q̇ vs. finite
  differences of J(q(t))v, g = ∂V/∂q, b = Ṁv − ½∂(vᵀMv)/∂q, M SPD, T = ½vᵀMv, power balance,
  forward ∘ inverse dynamics = identity.
* Bad input raises FlexbodyError subclasses naming the culprit.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import flexbody as fb
from flexbody.errors import FlexbodyError, ModelError, StateError
from flexbody.rigid import Fixed, Prismatic, Revolute, RigidTree

pin = pytest.importorskip("pinocchio")
from pinocchio_oracle import PinocchioOracle  # noqa: E402

RTOL = 1e-10
GRAVITY = (1.3, -2.1, -9.4)  # not aligned with any axis


# ============================================================================ random trees
def random_rotation(rng) -> np.ndarray:
    return Rotation.random(random_state=rng).as_matrix()


def random_inertia(rng, mass: float) -> np.ndarray:
    """Physical rotational inertia about the com: principal moments from random positive second moments
    s (I1 = s2 + s3, ...) — they satisfy the triangle inequality strictly — rotated randomly."""
    s = mass * rng.uniform(0.005, 0.05, 3)
    moments = np.array([s[1] + s[2], s[0] + s[2], s[0] + s[1]])
    R = random_rotation(rng)
    I = R @ np.diag(moments) @ R.T
    return 0.5 * (I + I.T)


def unit(rng) -> np.ndarray:
    a = rng.normal(size=3)
    return a / np.linalg.norm(a)


def random_tree(seed: int, n_dofs: int, *, branching: bool, n_fixed: int, name: str = "rt") -> RigidTree:
    """A seeded random tree with ``n_dofs`` coordinates (≈ 60 % revolute, 40 % prismatic) and ``n_fixed``
    Fixed links. The first link is Fixed to the ground; at least one Fixed link carries moving children
    and one chain of two consecutive Fixed links is inserted."""
    rng = np.random.default_rng(seed)
    tree = RigidTree(name, gravity=GRAVITY)
    assert n_fixed >= 4
    kinds = ["R" if rng.random() < 0.6 else "P" for _ in range(n_dofs)]
    kinds[0], kinds[1] = "R", "P"  # both kinds surely present
    for pos in sorted(rng.choice(np.arange(2, n_dofs), size=n_fixed - 3, replace=False), reverse=True):
        kinds.insert(int(pos), "F")
    # a ground-fixed base first, then a pair of consecutive Fixed links (child of each other) in the middle
    mid = len(kinds) // 2 + 1
    sequence = ["F", *kinds[: mid - 1], "F", "F", *kinds[mid - 1 :]]
    links = []
    for i, kind in enumerate(sequence):
        if not links:
            parent = None
        elif i == mid + 1:
            parent = links[-1]  # Fixed on Fixed
        elif branching:
            # prefer recent links (deep trees) but branch often; occasionally a second root
            parent = None if rng.random() < 0.05 else links[int(rng.integers(max(0, len(links) - 6), len(links)))]
        else:
            parent = links[-1]
        joint = {"R": lambda: Revolute(unit(rng)), "P": lambda: Prismatic(unit(rng)), "F": Fixed}[kind]()
        mass = float(rng.uniform(0.2, 3.0))
        links.append(
            tree.add_link(
                f"L{i}{kind}",
                parent,
                joint,
                origin=rng.uniform(-0.4, 0.4, 3),
                rotation=random_rotation(rng),
                mass=mass,
                com=rng.uniform(-0.2, 0.2, 3),
                inertia=random_inertia(rng, mass),
            )
        )
    assert tree.n_dofs == n_dofs
    assert sum(isinstance(l.joint, Fixed) for l in tree.links) == n_fixed
    return tree


TREE_SPECS = {
    "chain8": dict(seed=101, n_dofs=8, branching=False, n_fixed=4),
    "tree14": dict(seed=202, n_dofs=14, branching=True, n_fixed=4),
    "tree34": dict(seed=303, n_dofs=34, branching=True, n_fixed=6),
}


@pytest.fixture(scope="module", params=list(TREE_SPECS))
def case(request):
    tree = random_tree(**TREE_SPECS[request.param], name=request.param)
    return tree, PinocchioOracle(tree)


def random_states(tree, seed, count=4):
    rng = np.random.default_rng(seed)
    n = tree.n_dofs
    return [(rng.uniform(-np.pi, np.pi, n), rng.uniform(-2.0, 2.0, n), rng.uniform(-3.0, 3.0, n)) for _ in range(count)]


def rel_err(x, ref, floor: float) -> float:
    """‖x − ref‖_max / max(‖ref‖_max, floor)."""
    x, ref = np.asarray(x, float), np.asarray(ref, float)
    assert x.shape == ref.shape, (x.shape, ref.shape)
    return float(np.abs(x - ref).max() / max(np.abs(ref).max(), floor))


def check(name, x, ref, floor, record, rtol=RTOL):
    e = rel_err(x, ref, floor)
    record[name] = max(record.get(name, 0.0), e)
    assert e <= rtol, f"{name}: relative max-norm error {e:.3e} > {rtol:.0e}"


def offsets(tree, seed):
    rng = np.random.default_rng(seed)
    return {l.name: rng.uniform(-0.3, 0.3, 3) for l in tree.links}


# ============================================================================ vs. Pinocchio
DISCREPANCIES: dict[str, float] = {}


def test_oracle_ordering_matches(case):
    """The oracle's coordinate map: a permutation, identity for a depth-first (e.g. serial) flexbody order,
    and Pinocchio's CRBA consistent with its own RNEA (M columns = τ(e_j) − g) in that ordering."""
    tree, oracle = case
    model = oracle.model
    assert model.nq == model.nv == tree.n_dofs
    assert [l.coordinate for l in tree.coordinate_links] == list(range(tree.n_dofs))
    for link in tree.coordinate_links:
        jid = oracle.frames[link.name].joint_id
        assert model.idx_qs[jid] == model.idx_vs[jid] == int(np.flatnonzero(oracle.perm == link.coordinate)[0])
        assert model.names[jid] == f"joint_{link.name}"
    if tree.name == "chain8":
        assert np.array_equal(oracle.perm, np.arange(tree.n_dofs))
    else:
        assert not np.array_equal(oracle.perm, np.arange(tree.n_dofs))  # the reordering is exercised
    q = np.random.default_rng(5).uniform(-2, 2, tree.n_dofs)
    M = oracle.mass_matrix(q)
    M_rnea = np.array(
        [oracle.inverse_dynamics(q, np.zeros(tree.n_dofs), e) - oracle.gravity_force(q) for e in np.eye(tree.n_dofs)]
    ).T
    assert np.abs(M - M_rnea).max() <= 1e-12 * np.abs(M).max()


def test_joint_space_dynamics_vs_pinocchio(case):
    tree, oracle = case
    rec = DISCREPANCIES
    for q, v, a in random_states(tree, seed=7):
        M, M_ref = tree.mass_matrix(q), oracle.mass_matrix(q)
        check("M", M, M_ref, 1e-300, rec)
        assert np.array_equal(M, M.T)
        check("g", tree.gravity_force(q), oracle.gravity_force(q), 1e-300, rec)
        check("b", tree.bias_force(q, v), oracle.bias_force(q, v), 1e-300, rec)
        check("h=b+g", tree.nonlinear_effects(q, v), oracle.nonlinear_effects(q, v), 1e-300, rec)
        tau_ref = oracle.inverse_dynamics(q, v, a)
        check("inverse_dynamics", tree.inverse_dynamics(q, v, a), tau_ref, 1e-300, rec)
        # forward dynamics vs ABA (conditioning of M can amplify rounding: a little looser)
        check(
            "forward_dynamics",
            tree.forward_dynamics(q, v, tau_ref),
            oracle.forward_dynamics(q, v, tau_ref),
            1e-300,
            rec,
            rtol=1e-8,
        )
        kin = tree.kinematics(q, v)
        T_ref = oracle.kinetic_energy(q, v)
        check("kinetic_energy", kin.kinetic_energy(), T_ref, 1e-300, rec)
        V_ref = oracle.potential_energy(q)
        check("potential_energy", kin.potential_energy(), V_ref, 1.0, rec)


def test_kinematics_vs_pinocchio(case):
    tree, oracle = case
    rec = DISCREPANCIES
    for k, (q, v, _) in enumerate(random_states(tree, seed=8)):
        kin = tree.kinematics(q, v)
        offs = offsets(tree, seed=50 + k)
        # scale floors: a typical length (1 m), velocity and acceleration of the system
        vscale = max(1.0, float(np.abs(v).max()))
        for link in tree.links:
            i = link.index
            R_ref, p_ref = oracle.link_pose(q, link.name)
            check("link R", kin.R[i], R_ref, 1.0, rec)
            check("link p", kin.p[i], p_ref, 1.0, rec)
            o = offs[link.name]
            check("point_position", kin.point_position(link, o), p_ref + R_ref @ o, 1.0, rec)
            Jp = kin.dense(*kin.point_jacobian(link, o))
            check("point_jacobian", Jp, oracle.point_jacobian(q, link.name, o), 1.0, rec)
            Jw = kin.dense(*kin.angular_jacobian(link))
            check("angular_jacobian", Jw, oracle.angular_jacobian(q, link.name), 1.0, rec)
            check("point_velocity", kin.point_velocity(link, o), oracle.point_velocity(q, v, link.name, o), vscale, rec)
            check("angular_velocity", kin.angular_velocity(link), oracle.angular_velocity(q, v, link.name), vscale, rec)
            check(
                "point_bias_acceleration",
                kin.point_bias_acceleration(link, o),
                oracle.point_bias_acceleration(q, v, link.name, o),
                vscale**2,
                rec,
            )
            check(
                "angular_bias_acceleration",
                kin.angular_bias_acceleration(link),
                oracle.angular_bias_acceleration(q, v, link.name),
                vscale**2,
                rec,
            )


def test_oracle_classical_acceleration_is_derivative_of_point_velocity(case):
    """Oracle sanity: Pinocchio's LOCAL_WORLD_ALIGNED classical acceleration at a = 0 is d/dt of the point
    velocity along q(t) = q + t v, v(t) = v (i.e. it includes the ω × v terms)."""
    tree, oracle = case
    q, v, _ = random_states(tree, seed=21, count=1)[0]
    h = 1e-5
    for link in tree.links[-3:]:
        o = np.array([0.2, -0.1, 0.15])
        fd = (oracle.point_velocity(q + h * v, v, link.name, o) - oracle.point_velocity(q - h * v, v, link.name, o)) / (
            2 * h
        )
        acc = oracle.point_bias_acceleration(q, v, link.name, o)
        assert np.abs(acc - fd).max() <= 1e-6 * max(1.0, np.abs(fd).max())


@pytest.fixture(scope="module", autouse=True)
def _report_discrepancies():
    """At the end of the module, print the largest relative discrepancies vs. Pinocchio its checks saw (run with -s;
    each check asserts its own tolerance, so this only reports; under xdist each worker reports its share)."""
    yield
    for k, e in sorted(DISCREPANCIES.items()):
        print(f"  max rel. error vs pinocchio  {k:28s} {e:.2e}")


# ============================================================================ Aghili (2005), eq. (66)
def test_aghili_two_link_arm():
    m, l, g = 1.7, 0.8, 9.81
    arm = RigidTree("aghili", gravity=(0.0, -g, 0.0))
    l1 = arm.add_link("l1", joint=Revolute((0, 0, 1)), mass=m, com=(l, 0, 0))
    arm.add_link("l2", l1, Revolute((0, 0, 1)), origin=(l, 0, 0), mass=m, com=(l, 0, 0))
    rng = np.random.default_rng(66)
    for _ in range(10):
        q, v = rng.uniform(-np.pi, np.pi, 2), rng.uniform(-3, 3, 2)
        c1, c2, s2, c12 = np.cos(q[0]), np.cos(q[1]), np.sin(q[1]), np.cos(q[0] + q[1])
        M_ref = m * l**2 * np.array([[3 + 2 * c2, 1 + c2], [1 + c2, 1.0]])
        h_ref = np.array(
            [
                -m * l**2 * s2 * (v[1] ** 2 + 2 * v[0] * v[1]) + m * l * g * (c12 + 2 * c1),
                m * l**2 * s2 * v[0] ** 2 + m * l * g * c12,
            ]
        )
        g_ref = np.array([m * l * g * (c12 + 2 * c1), m * l * g * c12])
        assert rel_err(arm.mass_matrix(q), M_ref, 1e-300) <= 1e-12
        assert rel_err(arm.nonlinear_effects(q, v), h_ref, 1e-300) <= 1e-12
        assert rel_err(arm.gravity_force(q), g_ref, 1e-300) <= 1e-12
        assert rel_err(arm.bias_force(q, v), h_ref - g_ref, m * l**2) <= 1e-12
        # point C (tip of link 2): y_C = l(s1 + s12), Jacobian row A = l[c1 + c12, c12] (eq. 64, 67)
        kin = arm.kinematics(q, v)
        tip = arm.link("l2")
        assert rel_err(kin.point_position(tip, (l, 0, 0))[1], l * (np.sin(q[0]) + np.sin(q[0] + q[1])), l) <= 1e-12
        A = kin.dense(*kin.point_jacobian(tip, (l, 0, 0)))[1]
        assert rel_err(A, l * np.array([c1 + c12, c12]), l) <= 1e-12


# ============================================================================ physics without Pinocchio
@pytest.fixture(scope="module")
def phys_tree():
    return random_tree(seed=404, n_dofs=12, branching=True, n_fixed=4, name="phys")


def test_jacobians_vs_finite_differences(phys_tree):
    tree = phys_tree
    n, h = tree.n_dofs, 1e-6
    for q, v, _ in random_states(tree, seed=9, count=2):
        kin = tree.kinematics(q, v)
        offs = offsets(tree, seed=3)
        for link in tree.links:
            o = offs[link.name]
            J = kin.dense(*kin.point_jacobian(link, o))
            Jw = kin.dense(*kin.angular_jacobian(link))
            J_fd, Jw_fd = np.zeros((3, n)), np.zeros((3, n))
            for j in range(n):
                e = np.zeros(n)
                e[j] = h
                kp, km = tree.kinematics(q + e), tree.kinematics(q - e)
                J_fd[:, j] = (kp.point_position(link, o) - km.point_position(link, o)) / (2 * h)
                # angular: vee of (R(q+h) − R(q−h)) Rᵀ / 2h
                W = (kp.R[link.index] - km.R[link.index]) @ kin.R[link.index].T / (2 * h)
                Jw_fd[:, j] = [W[2, 1], W[0, 2], W[1, 0]]
            assert np.abs(J - J_fd).max() <= 1e-7 * max(1.0, np.abs(J).max())
            assert np.abs(Jw - Jw_fd).max() <= 1e-7
            # velocities are J v
            assert np.allclose(kin.point_velocity(link, o), J @ v, rtol=0, atol=1e-12 * max(1, np.abs(J @ v).max()))


def test_bias_accelerations_vs_finite_differences(phys_tree):
    """J̇q̇ = d/dt [J(q + t v) v] at t = 0 (central differences, h = 1e-5)."""
    tree = phys_tree
    h = 1e-5
    for q, v, _ in random_states(tree, seed=10, count=2):
        kin = tree.kinematics(q, v)
        kp, km = tree.kinematics(q + h * v), tree.kinematics(q - h * v)
        offs = offsets(tree, seed=4)
        for link in tree.links:
            o = offs[link.name]

            def Jv(k, link=link, o=o, v=v):
                return k.dense(*k.point_jacobian(link, o)) @ v

            def Jwv(k, link=link, v=v):
                return k.dense(*k.angular_jacobian(link)) @ v

            a_fd = (Jv(kp) - Jv(km)) / (2 * h)
            w_fd = (Jwv(kp) - Jwv(km)) / (2 * h)
            scale = max(1.0, np.abs(a_fd).max())
            assert np.abs(kin.point_bias_acceleration(link, o) - a_fd).max() <= 1e-6 * scale, link.name
            assert np.abs(kin.angular_bias_acceleration(link) - w_fd).max() <= 1e-6 * max(1.0, np.abs(w_fd).max())


def test_mass_matrix_spd_and_kinetic_energy(phys_tree):
    tree = phys_tree
    for q, v, _ in random_states(tree, seed=11):
        M = tree.mass_matrix(q)
        assert np.array_equal(M, M.T)
        assert np.linalg.eigvalsh(M).min() > 0
        np.linalg.cholesky(M)
        T = tree.kinematics(q, v).kinetic_energy()
        assert abs(T - 0.5 * v @ M @ v) <= 1e-12 * T
        assert T > 0


def test_gravity_is_gradient_of_potential(phys_tree):
    tree = phys_tree
    n, h = tree.n_dofs, 1e-6
    for q, _, _ in random_states(tree, seed=12, count=2):
        g = tree.gravity_force(q)
        g_fd = np.array(
            [
                (tree.kinematics(q + h * e).potential_energy() - tree.kinematics(q - h * e).potential_energy())
                / (2 * h)
                for e in np.eye(n)
            ]
        )
        assert np.abs(g - g_fd).max() <= 1e-7 * max(1.0, np.abs(g).max())


def test_bias_force_from_lagrangian(phys_tree):
    """b = Ṁ v − ½ ∂(vᵀ M v)/∂q (Lagrange's equations with the Coriolis/centrifugal terms)."""
    tree = phys_tree
    n, h = tree.n_dofs, 1e-6
    for q, v, _ in random_states(tree, seed=13, count=2):
        Mdot_v = (tree.mass_matrix(q + h * v) - tree.mass_matrix(q - h * v)) @ v / (2 * h)
        dT = np.array(
            [
                (tree.kinematics(q + h * e, v).kinetic_energy() - tree.kinematics(q - h * e, v).kinetic_energy())
                / (2 * h)
                for e in np.eye(n)
            ]
        )
        b_ref = Mdot_v - dT
        b = tree.bias_force(q, v)
        assert np.abs(b - b_ref).max() <= 1e-6 * max(1.0, np.abs(b).max())


def test_power_balance(phys_tree):
    """d/dt (T + V) = vᵀ τ along the forward-dynamics motion (central difference in time)."""
    tree = phys_tree
    rng = np.random.default_rng(14)
    h = 1e-4

    def energy(q, v):
        kin = tree.kinematics(q, v)
        return kin.kinetic_energy() + kin.potential_energy()

    for q, v, _ in random_states(tree, seed=15, count=3):
        tau = rng.uniform(-5, 5, tree.n_dofs)
        a = tree.forward_dynamics(q, v, tau)
        # second-order Taylor trajectory: E(±h) errors are O(h²) and equal → cancel in the central difference
        dE = (energy(q + h * v + 0.5 * h**2 * a, v + h * a) - energy(q - h * v + 0.5 * h**2 * a, v - h * a)) / (2 * h)
        power = v @ tau
        assert abs(dE - power) <= 1e-6 * max(1.0, abs(power), np.abs(tau).max() * np.abs(v).max())
        # and with τ = 0 the energy is conserved to first order
        a0 = tree.forward_dynamics(q, v, np.zeros(tree.n_dofs))
        dE0 = (energy(q + h * v + 0.5 * h**2 * a0, v + h * a0) - energy(q - h * v + 0.5 * h**2 * a0, v - h * a0)) / (
            2 * h
        )
        kin = tree.kinematics(q, v)
        assert abs(dE0) <= 1e-7 * (kin.kinetic_energy() + abs(kin.potential_energy()))


def test_power_balance_integrated(phys_tree):
    """E(T) − E(0) = ∫ vᵀτ dt over an RK4-integrated forward-dynamics motion with a time-varying τ."""
    tree = phys_tree
    n = tree.n_dofs
    rng = np.random.default_rng(16)
    q0, v0 = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)
    A, w = rng.uniform(-3, 3, n), rng.uniform(1, 4, n)
    tau = lambda t: A * np.sin(w * t)  # noqa: E731

    def f(t, y):
        return np.concatenate([y[n:], tree.forward_dynamics(y[:n], y[n:], tau(t))])

    def energy(y):
        kin = tree.kinematics(y[:n], y[n:])
        return kin.kinetic_energy() + kin.potential_energy()

    dt, steps = 1e-3, 200
    y, t, work = np.concatenate([q0, v0]), 0.0, 0.0
    E0 = energy(y)
    p_prev = y[n:] @ tau(t)
    for _ in range(steps):
        k1 = f(t, y)
        k2 = f(t + dt / 2, y + dt / 2 * k1)
        k3 = f(t + dt / 2, y + dt / 2 * k2)
        k4 = f(t + dt, y + dt * k3)
        y = y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        t += dt
        p = y[n:] @ tau(t)
        work += 0.5 * dt * (p + p_prev)  # trapezoid, O(dt²)
        p_prev = p
    assert abs(energy(y) - E0 - work) <= 1e-4 * max(1.0, abs(work))


def test_forward_inverse_roundtrip(phys_tree):
    tree = phys_tree
    for q, v, a in random_states(tree, seed=17):
        tau = tree.inverse_dynamics(q, v, a)
        assert np.abs(tree.forward_dynamics(q, v, tau) - a).max() <= 1e-9 * max(1.0, np.abs(a).max())
        M = tree.mass_matrix(q)
        assert np.abs(tau - (M @ a + tree.nonlinear_effects(q, v))).max() <= 1e-12 * np.abs(tau).max() * 10
        assert np.abs(
            tree.nonlinear_effects(q, v) - tree.bias_force(q, v) - tree.gravity_force(q)
        ).max() <= 1e-12 * max(1.0, np.abs(tau).max())


def test_zero_velocity_bias_is_zero(phys_tree):
    tree = phys_tree
    q = np.random.default_rng(18).uniform(-1, 1, tree.n_dofs)
    assert np.abs(tree.bias_force(q, np.zeros(tree.n_dofs))).max() == 0.0
    kin = tree.kinematics(q)
    for link in tree.links:
        assert np.abs(kin.point_bias_acceleration(link, (0.1, 0.2, 0.3))).max() == 0.0


def test_reference_configuration_places_links_at_their_joint_frames():
    tree = RigidTree("ref", gravity=GRAVITY)
    R1 = Rotation.from_rotvec([0.3, -0.2, 0.5]).as_matrix()
    R2 = Rotation.from_rotvec([-0.7, 0.1, 0.2]).as_matrix()
    a = tree.add_link("a", joint=Revolute((1, 2, 3)), origin=(1, 2, 3), rotation=R1, mass=1.0)
    b = tree.add_link("b", a, Prismatic((0, 1, 1)), origin=(0.5, 0, 0), rotation=R2, mass=1.0)
    kin = tree.kinematics(tree.reference_coordinates())
    assert np.allclose(kin.R[a.index], R1, atol=1e-15) and np.allclose(kin.p[a.index], (1, 2, 3), atol=1e-15)
    assert np.allclose(kin.R[b.index], R1 @ R2, atol=1e-15)
    assert np.allclose(kin.p[b.index], np.array([1, 2, 3]) + R1 @ [0.5, 0, 0], atol=1e-15)
    # prismatic: q translates along the axis expressed in the joint frame
    kin = tree.kinematics([0.0, 0.7])
    assert np.allclose(
        kin.p[b.index],
        np.array([1, 2, 3]) + R1 @ ([0.5, 0, 0] + R2 @ (0.7 * np.array([0, 1, 1]) / np.sqrt(2))),
        atol=1e-14,
    )
    # revolute: q rotates about the axis expressed in the joint frame
    kin = tree.kinematics([0.4, 0.0])
    Rj = Rotation.from_rotvec(0.4 * np.array([1, 2, 3]) / np.sqrt(14)).as_matrix()
    assert np.allclose(kin.R[a.index], R1 @ Rj, atol=1e-14)


# ============================================================================ bad input
def small_tree():
    t = RigidTree("bad", gravity=GRAVITY)
    t.add_link("base", joint=Revolute((0, 0, 1)), mass=1.0, inertia=(0.1, 0.1, 0.1))
    return t


def test_unknown_parent_name():
    t = small_tree()
    with pytest.raises(ModelError, match="nosuchlink"):
        t.add_link("x", "nosuchlink", Revolute((1, 0, 0)), mass=1.0)


def test_duplicate_link_name():
    t = small_tree()
    with pytest.raises(ModelError, match="base"):
        t.add_link("base", "base", Revolute((1, 0, 0)), mass=1.0)


def test_link_of_other_tree_as_parent():
    t, other = small_tree(), small_tree()
    with pytest.raises(ModelError, match="base"):
        t.add_link("x", other.link("base"), Revolute((1, 0, 0)))


@pytest.mark.parametrize("joint", [Revolute, Prismatic])
def test_zero_axis(joint):
    with pytest.raises(ModelError, match="zero length"):
        joint((0.0, 0.0, 0.0))
    with pytest.raises(ModelError, match=joint.__name__):
        joint((0.0, np.nan, 1.0))


@pytest.mark.parametrize(
    "rotation",
    [
        np.diag([1.0, 1.0, -1.0]),  # reflection
        np.array([[1.0, 0.1, 0], [0, 1, 0], [0, 0, 1]]),  # not orthogonal
        2 * np.eye(3),
        np.eye(2),
    ],
)
def test_non_rotation_placement(rotation):
    t = small_tree()
    with pytest.raises(ModelError, match="link 'child'"):
        t.add_link("child", "base", Revolute((1, 0, 0)), rotation=rotation, mass=1.0)


def test_negative_mass():
    t = small_tree()
    with pytest.raises(ModelError, match="'heavy'"):
        t.add_link("heavy", "base", Revolute((1, 0, 0)), mass=-1.0)
    with pytest.raises(ModelError, match="'heavy'"):
        t.add_link("heavy", "base", Revolute((1, 0, 0)), mass=np.nan)


@pytest.mark.parametrize(
    "inertia",
    [
        np.diag([1.0, 1.0, 3.0]),  # triangle inequality violated
        np.diag([-0.1, 1.0, 1.0]),  # negative moment
        np.array([[1.0, 0.2, 0], [0, 1, 0], [0, 0, 1]]),  # not symmetric
        (0.1, 0.1, 0.5),
    ],
)  # principal moments, triangle
def test_non_physical_inertia(inertia):
    t = small_tree()
    with pytest.raises(ModelError, match="'wobbly'"):
        t.add_link("wobbly", "base", Revolute((1, 0, 0)), mass=1.0, inertia=inertia)


def test_bad_state():
    t = small_tree()
    t.add_link("tip", "base", Prismatic((1, 0, 0)), mass=1.0)
    with pytest.raises(StateError, match="'bad'"):
        t.mass_matrix(np.zeros(3))
    with pytest.raises(StateError, match="'bad'"):
        t.kinematics(np.zeros((2, 1)))
    with pytest.raises(StateError, match=r"bad\.tip"):
        t.mass_matrix([0.0, np.nan])
    with pytest.raises(StateError, match=r"bad\.base"):
        t.inverse_dynamics([0.0, 0.0], [np.inf, 0.0], [0.0, 0.0])
    with pytest.raises(StateError):
        t.forward_dynamics([0.0, 0.0], [0.0, 0.0], [0.0])
    with pytest.raises(StateError):
        t.inverse_dynamics([0.0, 0.0], [0.0, 0.0], [0.0, 0.0, 1.0])
    for exc in (ModelError, StateError):
        assert issubclass(exc, FlexbodyError)


def test_whole_tree_kernels_name_bad_input_and_a_singular_mass_matrix():
    """The one-call kernels check their inputs: NaN names the coordinate, a wrong shape the size, and a
    tree whose M(q) is singular (a massless chain) is refused by forward dynamics with a StateError."""
    tree = fb.RigidTree("arm")
    l1 = tree.add_link("l1", None, fb.Revolute((0, 0, 1)), mass=1.0, com=(0.5, 0, 0), inertia=(0.1, 0.1, 0.1))
    tree.add_link(
        "l2", l1, fb.Revolute((0, 0, 1)), origin=(1.0, 0, 0), mass=1.0, com=(0.5, 0, 0), inertia=(0.1, 0.1, 0.1)
    )
    q, v = np.array([0.3, np.nan]), np.zeros(2)
    with pytest.raises(fb.StateError, match=r"tree 'arm': q contains NaN or Inf at \['arm.l2'\]"):
        tree.mass_matrix(q)
    with pytest.raises(fb.StateError, match=r"tree 'arm': a contains NaN or Inf"):
        tree.inverse_dynamics(np.zeros(2), v, q)
    with pytest.raises(fb.StateError, match=r"tau must have shape \(2,\)"):
        tree.forward_dynamics(np.zeros(2), v, np.zeros(3))
    ghost = fb.RigidTree("ghost")
    ghost.add_link("l1", None, fb.Revolute((0, 0, 1)))
    with pytest.raises(fb.StateError, match=r"M\(q\) is not positive definite"):
        ghost.forward_dynamics(np.zeros(1), np.zeros(1), np.ones(1))
