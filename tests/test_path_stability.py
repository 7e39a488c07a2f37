"""Stability along static paths: the tangent's inertia at every point, critical points located and classified,
the warning on an unstable end, and the switch onto a buckled branch on the side asked for.

References nobody here wrote: Euler's critical load of a clamped–free column, P_cr = π²EI/(4L²), and the
elastica's post-buckled tip deflection (Timoshenko & Gere, Theory of Elastic Stability, §2.7: δ/L = 2p/K(p²)
with K(p²) = (π/2)√(P/P_cr), solved with scipy's complete elliptic integral); the inertia of random symmetric
matrices from LAPACK's eigenvalues.
"""

from __future__ import annotations

import logging

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import brentq
from scipy.special import ellipk

import flexbody as fb
from flexbody.errors import FlexbodyError
from flexbody.linalg.inertia import _symmetric_lu_pivots, eigenpairs_near_zero, negative_eigenvalues

L, A, E = 1.0, 0.02, 2.1e11
EI = E * A**4 / 12.0
P_CR = np.pi**2 * EI / (4.0 * L**2)  # N, Euler's load of the clamped–free column
RATIO = 2.541  # P / P_cr at load factor 1


def _elastica_tip(ratio: float) -> float:
    """δ/L of the elastica's free end at P = ratio · P_cr."""
    m = brentq(lambda m: ellipk(m) - np.pi / 2 * np.sqrt(ratio), 1e-12, 1 - 1e-15)
    return 2.0 * np.sqrt(m) / ellipk(m)


def _column(side_load: float = 0.0):
    mesh = fb.mesh.box((L, A, A), (10, 1, 1), order=2, origin=(0.0, -A / 2, -A / 2))
    body = fb.FlexibleBody("column", mesh, fb.StVenantKirchhoff(young=E, poisson=0.0, density=7850.0))
    loads = [fb.SurfaceTraction(body, "x1", total=(-RATIO * P_CR, 0.0, side_load))]
    return fb.System([body], [fb.Fix(body, "x0")], loads=loads), body


def _tip(results, body) -> np.ndarray:
    return results.displacements(body)[body.nodes("x1")].mean(axis=0)


def test_inertia_counts_negative_eigenvalues_as_lapack_does():
    rng = np.random.default_rng(3)
    for n in (40, 700):  # dense and ARPACK eigenpairs
        M = sp.random(n, n, density=0.02, random_state=4)
        M = (M + M.T + sp.diags(rng.normal(size=n) * 2.0)).tocsc()
        values = np.linalg.eigvalsh(M.toarray())
        assert negative_eigenvalues(M) == np.count_nonzero(values < 0) == np.count_nonzero(_symmetric_lu_pivots(M) < 0)
        near, vectors = eigenpairs_near_zero(M, 3)
        np.testing.assert_allclose(near, np.sort(values[np.argsort(np.abs(values))[:3]]), rtol=1e-8, atol=1e-12)
        np.testing.assert_allclose(M @ vectors, vectors * near, atol=1e-8)


def test_perfect_column_above_its_critical_load_is_reported_unstable(caplog):
    system, body = _column()
    with caplog.at_level(logging.WARNING, logger="flexbody"):
        results = fb.solve_static(system)  # one load step to 2.541 P_cr: the straight, unstable state
    assert np.abs(_tip(results, body)[1:]).max() < 1e-9  # still straight
    assert results.metadata["stable"] is False and results.histories["negative_eigenvalues"][-1] == 2
    (critical,) = results.metadata["critical_points"]
    assert critical["kind"] == "bifurcation" and critical["multiplicity"] == 2  # a square section buckles in y or z
    assert abs(critical["load_factor"] * RATIO - 1.0) < 0.005  # measured −0.012 %
    kinds = results.histories["point_kind"].tolist()
    assert kinds == [0, fb.solvers.POINT_KINDS["bifurcation"], 1]  # stable start, the bifurcation, unstable end
    tip_mode = np.asarray(critical["modes"]).reshape(-1, 3, 2)[body.nodes("x1")].mean(axis=0)  # (3, 2)
    assert np.abs(tip_mode[0]).max() < 1e-6 * np.abs(tip_mode[1:]).max()  # lateral modes: the tip moves sideways
    assert any("unstable" in r.getMessage() and "BranchSwitch" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("toward", [(0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1)], ids=["+y", "-y", "+z", "-z"])
def test_branch_switch_lands_on_the_buckled_branch_on_the_side_asked(toward):
    system, body = _column()
    results = fb.solve_static(system, branch=fb.BranchSwitch(toward=toward))
    tip, toward = _tip(results, body), np.asarray(toward, dtype=float)
    assert results.times[-1] == 1.0 and results.metadata["stable"] is True
    assert tip[1:] @ toward[1:] / L == pytest.approx(_elastica_tip(RATIO), rel=0.005)  # measured −0.10 %
    assert np.abs(tip[1:] - (tip[1:] @ toward[1:]) * toward[1:]).max() < 1e-6 * L  # in the plane asked for
    assert results.histories["point_kind"][1] == fb.solvers.POINT_KINDS["bifurcation"]
    assert np.all(results.histories["negative_eigenvalues"][2:] == 0)  # the buckled branch is stable throughout
    assert len(results.times) < 80  # tens of arcs on the new branch (measured 52 points)


def test_imperfect_column_reaches_the_elastica_in_tens_of_default_arcs():
    system, body = _column(side_load=1e-3 * RATIO * P_CR)
    results = fb.solve_static(system, path=fb.ArcLength())
    assert results.metadata["ended"] == "target" and len(results.times) - 1 < 60  # measured 46 (887 before)
    assert _tip(results, body)[2] / L == pytest.approx(_elastica_tip(RATIO), rel=0.005)  # the imperfection: −0.08 %
    assert results.metadata["stable"] is True and not results.metadata["critical_points"]


def test_branch_switch_is_checked():
    system, _ = _column()
    for bad in ((0, 0, 0), (np.nan, 1, 0), [[0, 1, 0]]):
        with pytest.raises(FlexbodyError, match="BranchSwitch: toward"):
            fb.BranchSwitch(toward=bad)
    with pytest.raises(FlexbodyError, match="BranchSwitch: amplitude"):
        fb.BranchSwitch(toward=(0, 1, 0), amplitude=-1.0)
    with pytest.raises(FlexbodyError, match="orthogonal to the 2 critical mode"):
        fb.solve_static(system, branch=fb.BranchSwitch(toward=(1, 0, 0)))  # along the axis: no buckling mode
    with pytest.raises(FlexbodyError, match="branch must be a BranchSwitch"):
        fb.solve_static(system, branch=(0, 1, 0))


def test_follower_loads_are_not_assessed():
    mesh = fb.mesh.box((1.0, 0.1, 0.1), (4, 1, 1), order=2)
    body = fb.FlexibleBody("beam", mesh, fb.StVenantKirchhoff(young=1e7, poisson=0.3, density=1.0))
    system = fb.System([body], [fb.Fix(body, "x0")], loads=[fb.Pressure(body, "z1", 10.0)])
    results = fb.solve_static(system, load_steps=2)
    assert np.all(results.histories["negative_eigenvalues"] == -1) and results.metadata["stable"] is None
    assert np.all(results.histories["point_kind"] == fb.solvers.POINT_KINDS["not assessed"])


def _double_pendulum(rail: bool) -> fb.System:
    """Two 1 m links hinged about z under gravity −y; with ``rail`` the free end rides on the vertical line x = 0."""
    tree = fb.RigidTree("pendulum", gravity=(0.0, -9.81, 0.0))
    inertia = np.diag([1e-3, 1e-3, 1e-3])
    tree.add_link("upper", None, fb.Revolute((0, 0, 1)), mass=1.0, com=(0, -0.5, 0), inertia=inertia)
    tree.add_link(
        "lower", "upper", fb.Revolute((0, 0, 1)), origin=(0, -1, 0), mass=1.0, com=(0, -0.5, 0), inertia=inertia
    )
    rows = [fb.OnSurface(tree.point("lower", (0, -1, 0)), fb.Plane((1, 0, 0)), name="rail")] if rail else []
    return fb.System([tree], rows)


@pytest.mark.parametrize(("q0", "negative"), [([0.0, 0.0], 0), ([np.pi, 0.0], 1)], ids=["hanging", "upright"])
def test_constrained_equilibrium_reports_its_stability_on_the_constraints(q0, negative, caplog):
    """The double pendulum with its end on a vertical rail has one motion left (the knee buckles sideways while the
    end slides): hanging it is stable, upright (a pinned–pinned two-bar column under its own weight) it is not."""
    with caplog.at_level(logging.WARNING, logger="flexbody"):
        results = fb.solve_static(_double_pendulum(rail=True), q_start=np.array(q0))
    assert np.allclose(results.q[-1], q0, atol=1e-9)  # stayed where it was put, an equilibrium
    assert results.histories["negative_eigenvalues"][-1] == negative
    assert results.metadata["stable"] is (negative == 0)
    assert any("unstable" in r.getMessage() for r in caplog.records) is (negative > 0)


def test_upright_double_pendulum_has_two_unstable_directions():
    tree = fb.RigidTree("pendulum", gravity=(0.0, -9.81, 0.0))
    inertia = np.diag([1e-3, 1e-3, 1e-3])
    tree.add_link("upper", None, fb.Revolute((0, 0, 1)), mass=1.0, com=(0, -0.5, 0), inertia=inertia)
    tree.add_link(
        "lower", "upper", fb.Revolute((0, 0, 1)), origin=(0, -1, 0), mass=1.0, com=(0, -0.5, 0), inertia=inertia
    )
    system = fb.System([tree], [])
    counts = [
        fb.solve_static(system, q_start=np.array(q0)).histories["negative_eigenvalues"][-1]
        for q0 in ([0.0, 0.0], [np.pi, 0.0], [np.pi, np.pi])  # hanging, upright, the upper link up and the lower down
    ]
    assert counts == [0, 2, 1]


def test_arc_length_path_switches_branch_too():
    """The same switch on an arc-length path: through the bifurcation onto the buckled branch, then on to s = 1."""
    system, body = _column()
    results = fb.solve_static(system, path=fb.ArcLength(), branch=fb.BranchSwitch(toward=(0, 0, -1)))
    assert results.metadata["ended"] == "target" and results.metadata["stable"] is True
    assert -_tip(results, body)[2] / L == pytest.approx(_elastica_tip(RATIO), rel=0.005)
    assert abs(_tip(results, body)[1]) < 1e-6 * L
