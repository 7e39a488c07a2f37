"""Specialised St. Venant–Kirchhoff 8-node kernels (flexbody/fem/svk_hex8.py) against the generic ones (issue 18).

* the Kelvin–Voigt damped force is bitwise the generic ``element_terms.element_force``, element by element and
  assembled, for several materials and retardation times, at random (distorted) states, zero and nonzero v;
* ``internal_force(q, None)`` (which skips the viscous stress) equals ``internal_force(q, 0)`` for every
  element and material, and the H8 SVK one equals the generic kernel's assembly;
* the strain energy per element is bitwise the generic ``energy_kernels.strain_energy_density`` sum;
* small bodies take one thread without querying the machine; the material arguments follow ``body.material``.
"""

import numpy as np
import pytest
from test_flexible import MATERIALS, make_body

import flexbody as fb
import flexbody.fem.flexible_body as flexible
from flexbody.fem import element_terms, energy_kernels, point_kernels
from flexbody.fem.svk_hex8 import svk_hex8_damped_forces

RNG = np.random.default_rng(18)
SVK_MATERIALS = [(7e7, 0.3, 0.002), (2.1e11, 0.0, 1e-5), (1e5, 0.45, 0.5), (1e6, 0.3, 0.0)]  # young, ν, β


def svk_body(young, poisson, damping, divisions=(4, 2, 3), distort=0.25):
    """SVK H8 body on a box with randomly moved interior nodes (non-affine reference gradients)."""
    mesh = fb.mesh.box((0.6, 0.2, 0.3), divisions, order=1)
    pts = mesh.points.copy()
    lo, hi = pts.min(0), pts.max(0)
    interior = np.all((pts > lo + 1e-9) & (pts < hi - 1e-9), axis=1)
    pts[interior] += distort * 0.1 * RNG.uniform(-1, 1, (interior.sum(), 3))
    material = fb.StVenantKirchhoff(young=young, poisson=poisson, density=1e3, damping=damping)
    return fb.FlexibleBody("body", mesh.with_points(pts), material, locking=None)  # the plain brick


def random_state(body, amplitude=0.02, speed=1.0):
    """Positions x (n, 3) a few percent of strain from the reference, random velocities (n, 3) [m/s]."""
    X = body.mesh.points
    x = X + amplitude * np.stack([X[:, 0] * X[:, 1], np.sin(3 * X[:, 0]), X[:, 2] ** 2], 1)
    x += 0.1 * amplitude * RNG.standard_normal(X.shape)
    return x, speed * RNG.standard_normal(X.shape)


def generic_force(body, x, v):
    """f (n, 3): ``element_terms.element_force`` per element, added in the assembly's element order."""
    kind, p, beta, lam0, mu0 = body._material_args()
    F, Fd, S, work = np.empty((3, 3)), np.empty((3, 3)), np.empty((3, 3)), np.empty((2, 3, 3))
    fe = np.empty((8, 3))
    f = np.zeros((body.n_nodes, 3))
    for e in body._color_elems:
        cell = body._cells[e]
        element_terms.element_force(
            x[cell],
            np.ascontiguousarray(v[cell]),
            body._G[e],
            body._wdv[e],
            kind,
            p,
            beta,
            lam0,
            mu0,
            fe,
            F,
            Fd,
            S,
            work,
        )
        f[cell] += fe  # the 8 nodes of a cell are distinct
    return f


# ---------------------------------------------------------------- damped force
@pytest.mark.parametrize("young,poisson,damping", SVK_MATERIALS[:3])
@pytest.mark.parametrize("speed", [0.0, 1.0, 1e3])
def test_damped_kernel_is_bitwise_the_generic_element_force(young, poisson, damping, speed):
    body = svk_body(young, poisson, damping)
    kind, p, beta, lam0, mu0 = body._material_args()
    F, Fd, S, work = np.empty((3, 3)), np.empty((3, 3)), np.empty((3, 3)), np.empty((2, 3, 3))
    elements = np.arange(body.n_elements)
    for _ in range(3):
        x, v = random_state(body, speed=speed)
        for e in elements:
            fast = np.zeros((body.n_nodes, 3))
            svk_hex8_damped_forces(
                e, e + 1, elements, body._cells, body._G, body._wdv, x, v, p[0], p[1], beta, lam0, mu0, fast
            )
            fe = np.empty((8, 3))
            cell = body._cells[e]
            element_terms.element_force(
                x[cell],
                np.ascontiguousarray(v[cell]),
                body._G[e],
                body._wdv[e],
                kind,
                p,
                beta,
                lam0,
                mu0,
                fe,
                F,
                Fd,
                S,
                work,
            )
            assert np.abs(fe).max() > 0.0
            assert fast[cell].tobytes() == fe.tobytes()  # bitwise, signs of zeros included


@pytest.mark.parametrize("young,poisson,damping", SVK_MATERIALS)
def test_assembled_force_is_bitwise_the_generic_kernels(young, poisson, damping):
    body = svk_body(young, poisson, damping, divisions=(6, 3, 2))
    x, v = random_state(body)
    for vel in (v, np.zeros_like(v)):
        fast = body.internal_force(x.ravel(), vel.ravel())
        assert np.array_equal(fast, generic_force(body, x, vel).ravel())
    assert np.array_equal(body.internal_force(x.ravel()), generic_force(body, x, np.zeros_like(v)).ravel())


def test_the_viscous_force_is_the_damped_minus_the_elastic_one():
    """k(q, v) − k(q) is β D₀ : Ė integrated: linear in v, zero for a rigid rotation rate."""
    body = svk_body(7e7, 0.3, 0.002)
    x, v = random_state(body)
    q = x.ravel()
    viscous = body.internal_force(q, v.ravel()) - body.internal_force(q)
    doubled = body.internal_force(q, 2.0 * v.ravel()) - body.internal_force(q)
    assert np.abs(doubled - 2.0 * viscous).max() <= 1e-9 * np.abs(viscous).max()
    spin = np.cross([0.3, -1.0, 0.5], x)  # Ḟ = W F, W skew: Ė = 0
    assert np.abs(body.internal_force(q, spin.ravel()) - body.internal_force(q)).max() <= 1e-9 * np.abs(viscous).max()


@pytest.mark.parametrize("element", ["H8", "H27"])  # (incompatible modes: v = None is v = 0 on one path)
@pytest.mark.parametrize("material", list(MATERIALS))
def test_no_velocity_is_zero_velocity(element, material):
    body = make_body(element, material, damping=0.01, distort=0.2)
    x, _ = random_state(body)
    q = x.ravel()
    assert np.array_equal(body.internal_force(q), body.internal_force(q, np.zeros_like(q)))


# ---------------------------------------------------------------- strain energy
@pytest.mark.parametrize("young,poisson,damping", SVK_MATERIALS)
def test_strain_energies_are_bitwise_the_generic_density(young, poisson, damping):
    body = svk_body(young, poisson, damping)
    x, _ = random_state(body)
    kind, p = body._material_args()[:2]
    F, C = np.empty((3, 3)), np.empty((3, 3))
    expected = np.empty(body.n_elements)
    for e in range(body.n_elements):
        s = 0.0
        for g in range(8):
            point_kernels.deformation_gradient(x[body._cells[e]], body._G[e, g], 8, F)
            s += body._wdv[e, g] * energy_kernels.strain_energy_density(kind, p, F, C)
        expected[e] = s
    energies = body.element_strain_energies(x.ravel())
    assert expected.min() > 0.0
    assert energies.tobytes() == expected.tobytes()


# ---------------------------------------------------------------- per-call overhead
def test_small_bodies_take_one_thread_without_asking_the_machine(monkeypatch):
    def unexpected(*args):
        raise AssertionError("queried")

    monkeypatch.setattr(flexible.os, "sched_getaffinity", unexpected, raising=False)
    monkeypatch.setattr(flexible.nb, "get_num_threads", unexpected)
    per_thread = flexible.FORCE_ELEMENTS_PER_THREAD
    assert flexible.kernel_threads(0) == flexible.kernel_threads(2 * per_thread - 1) == 1
    with pytest.raises(AssertionError, match="queried"):
        flexible.kernel_threads(2 * per_thread)


def test_material_arguments_follow_the_material():
    body = svk_body(7e7, 0.3, 0.002)
    assert body._material_args() is body._material_args()  # built once
    x, v = random_state(body)
    damped = body.internal_force(x.ravel(), v.ravel())
    body.material = fb.StVenantKirchhoff(young=7e7, poisson=0.3, density=1e3)
    assert body._material_args()[2] == 0.0
    assert np.array_equal(body.internal_force(x.ravel(), v.ravel()), body.internal_force(x.ravel()))
    assert not np.array_equal(body.internal_force(x.ravel(), v.ravel()), damped)
