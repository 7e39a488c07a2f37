"""The prediction model of model-predictive control: a model's dynamics linearised at one state, exact over a control
period with the inputs held, and its outputs over a horizon as an affine function of the inputs.

At (x̄, ū), x = (q, v) of the model (n coordinates, no Lie-group coordinates: q̇ = v) and ū (k,) the actuator
inputs, the constrained forward dynamics a(q, v, Sᵀu) and its exact derivatives
(:func:`~flexbody.solvers.dynamics_derivatives.forward_derivatives`) give, for ξ = x − x̄ and w = u − ū,

    ξ̇ = f̄ + A ξ + B w,   f̄ = (v̄, ā),   A = [[0, I], [∂a/∂q, ∂a/∂v]],   B = [[0], [∂a/∂τ Sᵀ]].

Held over a period P, the exact discrete step is ξ⁺ = Φ ξ + Γ w + γ, with Φ = e^{AP}, Γ = ∫₀ᴾ e^{As} ds B,
γ = ∫₀ᴾ e^{As} ds f̄, read off one matrix exponential of the augmented matrix [[A, B, f̄], [0, 0, 0]]·P
(Van Loan, IEEE TAC 23 (1978) 395). The task coordinates y(q) ≈ ȳ + C ξ with C = [J, 0] (J the task's Jacobian),
optionally followed by chosen velocities (rows [0, e_iᵀ]), e.g. a flexible body's modal rates to be damped.

Over N periods, ξ_j = Φʲ ξ₀ + Σ_{i<j} Φ^{j−1−i} (Γ w_i + γ), so the stacked outputs Y = (y_1 … y_N) are

    Y = O_x ξ₀ + O_u W + o,   O_x = [C Φʲ]_j,   O_u = [C Φ^{j−1−i} Γ]_{j>i},   o = [ȳ + C Σ_{m<j} Φᵐ γ]_j

(the condensed, or "single-shooting", form of linear MPC: Maciejowski, *Predictive Control with Constraints*,
2002, sec. 2.6).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import scipy.linalg as la

from ..errors import ModelError
from ..solvers.dynamics_derivatives import forward_derivatives
from ..system.state import State

if TYPE_CHECKING:
    from ..control.tasks import Task
    from ..system import AssembledSystem

__all__ = ["AffineStep", "Horizon", "linearized_step", "horizon_of"]


@dataclass(frozen=True)
class AffineStep:
    """ξ⁺ = Φ ξ + Γ w + γ over one period, y = ȳ + C ξ, about x̄ = (q̄, v̄) (2n,) and ū (k,) (module docstring).

    Phi (2n, 2n), Gamma (2n, k), gamma (2n,) [the state's units per period]; C (r, 2n); x, u, y the linearisation
    point, its inputs [N or N·m] and its task coordinates."""

    Phi: np.ndarray
    Gamma: np.ndarray
    gamma: np.ndarray
    C: np.ndarray
    x: np.ndarray
    u: np.ndarray
    y: np.ndarray


@dataclass(frozen=True)
class Horizon:
    """The outputs over N periods, Y = O_x ξ₀ + O_u W + o (module docstring): free (N r, 2n), forced (N r, N k),
    offset (N r,), the step they come from."""

    free: np.ndarray
    forced: np.ndarray
    offset: np.ndarray
    step: AffineStep


def linearized_step(
    model: AssembledSystem,
    t: float,
    q: np.ndarray,
    v: np.ndarray,
    u: np.ndarray,
    task: Task,
    period: float,
    velocities: np.ndarray | None = None,
) -> AffineStep:
    """The exact held-input step of ``model`` linearised at (t, q, v) with actuator inputs ``u`` (k,), and the task's
    linear output, over ``period`` [s] (module docstring); with ``velocities`` (indices of coordinates) their
    velocities are outputs too, after the task's."""
    n = int(model.n_dofs)
    if q.shape != (n,) or v.shape != (n,):
        raise ModelError(f"the prediction model has {n} coordinates and velocities, got q {q.shape} and v {v.shape}")
    S = np.asarray(model.S, dtype=float)
    d = forward_derivatives(model, State(t, q, v), S.T @ u)
    k = S.shape[0]
    Z = np.zeros((2 * n + k + 1, 2 * n + k + 1))
    Z[:n, n : 2 * n] = np.eye(n)
    Z[n : 2 * n, :n], Z[n : 2 * n, n : 2 * n] = d.da_dq, d.da_dv
    Z[n : 2 * n, 2 * n : 2 * n + k] = d.da_dtau @ S.T
    Z[:n, -1], Z[n : 2 * n, -1] = v, d.a
    E = la.expm(Z * period)
    terms = task.evaluate(model.workspace(t, q, v))
    chosen = np.zeros(0, dtype=int) if velocities is None else np.asarray(velocities, dtype=int)
    C = np.zeros((task.n_rows + chosen.size, 2 * n))
    C[: task.n_rows, :n] = terms.J
    C[task.n_rows + np.arange(chosen.size), n + chosen] = 1.0
    y = np.concatenate([terms.x, v[chosen]])
    x = np.concatenate([q, v])
    return AffineStep(E[: 2 * n, : 2 * n], E[: 2 * n, 2 * n : -1], E[: 2 * n, -1], C, x, np.array(u, float), y)


def horizon_of(step: AffineStep, N: int) -> Horizon:
    """The condensed outputs of ``step`` over N periods (module docstring)."""
    r, k = step.C.shape[0], step.Gamma.shape[1]
    CPhi = np.empty((N + 1, r, step.Phi.shape[0]))  # C Φʲ, j = 0 … N
    CPhi[0] = step.C
    for j in range(1, N + 1):
        CPhi[j] = CPhi[j - 1] @ step.Phi
    pulses = CPhi[:N] @ step.Gamma  # C Φᵐ Γ, m = 0 … N − 1
    drifts = np.cumsum(CPhi[:N] @ step.gamma, axis=0)  # C Σ_{m<j} Φᵐ γ, j = 1 … N
    lag = np.arange(N)[:, None] - np.arange(N)[None, :]  # output y_{j+1} takes Φ^{j−i} Γ w_i, i ≤ j
    forced = np.where((lag >= 0)[:, None, :, None], pulses[np.clip(lag, 0, None)].transpose(0, 2, 1, 3), 0.0)
    return Horizon(CPhi[1:].reshape(N * r, -1), forced.reshape(N * r, N * k), (step.y + drifts).reshape(N * r), step)
