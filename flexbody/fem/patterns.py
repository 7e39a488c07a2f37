"""Assembly patterns of a mesh, fixed once: a greedy element colouring (no two elements of one colour share a
node, so the elements of a colour are assembled in parallel without races) and the CSR pattern of the
node-block matrices with the data offset of every element block.
"""
from __future__ import annotations


import numba as nb
import numpy as np



# --------------------------------------------------------------------------- colouring and patterns
@nb.njit(cache=True)
def greedy_element_colors(cells: np.ndarray, n_nodes: int) -> np.ndarray:
    """Colour elements so that no two elements of a colour share a node; returns colours (m,)."""
    m, nn = cells.shape
    count = np.zeros(n_nodes + 1, np.int64)
    for e in range(m):
        for a in range(nn):
            count[cells[e, a] + 1] += 1
    ptr = np.cumsum(count)
    fill = ptr[:-1].copy()
    node_elems = np.empty(ptr[-1], np.int64)
    for e in range(m):
        for a in range(nn):
            node_elems[fill[cells[e, a]]] = e
            fill[cells[e, a]] += 1
    colors = -np.ones(m, np.int64)
    forbidden = -np.ones(64 * nn, np.int64)
    for e in range(m):
        for a in range(nn):
            node = cells[e, a]
            for t in range(ptr[node], ptr[node + 1]):
                c = colors[node_elems[t]]
                if c >= 0:
                    forbidden[c] = e
        c = 0
        while forbidden[c] == e:
            c += 1
        colors[e] = c
    return colors


def color_groups(cells: np.ndarray, n_nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """Elements grouped by colour: (color_ptr (n_colors+1,), color_elements (m,))."""
    colors = greedy_element_colors(np.require(cells, dtype=np.int64, requirements=("C", "W")), n_nodes)   # one signature
    order = np.argsort(colors, kind="stable")
    ptr = np.concatenate([[0], np.cumsum(np.bincount(colors))])
    return ptr.astype(np.int64), order.astype(np.int64)


def block_pattern(cells: np.ndarray, n_nodes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """CSR pattern of a 3-dof-per-node matrix coupling nodes of common elements.

    Returns indptr (3n+1,), indices (nnz,), ``data_offset`` (m, nn, nn) with the data index of entry
    (row 3A, column 3B) for element node pair (a, b), and ``row_length`` (n,) = 3 deg(A): entry
    (3A+i, 3B+j) sits at data_offset + i row_length[A] + j.
    """
    m, nn = cells.shape
    rows = np.repeat(cells, nn, axis=1).ravel()
    cols = np.tile(cells, (1, nn)).ravel()
    key = np.unique(rows.astype(np.int64) * n_nodes + cols)
    brow, bcol = key // n_nodes, key % n_nodes
    degree = np.bincount(brow, minlength=n_nodes)
    bptr = np.concatenate([[0], np.cumsum(degree)])
    pos_in_row = np.arange(len(key)) - bptr[brow]
    # scalar CSR: row 3A+i holds 3*deg(A) entries
    row_len = np.repeat(3 * degree, 3)
    indptr = np.concatenate([[0], np.cumsum(row_len)]).astype(np.int64)
    indices = np.empty(indptr[-1], np.int64)
    for i in range(3):
        starts = indptr[3 * brow + i] + 3 * pos_in_row
        for j in range(3):
            indices[starts + j] = 3 * bcol + j
    pair_pos = pos_in_row[np.searchsorted(key, rows.astype(np.int64) * n_nodes + cols)].reshape(m, nn, nn)
    data_offset = indptr[3 * cells[:, :, None]] + 3 * pair_pos
    return indptr, indices, data_offset, (3 * degree).astype(np.int64)
