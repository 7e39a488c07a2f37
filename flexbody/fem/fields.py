"""Per-step fields of flexible bodies: displacement, velocity, strain and stress on the mesh.

At a state (q, v) of a body with n nodes and m elements the fields are

=================================  ===========  =====================================================
name                               shape        meaning
=================================  ===========  =====================================================
``displacement``                   (n, 3)       x − X, nodal position minus mesh point [m], world frame
``velocity``                       (n, 3)       ẋ, nodal velocity [m/s], world frame (dynamic runs)
``green_lagrange_strain``          (n, 9)       E = ½(FᵀF − I), row-major 3×3, node average of ``cell_…``
``cauchy_stress``                  (n, 9)       σ = F S Fᵀ / J [Pa], row-major 3×3, node average
``von_mises``                      (n,)         √(3/2 σ':σ') [Pa], node average
``cell_green_lagrange_strain``     (m, 9)       E averaged over the element's Gauss points (volume weights)
``cell_cauchy_stress``             (m, 9)       σ element average [Pa]
``cell_von_mises``                 (m,)         von Mises stress element average [Pa]
=================================  ===========  =====================================================

(:meth:`flexbody.fem.flexible_body.FlexibleBody.cell_fields` and ``nodal_average``; the strain and stress of
[DE 5] with the incompatible modes included.) The ParaView export writes the node fields as point data and
the ``cell_…`` fields, without the prefix, as cell data. :data:`FIELD_UNITS` holds the quantity and unit
of each name (the one table of them); :func:`describe` turns a name into a label such as
"von Mises stress [Pa]" or "displacement magnitude [m]".

While a run records them (``simulate(..., fields=True)``) they travel with the other histories under the
key ``field::<body>::<name>`` (:func:`row_key`); :class:`flexbody.io.results.Results` splits them out into
``Results.fields[body][name]``, first axis = recorded step.
"""

from __future__ import annotations

import numpy as np

from ..errors import FlexbodyError

TENSORS = ("green_lagrange_strain", "cauchy_stress", "von_mises")
CELL_PREFIX = "cell_"
FIELD_NAMES = ("displacement", "velocity", *TENSORS, *tuple(CELL_PREFIX + name for name in TENSORS))
_ROW_PREFIX, _SEPARATOR = "field::", "::"

FIELD_UNITS = {
    "displacement": ("displacement", "m"),
    "velocity": ("velocity", "m/s"),
    "green_lagrange_strain": ("Green–Lagrange strain", "-"),
    "cauchy_stress": ("Cauchy stress", "Pa"),
    "von_mises": ("von Mises stress", "Pa"),
}
"""Quantity and unit of each field of the module table, keyed by its name without ``cell_``."""

_COMPONENTS = {3: ("x", "y", "z"), 9: ("xx", "xy", "xz", "yx", "yy", "yz", "zx", "zy", "zz")}


def describe(name: str, component: int | None = None, n_components: int = 1) -> str:
    """A label for the values of field ``name`` (a point or cell array name, with or without ``cell_``).

    ``component`` (0-based) selects one column of a field with ``n_components`` columns; None means
    the field itself when it has one column, else its magnitude (3 columns) or Frobenius norm (9).
    Examples: "displacement magnitude [m]", "von Mises stress [Pa]", "Cauchy stress component 0: xx
    [Pa]", "Green–Lagrange strain component 4: yy [-]". A name outside :data:`FIELD_UNITS` (a user's
    own array) is shown as it is, without a unit.
    """
    quantity, unit = FIELD_UNITS.get(name.removeprefix(CELL_PREFIX), (name, None))
    if component is not None:
        labels = _COMPONENTS.get(n_components)
        quantity += f" component {component}" + (f": {labels[component]}" if labels else "")
    elif n_components == 9:
        quantity += " Frobenius norm"
    elif n_components > 1:
        quantity += " magnitude"
    return quantity if unit is None else f"{quantity} [{unit}]"


def body_fields(body, q: np.ndarray, v: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """The fields of ``body`` (a :class:`~flexbody.fem.flexible_body.FlexibleBody`) at its coordinates q (3n,) [m]
    and, if given, velocities v (3n,) [m/s]: {name: array} with the names and shapes of the module
    table ("velocity" only with v)."""
    q = np.asarray(q, dtype=float)
    out = {"displacement": q.reshape(-1, 3) - body.mesh.points}
    if v is not None:
        out["velocity"] = np.asarray(v, dtype=float).reshape(-1, 3).copy()
    cells = body.cell_fields(q)
    for name in TENSORS:
        per_cell = cells[name].reshape(body.n_elements, -1)  # 3×3 tensors as 9 components
        per_cell = per_cell if per_cell.shape[1] > 1 else per_cell[:, 0]
        out[CELL_PREFIX + name] = per_cell
        out[name] = body.nodal_average(per_cell)
    return out


def vtk_data(fields: dict[str, np.ndarray]) -> tuple[dict, dict]:
    """(point_data, cell_data) for a VTU file: node fields as they are, ``cell_…`` without the prefix."""
    point = {k: v for k, v in fields.items() if not k.startswith(CELL_PREFIX)}
    cell = {k[len(CELL_PREFIX) :]: v for k, v in fields.items() if k.startswith(CELL_PREFIX)}
    return point, cell


def row_key(body_name: str, field_name: str) -> str:
    """The history key under which a run records ``field_name`` of body ``body_name``."""
    check_body_name(body_name)
    return f"{_ROW_PREFIX}{body_name}{_SEPARATOR}{field_name}"


def record_rows(bodies, slices: dict, q: np.ndarray, v: np.ndarray | None) -> dict[str, np.ndarray]:
    """The fields of every body in ``bodies`` at the system state (q, v) (n_dofs,), keyed by
    :func:`row_key`; ``slices[body.name]`` is the body's slice of q."""
    rows = {}
    for body in bodies:
        part = slices[body.name]
        for name, value in body_fields(body, q[part], None if v is None else v[part]).items():
            rows[row_key(body.name, name)] = value
    return rows


def split(histories: dict) -> tuple[dict, dict]:
    """Separate recorded fields from the other histories: (histories, {body: {name: array}})."""
    plain: dict = {}
    fields: dict[str, dict] = {}
    for key, value in histories.items():
        if key.startswith(_ROW_PREFIX):
            body, name = key[len(_ROW_PREFIX) :].rsplit(_SEPARATOR, 1)
            fields.setdefault(body, {})[name] = value
        else:
            plain[key] = value
    return plain, fields


def joined(fields: dict) -> dict:
    """The inverse of :func:`split` for the fields: {row_key: array}."""
    return {row_key(body, name): value for body, named in fields.items() for name, value in named.items()}


def check_body_name(name: str) -> None:
    """Body names are part of the recorded keys; the separator cannot occur in them."""
    if _SEPARATOR in name:
        raise FlexbodyError(f"body name {name!r} contains {_SEPARATOR!r}, which cannot be recorded as a field key")
