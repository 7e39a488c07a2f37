"""
A UR5 from its URDF file carrying a flexible bar
================================================

A Universal Robots UR5, loaded from its URDF file with :func:`flexbody.load_urdf` (six revolute joints, masses and
inertias from the file), holds a 1 m PVC bar (20 × 20 mm, E = 3 GPa, ν = 0, ρ = 1400 kg/m³, a little Kelvin–Voigt
damping) sticking out of its tool flange. The bar is a solid of 10 eight-node ANCF bricks (with incompatible modes,
so that they do not lock in bending) attached to the flange frame ``tool0``. The robot first holds the bar still,
then a task-level controller moves the flange up by 15 cm while turning it by 0.5 rad about the vertical, and holds
it while the bar rings (flexbody's case 17, shortened).

Expected: (1) holding still, the bar sags like a cantilever under its own weight, ρ g A L⁴ / (8 E I) = 1.717 cm
(Euler–Bernoulli); (2) the controller tracks the flange pose with an error of the order of the time step (its
torque is held over a step); (3) the energy balance E(t) − E(0) = W_τ − D (work of the joint torques minus the
material damping) holds to the solver tolerance; (4) after the move the bar rings near its first clamped bending
frequency 1.8751² √(E I / (ρ A L⁴)) / 2π = 4.729 Hz (Blevins, Table 8-1), a little lower at Δt = 2 ms because the
held torque softens the robot's grip at first order in Δt.
"""

# %%
# The robot and its payload
# -------------------------
# The URDF file ships with flexbody's sources (``meshes/robots/ur5_robot.urdf``); we look for it from the working
# directory up. ``visuals=False`` skips the visual meshes (not shipped): the links are drawn as lines.

import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import flexbody as fb

URDF = next(
    base / "meshes/robots/ur5_robot.urdf"
    for base in (Path.cwd(), *Path.cwd().parents)
    if (base / "meshes/robots/ur5_robot.urdf").is_file()
)
Q0 = np.array([0.0, -1.2, 1.8, -0.6, np.pi / 2, 0.0])  # rad: the flange's z axis horizontal
LENGTH, SIDE = 1.0, 0.02  # m
YOUNG, DENSITY, G = 3e9, 1400.0, 9.81

tree = fb.load_urdf(URDF, gravity=(0.0, 0.0, -G), visuals=False)
flange = tree.link("tool0")
kin = tree.kinematics(Q0)
R_flange, p_flange = kin.R[flange.index], kin.p[flange.index]
# the bar's axes in the flange frame: x along the flange's z (out of the tool), y along its x, z along its y; at Q0
# they are the world's axes (the bar horizontal along x, its z up)
AXES = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])
box = fb.mesh.box((LENGTH, SIDE, SIDE), (10, 1, 1), origin=(0.0, -SIDE / 2, -SIDE / 2))
mesh = box.with_points(box.points @ (R_flange @ AXES).T + p_flange)  # the bar on the flange at Q0
material = fb.StVenantKirchhoff(young=YOUNG, poisson=0.0, density=DENSITY, damping=0.001)
payload = fb.FlexibleBody("payload", mesh, material, locking="incompatible_modes")
joints = [link for link in tree.links if link.coordinate is not None]
system = fb.System(
    [tree, payload],
    [fb.AttachNodes(payload, "x0", flange, name="flange")],
    loads=[fb.Gravity(payload, (0.0, 0.0, -G))],
    actuators=joints,
    q0=Q0,
)
asm = system.assemble()
print(
    f"{len(joints)} joints {[link.name for link in joints]}, {asm.n_dofs} coordinates, "
    f"{asm.n_constraints} constraint rows"
)

# %%
# (1) Holding still
# -----------------
# :func:`flexbody.holding_inputs` finds the joint torques that hold Q0 and the static equilibrium they hold (the
# bar sagging). The sag is measured in the flange frame, relative to the straight bar.


def flange_pose(q):
    """Rotation (3, 3) of the bar's axes and origin (3,) [m] of the flange at the system coordinates q."""
    k = tree.kinematics(asm.coordinates(tree, q))
    return k.R[flange.index] @ AXES, k.p[flange.index]


tip_nodes = payload.nodes("x1")
rest = (R_flange @ AXES).T @ (mesh.points[tip_nodes].mean(axis=0) - p_flange)


def tip_deflection(qs):
    """(s, 3) tip of the bar relative to where the flange carries the straight bar, in the bar's axes [m]."""
    tips = asm.coordinates(payload, np.atleast_2d(qs), nodes=tip_nodes).mean(axis=1)
    return np.array([flange_pose(q)[0].T @ (x - flange_pose(q)[1]) - rest for q, x in zip(np.atleast_2d(qs), tips)])


torques, equilibrium = fb.holding_inputs(asm)
sag = -tip_deflection(equilibrium.q)[0, 2]  # downwards along the bar's z
euler_bernoulli = DENSITY * G * SIDE**2 * LENGTH**4 / (8 * YOUNG * SIDE**4 / 12)
print(f"holding torques [N·m]: {np.round(torques, 3)}")
print(
    f"static sag: flexbody {100 * sag:.4f} cm, Euler–Bernoulli {100 * euler_bernoulli:.4f} cm, "
    f"ratio {sag / euler_bernoulli:.5f}"
)

# %%
# (2) A controlled move
# ---------------------
# The task is the full pose of the flange frame: its origin (:class:`flexbody.PointTask`, 3 rows) and orientation
# (:class:`flexbody.OrientationTask`, 3 rows), as many rows as joints. The reference is a rest-to-rest
# minimum-jerk profile s(u) = 10u³ − 15u⁴ + 6u⁵ (u = t / T_MOVE) of a 15 cm lift and a 0.5 rad turn about the
# vertical, with its exact velocity and acceleration. :class:`flexbody.control.DirectMappingControl` computes the
# joint torques on the whole constrained system (the bar's nodes are passive coordinates) with
# f* = K_p e + K_v ė + ẍ_d, K_p = ω², K_v = 2ω, ω = 15 rad/s, once per step. The integrator is generalized-α with
# ρ∞ = 1 (no numerical damping, so that only the material dissipates); flexbody warns that the constraint
# multipliers are then undamped, which matters for long runs only.

T_MOVE, T_END, LIFT, YAW, OMEGA, DT = 0.5, 1.2, np.array([0.0, 0.0, 0.15]), 0.5, 15.0, 2e-3
frame = tree.frame("tool0")
start = asm.workspace(0.0, equilibrium.q)
p_start, R_start = frame.position(start), frame.rotation(start)


def minimum_jerk(t):
    """Desired [position (3,), rotation (3, 3)], velocity (6,) and acceleration (6,) of the flange at t [s]."""
    u = min(max(t / T_MOVE, 0.0), 1.0)
    s, ds, dds = (
        10 * u**3 - 15 * u**4 + 6 * u**5,
        30 * u**2 * (1 - u) ** 2 / T_MOVE,
        60 * u * (1 - u) * (1 - 2 * u) / T_MOVE**2,
    )
    c, sn = np.cos(YAW * s), np.sin(YAW * s)
    turn = np.array([[c, -sn, 0.0], [sn, c, 0.0], [0.0, 0.0, 1.0]])
    up = np.array([0.0, 0.0, 1.0])
    return [p_start + s * LIFT, turn @ R_start], np.r_[ds * LIFT, YAW * ds * up], np.r_[dds * LIFT, YAW * dds * up]


task = fb.StackedTask([fb.PointTask(frame, name="flange"), fb.OrientationTask(frame, name="flange_R")])
controller = fb.control.DirectMappingControl(task, minimum_jerk, kp=OMEGA**2, kv=2 * OMEGA)
results = fb.simulate(
    asm,
    T_END,
    integrator=fb.GeneralizedAlpha(dt=DT, rho_inf=1.0),
    controller=controller,
    q0=equilibrium.q,
    v0=np.zeros(asm.n_dofs),
)
stats = results.metadata["statistics"]
error = results.histories["task_error"]  # (steps, 6): position [m], orientation [rad]
energy = results.histories["energy"]
balance = energy[-1] - energy[0] - stats["applied_work"] + stats["dissipated"]
print(f"{stats['steps']} steps in {stats['wall_seconds']:.1f} s")
print(
    f"max flange position error {1e6 * np.linalg.norm(error[:, :3], axis=1).max():.0f} µm, "
    f"orientation error {1e6 * np.linalg.norm(error[:, 3:], axis=1).max():.0f} µrad"
)
print(
    f"energy balance: E(T) − E(0) − W_τ + D = {balance:.1e} J (W_τ = {stats['applied_work']:.3f} J, "
    f"D = {stats['dissipated']:.4f} J)"
)

# %%
# (3) The bar rings
# -----------------
# After the move the flange is held and the bar vibrates about its static sag. Its frequency is measured from the
# crossings of the vertical tip deflection through the static value.

t = results.times
tip = tip_deflection(results.q)  # (steps, 3) in the bar's axes [m]
after = t >= T_MOVE
y = tip[after, 2] + sag
i = np.flatnonzero(np.sign(y[:-1]) * np.sign(y[1:]) < 0)
crossings = t[after][i] - y[i] * DT / (y[i + 1] - y[i])
frequency = (len(crossings) - 1) / (2 * (crossings[-1] - crossings[0]))
f_euler_bernoulli = 1.8751**2 * np.sqrt(YOUNG * SIDE**2 / 12 / (DENSITY * LENGTH**4)) / (2 * np.pi)
print(
    f"ringing frequency {frequency:.3f} Hz, Euler–Bernoulli clamped bar {f_euler_bernoulli:.3f} Hz, "
    f"ratio {frequency / f_euler_bernoulli:.4f}"
)

fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 3.8))
ax.plot(t, 1e6 * np.linalg.norm(error[:, :3], axis=1), label="‖position error‖ [µm]")
ax.plot(t, 1e6 * np.linalg.norm(error[:, 3:], axis=1), label="‖orientation error‖ [µrad]")
ax.axvline(T_MOVE, color="0.6", ls="--", lw=0.8)
ax.set(xlabel="t [s]", title="flange tracking error")
ax.legend(fontsize=8)
bx.plot(t, 100 * tip[:, 2], label="vertical (bar z)")
bx.plot(t, 100 * tip[:, 1], label="lateral (bar y)")
bx.axhline(-100 * euler_bernoulli, color="k", ls=":", lw=1, label="static sag, Euler–Bernoulli")
bx.axvline(T_MOVE, color="0.6", ls="--", lw=0.8)
bx.set(xlabel="t [s]", ylabel="tip deflection [cm]", title="bar tip relative to the flange")
bx.legend(fontsize=8)
for a in (ax, bx):
    a.grid(alpha=0.3)
fig.tight_layout()
plt.show()

# %%
# The robot in 3-D
# ----------------
# The UR5's links as lines with their frames, and the bar coloured by its velocity, at the middle of the move.

out = fb.io.write_results(tempfile.mkdtemp(), results)
plotter = fb.view.plotter(out, field="velocity", step=int(np.argmin(np.abs(t - T_MOVE / 2))), window_size=(1000, 700))
plotter.show()
