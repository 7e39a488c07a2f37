"""Loads: resultants of body, nodal and surface loads; follower pressure and its load stiffness; bad input."""

import numpy as np
import pytest

import flexbody as fb

RNG = np.random.default_rng(5)


@pytest.fixture(params=[1, 2], ids=["H8", "H27"])
def body(request):
    mesh = fb.mesh.box((1.0, 0.5, 0.25), (3, 2, 2), order=request.param)
    return fb.FlexibleBody("block", mesh, fb.StVenantKirchhoff(young=1e6, poisson=0.3, density=800.0))


def _resultant(body, f):
    return f.reshape(-1, 3).sum(axis=0)


def _moment(body, f, about):
    return np.cross(body.mesh.points - about, f.reshape(-1, 3)).sum(axis=0)


def test_gravity_resultant_is_weight(body):
    f = fb.Gravity(body, (0.0, 0.0, -9.81)).force()
    assert np.allclose(_resultant(body, f), [0, 0, -9.81 * 800.0 * 0.125], rtol=1e-12)
    # centre of gravity at the box centre: zero moment about it
    assert np.allclose(_moment(body, f, [0.5, 0.25, 0.125]), 0.0, atol=1e-10)


def test_traction_total_and_callable(body):
    f = fb.SurfaceTraction(body, "x1", total=(0.0, 2.0, -3.0)).force()
    assert np.allclose(_resultant(body, f), [0.0, 2.0, -3.0], rtol=1e-12)
    assert np.all(np.abs(f.reshape(-1, 3)[body.mesh.points[:, 0] < 0.999]) == 0.0)
    # a linear traction t_x = y on the face x=1 (area 0.5 × 0.25): resultant ∫ y dA = 0.25 · 0.5²/2
    g = fb.SurfaceTraction(body, "x1", traction=lambda X: np.stack([X[:, 1], 0 * X[:, 1], 0 * X[:, 1]], 1)).force()
    assert _resultant(body, g)[0] == pytest.approx(0.25 * 0.5**2 / 2, rel=1e-12)


def test_surface_moment_has_the_moment_and_no_force(body):
    load = fb.SurfaceMoment(body, "x1", moment=(4.0, -1.0, 2.0))
    f = load.force()
    assert np.allclose(_resultant(body, f), 0.0, atol=1e-12)
    assert np.allclose(_moment(body, f, load.centroid), [4.0, -1.0, 2.0], rtol=1e-10)
    assert np.allclose(load.centroid, [1.0, 0.25, 0.125])


def test_nodal_force_per_node_and_total(body):
    nodes = body.nodes("x1")
    f = fb.NodalForce(body, "x1", force=(1.0, 0.0, 0.0)).force()
    assert _resultant(body, f)[0] == pytest.approx(len(nodes))
    g = fb.NodalForce(body, nodes, total=(0.0, 6.0, 0.0)).force()
    assert _resultant(body, g)[1] == pytest.approx(6.0)


def test_pressure_on_closed_surface_has_zero_resultant(body):
    q = body.reference_coordinates() + 0.01 * RNG.standard_normal(body.n_dofs)
    total = np.zeros(body.n_dofs)
    for face in ("x0", "x1", "y0", "y1", "z0", "z1"):
        total += fb.Pressure(body, face, 1000.0).force(q)
    assert np.allclose(_resultant(body, total), 0.0, atol=1e-9)
    # on the reference face x1: −p A n
    f = fb.Pressure(body, "x1", 1000.0).force(body.reference_coordinates())
    assert np.allclose(_resultant(body, f), [-1000.0 * 0.125, 0, 0], rtol=1e-12)


def test_pressure_stiffness_matches_finite_differences(body):
    load = fb.Pressure(body, "z1", 5000.0)
    q = body.reference_coordinates() + 0.02 * RNG.standard_normal(body.n_dofs)
    K = load.stiffness(q)
    d = RNG.standard_normal(body.n_dofs)
    h = 1e-6
    fd = (load.force(q + h * d) - load.force(q - h * d)) / (2 * h)
    assert np.linalg.norm(fd - K @ d) < 1e-8 * np.linalg.norm(fd)


def test_hydrostatic_pressure_on_neo_hookean_cube_matches_closed_form():
    """Follower pressure p on all faces: F = s I with [μ(s² − 1) + λ ln s³] / s³ = −p (Cauchy stress)."""
    mesh = fb.mesh.box((1.0, 1.0, 1.0), (2, 2, 2), order=2)
    mat = fb.NeoHookean(shear_modulus=1.0e6, bulk_modulus=2.0e6, density=1.0)
    cube = fb.FlexibleBody("cube", mesh, mat)
    p = 8.0e5
    loads = [fb.Pressure(cube, face, p) for face in ("x1", "y1", "z1")]
    symmetry = [
        fb.Fix(cube, "x0", components=[0]),
        fb.Fix(cube, "y0", components=[1]),
        fb.Fix(cube, "z0", components=[2]),
    ]
    res = fb.solve_static(fb.System([cube], symmetry, loads), load_steps=4)
    s = res.positions(cube)[:, 0].max()
    mu, lam = mat.shear_modulus, mat.lame_lambda
    from scipy.optimize import brentq

    exact = brentq(lambda t: (mu * (t**2 - 1) + lam * np.log(t**3)) / t**3 + p, 0.3, 1.0)
    assert s == pytest.approx(exact, rel=1e-10)
    assert np.allclose(res.positions(cube), s * mesh.points, atol=1e-10)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda b: fb.SurfaceTraction(b, "top", total=(0, 0, 1)), "unknown face set 'top'"),
        (lambda b: fb.Pressure(b, "nowhere", 1.0), "unknown face set 'nowhere'"),
        (lambda b: fb.NodalForce(b, "tip", force=(1, 0, 0)), "no node or face set named 'tip'"),
        (lambda b: fb.NodalForce(b, [10**6], force=(1, 0, 0)), "out of range"),
        (lambda b: fb.SurfaceTraction(b, "x1", traction=(1.0, np.nan, 0.0)), "must be finite"),
        (
            lambda b: fb.SurfaceTraction(b, "x1", traction=(1.0, 2.0)),
            r"expected real numbers of shape \(3,\), got shape \(2,\)",
        ),
        (lambda b: fb.Gravity(b, (0, 0, np.inf)), "must be finite"),
        (lambda b: fb.SurfaceTraction(b, "x1"), "give traction= or total="),
    ],
)
def test_bad_loads_raise_load_error(body, make, message):
    with pytest.raises(fb.LoadError, match=message):
        make(body)
