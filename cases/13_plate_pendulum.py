"""Case 13: the ANCF-brick plate pendulum — a soft thin plate on a corner spherical joint falls under gravity.

Problem (``fb.mechanisms.plate_pendulum``): a plate 0.6 × 0.3 × 0.01 m in the xy-plane (corner at the
origin), 8 × 4 × 1 8-node ANCF hexahedra with incompatible modes (the default, which does not lock; 90 nodes,
270 coordinates), St. Venant–Kirchhoff E 1e5 Pa, ν 0.3,
ρ 7810 kg/m³ (m = 14.06 kg), Kelvin–Voigt damping with retardation time 0.01 s (viscous stress = 0.01 s ×
the elastic law applied to Ė); the corner node 0 is held by a spherical joint (3 rows, index-3), gravity
9.81 m/s² along −z; released flat at rest. The plate is so soft (E 1e5 Pa) that it folds while it swings.
Integrated to T_END = 1 s with dt = 1e-3 s by HHT α = 0.1 (the main run) and, for comparison, by
generalized-α ρ∞ = 1 (no numerical damping) and ρ∞ = 0.8.

Reference: the set-up follows the ANCF-brick plate benchmark used in the literature on solid ANCF elements
(Olshevskiy, Dmitrochenko & Kim 2014; Chrono's ANCF-brick element ChElementHexaANCF_3813), but no
published trajectory of this exact plate (far-corner z at 1 s, or an energy history) could be found and
read: Chrono's brick demo ``demo_FEA_hexaANCF_3813.cpp`` is a different problem (a 1 × 1 × 0.05 m plate,
4 × 4 elements, E 2.1e5 Pa, ρ 500 kg/m³, clamped along an edge) and its swinging-shell test uses a 9-node
brick on a 1 × 1 plate. The corner z is therefore recorded, not compared, and the case checks instead:
- energy balance: with E = kinetic + strain + gravity potential and D(t) the recorded Kelvin–Voigt work
  ∫ vᵀ f_visc dt (trapezoid), E0 − E(t) = D(t) up to the time-discretisation error (and the numerical
  dissipation of ρ∞ < 1 / HHT). The mismatch max |E0 − E − D| is stated relative to the gravity potential
  released, m g (z_c(0) − min z_c) (z_c: centre of mass);
- the far corner at 1 s must not depend on the integrator (HHT α = 0.1, ρ∞ = 1 and ρ∞ = 0.8 agree within
  1e-4 m at dt = 1e-3 s);
- the pin: ‖φ‖ at the Newton tolerance, the corner node stays at the origin.
tests/test_cases_flexible.py also times an internal-force and a Jacobian call per element (docs/verification.md
records the costs).

Measured at full size (defaults; `flexbody run cases/13_plate_pendulum.py`):
- far corner (0.6, 0.3) at 1 s, HHT α = 0.1: z = −0.16440 m (bottom node), −0.17334 m (top node);
  ρ∞ = 1 and ρ∞ = 0.8 within 1.8e-5 m of these (plain bricks, which lock: −0.14530 and −0.15273 m).
- energy: K_max = 45.41 J, gravity potential released 85.70 J, dissipated D(1 s) = 12.286 J, E0 − E(1 s) =
  12.283 J; max |E0 − E − D| = 4.92e-3 J (HHT α = 0.1: 5.7e-5 of the released potential), 3.18e-3 J
  (ρ∞ = 1: 3.7e-5), 3.43e-3 J (ρ∞ = 0.8: 4.0e-5) — HHT's numerical dissipation shows as the larger value.
- pin: ‖φ‖ exactly 0 (linear rows), the corner node stays at the origin. HHT: 1 000 steps, 4 820 Newton
  iterations (4.8 per step, at most 8), 149 factorizations, 0 rejected steps, 11.9 s wall (plain bricks 1.9 s).

Outputs in out_dir: <run>/results.npz/.json for every run (Results.save), a ParaView series
hht0.1/plate.pvd (+ plate_NNNN.vtu every VTK_EVERY steps; point data "displacement", strain, stresses),
energy.png (E0 − E and D, and their difference, per run), corner.png (far-corner z per run) and
summary.txt (JSON of the returned summary).
"""

import json
from pathlib import Path

import numpy as np

import flexbody as fb

SIZE = (0.6, 0.3, 0.01)  # m, plate size along x, y, z
DIVISIONS = (8, 4, 1)  # -, elements along x, y, z
ORDER = 1  # -, 1: 8-node, 2: 27-node hexahedra
YOUNG = 1e5  # Pa, Young's modulus
POISSON = 0.3  # -, Poisson's ratio
DENSITY = 7810.0  # kg/m³, density
DAMPING = 0.01  # s, Kelvin–Voigt retardation time
GRAVITY = 9.81  # m/s², gravity along −z
DT = 1e-3  # s, time step of every run
T_END = 1.0  # s, end time
HHT_ALPHA = 0.1  # -, HHT α of the main run
COMPARE_RHO = (1.0, 0.8)  # -, generalized-α runs for comparison (ρ∞ values; () for none)
VTK_EVERY = 20  # -, ParaView frame every this many steps (main run)


def build(
    size=SIZE,
    divisions=DIVISIONS,
    order=ORDER,
    young=YOUNG,
    poisson=POISSON,
    density=DENSITY,
    damping=DAMPING,
    gravity=GRAVITY,
) -> fb.System:
    """The plate on its corner spherical joint, flat at rest, gravity along −z."""
    return fb.mechanisms.plate_pendulum(
        tuple(size),
        tuple(divisions),
        order=order,
        young=young,
        poisson=poisson,
        density=density,
        damping=damping,
        gravity=(0.0, 0.0, -gravity),
    )


def schemes(dt, hht_alpha, compare_rho) -> dict:
    """Run name -> integrator settings; the first is the main run."""
    runs = {f"hht{hht_alpha:g}": fb.GeneralizedAlpha.hht(dt, hht_alpha)}
    runs.update({f"rho{r:g}": fb.GeneralizedAlpha(dt=dt, rho_inf=r) for r in compare_rho})
    return runs


def nearest_node(body, point) -> int:
    return int(np.argmin(np.linalg.norm(body.mesh.points - np.asarray(point, float), axis=1)))


def far_corners(plate, size) -> dict:
    """Node indices of the corner diagonally opposite the pin, bottom (z = 0) and top (z = thickness)."""
    a, b, c = size
    return {"bottom": nearest_node(plate, (a, b, 0.0)), "top": nearest_node(plate, (a, b, c))}


def centre_of_mass_z(asm, results) -> np.ndarray:
    """z of the centre of mass (s,) [m]: Σ w_j z_j / Σ w_j, w_j = ∫ N_j ρ dV (mass-matrix column sums)."""
    plate = asm.bodies[0]
    w = np.asarray(plate.mass_matrix()[0::3, 0::3].sum(axis=0)).ravel()
    z = asm.coordinates(plate, results.q)[:, :, 2]
    return z @ w / w.sum()


def energy_balance(asm, res, gravity) -> dict:
    """E0 − E(t) against the recorded Kelvin–Voigt dissipation D(t) [J]."""
    E, K, D = res.histories["energy"], res.histories["kinetic"], res.histories["dissipated"]
    mismatch = E[0] - E - D
    zc = centre_of_mass_z(asm, res)
    released = asm.bodies[0].mass() * gravity * (zc[0] - zc.min())
    return {
        "E0": float(E[0]),
        "E_end": float(E[-1]),
        "max_kinetic": float(K.max()),
        "dissipated_end": float(D[-1]),
        "energy_loss_end": float(E[0] - E[-1]),
        "max_abs_mismatch": float(np.abs(mismatch).max()),
        "potential_released": float(released),
        "mismatch_over_released": float(np.abs(mismatch).max() / released),
        "mismatch_over_dissipated": float(np.abs(mismatch).max() / D[-1]) if D[-1] > 0 else float("nan"),
        "dissipation_monotone": bool(np.all(np.diff(D) >= 0.0)),
    }


def newton_statistics(res) -> dict:
    s = res.metadata["statistics"]
    return {
        k: s[k]
        for k in (
            "steps",
            "rejected",
            "newton_iterations",
            "factorizations",
            "force_calls",
            "jacobian_calls",
            "wall_seconds",
        )
    } | {
        "iterations_per_step": s["newton_iterations"] / max(1, s["steps"]),
        "max_iterations_in_a_step": int(res.histories["newton_iterations"].max()),
        "min_dt": float(res.histories["dt"][1:].min()),
    }


def plot_energy(path, runs: dict) -> None:
    """E0 − E against the dissipated D of every run, and their difference."""
    lost, balance = {}, {}
    for name, res in runs.items():
        E, D = res.histories["energy"], res.histories["dissipated"]
        lost |= {f"E0 − E, {name}": (res.times, E[0] - E), f"dissipated D, {name}": (res.times, D)}
        balance[name] = (res.times, E[0] - E - D)
    panels = [
        {"ylabel": "energy lost E0 − E, dissipated D [J]", "curves": lost},
        {"ylabel": "energy balance E0 − E − D [J]", "curves": balance},
    ]
    fb.plots.plot_curves(path, panels, title="Plate pendulum: energy lost vs Kelvin–Voigt dissipation", size=(8, 3.5))


def plot_corner(path, runs: dict, heights: dict) -> None:
    """The far corners' z [m] against t, ``heights[run][corner]`` (s,) for each run."""
    curves = {f"{name}, {label}": (res.times, z) for name, res in runs.items() for label, z in heights[name].items()}
    fb.plots.plot_curves(path, [{"ylabel": "far-corner z [m]", "curves": curves}], size=(8, 4.5))


def main(
    out_dir="out/13_plate_pendulum",
    size=SIZE,
    divisions=DIVISIONS,
    order=ORDER,
    young=YOUNG,
    poisson=POISSON,
    density=DENSITY,
    damping=DAMPING,
    gravity=GRAVITY,
    dt=DT,
    t_end=T_END,
    hht_alpha=HHT_ALPHA,
    compare_rho=COMPARE_RHO,
    vtk_every=VTK_EVERY,
    context=None,
) -> dict:
    """Run the plate pendulum with each integrator, write the outputs; returns the summary."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    runs, per_run, heights, main_name = {}, {}, {}, None
    for name, integrator in schemes(dt, hht_alpha, compare_rho).items():
        asm = build(size, divisions, order, young, poisson, density, damping, gravity).assemble()
        plate = asm.bodies[0]
        res = fb.simulate(asm, t_end, integrator=integrator, context=context)
        res.save(out / name)
        corners = far_corners(plate, size)
        nodes = asm.coordinates(plate, res.q)  # (s, nodes, 3)
        heights[name] = {k: nodes[:, n, 2] for k, n in corners.items()}
        per_run[name] = {
            "far_corner_z_end": {k: float(nodes[-1, n, 2]) for k, n in corners.items()},
            "energy": energy_balance(asm, res, gravity),
            "newton": newton_statistics(res),
            "max_violation": float(res.histories["violation"].max()),
            "max_pin_displacement": float(np.abs(nodes[:, 0] - plate.mesh.points[0]).max()),
            "parameters": res.metadata["statistics"]["parameters"],
        }
        if main_name is None:
            main_name, main_asm = name, asm
            fb.io.write_pvd(out / name, res, every=vtk_every)
        runs[name] = res

    corners = far_corners(main_asm.bodies[0], size)
    plot_energy(out / "energy.png", runs)
    plot_corner(out / "corner.png", runs, heights)
    reference = per_run[main_name]["far_corner_z_end"]
    summary = {
        "main_run": main_name,
        "runs": per_run,
        "far_corner_nodes": corners,
        "n_dofs": int(main_asm.n_dofs),
        "mass": float(main_asm.bodies[0].mass()),
        "max_corner_difference_between_schemes": max(
            (abs(r["far_corner_z_end"][k] - reference[k]) for r in per_run.values() for k in reference), default=0.0
        ),
        "published_reference": None,
        "parameters": {
            "size": list(size),
            "divisions": list(divisions),
            "order": order,
            "young": young,
            "poisson": poisson,
            "density": density,
            "damping": damping,
            "gravity": gravity,
            "dt": dt,
            "t_end": t_end,
            "hht_alpha": hht_alpha,
            "compare_rho": list(compare_rho),
            "vtk_every": vtk_every,
        },
    }
    (out / "summary.txt").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


if __name__ == "__main__":
    main()
