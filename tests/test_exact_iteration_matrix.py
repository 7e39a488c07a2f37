"""Exact Jacobians of the joint rows (#36 items 2 and 4): the point Hessian ∂(Jᵀw)/∂q of a link point
(flexbody/rigid/point_hessian.py), an attachment's constraint Hessian ∂(Φᵀλ)/∂q, and the iteration matrix of
generalized-α and statics formed from them (flexbody/solvers/constrained_equations.py) — against central differences
of the point Jacobian and of the rows (the previous route, kept as the option ``rigid_jacobian="differences"``)."""

from pathlib import Path

import numpy as np
import pytest
from test_pfaffian import disc_system
from test_rnea_derivatives import _ball_and_socket_tree, _tree

import flexbody as fb
from flexbody.solvers.constrained_equations import EquationResidual


def _difference_hessian(tree, link, offset, w, q, h):
    columns = []
    for j in range(tree.n_dofs):
        e = np.zeros(tree.n_dofs)
        e[j] = h
        plus = tree.kinematics(q + e).point_jacobian(link, offset)[1]
        minus = tree.kinematics(q - e).point_jacobian(link, offset)[1]
        columns.append((plus - minus).T @ w / (2 * h))
    return np.column_stack(columns)


def _difference_angular(tree, link, w, q, h):
    columns = []
    for j in range(tree.n_dofs):
        e = np.zeros(tree.n_dofs)
        e[j] = h
        pair = []
        for x in (q + e, q - e):
            cols, block = tree.kinematics(x).angular_jacobian(link)
            dense = np.zeros((3, tree.n_dofs))
            dense[:, cols] = block
            pair.append(dense)
        columns.append((pair[0] - pair[1]).T @ w / (2 * h))
    return np.column_stack(columns)


@pytest.mark.parametrize("name", ["ur5", "tree34", "ball"])
def test_the_point_and_angular_hessians_equal_differences_of_the_jacobians(name):
    """∂(J(q)ᵀw)/∂q of a point on the last link: equal to central differences of flexbody's point Jacobian (itself
    equal to Pinocchio's, tests/test_rigid.py) to 1e-8 relative at the best of steps 1e-4 … 1e-6 (measured 3e-11 to
    9e-11), symmetric to round-off; with spherical joints and a free-flying base at rotation vectors of about 1 and
    0.01 rad."""
    tree = _ball_and_socket_tree() if name == "ball" else _tree(name)
    rng = np.random.default_rng(1)
    link = tree.link("tool0") if name == "ur5" else tree.links[-1]
    for scale in (1.0, 0.01):
        q = rng.uniform(-1.0, 1.0, tree.n_dofs)
        if name == "ball":
            for start in (3, 7, 11):
                q[start : start + 3] *= scale
        offset, w = rng.uniform(-0.2, 0.2, 3), rng.standard_normal(3)
        H = tree.kinematics(q).point_hessian(link, offset, w)
        errors = [np.abs(H - _difference_hessian(tree, link, offset, w, q, h)).max() for h in (1e-4, 1e-5, 1e-6)]
        assert min(errors) < 1e-8 * np.abs(H).max() and np.abs(H - H.T).max() <= 1e-14 * np.abs(H).max()
        H = tree.kinematics(q).angular_hessian(link, w)  # ∂(J_ωᵀw)/∂q (measured 2.2e-11 to 3.7e-11)
        errors = [np.abs(H - _difference_angular(tree, link, w, q, h)).max() for h in (1e-4, 1e-5, 1e-6)]
        assert min(errors) < 1e-8 * np.abs(H).max()


def _random_state(asm, seed):
    rng = np.random.default_rng(seed)
    n, m = asm.n_dofs, asm.n_constraints
    q = asm.q0 + 0.01 * rng.standard_normal(n)
    return q, rng.standard_normal(n), rng.standard_normal(n), 10.0 * rng.standard_normal(m)


def _ur5_with_bar():
    robot = Path(__file__).resolve().parents[1] / "meshes/robots/ur5_robot.urdf"
    return fb.mechanisms.robot_with_tool(robot, "tool0", (0.0, -1.2, 1.8, -0.6, 1.5, 0.0), (0.3, 0.02, 0.02), (3, 1, 1))


@pytest.mark.parametrize(
    "build", [lambda: fb.mechanisms.arm_with_beam(divisions=(4, 1, 1), q0=(0.3, -0.5)), _ur5_with_bar]
)
def test_the_joint_rows_jacobian_is_exact_on_trees_with_attachments(build):
    """The arm with a beam (case 16's system, smaller) and the UR5 with a bar (case 17's): c_q ∂r_r/∂q + c_v ∂r_r/∂v
    of the joint rows s·(M q̈ + b + g) − Φ_rᵀλ from the trees' analytic derivatives and the attachment's Hessian
    equals central differences of the rows to 1e-8 relative (measured 2e-11 to 3e-10) at random (q, v, q̈, λ), also
    at rest (statics, q̈ = 0) and with a load factor."""
    asm = build().assemble()
    exact, differenced = EquationResidual(asm), EquationResidual(asm, exact=False)
    assert exact.exact and not differenced.exact
    q, v, qdd, lam = _random_state(asm, 4)
    for c_q, c_v in ((1.0, 0.0), (0.0, 1.0), (0.25, 0.5)):
        A = exact.exact_rigid_tangent(asm.workspace(0.0, q, v), qdd, lam, 1.0, c_q, c_v)
        B = differenced.rigid_tangent(0.0, q, v, qdd, lam, 1.0, c_q, c_v)
        assert np.abs(A - B).max() < 1e-8 * np.abs(B).max()
    at_rest = asm.workspace(0.0, q)
    A = exact.exact_rigid_tangent(at_rest, None, lam, 0.7, 1.0, 0.0)
    B = differenced.rigid_tangent(0.0, q, None, None, lam, 0.7, 1.0, 0.0)
    assert np.abs(A - B).max() < 1e-8 * np.abs(B).max()


def test_a_system_without_every_derivative_keeps_the_differences_and_both_routes_run_alike():
    """A user force on the joints without its Jacobian keeps the differenced route; on case 16's system the exact
    route takes the same Newton iterations and ends within 1e-9 of the differenced one (measured: 2 798 iterations
    per 1 000 steps on both over the first 2 s at full size, 3.8e-11 apart)."""
    arm = fb.mechanisms.arm_with_beam(divisions=(4, 1, 1), q0=(0.3, -0.5))
    spring = fb.GeneralizedForce(lambda t, q, v: -q[:1], [0])
    assert not EquationResidual(
        fb.System(
            arm.trees + arm.bodies,
            arm.constraints,
            loads=arm.loads,
            forces=[spring],
            actuators=arm.actuators,
            q0=arm.q0,
        ).assemble()
    ).exact
    runs, tau = {}, np.asarray(arm.assemble().S, dtype=float).T @ np.array([0.5, -0.2])
    for mode in ("exact", "differences"):
        integrator = fb.GeneralizedAlpha(dt=2e-3, rho_inf=0.9, rigid_jacobian=mode)
        runs[mode] = fb.simulate(arm, 0.2, integrator=integrator, tau=tau)
    a, b = runs["exact"], runs["differences"]
    assert a.metadata["statistics"]["newton_iterations"] == b.metadata["statistics"]["newton_iterations"]
    assert np.abs(a.q[-1] - b.q[-1]).max() < 1e-9
    with pytest.raises(fb.FlexbodyError, match="rigid_jacobian must be 'exact' or 'differences'"):
        fb.GeneralizedAlpha(dt=1e-3, rigid_jacobian="analytic")


def _arm_with(constraint_of):
    """A spatial 3-link arm (random axes and placements) whose tip carries ``constraint_of(tip)``."""
    rng = np.random.default_rng(12)
    tree = fb.RigidTree("arm", gravity=(0.0, 0.0, -9.81))
    parent = None
    for k in range(3):
        axis = rng.standard_normal(3)
        parent = tree.add_link(
            f"l{k}", parent, fb.Revolute(axis / np.linalg.norm(axis)), origin=0.3 * rng.standard_normal(3), mass=1.0,
            com=(0.1, 0.0, 0.0), inertia=(0.01, 0.02, 0.03),
        )  # fmt: skip
    tip = tree.point("l2", (0.2, 0.05, 0.0))
    return fb.System([tree], [constraint_of(tip)], q0=(0.3, -0.4, 0.5))


def _two_arms_joined(kind):
    """Two spatial 3-link arms whose last links' frames are joined by ``kind`` (Weld or Hinge)."""
    from scipy.spatial.transform import Rotation

    rng = np.random.default_rng(21)
    trees = []
    for t in range(2):
        tree, parent = fb.RigidTree(f"arm{t}", gravity=(0.0, 0.0, -9.81)), None
        for k in range(3):
            axis = rng.standard_normal(3)
            parent = tree.add_link(
                f"l{k}", parent, fb.Revolute(axis / np.linalg.norm(axis)), origin=0.3 * rng.standard_normal(3),
                mass=1.0, com=(0.1, 0.0, 0.0), inertia=(0.01, 0.02, 0.03),
            )  # fmt: skip
        trees.append(tree)
    turned = Rotation.from_rotvec(rng.standard_normal(3)).as_matrix()
    joint = kind(trees[0].frame("l2", (0.1, 0.0, 0.0), turned), trees[1].frame("l2", (0.0, 0.1, 0.0)))
    return fb.System(trees, [joint], q0=np.zeros(6))


SPHERE_SURFACE = fb.ImplicitSurface(
    lambda x: [x @ x - 1.0], lambda x: [2.0 * x], lambda x: [2.0 * np.eye(3)]
)  # an implicit unit sphere (a user surface: no declared row)
CUBIC_SURFACE = fb.ImplicitSurface(
    lambda x: [x @ x + 0.3 * x[0] ** 3 - 1.0],
    lambda x: [2.0 * x + np.array([0.9 * x[0] ** 2, 0.0, 0.0])],
    lambda x: [2.0 * np.eye(3) + np.diag([1.8 * x[0], 0.0, 0.0])],
    third_derivative=lambda x: [np.einsum("i,j,k->ijk", *[np.eye(3)[0]] * 3) * 1.8],
)  # a user surface with its third derivative
SYSTEMS = {
    **{name: getattr(fb.mechanisms, name) for name in ("four_bar", "rssr_loop", "branching_loops", "parallel_platform",
                                                          "slider_crank", "spatial_arm_on_sphere", "coupled_chain")},
    "distance": lambda: _arm_with(lambda tip: fb.Distance(tip, fb.Ground((0.2, 0.1, -0.3)), 0.8)),
    "cylinder": lambda: _arm_with(lambda tip: fb.OnSurface(tip, fb.Cylinder((0.0, 0.0, 1.0), 0.5))),
    "implicit": lambda: _arm_with(lambda tip: fb.OnSurface(tip, SPHERE_SURFACE)),
    "implicit_cubic": lambda: _arm_with(lambda tip: fb.OnSurface(tip, CUBIC_SURFACE)),
    "weld": lambda: _two_arms_joined(fb.Weld),
    "hinge": lambda: _two_arms_joined(fb.Hinge),
    "hinge_to_ground": lambda: _arm_with(
        lambda tip: fb.Hinge(tip.link.tree.frame("l2", (0.2, 0.05, 0.0)), fb.Ground((0.1, 0.2, 0.3)))
    ),
    "knife_edge": lambda: _arm_with(
        lambda tip: fb.KnifeEdge(tip.link.tree.frame("l2", (0.2, 0.05, 0.0)), axis=(0.3, 1.0, -0.2))
    ),
    "rolling_disc": lambda: disc_system(q0=[0.0, 0.0, 0.15 * np.cos(0.25), 0.1, 0.25, 0.0]),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_every_point_row_kind_and_coupling_has_an_exact_joint_hessian(name):
    """Loop closures (PointToPoint), rods (Distance), points on planes, spheres, cylinders and a user surface, linear
    couplings, welds and hinges between two arms' frames or to the ground, and a knife edge (a velocity-level row,
    its n = Rā turning with the link): the joint rows' block from the
    constraints' Hessians equals central differences of the rows to 1e-8 relative (measured 1.6e-11 to 8.8e-11)."""
    asm = SYSTEMS[name]().assemble()
    exact, differenced = EquationResidual(asm), EquationResidual(asm, exact=False)
    assert exact.exact
    q, v, qdd, lam = _random_state(asm, 8)
    A = exact.exact_rigid_tangent(asm.workspace(0.0, q, v), qdd, lam, 1.0, 1.0, 0.5)
    B = differenced.rigid_tangent(0.0, q, v, qdd, lam, 1.0, 1.0, 0.5)
    assert np.abs(A - B).max() < 1e-8 * np.abs(B).max()


def _arm_with_springs():
    """The spatial arm with a spring-damper from its tip to the ground, one between two of its own links and a joint
    spring-damper, its tip on a sphere."""
    system = _arm_with(lambda tip: fb.OnSurface(tip, fb.Sphere((0.0, 0.0, 0.0), 0.9)))
    tree = system.trees[0]
    tip, elbow = tree.point("l2", (0.2, 0.05, 0.0)), tree.point("l0", (0.1, 0.0, 0.1))
    forces = [
        fb.SpringDamper(tip, fb.Ground((0.3, -0.2, 0.4)), stiffness=50.0, damping=3.0),
        fb.SpringDamper(elbow, tip, stiffness=20.0, damping=1.5, rest_length=0.2),
        fb.JointSpringDamper(tree.link("l1"), stiffness=4.0, damping=0.5),
    ]
    return fb.System(system.trees, system.constraints, forces=forces, q0=system.q0)


def _bushings():
    """Two spatial arms whose last links' frames are joined by a bushing (turned frames, damped), and the first arm's
    middle link held to a turned ground frame by another; the arms start turned so that the bushings are loaded."""
    from scipy.spatial.transform import Rotation

    system = _two_arms_joined(fb.Weld)
    arm0, arm1 = system.trees
    turned = Rotation.from_rotvec([0.3, -0.5, 0.2]).as_matrix()
    forces = [
        fb.Bushing(arm0.frame("l2", (0.1, 0.0, 0.0), turned), arm1.frame("l2", (0.0, 0.1, 0.0)),
                   stiffness=(400.0, 300.0, 500.0, 8.0, 6.0, 5.0), damping=(2.0, 3.0, 1.0, 0.2, 0.3, 0.1)),
        fb.Bushing(fb.Ground((0.1, 0.2, 0.3), turned.T), arm0.frame("l1", (0.0, 0.05, 0.1)),
                   stiffness=(100.0, 200.0, 300.0, 3.0, 4.0, 5.0), damping=0.5),
    ]  # fmt: skip
    return fb.System(system.trees, forces=forces, q0=np.zeros(6))


@pytest.mark.parametrize("velocity", [False, True])
def test_bushings_have_exact_jacobians(velocity):
    """Bushings between two links' frames and between a link and the ground, 0.5 rad off their rest (the left
    Jacobian's rate in θ, the turn of a's axes and both frames' Jacobians): the joint rows' block equals central
    differences of the rows to 1e-8 relative, at rest (statics) and moving."""
    asm = _bushings().assemble()
    assert all(force.exact_jacobians for force in asm.forces.elements)
    exact, differenced = EquationResidual(asm), EquationResidual(asm, exact=False)
    assert exact.exact
    rng = np.random.default_rng(9)
    q, v, qdd = 0.5 * rng.standard_normal(6), rng.standard_normal(6), rng.standard_normal(6)
    lam = np.zeros(0)
    ws, vd = (asm.workspace(0.0, q, v), v) if velocity else (asm.workspace(0.0, q), None)
    for c_q, c_v in ((1.0, 0.0), (0.0, 1.0)) if velocity else ((1.0, 0.0),):
        A = exact.exact_rigid_tangent(ws, qdd if velocity else None, lam, 1.0, c_q, c_v)
        B = differenced.rigid_tangent(0.0, q, vd, qdd if velocity else None, lam, 1.0, c_q, c_v)
        assert np.abs(A - B).max() < 1e-8 * np.abs(B).max(), (c_q, c_v, np.abs(A - B).max() / np.abs(B).max())


def test_springs_and_dampers_on_links_have_exact_jacobians():
    """Spring-dampers between link points and the ground or another link point (the turn of the ends' Jacobians and
    of their velocities with q included) and a joint spring-damper: the joint rows' block, with velocities and
    damping, equals central differences of the rows to 1e-8 relative (measured 1.5e-11 to 3.0e-10)."""
    asm = _arm_with_springs().assemble()
    exact, differenced = EquationResidual(asm), EquationResidual(asm, exact=False)
    assert exact.exact
    q, v, qdd, lam = _random_state(asm, 6)
    for c_q, c_v in ((1.0, 0.0), (0.0, 1.0), (0.4, 0.3)):
        A = exact.exact_rigid_tangent(asm.workspace(0.0, q, v), qdd, lam, 1.0, c_q, c_v)
        B = differenced.rigid_tangent(0.0, q, v, qdd, lam, 1.0, c_q, c_v)
        assert np.abs(A - B).max() < 1e-8 * np.abs(B).max(), (c_q, c_v, np.abs(A - B).max() / np.abs(B).max())


PYTHON_ROWS = {
    "implicit",
    "implicit_cubic",
    "weld",
    "hinge",
    "hinge_to_ground",
    "knife_edge",
    "rolling_disc",
}  # not compiled


@pytest.mark.parametrize("name", sorted(set(SYSTEMS) - PYTHON_ROWS))
def test_the_compiled_route_forms_the_same_exact_matrix(name):
    """Systems whose every row is compiled (closures, rods, planes, spheres, cylinders, couplings): the compiled
    generalized-α route's iteration matrix from the forest's RNEA derivatives and the rows' point Hessians
    (:func:`flexbody.system.joint_tangent.joint_tangent`) equals its central differences to 1e-8 relative (measured
    7.1e-11 to 1.2e-9)."""
    from flexbody.solvers.compiled_alpha import _iteration_matrix
    from flexbody.solvers.compiled_steps import CompiledSteps

    asm = SYSTEMS[name]().assemble()
    assert CompiledSteps.available(asm)
    compiled = CompiledSteps(asm, np.zeros(10), np.ones(asm.n_dofs), 10)
    q, v, qdd, lam = _random_state(asm, 2)
    n, m = asm.n_dofs, asm.n_constraints
    matrices = {}
    for exact in (True, False):
        A, G = np.empty((n, n)), np.empty((m, n))
        status = _iteration_matrix(compiled.program, compiled.drive(0.0), q, v, qdd, lam, 0.3, 0.7, 1e-6, exact,
                                   compiled.work, A, G)  # fmt: skip
        assert status == 0
        matrices[exact] = A
    assert np.abs(matrices[True] - matrices[False]).max() < 1e-8 * np.abs(matrices[False]).max()


def _arm_in_contact(kind: str, radius: float = 0.0):
    """The spatial arm with its tip 1 cm into a plane or a sphere through a compliant contact with dissipation and
    friction (sliding: the random velocities of the state); with a ``radius``, a ball on the tip's frame, which
    rolls."""
    system = _arm_with(lambda tip: fb.Distance(tip, fb.Ground((0.2, 0.1, -0.3)), 0.8))
    tree = system.trees[0]
    tip = tree.point("l2", (0.2, 0.05, 0.0)) if not radius else tree.frame("l2", (0.2, 0.05, 0.0))
    x = tree.kinematics(np.asarray(system.q0, dtype=float)).point_position(tip.link, tip.offset)
    if kind == "plane":
        normal = np.array([0.3, -0.2, 1.0]) / np.linalg.norm([0.3, -0.2, 1.0])
        surface = fb.Plane(normal, point=x + (0.01 + radius) * normal)
    else:
        centre = x + np.array([0.2, 0.3, -0.1])
        surface = fb.Sphere(centre, float(np.linalg.norm(x - centre)) + 0.01 + radius)
    contact = fb.CompliantContact(
        tip, surface, stiffness=2e4, dissipation=0.5, friction=0.4, slip_velocity=0.05, radius=radius
    )
    return fb.System([tree], [], forces=[contact], q0=system.q0)


@pytest.mark.parametrize("kind, radius", [("plane", 0.0), ("sphere", 0.0), ("plane", 0.05), ("sphere", 0.05)])
def test_a_compliant_contact_on_a_link_has_exact_jacobians(kind, radius):
    """A link point pressed 1 cm into a plane or a sphere, damped, sliding with friction: the joint rows' block (the
    point's Hessian for the contact force and the change of its velocity with q added to JᵀF_x J) equals central
    differences (step 1e-6: the force is stiff) to 1e-8 relative (measured 1.0e-10 to 1.5e-10; without those terms the
    plane's block is off by 3.6e-3). A ball of 5 cm on the tip's frame rolls (Q = J_cᵀF, J_c = J + r[n]×J_ω): its
    block adds the angular Hessian, the turn of n and the change of ω with q (measured 1.2e-10 to 2.2e-10; without
    those terms 1.1e-3 and 3.4e-2)."""
    asm = _arm_in_contact(kind, radius).assemble()
    assert asm.forces.elements[0].exact_jacobians
    exact, differenced = EquationResidual(asm), EquationResidual(asm, fd_step=1e-6, exact=False)
    assert exact.exact
    q, v, qdd, lam = _random_state(asm, 3)
    assert asm.forces.elements[0].gap(asm.workspace(0.0, q, v)) < -0.005  # pressed in
    for c_q, c_v in ((1.0, 0.0), (0.0, 1.0), (0.4, 0.3)):
        A = exact.exact_rigid_tangent(asm.workspace(0.0, q, v), qdd, lam, 1.0, c_q, c_v)
        B = differenced.rigid_tangent(0.0, q, v, qdd, lam, 1.0, c_q, c_v)
        assert np.abs(A - B).max() < 1e-8 * np.abs(B).max(), (c_q, c_v)
