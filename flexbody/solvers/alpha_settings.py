"""Settings of the generalized-α integrator (:mod:`flexbody.solvers.generalized_alpha`) and its parameters.

From the spectral radius at infinity ρ∞ ∈ [0, 1] (Chung & Hulbert):

    α_m = (2ρ∞ − 1)/(ρ∞ + 1),    α_f = ρ∞/(ρ∞ + 1),    γ = ½ + α_f − α_m,    β = ¼(γ + ½)²;

ρ∞ = 1 is the trapezoidal rule (no numerical damping); :meth:`GeneralizedAlpha.hht` gives the HHT-α member
(α_m = 0, α_f = α ∈ [0, ⅓]).
"""

from __future__ import annotations

from dataclasses import dataclass

import numba as nb
import numpy as np

from ..errors import FlexbodyError
from ..linalg.validation import check_setting

__all__ = ["GeneralizedAlpha"]


@dataclass(frozen=True, kw_only=True)
class GeneralizedAlpha:
    """Settings of the generalized-α integrator.

    Parameters
    ----------
    dt : float
        Nominal step [s].
    rho_inf : float
        Spectral radius at infinity (1 = no numerical damping).
    alpha_m, alpha_f : float, optional
        Set both to override ρ∞ (e.g. HHT).
    tol : float
        Newton tolerance on the position increment β′h² Δq̈, each coordinate measured in its own unit
        (`newton_scales.increment_scales`: 1 rad for an angle, 1 m for a length, the modal amplitude that
        moves a reduced body by 1 m), never relative to the state, so that it does not loosen as angles wind up, and
        scaled by min(1, h / 1 ms) for steps h below :data:`TOLERANCE_STEP`, so that a smaller step is never less
        accurate (φ itself is not tested: the last increment solves Φ Δq = −φ); and on the residual Φv + φ_t of
        velocity-level (Pfaffian) rows, in m/s or rad/s (with the round-off of ‖v‖∞ as a floor).
    max_iterations : int
        Newton iterations per attempt.
    reuse_rate : float
        Keep the iteration matrix while ‖Δ_k‖/‖Δ_{k−1}‖ stays below it (an attempt that fails with a kept
        matrix only is retried once with a new one before the step is halved).
    dt_min : float
        Smallest step after halvings [s].
    grow_after : int
        Consecutive easy steps (converged within half of ``max_iterations``) before the step is doubled back
        towards ``dt`` — doubled after every halving (at most 64), so a step that keeps failing is not retried
        over and over.
    fd_step : float
        Relative central-difference step of the rigid Jacobian blocks where they are differenced.
    rigid_jacobian : "exact" or "differences"
        How the joint rows' blocks of the iteration matrix are formed: ``"exact"`` (the default) from the trees'
        analytic derivatives and the constraints' Hessians where every term on the joint columns has them (rigid
        trees, attachments; :class:`~flexbody.solvers.constrained_equations.EquationResidual`), else, and with
        ``"differences"``, by central differences of the rows.

    Notes
    -----

    ρ∞ = 1 (the trapezoidal rule) damps nothing, also not the multipliers of index-3 constraint rows: on closed
    loops their error alternates in sign from step to step and grows (a four-bar at dt = 1e-3 s: ‖λ‖ 4 at 2 s,
    2e3 at 4 s, Newton fails at 6 s; ``tests/benchmarks/bench_long_run.py``). Use ρ∞ < 1 (the default 0.9) for
    long runs of constrained systems; a run with rows and ρ∞ = 1 logs a warning.
    """

    dt: float
    rho_inf: float = 0.9
    alpha_m: float | None = None
    alpha_f: float | None = None
    tol: float = 1e-10
    max_iterations: int = 12
    reuse_rate: float = 0.25
    dt_min: float | None = None
    grow_after: int = 4
    fd_step: float = 1e-5
    rigid_jacobian: str = "exact"

    def __post_init__(self):
        who = "GeneralizedAlpha"
        check_setting(who, "dt", self.dt)
        check_setting(who, "rho_inf", self.rho_inf, strict=False, high=1.0)
        if (self.alpha_m is None) != (self.alpha_f is None):
            raise FlexbodyError("GeneralizedAlpha: give both alpha_m and alpha_f, or neither")
        for name in ("alpha_m", "alpha_f") if self.alpha_m is not None else ():
            check_setting(who, name, getattr(self, name), low=-np.inf)
            if getattr(self, name) >= 1.0:
                raise FlexbodyError(f"{who}: {name} must be < 1, got {getattr(self, name)!r}")
        check_setting(who, "tol", self.tol)
        check_setting(who, "max_iterations", self.max_iterations, low=1, strict=False, integer=True)
        check_setting(who, "reuse_rate", self.reuse_rate)
        if self.dt_min is not None:
            check_setting(who, "dt_min", self.dt_min, high=self.dt)
        check_setting(who, "grow_after", self.grow_after, low=1, strict=False, integer=True)
        check_setting(who, "fd_step", self.fd_step)
        if self.rigid_jacobian not in ("exact", "differences"):
            raise FlexbodyError(f"{who}: rigid_jacobian must be 'exact' or 'differences', got {self.rigid_jacobian!r}")

    @classmethod
    def hht(cls, dt: float, alpha: float = 0.1, **kw) -> GeneralizedAlpha:
        """HHT-α (α ∈ [0, ⅓], Hilber–Hughes–Taylor with α = −α_HHT): α_m = 0, α_f = α."""
        if not 0.0 <= alpha <= 1.0 / 3.0:
            raise FlexbodyError(f"GeneralizedAlpha.hht: alpha must be in [0, 1/3], got {alpha!r}")
        return cls(dt=dt, alpha_m=0.0, alpha_f=float(alpha), **kw)

    def parameters(self) -> tuple[float, float, float, float]:
        """(α_m, α_f, γ, β)."""
        if self.alpha_m is None or self.alpha_f is None:  # both or neither (checked when made)
            r = self.rho_inf
            am, af = (2.0 * r - 1.0) / (r + 1.0), r / (r + 1.0)
        else:
            am, af = float(self.alpha_m), float(self.alpha_f)
        gamma = 0.5 + af - am
        return am, af, gamma, 0.25 * (gamma + 0.5) ** 2


#: [s] The step up to which the Newton tolerance holds as given; a smaller step h tests its increments against
#: tol · h / TOLERANCE_STEP, so that the Newton error a run accumulates over its T/h steps does not grow as h shrinks
#: (at a fixed tolerance it did, and a halved step could end less accurate: tests/benchmarks/bench_dt_halving.py).
TOLERANCE_STEP = 1e-3


@nb.njit(cache=True)
def step_tolerance(tol: float, dt: float) -> float:
    """The Newton tolerance of a step dt [s]: tol · min(1, dt / :data:`TOLERANCE_STEP`)."""
    return tol * min(1.0, dt / TOLERANCE_STEP)
