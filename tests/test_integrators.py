"""Explicit integrators with constraint stabilisation, on hand-written closed-form models (tests/toy_models.py).

References: the pendulum (particle on a circle) and its exact period 4 K(sin²(θ0/2)) √(ρ/g); Aghili's
slider crank [AG Sec. VIII-A, eqs. 63-67, Fig. 4] simulated from q1 = 2π/3 with f1 = 1 N·m, l = m = 1.

Gravity in the slider crank: [AG] does not state g for Fig. 4, but h in (66) and the control laws (71),
(72), (75) all carry the m g l terms, so the model is taken with g = 9.81 m/s² (gravity along −y). From
rest at q1 = 2π/3 the crank then crosses the singular configurations q1 = 3π/2 at t ≈ 1.35 s and
q1 = 5π/2 (≡ π/2) at t ≈ 2.54 s. The test also runs g = 0, which crosses them at t ≈ 3.72 s and 5.58 s.
"""

import logging

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.special import ellipk
from toy_models import AghiliSliderCrank, MovingCircleParticle, ParticleOnCircle, ParticleWithDeadline

from flexbody.errors import ConstraintError, ConvergenceError, FlexbodyError, StateError
from flexbody.io.results import Results
from flexbody.solvers.simulation import (
    RK4,
    Adaptive,
    Baumgarte,
    PositionCorrection,
    assemble_configuration,
    project_velocity,
    simulate,
)

F1 = np.array([1.0, 0.0])  # [AG] Sec. VIII-A-1: f1 = 1 N·m on the crank, joint B passive


def exact_pendulum(model, times):
    """Independent reference: θ̈ = −(g/ρ) sin θ integrated in the angle to 1e-13."""
    sol = solve_ivp(
        lambda t, y: [y[1], -model.gravity / model.rho * np.sin(y[0])],
        (times[0], times[-1]),
        [model.theta0, model.omega0],
        method="DOP853",
        rtol=1e-13,
        atol=1e-14,
        t_eval=times,
    )
    return np.column_stack([model.rho * np.sin(sol.y[0]), -model.rho * np.cos(sol.y[0])])


def crossing_times(res, angles):
    """Times [s] (linear interpolation) at which the crank angle q1 increases through ``angles``."""
    q1, t = res.q[:, 0], res.times
    out = []
    for x in angles:
        k = np.flatnonzero((q1[:-1] < x) & (q1[1:] >= x))
        out += [t[i] + (t[i + 1] - t[i]) * (x - q1[i]) / (q1[i + 1] - q1[i]) for i in k]
    return np.array(out)


# --------------------------------------------------------------------------------------- particle
def test_particle_on_circle_conserves_energy_and_constraint_and_matches_the_pendulum():
    model = ParticleOnCircle(m=2.0, rho=1.5, gravity=9.81, theta0=1.0)
    res = simulate(model, 5.0, integrator=RK4(dt=1e-3))
    E = res.histories["energy"]
    assert np.abs(E - E[0]).max() < 1e-9 * abs(res.histories["kinetic"]).max()
    assert res.histories["violation"].max() < 1e-10
    assert res.histories["velocity_violation"].max() < 1e-10
    assert np.abs(res.q - exact_pendulum(model, res.times)).max() < 1e-8
    # period from upward zero crossings of x against the closed form 4 K(k²) √(ρ/g), k = sin(θ0/2)
    x, t = res.q[:, 0], res.times
    k = np.flatnonzero((x[:-1] < 0) & (x[1:] >= 0))
    ups = t[k] - x[k] * (t[k + 1] - t[k]) / (x[k + 1] - x[k])
    period = 4.0 * ellipk(np.sin(0.5) ** 2) * np.sqrt(model.rho / model.gravity)
    assert len(ups) >= 2 and np.abs(np.diff(ups) - period).max() < 1e-5  # linear interpolation limits


def test_rk4_error_falls_with_the_fourth_power_of_dt():
    model = ParticleOnCircle(theta0=1.0)
    errors = []
    for dt in (0.02, 0.01):
        res = simulate(model, 2.0, integrator=RK4(dt=dt), stabilization=None)
        errors.append(np.abs(res.q - exact_pendulum(model, res.times)).max())
    assert 10.0 < errors[0] / errors[1] < 24.0


def test_without_stabilisation_drift_is_recorded_and_larger():
    model = ParticleOnCircle(theta0=1.0)
    free = simulate(model, 5.0, integrator=RK4(dt=0.01), stabilization=None)
    fixed = simulate(model, 5.0, integrator=RK4(dt=0.01))
    drift, kept = free.histories["violation"], fixed.histories["violation"]
    assert drift[0] < 1e-14 and drift[-1] > 1e-9 and drift.max() > 1e3 * kept.max()
    assert kept.max() < 1e-10 and fixed.histories["corrections"].max() >= 1


def test_baumgarte_alone_keeps_the_violation_bounded_and_decaying():
    model = ParticleOnCircle(theta0=1.0)
    q0 = model.initial_state().q * 1.01  # 1 % off the circle: φ(0) ≈ 1e-2 m
    v0 = np.zeros(2)
    kwargs = dict(integrator=RK4(dt=2e-3), q0=q0, v0=v0, consistent_initial=False)
    damped = simulate(model, 3.0, stabilization=Baumgarte(alpha=10.0, beta=10.0), **kwargs)
    plain = simulate(model, 3.0, stabilization=None, **kwargs)
    phi, t = damped.histories["violation"], damped.times
    assert phi[0] > 9e-3
    # critically damped φ̈ + 20 φ̇ + 100 φ = 0 from rest: φ/φ0 = (1 + 10 t) e^(−10 t), 4e-8 at t = 2 s
    assert phi.max() <= phi[0] * (1 + 1e-12)
    exact = (1 + 10 * t) * np.exp(-10 * t) * phi[0]
    assert np.abs(phi - exact).max() < 1e-6 * phi[0]  # RK4 error floor ~1e-11 m
    assert phi[t >= 2.0].max() < 1e-7 * phi[0]
    assert plain.histories["violation"][-1] > 0.5 * phi[0]  # without it the error stays


def test_rheonomic_constraint_uses_the_rate_term():
    model = MovingCircleParticle(rate=0.2, theta0=0.3, gravity=9.81)
    res = simulate(model, 2.0, integrator=RK4(dt=2e-3))
    radius = np.linalg.norm(res.q, axis=1)
    assert np.abs(radius - model.radius(res.times)).max() < 1e-10
    radial_speed = np.einsum("ij,ij->i", res.q, res.v) / radius
    assert np.abs(radial_speed - 0.2).max() < 1e-9
    assert res.histories["velocity_violation"].max() < 1e-10


def test_adaptive_agrees_with_rk4_at_small_step():
    model = ParticleOnCircle(theta0=1.0)
    fine = simulate(model, 2.0, integrator=RK4(dt=1e-3), record_every=100)
    adaptive = simulate(model, 2.0, integrator=Adaptive(rtol=1e-11, atol=1e-12, output_dt=0.1))
    assert np.allclose(fine.times, adaptive.times)
    assert np.abs(fine.q - adaptive.q).max() < 1e-9
    assert np.abs(fine.v - adaptive.v).max() < 1e-8
    assert adaptive.histories["violation"].max() < 1e-10
    assert adaptive.metadata["integrator"] == "Adaptive"


def test_controller_style_tau_callable_and_constant_tau():
    model = ParticleOnCircle(theta0=0.0, gravity=0.0)
    seen = []

    def controller(t, state, asm):
        seen.append(asm is model)
        return np.array([0.5, 0.0])

    res_c = simulate(model, 0.5, integrator=RK4(dt=0.01), tau=controller)
    res_a = simulate(model, 0.5, integrator=RK4(dt=0.01), tau=np.array([0.5, 0.0]))
    res_f = simulate(model, 0.5, integrator=RK4(dt=0.01), tau=lambda t, q, v: np.array([0.5, 0.0]))
    assert all(seen) and np.allclose(res_c.q, res_a.q) and np.allclose(res_f.q, res_a.q)
    assert np.allclose(res_a.histories["tau"], [0.5, 0.0])
    # constraint force Φᵀλ = M a + h − τ
    M = np.eye(2) * model.m
    assert np.allclose(res_a.histories["constraint_force"], res_a.histories["a"] @ M - res_a.histories["tau"])


# ------------------------------------------------------------------------------------ slider crank
@pytest.mark.parametrize("gravity, t_end", [(9.81, 3.0), (0.0, 6.0)])
def test_slider_crank_passes_through_singular_configurations(gravity, t_end, caplog):
    """[AG Fig. 4]: the motion passes smoothly through q1 = 3π/2 and 5π/2 (≡ π/2)."""
    model = AghiliSliderCrank(gravity=gravity)
    crossings, jumps = {}, {}
    for dt in (0.01, 0.002):
        with caplog.at_level(logging.INFO, logger="flexbody.solvers"):
            res = simulate(model, t_end, integrator=RK4(dt=dt), tau=F1, singular_tol=0.05)
        tc = crossing_times(res, [1.5 * np.pi, 2.5 * np.pi])
        assert len(tc) == 2, "the crank crosses both singular configurations once"
        crossings[dt] = tc
        assert res.histories["violation"].max() < 1e-8
        assert res.histories["velocity_violation"].max() < 1e-8
        # stays on the slider branch q2 = 2π − 2q1 (no bifurcation onto the folded branch q2 = π)
        assert np.abs(res.q[:, 1] - (2 * np.pi - 2 * res.q[:, 0])).max() < 1e-6
        # one rank drop and one restoration logged within a step or two of each crossing
        drops = [e for e in res.events if e["kind"] == "rank_drop"]
        back = [e for e in res.events if e["kind"] == "rank_restored"]
        assert len(drops) == 2 and len(back) == 2
        for e, r, t in zip(drops, back, tc):
            assert t - 3 * dt - 0.03 <= e["t"] <= t and t < r["t"] <= t + 3 * dt + 0.03
            assert e["rank"] == 0 and e["redundant_labels"] == ["slider_y"]
            assert e["smallest_singular_value"] < 0.05
        assert "rank_drop" in caplog.text
        caplog.clear()
        # λ jumps at the singularity (λ ~ 1/cos q1 changes sign), Φᵀλ does not
        lam, F = res.histories["lam"][:, 0], res.histories["constraint_force"]
        t_mid = 0.5 * (res.times[1:] + res.times[:-1])
        dist = np.abs(t_mid[:, None] - tc[None, :]).min(axis=1)
        near, far = dist < 0.05, dist > 0.1
        dlam, dF = np.abs(np.diff(lam)), np.linalg.norm(np.diff(F, axis=0), axis=1)
        assert dlam[near].max() > 30.0 * dlam[far].max()
        assert np.sign(lam[1:][near]).min() < 0 < np.sign(lam[1:][near]).max()
        assert dF[near].max() <= dF[far].max()
        jumps[dt] = dlam[near].max(), dF[near].max()
    assert np.abs(crossings[0.01] - crossings[0.002]).max() < 1e-5
    # refining dt: the λ jump grows (a pole at cos q1 = 0), the force step shrinks like dt (continuous)
    assert jumps[0.002][0] > 2.0 * jumps[0.01][0]
    assert jumps[0.002][1] < 0.3 * jumps[0.01][1]


def test_slider_crank_energy_is_conserved_through_the_singularity():
    """f1 = 0 with gravity: the crank swings through q1 = 3π/2 (singular); E = T + V is conserved."""
    model = AghiliSliderCrank(gravity=9.81)
    res = simulate(model, 10.0, integrator=RK4(dt=5e-3))
    assert res.q[:, 0].max() > 1.5 * np.pi + 1.0 and res.q[:, 0].min() < 1.5 * np.pi - 1.0
    E = res.histories["energy"]
    assert np.abs(E - E[0]).max() / abs(E[0]) < 1e-6
    assert res.histories["violation"].max() < 1e-10
    drift = simulate(model, 10.0, integrator=RK4(dt=5e-3), stabilization=None)
    assert drift.histories["violation"].max() > 1e3 * res.histories["violation"].max()
    assert np.abs(drift.histories["energy"] - E[0]).max() > 10 * np.abs(E - E[0]).max()


def test_multiplier_form_fails_at_the_singular_configuration():
    model = AghiliSliderCrank()
    # with Aghili's ε as the absolute rank floor [AG-68] the KKT form stops just before q1 = 3π/2
    with pytest.raises(ConstraintError, match="numerically singular") as info:
        simulate(model, 3.0, integrator=RK4(dt=0.01), tau=F1, formulation="multiplier", atol=0.05)
    partial = info.value.last_good
    assert isinstance(partial, Results) and 1.2 < partial.times[-1] < 1.36 and partial.n_steps > 100
    assert partial.events[-1]["kind"] == "failure"
    # the projection form with the same ε passes, dropping the constraint inside the band
    res = simulate(
        model, 3.0, integrator=RK4(dt=0.01), tau=F1, atol=0.05, stabilization=PositionCorrection(on_failure="warn")
    )
    assert len(crossing_times(res, [1.5 * np.pi, 2.5 * np.pi])) == 2
    assert 0 in res.histories["rank"]
    # started exactly at the singular configuration, the multiplier form fails with default tolerances
    state = dict(q0=[np.pi / 2, np.pi], v0=[1.0, -2.0])
    with pytest.raises(ConstraintError):
        simulate(model, 0.5, integrator=RK4(dt=0.01), tau=F1, formulation="multiplier", **state)
    res = simulate(model, 0.5, integrator=RK4(dt=0.01), tau=F1, **state)
    assert res.histories["rank"][0] == 0 and res.histories["rank"][-1] == 1
    assert [e["kind"] for e in res.events] == ["rank_rise"]  # rank 0 at the start, then 1
    assert res.histories["violation"].max() < 1e-10


# ------------------------------------------------------------------------------ assembly, failures
def test_assemble_configuration_from_perturbed_guess():
    model = AghiliSliderCrank()
    q1 = 2 * np.pi / 3
    q = assemble_configuration(model, 0.0, [q1 + 0.05, 2 * np.pi - 2 * q1 - 0.1])
    assert np.abs(model.constraint_value(0.0, q)).max() < 1e-12
    q = assemble_configuration(model, 0.0, [q1, 2 * np.pi - 2 * q1 + 0.1], fixed=[0])
    assert q[0] == q1 and abs(q[1] - (2 * np.pi - 2 * q1)) < 1e-12
    particle = ParticleOnCircle(rho=2.0)
    q = assemble_configuration(particle, 0.0, [0.3, -2.5])
    assert abs(np.linalg.norm(q) - 2.0) < 1e-12
    v = project_velocity(particle, 0.0, q, np.array([1.0, 1.0]))
    assert abs(q @ v) < 1e-12


def test_impossible_assembly_raises_convergence_error():
    # the slider line y = 2.5 l is beyond the reach 2 l of the two links
    model = AghiliSliderCrank(offset=2.5)
    with pytest.raises(ConvergenceError, match="slider_y") as info:
        assemble_configuration(model, 0.0, [1.0, 0.5])
    err = info.value
    # Gauss–Newton has no solution to converge to and wanders chaotically (a 1e-15 change of the guess moves its
    # best iterate anywhere in 0.500 … 0.506), so how close it came is rounding; what holds is that last_good is
    # the best iterate of the history and that no configuration beats the reach, |φ| ≥ 2.5 l − 2 l = 0.5
    best = np.abs(model.constraint_value(0, err.last_good)).max()
    assert len(err.residual_history) > 1 and best == pytest.approx(min(err.residual_history), rel=1e-12)
    assert min(err.residual_history) >= 0.5 - 1e-12
    # a particle on a circle of radius 1 with x fixed at 2 cannot be placed
    with pytest.raises(ConvergenceError, match="circle"):
        assemble_configuration(ParticleOnCircle(rho=1.0), 0.0, [2.0, 0.3], fixed=[0])
    with pytest.raises(ConvergenceError):
        simulate(model, 1.0, q0=[1.0, 0.5], v0=[0.0, 0.0])


def test_bad_state_raises_state_error():
    model = ParticleOnCircle()
    with pytest.raises(StateError, match="q0"):
        simulate(model, 1.0, q0=[np.nan, -1.0], v0=[0.0, 0.0])
    with pytest.raises(StateError, match="shape"):
        simulate(model, 1.0, q0=[0.0, -1.0, 0.0], v0=[0.0, 0.0])
    with pytest.raises(FlexbodyError, match="integrator"):
        simulate(model, 1.0, integrator="rk4")


def _assert_keeps_the_completed_steps(partial, complete, n_kept, dt, error):
    """``partial`` (the ``last_good`` of a failed run) holds exactly the ``n_kept`` steps completed before
    the failure: times 0, dt, …, every history of that length, the failure logged last, a finite state on
    the constraint last, and every row bit for bit the row of ``complete``, the same run without the
    failure (it repeats the same operations up to the failure)."""
    assert isinstance(partial, Results) and partial.n_steps == n_kept
    np.testing.assert_allclose(partial.times, dt * np.arange(n_kept), rtol=0, atol=1e-12)
    assert partial.q.shape == partial.v.shape == (n_kept, complete.q.shape[1])
    assert set(partial.histories) == set(complete.histories)
    for key, value in partial.histories.items():
        assert len(value) == n_kept, key
        np.testing.assert_array_equal(value, complete.histories[key][:n_kept], err_msg=key)
    for key in ("times", "q", "v"):
        np.testing.assert_array_equal(getattr(partial, key), getattr(complete, key)[:n_kept], err_msg=key)
    assert np.all(np.isfinite(partial.q[-1])) and np.all(np.isfinite(partial.v[-1]))
    assert partial.histories["violation"][-1] <= 1e-10 and partial.histories["velocity_violation"][-1] <= 1e-10
    *before, failure = partial.events
    assert before == [e for e in complete.events if e["t"] <= partial.times[-1]]
    assert failure["kind"] == "failure" and failure["error"] == error and failure["t"] == partial.times[-1]


def test_failure_mid_run_keeps_the_results_so_far():
    """Both failures are placed by construction, not by where rounding lands."""
    dt = 0.01
    model = ParticleOnCircle(theta0=1.0)
    complete = simulate(model, 1.0, integrator=RK4(dt=dt))

    # NaN forces after t = 0.5025 s: the first evaluation past it is stage 2 of the 51st step (t = 0.505 s),
    # half a stage from the threshold, so the rounding of the step times cannot move the failure
    def tau(t, q, v):
        return np.array([np.nan, 0.0]) if t > 0.5025 else np.zeros(2)

    with pytest.raises(StateError, match=r"non-finite tau at t = 0\.505 s") as info:
        simulate(model, 1.0, integrator=RK4(dt=dt), tau=tau)
    _assert_keeps_the_completed_steps(info.value.last_good, complete, 51, dt, "StateError")

    # a position correction that cannot converge: the "deadline" row φ₂ = t − 0.2525 s depends on time alone
    # (zero Jacobian row), so after the step to t = 0.26 s ‖φ‖ ≥ 7.5e-3 ≫ tol = 1e-10 whatever the rounding
    with pytest.raises(ConvergenceError, match=r"position correction at t = 0\.26 s: .*'deadline'") as info:
        simulate(
            ParticleWithDeadline(0.2525, theta0=1.0),
            1.0,
            integrator=RK4(dt=dt),
            stabilization=PositionCorrection(tol=1e-10),
        )
    never = simulate(
        ParticleWithDeadline(np.inf, theta0=1.0),
        1.0,
        integrator=RK4(dt=dt),
        stabilization=PositionCorrection(tol=1e-10),
    )
    _assert_keeps_the_completed_steps(info.value.last_good, never, 26, dt, "ConvergenceError")
    assert info.value.residual_history[-1] >= 7.5e-3 - 1e-12


def test_results_round_trip_with_histories_and_events(tmp_path):
    model = AghiliSliderCrank()
    res = simulate(model, 3.0, integrator=RK4(dt=0.01), tau=F1, singular_tol=0.05, record_every=5)
    assert res.n_steps == 61 and res.kind == "dynamic" and res.v.shape == (61, 2)
    expected = {
        "a",
        "tau",
        "lam",
        "constraint_force",
        "violation",
        "velocity_violation",
        "rank",
        "kinetic",
        "potential",
        "energy",
        "corrections",
    }
    assert expected <= set(res.histories)
    res.save(tmp_path)
    back = Results.load(tmp_path)
    assert back.kind == "dynamic" and np.array_equal(back.times, res.times)
    assert np.array_equal(back.q, res.q) and np.array_equal(back.v, res.v)
    assert set(back.histories) == set(res.histories)
    for key, value in res.histories.items():
        assert np.array_equal(back.histories[key], value), key
    assert back.events == res.events and len(back.events) == 4
    assert back.metadata["integrator"] == "RK4" and back.metadata["integrator_settings"]["dt"] == 0.01
