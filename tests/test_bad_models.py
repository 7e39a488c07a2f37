"""Models that cannot be solved are refused with an error naming why and where (issue 21, item 3), instead of
SuperLU's "Factor is exactly singular" or a Newton divergence through every bisection."""

from __future__ import annotations

import numpy as np
import pytest

import flexbody as fb
from flexbody.errors import ConstraintError, MeshError

MATERIAL = fb.StVenantKirchhoff(young=1e7, poisson=0.3, density=1e3)


def _bar():
    return fb.FlexibleBody("bar", fb.mesh.box(size=(1.0, 0.1, 0.1), divisions=(4, 1, 1)), MATERIAL)


def test_orphan_nodes_are_named():
    mesh = fb.mesh.box(size=(1.0, 0.1, 0.1), divisions=(4, 1, 1))
    orphaned = fb.mesh.HexMesh(np.vstack([mesh.points, [[2.0, 0.0, 0.0]]]), mesh.cells)
    with pytest.raises(MeshError, match=r"FlexibleBody 'bar': 1 node\(s\) belong to no element \(20\)"):
        fb.FlexibleBody("bar", orphaned, MATERIAL)


@pytest.mark.parametrize(
    "held, free",
    [
        (lambda bar: [], ["translation along (1.00, 0.00, 0.00)", "6 rigid-body motion(s)"]),
        (lambda bar: [fb.Fix(bar, [0])], ["3 rigid-body motion(s)"]),
        (lambda bar: [fb.Fix(bar, [0, 1])], ["1 rigid-body motion(s) free (rotation about (1.00, 0.00, 0.00))"]),
        (
            lambda bar: [fb.Fix(bar, "x0", components=(0,))],
            ["3 rigid-body motion(s)", "rotation about (1.00, 0.00, 0.00)"],
        ),
    ],
    ids=["free floating", "one node", "two nodes on a line", "roller face"],
)
def test_a_body_its_fixes_do_not_hold_is_named_before_newton(held, free):
    bar = _bar()
    system = fb.System([bar], held(bar), loads=[fb.Gravity(bar, (0.0, 0.0, -9.81))])
    with pytest.raises(ConstraintError, match="body 'bar' is not held") as info:
        fb.solve_static(system)
    for text in free:
        assert text in str(info.value), str(info.value)


def test_a_held_body_is_solved():
    bar = _bar()
    results = fb.solve_static(fb.System([bar], [fb.Fix(bar, "x0")], loads=[fb.Gravity(bar, (0.0, 0.0, -9.81))]))
    assert results.q.shape == (2, bar.n_dofs)


def test_rk4_step_above_the_stable_step_is_refused_before_the_run():
    """RK4 far beyond its stable step used to explode (energy 1e170 × the start after three steps) before NaN
    stopped it; the step is now checked against 2√2/ω_max, ω_max from power iterations, before the run."""
    import scipy.linalg

    from flexbody.errors import FlexbodyError
    from flexbody.mechanisms.flexible import flexible_pendulum
    from flexbody.solvers.explicit import stable_rk4_step

    asm = flexible_pendulum(divisions=(4, 1, 1)).assemble()
    fs = asm.flexible.slice
    top = scipy.linalg.eigh(
        asm.flexible.internal_tangent(asm.q0[fs]).toarray(), asm.flexible.mass.matrix.toarray(), eigvals_only=True
    )[-1]
    exact, estimate = 2 * np.sqrt(2) / np.sqrt(top), stable_rk4_step(asm, asm.q0)
    assert exact <= estimate <= 1.01 * exact  # the Rayleigh quotient never exceeds ω_max²
    with pytest.raises(FlexbodyError, match=r"RK4 dt = 0.002 s is above the stable step 0.000132 s"):
        fb.simulate(asm, 0.05, integrator=fb.RK4(dt=2e-3))
    run = fb.simulate(asm, 0.01, integrator=fb.RK4(dt=0.95 * exact))
    energy = run.histories["energy"]
    assert np.abs(energy - energy[0]).max() <= 1e-4 * abs(energy[0])


def test_an_inverted_state_is_never_an_equilibrium():
    """A bar pushed by a far too large end load: Newton used to 'converge' on a state with det F = −1.33 at a
    Gauss point (St. Venant–Kirchhoff allows inversion); such a state is now refused, the load is bisected, and
    the solve ends at the last load factor with a true equilibrium (kept in ``last_good``)."""
    from flexbody.errors import ConvergenceError

    mesh = fb.mesh.box(size=(1.0, 0.1, 0.1), divisions=(8, 1, 1))
    bar = fb.FlexibleBody("bar", mesh, MATERIAL, locking=None)  # plain bricks: the inversion, not a mode solve, fails
    push = fb.System([bar], [fb.Fix(bar, "x0")], loads=[fb.SurfaceTraction(bar, "x1", (-1e7, 0.0, 0.0))])
    mirrored = (bar.reference_coordinates().reshape(-1, 3) * (-1.0, 1.0, 1.0)).ravel()
    message = bar.inversion(mirrored)  # every det F is −1 (which one is smallest: rounding)
    assert message.startswith("body 'bar' is inverted: det F = -1 at Gauss point ")
    assert message.endswith("(64 Gauss points with det F ≤ 0)")
    with pytest.raises(ConvergenceError, match="no equilibrium") as info:
        fb.solve_static(push)
    good = info.value.last_good
    assert 0.0 < good.times[-1] < 1.0
    assert bar.inversion(good.q[-1]) is None
    assert bar.inversion(bar.reference_coordinates()) is None
    with pytest.raises(ConvergenceError, match=r"Newton reached a state where body 'bar' is inverted: det F = -1.33"):
        fb.solvers.static_equilibrium(push.assemble(), max_bisections=0)  # the constrained solver, one step


def test_load_increments_halve_on_failure_and_grow_back_after_easy_steps():
    from flexbody.solvers.load_increments import LoadIncrements

    steps = LoadIncrements(load_steps=2, max_bisections=2, grow_after=2, easy_iterations=6)
    assert steps.target(0.0) == 0.5
    assert steps.failed(0.0) and steps.failed(0.0) and not steps.failed(0.0)  # two halvings allowed
    assert steps.size == 0.125 and steps.target(0.95) == 1.0
    steps.converged(4)
    steps.converged(9)  # a hard step breaks the run of easy ones
    steps.converged(5)
    assert steps.size == 0.125
    steps.converged(5)
    assert steps.size == 0.25 and steps.halvings == 1 and steps.failed(0.3)  # a halving is free again
    for _ in range(6):
        steps.converged(3)
    assert steps.size == 0.5 and steps.bisections == 3  # never above 1/load_steps


def _arm(gravity=(0.0, 0.0, -9.81)):
    tree = fb.RigidTree("arm", gravity=gravity)
    l1 = tree.add_link("l1", joint=fb.Revolute((0, 0, 1)), mass=1.0, com=(0.5, 0, 0), inertia=np.eye(3) * 0.01)
    l2 = tree.add_link(
        "l2", l1, fb.Revolute((0, 0, 1)), origin=(1, 0, 0), mass=1.0, com=(0.5, 0, 0), inertia=np.eye(3) * 0.01
    )
    return tree, l1, l2


def test_statics_of_joints_held_only_by_drivers():
    """Hinges about the vertical have no static stiffness; drivers alone hold them. The range-space elimination
    used to factor the singular stiffness (SuperLU: "Factor is exactly singular"); the augmented matrix
    K + ρGᵀG gives the equilibrium: the driven angles, no driver force."""
    tree, l1, l2 = _arm()
    result = fb.solve_static(fb.System([tree], [fb.JointDriver(l1, 0.3), fb.JointDriver(l2, -0.2)]))
    np.testing.assert_allclose(result.q[-1], [0.3, -0.2], rtol=0, atol=1e-12)
    assert np.abs(result.histories["lam"][-1]).max() <= 1e-12


def test_inconsistent_pins_are_named():
    """Two pins asking one point to be at two places: every solver names the rows it could not satisfy."""
    from flexbody.errors import ConvergenceError

    tree = fb.RigidTree("arm", gravity=(0.0, 0.0, -9.81))
    l1 = tree.add_link("l1", joint=fb.Revolute((0, 0, 1)), mass=1.0, com=(0.5, 0, 0), inertia=np.eye(3) * 0.01)
    tip = tree.point(l1, (1.0, 0.0, 0.0))
    pins = [
        fb.PointToPoint(tip, fb.Ground((1.0, 0.0, 0.0)), components=(0, 1), name="pin_a"),
        fb.PointToPoint(tip, fb.Ground((0.0, 1.0, 0.0)), components=(0, 1), name="pin_b"),
    ]
    system = fb.System([tree], pins)
    for solve in (
        lambda: fb.simulate(system.assemble(), 0.1),
        lambda: fb.simulate(system.assemble(), 0.1, integrator=fb.GeneralizedAlpha(dt=1e-3)),
        lambda: fb.solve_static(system),
    ):
        with pytest.raises(ConvergenceError, match=r"largest (constraint )?residuals in rows 'pin_b.x'") as info:
            solve()
        assert "'pin_a.y'" in str(info.value)


def test_statics_of_a_joint_nothing_holds_is_named():
    """The second hinge has neither static stiffness nor a driver: the statics used to end in SuperLU's "Factor is
    exactly singular"; now a ConvergenceError says that a motion is held by nothing."""
    from flexbody.errors import ConvergenceError

    tree, l1, _ = _arm()
    with pytest.raises(ConvergenceError, match="singular on the null space of the constraints too"):
        fb.solve_static(fb.System([tree], [fb.JointDriver(l1, 0.3)]))
