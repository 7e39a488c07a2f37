"""Export of results for ParaView, pyvista and spreadsheets: VTU per step with PVD time series (flexible
bodies and rigid links), histories as CSV, and conversion of a results directory to XDMF.

Flexible bodies (:func:`write_pvd`): the deformed mesh with point data ``displacement`` [m] (from the
mesh points), ``velocity`` [m/s] (dynamic runs) and node-averaged ``green_lagrange_strain``,
``cauchy_stress`` [Pa] (3×3 as 9 components) and ``von_mises`` [Pa]; the same tensors as cell data
(element averages over the Gauss points). The fields are defined in :mod:`flexbody.fields`.

Rigid trees (:func:`write_link_pvd`): line cells along the links and a vertex at each link origin, with
the link frame axes (world components) as point data ``frame_x``, ``frame_y``, ``frame_z`` and the link
index as cell data ``link``.

The static scene (:func:`write_scene`, written by the series writers): one ``scene.vtp`` (VTK XML PolyData,
not a series) with what holds the model in the world — ground markers at the joints on the ground and at
clamped node sets, the rails of prismatic joints on the ground, the surfaces of ``OnSurface``
constraints and the ground points of closures — each cell labelled by its ``kind`` and ``source``.
"""
from __future__ import annotations

import logging
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path
from xml.sax.saxutils import quoteattr

import numpy as np

from . import fields
from .errors import FlexbodyError, shortened
from .flexible import FlexibleBody
from .mesh import _CELL_TYPE

log = logging.getLogger(__name__)

FORMATS = ("pvd", "xdmf", "csv")
MAX_CSV_WIDTH = 200
SCENE_FILE = "scene.vtp"
"""File name of the static scene in a results directory (:func:`write_scene`)."""
SCENE_KINDS = ("ground", "rail", "surface", "anchor")
"""Values of the scene's cell data ``kind``."""


# ----------------------------------------------------------------------------------- flexible bodies
def body_fields(body: FlexibleBody, q: np.ndarray, v: np.ndarray | None = None) -> tuple[dict, dict]:
    """Point data and cell data dictionaries of ``body`` at its coordinates q (3n,) [m] and, if given,
    velocities v (3n,) [m/s] (names and shapes: :mod:`flexbody.fields`)."""
    return fields.vtk_data(fields.body_fields(body, q, v))


def write_vtu(path, body: FlexibleBody, q: np.ndarray, v: np.ndarray | None = None,
              values: dict | None = None) -> Path:
    """Write the deformed mesh of ``body`` at q (3n,) with its fields to a ``.vtu`` file: ``values``
    ({name: array} as :func:`flexbody.fields.body_fields` returns, e.g. recorded ones) or, by default,
    the fields computed at (q, v)."""
    import meshio

    path = Path(path)
    point_data, cell_data = fields.vtk_data(values) if values is not None else body_fields(body, q, v)
    mesh = meshio.Mesh(np.asarray(q, dtype=float).reshape(-1, 3), [(_CELL_TYPE[body.mesh.nodes_per_cell],
                                                                  body.mesh.cells)],
                       point_data=point_data, cell_data={k: [v] for k, v in cell_data.items()})
    path.parent.mkdir(parents=True, exist_ok=True)
    meshio.write(path, mesh, file_format="vtu", binary=True)
    return path


def write_pvd(directory, results, body=None, name: str | None = None, every: int = 1) -> Path:
    """Write one ``.vtu`` per recorded step of ``results`` (every ``every``-th step and the last) and a
    ``.pvd`` collection indexing them, per flexible body.

    The fields are those recorded in ``results.fields`` (``simulate(..., fields=True)`` or
    :meth:`Results.store_fields`) or else computed from q and, for dynamic results, v.

    Parameters
    ----------
    directory : path
        Output folder (created).
    results : Results
        Static (times = load factors) or dynamic results whose ``system`` holds the body.
    body : FlexibleBody or str, optional
        Which body (default: every flexible body of the system, one series each).
    name : str, optional
        File stem of the series (default: the body's name; only with one body).

    Returns
    -------
    Path
        The ``.pvd`` file of the first body written (:func:`write_pvds` returns all of them). The static
        scene (:func:`write_scene`) is written next to it.
    """
    return write_pvds(directory, results, body, name, every)[0]


def write_pvds(directory, results, body=None, name: str | None = None, every: int = 1) -> list[Path]:
    """As :func:`write_pvd`, returning the ``.pvd`` file of every body written."""
    paths = _write_body_series(directory, results, body, name, every)
    write_scene(directory, results)
    return paths


def _write_body_series(directory, results, body, name, every) -> list[Path]:
    directory = Path(directory)
    system = _system(results, "write_pvd")
    bodies = [b for b in system.bodies if body is None or b is body or b.name == body]
    if not bodies:
        raise FlexbodyError(f"write_pvd: no body {body!r} in the system")
    if name is not None and len(bodies) > 1:
        raise FlexbodyError(f"write_pvd: name {name!r} given for {len(bodies)} bodies; give body= as well")
    steps = _steps(results, every, "write_pvd")
    paths = []
    for b in bodies:
        stem = name or b.name
        recorded = results.fields.get(b.name)
        entries = []
        has_v = results.v is not None and len(results.v) == results.n_steps
        for step in steps:
            rel = f"{stem}_{step:04d}.vtu"
            if recorded:
                values, velocity = {k: v[step] for k, v in recorded.items()}, None
            else:
                values, velocity = None, results.v[step, results._slice(b)] if has_v else None
            write_vtu(directory / rel, b, results.positions(b, step).ravel(), velocity, values)
            entries.append((float(results.times[step]), rel))
        paths.append(_write_collection(directory / f"{stem}.pvd", entries))
    return paths


# ----------------------------------------------------------------------------------- rigid links
def link_mesh(tree, q: np.ndarray, markers: dict | None = None):
    """The links of ``tree`` at joint coordinates q (n_dofs,) as a :class:`meshio.Mesh` (world frame, m).

    Points: the link origins (joint frames after the joint motion) in link order, then one end point per
    leaf link (a link without children). Line cells join each link origin to its children's origins and
    each leaf origin to its end point: the farthest of the leaf's ``markers`` (link-frame offsets (k, 3),
    e.g. constrained link points or the centre of attached nodes), else its centre of mass, else a point
    0.1 m along its x axis. One vertex cell per link origin. Point data ``frame_x``, ``frame_y``,
    ``frame_z`` (n_points, 3): the link's axes (columns of R) at its origin, zero at end points; cell data
    ``link``: index of the link a cell belongs to.
    """
    import meshio

    kin = tree.kinematics(q)
    n = tree.n_links
    children, leaves = _children(tree)
    points = _link_points(tree, kin, markers, leaves)
    lines = [(i, c) for i in range(n) for c in children[i]] + [(i, n + k) for k, i in enumerate(leaves)]
    line_link = np.array([i for i, _ in lines], dtype=np.int64)
    frames = np.zeros((3, len(points), 3))
    frames[:, :n] = kin.R.transpose(2, 0, 1)                                   # frames[a, i] = R_i[:, a]
    return meshio.Mesh(points, [("line", np.array(lines, dtype=np.int64).reshape(-1, 2)),
                                ("vertex", np.arange(n, dtype=np.int64)[:, None])],
                       point_data={"frame_x": frames[0], "frame_y": frames[1], "frame_z": frames[2]},
                       cell_data={"link": [line_link, np.arange(n, dtype=np.int64)]})


def _children(tree) -> tuple[dict, list]:
    """({link index: indices of its children}, indices of the leaf links) of ``tree``."""
    n = tree.n_links
    children = {i: [l.index for l in tree.links if l.parent is not None and l.parent.index == i] for i in range(n)}
    return children, [i for i in range(n) if not children[i]]


def _link_points(tree, kin, markers, leaves) -> np.ndarray:
    """The points of :func:`link_mesh` (link origins, then leaf end points) at the kinematics ``kin``."""
    tips = np.array([kin.p[i] + kin.R[i] @ _leaf_offset(tree.links[i], (markers or {}).get(tree.links[i]))
                     for i in leaves]).reshape(-1, 3)
    return np.vstack([kin.p, tips])


def write_link_vtu(path, tree, q: np.ndarray, markers: dict | None = None) -> Path:
    """Write the links of ``tree`` at joint coordinates q (n_dofs,) to a ``.vtu`` file (see :func:`link_mesh`)."""
    import meshio

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    meshio.write(path, link_mesh(tree, q, markers), file_format="vtu", binary=True)
    return path


def write_link_pvd(directory, results, tree=None, every: int = 1) -> list[Path]:
    """Write the rigid links of every tree of ``results.system`` (or only ``tree``, object or name) as a
    time series: ``<tree>_NNNN.vtu`` for every ``every``-th recorded step and the last, and ``<tree>.pvd``
    (times as in :func:`write_pvd`). Geometry and data: :func:`link_mesh`; a leaf link is drawn to the
    farthest point of it that a constraint uses (a link point, or the centroid of nodes attached to it),
    else to its centre of mass.

    The static scene (:func:`write_scene`: ground markers, rails, surfaces) is written next to the series
    (also when the system has no tree).

    Returns
    -------
    list of Path
        The ``.pvd`` files, one per tree (empty when the system has no rigid tree and ``tree`` is None).
    """
    paths = _write_link_series(directory, results, tree, every)
    write_scene(directory, results)
    return paths


def _write_link_series(directory, results, tree, every) -> list[Path]:
    directory = Path(directory)
    system = _system(results, "write_link_pvd")
    trees = list(getattr(system, "trees", ()))
    if tree is not None:
        trees = [t for t in trees if t is tree or t.name == tree]
        if not trees:
            raise FlexbodyError(f"write_link_pvd: no rigid tree {getattr(tree, 'name', tree)!r} in the system; "
                                f"trees: {[t.name for t in system.trees]}")
    steps = _steps(results, every, "write_link_pvd")
    markers = _link_markers(system)
    paths = []
    for t in trees:
        columns = _tree_slice(results, system, t)
        entries = []
        for step in steps:
            rel = f"{t.name}_{step:04d}.vtu"
            write_link_vtu(directory / rel, t, results.q[step, columns], markers)
            entries.append((float(results.times[step]), rel))
        paths.append(_write_collection(directory / f"{t.name}.pvd", entries))
    return paths


def _leaf_offset(link, markers) -> np.ndarray:
    """End point (3,) of a leaf link in its frame [m]: farthest marker, else com, else 0.1 m along x."""
    pts = np.asarray(markers if markers else np.zeros((0, 3)), dtype=float).reshape(-1, 3)
    if np.linalg.norm(pts, axis=1).max(initial=0.0) > 0:
        return pts[np.argmax(np.linalg.norm(pts, axis=1))]
    if np.linalg.norm(link.com) > 0:
        return np.asarray(link.com, dtype=float)
    return np.array([0.1, 0.0, 0.0])


def _link_markers(system) -> dict:
    """Link-frame offsets used by the constraints, per link: link points of anchors and the centroid of
    node sets attached to a link (their offsets are known once the system is assembled)."""
    markers: dict = {}
    for c in getattr(system, "constraints", ()):
        for a in getattr(c, "anchors", ()):
            if hasattr(a, "link") and hasattr(a, "offset"):
                markers.setdefault(a.link, []).append(np.asarray(a.offset, dtype=float))
        offsets = getattr(c, "offsets", None)
        if hasattr(getattr(c, "link", None), "tree") and isinstance(offsets, np.ndarray) and offsets.size:
            markers.setdefault(c.link, []).append(offsets.reshape(-1, 3).mean(axis=0))
    return markers


def _tree_slice(results, system, tree) -> slice:
    if tree.name in results.body_slices:
        start, stop = results.body_slices[tree.name]
        return slice(start, stop)
    return system.slices[tree]


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

    system = _system(results, "write_scene")
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
        self.size = diagonal if diagonal > 0 else 1.0                  # L [m]
        self.margin = 0.1 * self.size
        self.points: list[np.ndarray] = []
        self.cells: list[tuple[str, list, str, str]] = []              # (lines | polys, ids, kind, source)
        self._n = 0

    def add(self, points, lines=(), polys=(), *, kind: str, source: str) -> None:
        start = self._n
        self.points.append(np.asarray(points, dtype=float).reshape(-1, 3))
        self._n += len(self.points[-1])
        self.cells += [("lines", [start + i for i in ids], kind, source) for ids in lines]
        self.cells += [("polys", [start + i for i in ids], kind, source) for ids in polys]

    def corners(self) -> np.ndarray:
        """The 8 corners (8, 3) of the box."""
        return np.array([[x, y, z] for x in (self.lo[0], self.hi[0]) for y in (self.lo[1], self.hi[1])
                         for z in (self.lo[2], self.hi[2])])

    def vtp(self) -> str:
        """The scene as VTK XML PolyData (ASCII; cells ordered lines, then polygons, as VTK orders them)."""
        cells = [c for c in self.cells if c[0] == "lines"] + [c for c in self.cells if c[0] == "polys"]
        points = np.vstack(self.points)
        out = ['<?xml version="1.0"?>',
               '<VTKFile type="PolyData" version="1.0" byte_order="LittleEndian" header_type="UInt64">',
               "  <PolyData>",
               f'    <Piece NumberOfPoints="{len(points)}" NumberOfVerts="0" '
               f'NumberOfLines="{sum(c[0] == "lines" for c in cells)}" NumberOfStrips="0" '
               f'NumberOfPolys="{sum(c[0] == "polys" for c in cells)}">',
               '      <CellData>']
        for name, values in (("kind", [c[2] for c in cells]), ("source", [c[3] for c in cells])):
            codes = " ".join(" ".join(map(str, v.encode("utf-8") + b"\0")) for v in values)
            out.append(f'        <Array type="String" Name="{name}" format="ascii">{codes}</Array>')
        out += ["      </CellData>", "      <Points>",
                '        <DataArray type="Float64" Name="Points" NumberOfComponents="3" format="ascii">',
                " ".join(f"{x:.17g}" for x in points.ravel()), "        </DataArray>", "      </Points>"]
        for section, tag in (("lines", "Lines"), ("polys", "Polys")):
            ids = [c[1] for c in cells if c[0] == section]
            offsets = np.cumsum([len(i) for i in ids], dtype=np.int64)
            out += [f"      <{tag}>",
                    '        <DataArray type="Int64" Name="connectivity" format="ascii">'
                    + " ".join(str(i) for c in ids for i in c) + "</DataArray>",
                    '        <DataArray type="Int64" Name="offsets" format="ascii">'
                    + " ".join(map(str, offsets)) + "</DataArray>",
                    f"      </{tag}>"]
        out += ["    </Piece>", "  </PolyData>", "</VTKFile>", ""]
        return "\n".join(out)

    # ------------------------------------------------------------ primitives
    def pyramid(self, apex, down, *, kind: str, source: str) -> None:
        """A ground symbol: apex at ``apex``, square base 5 % of L further along ``down``."""
        h = 0.05 * self.size
        u, w = _perpendicular(down)
        base = np.asarray(apex) + h * down
        corners = [base + 0.6 * h * (a * u + b * w) for a, b in ((1, 1), (-1, 1), (-1, -1), (1, -1))]
        self.add([apex] + corners, polys=[(0, 1, 2), (0, 2, 3), (0, 3, 4), (0, 4, 1), (4, 3, 2, 1)],
                 kind=kind, source=source)

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
            raise FlexbodyError(f"write_scene: bounds must be 6 finite numbers (xmin, xmax, ymin, ymax, zmin, "
                                f"zmax) with min <= max, got {bounds!r}")
        return b[0::2], b[1::2]
    n = results.n_steps
    if n == 0:
        raise FlexbodyError("write_scene: the results hold no recorded step")
    steps = np.unique(np.linspace(0, n - 1, min(n, 200)).round().astype(int))
    boxes = []
    markers = _link_markers(system)
    for tree in getattr(system, "trees", ()):
        columns = _tree_slice(results, system, tree)
        leaves = _children(tree)[1]
        pts = np.vstack([_link_points(tree, tree.kinematics(results.q[k, columns]), markers, leaves) for k in steps])
        boxes += [pts.min(axis=0), pts.max(axis=0)]
    for body in getattr(system, "bodies", ()):
        start, stop = results.body_slices[body.name]
        for k in steps:                             # one step at a time: a large mesh has many nodes
            nodes = results.q[k, start:stop].reshape(-1, 3)
            boxes += [nodes.min(axis=0), nodes.max(axis=0)]
    if not boxes:
        return np.zeros(3), np.zeros(3)
    boxes = np.array(boxes)
    return boxes.min(axis=0), boxes.max(axis=0)


def _down(system) -> np.ndarray:
    """Unit direction of gravity (of the first tree, else of a body force), else −z."""
    from .loads import BodyForce

    loads = getattr(system, "loads", None) or getattr(getattr(system, "flexible", None), "loads", ())
    candidates = [t.gravity for t in getattr(system, "trees", ())]
    candidates += [load.acceleration for load in loads if isinstance(load, BodyForce)]
    for g in candidates:
        if np.linalg.norm(g) > 0:
            return np.asarray(g, dtype=float) / np.linalg.norm(g)
    return np.array([0.0, 0.0, -1.0])


def _add_joint_primitives(scene: _Scene, results, system) -> None:
    """Ground markers at the joints on the ground and rails along the prismatic ones."""
    from .rigid.joints import Fixed, Prismatic

    for tree in getattr(system, "trees", ()):
        kin0 = tree.kinematics(np.zeros(tree.n_dofs))
        grounded: set = set()                       # links welded to the ground through Fixed joints only
        down = np.asarray(tree.gravity, dtype=float)
        down = down / np.linalg.norm(down) if np.linalg.norm(down) > 0 else np.array([0.0, 0.0, -1.0])
        columns = None
        for link in tree.links:                     # parents come first
            parent = link.parent
            if parent is not None and parent.index not in grounded:
                continue
            if isinstance(link.joint, Fixed):
                grounded.add(link.index)
                if parent is not None:              # a part of the base, drawn by its root
                    continue
            R_parent, p_parent = (np.eye(3), np.zeros(3)) if parent is None else (kin0.R[parent.index],
                                                                                  kin0.p[parent.index])
            origin = p_parent + R_parent @ link.placement_origin
            if not isinstance(link.joint, Prismatic):       # a slider's ground is its rail
                scene.pyramid(origin, down, kind="ground", source=f"{tree.name}.{link.name} joint")
            else:
                columns = _tree_slice(results, system, tree) if columns is None else columns
                axis = R_parent @ link.placement_rotation @ link.joint.axis
                q = results.q[:, columns][:, link.coordinate]
                ends = [origin + (float(q.min()) - scene.margin) * axis,
                        origin + (float(q.max()) + scene.margin) * axis]
                scene.add(ends, lines=[(0, 1)], kind="rail", source=f"{tree.name}.{link.name} rail")


def _add_constraint_primitives(scene: _Scene, c, system) -> None:
    """The surface of an OnSurface constraint, the ground points of closures and node sets fixed to the
    ground."""
    from .anchors import Ground
    from .attachments import AttachNodes, FixNodes
    from .closures import OnSurface
    from .constraints import Fix

    if isinstance(c, OnSurface):
        _add_surface(scene, c.surface, c.name)
    elif isinstance(c, (Fix, FixNodes)) or (isinstance(c, AttachNodes) and isinstance(c.link, Ground)):
        name = getattr(c, "name", None) or f"fix {c.body.name} {c.label}"
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
    if sv[1] <= 1e-9 * scene.size or sv[2] > 1e-6 * sv[0]:
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
    from .surfaces import Cylinder, Plane, Sphere

    if isinstance(surface, Plane):
        n = surface.normal
        centre = scene.centre - (n @ (scene.centre - surface.point)) * n
        u, w = _perpendicular(n)
        a, b = (max(float(np.abs((scene.corners() - scene.centre) @ e).max()) + scene.margin, 0.1 * scene.size)
                for e in (u, w))
        scene.rectangle(centre, u, w, a, b, kind="surface", source=f"{name} (Plane)")
    elif isinstance(surface, Cylinder):                  # before Sphere: a Cylinder is a Sphere subclass
        a, c, r = surface.axis, surface.center, surface.radius
        lo, hi = ((scene.corners() - c) @ a).min(), ((scene.corners() - c) @ a).max()
        mid, half = 0.5 * (lo + hi), 0.5 * (hi - lo) + 0.03 * scene.size
        u, w = _perpendicular(a)
        k = 64
        ring = [r * (np.cos(t) * u + np.sin(t) * w) for t in np.linspace(0.0, 2 * np.pi, k, endpoint=False)]
        pts = [c + s * a + p for s in (mid - half, mid + half, mid) for p in ring]
        quads = [(i, (i + 1) % k, k + (i + 1) % k, k + i) for i in range(k)]
        scene.add(pts, lines=[[2 * k + i for i in range(k)] + [2 * k]], polys=quads, kind="surface",
                  source=f"{name} (Cylinder)")
    elif isinstance(surface, Sphere):
        c, r = surface.center, surface.radius
        n_theta, n_phi = 32, 16
        phis = np.linspace(0.0, np.pi, n_phi + 1)[1:-1]
        thetas = np.linspace(0.0, 2 * np.pi, n_theta, endpoint=False)
        rings = [c + r * np.array([np.sin(p) * np.cos(t), np.sin(p) * np.sin(t), np.cos(p)])
                 for p in phis for t in thetas]
        pts = rings + [c + [0.0, 0.0, r], c - [0.0, 0.0, r]]
        top, bottom = len(rings), len(rings) + 1
        at = lambda i, j: i * n_theta + j % n_theta                      # noqa: E731
        polys = [(top, at(0, j), at(0, j + 1)) for j in range(n_theta)]
        polys += [(at(i, j), at(i + 1, j), at(i + 1, j + 1), at(i, j + 1))
                  for i in range(len(phis) - 1) for j in range(n_theta)]
        polys += [(bottom, at(len(phis) - 1, j + 1), at(len(phis) - 1, j)) for j in range(n_theta)]
        scene.add(pts, polys=polys, kind="surface", source=f"{name} (Sphere)")
    else:
        log.info("write_scene: the surface of %r (%s) is not drawn (only Plane, Cylinder and Sphere are)",
                 name, type(surface).__name__)


# ----------------------------------------------------------------------------------- histories
def write_histories_csv(path, results, *, max_width: int = MAX_CSV_WIDTH) -> Path:
    """Write the time histories of ``results`` as a plain CSV table (one row per recorded step).

    Columns: ``t`` (the results' ``times``: s, or load factors for static runs); ``q[i]`` and ``v[i]``
    (generalized coordinates and velocities) only when n_dofs ≤ ``max_width`` (200); then every history
    of ``results.histories`` whose first axis is the step count and that has at most ``max_width`` values
    per step, flattened per step (C order): ``name`` for a scalar, ``name[i]`` for a vector,
    ``name[i][j]`` for a matrix (no comma inside a name, so that ``numpy.genfromtxt(names=True)``
    reads the header; it shortens ``a[0]`` to ``a0``). Numbers are written with 17 significant digits
    (exact round trip). Units: those of the producing solver.
    """
    path = Path(path)
    n = results.n_steps
    names, blocks = ["t"], [np.asarray(results.times, dtype=float).reshape(n, 1)]
    series = [("q", results.q), ("v", results.v)] if results.q.shape[-1] <= max_width else []
    for key, value in series + list(results.histories.items()):
        value = np.asarray(value) if value is not None else None
        if value is None or value.ndim == 0 or value.shape[0] != n or value.dtype.kind not in "biuf":
            continue
        flat = value.reshape(n, -1).astype(float)
        if flat.shape[1] > max_width:
            log.info("histories.csv: %r left out (%d values per step > %d)", key, flat.shape[1], max_width)
            continue
        names += [key] if value.ndim == 1 else [key + "".join(f"[{i}]" for i in idx)
                                                for idx in np.ndindex(*value.shape[1:])]
        blocks.append(flat)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savetxt(path, np.hstack(blocks), delimiter=",", header=",".join(names), comments="", fmt="%.17g")
    return path


def write_columns_csv(path, times, columns: dict, fmt: str = "%.12e") -> Path:
    """Write a CSV table with the column ``t`` (``times``, (s,)) and then one column per entry of
    ``columns`` ({name: array (s,)}, in order); for the hand-picked histories of the case files."""
    path = Path(path)
    data = np.column_stack([np.asarray(times, dtype=float)] + [np.asarray(c, dtype=float) for c in columns.values()])
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savetxt(path, data, delimiter=",", header=",".join(["t"] + list(columns)), comments="", fmt=fmt)
    return path


def write_results(directory, results) -> Path:
    """A results directory: ``results.npz``/``results.json``, a ``.pvd`` series per flexible body and per
    rigid tree, the static scene ``scene.vtp`` (:func:`write_scene`) and ``histories.csv``."""
    directory = Path(directory)
    system = _system(results, "write_results")
    results.save(directory)
    if system.bodies:
        _write_body_series(directory, results, None, None, 1)
    _write_link_series(directory, results, None, 1)
    write_scene(directory, results)
    write_histories_csv(directory / "histories.csv", results)
    return directory


# ----------------------------------------------------------------------------------- conversion
def export(results_dir, fmt: str, out_dir=None) -> list[Path]:
    """Export a results directory written by :func:`write_results` (no system needed).

    Parameters
    ----------
    results_dir : path
        Directory with ``results.npz``/``results.json`` and ``.pvd`` series.
    fmt : {"pvd", "xdmf", "csv"}
        "csv": ``histories.csv`` (:func:`write_histories_csv`) from the saved results; "xdmf": each
        ``<name>.pvd`` series as ``<name>.xdmf`` + ``<name>.h5`` (:func:`pvd_to_xdmf`); "pvd": the series
        themselves, copied with their ``.vtu`` files when ``out_dir`` differs. With "xdmf" and "pvd" the
        static scene ``scene.vtp`` (:func:`write_scene`), when the directory has one, is copied along.
    out_dir : path, optional
        Output folder (default ``results_dir``; created).

    Returns
    -------
    list of Path
        Every file of the export, in ``out_dir``: "csv": ``[histories.csv]``; "xdmf": per series
        ``<name>.xdmf`` then ``<name>.h5``; "pvd": per series ``<name>.pvd`` then its ``.vtu`` files
        (those already there when ``out_dir`` is ``results_dir``: nothing is copied then); then
        ``scene.vtp`` if there is one.
    """
    if fmt not in FORMATS:
        raise FlexbodyError(f"export: unknown format {fmt!r}; valid formats: {', '.join(FORMATS)}")
    source = Path(results_dir)
    if not source.is_dir():
        raise FlexbodyError(f"export: results directory {str(source)!r} does not exist or is not a directory")
    out = source if out_dir is None else Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if fmt == "csv":
        from .results import Results
        return [write_histories_csv(out / "histories.csv", Results.load(source))]
    pvds = find_series(source)
    written = []
    for name, pvd in pvds.items():
        if fmt == "xdmf":
            xdmf = pvd_to_xdmf(pvd, out / f"{name}.xdmf")
            written += [xdmf, xdmf.with_suffix(".h5")]
        else:
            written += _copy_series(pvd, out)
    if (source / SCENE_FILE).is_file():
        written.append(_copy_file(source / SCENE_FILE, out / SCENE_FILE))
    return written


def find_series(directory) -> dict[str, Path]:
    """The ``.pvd`` series of ``directory`` by name (file stem), sorted; FlexbodyError if there is none."""
    directory = Path(directory)
    if not directory.is_dir():
        raise FlexbodyError(f"results directory {str(directory)!r} does not exist or is not a directory")
    found = {p.stem: p for p in sorted(directory.glob("*.pvd"))}
    if not found:
        nested = sorted({p.parent.relative_to(directory).as_posix() for p in directory.glob("*/**/*.pvd")})
        hint = (f"; its sub-directories {shortened(nested)} hold series: give one of them" if nested
                else " (write them with flexbody.io.write_results)")
        raise FlexbodyError(f"no .pvd series in {str(directory)!r}{hint}")
    return found


def read_pvd(path) -> list[tuple[float, Path]]:
    """The (time, ``.vtu`` path) entries of a ``.pvd`` collection, in file order; paths resolved
    relative to the ``.pvd``."""
    path = Path(path)
    try:
        root = ET.parse(path).getroot()
        entries = [(float(d.get("timestep", "0")), path.parent / d.get("file")) for d in root.iter("DataSet")]
    except (OSError, ET.ParseError, TypeError, ValueError) as exc:
        raise FlexbodyError(f"cannot read the series {str(path)!r}: {exc}") from exc
    if not entries:
        raise FlexbodyError(f"the series {str(path)!r} lists no data sets")
    missing = [str(f) for _, f in entries if not f.is_file()]
    if missing:
        raise FlexbodyError(f"the series {str(path)!r} refers to missing files: {missing[:3]}")
    return entries


def pvd_to_xdmf(pvd, xdmf) -> Path:
    """Convert a ``.pvd`` series of ``.vtu`` files with one topology to an XDMF time series
    (``xdmf`` + the ``.h5`` next to it) with meshio's TimeSeriesWriter.

    The XDMF mesh is written once: its points are those of the first step minus its ``displacement``
    where that point field exists (the undeformed mesh: ParaView's Warp By Vector on ``displacement``
    shows the deformed body), else the first step's points. Every step keeps all point data and cell
    data of its ``.vtu`` plus point data ``position`` (n_points, 3) [m], the step's own point
    coordinates (ParaView: Calculator ``position`` with "Coordinate Results").
    """
    import meshio

    pvd, xdmf = Path(pvd), Path(xdmf)
    entries = read_pvd(pvd)
    first = meshio.read(entries[0][1])
    points = first.points - first.point_data["displacement"] if "displacement" in first.point_data else first.points
    xdmf.parent.mkdir(parents=True, exist_ok=True)
    with _xdmf_writer(xdmf) as writer:
        writer.write_points_cells(points, [(c.type, c.data.copy()) for c in first.cells])
        for t, vtu in entries:
            mesh = first if vtu == entries[0][1] else meshio.read(vtu)
            _check_same_topology(first, mesh, vtu)
            writer.write_data(t, point_data={**mesh.point_data, "position": mesh.points},
                              cell_data={k: list(v) for k, v in mesh.cell_data.items()})
    return xdmf


def _check_same_topology(first, mesh, vtu: Path) -> None:
    same = len(first.points) == len(mesh.points) and len(first.cells) == len(mesh.cells) and all(
        a.type == b.type and np.array_equal(a.data, b.data) for a, b in zip(first.cells, mesh.cells))
    if not same:
        raise FlexbodyError(f"pvd_to_xdmf: {str(vtu)!r} has other cells than the first step of its series "
                            "(an XDMF time series keeps one topology)")


def _xdmf_writer_class():
    from meshio.xdmf import TimeSeriesWriter
    from meshio.xdmf.common import meshio_to_xdmf_type, meshio_type_to_xdmf_index, numpy_to_xdmf_dtype

    class Writer(TimeSeriesWriter):
        """meshio 5.3's TimeSeriesWriter with two fixes: the ``.h5`` file goes next to the ``.xdmf`` (not
        into the working directory), and a mixed topology with 2-node lines is written (meshio fails to
        prepend their node count)."""

        def __enter__(self):
            import h5py
            self.h5_filename = self.filename.with_suffix(".h5")
            self.h5_file = h5py.File(self.h5_filename, "w")
            return self

        def cells(self, cells, grid) -> None:
            if len(cells) == 1 or self.data_format != "HDF":
                return super().cells(cells, grid)
            for cell_type, _ in cells:
                if cell_type not in meshio_to_xdmf_type:
                    raise FlexbodyError(f"pvd_to_xdmf: cell type {cell_type!r} has no XDMF equivalent")
            rows = [np.column_stack([np.full(len(data), meshio_type_to_xdmf_index[kind])]
                                    + ([np.full(len(data), 2)] if kind == "line" else []) + [data]).ravel()
                    for kind, data in cells]
            flat = np.concatenate(rows).astype(np.int64)
            topo = ET.SubElement(grid, "Topology", TopologyType="Mixed",
                                 NumberOfElements=str(sum(len(d) for _, d in cells)))
            dt, prec = numpy_to_xdmf_dtype[flat.dtype.name]
            item = ET.SubElement(topo, "DataItem", DataType=dt, Dimensions=str(len(flat)),
                                 Format=self.data_format, Precision=prec)
            item.text = self.numpy_to_xml_string(flat)

    return Writer


def _xdmf_writer(path: Path):
    try:
        import h5py  # noqa: F401
    except ImportError as exc:
        raise FlexbodyError("export to XDMF needs h5py: pip install h5py") from exc
    return _xdmf_writer_class()(path)


def _copy_series(pvd: Path, out: Path) -> list[Path]:
    """Copy a ``.pvd`` and the files it lists (same relative paths) to ``out``; nothing if it is there.
    Returns the ``.pvd`` and its files in ``out``."""
    files = [_copy_file(vtu, out / vtu.relative_to(pvd.parent)) for _, vtu in read_pvd(pvd)]
    return [_copy_file(pvd, out / pvd.name)] + files


def _copy_file(source: Path, target: Path) -> Path:
    """Copy ``source`` to ``target`` (nothing when they are the same file); returns ``target``."""
    if not (target.exists() and target.resolve() == source.resolve()):
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
    return target


# ----------------------------------------------------------------------------------- helpers
def _system(results, who: str):
    if not hasattr(results, "system"):
        raise FlexbodyError(f"{who}: expected the Results of a run (fb.simulate, fb.solve_static or "
                            f"Results.load), got {type(results).__name__}")
    if results.system is None:
        raise FlexbodyError(f"{who}: results carry no system (loaded results need the system re-attached)")
    return results.system


def frame_stride(results, frames: int = 100) -> int:
    """The ``every`` of the series writers that gives at most about ``frames`` frames of ``results``."""
    return max(1, -(-results.n_steps // max(1, int(frames))))


def _steps(results, every, who: str) -> list[int]:
    """Every ``every``-th recorded step and the last."""
    if not (isinstance(every, (int, np.integer)) and every >= 1):
        raise FlexbodyError(f"{who}: every must be a positive integer, got {every!r}")
    if results.n_steps == 0:
        raise FlexbodyError(f"{who}: the results hold no recorded step")
    return [int(s) for s in np.unique(np.r_[np.arange(0, results.n_steps, int(every)), results.n_steps - 1])]


def _write_collection(path: Path, entries) -> Path:
    lines = ['<?xml version="1.0"?>',
             '<VTKFile type="Collection" version="0.1" byte_order="LittleEndian">', "  <Collection>"]
    lines += [f'    <DataSet timestep="{t:.10g}" group="" part="0" file={quoteattr(f)}/>' for t, f in entries]
    lines += ["  </Collection>", "</VTKFile>", ""]
    path.write_text("\n".join(lines))
    return path
