"""Exudyn side of the benchmark "reduced-order (FFRF) flexible body": flexible pendulum and spin-up.

Model: straight bar along +x, L = 1 m, square section b = h = 0.05 m centred on the x axis (y, z in
[-0.025, 0.025]), St Venant-Kirchhoff material E = 5e8 Pa, Poisson 0.3, rho = 1000 kg/m³ (m = 2.5 kg).
The finite-element model is flexbody's, so that both codes reduce the same matrices: ``fb.mesh.box`` with
10 × 1 × 1 27-node hexahedra (189 nodes, 567 coordinates), consistent mass matrix ``bar.mass_matrix()``
and linear stiffness ``bar.tangent`` at the reference configuration, node-major [x, y, z] ordering, which
is also Exudyn's. They are handed to ``exudyn.FEM.FEMinterface`` as its ``nodes['Position']`` and, via
sparse triplets [row, col, value] converted by Exudyn's own ``SparseTripletsToScipySparseCSR``, as its
``massMatrix`` / ``stiffnessMatrix`` (the scipy CSR form the 1.13 interface stores). No elements or
surface are given: they only serve visualisation, which is not used.

Reduced basis: ``FEMinterface.ComputeHurtyCraigBamptonModes`` with the face x = 0 (9 nodes) as the only
boundary, ``computationMode=HCBstaticModeSelection.RBE2``, ``excludeRigidBodyMotion=True`` (Exudyn's
default) and ``nEigenModes = n_modes``. RBE2 static modes of one interface are its six rigid-body motions,
which the floating frame already has; for this reason Exudyn drops the static modes of the *first*
boundary, which thereby becomes the interface held in the floating frame, so with a single
boundary the basis holds only the ``n_modes`` fixed-interface normal modes of the interior coordinates
(eigsh of K_ii, M_ii; the modes are exactly zero on the clamp face). The body is
``ObjectFFRFreducedOrderInterface(fem).AddObjectFFRFreducedOrder(mbs, ...)``: a reference-frame node of
Euler-parameter type (7 coordinates; the Euler-parameter normalisation is a constraint of the object) plus
a ``NodeGenericODE2`` with the ``n_modes`` modal coordinates, an ``ObjectFFRFreducedOrder`` with the C++
FFRF/CMS inertia terms (no Python user functions) and, with gravity, a ``LoadMassProportional`` on a
``MarkerBodyMass``. The frame origin is the world origin, its axes the world axes at t = 0; the clamp face
x = 0 is centred on the origin. Exudyn's fixed-interface frequencies equal those of
``fb.solvers.craig_bampton(bar, "x0", n_modes)`` to ~1e-11 (see :func:`fixed_interface_frequencies`).
Both ROMs are linear in the modal coordinates (constant reduced stiffness): no geometric stiffening.

Joints: because the modes vanish on the clamp face, the face moves rigidly with the reference frame, so a
joint on the frame node (``MarkerNodeRigid`` on the rigid-body node, against a ``MarkerBodyRigid`` on an
``ObjectGround`` at the origin) is exact for a clamped interface; a ``MarkerSuperElementRigid`` on the
face nodes would give the same motion (all mode entries there are zero) with more work per step.
Problem A (pendulum): ``GenericJoint`` with ``constrainedAxes=[1,1,1,1,0,1]`` (revolute about world y),
gravity (0, 0, -9.81) m/s², release at rest with the beam horizontal along +x. Hinge angle: from the
frame node's ``RotationMatrix`` sensor, angle = atan2(R[0,2], R[0,0]) unwrapped (positive right-handed
about +y, so falling to -z is positive); hinge rate: y component of the node's ``AngularVelocity``.
Problem B (spin-up, Kane, Ryan & Banerjee 1987 profile, small version): ``GenericJoint`` with all six axes
locked and an ``offsetUserFunction`` returning [0, 0, 0, 0, 0, θ(t)]; Exudyn turns the rotational offset
(Tait-Bryan angles) into a rotation of the joint frame and keeps the axis-orthogonality constraints, so
the frame rotation is R_z(θ(t)) exactly at position level for any θ (checked: |angle - θ| < 1e-13), no
gravity. θ(t) = (Ω/T)[t²/2 + (T/2π)²(cos(2πt/T) - 1)] for t < T, Ω(t - T/2) afterwards; θ(0) = θ'(0) =
θ''(0) = 0, so the initial state is consistent (Exudyn does not use constraint user functions for the
initial accelerations; ``offsetUserFunction_t`` is not implemented in Exudyn and not needed at index 3).
Tip: mean of the 9 nodes of the face x = 1, a ``MarkerSuperElementPosition`` (equal weights 1/9) read by
a ``SensorMarker`` (``Position``). Deflection in B: y component of R_z(θ(t))ᵀ · tip minus its reference
value (0).

Solver: ``mbs.SolveDynamic`` with ``DynamicSolverType.GeneralizedAlpha`` (index-3 constraints), spectral
radius ``rho_inf`` (1: alphaM = alphaF = 1/2, beta = 1/4, gamma = 1/2, the trapezoidal rule), fixed step
``dt`` (``adaptiveStep=False``: a Newton failure raises RuntimeError instead of cutting the step), full
Newton (``useModifiedNewton=False``; Exudyn's default for time integration is modified Newton), Exudyn's
default tolerances (relative 1e-8, absolute 1e-10, at most 25 iterations), default dense linear solver
(``EXUdense``; 13 ODE2 + 7 algebraic coordinates at 6 modes), initial accelerations computed from the
equations of motion (default). Sensors store internally (``storeInternal=True``) at every step
(``solution.sensors.writePeriod = 0``); no solution file.

Limitations (Exudyn 1.13.6): Exudyn's documentation asks for spectral radius < 1 with index-3 (position
level) constraints; with 1 both problems ran at dt = 1e-3 (2 Newton iterations per step in A, ~2.7 in B)
and the tip histories differ from those at spectral radius 0.9 by at most 4.5e-6 m (A, 1 s) and 6e-9 m
(B, 2 s). The prescribed rotation is a Python callback (~10 per step), part of the measured time; a
zero-offset callback added to A cost ~5 % of its wall time. Released from rest the bar is not in static
equilibrium, so its undamped elastic modes vibrate at spectral radius 1; in the nearly rigid check
(E × 1000, first fixed-interface mode 182 Hz) they ripple the hinge rate by ±0.006 rad/s, which moves its
first sign change by up to ~±1.5e-4 of the half period: :func:`first_turning_time` with ``fit_window``
(a cubic least-squares fit of the rate around the crossing) removes that ripple.

Statistics: ``mbs.sys['dynamicSolver'].it.newtonStepsCount`` (total Newton iterations of the run).
``wall_seconds`` is ``time.perf_counter`` around ``SolveDynamic`` only (includes its set-up, the initial
accelerations and the sensor evaluations; excludes building the FE model, the modes and the system).
"""

from __future__ import annotations

import functools
import math
import statistics

import numpy as np
from exudyn_cantilever import timed_solve

LENGTH = 1.0  # m, beam length along x
WIDTH = HEIGHT = 0.05  # m, square section (y, z), centred on the x axis
YOUNG = 5.0e8  # Pa
POISSON = 0.3  # -
DENSITY = 1000.0  # kg/m³
DIVISIONS = (10, 1, 1)  # hexahedra along x, y, z
ORDER = 2  # 27-node hexahedra
N_MODES = 6  # fixed-interface normal modes
GRAVITY = 9.81  # m/s², problem A, along -z
OMEGA = 2.0  # rad/s, problem B final hub rate
SPIN_UP_TIME = 1.0  # s, problem B spin-up duration T


@functools.lru_cache(maxsize=4)
def fe_model(young: float = YOUNG, divisions: tuple = DIVISIONS) -> dict:
    """flexbody's FE model of the bar (cached per Young's modulus; do not modify the arrays).

    Returns ``points`` (N, 3) [m], ``mass`` and ``stiffness`` (scipy CSR, 3N × 3N, node-major x, y, z),
    ``clamp`` / ``tip`` node indices of the faces x = 0 / x = L and the flexbody ``body``."""
    import flexbody as fb

    mesh = fb.mesh.box(
        size=(LENGTH, WIDTH, HEIGHT), divisions=tuple(divisions), order=ORDER, origin=(0.0, -0.5 * WIDTH, -0.5 * HEIGHT)
    )
    bar = fb.FlexibleBody(
        "bar", mesh, fb.StVenantKirchhoff(young=young, poisson=POISSON, density=DENSITY), locking=None
    )
    return {
        "body": bar,
        "points": np.asarray(mesh.points, dtype=float),
        "mass": bar.mass_matrix().tocsr(),
        "stiffness": bar.tangent(bar.reference_coordinates()).tocsr(),
        "clamp": np.asarray(bar.nodes("x0")),
        "tip": np.asarray(bar.nodes("x1")),
    }


def _triplets(matrix) -> np.ndarray:
    """A scipy sparse matrix as rows [row, column, value]."""
    coo = matrix.tocoo()
    return np.column_stack([coo.row, coo.col, coo.data]).astype(float)


def fem_interface(n_modes: int = N_MODES, young: float = YOUNG, divisions: tuple = DIVISIONS):
    """An ``exudyn.FEM.FEMinterface`` with flexbody's nodes and matrices and the Craig-Bampton basis
    (RBE2 interface x = 0, its rigid-body static modes excluded: ``n_modes`` fixed-interface modes)."""
    from exudyn.FEM import FEMinterface, HCBstaticModeSelection, SparseTripletsToScipySparseCSR

    model = fe_model(young, divisions)
    n = model["mass"].shape[0]
    fem = FEMinterface()
    fem.nodes = {"Position": model["points"].copy()}
    fem.massMatrix = SparseTripletsToScipySparseCSR(_triplets(model["mass"]))
    fem.stiffnessMatrix = SparseTripletsToScipySparseCSR(_triplets(model["stiffness"]))
    if fem.massMatrix.shape != (n, n) or fem.stiffnessMatrix.shape != (n, n):
        raise RuntimeError("FEMinterface matrices lost their size in the triplet conversion")
    fem.ComputeHurtyCraigBamptonModes(
        boundaryNodesList=[list(map(int, model["clamp"]))],
        nEigenModes=n_modes,
        useSparseSolver=True,
        computationMode=HCBstaticModeSelection.RBE2,
        excludeRigidBodyMotion=True,
    )
    basis = fem.modeBasis["matrix"]
    if basis.shape != (n, n_modes):
        raise RuntimeError(f"expected {n_modes} fixed-interface modes, Exudyn built {basis.shape[1]} shapes")
    if np.abs(basis.reshape(-1, 3, n_modes)[model["clamp"]]).max() != 0.0:
        raise RuntimeError("the Craig-Bampton modes do not vanish on the clamp face")
    return fem


def fixed_interface_frequencies(n_modes: int = N_MODES) -> dict:
    """Exudyn's and flexbody's fixed-interface eigenfrequencies [Hz] (sorted) and their relative difference."""
    import flexbody as fb

    exu_hz = np.sort(np.asarray(fem_interface(n_modes).GetEigenFrequenciesHz(), dtype=float))
    fb_hz = np.sort(
        np.asarray(fb.solvers.craig_bampton(fe_model()["body"], "x0", n_modes).fixed_interface_frequencies, dtype=float)
    )
    return {"exudyn": exu_hz, "flexbody": fb_hz, "relative_difference": (exu_hz - fb_hz) / fb_hz}


def spin_angle(t: float) -> float:
    """Prescribed hub angle θ(t) [rad] of problem B."""
    T = SPIN_UP_TIME
    if t < T:
        return OMEGA / T * (0.5 * t * t + (T / (2.0 * math.pi)) ** 2 * (math.cos(2.0 * math.pi * t / T) - 1.0))
    return OMEGA * (t - 0.5 * T)


def _build(n_modes: int, young: float, gravity: tuple[float, float, float], divisions: tuple = DIVISIONS):
    """System with the reduced body, a ground marker at the origin, the frame-node marker and tip sensors."""
    import exudyn as exu
    from exudyn.FEM import ObjectFFRFreducedOrderInterface
    from exudyn.itemInterface import (
        MarkerBodyRigid,
        MarkerNodeRigid,
        MarkerSuperElementPosition,
        ObjectGround,
        SensorMarker,
        SensorNode,
    )

    fem = fem_interface(n_modes, young, divisions)
    tip = [int(k) for k in fe_model(young, divisions)["tip"]]
    sc = exu.SystemContainer()
    mbs = sc.AddSystem()
    cms = ObjectFFRFreducedOrderInterface(fem)
    rom = cms.AddObjectFFRFreducedOrder(
        mbs, positionRef=[0.0, 0.0, 0.0], rotationMatrixRef=np.eye(3), gravity=list(gravity)
    )
    ground = mbs.AddObject(ObjectGround(referencePosition=[0.0, 0.0, 0.0]))
    m_ground = mbs.AddMarker(MarkerBodyRigid(bodyNumber=ground, localPosition=[0.0, 0.0, 0.0]))
    m_frame = mbs.AddMarker(MarkerNodeRigid(nodeNumber=rom["nRigidBody"]))
    m_tip = mbs.AddMarker(
        MarkerSuperElementPosition(
            bodyNumber=rom["oFFRFreducedOrder"], meshNodeNumbers=tip, weightingFactors=[1.0 / len(tip)] * len(tip)
        )
    )
    sensors = {
        "tip": mbs.AddSensor(
            SensorMarker(
                markerNumber=m_tip,
                outputVariableType=exu.OutputVariableType.Position,
                storeInternal=True,
                writeToFile=False,
            )
        ),
        "rotation": mbs.AddSensor(
            SensorNode(
                nodeNumber=rom["nRigidBody"],
                storeInternal=True,
                writeToFile=False,
                outputVariableType=exu.OutputVariableType.RotationMatrix,
            )
        ),
        "omega": mbs.AddSensor(
            SensorNode(
                nodeNumber=rom["nRigidBody"],
                storeInternal=True,
                writeToFile=False,
                outputVariableType=exu.OutputVariableType.AngularVelocity,
            )
        ),
    }
    return sc, mbs, m_ground, m_frame, sensors


def _solve(mbs, dt: float, t_end: float, rho_inf: float, sensors: dict) -> dict:
    """Generalized-alpha at fixed dt with full Newton; the sensor histories and statistics."""
    import exudyn as exu

    n_steps = max(1, round(t_end / dt))
    ss = exu.SimulationSettings()
    ss.solution.file.write = False
    ss.solution.sensors.writePeriod = 0.0  # record every step
    ti = ss.timeIntegration
    ti.numberOfSteps, ti.endTime, ti.verboseMode = n_steps, n_steps * dt, 0
    ti.adaptiveStep = False
    ti.newton.useModifiedNewton = False
    ti.generalizedAlpha.spectralRadius = rho_inf
    ok, wall = timed_solve(mbs, ss)
    if not ok:
        raise RuntimeError(f"Exudyn Newton failed (dt={dt:.3e}, rho_inf={rho_inf})")
    solver = mbs.sys["dynamicSolver"]
    tip = mbs.GetSensorStoredData(sensors["tip"])
    times = tip[:, 0]
    if len(times) != n_steps + 1 or abs(times[-1] - n_steps * dt) > 1e-9 * max(1.0, n_steps * dt):
        raise RuntimeError(f"Exudyn did not record {n_steps} steps of {dt} to t = {n_steps * dt}")
    return {
        "times": times,
        "tip": tip[:, 1:4],
        "rotation": mbs.GetSensorStoredData(sensors["rotation"])[:, 1:10].reshape(-1, 3, 3),
        "omega": mbs.GetSensorStoredData(sensors["omega"])[:, 1:4],
        "wall_seconds": wall,
        "steps": n_steps,
        "newton_iterations": int(solver.it.newtonStepsCount),
        "jacobian_evaluations": int(solver.it.newtonJacobiCount),
        "solver": {
            "alphaM": solver.alphaM,
            "alphaF": solver.alphaF,
            "beta": solver.newmarkBeta,
            "gamma": solver.newmarkGamma,
            "spectral_radius": solver.spectralRadius,
        },
    }


def pendulum(
    n_modes: int = N_MODES,
    dt: float = 1e-3,
    t_end: float = 1.0,
    rho_inf: float = 1.0,
    *,
    young: float = YOUNG,
    divisions: tuple = DIVISIONS,
) -> dict:
    """Problem A: the bar clamped to a hinge about world y at the origin, falling under gravity from rest.

    Returns ``times`` (s,), ``tip`` (s, 3) world tip position [m], ``angle`` (s,) hinge angle [rad]
    (right-handed about +y), ``angular_rate`` (s,) hinge rate [rad/s], ``wall_seconds``, ``steps``,
    ``newton_iterations``, ``jacobian_evaluations`` and the generalized-alpha parameters ``solver``.
    ``young`` [Pa] scales the stiffness (e.g. 1000 × for the nearly rigid check)."""
    from exudyn.itemInterface import GenericJoint, VGenericJoint

    _sc, mbs, m_ground, m_frame, sensors = _build(n_modes, young, (0.0, 0.0, -GRAVITY), divisions)
    mbs.AddObject(
        GenericJoint(
            markerNumbers=[m_ground, m_frame],
            constrainedAxes=[1, 1, 1, 1, 0, 1],
            visualization=VGenericJoint(show=False),
        )
    )
    mbs.Assemble()
    r = _solve(mbs, dt, t_end, rho_inf, sensors)
    rot = r.pop("rotation")
    r["angle"] = np.unwrap(np.arctan2(rot[:, 0, 2], rot[:, 0, 0]))
    r["angular_rate"] = r.pop("omega")[:, 1]
    return r


def spin_up(
    n_modes: int = N_MODES, dt: float = 1e-3, t_end: float = 2.0, rho_inf: float = 1.0, *, divisions: tuple = DIVISIONS
) -> dict:
    """Problem B: the bar clamped to a hub about world z whose angle θ(t) is prescribed, no gravity.

    Returns ``times``, ``tip`` (s, 3) world tip position [m], ``deflection`` (s,) transverse tip deflection
    in the hub frame [m] (y of R_z(θ)ᵀ tip), ``theta`` (s,) prescribed angle, ``angle_error`` max |frame
    angle - θ| [rad], ``wall_seconds``, ``steps``, ``newton_iterations``, ``jacobian_evaluations``, ``solver``."""
    from exudyn.itemInterface import GenericJoint, VGenericJoint

    def offset(mbs_, t, item, parameters):  # joint coordinates' prescribed offsets
        return [0.0, 0.0, 0.0, 0.0, 0.0, spin_angle(t)]

    _sc, mbs, m_ground, m_frame, sensors = _build(n_modes, YOUNG, (0.0, 0.0, 0.0), divisions)
    mbs.AddObject(
        GenericJoint(
            markerNumbers=[m_ground, m_frame],
            constrainedAxes=[1, 1, 1, 1, 1, 1],
            offsetUserFunction=offset,
            visualization=VGenericJoint(show=False),
        )
    )
    mbs.Assemble()
    r = _solve(mbs, dt, t_end, rho_inf, sensors)
    rot, _ = r.pop("rotation"), r.pop("omega")
    theta = np.array([spin_angle(t) for t in r["times"]])
    model = fe_model(YOUNG, divisions)
    tip_ref = model["points"][model["tip"]].mean(axis=0)
    c, s = np.cos(theta), np.sin(theta)
    r["theta"] = theta
    r["deflection"] = -s * r["tip"][:, 0] + c * r["tip"][:, 1] - tip_ref[1]
    r["angle_error"] = float(np.max(np.abs(np.unwrap(np.arctan2(rot[:, 1, 0], rot[:, 0, 0])) - theta)))
    return r


def rigid_half_period(theta0: float = 0.5 * math.pi) -> float:
    """Time [s] from release at rest (angle theta0 from the hanging position) to the far turning point of
    the rigid bar as a compound pendulum about the hinge: 2 K(sin²(θ0/2)) sqrt(J/(m g d)), d = L/2,
    J = m (L²/3 + h²/12) about the y axis through the face centre (the section is centred on the axis)."""
    from scipy.special import ellipk

    m = DENSITY * LENGTH * WIDTH * HEIGHT
    inertia = m * (LENGTH**2 / 3.0 + HEIGHT**2 / 12.0)
    return 2.0 * float(ellipk(math.sin(0.5 * theta0) ** 2)) * math.sqrt(inertia / (m * GRAVITY * 0.5 * LENGTH))


def first_turning_time(times: np.ndarray, rate: np.ndarray, fit_window: float | None = None) -> float:
    """First time the (initially positive) rate changes sign, by linear interpolation; nan if it does not.

    ``fit_window`` [s]: instead, the root (nearest that crossing) of a cubic least-squares fit of the rate
    over |t - t_crossing| <= fit_window, which averages out elastic ripple (e.g. 0.025 s)."""
    positive = np.nonzero(rate > 0.0)[0]
    if positive.size == 0:
        return float("nan")
    k0 = positive[0]
    idx = np.nonzero((rate[k0:-1] > 0.0) & (rate[k0 + 1 :] <= 0.0))[0]
    if idx.size == 0:
        return float("nan")
    k = k0 + idx[0]
    t_cross = float(times[k] - rate[k] * (times[k + 1] - times[k]) / (rate[k + 1] - rate[k]))
    if fit_window is None:
        return t_cross
    near = np.abs(times - t_cross) <= fit_window
    coef = np.polyfit(times[near] - t_cross, rate[near], 3)
    roots = np.roots(coef)
    roots = roots[np.abs(roots.imag) < 1e-12].real
    return t_cross + float(roots[np.argmin(np.abs(roots))]) if roots.size else float("nan")


def main() -> None:
    """Frequencies, both problems at dt = 1e-3 (spectral radius 1), the nearly rigid pendulum check and
    the median wall time of 3 runs."""
    f = fixed_interface_frequencies()
    print("fixed-interface frequencies [Hz] Exudyn:", np.array2string(f["exudyn"], precision=6))
    print("                             flexbody:", np.array2string(f["flexbody"], precision=6))
    print(f"  max relative difference {np.max(np.abs(f['relative_difference'])):.2e}")

    a = pendulum()
    print(
        f"A pendulum: {a['steps']} steps, {a['newton_iterations']} Newton iterations, "
        f"{a['wall_seconds']:.3f} s; angle(1 s) = {a['angle'][-1]:.6f} rad, "
        f"tip(1 s) = {np.array2string(a['tip'][-1], precision=6)} m, first turning point "
        f"{first_turning_time(a['times'], a['angular_rate']):.6f} s"
    )
    t_ref = rigid_half_period()
    print(f"A with E x 1000, first turning point; rigid compound pendulum {t_ref:.6f} s:")
    for rho in (1.0, 0.9):
        stiff = pendulum(t_end=1.1, rho_inf=rho, young=1000.0 * YOUNG)
        for window in (None, 0.025):
            t_num = first_turning_time(stiff["times"], stiff["angular_rate"], window)
            print(
                f"  rho_inf {rho}, {'sign change' if window is None else 'cubic fit +-25 ms'}: {t_num:.6f} s, "
                f"relative difference {(t_num - t_ref) / t_ref:+.2e}"
            )

    b = spin_up()
    k = int(np.argmax(np.abs(b["deflection"])))
    print(
        f"B spin-up: {b['steps']} steps, {b['newton_iterations']} Newton iterations, "
        f"{b['wall_seconds']:.3f} s; peak deflection {1e3 * b['deflection'][k]:.4f} mm at t = "
        f"{b['times'][k]:.3f} s, deflection(2 s) = {1e3 * b['deflection'][-1]:.4f} mm, "
        f"max |angle - theta| = {b['angle_error']:.1e} rad"
    )

    wall_a = statistics.median(pendulum()["wall_seconds"] for _ in range(3))
    wall_b = statistics.median(spin_up()["wall_seconds"] for _ in range(3))
    print(f"median wall time of 3 runs (dt = 1e-3): A {wall_a:.3f} s, B {wall_b:.3f} s")


if __name__ == "__main__":
    main()
