"""Linear state feedback about a static state: u = u* − K x with x = (z, ż) the state of a linear model
(:func:`flexbody.linearize`), and the LQR gain of that model.

The model's coordinates are q = q* + N z on the constraint's tangent space, so the measured (q, v) give
x = (Nᵀ(q − q*), Nᵀv). The LQR gain minimises ∫ xᵀQx + δuᵀRδu dt for ẋ = A x + B δu:
K = R⁻¹BᵀP with P the stabilising solution of the continuous algebraic Riccati equation
AᵀP + PA − PBR⁻¹BᵀP + Q = 0 (scipy's :func:`~scipy.linalg.solve_continuous_are`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from ..errors import ModelError
from .base import Controller

if TYPE_CHECKING:
    from ..solvers.linearization import LinearModel
    from .context import ControlContext

__all__ = ["StateFeedback", "lqr_gain"]


def lqr_gain(model: LinearModel, Q: ArrayLike, R: ArrayLike) -> np.ndarray:
    """K (k, 2p) of the LQR for the actuator inputs of the linear ``model`` (the first k columns of B);
    Q (2p, 2p) or its diagonal, R (k, k) or its diagonal."""
    import scipy.linalg as la

    k = len(model.u)
    A, B = model.A, model.B[:, :k]
    Q = np.diag(np.broadcast_to(np.asarray(Q, dtype=float), (A.shape[0],))) if np.ndim(Q) < 2 else np.asarray(Q, float)
    R = np.diag(np.broadcast_to(np.asarray(R, dtype=float), (k,))) if np.ndim(R) < 2 else np.asarray(R, float)
    if Q.shape != A.shape or R.shape != (k, k):
        raise ModelError(f"lqr_gain: Q must be {A.shape} (or its diagonal) and R ({k}, {k}), got {Q.shape}, {R.shape}")
    P = la.solve_continuous_are(A, B, Q, R)
    return np.linalg.solve(R, B.T @ P)


class StateFeedback(Controller):
    """τ_k = u* − K x, x = (Nᵀ(q − q*), Nᵀv) of a linear ``model`` (:class:`flexbody.solvers.LinearModel`).

    Parameters
    ----------
    model : LinearModel
    gain : array (k, 2p)
        K, e.g. :func:`lqr_gain` [N or N·m per state unit].
    """

    def __init__(self, model: LinearModel, gain: ArrayLike, **kwargs: Any) -> None:
        super().__init__(None, **kwargs)
        self.linear = model
        self.gain = np.asarray(gain, dtype=float)
        k, n_x = len(model.u), model.A.shape[0]
        if self.gain.shape != (k, n_x):
            raise ModelError(f"StateFeedback: gain must be ({k}, {n_x}) (actuators × states), got {self.gain.shape}")

    def compute(self, ctx: ControlContext) -> np.ndarray:
        """τ = Sᵀ(u* − K x) (n,) with x (2p,) the linear model's state of the measured (q, v) at ``ctx``."""
        x = self.linear.state(ctx.q, ctx.v)
        tau_k = self.linear.u - self.gain @ x
        self.diagnostics.update(state_norm=float(np.linalg.norm(x)))
        return ctx.S.T @ tau_k
