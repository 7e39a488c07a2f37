"""``flexbody info``: what a case builds — coordinates, constraints with their rank and tolerance, and the
actuation report of the case's tasks.
"""

from __future__ import annotations

from ..errors import FlexbodyError, shortened
from .cases import case_name, format_parameters, keyword_parameters, parameter_table


# ------------------------------------------------------------------------------------------------ info
def _case_tasks(module, asm, overrides: dict) -> dict:
    """Tasks of the case's ``task(asm, ...)`` (a Task or a dict name -> Task) by name; empty without one.
    Overrides that are keywords of ``task`` are passed on."""
    func = getattr(module, "task", None)
    if not callable(func):
        return {}
    kwargs = {k: v for k, v in overrides.items() if k in keyword_parameters(func) - {"asm"}}
    tasks = func(asm, **kwargs)
    if isinstance(tasks, dict):
        return dict(tasks)
    return {getattr(tasks, "name", "task"): tasks}


def describe_case(module, overrides: dict | None = None, *, params: bool = False) -> str:
    """Plain-text description of a case's assembled system at q0: coordinates (actuated, passive joints,
    passive nodal coordinates per flexible body), trees and bodies, every constraint with its rows, the rank
    of Φ(q0) with the tolerance that decided it and the redundant rows, actuators, and — when the case
    defines ``task(asm)`` — the actuation report of each task at (q0, v = 0). With ``params`` the case's
    parameters come first (:func:`parameter_table`: name, value, unit, description).

    Only the ``overrides`` that are parameters of ``build`` are used (the others are listed as ignored).
    """
    overrides = dict(overrides or {})
    build = getattr(module, "build", None)
    if not callable(build):
        raise FlexbodyError(f"case {case_name(module)!r} defines no build(**params)")
    kwargs = {k: v for k, v in overrides.items() if k in keyword_parameters(build)}
    ignored = sorted(set(overrides) - set(kwargs))
    system = build(**kwargs)
    if not callable(getattr(system, "assemble", None)):
        raise FlexbodyError(
            f"build() of case {case_name(module)!r} returned {type(system).__name__}, not a flexbody.System"
        )
    asm = system.assemble()
    lines = [f"Case {case_name(module)} ({getattr(module, '__file__', '?')})"]
    if params:
        lines.append(format_parameters(parameter_table(module)))
    if kwargs:
        lines.append(f"  build parameters set: {', '.join(f'{k}={v!r}' for k, v in kwargs.items())}")
    if ignored:
        lines.append(f"  ignored (not parameters of build): {', '.join(ignored)}")
    lines += _part_lines(asm) + _constraint_lines(asm) + _actuator_lines(asm)
    return "\n".join(lines + _task_lines(module, asm, overrides))


def _part_lines(asm) -> list[str]:
    """The coordinates, the trees, the flexible and reduced bodies and the force elements of ``asm``."""
    n, n_rigid, n_joints = asm.n_dofs, asm.n_rigid, asm.n_joints
    lines = [
        f"Coordinates        n = {n}: joint {n_joints}, "
        + (f"modal {n_rigid - n_joints}, " if asm.reduced else "")
        + f"flexible nodal {n - n_rigid}",
        f"Rigid trees        {len(asm.trees)}"
        + "".join(f"\n  {tree.name}: {tree.n_links} links, {tree.n_dofs} joint coordinates" for tree in asm.trees),
        f"Flexible bodies    {len(asm.bodies)}"
        + "".join(
            f"\n  {body.name}: {body.n_nodes} nodes, {body.n_elements} elements, {body.n_dofs} coordinates"
            for body in asm.bodies
        ),
    ]
    if asm.reduced:
        lines.append(
            f"Reduced bodies     {len(asm.reduced)}"
            + "".join(
                f"\n  {body.name}: {body.n_dofs} modal coordinates on link {body.link.name!r} "
                f"({body.body.n_nodes} nodes)"
                for body in asm.reduced
            )
        )
    forces = asm.forces.elements
    lines.append(
        f"Force elements     {len(forces)}"
        + "".join(f"\n  {f.name}: {type(f).__name__}" for f in forces[:12])
        + (f"\n  … and {len(forces) - 12} more" if len(forces) > 12 else "")
    )
    contacts = getattr(asm, "contacts", [])
    if contacts:
        lines.append(
            f"Unilateral contacts {len(contacts)} (nonsmooth stepper fb.MoreauJean)"
            + "".join(f"\n  {c.name}: friction {c.mu:g}, restitution {c.e:g}" for c in contacts[:12])
            + (f"\n  … and {len(contacts) - 12} more" if len(contacts) > 12 else "")
        )
    return lines


def _actuator_lines(asm) -> list[str]:
    """The actuators and the passive coordinates (joints, modal, flexible nodal) of ``asm``."""
    import numpy as np

    n_rigid, n_joints = asm.n_rigid, asm.n_joints
    actuated = np.abs(np.asarray(asm.S, dtype=float)).sum(axis=0) > 0
    passive_joints = [asm.coordinate_labels[i] for i in np.flatnonzero(~actuated[:n_joints])]
    passive_modal = [asm.coordinate_labels[i] for i in n_joints + np.flatnonzero(~actuated[n_joints:n_rigid])]
    nodal = [f"{body.name} {body.n_dofs}" for body in asm.bodies]
    n_passive_nodal = int(np.count_nonzero(~actuated[n_rigid:]))
    return [
        f"Actuators          k = {len(asm.actuated_labels)}: {shortened(asm.actuated_labels)}",
        f"Passive coords     {len(passive_joints) + len(passive_modal) + n_passive_nodal}: joints "
        f"{shortened(passive_joints)}"
        + (f"; modal {shortened(passive_modal)}" if passive_modal else "")
        + (
            f"; flexible nodal {n_passive_nodal} ({', '.join(nodal)}: every nodal coordinate — nodes "
            "carry no actuators [DE 6.3])"
            if asm.bodies
            else ""
        ),
    ]


def _task_lines(module, asm, overrides: dict) -> list[str]:
    """The actuation report of each task the case defines (``task(asm)``) at (q0, v = 0)."""
    import numpy as np

    tasks = _case_tasks(module, asm, overrides)
    if not tasks:
        return ["Task               none (the case defines no task(asm))"]
    from ..control.actuation import actuation_report

    lines, v0 = [], np.zeros(asm.n_dofs)
    for name, task in tasks.items():
        report = actuation_report(asm, 0.0, asm.q0, v0, task=task)
        usable = [c for c in report.REQUIREMENTS if report.ok(c)]
        lines.append(f"Actuation report for task {name!r} ({task!r}) at (q0, v = 0)")
        lines += ["  " + line for line in str(report).splitlines()]
        lines.append(f"  controllers whose checks pass: {', '.join(usable) or 'none'}")
    return lines


def _constraint_lines(asm) -> list[str]:
    """Each constraint with its rows, then the rank of Φ(q0), the tolerance that decided it and how it scales."""
    m, n_c = asm.n_constraints, len(asm.constraints)
    lines = [f"Constraint rows    m = {m} ({n_c} constraint{'' if n_c == 1 else 's'})"]
    lines += [
        f"  {c.name}: {c.n_rows} row{'' if c.n_rows == 1 else 's'} ({type(c).__name__})" for c in asm.constraints[:12]
    ]
    if n_c > 12:
        lines.append(f"  … and {n_c - 12} more")
    if not m:
        return [*lines, f"  no constraints; dof = n = {asm.n_dofs}"]
    rank = asm.rank_report(0.0, asm.q0)
    s = rank.singular_values
    lines.append(
        f"  rank of Phi at q0 {rank.rank}"
        + (" (full row rank)" if rank.is_full_rank else f" (rank-deficient by {m - rank.rank})")
        + f"; dof n - rank = {rank.dof}"
    )
    if s.size:
        lines.append(
            f"  smallest singular value {s[-1]:.6e} (largest {s[0]:.6e}); rank tolerance {rank.tol:.3e} = "
            f"max({rank.rtol:.0e} × σ_max, {rank.atol:.0e}): a round-off test relative to the largest "
            "singular value, with an absolute floor in the units of the rows (m or rad)"
        )
    else:
        lines.append("  no singular values")
    lines.append(f"  redundant rows    {shortened(rank.redundant_labels or rank.redundant_rows)}")
    return lines
