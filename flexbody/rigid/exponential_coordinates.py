"""Local exponential coordinates of rotations: the rotation vector φ (3,) [rad], R = exp([φ]×), its right
Jacobian, the rate of that Jacobian, and the change of chart φ → φ − 2π φ/‖φ‖ (the same rotation).

With θ = ‖φ‖ and the coefficients s = sin θ/θ, a = (1 − cos θ)/θ², b = (θ − sin θ)/θ³:

    exp([φ]×) = I + s[φ]× + a[φ]×²                                   (Rodrigues)
    J_r(φ) = I − a[φ]× + b[φ]×²,   ω_body = J_r(φ) φ̇                  (right Jacobian of SO(3))
    J̇_r φ̇ = −ȧ (φ × φ̇) + ḃ φ × (φ × φ̇) + b φ̇ × (φ × φ̇),   ȧ = (a′/θ)(φ·φ̇), ḃ = (b′/θ)(φ·φ̇)

(the terms with [φ̇]×φ̇ vanish). Near θ = 0 the coefficients come from their Taylor series to θ⁶ (θ < 0.05, where
the first neglected term is below 2e-16). J_r is singular only at θ = 2π k (k ≥ 1).

The chart change f(φ) = φ − 2π φ/θ maps a rotation vector of length θ ∈ (π, 2π) to the one of length 2π − θ
with the same rotation; velocities and accelerations follow with its derivatives
Df[h] = h − 2π (h − u(u·h))/θ and D²f[h, h] = 2π (2(u·h)h + (h·h)u − 3(u·h)²u)/θ², u = φ/θ.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

SERIES_BELOW = 0.05
"""θ [rad] below which the coefficients use their Taylor series."""


@nb.njit(cache=True, inline="always")
def coefficients(theta):
    """(s, a, b, a′/θ, b′/θ) of the module docstring at θ = ‖φ‖."""
    if theta < SERIES_BELOW:
        t2 = theta * theta
        t4 = t2 * t2
        t6 = t4 * t2
        return (
            1.0 - t2 / 6.0 + t4 / 120.0 - t6 / 5040.0,
            0.5 - t2 / 24.0 + t4 / 720.0 - t6 / 40320.0,
            1.0 / 6.0 - t2 / 120.0 + t4 / 5040.0 - t6 / 362880.0,
            -1.0 / 12.0 + t2 / 180.0 - t4 / 6720.0 + t6 / 453600.0,
            -1.0 / 60.0 + t2 / 1260.0 - t4 / 60480.0 + t6 / 4989600.0,
        )
    c, s = math.cos(theta), math.sin(theta)
    t2 = theta * theta
    return (
        s / theta,
        (1.0 - c) / t2,
        (theta - s) / (t2 * theta),
        (theta * s - 2.0 * (1.0 - c)) / (t2 * t2),
        (1.0 - c) / (t2 * t2) - 3.0 * (theta - s) / (t2 * t2 * theta),
    )


@nb.njit(cache=True, inline="always")
def cross3(a0, a1, a2, b0, b1, b2):
    """a × b of two vectors given by their components (no arrays: the recursions call it in tight loops)."""
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@nb.njit(cache=True, inline="always")
def rotation_entries(p0, p1, p2):
    """The entries of exp([φ]×) for φ = (p0, p1, p2), row by row (a 9-tuple: no array for the recursions)."""
    s, a, _, _, _ = coefficients(math.sqrt(p0 * p0 + p1 * p1 + p2 * p2))
    return (
        1.0 - a * (p1 * p1 + p2 * p2),
        -s * p2 + a * p0 * p1,
        s * p1 + a * p0 * p2,
        s * p2 + a * p0 * p1,
        1.0 - a * (p0 * p0 + p2 * p2),
        -s * p0 + a * p1 * p2,
        -s * p1 + a * p0 * p2,
        s * p0 + a * p1 * p2,
        1.0 - a * (p0 * p0 + p1 * p1),
    )


@nb.njit(cache=True)
def rotation(p0, p1, p2, out):
    """out (3, 3) = exp([φ]×) for φ = (p0, p1, p2)."""
    r = rotation_entries(p0, p1, p2)
    out[0, 0], out[0, 1], out[0, 2] = r[0], r[1], r[2]
    out[1, 0], out[1, 1], out[1, 2] = r[3], r[4], r[5]
    out[2, 0], out[2, 1], out[2, 2] = r[6], r[7], r[8]


@nb.njit(cache=True, inline="always")
def _right_jacobian_times(p0, p1, p2, x0, x1, x2, inverse):
    """J_r(φ) x, or J_r(φ)⁻¹ x with ``inverse``, as a 3-tuple: x − f[φ]× x + g[φ]×² x with (f, g) = (a, b) of J_r
    or (−½, c) of its inverse (:func:`jacobian_inverse_coefficient`)."""
    theta = math.sqrt(p0 * p0 + p1 * p1 + p2 * p2)
    if inverse:
        first, second = -0.5, jacobian_inverse_coefficient(theta)
    else:
        _, first, second, _, _ = coefficients(theta)
    c0, c1, c2 = cross3(p0, p1, p2, x0, x1, x2)  # [φ]× x
    d0, d1, d2 = cross3(p0, p1, p2, c0, c1, c2)  # [φ]×² x
    return x0 - first * c0 + second * d0, x1 - first * c1 + second * d1, x2 - first * c2 + second * d2


@nb.njit(cache=True)
def right_jacobian_column(p0, p1, p2, k, out):
    """out (3,) = column k of J_r(φ) = I − a[φ]× + b[φ]×²."""
    e0, e1, e2 = (1.0 if k == 0 else 0.0), (1.0 if k == 1 else 0.0), (1.0 if k == 2 else 0.0)
    out[0], out[1], out[2] = _right_jacobian_times(p0, p1, p2, e0, e1, e2, False)


@nb.njit(cache=True)
def right_jacobian_rate(p0, p1, p2, r0, r1, r2, out):
    """out (3,) = J̇_r(φ) φ̇ at φ = (p0, p1, p2), φ̇ = (r0, r1, r2) (module docstring)."""
    _, _, b, da, db = coefficients(math.sqrt(p0 * p0 + p1 * p1 + p2 * p2))
    pr = p0 * r0 + p1 * r1 + p2 * r2
    c0, c1, c2 = cross3(p0, p1, p2, r0, r1, r2)  # φ × φ̇
    d0, d1, d2 = cross3(p0, p1, p2, c0, c1, c2)  # φ × (φ × φ̇)
    e0, e1, e2 = cross3(r0, r1, r2, c0, c1, c2)  # φ̇ × (φ × φ̇)
    out[0] = -da * pr * c0 + db * pr * d0 + b * e0
    out[1] = -da * pr * c1 + db * pr * d1 + b * e1
    out[2] = -da * pr * c2 + db * pr * d2 + b * e2


SECOND_SERIES_BELOW = 0.3
"""θ [rad] below which the second-derivative coefficients use their Taylor series (their closed forms cancel 1/θ⁴
terms to O(1): 1e-11 relative at 0.3 rad; the series' first neglected term is below 1e-11 there)."""


@nb.njit(cache=True, inline="always")
def second_coefficients(theta):
    """(A′/θ, B′/θ) of A = a′/θ and B = b′/θ (:func:`coefficients`): (θ² cos θ − 5θ sin θ + 8(1 − cos θ))/θ⁶ and
    sin θ/θ⁵ − 7(1 − cos θ)/θ⁶ + 15(θ − sin θ)/θ⁷, from their series in θ² below :data:`SECOND_SERIES_BELOW`."""
    t2 = theta * theta
    if theta < SECOND_SERIES_BELOW:
        t4 = t2 * t2
        return (
            1.0 / 90.0 - t2 / 1680.0 + t4 / 75600.0 - t4 * t2 / 5987520.0 + t4 * t4 / 622702080.0,
            1.0 / 630.0 - t2 / 15120.0 + t4 / 831600.0 - t4 * t2 / 77837760.0 + t4 * t4 / 10897286400.0,
        )
    c, s = math.cos(theta), math.sin(theta)
    t6 = t2 * t2 * t2
    return (t2 * c - 5.0 * theta * s + 8.0 * (1.0 - c)) / t6, s / (t6 / theta) - 7.0 * (1.0 - c) / t6 + 15.0 * (
        theta - s
    ) / (t6 * theta)


@nb.njit(cache=True)
def right_jacobian_derivative(phi, h, x, out):
    """out (3,) = D[h](x) = (Σ_m h_m ∂J_r/∂φ_m) x, the derivative of J_r(φ) x along h at fixed x:
    −A(φ·h)(φ×x) − a(h×x) + B(φ·h) φ×(φ×x) + b(h×(φ×x) + φ×(h×x)), A = a′/θ, B = b′/θ."""
    p0, p1, p2 = phi[0], phi[1], phi[2]
    _, a, b, A, B = coefficients(math.sqrt(p0 * p0 + p1 * p1 + p2 * p2))
    ph = p0 * h[0] + p1 * h[1] + p2 * h[2]
    c = cross3(p0, p1, p2, x[0], x[1], x[2])  # φ × x
    d = cross3(p0, p1, p2, c[0], c[1], c[2])  # φ × (φ × x)
    e = cross3(h[0], h[1], h[2], x[0], x[1], x[2])  # h × x
    f = cross3(h[0], h[1], h[2], c[0], c[1], c[2])  # h × (φ × x)
    g = cross3(p0, p1, p2, e[0], e[1], e[2])  # φ × (h × x)
    for k in range(3):
        out[k] = -A * ph * c[k] - a * e[k] + B * ph * d[k] + b * (f[k] + g[k])


@nb.njit(cache=True)
def column_derivative(phi, R, m, j, out):
    """out (3,) = R ∂J_r(φ)/∂φ_m e_j: how column j of a spherical joint's motion subspace (R J_r(φ) e_j, world axes)
    changes with φ_m besides the turn of R (:func:`right_jacobian_derivative`)."""
    unit, e, x = np.zeros(3), np.zeros(3), np.empty(3)
    unit[m], e[j] = 1.0, 1.0
    right_jacobian_derivative(phi, unit, e, x)
    for r in range(3):
        out[r] = R[r, 0] * x[0] + R[r, 1] * x[1] + R[r, 2] * x[2]


@nb.njit(cache=True)
def right_jacobian_rate_derivative(phi, rate, m, out):
    """out (3,) = ∂(J̇_r(φ) φ̇)/∂φ_m at fixed φ̇ = ``rate``: the derivative of E = −A(φ·r)(φ×r) + B(φ·r) φ×(φ×r)
    + b r×(φ×r) (:func:`right_jacobian_rate`, r = φ̇) along e_m, with ∂A/∂φ_m = (A′/θ)φ_m, ∂B/∂φ_m = (B′/θ)φ_m,
    ∂b/∂φ_m = Bφ_m (:func:`second_coefficients`)."""
    p0, p1, p2 = phi[0], phi[1], phi[2]
    r0, r1, r2 = rate[0], rate[1], rate[2]
    theta = math.sqrt(p0 * p0 + p1 * p1 + p2 * p2)
    _, _, b, A, B = coefficients(theta)
    C, D = second_coefficients(theta)
    pr, pm, rm = p0 * r0 + p1 * r1 + p2 * r2, phi[m], rate[m]
    em0, em1, em2 = (1.0 if m == 0 else 0.0), (1.0 if m == 1 else 0.0), (1.0 if m == 2 else 0.0)
    c = cross3(p0, p1, p2, r0, r1, r2)  # φ × r
    d = cross3(p0, p1, p2, c[0], c[1], c[2])  # φ × (φ × r)
    e = cross3(r0, r1, r2, c[0], c[1], c[2])  # r × (φ × r)
    er = cross3(em0, em1, em2, r0, r1, r2)  # e_m × r
    f = cross3(em0, em1, em2, c[0], c[1], c[2])  # e_m × (φ × r)
    g = cross3(p0, p1, p2, er[0], er[1], er[2])  # φ × (e_m × r)
    k_ = cross3(r0, r1, r2, er[0], er[1], er[2])  # r × (e_m × r)
    for k in range(3):
        out[k] = (
            -C * pm * pr * c[k] - A * rm * c[k] - A * pr * er[k]
            + D * pm * pr * d[k] + B * rm * d[k] + B * pr * (f[k] + g[k])
            + B * pm * e[k] + b * k_[k]
        )  # fmt: skip


@nb.njit(cache=True, inline="always")
def jacobian_inverse_coefficient(theta):
    """c(θ) = 1/θ² − 1/(2θ tan(θ/2)) of J_r(φ)⁻¹ = I + ½[φ]× + c[φ]×² (series to θ⁶ below θ = 0.05; finite at
    θ = π, singular at θ = 2π)."""
    if theta < SERIES_BELOW:
        t2 = theta * theta
        return 1.0 / 12.0 + t2 / 720.0 + t2 * t2 / 30240.0 + t2 * t2 * t2 / 1209600.0
    return 1.0 / (theta * theta) - 1.0 / (2.0 * theta * math.tan(0.5 * theta))


def jacobian_inverse_coefficient_rate(theta: float) -> float:
    """c′(θ) of :func:`jacobian_inverse_coefficient`: −2/θ³ + (2 tan(θ/2) + θ sec²(θ/2)) / (4θ² tan²(θ/2)), by its
    series θ/360 + θ³/7560 + θ⁵/201600 + θ⁷/5987520 below θ = 0.2 (where the closed form cancels)."""
    if theta < 0.2:
        t2 = theta * theta
        return theta * (1.0 / 360.0 + t2 / 7560.0 + t2 * t2 / 201600.0 + t2 * t2 * t2 / 5987520.0)
    half = math.tan(0.5 * theta)
    return -2.0 / theta**3 + (2.0 * half + theta * (1.0 + half * half)) / (4.0 * theta * theta * half * half)


@nb.njit(cache=True)
def apply_right_jacobian(phi, x, inverse, out):
    """out (3,) = J_r(φ) x, or J_r(φ)⁻¹ x with ``inverse`` (I + ½[φ]× + c[φ]×²,
    :func:`jacobian_inverse_coefficient`)."""
    out[0], out[1], out[2] = _right_jacobian_times(phi[0], phi[1], phi[2], x[0], x[1], x[2], inverse)


@nb.njit(cache=True)
def composed(phi, psi, out):
    """out (3,) = the rotation vector of exp([φ]×) exp([ψ]×) in the chart of φ (continuous in ψ from φ): by the
    product of unit quaternions (cos(θ/2), sin(θ/2) φ/θ), angle 2 atan2(‖v‖, w) ∈ [0, 2π) with no change of
    sign, so a product past π stays in φ's chart (its length then exceeds π, as a step that ends past π does)."""
    w1, x1, y1, z1 = _quaternion(phi)
    w2, x2, y2, z2 = _quaternion(psi)
    w = w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2
    x = w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2
    y = w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2
    z = w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2
    norm = math.sqrt(x * x + y * y + z * z)
    scale = 2.0 * math.atan2(norm, w) / norm if norm > 1e-300 else 2.0 / w
    out[0], out[1], out[2] = scale * x, scale * y, scale * z


@nb.njit(cache=True, inline="always")
def _quaternion(phi):
    """(w, x, y, z) = (cos(θ/2), sin(θ/2)/θ · φ) of the rotation vector φ (series of sin(θ/2)/θ below 0.05)."""
    theta = math.sqrt(phi[0] * phi[0] + phi[1] * phi[1] + phi[2] * phi[2])
    if theta < SERIES_BELOW:
        t2 = theta * theta
        k = 0.5 - t2 / 48.0 + t2 * t2 / 3840.0 - t2 * t2 * t2 / 645120.0
    else:
        k = math.sin(0.5 * theta) / theta
    return math.cos(0.5 * theta), k * phi[0], k * phi[1], k * phi[2]


# ------------------------------------------------------------------ NumPy helpers
def rotation_matrix(phi: np.ndarray) -> np.ndarray:
    """exp([φ]×) (3, 3) of a rotation vector φ (3,) (:func:`rotation`)."""
    out = np.empty((3, 3))
    rotation(float(phi[0]), float(phi[1]), float(phi[2]), out)
    return out


def skew(v: np.ndarray) -> np.ndarray:
    """[v]× (3, 3), the cross-product matrix: [v]× w = v × w."""
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def rotation_log(R: np.ndarray) -> np.ndarray:
    """θ (3,) [rad] with exp([θ]×) = R, ‖θ‖ ≤ π (scipy's rotation vector)."""
    from scipy.spatial.transform import Rotation

    return Rotation.from_matrix(R).as_rotvec()


def left_jacobian_inverse(theta: np.ndarray) -> np.ndarray:
    """J_l(θ)⁻¹ (3, 3): I − ½[θ]× + c(θ) [θ]×² (:func:`jacobian_inverse_coefficient`); singular at ‖θ‖ = 2π."""
    W = skew(theta)
    return np.eye(3) - 0.5 * W + jacobian_inverse_coefficient(float(np.linalg.norm(theta))) * (W @ W)


def rotation_rates(phi: np.ndarray, angular_velocity: np.ndarray, frame: str) -> np.ndarray:
    """φ̇ (3,) [rad/s] of the rotation vector φ whose rotation R = exp([φ]×) turns with ``angular_velocity`` ω (3,)
    [rad/s] given in the parent's axes (``frame`` "parent": ω = J_l(φ) φ̇, Ṙ = [ω]×R) or in the rotated frame's
    own axes ("body": ω = J_r(φ) φ̇, Ṙ = R[ω]×), with J_l(φ) = R J_r(φ) and J_r(φ) = J_l(−φ)."""
    return left_jacobian_inverse(phi if frame == "parent" else -phi) @ angular_velocity


# ------------------------------------------------------------------ chart change (Python; once per step)
def other_chart(phi: np.ndarray) -> np.ndarray:
    """φ − 2π φ/‖φ‖: the rotation vector of the same rotation in the other chart."""
    theta = float(np.linalg.norm(phi))
    return phi * (1.0 - 2.0 * np.pi / theta)


def chart_velocity(phi: np.ndarray, h: np.ndarray) -> np.ndarray:
    """Df[h] = h − 2π (h − u(u·h))/θ: a rate h of φ in the other chart."""
    theta = float(np.linalg.norm(phi))
    u = phi / theta
    return h - 2.0 * np.pi * (h - u * (u @ h)) / theta


def chart_acceleration(phi: np.ndarray, h: np.ndarray, a: np.ndarray) -> np.ndarray:
    """Df[a] + D²f[h, h]: the second derivative a of φ (with rate h) in the other chart."""
    theta = float(np.linalg.norm(phi))
    u = phi / theta
    uh = u @ h
    return chart_velocity(phi, a) + 2.0 * np.pi * (2.0 * uh * h + (h @ h) * u - 3.0 * uh * uh * u) / theta**2


def chart_jacobian(phi: np.ndarray) -> np.ndarray:
    """Df (3, 3) of the chart change f(φ) = φ − 2π u, u = φ/θ: I − 2π (I − u uᵀ)/θ."""
    theta = float(np.linalg.norm(phi))
    u = phi / theta
    return np.eye(3) - 2.0 * np.pi * (np.eye(3) - np.outer(u, u)) / theta


def _second_form(u: np.ndarray, k: np.ndarray) -> np.ndarray:
    """P_k (3, 3) with P_k h = P(h, k) = (u·k)h + (u·h)k + (h·k)u − 3(u·h)(u·k)u, the symmetric form of
    D²u[h, k] = −P(h, k)/θ² (u = φ/θ)."""
    uk = u @ k
    return uk * np.eye(3) + np.outer(k, u) + np.outer(u, k) - 3.0 * uk * np.outer(u, u)


def chart_second(phi: np.ndarray, k: np.ndarray) -> np.ndarray:
    """(3, 3): h ↦ D²f[h, k] = 2π P(h, k)/θ² of the chart change f (:func:`_second_form`)."""
    theta = float(np.linalg.norm(phi))
    return 2.0 * np.pi / theta**2 * _second_form(phi / theta, k)


def chart_third(phi: np.ndarray, k: np.ndarray, m: np.ndarray) -> np.ndarray:
    """(3, 3): h ↦ D³f[h, k, m] of the chart change f: 2π (∂_m P(h, k)/θ² − 2(u·m) P(h, k)/θ³), where ∂_m P is P's
    derivative along m through u, Du[m] = w = (m − u(u·m))/θ:
    (w·k)h + (w·h)k + (h·k)w − 3(w·h)(u·k)u − 3(u·h)(w·k)u − 3(u·h)(u·k)w."""
    theta = float(np.linalg.norm(phi))
    u = phi / theta
    w = (m - u * (u @ m)) / theta
    uk, wk = u @ k, w @ k
    along = (
        wk * np.eye(3) + np.outer(k, w) + np.outer(w, k)
        - 3.0 * uk * np.outer(u, w) - 3.0 * wk * np.outer(u, u) - 3.0 * uk * np.outer(w, u)
    )  # fmt: skip
    return 2.0 * np.pi * (along / theta**2 - 2.0 * (u @ m) * _second_form(u, k) / theta**3)


def switched_charts(starts: np.ndarray, q: np.ndarray, v: np.ndarray, *accelerations):
    """Move every rotation vector q[s:s+3] (``starts``) longer than π to its other chart, with its rate in v and
    second derivatives in ``accelerations`` (same shapes as q). Returns None when none is longer than π, else
    new arrays (q, v, *accelerations)."""
    if len(starts) == 0:
        return None
    blocks = q[np.asarray(starts)[:, None] + np.arange(3)]  # (k, 3): the rotation vectors
    longer = [s for s, norm in zip(starts, np.sqrt(np.einsum("ij,ij->i", blocks, blocks))) if norm > np.pi]
    if not longer:
        return None
    q, v = q.copy(), v.copy()
    copies = [a.copy() for a in accelerations]
    for s in longer:
        phi, rate = q[s : s + 3].copy(), v[s : s + 3].copy()
        q[s : s + 3] = other_chart(phi)
        v[s : s + 3] = chart_velocity(phi, rate)
        for a in copies:
            a[s : s + 3] = chart_acceleration(phi, rate, a[s : s + 3])
    return (q, v, *copies)
