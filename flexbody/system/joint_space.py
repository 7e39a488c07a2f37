"""The dense part of an assembled system: the joint coordinates of the rigid trees and the modal coordinates
of the reduced bodies on their links, with M, M a + h and the energies over them [DE-2, DE-109].

Each tree gives its M (composite rigid body) and M a + h (recursive Newton–Euler); a reduced body adds its
share on its tree's columns and its own (:mod:`flexbody.reduced.body`), which couples the two, so with reduced
bodies the whole dense part is one block of the mass matrix; without, each tree is its own block.
"""

from __future__ import annotations

import numpy as np


class JointSpace:
    """Trees and reduced bodies over the first ``n`` global coordinates (``slices`` of each)."""

    def __init__(self, trees, reduced, slices: dict, n: int):
        self.trees, self.reduced, self.slices, self.n = list(trees), list(reduced), slices, int(n)

    def mass_matrix(self, ev) -> np.ndarray:
        """M over the dense part (n, n) [kg, kg·m², …]."""
        M = np.zeros((self.n, self.n))
        for tree in self.trees:
            s = self.slices[tree]
            M[s, s] = ev.kinematics(tree).mass_matrix()
        for body in self.reduced:
            M_tt, M_te, M_ee = body.state(ev).mass_blocks()
            t, e = self.slices[body.tree], self.slices[body]
            M[t, t] += M_tt
            M[t, e] += M_te
            M[e, t] += M_te.T
            M[e, e] += M_ee
        return M

    def blocks(self, ev) -> list:
        """(slice, dense block) of the block-diagonal mass matrix: one per tree, or one for all with reduced bodies."""
        if self.reduced:
            return [(slice(0, self.n), self.mass_matrix(ev))]
        return [(self.slices[tree], ev.kinematics(tree).mass_matrix()) for tree in self.trees]

    def inverse_dynamics(
        self, ev, a=None, *, velocity: bool = True, gravity: bool = True, elastic: bool = True
    ) -> np.ndarray:
        """M a + h over the dense part (n,): velocity products (``velocity``), gravity (``gravity``) and the
        reduced bodies' elastic forces (``elastic``); a (n,) or None (zero)."""
        out = np.empty(self.n)
        for tree in self.trees:
            s = self.slices[tree]
            out[s] = ev.kinematics(tree).inverse_dynamics(
                None if a is None else a[s], gravity=gravity, velocity=velocity
            )
        for body in self.reduced:
            t, e = self.slices[body.tree], self.slices[body]
            on_tree, on_modes = body.state(ev).forces(
                body,
                None if a is None else a[t],
                None if a is None else a[e],
                velocity=velocity,
                gravity=gravity,
                elastic=elastic,
            )
            out[t] += on_tree
            out[e] = on_modes
        return out

    def inverse_dynamics_derivatives(self, ev, a) -> tuple[np.ndarray, np.ndarray]:
        """(∂(M a + h)/∂q, ∂(M a + h)/∂v) (n, n) over the dense part at the state ``ev`` and accelerations a (n,), with
        velocity products, gravity and the reduced bodies' elastic forces: each tree's analytic derivatives
        (:meth:`~flexbody.RigidTree.inverse_dynamics_derivatives`) and each reduced body's
        (:func:`~flexbody.reduced.force_derivatives.reduced_force_derivatives`)."""
        from ..reduced.force_derivatives import reduced_force_derivatives

        D_q, D_v = np.zeros((self.n, self.n)), np.zeros((self.n, self.n))
        for tree in self.trees:
            s = self.slices[tree]
            dq, dv, _ = tree.inverse_dynamics_derivatives(ev.q[s], ev.v[s], a[s])
            D_q[s, s] += dq
            D_v[s, s] += dv
        for body in self.reduced:
            cols, dq, dv = reduced_force_derivatives(body, ev, a[self.slices[body.tree]], a[self.slices[body]])
            D_q[np.ix_(cols, cols)] += dq
            D_v[np.ix_(cols, cols)] += dv
        return D_q, D_v

    def kinetic_energy(self, ev) -> float:
        return sum(ev.kinematics(t).kinetic_energy() for t in self.trees) + sum(
            b.state(ev).kinetic_energy() for b in self.reduced
        )

    def potential_energy(self, ev) -> float:
        """Gravity of the trees and reduced bodies and the reduced bodies' strain energy [J]."""
        return sum(ev.kinematics(t).potential_energy() for t in self.trees) + sum(
            b.state(ev).potential_energy(b) for b in self.reduced
        )
