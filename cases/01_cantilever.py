"""Case 01: aluminium cantilever under an end load (static, geometrically nonlinear).

Problem: a beam L = 0.508 m with section 0.003175 m (y) × 0.0127 m (z), aluminium (ρ 2810 kg/m³,
E 71.7 GPa, ν 0.33), root face x = 0 clamped, a load Fz = 10 N spread over the end face x = L, solved by
Newton–Raphson in load steps with 27-node ANCF hexahedra (20 × 1 × 1).

Expected: end deflection 1.12455e-2 m (Euler–Bernoulli, P L³ / (3 E I)); flexbody gives 1.116422e-2 m,
ratio 0.99278 (docs/verification.md). Outputs: results.npz/.json, a ParaView series beam.pvd (+ .vtu per load
step with displacement, Green–Lagrange strain, Cauchy and von Mises stress), histories.csv and summary.txt.
"""

import flexbody as fb

LENGTH = 0.508  # m, beam length L
WIDTH = 0.003175  # m, section along y
HEIGHT = 0.0127  # m, section along z
YOUNG = 71.7e9  # Pa, Young's modulus (aluminium)
POISSON = 0.33  # -, Poisson's ratio
DENSITY = 2810.0  # kg/m³, density
TIP_FORCE = 10.0  # N, end load along +z, spread over the end face
DIVISIONS = (20, 1, 1)  # -, elements along x, y, z
ORDER = 2  # -, 2: 27-node elements; 1: 8-node (incompatible modes by default)
LOCKING = "auto"  # -, 8-node formulation: "auto" (incompatible modes), None (plain, locks) or "incompatible_modes"
LOAD_STEPS = 5  # -, equal load increments of the Newton–Raphson solve
EXPECTED_TIP = TIP_FORCE * LENGTH**3 / (3 * YOUNG * WIDTH * HEIGHT**3 / 12)  # m, Euler–Bernoulli value, 1.12455e-2


def build(divisions=DIVISIONS, order=ORDER, locking=LOCKING, tip_force=TIP_FORCE) -> fb.System:
    """The clamped beam with its end load."""
    mesh = fb.mesh.box((LENGTH, WIDTH, HEIGHT), tuple(divisions), order=order)
    material = fb.StVenantKirchhoff(young=YOUNG, poisson=POISSON, density=DENSITY)
    beam = fb.FlexibleBody("beam", mesh, material, locking=locking)
    load = fb.SurfaceTraction(beam, "x1", total=(0.0, 0.0, tip_force))
    return fb.System([beam], constraints=[fb.Fix(beam, "x0")], loads=[load])


def tip_deflection(results: fb.Results) -> float:
    """Mean z displacement [m] of the end-face nodes at the last step."""
    beam = results.system.bodies[0]
    return float(results.displacements(beam)[beam.nodes("x1"), 2].mean())


def main(out_dir="out/01_cantilever", load_steps=LOAD_STEPS, **overrides) -> fb.Results:
    system = build(**overrides)
    results = fb.solve_static(system, load_steps=load_steps)
    out = fb.io.write_results(out_dir, results)
    tip = tip_deflection(results)
    expected = EXPECTED_TIP * overrides.get("tip_force", TIP_FORCE) / TIP_FORCE
    (out / "summary.txt").write_text(
        f"tip deflection {tip:.6e} m; Euler-Bernoulli {expected:.6e} m; ratio {tip / expected:.5f}\n"
        f"load steps {len(results.times) - 1}, Newton iterations {results.iterations[1:]}\n"
    )
    return results


if __name__ == "__main__":
    main()
