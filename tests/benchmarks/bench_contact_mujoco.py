"""Benchmark: a rigid scene with contacts, flexbody's nonsmooth stepper vs MuJoCo, microseconds per step, in one run.

Model (both libraries): ``--boxes`` (default 20) boxes of 2 kg, 0.4 × 0.2 × 0.1 m, diagonal inertia of the solid
box, each on a free joint, resting 0.6 m apart on the floor z = 0 with friction μ = 0.4; gravity 9.81 m/s²; step
2e-3 s. flexbody: a free flyer per box with four corner ``fb.Contact`` rows (80 contacts for 20 boxes) and
``fb.MoreauJean(dt=2e-3)`` (exact Coulomb law, impulses solved to 1e-12); MuJoCo: an MJCF box geom per body on a
plane, its default Newton solver and pyramidal cones (its box–plane collision gives four contacts per resting
box; the number is printed), ``mj_step``. What each step includes: flexbody's ``simulate`` loop (workspace,
contact frames, the saddle-point and contact solves, recording every ``--record-every``-th state), MuJoCo's
``mj_step`` (collision, constraint solve, integration). ``--input function`` gives flexbody's run its input as a
function of the state (as a controller would), so that it steps one at a time instead of in compiled batches.

Agreement (printed, not timed): after ``--steps`` steps both scenes are at rest — the boxes' largest speed and
the sum of normal forces over m g (flexbody's recorded normal forces; MuJoCo's ``mj_contactForce``).

Timing: one thread; ``--rounds`` rounds, each a run of ``--steps`` steps of flexbody (``simulate``, the model
assembled once before) and of MuJoCo (``mj_step`` from the same start), back to back; reported the median µs per
step of each and the median of the per-round ratios. The goal of issue 34 is a ratio ≤ 3. This is a measurement:
the exit code is 0 whether or not the goal is met.

Usage::

    python tests/benchmarks/bench_contact_mujoco.py [--boxes N] [--steps N] [--rounds N] [--record-every N]
        [--input held|function]
"""

from __future__ import annotations

import argparse
import os
import time

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import numpy as np  # noqa: E402

HALF = (0.2, 0.1, 0.05)  # m
MASS, FRICTION, GRAVITY, DT = 2.0, 0.4, 9.81, 2e-3


def _inertia():
    a, b, c = HALF
    return (MASS / 3 * (b * b + c * c), MASS / 3 * (a * a + c * c), MASS / 3 * (a * a + b * b))


def flexbody_scene(boxes: int):
    import flexbody as fb

    a, b, c = HALF
    trees, contacts, q0 = [], [], []
    floor = fb.Plane((0.0, 0.0, 1.0))
    for k in range(boxes):
        tree = fb.RigidTree(f"box{k}", gravity=(0.0, 0.0, -GRAVITY))
        body = tree.add_link("body", None, fb.FreeFlyer(), mass=MASS, inertia=_inertia())
        for sx in (-1, 1):
            for sy in (-1, 1):
                contacts.append(fb.Contact(tree.point(body, (sx * a, sy * b, -c)), floor, friction=FRICTION))
        trees.append(tree)
        q0 += [0.6 * k, 0.0, c, 0.0, 0.0, 0.0]
    return fb.System(trees, constraints=contacts, q0=q0).assemble()


def mujoco_scene(boxes: int):
    import mujoco

    a, b, c = HALF
    inertia = " ".join(f"{x:.12g}" for x in _inertia())
    bodies = "".join(
        f'<body pos="{0.6 * k} 0 {c}"><freejoint/><geom type="box" size="{a} {b} {c}" friction="{FRICTION}"/>'
        f'<inertial pos="0 0 0" mass="{MASS}" diaginertia="{inertia}"/></body>'
        for k in range(boxes)
    )
    xml = (
        f'<mujoco><option timestep="{DT}" gravity="0 0 {-GRAVITY}"/><worldbody>'
        f'<geom type="plane" size="0 0 1" friction="{FRICTION}"/>{bodies}</worldbody></mujoco>'
    )
    model = mujoco.MjModel.from_xml_string(xml)
    return model, mujoco.MjData(model)


def run_flexbody(asm, steps: int, record_every: int, tau=None):
    import flexbody as fb

    start = time.perf_counter()
    res = fb.simulate(asm, steps * DT, integrator=fb.MoreauJean(dt=DT), record_every=record_every, tau=tau)
    return (time.perf_counter() - start) / steps, res


def run_mujoco(model, data, steps: int):
    import mujoco

    mujoco.mj_resetData(model, data)
    start = time.perf_counter()
    for _ in range(steps):
        mujoco.mj_step(model, data)
    return (time.perf_counter() - start) / steps


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--boxes", type=int, default=20)
    parser.add_argument("--steps", type=int, default=250)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--record-every", type=int, default=1)
    parser.add_argument("--input", choices=("held", "function"), default="held")
    args = parser.parse_args(argv)
    import mujoco

    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    asm = flexbody_scene(args.boxes)
    model, data = mujoco_scene(args.boxes)
    zero = np.zeros(asm.n_dofs)
    tau = None if args.input == "held" else (lambda t, q, v: zero)  # a function: the run steps one at a time
    run_flexbody(asm, 5, 1, tau)  # compiled kernels loaded, caches warm
    run_mujoco(model, data, 5)
    fb_times, mj_times, ratios = [], [], []
    res = None
    for _ in range(args.rounds):
        t_fb, res = run_flexbody(asm, args.steps, args.record_every, tau)
        t_mj = run_mujoco(model, data, args.steps)
        fb_times.append(t_fb)
        mj_times.append(t_mj)
        ratios.append(t_fb / t_mj)
    assert res is not None
    weight = args.boxes * MASS * GRAVITY
    fb_normal = res.histories["contact_normal_force"][-1].sum() / weight
    force = np.zeros(6)
    mj_normal = 0.0
    for i in range(data.ncon):
        mujoco.mj_contactForce(model, data, i, force)
        mj_normal += force[0]
    print(f"contacts: flexbody {res.histories['contact_normal_force'].shape[1]}, MuJoCo {data.ncon} (last step)")
    print(
        f"at rest after {args.steps} steps: largest speed flexbody {np.abs(res.v[-1]).max():.2e}, "
        f"MuJoCo {np.abs(data.qvel).max():.2e}; Σ f_n / (m g): flexbody {fb_normal:.12f}, "
        f"MuJoCo {mj_normal / weight:.6f}"
    )
    fb_us, mj_us, ratio = 1e6 * np.median(fb_times), 1e6 * np.median(mj_times), float(np.median(ratios))
    print("\n| scene | flexbody µs/step | MuJoCo µs/step | ratio (median of rounds) | goal |")
    print("|---|---|---|---|---|")
    print(
        f"| {args.boxes} boxes, {4 * args.boxes} contacts, dt {DT:g} s, record every {args.record_every}, "
        f"input {args.input} | "
        f"{fb_us:.0f} | {mj_us:.1f} | {ratio:.1f} | ≤ 3: {'met' if ratio <= 3 else 'not met'} |"
    )
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
