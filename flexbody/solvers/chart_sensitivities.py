"""The charts of rotation vectors a run passes through, replayed and linearized for its sensitivities (#36 item 5).

A generalized-α step runs in the chart centred on its start (:mod:`flexbody.solvers.step_charts`): its state
y = (q, v, q̈, a) goes to the step's chart by T, the Newmark formulas run there, and the step's end (ψ, ψ̇, ψ̈, â)
comes back by F (with the start q_n, which centres the chart); past π a rotation vector then moves to its other
chart by S (:func:`~flexbody.rigid.exponential_coordinates.switched_charts`, after generalized-α and RK4 steps).
Their linearizations act on each rotation vector by 3 × 3 blocks and leave the other coordinates as they are; with
J = J_r, D(φ; x) the matrix h ↦ (Σ_m h_m ∂J/∂φ_m) x, ρ(φ, φ̇) = J̇_r φ̇ and its partials ρ_φ, ρ_φ̇ = D(φ; φ̇) + J̇_r:

    T:  δψ̇ = D(φ; φ̇) δφ + J δφ̇,   δψ̈ = (D(φ; φ̈) + ρ_φ) δφ + ρ_φ̇ δφ̇ + J δφ̈   (â like ψ̈, with a),
    F:  J(φ) δφ = exp(ψ)ᵀ J(φ_n) δφ_n + J(ψ) δψ                              (the body-frame perturbations add),
        J(φ) δφ̇ = D(ψ; ψ̇) δψ + J(ψ) δψ̇ − D(φ; φ̇) δφ                        (ω = J(ψ) ψ̇ = J(φ) φ̇),
        J(φ) δφ̈ = (D(ψ; ψ̈) + ρ_ψ) δψ + ρ_ψ̇ δψ̇ + J(ψ) δψ̈ − (D(φ; φ̈) + ρ_φ) δφ − ρ_φ̇ δφ̇   (a like φ̈, with â),
    S:  δφ′ = Df δφ,  δφ̇′ = D²f[δφ, φ̇] + Df δφ̇,  δφ̈′ = D²f[δφ, φ̈] + D³f[δφ, φ̇, φ̇] + 2 D²f[φ̇, δφ̇] + Df δφ̈

(:func:`~flexbody.rigid.exponential_coordinates.chart_jacobian`, ``chart_second``, ``chart_third``). The run
records (q, v, q̈) in the state's charts but not the algorithmic a, nor the step's local end: :func:`replayed_charts`
rebuilds both from the records — ψ = log(exp([φ_n]×)ᵀ exp([φ_{n+1}]×)), ψ̇ = J(ψ)⁻¹ ω, ψ̈ = J(ψ)⁻¹(α − ρ(ψ, ψ̇)) with
the body's ω and α, which no chart changes, and a from its recursion in the step's chart — and checks that the
replayed step ends at the recorded state.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..rigid import exponential_coordinates as expc
from .correction_sensitivities import checked_replay
from .step_charts import from_step_chart, to_step_chart

__all__ = ["BlockMap", "StateMap", "StepCharts", "replayed_charts", "switch_map"]


@dataclass(frozen=True)
class BlockMap:
    """A linear map of (n,) coordinates: the rotation vector at each of ``starts`` (k,) by its block of ``blocks``
    (k, 3, 3), every other coordinate times ``scale``."""

    starts: np.ndarray
    scale: float
    blocks: np.ndarray

    def __call__(self, x: np.ndarray, transpose: bool = False) -> np.ndarray:
        """The map (or its transpose) of x (n,) or (n, K)."""
        out = self.scale * x
        if len(self.starts):
            index = self.starts[:, None] + np.arange(3)
            blocks = self.blocks.transpose(0, 2, 1) if transpose else self.blocks
            out[index] = np.einsum("kij,kj...->ki...", blocks, x[index])
        return out

    def matrix(self, n: int) -> sp.csr_matrix:
        """The map as a CSR (n, n) matrix."""
        diagonal = np.full(n, self.scale)
        index = self.starts[:, None] + np.arange(3)
        diagonal[index.ravel()] = 0.0
        rows = np.repeat(index, 3, axis=1).ravel()
        cols = np.tile(index, (1, 3)).ravel()
        out = sp.coo_matrix((self.blocks.ravel(), (rows, cols)), shape=(n, n)) + sp.diags(diagonal)
        return out.tocsr()

    def divided(self, c: float) -> BlockMap:
        """P / c."""
        return BlockMap(self.starts, self.scale / c, self.blocks / c)

    def right_of(self, X):
        """X P for a dense X (m, n′) whose n′ ≤ n columns hold every rotation vector, or a sparse X (m, n) (without
        rotation vectors, a scaled X: no product of matrices)."""
        if sp.issparse(X):
            if len(self.starts):
                return X @ self.matrix(X.shape[1])
            return X if self.scale == 1.0 else self.scale * X
        out = self.scale * X
        for s, block in zip(self.starts, self.blocks):
            out[:, s : s + 3] = X[:, s : s + 3] @ block
        return out


def combination(maps: list[tuple[float, BlockMap]]) -> BlockMap:
    """Σ c_i P_i of maps on the same rotation vectors."""
    starts = maps[0][1].starts
    blocks = np.sum([c * m.blocks for c, m in maps], axis=0)
    return BlockMap(starts, sum(c * m.scale for c, m in maps), blocks)


@dataclass(frozen=True)
class StateMap:
    """A linear map between tuples of (n,) vectors (such as (q, v, q̈, a)): ``entries`` {(output, input):
    BlockMap}, ``sizes`` (outputs, inputs)."""

    entries: dict
    sizes: tuple[int, int]

    def __call__(self, xs) -> list:
        """The outputs of the inputs ``xs`` (None for a zero input)."""
        out: list = [None] * self.sizes[0]
        for (o, i), block in self.entries.items():
            if xs[i] is not None:
                y = block(xs[i])
                out[o] = y if out[o] is None else out[o] + y
        return out

    def transposed(self, ys) -> list:
        """The inputs' adjoints of the outputs' adjoints ``ys`` (zero where nothing reaches)."""
        out: list = [None] * self.sizes[1]
        for (o, i), block in self.entries.items():
            x = block(ys[o], transpose=True)
            out[i] = x if out[i] is None else out[i] + x
        return [np.zeros_like(ys[0]) if x is None else x for x in out]

    def along(self, weights) -> list[BlockMap]:
        """Each output's map of one input δ whose share in the inputs is ``weights`` (one per input, 0 for none)."""
        out = []
        for o in range(self.sizes[0]):
            terms = [(weights[i], m) for (oo, i), m in self.entries.items() if oo == o and weights[i] != 0.0]
            out.append(combination(terms))
        return out


def _map(starts: np.ndarray, layout: dict, blocks: dict, sizes: tuple[int, int]) -> StateMap:
    """A StateMap from each entry's scale (``layout`` {(o, i): scale}) and rotation blocks (``blocks`` {(o, i): list
    of (3, 3)}, zero where absent); without rotation vectors, only the entries that are not zero."""
    k = len(starts)
    entries = {}
    for key, scale in layout.items():
        if not k and scale == 0.0:
            continue
        stack = np.array(blocks[key]) if key in blocks else np.zeros((k, 3, 3))
        entries[key] = BlockMap(starts, scale, stack.reshape(k, 3, 3))
    return StateMap(entries, sizes)


# ------------------------------------------------------------------ the 3 × 3 blocks
def _columns(fill) -> np.ndarray:
    """(3, 3) whose column m is ``fill(m, out)``'s out."""
    out = np.empty((3, 3))
    column = np.empty(3)
    for m in range(3):
        fill(m, column)
        out[:, m] = column
    return out


def _unit(m: int) -> np.ndarray:
    e = np.zeros(3)
    e[m] = 1.0
    return e


def _jacobian(phi: np.ndarray, inverse: bool = False) -> np.ndarray:
    """J_r(φ) or its inverse (3, 3)."""
    return _columns(lambda m, out: expc.apply_right_jacobian(phi, _unit(m), inverse, out))


def _along(phi: np.ndarray, x: np.ndarray) -> np.ndarray:
    """D(φ; x) (3, 3): h ↦ (Σ_m h_m ∂J_r/∂φ_m) x."""
    return _columns(lambda m, out: expc.right_jacobian_derivative(phi, _unit(m), x, out))


def _rate_partials(phi: np.ndarray, rate: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(ρ_φ, ρ_φ̇) (3, 3) of ρ = J̇_r(φ) φ̇: ρ_φ̇ = D(φ; φ̇) + J̇_r, J̇_r's column m (Σ_k φ̇_k ∂J/∂φ_k) e_m."""
    by_phi = _columns(lambda m, out: expc.right_jacobian_rate_derivative(phi, rate, m, out))
    jacobian_rate = _columns(lambda m, out: expc.right_jacobian_derivative(phi, rate, _unit(m), out))
    return by_phi, _along(phi, rate) + jacobian_rate


def _rate(phi: np.ndarray, r: np.ndarray) -> np.ndarray:
    out = np.empty(3)
    expc.right_jacobian_rate(phi[0], phi[1], phi[2], r[0], r[1], r[2], out)
    return out


# ------------------------------------------------------------------ the three maps
TO_CHART = {(0, 0): 1.0, (1, 0): 0.0, (1, 1): 1.0, (2, 0): 0.0, (2, 1): 0.0, (2, 2): 1.0,
            (3, 0): 0.0, (3, 1): 0.0, (3, 3): 1.0}  # fmt: skip
"""T's entries: (ψ, ψ̇, ψ̈, â) of (q, v, q̈, a); rotation vectors start at ψ = 0 (their base enters F)."""

FROM_CHART = {(0, 0): 0.0, (0, 1): 1.0, (1, 0): 0.0, (1, 1): 0.0, (1, 2): 1.0, (2, 0): 0.0, (2, 1): 0.0,
              (2, 2): 0.0, (2, 3): 1.0, (3, 0): 0.0, (3, 1): 0.0, (3, 2): 0.0, (3, 4): 1.0}  # fmt: skip
"""F's entries: (q, v, q̈, a) of (q_n, ψ, ψ̇, ψ̈, â)."""


def to_chart_map(starts: np.ndarray, y) -> StateMap:
    """T at the state y = (q, v, q̈, a) (module docstring)."""
    blocks: dict = {key: [] for key in TO_CHART if key != (0, 0)}
    for s in starts:
        phi, rate, qdd, a = (x[s : s + 3] for x in y)
        J = _jacobian(phi)
        by_phi, by_rate = _rate_partials(phi, rate)
        blocks[1, 0].append(_along(phi, rate))
        blocks[1, 1].append(J)
        for o, second in ((2, qdd), (3, a)):
            blocks[o, 0].append(_along(phi, second) + by_phi)
            blocks[o, 1].append(by_rate)
            blocks[o, o].append(J)
    return _map(starts, TO_CHART, blocks, (4, 4))


def from_chart_map(starts: np.ndarray, q_start: np.ndarray, local, end) -> StateMap:
    """F of the step from q_start whose end is ``local`` = (ψ, ψ̇, ψ̈, â) in its chart and ``end`` = (q, v, q̈, a) in
    the state's (module docstring)."""
    blocks: dict = {key: [] for key in FROM_CHART}
    for s in starts:
        psi, psi_rate, psi_second, psi_a = (x[s : s + 3] for x in local)
        phi, rate, qdd, a = (x[s : s + 3] for x in end)
        inverse, J_psi = _jacobian(phi, inverse=True), _jacobian(psi)
        base = inverse @ expc.rotation_matrix(psi).T @ _jacobian(q_start[s : s + 3])
        by_psi = inverse @ J_psi
        along_rate = _along(phi, rate)
        rate_base = -inverse @ along_rate @ base
        rate_psi = inverse @ (_along(psi, psi_rate) - along_rate @ by_psi)
        blocks[0, 0].append(base)
        blocks[0, 1].append(by_psi)
        blocks[1, 0].append(rate_base)
        blocks[1, 1].append(rate_psi)
        blocks[1, 2].append(by_psi)
        phi_by, phi_by_rate = _rate_partials(phi, rate)
        psi_by, psi_by_rate = _rate_partials(psi, psi_rate)
        for o, i, x_local, x in ((2, 3, psi_second, qdd), (3, 4, psi_a, a)):
            K = _along(phi, x) + phi_by
            blocks[o, 0].append(-inverse @ (K @ base + phi_by_rate @ rate_base))
            blocks[o, 1].append(inverse @ (_along(psi, x_local) + psi_by - K @ by_psi - phi_by_rate @ rate_psi))
            blocks[o, 2].append(inverse @ (psi_by_rate - phi_by_rate @ by_psi))
            blocks[o, i].append(by_psi)
    return _map(starts, FROM_CHART, blocks, (4, 5))


def switch_map(starts: np.ndarray, y) -> StateMap | None:
    """S at the state y = (q, v, *second derivatives) before the switch of every rotation vector longer than π (module
    docstring); None when none is."""
    longer = [float(np.linalg.norm(y[0][s : s + 3])) > np.pi for s in starts]
    if not any(longer):
        return None
    count = len(y)
    layout = {(0, 0): 1.0, (1, 0): 0.0, (1, 1): 1.0}
    for o in range(2, count):
        layout.update({(o, 0): 0.0, (o, 1): 0.0, (o, o): 1.0})
    blocks: dict = {key: [] for key in layout}
    for s, switched in zip(starts, longer):
        phi, rate = y[0][s : s + 3], y[1][s : s + 3]
        if not switched:
            for key in layout:
                blocks[key].append(np.eye(3) if key[0] == key[1] else np.zeros((3, 3)))
            continue
        Df, by_rate = expc.chart_jacobian(phi), expc.chart_second(phi, rate)
        blocks[0, 0].append(Df)
        blocks[1, 0].append(by_rate)
        blocks[1, 1].append(Df)
        for o in range(2, count):
            second = y[o][s : s + 3]
            blocks[o, 0].append(expc.chart_second(phi, second) + expc.chart_third(phi, rate, rate))
            blocks[o, 1].append(2.0 * by_rate)
            blocks[o, o].append(Df)
    return _map(starts, layout, blocks, (count, count))


# ------------------------------------------------------------------ the run's charts, replayed
@dataclass(frozen=True)
class StepCharts:
    """One generalized-α step's charts: ``to_chart`` T at its start, ``from_chart`` F at its end, ``switch`` S after
    it (None without a switch), and its ``end`` (q, v, q̈, a) before the switch (where its equations hold: the
    recorded q, v, q̈ when nothing switched)."""

    to_chart: StateMap
    from_chart: StateMap
    switch: StateMap | None
    end: tuple


def replayed_charts(asm, coefficients: tuple, run, restarted: dict | None = None) -> list[StepCharts]:
    """The :class:`StepCharts` of each step of the generalized-α run ``run`` (times, q, v, q̈, …) with the scheme's
    (c₁, c₂, c₃, γ, β) = ``coefficients`` (module docstring); ``restarted`` {n: q̈_n⁺}: the states where the run
    restarted its accelerations (q̈ = a = q̈_n⁺, :mod:`flexbody.solvers.input_breaks`). FlexbodyError when a replayed
    step does not keep the Newmark formula of q in its chart (a run with other settings) or does not end in the
    recorded charts. Without rotation vectors every step's T and F are the same maps (copies of the coordinates)."""
    c1, c2, c3, _, beta = coefficients
    starts = np.asarray(asm.rotation_vectors, dtype=np.int64)
    times, q, v, qdd = run[:4]
    restarted = restarted or {}
    copies = (_map(starts, TO_CHART, {}, (4, 4)), _map(starts, FROM_CHART, {}, (4, 5))) if not starts.size else None
    a = np.array(qdd[0], dtype=float)  # the run starts with a = q̈
    out = []
    for i in range(len(times) - 1):
        qdd_i = qdd[i]
        if i in restarted and i:
            qdd_i = a = np.asarray(restarted[i], dtype=float)
        h, start, recorded = times[i + 1] - times[i], (q[i], v[i], qdd_i, a), (q[i + 1], v[i + 1], qdd[i + 1])
        local0: tuple = start
        if starts.size:
            local0 = tuple(np.empty_like(x) for x in start)
            to_step_chart(starts, start, local0)
        local = [x.copy() for x in recorded] if starts.size else list(recorded)
        for s in starts:
            _local_end(q[i][s : s + 3], (x[s : s + 3] for x in recorded), local, s)
        blend = c1 * local[2] + c2 * local0[2] + c3 * local0[3]
        newmark = local0[0] + h * local0[1] + h * h * ((0.5 - beta) * local0[3] + beta * blend)
        checked_replay(newmark, local[0], times[i + 1])
        local.append(blend)
        if copies is not None:
            out.append(StepCharts(*copies, None, tuple(local)))
            a = blend
            continue
        end = tuple(np.empty_like(x) for x in start)
        from_step_chart(starts, q[i], tuple(local), end)
        switch = switch_map(starts, end)
        after = end if switch is None else expc.switched_charts(starts, *end)
        checked_replay(after[0], q[i + 1], times[i + 1])
        held = end if switch is not None else (*recorded, end[3])  # the run's own, where kept
        out.append(StepCharts(to_chart_map(starts, start), from_chart_map(starts, q[i], local, end), switch, held))
        a = after[3]
    return out


def _local_end(phi_start: np.ndarray, recorded, local, s: int) -> None:
    """(ψ, ψ̇, ψ̈) of the rotation vector at s of a step from φ_n = ``phi_start`` to the ``recorded`` (φ, φ̇, φ̈), in
    ``local``: by the body's rotation, angular velocity and acceleration, which no chart changes."""
    phi, rate, second = recorded
    J = _jacobian(phi)
    omega, alpha = J @ rate, J @ second + _rate(phi, rate)
    psi = expc.rotation_log(expc.rotation_matrix(phi_start).T @ expc.rotation_matrix(phi))
    inverse = _jacobian(psi, inverse=True)
    psi_rate = inverse @ omega
    local[0][s : s + 3] = psi
    local[1][s : s + 3] = psi_rate
    local[2][s : s + 3] = inverse @ (alpha - _rate(psi, psi_rate))
