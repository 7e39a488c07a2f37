"""Benchmark: flexible dynamics of flexbody against Exudyn at equal size and equal energy drift (issue 18, item 5).

The cantilever of ``bench_flexible_dynamics.py`` (L = 1 m, 0.05 × 0.05, E = 2e9, ν = 0, ρ = 7800, released
at rest from the static deflection of the tip force of ``exudyn_cantilever.section()``, no gravity,
ρ∞ = 1, first period T1 = ``exudyn_cantilever.first_period()``), in both codes at about the same number
of coordinates:

=====  ===========================  ======================================================
size   flexbody (8-node ANCF hexa)   Exudyn ``ANCFCable2D`` (4 coordinates per node)
=====  ===========================  ======================================================
1e3    40×2×2, 1 107 coordinates     276 elements, 1 108 coordinates
1e4    120×4×4, 9 075 coordinates    2 268 elements, 9 076 coordinates
=====  ===========================  ======================================================

**Equal drift.** drift = max|E − E0| / max kinetic energy over the window (``bench_flexible_dynamics._drift``),
from the states sampled every T1/400 from the release in both codes (flexbody at dt > T1/400: at its
steps). Each code runs at the cheapest step of the ladder dt = T1/(100·2^k), k = 0, 1, … that completes
the window with drift ≤ D (``--bound``, default 2e-6). flexbody runs the rungs T1/100 … T1/400 (and on
until one meets the bound) on the whole window and keeps the one with the lowest s/sim s (its
integrator halves a step whose Newton fails: "dt min", "rejected"). Exudyn: a rung
is first probed for ``--probe-steps`` steps, then run on the whole window; after the fixed-step ladder
Exudyn's adaptive step (``adaptive=True``, largest step = flexbody's dt) is run as well, and the
cheaper of the two that meets the bound is Exudyn's result. A run longer than ``--limit`` seconds of
wall time is stopped (Exudyn: by a pre-step user function; the row is then marked "stopped" and its
s/sim s is over the part reached, [0, t reached]).

**Windows.** 1e3: one period T1 (``--window-1e3``), so T/T1 − 1 is measurable. 1e4: 0.1 T1 after the
release (``--window-1e4``), the same for both codes; it includes the first steps after the release, the
hardest for Newton. s/sim s = wall seconds of the time integration / simulated seconds (flexbody: of
``simulate``; Exudyn: of ``SolveDynamic``; neither includes the static pre-deflection).

**Equal accuracy** (the other comparison): Exudyn's 16-element cable at T1/400 over two periods (the
row of ``bench_flexible_dynamics.py``) is measured in the same run.

Exudyn settings (``exudyn_cantilever.run_exudyn_cantilever``): generalized-α with spectral radius 1, full
Newton, EigenSparse; the sparse Cable2D mass matrix for the kinetic energy; the static solver's relative
tolerance 1e-8 at 1e3 and 1e-4 at 1e4 (its residual stalls near 5e-6 of the first one at 2 268 elements).

Every run is its own subprocess (``--threads 1`` by default: numba/BLAS threads of the runs).

Usage: ``python tests/benchmarks/bench_flexible_vs_exudyn.py [--sizes 1e3,1e4] [--bound 2e-6] [--limit 180]``
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from timing import fmt, markdown_table, print_worker_result, run_worker

HERE = Path(__file__).resolve().parent
SIZES = {
    "1e3": {"divisions": (40, 2, 2), "elements": 276, "static_tol": 1e-8},
    "1e4": {"divisions": (120, 4, 4), "elements": 2268, "static_tol": 1e-4},
}
COLUMNS = [
    "case",
    "n_dofs",
    "dt",
    "dt min",
    "steps",
    "rejected",
    "Newton",
    "wall s",
    "s/sim s",
    "t end/T1",
    "drift",
    "T/T1-1",
    "z0/lin",
    "RSS MB",
    "load",
]


def _setup_path():
    sys.path.insert(0, str(HERE))  # exudyn_cantilever, bench_flexible_dynamics
    sys.path.insert(1, str(HERE.parent.parent))  # repository root


# ---------------------------------------------------------------------------- workers
def work_static(divisions, path) -> dict:
    from bench_flexible_dynamics import work_static as static

    return static(divisions, path)


def work_flexbody(divisions, per_period, window, sample_period, q_path) -> dict:
    """flexbody on [0, window·T1] at dt = T1/per_period from the static deflection in ``q_path``."""
    from bench_flexible_dynamics import _drift, _node
    from exudyn_cantilever import first_period, measured_period, section

    import flexbody as fb
    from flexbody.errors import FlexbodyError
    from flexbody.mechanisms.flexible import cantilever

    system = cantilever(divisions=tuple(divisions))
    asm, beam, period = system.assemble(), system.bodies[0], first_period()
    dt = period / per_period
    n_steps = round(window * period / dt)
    every = max(1, round(sample_period / dt))
    t0 = time.perf_counter()
    try:
        res = fb.simulate(
            asm,
            n_steps * dt,
            integrator=fb.GeneralizedAlpha(dt=dt, rho_inf=1.0),
            record_every=every,
            q0=np.load(q_path),
            v0=np.zeros(asm.n_dofs),
        )
    except FlexbodyError as exc:
        return {
            "n_dofs": asm.n_dofs,
            "dt": dt,
            "failed": f"{type(exc).__name__}: {str(exc)[:120]}",
            "wall s": time.perf_counter() - t0,
        }
    wall = time.perf_counter() - t0
    s = res.metadata["statistics"]
    tip = _node(beam, (1.0, 0.0, 0.0))
    z = res.q[:, 3 * tip + 2] - beam.mesh.points[tip, 2]
    t_sim = float(res.times[-1] - res.times[0])
    sec = section()
    return {
        "n_dofs": asm.n_dofs,
        "dt": dt,
        "dt min": float(np.min(np.asarray(res.histories["dt"], float)[1:])),
        "steps": s["steps"],
        "rejected": s["rejected"],
        "Newton": s["newton_iterations"],
        "factor.": s["factorizations"],
        "wall s": wall,
        "s/sim s": wall / t_sim,
        "t end/T1": t_sim / period,
        "drift": _drift(res.histories["energy"], res.histories["kinetic"]),
        "T/T1-1": measured_period(res.times, z) / period - 1.0,
        "z0/lin": float(z[0] / (-sec["F"] / (3.0 * sec["EI"]))),
        "samples": len(res.times),
    }


def work_exudyn(
    n_elements, per_period, t_end, sample_period, adaptive, static_tol, wall_limit, every_step=False
) -> dict:
    """Exudyn's Cable2D cantilever on [0, t_end] (largest step T1/per_period when adaptive)."""
    from bench_flexible_dynamics import _drift
    from exudyn_cantilever import first_period, run_exudyn_cantilever

    period = first_period()
    dt = period / per_period
    t0 = time.perf_counter()
    try:
        r = run_exudyn_cantilever(
            n_elements,
            dt,
            t_end=t_end,
            sample_period=0.0 if every_step else sample_period,
            sparse_mass=not every_step,
            adaptive=adaptive,
            static_tolerance=static_tol,
            wall_limit=wall_limit,
        )
    except RuntimeError as exc:
        return {"n_dofs": 4 * (n_elements + 1), "dt": dt, "failed": str(exc)[:120], "wall s": time.perf_counter() - t0}
    return {
        "n_dofs": r["n_coordinates"],
        "dt": dt,
        "dt min": r["dt_min"],
        "steps": r["n_steps"],
        "rejected": 0,
        "Newton": r["newton_iterations"],
        "factor.": r["jacobian_evaluations"],
        "wall s": r["wall_seconds"],
        "s/sim s": r["seconds_per_simulated_second"],
        "t end/T1": r["t_end"] / period,
        "drift": _drift(r["energy"], r["kinetic"]),
        "stopped": r["stopped"],
        "T/T1-1": r["period_measured"] / period - 1.0,
        "z0/lin": r["tip_deflection_initial"] / r["tip_deflection_linear"],
        "samples": len(r["t"]),
    }


WORKERS = {"static": work_static, "flexbody": work_flexbody, "exudyn": work_exudyn}


def worker_main(spec: str) -> None:
    _setup_path()
    job = json.loads(spec)
    load = os.getloadavg()[0]
    print_worker_result(WORKERS[job.pop("kind")](**job), load)


# ---------------------------------------------------------------------------- driver
def spawn(args, **job) -> dict:
    """Run one job in a fresh interpreter, killed well after Exudyn's own wall limit."""
    return run_worker(
        Path(__file__).resolve(), job, args.threads, timeout=2.0 * args.limit + 120.0, quiet=True, failure_key="failed"
    )


def table(title, rows, columns) -> None:
    markdown_table(
        f"{title} (load {os.getloadavg()[0]:.2f})",
        rows,
        columns,
        lambda r: f"failed after {r.get('wall s', float('nan')):.2f} s: {r['failed']}" if "failed" in r else None,
    )


def _ok(r, bound) -> bool:
    return "failed" not in r and not r.get("stopped") and r["drift"] <= bound


def _dt_label(per_period, adaptive=False) -> str:
    return f"T1/{per_period}" + (" max, adaptive" if adaptive else "")


def flexbody_ladder(args, size, window, sample, q_path, log) -> dict | None:
    """The cheapest (lowest s/sim s) run of dt = T1/(100·2^k) that completes with drift ≤ bound: every rung
    down to T1/400 and on to the first that meets the bound (a rung whose steps were halved can cost more
    than the next one). None if none up to k_max."""
    good = []
    for k in range(args.k_max_flexbody + 1):
        if good and k > 2:
            break
        per = 100 * 2**k
        r = spawn(
            args,
            kind="flexbody",
            divisions=SIZES[size]["divisions"],
            per_period=per,
            window=window,
            sample_period=sample,
            q_path=q_path,
        )
        r.update(case=f"flexbody {size} {SIZES[size]['divisions']}, {_dt_label(per)}", per=per)
        log.append(r)
        if _ok(r, args.bound):
            good.append(r)
    return min(good, key=lambda c: c["s/sim s"]) if good else None


def exudyn_ladder(args, size, window, sample, fb_per, log) -> dict | None:
    """Exudyn's cheapest run with drift ≤ bound: the fixed-step ladder (probe, then the window), then the
    adaptive step (largest step T1/fb_per); the lower s/sim s of the two that qualify."""
    from exudyn_cantilever import first_period

    period, n_el, tol = first_period(), SIZES[size]["elements"], SIZES[size]["static_tol"]
    fixed = None
    for k in range(args.k_max_exudyn + 1):
        per = 100 * 2**k
        dt = period / per
        probe = spawn(
            args,
            kind="exudyn",
            n_elements=n_el,
            per_period=per,
            t_end=args.probe_steps * dt,
            sample_period=args.probe_steps * dt,
            adaptive=False,
            static_tol=tol,
            wall_limit=args.limit,
        )
        if "failed" in probe:
            log.append(dict(probe, case=f"Exudyn {n_el} el, {_dt_label(per)}, {args.probe_steps}-step probe"))
            continue
        r = spawn(
            args,
            kind="exudyn",
            n_elements=n_el,
            per_period=per,
            t_end=window * period,
            sample_period=sample,
            adaptive=False,
            static_tol=tol,
            wall_limit=args.limit,
        )
        r.update(case=f"Exudyn {n_el} el, {_dt_label(per)}" + (", stopped" if r.get("stopped") else ""), per=per)
        log.append(r)
        if _ok(r, args.bound) or r.get("stopped"):
            fixed = r
            break
    r = spawn(
        args,
        kind="exudyn",
        n_elements=n_el,
        per_period=fb_per,
        t_end=window * period,
        sample_period=sample,
        adaptive=True,
        static_tol=tol,
        wall_limit=args.limit,
    )
    r.update(
        case=f"Exudyn {n_el} el, {_dt_label(fb_per, True)}" + (", stopped" if r.get("stopped") else ""), per=fb_per
    )
    log.append(r)
    candidates = [c for c in (fixed, r) if c is not None and (_ok(c, args.bound) or c.get("stopped"))]
    return min(candidates, key=lambda c: c["s/sim s"]) if candidates else None


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--sizes", default="1e3,1e4")
    p.add_argument("--bound", type=float, default=2e-6, help="common drift bound D")
    p.add_argument("--window-1e3", type=float, default=1.0, help="window at 1e3 [T1]")
    p.add_argument("--window-1e4", type=float, default=0.1, help="window at 1e4 [T1]")
    p.add_argument("--probe-steps", type=int, default=20, help="steps of Exudyn's probe of a fixed dt")
    p.add_argument("--k-max-flexbody", type=int, default=6)
    p.add_argument("--k-max-exudyn", type=int, default=12, help="smallest fixed dt: T1/(100·2^k_max)")
    p.add_argument("--limit", type=float, default=180.0, help="wall seconds after which an Exudyn run is stopped")
    p.add_argument("--threads", type=int, default=1, help="numba/BLAS threads of the runs (0: environment)")
    args = p.parse_args()
    if args.worker:
        return worker_main(args.worker)
    _setup_path()
    from exudyn_cantilever import first_period

    period, t_start = first_period(), time.perf_counter()
    sizes = [s.strip() for s in args.sizes.split(",")]
    print(
        f"# flexbody vs Exudyn, cantilever at equal size and equal drift\n\nthreads: {args.threads or 'environment'}, "
        f"cpus: {os.cpu_count()}, T1 = {period:.6f} s, drift bound D = {args.bound:.1e}, "
        f"load at start: {os.getloadavg()[0]:.2f}"
    )
    summary = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            window = args.window_1e3 if size == "1e3" else args.window_1e4
            q_path = os.path.join(tmp, f"q_{size}.npy")
            static = spawn(args, kind="static", divisions=SIZES[size]["divisions"], path=q_path)
            log = []
            fb = flexbody_ladder(args, size, window, period / 400.0, q_path, log)
            fb_per = fb["per"] if fb else 400
            sample = period / 400.0  # flexbody at dt > T1/400: its own steps
            ex = exudyn_ladder(args, size, window, sample, fb_per, log)
            table(
                f"{size}: every run of the ladders, window {window} T1, drift from samples every T1/400 "
                f"(flexbody static deflection {static.get('static s', float('nan')):.2f} s)",
                log,
                COLUMNS,
            )
            summary.append((size, window, fb, ex))
    eq = spawn(
        args,
        kind="exudyn",
        n_elements=16,
        per_period=400,
        t_end=2.0 * period,
        sample_period=0.0,
        adaptive=False,
        static_tol=1e-8,
        wall_limit=None,
        every_step=True,
    )
    eq.update(case="Exudyn 16 el, T1/400, two periods (equal accuracy)")
    table("Equal accuracy: Exudyn's 16-element cable (drift from every step)", [eq], COLUMNS)

    print(
        f"\n### Equal size, equal drift (D = {args.bound:.1e}): chosen runs and ratio (load {os.getloadavg()[0]:.2f})\n"
    )
    print("| size | flexbody | s/sim s | drift | Exudyn | s/sim s | drift | flexbody / Exudyn | target ≤ 10 |")
    print("|---|---|---|---|---|---|---|---|---|")
    for size, window, fb, ex in summary:
        f_txt = f"{fb['case']}, {fb['n_dofs']} dofs" if fb else "no dt met the bound"
        e_txt = f"{ex['case']}, {ex['n_dofs']} dofs" if ex else "no dt met the bound"
        if fb and ex:
            ratio = fb["s/sim s"] / ex["s/sim s"]
            note = ""
            if ex.get("stopped"):  # the wall already spent bounds Exudyn's cost of the whole window
                floor = ex["wall s"] / (window * period)
                note = (
                    f" (Exudyn stopped: s/sim s over [0, t reached]; over the whole window >= {fmt(floor)}, "
                    f"so flexbody / Exudyn <= {fmt(fb['s/sim s'] / floor)})"
                )
            verdict = ("PASS" if ratio <= 10 else "FAIL") + note
            print(
                f"| {size} ({window} T1) | {f_txt} | {fmt(fb['s/sim s'])} | {fmt(fb['drift'])} | {e_txt} | "
                f"{fmt(ex['s/sim s'])} | {fmt(ex['drift'])} | {fmt(ratio)} | {verdict} |"
            )
        else:
            print(
                f"| {size} ({window} T1) | {f_txt} | {fmt(fb['s/sim s']) if fb else 'n/a'} | "
                f"{fmt(fb['drift']) if fb else 'n/a'} | {e_txt} | {fmt(ex['s/sim s']) if ex else 'n/a'} | "
                f"{fmt(ex['drift']) if ex else 'n/a'} | n/a | not measurable |"
            )
    if "failed" not in eq:
        for size, _window, fb, _ex in summary:
            if fb:
                print(
                    f"\nflexbody {size} / Exudyn 16 el (equal accuracy is not equal size): s/sim s "
                    f"{fmt(fb['s/sim s'])} / {fmt(eq['s/sim s'])} = {fmt(fb['s/sim s'] / eq['s/sim s'])}; "
                    f"T/T1-1 {fmt(fb.get('T/T1-1'))} against {fmt(eq['T/T1-1'])}"
                )
    print(f"\nwall time of the benchmark: {time.perf_counter() - t_start:.1f} s")


if __name__ == "__main__":
    main()
