"""Case 21: a tumbling T-handle in weightlessness (the Dzhanibekov effect) — one link on a free-flyer joint.

Problem: a steel T-handle (ρ = 7850 kg/m³), a crossbar (solid cylinder, length l_b = 0.16 m, radius
r_b = 6 mm) with a stem (l_s = 0.08 m, r_s = 6 mm) standing on the middle of its side, floats without gravity
on a ``fb.FreeFlyer`` (position of the link frame [m], rotation vector φ [rad], R = exp([φ]×)). The link frame
sits at the middle of the crossbar, x along the crossbar, y along the stem (the stem fills
−r_b − l_s ≤ y ≤ −r_b), z normal to the T. With m = ρπr²l for each part, M = m_b + m_s, d = r_b + l_s/2 (the
distance between the two centres) and the reduced mass μ = m_b m_s/M, the centre of mass is at y_c = −m_s d/M
and the inertia about it is diagonal in link axes (a solid cylinder: m r²/2 about its axis, m(3r² + l²)/12
across; parallel axes through μ d²):
    I₁ = I_x = m_b r_b²/2 + m_s(3r_s² + l_s²)/12 + μ d²
    I₂ = I_y = m_b(3r_b² + l_b²)/12 + m_s r_s²/2
    I₃ = I_z = m_b(3r_b² + l_b²)/12 + m_s(3r_s² + l_s²)/12 + μ d²
Here m_b = 0.14205 kg, m_s = 0.07103 kg, y_c = −0.015333 m and (I₁, I₂, I₃) = (1.41269, 3.05597, 4.43031)
× 10⁻⁴ kg·m² (checked against a quadrature over the two cylinders in the test): the stem is the
intermediate axis. The handle starts at φ = 0 spinning at ω₀ = 6 rad/s about the stem with a small wobble,
ω_body(0) = (0.03, 6, 0.05) rad/s, and with its centre of mass at rest (ṗ(0) = −ω × c; the link frame then
circles the centre of mass, so the run also exercises the coupling of the free flyer's translations and
rotations). A spin about the intermediate axis is unstable: the handle flips over, again and again, and
ω_body's middle component changes sign every half period.

Expected, from closed forms nobody here wrote:
1. Torque-free motion conserves the kinetic energy E and the angular momentum about the centre of mass,
   L = R I ω_body in world axes (ω_body = J_r(φ) φ̇, J_r the right Jacobian of SO(3), computed here in numpy
   from its closed form); the centre of mass stays put.
2. Euler's equations I₁ω̇₁ = (I₂ − I₃)ω₂ω₃ (cyclic) with I₁ < I₂ < I₃ and L² > 2E I₂ have the solution
   (Landau & Lifshitz, *Mechanics*, §37; Jacobi elliptic functions of parameter m = k², scipy.special.ellipj)
       ω₁ = A₁ cn(λt + u₀),   ω₂ = ±A₂ sn(λt + u₀),   ω₃ = ±A₃ dn(λt + u₀),
       A₁² = (2E I₃ − L²)/(I₁(I₃ − I₁)),  A₂² = (2E I₃ − L²)/(I₂(I₃ − I₂)),  A₃² = (L² − 2E I₁)/(I₃(I₃ − I₁)),
       λ = √((I₃ − I₂)(L² − 2E I₁)/(I₁I₂I₃)),   k² = (I₂ − I₁)(2E I₃ − L²)/((I₃ − I₂)(L² − 2E I₁)),
   ω₃ keeping the sign of ω₃(0) and ω₂'s amplitude the same sign (from I₂ω̇₂ = (I₃ − I₁)ω₃ω₁), u₀ fixed by
   ω(0): sn u₀ = ω₂(0)/(±A₂), cn u₀ = ω₁(0)/A₁, u₀ = F(am u₀ | k²). For L² < 2E I₂ the roles of I₁ and I₃
   swap (ω₁ ∝ dn, ω₃ ∝ cn, ω₂ carrying the sign of ω₁). ω_body is periodic with period
       T = 4 K(k)/λ,
   K the complete elliptic integral of the first kind, and ω₂ ∝ sn changes sign every T/2: one flip. The same
   k², λ and T are quoted from Landau & Lifshitz in the asteroid-rotation chapter of *Asteroids: From
   Observations to Models* (Lecture Notes in Physics), and the branch L² < 2E I₂ (ω₁ ∝ dn, ω₂ ∝ sn, ω₃ ∝ cn,
   with the I₁ ↔ I₃ exchanged λ and k²) is derived by A. Jadczyk ("The case of m > 1", blog, 2 March 2017,
   following "Taming the T-handle"). The implementation below agrees with a DOP853 integration of Euler's
   equations (rtol 1e-13) over 30 s to 2e-9 rad/s near the separatrix and 7e-13 rad/s away from it, in both
   branches, and the test checks it against Euler's equations by central differences. Here
   E = 5.50137e-3 J, L = 1.83372e-3 N·m·s, k² = 0.9998405315, λ = 3.604573 1/s, K = 5.758316 and
   T = 6.390012334 s. The motion is close to the separatrix ((L² − 2E I₂)/L² = 3.9e-5), where T is very
   sensitive to the invariants: a relative error of 1e-6 in E alone moves T by 0.0144 s.
3. φ stays within ‖φ‖ ≤ π (flexbody moves it to the other chart, φ − 2πφ/‖φ‖, after any step that takes it
   past π), so φ jumps about once per turn while the orientation R = exp([φ]×) stays continuous.

Measured over 21 s (3.3 periods, 7 flips) with RK4 at 1 ms (the default): relative drifts of E 3.2e-11 and
of L 1.4e-10; the centre of mass moves 5.8e-11 m; max |ω_body − closed form| = 2.14e-5 rad/s (3.6e-6 of ω₀;
3.47e-4 at 2 ms and 1.33e-6 at 0.5 ms: RK4's fourth order, a factor 16 per halving); the flips at 1.705426,
4.900432, 8.095438, 11.290444, 14.485450, 17.680456, 20.875462 s lie within 9.9e-7 s of the closed form's,
and the measured period 6.390012000 s (mean of t_{i+2} − t_i, sign changes from local cubics through the
5 ms records) is off T by 3.3e-7 s. 19 chart changes (one per turn, about 1.05 s apart; the same 19 when
every step is recorded), max ‖φ‖ = 3.141554 rad; the orientation turns by at most 0.0350 rad between
records (5 ms), never more than max‖ω‖Δt, and by 0.0347 rad across a chart change.
Generalized-α (ρ∞ = 1, second order) at 1 ms with Newton's tolerance 1e-13: drifts of E 8.2e-6 and of
L 1.28e-5 (3.28e-5, 4.85e-5 at 2 ms: a factor 4.0 and 3.8), which near the separatrix put the flips up to
0.117 s late or early (period 6.349813 s, off by 0.040 s) and ω_body up to 2.5 rad/s off the closed form by
the end. Newton's default tolerance 1e-10 stops on the position increment, and v is updated from that
increment, which leaves a velocity error up to γ/(βh)·1e-10·max(1, ‖q‖∞) ≈ 6e-7 rad/s in every step at
h = 1 ms; that error accumulates beyond the scheme's own (at 1 ms the default gives drifts of E 4.3e-5 and
of L 2.8e-5, worse than at 2 ms), hence tol=1e-13 (as in tests/test_joints.py).

Sources: L. D. Landau and E. M. Lifshitz, *Mechanics*, 3rd ed., §37 (the asymmetric top); the exact solution
as a check of rigid-body integrators as in R. van Zon and J. Schofield, J. Comput. Phys. 225 (2007) 145–164;
the Dzhanibekov effect (V. A. Dzhanibekov, Salyut 7, 1985); the inertia of a solid cylinder and the
parallel-axis theorem.

Outputs in out_dir: results.npz/.json (RK4), generalized_alpha/results.npz/.json, histories.csv (ω_body and
its closed form, energy, L components and ‖L‖, ‖φ‖, centre-of-mass position), t_handle.png (ω_body against
the closed form, the deviation, drifts of E and L, ‖φ‖ with the chart changes), summary.txt and a ParaView
series of the link (space.pvd; the handle's axes are the point data frame_x, frame_y, frame_z at its frame
origin: show them with a Glyph filter).
"""

import time
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
ALPHA_DT = 1e-3  # s, generalized-α step of the comparison run (0: skip it)
RHO_INF = 1.0  # -, generalized-α spectral radius at infinite frequency (1: no numerical damping)
ALPHA_TOL = 1e-13  # -, generalized-α Newton tolerance (relative position increment; module docstring)
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
    return {
        "mass": mass,
        "com": np.array([0.0, -ms * d / mass, 0.0]),
        "inertia": inertia,
        "crossbar_mass": mb,
        "stem_mass": ms,
    }


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


# ------------------------------------------------------------------ SO(3) maps (numpy, closed forms)
def _coefficients(theta):
    """s = sin θ/θ, a = (1 − cos θ)/θ², b = (θ − sin θ)/θ³ (series below θ = 1e-3)."""
    small = theta < 1e-3
    t = np.where(small, 1.0, theta)
    t2 = theta * theta
    s = np.where(small, 1 - t2 / 6, np.sin(t) / t)
    a = np.where(small, 0.5 - t2 / 24, (1 - np.cos(t)) / t**2)
    b = np.where(small, 1.0 / 6 - t2 / 120, (t - np.sin(t)) / t**3)
    return s, a, b


def _skew(w):
    out = np.zeros((*w.shape[:-1], 3, 3))
    out[..., 0, 1], out[..., 0, 2], out[..., 1, 2] = -w[..., 2], w[..., 1], -w[..., 0]
    out[..., 1, 0], out[..., 2, 0], out[..., 2, 1] = w[..., 2], -w[..., 1], w[..., 0]
    return out


def rotation(phi):
    """R = exp([φ]×) = I + s[φ]× + a[φ]×² (Rodrigues) for φ (n, 3): (n, 3, 3)."""
    s, a, _ = _coefficients(np.linalg.norm(phi, axis=-1))
    W = _skew(phi)
    return np.eye(3) + s[:, None, None] * W + a[:, None, None] * W @ W


def body_angular_velocity(phi, phi_dot):
    """ω_body = J_r(φ) φ̇ with J_r = I − a[φ]× + b[φ]×² (n, 3) [rad/s]."""
    _, a, b = _coefficients(np.linalg.norm(phi, axis=-1))
    c = np.cross(phi, phi_dot)
    return phi_dot - a[:, None] * c + b[:, None] * np.cross(phi, c)


# ------------------------------------------------------------------ Euler's equations in closed form
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


# ------------------------------------------------------------------ measurements
def sign_changes(t, y) -> np.ndarray:
    """Times where y changes sign, each from the cubic through the four samples around it."""
    out = []
    for k in np.nonzero(y[:-1] * y[1:] < 0)[0]:
        lo = min(max(k - 1, 0), len(t) - 4)
        tt, yy = t[lo : lo + 4] - t[k], y[lo : lo + 4]
        roots = np.roots(np.polyfit(tt, yy, 3))
        roots = roots[(np.abs(roots.imag) < 1e-12) & (roots.real >= -1e-12) & (roots.real <= t[k + 1] - t[k] + 1e-12)]
        out.append(t[k] + (roots.real[0] if roots.size else -y[k] * (t[k + 1] - t[k]) / (y[k + 1] - y[k])))
    return np.array(out)


def measure(res, body, closed) -> tuple[dict, dict]:
    """Invariants, flips and deviation from the closed form of one run; (numbers, columns for the CSV)."""
    q, v, t = res.q, res.v, res.times
    phi, p = q[:, 3:6], q[:, 0:3]
    R = rotation(phi)
    w = body_angular_velocity(phi, v[:, 3:6])
    I, c, mass = body["inertia"], body["com"], body["mass"]
    L = np.einsum("nij,nj->ni", R, I * w)  # about the centre of mass, world axes
    com = p + R @ c
    v_com = v[:, 0:3] + np.einsum("nij,nj->ni", R, np.cross(w, c))
    energy_check = 0.5 * (I * w * w).sum(axis=1) + 0.5 * mass * (v_com * v_com).sum(axis=1)
    energy = res.histories["energy"]
    w_cf = closed["omega"](t)
    flips = sign_changes(t, w[:, 1])
    expected = closed["flips"](t[-1])
    matched = expected[np.argmin(np.abs(flips[:, None] - expected[None, :]), axis=1)] if flips.size else flips
    periods = flips[2:] - flips[:-2]
    jumps = np.linalg.norm(np.diff(phi, axis=0), axis=1) > np.pi  # a chart change: φ → ≈ −φ
    relative = np.einsum("nji,njk->nik", R[:-1], R[1:])  # R_kᵀ R_{k+1}
    turn = np.arccos(np.clip((np.trace(relative, axis1=1, axis2=2) - 1.0) / 2.0, -1.0, 1.0))
    bound = np.maximum(np.linalg.norm(w[:-1], axis=1), np.linalg.norm(w[1:], axis=1)) * np.diff(t)
    numbers = {
        "energy_drift": float(np.abs(energy - energy[0]).max() / energy[0]),
        "energy_check_drift": float(np.abs(energy_check - closed["energy"]).max() / closed["energy"]),
        "energy_difference": float(np.abs(energy - energy_check).max() / closed["energy"]),
        "momentum_drift": float(np.linalg.norm(L - L[0], axis=1).max() / np.linalg.norm(L[0])),
        "com_drift": float(np.linalg.norm(com - com[0], axis=1).max()),
        "max_omega_error": float(np.abs(w - w_cf).max()),
        "flips": flips.tolist(),
        "flips_closed_form": expected.tolist(),
        "max_flip_time_error": float(np.abs(flips - matched).max()) if flips.size else np.nan,
        "n_flips": int(flips.size),
        "n_flips_closed_form": int(expected.size),
        "period_measured": (
            float(periods.mean()) if periods.size else float(2 * (flips[1] - flips[0])) if flips.size == 2 else np.nan
        ),
        "chart_changes": int(jumps.sum()),
        "max_phi_norm": float(np.linalg.norm(phi, axis=1).max()),
        "max_record_turn": float(turn.max()),
        "max_record_turn_bound": float(bound.max()),
        "max_turn_over_bound": float((turn / bound).max()),
        "max_turn_at_chart_change": float(turn[jumps].max()) if jumps.any() else 0.0,
    }
    numbers["period_error"] = abs(numbers["period_measured"] - closed["period"])
    columns = {
        "omega_x": w[:, 0],
        "omega_y": w[:, 1],
        "omega_z": w[:, 2],
        "omega_x_closed_form": w_cf[:, 0],
        "omega_y_closed_form": w_cf[:, 1],
        "omega_z_closed_form": w_cf[:, 2],
        "energy": energy,
        "L_x": L[:, 0],
        "L_y": L[:, 1],
        "L_z": L[:, 2],
        "L_norm": np.linalg.norm(L, axis=1),
        "phi_norm": np.linalg.norm(phi, axis=1),
        "com_x": com[:, 0],
        "com_y": com[:, 1],
        "com_z": com[:, 2],
    }
    return numbers, columns


def plot(path, t, cols, closed, spin_rate) -> None:
    fig, axes = fb.plots.subplots(2, 2, figsize=(12, 7.5))
    ax = axes[0, 0]
    for k, (name, color) in enumerate(zip("xyz", ("C0", "C1", "C2"))):
        ax.plot(t, cols[f"omega_{name}"], color=color, lw=1.6, label=f"ω_{name} (flexbody, RK4)")
        ax.plot(t, cols[f"omega_{name}_closed_form"], "k--", lw=0.8, label="closed form" if k == 0 else None)
    ax.set_title(f"body angular velocity; T = 4K/λ = {closed['period']:.5f} s", fontsize=10)
    ax.set_ylabel("ω_body [rad/s]")
    ax = axes[0, 1]
    for name, color in zip("xyz", ("C0", "C1", "C2")):
        ax.semilogy(
            t,
            np.abs(cols[f"omega_{name}"] - cols[f"omega_{name}_closed_form"]) + 1e-16,
            color=color,
            lw=0.8,
            label=f"ω_{name}",
        )
    ax.set_title("|ω_body − closed form| (RK4)", fontsize=10)
    ax.set_ylabel("[rad/s]")
    ax = axes[1, 0]
    energy, L = cols["energy"], np.column_stack([cols["L_x"], cols["L_y"], cols["L_z"]])
    ax.plot(t, (energy - energy[0]) / energy[0], label="(E − E₀)/E₀")
    ax.plot(t, np.linalg.norm(L - L[0], axis=1) / np.linalg.norm(L[0]), label="‖L − L₀‖/‖L₀‖")
    ax.set_title("drift of the invariants (RK4)", fontsize=10)
    ax.set_ylabel("relative drift [-]")
    ax = axes[1, 1]
    ax.plot(t, cols["phi_norm"], lw=0.8, label="‖φ‖")
    ax.axhline(np.pi, color="k", lw=0.6, ls=":", label="π")
    ax.set_title("rotation vector: chart changes at ‖φ‖ = π", fontsize=10)
    ax.set_ylabel("‖φ‖ [rad]")
    for ax in axes.flat:
        ax.set_xlabel("t [s]")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(f"T-handle spun at {spin_rate} rad/s about its intermediate axis (Dzhanibekov effect)", fontsize=10)
    fb.plots.save(fig, path, dpi=110)


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
    alpha_dt=ALPHA_DT,
    rho_inf=RHO_INF,
    alpha_tol=ALPHA_TOL,
    record_every=RECORD_EVERY,
    pvd_every=PVD_EVERY,
    context=None,
) -> dict:
    """Run the handle with RK4 (and generalized-α for comparison), write the outputs, return the measured
    numbers."""
    out = Path(out_dir)
    geometry = {
        "density": density,
        "crossbar_length": crossbar_length,
        "crossbar_radius": crossbar_radius,
        "stem_length": stem_length,
        "stem_radius": stem_radius,
    }
    body = t_handle(**geometry)
    asm = build(**geometry).assemble()
    omega0 = np.array([wobble_x, spin_rate, wobble_z])
    v0 = initial_velocity(omega0, body["com"])
    closed = euler_closed_form(body["inertia"], omega0)
    clock = time.perf_counter()
    res = fb.simulate(asm, t_end, integrator=fb.RK4(dt=dt), v0=v0, record_every=record_every, context=context)
    seconds = time.perf_counter() - clock
    rk4, cols = measure(res, body, closed)
    rk4["wall_seconds"], rk4["n_steps"] = seconds, int(np.ceil(t_end / dt - 1e-9))
    res.save(out)
    fb.io.write_columns_csv(out / "histories.csv", res.times, cols)
    fb.io.write_link_pvd(out, res, every=pvd_every)
    plot(out / "t_handle.png", res.times, cols, closed, spin_rate)
    alpha = None
    if alpha_dt:
        settings = fb.GeneralizedAlpha(dt=alpha_dt, rho_inf=rho_inf, tol=alpha_tol)
        clock = time.perf_counter()
        res_a = fb.simulate(asm, t_end, integrator=settings, v0=v0, record_every=record_every, context=context)
        seconds = time.perf_counter() - clock
        alpha, _ = measure(res_a, body, closed)
        alpha["wall_seconds"], alpha["n_steps"] = seconds, int(res_a.metadata["statistics"]["steps"])
        res_a.save(out / "generalized_alpha")
    summary = {
        "mass": body["mass"],
        "com": body["com"].tolist(),
        "inertia": body["inertia"].tolist(),
        "crossbar_mass": body["crossbar_mass"],
        "stem_mass": body["stem_mass"],
        "omega0": omega0.tolist(),
        "closed_form": {key: closed[key] for key in ("energy", "momentum", "m", "lam", "K", "u0", "period", "swapped")},
        "rk4": rk4,
        "alpha": alpha,
        "dt": dt,
        "alpha_dt": alpha_dt,
        "t_end": t_end,
    }
    f = rk4["flips"]
    lines = [
        f"Case 21: tumbling T-handle on a free-flyer joint, RK4 dt = {dt} s to t = {t_end} s",
        f"mass {body['mass']:.5f} kg (crossbar {body['crossbar_mass']:.5f}, stem {body['stem_mass']:.5f}), "
        f"centre of mass y = {body['com'][1]:.5f} m, I = ({', '.join(f'{x:.5e}' for x in body['inertia'])}) kg m^2",
        f"omega_body(0) = {omega0.tolist()} rad/s; E = {closed['energy']:.5e} J, |L| = {closed['momentum']:.5e} N m s, "
        f"k^2 = {closed['m']:.10f}, lambda = {closed['lam']:.6f} 1/s, K = {closed['K']:.6f}"
        f"{' (I1 and I3 swapped: L^2 < 2 E I2)' if closed['swapped'] else ''}",
        f"period: closed form T = 4K/lambda = {closed['period']:.9f} s, measured {rk4['period_measured']:.9f} s "
        f"(|difference| {rk4['period_error']:.2e} s)",
        f"flips (sign changes of omega_y) at {', '.join(f'{x:.6f}' for x in f)} s; closed form "
        f"{', '.join(f'{x:.6f}' for x in rk4['flips_closed_form'])} s; "
        f"max |difference| {rk4['max_flip_time_error']:.2e} s",
        f"max |omega_body - closed form| = {rk4['max_omega_error']:.3e} rad/s "
        f"({rk4['max_omega_error'] / spin_rate:.2e} of omega0)",
        f"relative drifts: energy {rk4['energy_drift']:.2e} (independent E from omega_body "
        f"{rk4['energy_check_drift']:.2e}), |L| about the centre of mass {rk4['momentum_drift']:.2e}; "
        f"centre of mass moved {rk4['com_drift']:.2e} m",
        f"chart changes {rk4['chart_changes']}, max |phi| = {rk4['max_phi_norm']:.6f} rad; "
        "largest turn between records "
        f"{rk4['max_record_turn']:.4f} rad (bound max|omega| dt_record {rk4['max_record_turn_bound']:.4f} rad), "
        f"{rk4['max_turn_at_chart_change']:.4f} rad across a chart change",
        f"RK4: {rk4['n_steps']} steps in {rk4['wall_seconds']:.2f} s",
    ]
    if alpha is not None:
        lines += [
            f"generalized-alpha dt = {alpha_dt} s, rho_inf = {rho_inf}, Newton tol = {alpha_tol}: max |omega_body - "
            f"closed form| = {alpha['max_omega_error']:.3e} rad/s, flips within {alpha['max_flip_time_error']:.2e} s, "
            f"period {alpha['period_measured']:.6f} s (|difference| {alpha['period_error']:.2e} s), drifts: energy "
            f"{alpha['energy_drift']:.2e}, |L| {alpha['momentum_drift']:.2e}; {alpha['chart_changes']} chart changes, "
            f"max |phi| = {alpha['max_phi_norm']:.6f} rad; {alpha['n_steps']} steps in {alpha['wall_seconds']:.2f} s"
        ]
    (out / "summary.txt").write_text("\n".join(lines) + "\n")
    return summary


if __name__ == "__main__":
    main()
