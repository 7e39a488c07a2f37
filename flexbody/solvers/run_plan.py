"""The plan of a run: one frozen object with everything that defines it — the integrator and its settings, the
time span, the formulation of the dynamics, the constraint stabilisation, the rank tolerances, what is recorded and
how often the run is saved as it goes.

:func:`flexbody.simulate` builds the plan from its arguments (checking each once); the plan's :meth:`RunPlan.metadata`
is what a run records in ``results.json``; :func:`flexbody.resume` rebuilds the plan from those metadata
(:meth:`RunPlan.from_metadata`); one runner (:func:`flexbody.solvers.runner.execute`) runs any plan.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

from ..errors import FlexbodyError
from ..linalg.rank import resolve_tolerances
from .alpha_settings import GeneralizedAlpha
from .explicit import RK4, Adaptive
from .moreau_jean import MoreauJean
from .stabilization import Baumgarte, PositionCorrection
from .start_changes import check_mode

__all__ = ["RunPlan", "IMPLICIT_FORMULATION"]

IMPLICIT_FORMULATION = "index-3 generalized-alpha"
"""The "formulation" a generalized-α run records."""

INTEGRATORS = {"RK4": RK4, "Adaptive": Adaptive, "GeneralizedAlpha": GeneralizedAlpha, "MoreauJean": MoreauJean}
"""The integrators a plan can hold, by the name its metadata record."""


@dataclass(frozen=True, kw_only=True)
class RunPlan:
    """Everything that defines a run of :func:`flexbody.simulate` (see its parameters).

    Attributes
    ----------
    integrator : RK4, Adaptive or GeneralizedAlpha
        The integrator and its settings.
    t0, t_end : float
        The time span [s].
    formulation : str
        The forward-dynamics method of the explicit integrators (:data:`IMPLICIT_FORMULATION` for generalized-α).
    correction : PositionCorrection or None; baumgarte : Baumgarte or None
        The constraint stabilisation of the explicit integrators (None for generalized-α).
    rtol, atol : float
        Rank tolerances of Φ; ``singular_tol``: the floor of the singular-configuration log (None: the rank used).
    record_every : int
        Record every k-th step (output time); ``fields``: record the flexible bodies' fields.
    consistent_initial : True, False or "refuse"
        Make the initial state consistent before the first step, saying what changed; refuse an inconsistent one;
        or run it as given (:mod:`flexbody.solvers.start_changes`).
    save_every : int
        Recorded steps per part file of a run saved as it goes.
    """

    integrator: RK4 | Adaptive | GeneralizedAlpha | MoreauJean
    t0: float = 0.0
    t_end: float
    formulation: str = "projection"
    correction: PositionCorrection | None = PositionCorrection()
    baumgarte: Baumgarte | None = None
    rtol: float | None = None
    atol: float | None = None
    singular_tol: float | None = None
    record_every: int = 1
    fields: bool = False
    consistent_initial: bool | str = True
    save_every: int = 50

    def __post_init__(self) -> None:
        if not isinstance(self.integrator, (RK4, Adaptive, GeneralizedAlpha, MoreauJean)):
            raise FlexbodyError(
                f"simulate: integrator must be RK4, Adaptive, GeneralizedAlpha or MoreauJean, got {self.integrator!r}"
            )
        for name in ("t0", "t_end"):
            value = getattr(self, name)
            if not isinstance(value, (int, float, np.integer, np.floating)) or isinstance(value, bool):
                raise FlexbodyError(f"simulate: {name} must be a number [s], got {value!r}")
        if not (math.isfinite(self.t0) and math.isfinite(self.t_end) and self.t_end > self.t0):
            raise FlexbodyError(f"simulate: t_end must be finite and > t0 = {self.t0}, got {self.t_end!r}")
        for name in ("record_every", "save_every"):
            value = getattr(self, name)
            if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
                raise FlexbodyError(f"simulate: {name} must be a positive integer, got {value!r}")
        check_mode(self.consistent_initial)
        rtol, atol = resolve_tolerances(self.rtol, self.atol)
        object.__setattr__(self, "t0", float(self.t0))
        object.__setattr__(self, "t_end", float(self.t_end))
        object.__setattr__(self, "rtol", rtol)
        object.__setattr__(self, "atol", atol)
        if self.implicit:  # generalized-α: its own formulation, no stabilisation, the default tolerances
            object.__setattr__(self, "formulation", IMPLICIT_FORMULATION)
            object.__setattr__(self, "correction", None)
            object.__setattr__(self, "baumgarte", None)

    @classmethod
    def of(cls, *, stabilization: Any = PositionCorrection(), **settings: Any) -> RunPlan:
        """The plan of :func:`flexbody.simulate`'s arguments, ``stabilization`` a PositionCorrection, a Baumgarte, a
        tuple of both or None."""
        correction = baumgarte = None
        for item in stabilization if isinstance(stabilization, (tuple, list)) else (stabilization,):
            if isinstance(item, PositionCorrection):
                correction = item
            elif isinstance(item, Baumgarte):
                baumgarte = item
            elif item is not None:
                raise FlexbodyError(
                    "simulate: stabilization must be PositionCorrection, Baumgarte, a tuple of them or None, "
                    f"got {item!r}"
                )
        return cls(correction=correction, baumgarte=baumgarte, **settings)

    @property
    def implicit(self) -> bool:
        """Whether the integrator is generalized-α (index-3, implicit)."""
        return isinstance(self.integrator, GeneralizedAlpha)

    @property
    def tolerances(self) -> tuple[float, float]:
        """(rtol, atol), resolved."""
        return float(self.rtol), float(self.atol)  # type: ignore[arg-type]  # resolved in __post_init__

    def until(self, t_end: float | None) -> RunPlan:
        """This plan ending at ``t_end`` [s] (itself for None)."""
        return self if t_end is None else replace(self, t_end=t_end)

    def metadata(self, saving: bool = False) -> dict:
        """The settings a run records in its results' metadata (``saving``: with ``save_every``)."""
        out: dict[str, Any] = {
            "integrator": type(self.integrator).__name__,
            "integrator_settings": asdict(self.integrator),
            "formulation": self.formulation,
            "t0": self.t0,
            "t_end": self.t_end,
            "record_every": int(self.record_every),
        }
        if self.fields:
            out["fields"] = True
        if saving:
            out["save_every"] = int(self.save_every)
        if not self.implicit:
            out.update(
                position_correction=asdict(self.correction) if self.correction else None,
                baumgarte=asdict(self.baumgarte) if self.baumgarte else None,
                rtol=self.rtol,
                atol=self.atol,
                singular_tol=self.singular_tol,
            )
        return out

    @classmethod
    def from_metadata(cls, metadata: dict) -> RunPlan:
        """The plan of a run from the metadata it recorded (:meth:`metadata`); FlexbodyError naming an integrator
        that cannot be rebuilt."""
        name = metadata.get("integrator")
        if name not in INTEGRATORS:
            raise FlexbodyError(
                f"the saved run used integrator {name!r}, which cannot resume; resumable: {sorted(INTEGRATORS)}"
            )
        pc, bg = metadata.get("position_correction"), metadata.get("baumgarte")
        return cls(
            integrator=INTEGRATORS[name](**metadata["integrator_settings"]),
            t0=float(metadata["t0"]),
            t_end=float(metadata["t_end"]),
            formulation=metadata.get("formulation", "projection"),
            correction=PositionCorrection(**pc) if pc else None,
            baumgarte=Baumgarte(**bg) if bg else None,
            rtol=metadata.get("rtol"),
            atol=metadata.get("atol"),
            singular_tol=metadata.get("singular_tol"),
            record_every=int(metadata["record_every"]),
            fields=bool(metadata.get("fields", False)),
            save_every=int(metadata.get("save_every", 50)),
        )

    def bytes_to_write(self, model: Any) -> int:
        """What a run saved as it goes writes at most [B]: its recorded rows (q, v, a, τ, Φᵀλ, λ, the scalars and,
        with ``fields``, about 30 numbers per flexible node) twice, as parts and as the complete results written
        before the parts are removed."""
        step = getattr(self.integrator, "dt", None) or getattr(self.integrator, "output_dt", None)
        step = step or (self.t_end - self.t0) / 100.0
        rows = int(np.ceil((self.t_end - self.t0) / step)) // self.record_every + 2
        n, m = int(model.n_dofs), int(model.n_constraints)
        nodes = sum(b.n_nodes for b in getattr(model, "bodies", None) or []) if self.fields else 0
        return 2 * 8 * rows * (5 * n + 2 * m + 20 + 30 * nodes)
