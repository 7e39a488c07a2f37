"""Case 17: a UR5 loaded from its URDF file carries a flexible ANCF bar under task-level control of its tool
flange — a real six-joint robot (``fb.load_urdf``) in one constrained system with a solid bar [DE-65..71, 107..113].

Problem: the UR5 of ``meshes/robots/ur5_robot.urdf`` (example-robot-data 6.0.0; meshes/README.md), loaded with
``visuals=False``: six revolute joints, all actuated, masses and inertias as in the file, gravity along −z. A
PVC-like bar PAYLOAD_SIZE (0.56 kg, Kelvin–Voigt retardation DAMPING) sticks out of the tool flange along its z
axis, its root face attached to the URDF frame ``tool0`` (``fb.AttachNodes``); DIVISIONS bricks (ORDER 1:
8-node with incompatible modes, which do not lock in bending), every nodal coordinate passive. It starts in
the static equilibrium with the joints held at Q0 (``fb.holding_inputs``), a horizontal cantilever sagging.
Task: the full pose of ``tool0`` (origin, and the rotation vector of R_d Rᵀ), six rows for six joints, along
a rest-to-rest minimum-jerk move (s(u) = 10u³ − 15u⁴ + 6u⁵, u = t/T_MOVE) by LIFT while turning by YAW about
the vertical, then held until T_END while the bar rings; ``fb.control.DirectMappingControl`` [DE-69] with
f* = KP e + KV ė + ẍ_d [DE-71], KP = OMEGA², KV = 2·OMEGA, once per step and held over it; generalized-α.

Expected (tests/test_case_17_urdf_payload.py compares; docs/verification.md, "Case 17", records the numbers):
1. Static tip sag: the Euler–Bernoulli cantilever under its own weight, w L⁴/(8 E I), w = ρ g A (the weight's
   component normal to the bar), I = b h³/12: 1.7168e-2 m; with ν = 0.35 the clamped root face (its lateral
   contraction held by the attachment) is stiffer than the beam, by about 1 % at 20 × 1 × 1.
2. Holding torques: Pinocchio's RNEA of the same URDF at (Q0, 0, 0) minus J_tool0ᵀ times the payload's weight
   at its centre of mass, to round-off.
3. Rank [DE 5.3] (``flexbody info`` prints the reports of ``task``): the direct map J̄ᵀΘᵀSᵀ of the flange pose
   is full rank; for the bar's tip node it has rank 0: the joints reach it only through the bar [DE 6.3].
4. Tracking: with the exact model each error component obeys ë + KV ė + KP e = 0 from e(0) = 0; the torque
   held over a step leaves an error of first order in DT. Energy: E(t) − E(0) = W_τ − D (work of the joint
   torques minus Kelvin–Voigt dissipation).
5. After the move the bar rings at its clamped first bending frequency, Euler–Bernoulli
   f₁ = 1.8751² √(E I/(ρ A L⁴))/2π = 4.7294 Hz (Blevins, *Formulas for Natural Frequency and Mode Shape*,
   Table 8-1), damped at ζ₁ = π f₁ DAMPING = 0.01486 (Kelvin–Voigt); the held torque softens and damps the
   flange's hold at first order in DT, so frequency and damping tend to these as DT → 0.

Outputs in out_dir: results.npz/.json (Results, written as the run goes; ``flexbody run --resume`` completes
a killed run), payload.pvd + payload_NNNN.vtu and ur5.pvd + ur5_NNNN.vtu (ParaView series: the bar with
displacement, strain and stress fields; the arm's links as lines with their frames), histories.csv,
histories.png (task, torques, energy), tip.png (tip deflection relative to the flange), screenshot.png,
summary.txt (JSON).
"""

import json
from pathlib import Path

import numpy as np

import flexbody as fb

ROBOT = "meshes/robots/ur5_robot.urdf"  # -, URDF file of the robot (absolute, or from the repository root)
FLANGE = "tool0"  # -, URDF link carrying the payload; its frame's pose is the task
Q0 = (0.0, -1.2, 1.8, -0.6, np.pi / 2, 0.0)  # rad, start joint angles (pan, lift, elbow, wrist 1, 2, 3)
PAYLOAD_SIZE = (1.0, 0.02, 0.02)  # m, payload bar (length along the flange z axis, width, height)
DIVISIONS = (20, 1, 1)  # -, payload elements (length, width, height)
ORDER = 1  # -, 1: 8-node bricks with incompatible modes, 2: 27-node
YOUNG = 3e9  # Pa, Young's modulus of the payload (rigid PVC)
POISSON = 0.35  # -, Poisson's ratio of the payload
DENSITY = 1400.0  # kg/m³, density of the payload
DAMPING = 0.001  # s, Kelvin–Voigt retardation time of the payload
GRAVITY = 9.81  # m/s², gravity along −z
LIFT = (0.0, 0.0, 0.15)  # m, flange displacement of the move (world axes)
YAW = 0.5  # rad, flange rotation about world z during the move
T_MOVE = 1.0  # s, duration of the minimum-jerk move
T_END = 2.5  # s, end time (the payload rings after the move)
OMEGA = 15.0  # rad/s, task bandwidth: KP = ω², KV = 2ω
DT = 1e-3  # s, generalized-α step
RHO_INF = 1.0  # -, generalized-α ρ∞ (1: no numerical damping)
VTK_EVERY = 50  # -, write every k-th recorded step to the ParaView series

_PAYLOAD_AXES = fb.mechanisms.TOOL_AXES  # columns: the bar's x, y, z axes in the flange frame: x along the flange z
# (out of the tool), y along the flange x, z along the flange y


def build(
    robot=ROBOT,
    flange=FLANGE,
    q0=Q0,
    payload_size=PAYLOAD_SIZE,
    divisions=DIVISIONS,
    order=ORDER,
    young=YOUNG,
    poisson=POISSON,
    density=DENSITY,
    damping=DAMPING,
    gravity=GRAVITY,
) -> fb.System:
    """The robot (joints actuated) with the payload attached to its flange at q0 (nodes passive)."""
    return fb.mechanisms.robot_with_tool(
        Path(__file__).resolve().parents[1] / robot,  # relative to the repository root (or absolute)
        flange,
        q0,
        payload_size,
        divisions,
        name="payload",
        order=order,
        young=young,
        poisson=poisson,
        density=density,
        damping=damping,
        gravity=gravity,
        locking="incompatible_modes" if order == 1 else None,
    )


def task(asm) -> dict:
    """The case's task and the one it cannot control (``flexbody info`` prints their actuation reports)."""
    return {"flange_pose": flange_task(asm), "tip": tip_task(asm)}


def flange_task(asm, flange=FLANGE) -> fb.StackedTask:
    """Position (world x, y, z) and orientation of the flange frame: 6 rows."""
    frame = asm.trees[0].frame(flange)
    return fb.StackedTask(
        [fb.PointTask(frame, name="flange"), fb.OrientationTask(frame, name="flange_R")], name="flange_pose"
    )


def tip_task(asm) -> fb.PointTask:
    """World position of the node at the centre of the payload's free face (rank 0: reached through the bar)."""
    payload = asm.bodies[0]
    centre = payload.mesh.points[payload.nodes("x1")].mean(axis=0)
    return fb.PointTask(fb.nearest_node(payload, centre), name="tip")


class MinimumJerkMove:
    """x_d(t) of the flange: position p0 + s(t)·lift and orientation R_z(s(t)·yaw) R0, with s the minimum-jerk
    profile 10u³ − 15u⁴ + 6u⁵ of u = t/t_move (held at 1 afterwards); exact velocity (v, ω) and acceleration
    (a, α) in world axes."""

    def __init__(self, p0, R0, lift, yaw, t_move):
        self.p0, self.R0 = np.asarray(p0, dtype=float), np.asarray(R0, dtype=float)
        self.lift, self.yaw, self.t_move = np.asarray(lift, dtype=float), float(yaw), float(t_move)

    def profile(self, t: float) -> tuple[float, float, float]:
        """s, ṡ [1/s], s̈ [1/s²] at t [s]."""
        u = min(max(t / self.t_move, 0.0), 1.0)
        T = self.t_move
        return (10 * u**3 - 15 * u**4 + 6 * u**5, 30 * u**2 * (1 - u) ** 2 / T, 60 * u * (1 - u) * (1 - 2 * u) / T**2)

    def __call__(self, t: float):
        s, sd, sdd = self.profile(t)
        c, sn, ez = np.cos(self.yaw * s), np.sin(self.yaw * s), np.array([0.0, 0.0, 1.0])
        Rz = np.array([[c, -sn, 0.0], [sn, c, 0.0], [0.0, 0.0, 1.0]])
        pose = [self.p0 + s * self.lift, Rz @ self.R0]
        return (
            pose,
            np.concatenate([sd * self.lift, self.yaw * sd * ez]),
            np.concatenate([sdd * self.lift, self.yaw * sdd * ez]),
        )


def flange_pose(asm, q, flange=FLANGE) -> tuple[np.ndarray, np.ndarray]:
    """Flange rotation (3, 3) and origin (3,) [m] at q (world)."""
    tree = asm.trees[0]
    kin = tree.kinematics(asm.coordinates(tree, np.asarray(q, dtype=float)))
    i = tree.link(flange).index
    return kin.R[i], kin.p[i]


def tip_offsets(asm, qs, flange=FLANGE) -> np.ndarray:
    """(s, 3) centre of the payload's free face relative to where the rigid flange frame carries it, in
    payload axes (x along the bar, y lateral, z): the elastic deflection of the free end [m]."""
    payload = asm.bodies[0]
    tip = payload.nodes("x1")
    R0, p0 = flange_pose(asm, asm.q0, flange)
    rest = (R0 @ _PAYLOAD_AXES).T @ (payload.mesh.points[tip].mean(axis=0) - p0)
    x = asm.coordinates(payload, np.atleast_2d(qs), nodes=tip).mean(axis=1)  # (s, 3) world
    out = []
    for q, xi in zip(np.atleast_2d(qs), x):
        R, p = flange_pose(asm, q, flange)
        out.append((R @ _PAYLOAD_AXES).T @ (xi - p) - rest)
    return np.array(out)


def run(asm, q0, lift, yaw, t_move, t_end, omega, dt, rho_inf, flange=FLANGE, save_to=None, context=None):
    """The controlled simulation from the static equilibrium q0 at rest."""
    frame = asm.trees[0].frame(flange)
    ws = asm.workspace(0.0, q0)
    reference = MinimumJerkMove(frame.position(ws), frame.rotation(ws), lift, yaw, t_move)
    controller = fb.control.DirectMappingControl(flange_task(asm, flange), reference, kp=omega**2, kv=2.0 * omega)
    kw = {"save_to": save_to} if save_to is not None else {}
    integrator, v0 = fb.GeneralizedAlpha(dt=dt, rho_inf=rho_inf), np.zeros(asm.n_dofs)
    return fb.simulate(asm, t_end, integrator=integrator, controller=controller, q0=q0, v0=v0, context=context, **kw)


def numbers(asm, res, flange=FLANGE) -> dict:
    """Summary numbers of a run: tracking, drift, energy balance, torques, the tip's swing."""
    err, stats, energy = res.histories["task_error"], res.metadata["statistics"], res.histories["energy"]
    tip = tip_offsets(asm, res.q, flange)
    torque = np.abs(res.histories["tau_k"]).max(axis=0)
    limits = np.array([asm.trees[0].limits[l.name].effort for l in asm.trees[0].links if l.coordinate is not None])
    return {
        "n_coordinates": int(asm.n_dofs),
        "max_position_error": float(np.linalg.norm(err[:, :3], axis=1).max()),
        "max_orientation_error": float(np.linalg.norm(err[:, 3:], axis=1).max()),
        "max_violation": float(np.max(res.histories["violation"])),
        "energy_balance_error": float(energy[-1] - energy[0] - stats["applied_work"] + stats["dissipated"]),
        "applied_work": float(stats["applied_work"]),
        "dissipated": float(stats["dissipated"]),
        "max_torque": torque.tolist(),
        "max_torque_over_effort_limit": float(np.max(torque / limits)),
        "tip_lateral_range": [float(tip[:, 1].min()), float(tip[:, 1].max())],
        "tip_vertical_range": [float(tip[:, 2].min()), float(tip[:, 2].max())],
        "steps": int(stats["steps"]),
        "rejected": int(stats["rejected"]),
    }


def main(
    out_dir="out/17_urdf_arm_payload",
    flange=FLANGE,
    lift=LIFT,
    yaw=YAW,
    t_move=T_MOVE,
    t_end=T_END,
    omega=OMEGA,
    dt=DT,
    rho_inf=RHO_INF,
    vtk_every=VTK_EVERY,
    outputs=True,
    context=None,
    **overrides,
) -> dict:
    """Statics and holding torques, the controlled move, outputs and summary (returned and in summary.txt);
    ``overrides``: keywords of :func:`build`. ``outputs=False`` skips the ParaView series, figures and screenshot."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    asm = build(flange=flange, **overrides).assemble()
    tau_k, eq = fb.holding_inputs(asm)  # the start: joints held at q0, the bar sagging
    static = {"holding_torques": tau_k.tolist(), "tip_deflection": tip_offsets(asm, eq.q, flange)[0].tolist()}
    static.update(residual=float(eq.residual), violation=float(eq.violation))
    res = run(asm, eq.q, lift, yaw, t_move, t_end, omega, dt, rho_inf, flange, save_to=out, context=context)
    summary = {"static": static, **numbers(asm, res, flange)}
    summary["parameters"] = {"lift": list(lift), "yaw": yaw, "t_move": t_move, "t_end": t_end, "omega": omega, "dt": dt}
    if outputs:  # ParaView series, CSV, figures and a screenshot (the results are in out already)
        fb.io.write_link_pvd(out, res, every=vtk_every)
        fb.io.write_pvd(out, res, every=vtk_every)
        fb.io.write_histories_csv(out / "histories.csv", res)
        fb.plots.plot_histories(res, out / "histories.png", panels=("task", "torque", "energy"), title="UR5 with a bar")
        tip = 1e3 * tip_offsets(asm, res.q, flange)
        curves = {"lateral (payload y)": (res.times, tip[:, 1]), "vertical (payload z)": (res.times, tip[:, 2])}
        panel = {"ylabel": "tip deflection relative to the flange frame [mm]", "curves": curves}
        fb.plots.plot_curves(out / "tip.png", [panel], size=(8, 3.8))
        fb.view.screenshot(out, out / "screenshot.png", field="von_mises")
    (out / "summary.txt").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


if __name__ == "__main__":
    main()
