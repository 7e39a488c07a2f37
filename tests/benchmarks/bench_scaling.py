"""Benchmark: how the costs of implicit flexible dynamics grow with the number of coordinates (issue 18, item 6).

The cantilever of ``bench_flexible_dynamics.py`` (``flexbody.mechanisms.flexible.cantilever``, L = 1 m,
0.05 × 0.05, E = 2e9, ν = 0, ρ = 7800, clamped face x = 0) at about 1e3, 3e3, 1e4, 3e4 and 1e5
coordinates (40×2×2, 60×3×3, 120×4×4, 200×6×6, 400×8×8: element aspect 1, 1, 1.5, 1.7, 2.5), at a
bent state (Euler–Bernoulli shape of a tip load, tip deflection 5 % of L: u_z = w(x), u_x = −z w′(x)),
with the generalized-α iteration matrix of dt = T1/400, ρ∞ = 1. Per size, in its own subprocess with one
numba/BLAS thread (``--threads 1``, set before the imports), the median of a few repeats of:

- ``force``: the internal force k(q, v) of the body (``FlexiblePart.internal_force``);
- ``force+tangent``: force and tangent ∂k/∂q assembled as CSR (``FlexiblePart.jacobians``);
- ``factor``: one factorisation of the iteration matrix M + β′h²K on the integrator's path
  (``SaddlePointSolver.factor``: elimination of the clamped coordinates, TᵀAT, symmetric part, CHOLMOD
  with the symbolic analysis kept); ``factor 1st`` is the first call (with CHOLMOD's symbolic analysis);
  ``cholmod`` the numeric CHOLMOD factorisation alone (same reduced matrix, analysis kept);
- ``solve``: one saddle-point solve with the kept factor (``SaddlePointSolver.solve``);
- ``Newton kept``: one iteration with a kept factor (residual + solve), the integrator's usual iteration;
- ``Newton full``: one full Newton iteration (residual, iteration matrix with force+tangent, factorisation,
  solve), exactly as ``AlphaStepper`` does it when it refreshes the factor (each repeat at a slightly
  different state, so nothing is taken from the evaluation cache);

and the process peak RSS (``ru_maxrss``) after all of them. The exponent p of t ∝ n^p of each quantity is
fitted by least squares on log t against log n over all sizes. Targets at 1e5 coordinates (issue 18):
a full Newton iteration ≤ 2 s, peak memory ≤ 4 GB.

Usage: ``python tests/benchmarks/bench_scaling.py [--sizes 1e3,3e3,1e4,3e4,1e5] [--threads 1]``
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SIZES = {"1e3": (40, 2, 2), "3e3": (60, 3, 3), "1e4": (120, 4, 4), "3e4": (200, 6, 6), "1e5": (400, 8, 8)}
QUANTITIES = ["force", "force+tangent", "factor 1st", "factor", "cholmod", "solve", "Newton kept", "Newton full"]


def work(divisions, big: bool) -> dict:
    import scipy.sparse as sp

    sys.path.insert(0, str(HERE))
    sys.path.insert(1, str(HERE.parent.parent))
    from exudyn_cantilever import first_period
    from timing import median_seconds

    import flexbody as fb
    from flexbody.linalg.sparse_factor import SparseFactor
    from flexbody.mechanisms.flexible import cantilever
    from flexbody.solvers.generalized_alpha import AlphaStepper

    t_build = time.perf_counter()
    system = cantilever(divisions=tuple(divisions))
    asm, beam = system.assemble(), system.bodies[0]
    n = asm.n_dofs
    X = beam.mesh.points
    L, d = 1.0, 0.05 * 1.0  # tip deflection 5 % of L
    x, z = X[:, 0], X[:, 2]
    w = -d * (3.0 * x**2 * L - x**3) / (2.0 * L**3)
    dw = -d * (6.0 * x * L - 3.0 * x**2) / (2.0 * L**3)
    u = np.zeros_like(X)
    u[:, 0], u[:, 2] = -z * dw, w
    q = (X + u).reshape(-1)
    v = np.zeros(n)
    fs = asm.flexible.slice
    build = time.perf_counter() - t_build
    rep = 2 if big else 3
    out = {"n_dofs": n, "n_el": beam.n_elements, "build s": build}

    part = asm.flexible
    out["force"] = median_seconds(lambda: part.internal_force(q[fs], v[fs]), 3 if big else 5)
    out["force+tangent"] = median_seconds(lambda: part.jacobians(q[fs], v[fs]), rep)

    dt = first_period() / 400.0
    stepper = AlphaStepper(asm, fb.GeneralizedAlpha(dt=dt, rho_inf=1.0))
    bp, gp = stepper.bp, stepper.gp
    t1, qdd, lam, tau = dt, np.zeros(n), np.zeros(asm.n_constraints), np.zeros(n)
    ev = asm.workspace(t1, q, v)
    A_r, A_f = stepper.residual.iteration_matrix(ev, qdd, lam, c_m=1.0, c_v=gp * dt, c_q=bp * dt * dt)
    Phi = sp.csr_matrix(ev.constraint_rows()[1])
    out["nnz A"] = int(A_f.nnz)
    solver = stepper.solver
    t0 = time.perf_counter()
    solver.factor(A_r, A_f, Phi)
    out["factor 1st"] = time.perf_counter() - t0
    out["factor"] = median_seconds(lambda: solver.factor(A_r, A_f, Phi), rep, warm=False)
    out["method"] = solver.method
    K = (solver.T.T @ (sp.csr_matrix(A_f) @ solver.T)).tocsc()  # the reduced matrix (no rigid part here)
    K_sym = ((K + K.T) * 0.5).tocsc()
    K_sym.sort_indices()
    chol = SparseFactor()
    out["cholmod"] = median_seconds(lambda: chol.factor(K_sym, lu_fallback=False), rep)
    out["n reduced"] = int(K.shape[0])

    r, phi, _Phi_e = stepper.residual.evaluate(ev, qdd, lam, tau)
    out["solve"] = median_seconds(lambda: solver.solve(-r, -phi / (bp * dt * dt)), 5)

    counter = [0]

    def newton(full: bool):
        counter[0] += 1
        q_i = q + 1e-12 * counter[0]  # a new state, as a Newton iteration's
        ws = asm.workspace(t1, q_i, v)
        if full:  # the matrix first: its pass gives the internal force the residual reads
            stepper._factor(ws, qdd, lam, dt)
        r, phi, _ = stepper.residual.evaluate(ws, qdd, lam, tau)
        return solver.solve(-r, -phi / (bp * dt * dt))

    out["Newton kept"] = median_seconds(lambda: newton(False), 3 if big else 5)
    out["Newton full"] = median_seconds(lambda: newton(True), rep, warm=False)  # the factor pattern is analysed already
    out["factorizations"] = solver.factorizations
    out["RSS MB"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    return out


def spawn(args, **job) -> dict:
    env = dict(os.environ)
    if args.threads:
        for key in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            env[key] = str(args.threads)
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--worker", json.dumps(job)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        check=False,
    )
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    return json.loads(lines[-1][7:]) if lines and not proc.returncode else {"error": f"exit {proc.returncode}"}


def fit_exponent(n, t) -> float:
    """p of t ∝ n^p, least squares on log t = p log n + c."""
    return float(np.polyfit(np.log(n), np.log(t), 1)[0])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--sizes", default="1e3,3e3,1e4,3e4,1e5")
    p.add_argument("--threads", type=int, default=1, help="numba/BLAS threads of the runs (0: environment)")
    args = p.parse_args()
    if args.worker:
        job = json.loads(args.worker)
        load = os.getloadavg()[0]
        out = work(**job)
        out["load"] = load
        print("RESULT " + json.dumps(out, default=float), flush=True)
        return
    t_start = time.perf_counter()
    sizes = [s.strip() for s in args.sizes.split(",")]
    print(
        f"# flexbody scaling of implicit flexible dynamics (cantilever)\n\nthreads: {args.threads or 'environment'}, "
        f"cpus: {os.cpu_count()}, load at start: {os.getloadavg()[0]:.2f}"
    )
    rows = []
    for size in sizes:
        r = spawn(args, divisions=SIZES[size], big=size == "1e5")
        r.update(case=f"{size} {SIZES[size]}")
        rows.append(r)
        print(f"- {r['case']}: done (load {os.getloadavg()[0]:.2f})", flush=True)
    ok = [r for r in rows if "error" not in r]
    print(f"\n### Median wall time per call, seconds (1 thread; load {os.getloadavg()[0]:.2f})\n")
    cols = ["case", "n_dofs", "n_el", "nnz A", *QUANTITIES, "RSS MB", "load"]
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for r in rows:
        if "error" in r:
            print(f"| {r['case']} | failed: {r['error']} |")
            continue
        cells = [r["case"], str(r["n_dofs"]), str(r["n_el"]), str(r["nnz A"])]
        cells += [f"{r[c]:.4g}" for c in QUANTITIES] + [f"{r['RSS MB']:.0f}", f"{r['load']:.2f}"]
        print("| " + " | ".join(cells) + " |")
    if len(ok) >= 2:
        n = np.array([r["n_dofs"] for r in ok], float)
        print("\n### Fitted exponents p of t ∝ n^p (least squares, log-log, all sizes above)\n")
        print("| quantity | p | t at the largest n, s |")
        print("|---|---|---|")
        for c in [*QUANTITIES, "RSS MB"]:
            t = np.array([r[c] for r in ok], float)
            print(f"| {c} | {fit_exponent(n, t):.2f} | {t[-1]:.4g} |")
    big = [r for r in ok if r["n_dofs"] >= 50_000]
    print("\n### Targets at 1e5 coordinates\n")
    for r in big:
        print(
            f"- {r['case']} ({r['n_dofs']} coordinates): full Newton iteration <= 2 s: "
            f"{'PASS' if r['Newton full'] <= 2.0 else 'FAIL'} ({r['Newton full']:.3f} s)"
        )
        print(f"- {r['case']}: peak RSS <= 4 GB: {'PASS' if r['RSS MB'] <= 4096 else 'FAIL'} ({r['RSS MB']:.0f} MB)")
    if not big:
        print("- no 1e5 size in this selection")
    print(f"\nwall time of the benchmark: {time.perf_counter() - t_start:.1f} s")


if __name__ == "__main__":
    main()
