"""Case 08: task control of a parallel platform with loop closures and passive joints [DE 5.4.2, Figs 11–13].

Problem: the planar parallel mechanism of ``mechanisms.parallel_platform`` (defaults: base radius 1 m,
platform radius 0.3 m, leg links 0.7 m of 0.5 kg each as uniform rods, platform 1 kg, platform points
twisted by π/3, gravity 9.81 m/s² along −y). Coordinates in DE's order: q₁..q₆ = (hip₁, elbow₁, hip₂,
elbow₂, hip₃, elbow₃), q₇, q₈ = platform centre (x, y), q₉ = platform angle θ; three loop closures of two rows
each [DE-96] (n = 9, m_C = 6, p = 3); only the elbows are actuated (k = 3, S̃ selects q₁, q₃, q₅, q₇, q₈, q₉
[DE-98]). Starting at rest in the builder's default pose (platform at the origin, θ = 0), two runs of
task/constraint partitioning [DE-84, DE-92] with K_p = 100, K_v = 20 (DE Figs 12, 13) under a goal position
command:

(a) task x = (q₂, q₄, q₆) (the elbows, J of [DE-97]); goal = initial elbows + ELBOW_STEP = (0.2, −0.15, 0.1) rad;
(b) task x = (q₇, q₈, q₉) (the platform pose); goal (0, 0, ROTATION = 0.3 rad): rotate, centre fixed.

The passive-joint condition S̃(Jᵀf + Φᵀf_C) = 0 [DE-91] is imposed by the controller because the model's
S selects only the elbows; S̃Φᵀ is 6 × 6 and invertible, so f_C = −(S̃Φᵀ)⁻¹S̃Jᵀf [DE-99]. J̌ = [J; Φ] is
9 × 9, so there is no null space (τ = Jᵀf + Φᵀf_C). Our choices (not in DE): the dimensions and masses, the
goals, 2 s per run, RK4 with Δt = 1 ms.

Expected: zero torque at the six passive joints (the applied τ = Sᵀτ_k is zero there by construction; the
controller's own generalized force, recorded as ‖S̃τ‖ = "passive_residual", must be at round-off, otherwise
the actuators could not produce it); the task converges; the plant's task acceleration J a + J̇q̇ equals
the commanded f* at every step (1e-8 relative to max(1, |f*|)); the constraints hold; in (b) the platform
centre stays at the origin (its commanded acceleration is −K_p x − K_v ẋ = 0 from rest at x = 0).

Independent check of [DE-99] (tests/test_cases_control_de.py): at every recorded state, with plain numpy from
M, b, g, the raw constraint Jacobian Φ (6 × 9) and its bias, f = Λ̌₁₁f* + μ̌₁ + p̌₁ [DE-87, DE-92] and
f_C = −(S̃Φᵀ)⁻¹S̃Jᵀf [DE-99] give τ_DE = Jᵀf + Φᵀf_C, the applied τ. (flexbody works with orthonormal
independent rows Φ̂ instead of Φ, so its f_C differs from DE's by the change of basis; the generalized force
Φ̂ᵀf̂_C = Φᵀf_C and f itself do not.)

Remark on DE's text: for (a) S̃Jᵀ = 0 and [DE-99] gives f_C = 0 as DE says. For (b) DE also writes "f_C = 0
since S̃Jᵀf = 0", but there J selects q₇, q₈, q₉, which are passive, so S̃Jᵀf = (0, 0, 0, f) ≠ 0 and [DE-99]
gives f_C ≠ 0: the constraint forces are what carries the actuator effort to the platform. Measured max |f_C|:
exactly 0 for (a); for (b) up to 15.4 N from [DE-99] on DE's raw rows Φ (the tests) and up to 24.4 N for the
controller's f̂_C on its orthonormal rows Φ̂ (the summary) — the same generalized force.

Outputs in out_dir: results of each run (Results.save, with a ParaView series and scene.vtp) in ``elbows/``
and ``platform/``, histories.csv (both
runs, columns prefixed "a_" and "b_"), parallel_platform.png (Figs 12, 13: task coordinates with goals and
all nine generalized forces of each run; the six passive ones are identically zero), elbows.png and
platform.png (flexbody.io.plots overviews) and summary.txt (JSON of the returned dict, with the actuation
report at the start).
"""

import json
from pathlib import Path

import numpy as np

import flexbody as fb

BASE_RADIUS = 1.0  # m, radius of the circle of the three hip joints
PLATFORM_RADIUS = 0.3  # m, radius of the circle of the platform's joint points
LINK_LENGTH = 0.7  # m, both links of each leg
LINK_MASS = 0.5  # kg, each leg link (uniform rod)
PLATFORM_MASS = 1.0  # kg, mass of the platform
GRAVITY = 9.81  # m/s², gravity along −y
ELBOW_STEP = (0.2, -0.15, 0.1)  # rad, goal of (a) relative to the initial elbows
ROTATION = 0.3  # rad, goal platform angle of (b) (centre held at the origin)
KP = 100.0  # 1/s², task position gain K_p [DE Figs 12, 13]
KV = 20.0  # 1/s, task velocity gain K_v [DE Figs 12, 13]
DT = 1e-3  # s, RK4 step
T_END = 2.0  # s, each run
_TREE = "platform_mechanism"
_ELBOWS = [f"{_TREE}.elbow{i}" for i in (1, 2, 3)]
_PLATFORM = [f"{_TREE}.x", f"{_TREE}.y", f"{_TREE}.platform"]


def build(
    base_radius=BASE_RADIUS,
    platform_radius=PLATFORM_RADIUS,
    link_length=LINK_LENGTH,
    link_mass=LINK_MASS,
    platform_mass=PLATFORM_MASS,
    gravity=GRAVITY,
) -> fb.System:
    """The parallel platform of [DE 5.4.2] with only the elbows actuated."""
    return fb.mechanisms.parallel_platform(
        base_radius=base_radius,
        platform_radius=platform_radius,
        upper=link_length,
        lower=link_length,
        platform_mass=platform_mass,
        link_mass=link_mass,
        gravity=(0.0, -gravity, 0.0),
    )


def task(asm) -> dict:
    """The case's two tasks (for ``flexbody info``): (a) the elbows, (b) the platform pose."""
    return {"elbows": fb.JointTask(_ELBOWS, name="elbows"), "platform": fb.JointTask(_PLATFORM, name="platform")}


def plot(path, runs: dict, labels) -> None:
    fig, axes = fb.plots.subplots(2, 2, figsize=(11, 8), sharex=True)
    titles = {
        "elbows": ("(A) elbow joints q2, q4, q6 (Fig. 12 left)", "(B) generalized forces, elbow task"),
        "platform": ("(C) platform x, y, θ (Fig. 13 left)", "(D) generalized forces, platform task"),
    }
    for row, (name, res) in enumerate(runs.items()):
        H, t = res.histories, res.times
        ax = axes[row, 0]
        units = fb.plots.history_units(res, "task_x")  # from the model: [rad] joints, [m] x, y
        for i, lab in enumerate(res.metadata["task_labels"]):
            (line,) = ax.plot(t, H["task_x"][:, i], label=lab.split(".")[-1] + (f" [{units[i]}]" if units else ""))
            ax.plot(t, H["task_desired"][:, i], "--", color=line.get_color(), lw=1)
        ax.set_title(titles[name][0] + "; dashed: goal", fontsize=10)
        ax.set_ylabel(fb.plots.axis_label("task coordinates", units, "m or rad"))
        ax = axes[row, 1]
        units = fb.plots.history_units(res, "tau")  # [N·m] on revolute, [N] on prismatic joints
        for i, lab in enumerate(labels):
            passive = not np.any(H["tau"][:, i])
            unit = f" [{units[i]}]" if units else ""
            ax.plot(
                t,
                H["tau"][:, i],
                ":" if passive else "-",
                lw=1.0 if passive else 1.4,
                label=lab.split(".")[-1] + unit + (" (passive, ≡ 0)" if passive else ""),
            )
        ax.set_title(titles[name][1] + " (Figs 12, 13 right)", fontsize=10)
        ax.set_ylabel(fb.plots.axis_label("generalized forces τ", units, "N or N·m"))
    for ax in axes.ravel():
        ax.legend(fontsize=7, ncol=2)
        ax.grid(alpha=0.3)
    for ax in axes[1]:
        ax.set_xlabel("t [s]")
    fig.suptitle(
        "Parallel platform, elbows actuated, partitioned control with f_C from [DE-91] (DE 5.4.2)", fontsize=10
    )
    fb.plots.save(fig, path, dpi=120)


def run_summary(asm, task, res, passive) -> dict:
    H = res.histories
    e = np.linalg.norm(H["task_error"], axis=1)
    tau_norm = np.linalg.norm(H["tau"], axis=1)
    acc = fb.control.task_acceleration_error(asm, task, res)
    return {
        "x_start": H["task_x"][0].tolist(),
        "goal": H["task_desired"][-1].tolist(),
        "x_end": H["task_x"][-1].tolist(),
        "task_error_start": float(e[0]),
        "task_error_end": float(e[-1]),
        "task_error_reduction": float(e[0] / max(e[-1], 1e-300)),
        "max_task_acceleration_error": float(acc.max()),
        "max_abs_torque_passive": float(np.abs(H["tau"][:, passive]).max()),
        "max_passive_residual": float(H["passive_residual"].max()),
        "max_passive_residual_relative": float(np.max(H["passive_residual"] / np.maximum(tau_norm, 1e-300))),
        "max_abs_torque_actuated": float(np.abs(H["tau_k"]).max()),
        "rms_torque": fb.plots.rms_norm(res, "tau_k"),
        "peak_torque": fb.plots.peak_norm(res, "tau_k"),
        "max_violation": float(H["violation"].max()),
        "max_velocity_violation": float(H["velocity_violation"].max()),
        "max_abs_fC_controller": float(np.abs(H["constraint_force_command"]).max()),
        "platform_pose_end": res.q[-1, 6:9].tolist(),
        "max_abs_platform_x": float(np.abs(res.q[:, 6]).max()),
        "max_abs_platform_y": float(np.abs(res.q[:, 7]).max()),
        "q_end": res.q[-1].tolist(),
    }


def main(
    out_dir="out/08_parallel_platform_control",
    base_radius=BASE_RADIUS,
    platform_radius=PLATFORM_RADIUS,
    link_length=LINK_LENGTH,
    link_mass=LINK_MASS,
    platform_mass=PLATFORM_MASS,
    gravity=GRAVITY,
    elbow_step=ELBOW_STEP,
    rotation=ROTATION,
    kp=KP,
    kv=KV,
    dt=DT,
    t_end=T_END,
    context=None,
) -> dict:
    """Run the elbow task (a) and the platform task (b), write the outputs; returns the key numbers."""
    asm = build(base_radius, platform_radius, link_length, link_mass, platform_mass, gravity).assemble()
    q0, zero = asm.q0, np.zeros(asm.n_dofs)
    passive = np.flatnonzero(np.abs(asm.S).sum(axis=0) == 0)
    tasks = {"elbows": fb.JointTask(_ELBOWS, name="elbows"), "platform": fb.JointTask(_PLATFORM, name="platform")}
    goals = {
        "elbows": q0[tasks["elbows"].indices(asm)] + np.asarray(elbow_step, dtype=float),
        "platform": np.array([0.0, 0.0, float(rotation)]),
    }
    out = Path(out_dir)
    summary = {
        "coordinate_labels": list(asm.coordinate_labels),
        "actuated_labels": list(asm.actuated_labels),
        "passive_labels": [asm.coordinate_labels[i] for i in passive],
    }
    runs = {}
    for key in ("elbows", "platform"):
        task = tasks[key]
        report = fb.control.actuation_report(asm, 0.0, q0, zero, task=task)
        S_Phi = report.maps["passive_constraints"]
        controller = fb.control.PartitionedControl(task, fb.control.Setpoint(goals[key]), kp, kv)
        res = fb.simulate(asm, t_end, integrator=fb.RK4(dt=dt), controller=controller, context=context)
        res.save(out / key)
        fb.io.write_link_pvd(out / key, res, every=fb.io.frame_stride(res))  # series with the ground pivots
        runs[key] = res
        summary[key] = {
            "n": report.n,
            "m_C": report.n_constraints,
            "constraint_rank": report.constraint_rank,
            "p": report.dof,
            "k": report.n_actuators,
            "m_T": report.n_task,
            "motion_actuated": report.motion_actuated,
            "task_actuated": report.task_actuated,
            "partitioned_ok": report.ok("partitioned"),
            "StPhiT_shape": list(S_Phi.shape),
            "StPhiT_rank": S_Phi.rank,
            "StPhiT_ok": S_Phi.ok,
            "StPhiT_sigma_min": float(S_Phi.singular_values.min()),
            "Jcheck_sigma_min": float(report.maps["independent"].singular_values.min()),
            "actuation_report": str(report),
            **run_summary(asm, task, res, passive),
        }

    columns = {}
    for key, letter in (("elbows", "a"), ("platform", "b")):
        res, H = runs[key], runs[key].histories
        columns.update({f"{letter}_q{i + 1}": res.q[:, i] for i in range(asm.n_dofs)})
        columns.update({f"{letter}_x{i + 1}": H["task_x"][:, i] for i in range(3)})
        columns.update({f"{letter}_xd{i + 1}": H["task_desired"][:, i] for i in range(3)})
        columns.update({f"{letter}_tau{i + 1}": H["tau"][:, i] for i in range(asm.n_dofs)})
        columns.update({f"{letter}_passive_residual": H["passive_residual"], f"{letter}_violation": H["violation"]})
    fb.io.write_columns_csv(out / "histories.csv", runs["elbows"].times, columns)  # same time grid for both runs
    plot(out / "parallel_platform.png", runs, asm.coordinate_labels)
    for key in runs:
        fb.plots.plot_histories(
            runs[key],
            out / f"{key}.png",
            panels=("task", "task_error", "torque", "violation"),
            title=f"Case 08 ({key} task): parallel platform, partitioned control",
        )
    summary.update(kp=kp, kv=kv, dt=dt, t_end=t_end, n_steps=int(runs["elbows"].n_steps))
    (out / "summary.txt").write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    return summary


if __name__ == "__main__":
    main()
