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
leave, along which it drifts — :func:`polished` takes the contacts' states (apart: p = 0; sticking: u = 0;
sliding: u_n = 0 with p_t = μ p_n along the friction it has, turned against the slip it makes and solved again),
solves the linear equations they make by least squares, and the sweeps run again from there, which confirms it
(or not), and :func:`meets_the_law` checks it. The states are the last iterate's, then other choices for the
contacts in play (:func:`_polish_states`).
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

__all__ = [
    "solve_coulomb",
    "solve_coulomb_coupled",
    "polished",
    "contact_states",
    "meets_the_law",
    "solve_coulomb_polished",
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


def contact_states(mu: np.ndarray, p: np.ndarray) -> np.ndarray:
    """The states (c,) of the contacts at the iterate p (3c,): apart without a normal impulse, sliding with their
    friction on the cone, sticking inside it."""
    P = p.reshape(-1, 3)
    friction = np.hypot(P[:, 1], P[:, 2])
    states = np.where(friction < mu * P[:, 0] * (1.0 - 1e-9), STICK, SLIDE)
    return np.where(P[:, 0] > 0.0, states, APART)


def polished(W: np.ndarray, w: np.ndarray, mu: np.ndarray, p: np.ndarray, states: np.ndarray | None = None):
    """The impulses (3c,) that the contacts' ``states`` (c,) (by default those at the iterate p (3c,),
    :func:`contact_states`) make exact (module docstring): for each sticking contact u_i = W_i p + w_i = 0 (three
    unknowns), for each sliding one u_n = 0 with p_t = μ p_n f̂ (one unknown; f̂ its friction's direction at p, or
    against its slip there where it has none; without friction p_t = 0), the contacts apart at zero; the equations
    solved by least squares."""
    c = mu.size
    P = p.reshape(c, 3)
    states = contact_states(mu, p) if states is None else states
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
    if not columns:
        return np.zeros(3 * c)
    B = np.column_stack(columns)
    x = np.linalg.lstsq((W @ B)[equations], -w[equations], rcond=1e-12)[0]
    return B @ x


CONFIRMING_SWEEPS = 100
"""Sweeps that may confirm the impulses :func:`polished` made exact."""

MAX_ENUMERATED = 4
"""Contacts in play (pressed, or pressing in) up to which every choice of their states is polished."""

MAX_RELEASED = 8
"""With more in play, the least pressed contacts that are released one at a time."""

DIRECTION_UPDATES = 10
"""Times a polish turns its sliding contacts' friction against the slip it makes and is polished again."""


def _polish_states(W: np.ndarray, w: np.ndarray, mu: np.ndarray, p: np.ndarray) -> list[np.ndarray]:
    """The states that :func:`solve_coulomb_polished` polishes in turn from a stalled iterate p (3c,): those of the
    iterate, then — for the contacts in play (pressed, or apart with the surface closing in) — every choice of apart,
    sticking and sliding for up to :data:`MAX_ENUMERATED` of them, nearest the iterate's first (a redundant set of
    contacts whose bounds no velocity meets at once leaves one of them; one on its cone may stick or slide), or
    else each of the :data:`MAX_RELEASED` least pressed released in turn."""
    base = contact_states(mu, p)
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


def _against_slip(W: np.ndarray, w: np.ndarray, mu: np.ndarray, p: np.ndarray, states: np.ndarray) -> np.ndarray:
    """p (3c,) with each sliding contact's friction turned against its slip u_t = (W p + w)_t: p_t = −μ p_n
    u_t/‖u_t‖."""
    turned = p.copy()
    u = W @ p + w
    for i in np.flatnonzero((states == SLIDE) & (mu > 0.0)):
        a = 3 * i
        slip = float(np.hypot(u[a + 1], u[a + 2]))
        if slip > 0.0:
            turned[a + 1 : a + 3] = -mu[i] * p[a] * u[a + 1 : a + 3] / slip
    return turned


LAW_TOL = 1e-10
"""Relative slack with which :func:`meets_the_law` checks a polish (of the impulses' and velocities' sizes)."""


def meets_the_law(W: np.ndarray, w: np.ndarray, mu: np.ndarray, p: np.ndarray) -> bool:
    """Whether the impulses p (3c,) and their velocities u = W p + w meet the Signorini–Coulomb law at every contact
    (module docstring) to :data:`LAW_TOL` of max |p| and max |w|: p_n ≥ 0, u_n ≥ 0, one of them zero, the friction
    in its cone, and where it slips, on the cone against the slip."""
    u = (W @ p + w).reshape(-1, 3)
    P = p.reshape(-1, 3)
    small_p = LAW_TOL * max(float(np.abs(p).max(initial=0.0)), 1e-300)
    small_u = LAW_TOL * max(float(np.abs(w).max(initial=0.0)), 1e-300)
    for (p_n, *p_t), (u_n, *u_t), coefficient in zip(P, u, mu):
        friction, slip = float(np.hypot(*p_t)), float(np.hypot(*u_t))
        if p_n < -small_p or u_n < -small_u or min(p_n / small_p, u_n / small_u) > 1.0:
            return False
        if friction > coefficient * p_n + small_p:
            return False
        slipping = slip > small_u and p_n > small_p
        if slipping and (friction < coefficient * p_n - small_p or np.dot(p_t, u_t) > -(1.0 - 1e-9) * friction * slip):
            return False
    return True


def solve_coulomb_polished(W, w, mu, p, tol, max_sweeps) -> tuple[int, float]:
    """:func:`solve_coulomb`, and where its sweeps stall, the impulses :func:`polished` makes exact, kept where
    :data:`CONFIRMING_SWEEPS` more sweeps from them converge, for the states :func:`_polish_states` lists in turn,
    each sliding contact's friction turned against its slip up to :data:`DIRECTION_UPDATES` times (module
    docstring), and where they meet the law (:func:`meets_the_law`): (sweeps, change) as :func:`solve_coulomb`
    returns them, p (3c,) overwritten by the impulses (the stalled iterate's where no polish is confirmed)."""
    sweeps, change = solve_coulomb(W, w, mu, p, tol, max_sweeps)
    if change <= tol:
        return sweeps, change
    for states in _polish_states(W, w, mu, p):
        polish = polished(W, w, mu, p, states)
        for _ in range(DIRECTION_UPDATES):  # the sliding friction turned against the slip it makes, polished again
            turned = _against_slip(W, w, mu, polish, states)
            if np.abs(turned - polish).max() <= 1e-12 * np.abs(polish).max(initial=0.0):
                break
            polish = polished(W, w, mu, turned, states)
        more, change_polished = solve_coulomb(W, w, mu, polish, tol, CONFIRMING_SWEEPS)
        sweeps += more
        if change_polished <= tol and meets_the_law(W, w, mu, polish):
            p[:] = polish
            return sweeps, change_polished
    return sweeps, change
