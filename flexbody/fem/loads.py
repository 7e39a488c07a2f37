"""External loads on flexible bodies: body forces, nodal forces, surface tractions, moments and pressure.

Each load gives the generalized external force f_ext(q) (3n,) [N] on its body's nodal coordinates; in the
notation of [DE-104] the body/surface force vector is g = −f_ext, g_j = −∫ ρ₀ N_ij b_i dV − ∫ N_ij p_i dA.
Dead loads (body force, nodal force, traction, moment) do not depend on q; a follower pressure acts on the
current surface and also provides its load stiffness ∂f_ext/∂q (non-symmetric in general).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ..errors import LoadError, MeshError
from .flexible_body import FlexibleBody


def _check_body(body, load: str) -> FlexibleBody:
    if not isinstance(body, FlexibleBody):
        raise LoadError(f"{load}: body must be a FlexibleBody, got {type(body).__name__}")
    return body


def _finite_vector(value, shape, what: str) -> np.ndarray:
    try:
        if np.iscomplexobj(value) or isinstance(value, (str, bytes)):
            raise TypeError("not real numbers")
        arr = np.asarray(value, dtype=float)
        arr = np.broadcast_to(arr, shape).copy()
    except (TypeError, ValueError) as exc:
        given = repr(value) if isinstance(value, (str, bytes)) or np.ndim(value) == 0 else f"shape {np.shape(value)}"
        raise LoadError(f"{what}: expected real numbers of shape {shape}, got {given}") from exc
    if not np.all(np.isfinite(arr)):
        raise LoadError(f"{what}: values must be finite, got {value!r}")
    return arr


def _faces(body: FlexibleBody, faces, load: str) -> tuple[str, np.ndarray]:
    """(label, (k, 2) face rows) from a face-set name or an explicit array."""
    if isinstance(faces, str):
        try:
            return faces, body.mesh.face_set(faces)
        except MeshError as exc:
            raise LoadError(f"{load} on body {body.name!r}: {exc}") from exc
    who = f"{load} on body {body.name!r}"
    try:
        given = np.asarray(faces)
    except ValueError:  # ragged nested lists
        given = np.asarray([None], dtype=object)
    if (
        given.dtype == bool
        or not np.issubdtype(given.dtype, np.integer)
        or given.ndim != 2
        or given.shape[1] != 2
        or not given.size
    ):
        raise LoadError(
            f"{who}: faces must be a face-set name or integer rows (element, local face) of shape (k, 2), got {faces!r}"
        )
    rows = given.astype(np.int64)
    last = body.element.n_faces - 1
    bad = np.flatnonzero((rows[:, 0] < 0) | (rows[:, 0] >= body.n_elements) | (rows[:, 1] < 0) | (rows[:, 1] > last))
    if bad.size:
        raise LoadError(
            f"{who}: face row {int(bad[0])} {tuple(int(v) for v in rows[bad[0]])} is not (element "
            f"0..{body.n_elements - 1}, local face 0..{last})"
        )
    return "<faces>", rows


class FaceQuadrature:
    """Quadrature points on a set of element faces: shape values, in-face derivatives and outward orientation, from
    the reference cell's face rules (:meth:`~flexbody.fem.elements.ReferenceCell.face_rule`: Gauss points on a
    brick's square faces, symmetric triangle rules on a tetrahedron's).

    Attributes
    ----------
    nodes : ndarray (k, nn)   element nodes of each face's element
    N : ndarray (k, g, nn)    shape functions at the face's quadrature points
    dN_s, dN_t : ndarray (k, g, nn)  derivatives along the two in-face parameters (s, t)
    w : ndarray (g,)          weights in (s, t) (on [-1, 1]² or on the triangle s, t ≥ 0, s + t ≤ 1)
    sign : ndarray (k,)       +1 / -1 so that sign * (x_s × x_t) is the outward normal
    """

    def __init__(self, body: FlexibleBody, rows: np.ndarray, rule: int | None = None):
        ref = body.element
        self.w = ref.face_rule(0, rule).weights
        self.nodes = body.mesh.cells[rows[:, 0]]
        k, nn, g = len(rows), ref.n_nodes, len(self.w)
        self.N = np.empty((k, g, nn))
        self.dN_s = np.empty((k, g, nn))
        self.dN_t = np.empty((k, g, nn))
        self.sign = np.empty(k)
        for face in range(ref.n_faces):
            sel = rows[:, 1] == face
            if not np.any(sel):
                continue
            points, _, ds, dt, sign = ref.face_rule(face, rule)
            dN = ref.shape_gradients(points)
            self.N[sel] = ref.shape_functions(points)
            self.dN_s[sel] = dN @ ds
            self.dN_t[sel] = dN @ dt
            self.sign[sel] = sign

    def tangents(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Surface tangents ∂x/∂s, ∂x/∂t (k, g, 3) for nodal positions x (n, 3)."""
        xe = x[self.nodes]
        return np.einsum("kga,kai->kgi", self.dN_s, xe), np.einsum("kga,kai->kgi", self.dN_t, xe)

    def area_vectors(self, x: np.ndarray) -> np.ndarray:
        """Outward area vectors n dA / (ds dt) (k, g, 3) at the Gauss points."""
        xs, xt = self.tangents(x)
        return self.sign[:, None, None] * np.cross(xs, xt)

    def scatter(self, n_nodes: int, nodal: np.ndarray) -> np.ndarray:
        """Sum face-node contributions (k, nn, 3) into a global vector (3n,)."""
        out = np.zeros((n_nodes, 3))
        np.add.at(out, self.nodes.ravel(), nodal.reshape(-1, 3))
        return out.ravel()


class Load:
    """Base class: a load on one flexible body."""

    body: FlexibleBody
    follower = False

    def force(self, q: np.ndarray) -> np.ndarray:
        """External generalized force (3n,) [N] at body coordinates q (3n,)."""
        raise NotImplementedError

    def stiffness(self, q: np.ndarray) -> sp.csr_matrix | None:
        """∂force/∂q (3n, 3n), or None for a dead load."""
        return None


class BodyForce(Load):
    """Uniform body force per unit mass (acceleration field b, m/s²): f = ∫ ρ₀ Nᵀ b dV = M [b; b; …]."""

    def __init__(self, body: FlexibleBody, acceleration: ArrayLike):
        self.body = _check_body(body, "BodyForce")
        self.acceleration = _finite_vector(acceleration, (3,), f"BodyForce on body {body.name!r}")
        self._f: np.ndarray | None = None

    def force(self, q: np.ndarray | None = None) -> np.ndarray:
        if self._f is None:
            self._f = self.body.body_force(self.acceleration)
        return self._f


class Gravity(BodyForce):
    """Gravity, a body force with acceleration g (default (0, 0, −9.81) m/s²)."""

    def __init__(self, body: FlexibleBody, g: ArrayLike = (0.0, 0.0, -9.81)):
        super().__init__(body, g)


class NodalForce(Load):
    """Point forces on nodes: ``force`` (3,) applied to each node, or (k, 3) one per node; ``total`` splits evenly."""

    def __init__(
        self,
        body: FlexibleBody,
        nodes: str | ArrayLike,
        force: ArrayLike | None = None,
        *,
        total: ArrayLike | None = None,
    ):
        self.body = _check_body(body, "NodalForce")
        try:
            self.nodes = body.nodes(nodes)
        except MeshError as exc:
            raise LoadError(f"NodalForce on body {body.name!r}: {exc}") from exc
        if len(self.nodes) == 0:
            raise LoadError(f"NodalForce on body {body.name!r}: node selection {nodes!r} is empty")
        if (force is None) == (total is None):
            raise LoadError(f"NodalForce on body {body.name!r}: give exactly one of force= or total=")
        if total is not None:
            force = _finite_vector(total, (3,), f"NodalForce on body {body.name!r}") / len(self.nodes)
        self.values = _finite_vector(force, (len(self.nodes), 3), f"NodalForce on body {body.name!r}")

    def force(self, q: np.ndarray | None = None) -> np.ndarray:
        f = np.zeros((self.body.n_nodes, 3))
        np.add.at(f, self.nodes, self.values)
        return f.ravel()


class SurfaceTraction(Load):
    """Dead traction on a face set, per unit reference area [Pa].

    Give ``traction`` (3,) constant, or a callable traction(X) -> (k, 3) of reference points X (k, 3),
    or ``total`` (3,) [N] spread uniformly over the reference area of the faces.
    """

    def __init__(
        self,
        body: FlexibleBody,
        faces: str | ArrayLike,
        traction: ArrayLike | Callable[[np.ndarray], ArrayLike] | None = None,
        *,
        total: ArrayLike | None = None,
    ):
        self.body = _check_body(body, "SurfaceTraction")
        self.label, rows = _faces(body, faces, "SurfaceTraction")
        if (traction is None) == (total is None):
            raise LoadError(f"SurfaceTraction on {self.label!r} of body {body.name!r}: give traction= or total=")
        self.quad = FaceQuadrature(body, rows)
        X = body.mesh.points
        dA = np.linalg.norm(self.quad.area_vectors(X), axis=-1) * self.quad.w  # (k, g)
        self.area = float(dA.sum())
        X_gauss = np.einsum("kga,kai->kgi", self.quad.N, X[self.quad.nodes])
        what = f"SurfaceTraction on {self.label!r} of body {body.name!r}"
        if total is not None:
            t = np.broadcast_to(_finite_vector(total, (3,), what) / self.area, X_gauss.shape)
        elif callable(traction):
            try:
                values = traction(X_gauss.reshape(-1, 3).copy())
            except Exception as exc:  # the user's function: named here, its traceback chained
                raise LoadError(f"{what}: traction(X) raised {type(exc).__name__}: {exc}") from exc
            t = _finite_vector(values, (X_gauss.size // 3, 3), what).reshape(X_gauss.shape)
        else:
            t = np.broadcast_to(_finite_vector(traction, (3,), what), X_gauss.shape)
        nodal = np.einsum("kga,kg,kgi->kai", self.quad.N, dA, t)
        self._f = self.quad.scatter(body.n_nodes, nodal)

    def force(self, q: np.ndarray | None = None) -> np.ndarray:
        return self._f


class SurfaceMoment(SurfaceTraction):
    """Dead moment ``moment`` (3,) [N m] about the reference centroid of a face set.

    Distributed as the traction t = ω × (X − X_c) with ω = I_A⁻¹ M, I_A = ∫ (‖r‖² I − r rᵀ) dA, so the
    resultant force is zero and the resultant moment is M (for a torque along the face normal this is the
    linear shear distribution t = T n × r / I_p).
    """

    def __init__(self, body: FlexibleBody, faces: str | ArrayLike, moment: ArrayLike):
        what = f"SurfaceMoment on body {_check_body(body, 'SurfaceMoment').name!r}"
        M = _finite_vector(moment, (3,), what)
        _label, rows = _faces(body, faces, "SurfaceMoment")
        quad = FaceQuadrature(body, rows)
        X = body.mesh.points
        dA = (np.linalg.norm(quad.area_vectors(X), axis=-1) * quad.w).ravel()
        Xg = np.einsum("kga,kai->kgi", quad.N, X[quad.nodes]).reshape(-1, 3)
        centroid = dA @ Xg / dA.sum()
        r = Xg - centroid
        inertia = np.einsum("g,gk,gk->", dA, r, r) * np.eye(3) - np.einsum("g,gi,gj->ij", dA, r, r)
        omega = np.linalg.lstsq(inertia, M, rcond=None)[0]
        self.moment, self.centroid = M, centroid
        super().__init__(body, faces, traction=lambda pts: np.cross(omega, pts - centroid))


class Pressure(Load):
    """Follower pressure p [Pa] on a face set, acting on the current surface: f = −∫ p N n da.

    Positive pressure pushes into the body (against the outward normal). Provides its load stiffness.
    """

    follower = True

    def __init__(self, body: FlexibleBody, faces: str | ArrayLike, pressure: float):
        self.body = _check_body(body, "Pressure")
        self.label, rows = _faces(body, faces, "Pressure")
        self.pressure = float(_finite_vector(pressure, (), f"Pressure on {self.label!r} of body {body.name!r}"))
        self.quad = FaceQuadrature(body, rows)
        nn = self.quad.nodes.shape[1]
        self._rows = np.repeat(self.quad.nodes, nn, axis=1)
        self._cols = np.tile(self.quad.nodes, (1, nn))

    def force(self, q: np.ndarray) -> np.ndarray:
        x = np.asarray(q, dtype=float).reshape(-1, 3)
        nda = self.quad.area_vectors(x) * self.quad.w[None, :, None]
        nodal = -self.pressure * np.einsum("kga,kgi->kai", self.quad.N, nda)
        return self.quad.scatter(self.body.n_nodes, nodal)

    def stiffness(self, q: np.ndarray) -> sp.csr_matrix:
        """Load stiffness ∂f/∂q (3n, 3n): ∂f_a/∂x_b = −p Σ_g w σ N_a (N_b,t [x_s]× − N_b,s [x_t]×)."""
        x = np.asarray(q, dtype=float).reshape(-1, 3)
        xs, xt = self.quad.tangents(x)
        q_ = self.quad
        # δn = N_b,s (δx_b × x_t) + N_b,t (x_s × δx_b) = (−N_b,s [x_t]× + N_b,t [x_s]×) δx_b
        blocks = np.einsum("kgb,kgij->kgbij", q_.dN_t, _skew(xs)) - np.einsum("kgb,kgij->kgbij", q_.dN_s, _skew(xt))
        coef = -self.pressure * q_.sign[:, None] * q_.w[None, :]
        Ke = np.einsum("kg,kga,kgbij->kabij", coef, q_.N, blocks)  # (k, nn, nn, 3, 3)
        n = self.body.n_nodes
        rows = (3 * self._rows.reshape(len(Ke), -1)[:, :, None, None] + np.arange(3)[:, None]).repeat(3, axis=-1)
        cols = (3 * self._cols.reshape(len(Ke), -1)[:, :, None, None] + np.arange(3)[None, :]).repeat(3, axis=-2)
        return sp.csr_matrix(
            (Ke.reshape(len(Ke), -1, 3, 3).ravel(), (rows.ravel(), cols.ravel())), shape=(3 * n, 3 * n)
        )


def _skew(v: np.ndarray) -> np.ndarray:
    """Cross-product matrices [v]× (..., 3, 3)."""
    z = np.zeros(v.shape[:-1])
    return np.stack(
        [
            np.stack([z, -v[..., 2], v[..., 1]], -1),
            np.stack([v[..., 2], z, -v[..., 0]], -1),
            np.stack([-v[..., 1], v[..., 0], z], -1),
        ],
        -2,
    )
