"""The frames of all unilateral contacts of a system at one state, in arrays: gaps (c,), frames (c, 3, 3) and the
local-velocity rows G (3c, n) in a sparse pattern fixed once, whose values are refreshed in place.

The rows of each contact are those of :meth:`~flexbody.constraints.unilateral_contact.Contact.frame` (one
declaration, :func:`~flexbody.constraints.unilateral_contact.plane_rows`): contacts of points or balls on the trees'
links with planes are evaluated together in one compiled call on the trees' forest (kinematics, point Jacobians,
rows);
contacts of flexible nodes with one plane or one triangle mesh together, a node's Jacobian being the identity on
its three columns (so G = Bᵀ there); the others one by one.

A mesh's distance is exact within a cutoff (:meth:`~flexbody.constraints.mesh_surface.TriangleMesh.signed_distances`):
each node's cutoff is its ball's radius plus twice the distance it covers in a step at its speed before or without
the contacts (the contacts the step considers are those whose gap may close within the step at these speeds,
:func:`~flexbody.solvers.contact_set.closing_contacts`). Beyond it the recorded gap is a lower bound and the
contact's rows are zero; a node deeper inside the mesh than its cutoff is an error that names it.
"""

from __future__ import annotations

from typing import NamedTuple

import numba as nb
import numpy as np
import scipy.sparse as sp

from ..constraints.contact_points import add_rolling
from ..constraints.mesh_surface import TriangleMesh
from ..constraints.nodes import Node
from ..constraints.surfaces import Plane
from ..constraints.unilateral_contact import plane_rows
from ..errors import StateError
from ..rigid.algorithms import kinematics, point_terms
from ..rigid.anchors import LinkFrame, LinkPoint
from ..system.joint_program import forest_model
from .node_contact_rows import mesh_node_rows, plane_node_rows

__all__ = ["ContactFrames", "Frames"]


class Frames(NamedTuple):
    """All contacts at one state: ``gap`` (c,) [m], ``basis`` (c, 3, 3) with columns n, t₁, t₂ [world], ``G``
    (3c, n) CSR, the rows of contact i being 3i … 3i + 2 (u = G v: (u_n, u_t₁, u_t₂) per contact)."""

    gap: np.ndarray
    basis: np.ndarray
    G: sp.csr_matrix


class _Forest(NamedTuple):
    """Contacts of points (or balls) on the trees' links with planes, evaluated together on the trees' forest: their
    indices, forest link indices, offsets, planes and frames, their columns (a tree's are contiguous: start, count)
    and whether each is a ball on a link frame, which rolls (1.0) or not (0.0)."""

    contacts: np.ndarray
    links: np.ndarray
    offsets: np.ndarray
    normals: np.ndarray
    origins: np.ndarray
    radii: np.ndarray
    bases: np.ndarray
    col_start: np.ndarray
    col_count: np.ndarray
    rolls: np.ndarray


class _NodeGroup(NamedTuple):
    """Contacts of flexible nodes with one ``surface`` (a Plane or a TriangleMesh): their indices, the nodes' first
    global columns and the balls' radii."""

    contacts: np.ndarray
    columns: np.ndarray
    radii: np.ndarray
    surface: Plane | TriangleMesh


@nb.njit(cache=True)
def forest_plane_rows(forest_ints, axis, R_placement, p_placement, support, q, v, c, starts, gap, data):
    """The gaps and G rows of the forest's plane contacts ``c`` (a :class:`_Forest`'s arrays) at (q, v) of the
    rigid coordinates, in one pass: the forest's kinematics, the points' Jacobians (:func:`point_terms`), their
    rows (:func:`~flexbody.constraints.unilateral_contact.plane_rows`; a rolling ball's Jacobian by
    :func:`~flexbody.constraints.contact_points.add_rolling`), each contact's three rows on its tree's
    columns written into ``data`` from ``starts[i]``, its gap into ``gap[i]``."""
    contacts, links, offsets, normals, origins, radii, bases, col_start, col_count, rolls = c
    parent, joint_type, dof = forest_ints
    n_links = support.shape[0]
    R, p = np.empty((n_links, 3, 3)), np.empty((n_links, 3))
    S, vel, acc = np.empty((n_links, 6)), np.empty((n_links, 6)), np.empty((n_links, 6))
    kinematics(parent, joint_type, axis, R_placement, p_placement, dof, q, v, R, p, S, vel, acc)
    k, width = contacts.shape[0], col_count.max()
    X, Xd, B = np.empty((1, 3)), np.empty((1, 3)), np.empty((1, 3))
    J, G, gaps = np.empty((1, 3, width)), np.empty((1, 3, width)), np.empty(1)
    J_w = np.empty((3, width))
    for m in range(k):  # each contact on its tree's columns alone (the others' are zero)
        i, first, count = contacts[m], col_start[m], col_count[m]
        J_m, G_m = J[:, :, :count], G[:, :, :count]
        columns = support[:, first : first + count]
        point_terms(R, p, S, vel, acc, columns, links[m : m + 1], offsets[m : m + 1], X, Xd, J_m, B)
        if rolls[m] > 0.0:  # a ball on a link frame: its contact point's Jacobian J + r [n]× J_ω
            for j in range(count):
                l = columns[links[m], j]
                for a in range(3):
                    J_w[a, j] = S[l, 3 + a] if l >= 0 else 0.0
            add_rolling(J_m[0], J_w[:, :count], normals[m], radii[m])
        plane_rows(normals[m : m + 1], origins[m : m + 1], radii[m : m + 1], bases[m : m + 1], X, J_m, gaps, G_m)
        gap[i] = gaps[0]
        at = starts[i]
        for a in range(3):
            for j in range(count):
                data[at + a * count + j] = G_m[0, a, j]


class ContactFrames:
    """Evaluates :class:`Frames` of the ``contacts`` of an assembled system ``asm`` at workspaces."""

    def __init__(self, asm, contacts):
        self.asm, self.contacts = asm, list(contacts)
        c = len(self.contacts)
        on_planes = [
            i
            for i, k in enumerate(self.contacts)
            if type(k.anchor) in (LinkPoint, LinkFrame) and type(k.surface) is Plane
        ]
        self.groups = self._node_groups()
        grouped = set(on_planes).union(*(g.contacts.tolist() for g in self.groups))
        self.single = [i for i in range(c) if i not in grouped]
        self.forest = self._forest(np.array(on_planes, dtype=np.int64)) if on_planes else None
        self._pattern: tuple | None = None  # (indptr, indices) of G, made at the first state
        self._columns: dict = {}
        self.gap, self.basis = np.zeros(c), np.zeros((c, 3, 3))

    def _forest(self, ids: np.ndarray):
        """The forest model of the trees and the arrays of the plane contacts ``ids`` on it."""
        asm = self.asm
        forest, link_offsets = forest_model(asm.trees, asm.offsets, asm.n_rigid)
        self._model = ((forest[0], forest[1], forest[5]), forest[2], forest[3], forest[4], forest[-1])
        contacts = [self.contacts[i] for i in ids]
        trees = [k.anchor.link.tree for k in contacts]
        return _Forest(
            ids,
            np.array([link_offsets[t] + k.anchor.link.index for t, k in zip(trees, contacts)], dtype=np.int64),
            np.array([k.anchor.offset for k in contacts], dtype=float).reshape(-1, 3),
            np.array([k.surface.normal for k in contacts]),
            np.array([k.surface.point for k in contacts]),
            np.array([k.r for k in contacts]),
            np.array([k.plane_basis for k in contacts]),
            np.array([asm.offsets[t] for t in trees], dtype=np.int64),
            np.array([t.n_dofs for t in trees], dtype=np.int64),
            np.array([1.0 if k.point.rolls else 0.0 for k in contacts]),
        )

    def _node_groups(self) -> list[_NodeGroup]:
        """The contacts of flexible nodes with planes and triangle meshes, one group per surface."""
        by_surface: dict[int, list[int]] = {}
        for i, k in enumerate(self.contacts):
            if type(k.anchor) is Node and type(k.surface) in (Plane, TriangleMesh):
                by_surface.setdefault(id(k.surface), []).append(i)
        groups = []
        for ids in by_surface.values():
            nodes = [self.contacts[i].anchor for i in ids]
            columns = np.array([self.asm.offsets[a.body] + 3 * a.index for a in nodes], dtype=np.int64)
            radii = np.array([self.contacts[i].r for i in ids], dtype=float)
            groups.append(_NodeGroup(np.array(ids, dtype=np.int64), columns, radii, self.contacts[ids[0]].surface))
        return groups

    @property
    def all_on_forest(self) -> bool:
        """Whether every contact is a point or ball on a link against a plane (evaluated on the trees' forest)."""
        return bool(self.contacts) and not self.single and not self.groups

    def forest_arrays(self) -> tuple:
        """(model, forest, starts, first, count) of :func:`forest_plane_rows` for a system whose contacts are
        :attr:`all_on_forest`: its forest model and contact arrays, where each contact's rows start in the values of G
        (c + 1,), and its tree's first column and column count (c,) each."""
        if self.forest is None or not self.all_on_forest:
            raise ValueError("forest_arrays: not every contact is a point on a link against a plane")
        if self._pattern is None:
            self._layout(None, {})
        first, count = np.empty(len(self.contacts), np.int64), np.empty(len(self.contacts), np.int64)
        first[self.forest.contacts], count[self.forest.contacts] = self.forest.col_start, self.forest.col_count
        return self._model, self.forest, self._starts, first, count

    def at(self, ws, h: float = 0.0, v_free: np.ndarray | None = None) -> Frames:
        """The frames at the state of the workspace ``ws``; a mesh's gaps exact within the distance a node covers in
        two steps of size h [s] at its speed under ws.v or ``v_free`` (module docstring)."""
        single = {}
        for i in self.single:
            frame = self.contacts[i].frame(ws)
            self.gap[i], self.basis[i] = frame.gap, frame.basis
            single[i] = (np.asarray(frame.cols), frame.G)
        if self._pattern is None or any(not np.array_equal(single[i][0], self._columns[i]) for i in self.single):
            self._layout(ws, single)
        data = self._data
        if self.forest is not None:
            n_r = self.asm.n_rigid
            forest_plane_rows(*self._model, ws.q[:n_r], ws.v[:n_r], self.forest, self._starts, self.gap, data)
        for group in self.groups:
            self._node_rows(group, ws, h, v_free, data)
        for i, (_, G) in single.items():
            data[self._starts[i] : self._starts[i] + G.size] = np.asarray(G, dtype=float).ravel()
        indptr, indices = self._pattern  # type: ignore[misc]  # made by _layout just above when missing
        G = sp.csr_matrix((data.copy(), indices, indptr), shape=self._shape)
        return Frames(self.gap.copy(), self.basis.copy(), G)

    def _node_rows(self, group: _NodeGroup, ws, h: float, v_free: np.ndarray | None, data: np.ndarray) -> None:
        """Gaps, frames and rows of a node group into ``gap``, ``basis`` and ``data``
        (:mod:`flexbody.solvers.node_contact_rows`); StateError for nodes deeper inside a mesh than their cutoff."""
        surface, args = group.surface, (group.columns, group.radii, group.contacts)
        if isinstance(surface, Plane):
            plane = (surface.normal, surface.point, self.contacts[group.contacts[0]].plane_basis)
            plane_node_rows(ws.q, *args, *plane, self._starts, self.gap, self.basis, data)
            return
        mesh = surface.kernel_arrays
        free = ws.v if v_free is None else v_free
        s, feature = mesh_node_rows(ws.q, ws.v, free, h, *args, mesh, self._starts, self.gap, self.basis, data)
        deep = np.flatnonzero((feature < 0) & (s < 0.0))
        if deep.size:
            self._too_deep(group, deep, s, ws.t)

    def _too_deep(self, group: _NodeGroup, which: np.ndarray, s: np.ndarray, t: float) -> None:
        names = [self.contacts[group.contacts[k]].name for k in which]
        raise StateError(
            f"contact at t = {t:.9g} s: {len(names)} node(s) are inside the triangle mesh deeper than their cutoff "
            f"(at least {float(-s[which].max()):.3g} m): {names[:5] + (['…'] if len(names) > 5 else [])}; a smaller "
            f"step keeps them out, a larger TriangleMesh(reach=...) finds how deep"
        )

    def _layout(self, ws, single) -> None:
        """The CSR pattern of G (rows 3i … 3i + 2 of contact i on its columns) and where each group's values go."""
        self._columns = {i: cols for i, (cols, _) in single.items()}
        columns: list = [None] * len(self.contacts)
        if self.forest is not None:
            for i, first, count in zip(self.forest.contacts, self.forest.col_start, self.forest.col_count):
                columns[i] = np.arange(first, first + count, dtype=np.int64)
                self.basis[i] = self.contacts[i].plane_basis
        for group in self.groups:
            for i, first in zip(group.contacts, group.columns):
                columns[i] = np.arange(first, first + 3, dtype=np.int64)
        for i, cols in self._columns.items():
            columns[i] = cols
        sizes = np.array([c.size for c in columns], dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(3 * sizes)]).astype(np.int64)
        indptr = np.concatenate([[0], np.cumsum(np.repeat(sizes, 3))]).astype(np.int64)
        indices = np.concatenate([np.zeros(0, np.int64)] + [np.tile(c, 3) for c in columns]).astype(np.int64)
        self._pattern, self._starts = (indptr, indices), starts
        self._data = np.zeros(int(starts[-1]))
        self._shape = (3 * len(self.contacts), int(self.asm.n_dofs))
