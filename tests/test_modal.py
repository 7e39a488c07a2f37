"""Natural modes of constrained rigid–flexible systems (fb.modal_analysis) against closed forms: a particle
pendulum (its stiffness is the constraint force's), a compound pendulum, a free-free beam (six zero modes and
the first bending pair) and a cantilever carrying a tip mass equal to its own (β₁L = 1.247917)."""

import logging

import numpy as np
import pytest
from scipy.optimize import brentq

import flexbody as fb
from flexbody.errors import FlexbodyError

L, B, H, E, RHO = 1.0, 0.02, 0.02, 2.1e11, 7800.0
EI_RHOA = E * (B * H**3 / 12) / (RHO * B * H)


def _beam():
    return fb.FlexibleBody(
        "beam", fb.mesh.box((L, B, H), (20, 1, 1), order=2), fb.StVenantKirchhoff(young=E, poisson=0.0, density=RHO)
    )


def test_particle_pendulum_gets_its_stiffness_from_the_constraint_force(caplog):
    """ω² = g/ρ: with q = (x, y) and the circle as a constraint row, K = −∂(Φᵀλ)/∂q alone. Three modes asked of
    one degree of freedom: the one, with a WARNING saying so."""
    system = fb.mechanisms.particle_on_circle(mass=2.0, radius=0.7, gravity=(0, -9.81, 0))
    with caplog.at_level(logging.WARNING, logger="flexbody"):
        modes = fb.modal_analysis(system, state=[0.0, -0.7], n_modes=3)
    assert modes.frequencies.shape == (1,) and modes.metadata["static_residual"] < 1e-12
    assert modes.metadata["n_modes_asked"] == 3
    assert any(
        "3 modes asked, 1 returned: the system has 1 degrees of freedom" in r.getMessage() for r in caplog.records
    )
    assert abs(modes.frequencies[0] - np.sqrt(9.81 / 0.7) / (2 * np.pi)) < 1e-10
    x = modes.shapes[0]
    assert abs(x[1]) < 1e-12 and abs(x[0] * x[0] * 2.0 - 1.0) < 1e-12  # along the tangent, unit mass


def test_compound_pendulum_at_its_static_equilibrium():
    tree = fb.RigidTree("p", gravity=(0, -9.81, 0))
    tree.add_link("l", None, fb.Revolute(), mass=1.5, com=(0.4, 0, 0), inertia=(1e-3, 0.02, 0.02))
    modes = fb.modal_analysis(fb.System([tree], q0=[-1.2]), n_modes=1)
    assert abs(modes.q[0] + np.pi / 2) < 1e-10  # hanging straight down
    expected = np.sqrt(1.5 * 9.81 * 0.4 / (0.02 + 1.5 * 0.4**2)) / (2 * np.pi)
    assert abs(modes.frequencies[0] - expected) < 1e-8 * expected  # joint rows by differences


def test_free_free_beam_has_six_zero_modes_and_the_bending_pair():
    modes = fb.modal_analysis(fb.System([_beam()]), n_modes=8)
    assert modes.n_rigid_body == 6
    bending = 4.730041**2 * np.sqrt(EI_RHOA) / (2 * np.pi)  # Euler–Bernoulli, 106.672 Hz
    assert np.all(np.abs(modes.frequencies[:6]) < 2e-3)
    assert np.abs(modes.frequencies[6:] / bending - 1).max() < 2e-3  # 106.594 Hz: −7.3e-4 (shear)
    mass = modes.shapes @ (modes.system.flexible.mass.matrix @ modes.shapes.T)
    assert np.abs(mass - np.eye(8)).max() < 1e-10


def test_cantilever_with_a_tip_mass_equal_to_its_own():
    """1 + cos βL cosh βL + (m_tip/m) βL (cos βL sinh βL − sin βL cosh βL) = 0: β₁L = 1.247917 for m_tip = m."""
    tree = fb.RigidTree("tip", gravity=(0, 0, 0))
    tip = tree.add_link(
        "mass", None, fb.FreeFlyer(), origin=(L, B / 2, H / 2), mass=RHO * B * H * L, inertia=(1e-9, 1e-9, 1e-9)
    )
    beam = _beam()
    system = fb.System([tree, beam], [fb.Fix(beam, "x0"), fb.AttachNodes(beam, "x1", tip)])
    modes = fb.modal_analysis(system, n_modes=4)

    def equation(x):
        return 1 + np.cos(x) * np.cosh(x) + x * (np.cos(x) * np.sinh(x) - np.sin(x) * np.cosh(x))

    beta_l = brentq(equation, 0.5, 2.0)
    assert abs(beta_l - 1.247917) < 1e-6
    expected = beta_l**2 * np.sqrt(EI_RHOA) / (2 * np.pi)  # 7.42495 Hz
    # the solid sits below Euler–Bernoulli by its shear and rotary inertia, first order ½ (β₁ r)² (1 + E/(κG))
    # = 8.8e-5 (ν = 0, κ = 5/6, r² = H²/12); measured −1.23e-4 on the default rule (2, 3, 3) (3 × 3 × 3, whose
    # locking stiffens it back: +5.7e-6)
    timoshenko = 0.5 * (beta_l / L) ** 2 * H**2 / 12 * (1 + 2 / (5 / 6))
    assert np.all(modes.frequencies[:2] < expected)
    assert np.all(modes.frequencies[:2] > expected * (1 - 2 * timoshenko))
    assert modes.metadata["method"].startswith("shift-invert")


def test_modes_are_repeatable_and_written_for_paraview(tmp_path):
    first = fb.modal_analysis(fb.System([_beam()]), n_modes=8)
    second = fb.modal_analysis(fb.System([_beam()]), n_modes=8)
    assert np.array_equal(first.eigenvalues, second.eigenvalues)
    out = first.write(tmp_path / "modes", modes=[6], frames=8)
    assert (out / "mode_06" / "beam.pvd").is_file() and (out / "modes.csv").is_file()
    back = fb.Results.load(out / "mode_06")
    assert back.q.shape == (8, first.system.n_dofs) and np.allclose(back.q[0], first.q) and back.kind == "modal"
    assert abs(back.metadata["frequency_hz"] - first.frequencies[6]) < 1e-12


def test_more_modes_than_a_flexible_system_has_are_returned_with_a_warning(caplog):
    """A 2 × 1 × 1 cantilever (24 free nodal coordinates; shift-invert Lanczos gives at most dof − 1)."""
    system = fb.mechanisms.cantilever(divisions=(2, 1, 1))
    with caplog.at_level(logging.WARNING, logger="flexbody"):
        modes = fb.modal_analysis(system, state=system.assemble().q0, n_modes=10000)
    assert modes.frequencies.shape == (23,) and modes.metadata["dof"] == 24
    assert any("10000 modes asked, 23 returned" in r.getMessage() for r in caplog.records)


def test_bad_modal_input_is_named():
    with pytest.raises(FlexbodyError, match="n_modes"):
        fb.modal_analysis(fb.System([_beam()]), n_modes=0)
    with pytest.raises(FlexbodyError, match="state"):
        fb.modal_analysis(fb.System([_beam()]), state=np.zeros(3))
    with pytest.raises(FlexbodyError, match="mode 9"):
        fb.modal_analysis(fb.System([_beam()]), n_modes=2).animation(9)


def test_a_body_or_joint_that_nothing_holds_is_named():
    """A beam under gravity that no constraint touches, and a double pendulum without gravity or springs: before,
    a diverging Newton ('max|r| = 1.0e13') and a singular saddle-point matrix naming nothing."""
    beam = _beam()
    free_beam = fb.System([beam], loads=[fb.Gravity(beam, (0, 0, -9.81))])
    with pytest.raises(
        fb.ConstraintError, match=r"bodies \['beam'\] are loaded but not held: no constraint touches them"
    ):
        fb.modal_analysis(free_beam, n_modes=3)
    tree = fb.RigidTree("dp", gravity=(0, 0, 0))
    a = tree.add_link("a", None, fb.Revolute((0, 1, 0)), mass=1.0, com=(0.5, 0, 0), inertia=(0.01, 0.01, 0.01))
    tree.add_link("b", a, fb.Revolute((0, 1, 0)), origin=(1, 0, 0), mass=1.0, com=(0.5, 0, 0), inertia=(0.01,) * 3)
    for solve in (lambda: fb.modal_analysis(fb.System([tree]), n_modes=2), lambda: fb.solve_static(fb.System([tree]))):
        with pytest.raises(fb.ConvergenceError, match=r"coordinates \['dp.a', 'dp.b'\] have no stiffness and nothing"):
            solve()
