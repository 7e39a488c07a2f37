"""solve_static with unilateral contacts (flexbody.solvers.contact_statics): flexible bodies resting on or pressed
against rigid surfaces, against closed forms; with friction, against the same body with its base held by a Fix and
the Coulomb law at every contact."""

from __future__ import annotations

import numpy as np
import pytest
from uniaxial_svk import uniaxial_stretches

import flexbody as fb

YOUNG, NU, SIZE, LOAD = 1e6, 0.3, 0.1, 200.0


def _block(traction, **settings):
    """A 0.1 m cube (2 × 2 × 2 bricks, St Venant–Kirchhoff) on nine bottom-node contacts with a plane, a dead
    ``traction`` (3,) [N] spread over its top; its static solve."""
    mesh = fb.mesh.box((SIZE, SIZE, SIZE), (2, 2, 2))
    body = fb.FlexibleBody("block", mesh, fb.StVenantKirchhoff(young=YOUNG, poisson=NU, density=1000.0))
    contacts = fb.node_contacts(body, fb.Plane((0.0, 0.0, 1.0)), "z0")
    system = fb.System([body], loads=[fb.SurfaceTraction(body, "z1", total=traction)], constraints=contacts)
    return body, fb.solve_static(system, **settings)


def test_a_block_pressed_on_a_frictionless_plane_compresses_as_svk_says():
    """Nothing holds the block but its contacts (its sideways motions and its turn about z are free and undriven):
    the static solve finds the uniaxial compression the bricks represent exactly, F = diag(a, a, b) with S_xx = 0
    and b S_zz = −P/A (scipy's fsolve), up to the undetermined turn (measured: 1.9e-11 rad); b and the edge's
    stretch a to 1e-12, Σ f_n = 200 N, every gap closed to round-off."""
    body, res = _block((0.0, 0.0, -LOAD), settings=fb.NewtonSettings(tol=1e-14))
    a, b = uniaxial_stretches(YOUNG, NU, LOAD / SIZE**2)
    X = res.q[-1][res.system.body_slice(body)].reshape(-1, 3)
    assert X[:, 2].max() / SIZE == pytest.approx(b, rel=1e-12)
    assert np.linalg.norm(X[2] - X[0]) / SIZE == pytest.approx(a, rel=1e-12)  # an edge: the free turn about z aside
    assert res.histories["contact_normal_force"][-1].sum() == pytest.approx(LOAD, rel=1e-12)
    assert np.abs(res.histories["contact_gap"][-1]).max() < 1e-14
    assert np.all(res.histories["contact_normal_force"][-1] > 0.0)


def test_a_block_lifted_at_one_edge_opens_its_contacts_there():
    """A frictionless block pressed down by 300 N at the middle of its top and lifted by 100 N at a top corner (the
    resultant inside the base): the contacts under the lifted corner open (zero force, positive gap), the others
    carry the net 200 N (Σ f_n to 1e-10) with their gaps closed: the Signorini conditions hold at every contact."""
    mesh = fb.mesh.box((SIZE, SIZE, SIZE), (2, 2, 2))
    body = fb.FlexibleBody("block", mesh, fb.StVenantKirchhoff(young=YOUNG, poisson=NU, density=1000.0))
    X = mesh.points
    top = np.flatnonzero(np.isclose(X[:, 2], SIZE))
    down = top[np.argmin(np.linalg.norm(X[top, :2] - SIZE / 2, axis=1))]
    up = top[np.argmax(X[top, 0] + X[top, 1])]
    loads = [fb.NodalForce(body, down, (0.0, 0.0, -300.0)), fb.NodalForce(body, up, (0.0, 0.0, 100.0))]
    contacts = fb.node_contacts(body, fb.Plane((0.0, 0.0, 1.0)), "z0")
    res = fb.solve_static(fb.System([body], loads=loads, constraints=contacts), load_steps=4)
    gap, force = res.histories["contact_gap"][-1], res.histories["contact_normal_force"][-1]
    assert force.sum() == pytest.approx(200.0, rel=1e-10)
    assert np.all(force >= 0.0) and np.all(gap >= -1e-12)
    assert np.all(np.abs(gap * force) < 1e-12 * 200.0 * SIZE)
    assert (gap > 1e-6).sum() >= 1 and (force > 0.0).sum() >= 3


def _dragged(friction: float, *, on_floor: bool = True, load_steps: int = 1):
    """A 0.1 m cube (2 × 2 × 2 bricks) whose top face a Fix moves by (2, 0, −4) mm, its bottom nodes on a floor with
    ``friction`` (or, ``on_floor`` False, held in place by a Fix); its static solve."""
    mesh = fb.mesh.box((SIZE, SIZE, SIZE), (2, 2, 2))
    body = fb.FlexibleBody("block", mesh, fb.StVenantKirchhoff(young=YOUNG, poisson=NU, density=1000.0))
    held = [fb.Fix(body, "z1", displacement=(0.002, 0.0, -0.004))]
    if on_floor:
        held += fb.node_contacts(body, fb.Plane((0.0, 0.0, 1.0)), "z0", friction=friction)
    else:
        held.append(fb.Fix(body, "z0"))
    return body, fb.solve_static(fb.System([body], constraints=held), load_steps=load_steps)


def _bottom_slip(res, body) -> np.ndarray:
    """(c, 3) the bottom nodes' displacement over the last load step [m] (the contacts' order)."""
    X = res.q[-2:, res.system.body_slice(body)].reshape(2, -1, 3)
    bottom = np.flatnonzero(np.isclose(res.system.reference_coordinates()[res.system.body_slice(body)][2::3], 0.0))
    return X[1, bottom] - X[0, bottom]


def test_a_held_block_sticking_on_a_rough_floor_deforms_as_with_its_base_fixed():
    """Pressed and dragged by its top face with friction enough to stick: every contact stays where it touched, so
    the solve equals that of the same block with its base held by a Fix (the flexible-only static solver, another
    code path) to 1e-12 m (measured 1.3e-15); the floor carries the shear (Σ f_t = −53.9 N along x) inside the
    cones."""
    _, res = _dragged(10.0)
    _, fixed = _dragged(0.0, on_floor=False)
    assert np.abs(res.q[-1] - fixed.q[-1]).max() < 1e-12
    normal, friction = res.histories["contact_normal_force"][-1], res.histories["contact_friction_force"][-1]
    assert np.all(normal > 0.0) and np.abs(res.histories["contact_gap"][-1]).max() < 1e-14
    assert friction[:, 0].sum() < -50.0 and np.all(np.linalg.norm(friction, axis=1) < 10.0 * normal)
    assert np.abs(res.histories["contact_slip"][-1]).max() < 1e-14


@pytest.mark.parametrize("friction", [0.3, 0.05])
def test_dragged_contacts_stick_inside_the_cone_or_slip_on_it_against_their_slip(friction):
    """μ = 0.3: some contacts slip, others stick; μ = 0.05: all slip. Where a contact slips its friction force is on
    the cone, ‖f_t‖ = μ f_n, and opposes its slip (to 1e-9); where it sticks, it is inside; no slip, no force beyond
    the cone. The same loading in four steps (a different history) keeps the law at every step."""
    for load_steps in (1, 4):
        body, res = _dragged(friction, load_steps=load_steps)
        normal, force = res.histories["contact_normal_force"][-1], res.histories["contact_friction_force"][-1]
        slip = _bottom_slip(res, body)
        np.testing.assert_allclose(res.histories["contact_slip"][-1], np.linalg.norm(slip, axis=1), atol=1e-13)
        slipping = np.linalg.norm(slip, axis=1) > 1e-9
        size = np.linalg.norm(force, axis=1)
        np.testing.assert_allclose(size[slipping], friction * normal[slipping], rtol=1e-9)
        along = np.einsum("ci,ci->c", force[slipping], slip[slipping]) / (size * np.linalg.norm(slip, axis=1))[slipping]
        np.testing.assert_allclose(along, -1.0, rtol=1e-9)
        assert np.all(size <= friction * normal * (1.0 + 1e-12))
        assert slipping.sum() == (
            9 if friction == 0.05 else 7
        )  # measured: at 0.3 the centre node and one mid-edge node stick


def test_statics_refuses_friction_on_a_body_nothing_holds_naming_the_contacts():
    material = fb.StVenantKirchhoff(young=YOUNG, poisson=NU, density=1000.0)
    body = fb.FlexibleBody("block", fb.mesh.box((SIZE, SIZE, SIZE), (1, 1, 1)), material)
    contacts = fb.node_contacts(body, fb.Plane((0.0, 0.0, 1.0)), "z0", friction=0.5)
    system = fb.System([body], loads=[fb.Gravity(body)], constraints=contacts)
    with pytest.raises(fb.FlexbodyError, match=r"block.node0.*have friction on a body that no Fix holds.*MoreauJean"):
        fb.solve_static(system)


def test_statics_with_contacts_on_a_rigid_tree_is_refused_naming_the_contacts():
    tree = fb.RigidTree("block", gravity=(0.0, 0.0, -9.81))
    tree.add_link("z", None, fb.Prismatic((0.0, 0.0, 1.0)), mass=1.0)
    system = fb.System([tree], constraints=[fb.Contact(tree.point("z"), fb.Plane((0.0, 0.0, 1.0)), name="floor")])
    with pytest.raises(fb.FlexbodyError, match=r"unilateral contacts.*floor"):
        fb.solve_static(system)
