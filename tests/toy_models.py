"""Small hand-written constrained models with closed-form terms, for testing integrators and solvers.

Each model exposes the evaluation interface that :func:`flexbody.solvers.simulation.simulate` integrates
(``n_dofs``, ``n_constraints``, ``row_labels``, ``terms``, ``constraint_value``, ``constraint_jacobian``,
``constraint_rate``, ``energy``, ``initial_state``). Sign convention: τ = M a + h − Φᵀλ, h = b + g, and the
acceleration-level constraint Φ a + bias = 0 with bias = Φ̇ v.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np

from flexbody.system.assembled import Terms


@dataclass(frozen=True)
class ToyState:
    t: float
    q: np.ndarray
    v: np.ndarray


class ParticleOnCircle:
    """Point mass m [kg] in the plane (q = [x, y] [m]) held on the circle x² + y² = ρ² about the origin.

    Gravity g [m/s²] acts along −y. φ(q) = (x² + y² − ρ²) / (2ρ) [m], so Φ = [x, y]/ρ is a unit row on
    the circle, and bias = Φ̇ v = (vx² + vy²)/ρ. Kinetic energy ½ m |v|², potential m g y.
    The exact motion is the pendulum θ̈ = −(g/ρ) sin θ with x = ρ sin θ, y = −ρ cos θ.
    """

    n_dofs = 2
    n_constraints = 1
    row_labels: ClassVar[list[str]] = ["circle"]
    slices: ClassVar[dict[str, slice]] = {"particle": slice(0, 2)}

    def __init__(
        self, m: float = 1.0, rho: float = 1.0, gravity: float = 9.81, theta0: float = 0.5, omega0: float = 0.0
    ):
        self.m, self.rho, self.gravity = float(m), float(rho), float(gravity)
        self.theta0, self.omega0 = float(theta0), float(omega0)

    def position(self, theta):
        return np.array([self.rho * np.sin(theta), -self.rho * np.cos(theta)])

    def initial_state(self) -> ToyState:
        th, om = self.theta0, self.omega0
        q = self.position(th)
        v = self.rho * om * np.array([np.cos(th), np.sin(th)])
        return ToyState(0.0, q, v)

    def constraint_value(self, t, q):
        return np.array([(q @ q - self.rho**2) / (2.0 * self.rho)])

    def constraint_jacobian(self, t, q):
        return q[None, :] / self.rho

    def constraint_rate(self, t, q):
        return np.zeros(1)

    def terms(self, t, q, v) -> Terms:
        M = self.m * np.eye(2)
        h = np.array([0.0, self.m * self.gravity])
        bias = np.array([v @ v / self.rho])
        return Terms(
            M, h, self.constraint_jacobian(t, q), bias, self.constraint_value(t, q), self.constraint_rate(t, q)
        )

    def energy(self, q, v):
        return 0.5 * self.m * (v @ v), self.m * self.gravity * q[1]


class AghiliSliderCrank:
    """Slider-crank of [AG] Sec. VIII-A: a two-link arm (q = [q1, q2] joint angles [rad]) with point masses
    m at the link ends, link length l, gravity g along −y, closed by keeping the tip C on the line y = offset.

    M and h from [AG-66]; φ = l(s1 + s12) − offset [AG-65]; Φ = l[c1 + c12, c12] [AG-67];
    bias = Φ̇ q̇ = −l[s1 q̇1² + s12 (q̇1 + q̇2)²] (derived here). Potential V = m g l (2 s1 + s12), whose
    gradient is the gravity part of h. With offset = 0 the branch q2 = 2π − 2q1 is singular (Φ = 0)
    at q1 = π/2 + kπ [AG-63]; |offset| > 2l cannot be assembled.
    """

    n_dofs = 2
    n_constraints = 1
    row_labels: ClassVar[list[str]] = ["slider_y"]
    slices: ClassVar[dict[str, slice]] = {}

    def __init__(
        self,
        l: float = 1.0,
        m: float = 1.0,
        gravity: float = 9.81,
        offset: float = 0.0,
        q1_0: float = 2.0 * np.pi / 3.0,
    ):
        self.l, self.m, self.gravity, self.offset = float(l), float(m), float(gravity), float(offset)
        self.q1_0 = float(q1_0)

    def initial_state(self) -> ToyState:
        q1 = self.q1_0
        return ToyState(0.0, np.array([q1, 2.0 * np.pi - 2.0 * q1]), np.zeros(2))

    def mass_matrix(self, q):
        c2 = np.cos(q[1])
        return self.m * self.l**2 * np.array([[3.0 + 2.0 * c2, 1.0 + c2], [1.0 + c2, 1.0]])  # [AG-66]

    def constraint_value(self, t, q):
        return np.array([self.l * (np.sin(q[0]) + np.sin(q[0] + q[1])) - self.offset])  # [AG-65]

    def constraint_jacobian(self, t, q):
        c1, c12 = np.cos(q[0]), np.cos(q[0] + q[1])
        return self.l * np.array([[c1 + c12, c12]])  # [AG-67]

    def constraint_rate(self, t, q):
        return np.zeros(1)

    def terms(self, t, q, v) -> Terms:
        m, l, g = self.m, self.l, self.gravity
        s1, s2, s12 = np.sin(q[0]), np.sin(q[1]), np.sin(q[0] + q[1])
        c1, c12 = np.cos(q[0]), np.cos(q[0] + q[1])
        h = np.array(
            [
                -m * l**2 * s2 * (v[1] ** 2 + 2.0 * v[0] * v[1]) + m * l * g * (c12 + 2.0 * c1),
                m * l**2 * s2 * v[0] ** 2 + m * l * g * c12,
            ]
        )  # [AG-66]
        bias = np.array([-l * (s1 * v[0] ** 2 + s12 * (v[0] + v[1]) ** 2)])
        return Terms(
            self.mass_matrix(q),
            h,
            self.constraint_jacobian(t, q),
            bias,
            self.constraint_value(t, q),
            self.constraint_rate(t, q),
        )

    def energy(self, q, v):
        kinetic = 0.5 * v @ self.mass_matrix(q) @ v
        potential = self.m * self.gravity * self.l * (2.0 * np.sin(q[0]) + np.sin(q[0] + q[1]))
        return kinetic, potential


class MovingCircleParticle(ParticleOnCircle):
    """Particle on a circle whose radius grows in time, ρ(t) = ρ0 + c t (rheonomic; φ_t ≠ 0)."""

    def __init__(self, rate: float = 0.1, **kwargs):
        super().__init__(**kwargs)
        self.rho0, self.rate = self.rho, float(rate)

    def radius(self, t):
        return self.rho0 + self.rate * t

    def constraint_value(self, t, q):
        return np.array([(q @ q - self.radius(t) ** 2) / (2.0 * self.rho0)])

    def constraint_jacobian(self, t, q):
        return q[None, :] / self.rho0

    def constraint_rate(self, t, q):
        return np.array([-self.radius(t) * self.rate / self.rho0])

    def terms(self, t, q, v) -> Terms:
        # d²φ/dt² = (Φ a) + (|v|² − ċ²)/ρ0 with ρ = ρ0 + c t: bias = (|v|² − c²)/ρ0
        M = self.m * np.eye(2)
        h = np.array([0.0, self.m * self.gravity])
        bias = np.array([(v @ v - self.rate**2) / self.rho0])
        return Terms(
            M, h, self.constraint_jacobian(t, q), bias, self.constraint_value(t, q), self.constraint_rate(t, q)
        )


class ParticleWithDeadline(ParticleOnCircle):
    """The particle on a circle with a second row on time alone, φ₂ = max(t − t_stop, 0) [s].

    φ₂ is zero up to ``t_stop``; after it no change of q can satisfy the row (its Jacobian row is zero),
    so the position correction of the first step that ends after ``t_stop`` fails, whatever the rounding.
    Φ has rank 1 of 2 rows throughout; with t_stop = inf the model never fails.
    """

    n_constraints = 2
    row_labels: ClassVar[list[str]] = ["circle", "deadline"]

    def __init__(self, t_stop: float, **kwargs):
        super().__init__(**kwargs)
        self.t_stop = float(t_stop)

    def constraint_value(self, t, q):
        return np.array([super().constraint_value(t, q)[0], max(t - self.t_stop, 0.0)])

    def constraint_jacobian(self, t, q):
        return np.vstack([super().constraint_jacobian(t, q), np.zeros((1, 2))])

    def constraint_rate(self, t, q):
        return np.array([0.0, 1.0 if t > self.t_stop else 0.0])

    def terms(self, t, q, v) -> Terms:
        circle = super().terms(t, q, v)  # Φ, φ, φ_t already of both rows
        return replace(circle, bias=np.append(circle.bias, 0.0))
