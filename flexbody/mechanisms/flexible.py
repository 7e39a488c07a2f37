"""Ready-made rigid–flexible systems used by the cases, tests and benchmarks of the flexible dynamics.

- :func:`flexible_pendulum`  a solid bar pinned (spherical joint) at a corner node to the ground;
- :func:`plate_pendulum`  a thin plate pinned at a corner, the ANCF-brick plate benchmark;
- :func:`cantilever`  a solid beam clamped at x = 0 (optionally with a tip load);
- :func:`arm_with_beam`  a two-link arm (vertical plane) carrying a flexible beam on its flange,
  joints actuated, beam nodes passive [DE 6.2, Fig. 16];
- :func:`robot_with_tool`  a robot from its URDF holding a flexible box (a bar, a blade) at a link's frame.

Their 8-node bricks take incompatible modes (``locking="auto"``, the default of :class:`~flexbody.FlexibleBody`),
which do not lock in bending; ``locking=None`` gives plain trilinear bricks, which do (a WARNING says so on slender
elements). 27-node bricks (``order=2``) do not lock on their default Gauss rule and cost less.
"""

from __future__ import annotations

from collections.abc import Sequence
from os import PathLike

import numpy as np
from numpy.typing import ArrayLike

from ..constraints.attachments import AttachNodes, pin
from ..constraints.base import Constraint, Fix
from ..constraints.couplings import JointDriver
from ..errors import ModelError
from ..fem.flexible_body import FlexibleBody
from ..fem.hex_mesh import box
from ..fem.loads import Gravity, Load, NodalForce
from ..fem.materials import StVenantKirchhoff
from ..reduced.basis import craig_bampton
from ..reduced.body import ReducedBody
from ..rigid.anchors import Ground
from ..rigid.joints import Revolute
from ..rigid.tree import RigidTree
from ..rigid.urdf import load_urdf
from ..system.description import System

__all__ = ["flexible_pendulum", "plate_pendulum", "cantilever", "arm_with_beam", "robot_with_tool", "TOOL_AXES"]

_GRAVITY = (0.0, 0.0, -9.81)


def _material(young, poisson, density, damping):
    return StVenantKirchhoff(young=young, poisson=poisson, density=density, damping=damping)


def flexible_pendulum(
    size: Sequence[float] = (1.0, 0.05, 0.05),
    divisions: Sequence[int] = (10, 1, 1),
    *,
    order: int = 1,
    young: float = 5e7,
    poisson: float = 0.3,
    density: float = 1000.0,
    damping: float = 0.0,
    gravity: ArrayLike = _GRAVITY,
    locking: str | None = "auto",
) -> System:
    """A bar along +x (corner at the origin) pinned at node 0 to the ground, starting horizontal at rest.

    Body ``"bar"``; constraint ``pin_bar_node0`` (3 rows); gravity load. Units SI. ``locking``: see the module.
    """
    mesh = box(size=size, divisions=divisions, order=order)
    bar = FlexibleBody("bar", mesh, _material(young, poisson, density, damping), locking=locking)
    return System([bar], [pin(bar, 0, Ground(mesh.points[0]))], loads=[Gravity(bar, gravity)])


def plate_pendulum(
    size: Sequence[float] = (0.6, 0.3, 0.01),
    divisions: Sequence[int] = (8, 4, 1),
    *,
    order: int = 1,
    young: float = 1e5,
    poisson: float = 0.3,
    density: float = 7810.0,
    damping: float = 0.01,
    gravity: ArrayLike = _GRAVITY,
    locking: str | None = "auto",
) -> System:
    """A horizontal plate (xy-plane, corner at the origin) pinned by a spherical joint at the corner node 0
    and released under gravity (−z): the ANCF-brick plate pendulum (0.6 × 0.3 × 0.01 m, 8 × 4 × 1,
    ρ 7810 kg/m³, E 1e5 Pa, ν 0.3, Kelvin–Voigt retardation time ``damping`` [s]). Body ``"plate"``; ``locking``:
    see the module."""
    mesh = box(size=size, divisions=divisions, order=order)
    plate = FlexibleBody("plate", mesh, _material(young, poisson, density, damping), locking=locking)
    return System([plate], [pin(plate, 0, Ground(mesh.points[0]))], loads=[Gravity(plate, gravity)])


def cantilever(
    size: Sequence[float] = (1.0, 0.05, 0.05),
    divisions: Sequence[int] = (20, 2, 2),
    *,
    order: int = 1,
    young: float = 2e9,
    poisson: float = 0.0,
    density: float = 7800.0,
    damping: float = 0.0,
    tip_force: ArrayLike | None = None,
    gravity: ArrayLike | None = None,
    locking: str | None = "auto",
) -> System:
    """A beam along +x clamped on its face x = 0 (``Fix`` on set "x0"), optional total tip force
    (3,) [N] spread over the face x = L and optional gravity. Body ``"beam"``."""
    mesh = box(size=size, divisions=divisions, order=order, origin=(0.0, -size[1] / 2, -size[2] / 2))
    beam = FlexibleBody("beam", mesh, _material(young, poisson, density, damping), locking=locking)
    loads: list[Load] = []
    if tip_force is not None:
        loads.append(NodalForce(beam, "x1", total=np.asarray(tip_force, dtype=float)))
    if gravity is not None:
        loads.append(Gravity(beam, gravity))
    return System([beam], [Fix(beam, "x0", name="clamp")], loads=loads)


def arm_with_beam(
    *,
    lengths: Sequence[float] = (0.5, 0.4),
    masses: Sequence[float] = (2.0, 1.0),
    beam_size: Sequence[float] = (0.6, 0.04, 0.04),
    divisions: Sequence[int] = (12, 2, 2),
    order: int = 1,
    young: float = 7e9,
    poisson: float = 0.3,
    density: float = 2700.0,
    damping: float = 0.0,
    q0: ArrayLike = (0.0, 0.0),
    locked: bool = False,
    gravity: ArrayLike = _GRAVITY,
    locking: str | None = "auto",
) -> System:
    """A two-link arm moving in the vertical xz-plane (revolute joints about y, tree ``"arm"``, links
    ``"l1"``, ``"l2"``) with a flexible beam (body ``"beam"``) whose face x = 0 is attached rigidly to the
    flange at the tip of ``l2`` [DE 6.2]. Uniform rods of the given lengths [m] and masses [kg]. At
    q = 0 the arm and the beam lie along +x; ``q0`` (2,) sets the initial joint angles [rad], and the
    beam is placed on the flange at that pose. ``locked`` holds both joints at q0 (two
    :class:`~flexbody.constraints.couplings.JointDriver` rows), which makes the beam a cantilever clamped at the flange.
    Both joints are actuated; the beam's nodes are passive. ``locking`` is the beam's 8-node formulation
    (:class:`~flexbody.FlexibleBody`).
    """
    l1, l2 = (float(x) for x in lengths)
    m1, m2 = (float(x) for x in masses)
    if min(l1, l2, m1, m2) <= 0:
        raise ModelError(f"arm_with_beam: lengths and masses must be positive, got {lengths}, {masses}")
    y = Revolute(axis=(0.0, 1.0, 0.0))
    tree = RigidTree("arm", gravity=gravity)
    link1 = tree.add_link("l1", None, y, mass=m1, com=(l1 / 2, 0, 0), inertia=_rod(m1, l1))
    link2 = tree.add_link("l2", "l1", y, origin=(l1, 0, 0), mass=m2, com=(l2 / 2, 0, 0), inertia=_rod(m2, l2))
    _lx, ly, lz = beam_size
    mesh = box(size=beam_size, divisions=divisions, order=order, origin=(0.0, -ly / 2, -lz / 2))
    q0 = np.asarray(q0, dtype=float)
    kin = tree.kinematics(q0)
    flange = kin.p[1] + kin.R[1] @ np.array([l2, 0.0, 0.0])
    mesh = mesh.with_points(mesh.points @ kin.R[1].T + flange)  # beam on the flange at q0
    beam = FlexibleBody("beam", mesh, _material(young, poisson, density, damping), locking=locking)
    constraints: list[Constraint] = [AttachNodes(beam, "x0", link2, name="flange")]
    if locked:
        constraints += [JointDriver(link1, float(q0[0]), name="lock1"), JointDriver(link2, float(q0[1]), name="lock2")]
    return System([tree, beam], constraints, loads=[Gravity(beam, gravity)], actuators=[link1, link2], q0=q0)


TOOL_AXES = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])
"""The tool's x, y, z axes (columns) in its link's frame: x along the link's z (out of a flange), y along its x, z
along its y."""


def arm_with_reduced_beam(n_modes: int, **options) -> System:
    """:func:`arm_with_beam` (``options`` as there, but not ``locked``) with its beam reduced: a
    :class:`~flexbody.ReducedBody` ``"beam"`` on link ``"l2"`` whose basis is the beam's face x = 0 clamped and
    ``n_modes`` fixed-interface (Craig–Bampton) modes — no constraint rows (case 24's model, case 33's MPC model)."""
    if options.get("locked"):
        raise ModelError("arm_with_reduced_beam: a locked arm is not taken (its rows would hold the joints)")
    full = arm_with_beam(**options)
    tree, beam = full.trees[0], full.bodies[0]
    body = ReducedBody("beam", craig_bampton(beam, "x0", n_modes), tree.link("l2"))
    return System([tree, body], q0=np.asarray(options.get("q0", (0.0, 0.0)), dtype=float))


def robot_with_tool(
    robot: str | PathLike,
    link: str,
    q0: ArrayLike,
    size: Sequence[float],
    divisions: Sequence[int],
    *,
    name: str = "tool",
    order: int = 1,
    young: float = 3e9,
    poisson: float = 0.3,
    density: float = 1400.0,
    damping: float = 0.0,
    gravity: float = 9.81,
    locking: str | None = "auto",
) -> System:
    """The robot of the URDF file ``robot`` (:func:`~flexbody.load_urdf`, gravity [m/s²] along −z) holding, at the
    frame of ``link`` at the joint angles ``q0`` [rad], a flexible box ``name`` of ``size`` (length, width, height)
    [m] in ``divisions`` bricks of ``order``: its face x = 0 centred on the frame's origin and attached to the link
    (``AttachNodes``, constraint ``"flange"``), its axes :data:`TOOL_AXES` in the link's frame (its length along the
    link's z). Every joint actuated; the box's nodes passive; gravity on the box. Material: St Venant–Kirchhoff
    (Pa, kg/m³, Kelvin–Voigt ``damping`` [s])."""
    tree = load_urdf(robot, gravity=(0.0, 0.0, -float(gravity)), visuals=False)
    holder = tree.link(link)
    kin = tree.kinematics(np.asarray(q0, dtype=float))
    R, p = kin.R[holder.index], kin.p[holder.index]
    _length, width, height = size
    mesh = box(size=size, divisions=divisions, order=order, origin=(0.0, -width / 2, -height / 2))
    mesh = mesh.with_points(mesh.points @ (R @ TOOL_AXES).T + p)
    tool = FlexibleBody(name, mesh, _material(young, poisson, density, damping), locking=locking)
    joints = [item for item in tree.links if item.coordinate is not None]
    attach = AttachNodes(tool, "x0", holder, name="flange")
    loads: list[Load] = [Gravity(tool, (0.0, 0.0, -float(gravity)))]
    return System([tree, tool], [attach], loads=loads, actuators=joints, q0=q0)


def _rod(mass: float, length: float) -> np.ndarray:
    i = mass * length**2 / 12.0
    return np.array([1e-4 * i, i, i])
