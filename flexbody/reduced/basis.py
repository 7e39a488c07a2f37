"""Bases of reduced-order flexible bodies: Craig–Bampton (interface coordinates plus fixed-interface normal
modes) and free–free normal modes.

With the body's coordinates split into interface (I: 3 per interface node) and interior (O) ones, and K, M its
tangent stiffness at the reference configuration and its constant mass (linear elasticity there):

    constraint modes   Ψ = −K_OO⁻¹ K_OI          (the interior's static response to unit interface motions)
    normal modes       K_OO Φ = M_OO Φ Ω²,  ΦᵀM_OOΦ = I   (the k lowest, interface held)
    basis              T = [[I, 0], [Ψ, Φ]]  (n, n_I + k),   u = T [u_I; η]
    reduced matrices   K_r = TᵀKT,  M_r = TᵀMT

(Craig & Bampton, AIAA J. 6 (1968) 1313). The interior's static response to interface motions is exact in the
span of T, and the reduced model's frequencies bound the full model's from above (Rayleigh–Ritz), converging
as k grows. K_OO is factored once by CHOLMOD; the normal modes come from shift-invert Lanczos (ARPACK) with a
fixed start vector.

Free–free modes: the k lowest elastic solutions of K φ = M φ ω² with nothing held (the six rigid-body modes,
ω = 0, left out). They are M-orthogonal to the rigid-body motions, so a floating frame that carries them
satisfies the linearised mean-axis conditions (Agrawal & Shabana 1985). Either basis feeds a
:class:`~flexbody.reduced.body.ReducedBody`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from ..errors import FlexbodyError
from ..linalg.sparse_factor import SparseFactor

if TYPE_CHECKING:
    from ..fem.flexible_body import FlexibleBody

__all__ = ["ReducedBasis", "craig_bampton", "free_modes"]


@dataclass(frozen=True)
class ReducedBasis:
    """A reduced basis of one flexible body: Craig–Bampton (:func:`craig_bampton`) or free–free modes
    (:func:`free_modes`, no interface).

    Attributes
    ----------
    body : FlexibleBody
        The body it reduces (mesh, material, reference configuration).
    basis : ndarray (n, n_I + k)
        T: the body's coordinate change u = T [u_I; η] (n = 3 × nodes) [m per m or per modal unit].
    mass, stiffness : ndarray (n_I + k, n_I + k)
        M_r = TᵀMT [kg], K_r = TᵀKT [N/m].
    interface : ndarray (n_I,)
        The body's coordinate indices of the interface (3 per interface node, node-major).
    fixed_interface_frequencies : ndarray (k,)
        Ω/2π [Hz] of the normal modes (interface held; free–free frequencies without an interface).
    """

    body: FlexibleBody = field(repr=False, compare=False)
    basis: np.ndarray = field(repr=False)
    mass: np.ndarray = field(repr=False)
    stiffness: np.ndarray = field(repr=False)
    interface: np.ndarray
    fixed_interface_frequencies: np.ndarray

    def frequencies(self, held=()) -> np.ndarray:
        """Natural frequencies [Hz] of the reduced model with the interface coordinates ``held`` (indices into
        ``interface``) fixed and the others free; zero-frequency (rigid-body) modes included, ascending."""
        import scipy.linalg as la

        keep = np.setdiff1d(np.arange(self.mass.shape[0]), np.asarray(held, dtype=int))
        values = la.eigh(self.stiffness[np.ix_(keep, keep)], self.mass[np.ix_(keep, keep)], eigvals_only=True)
        return np.sign(values) * np.sqrt(np.abs(values)) / (2 * np.pi)


def craig_bampton(body, interface, n_modes: int, *, shift: float | None = None) -> ReducedBasis:
    """The Craig–Bampton basis of ``body`` with the nodes ``interface`` (a node or face set name, or node
    indices) and ``n_modes`` fixed-interface normal modes, about the reference configuration.

    Raises
    ------
    FlexbodyError
        No interface node, a bad n_modes, or more modes than interior coordinates.
    """
    nodes = np.unique(body.nodes(interface))
    if nodes.size == 0:
        raise FlexbodyError(f"craig_bampton: body {body.name!r}: the interface {interface!r} has no nodes")
    i_dofs = (3 * nodes[:, None] + np.arange(3)).ravel()
    o_dofs = np.setdiff1d(np.arange(body.n_dofs), i_dofs)
    if not isinstance(n_modes, (int, np.integer)) or not 0 <= n_modes < o_dofs.size:
        raise FlexbodyError(
            f"craig_bampton: n_modes must be an integer in 0..{o_dofs.size - 1} (interior "
            f"coordinates of body {body.name!r}), got {n_modes!r}"
        )
    K = sp.csr_matrix(body.tangent(body.reference_coordinates()))
    M = sp.csr_matrix(body.mass_matrix())
    K_oo, K_oi = K[o_dofs][:, o_dofs].tocsc(), K[o_dofs][:, i_dofs]
    M_oo = M[o_dofs][:, o_dofs].tocsc()
    factor = SparseFactor().factor(K_oo)
    psi = -factor.solve(K_oi.toarray())
    sigma = 0.0 if shift is None else float(shift)
    shifted = factor if sigma == 0.0 else SparseFactor().factor((K_oo - sigma * M_oo).tocsc())
    phi, omega2 = _normal_modes(shifted, K_oo, M_oo, int(n_modes), sigma)
    T = np.zeros((body.n_dofs, i_dofs.size + phi.shape[1]))
    T[i_dofs, np.arange(i_dofs.size)] = 1.0
    T[np.ix_(o_dofs, np.arange(i_dofs.size))] = psi
    T[np.ix_(o_dofs, np.arange(i_dofs.size, T.shape[1]))] = phi
    M_r, K_r = T.T @ (M @ T), T.T @ (K @ T)
    return ReducedBasis(
        body, T, 0.5 * (M_r + M_r.T), 0.5 * (K_r + K_r.T), i_dofs, np.sqrt(np.maximum(omega2, 0.0)) / (2 * np.pi)
    )


def free_modes(body, n_modes: int) -> ReducedBasis:
    """The ``n_modes`` lowest elastic free–free modes of ``body`` about its reference configuration, mass
    normalised (φᵀMφ = 1), as a :class:`ReducedBasis` without interface; the six rigid-body modes are left out.

    K is singular (rigid-body motions), so the shift-invert Lanczos iteration runs at a small negative shift
    σ = −10⁻⁴ ω̄², ω̄² = mean(diag K)/mean(diag M), where K − σM is positive definite.

    Raises
    ------
    FlexbodyError
        A bad n_modes, or a body that does not have exactly six zero-frequency modes (a mechanism).
    """
    K = sp.csr_matrix(body.tangent(body.reference_coordinates()))
    M = sp.csr_matrix(body.mass_matrix())
    if not isinstance(n_modes, (int, np.integer)) or not 1 <= n_modes <= body.n_dofs - 7:
        raise FlexbodyError(
            f"free_modes: n_modes must be an integer in 1..{body.n_dofs - 7} (body {body.name!r}), got {n_modes!r}"
        )
    scale = float(K.diagonal().mean() / M.diagonal().mean())
    factor = SparseFactor().factor(sp.csc_matrix(K + 1e-4 * scale * M))
    phi, omega2 = _normal_modes(factor, K.tocsc(), M.tocsc(), int(n_modes) + 6, -1e-4 * scale)
    rigid = np.abs(omega2[:6]) <= 1e-8 * scale
    if not rigid.all() or omega2[6] <= 1e-8 * scale:
        raise FlexbodyError(
            f"free_modes: body {body.name!r} does not have exactly six rigid-body modes "
            f"(lowest ω² / ω̄² = {np.round(omega2[:8] / scale, 12).tolist()})"
        )
    phi, omega2 = phi[:, 6:], omega2[6:]
    M_r, K_r = phi.T @ (M @ phi), phi.T @ (K @ phi)
    return ReducedBasis(
        body,
        phi,
        0.5 * (M_r + M_r.T),
        0.5 * (K_r + K_r.T),
        np.zeros(0, np.int64),
        np.sqrt(np.maximum(omega2, 0.0)) / (2 * np.pi),
    )


def _normal_modes(factor: SparseFactor, K, M, k: int, sigma: float):
    """(Φ (n, k) with ΦᵀMΦ = I, ω² (k,)) of K Φ = M Φ ω², the k nearest σ from above, by shift-invert Lanczos
    with ``factor`` the factor of K − σM."""
    from scipy.sparse.linalg import LinearOperator, eigsh

    n = K.shape[0]
    if k == 0:
        return np.zeros((n, 0)), np.zeros(0)
    op = LinearOperator((n, n), matvec=lambda x: factor.solve(np.asarray(x).ravel()), dtype=float)
    v0 = np.random.default_rng(0).standard_normal(n)
    values, vectors = eigsh(
        LinearOperator((n, n), matvec=lambda x: K @ x, dtype=float), k=k, M=M, sigma=sigma, which="LM", OPinv=op, v0=v0
    )
    order = np.argsort(values)
    vectors = vectors[:, order]
    vectors /= np.sqrt(np.einsum("ij,ij->j", vectors, M @ vectors))
    return vectors, values[order]
