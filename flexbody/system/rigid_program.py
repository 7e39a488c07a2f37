"""The terms of a rigid-only constrained system in one compiled call: M, h = b + g, and the rows φ, Φ, bias
of its closures, couplings and surfaces [DE-2, DE-4, DE-7, MH-1, MH-11].

A system without flexible bodies whose constraints are all of the kinds below is compiled, at assembly,
into flat arrays: its trees as one forest (the trees' links and coordinates side by side, each root on the
ground), the link points its constraints use, and one description per constraint row. One numba call then
runs the kinematics, CRBA, RNEA, the points' positions, Jacobians and bias accelerations and every row, and
allocates nothing but its outputs (before: a ``Kinematics`` object, four kernel calls per tree, and a
Python ``evaluate`` with its temporaries per constraint).

Rows, with x_A, x_B the two anchor points (a link point, or a ground point folded into a constant
offset o = g_A − g_B), d = x_A − x_B + o, ḋ, J_d = J_A − J_B and J̇v_d = J̇v_A − J̇v_B:

- LINEAR: φ = nᵀd, Φ = nᵀJ_d, bias = nᵀJ̇v_d — :class:`~flexbody.constraints.closures.PointToPoint`
  (n = a world axis per row) and a point on a :class:`~flexbody.constraints.surfaces.Plane` [MH-11];
- RADIAL: r = ‖Pd‖, e = Pd/r, φ = r − L, Φ = eᵀJ_d, bias = eᵀJ̇v_d + (‖Pḋ‖² − (eᵀḋ)²)/r —
  :class:`~flexbody.constraints.closures.Distance` (P = I) and a point on a
  :class:`~flexbody.constraints.surfaces.Sphere` (P = I) or :class:`~flexbody.constraints.surfaces.Cylinder`
  (P = I − aaᵀ), i.e. D J̇v + ẋᵀHẋ with H = (P − eeᵀ)/r [MH-11];
- COUPLING: φ = cᵀq + c₀, Φ = cᵀ, bias = 0 — :class:`~flexbody.constraints.couplings.LinearCoupling`
  and :class:`~flexbody.constraints.couplings.Gear`.

Every row is scleronomic (φ_t = 0). The formulas are those of the constraints' own ``evaluate``; a system
with any other constraint keeps the general route (:meth:`AssembledSystem._constraint_rows`).
"""
from __future__ import annotations

import numba as nb
import numpy as np

from ..constraints.closures import Distance, OnSurface, PointToPoint
from ..constraints.couplings import LinearCoupling
from ..constraints.surfaces import Cylinder, Plane, Sphere
from ..rigid.algorithms import inverse_dynamics, kinematics, mass_matrix, point_terms, world_inertias
from ..rigid.anchors import Ground, LinkPoint
from ..rigid.tree_dynamics import all_finite

LINEAR, RADIAL, COUPLING = 0, 1, 2

OK, NOT_FINITE, DEGENERATE = 0, 1, 2
"""Status of :func:`rigid_terms`: done; q or v not finite; a radial row with r = 0 (its direction is
undefined: the general route names the constraint)."""

SMALLEST_RADIUS = 1e-14
"""The r below which a radial row's direction is undefined (the constraints' own threshold)."""


@nb.njit(cache=True)
def rigid_terms(ints, floats, support, q, v, M, h, phi, Phi, bias):
    """M (n, n), h = b + g (n,), φ (m,), Φ (m, n) and bias (m,) of a rigid forest and its rows at (q, v)
    (rows: see the module docstring; anchors are point slots, −1 for the ground). ``ints`` and ``floats``
    hold the model and the rows end to end (:meth:`RigidProgram.pack`, one argument each, so a call pays
    for few arguments), ``support`` (n_links, n) the forest's support matrix. Returns a status."""
    if not (all_finite(q) and all_finite(v)):
        return NOT_FINITE
    n_links, n, m, k = support.shape[0], q.shape[0], phi.shape[0], ints[0]
    parent, joint_type, dof = ints[1:1 + n_links], ints[1 + n_links:1 + 2 * n_links], ints[1 + 2 * n_links:1 + 3 * n_links]
    o = 1 + 3 * n_links
    point_link, row_kind, row_a, row_b = ints[o:o + k], ints[o + k:o + k + m], ints[o + k + m:o + k + 2 * m], \
        ints[o + k + 2 * m:o + k + 3 * m]
    sizes = (3 * n_links, 9 * n_links, 3 * n_links, n_links, 3 * n_links, 9 * n_links, 3 * k, 3 * m, 9 * m, 3 * m, m,
             m * n, 3)
    ends = np.cumsum(np.array(sizes))
    axis = floats[0:ends[0]].reshape((n_links, 3))
    R_placement = floats[ends[0]:ends[1]].reshape((n_links, 3, 3))
    p_placement = floats[ends[1]:ends[2]].reshape((n_links, 3))
    mass = floats[ends[2]:ends[3]]
    com = floats[ends[3]:ends[4]].reshape((n_links, 3))
    inertia = floats[ends[4]:ends[5]].reshape((n_links, 3, 3))
    point_offset = floats[ends[5]:ends[6]].reshape((k, 3))
    row_n = floats[ends[6]:ends[7]].reshape((m, 3))
    row_P = floats[ends[7]:ends[8]].reshape((m, 3, 3))
    row_offset = floats[ends[8]:ends[9]].reshape((m, 3))
    row_const = floats[ends[9]:ends[10]]
    row_coef = floats[ends[10]:ends[11]].reshape((m, n))
    gravity = floats[ends[11]:ends[12]]
    R, p = np.empty((n_links, 3, 3)), np.empty((n_links, 3))
    S, vel, acc = np.empty((n_links, 6)), np.empty((n_links, 6)), np.empty((n_links, 6))
    kinematics(parent, joint_type, axis, R_placement, p_placement, dof, q, v, R, p, S, vel, acc)
    inertias = np.empty((n_links, 6, 6))
    world_inertias(R, p, mass, com, inertia, inertias)
    mass_matrix(parent, dof, S, inertias, n, np.empty_like(inertias), M)
    h[:] = 0.0
    inverse_dynamics(parent, dof, S, vel, acc, inertias, np.zeros(n), gravity, np.empty((n_links, 6)), h)
    X, Xd, B = np.empty((k, 3)), np.empty((k, 3)), np.empty((k, 3))
    J = np.empty((k, 3, n))
    point_terms(R, p, S, vel, acc, support, point_link, point_offset, X, Xd, J, B)
    d, dd, bd = np.empty(3), np.empty(3), np.empty(3)
    for r in range(row_kind.shape[0]):
        if row_kind[r] == COUPLING:
            s = row_const[r]
            for j in range(n):
                s += row_coef[r, j] * q[j]
                Phi[r, j] = row_coef[r, j]
            phi[r], bias[r] = s, 0.0
            continue
        a, b = row_a[r], row_b[r]
        for c in range(3):
            d[c] = row_offset[r, c] + (X[a, c] if a >= 0 else 0.0) - (X[b, c] if b >= 0 else 0.0)
            dd[c] = (Xd[a, c] if a >= 0 else 0.0) - (Xd[b, c] if b >= 0 else 0.0)
            bd[c] = (B[a, c] if a >= 0 else 0.0) - (B[b, c] if b >= 0 else 0.0)
        if row_kind[r] == LINEAR:
            e0, e1, e2 = row_n[r, 0], row_n[r, 1], row_n[r, 2]
            phi[r] = e0 * d[0] + e1 * d[1] + e2 * d[2]
            bias[r] = e0 * bd[0] + e1 * bd[1] + e2 * bd[2]
        else:                                                             # RADIAL
            P = row_P[r]
            pd0 = P[0, 0] * d[0] + P[0, 1] * d[1] + P[0, 2] * d[2]
            pd1 = P[1, 0] * d[0] + P[1, 1] * d[1] + P[1, 2] * d[2]
            pd2 = P[2, 0] * d[0] + P[2, 1] * d[1] + P[2, 2] * d[2]
            rad = np.sqrt(pd0 * pd0 + pd1 * pd1 + pd2 * pd2)
            if rad < SMALLEST_RADIUS:
                return DEGENERATE
            e0, e1, e2 = pd0 / rad, pd1 / rad, pd2 / rad
            pv0 = P[0, 0] * dd[0] + P[0, 1] * dd[1] + P[0, 2] * dd[2]
            pv1 = P[1, 0] * dd[0] + P[1, 1] * dd[1] + P[1, 2] * dd[2]
            pv2 = P[2, 0] * dd[0] + P[2, 1] * dd[1] + P[2, 2] * dd[2]
            ev = e0 * dd[0] + e1 * dd[1] + e2 * dd[2]
            phi[r] = rad - row_const[r]
            bias[r] = e0 * bd[0] + e1 * bd[1] + e2 * bd[2] + (pv0 * pv0 + pv1 * pv1 + pv2 * pv2 - ev * ev) / rad
        for j in range(n):
            s = 0.0
            if a >= 0:
                s += e0 * J[a, 0, j] + e1 * J[a, 1, j] + e2 * J[a, 2, j]
            if b >= 0:
                s -= e0 * J[b, 0, j] + e1 * J[b, 1, j] + e2 * J[b, 2, j]
            Phi[r, j] = s
    return OK


class RigidProgram:
    """The flat arrays of a rigid-only system for :func:`rigid_terms`; made by :func:`compile_rigid_terms`.

    :meth:`evaluate` returns (M, h, φ, Φ, bias) at (q, v), or None where the general route must decide
    (q or v not finite, a radial row at r = 0), so that route raises the error naming the culprit.
    """

    def __init__(self, forest: tuple, gravity: np.ndarray, points: tuple, rows: tuple, n: int, m: int):
        self.n, self.m = n, m
        self.ints, self.floats = self.pack(forest, gravity, points, rows)
        self.support = forest[-1]

    @staticmethod
    def pack(forest: tuple, gravity: np.ndarray, points: tuple, rows: tuple) -> tuple[np.ndarray, np.ndarray]:
        """(ints, floats): the model and the rows end to end in the order :func:`rigid_terms` reads them."""
        parent, joint_type, axis, R_placement, p_placement, dof, mass, com, inertia, _ = forest
        point_link, point_offset = points
        kind, a, b, normal, P, offset, const, coef = rows
        ints = np.concatenate([[len(point_link)], parent, joint_type, dof, point_link, kind, a, b]).astype(np.int64)
        floats = np.concatenate([x.ravel() for x in (axis, R_placement, p_placement, mass, com, inertia,
                                                     point_offset, normal, P, offset, const, coef, gravity)])
        return ints, floats.astype(float)

    def evaluate(self, q: np.ndarray, v: np.ndarray):
        n, m = self.n, self.m
        M, h, phi, Phi, bias = np.empty((n, n)), np.empty(n), np.empty(m), np.empty((m, n)), np.empty(m)
        if rigid_terms(self.ints, self.floats, self.support, q, v, M, h, phi, Phi, bias) != OK:
            return None
        return M, h, phi, Phi, bias


def compile_rigid_terms(trees, constraints, offsets) -> RigidProgram | None:
    """The :class:`RigidProgram` of rigid ``trees`` (first columns ``offsets[tree]``) and ``constraints``, or
    None when a constraint is of another kind or the trees do not share one gravity."""
    if not trees or any(not np.array_equal(t.gravity, trees[0].gravity) for t in trees):
        return None
    slots: dict = {}
    rows = []
    n = sum(t.n_dofs for t in trees)
    for c in constraints:
        described = _rows_of(c, slots, offsets, n)
        if described is None:
            return None
        rows += described
    forest, link_offsets = _forest(trees, offsets, n)
    point_link = np.array([link_offsets[a.link.tree] + a.link.index for a in slots], dtype=np.int64)
    point_offset = np.array([a.offset for a in slots], dtype=float).reshape(-1, 3)
    fields = list(zip(*rows)) if rows else [()] * 8
    row_arrays = (np.array(fields[0], dtype=np.int64).reshape(-1), np.array(fields[1], dtype=np.int64).reshape(-1),
                  np.array(fields[2], dtype=np.int64).reshape(-1), np.array(fields[3], dtype=float).reshape(-1, 3),
                  np.array(fields[4], dtype=float).reshape(-1, 3, 3), np.array(fields[5], dtype=float).reshape(-1, 3),
                  np.array(fields[6], dtype=float).reshape(-1), np.array(fields[7], dtype=float).reshape(-1, n))
    return RigidProgram(forest, np.asarray(trees[0].gravity, dtype=float), (point_link, point_offset), row_arrays,
                        n, len(rows))


def _forest(trees, offsets, n: int):
    """The kernel model of all ``trees`` side by side (links and coordinates offset; every root on the
    ground) with its support matrix (n_links, n), and each tree's first link index."""
    models = [t.kernel_model() for t in trees]
    link_offsets, start = {}, 0
    for t in trees:
        link_offsets[t] = start
        start += t.n_links
    parent = np.concatenate([np.where(m[0] < 0, -1, m[0] + link_offsets[t]) for t, m in zip(trees, models)])
    dof = np.concatenate([np.where(m[5] < 0, -1, m[5] + offsets[t]) for t, m in zip(trees, models)])
    support = np.full((start, n), -1, dtype=np.int64)
    for t in trees:
        block = t.arrays()["support_matrix"]
        rows, cols = link_offsets[t], offsets[t]
        support[rows:rows + t.n_links, cols:cols + t.n_dofs] = np.where(block < 0, -1, block + rows)
    pieces = [np.concatenate([m[i] for m in models]) for i in (1, 2, 3, 4)]
    rest = [np.concatenate([m[i] for m in models]) for i in (6, 7, 8)]
    forest = (parent.astype(np.int64), pieces[0].astype(np.int64), *[x.astype(float) for x in pieces[1:]],
              dof.astype(np.int64), *[x.astype(float) for x in rest], support)
    return forest, link_offsets


def _point(anchor, slots: dict):
    """(slot, ground position): a link point's slot (registered on first use), or −1 and a ground origin;
    None for another anchor (a program is then not made, so a slot registered before does not matter)."""
    if isinstance(anchor, LinkPoint):
        return slots.setdefault(anchor, len(slots)), np.zeros(3)
    if isinstance(anchor, Ground):
        return -1, np.asarray(anchor.origin, dtype=float)
    return None


def _rows_of(c, slots: dict, offsets, n: int):
    """The row descriptions (kind, a, b, n, P, offset, constant, coefficients) of constraint ``c``, or None
    when it is not one the kernel knows (subclasses with their own ``evaluate`` included)."""
    zero3, eye3, no_coef = np.zeros(3), np.eye(3), np.zeros(n)
    if type(c).evaluate is LinearCoupling.evaluate and isinstance(c, LinearCoupling):
        coef = np.zeros(n)
        for link, value in zip(c.links, c.coefficients):
            coef[offsets[link.tree] + link.coordinate] += value
        return [(COUPLING, -1, -1, zero3, eye3, zero3, c.constant, coef)]
    if type(c).evaluate is PointToPoint.evaluate and isinstance(c, PointToPoint):
        a, b = _point(c.a, slots), _point(c.b, slots)
        if a is None or b is None:
            return None
        return [(LINEAR, a[0], b[0], eye3[k], eye3, a[1] - b[1], 0.0, no_coef) for k in c.components]
    if type(c).evaluate is Distance.evaluate and isinstance(c, Distance):
        a, b = _point(c.a, slots), _point(c.b, slots)
        if a is None or b is None:
            return None
        return [(RADIAL, a[0], b[0], zero3, eye3, a[1] - b[1], c.length, no_coef)]
    if type(c).evaluate is OnSurface.evaluate and isinstance(c, OnSurface):
        surface, point = c.surface, _point(c.point, slots)
        if point is None:
            return None
        if type(surface) is Plane:
            return [(LINEAR, point[0], -1, surface.normal, eye3, point[1] - surface.point, 0.0, no_coef)]
        if type(surface) is Sphere:
            return [(RADIAL, point[0], -1, zero3, eye3, point[1] - surface.center, surface.radius, no_coef)]
        if type(surface) is Cylinder:
            return [(RADIAL, point[0], -1, zero3, surface._perp, point[1] - surface.center, surface.radius, no_coef)]
    return None
