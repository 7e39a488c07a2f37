"""Case 23: an LQR for the flexible arm of case 14, designed with scipy on flexbody's linear model and run
in flexbody on the nonlinear system.

Problem: the arm of case 14 (``fb.mechanisms.arm_with_beam``: rods 0.5 and 0.4 m, 2.0 and 1.0 kg, revolute
joints about y, both actuated, in the vertical xz-plane; beam 0.6 × 0.04 × 0.04 m, E 7e7 Pa, ν 0.3, ρ 2700
kg/m³, attached by its face x = 0 to the flange of link 2; gravity 9.81 m/s² along −z), with Kelvin–Voigt
damping β = DAMPING in the beam, 27-node elements 4 × 1 × 1: 245 coordinates and 27 attachment rows, a linear
model of p = 218 coordinates on the constraint's tangent space and 2p = 436 states. The posture Q0 hangs below
the horizontal, where the holding torques alone leave a stable equilibrium (at case 14's q0 they do not).

1. Model. ``fb.holding_inputs`` gives the torques u* that hold Q0, ``fb.modal_analysis(tau=u*)`` the open-loop
   modes, ``fb.linearize(inputs=u*, outputs=[tip])`` the model ẋ = A x + B δu, y = C x about that
   equilibrium, y the centre node of the beam's free face. Modes whose tip leaves the xz-plane (bending along
   y, torsion) are uncontrollable by joints about y and keep their material damping. The two lowest in-plane
   modes are the arm's swings, the third is the beam's first bending: the disturbance is the beam deflected
   along it, at rest, its tip displaced by AMPLITUDES.
2. Design (``fb.control.lqr_gain``), Bryson's rule on what one sees of the vibration: J = ∫ |y_xz|²/TIP_REF²
   + |ẏ_xz|²/(TIP_RATE TIP_REF)² + |δτ|²/TORQUE_REF² dt, independent of the mesh; TIP_RATE lies between the
   arm's swings (2.5 and 7.7 rad/s) and the beam's first bending (43 rad/s), so that both are damped. Each
   closed-loop eigenvalue is matched to an open-loop mode by the MAC of its displacement part.
3. Runs (``fb.GeneralizedAlpha(dt=DT, rho_inf=1, tol=NEWTON_TOL)``, MAX_ITERATIONS so that no step is
   rejected): open loop (the holding torques only) from the smaller amplitude, closed loop
   (``fb.control.StateFeedback(lin, K)``: τ = u* − K x) from each amplitude, recorded every SAMPLE s.

Expected: the closed-loop tip deviation follows the linear prediction C exp((A − BK)t)x₀ to first order in the
amplitude (max_t |y − y_lin| ≤ 5 % of 1 cm), the closed-loop vibration decays at the designed rate and the open
loop vibrates at the modal frequency with the material damping. tests/test_case_23_flexible_arm_lqr.py checks
this against exp(At)x₀ and the poles measured from the tip signal alone (matrix pencil, Hua & Sarkar, IEEE
Trans. ASSP 38 (1990) 814–824), up to the integrator's one-step input delay (δλ = λ Δt wᴴBKv / wᴴv).

Measured (defaults; docs/verification.md, "Case 23"): holding torques (−30.0939, −16.0929) N·m; open-loop modes
0.39056, 1.23242 Hz (arm swings), 2.95710 (out of plane), 6.82452 (beam bending 1), 17.90820, 24.98791 (beam
bending 2), 41.61002, 49.76627 Hz; damping ratios open → closed loop: arm swings 1.5e-7 → 0.640 and 2.9e-5 → 0.827,
beam bending 1 0.0206 → 0.3316, beam bending 2 0.0780 → 0.1161; out of plane unchanged.

Outputs in out_dir: open_loop/, closed_loop_1/, closed_loop_2/ (Results.save of the runs, closed_loop_k from
the k-th amplitude, recorded every SAMPLE s, with beam.pvd + .vtu every VTK_EVERY records for ParaView),
histories.csv (on the SAMPLE grid: the tip deviation x, z of each run, the joint torques), lqr.png (the tip
response open vs closed loop, the torques, the eigenvalues), summary.json (the returned summary) and
summary.txt (the modes with their poles and damping ratios).
"""

import json
from pathlib import Path

import numpy as np
import scipy.linalg as la
from scipy.interpolate import CubicSpline

import flexbody as fb

LENGTHS = (0.5, 0.4)  # m, links l1, l2 (the arm of case 14)
MASSES = (2.0, 1.0)  # kg, links l1, l2 (uniform rods)
BEAM_SIZE = (0.6, 0.04, 0.04)  # m, beam (L, b, h)
YOUNG = 7e7  # Pa, Young's modulus of the beam
POISSON = 0.3  # -, Poisson's ratio of the beam
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
SAMPLE = 2e-3  # s, spacing of the records and compared histories (comparisons, CSV)
VTK_EVERY = 5  # -, ParaView frame every this many recorded states (0: none)


def build(damping=DAMPING, q0=Q0, divisions=DIVISIONS, order=ORDER, young=YOUNG, gravity=GRAVITY) -> fb.System:
    """The arm of case 14 with its damped beam at q0 (joints actuated, free)."""
    return fb.mechanisms.arm_with_beam(
        lengths=LENGTHS,
        masses=MASSES,
        beam_size=BEAM_SIZE,
        divisions=tuple(divisions),
        order=order,
        young=young,
        poisson=POISSON,
        density=DENSITY,
        damping=damping,
        q0=tuple(q0),
        gravity=(0.0, 0.0, -gravity),
    )


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
    p, rows, in_plane = lin.metadata["p"], [], 0
    for k, f in enumerate(modes.frequencies):
        y = lin.C[:, :p] @ (lin.basis.T @ modes.shapes[k])  # tip displacement (x, y, z)
        planar = bool(abs(y[1]) < 1e-3 * np.linalg.norm(y))
        role = ("arm swing" if in_plane < 2 else f"beam bending {in_plane - 1}") if planar else "out of plane"
        in_plane += planar
        rows.append({"mode": k, "frequency_hz": float(f), "in_plane": planar, "role": role})
    return rows


def disturbance(lin, modes, k) -> np.ndarray:
    """x (2p,): the beam along mode k at rest, scaled to a unit in-plane tip deflection (the tip moving up)."""
    p = lin.metadata["p"]
    z = lin.basis.T @ modes.shapes[k]
    y = lin.C[[0, 2], :p] @ z
    return np.concatenate([z * np.sign(y[1]) / np.linalg.norm(y), np.zeros(p)])


def lqr(lin, tip_ref, tip_rate, torque_ref) -> np.ndarray:
    """K (2, 2p) for Q = C_xzᵀC_xz/tip_ref² + C_vᵀC_v/(tip_rate tip_ref)², R = I/torque_ref²."""
    p = lin.metadata["p"]
    C_xz = lin.C[[0, 2]]
    C_v = np.hstack([np.zeros((2, p)), C_xz[:, :p]])
    Q = C_xz.T @ C_xz / tip_ref**2 + C_v.T @ C_v / (tip_rate * tip_ref) ** 2
    return fb.control.lqr_gain(lin, Q, np.full(2, 1.0 / torque_ref**2))


def matched_poles(lin, modes, w, V) -> list[tuple[int, float]]:
    """Per open-loop mode: (index of the eigenvalue (Im ≥ 0) whose eigenvector's displacement is most like it, MAC)."""
    Vz = V[: lin.metadata["p"]]
    norms = np.einsum("ij,ij->j", Vz.conj(), Vz).real
    out = []
    for x in modes.shapes:
        z = lin.basis.T @ x
        mac = np.abs(z @ Vz) ** 2 / (z @ z) / norms
        mac[w.imag < -1e-9 * np.abs(w)] = 0.0
        out.append((int(np.argmax(mac)), float(mac.max())))
    return out


def run(asm, lin, x0, gain, dt, t_end, tol, max_iterations, record_every=1, context=None):
    """A run from the state x0 of the linear model: closed loop (``gain`` K) or open loop (gain None)."""
    q0, v0 = lin.coordinates(x0)  # consistent to first order: put on the constraints (the attachment rows) first
    q0 = fb.assemble_configuration(asm, 0.0, q0)
    v0 = fb.project_velocity(asm, 0.0, q0, v0)
    kw = {"controller": fb.control.StateFeedback(lin, gain)} if gain is not None else {"tau": asm.S.T @ lin.u}
    integrator = fb.GeneralizedAlpha(dt=dt, rho_inf=1.0, tol=tol, max_iterations=max_iterations)
    return fb.simulate(
        asm, t_end, integrator=integrator, q0=q0, v0=v0, record_every=record_every, context=context, **kw
    )


def main(
    out_dir="out/23_flexible_arm_lqr",
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
    vtk_every=VTK_EVERY,
    context=None,
    **overrides,
) -> dict:
    """Model, LQR design, open- and closed-loop runs (``overrides``: keywords of :func:`build`); writes the
    outputs and returns the summary."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    asm = build(**overrides).assemble()
    u, eq, modes, tip, lin = linear_model(asm, n_modes)
    table = classify(lin, modes)
    K = lqr(lin, tip_ref, tip_rate, torque_ref)
    w_open, V_open = la.eig(lin.A)
    w_closed, V_closed = la.eig(lin.A - lin.B[:, :2] @ K)
    beta = asm.bodies[0].material.damping
    for row, (jo, _), (jc, mac) in zip(
        table, matched_poles(lin, modes, w_open, V_open), matched_poles(lin, modes, w_closed, V_closed)
    ):
        lo, lc = w_open[jo], w_closed[jc]
        row.update(open_pole=[lo.real, lo.imag], closed_pole=[lc.real, lc.imag], closed_mac=mac)
        row.update(open_damping_ratio=-lo.real / abs(lo), closed_damping_ratio=-lc.real / abs(lc))
        row.update(elastic_damping_ratio=float(beta * np.pi * row["frequency_hz"]))  # β ω / 2
    first = next(r["mode"] for r in table if r["role"] == "beam bending 1")

    grid = np.arange(0.0, t_end + 0.5 * sample, sample)
    grid = grid[grid <= t_end + 1e-12]
    plan = [("open_loop", min(amplitudes), None)] + [(f"closed_loop_{k}", a, K) for k, a in enumerate(amplitudes, 1)]
    numbers, columns, tips, torques = {}, {}, {}, {}
    for name, a, gain in plan:
        x0 = float(a) * disturbance(lin, modes, first)
        res = run(asm, lin, x0, gain, dt, t_end, newton_tol, max_iterations, max(1, round(sample / dt)), context)
        res.save(out / name)
        if vtk_every:
            fb.io.write_pvd(out / name, res, every=vtk_every)
        tau_k = res.histories["tau_k"] if gain is not None else np.tile(u, (len(res.times), 1))
        x = asm.coordinates(tip.body, np.vstack([lin.q, res.q]), nodes=[tip.index])[:, 0, ::2]  # tip x, z
        y, tau = CubicSpline(res.times, x[1:] - x[0])(grid), CubicSpline(res.times, tau_k)(grid)  # on the grid
        stats = res.metadata["statistics"]
        numbers[name] = {
            "amplitude": float(a),
            "tip_at_end": float(np.abs(y[-1]).max()),
            "steps": int(stats["steps"]),
            "rejected": int(stats["rejected"]),
            "max_violation": float(res.histories["violation"].max()),
        }
        columns.update(
            {f"{name}_tip_dx": y[:, 0], f"{name}_tip_dz": y[:, 1], f"{name}_tau1": tau[:, 0], f"{name}_tau2": tau[:, 1]}
        )
        label = f"{name.replace('_', ' ')}, {a * 1e3:g} mm"
        tips[label] = (grid, y[:, 1] / a)
        if gain is not None:
            torques.update({f"joint {j + 1}, {label}": (grid, tau[:, j] - u[j]) for j in (0, 1)})
    fb.io.write_columns_csv(out / "histories.csv", grid, columns)
    eigenvalues = {}
    for label, w in (("open loop (A)", w_open), ("closed loop (A − BK)", w_closed)):
        shown = w[(w.imag >= 0) & (np.abs(w) < 200.0)]
        eigenvalues[label] = (shown.real, shown.imag / (2 * np.pi))
    panels = [
        {"ylabel": "tip deviation z / amplitude [-]", "curves": tips},
        {"ylabel": "joint torque − holding torque [N·m]", "curves": torques},
        {"ylabel": "Im λ / 2π [Hz]", "xlabel": "Re λ [1/s]", "markers": True, "curves": eigenvalues},
    ]
    fb.plots.plot_curves(out / "lqr.png", panels, title="beam deflected along its first bending mode", size=(8, 3.3))
    summary = {
        "n_dofs": int(asm.n_dofs),
        "n_constraints": int(asm.n_constraints),
        "n_states": int(2 * lin.metadata["p"]),
        "holding_torques": u.tolist(),
        "static_residual": float(eq.residual),
        "modes": table,
        "first_beam_mode": int(first),
        "open_loop_max_real": float(w_open.real.max()),
        "closed_loop_max_real": float(w_closed.real.max()),
        "runs": numbers,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    (out / "summary.txt").write_text(json.dumps(summary["modes"], indent=1) + "\n")
    return summary


if __name__ == "__main__":
    main()
