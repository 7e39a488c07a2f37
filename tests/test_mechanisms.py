"""Constrained dynamics on the mechanisms of the sources: every form agrees, constraint forces, redundant
constraints, particle on a circle [AG-33..35], Aghili's slider-crank closed forms [AG-64..68], and the
end effector on a surface with direct then inverse dynamics [MH Prop. 1, 2]."""

import numpy as np
import pytest

import flexbody as fb
from flexbody import mechanisms as mech
from flexbody.dynamics import forward, inverse
from flexbody.errors import ConstraintError
from flexbody.solvers.simulation import assemble_configuration, project_velocity

METHODS = ("multiplier", "gauss", "nullspace", "projection")


def random_state(asm, rng, fixed=None, spread=0.3):
    q = assemble_configuration(asm, 0.0, asm.q0 + spread * rng.normal(size=asm.n_dofs), fixed=fixed)
    v = project_velocity(asm, 0.0, q, rng.normal(size=asm.n_dofs))
    return q, v


MECHANISMS = {
    "slider_crank": (lambda: mech.slider_crank(crank=1.1), [0]),
    "four_bar": (lambda: mech.four_bar(angle=1.0), [0]),
    "rssr": (mech.rssr_loop, None),
    "arm_on_line": (mech.planar_arm_on_line, None),
    "arm_on_sphere": (mech.spatial_arm_on_sphere, None),
    "branching_34": (mech.branching_loops, None),
}


@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_all_forms_agree(name):
    build, fixed = MECHANISMS[name]
    asm = build().assemble()
    rng = np.random.default_rng(11)
    for _ in range(3):
        q, v = random_state(asm, rng, fixed, spread=0.05 if name == "branching_34" else 0.3)
        tau = rng.normal(size=asm.n_dofs)
        T = asm.terms(0.0, q, v)
        assert fb.constraint_rank(T.Phi).is_full_rank
        results = {m: forward(T.M, T.h, tau, T.Phi, T.bias, method=m) for m in METHODS}
        ref = results["multiplier"]
        scale = np.abs(ref.a).max()
        for m, r in results.items():
            assert np.abs(r.a - ref.a).max() <= 1e-10 * scale, m
            assert np.abs(r.lam - ref.lam).max() <= 1e-10 * max(1.0, np.abs(ref.lam).max()), m
            # Φᵀλ = M a + h − τ (the generalized constraint force) and Φ a + bias = 0.
            np.testing.assert_allclose(r.constraint_force, T.Phi.T @ r.lam, atol=1e-10 * np.abs(r.lam).max())
            np.testing.assert_allclose(r.constraint_force, T.M @ r.a + T.h - tau, atol=1e-9 * np.abs(T.h).max())
            np.testing.assert_allclose(T.Phi @ r.a + T.bias, 0, atol=1e-9 * max(1, np.abs(T.bias).max()))
        for inertia in ("Mc", "symmetric", "gamma"):
            r = forward(T.M, T.h, tau, T.Phi, T.bias, method="projection", inertia=inertia)
            assert np.abs(r.a - ref.a).max() <= 1e-10 * scale, inertia


@pytest.mark.parametrize("closure", ["spatial", "duplicated"])
def test_redundant_four_bar(closure):
    planar = mech.four_bar(angle=0.7).assemble()
    redundant = mech.four_bar(angle=0.7, closure=closure).assemble()
    rng = np.random.default_rng(5)
    q, v = random_state(planar, rng, fixed=[0])
    tau = rng.normal(size=3)
    Tp, Tr = planar.terms(0.0, q, v), redundant.terms(0.0, q, v)
    ref = forward(Tp.M, Tp.h, tau, Tp.Phi, Tp.bias, method="multiplier")
    for m in ("projection", "nullspace"):
        r = forward(Tr.M, Tr.h, tau, Tr.Phi, Tr.bias, method=m)
        assert np.abs(r.a - ref.a).max() <= 1e-10 * np.abs(ref.a).max()
        np.testing.assert_allclose(
            r.constraint_force, ref.constraint_force, atol=1e-10 * np.abs(ref.constraint_force).max()
        )
        assert not r.lam_unique and r.rank == 2
    for m in ("multiplier", "gauss"):
        with pytest.raises(ConstraintError, match="projection"):
            forward(Tr.M, Tr.h, tau, Tr.Phi, Tr.bias, method=m)
    report = redundant.rank_report(0.0, q)
    assert report.rank == 2 and report.dof == 1
    if closure == "spatial":
        assert list(report.redundant_labels) == ["loop.z"]
    else:
        assert len(report.redundant_labels) == 2 and all(lab.startswith("loop") for lab in report.redundant_labels)


@pytest.mark.parametrize("angle,speed", [(0.3, 0.0), (2.1, 1.7)])
def test_particle_on_circle_closed_form(angle, speed):
    """[AG-33..35]: m q̈ = f∥ − m‖q̇‖²/ρ ε⊥ and the constraint force −(f⊥ + m‖q̇‖²/ρ ε⊥) in our sign."""
    m, rho = 1.3, 0.7
    asm = mech.particle_on_circle(mass=m, radius=rho, gravity=(0, 0, 0)).assemble()
    e_perp = np.array([np.cos(angle), np.sin(angle)])
    e_par = np.array([-np.sin(angle), np.cos(angle)])
    q, v = rho * e_perp, speed * e_par
    f = np.array([0.4, -2.3])
    T = asm.terms(0.0, q, v)
    for method in METHODS:
        r = forward(T.M, T.h, f, T.Phi, T.bias, method=method)
        np.testing.assert_allclose(r.a, (f @ e_par) * e_par / m - speed**2 / rho * e_perp, atol=1e-12)
        F_aghili = (f @ e_perp) * e_perp + m * speed**2 / rho * e_perp
        np.testing.assert_allclose(r.constraint_force, -F_aghili, atol=1e-12)


def test_slider_crank_closed_forms():
    """[AG-66, 67]: the assembled mechanism gives M, h and A = l[c₁ + c₁₂, c₁₂]; at q₁ = π/2 the
    projector becomes the identity [AG-68, see the seeds' errata]."""
    l, m, g = 1.0, 1.0, 9.81
    asm = mech.slider_crank(length=l, mass=m, gravity=(0.0, -g, 0.0)).assemble()
    rng = np.random.default_rng(2)
    for q1 in rng.uniform(0, 2 * np.pi, 4):
        q = np.array([q1, 2 * np.pi - 2 * q1])
        v = rng.normal(size=2)
        T = asm.terms(0.0, q, v)
        c1, c2, c12, s2 = np.cos(q[0]), np.cos(q[1]), np.cos(q.sum()), np.sin(q[1])
        np.testing.assert_allclose(T.M, m * l**2 * np.array([[3 + 2 * c2, 1 + c2], [1 + c2, 1]]), atol=1e-13)
        h = [
            -m * l**2 * s2 * (v[1] ** 2 + 2 * v[0] * v[1]) + m * l * g * (c12 + 2 * c1),
            m * l**2 * s2 * v[0] ** 2 + m * l * g * c12,
        ]
        np.testing.assert_allclose(T.h, h, atol=1e-12)
        np.testing.assert_allclose(T.Phi, l * np.array([[c1 + c12, c12]]), atol=1e-14)
        assert abs(T.phi[0]) < 1e-14
    q = np.array([np.pi / 2, np.pi])
    P = fb.dynamics.projector(asm.constraint_jacobian(0.0, q))
    assert P.rank == 0
    np.testing.assert_allclose(P.matrix(), np.eye(2), atol=1e-15)
    P = fb.dynamics.projector(asm.constraint_jacobian(0.0, np.array([2.0, 2 * np.pi - 4.0])))
    np.testing.assert_allclose(P.matrix(), np.array([[1, -2], [-2, 4]]) / 5, atol=1e-14)


@pytest.mark.parametrize("build", [mech.planar_arm_on_line, mech.spatial_arm_on_sphere])
def test_end_effector_on_surface(build):
    system = build()
    asm = system.assemble()
    surface = asm.constraints[0]
    rng = np.random.default_rng(4)
    q, v = random_state(asm, rng)
    tau = rng.normal(size=asm.n_dofs)
    T = asm.terms(0.0, q, v)
    r = forward(T.M, T.h, tau, T.Phi, T.bias, method="projection")
    ev = asm.workspace(0.0, q, v)
    f = surface.contact_force(ev, r.lam)  # [MH-13] f = Dᵀλ
    normal = surface.surface.gradient(surface.point.position(ev))[0]
    normal /= np.linalg.norm(normal)
    assert np.linalg.norm(f - (f @ normal) * normal) <= 1e-12 * np.linalg.norm(f)
    cols, J = surface.point.jacobian(ev)
    np.testing.assert_allclose(
        r.constraint_force, ev.kinematics(asm.trees[0]).dense(cols, J).T @ f, atol=1e-12 * np.linalg.norm(f)
    )
    # MH Proposition 2: for the motion a and the contact force λ, the torque is unique and equals τ.
    back = inverse(T.M, T.h, r.a, T.Phi, lam=r.lam, bias=T.bias)
    np.testing.assert_allclose(back.tau, tau, atol=1e-11 * np.abs(tau).max())
    # The minimum-norm actuation of the same motion reproduces a when fed forward, with a smaller norm.
    least = inverse(T.M, T.h, r.a, T.Phi, bias=T.bias)
    again = forward(T.M, T.h, least.tau, T.Phi, T.bias, method="projection")
    np.testing.assert_allclose(again.a, r.a, atol=1e-10 * np.abs(r.a).max())
    assert np.linalg.norm(least.tau) <= np.linalg.norm(tau) + 1e-12
