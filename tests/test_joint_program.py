"""The compiled terms of systems without flexible nodes (flexbody.system.joint_program: trees, reduced bodies, joint
drivers) against the general route, and the
tree-structured LᵀL factorisation of the mass matrix (flexbody.linalg.tree_factor) against LAPACK."""

import numpy as np
import pytest

import flexbody as fb
from flexbody import mechanisms
from flexbody.constraints.closures import Distance, Hinge, OnSurface, PointToPoint
from flexbody.constraints.couplings import Gear, JointDriver
from flexbody.constraints.surfaces import Cylinder, Plane, Sphere
from flexbody.dynamics import forward
from flexbody.errors import ConstraintError, StateError
from flexbody.linalg.tree_factor import ltl_factor, ltl_lower_solve, ltl_transposed_solve_rows, tree_parents
from flexbody.rigid import Prismatic, Revolute, RigidTree
from flexbody.rigid.anchors import Ground
from flexbody.system.description import as_assembled

MECHANISMS = [
    "slider_crank",
    "branching_loops",
    "four_bar",
    "rssr_loop",
    "planar_arm_on_line",
    "spatial_arm_on_sphere",
    "coupled_chain",
    "parallel_platform",
    "particle_on_circle",
    "underactuated_chain",
]
FIELDS = ("M", "h", "Phi", "bias", "phi", "phi_t")


def _general_terms(asm, t, q, v):
    """The terms by the general route (Kinematics and each constraint's evaluate), program switched off."""
    program, asm.program = asm.program, None
    try:
        return asm.terms(t, q, v)
    finally:
        asm.program = program


def _assert_same_terms(asm, q, v, tol=1e-13):
    ws = asm.workspace(0.0, q, v)
    compiled = ws.terms()
    assert ws.compiled() is not None
    general = _general_terms(asm, 0.0, q, v)
    for field in FIELDS:
        x, y = np.asarray(getattr(compiled, field)), np.asarray(getattr(general, field))
        assert x.shape == y.shape, field
        scale = max(1.0, np.abs(y).max()) if y.size else 1.0
        assert np.abs(x - y).max(initial=0.0) <= tol * scale, field


@pytest.mark.parametrize("name", MECHANISMS)
def test_compiled_terms_equal_the_general_route(name):
    asm = as_assembled(getattr(mechanisms, name)(), "test")
    assert asm.program is not None
    rng = np.random.default_rng(7)
    q = asm.initial_state().q + 0.2 * rng.normal(size=asm.n_dofs)
    _assert_same_terms(asm, q, rng.normal(size=asm.n_dofs))


def _two_trees():
    """Two trees side by side (a revolute–prismatic arm and a pendulum) joined by closures of every kind the
    program compiles: point-to-point, distance, plane, sphere, cylinder, gear."""
    arm, pend = RigidTree("arm", gravity=(0, 0, -9.81)), RigidTree("pendulum", gravity=(0, 0, -9.81))
    a1 = arm.add_link("a1", joint=Revolute((0, 0, 1)), mass=1.0, com=(0.2, 0, 0), inertia=np.diag([0.01, 0.02, 0.03]))
    a2 = arm.add_link(
        "a2",
        a1,
        Prismatic((1, 0, 0)),
        origin=(0.4, 0, 0),
        mass=0.5,
        com=(0.1, 0, 0),
        inertia=np.diag([0.01, 0.01, 0.01]),
    )
    a3 = arm.add_link(
        "a3",
        a2,
        Revolute((0, 1, 0)),
        origin=(0.2, 0, 0),
        mass=0.3,
        com=(0, 0, 0.1),
        inertia=np.diag([0.003, 0.003, 0.001]),
    )
    p1 = pend.add_link(
        "p1",
        joint=Revolute((1, 0, 0)),
        origin=(1.0, 0.5, 0),
        mass=0.8,
        com=(0, 0, -0.3),
        inertia=np.diag([0.02, 0.02, 0.001]),
    )
    p2 = pend.add_link(
        "p2",
        p1,
        Revolute((0, 1, 0)),
        origin=(0, 0, -0.6),
        mass=0.4,
        com=(0, 0, -0.2),
        inertia=np.diag([0.01, 0.01, 0.001]),
    )
    cons = [
        PointToPoint(arm.point(a3, (0, 0, 0.2)), pend.point(p2, (0, 0, -0.4)), components=(0, 2), name="p2p"),
        Distance(arm.point(a2, (0.1, 0, 0)), pend.point(p1, (0, 0, -0.6)), 1.1, name="rod"),
        Distance(arm.point(a1), Ground((0.3, 0.4, 0.5)), 0.9, name="ground_rod"),
        OnSurface(pend.point(p2, (0.1, 0, -0.4)), Plane((0, 1, 1), (0, 0.2, -0.1)), name="plane"),
        OnSurface(arm.point(a3, (0, 0.1, 0.2)), Sphere((0.1, 0.2, 0.3), 0.7), name="sphere"),
        OnSurface(arm.point(a3, (0.05, 0, 0.1)), Cylinder((0, 0, 0), 0.5, axis=(0, 1, 1)), name="cylinder"),
        Gear(a1, p1, 0.5, offset=0.1, name="gear"),
    ]
    return fb.System([arm, pend], cons, q0=np.array([0.3, 0.1, -0.2, 0.4, 0.5]))


def test_two_trees_and_every_row_kind_compile_and_agree():
    asm = as_assembled(_two_trees(), "test")
    assert asm.program is not None and asm.program.m == asm.n_constraints == 8
    rng = np.random.default_rng(3)
    for _ in range(3):
        _assert_same_terms(asm, rng.normal(size=asm.n_dofs), rng.normal(size=asm.n_dofs))


def test_constraints_without_a_compiled_form_join_the_program_in_python():
    """A hinge (orientation rows), a user surface and a subclass with its own evaluate declare no compiled rows:
    the program computes M, h and the declared rows in its kernel and fills theirs from their own evaluate at the
    same workspace, equal to the general route; the compiled generalized-α steps then stay in Python."""
    from flexbody.solvers.compiled_steps import CompiledSteps

    class ShiftedDistance(Distance):  # evaluates its rows its own way: its inherited declaration does not apply
        def evaluate(self, ev):
            rows = super().evaluate(ev)
            return type(rows)(rows.phi + 0.01, rows.pieces, rows.bias)

    tree = RigidTree("arm", gravity=(0, 0, -9.81))
    l1 = tree.add_link("l1", joint=Revolute((0, 0, 1)), mass=1.0, com=(0.2, 0, 0), inertia=np.eye(3) * 0.01)
    l2 = tree.add_link(
        "l2", l1, Revolute((0, 1, 0)), origin=(0.4, 0, 0), mass=1.0, com=(0.2, 0, 0), inertia=np.eye(3) * 0.01
    )
    tip = tree.point(l2, (0.4, 0, 0))
    bowl = fb.ImplicitSurface(lambda x: [x @ x - 1.0], lambda x: [2.0 * x], lambda x: [2.0 * np.eye(3)], n_rows=1)
    constraints = [
        Hinge(tree.frame(l2), Ground()),
        Distance(tree.point(l1, (0.4, 0, 0)), Ground((0, 0, 1)), 1.1, name="rod"),
        ShiftedDistance(tip, Ground((0, 1, 0)), 0.9, name="shifted"),
        fb.OnSurface(tip, bowl, name="bowl"),
    ]
    asm = as_assembled(fb.System([tree], constraints), "test")
    assert asm.program is not None and not CompiledSteps.available(asm)
    assert [c.name for c, _ in asm.program.python_rows] == [constraints[0].name, "shifted", "bowl"]
    assert asm.program.m_compiled == 1
    rng = np.random.default_rng(5)
    for _ in range(3):
        _assert_same_terms(asm, rng.normal(size=asm.n_dofs), rng.normal(size=asm.n_dofs))


def test_joint_drivers_compile_with_their_rates():
    tree = RigidTree("arm", gravity=(0, 0, -9.81))
    l1 = tree.add_link("l1", joint=Revolute((0, 0, 1)), mass=1.0, com=(0.2, 0, 0), inertia=np.eye(3) * 0.01)
    l2 = tree.add_link(
        "l2", l1, Revolute((0, 1, 0)), origin=(0.4, 0, 0), mass=1.0, com=(0.2, 0, 0), inertia=np.eye(3) * 0.01
    )
    drivers = [JointDriver(l1, np.sin, np.cos, lambda t: -np.sin(t), name="swing"), JointDriver(l2, 0.1)]
    asm = as_assembled(fb.System([tree], drivers), "test")
    assert asm.program is not None and asm.program.m == 2
    rng = np.random.default_rng(5)
    for t in (0.0, 0.7):
        q, v = rng.normal(size=2), rng.normal(size=2)
        compiled = asm.terms(t, q, v)
        general = _general_terms(asm, t, q, v)
        for field in FIELDS:
            assert np.abs(np.asarray(getattr(compiled, field)) - np.asarray(getattr(general, field))).max() <= 1e-14
        assert compiled.phi_t[0] == -np.cos(t) and compiled.bias[0] == np.sin(t)


def _reduced_on_a_free_flyer_and_an_arm():
    """A free–free reduced bar on a free flyer and a clamped one on a two-joint arm, with gravity, stiffening and
    damping, a gear between the arm's joints and a driver on the arm's first joint."""
    mesh = fb.mesh.box(size=(0.6, 0.04, 0.03), divisions=(4, 1, 1), order=2, origin=(0.0, -0.02, -0.015))
    bar = fb.FlexibleBody("bar", mesh, fb.StVenantKirchhoff(young=2e8, poisson=0.3, density=1500.0, damping=1e-3))
    free = RigidTree("free", gravity=(0, 0, -9.81))
    carrier = free.add_link("carrier", joint=fb.FreeFlyer())
    arm = RigidTree("arm", gravity=(0, 0, -9.81))
    a1 = arm.add_link("a1", joint=Revolute((0, 0, 1)), mass=0.5, com=(0.1, 0, 0), inertia=np.eye(3) * 0.01)
    a2 = arm.add_link(
        "a2", a1, Revolute((0, 1, 0)), origin=(0.2, 0, 0), mass=0.2, com=(0.05, 0, 0), inertia=np.eye(3) * 0.002
    )
    clamped = fb.ReducedBody("clamped", fb.solvers.craig_bampton(bar, "x0", 3), a2)
    floating = fb.ReducedBody("floating", fb.solvers.free_modes(bar, 3), carrier)
    rows = [Gear(a1, a2, 0.5, offset=0.1, name="gear")]
    return fb.System([free, arm, floating, clamped], rows, q0=np.r_[np.zeros(6), 0.3, -0.2])


def test_reduced_bodies_compile_and_agree():
    system = _reduced_on_a_free_flyer_and_an_arm()
    asm = as_assembled(system, "test")
    assert asm.program is not None and asm.n_rigid == 8 + 6
    rng = np.random.default_rng(11)
    for _ in range(3):
        q, v = rng.normal(size=asm.n_dofs), rng.normal(size=asm.n_dofs)
        q[8:] *= 0.01
        _assert_same_terms(asm, q, v, tol=1e-12)
        compiled = asm.energy(q, v)
        program, asm.program = asm.program, None
        general = asm.energy(q, v)
        asm.program = program
        assert np.abs(np.subtract(compiled, general)).max() <= 1e-12 * max(1.0, np.abs(general).max())


def test_radial_row_at_zero_length_is_named_by_the_general_route():
    tree = RigidTree("arm", gravity=(0, 0, -9.81))
    link = tree.add_link("l1", joint=Revolute((0, 0, 1)), mass=1.0, com=(0.2, 0, 0), inertia=np.eye(3) * 0.01)
    rod = Distance(tree.point(link, (0.3, 0, 0)), Ground((0.3, 0, 0)), 0.5, name="rod")
    asm = as_assembled(fb.System([tree], [rod]), "test")
    assert asm.program is not None
    with pytest.raises(ConstraintError, match="rod"):  # the points coincide at q = 0
        asm.terms(0.0, np.zeros(1))
    assert asm.terms(0.0, np.array([0.5])).phi.shape == (1,)


def test_non_finite_state_is_named():
    asm = as_assembled(mechanisms.slider_crank(), "test")
    with pytest.raises(StateError, match="NaN or Inf"):
        asm.terms(0.0, np.array([np.nan, 0.0]))


# ------------------------------------------------------------------ LᵀL of a tree's mass matrix
def _branching_mass(seed=0):
    asm = as_assembled(mechanisms.branching_loops(), "test")
    rng = np.random.default_rng(seed)
    q = asm.initial_state().q + 0.3 * rng.normal(size=asm.n_dofs)
    return asm.terms(0.0, q).M


def test_tree_parents_find_the_branches():
    ok, parent, entries = tree_parents(_branching_mass())
    assert ok
    n = len(parent)
    assert entries < n * (n - 1) // 2  # branches: fewer entries than a dense factor
    assert all(parent[k] < k for k in range(n))


def test_ltl_factor_and_solves_match_lapack():
    M = _branching_mass(1)
    ok, parent, _ = tree_parents(M)
    ok, L = ltl_factor(M, parent)
    assert ok
    assert np.allclose(np.tril(L), L)
    assert np.abs(L.T @ L - M).max() <= 1e-13 * np.abs(M).max()
    rng = np.random.default_rng(2)
    B = rng.normal(size=(M.shape[0], 3))
    X = B.copy()
    ltl_transposed_solve_rows(L, parent, X)  # L⁻ᵀ B
    b = rng.normal(size=M.shape[0])
    y = b.copy()
    ltl_lower_solve(L, parent, y)  # L⁻¹ b
    assert np.allclose(L.T @ X, B, rtol=0, atol=1e-12)
    assert np.allclose(L @ y, b, rtol=0, atol=1e-12)


def test_tree_parents_refuse_a_pattern_with_fill():
    M = np.eye(4) * 4.0
    M[2, 0] = M[0, 2] = 1.0  # row 2 reaches 0, row 3 reaches 1 and 2:
    M[3, 1] = M[1, 3] = 1.0  # 1 is not on 3's chain 3 → 2 → 0
    M[3, 2] = M[2, 3] = 1.0
    ok, _, _ = tree_parents(M)
    assert not ok


def test_ltl_factor_refuses_an_indefinite_matrix():
    M = np.array([[1.0, 0.0, 2.0], [0.0, 1.0, 0.0], [2.0, 0.0, 1.0]])
    ok, parent, _ = tree_parents(M)
    assert ok
    assert not ltl_factor(M, parent)[0]


@pytest.mark.parametrize("method", ["multiplier", "gauss"])
def test_forward_on_a_branching_tree_matches_the_saddle_point_solve(method):
    asm = as_assembled(mechanisms.branching_loops(), "test")
    rng = np.random.default_rng(5)
    q = asm.initial_state().q + 0.2 * rng.normal(size=asm.n_dofs)
    v, tau = rng.normal(size=asm.n_dofs), rng.normal(size=asm.n_dofs)
    T = asm.terms(0.0, q, v)
    res = forward(T.M, T.h, tau, T.Phi, T.bias, method=method)
    n, m = T.Phi.shape[1], T.Phi.shape[0]
    K = np.block([[T.M, T.Phi.T], [T.Phi, np.zeros((m, m))]])
    x = np.linalg.solve(K, np.concatenate([tau - T.h, -T.bias]))
    assert np.abs(res.a - x[:n]).max() <= 1e-12 * np.abs(x[:n]).max()
    assert np.abs(res.lam + x[n:]).max() <= 1e-12 * np.abs(x[n:]).max()
