"""Strain energy kernel of FlexibleBody and the serial/parallel element kernels.

* ``strain_energy`` equals the NumPy reference ∫ W(F) dV of ``flexible.strain_energy_density`` (plain elements);
* its gradient is the elastic internal force, also for the incompatible-mode element, whose energy
  Π(q, α(q)) at the converged modes has the condensed force as gradient;
* the serial path of the kernels (small meshes, one thread) gives bitwise the parallel path's results.
"""

import numpy as np
import pytest
from test_flexible import ELEMENTS, MATERIALS, make_body  # the same bodies as the element tests

import flexbody.fem.flexible_body as flexible
from flexbody.fem.flexible_body import strain_energy_density

RNG = np.random.default_rng(7)


def deformed(body, amplitude=0.03, rng=RNG):
    """Bent and randomly perturbed positions q (3n,) [m]: strains of a few percent."""
    X = body.mesh.points
    bend = np.stack([0.05 * X[:, 1] * X[:, 0], -0.08 * X[:, 0] ** 2, 0.04 * X[:, 0] * X[:, 2]], 1)
    return (X + bend + amplitude * 0.1 * rng.standard_normal(X.shape)).ravel()


def nodal_energy(body, q):
    """Reference ∫ W dV [J] with F from the nodes only (einsum over (m, nq, 3, 3)), the former implementation."""
    nn = body._cells.shape[1]
    F = np.einsum("eai,egak->egik", q.reshape(-1, 3)[body._cells], body._G[:, :, :nn])
    return float(np.sum(strain_energy_density(body.material, F) * body._wdv))


def fd_gradient(fun, q, h=1e-6):
    """Central finite-difference gradient (3n,) of a scalar function of q (3n,)."""
    grad = np.empty_like(q)
    for j in range(q.size):
        e = np.zeros_like(q)
        e[j] = h
        grad[j] = (fun(q + e) - fun(q - e)) / (2 * h)
    return grad


def relative_error(a, b):
    return np.linalg.norm(a - b) / np.linalg.norm(b)


@pytest.mark.parametrize("element", ["H8", "H27"])
@pytest.mark.parametrize("material", list(MATERIALS))
def test_energy_kernel_equals_numpy_reference(element, material):
    body = make_body(element, material)
    q = deformed(body)
    reference = nodal_energy(body, q)
    assert reference > 1.0  # strains of a few percent, U ~ 1e2 J
    # measured: ≤ 4e-15 relative (summation order and det F by cofactors instead of LU)
    assert body.strain_energy(q) == pytest.approx(reference, rel=1e-12)
    assert body.element_strain_energies(q).sum() == pytest.approx(reference, rel=1e-12)


@pytest.mark.parametrize("element", ["H8", "H8-incompatible"])
@pytest.mark.parametrize("material", list(MATERIALS))
def test_energy_gradient_is_internal_force(element, material):
    """∂U/∂q = k(q, 0) by central differences over all 108 coordinates; measured ≤ 5e-10 relative at h = 1e-6."""
    body = make_body(element, material)
    q = deformed(body)
    force = body.internal_force(q)
    assert relative_error(fd_gradient(body.strain_energy, q), force) < 1e-6
    if body.locking is not None:
        # without the modes the energy's gradient is not the condensed force (measured 0.08 … 0.16 relative)
        assert relative_error(fd_gradient(lambda x: nodal_energy(body, x), q), force) > 1e-2


def test_incompatible_energy_uses_modes_converged_at_q():
    """The energy is Π(q, α(q)) whatever the modes' history: elastic α at q, not those of a viscous call."""
    q = deformed(make_body("H8-incompatible"))
    v = RNG.standard_normal(q.size)
    fresh = make_body("H8-incompatible", damping=0.05).strain_energy(q)
    body = make_body("H8-incompatible", damping=0.05)
    force = body.internal_force(q, v)  # modes solved with the viscous stress
    assert body.strain_energy(q) == pytest.approx(fresh, rel=1e-12)
    body.internal_force(1.01 * q)  # modes at another q
    assert body.strain_energy(q) == pytest.approx(fresh, rel=1e-12)
    # no history: the force is a function of (q, v), bitwise that of a body that never computed anything
    assert np.array_equal(body.internal_force(q, v), force)
    assert np.array_equal(make_body("H8-incompatible", damping=0.05).internal_force(q, v), force)


def test_incompatible_energy_reuses_modes_converged_at_the_same_q(monkeypatch):
    body = make_body("H8-incompatible")
    q = deformed(body)
    body.internal_force(q)
    calls = []
    solve = body._assemble
    monkeypatch.setattr(body, "_assemble", lambda *a, **k: calls.append(1) or solve(*a, **k))
    energy = body.strain_energy(q)
    assert calls == []  # modes of internal_force(q) reused
    body.strain_energy(q + 1e-3)
    assert calls == [1]
    assert body.strain_energy(q) == energy and calls == [1, 1]  # solved again at q, from zero: the same energy


def _all_kernel_results(element, material, damping, n_threads, monkeypatch):
    """Force, tangent, damping data and element energies with the kernels run in n_threads chunks per colour."""
    body = make_body(element, material, damping, divisions=(10, 3, 5))  # blocks of 64: colours of 2 and 1 blocks
    rng = np.random.default_rng(5)  # same q and v for both runs
    q = deformed(body, rng=rng)
    v = 0.3 * rng.standard_normal(q.size) if damping else None
    with monkeypatch.context() as patch:
        patch.setattr(flexible, "kernel_threads", lambda n_elements, elements_per_thread=1: n_threads)
        f = body.internal_force(q, v)
        f2, K = body.force_and_tangent(q, v)
        C = body.damping_matrix(q, v)
        energies = body.element_strain_energies(q)
    return f, f2, K.data, C.data, energies


@pytest.mark.parametrize("element", list(ELEMENTS))
@pytest.mark.parametrize("material,damping", [("svk", 0.0), ("neo-hookean", 0.02)])
def test_serial_and_parallel_kernels_agree_bitwise(element, material, damping, monkeypatch):
    serial = _all_kernel_results(element, material, damping, 1, monkeypatch)
    parallel = _all_kernel_results(element, material, damping, 8, monkeypatch)
    for a, b in zip(serial, parallel):
        assert a.size and np.array_equal(a, b)


def test_small_meshes_run_serially(monkeypatch):
    monkeypatch.setattr(flexible.nb, "get_num_threads", lambda: 2)
    monkeypatch.setattr(flexible.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    per_thread = flexible.FORCE_ELEMENTS_PER_THREAD
    assert flexible.kernel_threads(2 * per_thread - 1) == 1
    assert flexible.kernel_threads(2 * per_thread) == 2
