"""Robots from URDF files: :func:`load_urdf` reads a robot description with yourdfpy and builds a
:class:`~flexbody.rigid.tree.RigidTree` with the same kinematics and inertias.

URDF and flexbody place frames alike: a joint's ``origin`` (xyz, rpy = fixed-axis roll, pitch, yaw, i.e.
R = R_z(y) R_y(p) R_x(r)) is the pose of the joint frame in the parent link's frame, the child link's frame is
the joint frame moved by the joint (rotation about / translation along ``axis``, in the joint frame), and at
q = 0 they coincide. A link's ``inertial`` block gives its mass, the centre of mass and the axes of its
inertia tensor (``origin``) in the link frame; flexbody takes the centre of mass as it is and the tensor
about it turned into link axes, I_link = R I Rᵀ.

Each URDF link becomes a flexbody link of the same name (the root link on the ground by a fixed joint, or by
a :class:`FreeFlyer` with ``floating_base=True``), in depth-first order from the root, so the joint coordinates
are numbered as the joints appear along the tree. Joint types: ``revolute`` and ``continuous`` →
:class:`Revolute`, ``prismatic`` → :class:`Prismatic`, ``fixed`` → :class:`Fixed`, ``floating`` →
:class:`FreeFlyer`, ``planar`` → :class:`Planar` (``axis`` is the plane's normal). ``mimic`` joints are loaded as
independent joints (tie them with :class:`flexbody.constraints.couplings.Gear` if wanted). Limits are kept
in ``tree.limits`` (by link name) and visual meshes in ``tree.visuals`` for views.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike

from ..errors import ModelError
from .joints import Fixed, FreeFlyer, Planar, Prismatic, Revolute
from .link import checked_inertia
from .tree import RigidTree

__all__ = ["load_urdf", "JointLimits", "VisualMesh"]


@dataclass(frozen=True)
class JointLimits:
    """Limits of a URDF joint: position ``lower``/``upper`` [rad or m] (±inf when absent, e.g. a continuous
    joint), ``velocity`` [rad/s or m/s] and ``effort`` [N·m or N] (inf when absent); ``joint`` its URDF name."""

    joint: str
    lower: float
    upper: float
    velocity: float
    effort: float


@dataclass(frozen=True)
class VisualMesh:
    """A visual mesh of a link: the resolved file ``path``, its pose ``origin`` (4, 4) in the link frame [m] and
    ``scale`` (3,)."""

    path: Path
    origin: np.ndarray
    scale: np.ndarray


def load_urdf(
    path: str | os.PathLike[str],
    *,
    name: str | None = None,
    gravity: ArrayLike = (0.0, 0.0, -9.81),
    package_dirs: Sequence[str | os.PathLike[str]] = (),
    visuals: bool = True,
    floating_base: bool = False,
) -> RigidTree:
    """The :class:`RigidTree` of the robot described by the URDF file ``path``.

    Parameters
    ----------
    path : str or Path
        The URDF file.
    name : str, optional
        The tree's name (default: the robot's name in the file).
    gravity : (3,) [m/s²]
        World gravity of the tree.
    package_dirs : sequence of paths
        Where ``package://NAME/...`` mesh URIs are looked for (as ``DIR/NAME/...``), before the folders above
        the URDF file (one of them named NAME, or holding NAME).
    visuals : bool
        Keep the visual meshes (``tree.visuals``); a mesh file that cannot be found is then an error.
    floating_base : bool
        Attach the root link to the ground by a :class:`FreeFlyer` (its six coordinates ``ROOT.tx`` …
        ``ROOT.rz`` come first: position [m] and rotation vector [rad] of the root link frame in the world)
        instead of a fixed joint: a legged robot, a humanoid, a drone.

    Raises
    ------
    ModelError
        The file is missing or not a URDF, the joints do not form one tree, a joint type is not supported,
        an inertia is not physical (naming the link), or a visual mesh is missing (naming the link and file).
    """
    path = Path(path)
    robot = _parse(path)
    links = {link.name: link for link in robot.links}
    children: dict[str, list] = {}
    parents = {}
    for joint in robot.joints:
        if joint.child in parents:
            raise ModelError(f"URDF {path.name}: link {joint.child!r} is the child of two joints")
        parents[joint.child] = joint
        children.setdefault(joint.parent, []).append(joint)
        for end in (joint.parent, joint.child):
            if end not in links:
                raise ModelError(
                    f"URDF {path.name}: joint {joint.name!r} names link {end!r}, which the file does not define"
                )
    roots = [link for link in links if link not in parents]
    if len(roots) != 1:
        loop = _loop(parents, next(iter(links), None)) if not roots else []
        raise ModelError(
            f"URDF {path.name}: expected one root link (no parent joint), found {roots}"
            + (f"; the joints {loop} close a loop (a URDF is a tree: close loops with constraints)" if loop else "")
        )
    tree = RigidTree(name or robot.name or path.stem, gravity=gravity)
    search = [Path(d) for d in package_dirs] + list(path.resolve().parents)
    stack = [(roots[0], None)]
    while stack:  # depth first, joints in file order
        link_name, joint = stack.pop()
        _add_link(tree, links[link_name], joint, path.name, floating_base)
        if visuals:
            tree.visuals[link_name] = _visual_meshes(links[link_name], path, search)
        stack.extend((j.child, j) for j in reversed(children.get(link_name, [])))
    missing = sorted(set(links) - {link.name for link in tree.links})
    if missing:
        loop = _loop(parents, missing[0])
        raise ModelError(
            f"URDF {path.name}: links not connected to the root {roots[0]!r}: {missing}"
            + (f"; the joints {loop} close a loop (a URDF is a tree: close loops with constraints)" if loop else "")
        )
    _check_welded_inertias(tree, path.name)
    return tree


def _check_welded_inertias(tree: RigidTree, file: str) -> None:
    """Each body of links welded by fixed joints has a physical inertia about its centre of mass (a single
    link of it need not: robot files give placeholder links incomplete inertias)."""
    groups: dict = {}
    for link in tree.links:
        if link.mass == 0.0 and not link.inertia.any():
            continue
        top, R, p = link, np.eye(3), np.zeros(3)  # pose of the link in its group's top link
        while isinstance(top.joint, Fixed) and top.parent is not None:
            R, p = top.placement_rotation @ R, top.placement_rotation @ p + top.placement_origin
            top = top.parent
        groups.setdefault(top.name, []).append((link, R, p))
    for members in groups.values():
        mass = sum(l.mass for l, _, _ in members)
        centres = [R @ l.com + p for l, R, p in members]
        c = sum(l.mass * x for (l, _, _), x in zip(members, centres)) / mass if mass > 0 else np.zeros(3)
        inertia = np.zeros((3, 3))
        for (l, R, _), x in zip(members, centres):
            d = x - c
            inertia += R @ l.inertia @ R.T + l.mass * (d @ d * np.eye(3) - np.outer(d, d))
        names = [l.name for l, _, _ in members]
        try:
            checked_inertia(inertia, "")
        except ModelError:
            eig = np.linalg.eigvalsh(inertia)
            raise ModelError(
                f"URDF {file}: link {names[0]!r}"
                + (f" (welded by fixed joints to {names[1:]})" if len(names) > 1 else "")
                + f": inertia is not physical (principal moments {eig} "
                "kg m² about the centre of mass: must be non-negative and satisfy the triangle "
                "inequality)"
            ) from None


def _parse(path: Path):
    if not path.is_file():
        raise ModelError(f"URDF file {str(path)!r} does not exist")
    import xml.etree.ElementTree as ElementTree

    try:  # yourdfpy recovers from broken XML: refuse it first
        ElementTree.parse(path)
    except ElementTree.ParseError as exc:
        raise ModelError(f"URDF file {path.name!r} could not be read: not well-formed XML ({exc})") from exc
    import yourdfpy

    try:
        urdf = yourdfpy.URDF.load(
            str(path),
            load_meshes=False,
            build_scene_graph=False,
            load_collision_meshes=False,
            build_collision_scene_graph=False,
        )
    except Exception as exc:  # yourdfpy raises several kinds on a bad file
        raise ModelError(f"URDF file {path.name!r} could not be read: {type(exc).__name__}: {exc}") from exc
    return urdf.robot


def _add_link(tree: RigidTree, link, joint, file: str, floating_base: bool) -> None:
    """Add URDF ``link`` (attached by URDF ``joint``, None for the root) to ``tree``."""
    mass, com, inertia = 0.0, np.zeros(3), np.zeros((3, 3))
    if link.inertial is not None:
        origin = np.eye(4) if link.inertial.origin is None else np.asarray(link.inertial.origin, dtype=float)
        R = origin[:3, :3]
        mass, com = float(link.inertial.mass or 0.0), origin[:3, 3]
        inertia = R @ np.asarray(link.inertial.inertia, dtype=float) @ R.T  # about the com, link axes
    if joint is None:
        tree.add_link(
            link.name,
            None,
            FreeFlyer() if floating_base else Fixed(),
            mass=mass,
            com=com,
            inertia=inertia,
            check_inertia=False,
        )
        return
    pose = np.eye(4) if joint.origin is None else np.asarray(joint.origin, dtype=float)
    tree.add_link(
        link.name,
        joint.parent,
        _joint(joint, file),
        origin=pose[:3, 3],
        rotation=pose[:3, :3],
        mass=mass,
        com=com,
        inertia=inertia,
        check_inertia=False,
    )
    if joint.type not in ("fixed", "floating", "planar"):
        limit = joint.limit
        tree.limits[link.name] = JointLimits(
            joint.name,
            _number(getattr(limit, "lower", None), -np.inf) if joint.type != "continuous" else -np.inf,
            _number(getattr(limit, "upper", None), np.inf) if joint.type != "continuous" else np.inf,
            _number(getattr(limit, "velocity", None), np.inf),
            _number(getattr(limit, "effort", None), np.inf),
        )


def _loop(parents: dict, start) -> list:
    """The names of the joints of the loop reached by following parent joints up from link ``start`` (empty when
    the walk ends at a link without a parent joint)."""
    seen: list = []
    link = start
    while link in parents and link not in seen:
        seen.append(link)
        link = parents[link].parent
    if link not in seen:
        return []
    cycle = seen[seen.index(link) :]
    return [parents[name].name for name in cycle]


def _joint(joint, file: str):
    """The flexbody joint of URDF ``joint``; a joint the kinds refuse (an axis of zero length, …) is named with its
    links."""
    axis = np.array([1.0, 0.0, 0.0]) if joint.axis is None else np.asarray(joint.axis, dtype=float)
    kinds = {"revolute": Revolute, "continuous": Revolute, "prismatic": Prismatic, "planar": Planar}
    if joint.type in kinds:
        try:
            return kinds[joint.type](axis)
        except ModelError as exc:
            raise ModelError(
                f"URDF {file}: joint {joint.name!r} (parent {joint.parent!r}, child {joint.child!r}): {exc}"
            ) from exc
    if joint.type == "fixed":
        return Fixed()
    if joint.type == "floating":
        return FreeFlyer()
    raise ModelError(
        f"URDF {file}: joint {joint.name!r} is of type {joint.type!r}; supported: revolute, "
        "continuous, prismatic, fixed, floating, planar"
    )


def _number(value, default: float) -> float:
    return default if value is None else float(value)


def _visual_meshes(link, urdf: Path, search: list[Path]) -> list[VisualMesh]:
    out = []
    for visual in link.visuals:
        mesh = getattr(visual.geometry, "mesh", None)
        if mesh is None:
            continue
        found = _resolve(mesh.filename, urdf, search)
        if found is None:
            raise ModelError(
                f"URDF {urdf.name}: visual mesh {mesh.filename!r} of link {link.name!r} not found "
                "(pass package_dirs=..., or visuals=False to load without meshes)"
            )
        origin = np.eye(4) if visual.origin is None else np.asarray(visual.origin, dtype=float)
        scale = np.ones(3) if mesh.scale is None else np.broadcast_to(np.asarray(mesh.scale, float), (3,)).copy()
        out.append(VisualMesh(found, origin, scale))
    return out


def _resolve(uri: str, urdf: Path, search: list[Path]) -> Path | None:
    """The file a mesh URI names: ``package://NAME/rest`` in DIR/NAME/rest or in a folder NAME among
    ``search``; ``file://`` and plain paths (relative to the URDF's folder)."""
    if uri.startswith("package://"):
        package, _, rest = uri[len("package://") :].partition("/")
        for folder in search:
            for candidate in (folder / package / rest, folder / rest if folder.name == package else None):
                if candidate is not None and candidate.is_file():
                    return candidate
        return None
    candidate = Path(uri[len("file://") :] if uri.startswith("file://") else uri)
    candidate = candidate if candidate.is_absolute() else urdf.parent / candidate
    return candidate if candidate.is_file() else None
