"""The consistent start of a generalized-α run (:mod:`flexbody.solvers.generalized_alpha`) [DE-7]: q on
φ(q, t) = 0 and v with Φv + φ_t = 0 by least-change (minimum-norm) corrections, and the consistent q̈₀ and λ₀ of

    [[M, Φᵀ], [Φ, 0]] [q̈; −λ] = [τ − h; −bias],

both through the sparse elimination of :class:`flexbody.linalg.saddle_point.SaddlePointSolver` (no dense n × n
matrix, no dense SVD).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..errors import ConvergenceError
from ..linalg.saddle_point import SaddlePointSolver
from .newton_scales import rows_converged
from .stabilization import worst_rows


def initial_acceleration(ws, tau, solver: SaddlePointSolver) -> tuple[np.ndarray, np.ndarray]:
    """Consistent q̈₀ and λ₀ at the state of workspace ``ws``: [[M, Φᵀ], [Φ, 0]] [q̈; −λ] = [τ − h; −bias]
    [DE-7], by the same sparse elimination as the Newton iterations (no dense n×n matrix)."""
    asm = ws.asm
    M, h = ws.mass_and_forces()
    _, Phi, bias, _ = ws.constraint_rows()
    A_r = M.rigid_block() if asm.sparse else M
    solver.factor(A_r, asm.flexible.mass.matrix, sp.csr_matrix(Phi))
    qdd, y = solver.solve(tau - h, -bias)
    return qdd, -y


def consistent_start(asm, t, q, v, tol: float = 1e-12, max_iterations: int = 20):
    """(q, v, workspace of (t, q, v)): q on φ(q, t) = 0 and v with Φv + φ_t = 0 by least-change (minimum-norm)
    corrections, [[I, Φᵀ], [Φ, 0]] [Δ; y] = [0; −residual], through the sparse elimination (no dense SVD); the
    workspace of the last configuration, at the corrected velocities, is the run's first."""
    solver = SaddlePointSolver(asm.n_rigid)
    eye_r, eye_f = np.eye(asm.n_rigid), sp.identity(asm.flexible.n_dofs, format="csr")
    q, v = q.copy(), v.copy()
    for _ in range(max_iterations):
        ws = asm.workspace(t, q)
        phi, Phi, _, _ = ws.constraint_rows()
        if rows_converged(phi, q, tol):
            break
        solver.factor(eye_r, eye_f, sp.csr_matrix(Phi))
        q += solver.solve(np.zeros(asm.n_dofs), -phi)[0]
    else:
        raise ConvergenceError(
            f"initial configuration: ‖φ‖∞ = {np.max(np.abs(phi)):.3e} after {max_iterations} "
            f"corrections; largest residuals in rows {worst_rows(asm, phi)}",
            [float(np.max(np.abs(phi)))],
        )
    _, Phi, _, phi_t = ws.constraint_rows()
    if Phi.shape[0]:
        solver.factor(eye_r, eye_f, sp.csr_matrix(Phi))
        v += solver.solve(np.zeros(asm.n_dofs), -(Phi @ v + phi_t))[0]
    return q, v, ws.with_velocity(v)
