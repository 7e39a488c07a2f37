"""The quadrature rules of a flexible body, chosen for its kind of cell and checked: the Gauss rules of the bricks
(the defaults of :mod:`flexbody.fem.bending_rules`, which do not lock in thin bending) and the symmetric rules of the
tetrahedra (:mod:`flexbody.fem.tetrahedra`), each refused when it leaves zero-energy modes; the mass rules that
integrate N_a N_b exactly; and the refusal of 4-node tetrahedra in nearly incompressible materials.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..errors import ElementError, FlexbodyError
from . import bending_rules
from .elements import ReferenceCell, ReferenceHex, gauss_hex, spurious_modes, zero_energy_modes
from .materials import Material
from .tetrahedra import TET_RULE_DEGREES, ReferenceTet, tet_quadrature


class BodyRules(NamedTuple):
    """The rules of a body (:func:`body_rules`): the ``quadrature`` in use (points along ξ, η, ζ of bricks, the degree
    of tetrahedra), the ``stiffness`` and ``mass`` rules (points (g, 3), weights (g,)), and the ``advice`` to log when
    the rule locks in thin bending (None when it does not)."""

    quadrature: int | tuple[int, int, int]
    stiffness: tuple[np.ndarray, np.ndarray]
    mass: tuple[np.ndarray, np.ndarray]
    advice: str | None


def body_rules(name: str, quadrature, element: ReferenceCell, X: np.ndarray, locking: str | None) -> BodyRules:
    """The rules of a body named ``name`` of ``element`` cells with nodal coordinates X (m, nn, 3), for the user's
    ``quadrature`` (None: the default) and 8-node ``locking`` remedy."""
    if isinstance(element, ReferenceHex):
        shape = bending_rules.mesh_shape(element, X)
        rule = _brick_rule(name, quadrature, element, shape)
        full = tuple(max(n, element.default_quadrature) for n in rule)
        advice = bending_rules.locking_advice(element, rule, shape, locking)
        return BodyRules(rule, gauss_hex(rule), gauss_hex(full), advice)
    assert isinstance(element, ReferenceTet)
    degree = _tet_rule(name, quadrature, element)
    return BodyRules(degree, tet_quadrature(degree), tet_quadrature(max(degree, element.mass_degree)), None)


def _brick_rule(name: str, quadrature, element: ReferenceHex, shape: bending_rules.MeshShape) -> tuple[int, int, int]:
    """The Gauss rule of ``quadrature`` (None: the rule that does not lock in thin bending for elements of the
    ``shape``, :func:`bending_rules.recommended_rule`; an int: the same along each axis; three ints: along ξ, η,
    ζ); ElementError for a rule that leaves zero-energy modes besides the rigid-body motions, naming that rule."""
    if quadrature is None:
        return bending_rules.recommended_rule(element, shape)
    counts = (quadrature,) * 3 if np.ndim(quadrature) == 0 else tuple(quadrature)
    if len(counts) != 3 or not all(
        isinstance(n, (int, np.integer)) and not isinstance(n, bool) and n >= 1 for n in counts
    ):
        raise FlexbodyError(
            f"FlexibleBody {name!r}: quadrature must be a positive integer or three of them "
            f"(points along ξ, η, ζ), got {quadrature!r}"
        )
    rule = (int(counts[0]), int(counts[1]), int(counts[2]))
    extra = spurious_modes(element.n_nodes, rule)
    if extra > 0:
        raise ElementError(
            f"FlexibleBody {name!r}: quadrature {rule} leaves {extra} zero-energy (hourglass) "
            f"mode(s) in {element.n_nodes}-node elements besides the rigid-body motions, so the "
            f"stiffness is singular; use {bending_rules.recommended_rule(element, shape)} for this mesh"
        )
    return rule


#: The small-strain Poisson's ratio from which 4-node tetrahedra are refused: their one constant volume change per
#: element locks nearly incompressible materials (Hughes, The Finite Element Method, §4.4: the constraint count).
TET4_POISSON_LIMIT = 0.45


def _tet_rule(name: str, quadrature, element: ReferenceTet) -> int:
    """The degree of the symmetric tetrahedron rule of ``quadrature`` (None: the element's default degree, 1 for
    4 nodes and 2 for 10); FlexbodyError for a degree without a rule, ElementError for one that leaves zero-energy
    modes (10-node elements with the centroid alone)."""
    if quadrature is None:
        return element.default_degree
    if isinstance(quadrature, bool) or not isinstance(quadrature, (int, np.integer)) or quadrature < 1:
        raise FlexbodyError(
            f"FlexibleBody {name!r}: quadrature of tetrahedra is the degree of a rule, one of {TET_RULE_DEGREES} "
            f"(1, 4 and 14 points), got {quadrature!r}"
        )
    degree = int(quadrature)
    if degree not in TET_RULE_DEGREES:
        raise FlexbodyError(
            f"FlexibleBody {name!r}: no tetrahedron rule of degree {quadrature}; the degrees are {TET_RULE_DEGREES}"
        )
    extra = zero_energy_modes(element, *tet_quadrature(degree))
    if extra > 0:
        raise ElementError(
            f"FlexibleBody {name!r}: a rule of degree {degree} leaves {extra} zero-energy mode(s) in "
            f"{element.n_nodes}-node tetrahedra besides the rigid-body motions, so the stiffness is singular; use "
            f"quadrature={element.default_degree} (the default)"
        )
    return degree


def check_tet4_material(name: str, element: ReferenceCell, material: Material) -> None:
    """Refuse 4-node tetrahedra of a nearly incompressible material (volumetric locking), with the remedies."""
    if not isinstance(element, ReferenceTet) or element.order != 1:
        return
    lam, mu = material.small_strain_lame
    poisson = lam / (2.0 * (lam + mu))
    if poisson >= TET4_POISSON_LIMIT:
        raise ElementError(
            f"FlexibleBody {name!r}: 4-node tetrahedra lock in a nearly incompressible material (small-strain "
            f"Poisson's ratio {poisson:.4g} ≥ {TET4_POISSON_LIMIT}): each element has one constant volume change, and "
            "keeping it near zero freezes the mesh (volumetric locking). Use 10-node tetrahedra "
            "(mesh.to_quadratic()) or 8-node bricks, whose incompatible modes do not lock"
        )
