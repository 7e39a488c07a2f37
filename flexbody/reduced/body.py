"""ReducedBody: a flexible body reduced to a few shapes that ride on a floating frame of reference.

The frame is a link of a rigid tree, so the body moves with whatever joint carries that link (a revolute hub,
a free flyer, …). Its nodes sit at x_a = p + R (X̄_a + Σ_k η_k ψ_ka) [FFRF: Shabana, Dynamics of Multibody
Systems, ch. 5]: (R, p) the link frame, X̄_a the reference positions in it, ψ_k the shapes of the basis (a
:class:`~flexbody.reduced.basis.ReducedBasis`: Craig–Bampton with its interface clamped to the frame, or
free–free modes), η the r modal coordinates, which join the joint coordinates of the assembled system.

With the frame Jacobian J (6, n_tree) and bias J̇v (6,) of the link (world axes), T = diag(Rᵀ, Rᵀ) J maps the
tree velocities to the frame's [v; ω] in frame axes, and c = diag(Rᵀ, Rᵀ) J̇v is its classical bias
acceleration; with M_b, Q_v of :mod:`flexbody.reduced.invariants` the body adds

    M:  [[Tᵀ M_b,ff T, Tᵀ M_b,fη], [M_b,ηf T, M_b,ηη]],
    h:  [Tᵀ; I] (M_b [c; 0] + Q_v − Q_g) + [0; K_r η + D_r η̇],

K_r = ΨᵀKΨ the stiffness at the reference, stiffened by the stresses of the gravity and centrifugal fields
(:mod:`flexbody.reduced.stiffening`: clamp held, or inertia relief for a free–free body), and D_r = β K_r the
Kelvin–Voigt damping of the body's material (retardation time β).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ..errors import FlexbodyError, ModelError
from ..fem.flexible_body import FlexibleBody
from ..rigid.link import Link
from .basis import ReducedBasis
from .frame_forces import composed_frame_forces, pack, stiffness_into
from .invariants import InertiaInvariants, frame_state, frame_terms
from .stiffening import geometric_stiffness

if TYPE_CHECKING:
    from ..rigid.state_view import StateView
    from .anchors import ReducedPoint

log = logging.getLogger(__name__)

SINGULAR_MASS = 1e-9
"""Smallest eigenvalue of M_b at η = 0 relative to the largest below which a basis is refused: it then holds a
rigid-body motion that the frame already carries."""


class ReducedBody:
    """A reduced-order flexible body on the frame of ``link``.

    Parameters
    ----------
    name : str
        Unique in the system; labels its modal coordinates ``name.eta0`` …
    basis : ReducedBasis
        From :func:`flexbody.solvers.craig_bampton` (its interface held in the frame, i.e. clamped to the link;
        ``clamp`` selects fewer interface nodes) or :func:`flexbody.solvers.free_modes`. Its body gives the
        mesh, material and reference configuration; the body's nodes at reference must sit where the link frame
        at the system's q0 carries them.
    link : Link
        The rigid link whose frame is the floating frame of reference (its own mass, if any, adds to the body's).
    clamp : node selection, optional
        Interface nodes held in the frame (default: the whole interface). The other interface coordinates stay
        generalized coordinates (Craig–Bampton constraint modes).
    geometric_stiffening : bool, optional
        Stiffen by the quasi-static stresses of gravity and the centrifugal field (default True). A clamped body's
        static responses are those with the clamp held; a free–free body's those under inertia relief (the
        loads less the rigid-body acceleration they give), so a uniform field such as gravity leaves it
        unstressed.

    Attributes
    ----------
    n_dofs : int, r modal coordinates; coordinate_labels : list[str];
    stiffness, damping : (r, r) K_r [N/m per modal unit²], D_r [N·s/m per modal unit²];
    shapes : (N, 3, r) the shapes in world axes at the reference configuration [m per modal unit].
    """

    def __init__(
        self,
        name: str,
        basis: ReducedBasis,
        link: Link,
        *,
        clamp: str | ArrayLike | None = None,
        geometric_stiffening: bool | None = None,
    ):
        if not isinstance(name, str) or not name:
            raise ModelError("ReducedBody: name must be a non-empty string")
        who = f"reduced body {name!r}"
        if not isinstance(basis, ReducedBasis):
            raise ModelError(
                f"{who}: basis must be a ReducedBasis (craig_bampton or free_modes), got {type(basis).__name__}"
            )
        if not isinstance(link, Link):
            raise ModelError(f"{who}: link must be a Link of a RigidTree, got {type(link).__name__}")
        self.name, self.basis, self.link, self.tree = name, basis, link, link.tree
        self.body: FlexibleBody = basis.body
        keep, self.clamp_dofs = self._kept_columns(basis, clamp, who)
        if not keep.size:
            raise ModelError(
                f"{who}: the basis leaves no coordinate ({basis.fixed_interface_frequencies.size} fixed-interface "
                "modes, and the interface is clamped to the frame): ask craig_bampton for n_modes >= 1, or leave "
                "interface nodes free (clamp=...)"
            )
        self.geometric_stiffening = True if geometric_stiffening is None else bool(geometric_stiffening)
        self.stiffening: np.ndarray | None = None
        N = self.body.n_nodes
        self.shapes = basis.basis[:, keep].reshape(N, 3, keep.size)
        self.stiffness = basis.stiffness[np.ix_(keep, keep)]
        self.damping = self.body.material.damping * self.stiffness
        self.n_dofs = int(keep.size)
        self.coordinate_labels = [f"{name}.eta{k}" for k in range(self.n_dofs)]
        self.invariants: InertiaInvariants | None = None  # frame-axes invariants, made by prepare() at assembly
        self.X: np.ndarray | None = None
        self.packed: np.ndarray | None = None  # the constants end to end (frame_forces.pack), made by prepare()
        self.projector: np.ndarray | None = None  # (SᵀMS)⁻¹SᵀM of modal_state, made on its first use

    @staticmethod
    def _kept_columns(basis: ReducedBasis, clamp, who: str) -> tuple[np.ndarray, np.ndarray]:
        """(columns of the basis that stay coordinates: the modes and the interface coordinates not clamped, the
        body's coordinates held in the frame)."""
        interface = basis.interface
        if clamp is None:
            held = interface
        else:
            nodes = np.unique(basis.body.nodes(clamp))
            held = (3 * nodes[:, None] + np.arange(3)).ravel()
            if not np.isin(held, interface).all():
                raise ModelError(f"{who}: clamp {clamp!r} names nodes outside the basis's interface")
        columns = np.r_[interface, np.full(basis.basis.shape[1] - interface.size, -1)]
        return np.flatnonzero(~np.isin(columns, held)), np.asarray(held, dtype=np.int64)

    # ------------------------------------------------------------------ assembly
    def prepare(self, R0: np.ndarray, p0: np.ndarray) -> None:
        """Record the body in the link frame at the system's start pose (R0, p0): reference positions X̄,
        shapes in frame axes, and the inertia invariants; refuse a basis that holds a rigid-body motion."""
        X = (self.body.mesh.points - p0) @ R0
        self._check_placement(X)
        shapes = np.einsum("ji,ajk->aik", R0, self.shapes)
        scalar = self.body.mass_matrix()[::3, ::3]
        inv = InertiaInvariants.of(scalar, X, shapes)
        M = frame_terms(inv, np.zeros(self.n_dofs), np.zeros(self.n_dofs), np.zeros(3)).mass
        eig = np.linalg.eigvalsh(M)
        if eig[0] <= SINGULAR_MASS * eig[-1]:
            raise FlexbodyError(
                f"reduced body {self.name!r}: its basis holds a rigid-body motion, which the frame of "
                f"link {self.link.name!r} already carries (mass matrix eigenvalue {eig[0]:.3e}); clamp "
                f"the interface to the frame or use free–free modes"
            )
        self.X, self.frame_shapes, self.invariants, self.projector = X, shapes, inv, None
        if self.geometric_stiffening:
            lowest = (2 * np.pi * self.basis.fixed_interface_frequencies[0]) ** 2 if not self.clamp_dofs.size else None
            self.stiffening = geometric_stiffness(
                self.body, self.shapes.reshape(-1, self.n_dofs), self.clamp_dofs, X, R0, lowest
            )
        self.packed = pack(self)

    def _check_placement(self, X: np.ndarray) -> None:
        """A WARNING when the interface nodes (where the body meets its link) lie far from the link frame — more
        than twice the body's size: a mesh given in another frame, or at another pose, is the usual cause."""
        nodes = np.unique(self.basis.interface // 3)
        size = float(np.ptp(X, axis=0).max())
        distance = float(np.linalg.norm(X[nodes], axis=1).min()) if nodes.size else 0.0
        if distance > 2.0 * size:
            log.warning(
                "reduced body %r: its interface nodes lie %.3g m from the frame of link %r, and the body is %.3g m "
                "across: is the mesh given in the link frame at the system's start pose?",
                self.name,
                distance,
                self.link.name,
                size,
            )

    def stiffness_at(self, gravity: np.ndarray, omega: np.ndarray) -> np.ndarray:
        """K_r + Σ c_i K_G,i (r, r) for gravity and angular velocity in frame axes (K_r without stiffening;
        :func:`~flexbody.reduced.frame_forces.stiffness_into`)."""
        if self.stiffening is None:
            return self.stiffness
        K = np.empty_like(self.stiffness)
        stiffness_into(self.stiffness, self.stiffening, _vector(gravity), _vector(omega), K)
        return K

    def __repr__(self) -> str:
        return f"ReducedBody({self.name!r}, {self.n_dofs} coordinates on link {self.link.name!r})"

    # ------------------------------------------------------------------ one state
    def state(self, ev: StateView) -> ReducedState:
        """The frame, modal state and M_b, Q_v of this body at the state ``ev`` (kept with its workspace)."""
        return ev.memo(("reduced", self.name), lambda: ReducedState(self, ev))

    def point(self, nodes: str | ArrayLike) -> ReducedPoint:
        """The anchor at the mean of ``nodes`` (a node or face set name, or node indices) of this body."""
        from .anchors import ReducedPoint

        return ReducedPoint(self, nodes)

    def nodal_positions(self, R: np.ndarray, p: np.ndarray, eta: np.ndarray) -> np.ndarray:
        """World positions (N, 3) [m] of every node for the frame (R, p) and modal coordinates η (r,)."""
        return p + (self.X + self.frame_shapes @ eta) @ R.T

    def modal_state(
        self, R: np.ndarray, p: np.ndarray, velocity: np.ndarray, positions: np.ndarray, velocities: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """(η, η̇) (r,) nearest, in the body's mass metric, to nodal ``positions`` and ``velocities`` (N, 3) [m, m/s]
        of the same mesh (e.g. a full model's nodes), seen from the frame (R, p) moving with the spatial
        ``velocity`` (6,) (world axes: the velocity of the frame's point at the world origin, then ω, as
        :class:`~flexbody.rigid.kinematics.Kinematics` gives it): with u = Rᵀ(x − p) − X̄ and u̇ = Rᵀ(ẋ − v₀ − ω × x)
        the displacement and its rate in the frame, η = (SᵀMS)⁻¹SᵀM u (S the shapes in frame axes, M the body's
        mass matrix), the inverse of :meth:`nodal_positions` on the span of the shapes. Needs the assembled system
        (the frame's placement at q0)."""
        if self.X is None:
            raise ModelError(f"reduced body {self.name!r}: modal_state needs the body assembled in a system first")
        shape = (self.body.n_nodes, 3)
        if np.shape(positions) != shape or np.shape(velocities) != shape:
            raise ModelError(f"reduced body {self.name!r}: positions and velocities must be {shape} (the body's nodes)")
        if self.projector is None:
            S = self.frame_shapes.reshape(-1, self.n_dofs)
            MS = self.body.mass_matrix() @ S
            self.projector = np.linalg.solve(S.T @ MS, MS.T)
        u = (positions - p) @ R - self.X
        wx, wy, wz = velocity[3:]
        rigid = velocity[:3] + positions @ np.array([[0.0, wz, -wy], [-wz, 0.0, wx], [wy, -wx, 0.0]])  # v₀ + ω × x
        return self.projector @ u.ravel(), self.projector @ ((velocities - rigid) @ R).ravel()


class ReducedState:
    """A reduced body at one state: frame pose R (3, 3), p (3,); T (6, n_tree) and c (6,) (frame axes);
    ω (3,) frame axes; η, η̇ (r,); the :class:`~flexbody.reduced.invariants.FrameTerms`; columns of the tree
    and of η."""

    def __init__(self, body: ReducedBody, ev):
        kin = ev.kinematics(body.tree)
        i = body.link.index
        self.R, self.p = kin.R[i], kin.p[i]
        J, bias = kin.frame_terms(body.link)
        s = ev.slice_of(body.tree)
        self.T, self.c, self.frame_velocity, self.gravity = np.empty(J.shape), np.empty(6), np.empty(6), np.empty(3)
        frame_state(self.R, J, bias, ev.v[s], body.tree.gravity, self.T, self.c, self.frame_velocity, self.gravity)
        cols = ev.slice_of(body)
        self.tree_columns, self.columns = np.arange(s.start, s.stop), np.arange(cols.start, cols.stop)
        self.eta, self.eta_dot = ev.q[cols], ev.v[cols]
        assert body.invariants is not None  # made by prepare() at assembly
        self.terms = frame_terms(body.invariants, self.eta, self.eta_dot, self.frame_velocity[3:])
        self.stiffness = body.stiffness_at(self.gravity, self.frame_velocity[3:])

    def mass_blocks(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The body's share of M: on the tree (n_t, n_t), tree × modal (n_t, r) and modal (r, r) columns."""
        M, T = self.terms.mass, self.T
        return T.T @ M[:6, :6] @ T, T.T @ M[:6, 6:], M[6:, 6:]

    def forces(
        self, body: ReducedBody, a_tree, eta_ddot, *, velocity: bool = True, gravity: bool = True, elastic: bool = True
    ) -> tuple[np.ndarray, np.ndarray]:
        """The body's share of M a + h on the tree (n_t,) and modal (r,) rows at accelerations a_tree, η̈ (None:
        zero): inertia M_b [T a + c; η̈], velocity products Q_v and damping D_r η̇ (``velocity``), gravity −Q_g
        (``gravity``) and the elastic K_r η (``elastic``; D_r η̇ only with ``velocity`` too): the frame forces
        (:func:`~flexbody.reduced.frame_forces.composed_frame_forces`, from this state's M_b, Q_v and K) in the frame,
        T (the frame Jacobian) to the tree."""
        acc = np.zeros(6) if a_tree is None else self.T @ a_tree
        if velocity:
            acc += self.c
        terms, F = self.terms, np.empty(6 + body.n_dofs)
        eta_ddot = np.zeros(body.n_dofs) if eta_ddot is None else _vector(eta_ddot)
        args = (self.stiffness, acc, self.gravity, self.eta, self.eta_dot, eta_ddot, velocity, gravity, elastic, F)
        composed_frame_forces(body.packed, body.n_dofs, terms.mass, terms.velocity_forces, terms.first, *args)
        return self.T.T @ F[:6], F[6:]

    def kinetic_energy(self) -> float:
        """½ wᵀ M_b w [J], w = [T v; η̇]."""
        w = np.concatenate([self.frame_velocity, self.eta_dot])
        return 0.5 * float(w @ self.terms.mass @ w)

    def potential_energy(self, body: ReducedBody) -> float:
        """½ ηᵀ K η − g·(m p + R s) [J], K the stiffness of the state (gravity potential zero at the world origin)."""
        g, inv = body.tree.gravity, body.invariants
        assert inv is not None  # made by prepare() at assembly
        centre = inv.mass * self.p + self.R @ self.terms.first
        return 0.5 * float(self.eta @ self.stiffness @ self.eta) - float(g @ centre)


def _vector(x) -> np.ndarray:
    return np.ascontiguousarray(x, dtype=float)
