"""Case {name}: an aluminium cantilever under an end load — static deflection, then free vibration.

A case file made by ``flexbody new``; it runs as it is. Replace the problem, keep the shape:

* this docstring states the problem, what is expected and where the expected values come from;
* UPPER_CASE parameters, one per line, each with a comment ``# unit, description`` (``-`` for numbers
  without a unit): ``flexbody info {path} --params`` lists them, and those that are keywords of
  ``main`` or ``build`` can be changed with ``flexbody run {path} --set name=value``;
* ``build(**params)`` returns the :class:`flexbody.System` (``flexbody info`` describes it: coordinates,
  constraints and their rank, actuators); add ``task(asm)`` returning a task (or a dict of them) and
  ``info`` prints its actuation report too;
* ``main(out_dir, **overrides)`` runs it, writes results, figures and ``summary.txt`` into ``out_dir``
  and returns the summary dict (``flexbody sweep`` tabulates its numbers). Importing the file runs nothing.

Problem: a beam LENGTH × WIDTH × HEIGHT (aluminium, ρ DENSITY, E YOUNG, ν POISSON) clamped at x = 0,
27-node ANCF bricks (DIVISIONS). (1) Statics: an end load TIP_FORCE along +z spread over the end face
x = LENGTH, in LOAD_STEPS Newton–Raphson increments. (2) Dynamics: the load is removed and the beam, released
at rest from that deflected shape, vibrates freely (generalized-α, ρ∞ = 1, step DT, for T_END).

Expected (measured with the values below: 0.984 and 1.009 of the closed forms; the solid model includes
shear and Poisson's effects that Euler–Bernoulli theory leaves out):
1. End deflection P L³/(3 E I) (Euler–Bernoulli), within 2 %.
2. The tip oscillates at the first bending frequency f₁ = (1.87510)²/(2π L²) √(E I/(ρ A)) (Euler–Bernoulli
   cantilever), within 2 %.

Outputs in out_dir: static/ and vibration/ (results and ParaView series beam.pvd: open them in ParaView or
with ``flexbody view``), tip.png (tip displacement against time) and summary.txt (JSON).
"""

import json
import math
from pathlib import Path

import numpy as np

import flexbody as fb
from flexbody import plots

LENGTH = 0.5  # m, beam length L
WIDTH = 0.02  # m, section along y
HEIGHT = 0.0127  # m, section along z (the bending direction)
YOUNG = 71.7e9  # Pa, Young's modulus
POISSON = 0.33  # -, Poisson's ratio
DENSITY = 2810.0  # kg/m³, density
TIP_FORCE = 20.0  # N, end load along +z, spread over the end face
DIVISIONS = (10, 1, 1)  # -, elements along x, y, z
LOAD_STEPS = 2  # -, Newton–Raphson load increments of the static solve
DT = 5e-4  # s, generalized-α time step (about 50 steps per period of the first mode)
T_END = 0.06  # s, length of the free vibration (about two and a half periods)

SECOND_MOMENT = WIDTH * HEIGHT**3 / 12  # m⁴, I about y
EXPECTED_TIP = TIP_FORCE * LENGTH**3 / (3 * YOUNG * SECOND_MOMENT)  # m, Euler–Bernoulli P L³/(3 E I)
EXPECTED_F1 = (
    1.87510**2 / (2 * math.pi * LENGTH**2) * math.sqrt(YOUNG * SECOND_MOMENT / (DENSITY * WIDTH * HEIGHT))
)  # Hz, first bending frequency


def build(divisions=DIVISIONS, tip_force=TIP_FORCE) -> fb.System:
    """The clamped beam with its end load (tip_force = 0: unloaded)."""
    mesh = fb.mesh.box((LENGTH, WIDTH, HEIGHT), tuple(divisions), order=2)  # 27-node cells
    material = fb.StVenantKirchhoff(young=YOUNG, poisson=POISSON, density=DENSITY)
    beam = fb.FlexibleBody("beam", mesh, material)
    # node sets of a box: "x0" (x = 0) ... "z1"; any other: mesh.nodes_where(lambda p: p[:, 0] > 0.4)
    load = fb.SurfaceTraction(beam, "x1", total=(0.0, 0.0, tip_force))
    return fb.System([beam], constraints=[fb.Fix(beam, "x0")], loads=[load])


def tip_z(results: fb.Results) -> np.ndarray:
    """Mean z displacement [m] of the end-face nodes at every recorded step."""
    beam = results.system.bodies[0]
    return np.array([results.displacements(beam, i)[beam.nodes("x1"), 2].mean() for i in range(results.n_steps)])


def period(times: np.ndarray, z: np.ndarray) -> float:
    """Mean period [s] between the upward zero crossings of z(t) − mean(z), by linear interpolation."""
    x = z - z.mean()
    i = np.flatnonzero((x[:-1] < 0.0) & (x[1:] >= 0.0))
    crossings = times[i] - x[i] * (times[i + 1] - times[i]) / (x[i + 1] - x[i])
    return float(np.diff(crossings).mean()) if len(crossings) >= 2 else math.nan


def plot_tip(path, times, z) -> None:
    fig, ax = plots.subplots(figsize=(6, 3.5))
    ax.plot(times, 1e3 * z)
    ax.set(xlabel="time t [s]", ylabel="tip displacement z [mm]", title="free vibration of the cantilever tip")
    plots.save(fig, path)


def main(
    out_dir="out/{name}",
    divisions=DIVISIONS,
    tip_force=TIP_FORCE,
    load_steps=LOAD_STEPS,
    dt=DT,
    t_end=T_END,
    context=None,
) -> dict:
    out = Path(out_dir)
    static = fb.solve_static(build(divisions, tip_force), load_steps=load_steps)
    assert isinstance(static, fb.Results)  # no task given: the load path (with a task: its InverseStatics)
    fb.io.write_results(out / "static", static)
    tip = float(tip_z(static)[-1])

    free = build(divisions, tip_force=0.0)  # the same beam, unloaded
    q0 = static.q[-1]  # released from the deflection
    run = fb.simulate(
        free, t_end, integrator=fb.GeneralizedAlpha(dt=dt, rho_inf=1.0), q0=q0, v0=np.zeros_like(q0), context=context
    )
    fb.io.write_results(out / "vibration", run)
    z = tip_z(run)
    plot_tip(out / "tip.png", run.times, z)

    expected_tip = EXPECTED_TIP * tip_force / TIP_FORCE
    f1 = 1.0 / period(run.times, z)
    summary = {
        "tip_deflection": tip,
        "expected_tip_deflection": expected_tip,
        "tip_ratio": tip / expected_tip if expected_tip else math.nan,
        "first_frequency": f1,
        "expected_first_frequency": EXPECTED_F1,
        "frequency_ratio": f1 / EXPECTED_F1,
        "steps": run.n_steps - 1,
    }
    (out / "summary.txt").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


if __name__ == "__main__":
    print(json.dumps(main(), indent=2))
