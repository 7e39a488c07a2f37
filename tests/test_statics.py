"""Static Newton solver: convergence, load stepping, linear-solver choice, failures that keep results."""

import numpy as np
import pytest

import flexbody as fb


def cantilever(order=2, divisions=(8, 1, 1), force=(0.0, 0.0, -50.0), material=None):
    mesh = fb.mesh.box((1.0, 0.05, 0.05), divisions, order=order)
    mat = material or fb.StVenantKirchhoff(young=1.0e8, poisson=0.3, density=1000.0)
    beam = fb.FlexibleBody("beam", mesh, mat)
    return beam, fb.System([beam], [fb.Fix(beam, "x0")], [fb.SurfaceTraction(beam, "x1", total=force)])


def test_small_load_matches_linear_solution():
    """At a tiny load the Newton solution equals one linear solve K u = f on the free dofs."""
    beam, system = cantilever(force=(0.0, 0.0, -1e-4))
    res = fb.solve_static(system)
    q0 = beam.reference_coordinates()
    free = np.setdiff1d(np.arange(beam.n_dofs), beam.dofs("x0"))
    K = beam.tangent(q0)[free][:, free].toarray()
    u = np.linalg.solve(K, system.external_force(q0)[free])
    assert np.linalg.norm(res.q[-1][free] - q0[free] - u) < 1e-6 * np.linalg.norm(u)


def test_load_steps_are_recorded_and_converged():
    beam, system = cantilever(force=(0.0, 0.0, -500.0))  # P L² / (E I) ≈ 9.6
    res = fb.solve_static(system, load_steps=4)
    assert np.allclose(res.times, [0, 0.25, 0.5, 0.75, 1.0])
    assert res.q.shape == (5, beam.n_dofs)
    for history in res.residuals[1:]:
        assert len(history) <= 15
        assert history[-1] < 1e-6 * history[0]
    r = beam.internal_force(res.q[-1]) - system.external_force(res.q[-1])
    free = np.setdiff1d(np.arange(beam.n_dofs), beam.dofs("x0"))
    assert np.linalg.norm(r[free]) < 1e-8 * 500.0
    # deflections grow monotonically with the load
    tip = [res.displacements(beam, k)[beam.nodes("x1"), 2].mean() for k in range(5)]
    assert np.all(np.diff(tip) < 0)


def test_failed_increment_is_bisected():
    """With one step and few iterations allowed, bisection still reaches the full load."""
    _beam, system = cantilever(force=(0.0, 0.0, -20000.0))
    res = fb.solve_static(system, load_steps=1, settings=fb.NewtonSettings(max_iterations=12))
    assert res.times[-1] == 1.0 and len(res.times) > 2


def test_convergence_error_keeps_history_and_converged_steps():
    beam, system = cantilever(force=(0.0, 0.0, -20000.0))
    with pytest.raises(fb.ConvergenceError, match="no equilibrium at load factor") as info:
        fb.solve_static(system, load_steps=2, settings=fb.NewtonSettings(max_iterations=1, max_bisections=1))
    err = info.value
    assert len(err.residual_history) >= 1 and all(np.isfinite(err.residual_history))
    assert isinstance(err.last_good, fb.Results)
    assert err.last_good.times[0] == 0.0 and err.last_good.q.shape[1] == beam.n_dofs


def test_cholmod_used_for_spd_and_lu_for_follower_loads(caplog):
    import logging

    beam, system = cantilever()
    with caplog.at_level(logging.INFO, logger="flexbody.solvers"):
        fb.solve_static(system)
    assert "0 LU" in caplog.text
    caplog.clear()
    follower = fb.System([beam], [fb.Fix(beam, "x0")], [fb.Pressure(beam, "z1", 100.0)])
    with caplog.at_level(logging.INFO, logger="flexbody.solvers"):
        fb.solve_static(follower)
    assert "0 Cholesky" in caplog.text


def test_bad_system_input():
    beam, _ = cantilever()
    other = fb.FlexibleBody(
        "other", fb.mesh.box((1, 1, 1), (1, 1, 1)), fb.StVenantKirchhoff(young=1.0, poisson=0.0, density=1.0)
    )
    with pytest.raises(fb.ConstraintError, match="body 'other', which is not in the system"):
        fb.System([beam], [fb.Fix(other, "x0")])
    with pytest.raises(fb.LoadError, match="refers to body 'other'"):
        fb.System([beam], [], [fb.Gravity(other)])
    with pytest.raises(fb.FlexbodyError, match="two bodies are named 'beam'"):
        fb.System([beam, beam])
    with pytest.raises(fb.ConstraintError, match="no node or face set named 'root'"):
        fb.Fix(beam, "root")
    with pytest.raises(fb.FlexbodyError, match="load_steps must be a positive integer"):
        fb.solve_static(fb.System([beam]), load_steps=0)


# ------------------------------------------------------------------------- the one static-solve entry
def test_solve_static_routes_constrained_models_to_the_bordered_newton_with_the_same_numbers():
    """A System with rigid trees (or an assembled one) is solved on (q, λ): the Results hold the same
    equilibrium as static_equilibrium, the multipliers and applied forces of every load step."""
    from flexbody.solvers.constrained_statics import static_equilibrium

    system = fb.mechanisms.slider_crank(actuated=(0,))
    asm = system.assemble()
    eq = static_equilibrium(asm, tau_k=[0.5], load_steps=2)
    for model in (system, asm):
        res = fb.solve_static(model, tau_k=[0.5], load_steps=2)
        assert res.kind == "static" and np.array_equal(res.times, [0.0, 0.5, 1.0])
        assert np.array_equal(res.q[-1], eq.q) and np.array_equal(res.histories["lam"][-1], eq.lam)
        assert np.array_equal(res.histories["tau"][-1], eq.tau) and res.metadata["iterations"] == eq.iterations
        assert sum(res.iterations) == eq.iterations


def test_solve_static_with_a_task_and_target_is_inverse_statics():
    from flexbody.solvers.inverse_statics import inverse_statics

    asm = fb.mechanisms.arm_with_beam(order=1, divisions=(6, 1, 1), q0=(0.3, -0.5), young=7e7).assemble()
    beam = asm.bodies[0]
    points = beam.mesh.points
    tip = int(np.argmax(np.linalg.norm(points - points[beam.nodes("x0")].mean(0), axis=1)))
    task = fb.PointTask(fb.Node(beam, tip), components=(0, 2))
    target = points[tip][[0, 2]] + np.array([-0.1, 0.15])
    direct = inverse_statics(asm, task, target)
    with pytest.warns(DeprecationWarning, match=r"fb.inverse_statics\(model, task, target\)"):
        entry = fb.solve_static(asm, task=task, target=target)
    assert entry.reachable and np.array_equal(entry.tau_k, direct.tau_k) and np.array_equal(entry.q, direct.q)


def test_fix_is_the_one_way_to_hold_nodes():
    """The flexible-only solver eliminates a Fix; assembled, the same Fix becomes constraint rows with
    its name, and the constrained solver finds the same equilibrium."""
    mesh = fb.mesh.box(size=(1.0, 0.1, 0.1), divisions=(4, 1, 1))
    beam = fb.FlexibleBody("beam", mesh, fb.StVenantKirchhoff(young=1e7, poisson=0.3, density=1e3))
    system = fb.System([beam], [fb.Fix(beam, "x0", name="clamp")], loads=[fb.Gravity(beam)])
    eliminated, rows = fb.solve_static(system), fb.solve_static(system.assemble())
    asm = rows.system
    assert asm.row_labels[0].startswith("clamp") and isinstance(asm.constraints[0], fb.constraints.FixNodes)
    assert np.abs(eliminated.q[-1] - rows.q[-1]).max() <= 1e-9 * np.abs(eliminated.q[-1] - asm.q0).max()
