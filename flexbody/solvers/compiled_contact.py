"""Batches of nonsmooth steps in one compiled call, for rigid systems whose contacts are all points or balls on the
trees' links against planes and that have no bilateral rows (boxes, balls and free-flying or fixed-base robots
touching floors and walls).

Each step is that of :class:`~flexbody.solvers.contact_step.ContactStepper` (the step of
:mod:`flexbody.solvers.contact_step`, semi-implicit Euler with impulses): the terms M and h from the system's
compiled program (:func:`~flexbody.system.joint_program.joint_terms_into`), the contacts' gaps and rows from their one
declaration (:func:`~flexbody.solvers.contact_frames.forest_plane_rows`), the contacts a step considers and their
bounds from :mod:`flexbody.solvers.contact_set`, and the Signorini–Coulomb problem solved by
:func:`~flexbody.solvers.coulomb_problem.solve_coulomb`. Only the linear algebra differs: without bilateral rows the
trees do not couple, so A = M is factored by a dense Cholesky per tree (its n_t × n_t block) and the Delassus matrix
W = G M⁻¹ Gᵀ is formed from the columns M⁻¹ G_iᵀ of each considered contact, with the blocks of contacts on
different trees zero, instead of through the sparse factor of the whole system.

A step the kernel cannot take as the Python route would — terms that are not finite, a mass block that is not
positive definite, a contact problem not solved to tolerance, a rotation vector leaving its chart — is not taken:
the batch stops before it and the Python route takes that step (and raises the error that names the culprit).
"""

from __future__ import annotations

from typing import NamedTuple

import numba as nb
import numpy as np

from ..system.joint_program import joint_terms_into, output_offsets
from .contact_frames import forest_plane_rows
from .contact_set import closing_contacts, driven_through, impulse_work, normal_bounds
from .coulomb_problem import solve_coulomb_coupled

__all__ = ["CompiledContactSteps", "ContactBatch", "BATCH_STEPS"]

TAKEN, DECLINED = 0, 1
"""Status of a batch: every step taken, or the step after the ``accepted`` ones declined (module docstring)."""

BATCH_STEPS = 256
"""Steps of one compiled batch."""


class ContactBatch(NamedTuple):
    """What :meth:`CompiledContactSteps.run` did: its ``status``, the steps ``accepted``, and the ``rows`` written
    (t, q, v, a, kinetic, potential, the contacts' gaps (c,), impulses (c, 3) and local velocities before the step
    (c, 3) as :class:`~flexbody.solvers.contact_step.ContactStep` has them, sweeps, the impulses' work [J]), one per
    recorded state; the
    state (q, v) and the contacts' warm start are updated in place to the last accepted step."""

    status: int
    accepted: int
    rows: tuple


@nb.njit(cache=True)
def block_cholesky(M, starts, counts, L, d) -> bool:
    """The lower Cholesky factor of each diagonal block M[s:s+k, s:s+k] (``starts``, ``counts``) into the same block
    of L, and the reciprocals of its diagonal into d (n,); False when a block is not positive definite."""
    for b in range(starts.size):
        s, k = starts[b], counts[b]
        for j in range(k):
            pivot = M[s + j, s + j]
            for m in range(j):
                pivot -= L[s + j, s + m] * L[s + j, s + m]
            if not pivot > 0.0:
                return False
            L[s + j, s + j] = np.sqrt(pivot)
            d[s + j] = 1.0 / L[s + j, s + j]
            for i in range(j + 1, k):
                x = M[s + i, s + j]
                for m in range(j):
                    x -= L[s + i, s + m] * L[s + j, s + m]
                L[s + i, s + j] = x * d[s + j]
    return True


@nb.njit(cache=True)
def block_solve(L, d, s, k, x) -> None:
    """x (k,) ← (L Lᵀ)⁻¹ x on the block L[s:s+k, s:s+k] of :func:`block_cholesky` (d its reciprocal diagonal)."""
    for i in range(k):
        y = x[i]
        for m in range(i):
            y -= L[s + i, s + m] * x[m]
        x[i] = y * d[s + i]
    for i in range(k - 1, -1, -1):
        y = x[i]
        for m in range(i + 1, k):
            y -= L[s + m, s + i] * x[m]
        x[i] = y * d[s + i]


@nb.njit(cache=True)
def _row_dot(data, at, first, count, x) -> float:
    """One row of G (its ``count`` values from data[at] on the columns first …) times x (n,)."""
    total = 0.0
    for j in range(count):
        total += data[at + j] * x[first + j]
    return total


@nb.njit(cache=True)
def _local_velocities(data, starts, first, count, x, u) -> None:
    """u (3c,) = G x of every contact (its three rows from data[starts[i]], on its tree's columns)."""
    for i in range(first.size):
        for a in range(3):
            u[3 * i + a] = _row_dot(data, starts[i] + a * count[i], first[i], count[i], x)


@nb.njit(cache=True)
def _coupled(active, first, n):
    """(lo, hi) (a,) each: the first and one past the last position in ``active`` of a contact on the same tree (a
    tree known by its first column, < n)."""
    a = active.size
    lowest, highest = np.full(n, a), np.zeros(n, np.int64)
    for ai in range(a):
        tree = first[active[ai]]
        lowest[tree], highest[tree] = min(lowest[tree], ai), max(highest[tree], ai + 1)
    lo, hi = np.empty(a, np.int64), np.empty(a, np.int64)
    for ai in range(a):
        lo[ai], hi[ai] = lowest[first[active[ai]]], highest[first[active[ai]]]
    return lo, hi


@nb.njit(cache=True)
def _contact_impulses(
    active, data, starts, first, count, L, d, gap, u_before, u_free, mu, e, settings, h, warm, Y, buffer
):
    """The impulses p (3a,) of the ``active`` contacts, their sweeps and last change, with the columns
    Y (a, 3, width) = M⁻¹ G_iᵀ on each contact's tree's columns filled in; W made in ``buffer`` (≥ 9a² values, kept
    from step to step: a new array of its size would cost more in page faults than the step's arithmetic)."""
    a, tol, max_sweeps, beta, bounce = active.size, settings[0], int(settings[1]), settings[2], settings[3]
    lo, hi = _coupled(active, first, L.shape[0])
    for ai in range(a):
        i = active[ai]
        for r in range(3):
            at = starts[i] + r * count[i]
            for j in range(count[i]):
                Y[ai, r, j] = data[at + j]
            block_solve(L, d, first[i], count[i], Y[ai, r])
    W = buffer[: 9 * a * a].reshape((3 * a, 3 * a))  # only the coupled columns of each row are written and read
    for ai in range(a):
        i = active[ai]
        for aj in range(max(ai, lo[ai]), hi[ai]):  # W is symmetric: the upper blocks, mirrored
            j, at, size = active[aj], starts[active[aj]], count[active[aj]]
            same = first[j] == first[i]  # the same tree (others do not couple without bilateral rows)
            for r in range(3):
                for s in range(3):
                    value = 0.0
                    if same:
                        for m in range(size):
                            value += data[at + s * size + m] * Y[ai, r, m]
                    W[3 * ai + r, 3 * aj + s] = W[3 * aj + s, 3 * ai + r] = value
    w = np.empty(3 * a)
    for ai in range(a):
        for r in range(3):
            w[3 * ai + r] = u_free[3 * active[ai] + r]
    w[0::3] -= normal_bounds(gap[active], u_before[3 * active], w[0::3].copy(), e[active], beta, h, bounce)
    p = np.empty(3 * a)
    for ai in range(a):
        for r in range(3):
            p[3 * ai + r] = warm[active[ai], r]
    sweeps, change = solve_coulomb_coupled(W, w, mu[active], p, tol, max_sweeps, lo, hi)
    return p, sweeps, change


@nb.njit(cache=True)
def _step_impulses(active, data, starts, first, count, L, d, gap, u_before, u_free, mu, e, settings, h, warm, v_free,
                   buffer):  # fmt: skip
    """(solved, v⁺ (n,), impulses (c, 3), sweeps, buffer): the contact problem of the step from the ``active``
    contacts, a contact left out joining where the others' impulses drive it through its surface (as the Python
    step: :func:`~flexbody.solvers.contact_set.driven_through`); solved False where the solver did not converge."""
    c, width = first.size, count.max()
    step_warm, impulses = warm.copy(), np.zeros((c, 3))
    v_next, sweeps, normal = v_free.copy(), 0, np.empty(c)
    while active.size:
        Y = np.empty((active.size, 3, width))
        if buffer.size < 9 * active.size**2:
            buffer = np.empty(9 * active.size**2)
        p, done, change = _contact_impulses(
            active, data, starts, first, count, L, d, gap, u_before, u_free, mu, e, settings, h, step_warm, Y, buffer
        )
        sweeps += done
        if not change <= settings[0]:
            return False, v_next, impulses, sweeps, buffer
        v_next[:] = v_free
        impulses[:] = 0.0
        for ai in range(active.size):
            i = active[ai]
            for r in range(3):
                impulses[i, r] = p[3 * ai + r]
                for j in range(count[i]):
                    v_next[first[i] + j] += p[3 * ai + r] * Y[ai, r, j]
        for i in range(c):
            normal[i] = _row_dot(data, starts[i], first[i], count[i], v_next)
        considered = np.zeros(c, dtype=np.bool_)
        considered[active] = True
        joining = driven_through(gap, normal, h, considered)
        if not joining.size:
            break
        for i in active:
            step_warm[i] = impulses[i]
        considered[joining] = True
        active = np.flatnonzero(considered)
    return True, v_next, impulses, sweeps, buffer


@nb.njit(cache=True)
def _tree_solves(L, d, blocks, x):
    """x (n,) ← M⁻¹ x by the trees' blocks of :func:`block_cholesky` (``blocks`` = (starts, counts))."""
    starts, counts = blocks
    for b in range(starts.size):
        block_solve(L, d, starts[b], counts[b], x[starts[b] : starts[b] + counts[b]])
    return x


@nb.njit(cache=True)
def _record(rows, j, t, q, v, a, energy, gap, impulses, u_before, sweeps, work) -> None:
    """Row j of ``rows`` (:class:`ContactBatch`): the state, its step's response and its contacts."""
    t_rows, q_rows, v_rows, a_rows, kinetic, potential, gaps, impulse_rows, local, sweep_rows, work_rows = rows
    t_rows[j] = t
    q_rows[j] = q
    v_rows[j] = v
    a_rows[j] = a
    kinetic[j], potential[j] = energy[0], energy[1]
    gaps[j] = gap
    impulse_rows[j] = impulses
    for i in range(gap.size):
        for x in range(3):
            local[j, i, x] = u_before[3 * i + x]
    sweep_rows[j] = sweeps
    work_rows[j] = work


@nb.njit(cache=True)
def _rotations_in_chart(rotations, q) -> bool:
    """Whether every rotation vector q[s:s+3] (``rotations`` their starts) is at most π long."""
    longest = 0.0
    for s in rotations:
        longest = max(longest, q[s] * q[s] + q[s + 1] * q[s + 1] + q[s + 2] * q[s + 2])
    return longest <= np.pi * np.pi


@nb.njit(cache=True)
def rigid_contact_steps(
    program, drive, model, forest, starts, first, count, blocks, mu, e, settings, rotations, tau, times,
    hs, record, q, v, warm, rows, counters,
):  # fmt: skip
    """Steps from (q, v) at ``times`` (K,) of sizes ``hs`` (K,) under the held τ (n,), in place on q, v and ``warm``
    (c, 3) up to the last one taken; the recorded states' rows (:class:`ContactBatch`) into ``rows``; counters
    [accepted, written]. Returns :data:`TAKEN` or :data:`DECLINED` (module docstring)."""
    ints, floats, support, bodies, body_floats = program
    blocks_start, blocks_count = blocks
    n, c = q.size, first.size
    ends = output_offsets(n, 0)
    out = np.empty(ends[-1])
    L, d, buffer = np.zeros((n, n)), np.empty(n), np.empty(0)  # buffer: W's values, grown as needed
    gap, data = np.empty(c), np.zeros(starts[-1])
    u_before, u_free, u_next = np.empty(3 * c), np.empty(3 * c), np.empty(3 * c)
    for k in range(times.size):
        h = hs[k]
        if joint_terms_into(ints, floats, support, bodies, body_floats, drive, q, v, 0, out) != 0:
            return DECLINED
        M = out[: ends[0]].reshape((n, n))
        if not block_cholesky(M, blocks_start, blocks_count, L, d):
            return DECLINED
        v_free = v + _tree_solves(L, d, blocks, h * (tau - out[ends[1] : ends[2]]))  # M Δv = h (τ − h(q, v))
        forest_plane_rows(*model, q, v, forest, starts, gap, data)
        _local_velocities(data, starts, first, count, v, u_before)
        _local_velocities(data, starts, first, count, v_free, u_free)
        active = closing_contacts(gap, u_before[0::3], u_free[0::3], h)
        solved, v_next, impulses, sweeps, buffer = _step_impulses(
            active, data, starts, first, count, L, d, gap, u_before, u_free, mu, e, settings, h, warm, v_free, buffer
        )
        if not solved:
            return DECLINED
        q_next = q + h * v_next
        if not (np.all(np.isfinite(q_next)) and np.all(np.isfinite(v_next))):
            return DECLINED
        if not _rotations_in_chart(rotations, q_next):
            return DECLINED
        if record[k]:
            a = (v_next - v) / h
            _local_velocities(data, starts, first, count, v_next, u_next)
            work = impulse_work(impulses.ravel(), u_free, u_next)
            _record(rows, counters[1], times[k], q, v, a, out[ends[5] :], gap, impulses, u_before, sweeps, work)
            counters[1] += 1
        q[:] = q_next
        v[:] = v_next
        warm[:] = impulses
        counters[0] += 1
    return TAKEN


class CompiledContactSteps:
    """The arrays of :func:`rigid_contact_steps` for an assembled system whose steps it can take
    (:meth:`available`), with the contacts' ``frames`` (a :class:`~flexbody.solvers.contact_frames.ContactFrames`)
    and the stepper's ``settings`` (a :class:`~flexbody.solvers.moreau_jean.MoreauJean`)."""

    def __init__(self, asm, frames, settings):
        p = asm.program
        self.program = (p.ints, p.floats, p.support, p.bodies, p.body_floats)
        self.drive = p.drive(0.0)
        self.model, self.forest, self.starts, self.first, self.count = frames.forest_arrays()
        contacts = frames.contacts
        self.mu = np.array([k.mu for k in contacts], dtype=float)
        self.e = np.array([k.e for k in contacts], dtype=float)
        self.basis = np.array([k.plane_basis for k in contacts], dtype=float)
        self.blocks = (
            np.array([asm.offsets[t] for t in asm.trees], dtype=np.int64),
            np.array([t.n_dofs for t in asm.trees], dtype=np.int64),
        )
        self.settings = np.array(
            [settings.tol, float(settings.max_sweeps), settings.penetration_recovery, settings.bounce_speed]
        )
        self.rotations = np.asarray(asm.rotation_vectors, dtype=np.int64)
        self.n, self.c = int(asm.n_dofs), len(contacts)

    @classmethod
    def available(cls, asm, frames) -> bool:
        """Whether the steps of ``asm`` can be compiled: rigid trees alone (no flexible or reduced bodies), a program
        whose every row is compiled, no bilateral rows, no force elements, and every contact a point or ball on a
        link against a plane (``frames`` groups them so)."""
        program = getattr(asm, "program", None)
        return (
            program is not None
            and not program.python_rows
            and not asm.sparse
            and not getattr(asm, "reduced", ())
            and int(asm.n_constraints) == 0
            and not asm.forces
            and frames.all_on_forest
        )

    def step(self, t: float, q, v, tau, h: float, warm) -> tuple | None:
        """One step of size h [s] from (t, q, v) under τ (n,) with the warm start ``warm`` (c, 3) (updated in place
        when it is taken): (v⁺, q⁺, a, impulses (c, 3), gap (c,), local (c, 3), sweeps, the impulses' work [J]), or
        None where the kernel declines it (module docstring)."""
        q, v = np.array(q, dtype=float), np.array(v, dtype=float)
        batch = self.run(np.array([t]), np.array([h]), np.ones(1, dtype=bool), q, v, warm, tau)
        if not batch.accepted:
            return None
        _, _, _, a, _, _, gap, impulses, local, sweeps, work = (x[0] for x in batch.rows)
        return v, q, a, impulses, gap, local, int(sweeps), float(work)

    def run(self, times: np.ndarray, hs: np.ndarray, record: np.ndarray, q, v, warm, tau) -> ContactBatch:
        """Steps at ``times`` (K,) of sizes ``hs`` (K,), recording where ``record`` (K,) bool, from (q, v) with the
        warm start ``warm`` (c, 3) under the held τ (n,), all three updated in place (module docstring)."""
        n, c, count = self.n, self.c, int(np.count_nonzero(record))
        rows = (
            np.empty(count),
            np.empty((count, n)),
            np.empty((count, n)),
            np.empty((count, n)),
            np.empty(count),
            np.empty(count),
            np.empty((count, c)),
            np.empty((count, c, 3)),
            np.empty((count, c, 3)),
            np.empty(count, dtype=np.int64),
            np.empty(count),
        )
        counters = np.zeros(2, dtype=np.int64)
        status = rigid_contact_steps(
            self.program,
            self.drive,
            self.model,
            self.forest,
            self.starts,
            self.first,
            self.count,
            self.blocks,
            self.mu,
            self.e,
            self.settings,
            self.rotations,
            np.asarray(tau, dtype=float),
            times,
            hs,
            record,
            q,
            v,
            warm,
            rows,
            counters,
        )
        return ContactBatch(int(status), int(counters[0]), tuple(x[: counters[1]] for x in rows))
