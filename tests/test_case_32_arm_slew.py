"""Case 32 (a rest-to-rest slew of case 16's arm with its ANCF beam, planned on the flexible model, against the
rigid-model plan and a ZV-shaped one).

* The rigid model is faithful: its joint-space mass matrix equals the full model's arm block plus JᵀM_fJ, the beam's
  consistent mass carried rigidly by link 2 (J the nodes' velocities per joint rate), to 1e-12 — the box's closed-form
  inertia against the finite-element mass.
* The whole case (``make test-slow``, about 5 min): the flexible plan leaves at least 100 times less residual
  vibration energy in the beam than the rigid-model plan, both simulated on the full ANCF model at half the planning
  step (the Done-when of #37)."""

import numpy as np
import pytest
from case_files import load


def test_the_rigid_model_carries_the_beams_mass_and_inertia():
    case = load("32_arm_slew.py")
    full, rigid = case.build(False).assemble(), case.build(True).assemble()
    q = full.q0
    M_full = full.workspace(0.0, q).mass_matrix()
    arm = M_full.rigid_block()
    beam = full.flexible.bodies[0]
    nodes = q[full.slices[beam]].reshape(-1, 3)
    kin = full.trees[0].kinematics(q[:2])
    axis = np.array([0.0, 1.0, 0.0])
    J = np.stack([np.cross(axis, nodes - kin.p[j]).ravel() for j in (0, 1)], axis=1)  # (n_f, 2)
    expected = arm + J.T @ (beam.mass_matrix() @ J)
    M_rigid = np.asarray(rigid.workspace(0.0, rigid.q0).mass_matrix())
    assert np.max(np.abs(M_rigid - expected)) < 1e-12 * np.max(np.abs(expected))


@pytest.mark.slow  # two plans of about 30 SLSQP iterations, the flexible one on the full model: about 5 min
def test_the_flexible_plan_leaves_a_hundred_times_less_vibration(tmp_path):
    case = load("32_arm_slew.py")
    s = case.main(tmp_path)
    assert s["rigid_plan"]["success"] and s["flexible_plan"]["success"]
    assert s["ratio_rigid_over_flexible"] >= 100.0
    assert (tmp_path / "vibration.png").exists() and (tmp_path / "torques.png").exists()
