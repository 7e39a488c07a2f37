"""Case 05: Aghili's slider-crank driven through its singular configurations [AG Sec. VIII-A, Fig. 4].

Problem: two links of length l = 1 m with point masses m = 1 kg at their distal ends (joint coordinates
q₁, q₂), the end point C held on the line y = 0 by φ = y_C = l(s₁ + s₁₂) = 0 [AG-64, AG-65]; the crank
starts at rest at q₁ = 2π/3 on the branch q₂ = 2π − 2q₁ and is driven by f₁ = 1 N·m (joint B passive:
τ = [1, 0]). Gravity g = 9.81 m/s² along −y: [AG] does not state g for Fig. 4, but h in [AG-66] carries
the m g l terms, so g is taken as 9.81 (our assumption). Integrated for 6 s with RK4 at ΔT = 0.01 s (as
[AG]) in the projection form M_c a = P(τ − h) + C_c q̇ [AG-25] (P = I − A⁺A from a rank-revealing SVD),
with Newton–Raphson position correction after every step [AG-37].

The constraint is singular where A = l[c₁ + c₁₂, c₁₂] = l c₁[2, 1] vanishes, at q₁ = π/2, 3π/2 (mod 2π)
[AG-63]; there the SVD drops the row and P = I (see the seeds' errata on [AG-68]). ``singular_tol`` is
the singular-value floor of the rank log only (σ(A) = √5 l|c₁|): a "rank_drop" event is recorded when
σ < SINGULAR_TOL and a "rank_restored" event when it rises again. With SINGULAR_TOL = 0.1 the band
|q₁ − π/2 (mod π)| < asin(0.1/√5) = 0.0447 rad is wider than the largest crank step q̇₁ΔT ≈ 0.071 rad
in this run, so every crossing lands at least one step inside it (the summary checks this).

Independent reference: on the branch q₂ = 2π − 2q₁ the motion has one degree of freedom θ = q₁ with
q̇ = Λθ̇, Λ = [1, −2]ᵀ [AG-70]; ΛᵀΦᵀ = 0, and Λᵀ(M Λθ̈ + h − τ) = 0 with [AG-66] gives
    m l² (3 − 2 cos 2θ) θ̈ + 2 m l² sin 2θ θ̇² + m g l cos θ = f₁,
whose inertia m l²(3 − 2 cos 2θ) ≥ m l² never vanishes, so nothing happens to the motion at the
singular configurations. tests/test_cases_rigid.py integrates this ODE with DOP853 (rtol 1e-12), with events
at cos θ = 0 giving the reference crossing times; with g = 9.81 they are 1.3525, 2.5423, 3.6276, 4.5266,
5.3713 s.

Expected [AG Fig. 4]: the motion passes smoothly through the singular configurations (A, B), the constraint
force Φᵀλ is smooth (C), while λ jumps at each crossing (D) (λ ~ 1/cos q₁ changes sign: the minimum-norm
multiplier of a force that stays finite while the row A goes through zero). ‖φ‖ < 1e-8 throughout.
Sign convention: [AG] writes M q̈ + h = f − 𝓕 with 𝓕 = Aᵀλ_AG; flexbody writes τ = M a + h − Φᵀλ, so
Φᵀλ = −𝓕 and λ = −λ_AG (the plots show flexbody's Φᵀλ and λ).

Outputs in out_dir: results.npz/.json (Results.save; the rank events are in results.json), histories.csv,
slider_crank.png (Fig. 4 layout: (A) q₁, q₂; (B) q̇₁, q̇₂; (C) Φᵀλ; (D) λ), summary.txt (JSON of the returned
summary) and a ParaView series of the links (<tree>.pvd, every 10th recorded step; ``flexbody view``).
"""

import json
from pathlib import Path

import numpy as np

import flexbody as fb

LENGTH = 1.0  # m, link length l (crank = connecting rod)
MASS = 1.0  # kg, m (point mass at the end of each link)
GRAVITY = 9.81  # m/s², gravity along −y (not stated in [AG]; our assumption)
CRANK0 = 2 * np.pi / 3  # rad, q₁(0); q₂(0) = 2π − 2q₁(0); at rest
TORQUE = 1.0  # N·m, f₁ on the crank; joint B passive
DT = 0.01  # s, RK4 step (as [AG])
T_END = 6.0  # s, end time
SINGULAR_TOL = 0.1  # m, singular-value floor of the rank-event log (σ(A) = √5 l |c₁|)
NEAR = 0.05  # s, steps within this time of a crossing count as "near" it
FAR = 0.1  # s, steps further than this from every crossing count as "away"


def build(length=LENGTH, mass=MASS, gravity=GRAVITY, crank0=CRANK0) -> fb.System:
    """The slider-crank with only the crank actuated (S = [1, 0])."""
    return fb.mechanisms.slider_crank(
        length=length, mass=mass, gravity=(0.0, -gravity, 0.0), crank=crank0, actuated=(0,)
    )


def crossing_times(times, q1, v1, period=np.pi, offset=np.pi / 2) -> np.ndarray:
    """Times [s] at which q₁ passes offset + k·period (either direction), from the cubic Hermite interpolant
    of the recorded q₁ and q̇₁."""
    from scipy.interpolate import CubicHermiteSpline

    out = []
    k_lo, k_hi = np.ceil((q1.min() - offset) / period), np.floor((q1.max() - offset) / period)
    for k in np.arange(k_lo, k_hi + 1):
        spline = CubicHermiteSpline(times, q1 - (offset + k * period), v1)
        roots = spline.roots(extrapolate=False)
        out += list(roots[(roots >= times[0]) & (roots <= times[-1])])
    return np.unique(np.round(np.sort(out), 12))


def plot(path, res, crossings) -> None:
    t = res.times
    F, lam = res.histories["constraint_force"], res.histories["lam"][:, 0]
    fig, axes = fb.plots.subplots(2, 2, figsize=(11, 8), sharex=True)
    panels = [
        (axes[0, 0], "(A) joint angles", "q [rad]", [(res.q[:, 0], "q₁"), (res.q[:, 1], "q₂")]),
        (axes[0, 1], "(B) joint rates", "q̇ [rad/s]", [(res.v[:, 0], "q̇₁"), (res.v[:, 1], "q̇₂")]),
        (axes[1, 0], "(C) constraint force", "Φᵀλ [N·m]", [(F[:, 0], "(Φᵀλ)₁"), (F[:, 1], "(Φᵀλ)₂")]),
        (axes[1, 1], "(D) multiplier", "λ [N]", [(lam, "λ")]),
    ]
    for ax, title, ylabel, curves in panels:
        for y, label in curves:
            ax.plot(t, y, label=label)
        ax.set_ylabel(ylabel)
        for tc in crossings:
            ax.axvline(tc, color="0.7", lw=0.8, ls="--")
        ax.set_title(title, fontsize=10)
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
    axes[1, 1].set_ylim(np.percentile(lam, 1) - 20, np.percentile(lam, 99) + 20)
    for ax in axes[1]:
        ax.set_xlabel("t [s]")
    fig.suptitle("Slider-crank, f₁ = 1 N·m from q₁ = 2π/3 at rest (AG Fig. 4); dashed: q₁ = π/2 mod π", fontsize=10)
    fb.plots.save(fig, path, dpi=120)


def main(
    out_dir="out/05_slider_crank",
    length=LENGTH,
    mass=MASS,
    gravity=GRAVITY,
    crank0=CRANK0,
    torque=TORQUE,
    dt=DT,
    t_end=T_END,
    singular_tol=SINGULAR_TOL,
    near=NEAR,
    far=FAR,
    context=None,
) -> dict:
    """Simulate the Fig. 4 run, write the outputs; returns the key numbers."""
    asm = build(length, mass, gravity, crank0).assemble()
    tau = asm.S.T @ np.array([torque])  # τ = Sᵀ f₁ = [f₁, 0]
    res = fb.simulate(
        asm,
        t_end,
        integrator=fb.RK4(dt=dt),
        tau=tau,
        formulation="projection",
        stabilization=fb.PositionCorrection(),
        singular_tol=singular_tol,
        context=context,
    )
    out = Path(out_dir)
    res.save(out)
    fb.io.write_link_pvd(out, res, every=10)  # ParaView series of the links (crank.pvd)

    t, q1, v1 = res.times, res.q[:, 0], res.v[:, 0]
    crossings = crossing_times(t, q1, v1)
    drops = [e for e in res.events if e["kind"] == "rank_drop"]
    restored = [e for e in res.events if e["kind"] == "rank_restored"]
    lam, F = res.histories["lam"][:, 0], res.histories["constraint_force"]
    # step-to-step changes, attributed to the middle of each step
    t_mid = 0.5 * (t[1:] + t[:-1])
    dist = np.abs(t_mid[:, None] - crossings[None, :]).min(axis=1) if len(crossings) else np.full(len(t_mid), np.inf)
    is_near, is_far = dist < near, dist > far
    dlam, dF = np.abs(np.diff(lam)), np.linalg.norm(np.diff(F, axis=0), axis=1)
    per_crossing = []
    for tc in crossings:
        k = int(np.searchsorted(t, tc))  # t[k-1] < tc <= t[k]
        drop = [e for e in drops if tc - 2 * dt - near <= e["t"] <= tc]
        back = [e for e in restored if tc < e["t"] <= tc + 2 * dt + near]
        per_crossing.append(
            {
                "t": float(tc),
                "q1_over_pi": float(np.interp(tc, t, q1) / np.pi),
                "lam_before": float(lam[k - 1]),
                "lam_after": float(lam[min(k, len(t) - 1)]),
                "force_before": F[k - 1].tolist(),
                "force_after": F[min(k, len(t) - 1)].tolist(),
                "rank_drop_t": drop[0]["t"] if drop else None,
                "rank_restored_t": back[0]["t"] if back else None,
                "drop_labels": drop[0]["redundant_labels"] if drop else None,
                "drop_sigma_min": drop[0]["smallest_singular_value"] if drop else None,
            }
        )
    band = 2 * np.arcsin(min(singular_tol / (np.sqrt(5) * length), 1.0))  # width of the logged band in q₁
    branch = np.abs(res.q[:, 1] - (2 * np.pi - 2 * q1)).max()

    columns = {"q1": q1, "q2": res.q[:, 1], "q1dot": v1, "q2dot": res.v[:, 1]}
    columns |= {f"{key}{j + 1}": res.histories[key][:, j] for key in ("a", "tau") for j in (0, 1)}
    columns |= {"constraint_force_1": F[:, 0], "constraint_force_2": F[:, 1], "lam": lam}
    keys = ("rank", "violation", "velocity_violation", "corrections", "kinetic", "potential", "energy")
    fb.io.write_columns_csv(out / "histories.csv", t, columns | {key: res.histories[key] for key in keys})
    plot(out / "slider_crank.png", res, crossings)

    summary = {
        "crossing_times": [float(x) for x in crossings],
        "crossing_angles_over_pi": [c["q1_over_pi"] for c in per_crossing],
        "rank_drop_times": [e["t"] for e in drops],
        "rank_restored_times": [e["t"] for e in restored],
        "rank_drop_labels": sorted({lab for e in drops for lab in e["redundant_labels"]}),
        "all_crossings_logged": bool(
            len(crossings) > 0
            and all(c["rank_drop_t"] is not None for c in per_crossing)
            and len(drops) == len(crossings)
        ),
        "max_violation": float(res.histories["violation"].max()),
        "max_velocity_violation": float(res.histories["velocity_violation"].max()),
        "max_branch_deviation": float(branch),
        "max_lam_jump_near": float(dlam[is_near].max()) if is_near.any() else 0.0,
        "max_lam_jump_away": float(dlam[is_far].max()) if is_far.any() else 0.0,
        "max_force_jump_near": float(dF[is_near].max()) if is_near.any() else 0.0,
        "max_force_jump_away": float(dF[is_far].max()) if is_far.any() else 0.0,
        "lam_sign_changes_at_crossings": [bool(c["lam_before"] * c["lam_after"] < 0) for c in per_crossing],
        "per_crossing": per_crossing,
        "max_crank_step": float(np.abs(v1).max() * dt),
        "logged_band_width": float(band),
        "max_corrections": int(res.histories["corrections"].max()),
        "dt": dt,
        "t_end": t_end,
        "singular_tol": singular_tol,
        "n_steps": int(res.n_steps),
    }
    (out / "summary.txt").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


if __name__ == "__main__":
    main()
