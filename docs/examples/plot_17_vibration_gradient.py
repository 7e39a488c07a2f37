"""
Shaping a torque profile: the gradient of a flexible arm's residual vibration
=============================================================================

The two-link arm of case 16 carries its beam (27-node ANCF bricks) and swings its shoulder by a bang–bang torque in a
horizontal plane (no gravity): full torque for 0.12 s, full reverse for 0.12 s, then nothing. A rigid arm would
stop; this one leaves its beam ringing. ``fb.gradient`` gives the exact gradient of the beam's residual vibration
energy at 0.3 s — and of the end pose's error and the effort — with respect to all 60 torque values of the profile,
by one backward (adjoint) sweep through the generalized-α steps. Expected: the gradient equals central differences
of whole runs; scipy's L-BFGS-B on it takes most of the vibration out while the arm ends where it did.
"""

# %%
# The arm, the move and the cost
# ------------------------------
# 30 intervals of 10 ms, two torques each. The cost: the beam's kinetic and strain energy at the end
# (``fb.FlexibleEnergy``), the joints' distance from the bang–bang move's end pose and their speed there
# (``fb.FinalState``), and a little effort. The Newton tolerance is tight, so that differences of whole runs can
# check the gradient.

import matplotlib.pyplot as plt
import numpy as np
from scipy.optimize import minimize

import flexbody as fb

arm = fb.mechanisms.arm_with_beam(
    divisions=(4, 1, 1), order=2, young=7e7, damping=0.002, q0=(0.6, -1.5), gravity=(0.0, 0.0, 0.0)
)
asm = arm.assemble()
beam = asm.flexible.bodies[0]
T_END, INTERVALS, TORQUE = 0.3, 30, 2.0
times = np.linspace(0.0, T_END, INTERVALS + 1)
u0 = np.zeros((INTERVALS, 2))
u0[:12, 0], u0[12:24, 0] = TORQUE, -TORQUE  # bang–bang on the shoulder
integrator = fb.GeneralizedAlpha(dt=1e-3, rho_inf=0.99, tol=1e-12)


def run(u):
    inputs = fb.PiecewiseInputs(times, u)
    return fb.simulate(asm, T_END, integrator=integrator, tau=inputs.forces(asm)), inputs


first, _ = run(u0)
joints = np.zeros(asm.n_dofs)
joints[: asm.n_rigid] = 1.0
cost = (
    fb.FlexibleEnergy(beam)
    + fb.FinalState(wq=100.0 * joints, wv=10.0 * joints, q_target=first.q[-1])
    + 1e-6 * fb.Effort()
)

# %%
# One gradient, checked against whole runs
# ----------------------------------------
# The adjoint sweep costs a few runs; central differences need two runs per torque value (120 here). Two of them,
# as a check:

g = fb.gradient(asm, T_END, cost, fb.PiecewiseInputs(times, u0), integrator=integrator)
print(f"J = {g.value:.4e}; the run {g.seconds['run']:.1f} s, the adjoint sweep {g.seconds['sensitivities']:.1f} s")
for k, j in ((5, 0), (20, 1)):
    ends = []
    for sign in (1.0, -1.0):
        u = u0.copy()
        u[k, j] += sign * 1e-3
        ends.append(cost.of_run(*run(u)))
    central = (ends[0] - ends[1]) / 2e-3
    print(f"dJ/du[{k},{j}]: adjoint {g.inputs[k, j]: .7e}, central differences {central: .7e}")

# %%
# Shaping the profile with L-BFGS-B
# ---------------------------------
# scipy's quasi-Newton method takes the cost and its gradient from one call each.


def cost_and_gradient(x):
    result = fb.gradient(asm, T_END, cost, fb.PiecewiseInputs(times, x.reshape(u0.shape)), integrator=integrator)
    return result.value, result.inputs.ravel()


best = minimize(
    cost_and_gradient, u0.ravel(), jac=True, method="L-BFGS-B", options={"maxiter": 10, "gtol": 1e-12, "ftol": 1e-12}
)
u = best.x.reshape(u0.shape)
last, _ = run(u)
print(f"J: {g.value:.4e} -> {best.fun:.4e} in {best.nit} iterations ({best.nfev} runs with their gradients)")
vibration = fb.FlexibleEnergy(beam)
before, after = (
    vibration.of_run(first, fb.PiecewiseInputs(times, u0)),
    vibration.of_run(last, fb.PiecewiseInputs(times, u)),
)
print(f"the beam's residual vibration energy: {before:.3e} J -> {after:.3e} J ({before / after:.0f}x less)")
print(f"the joints' end: {np.abs(last.q[-1, :2] - first.q[-1, :2]).max():.1e} rad from the bang-bang end")


# %%
# The beam's vibration energy and the torques, before and after
# -------------------------------------------------------------


def beam_energy(results):
    cols = asm.slices[beam]
    M = beam.mass_matrix()
    return np.array([0.5 * v[cols] @ (M @ v[cols]) + beam.strain_energy(q[cols]) for q, v in zip(results.q, results.v)])


fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.6))
for label, results in (("bang–bang", first), ("shaped", last)):
    ax1.semilogy(results.times, beam_energy(results) + 1e-12, label=label)
ax1.set_xlabel("t [s]")
ax1.set_ylabel("beam's kinetic + strain energy [J]")
ax1.legend()
ax2.step(times[:-1], u0[:, 0], where="post", label="shoulder, bang–bang")
ax2.step(times[:-1], u[:, 0], where="post", label="shoulder, shaped")
ax2.step(times[:-1], u[:, 1], where="post", label="elbow, shaped")
ax2.set_xlabel("t [s]")
ax2.set_ylabel("torque [N m]")
ax2.legend(fontsize=8)
fig.tight_layout()
plt.show()
