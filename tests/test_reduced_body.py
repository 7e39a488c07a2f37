"""Reduced-order flexible bodies (floating frame of reference): their mass matrix and forces against Lagrange's
equations of the full FE mass on the same motion, their anchors against finite differences, their geometric
stiffening against the preloaded modes of the full ANCF model, and their motion against the full ANCF model."""

import logging

import numpy as np
import pytest

import flexbody as fb
from flexbody.reduced import ReducedBody


def _bar(young=5e8, divisions=(4, 1, 1), origin=(0.0, -0.025, -0.025)):
    mesh = fb.mesh.box(size=(1.0, 0.05, 0.05), divisions=divisions, order=2, origin=origin)
    return fb.FlexibleBody("bar", mesh, fb.StVenantKirchhoff(young=young, poisson=0.3, density=1000.0))


def _free_body(gravity=(0.0, 0.0, -9.81)):
    """A clamped-basis body on a free-flyer frame (all six frame motions), geometric stiffening off."""
    bar = _bar()
    tree = fb.RigidTree("frame", gravity=gravity)
    link = tree.add_link("body", joint=fb.FreeFlyer())
    red = ReducedBody("bar", fb.solvers.craig_bampton(bar, "x0", 3), link, geometric_stiffening=False)
    return fb.System([tree, red]).assemble(), red, bar


def _lagrange_terms(asm, red, bar, q, v, step=1e-6):
    """M(q) = JₓᵀM_FE Jₓ and h = Ṁv − ∂T/∂q + ∂V/∂q from the nodal positions x(q) of the system's own
    kinematics and the full consistent mass (central differences), V = −Σ g·M_FE x + ½ηᵀK_rη."""
    n = asm.n_dofs
    M_fe = bar.mass_matrix().toarray()
    g = np.tile(red.tree.gravity, bar.n_nodes)
    modal = asm.slices[red]

    def x(q):
        return asm.nodal_state(red, q)[0].ravel()

    def jac(q):
        return np.column_stack([(x(q + step * e) - x(q - step * e)) / (2 * step) for e in np.eye(n)])

    def mass(q):
        J = jac(q)
        return J.T @ M_fe @ J

    def kinetic(q):
        xd = jac(q) @ v
        return 0.5 * xd @ M_fe @ xd

    def potential(q):
        return -g @ (M_fe @ x(q)) + 0.5 * q[modal] @ red.stiffness @ q[modal]

    h = 1e-5
    E = np.eye(n)
    Mdot_v = sum(v[j] * (mass(q + h * E[j]) - mass(q - h * E[j])) / (2 * h) for j in range(n)) @ v
    dT = np.array([(kinetic(q + h * e) - kinetic(q - h * e)) / (2 * h) for e in E])
    dV = np.array([(potential(q + h * e) - potential(q - h * e)) / (2 * h) for e in E])
    return mass(q), Mdot_v - dT + dV


def test_mass_matrix_and_forces_follow_lagrange_of_the_full_mass():
    asm, red, bar = _free_body()
    rng = np.random.default_rng(3)
    q = 0.3 * rng.standard_normal(asm.n_dofs)
    q[asm.slices[red]] *= 0.01
    v = rng.standard_normal(asm.n_dofs)
    ev = asm.workspace(0.0, q, v)
    M, h = ev.mass_and_forces()
    M_ref, h_ref = _lagrange_terms(asm, red, bar, q, v)
    assert np.abs(M - M_ref).max() <= 1e-9 * np.abs(M_ref).max()
    assert np.abs(h - h_ref).max() <= 1e-6 * np.abs(h_ref).max()
    kinetic, _ = asm.energy(q, v)
    assert kinetic == pytest.approx(0.5 * v @ M_ref @ v, rel=1e-9)


def test_point_anchor_velocity_jacobian_and_bias_are_consistent():
    asm, red, _ = _free_body()
    rng = np.random.default_rng(5)
    q, v = 0.3 * rng.standard_normal(asm.n_dofs), rng.standard_normal(asm.n_dofs)
    tip = red.point("x1")
    ev = asm.workspace(0.0, q, v)
    cols, J = tip.jacobian(ev)
    h = 1e-6
    x_plus = tip.position(asm.workspace(0.0, q + h * v, v))
    x_minus = tip.position(asm.workspace(0.0, q - h * v, v))
    assert np.abs(J @ v[cols] - (x_plus - x_minus) / (2 * h)).max() <= 1e-7 * np.abs(J @ v[cols]).max()
    assert np.allclose(tip.velocity(ev), J @ v[cols], rtol=0, atol=1e-12)
    J_plus = tip.jacobian(asm.workspace(0.0, q + h * v, v))[1]
    J_minus = tip.jacobian(asm.workspace(0.0, q - h * v, v))[1]
    bias_fd = (J_plus - J_minus) @ v[cols] / (2 * h)
    assert np.abs(tip.bias(ev) - bias_fd).max() <= 1e-6 * np.abs(bias_fd).max()
    x_nodes = asm.nodal_state(red, q)[0]
    assert np.allclose(tip.position(ev), x_nodes[red.body.nodes("x1")].mean(axis=0), rtol=0, atol=1e-14)


def test_geometric_stiffening_gives_the_preloaded_full_model_frequencies():
    """A soft bar hanging in gravity (tension): modal analysis about the static state under the load, full ANCF
    (geometric stiffness of the preload) against the reduced body with and without stiffening."""
    bar = _bar(young=5e6, divisions=(10, 1, 1))
    gravity = (9.81, 0.0, 0.0)  # along the bar: it hangs from x = 0
    full = fb.modal_analysis(fb.System([bar], [fb.Fix(bar, "x0")], loads=[fb.Gravity(bar, gravity)]), n_modes=4)
    unloaded = fb.modal_analysis(fb.System([bar], [fb.Fix(bar, "x0")]), n_modes=4)
    found = {}
    for stiffening in (False, True):
        tree = fb.RigidTree("clamp", gravity=gravity)
        link = tree.add_link("clamp", joint=fb.Fixed())
        red = ReducedBody("bar", fb.solvers.craig_bampton(bar, "x0", 8), link, geometric_stiffening=stiffening)
        found[stiffening] = fb.modal_analysis(fb.System([tree, red]), n_modes=4).frequencies
    assert full.frequencies[0] / unloaded.frequencies[0] > 1.4  # a strong preload effect
    assert np.abs(found[True] / full.frequencies - 1).max() < 1e-3  # measured 3.6e-4
    assert np.abs(found[False] / unloaded.frequencies - 1).max() < 1e-6  # the linear modes themselves


def test_hinged_bar_follows_the_full_ancf_model():
    """A bar clamped to a hinge swings down from horizontal: the reduced body (6 modes) against the full
    ANCF model of the same mesh, same integrator and step."""
    tips = {}
    for reduced in (False, True):
        bar = _bar(divisions=(10, 1, 1))
        tree = fb.RigidTree("hinge", gravity=(0.0, 0.0, -9.81))
        link = tree.add_link("hub", joint=fb.Revolute((0, 1, 0)))
        if reduced:
            body = ReducedBody("bar", fb.solvers.craig_bampton(bar, "x0", 6), link)
            asm = fb.System([tree, body]).assemble()
        else:
            body = bar
            asm = fb.System(
                [tree, bar], [fb.AttachNodes(bar, "x0", link)], loads=[fb.Gravity(bar, (0.0, 0.0, -9.81))]
            ).assemble()
        res = fb.simulate(asm, 0.3, integrator=fb.GeneralizedAlpha(dt=1e-3))
        tips[reduced] = asm.coordinates(body, res.q, nodes="x1").mean(axis=1)
    assert np.abs(tips[True] - tips[False]).max() < 1e-4  # 2.4e-5 m, L = 1 m


def test_free_free_body_pinned_at_a_node_keeps_its_pin_and_energy():
    bar = _bar(young=5e7, divisions=(6, 1, 1), origin=(0.0, 0.0, 0.0))
    tree = fb.RigidTree("frame", gravity=(0.0, 0.0, -9.81))
    link = tree.add_link("body", joint=fb.FreeFlyer())
    basis = fb.solvers.free_modes(bar, 4)
    red = ReducedBody("bar", basis, link)
    assert red.n_dofs == 4
    pin = fb.PointToPoint(red.point([0]), fb.Ground(bar.mesh.points[0]), name="pin")
    asm = fb.System([tree, red], [pin]).assemble()
    res = fb.simulate(asm, 0.2, integrator=fb.GeneralizedAlpha(dt=2e-3, rho_inf=1.0))
    energies = np.array([sum(asm.energy(q, v)) for q, v in zip(res.q, res.v)])
    kinetic = max(asm.energy(q, v)[0] for q, v in zip(res.q, res.v))
    assert np.abs(energies - energies[0]).max() < 2e-4 * kinetic  # measured 4.3e-5
    corner = asm.coordinates(red, res.q, nodes=[0])[:, 0]
    assert np.abs(corner - bar.mesh.points[0]).max() < 1e-9  # 6.8e-14 m


def test_free_modes_match_the_modal_analysis_of_the_free_body():
    bar = _bar(divisions=(6, 1, 1))
    basis = fb.solvers.free_modes(bar, 4)
    modes = fb.modal_analysis(fb.System([bar]), n_modes=10)
    assert modes.n_rigid_body == 6
    assert np.allclose(basis.fixed_interface_frequencies, modes.frequencies[6:10], rtol=1e-8)
    assert np.allclose(basis.mass, np.eye(4), atol=1e-10)


def test_reduced_body_results_export_the_full_field(tmp_path):
    bar = _bar()
    tree = fb.RigidTree("hinge", gravity=(0.0, 0.0, -9.81))
    link = tree.add_link("hub", joint=fb.Revolute((0, 1, 0)))
    red = ReducedBody("bar", fb.solvers.craig_bampton(bar, "x0", 3), link)
    asm = fb.System([tree, red]).assemble()
    assert np.allclose(asm.coordinates(red, asm.q0), bar.mesh.points, rtol=0, atol=1e-15)
    res = fb.simulate(asm, 0.02, integrator=fb.GeneralizedAlpha(dt=1e-3))
    fb.io.write_results(tmp_path, res)
    assert (tmp_path / "bar.pvd").exists() and (tmp_path / "bar_0000.vtu").exists()
    x, xdot = asm.nodal_state(red, res.q[-1], res.v[-1])
    assert np.allclose(res.positions("bar", -1), x) and res.field("bar", "von_mises", -1).max() > 0
    h = 1e-7
    x_next = asm.nodal_state(red, res.q[-1] + h * res.v[-1])[0]
    assert np.abs((x_next - x) / h - xdot).max() < 1e-5 * np.abs(xdot).max()


def test_bad_reduced_bodies_are_named():
    bar = _bar()
    tree = fb.RigidTree("frame")
    link = tree.add_link("body", joint=fb.FreeFlyer())
    rigid_content = fb.solvers.craig_bampton(bar, "x0", 2)
    with pytest.raises(fb.FlexbodyError, match="rigid-body motion"):  # interface kept, nothing clamped
        fb.System([tree, ReducedBody("bar", rigid_content, link, clamp=[])]).assemble()
    with pytest.raises(fb.ModelError, match="outside the basis's interface"):
        ReducedBody("bar", rigid_content, link, clamp="x1")
    other = fb.RigidTree("other")
    with pytest.raises(fb.ModelError, match="not in the system"):
        fb.System([other, ReducedBody("bar", rigid_content, link)])
    red = ReducedBody("bar", rigid_content, link)
    with pytest.raises(fb.ConstraintError, match="reduced body 'bar'"):
        fb.System([tree], [fb.PointToPoint(red.point("x1"), fb.Ground())])
    guyan = fb.solvers.craig_bampton(bar, "x0", 0)  # interface modes only, all of them clamped: no coordinate left
    with pytest.raises(fb.ModelError, match=r"'bar': the basis leaves no coordinate \(0 fixed-interface modes"):
        ReducedBody("bar", guyan, link)


def test_reduced_and_full_bodies_share_a_system_through_a_pin():
    """A reduced arm on a hinge carries a full ANCF bar pinned at its tip: one system (dense joint and modal
    block, sparse nodal block, the pin's rows across both), energy kept by the trapezoidal rule."""
    arm = _bar(divisions=(6, 1, 1))
    tree = fb.RigidTree("hinge", gravity=(0.0, 0.0, -9.81))
    hub = tree.add_link("hub", joint=fb.Revolute((0, 1, 0)))
    red = ReducedBody("arm", fb.solvers.craig_bampton(arm, "x0", 4), hub)
    second = fb.FlexibleBody(
        "second",
        fb.mesh.box((1.0, 0.05, 0.05), (6, 1, 1), order=2, origin=(1.0, -0.025, -0.025)),
        fb.StVenantKirchhoff(young=5e7, poisson=0.3, density=1000.0),
    )
    base = fb.nearest_node(second, (1.0, 0.0, 0.0))
    pin = fb.PointToPoint(red.point("x1"), base, name="pin")
    asm = fb.System([tree, red, second], [pin], loads=[fb.Gravity(second, (0.0, 0.0, -9.81))]).assemble()
    assert (asm.n_rigid, asm.n_dofs, asm.sparse) == (5, 356, True)
    res = fb.simulate(asm, 0.3, integrator=fb.GeneralizedAlpha(dt=2e-3, rho_inf=1.0))
    energies = np.array([sum(asm.energy(q, v)) for q, v in zip(res.q, res.v)])
    kinetic = max(asm.energy(q, v)[0] for q, v in zip(res.q, res.v))
    assert np.abs(energies - energies[0]).max() < 1e-4 * kinetic  # measured 5.7e-6
    assert np.max(res.histories["violation"]) < 1e-9  # 1.7e-11 m


def test_free_body_is_stiffened_under_inertia_relief():
    """A free–free body's static responses balance each load by its rigid-body acceleration: K u = f − MR(RᵀMR)⁻¹Rᵀf
    with u M-orthogonal to the rigid motions R; gravity (uniform) then leaves no stress, the centrifugal field does."""
    from flexbody.reduced.stiffening import _relieved_responses

    bar = _bar(divisions=(6, 1, 1))
    basis = fb.solvers.free_modes(bar, 3)
    M, K = bar.mass_matrix(), bar.tangent(bar.reference_coordinates())
    X = bar.mesh.points
    R = np.column_stack([np.tile(e, len(X)) for e in np.eye(3)] + [np.cross(e, X).ravel() for e in np.eye(3)])
    loads = np.column_stack(
        [M @ np.tile((0.0, 0.0, -9.81), len(X)), M @ np.column_stack([X[:, 0], 0 * X[:, 0], 0 * X[:, 0]]).ravel()]
    )
    relieved = loads - (M @ R) @ np.linalg.solve(R.T @ (M @ R), R.T @ loads)
    u = _relieved_responses(bar, loads, (2 * np.pi * basis.fixed_interface_frequencies[0]) ** 2)
    assert np.abs(K @ u - relieved).max() <= 1e-9 * np.abs(loads).max()
    assert np.abs(R.T @ (M @ u)).max() <= 1e-12 * np.abs(R).max() * np.abs(M @ u).max() * len(X)
    tree = fb.RigidTree("frame", gravity=(0.0, 0.0, -9.81))
    red = ReducedBody("bar", basis, tree.add_link("body", joint=fb.FreeFlyer()))
    fb.System([tree, red]).assemble()
    gravity, centrifugal = np.abs(red.stiffening[:3]).max(), np.abs(red.stiffening[3:]).max()
    assert gravity <= 1e-9 * centrifugal and centrifugal > 0


def test_a_body_meshed_far_from_its_link_frame_is_said(caplog):
    """A 1 m bar whose clamped end lies 5 m from the hinge's frame (a mesh placed in another frame): accepted (a rigid
    offset is a valid model) with a WARNING giving the distance; the bar at the frame says nothing."""
    tree = fb.RigidTree("hinge", gravity=(0.0, 0.0, -9.81))
    link = tree.add_link("hub", joint=fb.Revolute((0, 1, 0)))
    for origin, said in (((5.0, 0.0, 0.0), True), ((0.0, -0.025, -0.025), False)):
        bar = _bar(divisions=(4, 1, 1), origin=origin)
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="flexbody"):
            fb.System([tree, ReducedBody("bar", fb.solvers.craig_bampton(bar, "x0", 2), link)]).assemble()
        messages = [r.getMessage() for r in caplog.records if "interface nodes lie" in r.getMessage()]
        assert bool(messages) == said and (not said or "lie 5 m from the frame of link 'hub'" in messages[0])
