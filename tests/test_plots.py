"""Tests of flexbody.plots: history panels, torque-norm comparison, RMS and peak norms (synthetic results)."""
import numpy as np
import pytest

from flexbody.errors import FlexbodyError
from flexbody.plots import (MAX_LEGEND, PANELS, _build_histories_figure, _torque_series, peak_norm,
                            plot_histories, plot_torque_norms, rms_norm)
from flexbody.results import Results

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def make_results(n_steps=101, histories=None, metadata=None, n_rows=2):
    """Synthetic dynamic run: 3 coordinates (the middle one passive), n_rows constraint rows, 2 tasks."""
    t = np.linspace(0.0, 2.0, n_steps)
    q = np.column_stack([np.sin(t), 0.5 * t, np.cos(2 * t)])
    tau = np.column_stack([np.cos(t), np.zeros_like(t), -np.sin(3 * t)])
    lam = np.column_stack([np.sin((i + 1) * t) for i in range(n_rows)])
    x = np.column_stack([np.sin(t), np.cos(t)])
    xd = x + 0.05
    default = {"tau": tau, "lam": lam, "constraint_force": tau * 0.1,
               "violation": np.where(t > 0.1, 1e-9 * (1 + t), 0.0), "energy": 1.0 + 1e-6 * t,
               "tau_k": tau[:, [0, 2]], "task_x": x, "task_desired": xd, "task_error": xd - x}
    meta = {"coordinate_labels": ["shoulder", "elbow", "wrist"], "row_labels": [f"loop.{i}" for i in range(n_rows)],
            "actuated_labels": ["shoulder", "wrist"], "task_labels": ["tip.x", "tip.y"]}
    return Results(kind="dynamic", times=t, q=q, body_slices={}, v=np.gradient(q, t, axis=0),
                   histories=default if histories is None else histories,
                   metadata=meta if metadata is None else metadata)


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
    assert_png(plot_histories(res, tmp_path / "all.png", PANELS, time_range=(0.5, 1.5), dpi=60))
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
    return Results(kind="dynamic", times=t, q=np.zeros((len(t), 1)), body_slices={}, v=np.zeros((len(t), 1)),
                   histories={"tau": u}, metadata={})


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
