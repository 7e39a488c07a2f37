"""Case 34 (a UR5 holds a gmsh-meshed aluminium bracket under a tool force): the holding torques against Pinocchio's
RNEA of the same URDF, the bracket's mass against its closed-form volume, and its deflection against the same bracket
clamped to the ground under the same loads (the flange held still).

Run on 8 mm tetrahedra (786 elements, 1671 nodes; the case's default is 5 mm). Measured at 8 mm: torques equal
RNEA − Jᵀ w to 2.6e-15 of the largest; mass 2.42814e-5 m³ × ρ to 1.9e-5 (the quadratic edges' geometric error on the
bolt hole; asserted 1e-4); the load face's deflection (0.332, 0.000, −0.268 mm) equal to the ground-clamped bracket's
to 1e-10 m.
"""

import json

import numpy as np
import pytest
from case_files import CASES, assert_files, load

import flexbody as fb

MESH_SIZE = 0.008  # m: a coarser mesh than the case's, for speed
VOLUME = 0.060 * 0.040 * 0.006 + 0.006 * 0.040 * 0.044 - np.pi * 0.006**2 * 0.006  # m³: plates minus the hole


@pytest.fixture(scope="module")
def case():
    return load("34_ur5_holds_meshed_bracket.py")


@pytest.fixture(scope="module")
def held(case, tmp_path_factory):
    out = tmp_path_factory.mktemp("case34")
    return out, case.main(out, mesh_size=MESH_SIZE)


def test_outputs_are_written(held):
    out, summary = held
    assert_files(out, ["bracket.vtu", "bracket.msh", "summary.txt"])
    written = json.loads((out / "summary.txt").read_text())
    assert written["holding_torques"] == summary["holding_torques"]
    back = fb.mesh.read(out / "bracket.msh")
    assert isinstance(back, fb.TetMesh) and sorted(back.face_sets) == ["bolt", "clamp", "load"]


def test_holding_torques_match_pinocchio_rnea_minus_the_brackets_wrench(case, held):
    """τ = RNEA(q0, 0, 0) − J_tool0ᵀ [f; Σ (x_a − p) × f_a], f_a the bracket's nodal external forces (weight and
    tool force) at the deflected nodes x_a, f their sum, p the flange origin."""
    pin = pytest.importorskip("pinocchio")
    _, summary = held
    asm, eq = summary["assembled"], summary["equilibrium"]
    bracket = asm.bodies[0]
    x = asm.coordinates(bracket, eq.q)
    q_body = x.ravel()
    forces = sum(load.force(q_body) for load in asm.flexible.loads).reshape(-1, 3)
    model = pin.buildModelFromUrdf(str(CASES.parent / case.ROBOT))
    data = model.createData()
    q = np.asarray(case.Q0, dtype=float)
    frame = model.getFrameId(case.FLANGE)
    pin.framesForwardKinematics(model, data, q)
    p = data.oMf[frame].translation
    J = pin.computeFrameJacobian(model, data, q, frame, pin.LOCAL_WORLD_ALIGNED)
    gravity = pin.rnea(model, data, q, np.zeros(6), np.zeros(6))
    wrench = np.concatenate([forces.sum(axis=0), np.cross(x - p, forces).sum(axis=0)])
    expected = gravity - J.T @ wrench
    tau = np.asarray(summary["holding_torques"])
    assert np.abs(tau - expected).max() <= 1e-12 * np.abs(expected).max()
    assert np.abs(tau - gravity).max() > 1.0  # the bracket's share is not negligible


def test_mass_is_the_closed_form_volume_times_density(case, held):
    _, summary = held
    assert summary["mass"] == pytest.approx(case.DENSITY * VOLUME, rel=1e-4)


def test_deflection_equals_the_ground_clamped_brackets(case, held):
    """The same bracket mesh in its own axes, clamped at "clamp", under gravity and the tool force in those axes (at
    Q0 the flange carries the bracket's axes onto the world's): the load face moves as on the held flange."""
    _, summary = held
    asm = summary["assembled"]
    R, _ = case.flange_pose(asm, asm.q0)
    axes = R @ fb.mechanisms.TOOL_AXES  # bracket axes in world
    mesh = case.bracket_mesh(mesh_size=MESH_SIZE)
    bracket = fb.FlexibleBody("bracket", mesh, fb.NeoHookean(case.YOUNG, case.POISSON, case.DENSITY))
    loads = [
        fb.Gravity(bracket, axes.T @ np.array([0.0, 0.0, -case.GRAVITY])),
        fb.SurfaceTraction(bracket, "load", total=axes.T @ np.asarray(case.TOOL_FORCE)),
    ]
    system = fb.System([bracket], constraints=[fb.Fix(bracket, "clamp")], loads=loads)
    results = fb.solve_static(system, load_steps=2, settings=fb.NewtonSettings(tol=1e-12))
    ground = results.displacements(bracket)[bracket.nodes("load")].mean(axis=0)
    np.testing.assert_allclose(summary["tip_deflection"], ground, atol=1e-10)
    assert np.linalg.norm(ground) > 1e-4  # a deflection of a tenth of a millimetre or more
