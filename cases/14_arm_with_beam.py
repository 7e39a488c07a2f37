"""Case 14: a rigid two-link arm carrying a flexible beam — statics with locked joints, free motion, and a
constant joint torque (8-node and 27-node elements).

Problem (``fb.mechanisms.arm_with_beam`` [DE 6.2]): two uniform rigid rods (lengths 0.5, 0.4 m, masses
2.0, 1.0 kg) on revolute joints about y, moving in the vertical xz-plane, gravity 9.81 m/s² along −z; a solid
beam 0.6 × 0.04 × 0.04 m (aluminium-like ρ 2700 kg/m³, ν 0.3, E 7e7 Pa — soft, so that it deflects visibly)
attached rigidly by its face x = 0 to the flange at the tip of link 2 (AttachNodes); start posture
q0 = (0.3, −0.5) rad at rest, the beam straight on the flange (inclined at q1 + q2 = −0.2 rad). Element order
``order``: 1 → 8-node hexahedra 12 × 2 × 2, 2 → 27-node hexahedra 6 × 1 × 1 (the meshes of
tests/test_equilibrium.py). Generalized-α ρ∞ = 1, dt = 2e-3 s, T_END = 1 s (the arm falls and swings
through the bottom).

(a) Locked joints (two JointDriver rows at q0): ``static_equilibrium`` of the whole system must give the
    deflection of the beam alone, clamped on its face "x0" in the flange's pose (``fb.Fix``, eliminated
    coordinates) and solved by the flexible-only ``fb.solve_static`` — an independent code path.
    Tolerance: tip (mean of the face x = L) difference ≤ 1e-8 relative (Newton tolerance 1e-11).
    Sanity closed form: Euler–Bernoulli cantilever under its own weight, tip deflection normal to the beam
    w cos θ L⁴/(8 E I), w = ρ g A, θ = −0.2 rad the beam's inclination, I = b h³/12: 4.5057e-2 m (7.5 % of
    L: moderately nonlinear). Expected: 27-node elements (the default Gauss rule, 2 × 3 × 3 on these slender
    elements) within 3 % (they carry shear deformation, ≈ +0.5 % here, and geometric stiffening, ≈ −1 %); 8-node
    bricks with incompatible modes (LOCKING = "auto", the default) within 1 %; plain trilinear bricks
    (LOCKING = None) lock in bending: ≈ 0.6 of it at 12 × 2 × 2 (tests/test_cases_flexible.py solves both).
(b) Free motion from q0 at rest (no torque): the energy (kinetic + strain + gravity) is conserved by the
    trapezoidal rule up to O(dt²); requirement max |E − E0| ≤ 0.5 % of the largest kinetic energy.
(c) A constant torque τ = TORQUE = (2, −1) N·m on the joints: E(t) − E0 equals the recorded applied work
    W(t) = ∫ τ·q̇ dt (history "applied_work"); mismatch max |E − E0 − W| ≤ 0.5 % of K_max.

Measured at full size (defaults, `NUMBA_NUM_THREADS=1 flexbody run cases/14_arm_with_beam.py`):
- (a) locked vs clamped-alone tip: 2.1e-10 (8-node) and 2.7e-10 (27-node) relative; tip deflection normal
  to the beam −4.4761e-2 m (8-node, 0.9934 of Euler–Bernoulli; plain bricks gave 0.608) and −4.5412e-2 m
  (27-node, 1.0079; 3 × 3 × 3 gave 0.9888); equilibrium residual ≤ 1.7e-9 N, ‖φ‖ 6e-17.
- (b) max |E − E0| / K_max = 9.53e-5 (8-node) and 9.46e-5 (27-node), K_max 38.3 J; ‖φ‖ ≤ 4.5e-12.
- (c) max |E − E0 − W| / K_max = 2.51e-4 (8-node) and 2.44e-4 (27-node) with W(1 s) = 6.85 / 6.84 J (0.17 K_max).

Outputs in out_dir, per order (order1/, order2/): static_locked.vtu and static_alone.vtu (the two static
solutions, ParaView), free/ and torque/ (Results.save, and free/beam.pvd + .vtu every VTK_EVERY steps);
energy.png ((E − E0)/K_max of (b), E − E0 and W of (c), per order), joints.png (q of (b) and (c)) and
summary.txt (JSON of the returned summary).
"""

import json
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
Q0 = (0.3, -0.5)  # rad, start joint angles (at rest)
ORDER = (1, 2)  # -, element orders to run (1: 8-node, 2: 27-node); an int runs one
DIVISIONS_ORDER1 = (12, 2, 2)  # -, 8-node elements along x, y, z
LOCKING = "auto"  # -, the 8-node bricks: "auto" (incompatible modes, do not lock) or None (plain, lock)
DIVISIONS_ORDER2 = (6, 1, 1)  # -, 27-node elements along x, y, z
DT = 2e-3  # s, generalized-α step
T_END = 1.0  # s, end time
TORQUE = (2.0, -1.0)  # N·m, constant joint torques of (c)
VTK_EVERY = 25  # -, ParaView frame every this many steps (free motion)


def build(
    order=1,
    divisions=DIVISIONS_ORDER1,
    lengths=LENGTHS,
    masses=MASSES,
    beam_size=BEAM_SIZE,
    young=YOUNG,
    poisson=POISSON,
    density=DENSITY,
    gravity=GRAVITY,
    q0=Q0,
    locked=False,
    locking=LOCKING,
) -> fb.System:
    """The arm with its beam at q0 (joints held at q0 when ``locked``)."""
    return fb.mechanisms.arm_with_beam(
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
        locking=locking,
    )


# --------------------------------------------------------------------------------------- (a) statics
def euler_bernoulli_tip(beam_size, young, density, gravity, inclination) -> float:
    """Tip deflection [m] normal to a cantilever inclined at ``inclination`` [rad] (about y) under its own
    weight: w cos θ L⁴ / (8 E I), w = ρ g b h, I = b h³ / 12 (bending about y)."""
    L, b, h = beam_size
    return density * gravity * b * h * np.cos(inclination) * L**4 / (8.0 * young * b * h**3 / 12.0)


def beam_axes(inclination):
    """Unit vectors along the beam and normal to it (in the xz-plane, pointing up at θ = 0) for a rotation
    by θ about y: x → (cos θ, 0, −sin θ)."""
    c, s = np.cos(inclination), np.sin(inclination)
    return np.array([c, 0.0, -s]), np.array([s, 0.0, c])


def statics(order, divisions, params, out=None) -> dict:
    """Locked arm vs the beam alone clamped at the flange; tip deflections and the Euler–Bernoulli ratio."""
    asm = build(order, divisions, locked=True, **params).assemble()
    eq = fb.solve_static(asm)  # the constrained solver: Newton on (q, λ)
    beam = asm.bodies[0]
    alone = fb.FlexibleBody("alone", beam.mesh, beam.material, locking=beam.locking)
    clamped = fb.System([alone], [fb.Fix(alone, "x0")], loads=[fb.Gravity(alone, (0, 0, -params["gravity"]))])
    ref = fb.solve_static(clamped)  # the flexible-only solver, the clamp's coordinates eliminated
    tip = beam.mesh.points[beam.nodes("x1")].mean(axis=0)
    d_arm = asm.coordinates(beam, eq.q[-1], nodes="x1").mean(axis=0) - tip
    d_ref = clamped.assemble().coordinates(alone, ref.q[-1], nodes="x1").mean(axis=0) - tip
    inclination = float(sum(params["q0"]))
    along, normal = beam_axes(inclination)
    eb = euler_bernoulli_tip(params["beam_size"], params["young"], params["density"], params["gravity"], inclination)
    if out is not None:
        fb.io.write_vtu(out / "static_locked.vtu", beam, asm.coordinates(beam, eq.q[-1]).ravel())
        fb.io.write_vtu(out / "static_alone.vtu", alone, ref.q[-1])
    out = {"divisions": list(divisions), "n_dofs": int(asm.n_dofs), "tip_displacement_locked": d_arm.tolist()}
    out["tip_displacement_alone"] = d_ref.tolist()
    out["locked_vs_alone_relative"] = float(np.linalg.norm(d_arm - d_ref) / np.linalg.norm(d_ref))
    out |= {"tip_normal_deflection": float(d_arm @ normal), "tip_axial_displacement": float(d_arm @ along)}
    out |= {"euler_bernoulli_tip": -eb, "ratio_to_euler_bernoulli": float(-(d_arm @ normal) / eb)}
    out |= {key: eq.metadata[key] for key in ("residual", "violation", "iterations")}
    return out | {"joint_multipliers": eq.histories["lam"][-1][-2:].tolist()}


# ------------------------------------------------------------------------------------- (b), (c) dynamics
def simulate(order, divisions, params, dt, t_end, torque=None, context=None):
    """A run from q0 at rest with ρ∞ = 1; ``torque`` (2,) constant joint torques [N·m] or None."""
    asm = build(order, divisions, **params).assemble()
    tau = None
    if torque is not None:
        tau = np.zeros(asm.n_dofs)
        tau[:2] = torque
    return asm, fb.simulate(asm, t_end, integrator=fb.GeneralizedAlpha(dt=dt, rho_inf=1.0), tau=tau, context=context)


def energy_numbers(res) -> dict:
    """Energy drift and work balance of a run, relative to the largest kinetic energy."""
    E, K, W = res.histories["energy"], res.histories["kinetic"], res.histories["applied_work"]
    s = res.metadata["statistics"]
    out = {"max_kinetic": float(K.max()), "E0": float(E[0]), "E_end": float(E[-1]), "work_end": float(W[-1])}
    out["drift_over_kmax"] = float(np.abs(E - E[0]).max() / K.max())
    out["work_mismatch_over_kmax"] = float(np.abs(E - E[0] - W).max() / K.max())
    out |= {"max_violation": float(res.histories["violation"].max()), "q_end": res.q[-1, :2].tolist()}
    out |= {key: int(s[key]) for key in ("steps", "rejected", "newton_iterations", "factorizations")}
    return out | {"wall_seconds": float(s["wall_seconds"])}


def plot_energy(path, runs: dict) -> None:
    """(b) (E − E0)/K_max in free motion; (c) E − E0 and the applied work W under the constant torque."""
    drift, work = {}, {}
    for order, (free, torque) in runs.items():
        E, K = free.histories["energy"], free.histories["kinetic"]
        drift[f"order {order}"] = (free.times, (E - E[0]) / K.max())
        E, W = torque.histories["energy"], torque.histories["applied_work"]
        work |= {f"E − E0, order {order}": (torque.times, E - E[0]), f"W, order {order}": (torque.times, W)}
    panels = [
        {"ylabel": "energy error (E − E0) / K_max [-]", "curves": drift, "title": "(b) free motion"},
        {"ylabel": "energy change E − E0, work W [J]", "curves": work, "title": "(c) constant joint torque"},
    ]
    fb.plots.plot_curves(path, panels, size=(8, 3.5))


def plot_joints(path, runs: dict) -> None:
    """The joint angles of (b) and (c)."""
    curves = {}
    for order, (free, torque) in runs.items():
        for label, res in (("free", free), ("torque", torque)):
            curves |= {f"q{j + 1}, {label}, order {order}": (res.times, res.q[:, j]) for j in range(2)}
    fb.plots.plot_curves(path, [{"ylabel": "joint angle [rad]", "curves": curves}], size=(8, 4.5))


def main(
    out_dir="out/14_arm_with_beam",
    order=ORDER,
    divisions_order1=DIVISIONS_ORDER1,
    divisions_order2=DIVISIONS_ORDER2,
    locking=LOCKING,
    lengths=LENGTHS,
    masses=MASSES,
    beam_size=BEAM_SIZE,
    young=YOUNG,
    poisson=POISSON,
    density=DENSITY,
    gravity=GRAVITY,
    q0=Q0,
    dt=DT,
    t_end=T_END,
    torque=TORQUE,
    vtk_every=VTK_EVERY,
    context=None,
) -> dict:
    """Statics, free motion and constant-torque motion for each element order; returns the summary."""
    parameters = {
        k: list(v) if isinstance(v, tuple) else v for k, v in locals().items() if k not in ("out_dir", "context")
    }
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    orders = (order,) if isinstance(order, int) else tuple(order)
    divisions = {1: tuple(divisions_order1), 2: tuple(divisions_order2)}
    params = {
        "lengths": tuple(lengths),
        "masses": tuple(masses),
        "beam_size": tuple(beam_size),
        "young": young,
        "poisson": poisson,
        "density": density,
        "gravity": gravity,
        "q0": tuple(q0),
        "locking": locking,
    }
    per_order, runs = {}, {}
    for n in orders:
        sub = out / f"order{n}"
        sub.mkdir(parents=True, exist_ok=True)
        static = statics(n, divisions[n], params, sub)
        _, free = simulate(n, divisions[n], params, dt, t_end, context=context)
        free.save(sub / "free")
        fb.io.write_pvd(sub / "free", free, every=vtk_every)
        _, driven = simulate(n, divisions[n], params, dt, t_end, torque=tuple(torque), context=context)
        driven.save(sub / "torque")
        runs[n] = (free, driven)
        per_order[f"order{n}"] = {"static": static, "free": energy_numbers(free), "torque": energy_numbers(driven)}
    plot_energy(out / "energy.png", runs)
    plot_joints(out / "joints.png", runs)
    summary = {
        "orders": per_order,
        "euler_bernoulli_tip": -euler_bernoulli_tip(beam_size, young, density, gravity, float(sum(q0))),
        "parameters": parameters,
    }
    (out / "summary.txt").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


if __name__ == "__main__":
    main()
