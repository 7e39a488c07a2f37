"""The public API as the tests walk it: the top-level names of ``import flexbody as fb``, the public names of
its namespaces (``fb.mesh``, ``fb.control``, ...), and the methods and properties flexbody defines on classes."""

import inspect

import flexbody as fb

ROOMS = {"fem", "reduced", "rigid", "constraints", "system", "linalg", "solvers", "io", "progress", "__version__"}
"""Names of ``fb.__all__`` that are the package's rooms (documented by their own pages), not API entries."""


def callables_of(cls) -> list[tuple[str, object]]:
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


def public_objects() -> list[tuple[str, object]]:
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
