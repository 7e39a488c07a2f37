"""Case 22: natural modes of a rigid–flexible system — the arm of case 14, held by joint servos against
gravity, carrying its flexible beam, linearised about its static equilibrium.

Problem: the two-link arm with the soft beam of case 14 (``fb.mechanisms.arm_with_beam``: rods 0.5 and 0.4 m,
2.0 and 1.0 kg, revolute joints about y in the vertical xz-plane; beam 0.6 × 0.04 × 0.04 m, E 7e7 Pa, ν 0.3,
ρ 2700 kg/m³, 27-node elements 6 × 1 × 1, attached by its face x = 0 to the flange of link 2; gravity 9.81
m/s² along −z) at the posture q0 = (0.3, −0.5) rad. What holds the joints decides what "the modes" are:

- joints free (no torque): the arm is a double pendulum and hangs straight down; its lowest modes are the
  pendulum swings (0.4836 and 1.5840 Hz), then the hanging beam's, which its weight stretches and stiffens
  (out-of-plane bending 3.0296 Hz against 2.9197 Hz without gravity);
- constant holding torques τ_h (``fb.holding_inputs``: τ_h = (−40.958, −19.440) N·m hold q0 with the beam
  sagging 4.5 cm under its weight) make q0 an equilibrium, but a constant torque has no stiffness and gravity's
  at this posture is negative: ω₀² < 0 (printed as f = −0.2764 Hz), the arm would fall away — a static
  instability, not a vibration;
- a position servo holds a joint with a stiffness: τ = τ_h + k (q0 − q), proportional control with gravity
  feed-forward (``fb.JointSpringDamper`` with rest q0, undamped here). Its equilibrium is the same (the springs
  carry no load at q0) and its modes are those of the servo-stiffened arm: the physical "held arm", and the
  case's main result, with k = JOINT_STIFFNESS = 1000 N·m/rad on both joints. The hold is stable from
  k ≈ 5.0 N·m/rad on (between 3 and 10 in the sweep);
- locked joints (two ``fb.JointDriver`` rows) are the limit k → ∞: the beam is a cantilever clamped at the flange.

``fb.modal_analysis(asm, q_eq, tau=τ_h)`` linearises about the holding equilibrium q_eq (gravity's preload,
the beam's sag, the servo springs and the constraint forces' stiffness included) and returns the N_MODES
lowest modes. The beam's motions out of the arm's plane (bending along y, torsion) do not move the joints, so
they are the locked cantilever's at any k; the in-plane ones couple the beam's bending with the sprung arm.

Verification, each against something independent of the eigensolver:
1. Free vibration (``fb.simulate``, ``fb.GeneralizedAlpha(rho_inf=1, tol=NEWTON_TOL)``; the tolerance is on
   position increments relative to max(1, |q|) ≈ 1 m, so the default 1e-10 is 1e-6 of the amplitude here —
   with it the measured frequencies differ by < 3e-10) from q_eq + s x_k at rest, s giving a
   tip displacement of TIP_AMPLITUDE, for the modes SIM_MODES, STEPS_PER_PERIOD steps per modal period,
   PERIODS periods. The frequency of the tip displacement along the mode's tip direction (least-squares
   sinusoid fit started from the mid-level crossings) must be the modal one up to the integrator's period
   error. Generalized-α with ρ∞ = 1 is the trapezoidal rule (α_m = α_f = ½, γ = ½, β = ¼), whose frequency
   for a linear mode is exactly f̄ = arctan(π f Δt)/(π Δt): f̄/f − 1 ≈ −(ω Δt)²/12 = −3.288e-4 at 100 steps per
   period, −8.22e-5 at 200. Requirement |f_measured/f̄ − 1| ≤ 1e-5 and the run stays in its mode: for the
   other computed modes j, max_t |η_j| ≤ 1e-3 max_t |η_k| (η = X M (q − q_eq), unit modal mass). The leakage
   is the geometric nonlinearity: it grows in proportion to the amplitude (one run at NONLINEAR_FACTOR × the
   amplitude for the last of SIM_MODES).
2. Closed form: with the joints locked, gravity off and ν = LIMIT_POISSON = 0 (uniaxial stress, as beam theory
   assumes; with ν > 0 the clamped face also restrains the lateral contraction) the beam is a clamped–free
   beam. On the mesh LIMIT_DIVISIONS its two lowest bending pairs (y and z, square section) must be the
   Timoshenko beam's (frequency equation of Huang 1961, J. Appl. Mech. 28:579–584; shear coefficient
   κ = 10(1 + ν)/(12 + 11ν), Cowper 1966), within 2e-4 (first pair) and 1e-3 (second). Euler–Bernoulli
   (β₁L = 1.875104, β₂L = 4.694091; Blevins, *Formulas for Natural Frequency and Mode Shape*, Table 8-1) gives
   2.890047 and 18.11161 Hz; shear and rotary inertia lower them by 0.291 % and 1.976 % (2.881635, 17.75369 Hz).
3. Servo compliance: as k → ∞ the lowest in-plane frequency tends to the locked one as 1/k, and to first order
   ω²(k) = ω²_locked − k Σ_j x_j², x_j the mode's joint amplitudes at unit modal mass (a penalty's eigenvalue
   perturbation: k x_j tends to the locked joint's reaction in the mode). Requirement from
   COMPLIANCE_CHECK_FROM = 1e5 N·m/rad on: within 1e-4.

Measured (defaults, ``NUMBA_NUM_THREADS=1 flexbody run cases/22_arm_beam_modes.py``: 8 s):
- servo-held: 1.7937 (in-plane), 2.9040 (out-of-plane bending), 5.7567 (in-plane), 16.506 (in-plane), 18.112
  (out-of-plane bending), 27.934 (in-plane), 41.605 (torsion), 50.227 Hz (out-of-plane bending); holding
  equilibrium residual 1.9e-9 N. Locked: 2.9040, 2.9080, 18.099, 18.112, 41.605 Hz, …; locked without gravity
  2.9197 Hz (pair): gravity's preload lowers the first pair by 0.54 % (y) and 0.40 % (z).
- free vibration, measured/f̄ − 1 (measured/f − 1): mode 0 (1.7937 Hz) −7.1e-9 (−3.288e-4) at 100 steps per
  period and 2.8e-9 (−8.22e-5) at 200; mode 3 (16.506 Hz) −1.9e-6 (−3.31e-4) and −1.9e-6 (−8.42e-5). The
  mode's own coordinate η_k oscillates at f̄ to 8.5e-11 (mode 0) and 1.2e-6 (mode 3). Leakage into the other
  modes 3.5e-5 (mode 0) and 4.0e-4 (mode 3); at 10 × the amplitude 4.0e-3 (∝ amplitude: nonlinear). No step
  rejected.
- cantilever limit (24 × 2 × 2, ν = 0): 2.881747 and 17.75889 Hz (each pair degenerate to 5e-12), +3.9e-5 and
  +2.9e-4 from Timoshenko, −0.287 % and −1.95 % from Euler–Bernoulli.
- servo compliance: f_locked − f(k) = 1.82e-2, 1.83e-3, 1.83e-4 Hz at k = 1e5, 1e6, 1e7 N·m/rad (∝ 1/k, locked
  2.907982 Hz); the first-order formula is off by 4.2e-5, 4.1e-7 and 4.1e-9 (∝ 1/k²).

Outputs in out_dir: modes/ (``Modes.write``: mode_NN/ results directories, one period of each mode with
beam.pvd and arm.pvd for ParaView or ``flexbody view out/22_arm_beam_modes/modes/mode_00 --gif``, and
modes.csv), free_mode_NN/ (the free-vibration run at the finest step: results and ParaView series),
frequencies.png (frequencies against the servo stiffness; measured frequency errors against the trapezoidal
rule's; modal content of the free-vibration runs), mode_shapes.png (each mode in the plane it moves in),
summary.json (the returned summary) and summary.txt.
"""

import json
import time
from pathlib import Path

import numpy as np

import flexbody as fb

LENGTHS = (0.5, 0.4)  # m, links l1, l2
MASSES = (2.0, 1.0)  # kg, links l1, l2 (uniform rods)
BEAM_SIZE = (0.6, 0.04, 0.04)  # m, beam (L, b, h)
YOUNG = 7e7  # Pa, Young's modulus of the beam
POISSON = 0.3  # -, Poisson's ratio
DENSITY = 2700.0  # kg/m³, density of the beam
GRAVITY = 9.81  # m/s², gravity along −z
Q0 = (0.3, -0.5)  # rad, held joint angles
ORDER = 2  # -, element order (1: 8-node, 2: 27-node hexahedra)
DIVISIONS = (6, 1, 1)  # -, elements along x, y, z
JOINT_STIFFNESS = 1000.0  # N·m/rad, servo stiffness of each joint (rest angle Q0); 0: constant torques only
N_MODES = 8  # -, lowest modes computed
SIM_MODES = (0, 3)  # -, modes started in the free-vibration runs
TIP_AMPLITUDE = 1e-4  # m, initial tip displacement of the free-vibration runs (linear range)
NONLINEAR_FACTOR = 10.0  # -, amplitude factor of the extra run of the last SIM_MODES mode (0: skip)
STEPS_PER_PERIOD = (100, 200)  # -, generalized-α steps per modal period (one run each)
PERIODS = 4  # -, simulated periods
NEWTON_TOL = 1e-13  # -, Newton tolerance of generalized-α (relative to max(1, |q|))
STIFFNESS_SWEEP = (1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1e3, 3e3, 1e4, 3e4, 1e5, 1e6, 1e7)  # N·m/rad, servo stiffnesses
COMPLIANCE_CHECK_FROM = 1e5  # N·m/rad, smallest stiffness of the first-order compliance check
LIMIT_DIVISIONS = (24, 2, 2)  # -, mesh of the clamped-beam limit
LIMIT_POISSON = 0.0  # -, Poisson's ratio of the clamped-beam limit
BETA_L = (1.8751040687, 4.6940911330)  # -, β_i L of the first two clamped–free bending modes


def build(
    joint_stiffness=JOINT_STIFFNESS,
    locked=False,
    q0=Q0,
    gravity=GRAVITY,
    poisson=POISSON,
    order=ORDER,
    divisions=DIVISIONS,
    lengths=LENGTHS,
    masses=MASSES,
    beam_size=BEAM_SIZE,
    young=YOUNG,
    density=DENSITY,
) -> fb.System:
    """The arm with its beam at q0; joints free (stiffness 0), sprung towards q0 (servo) or ``locked``."""
    system = fb.mechanisms.arm_with_beam(
        lengths=tuple(lengths),
        masses=tuple(masses),
        beam_size=tuple(beam_size),
        divisions=tuple(divisions),
        order=order,
        young=young,
        poisson=poisson,
        density=density,
        q0=tuple(q0),
        locked=locked,
        gravity=(0.0, 0.0, -gravity),
    )
    if not joint_stiffness or locked:
        return system
    tree = system.trees[0]
    servos = [
        fb.JointSpringDamper(tree.link(name), stiffness=joint_stiffness, rest=float(rest), name=f"servo_{name}")
        for name, rest in zip(("l1", "l2"), q0)
    ]
    return fb.System(
        [*system.trees, *system.bodies],
        system.constraints,
        loads=system.loads,
        actuators=system.actuators,
        q0=system.q0,
        forces=servos,
    )


def held_modes(n_modes=N_MODES, **params):
    """(assembled system, holding equilibrium, modes about it) of ``build(**params)``: the joints held at q0
    by the holding torques τ_h (plus the servo springs, if any)."""
    asm = build(**params).assemble()
    _, eq = fb.holding_inputs(asm)
    return asm, eq, fb.modal_analysis(asm, eq.q, n_modes=n_modes, tau=eq.tau)


# ------------------------------------------------------------------------------ describing modes
def tip(asm, q) -> np.ndarray:
    """Mean position [m] of the beam's free end face (3,)."""
    beam = asm.bodies[0]
    return q[asm.flexible.slice].reshape(-1, 3)[beam.nodes("x1")].mean(axis=0)


def classify(asm, x) -> str:
    """ "in-plane" (the part of the beam's displacement symmetric about its mid-plane y = 0 dominates: arm and
    beam move in the xz-plane), else "out-of-plane bending" (the free end moves along y) or "torsion"."""
    beam = asm.bodies[0]
    X = beam.mesh.points
    mirrored = X * np.array([1.0, -1.0, 1.0])
    key = {tuple(np.round(p, 9)): i for i, p in enumerate(X)}
    image = np.array([key[tuple(np.round(p, 9))] for p in mirrored])  # node ↔ its mirror image in y
    u = x[asm.flexible.slice].reshape(-1, 3)
    odd = 0.5 * (u - u[image] * np.array([1.0, -1.0, 1.0]))  # out-of-plane part
    if np.sum(odd**2) < np.sum((u - odd) ** 2):
        return "in-plane"
    u_tip = u[beam.nodes("x1")].mean(axis=0)
    return "out-of-plane bending" if abs(u_tip[1]) > 0.3 * np.abs(u).max() else "torsion"


def first_in_plane(asm, modes) -> int:
    return next(k for k in range(len(modes.frequencies)) if classify(asm, modes.shapes[k]) == "in-plane")


# ------------------------------------------------------------------------------ (1) free vibration
def measured_frequency(t, s) -> tuple[float, float, float]:
    """(f [Hz] of a least-squares fit s ≈ c + a cos 2πft + b sin 2πft, f from the crossings of the mid-range
    level, rms residual of the fit / amplitude) of a sampled signal; the fit starts from the crossings."""
    from scipy.optimize import least_squares

    d = s - 0.5 * (s.max() + s.min())
    k = np.flatnonzero(np.sign(d[:-1]) * np.sign(d[1:]) < 0)
    crossings = t[k] - d[k] * (t[k + 1] - t[k]) / (d[k + 1] - d[k])
    f0 = (len(crossings) - 1) / (2.0 * (crossings[-1] - crossings[0]))
    amp = float(np.abs(d).max())

    def residual(p):
        w = 2.0 * np.pi * p[3] * t
        return (p[0] + p[1] * np.cos(w) + p[2] * np.sin(w) - s) / amp

    p = least_squares(
        residual, [s.mean(), d[0], 0.0, f0], x_scale=[amp, amp, amp, f0], xtol=1e-15, ftol=1e-15, gtol=1e-15
    ).x
    return float(p[3]), float(f0), float(np.sqrt(np.mean(residual(p) ** 2)))


def trapezoidal_frequency(f, dt) -> float:
    """Frequency [Hz] at which the trapezoidal rule (generalized-α, ρ∞ = 1) reproduces a linear mode of
    frequency f [Hz] with step dt [s]: ω̄ dt = 2 arctan(ω dt / 2)."""
    return float(np.arctan(np.pi * f * dt) / (np.pi * dt))


def free_vibration(asm, eq, modes, k, steps_per_period, periods, amplitude, tol, context=None):
    """Run from q_eq + s x_k at rest (tip displacement ``amplitude`` [m]) for ``periods`` modal periods;
    returns (numbers, results, modal coordinates η (steps, n_modes))."""
    x, f = modes.shapes[k], float(modes.frequencies[k])
    d = tip(asm, modes.q + x) - tip(asm, modes.q)
    scale = amplitude / np.linalg.norm(d)
    direction = d / np.linalg.norm(d)
    dt = 1.0 / (f * steps_per_period)
    clock = time.perf_counter()
    res = fb.simulate(
        asm,
        periods / f,
        integrator=fb.GeneralizedAlpha(dt=dt, rho_inf=1.0, tol=tol),
        tau=eq.tau,
        q0=modes.q + scale * x,
        v0=np.zeros(asm.n_dofs),
        context=context,
    )
    wall = time.perf_counter() - clock
    s = np.array([(tip(asm, q) - tip(asm, modes.q)) @ direction for q in res.q])
    f_fit, f_zero, rms = measured_frequency(res.times, s)
    M = asm.mass_matrix(asm.evaluate(0.0, modes.q))
    eta = np.array([modes.shapes @ (M @ (q - modes.q)) for q in res.q])  # modal coordinates (unit modal mass)
    peak = np.abs(eta).max(axis=0)
    total = np.sqrt(np.maximum([(q - modes.q) @ (M @ (q - modes.q)) for q in res.q], 0.0))
    outside = np.sqrt(np.maximum(total**2 - np.sum(eta**2, axis=1), 0.0))
    f_trap = trapezoidal_frequency(f, dt)
    f_eta = measured_frequency(res.times, eta[:, k])[0]  # the mode's own coordinate
    stats = res.metadata["statistics"]
    numbers = {
        "mode": int(k),
        "kind": classify(asm, x),
        "steps_per_period": int(steps_per_period),
        "dt": dt,
        "amplitude": amplitude,
        "f_modal": f,
        "f_measured": f_fit,
        "f_zero_crossings": f_zero,
        "f_trapezoidal": f_trap,
        "error_vs_modal": f_fit / f - 1.0,
        "error_vs_trapezoidal": f_fit / f_trap - 1.0,
        "trapezoidal_period_error": f_trap / f - 1.0,
        "fit_rms_over_amplitude": rms,
        "f_measured_modal_coordinate": f_eta,
        "modal_coordinate_vs_trapezoidal": f_eta / f_trap - 1.0,
        "leakage": float(np.delete(peak, k).max() / peak[k]),
        "leakage_per_mode": (peak / peak[k]).tolist(),
        "outside_computed_modes": float(outside.max() / peak[k]),
        "steps": int(stats["steps"]),
        "rejected": int(stats["rejected"]),
        "wall_seconds": wall,
    }
    return numbers, res, eta


# ------------------------------------------------------------------------------ (2) cantilever limit
def euler_bernoulli(beta_l, beam_size=BEAM_SIZE, young=YOUNG, density=DENSITY) -> float:
    """Clamped–free bending frequency [Hz] (β L)² √(E I / (ρ A L⁴)) / 2π of a square-section beam."""
    length, _, h = beam_size
    return float(beta_l) ** 2 * np.sqrt(young * h * h / 12.0 / (density * length**4)) / (2.0 * np.pi)


def timoshenko(beta_l, beam_size=BEAM_SIZE, young=YOUNG, poisson=LIMIT_POISSON, density=DENSITY) -> float:
    """The clamped–free Timoshenko-beam frequency [Hz] near the Euler–Bernoulli mode β L (Huang 1961):
    2 + [b²(r² − s²)² + 2] cosh bα cos bβ − b(r² + s²)/√(1 − b²r²s²) sinh bα sin bβ = 0 with b² = ρAω²L⁴/EI,
    r² = I/(AL²), s² = EI/(κGAL²), α, β = √(∓(r² + s²) + √((r² − s²)² + 4/b²)) / √2; κ after Cowper (1966)."""
    from scipy.optimize import brentq

    length, width, h = beam_size
    area, inertia = width * h, width * h**3 / 12.0
    shear = young / (2.0 * (1.0 + poisson)) * 10.0 * (1.0 + poisson) / (12.0 + 11.0 * poisson)
    r2, s2 = inertia / (area * length**2), young * inertia / (shear * area * length**2)

    def equation(omega):
        b2 = density * area * omega**2 * length**4 / (young * inertia)
        b, root = np.sqrt(b2), np.sqrt((r2 - s2) ** 2 + 4.0 / b2)
        alpha, beta = np.sqrt((root - r2 - s2) / 2.0), np.sqrt((root + r2 + s2) / 2.0)
        return (
            2.0
            + (b2 * (r2 - s2) ** 2 + 2.0) * np.cosh(b * alpha) * np.cos(b * beta)
            - b * (r2 + s2) / np.sqrt(1.0 - b2 * r2 * s2) * np.sinh(b * alpha) * np.sin(b * beta)
        )

    omega_eb = 2.0 * np.pi * euler_bernoulli(beta_l, beam_size, young, density)
    return float(brentq(equation, 0.8 * omega_eb, 1.0 * omega_eb, xtol=1e-14, rtol=1e-15)) / (2.0 * np.pi)


def cantilever_limit(divisions, poisson, params) -> dict:
    """Locked joints, no gravity: the two lowest bending pairs against Timoshenko and Euler–Bernoulli."""
    modes = fb.modal_analysis(
        build(locked=True, **{**params, "gravity": 0.0, "poisson": poisson, "divisions": divisions}), n_modes=4
    )
    beam = {key: params[key] for key in ("beam_size", "young", "density") if key in params}
    eb = [euler_bernoulli(b, **beam) for b in BETA_L]
    timo = [timoshenko(b, poisson=poisson, **beam) for b in BETA_L]
    pairs = [modes.frequencies[0:2].tolist(), modes.frequencies[2:4].tolist()]
    return {
        "divisions": list(divisions),
        "poisson": poisson,
        "n_dofs": int(modes.system.n_dofs),
        "frequencies": pairs,
        "euler_bernoulli": eb,
        "timoshenko": timo,
        "vs_timoshenko": [max(abs(f / t - 1.0) for f in pair) for pair, t in zip(pairs, timo)],
        "signed_vs_timoshenko": [pair[0] / t - 1.0 for pair, t in zip(pairs, timo)],
        "vs_euler_bernoulli": [pair[0] / e - 1.0 for pair, e in zip(pairs, eb)],
        "timoshenko_vs_euler_bernoulli": [t / e - 1.0 for t, e in zip(timo, eb)],
    }


# ------------------------------------------------------------------------------ (3) servo compliance
def sweep_stiffness(stiffnesses, locked, params, n_modes=N_MODES) -> dict:
    """Modes at each servo stiffness; the lowest in-plane one against the first-order compliance formula
    ω²(k) = ω²_locked − k Σ x_j² (x_j: the mode's joint amplitudes at unit modal mass)."""
    asm_l, modes_l = locked
    f_locked = float(modes_l.frequencies[first_in_plane(asm_l, modes_l)])
    rows = []
    for k in stiffnesses:
        asm, _, modes = held_modes(n_modes, joint_stiffness=float(k), **params)
        i = first_in_plane(asm, modes)
        joints = modes.shapes[i][: asm.n_rigid]
        predicted = np.sqrt(max((2 * np.pi * f_locked) ** 2 - k * float(joints @ joints), 0.0)) / (2 * np.pi)
        f = float(modes.frequencies[i])
        rows.append(
            {
                "stiffness": float(k),
                "frequencies": modes.frequencies.tolist(),
                "first_in_plane": f,
                "locked_minus_first_in_plane": f_locked - f,
                "first_order": float(predicted),
                "first_order_error": float(predicted / f - 1.0),
            }
        )
    return {"f_locked_in_plane": f_locked, "rows": rows}


# ------------------------------------------------------------------------------ pictures
def centre_line(asm, q) -> np.ndarray:
    """Beam centre line (stations, 3) [m]: the mean of each cross-section's nodes at q."""
    beam = asm.bodies[0]
    X = beam.mesh.points
    axis = X[beam.nodes("x1")].mean(axis=0) - X[beam.nodes("x0")].mean(axis=0)
    station = np.round((X - X[beam.nodes("x0")].mean(axis=0)) @ axis / (axis @ axis), 9)
    pts = q[asm.flexible.slice].reshape(-1, 3)
    return np.array([pts[station == s].mean(axis=0) for s in np.unique(station)])


def arm_line(asm, q) -> np.ndarray:
    """Joint 1, joint 2 and the flange (the centroid of the beam's attached face) (3, 3) [m] at q."""
    kin = asm.trees[0].kinematics(q[: asm.n_rigid])
    flange = q[asm.flexible.slice].reshape(-1, 3)[asm.bodies[0].nodes("x0")].mean(axis=0)
    return np.array([kin.p[0], kin.p[1], flange])


def plot_modes(path, asm, modes, show=0.08) -> None:
    """Each mode at the largest beam displacement ``show`` [m] (blue) over the equilibrium (grey): in-plane
    modes seen along y (arm and beam centre line in the xz-plane), out-of-plane bending from above (xy-plane),
    torsion as the free end's cross-section (yz-plane)."""
    n = len(modes.frequencies)
    columns = (n + 1) // 2
    fig, axes = fb.plots.subplots(2, columns, figsize=(3.4 * columns, 6.0))
    end = asm.bodies[0].nodes("x1")
    for k, ax in enumerate(np.ravel(axes)[:n]):
        x = modes.shapes[k]
        kind = classify(asm, x)
        reach = 0.15 * min(BEAM_SIZE[1:]) if kind == "torsion" else show  # torsion: a small rotation
        q = modes.q + reach / np.abs(x[asm.flexible.slice]).max() * x
        for state, colour in ((modes.q, "0.7"), (q, "C0")):
            if kind == "torsion":
                face = state[asm.flexible.slice].reshape(-1, 3)[end]
                ax.plot(face[:, 1], face[:, 2], "o", ms=3, color=colour)
                continue
            plane = (0, 2) if kind == "in-plane" else (0, 1)
            a, b = arm_line(asm, state), centre_line(asm, state)
            ax.plot(a[:, plane[0]], a[:, plane[1]], "o-", lw=3, ms=4, color=colour)
            ax.plot(b[:, plane[0]], b[:, plane[1]], "-", lw=2, color=colour)
        labels = {"in-plane": ("x", "z"), "out-of-plane bending": ("x", "y"), "torsion": ("y (free end)", "z")}[kind]
        if kind == "torsion":
            ax.set_aspect("equal", adjustable="datalim")
        ax.set_title(f"mode {k}: {modes.frequencies[k]:.4g} Hz\n{kind}", fontsize=9)
        ax.set_xlabel(f"{labels[0]} [m]", fontsize=8)
        ax.set_ylabel(f"{labels[1]} [m]", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
    for ax in np.ravel(axes)[n:]:
        ax.set_visible(False)
    fig.suptitle(
        f"servo-held arm: modes about the static equilibrium (grey), largest beam displacement {show:g} m", fontsize=10
    )
    fb.plots.save(fig, path, dpi=110)


def plot_frequencies(path, sweep, k_servo, locked_f, runs) -> None:
    """(a) the lowest frequencies against the servo stiffness; (b) the free-vibration frequency errors against
    the trapezoidal rule's; (c) the modal content of the free-vibration runs."""
    fig, (ax, bx, cx) = fb.plots.subplots(1, 3, figsize=(16, 4.8))
    k = np.array([r["stiffness"] for r in sweep["rows"]])
    f = np.array([r["frequencies"] for r in sweep["rows"]])
    for j in range(f.shape[1]):
        ax.semilogx(k, f[:, j], "o-", ms=3, lw=1, color=f"C{j}")
    for value in locked_f:
        ax.axhline(value, color="0.5", ls="--", lw=0.8)
    ax.axvline(k_servo, color="k", lw=0.8)
    ax.axhline(0.0, color="k", lw=0.5)
    ax.set_xlabel("servo stiffness k [N·m/rad]")
    ax.set_ylabel("frequency [Hz] (negative: ω² < 0, unstable)")
    ax.set_title(
        "lowest modes (sorted) against the servo stiffness\n(dashed: locked joints; vertical: this case)", fontsize=9
    )
    ax.grid(alpha=0.3)
    n = np.geomspace(10, 1000, 50)
    bx.loglog(n, 1.0 - np.arctan(np.pi / n) * n / np.pi, "k-", lw=1, label="trapezoidal rule 1 − f̄/f")
    for j, mode in enumerate(sorted({r["mode"] for r in runs})):
        rows = [r for r in runs if r["mode"] == mode and r["amplitude"] == min(x["amplitude"] for x in runs)]
        bx.loglog(
            [r["steps_per_period"] for r in rows],
            [abs(r["error_vs_modal"]) for r in rows],
            "o",
            ms=7,
            mfc="none",
            color=f"C{j}",
            label=f"measured, mode {mode} ({rows[0]['f_modal']:.4g} Hz)",
        )
        cx.semilogy(
            np.arange(len(rows[-1]["leakage_per_mode"])),
            np.maximum(rows[-1]["leakage_per_mode"], 1e-16),
            "o-",
            color=f"C{j}",
            label=f"started in mode {mode}",
        )
    bx.set_xlabel("steps per modal period")
    bx.set_ylabel("|f_measured / f_modal − 1| [-]")
    bx.set_title("free vibration from q_eq + s x_k (generalized-α, ρ∞ = 1)", fontsize=9)
    bx.legend(fontsize=8)
    bx.grid(alpha=0.3, which="both")
    cx.set_xlabel("mode j")
    cx.set_ylabel("max_t |η_j| / max_t |η_k| [-]")
    cx.set_title("modal content of the free-vibration runs", fontsize=9)
    cx.legend(fontsize=8)
    cx.grid(alpha=0.3)
    fb.plots.save(fig, path, dpi=110)


# ------------------------------------------------------------------------------ main
def main(
    out_dir="out/22_arm_beam_modes",
    joint_stiffness=JOINT_STIFFNESS,
    n_modes=N_MODES,
    sim_modes=SIM_MODES,
    tip_amplitude=TIP_AMPLITUDE,
    nonlinear_factor=NONLINEAR_FACTOR,
    steps_per_period=STEPS_PER_PERIOD,
    periods=PERIODS,
    newton_tol=NEWTON_TOL,
    stiffness_sweep=STIFFNESS_SWEEP,
    compliance_check_from=COMPLIANCE_CHECK_FROM,
    limit_divisions=LIMIT_DIVISIONS,
    limit_poisson=LIMIT_POISSON,
    q0=Q0,
    order=ORDER,
    divisions=DIVISIONS,
    gravity=GRAVITY,
    poisson=POISSON,
    lengths=LENGTHS,
    masses=MASSES,
    beam_size=BEAM_SIZE,
    young=YOUNG,
    density=DENSITY,
    write_modes=True,
    context=None,
) -> dict:
    """Modes of the servo-held arm, the other ways of holding it, and the three verifications; returns the
    summary (also in summary.json)."""
    clock = time.perf_counter()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    shape = {
        "order": order,
        "divisions": tuple(divisions),
        "lengths": tuple(lengths),
        "masses": tuple(masses),
        "beam_size": tuple(beam_size),
        "young": young,
        "density": density,
    }
    params = {**shape, "q0": tuple(q0), "gravity": gravity, "poisson": poisson}
    spp = (steps_per_period,) if isinstance(steps_per_period, (int, float)) else tuple(steps_per_period)

    asm, eq, modes = held_modes(n_modes, joint_stiffness=joint_stiffness, **params)
    kinds = [classify(asm, x) for x in modes.shapes]
    if write_modes:
        modes.write(out / "modes")
    # the other ways of holding the arm
    _, _, torque_only = held_modes(n_modes, joint_stiffness=0.0, **params)
    hanging = fb.modal_analysis(build(joint_stiffness=0.0, **{**params, "q0": (np.pi / 2, 0.0)}), n_modes=n_modes)
    locked = fb.modal_analysis(build(locked=True, **params), n_modes=n_modes)
    locked_no_gravity = fb.modal_analysis(build(locked=True, **{**params, "gravity": 0.0}), n_modes=n_modes)

    # (1) free vibration
    runs = []
    for k in sim_modes:
        for j, n_steps in enumerate(spp):
            numbers, res, _ = free_vibration(asm, eq, modes, k, n_steps, periods, tip_amplitude, newton_tol, context)
            runs.append(numbers)
            if j == len(spp) - 1:
                res.save(out / f"free_mode_{k:02d}")
                fb.io.write_pvds(out / f"free_mode_{k:02d}", res, every=max(1, int(n_steps) // 20))
                fb.io.write_link_pvd(out / f"free_mode_{k:02d}", res, every=max(1, int(n_steps) // 20))
    nonlinear = None
    if nonlinear_factor and sim_modes:
        nonlinear = free_vibration(
            asm, eq, modes, sim_modes[-1], spp[0], periods, nonlinear_factor * tip_amplitude, newton_tol, context
        )[0]

    # (2) the clamped-beam limit, (3) servo compliance
    limit = cantilever_limit(
        tuple(limit_divisions), limit_poisson, {**shape, "q0": tuple(q0), "divisions": tuple(limit_divisions)}
    )
    sweep = sweep_stiffness(stiffness_sweep, (locked.system, locked), params, n_modes)
    checked = [r for r in sweep["rows"] if r["stiffness"] >= compliance_check_from]

    plot_modes(out / "mode_shapes.png", asm, modes)
    plot_frequencies(out / "frequencies.png", sweep, joint_stiffness, locked.frequencies, runs)
    summary = {
        "joint_stiffness": joint_stiffness,
        "n_dofs": int(asm.n_dofs),
        "holding_torques": (np.asarray(asm.S) @ eq.tau).tolist(),
        "equilibrium_residual": float(eq.residual),
        "static_residual": float(modes.metadata["static_residual"]),
        "tip_sag": (tip(asm, eq.q) - tip(asm, asm.q0)).tolist(),
        "frequencies": modes.frequencies.tolist(),
        "kinds": kinds,
        "n_rigid_body": int(modes.n_rigid_body),
        "holds": {
            "servo": modes.frequencies.tolist(),
            "constant_torque": torque_only.frequencies.tolist(),
            "free_joints_hanging": hanging.frequencies.tolist(),
            "locked": locked.frequencies.tolist(),
            "locked_no_gravity": locked_no_gravity.frequencies.tolist(),
        },
        "hanging_posture": hanging.q[:2].tolist(),
        "preload_effect": [float(locked.frequencies[i] / locked_no_gravity.frequencies[i] - 1.0) for i in (0, 1)],
        "free_vibration": runs,
        "nonlinear_run": nonlinear,
        "max_error_vs_trapezoidal": max(abs(r["error_vs_trapezoidal"]) for r in runs) if runs else None,
        "max_leakage": max(r["leakage"] for r in runs) if runs else None,
        "cantilever_limit": limit,
        "stiffness_sweep": sweep,
        "max_first_order_error": max(abs(r["first_order_error"]) for r in checked) if checked else None,
        "modal_method": modes.metadata["method"],
    }
    summary["wall_seconds"] = time.perf_counter() - clock
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    (out / "summary.txt").write_text(report(summary) + "\n")
    return summary


def report(s) -> str:
    """The summary as a readable table."""
    lines = [
        f"Case 22: modes of the arm with its beam held at q0 by servos k = {s['joint_stiffness']:g} N·m/rad "
        f"(holding torques {s['holding_torques'][0]:.4f}, {s['holding_torques'][1]:.4f} N·m; equilibrium "
        f"residual {s['equilibrium_residual']:.2e} N; tip sag {np.linalg.norm(s['tip_sag']):.4f} m)",
        "mode  servo [Hz]   kind                   constant torque  free (hanging)  locked     locked, g = 0",
    ]
    h = s["holds"]
    for k, (f, kind) in enumerate(zip(s["frequencies"], s["kinds"])):
        lines.append(
            f"{k:>4}  {f:<11.6g}  {kind:<21}  {h['constant_torque'][k]:<15.6g}  "
            f"{h['free_joints_hanging'][k]:<14.6g}  {h['locked'][k]:<9.6g}  {h['locked_no_gravity'][k]:.6g}"
        )
    lines.append(
        f"gravity preload on the locked beam's first pair: {s['preload_effect'][0]:+.3e}, {s['preload_effect'][1]:+.3e}"
    )
    lines.append(
        "free vibration: mode, steps/period, f_modal, f_measured, f_measured/f_trap - 1, "
        "f_measured/f_modal - 1, trapezoidal period error, leakage, outside the computed modes, "
        "rejected steps"
    )
    for r in s["free_vibration"] + ([s["nonlinear_run"]] if s["nonlinear_run"] else []):
        lines.append(
            f"  {r['mode']} {r['steps_per_period']:>4} {r['f_modal']:.8f} {r['f_measured']:.8f} "
            f"{r['error_vs_trapezoidal']:+.2e} {r['error_vs_modal']:+.3e} "
            f"{r['trapezoidal_period_error']:+.3e} "
            f"{r['leakage']:.2e} {r['outside_computed_modes']:.2e} {r['rejected']}"
            + (f"  (amplitude {r['amplitude']:g} m)" if r is s["nonlinear_run"] else "")
        )
    c = s["cantilever_limit"]
    lines.append(
        f"clamped-beam limit (locked, g = 0, nu = {c['poisson']}, {c['divisions']}): pairs "
        f"{c['frequencies'][0][0]:.6f}/{c['frequencies'][0][1]:.6f} and {c['frequencies'][1][0]:.5f}/"
        f"{c['frequencies'][1][1]:.5f} Hz; Timoshenko {c['timoshenko'][0]:.6f}, {c['timoshenko'][1]:.5f}; "
        f"Euler-Bernoulli {c['euler_bernoulli'][0]:.6f}, {c['euler_bernoulli'][1]:.5f}"
    )
    lines.append(
        f"  vs Timoshenko {c['signed_vs_timoshenko'][0]:+.2e}, {c['signed_vs_timoshenko'][1]:+.2e}; "
        f"vs Euler-Bernoulli {c['vs_euler_bernoulli'][0]:+.3e}, {c['vs_euler_bernoulli'][1]:+.3e} "
        f"(Timoshenko/EB - 1: {c['timoshenko_vs_euler_bernoulli'][0]:+.3e}, "
        f"{c['timoshenko_vs_euler_bernoulli'][1]:+.3e})"
    )
    sw = s["stiffness_sweep"]
    lines.append(
        f"servo stiffness sweep (first in-plane mode; locked {sw['f_locked_in_plane']:.6f} Hz): "
        "k, f, f_locked - f, first-order formula / f - 1"
    )
    for r in sw["rows"]:
        lines.append(
            f"  {r['stiffness']:<8.3g} {r['first_in_plane']:.6f} {r['locked_minus_first_in_plane']:.3e} "
            f"{r['first_order_error']:+.2e}   lowest: {r['frequencies'][0]:+.4f} Hz"
        )
    lines.append(f"wall time {s['wall_seconds']:.1f} s")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
