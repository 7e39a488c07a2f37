"""Flexible–flexible contact (fb.BodySurface, flexbody.constraints.body_surface): nodes of one flexible body against
the deforming boundary of another, with the nonsmooth stepper and the static solve, against 1-D wave theory, the
conservation of momentum and the uniaxial closed form in the limit of a rigid support."""

from __future__ import annotations

import numpy as np
import pytest
from uniaxial_svk import uniaxial_stretches

import flexbody as fb
from flexbody.errors import FlexbodyError

L, B, RHO, C, V0 = 1.0, 0.05, 1000.0, 100.0, 0.1
GAP = 2.13e-4  # the impact inside a step


def _collide(damping: float = 1.0) -> dict:
    """Bar A (0.8 B square, 20 bricks) at v₀ strikes bar B (B square, at rest) end on; A's four front nodes are the
    contacts on B's boundary. ν = 0: 1-D waves."""
    nx, ba = 20, 0.8 * B
    dt = 0.5 * (L / nx) / C
    material = fb.StVenantKirchhoff(young=RHO * C * C, poisson=0.0, density=RHO)
    a = fb.FlexibleBody("a", fb.mesh.box((L, ba, ba), (nx, 1, 1), origin=(-L - GAP, -ba / 2, -ba / 2)), material)
    b = fb.FlexibleBody("b", fb.mesh.box((L, B, B), (nx, 1, 1), origin=(0.0, -B / 2, -B / 2)), material)
    surface = fb.BodySurface(b)
    contacts = [fb.Contact(fb.Node(a, int(i)), surface, name=f"front{i}") for i in a.nodes("x1")]
    v0 = np.concatenate([np.tile([V0, 0.0, 0.0], a.n_nodes), np.zeros(3 * b.n_nodes)])
    run = fb.simulate(
        fb.System([a, b], constraints=contacts),
        GAP / V0 + 2 * L / C + 5e-3,
        integrator=fb.MoreauJean(dt=dt, numerical_damping=damping),
        v0=v0,
    )
    force = run.histories["contact_normal_force"].sum(axis=1)
    on = np.flatnonzero(force > 0.0)
    momenta = [
        np.asarray(run.system.coordinates(body, run.v).reshape(run.n_steps, -1) @ body.mass_matrix())[:, 0::3].sum(1)
        for body in (a, b)
    ]
    start, steps = run.times[on[0]], on[-1] - on[0] + 1
    middle = (run.times >= start + steps * dt / 4) & (run.times + dt <= start + 3 * steps * dt / 4)
    after = run.times > run.times[on[-1]]
    z_a, z_b = RHO * C * ba * ba, RHO * C * B * B
    return {
        "chatter_free": bool(np.all(np.diff(on) == 1)),
        "steps": int(steps),
        "waves": 2 * L / C / dt,
        "plateau": force[middle].mean() / (z_a * z_b / (z_a + z_b) * V0),
        "momentum": np.ptp(momenta[0] + momenta[1]) / (momenta[0][0] + momenta[1][0]),
        "v_a": momenta[0][after].mean() / a.mass() / V0,
        "v_b": momenta[1][after].mean() / b.mass() / V0,
        "elastic": ((z_a - z_b) / (z_a + z_b), 2 * z_a / (z_a + z_b)),
        "energy_rise": np.diff(run.histories["energy"]).max() / run.histories["energy"][0],
        "gap": run.histories["contact_gap"].min(),
    }


def test_two_bars_collide_end_on_as_waves_say_and_keep_their_momentum():
    """Contact for 2L/c (81 steps against 80), the force plateau Z_A Z_B v₀/(Z_A + Z_B) of 1-D wave theory to
    3.8e-4 (the St Venant–Kirchhoff softening), the total momentum kept to 1.4e-15 (action and reaction through the
    surface's nodes), the energy never growing (2.2e-16), the penetration 2.6e-10 m; after, A moves back and B on,
    short of the elastic exchange (−0.2195 v₀, 0.7805 v₀) by the step's damping (measured −0.143, 0.731) and close
    to it without that damping (−0.201, 0.769)."""
    r = _collide()
    assert r["chatter_free"] and abs(r["steps"] - r["waves"]) <= 2
    assert r["plateau"] == pytest.approx(1.0, abs=1e-3)
    assert r["momentum"] < 1e-13
    assert r["energy_rise"] <= 1e-14
    assert r["gap"] > -1e-9
    assert r["v_a"] < 0.0 and 0.7 < r["v_b"] < r["elastic"][1]
    undamped = _collide(damping=0.0)
    assert undamped["momentum"] < 1e-13
    assert abs(undamped["v_a"] - r["elastic"][0]) < 0.1 * abs(r["elastic"][0])
    assert abs(undamped["v_b"] - r["elastic"][1]) < abs(r["v_b"] - r["elastic"][1])


def _stacked(young_below: float):
    """A soft 0.1 m cube (E = 1 MPa, 2 × 2 × 2 bricks) pressed by 200 N onto the top of a block 0.2 × 0.2 × 0.1 m
    (4 × 4 × 2 bricks, E = ``young_below``) held at its bottom; the cube is held by nothing else."""
    below = fb.FlexibleBody(
        "below",
        fb.mesh.box((0.2, 0.2, 0.1), (4, 4, 2), origin=(-0.1, -0.1, -0.1)),
        fb.StVenantKirchhoff(young_below, 0.3, 1000.0),
    )
    cube = fb.FlexibleBody(
        "cube", fb.mesh.box((0.1, 0.1, 0.1), (2, 2, 2), origin=(-0.05, -0.05, 0.0)), fb.StVenantKirchhoff(1e6, 0.3, 1e3)
    )
    contacts = fb.node_contacts(cube, fb.BodySurface(below), "z0")
    system = fb.System(
        [below, cube],
        loads=[fb.SurfaceTraction(cube, "z1", total=(0.0, 0.0, -200.0))],
        constraints=[fb.Fix(below, "z0"), *contacts],
    )
    res = fb.solve_static(system)
    X = res.q[-1][system.body_slice(cube)].reshape(-1, 3)
    return np.mean(X[18:, 2] - X[:9, 2]) / 0.1, res  # its height (top layer over bottom layer) over 0.1 m


def test_a_cube_on_a_stiffening_flexible_support_tends_to_its_uniaxial_compression():
    """The cube's stretch b against the closed form of uniaxial compression on a rigid floor (0.9793657333139104,
    the pressed-block test of test_contact_statics), as the support stiffens 10× a step: the error falls 10× a step
    (measured −1.76e-5, −1.77e-6, −1.77e-7: the support's compliance), the contacts carrying 200 N."""
    closed_form = uniaxial_stretches(1e6, 0.3, 200.0 / 0.1**2)[1]
    errors = []
    for young in (1e8, 1e9, 1e10):
        b, res = _stacked(young)
        errors.append(abs(b / closed_form - 1.0))
        assert res.histories["contact_normal_force"][-1].sum() == pytest.approx(200.0, rel=1e-7)
    assert errors[0] < 3e-5
    assert 8.0 < errors[0] / errors[1] < 12.0 and 8.0 < errors[1] / errors[2] < 12.0


def test_a_body_surface_refuses_what_it_cannot_take():
    material = fb.StVenantKirchhoff(young=1e6, poisson=0.3, density=1000.0)
    body = fb.FlexibleBody("body", fb.mesh.box((0.1, 0.1, 0.1), (1, 1, 1)), material)
    surface = fb.BodySurface(body)
    with pytest.raises(FlexbodyError, match="self-contact"):
        fb.Contact(fb.Node(body, 0), surface)
    tree = fb.RigidTree("ball", gravity=(0.0, 0.0, -9.81))
    tree.add_link("z", None, fb.Prismatic((0.0, 0.0, 1.0)), mass=1.0)
    with pytest.raises(FlexbodyError, match="would roll on the flexible surface"):
        fb.Contact(tree.frame("z"), surface, radius=0.01)
    with pytest.raises(FlexbodyError, match="a BodySurface moves"):
        fb.CompliantContact(tree.point("z"), surface, stiffness=1e5)
    with pytest.raises(FlexbodyError, match="only at a state"):
        surface.value(np.zeros(3))
    with pytest.raises(FlexbodyError, match="must be a FlexibleBody"):
        fb.BodySurface(tree)
