"""Flexible bodies in absolute nodal coordinates: 8- and 27-node hexahedral [DE-101..106] and 4- and 10-node
tetrahedral solids.

Generalized coordinates are the absolute nodal positions, node-major: q = [x₀, y₀, z₀, x₁, …] (3n,), in the
world frame [m]. The body contributes M d̈ + k(q, v) + g = f [DE-105, DE-106] with

* M_jk = ∫ ρ₀ N_ij N_ik dV — constant, sparse, assembled once [DE-104];
* k_j = ∫ ∂N_ij/∂X_k (δ_il + ∂N_il/∂X_k d_k) S_lk dV — the internal force [DE-104], nonlinear through the
  second Piola–Kirchhoff stress S of the material (plus optional Kelvin–Voigt damping);
* body and surface forces, given by the load objects of :mod:`flexbody.fem.loads` as external forces
  (DE's g is their negative).

The 8-node element optionally uses incompatible modes (``locking="incompatible_modes"``): nine enhanced
displacement-gradient parameters per element, F = Σ x_a ⊗ G_a + Σ_k α_k ⊗ G̃_k with
G̃_k = (j₀/j) J₀⁻ᵀ ∂(1 − ξ_k²)/∂ξ, condensed element by element (Simo & Armero 1992). It passes the patch
test and removes the shear locking of trilinear bricks in bending. Every evaluation solves the modes from α = 0
(a local Newton iteration to 1e-13 of the element's size), so forces and tangents are functions of (q, v) alone:
no warm start carries over from one call to the next, and a resumed run repeats the uninterrupted one exactly
(about a fifth more element work than a warm start from the last call, measured on a bending beam).
"""

from __future__ import annotations

import logging
import math
import os

import numba as nb
import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ..errors import ConvergenceError, ElementError, FlexbodyError, MeshError, ModelError, StateError
from . import cell_rules, energy_kernels, kernels, patterns
from .elements import ReferenceCell, ReferenceHex
from .hyperelastic import Hyperelastic
from .materials import MOONEY_RIVLIN, NEO_HOOKEAN, SVK, USER_INVARIANTS, USER_TENSOR, Material
from .volume_mesh import VolumeMesh

log = logging.getLogger(__name__)

LOCKING_REMEDIES = (None, "incompatible_modes")
ENERGY_KINDS = (SVK, NEO_HOOKEAN, MOONEY_RIVLIN, USER_INVARIANTS, USER_TENSOR)  # laws with a strain energy

#: Fewest elements per thread of the force and strain-energy kernels (:func:`kernel_threads`). On two idle Zen 4
#: cores a second thread pays from about 2000 H8 elements (1.4 times faster at 2000, 1.75 at 8000); twice that
#: leaves room for its wake-up and joins when other processes keep the cores busy.
FORCE_ELEMENTS_PER_THREAD = 4000
#: Fewest elements per thread of the kernels computing element matrices (tangent, damping, incompatible modes),
#: about 20 times costlier per element: idle, a second thread pays from about 150 H8 elements (1.3 at 200).
MATRIX_ELEMENTS_PER_THREAD = 250


class FlexibleBody:
    """A hexahedral or tetrahedral solid in absolute nodal coordinates.

    Parameters
    ----------
    name : str
        Label used in messages and exports.
    mesh : VolumeMesh
        Reference configuration (:class:`HexMesh` or :class:`TetMesh`): 8-node cells give ANCFHex8 elements,
        27-node cells ANCFHex27, 4-node cells Tet4 and 10-node cells Tet10 (the same total-Lagrangian,
        position-only form, every material, load and solver).
    material : Material
        Constitutive law (with density and optional Kelvin–Voigt damping).
    quadrature : int or (int, int, int), optional
        Bricks: Gauss–Legendre points per direction, or along the element axes ξ, η, ζ, of the stiffness, internal
        force and strain energy. The default (None) is chosen from the elements' shape so that thin bending does not
        lock (:mod:`flexbody.fem.bending_rules`; Stolarski & Belytschko 1982): 2 × 2 × 2 for 8-node cells; for
        27-node cells 3 × 3 × 3 in compact elements and two points along the slender axis of bars or the axis a
        plate or shell runs further along, e.g. (2, 3, 3). A rule that leaves zero-energy modes besides the
        rigid-body motions is refused; one that integrates every slender axis of the elements with three points
        gets a warning naming the rule that does not lock. The mass matrix keeps at least the 3 × 3 × 3
        (2 × 2 × 2) rule.
        Tetrahedra: the degree of the symmetric rule (1, 2 or 5: 1, 4 or 14 points); the default is 1 for 4 nodes
        (exact for any material on straight-sided elements: their gradients are constant) and 2 for 10 nodes (exact
        for their linear elastic stiffness); 1 on 10 nodes is refused (zero-energy modes); the mass uses a rule of
        degree at least 2 (4 nodes) or 5 (10 nodes). 4-node tetrahedra of a material with a small-strain Poisson's
        ratio of 0.45 or more are refused (volumetric locking), naming 10-node tetrahedra or bricks.
        The attribute ``quadrature`` is the rule in use.
    locking : {"auto", None, "incompatible_modes"}
        Formulation of the 8-node element: "auto" (the default) is "incompatible_modes" (Simo & Armero 1992),
        which does not lock, for 8-node cells and None for 27-node ones; None, the plain trilinear brick, locks in
        bending (shear locking) and is warned against on slender elements. The attribute ``locking`` is the
        formulation in use. Tetrahedra take None ("auto" is None).
    """

    def __init__(
        self,
        name: str,
        mesh: VolumeMesh,
        material: Material,
        *,
        quadrature: int | tuple[int, int, int] | None = None,
        locking: str | None = "auto",
    ):
        if not isinstance(name, str) or not name:
            raise FlexbodyError(f"FlexibleBody name must be a non-empty string, got {name!r}")
        if not isinstance(mesh, VolumeMesh):
            raise MeshError(
                f"FlexibleBody {name!r}: mesh must be a HexMesh or TetMesh (fb.mesh), got {type(mesh).__name__}"
            )
        if not isinstance(material, Material):
            raise FlexbodyError(
                f"FlexibleBody {name!r}: material must be a flexbody Material, got {type(material).__name__}"
            )
        if locking == "auto":  # the formulation that does not lock: incompatible modes for 8-node bricks
            locking = "incompatible_modes" if getattr(mesh, "nodes_per_cell", None) == 8 else None
        if locking not in LOCKING_REMEDIES:
            raise FlexbodyError(
                f"FlexibleBody {name!r}: locking must be 'auto' or one of {LOCKING_REMEDIES}, got {locking!r}"
            )
        if locking is not None and mesh.nodes_per_cell != 8:
            raise FlexbodyError(f"FlexibleBody {name!r}: locking={locking!r} applies to 8-node bricks only")
        orphans = np.setdiff1d(np.arange(mesh.n_nodes), mesh.cells)
        if orphans.size:  # no mass, no stiffness: every matrix of the body singular
            shown = ", ".join(str(int(i)) for i in orphans[:10]) + (", …" if orphans.size > 10 else "")
            raise MeshError(
                f"FlexibleBody {name!r}: {orphans.size} node(s) belong to no element ({shown}); they "
                f"would have no mass or stiffness. Remove them from the mesh"
            )
        self.name = name
        self.mesh = mesh
        self.material = material
        self.element: ReferenceCell = mesh.cell
        cell_rules.check_tet4_material(name, self.element, material)
        self.locking = locking
        self._cells = np.require(mesh.cells, dtype=np.int64, requirements=("C", "W"))  # writable: one kernel signature
        rules = cell_rules.body_rules(name, quadrature, self.element, mesh.points[self._cells], locking)
        self.quadrature: int | tuple[int, int, int] = rules.quadrature
        self._xi, self._w = rules.stiffness
        self._mass_rule = rules.mass  # (ξ, w) integrating N_a N_b exactly
        self._G, self._wdv = self._reference_gradients()
        if rules.advice is not None:
            log.warning("FlexibleBody %r: %s", name, rules.advice)
        if locking == "incompatible_modes":
            self._G = np.ascontiguousarray(np.concatenate([self._G, self._incompatible_gradients()], axis=2))
            self._alpha = np.zeros((self.n_elements, 3, 3))
            extent = np.ptp(mesh.points[self._cells], axis=1).max(axis=1)
            self._h_elem = np.ascontiguousarray(extent)
        else:
            self._alpha = np.zeros((self.n_elements, 0, 3))
            self._h_elem = np.zeros(self.n_elements)
        self._modes_converged_at = None  # x of the last elastic mode solve, whose α the kernel left (_elastic_modes)
        self._color_ptr, self._block_ptr, self._color_elems = patterns.color_groups(self._cells, self.n_nodes)
        self._parallel_width = patterns.parallel_width(self._color_ptr, self._block_ptr)
        self._pattern = None
        self._mass = None
        self._kernel_material: tuple[Material | None, tuple] = (None, ())  # (material, its kernel arguments)
        self._no_velocity = np.zeros((self.n_nodes, 3))  # v of internal_force(q, None); no kernel writes v

    # ------------------------------------------------------------------ sizes and coordinates
    @property
    def n_nodes(self) -> int:
        """Number of nodes of the mesh."""
        return self.mesh.n_nodes

    @property
    def n_elements(self) -> int:
        """Number of elements of the mesh."""
        return self.mesh.n_elements

    @property
    def n_dofs(self) -> int:
        """Number of generalized coordinates, 3 per node."""
        return 3 * self.mesh.n_nodes

    def reference_coordinates(self) -> np.ndarray:
        """Reference nodal positions q₀ (3n,) [m], node-major."""
        return self.mesh.points.ravel().copy()

    def nodes(self, which: str | ArrayLike) -> np.ndarray:
        """Node indices from a node-set name, a face-set name, or an index array."""
        if isinstance(which, str):
            if which in self.mesh.node_sets:
                return self.mesh.node_set(which)
            if which in self.mesh.face_sets:
                return self.mesh.face_set_nodes(which)
            raise MeshError(
                f"body {self.name!r}: no node or face set named {which!r}; "
                f"node sets: {sorted(self.mesh.node_sets)}, face sets: {sorted(self.mesh.face_sets)}"
            )
        try:
            given = np.asarray(which)
        except ValueError:  # ragged nested lists
            given = np.asarray([None], dtype=object)
        if given.dtype == bool or (given.size and not np.issubdtype(given.dtype, np.integer)):
            raise MeshError(f"body {self.name!r}: node indices must be integers or a set name, got {which!r}")
        idx = np.unique(given.astype(np.int64).ravel())
        if idx.size and (idx.min() < 0 or idx.max() >= self.n_nodes):
            raise MeshError(
                f"body {self.name!r}: node index {idx.max() if idx.max() >= self.n_nodes else idx.min()}"
                f" out of range 0..{self.n_nodes - 1}"
            )
        return idx

    def dofs(self, nodes: str | ArrayLike) -> np.ndarray:
        """Coordinate indices (3k,) of nodes (set name or indices), node-major."""
        idx = self.nodes(nodes)
        return (3 * idx[:, None] + np.arange(3)).ravel()

    # ------------------------------------------------------------------ reference geometry
    def _reference_gradients(self) -> tuple[np.ndarray, np.ndarray]:
        """G (m, nq, nn, 3) = ∂N_a/∂X at Gauss points and weights × det J (m, nq); checks every element."""
        dN = self.element.shape_gradients(self._xi)  # (nq, nn, 3)
        X = self.mesh.points[self._cells]  # (m, nn, 3)
        with np.errstate(over="ignore", invalid="ignore"):
            J = np.einsum("ead,gak->egdk", X, dN, optimize=True)  # ∂X_d/∂ξ_k
            det = np.linalg.det(J)
            size = np.ptp(X, axis=1).max(axis=1) ** 3  # (m,) volume scale
        if not (np.all(np.isfinite(det)) and np.all(np.isfinite(size))):
            e = int(np.flatnonzero(~np.isfinite(det).all(axis=1) | ~np.isfinite(size))[0])
            raise ElementError(
                f"body {self.name!r}: element {e}: its volume overflows double precision (coordinates "
                f"up to {np.abs(X[e]).max():.3g}); rescale the mesh, e.g. to metres"
            )
        self._check_jacobians(det, X, size)
        Jinv = np.linalg.inv(J)
        G = np.einsum("gak,egkd->egad", dN, Jinv, optimize=True)
        return np.ascontiguousarray(G), np.ascontiguousarray(det * self._w)

    def _mass_weights(self) -> tuple[np.ndarray, np.ndarray]:
        """(N (nq, nn), weights × det J (m, nq)) of the mass rule (the stiffness rule, at least the default)."""
        xi, w = self._mass_rule
        X = self.mesh.points[self._cells]
        det = np.linalg.det(np.einsum("ead,gak->egdk", X, self.element.shape_gradients(xi), optimize=True))
        return self.element.shape_functions(xi), det * w

    def _check_jacobians(self, det_gauss: np.ndarray, X: np.ndarray, size: np.ndarray) -> None:
        """Raise ElementError naming the first inverted/degenerate element and its Jacobian determinant; ``size``
        (m,) is each element's volume scale."""
        corners = self.element.shape_gradients(self.element.corner_points)  # det J at corners too
        det_corner = np.linalg.det(np.einsum("ead,gak->egdk", X, corners, optimize=True))
        det_all = np.concatenate([det_gauss, det_corner], axis=1)
        bad = det_all.min(axis=1) <= 1e-12 * size / 8.0
        if not np.any(bad):
            return
        e = int(np.flatnonzero(bad)[0])
        kind = "inverted" if det_all[e].min() < 0 else "degenerate"
        mirrored = np.flatnonzero(np.all(det_all < 0.0, axis=1))  # inside out throughout: nodes in mirror order
        hint = (
            f"; {mirrored.size} of them have their nodes in the mirror image of VTK's order (a mesher's opposite "
            "convention): mesh.oriented() reorders them"
            if mirrored.size
            else ""
        )
        raise ElementError(
            f"body {self.name!r}: element {e} is {kind}: minimum Jacobian determinant "
            f"{det_all[e].min():.6g} (Gauss points and corners); {int(bad.sum())} bad element(s){hint}"
        )

    def _incompatible_gradients(self) -> np.ndarray:
        """Gradients (m, nq, 3, 3) of the incompatible modes 1 − ξ_k², mapped with the centre Jacobian."""
        assert isinstance(self.element, ReferenceHex)  # incompatible modes: 8-node bricks only
        J0 = self.element.centre_jacobians(self.mesh.points[self._cells])
        j0 = np.linalg.det(J0)
        J0inv = np.linalg.inv(J0)  # (m, 3, 3) [k, K]
        det = self._wdv / self._w  # (m, nq)
        dM = -2.0 * self._xi  # (nq, 3): ∂(1-ξ_k²)/∂ξ_k
        # G̃[e, g, k, K] = (j0/j) * dM[g, k] * J0inv[e, k, K]
        return (j0[:, None] / det)[:, :, None, None] * dM[None, :, :, None] * J0inv[:, None, :, :]

    # ------------------------------------------------------------------ mass
    def mass_matrix(self) -> sp.csr_matrix:
        """Consistent mass matrix M (3n, 3n) [kg], constant, assembled once [DE-104]."""
        if self._mass is None:
            N, wdv = self._mass_weights()
            Me = self.material.density * np.einsum("eg,ga,gb->eab", wdv, N, N, optimize=True)
            rows = np.repeat(self._cells, self._cells.shape[1], axis=1).ravel()
            cols = np.tile(self._cells, (1, self._cells.shape[1])).ravel()
            scalar = sp.csr_matrix((Me.ravel(), (rows, cols)), shape=(self.n_nodes,) * 2)
            self._mass = sp.kron(scalar, sp.identity(3), format="csr")
        return self._mass

    def mass(self) -> float:
        """Total mass ρ₀ V [kg]."""
        return float(self.material.density * self.volume())

    def volume(self) -> float:
        """Reference volume [m³] (by the mass matrix's quadrature)."""
        return float(self._mass_weights()[1].sum())

    def body_force(self, acceleration: ArrayLike) -> np.ndarray:
        """Generalized force (3n,) [N] of a uniform body-force field per unit mass (e.g. gravity, m/s²)."""
        b = np.asarray(acceleration, dtype=float).reshape(3)
        return self.mass_matrix() @ np.tile(b, self.n_nodes)

    # ------------------------------------------------------------------ internal force and Jacobians
    def _positions(self, q, what: str = "q") -> np.ndarray:
        q = np.asarray(q, dtype=float)
        if q.shape != (self.n_dofs,):
            raise StateError(f"body {self.name!r}: {what} must have shape ({self.n_dofs},), got {q.shape}")
        if not math.isfinite(q.dot(q)) and not np.all(np.isfinite(q)):  # Σ q² is finite only if every q is
            bad = int(np.flatnonzero(~np.isfinite(q))[0])
            raise StateError(
                f"body {self.name!r}: {what} contains NaN/Inf (first at coordinate {bad}, node {bad // 3})"
            )
        return np.ascontiguousarray(q.reshape(-1, 3))

    def _velocities(self, v) -> np.ndarray:
        if v is None or self.material.damping == 0.0:
            return np.zeros((self.n_nodes, 3)) if v is None else self._positions(v, "v")
        return self._positions(v, "v")

    def _material_args(self) -> tuple:
        """The kernels' material arguments (kind, params, β, λ₀, μ₀), built once per material object (materials
        are frozen dataclasses, so they cannot change; a new ``self.material`` gets its own)."""
        m, args = self._kernel_material
        if m is not self.material:
            m = self.material
            lam0, mu0 = m.small_strain_lame
            args = (m.kind, m.params, float(m.damping), float(lam0), float(mu0))
            self._kernel_material = (m, args)
        return args

    def internal_force(self, q: ArrayLike, v: ArrayLike | None = None) -> np.ndarray:
        """Internal force k(q, v) (3n,) [N] at positions q (3n,) and velocities v (3n,) [DE-104].

        ``v=None`` is zero velocity: the elastic force k(q, 0), without the Kelvin–Voigt stress β D₀ : Ė (which
        is zero there; the kernels' results are equal to those of an explicit v = 0).
        """
        x = self._positions(q)
        if self.locking is not None:
            return self._assemble(x, self._velocities(v), force=True)[0]
        kind, params, beta, lam0, mu0 = self._material_args()
        if v is None:
            vel, beta = self._no_velocity, 0.0
        else:
            vel = self._velocities(v)
        f = np.zeros((self.n_nodes, 3))
        kernels.assemble_force(
            self._color_ptr,
            self._block_ptr,
            self._color_elems,
            self._cells,
            self._G,
            self._wdv,
            x,
            vel,
            kind,
            params,
            beta,
            lam0,
            mu0,
            self._threads(FORCE_ELEMENTS_PER_THREAD),
            f,
            law=self.material.law,
        )
        return f.ravel()

    def viscous_force(self, q: ArrayLike, v: ArrayLike) -> np.ndarray:
        """∂k/∂β (3n,) [N/s]: the Kelvin–Voigt force D₀ : Ė per unit retardation time β at (q, v), exact because k is
        linear in β — except with incompatible modes, whose condensed modes move with β too (refused, naming the body).
        """
        if self.locking is not None:
            raise ModelError(
                f"body {self.name!r}: no derivative in the damping with locking={self.locking!r} (its condensed modes "
                "depend on the damping); use locking=None or 27-node bricks"
            )
        x, vel = self._positions(q), self._positions(v, "v")
        kind, params, _, lam0, mu0 = self._material_args()
        out = []
        for beta, velocity in ((1.0, vel), (0.0, self._no_velocity)):
            f = np.zeros((self.n_nodes, 3))
            kernels.assemble_force(
                self._color_ptr, self._block_ptr, self._color_elems, self._cells, self._G, self._wdv, x, velocity,
                kind, params, beta, lam0, mu0, self._threads(FORCE_ELEMENTS_PER_THREAD), f,
                law=self.material.law,
            )  # fmt: skip
            out.append(f.ravel())
        return out[0] - out[1]

    def tangent(self, q: ArrayLike, v: ArrayLike | None = None) -> sp.csr_matrix:
        """Jacobian ∂k/∂q (3n, 3n) [N/m] at (q, v): material, geometric and viscous terms."""
        return self._assemble(self._positions(q), self._velocities(v), tangent=True)[1]

    def damping_matrix(self, q: ArrayLike, v: ArrayLike | None = None) -> sp.csr_matrix:
        """Jacobian ∂k/∂v (3n, 3n) [N s/m] of the Kelvin–Voigt internal force at (q, v)."""
        return self._assemble(self._positions(q), self._velocities(v), damping=True)[2]

    def force_and_tangent(self, q: ArrayLike, v: ArrayLike | None = None) -> tuple[np.ndarray, sp.csr_matrix]:
        """Internal force (3n,) and its Jacobian ∂k/∂q in one pass over the elements."""
        f, K, _ = self._assemble(self._positions(q), self._velocities(v), force=True, tangent=True)
        return f, K

    def _threads(self, elements_per_thread: int) -> int:
        """Threads of an element kernel: :func:`kernel_threads`, at most as many as the colouring keeps busy
        (:func:`~flexbody.fem.patterns.parallel_width`: 1 for a numbering without locality)."""
        return min(kernel_threads(self.n_elements, elements_per_thread), self._parallel_width)

    def _assemble(self, x, vel, force=False, tangent=False, damping=False):
        """One kernel pass: force (3n,), tangent and damping matrices (CSR on the fixed pattern) as asked."""
        if tangent or damping:
            if self._pattern is None:  # built once, on the first matrix request
                self._pattern = patterns.block_pattern(self._cells, self.n_nodes)
            indptr, indices, offsets, row_length = self._pattern
        else:  # force only: no pattern needed
            indptr = indices = None
            offsets, row_length = np.zeros((1, 1, 1), np.int64), np.zeros(1, np.int64)
        nnz = 0 if indices is None else len(indices)
        f = np.zeros((self.n_nodes, 3))
        K_data = np.zeros(nnz if tangent else 0)
        C_data = np.zeros(nnz if damping else 0)
        status = np.zeros(self.n_elements, np.int64)
        self._modes_converged_at = None
        self._alpha[...] = 0.0  # the modes' solve starts from zero: no state carries over between calls
        kernels.assemble_matrices(
            self._color_ptr,
            self._block_ptr,
            self._color_elems,
            self._cells,
            self._G,
            self._wdv,
            x,
            vel,
            *self._material_args(),
            self._alpha,
            self._h_elem,
            force,
            tangent,
            damping and self.material.damping > 0.0,
            offsets,
            row_length,
            self._threads(MATRIX_ELEMENTS_PER_THREAD),
            f,
            K_data,
            C_data,
            status,
            law=self.material.law,
        )
        if self.locking is not None and np.any(status < 0):
            e = int(np.flatnonzero(status < 0)[0])
            raise ConvergenceError(f"body {self.name!r}: incompatible modes of element {e} did not converge")
        if self.locking is not None and (self.material.damping == 0.0 or not np.any(vel)):
            self._modes_converged_at = x.copy()
        shape = (self.n_dofs, self.n_dofs)
        K = sp.csr_matrix((K_data, indices, indptr), shape=shape) if tangent else None
        C = sp.csr_matrix((C_data, indices, indptr), shape=shape) if damping else None
        return f.ravel(), K, C

    # ------------------------------------------------------------------ strain and stress fields
    def gauss_point_fields(self, q: ArrayLike) -> dict[str, np.ndarray]:
        """Kinematic and stress fields at Gauss points, each (m, nq, 3, 3) except ``J`` and ``von_mises`` (m, nq).

        Keys: ``F`` deformation gradient, ``green_lagrange_strain`` E, ``pk2_stress`` S [Pa],
        ``cauchy_stress`` σ = F S Fᵀ / J [Pa], ``J`` = det F, ``von_mises`` [Pa]. Enhanced modes are included
        for the incompatible-mode element (the modes converged at q with zero velocity, see :meth:`_elastic_modes`).
        """
        F = self._deformation_gradients(q)
        E = 0.5 * (np.einsum("egki,egkj->egij", F, F) - np.eye(3))
        S = self.material.pk2_stress(F)
        J = np.linalg.det(F)
        sigma = np.einsum("egik,egkl,egjl->egij", F, S, F) / J[..., None, None]
        dev = sigma - np.trace(sigma, axis1=-2, axis2=-1)[..., None, None] * np.eye(3) / 3.0
        vm = np.sqrt(1.5 * np.einsum("...ij,...ij->...", dev, dev))
        return {"F": F, "green_lagrange_strain": E, "pk2_stress": S, "cauchy_stress": sigma, "J": J, "von_mises": vm}

    def _deformation_gradients(self, q) -> np.ndarray:
        """F (m, nq, 3, 3) at the Gauss points (with the enhanced modes of the incompatible-mode element)."""
        x = self._positions(q)
        xe = np.concatenate([x[self._cells], self._elastic_modes(x)], axis=1)
        return np.einsum("eai,egak->egik", xe, self._G, optimize=True)

    def inversion(self, q: ArrayLike) -> str | None:
        """Where the body at coordinates q (n,) is inverted, as text naming the element and Gauss point of the
        smallest det F ≤ 0, or None when det F > 0 at every Gauss point (a state that can be an equilibrium)."""
        J = np.linalg.det(self._deformation_gradients(q))
        e, g = np.unravel_index(int(np.argmin(J)), J.shape)
        if J[e, g] > 0.0:
            return None
        return (
            f"body {self.name!r} is inverted: det F = {J[e, g]:.3g} at Gauss point {g} of element {e} "
            f"({int(np.count_nonzero(J <= 0.0))} Gauss points with det F ≤ 0)"
        )

    def stress_stiffness(self, stress: np.ndarray) -> sp.csr_matrix:
        """The initial-stress (geometric) stiffness of a PK2 stress field, K_σ,ab = ∫ ∇N_a · S ∇N_b dV (N, N)
        [N/m]: the scalar matrix whose ⊗ I₃ is the part of the tangent that the stress S (m, nq, 3, 3) [Pa] at
        the Gauss points contributes (the nodal gradients only; an incompatible-mode element's modes are left out)."""
        nn = self._cells.shape[1]
        G = self._G[:, :, :nn]
        Ke = np.einsum("eg,egak,egkl,egbl->eab", self._wdv, G, np.asarray(stress, dtype=float), G, optimize=True)
        rows = np.repeat(self._cells, nn, axis=1).ravel()
        cols = np.tile(self._cells, (1, nn)).ravel()
        return sp.csr_matrix((Ke.ravel(), (rows, cols)), shape=(self.n_nodes,) * 2)

    def cell_fields(self, q: ArrayLike) -> dict[str, np.ndarray]:
        """Volume averages over each element of :meth:`gauss_point_fields` ((m, 3, 3) or (m,))."""
        weights = self._wdv / self._wdv.sum(axis=1, keepdims=True)
        out = {}
        for key, val in self.gauss_point_fields(q).items():
            out[key] = np.einsum("eg,eg...->e...", weights, val)
        return out

    def point_fields(self, q: ArrayLike) -> dict[str, np.ndarray]:
        """Element averages of :meth:`cell_fields` averaged again at the nodes ((n, 3, 3) or (n,))."""
        return {key: self.nodal_average(val) for key, val in self.cell_fields(q).items()}

    def nodal_average(self, values: np.ndarray) -> np.ndarray:
        """Average per-element values (m, ...) over the elements sharing each node: (n, ...)."""
        flat = values.reshape(len(values), -1)
        acc = np.zeros((self.n_nodes, flat.shape[1]))
        np.add.at(acc, self._cells.ravel(), np.repeat(flat, self._cells.shape[1], axis=0))
        count = np.bincount(self._cells.ravel(), minlength=self.n_nodes).astype(float)
        return (acc / count[:, None]).reshape((self.n_nodes, *values.shape[1:]))

    def strain_energy(self, q: ArrayLike) -> float:
        """Elastic strain energy U(q) = ∫ W(F) dV [J] at positions q (3n,), W of :func:`strain_energy_density`.

        Its gradient ∂U/∂q is the elastic internal force k(q, 0). For the incompatible-mode element F includes
        the enhanced modes α converged at q (r_α(q, α) = 0), so U is Π(q, α(q)) and ∂U/∂q the condensed force.
        Cost: one pass of a numba kernel, 0.4–0.8 internal-force calls (the former einsum form took 3.4–11);
        with incompatible modes add one mode solve (≈ an enhanced internal-force call) unless the modes were
        last converged at exactly this q (e.g. by ``internal_force(q)`` of an elastic body).
        """
        return float(np.sum(self.element_strain_energies(q)))

    def element_strain_energies(self, q: ArrayLike) -> np.ndarray:
        """Strain energy ∫_e W(F) dV [J] of every element (m,) at positions q (3n,); see :meth:`strain_energy`."""
        x = self._positions(q)
        kind, params = self._material_args()[:2]
        if kind not in ENERGY_KINDS:
            raise FlexbodyError(f"body {self.name!r}: no strain energy for material {type(self.material).__name__}")
        energy = np.empty(self.n_elements)
        n_threads = self._threads(FORCE_ELEMENTS_PER_THREAD)
        alpha = self._elastic_modes(x)  # empty for plain elements
        energy_kernels.element_strain_energies(
            self._cells, self._G, self._wdv, x, alpha, kind, params, n_threads, energy, law=self.material.law
        )
        return energy

    def _elastic_modes(self, x) -> np.ndarray:
        """The enhanced modes α (m, n_enh, 3) converged at positions x (n, 3) with zero velocity.

        They solve the elastic r_α(x, α) = 0 (no viscous stress). The solve (one enhanced force pass) is skipped
        when the last kernel pass converged the modes at exactly these x with zero velocity or an elastic
        material (a memo of a function of x: every solve starts from α = 0). Plain elements: α is empty
        (m, 0, 3).
        """
        if self.locking is not None and not (
            self._modes_converged_at is not None and np.array_equal(self._modes_converged_at, x)
        ):
            self._assemble(x, np.zeros_like(x), force=True)
        return self._alpha

    def __repr__(self) -> str:
        return (
            f"FlexibleBody({self.name!r}, {self.element.name}, n_nodes={self.n_nodes}, "
            f"n_elements={self.n_elements}, material={type(self.material).__name__})"
        )


def kernel_threads(n_elements: int, elements_per_thread: int = FORCE_ELEMENTS_PER_THREAD) -> int:
    """Threads for an element kernel over ``n_elements`` elements; 1 runs its serial path on the calling thread.

    The smallest of: the CPUs this process may run on (its affinity mask, e.g. under ``taskset`` or a container
    CPU set; ``os.cpu_count()`` where the mask is unknown), numba's thread count (``NUMBA_NUM_THREADS`` or a
    ``numba.set_num_threads`` of the caller, so a user's lower setting holds) and
    ``n_elements // elements_per_thread`` (a second thread pays only from twice that many elements); at least 1.
    Below twice ``elements_per_thread`` elements the answer is 1 whatever the machine, without asking it (the
    affinity and numba queries cost about 1.5 µs, which a small body's kernel call would pay every time).
    """
    cap = n_elements // elements_per_thread
    if cap <= 1:
        return 1
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # no affinity masks on this platform
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, nb.get_num_threads(), cap))


def strain_energy_density(material: Material, F: np.ndarray) -> np.ndarray:
    """Strain energy density W(F) [J/m³] of the supported laws, vectorised over (..., 3, 3).

    The NumPy reference of ``energy_kernels.strain_energy_density`` (same formulas, see :mod:`flexbody.fem.materials`);
    user laws evaluate their sympy energy (:meth:`flexbody.fem.hyperelastic.Hyperelastic.strain_energy_density`).
    """
    if material.law is not None:
        assert isinstance(material, Hyperelastic)  # only user laws carry a compiled law
        return material.strain_energy_density(F)
    C = np.einsum("...ki,...kj->...ij", F, F)
    p = material.params
    if material.kind == SVK:
        E = 0.5 * (C - np.eye(3))
        tr = np.trace(E, axis1=-2, axis2=-1)
        return 0.5 * p[0] * tr**2 + p[1] * np.einsum("...ij,...ij->...", E, E)
    I1 = np.trace(C, axis1=-2, axis2=-1)
    I2 = 0.5 * (I1**2 - np.einsum("...ij,...ij->...", C, C))
    J = np.linalg.det(F)
    if material.kind == NEO_HOOKEAN:
        return 0.5 * p[0] * (I1 - 3) - p[0] * np.log(J) + 0.5 * p[1] * np.log(J) ** 2
    if material.kind == MOONEY_RIVLIN:
        return p[0] * (J ** (-2 / 3) * I1 - 3) + p[1] * (J ** (-4 / 3) * I2 - 3) + 0.5 * p[2] * (J - 1) ** 2
    raise FlexbodyError(f"no strain energy for material {type(material).__name__}")
