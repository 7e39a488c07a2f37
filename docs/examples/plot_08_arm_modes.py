"""
Natural modes of a held rigid–flexible arm
==========================================

The arm of the previous example (two rigid links carrying a soft beam of six 27-node bricks, in the vertical
xz-plane, gravity along −z) held at the posture q0 = (0.3, −0.5) rad by joint servos: a proportional position
control with gravity feed-forward, τ = τ_h + k (q0 − q), k = 1000 N·m/rad, modelled by
:class:`flexbody.JointSpringDamper` springs resting at q0 plus the constant holding torques τ_h of
:func:`flexbody.holding_inputs`. :func:`flexbody.modal_analysis` linearises the whole constrained system about this
equilibrium (gravity's preload, the beam's sag, the springs and the constraint forces' stiffness included).

Expected (flexbody's case 22): the beam's motions out of the arm's plane (bending along y, torsion) do not move the
joints, so they are those of the beam clamped at a locked flange, whatever k; the in-plane ones couple the beam's
bending with the sprung arm and lie below the locked ones. A free vibration started in a mode must stay in it and
run at the mode's frequency f as the trapezoidal rule (generalized-α, ρ∞ = 1) renders it,
f̄ = arctan(π f Δt) / (π Δt) (for 100 steps per period f̄ / f − 1 = −3.29e-4).
"""

# %%
# The held arm and its modes
# --------------------------

import tempfile

import matplotlib.pyplot as plt
import numpy as np
import pyvista

import flexbody as fb

Q0 = (0.3, -0.5)  # rad
K_SERVO = 1000.0  # N·m/rad


def build(locked=False):
    """The arm with its beam held by servo springs at Q0 (or with its joints locked)."""
    arm = fb.mechanisms.arm_with_beam(young=7e7, divisions=(6, 1, 1), order=2, q0=Q0, locked=locked)
    tree = arm.trees[0]
    servos = [
        fb.JointSpringDamper(tree.link(name), stiffness=K_SERVO, rest=rest) for name, rest in zip(("l1", "l2"), Q0)
    ]
    return fb.System(
        [*arm.trees, *arm.bodies],
        arm.constraints,
        loads=arm.loads,
        actuators=arm.actuators,
        q0=arm.q0,
        forces=[] if locked else servos,
    )


asm = build().assemble()
tau_k, equilibrium = fb.holding_inputs(asm)  # τ_h: the torques that hold Q0 (the springs carry nothing there)
modes = fb.modal_analysis(asm, equilibrium, n_modes=8, tau=equilibrium.tau)
locked = fb.modal_analysis(build(locked=True), n_modes=8)
print(f"holding torques {np.round(tau_k, 3)} N·m")

# %%
# The modes in which the joints move are the in-plane ones, coupled with the sprung arm; in the others the joints
# stand still (to round-off), and each of them must be a mode of the locked arm with the same frequency.

joint_amplitude = np.abs(modes.shapes[:, :2]).max(axis=1)  # rad, at unit modal mass
in_plane = joint_amplitude > 1e-6 * np.abs(modes.shapes).max(axis=1)
print("locked joints [Hz]:", np.round(locked.frequencies, 4))
print(" mode   servo-held [Hz]   joints [rad]   locked [Hz]   rel. difference")
for k, (f, a) in enumerate(zip(modes.frequencies, joint_amplitude)):
    if in_plane[k]:
        print(f"  {k}     {f:10.4f}       {a:10.2e}     (in-plane: coupled with the arm)")
    else:
        nearest = locked.frequencies[np.argmin(np.abs(locked.frequencies - f))]
        print(f"  {k}     {f:10.4f}       {a:10.2e}     {nearest:10.4f}   {f / nearest - 1:+.1e}")

# %%
# Check by a free vibration
# -------------------------
# Start at rest from the equilibrium displaced along mode 0 and simulate four periods with the trapezoidal rule at
# 100 steps per period. The modal coordinates η = Xᵀ M (q − q*) show how much of the motion stays in the mode, and
# the crossings of η₀ through zero give the frequency the integrator ran it at. (The trapezoidal rule is
# generalized-α with ρ∞ = 1; flexbody warns that it leaves the constraint multipliers undamped, which matters for
# long runs only.)

f0 = modes.frequencies[0]
dt = 0.01 / f0
run = fb.simulate(
    asm,
    4 / f0,
    integrator=fb.GeneralizedAlpha(dt=dt, rho_inf=1.0, tol=1e-13),
    tau=equilibrium.tau,
    q0=modes.q + 1e-4 * modes.shapes[0],
    v0=np.zeros(asm.n_dofs),
)
M = asm.workspace(0.0, modes.q).mass_matrix()
eta = np.array([modes.shapes @ (M @ (q - modes.q)) for q in run.q])  # (steps, 8)
y, t = eta[:, 0], run.times
i = np.flatnonzero(np.sign(y[:-1]) * np.sign(y[1:]) < 0)
crossings = t[i] - y[i] * (t[i + 1] - t[i]) / (y[i + 1] - y[i])
measured = (len(crossings) - 1) / (2 * (crossings[-1] - crossings[0]))
trapezoidal = np.arctan(np.pi * f0 * dt) / (np.pi * dt)
print(
    f"mode 0: f = {f0:.6f} Hz, trapezoidal rule f̄ = {trapezoidal:.6f} Hz, simulated {measured:.6f} Hz "
    f"(measured / f̄ − 1 = {measured / trapezoidal - 1:+.1e})"
)
print(f"leakage into the other modes: {np.abs(eta[:, 1:]).max() / np.abs(eta[:, 0]).max():.1e}")

fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 3.8))
colours = np.where(in_plane, "C0", "C1")
ax.bar(np.arange(8) - 0.2, modes.frequencies, 0.4, color=colours, label="servo-held (blue: joints move)")
ax.bar(np.arange(8) + 0.2, locked.frequencies, 0.4, color="0.7", label="joints locked")
ax.set(xlabel="mode", ylabel="frequency [Hz]", yscale="log", title="natural frequencies")
ax.legend(fontsize=8)
bx.plot(t, eta[:, 0] / np.abs(eta[:, 0]).max(), label="η₀ (the excited mode)")
bx.plot(t, eta[:, 1:] / np.abs(eta[:, 0]).max() * 1e3, lw=0.8)
bx.set(xlabel="t [s]", ylabel="η / max|η₀|", title="free vibration in mode 0 (others × 1000)")
bx.legend(fontsize=8)
for a in (ax, bx):
    a.grid(alpha=0.3)
fig.tight_layout()
plt.show()

# %%
# The lowest mode in 3-D
# ----------------------
# :meth:`~flexbody.solvers.modal.Modes.animation` gives one period of the mode as results; a quarter period (step
# 6 of 24) is its largest displacement, here with the largest coordinate change (a node at the beam's tip) set to
# 15 cm. The equilibrium (step 0) is drawn translucent.

out = fb.io.write_results(tempfile.mkdtemp(), modes.animation(0, amplitude=0.15))
plotter = fb.view.plotter(out, step=6, field="displacement", window_size=(1000, 600))
series = fb.view.series(out)
for name, style in (("beam", dict(color="lightgray", opacity=0.4)), ("arm", dict(color="gray", line_width=3))):
    reader = pyvista.get_reader(str(series[name]))
    reader.set_active_time_point(0)
    plotter.add_mesh(reader.read()[0], **style)
plotter.show()
