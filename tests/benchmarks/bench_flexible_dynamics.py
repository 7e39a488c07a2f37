"""Benchmark: implicit generalized-α dynamics of ANCF hexahedral bodies (flexbody), with Exudyn for scale.

1. Cantilever released from its static deflection (L = 1 m, 0.05 × 0.05, E = 2e9, ν = 0, ρ = 7800, tip
   force of ``exudyn_cantilever.section()``: 5 % L linear deflection), ρ∞ = 1, ~1e3/1e4/1e5 coordinates,
   two first-bending periods T1 (``--steps-1e5 N`` cuts the 1e5 run to N steps). Exudyn's ANCFCable2D (4 coordinates
   per node,
   ``exudyn_cantilever.run_exudyn_cantilever``) in the same table, at element counts and steps chosen
   for an energy drift of the same order; the accuracy measure of both is T/T1 − 1.
2. Arm with beam (``arm_with_beam``, q0 = (0.3, −0.5), free motion under gravity, ρ∞ = 1), beam
   0.6 × 0.04 × 0.04 fixed, its divisions (length and section) scaled to ~1e3/1e4/1e5 coordinates.
3. Plate pendulum (``plate_pendulum()``), HHT α = 0.1 and generalized-α ρ∞ = 0.8, dt = 1e-3, 1 s.

Every run is a fresh subprocess (its ``ru_maxrss`` is the run's peak RSS); the static deflection of the
cantilever is computed in its own subprocess and passed on in a file, so the peak is that of the
dynamics. dt is the nominal step; the integrator halves it after a failed Newton solve ("dt min").
Drift = max|E − E0| / max(kinetic energy). "s/Newton" = wall / Newton iterations (all costs included).
``load`` is the 1-minute load average when the run started (the timings assume an otherwise idle machine;
on a shared machine use ``--threads 1``: numba's parallel kernels degrade badly under oversubscription).

Usage: ``python tests/benchmarks/bench_flexible_dynamics.py [--quick] [--sizes 1e3,1e4,1e5]
[--parts cantilever,exudyn,arm,plate] [--threads N] [--steps-1e5 N] [--profile]``
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import timeit
from pathlib import Path

import numpy as np
from timing import markdown_table, print_worker_result, run_worker

HERE = Path(__file__).resolve().parent
CANTILEVER = {"1e3": (40, 2, 2), "1e4": (120, 4, 4), "1e5": (400, 8, 8)}  # element aspect 1, 1.5, 2.5
CANTILEVER_DT = {"1e3": 400, "1e4": 400, "1e5": 1600}  # dt = T1 / value
ARM = {"1e3": (36, 2, 2), "1e4": (100, 5, 5), "1e5": (270, 10, 10)}  # aspect 1.2, 1.3, 1.8
ARM_DT, ARM_T_END = 1e-3, 0.2
EXUDYN = [(16, 400), (32, 400), (64, 1600), (128, 3200)]  # (elements, T1 / dt)
COLUMNS = [
    "case",
    "n_dofs",
    "n_el",
    "dt",
    "dt min",
    "steps",
    "wall s",
    "s/sim s",
    "Newton",
    "s/Newton",
    "factor.",
    "RSS MB",
    "drift",
    "T/T1-1",
    "load",
]


# ---------------------------------------------------------------------------- helpers (worker side)
def _setup_path():
    sys.path.insert(0, str(HERE))  # exudyn_cantilever
    sys.path.insert(1, str(HERE.parent.parent))  # repository root


def _drift(energy, kinetic) -> float:
    energy, kinetic = np.asarray(energy, float), np.asarray(kinetic, float)
    return float(np.max(np.abs(energy - energy[0])) / np.max(kinetic))


def _row(res, asm, n_elements, wall) -> dict:
    """Common columns from a flexbody Results."""
    s = res.metadata["statistics"]
    dts = np.asarray(res.histories["dt"], float)[1:]
    t_sim = float(res.times[-1] - res.times[0])
    return {
        "n_dofs": asm.n_dofs,
        "n_el": n_elements,
        "dt": s["integrator_settings"]["dt"],
        "dt min": float(dts.min()),
        "steps": s["steps"],
        "wall s": wall,
        "s/sim s": wall / t_sim,
        "Newton": s["newton_iterations"],
        "s/Newton": wall / max(1, s["newton_iterations"]),
        "factor.": s["factorizations"],
        "rejected": s["rejected"],
        "drift": _drift(res.histories["energy"], res.histories["kinetic"]),
        "stats": {k: v for k, v in s.items() if isinstance(v, (int, float, str))},
    }


def _simulate(asm, t_end, integrator, steps_estimate, **kw):
    import flexbody as fb

    t0 = time.perf_counter()
    res = fb.simulate(asm, t_end, integrator=integrator, record_every=max(1, steps_estimate // 200), **kw)
    return res, time.perf_counter() - t0


# ---------------------------------------------------------------------------- workers
def work_static(divisions, path) -> dict:
    from exudyn_cantilever import section

    import flexbody as fb
    from flexbody.mechanisms.flexible import cantilever

    beam = cantilever(divisions=tuple(divisions)).bodies[0]
    load = fb.NodalForce(beam, "x1", total=(0.0, 0.0, -section()["F"]))
    t0 = time.perf_counter()
    res = fb.solve_static(fb.System([beam], [fb.Fix(beam, "x0")], loads=[load]), load_steps=1)
    np.save(path, res.q[-1])
    return {"static s": time.perf_counter() - t0}


def work_cantilever(divisions, per_period, steps, q_path) -> dict:
    from exudyn_cantilever import first_period, measured_period, section

    import flexbody as fb
    from flexbody.mechanisms.flexible import cantilever

    system = cantilever(divisions=tuple(divisions))
    asm, beam, period = system.assemble(), system.bodies[0], first_period()
    dt = period / per_period
    t_end = 2.0 * period if steps is None else steps * dt
    res, wall = _simulate(
        asm,
        t_end,
        fb.GeneralizedAlpha(dt=dt, rho_inf=1.0),
        round(t_end / dt),
        q0=np.load(q_path),
        v0=np.zeros(asm.n_dofs),
    )
    tip = _node(beam, (1.0, 0.0, 0.0))
    z = res.q[:, 3 * tip + 2] - beam.mesh.points[tip, 2]
    row, s = _row(res, asm, beam.n_elements, wall), section()
    row.update(
        {
            "T/T1-1": measured_period(res.times, z) / period - 1.0 if res.times[-1] >= period else np.nan,
            "z0/lin": float(z[0] / (-s["F"] / (3.0 * s["EI"]))),
        }
    )
    return row


def work_exudyn(n_elements, per_period) -> dict:
    from exudyn_cantilever import first_period, run_exudyn_cantilever

    period = first_period()
    r = run_exudyn_cantilever(n_elements, period / per_period)
    return {
        "n_dofs": r["n_coordinates"],
        "n_el": n_elements,
        "dt": r["dt"],
        "dt min": r["dt_min"],
        "steps": r["n_steps"],
        "wall s": r["wall_seconds"],
        "s/sim s": r["seconds_per_simulated_second"],
        "Newton": r["newton_iterations"],
        "s/Newton": r["seconds_per_newton_iteration"],
        "factor.": r["jacobian_evaluations"],
        "drift": _drift(r["energy"], r["kinetic"]),
        "T/T1-1": r["period_measured"] / period - 1.0,
        "z0/lin": r["tip_deflection_initial"] / r["tip_deflection_linear"],
    }


def work_arm(divisions, steps) -> dict:
    import flexbody as fb
    from flexbody.mechanisms.flexible import arm_with_beam

    system = arm_with_beam(order=1, divisions=tuple(divisions), q0=(0.3, -0.5))
    asm = system.assemble()
    t_end = ARM_T_END if steps is None else min(ARM_T_END, steps * ARM_DT)
    res, wall = _simulate(
        asm, t_end, fb.GeneralizedAlpha(dt=ARM_DT, rho_inf=1.0), round(t_end / ARM_DT), consistent_initial=True
    )
    row = _row(res, asm, system.bodies[0].n_elements, wall)
    row.update({"violation": float(np.max(res.histories["violation"])), "joints": res.q[-1][:2].tolist()})
    return row


def work_plate(scheme, t_end) -> dict:
    import flexbody as fb
    from flexbody.mechanisms.flexible import plate_pendulum

    system = plate_pendulum()
    asm, plate = system.assemble(), system.bodies[0]
    integrator = (
        fb.GeneralizedAlpha.hht(dt=1e-3, alpha=0.1) if scheme == "hht" else fb.GeneralizedAlpha(dt=1e-3, rho_inf=0.8)
    )
    res, wall = _simulate(asm, t_end, integrator, round(t_end / 1e-3), consistent_initial=True)
    row = _row(res, asm, plate.n_elements, wall)
    s, m = row["stats"], plate.n_elements
    q, v = res.q[-1], res.v[-1]
    corners = {
        f"z far {lab}": float(q[3 * _node(plate, (0.6, 0.3, zc)) + 2]) for lab, zc in (("bottom", 0.0), ("top", 0.01))
    }
    direct = {
        "force us/el direct": 1e6 * _best_of(lambda: plate.internal_force(q, v)) / m,
        "tangent us/el direct": 1e6 * _best_of(lambda: plate.tangent(q, v)) / m,
    }
    row.update(
        corners,
        **direct,
        **{
            "force us/el": 1e6 * s["force_seconds"] / s["force_calls"] / m,
            "jacobian us/el": 1e6 * s["jacobian_seconds"] / s["jacobian_calls"] / m,
        },
    )
    return row


def _node(body, point) -> int:
    return int(np.argmin(np.linalg.norm(body.mesh.points - np.asarray(point), axis=1)))


def _best_of(fn, repeat: int = 5) -> float:
    fn()  # warm-up
    return min(timeit.repeat(fn, number=1, repeat=repeat))


WORKERS = {
    "static": work_static,
    "cantilever": work_cantilever,
    "exudyn": work_exudyn,
    "arm": work_arm,
    "plate": work_plate,
}


def worker_main(spec: str) -> None:
    _setup_path()
    job = json.loads(spec)
    load = os.getloadavg()[0]
    if job.pop("profile", False):
        import cProfile
        import pstats

        prof = cProfile.Profile()
        out = prof.runcall(WORKERS[job.pop("kind")], **job)
        pstats.Stats(prof, stream=sys.stderr).sort_stats("tottime").print_stats(15)
    else:
        out = WORKERS[job.pop("kind")](**job)
    print_worker_result(out, load)


# ---------------------------------------------------------------------------- driver
def spawn(args, **job) -> dict:
    """Run one job in a fresh interpreter; its stderr (profile, logs) is passed through."""
    job.setdefault("profile", False)
    return run_worker(Path(__file__).resolve(), job, args.threads)


def table(title, rows, columns) -> None:
    markdown_table(title, rows, columns, lambda r: f"failed: {r['error']}" if "error" in r else None)


def bench_cantilever(args, sizes) -> list:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            div, path = CANTILEVER[size], os.path.join(tmp, f"q_{size}.npy")
            static = spawn(args, kind="static", divisions=div, path=path)
            steps = (args.steps_1e5 or None) if size == "1e5" else None
            r = spawn(
                args,
                kind="cantilever",
                divisions=div,
                per_period=CANTILEVER_DT[size],
                steps=steps,
                q_path=path,
                profile=args.profile and size == "1e4",
            )
            r.update(
                case=f"flexbody {size} {div}" + (f", {steps} steps only" if steps else ""),
                **{"static s": static.get("static s")},
            )
            rows.append(r)
    return rows


def bench_exudyn(args, quick) -> list:
    return [
        dict(spawn(args, kind="exudyn", n_elements=n, per_period=k), case=f"Exudyn Cable2D {n} el")
        for n, k in (EXUDYN[:1] if quick else EXUDYN)
    ]


def bench_arm(args, sizes) -> list:
    rows = []
    for size in sizes:
        steps = (args.steps_1e5 or None) if size == "1e5" else None
        short = steps is not None and steps * ARM_DT < ARM_T_END - 1e-12
        rows.append(
            dict(
                spawn(args, kind="arm", divisions=ARM[size], steps=steps),
                case=f"arm {size} {ARM[size]}" + (f", {steps} steps only" if short else f", {ARM_T_END} s"),
            )
        )
    table(
        "Arm with beam, free motion under gravity (rho_inf = 1)",
        rows,
        [c for c in COLUMNS if c != "T/T1-1"] + ["violation"],
    )
    return rows


def bench_plate(args) -> None:
    t_end = 0.1 if args.quick else 1.0
    rows = [
        dict(spawn(args, kind="plate", scheme=s, t_end=t_end), case=f"plate {s}, {t_end} s") for s in ("hht", "ga0.8")
    ]
    table("Plate pendulum", rows, [c for c in COLUMNS if c not in ("T/T1-1", "drift")])
    table(
        "Plate pendulum: per-element costs (us) and far corners (m)",
        rows,
        [
            "case",
            "force us/el",
            "jacobian us/el",
            "force us/el direct",
            "tangent us/el direct",
            "z far bottom",
            "z far top",
        ],
    )


def summary(rows) -> None:
    print("\n### Targets (1e5 coordinates)\n")
    big = [r for r in rows if "error" not in r and r.get("n_dofs", 0) >= 50_000 and "Exudyn" not in r["case"]]
    for r in big:
        ok = "PASS" if r["s/Newton"] <= 2.0 else "FAIL"
        print(f"- {r['case']}: 1e5-coordinate Newton iteration <= 2 s: {ok} (measured {r['s/Newton']:.3f} s)")
        ok = "PASS" if r["RSS MB"] <= 4096 else "FAIL"
        print(f"- {r['case']}: memory <= 4 GB: {ok} ({r['RSS MB']:.0f} MB)")
    if not big:
        print("- no 1e5 run in this selection")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--quick", action="store_true", help="1e3 only, one Exudyn row, plate to 0.1 s")
    p.add_argument("--sizes", default="1e3,1e4,1e5", help="comma list of 1e3, 1e4, 1e5")
    p.add_argument("--parts", default="cantilever,exudyn,arm,plate")
    p.add_argument("--threads", type=int, default=0, help="numba/BLAS threads of the runs (0: environment)")
    p.add_argument(
        "--steps-1e5",
        type=int,
        default=0,
        help="at most this many steps at 1e5 (0, the default: the full run, two periods of the "
        "cantilever, about 45 min)",
    )
    p.add_argument("--profile", action="store_true", help="cProfile the 1e4 cantilever run (stderr)")
    args = p.parse_args()
    if args.worker:
        return worker_main(args.worker)
    sizes = ["1e3"] if args.quick else [s.strip() for s in args.sizes.split(",")]
    parts, t0 = args.parts.split(","), time.perf_counter()
    print(
        f"# flexbody flexible dynamics benchmark\n\nthreads: {args.threads or 'environment'}, "
        f"cpus: {os.cpu_count()}, sizes: {sizes}, load at start: {os.getloadavg()[0]:.2f}"
    )
    rows = []
    if "cantilever" in parts or "exudyn" in parts:
        _setup_path()
        from exudyn_cantilever import first_period

        print(f"\nT1 = {first_period():.6f} s (closed form); z0/lin = released tip deflection / linear")
        cant = (bench_cantilever(args, sizes) if "cantilever" in parts else []) + (
            bench_exudyn(args, args.quick) if "exudyn" in parts else []
        )
        table("Cantilever released from the static deflection (rho_inf = 1)", cant, [*COLUMNS, "z0/lin", "static s"])
        rows += cant
    if "arm" in parts:
        rows += bench_arm(args, sizes)
    if "plate" in parts:
        bench_plate(args)
    summary(rows)
    print(f"\nwall time of the benchmark: {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
