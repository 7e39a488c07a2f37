"""Gauss rules of the bricks that do not lock in thin bending, chosen from the elements' geometry.

Full integration locks thin 27-node bricks in bending: the parasitic membrane and transverse-shear strains of a
bent quadratic element vanish only at the two-point Gauss (Barlow) points along the bending direction, and the
three-point rule picks them up with a stiffness (ℓ/t)² times the bending one (Stolarski & Belytschko 1982;
docs/user_guide.md, "Which element and mesh for slender bending"). An element is *slender* along its axis ξ_k when
its length there, ℓ_k = 2 |∂X/∂ξ_k| at its centre, is at least :data:`SLENDER` times its thinnest length t. The
rule recommended for a body (:func:`recommended_rule`, the default of ``FlexibleBody(quadrature=None)``) follows
the axes that are slender in any of its elements:

* none (compact solids): 3 × 3 × 3, exact for the mass and the stiffness of straight-sided elements;
* one (bars): two points along it, three along the others, e.g. (2, 3, 3): the reduced axial rule, which has no
  zero-energy mode besides the rigid motions and passes the patch test;
* two (plates and shells, one element through the thickness): two points along the one the elements are curved
  along (a shell's curved direction, where membrane locking is strongest), else the one the body runs further
  along (ξ on a tie), e.g. (2, 3, 3). Two points along both, (2, 2, 3), would leave twelve communicable
  hourglass modes; holding them with a share of the full rule small enough not to lock bending leaves them soft
  under in-plane loads (Cook's membrane: 15.05 mm against deal.II's 14.3 at two elements per edge). The rule
  removes the membrane locking of bending along the reduced axis; bending along the other in-plane axis keeps
  the full rule's (mild in a plate's small vibrations: a cantilever plate's first five frequencies within
  0.6 % on 8 × 8 × 1 elements; strong when a coarse plate rolls up along it, docs/user_guide.md). On the hinged
  cylindrical roof (case 25) reducing the curved direction converges at 4 × 4 elements (limit load 2192.2,
  2193.6, 2193.4 N on 4, 8, 16 per edge), where 3 × 3 × 3 comes down from 2227.1 through 2207.5 to 2199.8 N.

8-node bricks keep 2 × 2 × 2; their remedy is the incompatible modes (``locking="incompatible_modes"``, see
:mod:`flexbody.fem.flexible_body`), without which they lock in bending. A rule or formulation the user chooses
that locks in the mesh at hand gets a warning naming the remedy (:func:`locking_advice`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .elements import ReferenceHex

#: An element axis at least this many times the element's thinnest length is slender (bending along it locks
#: under full integration).
SLENDER = 2.0
AXES = "ξηζ"


class MeshShape(NamedTuple):
    """What the rule is chosen from (:func:`mesh_shape`): ``lengths`` (m, 3) [m] of the elements along ξ, η, ζ,
    2 |∂X/∂ξ_k| at their centres; ``extents`` (3,) [m] of the body along the mean direction of each element axis
    (how far a strip of elements runs); ``sags`` (3,) the largest sag of the elements' centre lines along each
    axis relative to their length (zero for straight elements)."""

    lengths: np.ndarray
    extents: np.ndarray
    sags: np.ndarray


def mesh_shape(element: ReferenceHex, X: np.ndarray) -> MeshShape:
    """The :class:`MeshShape` of elements with nodal coordinates X (m, nn, 3)."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # FlexibleBody names degenerate elements
        J0 = element.centre_jacobians(X)  # (m, 3 xyz, 3 axes)
        lengths = 2.0 * np.linalg.norm(J0, axis=1)
        directions = np.nan_to_num(J0 / np.linalg.norm(J0, axis=1, keepdims=True)).sum(axis=0)
        directions /= np.maximum(np.linalg.norm(directions, axis=0), 1e-300)
    extents = np.ptp(X.reshape(-1, 3) @ directions, axis=0)
    return MeshShape(lengths, extents, _axis_sags(element, X))


def slenderness(lengths: np.ndarray) -> np.ndarray:
    """ℓ_k / t (m, 3) of elements of axis lengths (m, 3); 1 in degenerate elements (which FlexibleBody refuses)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = lengths / lengths.min(axis=1, keepdims=True)
    return np.where(np.isfinite(ratio), ratio, 1.0)


def slender_axes(lengths: np.ndarray) -> np.ndarray:
    """(3,) bool: the element axes slender (ℓ_k ≥ SLENDER t) in at least one element of lengths (m, 3)."""
    return np.any(slenderness(lengths) >= SLENDER, axis=0)


def _axis_sags(element: ReferenceHex, X: np.ndarray) -> np.ndarray:
    """(3,): the largest sag over the elements with nodes X (m, nn, 3) of their centre line along ξ, η, ζ, relative
    to its length: |X(0) − (X(−e_k) + X(e_k))/2| / |X(e_k) − X(−e_k)|."""
    out = np.zeros(3)
    for k in range(3):
        ends = np.zeros((3, 3))
        ends[0, k], ends[2, k] = -1.0, 1.0
        P = np.einsum("pa,ead->epd", element.shape_functions(ends), X)  # (m, 3 points, 3)
        with np.errstate(divide="ignore", invalid="ignore"):
            sag = np.linalg.norm(P[:, 1] - 0.5 * (P[:, 0] + P[:, 2]), axis=1) / np.linalg.norm(
                P[:, 2] - P[:, 0], axis=1
            )
        out[k] = float(np.nanmax(sag, initial=0.0))
    return out


def recommended_rule(element: ReferenceHex, shape: MeshShape) -> tuple[int, int, int]:
    """The rule (points along ξ, η, ζ) that does not lock in thin bending for elements of the ``shape``: see the
    module docstring. Of two slender axes (plates and shells), the one along which the elements are curved is
    reduced (the membrane locking of curved elements), then the one the body runs further along, then the one of
    the more slender elements, then ξ."""
    full = element.default_quadrature
    slender = slender_axes(shape.lengths)
    if element.order == 1 or not slender.any() or slender.all():
        return (full, full, full)
    ratio = slenderness(shape.lengths)
    keys = [
        (round(float(shape.sags[k]), 6), round(float(shape.extents[k]), 6), round(float(np.median(ratio[:, k])), 2), -k)
        for k in range(3)
    ]
    reduced = max((k for k in range(3) if slender[k]), key=lambda k: keys[k])
    return tuple(2 if k == reduced else full for k in range(3))  # type: ignore[return-value]


def locking_advice(
    element: ReferenceHex, rule: tuple[int, int, int], shape: MeshShape, locking: str | None
) -> str | None:
    """Why a chosen rule or formulation locks in thin bending on elements of the ``shape``, and the remedy; None
    when it does not."""
    ratio = slenderness(shape.lengths)
    slender = slender_axes(shape.lengths)
    worst = f"{ratio.max():.3g}:1"
    if element.order == 1:
        if locking is None and slender.any():
            return (
                f"plain 8-node bricks (locking=None) on elements up to {worst} slender lock in bending (shear "
                "locking: a fraction of the true deflection); use locking='incompatible_modes'"
            )
        return None
    full_along = [AXES[k] for k in range(3) if slender[k] and rule[k] > 2]
    if not slender.any() or slender.all() or len(full_along) < int(slender.sum()):
        return None  # a compact mesh, or one slender axis reduced: what the default would do
    return (
        f"quadrature {rule} integrates the slender axis {'/'.join(full_along)} of its elements (up to {worst}) "
        "with three points, which locks in thin bending (membrane locking); use "
        f"quadrature={recommended_rule(element, shape)} for this mesh"
    )
