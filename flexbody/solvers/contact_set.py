"""Which contacts a nonsmooth step considers, the bound on their normal velocities, and the energy their impulses give
(:func:`impulse_work`): declared once, compiled, and
called by the Python step (:class:`~flexbody.solvers.contact_step.ContactStepper`) and by the compiled batches of
rigid steps (:mod:`flexbody.solvers.compiled_contact`).

A contact enters the step when its gap g may close within it, under the motion before the step or without the
contacts, with a step's margin: g ≤ 2 h max(0, −min(u_n⁻, u_n^free)). One left out joins when the others' impulses
drive it through its surface within the step: g + h u_n⁺ < 0. Each considered contact's normal velocity obeys
u_n⁺ ≥ b with b = −g/h while g ≥ −:data:`SHALLOW` (it lands on the surface, not in it), b = −β g/h for a deeper
penetration (β the ``penetration_recovery`` per step), and Newton's b = max(b, −e u_n⁻) for an impact (u_n⁻ < 0 and
g + h u_n⁻ ≤ 0) with restitution e > 0 (Moreau 1988; Anitescu & Potra 1997 for the gap) that approaches faster than the
``bounce_speed`` and than the step's own forces change the contact's normal velocity by, |u_n^free − u_n⁻|. Slower
impacts are inelastic: the step cannot tell them from those forces' work within it (a body resting under gravity
meets its surface at g h every step), and Newton's law at such simultaneous impacts of a rigid body on redundant
contacts — a box rocking to rest on its corners — raised its energy (by 3.5e-6 J of 2 J, its corners striking while
others lifted) and set bounds that no one velocity meets, which stalled the contact problem (docs/verification.md).
"""

from __future__ import annotations

import numba as nb
import numpy as np

__all__ = ["closing_contacts", "normal_bounds", "driven_through", "impulse_work"]


SHALLOW = 1e-9
"""[m] A penetration shallower than this is removed within the step, as a gap is closed (b = −g/h on both sides of
zero): the bound is then one linear function of the gap where a resting body's gaps are round-off of either sign,
so that the bounds of a rigid body resting on redundant contacts are one rigid velocity's (with β g/h below zero
and g/h above, corners at ±1e-11 m set bounds no velocity met by 3e-7 of the velocities, and the contact problem
stalled)."""


@nb.njit(cache=True)
def closing_contacts(gap, approach, free, h):
    """Indices (ascending) of the contacts whose gap (c,) [m] may close within the step of h [s] under the normal
    velocities ``approach`` (c,) before the step or ``free`` (c,) without the contacts [m/s]."""
    chosen = np.empty(gap.size, dtype=np.int64)
    count = 0
    for i in range(gap.size):
        if gap[i] <= 2.0 * h * max(0.0, -min(approach[i], free[i])):
            chosen[count] = i
            count += 1
    return chosen[:count]


@nb.njit(cache=True)
def normal_bounds(gap, approach, free, e, beta, h, bounce):
    """b (a,) of the considered contacts' normal velocities u_n⁺ ≥ b (module docstring) from their gaps (a,) [m],
    normal velocities before the step ``approach`` (a,) and without the contacts at its end ``free`` (a,) [m/s],
    restitutions ``e`` (a,), β and the ``bounce`` speed [m/s] below which an impact is inelastic. An impact slower
    than the step's own forces change the contact's normal velocity by, |u_n^free − u_n⁻|, is inelastic too."""
    b = np.empty(gap.size)
    for i in range(gap.size):
        b[i] = -gap[i] / h if gap[i] >= -SHALLOW else -beta * gap[i] / h
        slowest = max(bounce, abs(free[i] - approach[i]))
        if e[i] > 0.0 and approach[i] < -slowest and gap[i] + h * approach[i] <= 0.0:  # it strikes within the step
            b[i] = max(b[i], -e[i] * approach[i])
    return b


@nb.njit(cache=True)
def driven_through(gap, normal, h, considered):
    """Indices (ascending) of the contacts not ``considered`` (c,) bool whose gap (c,) [m] the normal velocities
    after the step ``normal`` (c,) [m/s] close within it (they join the considered ones)."""
    chosen = np.empty(gap.size, dtype=np.int64)
    count = 0
    for i in range(gap.size):
        if not considered[i] and gap[i] + h * normal[i] < 0.0:
            chosen[count] = i
            count += 1
    return chosen[:count]


@nb.njit(cache=True)
def impulse_work(impulses, u_free, u_next) -> float:
    """The energy [J] the step's contact impulses p (3c,) gave: pᵀ(u_f + u⁺)/2 = ½v⁺ᵀAv⁺ − ½v_fᵀAv_f, with u_f and u⁺
    (3c,) the contacts' local velocities G v_f and G v⁺ of the free and the final velocity (A the step's matrix)."""
    total = 0.0
    for i in range(impulses.size):
        total += impulses[i] * (u_free[i] + u_next[i])
    return 0.5 * total
