"""The contacts that touch at a controller's state and their acceleration rows, for the contact actuation problem
(:mod:`flexbody.control.contact_wrench`) and the controllers that act through contact
(:mod:`flexbody.control.contact_control`).

A contact touches where its gap lies within ``touching`` of zero. Its rows in the contact frame [n, t₁, t₂] are
G a + γ (3,) (:meth:`~flexbody.constraints.unilateral_contact.Contact.acceleration_bias`): the normal entry is the
gap's second derivative, the tangent entries the contact point's tangential acceleration. It slides where its slip
speed ‖u_t‖ = ‖G_t v‖ exceeds :data:`STICKING`, in the direction û = u_t/‖u_t‖; otherwise it sticks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from ..errors import FlexbodyError

if TYPE_CHECKING:
    from ..dynamics.results import ForwardResult
    from .context import ControlContext

__all__ = ["TouchingContacts", "touching_contacts", "measured_normal_forces", "TOUCHING", "PRESSING_GAP", "STICKING"]

TOUCHING = 1e-6
"""A contact whose gap lies within this [m] of zero touches."""

PRESSING_GAP = 1e-4
"""A contact whose force a plant measured at the last step touches while its gap lies within this [m] of zero."""

STICKING = 1e-8
"""A touching contact whose slip speed ‖u_t‖ is at most this [m/s] sticks; faster, it slides."""


def measured_normal_forces(measurement: ForwardResult, model) -> dict[str, float] | None:
    """The normal forces [N] the plant measured over its last step (``measurement.contact_forces``, in the order of
    ``model``'s contacts), by contact name; None where the plant measured none (a stepper other than MoreauJean)."""
    forces = getattr(measurement, "contact_forces", None)
    if forces is None:
        return None
    return {contact.name: float(force) for contact, force in zip(getattr(model, "contacts", ()), forces[:, 0])}


class TouchingContacts(NamedTuple):
    """The touching contacts at a state: the ``contacts`` and their ``names`` (c,), their rows G (3c, n) and biases
    γ (3c,) (entries 3i, 3i + 1, 3i + 2: normal, t₁, t₂ of contact i), friction coefficients ``mu`` (c,), local slip
    velocities ``slip`` (c, 2) [m/s] and which of them slide (c,) bool."""

    contacts: tuple
    names: tuple
    G: np.ndarray
    gamma: np.ndarray
    mu: np.ndarray
    slip: np.ndarray
    sliding: np.ndarray

    @property
    def normal_rows(self) -> np.ndarray:
        """Indices (c,) of the normal rows in G."""
        return 3 * np.arange(len(self.contacts))

    @property
    def held_rows(self) -> np.ndarray:
        """Indices of the rows a controller holds at zero acceleration: every normal row, and the tangent rows of the
        contacts that stick."""
        sticking = np.flatnonzero(~self.sliding)
        return np.sort(np.concatenate([self.normal_rows, 3 * sticking + 1, 3 * sticking + 2]))

    def slip_direction(self, i: int) -> np.ndarray:
        """û (2,) of a sliding contact i in its tangent frame (zero where it sticks, or slides without a direction:
        a controller's frictionless trial)."""
        speed = float(np.hypot(*self.slip[i]))
        return self.slip[i] / speed if self.sliding[i] and speed > 0.0 else np.zeros(2)


def touching_contacts(
    ctx: ControlContext, names=None, touching: float = TOUCHING, pressing: frozenset = frozenset()
) -> TouchingContacts:
    """The model's contacts (those named in ``names``, default all) that touch at the context's state: their gap
    within ``touching`` of zero, or, for those named in ``pressing`` (a plant measured their force), within
    :data:`PRESSING_GAP` (a time stepper leaves a pressed contact's gap at O(h² v²/ρ), the curvature of the contact
    point's path in a step)."""
    model_contacts = list(getattr(ctx.model, "contacts", ()))
    if names is not None:
        known = {c.name for c in model_contacts}
        unknown = sorted(set(names) - known)
        if unknown:
            raise FlexbodyError(f"contacts {unknown} are not the model's (it has {sorted(known)})")
        model_contacts = [c for c in model_contacts if c.name in set(names)]
    contacts = [
        c
        for c in model_contacts
        if abs(c.gap(ctx.ev)) <= (max(touching, PRESSING_GAP) if c.name in pressing else touching)
    ]
    n, c = ctx.n, len(contacts)
    G, gamma, slip = np.zeros((3 * c, n)), np.zeros(3 * c), np.zeros((c, 2))
    for i, contact in enumerate(contacts):
        frame, gamma[3 * i : 3 * i + 3] = contact.acceleration_bias(ctx.ev)
        G[3 * i : 3 * i + 3, frame.cols] = frame.G
        slip[i] = frame.G[1:] @ ctx.v[frame.cols]
    return TouchingContacts(
        tuple(contacts),
        tuple(contact.name for contact in contacts),
        G,
        gamma,
        np.array([float(contact.mu) for contact in contacts]),
        slip,
        np.hypot(slip[:, 0], slip[:, 1]) > STICKING,
    )
