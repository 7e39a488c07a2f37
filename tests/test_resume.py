"""Incremental saving (``simulate(..., save_to=…)``), loading partial runs and ``resume``.

The kill test runs a simulation in a subprocess, kills it with SIGKILL once its checkpoint is past a
third of the end time, loads what it left behind, resumes it and compares the whole history with an
uninterrupted run in this process.
"""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path

import numpy as np
import pytest
from case_files import kill_after_checkpoint

import flexbody as fb
from flexbody.errors import FlexbodyError, StateError
from flexbody.solvers.simulation import resume

# A run resumed from a checkpoint repeats the uninterrupted run bit for bit (generalized-α: the checkpoint
# holds where the kept Newton iteration matrix was formed, and the resumed run forms it again there)
EXACT = 1e-13


CASES = {
    "rk4": {"t_end": 3.0, "save_every": 20},
    "gen_alpha": {"t_end": 1.0, "save_every": 10},
    "gen_alpha_im": {"t_end": 0.6, "save_every": 10},  # incompatible-mode bricks: no warm start carries over
}


def _case(kind: str):
    """(model, integrator) of a kill-test case."""
    if kind == "rk4":
        return fb.mechanisms.slider_crank().assemble(), fb.RK4(dt=1e-3)
    from flexbody.mechanisms.flexible import arm_with_beam

    locking = "incompatible_modes" if kind == "gen_alpha_im" else None
    asm = arm_with_beam(order=1, divisions=(4, 1, 1), q0=(0.3, -0.5), locking=locking).assemble()
    return asm, fb.GeneralizedAlpha(dt=2e-3, rho_inf=0.8)


def _child(kind: str, directory: str) -> None:
    """What the subprocess runs (until it is killed)."""
    asm, integrator = _case(kind)
    fb.simulate(
        asm, CASES[kind]["t_end"], integrator=integrator, save_to=directory, save_every=CASES[kind]["save_every"]
    )


def _run_and_kill(kind: str, directory: Path) -> float:
    """Start the run in a subprocess, SIGKILL it when its checkpoint passes t_end/3; return that time."""
    script = (
        f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); import test_resume; "
        f"test_resume._child({kind!r}, {str(directory)!r})"
    )
    return kill_after_checkpoint([sys.executable, "-c", script], directory, CASES[kind]["t_end"] / 3.0, timeout=120.0)


@pytest.mark.parametrize("kind", ["rk4", "gen_alpha", "gen_alpha_im"])
def test_killed_run_loads_and_resumes_to_the_uninterrupted_history(kind, tmp_path):
    run = tmp_path / "run"
    t_kill = _run_and_kill(kind, run)
    t_end = CASES[kind]["t_end"]
    assert not (run / "results.npz").exists()

    partial = fb.Results.load(run)
    assert partial.metadata["complete"] is False
    assert partial.n_steps > 0 and np.all(np.diff(partial.times) > 0)
    assert t_kill - 0.01 <= partial.times[-1] < t_end  # the row at the checkpoint is recorded on resume
    assert partial.metadata["integrator"] in ("RK4", "GeneralizedAlpha") and partial.metadata["t_end"] == t_end

    asm, integrator = _case(kind)
    resumed = resume(asm, run)
    assert resumed.metadata["resumed_at"][0] == pytest.approx(t_kill)
    assert fb.Results.load(run).metadata["complete"] is True
    assert not (run / "checkpoint.npz").exists() and not (run / "parts").exists()

    uninterrupted = fb.simulate(asm, t_end, integrator=integrator)
    for res in (partial, resumed):
        count = res.n_steps
        np.testing.assert_array_equal(res.times, uninterrupted.times[:count])
        assert np.max(np.abs(res.q - uninterrupted.q[:count])) <= EXACT
        assert np.max(np.abs(res.v - uninterrupted.v[:count])) <= EXACT
    assert resumed.n_steps == uninterrupted.n_steps and np.all(np.diff(resumed.times) > 0)
    for key in ("corrections", "lam", "a", "violation"):
        expected = uninterrupted.histories[key]
        assert np.max(np.abs(resumed.histories[key] - expected)) <= EXACT * max(1.0, np.max(np.abs(expected))), key
    assert resumed.events == uninterrupted.events
    if kind.startswith("gen_alpha"):
        stats, plain = resumed.metadata["statistics"], uninterrupted.metadata["statistics"]
        for key in ("steps", "rejected", "newton_iterations"):
            assert stats[key] == plain[key], key
        assert stats["factorizations"] == plain["factorizations"] + 1  # the kept matrix formed again


def _nan_after(t_fail: float, n: int):
    def tau(t, q, v):
        return np.full(n, np.nan) if t > t_fail else np.zeros(n)

    return tau


@pytest.mark.parametrize("integrator", [fb.RK4(dt=1e-3), fb.Adaptive(output_dt=5e-3)], ids=["rk4", "adaptive"])
def test_failed_run_leaves_rows_up_to_the_failure_and_resumes(integrator, tmp_path):
    asm = fb.mechanisms.slider_crank().assemble()
    run = tmp_path / "run"
    with pytest.raises(StateError) as info:
        fb.simulate(asm, 0.5, integrator=integrator, tau=_nan_after(0.2, asm.n_dofs), save_to=run, save_every=30)
    recorded = info.value.last_good
    partial = fb.Results.load(run)
    assert partial.metadata["complete"] is False
    np.testing.assert_array_equal(partial.times, recorded.times)
    np.testing.assert_array_equal(partial.q, recorded.q)
    assert 0.19 < partial.times[-1] <= 0.2 and np.all(np.diff(partial.times) > 0)
    assert partial.events[-1]["kind"] == "failure" and partial.events[-1]["error"] == "StateError"

    # rows written after the last checkpoint are computed again; with zero forces (as before the
    # failure) the result is the uninterrupted run's
    resumed = resume(asm, run)
    plain = fb.simulate(asm, 0.5, integrator=integrator)
    np.testing.assert_array_equal(resumed.times, plain.times)
    assert np.max(np.abs(resumed.q - plain.q)) <= EXACT and np.max(np.abs(resumed.v - plain.v)) <= EXACT
    assert not any(e["kind"] == "failure" for e in resumed.events)


def test_failed_generalized_alpha_run_is_loadable(tmp_path):
    asm, integrator = _case("gen_alpha")
    # the input is evaluated at the start of each step, t_n = n · 2 ms; the first past 0.049 s is t_25 = 0.05 s,
    # half a step from the threshold, so the accumulated step times' rounding cannot move the failure: the
    # rows up to t_24 = 0.048 s are kept
    with pytest.raises(StateError) as info:
        fb.simulate(asm, 0.1, integrator=integrator, tau=_nan_after(0.049, asm.n_dofs), save_to=tmp_path, save_every=4)
    partial = fb.Results.load(tmp_path)
    assert partial.metadata["complete"] is False
    np.testing.assert_array_equal(partial.times, info.value.last_good.times)
    assert partial.n_steps == 25 and partial.times[-1] == pytest.approx(0.048, abs=1e-12)


@pytest.fixture(scope="module")
def stopped_run(tmp_path_factory):
    """A slider-crank RK4 run stopped by a failure at t = 0.1 s (checkpoints every 20 steps)."""
    run = tmp_path_factory.mktemp("stopped")
    asm = fb.mechanisms.slider_crank().assemble()
    with pytest.raises(StateError):
        fb.simulate(asm, 0.3, integrator=fb.RK4(dt=1e-3), tau=_nan_after(0.1, asm.n_dofs), save_to=run, save_every=20)
    return run


def test_resume_errors(stopped_run, tmp_path):
    asm = fb.mechanisms.slider_crank().assemble()
    with pytest.raises(FlexbodyError, match="no checkpoint"):
        resume(asm, tmp_path)
    complete = tmp_path / "complete"
    fb.simulate(asm, 0.05, integrator=fb.RK4(dt=1e-3), save_to=complete, save_every=10)
    with pytest.raises(FlexbodyError, match="already complete"):
        resume(asm, complete)
    from flexbody.mechanisms.flexible import arm_with_beam

    other = arm_with_beam(order=1, divisions=(2, 1, 1)).assemble()
    with pytest.raises(FlexbodyError, match="n_dofs"):
        resume(other, stopped_run)
    with pytest.raises(FlexbodyError, match="t_end"):
        resume(asm, stopped_run, t_end=0.01)
    with pytest.raises(FlexbodyError, match="tau or controller"):
        resume(asm, stopped_run, tau=np.zeros(asm.n_dofs), controller=object())

    foreign = tmp_path / "foreign"  # a run of an integrator that cannot resume
    foreign.mkdir()
    for name in ("results.json", "checkpoint.npz"):
        (foreign / name).write_bytes((stopped_run / name).read_bytes())
    meta = json.loads((foreign / "results.json").read_text())
    meta["metadata"]["integrator"] = "Euler"
    (foreign / "results.json").write_text(json.dumps(meta))
    with pytest.raises(FlexbodyError, match="cannot resume"):
        resume(asm, foreign)
    with pytest.raises(FlexbodyError, match="save_every"):
        fb.simulate(asm, 0.01, save_to=tmp_path / "x", save_every=0)
    assert (stopped_run / "checkpoint.npz").exists()  # the failed attempts changed nothing


def test_resume_to_a_later_end_time(stopped_run, tmp_path):
    asm = fb.mechanisms.slider_crank().assemble()
    run = tmp_path / "run"
    run.mkdir()
    for file in stopped_run.rglob("*"):
        if file.is_file():
            (run / file.relative_to(stopped_run)).parent.mkdir(exist_ok=True)
            (run / file.relative_to(stopped_run)).write_bytes(file.read_bytes())
    resumed = resume(asm, run, t_end=0.4)
    plain = fb.simulate(asm, 0.4, integrator=fb.RK4(dt=1e-3))
    np.testing.assert_array_equal(resumed.times, plain.times)
    assert np.max(np.abs(resumed.q - plain.q)) <= EXACT
    assert resumed.metadata["t_end"] == 0.4 and fb.Results.load(run).metadata["t_end"] == 0.4


def test_old_directories_still_load(tmp_path):
    asm = fb.mechanisms.slider_crank().assemble()
    res = fb.simulate(asm, 0.02, integrator=fb.RK4(dt=1e-3))
    res.save(tmp_path)
    meta = json.loads((tmp_path / "results.json").read_text())
    del meta["complete"]  # as written before incremental saving
    (tmp_path / "results.json").write_text(json.dumps(meta))
    back = fb.Results.load(tmp_path)
    assert back.metadata["complete"] is True
    np.testing.assert_array_equal(back.q, res.q)


@pytest.mark.parametrize("kind", ["rk4", "adaptive", "gen_alpha"])
def test_progress_is_reported_once_per_step(kind):
    calls = []
    if kind == "gen_alpha":
        asm, integrator = _case(kind)
        t_end, expected = 0.02, 10
    else:
        asm = fb.mechanisms.slider_crank().assemble()
        integrator = fb.RK4(dt=1e-3) if kind == "rk4" else fb.Adaptive(output_dt=1e-2)
        t_end, expected = 0.05, 50 if kind == "rk4" else 5
    fb.simulate(
        asm, t_end, integrator=integrator, context=fb.RunContext(progress=lambda t, t0, t1: calls.append((t, t0, t1)))
    )
    assert len(calls) == expected
    assert calls[-1] == pytest.approx((t_end, 0.0, t_end))
    assert all(b[0] > a[0] for a, b in itertools.pairwise(calls))


def test_a_resuming_context_continues_reuses_or_starts(tmp_path):
    """A resuming :class:`fb.RunContext` (``flexbody run --resume``): a stopped run is continued to the uninterrupted
    history, a complete one is returned as saved, an empty directory starts afresh; a run with other
    settings is refused and the saved files are left as they were."""
    asm = fb.mechanisms.slider_crank().assemble()
    run = tmp_path / "run"
    with pytest.raises(StateError):
        fb.simulate(asm, 0.3, integrator=fb.RK4(dt=1e-3), tau=_nan_after(0.1, asm.n_dofs), save_to=run, save_every=20)
    before = {p.name: p.read_bytes() for p in sorted(run.rglob("*")) if p.is_file()}
    context = fb.RunContext.resuming()
    log = context.restarts
    with pytest.raises(
        FlexbodyError,
        match=r"integrator_settings = \{'dt': 0.001\}, this one asks for "
        r"\{'dt': 0.002\}",
    ):
        fb.simulate(asm, 0.3, integrator=fb.RK4(dt=2e-3), save_to=run, context=context)
    with pytest.raises(FlexbodyError, match="record_every = 1, this one asks for 2"):
        fb.simulate(asm, 0.3, integrator=fb.RK4(dt=1e-3), save_to=run, record_every=2, context=context)
    with pytest.raises(FlexbodyError, match="has 2 coordinates, the model 3"):
        fb.simulate(fb.mechanisms.four_bar().assemble(), 0.3, integrator=fb.RK4(dt=1e-3), save_to=run, context=context)
    assert {p.name: p.read_bytes() for p in sorted(run.rglob("*")) if p.is_file()} == before
    continued = fb.simulate(asm, 0.3, integrator=fb.RK4(dt=1e-3), save_to=run, save_every=20, context=context)
    reused = fb.simulate(asm, 0.3, integrator=fb.RK4(dt=1e-3), save_to=run, save_every=20, context=context)
    with pytest.raises(FlexbodyError, match=r"ends at t = 0.3 s, not at the requested t_end = 0.4 s"):
        fb.simulate(asm, 0.4, integrator=fb.RK4(dt=1e-3), save_to=run, context=context)
    fresh = fb.simulate(asm, 0.05, integrator=fb.RK4(dt=1e-3), save_to=tmp_path / "new", context=context)
    plain = fb.simulate(asm, 0.3, integrator=fb.RK4(dt=1e-3))
    assert np.max(np.abs(continued.q - plain.q)) <= EXACT
    assert continued.metadata["resumed_at"] == [pytest.approx(0.08, abs=0.021)]  # last checkpoint before 0.1 s
    assert np.array_equal(reused.q, continued.q) and reused.system is asm
    assert fresh.n_steps == 51 and "resumed_at" not in fresh.metadata
    assert [d for d, _ in log.resumed] == [str(run)] and log.reused == [str(run)]
    assert log.started == [str(tmp_path / "new")]
