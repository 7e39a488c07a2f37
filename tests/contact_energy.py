"""The check that contacts never give energy (#34: "energy never grows at contact, e ≤ 1, μ ≥ 0, on every test"),
which ``conftest.py`` applies to every nonsmooth run of the suite (each run of
:func:`flexbody.solvers.moreau_jean.run_moreau_jean`, from ``fb.simulate``, the command line or a case).

A nonsmooth step's impulses p change the velocity from the free one v_f to v⁺; the energy they give is the
recorded "contact_work" pᵀ G (v_f + v⁺)/2 = ½ v⁺ᵀ A v⁺ − ½ v_fᵀ A v_f
(:class:`flexbody.solvers.contact_step.ContactStep`). Gaps closing within the step and Coulomb friction take energy;
so does a frictionless impact under Newton's law with e ≤ 1 (one contact: −(1 − e²) u⁻²/2W), while a frictional
impact with e > 0 is not bound to (Kane's example; Glocker 2013, energetic consistency of Newton-type impact laws) —
hence a check on every run. Pushing a penetration out (``MoreauJean.penetration_recovery``, where a gap at the
step's start lies below :data:`~flexbody.solvers.contact_set.SHALLOW`) gives energy by design. The rest of a step's
energy change is its smooth part's (semi-implicit Euler on the trees, the flexible bodies' linearly implicit
stiffness), not the contacts'."""

import numpy as np

from flexbody.solvers.contact_set import SHALLOW

ROUND_OFF = 1e-12
"""Contact work [J] per joule of the run's largest |energy| (at least 1 J) that counts as round-off."""


def assert_contacts_give_no_energy(times, histories) -> None:
    """AssertionError naming the first step whose contact impulses gave energy, in a run (its ``times`` and
    ``histories``, as Results has them) with unilateral contacts, except in steps that push a penetration out (a gap
    at the step's start below −SHALLOW; in a system with compliant contacts too, theirs count); nothing for other
    runs."""
    if "contact_work" not in histories:
        return
    work = np.asarray(histories["contact_work"], dtype=float)
    gaps = np.asarray(histories["contact_gap"], dtype=float).reshape(len(work), -1) if len(work) else np.zeros((0, 0))
    pushing_out = gaps.min(axis=1, initial=np.inf) < -SHALLOW
    scale = max(1.0, float(np.abs(np.asarray(histories.get("energy", [0.0]))).max()))
    gave = np.flatnonzero((work > ROUND_OFF * scale) & ~pushing_out)
    assert not gave.size, (
        f"the contacts gave {work[gave[0]]:.3g} J in the step from t = {times[gave[0]]:.9g} s "
        f"({gave.size} such steps, none pushing a penetration out)"
    )
