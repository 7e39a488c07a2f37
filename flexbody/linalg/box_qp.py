"""A dense convex quadratic program with bounds only, solved by the projected Newton method, warm-started.

    minimise f(x) = ½ xᵀH x + gᵀx   subject to   l ≤ x ≤ u,   H symmetric positive definite (n, n)

The method (Bertsekas, "Projected Newton methods for optimization problems with simple constraints", SIAM J.
Control Optim. 20 (1982) 221): at x the *binding* bounds are those x lies within ε of with the gradient ∇f = Hx + g
pushing outwards (∂f/∂x_i > 0 near a lower bound, < 0 near an upper one), ε the smaller of 1 % of the box and the
projected gradient's size; the step is Newton's on the other variables, p_F = −H_FF⁻¹ ∇f_F, the gradient's on the
binding ones, and x ← P(x + αp), P the projection on the box, with α = 1, ½, ¼, … until Armijo's decrease along the
projection arc (σ = 1e-4). Many bounds join or leave per iteration; once the binding set is the optimum's, the full
Newton step solves the problem exactly. It
stops when the projected gradient x − P(x − ∇f) vanishes (to 1e-12 of the problem's scale): the optimality
conditions of the bounded problem. The iterates stay feasible, so a solve stopped by its deadline still returns a
point within the bounds, and better than its start.

A warm start (the previous solution of a receding-horizon problem, shifted) typically ends the solve in one or two
iterations. Meant for the small dense problems of model-predictive control (up to a few hundred variables).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..errors import FlexbodyError

__all__ = ["BoxQPResult", "solve_box_qp"]


@dataclass(frozen=True)
class BoxQPResult:
    """x (n,) the solution (or the last feasible iterate); iterations; optimal (False when stopped by the deadline or
    the iteration limit)."""

    x: np.ndarray
    iterations: int
    optimal: bool


def solve_box_qp(
    H: np.ndarray,
    g: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    *,
    start: np.ndarray | None = None,
    deadline: float | None = None,
    max_iterations: int | None = None,
) -> BoxQPResult:
    """The minimiser of ½xᵀHx + gᵀx over lower ≤ x ≤ upper (module docstring).

    ``start`` (n,): a warm start, clipped into the bounds;
    ``deadline``: a :func:`time.perf_counter` time after which the solve stops at its current feasible iterate;
    ``max_iterations``: default 10 n + 20. FlexbodyError for bounds that cross or shapes that disagree.
    """
    n = g.shape[0]
    if H.shape != (n, n) or lower.shape != (n,) or upper.shape != (n,):
        raise FlexbodyError(f"solve_box_qp: H {H.shape}, g {g.shape}, bounds {lower.shape} and {upper.shape} disagree")
    if np.any(lower > upper):
        i = int(np.argmax(lower > upper))
        raise FlexbodyError(f"solve_box_qp: lower bound {lower[i]:.6g} above upper bound {upper[i]:.6g} at {i}")
    x = np.clip(np.zeros(n) if start is None else np.asarray(start, dtype=float), lower, upper)
    limit = 10 * n + 20 if max_iterations is None else int(max_iterations)
    Hx = H @ x
    scale = 1.0 + float(np.abs(g).max(initial=0.0)) + float(np.abs(Hx).max(initial=0.0))
    width = float(np.max(np.where(np.isfinite(upper - lower), upper - lower, 0.0), initial=0.0))
    reach = 1e-2 * (width if width > 0 else 1.0)  # ε of the ε-binding bounds, at most 1 % of the box [x's unit]
    iteration = 0
    for iteration in range(1, limit + 1):
        grad = Hx + g
        gap = float(np.abs(x - np.clip(x - grad, lower, upper)).max(initial=0.0))  # ‖x − P(x − ∇f)‖∞
        if gap <= 1e-12 * scale:
            return BoxQPResult(x, iteration - 1, True)
        if deadline is not None and iteration > 1 and time.perf_counter() > deadline:
            break
        near = min(reach, gap)
        binding = ((x <= lower + near) & (grad > 0)) | ((x >= upper - near) & (grad < 0))
        free = ~binding
        step = -grad  # the gradient step on the binding bounds, Newton's on the others [Bertsekas (1982) eq. (32)]
        step[free] = -np.linalg.solve(H[free][:, free], grad[free])
        x, Hx = _projected_search(H, g, x, Hx, grad, step, free, lower, upper)
    return BoxQPResult(x, iteration, False)


def _projected_search(H, g, x, Hx, grad, step, free, lower, upper, sigma: float = 1e-4):
    """(x⁺, Hx⁺): the first of x(α) = P(x + αp), α = 1, ½, …, with f(x) − f(x(α)) ≥ σ(α∇f_Fᵀ(−p_F) + ∇f_Bᵀ(x −
    x(α))_B) (Armijo along the projection arc, F the free and B the binding variables) [Bertsekas (1982) eq. (34)]."""
    f = 0.5 * float(x @ Hx) + float(g @ x)
    newton = -float(grad[free] @ step[free])
    binding = ~free
    alpha = 1.0
    for _ in range(60):
        trial = np.clip(x + alpha * step, lower, upper)
        H_trial = H @ trial
        decrease = f - 0.5 * float(trial @ H_trial) - float(g @ trial)
        if decrease >= sigma * (alpha * newton + float(grad[binding] @ (x - trial)[binding])):
            return trial, H_trial
        alpha *= 0.5
    return x, Hx
