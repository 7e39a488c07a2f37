"""The public API is fully typed: every parameter and return of the functions, methods and properties that
``import flexbody as fb`` exposes carries an annotation (mypy, run by ``make lint``, then checks their bodies
and every call inside the package against them)."""

import inspect

import flexbody as fb

ROOMS = {"fem", "reduced", "rigid", "constraints", "system", "linalg", "solvers", "io", "progress", "__version__"}


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


def _callables_of(cls) -> list[tuple[str, object]]:
    """(name, function) of the public methods, properties and ``__init__`` flexbody defines on ``cls``."""
    found: dict[str, object] = {}
    for klass in cls.__mro__:
        if not klass.__module__.startswith("flexbody"):
            continue
        for name, value in vars(klass).items():
            if name in found or (name.startswith("_") and name != "__init__"):
                continue
            if isinstance(value, property):
                found[name] = value.fget
            elif isinstance(value, (staticmethod, classmethod)):
                found[name] = value.__func__
            elif inspect.isfunction(value):
                found[name] = value
    return list(found.items())


def _public_objects() -> list[tuple[str, object]]:
    """(label, object) of the top-level names and of the namespaces' (fb.mesh, fb.control, ...) public names."""
    objects = []
    for name in fb.__all__:
        if name in ROOMS:
            continue
        obj = getattr(fb, name)
        if inspect.ismodule(obj):
            objects += [(f"fb.{name}.{sub}", getattr(obj, sub)) for sub in getattr(obj, "__all__", [])]
        else:
            objects.append((f"fb.{name}", obj))
    return objects


def test_every_public_function_method_and_property_is_annotated():
    missing, seen = [], set()
    for label, obj in _public_objects():
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if inspect.isclass(obj):
            for name, func in _callables_of(obj):
                missing += _missing(func, f"{label}.{name}")
        elif callable(obj):
            missing += _missing(obj, label)
    assert not missing, f"{len(missing)} annotations missing: {missing[:40]}"
