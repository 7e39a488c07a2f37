"""User hyperelastic materials: a strain energy W written with sympy, stress and tangent derived symbolically.

W is given as a function of the invariants, W(I₁, I₂, J) with I₁ = tr C, I₂ = ½ (I₁² − C : C), J = det F; or split
into an isochoric and a volumetric part, W = W_iso(Ī₁, Ī₂) + W_vol(J) with Ī₁ = J^(−2/3) I₁, Ī₂ = J^(−4/3) I₂; or
as a function W(C) of the symmetric right Cauchy–Green tensor (also anisotropic laws). The second Piola–Kirchhoff
stress S = 2 ∂W/∂C and the material tangent D = 2 ∂S/∂C are derived by sympy — no finite differences — and compiled
(:mod:`flexbody.fem.energy_codegen`) into the element kernels of the built-in laws: internal force, tangent,
Kelvin–Voigt damping matrix and strain energy, in [DE-104] exactly as for :class:`~flexbody.NeoHookean`.

Checked once, at construction (:class:`~flexbody.MaterialError` naming the law and the culprit): W must evaluate on
sympy symbols to a sympy expression of its variables and the declared parameters only, every declared parameter
must appear in it, parameters must be finite and non-negative, density positive, and at the reference C = I the
stress must vanish (stress-free reference) and the 6 × 6 Voigt tangent be positive definite.
"""

from __future__ import annotations

import inspect
import logging
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from ..errors import MaterialError
from . import energy_codegen
from .materials import (
    USER_INVARIANTS,
    USER_TENSOR,
    VOIGT,
    Material,
    check_damping,
    check_poisson,
    check_positive,
    lame_from_young,
)

log = logging.getLogger(__name__)

STRESS_FREE_TOL = 1e-10
"""Largest |S(I)| relative to the largest eigenvalue of the Voigt tangent D(I) accepted as a stress-free reference."""


@dataclass(frozen=True, repr=False)
class Hyperelastic(Material):
    """A hyperelastic material of strain energy W(I₁, I₂, J) [J/m³] written with sympy operations.

    :meth:`split` takes W as W_iso(Ī₁, Ī₂) + W_vol(J), :meth:`from_cauchy_green` as W(C).

    Parameters
    ----------
    psi : callable
        ``psi(I1, I2, J, **parameters)`` returning W as a sympy expression (use ``sympy.log``, ``sympy.sqrt``,
        ``sympy.Rational``, … — not ``math`` or ``numpy``). I₁ = tr C, I₂ = ½ (I₁² − C : C) [-], J = det F [-];
        the parameters arrive as sympy symbols named by ``parameters`` (psi may name only those it uses, or take
        ``**parameters``), so the law is compiled once per structure and reused for any values.
    density : float
        Reference density ρ₀ [kg/m³], > 0.
    parameters : mapping of str to float, optional
        The law's constants by name (e.g. ``{"mu": 4.225e5, "kappa": 1.83e6}``) [their units, Pa for moduli],
        finite and >= 0 (write a negative constant as ``-c`` in psi).
    damping : float, optional
        Kelvin–Voigt retardation time β [s]; the viscous stress is β D₀ : Ė.
    name : str, optional
        Label used in messages.
    small_strain : (float, float), optional
        (Young's modulus [Pa], Poisson's ratio) of the isotropic D₀ of the viscous stress; default: the Lamé
        constants λ₀ = D_0011, μ₀ = D_0101 of the law's own tangent at C = I.

    Attributes
    ----------
    energy : sympy.Expr
        W in the symbols ``variables`` and the parameter symbols.
    variables : tuple of sympy.Symbol
        (I1, I2, J), or the six entries (c00, c11, c22, c12, c02, c01) of C for :meth:`from_cauchy_green`.
    parameters : tuple of (str, float)
        The parameters in the order of :attr:`params`.

    Examples
    --------
    >>> import sympy as sp
    >>> nh = Hyperelastic(lambda I1, I2, J, mu, lam: mu / 2 * (I1 - 3) - mu * sp.log(J) + lam / 2 * sp.log(J)**2,
    ...                   density=1000.0, parameters={"mu": 1e6, "lam": 2e6})
    """

    name: str = "hyperelastic"
    energy: object = None
    variables: tuple = ()
    parameters: tuple = ()
    small_strain: tuple | None = field(default=None, compare=False)
    _lame0: tuple = field(default=(0.0, 0.0), compare=False)

    def __init__(
        self,
        psi: Callable,
        *,
        density: float,
        parameters: Mapping[str, float] | None = None,
        damping: float = 0.0,
        name: str = "hyperelastic",
        small_strain: tuple[float, float] | None = None,
    ):
        import sympy as sp

        I1, I2, J = sp.symbols("I1 I2 J", positive=True)
        self._setup(
            USER_INVARIANTS,
            (I1, I2, J),
            lambda symbols: _evaluate(psi, (I1, I2, J), symbols, name, "psi"),
            density,
            parameters,
            damping,
            name,
            small_strain,
        )

    @classmethod
    def split(
        cls,
        isochoric: Callable,
        volumetric: Callable,
        *,
        density: float,
        parameters: Mapping[str, float] | None = None,
        damping: float = 0.0,
        name: str = "hyperelastic",
        small_strain: tuple[float, float] | None = None,
    ) -> Hyperelastic:
        """W = W_iso(Ī₁, Ī₂) + W_vol(J), Ī₁ = J^(−2/3) I₁, Ī₂ = J^(−4/3) I₂ (isochoric/volumetric split).

        ``isochoric(I1bar, I2bar, **parameters)`` and ``volumetric(J, **parameters)`` return sympy expressions;
        the other arguments are those of :class:`Hyperelastic`.
        """
        import sympy as sp

        I1, I2, J = sp.symbols("I1 I2 J", positive=True)
        bars = (J ** sp.Rational(-2, 3) * I1, J ** sp.Rational(-4, 3) * I2)

        def energy(symbols):
            return _evaluate(isochoric, bars, symbols, name, "isochoric") + _evaluate(
                volumetric, (J,), symbols, name, "volumetric"
            )

        law = cls.__new__(cls)
        law._setup(USER_INVARIANTS, (I1, I2, J), energy, density, parameters, damping, name, small_strain)
        return law

    @classmethod
    def from_cauchy_green(
        cls,
        psi: Callable,
        *,
        density: float,
        parameters: Mapping[str, float] | None = None,
        damping: float = 0.0,
        name: str = "hyperelastic",
        small_strain: tuple[float, float] | None = None,
    ) -> Hyperelastic:
        """W(C) of the right Cauchy–Green tensor: ``psi(C, **parameters)`` with C a symmetric 3 × 3 sympy Matrix.

        For anisotropic laws (e.g. fibre terms (a·C a − 1)²) the isotropic small-strain D₀ of the viscous stress
        takes λ₀ = D_0011 and μ₀ = D_0101 of D(I) unless ``small_strain`` is given. Other arguments as
        :class:`Hyperelastic`.
        """
        import sympy as sp

        c = sp.symbols("c00 c11 c22 c12 c02 c01", real=True)
        C = sp.Matrix([[c[0], c[5], c[4]], [c[5], c[1], c[3]], [c[4], c[3], c[2]]])
        law = cls.__new__(cls)
        law._setup(
            USER_TENSOR,
            c,
            lambda symbols: _evaluate(psi, (C,), symbols, name, "psi"),
            density,
            parameters,
            damping,
            name,
            small_strain,
        )
        return law

    # ------------------------------------------------------------------ construction
    def _setup(self, kind, variables, energy_of, density, parameters, damping, name, small_strain) -> None:
        """Validate, derive, compile and check the law (the body of every constructor)."""
        import sympy as sp

        if not isinstance(name, str) or not name:
            raise MaterialError(f"Hyperelastic: name must be a non-empty string, got {name!r}")
        label = f"Hyperelastic {name!r}"
        object.__setattr__(self, "density", check_positive("density", density, label))
        object.__setattr__(self, "damping", check_damping(damping, label))
        values = _checked_parameters(parameters, label)
        symbols = {key: sp.Symbol(key) for key in values}
        W = energy_of(symbols)
        _check_symbols(W, variables, symbols, label)
        if kind == USER_INVARIANTS:
            exprs = energy_codegen.invariant_derivatives(W, *variables)
        else:
            exprs = energy_codegen.tensor_derivatives(W, variables)
        try:
            law = energy_codegen.compile_law(energy_codegen.law_source(exprs, kind, variables, tuple(symbols.values())))
        except MaterialError as exc:
            raise MaterialError(f"{label}: {exc}") from exc
        for key, value in (
            ("name", name),
            ("energy", W),
            ("variables", tuple(variables)),
            ("parameters", tuple(values.items())),
            ("kind", kind),
            ("law", law),
            ("small_strain", None if small_strain is None else tuple(small_strain)),
        ):
            object.__setattr__(self, key, value)
        object.__setattr__(self, "_lame0", self._checked_reference(label))

    def _checked_reference(self, label: str) -> tuple[float, float]:
        """(λ₀, μ₀) [Pa] after checking S(I) = 0 and a positive definite Voigt tangent D(I)."""
        S, D = self.pk2_stress_and_moduli(np.eye(3))
        if not (np.all(np.isfinite(S)) and np.all(np.isfinite(D))):
            raise MaterialError(
                f"{label}: stress or tangent not finite at the reference configuration C = I (S = {S.tolist()})"
            )
        voigt = np.array([[D[i, j, k, m] for k, m in VOIGT] for i, j in VOIGT])
        eigenvalues = np.linalg.eigvalsh(0.5 * (voigt + voigt.T))
        scale = np.abs(eigenvalues).max()
        if np.abs(S).max() > STRESS_FREE_TOL * scale:
            stress = np.array2string(S, precision=4, separator=", ").replace("\n", "")
            raise MaterialError(
                f"{label}: the reference configuration is not stress-free: S(C = I) = {stress} Pa "
                "(add a term that cancels it, e.g. −μ ln J next to μ/2 (I₁ − 3))"
            )
        offset = float(self.strain_energy_density(np.eye(3)))
        if abs(offset) > STRESS_FREE_TOL * scale:
            log.warning(
                "%s: the strain energy is not zero at the reference configuration: W(I) = %.6g J/m³; the strain "
                "energies reported include W(I) times the volume (forces and stiffness are unaffected); subtract "
                "the constant to make W(I) = 0",
                label,
                offset,
            )
        if not eigenvalues.min() > STRESS_FREE_TOL * scale:
            raise MaterialError(
                f"{label}: the tangent at C = I is not positive definite (negative or zero "
                f"stiffness): eigenvalues of the 6 × 6 Voigt matrix "
                f"{np.array2string(eigenvalues, precision=4, separator=', ')} Pa"
            )
        if self.small_strain is not None:
            young, poisson = self.small_strain
            return lame_from_young(check_positive("small_strain young", young, label), check_poisson(poisson, label))
        return float(D[0, 0, 1, 1]), float(D[0, 1, 0, 1])

    # ------------------------------------------------------------------ Material interface
    @property
    def params(self) -> np.ndarray:
        """The parameter values (k,) in declaration order (the compiled law reads them from this array)."""
        return np.array([value for _, value in self.parameters], dtype=float)

    @property
    def small_strain_lame(self) -> tuple[float, float]:
        """(λ₀, μ₀) [Pa] of the Kelvin–Voigt stress β D₀ : Ė."""
        return self._lame0

    def strain_energy_density(self, F: np.ndarray) -> np.ndarray:
        """W(F) [J/m³] for deformation gradients F (..., 3, 3), evaluated from :attr:`energy` by NumPy (independent
        of the compiled law; NaN where det F <= 0)."""
        import sympy as sp

        F = np.asarray(F, dtype=float)
        C = np.einsum("...ki,...kj->...ij", F, F)
        symbols = tuple(sp.Symbol(key) for key, _ in self.parameters)
        values = [np.full(F.shape[:-2], v) for _, v in self.parameters]
        evaluate = sp.lambdify(self.variables + symbols, self.energy, modules="numpy", dummify=True)
        J = np.linalg.det(F)
        with np.errstate(invalid="ignore", divide="ignore"):
            if self.kind == USER_INVARIANTS:
                I1 = np.trace(C, axis1=-2, axis2=-1)
                I2 = 0.5 * (I1**2 - np.einsum("...ij,...ij->...", C, C))
                W = evaluate(I1, I2, np.where(J > 0, J, np.nan), *values)
            else:
                W = evaluate(*(C[..., i, j] for i, j in VOIGT), *values)
        return np.where(J > 0, W, np.nan)

    def __reduce__(self):
        """Pickle by the energy expression (the compiled law is rebuilt, from numba's cache when it can)."""
        return _rebuilt, (
            self.kind,
            self.variables,
            self.energy,
            dict(self.parameters),
            self.density,
            self.damping,
            self.name,
            self.small_strain,
        )

    def __deepcopy__(self, memo) -> Hyperelastic:
        return self  # immutable

    def __repr__(self) -> str:
        parameters = ", ".join(f"{key}={value:g}" for key, value in self.parameters)
        return (
            f"Hyperelastic({self.name!r}, W = {self.energy}, {parameters}, density={self.density:g}, "
            f"damping={self.damping:g})"
        )


def _rebuilt(kind, variables, energy, parameters, density, damping, name, small_strain) -> Hyperelastic:
    """The Hyperelastic of an unpickled energy expression (see Hyperelastic.__reduce__)."""
    law = Hyperelastic.__new__(Hyperelastic)
    law._setup(kind, variables, lambda symbols: energy, density, parameters, damping, name, small_strain)
    return law


def _checked_parameters(parameters, label: str) -> dict[str, float]:
    """{name: value} with identifier names and finite, non-negative values."""
    if parameters is None:
        return {}
    if not isinstance(parameters, Mapping):
        raise MaterialError(f"{label}: parameters must be a mapping name -> value, got {type(parameters).__name__}")
    values = {}
    for key, given in parameters.items():
        if not isinstance(key, str) or not key.isidentifier():
            raise MaterialError(f"{label}: parameter name {key!r} is not a Python identifier")
        try:
            value = float(given)
        except (TypeError, ValueError):
            raise MaterialError(f"{label}: parameter {key!r} must be a number, got {given!r}") from None
        if not math.isfinite(value) or value < 0.0:
            raise MaterialError(f"{label}: parameter {key!r} must be finite and >= 0, got {value!r}")
        values[key] = value
    return values


def _evaluate(fn: Callable, args: tuple, symbols: dict, label: str, what: str):
    """fn(*args, **parameter symbols it accepts) as a sympy expression, or MaterialError with Python's message."""
    import sympy as sp

    if not callable(fn):
        raise MaterialError(f"Hyperelastic {label!r}: {what} must be callable, got {type(fn).__name__}")
    try:
        accepted = inspect.signature(fn).parameters.values()
        takes_all = any(p.kind == p.VAR_KEYWORD for p in accepted)
        kwargs = symbols if takes_all else {k: v for k, v in symbols.items() if k in {p.name for p in accepted}}
    except (TypeError, ValueError):  # no signature (e.g. a builtin): offer every parameter
        kwargs = symbols
    try:
        result = sp.sympify(fn(*args, **kwargs), strict=True)
    except Exception as exc:
        raise MaterialError(
            f"Hyperelastic {label!r}: {what} is not expressible with sympy operations "
            f"({type(exc).__name__}: {exc}); write it with sympy functions (sympy.log, sympy.sqrt, "
            "…), not math or numpy"
        ) from exc
    if not isinstance(result, sp.Expr) or isinstance(result, sp.MatrixBase):
        raise MaterialError(
            f"Hyperelastic {label!r}: {what} must return a scalar sympy expression, got {type(result).__name__}"
        )
    return result


def _check_symbols(W, variables, symbols: dict, label: str) -> None:
    """W depends on its variables and the declared parameters only, and on every declared parameter."""
    free = W.free_symbols
    undeclared = sorted(str(s) for s in free - set(variables) - set(symbols.values()))
    if undeclared:
        raise MaterialError(
            f"{label}: the strain energy depends on undeclared symbols {', '.join(undeclared)} "
            f"(declared parameters: {', '.join(symbols) or 'none'})"
        )
    unused = [key for key, s in symbols.items() if s not in free]
    if unused:
        raise MaterialError(f"{label}: parameters not used by the strain energy: {', '.join(unused)}")
