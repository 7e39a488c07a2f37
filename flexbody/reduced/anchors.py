"""ReducedPoint: a point of a reduced body (the mean of some of its nodes) as an anchor for constraints, force
elements and tasks.

At the frame (R, p) with world velocity [v_o; ω] = J v_tree and bias [b_v; b_ω] = J̇v, the point's frame-axes
position x̄ = X̄_w + Ψ_w η (X̄_w, Ψ_w the node means) gives, with y = R x̄ and the world shapes RΨ_w:

    x = p + y,   ẋ = v_o + ω × y + RΨ_w η̇,   ∂ẋ/∂v = [J_v − [y]× J_ω,  RΨ_w]  (tree columns, modal columns),
    J̇v = b_v + b_ω × y + ω × (ω × y) + 2 ω × (RΨ_w η̇).
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

    def bias(self, ev) -> np.ndarray:
        y, world_psi, vel, st = self._terms(ev)
        R, w = st.R, vel[3:]
        b_v, b_w = R @ st.c[:3], R @ st.c[3:]
        return b_v + cross(b_w, y) + cross(w, cross(w, y)) + 2.0 * cross(w, world_psi @ st.eta_dot)
