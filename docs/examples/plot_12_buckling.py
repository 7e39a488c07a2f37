"""
A column past its buckling load: the unstable state, and the buckled branch on request
======================================================================================

A steel cantilever column (1 m long, 20 × 20 mm, E = 210 GPa, ν = 0), clamped at its foot, carries a dead
compressive load of 2.541 times Euler's buckling load P_cr = π²EI/(4L²) at its free end. Perfectly straight, it stays
straight under any load: the straight state is an equilibrium, and above P_cr an unstable one. ``solve_static``
returns it, but says so: every point of the path carries the number of negative eigenvalues of its tangent, the
bifurcation between the points is located, and the result and a warning say the end is unstable. Asked for the
buckled branch (``branch=fb.BranchSwitch(toward=...)``), the path leaves the bifurcation along its mode on the side
asked and follows the buckled branch by arc length to the load.

Expected: the bifurcation at P_cr (Euler), double (a square section buckles in y or in z); on the buckled branch, the
free end's lateral deflection of the elastica, δ/L = 2p/K(p²) with K(p²) = (π/2)√(P/P_cr) (Timoshenko & Gere,
Theory of Elastic Stability, §2.7): 0.7505 at 2.541 P_cr.
"""

# %%
# The column
# ----------
# Ten 27-node bricks along the column, one through its section (the default Gauss rule reduces the axis, so they
# do not lock in bending).

import matplotlib.pyplot as plt
import numpy as np
from scipy.optimize import brentq
from scipy.special import ellipk

import flexbody as fb

L, A, E = 1.0, 0.02, 210e9
P_CR = np.pi**2 * E * A**4 / 12 / (4 * L**2)  # N, Euler's load of the clamped–free column
RATIO = 2.541

mesh = fb.mesh.box((L, A, A), (10, 1, 1), order=2, origin=(0.0, -A / 2, -A / 2))
column = fb.FlexibleBody("column", mesh, fb.StVenantKirchhoff(young=E, poisson=0.0, density=7850.0))
push = fb.SurfaceTraction(column, "x1", total=(-RATIO * P_CR, 0.0, 0.0))
system = fb.System([column], [fb.Fix(column, "x0")], loads=[push])

# %%
# Straight, and unstable
# ----------------------

straight = fb.solve_static(system)
(bifurcation,) = straight.metadata["critical_points"]
print(
    f"{bifurcation['kind']} at P = {bifurcation['load_factor'] * RATIO:.5f} P_cr "
    f"(multiplicity {bifurcation['multiplicity']}); the end is stable: {straight.metadata['stable']}, "
    f"negative eigenvalues per point {straight.histories['negative_eigenvalues'].astype(int).tolist()}"
)

# %%
# The buckled branch, towards +z and towards −y
# ---------------------------------------------

m = brentq(lambda m: ellipk(m) - np.pi / 2 * np.sqrt(RATIO), 1e-12, 1 - 1e-15)
elastica = 2 * np.sqrt(m) / ellipk(m)
fig, ax = plt.subplots(figsize=(7, 4.2))
for toward, colour in (((0, 0, 1), "C0"), ((0, -1, 0), "C1")):
    buckled = fb.solve_static(system, branch=fb.BranchSwitch(toward=toward))
    tip = buckled.node_displacements(column, "x1").mean(axis=1)  # (points, 3) along the path
    lateral = tip[:, 1:] @ np.asarray(toward, dtype=float)[1:]
    print(
        f"towards {toward}: tip {lateral[-1] / L:.5f} L on the side asked (elastica {elastica:.5f}, "
        f"{lateral[-1] / L / elastica - 1:+.2%}), {len(buckled.times)} points, stable: {buckled.metadata['stable']}"
    )
    ax.plot(lateral / L, buckled.times * RATIO, "o-", ms=3, color=colour, label=f"buckled towards {toward}")
ax.plot([0, 0], [0, RATIO], "k--", lw=1, label="straight (unstable above P_cr)")
ax.axhline(bifurcation["load_factor"] * RATIO, color="0.6", lw=0.8)
ax.plot(elastica, RATIO, "k*", ms=10, label="elastica at 2.541 P_cr")
ax.set(xlabel="free end's lateral deflection / L", ylabel="P / P_cr", title="cantilever column, 10 × 1 × 1 27-node")
ax.legend()
ax.grid(alpha=0.3)
fig.tight_layout()
plt.show()
