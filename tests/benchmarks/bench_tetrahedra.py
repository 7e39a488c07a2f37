"""Benchmark: 10-node tetrahedra — internal force and tangent throughput against scikit-fem on the same mesh, and per
coordinate against the 27-node brick on the same nodes.

Mesh: the box [0, 1]³ of n × n × n bricks, each cut into six tetrahedra (``fb.mesh.box(..., cells="tetrahedra",
order=2)``: 6 n³ Tet10, (2n + 1)³ nodes); the 27-node bricks of ``fb.mesh.box(..., order=2)`` have exactly these nodes,
so the per-coordinate comparison is on the same coordinates. Compressible neo-Hookean and St. Venant–Kirchhoff at a
smooth finite deformation. scikit-fem assembles the same residual and tangent with its own forms on
``ElementVector(ElementTetP2())`` with the same 4-point rule (``tests/skfem_oracle.py``, the oracle of
``tests/test_tet_skfem_crosscheck.py``; its quadrature-point fields computed once per call with numpy, the efficient
way to use skfem for a nonlinear material); its ``Basis`` is built once, outside the timing. Both run on one thread
(numba's thread count set to 1; skfem's loop is serial).

Timing: batches of calls lasting at least ``--min-time`` seconds, flexbody's and the peer's interleaved, ``--repeat``
times; the medians are compared (the machine may be busy: ratios are taken within one run). The agreement of the two
results is printed beside the times.

Usage::

    python tests/benchmarks/bench_tetrahedra.py [--sizes 6 10] [--repeat 5] [--min-time 0.5]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numba
import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # tests/ (skfem_oracle)
sys.path.insert(0, str(HERE))
from skfem_oracle import Material, SkfemHyperelastic, dof_permutation, smooth_deformation, tet_basis  # noqa: E402
from timing import batch_seconds, fmt, loops_for, rel  # noqa: E402

import flexbody as fb  # noqa: E402
from flexbody.fem.tetrahedra import tet_quadrature  # noqa: E402

YOUNG, POISSON, DENSITY = 2.0e5, 0.3, 1000.0
MATERIALS = {"neohookean": "NeoHookean", "svk": "StVenantKirchhoff"}


def medians(calls: dict, repeat: int, min_time: float) -> dict:
    """Median time per call [s] of each of ``calls`` ({name: callable}), batches interleaved ``repeat`` times."""
    loops = {name: loops_for(call, min_time) for name, call in calls.items()}
    times: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(repeat):
        for name, call in calls.items():
            times[name].append(batch_seconds(call, loops[name]) / loops[name])
    return {name: float(np.median(t)) for name, t in times.items()}


def case(n: int, kind: str, repeat: int, min_time: float) -> dict:
    material = getattr(fb, MATERIALS[kind])(young=YOUNG, poisson=POISSON, density=DENSITY)
    tets = fb.mesh.box((1.0, 1.0, 1.0), (n, n, n), order=2, cells="tetrahedra")
    bricks = fb.mesh.box((1.0, 1.0, 1.0), (n, n, n), order=2)
    tet_body = fb.FlexibleBody("tets", tets, material)
    brick_body = fb.FlexibleBody("bricks", bricks, material, quadrature=3)  # the full rule (a compact solid's default)
    n_vertices = int(tets.cells[:, :4].max()) + 1
    basis = tet_basis(tets.points[:n_vertices], tets.cells[:, :4], 2, tet_quadrature(tet_body.quadrature))
    oracle = SkfemHyperelastic(basis, Material(kind, YOUNG, POISSON))
    perm = dof_permutation(basis, tets.points)
    q_tet = smooth_deformation(np.asarray(tets.points), amplitude=0.2, noise=1e-3).ravel()
    q_brick = smooth_deformation(np.asarray(bricks.points), amplitude=0.2, noise=1e-3).ravel()
    u_sk = np.empty(basis.N)
    u_sk[perm] = q_tet - tet_body.reference_coordinates()
    agreement_f = rel(tet_body.internal_force(q_tet), oracle.residual(u_sk)[perm])
    K_sk = oracle.tangent(u_sk)[perm][:, perm]
    agreement_K = float(abs(tet_body.tangent(q_tet) - K_sk).max() / abs(K_sk).max())
    force = medians(
        {
            "tet": lambda: tet_body.internal_force(q_tet),
            "skfem": lambda: oracle.residual(u_sk),
            "brick": lambda: brick_body.internal_force(q_brick),
        },
        repeat,
        min_time,
    )
    tangent = medians(
        {
            "tet": lambda: tet_body.tangent(q_tet),
            "skfem": lambda: oracle.tangent(u_sk),
            "brick": lambda: brick_body.tangent(q_brick),
        },
        repeat,
        min_time,
    )
    m_tet, m_brick, dofs = tet_body.n_elements, brick_body.n_elements, tet_body.n_dofs
    assert dofs == brick_body.n_dofs
    return {
        "n": n,
        "kind": kind,
        "tets": m_tet,
        "dofs": dofs,
        "force_tet_rate": m_tet / force["tet"],
        "force_skfem_rate": m_tet / force["skfem"],
        "force_vs_skfem": force["skfem"] / force["tet"],
        "force_tet_vs_brick_per_dof": force["tet"] / force["brick"],
        "tangent_tet_rate": m_tet / tangent["tet"],
        "tangent_skfem_rate": m_tet / tangent["skfem"],
        "tangent_vs_skfem": tangent["skfem"] / tangent["tet"],
        "tangent_tet_vs_brick_per_dof": tangent["tet"] / tangent["brick"],
        "brick_elements": m_brick,
        "agreement_force": agreement_f,
        "agreement_tangent": agreement_K,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[6, 10], help="bricks per edge (6 n³ tetrahedra)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--min-time", type=float, default=0.5)
    args = parser.parse_args(argv)
    numba.set_num_threads(1)
    rows = [case(n, kind, args.repeat, args.min_time) for n in args.sizes for kind in MATERIALS]
    columns = list(rows[0])
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    for row in rows:
        print("| " + " | ".join(fmt(row[c]) for c in columns) + " |")
    print(
        "\nforce_vs_skfem, tangent_vs_skfem: scikit-fem's time / flexbody's (> 1: flexbody faster); "
        "*_tet_vs_brick_per_dof: Tet10's time / H27's on the same coordinates (≤ 2: the issue's goal)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
