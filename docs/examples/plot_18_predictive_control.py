"""
Model-predictive control of a flexible arm within torque limits
===============================================================

The two-link arm of case 16 carries its ANCF beam (here 3 × 1 × 1 27-node bricks) under gravity; its flange is to
step by (30, 20) mm and then run a circle of 80 mm at 0.5 Hz, with the joint torques limited to 40 and 20 N·m.
Case 16's operational-space law, clipped to the limits, reacts to the beam's swing and saturates.
``fb.ModelPredictiveControl`` plans 0.1 s ahead every 5 ms on a reduced model of the arm (the beam as four
Craig–Bampton modes on link 2), within the limits, and damps the beam's modes; the plant is the full model in both
runs. Expected: the MPC tracks the circle an order of magnitude better, and an update takes well under a millisecond
(case 33 at full size, docs/verification.md).
"""

# %%
# The plant, the prediction model and the reference
# -------------------------------------------------
# ``ReducedBody.modal_state`` turns the plant's beam nodes into the reduced beam's modes, in link 2's frame.

import matplotlib.pyplot as plt
import numpy as np

import flexbody as fb

Q0, LIMITS = (0.6, -1.5), np.array([40.0, 20.0])
plant = fb.mechanisms.arm_with_beam(divisions=(3, 1, 1), order=2, young=7e7, damping=0.002, q0=Q0).assemble()
model = fb.mechanisms.arm_with_reduced_beam(4, divisions=(3, 1, 1), order=2, young=7e7, damping=0.002, q0=Q0).assemble()
beam = model.reduced[0]


def flange(asm):
    return fb.PointTask(asm.trees[0].point("l2", (0.4, 0.0, 0.0)), components=(0, 2), name="flange")


def state_map(t, state, _plant=None):
    kin = plant.workspace(t, state.q, state.v).kinematics(plant.trees[0])
    nodes = plant.bodies[0]
    eta, eta_dot = beam.modal_state(
        kin.R[1], kin.p[1], kin.vel[1], plant.coordinates(nodes, state.q), plant.coordinates(nodes, state.v)
    )
    return np.r_[state.q[:2], eta], np.r_[state.v[:2], eta_dot]


_, start = fb.holding_inputs(plant)
goal = flange(plant).evaluate(plant.workspace(0.0, start.q)).x + np.array([0.03, 0.02])
reference = fb.control.CircleAfterStep(goal, 1.0, 0.08, 0.5, 0.5)

# %%
# Two controllers within the same limits
# --------------------------------------
law = fb.control.Saturated(
    fb.control.DirectMappingControl(flange(plant), reference, kp=225.0, kv=30.0), -LIMITS, LIMITS
)
mpc = fb.ModelPredictiveControl(
    model,
    flange(model),
    reference,
    period=0.005,
    horizon=20,
    lower=-LIMITS,
    upper=LIMITS,
    output_weight=1e3,
    rate_weight=1e-3,
    velocity_weight=np.r_[0.0, 0.0, np.full(4, 10.0)],
    state_map=state_map,
    relinearize_every=4,
)
runs = {}
for name, controller in (("operational space, clipped", law), ("MPC on the reduced model", mpc)):
    res = fb.simulate(
        plant, 2.0, integrator=fb.GeneralizedAlpha(dt=1e-3, rho_inf=0.99), controller=controller, q0=start.q
    )
    task = flange(plant)
    error = [np.linalg.norm(reference(t)[0] - task.evaluate(plant.workspace(t, q)).x) for t, q in zip(res.times, res.q)]
    runs[name] = (res, np.array(error))
    circle = res.times >= 1.5
    print(f"{name}: largest error on the circle {1e3 * runs[name][1][circle].max():.2f} mm")
print(mpc.report())

# %%
# Errors and torques
# ------------------
fig, (ax, bx) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
for name, (res, error) in runs.items():
    ax.semilogy(res.times, np.maximum(error, 1e-7), label=name)
    bx.plot(res.times, res.histories["tau_k"], label=[f"τ1, {name}", f"τ2, {name}"])
ax.set(ylabel="flange error [m]")
bx.set(xlabel="t [s]", ylabel="torque [N·m]")
ax.legend()
bx.legend(fontsize=7, ncol=2)
plt.show()
