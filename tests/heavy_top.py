"""Lagrange's heavy top for the tests: a disc-like top on a spherical joint started in steady precession.

A = I₁ = I₂ about the fixed point, C about the symmetry axis, centre of mass at l on it. With spin ω₃ about the
axis, tilt θ and Ω the slow root of A cos θ Ω² − C ω₃ Ω + m g l = 0, the motion is a steady precession about the
vertical at Ω; the run starts from ω = Ω e_z + (ω₃ − Ω cos θ) e₃ (world axes)."""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

import flexbody as fb

M, G, ELL, A_C, C, THETA, W3 = 1.5, 9.81, 0.2, 0.016, 0.03, 0.6, 60.0  # a disc-like top: 2 A_c ≥ C


def precession_rate() -> float:
    """Ω [rad/s], the slow root of the steady precession."""
    A = A_C + M * ELL**2
    return (C * W3 - np.sqrt((C * W3) ** 2 - 4 * A * np.cos(THETA) * M * G * ELL)) / (2 * A * np.cos(THETA))


def heavy_top():
    """(assembled system, v0 (3,)) of the top tilted by θ about x (its axis e₃ = (0, −sin θ, cos θ)) in steady
    precession; q0 = (θ, 0, 0)."""
    top = fb.RigidTree("top", gravity=(0, 0, -G))
    top.add_link("top", None, fb.Spherical(), mass=M, com=(0, 0, ELL), inertia=(A_C, A_C, C))
    phi0 = np.array([THETA, 0.0, 0.0])
    axis = Rotation.from_rotvec(phi0).as_matrix()[:, 2]
    Omega = precession_rate()
    omega = Omega * np.array([0.0, 0.0, 1.0]) + (W3 - Omega * np.cos(THETA)) * axis
    return fb.System([top], q0=phi0).assemble(), fb.Spherical.velocities(phi0, omega)
