"""The constraint rows that have a compiled form, declared once: their kinds, the declarations a constraint makes of
its rows (its compile hook, :meth:`flexbody.constraints.base.Constraint.declare_rows`), and the row formulas, which
both the constraint's own ``evaluate`` (the general route) and the compiled program of a system
(:mod:`flexbody.system.joint_program`) call [DE-3, DE-4, MH-11].

Rows between two anchor points, x_a and x_b (a link point, or the ground folded into a constant offset o), with
d = x_a − x_b + o, ḋ = ẋ_a − ẋ_b and the bias J̇v_d = J̇v_a − J̇v_b:

- :data:`LINEAR`: φ = nᵀd, bias = nᵀJ̇v_d, Jacobian row nᵀ(J_a − J_b) — :class:`~flexbody.constraints.PointToPoint`
  (n a world axis per row) and a point on a :class:`~flexbody.constraints.Plane`;
- :data:`RADIAL`: r = ‖Pd‖, e = Pd/r, φ = r − L, bias = eᵀJ̇v_d + (‖Pḋ‖² − (eᵀḋ)²)/r (D J̇v + ḋᵀHḋ with
  H = (P − eeᵀ)/r), Jacobian row eᵀ(J_a − J_b) — :class:`~flexbody.constraints.Distance` (P = I, L the length) and a
  point on a :class:`~flexbody.constraints.Sphere` (P = I, L the radius) or
  :class:`~flexbody.constraints.Cylinder` (P = I − aaᵀ);

and rows on joint coordinates, :data:`COUPLING`: φ = cᵀq + c₀ − f(t), Jacobian row cᵀ, bias −f̈(t), φ_t = −ḟ(t) —
:class:`~flexbody.constraints.LinearCoupling`, :class:`~flexbody.constraints.Gear` (f = 0) and
:class:`~flexbody.constraints.JointDriver` (c = e_j).

A constraint of another kind declares nothing (``declare_rows`` returns None): its rows are evaluated in Python,
by its ``evaluate``, on every route.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numba as nb
import numpy as np

LINEAR, RADIAL, COUPLING = 0, 1, 2
"""The kinds of compiled rows."""

SMALLEST_RADIUS = 1e-14
"""The r below which a radial row's direction is undefined (its constraint then names itself)."""

__all__ = [
    "LINEAR",
    "RADIAL",
    "COUPLING",
    "SMALLEST_RADIUS",
    "PointRow",
    "CouplingRow",
    "point_row",
    "point_rows",
    "point_row_rate_partials",
    "radial_curvature",
    "coupling_row",
    "DeclaredPointRows",
    "drive_values",
]

_EYE3 = np.eye(3)
_ZERO3 = np.zeros(3)


@dataclass(frozen=True, eq=False)
class PointRow:
    """One row between the anchor points ``a`` and ``b`` (``b`` None: the ground at the origin) of kind LINEAR
    (``normal`` n (3,)) or RADIAL (``projector`` P (3, 3), ``length`` L [m]), with a constant world ``offset`` o (3,)
    [m] added to d = x_a − x_b (module docstring)."""

    kind: int
    a: Any
    b: Any = None
    normal: np.ndarray = field(default_factory=lambda: _ZERO3)
    projector: np.ndarray = field(default_factory=lambda: _EYE3)
    offset: np.ndarray = field(default_factory=lambda: _ZERO3)
    length: float = 0.0


@dataclass(frozen=True, eq=False)
class CouplingRow:
    """One row cᵀq + c₀ − f(t) on joint coordinates: ``terms`` ((link, c), …), ``constant`` c₀, and for a driven row
    ``drive`` = (f, ḟ, f̈), callables of t [s] (None: f = 0)."""

    terms: tuple
    constant: float = 0.0
    drive: tuple[Callable, Callable, Callable] | None = None


@nb.njit(cache=True)
def point_row(kind, normal, projector, length, d, dd, bd, e):
    """(ok, φ, bias) of one LINEAR or RADIAL row (module docstring) from d, ḋ, J̇v_d (3,); its direction goes to
    e (3,), whose product with J_a − J_b is the Jacobian row. Not ok for a radial row with ‖Pd‖ below
    :data:`SMALLEST_RADIUS` (its direction is undefined)."""
    if kind == LINEAR:
        e[0], e[1], e[2] = normal[0], normal[1], normal[2]
        return True, e[0] * d[0] + e[1] * d[1] + e[2] * d[2], e[0] * bd[0] + e[1] * bd[1] + e[2] * bd[2]
    P = projector
    pd0 = P[0, 0] * d[0] + P[0, 1] * d[1] + P[0, 2] * d[2]
    pd1 = P[1, 0] * d[0] + P[1, 1] * d[1] + P[1, 2] * d[2]
    pd2 = P[2, 0] * d[0] + P[2, 1] * d[1] + P[2, 2] * d[2]
    r = np.sqrt(pd0 * pd0 + pd1 * pd1 + pd2 * pd2)
    if r < SMALLEST_RADIUS:
        return False, 0.0, 0.0
    e[0], e[1], e[2] = pd0 / r, pd1 / r, pd2 / r
    pv0 = P[0, 0] * dd[0] + P[0, 1] * dd[1] + P[0, 2] * dd[2]
    pv1 = P[1, 0] * dd[0] + P[1, 1] * dd[1] + P[1, 2] * dd[2]
    pv2 = P[2, 0] * dd[0] + P[2, 1] * dd[1] + P[2, 2] * dd[2]
    ev = e[0] * dd[0] + e[1] * dd[1] + e[2] * dd[2]
    bias = e[0] * bd[0] + e[1] * bd[1] + e[2] * bd[2] + (pv0 * pv0 + pv1 * pv1 + pv2 * pv2 - ev * ev) / r
    return True, r - length, bias


@nb.njit(cache=True)
def point_rows(kinds, normals, projectors, lengths, d, dd, bd, phi, bias, E):
    """Rows of one constraint between two points, all of them at once from Python: φ (k,), bias (k,) and the
    directions E (k, 3) of rows of ``kinds`` (k,) with ``normals`` (k, 3), ``projectors`` (k, 3, 3) and ``lengths``
    (k,), each by :func:`point_row`. Returns the first row whose direction is undefined, or −1."""
    for i in range(kinds.shape[0]):
        ok, phi[i], bias[i] = point_row(kinds[i], normals[i], projectors[i], lengths[i], d, dd, bd, E[i])
        if not ok:
            return i
    return -1


@nb.njit(cache=True)
def coupling_row(coefficients, constant, q, drive):
    """(φ, bias, φ_t) = (cᵀq + c₀ − f, −f̈, −ḟ) of a :data:`COUPLING` row with ``coefficients`` c and coordinates q on
    the same columns and ``drive`` = (f, ḟ, f̈) (3,) at the row's time."""
    s = constant - drive[0]
    for j in range(q.shape[0]):
        s += coefficients[j] * q[j]
    return s, -drive[2], -drive[1]


@nb.njit(cache=True)
def radial_curvature(projector, e, r, out):
    """out (3, 3) = ∂e/∂d = ∂²φ/∂d² = (P − eeᵀ)/r of a :data:`RADIAL` row with direction e (3,) at r = ‖Pd‖ (a
    LINEAR row has none): the turn of its direction, which its Hessian and its acceleration's derivatives take."""
    for a in range(3):
        for b in range(3):
            out[a, b] = (projector[a, b] - e[a] * e[b]) / r


def point_row_rate_partials(kind, normal, projector, d, dd, ddd) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The partial derivatives (∂c/∂d, ∂c/∂ḋ, ∂c/∂d̈), each (3,), of the acceleration c = φ̈ = Φa + bias of one row
    of :func:`point_row` at d, ḋ, d̈ (3,) (#36 item 3): LINEAR c = nᵀd̈, so (0, 0, n); RADIAL
    c = eᵀd̈ + (ḋᵀPḋ − (eᵀḋ)²)/r with ∂e/∂d = H = (P − eeᵀ)/r, so
    (H d̈ − 2(eᵀḋ) H ḋ/r − (ḋᵀPḋ − (eᵀḋ)²) e/r², 2Hḋ, e)."""
    if kind == LINEAR:
        return _ZERO3, _ZERO3, np.asarray(normal, dtype=float)
    pd = projector @ d
    r = float(np.linalg.norm(pd))
    e, H = pd / r, np.empty((3, 3))
    radial_curvature(np.asarray(projector, dtype=float), e, r, H)
    ev, vv = float(e @ dd), float(dd @ projector @ dd)
    return H @ ddd - 2.0 * ev * (H @ dd) / r - (vv - ev * ev) * e / (r * r), 2.0 * (H @ dd), e


class DeclaredPointRows:
    """The arrays of the :class:`PointRow` declarations of one constraint (all between the same two points), for
    :func:`point_rows`: ``evaluate(d, ḋ, J̇v_d)`` → (φ (k,), bias (k,), E (k, 3)) or the index of a radial row at
    zero length."""

    def __init__(self, rows: tuple[PointRow, ...]):
        self.kinds = np.array([r.kind for r in rows], dtype=np.int64)
        self.normals = np.array([r.normal for r in rows], dtype=float).reshape(-1, 3)
        self.projectors = np.array([r.projector for r in rows], dtype=float).reshape(-1, 3, 3)
        self.lengths = np.array([r.length for r in rows], dtype=float)
        self.offset = np.asarray(rows[0].offset, dtype=float) if rows else _ZERO3

    def evaluate(self, d: np.ndarray, dd: np.ndarray, bd: np.ndarray):
        k = self.kinds.shape[0]
        phi, bias, E = np.empty(k), np.empty(k), np.empty((k, 3))
        bad = point_rows(self.kinds, self.normals, self.projectors, self.lengths, d + self.offset, dd, bd, phi, bias, E)
        return (phi, bias, E) if bad < 0 else bad


def drive_values(drive: tuple[Callable, Callable, Callable] | None, t: float) -> np.ndarray:
    """(f, ḟ, f̈) (3,) of a coupling row's prescribed motion at t [s] (zero without one)."""
    if drive is None:
        return np.zeros(3)
    f, df, ddf = drive
    return np.array([float(f(t)), float(df(t)), float(ddf(t))])
