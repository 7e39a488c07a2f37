"""Case 20: a knife-edge sleigh — a velocity-level (Pfaffian) constraint, coasting and steered.

Problem: a rigid body on the horizontal plane (prismatic x, prismatic y, revolute yaw ψ; the coordinates
x, y are those of its knife edge, the frame origin) of mass m = 2 kg, radius of gyration ρ = 0.15 m about
its centre of mass (I = m ρ² = 0.045 kg·m²), centre of mass a = 0.3 m ahead of the edge. The edge may not
slide sideways: one :class:`fb.KnifeEdge` row A(q) q̇ = −sin ψ ẋ + cos ψ ẏ = 0, a Pfaffian constraint
[MR, LP] that constrains velocities and not positions (non-holonomic). u = cos ψ ẋ + sin ψ ẏ is the edge's
forward speed, ω = ψ̇.

1. Coasting (no input), the Chaplygin sleigh: from ψ₀ = 0.2 rad, ω₀ = 2 rad/s and u₀ = ω₀ R₀ = 0.4 m/s
   (R₀ = 0.2 m: the instantaneous centre of rotation starts on the edge's lateral axis 0.2 m to the left)
   the equations u̇ = a ω², ω̇ = −m a u ω / I_c (I_c = I + m a²) conserve E = (m u² + I_c ω²)/2, so
   u̇ = (m a/I_c)(V² − u²) and they have the closed form
       u = V tanh(kt + c₀),   ω = sgn(ω₀) V √(m/I_c) sech(kt + c₀),
       ψ = ψ₀ + sgn(ω₀) V √(m/I_c)/k (gd(kt + c₀) − gd(c₀)),
   V = √(2E/m) (E the kinetic energy, conserved: the edge's force does no work), k = m a V / I_c,
   c₀ = atanh(u₀/V), gd the Gudermannian (the same closed form as tests/test_pfaffian.py). The sleigh ends
   up moving straight ahead at u → V = 0.781025 m/s with ω → 0 and ψ → 1.355 rad. Expected over 5 s: RK4 at
   5 ms (explicit, projection form, velocity projection after each step) within 1e-9 of u, ω and ψ, with
   ‖A q̇‖ at round-off; generalized-α at 2 ms (second order; it enforces the row at velocity level to its
   Newton tolerance) within 5e-6. Measured: RK4 4.0e-11 m/s, 1.45e-10 rad/s, 1.6e-10 rad, ‖A q̇‖ ≤ 9.1e-17 m/s,
   |E − E₀| ≤ 6.2e-11 J; generalized-α 2.9e-7 m/s, 2.5e-6 rad/s, 2.2e-6 rad, ‖A q̇‖ ≤ 2.3e-10 m/s.

2. Steering with the projected inverse-dynamics controller [LP, AG-43..46]
   (``fb.control.ProjectedInverseDynamicsControl``): the point P a distance d = 0.5 m ahead of the edge
   tracks the figure-eight x_d = A sin Ωt, y_d = (A/2) sin 2Ωt (A = 1 m, Ω = 0.5 rad/s, one period 4π s,
   given as a time function ``fb.control.Trajectory`` with exact derivatives). P's velocity
   Ṗ = u e_x + d ω e_y (body axes) is an invertible function of the two admissible velocities (u, ω) for
   d ≠ 0: J̌ = [J_P; A] has full rank (singular values 1.46, 1, 0.342 for d = 0.5 m, the same at every
   configuration), while for the edge point itself (d = 0) it has rank 2 < 3 (singular values 1.41, 1, 0):
   the edge cannot move sideways, and the controller refuses that task (``fb.ActuationError``). All three
   coordinates are actuated (S = I), but the PIDC input f∥ = P_AG(M u_p + h) with Aghili's orthogonal
   projector P_AG = I − A⁺A [AG-43] satisfies A f∥ = 0: it has no lateral component at the edge, so it is a
   thrust F = cos ψ τ_x + sin ψ τ_y along the heading at the edge plus a steering torque τ_ψ — the two inputs
   a real sleigh (a driven runner or wheel and a steering torque) has. With the exact model the plant's task
   acceleration is f* = ẍ_d + K_V ė + K_P e, so the error e = x_d − x_P obeys ë + K_V ė + K_P e = 0
   (K_P = 16 1/s², K_V = 4 1/s: ω_n = 4 rad/s, ζ = 0.5), whose solution from e₀, ė₀ is the closed form
       e(t) = e^(−ζω_n t) [e₀ cos ω_d t + (ė₀ + ζω_n e₀)/ω_d sin ω_d t],   ω_d = ω_n √(1 − ζ²)
   (critically and over-damped gains use their closed forms). Starting at rest with the edge at
   (−0.4, −0.3) m heading along +x, e₀ = (−0.1, 0.3) m and ė₀ = ẋ_d(0) = (0.5, 0.5) m/s. Expected over one
   period with RK4 at 4 ms (the controller is evaluated at every stage): the measured error within 1e-9 m of
   the closed form, ‖A q̇‖ at round-off. Measured: max ‖e − e_closed form‖ = 2.4e-10 m (RK4's truncation
   error: it falls 16-fold when the step is halved, tests/test_case_20_knife_edge_sleigh.py); final ‖e‖ =
   2.9e-11 m at t = 4π s (closed form 2.2e-12 m); ‖A q̇‖ ≤ 1.3e-16 m/s; peak |τ_x|, |τ_y|, |τ_ψ| = 4.47 N,
   1.95 N, 3.06 N·m (at 0.22 s, 0.79 s, 0 s: the transient), thrust up to 4.63 N, lateral force ≤ 4.1e-15 N
   (rms over the period 0.76 N, 0.55 N, 0.33 N·m). At the ends of the lobes the edge briefly backs up (its
   forward speed u ranges from −0.022 to 1.04 m/s), so its path has cusps there while P's is smooth.
   Along the recorded run (numpy, from the recorded q, q̇, q̈ and τ): [LP]'s relation P τ = P (M q̈ + h)
   with P = I − Aᵀ(AM⁻¹Aᵀ)⁻¹AM⁻¹ holds to 2.7e-15 (N or N·m); Aghili's projected inverse dynamics
   τ = P_AG (M q̈ + h) [AG-21, AG-43] (the recorded input is the projected inverse dynamics of the achieved
   acceleration) to 2.2e-15; and τ + Aᵀλ with an added lateral force λ = ‖τ‖ + 1 N gives the same
   accelerations (to 1.2e-14 m/s² or rad/s²): any τ + Aᵀλ does [LP]. Expected for all three: round-off.

Sources: [MR] and [LP] (seeds 001, 003: Pfaffian constraints A(θ)θ̇ = 0 and the projection
P = I − Aᵀ(AM⁻¹Aᵀ)⁻¹AM⁻¹ with P τ = P(M θ̈ + h)); [AG] = Aghili 2005 (seeds 004), PIDC [AG-43..46];
the Chaplygin sleigh (Chaplygin 1911; its reduced equations as in Bloch, *Nonholonomic Mechanics and
Control*, Springer 2003), integrated above in elementary functions (the same closed form as
tests/test_pfaffian.py); the tracking error's closed form is that of the linear ODE above.

Outputs in out_dir: coasting_rk4/, coasting_alpha/ and steering/ (Results.save and histories.csv each;
steering/ also a ParaView series of the sleigh, sleigh.pvd), knife_edge_sleigh.png ((A) the paths of the
edge and of P against the figure-eight, (B) the task error against its closed form, (C) the inputs,
(D) the coasting u, ω against the closed form, (E) the errors against the closed forms, (F) the
constraint and LP residuals) and summary.txt. Measured numbers are those printed into summary.txt.
"""

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
ALPHA_DT = 2e-3  # s, coasting: generalized-α step of the comparison run (0: skip it)
RHO_INF = 1.0  # -, generalized-α spectral radius at infinite frequency
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


# ------------------------------------------------------------------ closed forms
def sleigh_closed_form(t, u0, w0, psi0, mass=MASS, gyration_radius=GYRATION_RADIUS, com_ahead=COM_AHEAD):
    """(u, ω, ψ) (s,) each of the coasting Chaplygin sleigh (module docstring) at the times t (s,)."""
    m, a = mass, com_ahead
    Ic = m * gyration_radius**2 + m * a * a
    V = np.sqrt((m * u0**2 + Ic * w0**2) / m)
    k, c0, s = m * a * V / Ic, np.arctanh(u0 / V), np.sign(w0)

    def gd(z):  # Gudermannian
        return 2.0 * np.arctan(np.tanh(z / 2.0))

    z = k * np.asarray(t, dtype=float) + c0
    return V * np.tanh(z), s * V * np.sqrt(m / Ic) / np.cosh(z), psi0 + s * V * np.sqrt(m / Ic) / k * (gd(z) - gd(c0))


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


# ------------------------------------------------------------------ checks along a run
def forward_speed(q, v) -> tuple[np.ndarray, np.ndarray]:
    """(u, lateral) (s,) each: the edge's velocity along and across the heading [m/s]."""
    c, s = np.cos(q[:, 2]), np.sin(q[:, 2])
    return c * v[:, 0] + s * v[:, 1], -s * v[:, 0] + c * v[:, 1]


def projection_residuals(asm, res) -> dict:
    """Per recorded step (s,): [LP]'s ‖P τ − P(M q̈ + h)‖∞ with P = I − Aᵀ(AM⁻¹Aᵀ)⁻¹AM⁻¹, Aghili's
    ‖τ − P_AG(M q̈ + h)‖∞ with P_AG = I − A⁺A [AG-21, AG-43], and ‖q̈(τ + Aᵀλ) − q̈‖∞ with
    an added lateral force at the edge, λ = ‖τ‖ + 1 N along Aᵀ — all from the recorded q, q̇, q̈, τ with numpy."""
    lp, ag, same = (np.empty(res.n_steps) for _ in range(3))
    for i, (t, q, v) in enumerate(zip(res.times, res.q, res.v)):
        terms = asm.terms(t, q, v)
        M, h, A = np.asarray(terms.M, dtype=float), np.asarray(terms.h, dtype=float), np.asarray(terms.Phi, float)
        a, tau = res.histories["a"][i], res.histories["tau"][i]
        n = len(q)
        Minv = np.linalg.inv(M)
        P_lp = np.eye(n) - A.T @ np.linalg.solve(A @ Minv @ A.T, A @ Minv)  # [LP]
        P_ag = np.eye(n) - np.linalg.pinv(A) @ A  # [AG-15]
        lp[i] = np.abs(P_lp @ tau - P_lp @ (M @ a + h)).max()
        ag[i] = np.abs(tau - P_ag @ (M @ a + h)).max()
        pushed = tau + A.T @ np.full(A.shape[0], np.linalg.norm(tau) + 1.0)
        same[i] = np.abs(fb.dynamics.forward(M, h, pushed, A, terms.bias, method="multiplier").a - a).max()
    return {"lp": lp, "aghili": ag, "same_motion": same}


def edge_task_check(asm, d) -> dict:
    """Singular values of J̌ = [J; A] for the point d ahead of the edge and for the edge itself at q0, and
    whether the controller refuses the edge-point task."""
    out = {}
    for name, point in task(asm, d).items():
        report = fb.control.actuation_report(asm, asm.q0, np.zeros(asm.n_dofs), task=point)
        check = report.maps["independent"]
        out[name] = {
            "rank": int(check.rank),
            "required": int(check.required),
            "ok": bool(check.ok),
            "singular_values": [float(s) for s in check.singular_values],
        }
    control = fb.control.ProjectedInverseDynamicsControl(point_task(asm, 0.0, "edge"), [1.0, 0.0], KP, KV)
    try:
        control(0.0, asm.initial_state(), asm)
        out["edge_refused"] = False
    except fb.ActuationError:
        out["edge_refused"] = True
    return out


# ------------------------------------------------------------------ runs
def coast(asm, t_end, integrator, u0, w0, psi0, shape, context=None):
    """Simulate the coasting sleigh and compare with the closed form (``shape``: mass, gyration_radius,
    com_ahead of :func:`sleigh_closed_form`): (results, errors dict, columns)."""
    v0 = np.array([u0 * np.cos(psi0), u0 * np.sin(psi0), w0])
    res = fb.simulate(asm, t_end, integrator=integrator, v0=v0, context=context)
    u, lateral = forward_speed(res.q, res.v)
    u_cf, w_cf, psi_cf = sleigh_closed_form(res.times, u0, w0, psi0, **shape)
    energy = res.histories["energy"]
    errors = {
        "u": float(np.abs(u - u_cf).max()),
        "omega": float(np.abs(res.v[:, 2] - w_cf).max()),
        "psi": float(np.abs(res.q[:, 2] - psi_cf).max()),
        "velocity_violation": float(res.histories["velocity_violation"].max()),
        "energy_drift": float(np.abs(energy - energy[0]).max()),
        "u_end": float(u[-1]),
        "omega_end": float(res.v[-1, 2]),
        "n_steps": int(res.n_steps),
    }
    columns = {
        "x": res.q[:, 0],
        "y": res.q[:, 1],
        "psi": res.q[:, 2],
        "u": u,
        "omega": res.v[:, 2],
        "lateral_velocity": lateral,
        "u_closed_form": u_cf,
        "omega_closed_form": w_cf,
        "psi_closed_form": psi_cf,
        "velocity_violation": res.histories["velocity_violation"],
        "lam": res.histories["lam"][:, 0],
        "energy": energy,
    }
    return res, errors, columns


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


def plot(path, coasting, steering, lookahead) -> None:
    res_c, cols_c, alpha_cols = coasting
    res_s, e_cf, desired, P, inputs, residuals = steering
    fig, axes = fb.plots.subplots(2, 3, figsize=(15, 8.5))
    ax = axes[0, 0]
    ax.plot(desired[:, 0], desired[:, 1], "k--", lw=1, label="reference (figure-eight)")
    ax.plot(P[:, 0], P[:, 1], label=f"P ({lookahead} m ahead)")
    ax.plot(res_s.q[:, 0], res_s.q[:, 1], label="knife edge")
    for i in np.linspace(0, res_s.n_steps - 1, 16).astype(int):
        ax.plot([res_s.q[i, 0], P[i, 0]], [res_s.q[i, 1], P[i, 1]], color="0.4", lw=1.5)
    ax.plot([res_s.q[0, 0], P[0, 0]], [res_s.q[0, 1], P[0, 1]], "ko-", ms=4, lw=1.5, label="start (at rest)")
    ax.set_aspect("equal")
    ax.set_ylim(-0.95, 0.6)
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.set_title("(A) paths; grey: the sleigh from edge to P", fontsize=10)
    ax = axes[0, 1]
    e = res_s.histories["task_error"]
    for j, name in enumerate(("x", "y")):
        ax.plot(res_s.times, e[:, j], label=f"e_{name} measured")
        ax.plot(res_s.times, e_cf[:, j], "k:", lw=1.5, label=f"e_{name} closed form")
    ax.set_xlim(0, min(res_s.times[-1], 4.0))
    ax.set_xlabel("t [s]")
    ax.set_ylabel("e = x_d − x_P [m]")
    ax.set_title("(B) task error: ë + K_V ė + K_P e = 0", fontsize=10)
    ax = axes[0, 2]
    ax.plot(res_s.times, inputs["thrust"], label="thrust F along the heading [N]")
    ax.plot(res_s.times, inputs["torque"], label="steering torque τ_ψ [N·m]")
    ax.plot(res_s.times, inputs["lateral"], label="lateral force [N]")
    ax.set_xlabel("t [s]")
    ax.set_title("(C) PIDC inputs (S = I; A τ = 0)", fontsize=10)
    ax = axes[1, 0]
    ax.plot(res_c.times, cols_c["u"], label="u [m/s]")
    ax.plot(res_c.times, cols_c["omega"], label="ω [rad/s]")
    ax.plot(res_c.times, cols_c["psi"], label="ψ [rad]")
    for key in ("u_closed_form", "omega_closed_form", "psi_closed_form"):
        ax.plot(res_c.times, cols_c[key], "k:", lw=1.5)
    ax.set_xlabel("t [s]")
    ax.set_title("(D) coasting Chaplygin sleigh (dotted: closed form)", fontsize=10)
    ax = axes[1, 1]
    tiny = 1e-18
    ax.semilogy(res_c.times, np.abs(cols_c["psi"] - cols_c["psi_closed_form"]) + tiny, label="|ψ − ψ_cf| RK4")
    if alpha_cols is not None:
        ax.semilogy(
            alpha_cols["t"],
            np.abs(alpha_cols["psi"] - alpha_cols["psi_closed_form"]) + tiny,
            label="|ψ − ψ_cf| generalized-α",
        )
    ax.semilogy(res_s.times, np.linalg.norm(e - e_cf, axis=1) + tiny, label="‖e − e_cf‖ steering [m]")
    ax.set_xlabel("t [s]")
    ax.set_title("(E) differences from the closed forms", fontsize=10)
    ax = axes[1, 2]
    ax.semilogy(res_s.times, residuals["lp"] + tiny, label="‖Pτ − P(Mq̈ + h)‖ [LP]")
    ax.semilogy(res_s.times, residuals["aghili"] + tiny, label="‖τ − P_AG(Mq̈ + h)‖ [AG-43]")
    ax.semilogy(res_s.times, res_s.histories["velocity_violation"] + tiny, label="‖A q̇‖ steering [m/s]")
    ax.semilogy(res_c.times, cols_c["velocity_violation"] + tiny, label="‖A q̇‖ coasting RK4 [m/s]")
    ax.set_xlabel("t [s]")
    ax.set_title("(F) constraint and projection residuals", fontsize=10)
    for ax in axes.flat:
        ax.legend(fontsize=7, **({"loc": "lower center", "ncol": 2} if ax is axes[0, 0] else {}))
        ax.grid(alpha=0.3)
    fig.suptitle(
        "Case 20: knife-edge sleigh — coasting (Chaplygin) and PIDC steering of a point ahead of the edge", fontsize=11
    )
    fb.plots.save(fig, path, dpi=110)


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
    alpha_dt=ALPHA_DT,
    rho_inf=RHO_INF,
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
    """Run the coasting sleigh (RK4 and generalized-α) and the steered one, write the outputs, return the
    measured numbers."""
    out = Path(out_dir)
    shape = {"mass": mass, "gyration_radius": gyration_radius, "com_ahead": com_ahead}
    # 1. coasting
    u0, w0 = yaw_rate0 * turn_radius0, yaw_rate0
    coast_asm = build(**shape, q0=(0.0, 0.0, heading0)).assemble()
    res_c, rk4, cols_c = coast(coast_asm, coast_t_end, fb.RK4(dt=coast_dt), u0, w0, heading0, shape, context)
    res_c.save(out / "coasting_rk4")
    fb.io.write_columns_csv(out / "coasting_rk4" / "histories.csv", res_c.times, cols_c)
    alpha, alpha_cols = None, None
    if alpha_dt:
        res_a, alpha, cols_a = coast(
            coast_asm, coast_t_end, fb.GeneralizedAlpha(dt=alpha_dt, rho_inf=rho_inf), u0, w0, heading0, shape, context
        )
        res_a.save(out / "coasting_alpha")
        fb.io.write_columns_csv(out / "coasting_alpha" / "histories.csv", res_a.times, cols_a)
        alpha_cols = {"t": res_a.times, **cols_a}
    m, a = mass, com_ahead
    Ic = m * gyration_radius**2 + m * a * a
    V = float(np.sqrt((m * u0**2 + Ic * w0**2) / m))

    # 2. steering
    steer_asm = build(**shape, q0=(start_x, start_y, start_heading)).assemble()
    reference = figure_eight(path_size, path_rate)
    t_end = steer_periods * 2 * np.pi / path_rate
    res_s, e0, edot0, e_cf = steer(steer_asm, t_end, steer_dt, lookahead, kp, kv, reference, context)
    e = res_s.histories["task_error"]
    deviation = np.linalg.norm(e - e_cf, axis=1)
    P = res_s.histories["task_x"]
    desired = res_s.histories["task_desired"]
    tau = res_s.histories["tau"]
    c, s = np.cos(res_s.q[:, 2]), np.sin(res_s.q[:, 2])
    inputs = {"thrust": c * tau[:, 0] + s * tau[:, 1], "lateral": -s * tau[:, 0] + c * tau[:, 1], "torque": tau[:, 2]}
    residuals = projection_residuals(steer_asm, res_s)
    checks = edge_task_check(steer_asm, lookahead)
    edge_speed, lateral_velocity = forward_speed(res_s.q, res_s.v)
    res_s.save(out / "steering")
    fb.io.write_link_pvd(out / "steering", res_s, every=max(1, res_s.n_steps // 60))
    fb.io.write_columns_csv(
        out / "steering" / "histories.csv",
        res_s.times,
        {
            "edge_x": res_s.q[:, 0],
            "edge_y": res_s.q[:, 1],
            "psi": res_s.q[:, 2],
            "P_x": P[:, 0],
            "P_y": P[:, 1],
            "desired_x": desired[:, 0],
            "desired_y": desired[:, 1],
            "error_x": e[:, 0],
            "error_y": e[:, 1],
            "error_closed_form_x": e_cf[:, 0],
            "error_closed_form_y": e_cf[:, 1],
            "tau_x": tau[:, 0],
            "tau_y": tau[:, 1],
            "tau_psi": tau[:, 2],
            "thrust": inputs["thrust"],
            "lateral_force": inputs["lateral"],
            "lam": res_s.histories["lam"][:, 0],
            "edge_speed": edge_speed,
            "lateral_velocity": lateral_velocity,
            "velocity_violation": res_s.histories["velocity_violation"],
            "lp_residual": residuals["lp"],
            "aghili_residual": residuals["aghili"],
            "same_motion_residual": residuals["same_motion"],
        },
    )
    plot(
        out / "knife_edge_sleigh.png",
        (res_c, cols_c, alpha_cols),
        (res_s, e_cf, desired, P, inputs, residuals),
        lookahead,
    )

    steering = {
        "e0": e0.tolist(),
        "edot0": edot0.tolist(),
        "max_deviation_from_closed_form": float(deviation.max()),
        "final_error": float(np.linalg.norm(e[-1])),
        "final_error_closed_form": float(np.linalg.norm(e_cf[-1])),
        "t_end": float(res_s.times[-1]),
        "max_velocity_violation": float(res_s.histories["velocity_violation"].max()),
        "peak_tau": np.abs(tau).max(axis=0).tolist(),
        "peak_thrust": float(np.abs(inputs["thrust"]).max()),
        "peak_lateral_force": float(np.abs(inputs["lateral"]).max()),
        "peak_steering_torque": float(np.abs(inputs["torque"]).max()),
        "rms_tau": np.sqrt(np.mean(tau**2, axis=0)).tolist(),
        "edge_speed_range": [float(edge_speed.min()), float(edge_speed.max())],
        "max_lp_residual": float(residuals["lp"].max()),
        "max_aghili_residual": float(residuals["aghili"].max()),
        "max_same_motion_residual": float(residuals["same_motion"].max()),
        "actuated": list(steer_asm.actuated_labels),
        "n_steps": int(res_s.n_steps),
        "dt": steer_dt,
        "task_checks": checks,
    }
    summary = {
        "coasting": {
            "rk4": rk4,
            "alpha": alpha,
            "terminal_speed": V,
            "u0": u0,
            "omega0": w0,
            "dt": coast_dt,
            "alpha_dt": alpha_dt,
            "t_end": coast_t_end,
        },
        "steering": steering,
    }
    lines = [
        f"Case 20: knife-edge sleigh, m = {mass} kg, rho = {gyration_radius} m "
        f"(I = {mass * gyration_radius**2:.4g} kg m^2), a = {com_ahead} m",
        f"1. coasting from psi0 = {heading0} rad, u0 = {u0:.4g} m/s, omega0 = {w0} rad/s to t = {coast_t_end} s; "
        f"V = sqrt(2E/m) = {V:.6f} m/s",
    ]
    for label, r in (
        (f"RK4 dt = {coast_dt} s", rk4),
        (f"generalized-alpha dt = {alpha_dt} s, rho_inf = {rho_inf}", alpha),
    ):
        if r is not None:
            lines.append(
                f"   {label}: max |u - u_cf| = {r['u']:.2e} m/s, |omega - omega_cf| = {r['omega']:.2e} "
                f"rad/s, |psi - psi_cf| = {r['psi']:.2e} rad; max |A qdot| = {r['velocity_violation']:.1e} "
                f"m/s; max |E - E0| = {r['energy_drift']:.1e} J; u(end) = {r['u_end']:.6f} m/s"
            )
    st, sv = steering, checks
    lines += [
        f"2. steering: P {lookahead} m ahead of the edge tracks the figure-eight A = {path_size} m, "
        f"Omega = {path_rate} rad/s with PIDC, K_P = {kp}, K_V = {kv}; RK4 dt = {steer_dt} s to "
        f"t = {res_s.times[-1]:.4f} s; actuated {st['actuated']}",
        f"   J_check = [J; A] singular values: P {np.round(sv['P']['singular_values'], 4).tolist()} "
        f"(rank {sv['P']['rank']} of {sv['P']['required']}), edge point "
        f"{np.round(sv['edge']['singular_values'], 4).tolist()} (rank {sv['edge']['rank']} of "
        f"{sv['edge']['required']}); PIDC refuses the edge-point task: {sv['edge_refused']}",
        f"   e0 = {np.round(e0, 6).tolist()} m, edot0 = {np.round(edot0, 6).tolist()} m/s; "
        f"max ||e - e_closed_form|| = {st['max_deviation_from_closed_form']:.2e} m; "
        f"final ||e|| = {st['final_error']:.2e} m (closed form {st['final_error_closed_form']:.2e} m); "
        f"max |A qdot| = {st['max_velocity_violation']:.1e} m/s",
        f"   peak |tau_x|, |tau_y|, |tau_psi| = {np.round(st['peak_tau'], 4).tolist()} (N, N, N m); "
        f"rms {np.round(st['rms_tau'], 4).tolist()}; thrust along the heading up to {st['peak_thrust']:.4f} N, "
        f"lateral force up to {st['peak_lateral_force']:.1e} N; edge speed u from {edge_speed.min():.4f} "
        f"to {edge_speed.max():.4f} m/s",
        f"   [LP] max |P tau - P(M qdd + h)| = {st['max_lp_residual']:.1e}; [AG-43] max |tau - P_AG(M qdd + h)| "
        f"= {st['max_aghili_residual']:.1e}; tau + A^T lam (lam = |tau| + 1 N) moves the sleigh the same: "
        f"max |qdd difference| = {st['max_same_motion_residual']:.1e}",
    ]
    (out / "summary.txt").write_text("\n".join(lines) + "\n")
    return summary


if __name__ == "__main__":
    main()
