"""Case 15: a rigid arm places the tip of the flexible beam it carries — rank report, inverse statics, a
quasi-static sequence and a simulation that brings the tip to the target [DE 6.3, Fig. 16].

Problem: the two-link arm of ``fb.mechanisms.arm_with_beam`` in the vertical xz-plane (links 0.5 m
and 0.4 m, uniform rods of 2 kg and 1 kg, revolute joints about y, both actuated), carrying an aluminium-like
beam 0.6 × 0.04 × 0.04 m (ρ 2700 kg/m³, E 7e7 Pa — soft, so it sags visibly — ν 0.3, Kelvin–Voigt
retardation time DAMPING s) clamped on the flange at the tip of link 2; 12 × 2 × 2 eight-node ANCF bricks
with incompatible modes (the default; ORDER = 2: 27-node). At the start the tip node sits 4.48 cm from the
straight beam (Euler–Bernoulli 4.5 cm, see case 14; plain trilinear bricks lock in bending and gave 2.7 cm).
Gravity −9.81 m/s² along z. The task is the (x, z) position of the node at the centre of the beam's free end
(a nodal coordinate of the flexible body); the actuators are the two joints, so the task coordinates are not
actuated coordinates and reach the tip only through the beam's elasticity.

The start is the static equilibrium with the joints held at Q0 = (0.3, −0.5) rad by their holding torques.
The target is the start tip position shifted by TARGET_SHIFT = (−0.10, +0.15) m.

Steps and expected results:
1. Rank report [DE 5.3, DE 6.3]: with the joints actuated and the task on a beam node, the direct map
   J̄ᵀΘᵀSᵀ of the dynamic formulation [DE-69] is rank-deficient: the joint torques reach the tip acceleration
   only through the beam's consistent mass coupling, which falls off along it (≈ ×0.25 per element). So the
   dynamic task-level controllers cannot be used for this task and DE 6.3 turns to statics.
2. Inverse statics [DE 6.3]: joint torques τ_k, configuration q and multipliers λ with the system in static
   equilibrium and the tip node at the target. Expected: task residual ≤ 1e-8 m; an independent forward
   static solve with those torques puts the tip on the target to 1e-8 m.
3. Quasi-static sequence: PATH_POINTS equilibria along the straight tip path from start to target.
4. Simulation (generalized-α, ρ∞ = RHO_INF, step DT): the joints follow the sequence's joint angles
   with the sequence's torques as feedforward, τ_k = τ_ff(s) + KP (q_ref(s) − q_j) − KD q̇_j, the path
   parameter s(t) a quintic from 0 to 1 over T_MOVE seconds, then held. The feedforward and the PD law hold
   exactly the inverse-statics equilibrium at the end, so with Kelvin–Voigt damping in the beam the tip
   settles on the target: the tip error decays to ≤ 1e-4 m by T_END.

Measured at full size (summary.txt; 12 × 2 × 2 eight-node bricks, 353 coordinates, 36.5 s; docs/verification.md,
"Case 15", records the rest): direct map σ = 8.9e-9, 6.9e-10 [1/m]: rank 0, the report FAILS (σ_max is 5.7e-9
of the same map with every coordinate actuated: the best direction needs about 1.7e8 times the effort of full
actuation); tests/test_case_15_beam_tip.py shows the collapse with the mesh (rank 2 at 6 × 1 × 1, round-off
at 24 × 1 × 1). Holding torques (−40.96, −19.44) N·m; inverse statics τ_k = (−38.03, −18.05) N·m in 15
iterations, task residual 0; the forward re-solve puts the tip on the target to 2.0e-14 m. Simulation: tip
error at most 1.2 mm after the move and 1.6e-10 m at T_END; energy balance |ΔE − W + D| = 3.8e-5 of W.

Outputs in out_dir: sequence/ and simulation/ (Results.save; simulation/ with a ParaView series of the
beam), fig16.png (the tip path: quasi-static sequence, simulated trajectory, target; the beam at start and
end), tip_error.png (tip error vs time, log scale), inputs.png (joint torques: feedforward and applied),
summary.txt (JSON). Sources: [DE] seeds 003, section 6.3 and Fig. 16.
"""

import json
from pathlib import Path

import numpy as np

import flexbody as fb

LENGTHS = (0.5, 0.4)  # m, links l1, l2
MASSES = (2.0, 1.0)  # kg, uniform rods
BEAM_SIZE = (0.6, 0.04, 0.04)  # m, beam (L, b, h)
DIVISIONS = (12, 2, 2)  # -, beam elements along x, y, z
ORDER = 1  # -, 1: 8-node bricks, 2: 27-node
YOUNG = 7e7  # Pa, Young's modulus of the beam (soft: it sags visibly under its weight)
DENSITY = 2700.0  # kg/m³, density of the beam
DAMPING = 0.02  # s, Kelvin–Voigt retardation time of the beam
Q0 = (0.3, -0.5)  # rad, joint angles held at the start
TARGET_SHIFT = (-0.10, 0.15)  # m, target tip (x, z) − start tip (x, z)
PATH_POINTS = 11  # -, equilibria of the quasi-static sequence (start and target included)
T_MOVE = 2.0  # s, duration of the commanded move
T_END = 5.0  # s, end time of the simulation
DT = 2e-3  # s, generalized-α step
RHO_INF = 0.8  # -, spectral radius at infinity (mild damping of the highest modes)
KP = 400.0  # N·m/rad, joint PD around the sequence's joint angles
KD = 60.0  # N·m·s/rad, joint PD damping gain


def build(
    lengths=LENGTHS,
    masses=MASSES,
    beam_size=BEAM_SIZE,
    divisions=DIVISIONS,
    order=ORDER,
    young=YOUNG,
    density=DENSITY,
    damping=DAMPING,
    q0=Q0,
) -> fb.System:
    """The arm with the beam clamped on its flange, joints free and actuated."""
    return fb.mechanisms.arm_with_beam(
        lengths=tuple(lengths),
        masses=tuple(masses),
        beam_size=tuple(beam_size),
        divisions=tuple(divisions),
        order=order,
        young=young,
        density=density,
        damping=damping,
        q0=tuple(q0),
    )


def tip_task(asm) -> fb.PointTask:
    """(x, z) of the node of the beam's free end (node set "x1") nearest to that face's centre."""
    beam = asm.bodies[0]
    face = beam.nodes("x1")
    centre = beam.mesh.points[face].mean(axis=0)
    return fb.PointTask(fb.nearest_node(beam, centre), components=(0, 2), name="tip")


def task(asm) -> fb.PointTask:
    """The case's task (for ``flexbody info``): the beam tip (x, z)."""
    return tip_task(asm)


def tip_positions(asm, task, q_history) -> np.ndarray:
    """(s, 2) tip (x, z) along a history of configurations."""
    return np.array([task.evaluate(asm.workspace(0.0, q)).x for q in q_history])


class JointServo:
    """τ (n,) = Sᵀ[τ_ff(s) + KP (q_ref(s) − S q) − KD S v] along the quasi-static sequence, s(t) quintic."""

    def __init__(self, asm, sequence, t_move, kp, kd):
        self.S = np.asarray(asm.S, dtype=float)
        self.tau_ff = sequence.histories["tau_k"]
        self.q_ref = sequence.q @ self.S.T
        self.t_move, self.kp, self.kd = float(t_move), float(kp), float(kd)

    def path_parameter(self, t: float) -> float:
        u = min(max(t / self.t_move, 0.0), 1.0)
        return u**3 * (10.0 - 15.0 * u + 6.0 * u * u)

    def references(self, t: float) -> tuple[np.ndarray, np.ndarray]:
        """(τ_ff, q_ref) at time t, interpolated linearly between the sequence's equilibria."""
        x = self.path_parameter(t) * (len(self.tau_ff) - 1)
        i = min(int(x), len(self.tau_ff) - 2)
        w = x - i
        return ((1 - w) * self.tau_ff[i] + w * self.tau_ff[i + 1], (1 - w) * self.q_ref[i] + w * self.q_ref[i + 1])

    def __call__(self, t, q, v) -> np.ndarray:
        tau_ff, q_ref = self.references(t)
        return self.S.T @ (tau_ff + self.kp * (q_ref - self.S @ q) - self.kd * (self.S @ v))


def statics(asm, task, target_shift, path_points) -> dict:
    """Steps 1–3: start equilibrium, rank report, inverse statics with an independent re-solve, sequence."""
    tau_hold, start = fb.holding_inputs(asm)
    x0 = task.evaluate(asm.workspace(0.0, start.q)).x
    target = x0 + np.asarray(target_shift, dtype=float)
    report = fb.control.actuation_report(asm, 0.0, start.q, np.zeros(asm.n_dofs), task=task)
    solution = fb.inverse_statics(asm, task, target, tau_k0=tau_hold, q0=start.q)  # inverse statics
    again = fb.solve_static(asm, tau_k=solution.tau_k, q_start=solution.q)  # forward, to check
    x_again = task.evaluate(asm.workspace(0.0, again.q[-1])).x
    path = x0 + np.linspace(0.0, 1.0, path_points)[:, None] * (target - x0)
    sequence = fb.quasi_static_sequence(asm, task, path, tau_k0=tau_hold, q0=start.q)
    out = {"tau_hold": tau_hold, "start": start, "x0": x0, "target": target, "report": report}
    return out | {"solution": solution, "resolve_error": float(np.abs(x_again - target).max()), "sequence": sequence}


def simulate_move(asm, task, sequence, start, t_move, t_end, dt, rho_inf, kp, kd, context=None) -> fb.Results:
    """Step 4: the servo along the sequence from the start equilibrium, at rest."""
    servo = JointServo(asm, sequence, t_move, kp, kd)
    integrator, v0 = fb.GeneralizedAlpha(dt=dt, rho_inf=rho_inf), np.zeros(asm.n_dofs)
    return fb.simulate(asm, t_end, integrator=integrator, tau=servo, q0=start.q, v0=v0, context=context), servo


def main(
    out_dir="out/15_beam_tip_inverse_statics",
    divisions=DIVISIONS,
    order=ORDER,
    young=YOUNG,
    damping=DAMPING,
    q0=Q0,
    target_shift=TARGET_SHIFT,
    path_points=PATH_POINTS,
    t_move=T_MOVE,
    t_end=T_END,
    dt=DT,
    rho_inf=RHO_INF,
    kp=KP,
    kd=KD,
    context=None,
) -> dict:
    """Statics (rank report, inverse statics, sequence), the simulated move, outputs and summary."""
    params = {k: v for k, v in locals().items() if k not in ("out_dir", "context")}  # the case's parameters
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    asm = build(divisions=divisions, order=order, young=young, damping=damping, q0=q0).assemble()
    task = tip_task(asm)
    st = statics(asm, task, target_shift, int(path_points))
    st["sequence"].save(out / "sequence")
    res, servo = simulate_move(
        asm, task, st["sequence"], st["start"], t_move, t_end, dt, rho_inf, kp, kd, context=context
    )
    fb.io.write_results(out / "simulation", res)
    tips = tip_positions(asm, task, res.q)
    error = np.linalg.norm(tips - st["target"], axis=1)
    summary = _summary(asm, st, res, error, params)
    (out / "summary.txt").write_text(json.dumps(summary, indent=2))
    _plot(out, asm, task, st, res, tips, error, servo)
    return summary


def _summary(asm, st, res, error, params) -> dict:
    sol, direct, h = st["solution"], st["report"].maps["direct"], res.histories
    E, W, D = h["energy"], h["applied_work"][-1], h["dissipated"][-1]
    after = error[res.times >= params["t_move"]]
    inverse = {"tau_k": sol.tau_k.tolist(), "residual": sol.residual, "reachable": sol.reachable}
    inverse |= {"iterations": sol.iterations, "forward_resolve_error": st["resolve_error"]}
    simulation = {"steps": int(len(res.times) - 1), "final_tip_error": float(error[-1])}
    simulation |= {"max_tip_error_after_move": float(after.max()) if after.size else None}
    simulation |= {"max_violation": float(h["violation"].max()), "applied_work": float(W), "dissipated": float(D)}
    simulation["energy_balance_error_over_work"] = float(abs(E[-1] - E[0] - W + D) / max(abs(W), 1e-300))
    return {
        "parameters": {k: (list(v) if isinstance(v, tuple) else v) for k, v in params.items()},
        "n_coordinates": int(asm.n_dofs),
        "start_tip": st["x0"].tolist(),
        "target": st["target"].tolist(),
        "direct_map": {"singular_values": direct.singular_values.tolist(), "rank": direct.rank, "ok": direct.ok},
        "holding_torques": st["tau_hold"].tolist(),
        "inverse_statics": inverse,
        "sequence_max_residual": float(st["sequence"].histories["task_residual"].max()),
        "simulation": simulation,
    }


def _plot(out, asm, task, st, res, tips, error, servo) -> None:
    beam = asm.bodies[0]
    fig, ax = fb.plots.subplots(figsize=(6, 5))
    for q, style, label in ((st["start"].q, "0.6", "beam at start"), (res.q[-1], "C2", "beam at the end")):
        nodes = asm.coordinates(beam, q)
        ax.plot(nodes[:, 0], nodes[:, 2], ".", color=style, ms=2, label=label)
    path = st["sequence"].histories["task_x"]
    ax.plot(path[:, 0], path[:, 1], "o-", ms=3, label="quasi-static sequence")
    ax.plot(tips[:, 0], tips[:, 1], "-", lw=1, label="simulated tip")
    ax.plot(*st["target"], "kx", ms=10, label="target")
    ax.set_xlabel("x [m]")
    ax.set_ylabel("z [m]")
    ax.axis("equal")
    ax.legend(fontsize=8)
    fb.plots.save(fig, out / "fig16.png", dpi=120, tight=False)
    t, error_panel = res.times, {"ylabel": "tip error |tip − target| [m]", "curves": {"tip": (res.times, error)}}
    moved = {"end of the move": ([servo.t_move] * 2, [max(error.min(), 1e-16), error.max()])}
    fb.plots.plot_curves(out / "tip_error.png", [{**error_panel, "log": True, "references": moved}], size=(6, 3.5))
    applied = np.array([servo.S @ servo(ti, q, v) for ti, q, v in zip(t, res.q, res.v)])
    feedforward = np.array([servo.references(ti)[0] for ti in t])
    curves = {f"joint {j + 1} applied": (t, applied[:, j]) for j in range(applied.shape[1])}
    references = {f"joint {j + 1} feedforward": (t, feedforward[:, j]) for j in range(applied.shape[1])}
    panel = {"ylabel": "joint torque [N·m]", "curves": curves, "references": references}
    fb.plots.plot_curves(out / "inputs.png", [panel], size=(6, 3.5))


if __name__ == "__main__":
    print(json.dumps(main(), indent=2))
