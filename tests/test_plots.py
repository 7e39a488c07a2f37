"""Tests of flexbody.io.plots: history panels, torque-norm comparison, RMS and peak norms (synthetic results), units
on every axis of the history panels (short real runs) and of the cases' own figures (synthetic inputs)."""

import re

import numpy as np
import pytest
from case_files import load

import flexbody as fb
from flexbody import control as ctl
from flexbody import mechanisms, plots
from flexbody.control.tasks import PlanarOrientationTask, PointTask, StackedTask
from flexbody.errors import FlexbodyError
from flexbody.io.plots import (
    MAX_LEGEND,
    PANELS,
    _build_histories_figure,
    _torque_series,
    peak_norm,
    plot_histories,
    plot_torque_norms,
    rms_norm,
)
from flexbody.io.results import Results

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def make_results(n_steps=101, histories=None, metadata=None, n_rows=2):
    """Synthetic dynamic run: 3 coordinates (the middle one passive), n_rows constraint rows, 2 tasks."""
    t = np.linspace(0.0, 2.0, n_steps)
    q = np.column_stack([np.sin(t), 0.5 * t, np.cos(2 * t)])
    tau = np.column_stack([np.cos(t), np.zeros_like(t), -np.sin(3 * t)])
    lam = np.column_stack([np.sin((i + 1) * t) for i in range(n_rows)])
    x = np.column_stack([np.sin(t), np.cos(t)])
    xd = x + 0.05
    default = {
        "tau": tau,
        "lam": lam,
        "constraint_force": tau * 0.1,
        "violation": np.where(t > 0.1, 1e-9 * (1 + t), 0.0),
        "energy": 1.0 + 1e-6 * t,
        "tau_k": tau[:, [0, 2]],
        "task_x": x,
        "task_desired": xd,
        "task_error": xd - x,
    }
    meta = {
        "coordinate_labels": ["shoulder", "elbow", "wrist"],
        "row_labels": [f"loop.{i}" for i in range(n_rows)],
        "actuated_labels": ["shoulder", "wrist"],
        "task_labels": ["tip.x", "tip.y"],
    }
    return Results(
        kind="dynamic",
        times=t,
        q=q,
        slices={},
        v=np.gradient(q, t, axis=0),
        histories=default if histories is None else histories,
        metadata=meta if metadata is None else metadata,
    )


def assert_png(path):
    assert path.is_file()
    data = path.read_bytes()
    assert data.startswith(PNG_SIGNATURE) and len(data) > 5000


def test_default_panels_write_png_and_create_directory(tmp_path):
    out = plot_histories(make_results(), tmp_path / "figs" / "sub" / "run.png", title="synthetic")
    assert out == tmp_path / "figs" / "sub" / "run.png"
    assert_png(out)


def test_all_panels_without_labels(tmp_path):
    res = make_results(metadata={})
    assert_png(plot_histories(res, tmp_path / "all.png", NO_CONTACT_PANELS, time_range=(0.5, 1.5), dpi=60))
    fig = _build_histories_figure(res, ("task", "constraint_force"), None, None)
    legends = [[t.get_text() for t in ax.get_legend().get_texts()] for ax in fig.axes]
    assert legends == [["x0", "x1"], ["λ0", "λ1"]]


def test_missing_history_raises_before_writing(tmp_path):
    hist = {k: v for k, v in make_results().histories.items() if not k.startswith("task")}
    res = make_results(histories=hist)
    path = tmp_path / "out" / "missing.png"
    with pytest.raises(FlexbodyError) as err:
        plot_histories(res, path, ("torque", "task", "bogus", "energy"))
    msg = str(err.value)
    assert "'task'" in msg and "task_x" in msg and "'bogus'" in msg and "available histories" in msg
    assert "lam" in msg and "energy" in msg
    assert not path.exists() and not path.parent.exists()


def test_bad_time_range(tmp_path):
    with pytest.raises(FlexbodyError, match="time_range"):
        plot_histories(make_results(), tmp_path / "x.png", time_range=(5.0, 6.0))
    assert not (tmp_path / "x.png").exists()


def test_torque_series_prefers_actuator_inputs():
    labels, data, zero = _torque_series(make_results())
    assert labels == ["shoulder", "wrist"] and data.shape == (101, 2) and zero == []


def test_torque_series_omits_passive_zero_columns():
    res = make_results()
    del res.histories["tau_k"]
    labels, data, zero = _torque_series(res)
    assert labels == ["shoulder", "wrist"] and zero == ["elbow"]
    np.testing.assert_array_equal(data, res.histories["tau"][:, [0, 2]])
    fig = _build_histories_figure(res, ("torque",), None, None)
    legend = fig.axes[0].get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["shoulder", "wrist"]
    assert "zero: elbow" in legend.get_title().get_text()


def test_legend_is_truncated():
    res = make_results(n_rows=20)
    fig = _build_histories_figure(res, ("constraint_force",), None, None)
    ax = fig.axes[0]
    assert len(ax.get_lines()) == 20
    assert len(ax.get_legend().get_texts()) == MAX_LEGEND
    assert "+8 more" in ax.get_legend().get_title().get_text()


def test_plot_torque_norms(tmp_path):
    runs = {"computed torque": make_results(), "projected": make_results(n_steps=51)}
    assert_png(plot_torque_norms(runs, tmp_path / "cmp" / "norms.png"))
    with pytest.raises(FlexbodyError, match="tau_q"):
        plot_torque_norms(runs, tmp_path / "bad.png", key="tau_q")
    assert not (tmp_path / "bad.png").exists()


def run_with(u, t):
    return Results(
        kind="dynamic",
        times=t,
        q=np.zeros((len(t), 1)),
        slices={},
        v=np.zeros((len(t), 1)),
        histories={"tau": u},
        metadata={},
    )


def test_rms_norm():
    t = np.linspace(0.0, 2 * np.pi, 2001)
    assert rms_norm(run_with(np.column_stack([np.sin(t), np.cos(t)]), t)) == pytest.approx(1.0, abs=1e-6)
    const = np.tile([3.0, 4.0], (len(t), 1))
    assert rms_norm(run_with(const, t)) == pytest.approx(5.0, abs=1e-12)


def test_peak_norm():
    t = np.linspace(0.0, 2 * np.pi, 2001)
    assert peak_norm(run_with(np.column_stack([np.sin(t), -2 * np.cos(t)]), t)) == pytest.approx(2.0, abs=1e-12)


def test_norm_errors():
    t = np.linspace(0.0, 1.0, 5)
    res = run_with(np.ones((5, 2)), t)
    with pytest.raises(FlexbodyError, match="tau_k"):
        rms_norm(res, key="tau_k")
    with pytest.raises(FlexbodyError, match="tau_k"):
        peak_norm(res, key="tau_k")
    short = run_with(np.ones((1, 2)), t[:1])
    with pytest.raises(FlexbodyError, match="at least 2"):
        rms_norm(short)
    with pytest.raises(FlexbodyError, match="at least 2"):
        peak_norm(short)


def test_case_figure_helpers_leave_no_pyplot_state(tmp_path):
    """plots.subplots/save (used by the case files): an Agg figure written to PNG, no pyplot figure left open."""
    import matplotlib.pyplot as plt

    from flexbody import plots

    open_before = plt.get_fignums()
    fig, axes = plots.subplots(2, 2, figsize=(4, 3), sharex=True)
    assert axes.shape == (2, 2) and tuple(fig.get_size_inches()) == (4.0, 3.0)
    axes[0, 0].plot([0, 1], [0, 1])
    path = plots.save(fig, tmp_path / "f.png", dpi=50)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert plt.get_fignums() == open_before


# ------------------------------------------------------------------------------------ units on every axis

UNIT_LABEL = re.compile(r"^(?P<quantity>\S(?:.*\S)?) \[(?P<units>[^\[\]]+)\]$")


def label_units(label: str, where: str = "") -> list[str]:
    """The unit list of a "quantity [unit, unit]" axis label (asserts the form)."""
    match = UNIT_LABEL.match(label)
    assert match, f"{where}: axis label {label!r} is not 'quantity [unit]'"
    return match["units"].split(", ")


def panel_labels(results, panels):
    fig = _build_histories_figure(results, panels, None, None)
    assert fig.axes[-1].get_xlabel() == "t [s]"
    return dict(zip(panels, fig.axes))


@pytest.fixture(scope="module")
def chain_run():
    """A rigid run with a PointTask controller: DE's coupled chain, end point to a goal (couplings in rad)."""
    asm = mechanisms.coupled_chain().assemble()
    tree = asm.trees[0]
    task = PointTask(tree.point(tree.link("l6"), (0.4, 0.0, 0.0)), components=(0, 1), name="end")
    controller = ctl.PartitionedControl(task, ctl.Setpoint([0.0, 1.4]), 100.0, 20.0)
    return fb.simulate(asm, 0.04, integrator=fb.RK4(dt=4e-3), controller=controller)


@pytest.fixture(scope="module")
def rail_run():
    """A StackedTask of a PointTask [m] and a PlanarOrientationTask [rad] on the arm held on a line."""
    asm = mechanisms.planar_arm_on_line().assemble()
    tree = asm.trees[0]
    task = StackedTask(
        [
            PointTask(tree.point("l3", (0.6, 0, 0)), components=(0,), name="x"),
            PlanarOrientationTask(tree.frame("l3"), name="theta"),
        ]
    )
    controller = ctl.ProjectedInverseDynamicsControl(task, [[0.5], -0.3], 25.0, 10.0)
    return fb.simulate(asm, 0.04, integrator=fb.RK4(dt=4e-3), controller=controller)


@pytest.fixture(scope="module")
def slide_run():
    """Revolute, prismatic, revolute, revolute joints; a planar loop closure [m] and a joint driver [rad]."""
    z = (0.0, 0.0, 1.0)
    tree = fb.RigidTree("arm", gravity=(0.0, -9.81, 0.0))
    l1 = tree.add_link("shoulder", joint=fb.Revolute(z), mass=1.0, com=(0.2, 0, 0))
    l2 = tree.add_link("slide", l1, fb.Prismatic((1, 0, 0)), origin=(0.3, 0, 0), mass=0.5, com=(0.1, 0, 0))
    l3 = tree.add_link("elbow", l2, fb.Revolute(z), origin=(0.2, 0, 0), mass=0.5, com=(0.2, 0, 0))
    l4 = tree.add_link("wrist", l3, fb.Revolute(z), origin=(0.4, 0, 0), mass=0.3, com=(0.15, 0, 0))
    q0 = np.array([0.3, 0.1, 0.4, -0.5])
    kin = tree.kinematics(q0)
    tip = kin.p[l4.index] + kin.R[l4.index] @ np.array([0.3, 0.0, 0.0])
    system = fb.System(
        [tree],
        [
            fb.PointToPoint(tree.point(l4, (0.3, 0, 0)), fb.Ground(tip), components=(0, 1), name="tip"),
            fb.JointDriver(l1, 0.3, name="hold"),
        ],
        q0=q0,
    )
    return fb.simulate(system.assemble(), 0.04, integrator=fb.RK4(dt=4e-3), tau=np.array([0.0, 2.0, 0.3, 0.1]))


NO_CONTACT_PANELS = tuple(p for p in PANELS if p != "contacts")  # a run without contacts has no contact history


def test_every_panel_of_a_point_task_run_names_its_unit(chain_run):
    axes = panel_labels(chain_run, NO_CONTACT_PANELS)
    expected = {
        "task": ["m"],
        "task_error": ["m"],
        "torque": ["N·m"],
        "constraint_force": ["N·m"],
        "joints": ["rad"],
        "violation": ["rad"],
        "energy": ["J"],
    }
    assert {p: label_units(ax.get_ylabel()) for p, ax in axes.items()} == expected
    assert UNIT_LABEL.match(axes["task"].get_ylabel())["quantity"] == "task coordinates"
    legend = [t.get_text() for t in axes["task"].get_legend().get_texts()]
    assert legend == ["end.x", "end.y"]  # one unit: the axis carries it


def test_mixed_task_units_are_listed_and_carried_by_the_legend(rail_run):
    axes = panel_labels(rail_run, ("task", "task_error", "torque", "constraint_force", "violation"))
    assert axes["task"].get_ylabel() == "task coordinates [m, rad]"
    assert axes["task_error"].get_ylabel() == "task error [m, rad]"
    assert [t.get_text() for t in axes["task"].get_legend().get_texts()] == ["x.x [m]", "theta.rz [rad]"]
    assert axes["torque"].get_ylabel() == "actuator inputs u [N·m]"
    assert axes["constraint_force"].get_ylabel() == "multipliers λ [N]"  # the line is a position row
    assert axes["violation"].get_ylabel() == "constraint violation ‖φ‖ [m]"


def test_revolute_prismatic_run_with_mixed_rows(slide_run):
    assert slide_run.metadata["coordinate_units"] == ["rad", "m", "rad", "rad"]
    axes = panel_labels(slide_run, ("torque", "constraint_force", "joints", "violation", "energy"))
    units = {p: label_units(ax.get_ylabel()) for p, ax in axes.items()}
    assert units == {
        "torque": ["N", "N·m"],
        "constraint_force": ["N", "N·m"],
        "joints": ["rad", "m"],
        "violation": ["m", "rad"],
        "energy": ["J"],
    }
    legends = {p: [t.get_text() for t in axes[p].get_legend().get_texts()] for p in ("torque", "constraint_force")}
    assert legends["constraint_force"] == ["tip.x [N]", "tip.y [N]", "hold.q [N·m]"]
    assert legends["torque"] == ["arm.slide [N]", "arm.elbow [N·m]", "arm.wrist [N·m]"]  # shoulder: τ ≡ 0
    assert plots.history_units(slide_run, "q") == ["rad", "m", "rad", "rad"]
    assert plots.history_units(slide_run, "lam") == ["N", "N", "N·m"]


def test_runs_saved_without_units_say_the_unit_is_unknown():
    axes = panel_labels(make_results(), NO_CONTACT_PANELS)
    units = {p: label_units(ax.get_ylabel()) for p, ax in axes.items()}
    assert units == {
        "task": ["m or rad"],
        "task_error": ["m or rad"],
        "torque": ["N or N·m"],
        "constraint_force": ["N or N·m"],
        "joints": ["m or rad"],
        "violation": ["m or rad"],
        "energy": ["J"],
    }
    assert plots.history_units(make_results(), "q") is None


def test_torque_norm_label_has_the_units_of_the_non_zero_columns(tmp_path, slide_run, chain_run, monkeypatch):
    figures = capture_figures(monkeypatch)
    plot_torque_norms({"chain": chain_run}, tmp_path / "chain.png")
    plot_torque_norms({"slide": slide_run}, tmp_path / "slide.png")
    plot_torque_norms({"old": make_results()}, tmp_path / "old.png", key="tau_k")
    assert [fig.axes[0].get_ylabel() for fig in figures] == ["‖τ‖ [N·m]", "‖τ‖ [N, N·m]", "‖u‖ [N or N·m]"]


def capture_figures(monkeypatch, write: bool = True) -> list:
    """Figures passed to plots.save / plots._save and to the writer of fb.plots.plot_curves / plot_mode_shapes
    from now on, in a list (and written unless ``write`` is False: the labels are set before saving, and drawing
    a PNG is the slow part)."""
    figures = []
    for name in ("save", "_save"):
        original = getattr(plots, name)

        def keep(fig, path, *args, _original=original, **kwargs):
            figures.append(fig)
            return _original(fig, path, *args, **kwargs) if write else path

        monkeypatch.setattr(plots, name, keep)
    from flexbody.io import figures as shared  # fb.plots.plot_curves, plot_mode_shapes

    def keep_shared(fig, path, dpi, _original=shared._write):
        figures.append(fig)
        return _original(fig, path, dpi) if write else path

    monkeypatch.setattr(shared, "_write", keep_shared)
    return figures


def assert_axes_labelled(fig, where: str) -> None:
    """Every visible axis of ``fig`` has a "quantity [unit]" y label, and an x label unless it shares x with
    a labelled axis below it (its tick labels hidden); every colour bar has a label too."""
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        title = f"{where}, axes {ax.get_title()!r}"
        if getattr(ax, "_colorbar", None) is not None:  # a colour bar: its long axis
            bar = ax._colorbar
            label_units(ax.get_ylabel() if bar.orientation == "vertical" else ax.get_xlabel(), title)
            continue
        label_units(ax.get_ylabel(), title)
        shared = [other for other in ax.get_shared_x_axes().get_siblings(ax) if other is not ax]
        if ax.get_xlabel() or not shared:
            label_units(ax.get_xlabel(), title)
        else:
            assert any(UNIT_LABEL.match(other.get_xlabel()) for other in shared), f"{title}: no x label"


# ----------------------------------------------------------------------- the cases' own figures (synthetic)


def synthetic_run(n_q=3, n_tau=None, n_task=2, n_rows=1, steps=21, metadata=None, **extra):
    """A small Results with the histories the case plots read (values are smooth, not physical)."""
    t = np.linspace(0.0, 1.0, steps)
    wave = lambda k: np.column_stack([np.sin((i + 1) * t) + 0.1 * i for i in range(k)])  # noqa: E731
    n_tau = n_q if n_tau is None else n_tau
    energy = 1.0 - 0.01 * t
    hist = {
        "task_x": wave(n_task),
        "task_desired": wave(n_task) + 0.1,
        "task_error": 0.1 - 0.01 * wave(n_task),
        "tau": wave(n_tau),
        "tau_k": wave(n_tau),
        "lam": wave(n_rows),
        "constraint_force": wave(n_q),
        "violation": 1e-9 * (1 + t),
        "energy": energy,
        "kinetic": 0.5 + 0.1 * np.sin(t),
        "dissipated": 0.01 * t,
        "applied_work": 0.02 * t,
        **extra,
    }
    return Results(
        kind="dynamic", times=t, q=wave(n_q), slices={}, v=np.cos(wave(n_q)), histories=hist, metadata=metadata or {}
    )


def case_figure_calls(tmp_path):
    """(case file, callable drawing its figures) for every case that writes figures of its own."""
    from types import SimpleNamespace

    out = tmp_path
    calls = []
    run = synthetic_run()
    decomposition = {
        k: np.array([0.3, -0.9])
        for k in ("q", "e_par", "e_perp", "f", "f_par", "f_perp", "constraint_force", "F_aghili")
    }
    decomposition.update(t=0.0, err_force=1e-12)
    c04 = load("04_particle_on_circle.py")
    calls.append(
        (
            "04",
            lambda: c04.plot(
                out / "04.png", synthetic_run(n_q=2), [decomposition, decomposition], run.times, 1e-6 * run.times
            ),
        )
    )
    c05 = load("05_slider_crank.py")
    calls.append(("05", lambda: c05.plot(out / "05.png", synthetic_run(n_q=2), [0.5])))
    c06 = load("06_redundant_four_bar.py")
    calls.append(("06", lambda: c06.plot(out / "06.png", run, run, run)))
    c07 = load("07_coupled_chain_control.py")
    chain = synthetic_run(n_q=6)
    calls.append(("07", lambda: c07.plot(out / "07.png", chain, chain, 1.0 + run.times, 1.0 + run.times, 0.1)))
    c08 = load("08_parallel_platform_control.py")
    labels = [f"leg{i}.l{j}" for i in range(3) for j in range(2)] + ["platform.x", "platform.y", "platform.rz"]
    units = ["rad"] * 6 + ["m", "m", "rad"]
    meta = {"coordinate_labels": labels, "coordinate_units": units}
    runs08 = {
        "elbows": synthetic_run(
            n_q=9, n_task=3, metadata={**meta, "task_labels": ["e.a", "e.b", "e.c"], "task_units": ["rad"] * 3}
        ),
        "platform": synthetic_run(
            n_q=9, n_task=3, metadata={**meta, "task_labels": ["p.x", "p.y", "p.rz"], "task_units": ["m", "m", "rad"]}
        ),
    }
    calls.append(("08", lambda: c08.plot(out / "08.png", runs08, labels)))
    c09 = load("09_underactuated_chain_control.py")
    calls.append(("09", lambda: c09.plot(out / "09.png", run, run.times, 0.5 + run.times)))
    c11 = load("11_arm_on_slider_control.py")
    xs = {name: np.column_stack([run.times, -run.times]) for name in ("pidc", "hybrid", "idc")}
    series = dict.fromkeys(("pidc", "hybrid", "idc"), run.times)
    calls.append(("11", lambda: c11.plot_fig8(out / "11.png", run.times, xs["idc"], xs, series, series, "fig 8")))
    c12 = load("12_flexible_pendulum.py")
    coms = {"a": np.column_stack([0.1 * run.times, 0 * run.times, -1.0 + 0 * run.times])}
    calls.append(
        (
            "12",
            lambda: (c12.plot_energy(out / "12e.png", {"a": run}), c12.plot_swing(out / "12s.png", {"a": run}, coms)),
        )
    )
    c13 = load("13_plate_pendulum.py")
    calls.append(
        (
            "13",
            lambda: (
                c13.plot_energy(out / "13e.png", {"a": run}),
                c13.plot_corner(out / "13c.png", {"a": run}, {"a": {"corner": run.times}}),
            ),
        )
    )
    c14 = load("14_arm_with_beam.py")
    calls.append(
        (
            "14",
            lambda: (
                c14.plot_energy(out / "14e.png", {1: (run, run)}),
                c14.plot_joints(out / "14j.png", {1: (run, run)}),
            ),
        )
    )
    c15 = load("15_beam_tip_inverse_statics.py")
    beam = _Servo()  # any object: the fake names no body
    asm15 = SimpleNamespace(bodies=[beam], coordinates=lambda body, q: np.reshape(q, (-1, 3)))
    servo = _Servo()
    st = {
        "start": SimpleNamespace(q=np.zeros(3)),
        "sequence": SimpleNamespace(histories={"task_x": np.ones((3, 2))}),
        "target": (1.0, 0.5),
    }
    calls.append(
        (
            "15",
            lambda: c15._plot(
                out, asm15, None, st, synthetic_run(n_q=3), np.ones((21, 2)), 1e-3 * (1 + run.times), servo
            ),
        )
    )
    c16 = load("16_arm_beam_task_control.py")
    reference = lambda t: (np.array([0.5, 0.2]), None, None)  # noqa: E731
    calls.append(
        (
            "16",
            lambda: (
                c16.plot_task(out / "16t.png", run, reference, 2.0, (0.01, 0.02), 0.5),
                c16.plot_tip(out / "16d.png", run.times, np.ones((21, 2))),
            ),
        )
    )
    return calls


class _Servo:
    """Stand-in of case 15's servo: two joints, constant references."""

    t_move = 0.5
    S = np.eye(2)

    def __call__(self, t, q, v):
        return np.array([1.0, 2.0])

    def references(self, t):
        return np.array([1.0, 2.0]), None


def test_every_case_figure_labels_its_axes_with_units(tmp_path, monkeypatch):
    """The figures the cases draw themselves (on small synthetic runs): every axis "quantity [unit]"."""
    figures = capture_figures(monkeypatch, write=False)
    for name, draw in case_figure_calls(tmp_path):
        start = len(figures)
        draw()
        assert len(figures) > start, f"case {name} drew no figure"
        for fig in figures[start:]:
            assert_axes_labelled(fig, f"case {name}")


# --------------------------------------------------------------------------- the figures the cases share


def test_plot_curves_draws_panels_with_references_and_units(tmp_path, monkeypatch):
    """fb.plots.plot_curves: one axis per panel with its curves and dotted black references, every axis
    "quantity [unit]"; a label without its unit or a panel without curves is refused before anything is drawn."""
    from flexbody.io import figures

    drawn = []
    monkeypatch.setattr(figures, "_write", lambda fig, path, dpi: drawn.append(fig) or path)
    t = np.linspace(0.0, 1.0, 11)
    panels = [
        {"ylabel": "angle [rad]", "curves": {"run": (t, np.sin(t))}, "references": {"closed form": (t, t)}},
        {"ylabel": "error [m]", "curves": {"a": (t, 1e-3 * t), "b": (t, 0.0 * t)}, "log": True, "title": "errors"},
        {"ylabel": "z [m]", "xlabel": "x [m]", "curves": {"path": (np.cos(t), np.sin(t))}, "equal": True},
    ]
    plots.plot_curves(tmp_path / "c.png", panels, columns=2, title="three panels")
    (fig,) = drawn
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert len(visible) == 3 and len(fig.axes) == 4  # 2 × 2 grid, the last one hidden
    assert_axes_labelled(fig, "plot_curves")
    assert [len(ax.get_lines()) for ax in visible] == [2, 2, 1]
    assert visible[0].get_lines()[1].get_color() == "k" and visible[0].get_lines()[1].get_linestyle() == ":"
    assert visible[1].get_yscale() == "log" and visible[2].get_xlabel() == "x [m]"
    with pytest.raises(FlexbodyError, match="quantity \\[unit\\]"):
        plots.plot_curves(tmp_path / "d.png", [{"ylabel": "angle", "curves": {"a": (t, t)}}])
    with pytest.raises(FlexbodyError, match="no curves"):
        plots.plot_curves(tmp_path / "d.png", [{"ylabel": "angle [rad]", "curves": {}}])
    with pytest.raises(FlexbodyError, match="at least one panel"):
        plots.plot_curves(tmp_path / "d.png", [])
    assert len(drawn) == 1 and not (tmp_path / "d.png").exists()
    monkeypatch.undo()
    assert_png(plots.plot_curves(tmp_path / "sub" / "e.png", panels[:1]))


def test_plot_mode_shapes_draws_each_mode_in_the_plane_it_moves_in(tmp_path, monkeypatch):
    """fb.plots.plot_mode_shapes on the arm with its beam: one panel per mode, labelled in metres; the first
    (in-plane swing) is drawn in the xz-plane, the out-of-plane bending in the xy-plane."""
    from flexbody.io import figures

    drawn = []
    monkeypatch.setattr(figures, "_write", lambda fig, path, dpi: drawn.append(fig) or path)
    asm = mechanisms.arm_with_beam(divisions=(3, 1, 1), locked=True).assemble()
    modes = fb.modal_analysis(asm, n_modes=3)
    plots.plot_mode_shapes(modes, tmp_path / "m.png", columns=2)
    (fig,) = drawn
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert len(visible) == 3
    assert_axes_labelled(fig, "plot_mode_shapes")
    planes = {(ax.get_xlabel(), ax.get_ylabel()) for ax in visible}
    assert planes == {("x [m]", "y [m]"), ("x [m]", "z [m]")}, planes
    monkeypatch.undo()
    assert_png(plots.plot_mode_shapes(modes, tmp_path / "n.png"))
