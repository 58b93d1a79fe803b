"""A scan cache: binary facts keyed by (real path, size, mtime, inode), in the user cache dir.

A second scan of an unchanged environment then costs a few small file reads instead of walking every
fatbin header again.  Facts (and the kernel names the verdict rules looked up) are kept in one file per
directory of the scanned files, so a scan loads what it needs and nothing about unrelated trees.  The
files are versioned by cudafit's version (facts change shape between versions) and written atomically;
any problem reading one just means a cold scan.  Location:
``$CUDAFIT_CACHE_DIR``, else ``$XDG_CACHE_HOME/cudafit``, else ``~/.cache/cudafit``;
``CUDAFIT_NO_CACHE=1`` (or ``--no-cache``) disables it.  The file lives in the user's own cache
directory and is only ever read by that user's cudafit.
"""

from __future__ import annotations

import contextlib
import os
import pickle
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from cudafit import __version__
from cudafit.binary.facts import BinaryFacts
from cudafit.model import JsonDict

__all__ = ["KINDS", "CachePart", "ScanCache", "cache_dir", "clear_cache", "iter_cache_parts", "renamed", "scan_cache"]

_MAX_ENTRIES = 50_000  # per directory shard
_MAX_KERNEL_ENTRIES = 200_000  # modules per directory shard (cuBLASLt alone has 2,782)
_MAX_ARCHIVES = 200  # wheel scans kept (one file each, a few MB for torch)


def _format() -> str:
    """Changes whenever the shape of the cached facts changes (not only with cudafit's version)."""
    import dataclasses
    import hashlib

    from cudafit.binary.facts import FatbinEntry, Module
    from cudafit.targets.items import ScanItem

    shape = [f.name for f in dataclasses.fields(BinaryFacts)] + [f.name for f in dataclasses.fields(Module)]
    shape += list(FatbinEntry._fields)
    shape += [f.name for f in dataclasses.fields(ScanItem)]  # wheel scans keep whole items
    # 3: facts depend on the module-loader gate (binary/linkage.py); keys carry its answer
    return "3:" + hashlib.sha256(",".join(shape).encode()).hexdigest()[:16]


_FORMAT = _format()


def cache_dir() -> str:
    """The directory cudafit keeps caches in."""
    explicit = os.environ.get("CUDAFIT_CACHE_DIR")
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "cudafit")


#: (real path, size, mtime, inode, scan mode, module-loader gate answer: binary/linkage.py ``file_gate``).
Key = tuple[str, int, int, int, "bool | str", "bool | None"]


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


class _ShardedStore:
    """A dict kept in one file per directory of the files it describes (``<dir>/<sha1 of the directory>``).

    A scan loads only the shards of the directories it reads: entries about unrelated trees (other
    environments, unpacked wheels, 16,000 loose cubins) cost it nothing.
    """

    def __init__(self, directory: str | None, *, limit: int) -> None:
        self.directory = directory
        self.limit = limit
        self._shards: dict[str, dict[Any, Any]] = {}
        self._dirty: set[str] = set()

    @staticmethod
    def shard_of(path: str) -> str:
        import hashlib

        return hashlib.sha1(os.path.dirname(path).encode("utf-8", "surrogateescape")).hexdigest()[:16]

    def _shard(self, shard: str) -> dict[Any, Any]:
        found = self._shards.get(shard)
        if found is None:
            found = _load_store(os.path.join(self.directory, shard)) if self.directory else {}
            self._shards[shard] = found
        return found

    def get(self, path: str, key: Any) -> Any:
        return self._shard(self.shard_of(path)).get(key) if self.directory else None

    def put(self, path: str, key: Any, value: Any) -> None:
        if not self.directory:
            return
        shard = self.shard_of(path)
        self._shard(shard)[key] = value
        self._dirty.add(shard)

    def save(self) -> None:
        for shard in sorted(self._dirty):
            _save_store(os.path.join(self.directory or "", shard), self._shards[shard], limit=self.limit)
        self._dirty.clear()


class ScanCache:
    """Facts of files already scanned, and their rendered ``scan --json`` text; each is returned only
    if the file is unchanged.  Both stores are loaded lazily, on first use."""

    def __init__(self, path: str | None, *, embedded: bool = False) -> None:
        self.path = path
        self.text_path = (
            os.path.join(os.path.dirname(path), "json-" + os.path.basename(path)) if path is not None else None
        )
        self.embedded = embedded  # also collect fatbins libraries embed to load themselves
        base = os.path.splitext(path)[0] if path is not None else None
        self.facts = _ShardedStore(base, limit=_MAX_ENTRIES)
        self.kernels = _ShardedStore(base + "-kernels" if base else None, limit=_MAX_KERNEL_ENTRIES)
        self._texts: dict[TextKey, Any] | None = None
        self.texts_dirty = False
        self.archives_dir = os.path.join(os.path.dirname(path), f"archives-{__version__}") if path is not None else None
        self.added: list[tuple[Key, BinaryFacts]] = []  # this process's new entries (parallel scans merge them)
        self.added_texts: list[tuple[TextKey, Any]] = []

    @property
    def texts(self) -> dict[TextKey, Any]:
        """Rendered JSON file objects by (file identity, what the scan knew about it)."""
        if self._texts is None:
            self._texts = _load_store(self.text_path) if self.text_path else {}
        return self._texts

    def key(self, path: str, st: os.stat_result, embedded: bool | str | None = None) -> Key:
        """The identity of a file's content, as far as the file system tells (and the scan mode), and the
        answer of its module-loader gate: facts depend on the libraries beside the file too (whether one
        that defines the driver's loader is there), so a change there is a new key."""
        from cudafit.binary.linkage import file_gate

        mode = self.embedded if embedded is None else embedded
        return (os.path.realpath(path), st.st_size, st.st_mtime_ns, st.st_ino, mode, file_gate(path, st))

    def get(self, path: str, st: os.stat_result, name: str, embedded: bool | str | None = None) -> BinaryFacts | None:
        """Cached facts for ``path`` (renamed to ``name``), or ``None``."""
        return self.get_key(self.key(path, st, embedded), name)

    def put(self, path: str, st: os.stat_result, facts: BinaryFacts, embedded: bool | str | None = None) -> None:
        """Remember the facts of an unchanged file (errors are not cached: they may be transient)."""
        self.put_key(self.key(path, st, embedded), facts)

    def get_key(self, key: Key, name: str) -> BinaryFacts | None:
        """Cached facts by identity (a file's, or a zip member's content key), renamed to ``name``."""
        facts = self.facts.get(key[0], key)
        if facts is None or facts.error:
            return None
        return facts if facts.path == name else renamed(facts, name)

    def put_key(self, key: Key, facts: BinaryFacts) -> None:
        """Remember facts by identity (errors are not cached: they may be transient)."""
        if facts.error or not self.path:
            return
        self.facts.put(key[0], key, facts)
        self.added.append((key, facts))

    def _archive_file(self, key: str, mode: bool | str) -> str | None:
        if not self.archives_dir:
            return None
        return os.path.join(self.archives_dir, f"{key[:40]}-{mode}.pickle")

    def get_archive(self, key: str, mode: bool | str) -> JsonDict | None:
        """A wheel's earlier scan (``items``, ``sha256``, the ``stats`` it was seen with), by the key of its
        central directory (``wheel_members.archive_key``); the caller verifies it is the same file."""
        path = self._archive_file(key, mode)
        if path is None:
            return None
        found = _load_store(path).get(key)
        return found if isinstance(found, dict) and isinstance(found.get("items"), list) else None

    def put_archive(self, key: str, mode: bool | str, record: JsonDict) -> None:
        """Remember a wheel's scan (one small file per wheel; the oldest go beyond :data:`_MAX_ARCHIVES`)."""
        path = self._archive_file(key, mode)
        if path is None:
            return
        _save_store(path, {key: record})
        _prune(os.path.dirname(path), _MAX_ARCHIVES)

    def get_kernels(self, key: Any) -> tuple[str, ...] | None:
        """Kernel names of a module (by (file identity, module offset), the identity's path first)."""
        found: tuple[str, ...] | None = self.kernels.get(key[0][0], key)
        return found

    def put_kernels(self, key: Any, names: tuple[str, ...]) -> None:
        """Remember a module's kernel names."""
        self.kernels.put(key[0][0], key, names)

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
            self.facts.put(key[0], key, facts)
        for tkey, value in added_texts:
            self.texts[tkey] = value
        self.texts_dirty |= bool(added_texts)

    def save(self) -> None:
        """Write what changed, atomically (best effort)."""
        if not self.path:
            return
        self.facts.save()
        if self.texts_dirty and self._texts is not None:
            _save_store(self.text_path or "", self._texts)
            self.texts_dirty = False
        self.kernels.save()


def _prune(directory: str, keep: int) -> None:
    """Delete all but the ``keep`` most recently written files of ``directory`` (best effort)."""
    with contextlib.suppress(OSError):
        entries = sorted(os.scandir(directory), key=lambda e: e.stat().st_mtime_ns, reverse=True)
        for e in entries[keep:]:
            with contextlib.suppress(OSError):
                os.unlink(e.path)


def renamed(facts: BinaryFacts, name: str) -> BinaryFacts:
    """The facts under another display name (a cached file or member shown where it is now)."""
    from dataclasses import replace

    if facts.path == name:
        return facts

    old = facts.path
    members = tuple(replace(m, path=name + m.path[len(old) :]) for m in facts.members)
    return replace(facts, path=name, members=members)


_active: list[ScanCache] = []


@contextlib.contextmanager
def scan_cache(enabled: bool = True, *, embedded: bool = False) -> Iterator[ScanCache]:
    """The cache (and mode) for one scan; disabled: a cache that remembers nothing; saved at the end."""
    from cudafit.binary import linkage

    linkage.forget()  # module-loader gate answers are kept per scan (binary/linkage.py)
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


def cached_inspect(
    path: str, name: str | None = None, *, embedded: bool | None = None, summary: bool = False
) -> BinaryFacts:
    """``inspect_path`` through the active cache (``embedded`` overrides the scan's mode for this file;
    ``summary``: embedded fatbins read and kept one per distinct arch list, for verdicts)."""
    from cudafit.binary import inspect_path

    cache = current()
    if embedded is None:
        embedded = bool(cache and cache.embedded)

    def read() -> BinaryFacts:
        facts = inspect_path(path, name=name, embedded=embedded or summary)
        return facts.with_embedded_summary() if summary else facts

    mode: bool | str = "summary" if summary else embedded
    display = name if name is not None else path
    if "!" in path and not os.path.lexists(path):  # a zip member: spooled, keyed by the zip's content
        return _cached_member(cache, path, display, embedded or summary, summary, mode)
    if cache is None or cache.path is None:
        return read()
    try:
        st = os.stat(path)
    except OSError:
        return read()
    hit = cache.get(path, st, display, mode)
    if hit is not None:
        return hit
    facts = read()
    cache.put(path, st, facts, mode)
    return facts


def _cached_member(
    cache: ScanCache | None, path: str, display: str, embedded: bool, summary: bool, mode: bool | str
) -> BinaryFacts:
    """``cached_inspect`` of a ``ZIP!MEMBER``: the spooled member read like a file, cached by content key."""
    from cudafit.binary import FileFormat, inspect_path
    from cudafit.targets.wheel_members import local_file, member_ref

    ref = member_ref(path)
    key: Key | None = (f"zip:{ref.key}/{ref.member}", 0, 0, 0, mode, None) if ref is not None else None
    if cache is not None and key is not None:
        hit = cache.get_key(key, display)
        if hit is not None:
            return hit
    local, why = local_file(path)
    if local is None:
        return BinaryFacts(path=display, format=FileFormat.UNREADABLE, size=0, error=why, error_code="bad-member")
    # The spooled copy has no neighbours: its imports are checked, then its wheel decides (binary/linkage.py).
    facts = inspect_path(local, name=display, embedded=embedded, gate=True)
    if facts.module_loaders and ref is not None:
        facts = _archive_gated(ref.archive, ref.member, facts, display, embedded)
    if summary:
        facts = facts.with_embedded_summary()
    if cache is not None and key is not None:
        cache.put_key(key, facts)
    return facts


def _archive_gated(archive: str, member: str, facts: BinaryFacts, display: str, embedded: bool) -> BinaryFacts:
    """A member's facts under its wheel's module-loader gate (wheel_members ``gated_member_facts``)."""
    import zipfile

    from cudafit.targets.wheel_members import ARCHIVE_OPEN_ERRORS, archive_view, gated_member_facts

    try:
        with zipfile.ZipFile(archive) as zf:
            return gated_member_facts(zf, archive_view(zf), member, facts, display, embedded=embedded)
    except ARCHIVE_OPEN_ERRORS:
        return facts


# --------------------------------------------------------------------------- `cudafit cache`

#: The kinds of top-level entries cudafit writes in its cache directory, with what they hold.  Only these
#: are ever deleted by ``cudafit cache clear``; anything else in the directory is listed and kept.
KINDS = {
    "downloads": "wheels downloaded for pip requirements (check NAME==VERSION)",
    "wheel-scans": "scans of wheels, by the wheel's content key",
    "kernel-names": "kernel names of modules, read for verdicts and --kernels",
    "file-scans": "binary facts of scanned files (by path, size, mtime, inode) and rendered scan --json",
    "other": "not written by cudafit (kept by clear)",
}


@dataclass(frozen=True)
class CachePart:
    """One top-level entry of the cache directory: what it holds and how much."""

    name: str
    kind: str  # downloads, wheel-scans, kernel-names, file-scans, other
    description: str
    path: str
    size: int
    files: int
    current: bool  # written by this cudafit version (stale entries of other versions are never read)

    def __str__(self) -> str:
        return f"{self.kind} {self.name}: {self.files} file(s), {self.size} bytes"


def _kind_of(name: str) -> str:
    if name == "wheels":
        return "downloads"
    if name.startswith("archives-"):
        return "wheel-scans"
    if name.startswith("scan-") and name.endswith("-kernels"):
        return "kernel-names"
    if name.startswith(("scan-", "json-scan-", ".scan-")):  # .scan-*: a write cut short
        return "file-scans"
    return "other"


def _usage(path: str) -> tuple[int, int]:
    """(bytes, files) under ``path``, links not followed."""
    if not os.path.isdir(path) or os.path.islink(path):
        try:
            return os.lstat(path).st_size, 1
        except OSError:
            return 0, 0
    size = files = 0
    for root, _dirs, names in os.walk(path):
        for n in names:
            with contextlib.suppress(OSError):
                size += os.lstat(os.path.join(root, n)).st_size
                files += 1
    return size, files


def iter_cache_parts(directory: str | None = None) -> Iterator[CachePart]:
    """The entries of the cache directory (:func:`cache_dir`), sorted by name."""
    base = directory or cache_dir()
    try:
        names = sorted(os.listdir(base))
    except OSError:
        return
    for name in names:
        path = os.path.join(base, name)
        kind = _kind_of(name)
        size, files = _usage(path)
        current = kind in ("downloads", "other") or __version__ in name
        yield CachePart(name, kind, KINDS[kind], path, size, files, current)


def clear_cache(kinds: Sequence[str] | None = None, directory: str | None = None) -> list[CachePart]:
    """Delete the cache entries of ``kinds`` (default: every kind cudafit writes); never an ``other`` entry.

    Why only known names: ``$CUDAFIT_CACHE_DIR`` may point at a directory that also holds other files.
    """
    import shutil

    removed = []
    for part in iter_cache_parts(directory):
        if part.kind == "other" or (kinds is not None and part.kind not in kinds):
            continue
        if os.path.isdir(part.path) and not os.path.islink(part.path):
            shutil.rmtree(part.path, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                os.unlink(part.path)
        removed.append(part)
    return removed
