"""The nonsmooth stepper (flexbody.solvers.moreau_jean) with unilateral contacts (fb.Contact), against the closed forms
of rigid bodies on a plane in uniform gravity, and a flexible cube dropped on the floor.

* A block below its friction angle does not creep (10 s); above it, it slides at g (sin θ − μ cos θ).
* A ball rolls without slipping at 5/7 g sin θ while tan θ ≤ 7μ/2, and slips at g (sin θ − μ cos θ) above.
* A box on its four corners (a free body) slides to rest at t = v₀/(μ g); its stopping distance v₀²/(2 μ g)
  converges at first order in dt.
* A ball dropped from h₀ with restitution e rises to e^{2k} h₀ after the k-th impact (an error below dt·v/apex).
* The energy never grows; a flexible cube lands without penetration and rests on its nodes with Σ f_n = m g.
"""

from __future__ import annotations

import itertools
import math
import types

import numpy as np
import pytest
from contact_energy import assert_contacts_give_no_energy
from uniaxial_svk import uniaxial_stretches

import flexbody as fb
from flexbody.errors import ConvergenceError, FlexbodyError
from flexbody.solvers.coulomb_problem import solve_coulomb

G = 9.81


def _slope(theta: float) -> np.ndarray:
    return np.array([math.sin(theta), 0.0, math.cos(theta)])


def _block(theta: float, friction: float, mass: float = 2.0) -> fb.System:
    """A point mass on prismatic joints x, z resting on the plane through the origin tilted by θ."""
    tree = fb.RigidTree("block", gravity=(0.0, 0.0, -G))
    tree.add_link("x", None, fb.Prismatic((1.0, 0.0, 0.0)))
    tree.add_link("mass", "x", fb.Prismatic((0.0, 0.0, 1.0)), mass=mass)
    contact = fb.Contact(tree.point("mass"), fb.Plane(_slope(theta)), friction=friction, name="slope")
    return fb.System([tree], constraints=[contact])


def _down_slope(run, theta: float, column: str = "v") -> np.ndarray:
    x = getattr(run, column)
    return x[:, 0] * math.cos(theta) - x[:, 1] * math.sin(theta)


def test_a_block_below_its_friction_angle_does_not_creep():
    theta, mu = math.radians(25.0), 0.5  # tan θ = 0.466 < μ
    run = fb.simulate(_block(theta, mu), 10.0, integrator=fb.MoreauJean(dt=1e-2))
    assert np.abs(run.q).max() < 1e-15  # measured 0 m after 10 s
    assert np.abs(run.v).max() < 1e-15
    normal = run.histories["contact_normal_force"][:, 0]
    friction = np.linalg.norm(run.histories["contact_friction_force"][:, 0], axis=1)
    np.testing.assert_allclose(normal, 2.0 * G * math.cos(theta), rtol=1e-13)
    np.testing.assert_allclose(friction, 2.0 * G * math.sin(theta), rtol=1e-12)  # inside the cone: it sticks


@pytest.mark.parametrize("angle", [35.0, 60.0])
def test_a_block_above_its_friction_angle_slides_at_the_coulomb_acceleration(angle):
    theta, mu = math.radians(angle), 0.5
    run = fb.simulate(_block(theta, mu), 1.0, integrator=fb.MoreauJean(dt=1e-3))
    accel = G * (math.sin(theta) - mu * math.cos(theta))
    speed = _down_slope(run, theta)
    late = run.times > 0.01
    np.testing.assert_allclose(speed[late], accel * run.times[late], rtol=1e-9)  # measured 1.1e-14
    assert np.abs(run.histories["contact_gap"]).max() < 1e-15  # it slides on the plane, not above it
    np.testing.assert_allclose(run.histories["contact_slip_speed"][late, 0], speed[late], rtol=1e-12)


def _ball(theta: float, friction: float, radius: float = 0.05, mass: float = 1.0) -> fb.System:
    tree = fb.RigidTree("ball", gravity=(0.0, 0.0, -G))
    tree.add_link("x", None, fb.Prismatic((1.0, 0.0, 0.0)))
    tree.add_link("z", "x", fb.Prismatic((0.0, 0.0, 1.0)))
    inertia = 0.4 * mass * radius**2
    ball = tree.add_link("ball", "z", fb.Revolute((0.0, 1.0, 0.0)), mass=mass, inertia=(inertia,) * 3)
    contact = fb.Contact(tree.frame(ball), fb.Plane(_slope(theta)), friction=friction, radius=radius)
    centre = radius * _slope(theta)
    return fb.System([tree], constraints=[contact], q0=(centre[0], centre[2], 0.0))


@pytest.mark.parametrize("angle", [20.0, 45.0, 47.0, 60.0])
def test_a_ball_rolls_at_five_sevenths_g_sin_theta_or_slips_above_tan_theta_seven_mu_halves(angle):
    """μ = 0.3: it rolls up to atan(1.05) = 46.4° and slips above."""
    theta, mu = math.radians(angle), 0.3
    run = fb.simulate(_ball(theta, mu), 0.5, integrator=fb.MoreauJean(dt=1e-3))
    rolls = math.tan(theta) <= 3.5 * mu
    accel = 5.0 / 7.0 * G * math.sin(theta) if rolls else G * (math.sin(theta) - mu * math.cos(theta))
    late = run.times > 0.01
    np.testing.assert_allclose(_down_slope(run, theta)[late], accel * run.times[late], rtol=1e-9)  # 3e-15
    slip = run.histories["contact_slip_speed"][late, 0]
    if rolls:
        assert slip.max() < 1e-12
    else:  # the centre gains (sin θ − μ cos θ) g, the spin only (5/2) μ g cos θ per second
        np.testing.assert_allclose(slip, G * (math.sin(theta) - 3.5 * mu * math.cos(theta)) * run.times[late], 1e-9)


def _box(friction: float, half=(0.2, 0.1, 0.05), mass: float = 2.0) -> fb.System:
    """A box on a free flyer resting on four corner contacts on the floor z = 0."""
    a, b, c = half
    tree = fb.RigidTree("box", gravity=(0.0, 0.0, -G))
    inertia = (mass / 3 * (b * b + c * c), mass / 3 * (a * a + c * c), mass / 3 * (a * a + b * b))
    body = tree.add_link("body", None, fb.FreeFlyer(), mass=mass, inertia=inertia)
    corners = [(sx * a, sy * b, -c) for sx in (-1, 1) for sy in (-1, 1)]
    contacts = [
        fb.Contact(tree.point(body, corner), fb.Plane((0.0, 0.0, 1.0)), friction=friction, name=f"corner{k}")
        for k, corner in enumerate(corners)
    ]
    return fb.System([tree], constraints=contacts, q0=(0.0, 0.0, c, 0.0, 0.0, 0.0))


def test_a_box_on_its_corners_slides_to_rest_at_v0_over_mu_g():
    mu, v0, dt = 0.4, 1.0, 1e-3
    system = _box(mu)
    stop = v0 / (mu * G)
    distances = []
    for step in (4e-3, 2e-3, dt):
        run = fb.simulate(system, 0.4, integrator=fb.MoreauJean(dt=step), v0=(v0, 0, 0, 0, 0, 0))
        distances.append(run.q[-1, 0])
    sliding = (run.times > 0.005) & (run.times < stop - dt)
    np.testing.assert_allclose(run.v[sliding, 0], v0 - mu * G * run.times[sliding], rtol=1e-9)  # 1.1e-14
    at_rest = run.times > stop + dt
    assert np.abs(run.v[at_rest]).max() < 1e-12 * v0  # stopped for good (measured 2.4e-15), and level
    assert np.abs(run.q[:, 2] - 0.05).max() < 1e-12 and np.abs(run.q[:, 3:]).max() < 1e-12
    normal = run.histories["contact_normal_force"]
    np.testing.assert_allclose(normal.sum(axis=1), 2.0 * G, rtol=1e-12)  # the corners carry the weight
    friction = np.linalg.norm(run.histories["contact_friction_force"], axis=2)
    assert np.all(friction <= mu * normal * (1 + 1e-12) + 1e-15)
    energy = run.histories["energy"]
    assert np.diff(energy).max() <= 1e-13
    # the stopping distance v₀²/(2 μ g), first order in dt: measured errors 2.0e-3, 1.0e-3, 5.0e-4 m
    errors = np.abs(np.array(distances) - v0**2 / (2 * mu * G))
    orders = np.log2(errors[:-1] / errors[1:])
    assert np.all((orders > 0.9) & (orders < 1.1)) and errors[-1] < 1e-3


def test_a_dropped_ball_rises_to_e_to_the_2k_h0():
    e, h0 = 0.8, 0.1
    tree = fb.RigidTree("ball", gravity=(0.0, 0.0, -G))
    tree.add_link("z", None, fb.Prismatic((0.0, 0.0, 1.0)), mass=1.0)
    contact = fb.Contact(tree.point("z"), fb.Plane((0.0, 0.0, 1.0)), restitution=e)
    system = fb.System([tree], constraints=[contact], q0=(h0,))
    errors = []
    for dt in (4e-4, 2e-4, 1e-4):
        run = fb.simulate(system, 0.5, integrator=fb.MoreauJean(dt=dt))
        impacts = np.flatnonzero(run.histories["contact_normal_force"][:, 0] > 0.0)
        flights = [f for f in np.split(np.arange(run.n_steps), impacts) if f.size > 3][1:3]
        apex = np.array([run.q[f, 0].max() for f in flights])
        errors.append(np.abs(apex / (h0 * e ** (2 * np.arange(1, 3))) - 1.0).max())
        assert np.diff(run.histories["energy"]).max() <= 1e-15  # never grows (flight loses g²h²/2 a step)
        assert run.histories["contact_gap"].min() >= 0.0  # it never enters the floor
    # measured 3.7e-3, 2.1e-3, 1.3e-3 (the first two apexes): first order, each below the bound dt·v/(e⁴h₀) of a
    # bounce that leaves from a gap of up to dt·v (v = √(2 g h₀) the impact speed; the phase of the impact within
    # the step makes the error irregular below that bound)
    bounds = np.array([4e-4, 2e-4, 1e-4]) * math.sqrt(2 * G * h0) / (h0 * e**4)
    assert np.all(np.array(errors) < bounds) and errors[-1] < errors[0] / 2 and errors[-1] < 2e-3


def test_impacts_slower_than_the_bounce_speed_are_inelastic():
    """A point mass dropped 1 cm (impact at √(2 g h) = 0.443 m/s), e = 0.5: with MoreauJean(bounce_speed=0.2) the
    impact's step sends it up at e times its speed (1e-12 relative, as without a bounce speed); with 0.5 m/s the
    impact's step lands it on the floor, where it stays (height and speed zero after, to 1e-15)."""
    tree = fb.RigidTree("ball", gravity=(0.0, 0.0, -G))
    tree.add_link("z", None, fb.Prismatic((0.0, 0.0, 1.0)), mass=1.0)
    contact = fb.Contact(tree.point("z"), fb.Plane((0.0, 0.0, 1.0)), restitution=0.5)
    system = fb.System([tree], constraints=[contact], q0=(0.01,))
    bouncing = fb.simulate(system, 0.08, integrator=fb.MoreauJean(dt=1e-4, bounce_speed=0.2))
    impact = int(np.flatnonzero(bouncing.histories["contact_normal_force"][:, 0] > 0.0)[0])
    down, up = bouncing.v[impact, 0], bouncing.v[impact + 1, 0]
    assert down < -0.4 and up == pytest.approx(-0.5 * down, rel=1e-12)
    staying = fb.simulate(system, 0.08, integrator=fb.MoreauJean(dt=1e-4, bounce_speed=0.5))
    impact = int(np.flatnonzero(staying.histories["contact_normal_force"][:, 0] > 0.0)[0])
    assert staying.v[impact, 0] < -0.4 and np.abs(staying.q[impact + 1 :, 0]).max() < 1e-15
    assert np.abs(staying.v[impact + 2 :, 0]).max() < 1e-15
    with pytest.raises(FlexbodyError, match="bounce_speed"):
        fb.MoreauJean(dt=1e-3, bounce_speed=-0.1)


def test_impacts_slower_than_the_steps_own_velocity_change_are_inelastic():
    """Without a bounce speed, dt = 1e-3 s (gravity changes the approach by g dt = 9.8 mm/s a step), e = 0.5: a point
    mass 1 µm above the floor moving down at 3 mm/s strikes within the first step slower than that, which the step
    cannot tell from resting contact: it lands (closing the gap at 1 mm/s) and stays on the floor (height and speed
    below 1e-15 after); at 30 mm/s it leaves at e times its speed (1e-12 relative)."""
    tree = fb.RigidTree("ball", gravity=(0.0, 0.0, -G))
    tree.add_link("z", None, fb.Prismatic((0.0, 0.0, 1.0)), mass=1.0)
    contact = fb.Contact(tree.point("z"), fb.Plane((0.0, 0.0, 1.0)), restitution=0.5)
    system = fb.System([tree], constraints=[contact], q0=(1e-6,))
    for speed in (0.003, 0.03):
        run = fb.simulate(system, 0.01, integrator=fb.MoreauJean(dt=1e-3), v0=(-speed,))
        assert run.histories["contact_normal_force"][0, 0] > 0.0  # the first step strikes
        if speed < G * 1e-3:  # it lands within the step (v = −gap/dt), then rests
            assert run.v[1, 0] == pytest.approx(-1e-6 / 1e-3, rel=1e-12)
            assert np.abs(run.q[1:, 0]).max() < 1e-15 and np.abs(run.v[2:, 0]).max() < 1e-15
        else:
            assert run.v[1, 0] == pytest.approx(0.5 * speed, rel=1e-12)


def test_a_flexible_cube_lands_without_penetration_and_rests_on_its_nodes():
    mesh = fb.mesh.box((0.1, 0.1, 0.1), (2, 2, 2), origin=(0.0, 0.0, 0.005))
    material = fb.StVenantKirchhoff(young=1e6, poisson=0.3, density=1000.0, damping=0.005)
    cube = fb.FlexibleBody("cube", mesh, material)
    below = np.flatnonzero(mesh.points[:, 2] < 0.006)
    floor = fb.Plane((0.0, 0.0, 1.0))
    contacts = [fb.Contact(fb.Node(cube, int(i)), floor, friction=0.3, name=f"node{i}") for i in below]
    system = fb.System([cube], loads=[fb.Gravity(cube)], constraints=contacts)
    run = fb.simulate(system, 0.4, integrator=fb.MoreauJean(dt=1e-3))
    energy = run.histories["energy"]
    assert np.diff(energy).max() <= 1e-12 * energy[0]  # measured 1.1e-16 J
    assert run.histories["contact_gap"].min() > -1e-15  # measured -5.6e-17 m
    normal, friction = run.histories["contact_normal_force"], run.histories["contact_friction_force"]
    assert normal[-1].sum() == pytest.approx(1.0 * G, rel=1e-12)  # 1 kg at rest on nine nodes
    assert np.all(np.linalg.norm(friction, axis=2) <= 0.3 * normal + 1e-12)
    assert np.abs(friction[-1].sum(axis=0)).max() < 1e-12  # holding the Poisson spreading: no net force
    assert np.abs(run.v[-1]).max() < 1e-12


def test_the_contact_solver_meets_the_coulomb_law_on_random_problems():
    """Local 3 × 3 problems with coupled normal and tangential directions: take-off, stick or slip on the cone
    boundary against the slip velocity (the law, checked on the solution)."""
    rng = np.random.default_rng(7)
    for _ in range(50):
        B = rng.normal(size=(3, 3))
        W = B @ B.T + 0.1 * np.eye(3)
        w = rng.normal(size=3)
        p = np.zeros(3)
        _, change = solve_coulomb(W, w, np.array([0.4]), p, 1e-14, 50)
        u = W @ p + w
        assert change <= 1e-14 and p[0] >= 0.0 and u[0] >= -1e-12 and abs(p[0] * u[0]) < 1e-12
        slip, friction = np.hypot(*u[1:]), np.hypot(*p[1:])
        assert friction <= 0.4 * p[0] * (1 + 1e-12) + 1e-15
        if slip > 1e-12:
            assert friction == pytest.approx(0.4 * p[0], rel=1e-10)
            assert p[1:] @ u[1:] == pytest.approx(-friction * slip, rel=1e-9)


def test_where_the_sweeps_stall_the_contacts_states_give_the_exact_impulses():
    """A rod (mass 1 kg, length 1 m) on two frictional contacts (μ = 0.5) whose stretching is stiff (compliance 1e-7):
    two friction impulses squeezing it are a direction W nearly ignores (eigenvalue 5e-8 of 2–5), along which
    Gauss–Seidel creeps (5 000 sweeps leave a change of 1.8e-7). From the states of its last iterate
    (coulomb_problem.polished) the sweeps converge in a few more, to a solution of the law: one end sticks inside the
    cone, the other slides on it against its slip."""
    from flexbody.solvers.coulomb_problem import polished

    m, inertia, length, compliance, h = 1.0, 0.1, 1.0, 1e-7, 1e-3
    inverse_mass = np.diag([1 / m, 1 / m, 1 / m, 1 / inertia, compliance])  # x, y, z, θ, stretch
    G_rod = np.array(
        [
            [0, 0, 1, -length / 2, 0], [1, 0, 0, 0, -0.5], [0, 1, 0, 0, 0],
            [0, 0, 1, length / 2, 0], [1, 0, 0, 0, 0.5], [0, 1, 0, 0, 0],
        ],
        dtype=float,
    )  # fmt: skip
    W = G_rod @ inverse_mass @ G_rod.T
    w = G_rod @ np.array([1e-4, 0.0, -G * h, 0.0, 1e-9])  # falling, creeping along x, stretching
    mu = np.array([0.5, 0.5])
    p = np.array([m * G * h / 2, 1e-3, 0.0, m * G * h / 2, -1e-3, 0.0])  # a squeeze in the warm start
    _, change = solve_coulomb(W, w, mu, p, 1e-12, 5000)
    assert change > 1e-9  # stalled
    p = polished(W, w, mu, p)
    sweeps, change = solve_coulomb(W, w, mu, p, 1e-12, 100)
    assert change <= 1e-12 and sweeps < 10
    u = (W @ p + w).reshape(2, 3)
    forces = p.reshape(2, 3)
    assert np.all(forces[:, 0] > 0.0) and np.abs(u[:, 0]).max() < 1e-15  # both press, neither lifts
    for (normal, *friction), (_, *slip), coefficient in zip(forces, u, mu):
        size, speed = np.hypot(*friction), np.hypot(*slip)
        assert size <= coefficient * normal * (1 + 1e-12)
        if speed > 1e-15:  # it slides: on the cone, against its slip
            assert size == pytest.approx(coefficient * normal, rel=1e-10)
            assert np.dot(friction, slip) == pytest.approx(-size * speed, rel=1e-9)


def test_where_four_redundant_corners_cannot_all_press_one_is_released():
    """A cube's four bottom corners (12 rows of rank 6) with normal bounds that no rigid velocity meets at once (one
    off by 2e-7 m/s), frictionless: Gauss–Seidel drifts (5 000 sweeps leave a change of 7.7e-7); the polish that
    releases a corner gives the impulses of the linear complementarity problem 0 ≤ p_n ⊥ W_nn p_n + w_n ≥ 0 (the
    quadratic program min ½ pᵀW p + wᵀp, p ≥ 0) that enumerating its 16 complementary bases solves (1e-12 relative;
    L-BFGS-B, the earlier oracle, came within 1.8e-6 of it with scipy 1.17), with u_n ≥ 0 and p_n u_n = 0 to
    round-off (2.4e-19)."""
    from flexbody.solvers.coulomb_problem import meets_the_law, solve_coulomb_polished

    mass, inertia = 2.0, 2.0 * 0.2**2 / 6.0
    arms = np.array([(sx, sy, -0.1) for sx in (-0.1, 0.1) for sy in (-0.1, 0.1)])
    rows = []
    for r in arms:  # each corner's (n, t₁, t₂) = (z, x, y) rows of [I, −[r]×]
        skew = np.array([[0.0, -r[2], r[1]], [r[2], 0.0, -r[0]], [-r[1], r[0], 0.0]])
        rows.append(np.hstack([np.eye(3), -skew])[[2, 0, 1]])
    G_box = np.vstack(rows)
    W = G_box @ np.diag([1 / mass] * 3 + [1 / inertia] * 3) @ G_box.T
    w = G_box @ np.array([0.01, -0.02, -0.05, 0.3, -0.2, 0.1])  # a rigid approach
    w[0::3] -= np.array([0.03, 0.03, 0.0, 2e-7])  # bounds that no rigid velocity meets, by 2e-7 m/s
    mu = np.zeros(4)
    p = np.zeros(12)
    _, drift = solve_coulomb(W, w, mu, p.copy(), 1e-12, 5000)
    assert drift > 1e-9
    solution = solve_coulomb_polished(W, w, mu, p, 1e-12, 5000)
    assert solution.solved and meets_the_law(W, w, mu, p)
    W_n, w_n = W[0::3, 0::3], w[0::3]
    exact = []  # the linear complementarity problem's solutions, each of its 16 complementary bases solved
    for pressed in itertools.product((False, True), repeat=4):
        on = np.flatnonzero(pressed)
        x = np.zeros(4)
        x[on] = np.linalg.lstsq(W_n[np.ix_(on, on)], -w_n[on], rcond=None)[0] if on.size else 0.0
        u = W_n @ x + w_n
        if x.min() >= 0.0 and u.min() >= -1e-15 and np.abs(u[on]).max(initial=0.0) <= 1e-15:
            exact.append(x)
    assert len(exact) == 1
    np.testing.assert_allclose(p[0::3], exact[0], rtol=1e-12)
    u_n = (W @ p + w)[0::3]
    assert u_n.min() > -1e-15 and np.abs(p[0::3] * u_n).max() < 1e-16


def test_a_box_tumbling_onto_the_floor_lands_and_rests_on_four_redundant_corners():
    """A 0.2 m cube dropped from 30 cm in three random orientations, e = 0: it lands on edges and corners and comes
    down on four corners, which a rigid box presses redundantly (12 rows of rank 6) with bounds that no one velocity
    meets exactly where one corner closes within the step as another lands — Gauss–Seidel stalls there, and the
    polish's states decide (coulomb_problem._polish_states: a corner released, one on its cone sticking or sliding;
    before them four of these six runs stopped). The runs end (1.2 s), no corner deeper than 2e-6 m (a tumbling
    corner's arc within a step; measured 1.1e-6). Without friction the energy never grows (1e-12 of the start's);
    with μ = 0.5 it rests on a face, the corners carrying m g (1e-9), below the energy it started with (its steps at
    rest on four corners raised it by up to 6.3e-10 J while penetrations under 1 nm were recovered at β a step;
    closed within the step since, six probed runs raise it by none; not asserted step by step)."""
    from scipy.spatial.transform import Rotation

    rng = np.random.default_rng(0)
    for mu in (0.0, 0.5):
        for rotation in Rotation.random(3, random_state=rng):
            tree = fb.RigidTree("crate", gravity=(0.0, 0.0, -G))
            inertia = 2.0 * 0.2**2 / 6.0
            tree.add_link("body", None, fb.FreeFlyer(), mass=2.0, inertia=(inertia, inertia, inertia))
            corners = fb.box_contacts(tree, "body", (0.2, 0.2, 0.2), fb.Plane((0.0, 0.0, 1.0)), friction=mu)
            system = fb.System([tree], constraints=corners, q0=(0.0, 0.0, 0.3, *rotation.as_rotvec()))
            run = fb.simulate(system, 1.2, integrator=fb.MoreauJean(dt=1e-3))
            energy = run.histories["energy"]
            assert run.histories["contact_gap"].min() > -2e-6
            if mu == 0.0:
                assert np.diff(energy).max() <= 1e-12 * energy[0]
            else:
                assert run.histories["contact_normal_force"][-1].sum() == pytest.approx(2.0 * G, rel=1e-9)
                assert np.abs(run.v[-1]).max() < 1e-9 and energy[-1] < energy[0]


@pytest.mark.parametrize(("mu", "e"), [(0.5, 0.3), (0.8, 0.6)])
def test_a_box_tumbling_with_friction_and_restitution_lands_and_rests(mu, e):
    """The cube of the test before, μ = 0.5 and e = 0.3 (and μ = 0.8, e = 0.6), dropped from 30 cm in three random
    orientations: it bounces on corners and edges and comes to rest on four. Before the step's solver took cone
    programs and impulses nearest the law, all three runs (μ = 0.5) stopped with a ConvergenceError (and six of six
    such runs): where corners strike while others lift, Gauss–Seidel stalls. The runs end (1.5 s), at rest on a
    face with the corners carrying m g (1e-9),
    no corner deeper than 2e-6 m, below the energy they started with, and every contact problem whose sweeps stalled
    met the law to LAW_TOL (its residual recorded in the run's statistics; 1.1e-10 at most measured). The contacts
    never give energy: in no step do the impulses raise the kinetic energy over the free velocity's (in the step's
    metric; asserted 1e-12 J, where steps without impulses give 0 to round-off): every step with impulses loses
    energy to them (at most −3.2e-5 J with μ = 0.5, e = 0.3 and −1.7e-6 J with μ = 0.8, e = 0.6 measured). Where the
    energy rises in a step (up to 1.4e-5 J at μ = 0.8, e = 0.6, the box rocking on an edge), the step's smooth part
    raises it, as it does a pendulum's without contacts (next test)."""
    from scipy.spatial.transform import Rotation

    from flexbody.solvers.coulomb_problem import LAW_TOL

    rng = np.random.default_rng(1)
    for rotation in Rotation.random(6, random_state=rng)[:3]:
        tree = fb.RigidTree("crate", gravity=(0.0, 0.0, -G))
        inertia = 2.0 * 0.2**2 / 6.0
        tree.add_link("body", None, fb.FreeFlyer(), mass=2.0, inertia=(inertia, inertia, inertia))
        corners = fb.box_contacts(tree, "body", (0.2, 0.2, 0.2), fb.Plane((0.0, 0.0, 1.0)), friction=mu, restitution=e)
        system = fb.System([tree], constraints=corners, q0=(0.0, 0.0, 0.3, *rotation.as_rotvec()))
        run = fb.simulate(system, 1.5, integrator=fb.MoreauJean(dt=1e-3))
        energy = run.histories["energy"]
        work, impulsive = _contact_work(system, run, 1e-3)
        assert np.nanmax(np.abs(work[~impulsive])) < 1e-12  # the measure: no impulse, no work
        assert np.nanmax(work[impulsive]) < 1e-12  # the contacts never give energy
        recorded = np.asarray(run.histories["contact_work"])[:-1]  # the last state's step is not taken
        assert np.nanmax(np.abs(recorded - work)) < 1e-13  # the stepper's own record (and the suite's check) agree
        assert run.histories["contact_gap"].min() > -2e-6
        assert run.histories["contact_normal_force"][-1].sum() == pytest.approx(2.0 * G, rel=1e-9)
        assert np.abs(run.v[-1]).max() < 1e-9 and energy[-1] < energy[0]
        assert run.metadata["statistics"]["largest_law_residual"] <= LAW_TOL


def _contact_work(system, run, h: float) -> tuple[np.ndarray, np.ndarray]:
    """(W_c, impulsive) (steps,): the energy the contact impulses give a rigid model in each step,
    ½ v⁺ᵀ M v⁺ − ½ v_fᵀ M v_f with M and the free velocity v_f = vₙ + h M⁻¹(τ − h(qₙ, vₙ)) at the step's start (the
    impulses' share of its kinetic energy in the step's metric; τ = 0), and whether it had impulses. Steps across a
    rotation vector's chart switch (‖φ‖ past π: φ becomes φ − 2π φ/‖φ‖, of the other sign, which re-expresses v) are
    left out (NaN)."""
    asm = system.assemble()
    work, impulsive = np.full(len(run.times) - 1, np.nan), np.zeros(len(run.times) - 1, dtype=bool)
    forces = run.histories["contact_normal_force"]
    for n in range(len(run.times) - 1):
        if run.q[n + 1, 3:] @ run.q[n, 3:] < 0.0:  # switched to the rotation vector of the other sign
            continue
        terms = asm.workspace(run.times[n], run.q[n], run.v[n]).terms()
        M = np.asarray(terms.M)
        free = run.v[n] + h * np.linalg.solve(M, -terms.h)
        after = run.v[n + 1]
        work[n] = 0.5 * after @ M @ after - 0.5 * free @ M @ free
        impulsive[n] = forces[n].sum() > 0.0  # the record of a state holds the impulses of the step from it
    return work, impulsive


def test_a_system_without_contacts_steps_by_semi_implicit_euler():
    """No contacts (it raised numpy's ValueError on an empty concatenation): a mass falling from rest moves as
    semi-implicit Euler says, v_k = −g h k, z_k = z₀ − g h² k (k + 1)/2 (1e-12 m), and a pendulum's energy rises and
    falls by O(h) from step to step (semi-implicit Euler on a rotation: rises of up to 4.3e-5 J a step measured at
    dt = 1e-3, E = −2.65 J), bounded over 2 s (range 9.2e-3 J; asserted 2e-2)."""
    tree = fb.RigidTree("mass", gravity=(0.0, 0.0, -G))
    tree.add_link("z", None, fb.Prismatic((0.0, 0.0, 1.0)), mass=1.0)
    run = fb.simulate(fb.System([tree], q0=(1.0,)), 0.05, integrator=fb.MoreauJean(dt=1e-3))
    k = np.arange(run.n_steps)
    np.testing.assert_allclose(run.q[:, 0], 1.0 - G * 1e-6 * k * (k + 1) / 2, atol=1e-12)
    pendulum = fb.RigidTree("pendulum", gravity=(0.0, 0.0, -G))
    pendulum.add_link(
        "arm", None, fb.Revolute((0.0, 1.0, 0.0)), mass=1.0, com=(0.0, 0.0, -0.5), inertia=(0.01, 0.01, 0.01)
    )
    swing = fb.simulate(fb.System([pendulum], q0=(1.0,)), 2.0, integrator=fb.MoreauJean(dt=1e-3))
    energy = swing.histories["energy"]
    assert np.diff(energy).max() > 0.0 and np.ptp(energy) < 2e-2


def test_bad_contacts_and_settings_are_named():
    tree = fb.RigidTree("p", gravity=(0.0, 0.0, -G))
    tree.add_link("z", None, fb.Prismatic((0.0, 0.0, 1.0)), mass=1.0)
    floor = fb.Plane((0.0, 0.0, 1.0))
    with pytest.raises(FlexbodyError, match=r"restitution must be in \[0, 1\]"):
        fb.Contact(tree.point("z"), floor, restitution=1.5)
    with pytest.raises(FlexbodyError, match="friction coefficient must be non-negative"):
        fb.Contact(tree.point("z"), floor, friction=-0.1)
    curve = fb.ImplicitSurface(lambda x: x[:2], lambda x: np.eye(3)[:2], lambda x: np.zeros((2, 3, 3)), n_rows=2)
    with pytest.raises(FlexbodyError, match=r"must be a surface \(one row\), got 2 rows"):
        fb.Contact(tree.point("z"), curve)
    plane = fb.ImplicitSurface(lambda x: x[2], lambda x: np.eye(3)[2], lambda x: np.zeros((3, 3)))
    with pytest.raises(FlexbodyError, match="not a distance"):  # the compliant law needs a distance
        fb.CompliantContact(tree.point("z"), plane, stiffness=1.0)
    with pytest.raises(FlexbodyError, match="fixed to the ground"):
        fb.Contact(fb.Ground(), floor)
    system = fb.System([tree], constraints=[fb.Contact(tree.point("z"), floor, name="floor")], q0=(0.1,))
    with pytest.raises(FlexbodyError, match=r"unilateral contacts \['floor'\] need the nonsmooth stepper"):
        fb.simulate(system, 0.1, integrator=fb.RK4(dt=1e-3))
    for solver in (fb.linearize, fb.modal_analysis):
        with pytest.raises(FlexbodyError, match=r"unilateral contacts \['floor'\], which .* does not take"):
            solver(system)
    with pytest.raises(FlexbodyError, match=r"unilateral contacts \['floor'\], which the static solve takes for"):
        fb.solve_static(system)
    sunk = fb.System([tree], constraints=[fb.Contact(tree.point("z"), floor, name="floor")], q0=(-1e-3,))
    with pytest.raises(
        fb.StateError,
        match=r"penetrates 1 contact\(s\) deeper than initial_penetration = 1e-09 m: "
        r"'floor' by 0.001 m",
    ):
        fb.simulate(sunk, 0.1, integrator=fb.MoreauJean(dt=1e-3))
    pushed = fb.simulate(sunk, 0.1, integrator=fb.MoreauJean(dt=1e-3, initial_penetration=1e-2))
    assert pushed.histories["contact_gap"][-1, 0] > -1e-9  # pushed out at 0.2 of it a step (measured below 1e-12)
    assert np.max(pushed.histories["contact_work"]) > 0.0  # pushing the penetration out gives energy, which ...
    assert_contacts_give_no_energy(
        pushed.times, pushed.histories
    )  # ... the suite's check allows (the steps start penetrating)
    touching = {**pushed.histories, "contact_gap": np.zeros_like(pushed.histories["contact_gap"])}
    with pytest.raises(AssertionError, match=r"the contacts gave .* J in the step from t = 0 s"):
        assert_contacts_give_no_energy(pushed.times, touching)  # the same work without a penetration to push out
    with pytest.raises(FlexbodyError, match="MoreauJean: theta must be"):
        fb.MoreauJean(dt=1e-3, theta=0.3)
    with pytest.raises(FlexbodyError, match="MoreauJean: dt must be"):
        fb.MoreauJean(dt=0.0)


def test_a_contact_problem_that_does_not_converge_stops_with_the_last_good_state(monkeypatch):
    """Sweeps that cannot meet the tolerance (one sweep, 1e-30), with no candidate confirmed (none may sweep here) or
    taken for meeting the law (none can, here): the run stops, naming the contacts, with the states before."""
    from flexbody.solvers import coulomb_problem

    monkeypatch.setattr(coulomb_problem, "CONFIRMING_SWEEPS", 0)
    monkeypatch.setattr(coulomb_problem, "LAW_TOL", -1.0)
    system = _box(0.4)
    with pytest.raises(ConvergenceError, match=r"did not converge in 1 sweeps.*corner0") as caught:
        fb.simulate(system, 0.05, integrator=fb.MoreauJean(dt=1e-3, max_sweeps=1, tol=1e-30), v0=(1.0, 0, 0, 0, 0, 0))
    assert caught.value.last_good.n_steps == 0 or caught.value.last_good.times[-1] < 0.05


def test_flexbody_info_lists_the_contacts_and_results_keep_their_histories(tmp_path):

    from flexbody.cli.info import describe_case

    case = types.SimpleNamespace(build=lambda: _box(0.4), __name__="box", __file__="box.py")
    text = describe_case(case)
    assert "Unilateral contacts 4 (nonsmooth stepper fb.MoreauJean)" in text
    assert "corner0: friction 0.4, restitution 0" in text
    run = fb.simulate(_box(0.4), 0.02, integrator=fb.MoreauJean(dt=1e-3), v0=(1.0, 0, 0, 0, 0, 0))
    run.save(tmp_path)
    loaded = fb.Results.load(tmp_path)
    for key in ("contact_gap", "contact_normal_force", "contact_friction_force", "contact_slip_speed"):
        np.testing.assert_array_equal(loaded.histories[key], run.histories[key])
    assert loaded.metadata["integrator"] == "MoreauJean" and loaded.metadata["integrator_settings"]["dt"] == 1e-3
    path = fb.plots.plot_histories(loaded, tmp_path / "contacts.png", panels=("contacts", "energy"))
    assert path.stat().st_size > 1000


def test_the_user_guide_example_runs_as_written():
    """The guide's block on a 25° slope with μ = 0.5 (docs/user_guide.md, "Unilateral contact"): it does not creep."""
    import re
    from pathlib import Path

    text = (Path(__file__).parents[1] / "docs" / "user_guide.md").read_text()
    section = text.split("### Unilateral contact and the nonsmooth stepper\n", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, flags=re.S).group(1)
    scope = {"fb": fb, "np": np}
    exec(code, scope)
    assert np.abs(scope["res"].q[-1]).max() < 1e-12


def test_unilateral_contacts_are_written_for_paraview_and_shown_by_the_viewer(tmp_path):
    """contacts.pvd of a nonsmooth run: a vertex per contact at the corner that touches, with the recorded forces;
    ``flexbody view`` draws them as arrows beside the links."""
    import meshio

    from flexbody.io import view

    run = fb.simulate(_box(0.4), 0.02, integrator=fb.MoreauJean(dt=1e-3), v0=(1.0, 0, 0, 0, 0, 0))
    path = fb.io.write_contact_pvd(tmp_path, run, every=10)
    assert path is not None and path.name == "contacts.pvd"
    last = meshio.read(sorted(tmp_path.glob("contacts_*.vtu"))[-1])
    assert last.points.shape == (4, 3) and np.abs(last.points[:, 2]).max() < 1e-12  # the corners on the floor
    np.testing.assert_array_equal(last.point_data["normal_force"], run.histories["contact_normal_force"][-1])
    np.testing.assert_allclose(last.point_data["force"][:, 2].sum(), 2.0 * G, rtol=1e-12)
    with pytest.raises(FlexbodyError, match="pass recorded="):
        fb.io.contacts.contact_mesh(run.system, run.times[-1], run.q[-1], run.v[-1])
    fb.io.write_link_pvd(tmp_path, run, every=10)
    drawn = view.plotter(tmp_path, window_size=(320, 240), off_screen=True)
    try:
        arrows = drawn.actors["contacts"].mapper.dataset
        assert arrows.n_points > 0 and {"box:links", "box:joints"} <= set(drawn.actors)
    finally:
        drawn.close()


def test_a_failed_run_resumes_to_the_uninterrupted_history(tmp_path):
    """A sliding box whose input turns NaN at 0.05 s stops; resumed from its checkpoint (with the contact solver's
    warm start), it repeats the uninterrupted run."""
    system = _box(0.4).assemble()
    v0 = (1.0, 0, 0, 0, 0, 0)

    def failing(t, q, v):
        return np.full(6, np.nan) if t > 0.05 else np.zeros(6)

    run = tmp_path / "run"
    with pytest.raises(fb.StateError):
        fb.simulate(system, 0.1, integrator=fb.MoreauJean(dt=1e-3), v0=v0, tau=failing, save_to=run, save_every=7)
    resumed = fb.resume(system, run)
    plain = fb.simulate(system, 0.1, integrator=fb.MoreauJean(dt=1e-3), v0=v0)
    assert resumed.metadata["resumed_at"][0] < 0.05 and resumed.n_steps == plain.n_steps
    np.testing.assert_array_equal(resumed.times, plain.times)
    assert np.abs(resumed.q - plain.q).max() <= 1e-13 and np.abs(resumed.v - plain.v).max() <= 1e-13
    for key in ("contact_normal_force", "contact_friction_force", "contact_gap"):
        assert np.abs(resumed.histories[key] - plain.histories[key]).max() <= 1e-12, key


def test_shapes_make_the_contacts_of_their_support_points():
    """box_contacts: the eight corners (a box on its face carries its weight on four, sliding as the hand-made
    corners do); capsule_contacts: two end balls (a capsule lying on the floor rolls about its axis, its ends carry
    half the weight each); node_contacts: the boundary of a mesh (26 of a 2 × 2 × 2 brick mesh's 27 nodes)."""
    tree = fb.RigidTree("box", gravity=(0.0, 0.0, -G))
    inertia = (2.0 / 3 * (0.01 + 0.0025), 2.0 / 3 * (0.04 + 0.0025), 2.0 / 3 * (0.04 + 0.01))
    tree.add_link("body", None, fb.FreeFlyer(), mass=2.0, inertia=inertia)
    corners = fb.box_contacts(tree, "body", (0.4, 0.2, 0.1), fb.Plane((0.0, 0.0, 1.0)), friction=0.4)
    assert [c.name for c in corners] == [f"box{k}" for k in range(8)]
    system = fb.System([tree], constraints=corners, q0=(0.0, 0.0, 0.05, 0.0, 0.0, 0.0))
    made = fb.simulate(system, 0.1, integrator=fb.MoreauJean(dt=1e-3), v0=(1.0, 0, 0, 0, 0, 0))
    by_hand = fb.simulate(_box(0.4), 0.1, integrator=fb.MoreauJean(dt=1e-3), v0=(1.0, 0, 0, 0, 0, 0))
    np.testing.assert_allclose(made.v, by_hand.v, atol=1e-13)  # the upper corners never touch
    assert np.all(made.histories["contact_normal_force"][:, 4:] == 0.0)

    capsule = fb.RigidTree("capsule", gravity=(0.0, 0.0, -G))
    capsule.add_link("body", None, fb.FreeFlyer(), mass=1.0, inertia=(0.01, 0.01, 0.001))
    ends = fb.capsule_contacts(capsule, "body", 0.3, 0.05, fb.Plane((0.0, 0.0, 1.0)), axis=(1.0, 0.0, 0.0))
    rest = fb.simulate(
        fb.System([capsule], constraints=ends, q0=(0.0, 0.0, 0.05, 0.0, 0.0, 0.0)),
        0.05,
        integrator=fb.MoreauJean(dt=1e-3),
    )
    np.testing.assert_allclose(rest.histories["contact_normal_force"][-1], [G / 2, G / 2], rtol=1e-12)
    assert np.abs(rest.v[-1]).max() < 1e-12

    mesh = fb.mesh.box((0.1, 0.1, 0.1), (2, 2, 2))
    cube = fb.FlexibleBody("cube", mesh, fb.StVenantKirchhoff(young=1e6, poisson=0.3, density=1000.0))
    boundary = fb.node_contacts(cube, fb.Plane((0.0, 0.0, 1.0)))
    assert len(boundary) == 26 and 13 not in [c.anchor.index for c in boundary]  # node 13: the centre
    assert len(fb.node_contacts(cube, fb.Plane((0.0, 0.0, 1.0)), "z0")) == 9


def test_an_elastic_block_pressed_on_a_frictionless_plane_compresses_uniformly_as_svk_says():
    """A 0.1 m cube (2 × 2 × 2 bricks, E = 1 MPa, ν = 0.3, Kelvin–Voigt 2 ms) on nine frictionless bottom-node
    contacts, pressed by 200 N spread over its top (a dead traction), settles into uniaxial compression, which the
    bricks represent exactly: F = diag(a, a, b) with S_xx = 0 and b S_zz = −P/A (St Venant–Kirchhoff, solved by
    scipy's fsolve). Measured: b and a within 2.2e-16; at rest to 5e-15 m/s; Σ f_n = 200 N to 5e-16."""
    young, nu, size, load = 1e6, 0.3, 0.1, 200.0
    mesh = fb.mesh.box((size, size, size), (2, 2, 2))
    body = fb.FlexibleBody("block", mesh, fb.StVenantKirchhoff(young=young, poisson=nu, density=1000.0, damping=2e-3))
    system = fb.System(
        [body],
        loads=[fb.SurfaceTraction(body, "z1", total=(0.0, 0.0, -load))],
        constraints=fb.node_contacts(body, fb.Plane((0.0, 0.0, 1.0)), "z0"),
    )
    run = fb.simulate(system, 0.3, integrator=fb.MoreauJean(dt=1e-3), record_every=10)
    a, b = uniaxial_stretches(young, nu, load / size**2)
    X = run.system.coordinates(body, run.q[-1]).reshape(-1, 3)
    assert X[:, 2].max() / size == pytest.approx(b, rel=1e-12)
    assert (X[:, 0].max() - X[:, 0].min()) / size == pytest.approx(a, rel=1e-12)
    assert np.abs(run.v[-1]).max() < 1e-10
    assert run.histories["contact_normal_force"][-1].sum() == pytest.approx(load, rel=1e-12)


@pytest.mark.slow
def test_bounce_heights_converge_with_the_step():
    """The study behind test_a_dropped_ball_rises_to_e_to_the_2k_h0, to dt = 2.5e-5 s and three bounces (≈ 30 s):
    the apex errors stay below dt·v/(e^{2k} h₀) and shrink with dt; measured for the first apex 7.6e-3, 2.2e-3,
    1.0e-3, 4.5e-4, 1.6e-4, 2.2e-4 at dt = 8e-4 … 2.5e-5 s (the phase of the impact in its step makes them irregular
    below the bound)."""
    e, h0 = 0.8, 0.1
    tree = fb.RigidTree("ball", gravity=(0.0, 0.0, -G))
    tree.add_link("z", None, fb.Prismatic((0.0, 0.0, 1.0)), mass=1.0)
    contact = fb.Contact(tree.point("z"), fb.Plane((0.0, 0.0, 1.0)), restitution=e)
    system = fb.System([tree], constraints=[contact], q0=(h0,))
    speed = math.sqrt(2 * G * h0)
    first = []
    for dt in (8e-4, 4e-4, 2e-4, 1e-4, 5e-5, 2.5e-5):
        run = fb.simulate(system, 0.75, integrator=fb.MoreauJean(dt=dt), record_every=1)
        impacts = np.flatnonzero(run.histories["contact_normal_force"][:, 0] > 0.0)
        flights = [f for f in np.split(np.arange(run.n_steps), impacts) if f.size > 3][1:4]
        apex = np.array([run.q[f, 0].max() for f in flights])
        closed = h0 * e ** (2 * np.arange(1, len(apex) + 1))
        assert len(apex) == 3
        assert np.all(np.abs(apex / closed - 1.0) < dt * speed / closed)
        first.append(abs(apex[0] / closed[0] - 1.0))
    assert first[-1] < first[0] / 10 and max(first[-2:]) < 1e-3


def test_a_bead_in_a_frictionless_bowl_oscillates_with_the_period_of_its_lagrangian():
    """A point mass on the paraboloid z = a(x² + y²) (an ImplicitSurface: s = z − a(x² + y²), the gap s/‖∇s‖), released
    at rest 1 cm off the axis, slides back and forth inside. Its Lagrangian ½ m ẋ²(1 + 4a²x²) − m g a x² gives the
    period T = 4 ∫₀^A √((1 + 4a²x²)/(2 g a (A² − x²))) dx (scipy's quad): 1.0000999925 times the small-amplitude
    2π/√(2ag). Measured: the mean half-period from the zero crossings within 8.1e-7 of T/2 (semi-implicit Euler's
    O((ω dt)²)); the gap never below −9.8e-9 m (the tangent step's penetration, recovered)."""
    from scipy.integrate import quad

    a, amplitude = 1.0, 0.01
    tree = fb.RigidTree("bead", gravity=(0.0, 0.0, -G))
    tree.add_link("x", None, fb.Prismatic((1.0, 0.0, 0.0)))
    tree.add_link("z", "x", fb.Prismatic((0.0, 0.0, 1.0)), mass=1.0)
    bowl = fb.ImplicitSurface(
        lambda x: np.array([x[2] - a * (x[0] ** 2 + x[1] ** 2)]),
        lambda x: np.array([[-2 * a * x[0], -2 * a * x[1], 1.0]]),
        lambda x: np.diag([-2 * a, -2 * a, 0.0])[None],
    )
    system = fb.System([tree], constraints=[fb.Contact(tree.point("z"), bowl)], q0=(amplitude, a * amplitude**2))
    run = fb.simulate(system, 3.0, integrator=fb.MoreauJean(dt=1e-3))
    x = run.q[:, 0]
    crossings = np.flatnonzero(np.sign(x[:-1]) != np.sign(x[1:]))
    times = run.times[crossings] - x[crossings] * np.diff(run.times)[0] / (x[crossings + 1] - x[crossings])

    def integrand(angle):  # x = A sin(angle)
        x_ = amplitude * np.sin(angle)
        return np.sqrt((1 + 4 * a * a * x_ * x_) / (2 * G * a))  # the integrand times dx/d(angle)

    period = 4 * quad(integrand, 0.0, np.pi / 2, epsabs=1e-14, epsrel=1e-13)[0]
    assert np.diff(times).mean() == pytest.approx(period / 2, rel=1e-5)
    assert run.histories["contact_gap"].min() > -1e-7 and run.histories["contact_normal_force"][10:, 0].min() > 0.0


def test_a_stiff_reduced_body_lands_with_its_modal_stiffness_implicit():
    """A Craig–Bampton bar (E = 10 GPa, 1 m, three modes) on a free-flyer frame falls 5 cm onto the floor with point
    contacts at its two end faces. Its modes are stiff for dt = 1e-3 s: taken explicitly its energy grew tenfold by
    8 ms; the step takes the modal stiffness (and damping) linearly implicit, as the flexible bodies'. Measured: the
    energy never rises (largest step-to-step change −5.6e-12 J); the ends land at 0.123 s and carry the bar, Σ f_n
    = (1 − 2.8e-8) m g over the last 20 ms of 0.4 s; the lowest gap −8.3e-10 m. At 0.262 s the Gauss–Seidel sweeps
    stall on the friction impulses squeezing the stiff bar (a direction W nearly ignores, eigenvalue 7e-8 of 1–2.4):
    the contacts' states (both sticking) give the exact impulses (coulomb_problem.polished), and the run goes on."""
    from flexbody.reduced import ReducedBody

    mesh = fb.mesh.box(size=(1.0, 0.05, 0.05), divisions=(4, 1, 1), order=2, origin=(0.0, -0.025, -0.025))
    material = fb.StVenantKirchhoff(young=1e10, poisson=0.3, density=1000.0, damping=0.01)
    bar = fb.FlexibleBody("bar", mesh, material)
    tree = fb.RigidTree("frame", gravity=(0.0, 0.0, -G))
    link = tree.add_link("body", joint=fb.FreeFlyer())
    reduced = ReducedBody("bar", fb.solvers.craig_bampton(bar, "x0", 3), link, geometric_stiffening=False)
    floor = fb.Plane((0.0, 0.0, 1.0), (0.0, 0.0, -0.075))
    ends = [fb.Contact(reduced.point(face), floor, friction=0.5, name=f"end{face}") for face in ("x0", "x1")]
    run = fb.simulate(fb.System([tree, reduced], constraints=ends), 0.4, integrator=fb.MoreauJean(dt=1e-3))
    assert np.diff(run.histories["energy"]).max() <= 1e-12
    normal = run.histories["contact_normal_force"]
    assert normal[-20:].sum(axis=1).mean() == pytest.approx(bar.mass() * G, rel=1e-6)  # at rest on its ends
    assert run.histories["contact_gap"].min() > -1e-8


def test_a_box_surface_is_a_signed_distance_and_a_point_slides_off_its_edge_on_time():
    """fb.Box: value, gradient and Hessian against central differences off a face, an edge and a corner and inside,
    the distance against the nearest point by hand; a point sliding at 1 m/s on its top (frictionless) leaves it at
    the edge, x = 0.2 m at t = 0.2 s, and falls freely after: z = top − g (t − 0.2)²/2 at 0.4 s (to dt)."""
    R = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])  # turned a quarter about z
    box = fb.Box((0.1, 0.0, 0.0), (0.2, 0.4, 0.2), rotation=R)  # half sizes 0.1 (along y), 0.2 (along −x), 0.1
    for point, distance in (
        ((0.1, 0.0, 0.3), 0.2),  # above the top face
        ((0.1 + 0.25, 0.15, 0.0), np.hypot(0.05, 0.05)),  # off a vertical edge
        ((0.1 - 0.3, 0.2, 0.2), np.sqrt(3) * 0.1),  # off a corner
        ((0.1, 0.0, 0.05), -0.05),  # inside, 5 cm below the top
    ):
        x = np.asarray(point, dtype=float)
        assert box.value(x)[0] == pytest.approx(distance, rel=1e-12)
        step = 1e-6
        numeric = np.array([(box.value(x + step * e)[0] - box.value(x - step * e)[0]) / (2 * step) for e in np.eye(3)])
        np.testing.assert_allclose(box.gradient(x)[0], numeric, atol=1e-8)
        hessian = np.array(
            [(box.gradient(x + step * e)[0] - box.gradient(x - step * e)[0]) / (2 * step) for e in np.eye(3)]
        )
        np.testing.assert_allclose(box.hessian(x)[0], hessian, atol=1e-5)

    tree = fb.RigidTree("point", gravity=(0.0, 0.0, -G))
    tree.add_link("x", None, fb.Prismatic((1.0, 0.0, 0.0)))
    tree.add_link("z", "x", fb.Prismatic((0.0, 0.0, 1.0)), mass=1.0)
    table = fb.Box((0.0, 0.0, -0.1), (0.4, 0.4, 0.2))  # its top at z = 0, its edge at x = 0.2
    system = fb.System([tree], constraints=[fb.Contact(tree.point("z"), table)])
    run = fb.simulate(system, 0.4, integrator=fb.MoreauJean(dt=1e-4), v0=(1.0, 0.0))
    np.testing.assert_allclose(run.v[:, 0], 1.0, rtol=1e-12)  # frictionless: nothing slows it
    on_top = run.times < 0.2 - 1e-4
    assert np.abs(run.q[on_top, 1]).max() < 1e-12  # on the top until the edge
    assert run.q[-1, 1] == pytest.approx(-G * 0.2**2 / 2, rel=2e-3)  # −0.196298 against −0.196200: the fall's O(dt)


def test_the_saddle_point_solver_takes_many_right_sides_at_once():
    """SaddlePointSolver.solve with k right sides (the contact columns of a step with bilateral rows) equals k solves
    of one (a rigid block, a sparse flexible block, general rows and a node row eliminated)."""
    import scipy.sparse as sp

    from flexbody.linalg.saddle_point import SaddlePointSolver

    rng = np.random.default_rng(0)
    n_r, n_f, m = 4, 12, 5
    A_r = rng.normal(size=(n_r, n_r))
    A_r = A_r @ A_r.T + n_r * np.eye(n_r)
    A_f = sp.random(n_f, n_f, density=0.3, random_state=1)
    A_f = (A_f @ A_f.T + n_f * sp.eye(n_f)).tocsr()
    node_row = sp.csr_matrix(([1.0], ([0], [n_r + 3])), shape=(1, n_r + n_f))
    Phi = sp.vstack([sp.random(m, n_r + n_f, density=0.4, random_state=2), node_row]).tocsr()
    solver = SaddlePointSolver(n_r)
    solver.factor(A_r, A_f, Phi)
    R1, R2 = rng.normal(size=(n_r + n_f, 7)), rng.normal(size=(m + 1, 7))
    X, Y = solver.solve(R1, R2)
    for j in range(7):
        x, y = solver.solve(R1[:, j], R2[:, j])
        np.testing.assert_allclose(X[:, j], x, atol=1e-13)
        np.testing.assert_allclose(Y[:, j], y, atol=1e-12)
