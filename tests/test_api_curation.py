"""The curated public API of issue 32: one name and one order for the same argument everywhere, one return type per
function, stable default names, and the rough edges of 0.2 gone — each old form works for one version with a
DeprecationWarning that points at the caller's line and names its replacement."""

from __future__ import annotations

import ast
import inspect
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import flexbody as fb
from flexbody.control import actuation_report
from flexbody.control.tasks import JointTask, PointTask, StackedTask
from flexbody.dynamics import forward
from flexbody.errors import FlexbodyError, MeshError

HERE = Path(__file__).resolve()
ROOT = HERE.parents[1]


def public_functions():
    """(name, function) of every function in ``fb.__all__`` and in the rooms' ``__all__``."""
    rooms = [fb, fb.control, fb.dynamics, fb.solvers]
    seen = {}
    for room in rooms:
        for name in room.__all__:
            obj = getattr(room, name)
            if inspect.isfunction(obj):
                seen[f"{room.__name__}.{name}"] = obj
    return sorted(seen.items())


def positional(function) -> list[str]:
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [p.name for p in inspect.signature(function).parameters.values() if p.kind in kinds]


@pytest.fixture(scope="module")
def crank():
    return fb.mechanisms.slider_crank(actuated=(0,)).assemble()


def deprecation_from_here(record) -> list[str]:
    """Messages of the DeprecationWarnings in ``record`` that point at a line of this file."""
    return [str(w.message) for w in record if w.category is DeprecationWarning and Path(w.filename) == HERE]


def test_all_is_grouped_by_concept_with_one_comment_line_per_group():
    source = (ROOT / "flexbody" / "__init__.py").read_text()
    block = source[source.index("__all__ = [") : source.index("]\n", source.index("__all__ = ["))]
    groups, names = [], []
    for line in block.splitlines()[2:]:  # after '__all__ = [' and '"__version__",'
        text = line.strip()
        if text.startswith("#"):
            groups.append([])
        elif text:
            assert groups, f"{text} comes before the first group's comment line"
            groups[-1].append(text.strip('",'))
            names.append(text.strip('",'))
    assert len(groups) >= 8 and all(groups), "every group has a comment line and at least one name"
    assert len(names) == len(set(names)) == len(fb.__all__) - 1  # __version__ heads the list, ungrouped
    assert sorted(names) == sorted(n for n in fb.__all__ if n != "__version__")


def test_the_model_is_the_first_argument_and_is_called_model():
    for name, function in public_functions():
        first = positional(function)[:1]
        assert first != ["asm"] and first != ["system"], f"{name}: the first argument is {first[0]!r}, not 'model'"


def test_time_comes_before_q_and_v_everywhere():
    for name, function in public_functions():
        order = positional(function)
        for later in ("q", "q_guess", "v"):
            if "t" in order and later in order:
                assert order.index("t") < order.index(later), f"{name}: t comes after {later} in {order}"
        if "q" in order and "v" in order:
            assert order.index("q") < order.index("v"), name


def test_the_old_argument_name_asm_still_works_with_a_warning(crank):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        old = fb.project_velocity(asm=crank, t=0.0, q=crank.q0, v=np.ones(crank.n_dofs))
    assert np.array_equal(old, fb.project_velocity(crank, 0.0, crank.q0, np.ones(crank.n_dofs)))
    assert any(
        "project_velocity(asm=...)" in m and "project_velocity(model=...)" in m for m in deprecation_from_here(record)
    )


def test_project_velocity_and_assemble_configuration_take_t_first_and_the_0_2_order_warns(crank):
    guess = crank.q0 + 0.01
    v = np.arange(crank.n_dofs, dtype=float)
    q = fb.assemble_configuration(crank, 0.0, guess, fixed=[0])
    w = fb.project_velocity(crank, 0.0, q, v)
    with pytest.warns(DeprecationWarning, match=r"assemble_configuration\(model, t, q_guess\)"):
        assert np.array_equal(fb.assemble_configuration(crank, guess, 0.0, [0]), q)
    with pytest.warns(DeprecationWarning, match=r"project_velocity\(model, t, q, v\)"):
        assert np.array_equal(fb.project_velocity(crank, q, v), w)
    with pytest.raises(FlexbodyError, match=r"give the velocities v"):
        fb.project_velocity(crank, 0.0, q)


def two_link_arm():
    """A planar two-link arm (1 m links, 1 kg) at q = (0.3, 0.7) rad, and its two link-end points."""
    tree = fb.RigidTree("arm")
    inertia = np.diag([0.01, 0.1, 0.1])
    l1 = tree.add_link("l1", None, fb.Revolute(axis=(0, 0, 1)), mass=1.0, com=(0.5, 0, 0), inertia=inertia)
    l2 = tree.add_link(
        "l2", l1, fb.Revolute(axis=(0, 0, 1)), origin=(1, 0, 0), mass=1.0, com=(0.5, 0, 0), inertia=inertia
    )
    return fb.System([tree], q0=[0.3, 0.7]).assemble(), tree.point(l1, (1.0, 0, 0)), tree.point(l2, (1.0, 0, 0))


def test_operational_space_at_takes_t_q_v_then_the_task_by_keyword():
    asm, _, tip = two_link_arm()
    task = PointTask(tip, components=(0, 1))
    new = fb.operational_space_at(asm, 0.0, asm.q0, np.array([0.1, -0.2]), task=task)
    with pytest.warns(DeprecationWarning, match=r"operational_space_at\(model, t, q, v, task=task\)"):
        old = fb.operational_space_at(asm, task, 0.0, asm.q0, np.array([0.1, -0.2]))
    assert np.array_equal(new.Lambda, old.Lambda) and np.array_equal(new.mu, old.mu)
    with pytest.raises(FlexbodyError, match="the task is a keyword argument"):
        fb.operational_space_at(asm, 0.0, asm.q0, None, task)


def test_actuation_report_takes_t_q_v_then_the_task_by_keyword(crank):
    task = JointTask(["crank.l1"])
    new = actuation_report(crank, 0.0, crank.q0, np.zeros(crank.n_dofs), task=task)
    with pytest.warns(DeprecationWarning, match=r"actuation_report\(model, t, q, v, task=task\)"):
        old = actuation_report(crank, crank.q0, np.zeros(crank.n_dofs), task)
    assert str(new) == str(old)
    with pytest.raises(FlexbodyError, match="the task by keyword"):
        actuation_report(crank, 0.0)


def test_solve_static_returns_results_and_inverse_statics_is_its_own_entry_point():
    assert inspect.signature(fb.solve_static).return_annotation in ("Results", fb.Results)
    assert "inverse_statics" in fb.__all__ and callable(fb.inverse_statics)
    assert inspect.signature(fb.inverse_statics).return_annotation in ("InverseStatics", fb.solvers.InverseStatics)
    asm = fb.mechanisms.slider_crank(actuated=(0,)).assemble()
    assert isinstance(fb.solve_static(asm), fb.Results)


def test_forward_takes_the_method_by_keyword_and_a_string_for_phi_warns(crank):
    state = crank.initial_state()
    tau = np.zeros(crank.n_dofs)
    new = forward(crank, state, tau, method="gauss")
    with pytest.warns(DeprecationWarning, match=r"use method="):
        old = forward(crank, state, tau, "gauss")
    assert np.array_equal(new.a, old.a)


def test_slices_are_slices_by_part_or_name_in_the_system_and_the_results(crank, tmp_path):
    tree = crank.trees[0]
    assert crank.slices[tree] == crank.slices[tree.name] and isinstance(crank.slices[tree.name], slice)
    assert list(crank.slices) == crank.trees + crank.reduced + crank.bodies
    with pytest.warns(DeprecationWarning, match=r"asm.slices\[name\]"):
        assert crank.body_slices == {tree.name: (crank.slices[tree].start, crank.slices[tree].stop)}
    res = fb.simulate(crank, 0.01, integrator=fb.RK4(dt=0.005))
    assert res.slices == crank.slices.by_name()
    res.save(tmp_path / "run")
    assert fb.Results.load(tmp_path / "run").slices == res.slices
    with pytest.warns(DeprecationWarning, match=r"results.slices\[name\]"):
        assert res.body_slices == crank.slices.spans()
    with pytest.warns(DeprecationWarning, match=r"Results\(slices=\.\.\.\)"):
        made = fb.Results(kind="dynamic", times=res.times, q=res.q, body_slices={tree.name: (0, crank.n_dofs)})
    assert made.slices == {tree.name: slice(0, crank.n_dofs)}
    with pytest.raises(FlexbodyError, match=r"the columns of 'crank' must be a slice"):
        fb.Results(kind="dynamic", times=res.times, q=res.q, slices={"crank": 3})


def test_slider_crank_gravity_is_a_vector_like_every_mechanism():
    new = fb.mechanisms.slider_crank(gravity=(0.0, -9.81, 0.0)).assemble()
    with pytest.warns(DeprecationWarning, match=r"slider_crank\(gravity=\(0.0, -g, 0.0\)\)"):
        old = fb.mechanisms.slider_crank(gravity=9.81).assemble()
    assert np.array_equal(new.trees[0].gravity, old.trees[0].gravity)
    four = inspect.signature(fb.mechanisms.four_bar).parameters["gravity"].default
    crank = inspect.signature(fb.mechanisms.slider_crank).parameters["gravity"].default
    assert np.ndim(four) == np.ndim(crank) == 1


def test_default_names_are_stable_between_runs():
    script = (
        "import flexbody as fb\n"
        "t = fb.RigidTree('arm'); l1 = t.add_link('l1', None, fb.Revolute(axis=(0, 0, 1)), mass=1.0)\n"
        "print(fb.PointToPoint(t.point(l1, (1, 0, 0)), fb.Ground((1, 0, 0))).name)\n"
        "print(fb.Distance(t.point(l1, (1, 0, 0)), fb.Ground(), length=1.0).name)\n"
        "print(fb.SpringDamper(t.point(l1), fb.Ground((0, 1, 0)), stiffness=1.0).name)\n"
    )
    names = [
        subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
        for _ in range(2)
    ]
    assert names[0] == names[1]
    assert names[0].splitlines()[:2] == [
        "loop[arm.l1(1 0 0) / ground(1 0 0)]",
        "distance[arm.l1(1 0 0) / ground(0 0 0)]",
    ]


def test_a_stacked_task_takes_a_2d_array_a_sequence_or_the_flat_stacked_values():
    asm, elbow, tip = two_link_arm()
    stack = StackedTask([PointTask(elbow, components=(0, 1)), PointTask(tip, components=(0, 1))])
    ws = asm.workspace(0.0, asm.q0)
    desired = np.array([[1.0, 0.0], [1.5, 1.0]])
    by_rows = stack.error(desired, ws)
    assert np.array_equal(by_rows, stack.error(list(desired), ws))
    assert np.array_equal(by_rows, stack.error(desired.ravel(), ws))
    assert np.array_equal(by_rows, np.concatenate([t.error(d, ws) for t, d in zip(stack.tasks, desired)]))
    with pytest.raises(FlexbodyError, match="one per stacked task"):
        stack.error(np.ones(3), ws)


def test_mesh_points_and_cells_are_read_only_and_mechanisms_make_new_meshes():
    mesh = fb.mesh.box((1.0, 0.1, 0.1), (2, 1, 1))
    with pytest.raises(MeshError, match=r"with_points"):
        mesh.points = mesh.points + 1.0
    with pytest.raises(MeshError, match="read-only"):
        mesh.cells = mesh.cells
    with pytest.raises(ValueError, match="read-only"):
        mesh.points[0, 0] = 5.0
    moved = mesh.with_points(mesh.points + 1.0)
    assert np.array_equal(moved.points, mesh.points + 1.0) and np.array_equal(moved.cells, mesh.cells)


def test_no_mechanism_rebinds_mesh_points():
    for path in [*sorted((ROOT / "flexbody").rglob("*.py")), *sorted((ROOT / "cases").glob("*.py"))]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.Assign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    rebinds = isinstance(target, ast.Attribute) and target.attr in ("points", "cells")
                    assert not (rebinds and "mesh" in ast.unparse(target)), f"{path.name}:{node.lineno}"


def test_deprecation_warnings_point_at_the_callers_line(crank):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        crank.evaluate(0.0, crank.q0)
        fb.simulate(asm=crank, t_end=0.005, integrator=fb.RK4(dt=0.005))
    messages = deprecation_from_here(record)
    assert any("asm.evaluate" in m for m in messages) and any("simulate(asm=...)" in m for m in messages)
    assert all("will be removed in 0.4.0" in m for m in messages)


def test_the_changelog_lists_every_deprecation():
    changelog = (ROOT / "CHANGELOG.md").read_text()
    for old in (
        "asm.evaluate",
        "asm.body_slices",
        "results.body_slices",
        "project_velocity(model, q, v, t)",
        "assemble_configuration(model, q_guess, t)",
        "operational_space_at(model, task, t, q, v)",
        "actuation_report(model, q, v, task)",
        "solve_static(model, task=..., target=...)",
        "slider_crank(gravity=g)",
        "asm=",
    ):
        assert old in changelog, f"CHANGELOG.md does not list the deprecation of {old}"
