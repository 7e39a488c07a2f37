"""Analytic derivatives of the inverse dynamics (flexbody/rigid/rnea_derivatives.py, #36 item 1) against Pinocchio's
``computeRNEADerivatives`` and against central differences of flexbody's own RNEA, on the UR5 from its URDF and on
seeded random trees (revolute, prismatic and fixed joints; chains and branching trees, up to 34 coordinates)."""

from pathlib import Path

import numpy as np
import pytest
from test_rigid import random_tree

import flexbody as fb

pin = pytest.importorskip("pinocchio")
from pinocchio_oracle import PinocchioOracle  # noqa: E402  (needs pinocchio)

URDF = "meshes/robots/ur5_robot.urdf"
TREES = {
    "chain8": dict(seed=101, n_dofs=8, branching=False, n_fixed=4),
    "tree14": dict(seed=202, n_dofs=14, branching=True, n_fixed=4),
    "tree34": dict(seed=303, n_dofs=34, branching=True, n_fixed=6),
    "chain30": dict(seed=404, n_dofs=30, branching=False, n_fixed=4),
}


def _tree(name):
    if name == "ur5":
        return fb.load_urdf(Path(__file__).resolve().parents[1] / URDF, gravity=(0.0, 0.0, -9.81), visuals=False)
    return random_tree(**TREES[name], name=name)


def _states(n, seed, count=4):
    rng = np.random.default_rng(seed)
    return [tuple(rng.uniform(-2.0, 2.0, n) for _ in range(3)) for _ in range(count)]


@pytest.mark.parametrize("name", ["ur5", *TREES])
def test_derivatives_equal_pinocchios(name):
    """∂τ/∂q, ∂τ/∂q̇ and M equal Pinocchio's computeRNEADerivatives (with gravity) to 1e-10 relative at random states
    (measured: 4e-15 at most)."""
    tree = _tree(name)
    oracle = PinocchioOracle(tree)
    order = np.ix_(oracle.perm, oracle.perm)
    for q, v, a in _states(tree.n_dofs, 7):
        dq, dv, M = tree.inverse_dynamics_derivatives(q, v, a)
        pin.computeRNEADerivatives(oracle.model, oracle.data, oracle.to_pin(q), oracle.to_pin(v), oracle.to_pin(a))
        reference = {"dq": np.empty_like(dq), "dv": np.empty_like(dv), "M": np.empty_like(M)}
        reference["dq"][order], reference["dv"][order] = oracle.data.dtau_dq, oracle.data.dtau_dv
        upper = np.triu(oracle.data.M)  # Pinocchio fills the upper triangle
        reference["M"][order] = upper + np.triu(upper, 1).T
        for key, value in (("dq", dq), ("dv", dv), ("M", M)):
            error = np.abs(value - reference[key]).max() / np.abs(reference[key]).max()
            assert error < 1e-10, (name, key, error)


@pytest.mark.parametrize("name", ["ur5", "tree14"])
def test_derivatives_equal_central_differences_of_the_inverse_dynamics(name):
    """Central differences of flexbody's RNEA (step 1e-6, error O(h²) ~ 1e-10 of the entries) agree to 1e-7 relative:
    an oracle independent of Pinocchio's conventions."""
    tree = _tree(name)
    q, v, a = _states(tree.n_dofs, 11, 1)[0]
    dq, dv, _ = tree.inverse_dynamics_derivatives(q, v, a)
    h, n = 1e-6, tree.n_dofs
    eye = np.eye(n)
    fq = np.column_stack([tree.inverse_dynamics(q + h * e, v, a) - tree.inverse_dynamics(q - h * e, v, a) for e in eye])
    fv = np.column_stack([tree.inverse_dynamics(q, v + h * e, a) - tree.inverse_dynamics(q, v - h * e, a) for e in eye])
    assert np.abs(dq - fq / (2 * h)).max() < 1e-7 * np.abs(dq).max()
    assert np.abs(dv - fv / (2 * h)).max() < 1e-7 * np.abs(dv).max()


@pytest.mark.parametrize("name", ["ur5", "tree14"])
def test_forward_dynamics_derivatives_equal_pinocchios(name):
    """∂a/∂q, ∂a/∂q̇ and M⁻¹ equal Pinocchio's computeABADerivatives to 1e-10 relative (measured: 4.1e-15 on the UR5,
    1.5e-14 on the 14-link tree; 1.9e-13 on the 30-dof chain)."""
    tree = _tree(name)
    oracle = PinocchioOracle(tree)
    order = np.ix_(oracle.perm, oracle.perm)
    for q, v, tau in _states(tree.n_dofs, 5, 2):
        dq, dv, Minv = tree.forward_dynamics_derivatives(q, v, tau)
        pin.computeABADerivatives(oracle.model, oracle.data, oracle.to_pin(q), oracle.to_pin(v), oracle.to_pin(tau))
        upper = np.triu(oracle.data.Minv)
        for value, reference in (
            (dq, oracle.data.ddq_dq),
            (dv, oracle.data.ddq_dv),
            (Minv, upper + np.triu(upper, 1).T),
        ):
            mapped = np.empty_like(value)
            mapped[order] = reference
            assert np.abs(value - mapped).max() < 1e-10 * np.abs(mapped).max()


def _ball_and_socket_tree():
    """A free-flying base, two revolute joints and two spherical joints (14 coordinates; tests/test_joints.py's tree
    that matches Pinocchio's dynamics)."""
    from scipy.spatial.transform import Rotation

    rng = np.random.default_rng(0)
    tree = fb.RigidTree("robot", gravity=(0.0, 0.0, -9.81))
    joints = [fb.FreeFlyer(), fb.Revolute((0, 1, 0)), fb.Spherical(), fb.Revolute((1, 0, 0)), fb.Spherical()]
    parent = None
    for k, joint in enumerate(joints):
        R = Rotation.from_rotvec(rng.standard_normal(3)).as_matrix() if k else np.eye(3)
        origin = 0.3 * rng.standard_normal(3) if k else np.zeros(3)
        mass, com = rng.uniform(0.5, 3.0), 0.1 * rng.standard_normal(3)
        inertia = np.diag(rng.uniform(0.05, 0.1, 3))
        parent = tree.add_link(f"b{k}", parent, joint, origin=origin, rotation=R, mass=mass, com=com, inertia=inertia)
    return tree


@pytest.mark.parametrize("scale", [1.0, 0.01])
def test_spherical_and_free_flying_joints_equal_central_differences(scale):
    """With a free-flying base and two spherical joints, on their exponential coordinates (rotation vectors of length
    about ``scale`` rad, where J_r's coefficients take their closed forms or their series), ∂τ/∂q and ∂τ/∂q̇ agree
    with central differences of flexbody's RNEA (itself equal to Pinocchio's, tests/test_joints.py) to 1e-7
    relative at the best step of a sweep (1e-3 … 1e-6; the differences' own error is O(h²) and round-off)."""
    tree = _ball_and_socket_tree()
    rng = np.random.default_rng(3)
    n = tree.n_dofs
    q, v, a = rng.uniform(-1.0, 1.0, n), rng.uniform(-2.0, 2.0, n), rng.uniform(-2.0, 2.0, n)
    for start in (3, 7, 11):  # the rotation vectors
        q[start : start + 3] *= scale
    dq, dv, M = tree.inverse_dynamics_derivatives(q, v, a)
    assert np.abs(M - tree.mass_matrix(q)).max() < 1e-12 * np.abs(M).max()
    eye = np.eye(n)
    for analytic, shift in ((dq, lambda h, e: (q + h * e, v)), (dv, lambda h, e: (q, v + h * e))):
        errors = []
        for h in (1e-3, 1e-4, 1e-5, 1e-6):
            columns = []
            for e in eye:
                plus, minus = shift(h, e), shift(-h, e)
                columns.append((tree.inverse_dynamics(*plus, a) - tree.inverse_dynamics(*minus, a)) / (2 * h))
            errors.append(np.abs(analytic - np.column_stack(columns)).max() / np.abs(analytic).max())
        assert min(errors) < 1e-7, errors


def test_bad_states_are_named():
    ur5 = _tree("ur5")
    with pytest.raises(fb.FlexbodyError, match="v"):
        ur5.inverse_dynamics_derivatives(np.zeros(6), np.full(6, np.nan), np.zeros(6))
    with pytest.raises(fb.FlexbodyError, match=r"shape \(6,\)"):
        ur5.inverse_dynamics_derivatives(np.zeros(5), np.zeros(6), np.zeros(6))


def _free_flyer_map():
    """G₆(φ) = blockdiag(Rᵀ, J_r(φ)) (Pinocchio's free-flyer velocity (Rᵀṗ, ω_body) = G₆ (ṗ, φ̇), and its tangent
    δ = G₆ (dp, dφ)), with its first and second derivatives in φ, derived symbolically by sympy from Rodrigues'
    formula and J_r = I − (1 − cos θ)/θ² [φ]× + (θ − sin θ)/θ³ [φ]×², independent of flexbody's code."""
    import sympy

    phi = sympy.symbols("p0:3", real=True)
    theta = sympy.sqrt(sum(x * x for x in phi))
    K = sympy.Matrix([[0, -phi[2], phi[1]], [phi[2], 0, -phi[0]], [-phi[1], phi[0], 0]])
    eye = sympy.eye(3)
    R = eye + sympy.sin(theta) / theta * K + (1 - sympy.cos(theta)) / theta**2 * K * K
    J = eye - (1 - sympy.cos(theta)) / theta**2 * K + (theta - sympy.sin(theta)) / theta**3 * K * K
    G = sympy.diag(R.T, J)
    first = [G.diff(x) for x in phi]
    second = [[d.diff(x) for x in phi] for d in first]
    return (
        sympy.lambdify([phi], G, "numpy"),
        sympy.lambdify([phi], first, "numpy"),
        sympy.lambdify([phi], second, "numpy"),
    )


def test_a_floating_base_robot_equals_pinocchio_through_the_chain_rule():
    """Solo12 from its URDF with a floating base (18 coordinates): flexbody's τ(q, q̇, q̈) on the exponential coordinates
    is Gᵀ τ_pin(q_pin, G q̇, G q̈ + Ġ q̇) with G = blockdiag(Rᵀ, J_r, I) (Pinocchio's local free-flyer velocity, and
    its tangent δ = G dq), so ∂τ/∂q_j = (∂G/∂q_j)ᵀ τ_pin + Gᵀ[D_q G e_j + D_v (∂G/∂q_j) q̇ + M_pin((∂G/∂q_j) q̈
    + ∂(Ġ q̇)/∂q_j)] and ∂τ/∂q̇ = Gᵀ[D_v G + M_pin ∂(Ġ q̇)/∂q̇], with Pinocchio's computeRNEADerivatives (D_q, D_v,
    M_pin) and G's derivatives by sympy: equal to 1e-10 relative (measured 4.3e-14)."""
    from importlib.metadata import PackageNotFoundError, distribution

    from scipy.spatial.transform import Rotation

    try:
        root = Path(distribution("example-robot-data").locate_file("cmeel.prefix/share/example-robot-data/robots"))
    except PackageNotFoundError:
        pytest.skip("example-robot-data is not installed")
    path = root / "solo_description/robots/solo12.urdf"
    tree = fb.load_urdf(path, floating_base=True, visuals=False)
    model = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    data = model.createData()
    n = tree.n_dofs
    by_joint = {limits.joint: tree.link(link).coordinate for link, limits in tree.limits.items()}
    perm = np.arange(n)  # Pinocchio's v index -> flexbody's coordinate
    for j in range(2, model.njoints):
        perm[model.joints[j].idx_v] = by_joint[model.names[j]]
    G6, dG6, ddG6 = _free_flyer_map()
    rng = np.random.default_rng(9)
    worst = 0.0
    for _ in range(3):
        q, v, a = rng.uniform(-1.5, 1.5, n), rng.standard_normal(n), rng.standard_normal(n)
        phi = q[3:6]
        G, dG = np.eye(n), np.zeros((n, n, n))  # dG[j] = ∂G/∂q_j
        G[:6, :6] = G6(phi)
        ddG = np.zeros((3, 3, n, n))
        for k in range(3):
            dG[3 + k, :6, :6] = dG6(phi)[k]
            for m in range(3):
                ddG[k, m, :6, :6] = ddG6(phi)[k][m]
        Gdot = sum(v[3 + k] * dG[3 + k] for k in range(3))  # Ġ
        P = G[np.ix_(perm, perm)]  # rows and columns in Pinocchio's order
        q_pin = np.concatenate([q[:3], Rotation.from_rotvec(phi).as_quat(), q[perm[6:]]])
        v_pin, a_pin = P @ v[perm], P @ a[perm] + (Gdot @ v)[perm]
        tau_pin = pin.rnea(model, data, q_pin, v_pin, a_pin).copy()
        pin.computeRNEADerivatives(model, data, q_pin, v_pin, a_pin)
        unpermute = np.argsort(perm)  # flexbody's coordinate -> Pinocchio's index
        back = np.ix_(unpermute, unpermute)
        Dq, Dv = data.dtau_dq[back], data.dtau_dv[back]
        Mp = (np.triu(data.M) + np.triu(data.M, 1).T)[back]
        tau_p = tau_pin[unpermute]
        dq_ref, dv_ref = np.empty((n, n)), np.empty((n, n))
        for j in range(n):
            dGdotv = sum(v[3 + k] * ddG[k, j - 3] for k in range(3)) @ v if 3 <= j < 6 else np.zeros(n)  # ∂(Ġq̇)/∂q_j
            inner = Dq @ G[:, j] + Dv @ (dG[j] @ v) + Mp @ (dG[j] @ a + dGdotv)
            dq_ref[:, j] = dG[j].T @ tau_p + G.T @ inner
            dv_ref[:, j] = G.T @ (Dv @ G[:, j] + Mp @ (dG[j] @ v + Gdot[:, j]))
        dq, dv, _ = tree.inverse_dynamics_derivatives(q, v, a)
        assert np.abs(G.T @ tau_p - tree.inverse_dynamics(q, v, a)).max() < 1e-10 * np.abs(tau_p).max()
        worst = max(
            worst, np.abs(dq - dq_ref).max() / np.abs(dq_ref).max(), np.abs(dv - dv_ref).max() / np.abs(dv_ref).max()
        )
    assert worst < 1e-10, worst
