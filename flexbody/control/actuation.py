"""Actuation and rank checks of constrained task-level control [DE 5.3, AG-56, AG-62].

Counts (DE Fig. 8): n coordinates, m_C constraint rows of rank r, p = n − r degrees of freedom, m_T task
rows, k actuators. The system is *motion actuated* if k ≥ p and *task actuated* if k ≥ m_T. Beyond the
counts, each formulation needs one map to have full rank [DE 5.3]:

==========================  =================  ==============  =====================================
map                         shape              needed rank     used by
==========================  =================  ==============  =====================================
J̄ᵀΘᵀSᵀ                      (m_T, k)           m_T             direct mapping [DE-69]
J̄_pᵀCᵀSᵀ                    (m_T, k)           m_T             minimal-coordinate mapping [DE-78]
J̌ = [J; Φ]                  (m_T + r, n)       m_T + r         partitioning (Λ̌ exists) [DE-87], PIDC
S̃Φᵀ                         (n − k, m_C)       n − k           partitioning with passive joints [DE-91]
S̃[Φᵀ, Ňᵀ]                   (n − k, m_C + n)   n − k           the same, using the task null space too
(I−B)(I−P) vs (I−B)P        —                  equal ranks     Aghili's controllability [AG-56, AG-62]
==========================  =================  ==============  =====================================

Aghili's condition R((I−B)P) ⊆ R((I−B)(I−P)) is the same as S̃Φᵀ having full row rank n − k (the
columns of [V_r, C] span ℝⁿ); both are reported so the equivalence can be seen. Each check keeps the
singular values, the tolerance and the scale it is relative to and, when it fails, the reason.

The rank check of each map and its tolerances are :mod:`flexbody.control.map_check`'s; where contacts touch, the
report's contact part is :mod:`flexbody.control.contact_wrench`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ..deprecation import deprecated
from ..errors import FlexbodyError
from ..linalg.rank import on_columns, stored_columns
from ..system.description import as_assembled
from .contact_rows import TOUCHING
from .contact_wrench import ContactActuation, contact_actuation
from .context import ControlContext
from .map_check import MapCheck, check_map, check_task_map
from .maps import (
    DirectMapping,
    MinimalMapping,
    direct_mapping,
    minimal_mapping,
    partition,
    passive_map,
    stacked_jacobian,
)

if TYPE_CHECKING:
    from ..system import AssembledSystem, System
    from .tasks import Task

__all__ = ["check_independent", "check_passive_map", "ActuationReport", "actuation_report"]


@dataclass(frozen=True, eq=False)
class ActuationReport:
    """Counts and rank checks of a model (and task) at one state [DE 5.3, AG-62].

    Attributes
    ----------
    n, n_constraints (m_C), constraint_rank (r), dof (p = n − r), n_actuators (k), n_task (m_T or 0)
    motion_actuated : bool, k ≥ p;  task_actuated : bool or None, k ≥ m_T
    maps : dict name -> MapCheck (keys "direct", "minimal", "independent", "passive_constraints",
        "passive_nullspace", "aghili")
    actuated_labels, passive_labels : coordinate labels
    passive_nodal : dict body name -> number of its (passive) nodal coordinates among ``passive_labels``
    skipped : dict name -> reason, for the maps not formed on a large model (n > DENSE_MASS_LIMIT with a
        sparse Φ: "minimal", "passive_nullspace", "aghili" need dense (n, ·) arrays); a controller whose
        map was skipped is not reported as able to act.
    contact : ContactActuation or None
        Where contacts touch at the state: whether the actuators hold the task's motion and the desired normal
        forces inside the friction cones, the margin and the contacts that would open or slip
        (:mod:`flexbody.control.contact_wrench`); None without touching contacts.
    """

    n: int
    n_constraints: int
    constraint_rank: int
    dof: int
    n_actuators: int
    n_task: int
    motion_actuated: bool
    task_actuated: bool | None
    maps: dict = field(default_factory=dict)
    actuated_labels: tuple = ()
    passive_labels: tuple = ()
    skipped: dict = field(default_factory=dict)
    passive_nodal: dict = field(default_factory=dict)
    contact: ContactActuation | None = None

    REQUIREMENTS: ClassVar[dict[str, tuple[str, ...]]] = {
        "direct": ("task_actuated", "direct"),
        "minimal": ("task_actuated", "minimal"),
        "partitioned": ("independent", "passive_nullspace"),
        "pidc": ("independent", "aghili"),
        "idc": ("fully_actuated",),
    }

    def failures(self, controller: str | None = None) -> list[str]:
        """Reasons why ``controller`` ("direct", "minimal", "partitioned", "pidc", "idc") cannot act here;
        all failed checks if None."""
        keys = self.REQUIREMENTS[controller] if controller else ("motion_actuated", "task_actuated", *self.maps)
        out = []
        for key in keys:
            if key == "motion_actuated" and not self.motion_actuated:
                out.append(f"not motion actuated: k = {self.n_actuators} < p = {self.dof}")
            elif key == "task_actuated" and self.task_actuated is False:
                out.append(f"not task actuated: k = {self.n_actuators} < m_T = {self.n_task}")
            elif key == "fully_actuated" and self.n_actuators < self.n:
                out.append(
                    f"joint-space computed torque needs every coordinate actuated: k = {self.n_actuators} "
                    f"< n = {self.n} (passive: {list(self.passive_labels)})"
                )
            elif key in self.maps and not self.maps[key].ok:
                out.append(str(self.maps[key]))
            elif key in self.skipped and controller:
                out.append(f"{key} not checked: {self.skipped[key]}")
        if self.contact is not None and not self.contact.feasible:
            out.append(f"contacts {list(self.contact.contacts)}: {self.contact.reason}")
        return out

    def ok(self, controller: str | None = None) -> bool:
        """True if :meth:`failures` finds nothing: ``controller`` ("direct", "minimal", "partitioned", "pidc",
        "idc") can act here, or, if None, every check passed."""
        return not self.failures(controller)

    def __str__(self) -> str:
        lines = [
            f"n = {self.n}, m_C = {self.n_constraints} (rank {self.constraint_rank}), p = {self.dof}, "
            f"k = {self.n_actuators}, m_T = {self.n_task}",
            f"motion actuated (k ≥ p): {self.motion_actuated}; task actuated (k ≥ m_T): {self.task_actuated}",
            f"passive coordinates: {self._passive_text()}",
        ]
        lines += [f"  {key}: {check}" for key, check in self.maps.items()]
        lines += [f"  {key}: not formed ({reason})" for key, reason in self.skipped.items()]
        if self.contact is not None:
            lines.append(f"  {self.contact}")
        return "\n".join(lines)

    def _passive_text(self) -> str:
        """Passive joints by label (the joint coordinates come first), passive nodal coordinates counted per
        flexible body."""
        n_nodal = sum(self.passive_nodal.values())
        joints = self.passive_labels[: len(self.passive_labels) - n_nodal]
        text = _shortened(joints) if joints or not n_nodal else "no joint"
        if n_nodal:
            text += "; nodal coordinates: " + ", ".join(
                f"{count} of {body}" for body, count in self.passive_nodal.items()
            )
        return text


def _shortened(labels, head: int = 6) -> str:
    """``labels`` as a list, the middle elided when there are more than 2·head."""
    labels = list(labels)
    if len(labels) <= 2 * head:
        return str(labels)
    return f"{labels[:head]} … {labels[-head:]} ({len(labels)} in all)"


def aghili_condition(ctx) -> MapCheck:
    """[AG-56]: R((I−B)P) ⊆ R((I−B)(I−P)), tested as rank [Q, (I−B)P] = rank Q, Q = (I−B)(I−P)."""
    Vr, C = ctx.Phi_hat.T, ctx.nullspace
    St = ctx.S_tilde
    Q = St @ Vr  # (I−B)(I−P) restricted to its non-zero rows, in the V_r basis
    both = np.hstack([Q, St @ C])  # … together with (I−B)P in the C basis
    q_check = check_map("(I−B)(I−P)", Q, Q.shape[0], "AG-56", "", scale=1.0)
    b_check = check_map("[(I−B)(I−P), (I−B)P]", both, 0, "AG-56", "")
    ok = q_check.rank >= b_check.rank
    reason = (
        ""
        if ok
        else (
            f"R((I−B)P) is not inside R((I−B)(I−P)): ranks {b_check.rank} > {q_check.rank}; "
            "some motion needs torque at passive joints that no constraint force can cancel"
        )
    )
    return MapCheck(
        "(I−B)(I−P) ⊇ (I−B)P",
        "AG-56, AG-62",
        Q.shape,
        b_check.rank,
        q_check.rank,
        q_check.singular_values,
        q_check.tol,
        ok,
        q_check.ill_conditioned,
        reason,
        q_check.rtol,
        q_check.atol,
        q_check.reference,
        q_check.reference_name,
    )


def actuation_report(
    model: System | AssembledSystem,
    t: float | ArrayLike,
    q: ArrayLike | None = None,
    v: ArrayLike | None = None,
    *old: Any,
    task: Task | None = None,
    rtol: float | None = None,
    atol: float | None = None,
    task_acceleration: ArrayLike | None = None,
    normal_forces: ArrayLike | dict | None = None,
    margin: float = 0.0,
    touching: float = TOUCHING,
) -> ActuationReport:
    """:class:`ActuationReport` of ``model`` (an assembled system with actuation matrix S) at (t [s], q (n,),
    v (n,); v None: at rest), for ``task`` (a :class:`flexbody.control.tasks.Task`) if given:
    ``actuation_report(model, t, q, v, task=task)``. Never raises for rank deficiency; it reports.
    A :class:`flexbody.System` is assembled first.

    Where the model's contacts touch (gap within ``touching`` [m] of zero), ``report.contact`` says whether the
    actuators hold the task at ``task_acceleration`` (m_T,) (default zero) with the desired ``normal_forces`` [N]
    (one per touching contact or a dict name → N; None: any) inside the friction cones by ``margin`` [N]
    (:func:`~flexbody.control.contact_wrench.contact_actuation`).

    The order (model, q, v, task, t=) of 0.2 is deprecated (one order everywhere: the model, then t, q, v, then
    the rest); it is recognised by q in the second place and works, with a warning, until 0.4.0."""
    if np.ndim(t) > 0:  # the 0.2 order (model, q, v, task, *, t)
        deprecated("actuation_report(model, q, v, task)", "actuation_report(model, t, q, v, task=task)")
        given: tuple[Any, ...] = (t, q, v, *old, None)
        q, v, t, task = given[0], given[1], 0.0, (task if task is not None else given[2])
    elif old or q is None:
        raise FlexbodyError("actuation_report(model, t, q, v=None, *, task=None): give t and q; the task by keyword")
    asm: AssembledSystem = as_assembled(model, "actuation_report")
    ctx = ControlContext(asm, float(np.asarray(t)), q, v, rtol, atol)
    n, k, r = ctx.n, ctx.S.shape[0], ctx.rank
    p, labels = n - r, list(asm.coordinate_labels)
    maps, skipped = {}, {}
    n_pass = len(ctx.passive)
    # (S̃Φᵀ is reported with the raw rows of Φ, as DE states it; the controllers use Φ̂ with scale 1)
    maps["passive_constraints"] = check_map(
        "S̃Φᵀ",
        _passive_rows(ctx, ctx.Phi.T),
        n_pass,
        "DE 5.3, DE-91",
        "cancelling the torque at every passive joint with constraint forces",
        shape=(n_pass, ctx.Phi.shape[0]),
    )
    if ctx.large:
        skipped["aghili"] = f"needs the dense (n, p) basis of ker Φ, n = {n}"
    else:
        maps["aghili"] = aghili_condition(ctx)
    m_T = 0
    if task is not None:
        terms = ctx.task(task)
        m_T = terms.J.shape[0]
        maps.update(_task_maps(ctx, terms, n_pass, skipped))
    nodal = {
        body.name: int(
            np.count_nonzero((ctx.passive >= asm.offsets[body]) & (ctx.passive < asm.offsets[body] + body.n_dofs))
        )
        for body in getattr(asm, "bodies", ())
    }
    touches = any(abs(contact.gap(ctx.ev)) <= touching for contact in getattr(asm, "contacts", ()))
    contact = (
        contact_actuation(
            ctx,
            task=task,
            task_acceleration=task_acceleration,
            normal_forces=normal_forces,
            margin=margin,
            touching=touching,
        )
        if touches
        else None
    )
    return ActuationReport(
        n,
        ctx.Phi.shape[0],
        r,
        p,
        k,
        m_T,
        k >= p,
        (k >= m_T) if task is not None else None,
        maps,
        tuple(asm.actuated_labels),
        tuple(labels[i] for i in ctx.passive),
        skipped,
        {name: count for name, count in nodal.items() if count},
        contact,
    )


def _passive_rows(ctx, A):
    """S̃A for A (n, c) (dense or sparse): the rows of the passive coordinates. On a large model only the
    rows holding entries are kept (dropping zero rows leaves rank and singular values unchanged)."""
    rows = A[ctx.passive]
    if not ctx.large:
        return rows.toarray() if hasattr(rows, "toarray") else np.asarray(rows)
    rows = rows.tocsr()
    return rows[np.flatnonzero(np.diff(rows.indptr))].toarray()


def _task_maps(ctx, terms, n_pass: int, skipped: dict) -> dict:
    maps, m_T = {}, terms.J.shape[0]
    builders: list[tuple[str, Callable[..., DirectMapping | MinimalMapping], str, str]] = [
        ("direct", direct_mapping, "J̄ᵀΘᵀSᵀ", "DE-69, DE 5.3")
    ]
    if ctx.large:
        skipped["minimal"] = f"needs the dense (n, p) basis of ker Φ, n = {ctx.n}"
    else:
        builders.append(("minimal", minimal_mapping, "J̄_pᵀCᵀSᵀ", "DE-78, DE 5.3"))
    for key, build, name, source in builders:
        try:
            mapping = build(ctx, terms)
        except FlexbodyError as exc:  # singular J M⁻¹ Jᵀ, or no degree of freedom
            maps[key] = MapCheck(
                name, source, (m_T, ctx.S.shape[0]), m_T, 0, np.zeros(0), 0.0, False, False, f"{name} undefined: {exc}"
            )
            continue
        maps[key] = check_task_map(name, source, mapping, m_T)
    maps["independent"] = check_independent(ctx, terms, "DE-83, DE-87")
    if ctx.large:
        skipped["passive_nullspace"] = f"needs the (n, n) task null-space projector Ňᵀ, n = {ctx.n}"
    else:
        maps["passive_nullspace"] = check_passive_map(ctx, partition(ctx, terms))
    return maps


def check_independent(ctx, terms, source: str) -> MapCheck:
    """J̌ = [J; Φ] must have full row rank m_T + r: the task is independent of the constraints [DE-87].
    On a large model the check is made on the columns of J̌ that hold entries (same rank and σ)."""
    if ctx.large:
        stacked = sp.vstack([sp.csr_matrix(terms.J), ctx.Phi_hat]).tocsr()
        J_check = on_columns(stacked, stored_columns(stacked))
    else:
        J_check = stacked_jacobian(ctx, terms)
    return check_map(
        "J̌ = [J; Φ]",
        J_check,
        J_check.shape[0],
        source,
        "commanding the task independently of the constraints",
        shape=(J_check.shape[0], ctx.n),
    )


def check_passive_map(ctx, osp) -> MapCheck:
    """S̃[Φ̂ᵀ, Ňᵀ] must have full row rank n − k: every passive-joint torque can be cancelled [DE-91]."""
    return check_map(
        "S̃[Φᵀ, Ňᵀ]",
        passive_map(ctx, osp),
        len(ctx.passive),
        "DE-91 with the task null space",
        "cancelling the torque at every passive joint with constraint forces and null-space torques",
        scale=1.0,
    )
