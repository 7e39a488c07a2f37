"""Tests of flexbody.rigid.tree_data: the whole-tree algorithms on an explicit workspace (TreeData).

* Against Pinocchio (tests/pinocchio_oracle.py) on the seeded random trees of tests/test_rigid.py (serial
  chain 8 dofs, branching trees of 14 and 34 dofs, Fixed links, non-axis-aligned gravity): M, τ, h and the
  forward dynamics, relative max-norm error ≤ 1e-10 (1e-8 for the forward dynamics).
* Against the per-call methods (RigidTree.mass_matrix and the like), bitwise, also on a tree with every joint
  kind (free flyer, spherical, universal, planar, revolute, prismatic, fixed).
* The returned arrays are the data's own, overwritten by the next call; the link arrays of the data hold the
  kinematics of the last call.
* Inputs of any kind the per-call methods take (lists, integers, read-only or strided arrays) give the same
  results, without compiling a variant of a kernel; bad input is named with a StateError, a data of another
  tree (or made before a link was added) refused with a ModelError.
"""

from __future__ import annotations

import numpy as np
import pytest

import flexbody as fb
from flexbody.errors import ModelError, StateError
from flexbody.rigid import TreeData, forward_dynamics, inverse_dynamics, mass_matrix, nonlinear_effects, tree_dynamics

pin = pytest.importorskip("pinocchio")
from pinocchio_oracle import PinocchioOracle  # noqa: E402
from test_rigid import TREE_SPECS, check, random_states, random_tree  # noqa: E402  (the same random trees)


@pytest.fixture(scope="module", params=list(TREE_SPECS))
def case(request):
    tree = random_tree(**TREE_SPECS[request.param], name=request.param)
    return tree, PinocchioOracle(tree)


def every_joint_tree() -> fb.RigidTree:
    """A tree with a free-flyer base, spherical, universal, planar, revolute, prismatic and fixed joints."""
    tree = fb.RigidTree("all", gravity=(0.4, -1.1, -9.7))
    body = dict(mass=1.3, com=(0.05, -0.02, 0.1), inertia=(0.02, 0.03, 0.025))
    base = tree.add_link("base", None, fb.FreeFlyer(), **body)
    ball = tree.add_link("ball", base, fb.Spherical(), origin=(0.2, 0.0, 0.1), **body)
    cross = tree.add_link("cross", ball, fb.Universal((1, 0, 0), (0, 1, 0)), origin=(0, 0.3, 0), **body)
    tree.add_link("slide", cross, fb.Planar(), origin=(0.1, 0, 0.2), **body)
    elbow = tree.add_link("elbow", base, fb.Revolute((0.0, 0.6, 0.8)), origin=(-0.2, 0.1, 0.0), **body)
    bracket = tree.add_link("bracket", elbow, fb.Fixed(), origin=(0.1, 0.1, 0.0), **body)
    tree.add_link("piston", bracket, fb.Prismatic((0.6, 0.0, 0.8)), origin=(0, 0, 0.15), **body)
    return tree


def calls(tree, data, q, v, a):
    """(workspace result, per-call result) of the four algorithms at (q, v, a) (τ = a for the forward one)."""
    return {
        "M": (mass_matrix(tree, data, q), tree.mass_matrix(q)),
        "tau": (inverse_dynamics(tree, data, q, v, a), tree.inverse_dynamics(q, v, a)),
        "h": (nonlinear_effects(tree, data, q, v), tree.nonlinear_effects(q, v)),
        "a": (forward_dynamics(tree, data, q, v, a), tree.forward_dynamics(q, v, a)),
    }


# ============================================================================ agreement
def test_workspace_algorithms_vs_pinocchio(case):
    tree, oracle = case
    data = TreeData(tree)
    record: dict[str, float] = {}
    for q, v, a in random_states(tree, seed=11):
        M_ref = oracle.mass_matrix(q)
        check("M", mass_matrix(tree, data, q), M_ref, 1e-300, record)
        tau_ref = oracle.inverse_dynamics(q, v, a)
        check("tau", inverse_dynamics(tree, data, q, v, a), tau_ref, 1e-300, record)
        check("h", nonlinear_effects(tree, data, q, v), oracle.nonlinear_effects(q, v), 1e-300, record)
        check("a", forward_dynamics(tree, data, q, v, tau_ref), a, 1.0, record, rtol=1e-8)
        check("a (ABA)", forward_dynamics(tree, data, q, v, a), oracle.forward_dynamics(q, v, a), 1.0, record, 1e-8)


@pytest.mark.parametrize("make", [lambda: random_tree(**TREE_SPECS["tree14"]), every_joint_tree], ids=["tree14", "all"])
def test_workspace_algorithms_equal_the_per_call_methods(make):
    tree = make()
    data = TreeData(tree)
    rng = np.random.default_rng(5)
    for _ in range(3):
        q, v, a = (rng.uniform(-1.0, 1.0, tree.n_dofs) for _ in range(3))
        for name, (x, ref) in calls(tree, data, q, v, a).items():
            assert np.array_equal(x, ref), name


def test_returned_arrays_are_the_data_arrays_overwritten_by_the_next_call():
    tree = every_joint_tree()
    data = TreeData(tree)
    rng = np.random.default_rng(6)
    states = [tuple(rng.uniform(-1.0, 1.0, tree.n_dofs) for _ in range(3)) for _ in range(2)]
    first = {name: x.copy() for name, (x, _) in calls(tree, data, *states[0]).items()}
    results = calls(tree, data, *states[1])
    for name, attribute in (("M", data.M), ("tau", data.tau), ("h", data.h), ("a", data.a)):
        assert results[name][0] is attribute
        assert not np.array_equal(attribute, first[name]), name  # overwritten
    assert np.array_equal(mass_matrix(tree, data, states[0][0]), first["M"])


def test_data_holds_the_kinematics_and_joint_forces_of_the_last_call():
    tree = every_joint_tree()
    data = TreeData(tree)
    rng = np.random.default_rng(7)
    q, v, a = (rng.uniform(-1.0, 1.0, tree.n_dofs) for _ in range(3))
    tau = inverse_dynamics(tree, data, q, v, a)
    kin = tree.kinematics(q, v)
    for name in ("R", "p", "S", "vel", "acc"):
        assert np.array_equal(getattr(data, name), getattr(kin, name)), name
    # τ_i = S_iᵀ f_i, the force transmitted by joint i
    moving = [link for link in tree.links if link.coordinate is not None]
    for link in moving:
        assert data.forces[link.index] @ data.S[link.index] == pytest.approx(tau[link.coordinate], rel=1e-12, abs=1e-12)
    assert data.R.shape == (tree.n_links, 3, 3) and data.forces.shape == (tree.n_links, 6)
    assert repr(data) == f"TreeData('all', {tree.n_links} links, {tree.n_dofs} dofs)"


# ============================================================================ inputs
def test_inputs_of_any_kind_give_the_same_results_without_compiling_a_kernel_variant():
    tree = every_joint_tree()
    data = TreeData(tree)
    n = tree.n_dofs
    q, v = np.linspace(-0.5, 0.5, n), np.linspace(0.3, -0.2, n)
    reference = nonlinear_effects(tree, data, q, v).copy()
    read_only = q.copy()
    read_only.flags.writeable = False
    strided = np.repeat(q, 2)[::2]
    integers = np.arange(n) % 2
    for x in (list(q), read_only, strided):
        assert np.array_equal(nonlinear_effects(tree, data, x, v), reference)
        assert np.array_equal(tree.nonlinear_effects(x, v), reference)
    assert np.array_equal(mass_matrix(tree, data, integers), tree.mass_matrix(integers.astype(float)))
    assert np.array_equal(tree.mass_matrix(integers), tree.mass_matrix(integers.astype(float)))
    for kernel, signature in tree_dynamics.SIGNATURES.items():
        assert kernel.signatures == [signature], kernel  # the one compiled variant


def test_bad_input_is_named():
    tree = every_joint_tree()
    data = TreeData(tree)
    n = tree.n_dofs
    q, v = np.zeros(n), np.zeros(n)
    bad = q.copy()
    bad[7] = np.nan
    with pytest.raises(StateError, match=r"tree 'all': q contains NaN or Inf at \['all.ball.ry'\]"):
        mass_matrix(tree, data, bad)
    with pytest.raises(StateError, match=r"tree 'all': a contains NaN or Inf at \['all.ball.ry'\]"):
        inverse_dynamics(tree, data, q, v, bad)
    with pytest.raises(StateError, match=r"tree 'all': v contains NaN or Inf"):
        nonlinear_effects(tree, data, q, list(bad))
    with pytest.raises(StateError, match=rf"tree 'all': tau must have shape \({n},\), got \({n + 1},\)"):
        forward_dynamics(tree, data, q, v, np.zeros(n + 1))
    with pytest.raises(StateError, match=rf"tree 'all': q must have shape \({n},\), got \(2, {n}\)"):
        mass_matrix(tree, data, np.zeros((2, n)))
    ghost = fb.RigidTree("ghost")
    ghost.add_link("l1", None, fb.Revolute((0, 0, 1)))
    with pytest.raises(StateError, match=r"tree 'ghost': the mass matrix M\(q\) is not positive definite"):
        forward_dynamics(ghost, TreeData(ghost), np.zeros(1), np.zeros(1), np.ones(1))


def test_data_of_another_tree_or_made_before_a_link_was_added_is_refused():
    tree, other = every_joint_tree(), random_tree(**TREE_SPECS["chain8"])
    data = TreeData(tree)
    q = np.zeros(tree.n_dofs)
    with pytest.raises(ModelError, match=r"made for tree 'all', not for 'rt'"):
        mass_matrix(other, data, np.zeros(other.n_dofs))
    tree.add_link("tip", "piston", fb.Fixed(), mass=0.1)
    with pytest.raises(ModelError, match=r"tree 'all' has gained links since this TreeData was made"):
        inverse_dynamics(tree, data, q, q, q)
    assert np.array_equal(inverse_dynamics(tree, TreeData(tree), q, q, q), tree.inverse_dynamics(q, q, q))
    with pytest.raises(ModelError, match="expected a RigidTree, got str"):
        TreeData("all")
