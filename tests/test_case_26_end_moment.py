"""Case 26: the end-moment roll-up closes into a circle with the default solver settings and the default Gauss rule
(27-node, 10 elements: 2 × 3 × 3) or 8-node bricks with the incompatible modes (40 elements), and the full
27-node rule's membrane locking is what the user guide says it is."""

import logging

import numpy as np
import pytest
from case_files import load

case = load("26_end_moment_roll_up.py")


@pytest.mark.parametrize(
    "overrides, rotation",
    [({"elements": 10}, 1.00058), ({"elements": 40, "order": 1}, 0.99968)],
    ids=["H27-default-10", "H8-default-40"],  # no quadrature or locking argument: the defaults
)
def test_recommended_meshes_close_the_circle(overrides, rotation, tmp_path):
    run = case.main(tmp_path, **overrides)
    assert run["gap"] < 0.01  # the end within 1 % of L of the root
    assert abs(run["rotation"] / (2 * np.pi) - rotation) < 1e-4  # measured values (docs/verification.md)
    assert run["iterations"] < 130 and run["results"].times[-1] == 1.0  # defaults: one load step asked


def test_full_27_node_rule_locks_in_thin_bending(tmp_path, caplog):
    """3 × 3 × 3 points on 10 elements (36° of bending each): membrane locking stops the roll at 0.65 × 2π, and
    the body says so when it is built, naming the rule that does not lock."""
    with caplog.at_level(logging.WARNING, logger="flexbody"):
        run = case.main(tmp_path, elements=10, quadrature=3)
    assert 0.64 < run["rotation"] / (2 * np.pi) < 0.66 and run["gap"] > 0.4
    assert "locks in thin bending (membrane locking); use quadrature=(2, 3, 3) for this mesh" in caplog.text


@pytest.mark.slow
@pytest.mark.parametrize(
    "order, reduced, elements, rotation",
    [
        (2, False, 20, 0.93555),
        (2, False, 40, 0.99676),
        (2, False, 80, 1.00152),
        (2, True, 20, 1.00177),
        (2, True, 40, 1.00184),
        (1, False, 20, 0.98663),
        (1, False, 80, 1.00147),
    ],
)
def test_convergence_table(order, reduced, elements, rotation, tmp_path):
    run = case.main(tmp_path, order=order, quadrature=None if reduced else 3, elements=elements)
    assert abs(run["rotation"] / (2 * np.pi) - rotation) < 1e-4
