"""Case 28: blocks on an incline stick or slide, as Coulomb says — unilateral contact and the nonsmooth stepper.

Problem: FRICTIONS.size boxes (MASS, half sizes HALF [m], on free flyers) rest side by side on a plane through the
origin tilted by ANGLE about y (outward normal (sin θ, 0, cos θ)), each on its four bottom corners: ``fb.Contact``
rows with the box's Coulomb coefficient μ and no restitution. Gravity 9.81 m/s² along −z. Released at rest and
stepped by ``fb.MoreauJean`` (step DT) to T_END.

Expected (Coulomb's law for a block on an incline, any dynamics text): a box with μ ≥ tan θ sticks — it does not
creep at all —, one with μ < tan θ slides down the slope at a = g (sin θ − μ cos θ), its velocity a t, and stays
flat on the plane (no tipping: the boxes are low, HALF[2] < HALF[0] / μ). With θ = 30° (tan θ = 0.577) the boxes
with μ = 0.3, 0.5 slide and those with μ = 0.7, 0.9 stick.

Measured (summary.txt, the defaults): sliding boxes within 2.5e-15 of g (sin θ − μ cos θ) (their velocity at T_END
over T_END), sticking boxes moved 0 m (round-off: below 1e-15 m on other settings); no box tilts (3e-16 rad); the
corners carry m g cos θ between them to 2.7e-12.

Outputs in out_dir: summary.txt (JSON), travelled.png (distance down the slope against time, with the closed forms),
results.npz/.json, block0.pvd … (each box's link series) and contacts.pvd (the corners' forces for ParaView's
glyphs).
"""

import json
from pathlib import Path

import numpy as np

import flexbody as fb

ANGLE = 30.0  # deg, slope of the plane
FRICTIONS = (0.3, 0.5, 0.7, 0.9)  # -, Coulomb coefficient μ of each box
MASS = 2.0  # kg, mass of each box
HALF = (0.2, 0.1, 0.05)  # m, half sizes of a box (down the slope, across, normal to the plane)
GRAVITY = 9.81  # m/s², gravity along −z
DT = 2e-3  # s, step of the nonsmooth stepper
T_END = 1.0  # s, end time


def build(angle=ANGLE, frictions=FRICTIONS, mass=MASS) -> fb.System:
    """The boxes resting on the slope of ``angle`` [deg], 0.5 m apart across it."""
    theta = np.radians(angle)
    normal = np.array([np.sin(theta), 0.0, np.cos(theta)])
    plane = fb.Plane(normal)
    a, b, c = HALF
    inertia = (mass / 3 * (b * b + c * c), mass / 3 * (a * a + c * c), mass / 3 * (a * a + b * b))
    trees, contacts, q0 = [], [], []
    for k, mu in enumerate(frictions):
        tree = fb.RigidTree(f"block{k}", gravity=(0.0, 0.0, -GRAVITY))
        box = tree.add_link("box", None, fb.FreeFlyer(), mass=mass, inertia=inertia)
        for sx in (-1, 1):
            for sy in (-1, 1):
                corner = tree.point(box, (sx * a, sy * b, -c))
                contacts.append(fb.Contact(corner, plane, friction=mu, name=f"block{k}_{'bf'[sx > 0]}{'rl'[sy > 0]}"))
        trees.append(tree)
        q0 += [*(c * normal + (0.0, 0.5 * k, 0.0)), 0.0, theta, 0.0]  # the box turned by θ about y, on the plane
    return fb.System(trees, constraints=contacts, q0=q0)


def closed_form(angle, friction) -> tuple[float, str]:
    """(a [m/s²] down the slope, "slides" or "sticks") of a block with Coulomb coefficient ``friction``."""
    theta = np.radians(angle)
    if friction >= np.tan(theta):
        return 0.0, "sticks"
    return GRAVITY * (np.sin(theta) - friction * np.cos(theta)), "slides"


def main(out_dir="out/28_blocks_on_incline", angle=ANGLE, frictions=FRICTIONS, dt=DT, t_end=T_END) -> dict:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    theta = np.radians(angle)
    down = np.array([np.cos(theta), 0.0, -np.sin(theta)])
    res = fb.simulate(build(angle, frictions), t_end, integrator=fb.MoreauJean(dt=dt))
    rows, curves, references = [], {}, {}
    normal = res.histories["contact_normal_force"]
    for k, mu in enumerate(frictions):
        cols = slice(6 * k, 6 * k + 3)
        travelled = (res.q[:, cols] - res.q[0, cols]) @ down
        expected, regime = closed_form(angle, mu)
        measured = float(res.v[-1, cols] @ down / res.times[-1])
        rows.append(
            {
                "friction": float(mu),
                "regime": regime,
                "acceleration": measured,
                "closed_form": expected,
                "error": measured - expected if regime == "sticks" else measured / expected - 1.0,
                "travelled": float(travelled[-1]),
                "tilt": float(np.abs(res.q[:, 6 * k + 3 : 6 * k + 6] - res.q[0, 6 * k + 3 : 6 * k + 6]).max()),
                "normal_force_error": float(
                    np.abs(normal[:, 4 * k : 4 * k + 4].sum(axis=1) / (MASS * GRAVITY * np.cos(theta)) - 1.0).max()
                ),
            }
        )
        curves[f"μ = {mu:g}"] = (res.times, travelled)
        references[f"μ = {mu:g}: ½ a t²"] = (res.times, 0.5 * expected * res.times**2)
    res.save(out)
    fb.io.write_link_pvd(out, res, every=max(1, res.n_steps // 50))
    fb.plots.plot_curves(
        out / "travelled.png",
        [{"ylabel": "distance down the slope [m]", "xlabel": "t [s]", "curves": curves, "references": references}],
        title=f"blocks on a {angle:g}° incline (tan θ = {np.tan(theta):.3f})",
    )
    summary = {
        "parameters": {"angle": angle, "frictions": list(frictions), "dt": dt, "t_end": t_end},
        "blocks": rows,
        "max_sliding_error": max((abs(r["error"]) for r in rows if r["regime"] == "slides"), default=0.0),
        "max_sticking_travel": max((abs(r["travelled"]) for r in rows if r["regime"] == "sticks"), default=0.0),
    }
    (out / "summary.txt").write_text(json.dumps(summary, indent=2))
    return summary


if __name__ == "__main__":
    s = main()
    for r in s["blocks"]:
        print(
            f"μ = {r['friction']:.2f} {r['regime']}: a = {r['acceleration']:.9f} m/s², travelled {r['travelled']:.3e} m"
        )
