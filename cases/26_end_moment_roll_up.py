"""Case 26: a cantilever rolled into a full circle by an end moment (static, large rotation, thin bending).

Problem: a straight bar of length L = 1 m and square section 10 × 10 mm (L/h = 100), St. Venant–Kirchhoff with
E = 210 GPa and ν = 0, clamped at x = 0. Its end face x = L is attached to a rigid plate on a planar joint (two
translations in the x–z plane and the rotation about y: the reference node of a kinematic coupling), which carries
the end moment M = 2π EI/L about y, applied in one load step (the solver bisects and grows the increments itself).
27-node bricks, N × 1 × 1, with the default Gauss rule, which for these slender elements is 2 × 3 × 3 (reduced
along the bar: 3 × 3 × 3 locks in thin bending, see below), or 8-node bricks with incompatible modes.

Expected: Euler–Bernoulli's constant curvature κ = M/EI = 2π/L: the bar closes into a circle of radius L/(2π),
its end back at the root (rotation 2π, tip displacement (−L, 0, 0)). The solid's circle closes to within 0.2 % of
L (its strains reach πh/L = 3 %: the small overshoot of the converged solid, rotation 1.0018 × 2π, is the
St. Venant–Kirchhoff law at that strain, the same for every element that converges). Measured (docs/verification.md,
"Thin bending"): 27-node, 10 elements, 2 × 3 × 3 points: rotation 1.0006 × 2π, tip 5.8e-4 L from the root; with
3 × 3 × 3 points (``quadrature=3``, with a warning) the same mesh locks (0.651 × 2π, 0.43 L) and
needs 40 elements (0.9968 × 2π); 8-node with incompatible modes, 40 elements: 0.9997 × 2π.

Outputs in out_dir: results.npz/.json (the load path: ``times`` = load factors), bar.pvd and plate.pvd (one frame
per load step), histories.csv, roll_up.png (the bar at each load step in the x–z plane) and summary.txt. ``main``
returns the rotation, the tip's distance from the root over L and the Results.
"""

import numpy as np

import flexbody as fb

LENGTH = 1.0  # m, length of the bar
SIDE = 0.01  # m, side of the square section
YOUNG = 210e9  # Pa, Young's modulus
POISSON = 0.0  # -, Poisson's ratio
DENSITY = 7850.0  # kg/m³, density (no effect on the statics)
ELEMENTS = 10  # -, elements along the bar (one across)
ORDER = 2  # -, 2: 27-node bricks; 1: 8-node bricks with incompatible modes
QUADRATURE = None  # -, Gauss rule of 27-node bricks: None, the default (2 × 3 × 3 here), or e.g. 3 (3 × 3 × 3)
TURNS = 1.0  # -, the end moment in units of 2π EI/L (one full circle)


def build(elements=ELEMENTS, order=ORDER, quadrature=QUADRATURE, turns=TURNS) -> tuple:
    """(System, tau, the bar): the clamped bar, its end attached to the plate, and the applied forces τ (n,) that
    put the moment on the plate's rotation."""
    mesh = fb.mesh.box((LENGTH, SIDE, SIDE), (int(elements), 1, 1), order=order, origin=(0.0, -SIDE / 2, -SIDE / 2))
    material = fb.StVenantKirchhoff(young=YOUNG, poisson=POISSON, density=DENSITY)
    bar = fb.FlexibleBody(
        "bar", mesh, material, quadrature=quadrature if order == 2 else None
    )  # 8-node: incompatible modes
    tree = fb.RigidTree("plate", gravity=(0.0, 0.0, 0.0))
    plate = tree.add_link("plate", joint=fb.Planar((0.0, 1.0, 0.0)), origin=(LENGTH, 0.0, 0.0))
    system = fb.System([tree, bar], [fb.Fix(bar, "x0"), fb.AttachNodes(bar, "x1", plate)])
    bending_stiffness = YOUNG * SIDE**4 / 12.0
    tau = np.zeros(system.assemble().n_dofs)
    tau[plate.coordinates[-1]] = turns * 2.0 * np.pi * bending_stiffness / LENGTH  # N·m about y
    return system, tau, bar


def main(out_dir="out/26_end_moment_roll_up", **overrides) -> dict:
    """Solve with the default settings, write the outputs; returns the rotation [rad], the tip's distance from
    the root over L, the Newton iterations and the Results."""
    system, tau, bar = build(**overrides)
    results = fb.solve_static(system, tau=tau)
    out = fb.io.write_results(out_dir, results)
    asm = results.system
    rotation = float(results.q[-1, asm.coordinate_labels.index("plate.plate.r")])
    ends = results.node_displacements(bar, "x1")[-1].mean(axis=0) + np.array([LENGTH, 0.0, 0.0])
    gap = float(np.linalg.norm(ends) / LENGTH)
    _plot(out / "roll_up.png", results, bar)
    (out / "summary.txt").write_text(
        f"end moment {overrides.get('turns', TURNS):g} x 2 pi EI/L on {bar.n_elements} {bar.element.name} elements, "
        f"quadrature {bar.quadrature}: rotation {rotation / (2 * np.pi):.5f} x 2 pi, tip {gap:.2e} L from the "
        f"root; {len(results.times) - 1} load steps, {int(sum(results.iterations))} Newton iterations\n"
    )
    return {"rotation": rotation, "gap": gap, "iterations": int(sum(results.iterations)), "results": results}


def _plot(path, results, bar) -> None:
    fig, ax = fb.plots.subplots(figsize=(4.2, 4.2))
    top = bar.nodes("z1")
    order = np.argsort(bar.mesh.points[top, 0], kind="stable")
    for step in range(results.n_steps):
        x = results.positions(bar, step)[top[order]]
        ax.plot(
            x[:, 0],
            x[:, 2],
            lw=0.8,
            label=f"s = {results.times[step]:.3g}" if step in (0, results.n_steps - 1) else None,
        )
    ax.set_aspect("equal")
    ax.set_xlabel("x [m]")
    ax.set_ylabel("z [m]")
    ax.set_title("end-moment roll-up, load steps")
    ax.legend()
    fb.plots.save(fig, path)


if __name__ == "__main__":
    main()
