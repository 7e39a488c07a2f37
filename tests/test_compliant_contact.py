"""Compliant contact (flexbody.constraints.compliant_contact): a point on prismatic joints striking and sliding on a
plane, against closed forms and scipy.

* Hertz impact (f = k δ^{3/2}, no dissipation): the largest penetration δ_max = (5 m v²/4k)^{2/5} and the contact
  time t_c = 2 δ_max/v ∫₀¹ dx/√(1 − x^{5/2}) (energy; the integral by scipy's quad), rebound at the impact speed.
* Hunt–Crossley dissipation: the rebound speed against scipy's solve_ivp on m ẍ = −k x^p (1 + d ẋ) and against the
  restitution relation d v (1 + e) = ln((1 + d v)/(1 − d e v)).
* Coulomb friction: a block sliding on the plane stops after v₀²/(2 μ g) (regularised by v_s: converging as v_s → 0).
* The Jacobians against central differences; bad input named.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import quad, solve_ivp

import flexbody as fb
from flexbody.constraints.compliant_contact import CompliantContact, restitution_of
from flexbody.errors import FlexbodyError

MASS, SPEED, STIFFNESS = 0.5, 2.0, 1e6  # kg, m/s, N/m^1.5


def _particle(gravity=0.0, height=0.01, **contact):
    """A point mass on prismatic joints x, z above the plane z = 0, and its contact (z below 0 penetrates)."""
    tree = fb.RigidTree("particle", gravity=(0.0, 0.0, -gravity))
    tree.add_link("slide", None, fb.Prismatic((1.0, 0.0, 0.0)))
    tree.add_link("mass", "slide", fb.Prismatic((0.0, 0.0, 1.0)), mass=MASS)
    contact = CompliantContact(tree.point("mass"), fb.Plane((0.0, 0.0, 1.0)), **contact)
    return fb.System([tree], forces=[contact], q0=(0.0, height)).assemble(), contact


def _impact(dissipation: float, t_end: float = 0.0096):
    """Released 0.1 mm above the plane at SPEED towards it (contact from t = 5e-5 s, about 8.5 ms long)."""
    asm, _ = _particle(stiffness=STIFFNESS, dissipation=dissipation, height=1e-4)
    run = fb.simulate(asm, t_end, integrator=fb.RK4(dt=4e-6), v0=(0.0, -SPEED), record_every=1)
    return run.times, run.q[:, 1], run.v[:, 1]


def test_hertz_impact_against_the_closed_form():
    times, z, vz = _impact(0.0)
    delta_max = (5.0 * MASS * SPEED**2 / (4.0 * STIFFNESS)) ** 0.4
    integral = quad(lambda x: 1.0 / np.sqrt(1.0 - x**2.5), 0.0, 1.0)[0]
    contact_time = 2.0 * delta_max / SPEED * integral
    assert -z.min() == pytest.approx(delta_max, rel=1e-6)
    inside = times[z < 0.0]
    measured = inside[-1] - inside[0]
    assert abs(measured - contact_time) <= 2 * (times[1] - times[0])  # the first and last steps in contact
    assert vz[-1] == pytest.approx(SPEED, rel=1e-6)  # no dissipation: it leaves at the impact speed


@pytest.mark.parametrize("dissipation", [0.05, 0.3])
def test_hunt_crossley_restitution_against_scipy_and_the_relation(dissipation):
    *_, vz = _impact(dissipation)

    def rhs(t, y):  # penetration x = −z and its rate
        x, v = y
        return [v, -(STIFFNESS / MASS) * max(x, 0.0) ** 1.5 * max(1.0 + dissipation * v, 0.0)]

    out = solve_ivp(rhs, (0.0, 0.0095), [0.0, SPEED], method="DOP853", rtol=1e-12, atol=1e-14, max_step=1e-5)
    scipy_e = -out.y[1, -1] / SPEED
    assert vz[-1] / SPEED == pytest.approx(scipy_e, rel=1e-6)
    assert scipy_e == pytest.approx(restitution_of(dissipation, SPEED), rel=1e-6)


def test_restitution_for_small_dissipation_is_one_minus_two_thirds_d_v():
    """The relation's expansion: e = 1 − ⅔ d v + O((d v)²) (Hunt & Crossley's α = ⅔ d)."""
    for dv in (1e-4, 1e-3):
        assert 1.0 - restitution_of(dv, 1.0) == pytest.approx(2.0 / 3.0 * dv, rel=2 * dv)


def test_sliding_block_stops_after_the_coulomb_distance():
    """Resting on the plane (its static penetration), pushed along x at v₀: it stops after v₀²/(2 μ g); the
    regularisation (v_s = 1e-4 m/s) leaves a creep well below 1e-3 of it."""
    g, mu, v0, k = 9.81, 0.4, 1.0, 1e7
    rest = -((MASS * g / k) ** (1 / 1.5))
    asm, _ = _particle(gravity=g, height=rest, stiffness=k, dissipation=1.0, friction=mu)
    run = fb.simulate(asm, 0.4, integrator=fb.GeneralizedAlpha(dt=1e-4), v0=(v0, 0.0))
    distance = v0**2 / (2 * mu * g)
    assert run.q[-1, 0] == pytest.approx(distance, rel=1e-3)
    assert abs(run.v[-1, 0]) < 1e-3
    assert np.abs(run.q[:, 1] - rest).max() < 1e-5  # it slides on the plane


@pytest.mark.parametrize("surface", [fb.Plane((0.3, 0.0, 1.0), (0.0, 0.0, 0.1)), fb.Sphere((0.0, 0.0, -1.0), 1.0)])
def test_jacobians_against_central_differences(surface):
    tree = fb.RigidTree("t")
    tree.add_link("l", None, fb.Prismatic((0.0, 0.0, 1.0)), mass=1.0)
    contact = CompliantContact(
        tree.point("l"), surface, stiffness=3e5, dissipation=0.2, friction=0.5, slip_velocity=0.05
    )
    rng = np.random.default_rng(4)
    x = np.array([0.1, -0.05, -0.01]) + 1e-3 * rng.standard_normal(3)
    xdot = np.array([0.08, -0.03, -0.2])

    def law(x, xdot, jacobians):
        return contact._contact(x, xdot, contact.point.gap_at(x), contact.point.normal(x), jacobians)

    F, dF_dx, dF_dv = law(x, xdot, True)
    assert np.linalg.norm(F) > 0.0
    h = 1e-7
    for j in range(3):
        e = np.zeros(3)
        e[j] = h
        np.testing.assert_allclose(
            dF_dx[:, j],
            (law(x + e, xdot, False)[0] - law(x - e, xdot, False)[0]) / (2 * h),
            rtol=1e-5,
            atol=1e-6 * np.abs(dF_dx).max(),
        )
        np.testing.assert_allclose(
            dF_dv[:, j],
            (law(x, xdot + e, False)[0] - law(x, xdot - e, False)[0]) / (2 * h),
            rtol=1e-5,
            atol=1e-6 * np.abs(dF_dv).max(),
        )


def test_bad_input_is_named():
    tree = fb.RigidTree("t")
    tree.add_link("l", None, fb.Prismatic((0.0, 0.0, 1.0)), mass=1.0)
    point, plane = tree.point("l"), fb.Plane((0.0, 0.0, 1.0))
    with pytest.raises(FlexbodyError, match="must be an anchor"):
        CompliantContact((0, 0, 0), plane, stiffness=1.0)
    with pytest.raises(FlexbodyError, match="cannot touch the fixed surface"):
        CompliantContact(fb.Ground((0.0, 0.0, 1.0)), plane, stiffness=1.0)
    with pytest.raises(FlexbodyError, match="ImplicitSurface's value is not a distance"):
        surface = fb.ImplicitSurface(
            lambda x: x[2], lambda x: np.array([[0.0, 0.0, 1.0]]), lambda x: np.zeros((1, 3, 3))
        )
        CompliantContact(point, surface, stiffness=1.0)
    for bad, match in (
        ({"stiffness": 0.0}, "stiffness"),
        ({"stiffness": 1.0, "exponent": 0.5}, "exponent"),
        ({"stiffness": 1.0, "friction": -0.1}, "friction"),
        ({"stiffness": 1.0, "dissipation": np.nan}, "dissipation"),
        ({"stiffness": 1.0, "slip_velocity": 0.0}, "slip_velocity"),
    ):
        with pytest.raises(FlexbodyError, match=match):
            CompliantContact(point, plane, **bad)


def test_a_flexible_cube_dropped_on_the_plane_never_gains_energy():
    """A soft 8-node cube (incompatible modes, Kelvin–Voigt 5 ms) falls 5 mm onto the plane on its four bottom
    nodes (contacts with dissipation and friction): the energy (kinetic, strain, gravity and the contacts' elastic
    energy) never grows, and at rest each contact carries a quarter of the weight, k δ^{3/2} = m g / 4 (measured
    bottom at 1.8271e-4 m against δ = 1.8186e-4 m at 0.4 s)."""
    mesh = fb.mesh.box((0.1, 0.1, 0.1), (1, 1, 1), origin=(0.0, 0.0, 0.005))
    material = fb.StVenantKirchhoff(young=1e6, poisson=0.3, density=1000.0, damping=0.005)
    cube = fb.FlexibleBody("cube", mesh, material)
    below = mesh.points[:, 2] < 0.006
    contacts = [
        CompliantContact(fb.Node(cube, int(i)), fb.Plane((0.0, 0.0, 1.0)), stiffness=1e6, dissipation=2.0, friction=0.3)
        for i in np.flatnonzero(below)
    ]
    asm = fb.System([cube], loads=[fb.Gravity(cube)], forces=contacts).assemble()
    run = fb.simulate(asm, 0.4, integrator=fb.GeneralizedAlpha(dt=2e-4))
    energy = run.histories["energy"]
    assert len(contacts) == 4
    assert np.max(np.diff(energy)) <= 1e-9 * abs(energy[0])  # measured 2.2e-16 J
    assert energy[-1] < energy[0] - 0.04  # the fall's 0.049 J is gone
    sag = (1.0 * 9.81 / 4 / 1e6) ** (1 / 1.5)
    assert np.abs(run.v[-1]).max() < 1e-3  # at rest (1.0e-4 m/s)
    np.testing.assert_allclose(asm.coordinates(cube, run.q[-1])[below, 2], -sag, rtol=0.02)
    # the contacts' and the material's dissipated work is what the energy lost: measured 4.1e-5 J of 0.050 J
    dissipated = run.histories["dissipated"]
    assert np.abs(energy[0] - energy - dissipated).max() <= 2e-3 * dissipated[-1]
    # the recorded contact histories: the four gaps, the normal forces carrying the weight, the friction inside
    # its cone; at rest friction holds the bottom face against its Poisson spreading (0.11 N per node, outward
    # pulls that cancel: no net horizontal force)
    gaps, normal = run.histories["contact_gap"], run.histories["contact_normal_force"]
    friction = run.histories["contact_friction_force"]
    assert gaps.shape == (run.n_steps, 4) and friction.shape == (run.n_steps, 4, 3)
    np.testing.assert_allclose(gaps[-1], -sag, rtol=0.02)
    assert normal[0].sum() == 0.0 and normal[-1].sum() == pytest.approx(9.81, rel=0.02)
    assert np.all(np.linalg.norm(friction, axis=2) <= 0.3 * normal + 1e-12)
    assert np.abs(friction[-1].sum(axis=0)).max() < 1e-9


def _ball_on_slope(theta_deg: float, mu: float, t_end: float = 0.4):
    """A ball (1 kg, radius 5 cm, I = ⅖ m R²) on prismatic x, z and a revolute y, resting on a slope of θ through
    the origin with its static penetration, released: (its acceleration down the slope from a quadratic fit after
    0.1 s, the run)."""
    theta, g, mass, radius, k = np.radians(theta_deg), 9.81, 1.0, 0.05, 1e7
    normal, down = np.array([np.sin(theta), 0.0, np.cos(theta)]), np.array([np.cos(theta), 0.0, -np.sin(theta)])
    tree = fb.RigidTree("ball", gravity=(0.0, 0.0, -g))
    tree.add_link("x", None, fb.Prismatic((1.0, 0.0, 0.0)))
    tree.add_link("z", "x", fb.Prismatic((0.0, 0.0, 1.0)))
    inertia = 0.4 * mass * radius**2
    ball = tree.add_link("ball", "z", fb.Revolute((0.0, 1.0, 0.0)), mass=mass, inertia=(inertia,) * 3)
    centre = (radius - (mass * g * np.cos(theta) / k) ** (1 / 1.5)) * normal
    contact = CompliantContact(
        tree.frame(ball), fb.Plane(normal), stiffness=k, dissipation=5.0, friction=mu, radius=radius
    )
    asm = fb.System([tree], forces=[contact], q0=(centre[0], centre[2], 0.0)).assemble()
    run = fb.simulate(asm, t_end, integrator=fb.GeneralizedAlpha(dt=2e-4))
    travelled = run.q[:, 0] * down[0] + run.q[:, 1] * down[2]
    late = run.times > 0.1
    return 2.0 * np.polyfit(run.times[late], travelled[late], 2)[0], run


def test_a_ball_rolls_down_a_slope_at_five_sevenths_g_sin_theta():
    """tan θ = 0.36 < 7μ/2 = 1.4: rolling without slip, a = 5/7 g sin θ (measured to 1e-6; slip speed 2.7e-5 m/s,
    the regularisation's creep)."""
    a, run = _ball_on_slope(20.0, 0.4)
    assert a == pytest.approx(5.0 / 7.0 * 9.81 * np.sin(np.radians(20.0)), rel=1e-4)
    assert run.histories["contact_slip_speed"][-1, 0] < 1e-3


def test_a_ball_slips_down_a_steep_slope_at_the_coulomb_acceleration():
    """tan θ = 1.19 > 7μ/2 = 1.05: it slips, a = g (sin θ − μ cos θ) (measured to 1e-6)."""
    theta = np.radians(50.0)
    a, run = _ball_on_slope(50.0, 0.3)
    assert a == pytest.approx(9.81 * (np.sin(theta) - 0.3 * np.cos(theta)), rel=1e-4)
    assert run.histories["contact_slip_speed"][-1, 0] > 0.1


def test_contacts_are_written_for_paraview(tmp_path):
    """``contacts.pvd``: one vertex per contact and step at the point that touches, with the recorded normal force and
    the force vector f_n n + f_t; read back with meshio."""
    import meshio

    asm, _ = _particle(gravity=9.81, height=0.001, stiffness=1e6, dissipation=0.1, friction=0.3)
    run = fb.simulate(asm, 0.02, integrator=fb.GeneralizedAlpha(dt=1e-4), v0=(0.5, 0.0))
    path = fb.io.write_contact_pvd(tmp_path, run, every=50)
    assert path.name == "contacts.pvd" and len(list(tmp_path.glob("contacts_*.vtu"))) == 5  # steps 0, 50, …, 200
    last = meshio.read(tmp_path / "contacts_0200.vtu")
    assert last.points.shape == (1, 3) and last.points[0] == pytest.approx(run.q[-1, [0, 0, 1]] * [1, 0, 1])
    f_n = run.histories["contact_normal_force"][-1, 0]
    assert last.point_data["normal_force"][0] == pytest.approx(f_n, rel=1e-12)
    force = last.point_data["force"][0]
    assert force[2] == pytest.approx(f_n, rel=1e-12) and abs(force[0]) <= 0.3 * f_n + 1e-12
    rigid = fb.simulate(fb.mechanisms.slider_crank().assemble(), 0.01, integrator=fb.RK4(dt=1e-3))
    assert fb.io.write_contact_pvd(tmp_path / "none", rigid) is None  # no contact, nothing written


def test_the_compliant_bounce_converges_to_the_rigid_one_as_the_stiffness_grows():
    """A ball dropped from 0.1 m on a Hunt–Crossley contact whose dissipation gives e = 0.8 at the impact speed
    (restitution_of): its first apex approaches the rigid bounce's e² h₀ as k grows, its error shrinking with the
    contact time, ∝ k^{-2/5} (a factor 10^{0.4} = 2.51 per decade). Measured −8.62e-2, −3.31e-2, −1.30e-2 at
    k = 1e5, 1e6, 1e7 N/m^1.5 (ratios 2.60, 2.55; −5.2e-3 at 1e8)."""
    from scipy.optimize import brentq

    g, h0, e = 9.81, 0.1, 0.8
    speed = np.sqrt(2 * g * h0)
    d = brentq(lambda x: restitution_of(x, speed) - e, 1e-6, 1.0)
    errors = []
    for k in (1e5, 1e6, 1e7):
        tree = fb.RigidTree("ball", gravity=(0.0, 0.0, -g))
        tree.add_link("z", None, fb.Prismatic((0.0, 0.0, 1.0)), mass=1.0)
        contact = CompliantContact(tree.point("z"), fb.Plane((0.0, 0.0, 1.0)), stiffness=k, dissipation=d)
        system = fb.System([tree], forces=[contact], q0=(h0,))
        run = fb.simulate(system, 0.3, integrator=fb.RK4(dt=1e-4))  # past the first apex; dt 5e-5: within 1e-5
        z = run.q[:, 0]
        first = np.flatnonzero(z < 0.0)[0]
        leaves = first + np.flatnonzero(z[first:] > 0.0)[0]
        errors.append(z[leaves:].max() / (e * e * h0) - 1.0)
    ratios = np.array(errors[:-1]) / np.array(errors[1:])
    assert all(x < 0 for x in errors) and np.all((ratios > 2.3) & (ratios < 2.8))
