"""Case 32: a rest-to-rest slew of case 16's arm with its ANCF beam, planned on the flexible model, against the same
move planned on the rigid model and that move shaped by a zero-vibration (ZV) input shaper.

Problem: the arm of ``fb.mechanisms.arm_with_beam`` (links 0.5 m and 0.4 m, uniform rods 2 kg and 1 kg, revolute
joints about y, both actuated) in a horizontal plane (no gravity) carrying the beam 0.6 × 0.04 × 0.04 m (ρ 2700 kg/m³,
E YOUNG Pa, ν 0.3, Kelvin–Voigt retardation DAMPING s; DIVISIONS 27-node bricks), at rest at Q_START, is to be at rest
at Q_END after DURATION s, its beam undeformed. The torques are cubic splines through KNOTS values per joint
(``fb.SplineInputs``), generalized-α at DT.

Three plans, each simulated on the full ANCF model:

- *rigid-model*: the least effort ½∫‖τ‖² dt that moves the arm with its beam rigid (a link fixed to link 2 with the
  beam's mass and inertia) from rest to rest — what a planner that ignores the flexibility finds;
- *flexible*: the least effort on the full model with the joints at Q_END at rest and the beam's residual vibration
  energy (``fb.FlexibleEnergy``: its kinetic and strain energy at the end) at most the rigid-model plan's divided by
  BOUND_RATIO (``fb.optimize_inputs``, started from the rigid-model plan);
- *shaped*: the rigid-model torques convolved with the ZV shaper of the arm's first flexible mode at Q_END
  (``fb.modal_analysis``, joints free): ½τ(t) + ½τ(t − T_d/2), T_d the mode's period, so the move lasts
  DURATION + T_d/2.

Every run goes on for TAIL s after its move with the torques zero (at rest without gravity nothing is to be held).
The verification runs take the torques exactly (steps end on the knots, each evaluated where the step's equations
hold: :mod:`flexbody.solvers.input_breaks`) at half the planning step.

Expected results and their sources:
1. The rigid-model plan moves the rigid model exactly (its constraints, to the optimiser's tolerance) but leaves the
   full model's beam ringing: its residual energy E_rigid is what a rigid planner leaves (#37 Done-when: the flexible
   plan must leave at least 100 times less).
2. The flexible plan meets its bound: E_flex ≤ E_rigid / BOUND_RATIO, with its joints at Q_END at rest; its residual
   energy is measured again by an independent run of the full model at half the step (the optimiser's own run is not
   the verification).
3. Input shaping (Singer & Seering 1990) cancels one mode of a linear system at the price of half its period; on
   this arm, whose beam and joints move together and whose mode changes along the move, it cancels little and moves
   the end pose (measured: 1.4 times less energy than the rigid-model plan, 0.096 rad off, 0.17 s longer).

Outputs in out_dir: torques.png, vibration.png, summary.txt (JSON).
"""

import json
import time
from pathlib import Path

import numpy as np

import flexbody as fb

LENGTHS = (0.5, 0.4)  # m, links l1, l2
BEAM_SIZE = (0.6, 0.04, 0.04)  # m, the beam (arm_with_beam's default), density 2700 kg/m³
DIVISIONS = (6, 1, 1)  # -, beam elements (length, width, height), 27-node bricks (case 16's beam)
YOUNG = 7e7  # Pa, Young's modulus of the beam
DAMPING = 0.002  # s, Kelvin–Voigt retardation time of the beam
Q_START = (0.6, -1.5)  # rad, start joint angles
Q_END = (1.1, -1.0)  # rad, end joint angles
DURATION = 0.6  # s, the move
KNOTS = 13  # -, spline knots per joint over the move
DT = 2e-3  # s, generalized-α step of the plans
BOUND_RATIO = 1000.0  # -, the flexible plan's residual energy bound: E_rigid / BOUND_RATIO
TAIL = 0.5  # s, the runs go on this long after the move, torques held at their final value


def build(rigid: bool, q0=Q_START, divisions=DIVISIONS, young=YOUNG, damping=DAMPING) -> fb.System:
    """The arm with its beam in a horizontal plane at the joint angles ``q0``: the full ANCF model, or the beam rigid
    on link 2."""
    full = fb.mechanisms.arm_with_beam(
        lengths=LENGTHS, divisions=tuple(divisions), order=2, young=young, damping=damping, q0=q0,
        gravity=(0.0, 0.0, 0.0),
    )  # fmt: skip
    if not rigid:
        return full
    tree = full.trees[0]
    size, density = np.array(BEAM_SIZE), 2700.0
    mass = density * float(np.prod(size))
    inertia = (
        mass / 12.0 * np.array([size[1] ** 2 + size[2] ** 2, size[0] ** 2 + size[2] ** 2, size[0] ** 2 + size[1] ** 2])
    )
    tree.add_link("beam", "l2", fb.Fixed(), origin=(LENGTHS[1], 0.0, 0.0), mass=mass, com=(size[0] / 2, 0.0, 0.0),
                  inertia=tuple(inertia))  # fmt: skip
    return fb.System([tree], actuators=[tree.link("l1"), tree.link("l2")], q0=q0)


def rest_at(q_end) -> list:
    """The joints at ``q_end`` and at rest at the end of the move."""
    return [fb.RunConstraint.equal(fb.FinalValue(i, rate), value) for i in (0, 1) for rate, value in
            ((False, q_end[i]), (True, 0.0))]  # fmt: skip


def plan_rigid(duration, knots, dt) -> fb.OptimalInputs:
    """The least-effort rest-to-rest torques of the arm with its beam rigid."""
    asm = build(True).assemble()
    inputs = fb.SplineInputs(np.linspace(0.0, duration, knots), np.zeros((knots, 2)))
    return fb.optimize_inputs(asm, duration, fb.Effort(), inputs, constraints=rest_at(Q_END),
                              integrator=fb.GeneralizedAlpha(dt=dt, tol=1e-12))  # fmt: skip


def plan_flexible(asm, first_guess, energy_bound, dt) -> fb.OptimalInputs:
    """The least-effort rest-to-rest torques of the full model with the beam's residual energy bounded."""
    beam = asm.flexible.bodies[0]
    constraints = [*rest_at(Q_END), fb.RunConstraint(fb.FlexibleEnergy(beam), upper=energy_bound)]
    return fb.optimize_inputs(asm, float(first_guess.times[-1]), fb.Effort(), first_guess, constraints=constraints,
                              integrator=fb.GeneralizedAlpha(dt=dt, tol=1e-12))  # fmt: skip


class Torques:
    """τ(t, q, v) = Sᵀu(t) of a torque profile ``u(t, t_start)`` (n_u,) [N·m] — its value at t within the step that
    starts at t_start — with its ``breakpoints`` [s] and whether it ``jumps`` there: an input the integrators take
    exactly, ending a step on each breakpoint (:mod:`flexbody.solvers.input_breaks`)."""

    def __init__(self, u, breakpoints, jumps: bool, S: np.ndarray):
        self.u, self.breakpoints, self.jumps, self.S = u, np.unique(np.asarray(breakpoints, dtype=float)), jumps, S

    def __call__(self, t: float, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        return self.u(t, t) @ self.S

    def in_step(self, t_start: float, t: float) -> np.ndarray:
        return self.u(t, t_start) @ self.S


def planned(inputs: fb.SplineInputs, S: np.ndarray) -> Torques:
    """The planned torques over the move, zero after it (at rest, no gravity: nothing to hold)."""
    end = float(inputs.times[-1])
    return Torques(lambda t, start: inputs.at(t) if start < end - 1e-12 else np.zeros(2), inputs.times[1:], True, S)


def shaped(inputs: fb.SplineInputs, period: float, S: np.ndarray) -> Torques:
    """The ZV shaper on ``inputs``: ½u(t) + ½u(t − period/2), each half over its own move and zero outside it."""
    end, delay = float(inputs.times[-1]), 0.5 * period

    def u(t: float, start: float) -> np.ndarray:
        out = np.zeros(inputs.n_inputs)
        for shift in (0.0, delay):
            if shift - 1e-12 <= start < shift + end - 1e-12:
                out = out + 0.5 * inputs.at(min(max(t - shift, 0.0), end))
        return out

    return Torques(u, np.concatenate([inputs.times[1:], inputs.times + delay]), True, S)


def residual(asm, torques: Torques, t_end: float, dt: float):
    """The full model from rest at Q_START under ``torques`` to ``t_end``: (Results, the beam's kinetic and strain
    energy at each recorded state [J])."""
    beam = asm.flexible.bodies[0]
    res = fb.simulate(asm, t_end, integrator=fb.GeneralizedAlpha(dt=dt, tol=1e-12), tau=torques, q0=asm.q0,
                      v0=np.zeros(asm.n_dofs))  # fmt: skip
    cols = asm.slices[beam]
    M = beam.mass_matrix()
    energy = np.array([0.5 * v[cols] @ (M @ v[cols]) + beam.strain_energy(q[cols]) for q, v in zip(res.q, res.v)])
    return res, energy


def joint_error(res, t: float) -> float:
    """max |q_joint(t) − Q_END| [rad] of a recorded run."""
    return float(np.max(np.abs(res.q[int(np.argmin(np.abs(np.asarray(res.times) - t))), :2] - np.asarray(Q_END))))


def energy_at(res, energy, t: float) -> float:
    return float(energy[int(np.argmin(np.abs(np.asarray(res.times) - t)))])


def first_mode_period() -> float:
    """The period [s] of the arm's lowest flexible mode at Q_END, joints free (torque-driven)."""
    modes = fb.modal_analysis(build(False, Q_END), n_modes=4)
    return 1.0 / float(modes.frequencies[modes.n_rigid_body])


def main(out_dir="out/32_arm_slew", duration=DURATION, knots=KNOTS, dt=DT, bound_ratio=BOUND_RATIO, tail=TAIL) -> dict:
    """The three plans, their runs on the full model, the comparison and the summary."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    full = build(False).assemble()
    clock = time.perf_counter()
    rigid = plan_rigid(duration, knots, dt)
    seconds = {"rigid_plan": time.perf_counter() - clock}
    S = np.asarray(full.S, dtype=float)
    res_r, e_r = residual(full, planned(rigid.inputs, S), duration + tail, dt / 2)
    e_rigid = energy_at(res_r, e_r, duration)
    clock = time.perf_counter()
    flexible = plan_flexible(full, rigid.inputs, e_rigid / bound_ratio, dt)
    seconds["flexible_plan"] = time.perf_counter() - clock
    res_f, e_f = residual(full, planned(flexible.inputs, S), duration + tail, dt / 2)
    e_flex = energy_at(res_f, e_f, duration)
    period = first_mode_period()
    res_s, e_s = residual(full, shaped(rigid.inputs, period, S), duration + 0.5 * period + tail, dt / 2)
    e_shaped = energy_at(res_s, e_s, duration + 0.5 * period)
    summary = {
        "residual_energy": {"rigid_model": e_rigid, "flexible": e_flex, "shaped": e_shaped},
        "ratio_rigid_over_flexible": e_rigid / e_flex,
        "ratio_rigid_over_shaped": e_rigid / e_shaped,
        "joint_error_at_end": {
            "rigid_model": joint_error(res_r, duration),
            "flexible": joint_error(res_f, duration),
            "shaped": joint_error(res_s, duration + 0.5 * period),
        },
        "flexible_plan": {
            "success": flexible.success,
            "iterations": flexible.iterations,
            "evaluations": flexible.evaluations,
            "energy_in_its_own_run": float(flexible.constraints[-1]),
            "message": flexible.message,
        },
        "rigid_plan": {"success": rigid.success, "iterations": rigid.iterations,
                       "constraints": rigid.constraints.tolist()},
        "shaper": {"period": period, "duration": duration + 0.5 * period},
        "effort": {"rigid_model": rigid.value, "flexible": flexible.value},
        "seconds": seconds,
        "parameters": {"duration": duration, "knots": knots, "dt": dt, "bound_ratio": bound_ratio, "q_start": Q_START,
                       "q_end": Q_END, "divisions": DIVISIONS, "young": YOUNG, "damping": DAMPING},
    }  # fmt: skip
    plot(out, duration, rigid, flexible, (res_r, e_r), (res_f, e_f), (res_s, e_s))
    (out / "summary.txt").write_text(json.dumps(summary, indent=2))
    return summary


def plot(out: Path, duration, rigid, flexible, *runs) -> None:
    t = np.linspace(0.0, duration, 301)
    fig, ax = fb.plots.subplots(figsize=(7, 3.5))
    for name, plan, style in (("rigid-model", rigid, "--"), ("flexible", flexible, "-")):
        u = np.array([plan.inputs.at(s) for s in t])
        for j in (0, 1):
            ax.plot(t, u[:, j], style, label=f"{name}, joint {j + 1}")
    ax.set(xlabel="t [s]", ylabel="torque [N·m]", title="the planned torques")
    ax.legend()
    fb.plots.save(fig, out / "torques.png", dpi=120)
    fig, ax = fb.plots.subplots(figsize=(7, 3.5))
    for name, (res, energy) in zip(("rigid-model", "flexible", "shaped"), runs):
        ax.semilogy(res.times, np.maximum(energy, 1e-16), label=name)
    ax.axvline(duration, color="0.5", lw=0.8)
    ax.set(xlabel="t [s]", ylabel="beam energy [J]", title="the beam's kinetic and strain energy, full ANCF model")
    ax.legend()
    fb.plots.save(fig, out / "vibration.png", dpi=120)


if __name__ == "__main__":
    print(json.dumps(main(), indent=2))
