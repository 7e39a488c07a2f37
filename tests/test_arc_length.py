"""Arc-length continuation (``fb.solve_static(..., path=fb.ArcLength())``) through limit points.

The closed form: a St. Venant–Kirchhoff bar with ν = 0 under a dead axial compression deforms homogeneously
(λ = stretch), its nominal force is N(λ) = E A (λ³ − λ)/2, which has a limit point at λ = 1/√3 where
|N| = E A/(3√3): load control cannot pass it; the arc-length path does, and every point it converges to lies on
N(λ) while the load falls again. Beyond λ → 0 the bar would invert (det F ≤ 0), which the path refuses: it ends
with a ConvergenceError whose ``last_good`` holds the path.
"""

from __future__ import annotations

import contextlib
import logging

import numpy as np
import pytest

import flexbody as fb
from flexbody.errors import ConvergenceError, FlexbodyError


@contextlib.contextmanager
def caplog_warnings():
    """The WARNING records flexbody logs inside the block."""
    records: list[logging.LogRecord] = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = records.append  # type: ignore[method-assign]
    logger = logging.getLogger("flexbody")
    logger.addHandler(handler)
    try:
        yield records
    finally:
        logger.removeHandler(handler)


L, B, E = 1.0, 0.1, 1.0e6
AREA = B * B
LIMIT = E * AREA / (3.0 * np.sqrt(3.0))  # N, largest compression the bar carries
FORCE = 1.25 * LIMIT  # N, the load at load factor 1 (beyond the limit)


def _bar(order: int = 1) -> tuple[fb.System, fb.FlexibleBody]:
    mesh = fb.mesh.box((L, B, B), (2, 1, 1), order=order)
    bar = fb.FlexibleBody("bar", mesh, fb.StVenantKirchhoff(young=E, poisson=0.0, density=1.0), locking=None)
    X = mesh.points
    corner = lambda p: int(np.flatnonzero(np.all(np.isclose(X, p), axis=1))[0])  # noqa: E731
    held = [
        fb.Fix(bar, "x0", components=(0,), name="roller"),
        fb.Fix(bar, [corner((0, 0, 0))], components=(1, 2), name="origin"),
        fb.Fix(bar, [corner((0, B, 0))], components=(2,), name="no_twist"),
        fb.Fix(bar, [corner((0, 0, B))], components=(1,), name="no_tilt"),
    ]
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
    with pytest.raises(ConvergenceError, match=r"invert|det F") as info:
        fb.solve_static(system, load_steps=10, path=fb.ArcLength())
    path = info.value.last_good
    stretch, load = _stretch(path, bar), path.times * FORCE
    closed_form = E * AREA * (stretch - stretch**3) / 2.0  # compressive force for the stretch
    assert np.abs(load - closed_form).max() <= 1e-8 * LIMIT
    peak = int(np.argmax(load))
    assert 0 < peak < len(load) - 1 and load[-1] < 0.5 * LIMIT  # over the limit and well down the far side
    assert np.all(np.diff(stretch) < 0)  # the bar shortens all the way
    limit = [c for c in path.metadata["critical_points"] if c["kind"] == "limit point"]
    assert len(limit) == 1 and path.histories["point_kind"][limit[0]["point"]] == fb.solvers.POINT_KINDS["limit point"]
    assert abs(limit[0]["load_factor"] * FORCE - LIMIT) <= 1e-6 * LIMIT  # located on the closed form's maximum
    assert abs(stretch[limit[0]["point"]] - 1 / np.sqrt(3)) <= 1e-5 and peak == limit[0]["point"]
    assert stretch[-1] < 0.25 and set(path.histories) >= {"arc_length", "newton_iterations", "residual"}
    assert max(path.iterations) <= 8  # Newton stays quadratic along the arc
    assert path.metadata["stable"] is False  # past the bar's lateral buckling loads: also on a path that failed


def test_arc_length_settings_and_scope_are_checked():
    system, _ = _bar()
    for bad in (
        {"psi": -1.0},
        {"initial": 0.0},
        {"max_steps": 0},
        {"target_iterations": 2.5},
        {"nodes": "x1"},
        {"at": [np.nan]},
        {"min_load": 0.5},
        {"max_load_step": 0.0},
    ):
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
    assert (
        np.count_nonzero(info.value.last_good.histories["arc_length"] > 0) == 3
    )  # three steps (and any critical points)
    first = info.value.last_good.histories["arc_length"][1]  # the default first arc: the linear response / 10
    with pytest.raises(ConvergenceError, match="max_steps = 3") as info:
        fb.solve_static(system, load_steps=10, path=fb.ArcLength(max_steps=3, max_arc=0.25 * first))
    assert np.all(info.value.last_good.histories["arc_length"][1:] <= 0.25 * first)  # the first arc bounded too
    with pytest.raises(FlexbodyError, match=r"first arc \(initial = 0.2\) is longer than max_arc = 0.1"):
        fb.ArcLength(initial=0.2, max_arc=0.1)
    with pytest.raises(FlexbodyError, match="ArcLength: nodes names body 'beam'"):
        fb.solve_static(system, path=fb.ArcLength(nodes=("beam", "x1")))
    with pytest.raises(FlexbodyError, match="branch switching is for flexible bodies held by Fix only"):
        fb.solve_static(fb.System([tree], []), branch=fb.BranchSwitch(toward=(0, 1, 0)))


def test_arc_length_does_not_retrace_its_path_after_a_snap_back():
    """A shallow arch pinned along its mid-surface and pushed at its crown snaps through and back; with arcs as
    long as the path allows (20 × the first), a corrector once converged on the point behind a sharp turn and the
    path retraced itself. Steps that turn back are retried on half the arc: the path goes on to the load factor 1
    without ever reversing."""
    R, angle, t = 1.0, 0.4, 0.02
    box = fb.mesh.box((2 * angle, t, 0.05), (16, 1, 1), order=2, origin=(-angle, -t / 2, 0.0))
    s, d, z = box.points.T
    points = np.column_stack([(R + d) * np.sin(s), (R + d) * np.cos(s) - R, z])
    ends = np.flatnonzero(np.isclose(np.abs(s), angle) & np.isclose(d, 0.0))
    crown = np.flatnonzero(np.isclose(s, 0.0) & np.isclose(d, 0.0))
    arch = fb.FlexibleBody(
        "arch",
        fb.HexMesh(points, box.cells, node_sets={"ends": ends, "crown": crown}),
        fb.StVenantKirchhoff(young=1e9, poisson=0.0, density=1e3),
        quadrature=(2, 3, 3),
    )
    system = fb.System(
        [arch],
        [fb.Fix(arch, "ends"), fb.Fix(arch, np.arange(arch.n_nodes), components=(2,))],
        loads=[fb.NodalForce(arch, "crown", total=(0.0, -2e3, 0.0))],
    )
    path = fb.solve_static(system, path=fb.ArcLength(), load_steps=20)
    solved = path.histories["point_kind"] < fb.solvers.POINT_KINDS["limit point"]  # critical points are interpolated
    steps = np.diff(path.q[solved], axis=0)
    assert path.times[-1] == 1.0 and path.times.min() < -1.0  # through the snap and back
    assert np.all(np.einsum("ij,ij->i", steps[1:], steps[:-1]) > 0)  # never turned back
    # the symmetric path it follows passes bifurcations (the arch's asymmetric snap), so it ends unstable, and says so
    assert path.metadata["ended"] == "target" and path.metadata["stable"] is False
    assert path.histories["negative_eigenvalues"][-1] > 0 and any(
        c["kind"] == "bifurcation" for c in path.metadata["critical_points"]
    )
    # a stop criterion for a path that does not come back: below min_load it ends, with the path so far
    with caplog_warnings() as records:
        stopped = fb.solve_static(system, path=fb.ArcLength(min_load=-1.0), load_steps=20)
    assert stopped.metadata["ended"] == "min_load" and -1.0 > stopped.times[-1] > path.times.min()
    assert stopped.times.max() < 1.0 and any("below min_load" in r.getMessage() for r in records)


def test_arc_length_records_requested_load_levels_and_measures_arcs_by_named_nodes():
    """``at``: a point on each requested load factor each time the path crosses it (the bar's path rises to its
    limit and falls: twice); ``nodes``: an arc is the RMS displacement of the named nodes."""
    system, bar = _bar(1)
    levels = (0.25, 0.5, 0.75)
    with pytest.raises(ConvergenceError) as info:
        fb.solve_static(system, path=fb.ArcLength(at=levels, nodes=(bar, "x1"), max_arc=0.05))
    path = info.value.last_good
    landed = path.metadata["at_points"]
    np.testing.assert_array_equal(path.times[landed], [0.25, 0.5, 0.75, 0.75, 0.5, 0.25])  # up, then down again
    stretch = _stretch(path, bar)
    assert (
        np.abs(path.times[landed] * FORCE - E * AREA * (stretch[landed] - stretch[landed] ** 3) / 2).max()
        < 1e-8 * LIMIT
    )
    arcs = path.histories["arc_length"]
    steps = np.flatnonzero(arcs > 0)  # the arc-length steps (landed and critical points have none)
    moved = np.diff(path.node_displacements(bar, "x1"), axis=0)  # (points − 1, k, 3)
    previous = np.array([max(i for i in range(j) if arcs[i] > 0 or i == 0) for j in steps])  # where each began
    rms = [np.sqrt((np.sum(moved[p:j], axis=0) ** 2).sum(axis=1).mean()) for p, j in zip(previous, steps)]
    np.testing.assert_allclose(rms, arcs[steps], rtol=1e-9)
    assert arcs.max() <= 0.05


def test_arc_length_bounds_the_load_step_when_asked():
    system, _ = _bar(1)
    with pytest.raises(ConvergenceError) as info:
        fb.solve_static(system, path=fb.ArcLength(max_load_step=0.05))
    path = info.value.last_good
    steps = np.flatnonzero(path.histories["arc_length"] > 0)
    begun = [max(i for i in range(j) if path.histories["arc_length"][i] > 0 or i == 0) for j in steps]
    assert np.abs(path.times[steps] - path.times[begun]).max() <= 0.05
    assert path.times.max() > 0.79  # over the limit point (0.8) all the same
