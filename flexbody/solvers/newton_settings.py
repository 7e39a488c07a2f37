"""Settings of the static Newton solvers (:func:`flexbody.solve_static`)."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import FlexbodyError
from ..linalg.validation import check_setting

__all__ = ["NewtonSettings"]

LINE_SEARCHES = ("none", "safeguard", "slope")


@dataclass(frozen=True, kw_only=True)
class NewtonSettings:
    """Settings of the static Newton solver.

    Parameters
    ----------
    tol : float
        Relative residual tolerance, ‖r_free‖ ≤ tol · max(‖s f_ext‖, ‖k(q)‖).
    max_iterations : int
        Newton iterations per load step.
    line_search : str
        "safeguard" (full Newton steps, halved while the residual is non-finite, e.g. from an inverted
        element), "slope" (additionally Crisfield's search on the slope Δ·r: fewer wild steps, though often
        more iterations for slender structures), or "none".
    max_bisections : int
        How often a failed load increment may be halved.
    """

    tol: float = 1e-10
    max_iterations: int = 30
    line_search: str = "safeguard"
    max_bisections: int = 8

    def __post_init__(self):
        check_setting("NewtonSettings", "tol", self.tol)
        check_setting("NewtonSettings", "max_iterations", self.max_iterations, low=1, strict=False, integer=True)
        check_setting("NewtonSettings", "max_bisections", self.max_bisections, strict=False, integer=True)
        if self.line_search not in LINE_SEARCHES:
            raise FlexbodyError(
                f"NewtonSettings.line_search must be 'none', 'safeguard' or 'slope', got {self.line_search!r}"
            )
