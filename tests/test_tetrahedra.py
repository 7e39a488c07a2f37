"""Reference tetrahedra (``flexbody.fem.tetrahedra``) against references nobody here wrote: the Kronecker property and
the partition of unity of the shape functions, the exact interpolation of linear (4 and 10 nodes) and quadratic (10
nodes) fields, the gradients against central differences, the quadrature rules against the closed-form integrals of
every monomial (Dirichlet's formula, itself checked against sympy's integration), and the 10-node element's consistent
mass matrix against its published table (ρV/420 × 6, 1, −4, −6, 32, 16, 8)."""

from math import factorial

import numpy as np
import pytest

import flexbody as fb
from flexbody.fem.tetrahedra import (
    TET4_NODES,
    TET10_EDGES,
    TET_FACES,
    reference_tet,
    tet_quadrature,
    triangle_quadrature,
)


def random_points(rng, count: int) -> np.ndarray:
    """Points inside the reference tetrahedron."""
    L = rng.dirichlet(np.ones(4), size=count)
    return L[:, 1:]


@pytest.mark.parametrize("n_nodes", [4, 10])
def test_shape_functions_are_one_at_their_node_and_sum_to_one(n_nodes):
    element = reference_tet(n_nodes)
    assert np.abs(element.shape_functions(element.nodes) - np.eye(n_nodes)).max() < 1e-15
    xi = random_points(np.random.default_rng(0), 20)
    assert np.abs(element.shape_functions(xi).sum(axis=1) - 1.0).max() < 1e-14
    assert np.abs(element.shape_gradients(xi).sum(axis=1)).max() < 1e-13


@pytest.mark.parametrize("n_nodes, degree", [(4, 1), (10, 1), (10, 2)])
def test_fields_of_the_elements_degree_are_interpolated_exactly(n_nodes, degree):
    element = reference_tet(n_nodes)
    rng = np.random.default_rng(1)
    c = rng.standard_normal(10)

    def field(x):  # a full polynomial of the degree, and its gradient
        linear = c[0] + x @ c[1:4]
        if degree == 1:
            return linear, np.broadcast_to(c[1:4], x.shape)
        quadratic = c[4] * x[:, 0] ** 2 + c[5] * x[:, 1] * x[:, 2] + c[6] * x[:, 2] ** 2 + c[7] * x[:, 0] * x[:, 1]
        gradient = np.column_stack(
            [
                c[1] + 2 * c[4] * x[:, 0] + c[7] * x[:, 1],
                c[2] + c[5] * x[:, 2] + c[7] * x[:, 0],
                c[3] + c[5] * x[:, 1] + 2 * c[6] * x[:, 2],
            ]
        )
        return linear + quadratic, gradient

    xi = random_points(rng, 30)
    nodal = field(element.nodes)[0]
    value, gradient = field(xi)
    assert np.abs(element.shape_functions(xi) @ nodal - value).max() < 1e-13
    assert np.abs(np.einsum("pak,a->pk", element.shape_gradients(xi), nodal) - gradient).max() < 1e-12


@pytest.mark.parametrize("n_nodes", [4, 10])
def test_gradients_equal_central_differences(n_nodes):
    element = reference_tet(n_nodes)
    xi = random_points(np.random.default_rng(2), 5)
    h = 1e-6
    for k in range(3):
        step = np.zeros(3)
        step[k] = h
        central = (element.shape_functions(xi + step) - element.shape_functions(xi - step)) / (2 * h)
        assert np.abs(element.shape_gradients(xi)[:, :, k] - central).max() < 1e-8


def dirichlet(i: int, j: int, k: int) -> float:
    """∫ ξ^i η^j ζ^k over the reference tetrahedron (Dirichlet's formula)."""
    return factorial(i) * factorial(j) * factorial(k) / factorial(i + j + k + 3)


def test_dirichlets_formula_equals_sympys_integral():
    sympy = pytest.importorskip("sympy")
    x, y, z = sympy.symbols("x y z")
    for i, j, k in [(2, 0, 1), (1, 1, 1), (0, 3, 2)]:
        exact = sympy.integrate(x**i * y**j * z**k, (z, 0, 1 - x - y), (y, 0, 1 - x), (x, 0, 1))
        assert abs(float(exact) - dirichlet(i, j, k)) < 1e-18


@pytest.mark.parametrize("degree, points", [(1, 1), (2, 4), (3, 14), (5, 14)])
def test_tetrahedron_rules_integrate_every_monomial_of_their_degree(degree, points):
    xi, w = tet_quadrature(degree)
    assert len(w) == points and (w > 0).all()
    assert xi.min() > 0 and (1 - xi.sum(axis=1)).min() > 0  # inside
    exact_degree = {1: 1, 2: 2, 3: 5, 5: 5}[degree]
    for i in range(exact_degree + 1):
        for j in range(exact_degree + 1 - i):
            for k in range(exact_degree + 1 - i - j):
                value = w @ (xi[:, 0] ** i * xi[:, 1] ** j * xi[:, 2] ** k)
                assert abs(value - dirichlet(i, j, k)) < 1e-16
    if exact_degree < 5:  # and not the next degree
        i = exact_degree + 1
        assert abs(w @ xi[:, 0] ** i - dirichlet(i, 0, 0)) > 1e-6


@pytest.mark.parametrize("degree, points", [(1, 3), (2, 3), (4, 6)])
def test_triangle_rules_integrate_every_monomial_of_their_degree(degree, points):
    st, w = triangle_quadrature(degree)
    assert len(w) == points and (w > 0).all() and st.min() > 0 and (1 - st.sum(axis=1)).min() > 0
    exact_degree = 2 if degree <= 2 else 4
    for i in range(exact_degree + 1):
        for j in range(exact_degree + 1 - i):
            exact = factorial(i) * factorial(j) / factorial(i + j + 2)
            assert abs(w @ (st[:, 0] ** i * st[:, 1] ** j) - exact) < 1e-16


def test_the_quadratic_elements_mass_matrix_is_the_published_one():
    """M = ρV/420 × (6 corner–corner, 1 between corners, −4 corner–adjacent edge, −6 corner–opposite edge, 32 edge,
    16 edges sharing a corner, 8 opposite edges), here with ρ = 1 on the reference element (V = 1/6)."""
    element = reference_tet(10)
    xi, w = tet_quadrature(element.mass_degree)
    N = element.shape_functions(xi)
    M = (N.T * w) @ N
    table = np.empty((10, 10))
    for a in range(10):
        for b in range(10):
            if a < 4 and b < 4:
                table[a, b] = 6 if a == b else 1
            elif a < 4 or b < 4:
                corner, edge = (a, b - 4) if a < 4 else (b, a - 4)
                table[a, b] = -4 if corner in TET10_EDGES[edge] else -6
            else:
                shared = set(TET10_EDGES[a - 4]) & set(TET10_EDGES[b - 4])
                table[a, b] = 32 if a == b else (16 if shared else 8)
    assert np.abs(M - table / 420 / 6).max() < 1e-16


@pytest.mark.parametrize("n_nodes", [4, 10])
def test_faces_point_outwards_and_carry_their_nodes(n_nodes):
    element = reference_tet(n_nodes)
    centre = TET4_NODES.mean(axis=0)
    st, _ = triangle_quadrature(4)
    for face, (a, b, c) in enumerate(TET_FACES):
        x = TET4_NODES
        normal = np.cross(x[b] - x[a], x[c] - x[a])
        assert normal @ ((x[a] + x[b] + x[c]) / 3 - centre) > 0
        nodes = element.nodes[element.face_nodes(face)]
        assert np.abs((nodes - x[a]) @ normal).max() < 1e-15  # on the face's plane
        assert len(nodes) == (3 if n_nodes == 4 else 6)
        points = element.face_points(face, st)
        assert np.abs((points - x[a]) @ normal).max() < 1e-15
        others = np.setdiff1d(np.arange(n_nodes), element.face_nodes(face))
        assert np.abs(element.shape_functions(points)[:, others]).max() < 1e-15  # only the face's nodes act on it


def test_bad_requests_are_named():
    with pytest.raises(fb.MeshError, match="4 or 10"):
        reference_tet(8)
    with pytest.raises(fb.MeshError, match="degrees 0 to 5"):
        tet_quadrature(6)
    with pytest.raises(fb.MeshError, match="degrees 0 to 4"):
        triangle_quadrature(5)


def test_vtks_own_shape_functions_equal_ours():
    """VTK's vtkTetra and vtkQuadraticTetra interpolate with our functions at random points (pcoords are our ξ), so
    TET4_NODES and TET10_NODES are VTK's node order; their faces are VTK's, nodes in the same order."""
    vtk_cells = pytest.importorskip("vtkmodules.vtkCommonDataModel")
    xi = random_points(np.random.default_rng(4), 6)
    for cell, n in ((vtk_cells.vtkTetra(), 4), (vtk_cells.vtkQuadraticTetra(), 10)):
        weights = []
        for point in xi:
            w = [0.0] * n
            cell.InterpolateFunctions(list(point), w)
            weights.append(w)
        assert np.abs(reference_tet(n).shape_functions(xi) - np.array(weights)).max() < 1e-14
    for cell, n in ((vtk_cells.vtkTetra(), 4), (vtk_cells.vtkQuadraticTetra(), 10)):
        for i in range(n):
            cell.GetPointIds().SetId(i, i)
        for face in range(4):
            vtk_face = cell.GetFace(face)
            ids = [vtk_face.GetPointId(i) for i in range(vtk_face.GetNumberOfPoints())]
            assert ids == list(reference_tet(n).face_nodes(face))
