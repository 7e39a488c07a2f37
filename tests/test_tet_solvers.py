"""Tetrahedral bodies in the solvers: natural frequencies against scikit-fem's eigenproblem on the same mesh, a free
vibration at the modal frequency, a reduced (Craig–Bampton) body built from a tetrahedral mesh against the full one,
and bodies of different cell kinds in one system (a beam of bricks tied to a beam of tetrahedra).

scikit-fem's reference (independent): the linear elastic stiffness ∫ σ(ε(u)) : ε(v) dV and the consistent mass
∫ ρ u · v dV on ``ElementVector(ElementTetP2())`` over the same vertices with the same 4-point and 14-point rules,
the clamped face's dofs condensed, the lowest eigenvalues by scipy's shift-invert Lanczos. flexbody's
``fb.modal_analysis`` linearises its neo-Hookean body about the unloaded reference state, where it is that linear
elastic problem. Measured: the six lowest frequencies (188.455 … 3313.29 Hz) agree to 9.2e-12 relative.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse.linalg as sla

import flexbody as fb

YOUNG, POISSON, DENSITY = 7.0e10, 0.33, 2700.0
LAM = YOUNG * POISSON / ((1 + POISSON) * (1 - 2 * POISSON))
MU = YOUNG / (2 * (1 + POISSON))
SIZE, DIVISIONS = (0.3, 0.04, 0.02), (6, 2, 1)


def clamped_beam(order=2, cells="tetrahedra", divisions=DIVISIONS):
    body = fb.FlexibleBody(
        "beam", fb.mesh.box(SIZE, divisions, order=order, cells=cells), fb.NeoHookean(YOUNG, POISSON, DENSITY)
    )
    return body, fb.System([body], constraints=[fb.Fix(body, "x0")])


def skfem_frequencies(body, n_modes: int) -> np.ndarray:
    """The lowest natural frequencies [Hz] of the clamped linear elastic beam on scikit-fem's P2 tetrahedra."""
    skfem = pytest.importorskip("skfem")
    from skfem import BilinearForm, ElementTetP2, ElementVector, MeshTet, asm, condense
    from skfem.helpers import ddot, dot, eye, sym_grad, trace
    from skfem_oracle import dof_permutation

    from flexbody.fem.tetrahedra import tet_quadrature

    mesh = body.mesh
    n_vertices = int(mesh.cells[:, :4].max()) + 1
    sk_mesh = MeshTet(np.ascontiguousarray(mesh.points[:n_vertices].T), np.ascontiguousarray(mesh.cells[:, :4].T))
    stiffness_rule, mass_rule = tet_quadrature(2), tet_quadrature(5)
    element = ElementVector(ElementTetP2())
    bases = [
        skfem.Basis(sk_mesh, element, quadrature=(np.ascontiguousarray(x.T), w)) for x, w in (stiffness_rule, mass_rule)
    ]

    @BilinearForm
    def stiffness(u, v, w):
        def sigma(e):
            return 2.0 * MU * e + LAM * eye(trace(e), 3)

        return ddot(sigma(sym_grad(u)), sym_grad(v))

    @BilinearForm
    def mass(u, v, w):
        return DENSITY * dot(u, v)

    K, M = asm(stiffness, bases[0]), asm(mass, bases[1])
    perm = dof_permutation(bases[0], mesh.points)
    clamped = perm[body.dofs("x0")]
    Kc, Mc = condense(K, M, D=clamped, expand=False)
    values = sla.eigsh(Kc, k=n_modes, M=Mc, sigma=0.0, which="LM")[0]
    return np.sqrt(np.sort(values)) / (2 * np.pi)


def test_natural_frequencies_equal_scikit_fem_on_the_same_mesh():
    body, system = clamped_beam()
    modes = fb.modal_analysis(system, n_modes=6)
    reference = skfem_frequencies(body, 6)
    np.testing.assert_allclose(modes.frequencies, reference, rtol=1e-9)


def test_free_vibration_runs_at_the_modal_frequency():
    """The clamped beam released from its first mode shape oscillates with that mode's period (trapezoidal rule,
    200 steps per period: its period error (π f dt)²/12 ≈ 2e-5)."""
    body, system = clamped_beam()
    asm = system.assemble()
    modes = fb.modal_analysis(asm, n_modes=1)
    f = modes.frequencies[0]
    dt = 1.0 / (200 * f)
    run = fb.simulate(
        asm, 2.0 / f, integrator=fb.GeneralizedAlpha(dt=dt, rho_inf=1.0, tol=1e-12), q0=modes.q + 1e-5 * modes.shapes[0]
    )
    tip = asm.coordinates(body, run.q, nodes="x1").mean(axis=1)[:, 2]
    z = tip - tip.mean()
    crossings = np.flatnonzero((z[:-1] > 0) & (z[1:] <= 0))
    times = run.times[crossings] + dt * z[crossings] / (z[crossings] - z[crossings + 1])
    assert len(times) >= 2
    assert np.diff(times).mean() == pytest.approx(1.0 / f, rel=1e-3)


def test_a_reduced_body_built_from_tetrahedra_matches_the_full_one():
    """Craig–Bampton modes of a tetrahedral beam clamped on a fixed hinge: the reduced body's frequencies equal the
    full model's lowest ones (the basis contains them up to its truncation: within 1e-3)."""
    body, system = clamped_beam(divisions=(6, 1, 1))
    full = fb.modal_analysis(system, n_modes=3).frequencies
    tree = fb.RigidTree("base", gravity=(0.0, 0.0, 0.0))
    hub = tree.add_link("hub", joint=fb.Fixed())
    reduced = fb.ReducedBody("beam", fb.solvers.craig_bampton(body, "x0", n_modes=12), hub)
    frequencies = fb.modal_analysis(fb.System([tree, reduced]), n_modes=3).frequencies
    np.testing.assert_allclose(frequencies, full, rtol=1e-3)


def test_bricks_and_tetrahedra_in_one_system():
    """A cantilever of two halves (0.3 m each, 6 × 2 × 2 bricks, or those bricks cut in six), 27-node bricks at the
    clamp and 10-node tetrahedra at the tip, tied at their common face (``fb.TieNodes``), against the same beam all
    bricks and all tetrahedra (12 × 2 × 2). The tie of a brick's biquadratic face to its tetrahedra's quadratic
    triangles is not conforming inside the face, which leaves the mixed beam a little softer: measured 1.97059e-4 m
    against 1.97030e-4 (bricks, +0.015 %) and 1.94951e-4 (tetrahedra, stiffer in bending at this mesh, +1.1 %);
    at 24 × 4 × 4 the three are 1.97105e-4, 1.97035e-4 and 1.96937e-4."""
    length, side = 0.6, 0.05
    material = fb.NeoHookean(YOUNG, POISSON, DENSITY)

    def deflection(bodies, constraints, tip_body):
        load = fb.SurfaceTraction(tip_body, "x1", total=(0.0, 0.0, -100.0))
        results = fb.solve_static(fb.System(bodies, constraints=constraints, loads=[load]), load_steps=1)
        return -results.displacements(tip_body)[tip_body.nodes("x1"), 2].mean()

    halves = []
    for k, cells in enumerate(("hexahedra", "tetrahedra")):
        mesh = fb.mesh.box((length / 2, side, side), (6, 2, 2), order=2, cells=cells, origin=(k * length / 2, 0, 0))
        halves.append(fb.FlexibleBody(f"half{k}", mesh, material))
    mixed = deflection(halves, [fb.Fix(halves[0], "x0"), fb.TieNodes(halves[1], "x0", halves[0], "x1")], halves[1])
    pure = []
    for cells in ("hexahedra", "tetrahedra"):
        body = fb.FlexibleBody(cells, fb.mesh.box((length, side, side), (12, 2, 2), order=2, cells=cells), material)
        pure.append(deflection([body], [fb.Fix(body, "x0")], body))
    bricks, tetrahedra = pure
    assert mixed == pytest.approx(bricks, rel=1e-3) and mixed == pytest.approx(tetrahedra, rel=1.5e-2)


def test_arc_length_on_tetrahedra_follows_the_load_stepped_path():
    """Arc-length continuation of the clamped Tet10 beam under an end shear ends where load stepping does."""
    body, _ = clamped_beam()
    load = fb.SurfaceTraction(body, "x1", total=(0.0, 0.0, -2.0e4))
    system = fb.System([body], constraints=[fb.Fix(body, "x0")], loads=[load])
    stepped = fb.solve_static(system, load_steps=4).q[-1]
    path = fb.solve_static(system, load_steps=4, path=fb.ArcLength())
    np.testing.assert_allclose(path.times[-1], 1.0, atol=1e-12)
    assert np.abs(path.q[-1] - stepped).max() < 1e-9 * np.abs(stepped - body.reference_coordinates()).max()


def test_linearized_tetrahedral_model_has_the_modal_frequencies():
    """``fb.linearize`` of the clamped Tet10 beam: the eigenvalues of its A matrix are ± i ω of ``modal_analysis``."""
    _, system = clamped_beam(divisions=(4, 1, 1))
    lin = fb.linearize(system)
    omega = np.sort(np.abs(np.linalg.eigvals(lin.A).imag))[::2][:3]
    np.testing.assert_allclose(omega / (2 * np.pi), fb.modal_analysis(system, n_modes=3).frequencies, rtol=1e-8)


@pytest.mark.parametrize("order", [1, 2], ids=["Tet4", "Tet10"])
def test_the_boundary_of_a_tetrahedral_body_is_a_closed_contact_surface(order):
    """``fb.BodySurface`` of a box of tetrahedra: a closed, outward surface (the signed distance of a point inside is
    negative, outside positive), its triangles tiling the box's area."""
    body, _ = clamped_beam(order=order)
    surface = fb.BodySurface(body)
    x = body.mesh.points[surface.triangles]
    area = 0.5 * np.linalg.norm(np.cross(x[:, 1] - x[:, 0], x[:, 2] - x[:, 0]), axis=1).sum()
    a, b, c = SIZE
    assert area == pytest.approx(2 * (a * b + b * c + a * c), rel=1e-12)
    volume = np.einsum("ti,ti->t", x[:, 0], np.cross(x[:, 1], x[:, 2])).sum() / 6.0  # outward: positive
    assert volume == pytest.approx(a * b * c, rel=1e-12)
