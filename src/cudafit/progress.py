"""Progress for long work, shared by every command: a transient line on stderr, only on a terminal.

One helper so that ``audit`` of many wheels, pip downloads (``check REQUIREMENT``, ``--match-torch``),
scans and ``explain --path`` look alike and never write to a pipe or a CI log: on a terminal the
line is redrawn in place and erased when the work ends; elsewhere nothing is written at all.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

__all__ = ["Progress", "human_bytes", "interactive", "progress", "with_progress"]

T = TypeVar("T")

#: The status line being drawn: rich allows one live display at a time, so nested progress shares it.
_ACTIVE: list[Any] = []


def interactive() -> bool:
    """Whether progress is shown: stderr is a terminal."""
    try:
        return bool(sys.stderr.isatty())
    except (AttributeError, ValueError):
        return False


def human_bytes(n: float) -> str:
    """``555.1 MB``: sizes as pip prints them (decimal units)."""
    for unit in ("B", "kB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} GB"  # pragma: no cover


class Progress:
    """One line of progress; :meth:`update` is cheap and a no-op off a terminal."""

    def __init__(self, what: str, status: Any | None) -> None:
        self.what = what
        self._status = status
        self._start = time.monotonic()
        self._last = 0.0

    @property
    def shown(self) -> bool:
        """Whether anything is drawn (stderr is a terminal)."""
        return self._status is not None

    def update(self, detail: str = "", *, force: bool = False) -> None:
        """Redraw as ``WHAT: DETAIL (12 s)``, at most ten times a second."""
        if self._status is None:
            return
        now = time.monotonic()
        if not force and now - self._last < 0.1:
            return
        self._last = now
        from rich.markup import escape

        elapsed = now - self._start
        clock = f" [dim]({elapsed:.0f} s)[/dim]" if elapsed >= 2 else ""
        self._status.update(f"{escape(self.what)}{': ' + escape(detail) if detail else ''}{clock}")


@contextmanager
def progress(what: str) -> Iterator[Progress]:
    """A transient status line for the duration of the block (nothing off a terminal)."""
    if not interactive():
        yield Progress(what, None)
        return
    if _ACTIVE:  # inside another progress (a download while a scan counts files): share its line
        yield Progress(what, _ACTIVE[-1])
        return
    from rich.console import Console

    console = Console(file=sys.stderr)
    with console.status(f"{what}...", spinner="dots") as status:
        _ACTIVE.append(status)
        try:
            yield Progress(what, status)
        finally:
            _ACTIVE.remove(status)


def with_progress(items: Iterable[T], what: str = "scanning", unit: str = "files") -> Iterator[T]:
    """Yield ``items`` unchanged; on an interactive stderr, show how many were read so far."""
    if not interactive():
        yield from items
        return
    with progress(what) as p:
        for count, item in enumerate(items, 1):
            path = getattr(item, "path", "")
            p.update(f"{count:,} {unit} ({str(path)[-60:]})")
            yield item
