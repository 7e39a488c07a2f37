"""The frames of all unilateral contacts of a system at one state, in arrays: gaps (c,), frames (c, 3, 3) and the
local-velocity rows G (3c, n) in a sparse pattern fixed once, whose values are refreshed in place.

The rows of each contact are those of :meth:`~flexbody.constraints.unilateral_contact.Contact.frame` (one
declaration, :func:`~flexbody.constraints.unilateral_contact.plane_rows`): contacts of points on a tree's links with
a plane are evaluated together, one compiled kinematics pass per tree for all its points; the others one by one.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from ..constraints.surfaces import Plane
from ..constraints.unilateral_contact import plane_rows
from ..rigid.anchors import LinkPoint

__all__ = ["ContactFrames", "Frames"]


class Frames(NamedTuple):
    """All contacts at one state: ``gap`` (c,) [m], ``basis`` (c, 3, 3) with columns n, t₁, t₂ [world], ``G``
    (3c, n) CSR, the rows of contact i being 3i … 3i + 2 (u = G v: (u_n, u_t₁, u_t₂) per contact)."""

    gap: np.ndarray
    basis: np.ndarray
    G: sp.csr_matrix


class _TreeGroup(NamedTuple):
    """Contacts of points on one tree's links with planes: their indices, links, offsets and planes."""

    tree: object
    contacts: np.ndarray
    links: np.ndarray
    offsets: np.ndarray
    normals: np.ndarray
    origins: np.ndarray
    radii: np.ndarray
    bases: np.ndarray


class ContactFrames:
    """Evaluates :class:`Frames` of the ``contacts`` of an assembled system ``asm`` at workspaces."""

    def __init__(self, asm, contacts):
        self.asm, self.contacts = asm, list(contacts)
        c = len(self.contacts)
        grouped: dict = {}
        self.single = []
        for i, contact in enumerate(self.contacts):
            if type(contact.anchor) is LinkPoint and type(contact.surface) is Plane:
                grouped.setdefault(contact.anchor.link.tree, []).append(i)
            else:
                self.single.append(i)
        self.groups = [self._group(tree, np.array(ids, dtype=np.int64)) for tree, ids in grouped.items()]
        self._pattern: tuple | None = None  # (indptr, indices) of G, made at the first state
        self._columns: dict = {}
        self.gap, self.basis = np.zeros(c), np.zeros((c, 3, 3))

    def _group(self, tree, ids: np.ndarray) -> _TreeGroup:
        contacts = [self.contacts[i] for i in ids]
        return _TreeGroup(
            tree,
            ids,
            np.array([k.anchor.link.index for k in contacts], dtype=np.int64),
            np.array([k.anchor.offset for k in contacts], dtype=float).reshape(-1, 3),
            np.array([k.surface.normal for k in contacts]),
            np.array([k.surface.point for k in contacts]),
            np.array([k.r for k in contacts]),
            np.array([k.plane_basis for k in contacts]),
        )

    def at(self, ws) -> Frames:
        """The frames at the state of the workspace ``ws``."""
        single = {}
        for i in self.single:
            frame = self.contacts[i].frame(ws)
            self.gap[i], self.basis[i] = frame.gap, frame.basis
            single[i] = (np.asarray(frame.cols), frame.G)
        if self._pattern is None or any(not np.array_equal(single[i][0], self._columns[i]) for i in self.single):
            self._layout(ws, single)
        data, positions = self._data, self._positions
        for group, where in zip(self.groups, positions):
            X, _, J, _ = ws.kinematics(group.tree).points(group.links, group.offsets)
            gap, G = plane_rows(group.normals, group.origins, group.radii, group.bases, X, J)
            self.gap[group.contacts] = gap
            data[where] = G.ravel()
        for i, (_, G) in single.items():
            data[self._starts[i] : self._starts[i] + G.size] = np.asarray(G, dtype=float).ravel()
        indptr, indices = self._pattern  # type: ignore[misc]  # made by _layout just above when missing
        G = sp.csr_matrix((data.copy(), indices, indptr), shape=self._shape)
        return Frames(self.gap.copy(), self.basis.copy(), G)

    def _layout(self, ws, single) -> None:
        """The CSR pattern of G (rows 3i … 3i + 2 of contact i on its columns) and where each group's values go."""
        self._columns = {i: cols for i, (cols, _) in single.items()}
        columns: list = [None] * len(self.contacts)
        for group in self.groups:
            for i in group.contacts:
                columns[i] = np.asarray(ws.columns(group.tree))
        for i, cols in self._columns.items():
            columns[i] = cols
        sizes = np.array([c.size for c in columns], dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(3 * sizes)]).astype(np.int64)
        indptr = np.concatenate([[0], np.cumsum(np.repeat(sizes, 3))]).astype(np.int64)
        indices = np.concatenate([np.tile(c, 3) for c in columns]).astype(np.int64)
        self._pattern, self._starts = (indptr, indices), starts
        self._positions = [
            np.concatenate([np.arange(starts[i], starts[i + 1]) for i in group.contacts]) for group in self.groups
        ]
        for group in self.groups:
            self.basis[group.contacts] = group.bases
        self._data = np.zeros(int(starts[-1]))
        self._shape = (3 * len(self.contacts), int(self.asm.n_dofs))
