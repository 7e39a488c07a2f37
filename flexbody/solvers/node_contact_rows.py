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
from ..constraints.unilateral_contact import plane_rows, tangent_bases

__all__ = ["plane_node_rows", "mesh_node_rows", "gather_nodes", "node_positions"]


@nb.njit(cache=True)
def _write(m, i, basis, rows, starts, gap_value, gap, bases, data):
    """Contact i (the m-th of its group): its gap, frame ``basis[m]`` and rows ``rows[m]`` (3, 3) on its node's
    columns, the rows from ``starts[i]`` in ``data``."""
    gap[i] = gap_value
    for a in range(3):
        for j in range(3):
            bases[i, j, a] = basis[m, j, a]
            data[starts[i] + 3 * a + j] = rows[m, a, j]


@nb.njit(cache=True)
def node_positions(q, columns, X) -> None:
    """The nodes' positions (first ``columns`` (k,)) into X (k, 3) [m]."""
    for m in range(columns.shape[0]):
        for a in range(3):
            X[m, a] = q[columns[m] + a]


@nb.njit(cache=True)
def plane_node_rows(q, columns, radii, contacts, normal, point, plane_basis, starts, gap, bases, data) -> None:
    """Nodes (first ``columns`` (k,), ball ``radii`` (k,)) of the ``contacts`` (k,) on a plane (unit ``normal``,
    ``point``, frame ``plane_basis`` (3, 3)): the gaps and rows of
    :func:`~flexbody.constraints.unilateral_contact.plane_rows` with the nodes' identity Jacobians, into ``gap``
    (c,), B into ``bases`` (c, 3, 3), the rows into ``data`` from ``starts`` (c,)."""
    k = columns.shape[0]
    X = np.empty((k, 3))
    node_positions(q, columns, X)
    normals, origins = np.empty((k, 3)), np.empty((k, 3))
    basis, identity = np.empty((k, 3, 3)), np.zeros((k, 3, 3))
    for m in range(k):
        normals[m], origins[m], basis[m] = normal, point, plane_basis
        identity[m, 0, 0] = identity[m, 1, 1] = identity[m, 2, 2] = 1.0
    g, rows = np.empty(k), np.empty((k, 3, 3))
    plane_rows(normals, origins, radii, basis, X, identity, g, rows)
    for m in range(k):
        _write(m, contacts[m], basis, rows, starts, g[m], gap, bases, data)


@nb.njit(cache=True)
def gather_nodes(q, v, v_free, h, columns, radii, X, cutoff) -> None:
    """The nodes' positions (first ``columns`` (k,)) into X (k, 3) [m] and their cutoffs r + 2 h max(‖v‖, ‖v_free‖)
    [m] into ``cutoff`` (k,) (module docstring)."""
    node_positions(q, columns, X)
    for m in range(columns.shape[0]):
        c = columns[m]
        squared, free = 0.0, 0.0
        for a in range(3):
            squared += v[c + a] * v[c + a]
            free += v_free[c + a] * v_free[c + a]
        cutoff[m] = radii[m] + 2.0 * h * math.sqrt(max(squared, free))


@nb.njit(cache=True)
def mesh_node_rows(q, v, v_free, h, columns, radii, contacts, mesh, starts, gap, bases, data):
    """Nodes as in :func:`plane_node_rows` against a triangle mesh (``mesh`` = its corners, triangles, normals, grid
    and round-off), each exact within its cutoff (module docstring): G = Bᵀ on the node's columns; returns (s (k,),
    feature (k,)): −1 where s is a bound, whose rows are zero."""
    corners, triangles, normals, grid, round_off = mesh
    k = columns.shape[0]
    X, cutoff = np.empty((k, 3)), np.empty(k)
    gather_nodes(q, v, v_free, h, columns, radii, X, cutoff)
    s, gradient, nearest, feature = np.empty(k), np.empty((k, 3)), np.empty((k, 3)), np.empty(k, dtype=np.int64)
    signed_distances(X, cutoff, corners, triangles, normals, grid, round_off, s, gradient, nearest, feature)
    for m in range(k):
        if feature[m] < 0:
            gradient[m, 0], gradient[m, 1], gradient[m, 2] = 1.0, 0.0, 0.0
    basis, rows = np.empty((k, 3, 3)), np.zeros((k, 3, 3))
    tangent_bases(gradient, basis)
    for m in range(k):
        if feature[m] >= 0:
            rows[m] = basis[m].T
        _write(m, contacts[m], basis, rows, starts, s[m] - radii[m], gap, bases, data)
    return s, feature
