"""Rank decisions of the actuation maps state σ_max, σ_min, the tolerance and the scale it is relative to,
and that scale makes the verdict independent of units and of how uniformly small a map is.

The direct map J̄ᵀΘᵀSᵀ of a task on a flexible node that no actuator touches is tiny but well conditioned
(σ ≈ 6.9e-9 and 1.2e-9 1/m for the flagship's beam tip): a tolerance relative to its own σ_max calls it
full rank, although the joints reach the tip only through the beam's consistent-mass coupling [DE 6.3].
Against σ_ref — the σ_max of the same map with every coordinate actuated — it is rank 0."""

import numpy as np
import pytest
from case_files import load

import flexbody as fb
from flexbody.control.actuation import actuation_report
from flexbody.control.map_check import AUTHORITY_ILL, AUTHORITY_RTOL, MAP_ATOL, check_authority


@pytest.fixture(scope="module")
def flagship():
    case = load("16_arm_beam_task_control.py")
    # the arm with a 12 × 2 × 2 8-node beam (the flagship's until issue 33): its tip node is 12 elements from the
    # flange, so the mass coupling that alone reaches it is far below the threshold (σ ≈ 7e-9 σ_ref); on the shipped
    # 6 × 1 × 1 27-node beam it is 1.8e-6 σ_ref, rank 1 of 2 (tests/test_case_16_flagship.py)
    asm = case.build(divisions=(12, 2, 2), order=1).assemble()
    return case, asm


def test_flagship_tip_task_is_not_actuated_and_the_report_says_why(flagship):
    case, asm = flagship
    v = np.zeros(asm.n_dofs)
    flange = actuation_report(asm, 0.0, asm.q0, v, task=case.flange_task(asm)).maps["direct"]
    tip = actuation_report(asm, 0.0, asm.q0, v, task=case.tip_task(asm)).maps["direct"]
    assert flange.ok and flange.rank == 2 and flange.sigma_min / flange.reference > 0.1
    assert not tip.ok and tip.rank == 0
    assert tip.sigma_max / tip.reference < 1e-7  # far below the 1e-6 threshold, not near it
    assert tip.sigma_min / tip.sigma_max > 0.1  # a relative test alone would pass it
    assert tip.tol == pytest.approx(AUTHORITY_RTOL * tip.reference)
    text = str(tip)
    for part in (
        "σ_max",
        "σ_min",
        f"tol {tip.tol:.3g}",
        "σ_ref",
        "every coordinate actuated",
        "FAILS",
        "times the effort of full actuation",
    ):
        assert part in text, (part, text)


def test_sigma_ref_is_the_same_map_with_every_coordinate_actuated(flagship):
    case, asm = flagship
    from flexbody.control.context import ControlContext
    from flexbody.control.maps import direct_mapping

    ctx = ControlContext(asm, 0.0, asm.q0, np.zeros(asm.n_dofs))
    mapping = direct_mapping(ctx, ctx.task(case.tip_task(asm)))
    full = mapping.full_actuation()  # J̄ᵀΘᵀ by m_T mass solves
    brute = mapping.osp.J_bar.T - np.asarray((ctx.Phi_hat @ mapping.osp.J_bar).T) @ ctx.Phi_bar_T(np.eye(asm.n_dofs))
    assert np.abs(full - brute).max() <= 1e-12 * np.abs(brute).max()
    assert np.allclose(full @ ctx.S.T, mapping.B, rtol=0, atol=1e-12 * np.abs(full).max())  # B = (J̄ᵀΘᵀ) Sᵀ


def _arm(scale: float) -> fb.System:
    """A planar two-link arm (lengths ×scale) with its tip on a line, first joint passive."""
    return fb.mechanisms.planar_arm_on_line(lengths=(scale, 0.8 * scale, 0.6 * scale), line_y=-0.5 * scale)


def test_verdict_does_not_depend_on_the_length_unit():
    """Lengths in m or in mm (×1000): the singular values change by the unit, σ/σ_ref and the verdict do not."""
    reports = []
    for scale in (1.0, 1000.0):
        asm = _arm(scale).assemble()
        tree = asm.trees[0]
        task = fb.PointTask(tree.point(tree.links[-2], (0.8 * scale, 0.0, 0.0)), components=(0,))
        reports.append(actuation_report(asm, 0.0, asm.q0, task=task).maps["direct"])
    m, mm = reports
    assert m.rank == mm.rank and m.ok == mm.ok
    assert mm.sigma_max == pytest.approx(m.sigma_max / 1000.0, rel=1e-9)
    assert mm.sigma_min / mm.reference == pytest.approx(m.sigma_min / m.reference, rel=1e-9)


@pytest.mark.parametrize("size, rank, ill", [(1e-9, 0, False), (1e-4, 2, True), (0.5, 2, False)])
def test_uniformly_small_maps_are_judged_against_full_actuation(size, rank, ill):
    full = np.eye(2, 5)
    check = check_authority("B", size * np.eye(2), full, 2, "test", "reaching the task", reference_name="I")
    assert check.rank == rank and check.ok == (rank == 2) and check.ill_conditioned == ill
    assert check.reference == 1.0 and check.tol == max(AUTHORITY_RTOL, MAP_ATOL)
    assert AUTHORITY_RTOL < 1e-4 < AUTHORITY_ILL  # the middle case sits between them
