"""Case 18: Cook's membrane — a tapered plate under an end shear, compressible neo-Hookean user energy (static).

Problem: the trapezoid with corners (0, 0), (48, 44), (48, 60), (0, 44) mm, 1 mm thick, the left edge x = 0
clamped, a dead shear traction along +y on the right edge x = 48 mm totalling 1 N (62.5 kPa on its 16 mm × 1 mm
reference area), plane strain imposed by u_z = 0 at every node (one element through the thickness). The material
is a user strain energy (``fb.Hyperelastic.split``), W = κ/4 (J² − 1 − 2 ln J) + μ/2 (J^(−2/3) I₁ − 3) with
μ = 422.5 kPa, ν = 0.3 and κ = 2μ (1 + ν) / (3 (1 − 2ν)). The N × N × 1 mesh maps a rectangle bilinearly onto
the trapezoid (the left-edge fraction y/44 is kept at every x), with 8-node (2 × 2 × 2 Gauss points) or 27-node
(3 × 3 × 3) elements, or (``cells="tetrahedra"``) each brick cut into six 4- or 10-node tetrahedra (their default
rules, degree 1 and 2), solved by Newton–Raphson in 10 equal load steps. The rule is deal.II's, given explicitly; the
27-node body logs the warning that 3 × 3 × 3 locks these thin elements in bending, which plane strain excludes.

Expected: the vertical displacement u_y of the midpoint (48, 52) mm of the loaded edge, deal.II's table for
N = 2, 4, 8, 16, 32, 64 elements per edge: Q1 8.638, 12.07, 13.86, 14.49, 14.67, 14.72 mm; Q2 14.30, 14.65,
14.71, 14.73, 14.74, 14.74 mm. Source: the deal.II code gallery, "Quasi-Static Finite-Strain Compressible
Elasticity" (J.-P. V. Pelteret and A. McBride, 2016, doi:10.5281/zenodo.1228964), repository dealii/code-gallery,
folder Quasi_static_Finite_strain_Compressible_Elasticity: README.md (the table, μ and ν), parameters.prm (grid
scale 1e-3, 10 time steps of 0.1 ramping the load, Q1 with quadrature order 2), cook_membrane.cc (the grid map
``grid_y_transform``, the traction 1 / (16 × 1) per reference area along y on the +x face, the left face
clamped, u_z = 0 on the ±z faces, the measurement vertex (48, 52, 0.5) mm, the neo-Hookean energy above).
flexbody gives u_y = 8.638, 12.07, 13.86, 14.49, 14.67, 14.72 mm (Q1) and 14.30, 14.65, 14.71, 14.73, 14.74,
14.74 mm (Q2) for N = 2 … 64, equal to the table at its printed digits (docs/verification.md;
tests/test_case_18_cooks_membrane.py). 10-node tetrahedra (no table of their own) converge to the same value: see
docs/verification.md, "Cook's membrane".

Outputs in out_dir: results.npz/.json, the ParaView series membrane.pvd (one .vtu per load step), histories.csv
and summary.txt. ``main`` returns u_y, deal.II's value and the Results.
"""

import numpy as np
import sympy as sp

import flexbody as fb

LENGTH = 0.048  # m, horizontal extent of the membrane (x)
LEFT_HEIGHT = 0.044  # m, height of the clamped left edge (y from 0 to 44 mm)
RIGHT_BOTTOM = 0.044  # m, y of the lower right corner
RIGHT_TOP = 0.060  # m, y of the upper right corner
THICKNESS = 0.001  # m, thickness (z), one element
SHEAR_MODULUS = 422.5e3  # Pa, shear modulus μ
POISSON = 0.3  # -, Poisson's ratio ν (bulk modulus κ = 2μ (1 + ν) / (3 (1 − 2ν)))
DENSITY = 1000.0  # kg/m³, density (no effect on the static solution)
TOTAL_FORCE = 1.0  # N, dead shear force along +y on the right edge
ELEMENTS_PER_EDGE = 16  # -, elements along x and along y
ORDER = 2  # -, 1: 8-node elements (deal.II Q1); 2: 27-node elements (Q2)
CELLS = "hexahedra"  # -, "hexahedra" or "tetrahedra" (each brick cut into six; 4 nodes at order 1, 10 at order 2)
LOAD_STEPS = 10  # -, equal load increments (deal.II: time steps of 0.1 up to 1)
DEALII_Q1 = {2: 8.638e-3, 4: 12.07e-3, 8: 13.86e-3, 16: 14.49e-3, 32: 14.67e-3, 64: 14.72e-3}  # m, deal.II u_y, Q1
DEALII_Q2 = {2: 14.30e-3, 4: 14.65e-3, 8: 14.71e-3, 16: 14.73e-3, 32: 14.74e-3, 64: 14.74e-3}  # m, deal.II u_y, Q2


def neo_hookean(shear_modulus=SHEAR_MODULUS, poisson=POISSON, density=DENSITY) -> fb.Hyperelastic:
    """deal.II's compressible neo-Hookean energy as a user law: W_iso = μ/2 (Ī₁ − 3), W_vol = κ/4 (J² − 1 − 2 ln J)."""
    kappa = 2.0 * shear_modulus * (1.0 + poisson) / (3.0 * (1.0 - 2.0 * poisson))
    return fb.Hyperelastic.split(
        isochoric=lambda I1bar, I2bar, mu: mu / 2 * (I1bar - 3),
        volumetric=lambda J, kappa: kappa / 4 * (J**2 - 1 - 2 * sp.log(J)),
        parameters={"mu": shear_modulus, "kappa": kappa},
        density=density,
        name="compressible neo-Hookean",
    )


def membrane_points(points: np.ndarray) -> np.ndarray:
    """Map the points (n, 3) of the box [0, L] × [0, 44 mm] × [0, t] onto the trapezoid (cook_membrane.cc's map)."""
    x, y = points[:, 0], points[:, 1]
    lower = RIGHT_BOTTOM / LENGTH * x
    upper = LEFT_HEIGHT + (RIGHT_TOP - LEFT_HEIGHT) / LENGTH * x
    theta = y / LEFT_HEIGHT
    out = points.copy()
    out[:, 1] = (1.0 - theta) * lower + theta * upper
    return out


def build(
    elements_per_edge=ELEMENTS_PER_EDGE,
    order=ORDER,
    shear_modulus=SHEAR_MODULUS,
    poisson=POISSON,
    total_force=TOTAL_FORCE,
    cells=CELLS,
) -> fb.System:
    """The membrane: left edge clamped, u_z = 0 elsewhere, the dead end shear on the right edge."""
    n = int(elements_per_edge)
    box = fb.mesh.box((LENGTH, LEFT_HEIGHT, THICKNESS), (n, n, 1), order=order, cells=cells)
    mesh = box.with_points(membrane_points(box.points))
    if cells == "tetrahedra":  # their default rules
        membrane = fb.FlexibleBody("membrane", mesh, neo_hookean(shear_modulus, poisson))
    else:  # plain Q1 and Q2 elements, as deal.II's table (no incompatible modes)
        membrane = fb.FlexibleBody(
            "membrane", mesh, neo_hookean(shear_modulus, poisson), quadrature=order + 1, locking=None
        )
    free = np.setdiff1d(np.arange(membrane.n_nodes), membrane.nodes("x0"))
    load = fb.SurfaceTraction(membrane, "x1", total=(0.0, total_force, 0.0))
    return fb.System(
        [membrane], constraints=[fb.Fix(membrane, "x0"), fb.Fix(membrane, free, components=(2,))], loads=[load]
    )


def tip_displacement(results: fb.Results, step: int = -1) -> float:
    """u_y [m] of the loaded edge's midpoint (48, 52) mm at ``step`` (mean over the nodes through the thickness)."""
    membrane = results.system.bodies[0]
    X = membrane.mesh.points
    mid = np.flatnonzero(np.isclose(X[:, 0], LENGTH) & np.isclose(X[:, 1], 0.5 * (RIGHT_BOTTOM + RIGHT_TOP)))
    if len(mid) == 0:
        raise fb.FlexbodyError("Cook's membrane: no node at the loaded edge's midpoint (use an even mesh)")
    return float(results.displacements(membrane, step)[mid, 1].mean())


def main(out_dir="out/18_cooks_membrane", load_steps=LOAD_STEPS, **overrides) -> dict:
    """Solve, write the outputs; returns u_y [m], deal.II's value [m] (None off the table) and the Results."""
    system = build(**overrides)
    results = fb.solve_static(system, load_steps=load_steps)
    out = fb.io.write_results(out_dir, results)
    n, order = overrides.get("elements_per_edge", ELEMENTS_PER_EDGE), overrides.get("order", ORDER)
    cells = overrides.get("cells", CELLS)
    u_y = tip_displacement(results)
    table = (DEALII_Q1 if order == 1 else DEALII_Q2).get(n) if cells == "hexahedra" else DEALII_Q2[8]
    element = f"Q{order}" if cells == "hexahedra" else f"(x 6 Tet{4 if order == 1 else 10})"
    label = f"Q{order}" if cells == "hexahedra" else "Q2 at N = 8"
    reference = "" if table is None else f"; deal.II {label} {1e3 * table:#.4g} mm"
    (out / "summary.txt").write_text(
        f"u_y at (48, 52) mm: {1e3 * u_y:#.4g} mm with {n} x {n} x 1 {element} "
        f"elements{reference}\nload steps {len(results.times) - 1}, Newton "
        f"iterations {results.iterations[1:]}\n"
    )
    return {
        "u_y": u_y,
        "dealii": table,
        "elements_per_edge": n,
        "order": order,
        "newton_iterations": int(sum(results.iterations)),
        "results": results,
    }


if __name__ == "__main__":
    main()
