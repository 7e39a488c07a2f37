"""Costs of a recorded run and their exact partial derivatives: what :func:`flexbody.gradient` differentiates.

A cost J is a function of the run's states (q_n, v_n), n = 0 … N, at the recorded instants t_n and of its inputs'
values U (an :class:`~flexbody.solvers.input_signals.InputSignal`); :meth:`RunCost.evaluate` gives J and its partials
∂J/∂q_n, ∂J/∂v_n (N + 1, n) and ∂J/∂U (m, n_u), which the run's sensitivities carry back to the inputs, the start
and the constants (:mod:`flexbody.solvers.run_sensitivities`). Costs add (``a + b``) and scale (``2.0 * a``).

- :class:`FinalPoint`: ½‖x(q_N) − x*‖² of an anchor (a link point, a node) [m²];
- :class:`FlexibleEnergy`: a flexible body's residual vibration energy at the end, ½ v_fᵀ M_f v_f + U(q_f) [J];
- :class:`Effort`: ½ w ∫‖u‖² dt over the run (½ Σ_k w Δt_k ‖u_k‖² for piecewise-constant inputs) [N² s, or N²m² s];
- :class:`FinalState`: ½ (q_N − q*)ᵀ W_q (q_N − q*) + ½ (v_N − v*)ᵀ W_v (v_N − v*);
- :class:`FinalValue`: one coordinate q_N[i] or its rate v_N[i] at the end (linear: for constraints on the final
  state, :class:`~flexbody.solvers.input_optimization.RunConstraint`);
- :class:`KnotValue`: one coordinate or its rate at one of the inputs' knots (bounds on the state along a move).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..errors import ModelError
from .dynamics_derivatives import young_modulus

__all__ = [
    "RunCost",
    "CostPartials",
    "FinalPoint",
    "FlexibleEnergy",
    "Effort",
    "FinalState",
    "FinalValue",
    "KnotValue",
    "RunView",
]


@dataclass(frozen=True)
class RunView:
    """What a cost reads of a run: the assembled system ``asm``, the recorded ``times`` (N + 1,) [s], ``q``, ``v``
    (N + 1, n) and the ``inputs`` (:class:`~flexbody.solvers.input_signals.InputSignal`)."""

    asm: Any
    times: np.ndarray
    q: np.ndarray
    v: np.ndarray
    inputs: Any

    @classmethod
    def of(cls, results: Any, inputs: Any) -> RunView:
        """The view of a recorded run (:class:`~flexbody.io.results.Results` of ``simulate(..., record_every=1)``
        under ``inputs``)."""
        return cls(results.system, np.asarray(results.times), np.asarray(results.q), np.asarray(results.v), inputs)

    def workspace(self, n: int):
        """The workspace of the recorded state n."""
        return self.asm.workspace(float(self.times[n]), self.q[n], self.v[n])


@dataclass
class CostPartials:
    """J and its partials: ``q``, ``v`` (N + 1, n), ``inputs`` (k, n_u); or of r functions stacked on a last axis
    (``value`` (r,))."""

    value: Any
    q: np.ndarray
    v: np.ndarray
    inputs: np.ndarray

    @classmethod
    def zero(cls, run: RunView) -> CostPartials:
        return cls(0.0, np.zeros_like(run.q), np.zeros_like(run.v), np.zeros_like(run.inputs.values))


class RunCost:
    """Base class of the costs of a run (module docstring): subclasses give :meth:`add_to`."""

    def of_run(self, results: Any, inputs: Any) -> float:
        """J of a recorded run (:class:`~flexbody.io.results.Results` of ``simulate(..., record_every=1)`` under the
        :class:`~flexbody.solvers.input_signals.InputSignal` ``inputs``), without its gradient."""
        return self.evaluate(RunView.of(results, inputs)).value

    def evaluate(self, run: RunView) -> CostPartials:
        """J and its partials on the run ``run``."""
        out = CostPartials.zero(run)
        self.add_to(run, out, 1.0)
        return out

    def add_to(self, run: RunView, out: CostPartials, scale: float) -> None:
        """Add ``scale`` times this cost and its partials to ``out``."""
        raise NotImplementedError

    def parameter_partial(self, run: RunView, body: Any, name: str) -> float:
        """∂J/∂p at fixed states of a flexible body's constant p (``name`` "young", "density" or "damping") that the
        cost reads itself (0: none)."""
        return 0.0

    def __add__(self, other: RunCost) -> RunCost:
        return _Sum(((1.0, self), (1.0, other)))

    def __rmul__(self, factor: float) -> RunCost:
        return _Sum(((float(factor), self),))


@dataclass(frozen=True, eq=False)
class _Sum(RunCost):
    terms: tuple

    def add_to(self, run: RunView, out: CostPartials, scale: float) -> None:
        for factor, term in self.terms:
            term.add_to(run, out, scale * factor)

    def parameter_partial(self, run: RunView, body: Any, name: str) -> float:
        return sum(factor * term.parameter_partial(run, body, name) for factor, term in self.terms)


@dataclass(frozen=True, eq=False)
class FinalPoint(RunCost):
    """½‖x(q_N) − target‖² [m²] of ``anchor`` (a link point or frame, or a flexible node) at the run's end."""

    anchor: Any
    target: ArrayLike

    def add_to(self, run: RunView, out: CostPartials, scale: float) -> None:
        ws = run.workspace(-1)
        error = self.anchor.position(ws) - np.asarray(self.target, dtype=float).reshape(3)
        cols, J = self.anchor.jacobian(ws)
        out.value += scale * 0.5 * float(error @ error)
        out.q[-1, cols] += scale * (J.T @ error)


@dataclass(frozen=True, eq=False)
class FlexibleEnergy(RunCost):
    """The residual vibration energy of the flexible ``body`` at the run's end [J]: its kinetic energy
    ½ v_fᵀ M_f v_f and its strain energy U(q_f) (∂U/∂q = k(q, 0), the elastic force)."""

    body: Any

    def add_to(self, run: RunView, out: CostPartials, scale: float) -> None:
        asm = run.asm
        if not asm.sparse or not any(self.body is b for b in asm.flexible.bodies):
            raise ModelError(f"FlexibleEnergy: {self.body!r} is not a flexible body of this system")
        cols = asm.slices[self.body]
        q, v = run.q[-1, cols], run.v[-1, cols]
        Mv = self.body.mass_matrix() @ v
        out.value += scale * (0.5 * float(v @ Mv) + self.body.strain_energy(q))
        out.v[-1, cols] += scale * Mv
        out.q[-1, cols] += scale * self.body.internal_force(q)

    def parameter_partial(self, run: RunView, body: Any, name: str) -> float:
        """U/E in E (the strain energy is linear in the moduli), ½vᵀMv/ρ in ρ, of this body."""
        if body is not self.body or name == "damping":
            return 0.0
        cols = run.asm.slices[self.body]
        if name == "young":
            return self.body.strain_energy(run.q[-1, cols]) / young_modulus(self.body.material)
        v = run.v[-1, cols]
        return 0.5 * float(v @ (self.body.mass_matrix() @ v)) / self.body.material.density


@dataclass(frozen=True, eq=False)
class Effort(RunCost):
    """½ ``weight`` ∫‖u‖² dt over the span of the run = ½ w Σ_c U_cᵀ G U_c, G the inputs' Gram matrix
    (:meth:`~flexbody.solvers.input_signals.InputSignal.gram`; ½ Σ_k w Δt_k ‖u_k‖² for piecewise-constant inputs)."""

    weight: float = 1.0

    def add_to(self, run: RunView, out: CostPartials, scale: float) -> None:
        G, u = run.inputs.gram(float(run.times[0]), float(run.times[-1])), run.inputs.values
        Gu = G @ u
        out.value += scale * 0.5 * self.weight * float(np.sum(u * Gu))
        out.inputs += scale * self.weight * Gu


@dataclass(frozen=True, eq=False)
class FinalState(RunCost):
    """½ (q_N − q*)ᵀ W_q (q_N − q*) + ½ (v_N − v*)ᵀ W_v (v_N − v*) with diagonal weights ``wq``, ``wv`` (n,) (0: not
    weighted) and targets ``q_target``, ``v_target`` (n,) (default zero)."""

    wq: ArrayLike
    wv: ArrayLike
    q_target: ArrayLike | None = None
    v_target: ArrayLike | None = None

    def add_to(self, run: RunView, out: CostPartials, scale: float) -> None:
        n = run.q.shape[1]
        for x, weights, target, grad in (
            (run.q[-1], self.wq, self.q_target, out.q),
            (run.v[-1], self.wv, self.v_target, out.v),
        ):
            w = np.broadcast_to(np.asarray(weights, dtype=float), (n,))
            error = x - (np.zeros(n) if target is None else np.asarray(target, dtype=float))
            out.value += scale * 0.5 * float(error @ (w * error))
            grad[-1] += scale * w * error


@dataclass(frozen=True, eq=False)
class FinalValue(RunCost):
    """The global coordinate ``coordinate`` at the run's end, q_N[i] [m or rad], or with ``rate`` its velocity v_N[i]
    [m/s or rad/s]."""

    coordinate: int
    rate: bool = False

    def add_to(self, run: RunView, out: CostPartials, scale: float) -> None:
        _add_value(run, out, scale, self.coordinate, self.rate, run.q.shape[0] - 1, "FinalValue")


@dataclass(frozen=True, eq=False)
class KnotValue(RunCost):
    """The global coordinate ``coordinate`` q[i] [m or rad] (with ``rate`` its velocity v[i] [m/s or rad/s]) at the
    inputs' knot ``knot`` (0 … k): the recorded state at that instant, where a step ends (the integrators end a step
    on every knot, :mod:`flexbody.solvers.input_breaks`). Knots move with the duration (``fb.minimum_time``), so a bound
    on the state at every knot (:func:`~flexbody.solvers.input_optimization.knot_bounds`) bounds it along the move."""

    coordinate: int
    knot: int
    rate: bool = False

    def add_to(self, run: RunView, out: CostPartials, scale: float) -> None:
        knots = run.inputs.times
        if not -knots.size <= int(self.knot) < knots.size:
            raise ModelError(f"KnotValue: knot {self.knot!r} is not one of the inputs' {knots.size} knots")
        t = float(knots[self.knot])
        state = int(np.argmin(np.abs(run.times - t)))
        if abs(run.times[state] - t) > 1e-9 * max(1.0, abs(t)):
            raise ModelError(
                f"KnotValue: no recorded state at knot {self.knot} (t = {t:.9g} s): the run spans "
                f"[{run.times[0]:.9g}, {run.times[-1]:.9g}] s"
            )
        _add_value(run, out, scale, self.coordinate, self.rate, state, "KnotValue")


def _add_value(run: RunView, out: CostPartials, scale: float, coordinate: int, rate: bool, state: int, name: str):
    """q[i] (or v[i]) of the recorded ``state`` and its partial."""
    n = run.q.shape[1]
    if not 0 <= int(coordinate) < n:
        raise ModelError(f"{name}: coordinate {coordinate!r} is not one of the system's {n} coordinates")
    states, grad = (run.v, out.v) if rate else (run.q, out.q)
    out.value += scale * float(states[state, coordinate])
    grad[state, coordinate] += scale
