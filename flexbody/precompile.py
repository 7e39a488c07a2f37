"""Compile flexbody's numba kernels into numba's on-disk cache before the first run.

Every compiled kernel of flexbody is cached on disk (``cache=True``) next to its source, so it is compiled
once per installation and loaded in milliseconds afterwards. Without this step the first run of a case pays
the compilation (about half a minute on two cores); ``make setup`` runs ::

    python -m flexbody.precompile                 # every kernel the tests call
    python -m flexbody.precompile --stages run    # the kernels running a case of moderate size needs
    python -m flexbody.precompile --stages full   # also the parallel kernels of user strain energies

which drives each kernel once through small models of the public API, with the argument types that real
runs use, so that later runs — the flagship case, the tests, a user's script — load them instead. The groups
run in two processes at once, each taking its groups in turn (:data:`STAGES`); :func:`compiled_signatures` lists
what a process holds (the tests compare it with what a case needs). ``make run`` compiles the "run" stage,
``make setup`` (and so ``make test``) "all".
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections.abc import Callable

import numpy as np

__all__ = ["GROUPS", "STAGES", "run_group", "compiled_signatures", "main"]


def _small_meshes():
    """(mesh, locking) of a two-element bar of every element: 8-node, 8-node with incompatible modes, 27-node (cubic
    elements, on which no rule or formulation locks, so building them warns of nothing)."""
    import flexbody as fb

    for order, locking in ((1, None), (1, "incompatible_modes"), (2, None)):
        yield fb.mesh.box(size=(0.2, 0.1, 0.1), divisions=(2, 1, 1), order=order), locking


def _parallel_mesh():
    """A mesh of 2 × FORCE_ELEMENTS_PER_THREAD elements or more: the element kernels run in parallel on it when the
    process may use two CPUs."""
    import flexbody as fb
    from flexbody.fem.flexible_body import FORCE_ELEMENTS_PER_THREAD

    side = int(np.ceil((2 * FORCE_ELEMENTS_PER_THREAD) ** (1 / 3)))
    return fb.mesh.box(size=(1.0, 1.0, 1.0), divisions=(side, side, side), order=1)


def _exercise(body, *, fields: bool) -> None:
    """Every element kernel of ``body`` once, near its reference state: the force with and without the velocity
    (v = None: the elastic force alone), the tangent, the damping matrix, the strain energy and (``fields``) the
    stress fields."""
    from flexbody.fem.fields import body_fields

    q = body.reference_coordinates() * 1.001
    v = np.full_like(q, 1e-3)
    body.internal_force(q, v)
    body.internal_force(q)
    body.tangent(q, v)
    body.damping_matrix(q, v)
    body.strain_energy(q)
    if fields:
        body_fields(body, q, v)


def _flexible_serial() -> None:
    """Element kernels on the calling thread (small meshes, one thread): every element and material, with and
    without damping; force, tangent, damping matrix, strain energy and stress fields."""
    import flexbody as fb

    materials = (
        fb.StVenantKirchhoff(young=1e7, poisson=0.3, density=1e3, damping=1e-3),
        fb.NeoHookean(young=1e7, poisson=0.3, density=1e3),
        fb.MooneyRivlin(c10=1e6, c01=2e5, bulk_modulus=1e8, density=1e3),
    )
    for mesh, locking in _small_meshes():
        for material in materials:
            _exercise(fb.FlexibleBody("warm", mesh, material, locking=locking), fields=True)
    import scipy.sparse as sp

    from flexbody.linalg.csr_products import add_within, product, transposed_product  # Newton's sparse algebra

    for read_only in (False, True):  # a kept Φ's arrays are read-only
        A = sp.csr_matrix(np.eye(3))
        for array in (A.data, A.indices, A.indptr):
            array.flags.writeable = not read_only
        product(A, np.ones(3))
        transposed_product(A, np.ones(3))
    add_within(sp.csr_matrix(np.eye(3)), sp.csr_matrix(np.eye(3)), 2.0)  # iteration matrix on K's pattern
    from flexbody.linalg.sparse_factor import SparseFactor  # a pattern within the analysed one

    factor = SparseFactor()
    factor.factor(sp.csc_matrix(np.eye(3) + 0.1))
    factor.factor(sp.csc_matrix(np.eye(3)))


def _flexible_parallel() -> None:
    """The parallel (prange) variants of the element kernels, which run on meshes of 2 × FORCE_ELEMENTS_PER_THREAD
    elements and more when the process may use two CPUs (and are not compiled here otherwise)."""
    import flexbody as fb

    body = fb.FlexibleBody(  # plain: its force kernels; incompatible modes share the tangent's kernel
        "warm", _parallel_mesh(), fb.StVenantKirchhoff(young=1e7, poisson=0.3, density=1e3, damping=1e-3), locking=None
    )
    q = body.reference_coordinates() * 1.001
    v = np.full_like(q, 1e-3)
    body.internal_force(q, v)
    body.tangent(q, v)
    body.strain_energy(q)


def _user_law():
    """A user strain energy with damping (:class:`flexbody.Hyperelastic`, passed to the element kernels as a
    first-class function, so one law compiles them for every law)."""
    import sympy as sp

    import flexbody as fb

    return fb.Hyperelastic.split(
        lambda I1bar, I2bar, mu: mu / 2 * (I1bar - 3),
        lambda J, kappa: kappa / 4 * (J**2 - 1 - 2 * sp.log(J)),
        parameters={"mu": 1e6, "kappa": 5e6},
        density=1e3,
        damping=1e-3,
    )


def _user_laws() -> None:
    """The element kernels' variants for user strain energies: serial on small meshes of every element."""
    import flexbody as fb

    law = _user_law()
    for mesh, locking in _small_meshes():
        _exercise(fb.FlexibleBody("warm", mesh, law, locking=locking), fields=True)


def _user_laws_parallel() -> None:
    """The parallel variants for user strain energies, on a mesh of 2 × FORCE_ELEMENTS_PER_THREAD elements when the
    process may use two CPUs. No test calls them (the tests run user laws on small meshes), so ``make setup``
    leaves them out (21 s of compilation); a first run of a user law on such a mesh compiles them once."""
    import flexbody as fb

    _exercise(fb.FlexibleBody("warm", _parallel_mesh(), _user_law(), locking=None), fields=False)


def _rigid() -> None:
    """Kinematics, CRBA, RNEA, point and frame terms of rigid trees (revolute and prismatic joints), the compiled
    terms of systems without flexible nodes, the rows of nodes carried by a link, the dense constrained forward
    dynamics of rigid systems in every form (with their compiled QR/LU kernels), the generalized-α Newton kernel
    of a flexible system and the nonsmooth stepper's contact solver."""
    import flexbody as fb

    for system in (fb.mechanisms.slider_crank(), fb.mechanisms.particle_on_circle()):
        asm = system.assemble()
        state = asm.initial_state()
        asm.terms(state.t, state.q, state.q * 0.0 + 0.1)  # the compiled terms (joint_program)
        asm.energy(state.q, state.v)
        kin = asm.workspace(state.t, state.q).kinematics(asm.trees[0])  # the general route (controllers)
        kin.points(np.zeros(1, np.int64), np.zeros((1, 3)))
        kin.frame_terms(asm.trees[0].links[-1])  # a link frame's Jacobian and bias (attachments, reduced bodies)
        kin.mass_matrix()
        kin.inverse_dynamics()
    asm = fb.mechanisms.slider_crank().assemble()
    state = asm.initial_state()
    for method in ("projection", "multiplier", "gauss", "nullspace"):
        fb.dynamics.forward(asm, state, np.array([1.0, 0.0]), method=method)
    for inertia in ("Mc", "symmetric", "gamma"):
        fb.dynamics.forward(asm, state, np.array([1.0, 0.0]), inertia=inertia)
    fb.simulate(asm, 0.02, integrator=fb.RK4(dt=0.01))
    pendulum = fb.mechanisms.flexible_pendulum(size=(0.1, 0.05, 0.05), divisions=(2, 1, 1)).assemble()  # Python route
    fb.simulate(pendulum, 0.004, integrator=fb.GeneralizedAlpha(dt=0.002))
    arm = fb.mechanisms.arm_with_beam(
        divisions=(2, 1, 1)
    ).assemble()  # the exact joint rows' Jacobian (trees, attachments)
    fb.simulate(arm, 0.004, integrator=fb.GeneralizedAlpha(dt=0.002))
    _contact_step()
    from flexbody.constraints.attachments import attachment_rows  # nodes carried by a link frame

    k, n = 2, asm.trees[0].n_dofs
    attachment_rows(
        np.ones((k, 3)),
        np.eye(3),
        np.zeros(3),
        np.ones((6, n)),
        np.ones(6),
        np.ones(3),
        np.ones((k, 3)),
        np.empty(3 * k),
        np.empty((3 * k, n)),
        np.empty(3 * k),
    )


def _contact_step() -> None:
    """The contact solver of the nonsmooth stepper, on a point sliding down a slope (its slip solved)."""
    import flexbody as fb

    tree = fb.RigidTree("block", gravity=(0.0, 0.0, -9.81))
    tree.add_link("x", None, fb.Prismatic((1.0, 0.0, 0.0)))
    tree.add_link("z", "x", fb.Prismatic((0.0, 0.0, 1.0)), mass=1.0)
    slope = fb.Contact(tree.point("z"), fb.Plane((0.6, 0.0, 0.8)), friction=0.3)
    fb.simulate(fb.System([tree], constraints=[slope]), 0.02, integrator=fb.MoreauJean(dt=0.01))
    cube = np.array([(x, y, z) for x in (-0.5, 0.5) for y in (-0.5, 0.5) for z in (-0.1, 0.0)])
    faces = [[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1], [2, 3, 7], [2, 7, 6], [0, 2, 6]]
    faces += [[0, 6, 4], [1, 5, 7], [1, 7, 3]]
    for table in (fb.Box((0.0, 0.0, -0.05), (1.0, 1.0, 0.1)), fb.TriangleMesh(cube, faces)):  # the shapes' kernels
        crate = fb.RigidTree("crate", gravity=(0.0, 0.0, -9.81))
        crate.add_link("body", None, fb.FreeFlyer(), mass=1.0, inertia=(0.01, 0.01, 0.01))
        corners = fb.box_contacts(crate, "body", (0.2, 0.2, 0.2), table, friction=0.3)
        system = fb.System([crate], constraints=corners, q0=(0.45, 0.0, 0.1, 0.0, 0.0, 0.0))
        fb.simulate(system, 0.02, integrator=fb.MoreauJean(dt=0.01))
    can = fb.RigidTree("can", gravity=(0.0, 0.0, -9.81))
    can.add_link("body", None, fb.FreeFlyer(), mass=1.0, inertia=(0.01, 0.01, 0.01))
    rims = fb.cylinder_contacts(can, "body", 0.2, 0.05, fb.TriangleMesh(cube, faces), friction=0.3)
    system = fb.System([can], constraints=rims, q0=(0.45, 0.0, 0.1, 0.0, 0.0, 0.0))
    fb.simulate(system, 0.02, integrator=fb.MoreauJean(dt=0.01))


def _trees() -> None:
    """The whole-tree kernels of RigidTree (M, τ and a of a tree in one call), by its methods and on a
    :class:`~flexbody.rigid.TreeData` (which lays out its work array with a compiled helper), which cases
    evaluating assembled systems do not use."""
    import flexbody as fb

    tree = fb.mechanisms.slider_crank().trees[0]
    q = np.full(tree.n_dofs, 0.1)
    tree.mass_matrix(q)
    tree.inverse_dynamics(q, q, q)
    tree.forward_dynamics(q, q, q)
    tree.inverse_dynamics_derivatives(q, q, q)  # and their analytic derivatives (#36)
    tree.kinematics(q, q).frame_motion_derivatives(tree.links[-1], (0.0, 0.0, 0.0), q)  # a frame's, for rows' (#36)
    data = fb.rigid.TreeData(tree)
    fb.rigid.mass_matrix(tree, data, q)
    fb.rigid.nonlinear_effects(tree, data, q, q)


def _steps() -> None:
    """The generalized-α steps of systems without flexible nodes in one compiled call, in batches (inputs held)
    and one at a time (inputs a function of the state), also with a reduced body; they call the compiled terms of the
    "rigid" group, cached by then."""
    import flexbody as fb

    asm = fb.mechanisms.slider_crank().assemble()
    fb.simulate(asm, 0.02, integrator=fb.GeneralizedAlpha(dt=0.01))
    fb.simulate(asm, 0.02, integrator=fb.GeneralizedAlpha(dt=0.01), tau=lambda t, q, v: np.zeros(asm.n_dofs))
    _reduced_steps()


def _reduced_steps() -> None:
    """A reduced body on a hinge: its compiled steps with their exact Newton matrix and the general route's
    derivatives of its share (:mod:`flexbody.reduced.force_derivatives`)."""
    import flexbody as fb

    bar = fb.FlexibleBody(
        "bar",
        fb.mesh.box(size=(0.4, 0.05, 0.05), divisions=(2, 1, 1), order=1, origin=(0.0, -0.025, -0.025)),
        fb.StVenantKirchhoff(young=1e8, poisson=0.3, density=1000.0),
    )
    tree = fb.RigidTree("hinge", gravity=(0.0, 0.0, -9.81))
    link = tree.add_link("hub", joint=fb.Revolute((0.0, 1.0, 0.0)))
    asm = fb.System([tree, fb.ReducedBody("bar", fb.solvers.craig_bampton(bar, "x0", 2), link)]).assemble()
    fb.simulate(asm, 0.02, integrator=fb.GeneralizedAlpha(dt=0.01))
    fb.forward_derivatives(asm, asm.initial_state(), np.zeros(asm.n_dofs))


def _predictive() -> None:
    """DDP's sweeps (:func:`flexbody.predictive.solve_ddp`): a lone rigid tree's compiled ones and the stage pieces
    that the stage-by-stage route of any other model calls (here the pendulum with a joint spring), on short reaching
    problems."""
    import flexbody as fb
    from flexbody.predictive import InputResidual, PointResidual, ReachingProblem, StateResidual, solve_ddp

    tree = fb.RigidTree("pendulum", gravity=(0.0, 0.0, -9.81))
    bob = tree.add_link("bob", None, fb.Revolute((0.0, 1.0, 0.0)), mass=1.0, com=(0.3, 0.0, 0.0), inertia=(0.01,) * 3)
    spring = fb.JointSpringDamper(bob, stiffness=10.0)
    target, x0 = (0.0, 0.0, 0.3), np.array([0.3, 0.0])
    for forces in ([], [spring]):
        asm = fb.System([tree], forces=forces, actuators=[bob], q0=x0[:1]).assemble()
        point = tree.point("bob", (0.3, 0.0, 0.0))
        running = [PointResidual(point, target, 1.0), StateResidual(x0, 0.1), InputResidual(1e-3)]
        solve_ddp(ReachingProblem(asm, x0, 0.05, 4, running, [PointResidual(point, target, 10.0)]))


GROUPS: dict[str, Callable[[], None]] = {
    "flexible": _flexible_serial,
    "rigid": _rigid,
    "parallel": _flexible_parallel,
    "trees": _trees,
    "hyperelastic": _user_laws,
    "steps": _steps,
    "hyperelastic_parallel": _user_laws_parallel,
    "predictive": _predictive,
}
"""Warm-up work by kernels: element kernels, rigid-tree and dense dynamics kernels, and the parallel element
kernels of large meshes (which call the serial group's per-range routines: they run once those are cached),
the whole-tree kernels of RigidTree, the element kernels' variants for user strain energies, the compiled
generalized-α steps (which call the rigid group's terms), the parallel variants for user strain energies and DDP's
sweeps."""

STAGES = {
    "run": (("flexible",), ("rigid",)),
    "all": (("flexible", "parallel", "hyperelastic", "predictive"), ("rigid", "trees", "steps")),
    "full": (
        ("flexible", "parallel", "hyperelastic", "hyperelastic_parallel", "predictive"),
        ("rigid", "trees", "steps"),
    ),
}
"""The processes of each stage, run at once (two, for two cores), each running its groups in turn in one
interpreter: "run" what running a case of moderate size with the built-in materials needs (``make run``), "all"
what the tests call (``make setup``: also the parallel kernels and user strain energies), "full" also the
parallel kernels of user strain energies. A group that calls another's kernels (parallel and hyperelastic the
serial element routines, trees and steps the rigid terms) follows it in the same process, which holds them
compiled already (a process of its own would load them from the cache). The predictive group, which calls the
whole-tree kernels, closes the element process instead: the rigid process takes longest, and the tree kernels the
predictive group compiles alongside it end its wait no later."""


def run_group(name: str) -> float:
    """Run the warm-up work of group ``name`` in this process; returns its wall time [s]."""
    start = time.perf_counter()
    GROUPS[name]()
    return time.perf_counter() - start


def compiled_signatures() -> set[tuple[str, str]]:
    """(kernel, signature) of every numba kernel of flexbody compiled or loaded in this process."""
    import numba

    import flexbody  # noqa: F401  (imports every kernel module)

    out: set[tuple[str, str]] = set()
    for module_name, module in list(sys.modules.items()):
        if not module_name.startswith("flexbody") or module is None:
            continue
        for name, obj in vars(module).items():
            if isinstance(obj, numba.core.registry.CPUDispatcher) and obj.py_func.__module__ == module_name:
                out.update((f"{module_name}.{name}", str(sig)) for sig in obj.signatures)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m flexbody.precompile", description="compile flexbody's numba kernels into numba's on-disk cache"
    )
    parser.add_argument(
        "--stages",
        choices=sorted(STAGES),
        default="all",
        help="'run': the kernels a case of moderate size needs; 'all' (default): every kernel the tests call; "
        "'full': also the parallel kernels of user strain energies",
    )
    parser.add_argument(
        "--group", choices=sorted(GROUPS), action="append", help="run this group in this process (repeat: in turn)"
    )
    args = parser.parse_args(argv)
    if args.group:
        for group in args.group:
            print(f"flexbody: compiled the {group} kernels in {run_group(group):.1f} s", flush=True)
        return 0
    start = time.perf_counter()
    processes = [
        subprocess.Popen([sys.executable, "-m", "flexbody.precompile", *(f"--group={group}" for group in groups)])
        for groups in STAGES[args.stages]
    ]
    failed = [group for groups, process in zip(STAGES[args.stages], processes) if process.wait() for group in groups]
    if failed:
        print(f"flexbody: error: precompiling failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    print(f"flexbody: numba kernels compiled into the on-disk cache in {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
