"""Case 02: large deflection of a cantilever under a dead tip load (the elastica).

Problem: a steel-like beam L = 1 m with a square section 0.02 × 0.02 m (E = 210 GPa, ν = 0), root face x = 0
clamped, a dead load P = α E I / L² along −z spread over the end face x = L, solved by Newton–Raphson in
LOAD_STEPS equal increments with 27-node ANCF hexahedra (20 × 1 × 1). With α = 10 and 10 steps the load
path passes through α = 1, 2, …, 10.

Expected: vertical tip deflection / L = 0.301721, 0.603253, 0.810609 for α = 1, 3, 10 (Bisshopp & Drucker,
Q. Appl. Math. 3 (1945) 272–275); every step is also compared with a scipy shooting solution of the
inextensible elastica EI θ'' + P cos θ = 0, θ(0) = 0, θ'(L) = 0 (vertical and horizontal tip displacement).
flexbody gives the vertical deflection within 0.07 % at 20 × 1 × 1 with the default Gauss rule (2 × 3 × 3 on
these slender elements): +0.025 % at α = 1 rising to +0.066 % at α = 10, the 3-D solid's shear and extension
(docs/verification.md; tests/test_beams.py).

Outputs in out_dir: results.npz/.json, a ParaView series beam.pvd (one .vtu per load step), histories.csv and
load_path.csv (α, flexbody and elastica tip displacements / L, relative error of the vertical one).
``main`` returns the final step's numbers (what ``flexbody sweep`` tabulates) and the Results.
"""

import numpy as np

import flexbody as fb

LENGTH = 1.0  # m, beam length L
SIDE = 0.02  # m, side of the square section
YOUNG = 2.1e11  # Pa, Young's modulus
POISSON = 0.0  # -, Poisson's ratio
DENSITY = 7850.0  # kg/m³, density
ALPHA = 10.0  # -, load parameter P L² / (E I)
DIVISIONS = (20, 1, 1)  # -, elements along x, y, z
ORDER = 2  # -, 2: 27-node elements; 1: 8-node (incompatible modes by default)
LOCKING = "auto"  # -, 8-node formulation: "auto" (incompatible modes), None (plain, locks) or "incompatible_modes"
LOAD_STEPS = 10  # -, equal load increments of the Newton–Raphson solve
BISSHOPP_DRUCKER = {1.0: 0.301721, 3.0: 0.603253, 10.0: 0.810609}  # -, vertical tip deflection / L at α = 1, 3, 10


def build(
    divisions=DIVISIONS,
    order=ORDER,
    locking=LOCKING,
    alpha=ALPHA,
    length=LENGTH,
    side=SIDE,
    young=YOUNG,
    poisson=POISSON,
    density=DENSITY,
) -> fb.System:
    """The clamped beam with its dead tip load P = α E I / L² along −z."""
    mesh = fb.mesh.box((length, side, side), tuple(divisions), order=order)
    material = fb.StVenantKirchhoff(young=young, poisson=poisson, density=density)
    beam = fb.FlexibleBody("beam", mesh, material, locking=locking)
    load = fb.SurfaceTraction(beam, "x1", total=(0.0, 0.0, -alpha * young * side**4 / 12.0 / length**2))
    return fb.System([beam], constraints=[fb.Fix(beam, "x0")], loads=[load])


def elastica(alpha: float) -> tuple[float, float]:
    """(vertical, horizontal) tip displacement / L of the inextensible elastica, by shooting on θ'(0)."""
    from scipy.integrate import solve_ivp
    from scipy.optimize import brentq

    if alpha == 0.0:
        return 0.0, 0.0

    def rhs(s, y):  # y = (θ, θ', x, z), s = arc length / L
        return [y[1], -alpha * np.cos(y[0]), np.cos(y[0]), np.sin(y[0])]

    def end(kappa0):
        return solve_ivp(rhs, (0.0, 1.0), [0.0, kappa0, 0.0, 0.0], rtol=1e-12, atol=1e-14).y[:, -1]

    _, _, x, z = end(brentq(lambda k: end(k)[1], 1e-9, alpha))
    return float(z), float(1.0 - x)


def tip_displacements(results: fb.Results, step: int = -1) -> tuple[float, float]:
    """(vertical −u_z, horizontal −u_x) mean end-face displacement [m] at ``step``."""
    beam = results.system.bodies[0]
    u = results.displacements(beam, step)[beam.nodes("x1")]
    return float(-u[:, 2].mean()), float(-u[:, 0].mean())


def main(out_dir="out/02_elastica", load_steps=LOAD_STEPS, **overrides) -> dict:
    """Solve, write the outputs; returns the final step's tip displacements / L against the elastica,
    the Newton iterations and the Results (key "results")."""
    system = build(**overrides)
    results = fb.solve_static(system, load_steps=load_steps)
    out = fb.io.write_results(out_dir, results)
    alpha, length = overrides.get("alpha", ALPHA), overrides.get("length", LENGTH)
    rows = [
        "alpha,vertical_over_L,elastica_vertical,horizontal_over_L,elastica_horizontal,vertical_rel_error,"
        "bisshopp_drucker"
    ]
    for step in range(1, results.n_steps):
        a = float(results.times[step]) * alpha
        v, h = (d / length for d in tip_displacements(results, step))
        v_ref, h_ref = elastica(a)
        table = BISSHOPP_DRUCKER.get(round(a, 9), "")
        rows.append(f"{a:.6g},{v:.6f},{v_ref:.6f},{h:.6f},{h_ref:.6f},{v / v_ref - 1:+.3e},{table}")
    (out / "load_path.csv").write_text("\n".join(rows) + "\n")
    return {
        "alpha": float(alpha),
        "vertical_over_L": v,
        "elastica_vertical": v_ref,
        "vertical_rel_error": v / v_ref - 1.0,
        "horizontal_over_L": h,
        "elastica_horizontal": h_ref,
        "horizontal_rel_error": h / h_ref - 1.0,
        "newton_iterations": int(sum(results.iterations)),
        "results": results,
    }


if __name__ == "__main__":
    main()
