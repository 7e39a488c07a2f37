"""One step of the nonsmooth (Moreau–Jean) time stepper on the one sparse rigid–flexible system with unilateral
contacts (:class:`~flexbody.constraints.unilateral_contact.Contact`), bilateral rows and force elements.

With f = τ − h(q, v) the applied minus the velocity and gravity terms (h = b + g − Q, [DE-7]), the step of size h
from (qₙ, vₙ) is, in impulses (Moreau 1988; Jean 1999; Anitescu & Potra 1997 for the positions and the gap):

    A Δv = h fₙ − κ θ h² K vₙ + Φᵀ Λ + Σ_c G_cᵀ p_c,     A = M + h C + θ h² K,
    Φ v⁺ + φ_t = 0,      contacts: the Signorini–Coulomb law of :mod:`flexbody.solvers.coulomb_problem`,
    v⁺ = vₙ + Δv,        qₙ₊₁ = qₙ + h v⁺,

K and C the symmetric parts of ∂h/∂q and ∂h/∂v of the flexible bodies and of the force elements on their nodes (so
their stiffness is linearly implicit: the internal force taken at qₙ + θ h v⁺). With q⁺ = q + h v⁺ this is
semi-implicit Euler plus a stiffness-proportional damping θ h K: a Kelvin–Voigt material of retardation time θ h,
which damps a mode of frequency ω by θ h² ω²/2 per step and shortens the rebound of an elastic impact lasting t_c by
about √(8 θ h/(π t_c)) (docs/verification.md, the bar's impact). That is κ = 1 (``numerical_damping``, the default,
under which the energy of the flexible bodies never grows); κ = 0 takes the internal force at qₙ + θ h (v⁺ − vₙ)
instead, which conserves the energy of linear elastic vibrations (the step's amplification has determinant 1, stable
for every step at θ ≥ ¼) and rebounds closer to the elastic limit, but whose recorded energy rises and falls by O(h)
from step to step; κ between them damps by κ θ h² ω²/2 a step. The symmetric parts (the velocity-dependent part of a
Kelvin–Voigt body's ∂h/∂q is not symmetric) keep A symmetric for Cholesky and, since internal forces sum to zero at
every q (1ᵀK = K·1 = 0), keep the momentum that the contacts and loads do not change; the linearisation stays
first-order consistent. A reduced body's modal stiffness and damping are linearly implicit in the same way (its
constant K_r; the geometric stiffening stays explicit). The rigid trees are explicit in their forces (semi-implicit
Euler, as MuJoCo's default). Each contact's normal velocity obeys u_n⁺ ≥ b: b = −g/h while the gap g ≥ 0 may close
within the step (so it lands on the surface, not in it), Newton's b = −e u_n⁻ for an impact (u_n⁻ < 0 and g + h u_n⁻
≤ 0) with restitution e > 0, and b = −β g/h for a penetration deeper than 1 nm (β the ``penetration_recovery`` per
step; a shallower one is closed within the step, as a gap): the
contact set and bounds of :mod:`flexbody.solvers.contact_set`, declared once for this step and the compiled batches
of rigid steps (:mod:`flexbody.solvers.compiled_contact`).

The step solves the saddle-point system [[A, Φᵀ], [Φ, 0]] once for the free velocity and once per contact direction
(columns X of G's rows), forms the Delassus matrix W = G X of the contacts that may close within the step (and of
any contact that the others' impulses then drive through its surface: it joins them and the problem is solved again)
(:mod:`flexbody.solvers.contact_frames` gives every contact's rows at once), and solves the contact problem by
compiled nonsmooth Gauss–Seidel, warm-started from the last step. Where every contact is a flexible node's on a
fixed surface of a model of flexible bodies alone, W comes from the block of A⁻¹ on the contacts' columns
(:mod:`flexbody.linalg.trailing_inverse`, A factored with them last), formed only where the last one no longer
serves: the other steps factor A with CHOLMOD's own ordering and solve their own contact problem on the earlier
block by :mod:`flexbody.solvers.delassus_splitting`.
"""

from __future__ import annotations

import time
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from ..constraints.body_surface import BodySurface
from ..constraints.nodes import Node
from ..errors import ConvergenceError
from ..linalg.csr_products import add_within, symmetric_part
from ..linalg.saddle_point import SaddlePointSolver
from ..linalg.sparse_factor import HAVE_CHOLMOD, CholmodError, SparseFactor
from ..linalg.trailing_inverse import TrailingInverse
from .compiled_contact import CompiledContactSteps
from .contact_frames import ContactFrames
from .contact_set import closing_contacts, driven_through, impulse_work, normal_bounds
from .coulomb_problem import LAW_TOL, solve_coulomb_polished
from .delassus_splitting import solve_coulomb_split

__all__ = ["ContactStepper", "ContactStep"]


class ContactStep(NamedTuple):
    """The outcome of a step: the new velocities ``v`` (n,) and coordinates ``q`` (n,); ``a`` = Δv/h (n,);
    ``lam`` (m,) the bilateral rows' mean multipliers Λ/h [N, N·m]; ``impulses`` (c, 3) the contacts' (p_n, p_t₁,
    p_t₂) [N·s] in their frames (zero when apart); at the step's start the contacts' ``gap`` (c,) [m], frames
    ``basis`` (c, 3, 3) (columns n, t₁, t₂) and ``local`` velocities (c, 3) G vₙ [m/s]; ``sweeps`` of the contact
    solver; ``work`` [J] the energy the contacts' impulses gave in the step, pᵀ G (v_f + v⁺)/2 (v_f the free
    velocity: ½ v⁺ᵀ A v⁺ − ½ v_fᵀ A v_f, the impulses' share of the step's kinetic energy in its metric A; ≤ 0 where
    impacts and friction take energy, > 0 only where a penetration is pushed out)."""

    v: np.ndarray
    q: np.ndarray
    a: np.ndarray
    lam: np.ndarray
    impulses: np.ndarray
    gap: np.ndarray
    basis: np.ndarray
    local: np.ndarray
    sweeps: int
    work: float


class ContactStepper:
    """The step of module docstring for an assembled system ``asm`` and settings (a
    :class:`~flexbody.solvers.moreau_jean.MoreauJean`)."""

    def __init__(self, asm, settings):
        self.asm, self.settings = asm, settings
        self.contacts = list(getattr(asm, "contacts", ()))
        self.frames = ContactFrames(asm, self.contacts)
        self.mu = np.array([c.mu for c in self.contacts], dtype=float)
        self.e = np.array([c.e for c in self.contacts], dtype=float)
        self.warm = np.zeros((len(self.contacts), 3))  # the last step's impulses (warm start)
        self.saddle = SaddlePointSolver(asm.n_rigid)
        self.factor = SparseFactor()  # A alone, without bilateral rows
        self.trailing = _trailing(asm, self.contacts)  # the contacts' block of A⁻¹ at once, where they allow it
        self.lagged_block: np.ndarray | None = None  # the trailing block where it was last formed
        self.refreshes = self.corrections = 0  # trailing blocks formed; corrections of the lagged ones
        self.by_the_law = 0  # contact problems whose sweeps stalled, solved by impulses that meet the law
        self.largest_residual = 0.0  # the largest law residual of those
        self._rigid_pattern: tuple | None = None
        self._A_f = None
        self._direct = self._trailing_now = self._lagging = False
        self.seconds = dict.fromkeys(("step", "contact_rows", "contact_matrix", "contact_solve"), 0.0)
        self.compiled_steps = 0  # steps taken by the compiled kernel (their contact parts are not timed apart)
        compiles = CompiledContactSteps.available(asm, self.frames)
        self.compiled = CompiledContactSteps(asm, self.frames, settings) if compiles else None

    # ------------------------------------------------------------------ the step
    def step(self, ws, tau: np.ndarray, h: float, *, compiled: bool = True) -> ContactStep:
        """The step of size h [s] from the state of the workspace ``ws`` with the applied forces τ (n,), by the compiled
        kernel where the system allows it (and ``compiled``: False for a step it has just declined). Adds the
        wall time [s] of the step and of its contact parts to ``seconds`` ("step", "contact_rows": the frames,
        "contact_matrix": the contact columns and W, "contact_solve": the Gauss–Seidel solver)."""
        start = time.perf_counter()
        if compiled and self.compiled is not None:  # rigid trees, contacts on the forest, no bilateral rows
            taken = self.compiled.step(ws.t, ws.q, ws.v, tau, h, self.warm)
            if taken is not None:
                v_next, q_next, a, impulses, gap, local, sweeps, work = taken
                self.compiled_steps += 1
                self.seconds["step"] += time.perf_counter() - start
                m = self.asm.n_constraints
                basis = self.compiled.basis
                return ContactStep(v_next, q_next, a, np.zeros(m), impulses.copy(), gap, basis, local, sweeps, work)
        asm, theta = self.asm, self.settings.theta
        terms = ws.terms()
        q, v = ws.q, ws.v
        r1 = h * (tau - terms.h)
        stiffness = self._factor(ws, terms, h, theta)
        damping = self.settings.numerical_damping * theta * h * h
        if stiffness is not None:
            fs = asm.flexible.slice
            r1[fs] -= damping * (stiffness @ v[fs])
        for body in asm.reduced:  # a reduced body's modal stiffness, linearly implicit as the flexible bodies'
            ms = asm.slices[body]
            r1[ms] -= damping * (body.stiffness @ v[ms])
        m = terms.Phi.shape[0]
        r2 = -(terms.Phi @ v + terms.phi_t) if m else np.zeros(0)
        dv, y = self._solve(r1, r2)
        v_free = v + dv
        before_rows = time.perf_counter()
        frames = self.frames.at(ws, h, v_free)
        self.seconds["contact_rows"] += time.perf_counter() - before_rows
        u_before, u_free = frames.G @ v, frames.G @ v_free
        impulses, sweeps = np.zeros((len(self.contacts), 3)), 0
        active = closing_contacts(frames.gap, u_before[0::3], u_free[0::3], h)
        v_next, y_next, u_next = v_free, y, u_free
        while active.size:
            p, dv, dy, count = self._contact_solve(ws, frames, active, u_before, u_free, m, h)
            sweeps += count
            v_next, y_next = v_free + dv, y + dy
            u_next = frames.G @ v_next
            impulses[:] = 0.0
            impulses[active] = p.reshape(-1, 3)
            # a contact left out that the others' impulses drive through its surface within the step joins them
            considered = np.zeros(len(self.contacts), dtype=bool)
            considered[active] = True
            joining = driven_through(frames.gap, u_next[0::3], h, considered)
            if not joining.size:
                break
            self.warm[active] = impulses[active]
            active = np.union1d(active, joining)
        self.warm = impulses.copy()
        local = u_before.reshape(-1, 3)
        work = impulse_work(impulses.ravel(), u_free, u_next)
        self.seconds["step"] += time.perf_counter() - start
        return ContactStep(
            v_next,
            q + h * v_next,
            (v_next - v) / h,
            -y_next / h,
            impulses,
            frames.gap,
            frames.basis,
            local,
            sweeps,
            work,
        )

    def _contact_solve(self, ws, frames, active, u_before, u_free, m: int, h: float):
        """(p (3a,), Δv (n,), Δy (m,), sweeps): the impulses of the ``active`` contacts and the velocity and
        multiplier changes they make."""
        start = time.perf_counter()
        rows = (3 * active[:, None] + np.arange(3)).ravel()
        G = frames.G[rows]
        w = u_free[rows]
        beta = self.settings.penetration_recovery
        bounce = self.settings.bounce_speed
        w[0::3] -= normal_bounds(
            frames.gap[active], u_before[3 * active], w[0::3].copy(), self.e[active], beta, h, bounce
        )
        p = self.warm[active].ravel().copy()
        if self._lagging:
            taken = self._lagged_contact_solve(G, w, self.mu[active], p, m, start)
            if taken is not None:
                return taken
            self._refresh()
            start = time.perf_counter()
        if self._trailing_now:  # W = G_c (A⁻¹)_cc G_cᵀ on the contacts' columns (linalg.trailing_inverse)
            self.lagged_block = self.trailing.block()
            W = self._from_block(G, self.lagged_block)
            X = Y = None
        else:
            X, Y = self._solve(G.T.toarray(), np.zeros((m, G.shape[0])))
            W = np.ascontiguousarray(G @ X)
        solving = time.perf_counter()
        self.seconds["contact_matrix"] += solving - start
        solution = solve_coulomb_polished(W, w, self.mu[active], p, self.settings.tol, self.settings.max_sweeps)
        sweeps, change = solution.sweeps, solution.change
        if not solution.solved:
            self.seconds["contact_solve"] += time.perf_counter() - solving
            names = [self.contacts[i].name for i in active]
            raise ConvergenceError(
                f"nonsmooth step at t = {ws.t:.9g} s: the contact problem did not converge in "
                f"{self.settings.max_sweeps} sweeps (last relative change {change:.2e} > tol = "
                f"{self.settings.tol:.1e}, and no impulses met the law to {LAW_TOL:.0e}: the best missed it by "
                f"{solution.residual:.1e}); contacts {names[:5] + (['…'] if len(names) > 5 else [])} "
                f"({len(names)} in the problem)"
                + (
                    "; with restitution on contacts a rigid body presses redundantly (a box on its corners), "
                    "MoreauJean(bounce_speed=...) taking slow impacts inelastic may let it converge"
                    if np.any(self.e[active] > 0.0) and self.settings.bounce_speed == 0.0
                    else ""
                ),
                [change],
            )
        if solution.by_the_law:
            self.by_the_law += 1
            self.largest_residual = max(self.largest_residual, solution.residual)
        if X is None:
            dv, dy = self._solve(G.T @ p, np.zeros(m))
        else:
            dv, dy = X @ p, Y @ p
        self.seconds["contact_solve"] += time.perf_counter() - solving
        return p, dv, dy, sweeps

    def _lagged_contact_solve(self, G, w, mu, p, m: int, start: float):
        """:meth:`_contact_solve` with the trailing block where it was last formed, corrected to this step's A by
        :func:`~flexbody.solvers.delassus_splitting.solve_coulomb_split`; None where the splitting gives up."""
        assert self.lagged_block is not None  # lagging: a block was formed
        W_old = self._from_block(G, self.lagged_block)
        solving = time.perf_counter()
        self.seconds["contact_matrix"] += solving - start
        settings = self.settings
        split = solve_coulomb_split(
            W_old, w, mu, p, lambda x: G @ self.factor.solve(G.T @ x), settings.tol, settings.max_sweeps
        )
        if split is not None:
            dv = self.factor.solve(G.T @ p)
            self.corrections += split.corrections
            self.by_the_law += split.by_the_law
            self.largest_residual = max(self.largest_residual, split.largest_residual)
        self.seconds["contact_solve"] += time.perf_counter() - solving
        return None if split is None else (p, dv, np.zeros(m), split.sweeps)

    def _from_block(self, G, block: np.ndarray) -> np.ndarray:
        """W = G_c B G_cᵀ (3a, 3a) of the contacts' rows G (3a, n) from a block B (k, k) of A⁻¹ on their columns
        (symmetric; linalg.trailing_inverse)."""
        G_c = G[:, self.trailing.last]
        return np.ascontiguousarray(G_c @ (G_c @ block).T)

    def _refresh(self) -> None:
        """Factor this step's A with the contacts' columns last, for its trailing block (the lagged one gave up)."""
        start = time.perf_counter()
        self._lagging, self.lagged_block = False, None
        try:
            self.trailing.factor(self._A_f)
            self._trailing_now = True
            self.refreshes += 1
        except CholmodError:  # not positive definite: the step's factor (its LU fallback) solved for the columns
            self._trailing_now = False
        self.seconds["contact_matrix"] += time.perf_counter() - start

    # ------------------------------------------------------------------ the matrix
    def _factor(self, ws, terms, h: float, theta: float):
        """Factor A = M + h C + θ h² K with the bilateral rows; K (flexible columns) for the right side, or None.
        Without bilateral rows A alone is factored (sparse: the trees' blocks and the flexible part), so that the
        contacts' columns are solved at once."""
        asm, M, Phi = self.asm, terms.M, terms.Phi
        K = A_f = None
        if asm.sparse:
            A_r = M.rigid_block() if asm.n_rigid else np.zeros((0, 0))
            _, K, C = ws.flexible_jacobians(damping=True)
            if any(f.bodies for f in asm.forces.elements):  # force elements on nodes: Q's Jacobians, h = … − Q
                dQ_dq, dQ_dv = asm.forces.jacobians(ws, asm.flexible.slice)
                K = (K - dQ_dq).tocsr()
                C = -dQ_dv if C is None else (C - dQ_dv).tocsr()
            K = symmetric_part(K).tocsr()  # module docstring: the symmetric linearisation
            A_f = add_within(theta * h * h * K, asm.flexible.mass.matrix, 1.0)
            if C is not None:
                A_f = (A_f + h * symmetric_part(C)).tocsr()
        else:
            A_r = np.asarray(M, dtype=float)
        if asm.reduced:
            A_r = A_r.copy()
            for body in asm.reduced:  # θ h² K_r + h D_r on the modal coordinates (D_r = β K_r)
                ms = asm.slices[body]
                A_r[ms, ms] += theta * h * h * body.stiffness + h * body.damping
        self._direct = Phi.shape[0] == 0
        trailing = self._direct and self.trailing is not None and A_f is not None and not A_r.shape[0]
        self._trailing_now = trailing and self.lagged_block is None
        self._lagging, self._A_f = trailing and self.lagged_block is not None, A_f
        if self._trailing_now:
            try:
                self.trailing.factor(A_f)
                self.refreshes += 1
                return K
            except CholmodError:  # not positive definite: the factor below (its LU fallback) and solved columns
                self._trailing_now = False
        if self._direct:
            blocks = ([self._rigid_blocks(A_r)] if A_r.shape[0] else []) + ([A_f] if A_f is not None else [])
            self.factor.factor(blocks[0] if len(blocks) == 1 else sp.block_diag(blocks, format="csc"))
        else:
            self.saddle.factor(A_r, sp.csr_matrix((0, 0)) if A_f is None else A_f, sp.csr_matrix(Phi))
        return K

    def _rigid_blocks(self, A_r: np.ndarray) -> sp.csc_matrix:
        """A_r (n_r, n_r) as CSC on the pattern of its trees' dense blocks (a tree with the reduced bodies on its
        links), which nothing else couples without bilateral rows."""
        if self._rigid_pattern is None:
            asm = self.asm
            groups = [
                np.concatenate(
                    [np.arange(asm.slices[t].start, asm.slices[t].stop)]
                    + [np.arange(asm.slices[b].start, asm.slices[b].stop) for b in asm.reduced if b.tree is t]
                )
                for t in asm.trees
            ]
            rows = np.concatenate([np.repeat(g, g.size) for g in groups])
            cols = np.concatenate([np.tile(g, g.size) for g in groups])
            pattern = sp.csc_matrix((np.arange(rows.size, dtype=float) + 1.0, (rows, cols)), shape=A_r.shape)
            order = pattern.data.astype(np.int64) - 1  # where each stored entry came from
            self._rigid_pattern = (rows[order], cols[order], pattern.indices, pattern.indptr)
        rows, cols, indices, indptr = self._rigid_pattern
        return sp.csc_matrix((A_r[rows, cols], indices, indptr), shape=A_r.shape)

    def _solve(self, r1: np.ndarray, r2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(x, y) of the factored system for one right side r₁ (n,), r₂ (m,) or many, r₁ (n, k), r₂ (m, k)."""
        if self._trailing_now:
            return self.trailing.solve(r1), np.zeros(r2.shape)
        if self._direct:
            return self.factor.solve(r1), np.zeros(r2.shape)
        return self.saddle.solve(r1, r2)


def _trailing(asm, contacts) -> TrailingInverse | None:
    """A :class:`~flexbody.linalg.trailing_inverse.TrailingInverse` on the contacts' node columns where every contact
    is a flexible node's on a fixed surface (its rows on its node's three columns alone) of a model of flexible bodies
    only, with CHOLMOD, and the columns are at most :data:`MAX_TRAILING`; None otherwise (the columns of the contacts
    that may close are then solved for)."""
    fixed_columns = all(type(c.anchor) is Node and not isinstance(c.surface, BodySurface) for c in contacts)
    if not (contacts and fixed_columns and HAVE_CHOLMOD and asm.sparse and asm.n_rigid == 0 and not asm.reduced):
        return None
    first = [asm.offsets[c.anchor.body] + 3 * c.anchor.index for c in contacts]
    columns = np.unique(np.add.outer(first, np.arange(3)).ravel())
    return TrailingInverse(columns) if columns.size <= MAX_TRAILING else None


MAX_TRAILING = 3000
"""The most contact columns taken as a trailing block: its dense k × k inverse costs k³ (about 1 s at 3 000, 0.1 s at
1 230 measured); with more, the columns of the contacts that may close are solved for instead."""
