"""Benchmark: reduced-order flexible body (floating frame of reference) against the full ANCF model and Exudyn's
FFRF reduced-order body on the same problems (issue 20, items 3 and 4).

The bar of ``exudyn_reduced.py`` (L = 1 m, 0.05 × 0.05 m, E = 5e8 Pa, ν = 0.3, ρ = 1000 kg/m³, 27-node
hexahedra) clamped by its face x = 0 to a rigid link of zero mass:

- **pendulum** (problem A): the link turns about world y through the origin, gravity −z, released at rest from
  horizontal, 1 s;
- **spin-up** (problem B): the link turns about world z with the prescribed angle θ(t) of Kane, Ryan &
  Banerjee (Ω = 2 rad/s reached at T = 1 s, ``exudyn_reduced.spin_angle``; flexbody: a ``JointDriver``), no
  gravity, 2 s.

Models, each on the mesh ``--divisions`` (one or more, e.g. ``10x1x1 20x2x2``):

- *full*: flexbody's ANCF body attached by its face x = 0 to the link (``AttachNodes``), every node a coordinate;
- *reduced*: ``fb.ReducedBody`` with ``craig_bampton(bar, "x0", N_MODES)`` (the face clamped in the link frame),
  geometric stiffening by the gravity and centrifugal preloads on (flexbody's default for a clamped body);
- *reduced, linear*: the same without geometric stiffening (the content of Exudyn's body);
- *Exudyn*: ``ObjectFFRFreducedOrder`` with the same matrices and the same fixed-interface modes
  (``exudyn_reduced.py``).

All run generalized-α with ρ∞ = 1 at dt = 1e-3 s (flexbody: its default Newton tolerance 1e-10 on the position
increment; Exudyn: its defaults, full Newton). Errors are against *full* on the same mesh: the tip (mean of the
face x = 1 nodes) max |Δx_tip| / L, and the tip's elastic deflection in the link frame (pendulum: its z, spin-up:
its y) max |Δ| / max |deflection of full|. Wall time is that of the time integration alone (flexbody:
``simulate`` after a warm-up run of the same model; Exudyn: ``SolveDynamic``), the median of ``--repeat`` runs
(full: one run). Speed-up = full / model; "wall / Exudyn's" = model / Exudyn's ROM, same problem, same run. One thread
(NUMBA_NUM_THREADS=1, one BLAS thread).

Run: ``python tests/benchmarks/bench_reduced_body.py [--divisions 10x1x1 20x2x2] [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import exudyn_reduced as ex

import flexbody as fb

DT = 1e-3  # s, time step of every model
T_PENDULUM = 1.0  # s, problem A
T_SPIN = 2.0  # s, problem B
N_MODES = ex.N_MODES  # fixed-interface modes


def _drive_rates(t: float) -> tuple[float, float]:
    """θ̇(t) [rad/s] and θ̈(t) [rad/s²] of ``exudyn_reduced.spin_angle``."""
    T, W = ex.SPIN_UP_TIME, ex.OMEGA
    if t >= T:
        return W, 0.0
    return W / T * (t - T / (2 * np.pi) * np.sin(2 * np.pi * t / T)), W / T * (1 - np.cos(2 * np.pi * t / T))


def build(problem: str, model: str, divisions: tuple):
    """(assembled system, the bar (FlexibleBody or ReducedBody)) of ``problem`` ("pendulum", "spin-up") as
    ``model`` ("full", "reduced", "reduced, linear")."""
    bar = ex.fe_model(ex.YOUNG, divisions)["body"]
    gravity = (0.0, 0.0, -ex.GRAVITY) if problem == "pendulum" else (0.0, 0.0, 0.0)
    axis = (0, 1, 0) if problem == "pendulum" else (0, 0, 1)
    tree = fb.RigidTree("hub", gravity=gravity)
    link = tree.add_link("hub", joint=fb.Revolute(axis))
    rows = (
        []
        if problem == "pendulum"
        else [
            fb.JointDriver(link, ex.spin_angle, lambda t: _drive_rates(t)[0], lambda t: _drive_rates(t)[1], name="spin")
        ]
    )
    if model == "full":
        loads = [fb.Gravity(bar, gravity)] if problem == "pendulum" else []
        return fb.System([tree, bar], [fb.AttachNodes(bar, "x0", link), *rows], loads=loads).assemble(), bar
    basis = fb.solvers.craig_bampton(bar, "x0", N_MODES)
    body = fb.ReducedBody("bar", basis, link, geometric_stiffening=model == "reduced")
    return fb.System([tree, body], rows).assemble(), body


def deflection(problem: str, tip: np.ndarray, angle: np.ndarray) -> np.ndarray:
    """The tip's elastic deflection in the link frame (s,) [m]: z′ about y (pendulum), y′ about z (spin-up)."""
    c, s = np.cos(angle), np.sin(angle)
    if problem == "pendulum":
        return s * tip[:, 0] + c * tip[:, 2]
    return -s * tip[:, 0] + c * tip[:, 1]


def run_flexbody(problem: str, model: str, divisions: tuple, repeat: int) -> dict:
    asm, body = build(problem, model, divisions)
    t_end = T_PENDULUM if problem == "pendulum" else T_SPIN
    integrator = fb.GeneralizedAlpha(dt=DT, rho_inf=1.0)
    fb.simulate(asm, 10 * DT, integrator=integrator)  # warm-up (compiled kernels)
    walls, res = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        res = fb.simulate(asm, t_end, integrator=integrator)
        walls.append(time.perf_counter() - t0)
    tip = asm.coordinates(body, res.q, nodes="x1").mean(axis=1)
    stats = res.metadata["statistics"]
    return {
        "times": res.times,
        "tip": tip,
        "deflection": deflection(problem, tip, res.q[:, 0]),
        "wall": statistics.median(walls),
        "steps": stats["steps"],
        "newton": stats["newton_iterations"],
        "coordinates": asm.n_dofs,
    }


def run_exudyn(problem: str, divisions: tuple, repeat: int) -> dict:
    runs = [
        (
            ex.pendulum(N_MODES, DT, T_PENDULUM, divisions=divisions)
            if problem == "pendulum"
            else ex.spin_up(N_MODES, DT, T_SPIN, divisions=divisions)
        )
        for _ in range(repeat)
    ]
    r = runs[-1]
    angle = r["angle"] if problem == "pendulum" else r["theta"]
    return {
        "times": r["times"],
        "tip": r["tip"],
        "deflection": deflection(problem, r["tip"], angle),
        "wall": statistics.median(x["wall_seconds"] for x in runs),
        "steps": r["steps"],
        "newton": r["newton_iterations"],
        "coordinates": 7 + N_MODES,
    }


def errors(run: dict, full: dict) -> tuple[float, float]:
    """(max |Δtip| / L, max |Δ deflection| / max |deflection of full|) on full's times."""
    tip = np.column_stack([np.interp(full["times"], run["times"], run["tip"][:, k]) for k in range(3)])
    d = np.interp(full["times"], run["times"], run["deflection"])
    return (
        float(np.abs(tip - full["tip"]).max() / ex.LENGTH),
        float(np.abs(d - full["deflection"]).max() / np.abs(full["deflection"]).max()),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--divisions", nargs="+", default=["10x1x1", "20x2x2"])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(
        "| problem | mesh (full coordinates) | model | coordinates | wall [s] | Newton it. | speed-up vs full | "
        "wall / Exudyn's | max |Δtip|/L | max |Δdeflection| / peak |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for text in args.divisions:
        divisions = tuple(int(x) for x in text.split("x"))
        for problem in ("pendulum", "spin-up"):
            full = run_flexbody(problem, "full", divisions, 1)
            rows = [("full ANCF", full)]
            rows += [
                (model, run_flexbody(problem, model, divisions, args.repeat))
                for model in ("reduced", "reduced, linear")
            ]
            rows.append(("Exudyn FFRF ROM", run_exudyn(problem, divisions, args.repeat)))
            exudyn = rows[-1][1]["wall"]
            for name, run in rows:
                tip_error, deflection_error = errors(run, full)
                print(
                    f"| {problem} | {text} ({full['coordinates']}) | {name} | {run['coordinates']} | "
                    f"{run['wall']:.3f} | {run['newton']} | {full['wall'] / run['wall']:.1f} | "
                    f"{run['wall'] / exudyn:.2f} | {tip_error:.2e} | {deflection_error:.2e} |",
                    flush=True,
                )
        print(f"(peak deflection of full: see the spin-up/pendulum rows; dt = {DT} s, {N_MODES} modes)")


if __name__ == "__main__":
    main()
