"""Standard constrained mechanisms of the sources, built from rigid trees and constraints.

Each builder returns a :class:`~flexbody.System` (editable) so cases, tests and benchmarks share one
definition: the particle on a circle [AG Fig. 2], Aghili's slider-crank [AG VIII, eq. 64–67], a planar
four-bar (optionally closed in 3-D, which makes a constraint row redundant), a spatial RSSR loop, a
planar arm with its end point on a line and a spatial arm with its end point on a sphere [MH], and a
branching tree whose branch tips are held on the ground (the benchmark mechanism); also the control
examples of [DE 5.4]: a chain with internal joint couplings, a parallel platform with loop closures and
an underactuated chain.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from ..constraints.closures import OnSurface, PointToPoint
from ..constraints.couplings import LinearCoupling
from ..constraints.surfaces import Cylinder, Plane, Sphere
from ..deprecation import deprecated
from ..errors import ModelError
from ..rigid.anchors import Ground
from ..rigid.joints import Fixed, Prismatic, Revolute
from ..rigid.tree import RigidTree
from ..system.description import System

Z = (0.0, 0.0, 1.0)


def _rod_inertia(mass: float, length: float, axis: int = 0) -> np.ndarray:
    """Slender rod about its centre, ``axis`` along the rod."""
    I = np.full(3, mass * length**2 / 12.0)
    I[axis] = 1e-6 * mass * length**2
    return np.diag(I)


def particle_on_circle(
    mass: float = 1.0, radius: float = 1.0, gravity: ArrayLike = (0.0, -9.81, 0.0), angle: float = 0.0
) -> System:
    """A point mass on a circle of ``radius`` in the xy plane [AG Fig. 2]: q = (x, y), φ = ‖q‖ − ρ."""
    tree = RigidTree("particle", gravity=gravity)
    x = tree.add_link("x", joint=Prismatic((1, 0, 0)))
    y = tree.add_link("y", x, Prismatic((0, 1, 0)), mass=mass)
    circle = OnSurface(tree.point(y), Cylinder((0, 0, 0), radius, axis=Z), name="circle")
    return System([tree], [circle], q0=radius * np.array([np.cos(angle), np.sin(angle)]))


def slider_crank(
    length: float = 1.0,
    mass: float = 1.0,
    gravity: ArrayLike = (0.0, -9.81, 0.0),
    crank: float = 2 * np.pi / 3,
    actuated: Sequence[int] = (0, 1),
) -> System:
    """Aghili's slider-crank [AG VIII-A]: a two-link arm of point masses m at the distal ends of links of
    length l, with its end point C held on the line y = 0 [AG-65]; q₂ = 2π − 2q₁ on the loop.

    ``gravity`` (3,) [m/s²] as in every mechanism (a magnitude along −y, as in 0.2, works with a warning until
    0.4.0); ``actuated`` lists which of the two joints carry actuators (the selection matrix S).
    """
    if np.ndim(gravity) == 0:  # the 0.2 magnitude
        deprecated("slider_crank(gravity=g) with a magnitude g", "slider_crank(gravity=(0.0, -g, 0.0))")
        gravity = (0.0, -float(gravity), 0.0)  # type: ignore[arg-type]  # a number, checked just above
    tree = RigidTree("crank", gravity=gravity)
    l1 = tree.add_link("l1", joint=Revolute(Z), mass=mass, com=(length, 0, 0))
    l2 = tree.add_link("l2", l1, Revolute(Z), origin=(length, 0, 0), mass=mass, com=(length, 0, 0))
    line = OnSurface(tree.point(l2, (length, 0, 0)), Plane((0, 1, 0)), name="slider")
    links = (l1, l2)
    return System([tree], [line], actuators=[links[i] for i in actuated], q0=np.array([crank, 2 * np.pi - 2 * crank]))


def four_bar(
    crank: float = 0.3,
    coupler: float = 1.0,
    rocker: float = 0.8,
    ground: float = 1.0,
    density: float = 1.0,
    gravity: ArrayLike = (0.0, -9.81, 0.0),
    closure: str = "planar",
    angle: float = 1.0,
) -> System:
    """Planar four-bar: crank at the origin, rocker at (ground, 0), coupler tip = rocker tip.

    ``closure``: "planar" (2 rows, independent), "spatial" (3 rows: the z row is identically zero,
    hence redundant) or "duplicated" (the planar rows given twice). q0 is assembled for crank ``angle``
    by solving the loop in closed form (elbow-up branch).
    """
    tree = RigidTree("fourbar", gravity=gravity)

    def m(L):
        return density * L

    a = tree.add_link(
        "crank", joint=Revolute(Z), mass=m(crank), com=(crank / 2, 0, 0), inertia=_rod_inertia(m(crank), crank)
    )
    b = tree.add_link(
        "coupler",
        a,
        Revolute(Z),
        origin=(crank, 0, 0),
        mass=m(coupler),
        com=(coupler / 2, 0, 0),
        inertia=_rod_inertia(m(coupler), coupler),
    )
    c = tree.add_link(
        "rocker",
        joint=Revolute(Z),
        origin=(ground, 0, 0),
        mass=m(rocker),
        com=(rocker / 2, 0, 0),
        inertia=_rod_inertia(m(rocker), rocker),
    )
    tip_b, tip_c = tree.point(b, (coupler, 0, 0)), tree.point(c, (rocker, 0, 0))
    if closure == "planar":
        cons = [PointToPoint(tip_b, tip_c, components=(0, 1), name="loop")]
    elif closure == "spatial":
        cons = [PointToPoint(tip_b, tip_c, name="loop")]
    elif closure == "duplicated":
        cons = [
            PointToPoint(tip_b, tip_c, components=(0, 1), name="loop"),
            PointToPoint(tip_b, tip_c, components=(0, 1), name="loop_again"),
        ]
    else:
        raise ValueError(f"closure must be 'planar', 'spatial' or 'duplicated', got {closure!r}")
    B = crank * np.array([np.cos(angle), np.sin(angle)])
    D = np.array([ground, 0.0])
    d = np.linalg.norm(D - B)
    # Triangle B–C–D: angle at B between BD and BC (law of cosines), C above the line BD.
    gamma = np.arccos((coupler**2 + d**2 - rocker**2) / (2 * coupler * d))
    phi_bd = np.arctan2(*(D - B)[::-1])
    C = B + coupler * np.array([np.cos(phi_bd + gamma), np.sin(phi_bd + gamma)])
    q0 = np.array([angle, phi_bd + gamma - angle, np.arctan2(*(C - D)[::-1])])
    return System([tree], cons, q0=q0)


def rssr_loop(gravity: ArrayLike = (0.0, 0.0, -9.81)) -> System:
    """Spatial RSSR loop: crank about z at the origin, coupler joined to it by a spherical joint (three
    revolutes with intersecting axes), rocker about x at (0.3, 1.0, 0.2); the coupler tip is joined to
    the rocker tip by a spatial point-to-point closure (3 rows). n = 5, p = 2 (one is the coupler spin).
    """
    tree = RigidTree("rssr", gravity=gravity)
    crank = tree.add_link("crank", joint=Revolute(Z), mass=0.5, com=(0.15, 0, 0), inertia=_rod_inertia(0.5, 0.3))
    s1 = tree.add_link("s1", crank, Revolute((1, 0, 0)), origin=(0.3, 0, 0))
    s2 = tree.add_link("s2", s1, Revolute((0, 1, 0)))
    coupler = tree.add_link(
        "coupler", s2, Revolute(Z), mass=1.0, com=(0, 0.5, 0.1), inertia=np.diag([0.09, 0.01, 0.09])
    )
    rocker = tree.add_link(
        "rocker",
        joint=Revolute((1, 0, 0)),
        origin=(0.3, 1.0, 0.2),
        mass=0.7,
        com=(0, 0, 0.2),
        inertia=np.diag([0.01, 0.01, 1e-5]),
    )
    cons = [PointToPoint(tree.point(coupler, (0, 1.0, 0.2)), tree.point(rocker, (0, 0, 0.4)), name="loop")]
    return System([tree], cons, q0=np.zeros(5))


def planar_arm_on_line(
    lengths: Sequence[float] = (1.0, 0.8, 0.6),
    masses: Sequence[float] = (1.0, 0.8, 0.6),
    line_y: float = -0.5,
    gravity: ArrayLike = (0.0, -9.81, 0.0),
) -> System:
    """A planar 3-link arm whose end point is held on the line y = ``line_y`` [MH]."""
    if len(lengths) != 3 or len(masses) != 3:
        raise ModelError(f"planar_arm_on_line: 3 lengths and 3 masses, got {len(lengths)} and {len(masses)}")
    tree = RigidTree("arm3", gravity=gravity)
    parent, origin = None, (0.0, 0.0, 0.0)
    for i, (L, m) in enumerate(zip(lengths, masses)):
        parent = tree.add_link(
            f"l{i + 1}", parent, Revolute(Z), origin=origin, mass=m, com=(L / 2, 0, 0), inertia=_rod_inertia(m, L)
        )
        origin = (L, 0.0, 0.0)
    offset = (lengths[-1], 0, 0)
    assert parent is not None  # three links were made
    tip = tree.point(parent, offset)
    return System(
        [tree], [OnSurface(tip, Plane((0, 1, 0), (0, line_y, 0)), name="line")], q0=np.array([-0.3, 0.2, -0.5])
    )


def spatial_arm_on_sphere(
    radius: float = 0.6, center: ArrayLike = (0.4, 0.0, 0.3), gravity: ArrayLike = (0.0, 0.0, -9.81)
) -> System:
    """A 4-dof spatial arm (yaw, pitch, pitch, roll) whose end point is held on a sphere [MH]."""
    tree = RigidTree("arm4", gravity=gravity)
    base = tree.add_link("yaw", joint=Revolute(Z), mass=1.0, com=(0, 0, 0.1), inertia=(0.01, 0.01, 0.005))
    up = tree.add_link(
        "shoulder",
        base,
        Revolute((0, 1, 0)),
        origin=(0, 0, 0.2),
        mass=1.2,
        com=(0.25, 0, 0),
        inertia=_rod_inertia(1.2, 0.5),
    )
    fore = tree.add_link(
        "elbow", up, Revolute((0, 1, 0)), origin=(0.5, 0, 0), mass=0.8, com=(0.2, 0, 0), inertia=_rod_inertia(0.8, 0.4)
    )
    hand = tree.add_link(
        "wrist",
        fore,
        Revolute((1, 0, 0)),
        origin=(0.4, 0, 0),
        mass=0.3,
        com=(0.05, 0.02, 0),
        inertia=(0.001, 0.002, 0.002),
    )
    tip = tree.point(hand, (0.1, 0.05, 0.0))
    return System([tree], [OnSurface(tip, Sphere(center, radius), name="sphere")], q0=np.array([0.2, 0.3, -0.6, 0.1]))


def branching_loops(n_branches: int = 4, branch_dofs: int = 8, seed: int = 3) -> System:
    """A torso on two base joints with ``n_branches`` serial branches of ``branch_dofs`` mixed revolute
    and prismatic joints; each branch tip is held at its zero-configuration position by a spatial
    point-to-point closure. Default: 34 coordinates and 12 constraint rows (the benchmark mechanism).
    """
    rng = np.random.default_rng(seed)
    tree = RigidTree("branches", gravity=(0.0, 0.0, -9.81))
    yaw = tree.add_link("base_yaw", joint=Revolute(Z), mass=2.0, com=(0, 0, 0.1), inertia=(0.05, 0.05, 0.05))
    torso = tree.add_link(
        "torso", yaw, Revolute((0, 1, 0)), origin=(0, 0, 0.3), mass=5.0, com=(0, 0, 0.2), inertia=(0.2, 0.2, 0.1)
    )
    tips = []
    for b in range(n_branches):
        ang = 2 * np.pi * b / n_branches
        parent = tree.add_link(f"b{b}_mount", torso, Fixed(), origin=(0.2 * np.cos(ang), 0.2 * np.sin(ang), 0.2))
        for k in range(branch_dofs):
            axis = rng.normal(size=3)
            joint = Prismatic(axis) if k % 4 == 3 else Revolute(axis)
            parent = tree.add_link(
                f"b{b}_{k}",
                parent,
                joint,
                origin=(0.12 * np.cos(ang), 0.12 * np.sin(ang), 0.0) if k else (0, 0, 0),
                mass=0.4 + 0.2 * rng.random(),
                com=(0.06 * np.cos(ang), 0.06 * np.sin(ang), 0.0),
                inertia=(0.002, 0.003, 0.004),
            )
        tips.append(parent)
    q0 = np.zeros(tree.n_dofs)
    kin = tree.kinematics(q0)
    cons = [
        PointToPoint(
            tree.point(tip, (0.05, 0, 0)), Ground(kin.point_position(tip, np.array([0.05, 0, 0]))), name=f"foot{b}"
        )
        for b, tip in enumerate(tips)
    ]
    return System([tree], cons, q0=q0)


# ------------------------------------------------------------------ control examples of DE Section 5.4
def _planar_chain(tree: RigidTree, lengths, masses) -> list:
    """Serial chain of uniform rods with revolute joints about world z, each joint at the previous tip."""
    links, parent, origin = [], None, (0.0, 0.0, 0.0)
    for i, (L, m) in enumerate(zip(lengths, masses)):
        parent = tree.add_link(
            f"l{i + 1}", parent, Revolute(Z), origin=origin, mass=m, com=(L / 2, 0, 0), inertia=_rod_inertia(m, L)
        )
        links.append(parent)
        origin = (L, 0.0, 0.0)
    return links


def coupled_chain(
    lengths: Sequence[float] = (0.4,) * 6,
    masses: Sequence[float] = (1.0,) * 6,
    gravity: ArrayLike = (0.0, -9.81, 0.0),
    q0: ArrayLike | None = None,
) -> System:
    """Redundant planar chain with internal joint couplings [DE 5.4.1, Fig. 9].

    Six revolute joints about world z (tree ``"chain"``, links ``"l1"`` to ``"l6"``), uniform rods, each
    joint at the tip of the previous link. The first three joints are coupled [DE-94]:
    q₂ − q₁/3 = 0 (``"c2"``) and q₃ − 2q₁/3 = 0 (``"c3"``), e.g. a geared transmission. All six joints
    are actuated (S = I). n = 6, m_C = 2, p = 4.

    Parameters
    ----------
    lengths, masses : sequence of 6 floats
        Link lengths [m] and masses [kg].
    gravity : array_like (3,)
        Gravitational acceleration [m/s²].
    q0 : array_like (6,), optional
        Initial joint angles [rad]; default (0.6, 0.2, 0.4, 0.5, 0.4, 0.3), which satisfies [DE-94].

    Returns
    -------
    System
        The end point r_E of [DE 5.4.1] is ``tree.point(tree.link("l6"), (lengths[-1], 0, 0))`` with
        ``tree = system.trees[0]``.
    """
    tree = RigidTree("chain", gravity=gravity)
    l1, l2, l3, *_ = links = _planar_chain(tree, lengths, masses)
    cons = [LinearCoupling({l2: 1.0, l1: -1.0 / 3.0}, name="c2"), LinearCoupling({l3: 1.0, l1: -2.0 / 3.0}, name="c3")]
    q0 = np.array([0.6, 0.2, 0.4, 0.5, 0.4, 0.3]) if q0 is None else np.asarray(q0, dtype=float)
    return System([tree], cons, actuators=links, q0=q0)


def parallel_platform(
    base_radius: float = 1.0,
    platform_radius: float = 0.3,
    upper: float = 0.7,
    lower: float = 0.7,
    platform_mass: float = 1.0,
    link_mass: float = 0.5,
    gravity: ArrayLike = (0.0, -9.81, 0.0),
    q0: ArrayLike | None = None,
    *,
    twist: float = np.pi / 3,
) -> System:
    """Planar parallel mechanism: three two-link legs closing on a floating platform [DE 5.4.2, Fig. 11].

    One tree ``"platform_mechanism"`` with four branches from the ground, coordinates in DE's order:
    leg i (i = 1, 2, 3) has a passive hip q₂ᵢ₋₁ (link ``"hip{i}"``, length ``lower``) at base point
    Bᵢ = base_radius (cos αᵢ, sin αᵢ), αᵢ = 90°, 210°, 330°, and an actuated elbow q₂ᵢ (link
    ``"elbow{i}"``, length ``upper``); the platform pose is q₇ = x, q₈ = y (prismatic links ``"x"``,
    ``"y"``) and q₉ = θ (revolute link ``"platform"``, which carries the platform mass and a disc
    inertia). Loop closures [DE-96]: the tip of leg i coincides with the platform point
    Pᵢ = platform_radius (cos(αᵢ + twist), sin(αᵢ + twist)) (platform frame), planar rows
    ``"loop{i}"``. n = 9, m_C = 6, p = 3, k = 3 (S selects q₂, q₄, q₆, the complement of S̃ [DE-98]).

    Parameters
    ----------
    base_radius, platform_radius : float
        Radii of the base and platform attachment circles [m].
    upper, lower : float
        Lengths of the elbow (upper) and hip (lower) links of each leg [m].
    platform_mass, link_mass : float
        Platform and per-link masses [kg]; links are uniform rods.
    gravity : array_like (3,)
        Gravitational acceleration [m/s²].
    q0 : array_like (9,), optional
        Initial coordinates. Default: platform at the origin with θ = 0 and each leg solved in closed
        form with a positive (counter-clockwise) elbow angle.
    twist : float
        Angle of the platform points relative to the base points [rad]. With twist = 0 the three lines
        BᵢPᵢ meet at the platform centre when θ = 0, so the elbow task of [DE-97] is singular there;
        the default π/3 (inverted triangle) keeps both the elbow and the platform (q₇, q₈, q₉) tasks
        well conditioned at the default q0.

    Returns
    -------
    System

    Raises
    ------
    ModelError
        ``q0`` is None and a leg cannot reach its platform point.
    """
    tree = RigidTree("platform_mechanism", gravity=gravity)
    angles = np.radians([90.0, 210.0, 330.0])
    legs, q_legs = [], []
    for i, a in enumerate(angles):
        B = base_radius * np.array([np.cos(a), np.sin(a), 0.0])
        hip = tree.add_link(
            f"hip{i + 1}",
            None,
            Revolute(Z),
            origin=B,
            mass=link_mass,
            com=(lower / 2, 0, 0),
            inertia=_rod_inertia(link_mass, lower),
        )
        elbow = tree.add_link(
            f"elbow{i + 1}",
            hip,
            Revolute(Z),
            origin=(lower, 0, 0),
            mass=link_mass,
            com=(upper / 2, 0, 0),
            inertia=_rod_inertia(link_mass, upper),
        )
        legs.append(elbow)
        # Two-link inverse kinematics from Bᵢ to Pᵢ at the default platform pose (x, y, θ) = 0.
        d = platform_radius * np.array([np.cos(a + twist), np.sin(a + twist)]) - B[:2]
        c = (d @ d - lower**2 - upper**2) / (2 * lower * upper)
        if q0 is None and abs(c) > 1.0:
            raise ModelError(
                f"parallel_platform: leg {i + 1} cannot reach its platform point (|BP| = "
                f"{np.sqrt(d @ d):.4g} m, legs {lower} + {upper} m); pass q0"
            )
        e = np.arccos(np.clip(c, -1.0, 1.0))
        q_legs += [np.arctan2(d[1], d[0]) - np.arctan2(upper * np.sin(e), lower + upper * np.cos(e)), e]
    x = tree.add_link("x", None, Prismatic((1, 0, 0)))
    y = tree.add_link("y", x, Prismatic((0, 1, 0)))
    r2 = platform_mass * platform_radius**2
    plat = tree.add_link("platform", y, Revolute(Z), mass=platform_mass, inertia=(r2 / 4, r2 / 4, r2 / 2))
    P = platform_radius * np.column_stack([np.cos(angles + twist), np.sin(angles + twist), np.zeros(3)])
    cons = [
        PointToPoint(tree.point(leg, (upper, 0, 0)), tree.point(plat, P[i]), components=(0, 1), name=f"loop{i + 1}")
        for i, leg in enumerate(legs)
    ]
    q0 = np.array([*q_legs, 0.0, 0.0, 0.0]) if q0 is None else np.asarray(q0, dtype=float)
    return System([tree], cons, actuators=legs, q0=q0)


def underactuated_chain(
    lengths: Sequence[float] = (0.5, 0.5, 0.5),
    masses: Sequence[float] = (1.0, 1.0, 1.0),
    gravity: ArrayLike = (0.0, -9.81, 0.0),
    q0: ArrayLike = (0.3, 0.6, 0.4),
) -> System:
    """Underactuated redundant planar chain [DE 5.4.3, Fig. 14].

    Three revolute joints about world z (tree ``"chain3"``, links ``"l1"``..``"l3"``), uniform rods, no
    constraints; joint 1 is passive (S̃ = (1 0 0) [DE-100]), so the actuators are l2 and l3. n = p = 3,
    k = 2. The end point is ``tree.point(tree.link("l3"), (lengths[-1], 0, 0))``.

    Parameters
    ----------
    lengths, masses : sequence of 3 floats
        Link lengths [m] and masses [kg].
    gravity : array_like (3,)
        Gravitational acceleration [m/s²].
    q0 : array_like (3,)
        Initial joint angles [rad].

    Returns
    -------
    System
    """
    tree = RigidTree("chain3", gravity=gravity)
    links = _planar_chain(tree, lengths, masses)
    return System([tree], [], actuators=links[1:], q0=np.asarray(q0, dtype=float))
