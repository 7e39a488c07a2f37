"""Case 19: Andrews' squeezing mechanism, the IFToMM benchmark A03 (seven bodies, a spring, a motor).

Problem: seven rigid bodies in the plane (Hairer & Wanner, *Solving Ordinary Differential Equations II*,
§VII.7; IFToMM multibody benchmark library, problem A03; the "andrews" problem of the Test Set for IVP
Solvers, Mazzia & Magherini, University of Bari), built by :func:`flexbody.mechanisms.andrews_squeezer` as
four rigid trees closed by three planar pins at the coupler's end P, a linear spring (c₀ = 4530 N/m,
ℓ₀ = 0.07785 m) between point D of body 3 and the fixed point C — an :class:`fb.SpringDamper` — and the
constant driving torque 0.033 N·m on the crank angle β — an :class:`fb.GeneralizedForce`. No gravity; the
mechanism starts at rest in the benchmark's consistent configuration and runs for 0.03 s, in which the
crank turns about 2.5 revolutions.

Expected: the benchmark's angles at t = 0.03 s (Test Set, PSIDE at tolerance 1e-14):
β = 15.81077119629904, Θ = −15.75637105984298, γ = 0.04082224013073101, Φ = −0.5347301163226948,
δ = 0.5244099658805304, Ω = 0.5347301163226948, ε = 1.048080741042263 rad. flexbody's RK4 at 1e-5 s
(the default here) must land within 1e-8 rad of each; generalized-α (second order) at the same step within
1e-3 rad. Independent of the benchmark, the energy balance must close: with no damping the kinetic plus
spring energy grows by exactly the motor's work 0.033 N·m × (β(t) − β(0)).

Outputs in out_dir: results.npz/.json, histories.csv (the seven angles in the benchmark's order, the spring
length and force, energies), squeezer.png (the angles over time, as in Hairer & Wanner's figure),
summary.txt and a ParaView series of the links (<tree>.pvd).
"""

from pathlib import Path

import numpy as np

import flexbody as fb

squeezer = fb.mechanisms.squeezer  # the benchmark's data: reference angles, their names and order

T_END = 0.03  # s, end time (the benchmark's reference is at 0.03 s)
DT = 1e-5  # s, RK4 step
IMPLICIT_DT = 1e-5  # s, generalized-α step of the comparison run (0: skip it)
RECORD_EVERY = 10  # -, record every k-th step


def build() -> fb.System:
    """The mechanism with its spring and motor (:func:`flexbody.mechanisms.andrews_squeezer`)."""
    return fb.mechanisms.andrews_squeezer()


def spring_history(asm, res) -> tuple[np.ndarray, np.ndarray]:
    """Spring length [m] and tension [N] at the recorded states."""
    spring = next(f for f in asm.forces.elements if f.name == "spring")
    lengths = np.array(
        [
            np.linalg.norm(spring.b.position(ws) - spring.a.position(ws))
            for ws in (asm.workspace(t, q) for t, q in zip(res.times, res.q))
        ]
    )
    return lengths, spring.k * (lengths - spring.rest_length)


def plot(path, res) -> None:
    angles = squeezer.benchmark_order(res.q)
    fig, axes = fb.plots.subplots(1, 2, figsize=(11, 4.5))
    for j, name in enumerate(squeezer.SQUEEZER_ANGLE_NAMES):
        ax = axes[0] if j < 2 else axes[1]
        ax.plot(res.times * 1e3, angles[:, j], label=name)
        ax.plot([res.times[-1] * 1e3], [squeezer.REFERENCE_ANGLES[j]], "k+", ms=9)
    for ax, title in zip(axes, ("crank and coupler", "bodies 3 to 7")):
        ax.set_xlabel("t [ms]")
        ax.set_ylabel("angle [rad]")
        ax.set_title(title, fontsize=10)
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
    fig.suptitle("Andrews' squeezer (IFToMM A03); +: the benchmark's angles at 30 ms", fontsize=10)
    fb.plots.save(fig, path, dpi=120)


def main(
    out_dir="out/19_andrews_squeezer",
    t_end=T_END,
    dt=DT,
    implicit_dt=IMPLICIT_DT,
    record_every=RECORD_EVERY,
    context=None,
) -> dict:
    """Run the benchmark with RK4 (and generalized-α for comparison), write the outputs, return key numbers."""
    asm = build().assemble()
    res = fb.simulate(
        asm, t_end, integrator=fb.RK4(dt=dt), consistent_initial=False, record_every=record_every, context=context
    )
    out = Path(out_dir)
    res.save(out)
    fb.io.write_link_pvd(out, res, every=5)  # 61 frames of 0.5 ms
    angles = squeezer.benchmark_order(res.q)
    at_end = abs(res.times[-1] - 0.03) < 1e-12
    error = np.abs(angles[-1] - squeezer.REFERENCE_ANGLES) if at_end else np.full(7, np.nan)
    energy = res.histories["energy"]
    work = squeezer.DRIVING_TORQUE * (angles[:, 0] - angles[0, 0])
    balance = float(np.abs(energy - energy[0] - work).max())
    implicit_error = np.nan
    if implicit_dt and at_end:
        implicit = fb.simulate(
            asm,
            t_end,
            integrator=fb.GeneralizedAlpha(dt=implicit_dt, rho_inf=0.9),
            consistent_initial=False,
            record_every=1000,
        )
        implicit_error = float(np.abs(squeezer.benchmark_order(implicit.q[-1]) - squeezer.REFERENCE_ANGLES).max())
    lengths, tension = spring_history(asm, res)
    columns = {name: angles[:, j] for j, name in enumerate(squeezer.SQUEEZER_ANGLE_NAMES)}
    columns.update(
        {
            "spring_length": lengths,
            "spring_tension": tension,
            "kinetic": res.histories["kinetic"],
            "potential": res.histories["potential"],
            "energy": energy,
            "motor_work": work,
            "violation": res.histories["violation"],
        }
    )
    fb.io.write_columns_csv(out / "histories.csv", res.times, columns)
    plot(out / "squeezer.png", res)
    summary = {
        "angles_at_end": angles[-1].tolist(),
        "reference_angles": squeezer.REFERENCE_ANGLES.tolist(),
        "max_angle_error": float(np.max(error)),
        "angle_errors": error.tolist(),
        "implicit_max_angle_error": implicit_error,
        "max_energy_balance_error": balance,
        "motor_work": float(work[-1]),
        "max_violation": float(res.histories["violation"].max()),
        "spring_length_range": [float(lengths.min()), float(lengths.max())],
        "dt": dt,
        "implicit_dt": implicit_dt,
        "t_end": t_end,
        "n_steps": int(res.n_steps),
    }
    lines = [
        f"Case 19: Andrews' squeezer (IFToMM A03), RK4 dt = {dt} s to t = {t_end} s, position correction",
        "angle      flexbody             benchmark            |difference| [rad]",
        *[
            f"{name:<10} {a:< 20.14f} {r:< 20.14f} {e:.3e}"
            for name, a, r, e in zip(squeezer.SQUEEZER_ANGLE_NAMES, angles[-1], squeezer.REFERENCE_ANGLES, error)
        ],
        f"generalized-alpha dt = {implicit_dt} s: max |difference| = {implicit_error:.3e} rad",
        f"energy balance: max |E(t) - E(0) - motor work| = {balance:.3e} J (motor work {work[-1]:.6f} J)",
        f"spring length {lengths.min():.6f} .. {lengths.max():.6f} m; max |phi| = {summary['max_violation']:.3e} m",
    ]
    (out / "summary.txt").write_text("\n".join(lines) + "\n")
    return summary


if __name__ == "__main__":
    main()
