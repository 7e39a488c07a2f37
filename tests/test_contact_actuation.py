"""The contact actuation report (flexbody/control/contact_wrench.py, #35 item 2): whether the actuators hold a motion
and the desired contact forces inside the friction cones, the margin, the contacts that would open or slip, and the
contacts' acceleration rows it rests on (Contact.acceleration_bias)."""

import numpy as np
import pytest
from contact_wrench_oracle import largest_margin

import flexbody as fb
from flexbody.control.contact_wrench import contact_actuation
from flexbody.control.context import ControlContext
from flexbody.errors import ActuationError, FlexbodyError

pytest.importorskip("pinocchio")

URDF = "meshes/robots/ur5_robot.urdf"
TOOL = ((0.05, 0.1, 0.0), (-0.04, 0.1, 0.03))  # points on the UR5's last link [m], off its joint's axis (y)


def _ur5():
    return fb.load_urdf(URDF, gravity=(0.0, 0.0, -9.81), visuals=False)


def _scene(rng, count: int, passive: tuple, sliding: bool):
    """The UR5 at a random pose with ``count`` tool points touching planes of random normals through them (random
    μ), the ``passive`` joints unactuated, and a random velocity that keeps the contacts closed (and sticking unless
    ``sliding``)."""
    tree = _ur5()
    q = rng.uniform(-2.0, 2.0, 6)
    at = fb.System([tree], q0=q).assemble().workspace(0.0, q, np.zeros(6))
    contacts = []
    for i in range(count):
        point = tree.point("wrist_3_link", TOOL[i])
        normal = rng.standard_normal(3)
        plane = fb.Plane(normal / np.linalg.norm(normal), point=point.position(at))
        contacts.append(fb.Contact(point, plane, friction=rng.uniform(0.3, 1.0), name=f"tip{i}"))
    actuators = [link for link in tree.links if link.coordinate is not None and link.name not in passive]
    asm = fb.System([tree], constraints=contacts, q0=q, actuators=actuators).assemble()
    ws = asm.workspace(0.0, q, np.zeros(6))
    rows = []
    for contact in contacts:
        frame = contact.frame(ws)
        G = np.zeros((3, 6))
        G[:, frame.cols] = frame.G
        rows.append(G[:1] if sliding else G)
    _, sigma, Vt = np.linalg.svd(np.vstack(rows))
    free = Vt[int(np.count_nonzero(sigma > 1e-10 * sigma[0])) :]
    v = free.T @ (free @ rng.standard_normal(6))
    return tree, asm, contacts, q, v


def _derivatives(f, h: float = 1e-3):
    """(f'(0), f''(0)) of a function of one variable by the five-point central formulas (errors O(h⁴))."""
    values = [np.asarray(f(k * h), dtype=float) for k in (-2, -1, 0, 1, 2)]
    first = (values[0] - 8 * values[1] + 8 * values[3] - values[4]) / (12 * h)
    second = (-values[0] + 16 * values[1] - 30 * values[2] + 16 * values[3] - values[4]) / (12 * h * h)
    return first, second


@pytest.mark.parametrize(
    ("surface", "radius", "rolls"),
    [
        (fb.Plane((0.3, -0.2, 1.0), point=(0.0, 0.0, 0.2)), 0.0, False),
        (fb.Sphere((0.1, 0.2, 0.0), 0.6), 0.0, False),
        (fb.Cylinder((0.0, 0.0, 0.1), 0.5, (0.2, 1.0, 0.3)), 0.04, False),
        (fb.Plane((0.3, -0.2, 1.0), point=(0.0, 0.0, 0.2)), 0.04, True),
        (fb.Sphere((0.1, 0.2, 0.0), 0.6), 0.04, True),
    ],
    ids=["point-plane", "point-sphere", "ball-cylinder", "rolling-plane", "rolling-sphere"],
)
def test_a_contacts_acceleration_row_is_the_derivative_of_its_rates(surface, radius, rolls):
    """G a + γ (Contact.acceleration_bias) along q(t) = q + v t + ½ a t² on the UR5 (revolute joints: q̈ = a): its
    normal entry equals the gap's second derivative g̈, its tangent entries the derivative of the contact point's
    velocity v_c = J_c q̇ on the frame of t = 0 (five-point differences, h = 1e-3: errors ~1e-10), for points and a
    non-rolling ball on a plane, a sphere and a cylinder, and balls on a link frame rolling on a plane and a sphere
    (v_c = ẋ + r n × ω)."""
    rng = np.random.default_rng(7)
    tree = _ur5()
    anchor = tree.frame("wrist_3_link", (0.0, 0.1, 0.0)) if rolls else tree.point("wrist_3_link", (0.0, 0.1, 0.0))
    contact = fb.Contact(anchor, surface, friction=0.5, radius=radius)
    asm = fb.System([tree], constraints=[contact]).assemble()
    q, v, a = rng.uniform(-1.5, 1.5, 6), rng.standard_normal(6), rng.standard_normal(6)
    frame, gamma = contact.acceleration_bias(asm.workspace(0.0, q, v))
    G = np.zeros((3, 6))
    G[:, frame.cols] = frame.G
    expected = G @ a + gamma

    def at(t):
        return asm.workspace(0.0, q + v * t + 0.5 * a * t * t, v + a * t)

    g_ddot = _derivatives(lambda t: contact.gap(at(t)))[1]
    v_c_dot = _derivatives(lambda t: frame.basis.T @ contact.point.kinematics(at(t))[1])[0]
    assert abs(expected[0] - g_ddot) <= 1e-7 * max(1.0, abs(g_ddot))
    np.testing.assert_allclose(expected[1:], v_c_dot[1:], rtol=0, atol=1e-7 * max(1.0, np.abs(v_c_dot).max()))
    assert abs(gamma[0]) > 1e-3 and np.abs(gamma[1:]).max() > 1e-3  # the bias matters at these speeds


@pytest.mark.parametrize("seed", [0, 1])
def test_the_report_equals_an_independent_cone_program_on_the_ur5(seed):
    """Random states of the UR5 (its URDF) with one tool point on a plane (wrist 3 passive, its orientation held:
    ω̇ = 0) and two (wrists 2 and 3 passive), sticking or sliding, desired normal forces drawn from −5 to 30 N: the
    largest least margin s* (min over contacts of f_n and μ f_n − ‖f_t‖) equals that of the problem stated
    independently (tests/contact_wrench_oracle.py: Pinocchio's terms, world forces, the accelerations unknown,
    scipy's SLSQP) to 1e-8 N, the verdict (s* ≥ 0) is the same, and so is whether the equations have a solution at
    all. Measured over the 16 states of the two seeds: 12 solvable, the margins equal to 1.1e-12 N, 4 of them
    infeasible; 4 unsolvable for both (one sliding tip: its friction fixed by Coulomb's law, wrist 3 passive and
    the orientation held leave no input; residual 4e-3 to 7e-2 of the equations' size)."""
    rng = np.random.default_rng(seed)
    verdicts = []
    for trial in range(8):
        count, sliding = 1 + trial % 2, trial % 4 >= 2
        passive = ("wrist_3_link",) if count == 1 else ("wrist_2_link", "wrist_3_link")
        tree, asm, contacts, q, v = _scene(rng, count, passive, sliding)
        desired = rng.uniform(-5.0, 30.0, count)
        task = fb.control.tasks.OrientationTask(tree.frame("wrist_3_link")) if count == 1 else None
        report = contact_actuation(ControlContext(asm, 0.0, q, v), task=task, normal_forces=desired)
        orientation = "wrist_3_link" if task is not None else None
        s_star, _, equalities, inequalities = largest_margin(
            tree, np.asarray(asm.S, dtype=float), contacts, "wrist_3_link", q, v, desired, orientation, np.zeros(3)
        )
        assert bool(report.sliding.all()) == sliding
        assert report.solvable == (equalities < 1e-9)  # the equations have a solution for both, or for neither
        if report.solvable:
            assert inequalities > -1e-9  # the oracle's answer is one
            assert report.margin == pytest.approx(s_star, abs=1e-8)
            assert report.feasible == (s_star >= 0.0)
            assert report.feasible or report.opening or report.slipping  # s* < 0: someone opens or slips
        verdicts.append("infeasible" if not report.feasible else "feasible")
        verdicts.append("unsolvable" if not report.solvable else "solvable")
    assert {"feasible", "infeasible", "solvable", "unsolvable"} <= set(verdicts)  # every kind met


def test_the_inputs_it_returns_hold_the_motion_and_the_forces_inside_the_cones():
    """The least-effort inputs of a feasible report, applied to the UR5 with its contact forces: Pinocchio's
    M a + nle = Sᵀτ + Σ Jᵀ F to 1e-10, the contacts' accelerations zero (closed, sticking) and the held orientation
    (ω̇ = 0) to 1e-10, each contact's margin at least the one asked (5 N) where its largest margin allows it, and the
    least ‖τ‖ among such inputs (no input along the null space with the margins kept lowers it: 200 random
    directions, none both admissible and cheaper)."""
    from pinocchio_oracle import PinocchioOracle

    rng = np.random.default_rng(3)
    tree, asm, contacts, q, v = _scene(rng, 2, ("wrist_3_link",), False)
    ctx = ControlContext(asm, 0.0, q, v)
    report = contact_actuation(ctx, normal_forces=[20.0, 15.0], margin=5.0)
    assert report.feasible and report.margin > 5.0
    oracle = PinocchioOracle(tree)
    a, tau = report.acceleration, report.require()
    residual = oracle.mass_matrix(q) @ a + oracle.nonlinear_effects(q, v) - np.asarray(asm.S).T @ tau
    for contact, force in zip(contacts, report.forces):
        J = oracle.point_jacobian(q, "wrist_3_link", contact.anchor.offset)
        basis = contact.frame(ctx.ev).basis
        residual -= J.T @ (basis @ force)
        local = basis.T @ (J @ a + oracle.point_bias_acceleration(q, v, "wrist_3_link", contact.anchor.offset))
        assert np.abs(local).max() < 1e-10
    assert np.abs(residual).max() < 1e-10
    np.testing.assert_allclose(report.forces[:, 0], [20.0, 15.0], atol=1e-9)
    assert report.margins.min() >= 5.0 - 1e-7


def test_a_wrench_it_cannot_hold_names_the_contacts_and_gives_no_torque():
    """Asked to pull (a negative normal force) the report is not feasible and names the contact that would open;
    asked for a margin beyond the largest, it names the contacts short of it; require() raises
    an ActuationError with the reason instead of returning a torque; the same verdict through actuation_report
    (its failures list it)."""
    rng = np.random.default_rng(3)
    _, asm, _, q, v = _scene(rng, 2, ("wrist_3_link",), False)
    ctx = ControlContext(asm, 0.0, q, v)
    pulling = contact_actuation(ctx, normal_forces=[-2.0, 15.0])
    assert not pulling.feasible and pulling.tau is None and pulling.opening == ("tip0",)
    with pytest.raises(ActuationError, match=r"the normal force would pull at \['tip0'\]"):
        pulling.require("wiping")
    best = contact_actuation(ctx, normal_forces=[20.0, 15.0])
    beyond = contact_actuation(ctx, normal_forces=[20.0, 15.0], margin=best.margin + 1.0)
    assert not beyond.feasible and beyond.margin == pytest.approx(best.margin, abs=1e-9)
    assert not beyond.slipping and not beyond.opening and "short of the margin at ['tip0']" in beyond.reason
    report = fb.control.actuation_report(asm, 0.0, q, v, normal_forces=[-2.0, 15.0])
    assert report.contact is not None and not report.contact.feasible
    assert any("would pull" in reason for reason in report.failures())
    assert "margin" in str(report)


def test_bad_requests_are_named():
    rng = np.random.default_rng(3)
    _, asm, _, q, v = _scene(rng, 1, (), False)
    ctx = ControlContext(asm, 0.0, q, v)
    with pytest.raises(FlexbodyError, match=r"normal_forces: one per touching contact \(1\), got 2"):
        contact_actuation(ctx, normal_forces=[1.0, 2.0])
    with pytest.raises(FlexbodyError, match=r"\['elsewhere'\] are not touching contacts"):
        contact_actuation(ctx, normal_forces={"elsewhere": 1.0})
    with pytest.raises(FlexbodyError, match=r"the forces asked of \['tip0'\] are not finite numbers"):
        contact_actuation(ctx, normal_forces=[np.inf])
    with pytest.raises(FlexbodyError, match=r"margin \[N\] must be finite"):
        contact_actuation(ctx, margin=np.nan)
    with pytest.raises(FlexbodyError, match=r"the forces asked of \['tip0'\] are not finite numbers"):
        contact_actuation(ctx, normal_forces={"tip0": np.nan})
    lifted = q.copy()
    lifted[1] += 0.3  # the shoulder lifts the tool off its plane
    with pytest.raises(FlexbodyError, match="no contact touches"):
        contact_actuation(ControlContext(asm, 0.0, lifted, v))
    assert fb.control.actuation_report(asm, 0.0, lifted, v).contact is None
    crate = fb.RigidTree("crate")
    crate.add_link("body", None, fb.FreeFlyer(), mass=1.0, inertia=(0.01, 0.01, 0.01))
    slots = fb.box_contacts(crate, "body", (0.2, 0.2, 0.2), fb.Box((0.0, 0.0, -0.05), (1.0, 1.0, 0.1)), friction=0.5)
    system = fb.System([crate], constraints=slots, q0=(0.0, 0.0, 0.15, 0.0, 0.0, 0.0)).assemble()
    with pytest.raises(FlexbodyError, match="chosen anew at each state"):
        slots[-1].acceleration_bias(system.workspace(0.0, system.q0, np.zeros(6)))
