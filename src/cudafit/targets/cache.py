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
from collections.abc import Iterator, Sequence
from typing import Any

from cudafit import __version__
from cudafit.binary.facts import BinaryFacts

__all__ = ["ScanCache", "cache_dir", "scan_cache"]

_MAX_ENTRIES = 50_000
_MAX_KERNEL_ENTRIES = 200_000  # modules (cuBLASLt alone has 2,782)


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


TextKey = tuple[Any, ...]
_LOAD_ERRORS = (
    OSError,
    EOFError,
    pickle.UnpicklingError,
    AttributeError,
    ImportError,
    KeyError,
    TypeError,
    ValueError,
    IndexError,
)


def _load_store(path: str) -> dict[Any, Any]:
    try:
        with open(path, "rb") as fh:
            doc = pickle.load(fh)
        if isinstance(doc, dict) and doc.get("format") == _FORMAT and doc.get("version") == __version__:
            entries = doc["entries"]
            if isinstance(entries, dict):
                return entries
    except _LOAD_ERRORS:
        pass
    return {}


def _save_store(path: str, entries: dict[Any, Any], *, limit: int = _MAX_ENTRIES) -> None:
    import tempfile

    if len(entries) > limit:
        entries = dict(list(entries.items())[-limit:])
    with contextlib.suppress(OSError):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".scan-")
        try:
            with os.fdopen(fd, "wb") as fh:
                pickle.dump({"format": _FORMAT, "version": __version__, "entries": entries}, fh, protocol=5)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


class ScanCache:
    """Facts of files already scanned, and their rendered ``scan --json`` text; each is returned only
    if the file is unchanged.  Both stores are loaded lazily, on first use."""

    def __init__(self, path: str | None, *, embedded: bool = False) -> None:
        self.path = path
        self.text_path = (
            os.path.join(os.path.dirname(path), "json-" + os.path.basename(path)) if path is not None else None
        )
        self.embedded = embedded  # also collect fatbins libraries embed to load themselves
        self.kernels_path = (
            os.path.join(os.path.dirname(path), "kernels-" + os.path.basename(path)) if path is not None else None
        )
        self._entries: dict[Key, BinaryFacts] | None = None
        self._texts: dict[TextKey, Any] | None = None
        self._kernels: dict[Any, tuple[str, ...]] | None = None
        self.kernels_dirty = False
        self.dirty = False
        self.texts_dirty = False
        self.added: list[tuple[Key, BinaryFacts]] = []  # this process's new entries (parallel scans merge them)
        self.added_texts: list[tuple[TextKey, Any]] = []

    @property
    def entries(self) -> dict[Key, BinaryFacts]:
        """Facts by file identity (loaded on first use)."""
        if self._entries is None:
            self._entries = _load_store(self.path) if self.path else {}
        return self._entries

    @property
    def texts(self) -> dict[TextKey, Any]:
        """Rendered JSON file objects by (file identity, what the scan knew about it)."""
        if self._texts is None:
            self._texts = _load_store(self.text_path) if self.text_path else {}
        return self._texts

    def key(self, path: str, st: os.stat_result, embedded: bool | None = None) -> Key:
        """The identity of a file's content, as far as the file system tells (and the scan mode)."""
        mode = self.embedded if embedded is None else embedded
        return (os.path.realpath(path), st.st_size, st.st_mtime_ns, st.st_ino, mode)

    def get(self, path: str, st: os.stat_result, name: str, embedded: bool | None = None) -> BinaryFacts | None:
        """Cached facts for ``path`` (renamed to ``name``), or ``None``."""
        facts = self.entries.get(self.key(path, st, embedded))
        if facts is None or facts.error:
            return None
        return facts if facts.path == name else _renamed(facts, name)

    def put(self, path: str, st: os.stat_result, facts: BinaryFacts, embedded: bool | None = None) -> None:
        """Remember the facts of an unchanged file (errors are not cached: they may be transient)."""
        if facts.error or not self.path:
            return
        key = self.key(path, st, embedded)
        self.entries[key] = facts
        self.added.append((key, facts))
        self.dirty = True

    def get_kernels(self, key: Any) -> tuple[str, ...] | None:
        """Kernel names of a module (by file identity and module offset), or ``None``."""
        if not self.kernels_path:
            return None
        if self._kernels is None:
            self._kernels = _load_store(self.kernels_path)
        return self._kernels.get(key)

    def put_kernels(self, key: Any, names: tuple[str, ...]) -> None:
        """Remember a module's kernel names."""
        if not self.kernels_path:
            return
        if self._kernels is None:
            self._kernels = _load_store(self.kernels_path)
        self._kernels[key] = names
        self.kernels_dirty = True

    def get_text(self, key: TextKey) -> Any:
        """A cached rendering, or ``None``."""
        return self.texts.get(key) if self.path else None

    def put_text(self, key: TextKey, value: Any) -> None:
        """Remember a rendering."""
        if not self.path:
            return
        self.texts[key] = value
        self.added_texts.append((key, value))
        self.texts_dirty = True

    def merge(self, added: Sequence[tuple[Key, BinaryFacts]], added_texts: Sequence[tuple[TextKey, Any]] = ()) -> None:
        """Take entries a worker process added."""
        for key, facts in added:
            self.entries[key] = facts
        for tkey, value in added_texts:
            self.texts[tkey] = value
        self.dirty |= bool(added)
        self.texts_dirty |= bool(added_texts)

    def save(self) -> None:
        """Write what changed, atomically (best effort)."""
        if not self.path:
            return
        if self.dirty and self._entries is not None:
            _save_store(self.path, self._entries)
            self.dirty = False
        if self.texts_dirty and self._texts is not None:
            _save_store(self.text_path or "", self._texts)
            self.texts_dirty = False
        if self.kernels_dirty and self._kernels is not None:
            _save_store(self.kernels_path or "", self._kernels, limit=_MAX_KERNEL_ENTRIES)
            self.kernels_dirty = False


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


def cached_inspect(path: str, name: str | None = None, *, embedded: bool | None = None) -> Any:
    """``inspect_path`` through the active cache (``embedded`` overrides the scan's mode for this file)."""
    from cudafit.binary import inspect_path

    cache = current()
    if embedded is None:
        embedded = bool(cache and cache.embedded)
    if cache is None or cache.path is None:
        return inspect_path(path, name=name, embedded=embedded)
    try:
        st = os.stat(path)
    except OSError:
        return inspect_path(path, name=name, embedded=embedded)
    display = name if name is not None else path
    hit = cache.get(path, st, display, embedded)
    if hit is not None:
        return hit
    facts = inspect_path(path, name=name, embedded=embedded)
    cache.put(path, st, facts, embedded)
    return facts
