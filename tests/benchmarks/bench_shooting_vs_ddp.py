"""Benchmark: direct single shooting against DDP on one discretisation (issue 37: the choice of the trajectory
optimiser argued by a benchmark).

The problem is the UR5 reach of ``tests/reach_problem.py`` (the one Crocoddyl solves in ``bench_reach_crocoddyl.py``):
600 piecewise-constant torques, symplectic Euler, the same costs. Both methods see the same discrete cost J(U):

- **DDP**: ``fb.predictive.solve_ddp`` (Gauss–Newton DDP on the step derivatives), to Σ‖Q_u‖² ≤ TH_STOP.
- **Single shooting**: scipy's L-BFGS-B (what ``fb.optimize_inputs`` uses without run constraints) on J(U), with its
  exact gradient by the adjoint of the same steps — λ_N = ∂l_N/∂x, g_i = ∂l_i/∂u + F_uᵀλ_{i+1},
  λ_i = ∂l_i/∂x + F_xᵀλ_{i+1} (F_x, F_u the step derivatives DDP uses) — in the L² metric of the inputs (variables
  √dt·U, as ``fb.optimize_inputs``). The gradient is checked against central differences of J first.

Reported: DDP's iterations and wall time to its converged optimum (equal to Crocoddyl's, ``bench_reach_crocoddyl.py``);
for shooting, its iterations, evaluations of J (rollouts) and wall time, and the relative gap of the cost and of the
inputs to DDP's optimum when it stops and when its cost first comes within 1e-6 and 1e-9 of it. The shooting
evaluations are timed as they run here (rollout compiled, adjoint sweep in Python); its time with a compiled adjoint is
estimated as its evaluations times one compiled rollout plus one compiled backward pass of DDP (an adjoint sweep costs
less than a Riccati sweep). Exit code 0 whether or not either method reaches a level.

Usage::

    python tests/benchmarks/bench_shooting_vs_ddp.py [--max-iterations N]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
from scipy.optimize import minimize  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' reach_problem
from reach_problem import TH_STOP, flexbody_problem  # noqa: E402
from timing import median_seconds, rel  # noqa: E402

from flexbody.predictive import solve_ddp  # noqa: E402
from flexbody.predictive.ddp import _sweeps  # noqa: E402
from flexbody.predictive.ddp_stage import euler_derivatives  # noqa: E402

LEVELS = (1e-6, 1e-9)  # relative cost gaps reported


class Shooting:
    """J(z) and ∇J(z) of the reach in the variables z = √dt·U (600,), counting evaluations."""

    def __init__(self, problem):
        self.problem, self.sweeps = problem, _sweeps(problem)
        self.asm = problem.assembled
        self.tree = self.asm.trees[0]
        self.S = np.asarray(self.asm.S, dtype=float)
        self.scale = np.sqrt(problem.dt)
        self.evaluations, self.history = 0, []

    def inputs(self, z: np.ndarray) -> np.ndarray:
        return z.reshape(self.problem.N, -1) / self.scale

    def cost(self, z: np.ndarray) -> float:
        return self.sweeps.rollout(self.inputs(z))[2]

    def __call__(self, z: np.ndarray) -> tuple[float, np.ndarray]:
        problem, n, S = self.problem, self.asm.n_dofs, self.S
        us = self.inputs(z)
        xs, _, cost = self.sweeps.rollout(us)
        self.evaluations += 1
        lam = self._cost_gradient(problem.terminal, xs[-1], None, 1.0)[0]
        gradient, Fx, Fu = np.empty_like(us), np.empty((2 * n, 2 * n)), np.empty((2 * n, S.shape[0]))
        for i in range(problem.N - 1, -1, -1):
            A_q, A_v, A_tau = self.tree.forward_dynamics_derivatives(xs[i, :n], xs[i, n:], S.T @ us[i])
            euler_derivatives(A_q, A_v, np.ascontiguousarray(A_tau @ S.T), problem.dt, Fx, Fu)
            lx, lu = self._cost_gradient(problem.running, xs[i], us[i], problem.dt)
            gradient[i] = lu + Fu.T @ lam
            lam = lx + Fx.T @ lam
        self.history.append((time.perf_counter(), cost, us))
        return cost, gradient.ravel() / self.scale

    def _cost_gradient(self, residuals, x, u, scale):
        lx, lu = np.zeros(x.size), None if u is None else np.zeros(u.size)
        for res in residuals:
            r, r_x, r_u = res.evaluate(self.asm, x, u)
            lx += scale * res.weight * (r_x.T @ r)
            if u is not None:
                lu += scale * res.weight * (r_u.T @ r)
        return lx, lu


def gap(cost: float, best: float) -> float:
    return abs(cost - best) / best


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--max-iterations", type=int, default=3000)
    args = parser.parse_args(argv)
    problem = flexbody_problem()
    solve_ddp(problem, tolerance=TH_STOP)  # loads the compiled kernels
    ddp_times = []
    for _ in range(5):
        best = solve_ddp(problem, tolerance=TH_STOP)
        ddp_times.append(best.seconds)
    print(
        f"DDP: {best.iterations} iterations, {1e3 * np.median(ddp_times):.1f} ms (median of 5), cost {best.cost:.15g}"
    )
    sweeps = _sweeps(problem)
    rollout_s = median_seconds(lambda: sweeps.rollout(best.us), 20)
    backward_s = median_seconds(lambda: sweeps.backward(best.xs, best.us, 1e-9), 20)
    print(f"one compiled rollout {1e3 * rollout_s:.2f} ms, one compiled backward pass {1e3 * backward_s:.2f} ms")

    shooting = Shooting(problem)
    z0 = (sweeps.holding() * shooting.scale).ravel()
    _check_gradient(shooting, z0)
    shooting.evaluations, shooting.history = 0, []
    start = time.perf_counter()
    found = minimize(
        shooting,
        z0,
        jac=True,
        method="L-BFGS-B",
        options=dict(maxiter=args.max_iterations, maxfun=10 * args.max_iterations, ftol=0.0, gtol=1e-14, maxcor=20),
    )
    wall = time.perf_counter() - start
    us = shooting.inputs(found.x)
    inputs_gap = rel(us, best.us)
    print(
        f"single shooting (L-BFGS-B, adjoint gradient): {found.nit} iterations, {shooting.evaluations} evaluations, "
        f"{wall:.2f} s; stopped: {found.message}"
    )
    print(f"  at its stop: cost gap {gap(found.fun, best.cost):.1e}, inputs {inputs_gap:.1e} (relative to the largest)")
    for level in LEVELS:
        reached = next((i for i, h in enumerate(shooting.history) if gap(h[1], best.cost) <= level), None)
        if reached is None:
            print(f"  cost gap ≤ {level:.0e}: not reached")
            continue
        seconds = shooting.history[reached][0] - start
        estimate = (reached + 1) * (rollout_s + backward_s)
        u_gap = rel(shooting.history[reached][2], best.us)
        print(
            f"  cost gap ≤ {level:.0e}: after {reached + 1} evaluations, {seconds:.2f} s here, about "
            f"{1e3 * estimate:.0f} ms with a compiled adjoint; inputs {u_gap:.1e} from DDP's"
        )
    return 0


def _check_gradient(shooting: Shooting, z: np.ndarray) -> None:
    rng = np.random.default_rng(0)
    direction = rng.normal(size=z.size)
    h = 1e-6 * np.linalg.norm(z) / np.linalg.norm(direction)
    difference = (shooting.cost(z + h * direction) - shooting.cost(z - h * direction)) / (2 * h)
    exact = float(shooting(z)[1] @ direction)
    relative = abs(exact - difference) / abs(exact)
    print(f"adjoint gradient against central differences along a random direction: {relative:.1e}")


if __name__ == "__main__":
    sys.exit(main())
