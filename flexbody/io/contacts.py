"""The contacts of a run for ParaView: one ``contacts_NNNN.vtu`` per recorded step and ``contacts.pvd``.

Each contact (:class:`~flexbody.constraints.compliant_contact.CompliantContact`, in the order of the system's force
elements) is a vertex at the point that touches (the anchor, or the ball's point nearest the surface), with point
data ``force`` (3,) [N] (normal plus friction, on the body; ParaView's Glyph filter draws it as arrows),
``normal`` (3,) (the surface's outward unit normal), ``normal_force`` [N], ``friction_force`` (3,) [N], ``gap`` [m]
(negative: penetration) and ``slip_speed`` [m/s], evaluated from the recorded state.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .frames import recorded_steps, results_system, write_collection

__all__ = ["write_contact_pvd", "contact_mesh"]


def _contacts(system) -> list:
    forces = getattr(system, "forces", None)
    return forces.contacts if forces else []


def contact_mesh(system, t: float, q: np.ndarray, v: np.ndarray | None = None):
    """The contacts of the assembled ``system`` at the state (t, q, v) as a :class:`meshio.Mesh` (module
    docstring); None when the system has no contact."""
    import meshio

    contacts = _contacts(system)
    if not contacts:
        return None
    ws = system.workspace(t, q, np.zeros_like(q) if v is None else v)
    points, normals, gaps, normal_forces, friction, slip = [], [], [], [], [], []
    for contact in contacts:
        point, normal = contact.contact_point(ws)
        gap, f_n, f_t, speed = contact.report(ws)
        points.append(point)
        normals.append(normal)
        gaps.append(gap)
        normal_forces.append(f_n)
        friction.append(f_t)
        slip.append(speed)
    normals_, friction_ = np.array(normals), np.array(friction)
    normal_forces_ = np.array(normal_forces)
    return meshio.Mesh(
        np.array(points),
        [("vertex", np.arange(len(contacts), dtype=np.int64)[:, None])],
        point_data={
            "force": normal_forces_[:, None] * normals_ + friction_,
            "normal": normals_,
            "normal_force": normal_forces_,
            "friction_force": friction_,
            "gap": np.array(gaps),
            "slip_speed": np.array(slip),
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
    entries = []
    for step in recorded_steps(results, every, "write_contact_pvd"):
        rel = f"contacts_{step:04d}.vtu"
        mesh = contact_mesh(system, float(results.times[step]), results.q[step], results.v[step] if has_v else None)
        meshio.write(directory / rel, mesh, file_format="vtu", binary=True)
        entries.append((float(results.times[step]), rel))
    return write_collection(directory / "contacts.pvd", entries)
