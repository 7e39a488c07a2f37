"""Geometric stiffening of a reduced body by the quasi-static stresses of its frame's inertia and gravity loads.

A body that spins or hangs is stressed by the centrifugal and gravity fields; that stress stiffens its
bending (a spinning blade, a hanging chain) and is missing from the linear elastic force K_r η. Its loads per
unit mass in frame axes, b(x̄) = g − ω × (ω × x̄) = g − (W − tr(W) I) x̄ with W = ωωᵀ, are linear in the nine
numbers c = (g₁, g₂, g₃, W₁₁, W₂₂, W₃₃, W₁₂, W₁₃, W₂₃), so each unit field b_i gives, once (Wallrapp,
Mech. Struct. Mach. 22 (1994) 283, the "geometric stiffness" of the standard input data):

    K u_i = f_i = M b_i (clamp held; a free body: inertia relief, f_i less its rigid-body part),    S_i = ∂S/∂q · u_i,
       K_G,i = Ψᵀ (K_σ(S_i) ⊗ I₃) Ψ,

with S_i the PK2 stress of the static response at the Gauss points (central differences of the body's stress,
exact for St. Venant–Kirchhoff) and K_σ its initial-stress stiffness (:meth:`FlexibleBody.stress_stiffness`).
Only the stress part is taken: the response's displacement itself is not added to the body (its bending
part, e.g. the sag under gravity, is what η describes). At a state the elastic force is (K_r + Σ_i c_i K_G,i) η.
The loads of the frame's linear and angular accelerations are not included (they would make the stiffness depend
on the accelerations being solved for).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..linalg.sparse_factor import SparseFactor

_UNIT_W = [np.diag([1.0, 0, 0]), np.diag([0, 1.0, 0]), np.diag([0, 0, 1.0])] + [
    np.outer(np.eye(3)[j], np.eye(3)[k]) + np.outer(np.eye(3)[k], np.eye(3)[j]) for j, k in ((0, 1), (0, 2), (1, 2))
]


def geometric_stiffness(
    body, shapes: np.ndarray, clamp_dofs: np.ndarray, X: np.ndarray, R0: np.ndarray, lowest: float | None = None
) -> np.ndarray:
    """K_G,i (9, r, r) of ``body`` with world-axes shapes Ψ (3N, r), the coordinates ``clamp_dofs`` held (none:
    inertia relief, ``lowest`` the body's lowest elastic ω² [1/s²]), frame positions X̄ (N, 3) of the nodes and
    the frame's rotation R0 at the reference (fields b_i in frame axes)."""
    q0 = body.reference_coordinates()
    M = body.mass_matrix()
    fields = [np.tile(e, (len(X), 1)) for e in np.eye(3)] + [-(X @ (W - np.trace(W) * np.eye(3)).T) for W in _UNIT_W]
    loads = np.column_stack([M @ (b @ R0.T).ravel() for b in fields])
    if clamp_dofs.size:
        responses = _clamped_responses(body, loads, clamp_dofs)
    else:
        assert lowest is not None, "inertia relief of a free body needs its lowest elastic ω²"
        responses = _relieved_responses(body, loads, lowest)
    size = np.ptp(body.mesh.points, axis=0).max()
    psi = shapes.reshape(len(X), 3, -1)
    out = np.empty((len(fields), shapes.shape[1], shapes.shape[1]))
    for i, u in enumerate(responses.T):
        eps = 1e-4 * size / max(np.abs(u).max(), 1e-300)
        stress = (
            body.gauss_point_fields(q0 + eps * u)["pk2_stress"] - body.gauss_point_fields(q0 - eps * u)["pk2_stress"]
        ) / (2 * eps)
        K_sigma = body.stress_stiffness(stress)
        G = sum(psi[:, k, :].T @ (K_sigma @ psi[:, k, :]) for k in range(3))
        out[i] = 0.5 * (G + G.T)
    return out


def _clamped_responses(body, loads: np.ndarray, clamp_dofs: np.ndarray) -> np.ndarray:
    """u (3N, k) with K u = f on the free coordinates, the clamp held (one CHOLMOD factor)."""
    K = sp.csr_matrix(body.tangent(body.reference_coordinates()))
    free = np.setdiff1d(np.arange(body.n_dofs), clamp_dofs)
    u = np.zeros(loads.shape)
    u[free] = SparseFactor().factor(K[free][:, free].tocsc()).solve(loads[free])
    return u


def _relieved_responses(body, loads: np.ndarray, lowest: float) -> np.ndarray:
    """u (3N, k) of a free body under inertia relief: f′ = f − MR(RᵀMR)⁻¹Rᵀf (the rigid-body acceleration the
    loads give, R the six rigid-body motions at the reference) balances each load, K u = f′ is solved with the
    factor of K + σM (σ = 10⁻² ω₁²) and refinement, and u is made M-orthogonal to R."""
    K = sp.csr_matrix(body.tangent(body.reference_coordinates()))
    M = body.mass_matrix()
    X = body.mesh.points
    R = np.zeros((body.n_dofs, 6))
    for j, e in enumerate(np.eye(3)):
        R[:, j] = np.tile(e, len(X))
        R[:, 3 + j] = np.cross(e, X).ravel()
    MR = M @ R
    gram = R.T @ MR
    relieved = loads - MR @ np.linalg.solve(gram, R.T @ loads)
    factor = SparseFactor().factor((K + 1e-2 * lowest * M).tocsc())
    u = np.zeros(loads.shape)
    for _ in range(8):  # each pass shrinks the error by σ/(ω₁² + σ) ≤ 1/101
        u += factor.solve(relieved - K @ u)
    return u - R @ np.linalg.solve(gram, MR.T @ u)
