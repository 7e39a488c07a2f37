"""Materials: S = 2 ∂W/∂C and D = 2 ∂S/∂C by finite differences, small-strain limit, bad constants."""

import numpy as np
import pytest

import flexbody as fb
from flexbody.fem.flexible_body import strain_energy_density

MATERIALS = {
    "svk": fb.StVenantKirchhoff(young=2.0e6, poisson=0.3, density=1000.0),
    "neo-hookean": fb.NeoHookean(young=2.0e6, poisson=0.3, density=1000.0),
    "neo-hookean-kappa": fb.NeoHookean(shear_modulus=7.0e5, bulk_modulus=4.0e6, density=1000.0),
    "mooney-rivlin": fb.MooneyRivlin(c10=2.5e5, c01=1.0e5, bulk_modulus=3.0e6, density=1000.0),
}
RNG = np.random.default_rng(3)
F_SAMPLE = np.eye(3) + 0.25 * RNG.standard_normal((3, 3))


def _stretch_from_C(C):
    w, V = np.linalg.eigh(C)
    return V @ np.diag(np.sqrt(w)) @ V.T


@pytest.fixture(params=list(MATERIALS), ids=list(MATERIALS))
def material(request):
    return MATERIALS[request.param]


def test_stress_is_energy_derivative(material):
    """S_IJ = 2 ∂W/∂C_IJ (central differences in C, symmetric perturbations)."""
    C = F_SAMPLE.T @ F_SAMPLE
    S = material.pk2_stress(F_SAMPLE)
    h = 1e-7
    fd = np.zeros((3, 3))
    for i in range(3):
        for j in range(3):
            dC = np.zeros((3, 3))
            dC[i, j] += h / 2
            dC[j, i] += h / 2
            Wp = strain_energy_density(material, _stretch_from_C(C + dC))
            Wm = strain_energy_density(material, _stretch_from_C(C - dC))
            fd[i, j] = 2 * (Wp - Wm) / (2 * h)
    assert np.allclose(S, S.T, atol=1e-9 * abs(S).max())
    assert np.abs(fd - S).max() < 1e-6 * np.abs(S).max()


def test_moduli_are_stress_derivative(material):
    """D_IJKL = 2 ∂S_IJ/∂C_KL, with major and minor symmetries."""
    C = F_SAMPLE.T @ F_SAMPLE
    _S, D = material.pk2_stress_and_moduli(F_SAMPLE)
    h = 1e-6
    fd = np.zeros((3, 3, 3, 3))
    for k in range(3):
        for m in range(3):
            dC = np.zeros((3, 3))
            dC[k, m] += h / 2
            dC[m, k] += h / 2
            fd[:, :, k, m] = (
                2
                * (material.pk2_stress(_stretch_from_C(C + dC)) - material.pk2_stress(_stretch_from_C(C - dC)))
                / (2 * h)
            )
    scale = np.abs(D).max()
    assert np.abs(fd - D).max() < 1e-6 * scale
    assert np.abs(D - D.transpose(2, 3, 0, 1)).max() < 1e-12 * scale
    assert np.abs(D - D.transpose(1, 0, 2, 3)).max() < 1e-12 * scale


def test_reference_state_is_stress_free_with_linear_moduli(material):
    """At F = I: S = 0 and D = λ₀ I⊗I + 2μ₀ 𝕀 (linear elasticity with the material's small-strain constants)."""
    S, D = material.pk2_stress_and_moduli(np.eye(3))
    lam, mu = material.small_strain_lame
    I = np.eye(3)
    expected = lam * np.einsum("ij,kl->ijkl", I, I) + mu * (
        np.einsum("ik,jl->ijkl", I, I) + np.einsum("il,jk->ijkl", I, I)
    )
    assert np.abs(S).max() < 1e-9 * mu
    assert np.allclose(D, expected, rtol=1e-12, atol=1e-9 * mu)


def test_neo_hookean_uniaxial_closed_form():
    """Hydrostatic stretch F = s I: Cauchy σ = [μ(s² − 1) + λ ln s³] / s³ (closed form of the law)."""
    mat = MATERIALS["neo-hookean"]
    s = 1.1
    S = mat.pk2_stress(s * np.eye(3))
    sigma = s * S * s / s**3
    expected = (mat.shear_modulus * (s**2 - 1) + mat.lame_lambda * np.log(s**3)) / s**3
    assert np.allclose(sigma, expected * np.eye(3), rtol=1e-13)


def test_vectorised_over_leading_axes(material):
    F = np.eye(3) + 0.1 * RNG.standard_normal((4, 5, 3, 3))
    S = material.pk2_stress(F)
    assert S.shape == (4, 5, 3, 3)
    assert np.allclose(S[2, 3], material.pk2_stress(F[2, 3]))


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: fb.StVenantKirchhoff(young=-1.0, poisson=0.3, density=1.0), "young must be positive"),
        (lambda: fb.StVenantKirchhoff(young=1.0, poisson=0.5, density=1.0), r"poisson must lie in \(-1, 0.5\)"),
        (lambda: fb.StVenantKirchhoff(young=1.0, poisson=0.3, density=float("nan")), "density must be positive"),
        (lambda: fb.NeoHookean(young=1.0, poisson=0.3, density=1.0, shear_modulus=1.0), "not a mix"),
        (lambda: fb.NeoHookean(shear_modulus=1.0, bulk_modulus=0.0, density=1.0), "bulk_modulus must be positive"),
        (lambda: fb.MooneyRivlin(c10=-1.0, c01=0.0, bulk_modulus=1.0, density=1.0), "c10 >= 0"),
        (lambda: fb.StVenantKirchhoff(young=1.0, poisson=0.3, density=1.0, damping=-0.1), "damping"),
    ],
)
def test_non_physical_constants_raise(make, message):
    with pytest.raises(fb.MaterialError, match=message):
        make()
