"""The terms of a system without flexible nodes in one compiled call: M, h = b + g (+ the reduced bodies' elastic
and damping forces), the rows φ, Φ, bias, φ_t of its closures, couplings, surfaces and joint drivers, and the
kinetic and potential energy [DE-2, DE-4, DE-7, MH-1, MH-11].

A system whose coordinates are joint coordinates of rigid trees and modal coordinates of reduced bodies
(:mod:`flexbody.reduced.body`), and whose constraints are all of the kinds below, is compiled at assembly into
flat arrays: its trees as one forest (the trees' links and coordinates side by side, each root on the ground),
the link points its constraints use, the reduced bodies' invariants, and one description per constraint row.
One numba call then runs the kinematics, CRBA, RNEA, the reduced bodies' floating-frame terms, the points'
positions, Jacobians and bias accelerations and every row, and allocates only its work arrays (before: a
``Kinematics`` object, four kernel calls per tree, a ``ReducedState`` per body and a Python ``evaluate`` with
its temporaries per constraint).

Rows: each constraint declares its rows through its compile hook (``declare_rows``,
:mod:`flexbody.constraints.row_kinds`): rows between two anchor points (LINEAR, RADIAL; an anchor is a link point,
or the ground folded into a constant offset) and rows on joint coordinates (COUPLING, with the prescribed motion
f(t), ḟ(t), f̈(t) of a driven row evaluated in Python at the call's t and passed in as ``drive``). The kernel computes
each declared row with the one formula of its kind (:func:`~flexbody.constraints.row_kinds.point_row`,
:func:`~flexbody.constraints.row_kinds.coupling_row`), which the constraint's own ``evaluate`` calls too. The rows of
a constraint that declares none (a user surface, a weld, a Pfaffian row, …) join the same call: after the kernel,
:meth:`JointProgram.evaluate` fills them from the constraint's ``evaluate`` at the state's workspace.

A reduced body on link i adds, with its frame Jacobian T and bias c in frame axes (the link origin's point
Jacobian and the link's angular columns, turned by Rᵀ), the terms of :class:`flexbody.reduced.body.ReducedState`:
M += [[Tᵀ M_b,ff T, Tᵀ M_b,fη], [M_b,ηf T, M_b,ηη]], h += [Tᵀ; I] (M_b [c; 0] + Q_v − Q_g) + [0; K(g, ω) η + D η̇].
The energies are ½ vᵀ M v and −Σ m g·c of the links plus ½ ηᵀ K η − g·(m p + R s) of each reduced body. A system
with a flexible body, or whose trees do not share one gravity, keeps the general route
(:class:`~flexbody.system.workspace.Workspace`); force elements are subtracted from h by the workspace.
"""

from __future__ import annotations

import numba as nb
import numpy as np
import scipy.sparse as sp

from ..constraints.row_kinds import COUPLING, CouplingRow, PointRow, coupling_row, drive_values, point_row
from ..reduced.frame_forces import frame_forces_into
from ..reduced.invariants import frame_state
from ..rigid.algorithms import frame_terms, inverse_dynamics, kinematics, mass_matrix, point_terms, world_inertias
from ..rigid.anchors import Ground, LinkPoint
from ..rigid.tree_dynamics import all_finite

OK, NOT_FINITE, DEGENERATE = 0, 1, 2
"""Status of :func:`joint_terms`: done; q or v not finite; a radial row with r = 0 (its direction is
undefined: the general route names the constraint)."""


@nb.njit(cache=True)
def program_views(ints, floats, support, n):
    """The views of a packed program (:meth:`JointProgram.pack`) over n coordinates: (parent, joint_type, dof,
    point_link, row_kind, row_a, row_b, row_index, axis, R_placement, p_placement, mass, com, inertia, point_offset,
    row_n, row_P, row_offset, row_const, row_coef, gravity)."""
    n_links, k, m = support.shape[0], ints[0], ints[1]
    parent, joint_type, dof = (
        ints[2 : 2 + n_links],
        ints[2 + n_links : 2 + 2 * n_links],
        ints[2 + 2 * n_links : 2 + 3 * n_links],
    )
    o = 2 + 3 * n_links
    point_link, row_kind, row_a, row_b, row_index = (
        ints[o : o + k],
        ints[o + k : o + k + m],
        ints[o + k + m : o + k + 2 * m],
        ints[o + k + 2 * m : o + k + 3 * m],
        ints[o + k + 3 * m : o + k + 4 * m],
    )
    sizes = (
        3 * n_links,
        9 * n_links,
        3 * n_links,
        n_links,
        3 * n_links,
        9 * n_links,
        3 * k,
        3 * m,
        9 * m,
        3 * m,
        m,
        m * n,
        3,
    )
    ends = np.cumsum(np.array(sizes))
    axis = floats[0 : ends[0]].reshape((n_links, 3))
    R_placement = floats[ends[0] : ends[1]].reshape((n_links, 3, 3))
    p_placement = floats[ends[1] : ends[2]].reshape((n_links, 3))
    mass = floats[ends[2] : ends[3]]
    com = floats[ends[3] : ends[4]].reshape((n_links, 3))
    inertia = floats[ends[4] : ends[5]].reshape((n_links, 3, 3))
    point_offset = floats[ends[5] : ends[6]].reshape((k, 3))
    row_n = floats[ends[6] : ends[7]].reshape((m, 3))
    row_P = floats[ends[7] : ends[8]].reshape((m, 3, 3))
    row_offset = floats[ends[8] : ends[9]].reshape((m, 3))
    row_const = floats[ends[9] : ends[10]]
    row_coef = floats[ends[10] : ends[11]].reshape((m, n))
    gravity = floats[ends[11] : ends[12]]
    return (
        parent, joint_type, dof, point_link, row_kind, row_a, row_b, row_index, axis, R_placement, p_placement, mass,
        com, inertia, point_offset, row_n, row_P, row_offset, row_const, row_coef, gravity,
    )  # fmt: skip


@nb.njit(cache=True)
def joint_terms(ints, floats, support, bodies, body_floats, drive, q, v, M, h, phi, Phi, bias, phi_t, energy):
    """M (n, n), h (n,), φ (m,), Φ (m, n), bias (m,), φ_t (m,) and energy (2,) = (kinetic, potential) of a rigid
    forest, its reduced bodies and its m_c declared rows at (q, v) (see the module docstring; anchors are point
    slots, −1 for the ground; the rows of constraints that declare none are left to the caller). ``ints`` and
    ``floats`` hold the forest and the rows end to end (:meth:`JointProgram.pack`, so a call pays for few
    arguments), ``support`` (n_links, n) the forest's support matrix, ``bodies`` (b, 4) each reduced body's (link,
    first modal column, r, first entry in ``body_floats``), ``drive`` (m_c, 3) the value, rate and acceleration f,
    ḟ, f̈ of each declared row's prescribed motion. Returns a status."""
    if not (all_finite(q) and all_finite(v)):
        return NOT_FINITE
    n_links, n, k, m = support.shape[0], q.shape[0], ints[0], ints[1]
    views = program_views(ints, floats, support, n)
    parent, joint_type, dof, point_link, row_kind, row_a, row_b, row_index = views[:8]
    axis, R_placement, p_placement, mass, com, inertia, point_offset = views[8:15]
    row_n, row_P, row_offset, row_const, row_coef, gravity = views[15:]
    R, p = np.empty((n_links, 3, 3)), np.empty((n_links, 3))
    S, vel, acc = np.empty((n_links, 6)), np.empty((n_links, 6)), np.empty((n_links, 6))
    kinematics(parent, joint_type, axis, R_placement, p_placement, dof, q, v, R, p, S, vel, acc)
    inertias = np.empty((n_links, 6, 6))
    world_inertias(R, p, mass, com, inertia, inertias)
    mass_matrix(parent, dof, S, inertias, n, np.empty_like(inertias), M)
    h[:] = 0.0
    inverse_dynamics(parent, dof, S, vel, acc, inertias, np.zeros(n), gravity, np.empty((n_links, 6)), h)
    potential = 0.0
    for i in range(n_links):
        for c in range(3):
            x = p[i, c] + R[i, c, 0] * com[i, 0] + R[i, c, 1] * com[i, 1] + R[i, c, 2] * com[i, 2]
            potential -= mass[i] * gravity[c] * x
    for b in range(bodies.shape[0]):
        potential += _reduced_terms(
            bodies[b, 0],
            bodies[b, 1],
            bodies[b, 2],
            body_floats[bodies[b, 3] :],
            R,
            p,
            S,
            vel,
            acc,
            support,
            gravity,
            q,
            v,
            M,
            h,
        )
    kinetic = 0.0  # ½ vᵀ M v from M's lower triangle (M is symmetric)
    for i in range(n):
        s = 0.5 * M[i, i] * v[i]
        for j in range(i):
            s += M[i, j] * v[j]
        kinetic += v[i] * s
    energy[0], energy[1] = kinetic, potential
    X, Xd, B = np.empty((k, 3)), np.empty((k, 3)), np.empty((k, 3))
    J = np.empty((k, 3, n))
    point_terms(R, p, S, vel, acc, support, point_link, point_offset, X, Xd, J, B)
    d, dd, bd, e = np.empty(3), np.empty(3), np.empty(3), np.empty(3)
    for r in range(m):
        i = row_index[r]  # the row among all the system's rows
        if row_kind[r] == COUPLING:
            phi[i], bias[i], phi_t[i] = coupling_row(row_coef[r], row_const[r], q, drive[r])
            for j in range(n):
                Phi[i, j] = row_coef[r, j]
            continue
        a, b = row_a[r], row_b[r]
        for c in range(3):
            d[c] = row_offset[r, c] + (X[a, c] if a >= 0 else 0.0) - (X[b, c] if b >= 0 else 0.0)
            dd[c] = (Xd[a, c] if a >= 0 else 0.0) - (Xd[b, c] if b >= 0 else 0.0)
            bd[c] = (B[a, c] if a >= 0 else 0.0) - (B[b, c] if b >= 0 else 0.0)
        ok, phi[i], bias[i] = point_row(row_kind[r], row_n[r], row_P[r], row_const[r], d, dd, bd, e)
        if not ok:
            return DEGENERATE
        phi_t[i] = 0.0
        for j in range(n):
            s = 0.0
            if a >= 0:
                s += e[0] * J[a, 0, j] + e[1] * J[a, 1, j] + e[2] * J[a, 2, j]
            if b >= 0:
                s -= e[0] * J[b, 0, j] + e[1] * J[b, 1, j] + e[2] * J[b, 2, j]
            Phi[i, j] = s
    return OK


@nb.njit(cache=True)
def _reduced_terms(i, col, r, fl, R, p, S, vel, acc, support, gravity, q, v, M, h):
    """Add one reduced body's share to M and h (module docstring; :class:`flexbody.reduced.body.ReducedState`)
    and return its potential energy. ``fl`` is the body's :func:`~flexbody.reduced.frame_forces.pack`; its forces
    are :func:`~flexbody.reduced.frame_forces.frame_forces_into` at A = [c; 0] (the frame's bias), η̈ = 0."""
    n = q.shape[0]
    J, bias = np.empty((6, n)), np.empty(6)  # the link origin's frame Jacobian and J̇v, world axes
    frame_terms(R, p, S, vel, acc, support, i, np.zeros(3), J, bias)
    T, c, w, g = np.empty((6, n)), np.empty(6), np.empty(6), np.empty(3)
    frame_state(R[i], J, bias, v, gravity, T, c, w, g)
    eta, eta_dot = q[col : col + r].copy(), v[col : col + r].copy()
    Mb, Q, s, K, F = np.empty((6 + r, 6 + r)), np.empty(6 + r), np.empty(3), np.empty((r, r)), np.empty(6 + r)
    frame_forces_into(fl, r, c, w[3:].copy(), g, eta, eta_dot, np.zeros(r), True, True, True, Mb, Q, s, K, F)
    strain = 0.0
    for k in range(r):
        Ke = 0.0
        for l in range(r):
            Ke += K[k, l] * eta[l]
        strain += 0.5 * eta[k] * Ke
        h[col + k] += F[6 + k]
    MT = np.zeros((6, n))  # M_b,ff T
    for a in range(6):
        for j in range(n):
            if support[i, j] >= 0:
                for b in range(6):
                    MT[a, j] += Mb[a, b] * T[b, j]
    for j in range(n):
        if support[i, j] < 0:
            continue
        for a in range(6):
            h[j] += T[a, j] * F[a]
        for j2 in range(n):
            if support[i, j2] >= 0:
                t = 0.0
                for a in range(6):
                    t += T[a, j] * MT[a, j2]
                M[j, j2] += t
        for k in range(r):
            t = 0.0
            for a in range(6):
                t += T[a, j] * Mb[a, 6 + k]
            M[j, col + k] += t
            M[col + k, j] += t
    for k in range(r):
        for l in range(r):
            M[col + k, col + l] += Mb[6 + k, 6 + l]
    centre = 0.0
    for a in range(3):
        x = fl[0] * p[i, a] + R[i, a, 0] * s[0] + R[i, a, 1] * s[1] + R[i, a, 2] * s[2]
        centre += gravity[a] * x
    return strain - centre


@nb.njit(cache=True)
def output_offsets(n, m):
    """Where the outputs of :func:`joint_terms_into` end in its flat array, in this order: M (n n), Φ (m n), h (n),
    φ, bias, φ_t (m each), energy (2); the last is the array's size."""
    M = n * n
    Phi = M + m * n
    h = Phi + n
    return M, Phi, h, h + m, h + 2 * m, h + 3 * m, h + 3 * m + 2


@nb.njit(cache=True)
def joint_terms_into(ints, floats, support, bodies, body_floats, drive, q, v, m, out):
    """:func:`joint_terms` with its seven outputs end to end in one flat array ``out`` (:func:`output_offsets`): one
    argument and one allocation for seven (:meth:`JointProgram.evaluate`)."""
    n = q.shape[0]
    e = output_offsets(n, m)
    return joint_terms(
        ints,
        floats,
        support,
        bodies,
        body_floats,
        drive,
        q,
        v,
        out[: e[0]].reshape((n, n)),
        out[e[1] : e[2]],
        out[e[2] : e[3]],
        out[e[0] : e[1]].reshape((m, n)),
        out[e[3] : e[4]],
        out[e[4] : e[5]],
        out[e[5] : e[6]],
    )


class JointProgram:
    """The flat arrays of a system without flexible nodes for :func:`joint_terms`; made by
    :func:`compile_joint_terms` from the system's trees, reduced bodies and the constraints' row declarations.

    :meth:`evaluate` returns (M, h, φ, Φ, bias, φ_t, energy) at (t, q, v), or None where the general route must
    decide (q or v not finite, a radial row at r = 0), so that route raises the error naming the culprit.
    ``drivers`` are the (compiled row, (f, ḟ, f̈)) pairs of the driven rows; ``python_rows`` the (constraint, rows)
    of the constraints that declare no rows, evaluated in Python after the kernel.
    """

    def __init__(
        self,
        forest: tuple,
        gravity: np.ndarray,
        points: tuple,
        rows: tuple,
        n: int,
        m: int,
        bodies: np.ndarray,
        body_floats: np.ndarray,
        drivers: list,
        python_rows: list,
    ):
        self.n, self.m, self.m_compiled = n, m, len(rows[0])
        self.ints, self.floats = self.pack(forest, gravity, points, rows)
        self.support = forest[-1]
        self.bodies, self.body_floats, self.drivers, self.python_rows = bodies, body_floats, drivers, python_rows
        self._no_drive = np.zeros((self.m_compiled, 3))
        self._ends = output_offsets(n, m)

    @staticmethod
    def pack(forest: tuple, gravity: np.ndarray, points: tuple, rows: tuple) -> tuple[np.ndarray, np.ndarray]:
        """(ints, floats): the model and the rows end to end in the order :func:`joint_terms` reads them."""
        parent, joint_type, axis, R_placement, p_placement, dof, mass, com, inertia, _ = forest
        point_link, point_offset = points
        kind, a, b, index, normal, P, offset, const, coef = rows
        ints = np.concatenate(
            [[len(point_link), len(kind)], parent, joint_type, dof, point_link, kind, a, b, index]
        ).astype(np.int64)
        floats = np.concatenate(
            [
                x.ravel()
                for x in (
                    axis,
                    R_placement,
                    p_placement,
                    mass,
                    com,
                    inertia,
                    point_offset,
                    normal,
                    P,
                    offset,
                    const,
                    coef,
                    gravity,
                )
            ]
        )
        return ints, floats.astype(float)

    def drive(self, t: float) -> np.ndarray:
        """(m_c, 3): f(t), ḟ(t), f̈(t) of the driven rows at t, zero on the others."""
        if not self.drivers:
            return self._no_drive
        out = np.zeros((self.m_compiled, 3))
        for row, drive in self.drivers:
            out[row] = drive_values(drive, t)
        return out

    def evaluate(self, t: float, q: np.ndarray, v: np.ndarray, ws=None):
        """(M, h, φ, Φ, bias, φ_t, energy) at (t, q, v), read-only views of one new array, the rows of
        :attr:`python_rows` from their constraints at the workspace ``ws`` of the state; None where the general route
        must decide."""
        out = np.empty(self._ends[-1])
        if self.terms_into(t, q, v, out) != OK:
            return None
        if self.python_rows:
            self._python_rows(ws, *self.views(out))
        out.setflags(write=False)  # the views made from here on are read-only
        return self.views(out)

    def terms_into(self, t: float, q: np.ndarray, v: np.ndarray, out: np.ndarray) -> int:
        """The compiled rows and terms at (t, q, v) into the flat array ``out`` (:func:`output_offsets`), the rows
        without a compiled form left out; the status of :func:`joint_terms`."""
        return joint_terms_into(
            self.ints, self.floats, self.support, self.bodies, self.body_floats, self.drive(t), q, v, self.m, out
        )

    def views(self, out: np.ndarray) -> tuple:
        """(M, h, φ, Φ, bias, φ_t, energy): the views of :func:`joint_terms_into`'s flat output ``out``."""
        n, m, e = self.n, self.m, self._ends
        return (
            out[: e[0]].reshape(n, n),
            out[e[1] : e[2]],
            out[e[2] : e[3]],
            out[e[0] : e[1]].reshape(m, n),
            out[e[3] : e[4]],
            out[e[4] : e[5]],
            out[e[5] : e[6]],
        )

    def _python_rows(self, ws, M, h, phi, Phi, bias, phi_t, energy) -> None:
        """The rows without a compiled form, from their constraints at the same state."""
        for c, rs in self.python_rows:
            rows = c.evaluate(ws)
            phi[rs], bias[rs] = rows.phi, rows.bias
            phi_t[rs] = 0.0 if rows.phi_t is None else rows.phi_t
            Phi[rs] = 0.0
            for cols, block in rows.pieces:
                if len(cols):
                    Phi[rs, cols] += block.toarray() if sp.issparse(block) else block


def compile_joint_terms(trees, reduced, constraints, offsets, n: int) -> JointProgram | None:
    """The :class:`JointProgram` of rigid ``trees`` and prepared ``reduced`` bodies (first columns
    ``offsets[item]``, n coordinates in all) and ``constraints``, generated from the constraints' row declarations
    (their compile hook ``declare_rows``; a constraint that declares none, or whose points are not link points or
    the ground, is evaluated in Python after the kernel); None when the trees do not share one gravity."""
    if not trees or any(not np.array_equal(t.gravity, trees[0].gravity) for t in trees):
        return None
    slots: dict = {}
    rows: list = []
    drivers: list = []
    python_rows: list = []
    start = 0
    for c in constraints:
        described = _declared(c, slots, offsets, n, start)
        if described is None:
            python_rows.append((c, slice(start, start + c.n_rows)))
        else:
            drivers += [(len(rows) + k, drive) for k, drive in described[1]]
            rows += described[0]
        start += c.n_rows
    forest, link_offsets = forest_model(trees, offsets, n)
    point_link = np.array([link_offsets[a.link.tree] + a.link.index for a in slots], dtype=np.int64)
    point_offset = np.array([a.offset for a in slots], dtype=float).reshape(-1, 3)
    fields = list(zip(*rows)) if rows else [()] * 9
    row_arrays = (
        np.array(fields[0], dtype=np.int64).reshape(-1),
        np.array(fields[1], dtype=np.int64).reshape(-1),
        np.array(fields[2], dtype=np.int64).reshape(-1),
        np.array(fields[3], dtype=np.int64).reshape(-1),
        np.array(fields[4], dtype=float).reshape(-1, 3),
        np.array(fields[5], dtype=float).reshape(-1, 3, 3),
        np.array(fields[6], dtype=float).reshape(-1, 3),
        np.array(fields[7], dtype=float).reshape(-1),
        np.array(fields[8], dtype=float).reshape(-1, n),
    )
    pieces = [b.packed for b in reduced]
    starts = np.cumsum([0] + [x.size for x in pieces])[:-1]
    bodies = np.array(
        [[link_offsets[b.tree] + b.link.index, offsets[b], b.n_dofs, start] for b, start in zip(reduced, starts)],
        dtype=np.int64,
    ).reshape(-1, 4)
    body_floats = np.concatenate(pieces) if pieces else np.zeros(0)
    return JointProgram(
        forest,
        np.asarray(trees[0].gravity, dtype=float),
        (point_link, point_offset),
        row_arrays,
        n,
        start,
        bodies,
        body_floats,
        drivers,
        python_rows,
    )


def forest_model(trees, offsets, n: int):
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
        support[rows : rows + t.n_links, cols : cols + t.n_dofs] = np.where(block < 0, -1, block + rows)
    pieces = [np.concatenate([m[i] for m in models]) for i in (1, 2, 3, 4)]
    rest = [np.concatenate([m[i] for m in models]) for i in (6, 7, 8)]
    forest = (
        parent.astype(np.int64),
        pieces[0].astype(np.int64),
        *[x.astype(float) for x in pieces[1:]],
        dof.astype(np.int64),
        *[x.astype(float) for x in rest],
        support,
    )
    return forest, link_offsets


def _point(anchor, slots: dict):
    """(slot, ground position): a link point's slot (registered on first use), or −1 and a ground origin;
    None for another anchor (its constraint is then evaluated in Python; a slot registered before is harmless)."""
    if isinstance(anchor, LinkPoint):
        return slots.setdefault(anchor, len(slots)), np.zeros(3)
    if anchor is None:
        return -1, np.zeros(3)
    if isinstance(anchor, Ground):
        return -1, np.asarray(anchor.origin, dtype=float)
    return None


def _declared(c, slots: dict, offsets, n: int, start: int):
    """(row descriptions (kind, a, b, index, n, P, offset, constant, coefficients), [(k, drive)]) of constraint
    ``c`` from its compile hook, or None when it declares none or a point has no compiled form. A declaration is
    used only with the ``evaluate`` of the class that makes it (a subclass with its own ``evaluate`` and no
    declaration of its own is evaluated in Python)."""
    declared = c.declare_rows()
    if declared is None or len(declared) != c.n_rows or not _declares_its_own_rows(type(c)):
        return None
    out, drives = [], []
    for k, row in enumerate(declared):
        if isinstance(row, CouplingRow):
            coef = np.zeros(n)
            for link, value in row.terms:
                coef[offsets[link.tree] + link.coordinate] += value
            out.append((COUPLING, -1, -1, start + k, _ZERO3, _EYE3, _ZERO3, row.constant, coef))
            if row.drive is not None:
                drives.append((k, row.drive))
            continue
        assert isinstance(row, PointRow)
        a, b = _point(row.a, slots), _point(row.b, slots)
        if a is None or b is None:
            return None
        offset = np.asarray(row.offset, dtype=float) + a[1] - b[1]
        out.append((row.kind, a[0], b[0], start + k, row.normal, row.projector, offset, row.length, np.zeros(n)))
    return out, drives


def _declares_its_own_rows(cls) -> bool:
    """Whether no class before the one whose ``declare_rows`` ``cls`` uses defines its own ``evaluate`` (a
    subclass that evaluates its rows differently has not declared them)."""
    mro = cls.__mro__
    declaring = next(i for i, klass in enumerate(mro) if "declare_rows" in vars(klass))
    return all("evaluate" not in vars(klass) for klass in mro[:declaring])


_ZERO3, _EYE3 = np.zeros(3), np.eye(3)
