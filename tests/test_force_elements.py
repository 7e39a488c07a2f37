"""Force elements (springs, dampers, bushings, user generalized forces) against closed forms, the
Andrews' squeezer benchmark, energy conservation and finite differences of their potentials."""

import numpy as np
import pytest
from scipy.integrate import cumulative_simpson
from scipy.optimize import brentq
from scipy.spatial.transform import Rotation

import flexbody as fb
from flexbody.constraints import Node
from flexbody.errors import FlexbodyError, StateError
from flexbody.mechanisms.squeezer import REFERENCE_ANGLES, benchmark_order

NO_GRAVITY = (0.0, 0.0, 0.0)


def _cart(m=2.0, k=50.0, c=1.5, rest=0.3, x0=0.1):
    tree = fb.RigidTree("cart", gravity=NO_GRAVITY)
    cart = tree.add_link("cart", None, fb.Prismatic(axis=(1, 0, 0)), mass=m, inertia=(1e-3,) * 3)
    spring = fb.SpringDamper(fb.Ground((-rest, 0, 0)), tree.point(cart), stiffness=k, damping=c, rest_length=rest)
    return fb.System([tree], forces=[spring], q0=[x0])


def _damped_oscillation(t, m=2.0, k=50.0, c=1.5, x0=0.1):
    wn, zeta = np.sqrt(k / m), c / (2.0 * np.sqrt(k * m))
    wd = wn * np.sqrt(1.0 - zeta**2)
    return x0 * np.exp(-zeta * wn * t) * (np.cos(wd * t) + zeta * wn / wd * np.sin(wd * t))


def test_spring_damper_matches_the_damped_oscillator_explicitly():
    res = fb.simulate(_cart(), 2.0, integrator=fb.RK4(dt=1e-3))
    assert np.max(np.abs(res.q[:, 0] - _damped_oscillation(res.times))) < 1e-10


def test_spring_damper_matches_the_damped_oscillator_implicitly():
    errors = []
    for dt in (2e-3, 1e-3):
        res = fb.simulate(_cart(), 1.0, integrator=fb.GeneralizedAlpha(dt=dt, rho_inf=1.0))
        errors.append(np.max(np.abs(res.q[:, 0] - _damped_oscillation(res.times))))
    assert errors[1] < 2e-6
    assert 3.0 < errors[0] / errors[1] < 5.0  # second order


def test_joint_spring_damper_matches_the_torsional_oscillator():
    izz, k, c, theta0 = 0.02, 3.0, 0.05, 0.4
    tree = fb.RigidTree("disc", gravity=NO_GRAVITY)
    disc = tree.add_link("disc", None, fb.Revolute(), mass=1.0, inertia=(0.01, 0.01, izz))
    res = fb.simulate(
        fb.System([tree], forces=[fb.JointSpringDamper(disc, k, c, rest=0.1)], q0=[theta0]),
        1.0,
        integrator=fb.RK4(dt=5e-4),
    )  # RK4 error ~ (ω dt)⁴: 1e-11 here, 2e-10 at 1e-3 s
    expected = 0.1 + _damped_oscillation(res.times, m=izz, k=k, c=c, x0=theta0 - 0.1)
    assert np.max(np.abs(res.q[:, 0] - expected)) < 1e-10


def test_static_pendulum_held_by_a_joint_spring_matches_the_closed_form():
    m, L, k, g = 1.5, 0.8, 20.0, 9.81
    tree = fb.RigidTree("bar", gravity=(0.0, -g, 0.0))
    bar = tree.add_link("bar", None, fb.Revolute(), mass=m, com=(L / 2, 0, 0), inertia=(1e-4, 0.08, 0.08))
    system = fb.System([tree], forces=[fb.JointSpringDamper(bar, k)])
    theta = fb.solve_static(system, load_steps=2).q[-1, 0]
    expected = brentq(lambda x: k * x + m * g * L / 2 * np.cos(x), -np.pi / 2, 0.0)  # k θ = −m g (L/2) cos θ
    assert abs(theta - expected) < 1e-10


def test_andrews_squeezer_matches_the_benchmark_at_30_ms():
    asm = fb.mechanisms.andrews_squeezer().assemble()
    res = fb.simulate(asm, 0.03, integrator=fb.RK4(dt=1e-5), consistent_initial=False, record_every=100)
    assert np.max(np.abs(benchmark_order(res.q[-1]) - REFERENCE_ANGLES)) < 1e-8


def _spatial_chain():
    """Three links with revolute x, y, z joints and a prismatic one, under gravity."""
    tree = fb.RigidTree("chain", gravity=(0.0, 0.0, -9.81))
    a = tree.add_link("a", None, fb.Revolute((1, 0, 0)), mass=1.0, com=(0.1, 0, 0), inertia=(0.01, 0.02, 0.03))
    b = tree.add_link(
        "b", a, fb.Revolute((0, 1, 0)), origin=(0.3, 0, 0), mass=0.8, com=(0.15, 0.02, 0), inertia=(0.01, 0.01, 0.02)
    )
    c = tree.add_link(
        "c",
        b,
        fb.Prismatic((1, 0, 0)),
        origin=(0.3, 0, 0),
        mass=0.5,
        com=(0.05, 0, 0.01),
        inertia=(0.004, 0.005, 0.006),
    )
    d = tree.add_link(
        "d", c, fb.Revolute((0, 0, 1)), origin=(0.1, 0, 0), mass=0.4, com=(0.1, 0, 0), inertia=(0.002, 0.004, 0.005)
    )
    return tree, d


def _bushing_system(damping=0.0):
    tree, d = _spatial_chain()
    frame = tree.frame(d, (0.2, 0.05, 0.0), rotation=Rotation.from_rotvec([0.1, 0.2, 0.3]).as_matrix())
    ground = fb.Ground((0.8, 0.1, -0.05))
    bushing = fb.Bushing(ground, frame, stiffness=(400, 300, 500, 8, 6, 5), damping=damping)
    spring = fb.SpringDamper(
        fb.Ground((0.2, 0.4, 0.3)), tree.point(tree.link("b"), (0.2, 0, 0)), stiffness=150.0, rest_length=0.2
    )
    return fb.System([tree], forces=[bushing, spring], q0=[0.2, -0.3, 0.05, 0.4])


def test_force_elements_are_minus_the_gradient_of_their_potential():
    asm = _bushing_system().assemble()
    rng = np.random.default_rng(4)
    for _ in range(5):
        q = asm.q0 + 0.5 * rng.standard_normal(asm.n_dofs)
        Q = asm.workspace(0.0, q).applied_force(velocity=False)
        grad = np.empty(asm.n_dofs)
        for j in range(asm.n_dofs):
            h = 1e-6
            up, down = q.copy(), q.copy()
            up[j] += h
            down[j] -= h
            grad[j] = (
                asm.forces.potential(asm.workspace(0.0, up)) - asm.forces.potential(asm.workspace(0.0, down))
            ) / (2 * h)
        assert np.max(np.abs(Q + grad)) < 1e-6 * max(1.0, np.max(np.abs(Q)))


def test_bushing_and_spring_conserve_energy_and_dampers_dissipate():
    v0 = np.array([1.0, -0.5, 0.2, 2.0])
    res = fb.simulate(_bushing_system().assemble(), 0.25, integrator=fb.RK4(dt=2.5e-4), v0=v0)
    energy = res.histories["energy"]
    assert np.max(np.abs(energy - energy[0])) < 1e-8 * abs(energy[0])
    asm = _bushing_system(damping=(2, 2, 2, 0.05, 0.05, 0.05)).assemble()
    damped = fb.simulate(asm, 0.25, integrator=fb.RK4(dt=2.5e-4), v0=v0)
    energy = damped.histories["energy"]
    power = np.array([asm.workspace(t, q, v).dissipated_power() for t, q, v in zip(damped.times, damped.q, damped.v)])
    dissipated = cumulative_simpson(power, x=damped.times, initial=0.0)  # ∫ P dt, O(dt⁴)
    assert np.all(power >= 0.0) and dissipated[-1] > 0.1 * (energy[0] - np.min(res.histories["potential"]))
    assert np.max(np.abs(energy + dissipated - energy[0])) < 1e-6 * dissipated[-1]


def test_nonlinear_spring_law_potential_and_derivatives():
    k, k3 = 80.0, 4e4
    tree = fb.RigidTree("cart", gravity=NO_GRAVITY)
    cart = tree.add_link("cart", None, fb.Prismatic(axis=(1, 0, 0)), mass=1.0, inertia=(1e-3,) * 3)
    spring = fb.SpringDamper(
        fb.Ground((-0.3, 0, 0)), tree.point(cart), rest_length=0.3, tension=lambda s, s_dot: k * s + k3 * s**3
    )
    asm = fb.System([tree], forces=[spring], q0=[0.05]).assemble()
    assert asm.forces.potential(asm.workspace(0.0, asm.q0)) == pytest.approx(
        0.5 * k * 0.05**2 + 0.25 * k3 * 0.05**4, rel=1e-13
    )
    piece = spring.evaluate(asm.workspace(0.0, asm.q0), jacobians=True)
    assert piece.stiffness[0, 0] == pytest.approx(-(k + 3 * k3 * 0.05**2), rel=1e-6)
    res = fb.simulate(asm, 0.5, integrator=fb.RK4(dt=1e-4))
    energy = res.histories["energy"]
    assert np.max(np.abs(energy - energy[0])) < 1e-9 * energy[0]


def _bar_with_springs(k=2e5, order=1, implicit_damping=0.0):
    """A bar (SVK, ν = 0) fixed at x = 0 whose x1 face nodes are pulled along +x by springs to the ground."""
    length, width = 1.0, 0.1
    mesh = fb.mesh.box((length, width, width), (2, 1, 1), order=order)
    bar = fb.FlexibleBody("bar", mesh, fb.StVenantKirchhoff(young=1e7, poisson=0.0, density=1000.0))
    tip = bar.nodes("x1")
    springs = [
        fb.SpringDamper(
            Node(bar, i),
            fb.Ground(mesh.points[i] + (0.5, 0, 0)),
            stiffness=k,
            rest_length=0.4,
            damping=implicit_damping,
            name=f"s{i}",
        )
        for i in tip
    ]
    return fb.System([bar], constraints=[fb.Fix(bar, "x0")], forces=springs), len(tip), width**2


def test_springs_on_nodes_pull_a_bar_to_the_closed_form_stretch():
    system, n_springs, area = _bar_with_springs()
    res = fb.solve_static(system)
    asm = res.system
    x_tip = asm.coordinates("bar", res.q[-1], nodes="x1")[:, 0]
    E, k = 1e7, 2e5
    # homogeneous uniaxial stretch λ with unstretched sides (ν = 0): P = E A λ (λ² − 1)/2; each spring is
    # stretched by 0.1 − (λ − 1) m
    lam = brentq(lambda x: E * area * x * (x * x - 1) / 2 - n_springs * k * (0.1 - (x - 1.0)), 1.0, 1.1)
    assert np.max(np.abs(x_tip - lam)) < 1e-10


def test_flexible_jacobians_of_node_springs_match_finite_differences():
    system, _, _ = _bar_with_springs(implicit_damping=30.0)
    asm = system.assemble()
    rng = np.random.default_rng(1)
    q = asm.q0 + 1e-2 * rng.standard_normal(asm.n_dofs)
    v = rng.standard_normal(asm.n_dofs)
    K, C = asm.forces.jacobians(asm.workspace(0.0, q, v))
    for j in rng.choice(asm.n_dofs, 6, replace=False):
        for x, matrix in ((q, K), (v, C)):
            h = 1e-6
            up, down = x.copy(), x.copy()
            up[j] += h
            down[j] -= h
            args_up = (up, v) if x is q else (q, up)
            args_down = (down, v) if x is q else (q, down)
            fd = (asm.forces.force(asm.workspace(0.0, *args_up)) - asm.forces.force(asm.workspace(0.0, *args_down))) / (
                2 * h
            )
            assert np.max(np.abs(matrix[:, j].toarray().ravel() - fd)) < 1e-5 * max(1.0, np.max(np.abs(fd)))


def test_implicit_run_with_node_springs_balances_energy():
    """E(t) + dissipated work = E(0) up to the trapezoidal rule's O(dt²) error (the springs start stretched)."""
    errors = []
    for dt in (5e-4, 2.5e-4):
        system, _, _ = _bar_with_springs(k=5e3, implicit_damping=20.0)
        res = fb.simulate(system, 0.05, integrator=fb.GeneralizedAlpha(dt=dt, rho_inf=1.0))
        total, dissipated = res.histories["energy"], res.histories["dissipated"]
        errors.append(np.max(np.abs(total + dissipated - total[0])) / dissipated[-1])
    assert errors[1] < 2e-3
    assert 3.5 < errors[0] / errors[1] < 4.5


# ------------------------------------------------------------------ bad input
def test_bad_force_elements_are_named():
    tree = fb.RigidTree("cart", gravity=NO_GRAVITY)
    cart = tree.add_link("cart", None, fb.Prismatic(axis=(1, 0, 0)), mass=1.0, inertia=(1e-3,) * 3)
    fixed = tree.add_link("plate", cart, fb.Fixed(), mass=0.1, inertia=(1e-4,) * 3)
    with pytest.raises(FlexbodyError, match=r"'s1'.*stiffness"):
        fb.SpringDamper(fb.Ground(), tree.point(cart), stiffness=-1.0, name="s1")
    with pytest.raises(FlexbodyError, match=r"'s2'.*anchor"):
        fb.SpringDamper("ground", tree.point(cart), stiffness=1.0, name="s2")
    with pytest.raises(FlexbodyError, match=r"'s3'.*coincide"):
        fb.System([tree], forces=[fb.SpringDamper(fb.Ground(), tree.point(cart), stiffness=1.0, name="s3")]).assemble()
    with pytest.raises(FlexbodyError, match=r"'j1'.*fixed joint"):
        fb.JointSpringDamper(fixed, 1.0, name="j1")
    other = fb.RigidTree("other", gravity=NO_GRAVITY)
    lone = other.add_link("lone", None, fb.Revolute(), mass=1.0, inertia=(1e-3,) * 3)
    with pytest.raises(FlexbodyError, match=r"'j2'.*'other'"):
        fb.System([tree], forces=[fb.JointSpringDamper(lone, 1.0, name="j2")])
    with pytest.raises(FlexbodyError, match=r"'b1'.*frame"):
        fb.Bushing(fb.Ground(), tree.point(cart), stiffness=1.0, name="b1")
    with pytest.raises(FlexbodyError, match=r"'g1'.*columns"):
        fb.GeneralizedForce(lambda t, q, v: q, [0, 0], name="g1")
    bad = fb.GeneralizedForce(lambda t, q, v: np.ones(3), [0], name="g2")
    asm = fb.System([tree], forces=[bad]).assemble()
    with pytest.raises(FlexbodyError, match=r"'g2'.*\(1,\)"):
        asm.terms(0.0, asm.q0, np.zeros(1))


def test_a_spring_whose_ends_meet_stops_the_run_with_its_name():
    tree = fb.RigidTree("cart", gravity=NO_GRAVITY)
    cart = tree.add_link("cart", None, fb.Prismatic(axis=(1, 0, 0)), mass=1.0, inertia=(1e-3,) * 3)
    spring = fb.SpringDamper(fb.Ground((-0.3, 0, 0)), tree.point(cart), stiffness=10.0, rest_length=0.3, name="pull")
    asm = fb.System([tree], forces=[spring]).assemble()
    with pytest.raises(StateError, match=r"'pull'.*coincide"):
        asm.terms(0.0, np.array([-0.3]), np.zeros(1))


@pytest.mark.parametrize("integrator", [fb.RK4(dt=1e-3), fb.GeneralizedAlpha(dt=1e-3)], ids=["RK4", "alpha"])
def test_a_user_force_that_raises_keeps_its_exception_and_loses_no_computed_step(integrator, tmp_path):
    """A GeneralizedForce callback raising at t > 0.01 s: the user's exception comes through unchanged, carrying
    the steps computed before it (``last_good``), which a run saved as it goes has also written."""

    class SensorError(Exception):
        pass

    def push(t, q, v):
        if t > 0.01:
            raise SensorError("sensor gone")
        return np.array([0.1])

    tree = fb.RigidTree("t", gravity=(0, 0, -9.81))
    tree.add_link("l", joint=fb.Revolute((0, 1, 0)), mass=1.0, com=(0.5, 0, 0), inertia=np.eye(3) * 0.01)
    asm = fb.System([tree], [], forces=[fb.GeneralizedForce(push, [0], name="push")]).assemble()
    with pytest.raises(SensorError, match="sensor gone") as info:
        fb.simulate(asm, 0.05, integrator=integrator, save_to=tmp_path / "run")
    kept = info.value.last_good
    assert isinstance(kept, fb.Results) and kept.n_steps >= 10 and kept.times[-1] <= 0.0105
    assert kept.events[-1]["kind"] == "failure" and kept.events[-1]["error"] == "SensorError"
    saved = fb.Results.load(tmp_path / "run")
    assert not saved.metadata["complete"] and np.array_equal(saved.times, kept.times)
