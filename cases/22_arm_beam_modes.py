"""Case 22: natural modes of a rigid–flexible system — the arm of case 14, held by joint servos against
gravity, carrying its flexible beam, linearised about its static equilibrium.

Problem: the two-link arm with the soft beam of case 14 (``fb.mechanisms.arm_with_beam``: rods 0.5 and 0.4 m,
2.0 and 1.0 kg, revolute joints about y in the vertical xz-plane; beam 0.6 × 0.04 × 0.04 m, E 7e7 Pa, ν 0.3,
ρ 2700 kg/m³, 27-node elements 6 × 1 × 1, attached by its face x = 0 to the flange of link 2; gravity 9.81
m/s² along −z) at the posture q0 = (0.3, −0.5) rad. What holds the joints decides what "the modes" are:

- joints free (no torque): the arm is a double pendulum and hangs straight down; its lowest modes are the
  pendulum swings (0.4836 and 1.5838 Hz), then the hanging beam's, which its weight stretches and stiffens
  (out-of-plane bending 3.0020 Hz against 2.8915 Hz without gravity);
- constant holding torques τ_h (``fb.holding_inputs``: τ_h = (−40.960, −19.442) N·m hold q0 with the beam
  sagging 4.5 cm under its weight) make q0 an equilibrium, but a constant torque has no stiffness and gravity's
  at this posture is negative: ω₀² < 0 (printed as f = −0.2759 Hz), the arm would fall away — a static
  instability, not a vibration;
- a position servo holds a joint with a stiffness: τ = τ_h + k (q0 − q), proportional control with gravity
  feed-forward (``fb.JointSpringDamper`` with rest q0, undamped here). Its equilibrium is the same (the springs
  carry no load at q0) and its modes are those of the servo-stiffened arm: the physical "held arm", and the
  case's main result, with k = JOINT_STIFFNESS = 1000 N·m/rad on both joints. The hold is stable from
  k ≈ 5.0 N·m/rad on (between 3 and 10 in the sweep STIFFNESS_SWEEP);
- locked joints (two ``fb.JointDriver`` rows) are the limit k → ∞: the beam is a cantilever clamped at the flange.

``fb.modal_analysis(asm, q_eq, tau=τ_h)`` linearises about the holding equilibrium q_eq (gravity's preload,
the beam's sag, the servo springs and the constraint forces' stiffness included) and returns the N_MODES
lowest modes. The beam's motions out of the arm's plane (bending along y, torsion) do not move the joints, so
they are the locked cantilever's at any k; the in-plane ones couple the beam's bending with the sprung arm.

Expected (measured with the defaults, ``flexbody run cases/22_arm_beam_modes.py``): servo-held 1.7871 (in-plane),
2.8754 (out-of-plane bending), 5.7359 (in-plane), 16.413 (in-plane), 17.791 (out-of-plane bending), 27.661
(in-plane), 41.604 (torsion), 48.714 Hz (out-of-plane bending), holding equilibrium residual 1.1e-9 N; locked
2.8754, 2.8786, 17.776, 17.791, 41.604 Hz, …; locked without gravity 2.8915 Hz (pair): gravity's preload lowers the
first pair by 0.56 % (y) and 0.45 % (z). The beam's 27-node elements use the default Gauss rule, 2 × 3 × 3 on these
slender elements (before #33 the full 3 × 3 × 3 gave 1.7937, 2.9040, … Hz). Each is checked against something
independent of the eigensolver in tests/test_case_22_arm_beam_modes.py (docs/verification.md, "Case 22"): a
free-vibration simulation started in a mode vibrates at the trapezoidal rule's frequency for that mode (f̄ =
arctan(π f Δt)/(π Δt)) and stays in it; the locked beam without gravity and with ν = 0 is the Timoshenko
clamped–free beam (Huang 1961, J. Appl. Mech. 28:579–584); as k → ∞ the lowest in-plane frequency tends to the
locked one as 1/k, following the first-order perturbation ω²(k) = ω²_locked − k Σ_j x_j².

Outputs in out_dir: modes/ (``Modes.write``: mode_NN/ results directories, one period of each mode with
beam.pvd and arm.pvd for ParaView or ``flexbody view out/22_arm_beam_modes/modes/mode_00 --gif``, and
modes.csv), mode_shapes.png (``fb.plots.plot_mode_shapes``: each mode in the plane it moves in),
frequencies.png (the lowest frequencies against the servo stiffness), summary.json (the returned summary)
and summary.txt.
"""

import json
import time
from pathlib import Path

import numpy as np

import flexbody as fb

LENGTHS = (0.5, 0.4)  # m, links l1, l2
MASSES = (2.0, 1.0)  # kg, links l1, l2 (uniform rods)
BEAM_SIZE = (0.6, 0.04, 0.04)  # m, beam (L, b, h)
YOUNG = 7e7  # Pa, Young's modulus of the beam
POISSON = 0.3  # -, Poisson's ratio
DENSITY = 2700.0  # kg/m³, density of the beam
GRAVITY = 9.81  # m/s², gravity along −z
Q0 = (0.3, -0.5)  # rad, held joint angles
ORDER = 2  # -, element order (1: 8-node, 2: 27-node hexahedra)
DIVISIONS = (6, 1, 1)  # -, elements along x, y, z
JOINT_STIFFNESS = 1000.0  # N·m/rad, servo stiffness of each joint (rest angle Q0); 0: constant torques only
N_MODES = 8  # -, lowest modes computed
STIFFNESS_SWEEP = (1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1e3, 3e3, 1e4, 3e4, 1e5, 1e6, 1e7)  # N·m/rad, servo stiffnesses


def build(
    joint_stiffness=JOINT_STIFFNESS,
    locked=False,
    q0=Q0,
    gravity=GRAVITY,
    poisson=POISSON,
    order=ORDER,
    divisions=DIVISIONS,
    lengths=LENGTHS,
    masses=MASSES,
    beam_size=BEAM_SIZE,
    young=YOUNG,
    density=DENSITY,
) -> fb.System:
    """The arm with its beam at q0; joints free (stiffness 0), sprung towards q0 (servo) or ``locked``."""
    system = fb.mechanisms.arm_with_beam(
        lengths=tuple(lengths),
        masses=tuple(masses),
        beam_size=tuple(beam_size),
        divisions=tuple(divisions),
        order=order,
        young=young,
        poisson=poisson,
        density=density,
        q0=tuple(q0),
        locked=locked,
        gravity=(0.0, 0.0, -gravity),
    )
    if not joint_stiffness or locked:
        return system
    tree = system.trees[0]
    servos = [
        fb.JointSpringDamper(tree.link(name), stiffness=joint_stiffness, rest=float(rest), name=f"servo_{name}")
        for name, rest in zip(("l1", "l2"), q0)
    ]
    return fb.System(
        [*system.trees, *system.bodies],
        system.constraints,
        loads=system.loads,
        actuators=system.actuators,
        q0=system.q0,
        forces=servos,
    )


def held_modes(n_modes=N_MODES, **params):
    """(assembled system, holding equilibrium, modes about it) of ``build(**params)``: the joints held at q0
    by the holding torques τ_h (plus the servo springs, if any)."""
    asm = build(**params).assemble()
    _, eq = fb.holding_inputs(asm)
    return asm, eq, fb.modal_analysis(asm, eq.q, n_modes=n_modes, tau=eq.tau)


def tip(asm, q) -> np.ndarray:
    """Mean position [m] of the beam's free end face (3,)."""
    return asm.coordinates(asm.bodies[0], q, nodes="x1").mean(axis=0)


def classify(asm, x) -> str:
    """ "in-plane" (the part of the beam's displacement symmetric about its mid-plane y = 0 dominates: arm and
    beam move in the xz-plane), else "out-of-plane bending" (the free end moves along y) or "torsion"."""
    beam = asm.bodies[0]
    X = beam.mesh.points
    key = {tuple(np.round(p, 9)): i for i, p in enumerate(X)}
    image = np.array([key[tuple(np.round(p, 9))] for p in X * (1.0, -1.0, 1.0)])  # node ↔ its mirror in y
    u = asm.coordinates(beam, x)
    odd = 0.5 * (u - u[image] * (1.0, -1.0, 1.0))  # out-of-plane part
    if np.sum(odd**2) < np.sum((u - odd) ** 2):
        return "in-plane"
    return "out-of-plane bending" if abs(tip(asm, x)[1]) > 0.3 * np.abs(u).max() else "torsion"


def main(
    out_dir="out/22_arm_beam_modes",
    joint_stiffness=JOINT_STIFFNESS,
    n_modes=N_MODES,
    stiffness_sweep=STIFFNESS_SWEEP,
    q0=Q0,
    order=ORDER,
    divisions=DIVISIONS,
    gravity=GRAVITY,
    poisson=POISSON,
    lengths=LENGTHS,
    masses=MASSES,
    beam_size=BEAM_SIZE,
    young=YOUNG,
    density=DENSITY,
    write_modes=True,
) -> dict:
    """Modes of the servo-held arm, the other ways of holding it and the servo-stiffness sweep; writes the
    outputs and returns the summary (also in summary.json)."""
    clock = time.perf_counter()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    params = dict(
        q0=tuple(q0),
        gravity=gravity,
        poisson=poisson,
        order=order,
        divisions=tuple(divisions),
        lengths=tuple(lengths),
        masses=tuple(masses),
        beam_size=tuple(beam_size),
        young=young,
        density=density,
    )
    asm, eq, modes = held_modes(n_modes, joint_stiffness=joint_stiffness, **params)
    if write_modes:
        modes.write(out / "modes")
    # the other ways of holding the arm
    torque_only = held_modes(n_modes, joint_stiffness=0.0, **params)[2]
    hanging = fb.modal_analysis(build(joint_stiffness=0.0, **{**params, "q0": (np.pi / 2, 0.0)}), n_modes=n_modes)
    locked = fb.modal_analysis(build(locked=True, **params), n_modes=n_modes)
    locked_no_gravity = fb.modal_analysis(build(locked=True, **{**params, "gravity": 0.0}), n_modes=n_modes)
    sweep = [
        {"stiffness": float(k), "frequencies": held_modes(n_modes, joint_stiffness=float(k), **params)[2].frequencies}
        for k in stiffness_sweep
    ]

    fb.plots.plot_mode_shapes(modes, out / "mode_shapes.png")
    k = [r["stiffness"] for r in sweep]
    curves = {f"mode {j}": (k, [r["frequencies"][j] for r in sweep]) for j in range(n_modes)}
    panel = {"ylabel": "frequency (negative: ω² < 0) [Hz]", "curves": curves, "logx": True}
    fb.plots.plot_curves(out / "frequencies.png", [panel], xlabel="servo stiffness k [N·m/rad]", size=(8.0, 4.8))
    summary = {
        "joint_stiffness": joint_stiffness,
        "n_dofs": int(asm.n_dofs),
        "holding_torques": (np.asarray(asm.S) @ eq.tau).tolist(),
        "equilibrium_residual": float(eq.residual),
        "static_residual": float(modes.metadata["static_residual"]),
        "tip_sag": (tip(asm, eq.q) - tip(asm, asm.q0)).tolist(),
        "frequencies": modes.frequencies.tolist(),
        "kinds": [classify(asm, x) for x in modes.shapes],
        "n_rigid_body": int(modes.n_rigid_body),
        "holds": {
            "servo": modes.frequencies.tolist(),
            "constant_torque": torque_only.frequencies.tolist(),
            "free_joints_hanging": hanging.frequencies.tolist(),
            "locked": locked.frequencies.tolist(),
            "locked_no_gravity": locked_no_gravity.frequencies.tolist(),
        },
        "hanging_posture": hanging.q[:2].tolist(),
        "preload_effect": [float(locked.frequencies[i] / locked_no_gravity.frequencies[i] - 1.0) for i in (0, 1)],
        "stiffness_sweep": [{**r, "frequencies": r["frequencies"].tolist()} for r in sweep],
        "modal_method": modes.metadata["method"],
        "wall_seconds": time.perf_counter() - clock,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    rows = zip(*[summary["holds"][key] for key in ("servo", "constant_torque", "free_joints_hanging", "locked")])
    table = [
        f"{k:>4}  {kind:<21}" + "".join(f"{f:>12.6g}" for f in row)
        for k, (kind, row) in enumerate(zip(summary["kinds"], rows))
    ]
    head = "mode  kind (servo-held)           servo  const. torque   free (hung)      locked   [Hz]"
    (out / "summary.txt").write_text("\n".join([f"Case 22: k = {joint_stiffness:g} N·m/rad", head, *table]) + "\n")
    return summary


if __name__ == "__main__":
    main()
