"""
Pressed and colliding flexible bodies: Hertz's line contact and two bars striking end on
========================================================================================

Two uses of unilateral contact on flexible bodies, each against the theory a textbook gives:

* **statics with contact**: an elastic cylinder pressed on a rigid plane (plane strain) by ``fb.solve_static``,
  its rim's nodes the contacts. Expected: Hertz's elliptic pressure p(x) = p₀ √(1 − x²/b²) with half-width
  b = √(4PR/(πE*)) and peak p₀ = 2P/(πb), E* = E/(1 − ν²), for the load P per unit length the contacts carry;
* **flexible–flexible contact**: bar A strikes bar B end on, A's front nodes against B's boundary
  (``fb.BodySurface``), stepped by ``fb.MoreauJean``. Expected from 1-D wave theory: contact for 2L/c at the force
  Z_A Z_B v₀/(Z_A + Z_B) (Z = ρcA), and the total momentum kept.
"""

# %%
# A cylinder pressed on a plane
# -----------------------------
# A 90° sector of the cylinder from a hub at R/2 to the rim, graded toward the contact so that about ten elements
# span the contact's half-width (the user guide's advice for pressures within 2 %); one brick thick with z held.
# The hub is pushed down 0.5 mm; the static solve finds which rim nodes touch and how hard.

import matplotlib.pyplot as plt
import numpy as np

import flexbody as fb

R, HUB, THICKNESS, E, NU = 1.0, 0.5, 0.05, 1.0e6, 0.3
mesh = fb.mesh.box((1.0, 1.0, THICKNESS), (60, 30, 1))
u, v, z = mesh.points.T
angle = -np.pi / 2 - (np.pi / 4) * np.sinh(5.0 * (2 * u - 1)) / np.sinh(5.0)
radius = R - (R - HUB) * (np.exp(5.0 * (1 - v)) - 1) / (np.exp(5.0) - 1)
X = np.column_stack([radius * np.cos(angle), radius * np.sin(angle) + R, z])
cylinder = fb.FlexibleBody("cylinder", mesh.with_points(X), fb.StVenantKirchhoff(E, NU, 1.0))
hub, rim = np.flatnonzero(np.isclose(v, 0.0)), np.flatnonzero(np.isclose(v, 1.0))
constraints = [
    fb.Fix(cylinder, np.arange(len(X)), components=(2,)),
    fb.Fix(cylinder, hub, displacement=(0.0, -5e-4, 0.0), components=(0, 1)),
    *fb.node_contacts(cylinder, fb.Plane((0.0, 1.0, 0.0)), rim),
]
pressed = fb.solve_static(fb.System([cylinder], constraints=constraints), load_steps=2)

force, x = pressed.histories["contact_normal_force"][-1], X[rim, 0]
xs = np.unique(np.round(x, 12))
tributary = np.gradient(xs)  # each rim node's share of the surface's length
pressure = np.array([force[np.isclose(x, xi)].sum() for xi in xs]) / (tributary * THICKNESS)
P = force.sum() / THICKNESS
E_star = E / (1 - NU**2)
b = np.sqrt(4 * P * R / (np.pi * E_star))
p0 = 2 * P / (np.pi * b)
print(f"P = {P:.1f} N/m: Hertz b = {b * 1e3:.2f} mm, p0 = {p0:.0f} Pa; nodal peak {pressure.max():.0f} Pa")

fig, ax = plt.subplots(figsize=(6.4, 3.6))
near = np.abs(xs) < 2.5 * b
ax.plot(xs[near] * 1e3, pressure[near], "o", ms=4, label="contact forces / tributary area")
s = np.linspace(-b, b, 201)
ax.plot(s * 1e3, p0 * np.sqrt(1 - (s / b) ** 2), "-", label="Hertz (Johnson 1985, §4.3)")
ax.set_xlabel("x [mm]")
ax.set_ylabel("contact pressure [Pa]")
ax.set_title("A cylinder pressed on a plane")
ax.legend(fontsize=8, loc="upper right")
fig.tight_layout()

# %%
# Two bars striking end on
# ------------------------
# Bar A (a 0.8 B square) moves at v₀ toward bar B (a B square) at rest; its four front nodes are the contacts on
# B's boundary. ν = 0, so the waves are one-dimensional.

L, B, RHO, C, V0, GAP = 1.0, 0.05, 1000.0, 100.0, 0.1, 2.13e-4
material = fb.StVenantKirchhoff(young=RHO * C * C, poisson=0.0, density=RHO)
a = fb.FlexibleBody("a", fb.mesh.box((L, 0.04, 0.04), (20, 1, 1), origin=(-L - GAP, -0.02, -0.02)), material)
b_bar = fb.FlexibleBody("b", fb.mesh.box((L, B, B), (20, 1, 1), origin=(0.0, -B / 2, -B / 2)), material)
surface = fb.BodySurface(b_bar)
contacts = [fb.Contact(fb.Node(a, int(i)), surface, name=f"front{i}") for i in a.nodes("x1")]
v0 = np.concatenate([np.tile([V0, 0.0, 0.0], a.n_nodes), np.zeros(3 * b_bar.n_nodes)])
dt = 0.5 * (L / 20) / C
run = fb.simulate(
    fb.System([a, b_bar], constraints=contacts), GAP / V0 + 2 * L / C + 5e-3, integrator=fb.MoreauJean(dt=dt), v0=v0
)
z_a, z_b = RHO * C * 0.04**2, RHO * C * B**2
plateau = z_a * z_b / (z_a + z_b) * V0
momentum = [
    np.asarray(run.system.coordinates(body, run.v).reshape(run.n_steps, -1) @ body.mass_matrix())[:, 0::3].sum(1)
    for body in (a, b_bar)
]
print(f"momentum kept to {np.ptp(momentum[0] + momentum[1]) / (momentum[0][0] + momentum[1][0]):.1e}")

fig, (top, bottom) = plt.subplots(2, 1, figsize=(6.4, 5.2), sharex=True)
top.plot(run.times * 1e3, run.histories["contact_normal_force"].sum(axis=1), label="contact force")
top.axhline(plateau, ls="--", color="k", lw=0.8, label="1-D wave theory")
top.axvspan(GAP / V0 * 1e3, (GAP / V0 + 2 * L / C) * 1e3, color="0.9", label="2L/c after the impact")
top.set_ylabel("force [N]")
top.legend(fontsize=8)
bottom.plot(run.times * 1e3, momentum[0], label="bar A")
bottom.plot(run.times * 1e3, momentum[1], label="bar B")
bottom.plot(run.times * 1e3, momentum[0] + momentum[1], "k--", label="total")
bottom.set_xlabel("t [ms]")
bottom.set_ylabel("momentum [kg m/s]")
bottom.legend(fontsize=8)
fig.tight_layout()
plt.show()
