"""Sensitivities of whole RK4 runs, without constraint stabilisation or with the position correction: the
tangent-linear and adjoint sweeps of :func:`flexbody.gradient` for ``integrator=RK4(dt)`` (#36 item 5).

A step of h from (q, v) at t takes the four stages of :func:`~flexbody.solvers.explicit.run_rk4` [AG-36],

    (Q₁, V₁) = (q, v),  (Q₂, V₂) = (q + ½hV₁, v + ½hA₁),  (Q₃, V₃) = (q + ½hV₂, v + ½hA₂),
    (Q₄, V₄) = (q + hV₃, v + hA₃),
    A_i = a(t_i, Q_i, V_i, τ_i),   q′ = q + h/6 (V₁ + 2V₂ + 2V₃ + V₄),   v′ = v + h/6 (A₁ + 2A₂ + 2A₃ + A₄),

each stage's input τ_i = Sᵀu of the interval holding the step's start (the run ends its steps on the inputs'
switches and evaluates each step's input at every stage, :mod:`flexbody.solvers.input_breaks`). The
stages' derivatives ∂a/∂q, ∂a/∂v, ∂a/∂τ, ∂a/∂p are exact (:func:`~flexbody.solvers.dynamics_derivatives.
forward_derivatives`, in the run's formulation), and the sweeps follow the stages forward (tangent) or backward
(adjoint). The stages are recomputed from the recorded steps; a rotation vector that passed π moves to its other chart
after the step, as the run moves it, and the sweeps take that switch's linearization
(:mod:`flexbody.solvers.chart_sensitivities`).

With :class:`~flexbody.solvers.stabilization.PositionCorrection` each step's end (q′, v′) is corrected (Newton steps
on the position rows, then the velocity projection [AG-37]); the sweeps replay the correction from the recomputed
(q′, v′) and take its exact derivatives (:mod:`flexbody.solvers.correction_sensitivities`): δq = J_q δq′,
δv = J_v δv′ + J_vq δq′, and their transposes in the adjoint.
"""

from __future__ import annotations

import numpy as np

from ..linalg.rank import resolve_tolerances
from ..rigid.exponential_coordinates import switched_charts
from ..system import State
from .chart_sensitivities import switch_map
from .correction_sensitivities import checked_replay, correction_jacobians
from .dynamics_derivatives import forward_derivatives

__all__ = ["rk4_adjoint_sweep", "rk4_tangent_sweep"]


def _stages(asm, t, h, q, v, tau_at, formulation, parameters, joint_rows):
    """The four stages of the step from (t, q, v): ([(ForwardDerivatives, what its input depends on)], (q′, v′) its
    uncorrected end, in the other chart of each rotation vector longer than π, and the linearization S of that switch
    (None without one, :func:`~flexbody.solvers.chart_sensitivities.switch_map`))."""
    out, Q, V = [], q, v
    times = (t, t + 0.5 * h, t + 0.5 * h, t + h)
    sum_V, sum_A = np.zeros_like(q), np.zeros_like(v)
    for stage_t, fraction, weight in zip(times, (0.5, 0.5, 1.0, None), (1.0, 2.0, 2.0, 1.0)):
        tau, key = tau_at(stage_t, t)
        d = forward_derivatives(
            asm, State(stage_t, Q, V), tau, formulation, parameters=parameters, joint_rows=joint_rows
        )
        out.append((d, key))
        sum_V, sum_A = sum_V + weight * V, sum_A + weight * d.a
        if fraction is not None:
            Q, V = q + fraction * h * V, v + fraction * h * d.a
    end = (q + h / 6.0 * sum_V, v + h / 6.0 * sum_A)
    switch = switch_map(np.asarray(asm.rotation_vectors, dtype=np.int64), end)
    return out, end if switch is None else switched_charts(asm.rotation_vectors, *end), switch


def _corrected(asm, correction, t, end, recorded):
    """(J_q, J_vq, J_v) of the correction of the step's uncorrected ``end`` = (q′, v′) at t, replayed and checked
    against the ``recorded`` q."""
    rtol, atol = resolve_tolerances(None, None)
    q_star, _, J_q, J_vq, J_v = correction_jacobians(asm, t, *end, correction, rtol, atol)
    checked_replay(q_star, recorded, t)
    return J_q, J_vq, J_v


def rk4_adjoint_sweep(
    asm, run, g_q, g_v, tau_at, add_tau_bar, formulation, parameters=(), joint_rows: str = "exact", correction=None
):  # fmt: skip
    """(q̄₀ (n, …), v̄₀ (n, …), p̄ (p, …)) of a cost with partials ``g_q``, ``g_v`` (N + 1, n) in the recorded states
    of the run ``run`` = (times, q, v) (or of r functions at once: (N + 1, n, r)); ``tau_at(t, t_start)`` → (τ (n,),
    key) of the stage at t of the step that starts at t_start, and each stage's τ̄ (n, …) handed to
    ``add_tau_bar(key, τ̄)``; ``correction``: the PositionCorrection of each step's end, or None (module
    docstring)."""
    times, q, v = run
    N = len(times) - 1
    q_bar, v_bar = g_q[N].copy(), g_v[N].copy()
    p_bar = np.zeros((len(parameters), *g_q.shape[2:]))
    weights = (1.0 / 6.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 6.0)
    for i in range(N - 1, -1, -1):
        h = times[i + 1] - times[i]
        stages, end, switch = _stages(asm, times[i], h, q[i], v[i], tau_at, formulation, parameters, joint_rows)
        if correction is not None:  # back through δq = J_q δq′, δv = J_v δv′ + J_vq δq′
            J_q, J_vq, J_v = _corrected(asm, correction, times[i + 1], end, q[i + 1])
            q_bar, v_bar = J_q.T @ q_bar + J_vq.T @ v_bar, J_v.T @ v_bar
        else:
            checked_replay(end[0], q[i + 1], times[i + 1])
        if switch is not None:
            q_bar, v_bar = switch.transposed([q_bar, v_bar])
        V_bar = [w * h * q_bar for w in weights]
        A_bar = [w * h * v_bar for w in weights]
        q_new, v_new = q_bar.copy(), v_bar.copy()  # the identity parts of q′, v′
        for s in (3, 2, 1, 0):
            d, key = stages[s]
            Q_bar = d.da_dq.T @ A_bar[s]
            V_bar[s] = V_bar[s] + d.da_dv.T @ A_bar[s]
            add_tau_bar(key, d.da_dtau.T @ A_bar[s])
            if d.da_dp is not None:
                p_bar += d.da_dp.T @ A_bar[s]
            q_new += Q_bar
            v_new += V_bar[s]
            if s:  # (Q_s, V_s) = (q + c h V_{s−1}, v + c h A_{s−1})
                c = 1.0 if s == 3 else 0.5
                V_bar[s - 1] = V_bar[s - 1] + c * h * Q_bar
                A_bar[s - 1] = A_bar[s - 1] + c * h * V_bar[s]
        q_bar, v_bar = g_q[i] + q_new, g_v[i] + v_new
    return q_bar, v_bar, p_bar


def rk4_tangent_sweep(
    asm, run, dq0, dv0, dtau_of, tau_at, formulation, parameters=(), joint_rows: str = "exact", correction=None
):
    """(δq, δv) (N + 1, n, k) of the run ``run`` = (times, q, v) for k directions: ``dq0``, ``dv0`` (n, k) of the
    start, ``dtau_of(key)`` (n, k) the inputs' perturbation of a stage's input (its key from ``tau_at``), and unit
    perturbations of the constants in the last p directions; ``correction``: the PositionCorrection of each step's
    end, or None (module docstring)."""
    times, q, v = run
    N, (n, k), p = len(times) - 1, dq0.shape, len(parameters)
    dp = np.zeros((p, k))
    dp[:, k - p :] = np.eye(p)
    out_q, out_v = np.empty((N + 1, n, k)), np.empty((N + 1, n, k))
    out_q[0], out_v[0] = dq0, dv0
    for i in range(N):
        h = times[i + 1] - times[i]
        stages, end, switch = _stages(asm, times[i], h, q[i], v[i], tau_at, formulation, parameters, joint_rows)
        if correction is None:
            checked_replay(end[0], q[i + 1], times[i + 1])
        dq, dv = out_q[i], out_v[i]
        dQ, dV = dq, dv
        sum_V, sum_A = np.zeros((n, k)), np.zeros((n, k))
        for s, (d, key) in enumerate(stages):
            dA = d.da_dq @ dQ + d.da_dv @ dV + d.da_dtau @ dtau_of(key)
            if p:
                dA += d.da_dp @ dp
            weight = 1.0 if s in (0, 3) else 2.0
            sum_V += weight * dV
            sum_A += weight * dA
            if s < 3:
                c = 1.0 if s == 2 else 0.5
                dQ, dV = dq + c * h * dV, dv + c * h * dA
        out_q[i + 1], out_v[i + 1] = dq + h / 6.0 * sum_V, dv + h / 6.0 * sum_A
        if switch is not None:
            out_q[i + 1], out_v[i + 1] = switch([out_q[i + 1], out_v[i + 1]])
        if correction is not None:
            J_q, J_vq, J_v = _corrected(asm, correction, times[i + 1], end, q[i + 1])
            out_q[i + 1], out_v[i + 1] = J_q @ out_q[i + 1], J_v @ out_v[i + 1] + J_vq @ out_q[i + 1]
    return out_q, out_v
