"""RigidTree: links connected by revolute, prismatic and fixed joints in relative joint coordinates.

Provides [DE-2] τ = M(q)q̈ + b(q, q̇) + g(q) by recursive algorithms (composite rigid body for M,
recursive Newton–Euler for b and g; :mod:`flexbody.rigid.algorithms`), forward kinematics, world
Jacobians of points and frames and the classical bias acceleration J̇q̇ of points and frames.

Frames: every link has a frame (its joint frame after the joint motion). Positions are in metres in the
world frame; a point on a link is given by its offset in the link frame. Frame Jacobians are (6, n) with
rows [linear velocity of the frame origin; angular velocity], both in world axes (the
"local world aligned" convention of Pinocchio).
"""

from __future__ import annotations

from typing import TypeAlias

import numpy as np
from numpy.typing import ArrayLike

from ..errors import ModelError, StateError
from . import algorithms as alg
from . import tree_dynamics
from .anchors import LinkFrame, LinkPoint
from .joints import COMPOUND_JOINTS, Fixed, FreeFlyer, Planar, Prismatic, Revolute, Spherical, Universal
from .kinematics import Kinematics
from .link import Link, checked_inertia, checked_rotation, checked_vector3

Joint: TypeAlias = Revolute | Prismatic | Fixed | Spherical | FreeFlyer | Universal | Planar
"""The joints a link can be added with (:meth:`RigidTree.add_link`)."""


class RigidTree:
    """A kinematic tree of rigid links rooted at the ground.

    Parameters
    ----------
    name : str
        Name of the tree (unique in a system; prefixes coordinate labels).
    gravity : array_like (3,), optional
        Gravitational acceleration in world axes [m/s²]; default (0, 0, −9.81).

    Examples
    --------
    >>> arm = RigidTree("arm", gravity=(0, -9.81, 0))
    >>> l1 = arm.add_link("l1", joint=Revolute((0, 0, 1)), mass=1.0, com=(0.5, 0, 0))
    >>> l2 = arm.add_link("l2", parent=l1, joint=Revolute((0, 0, 1)), origin=(1, 0, 0), mass=1.0)
    """

    def __init__(self, name: str, gravity: ArrayLike = (0.0, 0.0, -9.81)):
        if not isinstance(name, str) or not name:
            raise ModelError("RigidTree: name must be a non-empty string")
        self.name = name
        self.gravity = checked_vector3(gravity, f"tree {name!r}: gravity")
        self.links: list[Link] = []
        self.limits: dict = {}  # link name -> JointLimits of its joint (trees loaded from URDF)
        self.visuals: dict = {}  # link name -> list of VisualMesh (trees loaded from URDF, for views)
        self._by_name: dict[str, Link] = {}
        self._arrays: dict | None = None
        self._kernel_model: tuple | None = None
        self._packed: tuple[np.ndarray, np.ndarray] | None = None  # packed_model(), the identity TreeData checks
        self._work_length = 0  # of the whole-tree kernels' work array, set with _packed
        self._n_dofs = 0

    # ------------------------------------------------------------------ building
    def add_link(
        self,
        name: str,
        parent: Link | str | None = None,
        joint: Joint | None = None,
        *,
        origin: ArrayLike = (0.0, 0.0, 0.0),
        rotation: ArrayLike | None = None,
        mass: float = 0.0,
        com: ArrayLike = (0.0, 0.0, 0.0),
        inertia: ArrayLike | None = None,
        check_inertia: bool = True,
    ) -> Link:
        """Add a link connected to ``parent`` (a Link, its name, or None for the ground).

        Parameters
        ----------
        joint : Revolute | Prismatic | Fixed | Spherical | FreeFlyer | Universal | Planar, default Revolute
            about z. A joint with several coordinates is added as massless parts named ``name.suffix`` ending
            in this link (:mod:`flexbody.rigid.joints`); ``link.coordinates`` lists its coordinates.
        origin, rotation : placement of the joint frame in the parent link frame (or the world for the
            ground): translation (3,) [m] and rotation matrix (3, 3).
        mass : float [kg]; com : (3,) centre of mass in the link frame [m];
        inertia : (3, 3) or (3,) rotational inertia about the com in link axes [kg m²].
        check_inertia : bool
            Refuse an inertia that is not physical (negative principal moments, triangle inequality). False
            leaves the check to the caller: :func:`flexbody.load_urdf` checks the bodies that fixed joints weld
            together as one, as robot files often give a massless placeholder link an incomplete inertia.
        """
        where = f"tree {self.name!r}, link {name!r}"
        if not isinstance(name, str) or not name:
            raise ModelError(f"tree {self.name!r}: link name must be a non-empty string")
        if name in self._by_name:
            raise ModelError(f"{where}: a link of that name already exists")
        parent_link = None if parent is None else self.link(parent)
        joint = Revolute() if joint is None else joint
        if not isinstance(joint, (Revolute, Prismatic, Fixed, *COMPOUND_JOINTS)):
            raise ModelError(
                f"{where}: joint must be Revolute, Prismatic, Fixed, Spherical, FreeFlyer, Universal or "
                f"Planar, got {type(joint).__name__}"
            )
        mass = float(mass)
        if not np.isfinite(mass) or mass < 0:
            raise ModelError(f"{where}: mass must be finite and non-negative, got {mass}")
        placement = (checked_rotation(rotation, f"{where}: rotation"), checked_vector3(origin, f"{where}: origin"))
        body = (
            mass,
            checked_vector3(com, f"{where}: com"),
            checked_inertia(inertia, f"{where}: inertia", check_inertia),
        )
        if not isinstance(joint, COMPOUND_JOINTS):
            return self._append(name, parent_link, joint, placement, body)
        names = [f"{name}.{suffix}" for suffix in joint.suffixes]
        for part_name in names:
            if part_name in self._by_name:
                raise ModelError(f"{where}: a link named {part_name!r} (a part of this joint) already exists")
        massless = (0.0, np.zeros(3), np.zeros((3, 3)))
        identity = (np.eye(3), np.zeros(3))
        parts = joint.parts()
        first = len(self.links)
        link = parent_link
        for k, part in enumerate(parts):
            last = k == len(parts) - 1
            link = self._append(
                name if last else names[k],
                link,
                part,
                placement if k == 0 else identity,
                body if last else massless,
                label=names[k],
                compound=joint,
            )
        assert link is not None  # a compound joint has parts
        link.coordinates = tuple(l.coordinate for l in self.links[first:])
        return link

    def _append(self, name, parent_link, joint, placement, body, label=None, compound=None) -> Link:
        coordinate = self.n_dofs if joint.n_dofs else None
        mass, com, inertia = body
        link = Link(
            self,
            len(self.links),
            name,
            parent_link,
            joint,
            placement[0],
            placement[1],
            mass,
            com,
            inertia,
            coordinate,
            label=label,
            compound=compound,
        )
        self.links.append(link)
        self._by_name[name] = link
        self._n_dofs += joint.n_dofs
        self._arrays = self._kernel_model = self._packed = None
        return link

    def link(self, key: Link | str) -> Link:
        """The link named ``key`` (or ``key`` itself if it is one of this tree's links)."""
        if isinstance(key, Link):
            if key.tree is not self:
                raise ModelError(f"link {key.name!r} belongs to tree {key.tree.name!r}, not {self.name!r}")
            return key
        if key not in self._by_name:
            raise ModelError(f"tree {self.name!r} has no link {key!r}; links: {list(self._by_name)}")
        return self._by_name[key]

    @property
    def n_links(self) -> int:
        """Number of links, counting the massless parts of joints with several coordinates."""
        return len(self.links)

    @property
    def n_dofs(self) -> int:
        """Number of joint coordinates of the tree."""
        return self._n_dofs

    @property
    def rotation_vectors(self) -> np.ndarray:
        """First coordinates (k,) of the rotation vectors φ of the tree's spherical and free-flyer joints."""
        return np.array(
            [l.coordinate for l in self.links if l.joint.code == alg.SPHERICAL and l.joint.column == 0], dtype=np.int64
        )

    @property
    def coordinate_links(self) -> list[Link]:
        """Links with a joint coordinate, in coordinate order."""
        return [link for link in self.links if link.coordinate is not None]

    @property
    def coordinate_labels(self) -> list[str]:
        """(n_dofs,) labels of the joint coordinates in coordinate order, ``"tree.link"`` (``"tree.link.suffix"``
        for the parts of a joint with several coordinates, e.g. ``'arm.base.rx'``)."""
        return [f"{self.name}.{link.label}" for link in self.coordinate_links]

    def point(self, link: Link | str, offset: ArrayLike = (0.0, 0.0, 0.0)) -> LinkPoint:
        """An anchor at ``offset`` [m] (link frame) on ``link``, for constraints and tasks."""
        return LinkPoint(self.link(link), checked_vector3(offset, f"point on {link!r}: offset"))

    def frame(
        self, link: Link | str, offset: ArrayLike = (0.0, 0.0, 0.0), rotation: ArrayLike | None = None
    ) -> LinkFrame:
        """An anchor frame on ``link``: origin ``offset`` and axes ``rotation`` relative to the link frame."""
        return LinkFrame(
            self.link(link),
            checked_vector3(offset, f"frame on {link!r}: offset"),
            checked_rotation(rotation, f"frame on {link!r}: rotation"),
        )

    # ------------------------------------------------------------------ flat arrays for the kernels
    def arrays(self) -> dict:
        """Flat model arrays (built once after the last :meth:`add_link`)."""
        if self._arrays is None:
            if not self.links:
                raise ModelError(f"tree {self.name!r} has no links")
            links = self.links
            dof = np.array([-1 if l.coordinate is None else l.coordinate for l in links], dtype=np.int64)
            support: list[np.ndarray] = []
            for l in links:
                chain, node = [], l
                while node is not None:
                    if node.coordinate is not None:
                        chain.append(node.index)
                    node = node.parent
                support.append(np.array(chain[::-1], dtype=np.int64))
            support_matrix = np.full((len(links), self.n_dofs), -1, dtype=np.int64)
            for i, supporting in enumerate(support):
                support_matrix[i, dof[supporting]] = supporting
            self._arrays = dict(
                parent=np.array([-1 if l.parent is None else l.parent.index for l in links], dtype=np.int64),
                joint_type=np.array([l.joint.code for l in links], dtype=np.int64),
                axis=np.array([l.joint.axis for l in links]),
                R_placement=np.array([l.placement_rotation for l in links]),
                p_placement=np.array([l.placement_origin for l in links]),
                dof=dof,
                mass=np.array([l.mass for l in links]),
                com=np.array([l.com for l in links]),
                inertia=np.array([l.inertia for l in links]),
                support_links=support,
                support_dofs=[dof[s] for s in support],
                support_matrix=support_matrix,
                all_dofs=np.arange(self.n_dofs),
            )
        return self._arrays

    # ------------------------------------------------------------------ evaluation
    def _check(self, name: str, x) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        if x.shape != (self.n_dofs,):
            raise StateError(f"tree {self.name!r}: {name} must have shape ({self.n_dofs},), got {x.shape}")
        if not np.all(np.isfinite(x)):
            raise StateError(
                f"tree {self.name!r}: {name} contains NaN or Inf at "
                f"{[self.coordinate_labels[i] for i in np.flatnonzero(~np.isfinite(x))]}"
            )
        return x

    def kinematics(self, q: ArrayLike, v: ArrayLike | None = None) -> Kinematics:
        """Positions, velocities and velocity-product accelerations of all links at (q, v)."""
        q = self._check("q", q)
        v = np.zeros_like(q) if v is None else self._check("v", v)
        return Kinematics(self, q, v)

    def kernel_model(self) -> tuple:
        """The flat model arrays the recursive kernels take (:mod:`flexbody.rigid.algorithms`): parent,
        joint type, axis, placement rotation and origin, coordinate index, mass, centre of mass, inertia."""
        if self._kernel_model is None:
            a = self.arrays()
            self._kernel_model = tuple(
                a[k]
                for k in ("parent", "joint_type", "axis", "R_placement", "p_placement", "dof", "mass", "com", "inertia")
            )
        return self._kernel_model

    def packed_model(self) -> tuple[np.ndarray, np.ndarray]:
        """The model as the whole-tree kernels take it (:func:`flexbody.rigid.tree_dynamics.packed_model`):
        (indices (3 n_links,) int64, reals (28 n_links,) float64), built once after the last :meth:`add_link`
        (a :class:`~flexbody.rigid.TreeData` made before a later link refuses this tree)."""
        if self._packed is None:
            tree_dynamics.compile_kernels()
            self._work_length = int(tree_dynamics.work_size(self.n_links, self.n_dofs))
            self._packed = tree_dynamics.packed_model(self.kernel_model())
        return self._packed

    def _vector(self, name: str, x) -> np.ndarray:
        """``x`` as a float vector of the tree's size (finiteness is checked in the kernels)."""
        x = np.asarray(x, dtype=float)
        if x.shape != (self.n_dofs,):
            raise StateError(f"tree {self.name!r}: {name} must have shape ({self.n_dofs},), got {x.shape}")
        return x

    def _refused(self, **inputs) -> StateError:
        """The error of a kernel that declined: the first input with NaN/Inf named, else a gravity that is not
        3 finite numbers, else M(q) singular."""
        for name, x in inputs.items():
            self._check(name, x)
        checked_vector3(self.gravity, f"tree {self.name!r}: gravity")
        return StateError(
            f"tree {self.name!r}: the mass matrix M(q) is not positive definite (a link chain "
            "ending in links without mass or rotational inertia?)"
        )

    def _evaluate(self, kernel, out, work: np.ndarray | None, gravity=None, **inputs):
        """``out`` (an array, or a tuple of arrays for a kernel with several outputs) filled by a whole-tree ``kernel``
        (:mod:`flexbody.rigid.tree_dynamics`) at the named input vectors; ``work`` None: a fresh work array. Float64
        contiguous inputs of the tree's size go straight to the kernel; others are converted (lists, integers,
        read-only or strided arrays: copied) or refused with a StateError naming the input (wrong shape, NaN/Inf)."""
        indices, reals = self.packed_model()
        if work is None:
            work = np.empty(self._work_length)
        args = list(inputs.values()) if gravity is None else [gravity, *inputs.values()]
        outs = out if isinstance(out, tuple) else (out,)
        try:
            if kernel(indices, reals, work, *args, *outs):
                return out
        except TypeError:  # numba found no matching signature (tree_dynamics.compile_kernels)
            pass
        vectors = {name: self._vector(name, x) for name, x in inputs.items()}  # the shapes named
        copies = [np.array(x, dtype=float) for x in vectors.values()]
        args = copies if gravity is None else [np.array(gravity, dtype=float), *copies]
        if not kernel(indices, reals, work, *args, *outs):
            raise self._refused(**vectors)
        return out

    def mass_matrix(self, q: ArrayLike) -> np.ndarray:
        """Joint-space mass matrix M(q) (n, n) [DE-2], by the composite-rigid-body algorithm (a new array;
        :func:`flexbody.rigid.mass_matrix` writes into a :class:`~flexbody.rigid.TreeData` instead)."""
        M = np.empty((self.n_dofs, self.n_dofs))
        return self._evaluate(tree_dynamics.mass_matrix_kernel, M, None, q=q)

    def inverse_dynamics(self, q: ArrayLike, v: ArrayLike, a: ArrayLike) -> np.ndarray:
        """τ = M a + b + g (n,) by recursive Newton–Euler [DE-2] (a new array;
        :func:`flexbody.rigid.inverse_dynamics` writes into a :class:`~flexbody.rigid.TreeData` instead)."""
        return self._rnea(q, v, a, self.gravity)

    def nonlinear_effects(self, q: ArrayLike, v: ArrayLike) -> np.ndarray:
        """h = b(q, v) + g(q) (n,) (a new array; :func:`flexbody.rigid.nonlinear_effects` writes into a
        :class:`~flexbody.rigid.TreeData` instead)."""
        return self._rnea(q, v, None, self.gravity)

    def bias_force(self, q: ArrayLike, v: ArrayLike) -> np.ndarray:
        """Centrifugal and Coriolis vector b(q, v) (n,) [DE-2]."""
        return self._rnea(q, v, None, np.zeros(3))

    def gravity_force(self, q: ArrayLike) -> np.ndarray:
        """Gravity vector g(q) (n,) [DE-2] (the joint forces that hold the tree still)."""
        return self._rnea(q, None, None, self.gravity)

    def _rnea(self, q, v, a, gravity) -> np.ndarray:
        zeros = np.zeros(self.n_dofs) if v is None or a is None else None
        v = zeros if v is None else v
        a = zeros if a is None else a
        tau = np.empty(self.n_dofs)  # every coordinate's row is written by the kernel
        return self._evaluate(tree_dynamics.inverse_dynamics_kernel, tau, None, gravity, q=q, v=v, a=a)

    def inverse_dynamics_derivatives(
        self, q: ArrayLike, v: ArrayLike, a: ArrayLike
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(∂τ/∂q, ∂τ/∂q̇, ∂τ/∂q̈ = M) (n, n) each of τ = M(q) q̈ + b(q, q̇) + g(q) [DE-2] at (q, v, a): the analytic
        derivatives of recursive Newton–Euler (Carpentier & Mansard 2018, :mod:`flexbody.rigid.rnea_derivatives`),
        with gravity, for every joint kind (spherical joints and free-flying bases in their exponential coordinates:
        ∂/∂φ and ∂/∂φ̇ of the rotation vector's rates, not Pinocchio's tangent-space derivatives)."""
        n = self.n_dofs
        out = (np.empty((n, n)), np.empty((n, n)), np.empty((n, n)))
        kernel = tree_dynamics.rnea_derivatives_kernel
        return self._evaluate(kernel, out, None, self.gravity, q=q, v=v, a=a)

    def forward_dynamics_derivatives(
        self, q: ArrayLike, v: ArrayLike, tau: ArrayLike
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(∂a/∂q, ∂a/∂q̇, ∂a/∂τ = M⁻¹) (n, n) each of the forward dynamics a = M(q)⁻¹(τ − b − g) at (q, v, τ): from
        τ(q, v, a) = τ at a = a(q, v, τ), ∂a/∂x = −M⁻¹ ∂τ/∂x (x = q, q̇), with the analytic ∂τ/∂x of
        :meth:`inverse_dynamics_derivatives` at that a and one Cholesky factor of M (as Pinocchio's
        computeABADerivatives)."""
        n = self.n_dofs
        out = (np.empty(n), np.empty((n, n)), np.empty((n, n)), np.empty((n, n)))
        kernel = tree_dynamics.forward_derivatives_kernel
        return self._evaluate(kernel, out, None, self.gravity, q=q, v=v, tau=tau)[1:]

    def forward_dynamics(self, q: ArrayLike, v: ArrayLike, tau: ArrayLike) -> np.ndarray:
        """Unconstrained joint accelerations a = M⁻¹(τ − b − g) (n,): CRBA, RNEA and a Cholesky solve in
        one compiled call (a new array; :func:`flexbody.rigid.forward_dynamics` writes into a
        :class:`~flexbody.rigid.TreeData` instead)."""
        a = np.empty(self.n_dofs)
        return self._evaluate(tree_dynamics.forward_dynamics_kernel, a, None, self.gravity, q=q, v=v, tau=tau)

    def reference_coordinates(self) -> np.ndarray:
        """The zero configuration (n,) (link frames at their placements)."""
        return np.zeros(self.n_dofs)

    def __repr__(self) -> str:
        return f"RigidTree({self.name!r}, {self.n_links} links, {self.n_dofs} dofs)"
