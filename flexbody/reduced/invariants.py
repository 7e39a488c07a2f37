"""Inertia invariants of a reduced flexible body, and its mass matrix and velocity-product forces in its
floating frame of reference.

The body's nodes sit at x̄_a = X̄_a + Σ_k η_k ψ_ka in the frame (X̄_a the reference positions, ψ_ka the modal
shapes at node a, both frame axes). Its consistent mass is M_s ⊗ I₃ (a scalar matrix over nodes [DE-104]),
so every inertia term is a bilinear sum Σ_ab m_ab f(x̄_a) g(x̄_b). With the Gram matrices
G(A, B) = Aᵀ M_s B (3, 3) of node fields A, B (nodes × 3) they follow from invariants computed once
(the nodal-based floating frame of reference, Zwölfer & Gerstmayr, Multibody Syst. Dyn. 51 (2021) 359):

    m = Σ m_ab,  s = Σ μ_a x̄_a = s₀ + S₁η (μ_a = Σ_b m_ab),  G_xx = G(X̄, X̄) + Σ_k η_k (G_k + G_kᵀ) + Σ_kl η_kη_l G_kl,
    G_xk = G(x̄, ψ_k) = G_k + Σ_l η_l G_lk,  G_k = G(X̄, ψ_k),  G_kl = G(ψ_k, ψ_l).

With body-frame generalized velocities w = [v; ω; η̇] (frame origin velocity and angular velocity, frame axes)
the kinetic energy is ½ wᵀ M_b w (Shabana, Dynamics of Multibody Systems, 4th ed., ch. 5):

    M_b = [[m I, −s̃, S₁], [s̃, J, M_ωη], [S₁ᵀ, M_ωηᵀ, M_ηη]],   J = tr(G_xx) I − G_xx,
    M_ωη[:, k] = ax(G_xk),  ax(G) = (G₂₃ − G₃₂, G₃₁ − G₁₃, G₁₂ − G₂₁),  M_ηη[k, l] = tr G_kl,

and, with a_o the classical acceleration of the frame origin and α the angular acceleration (frame axes), the
generalized inertia forces are M_b [a_o; α; η̈] + Q_v with the velocity-product terms (u̇ = Σ η̇_k ψ_k,
G_xu = G(x̄, u̇), G_ku = G(ψ_k, u̇))

    Q_v,p = ω × (ω × s) + 2 ω × (S₁ η̇),
    Q_v,θ = ω × (J ω) + 2 (tr(G_xu) ω − G_xuᵀ ω),
    Q_v,k = ωᵀ G_xk ω − ‖ω‖² tr G_xk − 2 ω · ax(G_ku).

Gravity g (frame axes) gives the generalized force [m g; s × g; S₁ᵀ g].
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numba as nb
import numpy as np

from ..rigid.exponential_coordinates import cross3


def skew(a: np.ndarray) -> np.ndarray:
    """[a]× (3, 3) with [a]× b = a × b."""
    return np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a × b (3,) of two 3-vectors (without np.cross's generality, which costs microseconds per call)."""
    return np.array(cross3(a[0], a[1], a[2], b[0], b[1], b[2]))


@dataclass(frozen=True)
class InertiaInvariants:
    """The constant sums of a reduced body in its frame (r shapes).

    Attributes
    ----------
    mass : float [kg]; first : (3,) s₀ = Σ μ_a X̄_a [kg·m]; first_modal : (3, r) S₁;
    second : (3, 3) G(X̄, X̄) [kg·m²]; mixed : (r, 3, 3) G(X̄, ψ_k); modal : (r, r, 3, 3) G(ψ_k, ψ_l);
    modal_mass : (r, r) M_ηη = ΨᵀMΨ.
    """

    mass: float
    first: np.ndarray
    first_modal: np.ndarray
    second: np.ndarray
    mixed: np.ndarray = field(repr=False)
    modal: np.ndarray = field(repr=False)
    modal_mass: np.ndarray = field(repr=False)

    @classmethod
    def of(cls, scalar_mass, X: np.ndarray, shapes: np.ndarray) -> InertiaInvariants:
        """From the scalar mass M_s (N, N) (sparse), reference positions X̄ (N, 3) and shapes ψ (N, 3, r)."""
        N, r = X.shape[0], shapes.shape[2]
        mu = np.asarray(scalar_mass @ np.ones(N)).ravel()
        MX = scalar_mass @ X  # (N, 3)
        Mpsi = (scalar_mass @ shapes.reshape(N, 3 * r)).reshape(N, 3, r)
        modal = np.einsum("aik,ajl->klij", shapes, Mpsi)
        return cls(
            float(mu.sum()),
            X.T @ mu,
            np.einsum("aik,a->ik", shapes, mu),
            X.T @ MX,
            np.einsum("ai,ajk->kij", X, Mpsi),
            0.5 * (modal + modal.transpose(1, 0, 3, 2)),
            np.einsum("klii->kl", modal),
        )

    @property
    def n_shapes(self) -> int:
        return self.first_modal.shape[1]


@dataclass(frozen=True)
class FrameTerms:
    """M_b (6 + r, 6 + r) and Q_v (6 + r,) of a reduced body at one state, with s (3,) for gravity."""

    mass: np.ndarray
    velocity_forces: np.ndarray
    first: np.ndarray


def frame_terms(inv: InertiaInvariants, eta: np.ndarray, eta_dot: np.ndarray, omega: np.ndarray) -> FrameTerms:
    """M_b, Q_v and s of the module docstring at modal coordinates η (r,), rates η̇ (r,) and the frame's
    angular velocity ω (3,) [rad/s, frame axes] (one compiled call, :func:`frame_terms_into`)."""
    r = inv.n_shapes
    M, Q, s = np.empty((6 + r, 6 + r)), np.empty(6 + r), np.empty(3)
    frame_terms_into(
        inv.mass,
        inv.first,
        inv.first_modal,
        inv.second,
        inv.mixed,
        inv.modal,
        inv.modal_mass,
        np.ascontiguousarray(eta, dtype=float),
        np.ascontiguousarray(eta_dot, dtype=float),
        np.ascontiguousarray(omega, dtype=float),
        M,
        Q,
        s,
    )
    return FrameTerms(M, Q, s)


@nb.njit(cache=True)
def frame_state(R, J, bias, v_tree, gravity, T, c, w, g):
    """T = diag(Rᵀ, Rᵀ) J (6, n), c = diag(Rᵀ, Rᵀ) J̇v (6,), w = T v (6,) and g = Rᵀ gravity (3,) into the
    outputs: the frame's Jacobian, bias acceleration, twist and gravity in frame axes."""
    n = J.shape[1]
    for half in range(2):
        o = 3 * half
        for i in range(3):
            ci = 0.0
            for k in range(3):
                ci += R[k, i] * bias[o + k]
            c[o + i] = ci
            for j in range(n):
                t = 0.0
                for k in range(3):
                    t += R[k, i] * J[o + k, j]
                T[o + i, j] = t
    for i in range(6):
        wi = 0.0
        for j in range(n):
            wi += T[i, j] * v_tree[j]
        w[i] = wi
    for i in range(3):
        g[i] = R[0, i] * gravity[0] + R[1, i] * gravity[1] + R[2, i] * gravity[2]


@nb.njit(cache=True)
def _axial(G):
    return G[1, 2] - G[2, 1], G[2, 0] - G[0, 2], G[0, 1] - G[1, 0]


@nb.njit(cache=True)
def frame_terms_into(mass, first, first_modal, second, mixed, modal, modal_mass, eta, eta_dot, omega, M, Q, s):
    """M_b (6 + r, 6 + r), Q_v (6 + r,) and s (3,) into M, Q, s (formulas: module docstring)."""
    r = eta.shape[0]
    G_xk = np.empty((r, 3, 3))  # G_k + Σ_l η_l G_lk
    G_xx = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            for k in range(r):
                x = mixed[k, i, j]
                for l in range(r):
                    x += eta[l] * modal[l, k, i, j]
                G_xk[k, i, j] = x
    for i in range(3):
        for j in range(3):
            x = second[i, j]
            for k in range(r):
                x += eta[k] * (mixed[k, i, j] + G_xk[k, i, j])
            G_xx[i, j] = x
    for i in range(3):  # symmetric part
        for j in range(i + 1, 3):
            x = 0.5 * (G_xx[i, j] + G_xx[j, i])
            G_xx[i, j] = G_xx[j, i] = x
    tr = G_xx[0, 0] + G_xx[1, 1] + G_xx[2, 2]
    J = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            J[i, j] = -G_xx[i, j]
        J[i, i] += tr
        s[i] = first[i]
        for k in range(r):
            s[i] += first_modal[i, k] * eta[k]
    M[:, :] = 0.0
    for i in range(3):
        M[i, i] = mass
        for k in range(r):
            M[i, 6 + k] = first_modal[i, k]
            M[6 + k, i] = first_modal[i, k]
        for j in range(3):
            M[3 + i, 3 + j] = J[i, j]
    M[0, 4], M[0, 5], M[1, 3], M[1, 5], M[2, 3], M[2, 4] = s[2], -s[1], -s[2], s[0], s[1], -s[0]  # −[s]×
    M[4, 0], M[5, 0], M[3, 1], M[5, 1], M[3, 2], M[4, 2] = s[2], -s[1], -s[2], s[0], s[1], -s[0]  # [s]×
    for k in range(r):
        a0, a1, a2 = _axial(G_xk[k])
        M[3, 6 + k], M[4, 6 + k], M[5, 6 + k] = a0, a1, a2
        M[6 + k, 3], M[6 + k, 4], M[6 + k, 5] = a0, a1, a2
        for l in range(r):
            M[6 + k, 6 + l] = modal_mass[k, l]
    w0, w1, w2 = omega[0], omega[1], omega[2]
    # Q_p = ω × (ω × s) + 2 ω × (S₁ η̇)
    c0, c1, c2 = cross3(w0, w1, w2, s[0], s[1], s[2])
    d0, d1, d2 = cross3(w0, w1, w2, c0, c1, c2)
    u0 = u1 = u2 = 0.0
    for k in range(r):
        u0 += first_modal[0, k] * eta_dot[k]
        u1 += first_modal[1, k] * eta_dot[k]
        u2 += first_modal[2, k] * eta_dot[k]
    e0, e1, e2 = cross3(w0, w1, w2, u0, u1, u2)
    Q[0], Q[1], Q[2] = d0 + 2.0 * e0, d1 + 2.0 * e1, d2 + 2.0 * e2
    # Q_θ = ω × (J ω) + 2 (tr(G_xu) ω − G_xuᵀ ω)
    Jw0 = J[0, 0] * w0 + J[0, 1] * w1 + J[0, 2] * w2
    Jw1 = J[1, 0] * w0 + J[1, 1] * w1 + J[1, 2] * w2
    Jw2 = J[2, 0] * w0 + J[2, 1] * w1 + J[2, 2] * w2
    f0, f1, f2 = cross3(w0, w1, w2, Jw0, Jw1, Jw2)
    G_xu = np.zeros((3, 3))
    for k in range(r):
        for i in range(3):
            for j in range(3):
                G_xu[i, j] += eta_dot[k] * G_xk[k, i, j]
    tu = G_xu[0, 0] + G_xu[1, 1] + G_xu[2, 2]
    Q[3] = f0 + 2.0 * (tu * w0 - (G_xu[0, 0] * w0 + G_xu[1, 0] * w1 + G_xu[2, 0] * w2))
    Q[4] = f1 + 2.0 * (tu * w1 - (G_xu[0, 1] * w0 + G_xu[1, 1] * w1 + G_xu[2, 1] * w2))
    Q[5] = f2 + 2.0 * (tu * w2 - (G_xu[0, 2] * w0 + G_xu[1, 2] * w1 + G_xu[2, 2] * w2))
    # Q_k = ωᵀ G_xk ω − ‖ω‖² tr G_xk − 2 ω · ax(G_ku),  G_ku = Σ_l η̇_l G_kl
    ww = w0 * w0 + w1 * w1 + w2 * w2
    for k in range(r):
        G = G_xk[k]
        quad = 0.0
        for i in range(3):
            for j in range(3):
                quad += omega[i] * G[i, j] * omega[j]
        a0 = a1 = a2 = 0.0  # ax(G_ku), G_ku = Σ_l η̇_l G_kl
        for l in range(r):
            Gkl = modal[k, l]
            a0 += eta_dot[l] * (Gkl[1, 2] - Gkl[2, 1])
            a1 += eta_dot[l] * (Gkl[2, 0] - Gkl[0, 2])
            a2 += eta_dot[l] * (Gkl[0, 1] - Gkl[1, 0])
        Q[6 + k] = quad - ww * (G[0, 0] + G[1, 1] + G[2, 2]) - 2.0 * (w0 * a0 + w1 * a1 + w2 * a2)
