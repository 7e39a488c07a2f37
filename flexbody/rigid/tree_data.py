"""The explicit workspace of the whole-tree algorithms, in the manner of Pinocchio's ``Model``/``Data``: the
:class:`~flexbody.rigid.RigidTree` is the model, a :class:`TreeData` made once for it holds every work and
output array, and the algorithms are free functions of (tree, data, q, v, …) [DE-2] τ = M(q)q̈ + b(q, q̇) + g(q):

=====================================================  =====================================  ============
call                                                   computes                               into
=====================================================  =====================================  ============
:func:`mass_matrix` ``(tree, data, q)``                M(q) by the composite-rigid-body alg.  ``data.M``
:func:`inverse_dynamics` ``(tree, data, q, v, a)``     τ = M a + b + g by Newton–Euler        ``data.tau``
:func:`nonlinear_effects` ``(tree, data, q, v)``       h = b + g (Newton–Euler with a = 0)    ``data.h``
:func:`forward_dynamics` ``(tree, data, q, v, tau)``   a = M⁻¹(τ − h) (CRBA, RNEA, Cholesky)  ``data.a``
=====================================================  =====================================  ============

Each returns the data's own output array, which the next call of the same function overwrites (copy it to
keep it), as Pinocchio's ``rnea(model, data, q, v, a)`` returns ``data.tau``. A call is one compiled kernel
(:mod:`flexbody.rigid.tree_dynamics`) on the tree packed into two flat arrays and the data's work array;
nothing is allocated. Float64 contiguous vectors go straight to the kernel, which checks their size and
finiteness; anything else (a list, integers, a read-only array, a wrong shape, NaN) falls back to the
tree's own validation, which converts it or raises a StateError naming the input and the coordinate. The
methods :meth:`RigidTree.mass_matrix` and the like compute the same in new arrays.

Example::

    data = fb.rigid.TreeData(tree)
    for q, v, a in states:
        tau = fb.rigid.inverse_dynamics(tree, data, q, v, a)   # data.tau, overwritten by the next call
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..errors import ModelError
from .tree import RigidTree
from .tree_dynamics import forward_dynamics_kernel, inverse_dynamics_kernel, mass_matrix_kernel, work_size, work_views

__all__ = ["TreeData", "mass_matrix", "inverse_dynamics", "nonlinear_effects", "forward_dynamics"]


class TreeData:
    """Work and output arrays of the whole-tree algorithms for one :class:`~flexbody.rigid.RigidTree`
    (Pinocchio's ``Data``): made once, passed to every call, overwritten by each.

    Parameters
    ----------
    tree : RigidTree
        The tree, with all its links: a link added after this data was made makes the algorithms refuse it.

    Attributes
    ----------
    tree : RigidTree
        The tree this data was made for.
    M : ndarray, shape (n_dofs, n_dofs)
        Mass matrix of the last :func:`mass_matrix` [kg for prismatic, kg m² for revolute coordinates, kg m
        between the two].
    tau : ndarray, shape (n_dofs,)
        Joint forces of the last :func:`inverse_dynamics` [N for prismatic, N m for revolute coordinates].
    h : ndarray, shape (n_dofs,)
        Nonlinear effects b + g of the last :func:`nonlinear_effects` [N, N m].
    a : ndarray, shape (n_dofs,)
        Joint accelerations of the last :func:`forward_dynamics` [m/s², rad/s²].
    R : ndarray, shape (n_links, 3, 3)
        Link rotations (link axes to world axes) at the last call's q.
    p : ndarray, shape (n_links, 3)
        Link frame origins in the world [m] at the last call's q.
    S : ndarray, shape (n_links, 6)
        Joint motion subspaces [S_lin; S_ang] (zero for fixed joints).
    vel : ndarray, shape (n_links, 6)
        Link spatial velocities [v_O; ω] [m/s; rad/s] at the last call's (q, v) (v = 0 for :func:`mass_matrix`).
    acc : ndarray, shape (n_links, 6)
        Velocity-product (bias) spatial accelerations J̇q̇ [m/s²; rad/s²] of the links.
    forces : ndarray, shape (n_links, 6)
        Spatial forces [f; n_O] [N; N m] transmitted by the joints in the last Newton–Euler pass
        (:func:`inverse_dynamics`, :func:`nonlinear_effects`, :func:`forward_dynamics` with a = 0).

    Notes
    -----
    Link quantities are in world axes at the world origin, linear part first (:mod:`flexbody.rigid.algorithms`):
    v_O is the velocity of the body point passing through the origin, n_O the moment about it. The link arrays
    are views of one work array that every algorithm writes; M, tau, h and a are written only by their own
    function. A data serves one caller at a time (make one per thread).
    """

    def __init__(self, tree: RigidTree):
        if not isinstance(tree, RigidTree):
            raise ModelError(f"TreeData: expected a RigidTree, got {type(tree).__name__}")
        self.tree = tree
        self._packed = tree.packed_model()
        self._indices, self._reals = self._packed
        n_links, n_dofs = tree.n_links, tree.n_dofs
        self._work = np.zeros(work_size(n_links, n_dofs))
        self.R, self.p, self.S, self.vel, self.acc, _, self.forces, _, _, _, _ = work_views(self._work, n_links, n_dofs)
        self.M = np.zeros((n_dofs, n_dofs))
        self.tau, self.h, self.a = np.zeros(n_dofs), np.zeros(n_dofs), np.zeros(n_dofs)
        self._zeros = np.zeros(n_dofs)  # the a = 0 of nonlinear_effects (never written)

    def _refusal(self, tree) -> ModelError:
        """The error of an algorithm called with a tree this data was not made for (or has changed since)."""
        if tree is self.tree:
            return ModelError(
                f"tree {tree.name!r} has gained links since this TreeData was made; make a new one (TreeData(tree))"
            )
        name = getattr(tree, "name", type(tree).__name__)
        return ModelError(f"this TreeData was made for tree {self.tree.name!r}, not for {name!r}")

    def __repr__(self) -> str:
        return f"TreeData({self.tree.name!r}, {self.tree.n_links} links, {self.tree.n_dofs} dofs)"


def mass_matrix(tree: RigidTree, data: TreeData, q: ArrayLike) -> np.ndarray:
    """Joint-space mass matrix M(q) [DE-2] by the composite-rigid-body algorithm, into ``data.M``.

    Parameters
    ----------
    tree : RigidTree
    data : TreeData
        Made for ``tree``; its arrays are overwritten.
    q : array_like, shape (n_dofs,)
        Joint coordinates [m, rad].

    Returns
    -------
    ndarray, shape (n_dofs, n_dofs)
        ``data.M`` itself, overwritten by the next call (copy it to keep it).

    Raises
    ------
    StateError
        q not of shape (n_dofs,) or not finite (the coordinate is named).
    ModelError
        ``data`` made for another tree, or before a link was added to this one.
    """
    if tree._packed is not data._packed:
        raise data._refusal(tree)
    try:  # module docstring: float64 vectors straight to the kernel, anything else through tree._evaluate
        if mass_matrix_kernel(data._indices, data._reals, data._work, q, data.M):
            return data.M
    except TypeError:
        pass
    return tree._evaluate(mass_matrix_kernel, data.M, data._work, q=q)


def inverse_dynamics(tree: RigidTree, data: TreeData, q: ArrayLike, v: ArrayLike, a: ArrayLike) -> np.ndarray:
    """τ = M(q) a + b(q, v) + g(q) [DE-2] by recursive Newton–Euler, into ``data.tau``.

    Parameters
    ----------
    tree : RigidTree
    data : TreeData
        Made for ``tree``; its arrays are overwritten.
    q : array_like, shape (n_dofs,)
        Joint coordinates [m, rad].
    v : array_like, shape (n_dofs,)
        Joint velocities [m/s, rad/s].
    a : array_like, shape (n_dofs,)
        Joint accelerations [m/s², rad/s²].

    Returns
    -------
    ndarray, shape (n_dofs,)
        ``data.tau`` [N, N m] itself, overwritten by the next call (copy it to keep it).

    Raises
    ------
    StateError
        An input not of shape (n_dofs,) or not finite (input and coordinate named).
    ModelError
        ``data`` made for another tree, or before a link was added to this one.
    """
    if tree._packed is not data._packed:
        raise data._refusal(tree)
    try:
        if inverse_dynamics_kernel(data._indices, data._reals, data._work, tree.gravity, q, v, a, data.tau):
            return data.tau
    except TypeError:
        pass
    return tree._evaluate(inverse_dynamics_kernel, data.tau, data._work, tree.gravity, q=q, v=v, a=a)


def nonlinear_effects(tree: RigidTree, data: TreeData, q: ArrayLike, v: ArrayLike) -> np.ndarray:
    """h = b(q, v) + g(q) [DE-2], Newton–Euler with a = 0, into ``data.h``.

    Parameters
    ----------
    tree : RigidTree
    data : TreeData
        Made for ``tree``; its arrays are overwritten.
    q : array_like, shape (n_dofs,)
        Joint coordinates [m, rad].
    v : array_like, shape (n_dofs,)
        Joint velocities [m/s, rad/s].

    Returns
    -------
    ndarray, shape (n_dofs,)
        ``data.h`` [N, N m] itself, overwritten by the next call (copy it to keep it).

    Raises
    ------
    StateError
        An input not of shape (n_dofs,) or not finite (input and coordinate named).
    ModelError
        ``data`` made for another tree, or before a link was added to this one.
    """
    if tree._packed is not data._packed:
        raise data._refusal(tree)
    try:
        if inverse_dynamics_kernel(data._indices, data._reals, data._work, tree.gravity, q, v, data._zeros, data.h):
            return data.h
    except TypeError:
        pass
    return tree._evaluate(inverse_dynamics_kernel, data.h, data._work, tree.gravity, q=q, v=v, a=data._zeros)


def forward_dynamics(tree: RigidTree, data: TreeData, q: ArrayLike, v: ArrayLike, tau: ArrayLike) -> np.ndarray:
    """Unconstrained joint accelerations a = M(q)⁻¹(τ − b(q, v) − g(q)) [DE-2], into ``data.a``: CRBA,
    Newton–Euler with a = 0 and a Cholesky factor of M after one kinematics pass.

    Parameters
    ----------
    tree : RigidTree
    data : TreeData
        Made for ``tree``; its arrays are overwritten.
    q : array_like, shape (n_dofs,)
        Joint coordinates [m, rad].
    v : array_like, shape (n_dofs,)
        Joint velocities [m/s, rad/s].
    tau : array_like, shape (n_dofs,)
        Joint forces [N, N m].

    Returns
    -------
    ndarray, shape (n_dofs,)
        ``data.a`` [m/s², rad/s²] itself, overwritten by the next call (copy it to keep it).

    Raises
    ------
    StateError
        An input not of shape (n_dofs,) or not finite (input and coordinate named), or M(q) not positive
        definite.
    ModelError
        ``data`` made for another tree, or before a link was added to this one.
    """
    if tree._packed is not data._packed:
        raise data._refusal(tree)
    try:
        if forward_dynamics_kernel(data._indices, data._reals, data._work, tree.gravity, q, v, tau, data.a):
            return data.a
    except TypeError:
        pass
    return tree._evaluate(forward_dynamics_kernel, data.a, data._work, tree.gravity, q=q, v=v, tau=tau)
