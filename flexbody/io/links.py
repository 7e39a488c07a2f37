"""Rigid links in VTK files: each tree as line cells from joint to joint (and to the markers of points on
its links) with vertex cells at the joints and the link frame's axes as point data, one VTU per step.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import FlexbodyError
from .frames import recorded_steps, results_system, write_collection


# ----------------------------------------------------------------------------------- rigid links
def link_mesh(tree, q: np.ndarray, markers: dict | None = None):
    """The links of ``tree`` at joint coordinates q (n_dofs,) as a :class:`meshio.Mesh` (world frame, m).

    Points: the link origins (joint frames after the joint motion) in link order, then one end point per
    leaf link (a link without children). Line cells join each link origin to its children's origins and
    each leaf origin to its end point: the farthest of the leaf's ``markers`` (link-frame offsets (k, 3),
    e.g. constrained link points or the centre of attached nodes), else its centre of mass, else a point
    0.1 m along its x axis. One vertex cell per link origin. Point data ``frame_x``, ``frame_y``,
    ``frame_z`` (n_points, 3): the link's axes (columns of R) at its origin, zero at end points; cell data
    ``link``: index of the link a cell belongs to. A joint with several coordinates is one segment from its
    parent to its link (a free flyer none).
    """
    import meshio

    kin = tree.kinematics(q)
    n = tree.n_links
    _, leaves = link_children(tree)
    points = link_points(tree, kin, markers, leaves)
    lines = _joint_lines(tree) + [(i, n + k) for k, i in enumerate(leaves)]
    line_link = np.array([i for i, _ in lines], dtype=np.int64)
    frames = np.zeros((3, len(points), 3))
    frames[:, :n] = kin.R.transpose(2, 0, 1)  # frames[a, i] = R_i[:, a]
    return meshio.Mesh(
        points,
        [("line", np.array(lines, dtype=np.int64).reshape(-1, 2)), ("vertex", np.arange(n, dtype=np.int64)[:, None])],
        point_data={"frame_x": frames[0], "frame_y": frames[1], "frame_z": frames[2]},
        cell_data={"link": [line_link, np.arange(n, dtype=np.int64)]},
    )


def _joint_lines(tree) -> list[tuple[int, int]]:
    """(parent origin, link origin) segments: one per joint. A joint with several coordinates (its massless
    parts, :mod:`flexbody.rigid.joints`) is one segment from its parent to the link; a free flyer none (it is
    no material connection)."""
    from ..rigid.joints import FreeFlyer

    lines = []
    for link in tree.links:
        if link.parent is None or (link.compound is not None and len(link.coordinates) <= 1):
            continue  # the ground, or a massless part of a joint
        first = tree.links[link.index - len(link.coordinates) + 1] if link.compound is not None else link
        if first.parent is not None and not isinstance(link.compound, FreeFlyer):
            lines.append((first.parent.index, link.index))
    return lines


def link_children(tree) -> tuple[dict, list]:
    """({link index: indices of its children}, indices of the leaf links) of ``tree``."""
    n = tree.n_links
    children = {i: [l.index for l in tree.links if l.parent is not None and l.parent.index == i] for i in range(n)}
    return children, [i for i in range(n) if not children[i]]


def link_points(tree, kin, markers, leaves) -> np.ndarray:
    """The points of :func:`link_mesh` (link origins, then leaf end points) at the kinematics ``kin``."""
    tips = np.array(
        [kin.p[i] + kin.R[i] @ _leaf_offset(tree.links[i], (markers or {}).get(tree.links[i])) for i in leaves]
    ).reshape(-1, 3)
    return np.vstack([kin.p, tips])


def write_link_vtu(path, tree, q: np.ndarray, markers: dict | None = None) -> Path:
    """Write the links of ``tree`` at joint coordinates q (n_dofs,) to a ``.vtu`` file (see :func:`link_mesh`)."""
    import meshio

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    meshio.write(path, link_mesh(tree, q, markers), file_format="vtu", binary=True)
    return path


def write_link_series(directory, results, tree, every) -> list[Path]:
    directory = Path(directory)
    system = results_system(results, "write_link_pvd")
    trees = list(getattr(system, "trees", ()))
    if tree is not None:
        trees = [t for t in trees if t is tree or t.name == tree]
        if not trees:
            raise FlexbodyError(
                f"write_link_pvd: no rigid tree {getattr(tree, 'name', tree)!r} in the system; "
                f"trees: {[t.name for t in system.trees]}"
            )
    steps = recorded_steps(results, every, "write_link_pvd")
    markers = link_markers(system)
    paths = []
    for t in trees:
        columns = tree_slice(results, system, t)
        entries = []
        for step in steps:
            rel = f"{t.name}_{step:04d}.vtu"
            write_link_vtu(directory / rel, t, results.q[step, columns], markers)
            entries.append((float(results.times[step]), rel))
        paths.append(write_collection(directory / f"{t.name}.pvd", entries))
    return paths


def _leaf_offset(link, markers) -> np.ndarray:
    """End point (3,) of a leaf link in its frame [m]: farthest marker, else com, else 0.1 m along x."""
    pts = np.asarray(markers if markers else np.zeros((0, 3)), dtype=float).reshape(-1, 3)
    if np.linalg.norm(pts, axis=1).max(initial=0.0) > 0:
        return pts[np.argmax(np.linalg.norm(pts, axis=1))]
    if np.linalg.norm(link.com) > 0:
        return np.asarray(link.com, dtype=float)
    return np.array([0.1, 0.0, 0.0])


def link_markers(system) -> dict:
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


def tree_slice(results, system, tree) -> slice:
    if tree.name in results.slices:
        return results.slices[tree.name]
    return system.slices[tree]
