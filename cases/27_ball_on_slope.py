"""Case 27: a ball on a slope rolls or slips, as Coulomb says — compliant contact with friction.

Problem: a solid ball (MASS, RADIUS, I = ⅖ m R² about its centre) moves in the vertical xz-plane on prismatic
joints x and z and a revolute joint about y; gravity 9.81 m/s² along −z. A plane through the origin is tilted
by θ (outward normal (sin θ, 0, cos θ)). The ball touches it through ``fb.CompliantContact`` with ``radius=RADIUS``
on the ball's link frame, so its contact point moves with ẋ + R n × ω: Hertz-like stiffness k δ^{3/2}, Hunt–
Crossley dissipation, Coulomb friction μ = FRICTION regularised by SLIP_VELOCITY. It starts at rest on the
plane (its static penetration (m g cos θ / k)^{2/3}) and is released; generalized-α, step DT, to T_END.

Expected (the rigid-body closed forms, e.g. Goldstein's or any dynamics text; the compliant contact approaches
them as k grows and v_s shrinks): with tan θ ≤ 7μ/2 the ball rolls without slipping, its centre accelerating
down the slope at a = 5/7 g sin θ; above it, it slips, a = g (sin θ − μ cos θ). With μ = 0.3 the change is at
θ* = atan(1.05) = 46.4°. The acceleration is a quadratic fit of the distance travelled after FIT_AFTER s.

Measured (summary.txt, the default angles 10°–60°, 13 s): rolling (10°–40°) within 5e-13 of 5/7 g sin θ,
slipping (50°, 60°) within 4e-8 of g (sin θ − μ cos θ); the slip speed at the end 1.7e-5 – 1.3e-4 m/s where it
rolls (the regularisation's creep), 0.36 and 1.34 m/s where it slips.

Outputs in out_dir: summary.txt (JSON), acceleration.png (measured and closed-form accelerations against θ), and
for the steepest angle results.npz/.json, ball.pvd (the link series) and contacts.pvd (the contact force for
ParaView's glyphs).
"""

import json
from pathlib import Path

import numpy as np

import flexbody as fb

MASS = 1.0  # kg, mass of the ball
RADIUS = 0.05  # m, radius of the ball
FRICTION = 0.3  # -, Coulomb coefficient μ
ANGLES = (10.0, 20.0, 30.0, 40.0, 50.0, 60.0)  # deg, slopes run
STIFFNESS = 1e7  # N/m^1.5, contact stiffness k
DISSIPATION = 5.0  # s/m, Hunt–Crossley dissipation d
SLIP_VELOCITY = 1e-4  # m/s, friction regularisation v_s
GRAVITY = 9.81  # m/s², gravity along −z
DT = 2e-4  # s, generalized-α step
T_END = 0.4  # s, end time
FIT_AFTER = 0.1  # s, the acceleration is fitted after this time


def build(angle=30.0, mass=MASS, radius=RADIUS, friction=FRICTION, stiffness=STIFFNESS) -> fb.System:
    """The ball resting on the slope of ``angle`` [deg] with its static penetration."""
    theta = np.radians(angle)
    normal = np.array([np.sin(theta), 0.0, np.cos(theta)])
    tree = fb.RigidTree("ball", gravity=(0.0, 0.0, -GRAVITY))
    tree.add_link("x", None, fb.Prismatic((1.0, 0.0, 0.0)))
    tree.add_link("z", "x", fb.Prismatic((0.0, 0.0, 1.0)))
    inertia = 0.4 * mass * radius**2
    ball = tree.add_link("ball", "z", fb.Revolute((0.0, 1.0, 0.0)), mass=mass, inertia=(inertia,) * 3)
    contact = fb.CompliantContact(
        tree.frame(ball),
        fb.Plane(normal),
        stiffness=stiffness,
        dissipation=DISSIPATION,
        friction=friction,
        slip_velocity=SLIP_VELOCITY,
        radius=radius,
        name="slope",
    )
    centre = (radius - (mass * GRAVITY * np.cos(theta) / stiffness) ** (1 / 1.5)) * normal
    return fb.System([tree], forces=[contact], q0=(centre[0], centre[2], 0.0))


def closed_form(angle, friction=FRICTION) -> tuple[float, str]:
    """(a [m/s²], "rolls" or "slips") of the rigid ball on the slope of ``angle`` [deg]."""
    theta = np.radians(angle)
    if np.tan(theta) <= 3.5 * friction:
        return 5.0 / 7.0 * GRAVITY * np.sin(theta), "rolls"
    return GRAVITY * (np.sin(theta) - friction * np.cos(theta)), "slips"


def run(angle, friction=FRICTION, stiffness=STIFFNESS, dt=DT, t_end=T_END):
    """(acceleration down the slope [m/s²] fitted after FIT_AFTER, the Results) of one slope."""
    theta = np.radians(angle)
    system = build(angle, friction=friction, stiffness=stiffness)
    res = fb.simulate(system, t_end, integrator=fb.GeneralizedAlpha(dt=dt))
    travelled = res.q[:, 0] * np.cos(theta) - res.q[:, 1] * np.sin(theta)
    late = res.times > FIT_AFTER
    return float(2.0 * np.polyfit(res.times[late], travelled[late], 2)[0]), res


def main(
    out_dir="out/27_ball_on_slope", angles=ANGLES, friction=FRICTION, stiffness=STIFFNESS, dt=DT, t_end=T_END
) -> dict:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows, res = [], None
    for angle in angles:
        measured, res = run(angle, friction, stiffness, dt, t_end)
        expected, regime = closed_form(angle, friction)
        rows.append(
            {
                "angle_deg": float(angle),
                "regime": regime,
                "acceleration": measured,
                "closed_form": expected,
                "relative_error": measured / expected - 1.0,
                "slip_speed_end": float(res.histories["contact_slip_speed"][-1, 0]),
            }
        )
    assert res is not None  # at least one angle
    res.save(out)
    fb.io.write_link_pvd(out, res, every=max(1, res.n_steps // 50))
    grid = np.linspace(min(angles), max(angles), 200)
    fb.plots.plot_curves(
        out / "acceleration.png",
        [
            {
                "ylabel": "acceleration down the slope [m/s²]",
                "xlabel": "slope θ [deg]",
                "curves": {
                    "flexbody (compliant contact)": ([r["angle_deg"] for r in rows], [r["acceleration"] for r in rows])
                },
                "references": {
                    "rolls: 5/7 g sin θ": (grid, 5 / 7 * GRAVITY * np.sin(np.radians(grid))),
                    "slips: g (sin θ − μ cos θ)": (
                        grid,
                        GRAVITY * (np.sin(np.radians(grid)) - friction * np.cos(np.radians(grid))),
                    ),
                },
            }
        ],
        title=f"ball on a slope, μ = {friction:g}",
    )
    summary = {
        "parameters": {"angles": list(angles), "friction": friction, "stiffness": stiffness, "dt": dt, "t_end": t_end},
        "transition_deg": float(np.degrees(np.arctan(3.5 * friction))),
        "slopes": rows,
        "max_relative_error": float(max(abs(r["relative_error"]) for r in rows)),
    }
    (out / "summary.txt").write_text(json.dumps(summary, indent=2))
    return summary


if __name__ == "__main__":
    s = main()
    for r in s["slopes"]:
        print(f"{r['angle_deg']:5.1f}° {r['regime']}: a = {r['acceleration']:.6f} m/s² ({r['relative_error']:+.1e})")
