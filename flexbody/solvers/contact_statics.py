"""Static equilibrium of flexible bodies with frictionless unilateral contacts (:class:`~flexbody.constraints.
unilateral_contact.Contact` with friction 0): a body resting on, or pressed against, a rigid surface.

At a load factor s the equilibrium with normal contact forces p (the normal rows N of the nonsmooth stepper's G,
:mod:`flexbody.solvers.contact_frames`) is

    r(q, s) − Nᵀ p = 0   (r = k(q) − s f_ext on the free coordinates, Fix eliminated: the static form of [DE-105]),
    0 ≤ p ⊥ g(q) ≥ 0     (Signorini).

Each Newton iteration linearises r and g at q and solves the linear complementarity problem of the increment by a
primal–dual active set (:func:`_linearised`): a semismooth Newton method on the Signorini conditions, which ends
in one iteration once the closed set is right. A = K + ε I with ε = 1e-8 max diag K (which does not change the
converged equilibrium, only the path to it) keeps A positive definite where only contacts hold a body: a motion
nothing resists and no load drives (a block on a frictionless floor, sideways) is not taken.

Friction is refused: static friction depends on the load history (incremental stick and slip), and a primal–dual
active set for it cycled between states in trials near lift-off (a block pushed sideways at 70 % of μN); the
nonsmooth stepper brings such systems to rest.
"""

from __future__ import annotations

import logging

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg  # noqa: F401  (sp.linalg)

from ..constraints.contact_points import contact_histories
from ..errors import ConvergenceError, FlexbodyError
from ..io.results import Results
from ..linalg.sparse_factor import SparseFactor
from ..system.description import System
from .contact_frames import ContactFrames
from .equilibrium_path import EquilibriumPath
from .load_increments import LoadIncrements
from .newton_settings import NewtonSettings

log = logging.getLogger(__name__)

__all__ = ["solve_contact_static"]

SHIFT = 1e-8
"""ε of A = K + ε max diag(K) I (module docstring)."""


class _Contacts:
    """The contacts of a static solve: their frames at q, the last forces (c, 3) (the next solve's warm start) and
    the gap tolerance [m]."""

    def __init__(self, system: System):
        self.asm = system.assemble()
        self.frames = ContactFrames(self.asm, self.asm.contacts)
        self.mu = np.array([c.mu for c in self.asm.contacts], dtype=float)
        self.p = np.zeros((len(self.asm.contacts), 3))
        positions = np.asarray(self.asm.q0, dtype=float).reshape(-1, 3)
        self.length = float(np.ptp(positions, axis=0).max())  # [m] the model's size, for the gap tolerance

    def at(self, q: np.ndarray, reach: np.ndarray):
        """The frames at q; a mesh exact within the nodes' ``reach`` (n,) [m] (the last increment)."""
        return self.frames.at(self.asm.workspace(0.0, q, reach), 0.5)


def solve_contact_static(
    system: System, *, load_steps: int = 1, settings: NewtonSettings | None = None, q_start=None
) -> Results:
    """Static equilibrium of the flexible bodies of ``system`` (held by Fix or by nothing) with their contacts, in
    ``load_steps`` equal increments (a failing one bisected), as :func:`flexbody.solve_static` returns it, with the
    contact histories of every converged step: "contact_gap" [m], "contact_normal_force" [N],
    "contact_friction_force" (c, 3) and "contact_slip_speed" (zero: frictionless, and static)."""
    settings = settings or NewtonSettings()
    q = system.reference_coordinates() if q_start is None else np.array(q_start, dtype=float)
    if q.shape != (system.n_dofs,) or not np.all(np.isfinite(q)):
        raise FlexbodyError(f"solve_static: q_start must be finite with shape ({system.n_dofs},)")
    rough = [c.name for c in system.contacts if c.mu > 0.0]
    if rough:
        raise FlexbodyError(
            f"solve_static: contacts {rough[:5]}{' …' if len(rough) > 5 else ''} have friction, which a static "
            "solve does not take yet (static friction depends on the load history); give them friction=0.0 for "
            "statics, or let fb.MoreauJean bring the system to rest"
        )
    path, contacts = EquilibriumPath(system, settings), _Contacts(system)
    points: list = [(0.0, q.copy(), [], contacts.at(q, np.zeros_like(q)), contacts.p.copy())]
    s_done, steps = 0.0, LoadIncrements(load_steps, settings.max_bisections)
    while s_done < 1.0 - 1e-14:
        s_next = steps.target(s_done)
        warm = contacts.p.copy()
        try:
            q_new, history, frames = _newton(path, contacts, points[-1][1], s_next, settings)
        except ConvergenceError as exc:
            contacts.p = warm
            if not steps.failed(s_done):
                raise ConvergenceError(
                    f"solve_static: no equilibrium with the contacts at load factor {s_next:.6g} after "
                    f"{settings.max_bisections} bisections (last converged {s_done:.6g}): {exc.reason}",
                    exc.residual_history,
                    last_good=_results(system, points),
                ) from None
            continue
        steps.converged(len(history) - 1)
        points.append((s_next, q_new, history, frames, contacts.p.copy()))
        s_done = s_next
    return _results(system, points)


def _newton(path: EquilibriumPath, contacts: _Contacts, q_n: np.ndarray, s: float, settings: NewtonSettings):
    """Newton iterations (module docstring) at load factor s from the step's start q_n: (q, residual history, the
    frames at q), or ConvergenceError."""
    free, p = path.free, contacts.p
    q, history, step = path.place(q_n, s), [], np.zeros(q_n.size)
    for _ in range(settings.max_iterations + 1):
        r, K, _, tolerance = path.terms(q, s)
        frames = contacts.at(q, np.abs(step))
        G = frames.G[:, free].tocsr()
        residual = r - G.T @ p.ravel()
        history.append(float(np.linalg.norm(residual)))
        if not np.isfinite(history[-1]):
            raise ConvergenceError(f"non-finite residual at load factor {s:.6g}", history)
        if history[-1] <= tolerance and _complementary(frames.gap, p, settings.tol * contacts.length):
            return q, history, frames
        shift = SHIFT * float(np.abs(K.diagonal()).max())
        A = (K + shift * sp.identity(K.shape[0], format="csr")).tocsr()
        step = np.zeros(q.size)
        step[free] = _linearised(A, r, G, frames.gap, contacts)
        q = q + step
    raise ConvergenceError(
        f"Newton with contacts did not converge in {settings.max_iterations} iterations at load factor {s:.6g}", history
    )


def _linearised(A, r, G, gap, contacts: _Contacts) -> np.ndarray:
    """Δq of the linearised problem (module docstring) by a primal–dual active set (Hintermüller, Ito & Kunisch
    2002): a contact is closed where p̂ = p_n − c u_n > 0 for its last force p_n and linearised gap u_n (c a nodal
    stiffness), and holds u_n = 0 (its normal row in one sparse saddle-point system solved by LU); repeated until the
    closed set agrees with what it gives. The forces go into ``contacts.p``."""
    p, c = contacts.p, float(np.abs(A.diagonal()).mean())
    normal = G[0::3]
    closed = p[:, 0] - c * gap > 0.0
    for _ in range(MAX_STATES):
        dq, forces = _solve_closed(A, r, normal, gap, closed)
        now = forces - c * (gap + normal @ dq) > 0.0
        if np.array_equal(now, closed):
            p[:] = 0.0
            p[:, 0] = forces
            return dq
        closed = now
    names = [contacts.asm.contacts[i].name for i in np.flatnonzero(closed)[:5]]
    raise ConvergenceError(f"the closed contacts ({names}, …) did not settle in {MAX_STATES} updates", [])


MAX_STATES = 100
"""Updates of the closed set in one linearised problem before it fails."""


def _solve_closed(A, r, normal, gap, closed):
    """(Δq, normal forces (c,)) of A Δq = −r + N_cᵀ p_c with N_c Δq = −g_c on the ``closed`` contacts' normal rows
    N_c."""
    forces = np.zeros(gap.size)
    if not closed.any():
        return SparseFactor().factor(sp.csc_matrix(A)).solve(-r), forces
    N = normal[np.flatnonzero(closed)]
    matrix = sp.bmat([[A, -N.T], [N, None]], format="csc")
    solution = sp.linalg.splu(matrix).solve(np.concatenate([-r, -gap[closed]]))
    forces[closed] = solution[A.shape[0] :]
    return solution[: A.shape[0]], forces


def _complementary(gap: np.ndarray, p: np.ndarray, tol: float) -> bool:
    """No contact penetrates by more than ``tol`` [m], and every pressing one is closed within it."""
    return bool(np.all(gap >= -tol) and np.all(np.abs(gap[p[:, 0] > 0.0]) <= tol))


def _results(system: System, points: list) -> Results:
    """Static Results of the converged points (s, q, history, frames, forces (c, 3)), the start first."""
    gaps = np.array([frames.gap for *_, frames, _ in points])
    normal = np.array([p[:, 0] for *_, p in points])
    iterations = [max(len(h) - 1, 0) for _, _, h, _, _ in points]
    return Results(
        kind="static",
        times=np.array([s for s, *_ in points]),
        q=np.vstack([q for _, q, *_ in points]),
        slices={b.name: system.body_slice(b) for b in system.bodies},
        iterations=iterations,
        residuals=[list(h) for _, _, h, _, _ in points],
        reference=system.reference_coordinates(),
        system=system,
        histories={
            "newton_iterations": np.array(iterations, dtype=float),
            "residual": np.array([h[-1] if h else 0.0 for _, _, h, _, _ in points]),
            **contact_histories(gaps, normal, np.zeros((*normal.shape, 3)), np.zeros_like(normal)),  # frictionless
        },
        metadata={"solver": "Newton with the contact problem per iteration", "stable": None},
    )
