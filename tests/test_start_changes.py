"""Tests of flexbody.solvers.start_changes: an inconsistent initial state is never changed without a word.

* A knife-edge sleigh given a velocity across its edge: simulate starts from the least-change consistent velocity
  (the projection, closed form here: the lateral component removed) and says so — a WARNING naming the row, its
  residual and ‖Δv‖, and ``metadata["start_corrections"]``; ``consistent_initial="refuse"`` refuses the start
  with the same facts; ``False`` runs from v₀ as given. The same for generalized-α.
* A slider-crank started off its loop: the position correction is reported with the row.
* A consistent start (round-off only) changes nothing and says nothing; an unknown mode is named.
* A start whose mass matrix has a coordinate without inertia (a massless leaf link) is refused naming it.
"""

from __future__ import annotations

import logging

import numpy as np
import pytest

import flexbody as fb
from flexbody.errors import FlexbodyError, StateError


def sleigh() -> fb.AssembledSystem:
    """Edge coordinates (x, y) [m] and heading ψ = 0 [rad]; the knife edge forbids the body's y velocity, ẏ here."""
    tree = fb.RigidTree("sleigh", gravity=(0.0, 0.0, -9.81))
    x = tree.add_link("x", None, fb.Prismatic((1, 0, 0)))
    y = tree.add_link("y", x, fb.Prismatic((0, 1, 0)))
    body = tree.add_link("body", y, fb.Revolute((0, 0, 1)), mass=2.0, com=(0.1, 0, 0), inertia=(0.02, 0.08, 0.1))
    return fb.System([tree], [fb.KnifeEdge(tree.frame(body), axis=(0, 1, 0), name="knife")], q0=[0, 0, 0]).assemble()


INTEGRATORS = {"RK4": fb.RK4(dt=1e-3), "generalized-α": fb.GeneralizedAlpha(dt=1e-3)}


@pytest.mark.parametrize("name", list(INTEGRATORS))
def test_a_velocity_across_the_knife_edge_is_corrected_with_a_warning(name, caplog):
    asm = sleigh()
    v0 = np.array([1.0, 0.5, 2.0])  # ẏ = 0.5 across the edge
    with caplog.at_level(logging.WARNING, logger="flexbody"):
        res = fb.simulate(asm, 0.002, integrator=INTEGRATORS[name], v0=v0)
    assert np.allclose(res.v[0], [1.0, 0.0, 2.0], rtol=0, atol=1e-12)  # the least-change consistent velocity
    changes = res.metadata["start_corrections"]
    assert changes["v"] == pytest.approx(0.5, rel=1e-12) and "q" not in changes
    assert "'knife" in changes["v_rows"] and "5.000e-01" in changes["v_rows"]
    (record,) = [r for r in caplog.records if "start_corrections" in r.getMessage()]
    assert record.levelno == logging.WARNING and "knife" in record.getMessage() and "5.000e-01" in record.getMessage()


def test_refuse_names_the_row_and_false_runs_the_state_as_given_saying_so(caplog):
    asm = sleigh()
    v0 = np.array([1.0, 0.5, 2.0])
    with pytest.raises(StateError, match=r"v0 violated the velocity rows .*'knife.*5\.000e-01.*‖Δv‖∞ = 5\.000e-01"):
        fb.simulate(asm, 0.002, integrator=fb.RK4(dt=1e-3), v0=v0, consistent_initial="refuse")
    with caplog.at_level(logging.WARNING, logger="flexbody"):
        res = fb.simulate(asm, 0.002, integrator=fb.RK4(dt=1e-3), v0=v0, consistent_initial=False)
    assert np.array_equal(res.v[0], v0) and "start_corrections" not in res.metadata
    violations = res.metadata["start_violations"]
    assert violations["v"] == pytest.approx(0.5, rel=1e-12) and "'knife" in violations["v_rows"]
    assert any("as given (consistent_initial=False)" in r.getMessage() for r in caplog.records)


def test_a_configuration_off_the_loop_is_corrected_with_a_warning(caplog):
    asm = fb.mechanisms.slider_crank().assemble()
    q0 = asm.initial_state().q + np.array([0.0, 0.05])  # the end point lifted off its line
    with caplog.at_level(logging.WARNING, logger="flexbody"):
        res = fb.simulate(asm, 0.002, integrator=fb.RK4(dt=1e-3), q0=q0, v0=np.zeros(2))
    changes = res.metadata["start_corrections"]
    assert changes["q"] > 1e-3 and "'slider" in changes["q_rows"]
    assert abs(asm.constraint_value(0.0, res.q[0])).max() < 1e-10
    assert any("q0 violated the position rows" in r.getMessage() for r in caplog.records)
    with pytest.raises(StateError, match=r"q0 violated the position rows .*'slider"):
        fb.simulate(asm, 0.002, integrator=fb.RK4(dt=1e-3), q0=q0, v0=np.zeros(2), consistent_initial="refuse")


def test_a_consistent_start_says_nothing_and_a_bad_mode_is_named(caplog):
    asm = sleigh()
    with caplog.at_level(logging.WARNING, logger="flexbody"):
        res = fb.simulate(
            asm, 0.002, integrator=fb.RK4(dt=1e-3), v0=np.array([1.0, 0.0, 2.0]), consistent_initial="refuse"
        )
    assert not caplog.records and "start_corrections" not in res.metadata
    with pytest.raises(FlexbodyError, match="consistent_initial must be True, False or 'refuse', got 'project'"):
        fb.simulate(asm, 0.002, integrator=fb.RK4(dt=1e-3), consistent_initial="project")


def test_a_link_without_mass_or_inertia_is_named_before_the_first_step():
    """A leaf link with zero mass and inertia (as a URDF may give): its coordinate has no inertia, so every dynamics
    form is singular there. Before: numpy's LinAlgError from the projection (RK4), a ConvergenceError naming no link
    (generalized-α); now a StateError naming the coordinate, before the first step, and forward's own error."""
    tree = fb.RigidTree("t", gravity=(0, 0, -9.81))
    arm = tree.add_link("arm", None, fb.Revolute((0, 1, 0)), mass=1.0, com=(0.5, 0, 0), inertia=(0.01, 0.01, 0.01))
    tree.add_link("tip", arm, fb.Revolute((0, 1, 0)), origin=(1, 0, 0), mass=0.0, inertia=(0, 0, 0))
    asm = fb.System([tree]).assemble()
    for integrator in INTEGRATORS.values():
        with pytest.raises(StateError, match=r"coordinates \['t\.tip'\] carry no inertia"):
            fb.simulate(asm, 0.002, integrator=integrator)
    terms = asm.terms(0.0, asm.q0, np.zeros(2))
    with pytest.raises(StateError, match=r"M is not positive definite \(coordinates \[1\] have a zero diagonal"):
        fb.dynamics.forward(terms.M, terms.h, np.zeros(2), np.zeros((0, 2)), np.zeros(0), method="projection")
