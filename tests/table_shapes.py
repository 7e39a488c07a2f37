"""A crate and a capsule lying on a table (a fixed fb.Box or its mesh, its top face at z = 0.05 m, its edge at
x = 0.5 m), and the check of their contacts' gap rates over its edge, which the tests of a box's contact polygon and
of a shape's slots against a mesh share."""

import numpy as np
import pytest
from gap_rates import gap_rate_and_difference

import flexbody as fb

G = 9.81


def crate(table, x: float, tilt: float = 0.0, mass: float = 2.0, friction: float = 1.0):
    """(system, inertia): a 0.2 m cube of ``mass`` lying on ``table`` with its centre at ``x`` (tilted by ``tilt``
    about y)."""
    tree = fb.RigidTree("crate", gravity=(0.0, 0.0, -G))
    inertia = mass * 0.2**2 / 6.0
    tree.add_link("body", None, fb.FreeFlyer(), mass=mass, inertia=(inertia, inertia, inertia))
    contacts = fb.box_contacts(tree, "body", (0.2, 0.2, 0.2), table, friction=friction)
    return fb.System([tree], constraints=contacts, q0=(x, 0.0, 0.15, 0.0, tilt, 0.0)), inertia


def capsule(table, x: float, length: float = 0.3, radius: float = 0.05, mass: float = 1.0, friction: float = 1.0):
    """(system, inertia across): a capsule along x (``length`` of segment, ``radius``) lying on ``table`` with its
    centre at ``x``."""
    tree = fb.RigidTree("capsule", gravity=(0.0, 0.0, -G))
    inertia_axis = mass * radius**2 / 2.0
    inertia_across = mass * (3.0 * radius**2 + length**2) / 12.0
    tree.add_link("body", None, fb.FreeFlyer(), mass=mass, inertia=(inertia_axis, inertia_across, inertia_across))
    contacts = fb.capsule_contacts(tree, "body", length, radius, table, axis=(1.0, 0.0, 0.0), friction=friction)
    return fb.System([tree], constraints=contacts, q0=(x, 0.0, 0.05 + radius, 0.0, 0.0, 0.0)), inertia_across


def assert_gap_rates_over_the_edge(system, height: float) -> None:
    """At three random states of the shape lying 0–5 mm above ``height`` over the table's edge, turned about the
    vertical and moving in random directions: each contact's n·(J v) equals the central difference of its gap along
    the motion (relative 1e-6)."""
    rng = np.random.default_rng(0)
    asm = system.assemble()
    for _ in range(3):
        turn = rng.uniform(-0.5, 0.5)
        q = np.array([rng.uniform(0.4, 0.55), rng.uniform(-0.1, 0.1), height + rng.uniform(0.0, 0.005), 0, 0, turn])
        v = rng.normal(0.0, 1.0, 6) * np.array([1.0, 1.0, 1.0, 0.0, 0.0, 1.0])
        for contact in asm.contacts:
            rate, difference = gap_rate_and_difference(asm, contact, q, v, 1e-7)
            assert rate == pytest.approx(difference, rel=1e-6, abs=1e-8)


def rest_over_the_edge(system, t_end: float = 0.3) -> tuple[float, float, float]:
    """(the largest speed [m/s or rad/s] over ``t_end`` [s] of the shape lying from rest on the table, its contacts'
    normal forces' sum and the part of it past x = 0.499 (on the table's edge) [N] at the end): the lever rule's
    terms."""
    run = fb.simulate(system, t_end, integrator=fb.MoreauJean(dt=1e-3))
    forces = run.histories["contact_normal_force"][-1]
    asm = system.assemble()
    ws = asm.workspace(run.times[-1], run.q[-1], run.v[-1])
    points = np.array([c.contact_point(ws)[0] for c in asm.contacts])
    return float(np.abs(run.v).max()), float(forces.sum()), float(forces[points[:, 0] > 0.499].sum())
