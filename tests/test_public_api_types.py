"""The public API is fully typed: every parameter and return of the functions, methods and properties that
``import flexbody as fb`` exposes carries an annotation (mypy, run by ``make lint``, then checks their bodies
and every call inside the package against them)."""

import inspect

from public_api import callables_of, public_objects


def _missing(func, label: str) -> list[str]:
    """The parameters (``label(name)``) and return (``label -> ?``) of ``func`` without an annotation."""
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError):  # a builtin or numba dispatcher: typed where it is defined, if anywhere
        return []
    missing = [
        f"{label}({name})"
        for name, p in signature.parameters.items()
        if name not in ("self", "cls")
        and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        and p.annotation is inspect.Parameter.empty
    ]
    if signature.return_annotation is inspect.Signature.empty and not label.endswith("__init__"):
        missing.append(f"{label} -> ?")
    return missing


def test_every_public_function_method_and_property_is_annotated():
    missing, seen = [], set()
    for label, obj in public_objects():
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if inspect.isclass(obj):
            for name, func in callables_of(obj):
                missing += _missing(func, f"{label}.{name}")
        elif callable(obj):
            missing += _missing(obj, label)
    assert not missing, f"{len(missing)} annotations missing: {missing[:40]}"
