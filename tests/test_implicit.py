"""Implicit generalized-α integration of rigid–flexible systems (flexbody.solvers.generalized_alpha through
flexbody.simulate).

Independent references: energy balances (kinetic + strain + gravity, applied work of the joint torques,
Kelvin–Voigt dissipation) of the ready-made systems in flexbody.mechanisms.flexible; the period of the
first bending mode of a cantilever from a generalized eigenvalue problem (scipy.sparse.linalg.eigsh on the
tangent and mass matrices restricted to the free coordinates), released from its static deflection
computed by the flexible-only static solver fb.solve_static; the known spectral behaviour of the
trapezoidal rule (ρ∞ = 1, energy-conserving for linear systems) versus ρ∞ < 1 and HHT-α.
"""

import numpy as np
import pytest
import scipy.sparse.linalg as spla

import flexbody as fb
from flexbody.errors import ConvergenceError, FlexbodyError
from flexbody.mechanisms import flexible as fm


def loss_late(res):
    """E(0) minus the mean energy over the last 20 % of the run, relative to the largest kinetic energy."""
    E, K = res.histories["energy"], res.histories["kinetic"]
    return (E[0] - E[int(0.8 * len(E)) :].mean()) / K.max()


# ------------------------------------------------------------------------------- 1. flexible pendulum
def test_flexible_pendulum_conserves_energy_and_the_pin():
    asm = fm.flexible_pendulum().assemble()  # 132 coordinates, 3 pin rows
    res = fb.simulate(asm, 1.0, integrator=fb.GeneralizedAlpha(dt=2e-3, rho_inf=1.0))
    E, K = res.histories["energy"], res.histories["kinetic"]
    stats = res.metadata["statistics"]
    assert res.times[-1] == pytest.approx(1.0) and stats["steps"] == 500 and stats["rejected"] == 0
    assert K.max() > 5.0  # it really swings (measured 12.8 J)
    # ρ∞ = 1 is the trapezoidal rule: no numerical dissipation, only the O(dt²) error of a nonlinear
    # problem. Measured max |E − E0| = 5.0e-5 K_max; the bound 0.5 % K_max is the physical requirement.
    assert np.abs(E - E[0]).max() <= 5e-3 * K.max()
    # index-3: φ = 0 is enforced at every step to the Newton tolerance (measured 7e-26, ‖Φv‖ 5e-22)
    assert res.histories["violation"].max() <= 1e-10
    assert res.histories["velocity_violation"].max() <= 1e-8
    # the per-step records add up to the run statistics
    assert res.histories["newton_iterations"].sum() == stats["newton_iterations"]
    assert np.allclose(res.histories["dt"][1:], 2e-3)
    # the bar's corner stays at the pin (the constraint really is the pin, not just a small residual)
    assert np.abs(res.q[:, 0:3] - asm.q0[0:3]).max() <= 1e-10


def test_rho_inf_below_one_dissipates_more_on_a_soft_pendulum():
    """young = 1e6: the bar's elastic modes are excited by the swing. Measured energy loss
    E0 − mean(E over the last 0.2 s), relative to K_max: 1.95e-5 with ρ∞ = 1, 4.06e-5 with ρ∞ = 0.5
    (end values 2.5e-5 and 5.2e-5)."""
    losses = {}
    for rho in (1.0, 0.5):
        res = fb.simulate(
            fm.flexible_pendulum(young=1e6).assemble(), 1.0, integrator=fb.GeneralizedAlpha(dt=2e-3, rho_inf=rho)
        )
        losses[rho] = loss_late(res)
        E, K = res.histories["energy"], res.histories["kinetic"]
        assert np.abs(E - E[0]).max() <= 5e-3 * K.max()  # measured 8.2e-5 and 1.3e-4 K_max
    assert losses[0.5] > 1.5 * losses[1.0] > 0.0


# --------------------------------------------------------------- 2. period of a cantilever (closed form)
def _cantilever_modes(beam, k=1):
    X = beam.reference_coordinates()
    free = np.setdiff1d(np.arange(beam.n_dofs), beam.dofs("x0"))
    K = beam.tangent(X)[free][:, free].tocsc()
    M = beam.mass_matrix()[free][:, free].tocsc()
    w2, modes = spla.eigsh(K, k=k, M=M, sigma=0)
    return np.sqrt(w2), modes, free


def _zero_crossings(t, z):
    k = np.flatnonzero(np.sign(z[:-1]) != np.sign(z[1:]))
    return t[k] - z[k] * (t[k + 1] - t[k]) / (z[k + 1] - z[k])


def test_cantilever_released_from_static_deflection_oscillates_with_the_first_eigenperiod():
    beam = fm.cantilever(divisions=(4, 1, 1), order=2).bodies[0]  # 27-node bricks, 243 coordinates
    omega, _, _ = _cantilever_modes(beam)
    T = 2 * np.pi / omega[0]  # 0.2427 s for this mesh
    # static deflection under a 1 N tip load (3e-4 m: linear regime) by the flexible-only Newton solver
    static = fb.System([beam], [fb.Fix(beam, "x0")], loads=[fb.NodalForce(beam, "x1", total=(0.0, 0.0, -1.0))])
    q_static = fb.solve_static(static).q[-1]
    tip = beam.nodes("x1")
    X = beam.reference_coordinates()
    deflection = (q_static - X).reshape(-1, 3)[tip, 2].mean()
    assert -1e-3 < deflection < -1e-4
    # release without the load: free vibration about the reference configuration
    asm = fb.System([beam], [fb.Fix(beam, "x0")]).assemble()
    res = fb.simulate(asm, 2.6 * T, integrator=fb.GeneralizedAlpha(dt=T / 100, rho_inf=1.0), q0=q_static)
    z = (res.q[:, asm.slices[beam]] - X).reshape(len(res.times), -1, 3)[:, tip, 2].mean(axis=1)
    crossings = _zero_crossings(res.times, z)
    assert len(crossings) >= 5
    # half-periods by least squares on all crossing times (the static shape is ~97 % mode 1; the rest,
    # at ≥ 6.5× the frequency, jitters single crossings by ~0.6 % of T, the fit averages that out).
    # Trapezoidal-rule period elongation at dt = T/100 is (ω dt)²/12 = 3e-4; measured T_sim/T = 1.0005.
    half = np.polyfit(np.arange(len(crossings)), crossings, 1)[0]
    assert 2 * half == pytest.approx(T, rel=0.01)
    # amplitude preserved (no numerical damping at ρ∞ = 1) and energy conserved
    assert np.abs(z).max() == pytest.approx(-deflection, rel=0.05)
    E = res.histories["energy"]
    assert np.abs(E - E[0]).max() <= 1e-4 * E[0]


# ------------------------------------------------------------------ 3. damping of high-frequency modes
def test_hht_and_rho_inf_below_one_damp_high_frequencies_only():
    """A cantilever (order 1, 6 × 1 × 1, 84 coordinates) started with a random velocity: nearly all the
    energy sits in modes far above 1/dt (dt = T₁/20; the highest period of the mesh is 1.4e-4 s against
    dt = 4.8e-3 s). Measured E(40 steps)/E0: ρ∞ = 1: 1.000002; ρ∞ = 0.5: 0.024; HHT α = 0.3: 0.024;
    HHT α = 0.1: 0.025. Released in the first mode instead, ρ∞ = 0.5 keeps most of the energy."""
    system = fm.cantilever(divisions=(6, 1, 1))
    beam = system.bodies[0]
    asm = system.assemble()
    omega, modes, free = _cantilever_modes(beam)
    T1 = 2 * np.pi / omega[0]
    dt, steps = T1 / 20, 40
    v0 = np.zeros(asm.n_dofs)
    v0[free] = 1e-3 * np.random.default_rng(3).standard_normal(free.size)
    ratios = {}
    schemes = {
        "rho1": fb.GeneralizedAlpha(dt=dt, rho_inf=1.0),
        "rho0.5": fb.GeneralizedAlpha(dt=dt, rho_inf=0.5),
        "hht0.3": fb.GeneralizedAlpha.hht(dt, 0.3),
        "hht0.1": fb.GeneralizedAlpha.hht(dt, 0.1),
    }
    for name, integrator in schemes.items():
        res = fb.simulate(asm, steps * dt, integrator=integrator, v0=v0)
        E = res.histories["energy"]
        ratios[name] = E[-1] / E[0]
    assert ratios["rho1"] == pytest.approx(1.0, abs=1e-4)  # linear regime: trapezoid conserves energy
    assert ratios["rho0.5"] < 0.1 and ratios["hht0.3"] < 0.1 and ratios["hht0.1"] < 0.2
    # the low mode is kept: released with the first-mode shape (velocity) the energy stays
    v1 = np.zeros(asm.n_dofs)
    v1[free] = modes[:, 0] * (1e-3 / np.abs(modes[:, 0]).max())
    res = fb.simulate(asm, steps * dt, integrator=schemes["rho0.5"], v0=v1)
    E = res.histories["energy"]
    assert E[-1] / E[0] > 0.8 > 10 * ratios["rho0.5"]


# ------------------------------------------------------------------------ 4. arm carrying a beam
ARMS = [pytest.param(1, (6, 1, 1), id="order1"), pytest.param(2, (3, 1, 1), id="order2")]


@pytest.mark.parametrize("order, divisions", ARMS)
def test_arm_with_beam_free_motion_conserves_energy(order, divisions):
    """Measured (dt = 2e-3): max |E − E0| = 7.5e-6 (order 1) and 6.9e-6 (order 2) of K_max ≈ 17 J."""
    asm = fm.arm_with_beam(order=order, divisions=divisions, q0=(0.3, -0.4)).assemble()
    res = fb.simulate(asm, 0.3, integrator=fb.GeneralizedAlpha(dt=2e-3, rho_inf=1.0))
    E, K = res.histories["energy"], res.histories["kinetic"]
    assert K.max() > 1.0 and np.abs(res.q[-1, :2] - res.q[0, :2]).max() > 0.1  # the arm falls
    assert np.abs(E - E[0]).max() <= 1e-3 * K.max()
    assert np.all(res.histories["applied_work"] == 0.0) and np.all(res.histories["dissipated"] == 0.0)
    # φ enforced to the Newton tolerance 1e-10·max(1, ‖q‖∞) (measured ≤ 1e-11)
    assert res.histories["violation"].max() <= 1e-9


@pytest.mark.parametrize("order, divisions", ARMS)
def test_arm_with_beam_energy_changes_by_the_work_of_a_constant_torque(order, divisions):
    """τ = (2, −1) N·m held constant: E(t) − E(0) = ∫τ·v dt. Measured mismatch 6.5e-6 / 7.0e-6 K_max,
    while E changes by 0.11 K_max."""
    asm = fm.arm_with_beam(order=order, divisions=divisions, q0=(0.3, -0.4)).assemble()
    tau = np.zeros(asm.n_dofs)
    tau[:2] = (2.0, -1.0)
    res = fb.simulate(asm, 0.3, integrator=fb.GeneralizedAlpha(dt=2e-3, rho_inf=1.0), tau=tau)
    E, K, W = res.histories["energy"], res.histories["kinetic"], res.histories["applied_work"]
    assert np.abs(W[-1]) > 0.05 * K.max()
    assert np.abs(E - E[0] - W).max() <= 1e-3 * K.max()
    # the work history is the trapezoid of τ·v over the recorded states (every step recorded)
    v = res.v
    trapezoid = np.concatenate([[0.0], np.cumsum(0.5 * np.diff(res.times) * ((v[:-1] + v[1:]) @ tau))])
    assert np.allclose(W, trapezoid, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("order, divisions", ARMS)
def test_arm_with_beam_kelvin_voigt_dissipation_balances_the_energy_loss(order, divisions):
    """Joints locked at q0 (the beam is a cantilever on the flange) and released under gravity, so the
    beam vibrates; young = 1e8 to resolve its first mode with dt = 2e-3, damping = 1e-3 s. Measured
    dissipated 1.88e-2 J (order 1) and 2.09e-2 J (order 2); max |E0 − E(t) − D(t)| / D(end) = 3.8e-3 and
    2.7e-3. (Free, the arm falls smoothly and the beam hardly deforms: dissipation ~3e-3 J, buried in
    the 1e-4 J integration error of the 17 J arm.)"""
    asm = fm.arm_with_beam(
        order=order, divisions=divisions, q0=(0.3, -0.4), young=1e8, damping=1e-3, locked=True
    ).assemble()
    res = fb.simulate(asm, 0.3, integrator=fb.GeneralizedAlpha(dt=2e-3, rho_inf=1.0))
    E, D = res.histories["energy"], res.histories["dissipated"]
    assert D[-1] > 1e-2 and np.all(np.diff(D) >= 0.0)
    assert np.abs(E[0] - E - D).max() <= 0.02 * D[-1]
    assert np.abs(res.q[:, :2] - [0.3, -0.4]).max() <= 1e-9  # the joint drivers hold


# ------------------------------------------------------------------------------ 5. failures and settings
def test_a_step_that_cannot_converge_keeps_the_steps_done():
    """A cantilever at rest (equilibrium: each step converges in one Newton iteration) hit by a large tip
    force from the fourth step on; one iteration allowed and no step halving -> ConvergenceError."""
    asm = fm.cantilever(divisions=(4, 1, 1)).assemble()
    beam = asm.bodies[0]
    tip_z = asm.offsets[beam] + 3 * beam.nodes("x1") + 2
    dt = 1e-3

    def kick(t, q, v):
        f = np.zeros(asm.n_dofs)
        if t >= 3 * dt - 1e-12:
            f[tip_z] = -5e4
        return f

    with pytest.raises(ConvergenceError, match=r"t = 0\.003") as info:
        fb.simulate(asm, 0.02, integrator=fb.GeneralizedAlpha(dt=dt, max_iterations=1, dt_min=dt), tau=kick)
    good = info.value.last_good
    assert isinstance(good, fb.Results) and good.n_steps == 4 >= 1
    assert np.allclose(good.times, [0.0, dt, 2 * dt, 3 * dt])
    assert np.abs(good.q - asm.q0).max() < 1e-12  # the states before the kick: at rest
    assert good.events[-1]["kind"] == "failure" and good.events[-1]["error"] == "ConvergenceError"


def test_convergence_error_reports_residuals_of_the_failed_solve():
    asm = fm.flexible_pendulum(divisions=(4, 1, 1)).assemble()  # gravity moves it from the first step
    with pytest.raises(ConvergenceError) as info:
        fb.simulate(asm, 0.01, integrator=fb.GeneralizedAlpha(dt=1e-3, max_iterations=1, dt_min=1e-3))
    history = info.value.residual_history
    # ConvergenceError: "residual norms of the failed solve, one per iteration" — one iteration allowed,
    # and a solve that did not converge cannot have a zero residual.
    assert len(history) == 1 and history[0] > 0.0


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(dt=1e-3, rho_inf=2.0),
        dict(dt=1e-3, rho_inf=-0.1),
        dict(dt=0.0),
        dict(dt=-1e-3),
        dict(dt=float("nan")),
        dict(dt=1e-3, alpha_m=0.2),
        dict(dt=1e-3, max_iterations=0),
        dict(dt=1e-3, tol=0.0),
    ],
)
def test_bad_settings_are_refused(kwargs):
    with pytest.raises(FlexbodyError):
        fb.GeneralizedAlpha(**kwargs)


def test_bad_hht_alpha_is_refused_and_parameters_follow_the_formulas():
    with pytest.raises(FlexbodyError, match="alpha"):
        fb.GeneralizedAlpha.hht(1e-3, 0.5)
    am, af, g, b = fb.GeneralizedAlpha.hht(1e-3, 0.2).parameters()
    assert (am, af) == (0.0, 0.2) and g == pytest.approx(0.7) and b == pytest.approx(0.36)
    am, af, g, b = fb.GeneralizedAlpha(dt=1e-3, rho_inf=0.5).parameters()  # Chung–Hulbert
    assert (am, af, g, b) == pytest.approx((0.0, 1 / 3, 5 / 6, 0.25 * (4 / 3) ** 2))
    assert fb.GeneralizedAlpha(dt=1e-3, rho_inf=1.0).parameters() == pytest.approx((0.5, 0.5, 0.5, 0.25))


# --------------------------------------------------------------------------- 6. controllers per step
def test_applied_forces_are_evaluated_at_the_start_of_each_step_and_held():
    asm = fm.arm_with_beam(divisions=(4, 1, 1), q0=(0.2, -0.3)).assemble()
    calls = []

    def tau(t, q, v):
        calls.append((t, q.copy(), v.copy()))
        out = np.zeros(asm.n_dofs)
        out[:2] = (3.0 * np.sin(40.0 * t), -2.0 * np.cos(40.0 * t))
        return out

    dt = 5e-3
    res = fb.simulate(asm, 0.05, integrator=fb.GeneralizedAlpha(dt=dt, rho_inf=0.8), tau=tau)
    assert res.n_steps == 11
    times = np.array([c[0] for c in calls])
    assert np.allclose(times, res.times[:-1], rtol=0, atol=1e-15)  # once per step, at t_n
    for k, (t, q, v) in enumerate(calls):
        assert np.array_equal(q, res.q[k]) and np.array_equal(v, res.v[k])  # the start-of-step state
        assert np.array_equal(res.histories["tau"][k][:2], [3.0 * np.sin(40.0 * t), -2.0 * np.cos(40.0 * t)])
    # held over the step; the work counts the input as the scheme applies it over [t_n, t_{n+1}]:
    # τ_eff = (1 − γ) τ_{n−1} + γ τ_n (v's update blends the accelerations made with both), τ_{−1} = τ_0
    taus = np.array([res.histories["tau"][k] for k in range(len(calls))])
    gamma = fb.GeneralizedAlpha(dt=dt, rho_inf=0.8).parameters()[2]
    previous = np.vstack([taus[:1], taus[:-1]])
    tau_eff = (1.0 - gamma) * previous + gamma * taus
    work = np.sum(0.5 * np.diff(res.times)[:, None] * tau_eff * (res.v[:-1] + res.v[1:]))
    assert res.histories["applied_work"][-1] == pytest.approx(work, rel=1e-12)


def _work_mismatch(dt, tau_of_t):
    """max |E(t) − E(0) − W(t)| of a 0.05 s run of a small arm_with_beam at ρ∞ = 1 with τ(t) on the joints."""
    asm = fm.arm_with_beam(divisions=(4, 1, 1), q0=(0.2, -0.3)).assemble()

    def tau(t, q, v):
        out = np.zeros(asm.n_dofs)
        out[:2] = tau_of_t(t)
        return out

    res = fb.simulate(asm, 0.05, integrator=fb.GeneralizedAlpha(dt=dt, rho_inf=1.0), tau=tau)
    E, W = res.histories["energy"], res.histories["applied_work"]
    return np.abs(E - E[0] - W).max(), abs(W[-1])


def test_energy_balance_with_a_constant_torque_is_second_order():
    """Measured max |E − E0 − W| at dt = 2.5e-3 / 1.25e-3: 2.5e-5 / 7.5e-6 J (W = 0.257 J): ratio 3.4."""
    coarse, W = _work_mismatch(2.5e-3, lambda t: (3.0, -2.0))
    fine, _ = _work_mismatch(1.25e-3, lambda t: (3.0, -2.0))
    assert fine <= 1e-4 * W and coarse / fine > 3.0


def test_energy_balance_with_a_time_varying_torque_is_second_order():
    def tau(t):
        return (3.0 * np.sin(40.0 * t), -2.0 * np.cos(40.0 * t))

    coarse, W = _work_mismatch(2.5e-3, tau)
    fine, _ = _work_mismatch(1.25e-3, tau)
    # second order: the mismatch drops by ~4 when dt halves (or is at round-off already)
    assert fine <= 1e-6 * W or coarse / fine > 3.0


def test_a_flexbody_controller_is_called_once_per_step():
    asm = fm.arm_with_beam(divisions=(4, 1, 1), q0=(0.2, -0.3)).assemble()

    class JointPD(fb.control.Controller):
        def __init__(self):
            super().__init__()
            self.computed, self.updated = [], []

        def compute(self, ctx):
            self.computed.append(ctx.t)
            tau = np.zeros(ctx.n)
            tau[:2] = -50.0 * (ctx.q[:2] - (0.2, -0.3)) - 5.0 * ctx.v[:2] + ctx.g[:2]
            return tau

        def update(self, t, state, measurement):
            self.updated.append((t, state.q.copy(), measurement.lam.copy()))

    ctrl = JointPD()
    dt = 5e-3
    res = fb.simulate(asm, 0.05, integrator=fb.GeneralizedAlpha(dt=dt, rho_inf=0.8), controller=ctrl)
    assert np.allclose(ctrl.computed, res.times[:-1], rtol=0, atol=1e-15)
    assert np.allclose([u[0] for u in ctrl.updated], res.times[1:], rtol=0, atol=1e-15)
    for k, (_, q, lam) in enumerate(ctrl.updated, start=1):
        assert np.array_equal(q, res.q[k]) and np.array_equal(lam, res.histories["lam"][k])
    assert res.histories["tau_k"].shape == (res.n_steps, 2)
    # the actuator inputs reach the plant as Sᵀτ_k (the beam's nodes passive)
    assert np.allclose(res.histories["tau"][:-1, :2], res.histories["tau_k"][:-1], rtol=0, atol=1e-12)
    assert np.all(res.histories["tau"][:, 2:] == 0.0)
    # gravity-compensated PD about q0: the joints stay near the set point
    assert np.abs(res.q[:, :2] - (0.2, -0.3)).max() < 0.05


def test_record_every_keeps_every_kth_step_and_the_last():
    asm = fm.cantilever(divisions=(4, 1, 1), gravity=(0.0, 0.0, -9.81)).assemble()
    dt = 1e-3
    res = fb.simulate(asm, 10 * dt, integrator=fb.GeneralizedAlpha(dt=dt), record_every=3)
    assert np.allclose(res.times, [0, 3 * dt, 6 * dt, 9 * dt, 10 * dt], rtol=0, atol=1e-15)
    assert res.metadata["statistics"]["steps"] == 10
    with pytest.raises(FlexbodyError):
        fb.simulate(asm, 10 * dt, integrator=fb.GeneralizedAlpha(dt=dt), record_every=0)
