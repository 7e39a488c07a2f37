"""AssembledSystem: a frozen system that evaluates the terms of the constrained equations at a state.

    τ = M(q) a + h(q, v) − Φᵀλ,    Φ a + bias = 0,    Φ v + φ_t = 0,    φ(q, t) = 0        [DE-2..7]

Global coordinates stack the joint coordinates of each rigid tree in the order given [DE-110]; M is
block diagonal with one dense block per tree, h = b + g per tree, and Φ stacks the rows of every
constraint in order. Solvers and controllers see only these pure functions of (t, q, v) (see
``docs/architecture.md``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import StateError
from .rigid.tree import Kinematics


@dataclass(frozen=True)
class State:
    """Time t [s], coordinates q (n,) and velocities v (n,) of an assembled system."""

    t: float
    q: np.ndarray
    v: np.ndarray


@dataclass(frozen=True)
class Terms:
    """The terms of the constrained equations at one state (shapes: n coordinates, m constraint rows).

    M (n, n), h (n,) = b + g, Phi (m, n), bias (m,) with Φa + bias = 0, phi (m,) = φ(q, t),
    phi_t (m,) with Φv + φ_t = 0.
    """

    M: np.ndarray
    h: np.ndarray
    Phi: np.ndarray
    bias: np.ndarray
    phi: np.ndarray
    phi_t: np.ndarray


class Evaluation:
    """Kinematics of every tree at one (t, q, v), computed on first use; the context anchors read."""

    def __init__(self, asm: "AssembledSystem", t: float, q: np.ndarray, v: np.ndarray):
        self.asm, self.t, self.q, self.v = asm, float(t), q, v
        self._kin, self._batches, self._single = {}, {}, {}

    def offset(self, tree) -> int:
        return self.asm.offsets[tree]

    def columns(self, tree) -> np.ndarray:
        return self.asm.columns[tree]

    def point(self, anchor):
        """(x (3,), ẋ (3,), J (3, n_tree), J̇v (3,)) of a link point anchor; one numba pass per tree."""
        tree = anchor.link.tree
        slot = self.asm.point_slots[tree][0].get(anchor) if tree in self.asm.point_slots else None
        if slot is None:
            out = self._single.get(anchor)
            if out is None:
                X, Xd, J, B = self.kinematics(tree)._point(anchor.link, anchor.offset)
                out = self._single[anchor] = (X[0], Xd[0], J[0], B[0])
            return out
        batch = self._batches.get(tree)
        if batch is None:
            _, index, offsets = self.asm.point_slots[tree]
            batch = self._batches[tree] = self.kinematics(tree).points(index, offsets)
        return batch[0][slot], batch[1][slot], batch[2][slot], batch[3][slot]

    def kinematics(self, tree):
        kin = self._kin.get(tree)
        if kin is None:
            s = self.asm.slices[tree]
            kin = self._kin[tree] = Kinematics(tree, self.q[s], self.v[s])     # q, v validated once
        return kin


class AssembledSystem:
    """Frozen rigid trees and holonomic constraints of a :class:`flexbody.System`.

    Attributes
    ----------
    trees : list of RigidTree; offsets : dict tree -> first column; slices : dict tree -> slice
    constraints : list of Constraint; n_dofs, n_constraints : int
    coordinate_labels : list[str] (n); row_labels : list[str] (m)
    S : (k, n) actuation (selection) matrix of the actuated joint coordinates; actuated_labels (k)
    """

    def __init__(self, trees, constraints, actuated_links=None, q0=None):
        self.trees = list(trees)
        self.offsets, self.slices, start = {}, {}, 0
        for tree in self.trees:
            self.offsets[tree] = start
            self.slices[tree] = slice(start, start + tree.n_dofs)
            start += tree.n_dofs
        self.n_dofs = start
        self.constraints = list(constraints)
        self.row_slices, row = [], 0
        for c in self.constraints:
            self.row_slices.append(slice(row, row + c.n_rows))
            row += c.n_rows
        self.n_constraints = row
        self.columns = {tree: np.arange(s.start, s.stop) for tree, s in self.slices.items()}
        self.point_slots = self._register_points()
        self.coordinate_labels = [lab for tree in self.trees for lab in tree.coordinate_labels]
        self.row_labels = [lab for c in self.constraints for lab in c.row_labels]
        self.body_slices = {tree.name: (s.start, s.stop) for tree, s in self.slices.items()}
        if actuated_links is None:
            cols = np.arange(self.n_dofs)
        else:
            cols = np.array([self.offsets[l.tree] + l.coordinate for l in actuated_links], dtype=np.int64)
        self.S = np.zeros((len(cols), self.n_dofs))
        self.S[np.arange(len(cols)), cols] = 1.0
        self.actuated_labels = [self.coordinate_labels[c] for c in cols]
        self.q0 = np.zeros(self.n_dofs) if q0 is None else np.asarray(q0, dtype=float)

    def _register_points(self) -> dict:
        """Link-point anchors of the constraints, per tree: ({anchor: slot}, link indices, offsets)."""
        from .anchors import LinkPoint
        slots = {}
        for c in self.constraints:
            for a in c.anchors:
                if isinstance(a, LinkPoint):
                    table = slots.setdefault(a.link.tree, {})
                    table.setdefault(a, len(table))
        return {tree: (table, np.array([a.link.index for a in table], dtype=np.int64),
                       np.array([a.offset for a in table], dtype=float).reshape(-1, 3))
                for tree, table in slots.items()}

    # ------------------------------------------------------------------ validation
    def _state(self, q, v=None) -> tuple[np.ndarray, np.ndarray]:
        q = np.asarray(q, dtype=float)
        v = np.zeros(self.n_dofs) if v is None else np.asarray(v, dtype=float)
        for name, x in (("q", q), ("v", v)):
            if x.shape != (self.n_dofs,):
                raise StateError(f"{name} must have shape ({self.n_dofs},), got {x.shape}")
            if not np.all(np.isfinite(x)):
                bad = [self.coordinate_labels[i] for i in np.flatnonzero(~np.isfinite(x))]
                raise StateError(f"{name} contains NaN or Inf at {bad}")
        return q, v

    def evaluate(self, t: float, q, v=None) -> Evaluation:
        q, v = self._state(q, v)
        return Evaluation(self, t, q, v)

    # ------------------------------------------------------------------ terms
    def mass_and_forces(self, ev: Evaluation) -> tuple[np.ndarray, np.ndarray]:
        """Block-diagonal M (n, n) and h = b + g (n,)."""
        M = np.zeros((self.n_dofs, self.n_dofs))
        h = np.empty(self.n_dofs)
        for tree, s in self.slices.items():
            kin = ev.kinematics(tree)
            M[s, s] = kin.mass_matrix()
            h[s] = kin.inverse_dynamics()
        return M, h

    def mass_bias_gravity(self, ev: Evaluation) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """M (n, n), b (n,) and g (n,) separately [DE-2] (two RNEA passes; operational space needs them)."""
        M = np.zeros((self.n_dofs, self.n_dofs))
        b, g = np.empty(self.n_dofs), np.empty(self.n_dofs)
        for tree, s in self.slices.items():
            kin = ev.kinematics(tree)
            M[s, s] = kin.mass_matrix()
            b[s] = kin.inverse_dynamics(gravity=False)
            g[s] = kin.inverse_dynamics(velocity=False)
        return M, b, g

    def gravity_force(self, ev: Evaluation) -> np.ndarray:
        """g (n,), the joint forces that hold the trees still against gravity [DE-2] (one RNEA pass)."""
        g = np.empty(self.n_dofs)
        for tree, s in self.slices.items():
            g[s] = ev.kinematics(tree).inverse_dynamics(velocity=False)
        return g

    def constraint_rows(self, ev: Evaluation, jacobian: bool = True):
        """φ (m,), Φ (m, n) dense (or None), bias (m,), φ_t (m,)."""
        m = self.n_constraints
        phi, bias, phi_t = np.empty(m), np.empty(m), np.zeros(m)
        Phi = np.zeros((m, self.n_dofs)) if jacobian else None
        for c, rs in zip(self.constraints, self.row_slices):
            rows = c.evaluate(ev)
            phi[rs] = rows.phi
            bias[rs] = rows.bias
            if rows.phi_t is not None:
                phi_t[rs] = rows.phi_t
            if jacobian:
                for cols, block in rows.pieces:
                    if len(cols):
                        Phi[rs, cols] += block
        return phi, Phi, bias, phi_t

    def terms(self, t: float, q, v=None) -> Terms:
        """All terms of the constrained equations at (t, q, v)."""
        ev = self.evaluate(t, q, v)
        M, h = self.mass_and_forces(ev)
        phi, Phi, bias, phi_t = self.constraint_rows(ev)
        return Terms(M, h, Phi, bias, phi, phi_t)

    def constraint_value(self, t: float, q) -> np.ndarray:
        return self.constraint_rows(self.evaluate(t, q), jacobian=False)[0]

    def constraint_jacobian(self, t: float, q) -> np.ndarray:
        return self.constraint_rows(self.evaluate(t, q))[1]

    def constraint_rate(self, t: float, q) -> np.ndarray:
        return self.constraint_rows(self.evaluate(t, q), jacobian=False)[3]

    def energy(self, q, v) -> tuple[float, float]:
        """Kinetic and gravitational potential energy [J]."""
        ev = self.evaluate(0.0, q, v)
        kins = [ev.kinematics(tree) for tree in self.trees]
        return sum(k.kinetic_energy() for k in kins), sum(k.potential_energy() for k in kins)

    def initial_state(self) -> State:
        return State(0.0, self.q0.copy(), np.zeros(self.n_dofs))

    def rank_report(self, t: float, q, rtol=None):
        """Rank of Φ(q) with singular values, tolerance and redundant rows (:func:`analysis.constraint_rank`)."""
        from .analysis import constraint_rank
        return constraint_rank(self.constraint_jacobian(t, q), rtol=rtol, row_labels=self.row_labels)
