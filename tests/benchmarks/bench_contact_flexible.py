"""Benchmark: a flexible body of ≥ 1e4 coordinates resting and then sliding on a plane through the nonsmooth stepper —
the share of the step that the contacts take (issue 34's goal: the contact solve — its rows, its matrix and its
solver — ≤ 30 % of the step).

Model: an elastic block (St Venant–Kirchhoff, E = 1e7 Pa, ν = 0.3, ρ = 1000 kg/m³, Kelvin–Voigt 1 ms) of
``--divisions`` 8-node bricks (default 40 × 9 × 8 on 2 × 0.45 × 0.4 m: 3 690 nodes, 11 070 coordinates) resting on
the floor under gravity, a frictional ``fb.Contact`` (μ = 0.3) on every node of its bottom face (410), pushed along x
at 0.5 m/s so that it slides. ``fb.MoreauJean(dt=1e-3)`` for ``--steps`` steps.

Reported (the stepper's own timers, ``metadata["statistics"]["seconds"]``, one thread): the wall time per step and
the shares of the contacts' rows (frames), of the contact matrix (the Delassus matrix W = G A⁻¹ Gᵀ: from the block
of A⁻¹ on the contacts' columns, ``linalg/trailing_inverse.py``, formed where the step before could not use its
earlier one) and of the contact solve (Gauss–Seidel, the corrections of an earlier block to the step's A,
``solvers/delassus_splitting.py``, and the velocity change of the impulses), with the sweeps and corrections per
step; and, since the block needs the contacts' columns eliminated last, the factorisation's extra cost of that
ordering at the steps that formed it (A at the last state factored both ways, the better of three), which the
goal's share counts as the contacts'. A measurement: the exit code is 0 whether or not the goal is met.

Usage::

    python tests/benchmarks/bench_contact_flexible.py [--divisions NX NY NZ] [--steps N]
"""

from __future__ import annotations

import argparse
import os
import time

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import numpy as np  # noqa: E402


def block(divisions):
    import flexbody as fb

    nx, ny, nz = divisions
    mesh = fb.mesh.box((0.05 * nx, 0.05 * ny, 0.05 * nz), divisions)
    material = fb.StVenantKirchhoff(young=1e7, poisson=0.3, density=1000.0, damping=1e-3)
    body = fb.FlexibleBody("block", mesh, material)
    contacts = fb.node_contacts(body, fb.Plane((0.0, 0.0, 1.0)), "z0", friction=0.3)
    system = fb.System([body], loads=[fb.Gravity(body)], constraints=contacts)
    return system.assemble(), len(contacts)


def factor_seconds(asm, res) -> tuple[float, float]:
    """Wall times [s] of factoring the step's matrix A = M + θh²K + hC at the last state with CHOLMOD's own ordering
    and with the contacts' columns last (linalg.trailing_inverse), each the better of three."""
    import time

    from flexbody.linalg.csr_products import add_within, symmetric_part
    from flexbody.linalg.sparse_factor import SparseFactor
    from flexbody.linalg.trailing_inverse import TrailingInverse
    from flexbody.solvers.contact_step import _trailing

    ws = asm.workspace(res.times[-1], res.q[-1], res.v[-1])
    _, K, C = ws.flexible_jacobians(damping=True)
    h, theta = 1e-3, 0.5
    A = add_within(theta * h * h * symmetric_part(K).tocsr(), asm.flexible.mass.matrix, 1.0)
    A = (A + h * symmetric_part(C)).tocsr() if C is not None else A
    trailing = _trailing(asm, asm.contacts)
    assert isinstance(trailing, TrailingInverse)
    times = {"plain": [], "constrained": []}
    plain, constrained = SparseFactor(), TrailingInverse(trailing.last)
    for _ in range(4):  # the first of each analyses the pattern
        for name, factor in (("plain", plain), ("constrained", constrained)):
            start = time.perf_counter()
            factor.factor(A)
            times[name].append(time.perf_counter() - start)
    return min(times["plain"][1:]), min(times["constrained"][1:])


def main(argv=None) -> int:
    import flexbody as fb

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--divisions", type=int, nargs=3, default=(40, 9, 8))
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args(argv)
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    asm, count = block(tuple(args.divisions))
    v0 = np.tile([0.5, 0.0, 0.0], asm.n_dofs // 3)
    fb.simulate(asm, 2e-3, integrator=fb.MoreauJean(dt=1e-3), v0=v0)  # kernels loaded, patterns analysed
    start = time.perf_counter()
    res = fb.simulate(asm, args.steps * 1e-3, integrator=fb.MoreauJean(dt=1e-3), v0=v0, record_every=args.steps)
    wall = time.perf_counter() - start
    seconds = res.metadata["statistics"]["seconds"]
    steps = res.metadata["statistics"]["steps"]
    step = seconds["step"] / steps
    contact = seconds["contact_rows"] + seconds["contact_matrix"] + seconds["contact_solve"]
    print(f"coordinates {asm.n_dofs}, contacts {count}, steps {steps} ({wall:.2f} s with recording and start)")
    print("\n| per step | s | share of the step |")
    print("|---|---|---|")
    print(f"| the step | {step:.4f} | 1 |")
    for key in ("contact_rows", "contact_matrix", "contact_solve"):
        print(f"| {key.replace('_', ' ')} | {seconds[key] / steps:.4f} | {seconds[key] / seconds['step']:.3f} |")
    print(f"| the contact problem (rows, matrix, solve) | {contact / steps:.4f} | {contact / seconds['step']:.3f} |")
    plain, constrained = factor_seconds(asm, res)
    refreshes = res.metadata["statistics"]["contact_matrix_refreshes"]
    extra = max(constrained - plain, 0.0) * refreshes / steps
    print(
        f"| the factorisation's extra cost of eliminating the contacts' columns last (CHOLMOD's own ordering "
        f"{plain:.3f} s, constrained {constrained:.3f} s), at the {refreshes} steps that formed the block | "
        f"{extra:.4f} | {extra / step:.3f} |"
    )
    share = (contact + extra * steps) / seconds["step"]
    goal = "met" if share <= 0.3 else "not met"
    print(
        f"| the contact problem with that extra cost | {contact / steps + extra:.4f} | {share:.3f} "
        f"(goal ≤ 0.30: {goal}) |"
    )
    corrections = res.metadata["statistics"]["contact_corrections"] / steps
    print(f"corrections of the earlier block per step: {corrections:.1f}")
    print(
        f"sweeps per step: {np.mean(res.histories['contact_sweeps']):.1f}; sliding at the end: "
        f"{np.mean(res.histories['contact_slip_speed'][-1]):.3f} m/s"
    )
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
