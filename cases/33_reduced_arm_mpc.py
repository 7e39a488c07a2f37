"""Case 33: model-predictive control of case 16's arm on its reduced model (case 24's), tracking case 16's flange
circle within torque limits, the plant the full ANCF model; against case 16's operational-space law under the same
limits.

Problem: the arm of ``fb.mechanisms.arm_with_beam`` in the vertical xz-plane (links 0.5 m and 0.4 m, uniform rods
2 kg and 1 kg, revolute joints about y, both actuated; gravity 9.81 m/s² along −z) carrying the beam
0.6 × 0.04 × 0.04 m (ρ 2700 kg/m³, E YOUNG Pa, ν 0.3, Kelvin–Voigt retardation DAMPING s; DIVISIONS 27-node
bricks) attached to the flange of link 2. The plant is the full model (every node a coordinate, the face x = 0
held to the flange by constraint rows), simulated by generalized-α (ρ∞ RHO_INF, DT) from the static equilibrium
with the joints held at Q0; the flange point (x, z) follows case 16's reference (``fb.control.CircleAfterStep``):
a step of OFFSET, then from T_SETTLE a circle of RADIUS at FREQUENCY (its rate rising over T_RAMP). The joint
torques are bounded by LIMITS (|τ_i| ≤ LIMITS_i), which the law's torques on this reference exceed.

Two controllers, each held to the limits:

- *operational space* (case 16's): ``fb.control.DirectMappingControl`` on the full model itself (exact feedback
  linearisation of the flange, KP = ω², KV = 2ω), evaluated every step, its torques clipped to the limits
  (``fb.control.Saturated``);
- *MPC*: ``fb.ModelPredictiveControl`` on the reduced model (``fb.mechanisms.arm_with_reduced_beam``: N_MODES
  Craig–Bampton modes on link 2, case 24), every PERIOD s over HORIZON periods, the bounds in its program; it weighs
  the flange error by OUTPUT_WEIGHT, the change of the torques by RATE_WEIGHT and the rates of the beam's modes by
  MODAL_RATE_WEIGHT (the beam's first bending mode, 2.9 Hz, is barely damped: a controller that only holds the
  flange lets it ring, and holding the flange against its swing needs more than the limits). The plant's state
  reaches it through :meth:`fb.ReducedBody.modal_state` (the full beam's nodes projected on the modes in the frame
  of link 2); it is linearised again every RELINEARIZE updates.

Expected results and their sources:
1. The MPC tracks the circle (t ≥ T_SETTLE + T_RAMP) with a smaller error than the law under the same limits (#37
   Done-when): it sees the reference HORIZON·PERIOD ahead and plans within the limits, where the clipped law reacts.
2. Each MPC update takes at most 1 ms of wall time (median over the run, one thread; #37 Done-when); the report
   gives the median, the mean, the largest and the updates over the budget.

Outputs in out_dir: tracking.png (errors and torques), summary.txt (JSON).
"""

import json
import time
from pathlib import Path

import numpy as np

import flexbody as fb

LENGTHS = (0.5, 0.4)  # m, links l1, l2
DIVISIONS = (6, 1, 1)  # -, beam elements (length, width, height), 27-node bricks (case 16's beam)
YOUNG = 7e7  # Pa, Young's modulus of the beam
DAMPING = 0.002  # s, Kelvin–Voigt retardation time of the beam
Q0 = (0.6, -1.5)  # rad, start joint angles
OFFSET = (0.03, 0.02)  # m, phase-1 goal − start flange (x, z)
OMEGA = 15.0  # rad/s, the law's task bandwidth: KP = ω², KV = 2ω
T_SETTLE = 1.0  # s, phase 1
RADIUS = 0.08  # m, phase-2 circle
FREQUENCY = 0.5  # Hz, phase-2 revolutions per second
T_RAMP = 0.5  # s, rise of the angular rate
T_END = 3.0  # s, end time
DT = 1e-3  # s, generalized-α step of the plant
RHO_INF = 0.99  # -, generalized-α ρ∞ (case 16)
LIMITS = (40.0, 20.0)  # N·m, |τ_1|, |τ_2| at most
N_MODES = 4  # -, Craig–Bampton modes of the MPC's reduced beam
PERIOD = 0.005  # s, the MPC's control period
HORIZON = 20  # -, periods predicted
RELINEARIZE = 4  # -, updates between linearisations
OUTPUT_WEIGHT = 1e3  # 1/m, W_y on the flange error
RATE_WEIGHT = 1e-3  # 1/(N·m)², ρ_Δ on the change of the torques per period
MODAL_RATE_WEIGHT = 10.0  # s/(√kg·m), W_v on the rates of the reduced beam's (mass-normalised) modes


def build(reduced: bool, divisions=DIVISIONS, young=YOUNG, damping=DAMPING, n_modes=N_MODES) -> fb.System:
    """The arm with its beam: full (the plant), or the beam reduced to ``n_modes`` modes on link 2 (the MPC's model)."""
    options = dict(lengths=LENGTHS, divisions=tuple(divisions), order=2, young=young, damping=damping, q0=Q0)
    if not reduced:
        return fb.mechanisms.arm_with_beam(**options)
    return fb.mechanisms.arm_with_reduced_beam(n_modes, **options)


def flange_task(asm) -> fb.PointTask:
    """(x, z) of the flange point, the tip of link 2."""
    return fb.PointTask(asm.trees[0].point("l2", (LENGTHS[1], 0.0, 0.0)), components=(0, 2), name="flange")


def modal_state_map(plant, model):
    """(t, plant state, plant) -> (q, v) of the reduced model: the joints as they are, the beam's nodes projected on
    the modes in the frame of link 2 (:meth:`fb.ReducedBody.modal_state`)."""
    tree, beam, body = plant.trees[0], plant.bodies[0], model.reduced[0]
    joints, modes = model.slices[model.trees[0]], model.slices[body]

    def state_map(t, state, _plant=None):
        ws = plant.workspace(t, state.q, state.v)
        kin = ws.kinematics(tree)
        eta, eta_dot = body.modal_state(
            kin.R[1], kin.p[1], kin.vel[1], plant.coordinates(beam, state.q), plant.coordinates(beam, state.v)
        )
        q, v = np.empty(model.n_dofs), np.empty(model.n_dofs)
        q[joints], v[joints] = state.q[plant.slices[tree]], state.v[plant.slices[tree]]
        q[modes], v[modes] = eta, eta_dot
        return q, v

    return state_map


def controllers(plant, model, reference, limits=LIMITS, **mpc):
    """The clipped operational-space law on the plant and the MPC on the reduced ``model``."""
    lower, upper = -np.asarray(limits, dtype=float), np.asarray(limits, dtype=float)
    law = fb.control.DirectMappingControl(flange_task(plant), reference, kp=OMEGA**2, kv=2.0 * OMEGA)
    rates = np.zeros(model.n_dofs)
    rates[model.slices[model.reduced[0]]] = MODAL_RATE_WEIGHT
    options = dict(
        period=PERIOD,
        horizon=HORIZON,
        relinearize_every=RELINEARIZE,
        output_weight=OUTPUT_WEIGHT,
        rate_weight=RATE_WEIGHT,
        velocity_weight=rates,
    )
    options.update(mpc)
    mpc_control = fb.ModelPredictiveControl(
        model,
        flange_task(model),
        reference,
        lower=lower,
        upper=upper,
        state_map=modal_state_map(plant, model),
        **options,
    )
    return fb.control.Saturated(law, lower, upper), mpc_control


def track(plant, controller, start, t_end=T_END, dt=DT):
    """Run the plant under ``controller`` from the held equilibrium ``start``; (Results, wall seconds)."""
    clock = time.perf_counter()
    res = fb.simulate(
        plant,
        t_end,
        integrator=fb.GeneralizedAlpha(dt=dt, rho_inf=RHO_INF),
        controller=controller,
        q0=start.q,
        v0=np.zeros(plant.n_dofs),
    )
    return res, time.perf_counter() - clock


def flange_errors(plant, res, reference) -> np.ndarray:
    """(s,) |x_d − x| of the flange at every recorded step [m]."""
    task = flange_task(plant)
    out = np.empty(len(res.times))
    for i, (t, q) in enumerate(zip(res.times, res.q)):
        out[i] = np.linalg.norm(reference(t)[0] - task.evaluate(plant.workspace(t, q)).x)
    return out


def tracking_summary(res, errors, t_circle) -> dict:
    circle = res.times >= t_circle
    tau = res.histories["tau_k"]
    return {
        "max_circle_error": float(errors[circle].max()),
        "rms_circle_error": float(np.sqrt(np.mean(errors[circle] ** 2))),
        "max_step_error_after_0.5s": float(errors[(res.times >= 0.5) & (res.times < T_SETTLE)].max()),
        "largest_torques": np.abs(tau).max(axis=0).tolist(),
    }


def plot(path, runs, t_circle) -> None:
    fig, (ax, bx) = fb.plots.subplots(2, 1, figsize=(8, 6), sharex=True)
    for name, (res, errors) in runs.items():
        ax.semilogy(res.times, np.maximum(errors, 1e-7), label=name)
        bx.plot(res.times, res.histories["tau_k"], label=[f"{name} τ1", f"{name} τ2"])
    ax.axvline(t_circle, color="k", lw=0.5)
    ax.set(ylabel="flange error [m]", title="flange tracking within the torque limits")
    bx.set(xlabel="t [s]", ylabel="torque [N·m]")
    ax.legend(), bx.legend(ncol=2, fontsize=7)
    fb.plots.save(fig, path, dpi=120)


def main(out_dir="out/33_reduced_arm_mpc", t_end=T_END, divisions=DIVISIONS, n_modes=N_MODES, **mpc) -> dict:
    """Both controllers on the full plant; the comparison, the MPC's timing, outputs and the summary."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    plant = build(False, divisions).assemble()
    model = build(True, divisions, n_modes=n_modes).assemble()
    _, start = fb.holding_inputs(plant)
    goal = flange_task(plant).evaluate(plant.workspace(0.0, start.q)).x + np.asarray(OFFSET)
    reference = fb.control.CircleAfterStep(goal, T_SETTLE, RADIUS, FREQUENCY, T_RAMP)
    law, mpc_control = controllers(plant, model, reference, **mpc)
    t_circle = T_SETTLE + T_RAMP
    runs, summary = {}, {}
    for name, controller in (("operational space", law), ("MPC", mpc_control)):
        res, wall = track(plant, controller, start, t_end)
        errors = flange_errors(plant, res, reference)
        runs[name] = (res, errors)
        summary[name] = tracking_summary(res, errors, t_circle) | {"wall_seconds": wall}
    report = mpc_control.report()
    summary["MPC"]["updates"] = report.__dict__
    summary["error_ratio_law_over_mpc"] = (
        summary["operational space"]["max_circle_error"] / summary["MPC"]["max_circle_error"]
    )
    summary["parameters"] = {
        "limits": list(LIMITS),
        "n_modes": n_modes,
        "period": mpc.get("period", PERIOD),
        "horizon": mpc.get("horizon", HORIZON),
        "t_end": t_end,
        "dt": DT,
        "divisions": list(divisions),
    }
    plot(out / "tracking.png", runs, t_circle)
    (out / "summary.txt").write_text(json.dumps(summary, indent=2))
    return summary


if __name__ == "__main__":
    print(json.dumps(main(), indent=2))
