"""Case 20: a knife-edge sleigh — a velocity-level (Pfaffian) constraint, coasting and steered.

Problem: a rigid body on the horizontal plane (prismatic x, y of its knife edge, revolute yaw ψ), mass m = 2 kg,
radius of gyration 0.15 m about its centre of mass (I = 0.045 kg·m²) a = 0.3 m ahead of the edge. The edge may
not slide sideways: one :class:`fb.KnifeEdge` row A(q) q̇ = −sin ψ ẋ + cos ψ ẏ = 0, a Pfaffian constraint
[MR, LP] on velocities, not positions. u = cos ψ ẋ + sin ψ ẏ is the edge's forward speed, ω = ψ̇.

1. Coasting (no input), the Chaplygin sleigh: from ψ₀ = 0.2 rad, ω₀ = 2 rad/s and u₀ = ω₀ R₀ = 0.4 m/s the
   equations u̇ = a ω², ω̇ = −m a u ω / I_c (I_c = I + m a²) conserve E = (m u² + I_c ω²)/2 and have the
   closed form
       u = V tanh(kt + c₀),   ω = sgn(ω₀) V √(m/I_c) sech(kt + c₀),
       ψ = ψ₀ + sgn(ω₀) V √(m/I_c)/k (gd(kt + c₀) − gd(c₀)),
   V = √(2E/m), k = m a V / I_c, c₀ = atanh(u₀/V), gd the Gudermannian: u → V = 0.781025 m/s. Expected over
   5 s (tests/test_case_20_knife_edge_sleigh.py): RK4 at 5 ms (projection form, velocity projection after each
   step) within 1e-9 of u, ω and ψ with ‖A q̇‖ at round-off; generalized-α at 2 ms (second order) within 5e-6.

2. Steering with the projected inverse-dynamics controller [LP, AG-43..46]: the point P a distance
   d = 0.5 m ahead of the edge tracks the figure-eight x_d = A sin Ωt, y_d = (A/2) sin 2Ωt (A = 1 m,
   Ω = 0.5 rad/s, one period 4π s, ``fb.control.Trajectory`` with exact derivatives). For d ≠ 0 P's velocity
   is an invertible function of the two admissible velocities (u, ω): J̌ = [J_P; A] has full rank (singular
   values 1.46, 1, 0.342; ``flexbody info`` prints the actuation report of ``task``), while for the edge point
   itself (d = 0) it has rank 2 < 3 (1.41, 1, 0) and the controller refuses that task (``fb.ActuationError``).
   All three coordinates are actuated (S = I), but the PIDC input f∥ = P_AG(M u_p + h), P_AG = I − A⁺A
   [AG-43], satisfies A f∥ = 0: a thrust along the heading plus a steering torque, as on a real sleigh.
   With the exact model the task error
   e = x_d − x_P obeys ë + K_V ė + K_P e = 0 (K_P = 16 1/s², K_V = 4 1/s: ζ = 0.5), whose solution from
   e₀ = (−0.1, 0.3) m, ė₀ = ẋ_d(0) = (0.5, 0.5) m/s (start at rest, edge at (−0.4, −0.3) m heading +x) is
       e(t) = e^(−ζω_n t) [e₀ cos ω_d t + (ė₀ + ζω_n e₀)/ω_d sin ω_d t],   ω_d = ω_n √(1 − ζ²).
   Expected over one period with RK4 at 4 ms: the error within 1e-9 m of the closed form, ‖A q̇‖ at
   round-off. tests/test_case_20_knife_edge_sleigh.py also checks, along the recorded run, [LP]'s relation
   P τ = P (M q̈ + h), Aghili's τ = P_AG (M q̈ + h) [AG-21, AG-43], and that τ + Aᵀλ gives the same motion;
   docs/verification.md ("Case 20") records the numbers measured.

Sources: [MR] and [LP] (seeds 001, 003: Pfaffian constraints, P = I − Aᵀ(AM⁻¹Aᵀ)⁻¹AM⁻¹); [AG] = Aghili 2005
(seeds 004), PIDC [AG-43..46]; the Chaplygin sleigh (Chaplygin 1911; Bloch, *Nonholonomic Mechanics and
Control*, Springer 2003), integrated in elementary functions (as in tests/test_pfaffian.py).

Outputs in out_dir: coasting_rk4/ and steering/ (Results.save and histories.csv each; steering/ also a
ParaView series of the sleigh, sleigh.pvd), knife_edge_sleigh.png ((A) the paths of the edge and of P against
the figure-eight, (B) the task error against its closed form, (C) the inputs,
(D) the coasting u, ω, ψ) and summary.txt (JSON of the returned summary).
"""

import json
from pathlib import Path

import numpy as np

import flexbody as fb

MASS = 2.0  # kg, mass m of the sleigh
GYRATION_RADIUS = 0.15  # m, radius of gyration ρ about the centre of mass (I = m ρ² = 0.045 kg·m²)
COM_AHEAD = 0.3  # m, a: the centre of mass is this far ahead of the knife edge
HEADING0 = 0.2  # rad, coasting: initial heading ψ₀
YAW_RATE0 = 2.0  # rad/s, coasting: initial yaw rate ω₀
TURN_RADIUS0 = 0.2  # m, coasting: R₀ = u₀/ω₀ (instantaneous centre on the edge's lateral axis), u₀ = 0.4 m/s
COAST_T_END = 5.0  # s, coasting: end time
COAST_DT = 5e-3  # s, coasting: RK4 step
LOOKAHEAD = 0.5  # m, d: the tracked point P is this far ahead of the edge
PATH_SIZE = 1.0  # m, A: figure-eight x_d = A sin Ωt, y_d = (A/2) sin 2Ωt
PATH_RATE = 0.5  # rad/s, Ω: one figure-eight takes 2π/Ω
KP = 16.0  # 1/s², task position gain K_P
KV = 4.0  # 1/s, task velocity gain K_V
START_X = -0.4  # m, steering: initial x of the edge (at rest)
START_Y = -0.3  # m, steering: initial y of the edge
START_HEADING = 0.0  # rad, steering: initial heading
STEER_PERIODS = 1.0  # -, steering: number of figure-eight periods simulated
STEER_DT = 4e-3  # s, steering: RK4 step


def build(mass=MASS, gyration_radius=GYRATION_RADIUS, com_ahead=COM_AHEAD, q0=(0.0, 0.0, HEADING0)) -> fb.System:
    """The sleigh: coordinates (x, y) of the edge [m] and heading ψ [rad], all actuated; one knife-edge row
    at the frame origin blocking the body's y direction."""
    tree = fb.RigidTree("sleigh", gravity=(0.0, 0.0, -9.81))  # gravity is normal to the plane
    x = tree.add_link("x", None, fb.Prismatic((1, 0, 0)))
    y = tree.add_link("y", x, fb.Prismatic((0, 1, 0)))
    izz = mass * gyration_radius**2
    body = tree.add_link(
        "body", y, fb.Revolute((0, 0, 1)), mass=mass, com=(com_ahead, 0, 0), inertia=(0.2 * izz, 0.8 * izz, izz)
    )  # about the centre of mass
    knife = fb.KnifeEdge(tree.frame(body), axis=(0, 1, 0), name="knife")
    return fb.System([tree], [knife], q0=list(q0))


def point_task(asm, offset, name="P") -> fb.PointTask:
    """The (x, y) of the body point ``offset`` [m] ahead of the edge, as a task on the assembled system."""
    tree = asm.trees[0]
    return fb.PointTask(tree.point(tree.link("body"), (offset, 0.0, 0.0)), components=(0, 1), name=name)


def task(asm, lookahead=LOOKAHEAD) -> dict:
    """The case's task and the one it cannot use (for ``flexbody info``): P ahead of the edge, and the edge
    point itself (its J̌ = [J; A] is rank-deficient)."""
    return {"P": point_task(asm, lookahead, "P"), "edge": point_task(asm, 0.0, "edge")}


def error_closed_form(t, e0, edot0, kp=KP, kv=KV) -> np.ndarray:
    """e(t) (s, m) of ë + K_V ė + K_P e = 0 from e(0) = e0, ė(0) = edot0 (m,) for scalar gains."""
    t = np.asarray(t, dtype=float)[:, None]
    e0, edot0 = np.asarray(e0, dtype=float)[None, :], np.asarray(edot0, dtype=float)[None, :]
    sigma = kv / 2.0
    disc = sigma**2 - kp
    if abs(disc) <= 1e-12 * kp:  # critically damped
        return np.exp(-sigma * t) * (e0 + (edot0 + sigma * e0) * t)
    if disc < 0.0:  # under-damped
        wd = np.sqrt(-disc)
        return np.exp(-sigma * t) * (e0 * np.cos(wd * t) + (edot0 + sigma * e0) / wd * np.sin(wd * t))
    r1, r2 = -sigma + np.sqrt(disc), -sigma - np.sqrt(disc)  # over-damped
    c1 = (edot0 - r2 * e0) / (r1 - r2)
    return c1 * np.exp(r1 * t) + (e0 - c1) * np.exp(r2 * t)


def figure_eight(size=PATH_SIZE, rate=PATH_RATE) -> "fb.control.Trajectory":
    """P's reference x_d(t) = (A sin Ωt, (A/2) sin 2Ωt) [m] with its exact first and second derivatives."""
    A, W = size, rate
    return fb.control.Trajectory(
        lambda t: np.array([A * np.sin(W * t), 0.5 * A * np.sin(2 * W * t)]),
        lambda t: np.array([A * W * np.cos(W * t), A * W * np.cos(2 * W * t)]),
        lambda t: np.array([-A * W**2 * np.sin(W * t), -2 * A * W**2 * np.sin(2 * W * t)]),
    )


def forward_speed(q, v) -> tuple[np.ndarray, np.ndarray]:
    """(u, lateral) (s,) each: the edge's velocity along and across the heading [m/s]."""
    c, s = np.cos(q[:, 2]), np.sin(q[:, 2])
    return c * v[:, 0] + s * v[:, 1], -s * v[:, 0] + c * v[:, 1]


# ------------------------------------------------------------------ runs
def coast(asm, t_end, integrator, u0, w0, psi0, context=None):
    """Simulate the coasting sleigh from heading psi0, forward speed u0 [m/s], yaw rate w0 [rad/s]: (results,
    numbers, columns)."""
    v0 = np.array([u0 * np.cos(psi0), u0 * np.sin(psi0), w0])
    res = fb.simulate(asm, t_end, integrator=integrator, v0=v0, context=context)
    u, lateral = forward_speed(res.q, res.v)
    energy, violation = res.histories["energy"], res.histories["velocity_violation"]
    numbers = {
        "velocity_violation": float(violation.max()),
        "energy_drift": float(np.abs(energy - energy[0]).max()),
        "u_end": float(u[-1]),
        "omega_end": float(res.v[-1, 2]),
        "n_steps": int(res.n_steps),
    }
    columns = dict(zip(("x", "y", "psi"), res.q.T)) | {"u": u, "omega": res.v[:, 2], "lateral_velocity": lateral}
    columns |= {"energy": energy, "velocity_violation": violation, "lam": res.histories["lam"][:, 0]}
    return res, numbers, columns


def steer(asm, t_end, dt, lookahead, kp, kv, reference, context=None):
    """Track the reference with PIDC from the system's q0 at rest: (results, e₀ (2,), ė₀ (2,), the closed-form
    error (s, 2))."""
    tracked = point_task(asm, lookahead)
    control = fb.control.ProjectedInverseDynamicsControl(tracked, reference, kp, kv)
    res = fb.simulate(
        asm, t_end, integrator=fb.RK4(dt=dt), controller=control, v0=np.zeros(asm.n_dofs), context=context
    )
    xdot = fb.task_history(asm, tracked, res)[1]
    e0 = res.histories["task_error"][0]
    edot0 = reference(res.times[0])[1] - xdot[0]
    return res, e0, edot0, error_closed_form(res.times - res.times[0], e0, edot0, kp, kv)


def plot(path, res_c, cols_c, res_s, e_cf, inputs) -> None:
    """The paths, the task error (against its closed form), the inputs of the steered run; the coasting sleigh."""
    P, desired, e = (res_s.histories[k] for k in ("task_x", "task_desired", "task_error"))
    t, tc = res_s.times, res_c.times
    paths = {"reference (figure-eight)": desired.T, "P": P.T, "knife edge": res_s.q[:, :2].T}
    error = {f"e_{c}": (t, e[:, j]) for j, c in enumerate("xy")}
    error_cf = {f"e_{c} closed form": (t, e_cf[:, j]) for j, c in enumerate("xy")}
    coasting = {f"{k} [{unit}]": (tc, cols_c[k]) for k, unit in (("u", "m/s"), ("omega", "rad/s"), ("psi", "rad"))}
    panels = [
        {"ylabel": "y [m]", "xlabel": "x [m]", "curves": paths, "equal": True, "title": "(A) paths"},
        {"ylabel": "e = x_d − x_P [m]", "curves": error, "references": error_cf, "title": "(B) task error"},
        {"ylabel": "PIDC input [N or N·m]", "curves": {k: (t, v) for k, v in inputs.items()}, "title": "(C) inputs"},
        {"ylabel": "u, ω, ψ [m/s, rad/s, rad]", "curves": coasting, "title": "(D) coasting"},
    ]
    title = "Case 20: knife-edge sleigh, coasting and PIDC steering"
    fb.plots.plot_curves(path, panels, columns=2, size=(6.5, 4.0), title=title)


def main(
    out_dir="out/20_knife_edge_sleigh",
    mass=MASS,
    gyration_radius=GYRATION_RADIUS,
    com_ahead=COM_AHEAD,
    heading0=HEADING0,
    yaw_rate0=YAW_RATE0,
    turn_radius0=TURN_RADIUS0,
    coast_t_end=COAST_T_END,
    coast_dt=COAST_DT,
    lookahead=LOOKAHEAD,
    path_size=PATH_SIZE,
    path_rate=PATH_RATE,
    kp=KP,
    kv=KV,
    start_x=START_X,
    start_y=START_Y,
    start_heading=START_HEADING,
    steer_periods=STEER_PERIODS,
    steer_dt=STEER_DT,
    context=None,
) -> dict:
    """Run the coasting sleigh and the steered one, write the outputs, return the measured numbers."""
    out = Path(out_dir)
    shape = {"mass": mass, "gyration_radius": gyration_radius, "com_ahead": com_ahead}
    u0, w0 = yaw_rate0 * turn_radius0, yaw_rate0
    coast_asm = build(**shape, q0=(0.0, 0.0, heading0)).assemble()
    res_c, rk4, cols_c = coast(coast_asm, coast_t_end, fb.RK4(dt=coast_dt), u0, w0, heading0, context)
    res_c.save(out / "coasting_rk4")
    fb.io.write_columns_csv(out / "coasting_rk4" / "histories.csv", res_c.times, cols_c)
    coasting = {"rk4": rk4, "u0": u0, "omega0": w0, "dt": coast_dt, "t_end": coast_t_end}
    Ic = mass * gyration_radius**2 + mass * com_ahead**2
    coasting["terminal_speed"] = float(np.sqrt((mass * u0**2 + Ic * w0**2) / mass))  # V = √(2E/m)

    steer_asm = build(**shape, q0=(start_x, start_y, start_heading)).assemble()
    t_end = steer_periods * 2 * np.pi / path_rate
    reference = figure_eight(path_size, path_rate)
    res_s, e0, edot0, e_cf = steer(steer_asm, t_end, steer_dt, lookahead, kp, kv, reference, context)
    e, tau = res_s.histories["task_error"], res_s.histories["tau"]
    c, s = np.cos(res_s.q[:, 2]), np.sin(res_s.q[:, 2])
    thrust, lateral = c * tau[:, 0] + s * tau[:, 1], -s * tau[:, 0] + c * tau[:, 1]
    inputs = {"thrust F along the heading": thrust, "lateral force": lateral, "steering torque τ_ψ": tau[:, 2]}
    edge_speed = forward_speed(res_s.q, res_s.v)[0]
    res_s.save(out / "steering")
    fb.io.write_link_pvd(out / "steering", res_s, every=max(1, res_s.n_steps // 60))
    fb.io.write_histories_csv(out / "steering" / "histories.csv", res_s)
    plot(out / "knife_edge_sleigh.png", res_c, cols_c, res_s, e_cf, inputs)

    steering = {
        "e0": e0.tolist(),
        "edot0": edot0.tolist(),
        "max_deviation_from_closed_form": float(np.linalg.norm(e - e_cf, axis=1).max()),
        "final_error": float(np.linalg.norm(e[-1])),
        "final_error_closed_form": float(np.linalg.norm(e_cf[-1])),
        "max_velocity_violation": float(res_s.histories["velocity_violation"].max()),
        "peak_tau": np.abs(tau).max(axis=0).tolist(),
        "rms_tau": np.sqrt(np.mean(tau**2, axis=0)).tolist(),
        "peak_thrust": float(np.abs(thrust).max()),
        "peak_lateral_force": float(np.abs(lateral).max()),
        "edge_speed_range": [float(edge_speed.min()), float(edge_speed.max())],
        "actuated": list(steer_asm.actuated_labels),
        "n_steps": int(res_s.n_steps),
    }
    summary = {"coasting": coasting, "steering": steering}
    (out / "summary.txt").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


if __name__ == "__main__":
    main()
