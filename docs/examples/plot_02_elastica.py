"""
The elastica: a cantilever under an increasing end load
=======================================================

A slender steel beam (L = 1 m, square section 20 × 20 mm, E = 210 GPa, ν = 0) is clamped at x = 0 and bent by a
dead end load P along −z that grows to α = P L² / (E I) = 10. The load path is followed in ten equal load steps
(α = 1, 2, …, 10) with 20 27-node ANCF bricks.

Expected: the tip of the inextensible elastica, in the closed form of Bisshopp & Drucker (Q. Appl. Math. 3 (1945)
272–275) written with elliptic integrals: √α = K(k) − F(k, φ₁), k² = (1 + sin θ₀)/2, sin φ₁ = 1/(√2 k), θ₀ the tip
rotation; vertical deflection δ_v / L = 1 − 2 [E(k) − E(k, φ₁)] / √α and horizontal displacement
δ_h / L = 1 − √(2 sin θ₀ / α). Their table gives δ_v / L = 0.301721, 0.603253 and 0.810609 at α = 1, 3 and 10; the
solid model follows the whole curve within 0.1 %.
"""

# %%
# The closed form
# ---------------
# For a given α the tip rotation θ₀ is the root of √α = K(k) − F(k, φ₁); scipy's incomplete elliptic integrals
# take the parameter m = k².

import matplotlib.pyplot as plt
import numpy as np
from scipy.optimize import brentq
from scipy.special import ellipeinc, ellipkinc

import flexbody as fb


def bisshopp_drucker(alpha):
    """(vertical, horizontal) tip displacement / L of the elastica under the load parameter α > 0."""

    def k_phi(theta0):
        k = np.sqrt((1.0 + np.sin(theta0)) / 2.0)
        return k, np.arcsin(1.0 / (np.sqrt(2.0) * k))

    def mismatch(theta0):
        k, phi1 = k_phi(theta0)
        return ellipkinc(np.pi / 2, k * k) - ellipkinc(phi1, k * k) - np.sqrt(alpha)

    theta0 = brentq(mismatch, 1e-12, np.pi / 2 - 1e-12)
    k, phi1 = k_phi(theta0)
    vertical = 1.0 - 2.0 * (ellipeinc(np.pi / 2, k * k) - ellipeinc(phi1, k * k)) / np.sqrt(alpha)
    return vertical, 1.0 - np.sqrt(2.0 * np.sin(theta0) / alpha)


print("Bisshopp & Drucker's table: 0.301721, 0.603253, 0.810609")
print("closed form:               ", ", ".join(f"{bisshopp_drucker(a)[0]:.6f}" for a in (1.0, 3.0, 10.0)))

# %%
# The solid model
# ---------------
# The load is given at α = 10; ``solve_static`` applies it in ten equal steps and keeps every converged step, so
# the :class:`flexbody.Results` is the load path (``results.times`` are the load factors).

LENGTH, SIDE, YOUNG = 1.0, 0.02, 2.1e11
ALPHA = 10.0
EI = YOUNG * SIDE**4 / 12.0

mesh = fb.mesh.box((LENGTH, SIDE, SIDE), (20, 1, 1), order=2)
beam = fb.FlexibleBody("beam", mesh, fb.StVenantKirchhoff(young=YOUNG, poisson=0.0, density=7850.0))
load = fb.SurfaceTraction(beam, "x1", total=(0.0, 0.0, -ALPHA * EI / LENGTH**2))
system = fb.System([beam], constraints=[fb.Fix(beam, "x0")], loads=[load])
results = fb.solve_static(system, load_steps=10)

alpha = ALPHA * results.times[1:]
tip = results.node_displacements(beam, "x1").mean(axis=1)[1:]  # (steps, 3) mean end-face displacement [m]
vertical, horizontal = -tip[:, 2] / LENGTH, -tip[:, 0] / LENGTH
reference = np.array([bisshopp_drucker(a) for a in alpha])
error = vertical / reference[:, 0] - 1.0

print("   α   δv/L flexbody  δv/L elastica   rel. error   δh/L flexbody  δh/L elastica")
for a, v, h, (v_ref, h_ref), e in zip(alpha, vertical, horizontal, reference, error):
    print(f"{a:4.0f}   {v:12.6f}  {v_ref:13.6f}   {e:+10.2e}   {h:13.6f}  {h_ref:13.6f}")
print(f"largest relative error of the vertical deflection: {np.abs(error).max():.2e}")

# %%
# Load–deflection curves and deformed shapes
# ------------------------------------------
# The closed form is drawn as lines, the load steps of the solid model as markers. On the right, the beam's
# centre line (the nodes at the middle of the section) at every load step.

curve = np.linspace(0.0, ALPHA, 101)
closed = np.array([(0.0, 0.0)] + [bisshopp_drucker(a) for a in curve[1:]])  # no load, no deflection
centre = mesh.nodes_where(lambda p: np.isclose(p[:, 1], SIDE / 2) & np.isclose(p[:, 2], SIDE / 2))
centre = centre[np.argsort(mesh.points[centre, 0])]

fig, (ax, bx) = plt.subplots(1, 2, figsize=(10, 4.2))
ax.plot(curve, closed[:, 0], "C0-", label="vertical δv/L, elastica")
ax.plot(alpha, vertical, "C0o", label="vertical, flexbody")
ax.plot(curve, closed[:, 1], "C1-", label="horizontal δh/L, elastica")
ax.plot(alpha, horizontal, "C1s", label="horizontal, flexbody")
ax.set(xlabel="load parameter α = P L² / (E I)", ylabel="tip displacement / L", title="tip of the cantilever")
ax.legend(fontsize=8)
ax.grid(alpha=0.3)
for step in range(results.n_steps):
    x = results.positions(beam, step)[centre]
    bx.plot(x[:, 0], x[:, 2], color=plt.cm.viridis(step / (results.n_steps - 1)))
bx.set(xlabel="x [m]", ylabel="z [m]", title="centre line at α = 0, 1, …, 10", aspect="equal")
bx.grid(alpha=0.3)
fig.tight_layout()
plt.show()
