"""FlexibleBody [DE-103..106]: mass, rigid motion, patch test, energy gradient, analytic Jacobians, bad input."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import flexbody as fb

RNG = np.random.default_rng(11)
MATERIALS = {
    "svk": lambda d=0.0: fb.StVenantKirchhoff(young=1.0e6, poisson=0.3, density=1200.0, damping=d),
    "neo-hookean": lambda d=0.0: fb.NeoHookean(young=1.0e6, poisson=0.3, density=1200.0, damping=d),
    "mooney-rivlin": lambda d=0.0: fb.MooneyRivlin(c10=1.5e5, c01=5.0e4, bulk_modulus=2.0e6, density=1200.0, damping=d),
}
ELEMENTS = {"H8": (1, None), "H8-incompatible": (1, "incompatible_modes"), "H27": (2, None)}


def make_body(element="H8", material="svk", damping=0.0, size=(1.0, 0.4, 0.3), divisions=(3, 2, 2), distort=0.0):
    order, locking = ELEMENTS[element]
    mesh = fb.mesh.box(size, divisions, order=order)
    if distort:
        pts = mesh.points.copy()
        lo, hi = pts.min(0), pts.max(0)
        interior = np.all((pts > lo + 1e-9) & (pts < hi - 1e-9), axis=1)
        h = min(s / d for s, d in zip(size, divisions)) / order
        pts[interior] += distort * h * RNG.uniform(-1, 1, (interior.sum(), 3))
        mesh = mesh.with_points(pts)
    return fb.FlexibleBody("body", mesh, MATERIALS[material](damping), locking=locking)


# ---------------------------------------------------------------- mass
@pytest.mark.parametrize("element", ["H8", "H27"])
def test_total_mass_is_rho_volume(element):
    body = make_body(element, distort=0.2)
    M = body.mass_matrix()
    volume = 1.0 * 0.4 * 0.3  # interior distortion keeps the box volume
    assert body.volume() == pytest.approx(volume, rel=1e-12)
    ones = np.tile([1.0, 0.0, 0.0], body.n_nodes)
    assert ones @ M @ ones == pytest.approx(1200.0 * volume, rel=1e-12)


def _mass_1d(order, h):
    """Consistent 1-D mass matrices, nodes ordered by coordinate (-1, [0,] +1)."""
    if order == 1:
        return h / 6 * np.array([[2.0, 1.0], [1.0, 2.0]])
    return h / 30 * np.array([[4.0, 2.0, -1.0], [2.0, 16.0, 2.0], [-1.0, 2.0, 4.0]])


@pytest.mark.parametrize("element", ["H8", "H27"])
def test_single_element_mass_is_tensor_product(element):
    """The consistent mass of a box element is ρ m_x ⊗ m_y ⊗ m_z of the 1-D consistent masses."""
    size = (0.7, 0.5, 0.2)
    body = make_body(element, size=size, divisions=(1, 1, 1))
    order = body.element.order
    idx = (body.element.nodes + 1).astype(int) // (2 if order == 1 else 1)  # node -> 1-D index per axis
    m1 = [_mass_1d(order, h) for h in size]
    expected = 1200.0 * np.prod([m1[k][idx[:, k][:, None], idx[:, k][None, :]] for k in range(3)], axis=0)
    cell = body.mesh.cells[0]
    M = body.mass_matrix().toarray()
    blocks = [[M[i::3, j::3][np.ix_(cell, cell)] for j in range(3)] for i in range(3)]
    assert np.allclose(blocks[0][0], expected, rtol=1e-12, atol=1e-15)
    assert np.allclose(blocks[1][1], expected, rtol=1e-12) and np.allclose(blocks[2][2], expected, rtol=1e-12)
    assert np.abs(blocks[0][1]).max() == 0.0 and np.abs(blocks[1][2]).max() == 0.0


# ---------------------------------------------------------------- rigid motion and patch test
@pytest.mark.parametrize("element", list(ELEMENTS))
@pytest.mark.parametrize("material", list(MATERIALS))
def test_rigid_motion_gives_zero_strain_and_force(element, material):
    body = make_body(element, material, damping=0.05, distort=0.2)
    R = Rotation.from_rotvec([0.4, -1.1, 0.7]).as_matrix()
    x = body.mesh.points @ R.T + [0.3, -2.0, 1.0]
    omega = np.array([0.5, 1.5, -2.0])
    v = np.cross(omega, x)  # rigid velocity: Ė = 0, no viscous stress
    f = body.internal_force(x.ravel(), v.ravel())
    scale = 1.0e6 * 0.4 * 0.3
    assert np.abs(f).max() < 1e-10 * scale
    E = body.gauss_point_fields(x.ravel())["green_lagrange_strain"]
    # zero up to round-off: F = Σ x_a ⊗ ∇N_a at |x| ≈ 3 m carries up to ε Σ|x_a||∇N_a| ≈ 8e-14 on the distorted
    # 27-node elements (2e-14 on 8-node ones) and E = ½(FᵀF − I) about twice that (measured ≤ 1.5e-14)
    assert np.abs(E).max() < 1e-12


@pytest.mark.parametrize("element", list(ELEMENTS))
@pytest.mark.parametrize("material", ["svk", "neo-hookean"])
def test_patch_test_homogeneous_deformation(element, material):
    """Boundary nodes follow x = F0 X + c; the interior of a distorted mesh must reproduce it exactly."""
    body = make_body(element, material, distort=0.25, divisions=(2, 2, 2), size=(1.0, 1.0, 1.0))
    F0 = np.array([[1.10, 0.05, -0.02], [0.03, 0.95, 0.04], [-0.01, 0.02, 1.05]])
    pts = body.mesh.points
    boundary = np.flatnonzero(np.any((pts < 1e-9) | (pts > 1 - 1e-9), axis=1))
    fix = fb.Fix(body, boundary, displacement=lambda X: X @ (F0 - np.eye(3)).T + [0.01, 0.02, -0.03])
    res = fb.solve_static(fb.System([body], [fix]), load_steps=2)
    exact = pts @ F0.T + [0.01, 0.02, -0.03]
    assert np.abs(res.positions(body) - exact).max() < 1e-10
    S = body.gauss_point_fields(res.q[-1])["pk2_stress"]
    S0 = body.material.pk2_stress(F0)
    assert np.abs(S - S0).max() < 1e-7 * np.abs(S0).max()


# ---------------------------------------------------------------- derivatives
def _relative_fd_error(fun, jac_times, x, h):
    d = RNG.standard_normal(x.size)
    fd = (fun(x + h * d) - fun(x - h * d)) / (2 * h)
    return np.linalg.norm(fd - jac_times(d)) / np.linalg.norm(fd)


def _deformed(body, amplitude=0.03):
    X = body.mesh.points
    bend = np.stack([0.05 * X[:, 1] * X[:, 0], -0.08 * X[:, 0] ** 2, 0.04 * X[:, 0] * X[:, 2]], 1)
    return (X + bend + amplitude * 0.1 * RNG.standard_normal(X.shape)).ravel()


@pytest.mark.parametrize("element", ["H8", "H27"])
@pytest.mark.parametrize("material", list(MATERIALS))
def test_internal_force_is_energy_gradient(element, material):
    body = make_body(element, material)
    q = _deformed(body)
    d = RNG.standard_normal(q.size)
    h = 1e-6
    fd = (body.strain_energy(q + h * d) - body.strain_energy(q - h * d)) / (2 * h)
    exact = body.internal_force(q) @ d
    assert abs(fd - exact) < 1e-6 * abs(exact)


@pytest.mark.parametrize("element", list(ELEMENTS))
@pytest.mark.parametrize("material", list(MATERIALS))
@pytest.mark.parametrize("damping", [0.0, 0.02], ids=["elastic", "kelvin-voigt"])
def test_tangent_and_damping_match_finite_differences(element, material, damping):
    body = make_body(element, material, damping)
    q = _deformed(body)
    # strain rates of order 1/s: with β = 0.02 s the viscous stress is a fifth of the elastic one. At five
    # times that (0.5 m/s) the incompatible modes of one state in about thirty have no balance to converge to.
    v = 0.1 * RNG.standard_normal(q.size)
    K = body.tangent(q, v)
    err_q = _relative_fd_error(lambda x: body.internal_force(x, v), lambda d: K @ d, q, 1e-6)
    assert err_q < 1e-6
    if damping:
        C = body.damping_matrix(q, v)
        err_v = _relative_fd_error(lambda y: body.internal_force(q, y), lambda d: C @ d, v, 1e-4)
        assert err_v < 1e-6
        assert abs(body.internal_force(q, v) - body.internal_force(q)).max() > 0  # damping acts
    else:
        assert abs(K - K.T).max() < 1e-9 * abs(K).max()


def test_force_and_tangent_agree_with_separate_calls():
    body = make_body("H27", "neo-hookean")
    q = _deformed(body)
    f, K = body.force_and_tangent(q)
    assert np.allclose(f, body.internal_force(q), rtol=1e-13, atol=1e-9)
    assert abs(K - body.tangent(q)).max() == 0.0


def test_incompatible_modes_remove_shear_locking_in_pure_bending():
    """A single brick in pure bending: plain trilinear locks; incompatible modes give beam theory exactly."""
    L, h = 1.0, 0.1
    for locking, expect_exact in [(None, False), ("incompatible_modes", True)]:
        mesh = fb.mesh.box((L, h, h), (1, 1, 1))
        body = fb.FlexibleBody("b", mesh, fb.StVenantKirchhoff(young=1.0, poisson=0.0, density=1.0), locking=locking)
        K = body.tangent(body.reference_coordinates()).toarray()
        # pure bending mode: u_x = -κ z (x - L/2)... nodal x-displacements ±δ on the two end faces, top/bottom
        X = mesh.points
        u = np.zeros_like(X)
        u[:, 0] = (X[:, 0] - L / 2) * (X[:, 2] - h / 2)
        energy = 0.5 * u.ravel() @ K @ u.ravel()
        # beam theory: curvature κ = 1 (u_x = κ x z): U = E I κ² L / 2 with I = h⁴/12
        exact = 0.5 * h**4 / 12 * L
        if expect_exact:
            assert energy == pytest.approx(exact, rel=1e-10)
        else:
            assert energy > 5 * exact


# ---------------------------------------------------------------- bad input
def test_inverted_element_is_named():
    mesh = fb.mesh.box((1.0, 1.0, 1.0), (2, 1, 1))
    pts = mesh.points.copy()
    moving = mesh.cells[1, 1]  # a corner only element 1 owns, pushed through element 1
    pts[moving, 0] = 0.2
    with pytest.raises(fb.ElementError, match=r"element 1 is inverted: minimum Jacobian determinant -"):
        fb.FlexibleBody("b", mesh.with_points(pts), MATERIALS["svk"]())


def test_degenerate_element_is_named():
    mesh = fb.mesh.box((1.0, 1.0, 1.0), (1, 1, 1))
    pts = mesh.points.copy()
    pts[:, 2] = 0.0  # flat
    with pytest.raises(fb.ElementError, match="element 0 is degenerate"):
        fb.FlexibleBody("b", mesh.with_points(pts), MATERIALS["svk"]())


def test_nan_state_and_bad_shapes_are_rejected():
    body = make_body()
    q = body.reference_coordinates()
    q[7] = np.nan
    with pytest.raises(fb.StateError, match=r"NaN/Inf .*coordinate 7, node 2"):
        body.internal_force(q)
    with pytest.raises(fb.StateError, match="must have shape"):
        body.tangent(q[:-1])


def test_bad_constructor_arguments():
    mesh = fb.mesh.box((1, 1, 1), (1, 1, 1), order=2)
    with pytest.raises(fb.FlexbodyError, match="8-node bricks only"):
        fb.FlexibleBody("b", mesh, MATERIALS["svk"](), locking="incompatible_modes")
    with pytest.raises(fb.FlexbodyError, match=r"locking must be .auto. or one of"):
        fb.FlexibleBody("b", fb.mesh.box((1, 1, 1), (1, 1, 1)), MATERIALS["svk"](), locking="eas")
    with pytest.raises(fb.FlexbodyError, match="material must be a flexbody Material"):
        fb.FlexibleBody("b", mesh, {"young": 1.0})
    with pytest.raises(fb.FlexbodyError, match="quadrature must be a positive integer"):
        fb.FlexibleBody("b", mesh, MATERIALS["svk"](), quadrature=0)
