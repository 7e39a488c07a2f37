"""Natural frequencies and modes of a constrained rigid–flexible system linearised about a static state.

About an equilibrium (q*, λ*) of r(q, λ) = g(q) − Q(q, 0) − Φ(q)ᵀλ − τ = 0, φ(q) = 0, small motions
q = q* + x obey

    M(q*) ẍ + K x − Φᵀ δλ = 0,   Φ x = 0,   K = ∂r/∂q at (q*, λ*)                          [DE-112, DE-113]

with K the tangent stiffness: the flexible bodies' material and geometric stiffness under their preload, the follower
loads' and force elements' stiffness, and, for the joint coordinates, the joint rows' Jacobian (exact, or central
differences where a term has no exact derivative), which includes the constraint Hessian term −∂(Φᵀλ*)/∂q (a pendulum's
gravity stiffness comes from its constraint force). Modes x with Φ x = 0 solve K x = ω² M x; a zero ω² is a rigid-body
mode.

- Rigid-only systems: with C an orthonormal basis of ker Φ (the rank-revealing SVD of
  :func:`flexbody.dynamics.projection.nullspace_basis`), CᵀKC y = ω² CᵀMC y by LAPACK (symmetric).
- With flexible bodies: shift-invert Lanczos (ARPACK through :func:`scipy.sparse.linalg.eigsh`) on the
  operator x ↦ (K − σM)⁻¹_Φ M x, where (K − σM)⁻¹_Φ b solves the saddle point [[K − σM, Φᵀ], [Φ, 0]][x; y] =
  [b; 0] with :class:`~flexbody.linalg.saddle_point.SaddlePointSolver` (sparse; no dense n × n matrix). The
  shift σ < 0 keeps K − σM positive definite on ker Φ when K is (rigid-body modes included); the start
  vector is fixed, so runs are repeatable.

Modes are scaled to unit modal mass, xᵀMx = 1 [kg·m² per coordinate unit²].
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import scipy.linalg as la
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ..dynamics.projection import nullspace_basis
from ..errors import ConvergenceError, FlexbodyError, StateError
from ..io.results import Results
from ..linalg.saddle_point import SaddlePointSolver
from ..system.description import as_assembled, refuse_contacts
from ..threads import one_blas_thread
from .constrained_statics import StaticEquations, static_equilibrium

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from ..system import State, System
    from ..system.assembled import AssembledSystem
    from .constrained_statics import Equilibrium

__all__ = ["Modes", "modal_analysis"]


@dataclass(frozen=True)
class Modes:
    """Natural modes of a linearised system.

    Attributes
    ----------
    frequencies : ndarray (k,)
        Natural frequencies f = ω/2π [Hz], ascending; negative where ω² < 0 (an unstable state: −√(−ω²)/2π).
    eigenvalues : ndarray (k,)
        ω² [1/s²].
    shapes : ndarray (k, n)
        Mode shapes x (Φ x = 0), unit modal mass xᵀMx = 1.
    q : ndarray (n,)
        The state linearised about [m, rad]; lam : ndarray (m,), its multipliers.
    n_rigid_body : int
        Modes with abs(ω²) below ``zero_tol`` (rigid-body and mechanism modes).
    system : AssembledSystem
    metadata : dict
        Method, shift, static residual of the state, tolerances.
    """

    frequencies: np.ndarray
    eigenvalues: np.ndarray
    shapes: np.ndarray
    q: np.ndarray
    lam: np.ndarray
    n_rigid_body: int
    system: AssembledSystem = field(repr=False)
    metadata: dict = field(default_factory=dict)

    def animation(self, mode: int, amplitude: float | None = None, frames: int = 24) -> Results:
        """One period of mode ``mode`` as :class:`Results` of kind "modal": q(t) = q* + a sin(2πt) x at
        ``frames`` phases t = 0, 1/frames, … (in periods; the last one before the period closes, so a looping
        animation repeats no frame). ``amplitude`` a [m or rad] of the largest coordinate change (default 5 %
        of the largest extent of the flexible bodies, or 0.2 rad without them)."""
        if not 0 <= mode < len(self.frequencies):
            raise FlexbodyError(f"Modes.animation: mode {mode} is not one of the {len(self.frequencies)} computed")
        x = self.shapes[mode]
        a = self._default_amplitude() if amplitude is None else float(amplitude)
        t = np.arange(int(frames)) / int(frames)
        q = self.q[None, :] + (a / np.max(np.abs(x))) * np.sin(2 * np.pi * t)[:, None] * x[None, :]
        asm = self.system
        return Results(
            kind="modal",
            times=t,
            q=q,
            slices=asm.slices.by_name(),
            iterations=[0] * len(t),
            residuals=[[] for _ in t],
            reference=np.array(asm.q0, dtype=float),
            system=asm,
            metadata={
                "mode": int(mode),
                "frequency_hz": float(self.frequencies[mode]),
                "amplitude": a,
                "time_unit": "period",
            },
        )

    def _default_amplitude(self) -> float:
        asm = self.system
        if not asm.bodies:
            return 0.2
        extent = max(float(np.ptp(b.mesh.points, axis=0).max()) for b in asm.bodies)
        return 0.05 * extent

    def write(self, directory, modes=None, amplitude: float | None = None, frames: int = 24):
        """Write each mode's animation as a results directory ``mode_NN`` (ParaView series, ``flexbody view``)
        under ``directory``, and ``modes.csv`` (mode, frequency [Hz], ω² [1/s²]); returns the directory."""
        from pathlib import Path

        from ..io.export import write_results

        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        for k in range(len(self.frequencies)) if modes is None else modes:
            write_results(directory / f"mode_{k:02d}", self.animation(k, amplitude, frames))
        rows = "\n".join(f"{k},{f:.12e},{w:.12e}" for k, (f, w) in enumerate(zip(self.frequencies, self.eigenvalues)))
        (directory / "modes.csv").write_text("mode,frequency_hz,omega_squared\n" + rows + "\n")
        return directory


@one_blas_thread
def modal_analysis(
    model: System | AssembledSystem,
    state: Equilibrium | State | ArrayLike | None = None,
    n_modes: int = 10,
    *,
    tau: ArrayLike | None = None,
    t: float = 0.0,
    shift: float | None = None,
    zero_tol: float = 1e-8,
    load_steps: int = 1,
) -> Modes:
    """The lowest ``n_modes`` natural frequencies and modes of ``model`` linearised about a state.

    Parameters
    ----------
    model : System or AssembledSystem
    state : None, Equilibrium, array (n,) or State
        None: the static equilibrium under the applied loads, gravity and ``tau`` (so the preload's geometric
        stiffness is included); an Equilibrium (``fb.solvers.static_equilibrium``, ``fb.holding_inputs``): that
        one, with its multipliers; otherwise the coordinates q [m, rad] to linearise about, with the multipliers
        that balance the static forces there in the least-squares sense (``metadata["static_residual"]``
        says how far from equilibrium q is).
    n_modes : int
        How many of the lowest modes; when the system has fewer degrees of freedom (at most dof − 1 for systems
        with flexible bodies) the ones it has, with a WARNING (``metadata["n_modes_asked"]``).
    tau : array (n,), optional
        Constant generalized forces [N, N·m] (e.g. holding torques).
    shift : float, optional
        σ [1/s²] of the shift-invert (flexible systems): modes with ω² nearest σ come first; default a small
        negative value, −1e-6 max diag K / max diag M.
    zero_tol : float
        abs(ω²) below zero_tol · max(1, max abs(ω²)) counts as a rigid-body mode.
    load_steps : int
        Load steps of the static solve (state None).

    Raises
    ------
    FlexbodyError
        Bad n_modes or state; a system with velocity-level rows (they constrain no positions).
    ConvergenceError
        No static equilibrium, or the eigensolver did not converge.
    """
    asm = as_assembled(model, "modal_analysis")
    refuse_contacts(asm, "modal_analysis")
    if not isinstance(n_modes, (int, np.integer)) or n_modes < 1:
        raise FlexbodyError(f"modal_analysis: n_modes must be a positive integer, got {n_modes!r}")
    tau_vec = np.zeros(asm.n_dofs) if tau is None else np.asarray(tau, dtype=float)
    q, lam, residual = linearisation_point(asm, state, tau_vec, t, load_steps)
    statics = StaticEquations(asm, t)
    ws = asm.workspace(t, q)
    K_r, K_f = statics.tangent(q, lam, 1.0, ws)
    M = ws.mass_matrix()
    Phi = ws.constraint_rows()[1]
    if not asm.sparse:
        values, shapes, meta = _dense_modes(0.5 * (K_r + K_r.T), np.asarray(M), np.asarray(Phi), n_modes)
    else:
        values, shapes, meta = _sparse_modes(asm, K_r, K_f, M, Phi, n_modes, shift)
    scale = max(1.0, float(np.max(np.abs(values)))) if values.size else 1.0
    n_zero = int(np.count_nonzero(np.abs(values) < zero_tol * scale))
    freqs = np.sign(values) * np.sqrt(np.abs(values)) / (2.0 * np.pi)
    meta.update(static_residual=residual, zero_tol=zero_tol, t=float(t), n_modes_asked=int(n_modes))
    if values.size < n_modes:
        log.warning(
            "modal_analysis: %d modes asked, %d returned: the system has %d degrees of freedom (%s%s)",
            n_modes,
            values.size,
            meta.get("dof", values.size),
            meta.get("method", ""),
            "; shift-invert Lanczos gives at most dof − 1" if asm.sparse else "",
        )
    return Modes(freqs, values, shapes, q, lam, n_zero, asm, meta)


NOT_AT_REST = 1e-6
"""Static residual, relative to the largest static force at q (at least 1 N or N·m), above which a state given as
coordinates is reported as not an equilibrium."""


def linearisation_point(asm, state, tau, t, load_steps, who: str = "modal_analysis"):
    """(q, λ, static residual max|r| [N, N·m]) of the state to linearise about; a WARNING when coordinates given
    as the state are not an equilibrium (the residual left by the least-squares multipliers above
    :data:`NOT_AT_REST`), naming the coordinate of the largest residual."""
    if state is None:
        state = static_equilibrium(asm, tau, t=t, load_steps=load_steps)
    if hasattr(state, "lam") and hasattr(state, "residual"):  # an Equilibrium (static_equilibrium, holding_inputs)
        return (
            np.array(state.q, dtype=float),
            np.array(state.lam[: asm.n_constraints], dtype=float),
            float(state.residual),
        )
    q = np.array(getattr(state, "q", state), dtype=float)
    if q.shape != (asm.n_dofs,) or not np.all(np.isfinite(q)):
        raise StateError(f"{who}: state must be {asm.n_dofs} finite coordinates, got shape {q.shape}")
    statics = StaticEquations(asm, t)
    r0, _, Phi = statics.residual(q, np.zeros(asm.n_constraints), tau, 1.0)
    Phi = sp.csr_matrix(Phi)
    gram = (Phi @ Phi.T).toarray()  # (m, m): least squares Φᵀλ ≈ r₀ without n × n
    lam = np.linalg.lstsq(gram, Phi @ r0, rcond=None)[0] if Phi.shape[0] else np.zeros(0)
    residual = r0 - Phi.T @ lam if Phi.shape[0] else r0
    worst = float(np.max(np.abs(residual))) if residual.size else 0.0
    if worst > NOT_AT_REST * max(1.0, float(np.max(np.abs(r0)))):
        i = int(np.argmax(np.abs(residual)))
        log.warning(
            "%s: the state given is not a static equilibrium: the static forces leave max|r| = %.3e at %r "
            "(metadata['static_residual']); the linearisation is about a state that does not stay at rest",
            who,
            worst,
            asm.coordinate_labels[i],
        )
    return q, lam, worst


def _dense_modes(K, M, Phi, n_modes):
    """ω² and unit-modal-mass shapes on ker Φ by LAPACK (rigid-only systems)."""
    C = nullspace_basis(Phi)
    if not C.shape[1]:
        return np.zeros(0), np.zeros((0, K.shape[0])), {"method": "dense null space", "dof": 0}
    Kc, Mc = C.T @ K @ C, C.T @ M @ C
    values, Y = la.eigh(0.5 * (Kc + Kc.T), 0.5 * (Mc + Mc.T))
    k = min(n_modes, values.size)
    shapes = (C @ Y[:, :k]).T  # eigh normalises Yᵀ Mc Y = I
    return values[:k], shapes, {"method": "dense null space (LAPACK eigh)", "dof": int(C.shape[1])}


def _sparse_modes(asm, K_r, K_f, M, Phi, n_modes, shift):
    """ω² and shapes by shift-invert Lanczos with the saddle-point solve (flexible systems)."""
    from scipy.sparse.linalg import ArpackNoConvergence, LinearOperator, eigsh

    n, n_r = asm.n_dofs, asm.n_rigid
    M_r = M.rigid_block()
    M_f = asm.flexible.mass.matrix
    M_all = sp.block_diag(([sp.csr_matrix(M_r)] if n_r else []) + [M_f], format="csr")
    K_all = sp.block_diag(([sp.csr_matrix(K_r)] if n_r else []) + [K_f], format="csr")
    if shift is None:
        shift = -1e-6 * float(np.abs(K_all.diagonal()).max()) / float(np.abs(M_all.diagonal()).max())
    solver = SaddlePointSolver(n_r)
    solver.factor(K_r - shift * M_r, (K_f - shift * M_f).tocsr(), sp.csr_matrix(Phi))
    zeros = np.zeros(Phi.shape[0])

    def op_inv(b):
        return solver.solve(np.asarray(b, dtype=float).ravel(), zeros)[0]

    dof = n - _rank(Phi)
    k = min(n_modes, max(1, dof - 1))
    v0 = op_inv(M_all @ np.random.default_rng(0).standard_normal(n))  # a fixed start on ker Φ
    try:
        values, X = eigsh(
            LinearOperator((n, n), matvec=lambda x: K_all @ x, dtype=float),
            k=k,
            M=M_all,
            sigma=shift,
            which="LM",
            OPinv=LinearOperator((n, n), matvec=op_inv, dtype=float),
            v0=v0,
        )
    except ArpackNoConvergence as exc:
        raise ConvergenceError(f"modal_analysis: the eigensolver did not converge ({exc})", []) from None
    order = np.argsort(values)
    values, X = values[order], X[:, order]
    X = X / np.sqrt(np.einsum("ij,ij->j", X, M_all @ X))
    return (
        values,
        X.T,
        {
            "method": "shift-invert Lanczos on the saddle point (ARPACK)",
            "shift": float(shift),
            "dof": int(dof),
            "linear_solver": solver.method,
        },
    )


def _rank(Phi) -> int:
    """Rank of Φ (m, n) from its Gram matrix ΦΦᵀ (m, m) (no dense m × n copy)."""
    if not Phi.shape[0]:
        return 0
    Phi = sp.csr_matrix(Phi)
    return int(np.linalg.matrix_rank((Phi @ Phi.T).toarray(), hermitian=True))
