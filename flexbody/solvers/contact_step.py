"""One step of the nonsmooth (Moreau–Jean) time stepper on the one sparse rigid–flexible system with unilateral
contacts (:class:`~flexbody.constraints.unilateral_contact.Contact`), bilateral rows and force elements.

With f = τ − h(q, v) the applied minus the velocity and gravity terms (h = b + g − Q, [DE-7]), the step of size h
from (qₙ, vₙ) is, in impulses (Moreau 1988; Jean 1999; Anitescu & Potra 1997 for the positions and the gap):

    A Δv = h fₙ − θ h² K vₙ + Φᵀ Λ + Σ_c G_cᵀ p_c,     A = M + h C + θ h² K,
    Φ v⁺ + φ_t = 0,      contacts: the Signorini–Coulomb law of :mod:`flexbody.solvers.coulomb_problem`,
    v⁺ = vₙ + Δv,        qₙ₊₁ = qₙ + h v⁺,

K = ∂h/∂q and C = ∂h/∂v of the flexible bodies and of the force elements on their nodes (exact, so their
stiffness is linearly implicit: the internal force taken at qₙ + θ h v⁺ — θ = ½ damps a mode of period T by
O((h/T)²) per step, θ = 1 more), the rigid trees explicit in their forces (semi-implicit Euler, as MuJoCo's
default). Each contact's normal velocity obeys u_n⁺ ≥ b: b = −g/h while the gap g ≥ 0 may close within the
step (so it lands on the surface, not in it), Newton's b = −e u_n⁻ for an impact (u_n⁻ < 0 and g + h u_n⁻ ≤ 0) with
restitution e > 0, and b = −β g/h for a penetration g < 0 (β the ``penetration_recovery`` per step).

The step solves the saddle-point system [[A, Φᵀ], [Φ, 0]] once for the free velocity and once per contact
direction (columns X of G's rows), forms the Delassus matrix W = G X of the contacts that may close within the
step, and solves the contact problem by compiled nonsmooth Gauss–Seidel, warm-started from the last step.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from ..errors import ConvergenceError
from ..linalg.csr_products import add_within
from ..linalg.saddle_point import SaddlePointSolver
from .coulomb_problem import solve_coulomb

__all__ = ["ContactStepper", "ContactStep"]


class ContactStep(NamedTuple):
    """The outcome of a step: the new velocities ``v`` (n,) and coordinates ``q`` (n,); ``a`` = Δv/h (n,);
    ``lam`` (m,) the bilateral rows' mean multipliers Λ/h [N, N·m]; ``impulses`` (c, 3) the contacts' (p_n, p_t₁,
    p_t₂) [N·s] in their frames (zero when apart), ``frames`` their ContactFrames at the step's start, ``local``
    (c, 3) their local velocities G vₙ at the step's start [m/s]; ``sweeps`` of the contact solver."""

    v: np.ndarray
    q: np.ndarray
    a: np.ndarray
    lam: np.ndarray
    impulses: np.ndarray
    frames: list
    local: np.ndarray
    sweeps: int


class ContactStepper:
    """The step of module docstring for an assembled system ``asm`` and settings (a
    :class:`~flexbody.solvers.moreau_jean.MoreauJean`)."""

    def __init__(self, asm, settings):
        self.asm, self.settings = asm, settings
        self.contacts = list(getattr(asm, "contacts", ()))
        self.mu = np.array([c.mu for c in self.contacts], dtype=float)
        self.e = np.array([c.e for c in self.contacts], dtype=float)
        self.warm = np.zeros((len(self.contacts), 3))  # the last step's impulses (warm start)
        self.saddle = SaddlePointSolver(asm.n_rigid)

    # ------------------------------------------------------------------ the step
    def step(self, ws, tau: np.ndarray, h: float) -> ContactStep:
        """The step of size h [s] from the state of the workspace ``ws`` with the applied forces τ (n,)."""
        asm, theta = self.asm, self.settings.theta
        terms = ws.terms()
        q, v = ws.q, ws.v
        r1 = h * (tau - terms.h)
        stiffness = self._factor(ws, terms, h, theta)
        if stiffness is not None:
            fs = asm.flexible.slice
            r1[fs] -= theta * h * h * (stiffness @ v[fs])
        m = terms.Phi.shape[0]
        r2 = -(terms.Phi @ v + terms.phi_t) if m else np.zeros(0)
        dv, y = self._solve(r1, r2)
        v_free = v + dv
        frames = [c.frame(ws) for c in self.contacts]
        impulses, local, sweeps = np.zeros((len(frames), 3)), np.zeros((len(frames), 3)), 0
        active = self._closing(frames, v, v_free, h)
        if active.size:
            G = self._contact_rows(frames, active)
            X, Y = self._solve_columns(G.T.toarray(), m)
            W = G @ X
            u_free = G @ v_free
            w = u_free.copy()
            w[0::3] -= self._bounds(frames, active, G @ v, h)
            p = self.warm[active].ravel().copy()
            sweeps, change = solve_coulomb(
                np.ascontiguousarray(W), w, self.mu[active], p, self.settings.tol, self.settings.max_sweeps
            )
            if not change <= self.settings.tol:
                raise ConvergenceError(
                    f"nonsmooth step at t = {ws.t:.9g} s: the contact problem did not converge in "
                    f"{self.settings.max_sweeps} sweeps (last relative change {change:.2e} > tol = "
                    f"{self.settings.tol:.1e}); contacts {[self.contacts[i].name for i in active]}",
                    [change],
                )
            v_free = v_free + X @ p
            y = y + Y @ p
            impulses[active] = p.reshape(-1, 3)
        self.warm = impulses.copy()
        for i, frame in enumerate(frames):
            local[i] = frame.G @ v[frame.cols]
        return ContactStep(v_free, q + h * v_free, (v_free - v) / h, -y / h, impulses, frames, local, sweeps)

    # ------------------------------------------------------------------ the matrix
    def _factor(self, ws, terms, h: float, theta: float):
        """Factor A = M + h C + θ h² K with the bilateral rows; K (flexible columns) for the right side, or None."""
        asm = self.asm
        M = terms.M
        Phi = terms.Phi
        if not asm.sparse:
            self._dense = None
            if Phi.shape[0] == 0:  # rigid trees alone: A is the mass, Cholesky-factored
                self._dense = sla.cho_factor(np.asarray(M, dtype=float))
                return None
            self.saddle.factor(np.asarray(M, dtype=float), sp.csr_matrix((0, 0)), sp.csr_matrix(Phi))
            return None
        self._dense = None
        _, K, C = ws.flexible_jacobians(damping=True)
        fs = asm.flexible.slice
        if any(f.bodies for f in asm.forces.elements):  # force elements on nodes: Q's Jacobians, h = … − Q
            dQ_dq, dQ_dv = asm.forces.jacobians(ws, fs)
            K = (K - dQ_dq).tocsr()
            C = -dQ_dv if C is None else (C - dQ_dv).tocsr()
        A_f = add_within(theta * h * h * K, asm.flexible.mass.matrix, 1.0)
        if C is not None:
            A_f = (A_f + h * C).tocsr()
        self.saddle.factor(M.rigid_block() if asm.n_rigid else np.zeros((0, 0)), A_f, sp.csr_matrix(Phi))
        return K

    def _solve(self, r1: np.ndarray, r2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if self._dense is not None:
            return sla.cho_solve(self._dense, r1), np.zeros(0)
        return self.saddle.solve(r1, r2)

    def _solve_columns(self, R: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
        """(X (n, k), Y (m, k)) of the saddle-point system for the right sides R (n, k) and zero rows."""
        if self._dense is not None:
            return sla.cho_solve(self._dense, R), np.zeros((0, R.shape[1]))
        X, Y = np.empty_like(R), np.empty((m, R.shape[1]))
        zero = np.zeros(m)
        for j in range(R.shape[1]):
            X[:, j], Y[:, j] = self.saddle.solve(R[:, j], zero)
        return X, Y

    # ------------------------------------------------------------------ the contacts
    def _closing(self, frames, v, v_free, h: float) -> np.ndarray:
        """Indices of the contacts whose gap may close within the step (under the motion before or without the
        contacts, with a step's margin)."""
        closing = []
        for i, frame in enumerate(frames):
            speeds = frame.G[0] @ v[frame.cols], frame.G[0] @ v_free[frame.cols]
            if frame.gap <= 2.0 * h * max(0.0, -min(speeds)):
                closing.append(i)
        return np.array(closing, dtype=np.int64)

    def _contact_rows(self, frames, active) -> sp.csr_matrix:
        """G (3a, n): the local velocity rows of the active contacts."""
        rows, cols, vals = [], [], []
        for k, i in enumerate(active):
            frame = frames[i]
            for axis in range(3):
                rows.append(np.full(frame.cols.size, 3 * k + axis))
                cols.append(frame.cols)
                vals.append(frame.G[axis])
        shape = (3 * active.size, int(self.asm.n_dofs))
        return sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=shape)

    def _bounds(self, frames, active, u_before: np.ndarray, h: float) -> np.ndarray:
        """b (a,) of the normal velocities u_n⁺ ≥ b (module docstring)."""
        beta = self.settings.penetration_recovery
        bounds = np.empty(active.size)
        for k, i in enumerate(active):
            gap, approach = frames[i].gap, u_before[3 * k]
            b = -gap / h if gap >= 0.0 else -beta * gap / h
            if self.e[i] > 0.0 and approach < 0.0 and gap + h * approach <= 0.0:  # it strikes within the step
                b = max(b, -self.e[i] * approach)
            bounds[k] = b
        return bounds
