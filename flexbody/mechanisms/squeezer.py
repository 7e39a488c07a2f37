"""Andrews' squeezing mechanism: seven rigid bodies in the plane, three loop closures, a spring and a
constant driving torque (IFToMM benchmark A03; Hairer & Wanner, *Solving ODEs II*, §VII.7; the "andrews"
problem of the Test Set for IVP Solvers, Mazzia & Magherini, Univ. Bari).

Coordinates (the benchmark's angles): β (crank about O), Θ (coupler relative to the crank), γ (body 3
about B), δ (body 5 about A) and Φ (body 4 relative to 5), ε (body 7 about A) and Ω (body 6 relative to
7). The coupler's end P is pinned to bodies 3, 4 and 6 (six rows, x and y of three closures), the spring
(c₀ = 4530 N/m, ℓ₀ = 0.07785 m) pulls point D of body 3 towards C on the ground, and the torque
0.033 N·m drives β. No gravity. The benchmark's published angles at t = 0.03 s are in
:data:`REFERENCE_ANGLES` (Test Set, computed with PSIDE at tolerance 1e-14).
"""

from __future__ import annotations

import numpy as np

from ..constraints.closures import PointToPoint
from ..constraints.force_elements import GeneralizedForce
from ..constraints.springs import SpringDamper
from ..rigid.anchors import Ground
from ..rigid.joints import Revolute
from ..rigid.tree import RigidTree
from ..system.description import System

__all__ = ["andrews_squeezer", "benchmark_order", "INITIAL_ANGLES", "REFERENCE_ANGLES", "SQUEEZER_ANGLE_NAMES"]

# masses [kg], moments of inertia about the centres of mass [kg m²]
_M = (0.04325, 0.00365, 0.02373, 0.00706, 0.07050, 0.00706, 0.05498)
_I = (2.194e-6, 4.410e-7, 5.255e-6, 5.667e-7, 1.169e-5, 5.667e-7, 1.912e-5)
# lengths [m]
XA, YA, XB, YB, XC, YC = -0.06934, -0.00227, -0.03635, 0.03273, 0.014, 0.072
D, DA, E, EA, RR, RA = 28e-3, 115e-4, 2e-2, 1421e-5, 7e-3, 92e-5
SS, SA, SB, SC, SD = 35e-3, 1874e-5, 1043e-5, 18e-3, 2e-2
TA, TB, U, UA, UB = 2308e-5, 916e-5, 4e-2, 1228e-5, 449e-5
ZF, ZT, FA = 2e-2, 4e-2, 1421e-5
SPRING_STIFFNESS, SPRING_REST_LENGTH, DRIVING_TORQUE = 4530.0, 7785e-5, 0.033

SQUEEZER_ANGLE_NAMES = ("beta", "Theta", "gamma", "Phi", "delta", "Omega", "epsilon")
"""The benchmark's order of the seven angles."""
INITIAL_ANGLES = np.array(
    [
        -0.0617138900142764496358948458001,
        0.0,
        0.455279819163070380255912382449,
        0.222668390165885884674473185609,
        0.487364979543842550225598953530,
        -0.222668390165885884674473185609,
        1.23054744454982119249735015568,
    ]
)
"""Consistent initial angles [rad] in the benchmark's order (the mechanism starts at rest)."""
REFERENCE_ANGLES = np.array(
    [
        0.1581077119629904e2,
        -0.1575637105984298e2,
        0.4082224013073101e-1,
        -0.5347301163226948,
        0.5244099658805304,
        0.5347301163226948,
        0.1048080741042263e1,
    ]
)
"""The angles [rad] at t = 0.03 s in the benchmark's order."""


def _planar_inertia(izz: float) -> tuple[float, float, float]:
    """Principal inertias of a plate-like body with izz about z (only izz acts in the plane)."""
    return 0.5 * izz, 0.5 * izz, izz


def andrews_squeezer() -> System:
    """Andrews' squeezer as four rigid trees, three planar closures, a :class:`SpringDamper` and the
    driving torque as a :class:`GeneralizedForce` on β.

    The joint coordinates are (β, Θ | γ | δ, Φ | ε, Ω); ``asm.coordinate_labels`` names them
    ``crank.K1`` … and :func:`benchmark_order` gives the permutation to the benchmark's order.
    """
    m1, m2, m3, m4, m5, m6, m7 = _M
    i1, i2, i3, i4, i5, i6, i7 = _I
    none = (0.0, 0.0, 0.0)
    crank = RigidTree("crank", gravity=none)
    k1 = crank.add_link("K1", None, Revolute(), mass=m1, com=(RA, 0, 0), inertia=_planar_inertia(i1))
    k2 = crank.add_link("K2", k1, Revolute(), origin=(RR, 0, 0), mass=m2, com=(-DA, 0, 0), inertia=_planar_inertia(i2))
    lever = RigidTree("body3", gravity=none)
    k3 = lever.add_link(
        "K3", None, Revolute(), origin=(XB, YB, 0), mass=m3, com=(SA, SB, 0), inertia=_planar_inertia(i3)
    )
    arm45 = RigidTree("arm45", gravity=none)
    k5 = arm45.add_link(
        "K5", None, Revolute(), origin=(XA, YA, 0), mass=m5, com=(TA, TB, 0), inertia=_planar_inertia(i5)
    )
    k4 = arm45.add_link(
        "K4", k5, Revolute(), origin=(ZT, 0, 0), mass=m4, com=(0, -(E - EA), 0), inertia=_planar_inertia(i4)
    )
    arm67 = RigidTree("arm67", gravity=none)
    k7 = arm67.add_link(
        "K7", None, Revolute(), origin=(XA, YA, 0), mass=m7, com=(UA, UB, 0), inertia=_planar_inertia(i7)
    )
    k6 = arm67.add_link(
        "K6", k7, Revolute(), origin=(0, -U, 0), mass=m6, com=(ZF - FA, 0, 0), inertia=_planar_inertia(i6)
    )
    P = crank.point(k2, (-D, 0, 0))
    closures = [
        PointToPoint(P, lever.point(k3, (0, -SS, 0)), components=(0, 1), name="P3"),
        PointToPoint(P, arm45.point(k4, (0, -E, 0)), components=(0, 1), name="P4"),
        PointToPoint(P, arm67.point(k6, (ZF, 0, 0)), components=(0, 1), name="P6"),
    ]
    spring = SpringDamper(
        lever.point(k3, (SD, -SC, 0)),
        Ground((XC, YC, 0)),
        stiffness=SPRING_STIFFNESS,
        rest_length=SPRING_REST_LENGTH,
        name="spring",
    )
    torque = np.array([DRIVING_TORQUE])
    motor = GeneralizedForce(lambda t, q, v: torque, [0], name="motor")
    return System(
        [crank, lever, arm45, arm67], closures, forces=[spring, motor], q0=INITIAL_ANGLES[list(_OURS_FROM_BENCHMARK)]
    )


_OURS_FROM_BENCHMARK = (0, 1, 2, 4, 3, 6, 5)  # (β, Θ, γ, δ, Φ, ε, Ω) from the benchmark's order


def benchmark_order(q: np.ndarray) -> np.ndarray:
    """The angles of q (…, 7) in the benchmark's order (β, Θ, γ, Φ, δ, Ω, ε)."""
    return np.asarray(q)[..., list(_OURS_FROM_BENCHMARK)]
