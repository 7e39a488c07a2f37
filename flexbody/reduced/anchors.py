"""ReducedPoint: a point of a reduced body (the mean of some of its nodes) as an anchor for constraints, force
elements and tasks.

At the frame (R, p) with world velocity [v_o; ω] = J v_tree and bias [b_v; b_ω] = J̇v, the point's frame-axes
position x̄ = X̄_w + Ψ_w η (X̄_w, Ψ_w the node means) gives, with y = R x̄ and the world shapes RΨ_w:

    x = p + y,   ẋ = v_o + ω × y + RΨ_w η̇,   ∂ẋ/∂v = [J_v − [y]× J_ω,  RΨ_w]  (tree columns, modal columns),
    J̇v = b_v + b_ω × y + ω × (ω × y) + 2 ω × (RΨ_w η̇).

Its second derivatives (#36 item 2) follow from the point x̄ of the link that it occupies, whose motion the tree
differentiates (:mod:`flexbody.rigid.point_hessian`, :mod:`flexbody.rigid.acceleration_derivatives`), plus the
shapes' turn with the frame, ∂(RΨ_w)/∂q_j = e_j × RΨ_w (e_j = J_ω[:, j]), and the point's slide in the frame,
∂x̄/∂η = Ψ_w: with u = RΨ_w η̇ and u₂ = RΨ_w η̈,

    ẍ = ẍ_link(x̄) + 2 ω × u + u₂,
    ∂(Jᵀw)/∂q: the link point's Hessian on the tree block, e_j·(RΨ_k × w) on the tree × modal blocks, 0 modal × modal,
    ∂ẋ/∂q_j = ∂ẋ_link/∂q_j + e_j × u,  ∂ẋ/∂η_k = ω × RΨ_k,
    ∂ẍ/∂q_j = ∂ẍ_link/∂q_j + 2 ∂ω/∂q_j × u + 2 ω × (e_j × u) + e_j × u₂,  ∂ẍ/∂η_k = α × RΨ_k + ω × (ω × RΨ_k),
    ∂ẍ/∂v_j = ∂ẍ_link/∂v_j + 2 e_j × u,  ∂ẍ/∂η̇_k = 2 ω × RΨ_k.
"""

from __future__ import annotations

import numpy as np

from ..errors import ModelError
from ..rigid.anchors import Anchor
from .invariants import cross, skew


class ReducedPoint(Anchor):
    """The mean of ``nodes`` of a :class:`~flexbody.reduced.body.ReducedBody` (made by ``body.point(nodes)``)."""

    def __init__(self, body, nodes):
        picked = np.unique(body.body.nodes(nodes))
        if picked.size == 0:
            raise ModelError(f"reduced body {body.name!r}: the point {nodes!r} has no nodes")
        self.body, self.nodes = body, picked
        self.trees, self.reduced = (body.tree,), (body,)
        self.label = f"{body.name}[{nodes if isinstance(nodes, str) else f'{picked.size} nodes'}]"

    def _terms(self, ev):
        """(y, RΨ_w, world [v_o; ω], state) of the point at ``ev``, kept with its workspace."""
        return ev.memo(("reduced point", self), lambda: self._compute(ev))

    def _compute(self, ev):
        body = self.body
        st = body.state(ev)
        X = body.X[self.nodes].mean(axis=0)
        psi = body.frame_shapes[self.nodes].mean(axis=0)  # (3, r)
        y = st.R @ (X + psi @ st.eta)
        world_psi = st.R @ psi
        velocity = np.concatenate([st.R @ st.frame_velocity[:3], st.R @ st.frame_velocity[3:]])
        return y, world_psi, velocity, st

    def position(self, ev) -> np.ndarray:
        y, _, _, st = self._terms(ev)
        return st.p + y

    def velocity(self, ev) -> np.ndarray:
        y, world_psi, vel, st = self._terms(ev)
        return vel[:3] + cross(vel[3:], y) + world_psi @ st.eta_dot

    def jacobian(self, ev) -> tuple[np.ndarray, np.ndarray]:
        y, world_psi, _, st = self._terms(ev)
        R = st.R
        J_v, J_w = R @ st.T[:3], R @ st.T[3:]
        block = np.hstack([J_v - skew(y) @ J_w, world_psi])
        return np.concatenate([st.tree_columns, st.columns]), block

    def position_hessian(self, ev, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(columns (n_t + r,), ∂(Jᵀw)/∂q (n_t + r, n_t + r)) for a constant world vector w (3,) (module docstring)."""
        y, world_psi, _, st = self._terms(ev)
        body, n_t = self.body, st.tree_columns.size
        H = np.zeros((n_t + body.n_dofs, n_t + body.n_dofs))
        H[:n_t, :n_t] = ev.kinematics(body.tree).point_hessian(body.link, st.R.T @ y, w)
        turn = (st.R @ st.T[3:]).T @ np.cross(world_psi.T, w).T  # e_j·(RΨ_k × w)
        H[:n_t, n_t:], H[n_t:, :n_t] = turn, turn.T
        return np.concatenate([st.tree_columns, st.columns]), H

    def velocity_jacobian(self, ev) -> tuple[np.ndarray, np.ndarray]:
        """(columns (n_t + r,), ∂ẋ/∂q (3, n_t + r)) at fixed v (module docstring)."""
        y, world_psi, vel, st = self._terms(ev)
        body = self.body
        rigid = ev.kinematics(body.tree).point_velocity_jacobian(body.link, st.R.T @ y)
        turn = np.cross((st.R @ st.T[3:]).T, world_psi @ st.eta_dot).T  # e_j × RΨη̇
        block = np.hstack([rigid + turn, np.cross(vel[3:], world_psi.T).T])
        return np.concatenate([st.tree_columns, st.columns]), block

    def motion(self, ev, acc: np.ndarray) -> tuple[np.ndarray, ...]:
        """(columns, x, ẋ, ẍ, J, ∂ẋ/∂q, ∂ẍ/∂q, ∂ẍ/∂v) of the point at the system's accelerations ``acc`` (n,), as
        :class:`~flexbody.constraints.row_derivatives.AnchorMotion` holds them (module docstring)."""
        y, world_psi, vel, st = self._terms(ev)
        body = self.body
        kin, a_tree, eta_ddot = ev.kinematics(body.tree), acc[st.tree_columns], acc[st.columns]
        offset = st.R.T @ y
        V_q, A_q, A_v = kin.frame_motion_derivatives(body.link, offset, a_tree)
        J, bias = kin.frame_terms(body.link, offset)
        w, alpha, Jw = vel[3:], J[3:] @ a_tree + bias[3:], J[3:].T  # Jw: (n_t, 3) rows e_j
        u, u2 = world_psi @ st.eta_dot, world_psi @ eta_ddot
        shapes = world_psi.T  # (r, 3) rows RΨ_k
        turn_u = np.cross(Jw, u)  # rows e_j × u
        xdd = J[:3] @ a_tree + bias[:3] + 2.0 * cross(w, u) + u2
        velocity_q = np.hstack([V_q[:3] + turn_u.T, np.cross(w, shapes).T])
        acceleration_q = np.hstack(
            [
                A_q[:3] + 2.0 * np.cross(V_q[3:].T, u).T + 2.0 * np.cross(w, turn_u).T + np.cross(Jw, u2).T,
                (np.cross(alpha, shapes) + np.cross(w, np.cross(w, shapes))).T,
            ]
        )
        acceleration_v = np.hstack([A_v[:3] + 2.0 * turn_u.T, 2.0 * np.cross(w, shapes).T])
        columns = np.concatenate([st.tree_columns, st.columns])
        jacobian = np.hstack([J[:3], world_psi])
        return columns, st.p + y, self.velocity(ev), xdd, jacobian, velocity_q, acceleration_q, acceleration_v

    def bias(self, ev) -> np.ndarray:
        y, world_psi, vel, st = self._terms(ev)
        R, w = st.R, vel[3:]
        b_v, b_w = R @ st.c[:3], R @ st.c[3:]
        return b_v + cross(b_w, y) + cross(w, cross(w, y)) + 2.0 * cross(w, world_psi @ st.eta_dot)
