"""Benchmark: long conservative runs hold (issue 21, item 5) — constraint drift and energy drift over 1e5 steps.

The claim under test: "a 1e5-step conservative run keeps the constraint drift ‖φ‖ ≤ 1e-10 (with projection) and
the relative energy drift ≤ 1e-6". Models (public API, no damping, no applied forces τ = 0, gravity on, released
at rest from the builder's q0):

- **four-bar**: ``fb.mechanisms.four_bar()`` — planar closed loop (crank 0.3, coupler 1, rocker 0.8, ground 1 m,
  rods of 1 kg/m, gravity −y), 3 coordinates, 2 rows; a crank–rocker, so the crank angle keeps growing;
- **RSSR**: ``fb.mechanisms.rssr_loop()`` — spatial loop closed by a 3-row point-to-point closure, 5 coordinates;
  its spherical joint is three revolutes (x, y, z), so the joint rates grow without bound near the chart
  singularity q₃ = ±π/2 (gimbal lock) that the free motion passes close to;
- **arm on sphere**: ``fb.mechanisms.spatial_arm_on_sphere()`` — 4-dof spatial arm whose end point is held on a
  sphere (curved surface, 1 row);
- **arm + beam** (rigid–flexible): ``fb.mechanisms.arm_with_beam(divisions=(4, 1, 1))`` — the two-link arm with its
  joints passive (τ = 0) carrying the aluminium beam (0.6 × 0.04 × 0.04 m, E = 7e9 Pa, 4 × 1 × 1 eight-node
  hexahedra, no Kelvin–Voigt damping) on its flange, 62 coordinates, 12 rows. Fewer steps (``--flexible-steps``,
  ``--flexible-rk4-steps``): at ~3–4 ms per step 1e5 steps would take 5–7 minutes per run. RK4 runs it at
  dt = 1e-5 s: flexbody refuses RK4 above the beam's stable step (1.46e-5 s at q0, ``simulate`` says so).

Integrators, at their defaults except where a row says otherwise:

- ``fb.RK4(dt=1e-3)`` (flexible: 1e-5) with the default stabilisation ``fb.PositionCorrection()`` (Newton–Raphson
  projection q ← q − Φ⁺φ until ‖φ‖ ≤ tol = 1e-10, at least one iteration, then the velocity projection
  v ← v − Φ⁺(Φv + φ_t), after every step): "with projection";
- ``fb.GeneralizedAlpha(dt=1e-3, rho_inf=1.0)`` (index-3, constraints enforced by Newton at every step, default
  Newton tolerance 1e-10 on the position increment relative to max(1, ‖q‖∞); no velocity projection).

Definitions (over the recorded states, every ``--record-every``-th step and the last; the histories "violation",
"velocity_violation", "energy", "kinetic" of ``Results.histories``):

- constraint drift = max ‖φ(q)‖₂ (the units of the rows: m here);
- velocity drift = max ‖Φ v + φ_t‖₂ (reported, no bound claimed);
- relative energy drift = max |E(t) − E(0)| / max(|E(0)|, max K(t)), E = K + V (kinetic + gravity potential + strain
  energy), the maxima over the same span; "at 1e4 steps" uses the states with t ≤ 1e4·dt only, "at the end" the
  whole run.

PASS/FAIL compares the whole run with the bounds ‖φ‖ ≤ 1e-10 and energy drift ≤ 1e-6. A run that stops with a
``FlexbodyError`` (e.g. a ``ConvergenceError`` of generalized-α at dt_min) is a FAIL; its drifts are those of the
states recorded up to the failure (``exc.last_good``). Then, for every (model, integrator) that failed, a second
table runs the settings of ``ALTERNATIVES`` (RK4: half the step; generalized-α: ρ∞ = 0.99, Newton tolerance 1e-13
and 20 or 40 times smaller steps), each for the same number of steps as the failed run (so over a shorter simulated
time; ``--same-time``: RK4 at dt/2 over the failed run's simulated time, twice the steps) and says which of them
meet both bounds (``--no-alternatives`` skips it). Nothing is tuned in the first table.

Wall time is that of ``simulate`` alone after a 10-step warm-up of the same model and settings (numba compiled);
informational only (one numba thread; the machine may be shared, the load average is printed).

Run: ``NUMBA_NUM_THREADS=1 python tests/benchmarks/bench_long_run.py [--steps 100000] [--flexible-steps 5000]
[--flexible-rk4-steps 10000] [--record-every 10] [--no-alternatives] [--same-time] [--quick]``; about 10 minutes on
one free core (5 for the first table).
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np

import flexbody as fb

DT_RIGID = 1e-3  # s, every rigid run
DT_FLEXIBLE_ALPHA = 1e-3  # s, generalized-α on the arm with its beam
DT_FLEXIBLE_RK4 = 1e-5  # s, RK4 on the arm with its beam (stable step 1.46e-5 s)
CHECKPOINT = 10_000  # steps, the intermediate drift
VIOLATION_BOUND = 1e-10  # ‖φ‖
ENERGY_BOUND = 1e-6  # relative energy drift

MODELS = {
    "four-bar": fb.mechanisms.four_bar,
    "RSSR": fb.mechanisms.rssr_loop,
    "arm on sphere": fb.mechanisms.spatial_arm_on_sphere,
    "arm + beam 4x1x1": lambda: fb.mechanisms.arm_with_beam(divisions=(4, 1, 1)),
}
FLEXIBLE = {"arm + beam 4x1x1"}

ALTERNATIVES = {
    "RK4": lambda dt: [fb.RK4(dt=dt / 2)],
    "GeneralizedAlpha": lambda dt: [
        fb.GeneralizedAlpha(dt=dt / 20, rho_inf=0.99, tol=1e-13),
        fb.GeneralizedAlpha(dt=dt / 40, rho_inf=0.99, tol=1e-13),
    ],
}
"""Settings tried for a (model, integrator) that failed, as functions of the failed run's dt. They run the same
number of steps as the failed run (a shorter simulated time); with ``--same-time`` RK4 at dt/2 runs twice the
steps, the failed run's simulated time (its drifts after the first ``--steps`` steps are given in the note)."""


def describe(integrator) -> str:
    """The integrator's settings as the row shows them."""
    if isinstance(integrator, fb.RK4):
        return "RK4 + PositionCorrection()"
    text = f"GeneralizedAlpha(rho_inf={integrator.rho_inf:g}"
    return text + (f", tol={integrator.tol:g})" if integrator.tol != 1e-10 else ")")


def drifts(results: fb.Results, t_limit: float) -> dict:
    """Constraint, velocity and relative energy drift over the recorded states with t ≤ ``t_limit``."""
    h = results.histories
    keep = results.times <= t_limit * (1 + 1e-12)
    E, K = h["energy"][keep], h["kinetic"][keep]
    return {
        "violation": float(h["violation"][keep].max()),
        "velocity": float(h["velocity_violation"][keep].max()),
        "energy": float(np.abs(E - E[0]).max() / max(abs(E[0]), K.max())),
    }


def run(model: str, integrator, steps: int, record_every: int, also: int | None = None) -> dict:
    """Simulate ``steps`` steps of ``integrator`` on ``model`` from rest; the drifts at CHECKPOINT and at the end
    (and, given ``also`` < ``steps``, after ``also`` steps, in the note)."""
    asm = MODELS[model]().assemble()
    fb.simulate(asm, 10 * integrator.dt, integrator=integrator)  # warm-up (compiled kernels)
    t_end = steps * integrator.dt
    note = ""
    start = time.perf_counter()
    try:
        res = fb.simulate(asm, t_end, integrator=integrator, record_every=record_every)
    except fb.FlexbodyError as exc:
        res = exc.last_good
        note = f"{type(exc).__name__} at t = {res.times[-1]:.4g} s"
    wall = time.perf_counter() - start
    stats = res.metadata.get("statistics", {})
    failed = bool(note)
    if stats.get("rejected"):
        note = (note + "; " if note else "") + f"{stats['rejected']} rejected steps"
    end = drifts(res, np.inf)
    early = drifts(res, min(CHECKPOINT, steps) * integrator.dt)
    if also is not None and also < steps:
        mid = drifts(res, also * integrator.dt)
        note = (note + "; " if note else "") + (
            f"after {also} steps: ‖φ‖ {mid['violation']:.2e}, energy drift {mid['energy']:.2e}"
        )
    ok = not failed
    return {
        "model": model,
        "integrator": describe(integrator),
        "dt": integrator.dt,
        "steps": steps,
        "simulated": float(res.times[-1]),
        "wall": wall,
        "early": early,
        "end": end,
        "note": note,
        "violation_ok": ok and end["violation"] <= VIOLATION_BOUND,
        "energy_ok": ok and end["energy"] <= ENERGY_BOUND,
        "kind": type(integrator).__name__,
    }


def verdict(flag: bool) -> str:
    return "PASS" if flag else "FAIL"


def print_table(title: str, rows: list) -> None:
    print(f"\n### {title}\n")
    print(
        "| model | integrator | dt [s] | steps | simulated [s] | wall [s] | max ‖φ‖ 1e4 / end | "
        "max ‖Φv+φ_t‖ end | energy drift 1e4 / end | ‖φ‖ ≤ 1e-10 | drift ≤ 1e-6 | note |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        e, f = r["early"], r["end"]
        print(
            f"| {r['model']} | {r['integrator']} | {r['dt']:.3g} | {r['steps']} | {r['simulated']:.4g} | "
            f"{r['wall']:.1f} | {e['violation']:.2e} / {f['violation']:.2e} | {f['velocity']:.2e} | "
            f"{e['energy']:.2e} / {f['energy']:.2e} | {verdict(r['violation_ok'])} | {verdict(r['energy_ok'])} | "
            f"{r['note']} |",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=100_000, help="steps of the rigid runs")
    parser.add_argument("--flexible-steps", type=int, default=5_000, help="generalized-α steps of the arm + beam")
    parser.add_argument("--flexible-rk4-steps", type=int, default=10_000, help="RK4 steps of the arm + beam")
    parser.add_argument("--record-every", type=int, default=10)
    parser.add_argument("--no-alternatives", action="store_true", help="skip the table of other settings")
    parser.add_argument(
        "--same-time",
        action="store_true",
        help="RK4 alternatives over the failed run's simulated time (twice the steps)",
    )
    parser.add_argument("--quick", action="store_true", help="1e4 rigid, 1e3 flexible steps (a smoke test)")
    args = parser.parse_args()
    if args.quick:
        args.steps, args.flexible_steps, args.flexible_rk4_steps = 10_000, 1_000, 1_000
    print(
        f"load average at start: {os.getloadavg()[0]:.2f}; NUMBA_NUM_THREADS={os.environ['NUMBA_NUM_THREADS']}; "
        f"recorded every {args.record_every} steps"
    )
    print(
        "energy drift = max|E(t) − E(0)| / max(|E(0)|, max K(t)) over the recorded states (t ≤ 1e4·dt for the "
        "'1e4' value); ‖φ‖, ‖Φv+φ_t‖ the 2-norms of the position and velocity constraint residuals"
    )
    jobs = []
    for model in MODELS:
        if model in FLEXIBLE:
            jobs += [
                (model, fb.RK4(dt=DT_FLEXIBLE_RK4), args.flexible_rk4_steps),
                (model, fb.GeneralizedAlpha(dt=DT_FLEXIBLE_ALPHA, rho_inf=1.0), args.flexible_steps),
            ]
        else:
            jobs += [
                (model, fb.RK4(dt=DT_RIGID), args.steps),
                (model, fb.GeneralizedAlpha(dt=DT_RIGID, rho_inf=1.0), args.steps),
            ]
    rows = [run(model, integrator, steps, args.record_every) for model, integrator, steps in jobs]
    print_table("Defaults", rows)
    reduced = [r for r in rows if r["steps"] < args.steps]
    for r in reduced:
        print(
            f"(note: {r['model']} with {r['integrator']}: {r['steps']} steps instead of {args.steps}, "
            f"to keep the run short)"
        )
    if not args.no_alternatives:
        failed = [
            (r, integrator) for r, (_, integrator, _) in zip(rows, jobs) if not (r["violation_ok"] and r["energy_ok"])
        ]
        others = []
        for r, integrator in failed:
            for alternative in ALTERNATIVES[r["kind"]](integrator.dt):
                factor = round(integrator.dt / alternative.dt) if args.same_time and r["kind"] == "RK4" else 1
                others.append(run(r["model"], alternative, factor * r["steps"], args.record_every, also=r["steps"]))
        if others:
            print_table("Other settings for the runs that failed", others)
    print(f"\nload average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
