"""``fb.modal_analysis`` against references nobody here wrote: scikit-fem on a 3-D solid, and the closed form of
a pinned–pinned beam under axial tension (geometric stiffening).

1. scikit-fem (12.0.2 measured; the test extra asks for ``scikit-fem>=9``). A steel block 0.2 × 0.05 × 0.03 m
   (E = 210 GPa, ν = 0.3, ρ = 7800 kg/m³) clamped on its face x = 0, as H8 12×3×2 (``ElementHex1``, 2×2×2
   Gauss, flexbody's default ``locking=None``) and H27 6×2×1 (``ElementHex2``, 3×3×3 Gauss). scikit-fem assembles
   its own ``linear_elasticity`` form and a consistent mass ∫ ρ u·v dV on its own box mesh; the clamped dofs are
   condensed and the ten lowest ω² come from ``scipy.sparse.linalg.eigsh`` (shift-invert about 0). flexbody
   linearises ``fb.StVenantKirchhoff`` about the static state with no loads, i.e. the reference configuration,
   where the SVK tangent is linear elasticity, and holds the face with ``fb.Fix`` rows (a saddle point, not a
   condensation). The two codes meet only through a node-coordinate permutation (``dof_permutation``).
   Same shape functions and exact quadrature on these parallelepipeds, so agreement is limited by round-off:
   measured max relative frequency difference 1.7e-13 (H8) and 8.3e-13 (H27) over the ten modes (676.6 …
   17750 Hz resp. 629.6 … 16170 Hz), mode shapes (unit modal mass, sign aligned) to 1.3e-13 resp. 2.4e-13 of
   their largest entry. A dense generalised ``scipy.linalg.eigh`` of the same condensed matrices is *less*
   accurate for the low modes — its error grows with ε·λ_max/λ_1 ≈ 2e-16 · (1.6 … 3.2)e5 — and agrees to
   2.7e-12 (H8) and 1.9e-11 (H27); it is checked too, at 1e-9.

2. Geometric (stress) stiffening. Beam L = 1 m, b × h = 0.03 × 0.02 m (y × z), same steel, H27 20×1×1 and H8
   with incompatible modes 40×2×2. Pinned–pinned for bending in z, emulated on the solid: at each end the
   nodes of the line z = h/2 (across the width) are held in x and z — a hinge about y through the centroid —
   and the end-centre node in y (Poisson contraction stays free); the x = L line is moved by δ = ε L along x.
   ``modal_analysis(state=None)`` solves this static state, whose prescribed displacement stretches the beam,
   and linearises about it. The axial force T is the reaction on the x = L line, Σ k_x of the body's internal
   force there (the line load makes the end zones softer than E A / L: T / (E A ε) = 0.994 (H27), 0.972 (H8)).

   Reference (Euler–Bernoulli beam with axial tension, pinned–pinned, exact mode sin(πx/L)):
       ω₁²(T) = (π/L)⁴ E I / (ρ A) + (π/L)² T / (ρ A),      I = b h³ / 12.
   Checked (ε = 1e-4 and 3e-4, so T L² / (π² E I) ≈ 0.30 and 0.91): the rise Δω² = ω₁²(T) − ω₁²(0) against
   (π/L)² T/(ρA), which does not depend on E I (it holds even for the locking plain H8: +5.4e-5 / −1.5e-4),
   and the ratio f₁(T)/f₁(0) against √(1 + T L² / (π² E I)), which cancels the bending-stiffness error to first
   order:
   if ω₁²(0) = ω²_EB (1 + δ) and Δω² = (π/L)² T/(ρA) (1 + γ), the ratio is off by ½ (γ − δ) τ/(1 + τ),
   τ = T L²/(π² E I).

   Modelling differences (3-D solid vs Euler–Bernoulli) and the bounds asserted: shear deformation and rotary
   inertia lower ω₁(0) by ≈ ½ (π r/L)² (1 + E/(κG)) ≈ 6.7e-4 (r² = h²/12, κ = 0.85; Timoshenko), against which
   the mesh's discretisation error acts: measured f₁(0)/f_EB − 1 = −2.1e-4 (H27 20×1×1; −6.2e-4 on H27 40×2×2,
   approaching the Timoshenko estimate), +2.5e-4 (H8); asserted 2e-3. Δω² carries O(ε) terms of the
   finite-strain model (K_G uses S = P/(1 + ε); the SVK tangent at the stretched state is (1 + ε)² stiffer
   axially), O((π r/L)²) = 3.3e-4 from the section rotation's share of K_G, and the discretisation: measured
   γ = −3.0e-4 / −5.1e-4 (H27), +6.9e-4 / +4.8e-4 (H8); asserted 2e-3. Ratio: measured +1.4e-5 / −1.9e-5
   (H27), +2.1e-5 / −5.6e-6 (H8) — ½ (γ − δ) τ/(1 + τ) with the measured γ, δ predicts +1.4e-5 and +2.1e-5 at
   ε = 1e-4; with the modelling estimates |δ| ≲ 1.3e-3 (ω², Timoshenko) and |γ| ≲ 1e-3 the bound is
   ½ · 2.3e-3 · 0.48 ≈ 6e-4; asserted 1e-3.

Run time (2-core machine, numba kernels cached): 2.3 s wall for the file, 0.95 s of it in the four tests.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as la
import scipy.sparse.linalg as spla

skfem = pytest.importorskip("skfem")
fb = pytest.importorskip("flexbody")

from skfem import BilinearForm, condense  # noqa: E402
from skfem.helpers import dot  # noqa: E402
from skfem.models.elasticity import lame_parameters, linear_elasticity  # noqa: E402
from skfem_oracle import box_mesh, dof_permutation, vector_basis  # noqa: E402

YOUNG, POISSON, DENSITY = 2.1e11, 0.3, 7800.0
N_MODES = 10

# --------------------------------------------------------------------------------------- 1. scikit-fem
BLOCK = (0.2, 0.05, 0.03)
# (id, order, divisions): both meshes have 13 node planes along x
BLOCKS = [("H8", 1, (12, 3, 2)), ("H27", 2, (6, 2, 1))]


def _skfem_modes(order, divisions, points):
    """ω² (k,), unit-modal-mass shapes (N, k) in skfem dof order, the skfem mass matrix, the dense-eigh ω² and
    the basis, for the block clamped at x = 0."""
    basis = vector_basis(box_mesh(points.min(axis=0), points.max(axis=0), divisions, order), order)
    K = linear_elasticity(*lame_parameters(YOUNG, POISSON)).assemble(basis)
    M = BilinearForm(lambda u, v, w: DENSITY * dot(u, v)).assemble(basis)
    clamped = np.flatnonzero(np.isclose(basis.doflocs[0], 0.0))
    Kc, Mc, _, free = condense(K, M, D=clamped, x=basis.zeros())
    v0 = np.random.default_rng(1).standard_normal(Kc.shape[0])  # repeatable Lanczos start
    values, Y = spla.eigsh(Kc.tocsc(), N_MODES, Mc.tocsc(), sigma=0.0, which="LM", v0=v0)
    order_ = np.argsort(values)
    values, Y = values[order_], Y[:, order_]
    Y = Y / np.sqrt(np.einsum("ij,ij->j", Y, Mc @ Y))
    X = np.zeros((basis.N, N_MODES))
    X[free] = Y
    dense = la.eigh(Kc.toarray(), Mc.toarray(), eigvals_only=True, subset_by_index=[0, N_MODES - 1])
    return values, X, M, dense, basis


@pytest.mark.parametrize("order, divisions", [b[1:] for b in BLOCKS], ids=[b[0] for b in BLOCKS])
def test_clamped_block_modes_match_skfem(order, divisions):
    mesh = fb.mesh.box(BLOCK, divisions, order=order)
    body = fb.FlexibleBody(  # plain Q1/Q2, as skfem's elements
        "block", mesh, fb.StVenantKirchhoff(young=YOUNG, poisson=POISSON, density=DENSITY), locking=None
    )
    assert body.locking is None and body.quadrature == (order + 1,) * 3
    modes = fb.modal_analysis(fb.System([body], constraints=[fb.Fix(body, "x0")]), n_modes=N_MODES)
    assert modes.n_rigid_body == 0
    assert np.abs(modes.q - body.reference_coordinates()).max() < 1e-14  # no loads: the reference state

    points = np.asarray(mesh.points)
    values, X, M_sk, dense, basis = _skfem_modes(order, divisions, points)
    f_sk = np.sqrt(values) / (2 * np.pi)
    err = np.abs(modes.frequencies / f_sk - 1).max()
    assert err < 1e-10, f"max relative frequency difference {err:.3e}"  # measured 1.7e-13 (H8), 8.3e-13 (H27)
    err_dense = np.abs(modes.frequencies / (np.sqrt(dense) / (2 * np.pi)) - 1).max()
    assert err_dense < 1e-9, f"against dense eigh {err_dense:.3e}"  # 2.7e-12, 1.9e-11: eigh's ε·κ

    perm = dof_permutation(basis, points)  # x_skfem[perm] = x_flexbody
    X_fb = X[perm]
    overlap = modes.shapes @ (M_sk[perm][:, perm] @ X_fb)  # skfem's mass, flexbody's order
    assert np.abs(np.abs(overlap) - np.eye(N_MODES)).max() < 1e-8
    aligned = X_fb * np.sign(np.diag(overlap))
    shape_err = np.abs(modes.shapes - aligned.T).max() / np.abs(X_fb).max()
    assert shape_err < 1e-8, f"mode shapes differ by {shape_err:.3e}"  # 1.3e-13, 2.4e-13


# ------------------------------------------------------------------------------- 2. geometric stiffening
LENGTH, WIDTH, HEIGHT = 1.0, 0.03, 0.02  # x, y, z [m]
AREA, INERTIA = WIDTH * HEIGHT, WIDTH * HEIGHT**3 / 12  # bending in z, about y
STRAINS = (1e-4, 3e-4)
# (id, order, divisions, locking): z divisions give a node line at z = h/2
BEAMS = [("H27", 2, (20, 1, 1), None), ("H8-incompatible", 1, (40, 2, 2), "incompatible_modes")]


def _tensioned_beam_mode(order, divisions, locking, strain):
    """(f₁ [Hz] of the first z-bending mode, axial force T [N], Modes) of the pinned–pinned beam whose x = L hinge
    line is moved by strain·L along x."""
    mesh = fb.mesh.box((LENGTH, WIDTH, HEIGHT), divisions, order=order)
    body = fb.FlexibleBody(
        "beam", mesh, fb.StVenantKirchhoff(young=YOUNG, poisson=POISSON, density=DENSITY), locking=locking
    )
    P = mesh.points
    on_axis = np.isclose(P[:, 2], HEIGHT / 2)
    centre = on_axis & np.isclose(P[:, 1], WIDTH / 2)

    def at(x, where):
        return np.flatnonzero(np.isclose(P[:, 0], x) & where)

    hinge_0, hinge_1 = at(0.0, on_axis), at(LENGTH, on_axis)
    constraints = [
        fb.Fix(body, hinge_0, components=(0, 2)),
        fb.Fix(body, hinge_1, displacement=(strain * LENGTH, 0.0, 0.0), components=(0, 2)),
        fb.Fix(body, at(0.0, centre), components=(1,)),
        fb.Fix(body, at(LENGTH, centre), components=(1,)),
    ]
    modes = fb.modal_analysis(fb.System([body], constraints=constraints), n_modes=3)
    q = modes.q[modes.system.slices["beam"]]
    assert np.allclose(q.reshape(-1, 3)[hinge_1, 0], LENGTH * (1 + strain), rtol=0, atol=1e-10)
    tension = float(body.internal_force(q)[3 * hinge_1].sum())  # reaction on the moved hinge line
    M = body.mass_matrix()
    z_only = np.tile([0.0, 0.0, 1.0], body.n_nodes)
    z_share = [(z_only * x) @ (M @ (z_only * x)) for x in modes.shapes]  # modal mass in z (of unit total)
    first = int(np.argmax(np.asarray(z_share) > 0.9))
    assert first == 0 and z_share[0] > 0.99, f"lowest mode is not bending in z: z shares {np.round(z_share, 4)}"
    return float(modes.frequencies[first]), tension, modes


@pytest.mark.parametrize("order, divisions, locking", [b[1:] for b in BEAMS], ids=[b[0] for b in BEAMS])
def test_axial_tension_stiffens_pinned_beam_as_euler_bernoulli(order, divisions, locking):
    f0, t0, _ = _tensioned_beam_mode(order, divisions, locking, 0.0)
    assert abs(t0) < 1e-6 * YOUNG * AREA * STRAINS[0]
    f_eb = (np.pi / LENGTH) ** 2 * np.sqrt(YOUNG * INERTIA / (DENSITY * AREA)) / (2 * np.pi)  # 47.0567 Hz
    assert abs(f0 / f_eb - 1) < 2e-3, f"f1(0) / f_EB - 1 = {f0 / f_eb - 1:.3e}"  # −2.1e-4 (H27), +2.5e-4 (H8)

    previous = f0
    for strain in STRAINS:
        f, tension, modes = _tensioned_beam_mode(order, divisions, locking, strain)
        assert modes.metadata["static_residual"] < 1e-6 * tension
        assert 0.95 < tension / (YOUNG * AREA * strain) < 1.0  # end zones under the line load
        assert f > previous  # frequency rises with T
        previous = f
        rise = (2 * np.pi) ** 2 * (f**2 - f0**2)
        rise_ref = (np.pi / LENGTH) ** 2 * tension / (DENSITY * AREA)
        assert abs(rise / rise_ref - 1) < 2e-3, f"Δω² / ((π/L)² T/ρA) − 1 = {rise / rise_ref - 1:.3e}"
        tau = tension * LENGTH**2 / (np.pi**2 * YOUNG * INERTIA)
        ratio_err = (f / f0) / np.sqrt(1 + tau) - 1
        assert abs(ratio_err) < 1e-3, f"f(T)/f(0) vs √(1 + T L²/(π² E I)): {ratio_err:.3e} (τ = {tau:.3f})"
