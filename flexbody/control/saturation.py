"""Actuator limits on any controller: its inputs τ_k clipped to [lower, upper] before the plant gets them, as a real
drive (or MuJoCo's ``ctrlrange``) clips a command, and how much was clipped recorded."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from ..errors import ModelError

if TYPE_CHECKING:
    from ..dynamics.results import ForwardResult
    from ..system import AssembledSystem, State

__all__ = ["Saturated"]


class Saturated:
    """``controller`` with its actuator inputs clipped to ``lower`` ≤ τ_k ≤ ``upper`` (scalars or (k,), ±inf for
    none) [N or N·m]. The histories keep the controller's own ("tau_k" the clipped inputs, "tau_commanded" what it
    asked for, "saturated" how many inputs were clipped); its ``update`` and ``reset`` are passed on."""

    outputs = "actuators"
    kind = "controller"

    def __init__(self, controller: Any, lower: ArrayLike, upper: ArrayLike) -> None:
        if getattr(controller, "outputs", None) != "actuators":
            raise ModelError(f"Saturated: controller must be a flexbody controller, got {controller!r}")
        self.controller = controller
        self.lower, self.upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
        if np.isnan(self.lower).any() or np.isnan(self.upper).any() or np.any(self.lower > self.upper):
            raise ModelError(f"Saturated: bounds must be numbers with lower ≤ upper, got {lower!r} and {upper!r}")
        self.diagnostics: dict[str, Any] = {}

    @property
    def labels(self) -> dict:
        return getattr(self.controller, "labels", {})

    @property
    def task(self) -> Any:
        return getattr(self.controller, "task", None)

    def __call__(self, t: float, state: State, system: AssembledSystem | None = None) -> np.ndarray:
        commanded = np.asarray(self.controller(t, state, system), dtype=float)
        try:
            clipped = np.clip(commanded, self.lower, self.upper)
        except ValueError as error:
            raise ModelError(f"Saturated: bounds of shape {self.lower.shape} for {commanded.size} inputs") from error
        self.diagnostics = dict(getattr(self.controller, "diagnostics", {}))
        self.diagnostics.update(
            tau_k=clipped, tau_commanded=commanded, saturated=float(np.count_nonzero(clipped != commanded))
        )
        return clipped

    def update(self, t: float, state: State, measurement: ForwardResult) -> None:
        if hasattr(self.controller, "update"):
            self.controller.update(t, state, measurement)

    def reset(self) -> None:
        if hasattr(self.controller, "reset"):
            self.controller.reset()
