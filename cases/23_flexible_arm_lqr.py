"""Case 23: an LQR for the flexible arm of case 14, designed with scipy on flexbody's linear model and run
in flexbody on the nonlinear system.

Problem: the arm of case 14 (``fb.mechanisms.arm_with_beam``: rods 0.5 and 0.4 m, 2.0 and 1.0 kg, revolute
joints about y, both actuated, moving in the vertical xz-plane; beam 0.6 × 0.04 × 0.04 m, E 7e7 Pa, ν 0.3,
ρ 2700 kg/m³, attached by its face x = 0 to the flange of link 2; gravity 9.81 m/s² along −z), with
Kelvin–Voigt material damping β = DAMPING = 1e-3 s in the beam and a reduced mesh: 27-node elements 4 × 1 × 1,
245 coordinates and 27 attachment rows, so the linear model has p = 218 coordinates on the constraint's
tangent space and 2p = 436 states. The posture Q0 = (0.9, −0.3) rad hangs below the horizontal (the beam
inclined 0.6 rad downwards), where the holding torques alone leave a stable equilibrium; at case 14's
q0 = (0.3, −0.5) rad they do not (case 22: f = −0.276 Hz), and the open loop of (c) would fall away.

1. Model. ``fb.holding_inputs`` gives the torques u* that hold Q0 (the beam sags under its weight),
   ``fb.modal_analysis(tau=u*)`` the open-loop modes, ``fb.linearize(inputs=u*, outputs=[tip])`` the model
   ẋ = A x + B δu, y = C x about that equilibrium, y the position of the centre node of the beam's free face
   (``fb.PointTask`` on ``fb.nearest_node``). A mode is in-plane when its tip moves in the xz-plane, else out
   of the plane (bending along y, torsion: joints about y neither see nor move these — uncontrollable, left
   to the material damping). The two lowest in-plane modes are the arm's swings (two joints under constant
   torques, made stiff by gravity only); the third in-plane mode is the beam's first bending mode, and the
   disturbance is the beam deflected along it, at rest, its tip displaced by AMPLITUDES.
2. Design (``fb.control.lqr_gain``: scipy's ``solve_continuous_are``). The cost weighs what one sees of the
   vibration, the tip's in-plane deviation and speed, against the joint torques (Bryson's rule):
   J = ∫ |y_xz|²/TIP_REF² + |ẏ_xz|²/(TIP_RATE TIP_REF)² + |δτ|²/TORQUE_REF² dt, i.e. Q = C_xzᵀC_xz/TIP_REF²
   + C_vᵀC_v/(TIP_RATE TIP_REF)² with C_v = [0, C_xz] (the tip velocity) and R = I/TORQUE_REF². Weighting
   outputs rather than the 436 states keeps Q independent of the mesh; TIP_RATE = 30 1/s lies between
   the arm's swings (2.5 and 7.7 rad/s) and the beam's first bending (43 rad/s), so that both are damped, and
   TORQUE_REF keeps the torque changes of a 1 cm disturbance to a few N·m (holding torques 30 and 16 N·m).
   Modes the tip does not show get no weight and keep their material damping (the Riccati equation is
   solvable because they are stable). Each closed-loop eigenvalue of A − BK is matched to an open-loop mode
   by the modal assurance criterion (MAC) of its displacement part.
3. Runs (``fb.simulate``, ``fb.GeneralizedAlpha(dt=DT, rho_inf=1, tol=NEWTON_TOL)`` with MAX_ITERATIONS Newton
   iterations, so that no step is rejected at that tolerance, to T_END): open loop (the holding torques only)
   from the smaller amplitude, closed loop (``fb.control.StateFeedback(lin, K)``: τ = u* − K x, x from the
   measured q, v) from each amplitude. The runs record every SAMPLE s (cubic splines would put the records on
   that grid if a step were halved) and are compared with the linear predictions exp(A t) x₀ and
   exp((A − BK) t) x₀, x₀ the run's initial state.

Verification (requirements):
(a) the closed-loop tip deviation follows the linear prediction C exp((A − BK)t)x₀: max_t |y − y_lin| over
    the amplitude is proportional to the amplitude (the ratio of the two within [1.6, 2.4] for amplitudes in
    ratio 2) and ≤ 5 % at 1 cm: the model is exact to first order. A part independent of the amplitude comes
    from the integrator's input delay of (b): 2.3 % of the amplitude at a 1 ms step, 1.1 % at 0.5 ms; at
    DT = 0.25 ms it is hidden by the nonlinear part down to 2 mm (0.69 % there, the same at 0.125 ms).
(b) the closed-loop tip vibration decays as designed. Its poles are measured from the simulated tip signal
    alone (matrix pencil: Hua & Sarkar, IEEE Trans. ASSP 38 (1990) 814–824; PENCIL_ORDER damped exponentials
    fitted to both tip components; on the linear prediction it returns the eigenvalue to 2e-8). The pole
    nearest the closed-loop first bending mode must lie within 3 % (real part) and 0.5 % (imaginary part) of
    it. Part of the difference is the integrator's, not the model's: generalized-α holds the controller's
    output over a step and blends it with the previous one in the velocity update ((1 − γ)τ_{n−1} + γτ_n,
    γ = ½), so the loop acts on the state one step late. A delay Δt shifts an eigenvalue by
    δλ = λ Δt wᴴBKv / wᴴv (first order; v, w its right and left eigenvectors): +4.53 %, +2.27 %, +1.13 %,
    +0.57 % in the decay rate and +0.96 %, +0.48 %, +0.24 %, +0.12 % in the frequency at Δt = 1, 0.5, 0.25,
    0.125 ms; runs from 2 mm measure +4.89 %, +2.40 %, +1.22 %, +0.64 % and +1.01 %, +0.49 %, +0.24 %,
    +0.12 %. Against the delayed pole the measured one must lie within 1 % (real part) and 0.3 % (imaginary
    part) at the smaller amplitude: what remains is the nonlinearity.
(c) open loop, the tip vibrates at the modal frequency with the material damping only: the measured pole
    nearest the first bending mode's open-loop eigenvalue has its frequency within 2e-3 of
    ``modal_analysis``'s (damping lowers it by 2.2e-4, the trapezoidal rule by 1e-5, the rest is the
    amplitude) and its real part within 1 % of the eigenvalue's. The damping ratio is below β ω/2 (a purely
    elastic mode's): 4 % of this mode's stiffness is gravity's and the preload's, which Kelvin–Voigt damping
    leaves undamped.

Measured (defaults, ``NUMBA_NUM_THREADS=1 flexbody run cases/23_flexible_arm_lqr.py``: 26 s; model 0.3 s,
LQR 2.0 s, the open-loop run 5.7 s and the closed-loop runs 7–8 s, 6000 steps each, none rejected):
- holding torques (−30.1039, −16.1029) N·m (equilibrium residual 3.2e-9 N); open-loop modes 0.39041,
  1.23178 Hz (arm swings), 3.01240 (out of plane), 6.91106 (beam bending 1), 18.81999 (out of plane),
  26.01557 (beam bending 2), 41.61115, 54.84271 Hz (out of plane).
- damping ratios open → closed loop: arm swings 1.5e-7 → 0.640 and 2.8e-5 → 0.827; beam bending 1
  0.02087 → 0.3289 (pole −0.9062 + 43.4140j → −16.0008 + 45.9499j 1/s); beam bending 2 0.0812 → 0.1158;
  out-of-plane modes unchanged (eigenvalues to 2e-9).
- (a) max |y − y_lin| / amplitude = 7.463e-2 (2 cm) and 3.576e-2 (1 cm): ratio 2.087; torque deviation
  5.0 % and 2.8 % of the torque swing (8.30 and 4.15 N·m).
- (b) measured pole at 1 cm −16.2512 + 46.0570j: decay rate +1.57 %, frequency +0.23 % from the design
  (ζ 0.3327 against 0.3289); from the delayed pole +0.43 % and −0.007 % (2 cm: +0.88 %, −0.023 %).
- (c) open loop −0.9088 + 43.4007j: 6.90744 Hz, −5.2e-4 from the modal 6.91106 Hz; real part +0.29 %, imaginary
  part −3.1e-4 from the eigenvalue; ζ 0.02094 against 0.02087 (β ω/2 = 0.02171).

Outputs in out_dir: open_loop/, closed_loop_1/, closed_loop_2/ (Results.save of the runs, closed_loop_k from
the k-th amplitude, recorded every SAMPLE s, with beam.pvd + .vtu every VTK_EVERY records for ParaView),
histories.csv (on the SAMPLE grid: the tip deviation x, z of each run and of its linear prediction, the joint
torques), lqr.png (the tip response open vs closed loop with the linear predictions; the torques; the poles),
summary.json (the returned summary) and summary.txt.
"""

import json
import time
from pathlib import Path

import numpy as np
import scipy.linalg as la
from scipy.interpolate import CubicSpline

import flexbody as fb

LENGTHS = (0.5, 0.4)  # m, links l1, l2
MASSES = (2.0, 1.0)  # kg, links l1, l2 (uniform rods)
BEAM_SIZE = (0.6, 0.04, 0.04)  # m, beam (L, b, h)
YOUNG = 7e7  # Pa, Young's modulus of the beam
POISSON = 0.3  # -, Poisson's ratio
DENSITY = 2700.0  # kg/m³, density of the beam
DAMPING = 1e-3  # s, Kelvin–Voigt retardation time of the beam (material damping)
GRAVITY = 9.81  # m/s², gravity along −z
Q0 = (0.9, -0.3)  # rad, held joint angles
ORDER = 2  # -, element order (1: 8-node, 2: 27-node hexahedra)
DIVISIONS = (4, 1, 1)  # -, elements along x, y, z
N_MODES = 8  # -, open-loop modes computed
TIP_REF = 1e-3  # m, tip deviation that costs as much as TORQUE_REF
TIP_RATE = 30.0  # 1/s, tip speed of unit cost over TIP_REF (a speed of 3 cm/s costs as 1 mm)
TORQUE_REF = 0.3  # N·m, joint torque change of unit cost
AMPLITUDES = (2e-2, 1e-2)  # m, tip deflections of the disturbance (beam along its first bending mode)
DT = 2.5e-4  # s, generalized-α step
T_END = 1.5  # s, end time of every run
NEWTON_TOL = 1e-13  # -, Newton tolerance of generalized-α (relative to max(1, |q|))
MAX_ITERATIONS = 20  # -, Newton iterations per attempt
SAMPLE = 2e-3  # s, spacing of the records and compared histories (comparisons, pencil, CSV)
PENCIL_ORDER = 16  # -, damped exponentials fitted to the tip signal
VTK_EVERY = 5  # -, ParaView frame every this many recorded states (0: none)


def build(
    lengths=LENGTHS,
    masses=MASSES,
    beam_size=BEAM_SIZE,
    young=YOUNG,
    poisson=POISSON,
    density=DENSITY,
    damping=DAMPING,
    gravity=GRAVITY,
    q0=Q0,
    order=ORDER,
    divisions=DIVISIONS,
) -> fb.System:
    """The arm of case 14 with its damped beam at q0 (joints actuated, free)."""
    return fb.mechanisms.arm_with_beam(
        lengths=tuple(lengths),
        masses=tuple(masses),
        beam_size=tuple(beam_size),
        divisions=tuple(divisions),
        order=order,
        young=young,
        poisson=poisson,
        density=density,
        damping=damping,
        q0=tuple(q0),
        gravity=(0.0, 0.0, -gravity),
    )


# ------------------------------------------------------------------------------------ 1. model
def linear_model(asm, n_modes):
    """Holding torques u*, their equilibrium, the open-loop modes, the tip node and the linear model."""
    beam = asm.bodies[0]
    u, eq = fb.holding_inputs(asm)
    modes = fb.modal_analysis(asm, eq.q, n_modes=n_modes, tau=eq.tau)
    tip = fb.nearest_node(beam, beam.mesh.points[beam.nodes("x1")].mean(axis=0))  # centre of the free face
    lin = fb.linearize(asm, eq.q, inputs=u, outputs=[fb.PointTask(tip, name="tip")])
    return u, eq, modes, tip, lin


def classify(lin, modes) -> list[dict]:
    """Per open-loop mode: frequency, whether the tip moves in the xz-plane, and the mode's role."""
    p = lin.metadata["p"]
    rows, in_plane = [], 0
    for k, f in enumerate(modes.frequencies):
        y = lin.C[:, :p] @ (lin.basis.T @ modes.shapes[k])  # tip displacement (x, y, z)
        planar = bool(abs(y[1]) < 1e-3 * np.linalg.norm(y))
        role = ("arm swing" if in_plane < 2 else f"beam bending {in_plane - 1}") if planar else "out of plane"
        in_plane += planar
        rows.append(
            {
                "mode": k,
                "frequency_hz": float(f),
                "in_plane": planar,
                "role": role,
                "tip_y_share": float(abs(y[1]) / np.linalg.norm(y)),
            }
        )
    return rows


def disturbance(lin, modes, k) -> np.ndarray:
    """x (2p,): the beam along mode k at rest, scaled to a unit in-plane tip deflection (the tip moving up)."""
    p = lin.metadata["p"]
    z = lin.basis.T @ modes.shapes[k]
    y = lin.C[[0, 2], :p] @ z
    return np.concatenate([z * np.sign(y[1]) / np.linalg.norm(y), np.zeros(p)])


# ------------------------------------------------------------------------------------ 2. design
def lqr(lin, tip_ref, tip_rate, torque_ref) -> np.ndarray:
    """K (2, 2p) for Q = C_xzᵀC_xz/tip_ref² + C_vᵀC_v/(tip_rate tip_ref)², R = I/torque_ref²."""
    p = lin.metadata["p"]
    C_xz = lin.C[[0, 2]]
    C_v = np.hstack([np.zeros((2, p)), C_xz[:, :p]])
    Q = C_xz.T @ C_xz / tip_ref**2 + C_v.T @ C_v / (tip_rate * tip_ref) ** 2
    return fb.control.lqr_gain(lin, Q, np.full(2, 1.0 / torque_ref**2))


def damping_ratio(lam) -> float:
    return float(-lam.real / abs(lam))


def matched_poles(lin, modes, w, V) -> list[tuple[int, float]]:
    """Per open-loop mode, (index j of the eigenvalue w_j with Im ≥ 0 whose eigenvector's displacement part
    V[:p, j] is most like the mode, that MAC)."""
    p = lin.metadata["p"]
    Vz = V[:p]
    norms = np.einsum("ij,ij->j", Vz.conj(), Vz).real
    out = []
    for x in modes.shapes:
        z = lin.basis.T @ x
        mac = np.abs(z @ Vz) ** 2 / (z @ z) / norms
        mac[w.imag < -1e-9 * np.abs(w)] = 0.0
        j = int(np.argmax(mac))
        out.append((j, float(mac[j])))
    return out


def delayed_pole(lam, v, w, BK, delay) -> complex:
    """λ + δλ of the loop acting ``delay`` [s] late, A − BK e^{−λ delay}: δλ = λ delay wᴴBKv / wᴴv."""
    return complex(lam + lam * delay * (w.conj() @ BK @ v) / (w.conj() @ v))


# ------------------------------------------------------------------------------------ 3. runs
def run(asm, lin, x0, gain, dt, t_end, tol, max_iterations, record_every=1, context=None):
    """A run from the state x0 of the linear model: closed loop (``gain`` K) or open loop (gain None)."""
    q0, v0 = lin.coordinates(x0)
    kw = {"controller": fb.control.StateFeedback(lin, gain)} if gain is not None else {"tau": asm.S.T @ lin.u}
    return fb.simulate(
        asm,
        t_end,
        integrator=fb.GeneralizedAlpha(dt=dt, rho_inf=1.0, tol=tol, max_iterations=max_iterations),
        q0=q0,
        v0=v0,
        record_every=record_every,
        context=context,
        **kw,
    )


def tip_columns(asm, tip) -> np.ndarray:
    """Columns of the tip node's x and z coordinates in q."""
    return asm.offsets[tip.body] + 3 * tip.index + np.array([0, 2])


def compare(asm, lin, tip, res, A, gain, grid) -> dict:
    """Tip deviation (x, z) [m] and joint torques [N·m] of a run and of the linear prediction exp(A t) x(0),
    on the uniform ``grid``."""
    p = lin.metadata["p"]
    E = la.expm(A * (grid[1] - grid[0]))
    x_lin = np.empty((len(grid), 2 * p))
    x_lin[0] = lin.state(res.q[0], res.v[0])
    for k in range(1, len(grid)):
        x_lin[k] = E @ x_lin[k - 1]
    cols = tip_columns(asm, tip)
    y_sim = CubicSpline(res.times, res.q[:, cols] - lin.q[cols])(grid)
    y_lin = x_lin[:, :p] @ lin.C[[0, 2], :p].T
    if gain is None:
        tau_sim = tau_lin = np.tile(lin.u, (len(grid), 1))
    else:
        tau_sim = CubicSpline(res.times, res.histories["tau_k"])(grid)
        tau_lin = lin.u - x_lin @ gain.T
    return {"y_sim": y_sim, "y_lin": y_lin, "tau_sim": tau_sim, "tau_lin": tau_lin, "tau_hold": lin.u}


def measured_poles(t, y, order) -> tuple[np.ndarray, np.ndarray]:
    """Poles λ (order,) [1/s] and amplitudes [m] of a sum of ``order`` damped exponentials fitted to y (s, c)
    sampled uniformly at t (matrix pencil: the shift invariance of the dominant right singular vectors of the
    stacked Hankel matrices of the c channels)."""
    h, L = t[1] - t[0], len(t) // 3
    H = np.vstack([np.lib.stride_tricks.sliding_window_view(y[:, c], L + 1) for c in range(y.shape[1])])
    V = la.svd(H, full_matrices=False)[2][:order].T
    z = la.eigvals(la.lstsq(V[:-1], V[1:])[0])
    lam = np.log(z.astype(complex)) / h
    amplitudes = la.lstsq(np.exp(np.outer(t - t[0], lam)), y.astype(complex))[0]
    return lam, np.linalg.norm(amplitudes, axis=1)


def nearest(poles, target) -> complex:
    return complex(poles[np.argmin(np.abs(poles - target))])


def relative(pole, target) -> list[float]:
    """[Re/Re − 1, Im/Im − 1] of a pole against a target."""
    return [float(pole.real / target.real - 1.0), float(pole.imag / target.imag - 1.0)]


def run_numbers(res, cmp, amplitude, grid, target, delayed, order) -> dict:
    """(a) the deviation from the linear prediction; (b), (c) the measured pole nearest ``target``."""
    dtau = cmp["tau_sim"] - cmp["tau_lin"]
    swing = float(np.abs(cmp["tau_lin"] - cmp["tau_hold"]).max())
    pole = nearest(measured_poles(grid, cmp["y_sim"], order)[0], target)
    pole_lin = nearest(measured_poles(grid, cmp["y_lin"], order)[0], target)
    s = res.metadata["statistics"]
    return {
        "amplitude": amplitude,
        "tip_deviation_over_amplitude": float(np.abs(cmp["y_sim"] - cmp["y_lin"]).max() / amplitude),
        "torque_swing": swing,
        "torque_deviation_over_swing": float(np.abs(dtau).max() / swing) if swing else 0.0,
        "measured_pole": [pole.real, pole.imag],
        "target_pole": [target.real, target.imag],
        "delayed_pole": [delayed.real, delayed.imag],
        "pole_vs_target": relative(pole, target),
        "pole_vs_delayed": relative(pole, delayed),
        "pencil_on_linear_prediction": relative(pole_lin, target),
        "measured_damping_ratio": damping_ratio(pole),
        "target_damping_ratio": damping_ratio(target),
        "measured_frequency_hz": pole.imag / (2 * np.pi),
        "tip_at_end": float(np.abs(cmp["y_sim"][-1]).max()),
        "steps": int(s["steps"]),
        "rejected": int(s["rejected"]),
        "newton_iterations": int(s["newton_iterations"]),
        "max_violation": float(res.histories["violation"].max()),
        "wall_seconds": float(s["wall_seconds"]),
    }


# ------------------------------------------------------------------------------------ outputs
def plot(path, grid, runs, open_poles, closed_poles, measured) -> None:
    fig, (ax, bx, cx) = fb.plots.subplots(3, 1, figsize=(8, 10))
    for label, cmp, amplitude, color in runs:
        ax.plot(grid, cmp["y_sim"][:, 1] / amplitude, color=color, label=f"{label}, flexbody")
        ax.plot(grid, cmp["y_lin"][:, 1] / amplitude, color="k", ls=":", lw=1)
        if label.startswith("closed"):
            for j, style in enumerate(("-", "--")):
                bx.plot(
                    grid,
                    cmp["tau_sim"][:, j] - cmp["tau_hold"][j],
                    ls=style,
                    color=color,
                    label=f"joint {j + 1}, {label}",
                )
                bx.plot(grid, cmp["tau_lin"][:, j] - cmp["tau_hold"][j], color="k", ls=":", lw=1)
    ax.plot([], [], color="k", ls=":", label="linear model: exp(At)x₀, exp((A − BK)t)x₀")
    ax.set_ylabel("tip deviation z / amplitude [-]")
    ax.set_title("beam deflected along its first bending mode: open vs closed loop", fontsize=10)
    bx.plot([], [], color="k", ls=":", label="linear model: −K exp((A − BK)t)x₀")
    bx.set_ylabel("joint torque − holding torque [N·m]")
    for a in (ax, bx):
        a.set_xlabel("t [s]")
    for poles, style, label in ((open_poles, "o", "open loop (A)"), (closed_poles, "x", "closed loop (A − BK)")):
        lam = poles[(poles.imag >= 0) & (np.abs(poles) < 200.0)]
        cx.plot(lam.real, lam.imag / (2 * np.pi), style, mfc="none", label=label)
    cx.plot(
        [m.real for m in measured],
        [m.imag / (2 * np.pi) for m in measured],
        "k+",
        ms=12,
        label="measured from the tip signal (matrix pencil)",
    )
    cx.set_xlabel("Re λ [1/s]")
    cx.set_ylabel("Im λ / 2π [Hz]")
    for a in (ax, bx, cx):
        a.grid(alpha=0.3)
        a.legend(fontsize=7)
    fb.plots.save(fig, path, dpi=120)


def summary_text(s) -> str:
    lines = [
        f"Case 23: LQR for the flexible arm: {s['n_dofs']} coordinates, {s['n_constraints']} rows, linear "
        f"model of {s['n_states']} states; holding torques {np.round(s['holding_torques'], 4).tolist()} N·m",
        "mode  f [Hz]     role             zeta open    zeta closed (MAC)   open pole -> closed pole [1/s]",
    ]
    for r in s["modes"]:
        lines.append(
            f"{r['mode']:<5} {r['frequency_hz']:<10.5f} {r['role']:<16} {r['open_damping_ratio']:<12.4e} "
            f"{r['closed_damping_ratio']:.4f} ({r['closed_mac']:.3f})      {r['open_pole'][0]:.4f}"
            f"{r['open_pole'][1]:+.4f}j -> {r['closed_pole'][0]:.4f}{r['closed_pole'][1]:+.4f}j"
        )
    for key, n in s["runs"].items():
        delayed = (
            ""
            if key == "open_loop"
            else (f", vs the one-step-delayed {n['pole_vs_delayed'][0]:+.3e} {n['pole_vs_delayed'][1]:+.3e}")
        )
        lines.append(
            f"{key}: amplitude {n['amplitude']} m: max|y - y_lin|/amplitude "
            f"{n['tip_deviation_over_amplitude']:.4e}, torque deviation/swing "
            f"{n['torque_deviation_over_swing']:.3e} (swing {n['torque_swing']:.3f} N·m); measured pole "
            f"{n['measured_pole'][0]:.4f}{n['measured_pole'][1]:+.4f}j, vs the eigenvalue "
            f"{n['pole_vs_target'][0]:+.3e} (Re) {n['pole_vs_target'][1]:+.3e} (Im){delayed}; zeta "
            f"{n['measured_damping_ratio']:.5f} (eigenvalue {n['target_damping_ratio']:.5f}); "
            f"{n['steps']} steps, {n['rejected']} rejected, {n['wall_seconds']:.1f} s"
        )
    c = s["runs"]["open_loop"]
    lines += [
        f"open loop: measured {c['measured_frequency_hz']:.5f} Hz vs modal {s['first_beam_frequency_hz']:.5f} Hz"
        f" ({s['open_frequency_vs_modal']:+.3e}); zeta {c['measured_damping_ratio']:.5f}, beta*omega/2 = "
        f"{s['modes'][s['first_beam_mode']]['elastic_damping_ratio']:.5f}"
    ]
    if s["deviation_ratio"] is not None:
        lines.append(f"(a) deviation ratio {s['deviation_ratio']:.4f} for amplitude ratio {s['amplitude_ratio']:.4f}")
    sec = s["seconds"]
    lines.append(
        f"time: model {sec['model']:.1f} s, LQR {sec['lqr']:.1f} s, runs {sec['runs']:.1f} s, total "
        f"{sec['total']:.1f} s"
    )
    return "\n".join(lines)


def main(
    out_dir="out/23_flexible_arm_lqr",
    lengths=LENGTHS,
    masses=MASSES,
    beam_size=BEAM_SIZE,
    young=YOUNG,
    poisson=POISSON,
    density=DENSITY,
    damping=DAMPING,
    gravity=GRAVITY,
    q0=Q0,
    order=ORDER,
    divisions=DIVISIONS,
    n_modes=N_MODES,
    tip_ref=TIP_REF,
    tip_rate=TIP_RATE,
    torque_ref=TORQUE_REF,
    amplitudes=AMPLITUDES,
    dt=DT,
    t_end=T_END,
    newton_tol=NEWTON_TOL,
    max_iterations=MAX_ITERATIONS,
    sample=SAMPLE,
    pencil_order=PENCIL_ORDER,
    vtk_every=VTK_EVERY,
    context=None,
) -> dict:
    """Model, LQR design, open- and closed-loop runs; writes the outputs and returns the summary."""
    clock = time.perf_counter()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    asm = build(lengths, masses, beam_size, young, poisson, density, damping, gravity, q0, order, divisions).assemble()
    u, eq, modes, tip, lin = linear_model(asm, n_modes)
    p = lin.metadata["p"]
    table = classify(lin, modes)
    first = next(r["mode"] for r in table if r["role"] == "beam bending 1")
    t_model = time.perf_counter()
    K = lqr(lin, tip_ref, tip_rate, torque_ref)
    t_lqr = time.perf_counter()
    BK = lin.B[:, :2] @ K
    w_open, V_open = la.eig(lin.A)
    w_closed, W_closed, V_closed = la.eig(lin.A - BK, left=True, right=True)
    for row, (jo, _), (jc, mac) in zip(
        table, matched_poles(lin, modes, w_open, V_open), matched_poles(lin, modes, w_closed, V_closed)
    ):
        lo, lc = w_open[jo], w_closed[jc]
        row.update(
            open_pole=[lo.real, lo.imag],
            open_damping_ratio=damping_ratio(lo),
            closed_pole=[lc.real, lc.imag],
            closed_damping_ratio=damping_ratio(lc),
            closed_mac=mac,
            closed_index=int(jc),
            elastic_damping_ratio=float(damping * np.pi * row["frequency_hz"]),
        )  # β ω / 2
    target_open = complex(*table[first]["open_pole"])
    jc = table[first]["closed_index"]
    target_closed = complex(w_closed[jc])
    delayed = delayed_pole(w_closed[jc], V_closed[:, jc], W_closed[:, jc], BK, dt)
    x_unit = disturbance(lin, modes, first)

    grid = np.arange(0.0, t_end + 0.5 * sample, sample)
    grid = grid[grid <= t_end + 1e-12]
    amplitudes = tuple(float(a) for a in amplitudes)
    small = min(amplitudes)
    results, runs, numbers = {}, [], {}
    every = max(1, round(sample / dt))  # record on the comparison grid
    res = run(asm, lin, small * x_unit, None, dt, t_end, newton_tol, max_iterations, every, context)
    cmp = compare(asm, lin, tip, res, lin.A, None, grid)
    numbers["open_loop"] = run_numbers(res, cmp, small, grid, target_open, target_open, pencil_order)
    results["open_loop"] = res
    runs.append((f"open loop {small * 1e3:g} mm", cmp, small, "tab:red"))
    colors = ("tab:blue", "tab:green", "tab:purple", "tab:olive")
    for k, a in enumerate(amplitudes, start=1):
        res = run(asm, lin, a * x_unit, K, dt, t_end, newton_tol, max_iterations, every, context)
        cmp = compare(asm, lin, tip, res, lin.A - BK, K, grid)
        numbers[f"closed_loop_{k}"] = run_numbers(res, cmp, a, grid, target_closed, delayed, pencil_order)
        results[f"closed_loop_{k}"] = res
        runs.append((f"closed loop {a * 1e3:g} mm", cmp, a, colors[(k - 1) % len(colors)]))
    t_runs = time.perf_counter()

    for name, res in results.items():
        res.save(out / name)
        if vtk_every:
            fb.io.write_pvd(out / name, res, every=vtk_every)
    columns = {}
    for (_, cmp, _, _), key in zip(runs, results):
        columns.update(
            {
                f"{key}_tip_dx": cmp["y_sim"][:, 0],
                f"{key}_tip_dz": cmp["y_sim"][:, 1],
                f"{key}_linear_tip_dx": cmp["y_lin"][:, 0],
                f"{key}_linear_tip_dz": cmp["y_lin"][:, 1],
                f"{key}_tau1": cmp["tau_sim"][:, 0],
                f"{key}_tau2": cmp["tau_sim"][:, 1],
                f"{key}_linear_tau1": cmp["tau_lin"][:, 0],
                f"{key}_linear_tau2": cmp["tau_lin"][:, 1],
            }
        )
    fb.io.write_columns_csv(out / "histories.csv", grid, columns)
    plot(out / "lqr.png", grid, runs, w_open, w_closed, [complex(*n["measured_pole"]) for n in numbers.values()])

    devs = [numbers[f"closed_loop_{k}"]["tip_deviation_over_amplitude"] for k in range(1, len(amplitudes) + 1)]
    f_modal = float(modes.frequencies[first])
    summary = {
        "n_dofs": int(asm.n_dofs),
        "n_constraints": int(asm.n_constraints),
        "p": int(p),
        "n_states": int(2 * p),
        "holding_torques": u.tolist(),
        "static_residual": float(eq.residual),
        "tip_node": int(tip.index),
        "tip_equilibrium_xz": lin.q[tip_columns(asm, tip)].tolist(),
        "modes": table,
        "first_beam_mode": int(first),
        "first_beam_frequency_hz": f_modal,
        "open_frequency_vs_modal": float(numbers["open_loop"]["measured_frequency_hz"] / f_modal - 1.0),
        "open_loop_max_real": float(w_open.real.max()),
        "closed_loop_max_real": float(w_closed.real.max()),
        "delay_shift": relative(delayed, target_closed),
        "runs": numbers,
        "deviation_ratio": float(devs[0] / devs[1]) if len(devs) > 1 else None,
        "amplitude_ratio": float(amplitudes[0] / amplitudes[1]) if len(amplitudes) > 1 else None,
        "parameters": {
            "q0": list(q0),
            "divisions": list(divisions),
            "order": order,
            "damping": damping,
            "tip_ref": tip_ref,
            "tip_rate": tip_rate,
            "torque_ref": torque_ref,
            "amplitudes": list(amplitudes),
            "dt": dt,
            "t_end": t_end,
            "newton_tol": newton_tol,
            "max_iterations": max_iterations,
            "sample": sample,
            "pencil_order": pencil_order,
        },
    }
    summary["seconds"] = {
        "model": t_model - clock,
        "lqr": t_lqr - t_model,
        "runs": t_runs - t_lqr,
        "total": time.perf_counter() - clock,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    (out / "summary.txt").write_text(summary_text(summary) + "\n")
    return summary


if __name__ == "__main__":
    main()
