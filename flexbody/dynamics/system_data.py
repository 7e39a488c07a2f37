"""Constrained forward dynamics of a compiled system on a data made once, in the manner of Pinocchio's
``constraintDynamics(model, data, q, v, τ, …)``: the :class:`~flexbody.system.AssembledSystem` is the model, a
:class:`SystemData` made once for it holds the terms' and the result's arrays, and

    data = SystemData(model)        # once
    a = constraint_dynamics(model, data, t, q, v, tau, method="multiplier")

solves τ = M a + h − Φᵀλ, Φ a + bias = 0 [DE-4, DE-7] at (t, q, v) into ``data.a``, ``data.constraint_force`` and
``data.lam``, with the terms in ``data.M``, ``data.h``, ``data.Phi``, ``data.bias``, … (overwritten by the next call:
copy what you keep, as with :class:`~flexbody.rigid.TreeData`).

A call is the two kernels every other route runs, on the data's arrays: the system's
:class:`~flexbody.system.joint_program.JointProgram` (M, h, the rows) and the dense kernel of
:func:`~flexbody.dynamics.forward` for the method (:mod:`flexbody.dynamics.compiled`); nothing else is made. This
is the form for loops over many states of one system (rollouts, sampling, benchmarks); :func:`forward` on a state's
:class:`~flexbody.system.workspace.Workspace` gives the same numbers where the state's other terms are wanted too.

Wherever the kernels decline — q, v or τ not finite or of the wrong size, a singular or nearly singular ΦM⁻¹Φᵀ,
Φ of uncertified rank — the call takes the reference route (:func:`forward` on the state's workspace), which
decides, raises the error naming the culprit, or returns the minimum-norm multipliers of redundant rows
(``data.lam_unique`` False), and the data holds its result.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ..errors import ModelError
from ..linalg.rank import DEFAULT_ATOL, DEFAULT_RTOL, resolve_tolerances
from ..system.joint_program import OK, output_offsets
from .compiled import FAST_OK, forward_into
from .forward_dynamics import forward
from .results import ForwardResult, check_choices

if TYPE_CHECKING:
    from ..system import AssembledSystem
    from ..system.workspace import Workspace

__all__ = ["SystemData", "constraint_dynamics"]

_FLOAT64 = np.dtype(np.float64)


class SystemData:
    """Work and output arrays of :func:`constraint_dynamics` for one assembled system (Pinocchio's ``Data``): made
    once, passed to every call, overwritten by each.

    Parameters
    ----------
    model : AssembledSystem
        A system whose terms are compiled (:attr:`AssembledSystem.program`): rigid trees and reduced bodies, every
        constraint of a kind with compiled rows, no force elements. Others are refused (ModelError); use
        :func:`forward` on ``model.workspace(t, q, v)`` for them.

    Attributes
    ----------
    model : AssembledSystem
        The system this data was made for.
    M : ndarray (n, n)
        Mass matrix [kg, kg m², kg m] at the last call's q (read-only view, as are the other terms).
    h : ndarray (n,)
        h = b + g [N, N m].
    Phi : ndarray (m, n)
        Constraint Jacobian Φ = ∂φ/∂q.
    bias : ndarray (m,)
        Acceleration bias, Φ a + bias = 0.
    phi, phi_t : ndarray (m,)
        Constraint values φ(q, t) and rates ∂φ/∂t.
    energy : ndarray (2,)
        Kinetic and potential energy [J].
    a : ndarray (n,)
        Accelerations of the last call [m/s², rad/s²].
    constraint_force : ndarray (n,)
        Φᵀλ = M a + h − τ [N, N m].
    lam : ndarray (m,)
        Multipliers (the minimum-norm ones where Φ is rank-deficient).
    lam_unique : bool
        False when the last call found Φ rank-deficient.
    rank : int
        Numerical rank of Φ in the last call.
    """

    def __init__(self, model: AssembledSystem):
        program = getattr(model, "program", None)
        if program is None:
            raise ModelError(
                "SystemData: the system's terms are not compiled (it has flexible bodies, or trees with different "
                "gravity); use forward(model, model.workspace(t, q, v), tau)"
            )
        if program.python_rows:
            names = ", ".join(repr(c.name) for c, _ in program.python_rows)
            raise ModelError(
                f"SystemData: constraints {names} have no compiled rows; "
                "use forward(model, model.workspace(t, q, v), tau)"
            )
        if model.forces:
            raise ModelError(
                "SystemData: the system has force elements; use forward(model, model.workspace(t, q, v), tau)"
            )
        self.model, self._program = model, program
        n, m = program.n, program.m
        self._terms = np.empty(output_offsets(n, m)[-1])  # written by the terms' kernel
        self._out = np.empty(2 * n + m)  # a, Φᵀλ, λ, written by the forward kernel
        viewed = self._terms.view()
        viewed.flags.writeable = False  # the forward kernels are compiled for read-only terms (a workspace's)
        self.M, self.h, self.phi, self.Phi, self.bias, self.phi_t, self.energy = program.views(viewed)
        self.a, self.constraint_force, self.lam = self._out[:n], self._out[n : 2 * n], self._out[2 * n :]
        self.lam_unique, self.rank = True, m

    def __repr__(self) -> str:
        return f"SystemData({self._program.n} coordinates, {self._program.m} constraint rows)"

    def _keep(self, result: ForwardResult, ws: Workspace) -> None:
        """Hold ``result`` (a :class:`ForwardResult`) and the terms of the workspace ``ws`` of the reference route in
        the data's arrays."""
        terms = ws.terms()
        values = (terms.M, terms.h, terms.phi, terms.Phi, terms.bias, terms.phi_t, ws.energy())
        for target, value in zip(self._program.views(self._terms), values):
            target[...] = value
        self.a[:], self.constraint_force[:], self.lam[:] = result.a, result.constraint_force, result.lam
        self.lam_unique, self.rank = result.lam_unique, result.rank


def constraint_dynamics(
    model: AssembledSystem,
    data: SystemData,
    t: float,
    q: ArrayLike,
    v: ArrayLike,
    tau: ArrayLike,
    *,
    method: str = "multiplier",
    rtol: float | None = None,
    atol: float | None = None,
    inertia: str = "Mc",
    gamma: float | None = None,
) -> np.ndarray:
    """Constrained forward dynamics at (t [s], q (n,), v (n,)) under τ (n,) [N, N m] into ``data``; returns
    ``data.a`` (n,) [m/s², rad/s²] (module docstring). ``method``, ``rtol``, ``atol``, ``inertia`` and ``gamma``
    are those of :func:`forward`, with which the result agrees.

    Raises
    ------
    ModelError
        ``data`` was made for another system.
    StateError, ConstraintError, FlexbodyError
        As :func:`forward`: bad q, v or τ (naming the coordinate), a singular ΦM⁻¹Φᵀ for "multiplier"/"gauss", an
        unknown method or inertia kind.
    """
    if data.model is not model:
        raise ModelError("constraint_dynamics: this SystemData was made for another system; make one for this one")
    check_choices(method, inertia)
    program = data._program
    q, v, tau = (_vector(model, name, x, program.n) for name, x in (("q", q), ("v", v), ("tau", tau)))
    if rtol is None and atol is None:
        rtol, atol = DEFAULT_RTOL, DEFAULT_ATOL
    else:
        rtol, atol = resolve_tolerances(rtol, atol)
    if _compiled(program, data, t, q, v, tau, method, rtol, atol, inertia, gamma):
        data.lam_unique, data.rank = True, program.m
        return data.a
    ws = model.workspace(t, q, v)
    terms = ws.terms()
    result = forward(
        terms.M, terms.h, tau, terms.Phi, terms.bias, method=method, rtol=rtol, atol=atol, inertia=inertia, gamma=gamma
    )
    data._keep(result, ws)
    return data.a


def _vector(model, name: str, x, n: int) -> np.ndarray:
    """``x`` itself when it is a writeable, C-contiguous float64 vector of n entries (the kernels' compiled argument
    types; they check finiteness), else the system's checked copy (a StateError names the culprit)."""
    if type(x) is np.ndarray and x.dtype is _FLOAT64 and x.shape == (n,) and x.flags.c_contiguous and x.flags.writeable:
        return x
    return model.checked_vector(name, x)


def _compiled(program, data, t, q, v, tau, method, rtol, atol, inertia, gamma) -> bool:
    """The two kernels on the data's arrays; False where either declines (the reference route then decides)."""
    if program.m == 0 or program.terms_into(t, q, v, data._terms) != OK:
        return False
    out = data._out
    return (
        forward_into(data.M, data.h, tau, data.Phi, data.bias, method, rtol, atol, inertia, gamma, None, out) == FAST_OK
    )
