"""The static scene of a run, ``scene.vtp``: ground markers, rails of prismatic joints on the ground, the
planes, cylinders and spheres of ``OnSurface`` constraints, ground points and clamps, sized from the recorded
motion (cell data ``kind``, ``source``). Written as VTK XML by hand because meshio writes no string arrays.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from ..errors import FlexbodyError
from .frames import SCENE_FILE, results_system
from .links import link_children, link_markers, link_points, tree_slice

log = logging.getLogger(__name__)


SCENE_KINDS = ("ground", "rail", "surface", "anchor")
"""Values of the scene's cell data ``kind``."""


# ----------------------------------------------------------------------------------- static scene
def write_scene(directory, results, *, bounds=None) -> Path | None:
    """Write the static scene of ``results.system`` to ``<directory>/scene.vtp`` (VTK XML PolyData, world
    frame [m]): what holds the model in the world, which the ``.pvd`` series do not show.

    - ``ground``: a pyramid (apex at the joint, base towards the tree's gravity) at every revolute or
      fixed joint on the ground (root links of every rigid tree, and joints below a chain of ``Fixed``
      root links; a prismatic one is shown by its rail); a plate just outside every node set fixed to
      the ground (``Fix``, ``FixNodes``, ``AttachNodes`` to a ``Ground``), or a pyramid at its centroid
      when the nodes do not span a plane;
    - ``rail``: the axis line of every prismatic joint on the ground, over the recorded range of its
      coordinate;
    - ``surface``: the surface of every ``OnSurface`` constraint — a ``Plane`` as a rectangle, a
      ``Cylinder`` as a band with its mid circle (a line), a ``Sphere`` as a sphere; an
      ``ImplicitSurface`` is not drawn (logged);
    - ``anchor``: an octahedron at every ``Ground`` anchor of a closure (point-to-point, pin, distance,
      weld, hinge).

    Rails, planes and cylinder bands span the region swept by the model — the bounding box of the link
    origins and end points (as in :func:`link_mesh`) and of the nodes over the recorded steps, or
    ``bounds`` — with a margin of 10 % of its diagonal L; markers are a few per cent of L. Cell data:
    ``kind`` (one of :data:`SCENE_KINDS`) and ``source`` (the constraint or joint it comes from, e.g.
    "slider (Plane)", "crank.l1 joint"), both strings. The file is written to a temporary name and
    renamed, so writing it again is harmless.

    Parameters
    ----------
    directory : path
        The results directory (created).
    results : Results
        With its ``system``; q over the recorded steps sizes the primitives.
    bounds : array_like (6,), optional
        (xmin, xmax, ymin, ymax, zmin, zmax) [m] of the region to span instead of the swept one.

    Returns
    -------
    Path or None
        ``scene.vtp``, or None when the system has nothing of the above (an old ``scene.vtp`` in
        ``directory`` is then removed).
    """
    from .results import write_text

    system = results_system(results, "write_scene")
    directory = Path(directory)
    path = directory / SCENE_FILE
    lo, hi = _scene_box(results, system, bounds)
    scene = _Scene(lo, hi)
    _add_joint_primitives(scene, results, system)
    for c in getattr(system, "constraints", ()):
        _add_constraint_primitives(scene, c, system)
    if not scene.cells:
        if path.is_file():
            log.info("write_scene: %s removed (the system has no ground, rail or surface to draw)", path)
            path.unlink()
        return None
    directory.mkdir(parents=True, exist_ok=True)
    write_text(path, scene.vtp())
    return path


class _Scene:
    """Points and cells (lines and polygons) of the scene with their kind and source, in a box (lo, hi)."""

    def __init__(self, lo: np.ndarray, hi: np.ndarray):
        self.lo, self.hi = lo, hi
        self.centre = 0.5 * (lo + hi)
        diagonal = float(np.linalg.norm(hi - lo))
        self.size = diagonal if diagonal > 0 else 1.0  # L [m]
        self.margin = 0.1 * self.size
        self.points: list[np.ndarray] = []
        self.cells: list[tuple[str, list, str, str]] = []  # (lines | polys, ids, kind, source)
        self._n = 0

    def add(self, points, lines=(), polys=(), *, kind: str, source: str) -> None:
        start = self._n
        self.points.append(np.asarray(points, dtype=float).reshape(-1, 3))
        self._n += len(self.points[-1])
        self.cells += [("lines", [start + i for i in ids], kind, source) for ids in lines]
        self.cells += [("polys", [start + i for i in ids], kind, source) for ids in polys]

    def corners(self) -> np.ndarray:
        """The 8 corners (8, 3) of the box."""
        return np.array(
            [
                [x, y, z]
                for x in (self.lo[0], self.hi[0])
                for y in (self.lo[1], self.hi[1])
                for z in (self.lo[2], self.hi[2])
            ]
        )

    def vtp(self) -> str:
        """The scene as VTK XML PolyData (ASCII; cells ordered lines, then polygons, as VTK orders them)."""
        cells = [c for c in self.cells if c[0] == "lines"] + [c for c in self.cells if c[0] == "polys"]
        points = np.vstack(self.points)
        out = [
            '<?xml version="1.0"?>',
            '<VTKFile type="PolyData" version="1.0" byte_order="LittleEndian" header_type="UInt64">',
            "  <PolyData>",
            f'    <Piece NumberOfPoints="{len(points)}" NumberOfVerts="0" '
            f'NumberOfLines="{sum(c[0] == "lines" for c in cells)}" NumberOfStrips="0" '
            f'NumberOfPolys="{sum(c[0] == "polys" for c in cells)}">',
            "      <CellData>",
        ]
        for name, values in (("kind", [c[2] for c in cells]), ("source", [c[3] for c in cells])):
            codes = " ".join(" ".join(map(str, v.encode("utf-8") + b"\0")) for v in values)
            out.append(f'        <Array type="String" Name="{name}" format="ascii">{codes}</Array>')
        out += [
            "      </CellData>",
            "      <Points>",
            '        <DataArray type="Float64" Name="Points" NumberOfComponents="3" format="ascii">',
            " ".join(f"{x:.17g}" for x in points.ravel()),
            "        </DataArray>",
            "      </Points>",
        ]
        for section, tag in (("lines", "Lines"), ("polys", "Polys")):
            ids = [c[1] for c in cells if c[0] == section]
            offsets = np.cumsum([len(i) for i in ids], dtype=np.int64)
            out += [
                f"      <{tag}>",
                '        <DataArray type="Int64" Name="connectivity" format="ascii">'
                + " ".join(str(i) for c in ids for i in c)
                + "</DataArray>",
                '        <DataArray type="Int64" Name="offsets" format="ascii">'
                + " ".join(map(str, offsets))
                + "</DataArray>",
                f"      </{tag}>",
            ]
        out += ["    </Piece>", "  </PolyData>", "</VTKFile>", ""]
        return "\n".join(out)

    # ------------------------------------------------------------ primitives
    def pyramid(self, apex, down, *, kind: str, source: str) -> None:
        """A ground symbol: apex at ``apex``, square base 5 % of L further along ``down``."""
        h = 0.05 * self.size
        u, w = _perpendicular(down)
        base = np.asarray(apex) + h * down
        corners = [base + 0.6 * h * (a * u + b * w) for a, b in ((1, 1), (-1, 1), (-1, -1), (1, -1))]
        self.add(
            [apex, *corners], polys=[(0, 1, 2), (0, 2, 3), (0, 3, 4), (0, 4, 1), (4, 3, 2, 1)], kind=kind, source=source
        )

    def octahedron(self, centre, *, kind: str, source: str) -> None:
        """A ground point: an octahedron of radius 2.5 % of L about ``centre``."""
        r = 0.025 * self.size
        pts = np.asarray(centre) + r * np.vstack([np.eye(3), -np.eye(3)])
        faces = [(i, j, k) for i in (0, 3) for j in (1, 4) for k in (2, 5)]
        self.add(pts, polys=faces, kind=kind, source=source)

    def rectangle(self, centre, u, w, a: float, b: float, *, kind: str, source: str) -> None:
        """The rectangle centre ± a u ± b w (u, w orthonormal)."""
        pts = [centre + s * a * u + t * b * w for s, t in ((1, 1), (-1, 1), (-1, -1), (1, -1))]
        self.add(pts, polys=[(0, 1, 2, 3)], kind=kind, source=source)


def _perpendicular(n) -> tuple[np.ndarray, np.ndarray]:
    """Orthonormal u, w with (u, w, n) right-handed; u along the world axis most perpendicular to n."""
    n = np.asarray(n, dtype=float) / np.linalg.norm(n)
    axis = np.eye(3)[int(np.argmin(np.abs(n)))]
    u = axis - (axis @ n) * n
    u /= np.linalg.norm(u)
    return u, np.cross(n, u)


def _scene_box(results, system, bounds) -> tuple[np.ndarray, np.ndarray]:
    """(lo, hi) (3,) of ``bounds`` or of the links and nodes over (at most 200 of) the recorded steps."""
    if bounds is not None:
        b = np.asarray(bounds, dtype=float)
        if b.shape != (6,) or not np.all(np.isfinite(b)) or np.any(b[1::2] < b[0::2]):
            raise FlexbodyError(
                f"write_scene: bounds must be 6 finite numbers (xmin, xmax, ymin, ymax, zmin, "
                f"zmax) with min <= max, got {bounds!r}"
            )
        return b[0::2], b[1::2]
    n = results.n_steps
    if n == 0:
        raise FlexbodyError("write_scene: the results hold no recorded step")
    steps = np.unique(np.linspace(0, n - 1, min(n, 200)).round().astype(int))
    boxes = []
    markers = link_markers(system)
    for tree in getattr(system, "trees", ()):
        columns = tree_slice(results, system, tree)
        leaves = link_children(tree)[1]
        pts = np.vstack([link_points(tree, tree.kinematics(results.q[k, columns]), markers, leaves) for k in steps])
        boxes += [pts.min(axis=0), pts.max(axis=0)]
    for body in getattr(system, "bodies", ()):
        columns = results.slices[body.name]
        for k in steps:  # one step at a time: a large mesh has many nodes
            nodes = results.q[k, columns].reshape(-1, 3)
            boxes += [nodes.min(axis=0), nodes.max(axis=0)]
    if not boxes:
        return np.zeros(3), np.zeros(3)
    box = np.array(boxes)
    return box.min(axis=0), box.max(axis=0)


def _down(system) -> np.ndarray:
    """Unit direction of gravity (of the first tree, else of a body force), else −z."""
    from ..fem.loads import BodyForce

    loads = getattr(system, "loads", None) or getattr(getattr(system, "flexible", None), "loads", None) or ()
    candidates = [t.gravity for t in getattr(system, "trees", ())]
    candidates += [load.acceleration for load in loads if isinstance(load, BodyForce)]
    for g in candidates:
        if np.linalg.norm(g) > 0:
            return np.asarray(g, dtype=float) / np.linalg.norm(g)
    return np.array([0.0, 0.0, -1.0])


def _add_joint_primitives(scene: _Scene, results, system) -> None:
    """Ground markers at the joints on the ground and rails along the prismatic ones."""
    from ..rigid.joints import Fixed, Prismatic

    for tree in getattr(system, "trees", ()):
        kin0 = tree.kinematics(np.zeros(tree.n_dofs))
        grounded: set = set()  # links welded to the ground through Fixed joints only
        down = np.asarray(tree.gravity, dtype=float)
        down = down / np.linalg.norm(down) if np.linalg.norm(down) > 0 else np.array([0.0, 0.0, -1.0])
        columns = None
        for link in tree.links:  # parents come first
            parent = link.parent
            if parent is not None and parent.index not in grounded:
                continue
            if isinstance(link.joint, Fixed):
                grounded.add(link.index)
                if parent is not None:  # a part of the base, drawn by its root
                    continue
            R_parent, p_parent = (
                (np.eye(3), np.zeros(3)) if parent is None else (kin0.R[parent.index], kin0.p[parent.index])
            )
            origin = p_parent + R_parent @ link.placement_origin
            if not isinstance(link.joint, Prismatic):  # a slider's ground is its rail
                scene.pyramid(origin, down, kind="ground", source=f"{tree.name}.{link.name} joint")
            else:
                columns = tree_slice(results, system, tree) if columns is None else columns
                axis = R_parent @ link.placement_rotation @ link.joint.axis
                q = results.q[:, columns][:, link.coordinate]
                ends = [
                    origin + (float(q.min()) - scene.margin) * axis,
                    origin + (float(q.max()) + scene.margin) * axis,
                ]
                scene.add(ends, lines=[(0, 1)], kind="rail", source=f"{tree.name}.{link.name} rail")


def _add_constraint_primitives(scene: _Scene, c, system) -> None:
    """The surface of an OnSurface constraint, the ground points of closures and node sets fixed to the
    ground."""
    from ..constraints.attachments import AttachNodes, FixNodes
    from ..constraints.base import Fix
    from ..constraints.closures import OnSurface
    from ..rigid.anchors import Ground

    if isinstance(c, OnSurface):
        _add_surface(scene, c.surface, c.name)
    elif isinstance(c, (Fix, FixNodes)) or (isinstance(c, AttachNodes) and isinstance(c.link, Ground)):
        name = c.name
        points = c.body.mesh.points[c.nodes]
        if isinstance(c, AttachNodes) and c.offsets is not None:
            points = c.link.origin + c.offsets @ c.link.R.T
        _add_clamp(scene, points, c.body.mesh.points.mean(axis=0), _down(system), name)
    for a in getattr(c, "anchors", ()):
        if isinstance(a, Ground):
            scene.octahedron(a.origin, kind="anchor", source=f"{c.name} ground point")


def _add_clamp(scene: _Scene, points: np.ndarray, body_centre: np.ndarray, down: np.ndarray, name: str) -> None:
    """A plate 1 % of L outside the plane of the fixed ``points`` (25 % larger than their extent), or a
    pyramid at their centroid when they do not span a plane."""
    centre = points.mean(axis=0)
    sv, vt = np.linalg.svd(points - centre)[1:] if len(points) >= 3 else (np.zeros(3), None)
    if vt is None or sv[1] <= 1e-9 * scene.size or sv[2] > 1e-6 * sv[0]:
        scene.pyramid(centre, down, kind="ground", source=name)
        return
    u, w, n = vt[0], vt[1], np.cross(vt[0], vt[1])
    if n @ (centre - body_centre) < 0:
        n = -n
    a, b = (1.25 * float(np.abs((points - centre) @ e).max()) + 0.01 * scene.size for e in (u, w))
    scene.rectangle(centre + 0.01 * scene.size * n, u, w, a, b, kind="ground", source=name)


def _add_surface(scene: _Scene, surface, name: str) -> None:
    """A plane as a rectangle about the box centre's projection, spanning the box plus the margin (at
    least 10 % of L from its centre); a cylinder as a band over the box's extent along the axis (plus
    3 % of L) with its mid circle; a sphere as a UV sphere."""
    from ..constraints.surfaces import Cylinder, Plane, Sphere

    if isinstance(surface, Plane):
        n = surface.normal
        centre = scene.centre - (n @ (scene.centre - surface.point)) * n
        u, w = _perpendicular(n)
        a, b = (
            max(float(np.abs((scene.corners() - scene.centre) @ e).max()) + scene.margin, 0.1 * scene.size)
            for e in (u, w)
        )
        scene.rectangle(centre, u, w, a, b, kind="surface", source=f"{name} (Plane)")
    elif isinstance(surface, Cylinder):  # before Sphere: a Cylinder is a Sphere subclass
        axis, c, r = surface.axis, surface.center, surface.radius
        lo, hi = ((scene.corners() - c) @ axis).min(), ((scene.corners() - c) @ axis).max()
        mid, half = 0.5 * (lo + hi), 0.5 * (hi - lo) + 0.03 * scene.size
        u, w = _perpendicular(axis)
        k = 64
        ring = [r * (np.cos(t) * u + np.sin(t) * w) for t in np.linspace(0.0, 2 * np.pi, k, endpoint=False)]
        pts = [c + s * axis + p for s in (mid - half, mid + half, mid) for p in ring]
        quads = [(i, (i + 1) % k, k + (i + 1) % k, k + i) for i in range(k)]
        scene.add(
            pts,
            lines=[[2 * k + i for i in range(k)] + [2 * k]],
            polys=quads,
            kind="surface",
            source=f"{name} (Cylinder)",
        )
    elif isinstance(surface, Sphere):
        c, r = surface.center, surface.radius
        n_theta, n_phi = 32, 16
        phis = np.linspace(0.0, np.pi, n_phi + 1)[1:-1]
        thetas = np.linspace(0.0, 2 * np.pi, n_theta, endpoint=False)
        rings = [
            c + r * np.array([np.sin(p) * np.cos(t), np.sin(p) * np.sin(t), np.cos(p)]) for p in phis for t in thetas
        ]
        pts = [*rings, c + [0.0, 0.0, r], c - [0.0, 0.0, r]]
        top, bottom = len(rings), len(rings) + 1
        at = lambda i, j: i * n_theta + j % n_theta  # noqa: E731
        polys: list[tuple[int, ...]] = [(top, at(0, j), at(0, j + 1)) for j in range(n_theta)]
        polys += [
            (at(i, j), at(i + 1, j), at(i + 1, j + 1), at(i, j + 1))
            for i in range(len(phis) - 1)
            for j in range(n_theta)
        ]
        polys += [(bottom, at(len(phis) - 1, j + 1), at(len(phis) - 1, j)) for j in range(n_theta)]
        scene.add(pts, polys=polys, kind="surface", source=f"{name} (Sphere)")
    else:
        log.info(
            "write_scene: the surface of %r (%s) is not drawn (only Plane, Cylinder and Sphere are)",
            name,
            type(surface).__name__,
        )
