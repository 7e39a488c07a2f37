"""What a controller keeps between calls: the parts of its constrained terms that depend only on the
sparsity pattern of Φ and on the constant flexible mass block, worked out once and reused while they stay
the same (a model + data split, as Pinocchio's ``Data``).

For a rigid–flexible model [DE-107..113] the constraint rows touch c columns (the joints and the
constrained nodal coordinates), and every projected term lives on them: Φ̂M⁻¹Φ̂ᵀ = Φ̂_c (M⁻¹)_cc Φ̂_cᵀ
[DE-34], with M block diagonal [DE-110]. A :class:`ControlWorkspace` keeps

- the stored columns of Φ and where its entries land in the dense block Φ[:, c]
  (:class:`~flexbody.linalg.rank.StoredColumns`), while the CSR pattern of Φ is unchanged;
- the layout of (M⁻¹)_cc: its flexible entries (constant, from
  :meth:`~flexbody.linalg.block_mass.FlexibleMassFactor.inverse_submatrix`) and the slots of each rigid
  tree's entries, which are filled from that tree's dense block at every state;
- with ``mass_columns=True`` (a controller's workspace, models of moderate size), the columns of M⁻¹ at
  K = c ∪ the actuated coordinates, C = M⁻¹[:, K] (n, |K|) (:class:`MassColumns`): the flexible columns
  M_f⁻¹[:, K_f] solved once per run, the rigid ones from each tree's Cholesky factor at the state. Then
  M⁻¹x for x that vanishes outside K is C x_K, Φ̂M⁻¹y = Φ̂_c (M⁻¹[:, c])ᵀy for any y (M symmetric) and
  M⁻¹Φ̂ᵀz = M⁻¹[:, c] Φ̂_cᵀz: small dense products in place of sparse solves.

Only the rigid entries of M⁻¹[:, K] depend on the state; they are rewritten in place for whichever state
uses them (:meth:`_ColumnLayout.current`), so every result is that of a fresh computation up to round-off.
"""

from __future__ import annotations

import numpy as np

from ..errors import StateError
from ..linalg.block_mass import INVERSE_CHUNK
from ..linalg.rank import StoredColumns
from ..linalg.validation import potrf, potrs

MASS_COLUMNS_LIMIT = 1 << 20
"""Largest n·|K| for which the columns M⁻¹[:, K] are kept as one dense array (8 MB)."""


class ControlWorkspace:
    """Pattern-dependent structures of one controller's model, rebuilt only when the pattern changes;
    ``mass_columns``: also keep the columns of M⁻¹ at the constrained and actuated coordinates."""

    def __init__(self, mass_columns: bool = False):
        self.keeps_mass_columns = bool(mass_columns)
        self._stored: StoredColumns | None = None
        self._layout: _InverseLayout | None = None
        self._columns: _ColumnLayout | None = None
        self._passive: tuple | None = None

    def passive(self, S: np.ndarray) -> np.ndarray:
        """Indices of the coordinates no actuator moves (the zero columns of S (k, n)), kept for this S."""
        return self._actuation(S)[1]

    def actuated(self, S: np.ndarray) -> np.ndarray:
        """Indices of the coordinates some actuator moves (the non-zero columns of S), kept for this S."""
        return self._actuation(S)[2]

    def _actuation(self, S: np.ndarray) -> tuple:
        if self._passive is None or self._passive[0] is not S:
            moved = np.any(S, axis=0)
            self._passive = (S, np.flatnonzero(~moved), np.flatnonzero(moved))
        return self._passive

    def mass_columns(self, M, constrained: np.ndarray, S: np.ndarray, rigid_factors: list) -> MassColumns | None:
        """:class:`MassColumns` of a :class:`~flexbody.linalg.block_mass.BlockMass` M at this state (rigid
        blocks' Cholesky factors ``rigid_factors``) on K = ``constrained`` ∪ the actuated coordinates of S;
        None if n·|K| > MASS_COLUMNS_LIMIT."""
        layout = self._columns
        if layout is None or not layout.fits(M, constrained, S):
            layout = _ColumnLayout(M, constrained, S, self.actuated(S))
            self._columns = layout
        return MassColumns(layout, rigid_factors) if layout.C is not None else None

    def stored_columns(self, Phi_csr) -> StoredColumns:
        """The :class:`StoredColumns` of the CSR ``Phi_csr``, kept while its pattern stays the same."""
        if self._stored is None or not self._stored.fits(Phi_csr):
            self._stored = StoredColumns(Phi_csr)
        return self._stored

    def inverse_on_columns(self, M, columns: np.ndarray, rigid_factors: list) -> np.ndarray:
        """(M⁻¹)[c, c] (n_c, n_c) [1/kg] of a :class:`~flexbody.linalg.block_mass.BlockMass` M on the sorted
        global columns c: the constant flexible part laid out once, the rigid blocks' parts at this state
        from their Cholesky factors ``rigid_factors`` [(slice, factor)] (:func:`rigid_factor`)."""
        layout = self._layout
        if layout is None or not layout.fits(M, columns):
            layout = self._layout = _InverseLayout(M, columns)
        return layout.fill(rigid_factors)


class _InverseLayout:
    """Where the entries of (M⁻¹)_cc come from: ``base`` holds the flexible block's (constant) entries;
    for each rigid block k with columns in c, ``rigid[k]`` = (slots in the flat (n_c, n_c) array, local
    flat indices in the block's inverse)."""

    def __init__(self, M, columns: np.ndarray):
        self.columns, self.flexible = columns, M.flexible
        self.slices = [s for s, _ in M.rigid]
        n_c = len(columns)
        self.base = np.zeros((n_c, n_c))
        self.rigid = []
        for s in self.slices:
            sel = np.flatnonzero((columns >= s.start) & (columns < s.stop))
            local = columns[sel] - s.start
            size = s.stop - s.start
            self.rigid.append(
                ((sel[:, None] * n_c + sel[None, :]).ravel(), (local[:, None] * size + local[None, :]).ravel())
            )
        fs = M.flexible_slice
        sel = np.flatnonzero((columns >= fs.start) & (columns < fs.stop))
        if sel.size:
            self.base[np.ix_(sel, sel)] = M.flexible.inverse_submatrix(columns[sel] - fs.start)

    def fits(self, M, columns: np.ndarray) -> bool:
        """Same columns (the kept array) and the same blocks of M."""
        return (
            columns is self.columns
            and M.flexible is self.flexible
            and len(M.rigid) == len(self.slices)
            and all(s == kept for (s, _), kept in zip(M.rigid, self.slices))
        )

    def fill(self, rigid_factors: list) -> np.ndarray:
        out = self.base.copy()
        flat = out.reshape(-1)
        for (_, c), (slots, local) in zip(rigid_factors, self.rigid):
            if slots.size:
                flat[slots] = potrs(c, np.eye(c.shape[0]), lower=1)[0].reshape(-1)[local]
        return out


def rigid_factor(block: np.ndarray, s: slice) -> np.ndarray:
    """Lower Cholesky factor of a small dense SPD rigid mass block (a tree's joints at ``s``)."""
    c, info = potrf(block, lower=1, clean=0)
    if info != 0:
        raise StateError(
            f"rigid mass block at coordinates {s.start}..{s.stop - 1} is not positive definite (Cholesky pivot {info})"
        )
    return c


class MassColumns:
    """The columns of M⁻¹ at K at one state [1/kg]: ``C`` (n, |K|) = M⁻¹[:, K] and ``C_c`` (n, n_c) = M⁻¹[:, c]
    at the stored columns c of Φ. Their arrays are the layout's, shared by the states of one workspace: only
    the rigid entries depend on the state, and they are written in place (no copy) whenever a state other
    than the last one filled is used."""

    def __init__(self, layout: _ColumnLayout, rigid_factors: list):
        self.layout, self.rigid_factors = layout, rigid_factors
        layout.fill(self)

    @property
    def C(self) -> np.ndarray:
        C = self.layout.current(self).C
        assert C is not None  # only a layout with C makes MassColumns
        return C

    @property
    def C_c(self) -> np.ndarray:
        C_c = self.layout.current(self).C_c
        assert C_c is not None  # only a layout with C makes MassColumns
        return C_c

    def solve(self, x: np.ndarray) -> np.ndarray | None:
        """M⁻¹x (n,) or (n, k) = C x_K if x vanishes outside K, else None."""
        lay = self.layout.current(self)
        if x[lay.outside].any():
            return None
        return self.C @ x[lay.columns]

    def inverse_cc(self) -> np.ndarray:
        """(M⁻¹)[c, c] (n_c, n_c)."""
        return self.C_c[self.layout.constrained_columns]


class _ColumnLayout:
    """M⁻¹[:, K] laid out as (n, |K|), K = the stored columns c of Φ ∪ the actuated coordinates: ``C`` holds the
    flexible columns M_f⁻¹[:, K_f] (constant; zero in the rigid rows and columns) and the rigid entries of the
    state filled last (``owner``); ``rigid`` gives for each rigid block (slice, positions in K of its columns, a
    unit block selecting them); ``on_c`` the positions of c in K (None if K = c). ``C`` is None above
    MASS_COLUMNS_LIMIT."""

    def __init__(self, M, constrained: np.ndarray, S: np.ndarray, actuated: np.ndarray):
        self.constrained_columns, self.S, self.flexible = constrained, S, M.flexible
        self.slices = [s for s, _ in M.rigid]
        n = M.shape[0]
        self.columns = np.union1d(constrained, actuated)
        self.outside = np.setdiff1d(np.arange(n), self.columns)
        self.on_c = None if len(constrained) == len(self.columns) else np.searchsorted(self.columns, constrained)
        self.C: np.ndarray | None = None
        self.C_c: np.ndarray | None = None
        self.owner: MassColumns | None = None
        if n * len(self.columns) > MASS_COLUMNS_LIMIT:
            return
        self.C = np.zeros((n, len(self.columns)))
        fs = M.flexible_slice
        sel = np.flatnonzero((self.columns >= fs.start) & (self.columns < fs.stop))
        if sel.size:
            self.C[fs, sel] = _flexible_columns(M.flexible, self.columns[sel] - fs.start)
        self.rigid = []
        for s in self.slices:
            sel = np.flatnonzero((self.columns >= s.start) & (self.columns < s.stop))
            unit = np.zeros((s.stop - s.start, sel.size))
            unit[self.columns[sel] - s.start, np.arange(sel.size)] = 1.0
            self.rigid.append((s, sel, unit))

    def fits(self, M, constrained: np.ndarray, S: np.ndarray) -> bool:
        """Same stored columns (the kept array), the same S and the same blocks of M."""
        return (
            constrained is self.constrained_columns
            and S is self.S
            and M.flexible is self.flexible
            and len(M.rigid) == len(self.slices)
            and all(s == kept for (s, _), kept in zip(M.rigid, self.slices))
        )

    def fill(self, owner: MassColumns) -> None:
        """Write the rigid entries of ``owner``'s state (its blocks' Cholesky factors) into ``C``."""
        C = self.C
        assert C is not None  # only a layout with C makes MassColumns
        for (s, sel, unit), (_, c) in zip(self.rigid, owner.rigid_factors):
            if sel.size:
                C[s, sel] = potrs(c, unit, lower=1)[0]
        self.C_c = C if self.on_c is None else C[:, self.on_c]
        self.owner = owner

    def current(self, owner: MassColumns) -> _ColumnLayout:
        """This layout holding ``owner``'s state."""
        if self.owner is not owner:
            self.fill(owner)
        return self


def _flexible_columns(flexible, local: np.ndarray) -> np.ndarray:
    """M_f⁻¹[:, local] (n_f, len(local)) by solves with unit vectors, INVERSE_CHUNK at a time."""
    n_f = flexible.matrix.shape[0]
    out = np.empty((n_f, len(local)))
    for start in range(0, len(local), INVERSE_CHUNK):
        chunk = local[start : start + INVERSE_CHUNK]
        unit = np.zeros((n_f, len(chunk)))
        unit[chunk, np.arange(len(chunk))] = 1.0
        out[:, start : start + len(chunk)] = flexible.solve(unit)
    return out
