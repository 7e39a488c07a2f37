"""Case 25 at reduced size (4 × 4 × 1 quarter): the arc-length path of the hinged roof passes its limit points on
Sze et al.'s curves (Tables 9a and 9d), each located where the tangent's count of negative eigenvalues changes;
the full-size numbers are in docs/verification.md."""

import numpy as np
import pytest
from case_files import load

import flexbody as fb

case = load("25_hinged_roof_snap_through.py")


@pytest.fixture(scope="module")
def thick(tmp_path_factory):
    return case.main(tmp_path_factory.mktemp("roof"), thickness=0.0127, elements=4, arc=0.0005)


def test_thick_roof_snaps_through_on_sze_curve(thick):
    (p_max, w_max), (p_min, w_min) = thick["limits"]["maximum"], thick["limits"]["minimum"]
    # the default rule reduces the curved direction, (3, 2, 3): the solid's limit load is converged at N = 4 (2192.2,
    # 2193.6, 2193.4 N at N = 4, 8, 16; 3 × 3 × 3 comes down from 2227.1 through 2207.5 to 2199.8 N), 1.5 % below
    # Sze's S4R shell: the solid's line hinge is not the shell's (docs/verification.md, "Case 25")
    assert abs(p_max / 2226.3 - 1) < 0.02 and abs(w_max / 11.293e-3 - 1) < 0.08  # measured −1.52 %, −5.2 %
    assert abs(p_min / 518.7 - 1) < 0.05 and abs(w_min / 19.852e-3 - 1) < 0.05  # measured +4.67 %, −1.9 %
    # the solid's curve lies about 2 % of P_max from the shell's wherever it is resolved: 0.0197 at arcs of 0.5 mm
    # and 0.0200 at 1 mm, 0.0259 at 2 mm (the polyline cuts the corners)
    assert thick["deviation"] < 0.025
    kinds = thick["results"].histories["point_kind"]
    assert np.count_nonzero(kinds == 2) == 2 and thick["results"].metadata["stable"]  # two limit points; stable end
    results = thick["results"]
    assert results.times[-1] == 1.0 and np.all(np.diff(thick["deflection"]) > 0)  # lands on P = 3000 N
    assert np.any(np.diff(results.times) < 0)  # the load fell on the way
    assert max(results.iterations) <= 6


def test_thick_roof_writes_the_path(thick, tmp_path):
    out = case.main(tmp_path / "out", thickness=0.0127, elements=2, arc=0.002)
    for name in ("results.npz", "roof.pvd", "histories.csv", "load_deflection.png", "summary.txt"):
        assert (tmp_path / "out" / name).exists(), name
    table = np.genfromtxt(tmp_path / "out" / "histories.csv", delimiter=",", names=True)
    assert set(table.dtype.names) >= {"t", "newton_iterations", "residual", "arc_length"}
    assert np.array_equal(table["t"], out["results"].times)


def test_thin_roof_snaps_back(tmp_path):
    """t = 6.35 mm: the centre deflection turns back while the load is negative (snap-back), then both rise."""
    run = case.main(tmp_path, thickness=0.00635, elements=4, arc=0.0005)
    load_, w = run["load"], run["deflection"]
    p_min = run["limits"]["minimum"][0]
    assert abs(p_min / -386.4 - 1) < 0.02  # measured −1.71 %
    assert run["deviation"] < 0.05  # measured 0.0178
    negative = load_ < 0
    assert np.any(np.diff(w)[negative[1:]] < 0) and np.any(np.diff(w)[negative[1:]] > 0)  # W turns back and forth
    assert run["results"].times[-1] == 1.0


@pytest.mark.parametrize(("thickness", "maximum", "minimum"), [(0.0127, 2226.3, 518.7), (0.00635, 585.9, -386.4)])
def test_default_arcs_pass_the_snaps_in_few_steps(thickness, maximum, minimum):
    """``ArcLength()`` with no settings: through the snap-through (and the thin roof's snap-back) in a handful of
    arcs (issue 33 asked for at most 100), both limit points located on Sze's within the solid's 5 %."""
    results = fb.solve_static(case.build(thickness, 4), path=fb.ArcLength())
    assert results.metadata["ended"] == "target" and results.metadata["steps"] <= 20  # measured 5 and 6
    (p_max, _), (p_min, _) = case.limit_points(results).values()
    assert abs(p_max / maximum - 1) < 0.02 and abs(p_min / minimum - 1) < 0.05  # the limits of the 0.5 mm path
