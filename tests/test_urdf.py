"""URDF robots (flexbody.rigid.urdf.load_urdf) against Pinocchio loading the same files (example-robot-data):
mass matrix and inverse dynamics at random states, and bad input named."""

from pathlib import Path

import numpy as np
import pytest

import flexbody as fb
from flexbody.errors import ModelError

pin = pytest.importorskip("pinocchio")

URDFS = {"ur5": "ur_description/urdf/ur5_robot.urdf", "panda": "panda_description/urdf/panda.urdf"}


def _robots() -> Path:
    """The robots folder of example-robot-data (a test extra: a data-only wheel, no Python module)."""
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        folder = Path(distribution("example-robot-data").locate_file("cmeel.prefix/share/example-robot-data/robots"))
    except PackageNotFoundError:
        pytest.skip("example-robot-data is not installed")
    return folder


def _path(robot: str) -> Path:
    return _robots() / URDFS[robot]


def _columns(tree, model) -> np.ndarray:
    """perm with x_pin = x_fb[perm]: each Pinocchio joint's flexbody coordinate, by URDF joint name."""
    by_joint = {limits.joint: tree.link(link).coordinate for link, limits in tree.limits.items()}
    perm = np.empty(model.nv, dtype=int)
    for jid in range(1, model.njoints):
        perm[model.joints[jid].idx_v] = by_joint[model.names[jid]]
    return perm


@pytest.mark.parametrize("robot", sorted(URDFS))
def test_mass_matrix_and_inverse_dynamics_match_pinocchio(robot):
    path = _path(robot)
    tree = fb.load_urdf(path)
    model = pin.buildModelFromUrdf(str(path))
    data = model.createData()
    assert model.nq == model.nv == tree.n_dofs
    perm = _columns(tree, model)
    rng = np.random.default_rng(11)
    for _ in range(5):
        q, v, a = rng.uniform(-1.5, 1.5, tree.n_dofs), rng.normal(size=tree.n_dofs), rng.normal(size=tree.n_dofs)
        M_pin = pin.crba(model, data, q[perm])
        M_pin = np.triu(M_pin) + np.triu(M_pin, 1).T
        tau_pin = pin.rnea(model, data, q[perm], v[perm], a[perm])
        M = tree.mass_matrix(q)[np.ix_(perm, perm)]
        tau = tree.inverse_dynamics(q, v, a)[perm]
        assert np.abs(M - M_pin).max() <= 1e-10 * np.abs(M_pin).max()
        assert np.abs(tau - tau_pin).max() <= 1e-10 * np.abs(tau_pin).max()


def test_limits_and_visual_meshes_are_kept():
    tree = fb.load_urdf(_path("ur5"))
    limits = tree.limits["shoulder_link"]
    assert limits.joint == "shoulder_pan_joint"
    assert (limits.lower, limits.upper, limits.velocity, limits.effort) == (-6.28318530718, 6.28318530718, 3.15, 150.0)
    meshes = tree.visuals["shoulder_link"]
    assert meshes and all(m.path.is_file() for m in meshes)
    assert fb.load_urdf(_path("ur5"), visuals=False).visuals == {}


LINK = """<link name="{name}"><inertial><origin xyz="0 0 0.1" rpy="0 0 0"/><mass value="1.0"/>
<inertia ixx="{ixx}" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>{visual}</link>"""


def _write(tmp_path, joint_type="revolute", ixx="0.01", visual=""):
    text = f"""<?xml version="1.0"?>
<robot name="two">
{LINK.format(name="base", ixx="0.01", visual="")}
{LINK.format(name="arm", ixx=ixx, visual=visual)}
<joint name="j1" type="{joint_type}"><parent link="base"/><child link="arm"/><origin xyz="0 0 0.2" rpy="0 0 0"/>
<axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="10" velocity="2"/></joint>
</robot>"""
    path = tmp_path / "two.urdf"
    path.write_text(text)
    return path


def test_a_small_urdf_loads_with_the_inertia_turned_into_link_axes(tmp_path):
    tree = fb.load_urdf(_write(tmp_path))
    assert tree.n_dofs == 1 and [link.name for link in tree.links] == ["base", "arm"]
    assert np.allclose(tree.link("arm").com, (0, 0, 0.1)) and np.allclose(
        tree.link("arm").placement_origin, (0, 0, 0.2)
    )


def test_floating_and_planar_joints_and_a_floating_base(tmp_path):
    floating = fb.load_urdf(_write(tmp_path, joint_type="floating"))
    assert isinstance(floating.link("arm").compound, fb.FreeFlyer) and floating.n_dofs == 6
    planar = fb.load_urdf(_write(tmp_path, joint_type="planar"))
    assert isinstance(planar.link("arm").compound, fb.Planar) and np.allclose(
        planar.link("arm").compound.normal, (0, 1, 0)
    )
    based = fb.load_urdf(_write(tmp_path), floating_base=True)
    assert based.coordinate_labels[:6] == [f"two.base.{s}" for s in ("tx", "ty", "tz", "rx", "ry", "rz")]


def test_placeholder_links_are_checked_welded_to_their_body(tmp_path):
    """A massless placeholder link with an incomplete inertia, welded by a fixed joint to a real body, loads
    (as ANYmal's and Go1's files need); a welded body whose total inertia is not physical is refused."""

    def write(ixx):
        text = f"""<?xml version="1.0"?>
<robot name="weld"><link name="base"><inertial><mass value="0.001"/><inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0"
izz="3e-6"/></inertial></link><link name="trunk"><inertial><mass value="5"/><inertia ixx="{ixx}" ixy="0" ixz="0"
iyy="0.2" iyz="0" izz="0.2"/></inertial></link><joint name="weld" type="fixed"><parent link="base"/>
<child link="trunk"/></joint></robot>"""
        path = tmp_path / f"weld{ixx}.urdf"
        path.write_text(text)
        return path

    assert fb.load_urdf(write("0.1"), floating_base=True).n_dofs == 6
    with pytest.raises(ModelError, match=r"'base'.*welded.*trunk"):
        fb.load_urdf(write("0.5"))


@pytest.mark.parametrize(
    "case, match",
    [
        ("missing", "does not exist"),
        ("not xml", "could not be read"),
        ("inertia", "arm.*inertia"),
        ("mesh", "nowhere.stl.*arm"),
    ],
)
def test_bad_urdf_input_is_named(tmp_path, case, match):
    if case == "missing":
        path = tmp_path / "absent.urdf"
    elif case == "not xml":
        path = tmp_path / "broken.urdf"
        path.write_text("<robot name='x'><link name='a'>")
    elif case == "inertia":
        path = _write(tmp_path, ixx="-1.0")
    else:
        path = _write(
            tmp_path, visual='<visual><geometry><mesh filename="package://nowhere/nowhere.stl"/></geometry></visual>'
        )
    with pytest.raises(ModelError, match=match):
        fb.load_urdf(path)


def test_a_joint_axis_of_zero_length_names_the_joint_and_its_links(tmp_path):
    path = _write(tmp_path)
    path.write_text(path.read_text().replace('<axis xyz="0 1 0"/>', '<axis xyz="0 0 0"/>'))
    with pytest.raises(
        ModelError,
        match=r"joint 'j1' \(parent 'base', child 'arm'\): Revolute joint: axis array\(\[0\., 0\., 0\.\]\) "
        r"has zero length",
    ):
        fb.load_urdf(path)


def test_a_urdf_with_a_loop_names_the_joints_that_close_it(tmp_path):
    links = "".join(LINK.format(name=n, ixx="0.01", visual="") for n in ("a", "b", "c"))
    joints = "".join(
        f'<joint name="{n}" type="revolute"><parent link="{p}"/><child link="{c}"/><axis xyz="0 0 1"/>'
        '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>'
        for n, p, c in (("ab", "a", "b"), ("bc", "b", "c"), ("ca", "c", "a"))
    )
    path = tmp_path / "loop.urdf"
    path.write_text(f'<?xml version="1.0"?><robot name="loop">{links}{joints}</robot>')
    with pytest.raises(ModelError, match=r"found \[\]; the joints \[.*'ab'.*\] close a loop") as info:
        fb.load_urdf(path)
    assert all(name in str(info.value) for name in ("'ab'", "'bc'", "'ca'"))
