"""Case 17: a UR5 loaded from its URDF file carries a flexible ANCF payload under task-level control of its
tool flange — a real six-joint robot (fb.load_urdf) in one constrained system with a solid ANCF bar [DE-65..71,
DE-107..113].

Problem: the UR5 of ``meshes/robots/ur5_robot.urdf`` (example-robot-data 6.0.0, from ROS-Industrial's
ur_description; see meshes/README.md), loaded with ``visuals=False`` (the mesh files are not shipped; the
views draw links as lines) — six revolute joints, all actuated, link masses and inertias as in the file,
gravity −9.81 m/s² along z. A PVC-like bar PAYLOAD_SIZE = 1.0 × 0.02 × 0.02 m (E YOUNG Pa, ν POISSON,
ρ DENSITY kg/m³, mass 0.56 kg, Kelvin–Voigt retardation DAMPING s) sticks out of the tool flange along the
flange's z axis: its root face is attached rigidly to the URDF frame ``tool0`` by ``fb.AttachNodes`` (one constraint
row per face-node coordinate). DIVISIONS ANCF bricks (ORDER 1: 8-node with incompatible modes, so that they
do not lock in bending; 2: 27-node). Every nodal coordinate is passive (S selects the six joints only). At
the start posture Q0 the flange's z axis is horizontal (world +x), so the bar is a horizontal cantilever.

Start: the static equilibrium with the joints held at Q0 by their holding torques (``fb.holding_inputs``;
the bar sags). Task: the full pose of ``tool0`` — origin (3 rows, m) and orientation (3 rows, rad:
rotation vector of R_d Rᵀ) — so the six joints are exactly as many as the task rows. The reference is a
rest-to-rest minimum-jerk move (s(u) = 10u³ − 15u⁴ + 6u⁵, u = t/T_MOVE) of the flange by LIFT (world, m)
while it turns by YAW about the vertical; then the goal is held until T_END while the bar rings. The
controller is ``fb.control.DirectMappingControl``: J̄ᵀΘᵀSᵀτ_k = Λf* + μ + p + γ [DE-69] with f* = KP e + KV ė
+ ẍ_d [DE-71], KP = OMEGA², KV = 2·OMEGA, on the whole constrained system, once per step and held over
the step; the integrator is implicit generalized-α (ρ∞ = 1, no numerical damping).

Expected results and their sources:
1. Static tip sag (joints held at Q0): the Euler–Bernoulli cantilever under its own weight, w L⁴/(8 E I)
   with w = ρ g A (the weight's component normal to the bar) and I = b h³/12: 1.7168e-2 m (1.7 % of L).
   With POISSON = 0 the bricks give 1.00003 of it (shear +3e-4 and geometric stiffening −2e-4 nearly
   cancel). With ν = 0.35 the clamped root face (its lateral contraction held by the attachment) is stiffer
   than the beam: 0.9904 of it at 20 × 1 × 1; the gap scales as h/L (0.983, 0.991, 0.995 for L/h = 25,
   50, 100) and shrinks with refinement at the root.
2. Holding torques against Pinocchio (tests/test_case_17_urdf_payload.py): Pinocchio's RNEA of the same
   URDF at (Q0, 0, 0) minus J_tool0ᵀ times the payload's weight acting at its centre of mass (in equilibrium
   the bar carries only its weight and the flange's reaction): (0, −34.525, −17.922, −3.199, 0, 0) N·m,
   agreement 4e-16 relative with the deflected bar's centre of mass, 9e-6 with the straight bar's (the sag
   shortens the lever by 5.8e-5 m).
3. Rank [DE 5.3]: the direct map J̄ᵀΘᵀSᵀ of the six-row flange task is full rank, σ = 4.14 … 0.540 against
   σ_ref = 4.61; for the bar's tip node it fails, rank 0 of 3 (σ ≈ 3e-15): the joints reach the tip only
   through the bar's elasticity [DE 6.3].
4. Tracking: with the exact model each error component obeys ë + KV ė + KP e = 0 from e(0) = 0 (zero error
   in continuous time); the torque held over a step leaves an O(DT) error: max ‖position error‖ 4.9e-5 /
   2.4e-5 / 1.2e-5 m and max ‖orientation error‖ 2.6e-4 / 1.3e-4 / 6.4e-5 rad at DT = 2 / 1 / 0.5 ms
   (first order). Attachment drift max ‖φ‖ 1.3e-14 m (requirement 1e-9 m). The largest torques, (1.68,
   37.6, 20.1, 3.56, 1.50, 1.2e-4) N·m, stay below 26 % of the URDF effort limits.
5. Energy: E(t) − E(0) = W_τ − D (work of the joint torques minus Kelvin–Voigt dissipation): mismatch
   3.2e-7 J for W_τ = 7.90 J.
6. After the move the flange is held and the bar rings at its clamped first bending frequency,
   Euler–Bernoulli f₁ = 1.8751² √(E I/(ρ A L⁴))/2π = 4.7294 Hz (Blevins, *Formulas for Natural Frequency
   and Mode Shape*, Table 8-1), with the Kelvin–Voigt damping ratio ζ₁ = π f₁ DAMPING = 0.01486. The bar
   alone, clamped, on this mesh has f = 1.0049 f₁ (ν = 0.35 stiffens it, as in 1.). Measured from the tip's
   zero crossings and peaks (lateral / vertical): f/f₁ = 0.9850 / 0.9910, 0.9953 / 0.9984, 1.0002 / 1.0018
   and ζ = 0.0280 / 0.0234, 0.0214 / 0.0192, 0.0182 / 0.0171 at DT = 2, 1, 0.5 ms. The held torque acts on
   the flange like a delay of DT/2, which softens and damps its hold at first order in DT; the Richardson
   extrapolation 2 x(DT/2) − x(DT) gives f/f₁ = 1.0051 / 1.0052 and ζ = 0.01492 / 0.01494: the clamped
   bar's frequency and the Kelvin–Voigt damping.

Measured at full size (defaults: 20 × 1 × 1 eight-node bricks, 258 coordinates, DT = 1 ms, 2500 steps):
the numbers above; about 25 s (`flexbody run cases/17_urdf_arm_payload.py`). docs/verification.md, section
"Case 17", records them.

Outputs in out_dir: results.npz/.json (Results, written as the run goes; ``flexbody run --resume`` completes
a killed run), payload.pvd + payload_NNNN.vtu and ur5.pvd + ur5_NNNN.vtu (ParaView series: the bar with
displacement, strain and stress fields; the arm's links as lines with their frames), histories.csv,
histories.png (task, torques, energy), task.png (flange position, yaw and errors), tip.png (tip deflection
relative to the flange, with the Euler–Bernoulli static sag), screenshot.png, summary.txt (JSON).
"""

import itertools
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

BETA1_L = 1.8751  # -, β₁L of the first clamped–free bending mode (Blevins, Table 8-1)
_PAYLOAD_AXES = np.array(
    [
        [0.0, 1.0, 0.0],  # payload x, y, z axes (columns) in the flange frame:
        [0.0, 0.0, 1.0],  # x along the flange z (out of the tool), y along the
        [1.0, 0.0, 0.0],
    ]
)  # flange x, z along the flange y


def robot_file(robot=ROBOT) -> Path:
    """The URDF path: absolute, or relative to the repository root (the folder above cases/)."""
    path = Path(robot)
    return path if path.is_absolute() else Path(__file__).resolve().parents[1] / path


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
    tree = fb.load_urdf(robot_file(robot), gravity=(0.0, 0.0, -gravity), visuals=False)
    link = tree.link(flange)
    q0 = np.asarray(q0, dtype=float)
    kin = tree.kinematics(q0)
    R, p = kin.R[link.index], kin.p[link.index]
    length, width, height = payload_size
    mesh = fb.mesh.box((length, width, height), tuple(divisions), order=order, origin=(0.0, -width / 2, -height / 2))
    mesh = mesh.with_points(mesh.points @ (R @ _PAYLOAD_AXES).T + p)  # the bar on the flange at q0
    material = fb.StVenantKirchhoff(young=young, poisson=poisson, density=density, damping=damping)
    payload = fb.FlexibleBody("payload", mesh, material, locking="incompatible_modes" if order == 1 else None)
    joints = [l for l in tree.links if l.coordinate is not None]
    return fb.System(
        [tree, payload],
        [fb.AttachNodes(payload, "x0", link, name="flange")],
        loads=[fb.Gravity(payload, (0.0, 0.0, -gravity))],
        actuators=joints,
        q0=q0,
    )


def flange_task(asm, flange=FLANGE) -> fb.StackedTask:
    """Position (world x, y, z) and orientation of the flange frame: 6 rows."""
    frame = asm.trees[0].frame(flange)
    return fb.StackedTask(
        [fb.PointTask(frame, name="flange"), fb.OrientationTask(frame, name="flange_R")], name="flange_pose"
    )


def tip_task(asm) -> fb.PointTask:
    """World position of the node at the centre of the payload's free face (for the rank comparison)."""
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
        c, sn = np.cos(self.yaw * s), np.sin(self.yaw * s)
        Rz = np.array([[c, -sn, 0.0], [sn, c, 0.0], [0.0, 0.0, 1.0]])
        ez = np.array([0.0, 0.0, 1.0])
        return (
            [self.p0 + s * self.lift, Rz @ self.R0],
            np.concatenate([sd * self.lift, self.yaw * sd * ez]),
            np.concatenate([sdd * self.lift, self.yaw * sdd * ez]),
        )


# --------------------------------------------------------------------------------------------- closed forms
def euler_bernoulli_sag(payload_size, young, density, gravity_normal, normal) -> float:
    """Tip deflection [m] of a cantilever under its own weight, w L⁴/(8 E I) with w = ρ A |g_n| [N/m],
    bending along ``normal`` (unit, payload axes y/z): 1/I = n_y²/I_z + n_z²/I_y, I_y = b h³/12, I_z = h b³/12."""
    L, b, h = payload_size
    compliance = normal[1] ** 2 / (h * b**3 / 12.0) + normal[2] ** 2 / (b * h**3 / 12.0)
    return density * gravity_normal * b * h * L**4 * compliance / (8.0 * young)


def euler_bernoulli_frequencies(payload_size, young, density) -> dict:
    """First clamped–free bending frequencies [Hz] along payload y (lateral) and z: (β₁L)² √(EI/(ρAL⁴))/2π."""
    L, b, h = payload_size
    return {
        axis: float(BETA1_L**2 * np.sqrt(young * I / (density * b * h * L**4)) / (2.0 * np.pi))
        for axis, I in (("y", h * b**3 / 12.0), ("z", b * h**3 / 12.0))
    }


def clamped_frequencies(payload_size, divisions, order, young, poisson, density, n_modes=2) -> list:
    """The lowest linear frequencies [Hz] of the payload alone, its root face clamped (``fb.Fix``), on the same
    mesh: K φ = ω² M φ at the reference configuration (as case 03), what the ringing tends to as dt → 0."""
    import scipy.sparse.linalg as spla

    length, width, height = payload_size
    mesh = fb.mesh.box((length, width, height), tuple(divisions), order=order)
    material = fb.StVenantKirchhoff(young=young, poisson=poisson, density=density)
    bar = fb.FlexibleBody("bar", mesh, material, locking="incompatible_modes" if order == 1 else None)
    system = fb.System([bar], constraints=[fb.Fix(bar, "x0")])
    free = np.setdiff1d(np.arange(system.n_dofs), system.prescribed(0.0)[0])
    K = system.force_and_tangent(system.reference_coordinates())[1][free][:, free].tocsc()
    M = system.mass_matrix()[free][:, free].tocsc()
    w2 = np.sort(spla.eigsh(K, n_modes, M, sigma=0.0, which="LM")[0])
    return (np.sqrt(w2) / (2.0 * np.pi)).tolist()


# --------------------------------------------------------------------------------------------- statics
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


def statics(asm, params) -> tuple[dict, np.ndarray]:
    """Holding torques and equilibrium at q0; tip deflection against Euler–Bernoulli. Returns (numbers, q)."""
    tau_k, eq = fb.holding_inputs(asm)
    payload, tree = asm.bodies[0], asm.trees[0]
    R, p = flange_pose(asm, asm.q0, params["flange"])
    g = np.array([0.0, 0.0, -params["gravity"]])
    g_local = (R @ _PAYLOAD_AXES).T @ g  # gravity in payload axes
    g_normal = np.array([0.0, g_local[1], g_local[2]])
    normal = g_normal / np.linalg.norm(g_normal)  # the sag direction (payload y/z)
    d = tip_offsets(asm, eq.q, params["flange"])[0]
    eb = euler_bernoulli_sag(
        params["payload_size"], params["young"], params["density"], np.linalg.norm(g_normal), normal
    )
    x = asm.coordinates(payload, eq.q[None])[0]
    lumped = np.asarray(payload.mass_matrix().sum(axis=1)).ravel()[0::3]  # ∫ρN_a dV: the centre of mass is exact
    limits = [tree.limits[l.name].effort for l in tree.links if l.coordinate is not None]
    return {
        "holding_torques": tau_k.tolist(),
        "effort_limits": limits,
        "joint_names": [tree.limits[l.name].joint for l in tree.links if l.coordinate is not None],
        "flange_position": p.tolist(),
        "flange_rotation": R.tolist(),
        "payload_mass": float(lumped.sum()),
        "payload_centre_of_mass": (lumped @ x / lumped.sum()).tolist(),
        "tip_deflection": d.tolist(),
        "tip_deflection_normal": float(d @ normal),
        "euler_bernoulli_tip": eb,
        "ratio_to_euler_bernoulli": float(d @ normal / eb),
        "residual": float(eq.residual),
        "violation": float(eq.violation),
    }, eq.q


def rank_comparison(asm, q, flange=FLANGE) -> dict:
    """The rank check of J̄ᵀΘᵀSᵀ [DE 5.3] for the flange pose and for the payload's tip node, at q, v = 0."""
    out = {}
    for task in (flange_task(asm, flange), tip_task(asm)):
        check = fb.control.actuation_report(asm, q, np.zeros(asm.n_dofs), task).maps["direct"]
        out[task.name] = {
            "singular_values": [float(s) for s in check.singular_values],
            "rank": check.rank,
            "rows": task.n_rows,
            "sigma_ref": check.reference,
            "ok": bool(check.ok),
            "why": check.reason or check.tolerance_text(),
        }
    return out


# --------------------------------------------------------------------------------------------- dynamics
def run(asm, q0, lift, yaw, t_move, t_end, omega, dt, rho_inf, flange=FLANGE, save_to=None, context=None):
    """The controlled simulation from the static equilibrium q0 at rest; returns (Results, reference)."""
    frame = asm.trees[0].frame(flange)
    ev = asm.evaluate(0.0, q0)
    reference = MinimumJerkMove(frame.position(ev), frame.rotation(ev), lift, yaw, t_move)
    controller = fb.control.DirectMappingControl(flange_task(asm, flange), reference, kp=omega**2, kv=2.0 * omega)
    kw = {"save_to": save_to} if save_to is not None else {}
    res = fb.simulate(
        asm,
        t_end,
        integrator=fb.GeneralizedAlpha(dt=dt, rho_inf=rho_inf),
        controller=controller,
        q0=q0,
        v0=np.zeros(asm.n_dofs),
        context=context,
        **kw,
    )
    return res, reference


def ringing(times, signal, level=0.0) -> dict:
    """Frequency [Hz] from the zero crossings of ``signal − level`` (linear interpolation) and the damping
    ratio from the logarithmic decrement of its peaks."""
    y = np.asarray(signal, dtype=float) - level
    i = np.flatnonzero(np.sign(y[:-1]) * np.sign(y[1:]) < 0)
    if len(i) < 3:
        return {"frequency": float("nan"), "damping_ratio": float("nan"), "crossings": len(i)}
    tz = times[i] - y[i] * (times[i + 1] - times[i]) / (y[i + 1] - y[i])
    frequency = (len(tz) - 1) / (2.0 * (tz[-1] - tz[0]))
    peaks = [int(a + np.argmax(np.abs(y[a : b + 1]))) for a, b in itertools.pairwise(i)]  # one per half period
    amp = np.abs(y[peaks])
    zeta = float(np.log(amp[0] / amp[-1]) / (np.pi * (len(amp) - 1))) if len(amp) > 1 else float("nan")
    return {"frequency": float(frequency), "damping_ratio": zeta, "crossings": len(i)}


def numbers(asm, res, static, params) -> dict:
    """Summary numbers of a run: tracking, drift, energy balance, payload ringing against beam theory."""
    t, err = res.times, res.histories["task_error"]
    stats = res.metadata["statistics"]
    energy = res.histories["energy"]
    tip = tip_offsets(asm, res.q, params["flange"])
    after = t >= params["t_move"]
    f_eb = euler_bernoulli_frequencies(params["payload_size"], params["young"], params["density"])
    f_clamped = clamped_frequencies(
        params["payload_size"],
        params["divisions"],
        params["order"],
        params["young"],
        params["poisson"],
        params["density"],
    )
    rest = static["tip_deflection"]  # the static sag: the same at the goal (a turn about g)
    rings = {"y": ringing(t[after], tip[after, 1], rest[1]), "z": ringing(t[after], tip[after, 2], rest[2])}
    torque = np.abs(res.histories["tau_k"]).max(axis=0)
    return {
        "n_coordinates": int(asm.n_dofs),
        "n_constraints": int(asm.n_constraints),
        "max_position_error": float(np.linalg.norm(err[:, :3], axis=1).max()),
        "max_orientation_error": float(np.linalg.norm(err[:, 3:], axis=1).max()),
        "final_position_error": float(np.linalg.norm(err[-1, :3])),
        "max_violation": float(np.max(res.histories["violation"])),
        "energy_balance_error": float(energy[-1] - energy[0] - stats["applied_work"] + stats["dissipated"]),
        "applied_work": float(stats["applied_work"]),
        "dissipated": float(stats["dissipated"]),
        "max_torque": torque.tolist(),
        "max_torque_over_effort_limit": float(np.max(torque / np.asarray(static["effort_limits"]))),
        "tip_lateral_range": [float(tip[:, 1].min()), float(tip[:, 1].max())],
        "tip_vertical_range": [float(tip[:, 2].min()), float(tip[:, 2].max())],
        "euler_bernoulli_frequency": f_eb,
        "clamped_bar_frequencies": f_clamped,
        "clamped_bar_ratio": [f / f_eb["z"] for f in f_clamped],
        "kelvin_voigt_damping_ratio": {k: float(np.pi * f * params["damping"]) for k, f in f_eb.items()},
        "ringing": {k: {**v, "ratio_to_euler_bernoulli": float(v["frequency"] / f_eb[k])} for k, v in rings.items()},
        "steps": int(stats["steps"]),
        "newton_iterations": int(stats["newton_iterations"]),
        "rejected": int(stats["rejected"]),
        "wall_seconds": float(stats["wall_seconds"]),
    }


# --------------------------------------------------------------------------------------------- outputs
def yaw_angles(asm, res, flange=FLANGE) -> np.ndarray:
    """(s,) rotation of the flange about world z since the start [rad] (the flange turns only about z)."""
    R0 = flange_pose(asm, res.q[0], flange)[0]
    turns = [flange_pose(asm, q, flange)[0] @ R0.T for q in res.q]
    return np.array([np.arctan2(R[1, 0], R[0, 0]) for R in turns])


def plot_task(path, res, reference, yaw) -> None:
    t, x, err = res.times, res.histories["task_x"], res.histories["task_error"]
    desired = np.array([reference(ti)[0][0] for ti in t])
    yaw_desired = np.array([reference.yaw * reference.profile(ti)[0] for ti in t])
    fig, (a, b, c) = fb.plots.subplots(1, 3, figsize=(14, 4.2))
    for i, lab in enumerate("xyz"):
        a.plot(t, x[:, i] - x[0, i], lw=1.5, label=f"{lab} − {lab}₀")
        a.plot(t, desired[:, i] - x[0, i], "k:", lw=1.0)
    a.set(xlabel="t [s]", ylabel="flange displacement [m]", title="flange position (dotted: desired)")
    a.legend(fontsize=8)
    b.plot(t, yaw, lw=1.5, label="flange")
    b.plot(t, yaw_desired, "k:", lw=1.0, label="desired")
    b.set(xlabel="t [s]", ylabel="rotation about world z [rad]", title="flange yaw")
    b.legend(fontsize=8)
    c.plot(t, 1e6 * np.linalg.norm(err[:, :3], axis=1), label="‖position error‖ [µm]")
    c.plot(t, 1e6 * np.linalg.norm(err[:, 3:], axis=1), label="‖orientation error‖ [µrad]")
    c.set(xlabel="t [s]", ylabel="error", title="task error (held torques: O(dt))")
    c.legend(fontsize=8)
    fb.plots.save(fig, path, dpi=120)


def plot_tip(path, times, tip, static) -> None:
    fig, ax = fb.plots.subplots(figsize=(8, 3.8))
    ax.plot(times, 1e3 * tip[:, 1], label="lateral (payload y)")
    ax.plot(times, 1e3 * tip[:, 2], label="vertical (payload z)")
    ax.axhline(
        1e3 * static["euler_bernoulli_tip"] * np.sign(static["tip_deflection"][2]),
        color="k",
        ls=":",
        lw=1,
        label="Euler–Bernoulli static sag",
    )
    ax.set(xlabel="t [s]", ylabel="tip deflection [mm]", title="payload tip relative to the flange frame")
    ax.legend(fontsize=8)
    fb.plots.save(fig, path, dpi=120)


def write_outputs(out, asm, res, reference, static, params, vtk_every) -> None:
    """ParaView series, CSV, figures and a screenshot (the results are in ``out`` already)."""
    fb.io.write_link_pvd(out, res, every=vtk_every)
    fb.io.write_pvd(out, res, every=vtk_every)
    fb.io.write_histories_csv(out / "histories.csv", res)
    fb.plots.plot_histories(
        res,
        out / "histories.png",
        panels=("task", "torque", "energy"),
        title="UR5 carrying a flexible bar: flange pose control",
    )
    plot_task(out / "task.png", res, reference, yaw_angles(asm, res, params["flange"]))
    plot_tip(out / "tip.png", res.times, tip_offsets(asm, res.q, params["flange"]), static)
    fb.view.screenshot(out, out / "screenshot.png", field="von_mises")


def main(
    out_dir="out/17_urdf_arm_payload",
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
) -> dict:
    """Statics and holding torques, rank comparison, the controlled move, outputs and summary (returned and in
    summary.txt). ``outputs=False`` skips the ParaView series, figures and screenshot (for studies)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    params = {
        "robot": str(robot),
        "flange": flange,
        "q0": [float(x) for x in q0],
        "payload_size": list(payload_size),
        "divisions": list(divisions),
        "order": order,
        "young": young,
        "poisson": poisson,
        "density": density,
        "damping": damping,
        "gravity": gravity,
        "lift": list(lift),
        "yaw": yaw,
        "t_move": t_move,
        "t_end": t_end,
        "omega": omega,
        "dt": dt,
        "rho_inf": rho_inf,
    }
    asm = build(robot, flange, q0, payload_size, divisions, order, young, poisson, density, damping, gravity).assemble()
    static, q_start = statics(asm, params)
    ranks = rank_comparison(asm, q_start, flange)
    res, reference = run(
        asm, q_start, lift, yaw, t_move, t_end, omega, dt, rho_inf, flange, save_to=out, context=context
    )
    summary = {"static": static, "ranks": ranks, **numbers(asm, res, static, params), "parameters": params}
    if outputs:
        write_outputs(out, asm, res, reference, static, params, vtk_every)
    (out / "summary.txt").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


if __name__ == "__main__":
    main()
