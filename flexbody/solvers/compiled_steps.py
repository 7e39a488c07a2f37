"""The arrays of the one generalized-α Newton kernel (:func:`~flexbody.solvers.compiled_alpha.alpha_iterations`) for a
model and, for a system whose terms are all compiled, its steps and batches of steps: :class:`CompiledSteps` holds
the kernel's work arrays and forms the factor of the dense iteration matrix with LAPACK (Cholesky of the symmetric
part, LU with partial pivoting when that is not positive definite; the Schur complement by a pseudo-inverse, rcond
1e-12, so redundant rows are allowed), as :class:`~flexbody.linalg.saddle_point.SaddlePointSolver` factors a dense
block; :class:`KernelArguments` gives empty arrays of the same types for a model whose terms the caller computes.
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np
import scipy.linalg

from .compiled_alpha import (
    CHOLESKY,
    LU,
    NEED_FACTOR,
    OK,
    PSEUDO_INVERSE_RCOND,
    RECORDED,
    SINGULAR,
    alpha_iterations,
    alpha_run,
    new_loop,
)
from .step_charts import step_chart_arrays


class Batch(NamedTuple):
    """What :meth:`CompiledSteps.run` did: ``status`` (OK: every step accepted; else that of the step ``accepted``,
    which was not), the ``rows`` written (t, q, v, q̈, λ, Φᵀλ, :data:`RECORDED`), the Newton iterations of the
    accepted steps, the run's easy-step count, step of the kept factor and input work after them, the
    factorizations in all and the point (t, q, v, q̈, λ) of the last one; of the step not accepted: its
    iterations, factorizations and last iterate (q, v, q̈, a, λ)."""

    status: int
    accepted: int
    rows: tuple
    iterations: int
    easy: int
    factor_dt: float | None
    work: float
    factorizations: int
    point: tuple | None
    failed_iterations: int
    failed_factorizations: int
    iterate: tuple


class KernelArguments(NamedTuple):
    """The model arrays of :func:`alpha_iterations`: the program (ints, floats, support, bodies, body_floats), its
    drive, the terms' work arrays, the factor arrays and the matrix arrays; :meth:`python` gives empty ones of the
    same types for a model without compiled terms (one compiled kernel for both)."""

    program: tuple
    drive: np.ndarray
    work: tuple
    factor: tuple
    matrix: tuple

    @classmethod
    def python(cls, n: int) -> KernelArguments:
        """Arguments for a model whose terms and corrections the caller computes."""
        ints, floats = np.zeros(0, np.int64), np.zeros(0)
        square, vector = np.zeros((0, 0)), np.zeros(0)
        return cls(
            (ints, floats, np.zeros((0, 0), np.int64), np.zeros((0, 4), np.int64), floats),
            np.zeros((0, 3)),
            (square, vector, vector, square, vector, vector, vector),
            (square, ints, np.zeros(1, np.int64), square, square, square),
            (square, square),
        )


class CompiledSteps:
    """The arrays of :func:`alpha_iterations` for one assembled system with a program, and the factor of its
    iteration matrix, formed with LAPACK as :class:`~flexbody.linalg.saddle_point.SaddlePointSolver` forms that
    of a dense block: Cholesky of the symmetric part, or LU (partial pivoting) of the matrix when that is not
    positive definite; W = A⁻¹Φᵀ and the pseudo-inverse of S = Φ W (rcond 1e-12). :meth:`step` and
    :meth:`factor` are called by the generalized-α stepper."""

    def __init__(self, asm, coefficients: np.ndarray, scales: np.ndarray, max_iterations: int):
        p = asm.program
        self.program = (p.ints, p.floats, p.support, p.bodies, p.body_floats)
        self.drive, self.has_drivers = p.drive, bool(p.drivers)
        n, m = asm.n_dofs, asm.n_constraints
        self.n, self.m = n, m
        self.coefficients = np.asarray(coefficients, dtype=float)
        self.scales = np.asarray(scales, dtype=float)
        self.max_iterations = int(max_iterations)
        self.work = (
            np.empty((n, n)),
            np.empty(n),
            np.empty(m),
            np.empty((m, n)),
            np.empty(m),
            np.empty(m),
            np.empty(2),
        )
        self.factor_arrays = (
            np.empty((n, n)),
            np.zeros(n, dtype=np.int64),
            np.zeros(1, dtype=np.int64),
            np.empty((n, m)),
            np.empty((m, n)),
            np.empty((m, m)),
        )
        self.matrix = (np.empty((n, n)), np.empty((m, n)))  # A and Φ of a new iteration matrix
        self.sizes = np.empty(self.max_iterations)
        self.rotations = np.asarray(asm.rotation_vectors, dtype=np.int64)  # starts of the rotation vectors in q

    @classmethod
    def available(cls, asm) -> bool:
        """Whether ``asm``'s steps can be compiled: its terms have a program whose every row is compiled (no
        constraint evaluated in Python, so no velocity-level rows) and it has no force elements."""
        program = getattr(asm, "program", None)
        return program is not None and not program.python_rows and not asm.forces

    @property
    def arguments(self) -> KernelArguments:
        """The model arrays of :func:`alpha_iterations` (the drive is evaluated per step)."""
        return KernelArguments(self.program, np.zeros((0, 3)), self.work, self.factor_arrays, self.matrix)

    def run(self, times, dts, drives, record, state: tuple, *, tau, tau_eff, factor_dt, easy: int, work: float):
        """Steps ending at ``times`` (K,) by :func:`alpha_run` from ``state`` = (q, v, q̈, a, λ) (updated in place to
        the last accepted step), factoring where it asks; ``factor_dt`` the step of the kept factor (None: none),
        ``easy`` and ``work`` the run's easy-step count and input work so far. Returns a :class:`Batch`."""
        n, m, count = self.n, self.m, len(times)
        out = tuple(np.empty_like(x) for x in state)
        loop = np.zeros(7)
        step = (np.empty(n), np.empty(m))
        counters = np.array(
            [0.0, 0.0, 0.0, float(easy), np.nan if factor_dt is None else float(factor_dt), float(work), 0.0, 0.0]
        )
        end_work = (np.empty((n, n)), np.empty(n), np.empty(m), np.empty((m, n)), np.empty(m), np.empty(m), np.empty(2))
        rows = (
            np.empty(count),
            np.empty((count, n)),
            np.empty((count, n)),
            np.empty((count, n)),
            np.empty((count, m)),
            np.empty((count, n)),
            np.empty((count, len(RECORDED))),
        )
        factors, point = 0, None
        local = step_chart_arrays(n)  # the step's iterate in its chart, kept while the caller factors
        while True:
            status = alpha_run(
                self.program,
                drives,
                times,
                dts,
                record,
                state,
                out,
                tau,
                tau_eff,
                self.coefficients,
                self.scales,
                self.max_iterations,
                loop,
                self.work,
                end_work,
                self.factor_arrays,
                self.matrix,
                self.sizes,
                counters,
                rows,
                step,
                self.rotations,
                local,
            )
            if status != NEED_FACTOR:
                break
            status = self.factor_matrix()
            if status != OK:
                break
            q, v, qdd, _, lam = out
            j = int(counters[0])
            factors, point = factors + 1, (float(times[j]), q.copy(), v.copy(), qdd.copy(), lam.copy())
            loop[2], loop[3], counters[7] = 0.0, 1.0, counters[7] + 1.0
        failed = status != OK  # the step under way was not accepted
        return Batch(
            status,
            int(counters[0]),
            tuple(x[: int(counters[1])] for x in rows),
            int(counters[2]),
            int(counters[3]),
            None if np.isnan(counters[4]) else float(counters[4]),
            float(counters[5]),
            factors,
            point,
            int(loop[0]) if failed else 0,
            int(counters[7]) if failed else 0,
            out,
        )

    def drives(self, times) -> np.ndarray:
        """(K, m, 3): the drivers' f, ḟ, f̈ at each of ``times`` (K,), as :meth:`step` evaluates them."""
        if not self.has_drivers:
            return np.zeros((len(times), self.m, 3))
        return np.stack([self.drive(t) for t in times])

    def factor(self, t: float, at: tuple, dt: float) -> int:
        """Form and factor the iteration matrix of step dt at t and ``at`` = (q, v, q̈, λ); the status."""
        q, v, qdd, lam = at
        point = tuple(np.array(x, dtype=float) for x in (q, v, qdd, qdd, lam))
        loop = new_loop(True)
        loop[4] = 0.0  # no predictor: the matrix at ``point``
        step = (np.empty(self.n), np.empty(self.m))
        status = alpha_iterations(
            self.program,
            True,
            self.drive(t),
            point,
            np.zeros(self.n),
            float(dt),
            self.coefficients,
            self.scales,
            self.max_iterations,
            loop,
            self.work,
            self.factor_arrays,
            self.matrix,
            point,
            self.sizes,
            step,
            self.rotations,
            step_chart_arrays(self.n),
        )
        return self.factor_matrix() if status == NEED_FACTOR else status

    def factor_matrix(self) -> int:
        """Factor the saddle point of the matrix (A, Φ) the kernel left in ``matrix``; the status."""
        F, piv, kind, W, G, S_pinv = self.factor_arrays
        A, G[:] = self.matrix
        try:
            F[:] = np.linalg.cholesky(0.5 * (A + A.T))
            kind[0] = CHOLESKY
            W[:] = scipy.linalg.cho_solve((F, True), G.T)
        except np.linalg.LinAlgError:  # not positive definite: LU of A itself
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)  # an exactly singular A: refused below
                lu, pivots = scipy.linalg.lu_factor(A, check_finite=False)
            if not np.all(np.isfinite(lu)) or np.any(np.diag(lu) == 0.0):
                return SINGULAR
            F[:], piv[:], kind[0] = lu, pivots, LU
            W[:] = scipy.linalg.lu_solve((lu, pivots), G.T, check_finite=False)
        if self.m:
            S_pinv[:] = np.linalg.pinv(G @ W, rcond=PSEUDO_INVERSE_RCOND)
        return OK
