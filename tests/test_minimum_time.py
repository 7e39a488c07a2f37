"""Tests of flexbody.minimum_time (#37 item 1): the least duration of a move under bounded inputs.

* A rigid mass moved rest to rest under |u| ≤ F: the least duration is the closed form 2√(m d / F) to 1e-8 (measured
  1.7e-12), with full force to the middle and full brake after.
* The same under a speed bound at every knot (``fb.knot_bounds``): bang–coast–bang, the least duration the closed form
  d / v_max + m v_max / F to 1e-8.
* The Done-when of #37 (``make test-slow``): a cart carrying a load on a spring (one undamped mode) moved rest to rest
  by 1 m with no vibration left, |u| ≤ 1 N, 40 intervals: the least duration is within one interval of the solution of
  the switching equations of the bang–bang input (+F, −F, +F, −F, antisymmetric about T/2: displacement d and no
  residual of the mode, solved by scipy's fsolve), the input is bang–bang, and each of its three switches lies within
  one interval of the switching equations' (measured: duration 0.027 of an interval long, switches within 0.015).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from input_models import rigid_mass
from scipy.optimize import fsolve

import flexbody as fb
from flexbody.errors import FlexbodyError, ModelError


def test_the_least_duration_of_a_rest_to_rest_move_is_the_bang_bang_one():
    """A rigid mass m moved by d from rest to rest under |u| ≤ F: T* = 2√(m d / F), full force to the middle, then full
    brake (the closed form; eight intervals put the switch on a knot, and RK4 is exact for a double integrator)."""
    mass, force, distance = 2.0, 1.0, 0.5
    inputs = fb.PiecewiseInputs(np.linspace(0.0, 1.0, 9), np.zeros((8, 1)))
    goal = fb.RunConstraint(fb.FinalValue(0), lower=distance)
    rest = [fb.RunConstraint.equal(fb.FinalValue(0, rate=True), 0.0)]
    found = fb.minimum_time(rigid_mass(mass), inputs, goal, (1.0, 3.0), constraints=rest, lower=-force, upper=force,
                            integrator=fb.RK4(dt=0.05))  # fmt: skip
    assert abs(found.t_end - 2.0 * np.sqrt(mass * distance / force)) < 1e-8
    assert np.allclose(found.optimal.inputs.values[:, 0], [1.0] * 4 + [-1.0] * 4, rtol=0.0, atol=1e-6)
    assert found.optimal.inputs.times[-1] == found.t_end and abs(found.optimal.constraints[0]) < 1e-12
    with pytest.raises(FlexbodyError, match=r"out of reach in 1\.5 s"):
        fb.minimum_time(rigid_mass(mass), inputs, goal, (1.0, 1.5), constraints=rest, lower=-force, upper=force,
                        integrator=fb.RK4(dt=0.05))  # fmt: skip
    with pytest.raises(FlexbodyError, match="one bound"):
        fb.minimum_time(rigid_mass(mass), inputs, fb.RunConstraint.equal(fb.FinalValue(0), distance), (1.0, 3.0))
    with pytest.raises(FlexbodyError, match="0 < shortest < longest"):
        fb.minimum_time(rigid_mass(mass), inputs, goal, (3.0, 1.0))


def test_a_speed_bound_along_the_move_makes_it_bang_coast_bang():
    """The same under |v| ≤ v_max at every knot (``fb.knot_bounds``; v is linear between knots, so bounded everywhere):
    accelerate to v_max, coast, brake: T* = d / v_max + m v_max / F (the closed form), here 2.5 s, the ramps 0.5 s =
    two of the ten intervals."""
    mass, force, distance, speed = 1.0, 1.0, 1.0, 0.5
    inputs = fb.PiecewiseInputs(np.linspace(0.0, 1.0, 11), np.zeros((10, 1)))
    goal = fb.RunConstraint(fb.FinalValue(0), lower=distance)
    bounds = fb.knot_bounds(0, range(1, 11), lower=-speed, upper=speed, rate=True)
    rest = [fb.RunConstraint.equal(fb.FinalValue(0, rate=True), 0.0)]
    found = fb.minimum_time(rigid_mass(mass), inputs, goal, (2.0, 4.0), constraints=rest + bounds, lower=-force,
                            upper=force, integrator=fb.RK4(dt=0.05))  # fmt: skip
    assert abs(found.t_end - (distance / speed + mass * speed / force)) < 1e-8
    assert np.allclose(found.optimal.inputs.values[:, 0], [1.0] * 2 + [0.0] * 6 + [-1.0] * 2, rtol=0.0, atol=1e-6)
    assert np.max(np.abs(found.optimal.results.v[:, 0])) <= speed + 1e-9
    with pytest.raises(ModelError, match="not one of the inputs' 11 knots"):
        fb.minimum_time(rigid_mass(mass), inputs, goal, (2.0, 4.0), constraints=fb.knot_bounds(0, [11], upper=1.0))


CART, LOAD, SPRING, FORCE, DISTANCE = 1.0, 1.0, 1.0, 1.0, 1.0


def _switching_equations() -> tuple[float, float]:
    """(t₁, T) of the bang–bang input +F on [0, t₁), −F to T/2, +F to T − t₁, −F to T: the cart and load move by d
    (x(T) = ∫(T − t)u dt / (m₁ + m₂) = d; ∫u dt = 0 by the antisymmetry) and the mode ω² = k(1/m₁ + 1/m₂) keeps no
    residual (∫u sin ω(T − t) dt = 0; the cosine part vanishes by the antisymmetry), solved by scipy's fsolve."""
    total, omega = CART + LOAD, np.sqrt(SPRING * (1.0 / CART + 1.0 / LOAD))

    def pieces(t1, T):
        return [(0.0, t1, FORCE), (t1, T / 2, -FORCE), (T / 2, T - t1, FORCE), (T - t1, T, -FORCE)]

    def residuals(z):
        t1, T = z
        moved = sum(u * ((T - a) ** 2 - (T - b) ** 2) / 2.0 for a, b, u in pieces(t1, T)) / total
        mode = sum(u * (np.cos(omega * (T - b)) - np.cos(omega * (T - a))) / omega for a, b, u in pieces(t1, T))
        return [moved - DISTANCE, mode]

    t1, T = fsolve(residuals, [0.8, 3.5], xtol=1e-14)
    assert np.max(np.abs(residuals([t1, T]))) < 1e-12
    return float(t1), float(T)


def _cart_with_load():
    tree = fb.RigidTree("carrier", gravity=(0.0, 0.0, 0.0))
    cart = tree.add_link("cart", None, fb.Prismatic((1.0, 0.0, 0.0)), mass=CART, inertia=(0.1, 0.1, 0.1))
    load = tree.add_link("load", cart, fb.Prismatic((1.0, 0.0, 0.0)), mass=LOAD, inertia=(0.1, 0.1, 0.1))
    spring = fb.JointSpringDamper(load, stiffness=SPRING)
    return fb.System([tree], [], forces=[spring], actuators=[cart], q0=np.zeros(2)).assemble()


@pytest.mark.slow  # nine trials of 16 SLSQP iterations on 250 RK4 steps: about 90 s
def test_the_least_duration_with_a_flexible_mode_is_bang_bang_at_the_switching_equations_solution():
    t1, T = _switching_equations()
    intervals = 40
    inputs = fb.PiecewiseInputs(np.linspace(0.0, 1.0, intervals + 1), np.zeros((intervals, 1)))
    goal = fb.RunConstraint(fb.FinalValue(0), lower=DISTANCE)
    rest = [fb.RunConstraint.equal(f, 0.0) for f in (fb.FinalValue(1), fb.FinalValue(0, True), fb.FinalValue(1, True))]
    found = fb.minimum_time(_cart_with_load(), inputs, goal, (3.5, 5.0), constraints=rest, lower=-FORCE,
                            upper=FORCE, integrator=fb.RK4(dt=0.02))  # fmt: skip
    step = found.t_end / intervals
    assert abs(found.t_end - T) < step
    u = found.optimal.inputs.values[:, 0] / FORCE
    saturated = np.flatnonzero(np.abs(np.abs(u) - 1.0) <= 1e-6)
    assert np.max(np.diff(saturated)) <= 2 and saturated[0] == 0 and saturated[-1] == intervals - 1  # bang–bang
    assert list(np.sign(u[saturated[np.flatnonzero(np.diff(np.sign(u[saturated]))) + 1]])) == [-1.0, 1.0, -1.0]
    switches = np.array(_switch_instants(u, saturated, step))
    assert switches.size == 3 and np.max(np.abs(switches - [t1, T / 2.0, T - t1])) < step, switches


def _switch_instants(u: np.ndarray, saturated: np.ndarray, step: float) -> list[float]:
    """The switches of a bang–bang sequence u (in units of the bound, intervals of ``step``) between ``saturated``
    intervals of opposite signs: at the knot between them, or inside the one interval between them at the instant that
    gives it its mean."""
    out = []
    for a, b in itertools.pairwise(saturated):
        if np.sign(u[a]) != np.sign(u[b]):
            inside = (1.0 + np.sign(u[a]) * u[a + 1]) / 2.0 if b == a + 2 else 0.0
            out.append((a + 1 + inside) * step)
    return out
