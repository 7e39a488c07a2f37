"""The points of a cylinder on a link that can touch a fixed :class:`~flexbody.constraints.surfaces.Box`, a
:class:`~flexbody.constraints.surfaces.Cylinder` (a solid rod) or a closed
:class:`~flexbody.constraints.mesh_surface.TriangleMesh`, as anchors for
:class:`~flexbody.constraints.unilateral_contact.Contact` (:func:`~flexbody.constraints.contact_shapes.
cylinder_contacts` against them: a can on a table, over its edge, across a pipe, in a meshed tray).

The cylinder (radius r, length ℓ, its axis the third of its frame's, its ends at z = ±ℓ/2) is bounded by two discs and
its side, which meet at two rims. Against a surface Q of signed distance s_Q it touches first

- at a rim, where s_Q along the rim x(φ) = c ± r (cos φ e₁ + sin φ e₂) is locally least: a rim on a face, near a
  face's edge, across a rod, at a mesh's vertex or edge. Each rim's :data:`RIM_MINIMA` least minima are found from
  :data:`RIM_SAMPLES` samples and refined by Newton's method, and k − 1 more points spaced 2π/k
  from its least: a disc flat on a face rests on them, a regular k-gon inscribed in the disc, as on a Plane
  (:class:`~flexbody.constraints.rim_point.RimPoint`);
- on a disc or the side, at a vertex of Q (a mesh's vertex, a Box's corner): the cylinder's signed distance at the
  vertex (:func:`~flexbody.constraints.mesh_shape_points.vertex_pairs`) where the vertex's nearest point of the
  cylinder is not on a rim (there the rim's minimum holds it);
- on the side, across an edge of Q (a mesh's convex edge, a Box's edge) or a rod: the side's point nearest the edge
  (the axis segment against the edge, as a capsule's: :func:`~flexbody.constraints.mesh_shape_points.edge_pairs`) or
  nearest the rod's axis (:func:`~flexbody.constraints.nearest_point.segment_point_nearest_line`), where it lies
  between the ends and the two are not parallel. A side along a face, an edge or a rod touches along a line whose
  ends are rims' minima or edges' points; a disc across an edge along a chord whose ends are rims' minima.

Each is an exact unilateral constraint — a point of the cylinder that must stay outside Q, with its gap and normal —
wherever it lies; a rim's minimum moves along the rim only across the normal, so the gap's rate is n·v of the link's
material point there (:class:`~flexbody.constraints.material_point.MovingMaterialPoint`). A Box is taken as its
triangle mesh (twelve triangles: the same signed distance). The points are chosen anew at every state, once for all
of a shape's slots (:class:`CylinderSlots`, a term of the state's workspace).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..rigid.anchors import LinkFrame
from .mesh_shape_points import (
    DUPLICATE,
    EDGE_SLOTS,
    VERTEX_SLOTS,
    MeshFeaturePoint,
    edge_pairs,
    take_nearest,
    vertex_pairs,
)
from .mesh_surface import TriangleMesh
from .nearest_point import segment_point_nearest_line
from .surfaces import Box, Cylinder, ImplicitSurface

if TYPE_CHECKING:
    from ..rigid.state_view import StateView

__all__ = ["CylinderSlots", "cylinder_slot_points", "rim_minima", "box_mesh", "RIM_SAMPLES", "RIM_MINIMA"]

RIM_SAMPLES = 36
"""Samples of s_Q along each rim (10° apart) from which its local minima are refined."""

RIM_MINIMA = 2
"""The least local minima of s_Q along a rim that are contacts (a disc across a rod or an edge touches at two)."""

NEWTON_STEPS = 30
"""The most steps of Newton's method refining a minimum from its samples' bracket (2 × 10°); it ends at round-off,
which a rolling rim needs: a point δ off the minimum moves across the normal at v δ."""

PLATEAU = 1e-12
"""Samples within this [m per m of the cylinder's size] of both neighbours lie on a plateau (a disc flat on a face),
no minimum of their own: the rim's least holds it, with its k-gon."""


def box_mesh(box: Box) -> TriangleMesh:
    """The ``box``'s surface as a closed triangle mesh (8 corners, 12 outward triangles): the same signed distance."""
    signs = np.array([(sx, sy, sz) for sz in (-1, 1) for sy in (-1, 1) for sx in (-1, 1)], dtype=float)
    points = box.center + (signs * box.half) @ box.rotation.T
    quads = [(0, 2, 3, 1), (4, 5, 7, 6), (0, 1, 5, 4), (2, 6, 7, 3), (0, 4, 6, 2), (1, 3, 7, 5)]  # −z +z −y +y −x +x
    triangles = [t for a, b, c, d in quads for t in ((a, b, c), (a, c, d))]
    return TriangleMesh(points, np.array(triangles))


def surface_distances(
    surface: TriangleMesh | Cylinder | ImplicitSurface, X: np.ndarray, exact: bool
) -> tuple[np.ndarray, ...]:
    """(s_Q (m,) [m], ∇s_Q (m, 3), ∇²s_Q (m, 3, 3) [1/m]) at the points X (m, 3) [m, world]: a mesh's (exact within
    its reach — the Hessian (I − ∇s ∇sᵀ)/s off an edge or a vertex, zero off a face —; beyond it a lower bound with
    its sign and no derivatives unless ``exact``), a rod's ‖(I − aaᵀ)(x − c)‖ − R, an ImplicitSurface's first-order
    distance (:meth:`~flexbody.constraints.surfaces.ImplicitSurface.first_order`)."""
    if isinstance(surface, ImplicitSurface):  # its first-order distance
        return surface.first_order(X)
    if isinstance(surface, TriangleMesh):
        s, gradient, _, feature = surface.signed_distances(X, surface.reach)
        if exact:
            for i in np.flatnonzero(feature < 0):
                s[i], gradient[i] = surface.value(X[i])[0], surface.gradient(X[i])[0]
                feature[i] = 0 if surface.hessian(X[i]).any() else 2
        curved = (feature >= 0) & (feature != 2) & (np.abs(s) > surface.round_off)
        scale = np.where(curved, 1.0 / np.where(curved, s, 1.0), 0.0)
        hessian = scale[:, None, None] * (np.eye(3) - gradient[:, :, None] * gradient[:, None, :])
        return s, gradient, hessian
    d = X - surface.center
    d -= np.outer(d @ surface.axis, surface.axis)
    rho = np.linalg.norm(d, axis=1)
    safe = np.where(rho > 0.0, rho, 1.0)
    n = d / safe[:, None]
    across = np.eye(3) - np.outer(surface.axis, surface.axis)
    hessian = (across - n[:, :, None] * n[:, None, :]) / safe[:, None, None]
    return rho - surface.radius, n, hessian


def _newton(surface, centre, e1, e2, radius, phi, lower, upper) -> np.ndarray:
    """The minimisers φ (m,) of s_Q along the rim (centre (3,), e₁, e₂, ``radius``) from ``phi`` (m,) within their
    brackets [lower, upper] (m,): Newton's method on s′(φ) = ∇s·x′ with s″ = x′ᵀ∇²s x′ + ∇s·x″, a step leaving the
    bracket (or s″ ≤ 0) replaced by its middle, the bracket shrunk by the sign of s′; to round-off, or where
    |s′| ≤ :data:`PLATEAU` r (a flat disc's rim)."""
    phi, lower, upper = phi.copy(), lower.copy(), upper.copy()
    for _ in range(NEWTON_STEPS):
        cos, sin = np.cos(phi), np.sin(phi)
        arm = radius * (np.outer(cos, e1) + np.outer(sin, e2))
        dx = radius * (np.outer(-sin, e1) + np.outer(cos, e2))
        _, gradient, hessian = surface_distances(surface, centre + arm, exact=False)
        slope = np.einsum("ij,ij->i", gradient, dx)
        curvature = np.einsum("ij,ijk,ik->i", dx, hessian, dx) - np.einsum("ij,ij->i", gradient, arm)
        lower, upper = np.where(slope < 0.0, phi, lower), np.where(slope > 0.0, phi, upper)
        ahead = phi - slope / np.where(curvature > 0.0, curvature, np.inf)
        inside = (curvature > 0.0) & (ahead >= lower) & (ahead <= upper)
        flat = np.abs(slope) <= PLATEAU * radius  # at the minimum, or on a plateau (round-off)
        new = np.where(flat, phi, np.where(inside, ahead, 0.5 * (lower + upper)))
        done = np.all(np.abs(new - phi) <= 1e-15 * (1.0 + np.abs(phi)))
        phi = new
        if done:
            break
    return phi


def rim_minima(surface, centre: np.ndarray, e1: np.ndarray, e2: np.ndarray, radius: float, size: float) -> np.ndarray:
    """The angles φ (m,) [rad] of the local minima of s_Q(c + r (cos φ e₁ + sin φ e₂)) along the rim (centre (3,),
    unit e₁, e₂ (3,) in its plane, ``radius`` r [m]) of the ``surface`` (a mesh or a rod), least first: from
    :data:`RIM_SAMPLES` samples, refined by :func:`_newton`; at least the least (a plateau, within :data:`PLATEAU` of
    ``size``, is no minimum of its own: module docstring)."""

    def along(phi: np.ndarray) -> np.ndarray:
        points = centre + radius * (np.outer(np.cos(phi), e1) + np.outer(np.sin(phi), e2))
        return surface_distances(surface, points, exact=False)[0]

    step = 2.0 * np.pi / RIM_SAMPLES
    phi = step * np.arange(RIM_SAMPLES)
    s = along(phi)
    before, after = np.roll(s, 1), np.roll(s, -1)
    low = (s <= before) & (s <= after) & (s < np.maximum(before, after) - PLATEAU * size)
    low[int(np.argmin(s))] = True
    found = phi[np.flatnonzero(low)]
    refined = _newton(surface, centre, e1, e2, radius, found, found - step, found + step)
    return refined[np.argsort(along(refined), kind="stable")]


def rim_points(surface, middle: np.ndarray, e1: np.ndarray, e2: np.ndarray, radius: float, size: float, k: int):
    """(points (RIM_MINIMA + k − 1, 3) [m], found): a rim's (centre ``middle``, unit e₁, e₂ in its plane, ``radius``)
    :data:`RIM_MINIMA` least minima of the ``surface``'s distance along it (:func:`rim_minima`; ``found`` of them its
    own, the least repeated for the others), then its k-gon from the least (module docstring)."""
    minima = rim_minima(surface, middle, e1, e2, radius, size)[:RIM_MINIMA]
    polygon = minima[0] + 2.0 * np.pi * np.arange(1, k) / k
    angles = np.concatenate([minima, np.full(RIM_MINIMA - minima.size, minima[0]), polygon])
    return middle + radius * (np.outer(np.cos(angles), e1) + np.outer(np.sin(angles), e2)), minima.size


def _rod_side(centre, R, half_length: float, radius: float, rod: Cylinder) -> tuple[np.ndarray, ...]:
    """(gaps (1,), points (1, 3), normals (1, 3)): the side's point nearest the ``rod``'s axis where it lies between
    the ends and the axes are not parallel (module docstring), else an infinite gap."""
    p, a = R.T @ (rod.center - centre), R.T @ rod.axis
    s = segment_point_nearest_line(half_length, p, a)
    if s is None:
        return np.array([np.inf]), np.zeros((1, 3)), np.tile(np.eye(3)[2], (1, 1))
    on_axis = np.array([0.0, 0.0, s])
    toward = p + ((on_axis - p) @ a) * a - on_axis  # to the rod's axis, across both
    distance = float(np.linalg.norm(toward))
    u = toward / distance if distance > 0.0 else np.eye(3)[0]
    gap = distance - radius - rod.radius
    return np.array([gap]), (centre + R @ (on_axis + radius * u))[None], -(R @ u)[None]


class CylinderSlots:
    """What a cylinder's slots against a Box, a rod or a mesh share (module docstring): its ``frame`` (origin its
    centre, third axis its axis), ``half_length`` and ``radius`` [m], the ``k`` of its rims' k-gons, the
    ``surface`` (a Box taken as its mesh), and the counts ``slots``: per rim :data:`RIM_MINIMA` + k − 1, then a mesh's
    vertex and edge slots, or a rod's one side slot. Its :meth:`chosen` slots are a term of each state's workspace."""

    def __init__(self, frame: LinkFrame, half_length: float, radius: float, surface, k: int):
        self.frame, self.half_length, self.radius, self.k = frame, float(half_length), float(radius), int(k)
        self.surface = box_mesh(surface) if isinstance(surface, Box) else surface
        self.size = self.half_length + self.radius
        rim = RIM_MINIMA + self.k - 1
        self.slots: tuple[int, ...]
        if isinstance(self.surface, TriangleMesh):
            self.features = self.surface.touching_features
            self.slots = (rim, rim, min(VERTEX_SLOTS, len(self.features[0])), min(EDGE_SLOTS, len(self.features[1])))
            points = self.surface.points
            self.middle = 0.5 * (points.min(axis=0) + points.max(axis=0))
            self.extent = float(np.ptp(points, axis=0).max()) + 2.0 * self.size
        else:
            self.slots = (rim, rim, 1)
            self.middle, self.extent = self.surface.center, 2.0 * (self.surface.radius + self.size)

    def slot_name(self, slot: int) -> str:
        """What slot ``slot`` is, for messages."""
        rim = self.slots[0]
        if slot < 2 * rim:
            return f"on rim {slot // rim}"
        if len(self.slots) == 3:
            return "on the side nearest the rod"
        return "against the mesh's " + ("vertices" if slot < 2 * rim + self.slots[2] else "edges")

    def chosen(self, ev: StateView) -> tuple[np.ndarray, ...]:
        """(points (m, 3) [m], gaps (m,) [m], normals (m, 3), the centre (3,)) of the state's slots: infinite gaps for
        slots left over (module docstring)."""

        def compute():
            R, centre = np.ascontiguousarray(self.frame.rotation(ev)), self.frame.position(ev)
            return (*self.slots_at(centre, R), centre)

        return ev.memo(("cylinder slots", self), compute)

    def slots_at(self, centre: np.ndarray, R: np.ndarray) -> tuple[np.ndarray, ...]:
        """(points, gaps, normals) of the slots with the cylinder at ``centre`` (3,) [m] with axes the columns of R."""
        parts = [self._rim(centre + sign * self.half_length * R[:, 2], R) for sign in (-1.0, 1.0)]
        if isinstance(self.surface, TriangleMesh):
            taken: list = []
            within = DUPLICATE * self.size
            size = np.array([self.radius, self.radius, self.half_length])
            vertices = vertex_pairs(centre, R, size, 0.0, self.features[0], True)
            parts.append(take_nearest(vertices, 0.0, self.slots[2], taken, within))
            axis = (np.zeros((1, 3)), np.eye(3)[2][None], np.array([self.half_length]))
            edges = edge_pairs(centre, R, self.radius, axis, self.features, self.surface, self.size)
            parts.append(take_nearest(edges, self.radius, self.slots[3], taken, within))
        else:
            gaps, points, normals = _rod_side(centre, R, self.half_length, self.radius, self.surface)
            parts.append((points, gaps, normals))
        return tuple(np.concatenate(arrays) for arrays in zip(*parts))

    def _rim(self, middle: np.ndarray, R: np.ndarray) -> tuple[np.ndarray, ...]:
        """(points, gaps, normals) of a rim's slots (centre ``middle`` (3,)): its :data:`RIM_MINIMA` least minima
        (a further one within :data:`DUPLICATE` of the size of a point before it, or none, left over), then its k-gon
        from the least."""
        points, found = rim_points(self.surface, middle, R[:, 0], R[:, 1], self.radius, self.size, self.k)
        gaps, normals, _ = surface_distances(self.surface, points, exact=True)
        polygon_points = points[RIM_MINIMA:]
        for i in range(1, RIM_MINIMA):
            others = np.vstack([points[:i], polygon_points])
            if i >= found or np.abs(others - points[i]).max(axis=1).min() <= DUPLICATE * self.size:
                gaps[i] = np.inf
        return points, gaps, normals


def cylinder_slot_points(
    frame: LinkFrame, half_length: float, radius: float, surface, k: int
) -> list[MeshFeaturePoint]:
    """The slots of a cylinder (``frame``'s origin its centre, its third axis the axis; ``half_length``, ``radius``
    [m]; rims' k-gons of ``k``) against a Box, a rod (Cylinder) or a TriangleMesh ``surface`` (module docstring), as
    anchors, in the order of :attr:`CylinderSlots.slots`."""
    shape = CylinderSlots(frame, half_length, radius, surface, k)
    return [MeshFeaturePoint(shape, slot) for slot in range(sum(shape.slots))]
