"""Couplings between joint coordinates and driving constraints.

- :class:`LinearCoupling` φ = Σ cᵢ qᵢ + c₀ (gears, the internal joint couplings of [DE-94]);
- :class:`FunctionCoupling` φ = q_dep − f(q_ind) (knee-like couplings of DE Fig. 2, e.g. the tibia
  translating as a function of flexion), :class:`PolynomialCoupling` with f a polynomial;
- :class:`JointDriver` φ = q − f(t), a rheonomic driving constraint.

Each gives Φ on the joint columns and the exact bias: zero for linear couplings, −f″(q) q̇² for function
couplings and −f̈(t) for drivers, so that Φ a + bias = 0 [DE-4].
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ..errors import ConstraintError
from ..rigid.link import Link
from .base import Constraint, ConstraintRows
from .row_kinds import CouplingRow, coupling_row, drive_values

if TYPE_CHECKING:
    from ..rigid.state_view import StateView


_NO_DRIVE, _ONE = np.zeros(3), np.ones(1)


def _coordinate_link(link, who: str) -> Link:
    if not isinstance(link, Link):
        raise ConstraintError(f"{who}: expected a Link (from RigidTree.add_link), got {link!r}")
    if link.coordinate is None:
        raise ConstraintError(f"{who}: link {link.name!r} has a fixed joint (no coordinate)")
    return link


def _column(ev: StateView, link: Link) -> int:
    return ev.offset(link.tree) + link.coordinate


class LinearCoupling(Constraint):
    """φ = Σ cᵢ qᵢ + c₀ = 0 over joint coordinates.

    Parameters
    ----------
    terms : mapping Link -> float
        Coefficient of each link's joint coordinate.
    constant : float
    name : str, optional
    """

    kind = "coupling"

    def __init__(self, terms: Mapping, constant: float = 0.0, name: str | None = None):
        super().__init__(name)
        if not terms:
            raise ConstraintError(f"coupling {self.name!r}: no terms")
        self.links = [_coordinate_link(link, f"coupling {self.name!r}") for link in terms]
        self.coefficients = np.array([float(c) for c in terms.values()])
        if not np.all(np.isfinite(self.coefficients)) or not np.any(self.coefficients):
            raise ConstraintError(f"coupling {self.name!r}: coefficients must be finite and not all zero")
        self.constant = float(constant)
        self.n_rows, self.row_names = 1, ("q",)
        self.trees = tuple({link.tree: None for link in self.links})

    @property
    def units(self) -> tuple[str, ...]:
        """The joints' unit when they share one, else "-" (the coefficients carry the units)."""
        units = {link.joint.unit for link in self.links}
        return (units.pop() if len(units) == 1 else "-",)

    def declare_rows(self) -> tuple[CouplingRow]:
        """One COUPLING row, φ = Σ cᵢ qᵢ + c₀ (:mod:`flexbody.constraints.row_kinds`)."""
        return (CouplingRow(tuple(zip(self.links, self.coefficients)), self.constant),)

    def evaluate(self, ev: StateView) -> ConstraintRows:
        cols = np.array([_column(ev, link) for link in self.links])
        phi, bias, _ = coupling_row(self.coefficients, self.constant, ev.q[cols], _NO_DRIVE)
        return ConstraintRows(np.array([phi]), [(cols, self.coefficients[None, :])], np.array([bias]))

    def joint_hessian(self, ev: StateView, lam: np.ndarray) -> None:
        """None: the rows are linear in q, so ∂(Φᵀλ)/∂q = 0."""
        return None

    def acceleration_derivatives(self, ev: StateView, acc: np.ndarray) -> None:
        """None: c = cᵀa (− f̈(t)) does not change with q or v."""
        return None


class Gear(LinearCoupling):
    """q_driven = ratio · q_driver (+ offset)."""

    kind = "gear"

    def __init__(self, driver: Link, driven: Link, ratio: float, offset: float = 0.0, name: str | None = None):
        if driver is driven:
            raise ConstraintError(f"gear {name!r}: driver and driven are the same link {driver.name!r}")
        super().__init__({driven: 1.0, driver: -float(ratio)}, constant=-float(offset), name=name)

    @property
    def units(self) -> tuple[str, ...]:
        """The driven joint's unit (the ratio converts the driver's)."""
        return (self.links[0].joint.unit,)


class FunctionCoupling(Constraint):
    """φ = q_dep − f(q_ind) = 0 with f, f′ and f″ given by the user.

    Parameters
    ----------
    dependent, independent : Link
    function, derivative, second_derivative : callables of q_ind (float) -> float
    third_derivative : callable of q_ind (float) -> float, optional
        f‴, which the derivatives of the constrained dynamics need (:meth:`acceleration_derivatives`); without it
        they name this coupling.
    """

    kind = "coupling"

    def __init__(
        self,
        dependent: Link,
        independent: Link,
        function: Callable,
        derivative: Callable,
        second_derivative: Callable,
        name: str | None = None,
        *,
        third_derivative: Callable | None = None,
    ):
        super().__init__(name)
        who = f"coupling {self.name!r}"
        if third_derivative is not None and not callable(third_derivative):
            raise ConstraintError(f"{who}: third_derivative must be a callable (or None)")
        self.dddf = third_derivative
        self.dependent = _coordinate_link(dependent, who)
        self.independent = _coordinate_link(independent, who)
        if dependent is independent:
            raise ConstraintError(f"{who}: dependent and independent are the same link {dependent.name!r}")
        for f in (function, derivative, second_derivative):
            if not callable(f):
                raise ConstraintError(f"{who}: function and its two derivatives must be callables")
        self.f, self.df, self.ddf = function, derivative, second_derivative
        self.n_rows, self.row_names = 1, ("q",)
        self.trees = tuple({dependent.tree: None, independent.tree: None})

    @property
    def units(self) -> tuple[str, ...]:
        """The dependent joint's unit."""
        return (self.dependent.joint.unit,)

    def evaluate(self, ev: StateView) -> ConstraintRows:
        i, j = _column(ev, self.dependent), _column(ev, self.independent)
        x, xd = ev.q[j], ev.v[j]
        phi = np.array([ev.q[i] - self.f(x)])
        block = np.array([[1.0, -self.df(x)]])
        return ConstraintRows(phi, [(np.array([i, j]), block)], np.array([-self.ddf(x) * xd * xd]))

    def joint_hessian(self, ev: StateView, lam: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(columns, ∂(Φᵀλ)/∂q): the row [1, −f′(x)] turns with x by −λ f″(x)."""
        i, j = _column(ev, self.dependent), _column(ev, self.independent)
        H = np.zeros((2, 2))
        H[1, 1] = -float(np.asarray(lam).reshape(-1)[0]) * self.ddf(ev.q[j])
        return np.array([i, j]), H

    @property
    def has_acceleration_derivatives(self) -> bool:
        """Whether f‴ was given (:meth:`acceleration_derivatives` needs it)."""
        return self.dddf is not None

    def acceleration_derivatives(self, ev: StateView, acc: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(columns, ∂c/∂q, ∂c/∂v) of c = a_dep − f′(x) a_ind − f″(x) ẋ²: ∂c/∂x = −f″ a_ind − f‴ ẋ², ∂c/∂ẋ = −2f″ẋ."""
        if self.dddf is None:
            raise ConstraintError(f"coupling {self.name!r}: give third_derivative for its acceleration derivatives")
        i, j = _column(ev, self.dependent), _column(ev, self.independent)
        x, xd = ev.q[j], ev.v[j]
        Cq = np.array([[0.0, -self.ddf(x) * acc[j] - self.dddf(x) * xd * xd]])
        return np.array([i, j]), Cq, np.array([[0.0, -2.0 * self.ddf(x) * xd]])


class PolynomialCoupling(FunctionCoupling):
    """q_dep = Σₖ cₖ q_indᵏ (coefficients in increasing powers), e.g. a knee's tibial translation."""

    def __init__(self, dependent: Link, independent: Link, coefficients: ArrayLike, name: str | None = None):
        c = np.asarray(coefficients, dtype=float).ravel()
        if c.size == 0 or not np.all(np.isfinite(c)):
            raise ConstraintError(f"polynomial coupling {name!r}: coefficients must be finite and non-empty")
        p = np.polynomial.Polynomial(c)
        dp, ddp, dddp = p.deriv(1), p.deriv(2), p.deriv(3)
        super().__init__(
            dependent, independent, lambda x: float(p(x)), lambda x: float(dp(x)), lambda x: float(ddp(x)), name=name,
            third_derivative=lambda x: float(dddp(x)),
        )  # fmt: skip
        self.coefficients = c


class JointDriver(Constraint):
    """Rheonomic drive φ = q − f(t) = 0 of one joint coordinate.

    Parameters
    ----------
    link : Link
    position : float or callable f(t) [rad or m]
    velocity, acceleration : callables ḟ(t), f̈(t) (required when ``position`` is callable)
    """

    kind = "driver"

    def __init__(
        self,
        link: Link,
        position: float | Callable[[float], float],
        velocity: Callable | None = None,
        acceleration: Callable | None = None,
        name: str | None = None,
    ):
        super().__init__(name)
        who = f"driver {self.name!r}"
        self.link = _coordinate_link(link, who)
        if callable(position):
            if not (callable(velocity) and callable(acceleration)):
                raise ConstraintError(f"{who}: a callable position needs callable velocity and acceleration")
            self.f, self.df, self.ddf = position, velocity, acceleration
        else:
            value = float(position)
            if not np.isfinite(value):
                raise ConstraintError(f"{who}: position must be finite")
            self.f, self.df, self.ddf = (lambda t: value), (lambda t: 0.0), (lambda t: 0.0)
        self.n_rows, self.row_names = 1, ("q",)
        self.trees = (link.tree,)

    @property
    def units(self) -> tuple[str, ...]:
        """The driven joint's unit."""
        return (self.link.joint.unit,)

    def declare_rows(self) -> tuple[CouplingRow]:
        """One COUPLING row with a prescribed motion, φ = q − f(t) (:mod:`flexbody.constraints.row_kinds`)."""
        return (CouplingRow(((self.link, 1.0),), 0.0, (self.f, self.df, self.ddf)),)

    def evaluate(self, ev: StateView) -> ConstraintRows:
        i = _column(ev, self.link)
        phi, bias, phi_t = coupling_row(_ONE, 0.0, ev.q[i : i + 1], drive_values((self.f, self.df, self.ddf), ev.t))
        return ConstraintRows(np.array([phi]), [(np.array([i]), np.ones((1, 1)))], np.array([bias]), np.array([phi_t]))

    def joint_hessian(self, ev: StateView, lam: np.ndarray) -> None:
        """None: the rows are linear in q, so ∂(Φᵀλ)/∂q = 0."""
        return None

    def acceleration_derivatives(self, ev: StateView, acc: np.ndarray) -> None:
        """None: c = cᵀa (− f̈(t)) does not change with q or v."""
        return None
