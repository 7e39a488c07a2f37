"""Export of rigid links and histories, the static scene, XDMF conversion and pyvista views of a
results directory.

The arm with a flexible beam (one rigid tree "arm", one flexible body "beam") and the rigid-only
slider-crank are simulated for a few steps; their results directories are checked against the tree
kinematics, read back with numpy, meshio and pyvista, and rendered off-screen. The scenes of other
mechanisms (rails, cylinder, sphere, ground points, clamps) are written from their initial
configuration alone.
"""

import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

import flexbody as fb
from flexbody import io, view
from flexbody.mechanisms.flexible import arm_with_beam

EVERY = 3


@pytest.fixture(scope="module")
def arm(tmp_path_factory):
    """(assembled system, results, results directory with the series written every EVERY-th step)."""
    asm = arm_with_beam(order=1, divisions=(6, 1, 1), q0=(0.3, -0.5)).assemble()
    res = fb.simulate(asm, 0.02, integrator=fb.GeneralizedAlpha(dt=2e-3, rho_inf=0.8))
    directory = tmp_path_factory.mktemp("arm")
    res.save(directory)
    io.write_pvd(directory, res, every=EVERY)
    io.write_link_pvd(directory, res, every=EVERY)
    io.write_histories_csv(directory / "histories.csv", res)
    return asm, res, directory


@pytest.fixture(scope="module")
def crank(tmp_path_factory):
    asm = fb.mechanisms.slider_crank().assemble()
    res = fb.simulate(asm, 0.1, integrator=fb.RK4(dt=0.01))
    return res, io.write_results(tmp_path_factory.mktemp("crank"), res)


def steps(n: int, every: int) -> list[int]:
    return sorted(set(range(0, n, every)) | {n - 1})


def series_meshes(pvd):
    import meshio

    return [(t, meshio.read(f)) for t, f in io.read_pvd(pvd)]


def initial_results(system) -> fb.Results:
    """Results holding only the initial configuration of ``system`` (enough to write its scene)."""
    asm = system.assemble()
    return fb.Results(
        kind="dynamic", times=np.zeros(1), q=asm.q0[None, :].copy(), slices=asm.slices.by_name(), system=asm
    )


def read_scene(directory):
    """The scene of ``directory`` as {source: (kind, distinct points (k, 3) of its cells, sorted)} and the
    pyvista mesh."""
    import pyvista as pv

    scene = pv.read(str(directory / "scene.vtp"))
    kinds, sources = np.asarray(scene.cell_data["kind"]), np.asarray(scene.cell_data["source"])
    out = {}
    for source in dict.fromkeys(sources.tolist()):
        cells = np.flatnonzero(sources == source)
        assert len(set(kinds[cells].tolist())) == 1
        points = np.vstack([np.asarray(scene.get_cell(int(i)).points) for i in cells])
        out[source] = (str(kinds[cells[0]]), np.unique(points, axis=0))
    return out, scene


# ----------------------------------------------------------------------------------- link series
def test_link_origins_and_frames_equal_the_tree_kinematics(arm):
    asm, res, directory = arm
    tree = asm.trees[0]
    meshes = series_meshes(directory / "arm.pvd")
    expected = steps(res.n_steps, EVERY)
    assert len(meshes) == len(expected) and res.n_steps - 1 in expected
    worst = 0.0
    for (t, mesh), step in zip(meshes, expected):
        assert t == pytest.approx(res.times[step], abs=1e-12)
        kin = asm.workspace(res.times[step], res.q[step]).kinematics(tree)
        R = np.stack([mesh.point_data[k][: tree.n_links] for k in ("frame_x", "frame_y", "frame_z")], axis=2)
        worst = max(worst, np.abs(mesh.points[: tree.n_links] - kin.p).max(), np.abs(R - kin.R).max())
        # the leaf link l2 is drawn to the flange (centroid of the attached beam face), 0.4 m along its x
        assert np.allclose(mesh.points[tree.n_links], kin.p[1] + kin.R[1] @ [0.4, 0.0, 0.0], atol=1e-12)
    assert worst <= 1e-12
    last = meshes[-1][1]
    assert last.cells_dict["line"].tolist() == [[0, 1], [1, 2]]
    assert last.cells_dict["vertex"].ravel().tolist() == [0, 1]
    assert [c.tolist() for c in last.cell_data["link"]] == [[0, 1], [0, 1]]


def test_frame_vectors_are_orthonormal_and_zero_at_end_points(arm):
    _, _, directory = arm
    for _, mesh in series_meshes(directory / "arm.pvd"):
        R = np.stack([mesh.point_data[k] for k in ("frame_x", "frame_y", "frame_z")], axis=2)
        for Ri in R[:2]:
            assert np.abs(Ri.T @ Ri - np.eye(3)).max() < 1e-12 and np.linalg.det(Ri) == pytest.approx(1.0)
        assert not R[2:].any()


def test_write_results_of_a_rigid_only_run(crank):
    res, directory = crank
    names = {p.name for p in directory.iterdir()}
    assert {"results.npz", "results.json", "histories.csv", "crank.pvd"} <= names
    assert len([n for n in names if n.startswith("crank_")]) == res.n_steps
    mesh = series_meshes(directory / "crank.pvd")[-1][1]
    kin = res.system.trees[0].kinematics(res.q[-1])
    # slider-crank: no marker on l2 but its end point C is a constrained link point at (1, 0, 0)
    assert np.allclose(mesh.points, np.vstack([kin.p, kin.p[1] + kin.R[1] @ [1.0, 0, 0]]), atol=1e-12)
    assert abs(mesh.points[2, 1]) < 1e-6  # C stays on the line y = 0


def test_pyvista_opens_both_series(arm):
    import pyvista as pv

    _asm, res, directory = arm
    n = len(steps(res.n_steps, EVERY))
    for name, arrays in (
        ("beam", ("displacement", "von_mises", "cauchy_stress", "green_lagrange_strain")),
        ("arm", ("frame_x", "frame_y", "frame_z")),
    ):
        reader = pv.get_reader(str(directory / f"{name}.pvd"))
        assert reader.number_time_points == n
        assert np.allclose(reader.time_values, res.times[steps(res.n_steps, EVERY)])
        reader.set_active_time_point(n - 1)
        grid = reader.read()[0]
        assert all(a in grid.point_data for a in arrays)
    assert "link" in grid.cell_data and grid.n_cells == 4


# ----------------------------------------------------------------------------------- histories CSV
def test_histories_csv_round_trip(arm):
    _, res, directory = arm
    table = np.genfromtxt(directory / "histories.csv", delimiter=",", names=True)
    header = (directory / "histories.csv").read_text().splitlines()[0].split(",")
    columns = [np.asarray(res.times)[:, None], res.q, res.v] + [
        np.asarray(v, dtype=float).reshape(res.n_steps, -1) for v in res.histories.values()
    ]
    expected = np.hstack(columns)
    got = np.column_stack([table[n] for n in table.dtype.names])
    assert header[:2] == ["t", "q[0]"] and "lam[11]" in header and "energy" in header
    assert got.shape == expected.shape and len(header) == expected.shape[1]
    assert np.abs(got - expected).max() <= 1e-12 * max(1.0, np.abs(expected).max())


def test_histories_csv_names_matrices_and_limits_width(tmp_path):
    t = np.linspace(0.0, 1.0, 4)
    res = fb.Results(
        kind="dynamic",
        times=t,
        q=np.zeros((4, 300)),
        slices={},
        v=np.zeros((4, 300)),
        histories={
            "m": np.arange(16.0).reshape(4, 2, 2),
            "other": np.ones(3),
            "wide": np.zeros((4, 201)),
            "flag": np.array([True, False, True, True]),
        },
    )
    path = io.write_histories_csv(tmp_path / "h.csv", res)
    header = path.read_text().splitlines()[0]
    assert header == "t,m[0][0],m[0][1],m[1][0],m[1][1],flag"  # no q/v (300 dofs), no wide/short ones
    table = np.genfromtxt(path, delimiter=",", names=True)
    assert np.array_equal(table["m10"], [2.0, 6.0, 10.0, 14.0])


# ----------------------------------------------------------------------------------- export
def test_xdmf_export_matches_the_vtu_series(arm, tmp_path):
    import meshio

    _, _res, directory = arm
    written = io.export(directory, "xdmf", tmp_path)
    assert [p.name for p in written] == ["arm.xdmf", "arm.h5", "beam.xdmf", "beam.h5", "scene.vtp"]
    assert all(p.parent == tmp_path and p.is_file() for p in written) and not list(directory.glob("*.h5"))
    worst = 0.0
    for name in ("arm", "beam"):
        vtus = series_meshes(directory / f"{name}.pvd")
        with meshio.xdmf.TimeSeriesReader(tmp_path / f"{name}.xdmf") as reader:
            points, cells = reader.read_points_cells()
            assert reader.num_steps == len(vtus)
            assert [c.type for c in cells] == [c.type for c in vtus[0][1].cells]
            for k, (t, mesh) in enumerate(vtus):
                tk, point_data, cell_data = reader.read_data(k)
                assert tk == t
                worst = max(worst, np.abs(point_data["position"] - mesh.points).max())
                for key, value in mesh.point_data.items():
                    worst = max(worst, np.abs(point_data[key] - value).max())
                for key, blocks in mesh.cell_data.items():
                    worst = max(worst, *(np.abs(a - b).max() for a, b in zip(cell_data[key], blocks)))
        if name == "beam":  # the XDMF mesh is the undeformed one: warp by displacement
            assert np.abs(points + point_data["displacement"] - mesh.points).max() < 1e-12
    assert worst == 0.0


def test_pvd_and_csv_export_from_disk(arm, tmp_path):
    _, _, directory = arm
    copied = io.export(directory, "pvd", tmp_path / "copy")
    series = {
        name: [name + ".pvd"] + [f.name for _, f in io.read_pvd(directory / f"{name}.pvd")] for name in ("arm", "beam")
    }
    assert [p.name for p in copied] == series["arm"] + series["beam"] + ["scene.vtp"]  # every file written
    assert set((tmp_path / "copy").iterdir()) == set(copied)
    assert len(io.read_pvd(tmp_path / "copy" / "beam.pvd")) == len(io.read_pvd(directory / "beam.pvd"))
    assert io.export(directory, "pvd") == [directory / n for n in series["arm"] + series["beam"] + ["scene.vtp"]]
    (csv,) = io.export(directory, "csv", tmp_path / "csv")
    assert csv.read_text() == (directory / "histories.csv").read_text()


def test_export_errors_name_the_culprit(arm, tmp_path):
    _, res, directory = arm
    with pytest.raises(fb.FlexbodyError, match=r"unknown format 'vtk'; valid formats: pvd, xdmf, csv"):
        io.export(directory, "vtk")
    missing = tmp_path / "missing"
    for fmt in ("pvd", "xdmf", "csv"):
        with pytest.raises(fb.FlexbodyError, match=re.escape(repr(str(missing)))):
            io.export(missing, fmt)
    empty = tmp_path / "empty"
    empty.mkdir()
    for fmt in ("pvd", "xdmf"):
        with pytest.raises(fb.FlexbodyError, match=r"no \.pvd series in " + re.escape(repr(str(empty)))):
            io.export(empty, fmt)
    with pytest.raises(fb.FlexbodyError, match="cannot read results from " + re.escape(repr(str(empty)))):
        io.export(empty, "csv")
    with pytest.raises(fb.FlexbodyError, match=r"no rigid tree 'leg'.*trees: \['arm'\]"):
        io.write_link_pvd(tmp_path, res, tree="leg")
    with pytest.raises(fb.FlexbodyError, match="write_link_pvd: results carry no system"):
        io.write_link_pvd(tmp_path, fb.Results.load(directory))


# ----------------------------------------------------------------------------------- view
def test_series_and_fields(arm):
    _, _, directory = arm
    assert view.series(directory) == {"arm": directory / "arm.pvd", "beam": directory / "beam.pvd"}
    found = view.fields(directory)
    assert {"displacement", "von_mises", "cauchy_stress"} <= set(found["beam"])
    assert {"frame_x", "frame_y", "frame_z", "link"} == set(found["arm"])


def image_stats(path):
    import imageio.v3 as iio

    image = iio.imread(path)[..., :3]
    colours = len(np.unique(image.reshape(-1, 3), axis=0))
    return colours, float(np.mean(np.any(image < 250, axis=-1)))  # background is white


def test_screenshot_is_not_blank(arm, crank, tmp_path):
    _, _, directory = arm
    path = view.screenshot(directory, tmp_path / "beam.png", field="von_mises", window_size=(480, 320))
    colours, covered = image_stats(path)
    assert colours > 50 and covered > 0.01
    rigid = view.screenshot(crank[1], tmp_path / "crank.png", window_size=(320, 240))
    assert image_stats(rigid)[1] > 0.005  # rigid only: default field ignored


def test_plotter_is_the_unshown_scene_that_screenshot_renders(arm, tmp_path):
    """``view.plotter`` returns the drawn scene (series, scalar bar, label) without showing it; ``screenshot``
    renders the same scene into its file."""
    import imageio.v3 as iio

    asm, res, directory = arm
    drawn = view.plotter(directory, field="von_mises", step=0, window_size=(480, 320), off_screen=True)
    try:
        assert {"beam", "arm:links", "arm:joints", "arm:frame_x", "arm:frame_z", "time"} <= set(drawn.actors)
        assert list(drawn.scalar_bars.keys()) == ["von Mises stress [Pa]"]
        beam = drawn.actors["beam"].mapper.dataset
        assert np.allclose(beam.points, res.positions(asm.bodies[0], 0), rtol=0, atol=1e-12)  # the step drawn
        image = drawn.screenshot(return_img=True)[..., :3]
    finally:
        drawn.close()
    path = view.screenshot(directory, tmp_path / "beam.png", field="von_mises", step=0, window_size=(480, 320))
    assert iio.imread(path)[..., :3].shape == image.shape
    assert np.mean(np.any(iio.imread(path)[..., :3] != image, axis=-1)) < 0.01  # the same picture
    with pytest.raises(fb.FlexbodyError, match=r"plotter: step 99 out of range for \d+ steps"):
        view.plotter(directory, step=99)
    with pytest.raises(fb.FlexbodyError, match="plotter: scale must be a finite number > 0"):
        view.plotter(directory, scale=0.0)


def test_animation_has_one_frame_per_written_step(arm, tmp_path):
    import imageio.v3 as iio

    _, res, directory = arm
    path = view.animation(directory, tmp_path / "arm.gif", every=2, window_size=(240, 160), component=2)
    frames = iio.imread(path, index=None)
    assert frames.shape[0] == len(steps(len(steps(res.n_steps, EVERY)), 2))


def test_mp4_animation_has_one_frame_per_written_step(arm, tmp_path):
    """MP4 through imageio-ffmpeg (a dependency): the frames read back with the ffmpeg plugin."""
    import imageio.v3 as iio

    _, res, directory = arm
    path = view.animation(directory, tmp_path / "arm.mp4", every=2, window_size=(240, 160))
    frames = iio.imread(path, index=None, plugin="FFMPEG")
    assert frames.shape[0] == len(steps(len(steps(res.n_steps, EVERY)), 2))
    assert frames.shape[1:3] == (160, 240) and frames.std() > 1.0  # not a blank movie


def test_colour_range_is_fixed_over_the_animation(arm):
    _, _, directory = arm
    items = view._load(directory)
    times = view._timeline(items)
    (lo, hi), bounds = view._scan(items, times, "displacement", None)
    frames = [[s.read(t) for s in items] for t in times]
    magnitudes = [view._values(grids[1], "displacement", None)[0] for grids in frames]  # [arm, beam]
    assert lo == min(m.min() for m in magnitudes) == 0.0 and hi == max(m.max() for m in magnitudes) > 0
    assert np.array_equal(bounds[0::2], np.min([view._bounds(g) for g in frames], axis=0)[0::2])
    assert np.array_equal(bounds[1::2], np.max([view._bounds(g) for g in frames], axis=0)[1::2])


def test_view_errors_name_the_culprit(arm, tmp_path, monkeypatch):
    _, _, directory = arm
    with pytest.raises(fb.FlexbodyError, match=r"unknown field 'stress'; available fields: \[.*'von_mises'"):
        view.screenshot(directory, tmp_path / "x.png", field="stress")
    with pytest.raises(fb.FlexbodyError, match="component 3 out of range: 'displacement' has 3"):
        view.screenshot(directory, tmp_path / "x.png", component=3)
    with pytest.raises(fb.FlexbodyError, match=r"no \.pvd series in " + re.escape(repr(str(tmp_path)))):
        view.screenshot(tmp_path, tmp_path / "x.png")
    nested = tmp_path / "sweep"
    for variant in ("rho=1", "rho=0.5"):
        shutil.copytree(directory, nested / variant)
    with pytest.raises(
        fb.FlexbodyError,
        match=r"no \.pvd series in .*sweep'; its sub-directories "
        r"rho=0\.5, rho=1 hold series: give one of them",
    ):
        view.screenshot(nested, tmp_path / "x.png")
    with pytest.raises(fb.FlexbodyError, match=r"'x\.avi' must end in \.gif or \.mp4"):
        view.animation(directory, tmp_path / "x.avi")
    monkeypatch.setitem(sys.modules, "imageio_ffmpeg", None)  # as if not installed
    with pytest.raises(fb.FlexbodyError, match=r"imageio-ffmpeg.*or write a \.gif"):
        view.animation(directory, tmp_path / "x.mp4")
    assert not (tmp_path / "x.mp4").exists()


# ----------------------------------------------------------------------------------- units, scale
def test_colour_bar_titles_carry_the_quantity_and_its_unit(arm):
    from flexbody.fem.fields import describe

    assert describe("displacement", None, 3) == "displacement magnitude [m]"
    assert describe("velocity", None, 3) == "velocity magnitude [m/s]"
    assert describe("von_mises") == describe("cell_von_mises") == "von Mises stress [Pa]"
    assert describe("cauchy_stress", 0, 9) == "Cauchy stress component 0: xx [Pa]"
    assert describe("green_lagrange_strain", 4, 9) == "Green–Lagrange strain component 4: yy [-]"
    assert describe("cauchy_stress", None, 9) == "Cauchy stress Frobenius norm [Pa]"
    assert describe("my_array", None, 3) == "my_array magnitude"  # a user's array: no unit
    assert describe("my_array", 1, 2) == "my_array component 1"
    assert view._title("displacement", 2, 3) == "displacement\ncomponent 2: z [m]"  # two lines beside the bar
    _, _, directory = arm
    items = view._load(directory)
    grids = [s.read(items[0].times[-1]) for s in items]
    for field, component, title in (
        ("von_mises", None, "von Mises stress [Pa]"),
        ("cauchy_stress", 0, "Cauchy stress\ncomponent 0: xx [Pa]"),
    ):
        plotter = view._plotter((240, 160), True)
        view._draw(plotter, items, grids, "t", field, component, (0.0, 1.0), view._bounds(grids))
        assert list(plotter.scalar_bars.keys()) == [title]
        plotter.close()


def test_scale_draws_the_reference_plus_scale_times_the_displacement(arm):
    _, _, directory = arm
    links, beam = view._load(directory)
    t = beam.times[-1]
    grid, drawn = beam.read(t), beam.read(t, 10.0)
    u = np.asarray(grid.point_data["displacement"])
    reference = np.asarray(grid.points) - u
    assert np.abs(u).max() > 1e-3
    assert np.allclose(np.asarray(drawn.points) - reference, 10.0 * u, rtol=0, atol=1e-12)
    assert np.array_equal(view._drawn_grid(grid, 10.0).points, drawn.points)
    assert np.array_equal(beam.read(t).points, grid.points)  # the read grid is left alone
    assert np.array_equal(links.read(t, 10.0).points, links.read(t).points)  # links are drawn where they are
    assert view._time_label(1.2, "dynamic", 10.0) == "t = 1.2 s, displacements × 10"
    assert view._time_label(0.5, "static", 1.0) == "load factor 0.5" and view._time_label(3, None, 1.0) == "t = 3"
    assert view._run_kind(directory) == "dynamic"


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf"), "10", True])
def test_scale_must_be_finite_and_positive(bad, arm, tmp_path):
    _, _, directory = arm
    message = f"scale must be a finite number > 0, got {bad!r}"
    with pytest.raises(fb.FlexbodyError, match=re.escape(f"screenshot: {message}")):
        view.screenshot(directory, tmp_path / "x.png", scale=bad)
    with pytest.raises(fb.FlexbodyError, match=re.escape(f"animation: {message}")):
        view.animation(directory, tmp_path / "x.gif", scale=bad)
    assert not list(tmp_path.iterdir())


# ----------------------------------------------------------------------------------- scene
def test_slider_crank_scene_holds_the_rail_plane_and_the_base_marker(crank):
    res, directory = crank
    scene, mesh = read_scene(directory)
    assert set(scene) == {"crank.l1 joint", "slider (Plane)"}
    assert view.series(directory) == {"crank": directory / "crank.pvd"}  # the scene is not a series
    kind, marker = scene["crank.l1 joint"]
    apex = np.linalg.norm(marker, axis=1) == 0.0
    assert kind == "ground" and len(marker) == 5 and apex.sum() == 1  # apex at the base joint
    assert np.allclose(marker[~apex, 1], marker[~apex, 1].min()) and marker[~apex, 1].min() < 0  # base along −y
    kind, plane = scene["slider (Plane)"]
    assert kind == "surface" and np.abs(plane[:, 1]).max() == 0.0  # the line y = 0 (normal y)
    kin = [res.system.trees[0].kinematics(q) for q in res.q]
    ends = np.array([k.p[1] + k.R[1] @ [1.0, 0, 0] for k in kin])  # the slider C over the run
    assert plane[:, 0].min() < ends[:, 0].min() and plane[:, 0].max() > ends[:, 0].max()
    assert set(np.asarray(mesh.cell_data["kind"])) <= set(io.SCENE_KINDS)
    before = (directory / "scene.vtp").read_text()
    assert io.write_link_pvd(directory, res) == [directory / "crank.pvd"]  # written again: the same file
    assert (directory / "scene.vtp").read_text() == before


def test_scenes_of_rails_cylinders_spheres_ground_points_and_clamps(tmp_path):
    from flexbody.mechanisms.flexible import cantilever

    directory = tmp_path / "particle"  # prismatic x on the ground, y on it, on a circle
    io.write_scene(directory, initial_results(fb.mechanisms.particle_on_circle(radius=1.0)))
    scene, _ = read_scene(directory)
    assert set(scene) == {"particle.x rail", "circle (Cylinder)"}
    kind, rail = scene["particle.x rail"]
    assert kind == "rail" and np.abs(rail[:, 1:]).max() == 0.0 and rail[0, 0] < rail[1, 0]
    kind, circle = scene["circle (Cylinder)"]
    assert kind == "surface" and np.allclose(np.linalg.norm(circle[:, :2], axis=1), 1.0)

    directory = tmp_path / "sphere"
    io.write_scene(directory, initial_results(fb.mechanisms.spatial_arm_on_sphere(radius=0.6, center=(0.4, 0, 0.3))))
    kind, sphere = read_scene(directory)[0]["sphere (Sphere)"]
    assert kind == "surface" and np.allclose(np.linalg.norm(sphere - [0.4, 0.0, 0.3], axis=1), 0.6)

    system = fb.mechanisms.branching_loops()
    directory = tmp_path / "feet"
    io.write_scene(directory, initial_results(system))
    scene = read_scene(directory)[0]
    for c in system.constraints:
        kind, points = scene[f"{c.name} ground point"]
        assert kind == "anchor" and np.allclose(points.mean(axis=0), c.b.origin)

    system = cantilever(size=(1.0, 0.05, 0.05), divisions=(4, 1, 1))
    directory = tmp_path / "clamp"
    io.write_scene(directory, initial_results(system))
    kind, plate = read_scene(directory)[0]["clamp"]
    assert kind == "ground" and np.allclose(plate[:, 0], plate[0, 0]) and -0.05 < plate[0, 0] < 0  # outside x = 0
    assert plate[:, 1].min() < 0 and plate[:, 1].max() > 0.05  # covers the clamped face


def test_scene_bounds_other_surfaces_and_nothing_to_draw(tmp_path, caplog):
    tree = fb.RigidTree("arm", gravity=(0, 0, 0))
    link = tree.add_link("l1", joint=fb.Revolute((0, 0, 1)), mass=1.0, com=(0.5, 0, 0))
    bowl = fb.ImplicitSurface(lambda x: [x[1]], lambda x: [[0, 1, 0]], lambda x: np.zeros((1, 3, 3)))
    results = initial_results(fb.System([tree], [fb.OnSurface(tree.point(link, (1, 0, 0)), bowl, name="bowl")]))
    with caplog.at_level("INFO", logger="flexbody.io"):
        path = io.write_scene(tmp_path, results, bounds=(-2, 2, -1, 1, 0, 0))
    assert "'bowl' (ImplicitSurface) is not drawn" in caplog.text
    scene = read_scene(tmp_path)[0]
    assert set(scene) == {"arm.l1 joint"} and path == tmp_path / "scene.vtp"
    marker = scene["arm.l1 joint"][1]
    assert np.isclose(np.sort(marker[:, 2]), [-0.05 * np.sqrt(20)] * 4 + [0.0]).all()  # −z without gravity, 5 % of L
    with pytest.raises(fb.FlexbodyError, match=r"write_scene: bounds must be 6 finite numbers .* got \(1, 0\)"):
        io.write_scene(tmp_path, results, bounds=(1, 0))
    mesh = fb.mesh.box((1.0, 0.1, 0.1), (2, 1, 1))
    free = fb.FlexibleBody("free", mesh, fb.StVenantKirchhoff(young=1e6, poisson=0.3, density=1000.0))
    assert io.write_scene(tmp_path, initial_results(fb.System([free]))) is None
    assert not (tmp_path / "scene.vtp").exists()  # the stale scene is gone


def test_screenshot_draws_the_scene(crank, tmp_path):
    _, directory = crank
    bare = tmp_path / "bare"
    shutil.copytree(directory, bare)
    (bare / "scene.vtp").unlink()
    import imageio.v3 as iio

    images = [
        iio.imread(view.screenshot(d, tmp_path / f"{d.name}.png", window_size=(240, 160)))[..., :3]
        for d in (directory, bare)
    ]
    assert np.mean(np.any(images[0] != images[1], axis=-1)) > 0.01  # the plane and the marker
    plotter = view._plotter((240, 160), True)
    grids = [s.read(0.0) for s in view._load(directory)]
    bounds = view._bounds(grids)
    scene_bounds = view._add_scene(plotter, directory, bounds)
    assert {"scene:ground", "scene:surface"} <= set(plotter.actors)
    plotter.close()
    huge = np.array([-1e3, 1e3, -1e3, 1e3, -1e3, 1e3])  # a huge plane: framed in part only
    framed = view._framed(bounds, huge)
    size = np.linalg.norm(bounds[1::2] - bounds[0::2])
    assert np.allclose(framed[0::2], bounds[0::2] - 0.5 * size)
    assert np.allclose(framed[1::2], bounds[1::2] + 0.5 * size)
    assert np.all(view._framed(bounds, scene_bounds)[0::2] <= bounds[0::2])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="X displays are a Linux matter")
def test_rendering_without_a_display_is_quiet(crank, tmp_path):
    """No "bad X server connection" from VTK when DISPLAY is unset, and the picture is still drawn."""
    _, directory = crank
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "VTK_DEFAULT_OPENGL_WINDOW")}
    code = "import sys; from flexbody import view; view.screenshot(sys.argv[1], sys.argv[2], window_size=(240, 160))"
    png = tmp_path / "quiet.png"
    run = subprocess.run(
        [sys.executable, "-c", code, str(directory), str(png)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert "X server" not in run.stderr and "WARN|" not in run.stderr, run.stderr
    assert image_stats(png)[1] > 0.005
