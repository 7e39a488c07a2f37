"""Benchmark: constrained forward dynamics of flexbody vs Pinocchio, microseconds per call.

Two flexbody forms, for each of the four methods:

* per call: ``asm.terms(t, q, v)`` (a new workspace: M, h, Φ, bias from the rigid-tree kinematics) followed by
  ``flexbody.dynamics.forward(M, h, tau, Φ, bias, method=...)``; ``terms`` and ``forward`` alone are reported too;
* data form: ``flexbody.dynamics.constraint_dynamics(asm, data, t, q, v, tau, method=...)`` on a ``SystemData``
  made once, as Pinocchio's ``constraintDynamics`` runs on a ``Data`` made once (the same kernels).

Mechanisms: Aghili's slider-crank (n = 2, m = 1, ``mechanisms.slider_crank``) and the branching tree (n = 34,
m = 12, ``mechanisms.branching_loops``).

Pinocchio solves the same problem on the same model (``tests/pinocchio_oracle.py``: ``to_pinocchio``
rebuilds the flexbody tree as a ``pinocchio.Model``; coordinates are permuted by ``perm``), at the same
state, in the same run. Each Pinocchio call starts from (q, v, τ) and includes M and h:

* ``constraintDynamics``: ``pin.constraintDynamics`` with one ``RigidConstraintModel(CONTACT_3D)`` per
  point-to-point closure (tip point on its joint, target on the universe), after ``initConstraintDynamics``
  (outside the timing). Pinocchio has no 1-row contact model, so this is n/a for the slider-crank.
* ``KKT``: ``pin.forwardDynamics(model, data, q, v, τ, J, γ)`` (calls computeAllTerms internally), with
  J = constraint rows of the points' LOCAL_WORLD_ALIGNED frame Jacobians and γ = the same rows of their
  classical accelerations at a = 0, both computed by Pinocchio inside the timed call (forwardKinematics
  with a = 0, computeJointJacobians, getFrameJacobian, getFrameClassicalAcceleration).
* ``KKT 1-pass``: the same J, γ read after one ``computeAllTerms(q, v)`` (which leaves the joint Jacobians
  and the a = 0 joint accelerations in ``data``), then ``pin.forwardDynamics(model, data, τ, J, γ)``.

Before timing, the accelerations (and multipliers) of every Pinocchio variant are compared with every
flexbody method; the largest relative difference ‖a_pin − a_fb‖∞ / ‖a_fb‖∞ is printed. A variant that
disagrees by more than ``--agree-tol`` is not timed. The state satisfies the constraints: q = the
assembled initial state, v = a random velocity projected onto ker Φ, τ random.

Timing: ``--rounds`` interleaved rounds; in each, every timed call (each flexbody method, ``terms`` and ``forward``
alone, each Pinocchio variant) runs one batch, in an order that rotates from round to round, of a number of calls
chosen once so that a batch lasts at least ``--min-time`` seconds. Reported: the median over rounds of µs per call,
and as the ratio the median over rounds of flexbody / the Pinocchio variant with the smallest median, so that a
change of the machine's speed during the run moves both sides of a ratio alike. No assertions on timing; the
issue's goal (``GOAL``, 2×) is printed for information.

Usage::

    python tests/benchmarks/bench_constrained_dynamics.py [--rounds N] [--min-time S] [--seed K]
                                                          [--mechanisms ...] [--methods ...]
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import timeit
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # tests/ (pinocchio_oracle)
sys.path.insert(1, str(HERE.parent.parent))  # repository root, if flexbody is not installed

from timing import rel  # noqa: E402

from flexbody import mechanisms  # noqa: E402
from flexbody.constraints.closures import OnSurface, PointToPoint  # noqa: E402
from flexbody.constraints.surfaces import Plane  # noqa: E402
from flexbody.dynamics import METHODS, SystemData, constraint_dynamics, forward  # noqa: E402
from flexbody.rigid.anchors import Ground, LinkPoint  # noqa: E402

try:
    import pinocchio as pin
    from pinocchio_oracle import to_pinocchio

    PIN_ERROR = None
except Exception as exc:  # report, do not crash the flexbody half
    pin, to_pinocchio, PIN_ERROR = None, None, f"pinocchio not importable: {exc}"

MECHANISMS = {"slider-crank": mechanisms.slider_crank, "branching-34": mechanisms.branching_loops}
T0 = 0.0
GOAL = 2.0  # flexbody / Pinocchio, the performance issue's goal


# ---------------------------------------------------------------------------- timing
def interleaved_us(calls: dict, rounds: int, min_time: float) -> dict:
    """µs per call of each callable in ``calls`` in every round ({key: (rounds,)}): each round runs every callable
    for one batch, in an order that rotates from round to round; a batch's size is chosen once (after a warm-up
    call: numba compilation, caches) so that it lasts at least ``min_time``."""
    loops = {}
    for key, fn in calls.items():
        fn()
        timer, n = timeit.Timer(fn), 1
        while (t := timer.timeit(n)) < min_time:
            n = max(2 * n, int(np.ceil(n * min_time / max(t, 1e-9) * 1.1)))
        loops[key] = n
    keys = list(calls)
    times = {key: np.empty(rounds) for key in keys}
    for r in range(rounds):
        shift = r % len(keys)
        for key in keys[shift:] + keys[:shift]:
            times[key][r] = 1e6 * timeit.Timer(calls[key]).timeit(loops[key]) / loops[key]
    return times


# ---------------------------------------------------------------------------- the problem
def constrained_state(asm, seed: int):
    """(q, v, tau): the assembled initial q, a random v projected onto ker Φ(q), a random τ."""
    rng = np.random.default_rng(seed)
    q = asm.initial_state().q.copy()
    Phi = asm.terms(T0, q).Phi
    v = rng.normal(size=asm.n_dofs)
    if Phi.shape[0]:
        v -= np.linalg.lstsq(Phi, Phi @ v, rcond=None)[0]
    tau = rng.normal(size=asm.n_dofs)
    return q, v, tau


def constraint_points(system):
    """Per constraint: (link, offset, S (rows, 3), target (3,) or None) with constraint rows = S·x_point.

    Only the constraints of the two benchmark mechanisms are supported: a PointToPoint between a
    LinkPoint and a Ground point, and an OnSurface(LinkPoint, Plane).
    """
    out = []
    for c in system.constraints:
        if isinstance(c, PointToPoint) and isinstance(c.a, LinkPoint) and isinstance(c.b, Ground):
            out.append((c.a.link, np.asarray(c.a.offset, float), np.eye(3)[c.components], np.asarray(c.b.origin)))
        elif isinstance(c, OnSurface) and isinstance(c.point, LinkPoint) and isinstance(c.surface, Plane):
            out.append((c.point.link, np.asarray(c.point.offset, float), c.surface.normal[None, :].copy(), None))
        else:
            raise NotImplementedError(
                f"benchmark: no Pinocchio equivalent for constraint {c.name!r} ({type(c).__name__})"
            )
    return out


class PinocchioProblem:
    """The flexbody system's tree and constraints in Pinocchio; all vectors in Pinocchio's coordinate order."""

    def __init__(self, system, q, v, tau):
        if len(system.trees) != 1:
            raise NotImplementedError("benchmark: one rigid tree expected")
        self.model, frames, self.perm = to_pinocchio(system.trees[0])
        self.data = self.model.createData()
        self.q, self.v, self.tau = q[self.perm].copy(), v[self.perm].copy(), tau[self.perm].copy()
        self.a0 = np.zeros(self.model.nv)
        self.points = []  # (frame_id, S)
        self.contacts = []  # (joint_id, placement in joint, target) or None
        for k, (link, offset, S, target) in enumerate(constraint_points(system)):
            lm = frames[link.name]
            placement = lm.placement * pin.SE3(np.eye(3), offset)
            fid = self.model.addFrame(
                pin.Frame(f"bench_point_{k}", lm.joint_id, placement, pin.FrameType.OP_FRAME), False
            )
            self.points.append((fid, S))
            full = target is not None and S.shape[0] == 3 and np.array_equal(S, np.eye(3))
            self.contacts.append((lm.joint_id, placement, target) if full else None)
        self.data = self.model.createData()  # after adding the frames
        self.m = sum(S.shape[0] for _, S in self.points)

    def to_flexbody(self, x):
        out = np.empty_like(x)
        out[self.perm] = x
        return out

    # -- J and γ from Pinocchio's kinematics (data must hold joint Jacobians and the a = 0 accelerations)
    def _rows(self):
        model, data, LWA = self.model, self.data, pin.LOCAL_WORLD_ALIGNED
        J = np.empty((self.m, model.nv))
        gamma = np.empty(self.m)
        r = 0
        for fid, S in self.points:
            k = S.shape[0]
            J[r : r + k] = S @ pin.getFrameJacobian(model, data, fid, LWA)[:3]
            gamma[r : r + k] = S @ pin.getFrameClassicalAcceleration(model, data, fid, LWA).linear
            r += k
        return J, gamma

    def kkt(self):
        """forwardDynamics(q, v, τ, J, γ) with J, γ computed here: (a, λ)."""
        model, data = self.model, self.data
        pin.forwardKinematics(model, data, self.q, self.v, self.a0)
        pin.computeJointJacobians(model, data)
        J, gamma = self._rows()
        a = pin.forwardDynamics(model, data, self.q, self.v, self.tau, J, gamma)
        return a, data.lambda_c

    def kkt_one_pass(self):
        """computeAllTerms(q, v); J, γ from its results; forwardDynamics(τ, J, γ): (a, λ)."""
        model, data = self.model, self.data
        pin.computeAllTerms(model, data, self.q, self.v)
        J, gamma = self._rows()
        a = pin.forwardDynamics(model, data, self.tau, J, gamma)
        return a, data.lambda_c

    # -- constraintDynamics
    def has_contacts(self) -> bool:
        return bool(self.contacts) and all(c is not None for c in self.contacts)

    def setup_contacts(self, reference_frame):
        self.reference_frame = reference_frame
        self.cmodels = []
        for joint_id, placement, target in self.contacts:
            self.cmodels.append(
                pin.RigidConstraintModel(
                    pin.ContactType.CONTACT_3D,
                    self.model,
                    joint_id,
                    placement,
                    0,
                    pin.SE3(np.eye(3), target),
                    reference_frame,
                )
            )
        self.cmodel_vec = pin.StdVec_RigidConstraintModel()
        self.cdata_vec = pin.StdVec_RigidConstraintData()
        for cm in self.cmodels:
            self.cmodel_vec.append(cm)
            self.cdata_vec.append(cm.createData())
        self.prox = pin.ProximalSettings()  # defaults: mu = 0, one iteration (exact solve)
        pin.initConstraintDynamics(self.model, self.data, self.cmodel_vec, self.cdata_vec)

    def constraint_dynamics(self):
        return pin.constraintDynamics(
            self.model, self.data, self.q, self.v, self.tau, self.cmodel_vec, self.cdata_vec, self.prox
        )

    def constraint_lambda(self):
        """Multipliers of the last constraintDynamics call in world axes (flexbody's λ of each closure)."""
        lam = np.asarray(self.data.lambda_c, dtype=float).copy()
        if self.reference_frame == pin.LOCAL:  # contact-frame axes → world axes
            pin.forwardKinematics(self.model, self.data, self.q)
            for k, (joint_id, placement, _) in enumerate(self.contacts):
                R = (self.data.oMi[joint_id] * placement).rotation
                lam[3 * k : 3 * k + 3] = R @ lam[3 * k : 3 * k + 3]
        return lam


# ---------------------------------------------------------------------------- one mechanism


def run(name, args, methods):
    system = MECHANISMS[name]()
    asm = system.assemble()
    n, m = asm.n_dofs, asm.n_constraints
    q, v, tau = constrained_state(asm, args.seed)
    T = asm.terms(T0, q, v)
    fb = {meth: forward(T.M, T.h, tau, T.Phi, T.bias, method=meth) for meth in methods}
    a_ref = fb[methods[0]].a
    fb_spread = max(rel(r.a, a_ref) for r in fb.values())
    notes = [
        f"{name}: ‖φ(q)‖∞ = {np.max(np.abs(T.phi)) if m else 0.0:.1e}, ‖Φv‖∞ = "
        f"{np.max(np.abs(T.Phi @ v)) if m else 0.0:.1e}, spread of a over flexbody methods {fb_spread:.1e}"
    ]

    # ---- Pinocchio: check, then time only what agrees
    pin_t: dict = {"cd": "n/a", "kkt": "n/a", "kkt1": "n/a"}
    agree: dict = {}
    calls: dict = {}
    if PIN_ERROR is None:
        P = PinocchioProblem(system, q, v, tau)
        assert P.m == m
        variants = {"kkt": P.kkt, "kkt1": P.kkt_one_pass}
        if P.has_contacts():
            chosen = None
            for rf in (pin.LOCAL_WORLD_ALIGNED, pin.LOCAL):
                P.setup_contacts(rf)
                a_cd = P.to_flexbody(np.asarray(P.constraint_dynamics(), float))
                lam_cd = P.constraint_lambda()
                err_a = max(rel(a_cd, r.a) for r in fb.values())
                err_l = max(rel(lam_cd, r.lam) for r in fb.values())
                notes.append(f"{name}: constraintDynamics CONTACT_3D {rf.name}: rel. diff a {err_a:.1e}, λ {err_l:.1e}")
                if chosen is None and max(err_a, err_l) <= args.agree_tol:
                    chosen = rf
            if chosen is not None:
                P.setup_contacts(chosen)
                variants["cd"] = P.constraint_dynamics
                notes.append(f"{name}: constraintDynamics timed with {chosen.name}")
            else:
                pin_t["cd"] = "mismatch"
        for key, fn in variants.items():
            if key == "cd":
                a_p, lam_p = P.to_flexbody(np.asarray(fn(), float)), P.constraint_lambda()
            else:
                a_p, lam_p = fn()
                a_p, lam_p = P.to_flexbody(np.asarray(a_p, float)), np.asarray(lam_p, float).ravel()
            err = max(max(rel(a_p, r.a), rel(lam_p, r.lam)) for r in fb.values())
            agree[key] = err
            if err > args.agree_tol:
                pin_t[key] = "mismatch"
                notes.append(f"{name}: Pinocchio {key} disagrees with flexbody (rel. diff {err:.1e}); not timed")
                continue
            calls[("pin", key)] = fn

    # ---- flexbody: every call makes the workspace of its state afresh (nothing is kept between calls), at its
    # own time t (the models are scleronomic, so the terms are those of the same state)
    ticks = itertools.count(1)
    fresh_t = lambda: T0 + 1e-12 * next(ticks)  # noqa: E731
    calls[("terms",)] = lambda: asm.terms(fresh_t(), q, v)
    data = SystemData(asm)
    for meth in methods:
        calls[("data", meth)] = lambda meth=meth: constraint_dynamics(asm, data, fresh_t(), q, v, tau, method=meth)
        assert rel(constraint_dynamics(asm, data, T0, q, v, tau, method=meth), fb[meth].a) < args.agree_tol

        def call(meth=meth):
            T = asm.terms(fresh_t(), q, v)
            return forward(T.M, T.h, tau, T.Phi, T.bias, method=meth)

        calls[("fb", meth)] = call
        calls[("forward", meth)] = lambda meth=meth: forward(T.M, T.h, tau, T.Phi, T.bias, method=meth)
    times = interleaved_us(calls, args.rounds, args.min_time)
    medians = {key: float(np.median(t)) for key, t in times.items()}
    pins = [key for key in calls if key[0] == "pin"]
    best = min(pins, key=lambda key: medians[key]) if pins else None
    for key in pins:
        pin_t[key[1]] = medians[key]
    rows = []
    for meth in methods:
        ratio = float(np.median(times[("fb", meth)] / times[best])) if best else None
        ratio_data = float(np.median(times[("data", meth)] / times[best])) if best else None
        rows.append(
            (
                name,
                n,
                m,
                meth,
                medians[("fb", meth)],
                medians[("terms",)],
                medians[("forward", meth)],
                ratio,
                medians[("data", meth)],
                ratio_data,
            )
        )
    return rows, pin_t, agree, notes


# ---------------------------------------------------------------------------- main
def fmt(x, spec=".1f") -> str:
    return format(x, spec) if isinstance(x, float) else str(x)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=21, help="interleaved timing rounds; medians are reported")
    p.add_argument("--min-time", type=float, default=0.02, help="minimum duration of one batch of calls (s)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random v and τ")
    p.add_argument(
        "--agree-tol",
        type=float,
        default=1e-9,
        help="largest relative difference of a and λ for a Pinocchio variant to be timed",
    )
    p.add_argument("--mechanisms", nargs="+", default=list(MECHANISMS), choices=list(MECHANISMS))
    p.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    args = p.parse_args(argv)

    import scipy

    print(
        f"numpy {np.__version__}   scipy {scipy.__version__}   "
        f"pinocchio {pin.__version__ if pin is not None else '-'}   Python {sys.version.split()[0]}   "
        f"CPUs: {os.cpu_count()}"
    )
    if PIN_ERROR:
        print(PIN_ERROR)
    print(
        f"µs per call, median of {args.rounds} interleaved rounds of >= {args.min_time} s batches; "
        f"flexbody call = asm.terms + dynamics.forward (per call) or constraint_dynamics on a SystemData (data); "
        f"ratio = median over rounds of flexbody / fastest Pinocchio\n"
    )

    header = (
        "mechanism",
        "n",
        "m",
        "method",
        "flexbody [µs]",
        "terms [µs]",
        "forward [µs]",
        "pin constraintDyn [µs]",
        "pin KKT [µs]",
        "pin KKT 1-pass [µs]",
        "ratio fb/pin",
        "data [µs]",
        "data/pin",
        "max rel diff a,λ",
    )
    widths = (12, 3, 3, 10, 13, 10, 12, 22, 12, 19, 12, 9, 8, 16)
    line = lambda cells: "  ".join(f"{c!s:>{w}}" for c, w in zip(cells, widths))  # noqa: E731
    print(line(header))
    print(line(["-" * w for w in widths]))
    all_notes, summary = [], []
    for name in args.mechanisms:
        rows, pin_t, agree, notes = run(name, args, args.methods)
        all_notes += notes
        diff = max(agree.values()) if agree else None
        for mech, n, m, meth, t_fb, t_terms, t_fwd, x, t_data, x_data in rows:
            ratio = f"{x:.2f}x" if x is not None else "-"
            print(
                line(
                    [
                        mech,
                        n,
                        m,
                        meth,
                        fmt(t_fb),
                        fmt(t_terms),
                        fmt(t_fwd),
                        fmt(pin_t["cd"]),
                        fmt(pin_t["kkt"]),
                        fmt(pin_t["kkt1"]),
                        ratio,
                        fmt(t_data),
                        f"{x_data:.2f}x" if x_data is not None else "-",
                        fmt(diff, ".1e") if diff is not None else "-",
                    ]
                ),
                flush=True,
            )
            if x is not None:
                summary.append((mech, meth, x, x_data))

    print("\nNotes:")
    for note in all_notes:
        print(f"  {note}")
    print(
        "  ratio = flexbody (terms + forward, or the data form) / fastest Pinocchio variant that agrees; "
        "max rel diff = ‖·_pin − ·_fb‖∞/‖·_fb‖∞ over all timed Pinocchio variants and flexbody methods"
    )
    print(
        f"\nGoal of the performance issue: within {GOAL:g}x of Pinocchio (load average at end: "
        f"{os.getloadavg()[0]:.2f})"
    )
    for mech, meth, x, x_data in summary:
        print(
            f"  {mech:<12} {meth:<10}: per call {x:6.2f}x  {'met' if x <= GOAL else 'not met'};  "
            f"data form {x_data:6.2f}x  {'met' if x_data <= GOAL else 'not met'}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
