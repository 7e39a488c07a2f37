"""Tests of flexbody.dynamics.system_data: constrained forward dynamics on a data made once (the model/data form).

* Against Pinocchio's ``constraintDynamics`` (CONTACT_3D closures, exact solve) on the 34-dof branching tree with
  four point closures: a and λ to 1e-10 relative.
* Against :func:`flexbody.dynamics.forward` on the state's workspace, every method and constraint inertia, on the
  branching tree and on Aghili's slider-crank: equal to round-off (the same kernels).
* The returned arrays are the data's own, overwritten by the next call; the terms of the last call are the data's.
* Where the kernels decline, the reference route decides: a singular configuration gives minimum-norm multipliers
  (flagged), "multiplier" raises there as forward does; bad input is named; inputs of any kind give the same
  result; a data of another system, or a system whose terms are not compiled, is refused.
"""

from __future__ import annotations

import numpy as np
import pytest

import flexbody as fb
from flexbody.dynamics import INERTIA_KINDS, METHODS, SystemData, constraint_dynamics, forward
from flexbody.errors import ConstraintError, FlexbodyError, ModelError, StateError


def constrained_state(asm, seed=0):
    """(q, v, τ): the assembled initial q, a random v in ker Φ(q), a random τ."""
    rng = np.random.default_rng(seed)
    q = asm.initial_state().q.copy()
    Phi = asm.terms(0.0, q).Phi
    v = rng.normal(size=asm.n_dofs)
    v -= np.linalg.lstsq(Phi, Phi @ v, rcond=None)[0]
    return q, v, rng.normal(size=asm.n_dofs)


def rel(x, y) -> float:
    return float(np.max(np.abs(x - y)) / max(np.max(np.abs(y)), 1e-300))


@pytest.fixture(scope="module")
def branching():
    asm = fb.mechanisms.branching_loops().assemble()
    return asm, SystemData(asm), *constrained_state(asm)


# ============================================================================ agreement
def test_agrees_with_pinocchio_constraint_dynamics(branching):
    pin = pytest.importorskip("pinocchio")
    from pinocchio_oracle import to_pinocchio

    asm, data, q, v, tau = branching
    model, frames, perm = to_pinocchio(asm.trees[0])
    contacts = pin.StdVec_RigidConstraintModel()
    for c in asm.constraints:  # PointToPoint(LinkPoint, Ground) closures
        placement = frames[c.a.link.name].placement * pin.SE3(np.eye(3), np.asarray(c.a.offset, float))
        contacts.append(
            pin.RigidConstraintModel(
                pin.ContactType.CONTACT_3D,
                model,
                frames[c.a.link.name].joint_id,
                placement,
                0,
                pin.SE3(np.eye(3), np.asarray(c.b.origin, float)),
                pin.LOCAL_WORLD_ALIGNED,
            )
        )
    pin_data = model.createData()
    contact_data = pin.StdVec_RigidConstraintData()
    for cm in contacts:
        contact_data.append(cm.createData())
    pin.initConstraintDynamics(model, pin_data, contacts, contact_data)
    a_pin = pin.constraintDynamics(
        model, pin_data, q[perm], v[perm], tau[perm], contacts, contact_data, pin.ProximalSettings()
    )
    a = constraint_dynamics(asm, data, 0.0, q, v, tau)
    assert rel(a[perm], np.asarray(a_pin)) < 1e-10
    assert rel(data.lam, np.asarray(pin_data.lambda_c)) < 1e-10


@pytest.mark.parametrize("make", [fb.mechanisms.branching_loops, fb.mechanisms.slider_crank])
def test_equals_forward_on_the_workspace_for_every_method(make):
    asm = make().assemble()
    data = SystemData(asm)
    q, v, tau = constrained_state(asm, seed=3)
    terms = asm.workspace(0.25, q, v).terms()
    for method in METHODS:
        for inertia in INERTIA_KINDS if method == "projection" else ("Mc",):
            reference = forward(asm, asm.workspace(0.25, q, v), tau, method=method, inertia=inertia)
            a = constraint_dynamics(asm, data, 0.25, q, v, tau, method=method, inertia=inertia)
            assert rel(a, reference.a) < 1e-13, (method, inertia)
            assert (
                rel(data.lam, reference.lam) < 1e-12 and rel(data.constraint_force, reference.constraint_force) < 1e-12
            )
            assert data.lam_unique and data.rank == asm.n_constraints
    for name in ("M", "h", "Phi", "bias", "phi", "phi_t"):
        assert np.array_equal(getattr(data, name), getattr(terms, name)), name
    assert np.allclose(data.energy, asm.workspace(0.25, q, v).energy(), rtol=1e-14, atol=0.0)


def test_returned_arrays_are_the_data_arrays_overwritten_by_the_next_call(branching):
    asm, data, q, v, tau = branching
    a = constraint_dynamics(asm, data, 0.0, q, v, tau)
    first = a.copy()
    assert a is data.a and not data.M.flags.writeable
    again = constraint_dynamics(asm, data, 0.0, q, v, 2.0 * tau)
    assert again is a and not np.array_equal(a, first)
    assert rel(a, forward(asm, asm.workspace(0.0, q, v), 2.0 * tau, method="multiplier").a) < 1e-13


# ============================================================================ the reference route decides
def test_a_singular_configuration_takes_the_reference_route():
    """The slider-crank on q₂ = 2π − 2q₁ at q₁ = π/2: Φ = l c₁ [2 1] vanishes (to round-off) [AG-67]; "projection"
    returns the unconstrained a with zero multipliers flagged not unique (as forward does), "multiplier" raises."""
    asm = fb.mechanisms.slider_crank().assemble()
    data = SystemData(asm)
    q, v, tau = np.array([np.pi / 2, np.pi]), np.zeros(2), np.array([1.0, 0.0])
    reference = forward(asm, asm.workspace(0.0, q, v), tau, method="projection")
    a = constraint_dynamics(asm, data, 0.0, q, v, tau, method="projection")
    assert not reference.lam_unique and reference.rank == 0
    assert not data.lam_unique and data.rank == 0 and np.all(data.lam == 0)
    assert np.array_equal(a, reference.a)
    assert np.array_equal(data.energy, asm.workspace(0.0, q, v).energy())  # the terms of the reference route
    with pytest.raises(ConstraintError, match="rank 0 of 1"):
        constraint_dynamics(asm, data, 0.0, q, v, tau, method="multiplier")
    constraint_dynamics(asm, data, 0.0, q, v, tau, method="projection")
    assert not data.lam_unique  # until a regular state


def test_inputs_of_any_kind_give_the_same_result(branching):
    asm, data, q, v, tau = branching
    reference = constraint_dynamics(asm, data, 0.0, q, v, tau).copy()
    read_only = q.copy()
    read_only.flags.writeable = False
    strided = np.repeat(v, 2)[::2]
    assert np.array_equal(constraint_dynamics(asm, data, 0.0, list(q), strided, tuple(tau)), reference)
    assert np.array_equal(constraint_dynamics(asm, data, 0.0, read_only, v, tau), reference)


def test_bad_input_is_named(branching):
    asm, data, q, v, tau = branching
    bad = q.copy()
    bad[5] = np.nan
    label = asm.coordinate_labels[5]
    with pytest.raises(StateError, match=rf"q contains NaN or Inf at \['{label}'\]"):
        constraint_dynamics(asm, data, 0.0, bad, v, tau)
    with pytest.raises(StateError, match="tau"):
        constraint_dynamics(asm, data, 0.0, q, v, bad)
    with pytest.raises(StateError, match=rf"v must have shape \({asm.n_dofs},\)"):
        constraint_dynamics(asm, data, 0.0, q, v[:-1], tau)
    with pytest.raises(FlexbodyError, match="unknown method 'kkt'"):
        constraint_dynamics(asm, data, 0.0, q, v, tau, method="kkt")
    with pytest.raises(FlexbodyError, match="unknown inertia kind 'M'"):
        constraint_dynamics(asm, data, 0.0, q, v, tau, method="projection", inertia="M")


def test_a_data_of_another_system_or_of_an_uncompiled_system_is_refused(branching):
    _, data, q, v, tau = branching
    other = fb.mechanisms.branching_loops().assemble()
    with pytest.raises(ModelError, match="made for another system"):
        constraint_dynamics(other, data, 0.0, q, v, tau)
    with pytest.raises(ModelError, match=r"not compiled .* flexible bodies"):
        SystemData(fb.mechanisms.flexible_pendulum().assemble())


def test_systems_with_rows_or_forces_outside_the_compiled_terms_are_refused_naming_them():
    tree = fb.RigidTree("t", gravity=(0, 0, -9.81))
    first = tree.add_link("l", joint=fb.Revolute((0, 1, 0)), mass=1.0, com=(0.5, 0, 0), inertia=np.eye(3) * 0.01)
    second = tree.add_link("m", first, fb.Revolute((0, 1, 0)), origin=(1, 0, 0), mass=1.0, com=(0.5, 0, 0))
    spring = fb.JointSpringDamper(first, stiffness=10.0)
    with pytest.raises(ModelError, match="force elements"):
        SystemData(fb.System([tree], [], forces=[spring]).assemble())
    frame = tree.frame(second, (1.0, 0.0, 0.0), np.eye(3))
    welded = fb.System([tree], [fb.Weld(frame, tree.frame(second, (1.0, 0.0, 0.0), np.eye(3)), name="tip weld")])
    with pytest.raises(ModelError, match="constraints 'tip weld' have no compiled rows"):
        SystemData(welded.assemble())
    free = fb.System([tree], []).assemble()  # no rows: the reference route, a = M⁻¹(τ − h)
    data = SystemData(free)
    assert repr(data) == "SystemData(2 coordinates, 0 constraint rows)"
    q, v, tau = np.array([0.3, -0.4]), np.array([1.0, 2.0]), np.array([0.5, 0.0])
    terms = free.terms(0.0, q, v)
    a = constraint_dynamics(free, data, 0.0, q, v, tau)
    assert rel(a, np.linalg.solve(terms.M, tau - terms.h)) < 1e-13 and data.lam.shape == (0,)
