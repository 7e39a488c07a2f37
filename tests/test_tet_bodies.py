"""Flexible bodies of 4- and 10-node tetrahedra: patch tests, homogeneous finite strain, mass, loads on triangular
faces (traction, pressure, moment), every kind of material (Mooney–Rivlin, a sympy user energy, Kelvin–Voigt damping:
force = ∇ energy, exact tangent and damping matrices), stress fields, VTK export, a cantilever against the 27-node
bricks and the refusals (volumetric locking of Tet4, rules with zero-energy modes, inverted elements).

A slender cantilever (1 m, 0.1 m square, clamped end face, shear resultant on the free one; Timoshenko with Cowper's
κ = 10(1 + ν)/(12 + 11ν): 1.91933e-4 m): 10-node tetrahedra on 10 × 1 × 1, 20 × 2 × 2 and 40 × 4 × 4 bricks cut
in six give 0.97579, 0.98904, 0.99208 of it, the 27-node bricks on the same meshes 0.98581, 0.99096, 0.99258 (both
converging to the same answer, below beam theory by the end face's clamp of its Poisson contraction); 4-node
tetrahedra 0.504 and 0.787 (20 × 2 × 2, 40 × 4 × 4: constant strain, stiff in bending).

Patch tests (Zienkiewicz & Taylor; the linear elastic problem, the tangent of St. Venant–Kirchhoff at the reference
state): on an irregular mesh (interior vertices moved at random), the nodal values of a displacement field the
element reproduces solve K₀ u = f exactly, f the consistent forces of the field's body force b = −div σ and of its
tractions σ n on the six faces of the box: linear fields for both elements (b = 0), quadratic ones for the 10-node
element (b constant). The 4-node element fails the quadratic one (it cannot represent the field): the test's
negative control.
"""

from __future__ import annotations

import logging

import numpy as np
import pytest

import flexbody as fb
from flexbody.errors import ElementError, FlexbodyError, MeshError

YOUNG, POISSON, DENSITY = 2.0e5, 0.3, 1000.0
LAM = YOUNG * POISSON / ((1 + POISSON) * (1 - 2 * POISSON))
MU = YOUNG / (2 * (1 + POISSON))
SIZE = (1.0, 0.6, 0.4)
FACES = {"x0": (0, -1), "x1": (0, 1), "y0": (1, -1), "y1": (1, 1), "z0": (2, -1), "z1": (2, 1)}


def irregular_mesh(order: int, seed: int = 1) -> fb.mesh.TetMesh:
    """A box of 3 × 2 × 2 bricks cut into 72 tetrahedra, interior vertices moved by up to 3 % of the box."""
    tets = fb.mesh.box(SIZE, (3, 2, 2), cells="tetrahedra")
    points = np.array(tets.points)
    boundary = np.unique(np.concatenate([tets.node_set(s) for s in FACES]))
    inner = np.setdiff1d(np.arange(len(points)), boundary)
    points[inner] += 0.03 * np.random.default_rng(seed).uniform(-1, 1, (len(inner), 3))
    moved = fb.mesh.TetMesh(points, tets.cells, tets.node_sets, tets.face_sets)
    return moved if order == 1 else moved.to_quadratic()


def field(A: np.ndarray, C: np.ndarray):
    """u(X) = A X + C : (X ⊗ X) (u_i = A_ij X_j + C_ijk X_j X_k), its stress σ(X) and body force b = −div σ."""
    H = C + C.transpose(0, 2, 1)  # ∂(∇u)_ij / ∂X_k

    def u(X):
        return X @ A.T + np.einsum("ijk,pj,pk->pi", C, X, X)

    def sigma(X):
        grad = A + np.einsum("ijk,pk->pij", H, X)
        eps = 0.5 * (grad + grad.transpose(0, 2, 1))
        return LAM * np.trace(eps, axis1=1, axis2=2)[:, None, None] * np.eye(3) + 2 * MU * eps

    deps = 0.5 * (H + H.transpose(1, 0, 2))  # ∂ε_ij/∂X_k
    div = LAM * np.einsum("kki->i", deps) + 2 * MU * np.einsum("ijj->i", deps)
    return u, sigma, -div


def patch_residual(order: int, quadratic: bool) -> float:
    """|K₀ u − f| / |f| for the nodal values u of a field (linear, or with quadratic terms) on the irregular mesh."""
    rng = np.random.default_rng(7)
    A = 1e-3 * rng.standard_normal((3, 3))
    C = 1e-3 * rng.standard_normal((3, 3, 3)) if quadratic else np.zeros((3, 3, 3))
    u, sigma, b = field(A, C)
    body = fb.FlexibleBody("patch", irregular_mesh(order), fb.StVenantKirchhoff(YOUNG, POISSON, DENSITY))
    f = fb.BodyForce(body, b / DENSITY).force()
    for name, (axis, side) in FACES.items():
        normal = side * np.eye(3)[axis]
        f = f + fb.SurfaceTraction(body, name, traction=lambda X, n=normal: sigma(X) @ n).force()
    K0 = body.tangent(body.reference_coordinates())
    return float(np.linalg.norm(K0 @ u(body.mesh.points).ravel() - f) / np.linalg.norm(f))


@pytest.mark.parametrize("order", [1, 2], ids=["Tet4", "Tet10"])
def test_linear_patch_test(order):
    assert patch_residual(order, quadratic=False) < 1e-12


def test_quadratic_patch_test_of_the_10_node_element():
    assert patch_residual(2, quadratic=True) < 1e-12


def test_the_4_node_element_fails_the_quadratic_patch_test():
    assert patch_residual(1, quadratic=True) > 1e-3


@pytest.mark.parametrize("order", [1, 2], ids=["Tet4", "Tet10"])
def test_homogeneous_finite_strain_is_balanced_by_its_nominal_tractions(order):
    """x = F X at a large F (neo-Hookean): the internal force is the consistent force of the nominal traction P N on
    the six faces of the box, node by node (zero at interior nodes, whatever the mesh)."""
    F = np.array([[1.3, 0.2, -0.1], [0.05, 0.9, 0.15], [-0.1, 0.1, 1.1]])
    body = fb.FlexibleBody("cube", irregular_mesh(order), fb.NeoHookean(YOUNG, POISSON, DENSITY))
    f = body.internal_force((body.mesh.points @ F.T).ravel())
    P = F @ body.material.pk2_stress(F[None])[0]
    tractions = sum(
        fb.SurfaceTraction(body, name, traction=P @ (side * np.eye(3)[axis])).force()
        for name, (axis, side) in FACES.items()
    )
    assert np.abs(f - tractions).max() < 1e-12 * np.abs(f).max()


@pytest.mark.parametrize("order", [1, 2], ids=["Tet4", "Tet10"])
def test_mass_and_volume_of_an_irregular_mesh(order):
    body = fb.FlexibleBody("m", irregular_mesh(order), fb.NeoHookean(YOUNG, POISSON, DENSITY))
    volume = np.prod(SIZE)
    assert body.volume() == pytest.approx(volume, rel=1e-13)
    M = body.mass_matrix()
    ones = np.tile([1.0, 0.0, 0.0], body.n_nodes)
    assert ones @ M @ ones == pytest.approx(DENSITY * volume, rel=1e-13)
    x = np.zeros(body.n_dofs)
    x[0::3] = body.mesh.points[:, 0]
    assert ones @ M @ x == pytest.approx(DENSITY * volume * SIZE[0] / 2, rel=1e-13)  # first moment: exact


@pytest.mark.parametrize("order", [1, 2], ids=["Tet4", "Tet10"])
def test_pressure_on_triangular_faces(order):
    """A follower pressure on the x1 face: resultant −p A e_x in the reference state, its load stiffness the derivative
    of its force."""
    body = fb.FlexibleBody("p", irregular_mesh(order), fb.NeoHookean(YOUNG, POISSON, DENSITY))
    load = fb.Pressure(body, "x1", 1000.0)
    q0 = body.reference_coordinates()
    np.testing.assert_allclose(load.force(q0).reshape(-1, 3).sum(axis=0), [-1000.0 * 0.6 * 0.4, 0, 0], atol=1e-10)
    rng = np.random.default_rng(3)
    q = q0 + 0.01 * rng.standard_normal(q0.size)
    d, h = rng.standard_normal(q0.size), 1e-6
    fd = (load.force(q + h * d) - load.force(q - h * d)) / (2 * h)
    assert np.abs(load.stiffness(q) @ d - fd).max() < 1e-6 * np.abs(fd).max()


def test_4_node_tetrahedra_refuse_a_nearly_incompressible_material():
    with pytest.raises(ElementError, match=r"4-node tetrahedra lock .*Poisson's ratio 0\.49 .*10-node tetrahedra"):
        fb.FlexibleBody("soft", irregular_mesh(1), fb.NeoHookean(YOUNG, 0.49, DENSITY))
    fb.FlexibleBody("soft", irregular_mesh(2), fb.NeoHookean(YOUNG, 0.49, DENSITY))  # 10 nodes: accepted


def test_tetrahedron_rules_are_checked():
    mesh = irregular_mesh(2)
    material = fb.NeoHookean(YOUNG, POISSON, DENSITY)
    with pytest.raises(ElementError, match=r"degree 1 leaves 18 zero-energy mode\(s\) in 10-node tetrahedra"):
        fb.FlexibleBody("t", mesh, material, quadrature=1)
    with pytest.raises(FlexbodyError, match=r"no tetrahedron rule of degree 3; the degrees are \(1, 2, 5\)"):
        fb.FlexibleBody("t", mesh, material, quadrature=3)
    with pytest.raises(FlexbodyError, match="quadrature of tetrahedra is the degree of a rule"):
        fb.FlexibleBody("t", mesh, material, quadrature=(2, 2, 2))
    with pytest.raises(FlexbodyError, match="applies to 8-node bricks only"):
        fb.FlexibleBody("t", mesh, material, locking="incompatible_modes")
    assert fb.FlexibleBody("t", mesh, material).quadrature == 2
    assert fb.FlexibleBody("t", irregular_mesh(1), material).quadrature == 1


def test_an_inverted_tetrahedron_is_named():
    mesh = irregular_mesh(1)
    cells = np.array(mesh.cells)
    cells[5, [1, 2]] = cells[5, [2, 1]]
    with pytest.raises(ElementError, match=r"element 5 is inverted"):
        fb.FlexibleBody("t", fb.mesh.TetMesh(mesh.points, cells), fb.NeoHookean(YOUNG, POISSON, DENSITY))


def test_tetrahedral_face_sets_are_checked():
    mesh = irregular_mesh(1)
    with pytest.raises(MeshError, match=r"face set 'f' row 0 has local face 4, not in 0\.\.3"):
        fb.mesh.TetMesh(mesh.points, mesh.cells, face_sets={"f": [[0, 4]]})
    with pytest.raises(MeshError, match=r"cells must be \(m, 4\) VTK_TETRA or \(m, 10\) VTK_QUADRATIC_TETRA"):
        fb.mesh.TetMesh(mesh.points, mesh.cells[:, :3])


def test_box_of_tetrahedra_face_sets_tile_the_box_faces():
    for order in (1, 2):
        mesh = fb.mesh.box(SIZE, (3, 2, 2), order=order, cells="tetrahedra")
        body = fb.FlexibleBody("b", mesh, fb.NeoHookean(YOUNG, POISSON, DENSITY))
        for name, (axis, _) in FACES.items():
            area = np.prod(np.delete(SIZE, axis))
            assert fb.SurfaceTraction(body, name, total=(0, 0, 1.0)).area == pytest.approx(area, rel=1e-14)
        assert len(fb.mesh.boundary_faces(mesh)) == sum(len(mesh.face_set(s)) for s in FACES)


def test_no_warning_for_tetrahedra(caplog):
    with caplog.at_level(logging.WARNING, logger="flexbody"):
        fb.FlexibleBody(
            "b",
            fb.mesh.box((1.0, 0.05, 0.05), (10, 1, 1), cells="tetrahedra", order=2),
            fb.NeoHookean(YOUNG, POISSON, DENSITY),
        )
    assert not caplog.records


CANTILEVER = dict(length=1.0, side=0.1, young=2.1e11, poisson=0.3, force=1.0e3)


def cantilever_tip(divisions, order, cells) -> float:
    """Tip deflection [m] of the clamped cantilever under its end shear, on bricks or their tetrahedra."""
    c = CANTILEVER
    mesh = fb.mesh.box((c["length"], c["side"], c["side"]), divisions, order=order, cells=cells)
    body = fb.FlexibleBody("beam", mesh, fb.StVenantKirchhoff(c["young"], c["poisson"], 7800.0))
    load = fb.SurfaceTraction(body, "x1", total=(0.0, 0.0, -c["force"]))
    results = fb.solve_static(fb.System([body], constraints=[fb.Fix(body, "x0")], loads=[load]), load_steps=1)
    return -float(results.displacements(body)[body.nodes("x1"), 2].mean())


def test_ten_node_cantilever_converges_to_the_27_node_bricks_answer():
    tet = [cantilever_tip(d, 2, "tetrahedra") for d in ((10, 1, 1), (20, 2, 2))]
    brick = cantilever_tip((20, 2, 2), 2, "hexahedra")
    assert tet[0] < tet[1] < brick
    assert tet[1] == pytest.approx(brick, rel=2.5e-3)  # 0.2 % apart at 20 × 2 × 2 (module docstring)


@pytest.mark.slow
def test_ten_node_cantilever_on_the_finest_mesh():
    """At 40 × 4 × 4 bricks (each cut in six) within 0.06 % of the 27-node bricks on the same mesh, and within 1 % of
    Timoshenko's beam."""
    c = CANTILEVER
    inertia, area = c["side"] ** 4 / 12, c["side"] ** 2
    shear = c["young"] / (2 * (1 + c["poisson"]))
    kappa = 10 * (1 + c["poisson"]) / (12 + 11 * c["poisson"])
    timoshenko = c["force"] * c["length"] ** 3 / (3 * c["young"] * inertia) + c["force"] * c["length"] / (
        kappa * shear * area
    )
    tet, brick = cantilever_tip((40, 4, 4), 2, "tetrahedra"), cantilever_tip((40, 4, 4), 2, "hexahedra")
    assert tet == pytest.approx(brick, rel=6e-4)
    assert tet == pytest.approx(timoshenko, rel=1e-2)


def _user_law():
    import sympy as sp

    return fb.Hyperelastic.split(
        isochoric=lambda I1bar, I2bar, mu: mu / 2 * (I1bar - 3),
        volumetric=lambda J, kappa: kappa / 4 * (J**2 - 1 - 2 * sp.log(J)),
        parameters={"mu": MU, "kappa": LAM + 2 * MU / 3},
        density=DENSITY,
        name="user neo-Hookean",
    )


@pytest.mark.parametrize("law", ["mooney_rivlin", "user", "damped"])
@pytest.mark.parametrize("order", [1, 2], ids=["Tet4", "Tet10"])
def test_every_law_gives_the_gradient_of_its_energy_and_exact_jacobians(order, law):
    """Mooney–Rivlin, a user energy (compiled by sympy into the kernels) and Kelvin–Voigt damping on tetrahedra: the
    internal force is the gradient of the strain energy and the tangent and damping matrices are the Jacobians of the
    force (central differences, h = 1e-7 of the size: truncation ~1e-9)."""
    materials = {
        "mooney_rivlin": fb.MooneyRivlin(c10=0.3 * MU, c01=0.2 * MU, bulk_modulus=LAM + 2 * MU / 3, density=DENSITY),
        "user": _user_law(),
        "damped": fb.NeoHookean(YOUNG, POISSON, DENSITY, damping=0.01),
    }
    body = fb.FlexibleBody("b", irregular_mesh(order), materials[law])
    rng = np.random.default_rng(5)
    q = body.reference_coordinates() + 0.005 * rng.standard_normal(body.n_dofs)  # J in [0.78, 1.37]
    assert body.inversion(q) is None
    v = rng.standard_normal(body.n_dofs)
    d, h = rng.standard_normal(body.n_dofs), 1e-7
    f = body.internal_force(q, v)
    fd = (body.internal_force(q + h * d, v) - body.internal_force(q - h * d, v)) / (2 * h)
    assert np.abs(body.tangent(q, v) @ d - fd).max() < 1e-6 * np.abs(fd).max()
    if law == "damped":
        fv = (body.internal_force(q, v + h * d) - body.internal_force(q, v - h * d)) / (2 * h)
        assert np.abs(body.damping_matrix(q, v) @ d - fv).max() < 1e-6 * np.abs(fv).max()
        assert np.abs(f - body.internal_force(q)).max() > 1e-3 * np.abs(f).max()  # the damping acts
    else:
        dU = (body.strain_energy(q + h * d) - body.strain_energy(q - h * d)) / (2 * h)
        assert dU == pytest.approx(f @ d, rel=1e-6)


@pytest.mark.parametrize("order", [1, 2], ids=["Tet4", "Tet10"])
def test_stress_fields_of_a_homogeneous_strain_are_the_materials(order):
    """x = F X: F, E, the PK2 and Cauchy stresses at every Gauss point equal the material's at that F (1e-12)."""
    F = np.array([[1.1, 0.05, 0.0], [0.0, 0.95, 0.1], [0.02, 0.0, 1.05]])
    body = fb.FlexibleBody("b", irregular_mesh(order), fb.NeoHookean(YOUNG, POISSON, DENSITY))
    fields = body.gauss_point_fields((body.mesh.points @ F.T).ravel())
    S = body.material.pk2_stress(F[None])[0]
    np.testing.assert_allclose(fields["F"], np.broadcast_to(F, fields["F"].shape), atol=1e-13)
    np.testing.assert_allclose(
        fields["pk2_stress"], np.broadcast_to(S, fields["pk2_stress"].shape), rtol=1e-10, atol=1e-12 * np.abs(S).max()
    )
    sigma = F @ S @ F.T / np.linalg.det(F)
    np.testing.assert_allclose(
        body.cell_fields((body.mesh.points @ F.T).ravel())["cauchy_stress"],
        np.broadcast_to(sigma, (body.n_elements, 3, 3)),
        atol=1e-10 * np.abs(sigma).max(),
    )


@pytest.mark.parametrize("order", [1, 2], ids=["Tet4", "Tet10"])
def test_a_surface_moment_on_triangular_faces(order):
    """fb.SurfaceMoment on the x1 face: zero resultant force and the given moment about the face's centroid."""
    body = fb.FlexibleBody("b", irregular_mesh(order), fb.NeoHookean(YOUNG, POISSON, DENSITY))
    moment = np.array([3.0, -1.0, 2.0])
    load = fb.SurfaceMoment(body, "x1", moment)
    f = load.force().reshape(-1, 3)
    np.testing.assert_allclose(f.sum(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(np.cross(body.mesh.points - load.centroid, f).sum(axis=0), moment, atol=1e-12)


@pytest.mark.parametrize("order, cell_type", [(1, "tetra"), (2, "tetra10")])
def test_export_writes_vtk_tetrahedra(order, cell_type, tmp_path):
    import meshio

    body = fb.FlexibleBody("b", irregular_mesh(order), fb.NeoHookean(YOUNG, POISSON, DENSITY))
    path = fb.io.write_vtu(tmp_path / "b.vtu", body, body.reference_coordinates())
    back = meshio.read(path)
    np.testing.assert_array_equal(back.cells_dict[cell_type], body.mesh.cells)
    assert "von_mises" in back.point_data or "von_mises" in back.cell_data
