"""Arc-length continuation (``fb.solve_static(..., path=fb.ArcLength())``) through limit points.

The closed form: a St. Venant–Kirchhoff bar with ν = 0 under a dead axial compression deforms homogeneously
(λ = stretch), its nominal force is N(λ) = E A (λ³ − λ)/2, which has a limit point at λ = 1/√3 where
|N| = E A/(3√3): load control cannot pass it; the arc-length path does, and every point it converges to lies on
N(λ) while the load falls again. Beyond λ → 0 the bar would invert (det F ≤ 0), which the path refuses: it ends
with a ConvergenceError whose ``last_good`` holds the path.
"""
from __future__ import annotations

import numpy as np
import pytest

import flexbody as fb
from flexbody.errors import ConvergenceError, FlexbodyError

L, B, E = 1.0, 0.1, 1.0e6
AREA = B * B
LIMIT = E * AREA / (3.0 * np.sqrt(3.0))                     # N, largest compression the bar carries
FORCE = 1.25 * LIMIT                                        # N, the load at load factor 1 (beyond the limit)


def _bar(order: int = 1) -> tuple[fb.System, fb.FlexibleBody]:
    mesh = fb.mesh.box((L, B, B), (2, 1, 1), order=order)
    bar = fb.FlexibleBody("bar", mesh, fb.StVenantKirchhoff(young=E, poisson=0.0, density=1.0))
    X = mesh.points
    corner = lambda p: int(np.flatnonzero(np.all(np.isclose(X, p), axis=1))[0])        # noqa: E731
    held = [fb.Fix(bar, "x0", components=(0,), name="roller"),
            fb.Fix(bar, [corner((0, 0, 0))], components=(1, 2), name="origin"),
            fb.Fix(bar, [corner((0, B, 0))], components=(2,), name="no_twist"),
            fb.Fix(bar, [corner((0, 0, B))], components=(1,), name="no_tilt")]
    load = fb.SurfaceTraction(bar, "x1", total=(-FORCE, 0.0, 0.0))
    return fb.System([bar], held, loads=[load]), bar


def _stretch(results, bar) -> np.ndarray:
    """λ of each point: the end face's mean x over L."""
    return results.node_displacements(bar, "x1")[:, :, 0].mean(axis=1) / L + 1.0


def test_load_control_stops_at_the_limit_point():
    system, _ = _bar()
    with pytest.raises(ConvergenceError) as info:
        fb.solve_static(system, load_steps=10)
    assert info.value.last_good.times[-1] * FORCE <= LIMIT * (1 + 1e-9)


@pytest.mark.parametrize("order", [1, 2], ids=["H8", "H27"])
def test_arc_length_passes_the_limit_point_on_the_closed_form(order):
    system, bar = _bar(order)
    with pytest.raises(ConvergenceError, match="invert|det F") as info:
        fb.solve_static(system, load_steps=10, path=fb.ArcLength())
    path = info.value.last_good
    stretch, load = _stretch(path, bar), path.times * FORCE
    closed_form = E * AREA * (stretch - stretch ** 3) / 2.0            # compressive force for the stretch
    assert np.abs(load - closed_form).max() <= 1e-8 * LIMIT
    peak = int(np.argmax(load))
    assert 0 < peak < len(load) - 1 and load[-1] < 0.5 * LIMIT         # over the limit and well down the far side
    assert np.all(np.diff(stretch) < 0)                                 # the bar shortens all the way
    assert stretch[peak] > 1 / np.sqrt(3) > stretch[peak + 1] and load[peak] <= LIMIT   # on both sides of it
    assert stretch[-1] < 0.25 and set(path.histories) >= {"arc_length", "newton_iterations", "residual"}
    assert max(path.iterations) <= 8                                    # Newton stays quadratic along the arc


def test_arc_length_settings_and_scope_are_checked():
    system, _ = _bar()
    for bad in ({"psi": -1.0}, {"initial": 0.0}, {"max_steps": 0}, {"target_iterations": 2.5}):
        with pytest.raises(FlexbodyError, match="ArcLength"):
            fb.ArcLength(**bad)
    with pytest.raises(FlexbodyError, match="path must be an ArcLength"):
        fb.solve_static(system, path="riks")
    tree = fb.RigidTree("t")
    tree.add_link("l", joint=fb.Revolute((0, 0, 1)), mass=1.0, inertia=np.eye(3))
    with pytest.raises(FlexbodyError, match="held by Fix only"):
        fb.solve_static(fb.System([tree], []), path=fb.ArcLength())
    with pytest.raises(ConvergenceError, match="max_steps = 3") as info:
        fb.solve_static(system, load_steps=10, path=fb.ArcLength(max_steps=3))
    assert len(info.value.last_good.times) == 4
