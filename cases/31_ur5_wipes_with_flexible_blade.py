"""Case 31 (flagship with contact): the UR5 from its URDF wipes a table with a flexible blade — the normal force held at
its set-point by admittance around a task-level motion law, the blade's tip path tracked along the surface, Coulomb
friction at its edge — and the same stroke under the motion law alone loses the table where its force would pull.

Problem: the UR5 of ``meshes/robots/ur5_robot.urdf`` (case 17) holds at its flange ``tool0`` a polymer blade
BLADE_SIZE [m] (``fb.mechanisms.robot_with_tool``: its length along the flange z axis; St Venant–Kirchhoff YOUNG,
POISSON, DENSITY, Kelvin–Voigt DAMPING [s]; DIVISIONS 8-node ANCF bricks) attached by constraint rows. At Q0 the
flange axis leans 46° from the vertical, so the blade trails a stroke along −x. The table is a plane through the
blade's lower edge at the start falling by SLOPE [rad] along the stroke (which the motion plan does not know); every
node of the blade's free end has a ``fb.Contact`` with it (Coulomb FRICTION); gravity along −z; ``fb.MoreauJean``, DT.
Start: at rest in the static equilibrium with the joints held at Q0 (``fb.holding_inputs``), the edge touching.

The motion law: the flange pose (six rows, six joints) by the direct mapping [DE-65..71], gains ω² and 2ω (OMEGA), on
the whole constrained system (the contacts are the plant's alone); its reference the start pose moved along −x from
T_PRESS on, the speed rising evenly to SPEED over T_RAMP.

1. Force control (``fb.control.AdmittanceControl``): the reference moves down by the force loop ṡ = k (f_d − Σ f_n)
   + k_I ∫(f_d − Σ f_n) dt (K_FORCE, KI_FORCE, f_d = FORCE; Σ f_n the plant's measured normal forces) and along x by
   the tip loop ṡ = K_TIP (x_d − x) of the tip node's x, x_d the start x moved as the flange's reference.
2. Motion only: the same law and stroke, the reference pressed PRESS_DEPTH below the start by a smoothstep over
   T_PRESS, no loops: as the table falls away the force vanishes where the undeformed blade carried by the reference
   leaves the surface, at PRESS_DEPTH / tan SLOPE along the stroke (the closed form t*: quasi-static, the blade's
   deflection and the flange's error vanishing with the force).

Expected (tests/test_case_31_wiping_blade.py; docs/verification.md, "Case 31"): (1.) the normal force within 5 % of
FORCE from T_SETTLE on, the friction inside the cone at every step (sliding on its boundary), the tip's x within 1 mm
of its path from T_SETTLE on, no penetration beyond 1e-9 m; (2.) contact lost within one step of t*; the contact force
converges as the blade's mesh is refined (the slow test).

Outputs in out_dir (``flexbody view out_dir`` shows the blade's bending and the contact forces as arrows):
results.npz/.json of the force-controlled run, blade.pvd (the blade and its fields), contacts.pvd, ur5.pvd (links),
force.png (Σ f_n of both runs, the set-point and t*), tip.png (the tip's path error), screenshot.png, summary.txt.
"""

import json
from pathlib import Path

import numpy as np

import flexbody as fb

ROBOT = "meshes/robots/ur5_robot.urdf"  # -, URDF of the robot (absolute, or from the repository root)
FLANGE = "tool0"  # -, the URDF link holding the blade
Q0 = (0.0, -1.2, 1.8, 0.171, np.pi / 2, 0.0)  # rad, start joints (flange axis 46° from the vertical, toward +x)
BLADE_SIZE = (0.10, 0.05, 0.004)  # m, blade length (flange z), width (flange x), thickness
DIVISIONS = (6, 1, 1)  # -, blade elements (length, width, thickness)
YOUNG = 5e8  # Pa, Young's modulus of the blade (a stiff polyurethane)
POISSON = 0.3  # -, Poisson's ratio
DENSITY = 1200.0  # kg/m³, density
DAMPING = 1e-3  # s, Kelvin–Voigt retardation time
FRICTION = 0.3  # -, Coulomb coefficient blade–table
SLOPE = 0.1  # rad, the table's fall along the stroke (−x)
GRAVITY = 9.81  # m/s², along −z
FORCE = 5.0  # N, the normal force set-point (summed over the edge)
K_FORCE = 2e-2  # m/(N·s), admittance of the force loop
KI_FORCE = 0.1  # m/(N·s²), its integral gain (a receding surface leaves no error)
K_TIP = 5.0  # 1/s, gain of the tip loop
PRESS_DEPTH = 0.008  # m, the motion-only reference below the start
OMEGA = 20.0  # rad/s, bandwidth of the motion law: KP = ω², KV = 2ω
SPEED = 0.05  # m/s, stroke speed
T_PRESS = 0.5  # s, the stroke starts
T_RAMP = 0.2  # s, the stroke's speed rises
T_SETTLE = 1.2  # s, the transients are over (the force and tip measures start)
T_END = 2.5  # s, end time
DT = 1e-3  # s, step
VTK_EVERY = 25  # -, write every k-th recorded step to the ParaView series


def build(
    robot=ROBOT,
    q0=Q0,
    blade_size=BLADE_SIZE,
    divisions=DIVISIONS,
    young=YOUNG,
    poisson=POISSON,
    density=DENSITY,
    damping=DAMPING,
    friction=FRICTION,
    slope=SLOPE,
    gravity=GRAVITY,
) -> fb.System:
    """The UR5 holding the blade, at its static equilibrium with the joints held at q0, the table through the blade's
    lower edge there, falling by ``slope`` along −x, and a contact at every node of the blade's free end."""
    robot = Path(__file__).resolve().parents[1] / robot  # relative to the repository root (or absolute)
    material = {"young": young, "poisson": poisson, "density": density, "damping": damping, "gravity": gravity}
    held = fb.mechanisms.robot_with_tool(robot, FLANGE, q0, blade_size, divisions, name="blade", **material)
    q = fb.holding_inputs(held)[1].q
    blade = held.bodies[0]
    edge = blade.nodes("x1")
    points = held.assemble().coordinates(blade, q[None], nodes=edge)[0]
    table = fb.Plane((-np.sin(slope), 0.0, np.cos(slope)), point=points[np.argmin(points[:, 2])])  # falls along −x
    contacts = [fb.Contact(fb.Node(blade, int(i)), table, friction=friction, name=f"edge{i}") for i in edge]
    return fb.System(
        held.trees + held.bodies, [*held.constraints, *contacts], loads=held.loads, actuators=held.actuators, q0=q
    )


def flange_task(asm) -> fb.StackedTask:
    """Position (world x, y, z) and orientation of the flange frame: 6 rows."""
    frame = asm.trees[0].frame(FLANGE)
    return fb.StackedTask([fb.PointTask(frame, name="flange"), fb.OrientationTask(frame, name="flange_R")])


def edge_nodes(asm) -> np.ndarray:
    """The blade's free-end nodes on the table side at the start (the lower edge), lowest first."""
    blade = asm.bodies[0]
    edge = blade.nodes("x1")
    z = asm.coordinates(blade, asm.q0[None], nodes=edge)[0][:, 2]
    return edge[np.argsort(z, kind="stable")][: len(edge) // 2]


def stroke(t: float) -> tuple[float, float, float]:
    """Distance [m], speed and acceleration of the stroke along −x at t: 0 before T_PRESS, the speed rising evenly
    to SPEED over T_RAMP, then constant."""
    u = max(t - T_PRESS, 0.0)
    if u < T_RAMP:
        return SPEED * u * u / (2 * T_RAMP), SPEED * u / T_RAMP, SPEED / T_RAMP if u > 0.0 else 0.0
    return SPEED * (u - T_RAMP / 2), SPEED, 0.0


def press(t: float, depth: float) -> tuple[float, float, float]:
    """Depth [m], its rate and acceleration at t: ``depth`` reached by a smoothstep over T_PRESS."""
    u = min(max(t / T_PRESS, 0.0), 1.0)
    return (
        depth * u * u * (3 - 2 * u),
        depth * 6 * u * (1 - u) / T_PRESS,
        depth * 6 * (1 - 2 * u) / T_PRESS**2 * (u < 1),
    )


def controller(asm, motion_only: bool, force=FORCE, depth=PRESS_DEPTH):
    """The force-controlled law (module docstring, 1.) or the motion law alone (2.)."""
    frame = asm.trees[0].frame(FLANGE)
    ws = asm.workspace(0.0, asm.q0)
    p0, R0, depth = frame.position(ws), frame.rotation(ws), depth if motion_only else 0.0

    def reference(t):
        (x, xd, xdd), (z, zd, zdd) = stroke(t), press(t, depth)
        return [p0 - np.array([x, 0.0, z]), R0], np.array([-xd, 0, -zd, 0, 0, 0]), np.array([-xdd, 0, -zdd, 0, 0, 0])

    motion = fb.control.DirectMappingControl(flange_task(asm), reference, kp=OMEGA**2, kv=2.0 * OMEGA)
    if motion_only:
        return motion
    tip = fb.PointTask(fb.Node(asm.bodies[0], int(edge_nodes(asm)[0])), components=(0,), name="tip")
    x0 = float(tip.evaluate(ws).x[0])
    loops = [
        fb.control.ContactForceLoop(force, (0, 0, -1, 0, 0, 0), K_FORCE, integral_gain=KI_FORCE),
        fb.control.TaskLoop(tip, lambda t: (np.array([x0 - stroke(t)[0]]), None, None), np.eye(6)[:, :1], K_TIP),
    ]
    return fb.control.AdmittanceControl(motion, loops)


def loss_time(depth, slope) -> float:
    """t* [s]: the stroke distance depth/tan(slope) where the undeformed blade carried by the motion-only reference
    leaves the falling table (module docstring, 2.)."""
    distance, ramp = depth / np.tan(slope), SPEED * T_RAMP / 2
    if distance <= ramp:
        return T_PRESS + float(np.sqrt(2 * T_RAMP * distance / SPEED))
    return T_PRESS + T_RAMP + (distance - ramp) / SPEED


def numbers(res, force, t_settle, friction) -> dict:
    """The force-controlled run's measures (module docstring, Expected 1.)."""
    t, normal, friction_force = (
        res.times[:-1],
        res.histories["contact_normal_force"][:-1],
        res.histories["contact_friction_force"][:-1],
    )
    total, late = normal.sum(axis=1), t >= t_settle
    return {
        "force_range_after_settle": [float(total[late].min()), float(total[late].max())],
        "force_error_after_settle": float(np.abs(total[late] / force - 1.0).max()),
        "outside_cone": float((np.linalg.norm(friction_force, axis=2) - friction * normal).max()),
        "sliding_friction_over_normal": float(np.linalg.norm(friction_force[-1], axis=1).sum() / total[-1]),
        "tip_error_after_settle": float(np.abs(res.histories["admittance_error"][:-1, 1][late]).max()),
        "lowest_gap": float(res.histories["contact_gap"].min()),
        "max_torque": np.abs(res.histories["tau_k"]).max(axis=0).tolist(),
    }


def loss(res, t_star, dt) -> dict:
    """The first step after the press without a push, against t*; whether the blade touched again after it."""
    pushing = res.histories["contact_normal_force"][:-1].sum(axis=1) > 0.0
    pressed = int(np.argmax(pushing))
    opened = pressed + int(np.argmin(pushing[pressed:])) if not pushing[pressed:].all() else None
    t_open = None if opened is None else float(res.times[opened])
    return {
        "t_star": t_star,
        "opened_at_step_from": t_open,
        "off_by_steps": None if t_open is None else (t_open - t_star) / dt,
        "touched_again": None if opened is None else bool(pushing[opened:].any()),
    }


def plot_force(path, runs, force, t_star) -> None:
    """Σ f_n of the runs against the set-point and t*."""
    curves = {
        name: (res.times[:-1], res.histories["contact_normal_force"][:-1].sum(axis=1)) for name, res in runs.items()
    }
    references = {
        "set-point": ([0.0, runs["force control"].times[-1]], [force, force]),
        "t* (closed form)": ([t_star, t_star], [0.0, 2 * force]),
    }
    panel = {"ylabel": "Σ normal force [N]", "xlabel": "t [s]", "curves": curves, "references": references}
    fb.plots.plot_curves(path, [panel], size=(8, 4), title="wiping with a flexible blade")


def main(
    out_dir="out/31_ur5_wipes_with_flexible_blade",
    force=FORCE,
    press_depth=PRESS_DEPTH,
    t_settle=T_SETTLE,
    t_end=T_END,
    dt=DT,
    vtk_every=VTK_EVERY,
    outputs=True,
    context=None,
    **overrides,
) -> dict:
    """Both runs, outputs and summary (returned and in summary.txt); ``overrides``: keywords of :func:`build`."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    asm, integrator = build(**overrides).assemble(), fb.MoreauJean(dt=dt)
    held = fb.simulate(
        asm, t_end, integrator=integrator, controller=controller(asm, False, force), save_to=out, context=context
    )
    slope, friction = overrides.get("slope", SLOPE), overrides.get("friction", FRICTION)
    t_star = loss_time(press_depth, slope)
    alone = fb.simulate(
        asm,
        dt * round((t_star + 0.1) / dt),
        integrator=integrator,
        controller=controller(asm, True, force, press_depth),
    )
    summary = {"force_control": numbers(held, force, t_settle, friction), "motion_only": loss(alone, t_star, dt)}
    summary["parameters"] = dict(force=force, slope=slope, friction=friction, dt=dt, t_end=t_end, n=int(asm.n_dofs))
    if outputs:
        fb.io.write_link_pvd(out, held, every=vtk_every)
        fb.io.write_pvds(out, held, every=vtk_every)
        plot_force(out / "force.png", {"force control": held, "motion only": alone}, force, t_star)
        error = {"tip x error": (held.times[:-1], 1e3 * held.histories["admittance_error"][:-1, 1])}
        panel = {"ylabel": "tip path error [mm]", "xlabel": "t [s]", "curves": error}
        fb.plots.plot_curves(out / "tip.png", [panel], size=(8, 3.5))
        fb.view.screenshot(out, out / "screenshot.png", field="von_mises")
    (out / "summary.txt").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


if __name__ == "__main__":
    print(json.dumps(main(), indent=2))
