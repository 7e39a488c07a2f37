"""Differential dynamic programming (``fb.predictive.solve_ddp``) against references nobody here wrote: on a mass on a
spring (linear dynamics, quadratic costs) its optimum is the least-squares solution of the stacked linear map of the
inputs (numpy's ``lstsq``); on a pendulum the gradient of the whole cost by central differences of rollouts vanishes
at its optimum; on the UR5 reaching problem it equals Crocoddyl's stored optimum (``tests/data``, made by
``tests/oracles/crocoddyl_reach.py`` in Crocoddyl's environment)."""

import numpy as np
import pytest
from input_models import oscillator, pendulum

import flexbody as fb
from flexbody.predictive import InputResidual, PointResidual, ReachingProblem, StateResidual, solve_ddp

MASS, OMEGA, DT, N = 2.0, 3.0, 0.05, 30


def euler_matrices():
    """The symplectic Euler step of the oscillator, x⁺ = Fx x + Fu u, from its closed-form acceleration."""
    A_q, A_u = -(OMEGA**2), 1.0 / MASS
    Fx = np.array([[1.0 + DT * DT * A_q, DT], [DT * A_q, 1.0]])
    Fu = np.array([[DT * DT * A_u], [DT * A_u]])
    return Fx, Fu


def test_linear_quadratic_optimum_is_the_least_squares_solution():
    asm = oscillator(MASS, OMEGA)
    x0, reference = np.array([0.3, -0.2]), np.array([0.1, 0.0])
    w_x, w_u, w_end = 4.0, 0.01, 100.0
    problem = ReachingProblem(
        asm, x0, DT, N, [StateResidual(reference, w_x), InputResidual(w_u)], [StateResidual(reference, w_end)]
    )
    found = solve_ddp(problem, tolerance=1e-20)
    Fx, Fu = euler_matrices()
    rows, blocks = [], []  # x_j = Fx^j x0 + Σ_{i<j} Fx^{j−1−i} Fu u_i, weighted residuals stacked
    for j in range(N + 1):
        weight = np.sqrt((w_end if j == N else w_x) * (1.0 if j == N else DT))
        G = np.zeros((2, N))
        for i in range(j):
            G[:, i] = (np.linalg.matrix_power(Fx, j - 1 - i) @ Fu)[:, 0]
        rows.append(weight * G)
        blocks.append(weight * (reference - np.linalg.matrix_power(Fx, j) @ x0))
    A = np.vstack([*rows, np.sqrt(w_u * DT) * np.eye(N)])
    b = np.concatenate([*blocks, np.zeros(N)])
    expected = np.linalg.lstsq(A, b, rcond=None)[0]
    assert np.abs(found.us[:, 0] - expected).max() < 1e-11 * np.abs(expected).max()
    assert found.iterations <= 2  # one Newton step solves a linear–quadratic problem


def test_the_pendulums_optimum_has_no_gradient():
    asm = pendulum()
    tree = asm.trees[0]
    bob = tree.point("bob", (0.4, 0.0, 0.0))
    x0 = np.array([0.3, 0.0])
    target = (0.0, 0.0, 0.4)  # above the pivot
    problem = ReachingProblem(
        asm,
        x0,
        0.02,
        40,
        [PointResidual(bob, target, 1.0), InputResidual(1e-3)],
        [PointResidual(bob, target, 100.0), StateResidual(np.zeros(2), 1.0)],
    )
    found = solve_ddp(problem, tolerance=1e-22)

    def cost(us):  # the problem's cost written out: symplectic Euler on the tree's forward dynamics
        x, total, dt = x0.copy(), 0.0, problem.dt
        for u in us:
            miss = tree.kinematics(x[:1]).point_position(bob.link, bob.offset) - target
            total += dt * (0.5 * miss @ miss + 0.5e-3 * u @ u)
            v = x[1:] + dt * tree.forward_dynamics(x[:1], x[1:], u)
            x = np.concatenate([x[:1] + dt * v, v])
        miss = tree.kinematics(x[:1]).point_position(bob.link, bob.offset) - target
        return total + 0.5 * 100.0 * miss @ miss + 0.5 * x @ x

    step, gradient = 1e-5, np.empty(found.us.size)
    for i in range(found.us.size):
        plus, minus = found.us.copy().ravel(), found.us.copy().ravel()
        plus[i] += step
        minus[i] -= step
        gradient[i] = (cost(plus.reshape(found.us.shape)) - cost(minus.reshape(found.us.shape))) / (2 * step)
    scale = np.abs(found.us).max()
    assert abs(cost(found.us) - found.cost) < 1e-12 * found.cost
    assert np.abs(gradient).max() * scale < 1e-6 * found.cost


def test_bad_problems_are_named():
    asm = oscillator(MASS, OMEGA)
    with pytest.raises(fb.ModelError, match="x0"):
        ReachingProblem(asm, np.zeros(3), DT, N, [], [])
    with pytest.raises(fb.ModelError, match="dt"):
        ReachingProblem(asm, np.zeros(2), 0.0, N, [], [])
    with pytest.raises(fb.ModelError, match="terminal cost has no inputs"):
        ReachingProblem(asm, np.zeros(2), DT, N, [], [InputResidual(1.0)])
    with pytest.raises(fb.ModelError, match="running residual"):
        ReachingProblem(asm, np.zeros(2), DT, N, [fb.Effort()], [])


def test_the_ur5_reach_equals_crocoddyls_optimum():
    """Crocoddyl 3.2.1's FDDP optimum of the same problem (URDF, symplectic Euler, costs, horizon), stored by
    ``tests/reach_problem.py``; flexbody's DDP from the same start to the same stopping criterion."""
    import json

    from reach_problem import STORED, TH_STOP, described, flexbody_problem

    stored = np.load(STORED)
    assert json.loads(str(stored["spec"])) == described()  # the stored optimum is of this problem
    found = solve_ddp(flexbody_problem(), tolerance=TH_STOP)
    assert abs(found.cost - float(stored["cost"])) < 1e-6 * float(stored["cost"])
    assert np.abs(found.xs - stored["xs"]).max() < 1e-6 * np.abs(stored["xs"]).max()
    assert np.abs(found.us - stored["us"]).max() < 1e-6 * np.abs(stored["us"]).max()


def assert_the_routes_agree(problem, perturbation, nan_scratch: bool = False, alpha: float = 0.5):
    """A lone rigid tree's compiled sweeps and the stage-by-stage sweeps of any model give the same rollout, cost and
    gains under the holding inputs plus ``perturbation`` (N, k) (1e-12 relative), and the same rollout with those
    gains at ``alpha``; ``nan_scratch``: the compiled sweeps' work arrays filled with NaN first (so a value read before
    it is written shows). Returns (both sweeps, the trajectory and the gains)."""
    from flexbody.predictive.ddp import _ModelSweeps, _sweeps, _TreeSweeps

    compiled, staged = _sweeps(problem), _ModelSweeps(problem)
    assert isinstance(compiled, _TreeSweeps)
    if nan_scratch:
        for scratch in (compiled.scratch[0], compiled.scratch[2]):  # the stage costs' scratch keeps its zero blocks
            for array in scratch:
                array.fill(np.nan)
    us = compiled.holding() + perturbation
    (xs, applied, cost), (xs_staged, _, cost_staged) = compiled.rollout(us), staged.rollout(us)
    assert np.abs(xs - xs_staged).max() < 1e-12 * np.abs(xs).max()
    assert abs(cost - cost_staged) < 1e-12 * cost
    found, expected = compiled.backward(xs, applied, 1e-9), staged.backward(xs, applied, 1e-9)
    for mine, theirs in zip(found[:3], expected[:3]):
        assert np.abs(mine - theirs).max() < 1e-12 * np.abs(theirs).max()
    step = (xs, found[0], found[1], alpha)
    assert np.abs(compiled.rollout(us, step)[0] - staged.rollout(us, step)[0]).max() < 1e-12 * np.abs(xs).max()
    return compiled, staged, us, found


def test_the_compiled_sweeps_equal_the_stage_by_stage_ones():
    """The UR5 reach: the same formulas on the tree's own kernels and on the system's forward dynamics and
    derivatives; the compiled sweeps read no work array before writing it."""
    from reach_problem import flexbody_problem

    problem = flexbody_problem()
    assert_the_routes_agree(problem, 0.5 * np.sin(np.arange(problem.N))[:, None] * np.linspace(1.0, 2.0, 6), True)


def test_the_riccati_steps_small_cholesky_equals_lapacks_and_refuses_an_indefinite_matrix():
    from flexbody.linalg.dense_kernels import cholesky_in_place

    rng = np.random.default_rng(3)
    A = rng.normal(size=(6, 6))
    spd = A @ A.T + 0.1 * np.eye(6)
    L = spd.copy()
    assert cholesky_in_place(L)
    assert np.abs(L - np.linalg.cholesky(spd)).max() < 1e-13 * np.abs(spd).max()
    indefinite = spd - 2.0 * np.linalg.eigvalsh(spd)[0] * np.eye(6)
    assert not cholesky_in_place(indefinite.copy())


def test_an_underactuated_trees_compiled_sweeps_equal_the_stage_by_stage_ones():
    """A double pendulum driven at its shoulder alone (S of one row, τ = Sᵀu): both routes map the input through S the
    same way, in the rollout, the cost and the gains (measured 3.6e-15, 2.1e-15, 1.7e-14), and both reject the full
    step of these gains, whose rollout leaves the finite numbers (a rejected line-search step in either)."""
    tree = fb.RigidTree("double", gravity=(0.0, 0.0, -9.81))
    upper = tree.add_link(
        "upper", None, fb.Revolute((0.0, 1.0, 0.0)), mass=1.0, com=(0.2, 0.0, 0.0), inertia=(0.01,) * 3
    )
    joint = fb.Revolute((0.0, 1.0, 0.0))
    tree.add_link("lower", upper, joint, origin=(0.4, 0.0, 0.0), mass=0.8, com=(0.2, 0.0, 0.0), inertia=(0.01,) * 3)
    asm = fb.System([tree], [], actuators=[upper], q0=np.array([0.3, -0.2])).assemble()
    tip = tree.point("lower", (0.4, 0.0, 0.0))
    x0 = np.array([0.3, -0.2, 0.0, 0.0])
    problem = ReachingProblem(
        asm, x0, 0.02, 30, [PointResidual(tip, (0.5, 0.0, 0.3), 1.0), InputResidual(1e-2)], [StateResidual(x0, 1.0)]
    )
    compiled, staged, us, (k, K, _, _) = assert_the_routes_agree(
        problem, 0.3 * np.cos(np.arange(problem.N))[:, None], alpha=0.25
    )
    assert compiled.S.shape == (1, 2)
    xs = compiled.rollout(us)[0]
    assert compiled.rollout(us, (xs, k, K, 1.0)) is None and staged.rollout(us, (xs, k, K, 1.0)) is None  # both diverge
