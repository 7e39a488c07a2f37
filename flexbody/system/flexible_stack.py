"""The flexible bodies of an assembled system: stacked nodal coordinates, the constant mass block and its
one factorization, and the flexible force terms with their Jacobians [DE-104..106, DE-108, DE-110].

In the sign of [DE-109] the flexible rows of h = b + g are k(q, v) + g_f with g_f = −f_ext, the
generalized force of the loads (gravity, body and surface forces, follower pressure) with a minus sign.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..linalg.block_mass import FlexibleMassFactor
from ..linalg.csr_products import product

__all__ = ["FlexiblePart"]


class FlexiblePart:
    """Flexible bodies stacked from global column ``start`` on.

    Attributes
    ----------
    bodies : list of FlexibleBody; loads : list of Load
    offsets : dict body -> first global column; slice : slice of all flexible coordinates
    mass : FlexibleMassFactor (assembled and factored once)
    """

    def __init__(self, bodies, loads, start: int):
        self.bodies, self.loads = list(bodies), list(loads)
        self.offsets, self._local = {}, {}
        local = 0
        for body in self.bodies:
            self.offsets[body] = start + local
            self._local[body] = slice(local, local + body.n_dofs)
            local += body.n_dofs
        self.n_dofs = local
        self.slice = slice(start, start + local)
        blocks = [b.mass_matrix() for b in self.bodies]
        M = sp.block_diag(blocks, format="csc") if blocks else sp.csc_matrix((0, 0))
        self.mass = FlexibleMassFactor(M)
        self.follower = any(load.follower for load in self.loads)

    def local(self, body) -> slice:
        """Slice of ``body`` inside the stacked flexible coordinates."""
        return self._local[body]

    def reference_coordinates(self) -> np.ndarray:
        if not self.bodies:
            return np.zeros(0)
        return np.concatenate([b.reference_coordinates() for b in self.bodies])

    def labels(self) -> list[str]:
        return [f"{b.name}.n{i}.{c}" for b in self.bodies for i in range(b.n_nodes) for c in "xyz"]

    # ------------------------------------------------------------------ forces
    def external_force(self, q_f: np.ndarray) -> np.ndarray:
        """f_ext (n_f,) [N]: the loads' generalized forces at q_f."""
        f = np.zeros(self.n_dofs)
        for load in self.loads:
            s = self._local[load.body]
            f[s] += load.force(q_f[s])
        return f

    def internal_force(self, q_f: np.ndarray, v_f: np.ndarray | None) -> np.ndarray:
        """k(q, v) (n_f,) [N], elastic plus Kelvin–Voigt."""
        out = np.empty(self.n_dofs)
        for b in self.bodies:
            s = self._local[b]
            out[s] = b.internal_force(q_f[s], None if v_f is None else v_f[s])
        return out

    def forces(self, q_f: np.ndarray, v_f: np.ndarray | None) -> np.ndarray:
        """The flexible rows of h: k(q, v) − f_ext(q) (n_f,) [N] [DE-108]."""
        return self.internal_force(q_f, v_f) - self.external_force(q_f)

    def jacobians(self, q_f: np.ndarray, v_f: np.ndarray | None, *, damping: bool = True, load_factor: float = 1.0):
        """k(q, v) (n_f,) [N], and the Jacobians of h_f = k − s·f_ext (s the ``load_factor``): ∂h_f/∂q (csr, the
        follower loads' stiffness scaled by s included) and ∂h_f/∂v (csr, or None without damping), in one kernel
        pass per body."""
        parts = []
        for b in self.bodies:
            s = self._local[b]
            with_c = damping and b.material.damping > 0.0
            parts.append(
                b._assemble(
                    b._positions(q_f[s]),
                    b._velocities(None if v_f is None else v_f[s]),
                    force=True,
                    tangent=True,
                    damping=with_c,
                )
            )
        f = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0)
        K = parts[0][1] if len(parts) == 1 else sp.block_diag([p[1] for p in parts], format="csr")
        K_load = self.load_stiffness(q_f)
        if K_load is not None:
            K = K - load_factor * K_load
        C = None
        if len(parts) == 1:
            C = parts[0][2]
        elif any(p[2] is not None for p in parts):
            C = sp.block_diag([p[2] if p[2] is not None else sp.csr_matrix(p[1].shape) for p in parts], format="csr")
        return f, K, C

    def internal_tangent(self, q_f: np.ndarray) -> sp.csr_matrix:
        """∂k/∂q (n_f, n_f) at rest (v = 0), block diagonal over the bodies."""
        mats = [b.tangent(q_f[self._local[b]]) for b in self.bodies]
        return mats[0] if len(mats) == 1 else sp.block_diag(mats, format="csr")

    def load_stiffness(self, q_f: np.ndarray):
        """∂f_ext/∂q of follower loads (csr), or None when all loads are dead."""
        if not self.follower:
            return None
        K = sp.csr_matrix((self.n_dofs, self.n_dofs))
        for load in self.loads:
            if load.follower:
                s = self._local[load.body]
                Kl = load.stiffness(q_f[s]).tocoo()
                K = K + sp.csr_matrix((Kl.data, (Kl.row + s.start, Kl.col + s.start)), shape=K.shape)
        return K

    # ------------------------------------------------------------------ energies
    def kinetic_energy(self, v_f: np.ndarray) -> float:
        return 0.5 * float(v_f @ product(self.mass.matrix, v_f))

    def strain_energy(self, q_f: np.ndarray) -> float:
        return float(sum(b.strain_energy(q_f[self._local[b]]) for b in self.bodies))

    def load_potential(self, q_f: np.ndarray) -> float:
        """−f·q of the dead loads [J] (gravity, body and surface forces); follower loads have none."""
        total = 0.0
        for load in self.loads:
            if not load.follower:
                s = self._local[load.body]
                total -= float(load.force(q_f[s]) @ q_f[s])
        return total
