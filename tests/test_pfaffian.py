"""Velocity-level (Pfaffian) rows: the Chaplygin sleigh and a disc rolling down an incline against their
closed forms in every constrained-dynamics form, a disc rolling in 3-D against an independent Lagrange
model (sympy, scipy), the rows' Jacobians and biases against finite differences, and the seed's LP
example (projected inverse dynamics with A(θ)θ̇ = 0)."""

import logging

import numpy as np
import pytest
from rolling_disc_reference import rolling_disc_motion

import flexbody as fb
from flexbody.errors import ConstraintError

FORMS = ("projection", "multiplier", "gauss", "nullspace")


# ------------------------------------------------------------------ Chaplygin sleigh (knife edge)
def sleigh(m=2.0, izz=0.05, a=0.3, psi0=0.2):
    """A body on the plane (x, y, yaw ψ) with a knife edge at its frame origin, centre of mass a ahead."""
    tree = fb.RigidTree("sleigh", gravity=(0, 0, -9.81))
    x = tree.add_link("x", None, fb.Prismatic((1, 0, 0)))
    y = tree.add_link("y", x, fb.Prismatic((0, 1, 0)))
    body = tree.add_link("body", y, fb.Revolute((0, 0, 1)), mass=m, com=(a, 0, 0), inertia=(0.01, 0.04, izz))
    return fb.System([tree], [fb.KnifeEdge(tree.frame(body), axis=(0, 1, 0), name="knife")], q0=[0, 0, psi0])


def sleigh_closed_form(t, u0, w0, m=2.0, izz=0.05, a=0.3, psi0=0.2):
    """u̇ = a ω², ω̇ = −m a u ω / I_c (I_c = I + m a²): u = V tanh(kt + c₀), ω = ±V√(m/I_c) sech(kt + c₀),
    ψ = ψ₀ ± V√(m/I_c)/k (gd(kt + c₀) − gd(c₀)); V = √(2E/m), k = m a V / I_c, c₀ = atanh(u₀/V)."""
    Ic = izz + m * a * a
    V = np.sqrt((m * u0**2 + Ic * w0**2) / m)
    k, c0, s = m * a * V / Ic, np.arctanh(u0 / V), np.sign(w0)
    gd = lambda z: 2 * np.arctan(np.tanh(z / 2))  # noqa: E731 (Gudermannian)
    return (
        V * np.tanh(k * t + c0),
        s * V * np.sqrt(m / Ic) / np.cosh(k * t + c0),
        psi0 + s * V * np.sqrt(m / Ic) / k * (gd(k * t + c0) - gd(c0)),
    )


def _sleigh_v0(u0=0.4, w0=1.5, psi0=0.2):
    return np.array([u0 * np.cos(psi0), u0 * np.sin(psi0), w0])


@pytest.mark.parametrize("form", FORMS)
def test_chaplygin_sleigh_matches_its_closed_form(form):
    asm = sleigh().assemble()
    res = fb.simulate(asm, 3.0, integrator=fb.RK4(dt=5e-3), v0=_sleigh_v0(), formulation=form)
    q, v = res.q, res.v
    u = v[:, 0] * np.cos(q[:, 2]) + v[:, 1] * np.sin(q[:, 2])
    u_e, w_e, psi_e = sleigh_closed_form(res.times, 0.4, 1.5)
    assert np.abs(u - u_e).max() < 1e-10 and np.abs(v[:, 2] - w_e).max() < 1e-10  # 7.3e-12, 2.9e-11 measured
    assert np.abs(q[:, 2] - psi_e).max() < 1e-9
    assert res.histories["velocity_violation"].max() < 1e-14


def test_chaplygin_sleigh_implicitly_second_order():
    errors = []
    for dt in (2e-3, 1e-3):
        res = fb.simulate(sleigh().assemble(), 1.0, integrator=fb.GeneralizedAlpha(dt=dt, rho_inf=1.0), v0=_sleigh_v0())
        errors.append(np.abs(res.q[:, 2] - sleigh_closed_form(res.times, 0.4, 1.5)[2]).max())
        assert res.histories["velocity_violation"].max() < 1e-9  # Newton's tolerance on the rows' residual
    assert errors[1] < 1e-5 and 3.5 < errors[0] / errors[1] < 4.5


# ------------------------------------------------------------------ rolling disc
def disc_system(m=1.2, r=0.15, gravity=(0, 0, -9.81), q0=None):
    """A disc: centre (x, y, z), yaw ψ about z, lean θ about the turned x, spin φ about its axis y."""
    tree = fb.RigidTree("disc", gravity=gravity)
    x = tree.add_link("x", None, fb.Prismatic((1, 0, 0)))
    y = tree.add_link("y", x, fb.Prismatic((0, 1, 0)))
    z = tree.add_link("z", y, fb.Prismatic((0, 0, 1)))
    yaw = tree.add_link("yaw", z, fb.Revolute((0, 0, 1)))
    lean = tree.add_link("lean", yaw, fb.Revolute((1, 0, 0)))
    disc = tree.add_link(
        "disc", lean, fb.Revolute((0, 1, 0)), mass=m, inertia=(m * r * r / 4, m * r * r / 2, m * r * r / 4)
    )
    roll = fb.RollingDisc(tree.frame(disc), r, axis=(0, 1, 0), name="roll")
    return fb.System([tree], [roll], q0=[0, 0, r, 0, 0, 0] if q0 is None else q0)


@pytest.mark.parametrize("form", FORMS)
def test_disc_rolls_down_an_incline_as_the_closed_form(form):
    """ẍ = g sin α / (1 + I/(m r²)) = (2/3) g sin α; spin φ = x / r; no lean."""
    r, alpha, g = 0.15, 0.3, 9.81
    asm = disc_system(r=r, gravity=(g * np.sin(alpha), 0, -g * np.cos(alpha))).assemble()
    res = fb.simulate(asm, 1.0, integrator=fb.RK4(dt=1e-3), formulation=form)
    x = res.q[:, 0]
    assert np.abs(x - g * np.sin(alpha) * res.times**2 / 3).max() < 1e-12
    assert np.abs(res.q[:, 5] - x / r).max() < 1e-11 and np.abs(res.q[:, 4]).max() < 1e-12


def test_disc_rolling_in_3d_matches_an_independent_lagrange_model():
    m, r, lean = 1.2, 0.15, 0.25
    asm = disc_system(m, r, q0=[0, 0, r * np.cos(lean), 0.1, lean, 0.0]).assemble()
    v0 = fb.project_velocity(asm, 0.0, asm.q0, np.array([0, 0, 0, 2.0, 0.3, -18.0]))
    res = fb.simulate(asm, 0.5, integrator=fb.RK4(dt=1e-3), v0=v0, consistent_initial=False, record_every=10)
    reference = rolling_disc_motion(asm.q0, v0, res.times, m, r)
    assert np.abs(res.q - reference).max() < 1e-8  # 5.7e-9 rad over 1 s measured
    energy = res.histories["energy"]
    assert np.abs(energy - energy[0]).max() < 1e-9 * abs(energy[0])  # rolling does no work
    assert res.histories["violation"].max() < 1e-12  # the holonomic contact row


def _finite_difference_checks(asm, q, v, rows):
    """A v = d/dε x(q + εv) (the rows' velocity) is not checked here; Ȧv = d/dε A(q + εv) v and, for position
    rows, Φ = ∂φ/∂q by central differences."""
    h = 1e-6
    A = asm.constraint_jacobian(0.0, q)
    up, down = asm.terms(0.0, q + h * v, v), asm.terms(0.0, q - h * v, v)
    bias = asm.terms(0.0, q, v).bias
    fd_bias = (up.Phi @ v - down.Phi @ v) / (2 * h)
    assert np.abs(bias - fd_bias).max() < 1e-6 * max(1.0, np.abs(bias).max())
    for i in rows:
        grad = np.array(
            [
                (asm.constraint_value(0.0, q + h * e)[i] - asm.constraint_value(0.0, q - h * e)[i]) / (2 * h)
                for e in np.eye(asm.n_dofs)
            ]
        )
        assert np.abs(A[i] - grad).max() < 1e-8


def test_rows_and_biases_match_finite_differences():
    rng = np.random.default_rng(3)
    disc = disc_system(q0=[0.1, -0.2, 0.15 * np.cos(0.4), 0.3, 0.4, 1.0]).assemble()
    _finite_difference_checks(disc, disc.q0, rng.standard_normal(6), rows=[2])
    sl = sleigh().assemble()
    _finite_difference_checks(sl, sl.q0 + 0.1, rng.standard_normal(3), rows=[])
    # the disc's rows are the contact point's material velocity: x_c + ω × r d with the disc's points fixed
    q, v = disc.q0, rng.standard_normal(6)
    ev = disc.workspace(0.0, q, v)
    tree = disc.trees[0]
    frame = disc.constraints[0].frame
    R, c = frame.rotation(ev), frame.position(ev)
    w = R[:, 1]
    m_ = np.array([0, 0, 1.0]) - w[2] * w
    contact_body = R.T @ (-0.15 * m_ / np.linalg.norm(m_))  # contact point in disc axes

    def material_point(qq):
        e = disc.workspace(0.0, qq)
        return frame.position(e) + frame.rotation(e) @ contact_body

    h = 1e-6
    fd = (material_point(q + h * v) - material_point(q - h * v)) / (2 * h)
    basis = disc.constraints[0].basis  # rows t₁, t₂, n
    assert np.abs(disc.constraint_jacobian(0.0, q) @ v - basis @ fd).max() < 1e-8
    assert np.allclose(c, q[:3]) and tree is frame.link.tree


# ------------------------------------------------------------------ the seed's LP example
def _arm(rows: str):
    """[LP]'s arm erasing a board: a planar two-link arm whose end point keeps y = −0.5 m, as a holonomic
    row (OnSurface) or as the Pfaffian row A(θ)θ̇ = 0 with A = ∂y_end/∂θ."""
    arm = fb.RigidTree("arm", gravity=(0, -9.81, 0))
    l1 = arm.add_link("l1", None, fb.Revolute((0, 0, 1)), mass=1.0, com=(0.5, 0, 0), inertia=(1e-4, 0.08, 0.08))
    l2 = arm.add_link(
        "l2", l1, fb.Revolute((0, 0, 1)), origin=(1, 0, 0), mass=1.0, com=(0.5, 0, 0), inertia=(1e-4, 0.08, 0.08)
    )
    if rows == "holonomic":
        row = fb.OnSurface(arm.point(l2, (1, 0, 0)), fb.Plane((0, 1, 0), (0, -0.5, 0)), name="board")
    else:

        def A(t, q):
            return np.array([[np.cos(q[0]) + np.cos(q[0] + q[1]), np.cos(q[0] + q[1])]])

        def bias(t, q, v):
            s1, s12 = np.sin(q[0]), np.sin(q[0] + q[1])
            return np.array([-s1 * v[0] ** 2 - s12 * (v[0] + v[1]) ** 2])

        row = fb.PfaffianRows([0, 1], 1, A, bias=bias if rows == "pfaffian" else None, name="board")
    return fb.System([arm], [row], q0=[-0.3, 0.5])  # the tests put q0 on the board first


def test_lp_example_pfaffian_rows_move_as_the_holonomic_row():
    holo = _arm("holonomic").assemble()
    q0 = fb.assemble_configuration(holo, 0.0, [-0.3, 0.5], fixed=[1])
    v0 = fb.project_velocity(holo, 0.0, q0, np.array([0.7, -0.2]))
    ref = fb.simulate(holo, 1.0, integrator=fb.RK4(dt=1e-3), q0=q0, v0=v0)
    for kind in ("pfaffian", "pfaffian-fd-bias"):
        pf = _arm(kind).assemble()
        assert list(pf.velocity_rows) == [True]
        res = fb.simulate(pf, 1.0, integrator=fb.RK4(dt=1e-3), q0=q0, v0=v0)
        tol = 1e-10 if kind == "pfaffian" else 1e-6
        assert np.abs(res.q - ref.q).max() < tol, kind


def test_lp_projected_inverse_dynamics():
    """[LP]: P τ = P (M θ̈ + h), P = I − Aᵀ(AM⁻¹Aᵀ)⁻¹AM⁻¹, for the minimum-norm τ of dynamics.inverse, and any
    τ + Aᵀλ moves the arm the same way."""
    asm = _arm("pfaffian").assemble()
    q = fb.assemble_configuration(_arm("holonomic").assemble(), 0.0, [-0.3, 0.5], fixed=[1])
    v = fb.project_velocity(asm, 0.0, q, np.array([0.7, -0.2]))
    T = asm.terms(0.0, q, v)
    A, M, h = T.Phi, T.M, T.h
    a = np.linalg.lstsq(A, -T.bias, rcond=None)[0] + 0.3 * np.array([-A[0, 1], A[0, 0]])  # an admissible θ̈
    tau = fb.dynamics.inverse(M, h, a, A).tau
    Minv = np.linalg.inv(M)
    P = np.eye(2) - A.T @ np.linalg.inv(A @ Minv @ A.T) @ A @ Minv
    assert np.abs(P @ tau - P @ (M @ a + h)).max() < 1e-12
    for lam in (0.0, 3.7):
        assert np.abs(fb.dynamics.forward(M, h, tau + A.T @ [lam], A, T.bias, method="multiplier").a - a).max() < 1e-12


# ------------------------------------------------------------------ solvers and bad input
def test_position_correction_leaves_velocity_rows_out_and_statics_refuses_them():
    asm = disc_system(q0=[0, 0, 0.15 * np.cos(0.2) + 1e-4, 0, 0.2, 0]).assemble()
    q = fb.assemble_configuration(asm, 0.0, asm.q0)
    assert abs(asm.constraint_value(0.0, q)[2]) < 1e-12 and np.abs(q[[0, 1, 3, 5]] - asm.q0[[0, 1, 3, 5]]).max() == 0
    assert asm.rank_report(0.0, q).rank == 3
    with pytest.raises(ConstraintError, match=r"roll.t1"):
        fb.solve_static(asm)


def test_bad_pfaffian_input_is_named():
    tree = fb.RigidTree("t", gravity=(0, 0, 0))
    link = tree.add_link("l", None, fb.Revolute(), mass=1.0, inertia=(1e-3,) * 3)
    with pytest.raises(ConstraintError, match=r"'r1'.*radius"):
        fb.RollingDisc(tree.frame(link), 0.0, name="r1")
    with pytest.raises(ConstraintError, match=r"'k1'.*frame"):
        fb.KnifeEdge(tree.point(link), name="k1")
    with pytest.raises(ConstraintError, match=r"'k2'.*axis"):
        fb.KnifeEdge(tree.frame(link), axis=(0, 0, 0), name="k2")
    bad = fb.PfaffianRows([0], 1, lambda t, q: np.ones((2, 1)), name="p1")
    asm = fb.System([tree], [bad]).assemble()
    with pytest.raises(ConstraintError, match=r"'p1'.*\(1, 1\)"):
        asm.terms(0.0, asm.q0, np.zeros(1))
    flat = disc_system(q0=[0, 0, 0.0, 0, np.pi / 2, 0]).assemble
    with pytest.raises(ConstraintError, match=r"'roll'.*flat"):
        flat().terms(0.0, np.array([0, 0, 0.0, 0, np.pi / 2, 0]), np.zeros(6))


def test_lp_projected_inverse_dynamics_control_steers_the_sleigh():
    """[LP]/[AG] projected inverse-dynamics control of the point 0.5 m ahead of the knife edge: the task error
    obeys ë + 20ė + 100e = 0 (critically damped at 10 rad/s), so it is below 1e-9 m after 3 s (measured at RK4's
    2 ms: 8.9e-13 m at 3 s, the law followed to 1.3e-9 of e₀; 8.1e-11 at 1 ms)."""
    system, ahead = _control_sleigh()
    task = fb.PointTask(ahead, components=(0, 1))
    control = fb.control.ProjectedInverseDynamicsControl(task, [0.6, 0.3], 100.0, 20.0)
    res = fb.simulate(system, 3.0, integrator=fb.RK4(dt=2e-3), controller=control)
    error = np.linalg.norm(res.histories["task_error"], axis=1)
    e0 = error[0]
    assert e0 > 0.1 and error[-1] < 1e-9
    t = res.times
    assert np.abs(error - e0 * (1 + 10 * t) * np.exp(-10 * t)).max() < 1e-6 * e0  # the closed-loop law
    assert res.histories["velocity_violation"].max() < 1e-13


def _control_sleigh():
    tree = fb.RigidTree("sleigh", gravity=(0, 0, -9.81))
    x = tree.add_link("x", None, fb.Prismatic((1, 0, 0)))
    y = tree.add_link("y", x, fb.Prismatic((0, 1, 0)))
    body = tree.add_link("body", y, fb.Revolute((0, 0, 1)), mass=2.0, com=(0.3, 0, 0), inertia=(0.01, 0.04, 0.05))
    knife = fb.KnifeEdge(tree.frame(body), axis=(0, 1, 0), name="knife")
    return fb.System([tree], [knife], q0=[0.1, -0.2, 0.4]), tree.point(body, (0.5, 0, 0))


def test_an_all_zero_pfaffian_row_is_said_once(caplog):
    """A PfaffianRows whose matrix is zero constrains nothing: accepted (the rank tools treat the row as redundant)
    with one WARNING naming the constraint and its rows, not one per evaluation."""
    tree = fb.RigidTree("t", gravity=(0, 0, 0))
    tree.add_link("l", None, fb.Revolute(), mass=1.0, inertia=(1e-3,) * 3)
    asm = fb.System([tree], [fb.PfaffianRows([0], 1, lambda t, q: np.zeros((1, 1)), name="nothing")]).assemble()
    with caplog.at_level(logging.WARNING, logger="flexbody"):
        res = fb.simulate(asm, 0.01, integrator=fb.RK4(dt=1e-3), v0=[1.0])
    said = [r for r in caplog.records if "'nothing'" in r.getMessage()]
    assert len(said) == 1 and "rows ['r0'] of the matrix are zero" in said[0].getMessage()
    assert np.allclose(res.v[-1], [1.0])  # free: nothing holds the joint
