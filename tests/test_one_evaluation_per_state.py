"""One Evaluation per state: every consumer of a state (the dynamics of an RK4 stage, the controller, the
recorder and its energies, the position correction and velocity projection, each Newton iteration of
generalized-α) reads the terms of one :class:`flexbody.system.Evaluation`, made once for that state."""

import numpy as np
import pytest

import flexbody as fb
from flexbody.system import assembled

STEPS = 10


@pytest.fixture
def evaluated(monkeypatch):
    """The states (t, q, v) for which an Evaluation was made, in order."""
    states = []
    make = assembled.Evaluation.__init__

    def counting(self, asm, t, q, v):
        states.append((float(t), q.tobytes(), v.tobytes()))
        make(self, asm, t, q, v)

    monkeypatch.setattr(assembled.Evaluation, "__init__", counting)
    return states


def pidc(asm):
    task = fb.JointTask([asm.trees[0].link("l1")], name="theta")
    return fb.control.ProjectedInverseDynamicsControl(task, fb.control.Setpoint(np.array([1.0])), kp=25.0, kv=10.0)


def test_rk4_with_a_controller_makes_four_evaluations_per_step(evaluated):
    """Four stages, four states per step; the controller, the dynamics and the recorder (with the energies)
    of a stage share its evaluation. The one before the steps is the consistent start at rest."""
    asm = fb.mechanisms.slider_crank(actuated=(0, 1)).assemble()
    res = fb.simulate(asm, STEPS * 1e-3, integrator=fb.RK4(dt=1e-3), controller=pidc(asm), stabilization=None)
    assert res.n_steps == STEPS + 1 and "energy" in res.histories and "task_command" in res.histories
    assert len(evaluated) == 4 * STEPS + 1
    assert len(set(evaluated)) == len(evaluated)


def test_position_correction_evaluates_each_iterate_once(evaluated):
    """The correction reads φ and Φ of each iterate from one evaluation, and the velocity projection Φ and
    φ_t of the corrected configuration from the evaluation its last residual came from."""
    asm = fb.mechanisms.slider_crank().assemble()
    res = fb.simulate(asm, STEPS * 1e-3, integrator=fb.RK4(dt=1e-3))
    assert sum(res.histories["corrections"]) > 0
    assert len(set(evaluated)) == len(evaluated)
    corrected = len(evaluated) - 1 - 4 * STEPS  # beyond the stages and the start
    assert corrected <= STEPS + int(sum(res.histories["corrections"]))


def test_generalized_alpha_makes_one_evaluation_per_newton_iteration(evaluated):
    """One evaluation per Newton iteration, one per accepted step for its record (the converged state),
    and one for the consistent start (which the initial acceleration and the first record share)."""
    asm = fb.mechanisms.flexible_pendulum().assemble()
    res = fb.simulate(asm, 5 * 2e-3, integrator=fb.GeneralizedAlpha(dt=2e-3))
    stats = res.metadata["statistics"]
    assert stats["rejected"] == 0 and stats["steps"] == 5
    assert len(evaluated) == 1 + stats["newton_iterations"] + stats["steps"]
    assert len(set(evaluated)) == len(evaluated)


def test_the_terms_of_a_state_are_computed_once_and_cannot_be_changed():
    asm = fb.mechanisms.slider_crank().assemble()
    state = asm.initial_state()
    first, again = asm.terms(0.0, state.q, state.v), asm.terms(0.0, state.q.copy(), state.v.copy())
    assert again is first and asm.evaluate(0.0, state.q, state.v) is asm.evaluate(0.0, state.q, state.v)
    with pytest.raises(ValueError):
        first.h[0] = 1.0
    moved = state.q.copy()
    moved[0] += 1e-3
    assert asm.terms(0.0, moved, state.v) is not first
