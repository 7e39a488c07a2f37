"""
Wiping with a flexible blade: force through a compliant tool by admittance
==========================================================================

The UR5 holds a polymer blade (ANCF bricks) at its flange and wipes a table that falls away along the stroke, a
slope its motion plan does not know. The blade's edge nodes touch the table through ``fb.Contact`` (μ = 0.3), stepped
by ``fb.MoreauJean``. The joints cannot hold the blade's nodes directly — they reach them only through its elasticity
— so the force is regulated around the flange: ``fb.control.AdmittanceControl`` moves the reference of the flange's
motion law until the measured normal force (``ContactForceLoop``) and the blade tip's position along the stroke
(``TaskLoop``) reach their set-points. Expected: the force held at 5 N while the table recedes, the blade bending
under it; the same stroke under the motion law alone loses the table where the undeformed blade, carried by the
flange's reference, would leave it (a closed-form time).
"""

# %%
# The robot, the blade and the table
# ----------------------------------
# ``fb.mechanisms.robot_with_tool`` puts the blade on the flange (its length along the flange's z axis). The start
# is the static equilibrium with the joints held; the table passes through the blade's lowest edge node there.

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import flexbody as fb

URDF = next(
    base / "meshes/robots/ur5_robot.urdf"
    for base in (Path.cwd(), *Path.cwd().parents)
    if (base / "meshes/robots/ur5_robot.urdf").is_file()
)
Q0, SLOPE, FORCE, SPEED, DEPTH = (0.0, -1.2, 1.8, 0.171, np.pi / 2, 0.0), 0.3, 5.0, 0.05, 0.008
ctl = fb.control

held = fb.mechanisms.robot_with_tool(
    URDF, "tool0", Q0, (0.10, 0.05, 0.004), (3, 1, 1), name="blade", young=5e8, density=1200.0, damping=1e-3
)
q = fb.holding_inputs(held)[1].q
blade = held.bodies[0]
edge = blade.nodes("x1")
points = held.assemble().coordinates(blade, q[None], nodes=edge)[0]
table = fb.Plane((-np.sin(SLOPE), 0.0, np.cos(SLOPE)), point=points[np.argmin(points[:, 2])])
contacts = [fb.Contact(fb.Node(blade, int(i)), table, friction=0.3, name=f"edge{i}") for i in edge]
system = fb.System(held.trees + held.bodies, [*held.constraints, *contacts], loads=held.loads,
                   actuators=held.actuators, q0=q)  # fmt: skip
asm = system.assemble()

# %%
# The two laws
# ------------
# The flange pose is tracked by the direct mapping. Its reference moves along −x from 0.5 s (the speed rising over
# 0.2 s); the motion-only law also presses it 8 mm down over the first 0.5 s.

frame = asm.trees[0].frame("tool0")
ws = asm.workspace(0.0, asm.q0)
p0, R0 = frame.position(ws), frame.rotation(ws)


def stroke(t):
    u = max(t - 0.5, 0.0)
    if u < 0.2:
        return SPEED * u * u / 0.4, SPEED * u / 0.2, SPEED / 0.2 if u > 0 else 0.0
    return SPEED * (u - 0.1), SPEED, 0.0


def law(depth):
    def reference(t):
        x, xd, xdd = stroke(t)
        u = min(t / 0.5, 1.0)
        z, zd, zdd = depth * u * u * (3 - 2 * u), depth * 12 * u * (1 - u), depth * 24 * (1 - 2 * u) * (u < 1)
        return [p0 - np.array([x, 0.0, z]), R0], np.array([-xd, 0, -zd, 0, 0, 0]), np.array([-xdd, 0, -zdd, 0, 0, 0])

    task = ctl.StackedTask([ctl.PointTask(frame, name="flange"), ctl.OrientationTask(frame, name="flange_R")])
    return ctl.DirectMappingControl(task, reference, kp=400.0, kv=40.0)


edge_low = edge[np.argsort(asm.coordinates(blade, asm.q0[None], nodes=edge)[0][:, 2])][0]
tip = ctl.PointTask(fb.Node(blade, int(edge_low)), components=(0,), name="tip")
x_tip = float(tip.evaluate(ws).x[0])
press = ctl.ContactForceLoop(FORCE, (0, 0, -1, 0, 0, 0), 2e-2, integral_gain=0.1)
track = ctl.TaskLoop(tip, lambda t: (np.array([x_tip - stroke(t)[0]]), None, None), np.eye(6)[:, :1], 5.0)
wiping = fb.simulate(
    asm, 1.4, integrator=fb.MoreauJean(dt=1e-3), controller=ctl.AdmittanceControl(law(0.0), [press, track])
)
alone = fb.simulate(asm, 1.25, integrator=fb.MoreauJean(dt=1e-3), controller=law(DEPTH))
distance = DEPTH / np.tan(SLOPE)  # where the undeformed blade leaves the table
t_star = 0.5 + 0.2 + (distance - SPEED * 0.1) / SPEED

# %%
# The normal force and the blade
# ------------------------------
# Left: Σ f_n of both runs; the motion law alone lets it fall to zero at t*. Right: the blade in the xz-plane at the
# end of the force-controlled run (its nodes), bent by the 5 N it presses with and the friction it drags.

fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
for name, res in (("admittance (5 N)", wiping), ("motion only", alone)):
    left.plot(res.times[:-1], res.histories["contact_normal_force"][:-1].sum(axis=1), label=name)
left.axhline(FORCE, color="k", ls=":", lw=1)
left.axvline(t_star, color="k", ls="--", lw=1, label="t* (closed form)")
left.set(xlabel="t [s]", ylabel="Σ normal force [N]")
left.legend()
nodes = asm.coordinates(blade, wiping.q[-1:])[0]
right.plot(nodes[:, 0], nodes[:, 2], "o", ms=3, label="blade nodes at 1.4 s")
xs = np.linspace(nodes[:, 0].min() - 0.02, nodes[:, 0].max() + 0.02, 2)
right.plot(xs, table.point[2] + np.tan(SLOPE) * (xs - table.point[0]), "k-", lw=1, label="table")
right.set(xlabel="x [m]", ylabel="z [m]", aspect="equal")
right.legend()
plt.tight_layout()
plt.show()

normal = wiping.histories["contact_normal_force"][:-1].sum(axis=1)
print(f"force from 1 s on: {normal[wiping.times[:-1] >= 1.0].min():.3f}–{normal[wiping.times[:-1] >= 1.0].max():.3f} N")
opened = np.flatnonzero(alone.histories["contact_normal_force"][:-1].sum(axis=1)[100:] == 0.0)[0] + 100
print(f"motion only: contact lost at the step from {alone.times[opened]:.3f} s, t* = {t_star:.4f} s")
