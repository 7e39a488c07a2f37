"""A run without inputs whose energy explodes stops at the first recorded state that shows it, with the states
before it kept (flexbody.solvers.recorder.EnergyWatch): here RK4 beyond its stable step on a mass on a spring
(a prismatic joint with a linear JointSpringDamper, ω = √(k/m)), which RK4 amplifies for ω dt > 2√2 (a flexible
body's step is checked before the run; a rigid one's is not)."""

import numpy as np
import pytest

import flexbody as fb
from flexbody.errors import StateError

MASS, STIFFNESS = 1.0, 100.0  # kg, N/m: ω = 10 rad/s


def _oscillator() -> fb.AssembledSystem:
    tree = fb.RigidTree("oscillator", gravity=(0.0, 0.0, -9.81))
    mass = tree.add_link("mass", joint=fb.Prismatic((1.0, 0.0, 0.0)), mass=MASS, inertia=np.full(3, 1e-3))
    return fb.System([tree], [], forces=[fb.JointSpringDamper(mass, stiffness=STIFFNESS)]).assemble()


@pytest.mark.parametrize("saved", [False, True], ids=["kept", "saved"])
def test_exploding_energy_stops_the_run_before_the_bad_state(saved, tmp_path):
    asm, integrator = _oscillator(), fb.RK4(dt=0.3)  # energy × 2.27 a step
    assert np.sqrt(STIFFNESS / MASS) * integrator.dt > 2 * np.sqrt(2)  # beyond RK4's stability
    save = {"save_to": tmp_path / "run", "save_every": 5} if saved else {}
    with pytest.raises(StateError, match=r"the energy grew to .* J from .* J, more than 10 times") as info:
        fb.simulate(asm, 100.0, integrator=integrator, q0=np.array([0.1]), v0=np.zeros(1), **save)
    kept = info.value.last_good
    energy = kept.histories["energy"]
    content = max(abs(energy[0]), kept.histories["kinetic"][0], abs(kept.histories["potential"][0]))
    assert np.all(energy - energy[0] <= 10 * content) and kept.n_steps >= 2  # only states before it
    assert kept.times[-1] < 3.0  # stopped within a few steps
    if save:
        assert fb.Results.load(tmp_path / "run").n_steps == kept.n_steps


def test_runs_with_inputs_or_stable_steps_are_not_stopped():
    asm = _oscillator()
    stable = fb.simulate(asm, 20.0, integrator=fb.RK4(dt=0.01), q0=np.array([0.1]), v0=np.zeros(1))
    assert abs(stable.histories["energy"][-1] / stable.histories["energy"][0] - 1) < 1e-4  # 2.8e-5
    pushed = fb.simulate(
        asm, 20.0, integrator=fb.RK4(dt=0.01), tau=lambda t, q, v: 0.5 * v, q0=np.array([0.1]), v0=np.zeros(1)
    )  # negative damping: energy grows
    assert pushed.histories["energy"][-1] > 100 * abs(pushed.histories["energy"][0])
