"""Per-step fields of flexible bodies held by Results (``flexbody.fem.fields``, ``Results.fields``,
``simulate(..., fields=True)``, ``Results.store_fields``), against closed forms, through save/load,
incremental saving and resume, and in the ParaView export."""

from __future__ import annotations

import meshio
import numpy as np
import pytest
from scipy.optimize import fsolve

import flexbody as fb
from flexbody import io
from flexbody.errors import FlexbodyError, StateError
from flexbody.fem.fields import FIELD_NAMES
from flexbody.mechanisms.flexible import arm_with_beam
from flexbody.solvers.simulation import resume

SIZE = (1.0, 0.2, 0.2)


def _uniaxial_bar(force: float):
    """Neo-Hookean bar 1 × 0.2 × 0.2 m (4 × 1 × 1 eight-node bricks) on rollers at x = 0, y = 0, z = 0
    with a dead load ``force`` [N] along x spread over the face x = 1: a homogeneous stretch."""
    body = fb.FlexibleBody("bar", fb.mesh.box(SIZE, (4, 1, 1)), fb.NeoHookean(young=1.0e6, poisson=0.3, density=1000.0))
    X = body.mesh.points
    rollers = [
        fb.Fix(body, body.nodes("x0"), components=(0,)),
        fb.Fix(body, np.flatnonzero(np.isclose(X[:, 1], 0.0)), components=(1,)),
        fb.Fix(body, np.flatnonzero(np.isclose(X[:, 2], 0.0)), components=(2,)),
    ]
    return body, fb.System([body], rollers, [fb.SurfaceTraction(body, "x1", total=(force, 0.0, 0.0))])


def _closed_form_stretches(material, force: float, area: float) -> tuple[float, float]:
    """Axial and lateral stretches (a, c) of the compressible Neo-Hookean law σ = [μ(b − I) + λ ln J I]/J
    under uniaxial dead load: σ_yy = 0 and σ_xx·(current area) = force."""
    mu, lam = material.shear_modulus, material.lame_lambda

    def equations(x):
        a, c = x
        return [mu * (c * c - 1.0) + lam * np.log(a * c * c), mu * (a * a - c * c) / a - force / area]

    a, c = fsolve(equations, [1.0, 1.0], xtol=1e-13)
    return float(a), float(c)


def test_static_fields_match_the_uniaxial_closed_form():
    """Displacement, strain, Cauchy and von Mises fields of a homogeneous uniaxial stretch (about 10 %)."""
    force = 4.0e3
    body, system = _uniaxial_bar(force)
    res = fb.solve_static(system, load_steps=2).store_fields()
    a, c = _closed_form_stretches(body.material, force, SIZE[1] * SIZE[2])
    assert a > 1.09  # a large stretch
    X = body.mesh.points
    expected_u = X * np.array([a - 1.0, c - 1.0, c - 1.0])
    got = res.fields["bar"]
    assert got["displacement"].shape == (3, body.n_nodes, 3)
    assert np.abs(got["displacement"][-1] - expected_u).max() < 1e-10
    sigma_xx = force / (SIZE[1] * SIZE[2] * c * c)  # force / current area
    expected_sigma = np.zeros(9)
    expected_sigma[0] = sigma_xx
    expected_strain = np.zeros(9)
    expected_strain[[0, 4, 8]] = 0.5 * (np.array([a, c, c]) ** 2 - 1.0)
    for where in ("", "cell_"):
        assert np.abs(got[where + "cauchy_stress"][-1] - expected_sigma).max() < 1e-8 * sigma_xx
        assert np.abs(got[where + "von_mises"][-1] - sigma_xx).max() < 1e-8 * sigma_xx
        assert np.abs(got[where + "green_lagrange_strain"][-1] - expected_strain).max() < 1e-10
    assert np.abs(got["displacement"][0]).max() == 0.0  # the unloaded first step
    assert "velocity" not in got  # static: no velocities
    assert np.array_equal(res.field(body, "von_mises", 1), got["von_mises"][1])


def test_static_fields_round_trip_and_drive_the_export(tmp_path):
    _body, system = _uniaxial_bar(2.0e3)
    res = fb.solve_static(system, load_steps=2).store_fields()
    res.save(tmp_path / "run")
    back = fb.Results.load(tmp_path / "run")
    assert back.fields.keys() == res.fields.keys()
    for name, value in res.fields["bar"].items():
        assert np.array_equal(back.fields["bar"][name], value), name
    assert back.histories.keys() == res.histories.keys()  # fields are not histories
    back.system = system
    series = io.write_pvds(tmp_path / "vtk", back)
    assert [p.name for p in series] == ["bar.pvd"]
    mesh = meshio.read(tmp_path / "vtk" / "bar_0002.vtu")
    assert np.array_equal(mesh.point_data["von_mises"], res.fields["bar"]["von_mises"][2])
    assert np.array_equal(mesh.cell_data["cauchy_stress"][0], res.fields["bar"]["cell_cauchy_stress"][2])


def _free_block():
    body = fb.FlexibleBody(
        "block",
        fb.mesh.box((0.4, 0.2, 0.1), (2, 1, 1), order=2),
        fb.StVenantKirchhoff(young=1.0e7, poisson=0.3, density=800.0),
    )
    return body, fb.System([body]).assemble()


def test_dynamic_fields_of_a_free_translation():
    """A free body moving at constant velocity: displacement = v0 t, velocity = v0, no strain or stress."""
    body, asm = _free_block()
    v0 = np.tile([0.3, -0.2, 0.1], body.n_nodes)
    res = fb.simulate(asm, 0.05, integrator=fb.GeneralizedAlpha(dt=5e-3, rho_inf=0.8), v0=v0, fields=True)
    got = res.fields["block"]
    assert set(got) == set(FIELD_NAMES)
    t = res.times[:, None, None]
    # exact up to round-off of the moved body's internal force (≤ 8e-11 N against E = 1e7 Pa), which the
    # consistent mass turns into accelerations up to 1e-8 m/s², i.e. ≤ γ′ dt · 1e-8 ≈ 3e-11 m/s of velocity
    # per step: bounded at 1e-9 m/s over the 10 steps and t_end · 1e-9 < 1e-10 m (measured 4e-13, 2e-16)
    assert np.abs(got["displacement"] - t * np.array([0.3, -0.2, 0.1])).max() < 1e-10
    assert np.abs(got["velocity"] - np.array([0.3, -0.2, 0.1])).max() < 1e-9
    assert np.abs(got["cauchy_stress"]).max() < 1e-4  # Pa, against E = 1e7
    assert got["velocity"].shape == (len(res.times), body.n_nodes, 3)
    assert got["cell_von_mises"].shape == (len(res.times), body.n_elements)


def test_recorded_fields_equal_computed_ones_and_survive_resume(tmp_path):
    """Fields recorded during a saved run that fails part-way and is resumed equal the fields computed
    afterwards from an uninterrupted run's q and v (exactly: the same functions of the same states)."""
    asm = arm_with_beam(order=1, divisions=(4, 1, 1), q0=(0.3, -0.5)).assemble()
    settings = fb.GeneralizedAlpha(dt=2e-3, rho_inf=0.8)
    reference = fb.simulate(asm, 0.06, integrator=settings).store_fields()

    def failing(t, q, v):
        return np.full(asm.n_dofs, np.nan) if t > 0.03 else np.zeros(asm.n_dofs)

    with pytest.raises(StateError):
        fb.simulate(asm, 0.06, integrator=settings, tau=failing, save_to=tmp_path, save_every=5, fields=True)
    partial = fb.Results.load(tmp_path)
    assert not partial.metadata["complete"] and 0 < partial.n_steps < reference.n_steps
    assert partial.fields["beam"]["von_mises"].shape[0] == partial.n_steps
    done = resume(asm, tmp_path, tau=lambda t, q, v: np.zeros(asm.n_dofs))
    assert done.metadata["fields"] is True
    for loaded in (done, fb.Results.load(tmp_path)):
        assert np.array_equal(loaded.times, reference.times)
        for name, value in reference.fields["beam"].items():
            assert np.abs(loaded.fields["beam"][name] - value).max() <= 1e-12 * max(1.0, np.abs(value).max()), name


def test_field_errors_name_the_culprit():
    body, asm = _free_block()
    res = fb.simulate(asm, 0.01, integrator=fb.GeneralizedAlpha(dt=5e-3))
    with pytest.raises(FlexbodyError, match="unknown field 'stress'"):
        res.field(body, "stress")
    with pytest.raises(FlexbodyError, match="no body 'plate'"):
        res.field("plate", "von_mises")
    res.system = None
    with pytest.raises(FlexbodyError, match="carry no system"):
        res.field(body, "von_mises")
    with pytest.raises(FlexbodyError, match="carry no system"):
        res.store_fields()
    odd = fb.FlexibleBody(
        "a::b", fb.mesh.box((0.4, 0.2, 0.1), (2, 1, 1)), fb.StVenantKirchhoff(young=1.0e7, poisson=0.3, density=800.0)
    )
    odd_asm = fb.System([odd]).assemble()
    for run in (
        lambda: fb.simulate(odd_asm, 0.01, integrator=fb.GeneralizedAlpha(dt=5e-3), fields=True),
        lambda: fb.simulate(odd_asm, 0.01, integrator=fb.GeneralizedAlpha(dt=5e-3)).store_fields(),
    ):
        with pytest.raises(FlexbodyError, match="body name 'a::b' contains '::'"):
            run()
    rigid = fb.mechanisms.slider_crank().assemble()
    with pytest.raises(FlexbodyError, match="no flexible body"):
        fb.simulate(rigid, 0.01, integrator=fb.RK4(dt=1e-3), fields=True)
