"""Contacts of whole shapes, made of the point and ball contacts of :mod:`flexbody.constraints.unilateral_contact`:
a link's sphere, box or capsule, and the boundary (or a named face or node set) of a flexible body.

Each shape becomes the contacts of the points that can touch first, which is exact where those points are the
shape's support points against the surface:

* a sphere of radius r centred on a link frame: one ball (it rolls) — any surface;
* a box on a link: its eight corners — against a plane (a box meets a plane first with a corner, an edge or a face,
  all spanned by corners); against a Sphere (a solid ball) the one point of the box nearest its centre
  (:class:`~flexbody.constraints.nearest_point.NearestPoint`: a convex shape and a ball touch at one point); against
  a Box the vertices of the two boxes' contact polygon, chosen at every state
  (:class:`~flexbody.constraints.box_manifold.BoxManifoldPoint`: a table's edge under the box's face is no corner);
  against a Cylinder (a solid rod) its corners and each edge's point nearest the rod's axis (a rod touches a convex
  box at a corner, across an edge, or along a line that a face or an edge holds, whose ends are corners or edges'
  nearest points; an edge parallel to the rod or nearest at its end takes its middle, its corners holding it);
* a capsule (a segment of length ℓ with radius r) on a link: balls of radius r at the segment's two ends — against a
  plane (the segment's nearest point to a plane is an end or the whole segment); against a Sphere its one point
  nearest the centre;
* a box or a capsule against a closed triangle mesh: its corners or end balls on the mesh's signed distance, and
  slots of the mesh's vertices and convex edges that can touch its faces and edges between them, chosen at every
  state (:mod:`~flexbody.constraints.mesh_shape_points`: two polyhedra touch first at a vertex of one on a face of
  the other or at an edge of each);
* a cylinder (length ℓ, radius r) on a link: on each end disc the rim point nearest the plane and k − 1 more rim
  points spaced 2π/k from it (:class:`~flexbody.constraints.rim_point.RimPoint`) — against a plane: a tilted or lying
  cylinder meets a plane first at those nearest rim points (exact); one standing on an end rests on its k rim points,
  a regular polygon inscribed in the disc (the support reaches r cos(π/k) toward each of its sides); against a
  Sphere its one point nearest the ball's centre (a convex shape and a ball touch at one point); against a Box, a
  Cylinder (a rod) or a closed TriangleMesh the slots of :mod:`~flexbody.constraints.cylinder_slots`, chosen at every
  state: per rim the points where the surface's distance along it is least and the k-gon from the least, the mesh's
  (the Box's) vertices against the cylinder and its edges or the rod across its side;
* a box, a capsule or a cylinder against an ImplicitSurface (smooth, without edges of its own): the box's corners,
  the capsule's end caps, the cylinder's rims, and the least first-order distances inside the shape's edges, faces,
  discs and side (:mod:`~flexbody.constraints.implicit_shape_points`);
* a flexible body: a contact at every node of its boundary (the faces no two elements share), or of a face or node
  set of its mesh.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ..errors import FlexbodyError
from ..fem.hex_mesh import boundary_faces, faces_nodes
from ..rigid.link import checked_rotation
from .base import finite_number
from .box_manifold import CAPSULE_SLOTS, SLOTS, BoxManifold, BoxManifoldPoint
from .cylinder_slots import cylinder_slot_points
from .implicit_shape_points import implicit_slot_points
from .mesh_shape_points import mesh_feature_points
from .mesh_surface import TriangleMesh
from .nearest_point import NearestPoint, box_edges
from .nodes import Node
from .rim_point import RimPoint
from .surfaces import Box, Cylinder, ImplicitSurface, Plane, Sphere, Surface
from .unilateral_contact import Contact, tangent_basis

if TYPE_CHECKING:
    from ..fem.flexible_body import FlexibleBody
    from ..rigid.tree import Link, RigidTree

__all__ = ["sphere_contact", "box_contacts", "capsule_contacts", "cylinder_contacts", "node_contacts"]


FIXED_SURFACES = (Plane, Sphere, Cylinder, Box, TriangleMesh, ImplicitSurface)
"""The surfaces a shape's contacts are taken against (module docstring)."""


def _fixed_only(surface: Surface, shape: str) -> None:
    """FlexbodyError naming the ``shape`` where ``surface`` is none of :data:`FIXED_SURFACES` (a flexible body's
    boundary moves: its contacts are points' or nodes')."""
    if type(surface) not in FIXED_SURFACES:
        names = ", ".join(kind.__name__ for kind in FIXED_SURFACES)
        raise FlexbodyError(
            f"{shape}: a shape's contacts are taken against a fixed {names} only, got {type(surface).__name__}; "
            "against a flexible body's boundary use points or nodes (fb.Contact, fb.node_contacts)"
        )


def _unit_axis(axis: ArrayLike, who: str) -> np.ndarray:
    """``axis`` (3,) made a unit vector; FlexbodyError naming ``who`` for a zero or non-finite one."""
    direction = np.asarray(axis, dtype=float).reshape(3)
    norm = float(np.linalg.norm(direction))
    if not np.isfinite(norm) or norm == 0.0:
        raise FlexbodyError(f"{who}: axis must be a nonzero direction, got {axis!r}")
    return direction / norm


def sphere_contact(
    tree: RigidTree,
    link: Link | str,
    radius: float,
    surface: Surface,
    *,
    offset: ArrayLike = (0.0, 0.0, 0.0),
    friction: float = 0.0,
    restitution: float = 0.0,
    name: str = "sphere",
) -> Contact:
    """The contact of a sphere of ``radius`` [m] centred at ``offset`` [m] (link frame) on ``link``: a ball on a link
    frame, which rolls."""
    return Contact(
        tree.frame(link, offset), surface, friction=friction, restitution=restitution, radius=radius, name=name
    )


def box_contacts(
    tree: RigidTree,
    link: Link | str,
    size: ArrayLike,
    surface: Surface,
    *,
    offset: ArrayLike = (0.0, 0.0, 0.0),
    rotation: ArrayLike | None = None,
    friction: float = 0.0,
    restitution: float = 0.0,
    name: str = "box",
) -> list[Contact]:
    """The eight corner contacts ``{name}0`` … ``{name}7`` of a box of edge lengths ``size`` (3,) [m], centred at
    ``offset`` [m] with axes ``rotation`` (3, 3) in the link frame, against a plane; against a Sphere the one contact
    ``{name}`` of the box's point nearest its centre; against a Box the eight contacts ``{name}0`` … ``{name}7`` of
    the slots of the boxes' contact polygon; against a Cylinder (a rod) the corners and ``{name}8`` … ``{name}19``,
    each edge's point nearest the rod's axis; against a TriangleMesh the corners and ``{name}8`` … (up to
    ``{name}15``), the slots of the mesh's vertices and edges; against an ImplicitSurface the corners and ``{name}8``
    … ``{name}13``, the least distances inside its edges and faces (module docstring)."""
    _fixed_only(surface, f"box_contacts {name!r}")
    edges = np.asarray(size, dtype=float).ravel()
    if edges.shape != (3,):
        raise FlexbodyError(f"box_contacts {name!r}: size must be three edge lengths [m], got {size!r}")
    half = 0.5 * np.array([finite_number(x, "size [m]", f"box_contacts {name!r}", positive=True) for x in edges])
    R = checked_rotation(rotation, f"box_contacts {name!r}: rotation")
    centre = np.asarray(offset, dtype=float).reshape(3)
    if type(surface) is Sphere:
        point = NearestPoint(tree.frame(link, centre, R), "box", half, surface)
        return [Contact(point, surface, friction=friction, restitution=restitution, name=name)]
    if type(surface) is Box:
        manifold = BoxManifold(tree.frame(link, centre, R), half, surface)
        return [
            Contact(
                BoxManifoldPoint(manifold, k), surface, friction=friction, restitution=restitution, name=f"{name}{k}"
            )
            for k in range(SLOTS)
        ]
    signs = np.array([(sx, sy, sz) for sz in (-1, 1) for sy in (-1, 1) for sx in (-1, 1)], dtype=float)
    corners = centre + (signs * half) @ R.T
    contacts = [
        Contact(tree.point(link, corner), surface, friction=friction, restitution=restitution, name=f"{name}{k}")
        for k, corner in enumerate(corners)
    ]
    if type(surface) is ImplicitSurface:  # its edges' and faces' least distances
        for k, point in enumerate(implicit_slot_points(tree.frame(link, centre, R), "box", half, surface)):
            contacts.append(Contact(point, surface, friction=friction, restitution=restitution, name=f"{name}{8 + k}"))
    if type(surface) is TriangleMesh:  # the mesh's vertices and edges that can poke into the box's faces and edges
        frame = tree.frame(link, centre, R)
        for k, point in enumerate(mesh_feature_points(frame, half, 0.0, surface, box_edges(half))):
            contacts.append(Contact(point, surface, friction=friction, restitution=restitution, name=f"{name}{8 + k}"))
    if type(surface) is Cylinder:  # each edge's point nearest the rod's axis: a segment of radius 0
        for k, (middle, direction, length) in enumerate(box_edges(half)):
            axes = R @ _axes_along(direction)
            frame = tree.frame(link, centre + R @ middle, axes)
            point = NearestPoint(frame, "capsule", np.array([length, 0.0]), surface)
            contacts.append(Contact(point, surface, friction=friction, restitution=restitution, name=f"{name}{8 + k}"))
    return contacts


def _axes_along(a: np.ndarray) -> np.ndarray:
    """(t₁, t₂, a) (3, 3) as columns: right-handed axes whose third is the unit vector a (a capsule's, a cylinder's or
    an edge's axis, the third axis of :mod:`flexbody.constraints.nearest_point`'s shapes)."""
    return tangent_basis(a)[:, [1, 2, 0]]


def capsule_contacts(
    tree: RigidTree,
    link: Link | str,
    length: float,
    radius: float,
    surface: Surface,
    *,
    offset: ArrayLike = (0.0, 0.0, 0.0),
    axis: ArrayLike = (0.0, 0.0, 1.0),
    friction: float = 0.0,
    restitution: float = 0.0,
    name: str = "capsule",
) -> list[Contact]:
    """The two end balls ``{name}0``, ``{name}1`` of a capsule: the segment of ``length`` [m] along ``axis`` (link
    frame) centred at ``offset`` [m], with ``radius`` [m], against a plane; against a Sphere the one contact
    ``{name}`` of the capsule's point nearest its centre; against a Box the four contacts ``{name}0`` … ``{name}3``
    of its contact segment's ends and its ends; against a Cylinder (a rod) the end balls and ``{name}2``, its point
    nearest the rod's axis; against a TriangleMesh the end balls and ``{name}2`` … (up to ``{name}9``), the slots of
    the mesh's vertices and edges; against an ImplicitSurface ``{name}0`` … ``{name}3``, the least distances on its
    end caps and its side (module docstring)."""
    who = f"capsule_contacts {name!r}"
    _fixed_only(surface, who)
    ell = finite_number(length, "length [m]", who)
    a, centre = _unit_axis(axis, who), np.asarray(offset, dtype=float).reshape(3)
    axes = _axes_along(a)
    if type(surface) is Sphere:
        r = finite_number(radius, "radius [m]", who)
        point = NearestPoint(tree.frame(link, centre, axes), "capsule", np.array([0.5 * ell, r]), surface)
        return [Contact(point, surface, friction=friction, restitution=restitution, name=name)]
    if type(surface) is Box:
        r = finite_number(radius, "radius [m]", who)
        manifold = BoxManifold(
            tree.frame(link, centre, axes), np.array([0.0, 0.0, 0.5 * ell]), surface, r, CAPSULE_SLOTS
        )
        return [
            Contact(
                BoxManifoldPoint(manifold, k), surface, friction=friction, restitution=restitution, name=f"{name}{k}"
            )
            for k in range(CAPSULE_SLOTS)
        ]
    if type(surface) is ImplicitSurface:  # its caps' and side's least distances (no end balls: module docstring)
        r = finite_number(radius, "radius [m]", who)
        size = np.array([0.5 * ell, r])
        points = implicit_slot_points(tree.frame(link, centre, axes), "capsule", size, surface)
        return [
            Contact(point, surface, friction=friction, restitution=restitution, name=f"{name}{k}")
            for k, point in enumerate(points)
        ]
    ends = [centre - 0.5 * ell * a, centre + 0.5 * ell * a]
    balls = [
        Contact(
            tree.frame(link, end), surface, friction=friction, restitution=restitution, radius=radius, name=f"{name}{k}"
        )
        for k, end in enumerate(ends)
    ]
    if type(surface) is TriangleMesh:  # the mesh's vertices and edges that can touch between the ends
        r = finite_number(radius, "radius [m]", who)
        frame = tree.frame(link, centre, axes)
        for k, point in enumerate(
            mesh_feature_points(
                frame, np.array([0.0, 0.0, 0.5 * ell]), r, surface, [(np.zeros(3), np.eye(3)[2], 0.5 * ell)]
            )
        ):
            balls.append(Contact(point, surface, friction=friction, restitution=restitution, name=f"{name}{2 + k}"))
    if type(surface) is Cylinder:  # where the segment crosses the rod between its ends
        r = finite_number(radius, "radius [m]", who)
        point = NearestPoint(tree.frame(link, centre, axes), "capsule", np.array([0.5 * ell, r]), surface)
        balls.append(Contact(point, surface, friction=friction, restitution=restitution, name=f"{name}2"))
    return balls


def cylinder_contacts(
    tree: RigidTree,
    link: Link | str,
    length: float,
    radius: float,
    surface: Surface,
    *,
    offset: ArrayLike = (0.0, 0.0, 0.0),
    axis: ArrayLike = (0.0, 0.0, 1.0),
    rim_points: int = 6,
    friction: float = 0.0,
    restitution: float = 0.0,
    name: str = "cylinder",
) -> list[Contact]:
    """The contacts ``{name}{end}.{k}`` of a cylinder of ``length`` and ``radius`` [m] along ``axis`` (link frame),
    centred at ``offset`` [m], against a plane: on each end disc the rim point nearest the plane (k = 0) and
    ``rim_points`` − 1 more spaced evenly around the rim; against a Sphere the one contact ``{name}`` of its point
    nearest the ball's centre; against a Box, a Cylinder (a rod) or a TriangleMesh the contacts ``{name}0``, … of its
    slots chosen at every state (:mod:`~flexbody.constraints.cylinder_slots`: per rim its least distances and the
    ``rim_points``-gon from the least, then a mesh's (a Box's) vertices and edges or the rod across its side); against
    an ImplicitSurface its rims' as well, then the least distances inside its discs and its side
    (:mod:`~flexbody.constraints.implicit_shape_points`)."""
    who = f"cylinder_contacts {name!r}"
    _fixed_only(surface, who)
    ell = finite_number(length, "length [m]", who)
    r = finite_number(radius, "radius [m]", who, positive=True)
    if type(surface) is Sphere:  # a convex shape and a ball touch at one point
        frame = tree.frame(link, np.asarray(offset, dtype=float).reshape(3), _axes_along(_unit_axis(axis, who)))
        nearest = NearestPoint(frame, "cylinder", np.array([0.5 * ell, r]), surface)
        return [Contact(nearest, surface, friction=friction, restitution=restitution, name=name)]
    if isinstance(rim_points, bool) or not isinstance(rim_points, (int, np.integer)) or rim_points < 3:
        raise FlexbodyError(f"{who}: rim_points must be an integer ≥ 3 (a disc standing on a plane needs three)")
    a, centre = _unit_axis(axis, who), np.asarray(offset, dtype=float).reshape(3)
    if type(surface) in (Box, Cylinder, TriangleMesh, ImplicitSurface):
        frame = tree.frame(link, centre, _axes_along(a))
        if type(surface) is ImplicitSurface:
            points = implicit_slot_points(frame, "cylinder", np.array([0.5 * ell, r]), surface, int(rim_points))
        else:
            points = cylinder_slot_points(frame, 0.5 * ell, r, surface, int(rim_points))
        return [
            Contact(point, surface, friction=friction, restitution=restitution, name=f"{name}{k}")
            for k, point in enumerate(points)
        ]
    normal = surface.normal  # type: ignore[attr-defined]  # a Plane (checked)
    contacts = []
    for end, sign in enumerate((-1.0, 1.0)):
        frame = tree.frame(link, centre + sign * 0.5 * ell * a)
        for k in range(int(rim_points)):
            point = RimPoint(frame, a, r, normal, 2.0 * np.pi * k / rim_points)
            contacts.append(
                Contact(point, surface, friction=friction, restitution=restitution, name=f"{name}{end}.{k}")
            )
    return contacts


def node_contacts(
    body: FlexibleBody,
    surface: Surface,
    nodes: str | ArrayLike = "boundary",
    *,
    friction: float = 0.0,
    restitution: float = 0.0,
    name: str | None = None,
) -> list[Contact]:
    """A contact ``{name}{node}`` for each node of ``body`` in ``nodes``: "boundary" (every node on a face that no two
    elements share; the interior cannot touch first), a node or face set of its mesh, or node indices."""
    if isinstance(nodes, str) and nodes == "boundary":
        chosen = faces_nodes(body.mesh, boundary_faces(body.mesh))
    else:
        chosen = body.nodes(nodes)
    prefix = f"{body.name}.node" if name is None else name
    return [
        Contact(Node(body, int(i)), surface, friction=friction, restitution=restitution, name=f"{prefix}{int(i)}")
        for i in chosen
    ]
