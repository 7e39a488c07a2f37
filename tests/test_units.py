"""Units of coordinates, constraint rows, multipliers and task rows, and their record in a run's metadata."""

import numpy as np
import pytest

import flexbody as fb
from flexbody import control as ctl
from flexbody.constraints.base import force_unit

Z = (0.0, 0.0, 1.0)


def arm_with_slide():
    """A planar tree revolute – prismatic – revolute (q in rad, m, rad) and a two-link tree (rad, rad)."""
    tree = fb.RigidTree("arm", gravity=(0.0, -9.81, 0.0))
    l1 = tree.add_link("shoulder", joint=fb.Revolute(Z), mass=1.0, com=(0.2, 0, 0))
    l2 = tree.add_link("slide", l1, fb.Prismatic((1, 0, 0)), origin=(0.3, 0, 0), mass=0.5, com=(0.1, 0, 0))
    l3 = tree.add_link("elbow", l2, fb.Revolute(Z), origin=(0.2, 0, 0), mass=0.5, com=(0.2, 0, 0))
    other = fb.RigidTree("pair")
    k1 = other.add_link("k1", joint=fb.Revolute(Z), mass=1.0, com=(0.2, 0, 0))
    k2 = other.add_link("k2", k1, fb.Prismatic((0, 1, 0)), mass=1.0)
    return tree, (l1, l2, l3), other, (k1, k2)


def test_joint_units():
    assert (fb.Revolute().unit, fb.Revolute().force_unit) == ("rad", "N·m")
    assert (fb.Prismatic().unit, fb.Prismatic().force_unit) == ("m", "N")
    assert [force_unit(u) for u in ("m", "rad", "-")] == ["N", "N·m", "-"]


def test_coordinate_units_of_a_revolute_prismatic_tree():
    tree, _, _, _ = arm_with_slide()
    asm = fb.System([tree], []).assemble()
    assert asm.coordinate_units == ["rad", "m", "rad"]
    assert len(asm.coordinate_units) == len(asm.coordinate_labels)
    assert asm.actuated_units == ["rad", "m", "rad"]
    one = fb.RigidTree("one")
    one.add_link("a", joint=fb.Revolute(Z), mass=1.0)
    one.add_link("b", one.link("a"), fb.Prismatic(), mass=1.0)
    assert fb.System([one], []).assemble().coordinate_units == ["rad", "m"]


def test_point_to_point_row_is_metres_and_its_multiplier_newtons():
    tree, (l1, _, l3), _, _ = arm_with_slide()
    loop = fb.PointToPoint(tree.point(l3, (0.4, 0, 0)), fb.Ground((0.5, 0.2, 0.0)), components=(0, 1))
    assert loop.units == ("m", "m") and loop.multiplier_units == ("N", "N")
    rod = fb.Distance(tree.point(l1, (0.2, 0, 0)), fb.Ground((1.0, 0, 0)), 0.5)
    assert rod.units == ("m",) and rod.multiplier_units == ("N",)


def test_weld_and_hinge_angle_rows_are_radians_and_their_multipliers_newton_metres():
    tree, (_, _, l3), _, _ = arm_with_slide()
    weld = fb.Weld(tree.frame(l3), fb.Ground())
    assert weld.units == ("m",) * 3 + ("rad",) * 3
    assert weld.multiplier_units == ("N",) * 3 + ("N·m",) * 3
    hinge = fb.Hinge(tree.frame(l3), fb.Ground())
    assert hinge.units == ("m",) * 3 + ("rad",) * 2 and hinge.multiplier_units[3:] == ("N·m", "N·m")


def test_surface_rows():
    tree, (_, _, l3), _, _ = arm_with_slide()
    tip = tree.point(l3, (0.4, 0, 0))
    assert fb.OnSurface(tip, fb.Plane((0, 1, 0))).units == ("m",)
    assert fb.OnSurface(tip, fb.Sphere((0, 0, 0), 1.0)).units == ("m",)
    implicit = fb.ImplicitSurface(lambda x: x @ x - 1.0, lambda x: 2 * x, lambda x: 2 * np.eye(3))
    assert fb.OnSurface(tip, implicit).units == ("-",) and fb.OnSurface(tip, implicit).multiplier_units == ("-",)


def test_coupling_rows_take_the_joint_units():
    _tree, (l1, l2, l3), _other, (k1, k2) = arm_with_slide()
    assert fb.JointDriver(l1, 0.3).units == ("rad",) and fb.JointDriver(l1, 0.3).multiplier_units == ("N·m",)
    assert fb.JointDriver(l2, 0.1).units == ("m",) and fb.JointDriver(l2, 0.1).multiplier_units == ("N",)
    assert fb.LinearCoupling({l1: 1.0, l3: -2.0}).units == ("rad",)
    assert fb.LinearCoupling({l1: 1.0, l2: -2.0}).units == ("-",)  # mixed joints: no single unit
    rack = fb.Gear(driver=k1, driven=k2, ratio=0.05)  # pinion angle drives a rack [m]
    assert rack.units == ("m",) and rack.multiplier_units == ("N",)
    assert fb.PolynomialCoupling(l2, l1, [0.0, 0.1]).units == ("m",)


def test_node_rows_are_metres():
    mesh = fb.mesh.box((1.0, 0.1, 0.1), (2, 1, 1))
    beam = fb.FlexibleBody("beam", mesh, fb.StVenantKirchhoff(young=1e7, poisson=0.3, density=1000.0))
    clamp = fb.constraints.FixNodes(beam, "x0")
    assert clamp.units == ("m",) * clamp.n_rows and set(clamp.multiplier_units) == {"N"}
    asm = fb.System([beam], [clamp]).assemble()
    assert asm.coordinate_units == ["m"] * beam.n_dofs and asm.row_units == ["m"] * clamp.n_rows


def test_task_units():
    tree, (l1, l2, l3), _, _ = arm_with_slide()
    point = fb.PointTask(tree.point(l3, (0.4, 0, 0)), components=(0, 1), name="tip")
    angle = fb.PlanarOrientationTask(tree.frame(l3), name="angle")
    assert point.units == ("m", "m") and angle.units == ("rad",)
    assert fb.OrientationTask(tree.frame(l3)).units == ("rad",) * 3
    assert fb.JointTask([l1, l2]).units == ("rad", "m")
    assert fb.StackedTask([point, angle]).units == ("m", "m", "rad")
    by_label = fb.JointTask(["arm.slide", "arm.elbow"])
    assert by_label.units == ("rad or m",) * 2  # unknown until resolved
    asm = fb.System([tree], []).assemble()
    assert by_label.units_in(asm) == ("m", "rad")
    assert fb.StackedTask([point, by_label]).units_in(asm) == ("m", "m", "m", "rad")


def test_units_reach_the_run_metadata():
    """simulate records the units next to the labels, and the task's units with a task controller."""
    asm = fb.mechanisms.planar_arm_on_line().assemble()
    tree = asm.trees[0]
    task = fb.StackedTask(
        [
            fb.PointTask(tree.point("l3", (0.6, 0, 0)), components=(0,), name="x"),
            fb.PlanarOrientationTask(tree.frame("l3"), name="theta"),
        ]
    )
    controller = ctl.ProjectedInverseDynamicsControl(task, [[0.5], -0.3], 25.0, 10.0)
    res = fb.simulate(asm, 0.02, integrator=fb.RK4(dt=2e-3), controller=controller)
    meta = res.metadata
    assert meta["coordinate_units"] == ["rad"] * 3 and meta["actuated_units"] == ["rad"] * 3
    assert meta["row_units"] == ["m"]
    assert meta["task_labels"] == ["x.x", "theta.rz"] and meta["task_units"] == ["m", "rad"]


def test_units_survive_save_and_load(tmp_path):
    tree, _, _, _ = arm_with_slide()
    res = fb.simulate(fb.System([tree], []).assemble(), 0.01, integrator=fb.RK4(dt=5e-3))
    res.save(tmp_path / "run")
    loaded = fb.Results.load(tmp_path / "run")
    assert loaded.metadata["coordinate_units"] == ["rad", "m", "rad"] and loaded.metadata["row_units"] == []


@pytest.mark.parametrize("surface", [fb.Plane((0, 1, 0)), fb.Cylinder((0, 0, 0), 1.0)])
def test_metric_surfaces(surface):
    tree, (_, _, l3), _, _ = arm_with_slide()
    assert fb.OnSurface(tree.point(l3), surface).units == ("m",)
