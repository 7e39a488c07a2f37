"""User strain energies (fb.Hyperelastic): stress and tangent derived by sympy, compiled into the element kernels.

* the built-in St. Venant–Kirchhoff, compressible Neo-Hookean and Mooney–Rivlin laws written as user energies (in
  invariants, in the isochoric/volumetric split and as W(C)) agree with the built-ins to 1e-12 relative: S and D on
  random F including large stretches, element force, tangent, damping matrix and strain energy of small H8
  (plain and incompatible modes) and H27 bodies;
* a law that is not built in (Yeoh, and an anisotropic fibre law W(C)): S = 2 ∂W/∂C, D = 2 ∂S/∂C and the body
  tangent ∂k/∂q against central differences;
* every bad input raises MaterialError naming the culprit.
"""

import logging

import numpy as np
import pytest
import sympy as sp

import flexbody as fb
from flexbody.fem.flexible_body import strain_energy_density

RTOL = 1e-12
SVK = fb.StVenantKirchhoff(young=2.0e6, poisson=0.3, density=1000.0, damping=2e-3)
NH = fb.NeoHookean(young=2.0e6, poisson=0.3, density=1000.0, damping=2e-3)
MR = fb.MooneyRivlin(c10=2.5e5, c01=1.0e5, bulk_modulus=3.0e6, density=1000.0, damping=2e-3)
LAME = {"lam": SVK.params[0], "mu": SVK.params[1]}
NH_PARAMETERS = {"mu": NH.shear_modulus, "lam": NH.lame_lambda}
MR_PARAMETERS = {"c10": MR.c10, "c01": MR.c01, "kappa": MR.bulk_modulus}


def svk_invariants(I1, I2, J, lam, mu):
    """λ/2 (tr E)² + μ E : E with tr E = (I₁ − 3)/2 and E : E = (I₁² − 2 I₂ − 2 I₁ + 3)/4."""
    return lam / 2 * ((I1 - 3) / 2) ** 2 + mu * (I1**2 - 2 * I2 - 2 * I1 + 3) / 4


def svk_tensor(C, lam, mu):
    E = (C - sp.eye(3)) / 2
    return lam / 2 * E.trace() ** 2 + mu * (E * E).trace()


def nh_invariants(I1, I2, J, mu, lam):
    return mu / 2 * (I1 - 3) - mu * sp.log(J) + lam / 2 * sp.log(J) ** 2


def nh_tensor(C, mu, lam):
    J = sp.sqrt(C.det())
    return mu / 2 * (C.trace() - 3) - mu * sp.log(J) + lam / 2 * sp.log(J) ** 2


USER_LAWS = {
    "svk-invariants": (
        SVK,
        lambda: fb.Hyperelastic(
            svk_invariants, density=1000.0, parameters=LAME, damping=2e-3, small_strain=(2.0e6, 0.3)
        ),
    ),
    "svk-tensor": (
        SVK,
        lambda: fb.Hyperelastic.from_cauchy_green(svk_tensor, density=1000.0, parameters=LAME, damping=2e-3),
    ),
    "neo-hookean": (NH, lambda: fb.Hyperelastic(nh_invariants, density=1000.0, parameters=NH_PARAMETERS, damping=2e-3)),
    "neo-hookean-tensor": (
        NH,
        lambda: fb.Hyperelastic.from_cauchy_green(nh_tensor, density=1000.0, parameters=NH_PARAMETERS, damping=2e-3),
    ),
    "mooney-rivlin-split": (
        MR,
        lambda: fb.Hyperelastic.split(
            lambda I1bar, I2bar, c10, c01: c10 * (I1bar - 3) + c01 * (I2bar - 3),
            lambda J, kappa: kappa / 2 * (J - 1) ** 2,
            density=1000.0,
            parameters=MR_PARAMETERS,
            damping=2e-3,
        ),
    ),
}
_BUILT = {}


def _law(key):
    if key not in _BUILT:
        _BUILT[key] = USER_LAWS[key][0], USER_LAWS[key][1]()
    return _BUILT[key]


def _deformations():
    """Random F near and far from I, and large stretches (up to 3 and down to 0.4) in rotated axes (all det F > 0)."""
    rng = np.random.default_rng(7)
    F = [np.eye(3) + 0.3 * rng.standard_normal((3, 3)) for _ in range(6)]
    for stretches in ((3.0, 0.6, 1.2), (0.4, 1.5, 2.0), (2.5, 2.5, 0.5)):
        Q, _ = np.linalg.qr(rng.standard_normal((3, 3)))
        R, _ = np.linalg.qr(rng.standard_normal((3, 3)))
        F.append(R @ np.diag(stretches) @ Q.T)
    F = np.array([f for f in F if np.linalg.det(f) > 0.1])
    assert len(F) >= 7
    return F


def _relative(a, b):
    return np.abs(np.asarray(a) - np.asarray(b)).max() / np.abs(np.asarray(b)).max()


@pytest.mark.parametrize("key", list(USER_LAWS))
def test_pointwise_stress_moduli_and_energy_match_the_built_in_law(key):
    builtin, user = _law(key)
    F = _deformations()
    S0, D0 = builtin.pk2_stress_and_moduli(F)
    S1, D1 = user.pk2_stress_and_moduli(F)
    assert _relative(S1, S0) < RTOL
    assert _relative(D1, D0) < RTOL
    assert _relative(user.pk2_stress(F), S0) < RTOL
    assert _relative(user.small_strain_lame, builtin.small_strain_lame) < RTOL
    assert _relative(strain_energy_density(user, F), strain_energy_density(builtin, F)) < RTOL


@pytest.mark.parametrize(
    "order, locking", [(1, None), (1, "incompatible_modes"), (2, None)], ids=["H8", "H8-im", "H27"]
)
@pytest.mark.parametrize("key", list(USER_LAWS))
def test_element_force_tangent_damping_and_energy_match_the_built_in_law(key, order, locking):
    builtin, user = _law(key)
    mesh = fb.mesh.box((0.4, 0.2, 0.1), (2, 2, 1), order=order)
    bodies = [fb.FlexibleBody(name, mesh, m, locking=locking) for name, m in (("builtin", builtin), ("user", user))]
    rng = np.random.default_rng(3)
    X = bodies[0].reference_coordinates().reshape(-1, 3)
    shear = np.array([[1.3, 0.25, 0.0], [-0.1, 0.8, 0.2], [0.05, 0.0, 1.1]])  # a large homogeneous part
    q = (X @ shear.T).ravel() + 0.004 * rng.standard_normal(X.size)
    v = rng.standard_normal(X.size)
    results = [
        (
            b.internal_force(q, v),
            b.tangent(q, v).toarray(),
            b.damping_matrix(q, v).toarray(),
            b.internal_force(q),
            b.strain_energy(q),
        )
        for b in bodies
    ]
    for reference, value in zip(*results):
        assert _relative(value, reference) < RTOL


YEOH = {"c1": 2.0e5, "c2": -0.0, "c3": 1.5e3, "kappa": 2.0e6}


def _yeoh():
    return fb.Hyperelastic.split(
        lambda I1bar, I2bar, c1, c2, c3: c1 * (I1bar - 3) + c2 * (I1bar - 3) ** 2 + c3 * (I1bar - 3) ** 3,
        lambda J, kappa: kappa / 2 * (J - 1) ** 2 + kappa / 8 * sp.log(J) ** 2,
        density=1100.0,
        parameters={"c1": 2.0e5, "c2": 3.0e4, "c3": 1.5e3, "kappa": 2.0e6},
        name="yeoh",
    )


def _fibre():
    a = sp.Matrix([1, 1, 0]) / sp.sqrt(2)

    def psi(C, mu, lam, k1):
        J = sp.sqrt(C.det())
        I4 = (a.T * C * a)[0, 0]
        return mu / 2 * (C.trace() - 3) - mu * sp.log(J) + lam / 2 * sp.log(J) ** 2 + k1 / 2 * (I4 - 1) ** 2

    return fb.Hyperelastic.from_cauchy_green(
        psi, density=1100.0, parameters={"mu": 1e5, "lam": 4e5, "k1": 3e5}, name="fibre"
    )


def _stretch_from_C(C):
    w, V = np.linalg.eigh(C)
    return V @ np.diag(np.sqrt(w)) @ V.T


@pytest.mark.parametrize("make", [_yeoh, _fibre], ids=["yeoh", "fibre"])
def test_new_law_stress_and_tangent_by_central_differences(make):
    """S = 2 ∂W/∂C (differences of the NumPy energy), D = 2 ∂S/∂C, and the body's ∂k/∂q."""
    law = make()
    rng = np.random.default_rng(5)
    F = np.eye(3) + 0.25 * rng.standard_normal((3, 3))
    C = F.T @ F
    S, D = law.pk2_stress_and_moduli(F)
    h = 1e-6
    dW, dS = np.zeros((3, 3)), np.zeros((3, 3, 3, 3))
    for k in range(3):
        for m in range(3):
            dC = np.zeros((3, 3))
            dC[k, m] += h / 2
            dC[m, k] += h / 2
            Fp, Fm = _stretch_from_C(C + dC), _stretch_from_C(C - dC)
            dW[k, m] = 2 * (law.strain_energy_density(Fp) - law.strain_energy_density(Fm)) / (2 * h)
            dS[:, :, k, m] = 2 * (law.pk2_stress(Fp) - law.pk2_stress(Fm)) / (2 * h)
    assert _relative(dW, S) < 1e-6
    assert _relative(dS, D) < 1e-6
    assert _relative(D, D.transpose(2, 3, 0, 1)) < 1e-12 and _relative(D, D.transpose(1, 0, 2, 3)) < 1e-12

    body = fb.FlexibleBody("b", fb.mesh.box((0.3, 0.1, 0.1), (2, 1, 1), order=2), law)
    q = body.reference_coordinates() * 1.1 + 0.003 * rng.standard_normal(body.n_dofs)
    K = body.tangent(q).toarray()
    dq = 1e-7
    columns = rng.choice(body.n_dofs, 12, replace=False)
    for j in columns:
        e = np.zeros(body.n_dofs)
        e[j] = dq
        fd = (body.internal_force(q + e) - body.internal_force(q - e)) / (2 * dq)
        assert np.abs(fd - K[:, j]).max() < 1e-6 * np.abs(K).max()
    # the energy's gradient is the force (energy reporting is consistent with the kernels)
    j = columns[0]
    e = np.zeros(body.n_dofs)
    e[j] = dq
    assert (
        abs((body.strain_energy(q + e) - body.strain_energy(q - e)) / (2 * dq) - body.internal_force(q)[j])
        < 1e-6 * np.abs(body.internal_force(q)).max()
    )


def test_laws_of_one_structure_share_one_compiled_function_and_different_values_differ():
    """Parameters are symbols: a new value reuses the compiled law, and the values reach the kernels."""
    soft = fb.Hyperelastic(nh_invariants, density=1.0, parameters={"mu": 1e5, "lam": 1e5})
    stiff = fb.Hyperelastic(nh_invariants, density=1.0, parameters={"mu": 2e5, "lam": 2e5})
    assert soft.law is stiff.law and soft != stiff
    F = np.diag([1.2, 1.0, 1.0])
    assert np.allclose(stiff.pk2_stress(F), 2 * soft.pk2_stress(F), rtol=1e-14, atol=0)


def test_user_law_validation_at_identity_passes_quickly_and_repr_names_the_law():
    law = _law("neo-hookean")[1]
    assert "Hyperelastic('hyperelastic'" in repr(law) and "mu=" in repr(law)
    assert isinstance(law.energy, sp.Expr) and law.params.shape == (2,)


@pytest.mark.parametrize(
    "make, message",
    [
        (
            lambda: fb.Hyperelastic(lambda I1, I2, J, mu: mu * np.log(J), density=1.0, parameters={"mu": 1.0}),
            r"not expressible with sympy operations \((TypeError|AttributeError)",
        ),
        (
            lambda: fb.Hyperelastic(
                lambda I1, I2, J, mu: mu * (I1 - 3) + sp.Symbol("x") * J, density=1.0, parameters={"mu": 1.0}
            ),
            "undeclared symbols x",
        ),
        (
            lambda: fb.Hyperelastic(
                lambda I1, I2, J, mu: mu * (I1 - 3), density=1.0, parameters={"mu": 1.0, "kapa": 2.0}
            ),
            "not used by the strain energy: kapa",
        ),
        (
            lambda: fb.Hyperelastic(lambda I1, I2, J, mu, kappa: mu * (I1 - 3), density=1.0, parameters={"mu": 1.0}),
            "missing 1 required positional argument: 'kappa'",
        ),
        (
            lambda: fb.Hyperelastic(
                lambda I1, I2, J, mu, lam: mu / 2 * (I1 - 3) + lam / 2 * sp.log(J) ** 2,
                density=1.0,
                parameters={"mu": 1.0, "lam": 1.0},
            ),
            "not stress-free",
        ),
        (
            lambda: fb.Hyperelastic(
                lambda I1, I2, J, mu, lam: mu / 2 * (I1 - 3) - mu * sp.log(J) - lam * sp.log(J) ** 2,
                density=1.0,
                parameters={"mu": 1.0, "lam": 2.0},
            ),
            "not positive definite",
        ),
        (
            lambda: fb.Hyperelastic(
                lambda I1, I2, J, kappa: kappa / 2 * (J - 1) ** 2, density=1.0, parameters={"kappa": 1.0}
            ),
            "not positive definite",
        ),
        (
            lambda: fb.Hyperelastic(nh_invariants, density=1.0, parameters={"mu": float("nan"), "lam": 1.0}),
            "parameter 'mu' must be finite and >= 0",
        ),
        (
            lambda: fb.Hyperelastic(nh_invariants, density=1.0, parameters={"mu": -1.0, "lam": 1.0}),
            "parameter 'mu' must be finite and >= 0",
        ),
        (lambda: fb.Hyperelastic(nh_invariants, density=-1.0, parameters=NH_PARAMETERS), "density must be positive"),
        (lambda: fb.Hyperelastic(nh_invariants, density=1.0, parameters=NH_PARAMETERS, damping=-1.0), "damping"),
        (
            lambda: fb.Hyperelastic(nh_invariants, density=1.0, parameters={"mu": 1.0, "lam": "soft"}),
            "parameter 'lam' must be a number",
        ),
        (lambda: fb.Hyperelastic(nh_invariants, density=1.0, parameters={"2mu": 1.0}), "not a Python identifier"),
        (lambda: fb.Hyperelastic(lambda I1, I2, J: "I1 - 3", density=1.0), "not expressible with sympy"),
        (
            lambda: fb.Hyperelastic(
                lambda I1, I2, J, mu: mu * sp.besselj(1, I1 - 3) ** 2 - mu * sp.log(J),
                density=1.0,
                parameters={"mu": 1.0},
            ),
            "no compiled form|could not be compiled",
        ),
        (
            lambda: fb.Hyperelastic.from_cauchy_green(lambda C, mu: mu * C, density=1.0, parameters={"mu": 1.0}),
            "scalar sympy expression",
        ),
        (
            lambda: fb.Hyperelastic(nh_invariants, density=1.0, parameters=NH_PARAMETERS, small_strain=(1.0, 0.7)),
            "poisson must lie",
        ),
    ],
    ids=[
        "math-function",
        "undeclared-symbol",
        "unused-parameter",
        "missing-parameter",
        "not-stress-free",
        "negative-stiffness",
        "zero-shear-stiffness",
        "nan-parameter",
        "negative-parameter",
        "negative-density",
        "negative-damping",
        "non-numeric-parameter",
        "bad-parameter-name",
        "string-energy",
        "uncompilable-function",
        "matrix-energy",
        "bad-small-strain",
    ],
)
def test_bad_input_raises_material_error_naming_the_culprit(make, message):
    with pytest.raises(fb.MaterialError, match=message) as info:
        make()
    assert "Hyperelastic" in str(info.value)


def test_pickle_round_trip_rebuilds_the_same_law():
    import pickle

    law = _law("mooney-rivlin-split")[1]
    back = pickle.loads(pickle.dumps(law))
    F = _deformations()
    assert back == law and back.law is law.law
    assert np.array_equal(back.pk2_stress(F), law.pk2_stress(F))


def test_a_collapsed_state_gives_nan_not_an_exception():
    """det C = 0 (a diverging Newton trial) yields non-finite values the solvers' line search can halve."""
    law = _law("mooney-rivlin-split")[1]
    S, D = law.pk2_stress_and_moduli(np.zeros((3, 3)))
    assert not np.all(np.isfinite(S)) and not np.all(np.isfinite(D))
    body = fb.FlexibleBody("b", fb.mesh.box((0.1, 0.1, 0.1), (1, 1, 1)), law)
    assert not np.all(np.isfinite(body.internal_force(np.zeros(body.n_dofs))))
    assert np.isnan(body.strain_energy(np.zeros(body.n_dofs)))


def test_an_energy_not_zero_at_the_reference_is_accepted_with_a_warning(caplog):
    """W = neo-Hookean + 7 J/m³: the stresses and the tangent are the neo-Hookean ones, the reported strain energy
    is offset by 7 J/m³ times the volume; said once, when the material is made."""

    def offset(I1, I2, J, mu, lam):
        return nh_invariants(I1, I2, J, mu, lam) + 7.0

    with caplog.at_level(logging.WARNING, logger="flexbody"):
        law = fb.Hyperelastic(offset, density=1000.0, parameters=NH_PARAMETERS)
    assert any("W(I) = 7 J/m³" in r.getMessage() for r in caplog.records)
    F = np.eye(3) + 0.01 * np.arange(9.0).reshape(3, 3)
    assert float(law.strain_energy_density(F)) == pytest.approx(float(strain_energy_density(NH, F)) + 7.0, rel=1e-12)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="flexbody"):
        fb.Hyperelastic(nh_invariants, density=1000.0, parameters=NH_PARAMETERS)
    assert not caplog.records


def test_a_law_that_turns_nan_beyond_a_stretch_is_named_when_the_solve_fails():
    """W = neo-Hookean + μ (J − 1)⁴ √(1.1 − J): stress-free and stable at the reference, NaN for J > 1.1. A bar pulled
    past it: before, "non-finite residual" naming nothing; now the body and its law."""

    def brittle(I1, I2, J, mu, lam):
        return nh_invariants(I1, I2, J, mu, lam) + mu * (J - 1) ** 4 * sp.sqrt(sp.Rational(11, 10) - J)

    law = fb.Hyperelastic(brittle, density=1000.0, parameters={"mu": 1e6, "lam": 1e6}, name="brittle")
    bar = fb.FlexibleBody("bar", fb.mesh.box((1, 0.1, 0.1), (2, 1, 1)), law)
    system = fb.System([bar], [fb.Fix(bar, "x0")], loads=[fb.SurfaceTraction(bar, "x1", total=(5e4, 0, 0))])
    with pytest.raises(fb.ConvergenceError, match=r"the internal force of body 'bar' \(Hyperelastic\('brittle'"):
        fb.solve_static(system, load_steps=1)
