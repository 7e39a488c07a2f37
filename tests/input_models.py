"""Small actuated models and a central-difference oracle for the tests of input signals, run gradients, optimal
inputs and minimum time."""

from __future__ import annotations

import numpy as np

import flexbody as fb


def oscillator(mass: float, omega: float):
    """A mass [kg] on a spring of angular frequency ``omega`` [rad/s] along x, driven by a force: one undamped mode."""
    tree = fb.RigidTree("oscillator", gravity=(0.0, 0.0, 0.0))
    link = tree.add_link("mass", None, fb.Prismatic((1.0, 0.0, 0.0)), mass=mass, inertia=(0.1, 0.1, 0.1))
    spring = fb.JointSpringDamper(link, stiffness=mass * omega**2)
    return fb.System([tree], [], forces=[spring], actuators=[link], q0=np.zeros(1)).assemble()


def rigid_mass(mass: float):
    """A free mass [kg] along x, driven by a force."""
    tree = fb.RigidTree("mass", gravity=(0.0, 0.0, 0.0))
    link = tree.add_link("mass", None, fb.Prismatic((1.0, 0.0, 0.0)), mass=mass, inertia=(0.1, 0.1, 0.1))
    return fb.System([tree], [], actuators=[link], q0=np.zeros(1)).assemble()


def pendulum():
    """A 1.5 kg pendulum under gravity (its centre 0.4 m from the pivot), driven by a torque, started at 0.3 rad."""
    tree = fb.RigidTree("pendulum", gravity=(0.0, 0.0, -9.81))
    link = tree.add_link("bob", None, fb.Revolute((0.0, 1.0, 0.0)), mass=1.5, com=(0.4, 0.0, 0.0), inertia=(0.01,) * 3)
    return fb.System([tree], [], actuators=[link], q0=np.array([0.3])).assemble()


def input_gradient_error(asm, t_end: float, cost, inputs, integrator, mode: str, step: float = 1e-4) -> float:
    """max |∂J/∂U − central differences of whole runs (``step``)| / max |differences|, ``fb.gradient`` in ``mode``."""
    found = fb.gradient(asm, t_end, cost, inputs, integrator=integrator, mode=mode)

    def cost_of(values) -> float:
        changed = inputs.with_values(values)
        results = fb.simulate(asm, t_end, integrator=integrator, tau=changed.forces(asm), record_every=1)
        return cost.of_run(results, changed)

    central = central_differences(cost_of, inputs.values, step)
    return float(np.max(np.abs(found.inputs - central)) / np.max(np.abs(central)))


def central_differences(cost_of, values: np.ndarray, step: float) -> np.ndarray:
    """Central differences of ``cost_of(values)`` in each of the ``values`` (any shape)."""
    central = np.empty(values.shape)
    for index in np.ndindex(central.shape):
        changed = values.copy()
        changed[index] += step
        plus = cost_of(changed)
        changed[index] -= 2 * step
        central[index] = (plus - cost_of(changed)) / (2 * step)
    return central
