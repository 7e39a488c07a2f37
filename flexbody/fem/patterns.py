"""Assembly patterns of a mesh, fixed once: blocks of consecutive elements with a greedy colouring (no two blocks
of one colour share a node, so the blocks of a colour are assembled in parallel without races) and the CSR
pattern of the node-block matrices with the data offset of every element block.
"""

from __future__ import annotations

import numba as nb
import numpy as np

MIN_BLOCK = 64
"""Fewest elements in a block (a unit of parallel work)."""
MIN_BLOCKS = 16
"""Blocks are at most m / MIN_BLOCKS elements long, so that a colour has blocks for several threads."""


# --------------------------------------------------------------------------- colouring and patterns
@nb.njit(cache=True)
def greedy_block_colors(cells: np.ndarray, n_nodes: int, min_block: int, min_blocks: int) -> tuple[np.ndarray, int]:
    """Blocks of consecutive elements and their greedy colouring: no two blocks of a colour share a node.

    A block holds max(min_block, min(bandwidth, ⌈m / min_blocks⌉)) elements (the last one fewer), with the
    bandwidth the largest index difference of two elements sharing a node. Returns the colours (n_blocks,),
    given in block order, and the block size.
    """
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
    bandwidth = 0
    for node in range(n_nodes):
        if ptr[node + 1] > ptr[node]:  # a node's elements are listed in increasing order
            bandwidth = max(bandwidth, node_elems[ptr[node + 1] - 1] - node_elems[ptr[node]])
    block_size = max(min_block, min(bandwidth, (m + min_blocks - 1) // min_blocks))
    n_blocks = (m + block_size - 1) // block_size
    colors = -np.ones(n_blocks, np.int64)
    forbidden = -np.ones(n_blocks + 1, np.int64)  # forbidden[c] == b: a neighbour of block b has colour c
    for b in range(n_blocks):
        for e in range(b * block_size, min(m, (b + 1) * block_size)):
            for a in range(nn):
                node = cells[e, a]
                for t in range(ptr[node], ptr[node + 1]):
                    c = colors[node_elems[t] // block_size]
                    if c >= 0:
                        forbidden[c] = b
        c = 0
        while forbidden[c] == b:
            c += 1
        colors[b] = c
    return colors, block_size


def color_groups(cells: np.ndarray, n_nodes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Blocks of consecutive elements grouped by colour: (color_ptr (n_colors+1,), block_ptr (n_blocks+1,),
    elements (m,)).

    Colour c holds the blocks color_ptr[c]:color_ptr[c+1], block b the elements
    elements[block_ptr[b]:block_ptr[b+1]] (ascending); blocks of a colour share no node. Blocks as long as the
    element bandwidth of the numbering need 2 colours only (box meshes), and consecutive elements keep the node
    and gradient accesses local (see :func:`greedy_block_colors`). The blocks depend on the mesh alone, not on
    the number of threads.
    """
    cells = np.require(cells, dtype=np.int64, requirements=("C", "W"))  # one signature
    m = len(cells)
    colors, block_size = greedy_block_colors(cells, n_nodes, MIN_BLOCK, MIN_BLOCKS)
    blocks = np.argsort(colors, kind="stable")  # colour by colour
    sizes = np.minimum(block_size, m - blocks * block_size)
    block_ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    elements = (np.repeat(blocks * block_size - block_ptr[:-1], sizes) + np.arange(m)).astype(np.int64)
    color_ptr = np.concatenate([[0], np.cumsum(np.bincount(colors))]).astype(np.int64)
    return color_ptr, block_ptr, elements


def parallel_width(color_ptr: np.ndarray, block_ptr: np.ndarray) -> int:
    """How many threads the colouring of :func:`color_groups` keeps busy: the number of blocks of the colour of the
    median element. 1 where most elements lie in colours of one block (a numbering without locality, e.g. a mesher's
    tetrahedra in its own order, whose bandwidth is the whole mesh), where a parallel pass would only add its
    threads' wake-ups and joins to a serial one."""
    blocks = np.diff(color_ptr)  # blocks per colour
    sizes = block_ptr[color_ptr[1:]] - block_ptr[color_ptr[:-1]]  # elements per colour
    order = np.argsort(blocks, kind="stable")
    median = np.searchsorted(np.cumsum(sizes[order]), 0.5 * sizes.sum())
    return int(blocks[order][min(median, len(order) - 1)])


def block_pattern(cells: np.ndarray, n_nodes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
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
