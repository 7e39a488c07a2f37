"""Fits the case tests measure simulated signals with: a frequency from zero crossings and a least-squares
sinusoid, a frequency and damping ratio from crossings and peaks, damped exponentials by the matrix pencil,
and the times a sampled signal changes sign."""

import itertools

import numpy as np
import scipy.linalg as la


def sine_frequency(t, s) -> tuple[float, float, float]:
    """(f [Hz] of a least-squares fit s ≈ c + a cos 2πft + b sin 2πft, f from the crossings of the mid-range
    level, rms residual of the fit / amplitude) of a sampled signal; the fit starts from the crossings."""
    from scipy.optimize import least_squares

    d = s - 0.5 * (s.max() + s.min())
    k = np.flatnonzero(np.sign(d[:-1]) * np.sign(d[1:]) < 0)
    crossings = t[k] - d[k] * (t[k + 1] - t[k]) / (d[k + 1] - d[k])
    f0 = (len(crossings) - 1) / (2.0 * (crossings[-1] - crossings[0]))
    amp = float(np.abs(d).max())

    def residual(p):
        w = 2.0 * np.pi * p[3] * t
        return (p[0] + p[1] * np.cos(w) + p[2] * np.sin(w) - s) / amp

    p = least_squares(
        residual, [s.mean(), d[0], 0.0, f0], x_scale=[amp, amp, amp, f0], xtol=1e-15, ftol=1e-15, gtol=1e-15
    ).x
    return float(p[3]), float(f0), float(np.sqrt(np.mean(residual(p) ** 2)))


def ringing(times, signal, level=0.0) -> dict:
    """Frequency [Hz] from the zero crossings of ``signal − level`` (linear interpolation) and the damping
    ratio from the logarithmic decrement of its peaks."""
    y = np.asarray(signal, dtype=float) - level
    i = np.flatnonzero(np.sign(y[:-1]) * np.sign(y[1:]) < 0)
    if len(i) < 3:
        return {"frequency": float("nan"), "damping_ratio": float("nan"), "crossings": len(i)}
    tz = times[i] - y[i] * (times[i + 1] - times[i]) / (y[i + 1] - y[i])
    frequency = (len(tz) - 1) / (2.0 * (tz[-1] - tz[0]))
    peaks = [int(a + np.argmax(np.abs(y[a : b + 1]))) for a, b in itertools.pairwise(i)]  # one per half period
    amp = np.abs(y[peaks])
    zeta = float(np.log(amp[0] / amp[-1]) / (np.pi * (len(amp) - 1))) if len(amp) > 1 else float("nan")
    return {"frequency": float(frequency), "damping_ratio": zeta, "crossings": len(i)}


def matrix_pencil(t, y, order) -> tuple[np.ndarray, np.ndarray]:
    """Poles λ (order,) [1/s] and amplitudes of a sum of ``order`` damped exponentials fitted to y (s, c)
    sampled uniformly at t (matrix pencil, Hua & Sarkar, IEEE Trans. ASSP 38 (1990) 814–824: the shift
    invariance of the dominant right singular vectors of the stacked Hankel matrices of the c channels)."""
    h, L = t[1] - t[0], len(t) // 3
    H = np.vstack([np.lib.stride_tricks.sliding_window_view(y[:, c], L + 1) for c in range(y.shape[1])])
    V = la.svd(H, full_matrices=False)[2][:order].T
    z = la.eigvals(la.lstsq(V[:-1], V[1:])[0])
    lam = np.log(z.astype(complex)) / h
    amplitudes = la.lstsq(np.exp(np.outer(t - t[0], lam)), y.astype(complex))[0]
    return lam, np.linalg.norm(amplitudes, axis=1)


def sign_changes(t, y) -> np.ndarray:
    """Times where y changes sign, each from the cubic through the four samples around it."""
    out = []
    for k in np.nonzero(y[:-1] * y[1:] < 0)[0]:
        lo = min(max(k - 1, 0), len(t) - 4)
        tt, yy = t[lo : lo + 4] - t[k], y[lo : lo + 4]
        roots = np.roots(np.polyfit(tt, yy, 3))
        roots = roots[(np.abs(roots.imag) < 1e-12) & (roots.real >= -1e-12) & (roots.real <= t[k + 1] - t[k] + 1e-12)]
        out.append(t[k] + (roots.real[0] if roots.size else -y[k] * (t[k + 1] - t[k]) / (y[k + 1] - y[k])))
    return np.array(out)
