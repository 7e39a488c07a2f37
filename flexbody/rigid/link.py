"""Link: a rigid link of a RigidTree (a handle with its joint, placement and inertia), and the checks of
the vectors, rotations and inertias that describe links and the anchors on them.
"""

from __future__ import annotations

import numpy as np

from ..errors import ModelError


def checked_vector3(value, what: str) -> np.ndarray:
    a = np.asarray(value, dtype=float)
    if a.shape != (3,) or not np.all(np.isfinite(a)):
        raise ModelError(f"{what} must be 3 finite numbers, got {value!r}")
    return a


def checked_rotation(value, what: str) -> np.ndarray:
    if value is None:
        return np.eye(3)
    R = np.asarray(value, dtype=float)
    if R.shape != (3, 3) or not np.all(np.isfinite(R)):
        raise ModelError(f"{what} must be a finite 3×3 rotation matrix")
    if np.abs(R.T @ R - np.eye(3)).max() > 1e-9 or np.linalg.det(R) < 0:
        raise ModelError(f"{what} is not a proper rotation (RᵀR ≠ I or det R < 0)")
    return R


def checked_inertia(value, what: str, physical: bool = True) -> np.ndarray:
    if value is None:
        return np.zeros((3, 3))
    I = np.asarray(value, dtype=float)
    if I.shape == (3,):
        I = np.diag(I)
    if I.shape != (3, 3) or not np.all(np.isfinite(I)):
        raise ModelError(f"{what} must be a finite 3×3 matrix or its 3 principal moments")
    if np.abs(I - I.T).max() > 1e-12 * max(1.0, np.abs(I).max()):
        raise ModelError(f"{what} is not symmetric")
    if not physical:
        return I
    eig = np.linalg.eigvalsh(I)
    scale = max(1.0, eig.max())
    if eig.min() < -1e-12 * scale or eig[0] + eig[1] < eig[2] - 1e-9 * scale:
        raise ModelError(
            f"{what} is not a physical rotational inertia (principal moments {eig}: must be "
            f"non-negative and satisfy the triangle inequality)"
        )
    return I


class Link:
    """A rigid link of a :class:`RigidTree`: a handle, created by :meth:`RigidTree.add_link`.

    Attributes
    ----------
    name : str
    tree : RigidTree
    parent : Link or None (ground)
    joint : Revolute | Prismatic | Fixed
    coordinate : int or None
        Index of the joint coordinate in the tree's q (None for a fixed joint).
    mass : float [kg]; com : (3,) [m] in the link frame; inertia : (3, 3) [kg m²] about the com, link axes.
    label : str
        The name of its coordinate (``tree.coordinate_labels``): the link's name, or ``name.suffix`` for a
        part of a joint with several coordinates (e.g. ``base.tx`` … ``base.rz`` of a free flyer).
    compound : Spherical | FreeFlyer | Universal | Planar | None
        The joint with several coordinates this link is a part of (its last part is the link the user
        added; the others are massless links named ``name.suffix``).
    coordinates : tuple of int
        The coordinates of the link's whole joint (one, several, or none).
    """

    def __init__(
        self,
        tree,
        index,
        name,
        parent,
        joint,
        placement_rotation,
        placement_origin,
        mass,
        com,
        inertia,
        coordinate,
        label=None,
        compound=None,
    ):
        self.tree, self.index, self.name, self.parent, self.joint = tree, index, name, parent, joint
        self.placement_rotation, self.placement_origin = placement_rotation, placement_origin
        self.mass, self.com, self.inertia, self.coordinate = mass, com, inertia, coordinate
        self.label = name if label is None else label
        self.compound = compound
        self.coordinates = () if coordinate is None else (coordinate,)

    def __repr__(self) -> str:
        return f"Link({self.name!r} of tree {self.tree.name!r}, joint {type(self.joint).__name__})"
