"""
Contact with friction: blocks that stick or slide, a ball that rolls or slips, a beam that lands
================================================================================================

Unilateral contact (``fb.Contact``: the gap never closes below zero, the surface only pushes, Coulomb friction holds
or opposes the slip) stepped by the nonsmooth stepper ``fb.MoreauJean``. Three scenes, each against what is expected
from the textbooks:

* boxes on a 30° incline with Coulomb coefficients μ = 0.3 … 0.9: those with μ ≥ tan θ stick (not a picometre of
  creep), the others slide at g (sin θ − μ cos θ);
* a ball on slopes of 20° … 60° with μ = 0.3: it rolls without slipping at 5/7 g sin θ while tan θ ≤ 7μ/2, and
  slips at g (sin θ − μ cos θ) above;
* a flexible beam dropped on the floor lands on its nodes, never gains energy and comes to rest.
"""

# %%
# Boxes on an incline
# -------------------
# Each box is a free body with four corner contacts on the tilted plane (``cases/28_blocks_on_incline.py`` builds the
# same scene with more outputs).

import matplotlib.pyplot as plt
import numpy as np

import flexbody as fb

G, THETA = 9.81, np.radians(30.0)
normal = np.array([np.sin(THETA), 0.0, np.cos(THETA)])
down = np.array([np.cos(THETA), 0.0, -np.sin(THETA)])
half = (0.2, 0.1, 0.05)
frictions = (0.3, 0.5, 0.7, 0.9)
trees, contacts, q0 = [], [], []
for k, mu in enumerate(frictions):
    tree = fb.RigidTree(f"box{k}", gravity=(0.0, 0.0, -G))
    box = tree.add_link("box", None, fb.FreeFlyer(), mass=2.0, inertia=(0.008, 0.028, 0.033))
    for sx in (-1, 1):
        for sy in (-1, 1):
            corner = tree.point(box, (sx * half[0], sy * half[1], -half[2]))
            contacts.append(fb.Contact(corner, fb.Plane(normal), friction=mu))
    trees.append(tree)
    q0 += [*(half[2] * normal + (0.0, 0.5 * k, 0.0)), 0.0, THETA, 0.0]
boxes = fb.simulate(fb.System(trees, constraints=contacts, q0=q0), 1.0, integrator=fb.MoreauJean(dt=2e-3))

fig, ax = plt.subplots(figsize=(7, 4))
for k, mu in enumerate(frictions):
    travelled = (boxes.q[:, 6 * k : 6 * k + 3] - boxes.q[0, 6 * k : 6 * k + 3]) @ down
    accel = max(0.0, G * (np.sin(THETA) - mu * np.cos(THETA)))
    ax.plot(boxes.times, travelled, color=f"C{k}", label=f"μ = {mu}")
    ax.plot(boxes.times, 0.5 * accel * boxes.times**2, "k:", lw=1)
ax.set_xlabel("t [s]")
ax.set_ylabel("distance down the slope [m]")
ax.set_title("boxes on a 30° incline (dotted: ½ g (sin θ − μ cos θ) t², or 0 where μ ≥ tan θ)")
ax.legend()
plt.show()

# %%
# A ball on slopes
# ----------------
# A ball of radius R on a link frame (``radius=R``): its contact point moves with ẋ + R n × ω, so it can roll.


def ball_acceleration(angle, mu=0.3, radius=0.05):
    theta = np.radians(angle)
    n = np.array([np.sin(theta), 0.0, np.cos(theta)])
    tree = fb.RigidTree("ball", gravity=(0.0, 0.0, -G))
    tree.add_link("x", None, fb.Prismatic((1.0, 0.0, 0.0)))
    tree.add_link("z", "x", fb.Prismatic((0.0, 0.0, 1.0)))
    ball = tree.add_link("ball", "z", fb.Revolute((0.0, 1.0, 0.0)), mass=1.0, inertia=(0.4 * radius**2,) * 3)
    contact = fb.Contact(tree.frame(ball), fb.Plane(n), friction=mu, radius=radius)
    centre = radius * n
    run = fb.simulate(
        fb.System([tree], constraints=[contact], q0=(centre[0], centre[2], 0.0)), 0.2, integrator=fb.MoreauJean(dt=1e-3)
    )
    speed = run.v[-1, 0] * np.cos(theta) - run.v[-1, 1] * np.sin(theta)
    return speed / run.times[-1]


angles = np.arange(20.0, 61.0, 5.0)
measured = [ball_acceleration(a) for a in angles]
grid = np.linspace(20.0, 60.0, 200)
rolls = 5 / 7 * G * np.sin(np.radians(grid))
slips = G * (np.sin(np.radians(grid)) - 0.3 * np.cos(np.radians(grid)))
fig, ax = plt.subplots(figsize=(7, 4))
ax.plot(grid, np.where(np.tan(np.radians(grid)) <= 1.05, rolls, slips), "k-", lw=1, label="closed form")
ax.plot(angles, measured, "o", label="flexbody (MoreauJean)")
ax.axvline(np.degrees(np.arctan(1.05)), color="grey", ls=":", label="tan θ = 7μ/2")
ax.set_xlabel("slope θ [deg]")
ax.set_ylabel("acceleration down the slope [m/s²]")
ax.legend()
plt.show()

# %%
# A flexible beam dropped on the floor
# ------------------------------------
# Its bottom nodes carry the contacts; the energy never grows, and it comes to rest with the contacts carrying its
# weight (``cases/29_beam_dropped_on_floor.py``: without friction, exactly in the compression of its own weight).

mesh = fb.mesh.box((1.0, 0.1, 0.05), (8, 1, 1), order=2)
beam = fb.FlexibleBody("beam", mesh, fb.StVenantKirchhoff(young=2e6, poisson=0.0, density=1000.0, damping=0.01))
floor = fb.Plane((0.0, 0.0, 1.0))
nodes = [fb.Contact(fb.Node(beam, int(i)), floor, friction=0.5) for i in mesh.node_sets["z0"]]
x, y, z = mesh.points.T
tilt = np.radians(5.0)
placed = np.column_stack([x * np.cos(tilt) - z * np.sin(tilt), y, x * np.sin(tilt) + z * np.cos(tilt) + 0.05])
system = fb.System([beam], loads=[fb.Gravity(beam)], constraints=nodes, q0=placed.ravel())
dropped = fb.simulate(system, 0.6, integrator=fb.MoreauJean(dt=1e-3), record_every=5)
weight = 1000.0 * 1.0 * 0.1 * 0.05 * G  # N
fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 5), sharex=True)
top.plot(dropped.times, dropped.histories["energy"])
top.set_ylabel("energy [J]")
bottom.plot(dropped.times, dropped.histories["contact_normal_force"].sum(axis=1) / weight)
bottom.set_ylabel("Σ f_n / m g")
bottom.set_xlabel("t [s]")
bottom.set_ylim(0.0, 3.0)
plt.show()
normal = dropped.histories["contact_normal_force"][-1].sum() / weight
print(f"at the end: largest speed {np.abs(dropped.v[-1]).max():.1e} m/s, Σ f_n / m g = {normal:.12f}")
