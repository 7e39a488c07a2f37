"""
Through a limit point by arc length
===================================

A St. Venant–Kirchhoff bar (1 × 0.1 × 0.1 m, E = 1 MPa, ν = 0) is pushed at one end by a dead compressive force.
With ν = 0 it deforms homogeneously, and its end force as a function of the stretch λ = ℓ / L is known in closed
form: the St. Venant–Kirchhoff law gives the nominal stress S₁₁ F₁₁ = E (λ² − 1) λ / 2, so the bar carries the
compression N(λ) = E A (λ − λ³) / 2. This has a maximum N_max = E A / (3√3) at λ = 1/√3: beyond it the bar
softens, and under a growing load it would snap. Load control (raising the force in steps) cannot pass the maximum;
arc-length continuation (Crisfield's cylindrical arc, :class:`flexbody.ArcLength`) follows the equilibrium path
over it and down the falling branch, with the load as an unknown.

Expected: every converged point of the path lies on N(λ) (to round-off: the homogeneous state is exact for the
brick elements); the path goes over the maximum and down until the bar is nearly flattened (λ → 0), where the next
step would invert it and the path stops.
"""

# %%
# The bar
# -------
# Two 8-node bricks. The end face x = 0 may slide in its plane (``Fix`` of the x component only); three more
# ``Fix`` rows on corner nodes remove the rigid motions in y and z. The traction at the face x = L is 1.2 times the
# maximum the bar can carry.

import matplotlib.pyplot as plt
import numpy as np

import flexbody as fb

L, B, E = 1.0, 0.1, 1.0e6
AREA = B * B
N_MAX = E * AREA / (3.0 * np.sqrt(3.0))  # N, the largest compression the bar carries
FORCE = 1.2 * N_MAX  # N, the load at load factor 1

mesh = fb.mesh.box((L, B, B), (2, 1, 1))
bar = fb.FlexibleBody("bar", mesh, fb.StVenantKirchhoff(young=E, poisson=0.0, density=1.0))


def corner(point):
    """Index of the node at ``point``."""
    return mesh.nodes_where(lambda p: np.all(np.isclose(p, point), axis=1))


held = [
    fb.Fix(bar, "x0", components=(0,), name="roller"),
    fb.Fix(bar, corner((0, 0, 0)), components=(1, 2), name="origin"),
    fb.Fix(bar, corner((0, B, 0)), components=(2,), name="no_twist"),
    fb.Fix(bar, corner((0, 0, B)), components=(1,), name="no_tilt"),
]
system = fb.System([bar], held, loads=[fb.SurfaceTraction(bar, "x1", total=(-FORCE, 0.0, 0.0))])


def stretch(results):
    """λ (s,) at every point of a path: the end face's mean x over L."""
    return 1.0 + results.node_displacements(bar, "x1")[:, :, 0].mean(axis=1) / L


# %%
# Load control stops at the maximum
# ---------------------------------
# Ten equal load steps of 0.12 N_max: the ninth asks for more than N_max. ``solve_static`` retries a failed step
# on half the increment, so it creeps up to the maximum, but there is no equilibrium beyond: it raises a
# :class:`flexbody.ConvergenceError` that carries the converged steps in ``last_good``.

try:
    fb.solve_static(system, load_steps=10)
except fb.ConvergenceError as error:
    load_control = error.last_good
    print(
        f"load control: {type(error).__name__} after load factor {load_control.times[-1]:.2f} "
        f"(N = {load_control.times[-1] * FORCE / N_MAX:.3f} N_max)"
    )

# %%
# Arc length goes over it
# -----------------------
# ``solve_static(..., path=fb.ArcLength(...))`` takes arcs whose first is the linear response to 1/10 of the load,
# then grows or shrinks them towards five Newton iterations per step, here up to ``max_arc`` = 3 cm (an arc is the
# root-mean-square displacement of the nodes, in m). The load factor never comes back to 1, so the path runs down
# the falling branch until the next arc would invert the bar; the error that says so carries the path.

try:
    fb.solve_static(system, load_steps=10, path=fb.ArcLength(max_arc=0.03))
except fb.ConvergenceError as error:
    path = error.last_good
    print("arc length stopped:", str(error).split(";")[0])

lam = stretch(path)
load = path.times * FORCE  # compression [N] along the path (it rises, then falls)
closed_form = E * AREA * (lam - lam**3) / 2.0
print(
    f"{path.metadata.get('steps', len(load) - 1)} arc-length steps, Newton iterations per step ≤ {max(path.iterations)}"
)
solved = path.histories["point_kind"] < 2  # converged points (the critical points below are interpolated)
error = np.abs(load - closed_form)[solved].max() / N_MAX
print(f"largest |N_path − N(λ)| = {error:.1e} N_max on the converged points; last point λ = {lam[-1]:.2e}")

# %%
# Where the path loses stability
# ------------------------------
# Every point carries the number of negative eigenvalues of its tangent (``histories["negative_eigenvalues"]``);
# where it changes, the critical point between the two points is located and recorded in the path, with its kind:
# a limit point when the load works on its mode (here the maximum, where the homogeneous compression softens), a
# bifurcation when it does not (here the bar's lateral buckling loads: this slender bar could also bend sideways,
# which the homogeneous path passes, unstable from the first of them on; Euler's load of the clamped–free bar,
# π²EI/(4L²), is 0.0107 N_max).

for critical in path.metadata["critical_points"]:
    i = critical["point"]
    print(f"{critical['kind']:>11} at N = {load[i] / N_MAX:.6f} N_max, λ = {lam[i]:.6f}")
print(
    f"closed form: the limit point N_max at λ = 1/√3 = {1 / np.sqrt(3):.6f}; "
    f"the last point is stable: {path.metadata['stable']}"
)

# %%
# The load–stretch path
# ---------------------

s = np.linspace(0.0, 1.0, 200)
fig, ax = plt.subplots(figsize=(7, 4.2))
ax.plot(1 - s, E * AREA * (s - s**3) / 2 / N_MAX, "k-", lw=1, label="closed form N(λ) = EA(λ − λ³)/2")
ax.plot(1 - lam, load / N_MAX, "o", ms=5, mfc="none", label="arc length")
ax.plot(1 - stretch(load_control), load_control.times * FORCE / N_MAX, "s", ms=4, label="load control (stops)")
ax.axhline(1.0, color="0.6", ls="--", lw=0.8)
ax.axvline(1 - 1 / np.sqrt(3), color="0.6", ls="--", lw=0.8)
kinds = path.histories["point_kind"]
for code, marker, label in ((2, "*", "limit point"), (3, "x", "bifurcations (lateral buckling)")):
    where = kinds == code
    ax.plot(1 - lam[where], load[where] / N_MAX, marker, ms=9, color="C3" if code == 2 else "C2", label=label)
ax.set(xlabel="end shortening 1 − λ", ylabel="compression N / N_max", title="St. Venant–Kirchhoff bar in compression")
ax.legend()
ax.grid(alpha=0.3)
fig.tight_layout()
plt.show()
