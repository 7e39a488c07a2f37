"""The one Newton kernel of generalized-α steps, :func:`alpha_iterations`, for every model, and the compiled terms,
iteration matrices and batches of steps of systems without flexible nodes.

The kernel runs the iterations of a step of :class:`~flexbody.solvers.generalized_alpha.GeneralizedAlpha` by
reverse communication with its caller (:class:`~flexbody.solvers.generalized_alpha.AlphaStepper`, which drives single
steps, resumed runs and the restored factor of a checkpoint):

- predictor q̈ and λ held, a, v, q from the Newmark formulas of the step, which run in the step's chart of the
  rotation vectors (centred on the rotation at its start, :mod:`~flexbody.solvers.step_charts`);
- Newton on (q̈, λ): [[A, Φᵀ], [Φ, 0]] [Δq̈; −Δλ] = [−r; rhs], r = M q̈ + h − Φᵀλ − τ, stop when
  max_i β′h²|Δq̈_i| / s_i ≤ tol · min(1, h / 1 ms), s_i the unit of coordinate i (``alpha_settings``), and the
  velocity-level rows' |Φv + φ_t| ≤ tol [m/s or rad/s] + 16 ε ‖v‖∞ (``newton_scales``);
- the factor of the iteration matrix A = M + γ′h C + β′h² K kept across iterations and steps, remade after an
  iteration that contracted by less than ``reuse_rate`` with a kept factor, or that grew.

A system whose terms come from a :class:`~flexbody.system.joint_program.JointProgram` whose rows are all compiled
(rigid trees and reduced bodies; no force elements) has a small dense set of equations, and the kernel computes
its terms (one :func:`~flexbody.system.joint_program.joint_terms` call per iterate), its iteration matrix (K and C
exact, :func:`~flexbody.system.joint_tangent.joint_tangent`, with ``rigid_jacobian`` "exact"; else by central
differences of the rows, step fd_step · max(1, |x_j|)) and its correction itself; the
factor is formed with LAPACK as the sparse solver factors a dense block: Cholesky of the symmetric part (LU with
partial pivoting of A when that is not positive definite), the Schur complement S = Φ A⁻¹ Φᵀ by a pseudo-inverse
(rcond 1e-12, so redundant rows are allowed) (:class:`~flexbody.solvers.compiled_steps.CompiledSteps`). For any
other model the kernel asks its caller for the factor and for the correction at each iterate (from the iterate's
workspace and the sparse saddle-point solver).
Runs whose inputs are held and that call and write nothing per step take up to 256 steps per call
(:func:`alpha_run`), the kernel writing the recorded rows.

The drivers' f(t), ḟ(t), f̈(t) are evaluated in Python once per step, at its end time. A step the kernel cannot
take on compiled terms (a state that is not finite, a radial row of zero length, a matrix that cannot be factored)
is left to the Python route from then on, which names the culprit as before.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ..system.joint_program import OK, joint_terms
from ..system.joint_tangent import joint_tangent
from .alpha_settings import step_tolerance
from .newton_scales import ROUND_OFF
from .step_charts import correction_in_step_chart, from_step_chart, to_step_chart

NOT_CONVERGED, SINGULAR, NEED_FACTOR, NEED_CORRECTION = 3, 4, 5, 6
"""Statuses besides those of :func:`joint_terms`: Newton did not converge within the iterations allowed; the
iteration matrix could not be factored; :func:`alpha_iterations` waits for a new factor; it waits for the Newton
correction of a model without compiled terms."""

CHOLESKY, LU = 0, 1
PSEUDO_INVERSE_RCOND = 1e-12
"""Relative cut-off of the Schur complement's pseudo-inverse (that of the sparse solver)."""


@nb.njit(cache=True, inline="always")
def _rows(program, drive, q, v, qdd, lam, work, out):
    """out = M q̈ + h − Φᵀλ (n,) at (q, v); φ, Φ of the state stay in ``work``. Returns the status."""
    ints, floats, support, bodies, body_floats = program
    M, h, phi, Phi, bias, phi_t, energy = work
    status = joint_terms(ints, floats, support, bodies, body_floats, drive, q, v, M, h, phi, Phi, bias, phi_t, energy)
    if status != OK:
        return status
    n, m = q.shape[0], lam.shape[0]
    for i in range(n):
        s = h[i]
        for j in range(n):
            s += M[i, j] * qdd[j]
        for r in range(m):
            s -= Phi[r, i] * lam[r]
        out[i] = s
    return OK


@nb.njit(cache=True, inline="always")
def _solve_in_place(F, piv, kind, x):
    """x ← A⁻¹ x with the factor F of A: Cholesky L (kind CHOLESKY) or LU with pivots ``piv``."""
    n = F.shape[0]
    if kind == LU:
        for k in range(n):
            p = piv[k]
            if p != k:
                x[k], x[p] = x[p], x[k]
    for i in range(n):  # L y = x (unit diagonal for LU)
        s = x[i]
        for k in range(i):
            s -= F[i, k] * x[k]
        x[i] = s / F[i, i] if kind == CHOLESKY else s
    for i in range(n - 1, -1, -1):  # Lᵀ or U
        s = x[i]
        for k in range(i + 1, n):
            s -= (F[k, i] if kind == CHOLESKY else F[i, k]) * x[k]
        x[i] = s / F[i, i]


@nb.njit(cache=True, inline="always")
def _iteration_matrix(program, drive, q, v, qdd, lam, c_q, c_v, fd_step, exact, work, A, G):
    """A = M + c_v C + c_q K (n, n) at (q, v, q̈, λ) and G = Φ (m, n) there: K and C exact (``exact``:
    :func:`~flexbody.system.joint_tangent.joint_tangent`), else by central differences of the rows (step
    fd_step · max(1, |x_j|)). Returns the status."""
    n = q.shape[0]
    plus, minus = np.empty(n), np.empty(n)
    status = _rows(program, drive, q, v, qdd, lam, work, plus)
    if status != OK:
        return status
    A[:, :] = work[0]
    G[:, :] = work[3]
    ints, floats, support, bodies, body_floats = program
    if exact:
        return joint_tangent(ints, floats, support, bodies, body_floats, q, v, qdd, lam, c_q, c_v, A)
    x, rows = np.empty(n), (plus, minus)
    for j in range(n):
        for which in range(2):
            c = c_q if which == 0 else c_v
            if c == 0.0:
                continue
            base = q if which == 0 else v
            d = fd_step * max(1.0, abs(base[j]))
            x[:] = base
            for side in range(2):
                x[j] = base[j] + d if side == 0 else base[j] - d
                status = _rows(
                    program, drive, x if which == 0 else q, v if which == 0 else x, qdd, lam, work, rows[side]
                )
                if status != OK:
                    return status
            for i in range(n):
                A[i, j] += c * (plus[i] - minus[i]) / (2.0 * d)
    return OK


@nb.njit(cache=True, inline="always")
def _saddle_solve(factor, r1, r2, x, y):
    """x, y with A x + Φᵀy = r₁, Φ x = r₂ by the kept factor: u = A⁻¹r₁, y = S⁺(Φu − r₂), x = u − W y."""
    F, piv, kind, W, G, S_pinv = factor
    n, m = x.shape[0], y.shape[0]
    x[:] = r1
    _solve_in_place(F, piv, kind[0], x)
    if not m:
        return
    g = np.empty(m)
    for r in range(m):
        s = -r2[r]
        for i in range(n):
            s += G[r, i] * x[i]
        g[r] = s
    for r in range(m):
        s = 0.0
        for c in range(m):
            s += S_pinv[r, c] * g[c]
        y[r] = s
    for i in range(n):
        s = 0.0
        for r in range(m):
            s += W[i, r] * y[r]
        x[i] -= s


@nb.njit(cache=True, inline="always")
def _correction(program, drive, q, v, qdd, lam, tau, c_q, work, factor, r, rhs, dqdd, y):
    """The Newton correction (Δq̈, −Δλ) of a compiled model at the iterate: r = τ − (M q̈ + h − Φᵀλ), the right side
    −φ/(β′h²) of the rows, solved with the kept factor into dqdd, y. Returns the status of the terms."""
    status = _rows(program, drive, q, v, qdd, lam, work, r)
    if status != OK:
        return status
    n, m = q.shape[0], lam.shape[0]
    for i in range(n):
        r[i] = tau[i] - r[i]
    phi = work[2]
    for i in range(m):
        rhs[i] = -phi[i] / c_q
    _saddle_solve(factor, r, rhs, dqdd, y)
    return OK


@nb.njit(cache=True)
def alpha_iterations(
    program,
    compiled,
    drive,
    state,
    tau,
    dt,
    coefficients,
    scales,
    max_iterations,
    loop,
    work,
    factor,
    matrix,
    out,
    sizes,
    step,
    rotations,
    local,
):
    """The Newton iterations of one generalized-α step (module docstring of
    :mod:`flexbody.solvers.generalized_alpha`), for every model: from ``state`` = (q, v, q̈, a, λ) over dt with inputs
    τ held, on the iterate ``out`` (the same five arrays), by reverse communication with the caller.

    ``coefficients`` = (α_m, α_f, γ, β, β′, γ′, tol, reuse_rate, fd_step, exact), ``scales`` (n,) the unit of each
    coordinate's increment; ``loop`` = (iterations done, previous
    increment, refresh, fresh, predict, velocity residual, correction given): with ``predict`` set the predictor
    (q̈ and λ held) is formed first. An iteration that needs a new iteration matrix (``refresh``) returns
    NEED_FACTOR — for a ``compiled`` model (``program`` its :class:`~flexbody.system.joint_program.JointProgram`
    arrays) with A and Φ at the iterate in ``matrix`` = (A, G) — and the caller factors, sets refresh 0 and fresh 1
    and calls again. The correction ``step`` = (Δq̈ (n,), Δλ-part y (m,)) of an iteration, with [[A, Φᵀ], [Φ, 0]]
    [Δq̈; −Δλ] = [−r; rhs], is computed here for a compiled model; for another the call returns NEED_CORRECTION and
    the caller writes it, with the largest |Φv + φ_t| of the velocity-level rows in loop[5], sets ``correction
    given`` and calls again. Then q̈ += Δq̈, a += (1 − α_f)/(1 − α_m) Δq̈, v += γ′h Δq̈, q += β′h² Δq̈, λ −= y; the
    step converges when max_i β′h²|Δq̈_i| / scales_i ≤ step_tolerance(tol, h) and the velocity residual ≤ tol +
    ROUND_OFF·‖v‖∞; the factor is remade after an iteration that contracted by less than ``reuse_rate`` with a kept
    factor, or that grew. The position increment of each iteration goes to ``sizes``. Returns OK, NOT_CONVERGED,
    NEED_FACTOR, NEED_CORRECTION or a status of :func:`joint_terms`.

    The formulas run on ``local`` = (q, v, q̈, a) in the step's chart of the rotation vectors whose starts are
    ``rotations`` (:mod:`~flexbody.solvers.step_charts`; the other coordinates as they are), and ``out`` is that
    iterate read back in the state's charts."""
    am, af, g, b, bp, gp, tol, reuse_rate, fd_step, exact = coefficients
    q0, lam0 = state[0], state[4]
    q, v, qdd, a = local
    lam = out[4]
    dqdd, y = step
    n, m = q0.shape[0], lam0.shape[0]
    if loop[4] != 0.0:
        to_step_chart(rotations, state, local)
        for i in range(n):  # predictor: q̈ and λ held
            v0, a0 = v[i], a[i]
            a[i] = (qdd[i] - am * a0) / (1.0 - am)
            v[i] = v0 + dt * ((1.0 - g) * a0 + g * a[i])
            q[i] = q[i] + dt * v0 + dt * dt * ((0.5 - b) * a0 + b * a[i])
        from_step_chart(rotations, q0, local, out)
        lam[:] = lam0
        loop[4] = 0.0
    c_q = bp * dt * dt
    while loop[0] < max_iterations:
        if loop[2] != 0.0:
            if compiled:
                status = _iteration_matrix(
                    program,
                    drive,
                    out[0],
                    out[1],
                    out[2],
                    lam,
                    c_q,
                    gp * dt,
                    fd_step,
                    exact > 0.5,
                    work,
                    matrix[0],
                    matrix[1],
                )
                if status != OK:
                    return status
            return NEED_FACTOR
        if compiled:
            status = _correction(
                program, drive, out[0], out[1], out[2], lam, tau, c_q, work, factor, np.empty(n), np.empty(m), dqdd, y
            )
            if status != OK:
                return status
            loop[5] = 0.0
        elif loop[6] == 0.0:
            return NEED_CORRECTION
        loop[6] = 0.0
        correction_in_step_chart(rotations, out[0], q, dqdd)
        size, v_scale = 0.0, 0.0
        for i in range(n):
            qdd[i] += dqdd[i]
            a[i] += (1.0 - af) / (1.0 - am) * dqdd[i]
            v[i] += gp * dt * dqdd[i]
            q[i] += c_q * dqdd[i]
            size = max(size, abs(dqdd[i]) / scales[i])
        from_step_chart(rotations, q0, local, out)
        for i in range(n):
            v_scale = max(v_scale, abs(out[1][i]))
        for i in range(m):
            lam[i] -= y[i]
        size *= c_q
        k = int(loop[0])
        sizes[k] = size
        loop[0] = k + 1
        if size <= step_tolerance(tol, dt) and loop[5] <= tol + ROUND_OFF * v_scale:
            return OK
        rate = size / loop[1]
        if not np.isfinite(size) or (rate > reuse_rate and loop[3] == 0.0) or rate > 1.0:
            loop[2] = 1.0
        loop[1], loop[3] = size, 0.0
    return NOT_CONVERGED


def new_loop(refresh: bool) -> np.ndarray:
    """The ``loop`` state of :func:`alpha_iterations` at the start of a step (predictor first)."""
    return np.array([0.0, np.inf, float(refresh), 0.0, 1.0, 0.0, 0.0])


RECORDED = ("violation", "velocity_violation", "kinetic", "potential", "energy", "corrections", "applied_work", "dt")
"""The scalar columns :func:`alpha_run` writes per recorded step, in this order."""


@nb.njit(cache=True)
def alpha_run(
    program,
    drives,
    times,
    dts,
    record,
    state,
    out,
    tau,
    tau_eff,
    coefficients,
    scales,
    max_iterations,
    loop,
    work,
    end_work,
    factor,
    matrix,
    sizes,
    counters,
    rows,
    step,
    rotations,
    local,
):
    """Consecutive generalized-α steps, each by :func:`alpha_iterations`, ending at ``times`` (K,) with steps
    ``dts`` (K,) and drives ``drives`` (K, m, 3), inputs τ held, the accepted state kept in ``state`` (q, v, q̈,
    a, λ) and the iterate in ``out``.

    ``counters`` = (steps accepted, rows written, Newton iterations, easy steps, step of the kept factor, work of
    the inputs [J], step under way, factorizations of the step under way): a step starts with its predictor and
    a new iteration matrix when the kept one is for another step. A step that needs a new factor returns
    NEED_FACTOR (the caller factors and calls again: the step goes on); one that does not converge, or whose
    terms the kernel cannot evaluate, returns its status with the steps before it accepted. An accepted step
    adds ½ dt τ_effᵀ(v₀ + v₁) to the work of the inputs (τ_eff = (1 − γ) τ_prev + γ τ, the step's blend) and,
    when ``record`` [j] is set, writes its row: t, q, v, q̈, λ, Φᵀλ and the columns of :data:`RECORDED` (‖φ‖,
    ‖Φv + φ_t‖, the energies at the new state, the iterations, the work so far and the step) from the terms at
    the new state; ``rotations`` and ``local`` are :func:`alpha_iterations`'. Returns OK when every step is
    accepted."""
    ints, floats, support, bodies, body_floats = program
    q0, v0, qdd0, a0, lam0 = state
    q, v, qdd, a, lam = out
    M, h, phi, Phi, bias, phi_t, energy = end_work
    t_rows, q_rows, v_rows, a_rows, lam_rows, force_rows, scalar_rows = rows
    n, m = q0.shape[0], lam0.shape[0]
    half = max_iterations // 2
    while counters[0] < times.shape[0]:
        j = int(counters[0])
        dt = dts[j]
        if counters[6] == 0.0:  # a new step: predictor; refresh for another dt
            loop[0], loop[1], loop[2], loop[3], loop[4] = 0.0, np.inf, 1.0 if counters[4] != dt else 0.0, 0.0, 1.0
            loop[5], loop[6] = 0.0, 0.0
            counters[6], counters[7] = 1.0, 0.0
        status = alpha_iterations(
            program,
            True,
            drives[j],
            state,
            tau,
            dt,
            coefficients,
            scales,
            max_iterations,
            loop,
            work,
            factor,
            matrix,
            out,
            sizes,
            step,
            rotations,
            local,
        )
        if status != OK:
            return status
        status = joint_terms(
            ints, floats, support, bodies, body_floats, drives[j], q, v, M, h, phi, Phi, bias, phi_t, energy
        )
        if status != OK:
            return status
        iterations = int(loop[0])
        power = 0.0
        for i in range(n):
            power += tau_eff[i] * (v0[i] + v[i])
        counters[5] += 0.5 * dt * power
        for i in range(n):
            q0[i], v0[i], qdd0[i], a0[i] = q[i], v[i], qdd[i], a[i]
        lam0[:] = lam
        counters[0], counters[2], counters[6] = j + 1, counters[2] + iterations, 0.0
        counters[3] = counters[3] + 1 if iterations <= half else 0.0
        if counters[7] != 0.0:
            counters[4] = dt
        if not record[j]:
            continue
        r = int(counters[1])
        t_rows[r] = times[j]
        q_rows[r], v_rows[r], a_rows[r], lam_rows[r] = q, v, qdd, lam
        violation, rate_norm = 0.0, 0.0
        for i in range(m):
            violation += phi[i] * phi[i]
            rate = phi_t[i]
            for c in range(n):
                rate += Phi[i, c] * v[c]
            rate_norm += rate * rate
        for c in range(n):
            f = 0.0
            for i in range(m):
                f += Phi[i, c] * lam[i]
            force_rows[r, c] = f
        scalar_rows[r, 0], scalar_rows[r, 1] = np.sqrt(violation), np.sqrt(rate_norm)
        scalar_rows[r, 2], scalar_rows[r, 3], scalar_rows[r, 4] = energy[0], energy[1], energy[0] + energy[1]
        scalar_rows[r, 5], scalar_rows[r, 6], scalar_rows[r, 7] = iterations, counters[5], dt
        counters[1] = r + 1
    return OK
