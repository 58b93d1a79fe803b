"""Fork-based parallel map for large trees: results come back as pickled values over pipes.

Used only where it pays: a POSIX ``fork`` (no re-import, the scan cache is inherited), more than
one CPU, enough files, and results that are cheap to send (JSON text, not fact objects).  A
child that fails for any reason is not trusted: its share is recomputed in the parent, so the
result never depends on the workers.
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Callable, Sequence
from typing import TypeVar

__all__ = ["map_forked", "worth_forking"]

T = TypeVar("T")
R = TypeVar("R")

MIN_ITEMS = 32


def worth_forking(n_items: int) -> bool:
    """Whether a fork-based map can pay off here."""
    return hasattr(os, "fork") and (os.cpu_count() or 1) > 1 and n_items >= MIN_ITEMS


def map_forked(fn: Callable[[T], R], items: Sequence[T], weights: Sequence[int], workers: int = 2) -> list[R]:
    """``[fn(x) for x in items]``, in order, with ``workers`` processes sharing the work by weight."""
    n = len(items)
    if workers < 2 or n < 2:
        return [fn(x) for x in items]
    shares: list[list[int]] = [[] for _ in range(workers)]
    loads = [0] * workers
    for i in sorted(range(n), key=lambda k: -weights[k]):
        w = loads.index(min(loads))
        shares[w].append(i)
        loads[w] += weights[i]
    children: list[tuple[int, int, list[int]]] = []
    for share in shares[1:]:
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # child: compute its share, send it, leave without running any cleanup
            code = 0
            try:
                os.close(r)
                data = pickle.dumps([fn(items[i]) for i in share], protocol=5)
                with os.fdopen(w, "wb") as out:
                    out.write(data)
            except BaseException:
                code = 1
            os._exit(code)
        os.close(w)
        children.append((pid, r, share))
    results: dict[int, R] = {i: fn(items[i]) for i in shares[0]}
    for pid, r, share in children:
        with os.fdopen(r, "rb") as inp:
            data = inp.read()
        _, status = os.waitpid(pid, 0)
        got: list[R] | None = None
        if os.waitstatus_to_exitcode(status) == 0 and data:
            try:
                got = pickle.loads(data)
            except (pickle.UnpicklingError, EOFError, ValueError):
                got = None
        if got is None or len(got) != len(share):
            got = [fn(items[i]) for i in share]
        results.update(zip(share, got, strict=True))
    return [results[i] for i in range(n)]
