"""
Cantilever under a large end load
=================================

An aluminium beam (L = 0.508 m, section 3.175 × 12.7 mm, E = 71.7 GPa, ν = 0.33) is clamped at x = 0 and loaded
at its free end by a dead force P along −z, spread over the end face. The load is chosen so that the load parameter
α = P L² / (E I) equals 1: the tip moves down by about 30 % of the length, far beyond the range of linear beam
theory. The solid is meshed with 27-node ANCF bricks and solved by Newton–Raphson in load steps.

Expected: the inextensible elastica of Bisshopp & Drucker (Q. Appl. Math. 3 (1945) 272–275) gives the vertical tip
deflection 0.301721 L at α = 1, where linear Euler–Bernoulli theory (P L³ / (3 E I)) would predict L / 3, 10 % too
much. The solid model lands within 1 % of the elastica: its shear deformation and its clamped end face, which holds
the lateral contraction (ν = 0.33), make the rest (at a small load the same mesh gives 0.993 of P L³ / (3 E I),
docs/verification.md, case 01).
"""

# %%
# The model
# ---------
# A box mesh of 20 × 1 × 1 quadratic (27-node) hexahedra, a St. Venant–Kirchhoff material, the face set ``"x0"``
# clamped by :class:`flexbody.Fix` and a :class:`flexbody.SurfaceTraction` with a prescribed total force on the face
# set ``"x1"``.

import tempfile

import pyvista

import flexbody as fb

LENGTH, WIDTH, HEIGHT = 0.508, 0.003175, 0.0127  # m (bending about y: HEIGHT is along z)
YOUNG = 71.7e9  # Pa
INERTIA = WIDTH * HEIGHT**3 / 12.0  # m⁴, second moment of the section about y
ALPHA = 1.0  # -, load parameter P L² / (E I)
P = ALPHA * YOUNG * INERTIA / LENGTH**2  # N

mesh = fb.mesh.box((LENGTH, WIDTH, HEIGHT), (20, 1, 1), order=2)
aluminium = fb.StVenantKirchhoff(young=YOUNG, poisson=0.33, density=2810.0)
beam = fb.FlexibleBody("beam", mesh, aluminium)
system = fb.System(
    [beam], constraints=[fb.Fix(beam, "x0")], loads=[fb.SurfaceTraction(beam, "x1", total=(0.0, 0.0, -P))]
)
print(f"{beam.n_nodes} nodes, {beam.n_dofs} coordinates; end load P = {P:.2f} N")

# %%
# Static solution
# ---------------
# :func:`flexbody.solve_static` raises the load from 0 to P in equal increments; the returned
# :class:`flexbody.Results` holds one configuration per load step.

results = fb.solve_static(system, load_steps=5)
tip = results.displacements(beam)[beam.nodes("x1")].mean(axis=0)  # mean end-face displacement [m]

elastica = 0.301721  # vertical tip deflection / L at α = 1 (Bisshopp & Drucker 1945)
linear = ALPHA / 3.0  # Euler–Bernoulli, P L³ / (3 E I) / L
measured = -tip[2] / LENGTH
print(f"Newton iterations per load step: {results.iterations[1:]}")
print(f"vertical tip deflection / L: flexbody {measured:.6f}, elastica {elastica:.6f}, linear theory {linear:.6f}")
print(f"relative error against the elastica: {measured / elastica - 1:+.2e}")
print(f"horizontal tip displacement: {1e3 * tip[0]:.2f} mm (linear theory: none)")

# %%
# The deformed beam
# -----------------
# :func:`flexbody.io.write_results` writes the results with a ParaView series of the beam;
# :func:`flexbody.view.plotter` draws that series at the last load step, coloured by the magnitude of the
# displacement, and returns the pyvista plotter unshown. We add the undeformed beam (the first step of the series),
# translucent.

out = fb.io.write_results(tempfile.mkdtemp(), results)
plotter = fb.view.plotter(out, field="displacement", window_size=(1000, 600))
reader = pyvista.get_reader(str(fb.view.series(out)["beam"]))
reader.set_active_time_point(0)
plotter.add_mesh(reader.read()[0], color="lightgray", opacity=0.4)
plotter.show()
