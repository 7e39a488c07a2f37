"""Independent oracle: total-Lagrangian hyperelasticity assembled by scikit-fem's own forms.

Residual and tangent of k(u)_a = ∫_Ω0 P(F) : ∇_X N_a dV with F = I + ∇_X u and P = F S, written as skfem
``LinearForm`` / ``BilinearForm`` on ``ElementVector(ElementHex1())`` (``MeshHex1``) or
``ElementVector(ElementHex2())`` (``MeshHex2``). Nothing here imports flexbody; the only link between the
two codes is a permutation found by matching node coordinates.

Materials (λ = Eν/((1+ν)(1−2ν)), μ = E/(2(1+ν))):

* St. Venant–Kirchhoff: S = λ tr(E) I + 2μ E,  E = (FᵀF − I)/2,
  dS = λ tr(dE) I + 2μ dE.
* compressible Neo-Hookean, W = μ/2 (I1 − 3) − μ ln J + λ/2 (ln J)²: S = μ(I − C⁻¹) + λ ln J C⁻¹,
  dS = λ (C⁻¹ : dE) C⁻¹ + 2(μ − λ ln J) C⁻¹ dE C⁻¹.

Tangent: dP = dF S + F dS with dE = sym(Fᵀ dF), dF = ∇_X du.

Quadrature: skfem builds hexahedral rules as tensor products of a 1-D Gauss–Legendre rule with
ceil((intorder + 1)/2) points, where intorder ≤ 1 is raised to 2.  So ``intorder = 2n − 1`` gives n
points per direction for n ≥ 2 (2×2×2 from intorder 2 or 3, 3×3×3 from 4 or 5); a 1-point rule is
not reachable through ``intorder`` and is passed explicitly here.

Kinematic quantities at quadrature points (F, S, C⁻¹, ln J) are evaluated once per call with numpy
from ``basis.interpolate(u)`` and handed to the forms as extra fields, which is the efficient way to use
skfem for a nonlinear material (otherwise the tangent form would recompute them for every local
(i, j) pair).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.spatial import cKDTree
from skfem import (
    Basis,
    BilinearForm,
    ElementHex1,
    ElementHex2,
    ElementTetP1,
    ElementTetP2,
    ElementVector,
    LinearForm,
    MeshHex1,
    MeshHex2,
    MeshTet,
    condense,
    solve,
)
from skfem.helpers import ddot, grad

# --------------------------------------------------------------------------- tensor helpers
# Fields are (3, 3, n_elements, n_qp) arrays, as in skfem.


def _mm(A, B):
    return np.einsum("ij...,jk...->ik...", A, B)


def _tm(A, B):
    """Aᵀ B."""
    return np.einsum("ji...,jk...->ik...", A, B)


def _identity_like(F):
    eye = np.zeros_like(F)
    for i in range(3):
        eye[i, i] = 1.0
    return eye


def _det3(A):
    """Determinant of a field of 3×3 matrices."""
    return (
        A[0, 0] * (A[1, 1] * A[2, 2] - A[1, 2] * A[2, 1])
        - A[0, 1] * (A[1, 0] * A[2, 2] - A[1, 2] * A[2, 0])
        + A[0, 2] * (A[1, 0] * A[2, 1] - A[1, 1] * A[2, 0])
    )


def _inv3(A):
    """Inverse of a field of 3×3 matrices (adjugate / determinant)."""
    cof = np.empty_like(A)
    for i in range(3):
        for j in range(3):
            i1, i2 = (i + 1) % 3, (i + 2) % 3
            j1, j2 = (j + 1) % 3, (j + 2) % 3
            cof[j, i] = A[i1, j1] * A[i2, j2] - A[i1, j2] * A[i2, j1]
    return cof / _det3(A)


# --------------------------------------------------------------------------- materials


@dataclass(frozen=True)
class Material:
    """Hyperelastic material for the oracle: ``kind`` is "svk" or "neohookean"."""

    kind: str
    young: float
    poisson: float

    @property
    def lam(self) -> float:
        E, nu = self.young, self.poisson
        return E * nu / ((1 + nu) * (1 - 2 * nu))

    @property
    def mu(self) -> float:
        return self.young / (2 * (1 + self.poisson))

    def fields(self, G: np.ndarray) -> dict:
        """Quadrature-point fields for the forms from the displacement gradient G = ∇_X u.

        Returns F = I + G, S and (Neo-Hookean) C⁻¹, ln J. E = (G + Gᵀ + GᵀG)/2 and J − 1 are formed
        from G directly, so small strains do not lose digits to the cancellation in FᵀF − I.
        """
        eye = _identity_like(G)
        F = G + eye
        E = 0.5 * (G + np.swapaxes(G, 0, 1) + _tm(G, G))
        if self.kind == "svk":
            trE = E[0, 0] + E[1, 1] + E[2, 2]
            S = self.lam * trE * eye + 2 * self.mu * E
            return {"F": F, "S": S}
        if self.kind == "neohookean":
            Ci = _inv3(eye + 2 * E)
            trG = G[0, 0] + G[1, 1] + G[2, 2]
            J_minus_1 = trG + 0.5 * (trG**2 - np.einsum("ij...,ji...->...", G, G)) + _det3(G)
            lnJ = np.log1p(J_minus_1)
            S = 2 * self.mu * _mm(Ci, E) + self.lam * lnJ * Ci  # μ(I − C⁻¹) = μ C⁻¹ (C − I)
            return {"F": F, "S": S, "Ci": Ci, "lnJ": lnJ}
        raise ValueError(f"unknown material kind {self.kind!r}")


def _residual_form(v, w):
    return ddot(w["P"], grad(v))


def _tangent_svk(du, v, w, lam, mu):
    F, S, dF = w["F"], w["S"], grad(du)
    FtdF = _tm(F, dF)
    dE = 0.5 * (FtdF + np.swapaxes(FtdF, 0, 1))
    trdE = dE[0, 0] + dE[1, 1] + dE[2, 2]
    dS = 2 * mu * dE
    for i in range(3):
        dS[i, i] += lam * trdE
    return ddot(_mm(dF, S) + _mm(F, dS), grad(v))


def _tangent_neohookean(du, v, w, lam, mu):
    F, S, Ci, lnJ, dF = w["F"], w["S"], w["Ci"], w["lnJ"], grad(du)
    FtdF = _tm(F, dF)
    dE = 0.5 * (FtdF + np.swapaxes(FtdF, 0, 1))
    dS = lam * ddot(Ci, dE) * Ci + 2 * (mu - lam * lnJ) * _mm(_mm(Ci, dE), Ci)
    return ddot(_mm(dF, S) + _mm(F, dS), grad(v))


# --------------------------------------------------------------------------- oracle


class SkfemHyperelastic:
    """Residual and tangent of a hyperelastic solid on a skfem hexahedral basis.

    Parameters
    ----------
    basis : skfem.Basis
        Vector basis (``ElementVector(ElementHex1|2())``).
    material : Material
    nthreads : int
        skfem's ``BilinearForm(nthreads=...)`` (0 = skfem's default serial loop).
    """

    def __init__(self, basis: Basis, material: Material, nthreads: int = 0):
        self.basis = basis
        self.material = material
        lam, mu = material.lam, material.mu
        kernel = _tangent_svk if material.kind == "svk" else _tangent_neohookean
        self.residual_form = LinearForm(_residual_form)
        self.tangent_form = BilinearForm(lambda du, v, w: kernel(du, v, w, lam, mu), nthreads=nthreads)

    def quadrature_fields(self, u: np.ndarray) -> dict:
        """F = I + ∇u and material fields at the quadrature points, each (3, 3, n_el, n_qp)."""
        return self.material.fields(np.asarray(self.basis.interpolate(u).grad))

    def residual(self, u: np.ndarray) -> np.ndarray:
        """Internal force ∫ P : ∇v dV, (N,), in skfem dof order, at displacement u (N,)."""
        f = self.quadrature_fields(u)
        return self.residual_form.assemble(self.basis, P=_mm(f["F"], f["S"]))

    def tangent(self, u: np.ndarray) -> sp.csr_matrix:
        """d residual / du, (N, N) sparse, in skfem dof order."""
        return self.tangent_form.assemble(self.basis, **self.quadrature_fields(u)).tocsr()


# --------------------------------------------------------------------------- meshes and bases


def box_mesh(lower, upper, divisions, order: int):
    """skfem box mesh [lower, upper] with ``divisions`` cells per direction (MeshHex1 or MeshHex2)."""
    axes = [np.linspace(lo, hi, n + 1) for lo, hi, n in zip(lower, upper, divisions)]
    mesh = MeshHex1.init_tensor(*axes)
    if order == 1:
        return mesh
    if order == 2:
        return MeshHex2.from_mesh(mesh)
    raise ValueError(f"order must be 1 or 2, got {order}")


def intorder_for(n_gauss: int) -> int:
    """skfem ``intorder`` that yields ``n_gauss`` Gauss–Legendre points per direction (n_gauss ≥ 2)."""
    return 2 * n_gauss - 1


def vector_basis(mesh, order: int, n_gauss: int | None = None) -> Basis:
    """``ElementVector(ElementHex{order}())`` basis with an n_gauss³ tensor Gauss rule.

    n_gauss defaults to order + 1 (2×2×2 for H8, 3×3×3 for H27).
    """
    n_gauss = order + 1 if n_gauss is None else n_gauss
    elem = ElementVector(ElementHex1() if order == 1 else ElementHex2())
    if n_gauss >= 2:
        basis = Basis(mesh, elem, intorder=intorder_for(n_gauss))
    else:  # intorder cannot give a single point; pass the midpoint rule on skfem's [0, 1]³
        basis = Basis(mesh, elem, quadrature=(np.full((3, 1), 0.5), np.ones(1)))
    if basis.X.shape[1] != n_gauss**3:
        raise AssertionError(f"expected {n_gauss**3} quadrature points, got {basis.X.shape[1]}")
    return basis


def tet_basis(points: np.ndarray, corners: np.ndarray, order: int, rule: tuple[np.ndarray, np.ndarray]) -> Basis:
    """``ElementVector(ElementTetP{order}())`` basis on the straight-sided tetrahedra with vertex coordinates
    ``points`` (n, 3) and vertex indices ``corners`` (m, 4), with the quadrature ``rule`` (points (g, 3), weights
    (g,)) on skfem's reference tetrahedron (0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1). P2's edge dofs sit at the
    edge midpoints (skfem places them there)."""
    mesh = MeshTet(np.ascontiguousarray(np.asarray(points, float).T), np.ascontiguousarray(np.asarray(corners).T))
    elem = ElementVector(ElementTetP1() if order == 1 else ElementTetP2())
    xi, w = rule
    return Basis(mesh, elem, quadrature=(np.ascontiguousarray(np.asarray(xi).T), np.asarray(w)))


def dof_permutation(basis: Basis, points: np.ndarray, tol: float = 1e-9) -> np.ndarray:
    """Map node-major flexbody dofs to skfem dofs by matching node coordinates.

    Returns ``perm`` (3n,) with ``x_skfem[perm] == x_flexbody`` for a node-major vector
    ``x_flexbody = [x0, y0, z0, x1, ...]`` on nodes ``points`` (n, 3).
    """
    points = np.asarray(points, dtype=float)
    scale = max(np.ptp(points, axis=0).max(), 1.0)
    perm = np.empty(3 * len(points), dtype=np.int64)
    components = basis.split_indices()
    if len(components) != 3 or any(len(c) != len(points) for c in components):
        raise AssertionError("skfem basis and flexbody mesh have different numbers of nodes")
    for c, dofs in enumerate(components):
        dist, idx = cKDTree(basis.doflocs[:, dofs].T).query(points)
        if dist.max() > tol * scale:
            raise AssertionError(f"unmatched node, distance {dist.max():.3e}")
        if len(np.unique(idx)) != len(points):
            raise AssertionError("node matching is not one-to-one")
        perm[c::3] = dofs[idx]
    return perm


def smooth_deformation(points: np.ndarray, amplitude: float = 0.15, noise: float = 1e-3, seed: int = 0) -> np.ndarray:
    """A smooth, moderately large nonlinear map of the reference points plus small noise, (n, 3).

    Stretch, shear, bending and twist of magnitude ~``amplitude`` relative to the box size; the
    deformation gradient stays far from singular.
    """
    rng = np.random.default_rng(seed)
    X = np.asarray(points, dtype=float)
    lo, size = X.min(axis=0), np.ptp(X, axis=0)
    s = (X - lo) / size  # in [0, 1]³
    a = amplitude
    x = np.empty_like(X)
    x[:, 0] = X[:, 0] * (1 + 0.5 * a * s[:, 1]) + a * size[0] * 0.3 * np.sin(1.3 * s[:, 2])
    x[:, 1] = X[:, 1] + a * size[1] * (0.8 * s[:, 0] ** 2 + 0.4 * np.sin(2.0 * s[:, 2] + s[:, 0]))
    x[:, 2] = (
        X[:, 2] * (1 - 0.3 * a * s[:, 0]) + a * size[0] * 0.5 * s[:, 0] ** 2 + a * size[2] * 0.3 * s[:, 1] * s[:, 2]
    )
    return x + noise * size.min() * rng.standard_normal(X.shape)


# --------------------------------------------------------------------------- static solve


def solve_cantilever(
    oracle: SkfemHyperelastic,
    tip_force,
    load_steps: int = 5,
    tol: float = 1e-12,
    step_tol: float = 1e-14,
    max_iter: int = 30,
    clamp_x: float = 0.0,
    tip_x: float | None = None,
):
    """Newton with load stepping on skfem's forms: clamp x = clamp_x, ``tip_force`` on each tip node.

    A load step converges when ‖r‖/‖f‖ < tol or the Newton update satisfies ‖du‖ ≤ step_tol ‖u‖
    (the residual has reached its round-off floor).

    Returns (u (N,) in skfem dof order, list of residual-norm histories per load step).
    """
    basis = oracle.basis
    locs = basis.doflocs
    tip_x = locs[0].max() if tip_x is None else tip_x
    fixed = np.flatnonzero(np.isclose(locs[0], clamp_x))
    f_ext = np.zeros(basis.N)
    for c, dofs in enumerate(basis.split_indices()):
        f_ext[dofs[np.isclose(locs[0, dofs], tip_x)]] = tip_force[c]
    u = basis.zeros()
    histories = []
    for step in range(1, load_steps + 1):
        f = f_ext * step / load_steps
        ref = max(np.linalg.norm(f), 1e-300)
        history = []
        for _ in range(max_iter):
            r = oracle.residual(u) - f
            r[fixed] = 0.0
            history.append(np.linalg.norm(r) / ref)
            if history[-1] < tol:
                break
            du = solve(*condense(oracle.tangent(u), -r, D=fixed))
            u = u + du
            if np.linalg.norm(du) <= step_tol * np.linalg.norm(u):  # residual at round-off floor
                break
        else:
            raise RuntimeError(f"Newton did not converge at load step {step}: {history}")
        histories.append(history)
    return u, histories
