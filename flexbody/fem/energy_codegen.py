"""A strain energy turned into a compiled law: symbolic derivatives (sympy) printed as a numba ``cfunc``.

Invariant form W(I₁, I₂, J): the kernels work with I₃ = det C = J², and with dJ/dI₃ = 1/(2J) the chain rule gives

    W₃ = W_J / (2J),   W₁₃ = W_₁J / (2J),   W₂₃ = W_₂J / (2J),   W₃₃ = (W_JJ − W_J / J) / (4J²),

(W₁, W₂, W₁₁, W₁₂, W₂₂ are plain derivatives); the law writes out = (W, W₁, W₂, W₃, W₁₁, W₁₂, W₁₃, W₂₂, W₂₃, W₃₃),
from which :mod:`flexbody.fem.materials` forms S and D. Tensor form W(C): C symmetric with the six independent
entries c_IJ (I ≤ J), each off-diagonal c_IJ standing for both C_IJ and C_JI, so

    S_IJ = 2 ∂W/∂C_IJ = 2 ∂W/∂c_II (I = J),  ∂W/∂c_IJ (I ≠ J);   D_IJKL = 2 ∂S_IJ/∂C_KL likewise in (K, L),

and the law writes out = (W, S in Voigt order 00, 11, 22, 12, 02, 01, the upper triangle of D in that order, row
by row). The expressions are reduced by common-subexpression elimination and printed as the body of
``law(p, C, out)`` — parameters p (k,), C (3, 3), out (LAW_OUT,) — which numba compiles as a ``cfunc`` of the fixed
signature :data:`LAW_SIGNATURE`: the element kernels take it as a first-class function argument and are compiled
once for every law. Laws of equal source (the same structure, whatever the parameter values) share one function,
which numba caches on disk like the kernels (from a source file in :func:`law_directory`).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile
from pathlib import Path

import numba as nb

from ..errors import MaterialError
from .materials import LAW_OUT, USER_INVARIANTS, VOIGT

LAW_SIGNATURE = nb.types.void(nb.types.float64[::1], nb.types.float64[:, ::1], nb.types.float64[::1])
"""law(p, C, out): parameters (k,) [their units], right Cauchy–Green tensor (3, 3), output (LAW_OUT,) [Pa]."""

_ENTRIES = ("c00", "c11", "c22", "c12", "c02", "c01")  # the Voigt order of materials.VOIGT
_INVARIANT_LINES = (
    "I1 = c00 + c11 + c22",
    "I2 = c00 * c11 + c11 * c22 + c00 * c22 - c01 * c01 - c02 * c02 - c12 * c12",
    "I3 = c00 * (c11 * c22 - c12 * c12) - c01 * (c01 * c22 - c12 * c02) + c02 * (c01 * c12 - c11 * c02)",
    "J = math.sqrt(I3)",
)
_COMPILED: dict[str, object] = {}  # source -> cfunc, one per law structure and process


def invariant_derivatives(W, I1, I2, J) -> list:
    """[W, W₁, W₂, W₃, W₁₁, W₁₂, W₁₃, W₂₂, W₂₃, W₃₃] of W(I₁, I₂, J) (sympy), with I₃ = J² (module docstring)."""
    import sympy as sp

    d = sp.diff
    W1, W2, WJ = d(W, I1), d(W, I2), d(W, J)
    return [
        W,
        W1,
        W2,
        WJ / (2 * J),
        d(W1, I1),
        d(W1, I2),
        d(W1, J) / (2 * J),
        d(W2, I2),
        d(W2, J) / (2 * J),
        (d(WJ, J) - WJ / J) / (4 * J**2),
    ]


def tensor_derivatives(W, c) -> list:
    """[W, S (6, Voigt), upper triangle of D (21)] of W(C) (sympy); ``c`` the six entry symbols in Voigt order."""
    import sympy as sp

    def tensor_derivative(expr, a):  # ∂/∂C_IJ of a function of the independent entries
        return sp.diff(expr, c[a]) * (1 if a < 3 else sp.Rational(1, 2))

    S = [2 * tensor_derivative(W, a) for a in range(6)]
    D = [2 * tensor_derivative(S[a], b) for a in range(6) for b in range(a, 6)]
    return [W, *S, *D]


def law_source(exprs: list, kind: int, entries, parameters) -> str:
    """Python source of ``law(p, C, out)`` writing ``exprs`` to out[0], out[1], … (at most LAW_OUT of them).

    ``entries`` are the symbols standing for c00, c11, c22, c12, c02, c01 (tensor form) or for I1, I2, J
    (invariant form); ``parameters`` the parameter symbols, read from p in order. Raises MaterialError when an
    expression uses a function that has no Python form.
    """
    import sympy as sp
    from sympy.printing.pycode import PythonCodePrinter

    names = _ENTRIES if kind != USER_INVARIANTS else ("I1", "I2", "J")
    internal = {s: sp.Symbol(n, real=True) for s, n in zip(entries, names)}
    internal.update({s: sp.Symbol(f"q{k}", real=True) for k, s in enumerate(parameters)})
    assert len(exprs) <= LAW_OUT
    exprs = [sp.sympify(e).xreplace(internal) for e in exprs]
    temporaries, reduced = sp.cse(exprs, symbols=sp.numbered_symbols("t"))
    printer = PythonCodePrinter({"fully_qualified_modules": True, "standard": "python3"})
    lines = [f"{n} = C[{i}, {j}]" for n, (i, j) in zip(_ENTRIES, VOIGT)]
    if kind == USER_INVARIANTS:
        lines += _INVARIANT_LINES
    lines += [f"q{k} = p[{k}]" for k in range(len(parameters))]
    try:
        lines += [f"{t} = {printer.doprint(e)}" for t, e in temporaries]
        lines += [f"out[{k}] = {printer.doprint(e)}" for k, e in enumerate(reduced)]
    except Exception as exc:  # sympy's strict printer: a function with no Python form
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise MaterialError(f"strain energy uses a function with no compiled form: {reason}") from exc
    if printer._not_supported:
        raise MaterialError(
            "strain energy uses functions with no compiled form: " + ", ".join(sorted(map(str, printer._not_supported)))
        )
    return "def law(p, C, out):\n" + "".join(f"    {line}\n" for line in lines)


def compile_law(source: str):
    """The numba ``cfunc`` of ``source`` (as written by :func:`law_source`): compiled once per law structure and
    kept in numba's on-disk cache from the file :func:`_law_function` writes, so later processes load it."""
    law = _COMPILED.get(source)
    if law is None:
        try:
            function, cache = _law_function(source)
            law = nb.cfunc(LAW_SIGNATURE, error_model="numpy", cache=cache)(function)
        except Exception as exc:  # numba typing or lowering errors of a user expression
            raise MaterialError(f"strain energy could not be compiled: {type(exc).__name__}: {exc}") from exc
        _COMPILED[source] = law
    return law


def _law_function(source: str) -> tuple[object, bool]:
    """(the Python function ``law`` of ``source``, whether it lives in a file numba can cache next to).

    The file is ``law_<hash of source>.py`` in :func:`law_directory`, written once (atomically: a concurrent
    process writes the same bytes); without a writable directory the source runs in memory, uncached.
    """
    text = "import math\n\n\n" + source
    directory = law_directory()
    path = directory / f"law_{hashlib.sha256(text.encode()).hexdigest()[:24]}.py"
    try:
        if not path.is_file():
            directory.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile("w", dir=directory, suffix=".tmp", delete=False) as handle:
                handle.write(text)
            os.replace(handle.name, path)
    except OSError:
        namespace: dict = {}
        exec(compile(text, "<flexbody strain energy>", "exec"), namespace)
        return namespace["law"], False
    name = f"flexbody_{path.stem}"  # importable: numba's cache reloads the law's globals by it
    module = sys.modules.get(name)
    if module is None:
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None  # a .py file always has a source loader
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        sys.modules[name] = module
    return module.law, True


def law_directory() -> Path:
    """Where compiled laws' sources are written: ``$NUMBA_CACHE_DIR/flexbody_laws`` when numba's cache directory is
    set, else ``flexbody/laws`` in the user's cache directory (``$XDG_CACHE_HOME`` or ``~/.cache``)."""
    if nb.config.CACHE_DIR:
        return Path(nb.config.CACHE_DIR) / "flexbody_laws"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "flexbody" / "laws"
