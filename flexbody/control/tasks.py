"""Task coordinates x(q) and the operational-space quantities Λ, μ, p, J̄, Nᵀ [DE-43..64, MR].

A task maps the global coordinates q of an assembled system to m task coordinates x(q) with

    ẋ = J v  [DE-43],    ẍ = J a + J̇v,

J (m, n) dense in the global coordinates and the bias J̇v the classical task acceleration at a = 0.
Tasks: :class:`PointTask` (world components of an anchor's position), :class:`PlanarOrientationTask`
(angle of a frame about world z), :class:`OrientationTask` (3 angular rows of a frame),
:class:`JointTask` (selected joint coordinates) and :class:`StackedTask`. Nodal coordinates of
flexible bodies will be added with the flexible–rigid assembly.

With τ = Jᵀf + Nᵀτ₀ = M a + b + g [DE-47], the operational-space quantities are

    Λ = (J M⁻¹ Jᵀ)⁻¹,   J̄ = M⁻¹ Jᵀ Λ,   μ = J̄ᵀ b − Λ J̇v,   p = J̄ᵀ g        [DE-50, DE-53]
    Nᵀ = I − Jᵀ J̄ᵀ,   J M⁻¹ Nᵀ = 0 (dynamic consistency)                      [DE-49, DE-57, DE-58]
    f = Λ ẍ + μ + p                                                           [DE-51, DE-52]

J̄ẋ is the q̇ of least kinetic energy ½q̇ᵀMq̇ with J q̇ = ẋ [DE-59..61] and J̄(ẍ − J̇v) the q̈ of least
acceleration energy with J q̈ = ẍ − J̇v [DE-62..64]. For a non-redundant task (m = n) the same formulas
give Λ = J⁻ᵀ M J⁻¹ and μ + p = η = J⁻ᵀh − Λ J̇ J⁻¹ẋ of [MR]. M⁻¹ is applied by a Cholesky factor of M
(never formed); Λ is the inverse of the small m×m matrix J M⁻¹ Jᵀ.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from math import isfinite
from typing import TYPE_CHECKING, TypeAlias

import numpy as np
from numpy.typing import ArrayLike

from ..deprecation import renamed_keyword
from ..errors import ModelError, StateError
from ..rigid.anchors import Anchor, FrameAnchor
from ..rigid.link import Link
from ..system.description import as_assembled

if TYPE_CHECKING:
    from ..io.results import Results
    from ..system import AssembledSystem, System, Workspace

logger = logging.getLogger(__name__)

__all__ = [
    "DEFAULT_RTOL",
    "DEFAULT_ATOL",
    "TaskTerms",
    "Task",
    "PointTask",
    "PlanarOrientationTask",
    "OrientationTask",
    "JointTask",
    "StackedTask",
    "task_history",
    "rotation_vector",
    "orientation_error",
    "wrap_angle",
]

DEFAULT_RTOL = 1e-9
"""Default relative tolerance on the singular values σ_i of J M⁻¹ Jᵀ: σ_i ≤ rtol·σ_max counts as zero.

J M⁻¹ Jᵀ is quadratic in J, so 1e-9 corresponds to a mass-weighted J with condition number ≈ 3e4; Λ
then amplifies round-off by at most 1e9."""

DEFAULT_ATOL = 1e-12
"""Rows of J with a norm ≤ atol (units of the task row per unit of q) are zero rows: rank 0 if all are."""

_XYZ = "xyz"

Desired: TypeAlias = "ArrayLike | Sequence[ArrayLike]"
"""A task's desired value, what :meth:`Task.error` takes: an (m,) array, a 3×3 rotation matrix (OrientationTask)
or a sequence of these, one per stacked task (StackedTask)."""


def wrap_angle(angle, reference=0.0):
    """``angle`` shifted by a multiple of 2π into [reference − π, reference + π) [rad]."""
    return reference + np.mod(np.asarray(angle, dtype=float) - reference + np.pi, 2.0 * np.pi) - np.pi


def rotation_vector(R) -> np.ndarray:
    """Rotation vector θ·axis (3,) [rad] of a rotation matrix R (3, 3), with θ ∈ [0, π] (log map).

    Accurate near θ = 0 (series of θ/sin θ) and near θ = π (axis from the symmetric part of R); at
    exactly θ = π either of the two opposite vectors is returned.
    """
    R = np.asarray(R, dtype=float)
    w = 0.5 * np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])  # sin θ · axis
    s = float(np.linalg.norm(w))
    c = float(np.clip(0.5 * (np.trace(R) - 1.0), -1.0, 1.0))
    theta = np.arctan2(s, c)
    if c > -0.9:
        return w * (1.0 + theta * theta / 6.0) if theta < 1e-6 else w * (theta / s)
    B = 0.5 * (R + R.T) - c * np.eye(3)  # (1 − cos θ) axis axisᵀ
    k = int(np.argmax(np.diagonal(B)))
    axis = B[:, k] / np.sqrt(B[k, k] * (1.0 - c))
    if axis @ w < 0.0:
        axis = -axis
    return theta * axis


def orientation_error(R_desired, R) -> np.ndarray:
    """Rotation vector (3,) [rad], world axes, of R_desired Rᵀ: the rotation that takes R to R_desired.

    For small errors its rate is ω_desired − ω, so it is the orientation error e of a task-space
    controller ẍ* = ẋ_d' + K_d (ω_d − ω) + K_p e.
    """
    return rotation_vector(np.asarray(R_desired, dtype=float) @ np.asarray(R, dtype=float).T)


@dataclass(frozen=True, eq=False)
class TaskTerms:
    """A task evaluated at one state: x (m,), J (m, n) dense in the global coordinates, bias (m,) = J̇v
    (so ẍ = J a + bias), xdot (m,) = J v, and the row labels (m)."""

    x: np.ndarray
    J: np.ndarray
    bias: np.ndarray
    xdot: np.ndarray
    row_labels: tuple = ()


# ------------------------------------------------------------------------------------------------ tasks
class Task:
    """Base class of tasks (subclasses set ``n_rows``, ``row_names``, ``trees`` and ``evaluate``).

    ``evaluate(ev)`` takes the :class:`~flexbody.system.Workspace` of a state (:meth:`AssembledSystem.workspace`)
    and returns :class:`TaskTerms`; ``row_labels`` are ``"name.row"``.
    """

    kind = "task"
    n_rows: int = 0
    row_names: tuple = ()
    trees: tuple = ()

    def __init__(self, name: str | None) -> None:
        if name is not None and (not isinstance(name, str) or not name):
            raise ModelError(f"{type(self).__name__}: name must be a non-empty string, got {name!r}")
        self.name = name if name is not None else self._default_name()

    def _default_name(self) -> str:
        return self.kind

    @property
    def row_labels(self) -> list[str]:
        """(n_rows,) labels of the task rows, ``"name.row"``, e.g. ``'tip.x'``."""
        return [f"{self.name}.{r}" for r in self.row_names]

    @property
    def units(self) -> tuple[str, ...]:
        """Unit of each task coordinate (m,), also of its error; "-" unless the subclass says."""
        return ("-",) * self.n_rows

    def units_in(self, asm: AssembledSystem) -> tuple[str, ...]:
        """:attr:`units` with coordinates named by label resolved against the assembled system ``asm``."""
        return self.units

    def evaluate(self, ev: Workspace) -> TaskTerms:
        """The task's :class:`TaskTerms` (x (m,), J (m, n), bias J̇v (m,), ẋ (m,)) at the evaluation context
        ``ev`` (:meth:`AssembledSystem.workspace`); subclasses implement it."""
        raise NotImplementedError

    def error(self, desired: Desired, ev: Workspace, terms: TaskTerms | None = None) -> np.ndarray:
        """Task error x_desired − x (m,) at ``ev`` (angles wrapped, rotations as rotation vectors); ``terms``
        are this task's terms at ``ev`` when already evaluated."""
        desired = np.asarray(desired, dtype=float)
        if desired.shape != (self.n_rows,) or not np.all(np.isfinite(desired)):
            raise StateError(
                f"task {self.name!r}: desired value must be {self.n_rows} finite numbers, got shape {desired.shape}"
            )
        return desired - (self.evaluate(ev) if terms is None else terms).x

    def _n_dofs(self, ev: Workspace) -> int:
        asm = ev.asm
        for tree in self.trees:
            if tree not in asm.offsets:
                raise ModelError(
                    f"task {self.name!r} refers to tree {tree.name!r}, which is not in the "
                    f"assembled system (trees: {[t.name for t in asm.trees]})"
                )
        return asm.n_dofs

    def _terms(self, x, J, bias, xdot) -> TaskTerms:
        return TaskTerms(x, J, bias, xdot, tuple(self.row_labels))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, {self.n_rows} rows)"


def _anchor(anchor, who: str, frame: bool = False):
    cls = FrameAnchor if frame else Anchor
    if not isinstance(anchor, cls):
        what = (
            "a frame anchor (RigidTree.frame)"
            if frame
            else "an anchor (RigidTree.point, RigidTree.frame or a flexible node fb.Node(body, index))"
        )
        raise ModelError(f"{who}: expected {what}, got {anchor!r}")
    if not anchor.trees and not getattr(anchor, "bodies", ()):
        raise ModelError(
            f"{who}: anchor {anchor.label!r} is fixed in the world (no coordinates move it); "
            "a task needs an anchor on a body"
        )
    return anchor


def _scatter(rows: int, n: int, cols, block) -> np.ndarray:
    J = np.zeros((rows, n))
    if len(cols):
        J[:, cols] = block
    return J


class PointTask(Task):
    """x = selected world components of an anchor's position [m]; J = rows of the point Jacobian.

    Parameters
    ----------
    anchor : LinkPoint or LinkFrame (its origin), made by ``tree.point`` / ``tree.frame``, or a flexible
        :class:`~flexbody.constraints.nodes.Node` (a nodal task coordinate [DE 6.3, Fig. 16]).
    components : sequence of distinct ints in (0, 1, 2); default all three (x, y, z world).
    name : str, optional; default the anchor's label. Row labels ``"name.x"`` etc.
    """

    kind = "point"

    def __init__(self, anchor: Anchor, components: Sequence[int] = (0, 1, 2), name: str | None = None) -> None:
        self.anchor = _anchor(anchor, f"PointTask {name!r}" if name else "PointTask")
        super().__init__(name)
        comps = np.asarray(components).ravel()
        if (
            comps.size == 0
            or not np.issubdtype(comps.dtype, np.integer)
            or len(set(comps.tolist())) != comps.size
            or comps.min() < 0
            or comps.max() > 2
        ):
            raise ModelError(
                f"PointTask {self.name!r}: components must be distinct values of 0, 1, 2, got {components!r}"
            )
        self.components = comps.astype(np.int64)
        self.n_rows, self.row_names = comps.size, tuple(_XYZ[c] for c in self.components)
        self.trees = tuple(anchor.trees)

    @property
    def units(self) -> tuple[str, ...]:
        """Positions [m] (commanded accelerations [m/s²])."""
        return ("m",) * self.n_rows

    def _default_name(self) -> str:
        return self.anchor.label

    def evaluate(self, ev: Workspace) -> TaskTerms:
        """:class:`TaskTerms` at ``ev``: the selected world components of the anchor's position x (m,) [m],
        the rows of its point Jacobian J (m, n), bias J̇v (m,) [m/s²] and velocity ẋ (m,) [m/s]."""
        n, c = self._n_dofs(ev), self.components
        cols, block = self.anchor.jacobian(ev)
        J = _scatter(len(c), n, cols, block[c])  # [DE-43]
        return self._terms(self.anchor.position(ev)[c], J, self.anchor.bias(ev)[c], self.anchor.velocity(ev)[c])


class PlanarOrientationTask(Task):
    """x = θ = atan2(R[1, 0], R[0, 0]) [rad], the angle of a frame's x axis about world z.

    For a frame that rotates about world z (planar mechanisms) θ is its rotation angle and J is the
    ω_z row of its angular Jacobian. In general θ is the azimuth of the frame's x axis u = R e_x, and
    J, J̇v are its exact derivatives: θ̇ = c·ω with c = (−u_z u_x/ρ², −u_z u_y/ρ², 1), ρ² = u_x² + u_y²
    (θ is undefined when u is parallel to z: StateError).

    Angles wrap: θ is returned in [reference − π, reference + π). With ``tracking=True`` the reference
    becomes the last angle returned by :meth:`evaluate`, so a frame turning many times gives a
    continuous θ as long as it turns by less than π between evaluations (the task object then holds
    state; give each run its own task). :meth:`error` wraps θ_d − θ into [−π, π).
    """

    kind = "angle"

    def __init__(
        self, frame: FrameAnchor, name: str | None = None, *, reference: float = 0.0, tracking: bool = False
    ) -> None:
        self.frame = _anchor(frame, f"PlanarOrientationTask {name!r}" if name else "PlanarOrientationTask", True)
        super().__init__(name)
        reference = float(reference)
        if not isfinite(reference):
            raise ModelError(f"PlanarOrientationTask {self.name!r}: reference must be finite, got {reference}")
        self.reference, self.tracking = reference, bool(tracking)
        self.n_rows, self.row_names = 1, ("rz",)
        self.trees = tuple(frame.trees)

    @property
    def units(self) -> tuple[str, ...]:
        """An angle [rad] (commanded acceleration [rad/s²])."""
        return ("rad",)

    def _default_name(self) -> str:
        return self.frame.label

    def evaluate(self, ev: Workspace) -> TaskTerms:
        """:class:`TaskTerms` at ``ev``: θ (1,) [rad] (wrapped about the reference, which it updates with
        ``tracking``), J (1, n), bias J̇v (1,) [rad/s²] and θ̇ (1,) [rad/s]; StateError when the frame's x axis
        is parallel to world z."""
        n = self._n_dofs(ev)
        u = self.frame.rotation(ev)[:, 0]
        rho2 = u[0] ** 2 + u[1] ** 2
        if rho2 < 1e-12:
            raise StateError(
                f"task {self.name!r}: the frame's x axis is parallel to world z "
                f"(u = {np.round(u, 6)}); its angle about z is undefined"
            )
        theta = float(wrap_angle(np.arctan2(u[1], u[0]), self.reference))
        if self.tracking:
            self.reference = theta
        w, alpha = self.frame.angular_velocity(ev), self.frame.angular_bias(ev)
        cols, Jw = self.frame.angular_jacobian(ev)
        c = np.array([-u[2] * u[0] / rho2, -u[2] * u[1] / rho2, 1.0])
        ud = np.cross(w, u)
        udd = np.cross(alpha, u) + np.cross(w, ud)  # ü at a = 0
        theta_dot = (u[0] * ud[1] - u[1] * ud[0]) / rho2
        bias = (u[0] * udd[1] - u[1] * udd[0]) / rho2 - 2.0 * theta_dot * (u[0] * ud[0] + u[1] * ud[1]) / rho2
        J = _scatter(1, n, cols, (c @ Jw)[None, :])
        return self._terms(np.array([theta]), J, np.array([bias]), np.array([theta_dot]))

    def error(self, desired: Desired, ev: Workspace, terms: TaskTerms | None = None) -> np.ndarray:
        d = np.asarray(desired, dtype=float).reshape(-1)
        if d.shape != (1,) or not np.isfinite(d[0]):
            raise StateError(f"task {self.name!r}: desired angle must be one finite number, got {desired!r}")
        return wrap_angle(d - (self.evaluate(ev) if terms is None else terms).x)


class OrientationTask(Task):
    """Full orientation of a frame: 3 rows with J = its angular Jacobian (world axes), J̇v = its angular
    bias acceleration, ẋ = ω.

    There is no global coordinate whose rate is ω; x is reported as the rotation vector of R (log map,
    :func:`rotation_vector`) for information and export, and ẋ = J v is ω, not dx/dt. For control use
    :meth:`error` (R_desired) = rotation vector of R_desired Rᵀ (:func:`orientation_error`).
    """

    kind = "orientation"

    def __init__(self, frame: FrameAnchor, name: str | None = None) -> None:
        self.frame = _anchor(frame, f"OrientationTask {name!r}" if name else "OrientationTask", True)
        super().__init__(name)
        self.n_rows, self.row_names = 3, ("rx", "ry", "rz")
        self.trees = tuple(frame.trees)

    @property
    def units(self) -> tuple[str, ...]:
        """Rotation-vector components [rad] (commanded angular accelerations [rad/s²])."""
        return ("rad",) * 3

    def _default_name(self) -> str:
        return self.frame.label

    def evaluate(self, ev: Workspace) -> TaskTerms:
        """:class:`TaskTerms` at ``ev``: x (3,) the rotation vector of R [rad], J (3, n) the angular Jacobian
        (world axes), bias (3,) the angular bias acceleration [rad/s²] and ẋ (3,) = ω [rad/s]."""
        n = self._n_dofs(ev)
        cols, Jw = self.frame.angular_jacobian(ev)
        return self._terms(
            rotation_vector(self.frame.rotation(ev)),
            _scatter(3, n, cols, Jw),
            np.array(self.frame.angular_bias(ev), dtype=float),
            np.array(self.frame.angular_velocity(ev), dtype=float),
        )

    def error(self, desired: Desired, ev: Workspace, terms: TaskTerms | None = None) -> np.ndarray:
        """Rotation vector (3,) of R_desired Rᵀ [rad], world axes; ``desired`` is a rotation matrix."""
        R_d = np.asarray(desired, dtype=float)
        if R_d.shape != (3, 3) or not np.all(np.isfinite(R_d)) or np.abs(R_d.T @ R_d - np.eye(3)).max() > 1e-9:
            raise StateError(f"task {self.name!r}: desired orientation must be a 3×3 rotation matrix")
        return orientation_error(R_d, self.frame.rotation(ev))


class JointTask(Task):
    """x = selected joint coordinates; J = unit rows, J̇v = 0.

    Parameters
    ----------
    links : Link, str or sequence of them
        Links with a joint coordinate, or coordinate labels ``"tree.link"`` (resolved against the
        assembled system's ``coordinate_labels`` when evaluated).
    name : str, optional; default ``"joints"``. Row labels ``"name.tree.link"``.
    """

    kind = "joints"

    def __init__(self, links: Link | str | Sequence[Link | str], name: str | None = None) -> None:
        super().__init__(name)
        items = [links] if isinstance(links, (Link, str)) else list(links) if isinstance(links, Sequence) else None
        if not items:
            raise ModelError(
                f"JointTask {self.name!r}: links must be a Link, a label 'tree.link' or a non-empty "
                f"sequence of them, got {links!r}"
            )
        rows = []
        for item in items:
            if isinstance(item, Link):
                if item.coordinate is None:
                    raise ModelError(
                        f"JointTask {self.name!r}: link {item.name!r} of tree {item.tree.name!r} has "
                        "a fixed joint (no coordinate)"
                    )
                rows.append(f"{item.tree.name}.{item.name}")
            elif isinstance(item, str) and item:
                rows.append(item)
            else:
                raise ModelError(f"JointTask {self.name!r}: expected a Link or a label 'tree.link', got {item!r}")
        if len(set(rows)) != len(rows):
            repeated = sorted({r for r in rows if rows.count(r) > 1})
            raise ModelError(f"JointTask {self.name!r}: repeated coordinates {repeated}")
        self.items, self.n_rows, self.row_names = items, len(items), tuple(rows)
        self.trees = tuple({i.tree: None for i in items if isinstance(i, Link)})

    @property
    def units(self) -> tuple[str, ...]:
        """Each joint's unit, "rad" or "m"; "rad or m" for a joint given by label (see :meth:`units_in`)."""
        return tuple(item.joint.unit if isinstance(item, Link) else "rad or m" for item in self.items)

    def units_in(self, asm: AssembledSystem) -> tuple[str, ...]:
        """Each joint's unit, a joint given by label looked up in ``asm.coordinate_labels`` ("rad or m" if
        it is not there)."""
        labels, units = list(asm.coordinate_labels), list(asm.coordinate_units)
        return tuple(
            item.joint.unit if isinstance(item, Link) else units[labels.index(label)] if label in labels else "rad or m"
            for item, label in zip(self.items, self.row_names)
        )

    def indices(self, asm: AssembledSystem) -> np.ndarray:
        """Global coordinate indices (m,) of the task's joints in ``asm``."""
        out = []
        for item, label in zip(self.items, self.row_names):
            if isinstance(item, Link):
                if item.tree not in asm.offsets:
                    raise ModelError(
                        f"task {self.name!r} refers to tree {item.tree.name!r}, which is not in the "
                        f"assembled system (trees: {[t.name for t in asm.trees]})"
                    )
                out.append(asm.offsets[item.tree] + item.coordinate)
            elif label in asm.coordinate_labels:
                out.append(asm.coordinate_labels.index(label))
            else:
                raise ModelError(
                    f"task {self.name!r}: no coordinate {label!r}; coordinates are {asm.coordinate_labels}"
                )
        return np.array(out, dtype=np.int64)

    def evaluate(self, ev: Workspace) -> TaskTerms:
        """:class:`TaskTerms` at ``ev``: the selected joint coordinates x (m,) [rad or m], unit rows J (m, n),
        zero bias (m,) and their velocities ẋ (m,)."""
        idx = self.indices(ev.asm)
        J = np.zeros((len(idx), ev.asm.n_dofs))
        J[np.arange(len(idx)), idx] = 1.0
        return self._terms(ev.q[idx].copy(), J, np.zeros(len(idx)), ev.v[idx].copy())


class StackedTask(Task):
    """Tasks stacked in order: x, J, J̇v and row labels are concatenated (labels must be unique).

    :meth:`error` takes one desired value per task (a sequence, or an array with a row per task) or the stacked
    values as one flat array.
    """

    kind = "stack"

    def __init__(self, tasks: Sequence[Task], name: str | None = None) -> None:
        super().__init__(name)
        tasks = list(tasks) if isinstance(tasks, Sequence) else None
        if not tasks:
            raise ModelError(f"StackedTask {self.name!r}: needs a non-empty sequence of tasks")
        for task in tasks:
            if not isinstance(task, Task):
                raise ModelError(f"StackedTask {self.name!r}: {task!r} is not a Task")
        labels = [lab for task in tasks for lab in task.row_labels]
        if len(set(labels)) != len(labels):
            raise ModelError(
                f"StackedTask {self.name!r}: repeated row labels "
                f"{sorted({lab for lab in labels if labels.count(lab) > 1})}; give the tasks names"
            )
        self.tasks, self._labels = tasks, labels
        self.n_rows = len(labels)
        self.trees = tuple({tree: None for task in tasks for tree in task.trees})

    @property
    def row_labels(self) -> list[str]:
        """(n_rows,) labels of the stacked tasks' rows, in order."""
        return list(self._labels)

    @property
    def units(self) -> tuple[str, ...]:
        """The stacked tasks' units, in order."""
        return tuple(u for task in self.tasks for u in task.units)

    def units_in(self, asm: AssembledSystem) -> tuple[str, ...]:
        """The stacked tasks' units against ``asm``, in order."""
        return tuple(u for task in self.tasks for u in task.units_in(asm))

    def evaluate(self, ev: Workspace) -> TaskTerms:
        """:class:`TaskTerms` at ``ev`` with x, J, bias, ẋ and row labels of the stacked tasks concatenated
        in order (m = the sum of their rows)."""
        parts = [task.evaluate(ev) for task in self.tasks]
        return TaskTerms(
            np.concatenate([p.x for p in parts]),
            np.vstack([p.J for p in parts]),
            np.concatenate([p.bias for p in parts]),
            np.concatenate([p.xdot for p in parts]),
            tuple(self._labels),
        )

    def error(self, desired: Desired, ev: Workspace, terms: TaskTerms | None = None) -> np.ndarray:
        """Errors (m,) of the stacked tasks: ``desired`` one value per task (a sequence, or an array with a row per
        task), or the stacked values (m,) as one flat array."""
        return np.concatenate([task.error(d, ev) for task, d in zip(self.tasks, self.split(desired))])

    def split(self, desired: Desired) -> list:
        """``desired`` as one value per stacked task: a sequence or an array (k, ·) of k values, or a flat array
        of the m stacked values cut at the tasks' rows; StateError otherwise."""
        if isinstance(desired, np.ndarray) and desired.ndim == 1 and desired.size == self.n_rows:
            return np.split(desired, np.cumsum([task.n_rows for task in self.tasks])[:-1])
        if (isinstance(desired, Sequence) or (isinstance(desired, np.ndarray) and desired.ndim >= 1)) and len(
            desired
        ) == len(self.tasks):
            return list(desired)
        raise StateError(
            f"task {self.name!r}: desired must be {len(self.tasks)} values, one per stacked task (a sequence or an "
            f"array with a row per task), or the {self.n_rows} stacked values as one flat array"
        )


@renamed_keyword("asm", "model")
def task_history(
    model: System | AssembledSystem, task: Task, results: Results
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """x, ẋ and ẍ = J a + J̇v (each (s, m)) of ``task`` along a dynamic run of ``model`` (Results with
    ``q``, ``v`` and the accelerations ``histories["a"]``): the task as the plant moved, e.g. to compare
    ẍ with a controller's commanded f* ("task_command")."""
    asm = as_assembled(model, "task_history")
    if not isinstance(task, Task):
        raise ModelError(f"task_history: expected a Task, got {task!r}")
    if "a" not in results.histories or results.v is None:
        raise StateError("task_history needs a dynamic run with velocities and the history 'a'")
    x, xd, xdd = [], [], []
    for t, q, v, a in zip(results.times, results.q, results.v, results.histories["a"]):
        terms = task.evaluate(asm.workspace(t, q, v))
        x.append(terms.x)
        xd.append(terms.xdot)
        xdd.append(terms.J @ a + terms.bias)
    return np.array(x), np.array(xd), np.array(xdd)
