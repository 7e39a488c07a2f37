"""Hyperelastic materials: second Piola–Kirchhoff stress S(C) and its material tangent D = 2 ∂S/∂C.

The stress enters the internal force of [DE-104], k_j = ∫ ∂N_ij/∂X_k (δ_il + ∂N_il/∂X_k d_k) S_lk dV.

* St. Venant–Kirchhoff: S = λ tr(E) I + 2 μ E, E = (C − I)/2.
* Compressible Neo-Hookean: W = μ/2 (I₁ − 3) − μ ln J + λ/2 (ln J)².
* Compressible Mooney–Rivlin: W = c₁₀ (Ī₁ − 3) + c₀₁ (Ī₂ − 3) + κ/2 (J − 1)², Ī₁ = J^(-2/3) I₁,
  Ī₂ = J^(-4/3) I₂, with the bulk modulus κ given by the user.

Invariant-based laws use S = 2 (W₁ I + W₂ (I₁ I − C) + W₃ I₃ C⁻¹) and
D = 4 [Σ W_ab ∂I_a/∂C ⊗ ∂I_b/∂C + W₂ (I ⊗ I − 𝕀) + W₃ I₃ (C⁻¹ ⊗ C⁻¹ − 𝕀_C⁻¹)].

A user law (:class:`flexbody.fem.hyperelastic.Hyperelastic`) runs in the same functions: its compiled
``law(p, C, out)`` (a numba first-class function, :mod:`flexbody.fem.energy_codegen`) is passed as the last
argument ``law`` and writes W and either (W_a, W_ab) — kind USER_INVARIANTS, then S and D follow from the
formulas above — or S and D in Voigt order — kind USER_TENSOR. The built-in laws omit ``law``: numba prunes
the user branch (``law is None``), so their compiled code is that of a function without it.

Optional Kelvin–Voigt damping adds S_v = β D₀ : Ė with D₀ the isotropic small-strain elasticity tensor of
the material (λ₀, μ₀) and β a retardation time [s]; the element kernels include it in the internal force
k(q, v), its Jacobian ∂k/∂q and the damping matrix ∂k/∂v.

The user-law routines use numpy's error model: a degenerate state (det C = 0 in a diverging Newton trial) gives
inf/NaN, which the solvers' line search halves, rather than an exception.

The pointwise laws are numba functions (``pk2_stress``, ``pk2_stress_and_moduli``) called inside the
element kernels; the material classes hold the constants and expose vectorised NumPy wrappers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numba as nb
import numpy as np

from ..errors import MaterialError

SVK, NEO_HOOKEAN, MOONEY_RIVLIN = 0, 1, 2
USER_INVARIANTS, USER_TENSOR = 3, 4  # user laws W(I₁, I₂, J) and W(C), see module docstring
LAW_OUT = 28  # length of a user law's output: W, then 9 or 6 + 21 numbers
VOIGT = ((0, 0), (1, 1), (2, 2), (1, 2), (0, 2), (0, 1))  # Voigt order of a user law's S and D


# --------------------------------------------------------------------------- pointwise laws (numba)
@nb.njit(cache=True, inline="always")
def _inverse_sym3(C, Ci):
    """Inverse of a symmetric 3×3 matrix C into Ci; returns det C."""
    c00 = C[1, 1] * C[2, 2] - C[1, 2] * C[2, 1]
    c01 = C[1, 2] * C[2, 0] - C[1, 0] * C[2, 2]
    c02 = C[1, 0] * C[2, 1] - C[1, 1] * C[2, 0]
    det = C[0, 0] * c00 + C[0, 1] * c01 + C[0, 2] * c02
    inv = 1.0 / det
    Ci[0, 0] = c00 * inv
    Ci[1, 0] = c01 * inv
    Ci[2, 0] = c02 * inv
    Ci[0, 1] = (C[0, 2] * C[2, 1] - C[0, 1] * C[2, 2]) * inv
    Ci[1, 1] = (C[0, 0] * C[2, 2] - C[0, 2] * C[2, 0]) * inv
    Ci[2, 1] = (C[0, 1] * C[2, 0] - C[0, 0] * C[2, 1]) * inv
    Ci[0, 2] = (C[0, 1] * C[1, 2] - C[0, 2] * C[1, 1]) * inv
    Ci[1, 2] = (C[0, 2] * C[1, 0] - C[0, 0] * C[1, 2]) * inv
    Ci[2, 2] = (C[0, 0] * C[1, 1] - C[0, 1] * C[1, 0]) * inv
    return det


@nb.njit(cache=True)
def _invariant_derivatives(kind, p, I1, I2, I3):
    """First and second derivatives of W(I₁, I₂, I₃): (W1, W2, W3, W11, W12, W13, W22, W23, W33)."""
    if kind == NEO_HOOKEAN:
        mu, lam = p[0], p[1]
        ln_j = 0.5 * math.log(I3)
        w3 = (-mu + lam * ln_j) / (2.0 * I3)
        w33 = (mu + 0.5 * lam - lam * ln_j) / (2.0 * I3 * I3)
        return 0.5 * mu, 0.0, w3, 0.0, 0.0, 0.0, 0.0, 0.0, w33
    # Mooney–Rivlin
    c10, c01, kappa = p[0], p[1], p[2]
    J = math.sqrt(I3)
    a13 = I3 ** (-1.0 / 3.0)
    a23 = a13 * a13
    w1 = c10 * a13
    w2 = c01 * a23
    w3 = -c10 * I1 * a13 / (3.0 * I3) - 2.0 * c01 * I2 * a23 / (3.0 * I3) + 0.5 * kappa * (J - 1.0) / J
    w13 = -c10 * a13 / (3.0 * I3)
    w23 = -2.0 * c01 * a23 / (3.0 * I3)
    w33 = (
        4.0 * c10 * I1 * a13 / (9.0 * I3 * I3)
        + 10.0 * c01 * I2 * a23 / (9.0 * I3 * I3)
        + 0.25 * kappa / I3
        - 0.25 * kappa * (J - 1.0) / (I3 * J)
    )
    return w1, w2, w3, 0.0, 0.0, w13, 0.0, w23, w33


@nb.njit(cache=True, inline="always")
def right_cauchy_green(F, C):
    """C = Fᵀ F into C (3, 3)."""
    for i in range(3):
        for j in range(i, 3):
            c = F[0, i] * F[0, j] + F[1, i] * F[1, j] + F[2, i] * F[2, j]
            C[i, j] = c
            C[j, i] = c


@nb.njit(cache=True, inline="always")
def _invariant_stress(w1, w2, w3, I1, I3, C, Ci, S):
    """S = 2 (W₁ I + W₂ (I₁ I − C) + W₃ I₃ C⁻¹)."""
    for i in range(3):
        for j in range(3):
            d = 1.0 if i == j else 0.0
            S[i, j] = 2.0 * (w1 * d + w2 * (I1 * d - C[i, j]) + w3 * I3 * Ci[i, j])


@nb.njit(cache=True)
def pk2_stress(kind, p, F, S, work, law=None):
    """Second Piola–Kirchhoff stress S (3, 3) [Pa] of deformation gradient F (3, 3) into S.

    ``work`` is a (2, 3, 3) scratch array (no allocation per call); ``law`` the compiled user law of kinds
    USER_INVARIANTS and USER_TENSOR (None for the built-in laws).
    """
    C = work[0]
    right_cauchy_green(F, C)
    if law is not None:
        _user_stress(law, kind, p, C, work[1], S)
        return
    if kind == SVK:
        lam, mu = p[0], p[1]
        tr = 0.5 * (C[0, 0] + C[1, 1] + C[2, 2] - 3.0)
        for i in range(3):
            for j in range(3):
                S[i, j] = mu * (C[i, j] - (1.0 if i == j else 0.0))
            S[i, i] += lam * tr
        return
    Ci = work[1]
    I1, I2, I3 = _invariants(C, Ci)
    w1, w2, w3, _, _, _, _, _, _ = _invariant_derivatives(kind, p, I1, I2, I3)
    _invariant_stress(w1, w2, w3, I1, I3, C, Ci, S)


@nb.njit(cache=True)
def pk2_stress_and_moduli(kind, p, F, S, D, work, law=None):
    """Stress S (3, 3) and material tangent D_IJKL = 2 ∂S_IJ/∂C_KL (3, 3, 3, 3) at F (3, 3)."""
    if law is not None:
        C = work[0]
        right_cauchy_green(F, C)
        _user_stress_and_moduli(law, kind, p, C, work[1], S, D)
        return
    pk2_stress(kind, p, F, S, work, None)  # None as the element kernels pass it: one compiled variant
    if kind == SVK:
        lam, mu = p[0], p[1]
        for i in range(3):
            for j in range(3):
                for k in range(3):
                    for m in range(3):
                        D[i, j, k, m] = lam * (i == j) * (k == m) + mu * ((i == k) * (j == m) + (i == m) * (j == k))
        return
    C, Ci = work[0], work[1]
    I3 = _inverse_sym3(C, Ci)
    I1 = C[0, 0] + C[1, 1] + C[2, 2]
    I2 = 0.5 * (I1 * I1 - np.sum(C * C))
    w1, w2, w3, w11, w12, w13, w22, w23, w33 = _invariant_derivatives(kind, p, I1, I2, I3)
    _invariant_moduli(w1, w2, w3, w11, w12, w13, w22, w23, w33, I1, I3, C, Ci, D)


@nb.njit(cache=True, inline="always")
def _invariant_moduli(w1, w2, w3, w11, w12, w13, w22, w23, w33, I1, I3, C, Ci, D):
    """D = 4 [Σ W_ab ∂I_a/∂C ⊗ ∂I_b/∂C + W₂ (I ⊗ I − 𝕀) + W₃ I₃ (C⁻¹ ⊗ C⁻¹ − 𝕀_C⁻¹)]."""
    dI = np.empty((3, 3, 3))  # ∂I₁/∂C, ∂I₂/∂C, ∂I₃/∂C
    for i in range(3):
        for j in range(3):
            d = 1.0 if i == j else 0.0
            dI[0, i, j] = d
            dI[1, i, j] = I1 * d - C[i, j]
            dI[2, i, j] = I3 * Ci[i, j]
    W = np.array([[w11, w12, w13], [w12, w22, w23], [w13, w23, w33]])
    for i in range(3):
        for j in range(3):
            for k in range(3):
                for m in range(3):
                    s = 0.0
                    for a in range(3):
                        for b in range(3):
                            s += W[a, b] * dI[a, i, j] * dI[b, k, m]
                    sym_id = 0.5 * ((i == k) * (j == m) + (i == m) * (j == k))
                    sym_ci = 0.5 * (Ci[i, k] * Ci[j, m] + Ci[i, m] * Ci[j, k])
                    s += w2 * ((i == j) * (k == m) - sym_id)
                    s += w3 * I3 * (Ci[i, j] * Ci[k, m] - sym_ci)
                    D[i, j, k, m] = 4.0 * s


@nb.njit(cache=True, inline="always", error_model="numpy")
def _invariants(C, Ci):
    """(I₁, I₂, I₃) of C (3, 3); C⁻¹ into Ci."""
    I3 = _inverse_sym3(C, Ci)
    I1 = C[0, 0] + C[1, 1] + C[2, 2]
    I2 = 0.5 * I1 * I1
    for i in range(3):
        for j in range(3):
            I2 -= 0.5 * C[i, j] * C[i, j]
    return I1, I2, I3


@nb.njit(cache=True, error_model="numpy")
def _user_stress(law, kind, p, C, Ci, S):
    """S (3, 3) of a user law at C (3, 3); Ci (3, 3) is scratch."""
    out = np.empty(LAW_OUT)
    law(p, C, out)
    if kind == USER_TENSOR:
        for a in range(6):
            i, j = VOIGT[a]
            S[i, j] = S[j, i] = out[1 + a]
        return
    I1, _I2, I3 = _invariants(C, Ci)
    _invariant_stress(out[1], out[2], out[3], I1, I3, C, Ci, S)


@nb.njit(cache=True, error_model="numpy")
def _user_stress_and_moduli(law, kind, p, C, Ci, S, D):
    """S (3, 3) and D = 2 ∂S/∂C (3, 3, 3, 3) of a user law at C (3, 3); Ci (3, 3) is scratch."""
    out = np.empty(LAW_OUT)
    law(p, C, out)
    if kind == USER_TENSOR:
        k = 7
        for a in range(6):
            i, j = VOIGT[a]
            S[i, j] = S[j, i] = out[1 + a]
            for b in range(a, 6):
                m, n = VOIGT[b]
                v = out[k]
                k += 1
                D[i, j, m, n] = D[j, i, m, n] = D[i, j, n, m] = D[j, i, n, m] = v  # minor and major symmetry
                D[m, n, i, j] = D[n, m, i, j] = D[m, n, j, i] = D[n, m, j, i] = v
        return
    I1, _I2, I3 = _invariants(C, Ci)
    _invariant_stress(out[1], out[2], out[3], I1, I3, C, Ci, S)
    _invariant_moduli(out[1], out[2], out[3], out[4], out[5], out[6], out[7], out[8], out[9], I1, I3, C, Ci, D)


@nb.njit(cache=True, error_model="numpy")
def user_energy_density(law, p, F, C):
    """W(F) [J/m³] of a user law; C (3, 3) is scratch. NaN for det F <= 0 (like the built-in laws' ln J)."""
    right_cauchy_green(F, C)
    J = (
        F[0, 0] * (F[1, 1] * F[2, 2] - F[1, 2] * F[2, 1])
        - F[0, 1] * (F[1, 0] * F[2, 2] - F[1, 2] * F[2, 0])
        + F[0, 2] * (F[1, 0] * F[2, 1] - F[1, 1] * F[2, 0])
    )
    if not J > 0.0:
        return math.nan
    out = np.empty(LAW_OUT)
    law(p, C, out)
    return out[0]


@nb.njit(cache=True)
def _batch_stress(kind, p, F, S, D, want_moduli, law=None):
    work = np.empty((2, 3, 3))
    for g in range(F.shape[0]):
        if want_moduli:
            pk2_stress_and_moduli(kind, p, F[g], S[g], D[g], work, law)
        else:
            pk2_stress(kind, p, F[g], S[g], work, law)


# --------------------------------------------------------------------------- material classes
def _number(name: str, value, material: str) -> float:
    """``value`` as a float: a real number (Python, NumPy scalar or 0-d array), not a text, bool or sequence."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise MaterialError(f"{material}: {name} must be a real number, got {value!r} ({type(value).__name__})")
    return float(value)


def check_positive(name: str, value: float, material: str) -> float:
    value = _number(name, value, material)
    if not math.isfinite(value) or value <= 0.0:
        raise MaterialError(f"{material}: {name} must be positive and finite, got {value!r}")
    return value


def check_poisson(poisson: float, material: str) -> float:
    poisson = _number("poisson", poisson, material)
    if not math.isfinite(poisson) or not -1.0 < poisson < 0.5:
        raise MaterialError(f"{material}: poisson must lie in (-1, 0.5), got {poisson!r}")
    return poisson


def check_damping(damping: float, material: str) -> float:
    damping = _number("damping", damping, material)
    if not math.isfinite(damping) or damping < 0.0:
        raise MaterialError(f"{material}: damping (Kelvin–Voigt retardation time, s) must be >= 0, got {damping!r}")
    return damping


def lame_from_young(young: float, poisson: float) -> tuple[float, float]:
    """Lamé constants (λ, μ) [Pa] from Young's modulus [Pa] and Poisson's ratio."""
    lam = young * poisson / ((1.0 + poisson) * (1.0 - 2.0 * poisson))
    return lam, young / (2.0 * (1.0 + poisson))


def _checked_lame(young: float, poisson: float, material: str) -> tuple[float, float]:
    """(λ, μ) of (young, poisson), refused when they overflow (ν so near 0.5 or −1 that λ or μ is infinite)."""
    lam, mu = lame_from_young(young, poisson)
    if not (math.isfinite(lam) and math.isfinite(mu)):
        raise MaterialError(
            f"{material}: young={young!r} with poisson={poisson!r} gives Lamé constants "
            f"lambda={lam!r}, mu={mu!r}, which are not finite"
        )
    return lam, mu


@dataclass(frozen=True)
class Material:
    """Base class: density ρ₀ [kg/m³], Kelvin–Voigt retardation time ``damping`` β [s] (0 = elastic).

    Subclasses define ``kind`` (an integer law code), ``params`` (the law's constants as an array) and the
    small-strain Lamé constants ``small_strain_lame`` = (λ₀, μ₀) used by the damping stress β D₀ : Ė; user
    laws also ``law``, their compiled function (None for the built-in laws).
    """

    density: float
    damping: float = field(default=0.0, kw_only=True)

    kind: int = field(init=False, repr=False, default=-1)
    law: object = field(init=False, repr=False, compare=False, default=None)

    @property
    def params(self) -> np.ndarray:
        raise NotImplementedError

    @property
    def small_strain_lame(self) -> tuple[float, float]:
        raise NotImplementedError

    def pk2_stress(self, F: np.ndarray) -> np.ndarray:
        """Second Piola–Kirchhoff stress (..., 3, 3) [Pa] for deformation gradients F (..., 3, 3)."""
        return self._evaluate(F, want_moduli=False)[0]

    def pk2_stress_and_moduli(self, F: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Stress (..., 3, 3) and tangent moduli D = 2 ∂S/∂C (..., 3, 3, 3, 3) [Pa]."""
        S, D = self._evaluate(F, want_moduli=True)
        assert D is not None  # the moduli were asked for
        return S, D

    def _evaluate(self, F: np.ndarray, want_moduli: bool) -> tuple[np.ndarray, np.ndarray | None]:
        F = np.asarray(F, dtype=float)
        lead = F.shape[:-2]
        flat = np.ascontiguousarray(F.reshape(-1, 3, 3))
        S = np.zeros_like(flat)
        D = np.zeros((len(flat), 3, 3, 3, 3) if want_moduli else (1, 3, 3, 3, 3))
        if self.law is None:
            _batch_stress(self.kind, self.params, flat, S, D, want_moduli)
        else:
            _batch_stress(self.kind, self.params, flat, S, D, want_moduli, self.law)
        return S.reshape((*lead, 3, 3)), (D.reshape((*lead, 3, 3, 3, 3)) if want_moduli else None)


@dataclass(frozen=True)
class StVenantKirchhoff(Material):
    """St. Venant–Kirchhoff material S = λ tr(E) I + 2 μ E.

    Parameters
    ----------
    young : float
        Young's modulus E [Pa], > 0.
    poisson : float
        Poisson's ratio ν in (-1, 0.5).
    density : float
        Reference density ρ₀ [kg/m³], > 0.
    damping : float, optional
        Kelvin–Voigt retardation time β [s]; the viscous stress is β D₀ : Ė.
    """

    young: float = 0.0
    poisson: float = 0.0

    def __init__(self, young: float, poisson: float, density: float, *, damping: float = 0.0):
        name = "StVenantKirchhoff"
        object.__setattr__(self, "young", check_positive("young", young, name))
        object.__setattr__(self, "poisson", check_poisson(poisson, name))
        _checked_lame(self.young, self.poisson, name)
        object.__setattr__(self, "density", check_positive("density", density, name))
        object.__setattr__(self, "damping", check_damping(damping, name))
        object.__setattr__(self, "kind", SVK)

    @property
    def params(self) -> np.ndarray:
        """The law's constants (2,) = (λ, μ) [Pa], the Lamé constants of ``young`` and ``poisson``."""
        return np.array(lame_from_young(self.young, self.poisson))

    @property
    def small_strain_lame(self) -> tuple[float, float]:
        """(λ₀, μ₀) [Pa], the Lamé constants of ``young`` and ``poisson``."""
        return lame_from_young(self.young, self.poisson)


@dataclass(frozen=True)
class NeoHookean(Material):
    """Compressible Neo-Hookean material W = μ/2 (I₁ − 3) − μ ln J + λ/2 (ln J)².

    Give either ``young`` and ``poisson``, or ``shear_modulus`` μ and ``bulk_modulus`` κ (then
    λ = κ − 2μ/3). At small strain it reduces to linear elasticity with the same constants.
    """

    shear_modulus: float = 0.0
    lame_lambda: float = 0.0

    def __init__(
        self,
        young: float | None = None,
        poisson: float | None = None,
        density: float | None = None,
        *,
        shear_modulus: float | None = None,
        bulk_modulus: float | None = None,
        damping: float = 0.0,
    ):
        name = "NeoHookean"
        if young is not None or poisson is not None:
            if shear_modulus is not None or bulk_modulus is not None or young is None or poisson is None:
                raise MaterialError(f"{name}: give (young, poisson) or (shear_modulus, bulk_modulus), not a mix")
            lam, mu = _checked_lame(check_positive("young", young, name), check_poisson(poisson, name), name)
        else:
            if shear_modulus is None or bulk_modulus is None:
                raise MaterialError(f"{name}: give (young, poisson) or (shear_modulus, bulk_modulus)")
            mu = check_positive("shear_modulus", shear_modulus, name)
            kappa = check_positive("bulk_modulus", bulk_modulus, name)
            lam = kappa - 2.0 * mu / 3.0
        if density is None:
            raise MaterialError(f"{name}: density is required")
        object.__setattr__(self, "shear_modulus", mu)
        object.__setattr__(self, "lame_lambda", lam)
        object.__setattr__(self, "density", check_positive("density", density, name))
        object.__setattr__(self, "damping", check_damping(damping, name))
        object.__setattr__(self, "kind", NEO_HOOKEAN)

    @property
    def params(self) -> np.ndarray:
        """The law's constants (2,) = (μ, λ) [Pa]: ``shear_modulus`` and ``lame_lambda``."""
        return np.array([self.shear_modulus, self.lame_lambda])

    @property
    def small_strain_lame(self) -> tuple[float, float]:
        """(λ₀, μ₀) = (``lame_lambda``, ``shear_modulus``) [Pa]."""
        return self.lame_lambda, self.shear_modulus


@dataclass(frozen=True)
class MooneyRivlin(Material):
    """Compressible Mooney–Rivlin W = c₁₀ (Ī₁ − 3) + c₀₁ (Ī₂ − 3) + κ/2 (J − 1)².

    Parameters
    ----------
    c10, c01 : float
        Deviatoric constants [Pa]; small-strain shear modulus μ₀ = 2 (c₁₀ + c₀₁) must be positive.
    bulk_modulus : float
        κ [Pa], > 0 (the volumetric term is the user's, no Poisson ratio is assumed).
    density : float
        ρ₀ [kg/m³].
    """

    c10: float = 0.0
    c01: float = 0.0
    bulk_modulus: float = 0.0

    def __init__(self, c10: float, c01: float, bulk_modulus: float, density: float, *, damping: float = 0.0):
        name = "MooneyRivlin"
        c10, c01 = _number("c10", c10, name), _number("c01", c01, name)
        if not (math.isfinite(c10) and math.isfinite(c01)) or c10 < 0.0 or c10 + c01 <= 0.0:
            raise MaterialError(f"{name}: need c10 >= 0 and c10 + c01 > 0, got c10={c10!r}, c01={c01!r}")
        object.__setattr__(self, "c10", c10)
        object.__setattr__(self, "c01", c01)
        object.__setattr__(self, "bulk_modulus", check_positive("bulk_modulus", bulk_modulus, name))
        object.__setattr__(self, "density", check_positive("density", density, name))
        object.__setattr__(self, "damping", check_damping(damping, name))
        object.__setattr__(self, "kind", MOONEY_RIVLIN)

    @property
    def params(self) -> np.ndarray:
        """The law's constants (3,) = (c₁₀, c₀₁, κ) [Pa]."""
        return np.array([self.c10, self.c01, self.bulk_modulus])

    @property
    def small_strain_lame(self) -> tuple[float, float]:
        """(λ₀, μ₀) [Pa] with μ₀ = 2 (c₁₀ + c₀₁) and λ₀ = κ − 2μ₀/3."""
        mu = 2.0 * (self.c10 + self.c01)
        return self.bulk_modulus - 2.0 * mu / 3.0, mu
