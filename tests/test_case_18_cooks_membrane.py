"""Case 18 (Cook's membrane, compressible neo-Hookean user energy) reproduces deal.II's published table.

The table (deal.II code gallery, Quasi_static_Finite_strain_Compressible_Elasticity/README.md) prints u_y of the
loaded edge's midpoint with 4 significant digits; flexbody must round to the same digits, i.e. lie within half a
unit of the last printed digit (0.005 mm for 14.30, 0.0005 mm for 8.638). Measured (mm): Q1 8.638375 (N = 2),
12.071227 (4), 13.863196 (8), 14.485259 (16), 14.667272 (32), 14.719028 (64); Q2 14.301764 (2), 14.649374 (4),
14.713912 (8), 14.730760 (16), 14.737351 (32).

10-node tetrahedra (each brick of the N × N × 1 mesh cut into six, their default 4-point rule) have no table of their
own; the issue asks them within 0.5 % of deal.II's Q2 value at N = 8, 14.71 mm. Measured (mm): 13.657137 (N = 2),
14.456574 (4), 14.669759 (8, −0.27 %), 14.717711 (16, +0.05 %), 14.733113 (32), converging to the Q2 family's 14.74;
4-node ones (constant strain, stiff in this bending-dominated problem) 11.575400 (8), 13.625151 (16), 14.408403 (32).
"""

import pytest
from case_files import assert_files, load


def _half_unit_of_last_digit(value_mm: float) -> float:
    """Half a unit of the 4th significant digit of a table entry [mm] (8.638 -> 0.0005, 14.30 -> 0.005)."""
    digits_before_point = len(str(int(value_mm)))
    return 0.5 * 10.0 ** (digits_before_point - 4)


def _check(case, tmp_path, n: int, order: int) -> float:
    summary = case.main(tmp_path / f"q{order}_{n}", elements_per_edge=n, order=order)
    expected = summary["dealii"] * 1e3
    measured = summary["u_y"] * 1e3
    assert abs(measured - expected) < _half_unit_of_last_digit(expected), (n, order, measured, expected)
    return measured


@pytest.mark.parametrize("n, order", [(2, 2), (4, 2), (2, 1), (4, 1)])
def test_midpoint_deflection_matches_the_dealii_table(tmp_path, n, order):
    case = load("18_cooks_membrane.py")
    _check(case, tmp_path, n, order)


def test_outputs_are_written(tmp_path):
    case = load("18_cooks_membrane.py")
    case.main(tmp_path, elements_per_edge=2, order=1, load_steps=2)
    assert_files(tmp_path, ["results.npz", "results.json", "membrane.pvd", "summary.txt", "histories.csv"])
    assert "deal.II Q1 8.638 mm" in (tmp_path / "summary.txt").read_text()


@pytest.mark.slow
@pytest.mark.parametrize("n, order", [(8, 2), (16, 2), (8, 1), (16, 1), (32, 1)])
def test_midpoint_deflection_matches_the_dealii_table_on_finer_meshes(tmp_path, n, order):
    case = load("18_cooks_membrane.py")
    _check(case, tmp_path, n, order)


def test_ten_node_tetrahedra_come_within_half_a_percent_of_the_q2_table(tmp_path):
    case = load("18_cooks_membrane.py")
    summary = case.main(tmp_path, elements_per_edge=8, order=2, cells="tetrahedra")
    assert summary["u_y"] == pytest.approx(14.71e-3, rel=5e-3)
    assert "(x 6 Tet10) elements; deal.II Q2 at N = 8 14.71 mm" in (tmp_path / "summary.txt").read_text()


@pytest.mark.slow
def test_ten_node_tetrahedra_converge_to_the_q2_family(tmp_path):
    """N = 16 and 32: within 0.2 % and 0.1 % of the Q2 family's limit 14.74 mm (0.15 % and 0.05 % measured)."""
    case = load("18_cooks_membrane.py")
    u = [case.main(tmp_path / str(n), elements_per_edge=n, order=2, cells="tetrahedra")["u_y"] for n in (16, 32)]
    assert abs(u[0] - 14.74e-3) < 2e-3 * 14.74e-3 and abs(u[1] - 14.74e-3) < 1e-3 * 14.74e-3
