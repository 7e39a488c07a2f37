"""Case 09: end-point control of an underactuated redundant chain [DE 5.4.3, Figs 14, 15].

Problem: the three-link planar chain of ``mechanisms.underactuated_chain`` (uniform rods of LENGTH = 0.5 m and
MASS = 1 kg, gravity 9.81 m/s² along −y, no constraints) with joint 1 passive, S̃ = (1 0 0) [DE-100]
(n = p = 3, k = 2). The task is the end point x = r_E = (x, y) of link 3 (m_T = 2), controlled by
task/constraint partitioning [DE-84, DE-92] with K_p = 100, K_v = 20 (DE Fig. 14) under a goal position
command, and the passive-joint condition S̃(Jᵀf + Ňᵀτ₀) = 0 [DE-91]. There are no constraints, so the
passive torque can only be cancelled through the task null space: the controller picks the null-space torque
Ňᵀτ₀ that makes the torque at joint 1 zero, which uses up the single null-space dimension (p − m_T = 1).

Actuation [DE 5.3, Fig. 8]: k = 2 < p = 3, so the chain is not motion actuated, but k = m_T = 2, so it is task
actuated. DE's literal condition for the partitioned formulation, "S̃Φᵀ full rank", fails here: S̃Φᵀ is
1 × 0 (no constraints). What the controller actually needs is S̃[Φᵀ, Ňᵀ] (1 × 3) of rank 1, i.e. the passive
torque can be cancelled with null-space torques; that holds (report.ok("partitioned") is True). The summary
reports both checks and the smallest singular value of S̃Ňᵀ along the run.

Expected [DE Figs 14, 15]: the end point converges to the goal; the torque at joint 1 is zero (the applied
τ is zero there by construction; the controller's own generalized force at joint 1, "passive_residual", is
at round-off); with the null space spent on the passive joint nothing damps the self-motion, so the joints
keep oscillating ("undamped null space oscillation due to the unactuated joint") while the end point stays
at the goal. The case quantifies it by the peak-to-peak of q₁ in consecutive windows of WINDOW = 2 s after
the task has converged (they must not decay), its period, and the task error in those windows. With the
exact model the task acceleration J a + J̇q̇ equals the commanded f* at every step (1e-8 relative).

Why this start and goal (our choices; DE gives none): with the end point held and joint 1 torque-free, the
self-motion obeys the zero dynamics (Mn)₁ s̈ + … = −g₁ (n the null vector of J); where (Mn)₁ vanishes,
S̃Ňᵀ = 0 (‖S̃Ňᵀ‖ = |(Mn)₁|/(nᵀMn)), the passive torque cannot be cancelled and the accelerations diverge.
From the builder's default posture (0.3, 0.6, 0.4) rad every goal we tried drives the self-motion into that
singular surface within 0.02–0.2 s (tests/test_control.py: the controller warns, then the run stops). With the
chain hanging below its base the zero dynamics have a centre far from it (‖S̃Ňᵀ‖ stays above 1.6, period
≈ 1.4 s): we start from Q0 = (−1.2, −0.9, 1.0) rad at rest (end point (0.16, −1.34) m) with the goal
GOAL = (0, −1) m, and integrate 10 s with RK4 at Δt = 1 ms.

Outputs in out_dir: results.npz/.json (Results.save), chain3.pvd and scene.vtp (ParaView series),
histories.csv, underactuated_chain.png (Figs 14, 15:
(A) task coordinates and goal, (B) joint angles, (C) joint torques, (D) task error and ‖S̃Ňᵀ‖), histories.png
(flexbody.io.plots overview) and summary.txt (JSON of the returned dict, with the actuation report at the start).
"""

import json
from pathlib import Path

import numpy as np

import flexbody as fb

LENGTH = 0.5  # m, each of the three links
MASS = 1.0  # kg, each link (uniform rod)
GRAVITY = 9.81  # m/s², gravity along −y
Q0 = (-1.2, -0.9, 1.0)  # rad, initial posture (hanging), at rest
GOAL = (0.0, -1.0)  # m, goal position of the end point (start: (0.16, −1.34))
KP = 100.0  # 1/s², task position gain K_p [DE Fig. 14]
KV = 20.0  # 1/s, task velocity gain K_v [DE Fig. 14]
DT = 1e-3  # s, RK4 step
T_END = 10.0  # s, end time
WINDOW = 2.0  # s, window for the peak-to-peak of q1 (longer than one oscillation period)
CONVERGED = 1e-3  # -, task "converged" once ‖e‖ ≤ CONVERGED·‖e(0)‖ for good
MARGIN_EVERY = 10  # -, ‖S̃Ňᵀ‖ evaluated at every MARGIN_EVERY-th recorded step


def build(length=LENGTH, mass=MASS, gravity=GRAVITY, q0=Q0) -> fb.System:
    """The underactuated chain of [DE 5.4.3] (joint 1 passive)."""
    return fb.mechanisms.underactuated_chain(
        lengths=(length,) * 3, masses=(mass,) * 3, gravity=(0.0, -gravity, 0.0), q0=np.asarray(q0, dtype=float)
    )


def end_point_task(system: fb.System, length=LENGTH) -> fb.PointTask:
    """x = r_E: world (x, y) of the tip of link 3."""
    tree = system.trees[0]
    return fb.PointTask(tree.point(tree.link("l3"), (length, 0.0, 0.0)), components=(0, 1), name="end_point")


def task(asm, length=LENGTH) -> fb.PointTask:
    """The case's task on the assembled system (for ``flexbody info``): the end point r_E."""
    return end_point_task(asm, length)


def passive_margin(asm, task, q) -> float:
    """‖S̃Ňᵀ‖ (its only singular value) at q: Ňᵀ = I − JᵀΛJM⁻¹ with Λ = (JM⁻¹Jᵀ)⁻¹, computed with numpy."""
    ws = asm.workspace(0.0, q)
    M = ws.mass_bias_gravity()[0]
    J = task.evaluate(ws).J
    MiJt = np.linalg.solve(M, J.T)
    Nt = np.eye(asm.n_dofs) - J.T @ np.linalg.solve(J @ MiJt, MiJt.T)
    passive = np.flatnonzero(np.abs(asm.S).sum(axis=0) == 0)
    return float(np.linalg.svd(Nt[passive], compute_uv=False).min())


def converged_index(error_norm: np.ndarray, fraction: float) -> int:
    """First index from which ‖e‖ ≤ fraction·‖e(0)‖ at every later step (len if never)."""
    above = np.flatnonzero(error_norm > fraction * error_norm[0])
    return int(above[-1] + 1) if len(above) else 0


def oscillation_windows(t, y, t_start, t_end, width) -> list:
    """Peak-to-peak of y in consecutive windows [t_end − (j+1)·width, t_end − j·width] that start at or after
    t_start, oldest first, as (t0, t1, ptp)."""
    out = []
    hi = t_end
    while hi - width >= t_start - 1e-12:
        mask = (t >= hi - width - 1e-12) & (t <= hi + 1e-12)
        out.append((float(hi - width), float(hi), float(np.ptp(y[mask]))))
        hi -= width
    return out[::-1]


def mean_period(t, y) -> float | None:
    """Mean time between upward crossings of y through its mean (None if fewer than two)."""
    z = y - y.mean()
    k = np.flatnonzero((z[:-1] < 0) & (z[1:] >= 0))
    if len(k) < 2:
        return None
    tc = t[k] - z[k] * (t[k + 1] - t[k]) / (z[k + 1] - z[k])
    return float(np.mean(np.diff(tc)))


def plot(path, res, margin_t, margin) -> None:
    """[DE Figs 14, 15]: (A) task and goal, (B) joint angles, (C) joint torques, (D) task error and ‖S̃Ňᵀ‖."""
    t, H = res.times, res.histories
    task = {f"{c}_E": (t, H["task_x"][:, i]) for i, c in enumerate("xy")}
    goal = {f"{c} goal": (t, H["task_desired"][:, i]) for i, c in enumerate("xy")}
    joints = {f"q{i + 1}" + (" (passive)" if i == 0 else ""): (t, res.q[:, i]) for i in range(3)}
    torques = {f"τ{i + 1}" + (" (passive, ≡ 0)" if i == 0 else ""): (t, H["tau"][:, i]) for i in range(3)}
    margins = {"‖x_d − x‖ [m]": (t, np.linalg.norm(H["task_error"], axis=1)), "‖S̃Ňᵀ‖ [-]": (margin_t, margin)}
    panels = [
        {"ylabel": "end point r_E [m]", "curves": task, "references": goal, "title": "(A) task (Fig. 14 right)"},
        {"ylabel": "joint angles q [rad]", "curves": joints, "title": "(B) undamped null-space oscillation"},
        {"ylabel": "joint torques τ [N·m]", "curves": torques, "title": "(C) joint torques (Fig. 15 right)"},
        {"ylabel": "‖x_d − x‖, ‖S̃Ňᵀ‖ [m, -]", "curves": margins, "log": True, "title": "(D) passive-joint margin"},
    ]
    title = "Underactuated chain (joint 1 passive), end-point goal, partitioned control (DE 5.4.3)"
    fb.plots.plot_curves(path, panels, columns=2, size=(5.5, 4.0), title=title)


def main(
    out_dir="out/09_underactuated_chain_control",
    length=LENGTH,
    mass=MASS,
    gravity=GRAVITY,
    q0=Q0,
    goal=GOAL,
    kp=KP,
    kv=KV,
    dt=DT,
    t_end=T_END,
    window=WINDOW,
    converged=CONVERGED,
    margin_every=MARGIN_EVERY,
    context=None,
) -> dict:
    """Run the goal command, write the outputs; returns the key numbers."""
    system = build(length, mass, gravity, q0)
    asm = system.assemble()
    task = end_point_task(system, length)
    goal = np.asarray(goal, dtype=float)
    report = fb.control.actuation_report(asm, 0.0, asm.q0, np.zeros(asm.n_dofs), task=task)
    controller = fb.control.PartitionedControl(task, fb.control.Setpoint(goal), kp, kv)
    res = fb.simulate(asm, t_end, integrator=fb.RK4(dt=dt), controller=controller, context=context)
    out = Path(out_dir)
    res.save(out)
    fb.io.write_link_pvd(out, res, every=fb.io.frame_stride(res))  # ParaView series of the chain

    t, H = res.times, res.histories
    passive = np.flatnonzero(np.abs(asm.S).sum(axis=0) == 0)
    e = np.linalg.norm(H["task_error"], axis=1)
    k_conv = converged_index(e, converged)
    t_conv = float(t[k_conv]) if k_conv < len(t) else None
    acc = fb.control.task_acceleration_error(asm, task, res)
    tau_norm = np.linalg.norm(H["tau"], axis=1)
    idx = np.arange(0, len(t), max(1, int(margin_every)))
    margin = np.array([passive_margin(asm, task, res.q[i]) for i in idx])
    windows = oscillation_windows(t, res.q[:, 0], t_conv if t_conv is not None else t[-1], float(t[-1]), window)
    late = t >= (t_conv if t_conv is not None else t[-1])
    maps = report.maps

    columns = {f"q{i + 1}": res.q[:, i] for i in range(3)} | {f"v{i + 1}": res.v[:, i] for i in range(3)}
    columns |= {f"{c}_E": H["task_x"][:, i] for i, c in enumerate("xy")}
    columns |= {f"{c}_goal": H["task_desired"][:, i] for i, c in enumerate("xy")} | {"task_error_norm": e}
    columns |= {f"tau{i + 1}": H["tau"][:, i] for i in range(3)}
    columns |= {f"f_star_{c}": H["task_command"][:, i] for i, c in enumerate("xy")}
    columns |= {"task_acceleration_error": acc, "passive_residual": H["passive_residual"], "energy": H["energy"]}
    fb.io.write_columns_csv(out / "histories.csv", t, columns)
    plot(out / "underactuated_chain.png", res, t[idx], margin)
    title = "Case 09: underactuated chain, partitioned control"
    fb.plots.plot_histories(res, out / "histories.png", panels=("task", "task_error", "torque", "joints"), title=title)

    summary = {
        "n": report.n,
        "m_C": report.n_constraints,
        "p": report.dof,
        "k": report.n_actuators,
        "m_T": report.n_task,
        "motion_actuated": report.motion_actuated,
        "task_actuated": report.task_actuated,
        "passive_labels": list(report.passive_labels),
        "StPhiT_shape": list(maps["passive_constraints"].shape),
        "StPhiT_ok": maps["passive_constraints"].ok,
        "StPhiT_NT_shape": list(maps["passive_nullspace"].shape),
        "StPhiT_NT_rank": maps["passive_nullspace"].rank,
        "StPhiT_NT_ok": maps["passive_nullspace"].ok,
        "StPhiT_NT_sigma": float(maps["passive_nullspace"].singular_values.min()),
        "partitioned_ok": report.ok("partitioned"),
        "failures_all": report.failures(),
        "passive_margin_start": float(margin[0]),
        "passive_margin_min": float(margin.min()),
        "x_start": H["task_x"][0].tolist(),
        "goal": goal.tolist(),
        "x_end": H["task_x"][-1].tolist(),
        "task_error_start": float(e[0]),
        "task_error_end": float(e[-1]),
        "task_error_reduction": float(e[0] / max(e[-1], 1e-300)),
        "t_converged": t_conv,
        "max_task_error_after_convergence": float(e[late].max()) if late.any() else None,
        "max_task_error_in_windows": float(e[t >= windows[0][0] - 1e-12].max()) if windows else None,
        "max_task_acceleration_error": float(acc.max()),
        "max_abs_torque_passive": float(np.abs(H["tau"][:, passive]).max()),
        "max_passive_residual": float(H["passive_residual"].max()),
        "max_passive_residual_relative": float(np.max(H["passive_residual"] / np.maximum(tau_norm, 1e-300))),
        "max_abs_torque": float(np.abs(H["tau"]).max()),
        "rms_torque": fb.plots.rms_norm(res, "tau_k"),
        "peak_torque": fb.plots.peak_norm(res, "tau_k"),
        "q1_windows": [list(w) for w in windows],
        "q1_ptp_last": windows[-1][2] if windows else None,
        "q1_ptp_previous": windows[-2][2] if len(windows) > 1 else None,
        "q1_ptp_first_after_convergence": windows[0][2] if windows else None,
        "q1_ptp_ratio_last_to_first": windows[-1][2] / windows[0][2] if windows and windows[0][2] > 0 else None,
        "q1_ptp_ratio_last_to_previous": (
            windows[-1][2] / windows[-2][2] if len(windows) > 1 and windows[-2][2] > 0 else None
        ),
        "q_ptp_after_convergence": np.ptp(res.q[late], axis=0).tolist() if late.any() else None,
        "q1_period": mean_period(t[late], res.q[late, 0]) if late.any() else None,
        "actuation_report": str(report),
    }
    summary |= {"kp": kp, "kv": kv, "dt": dt, "t_end": t_end, "window": window, "n_steps": int(res.n_steps)}
    (out / "summary.txt").write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    return summary


if __name__ == "__main__":
    main()
