"""Smooth implicit surfaces s(x) = 0 in world coordinates, for points held on them [MH-1..15].

A surface gives its value s (k,), gradient D = ∂s/∂x (k, 3) and Hessian (k, 3, 3) at a point x (3,) [m].
k = 1 for a surface; k = 2 describes a curve as the intersection of two surfaces. The normal space is
spanned by the rows of D [MH-3]; a contact force is f = Dᵀλ [MH-13].
"""

from __future__ import annotations

from collections.abc import Callable

import numba as nb
import numpy as np
from numpy.typing import ArrayLike

from ..errors import ConstraintError
from ..rigid.anchors import Anchor
from .row_kinds import LINEAR, RADIAL, PointRow, point_row


def _vec(value, what) -> np.ndarray:
    a = np.asarray(value, dtype=float)
    if a.shape != (3,) or not np.all(np.isfinite(a)):
        raise ConstraintError(f"{what} must be 3 finite numbers, got {value!r}")
    return a


def _unit(value, what) -> np.ndarray:
    a = _vec(value, what)
    n = np.linalg.norm(a)
    if n < 1e-12:
        raise ConstraintError(f"{what} has zero length")
    return a / n


class Surface:
    """Base class: ``value(x)`` (k,), ``gradient(x)`` (k, 3), ``hessian(x)`` (k, 3, 3)."""

    n_rows = 1

    def declare_row(self, point: Anchor | None) -> PointRow | None:
        """The compiled row of a point held on this surface (:mod:`flexbody.constraints.row_kinds`), or None for a
        surface without one (its value, gradient and Hessian are then evaluated in Python)."""
        return None

    def value(self, x: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def gradient(self, x: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def hessian(self, x: np.ndarray) -> np.ndarray:
        raise NotImplementedError


class Plane(Surface):
    """s = n·(x − x₀) with unit normal n (a line in a planar mechanism is a plane containing z)."""

    def __init__(self, normal: ArrayLike, point: ArrayLike = (0.0, 0.0, 0.0)):
        self.normal = _unit(normal, "Plane: normal")
        self.point = _vec(point, "Plane: point")

    def declare_row(self, point: Anchor | None) -> PointRow:
        """A LINEAR row: φ = nᵀ(x − x₀)."""
        return PointRow(LINEAR, point, normal=self.normal, offset=-self.point)

    def value(self, x: np.ndarray) -> np.ndarray:
        """Signed distance s = n·(x − x₀) (1,) [m] of the point x (3,) [m, world] from the plane."""
        row = _row_of(self.declare_row(None), x)
        assert row is not None  # a linear row is defined everywhere
        return np.array([row[0]])

    def gradient(self, x: np.ndarray) -> np.ndarray:
        """D = nᵀ (1, 3), the unit normal, the same at every x."""
        return self.normal[None, :]

    def hessian(self, x: np.ndarray) -> np.ndarray:
        """Zero (1, 3, 3) [1/m]: the plane is flat."""
        return np.zeros((1, 3, 3))


class Sphere(Surface):
    """s = ‖x − c‖ − r (a distance, so s is in metres and D is the unit normal)."""

    _undefined = "at the centre"

    def __init__(self, center: ArrayLike, radius: float):
        self.center = _vec(center, "Sphere: center")
        self.radius = float(radius)
        if not np.isfinite(self.radius) or self.radius <= 0:
            raise ConstraintError(f"Sphere: radius must be positive, got {radius}")
        self._perp = np.eye(3)

    def declare_row(self, point: Anchor | None) -> PointRow:
        """A RADIAL row: φ = ‖P(x − c)‖ − r (P = I; P = I − aaᵀ for a :class:`Cylinder`)."""
        return PointRow(RADIAL, point, projector=self._perp, offset=-self.center, length=self.radius)

    def _undefined_message(self) -> str:
        return f"{type(self).__name__}: the point is {self._undefined}, where the normal is undefined"

    def _d(self, x):
        d = self._perp @ (x - self.center)
        r = np.linalg.norm(d)
        if r < 1e-14:
            raise ConstraintError(self._undefined_message())
        return d, r

    def value(self, x: np.ndarray) -> np.ndarray:
        """Signed distance s = ‖x − c‖ − r (1,) [m] of the point x (3,) [m, world] from the sphere (for a cylinder,
        ‖(I − aaᵀ)(x − c)‖ − r)."""
        row = _row_of(self.declare_row(None), x)
        if row is None:
            return np.array([-self.radius])
        return np.array([row[0]])

    def gradient(self, x: np.ndarray) -> np.ndarray:
        """D (1, 3), the outward unit normal at x (3,) [m]; ConstraintError where the normal is undefined (x
        at the centre, or on the axis of a :class:`Cylinder`)."""
        row = _row_of(self.declare_row(None), x)
        if row is None:
            raise ConstraintError(self._undefined_message())
        return row[1][None, :]

    def hessian(self, x: np.ndarray) -> np.ndarray:
        """∂²s/∂x² = (I − n nᵀ)/‖x − c‖ (1, 3, 3) [1/m] at x (3,) [m], n the unit normal."""
        d, r = self._d(x)
        n = d / r
        return ((np.eye(3) - np.outer(n, n)) / r)[None]


class Cylinder(Sphere):
    """s = ‖(I − aaᵀ)(x − c)‖ − r: a circular cylinder about the axis through ``center`` along ``axis``.

    In a planar mechanism (axis = z) it is the circle of radius r, e.g. the particle of [AG Fig. 2].
    """

    _undefined = "on the axis"

    def __init__(self, center: ArrayLike, radius: float, axis: ArrayLike = (0.0, 0.0, 1.0)):
        super().__init__(center, radius)
        self.axis = _unit(axis, "Cylinder: axis")
        self._perp = np.eye(3) - np.outer(self.axis, self.axis)

    def hessian(self, x: np.ndarray) -> np.ndarray:
        """∂²s/∂x² = (I − aaᵀ − n nᵀ)/ρ (1, 3, 3) [1/m] at x (3,) [m], n the unit normal and ρ the distance
        from the axis."""
        d, r = self._d(x)
        n = d / r
        return ((self._perp - np.outer(n, n)) / r)[None]


@nb.njit(cache=True)
def box_distance(p, half):
    """(s, ∇s (3,), nearest surface point (3,)) of the point p (3,) against the box |x_k| ≤ half_k (box axes):
    the signed distance of :class:`Box` (its docstring), compiled, for it and for the shapes' kernels."""
    q = np.abs(p) - half
    if q.max() > 0.0:
        clamped = np.minimum(np.maximum(p, -half), half)
        d = p - clamped
        s = np.sqrt(d @ d)
        return s, d / s, clamped
    k = np.argmax(q)  # inside: the nearest face
    gradient = np.zeros(3)
    gradient[k] = 1.0 if p[k] >= 0.0 else -1.0
    nearest = p.copy()
    nearest[k] = gradient[k] * half[k]
    return q[k], gradient, nearest


class Box(Surface):
    """s = the signed distance from a box (outside positive, its inside solid): centre ``center`` (3,) [m], edge
    lengths ``size`` (3,) [m], axes the columns of ``rotation`` (3, 3) (default the world's).

    In box axes p = Rᵀ(x − c) and d = |p| − size/2 (per axis): outside (some d_k > 0) s = ‖max(d, 0)‖ — the distance
    to the nearest face, edge or corner —, inside s = max_k d_k (minus the depth below the nearest face).
    """

    def __init__(self, center: ArrayLike, size: ArrayLike, rotation: ArrayLike | None = None):
        self.center = _vec(center, "Box: center")
        self.half = 0.5 * _vec(size, "Box: size")
        if np.any(self.half <= 0.0):
            raise ConstraintError(f"Box: size must be three positive edge lengths [m], got {size!r}")
        R = np.eye(3) if rotation is None else np.asarray(rotation, dtype=float)
        if R.shape != (3, 3) or not np.allclose(R.T @ R, np.eye(3), atol=1e-9) or np.linalg.det(R) < 0:
            raise ConstraintError(f"Box: rotation must be a rotation matrix (3, 3), got {rotation!r}")
        self.rotation = R

    def _local(self, x):
        """(p, d, signs): the point in box axes, its excess over the half sizes and the signs of p."""
        p = self.rotation.T @ (np.asarray(x, dtype=float) - self.center)
        return p, np.abs(p) - self.half, np.where(p < 0.0, -1.0, 1.0)

    def value(self, x: np.ndarray) -> np.ndarray:
        """s (1,) [m] at the point x (3,) [m, world]."""
        p = self.rotation.T @ (np.asarray(x, dtype=float) - self.center)
        return np.array([box_distance(p, self.half)[0]])

    def gradient(self, x: np.ndarray) -> np.ndarray:
        """D (1, 3), the outward unit normal: towards the nearest face, edge or corner (inside: the nearest face's)."""
        p = self.rotation.T @ (np.asarray(x, dtype=float) - self.center)
        return (self.rotation @ box_distance(p, self.half)[1])[None, :]

    def hessian(self, x: np.ndarray) -> np.ndarray:
        """∂²s/∂x² (1, 3, 3) [1/m]: (P − u uᵀ)/s off an edge or corner (P the projector on the axes beyond the box,
        u their unit direction, in world axes), zero off a face and inside."""
        _, d, signs = self._local(x)
        beyond = d > 0.0
        if beyond.sum() < 2:
            return np.zeros((1, 3, 3))
        outside = np.maximum(d, 0.0)
        s = np.linalg.norm(outside)
        u = signs * outside / s
        local = (np.diag(beyond.astype(float)) - np.outer(u, u)) / s
        return (self.rotation @ local @ self.rotation.T)[None]


class ImplicitSurface(Surface):
    """A user surface (or curve, k = 2): callables s(x) -> (k,), D(x) -> (k, 3), H(x) -> (k, 3, 3), and optionally
    ``third_derivative`` T(x) -> (k, 3, 3, 3), T_rijl = ∂³s_r/∂x_i∂x_j∂x_l [1/m³ per unit of s], which the exact
    derivatives of the rows' accelerations need (:func:`flexbody.forward_derivatives`, run gradients)."""

    def __init__(
        self,
        function: Callable,
        gradient: Callable,
        hessian: Callable,
        n_rows: int = 1,
        *,
        third_derivative: Callable | None = None,
    ):
        for f in (function, gradient, hessian):
            if not callable(f):
                raise ConstraintError("ImplicitSurface: function, gradient and hessian must be callables")
        if third_derivative is not None and not callable(third_derivative):
            raise ConstraintError(f"ImplicitSurface: third_derivative must be callable, got {third_derivative!r}")
        self._f, self._g, self._h, self._t = function, gradient, hessian, third_derivative
        self.n_rows = int(n_rows)

    @property
    def has_third_derivative(self) -> bool:
        """Whether the user gave ``third_derivative``."""
        return self._t is not None

    def third_derivative(self, x: np.ndarray) -> np.ndarray:
        """The user's T(x) = ∂³s/∂x³ (k, 3, 3, 3) at x (3,) [m]; ConstraintError without one, or with a wrong shape."""
        if self._t is None:
            raise ConstraintError("ImplicitSurface: no third_derivative was given")
        T = np.asarray(self._t(x), dtype=float)
        if T.size != 27 * self.n_rows or not np.all(np.isfinite(T)):
            raise ConstraintError(
                f"ImplicitSurface: third_derivative must return ({self.n_rows}, 3, 3, 3) finite numbers, got shape "
                f"{T.shape}"
            )
        return T.reshape(self.n_rows, 3, 3, 3)

    def value(self, x: np.ndarray) -> np.ndarray:
        """The user's s(x) (k,) at the point x (3,) [m, world], k = ``n_rows``."""
        return np.asarray(self._f(x), dtype=float).reshape(self.n_rows)

    def gradient(self, x: np.ndarray) -> np.ndarray:
        """The user's D(x) = ∂s/∂x (k, 3) at x (3,) [m]."""
        return np.asarray(self._g(x), dtype=float).reshape(self.n_rows, 3)

    def hessian(self, x: np.ndarray) -> np.ndarray:
        """The user's H(x) = ∂²s/∂x² (k, 3, 3) at x (3,) [m]."""
        return np.asarray(self._h(x), dtype=float).reshape(self.n_rows, 3, 3)

    def first_order(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(ŝ (m,) [m], ∇ŝ (m, 3), its Hessian's leading part (m, 3, 3) [1/m]) at the points X (m, 3) [m, world] of
        a surface (one row): the first-order distance ŝ = s/g (g = ‖∇s‖, exact on the surface, where a contact's gap
        closes), ∇ŝ = n − ŝ H n/g (n = ∇s/g) and (H − n (Hn)ᵀ − (Hn) nᵀ)/g, exact where ŝ = 0 (the rest is ŝ times
        the third derivatives). FlexbodyError naming the point where the gradient vanishes."""
        X = np.asarray(X, dtype=float).reshape(-1, 3)
        s = np.array([self._f(x) for x in X], dtype=float).reshape(len(X))
        D = np.array([self._g(x) for x in X], dtype=float).reshape(len(X), 3)
        H = np.array([self._h(x) for x in X], dtype=float).reshape(len(X), 3, 3)
        g = np.linalg.norm(D, axis=1)
        if not np.all(g > 0.0):
            raise ConstraintError(f"ImplicitSurface: its gradient vanishes at {X[np.argmin(g)]}: no normal there")
        n = D / g[:, None]
        Hn = np.einsum("mij,mj->mi", H, n)
        s_hat = s / g
        gradient = n - (s_hat / g)[:, None] * Hn
        hessian = (H - n[:, :, None] * Hn[:, None, :] - Hn[:, :, None] * n[:, None, :]) / g[:, None, None]
        return s_hat, gradient, hessian


def _row_of(row: PointRow, x: np.ndarray) -> tuple[float, np.ndarray] | None:
    """(s, D) of a declared row at the point x (3,) at rest (:func:`~flexbody.constraints.row_kinds.point_row`), or
    None where its direction is undefined."""
    e, zero = np.empty(3), np.zeros(3)
    d = np.asarray(x, dtype=float) + row.offset
    ok, phi, _ = point_row(row.kind, row.normal, row.projector, row.length, d, zero, zero, e)
    return (phi, e) if ok else None
