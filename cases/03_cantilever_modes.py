"""Case 03: natural frequencies and mode shapes of a slender clamped–free beam.

Problem: a steel beam L = 1 m with a square section 0.02 × 0.02 m (E = 210 GPa, ν = 0.3, ρ = 7850 kg/m³),
root face x = 0 clamped, discretised with 27-node ANCF hexahedra (20 × 1 × 1). The linearised free vibration
K(q₀) φ = ω² M φ on the free coordinates (tangent at the reference configuration, consistent mass) is solved
with scipy's eigsh in shift-invert mode about σ = 0 for the N_MODES lowest modes.

Expected: the bending frequencies come in degenerate y/z pairs (square section) at the Euler–Bernoulli values
f_i = (β_i L)² √(E I / (ρ A L⁴)) / 2π with β₁L = 1.8751, β₂L = 4.6941, β₃L = 7.8548 (Blevins, *Formulas for
Natural Frequency and Mode Shape*, Table 8-1): 16.710, 104.72, 293.23 Hz. flexbody gives the first two within
0.4 % (docs/verification.md; tests/test_frequencies.py).

Each degenerate pair is rotated so that one mode's tip moves along y, the other's along z.
Outputs in out_dir: frequencies.csv (mode, frequency, Euler–Bernoulli reference of its pair, ratio, share of
Σ|φ|² in x, y, z) and mode_NN.vtu, the mesh displaced by q₀ + s φ with the tip amplitude s |φ_tip| =
MODE_SCALE · L, for ParaView. ``main`` returns the frequencies against Euler–Bernoulli (what ``flexbody
sweep`` tabulates) and the mode shapes (key "modes", columns = modes).
"""

from pathlib import Path

import numpy as np

import flexbody as fb

LENGTH = 1.0  # m, beam length L
SIDE = 0.02  # m, side of the square section
YOUNG = 2.1e11  # Pa, Young's modulus
POISSON = 0.3  # -, Poisson's ratio
DENSITY = 7850.0  # kg/m³, density
DIVISIONS = (20, 1, 1)  # -, elements along x, y, z
ORDER = 2  # -, 2: 27-node elements; 1: 8-node (incompatible modes by default)
LOCKING = "auto"  # -, 8-node formulation: "auto" (incompatible modes), None (plain, locks) or "incompatible_modes"
N_MODES = 6  # -, number of lowest modes computed
MODE_SCALE = 0.1  # -, tip amplitude of the exported mode shapes, as a fraction of L
BETA_L = (1.8751, 4.6941, 7.8548)  # -, β_i L of the first three clamped–free bending modes (Blevins, Table 8-1)


def build(
    divisions=DIVISIONS,
    order=ORDER,
    locking=LOCKING,
    length=LENGTH,
    side=SIDE,
    young=YOUNG,
    poisson=POISSON,
    density=DENSITY,
) -> fb.System:
    """The beam with its root face clamped (no loads)."""
    mesh = fb.mesh.box((length, side, side), tuple(divisions), order=order)
    material = fb.StVenantKirchhoff(young=young, poisson=poisson, density=density)
    beam = fb.FlexibleBody("beam", mesh, material, locking=locking)
    return fb.System([beam], constraints=[fb.Fix(beam, "x0")])


def euler_bernoulli(length=LENGTH, side=SIDE, young=YOUNG, density=DENSITY) -> np.ndarray:
    """Clamped–free bending frequencies [Hz] for β L in BETA_L."""
    return np.array(BETA_L) ** 2 * np.sqrt(young * side**2 / 12.0 / (density * length**4)) / (2.0 * np.pi)


def natural_modes(system: fb.System, n_modes: int = N_MODES) -> tuple[np.ndarray, np.ndarray]:
    """Lowest frequencies [Hz] (k,) and mode shapes (n_dofs, k), zero on the clamped coordinates."""
    import scipy.sparse.linalg as spla

    q0 = system.reference_coordinates()
    fixed, _ = system.prescribed(0.0)
    free = np.setdiff1d(np.arange(system.n_dofs), fixed)
    K = system.force_and_tangent(q0)[1][free][:, free].tocsc()
    M = system.mass_matrix()[free][:, free].tocsc()
    omega2, phi = spla.eigsh(K, k=n_modes, M=M, sigma=0.0)
    order = np.argsort(omega2)
    modes = np.zeros((system.n_dofs, n_modes))
    modes[free] = phi[:, order]
    return np.sqrt(np.maximum(omega2[order], 0.0)) / (2.0 * np.pi), modes


def aligned_pairs(asm, beam: fb.FlexibleBody, freqs: np.ndarray, modes: np.ndarray) -> np.ndarray:
    """Modes with each degenerate pair rotated so that one tip moves along y and the other along z."""
    modes = modes.copy()
    for i in range(len(freqs) - 1):
        starts_pair = i == 0 or freqs[i] - freqs[i - 1] > 1e-6 * freqs[i]
        if starts_pair and freqs[i + 1] - freqs[i] <= 1e-6 * freqs[i + 1]:
            pair = modes[:, i : i + 2]
            T = asm.coordinates(beam, pair.T, nodes="x1")[:, :, 1:].mean(axis=1).T  # tip (y, z) of each mode
            if abs(np.linalg.det(T)) > 1e-12 * np.abs(T).max() ** 2:
                rotated = pair @ np.linalg.inv(T)
                modes[:, i : i + 2] = rotated / np.linalg.norm(rotated, axis=0)
    return modes


def main(out_dir="out/03_cantilever_modes", n_modes=N_MODES, mode_scale=MODE_SCALE, **overrides) -> dict:
    """Solve, write the outputs; returns {"frequencies_hz", "euler_bernoulli_hz", "f1_hz", "f1_rel_error",
    "f2_hz", "f2_rel_error" (second distinct pair, when computed), "modes"}."""
    system = build(**overrides)
    beam = system.bodies[0]
    freqs, modes = natural_modes(system, n_modes)
    asm = system.assemble()  # for the coordinate views of the body
    modes = aligned_pairs(asm, beam, freqs, modes)
    geometry = {k: overrides[k] for k in ("length", "side", "young", "density") if k in overrides}
    reference = euler_bernoulli(**geometry)
    length = geometry.get("length", LENGTH)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows = ["mode,frequency_hz,euler_bernoulli_hz,ratio,share_x,share_y,share_z"]
    q0 = system.reference_coordinates()
    tip = beam.nodes("x1")
    # square section: bending frequencies come in degenerate y/z pairs; number the distinct ones
    distinct = np.concatenate([[0], np.cumsum(np.diff(freqs) > 1e-6 * freqs[1:])])
    for i, (f, phi) in enumerate(zip(freqs, modes.T)):
        ref = reference[distinct[i]] if distinct[i] < len(reference) else np.nan
        u = asm.coordinates(beam, phi)
        share = (u**2).sum(axis=0) / (u**2).sum()
        rows.append(f"{i},{f:.6f},{ref:.6f},{f / ref:.6f},{share[0]:.4f},{share[1]:.4f},{share[2]:.4f}")
        amplitude = np.linalg.norm(u[tip].mean(axis=0)) or np.abs(u).max()
        fb.io.write_vtu(out / f"mode_{i:02d}.vtu", beam, q0 + mode_scale * length / amplitude * phi)
    (out / "frequencies.csv").write_text("\n".join(rows) + "\n")
    summary = {"frequencies_hz": [float(f) for f in freqs], "euler_bernoulli_hz": [float(f) for f in reference]}
    for pair in range(min(2, int(distinct[-1]) + 1)):
        f = float(freqs[np.flatnonzero(distinct == pair)[0]])
        summary.update({f"f{pair + 1}_hz": f, f"f{pair + 1}_rel_error": f / float(reference[pair]) - 1.0})
    return {**summary, "modes": modes}


if __name__ == "__main__":
    main()
