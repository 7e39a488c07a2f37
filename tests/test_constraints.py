"""Holonomic constraints on anchors: value, Jacobian and acceleration bias checked by finite differences
along trajectories q(t) = q + v t + ½ a t² (φ̇ = Φv + φ_t and φ̈ = Φa + bias), and bad input."""

import numpy as np
import pytest

import flexbody as fb
from flexbody.errors import ConstraintError, FlexbodyError, ModelError, StateError

RNG = np.random.default_rng(7)


def _random_rotation(rng):
    Q, R = np.linalg.qr(rng.normal(size=(3, 3)))
    Q = Q @ np.diag(np.sign(np.diag(R)))
    return Q if np.linalg.det(Q) > 0 else -Q


def spatial_tree(name="t", rng=RNG):
    """A branching tree with revolute and prismatic joints, random axes and placements."""
    tree = fb.RigidTree(name, gravity=(0.3, -9.0, -2.0))
    links = []
    parents = [None, 0, 1, 1, 3, 2]
    for i, p in enumerate(parents):
        joint = fb.Prismatic(rng.normal(size=3)) if i in (2, 4) else fb.Revolute(rng.normal(size=3))
        links.append(
            tree.add_link(
                f"l{i}",
                None if p is None else links[p],
                joint,
                origin=rng.normal(scale=0.5, size=3),
                rotation=_random_rotation(rng),
                mass=1.0 + rng.random(),
                com=rng.normal(scale=0.3, size=3),
                inertia=np.diag([0.2, 0.3, 0.4]),
            )
        )
    return tree, links


def _constraints(tree, links):
    a, b = tree.frame(links[4], (0.1, 0.2, 0.0), _random_rotation(RNG)), tree.frame(links[5], (0.0, 0.3, 0.1))
    return [
        fb.PointToPoint(tree.point(links[4], (0.2, 0, 0)), tree.point(links[5], (0, 0.1, 0.3)), name="p2p"),
        fb.PointToPoint(tree.point(links[3]), fb.Ground((0.5, 0.5, 0.0)), components=(0, 1), name="planar"),
        fb.Distance(tree.point(links[5], (0.3, 0, 0)), fb.Ground((1, 0, 0)), length=1.3, name="rod"),
        fb.Weld(a, b, name="weld"),
        fb.Hinge(b, fb.Ground((0, 0, 1), _random_rotation(RNG)), name="hinge"),
        fb.OnSurface(tree.point(links[5], (0.1, 0.1, 0.1)), fb.Sphere((0.2, 0.1, 0.0), 0.8), name="sphere"),
        fb.OnSurface(tree.point(links[4]), fb.Plane((1, 2, 3), (0.1, 0, 0)), name="plane"),
        fb.OnSurface(tree.point(links[2]), fb.Cylinder((0, 0, 0), 0.5, axis=(0, 1, 1)), name="cyl"),
        fb.LinearCoupling({links[1]: 1.0, links[0]: -1 / 3}, constant=0.1, name="gear13"),
        fb.Gear(links[0], links[3], ratio=2.0, name="gear"),
        fb.PolynomialCoupling(links[2], links[1], [0.01, 0.02, -0.03, 0.004], name="knee"),
        fb.JointDriver(links[5], np.sin, np.cos, lambda t: -np.sin(t), name="drive"),
    ]


@pytest.fixture(scope="module")
def asm():
    tree, links = spatial_tree()
    return fb.System([tree], _constraints(tree, links)).assemble()


def test_rows_and_labels(asm):
    assert asm.n_dofs == 6
    assert asm.n_constraints == 3 + 2 + 1 + 6 + 5 + 1 + 1 + 1 + 1 + 1 + 1 + 1
    assert asm.row_labels[:3] == ["p2p.x", "p2p.y", "p2p.z"]
    assert len(set(asm.row_labels)) == asm.n_constraints


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_jacobian_and_bias_by_finite_differences(asm, seed):
    rng = np.random.default_rng(seed)
    q, v, a = rng.normal(size=(3, asm.n_dofs))
    t0 = rng.random()
    T = asm.terms(t0, q, v)

    def phi(s):
        return asm.constraint_value(t0 + s, q + v * s + 0.5 * a * s * s)

    h = 1e-4
    rate = (phi(h) - phi(-h)) / (2 * h)
    accel = (phi(h) - 2 * phi(0) + phi(-h)) / h**2
    np.testing.assert_allclose(T.Phi @ v + T.phi_t, rate, atol=2e-7 * max(1, np.abs(rate).max()))
    np.testing.assert_allclose(T.Phi @ a + T.bias, accel, atol=5e-5 * max(1, np.abs(accel).max()))
    # The Jacobian alone, column by column (scleronomic part).
    for j in range(asm.n_dofs):
        e = np.zeros(asm.n_dofs)
        e[j] = 1e-6
        col = (asm.constraint_value(t0, q + e) - asm.constraint_value(t0, q - e)) / 2e-6
        np.testing.assert_allclose(T.Phi[:, j], col, atol=1e-7)


def test_weld_and_hinge_vanish_on_aligned_frames():
    tree = fb.RigidTree("w")
    l1 = tree.add_link("l1", joint=fb.Revolute((0, 0, 1)), mass=1.0)
    l2 = tree.add_link("l2", l1, fb.Revolute((1, 0, 0)), origin=(1, 0, 0), mass=1.0)
    R = _random_rotation(RNG)
    asm = fb.System(
        [tree],
        [
            fb.Weld(tree.frame(l2, (0, 0.5, 0), R), tree.frame(l2, (0, 0.5, 0), R), name="w"),
            fb.Hinge(tree.frame(l1), fb.Ground(), name="h"),
        ],
    ).assemble()
    T = asm.terms(0.0, np.array([0.0, 0.4]), np.array([0.0, 1.0]))
    # zero up to the round-off of products of O(1) rotation entries, a few ε each (measured 5.8e-16)
    np.testing.assert_allclose(T.phi, 0, atol=1e-14)
    # The hinge about the common z axis leaves joint 1 free: its column has no angular rows.
    np.testing.assert_allclose(T.Phi[6:, 0], 0, atol=1e-14)


def test_surface_contact_force_is_normal():
    tree = fb.RigidTree("p", gravity=(0, 0, 0))
    x = tree.add_link("x", joint=fb.Prismatic((1, 0, 0)))
    y = tree.add_link("y", x, fb.Prismatic((0, 1, 0)), mass=1.0)
    c = fb.OnSurface(tree.point(y), fb.Cylinder((0, 0, 0), 2.0), name="circle")
    asm = fb.System([tree], [c]).assemble()
    ev = asm.workspace(0.0, np.array([2 * np.cos(0.3), 2 * np.sin(0.3)]))
    f = c.contact_force(ev, np.array([1.5]))
    np.testing.assert_allclose(f, 1.5 * np.array([np.cos(0.3), np.sin(0.3), 0.0]), atol=1e-15)


def test_bad_input():
    tree, links = spatial_tree("bad")
    other, olinks = spatial_tree("other")
    with pytest.raises(ConstraintError, match="other"):
        fb.System([tree], [fb.PointToPoint(tree.point(links[1]), other.point(olinks[1]), name="x")])
    with pytest.raises(ModelError, match="nope"):
        tree.point("nope")
    with pytest.raises(ConstraintError, match="components"):
        fb.PointToPoint(tree.point(links[1]), fb.Ground(), components=(0, 3))
    with pytest.raises(ConstraintError, match="frame anchor"):
        fb.Weld(tree.point(links[1]), fb.Ground())
    fixed = tree.add_link("f", links[5], fb.Fixed())
    with pytest.raises(ConstraintError, match="fixed joint"):
        fb.Gear(links[0], fixed, 2.0)
    with pytest.raises(ConstraintError, match="repeated"):
        fb.System([tree], [fb.Gear(links[0], links[1], 1.0, name="g"), fb.Gear(links[0], links[2], 1.0, name="g")])
    asm = fb.System([tree], [fb.Gear(links[0], links[1], 1.0, name="g")]).assemble()
    with pytest.raises(StateError, match="NaN"):
        asm.terms(0.0, np.full(asm.n_dofs, np.nan))
    with pytest.raises(StateError, match="shape"):
        asm.terms(0.0, np.zeros(3))
    with pytest.raises(FlexbodyError, match="RigidTree"):
        fb.System(["tree"])


def test_frame_jacobian_and_bias_by_finite_differences():
    """Frame Jacobian rows [ẋ; ω] and J̇v against differences of the frame pose along q + t v."""
    tree, links = spatial_tree("frames")
    rng = np.random.default_rng(3)
    q, v = rng.normal(size=(2, tree.n_dofs))
    link, offset = links[5], np.array([0.1, -0.2, 0.3])
    J = tree.kinematics(q, v).frame_jacobian(link, offset)
    bias = tree.kinematics(q, v).frame_bias_acceleration(link, offset)
    h = 1e-5

    def twist(s):
        kin = tree.kinematics(q + s * v, v)
        return kin.frame_jacobian(link, offset) @ v

    R0, _x0 = tree.kinematics(q).frame_pose(link, offset)
    Rp, xp = tree.kinematics(q + h * v).frame_pose(link, offset)
    Rm, xm = tree.kinematics(q - h * v).frame_pose(link, offset)
    W = (Rp - Rm) / (2 * h) @ R0.T  # [ω]× from the rotation rate
    np.testing.assert_allclose(J @ v, np.r_[(xp - xm) / (2 * h), W[2, 1], W[0, 2], W[1, 0]], atol=1e-8)
    np.testing.assert_allclose(bias, (twist(h) - twist(-h)) / (2 * h), atol=1e-7)
