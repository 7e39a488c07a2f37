"""Case 29: a flexible beam dropped on the floor lands, bounces on its nodes and comes to rest — unilateral contact of
a flexible body and the nonsmooth stepper.

Problem: a beam LENGTH × WIDTH × THICKNESS [m] (St Venant–Kirchhoff, YOUNG, Poisson's ratio 0, DENSITY,
Kelvin–Voigt damping DAMPING [s]; 27-node bricks, DIVISIONS) is released at rest, tilted by TILT about y and lifted
by LIFT above the floor z = 0, under gravity 9.81 m/s² along −z. Every node of its bottom face has a ``fb.Contact``
with the floor (Coulomb μ from FRICTIONS, no restitution). ``fb.MoreauJean`` (step DT) to T_END, once for each μ.

Expected: the beam strikes with its lower end, slaps down and comes to rest; the energy never grows; no node enters
the floor; at rest the contacts carry its weight, Σ f_n = m g. Without friction the rest state is exact: with
ν = 0 the beam is a column of 1-D bars in uniaxial compression under the weight above, P(Z) = −ρ g (T − Z) with
P = λ E (λ² − 1)/2 for this material (λ the stretch), so its top sinks by u = ∫₀ᵀ (λ(Z) − 1) dZ — the closed form
solved here by scipy (brentq for λ, quad for u); −ρ g T²/(2E) to first order. With friction the landing leaves
friction forces that hold the bottom where it landed (inside the cone), so the rest state depends on the path.

Measured (summary.txt, the defaults): μ = 0: the top within 2.9e-11 of the closed form at every top node
(−6.1327544e-6 m; −6.13125e-6 m to first order), at rest (|v| ≤ 4.4e-14 m/s), Σ f_n = m g to 1e-14, the lowest gap
−2e-16 m, the energy never rising (largest step-to-step rise 4.4e-16 J); μ = 0.5: at rest (9.5e-14 m/s), Σ f_n = m g
to 5e-15, friction inside the cone, the top between −6.98e-6 and −5.67e-6 m (the friction holds what the landing
left).

Outputs in out_dir: summary.txt (JSON), energy.png (energy against time for each μ), results.npz/.json of the
frictionless run, beam.pvd (its field series) and contacts.pvd (its contact forces for ParaView's glyphs).
"""

import json
from pathlib import Path

import numpy as np
from scipy.integrate import quad
from scipy.optimize import brentq

import flexbody as fb

LENGTH = 1.0  # m, the beam's length along x
WIDTH = 0.1  # m, its width along y
THICKNESS = 0.05  # m, its thickness along z
DIVISIONS = (10, 1, 1)  # -, 27-node bricks along x, y, z
YOUNG = 2e6  # Pa, Young's modulus
DENSITY = 1000.0  # kg/m³, mass density
DAMPING = 0.01  # s, Kelvin–Voigt time constant
TILT = 5.0  # deg, rotation about y at release
LIFT = 0.05  # m, height of the lower end above the floor at release
FRICTIONS = (0.0, 0.5)  # -, Coulomb coefficients run
GRAVITY = 9.81  # m/s², along −z
DT = 1e-3  # s, step of the nonsmooth stepper
T_END = 1.0  # s, end time


def build(friction=0.0, divisions=DIVISIONS, tilt=TILT, lift=LIFT) -> fb.System:
    """The beam tilted by ``tilt`` [deg] about y and lifted by ``lift`` [m]; its bottom nodes touch the floor."""
    mesh = fb.mesh.box((LENGTH, WIDTH, THICKNESS), divisions, order=2)
    material = fb.StVenantKirchhoff(young=YOUNG, poisson=0.0, density=DENSITY, damping=DAMPING)
    beam = fb.FlexibleBody("beam", mesh, material)
    floor = fb.Plane((0.0, 0.0, 1.0))
    contacts = [
        fb.Contact(fb.Node(beam, int(i)), floor, friction=friction, name=f"node{i}") for i in mesh.node_sets["z0"]
    ]
    angle = np.radians(tilt)
    x, y, z = mesh.points.T
    placed = np.column_stack([x * np.cos(angle) - z * np.sin(angle), y, x * np.sin(angle) + z * np.cos(angle) + lift])
    return fb.System([beam], loads=[fb.Gravity(beam)], constraints=contacts, q0=placed.ravel())


def resting_top() -> float:
    """u(T) [m] of the module docstring: the top's displacement at rest without friction."""

    def stretch(Z):
        weight = DENSITY * GRAVITY * (THICKNESS - Z)
        return brentq(lambda s: s * YOUNG * (s * s - 1.0) / 2.0 + weight, 0.5, 1.0, xtol=1e-16, rtol=1e-15)

    return quad(lambda Z: stretch(Z) - 1.0, 0.0, THICKNESS, epsabs=1e-16, epsrel=1e-13)[0]


def run(friction, divisions=DIVISIONS, dt=DT, t_end=T_END, lift=LIFT):
    """(the run's figures, Results) for one friction coefficient."""
    system = build(friction, divisions, lift=lift)
    res = fb.simulate(system, t_end, integrator=fb.MoreauJean(dt=dt), record_every=10)
    beam = system.bodies[0]
    normal, friction_force = res.histories["contact_normal_force"], res.histories["contact_friction_force"]
    weight = DENSITY * LENGTH * WIDTH * THICKNESS * GRAVITY
    top = res.system.coordinates(beam, res.q[-1], "z1")[:, 2] - THICKNESS
    cone = np.linalg.norm(friction_force, axis=2) - friction * normal
    return {
        "friction": float(friction),
        "largest_speed_end": float(np.abs(res.v[-1]).max()),
        "normal_force_over_weight": float(normal[-1].sum() / weight),
        "lowest_gap": float(res.histories["contact_gap"].min()),
        "largest_energy_rise": float(np.diff(res.histories["energy"]).max()),
        "top_displacement": [float(top.min()), float(top.max())],
        "outside_cone": float(cone.max()),
    }, res


def main(out_dir="out/29_beam_dropped_on_floor", frictions=FRICTIONS, divisions=DIVISIONS, dt=DT, t_end=T_END) -> dict:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows, curves, kept = [], {}, None
    for mu in frictions:
        row, res = run(mu, tuple(divisions), dt, t_end)
        rows.append(row)
        curves[f"μ = {mu:g}"] = (res.times, res.histories["energy"])
        if kept is None:
            kept = res
    assert kept is not None  # at least one friction coefficient
    kept.save(out)
    fb.io.write_pvds(out, kept, every=max(1, kept.n_steps // 50))
    fb.plots.plot_curves(
        out / "energy.png", [{"ylabel": "energy [J]", "xlabel": "t [s]", "curves": curves}], title="beam dropped"
    )
    exact = resting_top()
    for row in rows:
        row["top_error"] = max(abs(row["top_displacement"][0] / exact - 1), abs(row["top_displacement"][1] / exact - 1))
    summary = {
        "parameters": {"frictions": list(frictions), "divisions": list(divisions), "dt": dt, "t_end": t_end},
        "resting_top_closed_form": exact,
        "resting_top_first_order": -DENSITY * GRAVITY * THICKNESS**2 / (2.0 * YOUNG),
        "runs": rows,
    }
    (out / "summary.txt").write_text(json.dumps(summary, indent=2))
    return summary


if __name__ == "__main__":
    s = main()
    for r in s["runs"]:
        print(
            f"μ = {r['friction']:.2f}: at rest to {r['largest_speed_end']:.1e} m/s, Σf_n/mg = "
            f"{r['normal_force_over_weight']:.15f}, top error {r['top_error']:.1e}"
        )
