"""Tests of flexbody.dynamics: the four forward forms agree, redundant and singular constraints,
Aghili's particle on a circle [AG-33..35] and slider crank [AG-67..69], Gauss terms [DE-28, DE-39],
inverse dynamics [AG-21, AG-47, MH Prop. 2] and input validation."""

from types import SimpleNamespace

import numpy as np
import pytest
import scipy.sparse as sp

from flexbody import dynamics as dyn
from flexbody.dynamics import compiled
from flexbody.errors import ConstraintError, FlexbodyError, StateError

METHODS = dyn.METHODS


def random_problem(n, m, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n))
    M = A @ A.T + n * np.eye(n)
    Phi = rng.standard_normal((m, n))
    return (M, rng.standard_normal(n), rng.standard_normal(n), Phi, rng.standard_normal(m))


def rel(x, y):
    return np.linalg.norm(x - y) / max(np.linalg.norm(y), 1e-300)


# --------------------------------------------------------------------------- the four methods agree
@pytest.mark.parametrize("n, m", [(7, 2), (12, 5), (34, 12)])
def test_methods_agree(n, m):
    M, h, tau, Phi, bias = random_problem(n, m, seed=n)
    ref = dyn.forward(M, h, tau, Phi, bias, method="multiplier")
    for method in METHODS:
        r = dyn.forward(M, h, tau, Phi, bias, method=method)
        assert r.method == method and r.rank == m and r.lam_unique
        assert rel(r.a, ref.a) < 1e-10, method
        assert rel(r.lam, ref.lam) < 1e-10, method
        assert rel(r.constraint_force, M @ r.a + h - tau) < 1e-10, method
        assert rel(r.constraint_force, Phi.T @ r.lam) < 1e-10, method
        assert np.linalg.norm(Phi @ r.a + bias) < 1e-10 * (
            np.linalg.norm(Phi) * np.linalg.norm(r.a) + np.linalg.norm(bias)
        ), method


def test_multiplier_solves_kkt_system():
    """Independent check against a plain dense solve of [[M, Φᵀ], [Φ, 0]] [a; −λ] = [τ − h; −bias]."""
    M, h, tau, Phi, bias = random_problem(12, 5, seed=3)
    K = np.block([[M, Phi.T], [Phi, np.zeros((5, 5))]])
    x = np.linalg.solve(K, np.concatenate([tau - h, -bias]))
    r = dyn.forward(M, h, tau, Phi, bias, method="multiplier")
    assert rel(r.a, x[:12]) < 1e-12
    assert rel(r.lam, -x[12:]) < 1e-12


@pytest.mark.parametrize("n, m", [(7, 2), (34, 12)])
def test_inertia_variants_agree(n, m):
    M, h, tau, Phi, bias = random_problem(n, m, seed=5)
    ref = dyn.forward(M, h, tau, Phi, bias, method="projection", inertia="Mc")
    for kind, gamma in [("symmetric", None), ("gamma", None), ("gamma", 0.3), ("gamma", 1e3)]:
        r = dyn.forward(M, h, tau, Phi, bias, method="projection", inertia=kind, gamma=gamma)
        assert rel(r.a, ref.a) < 1e-10, (kind, gamma)
        assert rel(r.constraint_force, ref.constraint_force) < 1e-10, (kind, gamma)


@pytest.mark.parametrize("method", METHODS)
def test_sparse_mass_matches_dense(method):
    M, h, tau, Phi, bias = random_problem(34, 12, seed=11)
    dense = dyn.forward(M, h, tau, Phi, bias, method=method)
    r = dyn.forward(sp.csr_matrix(M), h, tau, sp.csr_matrix(Phi), bias, method=method)
    assert rel(r.a, dense.a) < 1e-10
    assert rel(r.lam, dense.lam) < 1e-10
    assert rel(r.constraint_force, dense.constraint_force) < 1e-10


def test_sparse_projection_route_matches_dense_Mc_with_redundancy():
    """The orthonormal-rows route (sparse M) equals [AG-25] with dense M_c, also with redundant rows."""
    M, h, tau, Phi, bias = random_problem(20, 4, seed=2)
    Phi = np.vstack([Phi, Phi[1], 2.0 * Phi[0] - Phi[3]])
    a0 = np.linalg.lstsq(Phi[:4], -bias, rcond=None)[0]
    bias = -Phi @ a0  # consistent bias for the redundant rows
    dense = dyn.forward(M, h, tau, Phi, bias, method="projection")
    r = dyn.forward(sp.csc_matrix(M), h, tau, Phi, bias, method="projection")
    assert r.rank == dense.rank == 4 and not r.lam_unique
    assert rel(r.a, dense.a) < 1e-10
    assert rel(r.lam, dense.lam) < 1e-10
    assert rel(r.constraint_force, dense.constraint_force) < 1e-10


def test_no_constraints_gives_unconstrained_acceleration():
    M, h, tau, _, _ = random_problem(7, 0, seed=4)
    a_u = np.linalg.solve(M, tau - h)
    for method in METHODS:
        for Phi in (np.zeros((0, 7)), None):
            r = dyn.forward(M, h, tau, Phi, None, method=method)
            assert rel(r.a, a_u) < 1e-12 and r.lam.shape == (0,) and r.rank == 0
            assert np.all(r.constraint_force == 0)


# ------------------------------------------------------------------------------ redundant constraints
def redundant_problem(n=12, seed=7):
    M, h, tau, Phi, bias = random_problem(n, 4, seed=seed)
    Phi_red = np.vstack([Phi, Phi[2], 0.5 * Phi[0] + 3.0 * Phi[1]])  # duplicate + linear combination
    bias_red = np.concatenate([bias, [bias[2], 0.5 * bias[0] + 3.0 * bias[1]]])
    return M, h, tau, Phi, bias, Phi_red, bias_red


def test_redundant_constraints_projection_and_nullspace():
    M, h, tau, Phi, bias, Phi_red, bias_red = redundant_problem()
    ref = dyn.forward(M, h, tau, Phi, bias, method="multiplier")  # non-redundant subset
    for method in ("projection", "nullspace"):
        r = dyn.forward(M, h, tau, Phi_red, bias_red, method=method)
        assert r.rank == 4 and not r.lam_unique
        assert rel(r.a, ref.a) < 1e-10, method
        assert rel(r.constraint_force, ref.constraint_force) < 1e-10, method
        assert rel(Phi_red.T @ r.lam, ref.constraint_force) < 1e-10, method
        # minimum-norm multipliers: orthogonal to ker Φᵀ, so no smaller λ gives the same force
        y = np.linalg.svd(Phi_red)[0][:, 4:]  # basis of ker Φᵀ
        assert np.abs(y.T @ r.lam).max() < 1e-10 * np.linalg.norm(r.lam)
        assert np.linalg.norm(r.lam) < np.linalg.norm(ref.lam)  # spreads the load over duplicate rows


@pytest.mark.parametrize("method", ["multiplier", "gauss"])
def test_redundant_constraints_raise_for_multiplier_forms(method):
    M, h, tau, _, _, Phi_red, bias_red = redundant_problem()
    with pytest.raises(ConstraintError, match="projection") as info:
        dyn.forward(M, h, tau, Phi_red, bias_red, method=method)
    msg = str(info.value)
    assert "rank 4 of 6" in msg and "singular" in msg
    assert "[4, 5]" in msg  # the duplicate (row 4) and the combination (row 5) depend on earlier rows


def test_near_dependent_rows_follow_rtol():
    M, h, tau, Phi, bias = random_problem(10, 3, seed=9)
    extra = Phi[0] + 1e-7 * np.random.default_rng(90).standard_normal(10)  # sin² of the angle ~ 1e-14
    Phi2 = np.vstack([Phi, extra])
    bias2 = np.concatenate([bias, [bias[0]]])
    with pytest.raises(ConstraintError):
        dyn.forward(M, h, tau, Phi2, bias2, method="multiplier")
    r = dyn.forward(M, h, tau, Phi2, bias2, method="projection")  # σ_min/σ_max ~ 1e-8 > rtol: kept
    assert r.rank == 4
    r = dyn.forward(M, h, tau, Phi2, bias2, method="projection", rtol=1e-6)  # dropped
    ref = dyn.forward(M, h, tau, Phi, bias, method="multiplier")
    assert r.rank == 3 and rel(r.a, ref.a) < 1e-6


# ---------------------------------------------------------------- slider crank [AG-66..69]
def slider_crank(q1, q2, m=1.0, l=1.0):
    c1, c2, c12 = np.cos(q1), np.cos(q2), np.cos(q1 + q2)
    M = m * l**2 * np.array([[3 + 2 * c2, 1 + c2], [1 + c2, 1.0]])  # [AG-66]
    A = l * np.array([[c1 + c12, c12]])  # [AG-67]
    return M, A


def test_slider_crank_singular_configuration():
    M, A = slider_crank(np.pi / 2, np.pi)  # q2 = 2π − 2q1: A = l c1 [2 1] = 0 (numerically ~1e-16)
    assert 0 < np.abs(A).max() < 1e-15
    P = dyn.projector(A)
    assert P.rank == 0 and np.array_equal(P.matrix(), np.eye(2))
    h, tau, bias = np.array([0.3, -0.2]), np.array([1.0, 0.0]), np.array([0.0])
    a_u = np.linalg.solve(M, tau - h)
    for method in ("projection", "nullspace"):
        for kind in dyn.INERTIA_KINDS:
            r = dyn.forward(M, h, tau, A, bias, method=method, inertia=kind)
            assert rel(r.a, a_u) < 1e-14 and r.rank == 0 and not r.lam_unique
            assert np.all(r.lam == 0) and np.all(r.constraint_force == 0)
    for method in ("multiplier", "gauss"):
        with pytest.raises(ConstraintError, match="rank 0 of 1"):
            dyn.forward(M, h, tau, A, bias, method=method)


def test_slider_crank_regular_projector_and_gamma_inertia():
    """Away from the singularity on q2 = 2π − 2q1: P = [[1, −2], [−2, 4]]/5 and, with γ = m l²,
    M_c″ = m l² [[1, (1 + c2)/5], [0, (3 − 2c2)/5]] [AG-68, AG-69] (AG prints the cases of (68)-(69)
    the wrong way round; see seeds/README)."""
    q1 = 2 * np.pi / 3
    q2 = 2 * np.pi - 2 * q1
    M, A = slider_crank(q1, q2, m=1.3, l=0.8)
    P = dyn.projector(A)
    assert P.rank == 1
    np.testing.assert_allclose(P.matrix(), np.array([[1, -2], [-2, 4]]) / 5, atol=1e-15)
    c2 = np.cos(q2)
    expected = 1.3 * 0.8**2 * np.array([[1, (1 + c2) / 5], [0, (3 - 2 * c2) / 5]])
    np.testing.assert_allclose(dyn.constraint_inertia(M, P, "gamma", gamma=1.3 * 0.8**2), expected, atol=1e-14)


# ------------------------------------------------------------------- particle on a circle [AG-33..35]
def circle(theta=0.4, theta_dot=1.7, rho=0.7):
    q = rho * np.array([np.cos(theta), np.sin(theta)])
    v = rho * theta_dot * np.array([-np.sin(theta), np.cos(theta)])
    Phi = q[None, :] / rho  # A = [q1/ρ, q2/ρ]
    bias = np.array([v @ v / rho])  # Ȧq̇ = (q̇1² + q̇2²)/ρ
    return q, v, Phi, bias


def test_circle_bias_is_second_derivative_of_constraint():
    """φ(q) = ‖q‖ − ρ; along q(t) = q + v t + ½ a0 t², φ̈(0) = Φ a0 + Φ̇q̇, so bias = φ̈ − Φ a0."""
    rho = 0.7
    q, v, Phi, bias = circle(rho=rho)
    a0 = np.array([0.3, -1.1])

    def phi(t):
        return np.linalg.norm(q + v * t + 0.5 * a0 * t * t) - rho

    dt = 1e-4
    phi_dd = (phi(dt) - 2 * phi(0.0) + phi(-dt)) / dt**2
    assert abs(phi_dd - Phi[0] @ a0 - bias[0]) < 1e-6 * bias[0]


@pytest.mark.parametrize("theta_dot", [0.0, 1.7])
def test_particle_on_circle(theta_dot):
    theta, rho, mass = 0.4, 0.7, 2.5
    _q, v, Phi, bias = circle(theta, theta_dot, rho)
    e_par = np.array([-np.sin(theta), np.cos(theta)])  # tangential ε∥
    e_perp = np.array([np.cos(theta), np.sin(theta)])  # normal ε⊥
    f = np.array([1.3, -0.6])
    f_par, f_perp = (e_par @ f) * e_par, (e_perp @ f) * e_perp
    M, h = mass * np.eye(2), np.zeros(2)
    speed2 = v @ v
    P = dyn.projector(Phi)
    np.testing.assert_allclose(P.matrix(), np.outer(e_par, e_par), atol=1e-15)  # [AG-33]
    np.testing.assert_allclose(-P.pinv_apply(bias), -speed2 / rho * e_perp, atol=1e-15)  # Cq̇ [AG-34, 35]
    # [AG-35]: m q̈∥ = f∥ and 𝓕 = f⊥ + m‖q̇‖²/ρ ε⊥; with M q̈ + h = f − 𝓕 and ours Φᵀλ = M a + h − τ = −𝓕
    a_expected = f_par / mass - speed2 / rho * e_perp  # = f∥/m exactly when q̇ = 0
    force_expected = -(f_perp + mass * speed2 / rho * e_perp)
    for method in METHODS:
        r = dyn.forward(M, h, f, Phi, bias, method=method)
        np.testing.assert_allclose(P.apply(r.a), f_par / mass, atol=1e-12, rtol=0)
        np.testing.assert_allclose(r.a, a_expected, atol=1e-12, rtol=0)
        np.testing.assert_allclose(r.constraint_force, force_expected, atol=1e-12, rtol=0)


# ----------------------------------------------------------------------------- Gauss terms [DE-28..39]
@pytest.mark.parametrize("sparse_M", [False, True])
def test_gauss_generalized_constrained_equation(sparse_M):
    M, b, tau, Phi, bias = random_problem(12, 5, seed=21)
    g = np.random.default_rng(1).standard_normal(12)
    Ms = sp.csr_matrix(M) if sparse_M else M
    r = dyn.forward(Ms, b + g, tau, Phi, bias, method="gauss")
    terms = dyn.generalized_constrained_terms(Ms, b, g, Phi, bias)
    lhs = terms.theta_T @ tau  # [DE-39]
    rhs = M @ r.a + b + g - Phi.T @ (terms.alpha + terms.rho)
    assert rel(lhs, rhs) < 1e-10
    Phi_bar = terms.Phi_bar
    np.testing.assert_allclose(Phi @ Phi_bar, np.eye(5), atol=1e-12)  # ΦΦ̄ = I  [DE-28]
    np.testing.assert_allclose(Phi_bar.T @ Phi.T, np.eye(5), atol=1e-12)
    Theta = np.eye(12) - Phi_bar @ Phi
    assert np.abs(Phi @ Theta).max() < 1e-12  # ΦΘ = 0
    assert np.abs(terms.theta_T @ Phi.T).max() < 1e-12  # ΘᵀΦᵀ = 0
    np.testing.assert_allclose(dyn.mass_weighted_inverse(Ms, Phi), Phi_bar, atol=1e-14)
    Phi_bar_direct = np.linalg.solve(M, Phi.T) @ np.linalg.inv(Phi @ np.linalg.solve(M, Phi.T))
    assert rel(Phi_bar, Phi_bar_direct) < 1e-10
    np.testing.assert_allclose(terms.H, np.linalg.inv(Phi @ np.linalg.solve(M, Phi.T)), rtol=1e-10)


def test_gauss_minimises_gauss_function():
    """a minimises G = ½(a − a_u)ᵀM(a − a_u) over Φa + bias = 0 [DE-21..25]."""
    M, h, tau, Phi, bias = random_problem(12, 5, seed=8)
    r = dyn.forward(M, h, tau, Phi, bias, method="gauss")
    a_u = np.linalg.solve(M, tau - h)
    C = dyn.nullspace_basis(Phi)
    G = lambda x: 0.5 * (x - a_u) @ M @ (x - a_u)  # noqa: E731
    rng = np.random.default_rng(0)
    for _ in range(10):
        assert G(r.a) < G(r.a + C @ rng.standard_normal(C.shape[1]) * 1e-3)


# ----------------------------------------------------------------------------------------- helpers
def test_projector_properties():
    _, _, _, Phi, _ = random_problem(9, 4, seed=12)
    Phi = np.vstack([Phi, Phi[0] - Phi[3]])
    P = dyn.projector(Phi)
    Pm = P.matrix()
    assert P.rank == 4 and P.tol == pytest.approx(max(1e-9 * P.singular_values[0], 1e-12))
    np.testing.assert_allclose(Pm @ Pm, Pm, atol=1e-14)
    np.testing.assert_allclose(Pm, Pm.T, atol=1e-15)
    assert np.abs(Phi @ Pm).max() < 1e-13
    np.testing.assert_allclose(Pm, np.eye(9) - np.linalg.pinv(Phi) @ Phi, atol=1e-13)  # [AG-15]
    x, y = np.arange(9.0), np.arange(5.0)
    np.testing.assert_allclose(P.apply(x) + P.apply_perp(x), x, atol=1e-14)
    np.testing.assert_allclose(P.apply(x), Pm @ x, atol=1e-13)
    np.testing.assert_allclose(P.pinv_apply(y), np.linalg.pinv(Phi, rcond=1e-9) @ y, atol=1e-12)
    np.testing.assert_allclose(P.pinv_t_apply(x), np.linalg.pinv(Phi, rcond=1e-9).T @ x, atol=1e-12)


def test_nullspace_basis_and_constraint_inertia():
    M, _, _, Phi, _ = random_problem(9, 3, seed=13)
    C = dyn.nullspace_basis(Phi)
    assert C.shape == (9, 6)
    np.testing.assert_allclose(C.T @ C, np.eye(6), atol=1e-14)
    assert np.abs(Phi @ C).max() < 1e-13
    P = dyn.projector(Phi)
    np.testing.assert_allclose(C @ C.T, P.matrix(), atol=1e-13)  # P = V₂V₂ᵀ [AG-4]
    Mc = dyn.constraint_inertia(M, P, "Mc")
    skew = Mc - M  # M̃ [AG-24]
    np.testing.assert_allclose(skew, -skew.T, atol=1e-12)
    z = np.random.default_rng(3).standard_normal(9)
    assert z @ Mc @ z == pytest.approx(z @ M @ z, rel=1e-12)  # [AG Thm. 2]
    Ms = dyn.constraint_inertia(M, P.matrix(), "symmetric")
    np.testing.assert_allclose(Ms, Ms.T, atol=1e-12)
    assert np.linalg.eigvalsh(Ms).min() > 0  # [AG Prop. 1]
    Mg = dyn.constraint_inertia(M, P, "gamma")
    assert abs(np.linalg.det(Mg)) > 0  # [AG Prop. 2]
    Q = np.eye(9) - P.matrix()
    np.testing.assert_allclose(Mg, P.matrix() @ M + np.trace(M) / 9 * Q, atol=1e-12)


def test_assembled_system_call_form():
    M, h, tau, Phi, bias = random_problem(7, 2, seed=14)
    seen = {}

    class Asm:
        def terms(self, t, q, v):
            seen["args"] = (t, q, v)
            return SimpleNamespace(M=M, h=h, Phi=Phi, bias=bias)

    state = SimpleNamespace(t=0.5, q=np.zeros(7), v=np.ones(7))
    ref = dyn.forward(M, h, tau, Phi, bias, method="gauss")
    r1 = dyn.forward(Asm(), state, tau, method="gauss")
    with pytest.warns(DeprecationWarning, match="method="):
        r2 = dyn.forward(Asm(), state, tau, "gauss")
    assert seen["args"][0] == 0.5
    assert r1.method == r2.method == "gauss"
    assert rel(r1.a, ref.a) < 1e-14 and rel(r2.a, ref.a) < 1e-14
    inv = dyn.inverse(Asm(), state, ref.a)
    assert rel(dyn.forward(M, h, inv.tau, Phi, bias).a, ref.a) < 1e-10


# ----------------------------------------------------------------------------------------- inverse
def test_inverse_with_given_multipliers_roundtrip():
    M, h, tau, Phi, bias = random_problem(12, 5, seed=15)
    r = dyn.forward(M, h, tau, Phi, bias, method="multiplier")
    inv = dyn.inverse(M, h, r.a, Phi, lam=r.lam, bias=bias)
    assert rel(inv.tau, tau) < 1e-12
    assert rel(inv.constraint_force, r.constraint_force) < 1e-12
    assert inv.lam_unique and inv.rank == 5


def test_inverse_minimum_norm():
    M, h, tau, Phi, bias = random_problem(12, 5, seed=16)
    a = dyn.forward(M, h, tau, Phi, bias).a
    inv = dyn.inverse(M, h, a, Phi, bias=bias)
    P = dyn.projector(Phi)
    np.testing.assert_allclose(P.apply(inv.tau), inv.tau, atol=1e-12)  # Pτ = τ [AG-21, AG-46]
    assert rel(inv.tau, P.apply(M @ a + h)) < 1e-12
    assert rel(dyn.forward(M, h, inv.tau, Phi, bias, method="multiplier").a, a) < 1e-10
    assert rel(inv.constraint_force, M @ a + h - inv.tau) < 1e-12
    assert rel(Phi.T @ inv.lam, inv.constraint_force) < 1e-10
    rng = np.random.default_rng(0)
    for _ in range(20):
        other = inv.tau + Phi.T @ rng.standard_normal(5)  # produces the same motion
        assert np.linalg.norm(inv.tau) < np.linalg.norm(other)
    assert rel(tau - inv.tau, Phi.T @ (np.linalg.lstsq(Phi.T, tau - inv.tau, rcond=None)[0])) < 1e-10


def test_inverse_weighted_minimum_norm():
    M, h, tau, Phi, bias = random_problem(12, 5, seed=17)
    a = dyn.forward(M, h, tau, Phi, bias).a
    rng = np.random.default_rng(2)
    B = rng.standard_normal((12, 12))
    W = B @ B.T + np.eye(12)
    Winv = np.linalg.inv(W)
    inv = dyn.inverse(M, h, a, Phi, W=W, bias=bias)
    cost = lambda t: t @ Winv @ t  # noqa: E731
    for _ in range(20):
        assert cost(inv.tau) < cost(inv.tau + Phi.T @ (1e-3 * rng.standard_normal(5)))
    tau0 = M @ a + h  # closed form of the minimiser
    y = np.linalg.solve(Phi @ Winv @ Phi.T, Phi @ Winv @ tau0)
    assert rel(inv.tau, tau0 - Phi.T @ y) < 1e-10
    assert rel(dyn.forward(M, h, inv.tau, Phi, bias).a, a) < 1e-10
    unweighted = dyn.inverse(M, h, a, Phi)
    assert rel(dyn.inverse(M, h, a, Phi, W=3.0 * np.eye(12)).tau, unweighted.tau) < 1e-12
    assert cost(inv.tau) < cost(unweighted.tau)


def test_inverse_redundant_and_inconsistent():
    M, h, tau, Phi, bias, Phi_red, bias_red = redundant_problem()
    a = dyn.forward(M, h, tau, Phi, bias, method="multiplier").a
    inv = dyn.inverse(M, h, a, Phi_red, bias=bias_red)
    assert inv.rank == 4 and not inv.lam_unique
    assert rel(inv.tau, dyn.inverse(M, h, a, Phi).tau) < 1e-10
    with pytest.raises(ConstraintError, match="violates the constraints"):
        dyn.inverse(M, h, a + 1e-3, Phi, bias=bias)


# ------------------------------------------------------------------------------------------ bad input
def test_bad_input_errors():
    M, h, tau, Phi, bias = random_problem(7, 2, seed=18)
    with pytest.raises(FlexbodyError, match="valid methods are multiplier, gauss, nullspace, projection"):
        dyn.forward(M, h, tau, Phi, bias, method="lagrange")
    with pytest.raises(FlexbodyError, match="valid kinds are Mc, symmetric, gamma"):
        dyn.forward(M, h, tau, Phi, bias, inertia="Mcc")
    with pytest.raises(FlexbodyError, match="valid kinds"):
        dyn.constraint_inertia(M, np.eye(7), "sym")
    with pytest.raises(StateError, match=r"M must be square"):
        dyn.forward(M[:, :6], h, tau, Phi, bias)
    with pytest.raises(StateError, match=r"h must have shape \(7,\)"):
        dyn.forward(M, h[:6], tau, Phi, bias)
    with pytest.raises(StateError, match=r"tau must have shape \(7,\)"):
        dyn.forward(M, h, np.ones((7, 1)), Phi, bias)
    with pytest.raises(ConstraintError, match=r"Phi must have shape \(m, 7\)"):
        dyn.forward(M, h, tau, Phi[:, :6], bias)
    with pytest.raises(ConstraintError, match=r"bias must have shape \(2,\)"):
        dyn.forward(M, h, tau, Phi, np.ones(3))
    with pytest.raises(ConstraintError, match=r"bias .* is required"):
        dyn.forward(M, h, tau, Phi, None)
    for name in ("M", "h", "tau", "Phi", "bias"):
        args = dict(M=M.copy(), h=h.copy(), tau=tau.copy(), Phi=Phi.copy(), bias=bias.copy())
        args[name].flat[1] = np.nan
        with pytest.raises(FlexbodyError, match=f"{name} contains NaN/Inf"):
            dyn.forward(args["M"], args["h"], args["tau"], args["Phi"], args["bias"], method="multiplier")
    with pytest.raises(StateError, match="not positive definite"):
        dyn.forward(-M, h, tau, Phi, bias, method="multiplier")
    with pytest.raises(StateError, match=r"a must have shape"):
        dyn.inverse(M, h, np.ones(3), Phi)
    with pytest.raises(ConstraintError, match=r"lam must have shape \(2,\)"):
        dyn.inverse(M, h, tau, Phi, lam=np.ones(3))
    with pytest.raises(StateError, match="W"):
        dyn.inverse(M, h, tau, Phi, W=-np.eye(7))
    with pytest.raises(ConstraintError, match="rtol"):
        dyn.forward(M, h, tau, Phi, bias, rtol=-1.0)


def test_nullspace_on_large_sparse_mass_uses_a_partitioned_basis():
    """Above NULLSPACE_SPARSE_LIMIT the minimal form uses a sparse coordinate-partitioning basis; it must
    give the projection form's a and Φᵀλ, with redundant rows too."""
    rng = np.random.default_rng(5)
    n = dyn.results.NULLSPACE_SPARSE_LIMIT + 1
    d = rng.uniform(1.0, 3.0, n)
    M = sp.diags(d, format="csc") + sp.diags(0.2 * np.ones(n - 1), 1, format="csc") + sp.diags(0.2 * np.ones(n - 1), -1)
    rows = np.array([[0, 5, 1.0], [0, 9, -2.0], [1, 5, 1.0], [1, 700, 3.0], [2, 5, 2.0], [2, 9, -4.0]])
    Phi = sp.csr_matrix((rows[:, 2], (rows[:, 0].astype(int), rows[:, 1].astype(int))), shape=(3, n))  # row 2 = 2·row 0
    bias = np.array([0.3, -0.1, 0.6])
    h, tau = rng.normal(size=n), rng.normal(size=n)
    ref = dyn.forward(M, h, tau, Phi, bias, method="projection")
    out = dyn.forward(M, h, tau, Phi, bias, method="nullspace")
    assert out.rank == 2 and not out.lam_unique
    assert np.abs(out.a - ref.a).max() <= 1e-12 * np.abs(ref.a).max()
    assert np.abs(out.constraint_force - ref.constraint_force).max() <= 1e-11 * np.abs(ref.constraint_force).max()
    assert np.abs(Phi @ out.a + bias).max() <= 1e-12


# ------------------------------------------------------------------ dense fast path vs reference route
def _reference(M, h, tau, Phi, bias, **kw):
    """The same problem given as lists, which bypasses the numba kernels (reference LAPACK/SVD route)."""
    return dyn.forward(M.tolist(), h.tolist(), tau.tolist(), Phi.tolist(), bias.tolist(), **kw)


@pytest.mark.parametrize("n, m", [(1, 1), (2, 1), (3, 3), (12, 5), (34, 12)])
def test_fast_path_matches_reference_route(n, m):
    M, h, tau, Phi, bias = random_problem(n, m, seed=40 + n)
    for method in METHODS:
        for kind in dyn.INERTIA_KINDS if method == "projection" else ("Mc",):
            kw = dict(method=method, inertia=kind)
            assert compiled.forward_fast(M, h, tau, Phi, bias, method, None, None, kind, None) is not None
            fast, ref = dyn.forward(M, h, tau, Phi, bias, **kw), _reference(M, h, tau, Phi, bias, **kw)
            assert (fast.method, fast.rank, fast.lam_unique) == (ref.method, ref.rank, ref.lam_unique)
            assert rel(fast.a, ref.a) < 1e-11, (method, kind)
            assert rel(fast.lam, ref.lam) < 1e-11, (method, kind)
            assert rel(fast.constraint_force, ref.constraint_force) < 1e-11, (method, kind)
    fortran = dyn.forward(np.asfortranarray(M), h, tau, np.asfortranarray(Phi), bias, method="multiplier")
    assert np.array_equal(fortran.a, dyn.forward(M, h, tau, Phi, bias, method="multiplier").a)


def test_fast_path_leaves_borderline_cases_to_reference_route():
    M, h, tau, _, _, Phi_red, bias_red = redundant_problem()
    for method in METHODS:  # redundant rows: SVD / error path decides
        assert compiled.forward_fast(M, h, tau, Phi_red, bias_red, method, None, None, "Mc", None) is None
    M, h, tau, Phi, bias = random_problem(10, 3, seed=9)
    near = np.vstack([Phi, Phi[0] + 1e-4 * np.random.default_rng(91).standard_normal(10)])
    bias2 = np.concatenate([bias, [bias[0]]])
    assert compiled.forward_fast(M, h, tau, near, bias2, "multiplier", None, None, "Mc", None) is None
    r, ref = (
        dyn.forward(M, h, tau, near, bias2, method="multiplier"),
        _reference(M, h, tau, near, bias2, method="multiplier"),
    )
    assert np.array_equal(r.a, ref.a) and np.array_equal(r.lam, ref.lam)
