"""
Snap-through of a hinged cylindrical roof
=========================================

A shallow cylindrical panel (radius 2540 mm, 508 mm long, 0.2 rad wide, 12.7 mm thick, E = 3102.75 MPa, ν = 0.3),
hinged along its two straight edges and free along its curved ones, is pushed down at the centre by a point load P.
Past a load maximum the roof snaps through: the load must fall while the centre keeps going down, until the panel,
now curved the other way, stiffens again. A quarter of the roof is modelled by symmetry, 4 × 4 × 1 27-node ANCF
bricks, and the path followed by arc-length continuation to P = 3000 N (flexbody's case 25 at its coarsest mesh).

Expected: the load–deflection curve of Sze, Liu & Lo (2004), "Popular benchmark problems for geometric nonlinear
analysis of shells", Finite Elements in Analysis and Design 40, 1551–1569, Table 9a (ABAQUS S4R shells): first load
maximum 2226.3 N at a centre deflection W = 11.293 mm, then a minimum of 518.7 N at 19.852 mm. A solid model and a
shell model differ in their kinematics, so the curves agree to a few percent of the maximum, not to the table's
digits (the minimum is 4.7 % high on this mesh; docs/verification.md has the convergence study).
"""

# %%
# A quarter of the roof
# ---------------------
# A box in (x, θ, r − R) is mapped onto the cylinder and rebuilt as a :class:`flexbody.HexMesh` with named node
# sets: the hinge (the mid-thickness line of the straight edge), the two symmetry planes and the loaded centre node.

import tempfile

import matplotlib.pyplot as plt
import numpy as np

import flexbody as fb

RADIUS, HALF_LENGTH, HALF_ANGLE, THICKNESS = 2.540, 0.254, 0.1, 0.0127  # m, m, rad, m
P_END = 3000.0  # N, the whole roof's load at load factor 1
SZE = np.array(  # (P [N], W [mm]), Sze et al. 2004, Table 9a
    [
        *[(0.0, 0.0), (263.1, 0.693), (594.0, 1.638), (1041.9, 3.087), (1405.8, 4.477), (1694.1, 5.802)],
        *[(1914.3, 7.057), (2072.4, 8.237), (2173.8, 9.339), (2223.6, 10.358), (2226.3, 11.293), (2185.8, 12.141)],
        *[(2106.9, 12.903), (1994.7, 13.583), (1854.6, 14.188), (1692.9, 14.728), (1516.5, 15.217), (1332.6, 15.676)],
        *[(1149.0, 16.125), (973.5, 16.590), (815.1, 17.094), (681.6, 17.657), (582.0, 18.299), (525.0, 19.028)],
        *[(518.7, 19.852), (571.5, 20.771), (690.9, 21.780), (885.0, 22.875), (1161.3, 24.049), (1332.9, 24.663)],
        *[(1527.9, 25.293), (1747.8, 25.940), (1993.2, 26.601), (2265.3, 27.276), (2564.7, 27.964), (2892.9, 28.663)],
    ]
)

box = fb.mesh.box((HALF_LENGTH, HALF_ANGLE, THICKNESS), (4, 4, 1), order=2, origin=(0.0, 0.0, -THICKNESS / 2))
x, theta, depth = box.points.T
r = RADIUS + depth
points = np.column_stack([x, r * np.sin(theta), r * np.cos(theta) - RADIUS])
mid_surface = np.isclose(depth, 0.0)
sets = {
    "hinge": np.flatnonzero(np.isclose(theta, HALF_ANGLE) & mid_surface),
    "crown": np.flatnonzero(np.isclose(theta, 0.0)),
    "middle": np.flatnonzero(np.isclose(x, HALF_LENGTH)),
    "centre": np.flatnonzero(np.isclose(x, HALF_LENGTH) & np.isclose(theta, 0.0) & mid_surface),
}
roof = fb.FlexibleBody(
    "roof",
    fb.HexMesh(points, box.cells, node_sets=sets),
    fb.StVenantKirchhoff(young=3102.75e6, poisson=0.3, density=1000.0),
)
held = [
    fb.Fix(roof, "hinge"),
    fb.Fix(roof, "crown", components=(1,), name="crown_symmetry"),
    fb.Fix(roof, "middle", components=(0,), name="middle_symmetry"),
]
system = fb.System([roof], held, loads=[fb.NodalForce(roof, "centre", total=(0.0, 0.0, -P_END / 4))])

# %%
# The path
# --------
# Arcs of at most 0.5 mm (the root-mean-square displacement of the nodes; with the defaults, ``fb.ArcLength()``, the
# path takes five arcs); ``results.times`` are the load factors along the path. The path locates its limit points
# where the tangent's count of negative eigenvalues changes, and records them as points of the path.

path = fb.solve_static(system, path=fb.ArcLength(initial=0.0005, max_arc=0.0005))
load = P_END * path.times  # N, the whole roof's load
deflection = -1e3 * path.node_displacements(roof, "centre")[:, 0, 2]  # mm, downwards
first_max, minimum = (c["point"] for c in path.metadata["critical_points"][:2])  # the two limit points
print(f"{path.metadata['steps']} arc-length steps, {sum(path.iterations)} Newton iterations")
for name, i, (p_ref, w_ref) in (("maximum", first_max, SZE[10]), ("minimum", minimum, SZE[24])):
    print(
        f"load {name}: {load[i]:7.1f} N at W = {deflection[i]:6.3f} mm; Sze {p_ref:7.1f} N at {w_ref:6.3f} mm "
        f"({load[i] / p_ref - 1:+.2%})"
    )
print(f"W at P = {P_END:g} N: {deflection[-1]:.3f} mm")

# %%
# Load against deflection
# -----------------------

fig, ax = plt.subplots(figsize=(7, 4.2))
ax.plot(deflection, load, "-", lw=1.5, label="flexbody, arc length (quarter, 4 × 4 × 1)")
ax.plot(SZE[:, 1], SZE[:, 0], "o", ms=4, mfc="none", label="Sze et al. 2004, Table 9a")
ax.set(xlabel="centre deflection W [mm]", ylabel="point load P [N]", title="hinged cylindrical roof, t = 12.7 mm")
ax.legend()
ax.grid(alpha=0.3)
fig.tight_layout()
plt.show()

# %%
# The quarter roof after the snap
# -------------------------------
# At the load minimum, coloured by the vertical displacement (component 2 of "displacement") and drawn with the
# displacements magnified three times; the view is turned to look along the roof from its side. The dark plates mark
# the hinge and the symmetry planes (:class:`flexbody.Fix` sets); the loaded centre is the far corner between the
# symmetry planes.

out = fb.io.write_results(tempfile.mkdtemp(), path)
plotter = fb.view.plotter(out, step=minimum, field="displacement", component=2, scale=3.0, window_size=(1000, 600))
plotter.view_vector((-1.0, 0.8, 0.6), viewup=(0.0, 0.0, 1.0))
plotter.reset_camera()
plotter.show()
