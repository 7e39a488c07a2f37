"""Case 17 at reduced size: a UR5 loaded from the shipped URDF carries a flexible ANCF bar under task-level
control of its flange pose [DE-65..71, DE-107..113].

Checked against what nobody here wrote: the holding torques against Pinocchio's RNEA of the same URDF plus the
bar's weight at its centre of mass (through Pinocchio's tool0 Jacobian); the static sag against the
Euler–Bernoulli cantilever w L⁴/(8 E I); the ringing after the move against the clamped–free first bending
frequency (β₁L)² √(EI/(ρAL⁴))/2π. Also: tracking error O(dt) (first order), attachment drift at round-off,
the energy balance E − E0 = W − D, rank of the flange map vs the tip map, and the outputs read back.
"""

import json
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from case_files import assert_files, load

SMALL = {"divisions": (8, 1, 1), "t_move": 0.5, "t_end": 1.5, "dt": 2e-3, "vtk_every": 50}


@pytest.fixture(scope="module")
def case():
    return load("17_urdf_arm_payload.py")


@pytest.fixture(scope="module")
def run(case, tmp_path_factory):
    out = tmp_path_factory.mktemp("case17")
    return out, case.main(str(out), **SMALL)


def test_the_robot_ships_with_the_repository(case):
    """The URDF is in meshes/robots (no example-robot-data needed) and loads without its visual meshes."""
    path = case.robot_file()
    assert path.is_file() and path.parent.name == "robots"
    asm = case.build(divisions=(2, 1, 1)).assemble()
    tree = asm.trees[0]
    assert tree.n_dofs == 6 and tree.visuals == {} and asm.n_dofs == 6 + 3 * 3 * 2 * 2
    joints = [tree.limits[l.name].joint for l in tree.links if l.coordinate is not None]
    assert joints == [
        "shoulder_pan_joint",
        "shoulder_lift_joint",
        "elbow_joint",
        "wrist_1_joint",
        "wrist_2_joint",
        "wrist_3_joint",
    ]


def test_holding_torques_match_pinocchio_rnea_plus_the_payload_weight(case, run):
    """τ = RNEA(q0, 0, 0) − J_tool0ᵀ [m g; (c − p) × m g] with Pinocchio's model of the same file: 4e-16 relative
    with the bar's deflected centre of mass c, ≈ 1e-5 with the straight bar's (the sag moves c by 6e-5 m)."""
    pin = pytest.importorskip("pinocchio")
    _, s = run
    static = s["static"]
    model = pin.buildModelFromUrdf(str(case.robot_file()))
    data = model.createData()
    names = [model.names[j] for j in range(1, model.njoints)]
    assert names == static["joint_names"] and model.nv == 6  # same coordinate order
    q = np.asarray(case.Q0, dtype=float)
    frame = model.getFrameId(case.FLANGE)
    pin.framesForwardKinematics(model, data, q)
    p = data.oMf[frame].translation
    np.testing.assert_allclose(p, static["flange_position"], atol=1e-12)
    np.testing.assert_allclose(data.oMf[frame].rotation, static["flange_rotation"], atol=1e-12)
    J = pin.computeFrameJacobian(model, data, q, frame, pin.LOCAL_WORLD_ALIGNED)
    gravity = pin.rnea(model, data, q, np.zeros(6), np.zeros(6))
    m = static["payload_mass"]
    assert m == pytest.approx(case.DENSITY * np.prod(case.PAYLOAD_SIZE), rel=1e-12)
    weight = np.array([0.0, 0.0, -case.GRAVITY * m])
    tau = np.asarray(static["holding_torques"])
    straight = p + np.asarray(static["flange_rotation"]) @ np.array([0.0, 0.0, case.PAYLOAD_SIZE[0] / 2])
    for centre, tol in ((np.asarray(static["payload_centre_of_mass"]), 1e-12), (straight, 1e-4)):
        expected = gravity - J.T @ np.concatenate([weight, np.cross(centre - p, weight)])
        assert np.abs(tau - expected).max() <= tol * np.abs(expected).max()
    assert np.abs(tau - gravity).max() > 1.0  # the payload's share is not negligible


@pytest.mark.parametrize("poisson, low, high", [(0.0, 0.999, 1.001), (0.35, 0.985, 0.995)])
def test_static_sag_against_euler_bernoulli(case, poisson, low, high):
    """Full-size mesh (20 × 1 × 1): 1.00003 of w L⁴/(8 E I) with ν = 0 (shear +3e-4 and geometric stiffening
    −2e-4 nearly cancel); 0.9905 with ν = 0.35 (the clamped root face is stiffer than the beam)."""
    params = {
        "flange": case.FLANGE,
        "gravity": case.GRAVITY,
        "payload_size": case.PAYLOAD_SIZE,
        "young": case.YOUNG,
        "density": case.DENSITY,
    }
    static, _ = case.statics(case.build(poisson=poisson).assemble(), params)
    assert static["euler_bernoulli_tip"] == pytest.approx(1.71675e-2, rel=1e-5)
    assert low <= static["ratio_to_euler_bernoulli"] <= high
    assert static["residual"] < 1e-7 and static["violation"] < 1e-12


def test_summary_numbers(run):
    out, s = run
    flange, tip = s["ranks"]["flange_pose"], s["ranks"]["tip"]
    assert flange["ok"] and flange["rank"] == 6 and not tip["ok"] and tip["rank"] == 0
    assert s["max_position_error"] < 5e-4 and s["max_orientation_error"] < 3e-3  # 2.4e-4 m, 1.4e-3 rad
    assert s["max_violation"] < 1e-9
    assert abs(s["energy_balance_error"]) <= 1e-5 * s["applied_work"]
    assert s["max_torque_over_effort_limit"] < 1.0
    assert np.ptp(s["tip_lateral_range"]) > 2e-3 and np.ptp(s["tip_vertical_range"]) > 2e-3  # it rings
    for axis in "yz":
        ring = s["ringing"][axis]
        assert ring["crossings"] >= 8 and 0.97 <= ring["ratio_to_euler_bernoulli"] <= 1.02, (axis, ring)  # .993, .999
        zeta = s["kelvin_voigt_damping_ratio"][axis]  # the held torque adds O(dt) damping
        assert zeta <= ring["damping_ratio"] <= 2.5 * zeta
    assert json.loads((out / "summary.txt").read_text())["n_coordinates"] == s["n_coordinates"]


def test_tracking_error_is_first_order_in_dt(case):
    """The torque is held over a step: the error of the move halves with dt (measured 1.0e-3 → 4.8e-4 m, 2.08)."""
    asm = case.build(divisions=(4, 1, 1)).assemble()
    params = {
        "flange": case.FLANGE,
        "gravity": case.GRAVITY,
        "payload_size": case.PAYLOAD_SIZE,
        "young": case.YOUNG,
        "density": case.DENSITY,
    }
    _, q0 = case.statics(asm, params)
    errors = []
    for dt in (4e-3, 2e-3):
        res, _ = case.run(asm, q0, case.LIFT, case.YAW, 0.4, 0.4, case.OMEGA, dt, 1.0)
        errors.append(np.linalg.norm(res.histories["task_error"][:, :3], axis=1).max())
    assert 1.8 <= errors[0] / errors[1] <= 2.2


def test_outputs_read_back(run):
    import pyvista as pv

    out, s = run
    assert_files(
        out,
        [
            "results.npz",
            "results.json",
            "payload.pvd",
            "ur5.pvd",
            "histories.csv",
            "histories.png",
            "task.png",
            "tip.png",
            "screenshot.png",
            "summary.txt",
        ],
    )
    for series in ("payload", "ur5"):
        files = [d.get("file") for d in ET.parse(out / f"{series}.pvd").getroot().iter("DataSet")]
        assert len(files) == len(range(0, s["steps"] + 1, SMALL["vtk_every"])) + (s["steps"] % SMALL["vtk_every"] != 0)
        reader = pv.get_reader(str(out / f"{series}.pvd"))
        reader.set_active_time_value(reader.time_values[-1])
        mesh = reader.read()[0]
        assert mesh.n_points > 0
        if series == "payload":
            assert {"displacement", "von_mises"} <= set(mesh.point_data.keys())


@pytest.mark.slow
def test_docstring_states_the_numbers_the_full_size_case_prints(case, tmp_path):
    """The full-size run (defaults, ≈ 25 s) prints the numbers its docstring states, to the digits stated."""
    from test_case_docstrings import printed_as, stated

    s = case.main(tmp_path / "17", outputs=False)
    doc = case.__doc__.replace("−", "-")
    assert printed_as(s["static"]["ratio_to_euler_bernoulli"], stated(doc, r"stiffer than the beam: ([\d.]+) of it")[0])
    torques = stated(doc, r"\(0, ([-\d.]+), ([-\d.]+), ([-\d.]+), 0, 0\) N·m")
    for value, text in zip(s["static"]["holding_torques"][1:4], torques):
        assert printed_as(value, text), (value, text)
    big, small, ref = stated(doc, r"σ = ([\d.]+) … ([\d.]+) against σ_ref = ([\d.]+)")
    flange = s["ranks"]["flange_pose"]
    assert printed_as(flange["singular_values"][0], big) and printed_as(flange["singular_values"][-1], small)
    assert printed_as(flange["sigma_ref"], ref)
    position = stated(doc, r"position error‖ [\de.-]+ / ([\de.-]+) / [\de.-]+ m")[0]
    orientation = stated(doc, r"orientation error‖ [\de.-]+ / ([\de.-]+) / [\de.-]+ rad")[0]
    assert printed_as(s["max_position_error"], position) and printed_as(s["max_orientation_error"], orientation)
    assert printed_as(s["max_violation"], stated(doc, r"max ‖φ‖ ([\de.-]+) m")[0])
    mismatch, work = stated(doc, r"mismatch ([\de.-]+) J for W_τ = ([\d.]+) J")
    assert printed_as(s["energy_balance_error"], mismatch) and printed_as(s["applied_work"], work)
    assert printed_as(s["clamped_bar_ratio"][0], stated(doc, r"on this mesh has f = ([\d.]+) f₁")[0])
    f_y, f_z = stated(doc, r"f/f₁ = [\d.]+ / [\d.]+, ([\d.]+) / ([\d.]+),")
    z_y, z_z = stated(doc, r"ζ = [\d.]+ / [\d.]+, ([\d.]+) / ([\d.]+),")
    for axis, f, z in (("y", f_y, z_y), ("z", f_z, z_z)):
        assert printed_as(s["ringing"][axis]["ratio_to_euler_bernoulli"], f), (axis, s["ringing"][axis])
        assert printed_as(s["ringing"][axis]["damping_ratio"], z), (axis, s["ringing"][axis])
