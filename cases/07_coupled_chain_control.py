"""Case 07: end-point control of a redundant chain with internal joint couplings [DE 5.4.1, Figs 9, 10].

Problem: the six-link planar chain of ``mechanisms.coupled_chain`` (uniform rods of LENGTH = 0.4 m and
MASS = 1 kg, all six revolute joints actuated, gravity 9.81 m/s² along −y) with the first three joints
coupled by φ = (q₂ − q₁/3, q₃ − 2q₁/3) = 0 [DE-94] (n = 6, m_C = 2, p = 4). The task is the end point
x = r_E = (x, y) of link 6 (m_T = 2), so the null space has dimension p − m_T = 2. It is controlled by
task/constraint partitioning [DE-84, DE-92] with f_C = 0 and the null-space gravity-effort term of [DE-95]:

    τ = Jᵀf − K_N Ňᵀ ∂U/∂q − D_N Ňᵀ q̇,   f = Λ̌₁₁ f* + μ̌₁ + p̌₁,   f* = K_p(x_d − x) − K_v ẋ [DE-71]

with U = ‖g(q)‖², K_p = 100, K_v = 20, K_N = 0.1 (DE Fig. 9) and a small null-space damping D_N (DE:
"a small amount of damping was applied in the null space"; DE gives no value). The chain starts at rest in
the builder's default posture q₀ = (0.6, 0.2, 0.4, 0.5, 0.4, 0.3) rad (end point (0.205, 1.898) m, nearly
upright, U₀ ≈ 1054 N²m²) and is given the goal position command x_d = GOAL = (0, 1.4) m (0.54 m away).
Our choices (not in DE): the link lengths and masses, q₀, the goal, D_N, the duration 4 s and RK4 with
Δt = 2 ms (Δt = 1 ms gives the same states to 1.3e-5 rad).

Choice of D_N: with these masses the gravity-effort term is strong (K_N‖∂U/∂q‖ ≈ 550 N·m at the start) and with
little damping the self-motion is violent. A design-time sweep (this goal, 6 s) found with D_N = 0.5 N·m·s/rad
U still oscillating at 6 s (largest rise of U after convergence 31 N²m², torque peak 186 N·m), with D_N = 5 a
rise of 0.23 N²m² and a peak of 74 N·m, with D_N = 10 a slower descent: we use D_N = 5. With other goals the
self-motion can linger on a plateau of V + K_N U before dropping into a lower well.

Expected [DE Figs 9, 10]: the end point converges to the goal (critically damped, ω = 10 rad/s); the
couplings hold (‖φ‖ at round-off); the gravity effort is "minimized in a manner consistent with the task and
constraints": U falls from ≈ 1054 to ≈ 84 N²m², whereas the same run with K_N = 0 (same D_N) ends near 1100,
above its start. U is not exactly monotone after the task has converged, and need not be: [DE-95]
compensates gravity only in the task space, so the null-space motion descends the potential V + K_N U
(V the gravitational potential), not U alone; at the end U creeps up by ≈ 0.2 N²m² (0.02 % of its fall)
while V still decreases. The summary therefore reports (i) that rebound relative to the total fall and (ii)
the quantity that must be monotone: once ẋ ≈ 0 and Φq̇ = 0, d/dt (T + V + K_N U) = −D_N‖q̇‖² ≤ 0 (T the
kinetic energy), so W = T + V + K_N U may only fall (up to the integration error). With the exact model the
plant's task acceleration ẍ = J a + J̇q̇ equals the commanded f* at every step (checked to 1e-8 relative to
max(1, |f*|)). The first three joint torques show the swings DE attributes to "rapid and drastic changes in
configuration induced by the gravity effort minimization".

Outputs in out_dir: results.npz/.json of the K_N run (Results.save) with its ParaView series (chain.pvd,
scene.vtp) and of the K_N = 0 run in
``no_gravity_effort/``, histories.csv (both runs), coupled_chain.png (Figs 9/10 layout: (A) task
coordinates and goal, (B) q₁, q₂, q₃ with q₁/3, 2q₁/3, (C) U(t) with and without the gravity-effort term,
(D) joint torques), histories.png (flexbody.io.plots overview) and summary.txt (JSON of the returned dict).
"""

import json
from pathlib import Path

import numpy as np

import flexbody as fb

LENGTH = 0.4  # m, each of the six links
MASS = 1.0  # kg, each link (uniform rod)
GRAVITY = 9.81  # m/s², gravity along −y
Q0 = (0.6, 0.2, 0.4, 0.5, 0.4, 0.3)  # rad, initial posture (satisfies [DE-94]), at rest
GOAL = (0.0, 1.4)  # m, goal position of the end point (start: (0.205, 1.898))
KP = 100.0  # 1/s², task position gain K_p [DE Fig. 9]
KV = 20.0  # 1/s, task velocity gain K_v [DE Fig. 9]
K_N = 0.1  # 1/(N·m), null-space gain on ∂U/∂q [DE Fig. 9]
D_N = 5.0  # N·m·s/rad, null-space damping (our choice, see docstring)
DT = 2e-3  # s, RK4 step
T_END = 4.0  # s, end time
CONVERGED = 1e-3  # -, task "converged" once ‖e‖ ≤ CONVERGED·‖e(0)‖ for good


def build(length=LENGTH, mass=MASS, gravity=GRAVITY, q0=Q0) -> fb.System:
    """The coupled chain of [DE 5.4.1] (all joints actuated)."""
    return fb.mechanisms.coupled_chain(
        lengths=(length,) * 6, masses=(mass,) * 6, gravity=(0.0, -gravity, 0.0), q0=np.asarray(q0, dtype=float)
    )


def end_point_task(system: fb.System, length=LENGTH) -> fb.PointTask:
    """x = r_E: world (x, y) of the tip of link 6."""
    tree = system.trees[0]
    return fb.PointTask(tree.point(tree.link("l6"), (length, 0.0, 0.0)), components=(0, 1), name="end_point")


def task(asm, length=LENGTH) -> fb.PointTask:
    """The case's task on the assembled system (for ``flexbody info``): the end point r_E."""
    return end_point_task(asm, length)


def converged_index(error_norm: np.ndarray, fraction: float) -> int:
    """First index from which ‖e‖ ≤ fraction·‖e(0)‖ at every later step (len if never)."""
    above = np.flatnonzero(error_norm > fraction * error_norm[0])
    return int(above[-1] + 1) if len(above) else 0


def largest_rise(y: np.ndarray) -> float:
    """max over i ≤ j of y_j − y_i (0 for a non-increasing sequence)."""
    return float(np.max(y - np.minimum.accumulate(y))) if len(y) else 0.0


def plot(path, res, free, U, U_free, k_n) -> None:
    """[DE Figs 9, 10]: (A) task and goal, (B) q₁, q₂, q₃ with q₁/3, 2q₁/3, (C) U with and without the gravity
    effort, (D) joint torques."""
    t, H = res.times, res.histories
    task = {f"{c}_E": (t, H["task_x"][:, i]) for i, c in enumerate("xy")}
    goal = {f"{c} goal": (t, H["task_desired"][:, i]) for i, c in enumerate("xy")}
    couplings = {"q1/3 [DE-94]": (t, res.q[:, 0] / 3), "2q1/3 [DE-94]": (t, 2 * res.q[:, 0] / 3)}
    effort = {f"K_N = {k_n:g}": (t, U), "K_N = 0 (same damping)": (free.times, U_free)}
    panels = [
        {"ylabel": "end point r_E [m]", "curves": task, "references": goal, "title": "(A) task (Fig. 9 right)"},
        {
            "ylabel": "joint angles q [rad]",
            "curves": {f"q{i + 1}": (t, res.q[:, i]) for i in range(3)},
            "references": couplings,
            "title": "(B) first three joints (Fig. 10 left)",
        },
        {"ylabel": "U = ‖g(q)‖² [N²·m²]", "curves": effort, "log": True, "title": "(C) gravity effort (Fig. 10 right)"},
        {
            "ylabel": "joint torques τ [N·m]",
            "curves": {f"τ{i + 1}": (t, H["tau"][:, i]) for i in range(6)},
            "title": "(D)",
        },
    ]
    title = "Coupled redundant chain, end-point goal, null-space gravity effort (DE 5.4.1)"
    fb.plots.plot_curves(path, panels, columns=2, size=(5.5, 4.0), title=title)


def main(
    out_dir="out/07_coupled_chain_control",
    length=LENGTH,
    mass=MASS,
    gravity=GRAVITY,
    q0=Q0,
    goal=GOAL,
    kp=KP,
    kv=KV,
    k_n=K_N,
    d_n=D_N,
    dt=DT,
    t_end=T_END,
    converged=CONVERGED,
    context=None,
) -> dict:
    """Run the K_N and K_N = 0 cases, write the outputs; returns the key numbers."""
    system = build(length, mass, gravity, q0)
    asm = system.assemble()
    task = end_point_task(system, length)
    goal = np.asarray(goal, dtype=float)
    report = fb.control.actuation_report(asm, 0.0, asm.q0, np.zeros(asm.n_dofs), task=task)

    controller = fb.control.PartitionedControl(
        task, fb.control.Setpoint(goal), kp, kv, null_space=fb.control.GravityEffort(gain=k_n, damping=d_n)
    )
    res = fb.simulate(asm, t_end, integrator=fb.RK4(dt=dt), controller=controller, context=context)
    # the same run without the gravity-effort term (K_N = 0, same damping: −D_N Ňᵀq̇ only)
    plain = fb.control.PartitionedControl(
        task, fb.control.Setpoint(goal), kp, kv, null_space=fb.control.NullSpaceDamping(d_n)
    )
    free = fb.simulate(asm, t_end, integrator=fb.RK4(dt=dt), controller=plain, context=context)

    out = Path(out_dir)
    res.save(out)
    fb.io.write_link_pvd(out, res, every=fb.io.frame_stride(res))  # ParaView series of the chain
    free.save(out / "no_gravity_effort")

    effort = fb.control.GravityEffort.effort
    U = np.array([effort(asm, q) for q in res.q])
    U_free = np.array([effort(asm, q) for q in free.q])
    H = res.histories
    e = np.linalg.norm(H["task_error"], axis=1)
    k_conv = converged_index(e, converged)
    W = H["kinetic"] + H["potential"] + k_n * U
    acc_err = fb.control.task_acceleration_error(asm, task, res)
    acc_err_free = fb.control.task_acceleration_error(asm, task, free)
    coupling = np.abs(np.column_stack([res.q[:, 1] - res.q[:, 0] / 3, res.q[:, 2] - 2 * res.q[:, 0] / 3]))
    after = U[k_conv:]
    fall = float(U[0] - U.min())

    columns = {f"q{i + 1}": res.q[:, i] for i in range(6)} | {"task_error_norm": e}
    columns |= {f"{c}_E": H["task_x"][:, i] for i, c in enumerate("xy")}
    columns |= {f"{c}_goal": H["task_desired"][:, i] for i, c in enumerate("xy")}
    columns |= {f"tau{i + 1}": H["tau"][:, i] for i in range(6)}
    columns |= {f"f_star_{c}": H["task_command"][:, i] for i, c in enumerate("xy")}
    columns |= {"task_acceleration_error": acc_err, "U": U, "W": W, "kinetic": H["kinetic"]}
    columns |= {"potential": H["potential"], "violation": H["violation"]}
    columns |= {"coupling_q2": coupling[:, 0], "coupling_q3": coupling[:, 1], "U_no_gravity_effort": U_free}
    columns["task_error_norm_no_gravity_effort"] = np.linalg.norm(free.histories["task_error"], axis=1)
    fb.io.write_columns_csv(out / "histories.csv", res.times, columns)
    plot(out / "coupled_chain.png", res, free, U, U_free, k_n)
    panels = ("task", "task_error", "torque", "joints", "violation")
    title = "Case 07: coupled chain, partitioned control with gravity effort"
    fb.plots.plot_histories(res, out / "histories.png", panels=panels, title=title)

    summary = {
        "n": report.n,
        "m_C": report.n_constraints,
        "constraint_rank": report.constraint_rank,
        "p": report.dof,
        "k": report.n_actuators,
        "m_T": report.n_task,
        "null_space_dim": report.dof - report.n_task,
        "partitioned_ok": report.ok("partitioned"),
        "x_start": H["task_x"][0].tolist(),
        "goal": goal.tolist(),
        "x_end": H["task_x"][-1].tolist(),
        "task_error_start": float(e[0]),
        "task_error_end": float(e[-1]),
        "task_error_reduction": float(e[0] / max(e[-1], 1e-300)),
        "t_converged": float(res.times[k_conv]) if k_conv < len(e) else None,
        "max_task_acceleration_error": float(acc_err.max()),
        "max_task_acceleration_error_no_gravity_effort": float(acc_err_free.max()),
        "max_violation": float(H["violation"].max()),
        "max_violation_no_gravity_effort": float(free.histories["violation"].max()),
        "max_coupling_error": float(coupling.max()),
        "U_start": float(U[0]),
        "U_end": float(U[-1]),
        "U_min": float(U.min()),
        "U_at_convergence": float(U[k_conv]) if k_conv < len(U) else None,
        "U_end_no_gravity_effort": float(U_free[-1]),
        "U_min_no_gravity_effort": float(U_free.min()),
        "U_end_ratio_vs_no_gravity_effort": float(U[-1] / U_free[-1]),
        "U_rebound_after_convergence": largest_rise(after),
        "U_rebound_relative_to_fall": largest_rise(after) / fall if fall > 0 else None,
        "U_increasing_steps_after_convergence_fraction": float(np.mean(np.diff(after) > 0)) if len(after) > 1 else 0.0,
        "W_rise_after_convergence": largest_rise(W[k_conv:]),
        "W_fall_after_convergence": float(W[k_conv] - W[-1]) if k_conv < len(W) else None,
        "max_abs_torque": float(np.abs(H["tau"]).max()),
        "max_abs_torque_first_three": float(np.abs(H["tau"][:, :3]).max()),
        "rms_torque": fb.plots.rms_norm(res, "tau"),
        "peak_torque": fb.plots.peak_norm(res, "tau"),
        "max_abs_torque_no_gravity_effort": float(np.abs(free.histories["tau"]).max()),
        "max_speed_end": float(np.abs(res.v[-1]).max()),
        "q_end": res.q[-1].tolist(),
        "q_end_no_gravity_effort": free.q[-1].tolist(),
        "actuation_report": str(report),
    }
    summary |= {"kp": kp, "kv": kv, "k_n": k_n, "d_n": d_n, "dt": dt, "t_end": t_end, "n_steps": int(res.n_steps)}
    (out / "summary.txt").write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    return summary


if __name__ == "__main__":
    main()
