"""Tests of flexbody.forward_derivatives: exact derivatives of the constrained forward dynamics (#36 item 3).

* Against Pinocchio's ``computeConstraintDynamicsDerivatives`` (CONTACT_3D closures, world-aligned) on the 34-dof
  branching tree with four closures, at a state off the constraint manifold: a, λ and their derivatives with respect
  to q, v and τ to 1e-10 relative (measured 1.2e-14 to 3.7e-14).
* Against central differences of :func:`flexbody.dynamics.forward` (the best of a step-size sweep) to 1e-7 relative:
  every row kind with exact derivatives (closures, rods, planes, spheres, cylinders, couplings, welds and hinges), a
  redundant hinge (minimum-norm multipliers), and rigid–flexible systems: the arm with a beam, the UR5 with a bar, and
  a free-flying base with a spherical shoulder carrying a beam (every joint kind on exponential coordinates).
* The flexible bodies' constants (Young's modulus, density, Kelvin–Voigt damping) against central differences of
  systems rebuilt with the changed constant, to 1e-7 relative (measured 1.3e-13 to 1.1e-10).
* What has no exact derivative is named; a redundant hinge under "multiplier" raises as forward dynamics does.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_exact_iteration_matrix import SYSTEMS

import flexbody as fb
from flexbody.dynamics import forward
from flexbody.errors import ConstraintError, FlexbodyError, ModelError

STEPS = (1e-4, 1e-5, 1e-6, 1e-7)


def rel(x, y) -> float:
    if not np.size(y):  # no rows: no multipliers
        return 0.0
    return float(np.max(np.abs(x - y)) / max(np.max(np.abs(y)), 1e-300))


def _state(asm, seed: int, joints: float = 0.01, nodes: float = 0.0):
    """(state, τ): q0 moved by ``joints`` (joint coordinates) and ``nodes`` (nodal) random amounts, random v and τ."""
    rng = np.random.default_rng(seed)
    n = asm.n_dofs
    q = asm.q0 + np.where(np.arange(n) < asm.n_rigid, joints, nodes) * rng.standard_normal(n)
    return fb.State(0.0, q, 0.5 * rng.standard_normal(n)), rng.standard_normal(n)


def _difference_errors(asm, state, tau, method="projection", parts=("q", "v", "tau"), steps=STEPS):
    """{(part, "a" | "lam"): the smallest relative difference over ``steps`` between the exact derivative and central
    differences of forward dynamics}."""
    d = fb.forward_derivatives(asm, state, tau, method)
    n, errors = asm.n_dofs, {}
    for part in parts:
        exact = {"a": getattr(d, f"da_d{part}"), "lam": getattr(d, f"dlam_d{part}")}
        for key in exact:
            errors[part, key] = np.inf
        for step in steps:
            central = {"a": np.empty((n, n)), "lam": np.empty((asm.n_constraints, n))}
            for j in range(n):
                x = {"q": state.q, "v": state.v, "tau": tau}
                h = step * max(1.0, abs(x[part][j]))
                ends = []
                for sign in (1.0, -1.0):
                    moved = dict(x)
                    moved[part] = x[part].copy()
                    moved[part][j] += sign * h
                    ends.append(forward(asm, fb.State(0.0, moved["q"], moved["v"]), moved["tau"], method=method))
                central["a"][:, j] = (ends[0].a - ends[1].a) / (2 * h)
                central["lam"][:, j] = (ends[0].lam - ends[1].lam) / (2 * h)
            for key in exact:
                errors[part, key] = min(errors[part, key], rel(exact[key], central[key]))
    return errors


# ============================================================================ a frame's motion
def _chain(kind: str, rng):
    """A 5-link chain of revolute and prismatic joints with, for ``kind`` "spherical", a spherical third joint and,
    for "floating", also a free-flying base."""
    tree, parent = fb.RigidTree("chain"), None
    if kind == "floating":
        parent = tree.add_link("base", None, fb.FreeFlyer(), mass=2.0, com=(0.1, 0, 0), inertia=(0.1, 0.2, 0.3))
    for k in range(5):
        axis = rng.standard_normal(3)
        joint = fb.Prismatic(axis) if k == 3 else fb.Revolute(axis)
        if kind != "revolute" and k == 2:
            joint = fb.Spherical()
        parent = tree.add_link(
            f"l{k}", parent, joint, origin=0.3 * rng.standard_normal(3), mass=1.0, com=(0.1, 0.05, 0.0),
            inertia=(0.01, 0.02, 0.03),
        )  # fmt: skip
    return tree, parent


@pytest.mark.parametrize("kind", ["revolute", "spherical", "floating"])
def test_a_frames_motion_derivatives_equal_central_differences(kind):
    """∂[ẋ; ω]/∂q, ∂[ẍ; α]/∂q and ∂[ẍ; α]/∂q̇ of a frame on the last link (rotation vectors of about 0.7 rad) against
    central differences of its velocity and of J a + J̇v (measured 1.7e-10 to 8.1e-10 at h = 1e-6)."""
    rng = np.random.default_rng(1)
    tree, tip = _chain(kind, rng)
    n, offset = tree.n_dofs, np.array([0.1, -0.2, 0.3])
    q, v, a = 0.7 * rng.standard_normal(n), rng.standard_normal(n), rng.standard_normal(n)

    def motion(q, v):
        kin = tree.kinematics(q, v)
        J, bias = kin.frame_terms(tip, offset)
        return J @ v, J @ a + bias

    exact = tree.kinematics(q, v).frame_motion_derivatives(tip, offset, a)
    for step in (1e-5, 1e-6):
        central = [np.empty((6, n)) for _ in range(3)]
        for j in range(n):
            e = np.zeros(n)
            e[j] = step
            (vp, ap), (vm, am) = motion(q + e, v), motion(q - e, v)
            central[0][:, j], central[1][:, j] = (vp - vm) / (2 * step), (ap - am) / (2 * step)
            central[2][:, j] = (motion(q, v + e)[1] - motion(q, v - e)[1]) / (2 * step)
        errors = [rel(x, y) for x, y in zip(exact, central)]
        if max(errors) < 1e-8:
            break
    assert max(errors) < 1e-8, errors


# ============================================================================ Pinocchio
def test_equals_pinocchio_constraint_dynamics_derivatives():
    pin = pytest.importorskip("pinocchio")
    from pinocchio_oracle import to_pinocchio
    from test_system_data import constrained_state

    asm = fb.mechanisms.branching_loops().assemble()
    q, v, tau = constrained_state(asm)
    q = q + 0.3 * np.random.default_rng(5).standard_normal(q.size)  # off the constraint manifold
    model, frames, perm = to_pinocchio(asm.trees[0])
    contacts = pin.StdVec_RigidConstraintModel()
    for c in asm.constraints:  # PointToPoint(LinkPoint, Ground) closures
        placement = frames[c.a.link.name].placement * pin.SE3(np.eye(3), np.asarray(c.a.offset, float))
        joint = frames[c.a.link.name].joint_id
        target = pin.SE3(np.eye(3), np.asarray(c.b.origin, float))
        contacts.append(
            pin.RigidConstraintModel(
                pin.ContactType.CONTACT_3D, model, joint, placement, 0, target, pin.LOCAL_WORLD_ALIGNED
            )
        )
    data, contact_data = model.createData(), pin.StdVec_RigidConstraintData()
    for cm in contacts:
        contact_data.append(cm.createData())
    settings = pin.ProximalSettings(1e-14, 1e-14, 0.0, 1)
    pin.initConstraintDynamics(model, data, contacts, contact_data)
    a_pin = pin.constraintDynamics(model, data, q[perm], v[perm], tau[perm], contacts, contact_data, settings)
    theirs = [np.asarray(x) for x in pin.computeConstraintDynamicsDerivatives(model, data, contacts, contact_data)]
    for method in ("multiplier", "projection"):
        d = fb.forward_derivatives(asm, fb.State(0.0, q, v), tau, method)
        assert rel(d.a[perm], np.asarray(a_pin)) < 1e-10
        assert rel(d.lam, np.asarray(data.lambda_c)) < 1e-10
        ours = [d.da_dq, d.da_dv, d.da_dtau]
        for mine, pins in zip(ours, theirs[:3]):
            assert rel(mine[np.ix_(perm, perm)], pins) < 1e-10
        for mine, pins in zip([d.dlam_dq, d.dlam_dv, d.dlam_dtau], theirs[3:]):
            assert rel(mine[:, perm], pins) < 1e-10


# ============================================================================ central differences
@pytest.mark.parametrize("name", sorted(set(SYSTEMS) - {"implicit", "branching_loops", "hinge_to_ground"}))
def test_every_row_kind_equals_central_differences(name):
    """Measured 3.7e-11 to 5.9e-9 (the closures of the 34-dof tree are in the Pinocchio test)."""
    asm = SYSTEMS[name]().assemble()
    state, tau = _state(asm, 3)
    for (part, key), error in _difference_errors(asm, state, tau, parts=("q", "v")).items():
        assert error < 1e-7, (part, key, error)


def _polynomial_coupling(third: bool = True):
    """A spatial 3-link arm whose last joint follows the first by a cubic (a PolynomialCoupling, f‴ known), or by a
    FunctionCoupling without f‴ (``third`` False)."""
    system = SYSTEMS["distance"]()
    tree = system.trees[0]
    links = [tree.link(f"l{k}") for k in range(3)]
    if third:
        coupling = fb.PolynomialCoupling(links[2], links[0], (0.1, -0.4, 0.8, 1.5), name="cubic")
    else:
        coupling = fb.FunctionCoupling(links[2], links[0], np.sin, np.cos, lambda x: -np.sin(x), name="sine")
    return fb.System([tree], [coupling], q0=system.q0)


def test_a_polynomial_coupling_has_exact_derivatives_and_a_function_coupling_without_f3_is_named():
    """q₃ = 0.1 − 0.4 q₁ + 0.8 q₁² + 1.5 q₁³: the joint rows' Hessian (−λ f″) and the dynamics' derivatives (with f‴)
    against central differences (measured 2.4e-11 and 1.7e-9); a FunctionCoupling without third_derivative is named."""
    from flexbody.solvers.constrained_equations import EquationResidual

    asm = _polynomial_coupling().assemble()
    state, tau = _state(asm, 5, joints=0.3)
    exact, differenced = EquationResidual(asm), EquationResidual(asm, exact=False)
    lam = np.array([2.5])
    A = exact.exact_rigid_tangent(asm.workspace(0.0, state.q, state.v), tau, lam, 1.0, 1.0, 0.5)
    B = differenced.rigid_tangent(0.0, state.q, state.v, tau, lam, 1.0, 1.0, 0.5)
    assert rel(A, B) < 1e-8
    for (part, key), error in _difference_errors(asm, state, tau, parts=("q", "v")).items():
        assert error < 1e-7, (part, key, error)
    with pytest.raises(ModelError, match=r"constraint 'sine' \(FunctionCoupling\)"):
        fb.forward_derivatives(_polynomial_coupling(third=False).assemble(), state, tau)


def test_redundant_rows_give_minimum_norm_multipliers_and_their_derivatives():
    """A 3-dof arm held by a hinge to the ground (5 rows of rank 3), off the manifold where the rows disagree:
    "projection" and "nullspace" equal central differences (measured 4.4e-9); "multiplier" raises."""
    asm = SYSTEMS["hinge_to_ground"]().assemble()
    state, tau = _state(asm, 3)
    for method in ("projection", "nullspace"):
        for (part, key), error in _difference_errors(asm, state, tau, method, parts=("q", "v")).items():
            assert error < 1e-7, (method, part, key, error)
    with pytest.raises(ConstraintError, match="numerically singular"):
        fb.forward_derivatives(asm, state, tau, "multiplier")


@pytest.mark.parametrize("kind, radius", [("plane", 0.0), ("sphere", 0.0), ("plane", 0.05), ("sphere", 0.05)])
def test_a_compliant_contact_is_differentiated_as_it_presses_and_slides(kind, radius):
    """The smooth contact form: the spatial arm's tip, or a ball of 5 cm rolling on its frame, pressed 1 cm into a
    plane or a sphere (Hunt–Crossley with dissipation, regularised friction, sliding), its derivatives against central
    differences (measured 7.3e-11 to 5.1e-10; the balls 4.4e-10 and 7.9e-10)."""
    from test_exact_iteration_matrix import _arm_in_contact

    asm = _arm_in_contact(kind, radius).assemble()
    state, tau = _state(asm, 3)
    assert asm.forces.elements[0].gap(asm.workspace(0.0, state.q, state.v)) < -0.005
    for (part, key), error in _difference_errors(asm, state, tau, parts=("q", "v")).items():
        assert error < 1e-7, (part, key, error)


def _floating_carrier():
    """A free-flying base with a spherical shoulder and a revolute elbow carrying a soft beam at the forearm's
    flange, the base held by a rod to a ground point above it."""
    tree = fb.RigidTree("carrier", gravity=(0.0, 0.0, -9.81))
    base = tree.add_link("base", None, fb.FreeFlyer(), mass=3.0, com=(0.0, 0.0, 0.0), inertia=(0.1, 0.12, 0.14))
    upper = tree.add_link(
        "upper", base, fb.Spherical(), origin=(0.1, 0.0, 0.0), mass=1.0, com=(0.15, 0.0, 0.0),
        inertia=(0.01, 0.02, 0.02),
    )  # fmt: skip
    fore = tree.add_link(
        "fore", upper, fb.Revolute((0.0, 1.0, 0.0)), origin=(0.3, 0.0, 0.0), mass=0.5, com=(0.1, 0.0, 0.0),
        inertia=(0.002, 0.01, 0.01),
    )  # fmt: skip
    mesh = fb.mesh.box(size=(0.3, 0.03, 0.03), divisions=(3, 1, 1), origin=(0.6, -0.015, -0.015))
    beam = fb.FlexibleBody("beam", mesh, fb.StVenantKirchhoff(5e6, 0.3, 1200.0, damping=0.01), locking=None)
    constraints = [
        fb.AttachNodes(beam, "x0", fore, name="flange"),
        fb.Distance(tree.point(base, (0.0, 0.0, 0.1)), fb.Ground((0.0, 0.0, 1.0)), 0.9),
    ]
    return fb.System([tree, beam], constraints, loads=[fb.Gravity(beam)], q0=np.zeros(tree.n_dofs))


def _ur5_with_bar():
    robot = Path(__file__).resolve().parents[1] / "meshes/robots/ur5_robot.urdf"
    return fb.mechanisms.robot_with_tool(
        robot, "tool0", (0.0, -1.2, 1.8, -0.6, 1.5, 0.0), (0.3, 0.02, 0.02), (3, 1, 1), young=1e7, damping=0.005
    )


def tethered():
    """The arm with a beam (3 bricks, soft, damped) with a rod from link l1 to the beam's tip node, a spring-damper from
    l1 to a node mid-beam and a corner node of the tip face held on a sphere: rows curved in nodal coordinates and
    forces between joint and nodal columns."""
    arm = fb.mechanisms.arm_with_beam(divisions=(3, 1, 1), q0=(0.3, -0.5), young=1e7, damping=0.01, locking=None)
    tree, beam = arm.trees[0], arm.bodies[0]
    points, face = beam.mesh.points, beam.nodes("x1")
    tip, corner = fb.nearest_node(beam, points[face].mean(axis=0)), fb.Node(beam, int(face[0]))
    anchor, spring_end = tree.point("l1", (0.25, 0.0, 0.0)), tree.point("l1", (0.1, 0.0, 0.05))
    x_anchor = tree.kinematics(np.asarray(arm.q0, dtype=float)).point_position(anchor.link, anchor.offset)
    centre = points[corner.index] + np.array([0.05, 0.3, -0.2])
    constraints = [
        *arm.constraints,
        fb.Distance(anchor, tip, float(np.linalg.norm(x_anchor - points[tip.index])), name="rod"),
        fb.OnSurface(corner, fb.Sphere(centre, float(np.linalg.norm(points[corner.index] - centre))), name="sphere"),
    ]
    spring = fb.SpringDamper(spring_end, fb.nearest_node(beam, points.mean(axis=0)), 300.0, 2.0, rest_length=0.2)
    return fb.System(
        arm.trees + arm.bodies, constraints, loads=arm.loads, forces=[spring], actuators=arm.actuators, q0=arm.q0
    )


RIGID_FLEXIBLE = {
    "arm_with_beam": lambda: fb.mechanisms.arm_with_beam(
        divisions=(4, 1, 1), q0=(0.3, -0.5), young=1e7, damping=0.01, locking=None
    ),
    "ur5_with_bar": _ur5_with_bar,
    "floating_carrier": _floating_carrier,
    "tethered": tethered,
}


@pytest.mark.parametrize("name", sorted(RIGID_FLEXIBLE))
def test_rigid_flexible_systems_equal_central_differences(name):
    """Soft bodies (E 5e6 to 1e7 Pa, so that the differences resolve the elastic accelerations) with Kelvin–Voigt
    damping, joints and nodes moved off the reference, also with a rod, a spring and a sphere on the beam's nodes:
    measured 2e-10 to 4e-9 (8.7e-9 on τ: linear in τ, the differences' round-off)."""
    asm = RIGID_FLEXIBLE[name]().assemble()
    state, tau = _state(asm, 7, joints=0.01, nodes=1e-4)
    for (part, key), error in _difference_errors(asm, state, tau).items():
        assert error < 1e-7, (part, key, error)


# ============================================================================ flexible constants
@pytest.mark.parametrize("locking, order", [(None, 1), ("auto", 1), (None, 2)])
def test_parameter_derivatives_equal_differences_of_rebuilt_systems(locking, order):
    """∂a/∂E, ∂a/∂ρ and ∂a/∂β of the arm with a beam (8-node bricks, with incompatible modes, 27-node bricks), and
    ∂λ/∂p; the damping derivative is refused with incompatible modes (their condensed modes move with β)."""
    constants = {"young": 2e8, "density": 2700.0, "damping": 2e-3}

    def build(**changed):
        system = fb.mechanisms.arm_with_beam(
            divisions=(3, 1, 1), q0=(0.3, -0.5), order=order, locking=locking, **{**constants, **changed}
        )
        return system.assemble()

    asm = build()
    state, tau = _state(asm, 2, joints=1e-4, nodes=1e-4)
    names = ["young", "density"] + (["damping"] if locking is None else [])
    d = fb.forward_derivatives(asm, state, tau, parameters=[(asm.flexible.bodies[0], name) for name in names])
    assert d.parameters == tuple(f"beam.{name}" for name in names)
    for j, name in enumerate(names):
        errors = []
        for step in (1e-3, 1e-4, 1e-5):
            h = step * constants[name]
            ends = [forward(build(**{name: constants[name] + s * h}), state, tau) for s in (1.0, -1.0)]
            errors.append(max(rel(d.da_dp[:, j], (ends[0].a - ends[1].a) / (2 * h)),
                              rel(d.dlam_dp[:, j], (ends[0].lam - ends[1].lam) / (2 * h))))  # fmt: skip
        assert min(errors) < 1e-7, (name, errors)
    if locking is not None:
        with pytest.raises(ModelError, match="condensed modes"):
            fb.forward_derivatives(asm, state, tau, parameters=[(asm.flexible.bodies[0], "damping")])


# ============================================================================ refusals
def test_what_has_no_exact_derivative_is_named():
    asm = SYSTEMS["implicit"]().assemble()
    state, tau = _state(asm, 1)
    with pytest.raises(ModelError, match=r"no exact derivatives yet for constraint .*surface.*\(OnSurface\)"):
        fb.forward_derivatives(asm, state, tau)
    arm = fb.mechanisms.arm_with_beam(divisions=(3, 1, 1), q0=(0.3, -0.5)).assemble()
    state, tau = _state(arm, 1)
    with pytest.raises(FlexbodyError, match="method must be one of"):
        fb.forward_derivatives(arm, state, tau, "lagrange")
    with pytest.raises(ModelError, match="must be one of"):
        fb.forward_derivatives(arm, state, tau, parameters=[(arm.flexible.bodies[0], "poisson")])
    other = fb.mechanisms.arm_with_beam(divisions=(3, 1, 1)).bodies[0]
    with pytest.raises(ModelError, match="is not a flexible body of this system"):
        fb.forward_derivatives(arm, state, tau, parameters=[(other, "young")])
