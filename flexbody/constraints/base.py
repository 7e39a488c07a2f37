"""Constraints: the base class of holonomic constraints φ(q, t) = 0, and prescribed nodal positions.

Every holonomic constraint evaluates, at one state, its value φ (r,), its Jacobian Φ = ∂φ/∂q as blocks on
a few global columns (so Φ is sparse by construction), the acceleration bias Φ̇v (plus rheonomic terms)
such that the acceleration-level constraint reads Φ a + bias = 0 [DE-4], and the velocity-level rate
φ_t with Φ v + φ_t = 0. Concrete constraints live in :mod:`flexbody.constraints.couplings` (between joint
coordinates), :mod:`flexbody.constraints.closures` (between anchors: loop closures, welds, hinges, surfaces).

:class:`Fix` prescribes nodal positions of flexible bodies, x_a = X_a + u_a; the static solver eliminates it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ..errors import ConstraintError, FlexbodyError, MeshError
from ..fem.flexible_body import FlexibleBody

if TYPE_CHECKING:
    from ..rigid.state_view import StateView


@dataclass(frozen=True)
class ConstraintRows:
    """One constraint evaluated at a state.

    Attributes
    ----------
    phi : (r,) value φ.
    pieces : list of (cols (k,), block (r, k)) whose scattered sum is Φ (r, n_dofs).
    bias : (r,) Φ̇v + rheonomic terms, so that Φ a + bias = 0.
    phi_t : (r,) or None, ∂φ/∂t (None when scleronomic), so that Φ v + φ_t = 0.
    """

    phi: np.ndarray
    pieces: list
    bias: np.ndarray
    phi_t: np.ndarray | None = None


def global_columns(columns: ArrayLike, who: str) -> np.ndarray:
    """``columns`` as distinct non-negative int64 indices (k ≥ 1) of the global coordinates; ConstraintError
    naming ``who`` otherwise."""
    cols = np.asarray(columns)
    if (
        cols.ndim != 1
        or cols.size == 0
        or not np.issubdtype(cols.dtype, np.integer)
        or cols.min() < 0
        or len(np.unique(cols)) != cols.size
    ):
        raise ConstraintError(f"{who}: columns must be distinct non-negative integers, got {columns!r}")
    return cols.astype(np.int64)


def node_selection(body: FlexibleBody, nodes: str | ArrayLike, who: str) -> np.ndarray:
    """Sorted unique node indices of ``body`` from a node-set or face-set name or integer node indices
    (:meth:`FlexibleBody.nodes`); a ConstraintError naming ``who`` for an unknown set, an index out of range, or
    indices that are not integers."""
    try:
        return body.nodes(nodes)
    except MeshError as exc:
        raise ConstraintError(f"{who}: {exc}") from exc


def checked_components(components: ArrayLike, who: str, distinct: bool = True) -> np.ndarray:
    """World components (0 = x, 1 = y, 2 = z) as int64 in the order given; ConstraintError naming ``who`` when
    they are not integers 0, 1, 2 (none, a text, 0.5, True) or, with ``distinct``, repeat one."""
    try:
        comps = np.asarray(components)
    except ValueError:
        comps = np.asarray([None])
    if comps.dtype == bool or not np.issubdtype(comps.dtype, np.integer) or comps.ndim > 1:
        comps = np.asarray([-1])
    comps = comps.astype(np.int64).ravel()
    if comps.size == 0 or comps.min() < 0 or comps.max() > 2 or (distinct and len(np.unique(comps)) != comps.size):
        raise ConstraintError(f"{who}: components must be distinct values of 0, 1, 2 (x, y, z), got {components!r}")
    return comps


def finite_number(value, what: str, who: str, *, positive: bool = False) -> float:
    """``value`` as a float that is finite and ≥ 0 (> 0 with ``positive``), or a FlexbodyError naming ``what`` of
    ``who``."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise FlexbodyError(f"{who}: {what} must be a number, got {value!r}") from None
    if not math.isfinite(x) or x < 0.0 or (positive and x == 0.0):
        raise FlexbodyError(
            f"{who}: {what} must be {'positive' if positive else 'non-negative'} and finite, got {value!r}"
        )
    return x


def merge_pieces(pieces) -> tuple[np.ndarray, np.ndarray]:
    """(cols, block) of the sum of blocks (cols_i (k_i,), block_i (r, k_i)) on the union of their columns."""
    cols = np.unique(np.concatenate([c for c, _ in pieces])).astype(np.int64)
    block = np.zeros((pieces[0][1].shape[0], cols.size))
    for c, b in pieces:
        np.add.at(block.T, np.searchsorted(cols, c), np.asarray(b).T)  # columns of block (a view), repeats summed
    return cols, block


def widened(cols: np.ndarray, part) -> np.ndarray:
    """The block of ``part`` = (its columns (j,), block (r, j)) on the columns ``cols`` (k,) that hold them (r, k),
    zero elsewhere."""
    own, block = part
    out = np.zeros((np.shape(block)[0], cols.size))
    out[:, np.searchsorted(cols, own)] = block
    return out


def add_square(out: np.ndarray, cols: np.ndarray, part) -> None:
    """out (k, k) += the square block of ``part`` = (its columns (j,), block (j, j)) on the columns ``cols`` (k,) that
    hold them (a Hessian or Jacobian of one anchor added to an element's or row's)."""
    own, block = part
    where = np.searchsorted(cols, own)
    out[np.ix_(where, where)] += block


_FORCE_UNITS = {"m": "N", "rad": "N·m"}


def force_unit(unit: str) -> str:
    """Unit of the force conjugate to a quantity in ``unit``: "N" for "m", "N·m" for "rad", else "-".

    It is the unit of a generalized force on a coordinate in ``unit``, and of the multiplier λ of a
    constraint row whose value φ is in ``unit`` (Φᵀλ is a generalized force, so [λ] = [work] / [φ]).
    """
    return _FORCE_UNITS.get(unit, "-")


class Named:
    """A name given by the user, or a default that is the same in every run: ``kind[subjects]``, the kind and what
    the constraint or force element acts on — its anchors' labels, its links, its body and nodes, or its columns
    (:meth:`default_name`; before 0.3.0 an object identity made it, which changed from run to run)."""

    kind = "constraint"
    _name: str | None = None

    @property
    def name(self) -> str:
        """The name given, else :meth:`default_name`."""
        return self._name if self._name is not None else self.default_name()

    @name.setter
    def name(self, value: str | None) -> None:
        self._name = value

    def default_name(self) -> str:
        """``kind[subject / subject …]`` from the anchors' labels, the links (``tree.link``), the flexible body and
        its node count, or the columns — whichever the object has (its kind alone before they are set)."""
        subjects = [a.label for a in getattr(self, "anchors", ())]
        if not subjects:
            links = [getattr(self, key, None) for key in ("link", "dependent", "independent")]
            named = [*getattr(self, "links", ()), *(x for x in links if x is not None)]
            subjects = [f"{link.tree.name}.{link.name}" for link in named]
        body, nodes = getattr(self, "body", None), getattr(self, "nodes", None)
        if body is not None and nodes is not None:
            subjects.append(f"{body.name} {len(nodes)} nodes")
        columns = getattr(self, "cols", None)
        if not subjects and columns is not None:
            subjects = [f"columns {' '.join(str(int(c)) for c in columns)}"]
        return f"{self.kind}[{' / '.join(s.replace(', ', ' ') for s in subjects)}]" if subjects else self.kind


class Constraint(Named):
    """Base class of holonomic constraints (subclasses set ``n_rows``, ``row_names`` and ``trees``).

    ``units`` gives the unit of each row's value φ ("m" for positions, "rad" for angles and revolute
    joints, "-" when a row has no single unit); ``multiplier_units`` that of each row's multiplier λ.
    """

    n_rows: int = 0
    row_names: tuple = ()
    trees: tuple = ()
    anchors: tuple = ()
    kind = "constraint"

    def __init__(self, name: str | None):
        self.name = name

    @property
    def row_labels(self) -> list[str]:
        """(n_rows,) labels of the constraint rows, ``"name.row"``, e.g. ``'p.x'``."""
        return [f"{self.name}.{r}" for r in self.row_names]

    @property
    def units(self) -> tuple[str, ...]:
        """Unit of each row's value φ (r,); "-" (no single unit) unless the subclass says."""
        return ("-",) * self.n_rows

    @property
    def velocity_rows(self) -> tuple[bool, ...]:
        """Which rows are velocity-level (Pfaffian, :mod:`flexbody.constraints.pfaffian`): their φ is 0 and
        position corrections leave them out. None here: every row of a holonomic constraint is a position row."""
        return (False,) * self.n_rows

    @property
    def multiplier_units(self) -> tuple[str, ...]:
        """Unit of each row's multiplier λ (r,): [N] for a position row, [N·m] for an angle row."""
        return tuple(force_unit(u) for u in self.units)

    @property
    def bodies(self) -> tuple:
        """Flexible bodies whose nodes the rows involve (from the anchors)."""
        return tuple({b: None for a in self.anchors for b in getattr(a, "bodies", ())})

    def declare_rows(self) -> tuple | None:
        """The compile hook: the declarations (:class:`~flexbody.constraints.row_kinds.PointRow`,
        :class:`~flexbody.constraints.row_kinds.CouplingRow`) of this constraint's rows when they are all of a
        kind with a compiled form — from which a system's compiled program is generated, and whose formulas
        :meth:`evaluate` uses too — or None (the rows are evaluated by :meth:`evaluate` alone, on every route)."""
        return None

    def evaluate(self, ev: StateView) -> ConstraintRows:
        """Value, Jacobian pieces, bias and rate at the state ``ev``
        (a :class:`~flexbody.rigid.state_view.StateView`)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, {self.n_rows} rows)"


class Fix:
    """Prescribe the positions of nodes of a flexible body: x_a = X_a + u_a.

    Parameters
    ----------
    body : FlexibleBody
    nodes : str or array of int
        A node-set or face-set name of the body's mesh, or node indices.
    displacement : array_like, optional
        Prescribed displacement u [m]: (3,) for all nodes, (k, 3) per node, or a callable u(X) -> (k, 3) of
        reference positions X (k, 3). Default zero (clamped). Scaled by the load factor in load stepping.
    components : sequence of int, optional
        Which of x, y, z (0, 1, 2) are prescribed; default all three.
    name : str, optional
        Name of its constraint rows once the system is assembled (default ``fix_<body>_<nodes>``).

    This is the one way to hold nodes: the flexible-only static solver eliminates the prescribed
    coordinates, and an assembled system turns a Fix into the rows of a
    :class:`~flexbody.constraints.attachments.FixNodes` (x_a − X_a − u_a = 0 [DE-112]).
    """

    def __init__(
        self,
        body: FlexibleBody,
        nodes: str | ArrayLike,
        displacement: ArrayLike | Callable[[np.ndarray], ArrayLike] | None = None,
        *,
        components: Sequence[int] = (0, 1, 2),
        name: str | None = None,
    ):
        if not isinstance(body, FlexibleBody):
            raise ConstraintError(f"Fix: body must be a FlexibleBody, got {type(body).__name__}")
        self.body = body
        self.nodes = node_selection(body, nodes, f"Fix on body {body.name!r}")
        label = nodes if isinstance(nodes, str) else f"{len(self.nodes)} nodes"
        if len(self.nodes) == 0:
            raise ConstraintError(f"Fix {label!r} on body {body.name!r}: empty node selection")
        if name is not None and (not isinstance(name, str) or not name):
            raise ConstraintError(f"Fix {label!r} on body {body.name!r}: name must be a non-empty string, got {name!r}")
        try:
            self.components = np.unique(checked_components(components, "Fix", distinct=False))
        except ConstraintError:
            raise ConstraintError(
                f"Fix {label!r} on body {body.name!r}: components must be within (0, 1, 2), got {components!r}"
            ) from None
        X = body.mesh.points[self.nodes]
        if displacement is None:
            u = np.zeros_like(X)
        else:
            who = f"Fix {label!r} on body {body.name!r}"
            if callable(displacement):
                try:
                    u = displacement(X.copy())
                except Exception as exc:  # the user's function: named here, its traceback chained
                    raise ConstraintError(f"{who}: displacement(X) raised {type(exc).__name__}: {exc}") from exc
            else:
                u = displacement
            try:
                if np.iscomplexobj(u):
                    raise TypeError("complex")
                u = np.broadcast_to(np.asarray(u, dtype=float), X.shape).copy()
            except (TypeError, ValueError) as exc:
                raise ConstraintError(
                    f"{who}: displacement must be real numbers of shape (3,) or ({len(X)}, 3), got {np.shape(u)}"
                ) from exc
            if not np.all(np.isfinite(u)):
                raise ConstraintError(f"{who}: displacement contains NaN/Inf")
        self.label = label
        self.displacement = u
        self.name = name if name is not None else f"fix_{body.name}_{label}".replace(" ", "_")

    def dofs(self) -> np.ndarray:
        """Local coordinate indices (k·c,) of the prescribed components."""
        return (3 * self.nodes[:, None] + self.components[None, :]).ravel()

    def values(self, factor: float = 1.0) -> np.ndarray:
        """Prescribed coordinate values X + factor·u (k·c,) [m], matching :meth:`dofs`."""
        X = self.body.mesh.points[self.nodes]
        return (X + factor * self.displacement)[:, self.components].ravel()
