"""Force elements: applied generalized forces Q(t, q, v) that depend on the state, and their Jacobians.

A force element adds its generalized force to the right-hand side of the equations of motion,

    M q̈ + h(q, v) = τ + Q(t, q, v) + Φᵀλ,    i.e. h ← h − Q                           [DE-7, DE-109]

where a force F applied at an anchor point with velocity Jacobian J (ẋ = J v) contributes JᵀF, and a
moment m on a frame with angular Jacobian J_ω contributes J_ωᵀm (virtual work). Q splits into an elastic
part Q(t, q, 0), which joins the gravity-like term g of h = b + g and so enters statics, and the rest,
Q(t, q, v) − Q(t, q, 0), which joins b. Implicit integrators and static solvers also use ∂Q/∂q and ∂Q/∂v
(:meth:`ForceElement.jacobians`): for anchors whose Jacobian does not depend on q (flexible nodes, the
ground, single joint coordinates) these are exact; the joint-coordinate rows are differentiated by the
solvers themselves (see :mod:`flexbody.solvers.constrained_equations`).

Concrete elements: :class:`GeneralizedForce` (a user callback, here),
:class:`~flexbody.constraints.springs.SpringDamper`
and :class:`~flexbody.constraints.springs.JointSpringDamper`, :class:`~flexbody.constraints.bushing.Bushing`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ..errors import FlexbodyError
from .base import Named, global_columns

if TYPE_CHECKING:
    from ..rigid.state_view import StateView

__all__ = ["ForceElement", "ForcePiece", "GeneralizedForce"]


@dataclass(frozen=True)
class ForcePiece:
    """One force element evaluated at a state.

    Attributes
    ----------
    cols : (k,) global columns the element acts on.
    force : (k,) generalized force Q on those columns [N or N·m].
    stiffness : (k, k) ∂Q/∂q on those columns, or None (the element gives none).
    damping : (k, k) ∂Q/∂v on those columns, or None.
    """

    cols: np.ndarray
    force: np.ndarray
    stiffness: np.ndarray | None = None
    damping: np.ndarray | None = None


class ForceElement(Named):
    """Base class of force elements (subclasses set ``trees``, ``bodies``, ``anchors``).

    Subclasses implement :meth:`evaluate` and, where they store energy, :meth:`potential`.
    """

    kind = "force"
    trees: tuple = ()
    anchors: tuple = ()

    def __init__(self, name: str | None):
        self.name = name

    @property
    def bodies(self) -> tuple:
        """Flexible bodies whose nodes the element acts on (from the anchors)."""
        return tuple({b: None for a in self.anchors for b in getattr(a, "bodies", ())})

    def prepare(self, ev: StateView) -> None:
        """Record what the element takes from the initial state ``ev`` (rest lengths, rest poses)."""

    def evaluate(self, ev: StateView, *, velocity: bool = True, jacobians: bool = False) -> ForcePiece:
        """The generalized force at ``ev``; ``velocity=False`` gives Q(t, q, 0), ``jacobians`` adds ∂Q/∂q
        and ∂Q/∂v."""
        raise NotImplementedError

    def potential(self, ev: StateView) -> float:
        """Energy stored in the element [J] (0 for elements that store none)."""
        return 0.0

    @property
    def exact_jacobians(self) -> bool:
        """Whether :meth:`evaluate`'s ∂Q/∂q and ∂Q/∂v are exact on every column (then the Newton matrices take them on
        the joint columns too, :mod:`flexbody.solvers.constrained_equations`); False unless an element says so."""
        return False

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class GeneralizedForce(ForceElement):
    """A user generalized force Q(t, q, v) on chosen global columns, with its Jacobians.

    Parameters
    ----------
    function : callable (t, q, v) -> (k,)
        Q on ``columns`` [N or N·m], from the time [s] and the global coordinates q (n,) and velocities
        v (n,).
    columns : array of int (k,)
        Global columns Q acts on (see :meth:`AssembledSystem.coordinates` for where a tree or body starts;
        ``asm.coordinate_labels`` names them).
    jacobian : callable (t, q, v) -> (K (k, k), C (k, k)), optional
        ∂Q/∂q and ∂Q/∂v on ``columns`` (C may be None when Q does not depend on v). Implicit integrators
        and static solvers use them; without them those solvers converge more slowly (the flexible
        columns get no stiffness from this element), while explicit integrators need none.
    potential : callable (t, q) -> float, optional
        Energy stored [J] when Q is conservative, for the energy balance.
    name : str, optional
    """

    kind = "generalized_force"

    def __init__(
        self,
        function: Callable,
        columns: ArrayLike,
        *,
        jacobian: Callable | None = None,
        potential: Callable | None = None,
        name: str | None = None,
    ):
        super().__init__(name)
        if not callable(function):
            raise FlexbodyError(f"generalized force {self.name!r}: function must be callable, got {function!r}")
        for label, f in (("jacobian", jacobian), ("potential", potential)):
            if f is not None and not callable(f):
                raise FlexbodyError(f"generalized force {self.name!r}: {label} must be callable, got {f!r}")
        self.function, self.jacobian, self._potential = function, jacobian, potential
        self.cols = global_columns(columns, f"generalized force {self.name!r}")

    def prepare(self, ev: StateView) -> None:
        if self.cols.max() >= ev.q.size:
            raise FlexbodyError(
                f"generalized force {self.name!r}: column {int(self.cols.max())} is outside the "
                f"system's {ev.q.size} coordinates"
            )

    def evaluate(self, ev: StateView, *, velocity: bool = True, jacobians: bool = False) -> ForcePiece:
        v = ev.v if velocity else np.zeros_like(ev.v)
        Q = self._checked(self.function(ev.t, ev.q, v), (self.cols.size,), "function")
        K = C = None
        if jacobians and self.jacobian is not None:
            K, C = self.jacobian(ev.t, ev.q, v)
            K = self._checked(K, (self.cols.size,) * 2, "jacobian K")
            C = None if C is None else self._checked(C, (self.cols.size,) * 2, "jacobian C")
        return ForcePiece(self.cols, Q, K, C)

    def potential(self, ev: StateView) -> float:
        return 0.0 if self._potential is None else float(self._potential(ev.t, ev.q))

    @property
    def exact_jacobians(self) -> bool:
        """With a ``jacobian``, the user's ∂Q/∂q and ∂Q/∂v are taken as exact."""
        return self.jacobian is not None

    def _checked(self, value, shape, what: str) -> np.ndarray:
        out = np.asarray(value, dtype=float)
        if out.shape != shape or not np.all(np.isfinite(out)):
            raise FlexbodyError(
                f"generalized force {self.name!r}: {what} must return {shape} finite numbers, "
                f"got shape {out.shape}" + ("" if out.shape != shape else " with NaN or Inf")
            )
        return out
