"""Reference hexahedra [DE-101, DE-102]: partition of unity, nodal interpolation, exact gradients, quadrature."""

import numpy as np
import pytest

from flexbody.errors import MeshError
from flexbody.fem.elements import FACE_AXIS_SIDE, gauss_hex, reference_hex

RNG = np.random.default_rng(7)
POINTS = RNG.uniform(-1, 1, size=(50, 3))


@pytest.fixture(params=[8, 27], ids=["H8", "H27"])
def ref(request):
    return reference_hex(request.param)


def test_partition_of_unity(ref):
    N = ref.shape_functions(POINTS)
    assert np.allclose(N.sum(axis=1), 1.0, atol=1e-14)
    assert np.allclose(ref.shape_gradients(POINTS).sum(axis=1), 0.0, atol=1e-13)


def test_nodal_interpolation_kronecker(ref):
    assert np.allclose(ref.shape_functions(ref.nodes), np.eye(ref.n_nodes), atol=1e-14)


def test_hex8_matches_de101():
    """N_a = 1/8 (1 + ξ_a ξ)(1 + η_a η)(1 + ζ_a ζ) written out [DE-101]."""
    ref = reference_hex(8)
    expected = np.prod(1 + ref.nodes[None, :, :] * POINTS[:, None, :], axis=2) / 8
    assert np.allclose(ref.shape_functions(POINTS), expected, atol=1e-15)


def _polynomial_field(order):
    """A field in the element's space and its exact gradient."""
    if order == 1:

        def f(x):
            return 1 + 2 * x[:, 0] - 3 * x[:, 1] + 0.5 * x[:, 2] + 0.7 * x[:, 0] * x[:, 1] * x[:, 2]

        def g(x):
            return np.stack(
                [2 + 0.7 * x[:, 1] * x[:, 2], -3 + 0.7 * x[:, 0] * x[:, 2], 0.5 + 0.7 * x[:, 0] * x[:, 1]], 1
            )
    else:

        def f(x):
            return x[:, 0] ** 2 * x[:, 1] ** 2 * x[:, 2] ** 2 - 2 * x[:, 0] * x[:, 2] ** 2 + 3 * x[:, 1] - 1

        def g(x):
            return np.stack(
                [
                    2 * x[:, 0] * x[:, 1] ** 2 * x[:, 2] ** 2 - 2 * x[:, 2] ** 2,
                    2 * x[:, 0] ** 2 * x[:, 1] * x[:, 2] ** 2 + 3,
                    2 * x[:, 0] ** 2 * x[:, 1] ** 2 * x[:, 2] - 4 * x[:, 0] * x[:, 2],
                ],
                1,
            )

    return f, g


def test_reproduces_polynomials_and_gradients_exactly(ref):
    f, g = _polynomial_field(ref.order)
    nodal = f(ref.nodes)
    assert np.allclose(ref.shape_functions(POINTS) @ nodal, f(POINTS), atol=1e-13)
    assert np.allclose(np.einsum("pak,a->pk", ref.shape_gradients(POINTS), nodal), g(POINTS), atol=1e-12)


def test_gradients_match_finite_differences(ref):
    h = 1e-6
    fd = np.stack(
        [(ref.shape_functions(POINTS + h * e) - ref.shape_functions(POINTS - h * e)) / (2 * h) for e in np.eye(3)],
        axis=-1,
    )
    assert np.allclose(ref.shape_gradients(POINTS), fd, atol=1e-8)


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_gauss_rule_exact_to_degree(n):
    pts, w = gauss_hex(n)
    assert w.sum() == pytest.approx(8.0)
    for p in range(2 * n):  # ∫ x^p y^p z^p over [-1,1]^3
        exact = (2.0 / (p + 1) if p % 2 == 0 else 0.0) ** 3
        assert np.sum(w * np.prod(pts**p, axis=1)) == pytest.approx(exact, abs=1e-13)


def test_faces_hold_the_right_nodes(ref):
    for face, (axis, side) in enumerate(FACE_AXIS_SIDE):
        nodes = ref.face_nodes(face)
        assert len(nodes) == (4 if ref.order == 1 else 9)
        assert np.all(ref.nodes[nodes, axis] == side)


def test_bad_cell_size_and_quadrature():
    with pytest.raises(MeshError, match="8 or 27 nodes, got 20"):
        reference_hex(20)
    with pytest.raises(MeshError, match="at least one point"):
        gauss_hex(0)
