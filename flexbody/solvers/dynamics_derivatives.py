"""Exact derivatives of the constrained forward dynamics of a rigid–flexible system with respect to q, v and τ
(#36 item 3; Pinocchio's ``computeConstraintDynamicsDerivatives`` for rigid trees).

Forward dynamics solves r = M a + h(q, v) − Q(t, q, v) − Φ(q)ᵀλ − τ = 0 and c = Φ(q) a + bias(q, v) = 0 [DE-4, DE-7].
Differentiating both at the solution (a, λ) in a direction δx of x ∈ {q, v, τ}:

    M δa − Φᵀ δλ = F δx,     Φ δa = B δx,     F = −∂r/∂x (I for τ),   B = −∂c/∂x (0 for τ),

with ∂r/∂q = ∂(M a + h)/∂q − ∂Q/∂q − ∂(Φᵀλ)/∂q and ∂r/∂v = ∂h/∂v − ∂Q/∂v — the Jacobians the implicit solvers use,
exact (:class:`~flexbody.solvers.constrained_equations.EquationResidual`: the trees' analytic derivatives, the joint
constraints' Hessians, the element tangent and damping matrices, the force elements' Jacobians) — and ∂c/∂q, ∂c/∂v
from the rows' ``acceleration_derivatives`` (:mod:`flexbody.constraints.row_derivatives`). Both systems are the
forward problem with other right-hand sides, solved on one factor of M:

- ``"multiplier"``, ``"gauss"`` (rows independent): δλ = S⁻¹(B − Φ M⁻¹F), δa = M⁻¹(F + Φᵀδλ), S = ΦM⁻¹Φᵀ [DE-34];
- ``"projection"``, ``"nullspace"`` (rows possibly redundant, minimum-norm λ [AG Remark 4]): with the thin SVD
  Φ = U Σ Vᵀ of rank r, M δa − F = V μ and Vᵀδa = Σ⁻¹UᵀB − Σ⁻²Vᵀ ∂(Φᵀρ)/∂q δq [AG-16, AG-21] (as
  :func:`~flexbody.dynamics.projection.projection_sparse`; ρ = Φa + bias, the rows' misfit normal to im Φ, is zero on
  the constraint manifold and with independent rows), and the derivative of λ = Φ⁺ᵀ(M a + h − Q − τ):
  δλ = Φ⁺ᵀ(M δa − F δx) + (I − ΦΦ⁺) ∂(Φ w)/∂q δx, w = Φ⁺λ (the second term only with redundant rows, under q).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ..dynamics import forward
from ..dynamics.results import METHODS
from ..dynamics.schur import schur_factor
from ..errors import FlexbodyError, ModelError
from ..fem.loads import BodyForce
from ..linalg.rank import constraint_svd, dense_jacobian, resolve_tolerances
from ..linalg.validation import MassSolver, potrs
from ..linalg.validation import as_mass as _mass
from .constrained_equations import EquationResidual

if TYPE_CHECKING:
    from ..fem.flexible_body import FlexibleBody
    from ..system import AssembledSystem, State, System

__all__ = [
    "ForwardDerivatives",
    "forward_derivatives",
    "derivative_blockers",
    "parameter_residual",
    "young_modulus",
    "PARAMETERS",
]


@dataclass(frozen=True)
class ForwardDerivatives:
    """The constrained forward dynamics at one state and its exact derivatives (n coordinates, m rows).

    a (n,) accelerations; lam (m,) multipliers (minimum-norm with redundant rows), in the sign of
    :func:`flexbody.dynamics.forward`; da_dq, da_dv, da_dtau (n, n); dlam_dq, dlam_dv, dlam_dtau (m, n); ``method``;
    ``rank`` of Φ; with ``parameters`` (their labels, "body.young", …) da_dp (n, p) and dlam_dp (m, p). Units: those
    of a, λ over those of q, v, τ and the parameters.
    """

    a: np.ndarray
    lam: np.ndarray
    da_dq: np.ndarray
    da_dv: np.ndarray
    da_dtau: np.ndarray
    dlam_dq: np.ndarray
    dlam_dv: np.ndarray
    dlam_dtau: np.ndarray
    method: str
    rank: int
    da_dp: np.ndarray | None = None
    dlam_dp: np.ndarray | None = None
    parameters: tuple[str, ...] = ()


JOINT_ROWS = ("exact", "differences")
"""How the joint rows' Jacobians are formed: exactly (trees, constraints' Hessians, force elements' Jacobians), or by
central differences of the joint rows (:meth:`EquationResidual.rigid_tangent`, accurate to about 1e-10 relative), as
force elements on joints without exact Jacobians still need."""


def derivative_blockers(asm: AssembledSystem, joint_rows: str = "exact") -> list[str]:
    """What in the system has no derivative yet (empty when :func:`forward_derivatives` applies): constraints without
    ``acceleration_derivatives`` or the joint Hessian, force elements on nodes without exact Jacobians, and with
    ``joint_rows`` "exact" force elements on joints without exact Jacobians."""
    exact = joint_rows == "exact"
    out = [f"force element {f.name!r}" for f in asm.forces.elements if not f.exact_jacobians and (exact or f.bodies)]
    for c in asm.constraints:
        hessian = hasattr(c, "joint_hessian") and getattr(c, "has_joint_hessian", True)
        rates = hasattr(c, "acceleration_derivatives") and getattr(c, "has_acceleration_derivatives", True)
        if not (hessian and rates):
            out.append(f"constraint {c.name!r} ({type(c).__name__})")
    return out


def require_derivatives(who: str, asm: AssembledSystem, joint_rows: str, blockers_of=derivative_blockers) -> None:
    """FlexbodyError for a ``joint_rows`` not in :data:`JOINT_ROWS`, ModelError naming what has no derivative yet
    (``blockers_of(asm, joint_rows)``, :func:`derivative_blockers` by default) and, on the exact route, the advice."""
    if joint_rows not in JOINT_ROWS:
        raise FlexbodyError(f"{who}: joint_rows must be one of {JOINT_ROWS}, got {joint_rows!r}")
    blockers = blockers_of(asm, joint_rows)
    if blockers:
        advice = "" if joint_rows != "exact" else "; joint_rows='differences' takes joint forces without Jacobians"
        raise ModelError(f"{who}: no exact derivatives yet for {', '.join(blockers)}{advice}")


def forward_derivatives(
    model: System | AssembledSystem,
    state: State,
    tau: ArrayLike,
    method: str = "projection",
    *,
    rtol: float | None = None,
    atol: float | None = None,
    parameters: Sequence[tuple[FlexibleBody, str]] = (),
    joint_rows: str = "exact",
) -> ForwardDerivatives:
    """The constrained forward dynamics a(q, v, τ), λ(q, v, τ) of ``model`` (a System, assembled here, or an
    AssembledSystem) at ``state`` (t, q, v) and inputs ``tau`` (n,)
    [N or N·m] and their exact derivatives (module docstring), ``method`` one of
    :data:`~flexbody.dynamics.METHODS` with the meaning and tolerances of :func:`flexbody.dynamics.forward`.

    ``parameters``: (body, name) pairs of flexible bodies' constants to differentiate by too, name one of
    :data:`PARAMETERS`: "young" E [Pa] (every modulus of a built-in law scaled together, the Poisson ratio fixed:
    ∂k/∂E = k/E, damping stress included), "density" ρ₀ [kg/m³] (∂r/∂ρ = (M a − f_body)/ρ, f_body the body-force
    loads such as gravity) and "damping" β [s] (:meth:`~flexbody.FlexibleBody.viscous_force`); the rows do not
    depend on them (B = 0).

    ``joint_rows``: "exact", or "differences" for systems whose joint rows have no exact Jacobian yet (force
    elements on joints without one; :data:`JOINT_ROWS`).

    The derivatives are dense (n, n) by nature (M⁻¹ couples every coordinate), computed with one factor of M and n
    solves: meant for systems of up to a few thousand coordinates; the gradient of a cost of a run needs none of them
    (:func:`~flexbody.solvers.run_gradient.gradient` sweeps with sparse step matrices).

    Raises ModelError naming what has no exact derivative (:func:`derivative_blockers`), ConstraintError where
    forward dynamics raises (dependent rows under "multiplier" or "gauss").
    """
    asm = model.assemble() if hasattr(model, "assemble") else model
    if method not in METHODS:
        raise FlexbodyError(f"forward_derivatives: method must be one of {METHODS}, got {method!r}")
    require_derivatives("forward_derivatives", asm, joint_rows)
    rtol, atol = resolve_tolerances(rtol, atol)
    result = forward(asm, state, tau, method=method, rtol=rtol, atol=atol)
    a, lam = result.a, result.lam
    ws = asm.workspace(state.t, state.q, state.v)
    R_q, R_v = _residual_jacobians(asm, ws, a, lam, joint_rows)
    C_q, C_v = _row_rate_jacobians(asm, ws, a)
    _, Phi, _, _ = ws.constraint_rows()
    Phi = dense_jacobian(Phi) if Phi.shape[0] else np.zeros((0, asm.n_dofs))
    M, _, sparse = _mass(ws.mass_matrix())
    solver = MassSolver(M, sparse)
    n = asm.n_dofs
    rhs = {"q": (-R_q, -C_q), "v": (-R_v, -C_v), "tau": (np.eye(n), np.zeros((Phi.shape[0], n)))}
    if parameters:
        F_p = -parameters_residual(asm, ws, a, parameters)
        rhs["p"] = (F_p, np.zeros((Phi.shape[0], F_p.shape[1])))
    if method in ("multiplier", "gauss"):
        solved, rank = _schur_solutions(solver, Phi, rhs, rtol, atol, method), Phi.shape[0]
    else:
        solved, rank = _projection_solutions(solver, Phi, rhs, a, lam, ws, asm, rtol, atol)
    (da_q, dl_q), (da_v, dl_v), (da_t, dl_t) = solved["q"], solved["v"], solved["tau"]
    da_p, dl_p = solved.get("p", (None, None))
    labels = tuple(f"{body.name}.{name}" for body, name in parameters)
    return ForwardDerivatives(a, lam, da_q, da_v, da_t, dl_q, dl_v, dl_t, method, rank, da_p, dl_p, labels)


PARAMETERS = ("young", "density", "damping")
"""The flexible bodies' constants :func:`forward_derivatives` differentiates by."""


def young_modulus(material) -> float:
    """E [Pa] of a material's small-strain Lamé constants (λ₀, μ₀): μ₀(3λ₀ + 2μ₀)/(λ₀ + μ₀)."""
    lam0, mu0 = material.small_strain_lame
    return mu0 * (3.0 * lam0 + 2.0 * mu0) / (lam0 + mu0)


def parameters_residual(asm, ws, acc, parameters: Sequence[tuple[FlexibleBody, str]]) -> np.ndarray:
    """∂r/∂p (n, p) of the (body, name) ``parameters`` at the workspace ``ws`` and accelerations ``acc``
    (:func:`parameter_residual` for each)."""
    if not parameters:
        return np.zeros((asm.n_dofs, 0))
    return np.column_stack([parameter_residual(asm, ws, acc, body, name) for body, name in parameters])


def parameter_residual(asm, ws, acc, body, name: str) -> np.ndarray:
    """∂r/∂p (n,) of one flexible body's constant p (:func:`forward_derivatives`), nonzero on the body's columns."""
    bodies = asm.flexible.bodies if asm.sparse else []
    if not any(body is b for b in bodies):
        raise ModelError(f"forward_derivatives: {body!r} is not a flexible body of this system")
    if name not in PARAMETERS:
        raise ModelError(
            f"forward_derivatives: parameter of body {body.name!r} must be one of {PARAMETERS}, got {name!r}"
        )
    cols = ws.slice_of(body)
    q, v, out = ws.q[cols], ws.v[cols], np.zeros(asm.n_dofs)
    material = body.material
    if name == "young":
        if material.law is not None:
            raise ModelError(
                f"forward_derivatives: body {body.name!r} has a user law, whose constants need not scale with E"
            )
        out[cols] = body.internal_force(q, v) / young_modulus(material)  # k / E
    elif name == "density":
        weights = [load.force(q) for load in asm.flexible.loads if load.body is body and isinstance(load, BodyForce)]
        weight = np.sum(weights, axis=0) if weights else 0.0
        out[cols] = (body.mass_matrix() @ acc[cols] - weight) / material.density
    else:
        out[cols] = body.viscous_force(q, v)
    return out


def _residual_jacobians(asm, ws, a, lam, joint_rows: str = "exact") -> tuple[np.ndarray, np.ndarray]:
    """(∂r/∂q, ∂r/∂v) (n, n) at (q, v, a, λ): the joint and flexible blocks of the solvers' Jacobians
    (:meth:`EquationResidual.jacobian_blocks`) and what couples them (:meth:`EquationResidual.coupling_blocks`)."""
    residual = EquationResidual(asm, exact=joint_rows == "exact")
    if asm.n_rigid and joint_rows == "exact" and not residual.exact:
        raise ModelError("forward_derivatives: the joint rows of this system have no exact Jacobian")
    R_q, R_v, K_f, C_f = residual.jacobian_blocks(ws, a, lam)
    blocks = []
    for joint_block, flexible_block in ((R_q, K_f), (R_v, C_f)):
        full = np.zeros((asm.n_dofs, asm.n_dofs))
        full[: asm.n_rigid, : asm.n_rigid] = joint_block
        if flexible_block is not None:
            fs = asm.flexible.slice
            full[fs, fs] = flexible_block.toarray()
        blocks.append(full)
    for full, coupling in zip(blocks, residual.coupling_blocks(ws, lam)):
        if coupling is not None:
            np.add(full, coupling.toarray(), out=full)
    return blocks[0], blocks[1]


def _row_rate_jacobians(asm, ws, acc) -> tuple[np.ndarray, np.ndarray]:
    """(∂c/∂q, ∂c/∂v) (m, n) of the rows' accelerations c = Φa + bias at fixed a = ``acc``."""
    C_q, C_v = np.zeros((asm.n_constraints, asm.n_dofs)), np.zeros((asm.n_constraints, asm.n_dofs))
    for constraint, rows in zip(asm.constraints, asm.row_slices):
        part = constraint.acceleration_derivatives(ws, acc)
        if part is not None:
            cols, Cq, Cv = part
            C_q[rows, cols] += Cq
            C_v[rows, cols] += Cv
    return C_q, C_v


def row_velocity_jacobian(asm, ws) -> np.ndarray:
    """N = ∂(Φv + φ_t)/∂q (m, n) at fixed v at the workspace ``ws``: a position row's ½ ∂c/∂v (its Φ̇v = vᵀ∇²φ v is
    quadratic in v, with ∂(Φv)/∂q = vᵀ∇²φ), a velocity-level row's ``velocity_derivatives``."""
    N = 0.5 * _row_rate_jacobians(asm, ws, np.zeros(asm.n_dofs))[1]
    for constraint, rows in zip(asm.constraints, asm.row_slices):
        flags = np.asarray(getattr(constraint, "velocity_rows", ()), dtype=bool)
        if flags.any():
            cols, block = constraint.velocity_derivatives(ws)
            for r in np.flatnonzero(flags):
                N[rows.start + r] = 0.0
                N[rows.start + r, cols] = block[r]
    return N


def constraint_hessian(asm, ws, mu: np.ndarray) -> np.ndarray:
    """∂(Φᵀμ)/∂q (n, n) at fixed μ (m,): the constraints' Hessians on every column
    (:meth:`EquationResidual.constraint_hessians`; rows linear in the nodal coordinates have none there)."""
    H = np.zeros((asm.n_dofs, asm.n_dofs))
    for cols, block in EquationResidual(asm).constraint_hessians(ws, mu):
        H[np.ix_(cols, cols)] += block
    return H


def _schur_solutions(solver, Phi, rhs, rtol, atol, method) -> dict:
    """δa, δλ for each right-hand side (F, B) with independent rows (module docstring)."""
    Y = solver.solve(Phi.T) if Phi.shape[0] else np.zeros((Phi.shape[1], 0))
    factor = schur_factor(Phi @ Y, Phi, rtol, atol, method) if Phi.shape[0] else None
    out = {}
    for key, (F, B) in rhs.items():
        A_u = solver.solve(F)
        if factor is None:
            out[key] = (A_u, np.zeros((0, F.shape[1])))
            continue
        dlam = potrs(factor, B - Phi @ A_u, lower=1)[0]
        out[key] = (A_u + Y @ dlam, dlam)
    return out


def _projection_solutions(solver, Phi, rhs, a, lam, ws, asm, rtol, atol) -> tuple[dict, int]:
    """δa, minimum-norm δλ for each right-hand side (F, B), rows possibly redundant (module docstring)."""
    svd, _ = constraint_svd(Phi, rtol, atol)
    Vr, U, s = svd.Vt.T, svd.U, svd.s
    Y = solver.solve(Vr) if svd.rank else np.zeros((Phi.shape[1], 0))
    G = Vr.T @ Y
    redundant = svd.rank < Phi.shape[0]
    if redundant:  # rows that disagree off the constraint manifold: ρ = Φa + bias ≠ 0, normal to im Φ
        _, _, bias, _ = ws.constraint_rows()
        misfit = constraint_hessian(asm, ws, Phi @ a + bias)
    out = {}
    for key, (F, B) in rhs.items():
        A_u = solver.solve(F)
        if not svd.rank:
            out[key] = (A_u, np.zeros((Phi.shape[0], F.shape[1])))
            continue
        target = (U.T @ B) / s[:, None]  # Vᵀδa = Σ⁻¹UᵀB − Σ⁻²Vᵀ ∂(Φᵀρ)/∂q δq
        if redundant and key == "q":
            target -= (Vr.T @ misfit) / (s * s)[:, None]
        mu = np.linalg.solve(G, target - Vr.T @ A_u)
        dlam = U @ (mu / s[:, None])  # Φ⁺ᵀ(M δa − F) = U Σ⁻¹ μ
        if redundant and key == "q":
            w = Vr @ ((U.T @ lam) / s)  # w = Φ⁺λ
            turn = _row_rate_jacobians(asm, ws, w)[0] - _row_rate_jacobians(asm, ws, np.zeros(asm.n_dofs))[0]
            dlam += turn - U @ (U.T @ turn)
        out[key] = (A_u + Y @ mu, dlam)
    return out, svd.rank
