"""Progress for long scans: a transient spinner with a file count on stderr, only on a terminal."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from typing import TypeVar

__all__ = ["with_progress"]

T = TypeVar("T")


def with_progress(items: Iterable[T], what: str = "scanning", unit: str = "files") -> Iterator[T]:
    """Yield ``items`` unchanged; on an interactive stderr, show how many were read so far."""
    try:
        interactive = sys.stderr.isatty()
    except (AttributeError, ValueError):
        interactive = False
    if not interactive:
        yield from items
        return
    from rich.console import Console

    console = Console(file=sys.stderr)
    count = 0
    with console.status(f"{what}...", spinner="dots") as status:
        for item in items:
            count += 1
            path = getattr(item, "path", "")
            status.update(f"{what}: {count} {unit} ({str(path)[-60:]})")
            yield item
