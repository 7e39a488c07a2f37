"""Case 11: PIDC, hybrid motion/force control and IDC of a 3-link arm with its end point on a slider
[AG IX, Figs. 7, 8, Table II], in simulation.

Problem: a planar 3R arm (``mechanisms.planar_arm_on_line``) in a *vertical* plane (gravity along −y), its end
point held on the horizontal rail y = y₀ = −0.27 m below the base (the slider of [AG Fig. 7], Φ = y(q) − y₀).
[AG] gives neither link lengths nor masses of the CSA arm; our choice: lengths (0.4, 0.35, 0.15) m, uniform
rods of 1.5, 1.0, 0.5 kg (weight 29.4 N), the elbow branch ELBOW keeping all links above the rail. Task
θ = [x(q), θ(q)], the end point's x and the end link's angle: x_d(t) = −0.075 + 0.225 sin(πt + π/9) m, θ_d = 0,
λ_d = 0; G_P = 480, G_D = 45, G_F = 3, G_I = 0.1 [AG IX-B]. From the desired trajectory at t = 0 for T_END = 2 s
(one period); RK4 at DT = 2 ms with position correction, the controllers evaluated at every stage.

Assumption — the vertical plane ([AG] does not say): Table II's ordering (the hybrid law with λ_d = 0 needs
more torque than PIDC, IDC the most) only arises when the rail can carry part of the arm's weight, as PIDC lets
it; in a horizontal plane the three torque norms differed by a few per cent only (RMS 0.93/0.96/0.93 N·m).

The controllers' model has the constraint line at y₀ + OFFSET (5 mm: position uncertainty of the constraint,
the cause [AG] gives for IDC's large forces): pidc — ProjectedInverseDynamicsControl, f = P(M u_p + h)
[AG-43, 44]; hybrid — HybridMotionForceControl, λ_d = 0 [AG-49..52]; idc — ComputedTorqueControl (joint
space) with the joint reference from inverse kinematics of the *model*. The same three run with an exact
model (OFFSET = 0) for contrast.

Expected [AG Fig. 8, Table II]: all three track the motion; PIDC needs the least torque norm at every instant
(the minimum-norm torque, Theorem 4, and the rail carries part of the weight, λ_PIDC > 0); the hybrid law
holds λ at λ_d = 0. With the exact model IDC follows the same motion with λ = 0: ‖τ_IDC‖ = ‖τ_hybrid‖. With the
wrong model the rail pulls IDC back with λ_IDC ≈ −Λ_c G_P OFFSET (Λ_c = (Φ M⁻¹ Φᵀ)⁻¹) and IDC's torque exceeds
the hybrid law's by ‖Φᵀλ_IDC‖: "IDC produces the largest forces" [AG IX-B] holds for the joint torques, and
only because the model is wrong; its end link tilts by ≈ OFFSET/l₃. PIDC and the hybrid law use only Φ and
Φ̇v, independent of the line's position: their runs are identical with both models.

Measured at full size (docs/verification.md, "11 — AG IX", records every number; tests/test_cases_control_ag.py
checks the claims): RMS/peak ‖τ‖ [N·m] PIDC 5.40/6.23, hybrid 7.08/8.54, IDC 7.17/8.65 (wrong model), against
Table II's 1.50/1.89, 2.63/2.30, 3.18/4.90 — the same ordering, a smaller spread ([AG]'s robot is geared,
with friction, its parameters and offset unknown).

Outputs in out_dir: wrong_{pidc,hybrid,idc}/, exact_{pidc,hybrid,idc}/ (Results.save, a ParaView series of
the arm and scene.vtp with the rail), fig8.png and fig8_exact_model.png ((A) x, (B) θ, (C) λ, (D) ‖τ‖),
torque_norms.png, torque_norms_exact_model.png, summary.txt (JSON). Source: [AG] = Aghili 2005, seeds 004.
"""

import functools
import json
from pathlib import Path

import numpy as np

import flexbody as fb

LENGTHS = (0.4, 0.35, 0.15)  # m, links l1, l2, l3 (our choice; not given in [AG])
MASSES = (1.5, 1.0, 0.5)  # kg, uniform rods (our choice)
GRAVITY = 9.81  # m/s², gravity along −y: in the plane of motion, the rail horizontal below the base
LINE_Y = -0.27  # m, y₀ of the slider [AG IX]
OFFSET = 0.005  # m, the controllers' model has its line at y₀ + OFFSET
X_MEAN = -0.075  # m, x_d(t) = X_MEAN + X_AMPLITUDE sin(OMEGA t + PHASE) [AG IX-B]
X_AMPLITUDE = 0.225  # m, amplitude of x_d(t)
OMEGA = np.pi  # rad/s, angular frequency of x_d(t)
PHASE = np.pi / 9  # rad, phase of x_d(t)
THETA_D = 0.0  # rad, end-link orientation
G_P = 480.0  # 1/s², position gain (task and IDC joint gains)
G_D = 45.0  # 1/s, velocity gain (task and IDC joint gains)
G_F = 3.0  # -, force gain of the hybrid law
G_I = 0.1  # 1/s, integral force gain
ELBOW = 1  # -, elbow branch of the initial guess (+1: links stay on the base side of the rail)
DT = 2e-3  # s, RK4 step (1 ms gives the same reported numbers to 4 digits)
T_END = 2.0  # s, one period of x_d
_AG_TABLE_II = {"idc": (3.18, 4.90), "pidc": (1.50, 1.89), "hybrid": (2.63, 2.30)}  # (rms, peak) [AG Table II]
_CONTROLLERS = ("pidc", "hybrid", "idc")


def build(line_y=LINE_Y, lengths=LENGTHS, masses=MASSES, gravity=GRAVITY) -> fb.System:
    """The arm with its end point on the horizontal rail y = line_y, in a vertical plane (gravity along −y)."""
    return fb.mechanisms.planar_arm_on_line(tuple(lengths), tuple(masses), line_y, (0.0, -gravity, 0.0))


def make_task(asm, lengths=LENGTHS) -> fb.StackedTask:
    """θ = [x of the end point, angle of link l3] on the trees of ``asm``."""
    tree = asm.trees[0]
    return fb.StackedTask(
        [
            fb.PointTask(tree.point("l3", (lengths[-1], 0.0, 0.0)), components=(0,), name="x"),
            fb.PlanarOrientationTask(tree.frame("l3"), name="theta"),
        ]
    )


task = make_task  # the case's task (for ``flexbody info``)


class Reference:
    """x_d(t) = mean + amplitude sin(ωt + phase), θ_d constant, as the StackedTask's reference:
    ([x_d, θ_d], [ẋ_d, 0], [ẍ_d, 0])."""

    def __init__(self, mean=X_MEAN, amplitude=X_AMPLITUDE, omega=OMEGA, phase=PHASE, theta_d=THETA_D):
        self.x = fb.control.Sinusoid(mean, amplitude, omega, phase)
        self.theta_d = float(theta_d)

    def __call__(self, t):
        x, xd, xdd = self.x(t)
        return [x, np.array([self.theta_d])], np.array([xd[0], 0.0]), np.array([xdd[0], 0.0])

    def values(self, times) -> np.ndarray:
        """(s, 2) desired [x_d, θ_d] at ``times``."""
        return np.array([[self.x(t)[0][0], self.theta_d] for t in times])


class CachedJointReference:
    """A JointReferenceFromTask remembering its last few answers: RK4 asks twice at t + dt/2 and the end
    of a step is the start of the next, so this halves the inverse-kinematics solves (same values)."""

    def __init__(self, inner, size=4):
        self.inner, self._at = inner, functools.lru_cache(maxsize=size)(inner)

    def reset(self):
        self._at.cache_clear()
        self.inner.reset()

    def __call__(self, t):
        return self._at(float(t))


def ik_guess(x, y, theta, lengths=LENGTHS, elbow=ELBOW) -> np.ndarray:
    """Closed-form inverse kinematics of the 3R arm for end point (x, y) and end-link angle θ."""
    l1, l2, l3 = lengths
    wx, wy = x - l3 * np.cos(theta), y - l3 * np.sin(theta)
    c2 = (wx**2 + wy**2 - l1**2 - l2**2) / (2 * l1 * l2)
    q2 = np.sign(elbow) * np.arccos(np.clip(c2, -1.0, 1.0))
    q1 = np.arctan2(wy, wx) - np.arctan2(l2 * np.sin(q2), l1 + l2 * np.cos(q2))
    return np.array([q1, q2, theta - q1 - q2])


def make_controllers(model, reference, q_guess, g_p=G_P, g_d=G_D, g_f=G_F, g_i=G_I, lengths=LENGTHS) -> dict:
    """The three controllers on the controller model ``model`` (tasks built on its tree)."""
    task = make_task(model, lengths)
    joint_ref = CachedJointReference(fb.control.JointReferenceFromTask(model, task, reference, q_guess))
    return {
        "pidc": fb.control.ProjectedInverseDynamicsControl(task, reference, g_p, g_d, model=model),
        "hybrid": fb.control.HybridMotionForceControl(
            task, reference, g_p, g_d, lam_desired=[0.0], gf=g_f, gi=g_i, model=model
        ),
        "idc": fb.control.ComputedTorqueControl(joint_ref, g_p, g_d, model=model, task=task),
    }


def analyse(plant, runs, reference, lengths) -> dict:
    """The measured numbers of one set of three runs, with [AG] Table II's next to the RMS and peak norms."""
    task = make_task(plant, lengths)
    desired = reference.values(runs["pidc"].times)
    keys = ("tracking", "max_task_acceleration_error", "rms_norm", "peak_norm", "peak_abs_lam", "lam_range")
    s = {key: {} for key in (*keys, "max_violation", "table")}
    norms, lams, xs = {}, {}, {}
    for name, res in runs.items():
        xs[name], _, xdd = fb.task_history(plant, task, res)
        err = np.abs(xs[name] - desired).max(axis=0)
        s["tracking"][name] = {"max_abs_x_error": float(err[0]), "max_abs_theta_error": float(err[1])}
        if name != "idc":
            s["max_task_acceleration_error"][name] = float(np.abs(xdd - res.histories["task_command"]).max())
        norms[name], lams[name] = np.linalg.norm(res.histories["tau"], axis=1), res.histories["lam"][:, 0]
        s["rms_norm"][name], s["peak_norm"][name] = fb.plots.rms_norm(res, "tau"), fb.plots.peak_norm(res, "tau")
        s["peak_abs_lam"][name] = float(np.abs(lams[name]).max())
        s["lam_range"][name] = [float(lams[name].min()), float(lams[name].max())]
        s["max_violation"][name] = float(res.histories["violation"].max())
    for name in _CONTROLLERS:
        (ag_rms, ag_peak), ag_pidc = _AG_TABLE_II[name], _AG_TABLE_II["pidc"]
        rms, peak = s["rms_norm"][name], s["peak_norm"][name]
        s["table"][name] = {"rms": rms, "peak": peak, "ag_rms": ag_rms, "ag_peak": ag_peak}
        s["table"][name] |= {
            "rms_over_pidc": rms / s["rms_norm"]["pidc"],
            "peak_over_pidc": peak / s["peak_norm"]["pidc"],
        }
        s["table"][name] |= {"ag_rms_over_pidc": ag_rms / ag_pidc[0], "ag_peak_over_pidc": ag_peak / ag_pidc[1]}
    excess = norms["pidc"] - np.minimum(norms["hybrid"], norms["idc"])
    s["fraction_pidc_least_norm"] = float(np.mean(excess <= 1e-9))
    s["worst_pidc_excess_over_min_others"] = float(excess.max())
    s["hybrid_max_abs_lam_minus_lam_d"] = float(np.abs(lams["hybrid"] - 0.0).max())
    s["fraction_idc_norm_above_hybrid"] = float(np.mean(norms["idc"] > norms["hybrid"] + 1e-6))  # beyond IK noise
    return s, norms, lams, xs


def plot_fig8(path, t, desired, xs, lams, norms, title) -> None:
    """[AG Fig. 8]: (A) x against x_d, (B) θ against θ_d, (C) λ, (D) ‖τ‖ of the three controllers."""
    names = {"pidc": "PIDC", "hybrid": "hybrid", "idc": "IDC"}
    x, theta = ({names[c]: (t, xs[c][:, k]) for c in names} for k in (0, 1))
    panels = [
        {"ylabel": "(A) end-point x [m]", "curves": x, "references": {"x_d": (t, desired[:, 0])}},
        {"ylabel": "(B) end-link angle θ [rad]", "curves": theta, "references": {"θ_d": (t, desired[:, 1])}},
        {"ylabel": "(C) rail multiplier λ [N]", "curves": {names[c]: (t, lams[c]) for c in names}},
        {"ylabel": "(D) torque norm ‖τ‖ [N·m]", "curves": {names[c]: (t, norms[c]) for c in names}},
    ]
    fb.plots.plot_curves(path, panels, title=title, size=(8, 2.5))


def main(
    out_dir="out/11_arm_on_slider_control",
    lengths=LENGTHS,
    masses=MASSES,
    gravity=GRAVITY,
    line_y=LINE_Y,
    offset=OFFSET,
    x_mean=X_MEAN,
    x_amplitude=X_AMPLITUDE,
    omega=OMEGA,
    phase=PHASE,
    theta_d=THETA_D,
    g_p=G_P,
    g_d=G_D,
    g_f=G_F,
    g_i=G_I,
    elbow=ELBOW,
    dt=DT,
    t_end=T_END,
    context=None,
) -> dict:
    """Run the three controllers with the wrong and the exact model, write the outputs; returns the summary."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    plant = build(line_y, lengths, masses, gravity).assemble()
    reference = Reference(x_mean, x_amplitude, omega, phase, theta_d)
    guess = ik_guess(reference.values([0.0])[0, 0], line_y, theta_d, lengths, elbow)
    q0, v0, _ = fb.control.JointReferenceFromTask(plant, make_task(plant, lengths), reference, guess)(0.0)
    gains = (g_p, g_d, g_f, g_i)

    sets, series = {}, {}
    for label, dy in (("wrong", offset), ("exact", 0.0)):
        model = build(line_y + dy, lengths, masses, gravity).assemble()
        runs = {}
        for name, c in make_controllers(model, reference, q0, *gains, lengths=lengths).items():
            res = fb.simulate(plant, t_end, integrator=fb.RK4(dt=dt), controller=c, q0=q0, v0=v0, context=context)
            res.save(out / f"{label}_{name}")
            fb.io.write_link_pvd(out / f"{label}_{name}", res, every=fb.io.frame_stride(res))  # with the rail
            runs[name] = res
        stats, norms, lams, xs = analyse(plant, runs, reference, lengths)
        sets[label], series[label] = stats, (norms, lams, xs, runs)
    t = series["wrong"][3]["pidc"].times
    desired = reference.values(t)

    figures = (("wrong", "", f"model line off by {offset * 1e3:g} mm"), ("exact", "_exact_model", "exact model"))
    for label, fname, what in figures:
        norms, lams, xs, runs = series[label]
        plot_fig8(out / f"fig8{fname}.png", t, desired, xs, lams, norms, f"3R arm on a slider (AG Fig. 8), {what}")
        named = {"PIDC": runs["pidc"], "hybrid": runs["hybrid"], "IDC": runs["idc"]}
        fb.plots.plot_torque_norms(named, out / f"torque_norms{fname}.png")

    summary = {"parameters": {"gravity_y": -gravity, "line_y": line_y, "offset": offset, "dt": dt, "t_end": t_end}}
    summary |= {"q0": q0.tolist(), "v0": v0.tolist(), "wrong_model": sets["wrong"], "exact_model": sets["exact"]}
    (out / "summary.txt").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


if __name__ == "__main__":
    main()
