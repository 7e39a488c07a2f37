"""The fixed CSR pattern of Φ (flexbody.system.row_pattern) and the compiled CSR products
(flexbody.linalg.csr_products) against scipy and a dense sum of the constraints' pieces."""

import numpy as np
import scipy.sparse as sp

from flexbody import mechanisms
from flexbody.linalg.csr_products import product, transposed_product
from flexbody.system.row_pattern import RowPattern


def _dense_phi(asm, ev):
    D = np.zeros((asm.n_constraints, asm.n_dofs))
    for c, rs in zip(asm.constraints, asm.row_slices):
        for cols, block in c.evaluate(ev).pieces:
            D[rs, cols] += block.toarray() if sp.issparse(block) else block
    return D


def test_phi_of_an_arm_with_a_beam_is_the_sum_of_its_pieces_with_zeros_dropped():
    asm = mechanisms.arm_with_beam(divisions=(3, 1, 1)).assemble()
    rng = np.random.default_rng(0)
    patterns = set()
    for k in range(3):
        q = asm.q0 + 0.01 * rng.normal(size=asm.n_dofs)
        ev = asm.workspace(float(k), q, rng.normal(size=asm.n_dofs))
        Phi = ev.constraint_rows()[1]
        D = _dense_phi(asm, ev)
        assert sp.isspmatrix_csr(Phi) and Phi.has_canonical_format
        assert Phi.nnz == np.count_nonzero(D)  # exact zeros (a planar arm's y rows) not stored
        assert np.array_equal(Phi.toarray(), D)
        patterns.add(id(asm._pattern))
    assert len(patterns) == 1  # one pattern for every state


def test_pattern_follows_pieces_of_new_content_and_shape():
    eye = sp.identity(2, format="coo")
    cols_a, cols_b = np.array([0, 1]), np.array([2, 3])
    block = np.array([[1.0, 0.0], [2.0, 3.0]])
    pieces = [(0, cols_a, eye), (0, cols_b, block)]
    pattern = RowPattern(pieces, (2, 5))
    assert pattern.fits(pieces)
    assert np.array_equal(pattern.matrix(pieces).toarray(), [[1, 0, 1, 0, 0], [0, 1, 2, 3, 0]])
    same_content = [(0, cols_a.copy(), eye), (0, cols_b.copy(), block * 2)]
    assert pattern.fits(same_content)  # other arrays, same positions
    moved = [(0, cols_a, eye), (0, np.array([3, 4]), block)]
    assert not pattern.fits(moved)
    wider = [(0, cols_a, eye), (0, np.array([2, 3, 4]), np.ones((2, 3)))]
    assert not pattern.fits(wider)
    other_identity = [(0, cols_a, -sp.identity(2, format="coo")), (0, cols_b, block)]
    assert pattern.fits(other_identity)  # same positions of a sparse block
    assert np.array_equal(pattern.matrix(other_identity).toarray()[:, :2], -np.eye(2))


def test_duplicates_are_summed_and_cancelling_entries_are_not_stored():
    cols = np.array([1, 2])
    pieces = [(0, cols, np.array([[1.0, 2.0]])), (0, cols, np.array([[-1.0, 5.0]]))]
    Phi = RowPattern(pieces, (1, 3)).matrix(pieces)
    assert Phi.nnz == 1 and Phi[0, 2] == 7.0


def test_csr_products_are_bitwise_those_of_scipy():
    rng = np.random.default_rng(1)
    A = sp.random(40, 70, density=0.2, random_state=3, format="csr")
    x, y = rng.normal(size=70), rng.normal(size=40)
    assert np.array_equal(product(A, x), A @ x)
    assert np.array_equal(transposed_product(A, y), A.T @ y)
    dense = A.toarray()
    assert np.array_equal(product(dense, x), dense @ x)
    assert np.array_equal(transposed_product(dense, y), dense.T @ y)
    csc = A.tocsc()
    assert np.allclose(transposed_product(csc, y), A.T @ y, rtol=0, atol=1e-14)


def test_sums_keep_the_pattern_of_their_first_term():
    from flexbody.linalg.csr_products import add_within, symmetric_part

    A = sp.csr_matrix(np.array([[2.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 4.0]]))
    B = sp.csr_matrix(np.array([[-2.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]]))
    S = add_within(A, B)
    assert np.array_equal(S.indptr, A.indptr) and np.array_equal(S.indices, A.indices)  # the zero at (0, 0) kept
    assert np.array_equal(S.toarray(), (A + B).toarray())
    outside = sp.csr_matrix(np.array([[0.0, 0.0, 5.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]))
    assert np.array_equal(add_within(A, outside).toarray(), (A + outside).toarray())
    K = sp.csr_matrix(np.array([[1.0, 2.0, 0.0], [-2.0, 3.0, 0.0], [0.0, 0.0, 1.0]]))
    Ks = symmetric_part(K)
    assert Ks.nnz == K.nnz  # (0, 1) and (1, 0) are zero, and stored
    assert np.array_equal(Ks.toarray(), 0.5 * (K + K.T).toarray())
