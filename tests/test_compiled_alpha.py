"""Generalized-α steps with compiled terms (flexbody.solvers.compiled_alpha) against the same steps with the terms
and corrections computed in Python.

Both routes run the one Newton kernel (:func:`~flexbody.solvers.compiled_alpha.alpha_iterations`): on a compiled
model it computes the terms, the iteration matrix and the correction itself; on the Python route it asks for the
correction at each iterate (from the workspace, the sparse saddle-point solver) — so they take the same Newton
iterations and factorizations and agree to rounding. The Python route is that of systems with flexible nodes,
force elements or rows without a compiled form, checked elsewhere against closed forms and other codes.
"""

from __future__ import annotations

import numpy as np
import pytest

import flexbody as fb
from flexbody.solvers import compiled_alpha
from flexbody.solvers.compiled_steps import CompiledSteps

AGREE = 1e-10  # [m, rad] and [m/s, rad/s]: rounding of two orders of the same arithmetic, over the run


def _run(asm, t_end, integrator, compiled: bool, monkeypatch, **kw):
    with monkeypatch.context() as patch:
        if not compiled:
            patch.setattr(CompiledSteps, "available", classmethod(lambda cls, asm: False))
        return fb.simulate(asm, t_end, integrator=integrator, **kw)


def _assert_same_run(asm, t_end, integrator, monkeypatch, **kw):
    fast = _run(asm, t_end, integrator, True, monkeypatch, **kw)
    slow = _run(asm, t_end, integrator, False, monkeypatch, **kw)
    stats, reference = fast.metadata["statistics"], slow.metadata["statistics"]
    assert stats["linear_solver"] == "dense (compiled step)" and reference["linear_solver"] != stats["linear_solver"]
    for key in ("steps", "rejected"):
        assert stats[key] == reference[key], key
    for key in ("newton_iterations", "factorizations"):  # an iterate at the tolerance may round either way
        assert abs(stats[key] - reference[key]) <= 1 + 0.01 * reference[key], key
    np.testing.assert_array_equal(fast.times, slow.times)
    for key in ("q", "v"):
        scale = max(1.0, np.abs(getattr(slow, key)).max())
        assert np.abs(getattr(fast, key) - getattr(slow, key)).max() <= AGREE * scale, key
    lam = slow.histories["lam"]
    assert np.abs(fast.histories["lam"] - lam).max(initial=0.0) <= 1e-8 * max(1.0, np.abs(lam).max(initial=0.0))
    return fast


def _reduced_pendulum(driven: bool):
    """A bar of 27-node bricks, 4 Craig–Bampton modes, clamped to a hinge: falling under gravity, or spun up by
    a joint driver."""
    mesh = fb.mesh.box(size=(1.0, 0.05, 0.05), divisions=(4, 1, 1), order=2, origin=(0.0, -0.025, -0.025))
    bar = fb.FlexibleBody("bar", mesh, fb.StVenantKirchhoff(young=5e8, poisson=0.3, density=1000.0, damping=1e-4))
    tree = fb.RigidTree("hub", gravity=(0.0, 0.0, 0.0) if driven else (0.0, 0.0, -9.81))
    link = tree.add_link("hub", joint=fb.Revolute((0, 0, 1) if driven else (0, 1, 0)))
    rows = [fb.JointDriver(link, lambda t: t * t, lambda t: 2 * t, lambda t: 2.0, name="spin")] if driven else []
    body = fb.ReducedBody("bar", fb.solvers.craig_bampton(bar, "x0", 4), link)
    return fb.System([tree, body], rows).assemble()


@pytest.mark.parametrize("driven", [False, True], ids=["falling", "spun_up"])
def test_reduced_body_steps_agree(driven, monkeypatch):
    asm = _reduced_pendulum(driven)
    assert CompiledSteps.available(asm)
    run = _assert_same_run(asm, 0.3, fb.GeneralizedAlpha(dt=2e-3, rho_inf=0.9), monkeypatch)
    if driven:  # the driver holds at position level
        assert np.abs(run.q[:, 0] - run.times**2).max() <= 1e-12


def test_closed_loop_with_redundant_rows_agrees(monkeypatch):
    """A four-bar with its closure given twice: the Schur complement is singular, its pseudo-inverse splits the
    force between the two copies as the sparse solver does."""
    asm = fb.mechanisms.four_bar(closure="duplicated").assemble()
    run = _assert_same_run(asm, 0.5, fb.GeneralizedAlpha(dt=5e-3), monkeypatch)
    assert np.abs(run.histories["violation"]).max() <= 1e-9


def test_slider_crank_with_halved_steps_agrees(monkeypatch):
    """A step too large for Newton's iterations allowed is halved; both routes halve at the same steps."""
    asm = fb.mechanisms.slider_crank().assemble()
    integrator = fb.GeneralizedAlpha(dt=0.05, rho_inf=0.8, max_iterations=3)
    run = _assert_same_run(asm, 0.6, integrator, monkeypatch)
    assert run.metadata["statistics"]["rejected"] > 0


@pytest.mark.parametrize("batched", [True, False], ids=["batch", "step"])
def test_declined_step_is_taken_by_the_python_route(batched, monkeypatch, tmp_path):
    """A step the kernel declines (here: its second iteration matrix cannot be factored, forced) goes to the
    Python stepper, which keeps the run: the same trajectory as a run that never used the kernel. Steps come in
    compiled batches when nothing is saved as the run goes, one by one otherwise."""
    asm = fb.mechanisms.slider_crank().assemble()
    integrator = fb.GeneralizedAlpha(dt=5e-2, max_iterations=4)
    original, calls = CompiledSteps.factor_matrix, []

    def declining(self):
        calls.append(1)
        return compiled_alpha.SINGULAR if len(calls) == 2 else original(self)

    reference = _run(asm, 1.0, integrator, False, monkeypatch)
    with monkeypatch.context() as patch:
        patch.setattr(CompiledSteps, "factor_matrix", declining)
        run = fb.simulate(asm, 1.0, integrator=integrator, save_to=None if batched else tmp_path / "run")
    stats = run.metadata["statistics"]
    assert len(calls) == 2 and stats["linear_solver"] != "dense (compiled step)"  # the Python route finished
    assert stats["steps"] == reference.metadata["statistics"]["steps"]
    assert np.abs(run.q - reference.q).max() <= AGREE


def test_batches_record_what_single_steps_record(tmp_path):
    """Steps in compiled batches (no controller, inputs held, nothing saved as the run goes) and one compiled step
    at a time (the same run saved as it goes): the same states bit for bit, the same statistics, the same
    histories in the same order (Φᵀλ and ‖Φv + φ_t‖ to rounding: a loop against BLAS), also with halved steps and
    every third step recorded."""
    runs = [
        (_reduced_pendulum(True), fb.GeneralizedAlpha(dt=2e-3, rho_inf=0.9), 0.3, {}),
        (
            fb.mechanisms.four_bar(closure="duplicated").assemble(),
            fb.GeneralizedAlpha(dt=5e-3),
            0.5,
            {"record_every": 3},
        ),
        (
            fb.mechanisms.slider_crank().assemble(),
            fb.GeneralizedAlpha(dt=0.05, rho_inf=0.8, max_iterations=3),
            0.6,
            {"tau": np.array([1.0, 0.0])},
        ),
    ]
    for i, (asm, integrator, t_end, kw) in enumerate(runs):
        batched = fb.simulate(asm, t_end, integrator=integrator, **kw)
        single = fb.simulate(asm, t_end, integrator=integrator, save_to=tmp_path / str(i), **kw)
        for key in ("times", "q", "v"):
            np.testing.assert_array_equal(getattr(batched, key), getattr(single, key))
        assert list(batched.histories) == list(single.histories)
        for key, rows in single.histories.items():
            scale = max(1.0, float(np.abs(rows).max(initial=0.0)))
            assert np.abs(batched.histories[key] - rows).max(initial=0.0) <= 1e-14 * scale, key
        ours, theirs = batched.metadata["statistics"], single.metadata["statistics"]
        assert {k: v for k, v in ours.items() if k != "wall_seconds"} == {
            k: v for k, v in theirs.items() if k != "wall_seconds"
        }
    assert single.metadata["statistics"]["rejected"] > 0


def test_systems_the_kernel_does_not_take():
    from flexbody.mechanisms.flexible import arm_with_beam

    assert not CompiledSteps.available(arm_with_beam(order=1, divisions=(2, 1, 1)).assemble())  # flexible nodes
    tree = fb.RigidTree("t", gravity=(0, 0, -9.81))
    link = tree.add_link("l", joint=fb.Revolute((0, 1, 0)), mass=1.0, com=(0.5, 0, 0), inertia=np.eye(3) * 0.01)
    spring = fb.JointSpringDamper(link, stiffness=10.0)
    assert not CompiledSteps.available(fb.System([tree], [], forces=[spring]).assemble())  # force element
    assert CompiledSteps.available(fb.System([tree], []).assemble())


def test_resumed_compiled_run_repeats_the_uninterrupted_one(tmp_path):
    """A run stopped by a failure resumes from its checkpoint; the kept iteration matrix is formed again where it
    was formed, by the kernel, so the resumed run repeats the uninterrupted one bit for bit."""
    from flexbody.errors import StateError
    from flexbody.solvers.simulation import resume

    asm = _reduced_pendulum(False)
    integrator = fb.GeneralizedAlpha(dt=2e-3, rho_inf=0.9)
    n = asm.n_dofs

    def tau(t, q, v):
        return np.full(n, np.nan) if t > 0.1 else np.zeros(n)

    with pytest.raises(StateError):
        fb.simulate(asm, 0.2, integrator=integrator, tau=tau, save_to=tmp_path, save_every=8)
    resumed = resume(asm, tmp_path)
    plain = fb.simulate(asm, 0.2, integrator=integrator)
    np.testing.assert_array_equal(resumed.times, plain.times)
    assert np.abs(resumed.q - plain.q).max() <= 1e-13 and np.abs(resumed.v - plain.v).max() <= 1e-13
    for key in ("steps", "newton_iterations"):
        assert resumed.metadata["statistics"][key] == plain.metadata["statistics"][key]
