"""Zip members (wheels, ``.pt2``) as local files: spooled once, then read exactly like files on disk.

Why: a zip member cannot be mmapped, and reading a 968 MiB ``libtorch_cuda.so`` into memory (or
scanning it through a window that cannot see its section table) either costs the memory or gives
other facts than the extracted file.  So a member above :data:`SPOOL_THRESHOLD` is inflated once,
in 1 MiB chunks, into a private temporary directory and read through ``mmap`` by the same code that
reads files on disk: a wheel and its extracted files give the same facts, kernel names are
readable for members of any size, and memory stays bounded (page cache, not heap).  Spooled files
without device code are deleted at once; the rest live until the process exits (``TMPDIR`` says
where; about the size of the wheel's device-code members).

Members are named ``ZIP!MEMBER`` for display; :func:`register` ties such a name to the zip and to
the zip's sha256, so caches of members (facts, kernel names) survive renames and copies of the
wheel but never outlive a change of its content.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import io
import lzma
import os
import shutil
import struct
import tempfile
import threading
import zipfile
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO

from cudafit.binary import BinaryFacts, FileFormat, inspect_bytes, inspect_path
from cudafit.binary.linkage import DynamicInfo, MemberView, read_dynamic_info, read_file_info

__all__ = [
    "ARCHIVE_OPEN_ERRORS",
    "MEMBER_READ_ERRORS",
    "SPOOL_THRESHOLD",
    "MemberRef",
    "PrefixedStream",
    "archive_key",
    "archive_view",
    "describe_error",
    "discard",
    "gated_member_facts",
    "local_file",
    "member_ref",
    "read_member_facts",
    "register",
    "spool",
]

#: Members larger than this are inflated to a temporary file instead of into memory.
SPOOL_THRESHOLD = 16 * 1024 * 1024
_COPY_CHUNK = 1024 * 1024

#: What reading a zip member can raise for bad input: corrupt deflate/LZMA/bzip2 streams (``zlib.error``,
#: ``lzma.LZMAError``, ``OSError``), bad CRCs (``BadZipFile``), encrypted or unsupported members
#: (``RuntimeError``, ``NotImplementedError``), truncation (``EOFError``), bad headers (``ValueError``).
MEMBER_READ_ERRORS: tuple[type[BaseException], ...] = (
    OSError,
    EOFError,
    ValueError,
    RuntimeError,
    NotImplementedError,
    KeyError,
    zipfile.BadZipFile,
    zlib.error,
    lzma.LZMAError,
)

#: Opening the zip itself fails the same ways, and with ``struct.error`` on a mangled central directory.
ARCHIVE_OPEN_ERRORS: tuple[type[BaseException], ...] = (*MEMBER_READ_ERRORS, struct.error)


@dataclass(frozen=True)
class MemberRef:
    """Where the bytes behind a ``ZIP!MEMBER`` display name are, and the zip's content key (its sha256 when
    a cache is in use)."""

    archive: str
    member: str
    key: str

    def __str__(self) -> str:
        return f"{self.archive}!{self.member}"


def archive_key(size: int, infos: Sequence[zipfile.ZipInfo]) -> str:
    """The lookup key of a zip's cached scan: a sha256 over its size and every central-directory record
    (name, CRC-32, sizes, offset, compression), read in milliseconds.

    It finds the entry; it does not prove the bytes are the same (a member can change without its
    directory record).  The entry is trusted for the (path, size, mtime, inode) it was scanned or verified
    under; any other file with this key (a copy, a rename, a touch) is hashed whole (sha256) and must
    match the hash taken while the wheel was scanned (``wheel.WheelTarget``).
    """
    h = hashlib.sha256(str(size).encode())
    for i in infos:
        record = (i.filename, i.CRC, i.compress_size, i.file_size, i.header_offset, i.compress_type, i.flag_bits)
        h.update(repr(record).encode("utf-8", "surrogateescape"))
    return h.hexdigest()


_lock = threading.Lock()
_refs: dict[str, MemberRef] = {}
_spooled: dict[tuple[str, str], str] = {}
_spool_dir: list[str] = []


def register(display: str, ref: MemberRef) -> None:
    """Remember that ``display`` names ``ref`` (done for every member a wheel scan reports)."""
    with _lock:
        _refs[display] = ref


def member_ref(display: str) -> MemberRef | None:
    """The member a ``ZIP!MEMBER`` display name stands for, when a scan of this process registered it."""
    return _refs.get(display)


def _directory() -> str:
    with _lock:
        if not _spool_dir:
            _remove_orphans()
            _spool_dir.append(tempfile.mkdtemp(prefix=f"cudafit-members-{os.getpid()}-"))
            atexit.register(_cleanup)
        return _spool_dir[0]


def _remove_orphans() -> None:
    """Delete spool directories of this user's cudafit processes that died without cleaning up (SIGKILL)."""
    base = tempfile.gettempdir()
    with contextlib.suppress(OSError), os.scandir(base) as entries:
        for e in entries:
            parts = e.name.split("-")
            if len(parts) < 4 or parts[:2] != ["cudafit", "members"] or not parts[2].isdigit():
                continue
            try:
                if e.stat(follow_symlinks=False).st_uid != os.getuid() or _alive(int(parts[2])):
                    continue
            except OSError:
                continue
            shutil.rmtree(e.path, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def _cleanup() -> None:
    with _lock:
        for d in _spool_dir:
            shutil.rmtree(d, ignore_errors=True)
        _spool_dir.clear()
        _spooled.clear()


def spool(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> str:
    """Inflate one member to a private temporary file (1 MiB at a time) and return its path.

    Raises one of :data:`MEMBER_READ_ERRORS` for a corrupt member; nothing is left behind then.
    """
    key = (os.path.realpath(zf.filename or ""), info.filename)
    found = _spooled.get(key)
    if found is not None and os.path.isfile(found):
        return found
    fd, path = tempfile.mkstemp(dir=_directory(), suffix=".member")
    try:
        with os.fdopen(fd, "wb") as out, zf.open(info) as src:
            shutil.copyfileobj(src, out, _COPY_CHUNK)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(path)
        raise
    with _lock:
        _spooled[key] = path
    return path


def discard(zip_path: str, member: str) -> None:
    """Delete a spooled member that turned out to hold no device code (it is re-inflated if ever asked for)."""
    with _lock:
        path = _spooled.pop((os.path.realpath(zip_path), member), None)
    if path is not None:
        with contextlib.suppress(OSError):
            os.unlink(path)


def local_file(display: str) -> tuple[str | None, str]:
    """A local file holding the bytes of ``ZIP!MEMBER`` (spooled now if needed), or ``(None, why)``."""
    ref = member_ref(display)
    if ref is not None:
        outer, member = ref.archive, ref.member
    else:
        outer, _, member = display.partition("!")
    if not member or "!" in member:
        return None, "kernel listing reads files and zip members (wheels, .pt2); extract this member first"
    found = _spooled.get((os.path.realpath(outer), member))
    if found is not None and os.path.isfile(found):
        return found, ""
    try:
        with zipfile.ZipFile(outer) as zf:
            return spool(zf, zf.getinfo(member)), ""
    except MEMBER_READ_ERRORS as err:
        return None, f"cannot re-read {member}: {describe_error(err)}"


def describe_error(err: BaseException) -> str:
    """A reason that names what failed even when the exception's text does not (``zlib.error: ...``)."""
    kind = type(err)
    name = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__.lstrip('_')}.{kind.__name__}"
    text = str(err)
    return f"{name}: {text}" if text else name


class PrefixedStream(io.RawIOBase):
    """A member's stream with the bytes already read to sniff it put back in front, so the reader sees the
    member from its first byte (wheel members over HTTP, image layer members: neither can seek back)."""

    def __init__(self, head: bytes, rest: IO[bytes]) -> None:
        super().__init__()
        self.head = head
        self.rest = rest

    def readable(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> bytes:
        if self.head:
            if size is None or size < 0:
                data, self.head = self.head + self.rest.read(), b""
                return bytes(data)
            data, self.head = self.head[:size], self.head[size:]
            return bytes(data)
        return bytes(self.rest.read(-1 if size is None else size))

    def readinto(self, b: bytearray | memoryview) -> int:  # type: ignore[override]
        data = self.read(len(b))
        b[: len(data)] = data
        return len(data)


def read_member_facts(
    zf: zipfile.ZipFile, info: zipfile.ZipInfo, display: str, *, embedded: bool = False, gate: bool = True
) -> BinaryFacts:
    """The facts of one member, read as the extracted file would be.

    Up to 16 MiB in memory; beyond that (or when the declared size was a lie) through a spooled
    temporary file, which is deleted at once when it holds no device code.  Raises one of
    ``MEMBER_READ_ERRORS`` for a corrupt member.  ``gate``: whether the module-loader imports are
    checked; the archive decides it once its members are known (:func:`gated_member_facts`).
    """
    if info.file_size <= SPOOL_THRESHOLD:
        with zf.open(info) as fh:
            data = fh.read(SPOOL_THRESHOLD + 1)
        if len(data) <= SPOOL_THRESHOLD:
            if not data:
                return BinaryFacts(path=display, format=FileFormat.NOT_CUDA, size=0)
            return inspect_bytes(data, display, embedded=embedded, gate=gate)
    local = spool(zf, info)
    facts = inspect_path(local, name=display, embedded=embedded, gate=gate)
    if not (facts.modules or facts.members or facts.embedded_sections):
        discard(zf.filename or "", info.filename)
    return facts


def archive_view(zf: zipfile.ZipFile) -> MemberView:
    """The members of a zip as the module-loader gate sees a directory tree (binary/linkage.py): a member's
    libraries are found at the paths its DT_NEEDED and DT_RUNPATH name inside the zip, and read (their
    ``.dynamic`` and hash table) only when asked, once each."""
    infos = {i.filename: i for i in zf.infolist()}

    def read(member: str) -> DynamicInfo | None:
        info = infos.get(member)
        if info is None or info.is_dir():
            return None
        try:
            if info.file_size <= SPOOL_THRESHOLD:
                with zf.open(info) as fh:
                    data = fh.read(SPOOL_THRESHOLD + 1)
                if len(data) <= SPOOL_THRESHOLD:
                    return read_dynamic_info(data)
            return read_file_info(spool(zf, info))
        except MEMBER_READ_ERRORS:
            return None

    return MemberView(infos, read)


def gated_member_facts(
    zf: zipfile.ZipFile, view: MemberView, member: str, facts: BinaryFacts, display: str, *, embedded: bool = False
) -> BinaryFacts:
    """A member's facts (read with its imports checked) under its archive's module-loader gate: those of a
    member importing a loader that nothing in the zip can bind are read again with the gate shut, so a wheel
    and its extracted directory give the same facts.  Most members import no loader: nothing is read."""
    if not facts.module_loaders:
        return facts
    own = view.info(member)
    if own is None or view.gate(member, own.needed, own.runpath):
        return facts
    try:
        return read_member_facts(zf, zf.getinfo(member), display, embedded=embedded, gate=False)
    except MEMBER_READ_ERRORS:  # read a moment ago: keep what was read
        return facts
