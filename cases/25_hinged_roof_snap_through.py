"""Case 25: a hinged cylindrical roof under a point load snaps through (static path by arc-length continuation).

Problem: the shallow cylindrical panel of radius R = 2540 mm, 508 mm long along its axis and 0.2 rad wide, of
thickness t = 12.7 mm (or 6.35 mm), E = 3102.75 MPa, ν = 0.3, its two straight edges hinged (the mid-surface
line held, the section free to rotate), its curved edges free, a dead point load P at the centre of the crown,
downward. A quarter of it is modelled (symmetry planes x = 254 mm and the crown plane), N × N × 1 27-node bricks,
the hinge on the mid-thickness nodes of the straight edge, P/4 on the mid-thickness centre node. The load rises
to P = 3000 N along the equilibrium path, which passes a load maximum, falls, and rises again (t = 12.7 mm: a
snap-through; t = 6.35 mm: also a snap-back, the centre deflection turning back while the load goes negative).
Load control cannot pass the first maximum; ``fb.solve_static(..., path=fb.ArcLength(...))`` follows the path.

Expected: the load–centre-deflection curves of Sze, Liu & Lo (2004), "Popular benchmark problems for geometric
nonlinear analysis of shells", Finite Elements in Analysis and Design 40, 1551–1569, Tables 9a (t = 12.7 mm)
and 9d (t = 6.35 mm), P_max = 3000 N, computed with ABAQUS S4R shell elements; the numbers as transcribed in
MBDyn's test data (tests/plates/sze2004/sze38/sze38_ref_a.dat and _d.dat), the limit points confirmed by the
panels project's validation notebook. For t = 12.7 mm the first load maximum is 2226.3 N at W = 11.293 mm and the
minimum 518.7 N at W = 19.852 mm. A solid model and a shell model differ by their kinematics (and the solid's
line hinge is not the shell's), so the curves agree to about 2 % of the maximum, not to the table's digits: the
solid's first maximum converges 1.5 % below Sze's. The bricks take the default Gauss rule, which reduces the
curved direction of these slender elements, (3, 2, 3), and converges at N = 4 (docs/verification.md gives the
measured numbers).

Outputs in out_dir: results.npz/.json (the path: ``times`` = load factors), roof.pvd (one .vtu per point of the
path), histories.csv (load factor, Newton iterations, residual, arc length per point), load_deflection.png (the
path against Sze's table) and summary.txt. ``main`` returns the limit loads, their deviations and the Results.
"""

import numpy as np

import flexbody as fb

RADIUS = 2.540  # m, radius of the mid-surface
HALF_LENGTH = 0.254  # m, half the length along the axis (the quarter model's)
HALF_ANGLE = 0.1  # rad, half the angle the panel spans (the quarter model's)
THICKNESS = 0.0127  # m, 12.7 mm (Sze's Table 9a) or 0.00635 (Table 9d)
YOUNG = 3102.75e6  # Pa, Young's modulus
POISSON = 0.3  # -, Poisson's ratio
DENSITY = 1000.0  # kg/m³, density (no effect on the static path)
LOAD = 3000.0  # N, the whole roof's point load at load factor 1 (Sze's P_max)
ELEMENTS = 8  # -, elements along each edge of the quarter (one through the thickness)
ARC = 0.0005  # m, largest arc of a step: the root-mean-square displacement of the nodes (the path's resolution)

_SZE_12_7 = np.array(
    [  # (P [N], W [mm]), Sze et al. 2004, Table 9a, t = 12.7 mm
        (0.0, 0.0),
        (263.1, 0.693),
        (594.0, 1.638),
        (1041.9, 3.087),
        (1405.8, 4.477),
        (1694.1, 5.802),
        (1914.3, 7.057),
        (2072.4, 8.237),
        (2173.8, 9.339),
        (2223.6, 10.358),
        (2226.3, 11.293),
        (2185.8, 12.141),
        (2106.9, 12.903),
        (1994.7, 13.583),
        (1854.6, 14.188),
        (1692.9, 14.728),
        (1516.5, 15.217),
        (1332.6, 15.676),
        (1149.0, 16.125),
        (973.5, 16.590),
        (815.1, 17.094),
        (681.6, 17.657),
        (582.0, 18.299),
        (525.0, 19.028),
        (518.7, 19.852),
        (571.5, 20.771),
        (690.9, 21.780),
        (885.0, 22.875),
        (1161.3, 24.049),
        (1332.9, 24.663),
        (1527.9, 25.293),
        (1747.8, 25.940),
        (1993.2, 26.601),
        (2265.3, 27.276),
        (2564.7, 27.964),
        (2892.9, 28.663),
    ]
)
_SZE_6_35 = np.array(
    [  # (P [N], W [mm]), Sze et al. 2004, Table 9d, t = 6.35 mm
        (0.0, 0.0),
        (155.1, 1.846),
        (354.6, 5.271),
        (474.9, 8.257),
        (551.1, 10.799),
        (574.2, 11.904),
        (585.9, 12.892),
        (585.0, 13.752),
        (570.3, 14.472),
        (541.8, 15.050),
        (501.3, 15.501),
        (396.9, 16.145),
        (276.9, 16.602),
        (151.2, 16.915),
        (24.9, 17.008),
        (-93.6, 16.697),
        (-186.6, 15.780),
        (-221.7, 15.206),
        (-258.3, 14.767),
        (-300.3, 14.520),
        (-342.6, 14.451),
        (-374.1, 14.862),
        (-386.4, 15.778),
        (-381.3, 16.961),
        (-358.8, 18.320),
        (-316.5, 19.817),
        (-247.5, 21.420),
        (-145.2, 23.100),
        (-1.8, 24.824),
        (187.8, 26.565),
        (428.1, 28.302),
        (720.9, 30.023),
        (1067.7, 31.720),
        (1469.4, 33.388),
        (1925.1, 35.024),
        (2434.2, 36.626),
        (3093.9, 38.450),
    ]
)


def reference(thickness=THICKNESS) -> np.ndarray:
    """Sze's table for the thickness: (P [N], W [m]) rows."""
    table = _SZE_12_7 if np.isclose(thickness, 0.0127) else _SZE_6_35 if np.isclose(thickness, 0.00635) else None
    if table is None:
        raise fb.FlexbodyError(f"case 25: Sze's tables are for t = 12.7 or 6.35 mm, got {1e3 * thickness} mm")
    return table * (1.0, 1e-3)


def build(thickness=THICKNESS, elements=ELEMENTS, load=LOAD) -> fb.System:
    """The quarter roof: a box in (x, θ, r − R) mapped onto the cylinder, hinged, symmetric, loaded at the centre."""
    n = int(elements)
    box = fb.mesh.box((HALF_LENGTH, HALF_ANGLE, thickness), (n, n, 1), order=2, origin=(0.0, 0.0, -thickness / 2))
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
    mesh = fb.HexMesh(points, box.cells, node_sets=sets)
    roof = fb.FlexibleBody("roof", mesh, fb.StVenantKirchhoff(young=YOUNG, poisson=POISSON, density=DENSITY))
    held = [
        fb.Fix(roof, "hinge"),
        fb.Fix(roof, "crown", components=(1,), name="crown_symmetry"),
        fb.Fix(roof, "middle", components=(0,), name="middle_symmetry"),
    ]
    return fb.System([roof], held, loads=[fb.NodalForce(roof, "centre", total=(0.0, 0.0, -load / 4.0))])


def centre_deflection(results: fb.Results) -> np.ndarray:
    """W (s,) [m]: the downward displacement of the loaded centre node at every point of the path."""
    roof = results.system.bodies[0]
    return -results.node_displacements(roof, "centre")[:, 0, 2]


def limit_points(results: fb.Results) -> dict:
    """The first load maximum and the following minimum along the path, (P [N], W [m]) each: the first two limit
    points the path located (``metadata["critical_points"]``, between the points where the tangent's count of
    negative eigenvalues changes)."""
    limits = [c for c in results.metadata["critical_points"] if c["kind"] == "limit point"]
    if len(limits) < 2:
        raise fb.FlexbodyError(f"case 25: the path located {len(limits)} limit point(s), not the two of a snap-through")
    deflection = centre_deflection(results)
    return {
        name: (LOAD * c["load_factor"], float(deflection[c["point"]]))
        for name, c in zip(("maximum", "minimum"), limits)
    }


def deviation(load: np.ndarray, deflection: np.ndarray, table: np.ndarray) -> float:
    """The largest distance of Sze's points up to the path's last load from the path, in the plane (P / P₁, W / W_end),
    P₁ Sze's first load maximum and W_end his last deflection: a load error on the rising branches, a deflection
    error on the steep falling ones, where the load at a fixed deflection is ill-conditioned."""
    scale = np.array([sze_limits(table)["maximum"][0], table[-1, 1]])
    path = np.column_stack([load, deflection]) / scale
    start, step = path[:-1], np.diff(path, axis=0)
    worst = 0.0
    for point in table[table[:, 0] <= load[-1]] / scale:  # Table 9d goes on to 3093.9 N
        along = np.clip(np.einsum("ij,ij->i", point - start, step) / np.einsum("ij,ij->i", step, step), 0.0, 1.0)
        worst = max(worst, float(np.min(np.linalg.norm(start + along[:, None] * step - point, axis=1))))
    return worst


def sze_limits(table: np.ndarray) -> dict:
    """Sze's first load maximum and the following minimum as tabulated, (P [N], W [m]) each."""
    first_max = int(np.flatnonzero(np.diff(table[:, 0]) < 0)[0])
    after = first_max + int(np.argmin(table[first_max:, 0]))
    return {"maximum": tuple(table[first_max]), "minimum": tuple(table[after])}


def main(out_dir="out/25_hinged_roof_snap_through", thickness=THICKNESS, elements=ELEMENTS, arc=ARC) -> dict:
    """Follow the path, write the outputs; returns the limit points, Sze's and the Results."""
    system = build(thickness, elements)
    results = fb.solve_static(system, path=fb.ArcLength(initial=arc, max_arc=arc))
    out = fb.io.write_results(out_dir, results)
    load, deflection = results.times * LOAD, centre_deflection(results)
    table = reference(thickness)
    ours, theirs = limit_points(results), sze_limits(table)
    _plot(out / "load_deflection.png", load, deflection, table, thickness)
    lines = [
        f"hinged roof, t = {1e3 * thickness:g} mm, quarter {elements} x {elements} x 1 27-node bricks, "
        f"{len(load) - 1} arc-length steps, {int(sum(results.iterations))} Newton iterations"
    ]
    for name in ("maximum", "minimum"):
        (p, w), (p_ref, w_ref) = ours[name], theirs[name]
        lines.append(
            f"load {name}: {p:.1f} N at W = {1e3 * w:.3f} mm; Sze {p_ref:.1f} N at {1e3 * w_ref:.3f} mm "
            f"({100 * (p / p_ref - 1):+.2f} %)"
        )
    lines.append(f"W at P = {LOAD:g} N: {1e3 * deflection[-1]:.3f} mm")
    lines.append(
        f"largest distance of Sze's points from the path, in (P / P_max, W / W_end): "
        f"{deviation(load, deflection, table):.4f}"
    )
    (out / "summary.txt").write_text("\n".join(lines) + "\n")
    return {
        "limits": ours,
        "sze": theirs,
        "deviation": deviation(load, deflection, table),
        "results": results,
        "load": load,
        "deflection": deflection,
    }


def _plot(path, load, deflection, table, thickness) -> None:
    fig, ax = fb.plots.subplots(figsize=(5.0, 3.6))
    ax.plot(1e3 * deflection, load, label="flexbody, arc length")
    ax.plot(1e3 * table[:, 1], table[:, 0], "o", ms=3, label="Sze et al. 2004")
    ax.set_xlabel("centre deflection W [mm]")
    ax.set_ylabel("point load P [N]")
    ax.set_title(f"hinged roof, t = {1e3 * thickness:g} mm")
    ax.legend()
    fb.plots.save(fig, path)


if __name__ == "__main__":
    main()
