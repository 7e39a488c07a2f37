"""Benchmark: halving the step of generalized-α at its default settings never makes a run less accurate (issue 33,
item 5).

The claim under test: with ``fb.GeneralizedAlpha(dt=...)`` at its defaults (ρ∞, Newton tolerance 1e-10 on the
position increment, each coordinate in its own unit), a run at dt/2 has no larger an energy error and no larger a
constraint error than the same run at dt. Before issue 33 the tolerance was relative to max(1, ‖q‖∞), which
loosens as joint angles wind up: a crank that turns for a minute ends with a tolerance a hundred times the one it
started with, and the accumulated Newton error can then outgrow the discretisation error that halving the step
removes.

Models (public API, no applied forces, gravity on):

- **heavy top**: a disc-like top on a spherical joint (exponential coordinates, chart switches as it precesses),
  m = 1.5 kg, centre of mass 0.2 m up its axis, A = 0.016, C = 0.03 kg·m² about the centre of mass, spin 60 rad/s,
  tilted 0.6 rad, started in steady precession (``fb.Spherical.velocities``);
- **four-bar**: ``fb.mechanisms.four_bar()`` given a crank speed of 10 rad/s (the crank angle winds up without
  bound), 2 closure rows;
- **arm + beam** (rigid–flexible): ``fb.mechanisms.arm_with_beam(divisions=(4, 1, 1))`` with its joints passive,
  released at rest under gravity;
- **flagship**: case 16 (the arm with its 6 × 1 × 1 27-node beam under task-space control), its first second at the
  case's settings (ρ∞ 0.99) and its step DT = 1 ms and DT/2; its energy error counts the controller's work W and
  the beam's Kelvin–Voigt dissipation D (the histories "applied_work" and "dissipated"),
  max |E(t) − E(0) − W(t) + D(t)| / max K(t).

Errors over the recorded states: energy error = max |E(t) − E(0) − W(t) + D(t)| / max K(t) (E = K + V, W the
inputs' work, D the dissipated work: both zero but for the flagship); constraint error =
max ‖φ(q)‖₂. Prints both per model and step, and PASS when the finer step's errors are no larger (within 1 %, the
round-off of the error measures), a constraint error below the Newton tolerance (1e-10 m: the rows are met to
it, and which converged iterate Newton stops at below it is not accuracy) counting as met.

Run: ``python tests/benchmarks/bench_dt_halving.py [--t-end-scale 1.0]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

import flexbody as fb


def heavy_top():
    m, g, ell, A_c, C, theta, w3 = 1.5, 9.81, 0.2, 0.016, 0.03, 0.6, 60.0
    A = A_c + m * ell**2
    Omega = (C * w3 - np.sqrt((C * w3) ** 2 - 4 * A * np.cos(theta) * m * g * ell)) / (2 * A * np.cos(theta))
    top = fb.RigidTree("top", gravity=(0, 0, -g))
    top.add_link("top", None, fb.Spherical(), mass=m, com=(0, 0, ell), inertia=(A_c, A_c, C))
    phi0 = np.array([theta, 0.0, 0.0])
    axis = Rotation.from_rotvec(phi0).as_matrix()[:, 2]
    omega = Omega * np.array([0.0, 0.0, 1.0]) + (w3 - Omega * np.cos(theta)) * axis
    return fb.System([top], q0=phi0).assemble(), fb.Spherical.velocities(phi0, omega), 20.0, 5e-4


def four_bar():
    asm = fb.mechanisms.four_bar().assemble()
    ws = asm.workspace(0.0, asm.q0, np.zeros(asm.n_dofs))
    Phi = np.atleast_2d(ws.constraint_rows()[1])
    _, _, vt = np.linalg.svd(Phi)
    tangent = vt[-1] / vt[-1][0]  # the one free motion, crank rate 1
    return asm, 10.0 * tangent, 20.0, 5e-4


def arm_with_beam():
    return fb.mechanisms.arm_with_beam(divisions=(4, 1, 1)).assemble(), None, 1.0, 1e-3


def flagship():
    case = _case_16()
    asm = case.build().assemble()
    return asm, case, 1.0, case.DT


def _case_16():
    path = Path(__file__).resolve().parents[2] / "cases" / "16_arm_beam_task_control.py"
    spec = importlib.util.spec_from_file_location("case_16", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


MODELS = {"heavy top": heavy_top, "four-bar": four_bar, "arm + beam": arm_with_beam, "flagship": flagship}


def run(asm, start, t_end: float, dt: float) -> fb.Results:
    """A generalized-α run at its defaults with step dt from v0 = ``start``, or the flagship case's own run."""
    if hasattr(start, "run"):  # the case module
        case = start
        q0, v0 = case.start_state(asm)
        motion = (case.OFFSET, case.OMEGA, case.T_SETTLE, case.RADIUS, case.FREQUENCY, case.T_RAMP)
        return case.run(asm, q0, v0, *motion, t_end, dt, case.RHO_INF)[0]
    return fb.simulate(asm, t_end, integrator=fb.GeneralizedAlpha(dt=dt), v0=start, record_every=max(1, int(0.01 / dt)))


def errors(asm, start, t_end: float, dt: float) -> tuple[float, float]:
    """(energy error, constraint error) of :func:`run`."""
    res = run(asm, start, t_end, dt)
    energy, kinetic = res.histories["energy"], res.histories["kinetic"]
    work = res.histories.get("applied_work", np.zeros_like(energy))
    dissipated = res.histories.get("dissipated", np.zeros_like(energy))
    energy_error = float(np.max(np.abs(energy - energy[0] - work + dissipated)) / max(np.max(kinetic), 1e-300))
    violation = res.histories.get("violation")
    return energy_error, float(np.max(violation)) if violation is not None and len(violation) else 0.0


NEWTON_TOL = fb.GeneralizedAlpha(dt=1e-3).tol  # the default Newton tolerance


def no_worse(fine: float, coarse: float, floor: float = 0.0) -> bool:
    return fine <= max(coarse * 1.01, floor)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--t-end-scale", type=float, default=1.0, help="scale the run lengths (default 1)")
    args = parser.parse_args()
    logging.getLogger("flexbody").setLevel(logging.ERROR)
    print("| model | dt [s] | energy error | constraint error [m] |")
    print("|---|---|---|---|")
    verdicts = []
    for name, build in MODELS.items():
        asm, v0, t_end, dt = build()
        coarse = errors(asm, v0, t_end * args.t_end_scale, dt)
        fine = errors(asm, v0, t_end * args.t_end_scale, dt / 2)
        for step, (e, c) in ((dt, coarse), (dt / 2, fine)):
            print(f"| {name} | {step:g} | {e:.3e} | {c:.3e} |")
        verdicts.append((name, no_worse(fine[0], coarse[0]) and no_worse(fine[1], coarse[1], NEWTON_TOL)))
    for name, ok in verdicts:
        print(f"{name}: {'PASS' if ok else 'FAIL'} (dt/2 no less accurate than dt)")
    return 0 if all(ok for _, ok in verdicts) else 1


if __name__ == "__main__":
    raise SystemExit(main())
