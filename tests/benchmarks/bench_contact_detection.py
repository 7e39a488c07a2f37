"""Benchmark: detection of a flexible body's boundary nodes against a triangle mesh — the time per step of the
contacts' gaps and rows (issue 34's goal: ≥ 1e4 boundary nodes against a triangle mesh under 1 ms per step), with
trimesh's signed distance of the same points in the same run for comparison.

Model: an elastic block of ``--divisions`` 8-node bricks (default 70 × 70 × 3 on 0.7 × 0.7 × 0.03 m: 10 642 boundary
nodes, each a ``fb.Contact``) lying on a terrain: a closed slab 1 × 1 × 0.1 m whose top, subdivided into
``--subdivisions`` levels (default 6: 49 152 triangles), undulates by 1 mm; the block's bottom rests 0.1 mm above
the highest point of it. The block falls at 0.3 m/s with dt = 1e-3 s, so each node's cutoff (its distance
in two steps) is 0.6 mm; the bottom nodes lie within 2.1 mm of the terrain.

Timed (one thread, medians of ``--repeats`` batches, interleaved): flexbody's detection (the nodes' positions and
speeds gathered from the state, their cutoffs, ``TriangleMesh.signed_distances``: broad and narrow phase), the same
with the contacts' frames and rows (``ContactFrames.at``: every contact's gap, frame and rows G at a state, what the
nonsmooth step takes), and trimesh 5.2.0's ``proximity.signed_distance`` of the same points (rtree nearest
triangles, exact distances). The two answers are
compared where flexbody's is exact. A measurement: the exit code is 0 whether or not the goal is met.

Usage::

    python tests/benchmarks/bench_contact_detection.py [--divisions NX NY NZ] [--subdivisions K] [--repeats N]
"""

from __future__ import annotations

import argparse
import os
import statistics

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import numpy as np  # noqa: E402
from timing import batch_seconds, loops_for  # noqa: E402


def terrain(subdivisions: int):
    """The slab (a trimesh.Trimesh), its top undulating by 1 mm."""
    import trimesh

    slab = trimesh.creation.box((1.0, 1.0, 0.1))
    slab.apply_translation((0.0, 0.0, -0.05))
    for _ in range(subdivisions):
        slab = slab.subdivide()
    top = slab.vertices[:, 2] > -1e-9
    x, y = slab.vertices[top, 0], slab.vertices[top, 1]
    vertices = slab.vertices.copy()
    vertices[top, 2] = 1e-3 * np.sin(2 * np.pi * 3 * x) * np.cos(2 * np.pi * 2 * y)
    return trimesh.Trimesh(vertices, slab.faces, process=False)


def model(divisions, slab):
    """The assembled block with its boundary contacts on the meshed slab, and a workspace of it falling."""
    import flexbody as fb

    nx, ny, nz = divisions
    mesh = fb.mesh.box((0.01 * nx, 0.01 * ny, 0.01 * nz), divisions)
    body = fb.FlexibleBody("block", mesh, fb.StVenantKirchhoff(young=1e7, poisson=0.3, density=1000.0))
    surface = fb.TriangleMesh(slab.vertices, slab.faces)
    contacts = fb.node_contacts(body, surface, friction=0.3)
    asm = fb.System([body], constraints=contacts).assemble()
    q = asm.q0.copy()
    q[0::3] -= 0.005 * nx
    q[1::3] -= 0.005 * ny
    q[2::3] += 1e-3 + 1e-4
    v = np.tile([0.0, 0.0, -0.3], asm.n_dofs // 3)
    return asm, asm.workspace(0.0, q, v), surface, len(contacts)


def main(argv=None) -> int:
    import trimesh

    from flexbody.solvers.contact_frames import ContactFrames
    from flexbody.solvers.node_contact_rows import gather_nodes

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--divisions", type=int, nargs=3, default=(70, 70, 3))
    parser.add_argument("--subdivisions", type=int, default=6)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    slab = terrain(args.subdivisions)
    asm, ws, surface, count = model(tuple(args.divisions), slab)
    frames = ContactFrames(asm, asm.contacts)
    h = 1e-3
    ours = frames.at(ws, h)
    points = ws.q.reshape(-1, 3)[[c.anchor.index for c in asm.contacts]]
    theirs = -trimesh.proximity.signed_distance(slab, points)
    exact = surface.signed_distances(points, 2.0 * h * 0.3)[3] >= 0
    difference = float(np.max(np.abs(ours.gap[exact] - theirs[exact])))
    assert difference < 1e-6, difference  # trimesh's own distances carry errors of ~1e-9 m

    group = frames.groups[0]  # the contacts of the nodes on the mesh, as the step evaluates them
    X, cutoff = np.empty((count, 3)), np.empty(count)

    def detect():  # the nodes' positions and cutoffs gathered (compiled, as the step does), their distances
        gather_nodes(ws.q, ws.v, ws.v, h, group.columns, group.radii, X, cutoff)
        surface.signed_distances(X, cutoff)

    def assemble():
        frames.at(ws, h)

    def reference():
        trimesh.proximity.signed_distance(slab, points)

    calls = {"detection": detect, "frames": assemble, "trimesh": reference}
    loops = {name: loops_for(call, 0.2) for name, call in calls.items()}
    times: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(args.repeats):
        for name, call in calls.items():
            times[name].append(batch_seconds(call, loops[name]) / loops[name])
    ours_t, frames_t, theirs_t = (statistics.median(times[name]) for name in calls)
    print(
        f"boundary nodes (contacts) {count}, triangles {len(slab.faces)}, grid cell {surface.grid.h * 1e3:.2f} mm, "
        f"reach {surface.reach * 1e3:.2f} mm; exact within the cutoff: {int(exact.sum())} "
        f"(the rest beyond it), agreeing with trimesh to {difference:.1e} m"
    )
    print("\n| per step | ms | over flexbody's detection |")
    print("|---|---|---|")
    print(f"| flexbody: detection (each node's signed distance within its cutoff) | {ours_t * 1e3:.3f} | 1 |")
    print(
        f"| flexbody: detection and every contact's frame and rows G | {frames_t * 1e3:.3f} | {frames_t / ours_t:.2f} |"
    )
    print(f"| trimesh: signed distances of the same points | {theirs_t * 1e3:.1f} | {theirs_t / ours_t:.0f} |")
    goal = "met" if ours_t < 1e-3 else "not met"
    print(f"goal (detection of ≥ 1e4 boundary nodes < 1 ms per step): {goal}")
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
