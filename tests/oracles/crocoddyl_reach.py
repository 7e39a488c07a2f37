"""The oracle of the UR5 reaching problem: Crocoddyl's optimum and its solve time, run in Crocoddyl's own virtual
environment (``make crocoddyl-venv``: pin 4.0.0 and crocoddyl 3.2.1, which do not install beside the test set's pin)
and called as a subprocess by ``tests/benchmarks/bench_reach_crocoddyl.py``.

The problem (its numbers come in as JSON on the command line, so that both sides read one definition): the URDF's
arm from rest at q0, N intervals of dt, the frame ``frame``'s origin to reach ``target``; running cost
dt·(w_goal·½‖p − p*‖² + w_x·½‖x − x0‖² + w_u·½‖u‖²), terminal cost W_goal·½‖p − p*‖² + w_x·½‖x − x0‖²;
forward dynamics by ABA, symplectic Euler (``IntegratedActionModelEuler``); FDDP from x0 held and the quasi-static
torques, to ``th_stop``. Prints one JSON line: xs (N + 1, 2n), us (N, n), cost, iterations, the median solve time over
``repeats`` solves from the same start, and the cost scaling of a running and a terminal node (to check the dt factor).
"""

import json
import sys
import time

import crocoddyl
import numpy as np
import pinocchio as pin


def build(spec):
    model = pin.buildModelFromUrdf(spec["urdf"])
    model.gravity.linear = np.array(spec["gravity"])
    state = crocoddyl.StateMultibody(model)
    actuation = crocoddyl.ActuationModelFull(state)
    nu = actuation.nu
    x0 = np.concatenate([spec["q0"], np.zeros(model.nv)])
    goal = crocoddyl.CostModelResidual(
        state,
        crocoddyl.ResidualModelFrameTranslation(state, model.getFrameId(spec["frame"]), np.array(spec["target"]), nu),
    )
    x_reg = crocoddyl.CostModelResidual(state, crocoddyl.ResidualModelState(state, x0, nu))
    u_reg = crocoddyl.CostModelResidual(state, crocoddyl.ResidualModelControl(state, nu))
    running, terminal = crocoddyl.CostModelSum(state, nu), crocoddyl.CostModelSum(state, nu)
    running.addCost("goal", goal, spec["w_goal"])
    running.addCost("x_reg", x_reg, spec["w_x"])
    running.addCost("u_reg", u_reg, spec["w_u"])
    terminal.addCost("goal", goal, spec["W_goal"])
    terminal.addCost("x_reg", x_reg, spec["w_x"])
    run = crocoddyl.IntegratedActionModelEuler(
        crocoddyl.DifferentialActionModelFreeFwdDynamics(state, actuation, running), spec["dt"]
    )
    end = crocoddyl.IntegratedActionModelEuler(
        crocoddyl.DifferentialActionModelFreeFwdDynamics(state, actuation, terminal), 0.0
    )
    return crocoddyl.ShootingProblem(x0, [run] * spec["N"], end), x0, run, end


def cost_scale(model, x, u=None):
    """The node's cost over its differential model's cost at (x, u) (a terminal node: at x, as the solvers call it)."""
    data, diff = model.createData(), model.differential.createData()
    if u is None:
        model.calc(data, x)
        model.differential.calc(diff, x)
    else:
        model.calc(data, x, u)
        model.differential.calc(diff, x, u)
    return data.cost / diff.cost


def main():
    spec = json.loads(sys.argv[1])
    problem, x0, run, end = build(spec)
    xs0 = [x0] * (spec["N"] + 1)
    us0 = problem.quasiStatic(xs0[:-1])
    times, solver = [], None
    for _ in range(spec["repeats"]):
        solver = crocoddyl.SolverFDDP(problem)
        solver.th_stop = spec["th_stop"]
        start = time.perf_counter()
        solver.solve(xs0, us0, spec["max_iterations"], False)
        times.append(time.perf_counter() - start)
    x1 = x0 + 0.01
    u1 = np.asarray(us0[0]) + 1.0
    out = {
        "xs": np.array(solver.xs).tolist(),
        "us": np.array(solver.us).tolist(),
        "us0": np.array(us0).tolist(),
        "cost": solver.cost,
        "iterations": solver.iter,
        "seconds": float(np.median(times)),
        "running_scale": cost_scale(run, x1, u1),
        "terminal_scale": cost_scale(end, x1),
        "versions": {"crocoddyl": crocoddyl.__version__, "pinocchio": pin.__version__},
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
