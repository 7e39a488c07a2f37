"""Natural frequencies of a slender clamped–free beam against Euler–Bernoulli theory.

Problem: steel cantilever L = 1 m, square section a = 0.02 m (L/a = 50), E = 2.1e11 Pa, ν = 0.3,
ρ = 7850 kg/m³, root face x = 0 clamped. The linearised problem K(q₀) φ = ω² M φ on the free coordinates
(tangent at the reference configuration, consistent mass) is solved with scipy's ``eigsh`` in shift-invert
mode about σ = 0.

Reference: Euler–Bernoulli clamped–free beam, ω_i = (β_i L)² √(E I / (ρ A L⁴)) with β₁L = 1.8751,
β₂L = 4.6941 (roots of cos βL cosh βL = −1; e.g. Blevins, *Formulas for Natural Frequency and Mode Shape*,
Table 8-1): f₁ = 16.710 Hz, f₂ = 104.72 Hz. Rotary inertia and shear deformation, absent from the reference,
change f₂ by O((a/L)²) ≈ 0.1 %; the tolerance is 2 %.

The section is square, so every bending frequency is a degenerate y/z pair; eigsh returns an arbitrary basis
of each pair. The tests group the six lowest eigenvalues into pairs, rotate each pair to the modes whose tip
moves purely along y and purely along z, and check those are bending: the transverse component carries
> 98 % of Σ|φ|², and the cross-section translation (mean over each section's nodes) > 99 % (a torsion mode
has zero section translation, an axial mode a dominant x component).

Measured numbers are recorded in docs/verification_beams.md.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
import scipy.sparse.linalg as spla

import flexbody as fb

LENGTH, SIDE = 1.0, 0.02
YOUNG, POISSON, DENSITY = 2.1e11, 0.3, 7850.0
BETA_L = (1.8751, 4.6941)
EULER_BERNOULLI_HZ = tuple(
    bl**2 * np.sqrt(YOUNG * SIDE**4 / 12.0 / (DENSITY * SIDE**2 * LENGTH**4)) / (2 * np.pi) for bl in BETA_L
)

ELEMENTS = [
    pytest.param((2, (20, 1, 1), None), id="H27-20x1x1"),
    pytest.param((1, (40, 2, 2), "incompatible_modes"), id="H8im-40x2x2"),
]


@functools.cache
def cantilever_modes(order: int, divisions: tuple, locking: str | None, n_modes: int = 6):
    """(body, frequencies [Hz] (k,), mode shapes (n_dofs, k) with zeros on the clamped coordinates)."""
    mesh = fb.mesh.box((LENGTH, SIDE, SIDE), divisions, order=order)
    body = fb.FlexibleBody(
        "beam", mesh, fb.StVenantKirchhoff(young=YOUNG, poisson=POISSON, density=DENSITY), locking=locking
    )
    free = np.setdiff1d(np.arange(body.n_dofs), body.dofs("x0"))
    K = body.tangent(body.reference_coordinates())[free][:, free].tocsc()
    M = body.mass_matrix()[free][:, free].tocsc()
    omega2, phi = spla.eigsh(K, k=n_modes, M=M, sigma=0.0)
    order_ = np.argsort(omega2)
    modes = np.zeros((body.n_dofs, n_modes))
    modes[free] = phi[:, order_]
    return body, np.sqrt(omega2[order_]) / (2.0 * np.pi), modes


def pairs(frequencies: np.ndarray, rtol: float = 1e-6) -> list[list[int]]:
    """Group consecutive (sorted) frequencies that agree to ``rtol`` into degenerate sets."""
    groups = [[0]]
    for i in range(1, len(frequencies)):
        if frequencies[i] - frequencies[groups[-1][0]] <= rtol * frequencies[i]:
            groups[-1].append(i)
        else:
            groups.append([i])
    return groups


def pure_direction_modes(body, modes: np.ndarray) -> np.ndarray:
    """Combinations (n_dofs, 2) of a degenerate pair whose mean tip displacement is along y, resp. z."""
    tip = body.nodes("x1")
    T = np.stack([modes[:, j].reshape(-1, 3)[tip, 1:].mean(axis=0) for j in range(2)], axis=1)  # (yz, mode)
    return modes @ np.linalg.solve(T, np.eye(2))


def component_fractions(body, mode: np.ndarray) -> tuple[np.ndarray, float]:
    """Share of Σ|φ|² in x, y, z (3,) and the share of the cross-section translations in y, z."""
    u = mode.reshape(-1, 3)
    total = float((u**2).sum())
    x = np.round(body.mesh.points[:, 0], 12)
    station = np.unique(x, return_inverse=True)[1]
    counts = np.bincount(station)
    mean_yz = np.stack([np.bincount(station, weights=u[:, c]) / counts for c in (1, 2)], axis=1)[station]
    return (u**2).sum(axis=0) / total, float((mean_yz**2).sum() / total)


@pytest.mark.parametrize("element", ELEMENTS)
def test_first_two_bending_frequencies(element):
    """The two lowest distinct frequencies are degenerate y/z pairs within 2 % of Euler–Bernoulli."""
    _body, freqs, _ = cantilever_modes(*element)
    groups = pairs(freqs)
    assert [len(g) for g in groups[:2]] == [2, 2], f"expected two y/z pairs, got {groups} ({freqs} Hz)"
    for group, reference in zip(groups[:2], EULER_BERNOULLI_HZ):
        assert freqs[group[0]] == pytest.approx(reference, rel=0.02)


@pytest.mark.parametrize("element", ELEMENTS)
def test_lowest_modes_are_bending(element):
    """Each pair rotated to pure-y / pure-z tip motion is bending: transverse share > 98 %, x share < 1 %,
    and the cross-section translation > 99 % (excludes torsion, whose sections do not translate)."""
    body, freqs, modes = cantilever_modes(*element)
    for group in pairs(freqs)[:2]:
        rotated = pure_direction_modes(body, modes[:, group])
        for direction in (1, 2):
            share, translation = component_fractions(body, rotated[:, direction - 1])
            assert share[direction] > 0.98, f"mode at {freqs[group[0]]:.3f} Hz: shares {share}"
            assert share[0] < 0.01
            assert translation > 0.99


def test_plain_hex8_locks_in_vibration():
    """Without incompatible modes the same 40 × 2 × 2 brick mesh is > 20 % too stiff in bending (shear locking)."""
    _, plain, _ = cantilever_modes(1, (40, 2, 2), None)
    _, remedied, _ = cantilever_modes(1, (40, 2, 2), "incompatible_modes")
    assert plain[0] / EULER_BERNOULLI_HZ[0] > 1.2
    assert remedied[0] / EULER_BERNOULLI_HZ[0] < 1.02
