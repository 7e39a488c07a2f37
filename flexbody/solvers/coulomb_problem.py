"""The contact problem of one nonsmooth step: impulses p (3c,) of c contacts, each (p_n, p_t₁, p_t₂) in its
contact frame, with the local velocities u = W p + w (W (3c, 3c) the Delassus matrix G A⁻¹ Gᵀ of the step, w the
free local velocities shifted by the step's normal bounds), such that at every contact

    0 ≤ p_n ⊥ u_n ≥ 0,    ‖p_t‖ ≤ μ p_n,    u_t ≠ 0 ⇒ p_t = −μ p_n u_t/‖u_t‖           (Signorini–Coulomb)

— the exact Coulomb law (De Saxcé's bipotential form), not the convex relaxation that lifts sliding bodies off.

Solved by nonsmooth (projected) Gauss–Seidel (Jean 1999; Acary & Brogliato 2008, ch. 12): contact after contact,
the local 3 × 3 problem with the others' impulses held is solved exactly — take-off when the free normal velocity
separates, sticking when the impulse that stops the contact lies in the cone, otherwise sliding on the cone's
boundary, whose slip direction θ (d = (cos θ, sin θ)) solves u_t(θ) × d = 0 with u_t·d > 0 by Newton's method
(from a fixed-point start, with p_n(θ) = −r_n/(W_nn − μ W_nt d) keeping u_n = 0). Sweeps repeat until no impulse
changes by more than ``tol`` × max ‖p‖∞. Compiled (numba); warm-started from the last step's impulses.

Where the sweeps stall — a direction that W nearly ignores, as two friction impulses squeezing a stiff body between
its contacts, along which Gauss–Seidel creeps; or a rigid body pressed on more contacts than it has freedoms (a box
on four corners: W of rank 6 for 12 rows) whose bounds no one velocity meets at once, so that one contact must
leave, along which it drifts — :func:`solve_coulomb_polished` looks for impulses that meet the law
(:func:`law_residual`, :func:`meets_the_law`) among candidates, each made exact for the contacts' states (apart:
p = 0; sticking: u = 0; sliding: u_n = 0 with p_t on the cone against the slip): the linear equations of the states
by least squares (:func:`polished`), the sliding directions by Newton's method (:func:`made_exact`), and where the
impulses are not unique, those inside the cones (:func:`_into_cones`). The states are those of a cone program's
solution (:mod:`flexbody.solvers.coulomb_cone_program`, Clarabel), then other choices for the contacts in play
(:func:`_polish_states`), then sticking contacts of the best candidate that slip let slide (:func:`_slipping`); the
sweeps run again from each, which confirms it (or not).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numba as nb
import numpy as np

__all__ = [
    "solve_coulomb",
    "solve_coulomb_coupled",
    "polished",
    "made_exact",
    "contact_states",
    "meets_the_law",
    "solve_coulomb_polished",
    "CoulombSolution",
    "law_residual",
]

SHORT_ROW = 48
"""Coupled entries of a row of W up to which the sweep sums them in a loop rather than by BLAS's dot."""

LOCAL_NEWTON = 40
"""Newton iterations of a sliding contact's slip direction."""


@nb.njit(cache=True)
def _sliding(A, r, mu, theta):
    """(p_n, F, u_t·d, den) of a contact sliding along d = (cos θ, sin θ) with u_n = 0: p_n = −r_n/den,
    den = A_nn − μ A_nt d, and F = u_t × d (zero where the slip is along d)."""
    c, s = math.cos(theta), math.sin(theta)
    den = A[0, 0] - mu * (A[0, 1] * c + A[0, 2] * s)
    p_n = -r[0] / den if den > 0.0 else 0.0
    ut0 = p_n * (A[1, 0] - mu * (A[1, 1] * c + A[1, 2] * s)) + r[1]
    ut1 = p_n * (A[2, 0] - mu * (A[2, 1] * c + A[2, 2] * s)) + r[2]
    return p_n, ut0 * s - ut1 * c, ut0 * c + ut1 * s, den


@nb.njit(cache=True)
def _valid(A, r, mu, theta) -> bool:
    p_n, F, dot, den = _sliding(A, r, mu, theta)
    scale = abs(r[1]) + abs(r[2]) + abs(dot)
    return den > 0.0 and p_n >= 0.0 and dot > 0.0 and abs(F) <= 1e-10 * scale


@nb.njit(cache=True)
def _newton(A, r, mu, theta):
    """θ after Newton's iterations on F(θ) = 0 (central-difference slope) from ``theta``."""
    for _ in range(LOCAL_NEWTON):
        F = _sliding(A, r, mu, theta)[1]
        d = 1e-7
        slope = (_sliding(A, r, mu, theta + d)[1] - _sliding(A, r, mu, theta - d)[1]) / (2.0 * d)
        if slope == 0.0:
            break
        step = F / slope
        theta -= step
        if abs(step) <= 1e-15:
            break
    return theta


@nb.njit(cache=True)
def _slip(A, r, mu, d0, d1):
    """(p_n, d₀, d₁, ok): a contact sliding on its cone with the others held — local matrix A (3, 3), free
    local velocity r (3,) — from the slip direction guess (d₀, d₁); ok False when no such slip was found. Newton from
    the guess; failing that, the roots of F on a scan of the circle (bisection), the one nearest the guess."""
    guess = math.atan2(d1, d0)
    theta = _newton(A, r, mu, guess)
    if not _valid(A, r, mu, theta):
        best, found = math.inf, False
        samples = 72
        for k in range(samples):
            lo, hi = -math.pi + 2.0 * math.pi * k / samples, -math.pi + 2.0 * math.pi * (k + 1) / samples
            f_lo, f_hi = _sliding(A, r, mu, lo)[1], _sliding(A, r, mu, hi)[1]
            if f_lo * f_hi > 0.0:
                continue
            for _ in range(60):
                mid = 0.5 * (lo + hi)
                f_mid = _sliding(A, r, mu, mid)[1]
                if f_lo * f_mid <= 0.0:
                    hi = mid
                else:
                    lo, f_lo = mid, f_mid
            root = _newton(A, r, mu, 0.5 * (lo + hi))
            if _valid(A, r, mu, root):
                distance = 1.0 - math.cos(root - guess)  # grows with the angle between them
                if distance < best:
                    best, theta, found = distance, root, True
        if not found:
            return 0.0, math.cos(theta), math.sin(theta), False
    p_n = _sliding(A, r, mu, theta)[0]
    return p_n, math.cos(theta), math.sin(theta), True


@nb.njit(cache=True)
def _stick(A, r):
    """−A⁻¹r (a 3-tuple) by Cramer's rule; the least-squares −A⁺r where A is singular (a direction that cannot move,
    as the normal to a planar model's plane)."""
    c00 = A[1, 1] * A[2, 2] - A[1, 2] * A[2, 1]
    c01 = A[1, 2] * A[2, 0] - A[1, 0] * A[2, 2]
    c02 = A[1, 0] * A[2, 1] - A[1, 1] * A[2, 0]
    det = A[0, 0] * c00 + A[0, 1] * c01 + A[0, 2] * c02
    if abs(det) <= 1e-12 * abs(A[0, 0] * A[1, 1] * A[2, 2]):
        x = -(np.linalg.pinv(A) @ r)
        return x[0], x[1], x[2]
    i01 = A[0, 2] * A[2, 1] - A[0, 1] * A[2, 2]
    i11 = A[0, 0] * A[2, 2] - A[0, 2] * A[2, 0]
    i21 = A[0, 1] * A[2, 0] - A[0, 0] * A[2, 1]
    i02 = A[0, 1] * A[1, 2] - A[0, 2] * A[1, 1]
    i12 = A[0, 2] * A[1, 0] - A[0, 0] * A[1, 2]
    i22 = A[0, 0] * A[1, 1] - A[0, 1] * A[1, 0]
    return (
        -(c00 * r[0] + i01 * r[1] + i02 * r[2]) / det,
        -(c01 * r[0] + i11 * r[1] + i12 * r[2]) / det,
        -(c02 * r[0] + i21 * r[1] + i22 * r[2]) / det,
    )


@nb.njit(cache=True)
def _local(A, r, mu, p):
    """Solve contact's local problem u = A p + r (module docstring) into p (3,), starting from p's old value."""
    if r[0] >= 0.0 or A[0, 0] <= 0.0:  # it separates with the others' impulses alone (take-off), or cannot move
        p[0] = p[1] = p[2] = 0.0
        return
    if mu == 0.0:
        p[0], p[1], p[2] = -r[0] / A[0, 0], 0.0, 0.0
        return
    stick = _stick(A, r)
    if stick[0] > 0.0 and stick[1] ** 2 + stick[2] ** 2 <= (mu * stick[0]) ** 2:
        p[0], p[1], p[2] = stick[0], stick[1], stick[2]
        return
    norm = math.hypot(stick[1], stick[2])
    d0, d1 = (-stick[1] / norm, -stick[2] / norm) if norm > 0.0 else (1.0, 0.0)
    old = math.hypot(p[1], p[2])
    if old > 0.0:  # the last slip direction (opposite the friction) where it slid before
        d0, d1 = -p[1] / old, -p[2] / old
    p_n, d0, d1, ok = _slip(A, r, mu, d0, d1)
    if not ok:  # the sliding state has no solution here: the cone's point nearest the sticking impulse
        p_n, d0, d1 = max(stick[0], 0.0), -stick[1] / max(norm, 1e-300), -stick[2] / max(norm, 1e-300)
    p[0], p[1], p[2] = p_n, -mu * p_n * d0, -mu * p_n * d1


@nb.njit(cache=True)
def solve_coulomb(W, w, mu, p, tol, max_sweeps):
    """Nonsmooth Gauss–Seidel on the contact problem (module docstring): W (3c, 3c), w (3c,), mu (c,); p (3c,) the
    warm start, overwritten by the impulses. Returns (sweeps, change): the sweeps made and the last sweep's largest
    impulse change relative to max ‖p‖∞ (≤ ``tol`` when converged)."""
    c = mu.size
    return solve_coulomb_coupled(W, w, mu, p, tol, max_sweeps, np.zeros(c, np.int64), np.full(c, c, np.int64))


@nb.njit(cache=True)
def solve_coulomb_coupled(W, w, mu, p, tol, max_sweeps, lo, hi):
    """:func:`solve_coulomb` where contact i couples with the contacts lo[i] … hi[i] − 1 alone (W's other entries of
    its rows are zero and not read)."""
    c = mu.size
    A = np.empty((3, 3))
    r = np.empty(3)
    pi = np.empty(3)
    change = math.inf
    for sweep in range(1, max_sweeps + 1):
        largest = 0.0
        size = 0.0
        for i in range(c):
            a, start, stop = 3 * i, 3 * lo[i], 3 * hi[i]
            for k in range(3):
                if stop - start > SHORT_ROW:
                    r[k] = w[a + k] + W[a + k, start:stop] @ p[start:stop]
                else:  # a loop costs less than the call of BLAS
                    total = w[a + k]
                    for j in range(start, stop):
                        total += W[a + k, j] * p[j]
                    r[k] = total
                for m in range(3):
                    A[k, m] = W[a + k, a + m]
                r[k] -= A[k, 0] * p[a] + A[k, 1] * p[a + 1] + A[k, 2] * p[a + 2]
                pi[k] = p[a + k]
            _local(A, r, mu[i], pi)
            for k in range(3):
                largest = max(largest, abs(pi[k] - p[a + k]))
                p[a + k] = pi[k]
                size = max(size, abs(pi[k]))
        change = largest / size if size > 0.0 else largest
        if change <= tol:
            return sweep, change
    return max_sweeps, change


APART, STICK, SLIDE = 0, 1, 2
"""A contact's states in a polish."""


def contact_states(mu: np.ndarray, p: np.ndarray, accuracy: float = 0.0) -> np.ndarray:
    """The states (c,) of the contacts at the impulses p (3c,) known to a relative ``accuracy`` (0 for a Gauss–Seidel
    iterate, whose contacts apart have no normal impulse at all): apart with a normal impulse within it of zero
    (relative to the largest), sliding with their friction on the cone (within 1e-9, or the accuracy), sticking
    inside it."""
    P = p.reshape(-1, 3)
    friction = np.hypot(P[:, 1], P[:, 2])
    states = np.where(friction < mu * P[:, 0] * (1.0 - max(accuracy, 1e-9)), STICK, SLIDE)
    nil = accuracy * float(np.abs(P[:, 0]).max(initial=0.0))
    return np.where(P[:, 0] > nil, states, APART)


def polished(W: np.ndarray, w: np.ndarray, mu: np.ndarray, p: np.ndarray, states: np.ndarray | None = None):
    """The impulses (3c,) that the contacts' ``states`` (c,) (by default those at the iterate p (3c,),
    :func:`contact_states`) make exact (module docstring): for each sticking contact u_i = W_i p + w_i = 0 (three
    unknowns), for each sliding one u_n = 0 with p_t = μ p_n f̂ (one unknown; f̂ its friction's direction at p, or
    against its slip there where it has none; without friction p_t = 0), the contacts apart at zero; the equations
    solved by least squares, the solution moved into the cones where it is not unique (:func:`_into_cones`)."""
    states = contact_states(mu, p) if states is None else states
    B, x = _least_squares(W, w, mu, p, states)
    return _into_cones(W, B, x, mu, states) if B.shape[1] else np.zeros_like(p)


def _least_squares(W: np.ndarray, w: np.ndarray, mu: np.ndarray, p: np.ndarray, states: np.ndarray):
    """(B (3c, k), x (k,)): the columns of :func:`_columns` and the least-squares solution of their equations."""
    B, equations = _columns(W, w, mu, p, states)
    if not B.shape[1]:
        return B, np.zeros(0)
    return B, np.linalg.lstsq((W @ B)[equations], -w[equations], rcond=1e-12)[0]


def _columns(W: np.ndarray, w: np.ndarray, mu: np.ndarray, p: np.ndarray, states: np.ndarray):
    """(B (3c, k), equations (k,)): the impulses p = B x that the contacts' ``states`` (c,) allow — three columns
    (e₁, e₂, e₃) for a sticking contact, one for a sliding one (e_n + μ f̂, f̂ the direction of its friction at p, or
    against its slip there where it has none) — and the rows of u = W p + w that they set to zero (u_i of a sticking
    contact, u_n of a sliding one)."""
    c = mu.size
    P = p.reshape(c, 3)
    u = W @ p + w
    columns, equations = [], []
    for i in range(c):
        if states[i] == STICK:
            for k in range(3):
                column = np.zeros(3 * c)
                column[3 * i + k] = 1.0
                columns.append(column)
                equations.append(3 * i + k)
        elif states[i] == SLIDE:
            column = np.zeros(3 * c)
            column[3 * i] = 1.0
            friction, slip = float(np.hypot(P[i, 1], P[i, 2])), float(np.hypot(u[3 * i + 1], u[3 * i + 2]))
            if mu[i] > 0.0 and friction > 0.0:
                column[3 * i + 1 : 3 * i + 3] = mu[i] * P[i, 1:] / friction
            elif mu[i] > 0.0 and slip > 0.0:
                column[3 * i + 1 : 3 * i + 3] = -mu[i] * u[3 * i + 1 : 3 * i + 3] / slip
            columns.append(column)
            equations.append(3 * i)
    B = np.column_stack(columns) if columns else np.zeros((3 * c, 0))
    return B, np.array(equations, dtype=np.int64)


CONE_FACETS = 16
"""Facets of the polygon inscribed in each friction cone's circle that :func:`_into_cones` keeps a friction inside."""

CONE_MARGIN = 1e-6
"""Relative margin by which :func:`_into_cones` keeps impulses inside their bounds (its LP's tolerance is 1e-9)."""


def _into_cones(W: np.ndarray, B: np.ndarray, x: np.ndarray, mu: np.ndarray, states: np.ndarray) -> np.ndarray:
    """The impulses B x (3c,) of the states' columns B (3c, k) (:func:`_columns`), moved where that changes no
    velocity u = W p + w (a rigid body pressed redundantly: the null space of W B) the least (1-norm) that puts
    every sticking friction inside its cone and every normal impulse at or above zero, or B x where that holds
    already or cannot be had. A linear program (scipy's HiGHS): each cone's circle ‖p_t‖ ≤ μ p_n replaced by the
    polygon of :data:`CONE_FACETS` facets inscribed in it, shrunk by :data:`CONE_MARGIN`."""
    from scipy.linalg import null_space
    from scipy.optimize import linprog

    p = B @ x
    P = p.reshape(-1, 3)
    pressing = np.flatnonzero(states != APART)
    sticking = np.flatnonzero(states == STICK)
    in_cones = np.all(np.hypot(P[sticking, 1], P[sticking, 2]) <= mu[sticking] * P[sticking, 0])
    if in_cones and np.all(P[pressing, 0] >= 0.0):
        return p
    N = null_space(W @ B, rcond=1e-10)
    if not N.shape[1]:
        return p
    scale = float(np.abs(p).max(initial=0.0)) or 1.0
    D = B @ N / scale  # the impulses' change per unit of z, in units of the impulses' size
    angles = 2.0 * np.pi * np.arange(CONE_FACETS) / CONE_FACETS
    facets = np.column_stack([np.cos(angles), np.sin(angles)])
    reach = (1.0 - CONE_MARGIN) * math.cos(np.pi / CONE_FACETS)
    rows, bounds = [], []
    for i in sticking:  # d_k · p_t − μ reach p_n ≤ 0 at every facet k
        rows.append(facets @ D[3 * i + 1 : 3 * i + 3] - mu[i] * reach * D[3 * i])
        bounds.append(mu[i] * reach * P[i, 0] - facets @ P[i, 1:])
    rows.append(-D[3 * pressing])  # p_n ≥ margin
    bounds.append(P[pressing, 0] - CONE_MARGIN * scale)
    A = np.vstack(rows)
    b = np.concatenate(bounds) / scale
    k = N.shape[1]  # z = z⁺ − z⁻, minimise Σ z⁺ + z⁻
    fit = linprog(np.ones(2 * k), A_ub=np.hstack([A, -A]), b_ub=b, bounds=(0.0, None), method="highs")
    if fit.status != 0:
        return p
    return p + D @ (fit.x[:k] - fit.x[k:]) * scale


CONFIRMING_SWEEPS = 100
"""Sweeps that may confirm the impulses :func:`polished` made exact."""

MAX_ENUMERATED = 4
"""Contacts in play (pressed, or pressing in) up to which every choice of their states is polished."""

MAX_RELEASED = 8
"""With more in play, the least pressed contacts that are released one at a time."""


def _polish_states(
    W: np.ndarray, w: np.ndarray, mu: np.ndarray, p: np.ndarray, accuracy: float = 0.0
) -> list[np.ndarray]:
    """The states that :func:`solve_coulomb_polished` polishes in turn from impulses p (3c,) (a stalled iterate, or
    a cone program's known to a relative ``accuracy``; :func:`contact_states`): those of the impulses, then — for
    the contacts in play (pressed, or apart with the surface closing in) — every choice of apart, sticking and
    sliding for up to :data:`MAX_ENUMERATED` of them, nearest the iterate's first (a redundant set of contacts whose
    bounds no velocity meets at once leaves one of them; one on its cone may stick or slide), or else each of the
    :data:`MAX_RELEASED` least pressed released in turn."""
    base = contact_states(mu, p, accuracy)
    u_n = (W @ p + w)[0::3]
    playing = np.flatnonzero((base != APART) | (u_n < 0.0))
    if playing.size <= MAX_ENUMERATED:
        choices = []
        for code in range(3**playing.size):
            states = base.copy()
            for k, i in enumerate(playing):
                states[i] = (code // 3**k) % 3
            choices.append(states)
    else:  # many: the iterate's, and each of the least pressed released
        choices = [base]
        P = p.reshape(-1, 3)
        for i in playing[np.argsort(P[playing, 0])][:MAX_RELEASED]:
            released = base.copy()
            released[i] = APART
            choices.append(released)
    return sorted(choices, key=lambda states: int(np.count_nonzero(states != base)))


def made_exact(
    W: np.ndarray, w: np.ndarray, mu: np.ndarray, p: np.ndarray, states: np.ndarray, fitted: bool = False
) -> np.ndarray:
    """The impulses (3c,) that make the contacts' ``states`` (c,) exact, with every sliding contact's friction on its
    cone against the slip it makes, from p (3c,) (a :func:`polished` one, or a cone program's): for the sliding
    contacts' friction directions d_k = (cos θ_k, sin θ_k) the linear equations of :func:`polished` give the impulses
    p(θ) (p_t = −μ p_n d_k), and Newton's method (a central-difference slope, steps halved until the residual falls)
    solves u_t,k(θ) × d_k = 0 for the θ_k (u = W p(θ) + w), from the friction directions p has. Solving for the
    directions alone, with the impulses exact at each, keeps its steps from the curvature of p_t in θ that a Newton
    step on impulses and directions together meets where a slip is slow (its direction then changes the impulses
    much and the residual little). Where ``fitted`` and Newton's method stops short of the directions (its residual
    above :data:`ROUND_OFF` of the velocities: a contact sliding at 1e-9 of them, the slope of its residual that
    small), scipy's Levenberg–Marquardt (MINPACK) solves them from the start instead. Whether the slip is along d,
    not against it, and the impulses in their cones, :func:`meets_the_law` checks."""
    sliding = np.flatnonzero((states == SLIDE) & (mu > 0.0))
    if not sliding.size:  # linear equations
        return polished(W, w, mu, p, states)
    start = p.reshape(-1, 3)
    theta = np.arctan2(-start[sliding, 2], -start[sliding, 1])
    u_start = (W @ p + w).reshape(-1, 3)[sliding]
    no_friction = np.hypot(start[sliding, 1], start[sliding, 2]) == 0.0
    theta[no_friction] = np.arctan2(u_start[no_friction, 2], u_start[no_friction, 1])
    start_theta = theta.copy()

    def impulses(theta: np.ndarray, into_cones: bool = False) -> np.ndarray:
        q = p.copy()
        q[3 * sliding + 1], q[3 * sliding + 2] = -np.cos(theta), -np.sin(theta)  # the friction's direction
        B, x = _least_squares(W, w, mu, q, states)
        return _into_cones(W, B, x, mu, states) if into_cones else B @ x

    def residual(theta: np.ndarray) -> np.ndarray:
        u = W @ impulses(theta) + w
        return u[3 * sliding + 1] * np.sin(theta) - u[3 * sliding + 2] * np.cos(theta)

    F = residual(theta)
    for _ in range(NEWTON_STEPS):
        slope = np.empty((sliding.size, sliding.size))
        for k in range(sliding.size):
            nudge = np.zeros(sliding.size)
            nudge[k] = DIRECTION_NUDGE
            slope[:, k] = (residual(theta + nudge) - residual(theta - nudge)) / (2.0 * DIRECTION_NUDGE)
        step_theta = np.linalg.lstsq(slope, -F, rcond=1e-12)[0]
        step = 1.0
        while step >= 1e-4:
            F_trial = residual(theta + step * step_theta)
            if np.linalg.norm(F_trial) < np.linalg.norm(F):
                break
            step *= 0.5
        else:
            break
        theta, F = theta + step * step_theta, F_trial
        if np.abs(step * step_theta).max() <= 1e-14:
            break
    if fitted and np.abs(F).max() > ROUND_OFF * np.abs(w).max():  # Newton stopped short: Levenberg–Marquardt
        from scipy.optimize import least_squares

        fit = least_squares(residual, start_theta, method="lm", xtol=1e-15, ftol=1e-15, gtol=1e-15)
        if np.linalg.norm(fit.fun) < np.linalg.norm(F):
            theta = fit.x
    return impulses(theta, into_cones=True)


NEWTON_STEPS = 30
"""Newton steps of :func:`made_exact` at most."""

ROUND_OFF = 1e-14
"""The part of the velocities below which :func:`made_exact`'s residual of the sliding directions counts as solved."""

DIRECTION_NUDGE = 1e-5
"""The friction directions' central difference [rad] in :func:`made_exact`: large enough that the residual's change
stands above its round-off where a slip is slow (its slope is the slip itself, down to 1e-10 of the velocities)."""


LAW_TOL = 1e-9
"""The law residual (:func:`law_residual`) up to which impulses meet the law (:func:`meets_the_law`). A rigid body
coming to rest on three or four corners at different heights has bounds (their gaps' rates) that no one velocity
meets, by about 1e-10 of the velocities (1.1e-10 measured): its exact impulses let corners slide that slowly, with
the friction redistributed among them, and the candidates do not always find them; sticking misses the law by that
much."""


def law_residual(W: np.ndarray, w: np.ndarray, mu: np.ndarray, p: np.ndarray) -> float:
    """How far the impulses p (3c,) and their velocities u = W p + w are from the Signorini–Coulomb law (module
    docstring), in units of max |p| for impulses and of max |w| for velocities: the largest over the contacts of
    the normal part max(0, −p_n, −u_n, min(p_n, u_n)), the friction beyond the cone ‖p_t‖ − μ p_n, and the lesser
    of the slip ‖u_t‖ (were it sticking) and of what sliding misses — the friction short of its cone μ p_n − ‖p_t‖,
    the slip across the friction's line |u_t × f̂| and along the friction max(0, −u_t · f̂), f̂ = −p_t/‖p_t‖."""
    P = p.reshape(-1, 3) / max(float(np.abs(p).max(initial=0.0)), 1e-300)
    U = (W @ p + w).reshape(-1, 3) / max(float(np.abs(w).max(initial=0.0)), 1e-300)
    normal = np.maximum.reduce([np.zeros(mu.size), -P[:, 0], -U[:, 0], np.minimum(P[:, 0], U[:, 0])])
    friction, slip = np.hypot(P[:, 1], P[:, 2]), np.hypot(U[:, 1], U[:, 2])
    beyond = np.maximum(friction - mu * P[:, 0], 0.0)
    safe = np.where(friction > 0.0, friction, 1.0)
    f0, f1 = -P[:, 1] / safe, -P[:, 2] / safe  # f̂ (zero without friction)
    f0, f1 = np.where(friction > 0.0, f0, 0.0), np.where(friction > 0.0, f1, 0.0)
    across = np.abs(U[:, 1] * f1 - U[:, 2] * f0)
    against = np.maximum(-(U[:, 1] * f0 + U[:, 2] * f1), 0.0)
    sliding = np.maximum.reduce([np.maximum(mu * P[:, 0] - friction, 0.0), across, against])
    return float(np.maximum.reduce([normal, beyond, np.minimum(slip, sliding)]).max(initial=0.0))


def meets_the_law(W: np.ndarray, w: np.ndarray, mu: np.ndarray, p: np.ndarray) -> bool:
    """Whether the impulses p (3c,) meet the Signorini–Coulomb law at every contact (module docstring) to
    :data:`LAW_TOL` (:func:`law_residual`)."""
    return law_residual(W, w, mu, p) <= LAW_TOL


CONE_ACCURACY = 1e-4
"""Relative accuracy with which :func:`_candidates` reads a cone program's impulses (interior point: a sliding
contact's friction comes within about 1e-5 of its cone, a contact apart keeps about 1e-6 of the largest normal
impulse)."""


def _candidates(W: np.ndarray, w: np.ndarray, mu: np.ndarray, p: np.ndarray):
    """The impulses (3c,) that :func:`solve_coulomb_polished` tries in turn from a stalled iterate p (3c,): a cone
    program's (:mod:`~flexbody.solvers.coulomb_cone_program`) made exact for the states it shows, then for the others
    :func:`_polish_states` lists from it (with Levenberg–Marquardt where Newton's method stops short of the sliding
    directions, ``fitted``: a box coming to rest on corners that creep at 1e-5 of its velocities, whose Newton
    iterate missed the law by 1.2e-7 where the fit meets it to 4e-16), then :func:`polished` ones for the states of
    :func:`_polish_states`, each made exact (:func:`made_exact`)."""
    from .coulomb_cone_program import solve_coulomb_cones

    cones = solve_coulomb_cones(W, w, mu)
    if cones is not None:
        for states in _polish_states(W, w, mu, cones, CONE_ACCURACY):
            start = cones.reshape(-1, 3).copy()
            start[states == APART] = 0.0
            yield made_exact(W, w, mu, start.ravel(), states, fitted=True)
    for states in _polish_states(W, w, mu, p):
        yield made_exact(W, w, mu, polished(W, w, mu, p, states), states)


class CoulombSolution(NamedTuple):
    """What :func:`solve_coulomb_polished` made of a contact problem: the ``sweeps`` of Gauss–Seidel, the last
    relative ``change`` of its impulses (≤ tol where they converged), and where they did not, the ``residual``
    (:func:`law_residual`) of the impulses it gives instead (0 where the sweeps converged); ``solved`` where either
    holds (the change ≤ tol, or the residual ≤ :data:`LAW_TOL`), and ``by_the_law`` where it is solved by impulses
    that meet the law though the sweeps did not converge to them."""

    sweeps: int
    change: float
    residual: float
    solved: bool
    by_the_law: bool


LAW_CHECK_SWEEPS = 100
"""Sweeps of :func:`solve_coulomb_polished` between checks of the law."""

LAW_CHECK_FACTOR = 100.0
"""The sweeps stop where the impulses meet the law to this many times their ``tol`` (:func:`law_residual`), though
they still change by more: a rigid body resting on redundant contacts keeps friction that squeezes it between them
(impulses that change no velocity), along which Gauss–Seidel creeps for ever (measured: a box at rest on its four
corners, each step 5 000 sweeps changing its impulses by 2e-12 a sweep, meeting the law to 1.1e-12)."""


def solve_coulomb_polished(W, w, mu, p, tol, max_sweeps) -> CoulombSolution:
    """:func:`solve_coulomb` in rounds of :data:`LAW_CHECK_SWEEPS`, until its impulses change by no more than
    ``tol`` or meet the law (:func:`law_residual`) to :data:`LAW_CHECK_FACTOR` × tol. Where the sweeps stall, the
    candidates of :func:`_candidates` in turn — a cone program's made exact for the states it shows, then those
    :func:`polished` makes exact for the states :func:`_polish_states` lists — and then those of :func:`_slipping`
    from the one nearest the law: the first that :data:`CONFIRMING_SWEEPS` more sweeps confirm (they converge, to
    impulses that meet the law) or that meets the law to :data:`LAW_CHECK_FACTOR` × tol itself, else the one nearest
    the law where it meets it to :data:`LAW_TOL`. p (3c,) is overwritten by the impulses (left at the stalled iterate
    where none meets the law)."""
    sweeps, change = 0, math.inf
    while sweeps < max_sweeps:  # sweeps in rounds, the law checked after each
        more, change = solve_coulomb(W, w, mu, p, tol, min(LAW_CHECK_SWEEPS, max_sweeps - sweeps))
        sweeps += more
        if change <= tol:
            return CoulombSolution(sweeps, change, 0.0, True, False)
        residual = law_residual(W, w, mu, p)
        if residual <= LAW_CHECK_FACTOR * tol:
            return CoulombSolution(sweeps, change, residual, True, True)
    best, least = p.copy(), law_residual(W, w, mu, p)

    def candidates():  # _slipping starts from the best of the others, read once they are done
        yield from _candidates(W, w, mu, p)
        yield from _slipping(W, w, mu, best)

    for candidate in candidates():
        swept = candidate.copy()
        more, change_swept = solve_coulomb(W, w, mu, swept, tol, CONFIRMING_SWEEPS)
        sweeps += more
        if change_swept <= tol and meets_the_law(W, w, mu, swept):
            p[:] = swept
            return CoulombSolution(sweeps, change_swept, 0.0, True, False)
        residual = law_residual(W, w, mu, candidate)
        if residual < least:
            best, least = candidate, residual
        if residual <= LAW_CHECK_FACTOR * tol:
            break
    if least <= LAW_TOL:
        p[:] = best
    return CoulombSolution(sweeps, change, least, least <= LAW_TOL, least <= LAW_TOL)


def _slipping(W: np.ndarray, w: np.ndarray, mu: np.ndarray, p: np.ndarray):
    """Impulses (3c,) made exact (:func:`made_exact`) from p (3c,), the candidate nearest the law, with some of its
    sticking contacts that slip (slowly: a velocity bound of the step that no rigid motion meets at once leaves
    them a slip of about the law's tolerance, which sticking cannot remove) sliding instead, their friction
    against that slip: each alone, then — for up to :data:`MAX_ENUMERATED` of them — every other choice of them; their
    directions solved to round-off (:func:`made_exact` with ``fitted``: a slip that slow leaves Newton's method a
    residual slope of its own size)."""
    states = contact_states(mu, p)
    P, U = p.reshape(-1, 3), (W @ p + w).reshape(-1, 3)
    slip = np.hypot(U[:, 1], U[:, 2])
    slipping = np.flatnonzero((states == STICK) & (slip > 0.0) & (mu > 0.0))
    choices = [[i] for i in slipping]
    if 1 < slipping.size <= MAX_ENUMERATED:
        choices += [
            [i for k, i in enumerate(slipping) if code >> k & 1]
            for code in range(1, 2**slipping.size)
            if bin(code).count("1") > 1
        ]
    for chosen in choices:
        start, changed = P.copy(), states.copy()
        start[chosen, 1:] = -(mu[chosen] * P[chosen, 0] / slip[chosen])[:, None] * U[chosen, 1:]
        changed[chosen] = SLIDE
        yield made_exact(W, w, mu, start.ravel(), changed, fitted=True)
