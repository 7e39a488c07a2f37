"""Exudyn side of the benchmark "flexible cantilever released from a deflected state".

Model: straight cantilever along +x (L = 1 m, square b = h = 0.05 m, E = 2e9 Pa, rho = 7800 kg/m³,
Poisson 0, no gravity), ``n_elements`` Exudyn ``ObjectANCFCable2D`` elements (Gerstmayr's planar ANCF
Bernoulli-Euler cable, 2 ``NodePoint2DSlope1`` nodes of 4 coordinates [x, y, x', y']), axial strain
eps = |r'| - 1 and material curvature K = (r' x r'') / |r'|², no rotary inertia. Clamp: three
``CoordinateConstraint`` s between a ``NodePointGround`` coordinate marker and node 0's x, y and slope-y
coordinates (``MarkerNodeCoordinate``); slope-x stays free (axial stretch at the root).

Phase 1: ``mbs.SolveStatic`` under a ``LoadCoordinate`` F in -y on the tip node's y coordinate,
F = 0.05 L · 3EI/L³ (linear tip deflection 5 % of L). Phase 2: load set to 0, ``mbs.SolveDynamic``
from the static state at rest with the implicit generalized-alpha solver (``DynamicSolverType.
GeneralizedAlpha``; spectral radius 1 gives alphaM = alphaF = 1/2, beta = 1/4, gamma = 1/2, i.e. the
trapezoidal rule), fixed step ``dt``, full Newton by default (Exudyn's own default is modified Newton),
sparse LU (``EigenSparse``, ``reuseAnalyzedPattern``), Newton tolerances Exudyn's defaults (relative
1e-8, absolute 1e-10).

Limitation (Exudyn 1.13.6): releasing the tip force excites all modes; with spectral radius 1 they
persist, and the Newton start value of every step (q + h v + h²/4 a) is then off by O(h² |M⁻¹F|), i.e.
O(1) in the tip slope for fine meshes, and Newton diverges. Largest fixed dt of the form T1/(100·2^k)
that worked: T1/100 for 8 and 16 elements, T1/400 for 32, T1/1600 for 64, T1/3200 for 128 (spectral
radius 0.6: 128 elements failed even at T1/3200). ``bench_flexible_vs_exudyn.py``: 276 elements failed at
T1/6400 within the first period and worked at T1/12800; 2 268 elements failed at every fixed dt down to
T1/409600 within 200 steps. ``adaptive=True`` lets Exudyn cut and regrow the step
(``timeIntegration.adaptiveStep``, largest step ``dt``); the steps are then not uniform.

Statistics: ``mbs.sys['dynamicSolver'].it.newtonStepsCount`` (total Newton iterations of the run) and
``.it.newtonJacobiCount`` (Jacobian evaluations). ``wall_seconds`` is ``time.perf_counter`` around
``SolveDynamic`` (includes its set-up, the initial-acceleration solve and the sensors, about 1 %).

Energy: E = T + W, T = ½ vᵀMv with M from ``mbs.ComputeLinearizedSystem`` (the constant ANCF mass
matrix), W = Σ_elements ½ ∫ (EA eps² + EI K²) dx evaluated with the element's own Gauss rules (5 points
for the axial term, 3 for bending; Exudyn docs: "order 9 / order 5"), so that ∂W/∂q is exactly
Exudyn's elastic force vector. States are recorded by ``SensorNode`` (``storeInternal``) for
``Coordinates`` and ``Coordinates_t`` of every node at every step.
"""

from __future__ import annotations

import itertools
import math
import resource
import time

import numpy as np

LENGTH = 1.0  # m
WIDTH = HEIGHT = 0.05  # m
YOUNGS = 2.0e9  # Pa
DENSITY = 7800.0  # kg/m³
DEFLECTION_RATIO = 0.05  # static linear tip deflection / L
BETA1L = 1.8751  # first root of 1 + cos(bL) cosh(bL) = 0


def section(
    length: float = LENGTH,
    width: float = WIDTH,
    height: float = HEIGHT,
    youngs: float = YOUNGS,
    density: float = DENSITY,
) -> dict[str, float]:
    """EA, EI, rho·A and the tip force F = ratio · L · 3EI/L³ of the benchmark cantilever."""
    area, inertia = width * height, width * height**3 / 12.0
    ei = youngs * inertia
    return {
        "EA": youngs * area,
        "EI": ei,
        "rhoA": density * area,
        "F": DEFLECTION_RATIO * length * 3.0 * ei / length**3,
    }


def first_period(
    length: float = LENGTH,
    width: float = WIDTH,
    height: float = HEIGHT,
    youngs: float = YOUNGS,
    density: float = DENSITY,
) -> float:
    """Closed-form first bending period T1 = 2π/ω1, ω1 = 1.8751² sqrt(EI/(ρA L⁴)) (Euler-Bernoulli)."""
    s = section(length, width, height, youngs, density)
    return 2.0 * math.pi / (BETA1L**2 * math.sqrt(s["EI"] / (s["rhoA"] * length**4)))


def cable2d_strain_energy(q_total: np.ndarray, le: float, ea: float, ei: float) -> np.ndarray:
    """Strain energy of a chain of ANCF Cable2D elements for states ``q_total`` (n_states, 4·n_nodes).

    Total (reference + displacement) nodal coordinates [x, y, x', y'] per node; same quadrature as the
    Exudyn element (5 Gauss points for ½EA eps², 3 for ½EI K²), so its gradient is Exudyn's elastic force.
    """
    nodes = np.asarray(q_total, dtype=float).reshape(len(q_total), -1, 4)
    ends = (nodes[:, :-1, :2], nodes[:, :-1, 2:], nodes[:, 1:, :2], nodes[:, 1:, 2:])  # r0, r0', r1, r1'

    def interp(s: float, d2: bool) -> np.ndarray:  # r' (d2 False) or r'' (d2 True) at x = s·le
        if d2:
            w = (-6 + 12 * s) / le**2, (-4 + 6 * s) / le, (6 - 12 * s) / le**2, (-2 + 6 * s) / le
        else:
            w = (-6 * s + 6 * s * s) / le, 1 - 4 * s + 3 * s * s, (6 * s - 6 * s * s) / le, -2 * s + 3 * s * s
        return sum(wk * ek for wk, ek in zip(w, ends))

    energy = np.zeros(len(q_total))
    for xi, wgt in zip(*np.polynomial.legendre.leggauss(5)):
        r1 = interp(0.5 * (xi + 1), False)
        energy += 0.25 * le * wgt * ea * ((np.linalg.norm(r1, axis=-1) - 1.0) ** 2).sum(axis=1)
    for xi, wgt in zip(*np.polynomial.legendre.leggauss(3)):
        s = 0.5 * (xi + 1)
        r1, r2 = interp(s, False), interp(s, True)
        kappa = (r1[..., 0] * r2[..., 1] - r1[..., 1] * r2[..., 0]) / (r1**2).sum(axis=-1)
        energy += 0.25 * le * wgt * ei * (kappa**2).sum(axis=1)
    return energy


def measured_period(t: np.ndarray, y: np.ndarray) -> float:
    """Mean period from the zero crossings of ``y`` (linear interpolation); nan if fewer than 2."""
    idx = np.nonzero(np.sign(y[:-1]) * np.sign(y[1:]) < 0)[0]
    tz = t[idx] - y[idx] * (t[idx + 1] - t[idx]) / (y[idx + 1] - y[idx])
    return float(2.0 * (tz[-1] - tz[0]) / (len(tz) - 1)) if len(tz) >= 2 else float("nan")


def cable2d_mass_matrix(n_elements: int, le: float, rho_a: float):
    """The constant consistent mass matrix of a chain of Cable2D elements, scipy CSR (4·(n+1))², in the
    node-wise order [x, y, x', y'] (cubic Hermite shape functions; equal to Exudyn's
    ``ComputeLinearizedSystem`` mass to round-off, checked at 4 elements). For long chains, where
    the dense matrix of ``ComputeLinearizedSystem`` would cost ~(4n)² memory and time."""
    import scipy.sparse as sp

    m = (
        rho_a
        * le
        / 420.0
        * np.array(
            [
                [156, 22 * le, 54, -13 * le],
                [22 * le, 4 * le * le, 13 * le, -3 * le * le],
                [54, 13 * le, 156, -22 * le],
                [-13 * le, -3 * le * le, -22 * le, 4 * le * le],
            ]
        )
    )
    local = np.array([[0, 1], [2, 3], [4, 5], [6, 7]])  # shape function k -> local (x, y) rows
    rows, cols, vals = [], [], []
    for e in range(n_elements):
        for i in range(4):
            for j in range(4):
                for d in range(2):
                    rows.append(4 * e + local[i, d])
                    cols.append(4 * e + local[j, d])
                    vals.append(m[i, j])
    n = 4 * (n_elements + 1)
    return sp.csr_matrix((vals, (rows, cols)), shape=(n, n))


def timed_solve(mbs, ss) -> tuple[bool, float]:
    """``mbs.SolveDynamic`` with Exudyn's generalized-α solver: (finished, wall seconds); a ``SolverError``
    counts as not finished."""
    import exudyn as exu

    t0 = time.perf_counter()
    try:
        ok = mbs.SolveDynamic(ss, solverType=exu.DynamicSolverType.GeneralizedAlpha)
    except exu.SolverError:
        ok = False
    return ok, time.perf_counter() - t0


def run_exudyn_cantilever(
    n_elements: int,
    dt: float,
    t_end_periods: float = 2.0,
    spectral_radius: float = 1.0,
    *,
    modified_newton: bool = False,
    sparse: bool = True,
    adaptive: bool = False,
    t_end: float | None = None,
    sample_period: float = 0.0,
    sparse_mass: bool = False,
    static_tolerance: float = 1e-8,
    wall_limit: float | None = None,
) -> dict:
    """Static deflection, release and generalized-alpha integration of the Cable2D cantilever.

    Raises RuntimeError if Exudyn's Newton fails at the fixed ``dt`` (see the module docstring);
    ``adaptive=True`` then lets Exudyn reduce the step (``n_steps`` = accepted steps, ``dt_min``).
    ``t_end`` [s] overrides ``t_end_periods``; ``sample_period`` > 0 records the states only every so
    many seconds (sensor write period; 0: every step; ``dt_min`` is then that of the samples unless the
    run is at fixed dt); ``sparse_mass`` takes the mass matrix from :func:`cable2d_mass_matrix` instead of
    ``ComputeLinearizedSystem`` (dense); ``static_tolerance`` is the static solver's relative Newton
    tolerance (Exudyn's default 1e-8; at ~2000 elements its residual stalls at ~5e-6 of the first one).
    ``wall_limit`` [s]: a pre-step user function stops the integration after that much wall time; the
    result then has ``stopped`` True and covers [0, ``t_end``] with ``t_end`` the time reached.
    Returns a dict with sizes, timings, Newton statistics, the tip-y and energy histories and
    ``energy_relative_drift`` = max|E(t) - E(0)| / E(0). ``peak_rss_mb`` is the process peak RSS.
    """
    import exudyn as exu
    from exudyn.itemInterface import (
        CoordinateConstraint,
        LoadCoordinate,
        MarkerNodeCoordinate,
        NodePoint2DSlope1,
        NodePointGround,
        ObjectANCFCable2D,
        SensorNode,
    )

    s = section()
    le = LENGTH / n_elements
    sc = exu.SystemContainer()
    mbs = sc.AddSystem()
    ground = mbs.AddNode(NodePointGround(referenceCoordinates=[0.0, 0.0, 0.0]))
    m_ground = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=ground, coordinate=0))
    nodes = [
        mbs.AddNode(NodePoint2DSlope1(referenceCoordinates=[i * le, 0.0, 1.0, 0.0])) for i in range(n_elements + 1)
    ]
    for a, b in itertools.pairwise(nodes):
        mbs.AddObject(
            ObjectANCFCable2D(
                length=le, massPerLength=s["rhoA"], bendingStiffness=s["EI"], axialStiffness=s["EA"], nodeNumbers=[a, b]
            )
        )
    for coord in (0, 1, 3):  # x, y, slope-y of the root node
        m = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=nodes[0], coordinate=coord))
        mbs.AddObject(CoordinateConstraint(markerNumbers=[m_ground, m]))
    m_tip = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=nodes[-1], coordinate=1))
    load = mbs.AddLoad(LoadCoordinate(markerNumber=m_tip, load=-s["F"]))
    sensors = [
        [
            mbs.AddSensor(SensorNode(nodeNumber=k, writeToFile=False, storeInternal=True, outputVariableType=ovt))
            for k in nodes
        ]
        for ovt in (exu.OutputVariableType.Coordinates, exu.OutputVariableType.Coordinates_t)
    ]
    mbs.Assemble()  # once: a later Assemble would reset the initial state to the straight beam

    ss = exu.SimulationSettings()
    ss.solution.file.write = False
    ss.solution.sensors.writePeriod = sample_period  # 0: record every step
    ss.linearSolver.solverType = exu.LinearSolverType.EigenSparse if sparse else exu.LinearSolverType.EXUdense
    ss.linearSolver.reuseAnalyzedPattern = sparse
    ss.staticSolver.verboseMode = 0
    ss.staticSolver.newton.relativeTolerance = static_tolerance
    if not mbs.SolveStatic(ss, updateInitialValues=True):
        raise RuntimeError("Exudyn static solve failed")
    q_static = mbs.systemData.GetODE2Coordinates()
    tip_index = mbs.systemData.GetNodeLTGODE2(nodes[-1])[1]
    mass = (
        cable2d_mass_matrix(n_elements, le, s["rhoA"])
        if sparse_mass  # constant ANCF mass matrix
        else np.asarray(mbs.ComputeLinearizedSystem(ss)[0])
    )

    mbs.SetLoadParameter(load, "load", 0.0)
    period = first_period()
    n_steps = max(1, round((t_end_periods * period if t_end is None else t_end) / dt))
    ti = ss.timeIntegration
    ti.numberOfSteps, ti.endTime, ti.verboseMode = n_steps, n_steps * dt, 0
    ti.adaptiveStep = adaptive  # False: fixed dt, failure raises
    ti.newton.useModifiedNewton = modified_newton
    ti.generalizedAlpha.spectralRadius = spectral_radius
    stopped = []
    if wall_limit is not None:

        def limit(mbs_, t_step):  # False stops SolveDynamic (it returns True)
            if time.perf_counter() - t0 > wall_limit:
                stopped.append(t_step)
                return False
            return True

        mbs.SetPreStepUserFunction(limit)
    t0 = time.perf_counter()  # also the wall limit's start
    ok, wall = timed_solve(mbs, ss)
    if not ok:
        raise RuntimeError(
            f"Exudyn Newton failed (n_elements={n_elements}, dt={dt:.3e}, "
            f"adaptive={adaptive}); use a smaller dt or adaptive=True"
        )
    solver = mbs.sys["dynamicSolver"]

    pos = np.hstack([mbs.GetSensorStoredData(k)[:, 1:] for k in sensors[0]])
    vel = np.hstack([mbs.GetSensorStoredData(k)[:, 1:] for k in sensors[1]])
    t = mbs.GetSensorStoredData(sensors[0][0])[:, 0]
    every_step = sample_period <= 0.0
    if stopped:  # states up to the last sample before the stop
        n_steps = int(solver.it.currentStepIndex) - 1
    elif abs(t[-1] - n_steps * dt) > 1e-9 * n_steps * dt or (not adaptive and every_step and len(t) != n_steps + 1):
        raise RuntimeError(f"Exudyn did not take {n_steps} steps of {dt} to t = {n_steps * dt}")
    elif every_step:
        n_steps = len(t) - 1
    elif adaptive:
        n_steps = int(solver.it.currentStepIndex) - 1  # the index of the next step after the run
    q_ref = mbs.systemData.GetODE2Coordinates(configuration=exu.ConfigurationType.Reference)
    kinetic = (
        0.5 * np.einsum("ti,ti->t", vel, (mass @ vel.T).T)
        if sparse_mass
        else 0.5 * np.einsum("ti,ij,tj->t", vel, mass, vel)
    )
    strain = cable2d_strain_energy(pos + q_ref, le, s["EA"], s["EI"])
    energy = kinetic + strain
    newton = int(solver.it.newtonStepsCount)
    sim_time = float(solver.it.currentTime) if stopped else float(t[-1])
    return {
        "n_coordinates": int(mbs.systemData.ODE2Size()),
        "n_constraints": int(mbs.systemData.AEsize()),
        "n_elements": n_elements,
        "dt": dt,
        "n_steps": n_steps,
        "t_end": sim_time,
        "stopped": bool(stopped),
        "dt_min": float(np.diff(t).min()) if every_step else (float("nan") if adaptive else dt),
        "adaptive": adaptive,
        "wall_seconds": wall,
        "seconds_per_simulated_second": wall / sim_time,
        "newton_iterations": newton,
        "jacobian_evaluations": int(solver.it.newtonJacobiCount),
        "seconds_per_newton_iteration": wall / max(newton, 1),
        "solver": {
            "alphaM": solver.alphaM,
            "alphaF": solver.alphaF,
            "beta": solver.newmarkBeta,
            "gamma": solver.newmarkGamma,
            "spectral_radius": solver.spectralRadius,
        },
        "tip_force": s["F"],
        "tip_deflection_initial": float(q_static[tip_index]),
        "tip_deflection_linear": -s["F"] * LENGTH**3 / (3.0 * s["EI"]),
        "t": t,
        "tip_y": pos[:, tip_index],
        "energy": energy,
        "kinetic": kinetic,
        "strain": strain,
        "energy_relative_drift": float(np.max(np.abs(energy - energy[0])) / energy[0]),
        "period_measured": measured_period(t, pos[:, tip_index]),
        "period_closed_form": period,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
    }


def main() -> None:
    """Table for 8/32/128 elements at dt = T1/100 and T1/3200, spectral radius 1, full Newton.

    A fixed-dt run whose Newton fails is repeated with ``adaptive=True`` (marked "adapt")."""
    period = first_period()
    print(f"Exudyn ANCFCable2D cantilever: T1 = {period:.6f} s, F = {section()['F']:.3f} N")
    cols = (
        "n_el",
        "ncoord",
        "dt",
        "mode",
        "steps",
        "wall s",
        "s/sim s",
        "newton",
        "us/newton",
        "tip0/lin",
        "T/T1",
        "E drift",
        "rss MB",
    )
    print("{:>5} {:>6} {:>9} {:>6} {:>6} {:>8} {:>8} {:>7} {:>9} {:>8} {:>8} {:>8} {:>6}".format(*cols))
    for n in (8, 32, 128):
        for dt in (period / 100.0, period / 3200.0):
            try:
                r = run_exudyn_cantilever(n, dt)
            except RuntimeError:
                r = run_exudyn_cantilever(n, dt, adaptive=True)
            print(
                f"{n:5d} {r['n_coordinates']:6d} {dt:9.3e} {'adapt' if r['adaptive'] else 'fixed':>6} "
                f"{r['n_steps']:6d} {r['wall_seconds']:8.3f} {r['seconds_per_simulated_second']:8.3f} "
                f"{r['newton_iterations']:7d} {1e6 * r['seconds_per_newton_iteration']:9.1f} "
                f"{r['tip_deflection_initial'] / r['tip_deflection_linear']:8.5f} "
                f"{r['period_measured'] / period:8.5f} {r['energy_relative_drift']:8.1e} "
                f"{r['peak_rss_mb']:6.1f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
