"""The rank check of one actuation map [DE 5.3]: its singular values, the tolerance they are judged by and, when it
fails, the reason (:class:`MapCheck`), for :func:`~flexbody.control.actuation.actuation_report` and the controllers.

How the tolerances scale. A singular value carries the units of its map, so a tolerance relative to the
map's own σ_max cannot see a map that is uniformly tiny: the direct map of a task on a flexible node has
σ ≈ 1e-9 1/m at 12 elements from the actuated joints, only the consistent mass coupling of the beam,
whose torques for a unit task force would be ~1e9 times those of full actuation [DE 6.3]. The actuation
maps (direct, minimal) are therefore measured against the same map with *every* coordinate actuated
(S = I: J̄ᵀΘᵀ, J̄_pᵀCᵀ), which has the same units and the size of the task's full authority:

    tol = max(AUTHORITY_RTOL · σ_ref, MAP_ATOL),   σ_ref = σ_max(map with S = I) ≥ σ_max(map),

and a direction whose singular value is below it counts as not actuated (the actuators reach it with
less than a millionth of the authority of full actuation). AUTHORITY_RTOL = 1e-6 lies far above
round-off (≈ 1e-16·σ_ref), so the verdict does not hinge on rounding. Kept directions with σ below
AUTHORITY_ILL·σ_ref are flagged ill-conditioned (torques over 1000 times those of full actuation).
Maps that are not actuation maps (J̌ = [J; Φ], S̃Φᵀ) keep tol = max(MAP_RTOL·σ_max, MAP_ATOL), a
round-off test, and the flag σ_min < ILL_CONDITIONED·σ_max; the dimensionless passive maps S̃Φ̂ᵀ and
S̃[Φ̂ᵀ, Ňᵀ] use σ_ref = max(σ_max, 1) and the flag σ_min < NEAR_SINGULAR.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from ..errors import ActuationError
from ..linalg.rank import symmetric_eigen

__all__ = [
    "MAP_RTOL",
    "AUTHORITY_RTOL",
    "MAP_ATOL",
    "AUTHORITY_ILL",
    "ILL_CONDITIONED",
    "NEAR_SINGULAR",
    "ActuationWarning",
    "MapCheck",
    "check_map",
    "check_authority",
    "check_task_map",
    "enforce",
]

MAP_RTOL = 1e-9
"""Relative round-off tolerance of the maps that are not actuation maps: σ ≤ MAP_RTOL·σ_ref counts as zero."""
AUTHORITY_RTOL = 1e-6
"""Relative tolerance of the actuation maps (direct, minimal) against σ_ref, the σ_max of the same map with
every coordinate actuated: σ ≤ AUTHORITY_RTOL·σ_ref counts as not actuated (module docstring)."""
MAP_ATOL = 1e-12
"""Absolute floor on singular values (a map whose entries all vanish has rank 0)."""
AUTHORITY_ILL = 1e-3
"""A kept σ below AUTHORITY_ILL·σ_ref flags an actuation map as ill-conditioned (torques over 1000 times those
of full actuation)."""
ILL_CONDITIONED = 1e-6
"""σ_min/σ_max below this (but above the tolerance) flags one of the other maps as ill-conditioned."""
NEAR_SINGULAR = 0.1
"""For dimensionless maps (``scale=1``: S̃Φ̂ᵀ, S̃[Φ̂ᵀ, Ňᵀ]) σ_min below NEAR_SINGULAR·scale flags the map as
ill-conditioned: the passive-joint correction amplifies the torque it cancels by more than 1/σ_min = 10.
A one-row map (one passive joint) has σ_min = σ_max, so only this absolute test can see it approach
singularity."""


class ActuationWarning(RuntimeWarning):
    """A controller acts through a rank-deficient or ill-conditioned actuation map (``on_deficient="warn"``)."""


@dataclass(frozen=True, eq=False)
class MapCheck:
    """Rank check of one actuation map.

    Attributes
    ----------
    name, source : str — the map (e.g. "J̄ᵀΘᵀSᵀ") and the equation that needs it.
    shape : tuple; required : int — the rank it needs; rank : int.
    singular_values : ndarray, descending; tol : float, σ ≤ tol counts as zero.
    ok : bool; ill_conditioned : bool; reason : str ("" if ok).
    rtol, atol : float — tol = max(rtol·reference, atol).
    reference : float — σ_ref, the scale the tolerance is relative to; ``reference_name`` says what it is
        (the map's own σ_max, the same map with every coordinate actuated, or 1 for dimensionless maps).
    """

    name: str
    source: str
    shape: tuple
    required: int
    rank: int
    singular_values: np.ndarray
    tol: float
    ok: bool
    ill_conditioned: bool
    reason: str = ""
    rtol: float = MAP_RTOL
    atol: float = MAP_ATOL
    reference: float = 0.0
    reference_name: str = "σ_max"

    @property
    def sigma_max(self) -> float:
        """The largest singular value of the map (0 for an empty map)."""
        return float(self.singular_values[0]) if np.size(self.singular_values) else 0.0

    @property
    def sigma_min(self) -> float:
        """The smallest of the ``required`` largest singular values (the one the verdict hinges on)."""
        values = np.asarray(self.singular_values)[: max(self.required, 1)]
        return float(values[-1]) if values.size else 0.0

    def tolerance_text(self) -> str:
        """How ``tol`` was made, e.g. "tol 1.56e-06 = 1e-06 × σ_ref, σ_ref = 1.56 (σ_max of J̄ᵀΘᵀ: every
        coordinate actuated)"."""
        if self.tol <= self.atol:
            floor = self.rtol * self.reference
            return f"tol {self.tol:.3g} = atol (absolute floor; {self.rtol:.0e} × σ_ref = {floor:.3g})"
        return f"tol {self.tol:.3g} = {self.rtol:.0e} × σ_ref, σ_ref = {self.reference:.3g} ({self.reference_name})"

    def __str__(self) -> str:
        values = np.asarray(self.singular_values)
        if values.size > 8:  # flexible systems: the extremes only
            head = np.array2string(values[:3], precision=3)[1:-1]
            tail = np.array2string(values[-3:], precision=3)[1:-1]
            s = f"[{head} … {tail}] ({values.size} values)"
        else:
            s = np.array2string(values, precision=3, max_line_width=200)
        status = "ok" if self.ok else "FAILS"
        extra = " (ill-conditioned)" if self.ok and self.ill_conditioned else ""
        extremes = f"σ_max {self.sigma_max:.3g}, σ_min {self.sigma_min:.3g}" if values.size else "no singular values"
        return (
            f"{self.name} {self.shape}: rank {self.rank} of {self.required} needed [{self.source}] "
            f"{status}{extra}; {extremes}; {self.tolerance_text()}; singular values {s}"
            + (f" — {self.reason}" if self.reason else "")
        )


def check_map(
    name: str,
    A: np.ndarray,
    required: int,
    source: str,
    purpose: str,
    *,
    rtol: float = MAP_RTOL,
    atol: float = MAP_ATOL,
    scale: float | None = None,
    shape: tuple | None = None,
) -> MapCheck:
    """Rank of the map ``A`` against the ``required`` rank, with singular values and a reason on failure.

    The tolerance is max(rtol·σ_ref, atol) with σ_ref = σ_max of ``A``. ``scale`` (1 for dimensionless
    maps) makes σ_ref = max(σ_max, scale) and flags σ_min < NEAR_SINGULAR·scale as ill-conditioned; without
    it the flag is σ_min < ILL_CONDITIONED·σ_max. ``shape`` is the shape reported when ``A`` is the map with
    its zero rows or columns dropped (default ``A.shape``)."""
    A = np.asarray(A, dtype=float)
    s = _singular_values(A)
    top = s[0] if s.size else 0.0
    if scale is not None:
        return _verdict(
            name,
            A,
            s,
            required,
            source,
            purpose,
            rtol,
            atol,
            max(top, scale),
            "max(σ_max, 1): a dimensionless map",
            NEAR_SINGULAR * scale,
            shape,
        )
    return _verdict(name, A, s, required, source, purpose, rtol, atol, top, "σ_max of the map itself", None, shape)


def check_authority(
    name: str,
    A: np.ndarray,
    A_all: np.ndarray,
    required: int,
    source: str,
    purpose: str,
    *,
    reference_name: str,
    singular_values: np.ndarray | None = None,
) -> MapCheck:
    """Rank of the actuation map ``A`` (m_T, k) measured against ``A_all`` (m_T, n), the same map with every
    coordinate actuated (module docstring): tol = max(AUTHORITY_RTOL·σ_ref, MAP_ATOL), σ_ref = σ_max(A_all)
    (never below σ_max(A)); a kept σ below AUTHORITY_ILL·σ_ref flags the map as ill-conditioned.
    ``singular_values`` are those of ``A`` when already computed."""
    A = np.asarray(A, dtype=float)
    s = _singular_values(A) if singular_values is None else singular_values
    gram = A_all @ A_all.T if np.size(A_all) else np.zeros((0, 0))  # (m_T, m_T): σ² of A_all
    top = float(np.sqrt(max(symmetric_eigen(gram, vectors=False)[-1], 0.0))) if gram.size else 0.0
    reference = max(top, s[0] if s.size else 0.0)
    return _verdict(
        name,
        A,
        s,
        required,
        source,
        purpose,
        AUTHORITY_RTOL,
        MAP_ATOL,
        reference,
        f"σ_max of {reference_name}",
        AUTHORITY_ILL * reference,
        None,
    )


def check_task_map(name: str, source: str, mapping, m_T: int) -> MapCheck:
    """The actuation check of a direct or minimal ``mapping`` (:mod:`flexbody.control.maps`) for a task of
    m_T rows: its B against :meth:`full_actuation` (the report and the controllers make the same check)."""
    return check_authority(
        name,
        mapping.B,
        mapping.full_actuation(),
        m_T,
        source,
        "producing every task acceleration with the actuators",
        reference_name=mapping.full_name,
        singular_values=mapping.B_svd[1] if mapping.B.size else None,
    )


def _singular_values(A: np.ndarray) -> np.ndarray:
    return np.linalg.svd(A, compute_uv=False) if A.size else np.zeros(0)


def _verdict(
    name, A, s, required, source, purpose, rtol, atol, reference, reference_name, ill_below, shape
) -> MapCheck:
    """MapCheck with tol = max(rtol·reference, atol); ill-conditioned below ``ill_below`` (None: relative to
    the largest kept σ, ILL_CONDITIONED)."""
    tol = max(rtol * reference, atol)
    above = s > tol
    rank = int(np.count_nonzero(above))
    ok = rank >= required
    kept = s[above][: max(required, 1)]
    limit = ill_below if ill_below is not None else ILL_CONDITIONED * (kept[0] if kept.size else 0.0)
    ill = bool(ok and required and kept.size and kept[-1] < limit)
    reason = ""
    if not ok:
        if A.shape[1] == 0:
            reason = f"{name} has no columns, so {purpose} is impossible"
        else:
            reason = (
                f"{name} has rank {rank} < {required}: {purpose} is impossible here "
                f"({required - rank} direction(s) cannot be reached)"
            )
            if s.size and s[0] > atol and reference > s[0]:
                reason += (
                    f"; its largest singular value is {s[0] / reference:.2g} of σ_ref, so even the best "
                    f"direction needs about {reference / s[0]:.2g} times the effort of full actuation"
                )
    return MapCheck(
        name,
        source,
        tuple(A.shape) if shape is None else tuple(shape),
        int(required),
        rank,
        s,
        float(tol),
        bool(ok),
        ill,
        reason,
        float(rtol),
        float(atol),
        float(reference),
        reference_name,
    )


def enforce(check: MapCheck, on_deficient: str, who: str, labels: str = "") -> None:
    """Raise ActuationError (or warn) if ``check`` fails; warn if it is ill-conditioned."""
    if check.ok:
        if check.ill_conditioned:
            warnings.warn(f"{who}: {check}", ActuationWarning, stacklevel=3)
        return
    message = f"{who}: {check}{labels}"
    if on_deficient == "warn":
        warnings.warn(message, ActuationWarning, stacklevel=3)
        return
    raise ActuationError(message, check)
