"""Threads of the element kernels (issue 18): how many, and that their number never changes a result.

* ``kernel_threads`` takes the smallest of the CPUs in the process's affinity mask, numba's thread count (a
  user's lower setting holds) and the cap from the element count;
* the blocks of a colour share no node, and every element is in exactly one block; a numbering without locality
  (one block per colour) runs serially;
* serial and parallel assembly give the same force (bitwise, for the SVK fast path and the generic kernel);
* the specialised SVK 8-node kernel gives bitwise the generic element force.
"""

from pathlib import Path

import numba as nb
import numpy as np
import pytest

import flexbody as fb
import flexbody.fem.flexible_body as flexible
from flexbody.fem import kernels, patterns
from flexbody.fem.svk_hex8 import svk_hex8_forces

PER_THREAD = flexible.FORCE_ELEMENTS_PER_THREAD
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def machine(monkeypatch):
    """Pretend the process may run on ``cpus`` CPUs and numba has ``threads`` threads: machine(cpus, threads)."""

    def set_machine(cpus, threads):
        monkeypatch.setattr(flexible.os, "sched_getaffinity", lambda pid: set(range(cpus)), raising=False)
        monkeypatch.setattr(flexible.nb, "get_num_threads", lambda: threads)

    return set_machine


# ---------------------------------------------------------------- how many threads
def test_threads_are_capped_by_the_element_count(machine):
    machine(cpus=8, threads=8)
    assert flexible.kernel_threads(0) == 1
    assert flexible.kernel_threads(2 * PER_THREAD - 1) == 1  # a second thread must have its share
    assert flexible.kernel_threads(2 * PER_THREAD) == 2
    assert flexible.kernel_threads(5 * PER_THREAD + 1) == 5
    assert flexible.kernel_threads(100 * PER_THREAD) == 8
    assert flexible.kernel_threads(600, elements_per_thread=200) == 3  # the matrix kernels' smaller share


def test_threads_are_capped_by_the_cpu_affinity(machine):
    machine(cpus=1, threads=8)  # e.g. taskset -c 0
    assert flexible.kernel_threads(100 * PER_THREAD) == 1
    machine(cpus=3, threads=8)
    assert flexible.kernel_threads(100 * PER_THREAD) == 3


def test_a_lower_numba_setting_of_the_user_holds(machine):
    machine(cpus=8, threads=2)  # NUMBA_NUM_THREADS=2 or set_num_threads(2)
    assert flexible.kernel_threads(100 * PER_THREAD) == 2
    machine(cpus=8, threads=1)
    assert flexible.kernel_threads(100 * PER_THREAD) == 1


def test_the_cpu_count_stands_in_where_there_is_no_affinity_mask(monkeypatch):
    monkeypatch.delattr(flexible.os, "sched_getaffinity", raising=False)  # macOS, Windows
    monkeypatch.setattr(flexible.os, "cpu_count", lambda: 3)
    monkeypatch.setattr(flexible.nb, "get_num_threads", lambda: 8)
    assert flexible.kernel_threads(100 * PER_THREAD) == 3


def test_the_real_numba_setting_is_read_and_restored_by_the_kernels():
    previous = nb.get_num_threads()
    try:
        nb.set_num_threads(1)
        assert flexible.kernel_threads(100 * PER_THREAD) == 1
    finally:
        nb.set_num_threads(previous)
    body, q = _body("svk")
    f = np.zeros((body.n_nodes, 3))
    kernels.assemble_force(
        body._color_ptr,
        body._block_ptr,
        body._color_elems,
        body._cells,
        body._G,
        body._wdv,
        q.reshape(-1, 3),
        np.zeros((body.n_nodes, 3)),
        *body._material_args(),
        2,
        f,
    )
    assert nb.get_num_threads() == previous


# ---------------------------------------------------------------- blocks and colours
@pytest.mark.parametrize("divisions,order", [((16, 8, 6), 1), ((4, 4, 40), 1), ((5, 3, 4), 2), ((1, 1, 1), 1)])
def test_blocks_of_a_colour_share_no_node(divisions, order):
    mesh = fb.mesh.box((1.0, 0.5, 0.4), divisions, order=order)
    color_ptr, block_ptr, elements = patterns.color_groups(mesh.cells, mesh.n_nodes)
    assert np.array_equal(np.sort(elements), np.arange(mesh.n_elements))
    assert block_ptr[-1] == mesh.n_elements and color_ptr[-1] == len(block_ptr) - 1
    for c in range(len(color_ptr) - 1):
        seen = np.zeros(mesh.n_nodes, np.int64)
        for b in range(color_ptr[c], color_ptr[c + 1]):
            block = elements[block_ptr[b] : block_ptr[b + 1]]
            assert np.all(np.diff(block) == 1)  # consecutive elements
            seen[np.unique(mesh.cells[block])] += 1
        assert seen.max() == 1


def test_box_meshes_need_two_colours():
    mesh = fb.mesh.box((1.0, 1.0, 1.0), (20, 20, 20), order=1)
    color_ptr, _block_ptr, _ = patterns.color_groups(mesh.cells, mesh.n_nodes)
    assert len(color_ptr) == 3 and np.diff(color_ptr).min() >= 8


def test_a_numbering_without_locality_runs_its_kernels_on_one_thread(machine):
    """Elements in random order (as a mesher's may come): every block touches every other, each colour holds one
    block, and the body's kernels run serially whatever the machine offers (a parallel pass would only add its
    wake-ups and joins: 3 times slower measured on a gmsh mesh in gmsh's own order). The same elements in the box's
    order keep five blocks per colour; ``fb.mesh.from_geometry`` numbers its meshes for locality (six)."""
    machine(8, 8)
    mesh = fb.mesh.box((1.0, 1.0, 1.0), (12, 12, 12), order=1, cells="tetrahedra")  # 10368 elements
    shuffled = fb.mesh.TetMesh(mesh.points, mesh.cells[np.random.default_rng(0).permutation(mesh.n_elements)])
    material = fb.NeoHookean(young=2e5, poisson=0.3, density=1e3)
    local, scattered = fb.FlexibleBody("local", mesh, material), fb.FlexibleBody("scattered", shuffled, material)
    assert scattered._parallel_width == 1 and scattered._threads(PER_THREAD) == 1
    assert local._parallel_width >= 4 and local._threads(PER_THREAD) == 2
    geometry = fb.mesh.from_geometry(ROOT / "meshes" / "bracket.geo", size=0.003)
    assert patterns.parallel_width(*patterns.color_groups(geometry.cells, geometry.n_nodes)[:2]) >= 4


# ---------------------------------------------------------------- results do not depend on the threads
def _body(material, damping=0.0):
    """768 H8 elements in 12 blocks of 64, 3 colours of 4 blocks; deformed positions q (3n,)."""
    materials = {
        "svk": fb.StVenantKirchhoff(young=2e5, poisson=0.3, density=1e3, damping=damping),
        "neo-hookean": fb.NeoHookean(young=2e5, poisson=0.3, density=1e3, damping=damping),
    }
    body = fb.FlexibleBody("body", fb.mesh.box((1.0, 0.5, 0.4), (16, 8, 6), order=1), materials[material], locking=None)
    X = body.mesh.points
    q = X + 0.02 * np.stack([np.sin(3 * X[:, 0]) * X[:, 1], X[:, 0] ** 2, X[:, 1] * X[:, 2]], axis=1)
    return body, q.ravel()


@pytest.mark.parametrize("material,damping", [("svk", 0.0), ("svk", 0.01), ("neo-hookean", 0.0)])
def test_serial_and_parallel_force_agree(material, damping, monkeypatch):
    body, q = _body(material, damping)
    v = np.linspace(-0.1, 0.1, q.size)
    serial = body.internal_force(q, v)
    assert np.abs(serial).max() > 1.0
    for n_threads in (2, 3):
        monkeypatch.setattr(flexible, "kernel_threads", lambda n_elements, elements_per_thread=1, n=n_threads: n)
        parallel = body.internal_force(q, v)
        assert np.abs(parallel - serial).max() <= 1e-12 * np.abs(serial).max()
        assert np.array_equal(parallel, serial)  # in fact bitwise


def test_svk_hex8_kernel_is_bitwise_the_generic_element_force():
    body, q = _body("svk")
    x = q.reshape(-1, 3)
    lam, mu = body.material.params
    F, Fd, S, work = np.empty((3, 3)), np.empty((3, 3)), np.empty((3, 3)), np.empty((2, 3, 3))
    for e in (0, 17, body.n_elements - 1):
        fast = np.zeros((body.n_nodes, 3))
        svk_hex8_forces(e, e + 1, np.arange(body.n_elements), body._cells, body._G, body._wdv, x, lam, mu, fast)
        fe = np.empty((8, 3))
        kernels.element_force(
            x[body._cells[e]],
            np.zeros((8, 3)),
            body._G[e],
            body._wdv[e],
            fb.fem.materials.SVK,
            body.material.params,
            0.0,
            0.0,
            0.0,
            fe,
            F,
            Fd,
            S,
            work,
        )
        assert np.array_equal(fast[body._cells[e]], fe)
