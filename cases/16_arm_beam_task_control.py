"""Case 16 (flagship): a rigid two-link arm carrying an ANCF flexible beam, under constrained task-level
control of its flange — the direct mapping of [DE-65..71] on one sparse rigid–flexible system [DE-107..113].

Problem: the arm of ``fb.mechanisms.arm_with_beam`` in the vertical xz-plane (links 0.5 m and 0.4 m,
uniform rods 2 kg and 1 kg, revolute joints about y, both actuated) with a beam 0.6 × 0.04 × 0.04 m
(ρ 2700 kg/m³, E YOUNG Pa, ν 0.3, Kelvin–Voigt retardation DAMPING s) whose face x = 0 is attached rigidly
to the flange by constraint rows (one per face node). DIVISIONS ANCF bricks (ORDER 2: 27-node, on their default
Gauss rule, which does not lock; 1: 8-node); gravity −9.81 m/s² along z. Until issue 33: 12 × 2 × 2 plain 8-node
bricks, which lock (sag 18 mm; these 30 mm, Euler–Bernoulli 28.6). Every nodal coordinate is passive (S: joints).

The task is the flange point (x, z) (tip of link 2). The controller solves J̄ᵀΘᵀSᵀτ_k = Λf* + μ + p + γ
[DE-69] for the joint torques with f* = KP e + KV ė + ẍ_d [DE-71], KP = ω², KV = 2ω (critically damped),
evaluated on the whole constrained system (M block-diagonal with the constant beam block, Φ with the
attachment rows), once per step and held over the step. The simulation is implicit generalized-α with
ρ∞ = RHO_INF = 0.99: slightly damped, so that the multipliers of the 27 attachment rows do not build up over a
long run (flexbody warns about ρ∞ = 1 on constraint rows), while its numerical dissipation stays far below
the Kelvin–Voigt dissipation the energy balance (4.) measures; with the default ρ∞ = 0.9 it does not (the
balance drifts to 2.0e-4 |W| over the 4 s).

Start: the static equilibrium with the joints held at Q0 by their holding torques (the beam sags).
Phase 1 (0 ≤ t < T_SETTLE): the desired flange position is the start position + OFFSET (a step).
Phase 2 (T_SETTLE ≤ t ≤ T_END): the desired position runs on a circle of radius RADIUS through the phase-1
goal, the angular rate rising smoothly (smoothstep over T_RAMP) to 2π·FREQUENCY.

Expected results and their sources:
1. Rank [DE 5.3, DE 6.3]: the direct map J̄ᵀΘᵀSᵀ [1/m] is measured against σ_ref, the σ_max of the same
   map with every coordinate actuated (J̄ᵀΘᵀ), and a direction below 1e-6·σ_ref counts as not actuated
   (:mod:`flexbody.control.actuation`). For the flange task it is full rank, σ = 3.38, 1.25 against
   σ_ref = 4.45 (kinematic coupling through the rigid links). For a task on the beam's tip node it FAILS,
   rank 1 of 2: σ = 3.4e-6, 5.8e-7 against σ_ref = 1.94, i.e. the joints reach the tip acceleration only
   through the consistent mass coupling of the beam (elastic, not kinematic coupling) with at most 1.8e-6
   of the authority of full actuation. That is why DE 6.3 controls nodal tasks through statics (case 15).
2. Phase 1: the exact linearisation makes each task error component obey ë + KV ė + KP e = 0, whose
   closed form from e(0) = −OFFSET, ė(0) = 0 is e(t) = e(0)(1 + ωt)e^{−ωt}. The torques are held over each
   step, a delay of about DT/2, so the simulated error departs from the closed form by O(ω·DT) of |e(0)|:
   the departure halves when DT halves (first order). The held torques also couple the task to the beam's
   first bending mode (≈ 2.9 Hz, Euler–Bernoulli clamped–free): the error settles to an oscillation whose
   amplitude is O(DT) (4.6 / 1.8 / 0.8 mm at DT = 4 / 2 / 1 ms).
3. Phase 2: the flange tracks the circle with an error that is small next to RADIUS, while the beam's tip
   swings relative to the flange (its deflection is recorded): the controller compensates the beam's
   reaction on the arm but does not damp the beam (its nodes are passive).
4. Energy: with the constraint work zero, E(t) − E(0) = W_τ − D (work of the joint torques minus
   Kelvin–Voigt dissipation), recorded by the integrator, up to the integrator's own error.

Measured at full size (summary.txt; 6 × 1 × 1 27-node bricks, 353 coordinates): see docs/verification.md,
section "Flagship case 16"; tests/test_case_16_flagship.py checks each item at reduced size.

Outputs in out_dir (the README's main job): results.npz/.json (Results; written in parts while the run
goes, so an interrupted run leaves a loadable directory that ``fb.resume`` can complete), beam.pvd + beam_NNNN.vtu and
arm.pvd + arm_NNNN.vtu (ParaView series: the beam with displacement, strain and stress fields, the arm's
links as lines with their frames), histories.csv, task.png (flange path and error against the closed
form), histories.png (task, torques, energy), tip.png (beam-tip deflection relative to the flange),
screenshot.png (pyvista, off-screen), summary.txt (JSON). Sources: [DE] sections 5.3, 6.2, 6.3, eq. 65–71,
107–113.
"""

import json
from pathlib import Path

import numpy as np

import flexbody as fb

LENGTHS = (0.5, 0.4)  # m, links l1, l2
DIVISIONS = (6, 1, 1)  # -, beam elements (length, width, height)
ORDER = 2  # -, 2: 27-node bricks (on their default Gauss rule, which does not lock), 1: 8-node
YOUNG = 7e7  # Pa, Young's modulus of the beam
DAMPING = 0.002  # s, Kelvin–Voigt retardation time of the beam
Q0 = (0.6, -1.5)  # rad, start joint angles (elbow bent, far from the reach limit)
OFFSET = (0.03, 0.02)  # m, phase-1 goal − start flange (x, z)
OMEGA = 15.0  # rad/s, task bandwidth: KP = ω², KV = 2ω
T_SETTLE = 1.0  # s, phase 1
RADIUS = 0.08  # m, phase-2 circle
FREQUENCY = 0.5  # Hz, phase-2 revolutions per second
T_RAMP = 0.5  # s, rise of the angular rate
T_END = 4.0  # s, end time
DT = 1e-3  # s, generalized-α step
RHO_INF = 0.99  # -, generalized-α ρ∞ (< 1 damps the constraint multipliers; 1: no numerical damping)
VTK_EVERY = 40  # -, write every k-th recorded step to the ParaView series


def build(divisions=DIVISIONS, order=ORDER, young=YOUNG, damping=DAMPING, q0=Q0) -> fb.System:
    """The arm with the beam attached to its flange, joints free and actuated, beam nodes passive."""
    return fb.mechanisms.arm_with_beam(
        lengths=LENGTHS, divisions=tuple(divisions), order=order, young=young, damping=damping, q0=tuple(q0)
    )


def flange_task(asm) -> fb.PointTask:
    """(x, z) of the flange point, the tip of link 2."""
    return fb.PointTask(asm.trees[0].point("l2", (LENGTHS[1], 0.0, 0.0)), components=(0, 2), name="flange")


def tip_task(asm) -> fb.PointTask:
    """(x, z) of the node at the centre of the beam's free face (for the rank comparison)."""
    beam = asm.bodies[0]
    centre = beam.mesh.points[beam.nodes("x1")].mean(axis=0)
    return fb.PointTask(fb.nearest_node(beam, centre), components=(0, 2), name="tip")


task = flange_task


def closed_form_error(t, e0, omega) -> np.ndarray:
    """e(t) (s, m_T) of ë + 2ω ė + ω² e = 0 with e(0) = e0, ė(0) = 0."""
    t = np.asarray(t, dtype=float)[:, None]
    return np.asarray(e0, dtype=float)[None, :] * (1.0 + omega * t) * np.exp(-omega * t)


def start_state(asm):
    """The static equilibrium with the joints held at their q0 values, at rest."""
    _, eq = fb.holding_inputs(asm)
    return eq.q, np.zeros(asm.n_dofs)


def rank_comparison(asm, q) -> dict:
    """The rank check of J̄ᵀΘᵀSᵀ for the flange task and for the beam-tip task at q, v = 0: singular values,
    the tolerance and the scale σ_ref it is relative to (the same map with every coordinate actuated),
    the verdict and, when it fails, why."""
    v = np.zeros(asm.n_dofs)
    out = {}
    for make in (flange_task, tip_task):
        check = fb.control.actuation_report(asm, 0.0, q, v, task=make(asm)).maps["direct"]
        numbers = {"singular_values": [float(s) for s in check.singular_values], "rank": check.rank}
        numbers |= {"tol": check.tol, "sigma_ref": check.reference, "authority": check.sigma_min / check.reference}
        out[make(asm).name] = numbers | {"ok": bool(check.ok), "why": check.reason or check.tolerance_text()}
    return out


def run(
    asm, q0, v0, offset, omega, t_settle, radius, frequency, t_ramp, t_end, dt, rho_inf, save_to=None, context=None
):
    """Simulate the controlled arm; returns (Results, reference, x at the start)."""
    x0 = flange_task(asm).evaluate(asm.workspace(0.0, q0)).x
    reference = fb.control.CircleAfterStep(x0 + np.asarray(offset, dtype=float), t_settle, radius, frequency, t_ramp)
    controller = fb.control.DirectMappingControl(flange_task(asm), reference, kp=omega**2, kv=2.0 * omega)
    kw = {"save_to": save_to} if save_to is not None else {}
    integrator = fb.GeneralizedAlpha(dt=dt, rho_inf=rho_inf)
    res = fb.simulate(asm, t_end, integrator=integrator, controller=controller, q0=q0, v0=v0, **kw, context=context)
    return res, reference, x0


def tip_deflection(asm, res) -> np.ndarray:
    """(s, 2) beam-tip node position relative to where the rigid flange frame would carry it [m]
    (x, z in the link-2 frame): the elastic deflection of the beam's free end."""
    tree, beam = asm.trees[0], asm.bodies[0]
    node = tip_task(asm).anchor.index
    tips = asm.coordinates(beam, res.q, nodes=[node])[:, 0]  # (s, 3) world positions
    flange = tree.kinematics(asm.coordinates(tree, asm.q0)).p[1]
    rest = None
    out = []
    for q, tip in zip(res.q, tips):
        kin = asm.workspace(0.0, q).kinematics(tree)
        p, R = kin.p[1], kin.R[1]
        if rest is None:  # the node's offset from the flange, unloaded, in link-2 axes
            rest = R.T @ (beam.mesh.points[node] - flange)
        out.append((R.T @ (tip - p) - rest)[[0, 2]])
    return np.array(out)


def numbers(asm, res, reference, x0, offset, omega, t_settle, radius) -> dict:
    """Summary numbers of a run (closed-form departure in phase 1, tracking in phase 2, energy balance)."""
    t, err, stats, energy = res.times, res.histories["task_error"], res.metadata["statistics"], res.histories["energy"]
    phase1, late = t < t_settle, t >= t_settle + 1.0
    # the controller's error is x_d − x: at t = 0 it is +offset; the closed form tracks e = x_d − x
    e_cf = -closed_form_error(t[phase1], -np.asarray(offset, dtype=float), omega)
    tracking = float(np.abs(err[late]).max()) if late.any() else float("nan")
    out = {"n_coordinates": int(asm.n_dofs), "n_constraints": int(asm.n_constraints)}
    out["phase1_departure_from_closed_form"] = float(np.abs(err[phase1] - e_cf).max() / np.abs(offset).max())
    out["phase1_error_at_settle"] = float(np.abs(err[phase1][-1]).max())
    out |= {"phase2_max_tracking_error": tracking, "phase2_max_tracking_error_over_radius": tracking / radius}
    out["max_tip_deflection"] = float(np.abs(tip_deflection(asm, res)).max())
    out["max_violation"] = float(np.max(res.histories["violation"]))
    out["energy_balance_error"] = float(energy[-1] - energy[0] - stats["applied_work"] + stats["dissipated"])
    out |= {key: float(stats[key]) for key in ("applied_work", "dissipated", "wall_seconds")}
    out |= {key: int(stats[key]) for key in ("steps", "newton_iterations", "rejected")}
    return out | {"max_torque": float(np.abs(res.histories["tau_k"]).max())}


def plot_task(path, res, reference, omega, offset, t_settle) -> None:
    """The flange path against the desired one; the task error against the closed form of phase 1."""
    t, x, err = res.times, res.histories["task_x"], res.histories["task_error"]
    desired = np.array([reference(ti)[0] for ti in t])
    phase1 = t < t_settle
    cf = -closed_form_error(t[phase1], -np.asarray(offset, dtype=float), omega)
    errors = {f"e_{c} simulated": (t, 1e3 * err[:, i]) for i, c in enumerate("xz")}
    closed = {f"e_{c} closed form": (t[phase1], 1e3 * cf[:, i]) for i, c in enumerate("xz")}
    path_panel = {"ylabel": "z [m]", "xlabel": "x [m]", "curves": {"flange": (x[:, 0], x[:, 1])}, "equal": True}
    panels = [
        {**path_panel, "references": {"desired": (desired[:, 0], desired[:, 1])}, "title": "flange path"},
        {"ylabel": "task error x_d − x [mm]", "curves": errors, "references": closed, "title": "task error"},
    ]
    fb.plots.plot_curves(path, panels, columns=2, size=(5.5, 4.2))


def plot_tip(path, times, deflection) -> None:
    """The beam tip's deflection relative to the flange frame, axial and transverse."""
    curves = {
        "axial (link-2 x)": (times, 1e3 * deflection[:, 0]),
        "transverse (link-2 z)": (times, 1e3 * deflection[:, 1]),
    }
    panel = {"ylabel": "beam-tip deflection [mm]", "curves": curves, "title": "beam tip relative to the flange frame"}
    fb.plots.plot_curves(path, [panel], size=(7, 3.5))


def write_outputs(out, asm, res, reference, omega, offset, t_settle, vtk_every) -> None:
    """ParaView series (beam and arm), CSV, figures and a screenshot; the results themselves are in ``out``
    already (the run saved them as it went)."""
    fb.io.write_link_pvd(out, res, every=vtk_every)
    fb.io.write_pvd(out, res, every=vtk_every)
    fb.io.write_histories_csv(out / "histories.csv", res)
    title = "flange task control of an arm carrying a flexible beam"
    fb.plots.plot_histories(res, out / "histories.png", panels=("task", "torque", "energy"), title=title)
    plot_task(out / "task.png", res, reference, omega, offset, t_settle)
    plot_tip(out / "tip.png", res.times, tip_deflection(asm, res))
    fb.view.screenshot(out, out / "screenshot.png", field="von_mises")


def main(
    out_dir="out/16_arm_beam_task_control",
    offset=OFFSET,
    omega=OMEGA,
    t_settle=T_SETTLE,
    radius=RADIUS,
    frequency=FREQUENCY,
    t_ramp=T_RAMP,
    t_end=T_END,
    dt=DT,
    rho_inf=RHO_INF,
    vtk_every=VTK_EVERY,
    context=None,
    **overrides,
) -> dict:
    """Rank comparison, the controlled simulation, outputs and summary (``overrides``: keywords of
    :func:`build`)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    asm = build(**overrides).assemble()
    q_start, v_start = start_state(asm)
    ranks = rank_comparison(asm, q_start)
    motion = (offset, omega, t_settle, radius, frequency, t_ramp, t_end, dt, rho_inf)
    res, reference, x0 = run(asm, q_start, v_start, *motion, save_to=out, context=context)  # saved as it goes
    summary = {"ranks": ranks, **numbers(asm, res, reference, x0, offset, omega, t_settle, radius)}
    summary["parameters"] = {key: list(v) if isinstance(v, tuple) else v for key, v in overrides.items()}
    summary["parameters"] |= dict(
        zip(("offset", "omega", "t_settle", "radius", "frequency", "t_ramp", "t_end", "dt", "rho_inf"), motion)
    )
    write_outputs(out, asm, res, reference, omega, offset, t_settle, vtk_every)
    (out / "summary.txt").write_text(json.dumps(summary, indent=2))
    return summary
