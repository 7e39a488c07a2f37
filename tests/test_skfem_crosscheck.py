"""Cross-check of flexbody's hexahedral solids against scikit-fem's own assembly (independent oracle).

Reference: scikit-fem 12.0.2 (the version the numbers below were measured with; the test extra asks for
``scikit-fem>=9``). The oracle in ``tests/skfem_oracle.py`` writes the total-Lagrangian residual
∫ P(F) : ∇v dV and its linearisation as skfem ``LinearForm`` / ``BilinearForm`` on
``ElementVector(ElementHex1())`` (``MeshHex1``) and ``ElementVector(ElementHex2())`` (``MeshHex2``) with
the same tensor Gauss rule (skfem ``intorder = 2n − 1`` → n points per direction). skfem builds its own
box mesh; its dofs are matched to flexbody's node-major coordinates by node position.

Quantities compared (St. Venant–Kirchhoff and compressible Neo-Hookean, H8 and H27):

1. ``FlexibleBody.internal_force(q)`` vs skfem's assembled residual at a smooth, moderately large
   deformation plus noise: relative 2-norm error < 1e-12.
2. ``FlexibleBody.tangent(q)`` vs skfem's assembled tangent: relative Frobenius error < 1e-12.
3. ``fb.solve_static`` of a clamped cantilever (1.0×0.1×0.1 m, E = 1e7 Pa, ν = 0.3, SVK; 8×2×2 H8 and
   4×1×1 H27; tip deflection ≈ 15 % of L) vs a Newton loop with load steps on skfem's
   forms: max |Δu| / max |u| < 1e-9.

Measured (skfem 12.0.2, flexbody 0.1.0, deformation with |F − I| ≤ 0.25, J ∈ [0.88, 1.17]): internal
force 1.0e-15 … 8.8e-15 (H27 largest), tangent 2.9e-16 … 3.4e-15; static solve with
``NewtonSettings(tol=1e-10)``: 5.2e-15 (H8, tip deflection 0.148 L) and 6.8e-15 (H27, 0.154 L).
"""

from __future__ import annotations

import numpy as np
import pytest

skfem = pytest.importorskip("skfem")
fb = pytest.importorskip("flexbody")

from skfem_oracle import (  # noqa: E402
    Material,
    SkfemHyperelastic,
    box_mesh,
    dof_permutation,
    smooth_deformation,
    solve_cantilever,
    vector_basis,
)

YOUNG, POISSON, DENSITY = 2.0e5, 0.3, 1000.0
MATERIALS = {"svk": "StVenantKirchhoff", "neohookean": "NeoHookean"}  # oracle kind -> flexbody class

# (id, order, size, divisions, Gauss points per direction or None for the default)
MESHES = [
    ("H8", 1, (1.0, 0.6, 0.4), (4, 3, 2), None),
    ("H8-3x3x3", 1, (1.0, 0.6, 0.4), (3, 2, 2), 3),
    ("H27", 2, (1.0, 0.6, 0.4), (2, 2, 1), None),
]


def _flexbody_material(kind: str, young: float = YOUNG, poisson: float = POISSON):
    return getattr(fb, MATERIALS[kind])(young=young, poisson=poisson, density=DENSITY)


def _pair(order, size, divisions, quadrature, kind, young=YOUNG):
    """flexbody body, skfem oracle and the dof permutation (skfem[perm] = flexbody) for one mesh."""
    mesh = fb.mesh.box(size=size, divisions=divisions, order=order)
    body = fb.FlexibleBody(
        "body", mesh, _flexbody_material(kind, young), quadrature=quadrature, locking=None
    )  # plain, as skfem's
    points = np.asarray(mesh.points)
    sk_mesh = box_mesh(points.min(axis=0), points.max(axis=0), divisions, order)
    basis = vector_basis(sk_mesh, order, quadrature)
    oracle = SkfemHyperelastic(basis, Material(kind, young, POISSON))
    return body, oracle, dof_permutation(basis, points)


@pytest.fixture(scope="module", params=[(m, k) for m in MESHES for k in MATERIALS], ids=lambda p: f"{p[0][0]}-{p[1]}")
def deformed_pair(request):
    (_, order, size, divisions, quadrature), kind = request.param
    body, oracle, perm = _pair(order, size, divisions, quadrature, kind)
    points = np.asarray(body.mesh.points)
    x = smooth_deformation(points, amplitude=0.2, noise=2e-3, seed=order)
    q = x.ravel()
    u_sk = np.empty(oracle.basis.N)
    u_sk[perm] = q - body.reference_coordinates()
    return body, oracle, perm, q, u_sk


def test_skfem_intorder_gives_tensor_gauss_rule():
    """skfem intorder 2n−1 on hexahedra is the n×n×n Gauss–Legendre rule used by flexbody."""
    for order, n in [(1, 2), (1, 3), (2, 3), (2, 2)]:
        basis = vector_basis(box_mesh((0, 0, 0), (1, 1, 1), (1, 1, 1), order), order, n)
        xi = np.sort(np.unique(np.round(basis.X[0], 14)))
        gl = 0.5 * (np.polynomial.legendre.leggauss(n)[0] + 1)  # on skfem's [0, 1]
        np.testing.assert_allclose(xi, gl, atol=1e-14)
        assert basis.X.shape[1] == n**3


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("kind", list(MATERIALS))
def test_oracle_tangent_is_derivative_of_residual(order, kind):
    """Self-check of the oracle: central differences of its residual match its tangent (O(h²))."""
    basis = vector_basis(box_mesh((0, 0, 0), (1.0, 0.5, 0.4), (2, 1, 1), order), order)
    oracle = SkfemHyperelastic(basis, Material(kind, YOUNG, POISSON))
    comps = basis.split_indices()
    pts = basis.doflocs[:, comps[0]].T
    u = np.empty(basis.N)
    for c, dofs in enumerate(comps):
        u[dofs] = (smooth_deformation(pts, amplitude=0.2) - pts)[:, c]
    du = np.random.default_rng(3).standard_normal(basis.N)
    h = 1e-6
    fd = (oracle.residual(u + h * du) - oracle.residual(u - h * du)) / (2 * h)
    Kdu = oracle.tangent(u) @ du
    assert np.linalg.norm(fd - Kdu) <= 1e-8 * np.linalg.norm(Kdu)


def test_internal_force_matches_skfem(deformed_pair):
    body, oracle, perm, q, u_sk = deformed_pair
    f_fb = body.internal_force(q)
    f_sk = oracle.residual(u_sk)[perm]
    err = np.linalg.norm(f_fb - f_sk) / np.linalg.norm(f_sk)
    assert err < 1e-12, f"relative error {err:.3e}"


def test_tangent_matches_skfem(deformed_pair):
    body, oracle, perm, q, u_sk = deformed_pair
    K_fb = body.tangent(q).tocsr()
    K_sk = oracle.tangent(u_sk)[perm][:, perm]
    err = np.sqrt(abs(K_fb - K_sk).power(2).sum()) / np.sqrt(K_sk.power(2).sum())
    assert err < 1e-12, f"relative Frobenius error {err:.3e}"


# ------------------------------------------------------------------------------ static cantilever
CANTILEVER = dict(size=(1.0, 0.1, 0.1), young=1.0e7)
# (id, order, divisions, force on each of the 9 tip nodes [N]) -> tip deflection 0.148 L resp. 0.154 L
CANTILEVERS = [("H8", 1, (8, 2, 2), 7.0), ("H27", 2, (4, 1, 1), 4.5)]


@pytest.mark.parametrize("order, divisions, tip_force", [c[1:] for c in CANTILEVERS], ids=[c[0] for c in CANTILEVERS])
def test_static_cantilever_matches_skfem_newton(order, divisions, tip_force):
    full = order + 1  # skfem's rule; flexbody's default reduces the bar's axis of its 27-node elements
    body, oracle, perm = _pair(order, CANTILEVER["size"], divisions, full, "svk", young=CANTILEVER["young"])
    mesh = body.mesh
    tip = mesh.node_set("x1")
    force = (0.0, 0.0, -tip_force)
    system = fb.System([body], constraints=[fb.Fix(body, "x0")], loads=[fb.NodalForce(body, tip, force=force)])
    res = fb.solve_static(system, load_steps=5, settings=fb.NewtonSettings(tol=1e-10))
    u_fb = np.asarray(res.displacements(body))

    u_sk, _ = solve_cantilever(oracle, force, load_steps=3)
    u_sk = u_sk[perm].reshape(-1, 3)

    tip_deflection = -u_sk[tip, 2].mean() / CANTILEVER["size"][0]
    assert 0.10 < tip_deflection < 0.20, f"tip deflection {tip_deflection:.3f} L is not in the intended range"
    err = np.abs(u_fb - u_sk).max() / np.abs(u_sk).max()
    assert err < 1e-9, f"max |Δu| / max |u| = {err:.3e}"
