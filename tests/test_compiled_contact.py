"""Nonsmooth steps in compiled batches (flexbody.solvers.compiled_contact) against the same steps taken one by one by
the Python route (flexbody.solvers.contact_step), which the closed forms of tests/test_moreau_jean.py verify.

Both routes share every formula (terms, contact rows, the contacts a step considers and their bounds, the contact
solver); they differ in the linear algebra (a dense Cholesky per tree against the sparse factor of the whole system),
so their histories agree to round-off, not bit for bit.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import flexbody as fb
from flexbody.errors import ConvergenceError
from flexbody.solvers import compiled_contact
from flexbody.solvers.compiled_contact import CompiledContactSteps
from flexbody.solvers.contact_step import ContactStepper

G = 9.81


def _boxes(count: int = 3, friction: float = 0.4, restitution: float = 0.0) -> fb.System:
    """Boxes on free flyers 0.6 m apart on the floor z = 0, each on its four corner contacts."""
    a, b, c, mass = 0.2, 0.1, 0.05, 2.0
    inertia = (mass / 3 * (b * b + c * c), mass / 3 * (a * a + c * c), mass / 3 * (a * a + b * b))
    floor = fb.Plane((0.0, 0.0, 1.0))
    trees, contacts, q0 = [], [], []
    for k in range(count):
        tree = fb.RigidTree(f"box{k}", gravity=(0.0, 0.0, -G))
        body = tree.add_link("body", None, fb.FreeFlyer(), mass=mass, inertia=inertia)
        for sx in (-1, 1):
            for sy in (-1, 1):
                anchor = tree.point(body, (sx * a, sy * b, -c))
                contacts.append(fb.Contact(anchor, floor, friction=friction, restitution=restitution))
        trees.append(tree)
        q0 += [0.6 * k, 0.0, c + 0.02 * k, 0.0, 0.0, 0.0]  # the second and third fall on the floor
    return fb.System(trees, constraints=contacts, q0=q0)


def _pair(system, t_end: float, monkeypatch, **kw):
    """(compiled, one by one): the run in compiled batches and the same run with the batches refused."""
    asm = system.assemble()
    compiled = fb.simulate(asm, t_end, **kw)
    with monkeypatch.context() as patch:
        patch.setattr(CompiledContactSteps, "available", classmethod(lambda cls, asm, frames: False))
        single = fb.simulate(asm, t_end, **kw)
    return compiled, single


def _assert_same_rows(compiled, single, rtol: float = 1e-10):
    np.testing.assert_array_equal(compiled.times, single.times)
    assert list(compiled.histories) == list(single.histories)
    for key in ("q", "v"):
        scale = max(np.abs(getattr(single, key)).max(), 1.0)
        assert np.abs(getattr(compiled, key) - getattr(single, key)).max() <= rtol * scale, key
    sweeps = compiled.histories["contact_sweeps"] - single.histories["contact_sweeps"]
    assert np.abs(sweeps).max() <= 2  # the last sweep's change meets the tolerance up to round-off
    for key, rows in single.histories.items():
        if key == "contact_sweeps":
            continue
        scale = max(np.abs(rows).max(initial=0.0), 1.0)
        assert np.abs(compiled.histories[key] - rows).max(initial=0.0) <= rtol * scale, key


@pytest.mark.parametrize("record_every", [1, 3])
def test_batches_record_what_single_steps_record(record_every, monkeypatch):
    """Boxes landing (with restitution), sliding to rest and resting; the run ends on a shortened step."""
    v0 = np.zeros(18)
    v0[0], v0[7], v0[17] = 1.0, -0.5, 2.0  # one slides, one slides sideways, one spins about z
    integrator = fb.MoreauJean(dt=2e-3)
    compiled, single = _pair(
        _boxes(restitution=0.3), 0.3013, monkeypatch, integrator=integrator, v0=v0, record_every=record_every
    )
    steps = compiled.metadata["statistics"]
    # every step, and the last state's, computed for its record
    assert steps["compiled_steps"] == steps["steps"] + 1 and single.metadata["statistics"]["compiled_steps"] == 0
    assert compiled.histories["contact_normal_force"].max() > 0.0  # they touched
    assert np.abs(compiled.histories["contact_slip_speed"]).max() > 0.1  # and slid
    _assert_same_rows(compiled, single)


def test_rolling_balls_take_the_compiled_steps_as_points_do(monkeypatch):
    """Balls on link frames (which roll): a ball on a free flyer rolling and spinning on the floor, and one on a slope
    (its closed forms are in tests/test_moreau_jean.py, which now run through the kernel too)."""
    tree = fb.RigidTree("ball", gravity=(0.0, 0.0, -G))
    body = tree.add_link("body", None, fb.FreeFlyer(), mass=1.0, inertia=(0.001,) * 3)
    floor = fb.Contact(tree.frame(body), fb.Plane((0.0, 0.0, 1.0)), friction=0.3, radius=0.05)
    slope = fb.sphere_contact(tree, body, 0.05, fb.Plane((-0.3, 0.0, 1.0), point=(0.4, 0.0, 0.0)), friction=0.3)
    system = fb.System([tree], constraints=[floor, slope], q0=(0.0, 0.0, 0.05, 0.0, 0.0, 0.0))
    v0 = (1.5, 0.3, 0.0, 0.0, 0.0, 8.0)  # sliding, turning about z: it starts to roll, and climbs the slope
    compiled, single = _pair(system, 0.4, monkeypatch, integrator=fb.MoreauJean(dt=1e-3), v0=v0)
    stats = compiled.metadata["statistics"]
    assert stats["steps"] - 2 <= stats["compiled_steps"] <= stats["steps"]  # all but its turn's chart switch
    assert compiled.histories["contact_normal_force"][:, 1].max() > 0.0  # it reached the slope
    _assert_same_rows(compiled, single)


def test_a_robot_arm_from_its_urdf_strikes_a_table_and_slides_as_in_the_python_route(monkeypatch):
    """The UR5 (six revolute joints in one tree: a full 6 × 6 mass block) falls from rest with its tool point onto a
    table (μ = 0.4, e = 0.2) and slides; a ball on its wrist stays above a lower plane. Both routes: the same
    histories (measured: q to 2.4e-15, v to 3.2e-13)."""
    from test_urdf import _path

    tree = fb.load_urdf(_path("ur5"))
    q0 = np.array([0.0, -1.2, 1.5, -0.3, 1.2, 0.0])
    tool = tree.point("tool0", (0.0, 0.0, 0.0))
    height = 0.27470781  # [m] the tool point's at q0
    table = fb.Contact(tool, fb.Plane((0, 0, 1), point=(0, 0, height - 0.05)), friction=0.4, restitution=0.2)
    wrist = fb.sphere_contact(tree, "wrist_3_link", 0.04, fb.Plane((0, 0, 1), point=(0, 0, height - 0.2)), friction=0.3)
    system = fb.System([tree], constraints=[table, wrist], q0=q0)
    compiled, single = _pair(system, 0.6, monkeypatch, integrator=fb.MoreauJean(dt=1e-3))
    assert compiled.histories["contact_normal_force"][:, 0].max() > 100.0  # the strike
    assert compiled.histories["contact_slip_speed"][:, 0].max() > 0.1  # the slide
    _assert_same_rows(compiled, single)


def test_a_rotation_vector_leaving_its_chart_is_taken_by_the_python_route(monkeypatch):
    """A box spinning at 40 rad/s above the floor passes π every few steps: the batch stops before each such step,
    the Python route takes it (switching the chart), and the batches go on."""
    v0 = np.zeros(18)
    v0[3] = 40.0
    system = _boxes()
    asm = system.assemble()
    q0 = np.array(asm.q0)
    q0[2] += 0.5  # the first box high above the floor
    compiled, single = _pair(system, 0.3, monkeypatch, integrator=fb.MoreauJean(dt=1e-3), v0=v0, q0=q0)
    steps = compiled.metadata["statistics"]
    assert 0 < steps["steps"] - steps["compiled_steps"] < steps["steps"] // 10  # a few steps in Python
    assert np.abs(compiled.q[:, 3]).max() <= math.pi
    _assert_same_rows(compiled, single)


def test_a_declined_batch_step_fails_in_the_python_route_naming_its_contacts(monkeypatch):
    """A contact problem that does not converge in the batch (one sweep, tolerance 1e-30) is declined; the Python
    route takes the step — with no candidate confirmed or taken for meeting the law here — and stops with the
    ConvergenceError that names the contacts, keeping the states before it."""
    from flexbody.solvers import coulomb_problem

    monkeypatch.setattr(coulomb_problem, "CONFIRMING_SWEEPS", 0)
    monkeypatch.setattr(coulomb_problem, "LAW_TOL", -1.0)
    v0 = np.zeros(18)
    v0[0] = 1.0
    with pytest.raises(ConvergenceError, match=r"did not converge in 1 sweeps") as caught:
        fb.simulate(_boxes(), 0.05, integrator=fb.MoreauJean(dt=1e-3, max_sweeps=1, tol=1e-30), v0=v0)
    assert caught.value.last_good.n_steps == 0 or caught.value.last_good.times[-1] < 0.05


def test_runs_that_call_or_write_per_step_take_compiled_steps_one_at_a_time(tmp_path, monkeypatch):
    """Inputs that are functions of the state, and runs saved as they go, take the kernel's steps one by one (no
    batches) and record what the Python route records; a model with bilateral rows has no compiled steps."""
    system = _boxes(count=1)
    integrator = fb.MoreauJean(dt=2e-3)
    v0 = (1.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    called, single = _pair(system, 0.02, monkeypatch, integrator=integrator, v0=v0, tau=lambda t, q, v: np.zeros(6))
    saved = fb.simulate(system, 0.02, integrator=integrator, save_to=tmp_path / "run")
    held = fb.simulate(system, 0.02, integrator=integrator, tau=np.zeros(6))
    for run in (called, saved, held):
        assert run.metadata["statistics"]["compiled_steps"] == 11  # ten steps and the last state's, for its record
    assert called.metadata["statistics"]["batches"] == 0 == saved.metadata["statistics"]["batches"]
    assert held.metadata["statistics"]["batches"] == 1
    _assert_same_rows(called, single)
    tree = fb.RigidTree("bead", gravity=(0.0, 0.0, -G))
    tree.add_link("x", None, fb.Prismatic((1.0, 0.0, 0.0)))
    tree.add_link("bead", "x", fb.Prismatic((0.0, 0.0, 1.0)), mass=1.0)
    floor, wire = fb.Plane((0.0, 0.0, 1.0)), fb.Plane((1.0, 0.0, 1.0))
    on_a_wire = fb.System(
        [tree], constraints=[fb.Contact(tree.point("bead"), floor), fb.OnSurface(tree.point("bead"), wire)]
    ).assemble()
    assert on_a_wire.n_constraints == 1
    frames = ContactStepper(on_a_wire, integrator).frames
    assert not CompiledContactSteps.available(on_a_wire, frames)
    run = fb.simulate(on_a_wire, 0.01, integrator=integrator)
    assert run.metadata["statistics"]["compiled_steps"] == 0 == run.metadata["statistics"]["batches"]


def test_the_per_tree_cholesky_solves_as_lapack_does():
    rng = np.random.default_rng(7)
    blocks = [rng.standard_normal((k, k)) for k in (1, 6, 3)]
    M = np.zeros((10, 10))
    starts, counts = np.array([0, 1, 7]), np.array([1, 6, 3])
    for s, k, B in zip(starts, counts, blocks):
        M[s : s + k, s : s + k] = B @ B.T + k * np.eye(k)
    L, d = np.zeros((10, 10)), np.empty(10)
    assert compiled_contact.block_cholesky(M, starts, counts, L, d)
    np.testing.assert_allclose(L, np.linalg.cholesky(M), rtol=0, atol=1e-13)
    x = rng.standard_normal(10)
    y = x.copy()
    for s, k in zip(starts, counts):
        compiled_contact.block_solve(L, d, s, k, y[s : s + k])
    np.testing.assert_allclose(y, np.linalg.solve(M, x), rtol=1e-13)
    M[8, 8] = -1.0  # not positive definite: refused
    assert not compiled_contact.block_cholesky(M, starts, counts, L, d)
