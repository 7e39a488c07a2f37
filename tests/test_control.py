"""Constrained task-level controllers [DE 5.1-5.2, AG VII] and the actuation report [DE 5.3, AG-62].

The oracle is the plant's own forward dynamics (tested against Pinocchio and closed forms in
test_rigid / test_mechanisms): with an exact model every controller's torque, applied to the plant,
must give the task acceleration J a + J̇v equal to the commanded f* [DE-71], zero torque at the passive
joints, and accelerations consistent with the constraints.
"""

import numpy as np
import pytest

import flexbody as fb
from flexbody import control as ctl
from flexbody import mechanisms as mech
from flexbody.control.tasks import JointTask, PlanarOrientationTask, PointTask, StackedTask
from flexbody.dynamics import forward
from flexbody.errors import ActuationError, FlexbodyError, ModelError, StateError
from flexbody.rigid import Revolute, RigidTree
from flexbody.solvers.simulation import assemble_configuration, project_velocity

Z = (0.0, 0.0, 1.0)
CONTROLLERS = {
    "direct": lambda task, ref: ctl.DirectMappingControl(task, ref, 100.0, 20.0),
    "minimal": lambda task, ref: ctl.MinimalMappingControl(task, ref, 100.0, 20.0),
    "partitioned": lambda task, ref: ctl.PartitionedControl(task, ref, 100.0, 20.0),
    "pidc": lambda task, ref: ctl.ProjectedInverseDynamicsControl(task, ref, 100.0, 20.0),
}


def driven_arm():
    """A 3-link planar arm, all joints actuated, joint 1 driven by the rheonomic φ = q₁ − 0.3 sin 2t."""
    tree = RigidTree("arm", gravity=(0.0, -9.81, 0.0))
    links, origin = [], (0.0, 0.0, 0.0)
    for i, (L, m) in enumerate(zip((0.5, 0.4, 0.3), (1.0, 0.8, 0.5))):
        links.append(
            tree.add_link(
                f"l{i + 1}",
                links[-1] if links else None,
                Revolute(Z),
                origin=origin,
                mass=m,
                com=(L / 2, 0, 0),
                inertia=np.diag([1e-4, m * L**2 / 12, m * L**2 / 12]),
            )
        )
        origin = (L, 0.0, 0.0)
    drive = fb.JointDriver(
        links[0],
        lambda t: 0.3 * np.sin(2 * t),
        lambda t: 0.6 * np.cos(2 * t),
        lambda t: -1.2 * np.sin(2 * t),
        name="drive",
    )
    return fb.System([tree], [drive], q0=np.array([0.0, 0.5, 0.4])), tree.point(links[-1], (0.3, 0, 0))


def knife_edge_sleigh():
    """A body on the plane (x, y, yaw), all three actuated, with a knife edge (a non-holonomic row) at its
    origin; the point 0.5 m ahead of the edge is controllable in the plane."""
    tree = RigidTree("sleigh", gravity=(0.0, 0.0, -9.81))
    x = tree.add_link("x", None, fb.Prismatic((1, 0, 0)))
    y = tree.add_link("y", x, fb.Prismatic((0, 1, 0)))
    body = tree.add_link("body", y, Revolute(Z), mass=2.0, com=(0.3, 0, 0), inertia=(0.01, 0.04, 0.05))
    knife = fb.KnifeEdge(tree.frame(body), axis=(0, 1, 0), name="knife")
    return fb.System([tree], [knife], q0=np.array([0.1, -0.2, 0.4])), tree.point(body, (0.5, 0, 0))


def scenarios():
    """(name, assembled plant, task, desired value, passive coordinates expected) of the sources' mechanisms."""
    out = []
    for act in ((0, 1), (0,)):
        asm = mech.slider_crank(crank=0.7, actuated=act).assemble()
        out.append((f"slider_crank_{len(act)}act", asm, JointTask([asm.trees[0].link("l1")]), [1.0]))
    for closure in ("planar", "spatial", "duplicated"):  # redundant rows: compressed Φ̂
        asm = mech.four_bar(angle=1.0, closure=closure).assemble()
        out.append((f"four_bar_{closure}", asm, JointTask([asm.trees[0].link("crank")]), [1.3]))
    asm = mech.planar_arm_on_line().assemble()  # m_T = 1 < p = 2: null space
    tip = asm.trees[0].point(asm.trees[0].link("l3"), (0.6, 0, 0))
    out.append(("arm_on_line", asm, PointTask(tip, components=(0,)), [0.9]))
    asm = mech.coupled_chain().assemble()
    tip = asm.trees[0].point(asm.trees[0].link("l6"), (0.4, 0, 0))
    out.append(("coupled_chain", asm, PointTask(tip, components=(0, 1)), [1.2, 1.0]))
    asm = mech.parallel_platform().assemble()
    out.append(("platform_elbows", asm, JointTask([asm.coordinate_labels[i] for i in (1, 3, 5)]), [1.8, 1.8, 1.8]))
    out.append(("platform_pose", asm, JointTask([asm.coordinate_labels[i] for i in (6, 7, 8)]), [0.0, 0.0, 0.3]))
    asm = mech.underactuated_chain().assemble()
    tip = asm.trees[0].point(asm.trees[0].link("l3"), (0.5, 0, 0))
    out.append(("underactuated_chain", asm, PointTask(tip, components=(0, 1)), [0.8, 0.9]))
    system, tip = driven_arm()
    out.append(("driven_arm", system.assemble(), PointTask(tip, components=(0,)), [0.9]))
    system, ahead = knife_edge_sleigh()  # a Pfaffian row A(q) v = 0 [LP]
    out.append(("knife_edge_sleigh", system.assemble(), PointTask(ahead, components=(0, 1)), [0.6, 0.3]))
    return out


SCENARIOS = scenarios()


def random_state(asm, rng, spread=0.15, t=0.0):
    q = assemble_configuration(asm, t, asm.q0 + spread * rng.normal(size=asm.n_dofs))
    v = project_velocity(asm, t, q, rng.normal(size=asm.n_dofs))
    return q, v


def plant_task_acceleration(asm, task, t, q, v, tau):
    terms = asm.terms(t, q, v)
    res = forward(terms.M, terms.h, tau, terms.Phi, terms.bias)
    tt = task.evaluate(asm.workspace(t, q, v))
    return tt.J @ res.a + tt.bias, res, terms


def applicable(kind, asm, name):
    """Which controllers apply: PIDC needs Aghili's condition (no task null space to use), the mappings
    need k ≥ m_T; the partitioned form needs S̃[Φᵀ, Ňᵀ] of full row rank."""
    # PIDC on the under-actuated chain: no constraints, a passive joint: uncontrollable [AG-62]
    return not (kind == "pidc" and name == "underactuated_chain")


@pytest.mark.parametrize("kind", sorted(CONTROLLERS))
@pytest.mark.parametrize("name, asm, task, desired", SCENARIOS, ids=[s[0] for s in SCENARIOS])
def test_exact_model_gives_commanded_task_acceleration(kind, name, asm, task, desired):
    """[DE-70], [DE-79], [DE-92], [AG-43..60]: ẍ = f* (1e-8), τ = 0 at passive joints, Φa + bias = 0."""
    rng = np.random.default_rng(7)
    controller = CONTROLLERS[kind](task, desired)
    if not applicable(kind, asm, name):  # [AG-62] fails: the controller must refuse, not return zeros
        q, v = random_state(asm, rng)
        with pytest.raises(ActuationError, match="AG-62"):
            controller(0.0, fb.State(0.0, q, v), asm)
        return
    worst = 0.0
    for t in (0.0, 0.37, 1.1):
        q, v = random_state(asm, rng, t=t)
        tau_k = controller(t, fb.State(t, q, v), asm)
        tau = asm.S.T @ tau_k
        xdd, res, terms = plant_task_acceleration(asm, task, t, q, v, tau)
        f_star = controller.diagnostics["task_command"]
        worst = max(worst, np.abs(xdd - f_star).max() / max(1.0, np.abs(f_star).max()))
        passive = np.setdiff1d(np.arange(asm.n_dofs), np.flatnonzero(asm.S.sum(axis=0)))
        assert np.all(tau[passive] == 0.0)
        assert np.linalg.norm(controller.diagnostics["tau_model"][passive]) <= 1e-8 * max(1.0, np.linalg.norm(tau))
        if terms.Phi.shape[0]:
            assert np.abs(terms.Phi @ res.a + terms.bias).max() < 1e-9 * max(1.0, np.abs(res.a).max())
    assert worst < 1e-8, worst


def test_direct_and_minimal_mappings_give_the_same_minimum_norm_inputs():
    """J̄ᵀΘᵀSᵀ = Λ J Θ M⁻¹ Sᵀ and J̄_pᵀCᵀSᵀ = Λ_p J Θ M⁻¹ Sᵀ differ by an invertible left factor, so the
    minimum-norm τ_k of [DE-70] and [DE-79] coincide."""
    rng = np.random.default_rng(3)
    for name, asm, task, desired in SCENARIOS:
        d, m = CONTROLLERS["direct"](task, desired), CONTROLLERS["minimal"](task, desired)
        q, v = random_state(asm, rng)
        a, b = d(0.0, fb.State(0.0, q, v), asm), m(0.0, fb.State(0.0, q, v), asm)
        assert np.allclose(a, b, rtol=1e-9, atol=1e-9 * max(1.0, np.abs(a).max())), name


def test_pidc_torque_has_minimum_norm_and_weighting_minimises_the_weighted_norm():
    """[AG-46]: among torques producing the same motion PIDC's has the least norm; with W [AG-47] the
    least τᵀW⁻¹τ. The motion (plant acceleration) is the same for all of them."""
    rng = np.random.default_rng(5)
    asm = mech.planar_arm_on_line().assemble()
    tip = asm.trees[0].point(asm.trees[0].link("l3"), (0.6, 0, 0))
    frame = asm.trees[0].frame(asm.trees[0].link("l3"))
    task = StackedTask([PointTask(tip, components=(0,)), PlanarOrientationTask(frame)])  # θ = [x, angle], m_T = p
    W = np.diag([4.0, 1.0, 0.25])
    for _ in range(5):
        q, v = random_state(asm, rng)
        s = fb.State(0.0, q, v)
        plain = ctl.ProjectedInverseDynamicsControl(task, [[0.9], [0.1]], 50.0, 10.0)(0.0, s, asm)
        weighted = ctl.ProjectedInverseDynamicsControl(task, [[0.9], [0.1]], 50.0, 10.0, W=W)(0.0, s, asm)
        other = ctl.PartitionedControl(task, [[0.9], [0.1]], 50.0, 10.0, constraint_force=[3.0])(0.0, s, asm)
        terms = asm.terms(0.0, q, v)
        acc = [forward(terms.M, terms.h, tau, terms.Phi, terms.bias).a for tau in (plain, weighted, other)]
        assert np.allclose(acc[0], acc[1], atol=1e-9) and np.allclose(acc[0], acc[2], atol=1e-9)
        assert np.linalg.norm(plain) < np.linalg.norm(other)
        assert np.linalg.norm(plain) <= np.linalg.norm(weighted) + 1e-12
        Wi = np.linalg.inv(W)
        assert weighted @ Wi @ weighted <= plain @ Wi @ plain + 1e-12


def test_passive_joint_law_equals_aghili_H_formula():
    """[AG-59, AG-60]: f = (I + H) f∥ with H = −(I − P)Q⁺(I − B), Q = I − B − P + BP, on the platform
    (n = 9, six passive joints) and the four-bar with one actuated joint."""
    rng = np.random.default_rng(11)
    cases = [(mech.parallel_platform().assemble(), [6, 7, 8]), (mech.four_bar(angle=1.0).assemble(), [0])]
    four = mech.four_bar(angle=1.0)
    crank = [link for link in four.trees[0].links if link.name == "crank"]
    cases[1] = (fb.System(four.trees, four.constraints, actuators=crank, q0=cases[1][0].q0).assemble(), [0])
    for asm, cols in cases:
        task = JointTask([asm.coordinate_labels[i] for i in cols])
        ref = [0.1 * (i + 1) for i in range(len(cols))]
        q, v = random_state(asm, rng)
        c = ctl.ProjectedInverseDynamicsControl(task, ref, 30.0, 8.0)
        c(0.0, fb.State(0.0, q, v), asm)
        f_par, f = c.diagnostics["tau_parallel"], c.diagnostics["tau_model"]
        P = fb.dynamics.projector(asm.constraint_jacobian(0.0, q)).matrix()
        B = asm.S.T @ asm.S
        eye = np.eye(asm.n_dofs)
        Q = eye - B - P + B @ P
        H = -(eye - P) @ np.linalg.pinv(Q, rcond=1e-10) @ (eye - B)
        assert np.allclose(f, (eye + H) @ f_par, rtol=1e-9, atol=1e-9 * np.abs(f).max())


def test_partitioned_desired_constraint_force_is_produced():
    """[DE-90, DE-93]: with f_C = Λ̌₂₁f* + μ̌₂ + p̌₂ − λ_d the plant's multipliers are λ_d (all actuated)."""
    rng = np.random.default_rng(2)
    asm = mech.planar_arm_on_line().assemble()
    tip = asm.trees[0].point(asm.trees[0].link("l3"), (0.6, 0, 0))
    task = PointTask(tip, components=(0,))
    for lam_d in ([0.0], [2.5], [-4.0]):
        q, v = random_state(asm, rng)
        c = ctl.PartitionedControl(
            task, [0.9], 50.0, 10.0, constraint_force=lam_d, null_space=ctl.NullSpaceDamping(0.5)
        )
        tau = c(0.0, fb.State(0.0, q, v), asm)
        xdd, res, _ = plant_task_acceleration(asm, task, 0.0, q, v, tau)
        assert np.allclose(res.lam, lam_d, atol=1e-9)
        assert np.allclose(c.diagnostics["lam_predicted"], lam_d, atol=1e-9)
        assert np.allclose(xdd, c.diagnostics["task_command"], atol=1e-9)


def test_hybrid_law_holds_the_multiplier_and_its_integral_corrects_a_wrong_model():
    """[AG-49..52]: exact model → λ = λ_d at once; with a model whose masses are 30 % high, the force
    error is driven down by the integral term (error dynamics (G_F + 1)ė_f + G_I e_f = 0 [AG-51])."""
    asm = mech.slider_crank(crank=0.6).assemble()
    task = JointTask([asm.trees[0].link("l1")])
    exact = ctl.HybridMotionForceControl(task, [0.9], 25.0, 10.0, lam_desired=[1.5], gf=1.0, gi=20.0)
    res = fb.simulate(asm, 0.3, integrator=fb.RK4(dt=2e-3), controller=exact)
    assert np.abs(res.histories["lam"] - 1.5).max() < 1e-8
    model = mech.slider_crank(crank=0.6, mass=1.3).assemble()
    task_m = JointTask([model.trees[0].link("l1")])
    errors = {}
    for gi in (0.0, 20.0):
        c = ctl.HybridMotionForceControl(task_m, [0.9], 25.0, 10.0, lam_desired=[1.5], gf=1.0, gi=gi, model=model)
        res = fb.simulate(asm, 1.5, integrator=fb.RK4(dt=2e-3), controller=c)
        errors[gi] = np.abs(res.histories["lam"][:, 0] - 1.5)
    assert errors[0.0][-1] > 0.05  # a wrong model leaves a force error without the integral
    assert errors[20.0][-1] < 0.05 * errors[0.0][-1]  # … which the integral removes


def test_estimated_model_is_used_and_tracking_still_converges():
    """A controller with a perturbed model (masses +20 %) no longer gives ẍ = f* exactly; the PD loop
    settles near the goal with the steady offset of a wrong gravity compensation, which the exact model
    does not have: the model, not the plant, is what the controller evaluates."""
    plant = mech.coupled_chain().assemble()
    model = mech.coupled_chain(masses=(1.2,) * 6).assemble()
    tip = model.trees[0].point(model.trees[0].link("l6"), (0.4, 0, 0))
    task = PointTask(tip, components=(0, 1))
    goal = np.array([1.1, 1.2])
    c = ctl.PartitionedControl(task, goal, 100.0, 20.0, model=model, null_space=ctl.NullSpaceDamping(1.0))
    res = fb.simulate(plant, 2.0, integrator=fb.RK4(dt=2e-3), controller=c, record_every=5)
    mismatch = np.abs(
        res.histories["task_command"]
        - np.array(
            [
                task.evaluate(model.workspace(t, q, v)).J @ a + task.evaluate(model.workspace(t, q, v)).bias
                for t, q, v, a in zip(res.times, res.q, res.v, res.histories["a"])
            ]
        )
    ).max()
    assert mismatch > 1e-3
    start = np.linalg.norm(res.histories["task_x"][0] - goal)
    end = np.linalg.norm(res.histories["task_x"][-1] - goal)
    assert (
        end < 0.05 * start and np.abs(res.histories["task_error"][-1] - res.histories["task_error"][-10]).max() < 1e-3
    )
    assert res.histories["violation"].max() < 1e-9
    c_exact = ctl.PartitionedControl(
        PointTask(plant.trees[0].point(plant.trees[0].link("l6"), (0.4, 0, 0)), components=(0, 1)),
        goal,
        100.0,
        20.0,
        null_space=ctl.NullSpaceDamping(1.0),
    )
    exact = fb.simulate(plant, 2.0, integrator=fb.RK4(dt=2e-3), controller=c_exact, record_every=5)
    assert np.linalg.norm(exact.histories["task_x"][-1] - goal) < 0.1 * end  # the offset is the model's error


def test_simulation_records_controller_histories_and_metadata(tmp_path):
    asm = mech.slider_crank(crank=np.pi / 6, actuated=(0,)).assemble()
    c = ctl.PartitionedControl(JointTask([asm.trees[0].link("l1")]), [np.pi / 3], 25.0, 10.0)
    res = fb.simulate(asm, 0.2, integrator=fb.RK4(dt=1e-3), controller=c, record_every=10)
    for key in ("task_x", "task_desired", "task_error", "task_command", "tau_k", "lam_predicted", "passive_residual"):
        assert key in res.histories and len(res.histories[key]) == res.n_steps, key
    assert res.histories["tau_k"].shape == (res.n_steps, 1)
    assert np.allclose(res.histories["tau"][:, 1], 0.0) and np.allclose(
        res.histories["tau"][:, 0], res.histories["tau_k"][:, 0]
    )
    assert np.allclose(res.histories["lam_predicted"], res.histories["lam"], atol=1e-9)
    assert res.metadata["controller"] == "PartitionedControl"
    assert res.metadata["task_labels"] == ["joints.crank.l1"] and res.metadata["actuated_labels"] == ["crank.l1"]
    res.save(tmp_path / "run")
    back = fb.Results.load(tmp_path / "run")
    assert np.array_equal(back.histories["task_x"], res.histories["task_x"])
    assert back.metadata["task_labels"] == res.metadata["task_labels"]


# ------------------------------------------------------------------------------------ actuation report
def test_report_dead_centre_slider_crank_with_one_actuator():
    """AG VIII-B: at q₁ = π/2 with one active joint P = I and the system is not controllable [AG-62]; the
    report says why, with singular values and tolerance, and PIDC raises instead of returning zero."""
    asm = mech.slider_crank(actuated=(0,)).assemble()
    task = JointTask([asm.trees[0].link("l1")])
    q = np.array([np.pi / 2, np.pi])
    report = ctl.actuation_report(asm, 0.0, q, task=task)
    assert report.constraint_rank == 0 and report.dof == 2 and not report.motion_actuated
    assert not report.ok("pidc") and not report.maps["aghili"].ok and not report.maps["passive_constraints"].ok
    assert "AG-56" in report.maps["aghili"].source and report.maps["passive_constraints"].singular_values[0] < 1e-12
    assert any("passive" in reason for reason in report.failures("pidc"))
    with pytest.raises(ActuationError, match=r"crank.l2") as info:
        ctl.ProjectedInverseDynamicsControl(task, [1.0], 25.0, 10.0)(0.0, fb.State(0.0, q, np.zeros(2)), asm)
    assert info.value.report is not None and not info.value.report.ok
    away = ctl.actuation_report(asm, 0.0, np.array([1.0, 2 * np.pi - 2.0]), task=task)
    assert away.ok("pidc") and away.ok("partitioned") and away.constraint_rank == 1
    both = ctl.actuation_report(mech.slider_crank(actuated=(0, 1)).assemble(), 0.0, q, task=JointTask(["crank.l1"]))
    assert both.ok("pidc") and both.motion_actuated


def test_warn_mode_warns_instead_of_raising():
    asm = mech.slider_crank(actuated=(0,)).assemble()
    task = JointTask([asm.trees[0].link("l1")])
    c = ctl.ProjectedInverseDynamicsControl(task, [1.0], 25.0, 10.0, on_deficient="warn")
    with pytest.warns(ctl.ActuationWarning):
        c(0.0, fb.State(0.0, np.array([np.pi / 2, np.pi]), np.zeros(2)), asm)


def test_singular_band_stops_a_run_and_keeps_what_was_computed():
    """Driving the one-actuator slider-crank towards the dead centre with Aghili's ε (atol) = 0.05: inside
    the band the constraint is dropped, the controller raises, the partial results are kept."""
    asm = mech.slider_crank(crank=1.2, actuated=(0,)).assemble()
    c = ctl.ProjectedInverseDynamicsControl(
        JointTask([asm.trees[0].link("l1")]), [np.pi / 2 + 0.3], 25.0, 10.0, atol=0.05
    )
    with pytest.raises(ActuationError) as info:
        fb.simulate(asm, 2.0, integrator=fb.RK4(dt=2e-3), controller=c)
    partial = info.value.last_good
    assert partial.n_steps > 10 and partial.events[-1]["kind"] == "failure"
    assert abs(np.cos(partial.q[-1, 0])) < 0.1


@pytest.mark.parametrize("seed", range(6))
def test_aghili_condition_equals_full_row_rank_of_passive_constraint_map(seed):
    """[AG-56] R((I−B)P) ⊆ R((I−B)(I−P)) ⇔ rank S̃Φᵀ = n − k (the two checks of the report agree)."""
    rng = np.random.default_rng(seed)
    base = mech.parallel_platform()
    tree = base.trees[0]
    links = [link for link in tree.links if link.coordinate is not None]
    chosen = rng.choice(len(links), size=rng.integers(1, 8), replace=False)
    asm = fb.System(
        base.trees,
        base.constraints,
        actuators=[links[i] for i in sorted(chosen)],
        q0=mech.parallel_platform().assemble().q0,
    ).assemble()
    report = ctl.actuation_report(asm, 0.0, asm.q0)
    assert report.maps["aghili"].ok == report.maps["passive_constraints"].ok


def test_report_classifies_the_de_examples():
    chain = mech.coupled_chain().assemble()
    tip = chain.trees[0].point(chain.trees[0].link("l6"), (0.4, 0, 0))
    r = ctl.actuation_report(chain, 0.0, chain.q0, task=PointTask(tip, components=(0, 1)))
    assert (r.n, r.n_constraints, r.dof, r.n_actuators, r.n_task) == (6, 2, 4, 6, 2)
    assert r.ok() and r.motion_actuated and r.task_actuated
    plat = mech.parallel_platform().assemble()
    for cols in ((1, 3, 5), (6, 7, 8)):
        r = ctl.actuation_report(plat, 0.0, plat.q0, task=JointTask([plat.coordinate_labels[i] for i in cols]))
        assert (r.n, r.n_constraints, r.dof, r.n_actuators) == (9, 6, 3, 3)
        assert r.ok("partitioned") and r.ok("direct") and r.ok("pidc")
        assert r.maps["passive_constraints"].shape == (6, 6) and r.maps["passive_constraints"].ok
    under = mech.underactuated_chain().assemble()
    tip = under.trees[0].point(under.trees[0].link("l3"), (0.5, 0, 0))
    r = ctl.actuation_report(under, 0.0, under.q0, task=PointTask(tip, components=(0, 1)))
    assert not r.motion_actuated and r.task_actuated
    assert not r.maps["passive_constraints"].ok and r.maps["passive_nullspace"].ok  # DE 5.4.3 via Ňᵀ
    assert r.ok("partitioned") and r.ok("direct") and not r.ok("pidc")
    assert "S̃Φᵀ" in str(r) and "rank" in str(r)


def test_task_blocked_by_constraints_is_reported():
    """A task along a constrained direction (the slider's end-point y) has J̌ = [J; Φ] rank-deficient."""
    asm = mech.slider_crank(crank=0.7).assemble()
    tip = asm.trees[0].point(asm.trees[0].link("l2"), (1.0, 0, 0))
    task = PointTask(tip, components=(1,))
    q = asm.q0
    r = ctl.actuation_report(asm, 0.0, q, task=task)
    assert not r.maps["independent"].ok and not r.maps["direct"].ok
    for kind in ("direct", "partitioned", "pidc"):
        with pytest.raises(ActuationError):
            CONTROLLERS[kind](task, [0.0])(0.0, fb.State(0.0, q, np.zeros(2)), asm)


# ------------------------------------------------------------------------------------------ bad input
def test_bad_input_is_named():
    asm = mech.slider_crank(crank=0.7).assemble()
    task = JointTask([asm.trees[0].link("l1")])
    state = fb.State(0.0, asm.q0, np.zeros(2))
    with pytest.raises(ModelError, match="task"):
        ctl.PartitionedControl("l1", [1.0], 1.0, 1.0)
    with pytest.raises(ModelError, match="kp"):
        ctl.PartitionedControl(task, [1.0], np.ones(3), 1.0)
    with pytest.raises(ModelError, match="on_deficient"):
        ctl.PartitionedControl(task, [1.0], 1.0, 1.0, on_deficient="ignore")
    with pytest.raises(StateError, match="desired"):
        ctl.PartitionedControl(task, [1.0, 2.0], 1.0, 1.0)(0.0, state, asm)
    with pytest.raises(ModelError, match="lam_desired"):
        ctl.HybridMotionForceControl(task, [1.0], 1.0, 1.0, lam_desired=[0.0, 0.0], gf=1, gi=1)(0.0, state, asm)
    with pytest.raises(ModelError, match="coordinates"):
        ctl.PartitionedControl(task, [1.0], 1.0, 1.0, model=mech.coupled_chain().assemble())(0.0, state, asm)
    with pytest.raises(FlexbodyError, match="either tau or controller"):
        fb.simulate(asm, 0.1, tau=np.zeros(2), controller=ctl.PartitionedControl(task, [1.0], 1.0, 1.0))
    passive = mech.slider_crank(crank=0.7, actuated=(0,)).assemble()
    idc = ctl.ComputedTorqueControl(lambda t: (passive.q0, np.zeros(2), np.zeros(2)), 1.0, 1.0)
    with pytest.raises(ActuationError, match="every coordinate actuated"):
        idc(0.0, state, passive)


def test_gravity_effort_gradient_matches_finite_difference_of_U():
    asm = mech.coupled_chain().assemble()
    rng = np.random.default_rng(0)
    q = asm.q0 + 0.2 * rng.normal(size=6)
    grad = ctl.GravityEffort(0.1).gradient(ctl.ControlContext(asm, 0.0, q, np.zeros(6)))
    h = 1e-5
    fd = np.array(
        [
            (ctl.GravityEffort.effort(asm, q + h * e) - ctl.GravityEffort.effort(asm, q - h * e)) / (2 * h)
            for e in np.eye(6)
        ]
    )
    assert np.allclose(grad, fd, rtol=1e-6, atol=1e-6 * np.abs(fd).max())


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
def test_approaching_a_singular_passive_map_warns_before_the_run_fails():
    """DE 5.4.3 chain from its default posture: keeping joint 1 torque-free drives the self-motion to a
    configuration where S̃Ňᵀ vanishes; the controller warns (σ_min of the dimensionless map below
    NEAR_SINGULAR) before the torques diverge, the history "passive_map_sigma_min" shows the fall, and the
    failed run keeps its results."""
    asm = mech.underactuated_chain().assemble()
    tip = asm.trees[0].point(asm.trees[0].link("l3"), (0.5, 0, 0))
    task = PointTask(tip, components=(0, 1))
    x0 = task.evaluate(asm.workspace(0.0, asm.q0)).x
    c = ctl.PartitionedControl(task, x0 + np.array([-0.1, 0.0]), 100.0, 20.0)
    with pytest.warns(ctl.ActuationWarning, match="S̃\\[Φᵀ, Ňᵀ\\]"), pytest.raises(FlexbodyError) as info:
        fb.simulate(asm, 0.1, integrator=fb.RK4(dt=1e-3), controller=c)
    partial = info.value.last_good
    sigma = partial.histories["passive_map_sigma_min"]
    assert partial.n_steps > 20 and sigma[0] > 3.0 and sigma.min() < 0.6
