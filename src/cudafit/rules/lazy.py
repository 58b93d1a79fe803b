"""A sequence built on first use: a library's thousands of module verdicts cost nothing until a report asks."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar, overload

__all__ = ["LazySequence"]

T = TypeVar("T")


class LazySequence(Sequence[T]):
    """The items ``build`` returns, built at the first access (reports that only need counts never build a
    file's module verdicts).  Equal to any sequence of the same items."""

    __slots__ = ("_build", "_items")

    def __init__(self, build: Callable[[], tuple[T, ...]]) -> None:
        self._build = build
        self._items: tuple[T, ...] | None = None

    def _get(self) -> tuple[T, ...]:
        if self._items is None:
            self._items = self._build()
        return self._items

    @overload
    def __getitem__(self, i: int) -> T: ...
    @overload
    def __getitem__(self, i: slice) -> tuple[T, ...]: ...
    def __getitem__(self, i: int | slice) -> T | tuple[T, ...]:
        return self._get()[i]

    def __len__(self) -> int:
        return len(self._get())

    def __iter__(self) -> Iterator[T]:
        return iter(self._get())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and tuple(self) == tuple(other)

    def __hash__(self) -> int:
        return hash(self._get())

    def __repr__(self) -> str:
        return f"LazySequence({len(self)} items)" if self._items is not None else "LazySequence(not built)"
