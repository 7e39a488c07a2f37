"""fb.cylinder_contacts (flexbody.constraints.rim_point): a cylinder's rim points nearest a plane, against the closed
forms of a solid cylinder on a slope (rolling at ⅔ g sin θ while tan θ ≤ 3μ, else slipping at g(sin θ − μ cos θ))
and its rest standing on an end."""

from __future__ import annotations

import math

import numpy as np
import pytest
from slope_closed_forms import slope_errors

import flexbody as fb
from flexbody.errors import FlexbodyError

G, MASS, R, LENGTH = 9.81, 1.0, 0.05, 0.2


def _cylinder(plane: fb.Plane, axis, q0, mu: float, T: float):
    tree = fb.RigidTree("cylinder", gravity=(0.0, 0.0, -G))
    axial, transverse = 0.5 * MASS * R * R, MASS * (3 * R * R + LENGTH * LENGTH) / 12
    inertia = tuple(axial if a else transverse for a in axis)
    body = tree.add_link("body", None, fb.FreeFlyer(), mass=MASS, inertia=inertia)
    contacts = fb.cylinder_contacts(tree, body, LENGTH, R, plane, axis=axis, friction=mu)
    return fb.simulate(fb.System([tree], constraints=contacts, q0=q0), T, integrator=fb.MoreauJean(dt=1e-3))


@pytest.mark.parametrize("degrees", [20.0, 40.0, 45.0, 60.0])
def test_a_cylinder_on_a_slope_rolls_or_slips_as_the_closed_forms_say(degrees):
    """Axis across the slope, μ = 0.3 (3μ = 0.9: rolls at 20° and 40°, slips at 45° and 60°), 0.3 s: the centre's
    velocity down the slope within 1e-13 of the closed form's a t (measured 9.9e-16 – 5.9e-15), no motion off the
    plane (< 1e-12 m/s), no penetration (gaps ≥ −1e-15 m)."""
    theta, mu = math.radians(degrees), 0.3
    n = np.array([-math.sin(theta), 0.0, math.cos(theta)])
    run = _cylinder(fb.Plane(n), (0.0, 1.0, 0.0), [*(R * n), 0.0, 0.0, 0.0], mu, 0.3)
    error, across = slope_errors(run, theta, mu)
    assert error < 1e-13 and across < 1e-12
    assert run.histories["contact_gap"].min() > -1e-15


def test_a_cylinder_standing_on_an_end_rests_on_its_rim():
    """Standing on the floor (axis along z): at rest after 0.2 s, the six rim points of the lower end carry m g
    (to 1e-12) and the upper end's none."""
    run = _cylinder(fb.Plane((0.0, 0.0, 1.0)), (0.0, 0.0, 1.0), [0.0, 0.0, LENGTH / 2, 0.0, 0.0, 0.0], 0.3, 0.2)
    force = run.histories["contact_normal_force"][-1]
    assert force[:6].sum() == pytest.approx(MASS * G, rel=1e-12) and np.all(force[6:] == 0.0)
    assert np.abs(run.v[-1]).max() < 1e-12


def test_cylinder_contacts_refuse_what_they_cannot_take():
    tree = fb.RigidTree("cylinder")
    tree.add_link("body", None, fb.FreeFlyer(), mass=1.0, inertia=(1.0, 1.0, 1.0))
    with pytest.raises(FlexbodyError, match="rim_points must be an integer ≥ 3"):
        fb.cylinder_contacts(tree, "body", 0.2, 0.05, fb.Plane((0.0, 0.0, 1.0)), rim_points=2)
    with pytest.raises(FlexbodyError, match="radius"):
        fb.cylinder_contacts(tree, "body", 0.2, -0.05, fb.Plane((0.0, 0.0, 1.0)))
