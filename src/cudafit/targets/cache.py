"""A scan cache: binary facts keyed by (real path, size, mtime, inode), in the user cache dir.

A second scan of an unchanged environment then costs one file read instead of walking every
fatbin header again.  The cache file is versioned by cudafit's version (facts change shape between
versions) and written atomically; any problem reading it just means a cold scan.  Location:
``$CUDAFIT_CACHE_DIR``, else ``$XDG_CACHE_HOME/cudafit``, else ``~/.cache/cudafit``;
``CUDAFIT_NO_CACHE=1`` (or ``--no-cache``) disables it.  The file lives in the user's own cache
directory and is only ever read by that user's cudafit.
"""

from __future__ import annotations

import contextlib
import os
import pickle
from collections.abc import Iterator
from typing import Any

from cudafit import __version__
from cudafit.binary.facts import BinaryFacts

__all__ = ["ScanCache", "cache_dir", "scan_cache"]

_MAX_ENTRIES = 50_000


def _format() -> str:
    """Changes whenever the shape of the cached facts changes (not only with cudafit's version)."""
    import dataclasses
    import hashlib

    from cudafit.binary.facts import FatbinEntry, Module

    shape = [f.name for f in dataclasses.fields(BinaryFacts)] + [f.name for f in dataclasses.fields(Module)]
    shape += list(FatbinEntry._fields)
    return "2:" + hashlib.sha256(",".join(shape).encode()).hexdigest()[:16]


_FORMAT = _format()


def cache_dir() -> str:
    """The directory cudafit keeps caches in."""
    explicit = os.environ.get("CUDAFIT_CACHE_DIR")
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "cudafit")


Key = tuple[str, int, int, int, bool]


class ScanCache:
    """Facts of files already scanned; ``get`` returns them only if the file is unchanged."""

    def __init__(self, path: str | None, *, embedded: bool = False) -> None:
        self.path = path
        self.embedded = embedded  # also collect fatbins libraries embed to load themselves
        self.entries: dict[Key, BinaryFacts] = {}
        self.dirty = False
        self.added: list[tuple[Key, BinaryFacts]] = []  # this process's new entries (parallel scans merge them)
        if path:
            self._load(path)

    def _load(self, path: str) -> None:
        try:
            with open(path, "rb") as fh:
                doc = pickle.load(fh)
            if isinstance(doc, dict) and doc.get("format") == _FORMAT and doc.get("version") == __version__:
                self.entries = doc["entries"]
        except (
            OSError,
            EOFError,
            pickle.UnpicklingError,
            AttributeError,
            ImportError,
            KeyError,
            TypeError,
            ValueError,
            IndexError,
        ):
            self.entries = {}

    def key(self, path: str, st: os.stat_result) -> Key:
        """The identity of a file's content, as far as the file system tells (and the scan mode)."""
        return (os.path.realpath(path), st.st_size, st.st_mtime_ns, st.st_ino, self.embedded)

    def get(self, path: str, st: os.stat_result, name: str) -> BinaryFacts | None:
        """Cached facts for ``path`` (renamed to ``name``), or ``None``."""
        facts = self.entries.get(self.key(path, st))
        if facts is None or facts.error:
            return None
        return facts if facts.path == name else _renamed(facts, name)

    def put(self, path: str, st: os.stat_result, facts: BinaryFacts) -> None:
        """Remember the facts of an unchanged file (errors are not cached: they may be transient)."""
        if facts.error or not self.path:
            return
        key = self.key(path, st)
        self.entries[key] = facts
        self.added.append((key, facts))
        self.dirty = True

    def merge(self, added: list[tuple[Key, BinaryFacts]]) -> None:
        """Take entries a worker process added."""
        for key, facts in added:
            self.entries[key] = facts
        if added:
            self.dirty = True

    def save(self) -> None:
        """Write the cache atomically (best effort)."""
        if not self.path or not self.dirty:
            return
        entries = self.entries
        if len(entries) > _MAX_ENTRIES:
            entries = dict(list(entries.items())[-_MAX_ENTRIES:])
        import tempfile

        with contextlib.suppress(OSError):
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(self.path), prefix=".scan-")
            try:
                with os.fdopen(fd, "wb") as fh:
                    pickle.dump({"format": _FORMAT, "version": __version__, "entries": entries}, fh, protocol=5)
                os.replace(tmp, self.path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
        self.dirty = False


def _renamed(facts: BinaryFacts, name: str) -> BinaryFacts:
    from dataclasses import replace

    old = facts.path
    members = tuple(replace(m, path=name + m.path[len(old) :]) for m in facts.members)
    return replace(facts, path=name, members=members)


_active: list[ScanCache] = []


@contextlib.contextmanager
def scan_cache(enabled: bool = True, *, embedded: bool = False) -> Iterator[ScanCache]:
    """The cache (and mode) for one scan; disabled: a cache that remembers nothing; saved at the end."""
    on = enabled and os.environ.get("CUDAFIT_NO_CACHE", "") in ("", "0")
    cache = ScanCache(os.path.join(cache_dir(), f"scan-{__version__}.pickle") if on else None, embedded=embedded)
    _active.append(cache)
    try:
        yield cache
    finally:
        _active.pop()
        cache.save()


def current() -> ScanCache | None:
    """The cache of the scan in progress, if any."""
    return _active[-1] if _active else None


def cached_inspect(path: str, name: str | None = None) -> Any:
    """``inspect_path`` through the active cache."""
    from cudafit.binary import inspect_path

    cache = current()
    embedded = bool(cache and cache.embedded)
    if cache is None or cache.path is None:
        return inspect_path(path, name=name, embedded=embedded)
    try:
        st = os.stat(path)
    except OSError:
        return inspect_path(path, name=name, embedded=embedded)
    display = name if name is not None else path
    hit = cache.get(path, st, display)
    if hit is not None:
        return hit
    facts = inspect_path(path, name=name, embedded=embedded)
    cache.put(path, st, facts)
    return facts
