"""Exact derivatives of reduced bodies (#36 items 1, 2 and 4): their floating-frame share of M a + h and the rows on
their points, against central differences (the best of a step sweep) of the terms themselves.

* The share's ∂/∂q and ∂/∂v on a spatial tree (a revolute then a spherical joint carrying the body), with and without
  geometric stiffening, to 1e-8 relative (measured 2.3e-13 to 3.5e-13 on q, 6.6e-13 to 2.3e-12 on v).
* The partials of the frame forces in their own arguments are exact: taken with steps a hundred times smaller they
  agree to round-off, as a polynomial of degree two's symmetric differences do (measured 1.5e-16).
* Rows on reduced points (a pin, a rod, a point on a sphere) have their Hessians and acceleration derivatives:
  forward_derivatives equals central differences of forward dynamics to 1e-8 (measured 9.3e-13 to 1.1e-9; the
  accelerations are quadratic in v, so the sweep starts at large steps, where round-off is least).
* The general and compiled routes form the same exact Newton matrix as their differences, with a reduced body
  alone on a hinge (compiled) and beside a full ANCF bar (sparse route).
"""

from __future__ import annotations

import numpy as np
import pytest
from test_dynamics_derivatives import _difference_errors, _state, rel
from test_reduced_body import _bar

import flexbody as fb
from flexbody.reduced import ReducedBody
from flexbody.reduced.force_derivatives import frame_force_partials, reduced_force_derivatives
from flexbody.solvers.constrained_equations import EquationResidual


def _spatial(stiffening: bool):
    """A Craig–Bampton bar on a link turned by a revolute then a spherical joint, gravity off the axes."""
    tree = fb.RigidTree("frame", gravity=(0.3, -1.0, -9.81))
    hub = tree.add_link("hub", joint=fb.Revolute((0, 0, 1)))
    link = tree.add_link(
        "body", hub, fb.Spherical(), origin=(0.1, 0.2, 0.0), mass=0.5, inertia=np.diag([1e-3, 2e-3, 3e-3])
    )
    red = ReducedBody("bar", fb.solvers.craig_bampton(_bar(), "x0", 3), link, geometric_stiffening=stiffening)
    return fb.System([tree, red]).assemble(), red


def _moved_state(asm, seed):
    rng = np.random.default_rng(seed)
    n, n_t = asm.n_dofs, asm.reduced[0].tree.n_dofs
    q = asm.q0.copy()
    q[:n_t] += 0.4 * rng.standard_normal(n_t)
    q[n_t:] += 1e-3 * rng.standard_normal(n - n_t)
    v = rng.standard_normal(n)
    v[n_t:] *= 1e-2
    return q, v, rng.standard_normal(n)


@pytest.mark.parametrize("stiffening", [False, True])
def test_the_share_of_a_reduced_body_has_exact_derivatives(stiffening):
    asm, red = _spatial(stiffening)
    q, v, a = _moved_state(asm, 0)
    space, n = asm.joint_space, asm.n_dofs
    D_q, D_v = space.inverse_dynamics_derivatives(asm.workspace(0.0, q, v), a)
    scale = np.where(np.arange(n) < red.tree.n_dofs, 1.0, 1e-2)

    def share(q, v):
        return space.inverse_dynamics(asm.workspace(0.0, q, v), a)

    def central(part, h):
        out = np.empty((n, n))
        for j in range(n):
            d = np.zeros(n)
            d[j] = h * scale[j]
            plus, minus = (share(q + d, v), share(q - d, v)) if part == "q" else (share(q, v + d), share(q, v - d))
            out[:, j] = (plus - minus) / (2 * d[j])
        return out

    assert min(rel(D_q, central("q", h)) for h in (1e-3, 1e-4)) < 1e-8
    assert min(rel(D_v, central("v", h)) for h in (1e-1, 1e-2)) < 1e-8
    columns, share_q, _ = reduced_force_derivatives(red, asm.workspace(0.0, q, v), a[:4], a[4:])
    assert np.array_equal(columns, np.arange(n)) and np.abs(share_q).max() > 0


def test_the_frame_force_partials_are_the_polynomials_derivatives():
    """Steps a hundred times smaller give the same partials to round-off: the symmetric differences of the frame
    forces have no truncation error (ordinary differences of a cubic or worse would differ by 1e-4 relative)."""
    red = _spatial(True)[1]
    r = red.n_dofs
    rng = np.random.default_rng(3)
    x = np.r_[rng.standard_normal(12), 1e-3 * rng.standard_normal(r), 1e-2 * rng.standard_normal(r)]
    eta_ddot = rng.standard_normal(r)
    small = red.packed.copy()
    small[-r:] *= 1e-2
    P, P_small = np.empty((6 + r, 12 + 2 * r)), np.empty((6 + r, 12 + 2 * r))
    frame_force_partials(red.packed, r, x, eta_ddot, P)
    frame_force_partials(small, r, x, eta_ddot, P_small)
    assert rel(P_small, P) < 1e-9


def _free_bar_with(row):
    """A free–free bar on a free-flying frame held by ``row(point, bar)`` (four free–free modes)."""
    bar = _bar(young=5e7, divisions=(6, 1, 1), origin=(0.0, 0.0, 0.0))
    tree = fb.RigidTree("frame", gravity=(0.0, 0.0, -9.81))
    red = ReducedBody("bar", fb.solvers.free_modes(bar, 4), tree.add_link("body", joint=fb.FreeFlyer()))
    return fb.System([tree, red], [row(red, bar)]).assemble()


ROWS = {
    "pin": lambda red, bar: fb.PointToPoint(red.point([0]), fb.Ground(bar.mesh.points[0]), name="pin"),
    "rod": lambda red, bar: fb.Distance(red.point("x1"), fb.Ground((1.2, 0.3, 0.5)), 0.6, name="rod"),
    "sphere": lambda red, bar: fb.OnSurface(red.point("x1"), fb.Sphere((1.0, 0.0, 0.5), 0.5), name="sphere"),
}


@pytest.mark.parametrize("name", sorted(ROWS))
def test_rows_on_reduced_points_equal_central_differences(name):
    asm = _free_bar_with(ROWS[name])
    state, tau = _state(asm, 2, joints=0.01)
    errors = _difference_errors(asm, state, tau, parts=("q", "v"), steps=(1e-2, 1e-3, 1e-4, 1e-5, 1e-6))
    assert max(errors.values()) < 1e-8, errors


def _free_bar_pressed_and_sprung():
    """The free–free bar of :func:`_free_bar_with` with a spring-damper from its tip to the ground, another between
    two of its points, and its root pressed 3 cm into a sphere by a damped compliant contact with friction."""
    bar = _bar(young=5e7, divisions=(6, 1, 1), origin=(0.0, 0.0, 0.0))
    tree = fb.RigidTree("frame", gravity=(0.0, 0.0, -9.81))
    red = ReducedBody("bar", fb.solvers.free_modes(bar, 4), tree.add_link("body", joint=fb.FreeFlyer()))
    root, tip, middle = red.point([0]), red.point("x1"), red.point(fb.nearest_node(bar, (0.5, 0.0, 0.0)).index)
    centre = bar.mesh.points[0] + np.array([0.1, 0.2, -0.3])
    forces = [
        fb.SpringDamper(tip, fb.Ground((1.3, 0.2, 0.4)), stiffness=500.0, damping=3.0),
        fb.SpringDamper(middle, tip, stiffness=200.0, damping=1.5, rest_length=0.4),
        fb.CompliantContact(root, fb.Sphere(centre, float(np.linalg.norm(centre - bar.mesh.points[0])) + 0.03),
                            stiffness=2e4, dissipation=0.5, friction=0.4, slip_velocity=0.05),
    ]  # fmt: skip
    return fb.System([tree, red], forces=forces).assemble()


def test_forces_on_reduced_points_have_exact_jacobians():
    """The turn of the points' Jacobians and velocities with the frame and the modes (``position_hessian``,
    ``velocity_jacobian``) completes the springs' and the compliant contact's Jacobians: the joint and modal rows'
    block equals central differences (step sweep) to 1e-8 relative."""
    from test_exact_iteration_matrix import _random_state

    asm = _free_bar_pressed_and_sprung()
    assert all(force.exact_jacobians for force in asm.forces.elements)
    exact = EquationResidual(asm)
    assert exact.exact
    q, v, qdd, lam = _random_state(asm, 3)
    assert asm.forces.elements[2].gap(asm.workspace(0.0, q, v)) < 0.0  # pressed in
    for c_q, c_v in ((1.0, 0.0), (0.0, 1.0)):
        A = exact.exact_rigid_tangent(asm.workspace(0.0, q, v), qdd, lam, 1.0, c_q, c_v)
        differenced = [EquationResidual(asm, h, exact=False).rigid_tangent(0.0, q, v, qdd, lam, 1.0, c_q, c_v)
                       for h in (1e-5, 1e-6, 1e-7)]  # fmt: skip
        assert min(rel(A, B) for B in differenced) < 1e-8, [rel(A, B) for B in differenced]


def test_both_routes_form_the_exact_newton_matrix_of_reduced_bodies():
    """A reduced arm on a hinge with its tip pinned to a full ANCF bar (the sparse route's joint rows) and case 24's
    reduced arm alone (the compiled route, its stiffening on): the exact Newton matrix equals the differenced one."""
    from test_exact_iteration_matrix import _random_state

    from flexbody.solvers.compiled_alpha import _iteration_matrix
    from flexbody.solvers.compiled_steps import CompiledSteps

    arm = _bar(divisions=(6, 1, 1))
    tree = fb.RigidTree("hinge", gravity=(0.0, 0.0, -9.81))
    red = ReducedBody("arm", fb.solvers.craig_bampton(arm, "x0", 4), tree.add_link("hub", joint=fb.Revolute((0, 1, 0))))
    second = fb.FlexibleBody(
        "second",
        fb.mesh.box((1.0, 0.05, 0.05), (3, 1, 1), order=2, origin=(1.0, -0.025, -0.025)),
        fb.StVenantKirchhoff(young=5e7, poisson=0.3, density=1000.0),
    )
    pin = fb.PointToPoint(red.point("x1"), fb.nearest_node(second, (1.0, 0.0, 0.0)), name="pin")
    asm = fb.System([tree, red, second], [pin]).assemble()
    exact = EquationResidual(asm)
    assert exact.exact
    q, v, qdd, lam = _random_state(asm, 5)
    for c_q, c_v in ((1.0, 0.0), (0.0, 1.0)):
        A = exact.exact_rigid_tangent(asm.workspace(0.0, q, v), qdd, lam, 1.0, c_q, c_v)
        differenced = [EquationResidual(asm, h, exact=False).rigid_tangent(0.0, q, v, qdd, lam, 1.0, c_q, c_v)
                       for h in (1e-3, 1e-4, 1e-5)]  # fmt: skip
        assert min(rel(A, B) for B in differenced) < 1e-8

    from case_files import load

    asm = load("24_reduced_arm_beam_control.py").build(reduced=True, n_modes=6).assemble()
    assert CompiledSteps.available(asm)
    compiled = CompiledSteps(asm, np.zeros(10), np.ones(asm.n_dofs), 10)
    q, v, qdd, lam = _random_state(asm, 2)
    q[2:] *= 0.0
    matrices = {}
    for exact_route in (True, False):
        A, G = np.empty((asm.n_dofs, asm.n_dofs)), np.empty((0, asm.n_dofs))
        status = _iteration_matrix(compiled.program, compiled.drive(0.0), q, v, qdd, lam, 0.3, 0.7, 1e-6, exact_route,
                                   compiled.work, A, G)  # fmt: skip
        assert status == 0
        matrices[exact_route] = A
    assert rel(matrices[True], matrices[False]) < 1e-7
