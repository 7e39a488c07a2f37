"""Tasks and operational-space quantities [DE-43..64, MR].

- Task Jacobians and biases of every task type by central finite differences along
  q(s) = q + v s + ½ a s² (ẋ = J v, ẍ = J a + J̇v) on random spatial trees (two trees in one system, so
  global column offsets are exercised) and on an assembled mechanism.
- Operational space on redundant arms (planar 5-link, 2-D end point; spatial 6-dof, 3-D point): Λ SPD,
  J J̄ = I, dynamic consistency J M⁻¹ Nᵀ = 0 [DE-49, DE-58], Nᵀ a projector, kinetic- and
  acceleration-energy minimisation [DE-59..64] against KKT solutions and scipy.optimize, μ and p
  [DE-53] against explicit-inverse formulas, and τ = Jᵀf + Nᵀτ₀ giving ẍ = Λ⁻¹(f − μ − p) for any τ₀
  [DE-47, DE-51] by forward dynamics.
- Non-redundant tasks: Λ = J⁻ᵀMJ⁻¹ and η = μ + p [MR], also on a hand-written two-link arm.
- Singular J M⁻¹ Jᵀ (stretched arm, more rows than coordinates) and bad input.
"""

import numpy as np
import pytest
from scipy.optimize import minimize
from test_constraints import _random_rotation, spatial_tree

import flexbody as fb
from flexbody.control import tasks
from flexbody.errors import FlexbodyError, ModelError, StateError

MEASURED = {}  # max errors, printed by test_zz_report with -s


def _record(key, value):
    MEASURED[key] = max(MEASURED.get(key, 0.0), float(value))


def _planar_arm(n_links=5, name="planar", gravity=(0.0, -9.81, 0.0)):
    tree = fb.RigidTree(name, gravity=gravity)
    parent, origin, links = None, (0.0, 0.0, 0.0), []
    lengths = np.linspace(0.9, 0.5, n_links)
    for i, L in enumerate(lengths):
        m = 2.0 - 0.2 * i
        parent = tree.add_link(
            f"l{i}",
            parent,
            fb.Revolute((0, 0, 1)),
            origin=origin,
            mass=m,
            com=(L / 2, 0, 0),
            inertia=(1e-3, m * L**2 / 12, m * L**2 / 12),
        )
        origin = (L, 0.0, 0.0)
        links.append(parent)
    return tree, links, lengths


@pytest.fixture(scope="module")
def two_trees():
    rng = np.random.default_rng(11)
    ta, la = spatial_tree("ta", rng)
    tb, lb = spatial_tree("tb", rng)
    asm = fb.System([ta, tb]).assemble()
    R = _random_rotation(rng)
    task_list = [
        tasks.PointTask(tb.point(lb[5], (0.2, -0.1, 0.3)), name="pb"),
        tasks.PointTask(ta.frame(la[4], (0.1, 0.0, 0.2), R), components=(2, 0), name="pa"),
        tasks.PlanarOrientationTask(tb.frame(lb[3], (0.0, 0.1, 0.0), R), name="yaw", tracking=True),
        tasks.OrientationTask(ta.frame(la[5], (0.3, 0.0, 0.0), R), name="ori"),
        tasks.JointTask([lb[2], la[1], "tb.l0"], name="q"),
    ]
    return asm, task_list


def _fd_check(asm, task, q, v, a, key, h=1e-4):
    """Compare J v, ẋ and J a + J̇v with central differences of x(q(s)) (or of R(s), ω(s) for orientation)."""
    terms = task.evaluate(asm.workspace(0.0, q, v))
    np.testing.assert_allclose(terms.xdot, terms.J @ v, atol=1e-12 * max(1, np.abs(terms.xdot).max()))

    def at(s):
        return asm.workspace(0.0, q + v * s + 0.5 * a * s * s, v + a * s)

    xdd = terms.J @ a + terms.bias
    if isinstance(task, tasks.OrientationTask):
        Rp, Rm, R0 = (task.frame.rotation(at(s)) for s in (h, -h, 0.0))
        W = (Rp - Rm) / (2 * h) @ R0.T  # skew(ω) + O(h²)
        rate = np.array([W[2, 1], W[0, 2], W[1, 0]])
        accel = (task.evaluate(at(h)).xdot - task.evaluate(at(-h)).xdot) / (2 * h)
        np.testing.assert_allclose(task.frame.rotation(at(0.0)), _exp(terms.x), atol=1e-12)
    else:
        xs = [task.evaluate(at(s)).x for s in (h, 0.0, -h)]
        rate = (xs[0] - xs[2]) / (2 * h)
        accel = (xs[0] - 2 * xs[1] + xs[2]) / h**2
    e1 = np.abs(terms.J @ v - rate).max() / max(1, np.abs(rate).max())
    e2 = np.abs(xdd - accel).max() / max(1, np.abs(accel).max())
    _record(f"FD J v rel ({key})", e1)
    _record(f"FD J a + bias rel ({key})", e2)
    assert e1 < 1e-7
    assert e2 < 5e-5
    # Jacobian column by column (x only; orientation rows are not derivatives of a coordinate).
    if not isinstance(task, tasks.OrientationTask):
        for j in range(asm.n_dofs):
            e = np.zeros(asm.n_dofs)
            e[j] = 1e-6
            col = (task.evaluate(asm.workspace(0, q + e)).x - task.evaluate(asm.workspace(0, q - e)).x) / 2e-6
            _record(f"FD J columns ({key})", np.abs(terms.J[:, j] - col).max())
            np.testing.assert_allclose(terms.J[:, j], col, atol=1e-7)


def _exp(w):
    th = np.linalg.norm(w)
    K = np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])
    if th < 1e-12:
        return np.eye(3) + K
    return np.eye(3) + np.sin(th) / th * K + (1 - np.cos(th)) / th**2 * K @ K


# ------------------------------------------------------------------------------------------- task terms
def test_rows_and_labels(two_trees):
    asm, task_list = two_trees
    stack = tasks.StackedTask(task_list)
    assert [t.n_rows for t in task_list] == [3, 2, 1, 3, 3]
    assert stack.n_rows == 12
    assert stack.row_labels[:5] == ["pb.x", "pb.y", "pb.z", "pa.z", "pa.x"]
    assert stack.row_labels[5:9] == ["yaw.rz", "ori.rx", "ori.ry", "ori.rz"]
    assert stack.row_labels[9:] == ["q.tb.l2", "q.ta.l1", "q.tb.l0"]
    terms = stack.evaluate(asm.workspace(0.0, np.full(asm.n_dofs, 0.1)))
    assert terms.J.shape == (12, asm.n_dofs) and terms.row_labels == tuple(stack.row_labels)
    # Joint rows are unit rows on the global columns (tree tb starts at column 6).
    np.testing.assert_array_equal(np.argmax(terms.J[9:], axis=1), [6 + 2, 1, 6])
    # Tasks on tree tb have no entries in the columns of tree ta and vice versa.
    assert np.all(terms.J[0:3, :6] == 0) and np.all(terms.J[3:5, 6:] == 0)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("which", range(5))
def test_task_derivatives_spatial_trees(two_trees, seed, which):
    asm, task_list = two_trees
    rng = np.random.default_rng(100 + seed)
    q, v, a = rng.normal(size=(3, asm.n_dofs))
    task = task_list[which]
    _fd_check(asm, task, q, v, a, "spatial trees")


def test_stacked_task_derivatives(two_trees):
    asm, task_list = two_trees
    rng = np.random.default_rng(5)
    q, v, a = rng.normal(size=(3, asm.n_dofs))
    stack = tasks.StackedTask([t for t in task_list if not isinstance(t, tasks.OrientationTask)], name="s")
    _fd_check(asm, stack, q, v, a, "stacked")


@pytest.mark.parametrize("builder", ["rssr_loop", "spatial_arm_on_sphere", "four_bar"])
def test_task_derivatives_on_mechanisms(builder):
    system = getattr(fb.mechanisms, builder)()
    asm = system.assemble()
    tree = asm.trees[0]
    links = tree.coordinate_links
    rng = np.random.default_rng(3)
    frame = tree.frame(links[-1], (0.1, 0.2, 0.05), _random_rotation(rng))
    candidates = [
        tasks.PointTask(tree.point(links[-1], (0.3, 0.1, 0.0)), name="p"),
        tasks.PlanarOrientationTask(frame, name="yaw", tracking=True),
        tasks.OrientationTask(frame, name="ori"),
        tasks.JointTask(links[:2], name="j"),
    ]
    q = asm.q0 + 0.3 * rng.normal(size=asm.n_dofs)
    v, a = rng.normal(size=(2, asm.n_dofs))
    for task in candidates:
        _fd_check(asm, task, q, v, a, "mechanisms")


def test_planar_angle_wraps_and_tracks():
    tree, links, _ = _planar_arm(2, gravity=(0, 0, 0))
    asm = fb.System([tree]).assemble()
    fixed = tasks.PlanarOrientationTask(tree.frame(links[1]), name="fixed", reference=0.0)
    tracked = tasks.PlanarOrientationTask(tree.frame(links[1]), name="tracked", tracking=True)
    angles = np.linspace(0.0, 5 * np.pi, 200)  # steps of 0.08 rad, 2.5 turns
    got_fixed, got_tracked = [], []
    for th in angles:
        ev = asm.workspace(0.0, np.array([0.4 * th, 0.6 * th]))
        got_fixed.append(fixed.evaluate(ev).x[0])
        got_tracked.append(tracked.evaluate(ev).x[0])
    np.testing.assert_allclose(got_tracked, angles, atol=1e-12)
    assert np.all(np.array(got_fixed) >= -np.pi) and np.all(np.array(got_fixed) < np.pi)
    np.testing.assert_allclose(tasks.wrap_angle(np.array(got_fixed) - angles), 0, atol=1e-12)
    ev = asm.workspace(0.0, np.array([np.pi - 0.1, 0.0]))
    np.testing.assert_allclose(fixed.error([-np.pi + 0.1], ev), [0.2], atol=1e-12)  # short way round


def test_rotation_vector_and_orientation_error():
    rng = np.random.default_rng(2)
    worst = 0.0
    for th in [0.0, 1e-9, 1e-5, 0.3, 2.0, np.pi - 1e-3, np.pi - 1e-8, np.pi]:
        axis = rng.normal(size=3)
        w = th * axis / np.linalg.norm(axis)
        r = tasks.rotation_vector(_exp(w))
        if th < np.pi - 1e-6:
            worst = max(worst, np.abs(r - w).max())
        worst = max(worst, np.abs(_exp(r) - _exp(w)).max())
    _record("rotation_vector round trip", worst)
    assert worst < 1e-9
    R, e = _random_rotation(rng), 0.2 * rng.normal(size=3)
    np.testing.assert_allclose(tasks.orientation_error(_exp(e) @ R, R), e, atol=1e-14)


# ----------------------------------------------------------------------------------- operational space
def _redundant_cases():
    tree, links, lengths = _planar_arm(5)
    planar = (
        fb.System([tree]).assemble(),
        tasks.PointTask(tree.point(links[-1], (lengths[-1], 0, 0)), components=(0, 1), name="tip"),
        np.array([0.4, 0.5, -0.3, 0.7, 0.2]),
    )
    stree, slinks = spatial_tree("sp", np.random.default_rng(21))
    spatial = (
        fb.System([stree]).assemble(),
        tasks.PointTask(stree.point(slinks[5], (0.2, 0.1, 0.3)), name="hand"),
        0.4 * np.random.default_rng(4).normal(size=6),
    )
    return {"planar5": planar, "spatial6": spatial}


REDUNDANT = _redundant_cases()


@pytest.mark.parametrize("case", sorted(REDUNDANT))
def test_operational_space_identities(case):
    asm, task, q = REDUNDANT[case]
    rng = np.random.default_rng(8)
    v = rng.normal(size=asm.n_dofs)
    osp = fb.operational_space_at(asm, 0.0, q, v, task=task)
    M, b, g = asm.workspace(0.0, q, v).mass_bias_gravity()
    tree = asm.trees[0]
    np.testing.assert_allclose(b, tree.bias_force(q, v), atol=1e-12)
    np.testing.assert_allclose(g, tree.gravity_force(q), atol=1e-12)
    np.testing.assert_allclose(M, tree.mass_matrix(q), atol=1e-14)
    J, Lam, Jb, NT = osp.J, osp.Lambda, osp.J_bar, osp.N_T
    m, n = J.shape
    assert m < n and osp.rank == m and osp.full_rank
    scale = np.abs(Lam).max()
    _record(f"Λ asymmetry rel ({case})", np.abs(Lam - Lam.T).max() / scale)
    assert np.abs(Lam - Lam.T).max() <= 1e-13 * scale
    assert np.linalg.eigvalsh(Lam).min() > 0
    _record(f"|J J̄ − I| ({case})", np.abs(J @ Jb - np.eye(m)).max())
    np.testing.assert_allclose(J @ Jb, np.eye(m), atol=1e-12)
    Minv = np.linalg.inv(M)  # test oracle only
    dc = np.abs(J @ Minv @ NT).max() / (np.abs(J @ Minv).max())
    _record(f"|J M⁻¹ Nᵀ| rel ({case})", dc)
    assert dc < 1e-12
    _record(f"|NᵀNᵀ − Nᵀ| ({case})", np.abs(NT @ NT - NT).max())
    np.testing.assert_allclose(NT @ NT, NT, atol=1e-12)
    x = rng.normal(size=(n, 3))
    np.testing.assert_allclose(osp.apply_null(x), NT @ x, atol=1e-12)
    np.testing.assert_allclose(osp.apply_null_motion(x), NT.T @ x, atol=1e-12)
    # μ, p [DE-53] against explicit-inverse formulas.
    Lam_ref = np.linalg.inv(J @ Minv @ J.T)
    Jb_ref = Minv @ J.T @ Lam_ref
    mu_ref = Jb_ref.T @ b - Lam_ref @ osp.terms.bias
    p_ref = Jb_ref.T @ g
    for key, got, ref in (("Λ", Lam, Lam_ref), ("J̄", Jb, Jb_ref), ("μ", osp.mu, mu_ref), ("p", osp.p, p_ref)):
        err = np.abs(got - ref).max() / max(1.0, np.abs(ref).max())
        _record(f"{key} vs explicit inverse rel ({case})", err)
        assert err < 1e-11, key
    np.testing.assert_allclose(osp.xdot, J @ v, atol=1e-13)


@pytest.mark.parametrize("case", sorted(REDUNDANT))
def test_energy_minimisation(case):
    asm, task, q = REDUNDANT[case]
    rng = np.random.default_rng(9)
    osp = fb.operational_space_at(asm, 0.0, q, task=task)
    M = asm.workspace(0.0, q).mass_bias_gravity()[0]
    J, Jb = osp.J, osp.J_bar
    m, n = J.shape
    xd = rng.normal(size=m)
    qd = Jb @ xd  # [DE-60, DE-61]
    T_min = 0.5 * qd @ M @ qd
    np.testing.assert_allclose(J @ qd, xd, atol=1e-12)
    for _ in range(20):  # every other solution costs more
        other = qd + osp.apply_null_motion(rng.normal(size=n))
        np.testing.assert_allclose(J @ other, xd, atol=1e-12)
        assert 0.5 * other @ M @ other >= T_min - 1e-12
    K = np.block([[M, J.T], [J, np.zeros((m, m))]])  # KKT of min ½q̇ᵀMq̇ s.t. Jq̇ = ẋ
    kkt = np.linalg.solve(K, np.concatenate([np.zeros(n), xd]))[:n]
    _record(f"J̄ẋ vs KKT ({case})", np.abs(qd - kkt).max())
    np.testing.assert_allclose(qd, kkt, atol=1e-12)
    res = minimize(
        lambda z: 0.5 * z @ M @ z,
        np.zeros(n),
        jac=lambda z: M @ z,
        method="SLSQP",
        constraints=[{"type": "eq", "fun": lambda z: J @ z - xd, "jac": lambda z: J}],
        options={"ftol": 1e-14, "maxiter": 200},
    )
    _record(f"J̄ẋ vs SLSQP ({case})", np.abs(qd - res.x).max())
    np.testing.assert_allclose(qd, res.x, atol=1e-6)
    # Acceleration energy [DE-62..64]: q̈ = J̄(ẍ − J̇q̇) minimises ½q̈ᵀMq̈ with J q̈ = ẍ − J̇q̇.
    v = rng.normal(size=n)
    osp_v = fb.operational_space_at(asm, 0.0, q, v, task=task)
    xdd = rng.normal(size=m)
    rhs = xdd - osp_v.terms.bias
    qdd = osp_v.J_bar @ rhs
    kkt = np.linalg.solve(K, np.concatenate([np.zeros(n), rhs]))[:n]
    _record(f"J̄(ẍ − J̇q̇) vs KKT ({case})", np.abs(qdd - kkt).max())
    np.testing.assert_allclose(qdd, kkt, atol=1e-12)


@pytest.mark.parametrize("case", sorted(REDUNDANT))
def test_null_space_torque_does_not_disturb_task(case):
    """τ = Jᵀf + Nᵀτ₀ [DE-47] gives ẍ = J a + J̇v = Λ⁻¹(f − μ − p) [DE-51] for every τ₀."""
    asm, task, q = REDUNDANT[case]
    rng = np.random.default_rng(10)
    v = rng.normal(size=asm.n_dofs)
    osp = fb.operational_space_at(asm, 0.0, q, v, task=task)
    tree = asm.trees[0]
    f = 5.0 * rng.normal(size=osp.n_rows)
    expected = osp.acceleration(f)
    worst, spread = 0.0, 0.0
    for k in range(6):
        tau0 = None if k == 0 else 20.0 * rng.normal(size=asm.n_dofs)
        tau = osp.torque(f, tau0)
        if k % 2:
            a = tree.forward_dynamics(q, v, tau)
        else:
            terms = asm.terms(0.0, q, v)
            a = fb.dynamics.forward(terms.M, terms.h, tau, None, None, method="multiplier").a
        xdd = osp.J @ a + osp.terms.bias
        worst = max(worst, np.abs(xdd - expected).max() / max(1, np.abs(expected).max()))
        # The null-space torque does change the joint motion (so the check is not vacuous).
        if k:
            spread = max(spread, np.abs(a - tree.forward_dynamics(q, v, osp.torque(f))).max())
    _record(f"task accel with Nᵀτ₀ rel ({case})", worst)
    assert worst < 1e-10
    assert spread > 1e-2
    # And f from [DE-52] reproduces a requested task acceleration.
    xdd_req = rng.normal(size=osp.n_rows)
    a = tree.forward_dynamics(q, v, osp.torque(osp.force(xdd_req), rng.normal(size=asm.n_dofs)))
    np.testing.assert_allclose(osp.J @ a + osp.terms.bias, xdd_req, atol=1e-10)


def test_sparse_mass_matrix_matches_dense():
    """M given as scipy.sparse (CHOLMOD/SuperLU solves) gives the same quantities as dense M."""
    import scipy.sparse as sp

    rng = np.random.default_rng(13)
    A = rng.normal(size=(7, 7))
    M, J, b, g, jv = A @ A.T + 7 * np.eye(7), rng.normal(size=(3, 7)), *rng.normal(size=(2, 7)), rng.normal(size=3)
    dense = fb.operational_space(M, J, b, g, jv)
    sparse = fb.operational_space(sp.csr_matrix(M), J, b, g, jv)
    for name in ("Lambda", "mu", "p", "J_bar"):
        np.testing.assert_allclose(getattr(sparse, name), getattr(dense, name), atol=1e-13)


# ------------------------------------------------------------------------------------------ non-redundant
def test_non_redundant_matches_modern_robotics():
    rng = np.random.default_rng(12)
    cases = []
    tree, links, lengths = _planar_arm(2, name="two")
    cases.append(
        (
            fb.System([tree]).assemble(),
            tasks.PointTask(tree.point(links[-1], (lengths[-1], 0, 0)), components=(0, 1), name="tip"),
            np.array([0.3, 1.1]),
        )
    )
    st = fb.RigidTree("s3")
    l0 = st.add_link("yaw", joint=fb.Revolute((0, 0, 1)), mass=1.0, com=(0, 0, 0.1), inertia=(0.01, 0.01, 0.01))
    l1 = st.add_link(
        "sh", l0, fb.Revolute((0, 1, 0)), origin=(0, 0, 0.2), mass=1.5, com=(0.25, 0, 0), inertia=(0.001, 0.03, 0.03)
    )
    l2 = st.add_link(
        "el", l1, fb.Revolute((0, 1, 0)), origin=(0.5, 0, 0), mass=1.0, com=(0.2, 0, 0), inertia=(0.001, 0.02, 0.02)
    )
    cases.append(
        (
            fb.System([st]).assemble(),
            tasks.PointTask(st.point(l2, (0.4, 0, 0)), name="hand"),
            np.array([0.2, 0.4, -0.9]),
        )
    )
    sixd = fb.RigidTree("six")
    parent = None
    for i, axis in enumerate([(0, 0, 1), (0, 1, 0), (0, 1, 0), (1, 0, 0), (0, 1, 0), (1, 0, 0)]):
        parent = sixd.add_link(
            f"j{i}",
            parent,
            fb.Revolute(axis),
            origin=(0.3, 0.05 * i, 0.1) if i else (0, 0, 0),
            mass=1.0 - 0.1 * i,
            com=(0.1, 0.02, 0.0),
            inertia=(0.01, 0.012, 0.014),
        )
    fr = sixd.frame(parent, (0.1, 0.0, 0.05))
    cases.append(
        (
            fb.System([sixd]).assemble(),
            tasks.StackedTask([tasks.PointTask(fr, name="ee"), tasks.OrientationTask(fr, name="ee_ori")]),
            rng.normal(size=6),
        )
    )
    for asm, task, q in cases:
        v = rng.normal(size=asm.n_dofs)
        osp = fb.operational_space_at(asm, 0.0, q, v, task=task)
        M, b, g = asm.workspace(0.0, q, v).mass_bias_gravity()
        J = osp.J
        assert J.shape[0] == J.shape[1] == asm.n_dofs
        Jinv = np.linalg.inv(J)
        Lam_mr = Jinv.T @ M @ Jinv  # [MR] Λ = J⁻ᵀMJ⁻¹
        err = np.abs(osp.Lambda - Lam_mr).max() / np.abs(Lam_mr).max()
        _record("Λ vs J⁻ᵀMJ⁻¹ rel (non-redundant)", err)
        assert err < 1e-10
        # [MR] η = J⁻ᵀh − Λ J̇ J⁻¹ V with V = J q̇: equals μ + p.
        eta = Jinv.T @ (b + g) - Lam_mr @ osp.terms.bias
        err = np.abs(osp.mu + osp.p - eta).max() / max(1, np.abs(eta).max())
        _record("μ + p vs η rel (non-redundant)", err)
        assert err < 1e-10
        np.testing.assert_allclose(osp.J_bar, Jinv, atol=1e-10 * np.abs(Jinv).max())
        assert np.abs(osp.N_T).max() < 1e-10


def test_two_link_closed_form():
    """Point masses m1, m2 at the ends of links l1, l2 (textbook M(q)); no flexbody code in the reference."""
    m1, m2, l1, l2, grav = 1.3, 0.7, 1.0, 0.8, 9.81
    tree = fb.RigidTree("pm", gravity=(0, -grav, 0))
    a = tree.add_link("a", joint=fb.Revolute((0, 0, 1)), mass=m1, com=(l1, 0, 0))
    b = tree.add_link("b", a, fb.Revolute((0, 0, 1)), origin=(l1, 0, 0), mass=m2, com=(l2, 0, 0))
    asm = fb.System([tree]).assemble()
    task = tasks.PointTask(tree.point(b, (l2, 0, 0)), components=(0, 1), name="tip")
    q, v = np.array([0.4, 1.2]), np.array([0.7, -0.5])
    c2, s1, c1, s12, c12 = np.cos(q[1]), np.sin(q[0]), np.cos(q[0]), np.sin(q.sum()), np.cos(q.sum())
    M = np.array(
        [
            [m1 * l1**2 + m2 * (l1**2 + 2 * l1 * l2 * c2 + l2**2), m2 * (l1 * l2 * c2 + l2**2)],
            [m2 * (l1 * l2 * c2 + l2**2), m2 * l2**2],
        ]
    )
    J = np.array([[-l1 * s1 - l2 * s12, -l2 * s12], [l1 * c1 + l2 * c12, l2 * c12]])
    Lam = np.linalg.inv(J).T @ M @ np.linalg.inv(J)
    # Textbook gravity torques of the two point masses; p = J⁻ᵀg in the non-redundant case [DE-53].
    g = np.array([(m1 + m2) * grav * l1 * c1 + m2 * grav * l2 * c12, m2 * grav * l2 * c12])
    osp = fb.operational_space_at(asm, 0.0, q, v, task=task)
    err = np.abs(osp.Lambda - Lam).max() / np.abs(Lam).max()
    _record("Λ vs closed-form two-link", err)
    assert err < 1e-12
    np.testing.assert_allclose(osp.p, np.linalg.inv(J).T @ g, rtol=1e-12)


# ------------------------------------------------------------------------------------------- singular
def test_singular_stretched_arm():
    tree, links, lengths = _planar_arm(2, name="straight")
    asm = fb.System([tree]).assemble()
    task = tasks.PointTask(tree.point(links[-1], (lengths[-1], 0, 0)), components=(0, 1), name="tip")
    q = np.array([0.3, 0.0])
    with pytest.raises(FlexbodyError, match=r"singular values .*tip\.x.*tip\.y") as info:
        fb.operational_space_at(asm, 0.0, q, task=task)
    assert info.value.rank == 1 and info.value.singular_values[-1] < 1e-12
    assert "rank 1 of 2" in str(info.value)
    osp = fb.operational_space_at(asm, 0.0, q, np.array([0.2, 0.5]), allow_singular=True, task=task)
    assert osp.rank == 1 and not osp.full_rank
    np.testing.assert_allclose(osp.Lambda, np.linalg.pinv(osp.inverse_Lambda, rcond=1e-9), atol=1e-12)
    P = osp.J @ osp.J_bar  # projector onto the attainable direction
    np.testing.assert_allclose(P @ P, P, atol=1e-12)
    np.testing.assert_allclose(np.trace(P), 1.0, atol=1e-12)
    u = np.array([-np.sin(0.3), np.cos(0.3)])  # the only attainable tip direction
    np.testing.assert_allclose(P, np.outer(u, u), atol=1e-12)
    # More task rows than coordinates: the z row is identically zero.
    bent = np.array([0.3, 0.8])
    with pytest.raises(FlexbodyError, match=r"rank 2 of 3.*\+1·tip3\.z.*More task rows"):
        tip3 = tasks.PointTask(tree.point(links[-1], (lengths[-1], 0, 0)), name="tip3")
        fb.operational_space_at(asm, 0.0, bent, task=tip3)
    # Two identical stacked tasks: the dependent combination names both copies.
    twice = tasks.StackedTask([task, tasks.PointTask(task.anchor, (0, 1), name="copy")])
    with pytest.raises(FlexbodyError, match=r"tip\.x.*copy\.x"):
        fb.operational_space_at(asm, 0.0, bent, task=twice)


# ------------------------------------------------------------------------------------------- bad input
def test_bad_input():
    tree, links = spatial_tree("bad", np.random.default_rng(1))
    other, olinks = spatial_tree("other", np.random.default_rng(2))
    asm = fb.System([tree]).assemble()
    q = np.zeros(asm.n_dofs)
    with pytest.raises(ModelError, match="fixed in the world"):
        tasks.PointTask(fb.Ground((1, 0, 0)), name="g")
    with pytest.raises(ModelError, match="expected an anchor"):
        tasks.PointTask("l1")
    with pytest.raises(ModelError, match="nope"):
        tasks.PointTask(tree.point("nope"))
    with pytest.raises(ModelError, match=r"'p'.*components"):
        tasks.PointTask(tree.point(links[1]), components=(0, 3), name="p")
    with pytest.raises(ModelError, match="components"):
        tasks.PointTask(tree.point(links[1]), components=(1, 1))
    with pytest.raises(ModelError, match="frame anchor"):
        tasks.OrientationTask(tree.point(links[1]), name="o")
    with pytest.raises(ModelError, match="frame anchor"):
        tasks.PlanarOrientationTask(tree.point(links[1]))
    fixed = tree.add_link("f", links[5], fb.Fixed())
    with pytest.raises(ModelError, match=r"'f'.*fixed joint"):
        tasks.JointTask([links[0], fixed])
    with pytest.raises(ModelError, match="repeated"):
        tasks.JointTask([links[0], "bad.l0"])
    with pytest.raises(ModelError, match=r"'bad.nope'"):
        tasks.JointTask(["bad.nope"]).evaluate(asm.workspace(0.0, q))
    with pytest.raises(ModelError, match="tree 'other'"):
        tasks.PointTask(other.point(olinks[1]), name="elsewhere").evaluate(asm.workspace(0.0, q))
    with pytest.raises(ModelError, match="tree 'other'"):
        tasks.JointTask(olinks[0]).evaluate(asm.workspace(0.0, q))
    with pytest.raises(ModelError, match="non-empty"):
        tasks.StackedTask([])
    with pytest.raises(ModelError, match=r"repeated row labels.*p.x"):
        tasks.StackedTask(
            [tasks.PointTask(tree.point(links[1]), name="p"), tasks.PointTask(tree.point(links[2]), name="p")]
        )
    with pytest.raises(ModelError, match="not a Task"):
        tasks.StackedTask([tasks.JointTask(links[0]), "x"])
    with pytest.raises(ModelError, match="expected a Task"):
        fb.operational_space_at(asm, 0.0, q, task="tip")
    with pytest.raises(StateError, match="parallel to world z"):
        straight = fb.RigidTree("up")
        up = straight.add_link("u", joint=fb.Revolute((0, 0, 1)), rotation=[[0, 0, 1], [0, 1, 0], [-1, 0, 0]], mass=1.0)
        tasks.PlanarOrientationTask(straight.frame(up), name="yaw").evaluate(
            fb.System([straight]).assemble().workspace(0.0, [0.0])
        )
    # Constrained systems need an explicit opt-in.
    cons = fb.mechanisms.four_bar().assemble()
    ctask = tasks.JointTask(cons.trees[0].coordinate_links[0], name="crank")
    with pytest.raises(ModelError, match=r"constraint rows.*loop"):
        fb.operational_space_at(cons, 0.0, cons.q0, task=ctask)
    assert fb.operational_space_at(cons, 0.0, cons.q0, task=ctask, ignore_constraints=True).rank == 1
    # operational_space: shapes and values, each error naming the argument.
    M, J = np.eye(4), np.ones((2, 4))
    with pytest.raises(StateError, match=r"J must have shape \(m, 4\)"):
        fb.operational_space(M, np.ones((2, 5)), None, None, None)
    with pytest.raises(StateError, match="J must have shape"):
        fb.operational_space(M, np.ones(4), None, None, None)
    with pytest.raises(StateError, match="J contains NaN"):
        fb.operational_space(M, np.full((2, 4), np.nan), None, None, None)
    with pytest.raises(StateError, match=r"^b must have shape"):
        fb.operational_space(M, J, np.zeros(3), None, None)
    with pytest.raises(StateError, match=r"^g must have shape"):
        fb.operational_space(M, J, None, np.zeros(5), None)
    with pytest.raises(StateError, match=r"^Jdot_v must have shape \(2,\)"):
        fb.operational_space(M, J, None, None, np.zeros(4))
    with pytest.raises(StateError, match=r"^v contains NaN"):
        fb.operational_space(M, J, None, None, None, np.array([0, np.nan, 0, 0]))
    with pytest.raises(StateError, match="M must be square"):
        fb.operational_space(np.eye(3)[:2], J, None, None, None)
    with pytest.raises(StateError, match="not positive definite"):
        fb.operational_space(-np.eye(4), J, None, None, None)
    with pytest.raises(ModelError, match="row_labels has 3 entries"):
        fb.operational_space(M, np.eye(4)[:2], None, None, None, row_labels=["a", "b", "c"])
    with pytest.raises(ModelError, match="rtol"):
        fb.operational_space(M, np.eye(4)[:2], None, None, None, rtol=2.0)
    with pytest.raises(StateError, match="desired"):
        tasks.PointTask(tree.point(links[1]), name="p").error([1.0, 2.0], asm.workspace(0.0, q))


def test_zz_report():
    """Print the measured maxima (run with -s)."""
    for key in sorted(MEASURED):
        print(f"{key:45s} {MEASURED[key]:.3e}")
