"""The control examples of DE Section 5.4: the chain with internal couplings [DE-94, Fig. 9], the parallel
platform with loop closures [DE-96..98, Fig. 11] and the underactuated chain [DE-100, Fig. 14]."""

import numpy as np
import pytest

import flexbody as fb
from flexbody import mechanisms as mech
from flexbody.errors import ModelError

ALPHA = np.radians([90.0, 210.0, 330.0])

# builder, n, m_C, coordinate labels, actuated columns, p = n − rank Φ
CASES = {
    "coupled_chain": (mech.coupled_chain, 6, 2, [f"chain.l{i}" for i in range(1, 7)], [0, 1, 2, 3, 4, 5], 4),
    "parallel_platform": (
        mech.parallel_platform,
        9,
        6,
        [
            f"platform_mechanism.{s}"
            for s in ("hip1", "elbow1", "hip2", "elbow2", "hip3", "elbow3", "x", "y", "platform")
        ],
        [1, 3, 5],
        3,
    ),
    "underactuated_chain": (mech.underactuated_chain, 3, 0, ["chain3.l1", "chain3.l2", "chain3.l3"], [1, 2], 3),
}


def _task_matrix(asm, q, columns):
    """[Φ; J] with J selecting ``columns`` (the joint-space tasks of DE 5.4.2)."""
    return np.vstack([asm.constraint_jacobian(0.0, q), np.eye(asm.n_dofs)[columns]])


def _smallest_singular_value(A):
    return np.linalg.svd(A, compute_uv=False).min()


@pytest.mark.parametrize("name", sorted(CASES))
def test_shapes_labels_actuation_and_rank(name):
    build, n, m, labels, actuated, p = CASES[name]
    asm = build().assemble()
    assert (asm.n_dofs, asm.n_constraints) == (n, m)
    assert asm.coordinate_labels == labels
    assert asm.S.shape == (len(actuated), n)
    np.testing.assert_array_equal(asm.S, np.eye(n)[actuated])
    assert asm.q0.shape == (n,)
    if m:
        assert np.abs(asm.constraint_value(0.0, asm.q0)).max() <= 1e-12
    report = asm.rank_report(0.0, asm.q0)
    assert report.rank == m and report.dof == p
    if m:
        assert report.is_full_rank and report.singular_values.min() > 0.5


def test_coupled_chain_couplings_and_end_point():
    system = mech.coupled_chain()
    asm = system.assemble()
    q = asm.q0
    assert asm.row_labels == ["c2.q", "c3.q"]
    np.testing.assert_allclose(asm.constraint_jacobian(0.0, q)[:, :3], [[-1 / 3, 1, 0], [-2 / 3, 0, 1]], atol=1e-15)
    tree = system.trees[0]
    L = np.full(6, 0.4)
    tip = tree.kinematics(q).point_position(tree.link("l6"), np.array([L[-1], 0.0, 0.0]))
    s = np.cumsum(q)
    np.testing.assert_allclose(tip, [L @ np.cos(s), L @ np.sin(s), 0.0], atol=1e-12)
    # end-point task x ≜ r_E (m_T = 2) and the couplings are independent at q0: [Φ; J_E] has rank 4
    kin = tree.kinematics(q)
    J = kin.dense(*kin.point_jacobian(tree.link("l6"), np.array([L[-1], 0.0, 0.0])))[:2]
    assert _smallest_singular_value(np.vstack([asm.constraint_jacobian(0.0, q), J])) > 0.5
    # a violated coupling is seen: φ = (q2 − q1/3, q3 − 2 q1/3)
    bad = q + np.array([0.0, 0.1, -0.2, 0, 0, 0])
    np.testing.assert_allclose(asm.constraint_value(0.0, bad), [0.1, -0.2], atol=1e-14)


def test_underactuated_chain_end_point():
    system = mech.underactuated_chain(lengths=(0.5, 0.4, 0.3))
    q = system.assemble().q0
    tree = system.trees[0]
    tip = tree.kinematics(q).point_position(tree.link("l3"), np.array([0.3, 0.0, 0.0]))
    s = np.cumsum(q)
    np.testing.assert_allclose(
        tip, [np.array([0.5, 0.4, 0.3]) @ np.cos(s), np.array([0.5, 0.4, 0.3]) @ np.sin(s), 0], atol=1e-12
    )


def _leg_tips_and_platform_points(tree, q, base_radius=1.0, platform_radius=0.3, upper=0.7, lower=0.7, twist=np.pi / 3):
    """Leg tips from the tree and by hand, and the platform points Pᵢ by hand from (x, y, θ) = q[6:9]."""
    kin = tree.kinematics(q)
    tips = np.array([kin.point_position(tree.link(f"elbow{i + 1}"), np.array([upper, 0.0, 0.0]))[:2] for i in range(3)])
    hip, elbow = q[0:6:2], q[1:6:2]
    by_hand = (
        base_radius * np.column_stack([np.cos(ALPHA), np.sin(ALPHA)])
        + lower * np.column_stack([np.cos(hip), np.sin(hip)])
        + upper * np.column_stack([np.cos(hip + elbow), np.sin(hip + elbow)])
    )
    x, y, th = q[6:9]
    P = np.array([x, y]) + platform_radius * np.column_stack([np.cos(ALPHA + twist + th), np.sin(ALPHA + twist + th)])
    return tips, by_hand, P


def test_parallel_platform_loop_closures_by_hand():
    system = mech.parallel_platform()
    asm = system.assemble()
    tree = system.trees[0]
    q = asm.q0
    np.testing.assert_array_equal(q[6:], 0.0)
    assert np.all(q[1:6:2] > 0.3) and np.all(q[1:6:2] < np.pi - 0.3)  # one elbow branch, far from 0 and π
    assert asm.row_labels == [f"loop{i}.{c}" for i in (1, 2, 3) for c in "xy"]
    tips, by_hand, P = _leg_tips_and_platform_points(tree, q)
    np.testing.assert_allclose(tips, by_hand, atol=1e-12)
    np.testing.assert_allclose(tips, P, atol=1e-12)
    # another pose of the platform (q7, q8, q9 fixed), legs assembled: x, y and θ enter as DE's q7, q8, q9
    guess = q.copy()
    guess[6:] = (0.05, -0.03, 0.2)
    q2 = fb.assemble_configuration(asm, 0.0, guess, fixed=[6, 7, 8])
    np.testing.assert_array_equal(q2[6:], guess[6:])
    tips, by_hand, P = _leg_tips_and_platform_points(tree, q2)
    np.testing.assert_allclose(tips, by_hand, atol=1e-12)
    np.testing.assert_allclose(tips, P, atol=1e-12)


def test_parallel_platform_tasks_are_well_conditioned():
    asm = mech.parallel_platform().assemble()
    q = asm.q0
    platform = _smallest_singular_value(_task_matrix(asm, q, [6, 7, 8]))  # x ≜ (q7, q8, q9)
    elbows = _smallest_singular_value(_task_matrix(asm, q, [1, 3, 5]))  # x ≜ (q2, q4, q6) [DE-97]
    assert platform == pytest.approx(0.2759, abs=1e-3) and elbows == pytest.approx(0.4341, abs=1e-3)
    # passive joints [DE-98]: S̃Φᵀ (6 × 6) is invertible, so f_C = −(S̃Φᵀ)⁻¹S̃Jᵀf [DE-99] exists
    S_tilde = np.eye(9)[[0, 2, 4, 6, 7, 8]]
    assert _smallest_singular_value(S_tilde @ asm.constraint_jacobian(0.0, q).T) > 0.1
    # with the platform points on the base rays (twist = 0) the lines BᵢPᵢ meet at the centre: elbow task singular
    radial = mech.parallel_platform(twist=0.0).assemble()
    assert np.abs(radial.constraint_value(0.0, radial.q0)).max() <= 1e-12
    assert _smallest_singular_value(_task_matrix(radial, radial.q0, [1, 3, 5])) < 1e-12
    assert _smallest_singular_value(_task_matrix(radial, radial.q0, [6, 7, 8])) > 0.2


def test_parallel_platform_free_motion_keeps_constraints_and_energy():
    asm = mech.parallel_platform().assemble()
    res = fb.simulate(asm, 0.2, integrator=fb.RK4(dt=1e-3))
    assert res.histories["violation"].max() < 1e-9
    E, T = res.histories["energy"], res.histories["kinetic"]
    assert T.max() > 1.0  # it does fall (E(0) ≈ 0 by symmetry, so use T)
    assert np.abs(E - E[0]).max() < 1e-6 * T.max()
    assert np.abs(res.q[-1] - res.q[0]).max() > 0.1


def test_parallel_platform_unreachable_default_raises():
    with pytest.raises(ModelError, match="leg 1 cannot reach"):
        mech.parallel_platform(upper=0.2, lower=0.2)
