"""Craig–Bampton bases (fb.solvers.craig_bampton): the fixed-interface modes are the full cantilever's, the
interior's static response to interface motions is exact, and the free-interface frequencies bound the full
free body's from above and converge as modes are added (Rayleigh–Ritz)."""

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import flexbody as fb
from flexbody.errors import FlexbodyError
from flexbody.solvers import craig_bampton

L, B, H, E, RHO = 1.0, 0.02, 0.02, 2.1e11, 7800.0


def _beam():
    return fb.FlexibleBody(
        "beam", fb.mesh.box((L, B, H), (20, 1, 1), order=2), fb.StVenantKirchhoff(young=E, poisson=0.0, density=RHO)
    )


def test_fixed_interface_modes_are_the_cantilever_modes():
    beam = _beam()
    reduced = craig_bampton(beam, "x0", 6)
    full = fb.modal_analysis(fb.System([beam], [fb.Fix(beam, "x0")]), n_modes=6)
    # Two shift-invert Lanczos runs, on the saddle point with the Fix rows and on K_ff eliminated (condition 3.5e8),
    # agree
    # to ε κ ≈ 8e-8 in ω², not better: LAPACK's dense eigh of the same matrices differs from either by 2.5e-9 in f.
    agreement = 1e-7
    assert np.abs(reduced.fixed_interface_frequencies / full.frequencies - 1).max() < agreement
    euler_bernoulli = 1.875104**2 * np.sqrt(E * B * H**3 / 12 / (RHO * B * H)) / (2 * np.pi)  # 16.770 Hz
    assert abs(reduced.fixed_interface_frequencies[0] / euler_bernoulli - 1) < 1e-3
    held = np.arange(reduced.interface.size)
    assert np.abs(reduced.frequencies(held) / full.frequencies - 1).max() < agreement


def test_interior_static_response_to_interface_motion_is_exact():
    beam = _beam()
    reduced = craig_bampton(beam, "x0", 3)
    K = sp.csr_matrix(beam.tangent(beam.reference_coordinates()))
    i_dofs = reduced.interface
    o_dofs = np.setdiff1d(np.arange(beam.n_dofs), i_dofs)
    u_i = np.random.default_rng(3).standard_normal(i_dofs.size) * 1e-3
    u_o = spla.spsolve(K[o_dofs][:, o_dofs].tocsc(), -K[o_dofs][:, i_dofs] @ u_i)  # SuperLU, independent
    u = reduced.basis[:, : i_dofs.size] @ u_i
    # two factorizations of K_OO (CHOLMOD, SuperLU) with cond(K_OO) = 3.5e8: round-off up to ~1e-8 relative
    assert np.abs(u[o_dofs] - u_o).max() < 1e-8 * np.abs(u_o).max()  # 5.4e-10 measured
    assert np.array_equal(u[i_dofs], u_i)


def test_free_interface_frequencies_converge_from_above():
    beam = _beam()
    full = fb.modal_analysis(fb.System([beam]), n_modes=12).frequencies[6:]  # free-free, six rigid modes first
    errors = []
    for k in (4, 8, 16):
        reduced = craig_bampton(beam, "x0", k).frequencies()
        assert np.abs(reduced[:6]).max() < 1e-2  # six rigid-body modes
        flexible = reduced[6:12]
        assert np.all(flexible >= full * (1 - 1e-9))  # Rayleigh–Ritz upper bounds
        errors.append(np.abs(flexible / full - 1).max())
    assert errors[0] > errors[1] > errors[2] and errors[2] < 1e-3


def test_bad_reduction_input_is_named():
    beam = _beam()
    with pytest.raises(FlexbodyError, match="n_modes"):
        craig_bampton(beam, "x0", -1)
    with pytest.raises(FlexbodyError, match="no nodes"):
        craig_bampton(beam, np.zeros(0, dtype=int), 2)
