"""Export: VTU/PVD series read back by meshio and pyvista; Results save/load round trip; the CLI."""

import numpy as np
import pytest

import flexbody as fb
from flexbody import cli


@pytest.fixture(scope="module")
def solved():
    mesh = fb.mesh.box((1.0, 0.1, 0.1), (6, 1, 1), order=2)
    beam = fb.FlexibleBody("beam", mesh, fb.StVenantKirchhoff(young=1.0e7, poisson=0.3, density=1000.0))
    system = fb.System([beam], [fb.Fix(beam, "x0")], [fb.SurfaceTraction(beam, "x1", total=(0, 0, -20.0))])
    return beam, fb.solve_static(system, load_steps=3)


def test_pvd_series_reads_back_in_meshio_and_pyvista(solved, tmp_path):
    import meshio
    import pyvista as pv

    beam, res = solved
    pvd = fb.io.write_pvd(tmp_path, res)
    reader = pv.get_reader(str(pvd))
    assert np.allclose(reader.time_values, res.times)
    reader.set_active_time_point(len(res.times) - 1)
    grid = reader.read()[0]
    assert grid.n_cells == beam.n_elements and grid.n_points == beam.n_nodes
    for key in ("displacement", "green_lagrange_strain", "cauchy_stress", "von_mises"):
        assert key in grid.point_data
    assert np.allclose(grid.point_data["displacement"], res.displacements(beam), atol=1e-14)
    last = meshio.read(tmp_path / f"beam_{len(res.times) - 1:04d}.vtu")
    assert "hexahedron27" in last.cells_dict
    assert np.allclose(last.points, res.positions(beam))
    vm = last.cell_data["von_mises"][0]
    assert vm.shape == (beam.n_elements,) and vm.max() > 0
    # von Mises at the clamped end is larger than at the loaded end (bending moment)
    assert vm[0] > 5 * vm[-1]


def test_results_round_trip(solved, tmp_path):
    beam, res = solved
    res.save(tmp_path)
    back = fb.Results.load(tmp_path)
    assert back.kind == "static" and np.array_equal(back.times, res.times) and np.array_equal(back.q, res.q)
    assert all(np.allclose(a, b) for a, b in zip(back.residuals, res.residuals))
    assert np.array_equal(back.displacements("beam"), res.displacements(beam))


def test_loading_a_missing_results_directory_fails_clearly(tmp_path):
    with pytest.raises(fb.FlexbodyError, match="cannot read results"):
        fb.Results.load(tmp_path / "nothing")


def test_cli_runs_the_cantilever_case_at_reduced_size(tmp_path, capsys):
    out = tmp_path / "run"
    code = cli.main(
        ["run", "cases/01_cantilever.py", "--out", str(out), "--set", "divisions=(6,1,1)", "--set", "load_steps=2"]
    )
    assert code == 0
    assert (out / "beam.pvd").is_file() and (out / "results.npz").is_file()
    ratio = float((out / "summary.txt").read_text().split("ratio ")[1].split()[0])
    assert 0.95 < ratio < 1.0  # 6 elements along the beam: still within 5 % of Euler–Bernoulli


def test_cli_reports_bad_case_and_parameter(tmp_path, capsys):
    assert cli.main(["run", "cases/does_not_exist.py"]) == 2
    assert "not found" in capsys.readouterr().err
    assert cli.main(["run", "cases/01_cantilever.py", "--set", "colour=red", "--out", str(tmp_path)]) == 2
    assert "no parameter 'colour'" in capsys.readouterr().err


def test_cli_parameters_are_keywords_of_the_case():
    """Derived constants (EXPECTED_TIP) and imported names are not overridable parameters."""
    case = cli.load_case("cases/01_cantilever.py")
    params = cli.case_parameters(case)
    assert "TIP_FORCE" in params and "DIVISIONS" in params and "LOAD_STEPS" in params
    assert "EXPECTED_TIP" not in params
    with pytest.raises(fb.FlexbodyError, match="no parameter 'expected_tip'"):
        cli.parse_overrides(["expected_tip=1.0"], case)


def test_write_results_of_a_static_run_writes_histories_and_no_link_series(solved, tmp_path):
    _beam, res = solved
    fb.io.write_results(tmp_path, res)
    assert sorted(p.name for p in tmp_path.glob("*.pvd")) == ["beam.pvd"]
    table = np.genfromtxt(tmp_path / "histories.csv", delimiter=",", names=True)
    # 351 coordinates > 200: no q columns; the path's stability per point
    assert table.dtype.names == ("t", "newton_iterations", "residual", "negative_eigenvalues", "point_kind")
    assert np.all(table["negative_eigenvalues"] == 0) and np.all(table["point_kind"] == 0)  # a loaded beam: stable
    assert np.array_equal(np.atleast_1d(table["t"]), res.times)
    assert np.array_equal(np.atleast_1d(table["newton_iterations"]), res.iterations)  # the load path's steps
    assert np.allclose(np.atleast_1d(table["residual"])[1:], [r[-1] for r in res.residuals[1:]], rtol=1e-12)


def test_output_folder_that_cannot_be_written_is_named_before_the_run(tmp_path, monkeypatch):
    """A save_to or Results.save folder that cannot be written (a file in its path; a read-only folder, probed by
    writing a temporary file, simulated here since root may write anywhere) is a FlexbodyError naming the folder,
    raised before any step is computed."""
    import tempfile

    from flexbody.errors import FlexbodyError

    blocker = tmp_path / "a_file"
    blocker.write_text("")
    asm = fb.mechanisms.slider_crank().assemble()
    calls = []

    def tau(t, q, v):
        calls.append(t)
        return np.zeros(asm.n_dofs)

    with pytest.raises(FlexbodyError, match="a_file"):
        fb.simulate(asm, 0.01, integrator=fb.RK4(dt=1e-3), tau=tau, save_to=blocker / "run")
    assert not calls
    results = fb.simulate(asm, 0.01, integrator=fb.RK4(dt=1e-3))
    with pytest.raises(FlexbodyError, match=r"Results.save: cannot write into .*a_file"):
        results.save(blocker / "run")

    def read_only(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tempfile, "mkstemp", read_only)
    with pytest.raises(FlexbodyError, match=r"save_to: cannot write into .*locked.*Permission denied"):
        fb.simulate(asm, 0.01, integrator=fb.RK4(dt=1e-3), tau=tau, save_to=tmp_path / "locked")
    assert not calls
    with pytest.raises(FlexbodyError, match=r"Results.save: cannot write into .*locked"):
        results.save(tmp_path / "locked")


@pytest.mark.parametrize(
    "settings",
    [
        lambda: fb.NewtonSettings(tol=float("nan")),
        lambda: fb.NewtonSettings(max_iterations=0),
        lambda: fb.NewtonSettings(max_bisections=-1),
        lambda: fb.GeneralizedAlpha(dt=1e-3, tol=-1.0),
        lambda: fb.GeneralizedAlpha(dt=float("inf")),
        lambda: fb.GeneralizedAlpha(dt=1e-3, dt_min=1.0),
        lambda: fb.GeneralizedAlpha(dt=1e-3, alpha_m=1.0, alpha_f=0.5),
        lambda: fb.GeneralizedAlpha(dt=1e-3, grow_after=1.5),
        lambda: fb.RK4(dt="fast"),
        lambda: fb.Adaptive(rtol=float("nan")),
    ],
    ids=[
        "newton tol NaN",
        "newton max_iterations 0",
        "newton max_bisections -1",
        "alpha tol < 0",
        "alpha dt inf",
        "alpha dt_min > dt",
        "alpha_m 1",
        "alpha grow_after 1.5",
        "rk4 dt text",
        "adaptive rtol NaN",
    ],
)
def test_solver_settings_are_checked(settings):
    from flexbody.errors import FlexbodyError

    with pytest.raises(FlexbodyError, match=r"(NewtonSettings|GeneralizedAlpha|RK4|Adaptive): \w+ must be"):
        settings()


def test_simulate_names_a_time_that_is_not_a_number():
    from flexbody.errors import FlexbodyError

    with pytest.raises(FlexbodyError, match="t_end must be a number"):
        fb.simulate(fb.mechanisms.slider_crank().assemble(), "abc")


def test_two_fix_on_one_coordinate_are_named():
    """Two Fix prescribing the same nodal coordinate (here with different displacements): the flexible-only static
    solver used to keep the first value and drop the second silently."""
    from flexbody.errors import ConstraintError

    mesh = fb.mesh.box(size=(1.0, 0.1, 0.1), divisions=(2, 1, 1))
    bar = fb.FlexibleBody("bar", mesh, fb.StVenantKirchhoff(young=1e7, poisson=0.3, density=1e3))
    clamp, pull = fb.Fix(bar, "x0"), fb.Fix(bar, "x0", displacement=(0.01, 0.0, 0.0), components=(0,), name="pull")
    with pytest.raises(
        ConstraintError, match=r"node 0 of body 'bar' \(x\) is prescribed 0 m by 'fix_bar_x0' and 0\.01 m by 'pull'"
    ):
        fb.System([bar], [clamp, pull])
    fb.System([bar], [clamp, fb.Fix(bar, "x1", displacement=(0.01, 0.0, 0.0), components=(0,))])  # disjoint: fine
    symmetry = fb.Fix(bar, "y0", components=(1,), name="symmetry")  # shares x0's corner nodes, the same u = 0
    fb.System([bar], [clamp, symmetry])


def test_a_disk_too_full_for_the_run_is_named_before_the_run(tmp_path, monkeypatch):
    """A save_to on a disk with less free space than the run will write (its rows twice: parts and final results)
    is a FlexbodyError naming the folder and both sizes before any step; a run that fits starts."""
    import shutil
    from collections import namedtuple

    from flexbody.errors import FlexbodyError

    asm = fb.mechanisms.slider_crank().assemble()
    calls = []

    def tau(t, q, v):
        calls.append(t)
        return np.zeros(asm.n_dofs)

    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(10**6, 10**6 - 100_000, 100_000))
    rows, values = 10_000 + 2, 5 * asm.n_dofs + 2 * asm.n_constraints + 20
    assert 2 * 8 * rows * values == 5_121_024  # 10 s at 1 ms: 5.12 MB
    with pytest.raises(
        FlexbodyError,
        match=r"save_to: the run will write about 5\.12 MB into .*full.*, whose disk "
        r"has 100 kB free",
    ):
        fb.simulate(asm, 10.0, integrator=fb.RK4(dt=1e-3), tau=tau, save_to=tmp_path / "full")
    assert not calls
    fb.simulate(asm, 0.01, integrator=fb.RK4(dt=1e-3), tau=tau, save_to=tmp_path / "small")  # 12 rows: 6.1 kB
    assert calls
