"""The contacts of a run for ParaView: one ``contacts_NNNN.vtu`` per recorded step and ``contacts.pvd``.

Each contact (the compliant ones, :class:`~flexbody.constraints.compliant_contact.CompliantContact`, in the order of
the system's force elements, then the unilateral ones, :class:`~flexbody.constraints.unilateral_contact.Contact`) is
a vertex at the point that touches (the anchor, or the ball's point nearest the surface), with point data ``force``
(3,) [N] (normal plus friction, on the body; ParaView's Glyph filter draws it as arrows), ``normal`` (3,) (the
surface's outward unit normal), ``normal_force`` [N], ``friction_force`` (3,) [N], ``gap`` [m] (negative:
penetration) and ``slip_speed`` [m/s]: the run's recorded rows (for a unilateral contact, the forces of the state's
step), or, for compliant contacts alone, evaluated at the state.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..constraints.contact_points import CONTACT_HISTORIES
from ..errors import FlexbodyError
from .frames import recorded_steps, results_system, write_collection

__all__ = ["write_contact_pvd", "contact_mesh", "HISTORIES"]


HISTORIES = CONTACT_HISTORIES
"""The recorded contact histories (:data:`~flexbody.constraints.contact_points.CONTACT_HISTORIES`)."""


def _contacts(system) -> list:
    """The compliant contacts (force elements), then the unilateral ones, in the order a run records them."""
    forces = getattr(system, "forces", None)
    return [*(forces.contacts if forces else []), *getattr(system, "contacts", [])]


def contact_mesh(system, t: float, q: np.ndarray, v: np.ndarray | None = None, recorded: dict | None = None):
    """The contacts of the assembled ``system`` at the state (t, q, v) as a :class:`meshio.Mesh` (module
    docstring); None when the system has no contact. ``recorded``: the state's row of each of :data:`HISTORIES`
    (the forces of unilateral contacts are the impulses of a run's step, so they come from its record); without it
    the compliant contacts' forces are evaluated at the state, and a system with unilateral contacts is refused."""
    import meshio

    contacts = _contacts(system)
    if not contacts:
        return None
    ws = system.workspace(t, q, np.zeros_like(q) if v is None else v)
    if recorded is None:
        if getattr(system, "contacts", []):
            raise FlexbodyError(
                "contact_mesh: the forces of unilateral contacts are those a run recorded; pass recorded= (a state's "
                "row of its contact histories) or use write_contact_pvd on the results"
            )
        rows = [contact.report(ws) for contact in contacts]
        recorded = dict(zip(HISTORIES, (np.array(column) for column in zip(*rows))))
    points, normals = zip(*(contact.contact_point(ws) for contact in contacts))
    normals_ = np.array(normals)
    normal_forces = np.asarray(recorded["contact_normal_force"], dtype=float)
    friction = np.asarray(recorded["contact_friction_force"], dtype=float)
    return meshio.Mesh(
        np.array(points),
        [("vertex", np.arange(len(contacts), dtype=np.int64)[:, None])],
        point_data={
            "force": normal_forces[:, None] * normals_ + friction,
            "normal": normals_,
            "normal_force": normal_forces,
            "friction_force": friction,
            "gap": np.asarray(recorded["contact_gap"], dtype=float),
            "slip_speed": np.asarray(recorded["contact_slip_speed"], dtype=float),
        },
    )


def write_contact_pvd(directory, results, every: int = 1) -> Path | None:
    """Write the contacts of ``results`` (every ``every``-th recorded step and the last) as ``contacts_NNNN.vtu`` and
    ``contacts.pvd`` in ``directory``; None (nothing written) when its system has no contact."""
    import meshio

    system = results_system(results, "write_contact_pvd")
    if not _contacts(system):
        return None
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    has_v = results.v is not None and len(results.v) == results.n_steps
    recorded_all = all(len(results.histories.get(key, ())) == results.n_steps for key in HISTORIES)
    entries = []
    for step in recorded_steps(results, every, "write_contact_pvd"):
        rel = f"contacts_{step:04d}.vtu"
        recorded = {key: results.histories[key][step] for key in HISTORIES} if recorded_all else None
        v = results.v[step] if has_v else None
        mesh = contact_mesh(system, float(results.times[step]), results.q[step], v, recorded)
        meshio.write(directory / rel, mesh, file_format="vtu", binary=True)
        entries.append((float(results.times[step]), rel))
    return write_collection(directory / "contacts.pvd", entries)
