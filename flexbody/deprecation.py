"""Deprecation shims: a public name, argument or calling form that changed keeps working for one version with a
``DeprecationWarning`` that names its replacement (CHANGELOG.md lists each, with the version that removes it).
"""

from __future__ import annotations

import functools
import sys
import warnings
from collections.abc import Callable
from types import FrameType
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

REMOVED_IN = "0.4.0"
"""The version that removes what 0.3.0 deprecated."""

__all__ = ["REMOVED_IN", "deprecated", "renamed_keyword"]


def deprecated(old: str, new: str) -> None:
    """Warn that ``old`` is deprecated since 0.3.0 and will be removed in :data:`REMOVED_IN`: use ``new``. The
    warning points at the first caller outside flexbody (the user's line), however deep the call."""
    warnings.warn(
        f"{old} is deprecated since flexbody 0.3.0 and will be removed in {REMOVED_IN}: use {new}",
        DeprecationWarning,
        stacklevel=first_outside_caller(),
    )


def first_outside_caller() -> int:
    """The ``stacklevel`` of the first frame, counted from the caller of :func:`deprecated`, whose code is not in
    the flexbody package."""
    package = __file__.rsplit("deprecation.py", 1)[0]
    frame: FrameType | None = sys._getframe(2)
    level = 2
    while frame is not None and frame.f_code.co_filename.startswith(package):
        frame, level = frame.f_back, level + 1
    return level


def renamed_keyword(old: str, new: str) -> Callable[[F], F]:
    """A decorator: the keyword argument ``old`` of the decorated function is accepted as ``new``, with a warning."""

    def decorate(function: F) -> F:
        @functools.wraps(function)
        def accepting(*args, **kwargs):
            if old in kwargs:
                name = function.__qualname__.removesuffix(".__init__")
                deprecated(f"{name}({old}=...)", f"{name}({new}=...)")
                kwargs[new] = kwargs.pop(old)
            return function(*args, **kwargs)

        return accepting  # type: ignore[return-value]

    return decorate
