"""Case 21: a tumbling T-handle in weightlessness (the Dzhanibekov effect) — one link on a free-flyer joint.

Problem: a steel T-handle (ρ = 7850 kg/m³), a crossbar (solid cylinder, length l_b = 0.16 m, radius
r_b = 6 mm) with a stem (l_s = 0.08 m, r_s = 6 mm) standing on the middle of its side, floats without gravity
on a ``fb.FreeFlyer`` (position of the link frame [m], rotation vector φ [rad], R = exp([φ]×)). The link frame
sits at the middle of the crossbar, x along the crossbar, y along the stem, z normal to the T. With m = ρπr²l
for each part, M = m_b + m_s, d = r_b + l_s/2 and μ = m_b m_s/M, the centre of mass is at y_c = −m_s d/M and
the inertia about it is diagonal in link axes (solid cylinders, parallel axes through μ d²):
    I₁ = I_x = m_b r_b²/2 + m_s(3r_s² + l_s²)/12 + μ d²,   I₂ = I_y = m_b(3r_b² + l_b²)/12 + m_s r_s²/2,
    I₃ = I_z = m_b(3r_b² + l_b²)/12 + m_s(3r_s² + l_s²)/12 + μ d²,
(I₁, I₂, I₃) = (1.41269, 3.05597, 4.43031) × 10⁻⁴ kg·m²: the stem is the intermediate axis. The handle starts
at φ = 0 spinning at ω₀ = 6 rad/s about the stem with a small wobble, ω_body(0) = (0.03, 6, 0.05) rad/s, its
centre of mass at rest (ṗ(0) = −ω × c: the link frame circles the centre of mass, which exercises the coupling
of the free flyer's translations and rotations). A spin about the intermediate axis is unstable: the handle
flips over, again and again, and ω_body's middle component changes sign every half period.

Expected, from closed forms nobody here wrote:
1. Torque-free motion conserves the kinetic energy E and the angular momentum about the centre of mass,
   L = R I ω_body (world axes); the centre of mass stays put.
2. Euler's equations I₁ω̇₁ = (I₂ − I₃)ω₂ω₃ (cyclic) with I₁ < I₂ < I₃ and L² > 2E I₂ have the solution
   (Landau & Lifshitz, *Mechanics*, §37; Jacobi elliptic functions of parameter m = k², scipy.special.ellipj)
       ω₁ = A₁ cn(λt + u₀),   ω₂ = ±A₂ sn(λt + u₀),   ω₃ = ±A₃ dn(λt + u₀),
       A₁² = (2E I₃ − L²)/(I₁(I₃ − I₁)),  A₂² = (2E I₃ − L²)/(I₂(I₃ − I₂)),  A₃² = (L² − 2E I₁)/(I₃(I₃ − I₁)),
       λ = √((I₃ − I₂)(L² − 2E I₁)/(I₁I₂I₃)),   k² = (I₂ − I₁)(2E I₃ − L²)/((I₃ − I₂)(L² − 2E I₁)),
   ω₃ keeping the sign of ω₃(0), u₀ fixed by ω(0); for L² < 2E I₂ the roles of I₁ and I₃ swap (derived by
   A. Jadczyk, "The case of m > 1", 2017, following "Taming the T-handle"). ω_body is periodic with period
   T = 4 K(k)/λ (K the complete elliptic integral of the first kind) and ω₂ ∝ sn changes sign every T/2: one
   flip. Here E = 5.50137e-3 J, L = 1.83372e-3 N·m·s, k² = 0.9998405315, λ = 3.604573 1/s and
   T = 6.390012334 s — close to the separatrix ((L² − 2E I₂)/L² = 3.9e-5), where T is very sensitive to the
   invariants: a relative error of 1e-6 in E alone moves T by 0.0144 s.
3. φ stays within ‖φ‖ ≤ π (flexbody moves it to the other chart, φ − 2πφ/‖φ‖, after any step that takes it
   past π), so φ jumps about once per turn while the orientation R = exp([φ]×) stays continuous.

Measured over 21 s with RK4 at 1 ms: drifts of E 3.2e-11 and of L 1.4e-10; max |ω_body − closed form| =
2.14e-5 rad/s (RK4's fourth order). tests/test_case_21_tumbling_t_handle.py checks these, the flips, the chart
changes, generalized-α's second order, the closed form against Euler's equations and the inertia against a
quadrature; docs/verification.md ("Case 21") records the numbers.

Sources: Landau & Lifshitz, *Mechanics*, 3rd ed., §37; the exact solution as a check of rigid-body integrators
as in van Zon & Schofield, J. Comput. Phys. 225 (2007) 145–164; the Dzhanibekov effect (Salyut 7, 1985).

Outputs in out_dir: results.npz/.json, histories.csv (ω_body and its closed form, energy, L, ‖φ‖, centre of
mass), t_handle.png (ω_body against the closed form, drifts of E and L, ‖φ‖), summary.txt (JSON) and a
ParaView series of the link (space.pvd; the handle's axes are the point data frame_x, frame_y, frame_z).
"""

import json
from pathlib import Path

import numpy as np
from scipy.special import ellipj, ellipk, ellipkinc

import flexbody as fb

DENSITY = 7850.0  # kg/m³, steel
CROSSBAR_LENGTH = 0.16  # m, l_b: length of the crossbar (body x)
CROSSBAR_RADIUS = 0.006  # m, r_b: radius of the crossbar
STEM_LENGTH = 0.08  # m, l_s: length of the stem (body −y, from the crossbar's side)
STEM_RADIUS = 0.006  # m, r_s: radius of the stem
SPIN_RATE = 6.0  # rad/s, ω₀: initial spin about the stem (the intermediate axis, body y)
WOBBLE_X = 0.03  # rad/s, initial body angular velocity about the crossbar (minor axis, body x)
WOBBLE_Z = 0.05  # rad/s, initial body angular velocity about the T's normal (major axis, body z)
T_END = 21.0  # s, end time (about 3.3 flip periods)
DT = 1e-3  # s, RK4 step
RECORD_EVERY = 5  # -, record every k-th step
PVD_EVERY = 20  # -, write every k-th recorded step to the ParaView series


# ------------------------------------------------------------------ the body
def t_handle(
    density=DENSITY,
    crossbar_length=CROSSBAR_LENGTH,
    crossbar_radius=CROSSBAR_RADIUS,
    stem_length=STEM_LENGTH,
    stem_radius=STEM_RADIUS,
) -> dict:
    """Mass [kg], centre of mass (3,) in the link frame [m] and principal moments (3,) about it [kg·m²] of
    the T-handle (module docstring: two solid cylinders)."""
    lb, rb, ls, rs = crossbar_length, crossbar_radius, stem_length, stem_radius
    mb, ms = density * np.pi * rb**2 * lb, density * np.pi * rs**2 * ls
    mass, d = mb + ms, rb + ls / 2.0
    shift = mb * ms / mass * d**2  # parallel axes: μ d²
    bar_t, stem_t = mb * (3 * rb**2 + lb**2) / 12.0, ms * (3 * rs**2 + ls**2) / 12.0
    inertia = np.array([mb * rb**2 / 2.0 + stem_t + shift, bar_t + ms * rs**2 / 2.0, bar_t + stem_t + shift])
    com = np.array([0.0, -ms * d / mass, 0.0])
    return {"mass": mass, "com": com, "inertia": inertia, "crossbar_mass": mb, "stem_mass": ms}


def build(**geometry) -> fb.System:
    """The handle on a free-flyer joint in a weightless tree "space" (``geometry``: keywords of
    :func:`t_handle`)."""
    body = t_handle(**geometry)
    space = fb.RigidTree("space", gravity=(0.0, 0.0, 0.0))
    space.add_link("handle", None, fb.FreeFlyer(), mass=body["mass"], com=body["com"], inertia=body["inertia"])
    return fb.System([space], q0=fb.FreeFlyer.coordinates(position=(0, 0, 0), quaternion=(0, 0, 0, 1)))


def initial_velocity(omega0, com) -> np.ndarray:
    """v (6,) at φ = 0 (where φ̇ = ω_body): ṗ = −ω × c keeps the centre of mass c at rest."""
    omega0 = np.asarray(omega0, dtype=float)
    return np.concatenate([-np.cross(omega0, com), omega0])


def euler_closed_form(inertia, omega0) -> dict:
    """The torque-free ω_body(t) of principal moments I₁ < I₂ < I₃ from ω_body(0) = ``omega0``
    (module docstring, Landau & Lifshitz §37). Returns E [J], L [N·m·s], m = k², λ [1/s], K, u₀, the period
    T = 4K/λ [s], the times of the sign changes of ω₂ (function ``flips(t_end)``) and ``omega(t)`` (s, 3)."""
    I, w0 = np.array(inertia, dtype=float), np.array(omega0, dtype=float)
    if not (I[0] < I[1] < I[2]):
        raise fb.ModelError(
            f"case 21: the principal moments must increase (I₁ < I₂ < I₃), got {I}; change the T-handle's dimensions"
        )
    E, L2 = 0.5 * I @ w0**2, float((I * w0) @ (I * w0))
    swap = 2.0 * E * I[1] > L2
    if swap:  # ω₁ ∝ dn, ω₃ ∝ cn: the formulas with I₁ and I₃ exchanged
        I, w0 = I[::-1], w0[::-1]
    I1, I2, I3 = I
    lam = np.sqrt((I3 - I2) * (L2 - 2 * E * I1) / (I1 * I2 * I3))
    m = (I2 - I1) * (2 * E * I3 - L2) / ((I3 - I2) * (L2 - 2 * E * I1))
    A = np.sqrt(
        [
            (2 * E * I3 - L2) / (I1 * (I3 - I1)),
            (2 * E * I3 - L2) / (I2 * (I3 - I2)),
            (L2 - 2 * E * I1) / (I3 * (I3 - I1)),
        ]
    )
    s3 = 1.0 if w0[2] >= 0 else -1.0  # dn > 0: the dn component keeps its sign
    s2 = s3  # I₂ω̇₂ = (I₃ − I₁)ω₃ω₁ gives ω₂ the sign of the dn component
    K = float(ellipk(m))
    am0 = np.arctan2(w0[1] / (s2 * A[1]), w0[0] / A[0])  # amplitude: sn u₀ = sin am, cn u₀ = cos am
    u0 = ellipkinc(abs(am0), m) if abs(am0) <= np.pi / 2 else 2 * K - ellipkinc(np.pi - abs(am0), m)
    u0 = float(np.copysign(u0, am0))

    def omega(t):
        sn, cn, dn, _ = ellipj(lam * np.asarray(t, dtype=float) + u0, m)
        w = np.stack([A[0] * cn, s2 * A[1] * sn, s3 * A[2] * dn], axis=-1)
        return w[..., ::-1] if swap else w

    def flips(t_end):
        j = np.arange(np.floor(u0 / (2 * K)) + 1, np.floor((lam * t_end + u0) / (2 * K)) + 1)
        return (2 * K * j - u0) / lam  # sn(λt + u₀) = 0

    return {
        "energy": float(E),
        "momentum": float(np.sqrt(L2)),
        "m": float(m),
        "lam": float(lam),
        "K": K,
        "u0": u0,
        "period": 4 * K / float(lam),
        "swapped": bool(swap),
        "omega": omega,
        "flips": flips,
    }


def motion(asm, res, body) -> dict:
    """Along a run: ω_body (s, 3) [rad/s] (the link's world angular velocity in its own axes), the angular
    momentum about the centre of mass L = R I ω_body (s, 3) [N·m·s], the centre of mass (s, 3) [m] and ‖φ‖ (s,)."""
    tree = asm.trees[0]
    i = tree.link("handle").index
    kins = [tree.kinematics(q, v) for q, v in zip(res.q, res.v)]
    R = np.array([k.R[i] for k in kins])
    w = np.einsum("nji,nj->ni", R, np.array([k.vel[i, 3:] for k in kins]))
    com = np.array([k.p[i] for k in kins]) + R @ body["com"]
    L = np.einsum("nij,nj->ni", R, body["inertia"] * w)
    return {"omega_body": w, "momentum": L, "com": com, "phi_norm": np.linalg.norm(res.q[:, 3:6], axis=1)}


def main(
    out_dir="out/21_tumbling_t_handle",
    density=DENSITY,
    crossbar_length=CROSSBAR_LENGTH,
    crossbar_radius=CROSSBAR_RADIUS,
    stem_length=STEM_LENGTH,
    stem_radius=STEM_RADIUS,
    spin_rate=SPIN_RATE,
    wobble_x=WOBBLE_X,
    wobble_z=WOBBLE_Z,
    t_end=T_END,
    dt=DT,
    record_every=RECORD_EVERY,
    pvd_every=PVD_EVERY,
    context=None,
) -> dict:
    """Run the handle with RK4, compare with the closed form, write the outputs, return the measured numbers."""
    out = Path(out_dir)
    geometry = dict(
        density=density,
        crossbar_length=crossbar_length,
        crossbar_radius=crossbar_radius,
        stem_length=stem_length,
        stem_radius=stem_radius,
    )
    body = t_handle(**geometry)
    asm = build(**geometry).assemble()
    omega0 = np.array([wobble_x, spin_rate, wobble_z])
    closed = euler_closed_form(body["inertia"], omega0)
    v0 = initial_velocity(omega0, body["com"])
    res = fb.simulate(asm, t_end, integrator=fb.RK4(dt=dt), v0=v0, record_every=record_every, context=context)
    res.save(out)
    fb.io.write_link_pvd(out, res, every=pvd_every)
    m, t, E = motion(asm, res, body), res.times, res.histories["energy"]
    w, w_cf, L = m["omega_body"], closed["omega"](res.times), m["momentum"]
    k = np.flatnonzero(w[:-1, 1] * w[1:, 1] < 0)  # the flips: ω₂ changes sign (linear interpolation)
    flips = t[k] - w[k, 1] * (t[k + 1] - t[k]) / (w[k + 1, 1] - w[k, 1])
    columns = {f"omega_{c}": w[:, k] for k, c in enumerate("xyz")}
    columns |= {f"omega_{c}_closed_form": w_cf[:, k] for k, c in enumerate("xyz")} | {"energy": E}
    columns |= {f"L_{c}": L[:, k] for k, c in enumerate("xyz")} | {"L_norm": np.linalg.norm(L, axis=1)}
    columns |= {"phi_norm": m["phi_norm"]} | {f"com_{c}": m["com"][:, k] for k, c in enumerate("xyz")}
    fb.io.write_columns_csv(out / "histories.csv", t, columns)
    xyz = tuple(enumerate("xyz"))
    omega = {f"ω_{c}": (t, w[:, k]) for k, c in xyz}, {f"closed form ω_{c}": (t, w_cf[:, k]) for k, c in xyz}
    L_drift = np.linalg.norm(L - L[0], axis=1) / np.linalg.norm(L[0])
    drift = {"(E − E₀)/E₀": (t, E / E[0] - 1), "‖L − L₀‖/‖L₀‖": (t, L_drift)}
    panels = [
        {
            "ylabel": "ω_body [rad/s]",
            "curves": omega[0],
            "references": omega[1],
            "title": f"T = {closed['period']:.5f} s",
        },
        {"ylabel": "relative drift (RK4) [-]", "curves": drift},
        {"ylabel": "‖φ‖ (chart change at π) [rad]", "curves": {"‖φ‖": (t, m["phi_norm"])}},
    ]
    fb.plots.plot_curves(out / "t_handle.png", panels, columns=3, size=(5.0, 4.0), title="T-handle (Dzhanibekov)")
    summary = {
        "mass": body["mass"],
        "com": body["com"].tolist(),
        "inertia": body["inertia"].tolist(),
        "omega0": omega0.tolist(),
        "closed_form": {key: closed[key] for key in ("energy", "momentum", "m", "lam", "K", "u0", "period", "swapped")},
        "energy_drift": float(np.abs(E - E[0]).max() / E[0]),
        "momentum_drift": float(L_drift.max()),
        "com_drift": float(np.linalg.norm(m["com"] - m["com"][0], axis=1).max()),
        "max_omega_error": float(np.abs(w - w_cf).max()),
        "flips": flips.tolist(),
        "flips_closed_form": closed["flips"](t[-1]).tolist(),
        "chart_changes": int(np.sum(np.linalg.norm(np.diff(res.q[:, 3:6], axis=0), axis=1) > np.pi)),
        "max_phi_norm": float(m["phi_norm"].max()),
        "n_steps": int(np.ceil(t_end / dt - 1e-9)),
    }
    (out / "summary.txt").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


if __name__ == "__main__":
    main()
