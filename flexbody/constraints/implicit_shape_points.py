"""The points of a box, a capsule or a cylinder on a link that can touch a fixed
:class:`~flexbody.constraints.surfaces.ImplicitSurface` where their corners, end balls or rims do not, as anchors for
:class:`~flexbody.constraints.unilateral_contact.Contact` (:func:`~flexbody.constraints.contact_shapes.box_contacts`,
``capsule_contacts`` and ``cylinder_contacts`` against it: a crate on a bump, a capsule across a ridge, a can on a
curved floor).

An implicit surface is smooth, with no edges or vertices of its own, so a shape P touches it first where its
first-order distance ŝ = s/‖∇s‖ (:meth:`~flexbody.constraints.surfaces.ImplicitSurface.first_order`, exact on the
surface, where a gap closes) restricted to P's boundary is least: at a corner, or at a local minimum of ŝ inside an
edge, a face, a rim, a disc or the side (a minimum on a feature's boundary is a lower feature's). So P's contacts are

- a box's eight corners (point contacts), and the least :data:`EDGE_SLOTS` minima inside its twelve edges and
  :data:`FACE_SLOTS` inside its six faces;
- a capsule's minima on its two end caps (each its end ball's least ŝ, :func:`ball_minima`, where it lies on the
  ball's outer half) and the least :data:`SEGMENT_SLOTS` on its side between them (the round surface about its
  segment, in the coordinates of a cylinder's side);
- a cylinder's rims as against a rod or a mesh (:mod:`~flexbody.constraints.cylinder_slots`: the least distances along
  each rim and the k-gon from the least), and the least :data:`DISC_SLOTS` minima inside its two discs and
  :data:`SIDE_SLOTS` inside its side.

A feature's minimum is found by Newton's method on ŝ in the feature's coordinates u, from the best of a few samples:
the step solves (Jᵀ Ĥ J + Σ ∂ŝ/∂x ∂²x/∂u²) δ = −Jᵀ∇ŝ (J = ∂x/∂u, Ĥ the leading part of ŝ's Hessian, exact where
ŝ = 0), a direction without positive curvature taken to the feature's boundary; a search that reaches the boundary
is a lower feature's. Only strict minima count: a degenerate one (a face lying along a rod, touching it along a line)
is held by the lower features the line ends on. A feature with two minima gives its least. A feature whose best
sample lies farther than :data:`NEAR` of the shape's size gives that sample's point (no search: a far point's gap is
its own, exact for the material point there). A minimum's gap is ŝ there, its normal ∇s/‖∇s‖, and its rate the
normal velocity of the link's material point
there (:class:`~flexbody.constraints.material_point.MovingMaterialPoint`): exact where the gap closes, as a point's on
the surface. The points are chosen anew at every state, once for all of a shape's slots (a term of its workspace).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from ..rigid.anchors import LinkFrame
from .cylinder_slots import RIM_MINIMA, rim_points, surface_distances
from .mesh_shape_points import DUPLICATE, MeshFeaturePoint, take_nearest
from .nearest_point import box_edges
from .surfaces import ImplicitSurface

if TYPE_CHECKING:
    from ..rigid.state_view import StateView

__all__ = ["ImplicitSlots", "ball_minima", "implicit_slot_points", "EDGE_SLOTS", "FACE_SLOTS", "SEGMENT_SLOTS"]

EDGE_SLOTS = 4
"""A box's minima inside its edges that are contacts at a state (the least)."""

FACE_SLOTS = 2
"""A box's minima inside its faces that are contacts at a state."""

SEGMENT_SLOTS = 2
"""A capsule's minima on its side that are contacts at a state."""

CAP_SLOTS = 2
"""A capsule's minima on its end caps that are contacts at a state (one a cap)."""

DISC_SLOTS = 2
"""A cylinder's minima inside its discs that are contacts at a state."""

SIDE_SLOTS = 2
"""A cylinder's minima inside its side that are contacts at a state."""

NEWTON_STEPS = 30
"""The most Newton steps of a feature's minimum."""

NEAR = 0.5
"""A feature whose best sample's ŝ is above this part of the shape's size is not searched (module docstring)."""

STRICT = 1e-9
"""A minimum is strict where the least curvature of ŝ in the feature's coordinates is above this part of the
largest (and of the feature's size)."""

Minima = tuple[np.ndarray, np.ndarray, np.ndarray]
"""(x (f, 3) [m], ŝ (f,) [m], strict (f,) bool): features' minima (:func:`feature_minima`)."""

PointMap = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]]
"""u (f, k) ↦ (x (f, 3), ∂x/∂u (f, 3, k), ∂²x/∂u² (f, k, k, 3)): f features' points in their coordinates."""


def _newton_step(gradient: np.ndarray, hessian: np.ndarray) -> np.ndarray:
    """δ (f, k) of Newton's method for each feature's (k,) gradient and (k, k) Hessian, a direction without positive
    curvature (below :data:`STRICT` of the largest) taken far along the descent (to the feature's boundary)."""
    values, vectors = np.linalg.eigh(hessian)
    along = np.einsum("fkj,fk->fj", vectors, gradient)
    scale = np.maximum(np.abs(values).max(axis=1, keepdims=True), 1e-300)
    curved = values > STRICT * scale
    far = np.where(along > 0.0, -4.0, np.where(along < 0.0, 4.0, 0.0))
    steps = np.where(curved, -along / np.where(curved, values, 1.0), far)
    return np.einsum("fkj,fj->fk", vectors, steps)


def _in_coordinates(surface: ImplicitSurface, point_map: PointMap, u: np.ndarray) -> tuple[np.ndarray, ...]:
    """(ŝ (f,), its gradient Jᵀ∇ŝ (f, k) and Hessian Jᵀ Ĥ J + Σ ∂ŝ/∂x ∂²x/∂u² (f, k, k)) in the features'
    coordinates u (f, k) (module docstring)."""
    x, J, second = point_map(u)
    s, gradient, hessian = surface.first_order(x)
    H = np.einsum("fik,fij,fjl->fkl", J, hessian, J) + np.einsum("fkli,fi->fkl", second, gradient)
    return s, np.einsum("fik,fi->fk", J, gradient), H


def feature_minima(
    surface: ImplicitSurface, point_map: PointMap, starts: np.ndarray, bounded: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(u (f, k), ŝ (f,), strict (f,) bool) of each feature's minimum of ŝ from ``starts`` (f, k) (module
    docstring); its coordinates ``bounded`` (k,) bool to |u| ≤ 1 (the others periodic), ``strict`` False where the
    search reached a bound or the minimum is not strict."""
    u = starts.astype(float).copy()
    done = np.zeros(len(u), dtype=bool)
    inside = np.ones(len(u), dtype=bool)
    for _ in range(NEWTON_STEPS):
        _, g, H = _in_coordinates(surface, point_map, u)
        step = np.where(done[:, None], 0.0, _newton_step(g, H))
        new = u + step
        new[:, bounded] = np.clip(new[:, bounded], -1.0, 1.0)
        inside &= ~np.any(np.abs(new[:, bounded]) >= 1.0, axis=1)
        done |= ~inside | (np.abs(new - u).max(axis=1) <= 1e-14)
        u = new
        if done.all():
            break
    s, _, H = _in_coordinates(surface, point_map, u)
    values = np.linalg.eigvalsh(H)
    strict = inside & (values[:, 0] > STRICT * np.maximum(np.abs(values).max(axis=1), 1e-300))
    return u, s, strict


def _affine(centre: np.ndarray, R: np.ndarray, origins: np.ndarray, axes: np.ndarray) -> PointMap:
    """The point map of flat features x = c + R(o + A u) (origins (f, 3), axes (f, 3, k) in the shape's axes)."""
    world = np.einsum("ij,fjk->fik", R, axes)
    base = centre + origins @ R.T

    def point_map(u: np.ndarray):
        return base + np.einsum("fik,fk->fi", world, u), world, np.zeros((len(u), u.shape[1], u.shape[1], 3))

    return point_map


def _side(centre: np.ndarray, R: np.ndarray, half_length: float, radius: float) -> PointMap:
    """The point map of a cylinder's side, u = (φ, z/h): x = c + R(r cos φ, r sin φ, h z)."""

    def point_map(u: np.ndarray):
        cos, sin = np.cos(u[:, 0]), np.sin(u[:, 0])
        zeros = np.zeros_like(cos)
        radial = np.stack([radius * cos, radius * sin, zeros], axis=1) @ R.T
        x = centre + radial + np.outer(half_length * u[:, 1], R[:, 2])
        J = np.stack(
            [np.stack([-radius * sin, radius * cos, zeros], axis=1) @ R.T, np.tile(half_length * R[:, 2], (len(u), 1))],
            axis=2,
        )
        second = np.zeros((len(u), 2, 2, 3))
        second[:, 0, 0] = -radial
        return x, J, second

    return point_map


def _balls(centres: np.ndarray, radius: float, toward: np.ndarray) -> PointMap:
    """The point map of balls (centres (f, 3), ``radius``) in spherical coordinates u = (θ, φ) about a pole t₁
    across ``toward`` (f, 3) (unit: u = (π/2, 0) is c + r d, d = ``toward``; the chart is regular there, its poles a
    right angle away): x = c + r (cos θ t₁ + sin θ (cos φ d + sin φ t₂))."""
    t1 = np.cross(toward, np.where(np.abs(toward[:, :1]) < 0.9, np.eye(3)[0], np.eye(3)[1]))
    t1 /= np.linalg.norm(t1, axis=1, keepdims=True)
    t2 = np.cross(toward, t1)

    def point_map(u: np.ndarray):
        cos_t, sin_t = np.cos(u[:, :1]), np.sin(u[:, :1])
        cos_p, sin_p = np.cos(u[:, 1:]), np.sin(u[:, 1:])
        around = cos_p * toward + sin_p * t2
        across = -sin_p * toward + cos_p * t2
        arm = radius * (cos_t * t1 + sin_t * around)
        J = np.stack([radius * (-sin_t * t1 + cos_t * around), radius * sin_t * across], axis=2)
        second = np.empty((len(u), 2, 2, 3))
        second[:, 0, 0] = -arm
        second[:, 0, 1] = second[:, 1, 0] = radius * cos_t * across
        second[:, 1, 1] = -radius * sin_t * around
        return centres + arm, J, second

    return point_map


def ball_minima(surface: ImplicitSurface, centres: np.ndarray, radius: float) -> Minima:
    """(y (f, 3) [m], ŝ (f,) [m], strict (f,) bool) of the balls of ``radius`` centred at ``centres`` (f, 3): each
    ball's point where ŝ is least, by :func:`feature_minima` in the chart of :func:`_balls` from the point toward the
    surface (−∇s at its centre)."""
    toward = -surface.first_order(centres)[1]
    toward /= np.linalg.norm(toward, axis=1, keepdims=True)
    point_map = _balls(centres, radius, toward)
    u, s, strict_minima = feature_minima(
        surface, point_map, np.tile([0.5 * np.pi, 0.0], (len(centres), 1)), np.array([False, False])
    )
    return point_map(u)[0], s, strict_minima


def _grid(values: np.ndarray, k: int) -> np.ndarray:
    """The samples (m, k) of a k-dimensional grid of the coordinates ``values``."""
    return np.stack(np.meshgrid(*([values] * k), indexing="ij"), axis=-1).reshape(-1, k)


def _least_samples(
    surface: ImplicitSurface, point_map: PointMap, f: int, samples: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """((f, k), (f,)): each of f features' sample of ``samples`` (m, k) with the least ŝ, and that ŝ (one call)."""
    X = np.stack([point_map(np.tile(sample, (f, 1)))[0] for sample in samples], axis=1)  # (f, m, 3)
    s = surface.first_order(X.reshape(-1, 3))[0].reshape(f, len(samples))
    best = np.argmin(s, axis=1)
    return samples[best], s[np.arange(f), best]


def _some(point_map: PointMap, chosen: np.ndarray, f: int) -> PointMap:
    """The point map of the ``chosen`` (c,) of f features."""

    def some(u: np.ndarray):
        full = np.zeros((f, u.shape[1]))
        full[chosen] = u
        x, J, second = point_map(full)
        return x[chosen], J[chosen], second[chosen]

    return some


EDGE_SAMPLES = np.linspace(-1.0, 1.0, 7)[1:-1, None]
"""An edge's samples (5, 1), inside it."""

FACE_SAMPLES = _grid(np.array([-0.6, 0.0, 0.6]), 2)
"""A face's samples (9, 2), inside it."""

DISC_SAMPLES = np.vstack(
    [[0.0, 0.0], 0.6 * np.column_stack([np.cos(np.arange(6) * np.pi / 3), np.sin(np.arange(6) * np.pi / 3)])]
)
"""A disc's samples (7, 2): its centre and six at 0.6 of its radius."""

SIDE_SAMPLES = np.column_stack([np.tile(np.arange(8) * np.pi / 4, 3), np.repeat([-0.6, 0.0, 0.6], 8)])
"""A side's samples (24, 2): 8 around it at 3 heights."""


class ImplicitSlots:
    """What a shape's slots against an ImplicitSurface share (module docstring): its ``frame`` (origin its centre),
    ``kind`` ("box": ``half`` its half-edges (3,) [m]; "capsule": (half-length, radius); "cylinder": (half-length,
    radius), along its third axis), the ``surface``, the ``k`` of a cylinder's rims' k-gons, and the counts
    ``slots``. Its :meth:`chosen` slots are a term of each state's workspace."""

    def __init__(self, frame: LinkFrame, kind: str, size: np.ndarray, surface: ImplicitSurface, k: int = 6):
        self.frame, self.kind, self.size_of, self.surface, self.k = (
            frame,
            kind,
            np.asarray(size, dtype=float),
            surface,
            k,
        )
        self.size = float(self.size_of.max()) if kind == "box" else float(self.size_of.sum())
        counts = {"box": (EDGE_SLOTS, FACE_SLOTS), "capsule": (CAP_SLOTS, SEGMENT_SLOTS)}
        rim = RIM_MINIMA + k - 1
        self.slots: tuple[int, ...] = counts.get(kind, (rim, rim, DISC_SLOTS, SIDE_SLOTS))
        self.middle, self.extent = np.zeros(3), 1.0 + 100.0 * self.size  # a slot left over: far (its row's rate)

    def slot_name(self, slot: int) -> str:
        """What slot ``slot`` is, for messages."""
        names = {"box": ("an edge", "a face"), "capsule": ("an end cap", "its side")}.get(
            self.kind, ("rim 0", "rim 1", "a disc", "its side")
        )
        start = 0
        for name, count in zip(names, self.slots):
            if slot < start + count:
                return f"on {name} against the implicit surface"
            start += count
        return "left over"

    def chosen(self, ev: StateView) -> tuple[np.ndarray, ...]:
        """(points (m, 3) [m], gaps (m,) [m], normals (m, 3), the centre (3,)) of the state's slots: infinite gaps
        for slots left over."""

        def compute():
            R, centre = np.ascontiguousarray(self.frame.rotation(ev)), self.frame.position(ev)
            return (*self.slots_at(centre, R), centre)

        return ev.memo(("implicit slots", self), compute)

    def slots_at(self, centre: np.ndarray, R: np.ndarray) -> tuple[np.ndarray, ...]:
        """(points, gaps, normals) of the slots with the shape at ``centre`` (3,) [m], axes the columns of R: each
        feature kind's least strict minima (:func:`~flexbody.constraints.mesh_shape_points.take_nearest`, none within
        :data:`DUPLICATE` of the size of one taken before; infinite gaps left over)."""
        if self.kind == "box":
            found = [(self._edges(centre, R), EDGE_SLOTS), (self._faces(centre, R), FACE_SLOTS)]
        elif self.kind == "capsule":
            found = [(self._caps(centre, R), CAP_SLOTS), (self._side(centre, R), SEGMENT_SLOTS)]
        else:
            rim = RIM_MINIMA + self.k - 1
            found = [(part, rim) for part in self._rims(centre, R)]
            found += [(self._discs(centre, R), DISC_SLOTS), (self._side(centre, R), SIDE_SLOTS)]
        taken: list = []
        parts = [
            take_nearest(self._pairs(*minima), 0.0, count, taken, DUPLICATE * self.size) for minima, count in found
        ]
        return tuple(np.concatenate(arrays) for arrays in zip(*parts))

    def _pairs(self, x: np.ndarray, s: np.ndarray, strict: np.ndarray) -> tuple[np.ndarray, ...]:
        """(gaps (f,), points (f, 3), normals (f, 3)) of the features' minima at x (f, 3) with ŝ (f,): ŝ where the
        minimum is strict (infinite otherwise), the normal ∇s/‖∇s‖ there."""
        gaps = np.where(strict, s, np.inf)
        normals = np.tile(np.eye(3)[2], (len(x), 1))
        for i in np.flatnonzero(strict):
            n = self.surface.gradient(x[i])[0]
            normals[i] = n / np.linalg.norm(n)
        return gaps, x, normals

    def _minima(self, point_map: PointMap, f: int, samples: np.ndarray, bounded: np.ndarray) -> Minima:
        """(x (f, 3), ŝ (f,), strict (f,)) of f features' minima (:func:`feature_minima`) from their best samples;
        a feature whose best sample lies farther than :data:`NEAR` of the size gives that sample (module
        docstring)."""
        starts, least = _least_samples(self.surface, point_map, f, samples)
        x, strict = point_map(starts)[0], np.ones(f, dtype=bool)
        near = np.flatnonzero(least <= NEAR * self.size)
        if near.size:
            searched = _some(point_map, near, f)
            u, s, strict[near] = feature_minima(self.surface, searched, starts[near], bounded)
            x[near], least[near] = searched(u)[0], s
        return x, least, strict

    def _edges(self, centre: np.ndarray, R: np.ndarray) -> Minima:
        edges = box_edges(self.size_of)
        origins = np.array([middle for middle, _, _ in edges])
        axes = np.array([direction * half for _, direction, half in edges])[:, :, None]
        return self._minima(_affine(centre, R, origins, axes), len(edges), EDGE_SAMPLES, np.array([True]))

    def _faces(self, centre: np.ndarray, R: np.ndarray) -> Minima:
        h = self.size_of
        origins, axes = [], []
        for k in range(3):
            i, j = (k + 1) % 3, (k + 2) % 3
            for sign in (-1.0, 1.0):
                origins.append(sign * h[k] * np.eye(3)[k])
                axes.append(np.column_stack([h[i] * np.eye(3)[i], h[j] * np.eye(3)[j]]))
        point_map = _affine(centre, R, np.array(origins), np.array(axes))
        return self._minima(point_map, 6, FACE_SAMPLES, np.array([True, True]))

    def _caps(self, centre: np.ndarray, R: np.ndarray) -> Minima:
        """Each end ball's minimum of ŝ (:func:`ball_minima`), taken where it lies on the cap (the ball's outer half,
        its rim with it)."""
        half, radius = self.size_of
        ends = centre + np.outer([-half, half], R[:, 2])
        x, s, strict = ball_minima(self.surface, ends, radius)
        outer = np.einsum("fi,fi->f", x - ends, np.outer([-1.0, 1.0], R[:, 2])) >= -1e-12 * radius
        return x, s, strict & outer

    def _rims(self, centre: np.ndarray, R: np.ndarray) -> list[Minima]:
        """Each rim's points (:func:`~flexbody.constraints.cylinder_slots.rim_points`; a minimum repeated where the
        rim has fewer, which :meth:`slots_at` takes once)."""
        half, radius = self.size_of
        parts = []
        for sign in (-1.0, 1.0):
            middle = centre + sign * half * R[:, 2]
            x = rim_points(self.surface, middle, R[:, 0], R[:, 1], radius, self.size, self.k)[0]
            s = surface_distances(self.surface, x, exact=True)[0]
            parts.append((x, s, np.ones(len(x), dtype=bool)))
        return parts

    def _discs(self, centre: np.ndarray, R: np.ndarray) -> Minima:
        half, radius = self.size_of
        origins = np.array([[0.0, 0.0, -half], [0.0, 0.0, half]])
        axes = np.tile(np.array([[radius, 0.0], [0.0, radius], [0.0, 0.0]]), (2, 1, 1))
        x, s, strict = self._minima(_affine(centre, R, origins, axes), 2, DISC_SAMPLES, np.array([True, True]))
        local = (x - centre) @ R
        return x, s, strict & (np.hypot(local[:, 0], local[:, 1]) < radius)

    def _side(self, centre: np.ndarray, R: np.ndarray) -> Minima:
        """The minimum on the round side about the axis segment (a cylinder's, a capsule's between its caps)."""
        half, radius = self.size_of
        return self._minima(_side(centre, R, half, radius), 1, SIDE_SAMPLES, np.array([False, True]))


def implicit_slot_points(frame: LinkFrame, kind: str, size: np.ndarray, surface: ImplicitSurface, k: int = 6) -> list:
    """The slots of a shape against an ImplicitSurface (:class:`ImplicitSlots`; module docstring), as anchors."""
    shape = ImplicitSlots(frame, kind, size, surface, k)
    return [MeshFeaturePoint(shape, slot) for slot in range(sum(shape.slots))]
