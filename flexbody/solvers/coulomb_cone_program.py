"""The contact problem of :mod:`flexbody.solvers.coulomb_problem` (impulses p (3c,), local velocities u = W p + w,
the Signorini–Coulomb law at every contact) as the fixed point of second-order cone programs (Acary, Cadoux,
Lemaréchal & Malick 2011, "A formulation of the linear discrete Coulomb friction problem via convex optimization"):
with De Saxcé's modified velocity û = u + μ‖u_t‖ e_n, the law is

    K_μ ∋ p ⊥ û ∈ K_μ*,     K_μ = {‖p_t‖ ≤ μ p_n},  K_μ* = {μ‖û_t‖ ≤ û_n},

and for a shift s (c,) held, p solves the convex program  min ½ pᵀW p + (w + s e_n)ᵀp  over p ∈ K_μ, whose
optimality conditions are the law with s in place of μ‖u_t‖; its solution at s = μ‖u_t(p)‖ is the law's. Each
program is solved in its velocity form — with W = L Lᵀ (L (3c, k), k = rank W), min ½‖y‖² subject to
(û_n, μ û_t) ∈ SOC at every contact, û = L y + w + s e_n — whose multipliers z are p = (z_n, μ z_t): its solution
(the velocities) is unique where W is singular (a rigid body pressed on more contacts than it has freedoms, whose
impulses are not), which the impulse form is not. The programs are solved by Clarabel (Goulart & Chen 2024), an
interior-point conic solver; the shift is iterated until it stops changing (it converges in a few programs where the
slip is small; it need not converge in general, and then None is returned).

The impulses come to interior-point accuracy (about 1e-8 of their size): the caller
(:func:`~flexbody.solvers.coulomb_problem.solve_coulomb_polished`) takes their states and makes them exact.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["solve_coulomb_cones"]

MAX_SHIFTS = 30
"""Cone programs at most, each with the shift of the last one's slip."""

SHIFT_TOL = 1e-10
"""The shift's change (relative to the free velocities' size max |w|) below which it has stopped changing."""


def _velocity_factor(W: np.ndarray) -> np.ndarray:
    """L (3c, k) with W = L Lᵀ on W's positive eigenvalues (those above 1e-12 of the largest)."""
    values, vectors = np.linalg.eigh(0.5 * (W + W.T))
    keep = values > 1e-12 * max(float(values.max(initial=0.0)), 1e-300)
    return vectors[:, keep] * np.sqrt(values[keep])


def _cone_program(L: np.ndarray, w: np.ndarray, mu: np.ndarray, shift: np.ndarray):
    """p (3c,) of the cone program with the shift s (c,) held (module docstring), or None where Clarabel reports
    neither a solution nor an almost-solution."""
    import clarabel

    c, k = mu.size, L.shape[1]
    scale = np.ones(3 * c)
    scale[1::3], scale[2::3] = mu, mu  # (û_n, μ û_t) ∈ SOC at every contact
    shifted = w.copy()
    shifted[0::3] += shift
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.tol_gap_abs = settings.tol_gap_rel = settings.tol_feas = 1e-12
    settings.max_iter = 200
    solver = clarabel.DefaultSolver(
        sp.identity(k, format="csc"),
        np.zeros(k),
        sp.csc_matrix(-scale[:, None] * L),
        scale * shifted,
        [clarabel.SecondOrderConeT(3)] * c,
        settings,
    )
    solution = solver.solve()
    if str(solution.status) not in ("Solved", "AlmostSolved"):
        return None
    return scale * np.asarray(solution.z)


def solve_coulomb_cones(W: np.ndarray, w: np.ndarray, mu: np.ndarray) -> np.ndarray | None:
    """The impulses p (3c,) of the contact problem W (3c, 3c), w (3c,), mu (c,) by cone programs on the De Saxcé
    shift (module docstring), or None where a program fails or the shift does not settle in :data:`MAX_SHIFTS`."""
    if not mu.size:
        return np.zeros(0)
    L = _velocity_factor(W)
    if not L.shape[1]:
        return None
    shift = np.zeros(mu.size)
    size = max(float(np.abs(w).max(initial=0.0)), 1e-300)
    for _ in range(MAX_SHIFTS):
        p = _cone_program(L, w, mu, shift)
        if p is None:
            return None
        u = W @ p + w
        slip = mu * np.hypot(u[1::3], u[2::3])
        if np.abs(slip - shift).max() <= SHIFT_TOL * size:
            return p
        shift = slip
    return None
