"""Static equilibrium of flexible bodies with unilateral contacts (:class:`~flexbody.constraints.unilateral_contact.
Contact`): a body resting on, or pressed against, a rigid surface, with or without friction.

At a load factor s the equilibrium with contact forces P (normal p_n and tangential p_t per contact, in the frames of
the nonsmooth stepper's rows G = (N, T), :mod:`flexbody.solvers.contact_frames`) is

    r(q, s) − Gᵀ P = 0   (r = k(q) − s f_ext on the free coordinates, Fix eliminated: the static form of [DE-105]),
    0 ≤ p_n ⊥ g(q) ≥ 0     (Signorini),
    ‖p_t‖ ≤ μ p_n,   Δu_t ≠ 0 ⇒ p_t = −μ p_n Δu_t/‖Δu_t‖   (Coulomb, on the slip Δu_t = T (q − qₙ) of the load step
                                                          from its start qₙ: static friction is incremental).

Each Newton iteration linearises r and g at q and solves the complementarity problem of the increment Δq. Without
friction by a primal–dual active set (:func:`_linearised`): a semismooth Newton method on the Signorini conditions,
which ends in one iteration once the closed set is right. With friction by the nonsmooth Gauss–Seidel solver of the
dynamic steps (:func:`~flexbody.solvers.coulomb_problem.solve_coulomb`, :func:`_with_friction`) on W = G A⁻¹ Gᵀ, the
linearised gaps and slips taking the place of the velocities. A = K + ε I with ε = 1e-8 max diag K (which does not
change the converged equilibrium, only the path to it) keeps A positive definite where only frictionless contacts
hold a body: a motion nothing resists and no load drives (a block on a frictionless floor, sideways) is not taken.

Friction is taken on bodies held by a Fix: on a body held by nothing but its contacts, W's compliance along the
body's free motions is 1/ε, and the Gauss–Seidel solver does not converge on it (in trials: 20 000 sweeps, a block
pushed sideways at 30 % of μN); such contacts are refused, naming them (the nonsmooth stepper brings such systems to
rest).
"""

from __future__ import annotations

import itertools
import logging

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg  # noqa: F401  (sp.linalg)

from ..constraints.base import Fix
from ..constraints.body_surface import BodySurface
from ..constraints.contact_points import contact_histories
from ..errors import ConvergenceError, FlexbodyError
from ..io.results import Results
from ..linalg.sparse_factor import SparseFactor
from ..system.description import System
from .contact_frames import ContactFrames
from .coulomb_problem import solve_coulomb_polished
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
    """Static equilibrium of the flexible bodies of ``system`` (held by Fix or, without friction, by nothing) with
    their contacts, in ``load_steps`` equal increments (a failing one bisected; with friction the increments are the
    load history the answer depends on), as :func:`flexbody.solve_static` returns it, with the contact histories of
    every converged step: "contact_gap" [m], "contact_normal_force" [N], "contact_friction_force" (c, 3) [N, world],
    "contact_slip" ‖T (q − qₙ)‖ the slip of the step [m] and "contact_slip_speed" (zero: static)."""
    settings = settings or NewtonSettings()
    q = system.reference_coordinates() if q_start is None else np.array(q_start, dtype=float)
    if q.shape != (system.n_dofs,) or not np.all(np.isfinite(q)):
        raise FlexbodyError(f"solve_static: q_start must be finite with shape ({system.n_dofs},)")
    _check_held(system)
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


def _check_held(system: System) -> None:
    """FlexbodyError naming the contacts with friction on a body that no Fix holds (module docstring)."""
    held = {c.body for c in system.constraints if isinstance(c, Fix)}
    loose = []
    for c in system.contacts:
        bodies = [getattr(c.anchor, "body", None)] + ([c.surface.body] if isinstance(c.surface, BodySurface) else [])
        if c.mu > 0.0 and any(b not in held for b in bodies):
            loose.append(c.name)
    if loose:
        raise FlexbodyError(
            f"solve_static: contacts {loose[:5]}{' …' if len(loose) > 5 else ''} have friction on a body that no "
            "Fix holds; a static solve takes friction only on bodies held by a Fix (what holds a free body in "
            "place is then the history of its sticking, which it does not know); hold the body with fb.Fix, give "
            "the contacts friction=0.0, or let fb.MoreauJean bring the system to rest"
        )


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
        if contacts.mu.any():
            step[free] = _with_friction(A, r, G, frames.gap, G @ (q - q_n)[free], contacts)
        else:
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


def _with_friction(A, r, G, gap, moved, contacts: _Contacts) -> np.ndarray:
    """Δq of the linearised problem with friction (module docstring): the forces P (3c,) in the contacts' frames
    solve the Signorini–Coulomb problem u = W P + w of :func:`~flexbody.solvers.coulomb_problem.solve_coulomb`
    with W = G A⁻¹ Gᵀ and w = G A⁻¹(−r) + (g, s_t): u_n the linearised gap, u_t the linearised slip since the load
    step's start (T the tangential rows of ``moved`` (3c,) = G (q − qₙ)); then Δq = A⁻¹(−r + Gᵀ P). The forces go
    into ``contacts.p``."""
    factor = SparseFactor().factor(sp.csc_matrix(A))
    X = factor.solve(G.T.toarray())  # A⁻¹ Gᵀ (n_f, 3c)
    free_motion = factor.solve(-r)
    W = np.ascontiguousarray(G @ X)
    w = G @ free_motion
    w[0::3] += gap
    w[1::3] += moved[1::3]
    w[2::3] += moved[2::3]
    P = contacts.p.ravel().copy()
    solution = solve_coulomb_polished(W, w, contacts.mu, P, COULOMB_TOL, MAX_SWEEPS)
    if not solution.solved:
        raise ConvergenceError(
            f"the contact problem with friction did not converge in {MAX_SWEEPS} sweeps (last relative change "
            f"{solution.change:.2e}, the law missed by {solution.residual:.1e})",
            [],
        )
    contacts.p[:] = P.reshape(-1, 3)
    return free_motion + X @ P


COULOMB_TOL, MAX_SWEEPS = 1e-13, 20000
"""Relative change of the contact forces at which a linearised problem with friction is solved, and the most
Gauss–Seidel sweeps it may take."""

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
    friction = np.array([np.einsum("cij,cj->ci", frames.basis[:, :, 1:], p[:, 1:]) for *_, frames, p in points])
    slip = [np.zeros(normal.shape[1])]
    for (_, q_before, *_), (_, q, _, frames, _) in itertools.pairwise(points):
        moved = frames.G @ (q - q_before)
        slip.append(np.hypot(moved[1::3], moved[2::3]))
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
            **contact_histories(gaps, normal, friction, np.zeros_like(normal)),  # static: no slip speed
            "contact_slip": np.array(slip),
        },
        metadata={"solver": "Newton with the contact problem per iteration", "stable": None},
    )
