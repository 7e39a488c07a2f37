"""The recorder's column buffers, the run writer (background writes, failures) and the archives of
``io.results.save_npz`` (selective compression, loadable by ``np.load`` without pickles)."""

from __future__ import annotations

import threading
import zipfile
from types import SimpleNamespace

import numpy as np
import pytest

import flexbody as fb
from flexbody.errors import FlexbodyError
from flexbody.io.results import read_parts, save_npz
from flexbody.io.run_writer import RunWriter
from flexbody.solvers.recorder import Column, Columns, Recorder


def test_column_grows_and_gives_views_of_its_rows():
    column = Column()
    rows = np.arange(300.0).reshape(100, 3)
    for row in rows:
        column.append(row)
    assert len(column) == 100 and column.shape == (3,)
    np.testing.assert_array_equal(column.array(), rows)
    np.testing.assert_array_equal(column[10:20], rows[10:20])
    first = column[0:64]
    column.append(np.zeros(3))  # growing keeps earlier views valid
    np.testing.assert_array_equal(first, rows[:64])
    with pytest.raises(FlexbodyError, match="shape"):
        column.append(np.zeros(4))
    scalars = Column(())
    for value in (1, 2.5, np.float64(3.0), np.array(4)):
        scalars.append(value)
    np.testing.assert_array_equal(scalars.array(), [1.0, 2.5, 3.0, 4.0])
    copied = Column.of(rows)
    rows[0] = -1.0  # Column.of copies
    assert copied[0][0] == 0.0 and len(copied) == 100
    assert Column().array().shape == (0,) and Column((3,)).array().shape == (0, 3)


def test_columns_setdefault_makes_a_column_as_lists_did():
    rows = Columns()
    rows.setdefault("dt", []).append(np.array(1e-3))
    rows.setdefault("dt", []).append(2e-3)
    assert isinstance(rows["dt"], Column)
    np.testing.assert_array_equal(rows["dt"].array(), [1e-3, 2e-3])
    recorder = Recorder(SimpleNamespace(n_dofs=2), (1e-10, 1e-12), None, {})
    recorder.append("newton_iterations", 3)
    assert recorder.rows["newton_iterations"].array().tolist() == [3.0]


def _writer_threads() -> list:
    return [t for t in threading.enumerate() if t.name.startswith("flexbody-run-writer")]


def test_selective_archive_compresses_only_what_compresses_and_loads_without_pickles(tmp_path):
    rng = np.random.default_rng(1)
    arrays = {
        "q": rng.standard_normal((400, 60)),
        "tau": np.zeros((400, 60)),
        "rank": np.full(400, 6.0),
        "state": np.array('{"t": 1.0}'),
        "empty": np.zeros((0, 3)),
    }
    for mode in ("stored", "deflate", "selective"):
        save_npz(tmp_path / f"{mode}.npz", arrays, compression=mode)
        with np.load(tmp_path / f"{mode}.npz", allow_pickle=False) as data:
            assert sorted(data.files) == sorted(arrays)
            for key, value in arrays.items():
                np.testing.assert_array_equal(data[key], value)
                assert data[key].dtype == value.dtype and data[key].shape == value.shape
        with zipfile.ZipFile(tmp_path / f"{mode}.npz") as archive:
            kinds = {info.filename: info.compress_type for info in archive.infolist()}
        if mode == "selective":
            assert kinds["q.npy"] == zipfile.ZIP_STORED and kinds["empty.npy"] == zipfile.ZIP_STORED
            assert kinds["tau.npy"] == zipfile.ZIP_DEFLATED and kinds["rank.npy"] == zipfile.ZIP_DEFLATED
        else:
            expected = zipfile.ZIP_STORED if mode == "stored" else zipfile.ZIP_DEFLATED
            assert set(kinds.values()) == {expected}
    with pytest.raises(FlexbodyError, match="compression"):
        save_npz(tmp_path / "x.npz", arrays, compression="zip")
    with pytest.raises(ValueError):  # objects would need pickles: refused
        save_npz(tmp_path / "x.npz", {"o": np.array([{"a": 1}], dtype=object)})


def _run(tmp_path):
    asm = fb.mechanisms.slider_crank().assemble()
    return asm, fb.simulate(asm, 0.05, integrator=fb.RK4(dt=1e-3), save_to=tmp_path / "run", save_every=7)


def test_saved_results_are_selectively_compressed_and_old_archives_still_load(tmp_path):
    _asm, res = _run(tmp_path)
    assert not _writer_threads()
    with zipfile.ZipFile(tmp_path / "run" / "results.npz") as archive:
        kinds = {info.filename: info.compress_type for info in archive.infolist()}
    assert kinds["history__rank.npy"] == zipfile.ZIP_DEFLATED  # constant: compresses
    back = fb.Results.load(tmp_path / "run")
    np.testing.assert_array_equal(back.q, res.q)
    for key, value in res.histories.items():
        np.testing.assert_array_equal(back.histories[key], value)

    # a results.npz written by np.savez_compressed (as before) loads the same
    with np.load(tmp_path / "run" / "results.npz") as data:
        arrays = {key: data[key] for key in data.files}
    np.savez_compressed(tmp_path / "run" / "results.npz", **arrays)
    old = fb.Results.load(tmp_path / "run")
    np.testing.assert_array_equal(old.q, res.q)
    np.testing.assert_array_equal(old.v, res.v)


class _Recorder(SimpleNamespace):
    """The part of a recorder a RunWriter reads."""


def _recorder(n_rows: int, n: int = 2):
    rows = Columns(t=Column(()), q=Column((n,)), v=Column((n,)))
    for k in range(n_rows):
        rows["t"].append(0.1 * k)
        rows["q"].append(np.full(n, k))
        rows["v"].append(np.full(n, -k))
        rows.setdefault("a").append(np.full(n, 2 * k))
    return _Recorder(
        rows=rows,
        dropped=set(),
        events=[],
        metadata={"integrator": "RK4"},
        part_slices=dict,
        asm=SimpleNamespace(n_dofs=n),
        rank0=1,
        rank_prev=1,
        t_last=0.0,
    )


def test_a_failed_background_write_is_reported_and_its_rows_written_again(tmp_path):
    recorder = _recorder(5)
    writer = RunWriter.create(tmp_path, save_every=5)
    (tmp_path / "parts").write_text("not a directory")  # the part cannot be written
    writer.write(recorder, {"integrator": "RK4", "t": 0.4}, {"q": np.zeros(2), "v": np.zeros(2)})
    with pytest.raises(FlexbodyError, match="cannot write the run"):
        writer.flush()
    assert (writer.n_parts, writer.written) == (0, 0) and not (tmp_path / "checkpoint.npz").exists()
    (tmp_path / "parts").unlink()
    for k in range(5, 8):
        recorder.rows["t"].append(0.1 * k)
        recorder.rows["q"].append(np.full(2, k))
        recorder.rows["v"].append(np.full(2, -k))
        recorder.rows["a"].append(np.full(2, 2 * k))
    writer.write(recorder)
    writer.close()
    assert (writer.n_parts, writer.written) == (1, 8)
    arrays, histories = read_parts(tmp_path, ["parts/part_00001.npz"], 2)
    np.testing.assert_array_equal(arrays["times"], 0.1 * np.arange(8))
    np.testing.assert_array_equal(histories["a"][:, 0], 2.0 * np.arange(8))
    partial = fb.Results.load(tmp_path)
    assert partial.metadata["complete"] is False and partial.n_steps == 8


def test_writes_in_the_background_keep_their_order_and_rows(tmp_path):
    recorder = _recorder(0)
    writer = RunWriter.create(tmp_path, save_every=3)
    for k in range(10):
        recorder.rows["t"].append(0.1 * k)
        recorder.rows["q"].append(np.full(2, k))
        recorder.rows["v"].append(np.full(2, -k))
        recorder.rows.setdefault("a").append(np.full(2, 2 * k))
        if writer.due(recorder):
            writer.write(
                recorder,
                {"integrator": "RK4", "k": k, "t": 0.1 * k},
                {"q": recorder.rows["q"][k], "v": recorder.rows["v"][k]},
            )
    writer.fail(recorder)  # writes the last row, waits, stops the thread
    assert writer.n_parts == 4 and not _writer_threads()
    partial = fb.Results.load(tmp_path)
    np.testing.assert_array_equal(partial.q[:, 0], np.arange(10.0))
    with np.load(tmp_path / "checkpoint.npz") as data:
        assert '"rows": 9' in str(data["state"]) and data["q"][0] == 8.0
