"""A state-space model (A, B, C, D) of a constrained, controlled rigid–flexible system about a static state.

About an equilibrium (q*, λ*, u*) of r(q, v, λ) − B_u u = 0, φ(q) = 0 (r the residual of
:mod:`flexbody.solvers.constrained_equations`, B_u the input map), small motions q = q* + N z stay on the
constraint's tangent space, N an orthonormal basis of ker Φ(q*) (rank-revealing SVD), and obey

    M_z z̈ + D_z ż + K_z z = N ᵀB_u δu,   M_z = NᵀMN, D_z = Nᵀ(∂r/∂v)N, K_z = Nᵀ(∂r/∂q)N       [DE-10..15]

(the constraint forces drop out: Nᵀ Φᵀ = 0). With the state x = (z, ż) (2p,) and outputs y = J_task N z:

    A = [[0, I], [−M_z⁻¹K_z, −M_z⁻¹D_z]],   B = [[0], [M_z⁻¹NᵀB_u]],   C = [J N, 0],   D = 0.

∂r/∂q and ∂r/∂v are the analytic tangents of the static and implicit solvers: the flexible bodies' tangent and
Kelvin–Voigt damping (sparse, exact), the force elements' Jacobians, and for the joint rows the trees' analytic
derivatives and the constraints' Hessians −∂(Φᵀλ*)/∂q where every term on them has one, else central differences
(at v = 0 there are no Coriolis terms; :mod:`flexbody.solvers.constrained_equations`). The
eigenvalues of A are ±iω of :func:`flexbody.solvers.modal.modal_analysis` when nothing dissipates. Inputs:
the actuated joint forces (B_u = Sᵀ) and, optionally, forces on flexible nodes; outputs: task coordinates.
The model is dense (2p × 2p): meant for controller design on systems of up to a few thousand coordinates.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import scipy.linalg as la
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ..dynamics.projection import nullspace_basis
from ..errors import FlexbodyError
from ..system.description import as_assembled, refuse_contacts
from ..threads import one_blas_thread
from .constrained_statics import StaticEquations
from .modal import linearisation_point

if TYPE_CHECKING:
    from ..control.tasks import Task
    from ..fem.flexible_body import FlexibleBody
    from ..system import AssembledSystem, State, System
    from .constrained_statics import Equilibrium

__all__ = ["LinearModel", "linearize"]


@dataclass(frozen=True)
class LinearModel:
    """ẋ = A x + B δu, y = C x + D δu about (q*, u*), x = (z, ż), q = q* + N z.

    Attributes
    ----------
    A (2p, 2p), B (2p, k), C (r, 2p), D (r, k) : ndarray
    basis : ndarray (n, p), N: orthonormal basis of ker Φ(q*) (z [m or rad in the mix of q's units])
    q, lam, u : ndarray, the state, its multipliers and the inputs held there [N, N·m]
    input_labels (k), output_labels (r) : list[str]
    mass, damping, stiffness : ndarray (p, p), M_z, D_z, K_z of the second-order form (e.g. to weight an LQR
        by modal energy)
    metadata : dict (static residual of the state, p)
    """

    A: np.ndarray
    B: np.ndarray
    C: np.ndarray
    D: np.ndarray
    basis: np.ndarray
    q: np.ndarray
    lam: np.ndarray
    u: np.ndarray
    input_labels: list
    output_labels: list
    mass: np.ndarray | None = field(default=None, repr=False)
    damping: np.ndarray | None = field(default=None, repr=False)
    stiffness: np.ndarray | None = field(default=None, repr=False)
    metadata: dict = field(default_factory=dict)

    def coordinates(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(q, v) (n,) of a state x (2p,) of the model."""
        p = self.basis.shape[1]
        return self.q + self.basis @ x[:p], self.basis @ x[p:]

    def state(self, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """x (2p,) of (q, v) (n,): the projection on the basis."""
        return np.concatenate([self.basis.T @ (np.asarray(q) - self.q), self.basis.T @ np.asarray(v)])


@one_blas_thread
def linearize(
    model: System | AssembledSystem,
    state: Equilibrium | State | ArrayLike | None = None,
    *,
    inputs: ArrayLike | None = None,
    nodal_forces: Sequence[tuple[FlexibleBody, int, ArrayLike]] = (),
    outputs: Sequence[Task] = (),
    t: float = 0.0,
    load_steps: int = 1,
) -> LinearModel:
    """The linear state-space model of ``model`` about a static state.

    Parameters
    ----------
    model : System or AssembledSystem
    state : None, Equilibrium, array (n,) or State
        None: the static equilibrium under the loads, gravity and the inputs ``inputs``; an Equilibrium: that
        one, with its multipliers; else the coordinates to linearise about (multipliers from the static
        balance, see :func:`~flexbody.solvers.modal.modal_analysis`).
    inputs : array (k,), optional
        The actuator inputs u* held at the state [N, N·m] (default zero; ``fb.holding_inputs`` gives the
        ones that hold a posture).
    nodal_forces : sequence of (body, node, direction)
        Extra inputs: a force [N] on node ``node`` (index) of flexible ``body`` along ``direction`` (3,).
    outputs : sequence of Task
        Outputs y: the tasks' coordinates (their Jacobians at q*).
    """
    asm = as_assembled(model, "linearize")
    refuse_contacts(asm, "linearize")
    k = asm.S.shape[0]
    u = np.zeros(k) if inputs is None else np.asarray(inputs, dtype=float).reshape(-1)
    if u.shape != (k,) or not np.all(np.isfinite(u)):
        raise FlexbodyError(
            f"linearize: inputs must be {k} finite numbers (actuators {asm.actuated_labels}), got shape {u.shape}"
        )
    B_u, input_labels = _input_map(asm, nodal_forces)
    q, lam, residual = linearisation_point(asm, state, asm.S.T @ u, t, load_steps, who="linearize")
    ws = asm.workspace(t, q)
    K, Dm, M = _second_order_terms(ws, lam)
    Phi = ws.constraint_rows()[1]
    N = nullspace_basis(Phi)
    p = N.shape[1]
    Mz, Kz, Dz = N.T @ (M @ N), N.T @ (K @ N), N.T @ (Dm @ N)
    Mz = 0.5 * (Mz + Mz.T)
    factor = la.cho_factor(Mz)
    A = np.zeros((2 * p, 2 * p))
    A[:p, p:] = np.eye(p)
    A[p:, :p] = -la.cho_solve(factor, Kz)
    A[p:, p:] = -la.cho_solve(factor, Dz)
    B = np.zeros((2 * p, B_u.shape[1]))
    B[p:] = la.cho_solve(factor, N.T @ B_u)
    C, output_labels = _output_map(asm, ws, outputs, N)
    D = np.zeros((C.shape[0], B.shape[1]))
    return LinearModel(
        A,
        B,
        C,
        D,
        N,
        q,
        lam,
        u,
        input_labels,
        output_labels,
        Mz,
        Dz,
        Kz,
        {"static_residual": residual, "p": int(p), "t": float(t)},
    )


def _second_order_terms(ws, lam):
    """(K = ∂r/∂q, D = ∂r/∂v, M) at the static state of workspace ``ws`` (v = 0) as dense (n, n) arrays."""
    asm, t, q = ws.asm, ws.t, ws.q
    statics = StaticEquations(asm, t)
    K_r, K_f = statics.tangent(q, lam, 1.0, ws)
    n, n_r = asm.n_dofs, asm.n_rigid
    moving = asm.workspace(t, q, np.zeros(n))  # ∂r/∂v at v = 0 (the damping matrices; not "at rest")
    D_r, D_f = statics.equations.iteration_matrix(moving, np.zeros(n), lam, c_m=0.0, c_v=1.0, c_q=0.0)
    K, D = np.zeros((n, n)), np.zeros((n, n))
    M = ws.mass_matrix()
    if asm.sparse:
        fs = asm.flexible.slice
        K[fs, fs] = K_f.toarray()
        D[fs, fs] = D_f.toarray()
        M = M.tocsc().toarray()  # the model is dense by design (module docstring)
    if n_r:
        K[:n_r, :n_r] = K_r
        D[:n_r, :n_r] = D_r
    return K, D, np.asarray(M)


def _input_map(asm, nodal_forces):
    """B_u (n, k + j): the actuators' columns Sᵀ, then one column per nodal force; and the labels."""
    columns, labels = [np.asarray(asm.S, dtype=float).T], list(asm.actuated_labels)
    for item in nodal_forces:
        try:
            body, node, direction = item
        except (TypeError, ValueError):
            raise FlexbodyError(f"linearize: a nodal force is (body, node index, direction), got {item!r}") from None
        if body not in asm.bodies:
            raise FlexbodyError(
                f"linearize: nodal force on {getattr(body, 'name', body)!r}, not a flexible body of the system"
            )
        node = int(node)
        if not 0 <= node < body.n_nodes:
            raise FlexbodyError(f"linearize: body {body.name!r} has nodes 0..{body.n_nodes - 1}, not {node}")
        d = np.asarray(direction, dtype=float).reshape(3)
        column = np.zeros((asm.n_dofs, 1))
        start = asm.offsets[body] + 3 * node
        column[start : start + 3, 0] = d
        columns.append(column)
        labels.append(f"{body.name}.n{node}.force")
    return np.hstack(columns), labels


def _output_map(asm, ev, outputs, N):
    """C (r, 2p) = [J N, 0] of the tasks and their row labels."""
    p = N.shape[1]
    rows, labels = [], []
    for task in outputs:
        terms = task.evaluate(ev)
        J = terms.J.toarray() if sp.issparse(terms.J) else np.asarray(terms.J)
        rows.append(np.hstack([J @ N, np.zeros((J.shape[0], p))]))
        labels += list(terms.row_labels)
    return (np.vstack(rows) if rows else np.zeros((0, 2 * p))), labels
