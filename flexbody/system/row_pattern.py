"""The CSR structure of the constraint Jacobian Φ of a system with flexible bodies, fixed while the
constraints' pieces keep their shapes, with only the values computed per state [DE-112, DE-113].

Each constraint gives Φ as pieces (global columns, block): dense blocks (a link's columns) and sparse ones
(the identity on a node's coordinates). The positions of every entry of every piece — zeros included — are
sorted into one list of unique (row, column) slots once; an evaluation then scatters the pieces' values
into those slots (``np.bincount``, duplicates summed in the pieces' order) and keeps the slots that are not
zero, whose CSR ``indices``/``indptr`` are made once per pattern of zeros (a planar arm's link block has
the same zeros at every state). So Φ is the same matrix, with the same stored entries, as the one summed
from the pieces' triplets with their zeros dropped, at a fraction of the cost.

The pieces are recognised by their column arrays and blocks: identity first (the constraints hand out the
same arrays at every state), then content, and only a change of content or shape builds a new pattern.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..linalg.csr_products import with_values


class RowPattern:
    """Slots of the entries of Φ (m, n) for one list of pieces; :meth:`matrix` makes Φ from their values."""

    def __init__(self, pieces: list, shape: tuple[int, int]):
        self.shape = shape
        self.pieces = [(row0, cols, _structure(block)) for row0, cols, block in pieces]  # kept: ids stay valid
        row_parts: list[np.ndarray] = []
        column_parts: list[np.ndarray] = []
        for row0, cols, block in pieces:
            r, c = _positions(block)
            row_parts.append(r + row0)
            column_parts.append(np.asarray(cols)[c])
        rows = np.concatenate(row_parts) if row_parts else np.zeros(0, np.int64)
        columns = np.concatenate(column_parts) if column_parts else np.zeros(0, np.int64)
        unique, self.slot = np.unique(rows.astype(np.int64) * shape[1] + columns, return_inverse=True)
        self.slot = self.slot.ravel()
        self.unique_rows, self.unique_cols = unique // shape[1], (unique % shape[1]).astype(np.int32)
        self._stored: dict[bytes, tuple] = {}  # pattern of non-zeros -> (keep, indices, indptr)

    def fits(self, pieces: list) -> bool:
        """Whether ``pieces`` (row0, cols, block) have this pattern's positions: the same arrays, or arrays
        of the same content (then kept in their place, so the next check is one of identity)."""
        if len(pieces) != len(self.pieces):
            return False
        for k, ((row0, cols, block), (row0_, cols_, structure)) in enumerate(zip(pieces, self.pieces)):
            if row0 != row0_:
                return False
            if cols is cols_ and (block is structure or (type(block) is np.ndarray and block.shape == structure)):
                continue  # the same sparse block, or a dense block of the same shape, on the same columns
            if cols is cols_ and _same_structure(block, structure, identical=True):
                continue  # a dense block of another array type
            if not (np.array_equal(cols, cols_) and _same_structure(block, structure, identical=False)):
                return False
            self.pieces[k] = (row0, cols, _structure(block))
        return True

    def matrix(self, pieces: list) -> sp.csr_matrix:
        """Φ as CSR from the values of ``pieces`` (which :meth:`fits`), zeros not stored."""
        values = [_values(block) for _, _, block in pieces]
        full = np.bincount(
            self.slot, weights=np.concatenate(values) if values else np.zeros(0), minlength=len(self.unique_cols)
        )
        nonzero = full != 0.0
        key = nonzero.tobytes()
        stored = self._stored.get(key)
        if stored is None:
            keep = np.flatnonzero(nonzero)
            indptr = np.searchsorted(self.unique_rows[keep], np.arange(self.shape[0] + 1)).astype(np.int32)
            indices = self.unique_cols[keep]
            indices.flags.writeable = indptr.flags.writeable = False  # shared by every Φ made here
            pattern = sp.csr_matrix((full[keep], indices, indptr), shape=self.shape, copy=False)
            pattern.has_canonical_format = True  # sorted, no duplicates
            stored = self._stored[key] = (keep, pattern)
        keep, pattern = stored
        return with_values(pattern, full[keep])


def _structure(block):
    """What identifies a piece's positions: a sparse block itself (its index arrays), a dense block's shape."""
    return block if sp.issparse(block) else np.shape(block)


def _same_structure(block, structure, identical: bool) -> bool:
    if not sp.issparse(block):
        return not sp.issparse(structure) and np.shape(block) == structure
    if not sp.issparse(structure):
        return False
    if identical:
        return block is structure
    a, b = _positions(block), _positions(structure)
    return block.shape == structure.shape and np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])


def _positions(block) -> tuple[np.ndarray, np.ndarray]:
    """(rows, cols) of every entry of a piece, in the order of :func:`_values`."""
    if sp.issparse(block):
        coo = block.tocoo()
        return coo.row.astype(np.int64), coo.col.astype(np.int64)
    r, k = np.shape(block)
    return np.repeat(np.arange(r), k), np.tile(np.arange(k), r)


def _values(block) -> np.ndarray:
    """Every entry of a piece (zeros included), in the order of :func:`_positions`."""
    if type(block) is np.ndarray and block.dtype == np.float64:
        return block.ravel()
    if sp.issparse(block):
        return block.tocoo().data
    return np.asarray(block, dtype=float).ravel()
