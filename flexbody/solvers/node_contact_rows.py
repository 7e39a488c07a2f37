"""The gaps, frames and rows of many contacts of flexible nodes with one plane or one triangle mesh, in one compiled
call each (:class:`~flexbody.solvers.contact_frames.ContactFrames` groups them).

A node's position is three of the coordinates and its Jacobian the identity on them [DE-101], so the rows of
:meth:`~flexbody.constraints.unilateral_contact.Contact.frame` are G = Bᵀ on the node's three columns, B = [n, t₁,
t₂] the contact's frame (:func:`~flexbody.constraints.unilateral_contact.tangent_bases`), and the gap is g = s(x) −
r. Against a mesh, s is exact within each node's cutoff r + 2 h max(‖v‖, ‖v_free‖) (the distance it may cover in two
steps, :func:`~flexbody.constraints.mesh_distance.signed_distances`); beyond it the gap is a lower bound and the rows
are zero.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from ..constraints.mesh_distance import signed_distances
from ..constraints.unilateral_contact import tangent_bases

__all__ = ["plane_node_rows", "mesh_node_rows", "gather_nodes"]


@nb.njit(cache=True)
def _write(m, i, basis, zero, starts, gap_value, gap, bases, data):
    """Contact i (the m-th of its group): its gap, frame and rows Bᵀ (or zeros) from ``starts[i]`` in ``data``."""
    gap[i] = gap_value
    for a in range(3):
        for j in range(3):
            bases[i, j, a] = basis[m, j, a]
            data[starts[i] + 3 * a + j] = 0.0 if zero else basis[m, j, a]


@nb.njit(cache=True)
def plane_node_rows(q, columns, radii, contacts, normal, point, plane_basis, starts, gap, bases, data) -> None:
    """Nodes (first ``columns`` (k,), ball ``radii`` (k,)) of the ``contacts`` (k,) on a plane (unit ``normal``,
    ``point``, frame ``plane_basis`` (3, 3)): g = n·(x − x₀) − r into ``gap`` (c,), B into ``bases`` (c, 3, 3), Bᵀ
    into ``data`` from ``starts`` (c,)."""
    basis = plane_basis.reshape(1, 3, 3)
    for m in range(columns.shape[0]):
        c = columns[m]
        s = normal[0] * (q[c] - point[0]) + normal[1] * (q[c + 1] - point[1]) + normal[2] * (q[c + 2] - point[2])
        _write(0, contacts[m], basis, False, starts, s - radii[m], gap, bases, data)


@nb.njit(cache=True)
def gather_nodes(q, v, v_free, h, columns, radii, X, cutoff) -> None:
    """The nodes' positions (first ``columns`` (k,)) into X (k, 3) [m] and their cutoffs r + 2 h max(‖v‖, ‖v_free‖)
    [m] into ``cutoff`` (k,) (module docstring)."""
    for m in range(columns.shape[0]):
        c = columns[m]
        squared, free = 0.0, 0.0
        for a in range(3):
            X[m, a] = q[c + a]
            squared += v[c + a] * v[c + a]
            free += v_free[c + a] * v_free[c + a]
        cutoff[m] = radii[m] + 2.0 * h * math.sqrt(max(squared, free))


@nb.njit(cache=True)
def mesh_node_rows(q, v, v_free, h, columns, radii, contacts, mesh, starts, gap, bases, data):
    """Nodes as in :func:`plane_node_rows` against a triangle mesh (``mesh`` = its corners, triangles, normals, grid
    and round-off), each exact within its cutoff (module docstring); returns (s (k,), feature (k,)): −1 where s is a
    bound, whose rows are zero."""
    corners, triangles, normals, grid, round_off = mesh
    k = columns.shape[0]
    X, cutoff = np.empty((k, 3)), np.empty(k)
    gather_nodes(q, v, v_free, h, columns, radii, X, cutoff)
    s, gradient, nearest, feature = np.empty(k), np.empty((k, 3)), np.empty((k, 3)), np.empty(k, dtype=np.int64)
    signed_distances(X, cutoff, corners, triangles, normals, grid, round_off, s, gradient, nearest, feature)
    for m in range(k):
        if feature[m] < 0:
            gradient[m, 0], gradient[m, 1], gradient[m, 2] = 1.0, 0.0, 0.0
    basis = np.empty((k, 3, 3))
    tangent_bases(gradient, basis)
    for m in range(k):
        _write(m, contacts[m], basis, feature[m] < 0, starts, s[m] - radii[m], gap, bases, data)
    return s, feature
