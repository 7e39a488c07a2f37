"""The sweeps of :func:`~flexbody.predictive.solve_ddp` over a lone rigid tree, each in one compiled call: the rollout
(with the forward pass's feedback) and its cost, and the backward pass. A stage calls the tree's whole-tree kernels
(:func:`~flexbody.rigid.tree_dynamics.forward_dynamics_kernel`,
:func:`~flexbody.rigid.tree_dynamics.forward_derivatives_kernel`), the points' kinematics
(:func:`~flexbody.rigid.algorithms.point_terms`) and the stage's own pieces (:mod:`flexbody.predictive.ddp_stage`),
so every formula is the one the stage-by-stage route uses.

A cost arrives packed (:func:`pack_costs`) as eight arrays: its points' link indices (P,), offsets (P, 3) [m, link
frame], targets (P, 3) [m, world] and weights (P,); its state residuals' references (S, 2n) and weights (S,); its input
residuals' references (I, k) and weights (I,).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ..rigid.algorithms import point_terms
from ..rigid.tree_dynamics import all_finite, forward_derivatives_kernel, forward_dynamics_kernel, link_kinematics
from .ddp_stage import (
    difference_terms,
    euler_derivatives,
    euler_step,
    feedback_input,
    gauss_newton_add,
    residual_cost,
    riccati_scratch,
    riccati_step,
)

__all__ = ["pack_costs", "sweep_scratch", "tree_rollout", "tree_backward"]


def pack_costs(points, states, inputs, n_states: int, n_inputs: int) -> tuple:
    """The eight arrays of a cost (module docstring) from ``points`` [(link index, offset, target, weight)],
    ``states`` [(reference, weight)] and ``inputs`` [(reference, weight)]."""
    links = np.array([p[0] for p in points], dtype=np.int64)
    offsets = np.array([p[1] for p in points], dtype=float).reshape(len(points), 3)
    targets = np.array([p[2] for p in points], dtype=float).reshape(len(points), 3)
    point_weights = np.array([p[3] for p in points], dtype=float)
    state_refs = np.array([np.broadcast_to(r, n_states) for r, _ in states], dtype=float).reshape(-1, n_states)
    input_refs = np.array([np.broadcast_to(r, n_inputs) for r, _ in inputs], dtype=float).reshape(-1, n_inputs)
    weights = [np.array([w for _, w in group], dtype=float) for group in (states, inputs)]
    arrays = (links, offsets, targets, point_weights, state_refs, weights[0], input_refs, weights[1])
    return tuple(np.ascontiguousarray(a) for a in arrays)


@nb.njit(cache=True)
def _torques(S, u, tau):
    """τ = Sᵀu (n,) into ``tau``."""
    for j in range(tau.shape[0]):
        s = 0.0
        for i in range(u.shape[0]):
            s += S[i, j] * u[i]
        tau[j] = s


def _stage_scratch(n: int, k: int, P: int) -> tuple:
    """Work arrays of a stage's costs (:func:`_stage_terms`) for n coordinates, k inputs and P points, made once per
    sweep: q, v (n,), the points' X, Ẋ, J, J̇q̇ ((P, 3), (P, 3), (P, 3, n), (P, 3)), and r, r_x, r_u of a point, a state
    and an input residual (the blocks r_x, r_u never written stay zero)."""
    shapes = [n, n, (P, 3), (P, 3), (P, 3, n), (P, 3)]
    shapes += [3, (3, 2 * n), (3, k), 2 * n, (2 * n, 2 * n), (2 * n, k), k, (k, 2 * n), (k, k)]
    return tuple(np.zeros(shape) for shape in shapes)


@nb.njit(cache=True)
def _points(indices, reals, work, support, links, offsets, x, scratch):
    """The scratch's positions X (P, 3) and Jacobians J (P, 3, n) of a cost's points (``links``, ``offsets``) at x."""
    q, v, X, Xd, J, B = scratch[:6]
    n = q.shape[0]
    if links.shape[0]:
        q[:], v[:] = x[:n], x[n:]
        R, p, S_motion, vel, acc = link_kinematics(indices, reals, work, n, q, v)
        point_terms(R, p, S_motion, vel, acc, support, links, offsets, X, Xd, J, B)
    return X, J


@nb.njit(cache=True)
def _stage_cost(indices, reals, work, support, cost, x, u, scale, scratch):
    """scale·Σ w ½‖r‖² of a packed cost at (x, u) (u unused without input residuals)."""
    links, offsets, targets, point_weights, state_refs, state_weights, input_refs, input_weights = cost
    X, _ = _points(indices, reals, work, support, links, offsets, x, scratch)
    r = scratch[6]
    total = 0.0
    for j in range(links.shape[0]):
        for c in range(3):
            r[c] = X[j, c] - targets[j, c]
        total += residual_cost(point_weights[j], r)
    for j in range(state_weights.shape[0]):
        total += residual_cost(state_weights[j], x - state_refs[j])
    for j in range(input_weights.shape[0]):
        total += residual_cost(input_weights[j], u - input_refs[j])
    return scale * total


@nb.njit(cache=True)
def _stage_terms(indices, reals, work, support, cost, x, u, scale, lx, lu, lxx, luu, lux, inputs, scratch):
    """(l_x, l_u, l_xx, l_uu, l_ux) of scale·Σ w ½‖r‖² of a packed cost at (x, u), zeroed first (the input terms
    only with ``inputs``)."""
    links, offsets, targets, point_weights, state_refs, state_weights, input_refs, input_weights = cost
    n = x.shape[0] // 2
    lx[:], lu[:], lxx[:, :], luu[:, :], lux[:, :] = 0.0, 0.0, 0.0, 0.0, 0.0
    X, J = _points(indices, reals, work, support, links, offsets, x, scratch)
    r, r_x, r_u = scratch[6:9]
    for j in range(links.shape[0]):
        for c in range(3):
            r[c] = X[j, c] - targets[j, c]
            for i in range(n):
                r_x[c, i] = J[j, c, i]
        gauss_newton_add(scale * point_weights[j], r, r_x, r_u, lx, lu, lxx, luu, lux, inputs)
    r, r_x, r_u = scratch[9:12]
    for j in range(state_weights.shape[0]):
        difference_terms(x, state_refs[j], r, r_x)
        gauss_newton_add(scale * state_weights[j], r, r_x, r_u, lx, lu, lxx, luu, lux, inputs)
    r, r_x, r_u = scratch[12:15]
    for j in range(input_weights.shape[0]):
        difference_terms(u, input_refs[j], r, r_u)
        gauss_newton_add(scale * input_weights[j], r, r_x, r_u, lx, lu, lxx, luu, lux, inputs)


def sweep_scratch(n: int, k: int, costs: tuple) -> tuple:
    """The work arrays of :func:`tree_rollout` and :func:`tree_backward` for n coordinates, k inputs and the packed
    ``costs`` (running, terminal), made once per solve."""
    P = max(cost[0].shape[0] for cost in costs)
    shapes = [
        n,
        n,
        n,
        n,
        (n, n),
        (n, n),
        (n, n),
        (n, k),
        (2 * n, 2 * n),
        (2 * n, k),
    ]  # q, v, τ, a, A_q, A_v, A_τ, B, Fx, Fu
    shapes += [2 * n, k, (2 * n, 2 * n), (k, k), (k, 2 * n), 2 * n, (2 * n, 2 * n)]  # lx, lu, lxx, luu, lux, Vx, Vxx
    return tuple(np.zeros(shape) for shape in shapes), _stage_scratch(n, k, P), riccati_scratch(2 * n, k)


@nb.njit(cache=True)
def tree_rollout(tree, S, dt, x0, us, xs_bar, ks, Ks, alpha, feedback, costs, scratch, xs, applied):
    """The rollout from x0 (2n,) under the inputs ``us`` (N, k), or with ``feedback`` under
    u_i = us_i + α ks_i + Ks_i (x_i − x̄_i) (x̄ = ``xs_bar``), into xs (N + 1, 2n) and ``applied`` (N, k), of the
    ``tree`` = (indices, reals, work, support, gravity) (its packed model, a work array, its support matrix and
    gravity); returns (ok, the cost of ``costs`` = (running, terminal), each packed). ok False when a stage's dynamics
    fail (a state not finite, M not positive definite). ``scratch`` from :func:`sweep_scratch`."""
    indices, reals, work, support, gravity = tree
    running, terminal = costs
    own, stage = scratch[0], scratch[1]
    q, v, tau, a = own[:4]
    N, n = us.shape[0], x0.shape[0] // 2
    xs[0] = x0
    cost = 0.0
    for i in range(N):
        if feedback:
            feedback_input(us[i], ks[i], Ks[i], xs[i], xs_bar[i], alpha, applied[i])
        else:
            applied[i] = us[i]
        cost += _stage_cost(indices, reals, work, support, running, xs[i], applied[i], dt, stage)
        q[:], v[:] = xs[i, :n], xs[i, n:]
        _torques(S, applied[i], tau)
        if not forward_dynamics_kernel(indices, reals, work, gravity, q, v, tau, a):
            return False, np.inf
        euler_step(xs[i], a, dt, xs[i + 1])
    if not all_finite(xs[N]):
        return False, np.inf
    return True, cost + _stage_cost(indices, reals, work, support, terminal, xs[N], applied[0], 1.0, stage)


@nb.njit(cache=True)
def tree_backward(tree, S, dt, xs, us, mu, costs, scratch, ks, Ks):
    """The backward pass along (xs (N + 1, 2n), us (N, k)) of the ``tree`` (as :func:`tree_rollout`) with the
    regularisation μ: the gains into ks (N, k) and Ks (N, k, 2n); returns (ok, Σ‖Q_u‖², Σ k·Q_u, Σ ½ kᵀQ_uu k). ok
    False when a stage's Q_uu + μI is not positive definite or its dynamics fail."""
    indices, reals, work, support, gravity = tree
    running, terminal = costs
    own, stage, riccati = scratch
    q, v, tau, a, A_q, A_v, A_tau, B, Fx, Fu, lx, lu, lxx, luu, lux, Vx, Vxx = own
    N, n = us.shape[0], xs.shape[1] // 2
    _stage_terms(indices, reals, work, support, terminal, xs[N], us[0], 1.0, Vx, lu, Vxx, luu, lux, False, stage)
    stop, d1, d2 = 0.0, 0.0, 0.0
    for i in range(N - 1, -1, -1):
        q[:], v[:] = xs[i, :n], xs[i, n:]
        _torques(S, us[i], tau)
        if not forward_derivatives_kernel(indices, reals, work, gravity, q, v, tau, a, A_q, A_v, A_tau):
            return False, stop, d1, d2
        B[:, :] = 0.0
        for r in range(n):  # B = A_τ Sᵀ
            for c in range(B.shape[1]):
                for j in range(n):
                    B[r, c] += A_tau[r, j] * S[c, j]
        euler_derivatives(A_q, A_v, B, dt, Fx, Fu)
        _stage_terms(indices, reals, work, support, running, xs[i], us[i], dt, lx, lu, lxx, luu, lux, True, stage)
        ok, qu2, k1, k2 = riccati_step(Fx, Fu, lx, lu, lxx, luu, lux, Vx, Vxx, mu, ks[i], Ks[i], riccati)
        if not ok:
            return False, stop, d1, d2
        stop, d1, d2 = stop + qu2, d1 + k1, d2 + k2
    return True, stop, d1, d2
