"""Case 04: a particle on a circle under gravity — a pendulum in constrained coordinates [AG Fig. 2].

Problem: a point mass m = 1 kg with Cartesian coordinates q = (x, y) held on the circle
φ(q) = ‖q‖ − ρ = 0, ρ = 1 m [AG-33], gravity g = 9.81 m/s² along −y, released from rest at the angle
θ₀ = 2π/3 from the lowest point (above the horizontal, so that gravity has a normal component at t = 0).
Integrated with RK4 (dt = 1e-3 s) for 10 s with the projection form τ = M a + h − Φᵀλ [AG-25] and
Newton–Raphson position correction after every step [AG-36, AG-37]. [AG] gives no numbers for Fig. 2;
m, ρ, g and θ₀ are our choice.

Expected:

* the motion is the pendulum's: period T = 4 K(k²) √(ρ/g) with k = sin(θ₀/2) and K the complete
  elliptic integral of the first kind (scipy.special.ellipk takes the parameter k²): 2.754090 s for
  θ₀ = 2π/3, 1.373 times the small-angle period 2π√(ρ/g) (the standard large-amplitude pendulum result,
  e.g. Landau & Lifshitz, *Mechanics*, §11, problem 1); tests/test_cases_rigid.py also compares the trajectory
  with θ̈ = −(g/ρ) sin θ integrated independently (DOP853, rtol 1e-12);
* E = T + V is conserved (no dissipation; the correction only removes integration drift);
* the AG decomposition [AG-33..35]: P = ε∥ε∥ᵀ, I − P = ε⊥ε⊥ᵀ with ε∥ = (−sin ϑ, cos ϑ), ε⊥ = (cos ϑ, sin ϑ)
  (ϑ the polar angle of q), the normal acceleration Cq̇ = −(‖q̇‖²/ρ) ε⊥, m P q̈ = f∥ and the constraint
  force 𝓕 = f⊥ + m (‖q̇‖²/ρ) ε⊥. Aghili writes M q̈ + h = f − 𝓕; flexbody writes τ = M a + h − Φᵀλ, so
  Φᵀλ = −𝓕. Here the applied force is gravity, which sits in h, so f = τ − h = (0, −m g). The
  decomposition is evaluated at t = 0 (at rest: 𝓕 = f⊥) and at the recorded step nearest the first
  passage through the lowest point, where Φᵀλ = −𝓕 points up with the string tension m g + m v²/ρ.

Outputs in out_dir: results.npz/.json (Results.save), particle.pvd and scene.vtp (ParaView series of the
particle and its circle; ``flexbody view``), histories.csv, particle_on_circle.png (AG Fig. 2
style: circle, ε∥, ε⊥, f∥, f⊥ and 𝓕 at the two instants, plus θ(t) and the energy error) and summary.txt
(JSON of the returned summary).
"""

import json
from pathlib import Path

import numpy as np

import flexbody as fb

MASS = 1.0  # kg, mass of the particle
RADIUS = 1.0  # m, radius ρ of the circle
GRAVITY = 9.81  # m/s², gravity along −y
THETA0 = 2 * np.pi / 3  # rad, release angle measured from the lowest point (released from rest)
DT = 1e-3  # s, RK4 step
T_END = 10.0  # s, end time


def build(mass=MASS, radius=RADIUS, gravity=GRAVITY, theta0=THETA0) -> fb.System:
    """The particle on the circle, at θ₀ from the lowest point (polar angle θ₀ − π/2)."""
    return fb.mechanisms.particle_on_circle(
        mass=mass, radius=radius, gravity=(0.0, -gravity, 0.0), angle=theta0 - np.pi / 2
    )


def pendulum_period(radius=RADIUS, gravity=GRAVITY, theta0=THETA0) -> float:
    """Exact period [s] of the pendulum of amplitude θ₀: 4 K(sin²(θ₀/2)) √(ρ/g)."""
    from scipy.special import ellipk

    return float(4.0 * ellipk(np.sin(theta0 / 2) ** 2) * np.sqrt(radius / gravity))


def zero_crossings(times, x, xdot) -> np.ndarray:
    """Times [s] where x(t) = 0, from the cubic Hermite interpolant of the recorded x and ẋ."""
    from scipy.interpolate import CubicHermiteSpline

    roots = CubicHermiteSpline(times, x, xdot).roots(extrapolate=False)
    return np.unique(np.round(roots[(roots > times[0]) & (roots < times[-1])], 12))


def aghili_decomposition(asm, t, q, v, tau=None) -> dict:
    """[AG-33..35] at (t, q, v): projector, tangential/normal parts of f = τ − h, and the constraint force.

    Returns a dict of arrays and the residuals of the closed forms (all should be at round-off level).
    """
    tau = np.zeros(asm.n_dofs) if tau is None else np.asarray(tau, dtype=float)
    T = asm.terms(t, q, v)
    res = fb.dynamics.forward(T.M, T.h, tau, T.Phi, T.bias, method="projection")
    P = fb.dynamics.projector(T.Phi).matrix()
    rho = float(np.linalg.norm(q))
    m = float(T.M[0, 0])
    vartheta = float(np.arctan2(q[1], q[0]))  # polar angle ϑ of AG Fig. 2
    e_par = np.array([-np.sin(vartheta), np.cos(vartheta)])
    e_perp = np.array([np.cos(vartheta), np.sin(vartheta)])
    P33 = np.array(
        [
            [np.sin(vartheta) ** 2, -np.sin(vartheta) * np.cos(vartheta)],
            [-np.sin(vartheta) * np.cos(vartheta), np.cos(vartheta) ** 2],
        ]
    )  # [AG-33]
    f = tau - T.h  # applied force incl. gravity (AG's f, h = 0)
    f_par, f_perp = P @ f, f - P @ f
    Cqdot = -(v @ v) / rho * e_perp  # [AG-34, 35]
    F_aghili = f_perp + m * (v @ v) / rho * e_perp  # [AG-35], Aghili's sign
    return {
        "t": float(t),
        "q": q,
        "v": v,
        "theta_polar": vartheta,
        "e_par": e_par,
        "e_perp": e_perp,
        "P": P,
        "f": f,
        "f_par": f_par,
        "f_perp": f_perp,
        "a": res.a,
        "Cqdot": Cqdot,
        "F_aghili": F_aghili,
        "constraint_force": res.constraint_force,
        "lam": res.lam,
        "err_P_eq33": float(np.abs(P - P33).max()),
        "err_P_outer": float(np.abs(P - np.outer(e_par, e_par)).max()),
        "err_tangential": float(np.abs(m * (P @ res.a) - f_par).max()),  # m P q̈ = f∥
        "err_normal_acc": float(np.abs((res.a - P @ res.a) - Cqdot).max()),  # q̈⊥ = C q̇
        "err_force": float(np.abs(res.constraint_force + F_aghili).max()),  # Φᵀλ = −𝓕
    }


def plot(path, res, decompositions, theta, energy_error) -> None:
    fig, axes = fb.plots.subplots(2, 2, figsize=(11, 9))
    rho = float(np.linalg.norm(res.q[0]))
    for ax, d, title in zip(axes[0], decompositions, ("t = 0 (at rest)", "first lowest-point passage")):
        s = np.linspace(0, 2 * np.pi, 200)
        ax.plot(rho * np.cos(s), rho * np.sin(s), "k-", lw=1)
        ax.plot([0, d["q"][0]], [0, d["q"][1]], "k:", lw=1)
        ax.plot(*d["q"], "ko", ms=8)
        scale = 0.6 * rho / max(np.linalg.norm(d["f"]), np.linalg.norm(d["F_aghili"]))
        arrows = [
            (d["e_par"] * 0.3 * rho, "ε∥ (unit)", "0.6", 1),
            (d["e_perp"] * 0.3 * rho, "ε⊥ (unit)", "0.8", 1),
            (d["f"] * scale, "f = τ − h (gravity)", "C0", 2),
            (d["f_par"] * scale, "f∥ = P f", "C1", 2),
            (d["f_perp"] * scale, "f⊥ = (I − P) f", "C2", 2),
            (d["constraint_force"] * scale, r"Φᵀλ = $-\mathcal{F}$ (force on the particle)", "C3", 2),
        ]
        for vec, label, color, lw in arrows:
            ax.annotate("", xy=d["q"] + vec, xytext=d["q"], arrowprops=dict(arrowstyle="->", color=color, lw=lw))
            ax.plot([], [], color=color, lw=lw, label=label)
        ax.set_aspect("equal")
        ax.set_xlim(-1.6 * rho, 1.6 * rho)
        ax.set_ylim(-1.6 * rho, 1.6 * rho)
        ax.set_xlabel("x [m]")
        ax.set_ylabel("y [m]")
        ax.set_title(
            f"AG Fig. 2 decomposition, {title}\nt = {d['t']:.3f} s, |$\\mathcal{{F}}$ + Φᵀλ| = {d['err_force']:.1e} N",
            fontsize=9,
        )
        ax.legend(fontsize=8, loc="upper left")
    ax = axes[1, 0]
    ax.plot(res.times, np.degrees(theta), label="flexbody (RK4 + position correction)")
    ax.set_xlabel("t [s]")
    ax.set_ylabel("θ from the lowest point [deg]")
    ax.legend(fontsize=8)
    ax = axes[1, 1]
    ax.semilogy(res.times, np.maximum(np.abs(energy_error), 1e-18), label="|E − E₀| / max T [-]")
    ax.semilogy(res.times, np.maximum(res.histories["violation"], 1e-18), label="‖φ‖ [m] (0 shown as 1e-18)")
    ax.set_xlabel("t [s]")
    ax.set_ylabel("energy error, violation [-, m]")
    ax.set_title("energy error and constraint violation", fontsize=9)
    ax.legend(fontsize=8)
    fb.plots.save(fig, path, dpi=120)


def main(
    out_dir="out/04_particle_on_circle",
    mass=MASS,
    radius=RADIUS,
    gravity=GRAVITY,
    theta0=THETA0,
    dt=DT,
    t_end=T_END,
    context=None,
) -> dict:
    """Simulate, compare with the closed form and the reference, write the outputs; returns the key numbers."""
    asm = build(mass, radius, gravity, theta0).assemble()
    res = fb.simulate(
        asm,
        t_end,
        integrator=fb.RK4(dt=dt),
        formulation="projection",
        stabilization=fb.PositionCorrection(),
        context=context,
    )
    out = Path(out_dir)
    res.save(out)
    fb.io.write_link_pvd(out, res, every=fb.io.frame_stride(res))  # ParaView series with the circle (scene.vtp)

    x, y = res.q[:, 0], res.q[:, 1]
    theta = np.arctan2(x, -y)  # angle from the lowest point
    crossings = zero_crossings(res.times, x, res.v[:, 0])  # lowest-point passages, every half period
    expected = pendulum_period(radius, gravity, theta0)
    measured = 2.0 * (crossings[-1] - crossings[0]) / (len(crossings) - 1) if len(crossings) >= 2 else np.nan
    E, kinetic = res.histories["energy"], res.histories["kinetic"]
    energy_error = (E - E[0]) / kinetic.max()
    # first passage through the lowest point (nearest recorded step): the fastest instant
    fastest = int(np.argmin(np.abs(res.times - crossings[0]))) if len(crossings) else int(np.argmax(kinetic))
    decompositions = [aghili_decomposition(asm, res.times[k], res.q[k], res.v[k]) for k in (0, fastest)]

    columns = {"x": x, "y": y, "vx": res.v[:, 0], "vy": res.v[:, 1], "theta": theta, "lam": res.histories["lam"][:, 0]}
    columns |= {f"constraint_force_{c}": res.histories["constraint_force"][:, k] for k, c in enumerate("xy")}
    columns |= {key: res.histories[key] for key in ("violation", "velocity_violation", "kinetic", "potential")}
    fb.io.write_columns_csv(out / "histories.csv", res.times, columns | {"energy": E})
    plot(out / "particle_on_circle.png", res, decompositions, theta, energy_error)

    d0, d1 = decompositions
    summary = {
        "period_expected": expected,
        "period_measured": float(measured),
        "period_relative_error": float(abs(measured - expected) / expected),
        "small_angle_period": float(2 * np.pi * np.sqrt(radius / gravity)),
        "n_lowest_point_passages": len(crossings),
        "energy_drift_relative": float(np.abs(energy_error).max()),
        "energy_drift_absolute": float(np.abs(E - E[0]).max()),
        "max_violation": float(res.histories["violation"].max()),
        "max_velocity_violation": float(res.histories["velocity_violation"].max()),
        "t0_f_par": d0["f_par"].tolist(),
        "t0_f_perp": d0["f_perp"].tolist(),
        "t0_constraint_force": d0["constraint_force"].tolist(),
        "t0_F_aghili": d0["F_aghili"].tolist(),
        "t0_lam": d0["lam"].tolist(),
        "t0_max_error": max(d0[k] for k in d0 if k.startswith("err_")),
        "fastest_t": d1["t"],
        "fastest_q": d1["q"].tolist(),
        "fastest_speed": float(np.linalg.norm(d1["v"])),
        "fastest_constraint_force": d1["constraint_force"].tolist(),
        "fastest_F_aghili": d1["F_aghili"].tolist(),
        "fastest_max_error": max(d1[k] for k in d1 if k.startswith("err_")),
        "dt": dt,
        "t_end": t_end,
        "n_steps": int(res.n_steps),
    }
    (out / "summary.txt").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


if __name__ == "__main__":
    main()
