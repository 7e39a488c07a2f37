"""Case files for the command line: loading a case module, its parameters (UPPER_CASE names with a
``# unit, description`` comment) and the ``--set`` / ``--grid`` values given for them.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import io
import math
import os
import tokenize
from dataclasses import dataclass
from pathlib import Path

from ..errors import FlexbodyError


# ----------------------------------------------------------------------------------------------- cases
def load_case(path: str | os.PathLike, require: tuple[str, ...] = ("main",)):
    """Import a case file as a module (importing runs nothing heavy).

    Parameters
    ----------
    path : str or path
        The case file.
    require : tuple of str
        Functions the case must define (``"main"``, ``"build"``).

    Raises
    ------
    FlexbodyError
        The file is missing, cannot be imported, or lacks a required function.
    """
    file = Path(path)
    if not file.is_file():
        raise FlexbodyError(f"case file {str(path)!r} not found")
    spec = importlib.util.spec_from_file_location(f"flexbody_case_{file.stem}", file)
    if spec is None or spec.loader is None:
        raise FlexbodyError(f"case file {str(path)!r} is not a Python file")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # a broken case file: name it, do not dump a traceback
        where = "" if isinstance(exc, SyntaxError) else _at_line(case_line(exc, file))  # a SyntaxError has its line
        raise FlexbodyError(f"cannot import case file {str(path)!r}{where}: {type(exc).__name__}: {exc}") from exc
    signatures = {"main": "main(out_dir, **overrides)", "build": "build(**params)"}
    for fname in require:
        if not callable(getattr(module, fname, None)):
            raise FlexbodyError(f"case file {str(path)!r} defines no {signatures.get(fname, fname + '()')}")
    for fname, args, rule in (
        ("main", ("out",), "take the output directory as its first argument"),
        ("build", (), "be callable without arguments (a default for every parameter)"),
    ):
        func = getattr(module, fname, None)
        if fname in require and callable(func):
            try:
                signature = inspect.signature(func)
            except (TypeError, ValueError):  # no signature to check (a builtin, a C function)
                continue
            try:
                signature.bind(*args)
            except TypeError:
                line = getattr(getattr(func, "__code__", None), "co_firstlineno", None)
                raise FlexbodyError(
                    f"case file {str(path)!r}{_at_line((line, fname)) if line else ''}: {fname} must "
                    f"{rule}, e.g. {signatures[fname]}; it is {fname}{signature}"
                ) from None
    return module


def case_line(exc: BaseException, path) -> tuple[int, str] | None:
    """(line, function) of the innermost frame of the case file ``path`` in the traceback of ``exc``, or None when
    the traceback does not pass through it (function "<module>" for the file's top level)."""
    target, found = Path(path).resolve(), None
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename and Path(code.co_filename).resolve() == target:
            found = (tb.tb_lineno, code.co_name)
        tb = tb.tb_next
    return found


def _at_line(where: tuple[int, str] | None) -> str:
    """ ", line 12 (in build)" for :func:`case_line`'s answer; "" for None."""
    if where is None:
        return ""
    line, function = where
    return f", line {line}" + ("" if function == "<module>" else f" (in {function})")


def case_failure(exc: BaseException, path) -> str:
    """One line for an error raised while a case file ran: ``case file 'P', line N (in build): Type: message`` (the
    innermost line of the case in the traceback; "line" left out when the traceback does not pass through it)."""
    text = " ".join(str(exc).split())
    kind = "" if isinstance(exc, FlexbodyError) else f"{type(exc).__name__}: "
    return f"case file {str(path)!r}{_at_line(case_line(exc, path))}: {kind}{text}"


def keyword_parameters(func) -> set[str]:
    """Names of the parameters of ``func`` that can be passed by keyword."""
    if not callable(func):
        return set()
    return {
        p.name
        for p in inspect.signature(func).parameters.values()
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    }


def case_parameters(module) -> list[str]:
    """UPPER_CASE names of a case that ``--set`` may override: module constants whose lower-case name is a
    keyword of ``main`` (or of ``build`` when ``main`` forwards ``**overrides`` to it)."""
    keywords = keyword_parameters(getattr(module, "main", None)) | keyword_parameters(getattr(module, "build", None))
    return sorted(k for k in vars(module) if k.isupper() and k.lower() in keywords)


@dataclass(frozen=True)
class CaseParameter:
    """One parameter of a case file as its line states it: ``NAME = expression  # unit, description``.

    ``value`` is the module's value (after evaluation), ``expression`` the source text when it is not a plain
    literal (e.g. ``2 * np.pi / 3``), ``unit`` "-" for dimensionless numbers, counts, flags and choices ("" when
    the line has no comment), ``settable`` whether ``--set`` may override it."""

    name: str
    value: object
    unit: str
    doc: str
    expression: str
    settable: bool


def parameter_table(module) -> list[CaseParameter]:
    """The UPPER_CASE module-level parameters of a case file in the order of its source, with the unit and
    description of their line comments (``# unit, description``); those ``--set`` can override first."""
    path = Path(getattr(module, "__file__", "") or "")
    try:
        source = path.read_text()
        tree = ast.parse(source)
    except (OSError, SyntaxError, ValueError) as exc:
        raise FlexbodyError(f"cannot read the parameters of case {case_name(module)!r}: {exc}") from exc
    comments = {
        tok.start[0]: tok.string
        for tok in tokenize.generate_tokens(io.StringIO(source).readline)
        if tok.type == tokenize.COMMENT
    }
    settable = set(case_parameters(module))
    rows = []
    for node in tree.body:
        if not isinstance(node, (ast.Assign, ast.AnnAssign)) or node.value is None:  # an annotation alone binds nothing
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        names = [
            n.id for t in targets for n in (t.elts if isinstance(t, ast.Tuple) else [t]) if isinstance(n, ast.Name)
        ]
        for name in names:
            if not (name.isupper() and not name.startswith("_")) or not hasattr(module, name):
                continue
            unit, doc = _unit_and_doc(comments.get(node.end_lineno or node.lineno, ""))
            text = ast.get_source_segment(source, node.value) or ""
            expression = "" if _is_literal(text) else " ".join(text.split())
            rows.append(CaseParameter(name, getattr(module, name), unit, doc, expression, name in settable))
    return sorted(rows, key=lambda row: not row.settable)


def _unit_and_doc(comment: str) -> tuple[str, str]:
    """("unit", "description") of a parameter comment ``# unit, description``; a comment of one word is a
    unit, one without a comma a description."""
    text = comment.lstrip("#").strip()
    if ", " in text:
        unit, doc = text.split(", ", 1)
        if " " not in unit.strip():
            return unit.strip(), doc.strip()
    if text and " " not in text:
        return text, ""
    return "", text


def _is_literal(text: str) -> bool:
    try:
        ast.literal_eval(text)
        return True
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False


def format_parameters(rows: list[CaseParameter]) -> str:
    """The parameter table of ``flexbody info --params`` as plain text (name, value, unit, description)."""
    if not rows:
        return "Parameters         none (no UPPER_CASE parameters)"
    values = [_compact_value(row.value) for row in rows]
    w_name = max(len(r.name) for r in rows)
    w_value = min(max(len(v) for v in values), 28)
    w_unit = max(len(r.unit or "?") for r in rows)
    lines = [
        f"Parameters         {sum(r.settable for r in rows)} settable with --set NAME=VALUE "
        f"(lower-case names work too); the others are constants of the case"
    ]
    for row, value in zip(rows, values):
        doc = row.doc + (f" (= {row.expression})" if row.expression else "")
        mark = " " if row.settable else "*"
        lines.append(f"  {mark}{row.name:<{w_name}}  {value:<{w_value}}  {row.unit or '?':<{w_unit}}  {doc}".rstrip())
    if any(not r.settable for r in rows):
        lines.append("  (* a constant: not a keyword of main() or build(), so --set cannot change it)")
    return "\n".join(lines)


def _compact_value(value) -> str:
    if isinstance(value, float):
        text = f"{value:.6g}"
        return text + ".0" if text.lstrip("-").isdigit() else text
    if isinstance(value, (tuple, list)) and all(isinstance(v, (int, float)) for v in value):
        return "(" + ", ".join(_compact_value(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    text = compact(value)
    return text if len(text) <= 28 else text[:25] + "..."


def case_name(module) -> str:
    return Path(getattr(module, "__file__", None) or module.__name__).stem


def _check_name(name: str, module, option: str) -> str:
    """The lower-case keyword of parameter ``name`` of the case; FlexbodyError naming the valid ones."""
    params = case_parameters(module)
    if name.upper() not in params:
        raise FlexbodyError(
            f"{option}: case {case_name(module)!r} has no parameter {name!r}; "
            f"valid parameters: {', '.join(params) or '(none)'}"
        )
    return name.lower()


def _literal(text: str):
    """A Python literal, or the text itself when it is not one."""
    try:
        return ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return text.strip()


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_numeric(value) -> bool:
    """A number, or a (nested) tuple or list of numbers."""
    if isinstance(value, (tuple, list)):
        return bool(value) and all(_is_numeric(v) for v in value)
    return _is_number(value)


def _check_value(name: str, value, module, option: str):
    """``value`` for parameter ``name``, refused with a FlexbodyError naming the parameter when the case's own value
    is numeric (a number, or numbers in parentheses) and ``value`` is not (a text such as "abc" for 2.0 would
    fail deep inside the run; a case may take one number where its default lists several). Other parameters
    take any value."""
    default = getattr(module, name.upper())
    if _is_numeric(default) and not _is_numeric(value):
        example = compact(default if _is_number(default) else tuple(default))
        raise FlexbodyError(
            f"{option} {name}={value!r}: case {case_name(module)!r} takes "
            f"{'a number' if _is_number(default) else 'numbers'} for {name.upper()}, e.g. "
            f"{name}={example}"
        )
    if _is_numeric(default) and _all_finite(default) and not _all_finite(value):
        raise FlexbodyError(
            f"{option} {name}={value!r}: case {case_name(module)!r} takes finite numbers for "
            f"{name.upper()} (its value is {compact(default)})"
        )
    return value


def _all_finite(value) -> bool:
    """Every number in a number or (nested) tuple or list of numbers is finite (1e999 reads as inf)."""
    if isinstance(value, (tuple, list)):
        return all(_all_finite(v) for v in value)
    return not isinstance(value, float) or math.isfinite(value)


def parse_overrides(pairs: list[str], module) -> dict:
    """``name=value`` strings to a dict of Python values; names must be parameters of the case and numbers stay
    numbers (:func:`_check_value`)."""
    out = {}
    for pair in pairs:
        if "=" not in pair:
            raise FlexbodyError(f"--set expects name=value, got {pair!r}")
        name, text = pair.split("=", 1)
        name = _check_name(name.strip(), module, "--set")
        out[name] = _check_value(name, _literal(text), module, "--set")
    return out


def parse_grid(pair: str, module) -> tuple[str, list]:
    """``name=v1,v2,...`` to (lower-case name, list of values). Values are Python literals separated by
    commas (tuples in parentheses: ``q0=(0,1),(1,0)``); when the whole list is not a literal list, the
    comma-separated items are taken one by one (strings: ``closure=planar,spatial``)."""
    if "=" not in pair:
        raise FlexbodyError(f"--grid expects name=v1,v2,..., got {pair!r}")
    name, text = pair.split("=", 1)
    name = _check_name(name.strip(), module, "--grid")
    if not text.strip():
        raise FlexbodyError(f"--grid {name}: no values")
    try:
        values = list(ast.literal_eval(f"[{text}]"))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        values = [_literal(part) for part in text.split(",")]
    if not values:
        raise FlexbodyError(f"--grid {name}: no values")
    values = [_check_value(name, v, module, "--grid") for v in values]
    labels = [compact(v) for v in values]
    if len(set(labels)) != len(labels):
        raise FlexbodyError(f"--grid {name}: values repeat ({text})")
    return name, values


def compact(value) -> str:
    """Short text of a parameter value for variant names and tables."""
    if isinstance(value, str):
        return value
    return repr(value).replace(" ", "")
