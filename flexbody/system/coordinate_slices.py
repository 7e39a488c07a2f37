"""Where each part of a system sits in q: one mapping, part → ``slice``, that also takes the part's name."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["CoordinateSlices"]


class CoordinateSlices(Mapping):
    """The columns of each rigid tree, reduced body and flexible body in q (n_dofs,): ``slices[part]`` and
    ``slices[part.name]`` are the same ``slice``; iteration yields the parts in the order of q."""

    def __init__(self, slices: Mapping[Any, slice]):
        self._slices = dict(slices)
        self._named = {part.name: s for part, s in self._slices.items()}

    def __getitem__(self, key: Any) -> slice:
        if isinstance(key, str):
            if key not in self._named:
                raise KeyError(f"no part named {key!r} in q; parts: {sorted(self._named)}")
            return self._named[key]
        return self._slices[key]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._slices)

    def __len__(self) -> int:
        return len(self._slices)

    def by_name(self) -> dict[str, slice]:
        """Part name → slice, in the order of q (what :class:`~flexbody.io.results.Results` keeps)."""
        return dict(self._named)

    def spans(self) -> dict[str, tuple[int, int]]:
        """Part name → (start, stop) (the 0.2 ``body_slices``)."""
        return {name: (s.start, s.stop) for name, s in self._named.items()}
