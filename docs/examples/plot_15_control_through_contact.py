"""
Control through contact: wiping a floor at a set force, and the wall a motion-only law loses
============================================================================================

A planar three-link arm whose tip touches a surface (``fb.Contact``, friction μ = 0.3), controlled by
``fb.control.ContactForceControl`` and stepped by ``fb.MoreauJean``, which measures the contact forces the controller
feeds back. Two scenes:

* a wiping stroke that starts from rest and turns back, pressing the floor with 20 N: expected, the normal force at
  20 N (but for a step where the slip stops at the turn), the friction on the cone against the slip (−μ f_n, then
  +μ f_n), the tip on its path;
* the tip riding down a wall under Aghili's motion-only law (``motion_only=True``: the contact held as if it were
  bilateral): expected, the contact opens where the force the law needs (its prediction) turns from a push to a pull
  — the force law on the same stroke keeps it.
"""

# %%
# The arm and its wiping stroke
# -----------------------------
# The task is the tip's x and the last link's orientation; the contact takes care of the rest. Holding the sticking
# tip still would leave the task short, so the controller lets it break away the way the task moves it.

import matplotlib.pyplot as plt
import numpy as np

import flexbody as fb

G, MU, FORCE, DT = 9.81, 0.3, 20.0, 1e-3
ctl = fb.control


def arm():
    tree = fb.RigidTree("arm", gravity=(0.0, 0.0, -G))
    y = (0.0, 1.0, 0.0)
    tree.add_link("l1", None, fb.Revolute(y), mass=2.0, com=(0.2, 0, 0), inertia=(0.01, 0.03, 0.03))
    tree.add_link("l2", "l1", fb.Revolute(y), origin=(0.4, 0, 0), mass=1.5, com=(0.2, 0, 0), inertia=(0.01, 0.02, 0.02))
    tree.add_link("l3", "l2", fb.Revolute(y), origin=(0.4, 0, 0), mass=0.5, com=(0.1, 0, 0), inertia=(5e-3,) * 3)
    return tree, tree.point("l3", (0.2, 0.0, 0.0))


def posture(x, z, phi):
    """Joint angles with the tip at (x, z) and the last link at φ (closed-form inverse kinematics, elbow up)."""
    wx, wz = x - 0.2 * np.cos(phi), -(z + 0.2 * np.sin(phi))
    q2 = np.arccos((wx * wx + wz * wz - 0.32) / 0.32)
    q1 = np.arctan2(wz, wx) - np.arctan2(0.4 * np.sin(q2), 0.4 + 0.4 * np.cos(q2))
    return np.array([q1, q2, phi - q1 - q2])


def rotation(phi):
    return np.array([[np.cos(phi), 0.0, np.sin(phi)], [0.0, 1.0, 0.0], [-np.sin(phi), 0.0, np.cos(phi)]])


tree, tip = arm()
x0, z0, phi, amplitude, omega = 0.55, -0.5, 1.2, 0.05, 2 * np.pi
floor = fb.Contact(tip, fb.Plane((0.0, 0.0, 1.0), point=(0.0, 0.0, z0)), friction=MU, name="tip")
wiping = fb.System([tree], constraints=[floor], q0=posture(x0, z0, phi))
task = ctl.StackedTask([ctl.PointTask(tip, components=(0,)), ctl.OrientationTask(tree.frame("l3"))])


def stroke(t):
    x = x0 + amplitude * (1.0 - np.cos(omega * t))
    v, a = amplitude * omega * np.sin(omega * t), amplitude * omega**2 * np.cos(omega * t)
    return [np.array([x]), rotation(phi)], np.array([v, 0.0, 0.0, 0.0]), np.array([a, 0.0, 0.0, 0.0])


wipe = ctl.ContactForceControl(task, stroke, 100.0, 20.0, normal_force=FORCE, gf=1.0, gi=20.0)
run = fb.simulate(wiping, 1.0, integrator=fb.MoreauJean(dt=DT), controller=wipe)
t = run.times[:-1]
normal = run.histories["contact_normal_force"][:-1, 0]
friction = run.histories["contact_friction_force"][:-1, 0, 0]

fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 5), sharex=True)
top.plot(t, normal, label="normal force f_n")
top.axhline(FORCE, color="k", ls=":", lw=1, label="set-point")
top.set_ylabel("[N]")
top.legend()
bottom.plot(t, friction, label="friction along x")
bottom.plot(t, -MU * np.sign(np.sin(omega * t)) * normal, "k:", lw=1, label="∓ μ f_n (Coulomb, against the slip)")
bottom.set_xlabel("t [s]")
bottom.set_ylabel("[N]")
bottom.legend()
top.set_title("wiping from rest and back: the force held, the friction on the cone")
plt.show()

print(f"normal force within {np.abs(normal[np.abs(t - 0.5) > 0.0025] - FORCE).max():.2e} N of 20 N off the turn")

# %%
# Riding down a wall: the motion-only law lets go
# ------------------------------------------------
# The tip rides down the wall x = 0.6 m at 0.5 m/s. The motion-only law asks of the wall whatever force the least
# torque leaves; part way down that force turns to a pull, which a wall cannot give, and the contact opens. The force
# law asks 8 N instead and keeps it.

wall = fb.Contact(tip, fb.Plane((-1.0, 0.0, 0.0), point=(0.6, 0.0, 0.0)), friction=MU, name="tip")
start = posture(0.6, 0.15, 1.0)
down = ctl.StackedTask([ctl.PointTask(tip, components=(2,)), ctl.OrientationTask(tree.frame("l3"))])


def descent(t):
    return [np.array([0.15 - 0.5 * t]), rotation(1.0)], np.array([-0.5, 0.0, 0.0, 0.0]), np.zeros(4)


riding = fb.System([tree], constraints=[wall], q0=start)
at = riding.assemble().workspace(0.0, start, np.zeros(3))
J = np.vstack([tip.jacobian(at)[1][[0, 2]], tree.frame("l3").angular_jacobian(at)[1][1]])
v0 = np.linalg.solve(J, [0.0, -0.5, 0.0])
runs = {
    "motion-only law": ctl.ContactForceControl(down, descent, 100.0, 20.0, 0.0, motion_only=True),
    "force law, 8 N": ctl.ContactForceControl(down, descent, 100.0, 20.0, 8.0, gf=1.0, gi=20.0),
}
fig, ax = plt.subplots(figsize=(7, 4))
for k, (label, controller) in enumerate(runs.items()):
    result = fb.simulate(riding, 0.45, integrator=fb.MoreauJean(dt=DT), controller=controller, v0=v0)
    ax.plot(result.times[:-1], result.histories["contact_normal_force"][:-1, 0], color=f"C{k}", label=label)
    if controller.motion_only:
        predicted = result.histories["contact_force_predicted"][:, 0]
        ax.plot(result.times, predicted, "k:", lw=1, label="the motion-only law's predicted force")
        opened = result.times[np.argmax(result.histories["contact_normal_force"][:, 0] <= 0.0)]
        print(f"the motion-only law loses the wall at t = {opened:.3f} s")
ax.axhline(0.0, color="k", lw=0.5)
ax.set_xlabel("t [s]")
ax.set_ylabel("normal force [N]")
ax.set_title("riding down a wall: the motion-only law loses it where its force turns to a pull")
ax.legend()
plt.show()
