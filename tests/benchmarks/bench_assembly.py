"""Benchmark: internal-force and tangent assembly throughput of flexbody vs scikit-fem.

Elements per second for k(q) = ∫ P(F) : ∇N dV and its tangent dk/dq, for 8-node and 27-node hexahedra,
St. Venant–Kirchhoff and compressible Neo-Hookean, on box meshes of about 1e3, 1e4 and 1e5 elements.
scikit-fem assembles the same residual and tangent with its own ``LinearForm`` / ``BilinearForm``
(``tests/skfem_oracle.py``, the oracle of ``tests/test_skfem_crosscheck.py``) on a prebuilt ``Basis``
with the same Gauss rule; the ``Basis`` build time is reported separately.

Timing: each call is run once as a warm-up (numba compilation for flexbody), then best-of-N wall time.
A scikit-fem call whose warm-up already exceeds ``--slow-call`` seconds is not repeated (skfem has no
JIT, so its first call is representative) and its warm-up time is reported. A scikit-fem cell is skipped
when the estimated time (linear extrapolation from the previous size) exceeds ``--skfem-timeout`` or
its Basis would need more than half the available memory.

Usage::

    python tests/benchmarks/bench_assembly.py [--quick] [--max-elements N] [--repeat N]
                                              [--skfem-threads T] [--skfem-timeout S]
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # tests/ (skfem_oracle)
from skfem_oracle import Material, SkfemHyperelastic, box_mesh, smooth_deformation, vector_basis  # noqa: E402

try:
    import flexbody as fb

    FB_ERROR = None if hasattr(fb, "FlexibleBody") else "flexbody.FlexibleBody missing"
except Exception as exc:  # report, do not crash the skfem half
    sys.path.insert(0, str(HERE.parent.parent))
    try:
        import flexbody as fb

        FB_ERROR = None
    except Exception:
        fb, FB_ERROR = None, f"flexbody not importable: {exc}"

YOUNG, POISSON, DENSITY = 2.0e5, 0.3, 1000.0
SIZES = {1_000: (10, 10, 10), 10_000: (20, 20, 25), 100_000: (40, 50, 50)}
ELEMENTS = {"H8": 1, "H27": 2}
MATERIALS = {"svk": "StVenantKirchhoff", "neohookean": "NeoHookean"}


def best_of(fn, repeat: int, slow_call: float | None = None, min_total: float = 1.0, max_repeat: int = 50) -> float:
    """Best wall time after one warm-up call: at least ``repeat`` calls, more (up to ``max_repeat``)
    while their total is below ``min_total`` seconds, so fast calls are not timed from a few samples.

    If ``slow_call`` is given and the warm-up takes longer, the warm-up time is returned.
    """
    t0 = time.perf_counter()
    fn()
    first = time.perf_counter() - t0
    if slow_call is not None and first > slow_call:
        return first
    times = []
    while len(times) < repeat or (sum(times) < min_total and len(times) < max_repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def available_memory() -> float:
    """MemAvailable in bytes (Linux), or +inf when unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return float(line.split()[1]) * 1024
    except OSError:
        pass
    return np.inf


def skfem_memory_estimate(order: int, n_elements: int) -> float:
    """Bytes for skfem's vector Basis (value + gradient per basis function) plus the tangent's COO data."""
    n_bfun, n_qp = 3 * (8 if order == 1 else 27), (order + 1) ** 3
    basis = n_bfun * n_elements * n_qp * 12 * 8
    coo = n_bfun**2 * n_elements * (8 + 4 + 4)
    return basis + coo


def deformation(points: np.ndarray) -> np.ndarray:
    """Smooth moderately large deformation (positions, (n, 3)); small noise relative to the element size."""
    return smooth_deformation(points, amplitude=0.1, noise=0.0, seed=0)


def fmt_rate(x) -> str:
    return f"{x:.3g}" if isinstance(x, float) else str(x)


def run_flexbody(order, kind, divisions, repeat):
    """(force el/s, tangent el/s) or (reason, reason)."""
    if FB_ERROR:
        return "n/a", "n/a"
    mesh = fb.mesh.box(size=(1.0, 1.0, 1.0), divisions=divisions, order=order)
    material = getattr(fb, MATERIALS[kind])(young=YOUNG, poisson=POISSON, density=DENSITY)
    body = fb.FlexibleBody("bench", mesh, material, locking=None)  # plain, as scikit-fem's elements
    q = deformation(np.asarray(mesh.points)).ravel()
    m = body.n_elements
    t_force = best_of(lambda: body.internal_force(q), repeat)
    t_tangent = best_of(lambda: body.tangent(q), repeat)
    return m / t_force, m / t_tangent


def run_skfem(order, kind, divisions, repeat, args, estimate):
    """(basis build s, force el/s, tangent el/s); entries are strings when skipped."""
    m = int(np.prod(divisions))
    need = skfem_memory_estimate(order, m)
    if need > 0.5 * available_memory():
        reason = f"skipped (needs ~{need / 2**30:.0f} GB)"
        return reason, reason, reason
    t0 = time.perf_counter()
    basis = vector_basis(box_mesh((0, 0, 0), (1, 1, 1), divisions, order), order)
    t_basis = time.perf_counter() - t0
    oracle = SkfemHyperelastic(basis, Material(kind, YOUNG, POISSON), nthreads=args.skfem_threads)
    comps = basis.split_indices()
    pts = basis.doflocs[:, comps[0]].T
    u = np.empty(basis.N)
    for c, dofs in enumerate(comps):
        u[dofs] = (deformation(pts) - pts)[:, c]
    out = []
    for what, fn in (("force", lambda: oracle.residual(u)), ("tangent", lambda: oracle.tangent(u))):
        guess = estimate.get(what)
        if guess is not None and guess * m > args.skfem_timeout:
            out.append(f"skipped (est. {guess * m:.0f} s/call)")
            continue
        t = best_of(fn, repeat, slow_call=args.slow_call)
        estimate[what] = t / m
        out.append(m / t)
    return t_basis, out[0], out[1]


def ratio(a, b) -> str:
    return f"{a / b:.1f}x" if isinstance(a, float) and isinstance(b, float) else "-"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="only ~1e3 and ~1e4 elements")
    p.add_argument("--max-elements", type=int, default=None, help="largest mesh size to run")
    p.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="at least this many timed calls after the warm-up (more while < 1 s in total); best of",
    )
    p.add_argument(
        "--skfem-threads",
        type=int,
        default=0,
        help="BilinearForm(nthreads=...) for skfem's tangent (0 = skfem's default serial loop)",
    )
    p.add_argument("--skfem-timeout", type=float, default=60.0, help="skip skfem calls estimated above (s)")
    p.add_argument(
        "--slow-call", type=float, default=5.0, help="do not repeat a skfem call whose warm-up took longer (s)"
    )
    p.add_argument("--elements", nargs="+", default=list(ELEMENTS), choices=list(ELEMENTS))
    p.add_argument("--materials", nargs="+", default=list(MATERIALS), choices=list(MATERIALS))
    args = p.parse_args(argv)

    import numba
    import scipy
    import skfem

    sizes = [
        n for n in SIZES if not (args.quick and n > 10_000) and (args.max_elements is None or n <= args.max_elements)
    ]
    print(
        f"numba threads: {numba.get_num_threads()}   CPUs: {os.cpu_count()} "
        f"(affinity {len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else '?'})   "
        f"skfem {skfem.__version__} (tangent nthreads={args.skfem_threads})   numpy {np.__version__}   "
        f"scipy {scipy.__version__}   numba {numba.__version__}"
    )
    if FB_ERROR:
        print(f"flexbody: {FB_ERROR}")
    print(f"best of >= {args.repeat} calls (>= 1 s or 50 calls) after a warm-up; meshes: unit box, sizes {sizes}\n")

    header = (
        "element",
        "material",
        "n_elements",
        "flexbody force [el/s]",
        "skfem force [el/s]",
        "ratio",
        "flexbody tangent [el/s]",
        "skfem tangent [el/s]",
        "ratio",
    )
    widths = (7, 10, 10, 21, 26, 7, 23, 26, 7)
    line = lambda cells: "  ".join(f"{c!s:>{w}}" for c, w in zip(cells, widths))  # noqa: E731
    print(line(header))
    print(line(["-" * w for w in widths]))
    rows, basis_times = [], []
    for el, order in ELEMENTS.items():
        if el not in args.elements:
            continue
        for kind in args.materials:
            estimate = {}
            for n in sizes:
                divisions = SIZES[n]
                t_basis, sk_force, sk_tangent = run_skfem(order, kind, divisions, args.repeat, args, estimate)
                gc.collect()  # free skfem's Basis before timing flexbody
                fb_force, fb_tangent = run_flexbody(order, kind, divisions, args.repeat)
                gc.collect()
                row = (el, kind, n, fb_force, sk_force, fb_tangent, sk_tangent)
                rows.append(row)
                basis_times.append((el, kind, n, t_basis))
                print(
                    line(
                        [
                            el,
                            kind,
                            n,
                            fmt_rate(fb_force),
                            fmt_rate(sk_force),
                            ratio(fb_force, sk_force),
                            fmt_rate(fb_tangent),
                            fmt_rate(sk_tangent),
                            ratio(fb_tangent, sk_tangent),
                        ]
                    ),
                    flush=True,
                )

    print("\nskfem Basis build (not included above) [s]:")
    for el, kind, n, t in basis_times:
        if kind == args.materials[0]:
            print(f"  {el:>4} n_elements={n:>7}: {t if isinstance(t, str) else f'{t:.2f}'}")

    print("\nTargets:")
    h8 = [r for r in rows if r[0] == "H8" and r[1] == "svk"]
    measured = [r for r in h8 if isinstance(r[3], float)]
    if measured:
        r = measured[-1]
        print(
            f"  {'H8 SVK internal force >= 2e6 el/s':<37} (n={r[2]}): {r[3]:.3g}  {'PASS' if r[3] >= 2e6 else 'MISS'}"
        )
    else:
        print("  H8 SVK internal force >= 2e6 el/s: not measured")
    for label, fi, si, target in (("internal force", 3, 4, 10.0), ("tangent", 5, 6, 5.0)):
        both = [r for r in h8 if isinstance(r[fi], float) and isinstance(r[si], float)]
        if both:
            r = both[-1]
            x = r[fi] / r[si]
            print(
                f"  {'H8 SVK ' + label + f' >= {target:.0f}x skfem':<37} (n={r[2]}): {x:.1f}x  "
                f"{'PASS' if x >= target else 'MISS'}"
            )
        else:
            print(f"  H8 SVK {label} >= {target:.0f}x skfem: not measured")
    all_t = [(r[5] / r[6], r) for r in rows if isinstance(r[5], float) and isinstance(r[6], float)]
    if all_t:
        x, r = min(all_t, key=lambda t: t[0])
        print(
            f"  (all cells) tangent >= 5x skfem, worst {r[0]} {r[1]} n={r[2]}: {x:.1f}x  {'PASS' if x >= 5 else 'MISS'}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
