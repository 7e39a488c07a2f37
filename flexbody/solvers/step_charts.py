"""Each generalized-α step in a chart of its rotation vectors centred on the step's start.

A rotation vector φ (spherical and free-flyer joints, :mod:`flexbody.rigid.exponential_coordinates`) is a chart of
SO(3) whose curvature grows with ‖φ‖: the Newmark formulas, linear in the coordinates, are as accurate as the chart
is flat, and a step at ‖φ‖ ≈ π took about nine times the energy error of one at ‖φ‖ ≈ 1 (heavy top). The step is
therefore taken in the local chart ψ of the rotation at its start, R = exp([φ_n]×) exp([ψ]×) — the chart of
Lie-group generalized-α (Brüls & Cardona 2010; Arnold, Brüls & Cardona 2015), in which every step starts at ψ = 0
whatever the rotation. With ω the body angular velocity, ω = J_r(φ) φ̇ = J_r(ψ) ψ̇, so at the start (ψ = 0,
J_r = I, J̇_r = 0)

    ψ = 0,   ψ̇ = J_r(φ) φ̇,   ψ̈ = J_r(φ) φ̈ + J̇_r(φ) φ̇   (and the algorithmic a as ψ̈),

the Newmark formulas run on (ψ, ψ̇, ψ̈, a), and every iterate is read back in φ's chart for the equations of motion:

    φ = log(exp([φ_n]×) exp([ψ]×)),   φ̇ = J_r(φ)⁻¹ J_r(ψ) ψ̇,   φ̈ = J_r(φ)⁻¹ (J_r(ψ) ψ̈ + J̇_r(ψ) ψ̇ − J̇_r(φ) φ̇).

A Newton correction Δφ̈ of the equations in φ is one in ψ by dφ = J_r(φ)⁻¹ J_r(ψ) dψ (the same body-frame
perturbation): Δψ̈ = J_r(ψ)⁻¹ J_r(φ) Δφ̈. Coordinates that are not rotation vectors are copied unchanged, so a model
without rotation vectors steps exactly as the linear formulas do. The state between steps stays in φ (the chart
switch past π, the records, a checkpoint and the inputs are unchanged).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ..rigid.exponential_coordinates import apply_right_jacobian, composed, right_jacobian_rate


@nb.njit(cache=True)
def to_step_chart(rotations, state, local):
    """``local`` = (q, v, q̈, a) of ``state`` = (q, v, q̈, a, …) in the step's chart: each rotation vector
    q[s:s+3] (``rotations``, starts) at ψ = 0 with ψ̇ = J_r φ̇ and ψ̈ = J_r φ̈ + J̇_r φ̇ (a likewise)."""
    for k in range(4):
        local[k][:] = state[k]
    rate = np.empty(3)
    for s in rotations:
        phi, phi_dot = state[0][s : s + 3], state[1][s : s + 3]
        right_jacobian_rate(phi[0], phi[1], phi[2], phi_dot[0], phi_dot[1], phi_dot[2], rate)
        apply_right_jacobian(phi, phi_dot, False, local[1][s : s + 3])
        for k in range(2, 4):
            apply_right_jacobian(phi, state[k][s : s + 3], False, local[k][s : s + 3])
            local[k][s : s + 3] += rate
        local[0][s : s + 3] = 0.0


@nb.njit(cache=True)
def from_step_chart(rotations, q0, local, out):
    """``out`` = (q, v, q̈, a, …) in φ's chart of the iterate ``local`` = (ψ, ψ̇, ψ̈, a) of a step from q0 (module
    docstring); the coordinates that are not rotation vectors are copied."""
    for k in range(4):
        out[k][:] = local[k]
    omega, rate, body = np.empty(3), np.empty(3), np.empty(3)
    for s in rotations:
        psi, psi_dot = local[0][s : s + 3], local[1][s : s + 3]
        phi, phi_dot = out[0][s : s + 3], out[1][s : s + 3]
        composed(q0[s : s + 3], psi, phi)
        apply_right_jacobian(psi, psi_dot, False, omega)
        apply_right_jacobian(phi, omega, True, phi_dot)
        right_jacobian_rate(psi[0], psi[1], psi[2], psi_dot[0], psi_dot[1], psi_dot[2], rate)
        right_jacobian_rate(phi[0], phi[1], phi[2], phi_dot[0], phi_dot[1], phi_dot[2], body)
        rate -= body  # J̇_r(ψ) ψ̇ − J̇_r(φ) φ̇
        for k in range(2, 4):
            apply_right_jacobian(psi, local[k][s : s + 3], False, body)
            body += rate
            apply_right_jacobian(phi, body, True, out[k][s : s + 3])


@nb.njit(cache=True)
def correction_in_step_chart(rotations, q, local_q, dqdd):
    """Δq̈ (n,) of the equations in φ's chart at the iterate (φ in q, ψ in ``local_q``) → Δψ̈ = J_r(ψ)⁻¹ J_r(φ) Δφ̈
    of each rotation vector, in place."""
    body = np.empty(3)
    for s in rotations:
        apply_right_jacobian(q[s : s + 3], dqdd[s : s + 3], False, body)
        apply_right_jacobian(local_q[s : s + 3], body, True, dqdd[s : s + 3])


def step_chart_arrays(n: int) -> tuple:
    """The iterate (ψ, ψ̇, ψ̈, a) (n,) each of a step in its chart (:func:`to_step_chart`)."""
    return tuple(np.empty(n) for _ in range(4))
