"""Benchmark: rigid-tree dynamics of flexbody vs Pinocchio, microseconds per call, in one run.

Model: a random serial chain of ``--dofs`` (default 30) revolute joints, seeded with ``--seed``: each
joint has a random unit axis, its joint frame is placed in the parent link frame at a random origin in
[−0.3, 0.3]³ m with a random rotation (uniform on SO(3)); each link has a mass in [0.5, 2] kg, a centre
of mass in [−0.1, 0.1]³ m and a diagonal rotational inertia with principal moments in [0.04, 0.06] kg m²
(so the triangle inequality holds); gravity is flexbody's default. State: q uniform in [−π, π], v, a and
τ standard normal.

Pinocchio evaluates the same tree: ``tests/pinocchio_oracle.py`` rebuilds it as a ``pinocchio.Model``
(``to_pinocchio``, via ``PinocchioOracle``); vectors are mapped through its permutation ``perm``
(the identity for a chain). Each figure times two flexbody calls against one Pinocchio call:

* **workspace**: the algorithm on an explicit workspace made once, ``data = fb.rigid.TreeData(tree)``,
  as Pinocchio's ``(model, data)`` — it writes into ``data`` and returns the data's array;
* **per call**: the ``RigidTree`` method, which returns a new array.

* mass matrix: ``fb.rigid.mass_matrix(tree, data, q)``, ``tree.mass_matrix(q)`` vs ``pin.crba(model, data,
  q)``. Pinocchio's C++ CRBA fills only the upper triangle, but its Python binding (checked with Pinocchio 4.1)
  copies it into the lower one before returning, so the timed ``pin.crba`` already returns the full symmetric
  M and nothing is added. The script checks this at run time; should a Pinocchio version return the upper
  triangle only, the lower one is filled for the agreement check only (not timed: a Python-side fill would
  cost about as much as the CRBA itself) and a note says so.
* inverse dynamics: ``fb.rigid.inverse_dynamics(tree, data, q, v, a)``, ``tree.inverse_dynamics(q, v, a)``
  vs ``pin.rnea(model, data, q, v, a)``.
* nonlinear effects: ``fb.rigid.nonlinear_effects(tree, data, q, v)``, ``tree.nonlinear_effects(q, v)`` vs
  ``pin.nonLinearEffects(model, data, q, v)``.
* forward dynamics: ``fb.rigid.forward_dynamics(tree, data, q, v, tau)``, ``tree.forward_dynamics(q, v, tau)``
  vs ``pin.aba(model, data, q, v, tau)``.

Before timing, every call runs once (numba compilation; the time of these first calls is printed) and
the results of both libraries are compared: relative difference ‖x_pin − x_fb‖∞ / ‖x_fb‖∞ (the larger of
the two flexbody calls'). A figure whose difference exceeds ``--agree-tol`` is not timed (the reason is
printed) and the exit code is 1.

Timing: one thread (``numba.set_num_threads(1)``; OMP/OPENBLAS/MKL_NUM_THREADS=1 unless set, before numpy
is imported), the garbage collector off. For every call, the number of calls per batch is chosen
separately so that one batch lasts ≥ ``--min-time``; then ``--rounds`` rounds each time one batch of each of
the three calls back to back (the order rotates from round to round). Reported: the median over rounds of
µs per call of each, and the median over rounds of the per-round ratio flexbody / Pinocchio (the batches of
a round ran within a fraction of a second of each other, so load changes largely cancel). The load average
is printed at the start and the end. The last line compares the workspace ratios with the goals of the
performance issue (all four ≤ 1.5× Pinocchio; the per-call methods are reported without a goal). Missed
goals do not change the exit code (0): this is a measurement.

Usage::

    python tests/benchmarks/bench_rigid_dynamics.py [--dofs N] [--seed K] [--rounds N] [--min-time S]
                                                    [--quick] [--agree-tol TOL] [--figures ...]
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # one BLAS thread, before numpy loads BLAS

import numba as nb  # noqa: E402
import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # tests/ (pinocchio_oracle)
sys.path.insert(1, str(HERE.parent.parent))  # repository root, if flexbody is not installed

from timing import batch_seconds, loops_for, rel  # noqa: E402

import flexbody as fb  # noqa: E402

try:
    import pinocchio as pin
    from pinocchio_oracle import PinocchioOracle

    PIN_ERROR = None
except Exception as exc:  # reported by main (exit code 2)
    pin, PinocchioOracle, PIN_ERROR = None, None, f"pinocchio not importable: {exc}"

FIGURES = ("mass-matrix", "inverse-dynamics", "nonlinear-effects", "forward-dynamics")
GOALS = {"mass-matrix": 1.5, "inverse-dynamics": 1.5, "nonlinear-effects": 1.5, "forward-dynamics": 1.5}
"""Largest ratio flexbody (workspace call) / Pinocchio of each figure (issue 32)."""
VARIANTS = ("workspace", "per call")


# ---------------------------------------------------------------------------- the problem
def random_rotation(rng) -> np.ndarray:
    """A rotation matrix uniform on SO(3) (QR of a Gaussian matrix, signs fixed)."""
    Q, R = np.linalg.qr(rng.normal(size=(3, 3)))
    Q = Q * np.sign(np.diag(R))
    if np.linalg.det(Q) < 0:
        Q[:, 0] = -Q[:, 0]
    return Q


def random_chain(n: int, seed: int):
    """(tree, q, v, a, tau): the random n-dof revolute chain described in the module docstring."""
    rng = np.random.default_rng(seed)
    tree = fb.RigidTree(f"chain{n}")
    parent = None
    for i in range(n):
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        parent = tree.add_link(
            f"l{i}",
            parent,
            fb.Revolute(axis),
            origin=rng.uniform(-0.3, 0.3, 3),
            rotation=random_rotation(rng),
            mass=rng.uniform(0.5, 2.0),
            com=rng.uniform(-0.1, 0.1, 3),
            inertia=rng.uniform(0.04, 0.06, 3),
        )
    q = rng.uniform(-np.pi, np.pi, n)
    v, a, tau = rng.normal(size=n), rng.normal(size=n), rng.normal(size=n)
    return tree, q, v, a, tau


class Figure:
    """One figure: the flexbody calls by variant (:data:`VARIANTS`) with their labels, the Pinocchio call
    (Pinocchio order) and its result in flexbody order."""

    def __init__(self, name, fb_calls, fb_labels, pin_name, pin_call, pin_result):
        self.name, self.fb_calls, self.fb_labels = name, fb_calls, fb_labels
        self.pin_name, self.pin_call, self.pin_result = pin_name, pin_call, pin_result


def figures(tree, oracle, q, v, a, tau, notes):
    model, pdata, perm = oracle.model, oracle.data, oracle.perm
    qp, vp, ap, taup = (np.ascontiguousarray(x[perm]) for x in (q, v, a, tau))
    data = fb.rigid.TreeData(tree)
    rigid = fb.rigid

    def vector(x):
        return oracle.from_pin(np.array(x, dtype=float))

    def matrix(M):
        M = np.array(M, dtype=float)
        lower, upper = np.tril(M, -1), np.triu(M, 1)
        if np.max(np.abs(lower - upper.T)) > 1e-12 * max(np.max(np.abs(M)), 1.0):
            notes.append("pin.crba returned the upper triangle only: filled for the check, timed without the fill")
            M = np.triu(M) + upper.T
        out = np.empty_like(M)
        out[np.ix_(perm, perm)] = M
        return out

    return {
        "mass-matrix": Figure(
            "mass matrix",
            {"workspace": lambda: rigid.mass_matrix(tree, data, q), "per call": lambda: tree.mass_matrix(q)},
            {"workspace": "mass_matrix(tree, data, q)", "per call": "tree.mass_matrix(q)"},
            "crba",
            lambda: pin.crba(model, pdata, qp),
            matrix,
        ),
        "inverse-dynamics": Figure(
            "inverse dynamics",
            {
                "workspace": lambda: rigid.inverse_dynamics(tree, data, q, v, a),
                "per call": lambda: tree.inverse_dynamics(q, v, a),
            },
            {"workspace": "inverse_dynamics(tree, data, q, v, a)", "per call": "tree.inverse_dynamics(q, v, a)"},
            "rnea",
            lambda: pin.rnea(model, pdata, qp, vp, ap),
            vector,
        ),
        "nonlinear-effects": Figure(
            "nonlinear effects",
            {
                "workspace": lambda: rigid.nonlinear_effects(tree, data, q, v),
                "per call": lambda: tree.nonlinear_effects(q, v),
            },
            {"workspace": "nonlinear_effects(tree, data, q, v)", "per call": "tree.nonlinear_effects(q, v)"},
            "nonLinearEffects",
            lambda: pin.nonLinearEffects(model, pdata, qp, vp),
            vector,
        ),
        "forward-dynamics": Figure(
            "forward dynamics",
            {
                "workspace": lambda: rigid.forward_dynamics(tree, data, q, v, tau),
                "per call": lambda: tree.forward_dynamics(q, v, tau),
            },
            {"workspace": "forward_dynamics(tree, data, q, v, tau)", "per call": "tree.forward_dynamics(q, v, tau)"},
            "aba",
            lambda: pin.aba(model, pdata, qp, vp, taup),
            vector,
        ),
    }


def time_figure(fig: Figure, rounds: int, min_time: float) -> dict[str, np.ndarray]:
    """µs per call per round of each flexbody variant and of Pinocchio ("pin"), batches interleaved: each round
    runs one batch of every call, the order rotating from round to round."""
    calls = {**fig.fb_calls, "pin": fig.pin_call}
    keys = list(calls)
    loops = {k: loops_for(c, min_time) for k, c in calls.items()}
    samples: dict[str, list] = {k: [] for k in calls}
    for r in range(rounds):
        for k in keys[r % len(keys) :] + keys[: r % len(keys)]:
            samples[k].append(1e6 * batch_seconds(calls[k], loops[k]) / loops[k])
    return {k: np.array(x) for k, x in samples.items()}


# ---------------------------------------------------------------------------- main
def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dofs", type=int, default=30, help="number of revolute joints of the random chain")
    p.add_argument("--seed", type=int, default=0, help="seed of the random chain and state")
    p.add_argument("--rounds", type=int, default=21, help="interleaved rounds; medians are reported")
    p.add_argument("--min-time", type=float, default=0.02, help="minimum duration of one batch (s)")
    p.add_argument("--quick", action="store_true", help="5 rounds of >= 5 ms batches (a smoke run)")
    p.add_argument(
        "--agree-tol",
        type=float,
        default=1e-9,
        help="largest relative difference flexbody/Pinocchio for a figure to be timed",
    )
    p.add_argument("--figures", nargs="+", default=list(FIGURES), choices=list(FIGURES))
    args = p.parse_args(argv)
    if args.quick:
        args.rounds, args.min_time = 5, 0.005
    if args.dofs < 1 or args.rounds < 1 or args.min_time <= 0:
        p.error("--dofs and --rounds must be >= 1, --min-time > 0")
    if PIN_ERROR:
        print(PIN_ERROR, file=sys.stderr)
        return 2

    nb.set_num_threads(1)
    print(
        f"numpy {np.__version__}   numba {nb.__version__}   pinocchio {pin.__version__}   "
        f"Python {sys.version.split()[0]}   CPUs: {os.cpu_count()}   numba threads: {nb.get_num_threads()}   "
        f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}   "
        f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}"
    )
    print(f"load average at start: {load()}")

    tree, q, v, a, tau = random_chain(args.dofs, args.seed)
    oracle = PinocchioOracle(tree)
    notes = []
    if not np.array_equal(oracle.perm, np.arange(tree.n_dofs)):
        notes.append("the oracle permutes the coordinates (not the identity)")
    figs = {k: f for k, f in figures(tree, oracle, q, v, a, tau, notes).items() if k in args.figures}

    # warm-up (numba compilation) and agreement
    first, diffs, ok = {}, {}, {}
    for key, fig in figs.items():
        start = time.perf_counter()
        for call in fig.fb_calls.values():
            call()
        first[key] = time.perf_counter() - start
        x_pin = fig.pin_result(fig.pin_call())
        diffs[key] = 0.0
        for call in fig.fb_calls.values():
            x_fb = np.array(call(), dtype=float)
            diffs[key] = max(diffs[key], rel(x_pin, x_fb) if x_pin.shape == x_fb.shape else np.inf)
        ok[key] = bool(diffs[key] <= args.agree_tol)
        if not ok[key]:
            print(
                f"{fig.name}: flexbody and Pinocchio disagree (rel. diff {diffs[key]:.1e} > --agree-tol "
                f"{args.agree_tol:.0e}); not timed"
            )
    print(
        "first flexbody calls (numba compilation or cache): "
        + ", ".join(f"{figs[k].name} {t:.2f} s" for k, t in first.items())
    )
    print(
        f"\nrandom revolute chain, n = {tree.n_dofs}, seed {args.seed}; µs per call, median of {args.rounds} "
        f"interleaved rounds of >= {args.min_time} s batches; ratio = median over rounds of flexbody / Pinocchio\n"
    )

    header = (
        "figure",
        "flexbody call",
        "Pinocchio call",
        "flexbody [µs]",
        "Pinocchio [µs]",
        "ratio fb/pin",
        "rel diff",
    )
    widths = (17, 38, 16, 13, 14, 12, 8)
    line = lambda cells: "  ".join(f"{c!s:>{w}}" for c, w in zip(cells, widths))  # noqa: E731
    print(line(header))
    print(line(["-" * w for w in widths]))
    ratios: dict[str, dict[str, float]] = {}
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for key, fig in figs.items():
            if not ok[key]:
                print(line([fig.name, "-", fig.pin_name, "-", "-", "mismatch", f"{diffs[key]:.1e}"]), flush=True)
                continue
            samples = time_figure(fig, args.rounds, args.min_time)
            t_pin = samples["pin"]
            ratios[key] = {}
            for variant in VARIANTS:
                t_fb = samples[variant]
                ratios[key][variant] = float(np.median(t_fb / t_pin))
                cells = [fig.name, fig.fb_labels[variant], fig.pin_name]
                cells += [f"{np.median(t_fb):.2f}", f"{np.median(t_pin):.2f}", f"{ratios[key][variant]:.2f}"]
                print(line([*cells, f"{diffs[key]:.1e}"]), flush=True)
    finally:
        if gc_was_enabled:
            gc.enable()

    print(f"\nload average at end: {load()}")
    for note in notes:
        print(f"note: {note}")
    parts = []
    for key in figs:
        name = figs[key].name
        if key not in ratios:
            parts.append(f"{name} not timed (disagreement)")
            continue
        ratio = ratios[key]["workspace"]
        verdict = "met" if ratio <= GOALS[key] else "MISSED"
        parts.append(f"{name} {ratio:.2f}x (goal <= {GOALS[key]}x: {verdict}; per call {ratios[key]['per call']:.2f}x)")
    print("goals of the performance issue, flexbody workspace call / Pinocchio: " + "; ".join(parts))
    return 0 if all(ok.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
