"""What was read from a wheel on an index, kept by the file's sha256 (the index's own digest).

An index file never changes under its sha256, so what its members said (their binary facts, and
whether they were read to the end or only as far as a verdict needed) stays true: a second ``find``
judges from here without the network.  Members are also kept by (CRC-32, size, name) from the zip's
central directory, so sibling wheels of one build (cp310/cp311/cp312 of the same version and variant,
whose ``libtorch_cuda.so`` is the same file) are read once.  Files are the versioned pickles of the
scan cache (:mod:`cudafit.targets.cache`), written atomically; a bad file is a cold read, never an error.
"""

from __future__ import annotations

import os
from typing import Any, TypeVar

from cudafit.targets.cache import _load_store, _save_store, cache_dir
from cudafit.targets.remote import MemberRead

__all__ = ["ShaCache"]

T = TypeVar("T")


class ShaCache:
    """Member reads and metadata per wheel sha256; ``enabled=False`` keeps nothing."""

    def __init__(self, *, enabled: bool = True, directory: str | None = None) -> None:
        self.directory = (directory or os.path.join(cache_dir(), "find")) if enabled else None
        self._wheels: dict[str, dict[Any, Any]] = {}
        self._dirty: set[str] = set()

    def _entries(self, sha256: str | None) -> dict[Any, Any] | None:
        if not self.directory or not sha256:
            return None
        found = self._wheels.get(sha256)
        if found is None:
            found = _load_store(os.path.join(self.directory, "wheels", sha256[:2], sha256))
            self._wheels[sha256] = found
        return found

    def _get(self, sha256: str | None, key: str, kind: type[T]) -> T | None:
        """A wheel's entry when it has the type it was written with (a bad file is a cold read)."""
        entries = self._entries(sha256)
        value = entries.get(key) if entries is not None else None
        return value if isinstance(value, kind) else None

    def metadata(self, sha256: str | None) -> bytes | None:
        """The wheel's METADATA as read before."""
        return self._get(sha256, "metadata", bytes)

    def put_metadata(self, sha256: str | None, data: bytes) -> None:
        """Remember the wheel's METADATA."""
        self._put(sha256, "metadata", data)

    def device_members(self, sha256: str | None) -> list[tuple[str, int, int, int]] | None:
        """(name, file size, compressed size, CRC-32) of the device-code members, in reading order."""
        value = self._get(sha256, "device", list)
        return list(value) if value is not None else None

    def put_device_members(self, sha256: str | None, members: list[tuple[str, int, int, int]]) -> None:
        """Remember which members carry device code (the central directory need not be read again)."""
        self._put(sha256, "device", members)

    def python_modules(self, sha256: str | None) -> int | None:
        """How many Python modules the wheel ships (code that runs on any GPU), from its central directory."""
        return self._get(sha256, "python_modules", int)

    def put_python_modules(self, sha256: str | None, count: int) -> None:
        """Remember the wheel's Python module count beside its device-code members."""
        self._put(sha256, "python_modules", count)

    def member(self, sha256: str | None, name: str, crc: int, size: int) -> MemberRead | None:
        """A member read before, from this wheel or a sibling with the same (CRC-32, size, name)."""
        entries = self._entries(sha256)
        found = entries.get(("member", name)) if entries is not None else None
        if isinstance(found, MemberRead):
            return found
        shared = self._shared(crc, size, name)
        return shared if isinstance(shared, MemberRead) else None

    def put_member(self, sha256: str | None, read: MemberRead) -> None:
        """Remember a member read (a complete read replaces a partial one, never the other way)."""
        old = self.member(sha256, read.name, read.crc, read.file_size)
        if old is not None and old.complete and not read.complete:
            return
        self._put(sha256, ("member", read.name), read)
        if self.directory:
            path = self._shared_path(read.crc, read.file_size, read.name)
            _save_store(path, {"read": read})

    def verdict(self, sha256: str | None, key: tuple[Any, ...]) -> Any:
        """A candidate judged before for the same GPUs and driver (``key``), from a small file of its own."""
        if not self.directory or not sha256:
            return None
        return _load_store(self._verdict_path(sha256)).get(key)

    def put_verdict(self, sha256: str | None, key: tuple[Any, ...], result: Any) -> None:
        """Remember a candidate's verdict for these GPUs and driver (a second ``find`` loads no facts)."""
        if not self.directory or not sha256:
            return
        path = self._verdict_path(sha256)
        entries = _load_store(path)
        entries[key] = result
        _save_store(path, entries, limit=64)

    def _verdict_path(self, sha256: str) -> str:
        return os.path.join(self.directory or "", "verdicts", sha256[:2], sha256)

    def _shared_path(self, crc: int, size: int, name: str) -> str:
        import hashlib

        key = hashlib.sha256(f"{crc:08x}:{size}:{name}".encode()).hexdigest()[:24]
        return os.path.join(self.directory or "", "members", key)

    def _shared(self, crc: int, size: int, name: str) -> Any:
        if not self.directory:
            return None
        return _load_store(self._shared_path(crc, size, name)).get("read")

    def _put(self, sha256: str | None, key: Any, value: Any) -> None:
        entries = self._entries(sha256)
        if entries is None or sha256 is None:
            return
        entries[key] = value
        self._dirty.add(sha256)

    def save(self) -> None:
        """Write what changed."""
        if not self.directory:
            return
        for sha in sorted(self._dirty):
            _save_store(os.path.join(self.directory, "wheels", sha[:2], sha), self._wheels[sha])
        self._dirty.clear()
