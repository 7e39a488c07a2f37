"""Task-level control through unilateral, frictional contact: hybrid motion/force control [AG-49..52] on the contacts
that touch, an approach law toward those that do not, and the contact forces kept inside the friction cones.

At each call, with the touching contacts (:mod:`flexbody.control.contact_rows`) held closed (and sticking where they
stick), the inputs are those of the contact actuation problem (:func:`~flexbody.control.contact_wrench.
solve_contact_wrench`): the task at the commanded acceleration f* = ẍ_d + K_v ė + K_p e [DE-71], each touching
contact's normal force at its command, every contact's margin min(f_n, μ f_n − ‖f_t‖) at least ``margin``, and the
least effort τ_kᵀ W_k⁻¹ τ_k [AG-47] among such inputs (passive joints get none). Where no input can (the desired
force would pull, or the friction would leave its cone), the controller raises an
:class:`~flexbody.errors.ActuationError` naming the contacts instead of returning a torque that pulls on a surface.

The force law [AG-50]: the normal force commanded is f_c = f_d + (G_I z − G_F δ)/(1 + G_F) with z = ∫(f_d − f) dt of
the measured force f (the plant's contact force over its step, ``measurement.contact_forces``) and δ = f − f_predicted
the last sample's prediction error, Aghili's loop through the model solved as in
:class:`~flexbody.control.projected.HybridMotionForceControl`; with an exact model δ = 0 and f = f_c = f_d. A command
below the margin is raised to it (f_d ≥ margin is where λ_n ≥ 0 can hold).

A sticking contact that the task moves along its surface starts to slide (Coulomb's law at zero slip speed): where
holding it still leaves the task short by more than :data:`SLIP_ACCELERATION`, it slides in the direction it would
accelerate in without friction, its friction −μ f_n û against that slip.

A contact touches where its gap lies within ``touching`` of zero, or, where the plant measured its force at the last
step, within :data:`~flexbody.control.contact_rows.PRESSING_GAP`; one that does not is lost (or not yet made).
A controlled contact that does not touch is approached: its normal acceleration is commanded toward an approach speed,
g̈ = k_a (−v_a − ġ), with v_a = min(``approach_speed``, ``impulse_bound`` / (m_eff (1 + e))) so that the impulse
with which it closes, m_eff (1 + e) v_a for the effective mass m_eff = 1/(G_n M⁻¹ G_nᵀ) of the contact's normal
(constrained by the bilateral rows), stays within the bound. Its force integral restarts when it touches again.

With ``motion_only`` the contacts are held as bilateral rows, whatever their gap, whose force is whatever the least
effort gives (Aghili's motion controller, PIDC [AG-43..48], where τ = P(M a + h) is the least-norm input): "the sign
of the constraint force" is not guarded, and where the force the motion needs would pull, the plant's unilateral
contact opens; the law then goes on as if it held (the contact's row still in its plan), and the body drifts off the
surface.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from ..errors import ModelError
from .base import TaskController
from .contact_rows import TOUCHING, TouchingContacts, measured_normal_forces, touching_contacts
from .contact_wrench import solve_contact_wrench

if TYPE_CHECKING:
    from ..dynamics.results import ForwardResult
    from ..system import AssembledSystem, State, System
    from .context import ControlContext
    from .references import Reference
    from .tasks import Desired, Task

__all__ = ["ContactForceControl", "SLIP_ACCELERATION"]

SLIP_ACCELERATION = 1e-3
"""A sticking contact starts to slide where the task needs it to: where holding it still leaves the task short by
more than this [m/s², rad/s²] and, free to slide without friction, it would accelerate along its surface by more."""


class ContactForceControl(TaskController):
    """Hybrid motion/force control through unilateral, frictional contacts (module docstring).

    Parameters
    ----------
    task, reference, kp, kv : the motion task (along the contacts) and its law, as :class:`TaskController`.
    normal_force : float, (c,) or callable t -> (c,)
        Desired normal force f_d [N] of each controlled contact (≥ 0; a pull is refused by name).
    model : System or AssembledSystem, optional — the controller's model (with the same contacts as the plant).
    contacts : sequence of str, optional — the model's contacts it acts through (default: all, in the model's order).
    gf, gi : float — the force law's gains G_F (dimensionless) and G_I [1/s] [AG-50].
    margin : float — the margin [N] kept at every touching contact: f_n ≥ margin and μ f_n − ‖f_t‖ ≥ margin.
    approach_speed : float — speed [m/s] toward a controlled contact that does not touch.
    impulse_bound : float, optional — the largest impulse [N·s] with which a contact may close (caps the approach).
    approach_gain : float — k_a [1/s] of the approach law.
    motion_only : bool — hold the contacts as bilateral rows without regulating or guarding their force.
    weight : (n, n), optional — W of the effort τᵀW⁻¹τ [AG-47].
    touching : float — the gap [m] within which a contact touches.
    """

    kind = "contact_force"

    def __init__(
        self,
        task: Task,
        reference: Reference | Desired,
        kp: ArrayLike,
        kv: ArrayLike,
        normal_force: ArrayLike | Callable[[float], ArrayLike],
        model: System | AssembledSystem | None = None,
        *,
        contacts: tuple | list | None = None,
        gf: float = 0.0,
        gi: float = 0.0,
        margin: float = 0.0,
        approach_speed: float = 0.05,
        impulse_bound: float | None = None,
        approach_gain: float = 50.0,
        motion_only: bool = False,
        weight: ArrayLike | None = None,
        touching: float = TOUCHING,
        **kwargs: Any,
    ) -> None:
        super().__init__(task, reference, kp, kv, model, **kwargs)
        self.normal_force, self.contact_names = normal_force, None if contacts is None else tuple(contacts)
        self.gf, self.gi, self.margin = float(gf), float(gi), float(margin)
        self.approach_speed, self.approach_gain = float(approach_speed), float(approach_gain)
        self.impulse_bound = None if impulse_bound is None else float(impulse_bound)
        self.motion_only, self.touching = bool(motion_only), float(touching)
        self.weight = None if weight is None else np.asarray(weight, dtype=float)
        for name, value, low in (
            ("gf", self.gf, 0.0),
            ("gi", self.gi, 0.0),
            ("margin", self.margin, 0.0),
            ("approach_gain", self.approach_gain, 0.0),
            ("touching", self.touching, 0.0),
        ):
            if not (np.isfinite(value) and value >= low):
                raise ModelError(f"ContactForceControl: {name} must be finite and ≥ {low:g}, got {value!r}")
        if not (np.isfinite(self.approach_speed) and self.approach_speed > 0.0):
            raise ModelError(f"ContactForceControl: approach_speed must be > 0 m/s, got {approach_speed!r}")
        if self.impulse_bound is not None and not (np.isfinite(self.impulse_bound) and self.impulse_bound > 0.0):
            raise ModelError(f"ContactForceControl: impulse_bound must be > 0 N·s, got {impulse_bound!r}")
        self.reset()

    def reset(self) -> None:
        self._z: dict[str, float] = {}  # ∫ (f_d − f) dt per touching contact [N·s]
        self._delta: dict[str, float] = {}  # f − f_predicted of the last sample [N]
        self._predicted: dict[str, float] = {}
        self._desired: dict[str, float] = {}
        self._t_last: float | None = None
        self._pressing: set[str] = set()  # contacts whose force the plant measured at the last step

    # ------------------------------------------------------------------ the law
    def compute(self, ctx: ControlContext) -> np.ndarray:
        """τ (n,) at ``ctx`` (module docstring); records the contacts' desired, commanded and predicted forces."""
        f_star = self.command(ctx)[1]
        names = self._controlled(ctx)
        if self.motion_only:  # the contacts held as bilateral rows, whatever their gap (Aghili's motion law)
            held = touching_contacts(ctx, names, np.inf)
        else:
            held = touching_contacts(ctx, names, self.touching, frozenset(self._pressing))
        desired = self._normal_forces(ctx.t, names)
        commanded = np.array([self._commanded(name, desired[names.index(name)]) for name in held.names])
        approach = self._approach(ctx, names, held)
        forces = np.full(len(held.names), np.nan) if self.motion_only else commanded
        report = self._solve(ctx, held, forces, approach, f_star)
        if not self.motion_only and (~held.sliding).any() and self._shortfall(ctx, report, f_star) > SLIP_ACCELERATION:
            held = self._breaking_away(ctx, held, forces, approach, f_star)
            report = self._solve(ctx, held, forces, approach, f_star)
        tau_k = report.require(f"{type(self).__name__} at t = {ctx.t:.9g} s")
        self._predicted = dict(zip(held.names, report.forces[:, 0]))
        self._desired = {name: float(desired[names.index(name)]) for name in held.names}
        for name in set(self._z) - set(held.names):  # apart: the integral restarts when it touches again
            del self._z[name]
            self._delta.pop(name, None)
        self.diagnostics.update(
            contact_touching=np.array([name in held.names for name in names], dtype=float),
            contact_force_desired=desired,
            contact_force_predicted=np.array([self._predicted.get(name, 0.0) for name in names]),
            contact_margin=report.margin if held.names else np.inf,
        )
        return ctx.S.T @ tau_k

    def update(self, t: float, state: State, measurement: ForwardResult) -> None:
        """Integrate f_d − f of each touching contact with the plant's measured normal force f and keep the
        prediction error δ = f − f_predicted [AG-50]."""
        model = self.model if self.model is not None else getattr(state, "asm", None)
        forces = measured_normal_forces(measurement, model)
        if forces is None:
            return
        self._pressing = {name for name, force in forces.items() if force > 0.0}
        dt = 0.0 if self._t_last is None else float(t) - self._t_last
        for name, predicted in self._predicted.items():
            self._z[name] = self._z.get(name, 0.0) + dt * (self._desired[name] - forces[name])
            self._delta[name] = forces[name] - predicted
        self._t_last = float(t)

    # ------------------------------------------------------------------ pieces
    def _solve(self, ctx: ControlContext, held: TouchingContacts, forces, approach, f_star):
        """The contact actuation problem of a call: the ``held`` contacts, normal ``forces`` (NaN: free), the
        ``approach`` rows and the task at f* after the contacts."""
        return solve_contact_wrench(
            ctx,
            held,
            forces,
            self.margin,
            task=self.task,
            task_acceleration=f_star,
            rows=approach,
            cones=not self.motion_only,
            weight=self.weight,
            task_priority=True,
            largest=False,
        )

    def _shortfall(self, ctx: ControlContext, report, f_star: np.ndarray) -> float:
        """‖J a + J̇v − f*‖ of the report's accelerations: how much of the task the held contacts forbid."""
        terms = ctx.task(self.task)
        return float(np.linalg.norm(terms.J @ report.acceleration + terms.bias - f_star))

    def _breaking_away(self, ctx: ControlContext, held: TouchingContacts, forces, approach, f_star):
        """The held contacts with those that stick but that the task moves along their surface (their tangential
        acceleration above :data:`SLIP_ACCELERATION` where they are free to slide without friction) sliding in the
        direction of that acceleration: Coulomb's law at zero slip speed, the friction −μ f_n û against the slip
        that starts."""
        sticking = ~held.sliding
        trial = held._replace(sliding=np.ones_like(held.sliding), slip=np.where(sticking[:, None], 0.0, held.slip))
        a = self._solve(ctx, trial, forces, approach, f_star).acceleration
        slip, sliding = held.slip.copy(), held.sliding.copy()
        for i in np.flatnonzero(sticking):
            rows = slice(3 * i + 1, 3 * i + 3)
            tangential = held.G[rows] @ a + held.gamma[rows]
            if float(np.linalg.norm(tangential)) > SLIP_ACCELERATION:
                slip[i], sliding[i] = tangential, True
        return held._replace(slip=slip, sliding=sliding)

    def _controlled(self, ctx: ControlContext) -> tuple:
        names = tuple(c.name for c in getattr(ctx.model, "contacts", ()))
        if self.contact_names is None:
            return names
        unknown = sorted(set(self.contact_names) - set(names))
        if unknown:
            raise ModelError(f"ContactForceControl: contacts {unknown} are not the model's (it has {list(names)})")
        return tuple(name for name in names if name in self.contact_names)

    def _normal_forces(self, t: float, names: tuple) -> np.ndarray:
        value = self.normal_force(t) if callable(self.normal_force) else self.normal_force
        forces = np.broadcast_to(np.asarray(value, dtype=float), (len(names),)).copy()
        if not (np.all(np.isfinite(forces)) and np.all(forces >= 0.0)):
            pulling = [name for name, f in zip(names, forces) if not f >= 0.0]
            raise ModelError(
                f"ContactForceControl: the desired normal force must be finite and ≥ 0 N (a contact only pushes), got "
                f"{forces} at t = {t:.9g} s for {pulling}"
            )
        return forces

    def _commanded(self, name: str, desired: float) -> float:
        """f_c = f_d + (G_I z − G_F δ)/(1 + G_F) [AG-50], at least the margin."""
        z, delta = self._z.get(name, 0.0), self._delta.get(name, 0.0)
        return max(desired + (self.gi * z - self.gf * delta) / (1.0 + self.gf), self.margin)

    def _approach(self, ctx: ControlContext, names: tuple, held: TouchingContacts):
        """(R, target) of the approach law for the controlled contacts that do not touch, or None."""
        apart = [c for c in getattr(ctx.model, "contacts", ()) if c.name in names and c.name not in held.names]
        if not apart:
            return None
        R, target = np.zeros((len(apart), ctx.n)), np.zeros(len(apart))
        for i, contact in enumerate(apart):
            frame, gamma = contact.acceleration_bias(ctx.ev)
            R[i, frame.cols] = frame.G[0]
            rate = float(R[i] @ ctx.v)
            speed = min(self.approach_speed, self._speed_bound(ctx, contact, R[i]))
            target[i] = self.approach_gain * (-speed - rate) - gamma[0]  # g̈ = G_n a + γ_n = k_a (−v_a − ġ)
        return R, target

    def _speed_bound(self, ctx: ControlContext, contact, G_n: np.ndarray) -> float:
        """impulse_bound / (m_eff (1 + e)) [m/s], m_eff = 1/(G_n M⁻¹ G_nᵀ) with the bilateral rows held; ∞ without
        a bound."""
        if self.impulse_bound is None:
            return np.inf
        x = ctx.solve_M(G_n)
        if ctx.rank:  # the bilateral rows hold: M⁻¹ − M⁻¹Φ̂ᵀ H Φ̂M⁻¹, H = (Φ̂M⁻¹Φ̂ᵀ)⁻¹ [DE-34]
            x = x - ctx.solve_M_Phi_hat_T(ctx.H_dot(ctx.Phi_hat_dot(x)))
        inverse_mass = float(G_n @ x)
        return self.impulse_bound * inverse_mass / (1.0 + float(contact.e))
